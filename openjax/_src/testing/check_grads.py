"""``check_grads``: compare JVPs and VJPs with central finite differences, to
any order (``jax.test_util.check_grads``), with JAX's algorithm, random
directions (``np.random.RandomState(0)``) and tolerances, so a check passes
or fails here exactly when it does in JAX.

Forward mode checks ``jvp(f)`` against finite differences, then (order > 1)
checks ``jvp(f)`` itself as a function of (primals, tangents). Reverse mode
checks ``<vjp(ct), t> == <ct, jvp(t)>`` in a random direction, then (order > 1)
checks ``x -> vjp(f, x)(f(x))``.
"""
from __future__ import annotations

import functools
import operator
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import config, dtypes, tree_util
from openjax._src.api.autodiff import jvp, vjp

EPS = 1e-4

_DEFAULT_TOLERANCE = {
    dtypes.float0: 0, np.dtype(np.bool_): 0,
    np.dtype(np.int8): 0, np.dtype(np.int16): 0, np.dtype(np.int32): 0,
    np.dtype(np.int64): 0, np.dtype(np.uint8): 0, np.dtype(np.uint16): 0,
    np.dtype(np.uint32): 0, np.dtype(np.uint64): 0,
    np.dtype(dtypes.bfloat16): 1e-2, np.dtype(np.float16): 1e-3,
    np.dtype(np.float32): 1e-6, np.dtype(np.float64): 1e-15,
    np.dtype(np.complex64): 1e-6, np.dtype(np.complex128): 1e-15,
}

DEFAULT_GRADIENT_TOLERANCE = {
    np.dtype(dtypes.bfloat16): 1e-1, np.dtype(np.float16): 1e-2,
    np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3, np.dtype(np.complex128): 1e-5,
}


def _dtype(x: Any) -> np.dtype:
  if hasattr(x, "dtype"):
    return np.dtype(x.dtype)
  if type(x) in dtypes.python_scalar_dtypes:
    return np.dtype(dtypes.python_scalar_dtypes[type(x)])
  return np.asarray(x).dtype


def _is_python_scalar(x) -> bool:
  return not isinstance(x, np.generic) and isinstance(x, (bool, int, float, complex))


def _tolerance(dtype, tol) -> float:
  if tol is None:
    tol = {}
  if not isinstance(tol, dict):
    return tol
  tol = {np.dtype(k): v for k, v in tol.items()}
  dtype = dtypes.canonicalize_dtype(np.dtype(dtype))
  return tol.get(dtype, _DEFAULT_TOLERANCE.get(dtype, 0))


def _assert_close_leaf(a, b, atol=None, rtol=None, err_msg=""):
  a, b = np.asarray(a), np.asarray(b)
  assert a.shape == b.shape, (a.shape, b.shape)
  if a.dtype == b.dtype == dtypes.float0:
    np.testing.assert_array_equal(a, b, err_msg=err_msg)
    return
  at = max(_tolerance(a.dtype, atol), _tolerance(b.dtype, atol)) * a.size
  rt = max(_tolerance(a.dtype, rtol), _tolerance(b.dtype, rtol)) * b.size
  upcast = lambda x: x.astype(np.float32) if x.dtype in dtypes.custom_float_dtypes else x
  kw = {}
  if at:
    kw["atol"] = at
  if rt:
    kw["rtol"] = rt
  with np.errstate(invalid="ignore"):
    np.testing.assert_allclose(upcast(a), upcast(b), err_msg=err_msg, **kw)


def check_close(xs, ys, atol=None, rtol=None, err_msg="") -> None:
  tree_util.tree_map(functools.partial(_assert_close_leaf, atol=atol, rtol=rtol,
                                       err_msg=err_msg), xs, ys)


def _check_dtypes_match(xs, ys) -> None:
  def check(x, y):
    if config.config.read("jax_enable_x64"):
      assert _dtype(x) == _dtype(y), (_dtype(x), _dtype(y))
    else:
      assert (dtypes.canonicalize_dtype(_dtype(x)) == dtypes.canonicalize_dtype(_dtype(y))), \
          (_dtype(x), _dtype(y))
  tree_util.tree_map(check, xs, ys)


def _inner_prod(xs, ys):
  def contract(x, y):
    return np.real(np.dot(np.conj(np.asarray(x)).reshape(-1), np.asarray(y).reshape(-1)))
  return tree_util.tree_reduce(np.add, tree_util.tree_map(contract, xs, ys))


def _typed(f):
  def wrapped(*args):
    result = np.array(f(*(np.asarray(a) if hasattr(a, "dtype") else a for a in args)),
                      dtype=_dtype(args[0]))
    return result.item() if all(_is_python_scalar(a) for a in args) else result
  return wrapped


_add = functools.partial(tree_util.tree_map, _typed(operator.add))
_sub = functools.partial(tree_util.tree_map, _typed(operator.sub))
_conj = functools.partial(tree_util.tree_map, _typed(np.conj))


