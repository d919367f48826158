"""The strong-Wolfe line search of ``jax.scipy.optimize`` (Nocedal & Wright,
algorithms 3.5 and 3.6: bracketing, then zooming by cubic, quadratic or
bisection steps), written as ``lax.while_loop``s so it runs under ``jit``.

States are dicts of arrays; every branch is computed and selected with
``jnp.where``, as traced code must."""
from __future__ import annotations

from typing import NamedTuple

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.autodiff import value_and_grad
from openjax._src.numpy import util
from openjax._src.scipy import jnp


class LineSearchResults(NamedTuple):
  """The line search's outcome: ``a_k`` the step, ``f_k``/``g_k`` the value
  and gradient there; ``status`` 0 passed, 1 zoom failed, 3 too many
  iterations."""
  failed: object
  nit: object
  nfev: object
  ngev: object
  k: object
  a_k: object
  f_k: object
  g_k: object
  status: object


def _dot(a, b):
  return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _select(pred, new: dict, old: dict) -> dict:
  """``old`` with the entries of ``new`` taken where ``pred`` holds."""
  return {**old, **{k: jnp.where(pred, v, old[k]) for k, v in new.items()}}


def _cubic_min(a, fa, fpa, b, fb, c, fc):
  """The minimiser of the cubic through ``(a, fa)`` with slope ``fpa`` and
  through ``(b, fb)``, ``(c, fc)``."""
  db, dc = b - a, c - a
  denom = (db * dc) ** 2 * (db - dc)
  rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
  A = (dc ** 2 * rb - db ** 2 * rc) / denom
  B = (-dc ** 3 * rb + db ** 3 * rc) / denom
  return a + (-B + jnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quad_min(a, fa, fpa, b, fb):
  """The minimiser of the quadratic through ``(a, fa)`` with slope ``fpa``
  and through ``(b, fb)``."""
  db = b - a
  B = (fb - fa - fpa * db) / db ** 2
  return a - fpa / (2.0 * B)


def _zoom(phi_and_grad, sufficient_decrease, curvature, lo, hi, g_0, skip):
  """Shrink the bracket ``[lo, hi]`` (dicts of ``a``, ``phi``, ``dphi``)
  until a step meets both Wolfe conditions (``done``) or the bracket
  collapses or 30 steps pass (``failed``). Does nothing when ``skip``."""
  state = dict(done=jnp.asarray(False), failed=jnp.asarray(False), j=0,
               a_lo=lo["a"], phi_lo=lo["phi"], dphi_lo=lo["dphi"],
               a_hi=hi["a"], phi_hi=hi["phi"], dphi_hi=hi["dphi"],
               a_rec=(lo["a"] + hi["a"]) / 2.0, phi_rec=(lo["phi"] + hi["phi"]) / 2.0,
               a_star=jnp.ones_like(lo["phi"]), phi_star=lo["phi"], dphi_star=lo["dphi"],
               g_star=g_0, nfev=0, ngev=0)

  def body(s):
    span = s["a_hi"] - s["a_lo"]
    a = jnp.minimum(s["a_hi"], s["a_lo"])
    b = jnp.maximum(s["a_hi"], s["a_lo"])
    threshold = 1e-10 if dtypes.finfo(span.dtype).bits >= 64 else 1e-5
    s = {**s, "failed": s["failed"] | (span <= threshold)}
    # Prefer the cubic, then the quadratic interpolant, when they land well
    # inside the bracket; bisect otherwise.
    cubic = _cubic_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
                       s["a_rec"], s["phi_rec"])
    use_cubic = (s["j"] > 0) & (cubic > a + 0.2 * span) & (cubic < b - 0.2 * span)
    quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
    use_quad = ~use_cubic & (quad > a + 0.1 * span) & (quad < b - 0.1 * span)
    a_j = jnp.where(use_cubic, cubic,
                    jnp.where(use_quad, quad, (s["a_lo"] + s["a_hi"]) / 2.0))
    phi_j, dphi_j, g_j = phi_and_grad(a_j)
    phi_j = phi_j.astype(s["phi_lo"].dtype)
    dphi_j = dphi_j.astype(s["dphi_lo"].dtype)
    g_j = g_j.astype(s["g_star"].dtype)
    s = {**s, "nfev": s["nfev"] + 1, "ngev": s["ngev"] + 1}
    hi_to_j = sufficient_decrease(a_j, phi_j) | (phi_j >= s["phi_lo"])
    star_to_j = curvature(dphi_j) & ~hi_to_j
    hi_to_lo = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~hi_to_j & ~star_to_j
    lo_to_j = ~hi_to_j & ~star_to_j
    s = _select(hi_to_j, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"],
                              phi_rec=s["phi_hi"]), s)
    s = _select(star_to_j, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s)
    s = {**s, "done": s["done"] | star_to_j}
    s = _select(hi_to_lo, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                               a_rec=s["a_hi"], phi_rec=s["phi_hi"]), s)
    s = _select(lo_to_j & ~hi_to_lo, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s)
    s = _select(lo_to_j, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s)
    j = s["j"] + 1
    return {**s, "j": j, "failed": s["failed"] | (j >= 30)}
  return lax.while_loop(lambda s: ~s["done"] & ~skip & ~s["failed"], body, state)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
  """A step ``a`` along ``pk`` from ``xk`` meeting the strong Wolfe
  conditions ``f(xk + a pk) <= f(xk) + c1 a f'(0)`` and
  ``|f'(a)| <= c2 |f'(0)|``, by doubling trial steps and zooming."""
  xk, pk = util.promote_dtypes_inexact(xk, pk)

  def phi_and_grad(t):
    t = jnp.asarray(t, dtype=pk.dtype)
    phi, g = value_and_grad(f)(xk + t * pk)
    return phi, jnp.real(_dot(g, pk)), g

  computed = old_fval is None or gfk is None
  if computed:
    phi_0, dphi_0, gfk = phi_and_grad(0)
  else:
    phi_0, dphi_0 = old_fval, jnp.real(_dot(gfk, pk))
  if old_old_fval is not None:
    # The first trial step from the last decrease (N&W eq. 3.60), at most 1.
    candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
    start = jnp.where(candidate > 1, 1.0, candidate)
  else:
    start = 1.0

  def sufficient_decrease(a, phi):
    return phi > phi_0 + c1 * a * dphi_0

  def curvature(dphi):
    return jnp.abs(dphi) <= -c2 * dphi_0

  state = dict(done=jnp.asarray(False), failed=jnp.asarray(False), i=1,
               a_prev=jnp.zeros_like(jnp.real(dphi_0)), phi_prev=phi_0, dphi_prev=dphi_0,
               nfev=1 if computed else 0, ngev=1 if computed else 0,
               a_star=jnp.zeros_like(jnp.real(dphi_0)), phi_star=phi_0, dphi_star=dphi_0,
               g_star=gfk)

  def body(s):
    a_i = jnp.where(s["i"] == 1, start, s["a_prev"] * 2.0).astype(s["a_prev"].dtype)
    phi_i, dphi_i, g_i = phi_and_grad(a_i)
    s = {**s, "nfev": s["nfev"] + 1, "ngev": s["ngev"] + 1}
    zoom_up = sufficient_decrease(a_i, phi_i) | ((phi_i >= s["phi_prev"]) & (s["i"] > 1))
    accept = curvature(dphi_i) & ~zoom_up
    zoom_down = (dphi_i >= 0.0) & ~zoom_up & ~accept
    prev = dict(a=s["a_prev"], phi=s["phi_prev"], dphi=s["dphi_prev"])
    here = dict(a=a_i, phi=phi_i, dphi=dphi_i)
    # One zoom over the bracket that applies: (prev, here) when the step
    # overshot, (here, prev) when the slope turned positive (at most one
    # holds; one loop instead of two keeps the compiled module small).
    lo = {k: jnp.where(zoom_up, prev[k], here[k]) for k in prev}
    hi = {k: jnp.where(zoom_up, here[k], prev[k]) for k in prev}
    zooming = zoom_up | zoom_down
    z = _zoom(phi_and_grad, sufficient_decrease, curvature, lo, hi, gfk, ~zooming)
    s = {**s, "nfev": s["nfev"] + z["nfev"], "ngev": s["ngev"] + z["ngev"]}
    keys = ("a_star", "phi_star", "dphi_star", "g_star")
    s = _select(zooming, {k: z[k] for k in keys}, s)
    s = {**s, "done": s["done"] | zooming, "failed": s["failed"] | (zooming & z["failed"])}
    s = _select(accept, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), s)
    s = {**s, "done": s["done"] | accept}
    return {**s, "i": s["i"] + 1, "a_prev": a_i, "phi_prev": phi_i, "dphi_prev": dphi_i}
  s = lax.while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
  status = jnp.where(s["failed"], 1, jnp.where(s["i"] > maxiter, 3, 0))
  a_k = jnp.asarray(s["a_star"])
  if dtypes.finfo(a_k.dtype).bits != 64:
    # Steps below 1e-8 vanish in single precision; keep the direction.
    a_k = jnp.where(jnp.abs(a_k) < 1e-8, jnp.sign(a_k) * 1e-8, a_k)
  return LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"],
                           ngev=s["ngev"], k=s["i"], a_k=a_k, f_k=s["phi_star"],
                           g_k=s["g_star"], status=status)
