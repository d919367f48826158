"""A program run often runs its kernel steps as one generated function
(``core/program.py`` ``StepRunner``, ``program_codegen.compiled_steps``): the same kernels
on the same values, so the same bits, dtypes and released values as the
interpreted steps; the floating-point state restored when a kernel raises."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import program
from openjax._src.core import program_of
from openjax._src.core.trace import FP_ERRSTATE

f32, i32 = np.float32, np.int32


def _calls():
  x = jnp.asarray(np.array([-3.5, -0.0, 0.0, 1e-30, 2.5, np.inf, np.nan, 7.25], f32))
  y = jnp.asarray(np.array([2.0, -1.5, 0.0, 3.0, -0.5, 1.0, 2.0, np.inf], f32))
  n = jnp.asarray(np.array([-7, 0, 5, 2**31 - 1, -2**31, 3, 9, -1], i32))
  m = jnp.asarray(np.array([2, 3, 0, -1, -1, 0, 4, 5], i32))
  big = jnp.asarray(np.linspace(-2, 2, 4096, dtype=f32))
  return [
      lambda: jnp.hypot(x, y),                   # lean steps only
      lambda: jnp.floor_divide(x, y),
      lambda: jnp.divmod(n, m),                  # two results
      lambda: jnp.frexp(x),                      # non-lean steps, several outputs
      lambda: jnp.median(x),
      lambda: jnp.gcd(n, m),                     # a while loop's cond and body
      lambda: lax.fori_loop(0, 3, lambda i, c: c * 1.5 + i, x),   # a scan's body
      lambda: jnp.tanh(jnp.sinh(big) * 2.0 + jnp.cosh(big)),      # large slots released
      lambda: jnp.where(x > 0, x, 7.0),
      lambda: jnp.clip(n, -3, 3),
  ]


def _bits(out):
  return [(np.asarray(a).dtype, np.asarray(a).shape, np.asarray(a).tobytes(),
           getattr(a, "weak_type", None)) for a in jax.tree_util.tree_leaves(out)]


def test_compiled_steps_give_the_interpreted_bits(monkeypatch):
  calls = _calls()
  monkeypatch.setattr(program, "COMPILE_AFTER_RUNS", 10**9)
  interpreted = [_bits(f()) for f in calls for _ in range(3)]
  compiled_runs = []
  made = program.compiled_steps

  def counting(*args):
    compiled_runs.append(1)
    return made(*args)
  monkeypatch.setattr(program, "compiled_steps", counting)
  monkeypatch.setattr(program, "COMPILE_AFTER_RUNS", 1)
  jax.clear_caches()
  compiled = [_bits(f()) for f in calls for _ in range(3)]
  assert compiled_runs   # the compiled functions ran
  assert compiled == interpreted


def test_a_runner_compiles_after_its_runs(monkeypatch):
  monkeypatch.setattr(program, "COMPILE_AFTER_RUNS", 3)
  closed = jax.make_jaxpr(lambda x, y: jnp.sin(x) * y + 1.0)(np.ones(3, f32), np.ones(3, f32))
  prog = program_of(closed.jaxpr)
  args = [np.arange(3, dtype=f32), np.full(3, 2.0, f32)]
  want = np.sin(args[0]) * args[1] + f32(1.0)
  # A loop's runner (no floating-point state of its own) counts its runs.
  made = prog.step_runner(prog.kernel_steps, fp=False)
  assert made.run_steps == made._interpreted
  env = prog.values.copy()
  env[prog.n_consts:prog.n_consts + 2] = args
  for _ in range(3):
    made.run_steps(prog.kernel_steps, env)
  assert made.run_steps != made._interpreted   # generated now
  env[prog.out_slots[0]] = None
  made.run_steps(prog.kernel_steps, env)
  np.testing.assert_array_equal(env[prog.out_slots[0]], want)
  # Runners made per call (impls that call ``runner(consts)(args)``) share
  # the program's runner of its kernel steps: their calls count together.
  shared = prog.step_runner(prog.kernel_steps)
  assert prog.step_runner(prog.kernel_steps) is shared
  for _ in range(4):
    out, = prog.runner(closed.consts)(args)
    np.testing.assert_array_equal(out, want)
    assert out.dtype == f32
  assert shared.run_steps != shared._interpreted


def test_a_kernel_error_restores_the_floating_point_state(monkeypatch):
  monkeypatch.setattr(program, "COMPILE_AFTER_RUNS", 1)
  closed = jax.make_jaxpr(lambda x: jnp.sqrt(x) + 1.0)(np.ones(3, f32))
  prog = program_of(closed.jaxpr)
  made = prog.step_runner(prog.kernel_steps)
  env = prog.values.copy()
  env[0] = np.ones(3, f32)
  made.run_steps(prog.kernel_steps, env)   # compiles
  before = FP_ERRSTATE.get()
  env[0] = "not an array"
  with pytest.raises(TypeError):
    made.run_steps(prog.kernel_steps, env)
  assert FP_ERRSTATE.get() is before
