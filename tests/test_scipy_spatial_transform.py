"""``jax.scipy.spatial.transform.Rotation`` and ``Slerp`` against SciPy's:
every conversion both ways (quaternions, matrices, rotation vectors, MRPs,
Euler angles for all twelve sequences, extrinsic and intrinsic, including
gimbal lock), composition, application, inversion, means, interpolation,
the NamedTuple pytree under jit/vmap, and the errors."""
import itertools
import warnings

import numpy as np
import pytest
from scipy.spatial.transform import Rotation as ScipyRotation
from scipy.spatial.transform import Slerp as ScipySlerp

import openjax as jax
from openjax.scipy.spatial.transform import Rotation, Slerp


def _quats(n=6, seed=0):
  return np.random.default_rng(seed).standard_normal((n, 4))


def _close(got, want, tol=1e-10):
  np.testing.assert_allclose(np.asarray(got), want, atol=tol, rtol=tol)


def _angles_close(got, want, tol=1e-9):
  # Angles at +-pi may come out on either side.
  diff = (np.asarray(got) - want + np.pi) % (2 * np.pi) - np.pi
  assert np.abs(diff).max() < tol


def test_conversions_round_trip():
  q = _quats()
  ref = ScipyRotation.from_quat(q)
  with jax.enable_x64():
    r = Rotation.from_quat(q)
    _close(r.as_quat(), ref.as_quat())
    _close(r.as_quat(canonical=True), ref.as_quat(canonical=True))
    _close(r.as_quat(scalar_first=True), ref.as_quat(scalar_first=True))
    _close(r.as_matrix(), ref.as_matrix())
    _close(r.as_rotvec(), ref.as_rotvec())
    _close(r.as_rotvec(degrees=True), ref.as_rotvec(degrees=True), 1e-8)
    _close(r.as_mrp(), ref.as_mrp())
    _close(r.magnitude(), ref.magnitude())
    canon = ref.as_quat(canonical=True)
    _close(Rotation.from_matrix(ref.as_matrix()).as_quat(canonical=True), canon)
    _close(Rotation.from_rotvec(ref.as_rotvec()).as_quat(canonical=True), canon)
    _close(Rotation.from_rotvec(ref.as_rotvec(degrees=True), degrees=True)
           .as_quat(canonical=True), canon)
    _close(Rotation.from_mrp(ref.as_mrp()).as_quat(canonical=True), canon)
    tiny = np.array([[1e-5, -2e-5, 3e-6], [0.0, 0.0, 0.0]])   # the small-angle series
    _close(Rotation.from_rotvec(tiny).as_quat(), ScipyRotation.from_rotvec(tiny).as_quat())
    _close(Rotation.from_rotvec(tiny).as_rotvec(), tiny)


SEQUENCES = ["".join(p) for p in itertools.permutations("xyz")] + \
    ["xyx", "xzx", "yxy", "yzy", "zxz", "zyz"]


@pytest.mark.parametrize("seq", SEQUENCES + [s.upper() for s in SEQUENCES])
def test_euler(seq):
  q = _quats(8)
  ref = ScipyRotation.from_quat(q)
  with jax.enable_x64():
    _angles_close(Rotation.from_quat(q).as_euler(seq), ref.as_euler(seq))
    _angles_close(Rotation.from_quat(q).as_euler(seq, degrees=True) * np.pi / 180,
                  ref.as_euler(seq))
    angles = ref.as_euler(seq)
    _close(Rotation.from_euler(seq, angles).as_quat(canonical=True),
           ScipyRotation.from_euler(seq, angles).as_quat(canonical=True))
    _close(Rotation.from_euler(seq, np.rad2deg(angles), degrees=True).as_quat(canonical=True),
           ScipyRotation.from_euler(seq, angles).as_quat(canonical=True))
    # Gimbal lock: the middle angle at its limits.
    symmetric = seq[0].lower() == seq[2].lower()
    for middle in ((0.0, np.pi) if symmetric else (np.pi / 2, -np.pi / 2)):
      locked = np.array([[0.4, middle, 0.3]])
      with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # SciPy warns about gimbal lock
        want = ScipyRotation.from_euler(seq, locked).as_euler(seq)
      _angles_close(Rotation.from_euler(seq, locked).as_euler(seq), want, 1e-7)


