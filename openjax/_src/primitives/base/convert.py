"""Dtype conversion: ``convert_element_type`` (XLA's cast semantics). The
bottom of the primitive families: every other family converts operands, and
its rules need no other family. (``bitcast_convert_type``, whose batching
moves axes, lives with the elementwise casts.)"""
from __future__ import annotations

import functools
import math

import numpy as np

from openjax._src import dtypes
from openjax._src.core import (Array, Primitive, ShapedArray, array_of, eval_trace, get_aval,
                               set_current_trace, trace_state)
from openjax._src.core.avals import shaped_array
from openjax._src.core.sharding_rules import elementwise_rule
from openjax._src.core.trace import NUMPY_SCALAR_TYPES, python_int_value
from openjax._src.lowering.builder import enum_attr
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.base.ad_util import Zero, tangent_aval
from openjax._src.primitives.base.util import pp_hide_none

__all__ = ["convert_element_type", "convert_element_type_p"]


# ----------------------------------------------------- convert_element_type
convert_element_type_p = Primitive("convert_element_type")


def convert_element_type(operand, new_dtype):
  """Elementwise cast to ``new_dtype`` (x64-canonicalised), like ``lax.convert_element_type``."""
  new_dtype = dtypes.explicit_dtype(new_dtype, "convert_element_type")
  return _convert_element_type(operand, new_dtype, weak_type=False)


def _convert_element_type(operand, new_dtype=None, weak_type: bool = False):
  """Cast ``operand``; skips the primitive when nothing would change. Python
  scalars are converted here, at trace time, so they stay literals."""
  if type(operand) in dtypes.python_scalar_dtypes:   # first: jnp calls with Python numbers
    value = _SCALAR_VALUES.get((type(operand), operand, new_dtype, weak_type))
    if value is not None:
      return Array(value, shaped_array((), value.dtype, bool(weak_type)))
    from_dtype = dtypes.dtype(operand)
    new_dtype = from_dtype if new_dtype is None else np.dtype(new_dtype)
    return _scalar_array(operand, new_dtype, weak_type)
  if new_dtype is not None and type(operand) in NUMPY_SCALAR_TYPES:
    # A NumPy scalar (``x * np.float32(2)``): the general path's conversion
    # below without its checks (~3 us of a ~7 us operator call).
    return _concrete_scalar(np.array(operand), np.dtype(new_dtype), weak_type)
  if type(operand) is Array and new_dtype is not None and operand.aval.shape:
    # An array operand (most calls): the checks below read its aval (~1 us).
    aval, new_dtype, weak_type = operand.aval, np.dtype(new_dtype), bool(weak_type)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
      return operand
    return convert_element_type_p.bind1(operand, new_dtype=new_dtype, weak_type=weak_type,
                                        sharding=None)
  from_dtype = dtypes.dtype(operand)
  new_dtype = from_dtype if new_dtype is None else np.dtype(new_dtype)
  old_weak = dtypes.is_weakly_typed(operand)
  if from_dtype == new_dtype and old_weak == weak_type and hasattr(operand, "aval"):
    return operand
  if np.ndim(operand) == 0 and (isinstance(operand, (np.ndarray, np.generic))
                                or type(operand) is Array):
    # Concrete scalars convert now, as JAX does, so traces keep them literals.
    return _concrete_scalar(np.array(getattr(operand, "_value", operand), copy=True), new_dtype,
                            weak_type)
  if type(operand) is np.ndarray and trace_state.trace is not eval_trace:
    # A NumPy constant converts now, as JAX folds it while tracing: make_jaxpr
    # prints it as a constant, not as a convert equation of one.
    with set_current_trace(eval_trace):
      return convert_element_type_p.bind1(operand, new_dtype=new_dtype,
                                          weak_type=bool(weak_type), sharding=None)
  return convert_element_type_p.bind1(operand, new_dtype=new_dtype, weak_type=bool(weak_type),
                                      sharding=None)


