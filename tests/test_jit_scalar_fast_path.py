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
