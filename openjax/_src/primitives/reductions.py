"""Reduction primitives: monoid reductions over axes (``reduce_sum``,
``reduce_max``, ...), ``argmax``/``argmin`` and the cumulative reductions
(``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``).

Parameters and messages follow ``jax.lax``; ``jax.numpy`` builds its
NumPy-style reductions (dtype promotion, ``where``, ``keepdims``) on these.
"""
from __future__ import annotations

import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray
from openjax._src.primitives._util import (axes_tuple as _axes_tuple, check_number as _check_number,
                                           in_float32 as _in_float32, quiet,
                                           reduced_shape as _reduced_shape)
# reduce_sum lives with broadcast_in_dim (each is the other's transpose).
from openjax._src.primitives.shape import reduce_sum, reduce_sum_p  # noqa: F401

__all__ = [
    "reduce_sum", "reduce_sum_p", "reduce_prod", "reduce_prod_p", "reduce_max", "reduce_max_p",
    "reduce_min", "reduce_min_p", "reduce_and", "reduce_and_p", "reduce_or", "reduce_or_p",
    "reduce_xor", "reduce_xor_p", "argmax", "argmax_p", "argmin", "argmin_p",
    "cumsum", "cumsum_p", "cumprod", "cumprod_p", "cummax", "cummax_p", "cummin", "cummin_p",
    "cumlogsumexp", "cumlogsumexp_p",
]


# ------------------------------------------------------------------ helpers
def _max_identity(dt: np.dtype):
  k = dtypes.kind(dt)
  if k in "fc":
    # Floats without infinities (some float8 types) use their lowest value.
    return -np.inf if _has_inf(dt) else float(dtypes.finfo(dt).min)
  if k in "iu":
    return dtypes.iinfo(dt).min
  return False


def _min_identity(dt: np.dtype):
  k = dtypes.kind(dt)
  if k in "fc":
    return np.inf if _has_inf(dt) else float(dtypes.finfo(dt).max)
  if k in "iu":
    return dtypes.iinfo(dt).max
  return True


def _has_inf(dt: np.dtype) -> bool:
  with np.errstate(all="ignore"):
    return bool(np.isinf(np.array(np.inf, np.float32).astype(dt)))


# ----------------------------------------------------------- reduce_prod
reduce_prod_p = Primitive("reduce_prod")


@reduce_prod_p.def_impl
@quiet
def _reduce_prod_impl(x, *, axes):
  xc, dt = _in_float32(x)
  return [np.asarray(np.prod(xc, axis=axes, dtype=xc.dtype)).astype(dt)]


@reduce_prod_p.def_abstract_eval
def _reduce_prod_abstract_eval(x, *, axes):
  _check_number("reduce_prod", x)
  return [ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type)]


def reduce_prod(operand, axes):
  """Product of ``operand`` over ``axes`` (no upcast of narrow dtypes)."""
  return reduce_prod_p.bind1(operand, axes=_axes_tuple("reduce_prod", axes))


# ------------------------------------------------------ reduce_max / min
reduce_max_p = Primitive("reduce_max")
reduce_min_p = Primitive("reduce_min")


@reduce_max_p.def_impl
@quiet
def _reduce_max_impl(x, *, axes, out_sharding=None):
  # An empty reduction gives the identity (-inf, iinfo.min, False), as XLA does.
  xc, dt = _in_float32(x)
  return [np.asarray(np.max(xc, axis=axes, initial=_max_identity(dt))).astype(dt)]


@reduce_min_p.def_impl
@quiet
def _reduce_min_impl(x, *, axes, out_sharding=None):
  xc, dt = _in_float32(x)
  return [np.asarray(np.min(xc, axis=axes, initial=_min_identity(dt))).astype(dt)]


def _chooser_abstract_eval(x, *, axes, out_sharding=None):
  return [ShapedArray(_reduced_shape(x, axes), x.dtype, x.weak_type)]


reduce_max_p.def_abstract_eval(_chooser_abstract_eval)
reduce_min_p.def_abstract_eval(_chooser_abstract_eval)


def reduce_max(operand, axes, *, out_sharding=None):
  """Maximum of ``operand`` over ``axes`` (NaN propagates)."""
  return reduce_max_p.bind1(operand, axes=_axes_tuple("reduce_max", axes), out_sharding=None)


def reduce_min(operand, axes, *, out_sharding=None):
  """Minimum of ``operand`` over ``axes`` (NaN propagates)."""
  return reduce_min_p.bind1(operand, axes=_axes_tuple("reduce_min", axes), out_sharding=None)


# -------------------------------------------------- reduce_and / or / xor
reduce_and_p = Primitive("reduce_and", kind="nondifferentiable")
reduce_or_p = Primitive("reduce_or", kind="nondifferentiable")
reduce_xor_p = Primitive("reduce_xor", kind="nondifferentiable")


def _logical_impl(ufunc):
  def impl(x, *, axes):
    if not axes:
      return [x]
    return [np.asarray(ufunc.reduce(x, axis=axes)).astype(x.dtype)]
  return impl


def _logical_abstract_eval(x, *, axes):
  if x.dtype != np.bool_ and not dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError("logical reduction requires operand dtype bool or int, got "
                    f"{x.dtype.name}.")
  # These reductions are never weakly typed in JAX.
  return [ShapedArray(_reduced_shape(x, axes), x.dtype, False)]


