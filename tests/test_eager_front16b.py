"""Eager front ends of einsum and dot products planned once per signature
(session 16, helper front16b): a repeated eager ``jnp.einsum`` (subscripts or
the interleaved form) runs its program of the operands alone, found by
(subscripts, options, shapes) without opt_einsum's path lookup or the
interleaved form's conversion. Results keep the general path's bits,
dtypes and weak types (compared with the same call under ``jit``, which
stages the equations), and traced calls stage the same equations."""
import numpy as np
import opt_einsum
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import einsum


def _same(a, b) -> None:
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.ascontiguousarray(np.asarray(a).reshape(-1)).view(np.uint8),
                                np.ascontiguousarray(np.asarray(b).reshape(-1)).view(np.uint8))


def _counting_gets(monkeypatch, module, name: str) -> list:
  """The keys looked up in the cache dict ``module.name`` from now on (a
  counting copy of it replaces it)."""
  gets = []

  class Counting(dict):
    def get(self, k, d=None):
      gets.append(k)
      return super().get(k, d)
  monkeypatch.setattr(module, name, Counting(getattr(module, name)))
  return gets


def _eager_agrees_with_jit(calls) -> list:
  """Each call's compiled result, after checking every eager call against
  it, each repeated and interleaved with the others."""
  wants = [jax.jit(c)() for c in calls]
  for _ in range(3):
    for c, want in zip(calls, wants):
      _same(c(), want)
      _same(c(), want)
  return wants


_RNG = np.random.default_rng(16)


def _f(shape, dtype=np.float32):
  x = _RNG.standard_normal(shape).astype(dtype)
  if x.size >= 4 and dtype != np.bool_:
    x.flat[0], x.flat[-1] = -0.0, np.nan if np.dtype(dtype).kind in "fc" else 0
  return x


_I8 = _RNG.integers(-128, 128, (3, 4)).astype(np.int8)
_I8V = _RNG.integers(-128, 128, (4,)).astype(np.int8)
_I32 = np.array([[2**31 - 1, 3], [-2**31, 7]], np.int32)

_EINSUMS = [
    ("matmul", "ij,jk->ik", [_f((3, 4)), _f((4, 5))], {}),
    ("implicit", "kj,ji", [_f((3, 4)), _f((4, 5))], {}),
    ("batch", "bij,bjk->bki", [_f((2, 3, 4)), _f((2, 4, 5))], {}),
    ("trace i32", "ii", [_I32], {}),
    ("int overflow", "ij,jk->ik", [_I32, _I32], {}),
    ("diag", "ii->i", [_f((4, 4))], {}),
    ("triple repeat", "iji->j", [_f((3, 2, 3))], {}),
    ("sum i8", "ij->", [_I8], {}),
    ("unique and repeat", "iij,jk->k", [_f((3, 3, 2)), _f((2, 4))], {}),
    ("unique and repeat i32", "iij,jk->k", [_I8.astype(np.int32)[:3, :3, None].repeat(2, 2),
                                             _I8.astype(np.int32)[:2, :4]], {}),
    ("repeat kept, negative zeros", "ijj->ij", [np.full((2, 3, 3), -0.0, np.float32)], {}),
    ("repeat summed, negative zeros", "ijj->i", [np.full((2, 3, 3), -0.0, np.float32)], {}),
    ("diag 1e3", "ii->i", [_f((31, 31))], {}),
    ("unique and repeat 1e3", "iij,jk->k", [_f((11, 11, 8)), _f((8, 15))], {}),
    ("pref i8 -> i32", "ij,j", [_I8, _I8V], {"preferred_element_type": np.int32}),
    ("bool", "ij,jk->ik", [_f((3, 4)) > 0, _f((4, 2)) > 0], {}),
    ("bool sum", "ij->i", [_f((3, 4)) > 0], {}),
    ("f16", "ij,j->i", [_f((3, 8), np.float16), _f((8,), np.float16)], {}),
    ("bf16", "ij,j->i", [_f((3, 8)).astype(jnp.bfloat16), _f((8,)).astype(jnp.bfloat16)], {}),
    ("c64 outer", "i,j->ij", [_f((3,), np.complex64), _f((2,), np.complex64)], {}),
    ("ellipsis", "...ij,...jk->...ik", [_f((2, 1, 3, 4)), _f((5, 4, 2))], {}),
    ("chain unoptimized", "ij,jk,kl->il", [_f((2, 3)), _f((3, 4)), _f((4, 5))],
     {"optimize": False}),
    ("greedy", "ijk,jl->ilk", [_f((2, 3, 4)), _f((3, 2))], {"optimize": "greedy"}),
    ("explicit path", "ij,jk,kl->il", [_f((2, 3)), _f((3, 4)), _f((4, 5))],
     {"optimize": [(1, 2), (0, 1)]}),
    ("empty", "ij,jk->ik", [_f((0, 4)), _f((4, 5))], {}),
    ("empty contraction", "ij,jk->ik", [_f((3, 0)), _f((0, 5))], {}),
    ("0-d", ",->", [np.float32(-0.0), np.float32(3.0)], {}),
    ("mixed dtypes", "ij,j->i", [_I8, _f((4,))], {}),
    ("precision", "ij,jk->ik", [_f((3, 4)), _f((4, 5))], {"precision": "highest"}),
]


