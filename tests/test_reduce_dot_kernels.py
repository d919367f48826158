"""Eager kernels and plans of the reduction and product families.

The lean eval kernels of ``dot_general`` (batched, mixed-dtype, narrow-float,
small integer and bool products) and of ``argmax``/``argmin`` must give the
impl's bits, dtypes and shapes; the per-signature plans of ``jnp.sum(...,
where=, initial=)``, ``jnp.matmul``/``jnp.dot`` and eager ``jnp.einsum``
must give what the general path gives and skip its work on repeated calls.
The reference is ``tests.test_eager_fast_path``'s: abstract evaluation and
the impl, no plans, the jnp helpers' general path."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.core import ShapedArray, eval_trace
from openjax._src.core.trace import make_plan
from openjax._src.numpy import einsum
from openjax._src.numpy import reductions, util
from openjax._src.primitives.dot_conv.dot import dot_general_p
from openjax._src.primitives.reduce.reductions import argmax_p, argmin_p
from tests.test_eager_fast_path import _outcome, _reference, _values


def _operand(dt, shape, seed=0):
  """An Array of ``shape`` cycling ``dt``'s edge values (limits, NaN, -0.0,
  inf), shuffled by ``seed``."""
  v = np.resize(_values(np.dtype(dt)), int(np.prod(shape, dtype=np.int64)))
  v = np.random.default_rng(seed).permutation(v).reshape(shape)
  if np.dtype(dt).itemsize == 8 and np.dtype(dt).kind in "iuf" or dt == np.complex128:
    with jax.enable_x64():
      return jnp.asarray(v)
  return jnp.asarray(v)


def _same_as_reference(fn, *args):
  with _reference():
    want = _outcome(fn, *args)
  assert want[0] != "error", want
  got = _outcome(fn, *args)
  assert got == want
  assert _outcome(fn, *args) == want   # the inline cache's call


def _is_lean(primitive, args, **params) -> bool:
  avals = [ShapedArray(a.shape, a.dtype, False) for a in args]
  return make_plan(primitive, avals, params)[1]


# ------------------------------------------------------------- dot_general
_MIXED = [(np.int32, np.float32, None), (np.int8, np.int8, np.int32),
          (np.uint8, np.uint8, np.float32), (np.int8, np.uint8, None),
          (np.float32, np.complex64, None), (ml_dtypes.bfloat16, ml_dtypes.bfloat16, np.float32)]
_SAME = [np.bool_, np.int8, np.int32, np.uint8, np.uint32, np.float16, ml_dtypes.bfloat16,
         np.float32, np.complex64]
# (lhs shape, rhs shape, dimension numbers): matrix, transposed, vector,
# batched, batched vector, two contracting and two free dimensions.
_LAYOUTS = [
    ((4, 5), (5, 3), (((1,), (0,)), ((), ()))),
    ((5, 4), (3, 5), (((0,), (1,)), ((), ()))),
    ((5,), (5, 3), (((0,), (0,)), ((), ()))),
    ((4, 5), (5,), (((1,), (0,)), ((), ()))),
    ((5,), (5,), (((0,), (0,)), ((), ()))),
    ((2, 4, 5), (2, 5, 3), (((2,), (1,)), ((0,), (0,)))),
    ((4, 2, 5), (5, 2), (((2,), (0,)), ((1,), (1,)))),
    ((2, 3, 4, 5), (4, 5, 2), (((2, 3), (0, 1)), ((), ()))),
]


@pytest.mark.parametrize("lhs_dt,rhs_dt,pref", [(d, d, None) for d in _SAME] + _MIXED)
@pytest.mark.parametrize("layout", range(len(_LAYOUTS)))
def test_dot_general_kernel_gives_the_impls_bits(lhs_dt, rhs_dt, pref, layout):
  lshape, rshape, dims = _LAYOUTS[layout]
  x, y = _operand(lhs_dt, lshape, 1), _operand(rhs_dt, rshape, 2)
  _same_as_reference(lambda a, b: lax.dot_general(a, b, dims, preferred_element_type=pref),
                     x, y)


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint32])
def test_small_integer_products_wrap_like_the_impl(dt):
  # Limits times limits: every partial sum overflows the result type.
  info = np.iinfo(dt)
  x = jnp.asarray(np.full((3, 7), info.max, dt))
  y = jnp.asarray(np.array([[info.min if info.min else info.max] * 2] * 7, dt))
  _same_as_reference(lambda a, b: lax.dot(a, b), x, y)
  _same_as_reference(lambda a, b: lax.dot(a, b, preferred_element_type=np.int32)
                     if np.dtype(dt).itemsize < 4 else lax.dot(a, b), x, y)


def test_bool_products_are_logical_or_of_ands():
  rng = np.random.default_rng(3)
  for a, b in ((rng.random((6, 9)) > 0.7, rng.random((9, 4)) > 0.7),
               (np.zeros((6, 9), bool), np.ones((9, 4), bool)),
               (np.zeros((1000, 300), bool), np.ones(300, bool))):   # large matrix-vector
    got = lax.dot(jnp.asarray(a), jnp.asarray(b))
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(np.asarray(got), (a.astype(int) @ b.astype(int)) > 0)
    _same_as_reference(lambda p, q: lax.dot(p, q), jnp.asarray(a), jnp.asarray(b))


def test_dot_general_plans_a_lean_kernel_for_the_common_products():
  i32, f32, b = (np.dtype(t) for t in (np.int32, np.float32, np.bool_))
  plain = (((1,), (0,)), ((), ()))
  batched = (((2,), (1,)), ((0,), (0,)))
  def lean(shapes, dts, dims, pref=None):
    args = [np.zeros(s, d) for s, d in zip(shapes, dts)]
    return _is_lean(dot_general_p, args, dimension_numbers=dims, precision=None,
                    preferred_element_type=pref)
  assert lean([(8, 8), (8, 8)], [i32, i32], plain)
  assert lean([(8, 8), (8, 8)], [b, b], plain)
  assert lean([(2, 3, 4), (2, 4, 5)], [f32, f32], batched)
  assert lean([(8, 8), (8, 8)], [i32, f32], plain)
  assert lean([(8, 8), (8, 8)], [np.dtype(np.int8)] * 2, plain, np.dtype(np.int32))
  # Large integer products keep the impl's exact float64 BLAS path; float
  # accumulators rounded to integers keep its saturating conversion.
  assert not lean([(256, 256), (256, 256)], [i32, i32], plain)
  assert not lean([(8, 8), (8, 8)], [f32, f32], plain, i32)


# ---------------------------------------------------------- argmax / argmin
@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int32,
                                np.uint8, np.bool_, np.complex64])
@pytest.mark.parametrize("shape,axis", [((9,), 0), ((3, 6), 0), ((3, 6), 1),
                                        ((4, 1 << 14), 1), ((1 << 14, 2), 0)])
def test_argmax_kernel_gives_the_impls_bits(dt, shape, axis):
  x = _operand(dt, shape, 4)   # NaNs, signed zeros, ties, limits
  for f in (lax.argmax, lax.argmin):
    _same_as_reference(lambda a: f(a, axis, np.int32), x)


def test_argmax_scans_large_read_only_operands_without_copying_them():
  # NumPy's argmax copies a read-only operand; the kernel scans an alias.
  v = np.random.default_rng(5).standard_normal(1 << 16).astype(np.float32)
  v[7] = np.nan
  x = jnp.asarray(v)
  assert not np.asarray(x).flags.writeable
  assert _is_lean(argmax_p, [v], axes=(0,), index_dtype=np.dtype(np.int32))
  assert _is_lean(argmin_p, [v], axes=(0,), index_dtype=np.dtype(np.int32))
  assert int(jnp.argmax(x)) == int(jnp.argmin(x)) == 7   # the first NaN wins
  np.testing.assert_array_equal(np.asarray(x), v)


# ----------------------------------------------------- reduction plans
_WHERE_CASES = [
    (jnp.sum, dict(axis=0)), (jnp.sum, dict(axis=None, initial=2)),
    (jnp.sum, dict(axis=1, keepdims=True, initial=1.5)), (jnp.prod, dict(axis=0)),
    (jnp.max, dict(axis=1, initial=-1.0)), (jnp.min, dict(axis=None, initial=3)),
    (jnp.any, dict(axis=0)), (jnp.all, dict(axis=1, keepdims=True)),
    (jnp.mean, dict(axis=0)),
]


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int8, np.bool_])
@pytest.mark.parametrize("case", range(len(_WHERE_CASES)))
@pytest.mark.parametrize("where_shape", [(3, 4), (4,), (1, 4)])
def test_where_reductions_replay_the_general_path(dt, case, where_shape):
  fn, kw = _WHERE_CASES[case]
  x = _operand(dt, (3, 4), 6)
  w = jnp.asarray(np.random.default_rng(7).random(where_shape) > 0.4)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _same_as_reference(lambda a, m: fn(a, where=m, **kw), x, w)


def test_where_reduction_plan_skips_the_checks(monkeypatch):
  x = jnp.arange(12.0).reshape(3, 4)
  w = jnp.asarray(np.arange(12).reshape(3, 4) % 3 == 0)
  first = jnp.max(x, axis=0, where=w, initial=-1.0)
  calls = []
  checked = reductions._check_where
  monkeypatch.setattr(reductions, "_check_where", lambda *a: calls.append(a) or checked(*a))
  again = jnp.max(x, axis=0, where=w, initial=-1.0)
  assert calls == []
  np.testing.assert_array_equal(np.asarray(again), np.asarray(first))
  np.testing.assert_array_equal(np.asarray(first), [0.0, 9.0, 6.0, 3.0])


def test_traced_where_reductions_stage_the_same_equations_twice():
  x = np.ones((3, 4), np.float32)
  w = np.ones((4,), bool)
  f = lambda a, m: jnp.sum(a, where=m, axis=0, keepdims=True, initial=1.0)  # noqa: E731
  first = str(jax.make_jaxpr(f)(x, w))
  assert str(jax.make_jaxpr(f)(x, w)) == first
  assert "select_n" in first and "reduce_sum" in first


# --------------------------------------------------------- product plans
@pytest.mark.parametrize("shapes", [((4, 5), (5, 3)), ((5,), (5, 3)), ((2, 3, 4), (4,)),
                                    ((4,), (2, 4, 3)), ((2, 1, 3, 4), (5, 4, 2)),
                                    ((1, 3, 4), (1, 4, 2))])
@pytest.mark.parametrize("dts", [(np.float32, np.float32), (np.int32, np.float32),
                                 (np.bool_, np.bool_), (np.int8, np.uint8)])
def test_matmul_plans_give_the_general_paths_result(shapes, dts):
  x, y = _operand(dts[0], shapes[0], 8), _operand(dts[1], shapes[1], 9)
  _same_as_reference(jnp.matmul, x, y)
  if len(shapes[0]) <= 2 and len(shapes[1]) <= 2:
    _same_as_reference(jnp.dot, x, y)


def test_matmul_plan_skips_the_checks(monkeypatch):
  x = jnp.ones((2, 3, 4))
  y = jnp.ones((4,))
  jnp.matmul(x, y)
  calls = []
  ensure = util.ensure_arraylike
  monkeypatch.setattr(util, "ensure_arraylike", lambda *a: calls.append(a) or ensure(*a))
  out = jnp.matmul(x, y)
  assert calls == [] and out.shape == (2, 3)
  jnp.matmul(x, jnp.ones((4, 2)))   # a new signature takes the general path
  assert calls


# --------------------------------------------------------- eager einsum
@pytest.mark.parametrize("spec,shapes", [("ij,jk->ik", [(3, 4), (4, 5)]), ("ii->i", [(4, 4)]),
                                         ("iij,jk->k", [(3, 3, 2), (2, 4)]),
                                         ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)])])
def test_eager_einsum_runs_its_program_with_the_op_by_op_bits(spec, shapes, monkeypatch):
  ops = [_operand(np.float32, s, i) for i, s in enumerate(shapes)]
  with jax.disable_jit():   # op by op
    want = _outcome(lambda *a: jnp.einsum(spec, *a), *ops)
  assert _outcome(lambda *a: jnp.einsum(spec, *a), *ops) == want
  calls = []
  contract = einsum._contract
  monkeypatch.setattr(einsum, "_contract", lambda *a: calls.append(a) or contract(*a))
  assert _outcome(lambda *a: jnp.einsum(spec, *a), *ops) == want
  assert calls == []   # the program traced before runs
  # Traced, the equations are staged directly (JAX inlines its einsum jit).
  assert "jit" not in str(jax.make_jaxpr(lambda *a: jnp.einsum(spec, *a))(*ops))


def test_interleaved_einsum_matches_the_subscripts_form():
  x, y = _operand(np.float32, (3, 4), 1), _operand(np.float32, (4,), 2)
  got = jnp.einsum(x, [0, 1], y, [1], [0])
  np.testing.assert_array_equal(np.asarray(got), np.asarray(jnp.einsum("ab,b->a", x, y)))
  with pytest.raises(TypeError, match="hashable"):
    jnp.einsum(x, [[0], 1], y, [1], [0])


@pytest.mark.parametrize("shape", [(), (7,), (3, 4), (2, 3, 4)])
@pytest.mark.parametrize("axis", [None, 0, -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_argmax_plans_give_the_general_paths_result(shape, axis, keepdims):
  x = _operand(np.float32, shape, 10)
  for fn in (jnp.argmax, jnp.argmin):
    with _reference():
      want = _outcome(lambda a: fn(a, axis=axis, keepdims=keepdims), x)
    for _ in range(2):   # the plan recorded, then replayed
      assert _outcome(lambda a: fn(a, axis=axis, keepdims=keepdims), x) == want


def test_argmax_plan_skips_the_checks(monkeypatch):
  # Plans are per process: start from none (another test may have planned
  # these signatures in this worker).
  monkeypatch.setattr(reductions, "_ARG_PLANS", {})
  x = jnp.arange(12.0).reshape(3, 4)
  assert int(jnp.argmax(x)) == 11
  calls = []
  ensure = util.ensure_arraylike
  monkeypatch.setattr(util, "ensure_arraylike", lambda *a: calls.append(a) or ensure(*a))
  assert int(jnp.argmax(x)) == 11
  assert jnp.argmin(x, axis=1, keepdims=True).shape == (3, 1)   # a new signature
  assert len(calls) == 1


# ---------------------------------------------------------- cumulative
@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                np.int32, np.uint32, np.complex64])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumulative_kernels_give_the_impls_bits(dt, axis, reverse):
  x = _operand(dt, (3, 5), 11)   # NaN, inf, signed zeros, overflowing limits
  for f in (lax.cumsum, lax.cumprod, lax.cummax, lax.cummin, lax.cumlogsumexp):
    with _reference():
      want = _outcome(lambda a: f(a, axis, reverse), x)
    if want[0] == "error":   # cummax of complex, cumlogsumexp of integers
      continue
    assert _outcome(lambda a: f(a, axis, reverse), x) == want, f
    if f is not lax.cumlogsumexp:   # of integers its kernel's float result: the impl
      assert _is_lean(f.__globals__[f.__name__ + "_p"], [np.asarray(x)], axis=axis,
                      reverse=reverse) == (np.dtype(dt) != ml_dtypes.bfloat16)


@pytest.mark.parametrize("fn", [jnp.cumsum, jnp.cumprod])
@pytest.mark.parametrize("dt", [np.float32, np.int8, np.bool_])
@pytest.mark.parametrize("axis,dtype", [(None, None), (0, None), (-1, np.float32),
                                        (1, np.bool_)])
def test_eager_cumsum_skips_the_program_with_the_programs_bits(fn, dt, axis, dtype):
  x = _operand(dt, (3, 4), 12)
  with _reference():
    want = _outcome(lambda a: fn(a, axis=axis, dtype=dtype), x)
  for _ in range(2):
    assert _outcome(lambda a: fn(a, axis=axis, dtype=dtype), x) == want
  traced = str(jax.make_jaxpr(lambda a: fn(a, axis=axis, dtype=dtype))(x))
  assert f"name={fn.__name__}" in traced   # traced, JAX's jit equation is staged


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.int32, np.bool_])
@pytest.mark.parametrize("axis,keepdims", [(None, False), (0, True), (1, False)])
def test_masked_mean_plans_give_the_general_paths_result(dt, axis, keepdims):
  x = _operand(dt, (3, 4), 13)
  w = jnp.asarray(np.random.default_rng(14).random((3, 4)) > 0.3)
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    _same_as_reference(lambda a, m: jnp.mean(a, axis=axis, keepdims=keepdims, where=m), x, w)
  f = lambda a, m: jnp.mean(a, axis=axis, keepdims=keepdims, where=m)  # noqa: E731
  assert str(jax.make_jaxpr(f)(x, w)) == str(jax.make_jaxpr(f)(x, w))


@pytest.mark.parametrize("name,call", [
    ("vdot", lambda x, y: jnp.vdot(x, y)), ("outer", lambda x, y: jnp.outer(x, y)),
    ("vecdot", lambda x, y: jnp.vecdot(x, y, axis=0)), ("inner", lambda x, y: jnp.inner(x, 3)),
    ("tensordot", lambda x, y: jnp.tensordot(x, y, axes=((0,), (0,))))])
def test_eager_products_run_a_program_with_the_op_by_op_bits(name, call):
  x = _operand(np.int32, (4, 5), 15)
  y = _operand(np.float32, (4, 5), 16)
  with jax.disable_jit():
    want = _outcome(call, x, y)
  assert _outcome(call, x, y) == want
  bound = []
  process = eval_trace.process_primitive
  try:
    eval_trace.process_primitive = lambda p, args, params: bound.append(p.name) or process(
        p, args, params)
    assert _outcome(call, x, y) == want
  finally:
    del eval_trace.process_primitive
  assert bound == []   # the program's kernels ran, no operation was bound
  assert "jit" not in str(jax.make_jaxpr(call)(x, y))   # traced: staged inline, as JAX


@pytest.mark.parametrize("dt", [np.float32, np.float16, ml_dtypes.bfloat16, np.int8,
                                np.uint32, np.complex64])
def test_reductions_over_no_axes_return_the_operands_value(dt):
  x = _operand(dt, (3, 5), 17)   # NaN, -0.0, limits: the bits come back unchanged
  for f in (lax.reduce_sum, lax.reduce_prod, lax.reduce_max, lax.reduce_min):
    with _reference():
      want = _outcome(lambda a: f(a, ()), x)
    if want[0] == "error":   # max/min of complex numbers
      continue
    assert _outcome(lambda a: f(a, ()), x) == want, f
    assert want[3] == np.asarray(x).tobytes()
