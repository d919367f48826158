"""Lowering of the scatter primitives to StableHLO (``stablehlo.scatter``),
shared by every scatter block in ``gather_scatter.py``.

IREE's scatter neither drops out-of-bounds windows (it writes out of bounds)
nor accepts every dimension-number layout, so the rule drops windows
explicitly and rewrites each scatter into the form IREE handles; the
combiner of ``.at[].apply`` runs as a ``stablehlo.map`` outside the scatter.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core import ClosedJaxpr, ShapedArray
from openjax._src.lowering.context import LoweringContext
from openjax._src.lowering.mlir_types import split_tensor_type
from openjax._src.primitives.index.indexing_util import (GatherScatterMode, ScatterDimensionNumbers,
                                                         cast_scalar, lower_clamp_index_vectors,
                                                         lower_index_dtype, lower_unchanged,
                                                         scatter_dnums_attr, scatter_window_shape)

__all__ = ["scatter_lowering", "combine_with", "identity_of", "extreme_value"]


def extreme_value(dtype, largest: bool):
  """The identity of minimum (``largest``) or maximum: +-inf, or the
  dtype's extreme finite value where it has no infinity; True/False for bool."""
  dt = np.dtype(dtype)
  if dt == np.bool_:
    return np.array(largest)
  if dtypes.issubdtype(dt, np.integer):
    info = dtypes.iinfo(dt)
    return np.array(info.max if largest else info.min, dt)
  if dtypes.issubdtype(dt, np.complexfloating):   # lexicographic order
    v = np.inf if largest else -np.inf
    return np.array(complex(v, v), dt)
  inf = np.array(np.inf if largest else -np.inf).astype(dt)
  if np.isinf(float(inf)):
    return inf
  info = dtypes.finfo(dt)
  return np.array(info.max if largest else info.min, dt)