@pytest.mark.parametrize("name,subscripts,args,kw", _EINSUMS, ids=[c[0] for c in _EINSUMS])
def test_einsum_eager_matches_compiled(name, subscripts, args, kw):
  arrays = [jnp.asarray(a) for a in args]
  want = jax.jit(lambda *xs: jnp.einsum(subscripts, *xs, **kw))(*arrays)
  for _ in range(3):   # the first call makes the program, the others replay it
    _same(jnp.einsum(subscripts, *arrays, **kw), want)


def test_einsum_weak_operand():
  weak = jnp.broadcast_to(2.5, (4,))
  x = jnp.asarray(_f((3, 4)))
  want = jax.jit(lambda a, b: jnp.einsum("ij,j->i", a, b))(x, weak)
  for _ in range(3):
    _same(jnp.einsum("ij,j->i", x, weak), want)
  w2 = jnp.broadcast_to(1.5, (3,))
  _same(jnp.einsum("i,i->", w2, w2), jax.jit(lambda a: jnp.einsum("i,i->", a, a))(w2))


def test_einsum_replays_without_path_lookup(monkeypatch):
  x, y = jnp.asarray(_f((3, 4))), jnp.asarray(_f((4, 6)))
  first = jnp.einsum("ij,jk->ki", x, y)
  calls = []
  real = einsum._path
  monkeypatch.setattr(einsum, "_cached_path",
                      lambda *a: calls.append(a) or real(*a))
  again = jnp.einsum("ij,jk->ki", x, y)
  _same(again, first)
  assert not calls   # planned once per (subscripts, shapes)
  # another shape plans again, with the right result
  z = jnp.asarray(_f((4, 2)))
  np.testing.assert_allclose(jnp.einsum("ij,jk->ki", x, z),
                             np.einsum("ij,jk->ki", np.asarray(x), np.asarray(z)), rtol=1e-5)
  assert calls


def test_einsum_interleaved(monkeypatch):
  x, y = jnp.asarray(_f((3, 4))), jnp.asarray(_f((4,)))
  want = jax.jit(lambda a, b: jnp.einsum(a, [0, 1], b, [1], [0]))(x, y)
  _same(jnp.einsum(x, [0, 1], y, [1], [0]), want)
  calls = []
  real = opt_einsum.parser.convert_interleaved_input
  monkeypatch.setattr(opt_einsum.parser, "convert_interleaved_input",
                      lambda a: calls.append(1) or real(a))
  for _ in range(2):
    _same(jnp.einsum(x, [0, 1], y, [1], [0]), want)
    _same(jnp.einsum(x, (0, 1), y, (1,)), want)   # implicit output, tuples
  assert len(calls) == 1   # the tuple spelling once, then both replay
  xy = np.einsum(np.asarray(x), [0, 1], np.asarray(x), [2, 1], [2, 0])
  np.testing.assert_allclose(jnp.einsum(x, [0, 1], x, [2, 1], [2, 0]), xy, rtol=1e-5)
  with pytest.raises(ValueError):
    jnp.einsum(x, [0, 1], y, [0], [0])   # mismatched sizes (3, 4), as before


