"""Op-table rows: the ``fft`` primitive (``lax.fft``, all four kinds) and
``jnp.fft``, against ``numpy.fft``. Lengths mix powers of two (IREE's own
``stablehlo.fft``) and others (DFT-matrix products)."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32, C64 = np.float32, np.complex64


def _arr(shape, dtype=F32):
  def make(rng):
    if np.dtype(dtype).kind == "c":
      return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
  return lambda rng: (make(rng),)


ROWS = [
    OpRow("lax.fft_fft_8", lambda x: lax.fft(x, "fft", (8,)), _arr((3, 8), C64),
          np.fft.fft, grad=True),
    OpRow("lax.fft_ifft_6", lambda x: lax.fft(x, "ifft", (6,)), _arr((2, 6), C64),
          np.fft.ifft, grad=True),
    OpRow("lax.fft_fft_2d", lambda x: lax.fft(x, "fft", (4, 6)), _arr((2, 4, 6), C64),
          lambda x: np.fft.fftn(x, axes=(1, 2)), grad=True),
    OpRow("lax.fft_rfft_8", lambda x: lax.fft(x, "rfft", (8,)), _arr((3, 8)),
          lambda x: np.fft.rfft(x).astype(C64), grad=True),
    OpRow("lax.fft_rfft_2d_odd", lambda x: lax.fft(x, "rfft", (3, 5)), _arr((2, 3, 5)),
          lambda x: np.fft.rfftn(x, axes=(1, 2)).astype(C64), grad=True),
    OpRow("lax.fft_irfft_8", lambda x: lax.fft(x, "irfft", (8,)), _arr((3, 5), C64),
          lambda x: np.fft.irfft(x, 8).astype(F32), grad=True),
    OpRow("lax.fft_irfft_2d_odd", lambda x: lax.fft(x, "irfft", (4, 7)), _arr((2, 4, 4), C64),
          lambda x: np.fft.irfftn(x, (4, 7), axes=(1, 2)).astype(F32), grad=True),
    OpRow("jnp.fft.fft", jnp.fft.fft, _arr((4, 6), C64), np.fft.fft, grad=True),
    OpRow("jnp.fft.fft_real_n_axis", lambda x: jnp.fft.fft(x, n=8, axis=0), _arr((5, 3)),
          lambda x: np.fft.fft(x, n=8, axis=0).astype(C64), grad=True),
    OpRow("jnp.fft.ifft_ortho", lambda x: jnp.fft.ifft(x, norm="ortho"), _arr((3, 5), C64),
          lambda x: np.fft.ifft(x, norm="ortho"), grad=True),
    OpRow("jnp.fft.rfft_forward", lambda x: jnp.fft.rfft(x, norm="forward"), _arr((3, 10)),
          lambda x: np.fft.rfft(x, norm="forward").astype(C64), grad=True),
    OpRow("jnp.fft.irfft_n", lambda x: jnp.fft.irfft(x, n=9), _arr((2, 5), C64),
          lambda x: np.fft.irfft(x, n=9).astype(F32), grad=True),
    OpRow("jnp.fft.hfft", jnp.fft.hfft, _arr((3, 5), C64),
          lambda x: np.fft.hfft(x).astype(F32), grad=True),
    OpRow("jnp.fft.ihfft", jnp.fft.ihfft, _arr((3, 6)),
          lambda x: np.fft.ihfft(x).astype(C64), grad=True),
    OpRow("jnp.fft.fft2_s", lambda x: jnp.fft.fft2(x, s=(3, 4)), _arr((2, 4, 5), C64),
          lambda x: np.fft.fft2(x, s=(3, 4)), grad=True),
    OpRow("jnp.fft.ifft2", jnp.fft.ifft2, _arr((4, 4), C64), np.fft.ifft2),
    OpRow("jnp.fft.rfft2_axes", lambda x: jnp.fft.rfft2(x, axes=(0, 2)), _arr((4, 3, 6)),
          lambda x: np.fft.rfft2(x, axes=(0, 2)).astype(C64), grad=True),
    OpRow("jnp.fft.irfft2", jnp.fft.irfft2, _arr((4, 5), C64),
          lambda x: np.fft.irfft2(x).astype(F32)),
    OpRow("jnp.fft.fftn_3d", jnp.fft.fftn, _arr((2, 3, 4), C64), np.fft.fftn),
    OpRow("jnp.fft.ifftn_axes", lambda x: jnp.fft.ifftn(x, axes=(0, 1)), _arr((4, 3, 2), C64),
          lambda x: np.fft.ifftn(x, axes=(0, 1))),
    OpRow("jnp.fft.rfftn_ortho", lambda x: jnp.fft.rfftn(x, norm="ortho"), _arr((3, 4, 6)),
          lambda x: np.fft.rfftn(x, norm="ortho").astype(C64)),
    OpRow("jnp.fft.irfftn_s", lambda x: jnp.fft.irfftn(x, s=(3, 6)), _arr((2, 3, 4), C64),
          lambda x: np.fft.irfftn(x, s=(3, 6), axes=(1, 2)).astype(F32)),
    OpRow("jnp.fft.fftshift", lambda x: jnp.fft.fftshift(x), _arr((4, 5)), np.fft.fftshift),
    OpRow("jnp.fft.ifftshift_axis", lambda x: jnp.fft.ifftshift(x, axes=1), _arr((4, 5)),
          lambda x: np.fft.ifftshift(x, axes=1)),
]
