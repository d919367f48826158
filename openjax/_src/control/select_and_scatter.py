"""``select_and_scatter_p``: XLA's SelectAndScatter with user computations,
as JAX defines it (the general form of ``select_and_scatter_add``, the
transpose helper of max pooling).

``select_and_scatter(operand, source, init_value)``: in every window of
``operand`` the ``select`` computation picks one element (scanning the
window in row-major order, the candidate replaces the kept element when
``select(kept, candidate)`` is false), and ``scatter`` combines that
window's ``source`` value into the result at the picked place; places no
window picks keep ``init_value``. Padding places are never picked. JAX gives
it no derivative (its users are derivatives themselves); it batches here.

Compiled, it is ``stablehlo.select_and_scatter`` where IREE compiles that
(windows that do not overlap, no padding) and otherwise a host call running
the impl (IREE rejects overlapping windows; ``window_lowering`` builds the
max/min-and-add case from parts for ``select_and_scatter_add``).
"""
from __future__ import annotations

import functools

import numpy as np

from openjax._src.core import (ClosedJaxpr, Primitive, ShapedArray, eval_trace, get_aval,
                               set_current_trace)
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.control._reduce_computation import apply_elementwise, trace_computation
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.reduce.window_util import (offset_slices, pad_dilate, pads_tuple,
                                                        reduce_window_shape)
from openjax._src.runtime import host_calls
from openjax._src import tree_util

__all__ = ["select_and_scatter", "select_and_scatter_p"]


# --------------------------------------------------------- select_and_scatter
select_and_scatter_p = Primitive("select_and_scatter")


def select_and_scatter(operand, select, window_dimensions, window_strides, padding, source,
                       init_value, scatter):
  """Scatter ``source`` (one value per window) with ``scatter`` onto the
  element ``select`` picks in each window of ``operand``; other places hold
  ``init_value`` (JAX's ``lax._select_and_scatter``)."""
  aval = ShapedArray((), get_aval(init_value).dtype)
  select_jaxpr = _trace_select(select, aval)
  scatter_jaxpr, _ = trace_computation("select_and_scatter", scatter, [aval],
                                       tree_util.tree_structure(0))
  return select_and_scatter_p.bind1(
      operand, source, init_value, select_jaxpr=select_jaxpr, select_consts=(),
      scatter_jaxpr=scatter_jaxpr, scatter_consts=(),
      window_dimensions=tuple(int(d) for d in window_dimensions),
      window_strides=tuple(int(s) for s in window_strides),
      padding=pads_tuple("select_and_scatter", padding))


def _trace_select(select, aval: ShapedArray) -> ClosedJaxpr:
  # ``select(kept, candidate)`` on two scalars: a boolean scalar.
  jaxpr, consts = trace_to_jaxpr(lambda x, y: [select(x, y)], [aval, aval])
  closed = ClosedJaxpr(jaxpr, consts)
  out = closed.out_avals[0]
  if out.shape != () or out.dtype != np.bool_:
    raise TypeError(f"select_and_scatter: select must return a boolean scalar, got "
                    f"{out.str_short()}; return a comparison such as lax.ge(x, y).")
  return closed


def _apply(closed: ClosedJaxpr, *args: np.ndarray) -> np.ndarray:
  # The scalar computation over 1-D arrays, on NumPy values.
  if args[0].size == 0:
    return np.empty((0,), get_aval(closed.out_avals[0]).dtype)
  with set_current_trace(eval_trace):
    out, = apply_elementwise(closed, list(args))
  return np.asarray(out)


@select_and_scatter_p.def_impl
def _select_and_scatter_impl(operand, source, init_value, *, select_jaxpr, select_consts,
                             scatter_jaxpr, scatter_consts, window_dimensions,
                             window_strides, padding):
  ones = (1,) * operand.ndim
  xp = pad_dilate(operand, np.zeros((), operand.dtype), padding, ones)
  valid = pad_dilate(np.ones(operand.shape, bool), np.zeros((), bool), padding, ones)
  out_shape = source.shape
  slices = offset_slices(out_shape, window_dimensions, window_strides, ones)
  picked = np.zeros(out_shape, np.int64)
  kept = np.array(xp[slices[0]]) if slices else np.zeros(out_shape, operand.dtype)
  have = np.array(valid[slices[0]]) if slices else np.zeros(out_shape, bool)
  for k, sl in enumerate(slices[1:], 1):
    cand, ok = xp[sl], valid[sl]
    keep = _apply(select_jaxpr, kept.ravel(), np.ascontiguousarray(cand).ravel())
    take = ok & ~(have & keep.reshape(out_shape).astype(bool))
    kept = np.where(take, cand, kept)
    picked = np.where(take, k, picked)
    have |= ok
  out = np.full(xp.shape, init_value, source.dtype)
  for k, sl in enumerate(slices):
    mask = have & (picked == k)
    if mask.any():
      region = out[sl]
      region[mask] = _apply(scatter_jaxpr, region[mask], source[mask])
  cut = tuple(slice(lo, lo + n) for (lo, _), n in zip(padding, operand.shape))
  return [np.ascontiguousarray(out[cut])]


