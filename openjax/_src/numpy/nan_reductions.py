"""The NaN-ignoring reductions of ``jax.numpy`` (``nansum``, ``nanmax``,
``nanmean``, ``nanvar``, ``nanargmax``, ...): the reductions of
``reductions`` over operands whose NaNs are replaced by the reduction's
identity, NaN (or -1) where every element is NaN, as in JAX.
"""
from __future__ import annotations

import operator
from typing import Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.numpy import util
from openjax._src.numpy._ufunc_helpers import _where as _where_jit
from openjax._src.numpy.reduction_plans import operand_alone
from openjax._src.numpy.reductions import (
    _check_out, _check_where, _const, _convert, _cumulative_reduction, _init_value, _isnan,
    _static_axes, _sub, _user_dtype, _var_promote_types, _where, all as _all, argmax, argmin,
    max as _max, mean, min as _min, prod, sum as _sum)

__all__ = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanvar", "nanstd", "nanargmax",
           "nanargmin", "nancumsum", "nancumprod"]


# ------------------------------------------------------------ NaN-ignoring
def _nan_reduction(a, name: str, jnp_reduction: Callable, init_val, nan_if_all_nan: bool,
                   axis=None, keepdims=False, where=None, **kwargs):
  a = util.ensure_arraylike(name, a)
  where = _check_where(name, where)
  if dtypes.kind(util.dtype_of(a)) not in "fc":
    return jnp_reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
  # nansum/nanprod: jnp.where's jit (JAX's ``_where``, as their jaxprs print); nanmax/nanmin
  # keep lax.select, the equations core/fused_steps runs as one kernel eagerly
  select = _where if nan_if_all_nan else _where_jit
  out = jnp_reduction(select(_isnan(a), _init_value(util.dtype_of(a), init_val), a),
                      axis=axis, keepdims=keepdims, where=where, **kwargs)
  if nan_if_all_nan:
    all_nan = _all(_isnan(a), axis=axis, keepdims=keepdims)
    return _where(all_nan, _const(a, np.nan), out)
  return out


@util.jit(static_argnames=('axis', 'out', 'keepdims', 'initial'))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """``min`` ignoring NaNs (NaN where every element is NaN)."""
  return _nan_reduction(a, "nanmin", _min, np.inf, initial is None, axis=_static_axes(axis),
                        out=out, keepdims=keepdims, initial=initial, where=where)


@util.jit(static_argnames=('axis', 'out', 'keepdims', 'initial'))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
  """``max`` ignoring NaNs (NaN where every element is NaN)."""
  return _nan_reduction(a, "nanmax", _max, -np.inf, initial is None, axis=_static_axes(axis),
                        out=out, keepdims=keepdims, initial=initial, where=where)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'keepdims', 'initial'))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """``sum`` treating NaNs as zero."""
  if dtype is not None:
    dtype = _user_dtype(dtype, "nansum")
  return _nan_reduction(a, "nansum", _sum, 0, False, axis=_static_axes(axis), dtype=dtype,
                        out=out, keepdims=keepdims, initial=initial, where=where)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'keepdims', 'initial'))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
  """``prod`` treating NaNs as one."""
  if dtype is not None:
    dtype = _user_dtype(dtype, "nanprod")
  return _nan_reduction(a, "nanprod", prod, 1, False, axis=_static_axes(axis), dtype=dtype,
                        out=out, keepdims=keepdims, initial=initial, where=where)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'keepdims'))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
  """``mean`` ignoring NaNs (NaN where every element is NaN)."""
  a = util.ensure_arraylike("nanmean", a)
  where = _check_where("nanmean", where)
  _check_out("nanmean", out)
  axis = _static_axes(axis)
  if dtypes.kind(util.dtype_of(a)) in "biu":
    return mean(a, axis, dtype, out, keepdims, where=where)
  dtype = util.to_inexact_dtype(util.dtype_of(a)) if dtype is None else _user_dtype(dtype, "mean")
  not_nan = lax.bitwise_not(_isnan(a))
  normalizer = _sum(not_nan, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
  return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'ddof', 'keepdims'))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):  # noqa: A002 - NumPy's parameter name
  """``var`` ignoring NaNs."""
  a = util.ensure_arraylike("nanvar", a)
  where = _check_where("nanvar", where)
  axis = _static_axes(axis)
  if dtype is not None:
    dtype = _user_dtype(dtype, "nanvar")
  _check_out("nanvar", out)
  computation_dtype, dtype = _var_promote_types(util.dtype_of(a), dtype)
  a = _convert(a, computation_dtype)
  if mean is None:
    a_mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
  else:
    a_mean = _convert(util.ensure_arraylike("nanvar", mean), computation_dtype)
  centered = _where(_isnan(a), 0, _sub(a, a_mean))
  if dtypes.kind(util.dtype_of(centered)) == "c":
    centered = lax.real(lax.mul(centered, lax.conj(centered)))
  else:
    centered = lax.square(centered)
  normalizer = _sum(lax.bitwise_not(_isnan(a)), axis=axis, keepdims=keepdims, where=where)
  normalizer = lax.sub(normalizer, _convert(ddof, util.dtype_of(normalizer)))
  empty = lax.le(normalizer, _const(normalizer, 0))
  result = _sum(centered, axis, keepdims=keepdims, where=where)
  result = _where(empty, np.nan, result)
  divisor = _where(empty, 1, normalizer)
  result = lax.div(result, _convert(divisor, util.dtype_of(result)))
  return _convert(result, dtype)


