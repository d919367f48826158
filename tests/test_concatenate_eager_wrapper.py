"""``jnp.concatenate`` of a list or tuple of Arrays decides its checks from the
operands' ranks alone (numpy/shape_joining.py): the results (bits, dtype,
weak type) and errors must be those of the general path, which traced calls
still take."""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.numpy import shape_joining

_RNG = np.random.default_rng(3)


def _same(a, b) -> None:
  assert type(a) is type(b)
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                np.asarray(b).reshape(-1).view(np.uint8))


def _general(arrays, **kwargs):
  """The general path: traced operands take it."""
  return jax.jit(lambda *xs: jnp.concatenate(list(xs), **kwargs))(*arrays)


_F = jnp.asarray(_RNG.standard_normal((2, 3)).astype(np.float32))
_G = jnp.asarray(_RNG.standard_normal((2, 2)).astype(np.float32))
_I = jnp.asarray(_RNG.integers(-5, 5, (2, 1)).astype(np.int32))
_B = jnp.asarray(_RNG.random((2, 3)) > 0.5)
_H = jnp.asarray(_RNG.standard_normal((1, 3)).astype(np.float16))
_V = jnp.asarray(np.arange(4, dtype=np.float32))
_W = jnp.asarray(2.5)   # weakly typed, 0-d
_WV = jnp.asarray(np.array([1.0, -0.0, np.nan], np.float32))
_WEAK = jax.lax.broadcast(_W, (3,))   # a weakly typed vector

_CASES = [
    ("axis 1", [_F, _G], dict(axis=1)),
    ("axis -1 tuple", (_F, _G, _F), dict(axis=-1)),
    ("axis 0", [_F, _H.astype(jnp.float32), _F], dict()),
    ("promote int float", [_F, _I.astype(jnp.float32)[:, :1], _I], dict(axis=1)),
    ("promote bool int", [_B, _I], dict(axis=-1)),
    ("promote f16 f32", [_H, _F], dict(axis=0)),
    ("dtype", [_F, _I], dict(axis=1, dtype=jnp.int32)),
    ("dtype numpy", [_F, _B], dict(axis=0, dtype=np.dtype(np.float16))),
    ("none", [_F, _V, _I], dict(axis=None)),
    ("none 1-d", [_V, _WV], dict(axis=None)),
    ("none dtype", [_F, _B], dict(axis=None, dtype=jnp.bfloat16)),
    ("none 0-d", [_W, _V], dict(axis=None)),
    ("weak", [_WEAK, _WEAK], dict()),
    ("weak and strong", [_WEAK, _V.astype(jnp.float16)], dict()),
    ("weak and int", [_WEAK, _I[:, 0]], dict()),
    ("one array", [_F], dict(axis=1)),
    ("empty operand", [_F[:0], _F], dict()),
]


@pytest.mark.parametrize("name,arrays,kwargs", _CASES, ids=[c[0] for c in _CASES])
def test_arrays_as_the_general_path(name, arrays, kwargs):
  _same(jnp.concatenate(arrays, **kwargs), _general(arrays, **kwargs))


def test_the_fast_path_is_taken(monkeypatch):
  # The general path's per-array checks are skipped for Arrays.
  def fail(*args):
    raise AssertionError("general path")
  monkeypatch.setattr(shape_joining, "check_arraylike", fail)
  jnp.concatenate([_F, _G], axis=1)
  jnp.concatenate((_V, _V), axis=None)
  with pytest.raises(AssertionError, match="general path"):
    jnp.concatenate([_F, np.ones((2, 1), np.float32)], axis=1)


@pytest.mark.parametrize("arrays,kwargs,error,match", [
    ([_F, _G], dict(axis=2), np.exceptions.AxisError, "axis 2 is out of bounds"),
    ([_F, _G], dict(axis=-3), np.exceptions.AxisError, "axis -3 is out of bounds"),
    ([_W, _W], dict(), ValueError, "Zero-dimensional arrays cannot be concatenated"),
    ([_F, _G], dict(axis=0), TypeError, "concatenate"),
    ([_F, _V], dict(axis=0), TypeError, "concatenate"),
    ([_F, _G], dict(axis=1.0), TypeError, "integer"),
])
def test_errors_as_the_general_path(arrays, kwargs, error, match):
  with pytest.raises(error, match=match) as eager:
    jnp.concatenate(arrays, **kwargs)
  with pytest.raises(error) as traced:
    _general(arrays, **kwargs)
  assert str(eager.value).split("\n")[0] == str(traced.value).split("\n")[0]


def test_truncated_dtype_still_warns():
  with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    out = jnp.concatenate([_V, _V], dtype=np.float64)
  assert out.dtype == np.float32
  assert any("float64" in str(w.message) for w in caught)


def test_grad_through_concatenate_of_arrays():
  g = jax.grad(lambda a, b: jnp.concatenate([a, b], axis=None).sum() * 2.0,
               argnums=(0, 1))(_F, _V)
  np.testing.assert_array_equal(g[0], np.full((2, 3), 2.0, np.float32))
  np.testing.assert_array_equal(g[1], np.full((4,), 2.0, np.float32))
