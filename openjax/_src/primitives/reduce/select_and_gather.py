"""``select_and_gather_add`` and ``select_and_scatter_add``: the derivatives
of windowed max and min (max pooling), as in JAX.

``select_and_gather_add(tangents, operand)`` picks, in every window of
``operand``, the element that ``select_prim`` selects (``ge``: the maximum,
``le``: the minimum; the first one in row-major window order on ties) and
returns the tangent at that place: the JVP of ``reduce_window_max``/``min``.
It is linear in ``tangents``; its transpose, ``select_and_scatter_add(source,
operand)``, adds each window's ``source`` value at the selected place, and
that one's transpose is ``select_and_gather_add`` again.
"""
from __future__ import annotations

import numpy as np

from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules_ops import varying_shape_spec
from openjax._src.errors import ShardingTypeError
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import lower_convert
from openjax._src.primitives.base.reduce_lowering import acc_dtype
from openjax._src.primitives.base.util import in_float32, quiet
from openjax._src.primitives.elementwise.logic import ge_p, le_p
from openjax._src.primitives.reduce.window_lowering import (explicit_pad, scatter_to_selected,
                                                            select_in_windows)
from openjax._src.primitives.reduce.window_util import (dilate_shape, gather_selected,
                                                        max_identity, min_identity,
                                                        offset_slices, pad_dilate,
                                                        reduce_window_shape, window_args,
                                                        window_select)
from openjax._src.primitives.shape.shape import pad, slice

__all__ = ["select_and_gather_add_p", "select_and_scatter_add_p"]


def _selector(select_prim):
  """(identity of the selection, comparison direction)."""
  if select_prim is ge_p:
    return max_identity, "GE"
  if select_prim is le_p:
    return min_identity, "LE"
  raise ValueError(f"select_prim must be lax.ge_p or lax.le_p, got {select_prim}")


def _window_cost(*avals, avals_out, window_dimensions, **_):
  size = int(np.prod(window_dimensions, dtype=np.int64))
  n = max(int(np.prod(a.shape, dtype=np.int64)) for a in (*avals, *avals_out))
  return {"flops": float(n * size)}


# ------------------------------------------------------ select_and_gather_add
select_and_gather_add_p = Primitive("select_and_gather_add", kind="linear")


def select_and_gather_add(tangents, operand, select_prim, window_dimensions, window_strides,
                          padding, base_dilation, window_dilation):
  """The tangent at the element ``select_prim`` (``lax.ge_p``: maximum,
  ``lax.le_p``: minimum) picks in every window of ``operand``."""
  return select_and_gather_add_p.bind1(
      tangents, operand, select_prim=select_prim,
      window_dimensions=tuple(window_dimensions), window_strides=tuple(window_strides),
      padding=tuple(tuple(p) for p in padding), base_dilation=tuple(base_dilation),
      window_dilation=tuple(window_dilation))


@select_and_gather_add_p.def_impl
@quiet
def _select_and_gather_add_impl(tangents, operand, *, select_prim, window_dimensions,
                                window_strides, padding, base_dilation, window_dilation):
  params = (window_dimensions, window_strides, padding, base_dilation, window_dilation)
  x, _ = in_float32(operand)
  picked = window_select(x, select_prim is ge_p, *params)
  if not picked.size:
    return [np.zeros(picked.shape, tangents.dtype)]
  tp = pad_dilate(tangents, np.zeros((), tangents.dtype), padding, base_dilation)
  return [gather_selected(tp, picked, window_dimensions, window_strides, window_dilation)]


@select_and_gather_add_p.def_abstract_eval
def _select_and_gather_add_abstract_eval(tangents, operand, *, select_prim, window_dimensions,
                                         window_strides, padding, base_dilation,
                                         window_dilation):
  if tangents.shape != operand.shape:
    raise TypeError("select_and_gather_add tangents and operand shapes must match, got "
                    f"{tangents.shape} and {operand.shape}.")
  _selector(select_prim)
  shape = reduce_window_shape("select_and_gather_add", operand, window_dimensions,
                              window_strides, padding, base_dilation, window_dilation)
  return [ShapedArray(shape, tangents.dtype, tangents.weak_type)]


