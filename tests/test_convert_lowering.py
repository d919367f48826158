"""The compiled convert_element_type: every dtype pair against the NumPy impl
(XLA's cast semantics: float->int saturates with NaN->0, complex->real keeps
the real part, ->bool is ``x != 0``), bit for bit, including the IREE gaps
the rule works around (int->bfloat16, the float8_e4m3fn NaN 0xFF)."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
from openjax import lax

_EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, 3e9, -3e9, 2147483520.0, 2.0 ** 31,
                   2.0 ** 32, 2.0 ** 63, 2.0 ** 64, -2.0 ** 63, 1e20, -1e20, 2.7, -2.7, -0.5,
                   0.0, -0.0, 255.9, 256.0, -129.0, 127.5, 65504.0, 70000.0, 1 / 3, 40000.0,
                   2.0 ** 25 + 2.0 ** 17 + 1])
_DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.float16,
           ml_dtypes.bfloat16, np.float32, np.complex64, ml_dtypes.float8_e4m3fn,
           ml_dtypes.float8_e5m2]
_X64_DTYPES = [np.int64, np.uint64, np.float64, np.complex128]


def _sample(dt):
  dt = np.dtype(dt)
  if dt == np.bool_:
    return np.arange(len(_EDGES)) % 3 == 0
  if dt.kind in "iu":
    info = np.iinfo(dt)
    v = np.random.default_rng(0).integers(info.min, info.max, size=len(_EDGES), dtype=dt,
                                          endpoint=True)
    v[:4] = (info.min, info.max, 0, 1)
    v[4] = min(2 ** 25 + 2 ** 17 + 1, info.max)   # rounds differently once or twice
    return v
  with np.errstate(all="ignore"):
    if dt.kind == "c":
      return (_EDGES + 1j * _EDGES[::-1]).astype(dt)
    return _EDGES.astype(dt)


def _check(src, dsts):
  x = _sample(src)
  f = lambda x: [lax.convert_element_type(x, d) for d in dsts]
  with jax.config.override("openjax_executor", "iree"):
    got = jax.jit(f)(x)
  for d, g, w in zip(dsts, got, f(x)):
    g, w = np.asarray(g), np.asarray(w)
    assert g.dtype == w.dtype == np.dtype(d)
    if g.dtype.kind in "fc" or g.dtype in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn,
                                           ml_dtypes.float8_e5m2):
      wide = np.complex128 if g.dtype.kind == "c" else np.float64   # NaN payloads may differ
      np.testing.assert_array_equal(g.astype(wide), w.astype(wide),
                                    err_msg=f"{np.dtype(src).name} -> {g.dtype.name}")
    else:
      np.testing.assert_array_equal(g, w, err_msg=f"{np.dtype(src).name} -> {g.dtype.name}")


@pytest.mark.parametrize("src", _DTYPES, ids=lambda d: np.dtype(d).name)
def test_convert_compiled_matches_eager(src):
  _check(src, _DTYPES)


@pytest.mark.parametrize("src", [np.float32] + _X64_DTYPES, ids=lambda d: np.dtype(d).name)
def test_convert_compiled_matches_eager_x64(src):
  with jax.enable_x64():
    _check(src, [np.bool_, np.int32, np.uint32, np.float32, np.complex64] + _X64_DTYPES)


def test_convert_semantics_compiled():
  x = np.array([np.nan, 1e10, -1e10, -2.9, 2.9, 2147483520.0], np.float32)
  c = np.array([1j, 0, 2.5 - 3j], np.complex64)
  f = lambda x, c: (lax.convert_element_type(x, np.int32), lax.convert_element_type(x, np.uint8),
                    lax.convert_element_type(c, np.float32), lax.convert_element_type(c, np.bool_),
                    lax.convert_element_type(x, np.bool_))
  with jax.config.override("openjax_executor", "iree"):
    i32, u8, re, b, xb = jax.jit(f)(x, c)
  np.testing.assert_array_equal(i32, [0, 2 ** 31 - 1, -2 ** 31, -2, 2, 2147483520])
  np.testing.assert_array_equal(u8, [0, 255, 0, 0, 2, 255])
  np.testing.assert_array_equal(re, [0, 0, 2.5])
  np.testing.assert_array_equal(b, [True, False, True])
  np.testing.assert_array_equal(xb, [True] * 6)


def test_convert_lowering_text():
  x = np.ones(3, np.float32)
  text = jax.jit(lambda x: lax.convert_element_type(x, np.int32)).lower(x).as_text()
  assert "stablehlo.clamp" in text and "stablehlo.select" in text
  text = jax.jit(lambda x: lax.convert_element_type(x, np.bool_)).lower(x).as_text()
  assert "stablehlo.compare" in text and "NE" in text
  text = jax.jit(lambda x: lax.convert_element_type(x, np.float16)).lower(x).as_text()
  assert "stablehlo.convert" in text and "clamp" not in text
