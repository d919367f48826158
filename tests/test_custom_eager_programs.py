"""Eager calls of custom_jvp/custom_vjp functions (api/custom_eager.py): an
effect-free primal function called again with Array arguments runs as its
cached program, with the bits, dtypes and weak types of running it op by op
(as JAX does); everything else (effects, Python scalars, constant results,
value-dependent bodies, errors) keeps running op by op."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.numpy import ufuncs
from tests.test_eager_floor import _same


def _op_by_op(f, *args):
  with jax.disable_jit():
    return f(*args)


def _runs_program(custom) -> bool:
  jitted = custom._eager.jitted
  return jitted is not None and any(callable(v) for v in jitted._eager_fast.values())


_X = np.array([-1.5, -0.0, 0.0, 0.25, 2.0, np.inf, -np.inf, np.nan, 7.0, 1e30, -80.0, 3.0],
              np.float32)
_Y = np.array([1.0, 2.0, -3.0, 0.25, np.nan, np.inf, -np.inf, 2.0, -0.0, 3.0, 80.0, 3.0],
              np.float32)


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "complex64", "int32",
                                   "bool"])
def test_logaddexp_program_has_op_by_op_bits(name, dtype):
  fn = getattr(jnp, name)
  if dtype in ("int32", "bool"):
    x = jnp.asarray(np.nan_to_num(_X, posinf=9, neginf=-9, nan=1).clip(-9, 9)).astype(dtype)
    y = jnp.asarray(np.nan_to_num(_Y, posinf=9, neginf=-9, nan=2).clip(-9, 9)).astype(dtype)
  else:
    x, y = jnp.asarray(_X).astype(dtype), jnp.asarray(_Y).astype(dtype)
  want = _op_by_op(fn, x, y)
  for _ in range(3):
    _same(fn(x, y), want)
  assert _runs_program(ufuncs._logaddexp_e if name == "logaddexp" else ufuncs._logaddexp_2)
  _same(fn(x, 1.5), _op_by_op(fn, x, 1.5))   # a weak-typed operand: its own program
  _same(fn(x, 1.5), _op_by_op(fn, x, 1.5))


def test_logaddexp_grad_after_eager_calls():
  x, y = jnp.asarray(_X[:5]), jnp.asarray(_Y[:5])
  for _ in range(3):
    jnp.logaddexp(x, y)
  g = jax.grad(lambda a, b: jnp.logaddexp(a, b).sum(), argnums=(0, 1))(x, y)
  w = _op_by_op(jax.grad(lambda a, b: jnp.logaddexp(a, b).sum(), argnums=(0, 1)), x, y)
  _same(g, w)
  # The custom rule, not the program: at a tie the weights are 1/2 each.
  t = jax.grad(lambda a: jnp.logaddexp(a, a))(1.0)
  assert float(t) == 1.0


def _user_jvp():
  @jax.custom_jvp
  def f(a, b):
    return jnp.sin(a) * jnp.cos(b) + a

  f.defjvp(lambda p, t: (f(*p), t[0] * 2.0))
  return f


def test_user_custom_jvp_runs_its_program_from_the_second_call():
  f = _user_jvp()
  x, y = jnp.asarray(_X), jnp.asarray(_Y)
  first = f(x, y)
  assert f._eager.jitted is None   # first seen: op by op
  want = _op_by_op(f, x, y)
  _same(first, want)
  _same(f(x, y), want)
  _same(f(x, y), want)
  assert _runs_program(f)
  # Another shape or dtype: its own program, the same bits as op by op.
  _same(f(x[:3].astype(jnp.float16), y[:3].astype(jnp.float16)),
        _op_by_op(f, x[:3].astype(jnp.float16), y[:3].astype(jnp.float16)))
  # The derivative still comes from the rule.
  assert float(jax.grad(lambda a: f(a, 0.5))(1.0)) == 2.0


def test_user_custom_vjp_runs_its_program():
  @jax.custom_vjp
  def f(a, b):
    return jnp.exp(a) * b - a

  f.defvjp(lambda a, b: (f(a, b), (a, b)), lambda res, g: (g * 3.0, g * 0.0))
  x, y = jnp.asarray(_X[:4]), jnp.asarray(_Y[:4])
  want = _op_by_op(f, x, y)
  for _ in range(3):
    _same(f(x, y), want)
  assert _runs_program(f)
  assert float(jax.grad(lambda a: f(a, 2.0))(1.0)) == 3.0


_SCALE = 2.0


def _scaled(a):
  return a * _SCALE


def test_rebinding_a_global_is_seen():
  global _SCALE
  f = jax.custom_jvp(_scaled)
  f.defjvps(lambda g, ans, a: g * _SCALE)
  x = jnp.arange(4.0)
  for _ in range(3):
    np.testing.assert_array_equal(f(x), np.arange(4.0) * 2)
  assert _runs_program(f)
  try:
    _SCALE = 5.0
    for _ in range(3):
      np.testing.assert_array_equal(f(x), np.arange(4.0) * 5)
  finally:
    _SCALE = 2.0


def test_closure_over_a_new_array_each_call_stays_op_by_op():
  f = jax.custom_jvp(lambda a: a * w)
  f.defjvps(lambda g, ans, a: g)
  x = jnp.arange(3.0)
  for i in range(12):
    w = jnp.full((3,), float(i))   # the closure cell's value changes every call
    np.testing.assert_array_equal(f(x), np.arange(3.0) * i)
  assert f._eager.jitted is None   # never the same key twice: never traced
  assert f._eager.off   # and after 8 such calls no key is computed


def test_a_function_with_an_effect_runs_every_call(capsys):
  @jax.custom_jvp
  def f(a):
    print("called")
    return a + 1.0

  f.defjvps(lambda g, ans, a: g)
  x = jnp.arange(3.0)
  for _ in range(3):
    f(x)
  assert capsys.readouterr().out.count("called") == 3
  assert f._eager.jitted is None
  for _ in range(9):
    f(x)
  assert capsys.readouterr().out.count("called") == 9 and f._eager.off


def test_python_scalar_arguments_and_constant_results_stay_as_they_are():
  @jax.custom_jvp
  def f(a):
    return a * 2.0

  f.defjvps(lambda g, ans, a: g * 2.0)
  for _ in range(3):
    out = f(1.5)
    assert type(out) is float and out == 3.0   # op by op on a Python float, as in JAX

  @jax.custom_jvp
  def g(a):
    return a * 2.0, 7

  g.defjvp(lambda p, t: (g(*p), (t[0] * 2.0, 0)))
  x = jnp.arange(3.0)
  for _ in range(3):
    out, seven = g(x)
    assert type(seven) is int and seven == 7
    np.testing.assert_array_equal(out, np.arange(3.0) * 2)
  assert g._eager.jitted is None and g._eager.off


def test_value_dependent_body_runs_op_by_op():
  @jax.custom_jvp
  def f(a):
    if a.sum() > 0:
      return a * 2.0
    return a - 1.0

  f.defjvps(lambda g, ans, a: g)
  pos, neg = jnp.arange(1.0, 4.0), -jnp.arange(1.0, 4.0)
  for _ in range(3):
    np.testing.assert_array_equal(f(pos), np.arange(1.0, 4.0) * 2)
    np.testing.assert_array_equal(f(neg), -np.arange(1.0, 4.0) - 1)


def test_nondiff_arguments_are_static():
  @jax.custom_jvp
  def f(k, a):
    return a * k + a ** 2 if k % 2 else a - k

  f = jax.custom_jvp(f.fun, nondiff_argnums=(0,))
  f.defjvp(lambda k, p, t: (f(k, *p), t[0]))
  x = jnp.arange(4.0)
  for _ in range(3):
    for k in (0, 1, 3):
      _same(f(k, x), _op_by_op(f, k, x))
  assert _runs_program(f)
  # An unhashable or callable non-differentiable argument runs op by op.
  h = jax.custom_jvp(lambda fn, a: fn(a), nondiff_argnums=(0,))
  h.defjvp(lambda fn, p, t: (h(fn, *p), t[0]))
  for _ in range(3):
    np.testing.assert_array_equal(h(jnp.sin, x), np.sin(np.arange(4.0, dtype=np.float32)))
  assert h._eager.jitted is None


def test_errors_are_the_eager_ones():
  f = _user_jvp()
  for _ in range(3):
    with pytest.raises(TypeError, match="mul got incompatible shapes"):
      f(jnp.ones(3), jnp.ones(4))
  assert f._eager.off   # the trace failed: op by op from then on
  x = jnp.arange(3.0)
  np.testing.assert_array_equal(f(x, x), _op_by_op(f, x, x))


def test_debug_nans_checks_after_a_program_is_cached():
  @jax.custom_jvp
  def f(a):
    return jnp.log(a) + 1.0

  f.defjvps(lambda g, ans, a: g / a)
  x = jnp.asarray([1.0, 2.0])
  for _ in range(3):
    f(x)
  assert _runs_program(f)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      f(jnp.asarray([-1.0, 2.0]))


def test_committed_arrays_keep_their_placement():
  x = jax.device_put(jnp.asarray(_X), jax.devices()[0])
  want = _op_by_op(jnp.logaddexp, x, x)
  for _ in range(3):
    got = jnp.logaddexp(x, x)
    _same(got, want)
    assert got.committed == want.committed


def test_functions_with_loops_run_op_by_op():
  # A loop inside the library program ran its body interpreted each trip
  # (scipy.special.exp1 at 12 elements: 7 ms instead of 0.1 ms op by op,
  # where the eager loop is its own cached program).
  @jax.custom_jvp
  def series(x):
    def body(c):
      k, acc = c
      return k + 1, acc + x ** k / (k + 1.0)
    return lax.while_loop(lambda c: c[0] < 20, body, (0, jnp.zeros_like(x)))[1]

  series.defjvp(lambda p, t: (series(p[0]), t[0]))
  x = jnp.asarray(np.linspace(0.1, 0.9, 5, dtype=np.float32))
  want = sum(np.asarray(x, np.float64) ** k / (k + 1.0) for k in range(20))
  for _ in range(3):
    np.testing.assert_allclose(np.asarray(series(x)), want, rtol=1e-6)
  assert series._eager.jitted is None and series._eager.off