def test_einsum_errors_unchanged():
  x = jnp.asarray(_f((3, 4)))
  for _ in range(2):
    with pytest.raises(ValueError):
      jnp.einsum("ij,jk->ik", x, jnp.asarray(_f((5, 2))))
    with pytest.raises(NotImplementedError):
      jnp.einsum("ij->ij", x, out=x)
    with pytest.raises(NotImplementedError):
      jnp.einsum("ij->ij", x, out_sharding="x")


def test_einsum_traced_jaxpr_unchanged():
  x, y = jnp.asarray(_f((3, 4))), jnp.asarray(_f((4,)))
  jnp.einsum("ij,j->i", x, y)   # an eager call first (makes its program)
  text = str(jax.make_jaxpr(lambda a, b: jnp.einsum("ij,j->i", a, b))(x, y))
  assert "dot_general" in text and "pjit" not in text
  inter = str(jax.make_jaxpr(lambda a, b: jnp.einsum(a, [0, 1], b, [1], [0]))(x, y))
  assert inter == text


# ------------------------------------------------------------ dot_general
_INT_PAIRS = [(np.int8, np.int8, None), (np.int8, np.int8, np.int32), (np.uint8, np.uint8, None),
              (np.int16, np.int16, None), (np.int32, np.int32, None),
              (np.uint32, np.uint32, None), (np.int16, np.int16, np.int32),
              (np.uint8, np.uint8, np.int16)]


def _wrapped(x, y, out_dt):
  """The exact integer product modulo 2**w of ``out_dt`` (Python ints)."""
  exact = np.asarray(x).astype(object) @ np.asarray(y).astype(object)
  bits = np.dtype(out_dt).itemsize * 8
  flat = [int(v) % (1 << bits) for v in np.ravel(exact)]
  return np.array(flat, np.uint64).astype(f"u{bits // 8}").view(out_dt).reshape(np.shape(exact))


@pytest.mark.parametrize("lt,rt,pref", _INT_PAIRS, ids=lambda t: getattr(t, "__name__", str(t)))
@pytest.mark.parametrize("shapes", [((3, 4), (4, 2)), ((4,), (4, 5)), ((2, 3, 4), (2, 4, 2)),
                                    ((0, 4), (4, 2)), ((3, 0), (0, 2))],
                         ids=["mm", "vm", "batch", "empty", "empty-k"])
def test_integer_products_wrap(lt, rt, pref, shapes):
  rng = np.random.default_rng(7)
  def big(shape, t):
    info = np.iinfo(t)
    return rng.integers(info.min, info.max, shape, endpoint=True).astype(t)
  x, y = big(shapes[0], lt), big(shapes[1], rt)
  xa, ya = jnp.asarray(x), jnp.asarray(y)
  batch = ((0,), (0,)) if len(shapes[0]) == 3 else ((), ())
  dims = (((len(shapes[0]) - 1,), (len(shapes[1]) - 2,)), batch)
  got = jax.lax.dot_general(xa, ya, dims, preferred_element_type=pref)
  want_dt = got.dtype
  if not batch[0]:
    np.testing.assert_array_equal(np.asarray(got), _wrapped(x, y, want_dt).reshape(got.shape))
  compiled = jax.jit(lambda a, b: jax.lax.dot_general(a, b, dims,
                                                      preferred_element_type=pref))(xa, ya)
  _same(got, compiled)
  if pref is None and len(shapes[0]) == 2:
    _same(jnp.matmul(xa, ya), jax.jit(jnp.matmul)(xa, ya))