def _concrete_scalar(value: np.ndarray, new_dtype: np.dtype, weak_type) -> Array:
  """The 0-d ``value`` (a copy) as an Array of ``new_dtype``: first an array
  of its canonical dtype, as everywhere (without x64, np.int64(2**40) wraps
  to int32 0 as in JAX), then cast."""
  value = value.astype(dtypes.canonicalize_dtype(value.dtype), copy=False)
  return array_of(np.asarray(convert_numpy(value, new_dtype)),
                  shaped_array((), new_dtype, bool(weak_type)))


def _scalar_array(x, dt, weak_type):
  # A Python scalar as a 0-d Array of dtype ``dt``, which tracing turns into a
  # literal (no equation), as JAX does for Python scalars.
  # One shared aval per (dtype, weak type): eager plans recognise operands
  # by their aval's identity (a fresh aval per jnp.where constant cost a plan
  # lookup per use).
  aval = shaped_array((), dt, bool(weak_type))
  value = None
  if type(x) is int:
    value = python_int_value(x, dt)   # JAX's overflow check, then the cast
  elif type(x) is float and dtypes.kind(dt) in "fc":
    try:   # the common case: operators with Python numbers
      value = np.array(x, dt)
    except OverflowError:
      pass
  if value is None:
    arr = np.asarray(x)
    if dtypes.kind(dt) not in "fc" and isinstance(x, float):
      arr = np.trunc(arr)
    value = np.asarray(convert_numpy(arr, dt))
  value.setflags(False)
  # Remembered per (type, value, dtype, weak type), the read-only value shared
  # by the Arrays made of it; 0.0 == -0.0 and nan != nan are made every time.
  if x == x and (x != 0 or type(x) is int or type(x) is bool):
    if len(_SCALAR_VALUES) >= 4096:
      _SCALAR_VALUES.clear()
    _SCALAR_VALUES[(type(x), x, dt, weak_type)] = value
  return Array(value, aval)


_SCALAR_VALUES: dict = {}


def convert_numpy(x: np.ndarray, new_dtype: np.dtype) -> np.ndarray:
  """NumPy cast with XLA's semantics: float->int saturates and NaN->0;
  complex->real drops the imaginary part; anything->bool is ``x != 0``."""
  x = np.asarray(x)
  new_dtype = np.dtype(new_dtype)
  if x.dtype == new_dtype:
    return x
  if new_dtype == np.bool_:
    return np.asarray(x != 0)
  src_kind, dst_kind = dtypes.kind(x.dtype), dtypes.kind(new_dtype)
  if x.ndim == 0 and src_kind == "f" and dst_kind in "iu":
    # A scalar (jnp.full's fill value, a concrete index): Python's exact
    # float and int compares, ~1 us where the array path takes ~10.
    info = dtypes.iinfo(new_dtype)
    v = float(x)
    i = 0 if v != v else info.max if v >= info.max else info.min if v <= info.min else int(v)
    return np.array(i, new_dtype)
  with np.errstate(all="ignore"):
    if src_kind == "c" and dst_kind != "c":
      x = np.real(x)
      src_kind = "f"
    if src_kind == "f" and dst_kind in "iu":
      info = dtypes.iinfo(new_dtype)
      xf = np.asarray(x, np.float64)
      xf = np.where(np.isnan(xf), 0, np.clip(np.trunc(xf), info.min, info.max))
      if new_dtype.itemsize < 8:
        return xf.astype(new_dtype)
      # float64 cannot hold 2**63 - 1: values at or past the top saturate.
      hi = xf >= 2.0 ** (new_dtype.itemsize * 8 - (1 if dst_kind == "i" else 0))
      return np.where(hi, np.array(info.max, new_dtype), np.where(hi, 0, xf).astype(new_dtype))
    if x.dtype in dtypes.custom_float_dtypes and new_dtype in dtypes.custom_float_dtypes:
      return x.astype(np.float32).astype(new_dtype)
    return x.astype(new_dtype)


@convert_element_type_p.def_impl
def _convert_impl(x, *, new_dtype, weak_type, sharding=None):
  return [convert_numpy(x, new_dtype)]


def _nonzero(x):
  return x != 0


