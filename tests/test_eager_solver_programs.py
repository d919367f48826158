"""Eager-speed formulations of the Schur-form functions, the Krylov solvers
and the custom solves (issue 14's eager sweep, session 13): the same results
as SciPy/NumPy, from programs with fewer steps."""
import numpy as np
import pytest
import scipy.linalg

import openjax as jax
from openjax import lax
from openjax._src.api import transform_cache
from openjax._src.lax import extra
from openjax._src.runtime import executable
from openjax._src.scipy import linalg_schur, sparse_linalg
from openjax.scipy import linalg as jsl


def _with_complex_pairs(n, seed):
  # Real matrices with complex eigenvalue pairs: 2x2 blocks in the real Schur
  # form, at the bottom-right corner too (the loop's first trip).
  rng = np.random.default_rng(seed)
  q, _ = np.linalg.qr(rng.standard_normal((n, n)))
  blocks = np.zeros((n, n))
  i = 0
  while i < n:
    if i + 1 < n and (i // 2) % 2 == 0:
      w, s = rng.uniform(0.5, 2), rng.uniform(-1, 1)
      blocks[i:i + 2, i:i + 2] = [[s, w], [-w, s]]
      i += 2
    else:
      blocks[i, i] = rng.uniform(-2, 2)
      i += 1
  return q @ (blocks + np.triu(rng.standard_normal((n, n)), 2)) @ q.T


@pytest.mark.parametrize("n", [2, 3, 5, 8])
def test_rsf2csf_matches_scipy(n):
  with jax.enable_x64():
    a = _with_complex_pairs(n, n)
    t, z = scipy.linalg.schur(a)
    t_ref, z_ref = scipy.linalg.rsf2csf(t, z)
    t_out, z_out = jsl.rsf2csf(t, z)
    np.testing.assert_allclose(np.asarray(t_out), t_ref, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(np.asarray(z_out), z_ref, rtol=1e-10, atol=1e-12)
    assert np.all(np.tril(np.asarray(t_out), -1) == 0)


def test_rsf2csf_loop_steps_do_not_wrap_starts():
  # The starts m - 1 and m are never negative: the loop body has no
  # lt/add/select_n wrapping per traced start and no scatter for the zeroed
  # subdiagonal entry (half of a trip's steps before).
  t, z = scipy.linalg.schur(_with_complex_pairs(6, 0).astype(np.float32))
  text = str(jax.make_jaxpr(jsl.rsf2csf)(t, z))
  assert " lt " not in text and "scatter" not in text
  assert text.count("select_n") <= 4
  assert text.count(" = sub ") <= 8   # m - 1 once a trip (it was six times)


def test_arnoldi_and_givens_steps_index_without_wrapping():
  # Loop counters index the basis and the rows: dynamic slices without the
  # lt/add/select_n wrapping of negative starts, no scatter per entry.
  a = np.eye(4, dtype=np.float32) * 2
  basis = np.ones((4, 3), np.float32)
  h = np.zeros((2, 3), np.float32)

  def arnoldi(k, basis, h):
    return sparse_linalg._arnoldi_step(k, lambda v: jax.numpy.dot(a, v), lambda v: v, basis, h)
  for fn, args in ((arnoldi, (np.int32(0), basis, h)),
                   (sparse_linalg._rotate, (np.arange(3.0, dtype=np.float32), np.int32(1),
                                   np.float32(0.6), np.float32(0.8)))):
    text = str(jax.make_jaxpr(fn)(*args))
    assert " lt " not in text and "scatter" not in text, text


@pytest.mark.parametrize("method", ["incremental", "batched"])
@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
def test_gmres_matches_a_direct_solve(method, dtype):
  rng = np.random.default_rng(3)
  a = rng.standard_normal((6, 6)) + 5 * np.eye(6)
  b = rng.standard_normal(6)
  if dtype == np.complex64:
    a = a + 0.5j * rng.standard_normal((6, 6))
    b = b + 1j * rng.standard_normal(6)
  a, b = a.astype(dtype), b.astype(dtype)
  expected = np.linalg.solve(a.astype(np.complex128), b)
  for restart in (2, 3, 6):
    x, info = sparse_linalg.gmres(a, b, tol=1e-6, restart=restart, solve_method=method)
    np.testing.assert_allclose(np.asarray(x), expected, rtol=2e-4, atol=2e-4)
    assert int(info) == 0
  # A pytree right-hand side through a function operator.
  x, _ = sparse_linalg.gmres(lambda t: {"u": a @ t["u"]}, {"u": b}, tol=1e-6, restart=3,
                             solve_method=method)
  np.testing.assert_allclose(np.asarray(x["u"]), expected, rtol=2e-4, atol=2e-4)


def test_eager_qdwh_runs_as_a_library_program(monkeypatch):
  # An eager qdwh runs its program on the host kernels (LAPACK QR/Cholesky/
  # trsm): compiled, a 41 x 24 matrix took ~3.7 ms against ~0.8 ms.

  def refuse(*args, **kwargs):
    raise AssertionError("an eager qdwh call ran a compiled executable")
  monkeypatch.setattr(executable.Executable, "execute", refuse)
  rng = np.random.default_rng(4)
  x = (rng.standard_normal((41, 24)) + 2.0 * np.eye(41, 24)).astype(np.float32)
  with jax.config.override("openjax_executor", "iree"):   # the default outside tests
    u, h, iters, converged = lax.linalg.qdwh(x)
  u_ref, h_ref = scipy.linalg.polar(x.astype(np.float64))
  np.testing.assert_allclose(np.asarray(u), u_ref, atol=2e-5)
  np.testing.assert_allclose(np.asarray(h), h_ref, atol=5e-5)
  assert bool(converged) and 0 < int(iters) <= 10


def test_scatter_apply_traces_its_function_once_per_closure_values(monkeypatch):
  traces = []
  real = extra.trace_to_jaxpr
  monkeypatch.setattr(extra, "trace_to_jaxpr", lambda *a, **k: traces.append(1) or real(*a, **k))
  extra._apply_jaxprs.clear()
  dn = lax.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
  idx = np.array([[1], [3], [3]], np.int32)
  x = np.arange(5, dtype=np.float32) - 1.5

  def run(x, k):
    return lax.scatter_apply(x, idx, lambda v: v * v + k, dn, update_shape=(3,))
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(run(x, 1.0)),
                                  [-1.5, 1.25, 0.5, (1.5 ** 2 + 1) ** 2 + 1, 2.5])
  assert len(traces) == 1
  np.testing.assert_array_equal(np.asarray(run(x, 2.0)),   # other closed-over value
                                [-1.5, 2.25, 0.5, (1.5 ** 2 + 2) ** 2 + 2, 2.5])
  xi = np.arange(5, dtype=np.int32)
  np.testing.assert_array_equal(np.asarray(run(xi, 1)), [0, 2, 2, 101, 4])
  assert len(traces) == 3


@pytest.mark.parametrize("scale", [0.01, 1.0, 30.0])
def test_expm_squarings_by_select(scale):
  # The squaring loop selects instead of a cond per trip: one cond left (the
  # Padé degree's switch), the same values as SciPy, reverse-differentiable.
  a = (scale * np.random.default_rng(5).standard_normal((4, 4))).astype(np.float32)
  text = str(jax.make_jaxpr(jsl.expm)(a))
  assert text.count("cond[") == 1 and text.count("scan[") == 1
  np.testing.assert_allclose(np.asarray(jsl.expm(a)), scipy.linalg.expm(a.astype(np.float64)),
                             rtol=2e-5 * max(1.0, scale), atol=1e-5)
  grad = jax.grad(lambda m: jsl.expm(m).sum())(a)
  assert np.all(np.isfinite(np.asarray(grad)))
  assert np.isnan(np.asarray(jsl.expm(1e6 * a, max_squarings=4))).all()


def test_funm_runs_as_one_cached_program(capsys):
  transform_cache.clear()
  a = (0.5 * np.random.default_rng(6).standard_normal((5, 5))).astype(np.float32)
  expected = scipy.linalg.expm(a.astype(np.float64))
  for _ in range(3):   # a fresh lambda each call: keyed by what it computes
    np.testing.assert_allclose(np.asarray(jsl.funm(a, lambda v: jax.numpy.exp(v))).real,
                               expected, rtol=2e-4, atol=2e-4)
  programs = [value for key, (value, _) in transform_cache._programs._entries.items()
              if key[0] == ("scipy.linalg.funm", True)]
  assert len(programs) == 1 and type(programs[0]) is not object   # built, then reused
  f, err = jsl.funm(a, jax.numpy.exp, disp=False)
  np.testing.assert_allclose(np.asarray(f).real, expected, rtol=2e-4, atol=2e-4)
  assert 0 < float(err) <= 1

  def noisy(v):   # an effect: traced (and printed) on every call, as in JAX
    print("traced")
    return jax.numpy.exp(v)
  for _ in range(2):
    jsl.funm(a, noisy)
  assert capsys.readouterr().out.count("traced") == 2
  transform_cache.clear()


def test_parlett_loop_computes_the_nonzero_mask_once():
  # den != 0 does not change between trips: computed once, not in the body.
  t = np.triu(np.random.default_rng(7).standard_normal((4, 4))).astype(np.complex64)
  text = str(jax.make_jaxpr(linalg_schur._parlett)(t, t))
  body = text[text.index("scan["):text.index("length=")]
  assert " ne " not in body and text.count(" ne ") == 1
  f = np.asarray(linalg_schur._parlett(np.diag(np.exp(np.diag(t))).astype(np.complex64), t)[0])
  np.testing.assert_allclose(f, scipy.linalg.expm(t.astype(np.complex128)), rtol=1e-4, atol=1e-5)