@util.jit(static_argnames=('axis', 'dtype', 'out', 'ddof', 'keepdims'))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None,
           mean=None):  # noqa: A002 - NumPy's parameter name
  """``std`` ignoring NaNs."""
  a = util.ensure_arraylike("nanstd", a)
  where = _check_where("nanstd", where)
  if dtype is not None:
    dtype = _user_dtype(dtype, "nanstd")
  _check_out("nanstd", out)
  return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims,
                         where=where, mean=mean))


def _nanarg(jnp_fn: Callable, fill, a, axis, keepdims: bool):
  if dtypes.kind(util.dtype_of(a)) not in "fc":
    return jnp_fn(a, axis=axis, keepdims=keepdims)
  nan_mask = _isnan(a)
  res = jnp_fn(_where(nan_mask, _const(a, fill), a), axis=axis, keepdims=keepdims)
  return _where(_all(nan_mask, axis=axis, keepdims=keepdims), _const(res, -1), res)


# Jitted as in JAX (``jit[name=_nanargmax]`` in jaxprs): an eager call runs
# the cached program of its ~6 equations instead of their dispatch one by one.
@util.jit(static_argnames=("axis", "keepdims"))
def _nanargmax(a, axis, keepdims: bool):
  return _nanarg(argmax, -np.inf, a, axis, keepdims)


@util.jit(static_argnames=("axis", "keepdims"))
def _nanargmin(a, axis, keepdims: bool):
  return _nanarg(argmin, np.inf, a, axis, keepdims)


def nanargmax(a, axis=None, out=None, keepdims=None):
  """``argmax`` ignoring NaNs (-1 where every element is NaN)."""
  _check_out("nanargmax", out)
  a = util.ensure_arraylike("nanargmax", a)
  return _nanargmax(a, None if axis is None else operator.index(axis), bool(keepdims))


def nanargmin(a, axis=None, out=None, keepdims=None):
  """``argmin`` ignoring NaNs (-1 where every element is NaN)."""
  _check_out("nanargmin", out)
  a = util.ensure_arraylike("nanargmin", a)
  return _nanargmin(a, None if axis is None else operator.index(axis), bool(keepdims))


@operand_alone
@util.jit(static_argnames=('axis', 'dtype', 'out'))
def nancumsum(a, axis=None, dtype=None, out=None):
  """``cumsum`` treating NaNs as zero."""
  return _cumulative_reduction("nancumsum", lax.cumsum, a, axis, dtype, out, fill_nan=True,
                               fill_value=0)


@operand_alone
@util.jit(static_argnames=('axis', 'dtype', 'out'))
def nancumprod(a, axis=None, dtype=None, out=None):
  """``cumprod`` treating NaNs as one."""
  return _cumulative_reduction("nancumprod", lax.cumprod, a, axis, dtype, out, fill_nan=True,
                               fill_value=1)