def test_precision_strings():
  x, v = jnp.asarray(_f((3, 5))), jnp.asarray(_f((5,)))
  for p in ("highest", "float32", "high", "tensorfloat32", "default", "bfloat16", "fastest"):
    got = jax.lax.dot(x, v, precision=p)
    _same(got, jax.lax.dot(x, v))
    text = str(jax.make_jaxpr(lambda a, b: jax.lax.dot(a, b, precision=p))(x, v))
    want = {"highest": "HIGHEST", "float32": "HIGHEST", "high": "HIGH",
            "tensorfloat32": "HIGH"}.get(p, "DEFAULT")
    assert f"precision=(Precision.{want}, Precision.{want})" in text


# ------------------------------------------------------------ tensordot
def test_tensordot_list_axes_replay(monkeypatch):
  from openjax._src.numpy import linalg_ops
  x = jnp.asarray(_RNG.integers(-9, 9, (2, 3, 4)).astype(np.int32))
  y = jnp.asarray(_RNG.integers(-9, 9, (4, 5, 2)).astype(np.int32))
  want = np.tensordot(np.asarray(x), np.asarray(y), axes=([0, 2], [2, 0]))
  for axes in (([0, 2], [2, 0]), [[0, 2], [2, 0]], ((0, 2), (2, 0)), [(0, -1), [-1, 0]]):
    got = jnp.tensordot(x, y, axes=axes)
    np.testing.assert_array_equal(np.asarray(got), want)
    assert got.dtype == np.int32
  calls = []
  real = linalg_ops._product
  monkeypatch.setattr(linalg_ops, "_product", lambda *a, **k: calls.append(1) or real(*a, **k))
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(jnp.tensordot(x, y, axes=([0, 2], [2, 0]))), want)
    np.testing.assert_array_equal(np.asarray(jnp.tensordot(x, y, ([0, 2], [2, 0]))), want)
  assert not calls   # list axes: the cached program, not op by op
  traced = jax.make_jaxpr(lambda a, b: jnp.tensordot(a, b, axes=([0, 2], [2, 0])))(x, y)
  assert str(traced) == str(jax.make_jaxpr(
      lambda a, b: jnp.tensordot(a, b, axes=((0, 2), (2, 0))))(x, y))
  xf = jnp.asarray(_f((3, 4)))
  np.testing.assert_allclose(jnp.tensordot(xf, xf, axes=[1, 1]),
                             np.tensordot(np.asarray(xf), np.asarray(xf), axes=[1, 1]), rtol=1e-6)


@pytest.mark.parametrize("axes,msg", [
    (([0, 2], [2]), "tensordot requires axes lists to have equal length, got [0, 2] and [2]."),
    (([0], 1), "tensordot requires both axes lists to be either ints, tuples or lists"),
    ((0, 1, 2), "tensordot axes argument must be an int"),
])
def test_tensordot_errors_unchanged(axes, msg):
  x = jnp.asarray(_f((2, 3, 4)))
  with pytest.raises(TypeError) as e:
    jnp.tensordot(x, x, axes=axes)
  assert msg in str(e.value)


# ------------------------------------------------------------ matmul / dot plans
_PRODUCTS = [
    ("ones batch", jnp.matmul, (_f((1, 1, 3, 4)), _f((1, 4, 2)))),
    ("batch vec", jnp.matmul, (_f((2, 3, 4)), _f((4,)))),
    ("vec batch", jnp.matmul, (_f((3,)), _f((2, 3, 4)))),
    ("broadcast", jnp.matmul, (_f((2, 1, 3, 4)), _f((5, 4, 2)))),
    ("empty batch", jnp.matmul, (_f((0, 3, 4)), _f((4, 2)))),
    ("mixed", jnp.matmul, (_I8, _f((4, 2)))),
    ("bool", jnp.matmul, (_f((3, 4)) > 0, _f((4, 2)) > 0)),
    ("c64 batch", jnp.matmul, (_f((2, 3, 4), np.complex64), _f((1, 4, 2), np.complex64))),
    ("f16", jnp.matmul, (_f((1, 3, 8), np.float16), _f((8,), np.float16))),
    ("dot nd", jnp.dot, (_f((2, 3, 4)), _f((5, 4, 2)))),
    ("dot mv", jnp.dot, (_f((3, 4)), _f((4,)))),
]