@convert_element_type_p.def_eval_kernel
def _convert_eval_kernel(x, *, new_dtype, weak_type, sharding=None):
  # convert_numpy's plain cases, decided once: NumPy's cast, or ``x != 0``.
  src, dst = x.dtype, np.dtype(new_dtype)
  if src == dst:
    return None   # the impl returns the value itself
  if dst == np.bool_:
    return _nonzero
  src_kind, dst_kind = dtypes.kind(src), dtypes.kind(dst)
  if src_kind == "f" and dst_kind in "iu":
    if dst in dtypes.custom_int_dtypes:
      return None   # int4 and such: the impl
    info = dtypes.iinfo(dst)
    if not x.shape:   # a scalar (an index computed in floats): convert_numpy's Python compares
      return functools.partial(_float_scalar_to_int, low=info.min, high=info.max, dtype=dst)
    if dst.itemsize >= 8:
      return None   # float64 cannot hold the bounds: the impl
    if (x.ndim == 1 and x.shape[0] <= _PYTHON_FLOAT_TO_INT_MAX
        and src.type in _BUILTIN_FLOATS):
      return functools.partial(_few_floats_to_int, low=float(info.min), high=float(info.max),
                               low_i=int(info.min), high_i=int(info.max), dtype=dst)
    if math.prod(x.shape) <= _PYTHON_FLOAT_TO_INT_MAX and src.type in _BUILTIN_FLOATS:
      # (the same per element, then the shape: jnp.int8 of f32[2,2] ~9 -> ~3 us)
      return functools.partial(_few_floats_to_int_nd, low=float(info.min),
                               high=float(info.max), low_i=int(info.min),
                               high_i=int(info.max), dtype=dst, shape=x.shape)
    return functools.partial(_float_to_int, low=float(info.min), high=float(info.max), dtype=dst)
  if (src_kind == "c" and dst_kind != "c") or \
      (src in dtypes.custom_float_dtypes and dst in dtypes.custom_float_dtypes):
    return None
  return functools.partial(np.ndarray.astype, dtype=dst)


def _float_scalar_to_int(x, *, low: int, high: int, dtype: np.dtype):
  """``_float_to_int`` of a 0-d value: ``convert_numpy``'s exact Python
  compares (~1 us; the float64 passes take ~5 us on one element)."""
  v = float(x)
  return np.array(0 if v != v else high if v >= high else low if v <= low else int(v), dtype)


#: Up to this many elements a float -> int conversion runs per element in
#: Python (exact compares, truncation toward zero): ~1.2 us for 6 elements,
#: where ``_float_to_int``'s float64 passes take ~3.2.
_PYTHON_FLOAT_TO_INT_MAX = 16
_BUILTIN_FLOATS = (np.float16, np.float32, np.float64)


def _few_floats_to_int(x, *, low: float, high: float, low_i: int, high_i: int,
                       dtype: np.dtype):
  """``_float_to_int`` of a 1-d operand of a few builtin floats."""
  return np.array([0 if v != v else high_i if v >= high else low_i if v <= low else int(v)
                   for v in x.tolist()], dtype)


def _few_floats_to_int_nd(x, *, low: float, high: float, low_i: int, high_i: int,
                          dtype: np.dtype, shape: tuple):
  """``_few_floats_to_int`` of an operand of another rank."""
  return np.array([0 if v != v else high_i if v >= high else low_i if v <= low else int(v)
                   for v in x.ravel().tolist()], dtype).reshape(shape)


def _float_to_int(x, *, low: float, high: float, dtype: np.dtype):
  """``convert_numpy``'s float -> narrow int (truncate, saturate, NaN -> 0)
  in place on one float64 copy: ~2 us where the impl's clip/where/errstate
  take ~10 us on a scalar. When every value is in range (the usual case; a
  NaN fails the test), NumPy's cast truncates the same way: two reductions
  and the cast, ~4x less than the float64 passes at 1e6 elements."""
  # (The bounds compare as Python floats: exact, where float32 rounds 2**31 - 1 up.)
  if x.size > 64 and float(x.min()) >= low and float(x.max()) <= high:
    return x.astype(dtype)
  xf = x.astype(np.float64)
  np.trunc(xf, out=xf)
  np.maximum(xf, low, out=xf)   # NaN stays NaN through both bounds
  np.minimum(xf, high, out=xf)
  np.copyto(xf, 0.0, where=xf != xf)
  return xf.astype(dtype)