def lower_iree_scatter_form(ctx, operand, op_shape, dtype, indices, idx_shape, updates_shape,
                            dn: ScatterDimensionNumbers, window_shape, index_dtype):
  """Rewrite a scatter into the form IREE's scatter accepts (its conversion
  fails on the others): window dimensions that are not indexed span the whole
  operand dimension, indexed dimensions are inserted, inserted dimensions are
  indexed, there is at least one index-like (indexed or batching) dimension,
  and several index-like dimensions lead the operand.

  A partial window along a dimension that is not indexed scatters into the
  leading slice of the operand (written back afterwards); a window along an
  indexed dimension is expanded into more index vectors (that window
  dimension of the updates becomes a scatter dimension); an inserted
  dimension that is not indexed gets a zero index component, and so does a
  new leading unit dimension when nothing is indexed; the operand is
  transposed to lead with its index-like dimensions. Returns
  ``(operand, indices, dn, finish)``: ``finish(result)`` undoes the
  rewrites of the operand."""
  rank = len(op_shape)
  shape = tuple(op_shape)
  ishape = tuple(idx_shape)
  sdims = list(dn.scatter_dims_to_operand_dims)
  batching = list(dn.operand_batching_dims)
  inserted = list(dn.inserted_window_dims)
  sib = tuple(dn.scatter_indices_batching_dims)
  window = tuple(dn.update_window_dims)
  undo = []

  def ttype(shp, dt=dtype):
    return ctx.tensor_type(shp, dt)

  if not sdims and not batching:   # a new leading unit dimension, inserted
    inner_shape, shape = shape, (1,) + shape
    operand = ctx.op("stablehlo.reshape", [operand], ttype(shape))
    undo.append(lambda r: ctx.op("stablehlo.reshape", [r], ttype(inner_shape)))
    inserted = [0] + [d + 1 for d in inserted]
    window_shape = (1,) + tuple(window_shape)
    rank += 1
  window_operand_dims = [d for d in range(rank) if d not in inserted and d not in batching]
  upd_dim_of = dict(zip(window_operand_dims, window))

  partial = [d for d in window_operand_dims if d not in sdims and window_shape[d] < shape[d]]
  if partial:   # scatter into operand[:w] along them, then write that back
    whole, whole_shape = operand, shape
    shape = tuple(window_shape[d] if d in partial else s for d, s in enumerate(shape))
    operand = ctx.op("stablehlo.slice", [operand], ttype(shape),
                     attrs={"start_indices": (0,) * rank, "limit_indices": shape,
                            "strides": (1,) * rank})
    zero = ctx.constant(np.zeros((), index_dtype))
    undo.append(lambda r, n=rank: ctx.op("stablehlo.dynamic_update_slice",
                                         [whole, r] + [zero] * n, ttype(whole_shape)))
  expand = [d for d in sdims if d in upd_dim_of]
  if expand:
    expanded_upd = {upd_dim_of[d] for d in expand}
    window = tuple(p for p in window if p not in expanded_upd)
    positions = [p for p in range(len(updates_shape)) if p not in window]
    orig_scatter = [p for p in range(len(updates_shape)) if p not in dn.update_window_dims]
    new_of_batch = [positions.index(p) for p in orig_scatter]   # old indices dim -> new
    lead = tuple(updates_shape[p] for p in positions)
    k = len(sdims)
    ishape = lead + (k,)
    indices = ctx.broadcast_in_dim(indices, ishape, tuple(new_of_batch) + (len(lead),))
    col_t = ttype(lead + (1,), index_dtype)
    cols = [ctx.op("stablehlo.iota", [], col_t,
                   attrs={"iota_dimension": positions.index(upd_dim_of[d])})
            if d in expand else ctx.full(0, lead + (1,), index_dtype) for d in sdims]
    offs = cols[0] if k == 1 else ctx.op("stablehlo.concatenate", cols,
                                          ttype(ishape, index_dtype),
                                          attrs={"dimension": len(lead)})
    indices = ctx.op("stablehlo.add", [indices, offs], ttype(ishape, index_dtype))
    sib = tuple(new_of_batch[j] for j in sib)
  extra = [d for d in inserted if d not in sdims]
  if extra:   # inserted but not indexed: index them at 0
    lead = ishape[:-1]
    zeros = ctx.full(0, lead + (len(extra),), index_dtype)
    ishape = lead + (ishape[-1] + len(extra),)
    indices = zeros if not sdims else ctx.op(
        "stablehlo.concatenate", [indices, zeros], ttype(ishape, index_dtype),
        attrs={"dimension": len(lead)})
    sdims += extra
  lead_dims = batching + sdims
  if len(lead_dims) > 1 and set(lead_dims) != set(range(len(lead_dims))):
    perm = lead_dims + [d for d in range(rank) if d not in lead_dims]
    orig_shape, shape = shape, tuple(shape[d] for d in perm)
    operand = ctx.op("stablehlo.transpose", [operand], ttype(shape),
                     attrs={"permutation": tuple(perm)})
    inverse = tuple(int(i) for i in np.argsort(perm))
    undo.append(lambda r: ctx.op("stablehlo.transpose", [r], ttype(orig_shape),
                                 attrs={"permutation": inverse}))
    batching = list(range(len(batching)))
    sdims = list(range(len(batching), len(lead_dims)))
  new_dn = ScatterDimensionNumbers(
      update_window_dims=window, inserted_window_dims=tuple(sorted(sdims)),
      scatter_dims_to_operand_dims=tuple(sdims), operand_batching_dims=tuple(batching),
      scatter_indices_batching_dims=sib)

  def finish(res):
    for f in reversed(undo):
      res = f(res)
    return res
  return operand, indices, new_dn, finish