@select_and_gather_add_p.def_sharding_rule
def _select_and_gather_add_sharding_rule(specs, avals, out_avals, **params):
  # Tangents built whole (instantiated zeros) take the operand's layout.
  if specs[0] != specs[1] and not all(p is None for p in specs[0]):
    raise ShardingTypeError("select_and_gather_add tangents and operand shardings must match, "
                            f"got {specs[0]} and {specs[1]}.")
  return [varying_shape_spec("reduce_window", specs[1], avals[1], out_avals[0].shape)]


@select_and_gather_add_p.def_jvp
def _select_and_gather_add_jvp(primals, tangents, **params):
  # Linear in the tangents; piecewise constant in the operand.
  (t, x), (g, _) = primals, tangents
  out = select_and_gather_add_p.bind1(t, x, **params)
  if type(g) is Zero:
    return [out], [Zero.from_primal_value(out)]
  return [out], [select_and_gather_add_p.bind1(g, x, **params)]


@select_and_gather_add_p.def_transpose
def _select_and_gather_add_transpose(cts, tangents, operand, *, select_prim, window_dimensions,
                                     window_strides, padding, base_dilation, window_dilation):
  ct, = cts
  assert is_undefined_primal(tangents) and not is_undefined_primal(operand)
  if any(d != 1 for d in window_dilation):
    raise NotImplementedError("VJP not implemented for select_and_gather (MaxPool) with window "
                              f"dilation, got window_dilation={window_dilation}.")
  if type(ct) is Zero:
    return [Zero(tangents.aval), None]
  identity, _ = _selector(select_prim)
  dilated = any(d != 1 for d in base_dilation)
  if dilated:
    # Scatter onto the dilated operand (holes hold the identity, so they are
    # never selected), then keep the real positions.
    dt = np.dtype(tangents.aval.dtype)
    operand = pad(operand, identity(dt), [(0, 0, d - 1) for d in base_dilation])
  out = select_and_scatter_add(ct, operand, select_prim, window_dimensions, window_strides,
                               padding)
  if dilated:
    out = slice(out, (0,) * len(base_dilation), get_aval(out).shape, base_dilation)
  return [out, None]


@select_and_gather_add_p.def_batch
def _select_and_gather_add_batch(vals, dims, *, select_prim, window_dimensions, window_strides,
                                 padding, base_dilation, window_dilation):
  size = axis_size(vals, dims)
  t, x = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
  out = select_and_gather_add_p.bind1(
      t, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
      window_strides=(1, *window_strides), padding=((0, 0), *padding),
      base_dilation=(1, *base_dilation), window_dilation=(1, *window_dilation))
  return [out], [0]


@select_and_gather_add_p.def_lower
def _select_and_gather_add_lower(ctx, tangents, operand, *, select_prim, **params):
  _, direction = _selector(select_prim)
  t_aval, x_aval = ctx.avals_in
  out = ctx.avals_out[0]
  acc = acc_dtype(x_aval.dtype)
  t_acc = acc_dtype(t_aval.dtype)
  x = lower_convert(ctx, operand, x_aval.dtype, acc)
  t = lower_convert(ctx, tangents, t_aval.dtype, t_acc)
  res = select_in_windows(ctx, x, acc, direction == "GE", t, t_acc,
                          *window_args(params))
  return [lower_convert(ctx, res, t_acc, out.dtype)]


select_and_gather_add_p.def_cost(_window_cost)


# ----------------------------------------------------- select_and_scatter_add
select_and_scatter_add_p = Primitive("select_and_scatter_add", kind="linear")


def select_and_scatter_add(source, operand, select_prim, window_dimensions, window_strides,
                           padding):
  """Add each window's ``source`` value at the element of ``operand`` that
  ``select_prim`` picks in that window (the transpose of
  ``select_and_gather_add``)."""
  return select_and_scatter_add_p.bind1(
      source, operand, select_prim=select_prim, window_dimensions=tuple(window_dimensions),
      window_strides=tuple(window_strides), padding=tuple(tuple(p) for p in padding))