def test_shorter_euler_sequences():
  with jax.enable_x64():
    for seq, angles in (("x", [0.3]), ("ZY", [0.3, -1.2]), ("xz", [[0.1, 0.2], [0.3, 0.4]])):
      _close(Rotation.from_euler(seq, angles).as_quat(),
             ScipyRotation.from_euler(seq, angles).as_quat())


def test_composition_application_inverse_mean():
  q, v = _quats(5), np.random.default_rng(1).standard_normal((5, 3))
  r, ref = Rotation.from_quat(q), ScipyRotation.from_quat(q)
  with jax.enable_x64():
    r = Rotation.from_quat(q)
    _close((r * r[::-1]).as_quat(canonical=True), (ref * ref[::-1]).as_quat(canonical=True))
    _close((r[0] * r).as_quat(canonical=True), (ref[0] * ref).as_quat(canonical=True))
    _close(r.apply(v), ref.apply(v))
    _close(r.apply(v, inverse=True), ref.apply(v, inverse=True))
    _close(r[2].apply(v), ref[2].apply(v))
    _close(r.apply(v[0]), ref.apply(v[0]))
    _close(r.inv().as_quat(canonical=True), ref.inv().as_quat(canonical=True))
    _close((r * r.inv()).magnitude(), np.zeros(5))
    _close(r.mean().as_quat(canonical=True), ref.mean().as_quat(canonical=True), 1e-8)
    w = np.arange(1.0, 6.0)
    _close(r.mean(w).as_quat(canonical=True), ref.mean(w).as_quat(canonical=True), 1e-8)
    _close(Rotation.concatenate([r, r[0]]).as_quat(),
           ScipyRotation.concatenate([ref, ref[0]]).as_quat())
    _close(Rotation.identity().as_quat(), ScipyRotation.identity().as_quat())
  assert len(r) == 5 and not r.single and r[0].single


def test_slerp():
  q = _quats(4, seed=2)
  times = np.array([0.0, 1.0, 2.5, 4.0])
  ref = ScipySlerp(times, ScipyRotation.from_quat(q))
  with jax.enable_x64():
    slerp = Slerp.init(times, Rotation.from_quat(q))
    t = np.array([0.0, 0.3, 1.0, 2.2, 3.9, 4.0])
    _close(slerp(t).as_quat(canonical=True), ref(t).as_quat(canonical=True))
    single = slerp(1.7)
    assert single.single
    _close(single.as_quat(canonical=True), ref(1.7).as_quat(canonical=True))


def test_pytree_jit_vmap_grad():
  q = _quats(4).astype(np.float32)
  r = Rotation.from_quat(q)
  np.testing.assert_allclose(np.asarray(jax.jit(lambda rot: rot.as_matrix())(r)),
                             ScipyRotation.from_quat(q).as_matrix(), atol=1e-5)
  np.testing.assert_allclose(np.asarray(jax.vmap(lambda x: Rotation.from_quat(x).as_rotvec())(q)),
                             ScipyRotation.from_quat(q).as_rotvec(), atol=1e-5)
  slerp = Slerp.init(np.arange(4.0, dtype=np.float32), r)
  out = jax.jit(lambda s, t: s(t).as_quat())(slerp, np.array([0.5, 2.5], np.float32))
  assert out.shape == (2, 4)
  with jax.enable_x64():
    v = np.random.default_rng(3).standard_normal(3)
    jax.test_util.check_grads(lambda x: Rotation.from_quat(x).apply(v), (q[0].astype(float),),
                              order=1, atol=1e-6, rtol=1e-6)


def test_errors():
  r = Rotation.from_quat(_quats(3))
  with pytest.raises(ValueError, match="Expected axes"):
    Rotation.from_euler("xYz", [0.1, 0.2, 0.3])
  with pytest.raises(ValueError, match="consecutive axes"):
    Rotation.from_euler("xxz", [0.1, 0.2, 0.3])
  with pytest.raises(ValueError, match="Expected 3 axes"):
    r.as_euler("xy")
  with pytest.raises(TypeError, match="not subscriptable"):
    r[0][0]
  with pytest.raises(TypeError, match="no len"):
    len(r[0])
  with pytest.raises(NotImplementedError):
    Rotation.random(None)
  with pytest.raises(ValueError, match="at least 2 rotations"):
    Slerp.init(np.zeros(1), r[:1])
  with pytest.raises(ValueError, match="number of timestamps"):
    Slerp.init(np.zeros(2), r)
  with pytest.raises(ValueError, match="weights"):
    r.mean(np.ones(2))