@pytest.mark.parametrize("name,fn,args", _PRODUCTS, ids=[c[0] for c in _PRODUCTS])
def test_products_eager_match_compiled(name, fn, args):
  arrays = [jnp.asarray(a) for a in args]
  want = jax.jit(fn)(*arrays)
  for _ in range(3):
    _same(fn(*arrays), want)


def test_products_weak_operands():
  w = jnp.broadcast_to(2.5, (4,))
  m = jnp.broadcast_to(1.5, (3, 4))
  for fn, args in ((jnp.matmul, (m, w)), (jnp.dot, (m, w)), (jnp.matmul, (w, w))):
    want = jax.jit(fn)(*args)
    assert want.weak_type
    for _ in range(3):
      _same(fn(*args), want)


@pytest.mark.parametrize("scalar", [2.0, -0.0, float("nan"), float("inf")])
@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.float16, np.complex64, np.bool_])
def test_dot_python_float(scalar, dtype):
  x = jnp.asarray(_f((3,), dtype))
  want = jax.jit(lambda a: jnp.dot(a, scalar))(x)
  for _ in range(3):
    _same(jnp.dot(x, scalar), want)
    _same(jnp.dot(scalar, x), jax.jit(lambda a: jnp.dot(scalar, a))(x))
  # another value of the same type replays the plan with that value
  _same(jnp.dot(x, 3.0), jax.jit(lambda a: jnp.dot(a, 3.0))(x))


def test_dot_scalar_traced_jaxpr_unchanged():
  x = jnp.asarray(np.arange(3, dtype=np.int32))
  jnp.dot(x, 2.0)
  jnp.dot(x, 2.0)   # the eager plan and its program exist
  text = str(jax.make_jaxpr(lambda a: jnp.dot(a, 2.0))(x))
  assert "2.0:f32[]" in text and "pjit" not in text and "jit[" not in text
  assert "convert_element_type[new_dtype=float32 weak_type=True]" in text
  m = jnp.asarray(_f((1, 1, 3, 4)))
  jnp.matmul(m, jnp.asarray(_f((1, 4, 2))))
  text = str(jax.make_jaxpr(jnp.matmul)(m, jnp.asarray(_f((1, 4, 2)))))
  assert text.count("squeeze") == 2 and "broadcast_in_dim" in text and "jit[" not in text
  g = jax.grad(lambda a: jnp.sum(jnp.dot(a, 2.0)))(jnp.asarray(_f((3,))))
  np.testing.assert_array_equal(np.asarray(g), np.full(3, 2.0, np.float32))


def test_matmul_errors_unchanged():
  x = jnp.asarray(_f((2, 3, 4)))
  for _ in range(2):
    with pytest.raises(ValueError, match="Incompatible types for matmul"):
      jnp.matmul(x, jnp.asarray(_f((3, 4, 2))))
    with pytest.raises(ValueError, match="ndim at least 1"):
      jnp.matmul(x, 2.0)
    with pytest.raises(TypeError):
      jnp.dot(x, "a")


def test_product_plans_run_programs(monkeypatch):
  from openjax._src.numpy import linalg_ops
  a, b = jnp.asarray(_f((1, 1, 3, 4))), jnp.asarray(_f((1, 4, 2)))
  x = jnp.asarray(np.arange(3, dtype=np.int32))
  want_mm, want_dot = jnp.matmul(a, b), jnp.dot(x, 2.0)
  jnp.matmul(a, b), jnp.dot(x, 2.0)   # the programs are made
  calls = []
  for name in ("_matmul_steps", "_product"):
    real = getattr(linalg_ops, name)
    monkeypatch.setattr(linalg_ops, name,
                        lambda *a, real=real, **k: calls.append(1) or real(*a, **k))
  for _ in range(3):
    _same(jnp.matmul(a, b), want_mm)
    _same(jnp.dot(x, 2.0), want_dot)
  assert not calls   # several binds (or a Python float): the plan's program


