"""``jax.scipy.spatial.transform``: ``Rotation`` (3-d rotations held as unit
quaternions ``(x, y, z, w)``, single ``[4]`` or stacked ``[N, 4]``) and
``Slerp`` (spherical linear interpolation between key rotations). Both are
NamedTuples, hence pytrees that pass through ``jit`` and ``vmap``.

Conversions follow SciPy: Euler angles by Bernardes & Viollet's direct
quaternion method (2022), matrices to quaternions by Shepperd's method."""
from __future__ import annotations

import re
import typing

from functools import partial

import numpy as np

from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.scipy import jnp

__all__ = ["Rotation", "Slerp"]


# ------------------------------------------------------------ quaternions
# Each conversion is a cached library program (util.jit): eagerly ~1 us a
# step, where op by op each of its slices, stacks and products took a dispatch.
def _norm(v):
  return jnp.sqrt(jnp.sum(v * v, axis=-1))


@util.jit
def _normalize(q):
  return q / _norm(q)[..., None]


@util.jit
def _compose(p, q):
  """The Hamilton product ``p q`` (apply ``q`` first)."""
  pv, pw = p[..., :3], p[..., 3:]
  qv, qw = q[..., :3], q[..., 3:]
  v = pw * qv + qw * pv + jnp.cross(pv, qv)
  w = pw * qw - jnp.sum(pv * qv, axis=-1, keepdims=True)
  return jnp.concatenate([v, w], axis=-1)


def _matrix_of_quat_products() -> np.ndarray:
  """``C[a, b, i, j]``: the rotation matrix of ``q`` is ``sum_ab q_a q_b
  C[a, b, i, j]`` (each entry a quadratic form in ``(x, y, z, w)``)."""
  c = np.zeros((4, 4, 3, 3))
  x, y, z, w = range(4)
  squares = {(0, 0): (1, -1, -1, 1), (1, 1): (-1, 1, -1, 1), (2, 2): (-1, -1, 1, 1)}
  for (i, j), signs in squares.items():
    for a, sign in zip(range(4), signs):
      c[a, a, i, j] = sign
  for i, j, pair, cross_sign in ((0, 1, (x, y), -1), (0, 2, (x, z), 1), (1, 2, (y, z), -1)):
    k = 3 - i - j   # the axis of the w term: 2 (x, y) -> z w, and so on
    c[pair + (i, j)] = c[pair + (j, i)] = 2
    c[k, w, i, j] = cross_sign * 2
    c[k, w, j, i] = -cross_sign * 2
  return c


_QUAT_PRODUCTS = _matrix_of_quat_products()


@util.jit
def _as_matrix(q):
  # One contraction of the outer product q q^T with a constant tensor (~5
  # steps) rather than nine quadratic forms written out (~45 steps).
  outer = q[..., :, None] * q[..., None, :]
  return jnp.einsum("...ab,abij->...ij", outer, _QUAT_PRODUCTS.astype(q.dtype),
                    precision=lax.Precision.HIGHEST)


@util.jit
def _magnitude(q):
  return 2 * jnp.arctan2(_norm(q[..., :3]), jnp.abs(q[..., 3]))


@partial(util.jit, static_argnames=("inverse",))
def _apply(q, vectors, inverse: bool):
  m = _as_matrix(q)
  if inverse:
    m = jnp.swapaxes(m, -1, -2)
  return jnp.einsum("...ij,...j->...i", m, vectors)


@util.jit
def _from_matrix(m):
  """Shepperd's method: build the quaternion from the largest of the
  diagonal entries and the trace, for accuracy."""
  m00, m11, m22 = m[..., 0, 0], m[..., 1, 1], m[..., 2, 2]
  trace = m00 + m11 + m22
  choice = jnp.argmax(jnp.stack([m00, m11, m22, trace], axis=-1), axis=-1)
  candidates = []
  for i in range(3):
    j, k = (i + 1) % 3, (i + 2) % 3
    q = [None] * 4
    q[i] = 1 - trace + 2 * m[..., i, i]
    q[j] = m[..., j, i] + m[..., i, j]
    q[k] = m[..., k, i] + m[..., i, k]
    q[3] = m[..., k, j] - m[..., j, k]
    candidates.append(jnp.stack(q, axis=-1))
  candidates.append(jnp.stack([m[..., 2, 1] - m[..., 1, 2], m[..., 0, 2] - m[..., 2, 0],
                               m[..., 1, 0] - m[..., 0, 1], 1 + trace], axis=-1))
  q = jnp.select([(choice == c)[..., None] for c in range(4)], candidates)
  return _normalize(q)


