"""``check_grads``: compare JVPs and VJPs with finite differences, to any order
(``jax.test_util.check_grads``)."""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.api.autodiff import jvp, vjp
from openjax._src.runtime.transfer import device_get

EPS = 1e-4
_DEFAULT_TOL = {np.dtype(np.float16): 1e-1, dtypes.bfloat16: 1e-1,
                np.dtype(np.float32): 1e-2, np.dtype(np.float64): 1e-5,
                np.dtype(np.complex64): 1e-2, np.dtype(np.complex128): 1e-5}


def _tol(tol, dtype):
  if tol is not None:
    return tol
  return _DEFAULT_TOL.get(np.dtype(dtype), 1e-5)


def _rand_like(rng, x):
  x = np.asarray(device_get(x))
  if dtypes.kind(x.dtype) == "c":
    return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
  return rng.standard_normal(x.shape).astype(x.dtype)


def _add(xs, ys, scale=1.0):
  return tree_util.tree_map(lambda x, y: np.asarray(device_get(x)) + scale * np.asarray(y), xs, ys)


def _inner(xs, ys) -> complex:
  total = 0.0
  for x, y in zip(tree_util.tree_leaves(xs), tree_util.tree_leaves(ys)):
    total += np.vdot(np.asarray(device_get(x)).astype(np.complex128).ravel(),
                     np.asarray(device_get(y)).astype(np.complex128).ravel())
  return total


def _assert_close(a, b, atol, rtol, what):
  for x, y in zip(tree_util.tree_leaves(a), tree_util.tree_leaves(b)):
    x, y = np.asarray(device_get(x)), np.asarray(device_get(y))
    np.testing.assert_allclose(x.astype(np.complex128), y.astype(np.complex128), atol=atol,
                               rtol=rtol, err_msg=what)


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float):
  """Central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``."""
  plus = f(*_add(list(primals), list(tangents), eps))
  minus = f(*_add(list(primals), list(tangents), -eps))
  return tree_util.tree_map(
      lambda p, m: (np.asarray(device_get(p)) - np.asarray(device_get(m))) / (2 * eps),
      plus, minus)


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  rng = np.random.default_rng(0)
  tangents = [_rand_like(rng, a) for a in args]
  _, t_out = f_jvp(args, tangents)
  expected = numerical_jvp(f, args, tangents, eps)
  dt = np.asarray(device_get(tree_util.tree_leaves(t_out)[0])).dtype
  _assert_close(t_out, expected, _tol(atol, dt), _tol(rtol, dt), f"JVP {err_msg}")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
  """``<vjp(ct), t> == <ct, jvp(t)>`` with the JVP taken numerically."""
  rng = np.random.default_rng(1)
  out, pullback = f_vjp(*args)
  cts = tree_util.tree_map(lambda o: _rand_like(rng, o), out)
  cts_in = pullback(cts)
  tangents = [_rand_like(rng, a) for a in args]
  ip_rev = _inner(tangents, cts_in)
  ip_fwd = _inner(numerical_jvp(f, args, tangents, eps), cts)
  dt = np.asarray(device_get(tree_util.tree_leaves(out)[0])).dtype
  np.testing.assert_allclose(ip_rev, ip_fwd, atol=_tol(atol, dt), rtol=_tol(rtol, dt),
                             err_msg=f"VJP {err_msg}")


def check_grads(f: Callable, args: Sequence, order: int, modes=("fwd", "rev"),
                atol=None, rtol=None, eps=None) -> None:
  """Check the derivatives of ``f`` at ``args`` against finite differences,
  in forward and/or reverse mode, up to ``order``."""
  args = tuple(args)
  eps = eps or EPS

  def _check(f, args, order):
    if "fwd" in modes:
      check_jvp(f, lambda p, t: jvp(f, p, t), args, atol, rtol, eps, f"order {order}")
      if order > 1:
        rng = np.random.default_rng(order)
        tangents = [_rand_like(rng, a) for a in args]
        _check(lambda *p: jvp(f, p, tangents)[1], args, order - 1)
    if "rev" in modes:
      check_vjp(f, lambda *p: vjp(f, *p), args, atol, rtol, eps, f"order {order}")
      if order > 1:
        out, _ = vjp(f, *args)
        rng = np.random.default_rng(order + 10)
        cts = tree_util.tree_map(lambda o: _rand_like(rng, o), out)
        _check(lambda *p: vjp(f, *p)[1](cts), args, order - 1)

  _check(f, args, order)


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]
