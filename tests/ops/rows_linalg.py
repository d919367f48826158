"""Op-table rows: the lax.linalg primitives and jnp.linalg. Outputs whose
signs or phases are implementation choices (eigenvectors, singular vectors,
Q) enter as sign-free products, so the compiled Jacobi/Householder code and
LAPACK can be compared."""
import numpy as np

import openjax.numpy as jnp
from openjax.lax import linalg as lax_linalg
from tests.ops.harness import OpRow as _OpRow

# These rows are compiled one per module: IREE 3.13 fails to compile some
# decompositions' loops together in one module (qr beside svd: "'scf.while'
# op ... region branch point has 6 operands, but region successor needs 8
# inputs"), though each compiles alone.


def OpRow(*args, **kw):  # noqa: N802 - the harness's row, compiled alone
  return _OpRow(*args, compile="alone", **kw)

F32 = np.dtype(np.float32)


def _spd(n=3, dtype=F32):
  def make(rng):
    a = rng.standard_normal((n, n))
    return ((a @ a.T + n * np.eye(n)) / n).astype(dtype)
  return make


def _general(shape=(3, 3), dtype=F32, shift=2.0):
  def make(rng):
    a = rng.standard_normal(shape)
    k = min(shape[-2:])
    a[..., :k, :k] += shift * np.eye(k)     # well conditioned
    return a.astype(dtype)
  return make


def _one(make):
  return lambda rng: (make(rng),)


def _mT(x):
  return np.swapaxes(x, -1, -2)


def _eigh_products(x):
  v, w = lax_linalg.eigh(x)
  return w, (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2)


def _np_eigh_products(x):
  w, v = np.linalg.eigh(x)
  return w, (v * w[..., None, :]) @ _mT(v)


def _qr_products(x):
  q, r = lax_linalg.qr(x, full_matrices=False)
  return q @ r, jnp.swapaxes(r, -1, -2) @ r


def _np_qr_products(x):
  q, r = np.linalg.qr(x)
  return q @ r, _mT(r) @ r


def _svd_products(x):
  u, s, vh = lax_linalg.svd(x, full_matrices=False)
  return s, (u * s[..., None, :]) @ vh


def _np_svd_products(x):
  u, s, vh = np.linalg.svd(x, full_matrices=False)
  return s, (u * s[..., None, :]) @ vh


def _lu(x):
  lu, pivots, perm = lax_linalg.lu(x)
  return lu, pivots, perm, lax_linalg.lu_pivots_to_permutation(pivots, x.shape[-2])


def _np_lu(x):
  # Partial pivoting (largest magnitude, first on ties), as getrf.
  a = x.astype(np.float64).copy()
  m, n = a.shape
  perm = np.arange(m)
  pivots = []
  for j in range(min(m, n)):
    i = j + int(np.argmax(np.abs(a[j:, j])))
    pivots.append(i)
    a[[j, i]] = a[[i, j]]
    perm[[j, i]] = perm[[i, j]]
    a[j + 1:, j] /= a[j, j]
    a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
  piv = np.array(pivots, np.int32)
  return a.astype(x.dtype), piv, perm.astype(np.int32), perm.astype(np.int32)


def _tri(**kw):
  def f(a, b):
    return lax_linalg.triangular_solve(a, b, **kw)

  def ref(a, b):
    t = np.tril(a) if kw.get("lower") else np.triu(a)
    if kw.get("transpose_a"):
      t = t.T
    if kw.get("left_side"):
      return np.linalg.solve(t.astype(np.float64), b).astype(b.dtype)
    return np.linalg.solve(t.T.astype(np.float64), b.T).T.astype(b.dtype)
  return f, ref


ROWS = [
    OpRow("lax_linalg_cholesky", lambda x: lax_linalg.cholesky(x), _one(_spd()),
          lambda x: np.linalg.cholesky(x), grad=True, atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_eigh", _eigh_products, _one(_spd()), _np_eigh_products, grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_qr", _qr_products, _one(_general((4, 3))), _np_qr_products, grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_svd", _svd_products, _one(_general((4, 3))), _np_svd_products, grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("lax_linalg_lu", _lu, _one(_general((4, 3), shift=0.0)), _np_lu, atol=1e-5,
          rtol=1e-5),
    OpRow("jnp_linalg_solve", jnp.linalg.solve, lambda rng: (_general()(rng), _general((3, 2))(rng)),
          lambda a, b: np.linalg.solve(a, b), grad=True, atol=1e-5, rtol=1e-5),
    OpRow("jnp_linalg_det", jnp.linalg.det, _one(_general((4, 4))), np.linalg.det, grad=True,
          atol=1e-4, rtol=1e-5),
    OpRow("jnp_linalg_slogdet", lambda x: tuple(jnp.linalg.slogdet(x)), _one(_general((4, 4))),
          lambda x: tuple(np.linalg.slogdet(x)), grad=True, atol=1e-5, rtol=1e-5),
    OpRow("jnp_linalg_inv", jnp.linalg.inv, _one(_general()), np.linalg.inv, grad=True,
          atol=1e-5, rtol=1e-5),
]

for _kw in ({"left_side": True, "lower": True}, {"left_side": True, "lower": False,
                                                  "transpose_a": True},
            {"left_side": False, "lower": True}, {"left_side": False, "lower": False}):
  _f, _ref = _tri(**_kw)
  _name = "lax_linalg_triangular_solve_" + "_".join(f"{k}{int(v)}" for k, v in _kw.items())
  _b_shape = (3, 2) if _kw["left_side"] else (2, 3)
  ROWS.append(OpRow(_name, _f, lambda rng, s=_b_shape: (_general()(rng), _general(s, shift=0)(rng)),
                    _ref, grad=True, atol=1e-5, rtol=1e-5))