@select_and_scatter_add_p.def_impl
@quiet
def _select_and_scatter_add_impl(source, operand, *, select_prim, window_dimensions,
                                 window_strides, padding):
  ones = (1,) * operand.ndim
  x, _ = in_float32(operand)
  src, dt = in_float32(source)
  picked = window_select(x, select_prim is ge_p, window_dimensions, window_strides,
                         padding, ones, ones)
  padded = dilate_shape(x.shape, ones)
  out = np.zeros(tuple(max(d + lo + hi, 0) for d, (lo, hi) in zip(padded, padding)), src.dtype)
  if picked.size:
    # Windows placed at one position never share an element: one masked,
    # strided add per window position.
    slices = offset_slices(picked.shape, window_dimensions, window_strides, ones)
    for k, sl in enumerate(slices):
      out[sl] += np.where(picked == k, src, np.zeros((), src.dtype))
  # Undo the padding: negative padding restores cut places as zeros.
  out = pad_dilate(out, np.zeros((), out.dtype), tuple((-lo, -hi) for lo, hi in padding),
                   ones)
  return [out.astype(dt)]


@select_and_scatter_add_p.def_abstract_eval
def _select_and_scatter_add_abstract_eval(source, operand, *, select_prim, window_dimensions,
                                          window_strides, padding):
  _selector(select_prim)
  ones = (1,) * operand.ndim
  shape = reduce_window_shape("select_and_scatter_add", operand, window_dimensions,
                              window_strides, padding, ones, ones)
  if source.shape != shape:
    raise TypeError(f"select_and_scatter_add: source is {source.str_short()} but the windows "
                    f"of operand {operand.str_short()} give shape {shape}; pass one source "
                    "value per window.")
  return [ShapedArray(operand.shape, source.dtype, source.weak_type)]


@select_and_scatter_add_p.def_sharding_rule
def _select_and_scatter_add_sharding_rule(specs, avals, out_avals, **params):
  return [tuple(specs[1])]   # the operand's (JAX's rule)


@select_and_scatter_add_p.def_jvp
def _select_and_scatter_add_jvp(primals, tangents, **params):
  (s, x), (g, _) = primals, tangents
  out = select_and_scatter_add_p.bind1(s, x, **params)
  if type(g) is Zero:
    return [out], [Zero.from_primal_value(out)]
  return [out], [select_and_scatter_add_p.bind1(g, x, **params)]


@select_and_scatter_add_p.def_transpose
def _select_and_scatter_add_transpose(cts, source, operand, *, select_prim, window_dimensions,
                                      window_strides, padding):
  ct, = cts
  assert is_undefined_primal(source) and not is_undefined_primal(operand)
  if type(ct) is Zero:
    return [Zero(source.aval), None]
  ones = (1,) * len(window_dimensions)
  return [select_and_gather_add(ct, operand, select_prim, window_dimensions, window_strides,
                                padding, ones, ones), None]


@select_and_scatter_add_p.def_batch
def _select_and_scatter_add_batch(vals, dims, *, select_prim, window_dimensions, window_strides,
                                  padding):
  size = axis_size(vals, dims)
  s, x = (bdim_at_front(v, d, size) for v, d in zip(vals, dims))
  out = select_and_scatter_add_p.bind1(
      s, x, select_prim=select_prim, window_dimensions=(1, *window_dimensions),
      window_strides=(1, *window_strides), padding=((0, 0), *padding))
  return [out], [0]


@select_and_scatter_add_p.def_lower
def _select_and_scatter_add_lower(ctx, source, operand, *, select_prim, window_dimensions,
                                  window_strides, padding):
  # IREE compiles stablehlo.select_and_scatter only for windows that do not
  # overlap and without padding, so it is built from parts (see
  # window_lowering.scatter_to_selected), on the operand padded with the
  # selection's identity; the result is cut back to the operand's shape.
  identity, direction = _selector(select_prim)
  s_aval, x_aval = ctx.avals_in
  out = ctx.avals_out[0]
  acc = acc_dtype(x_aval.dtype)
  s_acc = acc_dtype(s_aval.dtype)
  ones = (1,) * len(window_dimensions)
  x = lower_convert(ctx, operand, x_aval.dtype, acc)
  src = lower_convert(ctx, source, s_aval.dtype, s_acc)
  padded = any(p != (0, 0) for p in padding)
  if padded:
    x = explicit_pad(ctx, x, ctx.constant(np.asarray(identity(acc))), padding, ones)
  res = scatter_to_selected(ctx, x, acc, direction == "GE", src, s_acc, window_dimensions,
                            window_strides)
  if padded:
    res = explicit_pad(ctx, res, ctx.constant(np.zeros((), s_acc)),
                       tuple((-lo, -hi) for lo, hi in padding), ones)
  return [lower_convert(ctx, res, s_acc, out.dtype)]


select_and_scatter_add_p.def_cost(_window_cost)
