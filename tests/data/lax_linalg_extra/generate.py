"""Generates tests/data/lax_linalg_extra/jax_0_10_2.npz with JAX 0.10.2 (run in a separate venv with JAX, from this folder); never imported by the tests."""
import numpy as np, jax
jax.config.update("jax_enable_x64", True)
from jax.lax import linalg as L
rng = np.random.default_rng(17)
out = {}
for name, dt in [("f32", np.float32), ("f64", np.float64), ("c64", np.complex64)]:
  x = rng.standard_normal((6, 4))
  if dt == np.complex64:
    x = x + 1j * rng.standard_normal((6, 4))
  x = x.astype(dt)
  u, h, k, c = L.qdwh(x)
  out[f"qdwh_{name}_x"] = x; out[f"qdwh_{name}_u"] = np.asarray(u); out[f"qdwh_{name}_h"] = np.asarray(h)
  out[f"qdwh_{name}_iters"] = np.asarray(k); out[f"qdwh_{name}_conv"] = np.asarray(c)
  u, h, k, c = L.qdwh(x, max_iterations=2)
  out[f"qdwh2_{name}_iters"] = np.asarray(k); out[f"qdwh2_{name}_conv"] = np.asarray(c)
x = rng.standard_normal((5, 5))
w, vl, vr = L.eig(x)
out["eig_x"] = x; out["eig_w"] = np.asarray(w); out["eig_vr"] = np.asarray(vr); out["eig_vl"] = np.asarray(vl)
g = jax.grad(lambda a: L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0].real.sum() + 0.3 * L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0].imag.sum())(x)
out["eig_grad"] = np.asarray(g)
_, t = jax.jvp(lambda a: L.eig(a, enable_eigvec_derivs=True)[2], (x,), (np.ones_like(x),))
out["eig_vr_jvp"] = np.asarray(t)
_, t = jax.jvp(lambda a: L.eig(a, enable_eigvec_derivs=True)[1], (x,), (np.ones_like(x),))
out["eig_vl_jvp"] = np.asarray(t)
dl, d, du = rng.standard_normal((3, 6)); b = rng.standard_normal((6, 1)); d[0] = 0.0; dl[1] = 0.0
out["gtsv_pert_args"] = np.stack([dl, d, du]); out["gtsv_pert_b"] = b
sing = np.stack([dl, np.zeros(6), du])
out["gtsv_sing_pert"] = np.asarray(L.tridiagonal_solve(*sing, b, perturb_singular=True))
out["gtsv_sing"] = np.asarray(L.tridiagonal_solve(*sing, b))
# perturb_singular=True on near-singular and singular batches (JAX's CPU kernel).
for name, dt in [("f64", np.float64), ("f32", np.float32), ("c128", np.complex128)]:
  shape = (6, 7)
  diags = rng.standard_normal((3, *shape))
  if dt == np.complex128:
    diags = diags + 1j * rng.standard_normal((3, *shape))
  zero = rng.random((3, *shape)) < 0.35
  diags = np.where(zero, 0, diags).astype(dt)
  diags[1, 0] = 0                     # one all-zero diagonal
  diags[1, 1, 2] = 1e-30 if dt != np.float32 else 1e-20
  rhs = rng.standard_normal((*shape, 2)).astype(dt)
  out[f"pert_{name}_diags"] = diags; out[f"pert_{name}_b"] = rhs
  out[f"pert_{name}_x"] = np.asarray(L.tridiagonal_solve(*diags, rhs, perturb_singular=True))
one = np.array([[0.0], [2.0]]); b1 = np.array([[[3.0]], [[4.0]]])
out["pert_m1_diags"] = np.stack([one, one, one]); out["pert_m1_b"] = b1
out["pert_m1_x"] = np.asarray(L.tridiagonal_solve(one, one, one, b1, perturb_singular=True))
np.savez("jax_0_10_2.npz", **out)
for k, v in out.items():
  if v.size < 8: print(k, v)
print(out["gtsv_sing_pert"].ravel(), out["eig_vl"])