convert_element_type_p.def_sharding_rule(elementwise_rule("convert_element_type"))


@convert_element_type_p.def_abstract_eval
def _convert_abstract_eval(x, *, new_dtype, weak_type, sharding=None):
  return [ShapedArray(x.shape, new_dtype, weak_type)]


convert_element_type_p.def_pp(pp_hide_none("sharding"))


@convert_element_type_p.def_jvp
def _convert_jvp(primals, tangents, *, new_dtype, weak_type, sharding=None):
  x, = primals
  t, = tangents
  out = convert_element_type_p.bind1(x, new_dtype=new_dtype, weak_type=weak_type,
                                     sharding=sharding)
  new_tangent_dtype = tangent_aval(ShapedArray((), new_dtype)).dtype
  if type(t) is Zero or new_tangent_dtype == dtypes.float0 or \
      get_aval(t).dtype == dtypes.float0:
    return [out], [Zero.from_primal_value(out)]
  return [out], [_convert_element_type(t, new_tangent_dtype, weak_type)]


@convert_element_type_p.def_transpose
def _convert_transpose(cts, x, *, new_dtype, weak_type, sharding=None):
  ct, = cts
  old = x.aval
  if type(ct) is Zero or tangent_aval(old).dtype == dtypes.float0 or \
      get_aval(ct).dtype == dtypes.float0:
    return [Zero(tangent_aval(old))]
  return [_convert_element_type(ct, old.dtype, old.weak_type)]


@convert_element_type_p.def_batch
def _convert_batch(vals, dims, **params):
  x, = vals
  d, = dims
  return [convert_element_type_p.bind1(x, **params)], [d]


def _cmp(ctx, x, y, direction: str, dtype):
  # stablehlo.compare of two same-typed tensors (the comparison type from the dtype).
  k = dtypes.kind(np.dtype(dtype))
  ctype = {"f": "FLOAT", "c": "FLOAT", "i": "SIGNED", "u": "UNSIGNED", "b": "UNSIGNED"}[k]
  shape, _ = split_tensor_type(x.type)
  return ctx.op("stablehlo.compare", [x, y], ctx.tensor_type(shape, np.bool_),
                attrs={"comparison_direction": enum_attr("comparison_direction", direction),
                       "compare_type": enum_attr("comparison_type", ctype)})


