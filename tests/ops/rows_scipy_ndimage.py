"""Op-table rows: ``jax.scipy.ndimage.map_coordinates``,
``interpolate.RegularGridInterpolator``, ``integrate.trapezoid``,
``cluster.vq.vq`` and ``spatial.transform.Rotation``/``Slerp``, against
SciPy. JAX's ``'constant'`` and ``'wrap'`` modes are SciPy's
``'grid-constant'`` and ``'grid-wrap'``."""
import numpy as np
import scipy.cluster.vq
import scipy.integrate
import scipy.interpolate
import scipy.ndimage
from scipy.spatial.transform import Rotation as ScipyRotation
from scipy.spatial.transform import Slerp as ScipySlerp

from openjax.scipy import cluster, integrate, interpolate, ndimage
from openjax.scipy.spatial.transform import Rotation, Slerp
from tests.ops.harness import OpRow

F32 = np.dtype(np.float32)
_SCIPY_MODE = {"constant": "grid-constant", "wrap": "grid-wrap"}


def _image_and_coords(rng):
  image = rng.standard_normal((5, 6)).astype(F32)
  rows = rng.uniform(-2, 7, (4, 3)).astype(F32)
  cols = rng.uniform(-2, 8, (4, 3)).astype(F32)
  return image, rows, cols


ROWS = []
for _order in (0, 1):
  for _mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
    ROWS.append(OpRow(
        f"scipy_ndimage_map_coordinates_o{_order}_{_mode}",
        lambda im, r, c, o=_order, m=_mode: ndimage.map_coordinates(im, [r, c], o, m, 0.5),
        _image_and_coords,
        lambda im, r, c, o=_order, m=_mode: scipy.ndimage.map_coordinates(
            im, [r, c], order=o, mode=_SCIPY_MODE.get(m, m), cval=0.5),
        # Order 1 is differentiable in the image (and in the coordinates
        # away from grid points); the coordinates are random, never on one.
        grad=_order == 1, atol=1e-5, rtol=1e-5))


def _grid_values_points(rng):
  values = rng.standard_normal((4, 5)).astype(F32)
  points = np.stack([rng.uniform(0, 3, 6), rng.uniform(-1, 1, 6)], -1).astype(F32)
  return values, points


_GRID = (np.array([0.0, 1.0, 1.5, 3.0], F32), np.linspace(-1, 1, 5).astype(F32))

for _method in ("linear", "nearest"):
  ROWS.append(OpRow(
      f"scipy_interpolate_regular_grid_{_method}",
      lambda v, p, m=_method: interpolate.RegularGridInterpolator(_GRID, v, method=m)(p),
      _grid_values_points,
      lambda v, p, m=_method: scipy.interpolate.RegularGridInterpolator(
          _GRID, v, method=m)(p).astype(F32),
      grad=_method == "linear", atol=1e-5, rtol=1e-5))

ROWS += [
    OpRow("scipy_integrate_trapezoid", lambda y, x: integrate.trapezoid(y, x),
          lambda rng: (rng.standard_normal((3, 6)).astype(F32),
                       np.sort(rng.uniform(0, 2, 6)).astype(F32)),
          lambda y, x: scipy.integrate.trapezoid(y, x).astype(F32), grad=True),
    OpRow("scipy_cluster_vq", lambda obs, book: cluster.vq.vq(obs, book),
          lambda rng: (rng.standard_normal((7, 3)).astype(F32),
                       rng.standard_normal((4, 3)).astype(F32)),
          lambda obs, book: tuple(np.asarray(o, F32 if o.dtype.kind == "f" else np.int32)
                                  for o in scipy.cluster.vq.vq(obs, book)),
          atol=1e-5, rtol=1e-5),
]


def _quats(rng):
  return (rng.standard_normal((4, 4)).astype(F32),)


def _rotation_rows():
  rows = []
  conversions = {
      "matrix": (lambda q: Rotation.from_quat(q).as_matrix(),
                 lambda q: ScipyRotation.from_quat(q).as_matrix()),
      "rotvec": (lambda q: Rotation.from_quat(q).as_rotvec(),
                 lambda q: ScipyRotation.from_quat(q).as_rotvec()),
      "mrp": (lambda q: Rotation.from_quat(q).as_mrp(),
              lambda q: ScipyRotation.from_quat(q).as_mrp()),
      "euler_xyz": (lambda q: Rotation.from_quat(q).as_euler("xyz"),
                    lambda q: ScipyRotation.from_quat(q).as_euler("xyz")),
      "euler_ZXZ": (lambda q: Rotation.from_quat(q).as_euler("ZXZ"),
                    lambda q: ScipyRotation.from_quat(q).as_euler("ZXZ")),
      "magnitude": (lambda q: Rotation.from_quat(q).magnitude(),
                    lambda q: ScipyRotation.from_quat(q).magnitude()),
      "canonical": (lambda q: Rotation.from_quat(q).as_quat(canonical=True),
                    lambda q: ScipyRotation.from_quat(q).as_quat(canonical=True)),
      "from_matrix": (lambda q: Rotation.from_matrix(Rotation.from_quat(q).as_matrix())
                      .as_quat(canonical=True),
                      lambda q: ScipyRotation.from_matrix(ScipyRotation.from_quat(q).as_matrix())
                      .as_quat(canonical=True)),
      "compose": (lambda q: (Rotation.from_quat(q) * Rotation.from_quat(q[::-1]))
                  .as_quat(canonical=True),
                  lambda q: (ScipyRotation.from_quat(q) * ScipyRotation.from_quat(q[::-1]))
                  .as_quat(canonical=True)),
  }
  for name, (fn, ref) in conversions.items():
    rows.append(OpRow(f"scipy_spatial_rotation_{name}", fn, _quats,
                      lambda q, ref=ref: np.asarray(ref(q), F32), atol=1e-5, rtol=1e-5,
                      grad=name in ("matrix", "rotvec", "mrp", "compose")))
  rows.append(OpRow(
      "scipy_spatial_rotation_apply", lambda q, v: Rotation.from_quat(q).apply(v),
      lambda rng: (rng.standard_normal((4, 4)).astype(F32),
                   rng.standard_normal((4, 3)).astype(F32)),
      lambda q, v: ScipyRotation.from_quat(q).apply(v).astype(F32), grad=True,
      atol=1e-5, rtol=1e-5))
  times = np.array([0.0, 1.0, 2.5, 4.0], F32)
  rows.append(OpRow(
      "scipy_spatial_slerp", lambda q, t: Slerp.init(times, Rotation.from_quat(q))(t)
      .as_quat(canonical=True),
      lambda rng: (rng.standard_normal((4, 4)).astype(F32),
                   np.sort(rng.uniform(0, 4, 5)).astype(F32)),
      lambda q, t: ScipySlerp(times, ScipyRotation.from_quat(q))(t).as_quat(canonical=True)
      .astype(F32), atol=1e-5, rtol=1e-5))
  return rows


ROWS += _rotation_rows()