def scatter_lowering(combiner, drop_identity=None, widen=False):
  """The lowering rule of a scatter: ``combiner(ctx, old, update, scalar_type)``
  builds its region's result. Windows not wholly in bounds (FILL_OR_DROP,
  PROMISE_IN_BOUNDS) are dropped explicitly, since IREE writes them out of
  bounds: with ``drop_identity(dtype)`` their updates become the combiner's
  identity at clamped indices; without (replace, ``.at[].apply``) they are
  sent into padding added to the operand and sliced off afterwards. With
  ``widen``, bfloat16/float8 (int4) values accumulate in float32 (int32) and
  round once, as the impl does."""
  def rule(ctx, operand, indices, updates, *, dimension_numbers, indices_are_sorted,
           unique_indices, mode, update_jaxpr, update_consts):
    op_aval, idx_aval, upd_aval = ctx.avals_in
    out = ctx.avals_out[0]
    if 0 in op_aval.shape or 0 in upd_aval.shape:
      return [operand]
    if update_jaxpr is not None and not _uses_update(update_jaxpr):
      return [_lower_apply(ctx, operand, indices, dimension_numbers, indices_are_sorted,
                           unique_indices, mode, update_jaxpr, update_consts)]
    if widen and out.dtype in dtypes.custom_float_dtypes | dtypes.custom_int_dtypes:
      wide = np.dtype(np.float32 if out.dtype in dtypes.custom_float_dtypes else np.int32)
      operand = ctx.convert(operand, wide, op_aval.shape)
      updates = ctx.convert(updates, wide, upd_aval.shape)
      out, upd_aval = ShapedArray(out.shape, wide), ShapedArray(upd_aval.shape, wide)
    dn = dimension_numbers
    wshape = scatter_window_shape(op_aval.shape, upd_aval.shape, dn)
    sdims = tuple(dn.scatter_dims_to_operand_dims)
    uppers = [op_aval.shape[d] - wshape[d] for d in sdims]
    res_shape = op_aval.shape
    itype = lower_index_dtype(*op_aval.shape)
    if uppers:
      clamped = lower_clamp_index_vectors(ctx, indices, idx_aval, uppers)
      identity = None if drop_identity is None else drop_identity(out.dtype)
      if mode == GatherScatterMode.CLIP:
        indices, unique_indices = clamped, False
      elif identity is not None:
        ok = lower_unchanged(ctx, indices, clamped, idx_aval)
        scatter_dims = tuple(d for d in range(upd_aval.ndim) if d not in dn.update_window_dims)
        mask = ctx.broadcast_in_dim(ok, upd_aval.shape, scatter_dims)
        updates = ctx.op("stablehlo.select", [mask, updates,
                                              ctx.full(identity, upd_aval.shape, out.dtype)],
                         ctx.aval_type(upd_aval))
        indices, unique_indices = clamped, False
      else:
        ok = lower_unchanged(ctx, indices, clamped, idx_aval)
        indices_are_sorted = False   # out-of-bounds windows now index the padding
        res_shape = tuple(s + (wshape[d] if d in sdims else 0)
                          for d, s in enumerate(op_aval.shape))
        itype = lower_index_dtype(*res_shape)
        shape = idx_aval.shape
        far = np.array([op_aval.shape[d] for d in sdims], itype)
        far = ctx.broadcast_in_dim(ctx.constant(far), shape, (len(shape) - 1,))
        okb = ctx.broadcast_in_dim(ok, shape, tuple(range(len(shape) - 1)))
        indices = ctx.op("stablehlo.select", [okb, ctx.convert(clamped, itype, shape), far],
                         ctx.tensor_type(shape, itype))
        # (a concatenation: IREE's compiler crashes on a complex stablehlo.pad)
        cur = list(op_aval.shape)
        for d in sdims:
          block = tuple(cur[:d]) + (wshape[d],) + tuple(cur[d + 1:])
          cur[d] += wshape[d]
          operand = ctx.op("stablehlo.concatenate",
                           [operand, ctx.full(0, block, out.dtype)],
                           ctx.tensor_type(cur, out.dtype), attrs={"dimension": d})
    indices = ctx.convert(indices, itype, idx_aval.shape)
    given_dn = dn
    operand, indices, dn, finish = lower_iree_scatter_form(
        ctx, operand, res_shape, out.dtype, indices, idx_aval.shape, upd_aval.shape, dn, wshape,
        itype)
    scalar = ctx.tensor_type((), out.dtype)
    with ctx.region([scalar, scalar]) as body:
      old, new = body.args
      if update_jaxpr is not None:
        res, = ctx.lower_jaxpr_inline(update_jaxpr, [old, new],
                                      None if update_consts == () else update_consts)
        res = ctx.convert(res, out.dtype, ())
      else:
        res = combiner(ctx, old, new, scalar)
      ctx.ret([res])
    ivd = len(split_tensor_type(indices.type)[0]) - 1
    attrs = {"scatter_dimension_numbers": scatter_dnums_attr(dn, ivd),
             # (expanded windows and reordered index vectors are not sorted)
             "indices_are_sorted": bool(indices_are_sorted) and dn == given_dn,
             "unique_indices": bool(unique_indices)}
    res = ctx.op("stablehlo.scatter", [operand, indices, updates], operand.type, attrs=attrs,
                 regions=[body])
    res = finish(res)
    if res_shape != op_aval.shape:
      res = ctx.op("stablehlo.slice", [res], out,
                   attrs={"start_indices": (0,) * out.ndim, "limit_indices": out.shape,
                          "strides": (1,) * out.ndim})
    return [ctx.convert(res, ctx.avals_out[0])]
  return rule


def combine_with(name: str, bool_name: str | None = None):
  def combiner(ctx, old, new, scalar):
    op = bool_name if bool_name is not None and scalar == "tensor<i1>" else name
    return ctx.op(f"stablehlo.{op}", [old, new], scalar)
  return combiner


