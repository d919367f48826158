"""``jax.scipy.optimize``: ``minimize`` with ``method='BFGS'`` (and JAX's
``'l-bfgs-experimental-do-not-rely-on-this'``) over 1-d parameter vectors,
each a ``lax.while_loop`` of quasi-Newton steps along strong-Wolfe line
searches, so it runs under ``jit`` and ``vmap``. As in JAX, the result is
not meant to be differentiated."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.autodiff import value_and_grad
from openjax._src.scipy import jnp
from openjax._src.scipy.optimize_line_search import line_search

__all__ = ["minimize", "OptimizeResults"]


class OptimizeResults(NamedTuple):
  """The outcome of ``minimize``: ``x`` the solution, ``success`` whether it
  converged, ``status`` (0 converged, 1 maximum iterations, 2 + the line
  search's status when a line search failed; L-BFGS: 2 maxfun, 3 maxgrad,
  4 ftol, 5 line search), ``fun``/``jac`` the value and gradient at ``x``,
  ``hess_inv`` the inverse-Hessian estimate (BFGS only), and the counts of
  function and gradient evaluations and iterations."""
  x: object
  success: object
  status: object
  fun: object
  jac: object
  hess_inv: object
  nfev: object
  njev: object
  nit: object


def _dot(a, b):
  return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _norm(g, ord):  # noqa: A002 - numpy's name
  return jnp.linalg.norm(g, ord=ord)


# -------------------------------------------------------------------- BFGS
def _bfgs(fun, x0, maxiter=None, norm=np.inf, gtol: float = 1e-5,
          line_search_maxiter: int = 10) -> OptimizeResults:
  if maxiter is None:
    maxiter = np.size(x0) * 200
  d = x0.shape[0]
  f_0, g_0 = value_and_grad(fun)(x0)
  state = dict(converged=_norm(g_0, norm) < gtol, failed=jnp.asarray(False), k=0, nfev=1,
               ngev=1, x=x0, f=f_0, g=g_0, H=jnp.eye(d, dtype=x0.dtype),
               f_prev=f_0 + jnp.linalg.norm(g_0) / 2, ls_status=0)

  def keep_going(s):
    return ~s["converged"] & ~s["failed"] & (s["k"] < maxiter)

  def step(s):
    p = -_dot(s["H"], s["g"])
    ls = line_search(fun, s["x"], p, old_fval=s["f"], old_old_fval=s["f_prev"], gfk=s["g"],
                     maxiter=line_search_maxiter)
    step_k = ls.a_k * p
    y = ls.g_k - s["g"]
    rho = jnp.reciprocal(_dot(y, step_k))
    # H+ = (I - rho s y^T) H (I - rho y s^T) + rho s s^T, kept when rho is
    # not finite (no curvature along the step).
    w = jnp.eye(d, dtype=rho.dtype) - rho * step_k[:, None] * y[None, :]
    h_new = (jnp.einsum("ij,jk,lk", w, s["H"], w, precision=lax.Precision.HIGHEST)
             + rho * step_k[:, None] * step_k[None, :])
    h_new = jnp.where(jnp.isfinite(rho), h_new, s["H"])
    return dict(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s["k"] + 1,
                nfev=s["nfev"] + ls.nfev, ngev=s["ngev"] + ls.ngev, x=s["x"] + step_k,
                f=ls.f_k, g=ls.g_k, H=h_new, f_prev=s["f"], ls_status=ls.status)
  s = lax.while_loop(keep_going, step, state)
  status = jnp.where(s["converged"], 0,
                     jnp.where(s["k"] == maxiter, 1,
                               jnp.where(s["failed"], 2 + s["ls_status"], -1)))
  return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=status,
                         fun=s["f"], jac=s["g"], hess_inv=s["H"], nfev=s["nfev"],
                         njev=s["ngev"], nit=s["k"])


# ------------------------------------------------------------------ L-BFGS
def _two_loop(s, maxcor: int):
  """The L-BFGS search direction ``-H g`` from the last ``min(k, maxcor)``
  pairs (oldest first in the histories)."""
  dtype = s["rho"].dtype
  used = jnp.minimum(s["k"], maxcor)
  q = -jnp.conj(s["g"])

  def newest_first(j, carry):
    q, alphas = carry
    i = maxcor - 1 - j
    a_i = s["rho"][i] * jnp.real(_dot(jnp.conj(s["S"][i]), q)).astype(dtype)
    return q - a_i * jnp.conj(s["Y"][i]), alphas.at[i].set(a_i)
  q, alphas = lax.fori_loop(0, used, newest_first, (q, jnp.zeros_like(s["rho"])))
  q = s["gamma"] * q

  def oldest_first(j, q):
    i = maxcor - used + j
    b_i = s["rho"][i] * jnp.real(_dot(s["Y"][i], q)).astype(dtype)
    return q + (alphas[i] - b_i) * s["S"][i]
  return lax.fori_loop(0, used, oldest_first, q)


def _push(history, new):
  return jnp.roll(history, -1, axis=0).at[-1].set(new)


def _lbfgs(fun, x0, maxiter=None, norm=np.inf, maxcor: int = 10,
           ftol: float = 2.220446049250313e-09, gtol: float = 1e-05, maxfun=None,
           maxgrad=None, maxls: int = 20) -> OptimizeResults:
  d = len(x0)
  dtype = dtypes.dtype(x0)
  if maxiter is None and maxfun is None and maxgrad is None:
    maxiter = d * 200
  maxiter = np.inf if maxiter is None else maxiter
  maxfun = np.inf if maxfun is None else maxfun
  maxgrad = np.inf if maxgrad is None else maxgrad
  f_0, g_0 = value_and_grad(fun)(x0)
  state = dict(converged=jnp.asarray(False), failed=jnp.asarray(False), k=0, nfev=1, ngev=1,
               x=x0, f=f_0, g=g_0, S=jnp.zeros((maxcor, d), dtype),
               Y=jnp.zeros((maxcor, d), dtype), rho=jnp.zeros((maxcor,), dtype),
               gamma=jnp.ones((), dtype), status=0)

  def step(s):
    p = _two_loop(s, maxcor)
    ls = line_search(fun, s["x"], p, old_fval=s["f"], gfk=s["g"], maxiter=maxls)
    step_k = jnp.asarray(ls.a_k).astype(p.dtype) * p
    y = ls.g_k - s["g"]
    curv = jnp.real(_dot(y, step_k))
    status = jnp.where(s["f"] - ls.f_k < ftol, 4, 0)
    status = jnp.where(s["ngev"] >= maxgrad, 3, status)
    status = jnp.where(s["nfev"] >= maxfun, 2, status)
    status = jnp.where(s["k"] >= maxiter, 1, status)
    status = jnp.where(ls.failed, 5, status)
    converged = _norm(ls.g_k, norm) < gtol
    return dict(converged=converged, failed=(status > 0) & ~converged, k=s["k"] + 1,
                nfev=s["nfev"] + ls.nfev, ngev=s["ngev"] + ls.ngev,
                x=(s["x"] + step_k).astype(s["x"].dtype), f=ls.f_k.astype(s["f"].dtype),
                g=ls.g_k.astype(s["g"].dtype), S=_push(s["S"], step_k), Y=_push(s["Y"], y),
                rho=_push(s["rho"], jnp.reciprocal(curv).astype(y.dtype)),
                gamma=(curv / jnp.real(_dot(jnp.conj(y), y))).astype(s["g"].dtype),
                status=jnp.where(converged, 0, status))
  s = lax.while_loop(lambda s: ~s["converged"] & ~s["failed"], step, state)
  return OptimizeResults(x=s["x"], success=s["converged"] & ~s["failed"], status=s["status"],
                         fun=s["f"], jac=s["g"], hess_inv=None, nfev=s["nfev"],
                         njev=s["ngev"], nit=s["k"])


def minimize(fun, x0, args: tuple = (), *, method: str, tol=None, options=None):
  """Minimise ``fun(x, *args)`` over the 1-d array ``x`` from ``x0``
  (``scipy.optimize.minimize``). ``method`` is ``'BFGS'`` or
  ``'l-bfgs-experimental-do-not-rely-on-this'``; ``options`` are passed to
  the method (BFGS: ``maxiter``, ``norm``, ``gtol``, ``line_search_maxiter``;
  L-BFGS also ``maxcor``, ``ftol``, ``maxfun``, ``maxgrad``, ``maxls``).
  ``tol`` is accepted and unused, as in JAX. Returns ``OptimizeResults``."""
  del tol
  options = {} if options is None else dict(options)
  if not isinstance(args, tuple):
    raise TypeError(f"args argument to jax.scipy.optimize.minimize must be a tuple, got {args}")

  def fun_with_args(x):
    return fun(x, *args)
  x0 = jnp.asarray(x0)
  if method.lower() == "bfgs":
    return _bfgs(fun_with_args, x0, **options)
  if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
    return _lbfgs(fun_with_args, x0, **options)
  raise ValueError(f"Method {method} not recognized")
