"""The code of JAX's tutorial "Control flow and logical operators with JIT"
(docs.jax.dev/en/latest/control-flow.html), run as written with openjax in
place of jax. Expected values, types and errors are JAX 0.10.2's."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import grad, jit, lax


def _same(actual, expected, dtype, weak_type=False):
  assert isinstance(actual, jax.Array)
  assert actual.dtype == np.dtype(dtype)
  assert actual.weak_type == weak_type
  np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


# ------------------------------------------------ Python control flow + jit
def test_loops_over_static_values_work_under_jit():
  @jit
  def f(x):
    for i in range(3):
      x = 2 * x
    return x

  _same(f(3), 24, np.int32, weak_type=True)

  @jit
  def g(x):
    y = 0.
    for i in range(x.shape[0]):
      y = y + x[i]
    return y

  _same(g(jnp.array([1., 2., 3.])), 6., np.float32)


def _provenance(fn_name: str, arg: str) -> str:
  return (rf"The error occurred while tracing the function {fn_name} at .*:\d+ for jit\. "
          rf"This concrete value was not available in Python because it depends on the "
          rf"value of the argument {arg}\.")


def test_python_if_on_a_traced_value_fails():
  @jit
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  # This will fail!
  with pytest.raises(jax.errors.TracerBoolConversionError) as info:
    f(2)
  message = str(info.value)
  assert message.startswith("Attempted boolean conversion of traced array with shape bool[].\n")
  assert re.search(_provenance("f", "x"), message)


def test_python_and_on_traced_values_fails():
  @jit
  def g(x):
    return (x > 0) and (x < 3)

  # This will fail!
  with pytest.raises(jax.errors.TracerBoolConversionError) as info:
    g(2)
  assert re.search(_provenance("g", "x"), str(info.value))


def test_static_argnames_trace_on_concrete_values():
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  f = jit(f, static_argnames='x')
  _same(f(2.), 12., np.float32, weak_type=True)

  def f(x, n):
    y = 0.
    for i in range(n):
      y = y + x[i]
    return y

  f = jit(f, static_argnames='n')
  _same(f(jnp.array([2., 3., 4.]), 2), 5., np.float32)


def test_argument_value_dependent_shapes():
  def example_fun(length, val):
    return jnp.ones((length,)) * val
  # un-jit'd works fine
  _same(example_fun(5, 4), np.full(5, 4.), np.float32)

  bad_example_jit = jit(example_fun)
  # this will fail:
  with pytest.raises(TypeError, match=r"^Shapes must be 1D sequences of concrete values of "
                                      r"integer type, got \("):
    bad_example_jit(10, 4)

  # static_argnames tells JAX to recompile on changes at these argument positions:
  good_example_jit = jit(example_fun, static_argnames='length')
  # first compile
  _same(good_example_jit(10, 4), np.full(10, 4.), np.float32)
  # recompiles
  _same(good_example_jit(5, 4), np.full(5, 4.), np.float32)


def test_print_inside_jit_prints_tracers_once(capsys):
  @jit
  def f(x):
    print(x)
    y = 2 * x
    print(y)
    return y

  _same(f(2), 4, np.int32, weak_type=True)
  printed = capsys.readouterr().out.splitlines()
  assert len(printed) == 2 and all("int32[]" in line for line in printed)
  f(3)                                     # cached: no tracing, no printing
  assert capsys.readouterr().out == ""


# --------------------------------------------- structured control flow
def test_cond():
  operand = jnp.array([0.])
  _same(lax.cond(True, lambda x: x+1, lambda x: x-1, operand), [1.], np.float32)
  _same(lax.cond(False, lambda x: x+1, lambda x: x-1, operand), [-1.], np.float32)


def test_cond_on_a_traced_predicate_under_jit_and_grad():
  def f(x):
    return lax.cond(x < 3, lambda x: 3. * x ** 2, lambda x: -4 * x, x)

  _same(jit(f)(2.), 12., np.float32, weak_type=True)
  _same(jit(grad(f))(4.), -4., np.float32, weak_type=True)
  _same(grad(f)(2.), 12., np.float32, weak_type=True)


def test_select_switch_where():
  _same(lax.switch(2, [lambda x: x+1, lambda x: x-1, lambda x: x * 10], jnp.array([2.])),
        [20.], np.float32)
  _same(lax.select(jnp.array([True, False]), jnp.array([1., 2.]), jnp.array([3., 4.])),
        [1., 4.], np.float32)
  x = jnp.array([1, -2, 3])
  _same(jnp.where(x > 0, x, 0), [1, 0, 3], np.int32)
  _same(jnp.select([jnp.array([-1., 2.]) < 0], [jnp.array([5., 6.])], 0.), [5., 0.],
        np.float32)


@pytest.mark.skipif(not hasattr(jnp, "piecewise"), reason="jnp.piecewise is not written yet")
def test_piecewise():
  x = jnp.array([-1., 2.])
  _same(jnp.piecewise(x, [x < 0], [lambda x: -x, lambda x: x * 2]), [1., 4.], np.float32)


def test_while_loop():
  init_val = 0
  cond_fun = lambda x: x < 10  # noqa: E731
  body_fun = lambda x: x+1  # noqa: E731
  _same(lax.while_loop(cond_fun, body_fun, init_val), 10, np.int32, weak_type=True)


def test_fori_loop():
  init_val = 0
  start = 0
  stop = 10
  body_fun = lambda i, x: x+i  # noqa: E731
  _same(lax.fori_loop(start, stop, body_fun, init_val), 45, np.int32, weak_type=True)


def test_scan():
  def cumsum_step(carry, x):
    new_carry = carry + x
    return new_carry, new_carry   # (next state, this step's output)

  final, cumulative = lax.scan(cumsum_step, 0.0, jnp.arange(1., 5.))
  _same(final, 10., np.float32)
  _same(cumulative, [1., 3., 6., 10.], np.float32)


# --------------------------------------------------- logical operators
def python_check_positive_even(x):
  is_even = x % 2 == 0
  # `and` short-circuits, so when `is_even` is `False`, `x > 0` is not evaluated.
  return is_even and (x > 0)


@jit
def jax_check_positive_even(x):
  is_even = x % 2 == 0
  # `logical_and` does not short circuit, so `x > 0` is always evaluated.
  return jnp.logical_and(is_even, x > 0)


def test_logical_operators():
  assert python_check_positive_even(24) is True
  _same(jax_check_positive_even(24), True, np.bool_)
  x = jnp.array([-1, 2, 5])
  _same(jax_check_positive_even(x), [False, True, False], np.bool_)
  with pytest.raises(ValueError, match=re.escape(
      "The truth value of an array with more than one element is ambiguous. "
      "Use a.any() or a.all()")):
    print(python_check_positive_even(x))


def test_bitwise_operators_under_jit():
  out = jit(lambda x: (x & (x > 0)) | ~x)(jnp.array([True, False]))
  _same(out, [True, True], np.bool_)


# ------------------------------------------- Python control flow + autodiff
def test_grad_with_python_control_flow():
  def f(x):
    if x < 3:
      return 3. * x ** 2
    else:
      return -4 * x

  _same(grad(f)(2.), 12., np.float32, weak_type=True)  # ok!
  _same(grad(f)(4.), -4., np.float32, weak_type=True)  # ok!
