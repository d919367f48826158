"""Op-table rows: complex64 lax.linalg and jnp.linalg, so every column
(compiled included) covers complex decompositions. Outputs whose phases are
implementation choices (Q, eigenvectors) enter as phase-free products."""
import numpy as np

import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from tests.ops.harness import OpRow as _OpRow

C64 = np.dtype(np.complex64)


def OpRow(*args, **kw):  # noqa: N802 - the harness's row, compiled alone (see rows_linalg)
  return _OpRow(*args, compile="alone", atol=2e-5, rtol=2e-5, **kw)


def _complex(rng, shape):
  return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def _hpd(n=3):
  def make(rng):
    a = _complex(rng, (n, n))
    return (((a @ a.conj().T) + n * np.eye(n)) / n).astype(C64)
  return make


def _general(shape=(3, 3), shift=2.0):
  def make(rng):
    a = _complex(rng, shape)
    k = min(shape[-2:])
    a[..., :k, :k] += shift * np.eye(k)     # well conditioned
    return a.astype(C64)
  return make


def _one(make):
  return lambda rng: (make(rng),)


def _H(x):
  return jnp.conj(jnp.swapaxes(x, -1, -2))


def _qr_products(x):
  q, r = lax_linalg.qr(x, full_matrices=False)
  return q @ r, _H(q) @ q, jnp.abs(r)


def _np_qr_products(x):
  q, r = np.linalg.qr(x)
  return q @ r, q.conj().T @ q, np.abs(r)


def _eigh_products(x):
  v, w = lax_linalg.eigh(x)
  return w, (v * w[..., None, :]) @ _H(v)


def _np_eigh_products(x):
  w, v = np.linalg.eigh(x)
  return w, (v * w[..., None, :]) @ v.conj().T


ROWS = [
    OpRow("lax_linalg_cholesky_c64", lambda x: lax_linalg.cholesky(x), _one(_hpd()),
          np.linalg.cholesky),
    OpRow("lax_linalg_qr_c64", _qr_products, _one(_general((4, 3))), _np_qr_products),
    OpRow("lax_linalg_eigh_c64", _eigh_products, _one(_hpd()), _np_eigh_products),
    OpRow("jnp_linalg_inv_c64", jnp.linalg.inv, _one(_general()), np.linalg.inv),
    OpRow("jnp_linalg_solve_c64", jnp.linalg.solve,
          lambda rng: (_general()(rng), _general((3, 2), shift=0)(rng)), np.linalg.solve),
    OpRow("jnp_linalg_det_c64", jnp.linalg.det, _one(_general((4, 4))), np.linalg.det),
    OpRow("lax_linalg_triangular_solve_c64",
          lambda a, b: lax_linalg.triangular_solve(a, b, left_side=True, lower=True,
                                                   conjugate_a=True),
          lambda rng: (_general()(rng), _general((3, 2), shift=0)(rng)),
          lambda a, b: np.linalg.solve(np.tril(a).conj(), b).astype(C64)),
]
