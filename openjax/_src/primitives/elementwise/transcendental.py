"""The elementwise primitives outside the uniform tables of ``elementwise``:
``pow``, ``reduce_precision``, ``clamp`` and ``bitcast_convert_type``, each
with all its rules. ``elementwise`` re-exports them (the ``lax`` surface)."""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.primitives.elementwise import elementwise_lowering as L
from openjax._src.primitives.elementwise.elementwise_rules import (
    ANY, FLOAT, INEXACT, NUM, check_nary, check_unary, weak)
from openjax._src.primitives.base.util import broadcasting_shape
from openjax._src.primitives.base.structural import defjvp, defjvp2, deflinear, moveaxis
from openjax._src.primitives.base.batch_util import (axis_size, bdim_at_front, defbroadcasting,
                                                     defvectorized)
from openjax._src.primitives.elementwise.arithmetic import (_const, _maybe_broadcast, _replace_zero,
                                                            _shape, _zeros, bitwise_and,
                                                            convert_element_type, eq, gt, log, lt,
                                                            mul, select, sub)
from openjax._src.primitives.shape.shape import broadcast, broadcast_in_dim, full_like

__all__ = ["pow", "pow_p", "reduce_precision", "reduce_precision_p", "clamp", "clamp_p",
           "bitcast_convert_type", "bitcast_convert_type_p"]


# --------------------------------------------------------------------- pow
pow_p = Primitive("pow")
pow_p.def_lower(L.pow_rule)


@pow_p.def_impl
def _pow_impl(x, y):
  with np.errstate(all="ignore"):
    if x.dtype in dtypes.custom_float_dtypes:
      return [np.power(x.astype(np.float32), y).astype(x.dtype)]
    return [np.asarray(np.power(x, y)).astype(x.dtype, copy=False)]


@pow_p.def_abstract_eval
def _pow_abstract_eval(x, y):
  check_nary("pow", (x, y), (INEXACT, NUM), require_same=False)
  if not (dtypes.issubdtype(y.dtype, np.integer) or x.dtype == y.dtype):
    raise TypeError(
        "the first argument to pow must have an inexact dtype (float or complex), and "
        "the second argument must have an inexact or integer dtype, and two inexact "
        f"dtypes must match, but got {x.dtype.name} and {y.dtype.name} respectively.")
  return [ShapedArray(broadcasting_shape("pow", (x, y)), x.dtype, weak(x, y))]


def pow(x, y):  # noqa: A001 - JAX's name
  """Elementwise power x**y; ``x`` inexact, ``y`` integer or of ``x``'s dtype."""
  return pow_p.bind1(x, y)


def _pow_jvp_lhs(g, ans, x, y):
  y_is_int = dtypes.issubdtype(get_aval(y).dtype, np.integer)
  dt = get_aval(x).dtype                # both operands in x's dtype, strongly typed
  x, y = convert_element_type(x, dt), convert_element_type(y, dt)
  if y_is_int:
    # d/dx x**n = n x**(n-1), exactly 0 for n = 0 (even at x = 0).
    shape = _shape(ans)
    x, y = _maybe_broadcast(shape, x), _maybe_broadcast(shape, y)
    jac = select(eq(y, _const(y, 0)), _zeros(y),
                 mul(_replace_zero(y), pow(x, sub(y, full_like(y, 1)))))
  else:
    jac = mul(y, pow(x, sub(y, full_like(y, 1))))
  return mul(g, jac)


def _pow_jvp_rhs(g, ans, x, y):
  # d/dy x**y = log(x) x**y, taken as 0 at x = 0 (as JAX does).
  return convert_element_type(mul(g, mul(log(_replace_zero(x)), ans)), get_aval(y).dtype)


defjvp2(pow_p, _pow_jvp_lhs, _pow_jvp_rhs)
defbroadcasting(pow_p)




# ------------------------------------------------------------ reduce_precision
reduce_precision_p = Primitive("reduce_precision", kind="linear")
reduce_precision_p.def_lower(L.reduce_precision_rule)


@reduce_precision_p.def_impl
def _reduce_precision_impl(x, *, exponent_bits, mantissa_bits):
  info = dtypes.finfo(x.dtype)
  nmant, nexp = int(info.nmant), int(info.nexp)
  udt = np.dtype(f"u{x.dtype.itemsize}")
  bits = np.ascontiguousarray(x).view(udt).astype(np.uint64)
  sign = np.uint64(1 << (x.dtype.itemsize * 8 - 1))
  exp_mask = np.uint64(((1 << nexp) - 1) << nmant)
  if mantissa_bits < nmant:     # round the mantissa to nearest, ties to even
    shift = np.uint64(nmant - mantissa_bits)
    last = (bits >> shift) & np.uint64(1)
    half = np.uint64((1 << (nmant - mantissa_bits - 1)) - 1)
    bits = (bits + half + last) & ~np.uint64((1 << (nmant - mantissa_bits)) - 1)
  if exponent_bits < nexp:      # overflow to inf, flush the reduced denormal range to 0
    src_bias, red_bias = (1 << (nexp - 1)) - 1, (1 << (exponent_bits - 1)) - 1
    e = (bits & exp_mask) >> np.uint64(nmant)
    bits = np.where(e > src_bias + red_bias, (bits & sign) | exp_mask, bits)
    bits = np.where(e <= src_bias - red_bias, bits & sign, bits)
  out = bits.astype(udt).view(x.dtype).reshape(x.shape)
  return [np.where(np.isnan(x), x, out)]