# ------------------------------------------------------------ searchsorted
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int8])
@pytest.mark.parametrize("side", ["left", "right"])
@pytest.mark.parametrize("method", ["compare_all", "sort", "scan"])
def test_searchsorted_fused_count(dtype, side, method):
  rng = np.random.default_rng(3)
  a = rng.integers(-3, 4, 12).astype(dtype)
  v = rng.integers(-4, 5, (2, 5)).astype(dtype)
  if np.dtype(dtype).kind == "f":
    a[[2, 7]] = [np.nan, -0.0]
    v[0, :3] = [np.nan, 0.0, -np.inf]
  a_sorted = np.sort(a)
  want = jax.jit(lambda x, y: jnp.searchsorted(x, y, side=side, method=method))(
      jnp.asarray(a_sorted), jnp.asarray(v))
  for _ in range(3):
    got = jnp.searchsorted(jnp.asarray(a_sorted), jnp.asarray(v), side=side, method=method)
    _same(got, want)
  np.testing.assert_array_equal(np.asarray(want), np.searchsorted(a_sorted, v, side))
  # an empty sorted array and empty queries
  _same(jnp.searchsorted(jnp.asarray(a_sorted[:0]), jnp.asarray(v), side=side, method=method),
        jax.jit(lambda x, y: jnp.searchsorted(x, y, side=side, method=method))(
            jnp.asarray(a_sorted[:0]), jnp.asarray(v)))
  _same(jnp.searchsorted(jnp.asarray(a_sorted), jnp.asarray(v[:, :0]), side=side, method=method),
        jax.jit(lambda x, y: jnp.searchsorted(x, y, side=side, method=method))(
            jnp.asarray(a_sorted), jnp.asarray(v[:, :0])))
  x = jnp.asarray(a_sorted)
  _same(jnp.searchsorted(x, x[3], side=side, method=method),
        jax.jit(lambda x, y: jnp.searchsorted(x, y, side=side, method=method))(x, x[3]))


# ------------------------------------------------------------ reductions
def test_reduction_last_plan_slot(monkeypatch):
  from openjax._src.numpy import reductions
  f = _f((3, 4))
  x = jnp.asarray(f)
  w = jnp.asarray(f > 0)
  calls = [
      lambda: x.sum(axis=1), lambda: x.sum(axis=0), lambda: x.sum(axis=1, keepdims=True),
      lambda: x.sum(axis=1, initial=1.0), lambda: x.sum(axis=1, initial=2.0),
      lambda: jnp.sum(x, axis=1, initial=1), lambda: jnp.sum(x, axis=1, initial=True),
      lambda: jnp.sum(x, axis=1, where=w), lambda: jnp.sum(x, axis=1, dtype=jnp.float16),
      lambda: jnp.sum(x.astype(jnp.int8), axis=1), lambda: jnp.sum(x.astype(jnp.int8), axis=1,
                                                                 promote_integers=False),
      lambda: x.all(axis=1), lambda: x.any(), lambda: x.prod(axis=(0, 1)),
      lambda: jnp.max(x, axis=-1), lambda: jnp.max(x, axis=-1, initial=0.5),
      lambda: jnp.sum(jnp.broadcast_to(2.5, (3, 4)), axis=1),
  ]
  wants = _eager_agrees_with_jit(calls)
  gets = _counting_gets(monkeypatch, reductions, "_REDUCTION_PLANS")
  for c, want in zip(calls, wants):
    c()
    gets.clear()
    _same(c(), want)   # the same call again: the last plan, no key looked up
    assert not gets


