"""Eager reductions whose plan is several operations (numpy/reductions.py: a
float16 sum's upcast and cast back, a bool sum's conversion, a mask, keepdims,
an initial value; a mean's casts) run the plan as one cached library program:
the same bits, dtypes and weak types as replaying the plan op by op, and
traced calls still stage the plan's equations."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import reduction_plans, reductions


def _same(a, b) -> None:
  assert type(a) is type(b)
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                np.asarray(b).reshape(-1).view(np.uint8))


_RNG = np.random.default_rng(7)
_F = _RNG.standard_normal((4, 5)).astype(np.float32) * 100
_F[0, 0], _F[1, 2], _F[2, 3] = np.inf, -0.0, np.nan
_G = np.clip(_RNG.standard_normal((4, 5)) * 3e4, -6e4, 6e4).astype(np.float32)   # sums past 65504
_B = _RNG.random((4, 5)) > 0.4
_I = _RNG.integers(-100, 100, (4, 5)).astype(np.int8)
_M = _RNG.random((4, 5)) > 0.3
_ROW = _RNG.random((5,)) > 0.5


def _arr(v, dtype=None):
  return jnp.asarray(v if dtype is None else v.astype(dtype))


_CALLS = [
    ("sum f16", lambda: jnp.sum(_arr(_F, np.float16))),
    ("sum f16 overflow", lambda: jnp.sum(_arr(_G, np.float16), axis=0)),
    ("sum bf16", lambda: jnp.sum(_arr(_F).astype(jnp.bfloat16), axis=1)),
    ("sum f16 keepdims", lambda: jnp.sum(_arr(_F, np.float16), axis=-1, keepdims=True)),
    ("sum f32 keepdims", lambda: jnp.sum(_arr(_F), axis=0, keepdims=True)),
    ("sum bool", lambda: jnp.sum(_arr(_B))),
    ("sum bool keepdims", lambda: jnp.sum(_arr(_B), axis=1, keepdims=True)),
    ("sum int8", lambda: jnp.sum(_arr(_I), axis=0)),
    ("sum int8 no promote", lambda: jnp.sum(_arr(_I), promote_integers=False)),
    ("sum where", lambda: jnp.sum(_arr(_F), where=_arr(_M))),
    ("sum where broadcast keepdims",
     lambda: jnp.sum(_arr(_F), axis=0, keepdims=True, where=_arr(_ROW))),
    ("sum initial", lambda: jnp.sum(_arr(_F, np.float16), axis=1, initial=2.5)),
    ("sum dtype", lambda: jnp.sum(_arr(_I), dtype=jnp.float16)),
    ("sum dtype type f32", lambda: jnp.sum(_arr(_I), axis=1, dtype=jnp.float32)),
    ("sum dtype bool", lambda: jnp.sum(_arr(_I), dtype=bool)),
    ("sum dtype numpy", lambda: jnp.sum(_arr(_F), axis=0, dtype=np.dtype(np.float16))),
    ("prod dtype f16", lambda: jnp.prod(_arr(_F / 50), axis=0, dtype=jnp.float16)),
    ("cumsum dtype f32", lambda: jnp.cumsum(_arr(_I), axis=1, dtype=jnp.float32)),
    ("prod f16", lambda: jnp.prod(_arr(_F / 50, np.float16), axis=0)),
    ("max where", lambda: jnp.max(_arr(_F), axis=1, where=_arr(_M), initial=-1.0)),
    ("min keepdims", lambda: jnp.min(_arr(_I), axis=0, keepdims=True)),
    ("any where", lambda: jnp.any(_arr(_F) > 0, where=_arr(_M))),
    ("all f32", lambda: jnp.all(_arr(_F), axis=1)),
    ("sum complex f16 parts", lambda: jnp.sum(_arr(_F) + 1j * _arr(_G), axis=0, keepdims=True)),
    ("mean f16", lambda: jnp.mean(_arr(_F, np.float16))),
    ("mean int8", lambda: jnp.mean(_arr(_I), axis=1)),
    ("mean bool keepdims", lambda: jnp.mean(_arr(_B), axis=-1, keepdims=True)),
    ("mean where", lambda: jnp.mean(_arr(_F), axis=0, where=_arr(_M))),
    ("mean bf16 axis", lambda: jnp.mean(_arr(_G).astype(jnp.bfloat16), axis=0)),
    ("method sum f16", lambda: _arr(_F, np.float16).sum(axis=0)),
    ("mean dtype f16", lambda: jnp.mean(_arr(_I), axis=0, dtype=jnp.float16)),
    ("mean dtype f32 keepdims", lambda: jnp.mean(_arr(_F, np.float16), axis=1, keepdims=True,
                                                 dtype=np.dtype(np.float32))),
    ("argmin none", lambda: jnp.argmin(_arr(_F))),
    ("argmax none keepdims", lambda: jnp.argmax(_arr(_I), keepdims=True)),
    ("argmin axis keepdims", lambda: jnp.argmin(_arr(_F, np.float16), axis=1, keepdims=True)),
    ("argmax bool none", lambda: jnp.argmax(_arr(_B))),
    ("cumsum bool", lambda: jnp.cumsum(_arr(_B))),
    ("cumsum dtype bool", lambda: jnp.cumsum(_arr(_I), axis=1, dtype=bool)),
    ("cumsum int8 axis", lambda: jnp.cumsum(_arr(_I), axis=0)),
    ("cumprod f16 none", lambda: jnp.cumprod(_arr(_F / 80, np.float16))),
    ("cumsum f32", lambda: jnp.cumsum(_arr(_F), axis=1)),
    ("cumulative_sum initial", lambda: jnp.cumulative_sum(_arr(_F), axis=1, include_initial=True)),
    ("cumulative_sum bool", lambda: jnp.cumulative_sum(_arr(_B), axis=0, include_initial=True)),
    ("cumulative_sum int8 dtype", lambda: jnp.cumulative_sum(_arr(_I), axis=-1, dtype=jnp.int16)),
    ("cumulative_prod int8", lambda: jnp.cumulative_prod(_arr(_I), axis=0, include_initial=True)),
    ("cumulative_prod 1-d", lambda: jnp.cumulative_prod(_arr(_F[0] / 50, np.float16))),
]


@pytest.mark.parametrize("name,call", _CALLS, ids=[c[0] for c in _CALLS])
def test_program_has_the_op_by_op_bits(name, call):
  with jax.disable_jit():   # the plan replayed op by op
    want = call()
  for _ in range(3):
    _same(call(), want)


def _programs() -> list:
  plans = [p.program for p in reductions._REDUCTION_PLANS.values()]
  plans += [p.program for p in reductions._MEAN_PLANS.values()]
  return [p for p in plans if p is not None]


def test_several_operations_run_as_a_program():
  h = jnp.asarray(_F[:3, :3].astype(np.float16))
  for _ in range(3):
    jnp.sum(h, axis=0)
  # (other tests may have made plans of similar keys, e.g. under a trace)
  plans = [p for k, p in reductions._REDUCTION_PLANS.items()
           if k[0] == "sum" and k[5] == (3, 3) and k[6] == np.float16 and k[8] == 0]
  assert any(p.program is not None and any(callable(r) for r in p.program._eager_fast.values())
             for p in plans)
  # A single reduction keeps its one bind.
  x = jnp.asarray(_F[:3, :3])
  for _ in range(3):
    jnp.sum(x, axis=1)
  plan = next(p for k, p in reductions._REDUCTION_PLANS.items()
              if k[0] == "sum" and k[5] == (3, 3) and k[6] == np.float32 and k[8] == 1
              and k[12] is None)
  assert plan.program is None


def test_a_plan_made_by_a_trace_runs_as_a_program_eagerly():
  h = jnp.asarray(_F[:2].astype(np.float16))
  jax.eval_shape(lambda a: jnp.sum(a, axis=1, keepdims=True), h)   # the plan, traced
  jax.eval_shape(lambda a: jnp.mean(a, axis=0), h)
  with jax.disable_jit():
    want = jnp.sum(h, axis=1, keepdims=True), jnp.mean(h, axis=0)
  got = jnp.sum(h, axis=1, keepdims=True), jnp.mean(h, axis=0)
  for a, b in zip(got, want):
    _same(a, b)
  plan = next(p for k, p in reductions._REDUCTION_PLANS.items()
              if k[0] == "sum" and k[5] == (2, 5) and k[6] == np.float16 and k[8] == 1)
  assert plan.program is not None
  plan = next(p for k, p in reductions._MEAN_PLANS.items()
              if k[0] == (2, 5) and k[1] == np.float16 and k[3] == 0)
  assert plan.program is not None


def test_traced_calls_stage_the_equations():
  h = jnp.asarray(_F.astype(np.float16))
  m = jnp.asarray(_M)
  for _ in range(3):
    jnp.sum(h, axis=1, keepdims=True, where=m)
    jnp.mean(h)
  text = str(jax.make_jaxpr(lambda a, w: jnp.sum(a, axis=1, keepdims=True, where=w))(h, m))
  assert "jit" not in text and "convert_element_type" in text and "select_n" in text
  text = str(jax.make_jaxpr(jnp.mean)(h))
  assert "jit" not in text and "div" in text
  # A concrete Array inside a trace: still staged as equations, no jit call.
  text = str(jax.make_jaxpr(lambda a: a + jnp.sum(h, axis=1, keepdims=True))(h))
  assert "jit" not in text and "reduce_sum" in text
  assert _programs()


def test_jit_and_grad_after_eager_programs():
  h = jnp.asarray(_F[1:3].astype(np.float16))
  for _ in range(3):
    jnp.sum(h, axis=0, keepdims=True)
  _same(jax.jit(lambda a: jnp.sum(a, axis=0, keepdims=True))(h),
        jnp.sum(h, axis=0, keepdims=True))
  g = jax.grad(lambda a: jnp.sum(a * a, axis=0, keepdims=True).sum())(jnp.asarray(_F[1:3]))
  np.testing.assert_allclose(g, 2 * _F[1:3])


def test_cumulative_errors_and_jaxprs():
  for _ in range(3):
    with pytest.raises(ValueError, match="must be non-scalar"):
      jnp.cumulative_sum(jnp.asarray(1.0))
    with pytest.raises(ValueError, match="axis was not set"):
      jnp.cumulative_sum(jnp.asarray(_F))
    with pytest.raises(np.exceptions.AxisError):
      jnp.cumulative_prod(jnp.asarray(_F), axis=2)
  x = jnp.asarray(_B)
  for _ in range(3):
    jnp.cumulative_sum(x, axis=1, include_initial=True)
    jnp.cumsum(x, axis=0, dtype=bool)
  text = str(jax.make_jaxpr(lambda a: jnp.cumulative_sum(a, axis=1, include_initial=True))(x))
  assert "name=_cumsum_with_promotion" in text and "concatenate" in text   # as JAX's
  assert "jit" in str(jax.make_jaxpr(lambda a: jnp.cumsum(a, axis=0, dtype=bool))(x))
  # An int axis: the program of the operand alone (reduction_plans.operand_program);
  # another axis (a NumPy integer): the program with static keyword arguments.
  program = reduction_plans._OPERAND_PROGRAMS[
      ("_cumulative_sum", reductions._cumulative_sum, (1, None, True))]
  assert any(callable(r) for r in program._eager_fast.values())
  for _ in range(3):
    jnp.cumulative_sum(x, axis=np.int64(1), include_initial=True)
  assert reductions._CUMULATIVE_PROGRAMS[reductions._cumulative_sum]._eager_fast


def test_truncated_dtypes_warn_every_call():
  x = jnp.asarray(_F)
  for _ in range(3):
    with pytest.warns(UserWarning, match="float64"):
      out = jnp.sum(x, axis=0, dtype=np.float64)
    assert out.dtype == np.float32
    with pytest.warns(UserWarning, match="float64"):
      jnp.cumsum(x, axis=0, dtype=jnp.float64)
    with pytest.warns(UserWarning, match="float64"):
      jnp.cumulative_sum(x, axis=0, dtype=jnp.float64)
    with pytest.warns(UserWarning, match="float64"):
      jnp.mean(x, axis=0, dtype=jnp.float64)


def test_debug_nans_after_a_program_is_cached():
  h = jnp.asarray(np.array([1.0, 2.0], np.float16))
  for _ in range(3):
    jnp.sum(h, keepdims=True)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      jnp.sum(jnp.asarray(np.array([np.inf, -np.inf], np.float16)), keepdims=True)


def test_committed_arrays_keep_their_placement():
  h = jax.device_put(jnp.asarray(_F.astype(np.float16)), jax.devices()[0])
  for call in (lambda: jnp.sum(h, axis=0, keepdims=True), lambda: jnp.mean(h, axis=1)):
    with jax.disable_jit():
      want = call()
    for _ in range(3):
      got = call()
      _same(got, want)
      assert got.committed == want.committed