@partial(util.jit, static_argnames=('degrees',))
def _from_rotvec(rotvec, degrees: bool):
  if degrees:
    rotvec = jnp.deg2rad(rotvec)
  angle = _norm(rotvec)
  a2 = angle * angle
  # sin(angle/2)/angle, by its Taylor series near 0.
  small = 0.5 - a2 / 48 + a2 * a2 / 3840
  large = jnp.sin(angle / 2) / jnp.where(angle <= 1e-3, 1, angle)
  scale = jnp.where(angle <= 1e-3, small, large)
  return jnp.concatenate([scale[..., None] * rotvec, jnp.cos(angle / 2)[..., None]], axis=-1)


@partial(util.jit, static_argnames=('degrees',))
def _as_rotvec(q, degrees: bool):
  q = jnp.where(q[..., 3:] < 0, -q, q)      # w >= 0: angle in [0, pi]
  angle = 2 * jnp.arctan2(_norm(q[..., :3]), q[..., 3])
  a2 = angle * angle
  small = 2 + a2 / 12 + 7 * a2 * a2 / 2880
  large = angle / jnp.sin(jnp.where(angle <= 1e-3, 1, angle) / 2)
  scale = jnp.where(angle <= 1e-3, small, large)
  if degrees:
    scale = jnp.rad2deg(scale)
  return scale[..., None] * q[..., :3]


@util.jit
def _from_mrp(mrp):
  s = jnp.sum(mrp * mrp, axis=-1, keepdims=True) + 1
  return jnp.concatenate([2 * mrp, 2 - s], axis=-1) / s


@util.jit
def _as_mrp(q):
  sign = jnp.where(q[..., 3:] < 0, -1.0, 1.0)
  return sign * q[..., :3] / (1 + sign * q[..., 3:])


@util.jit
def _canonical(q):
  """``q`` or ``-q``, whichever has ``w > 0`` (ties broken by x, y, z)."""
  neg, zero = q < 0, q == 0
  flip = (neg[..., 3] | (zero[..., 3] & neg[..., 0]) | (zero[..., 3] & zero[..., 0] & neg[..., 1])
          | (zero[..., 3] & zero[..., 0] & zero[..., 1] & neg[..., 2]))
  return jnp.where(flip[..., None], -q, q)


# ------------------------------------------------------------------- Euler
def _parse_seq(seq: str, max_len: int = 3) -> tuple[tuple[int, ...], bool]:
  """``(axes, intrinsic)`` of an Euler sequence: upper case is intrinsic."""
  if not 1 <= len(seq) <= max_len:
    raise ValueError("Expected axis specification to be a non-empty string of upto 3 "
                     f"characters, got {seq}")
  intrinsic = re.match(r"^[XYZ]{1,3}$", seq) is not None
  extrinsic = re.match(r"^[xyz]{1,3}$", seq) is not None
  if not (intrinsic or extrinsic):
    raise ValueError(f"Expected axes from `seq` to be from ['x', 'y', 'z'] or ['X', 'Y', 'Z'], "
                     f"got {seq}")
  if any(seq[i] == seq[i + 1] for i in range(len(seq) - 1)):
    raise ValueError(f"Expected consecutive axes to be different, got {seq}")
  return tuple("xyz".index(c) for c in seq.lower()), intrinsic


def _elementary(axis: int, angle):
  parts = [jnp.zeros_like(angle)] * 3 + [jnp.cos(angle / 2)]
  parts[axis] = jnp.sin(angle / 2)
  return jnp.stack(parts, axis=-1)


@partial(util.jit, static_argnames=('seq', 'degrees'))
def _from_euler(seq: str, angles, degrees: bool):
  axes, intrinsic = _parse_seq(seq)
  angles = jnp.atleast_1d(jnp.asarray(angles))
  if angles.dtype.kind in "iub":
    angles = angles.astype(jnp.result_type(float))
  if degrees:
    angles = jnp.deg2rad(angles)
  if angles.shape[-1] != len(axes):
    raise ValueError(f"Expected last dimension of `angles` to match number of sequence axes "
                     f"specified ({len(axes)} for seq={seq!r}), got shape {angles.shape}")
  q = _elementary(axes[0], angles[..., 0])
  for n, axis in enumerate(axes[1:], 1):
    e = _elementary(axis, angles[..., n])
    q = _compose(q, e) if intrinsic else _compose(e, q)
  return q


