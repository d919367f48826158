"""Common subexpressions of interpreted programs (``core/common_steps``): a
kernel step repeating an earlier one (same primitive, parameters and
operands) takes the earlier result; stateful primitives, effects, other
parameters or literals and unhashable parameters keep their own steps; the
jaxpr, the bind path and the values are unchanged; a large original lives
until its repeat reads it."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src import core
from openjax._src.core import eval_jaxpr, eval_trace, program_of, set_current_trace
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.core import program
from openjax._src.core.program_codegen import same_value

f32 = np.float32


def _program(f, *args):
  closed = jax.make_jaxpr(f)(*args)
  return closed, program_of(closed.jaxpr)


def _shared(prog) -> int:
  """How many kernel steps read an earlier step's result (``same_value``)."""
  return sum(1 for step in prog.kernel_steps if step[0] is same_value)


def _values(closed, args):
  return [np.asarray(v) for v in eval_jaxpr(closed.jaxpr, closed.consts, *args)]


def _twice_normalised(x, i):
  # jnp.interp's pattern: the same index normalised for two gathers.
  a = x[i - 1] * 2.0
  b = x[i - 1] + x[i]
  return a + b


def test_repeated_equations_share_one_step():
  x, i = np.linspace(0, 1, 8, dtype=f32), np.array([1, 3, 5], np.int32)
  closed, prog = _program(_twice_normalised, x, i)
  names = [e.primitive.name for e in closed.jaxpr.eqns]
  assert names.count("sub") == 2   # the jaxpr keeps both
  assert len(prog.repeats) >= 2    # the sub and the gather of x[i - 1] (and its clamps)
  assert _shared(prog) == len(prog.repeats)
  want = x[i - 1] * 2 + x[i - 1] + x[i]
  np.testing.assert_array_equal(_values(closed, (x, i))[0], want)
  with set_current_trace(eval_trace):   # the bind path binds every equation
    out, = prog.bind(closed.consts, [jnp.asarray(x), jnp.asarray(i)])
  np.testing.assert_array_equal(np.asarray(out), want)


def test_interp_and_hessian_programs_share_steps():
  # The programs eager calls run: nested calls inlined (``eager_call``).
  x = jnp.asarray(np.linspace(-2, 2, 10, dtype=f32))
  flat = inline_interpreted_calls(jax.make_jaxpr(jnp.interp)(x, x, x))
  assert len(program_of(flat.jaxpr).repeats) >= 20   # 27 of 77 when written
  xs = np.linspace(-3, 3, 7, dtype=f32)
  xp = np.asarray(x)
  np.testing.assert_allclose(np.asarray(jnp.interp(xs, xp, xp ** 2)), np.interp(xs, xp, xp ** 2),
                             rtol=1e-6)
  h = jax.hessian(lambda v: jnp.sum(jnp.sin(v) * v ** 3))
  closed, hprog = _program(h, x)
  assert hprog.repeats
  np.testing.assert_allclose(_values(closed, (x,))[0], np.asarray(jax.jit(h)(x)),
                             rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name,f", [
    ("other_literal", lambda x: (x * 2.0, x * 3.0)),
    ("other_axis", lambda x: (jnp.sum(x, axis=0), jnp.sum(x, axis=1))),
    ("other_operand", lambda x: (jnp.sin(x), jnp.sin(x + 1.0))),
    ("other_dtype", lambda x: (x.astype(jnp.int32), x.astype(jnp.int16))),
])
def test_different_equations_keep_their_steps(name, f):
  x = np.arange(6, dtype=f32).reshape(2, 3)
  closed, prog = _program(f, x)
  assert not prog.repeats
  for got, want in zip(_values(closed, (x,)), f(x)):
    np.testing.assert_array_equal(got, np.asarray(want))


def test_literals_of_one_value_are_one_operand():
  x = np.arange(4, dtype=f32)
  closed, prog = _program(lambda x: (x * 2.0, x * 2.0, x * 2), x)
  # 2.0 and 2.0: one value; the weak int 2 is a float 2.0 after promotion too
  # but a literal of its own type in the jaxpr only when its dtype differs.
  assert len(prog.repeats) >= 1
  for got in _values(closed, (x,)):
    np.testing.assert_array_equal(got, x * 2)


def test_stateful_rng_uniform_draws_twice():
  def f():
    return lax.rng_uniform(f32(0), f32(1), (64,)), lax.rng_uniform(f32(0), f32(1), (64,))
  closed, prog = _program(f)
  assert not prog.repeats
  a, b = _values(closed, ())
  assert not np.array_equal(a, b)


def test_effects_run_every_time():
  seen = []

  def f(x):
    jax.debug.callback(lambda v: seen.append(float(v)), x)
    jax.debug.callback(lambda v: seen.append(float(v)), x)
    return x + 1.0

  closed, prog = _program(f, f32(2.0))
  assert not prog.repeats
  _values(closed, (f32(2.0),))
  assert seen == [2.0, 2.0]


def test_a_large_original_lives_until_its_repeat():
  # sin(x)'s first result is read by the product, and by nothing else after
  # it: without the repeat it would be released there; the repeat (after a
  # large unrelated step) reads it.
  x = np.linspace(-3, 3, 50_000, dtype=f32)

  def f(x):
    a = jnp.sin(x) * 2.0
    b = jnp.cos(x) + a
    return b + jnp.sin(x)

  closed, prog = _program(f, x)
  assert prog.repeats
  want = (np.cos(x) + np.sin(x) * 2) + np.sin(x)
  for _ in range(3):
    np.testing.assert_allclose(_values(closed, (x,))[0], want, rtol=2e-6, atol=2e-6)
  np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), want, rtol=2e-6, atol=2e-6)


def test_generated_steps_give_the_same_bits(monkeypatch):
  # Past COMPILE_AFTER_RUNS the steps run as one generated function
  # (``program_codegen``): a shared step is an assignment there.
  monkeypatch.setattr(program, "COMPILE_AFTER_RUNS", 2)
  x, i = np.linspace(0, 1, 8, dtype=f32), np.array([1, 3, 5], np.int32)
  closed, prog = _program(_twice_normalised, x, i)
  runs = [_values(closed, (x, i))[0].tobytes() for _ in range(5)]
  assert len(set(runs)) == 1


def test_results_that_are_repeats_are_arrays_of_their_types():
  x = np.arange(3, dtype=f32)
  closed, prog = _program(lambda x: (jnp.exp(x), jnp.exp(x)), x)
  assert prog.repeats
  a, b = eval_jaxpr(closed.jaxpr, closed.consts, x)
  assert type(a) is core.Array and type(b) is core.Array
  assert a.dtype == b.dtype == np.float32
  np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
