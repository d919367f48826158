"""Op-table rows for the less common ``jax.numpy`` functions built from
other jnp operations: differences and integrals, covariances, windows, set
membership, polynomials and bit packing. NumPy's versions are the references."""
import numpy as np

import openjax.numpy as jnp
from tests.ops.harness import OpRow

F32 = np.float32


def _normal(*shapes):
  return lambda rng: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


def _ints(*shapes, hi=8):
  return lambda rng: tuple(rng.integers(0, hi, s).astype(np.int32) for s in shapes)


def _padded(np_fn, size):
  """NumPy's result padded to ``size`` with JAX's default fill."""
  def ref(a, b):
    r = np_fn(a, b)
    fill = 0 if np_fn is np.setdiff1d or r.size == 0 else r[0]
    return np.concatenate([r, np.full(size, fill, r.dtype)])[:size]
  return ref


ROWS = [
    OpRow("jnp_diff_n2", lambda x: jnp.diff(x, n=2, axis=0), _normal((5, 3)),
          lambda x: np.diff(x, n=2, axis=0), grad=True),
    OpRow("jnp_ediff1d", jnp.ediff1d, _normal((2, 4)), np.ediff1d),
    OpRow("jnp_gradient", lambda x: jnp.gradient(x, 0.5, axis=1), _normal((3, 5)),
          lambda x: np.gradient(x, 0.5, axis=1), grad=True),
    OpRow("jnp_trapezoid_x", jnp.trapezoid,
          lambda rng: (rng.standard_normal((2, 6)).astype(F32),
                       np.cumsum(rng.uniform(0.5, 1.5, 6)).astype(F32)),
          np.trapezoid, grad=True, rtol=1e-5),
    OpRow("jnp_cov", jnp.cov, _normal((3, 6)), lambda x: np.cov(x).astype(F32),
          grad=True, rtol=1e-4, atol=1e-5),
    OpRow("jnp_corrcoef", jnp.corrcoef, _normal((3, 6)), lambda x: np.corrcoef(x).astype(F32),
          rtol=1e-4, atol=1e-5),
    OpRow("jnp_vander", lambda x: jnp.vander(x, 4), _normal((5,)),
          lambda x: np.vander(x, 4), grad=True, rtol=1e-5),
    OpRow("jnp_unwrap", jnp.unwrap, lambda rng: (rng.uniform(-9, 9, (2, 7)).astype(F32),),
          lambda x: np.unwrap(x).astype(F32), atol=1e-5, rtol=1e-5),
    OpRow("jnp_kaiser", lambda beta: jnp.kaiser(6, beta),
          lambda rng: (rng.uniform(1, 5, ()).astype(F32),),
          lambda beta: np.kaiser(6, beta).astype(F32), rtol=1e-4, vmap=False),
    OpRow("jnp_isin", jnp.isin, _ints((3, 4), (5,)), np.isin),
    OpRow("jnp_isin_sort", lambda a, b: jnp.isin(a, b, invert=True, method="sort"),
          _ints((6,), (4,)), lambda a, b: np.isin(a, b, invert=True)),
    OpRow("jnp_union1d_size", lambda a, b: jnp.union1d(a, b, size=12), _ints((5,), (6,)),
          _padded(np.union1d, 12)),
    OpRow("jnp_intersect1d_size", lambda a, b: jnp.intersect1d(a, b, size=6),
          _ints((7,), (6,)), _padded(np.intersect1d, 6)),
    OpRow("jnp_setdiff1d_size", lambda a, b: jnp.setdiff1d(a, b, size=6), _ints((7,), (4,)),
          _padded(np.setdiff1d, 6)),
    OpRow("jnp_setxor1d_size", lambda a, b: jnp.setxor1d(a, b, size=9), _ints((5,), (5,)),
          _padded(np.setxor1d, 9)),
    OpRow("jnp_polyval", jnp.polyval, _normal((4,), (3, 2)), np.polyval, grad=True, rtol=1e-5),
    OpRow("jnp_polymul", jnp.polymul, _normal((4,), (3,)), np.polymul, grad=True, rtol=1e-5),
    OpRow("jnp_polyadd", jnp.polyadd, _normal((2,), (4,)), np.polyadd, grad=True),
    OpRow("jnp_polyder", lambda p: jnp.polyder(p, 2), _normal((5,)),
          lambda p: np.polyder(p, 2), grad=True),
    OpRow("jnp_polyint", lambda p: jnp.polyint(p, 2), _normal((4,)),
          lambda p: np.polyint(p, 2), grad=True, rtol=1e-5),
    OpRow("jnp_polydiv_quotient", lambda u, v: jnp.polydiv(u, v)[0],
          lambda rng: (rng.standard_normal(5).astype(F32),
                       np.array([1.5, -0.5], F32) + 0.1 * rng.standard_normal(2).astype(F32)),
          lambda u, v: np.polydiv(u, v)[0].astype(F32), rtol=1e-4, atol=1e-5),
    OpRow("jnp_polyfit", lambda x, y: jnp.polyfit(x, y, 2),
          lambda rng: (np.linspace(-1, 1, 8).astype(F32), rng.standard_normal(8).astype(F32)),
          lambda x, y: np.polyfit(x, y, 2).astype(F32), rtol=1e-3, atol=1e-4,
          # lstsq's SVD loop beside other loops in one module fails IREE
          # compilation ('scf.while' operand count mismatch): a module of its own.
          compile="alone"),
    OpRow("jnp_packbits", lambda x: jnp.packbits(x, axis=-1), _ints((3, 13), hi=2),
          lambda x: np.packbits(x, axis=-1)),
    OpRow("jnp_unpackbits", lambda x: jnp.unpackbits(x, axis=0, bitorder="little"),
          lambda rng: (rng.integers(0, 256, (2, 3)).astype(np.uint8),),
          lambda x: np.unpackbits(x, axis=0, bitorder="little")),
    OpRow("jnp_put_along_axis",
          lambda a, i: jnp.put_along_axis(a, i, 2.5, 1, inplace=False),
          lambda rng: (rng.standard_normal((3, 4)).astype(F32),
                       rng.integers(0, 4, (3, 1)).astype(np.int32)),
          lambda a, i: _put_along_axis_ref(a, i), vmap=False),
    OpRow("jnp_fill_diagonal", lambda a: jnp.fill_diagonal(a, 3.0, inplace=False),
          _normal((4, 3)), lambda a: _fill_diagonal_ref(a), grad=True),
]


def _put_along_axis_ref(a, i):
  out = a.copy()
  np.put_along_axis(out, i, 2.5, 1)
  return out


def _fill_diagonal_ref(a):
  out = a.copy()
  np.fill_diagonal(out, 3.0)
  return out