def test_cumulative_last_program_slot(monkeypatch):
  from openjax._src.numpy import reduction_plans
  f = _f((3, 4))
  xi = jnp.asarray(_RNG.integers(-3, 4, (3, 4)).astype(np.int32))
  xf, xb = jnp.asarray(f), jnp.asarray(f > 0)
  x16 = jnp.asarray(f.astype(np.float16))
  calls = [
      lambda: jnp.cumsum(xi, axis=0, dtype=jnp.float32), lambda: jnp.cumsum(xi, axis=1,
                                                                          dtype=jnp.float32),
      lambda: jnp.cumsum(xi, axis=0, dtype=jnp.int8), lambda: jnp.cumsum(xi, axis=0),
      lambda: jnp.cumprod(xi, axis=0, dtype=jnp.float32), lambda: jnp.cumsum(xb, axis=0),
      lambda: jnp.cumsum(xb, axis=1), lambda: xf.cumprod(), lambda: xf.cumsum(),
      lambda: jnp.cumsum(x16), lambda: jnp.cumsum(xi, axis=0, dtype=bool),
      lambda: jnp.nancumprod(xf, axis=0, dtype=jnp.float32), lambda: jnp.nancumsum(xf, axis=1),
      lambda: jnp.nancumsum(x16, axis=1), lambda: jnp.nancumsum(xf, axis=1, dtype=jnp.float16),
      lambda: jnp.cumulative_sum(xi, axis=0, dtype=jnp.float32),
      lambda: jnp.cumulative_sum(xi, axis=0, dtype=jnp.float32, include_initial=True),
      lambda: jnp.cumulative_sum(xi, axis=1), lambda: jnp.cumulative_prod(xb, axis=1),
      lambda: jnp.cumulative_prod(xf, axis=0, include_initial=1),
      lambda: jnp.cumsum(jnp.broadcast_to(2.5, (3, 4)), axis=0, dtype=jnp.float16),
  ]
  wants = _eager_agrees_with_jit(calls)
  made = _counting_gets(monkeypatch, reduction_plans, "_OPERAND_PROGRAMS")
  for c, want in zip(calls, wants):
    c()
    made.clear()
    _same(c(), want)
    assert not made   # the last call's program, found by identity


def test_argminmax_last_program_slot(monkeypatch):
  from openjax._src.numpy import reductions
  f = _f((3, 4))
  xf, xi = jnp.asarray(f), jnp.asarray(_RNG.integers(-3, 4, (3, 4)).astype(np.int32))
  x1 = jnp.asarray(f[0])
  calls = [lambda: jnp.argmax(xf), lambda: jnp.argmin(xf, keepdims=True), lambda: xf.argmin(),
           lambda: jnp.argmin(xf, axis=-1, keepdims=True), lambda: jnp.argmax(xi),
           lambda: jnp.argmax(xi, axis=0), lambda: jnp.argmin(xf, axis=1, keepdims=False),
           lambda: jnp.argmax(x1), lambda: jnp.argmax(x1, keepdims=True),
           lambda: jnp.argmin(jnp.broadcast_to(2.5, (3, 4)))]
  wants = _eager_agrees_with_jit(calls)
  gets = _counting_gets(monkeypatch, reductions, "_ARG_PLANS")
  for c in (calls[0], calls[1], calls[2], calls[3], calls[4]):   # the programs' plans
    c()
    gets.clear()
    c()
    assert not gets
  with pytest.raises(ValueError):
    jnp.argmax(jnp.asarray(f[:0]))


def test_one_dot_general_plans_bind_directly(monkeypatch):
  from openjax._src.numpy import linalg_ops
  a, b, v = jnp.asarray(_f((3, 4))), jnp.asarray(_f((4, 5))), jnp.asarray(_f((4,)))
  c = jnp.asarray(_f((2, 3, 4)))
  d = jnp.asarray(_f((2, 4, 5)))
  w = jnp.broadcast_to(1.5, (4, 4))
  cases = [(jnp.matmul, (a, b), {}), (jnp.matmul, (a, v), {}), (jnp.dot, (a, v), {}),
           (jnp.matmul, (c, d), {}), (jnp.matmul, (a, b), {"precision": "highest"}),
           (jnp.matmul, (w, w), {"preferred_element_type": jnp.float32}),
           (jnp.dot, (w, w), {"preferred_element_type": jnp.float32}),
           (jnp.matmul, (w, w), {}), (jnp.dot, (_I8, _I8.T), {"preferred_element_type": jnp.int32})]
  wants = [jax.jit(lambda *x, f=f, kw=kw: f(*x, **kw))(*args) for f, args, kw in cases]
  for (f, args, kw), want in zip(cases, wants):
    for _ in range(3):
      _same(f(*args, **kw), want)
    jx = str(jax.make_jaxpr(lambda *x, f=f, kw=kw: f(*x, **kw))(*args))
    assert "jit[" not in jx and jx.count("dot_general") == 1
  calls = []
  for name in ("_matmul_steps", "_product"):
    real = getattr(linalg_ops, name)
    monkeypatch.setattr(linalg_ops, name,
                        lambda *x, real=real, **k: calls.append(1) or real(*x, **k))
  for f, args, kw in cases[:5]:
    f(*args, **kw)
  assert not calls   # one dot_general, bound from the plan
  assert str(jax.make_jaxpr(jnp.matmul)(a, b)) == str(jax.make_jaxpr(
      lambda x, y: jax.lax.dot_general(x, y, (((1,), (0,)), ((), ())),
                                       preferred_element_type=jnp.float32))(a, b))


