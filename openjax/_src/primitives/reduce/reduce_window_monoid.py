"""The monoid members of the reduce_window family: ``reduce_window_sum``,
``reduce_window_max`` and ``reduce_window_min`` (``reduce_window`` with any
computation, and the ``lax.reduce_window`` wrapper, are higher-order:
``control/reduce_window.py``).

Every member has the parameters ``window_dimensions``, ``window_strides``,
``padding`` (``(low, high)`` per axis), ``base_dilation`` and
``window_dilation``, as in JAX. Impls pad and dilate the operand once, then
combine one strided slice per window position (one whole-array NumPy
operation each; a ``sliding_window_view`` reduction for large windows). Max
and min differentiate through ``select_and_gather_add``; sum is linear and
transposes to a padded ``reduce_window_sum``, as a convolution transposes.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules_ops import varying_shape_rule
from openjax._src.primitives.base.convert import lower_convert
from openjax._src.primitives.base.reduce_lowering import acc_dtype, binary, combiner, scalar_region
from openjax._src.primitives.base.structural import defjvp, deflinear
from openjax._src.primitives.base.util import in_float32, quiet
from openjax._src.primitives.elementwise.logic import ge_p, le_p
from openjax._src.primitives.reduce.select_and_gather import select_and_gather_add
from openjax._src.primitives.reduce.window_lowering import lower_reduce_window
from openjax._src.primitives.reduce.window_util import (LOOP_WINDOW_SIZE, dilate_shape,
                                                        max_identity, min_identity,
                                                        offset_slices, pad_dilate, pads_tuple,
                                                        reduce_window_shape, window_args,
                                                        window_reduce, window_shape)
from openjax._src.primitives.shape.shape import pad

__all__ = ["reduce_window_sum_p", "reduce_window_max_p", "reduce_window_min_p",
           "reduce_window_shape_tuple"]

def with_unit_axis(params: dict, axis: int) -> dict:
  """Window parameters for an operand with a new axis at ``axis`` that every
  window covers with extent 1 (how batching maps a windowed reduction)."""
  unit = {"window_dimensions": 1, "window_strides": 1, "padding": (0, 0),
          "base_dilation": 1, "window_dilation": 1}
  out = dict(params)
  for k, v in unit.items():
    vals = list(params[k])
    vals.insert(axis, v)
    out[k] = tuple(vals)
  return out


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple[int, ...]:
  """The shape of a windowed reduction of an operand of ``operand_shape``."""
  ones = (1,) * len(operand_shape)
  padding = pads_tuple("reduce_window_shape_tuple", padding)
  base_dilation = ones if base_dilation is None else tuple(base_dilation)
  window_dilation = ones if window_dilation is None else tuple(window_dilation)
  return window_shape(tuple(operand_shape), tuple(window_dimensions), tuple(window_strides),
                      padding, base_dilation, window_dilation)


def window_cost(x, *, avals_out, window_dimensions, **_):
  size = int(np.prod(window_dimensions, dtype=np.int64))
  return {"flops": float(int(np.prod(avals_out[0].shape, dtype=np.int64)) * max(size - 1, 1))}


# ------------------------------------------------ sum / max / min (monoids)
_UFUNCS = {"add": np.add, "max": np.maximum, "min": np.minimum}


def _monoid_impl(kind: str, identity):
  ufunc = _UFUNCS[kind]

  @quiet
  def impl(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    xc, dt = in_float32(x)
    out = window_reduce(xc, ufunc, identity(xc.dtype), window_dimensions, window_strides,
                        padding, base_dilation, window_dilation)
    return [np.asarray(out).astype(dt)]
  return impl


def _monoid_eval_kernel(kind: str, identity):
  ufunc = _UFUNCS[kind]

  def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    # The impl's loop over window positions with its bookkeeping (window
    # shape, padding, one strided slice per position) done once per plan:
    # ~40 us of Python a call at 10 elements. NumPy dtypes only (ml_dtypes
    # floats compute in float32 in the impl), small windows only (large ones
    # reduce a window view there).
    dt = np.dtype(x.dtype)
    if dt in dtypes.custom_float_dtypes or x.ndim == 0:
      return None
    params = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    out_shape = window_shape(x.shape, *params)
    size = int(np.prod(window_dimensions, dtype=np.int64))
    if 0 in out_shape or size > LOOP_WINDOW_SIZE:
      return None
    init = identity(dt)
    plain = all(p == (0, 0) for p in padding) and all(b == 1 for b in base_dilation)
    first, *rest = offset_slices(out_shape, window_dimensions, window_strides, window_dilation)

    def kernel(v):
      xp = v if plain else pad_dilate(v, init, padding, base_dilation)
      acc = xp[first].copy()
      for sl in rest:
        ufunc(acc, xp[sl], out=acc)
      return acc
    return kernel
  return rule


def _monoid_abstract_eval(name: str):
  def rule(x, *, window_dimensions, window_strides, padding, base_dilation, window_dilation):
    if name == "reduce_window_sum" and not dtypes.issubdtype(x.dtype, np.number):
      raise TypeError("operand to reduce_window_sum must have a number dtype, got "
                      f"{np.dtype(x.dtype).name}")
    shape = reduce_window_shape(name, x, window_dimensions, window_strides, padding,
                                base_dilation, window_dilation)
    return [ShapedArray(shape, x.dtype, x.weak_type)]
  return rule


def _monoid_batch(prim: Primitive):
  def rule(vals, dims, **params):
    (x,), (d,) = vals, dims
    return prim.bind(x, **with_unit_axis(params, d)), [d]
  return rule


def _monoid_lower(kind: str, identity):
  def rule(ctx, x, **params):
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    acc = acc_dtype(aval.dtype)
    init = np.asarray(identity(acc)).astype(acc)
    flip = None
    if dtypes.kind(acc) == "u":
      # IREE cannot compile reduce_window on unsigned integers: reduce the
      # bits as the signed type of the same width (wrapping sums agree; for
      # max/min the flipped top bit makes signed order the unsigned order).
      sdt = np.dtype(f"i{acc.itemsize}")
      x = ctx.op("stablehlo.bitcast_convert", [x], ctx.tensor_type(aval.shape, sdt))
      init = init.view(sdt)
      if kind != "add":
        flip = np.iinfo(sdt).min
        x = binary(ctx, "xor", x, ctx.full(flip, aval.shape, sdt))
        init = init ^ flip
      acc = sdt
    else:
      x = lower_convert(ctx, x, aval.dtype, acc)
    body = scalar_region(ctx, acc, combiner(kind, acc))
    y = lower_reduce_window(ctx, [x], [ctx.constant(init)], body,
                            [ctx.tensor_type(out.shape, acc)], *window_args(params))[0]
    if dtypes.kind(aval.dtype) == "u":
      if flip is not None:
        y = binary(ctx, "xor", y, ctx.full(flip, out.shape, acc))
      return [ctx.op("stablehlo.bitcast_convert", [y], ctx.aval_type(out))]
    return [lower_convert(ctx, y, acc, out.dtype)]
  return rule


def _monoid_primitive(name: str, monoid: str, identity, **kw) -> Primitive:
  """A windowed reduction with the ``monoid`` (``add``, ``max``, ``min``) and
  its ``identity(dtype)``: impl, abstract evaluation, batching, lowering and
  cost from one row; differentiation follows each row."""
  p = Primitive(name, **kw)
  p.def_impl(_monoid_impl(monoid, identity))
  p.def_eval_kernel(_monoid_eval_kernel(monoid, identity))
  p.def_abstract_eval(_monoid_abstract_eval(name))
  p.def_sharding_rule(varying_shape_rule("reduce_window"))
  p.def_batch(_monoid_batch(p))
  p.def_lower(_monoid_lower(monoid, identity))
  p.def_cost(window_cost)
  return p


reduce_window_sum_p = _monoid_primitive("reduce_window_sum", "add", lambda dt: np.zeros((), dt),
                                        kind="linear")


def _reduce_window_sum_transpose(ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
  # The transpose of a windowed sum is a windowed sum over the cotangent
  # spread back onto the dilated input grid (strides become holes), padded
  # so that every input position sees each window that covered it; a
  # stride of ``base_dilation`` then keeps only the real input positions.
  in_shape = x.aval.shape
  ct_shape = get_aval(ct).shape
  in_span = dilate_shape(in_shape, base_dilation)
  win_span = dilate_shape(window_dimensions, window_dilation)
  ct_span = dilate_shape(ct_shape, window_strides)
  config = []
  for n, w, c, (lo, _), s in zip(in_span, win_span, ct_span, padding, window_strides):
    before = w - lo - 1
    after = n + w - 1 - c - before
    config.append((before, after, s - 1))
  padded = pad(ct, np.zeros((), get_aval(ct).dtype), config)
  ones = (1,) * len(in_shape)
  out = reduce_window_sum_p.bind1(padded, window_dimensions=tuple(window_dimensions),
                                  window_strides=tuple(base_dilation),
                                  padding=((0, 0),) * len(in_shape), base_dilation=ones,
                                  window_dilation=tuple(window_dilation))
  return [out]


deflinear(reduce_window_sum_p, _reduce_window_sum_transpose)


def _chooser_jvp(select_prim):
  # The tangent at the window's chosen (max or min) element.
  def jvp(g, x, **params):
    return select_and_gather_add(g, x, select_prim, *window_args(params))
  return jvp


reduce_window_max_p = _monoid_primitive("reduce_window_max", "max", max_identity)
defjvp(reduce_window_max_p, _chooser_jvp(ge_p))

reduce_window_min_p = _monoid_primitive("reduce_window_min", "min", min_identity)
defjvp(reduce_window_min_p, _chooser_jvp(le_p))
