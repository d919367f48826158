"""``jax.scipy.fft``'s type-II DCTs against ``scipy.fft``: lengths odd and
even, every axis, ``n``/``s`` padding and truncation, both norms, complex
input, float64, round trips, derivatives, and JAX's errors."""
import numpy as np
import pytest
import scipy.fft

import openjax as jax
from openjax.scipy import fft as jsp_fft


def _rand(shape, dtype=np.float64, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


@pytest.mark.parametrize("norm", [None, "backward", "ortho"])
@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 13, 16])
def test_dct_idct_1d(norm, length):
  x = _rand((3, length))
  with jax.enable_x64():
    np.testing.assert_allclose(np.asarray(jsp_fft.dct(x, norm=norm)), scipy.fft.dct(x, norm=norm),
                               atol=1e-12)
    np.testing.assert_allclose(np.asarray(jsp_fft.idct(x, norm=norm)),
                               scipy.fft.idct(x, norm=norm), atol=1e-12)
    np.testing.assert_allclose(np.asarray(jsp_fft.idct(jsp_fft.dct(x, norm=norm), norm=norm)), x,
                               atol=1e-12)
  got = jsp_fft.dct(x.astype(np.float32), norm=norm)
  assert got.dtype == np.float32
  np.testing.assert_allclose(np.asarray(got), scipy.fft.dct(x, norm=norm), atol=2e-5 * length)


@pytest.mark.parametrize("fun", ["dct", "idct"])
def test_axis_n_and_complex(fun):
  ours, ref = getattr(jsp_fft, fun), getattr(scipy.fft, fun)
  x = _rand((4, 5, 6))
  with jax.enable_x64():
    for kw in ({"axis": 0}, {"axis": 1}, {"n": 9}, {"n": 3, "axis": 0}, {"n": 8, "norm": "ortho"}):
      np.testing.assert_allclose(np.asarray(ours(x, **kw)), ref(x, **kw), atol=1e-12)
    xc = _rand((3, 7), np.complex128)
    np.testing.assert_allclose(np.asarray(ours(xc)), ref(xc), atol=1e-12)
  assert ours(np.arange(4)).dtype == np.float32          # integers promote to float


@pytest.mark.parametrize("fun", ["dctn", "idctn"])
@pytest.mark.parametrize("kw", [{}, {"norm": "ortho"}, {"axes": (0, 2)}, {"axes": [-1]},
                                {"s": (3, 7)}, {"s": (2, 3, 8)}, {"s": 5, "axes": 1},
                                {"axes": (2, 0, 1), "norm": "ortho"}], ids=str)
def test_dctn_idctn(fun, kw):
  x = _rand((4, 5, 6))
  with jax.enable_x64():
    np.testing.assert_allclose(np.asarray(getattr(jsp_fft, fun)(x, **kw)),
                               getattr(scipy.fft, fun)(x, **kw), atol=1e-11)


def test_grad_is_the_transform_transposed():
  # The DCT is linear: its VJP of ones is the column sums of its matrix.
  with jax.enable_x64():
    x = _rand(6)
    g = jax.grad(lambda v: jsp_fft.dct(v).sum())(x)
    np.testing.assert_allclose(np.asarray(g), scipy.fft.dct(np.eye(6), axis=0).sum(0), atol=1e-12)
    jax.test_util.check_grads(lambda v: jsp_fft.idctn(v, norm="ortho"), (_rand((3, 4)),),
                              order=2, atol=1e-6, rtol=1e-6)


def test_jit_and_vmap():
  x = _rand((5, 8), np.float32)
  np.testing.assert_allclose(np.asarray(jax.jit(jsp_fft.dct)(x)), np.asarray(jsp_fft.dct(x)),
                             atol=1e-5)
  np.testing.assert_allclose(np.asarray(jax.vmap(jsp_fft.idct)(x)), np.asarray(jsp_fft.idct(x)),
                             atol=1e-5)


def test_errors():
  x = np.ones(4)
  for fun in (jsp_fft.dct, jsp_fft.idct, jsp_fft.dctn, jsp_fft.idctn):
    with pytest.raises(NotImplementedError, match="type 2"):
      fun(x, type=3)
    with pytest.raises(ValueError, match="norm='forward' is not implemented"):
      fun(x, norm="forward")
  with pytest.raises(ValueError, match="at most x.ndim"):
    jsp_fft.dctn(x, s=(2, 2))