@select_and_scatter_p.def_abstract_eval
def _select_and_scatter_abstract_eval(operand, source, init_value, *, window_dimensions,
                                      window_strides, padding, **_):
  if len(window_dimensions) != len(window_strides):
    raise TypeError("select_and_scatter got inconsistent window_strides and window_dimensions: "
                    f"got window_strides {window_strides} and window_dimensions "
                    f"{window_dimensions}.")
  if operand.dtype != source.dtype or operand.dtype != init_value.dtype:
    raise TypeError("select_and_scatter: operand, source and init_value must have one dtype, "
                    f"got {operand.str_short()}, {source.str_short()} and "
                    f"{init_value.str_short()}; cast them with lax.convert_element_type.")
  ones = (1,) * operand.ndim
  shape = reduce_window_shape("select_and_scatter", operand, window_dimensions,
                              window_strides, padding, ones, ones)
  if source.shape != shape:
    raise TypeError(f"select_and_scatter: source is {source.str_short()} but the windows of "
                    f"operand {operand.str_short()} give shape {shape}; pass one source value "
                    "per window.")
  return [ShapedArray(operand.shape, operand.dtype)]


select_and_scatter_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)
select_and_scatter_p.mark_not_applicable(
    "jvp", "JAX defines no derivative of select_and_scatter (it only appears inside the "
    "derivative of max pooling, as the lowering of select_and_scatter_add)")


@select_and_scatter_p.def_batch
def _select_and_scatter_batch(vals, dims, *, window_dimensions, window_strides, padding,
                              **params):
  operand, source, init_value = vals
  if dims[2] is not None:
    raise NotImplementedError("select_and_scatter: batching over init_value is not "
                              "supported; pass an unbatched scalar init_value.")
  size = axis_size(vals, dims)
  operand = bdim_at_front(operand, dims[0], size)
  source = bdim_at_front(source, dims[1], size)
  out = select_and_scatter_p.bind1(
      operand, source, init_value, window_dimensions=(1, *window_dimensions),
      window_strides=(1, *window_strides), padding=((0, 0), *padding), **params)
  return [out], [0]


def _host_rule(ctx, operand, source, init_value, **params):
  run = functools.partial(_select_and_scatter_impl, **params)
  host = host_calls.register(run, ctx.avals_in, ctx.avals_out)
  return ctx.call_import(host.symbol, [operand, source, init_value], ctx.avals_out)


@select_and_scatter_p.def_lower
def _select_and_scatter_lower(ctx, operand, source, init_value, *, select_jaxpr, select_consts,
                              scatter_jaxpr, scatter_consts, window_dimensions,
                              window_strides, padding):
  overlap = any(s < w for s, w in zip(window_strides, window_dimensions))
  if overlap or any(p != (0, 0) for p in padding):
    return _host_rule(ctx, operand, source, init_value, select_jaxpr=select_jaxpr,
                      select_consts=select_consts, scatter_jaxpr=scatter_jaxpr,
                      scatter_consts=scatter_consts, window_dimensions=window_dimensions,
                      window_strides=window_strides, padding=padding)
  scalar = ctx.aval_type(ShapedArray((), ctx.avals_in[0].dtype))
  with ctx.region([scalar, scalar]) as select_body:
    ctx.ret(ctx.lower_jaxpr_inline(select_jaxpr, select_body.args))
  with ctx.region([scalar, scalar]) as scatter_body:
    ctx.ret(ctx.lower_jaxpr_inline(scatter_jaxpr, scatter_body.args))
  pads = "dense<[" + ", ".join(f"[{lo}, {hi}]" for lo, hi in padding) + \
      f"]> : tensor<{len(padding)}x2xi64>"
  return [ctx.op("stablehlo.select_and_scatter", [operand, source, init_value],
                 ctx.avals_out[0], regions=[select_body, scatter_body],
                 attrs={"window_dimensions": window_dimensions,
                        "window_strides": window_strides, "padding": pads})]