@pytest.mark.parametrize("shapes", [((3, 5), (5,)), ((5,), (5,)), ((5,), (5, 2)), ((3, 5), (5, 2)),
                                    ((0, 5), (5,)), ((3, 0), (0, 2))])
def test_lax_dot_plain_dimension_numbers(shapes):
  x, y = jnp.asarray(_f(shapes[0])), jnp.asarray(_f(shapes[1]))
  dims = (((len(shapes[0]) - 1,), (0,)), ((), ()))
  want = jax.lax.dot_general(x, y, dims)
  for _ in range(2):
    _same(jax.lax.dot(x, y), want)
    _same(jax.lax.dot(np.asarray(x), np.asarray(y)), want)   # NumPy operands
  assert str(jax.make_jaxpr(jax.lax.dot)(x, y)) == str(
      jax.make_jaxpr(lambda a, b: jax.lax.dot_general(a, b, dims))(x, y))
  with pytest.raises(ValueError, match="dimension_numbers must be specified"):
    jax.lax.dot(jnp.asarray(_f((2, 3, 5))), y)


@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 4, 5)), ((3, 4), (4, 2)),
                                    ((2, 2, 3, 4), (2, 2, 4, 1)), ((0, 3, 4), (0, 4, 5))])
def test_batch_matmul_dimension_numbers(shapes):
  x, y = jnp.asarray(_f(shapes[0])), jnp.asarray(_f(shapes[1]))
  nd = len(shapes[0])
  batch = tuple(range(nd - 2))
  dims = (((nd - 1,), (nd - 2,)), (batch, batch))
  want = jax.lax.dot_general(x, y, dims)
  for _ in range(2):
    _same(jax.lax.batch_matmul(x, y), want)
  assert str(jax.make_jaxpr(jax.lax.batch_matmul)(x, y)) == str(
      jax.make_jaxpr(lambda a, b: jax.lax.dot_general(a, b, dims))(x, y))
  with pytest.raises(ValueError, match="same ndim"):
    jax.lax.batch_matmul(x, jnp.asarray(_f((1,) + shapes[1])))
  with pytest.raises(ValueError, match="at least 2D"):
    jax.lax.batch_matmul(jnp.asarray(_f((4,))), y)


def test_digitize_searchsorted_default_method_positional():
  from openjax._src.numpy import searching
  x = jnp.asarray(_f((10,)))
  bins = jnp.asarray(np.linspace(-1, 1, 5).astype(np.float32))
  for right in (False, True):
    for b in (bins, bins[::-1]):
      want = jax.jit(lambda a, c, right=right: jnp.digitize(a, c, right))(x, b)
      for _ in range(2):
        _same(jnp.digitize(x, b, right), want)
        _same(jnp.digitize(x, b, right, method="scan"), want)
  for side in ("left", "right"):
    want = jax.jit(lambda a, c, side=side: jnp.searchsorted(a, c, side))(bins, x)
    for _ in range(2):
      _same(jnp.searchsorted(bins, x, side), want)
      _same(jnp.searchsorted(bins, x, side, method="scan"), want)
  # the default method's eager call keys no keyword arguments
  before = dict(searching._searchsorted_eager._eager_fast)
  jnp.searchsorted(bins, x)
  assert all(type(k) is not tuple or "keywords" not in k
             for k in searching._searchsorted_eager._eager_fast if k not in before)
  with pytest.raises(ValueError):
    jnp.searchsorted(bins, x, "middle")
