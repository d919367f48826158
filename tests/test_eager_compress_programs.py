"""Eager ``jnp.compress``/``jnp.extract`` with ``size`` run as one library
program (numpy/eager_programs.py, ``only_with="size"``): the same values as
op by op and as NumPy, inline under a trace (no jit equation of theirs is
staged, as in JAX), and without ``size`` (a value-dependent shape) op by op."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import indexing

_X = np.arange(24, dtype=np.float32).reshape(4, 6) - 7.5


def _program_ran(fun) -> bool:
  # the library program behind the decorator, reached through the closure
  program = next(c.cell_contents for c in fun.__closure__
                 if type(c.cell_contents).__name__ == "JitWrapped")
  return any(callable(r) for r in program._eager_fast.values()) or bool(program._cache)


def test_compress_and_extract_with_size_run_as_programs():
  x = jnp.asarray(_X)
  mask = x > 0
  row = jnp.asarray(np.array([True, False, True, True]))
  calls = [
      (lambda: jnp.extract(mask, x, size=20), None),
      (lambda: jnp.extract(mask, x, size=5, fill_value=-1.0), None),
      (lambda: jnp.compress(row, x, axis=0, size=4), None),
      (lambda: jnp.compress(row[:3], x, axis=1, size=2, fill_value=9.0), None),
      (lambda: jnp.compress(row, x, size=3), None),
  ]
  for call, _ in calls:
    got = call()
    with jax.disable_jit():   # op by op
      want = call()
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  assert _program_ran(indexing.extract) and _program_ran(indexing.compress)
  # NumPy's values where the sizes match
  m = _X > 0
  np.testing.assert_array_equal(np.asarray(jnp.extract(mask, x, size=int(m.sum()))),
                                np.extract(m, _X))
  np.testing.assert_array_equal(np.asarray(jnp.compress(row, x, axis=0, size=3)),
                                np.compress([True, False, True, True], _X, axis=0))


def test_without_size_and_under_a_trace_they_run_inline():
  x = jnp.asarray(_X)
  np.testing.assert_array_equal(np.asarray(jnp.extract(x > 0, x)), np.extract(_X > 0, _X))
  np.testing.assert_array_equal(
      np.asarray(jnp.compress(np.array([False, True, True, False]), x, axis=0)),
      np.compress([False, True, True, False], _X, axis=0))
  text = str(jax.make_jaxpr(lambda m, a: jnp.extract(m, a, size=7))(x > 0, x))
  assert "name=extract" not in text and "name=compress" not in text
  got = jax.jit(lambda m, a: jnp.extract(m, a, size=7, fill_value=0.5))(x > 0, x)
  np.testing.assert_array_equal(np.asarray(got), np.extract(_X > 0, _X)[:7])