for _p, _uf in ((reduce_and_p, np.bitwise_and), (reduce_or_p, np.bitwise_or),
                (reduce_xor_p, np.bitwise_xor)):
  _p.def_impl(_logical_impl(_uf))
  _p.def_abstract_eval(_logical_abstract_eval)


def reduce_and(operand, axes):
  """Bitwise (logical for bool) AND of ``operand`` over ``axes``."""
  return reduce_and_p.bind1(operand, axes=_axes_tuple("reduce_and", axes))


def reduce_or(operand, axes):
  """Bitwise (logical for bool) OR of ``operand`` over ``axes``."""
  return reduce_or_p.bind1(operand, axes=_axes_tuple("reduce_or", axes))


def reduce_xor(operand, axes):
  """Bitwise (logical for bool) XOR of ``operand`` over ``axes``."""
  return reduce_xor_p.bind1(operand, axes=_axes_tuple("reduce_xor", axes))


# --------------------------------------------------------- argmax / argmin
argmax_p = Primitive("argmax", kind="nondifferentiable")
argmin_p = Primitive("argmin", kind="nondifferentiable")


def _argminmax_impl(np_fn):
  # NumPy's argmax/argmin pick the first occurrence and treat NaN as the
  # extreme value (the first NaN wins), exactly XLA's comparator in JAX.
  def impl(x, *, axes, index_dtype):
    (axis,) = axes
    xc, _ = _in_float32(x)
    return [np.asarray(np_fn(xc, axis=axis)).astype(index_dtype)]
  return impl


def _argminmax_abstract_eval(x, *, axes, index_dtype):
  (axis,) = axes
  if not 0 <= axis < x.ndim:
    raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
  if x.shape[axis] < 1:
    raise ValueError("argmin and argmax require non-empty reduced dimension. "
                     f"operand.shape={x.shape} axis={axis}")
  if not dtypes.issubdtype(index_dtype, np.integer):
    raise TypeError(f"index_dtype must be an integer type, but got {np.dtype(index_dtype).name}")
  shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
  return [ShapedArray(shape, index_dtype, False)]


argmax_p.def_impl(_argminmax_impl(np.argmax))
argmin_p.def_impl(_argminmax_impl(np.argmin))
argmax_p.def_abstract_eval(_argminmax_abstract_eval)
argmin_p.def_abstract_eval(_argminmax_abstract_eval)


def argmax(operand, axis: int, index_dtype):
  """Index of the maximum of ``operand`` along ``axis`` (first occurrence;
  NaN counts as the maximum)."""
  index_dtype = dtypes.explicit_dtype(index_dtype, "argmax")
  return argmax_p.bind1(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


def argmin(operand, axis: int, index_dtype):
  """Index of the minimum of ``operand`` along ``axis`` (first occurrence;
  NaN counts as the minimum)."""
  index_dtype = dtypes.explicit_dtype(index_dtype, "argmin")
  return argmin_p.bind1(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


# ------------------------------------------------------ cumulative reductions
def _cumulative_primitive(name: str, accumulate, kind: str = "differentiable") -> Primitive:
  p = Primitive(name, kind=kind)

  @quiet
  def impl(x, *, axis, reverse):
    xc, dt = _in_float32(x)
    if reverse:
      xc = np.flip(xc, axis)
    out = np.asarray(accumulate(xc, axis)).astype(dt)
    return [np.flip(out, axis) if reverse else out]

  def abstract_eval(x, *, axis, reverse):
    if axis < 0:
      raise ValueError("XLA operations do not allow negative axes")
    if axis >= x.ndim:
      raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
    _check_number(name, x)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]

  p.def_impl(impl)
  p.def_abstract_eval(abstract_eval)
  return p


cumsum_p = _cumulative_primitive("cumsum", lambda x, a: np.cumsum(x, a, dtype=x.dtype),
                                 kind="linear")
cumprod_p = _cumulative_primitive("cumprod", lambda x, a: np.cumprod(x, a, dtype=x.dtype))
cummax_p = _cumulative_primitive("cummax", lambda x, a: np.maximum.accumulate(x, a))
cummin_p = _cumulative_primitive("cummin", lambda x, a: np.minimum.accumulate(x, a))
cumlogsumexp_p = _cumulative_primitive("cumlogsumexp",
                                       lambda x, a: np.logaddexp.accumulate(x, a))


def cumsum(operand, axis: int = 0, reverse: bool = False):
  """Cumulative sum along ``axis`` (from the end when ``reverse``)."""
  return cumsum_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


def cumprod(operand, axis: int = 0, reverse: bool = False):
  """Cumulative product along ``axis`` (from the end when ``reverse``)."""
  return cumprod_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


def cummax(operand, axis: int = 0, reverse: bool = False):
  """Cumulative maximum along ``axis`` (from the end when ``reverse``)."""
  return cummax_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


def cummin(operand, axis: int = 0, reverse: bool = False):
  """Cumulative minimum along ``axis`` (from the end when ``reverse``)."""
  return cummin_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
  """Cumulative ``log(sum(exp(x)))`` along ``axis`` (from the end when ``reverse``)."""
  return cumlogsumexp_p.bind1(operand, axis=int(axis), reverse=bool(reverse))
