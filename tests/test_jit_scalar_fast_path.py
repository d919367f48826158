"""A jitted call whose positional arguments are Arrays and Python scalars
takes jit's fast path once compiled (keyed by the scalars' types, which fix
their weak avals): the same values as the general path, other scalar values
included; ints outside the default integer's range still reach the general
path's OverflowError."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api.jit import JitWrapped


@pytest.fixture
def compiled():
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    yield


def _no_general_path(monkeypatch):
  def fail(self, args, kwargs, fast_key):
    raise AssertionError("jit's general path")
  monkeypatch.setattr(JitWrapped, "_call", fail)


def test_scalar_arguments_take_the_fast_path(compiled, monkeypatch):
  x = jnp.asarray(np.linspace(-1, 1, 5).astype(np.float32))
  f = jax.jit(lambda v, a, k, b, c: (v * a + k, jnp.logical_not(b), c * 2))
  f(x, 0.5, 3, True, 1j)
  _no_general_path(monkeypatch)
  for a, k, b, c in [(0.25, -2, False, 2 - 1j), (1.5, 7, True, 0j)]:
    y, nb, cc = f(x, a, k, b, c)
    np.testing.assert_allclose(np.asarray(y), np.asarray(x) * np.float32(a) + k, rtol=1e-6)
    assert y.dtype == np.float32 and bool(nb) == (not b) and complex(cc) == c * 2
  g = jax.jit(lambda v, a: v * a)
  monkeypatch.undo()
  g(x, 2)
  _no_general_path(monkeypatch)
  assert np.asarray(g(x, 3)).dtype == np.float32


def test_ints_out_of_range_still_raise(compiled):
  g = jax.jit(lambda v, a: v + a)
  x = jnp.asarray(np.arange(3, dtype=np.int32))
  g(x, 1)
  with pytest.raises(OverflowError):
    g(x, 2 ** 40)
  assert np.asarray(g(x, 2 ** 31 - 1)).dtype == np.int32


def test_static_arguments_take_the_fast_path_keyed_by_value(compiled, monkeypatch):
  """Static arguments by position join the fast key by value: each static
  value runs its own trace (no stale program for another value), and once
  seen a call skips the general path."""
  x = jnp.asarray(np.arange(6, dtype=np.float32).reshape(2, 3))
  f = jax.jit(lambda v, axis, scale: jnp.sum(v, axis=axis) * scale, static_argnums=(1,))
  want = {0: np.arange(6, dtype=np.float32).reshape(2, 3).sum(0),
          1: np.arange(6, dtype=np.float32).reshape(2, 3).sum(1)}
  for axis in (0, 1):
    f(x, axis, 2.0)
  _no_general_path(monkeypatch)
  for axis in (1, 0, 1):
    np.testing.assert_allclose(np.asarray(f(x, axis, 0.5)), want[axis] * 0.5)
  monkeypatch.undo()
  # A static value not seen yet, an unhashable one (the general path's
  # error), and keywords take the general path.
  np.testing.assert_allclose(np.asarray(f(x, -1, 1.0)), want[1])
  with pytest.raises(ValueError, match="[Nn]on-hashable static"):
    f(x, [0], 1.0)
  np.testing.assert_allclose(np.asarray(f(x, axis=0, scale=1.0)), want[0])


def test_static_values_of_different_types_are_not_confused(compiled):
  g = jax.jit(lambda v, k: v * k if isinstance(k, float) else v + k, static_argnums=1)
  x = jnp.asarray(np.ones(3, np.float32))
  assert np.asarray(g(x, 2)).tolist() == [3.0, 3.0, 3.0]
  assert np.asarray(g(x, 2.0)).tolist() == [2.0, 2.0, 2.0]
  assert np.asarray(g(x, 2)).tolist() == [3.0, 3.0, 3.0]
  assert np.asarray(g(x, 2.0)).tolist() == [2.0, 2.0, 2.0]


def test_static_keywords_take_the_fast_path(compiled, monkeypatch):
  x = jnp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
  f = jax.jit(lambda v, *, axis, keep=False: jnp.max(v, axis=axis, keepdims=keep),
              static_argnames=("axis", "keep"))
  f(x, axis=0)
  f(x, axis=1, keep=True)
  _no_general_path(monkeypatch)
  np.testing.assert_array_equal(np.asarray(f(x, axis=0)), np.arange(8, 12, dtype=np.float32))
  np.testing.assert_array_equal(np.asarray(f(x, keep=True, axis=1)),
                                np.array([[3], [7], [11]], np.float32))
  monkeypatch.undo()
  np.testing.assert_array_equal(np.asarray(f(x, axis=1)), np.array([3, 7, 11], np.float32))