@reduce_precision_p.def_abstract_eval
def _reduce_precision_abstract_eval(x, *, exponent_bits, mantissa_bits):
  check_unary("reduce_precision", x, FLOAT)
  if exponent_bits < 1 or mantissa_bits < 0:
    raise ValueError("reduce_precision: exponent_bits must be >= 1 and mantissa_bits "
                     f">= 0, got {exponent_bits} and {mantissa_bits}.")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
  """Round ``operand`` as if cast to a float with the given exponent and
  mantissa widths and back (``reduce_precision(x, 8, 7)`` mimics bfloat16)."""
  return reduce_precision_p.bind1(operand, exponent_bits=int(exponent_bits),
                                  mantissa_bits=int(mantissa_bits))


deflinear(reduce_precision_p, lambda ct, x, **params: [reduce_precision_p.bind1(ct, **params)])
defvectorized(reduce_precision_p)




# ---------------------------------------------------------------------- clamp
clamp_p = Primitive("clamp")
clamp_p.def_lower(L.clamp_rule)


@clamp_p.def_impl
def _clamp_impl(lo, x, hi):
  with np.errstate(all="ignore"):
    return [np.minimum(np.maximum(x, lo), hi).astype(x.dtype, copy=False)]


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
  for name, a in (("min", lo), ("max", hi)):
    if a.shape and a.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                      f"got {name}.shape={a.shape}, operand.shape={x.shape}.")
  check_nary("clamp", (lo, x, hi), (ANY, ANY, ANY))
  return [ShapedArray(x.shape, x.dtype, weak(lo, x, hi))]


def clamp(min, x, max):  # noqa: A002 - JAX's parameter names
  """Elementwise ``minimum(maximum(x, min), max)``."""
  return clamp_p.bind1(min, x, max)


def _clamp_jvp_bound(pred):
  def fn(g, lo, x, hi):
    return select(pred(lo, x, hi), _maybe_broadcast(_shape(x), g), _zeros(x))
  return fn


# min's tangent flows where min is above x (and below max); x's strictly
# inside; max's where max is below x -- JAX's convention at the ties.
defjvp(clamp_p,
       _clamp_jvp_bound(lambda lo, x, hi: bitwise_and(gt(lo, x), lt(lo, hi))),
       _clamp_jvp_bound(lambda lo, x, hi: bitwise_and(gt(x, lo), lt(x, hi))),
       _clamp_jvp_bound(lambda lo, x, hi: lt(hi, x)))


@clamp_p.def_batch
def _clamp_batch(vals, dims):
  lo, x, hi = vals
  lo_d, x_d, hi_d = dims
  size = axis_size(vals, dims)
  nd = [len(_shape(v)) for v in vals]
  if lo_d == x_d == hi_d:
    if _shape(lo) == _shape(x) == _shape(hi):
      return [clamp_p.bind1(lo, x, hi)], [x_d]
    if nd[0] == nd[2] == 1:       # batched scalar bounds beside a batched operand
      lo = broadcast_in_dim(lo, _shape(x), (lo_d,))
      hi = broadcast_in_dim(hi, _shape(x), (hi_d,))
      return [clamp_p.bind1(lo, x, hi)], [x_d]
  elif nd[0] == nd[2] == 0 and x_d is not None:   # unbatched scalar bounds
    return [clamp_p.bind1(lo, x, hi)], [x_d]
  lo = bdim_at_front(lo, lo_d, size) if _shape(lo) else lo
  hi = bdim_at_front(hi, hi_d, size) if _shape(hi) else hi
  x = bdim_at_front(x, x_d, size) if _shape(x) else x
  xs = _shape(x)
  if not _shape(lo) and xs:
    lo = broadcast(lo, xs)
  if not _shape(hi) and xs:
    hi = broadcast(hi, xs)
  if 0 < len(_shape(lo)) < len(xs):       # a batched scalar bound
    lo = broadcast_in_dim(lo, xs, (0,))
  if 0 < len(_shape(hi)) < len(xs):
    hi = broadcast_in_dim(hi, xs, (0,))
  if len(_shape(lo)) > len(xs):           # a scalar operand beside batched bounds
    x = broadcast(x, _shape(lo))
  return [clamp_p.bind1(lo, x, hi)], [0]


# ---------------------------------------------------------- bitcast_convert_type
bitcast_convert_type_p = Primitive("bitcast_convert_type", kind="nondifferentiable")
bitcast_convert_type_p.def_lower(L.bitcast_convert_rule)


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x, *, new_dtype):
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  flat = np.ascontiguousarray(x).reshape(-1).view(new_dtype)
  if old == new:
    return [flat.reshape(x.shape)]
  if old > new:
    return [flat.reshape(x.shape + (old // new,))]
  return [flat.reshape(x.shape[:-1])]


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x, *, new_dtype):
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  if old == new:
    shape = x.shape
  elif old > new:
    shape = x.shape + (old // new,)
  else:
    if not x.shape or x.shape[-1] != new // old:
      raise TypeError(f"bitcast_convert_type: {x.str_short()} cannot be bitcast to "
                      f"{np.dtype(new_dtype).name}: the last dimension must be {new // old}.")
    shape = x.shape[:-1]
  return [ShapedArray(shape, new_dtype, False)]


def bitcast_convert_type(operand, new_dtype):
  """Reinterpret the bits of ``operand`` as ``new_dtype``."""
  return bitcast_convert_type_p.bind1(operand, new_dtype=dtypes.explicit_dtype(new_dtype))


@bitcast_convert_type_p.def_batch
def _bitcast_batch(vals, dims, *, new_dtype):
  x, = vals
  d, = dims
  aval = get_aval(x)
  if aval.dtype.itemsize < np.dtype(new_dtype).itemsize and d == aval.ndim - 1:
    x, d = moveaxis(x, d, 0), 0          # the last axis is consumed by the cast
  return [bitcast_convert_type_p.bind1(x, new_dtype=new_dtype)], [d]