def identity_of(value, bool_value=None):
  """The drop identity: ``value`` in the dtype (negative zero for floats, so
  that ``-0.0 + identity`` stays ``-0.0``)."""
  def identity(dtype):
    if np.dtype(dtype) == np.bool_ and bool_value is not None:
      return np.array(bool_value)
    if dtypes.issubdtype(dtype, np.complexfloating):
      return np.array(complex(value, -0.0 if value == 0 else 0.0), dtype)
    return cast_scalar(value, dtype)
  return identity


# ------------------------------------------------------------ .at[].apply
def _uses_update(update_jaxpr) -> bool:
  """Whether the combiner reads its second argument (``.at[].apply``'s
  combiner ``func(old)`` does not)."""
  jaxpr = update_jaxpr.jaxpr if isinstance(update_jaxpr, ClosedJaxpr) else update_jaxpr
  upd = jaxpr.invars[1]
  return (any(a is upd for e in jaxpr.eqns for a in e.invars)
          or any(a is upd for a in jaxpr.outvars))


_count_hits = scatter_lowering(combine_with("add", "or"), identity_of(-0.0, False))


def _compare(ctx, direction, a, b, shape):
  return ctx.op("stablehlo.compare", [a, b], ctx.tensor_type(shape, np.bool_),
                attrs={"comparison_direction": f"#stablehlo<comparison_direction {direction}>",
                       "compare_type": "#stablehlo<comparison_type SIGNED>"})


def _lower_apply(ctx, operand, indices, dn, indices_are_sorted, unique_indices, mode,
                 update_jaxpr, update_consts):
  """A scatter whose combiner is ``func(old)`` (``.at[].apply``): count how
  often each element is hit (a scatter-add of ones, with the same indices and
  mode), then apply ``func`` elementwise (``stablehlo.map``) that many times
  where the count allows. Inside IREE's scatter region only simple scalar
  code compiles; a map takes any elementwise computation."""
  op_aval, idx_aval, upd_aval = ctx.avals_in
  out = ctx.avals_out[0]
  shape = op_aval.shape
  i32 = np.dtype(np.int32)
  counts_aval = ShapedArray(shape, i32)
  sub = LoweringContext(ctx.fn, [counts_aval, idx_aval, ShapedArray(upd_aval.shape, i32)],
                        [counts_aval])
  counts, = _count_hits(sub, ctx.full(0, shape, i32), indices, ctx.full(1, upd_aval.shape, i32),
                        dimension_numbers=dn, indices_are_sorted=indices_are_sorted,
                        unique_indices=unique_indices, mode=mode, update_jaxpr=None,
                        update_consts=())
  consts = None if update_consts == () else update_consts
  scalar = ctx.tensor_type((), out.dtype)
  x_t, counts_t, i_t = ctx.aval_type(out), ctx.aval_type(counts_aval), ctx.tensor_type((), i32)

  def mapped(x):
    with ctx.region([scalar]) as body:
      a, = body.args
      res, = ctx.lower_jaxpr_inline(update_jaxpr, [a, a], consts)
      ctx.ret([ctx.convert(res, out.dtype, ())])
    return ctx.op("stablehlo.map", [x], x_t, attrs={"dimensions": tuple(range(len(shape)))},
                  regions=[body])

  if unique_indices and mode != GatherScatterMode.CLIP:   # each element hit at most once
    hit = _compare(ctx, "GT", counts, ctx.full(0, shape, i32), shape)
    return ctx.op("stablehlo.select", [hit, mapped(operand), operand], x_t)
  with ctx.region([i_t, i_t]) as mx:
    a, b = mx.args
    ctx.ret([ctx.op("stablehlo.maximum", [a, b], i_t)])
  most = ctx.op("stablehlo.reduce", [counts, ctx.constant(np.zeros((), i32))], i_t,
                attrs={"dimensions": tuple(range(len(shape)))}, regions=[mx])
  types = [i_t, i_t, counts_t, x_t]
  with ctx.region(types) as cond:
    i, m, _, _ = cond.args
    ctx.ret([_compare(ctx, "LT", i, m, ())])
  with ctx.region(types) as body:   # round i applies func where counts > i
    i, m, c, x = body.args
    hit = _compare(ctx, "GT", c, ctx.broadcast_in_dim(i, shape, ()), shape)
    x = ctx.op("stablehlo.select", [hit, mapped(x), x], x_t)
    ctx.ret([ctx.op("stablehlo.add", [i, ctx.constant(np.ones((), i32))], i_t), m, c, x])
  res = ctx.op("stablehlo.while", [ctx.constant(np.zeros((), i32)), most, counts, operand],
               types, regions=[cond, body])
  return res[3]