def lower_convert(ctx, x, src, dst):
  """Emit ``convert_numpy``'s cast of the tensor ``x`` from ``src`` to ``dst``
  (saturating float->int with NaN->0, the real part of complex->real, ``x != 0``
  for ->bool; ml_dtypes floats go through float32, as the impl does)."""
  src, dst = np.dtype(src), np.dtype(dst)
  shape, _ = split_tensor_type(x.type)
  if src == dst:
    return x
  if dst == dtypes.float0:
    return ctx.full(False, shape, np.bool_)
  sk, dk = dtypes.kind(src), dtypes.kind(dst)
  if dst == np.bool_:
    if sk == "c":
      fdt = np.finfo(src).dtype
      parts = [ctx.op(f"stablehlo.{p}", [x], ctx.tensor_type(shape, fdt)) for p in ("real", "imag")]
      zero = ctx.full(0, shape, fdt)
      nz = [_cmp(ctx, p, zero, "NE", fdt) for p in parts]
      return ctx.op("stablehlo.or", nz, ctx.tensor_type(shape, np.bool_))
    return _cmp(ctx, x, ctx.full(0, shape, src), "NE", src)
  if sk == "c" and dk == "c":   # each part on its own (IREE has no complex convert)
    fs, fd = np.finfo(src).dtype, np.finfo(dst).dtype
    parts = [lower_convert(ctx, ctx.op(f"stablehlo.{p}", [x], ctx.tensor_type(shape, fs)), fs, fd)
             for p in ("real", "imag")]
    return ctx.op("stablehlo.complex", parts, ctx.tensor_type(shape, dst))
  if sk == "c":
    src = np.finfo(src).dtype
    x = ctx.op("stablehlo.real", [x], ctx.tensor_type(shape, src))
    sk = "f"
  if dk == "c":
    fd = np.finfo(dst).dtype
    re = lower_convert(ctx, x, src, fd)
    return ctx.op("stablehlo.complex", [re, ctx.full(0, shape, fd)], ctx.tensor_type(shape, dst))
  f32 = np.dtype(np.float32)
  if sk == "f" and dk in "iu":
    if src not in (f32, np.dtype(np.float64)):
      x, src = lower_convert(ctx, x, src, f32), f32
    info = dtypes.iinfo(dst)
    top = src.type(2.0 ** (dst.itemsize * 8 - (1 if dk == "i" else 0)))
    hi = np.nextafter(top, src.type(0))          # the largest float below 2**bits
    x = ctx.op("stablehlo.select", [_cmp(ctx, x, x, "NE", src), ctx.full(0, shape, src), x],
               x.type)
    xc = ctx.op("stablehlo.clamp", [ctx.full(info.min, shape, src), x, ctx.full(hi, shape, src)],
                x.type)
    out = ctx.op("stablehlo.convert", [xc], ctx.tensor_type(shape, dst))
    if int(hi) != info.max:                       # hi truncates below the maximum
      out = ctx.op("stablehlo.select", [_cmp(ctx, x, ctx.full(top, shape, src), "GE", src),
                                        ctx.full(info.max, shape, dst), out], out.type)
    return out
  custom = dtypes.custom_float_dtypes
  if (src in custom or dst in custom) and f32 not in (src, dst):
    x = lower_convert(ctx, x, src, f32)           # ml_dtypes casts go through float32
    if sk in "iub" and dst == dtypes.bfloat16:
      # IREE folds int->f32->bf16 into one cast that needs a libcall its
      # embedded linker lacks; round the (never NaN) float32 bits ourselves.
      return _f32_to_bf16_bits(ctx, x, shape)
    src = f32
  out = ctx.op("stablehlo.convert", [x], ctx.tensor_type(shape, dst))
  if src == dtypes.float8_e4m3fn:
    # IREE decodes the NaN 0xFF as -480 (not an e4m3fn value): make it NaN.
    bad = _cmp(ctx, out, ctx.full(-480, shape, dst), "EQ", dst)
    out = ctx.op("stablehlo.select", [bad, ctx.full(np.nan, shape, dst), out], out.type)
  return out


def _f32_to_bf16_bits(ctx, x, shape):
  # Round to nearest even on the bits: (b + 0x7FFF + lsb) >> 16 (finite inputs).
  u32 = ctx.tensor_type(shape, np.uint32)
  b = ctx.op("stablehlo.bitcast_convert", [x], u32)
  lsb = ctx.op("stablehlo.and", [ctx.op("stablehlo.shift_right_logical",
                                        [b, ctx.full(16, shape, np.uint32)], u32),
                                 ctx.full(1, shape, np.uint32)], u32)
  b = ctx.op("stablehlo.add", [ctx.op("stablehlo.add", [b, ctx.full(0x7FFF, shape, np.uint32)],
                                      u32), lsb], u32)
  b = ctx.op("stablehlo.shift_right_logical", [b, ctx.full(16, shape, np.uint32)], u32)
  b = ctx.op("stablehlo.convert", [b], ctx.tensor_type(shape, np.uint16))
  return ctx.op("stablehlo.bitcast_convert", [b], ctx.tensor_type(shape, dtypes.bfloat16))


@convert_element_type_p.def_lower
def _convert_lower(ctx, x, *, new_dtype, weak_type, sharding=None):
  return [lower_convert(ctx, x, ctx.avals_in[0].dtype, new_dtype)]