def _safe_sub(xs, ys):
  def sub(x, y):   # inf - inf == 0
    dt = _dtype(x)
    x, y = np.asarray(x), np.asarray(y)
    with np.errstate(invalid="ignore"):
      return np.where(np.equal(x, y), np.array(0, dt), np.subtract(x, y, dtype=dt))
  return tree_util.tree_map(sub, xs, ys)


def _scalar_mul(xs, a):
  def mul(x):
    dt = _dtype(x)
    result = np.multiply(np.asarray(x), np.array(a, dtype=dt), dtype=dt)
    return result.item() if _is_python_scalar(x) else result
  return tree_util.tree_map(mul, xs)


def rand_like(rng, x):
  shape, dt = np.shape(x), _dtype(x)
  randn = lambda: np.asarray(rng.randn(*shape), dtype=dt)
  result = randn() + dt.type(1.0j) * randn() if dtypes.kind(dt) == "c" else randn()
  return result.item() if _is_python_scalar(x) else result


def numerical_jvp(f: Callable, primals, tangents, eps: float = EPS):
  """Central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps``."""
  delta = _scalar_mul(tangents, eps)
  f_pos = f(*_add(primals, delta))
  f_neg = f(*_sub(primals, delta))
  return _scalar_mul(_safe_sub(f_pos, f_neg), 0.5 / eps)


def _merge_tolerance(tol, default):
  if tol is None:
    return default
  if not isinstance(tol, dict):
    return tol
  out = dict(default)
  out.update({np.dtype(k): v for k, v in tol.items()})
  return out


def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg="") -> None:
  """Check ``f_jvp(args, tangents)`` (typically ``partial(jax.jvp, f)``)
  against finite differences in one random direction."""
  atol = _merge_tolerance(atol, DEFAULT_GRADIENT_TOLERANCE)
  rtol = _merge_tolerance(rtol, DEFAULT_GRADIENT_TOLERANCE)
  rng = np.random.RandomState(0)
  tangent = tree_util.tree_map(functools.partial(rand_like, rng), args)
  v_out, t_out = f_jvp(args, tangent)
  _check_dtypes_match(v_out, t_out)
  v_expected = f(*args)
  _check_dtypes_match(v_out, v_expected)
  t_expected = numerical_jvp(f, args, tangent, eps=eps)
  check_close(v_out, v_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} primal" if err_msg else "primal")
  check_close(t_out, t_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} tangent" if err_msg else "tangent")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg="") -> None:
  """Check ``f_vjp(*args)`` (typically ``partial(jax.vjp, f)``): the
  cotangent projection ``<t, vjp(ct)>`` against ``<jvp_numerical(t), ct>``."""
  atol = _merge_tolerance(atol, DEFAULT_GRADIENT_TOLERANCE)
  rtol = _merge_tolerance(rtol, DEFAULT_GRADIENT_TOLERANCE)
  rand = functools.partial(rand_like, np.random.RandomState(0))
  v_out, vjpfun = f_vjp(*args)
  v_expected = f(*args)
  check_close(v_out, v_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} primal" if err_msg else "primal")
  tangent = tree_util.tree_map(rand, args)
  tangent_out = numerical_jvp(f, args, tangent, eps=eps)
  cotangent = tree_util.tree_map(rand, v_out)
  cotangent_out = _conj(vjpfun(_conj(cotangent)))
  ip = _inner_prod(tangent, cotangent_out)
  ip_expected = _inner_prod(tangent_out, cotangent)
  check_close(ip, ip_expected, atol=atol, rtol=rtol,
              err_msg=f"{err_msg} cotangent projection" if err_msg
              else "cotangent projection")


def check_grads(f: Callable, args: Sequence, order: int, modes=("fwd", "rev"),
                atol=None, rtol=None, eps=None) -> None:
  """Check the derivatives of ``f`` at ``args`` against finite differences,
  in forward and/or reverse mode, up to ``order``; AssertionError if not."""
  args = tuple(args)
  eps = eps or EPS
  _check_jvp = functools.partial(check_jvp, atol=atol, rtol=rtol, eps=eps)
  _check_vjp = functools.partial(check_vjp, atol=atol, rtol=rtol, eps=eps)

  def _check(f, args, order, err_msg=""):
    if "fwd" in modes:
      fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
      _check_jvp(f, functools.partial(jvp, f), args, err_msg=fwd_msg)
      if order > 1:
        _check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
    if "rev" in modes:
      rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
      _check_vjp(f, functools.partial(vjp, f), args, err_msg=rev_msg)
      if order > 1:
        def f_vjp(*args):
          out, vjp_fn = vjp(f, *args)
          return vjp_fn(out)
        _check(f_vjp, args, order - 1, rev_msg)

  _check(f, args, order)


__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp", "check_close",
           "rand_like"]