@partial(util.jit, static_argnames=('seq', 'degrees'))
def _as_euler(q, seq: str, degrees: bool):
  if len(seq) != 3:
    raise ValueError(f"Expected 3 axes, got {seq}.")
  axes, intrinsic = _parse_seq(seq)
  if intrinsic:
    axes = axes[::-1]
  i, j, k = axes
  symmetric = i == k
  if symmetric:
    k = 3 - i - j
  sign = float((i - j) * (j - k) * (k - i) // 2)
  if symmetric:
    a, b, c, d = q[..., 3], q[..., i], q[..., j], q[..., k] * sign
  else:
    a, b = q[..., 3] - q[..., j], q[..., i] + q[..., k] * sign
    c, d = q[..., j] + q[..., 3], q[..., k] * sign - q[..., i]
  middle = 2 * jnp.arctan2(jnp.hypot(c, d), jnp.hypot(a, b))
  eps = 1e-7
  at_zero = jnp.abs(middle) <= eps
  at_pi = jnp.abs(middle - np.pi) <= eps
  half_sum, half_diff = jnp.arctan2(b, a), jnp.arctan2(d, c)
  # Output slots: the first and third angles swap for intrinsic sequences.
  i_first, i_third = (2, 0) if intrinsic else (0, 2)
  regular = [None, middle, None]
  regular[i_first] = half_sum - half_diff
  regular[i_third] = half_sum + half_diff
  # Gimbal lock: slot 0 takes the combined angle, slot 2 is 0 (SciPy's rule).
  locked = [jnp.where(at_zero, 2 * half_sum, 2 * half_diff * (1 if intrinsic else -1)),
            middle, jnp.zeros_like(middle)]
  degenerate = at_zero | at_pi
  out = [jnp.where(degenerate, lk, rg) for lk, rg in zip(locked, regular)]
  if not symmetric:
    out[i_third] = out[i_third] * sign
    out[1] = out[1] - np.pi / 2
  angles = jnp.stack(out, axis=-1)
  angles = (angles + np.pi) % (2 * np.pi) - np.pi
  return jnp.rad2deg(angles) if degrees else angles


# --------------------------------------------------------------- Rotation
class Rotation(typing.NamedTuple):
  """Rotations in 3 dimensions (``scipy.spatial.transform.Rotation``),
  built with the ``from_*`` class methods and read with the ``as_*``
  methods; ``r1 * r2`` composes (``r2`` applied first)."""
  quat: typing.Any

  @classmethod
  def concatenate(cls, rotations):
    """One stacked rotation of a sequence of rotations."""
    return cls(jnp.concatenate([jnp.atleast_2d(r.quat) for r in rotations]))

  @classmethod
  def from_euler(cls, seq: str, angles, degrees: bool = False):
    """From Euler angles about the axes ``seq`` (``'xyz'`` extrinsic,
    ``'XYZ'`` intrinsic; 1 to 3 axes)."""
    return cls(_from_euler(seq, angles, degrees))

  @classmethod
  def from_matrix(cls, matrix):
    """From rotation matrices ``[..., 3, 3]``."""
    return cls(_from_matrix(jnp.asarray(matrix)))

  @classmethod
  def from_mrp(cls, mrp):
    """From modified Rodrigues parameters ``[..., 3]``."""
    return cls(_from_mrp(jnp.asarray(mrp)))

  @classmethod
  def from_quat(cls, quat):
    """From quaternions ``(x, y, z, w)`` (normalised here)."""
    return cls(_normalize(jnp.asarray(quat)))

  @classmethod
  def from_rotvec(cls, rotvec, degrees: bool = False):
    """From rotation vectors (axis times angle) ``[..., 3]``."""
    return cls(_from_rotvec(jnp.asarray(rotvec), degrees))

  @classmethod
  def identity(cls, num: int | None = None, dtype=float):
    """The identity rotation (single only, as in JAX)."""
    if num is not None:
      raise NotImplementedError("Rotation.identity: only num=None (one rotation) is supported, "
                                "as in JAX; use Rotation.concatenate for several")
    return cls(jnp.array([0.0, 0.0, 0.0, 1.0], dtype=dtype))

  @classmethod
  def random(cls, random_key, num: int | None = None):
    """Not implemented, as in JAX."""
    raise NotImplementedError("Rotation.random is not implemented (as in JAX); draw "
                              "quaternions with jax.random.normal and use Rotation.from_quat")

  def __getitem__(self, indexer):
    if self.single:
      raise TypeError("Single rotation is not subscriptable.")
    return Rotation(self.quat[indexer])

  def __len__(self):
    if self.single:
      raise TypeError("Single rotation has no len().")
    return self.quat.shape[0]

  def __mul__(self, other) -> Rotation:
    """The composition ``self * other`` (``other`` applied first)."""
    return Rotation.from_quat(_compose(self.quat, other.quat))

  def apply(self, vectors, inverse: bool = False):
    """Rotate ``vectors`` (``[3]`` or ``[N, 3]``), or un-rotate with
    ``inverse``."""
    return _apply(self.quat, jnp.asarray(vectors), inverse)

  def as_euler(self, seq: str, degrees: bool = False):
    """Euler angles ``[..., 3]`` about the axes ``seq`` (as ``from_euler``)."""
    return _as_euler(self.quat, seq, degrees)

  def as_matrix(self):
    """Rotation matrices ``[..., 3, 3]``."""
    return _as_matrix(self.quat)

  def as_mrp(self):
    """Modified Rodrigues parameters ``[..., 3]`` (of the rotation by at
    most pi)."""
    return _as_mrp(self.quat)

  def as_rotvec(self, degrees: bool = False):
    """Rotation vectors ``[..., 3]`` (angles in [0, pi])."""
    return _as_rotvec(self.quat, degrees)

  def as_quat(self, canonical: bool = False, scalar_first: bool = False):
    """Quaternions ``(x, y, z, w)`` (``(w, x, y, z)`` with
    ``scalar_first``); ``canonical`` picks the sign with ``w >= 0``."""
    q = _canonical(self.quat) if canonical else self.quat
    return jnp.roll(q, 1, axis=-1) if scalar_first else q

  def inv(self):
    """The inverse rotations."""
    return Rotation(self.quat * jnp.array([-1, -1, -1, 1], dtype=self.quat.dtype))

  def magnitude(self):
    """The rotation angles in radians, in [0, pi]."""
    return _magnitude(self.quat)

  def mean(self, weights=None):
    """The (weighted) mean rotation: the eigenvector of the largest
    eigenvalue of ``sum w q q^T`` (Markley et al. 2007)."""
    q = self.quat
    w = jnp.ones(q.shape[0], dtype=q.dtype) if weights is None else jnp.asarray(weights,
                                                                                dtype=q.dtype)
    if w.ndim != 1:
      raise ValueError(f"Expected `weights` to be 1 dimensional, got shape {w.shape}.")
    if w.shape[0] != len(self):
      raise ValueError("Expected `weights` to have number of values equal to number of "
                       f"rotations, got {w.shape[0]} values and {len(self)} rotations.")
    k = jnp.dot(w[None, :] * q.T, q)
    _, v = jnp.linalg.eigh(k)
    return Rotation(v[:, -1])

  @property
  def single(self) -> bool:
    """Whether this holds one rotation (``quat`` is ``[4]``)."""
    return self.quat.ndim == 1


class Slerp(typing.NamedTuple):
  """Spherical linear interpolation of rotations
  (``scipy.spatial.transform.Slerp``): build with ``Slerp.init(times,
  rotations)``, call with times in ``[times[0], times[-1]]``."""
  times: typing.Any
  timedelta: typing.Any
  rotations: Rotation
  rotvecs: typing.Any

  @classmethod
  def init(cls, times, rotations: Rotation):
    if not isinstance(rotations, Rotation):
      raise TypeError("`rotations` must be a `Rotation` instance.")
    if rotations.single or len(rotations) == 1:
      raise ValueError("`rotations` must be a sequence of at least 2 rotations.")
    times = jnp.asarray(times, dtype=rotations.quat.dtype)
    if times.ndim != 1:
      raise ValueError("Expected times to be specified in a 1 dimensional array, got "
                       f"{times.ndim} dimensions.")
    if times.shape[0] != len(rotations):
      raise ValueError("Expected number of rotations to be equal to number of timestamps "
                       f"given, got {len(rotations)} rotations and {times.shape[0]} "
                       "timestamps.")
    starts = Rotation(rotations.quat[:-1])
    # The rotation from each key to the next, as a rotation vector.
    steps = (starts.inv() * Rotation(rotations.quat[1:])).as_rotvec()
    return cls(times=times, timedelta=jnp.diff(times), rotations=starts, rotvecs=steps)

  def __call__(self, times):
    """The interpolated rotations at ``times`` (a scalar gives a single
    rotation)."""
    t = jnp.asarray(times, dtype=self.times.dtype)
    if t.ndim > 1:
      raise ValueError("`times` must be at most 1-dimensional.")
    single = t.ndim == 0
    t = jnp.atleast_1d(t)
    ind = jnp.maximum(jnp.searchsorted(self.times, t) - 1, 0)
    alpha = (t - self.times[ind]) / self.timedelta[ind]
    result = self.rotations[ind] * Rotation.from_rotvec(self.rotvecs[ind] * alpha[:, None])
    return result[0] if single else result
