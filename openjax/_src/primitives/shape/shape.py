"""Shape primitives: rev, pad, concatenate, split, tile and slice, and the
``full``/``full_like`` constructors: shapes and layouts without arithmetic,
written on the structural primitives of ``base.structural`` (broadcast_in_dim,
reshape, iota, squeeze, transpose, reduce_sum)."""
from __future__ import annotations

import functools
import math
import operator
from builtins import slice as builtins_slice

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import concatenate_rule, same_as_operand_rule, type_str
from openjax._src.core.sharding_rules_ops import tile_rule, varying_shape_rule
from openjax._src.errors import ShardingTypeError
from openjax._src.primitives.base import ad_util
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.base.structural import (_shape_tuple,
                                                     _shifted, add_tangents, broadcast,
                                                     broadcast_in_dim, canonicalize_axis, deflinear,
                                                     instantiate_zeros, moveaxis, reduce_sum,
                                                     reshape, squeeze)
from openjax._src.primitives.base.util import (check_same_dtypes, check_shapelike, int_tuple,
                                               shape_of)

__all__ = ["rev", "rev_p", "pad", "pad_p", "concatenate", "concatenate_p", "split", "split_p",
           "tile", "tile_p", "slice", "slice_p", "slice_in_dim", "index_in_dim", "collapse", "full",
           "full_like", "broadcast_shapes", "broadcast_to_rank"]


# ------------------------------------------------------------------------ rev
rev_p = Primitive("rev", kind="linear")


def rev(operand, dimensions):
  """Reverse ``operand`` along each of ``dimensions``."""
  return rev_p.bind1(operand, dimensions=int_tuple("rev", "dimensions", dimensions))


@rev_p.def_impl
def _rev_impl(x, *, dimensions):
  return [np.flip(x, axis=dimensions) if dimensions else x]


@rev_p.def_eval_kernel
def _rev_eval_kernel(x, *, dimensions):
  # np.flip's view by one C-level index.
  dims = set(dimensions)
  return operator.itemgetter(tuple(_REVERSED if d in dims else _ALL for d in range(x.ndim))
                             + (...,))


_ALL, _REVERSED = builtins_slice(None), builtins_slice(None, None, -1)


@rev_p.def_abstract_eval
def _rev_abstract_eval(x, *, dimensions):
  check_shapelike("rev", "dimensions", dimensions)
  if len(set(dimensions)) != len(dimensions):
    raise TypeError(f"rev dimensions must be unique, got {dimensions}.")
  if dimensions and not max(dimensions) < x.ndim:
    raise TypeError("rev dimensions must all be less than operand ndim, got dimensions "
                    f"{dimensions} for operand ndim {x.ndim}.")
  return [ShapedArray(x.shape, x.dtype, x.weak_type)]


rev_p.def_sharding_rule(same_as_operand_rule)


deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


@rev_p.def_batch
def _rev_batch(vals, dims, *, dimensions):
  x, = vals
  d, = dims
  return [rev(x, _shifted(dimensions, d))], [d]


@rev_p.def_lower
def _rev_lower(ctx, x, *, dimensions):
  if not dimensions:
    return [x]
  aval = ctx.avals_out[0]
  # IREE fails to compile a reverse fused with a strided slice feeding it
  # ("unrealized_conversion_cast"): a barrier keeps them apart.
  x = ctx.op("stablehlo.optimization_barrier", [x], ctx.avals_in[0])
  if dtypes.kind(aval.dtype) != "u":
    return [ctx.op("stablehlo.reverse", [x], aval, attrs={"dimensions": tuple(dimensions)})]
  # IREE cannot legalize reverse of unsigned tensors: reverse the signed bits.
  signed = ctx.tensor_type(aval.shape, np.dtype(f"i{aval.dtype.itemsize}"))
  y = ctx.op("stablehlo.reverse", [ctx.op("stablehlo.bitcast_convert", [x], signed)], signed,
             attrs={"dimensions": tuple(dimensions)})
  return [ctx.op("stablehlo.bitcast_convert", [y], aval)]


# ------------------------------------------------------------------------ pad
pad_p = Primitive("pad", kind="linear")


def pad(operand, padding_value, padding_config):
  """Pad ``operand`` with ``padding_value``: ``padding_config`` holds one
  ``(low, high, interior)`` triple per dimension; negative low/high cut."""
  try:
    config = tuple((operator.index(lo), operator.index(hi), operator.index(i))
                   for lo, hi, i in padding_config)
  except (TypeError, ValueError):
    raise TypeError("pad: padding_config must be a sequence of (low, high, interior) "
                    f"integer triples, got {padding_config!r}") from None
  return pad_p.bind1(operand, padding_value, padding_config=config)


def _padded_shape(padding_config, shape) -> tuple[int, ...]:
  return tuple(lo + hi + (d + (d - 1) * i if d else 0)
               for (lo, hi, i), d in zip(padding_config, shape))


def _pad_lattice(padding_config, shape) -> list:
  """Per axis, where the operand's elements land in pad's result: source
  element j goes to lo + j * (interior + 1), and those outside the result
  (negative lo/hi) are dropped. Entries are (first, last, start, limit, step):
  source elements first..last fill result[start:limit:step]; None when no
  element survives along that axis."""
  out = []
  for (lo, hi, i), d, n in zip(padding_config, shape, _padded_shape(padding_config, shape)):
    step = i + 1
    first = -(lo // step) if lo < 0 else 0          # ceil(-lo / step)
    last = min(d - 1, (n - 1 - lo) // step)
    out.append(None if last < first else
               (first, last, lo + first * step, lo + last * step + 1, step))
  return out


# Operands from this many elements are padded edges-only (below it np.full's
# one call is cheaper than a write per edge).
_PAD_EDGES_MIN = 4096


@pad_p.def_impl
def _pad_impl(x, padding_value, *, padding_config):
  # One strided copy of the surviving elements into a filled result.
  shape = _padded_shape(padding_config, x.shape)
  if x.size >= _PAD_EDGES_MIN and all(lo >= 0 and hi >= 0 and i == 0
                                      for lo, hi, i in padding_config):
    # Edges only: the operand copied into an empty result and the padding
    # written around it, each element written once (np.full wrote the whole
    # result first: f32[816,1225] padded by one row 0.53 -> 0.22 ms; the
    # sweep's jnp.pad(mode='empty') at 1e6 ~0.7-4.5 -> ~0.3-0.44 ms).
    out = np.empty(shape, x.dtype)
    inner = [builtins_slice(lo, lo + d) for (lo, _, _), d in zip(padding_config, x.shape)]
    out[tuple(inner)] = x
    value = np.asarray(padding_value, dtype=x.dtype)
    for k, (lo, hi, _) in enumerate(padding_config):
      # axes before k inside the operand, axis k its low or high edge, axes after whole
      for edge in ((builtins_slice(0, lo),) if lo else ()) + \
          ((builtins_slice(lo + x.shape[k], shape[k]),) if hi else ()):
        out[tuple(inner[:k]) + (edge,)] = value
    return [out]
  out = np.full(shape, np.asarray(padding_value, dtype=x.dtype), dtype=x.dtype)
  lattice = _pad_lattice(padding_config, x.shape)
  if any(lat is None for lat in lattice):
    return [out]
  src = tuple(builtins_slice(first, last + 1) for first, last, *_ in lattice)
  dst = tuple(builtins_slice(start, limit, step) for *_, start, limit, step in lattice)
  out[dst] = x[src]
  return [out]


@pad_p.def_abstract_eval
def _pad_abstract_eval(x, padding_value, *, padding_config):
  if padding_value.ndim != 0:
    raise ValueError(f"padding_value must be a scalar; got "
                     f"np.shape(padding_value)={padding_value.shape}")
  if len(padding_config) != x.ndim:
    raise ValueError("length of padding_config must equal the number of axes of operand, "
                     f"got padding_config {padding_config} for operand shape {x.shape}")
  if not all(i >= 0 for _, _, i in padding_config):
    raise ValueError("interior padding in padding_config must be nonnegative, got "
                     f"padding_config {padding_config}")
  shape = _padded_shape(padding_config, x.shape)
  if not all(d >= 0 for d in shape):
    raise ValueError(f"Dimension size after padding is not at least 0, got result shape "
                     f"{shape}, for padding_config {padding_config} and operand shape "
                     f"{x.shape}")
  if x.dtype != padding_value.dtype:
    raise TypeError(f"pad operand and padding_value must be same dtype: got "
                    f"{x.dtype.name} and {padding_value.dtype.name}.")
  return [ShapedArray(shape, x.dtype, x.weak_type and padding_value.weak_type)]


pad_p.def_sharding_rule(varying_shape_rule("padding"))


def _pad_transpose(ct, x, padding_value, *, padding_config):
  t_operand = t_padv = None
  if ad_util.is_undefined_primal(x):
    # Undo the edges (zeros where negative padding cut elements), then take
    # every (interior + 1)-th element.
    unpadded = pad(ct, np.zeros((), get_aval(ct).dtype),
                   [(-lo, -hi, 0) for lo, hi, _ in padding_config])
    t_operand = slice(unpadded, (0,) * len(padding_config), get_aval(unpadded).shape,
                      tuple(i + 1 for _, _, i in padding_config))
  if ad_util.is_undefined_primal(padding_value):
    shape = x.aval.shape if ad_util.is_undefined_primal(x) else get_aval(x).shape
    t_padv = _pad_fill_sum(ct, _pad_lattice(padding_config, shape))
    if t_padv is None:
      t_padv = ad_util.Zero(padding_value.aval)
  return [t_operand, t_padv]


def _pad_fill_sum(ct, lattice):
  # The sum of ``ct`` where pad wrote the padding value: the complement of the
  # operand lattice, summed as disjoint strided boxes (box k: lattice on axes
  # before k, a gap of the lattice on axis k, everything after). JAX takes
  # sum(ct) - sum(lattice) instead; subtraction sits above this family.
  shape = get_aval(ct).shape
  nd, total = len(shape), None
  for k, n in enumerate(shape):
    lat = lattice[k]
    if lat is None:
      gaps = [(0, n, 1)]
    else:
      _, _, a, b, step = lat
      gaps = [(0, a, 1), (b, n, 1)] + [(a + r, b, step) for r in range(1, step)]
    for lo, hi, st in gaps:
      if lo >= hi:
        continue
      box = slice(ct, [l[2] for l in lattice[:k]] + [lo] + [0] * (nd - k - 1),
                  [l[3] for l in lattice[:k]] + [hi] + list(shape[k + 1:]),
                  [l[4] for l in lattice[:k]] + [st] + [1] * (nd - k - 1))
      part = reduce_sum(box, tuple(range(nd)))
      total = part if total is None else add_tangents(total, part)
    if lat is None:
      break
  return total


deflinear(pad_p, _pad_transpose)


@pad_p.def_batch
def _pad_batch(vals, dims, *, padding_config):
  x, v = vals
  xd, vd = dims
  if vd is None:
    config = list(padding_config)
    config.insert(xd, (0, 0, 0))
    return [pad(x, v, config)], [xd]
  # A batched padding value: JAX selects with a mask; with shape ops only,
  # build each axis from the operand and blocks of the broadcast value.
  size = get_aval(v).shape[vd]
  x = moveaxis(x, xd, 0) if xd is not None else broadcast(x, (size,))
  v = moveaxis(v, vd, 0)

  def fill(x, ax, n):
    shape = get_aval(x).shape
    return broadcast_in_dim(v, shape[:ax] + (n,) + shape[ax + 1:], (0,))

  for ax, (lo, hi, i) in enumerate(padding_config, start=1):
    shape = get_aval(x).shape
    d = shape[ax]
    if d == 0:
      x = fill(x, ax, lo + hi)
      continue
    if i and d > 1:    # interleave: each element followed by i values, trailing ones cut
      x = reshape(x, shape[:ax + 1] + (1,) + shape[ax + 1:])
      gaps = broadcast_in_dim(v, shape[:ax + 1] + (i,) + shape[ax + 1:], (0,))
      x = reshape(concatenate([x, gaps], ax + 1), shape[:ax] + (d * (i + 1),) + shape[ax + 1:])
      x = slice_in_dim(x, 0, (d - 1) * (i + 1) + 1, axis=ax)
    for amount, front in sorted([(lo, True), (hi, False)], reverse=True):  # grow, then cut
      n = get_aval(x).shape[ax]
      if amount > 0:
        x = concatenate([fill(x, ax, amount), x] if front else [x, fill(x, ax, amount)], ax)
      elif amount < 0:
        x = slice_in_dim(x, -amount, n, axis=ax) if front else \
            slice_in_dim(x, 0, n + amount, axis=ax)
  return [x], [0]


@pad_p.def_lower
def _pad_lower(ctx, x, padding_value, *, padding_config):
  aval = ctx.avals_in[0]
  if aval.dtype.kind != "c":
    return [_emit_pad(ctx, x, padding_value, padding_config, aval.shape, aval.dtype)]
  # IREE fills with one machine word at most, and its complex64 pad crashes
  # at run time (segfault): pad the real and imaginary parts apart.
  part = np.float64 if aval.dtype == np.complex128 else np.float32
  ty = ctx.tensor_type
  parts = [_emit_pad(ctx, ctx.op(f"stablehlo.{p}", [x], ty(aval.shape, part)),
                     ctx.op(f"stablehlo.{p}", [padding_value], ty((), part)),
                     padding_config, aval.shape, part) for p in ("real", "imag")]
  return [ctx.op("stablehlo.complex", parts, ctx.avals_out[0])]


def _emit_pad(ctx, x, padding_value, padding_config, shape, dtype):
  # Interior and positive edges in one stablehlo.pad; negative edges (cuts,
  # possibly past the operand) as a slice of that, so IREE never sees them.
  lows = tuple(max(lo, 0) for lo, _, _ in padding_config)
  highs = tuple(max(hi, 0) for _, hi, _ in padding_config)
  grown = _padded_shape([(lo, hi, i) for lo, hi, (_, _, i) in
                         zip(lows, highs, padding_config)], shape)
  out = ctx.op("stablehlo.pad", [x, padding_value], ctx.tensor_type(grown, dtype),
               attrs={"edge_padding_low": lows, "edge_padding_high": highs,
                      "interior_padding": tuple(i for _, _, i in padding_config)})
  if all(lo >= 0 and hi >= 0 for lo, hi, _ in padding_config):
    return out
  starts = tuple(max(-lo, 0) for lo, _, _ in padding_config)
  limits = tuple(n - max(-hi, 0) for n, (_, hi, _) in zip(grown, padding_config))
  return ctx.op("stablehlo.slice", [out],
                ctx.tensor_type(_padded_shape(padding_config, shape), dtype),
                attrs={"start_indices": starts, "limit_indices": limits,
                       "strides": (1,) * len(grown)})


# ---------------------------------------------------------------- concatenate
concatenate_p = Primitive("concatenate", kind="linear")


def concatenate(operands, dimension: int):
  """Join ``operands`` (same dtype, same shape but along ``dimension``)."""
  operands = list(operands)
  if not operands:
    raise ValueError("concatenate requires a non-empty sequences of arrays")
  if len(operands) == 1 and hasattr(operands[0], "aval"):
    return operands[0]
  return concatenate_p.bind1(*operands, dimension=operator.index(dimension))


@concatenate_p.def_impl
def _concatenate_impl(*xs, dimension):
  return [np.concatenate(xs, axis=dimension)]


concatenate_p.def_sharding_rule(concatenate_rule)


@concatenate_p.def_abstract_eval
def _concatenate_abstract_eval(*xs, dimension):
  if not xs:
    raise TypeError("concatenate expects at least one operand, got 0.")
  shapes = ", ".join(str(x.shape) for x in xs)
  if len({x.ndim for x in xs}) != 1:
    raise TypeError(f"Cannot concatenate arrays with different numbers of dimensions: "
                    f"got {shapes}.")
  if not 0 <= dimension < xs[0].ndim:
    raise TypeError(f"concatenate dimension out of bounds: dimension {dimension} for "
                    f"shapes {shapes}.")
  others = {x.shape[:dimension] + x.shape[dimension + 1:] for x in xs}
  if len(others) != 1:
    raise TypeError("Cannot concatenate arrays with shapes that differ in dimensions other "
                    f"than the one being concatenated: concatenating along dimension "
                    f"{dimension} for shapes {shapes}.")
  check_same_dtypes("concatenate", xs)
  shape = list(xs[0].shape)
  shape[dimension] = sum(x.shape[dimension] for x in xs)
  return [ShapedArray(shape, xs[0].dtype, all(x.weak_type for x in xs))]


def _concatenate_transpose(ct, *xs, dimension):
  sizes = tuple((x.aval if ad_util.is_undefined_primal(x) else get_aval(x)).shape[dimension]
                for x in xs)
  parts = split(ct, sizes, dimension)
  return [p if ad_util.is_undefined_primal(x) else None for p, x in zip(parts, xs)]


deflinear(concatenate_p, _concatenate_transpose)


@concatenate_p.def_batch
def _concatenate_batch(vals, dims, *, dimension):
  size = next(get_aval(v).shape[d] for v, d in zip(vals, dims) if d is not None)
  xs = [broadcast(v, (size,)) if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  return [concatenate(xs, dimension + 1)], [0]


@concatenate_p.def_lower
def _concatenate_lower(ctx, *xs, dimension):
  return [ctx.op("stablehlo.concatenate", list(xs), ctx.avals_out[0],
                 attrs={"dimension": int(dimension)})]


# ---------------------------------------------------------------------- split
split_p = Primitive("split", multiple_results=True, kind="linear")


def split(operand, sizes, axis: int = 0):
  """Split ``operand`` along ``axis`` into pieces of the given ``sizes``."""
  sizes = int_tuple("split", "sizes", sizes)
  return split_p.bind(operand, sizes=sizes, axis=canonicalize_axis(axis, np.ndim(operand)))


@split_p.def_impl
def _split_impl(x, *, sizes, axis):
  # np.split's views, one basic index each (np.split's Python layers cost
  # ~5 us a call at any size).
  lead = (builtins_slice(None),) * axis
  out, start = [], 0
  for n in sizes:
    out.append(x[lead + (builtins_slice(start, start + n),)])
    start += n
  return out


@split_p.def_abstract_eval
def _split_abstract_eval(x, *, sizes, axis):
  if any(s < 0 for s in sizes):
    raise ValueError(f"Sizes passed to split must be nonnegative, got {list(sizes)}")
  if x.shape[axis] != sum(sizes):
    raise ValueError(f"Sum of sizes {sum(sizes)} must be equal to dimension {axis} of the "
                     f"operand shape {list(x.shape)}")
  outs = []
  for s in sizes:
    shape = list(x.shape)
    shape[axis] = s
    outs.append(ShapedArray(shape, x.dtype, x.weak_type))
  return outs


split_p.def_sharding_rule(varying_shape_rule("split"))


@split_p.def_jvp
def _split_jvp(primals, tangents, *, sizes, axis):
  outs = split_p.bind(*primals, sizes=sizes, axis=axis)
  t, = tangents
  if type(t) is ad_util.Zero:
    return outs, [ad_util.Zero.from_primal_value(o) for o in outs]
  return outs, split_p.bind(t, sizes=sizes, axis=axis)


@split_p.def_transpose
def _split_transpose(cts, x, *, sizes, axis):
  if all(type(c) is ad_util.Zero for c in cts):
    return [ad_util.Zero(x.aval)]
  return [concatenate([instantiate_zeros(c) for c in cts], axis)]


@split_p.def_batch
def _split_batch(vals, dims, *, sizes, axis):
  x, = vals
  d, = dims
  return split(x, sizes, axis + 1 if axis >= d else axis), [d] * len(sizes)


@split_p.def_lower
def _split_lower(ctx, x, *, sizes, axis):
  shape = ctx.avals_in[0].shape
  outs, start = [], 0
  for s, aval in zip(sizes, ctx.avals_out):
    starts, limits = [0] * len(shape), list(shape)
    starts[axis], limits[axis] = start, start + s
    outs.append(ctx.op("stablehlo.slice", [x], aval,
                       attrs={"start_indices": tuple(starts), "limit_indices": tuple(limits),
                              "strides": (1,) * len(shape)}))
    start += s
  return outs


# ----------------------------------------------------------------------- tile
tile_p = Primitive("tile", kind="linear")


def tile(operand, reps):
  """Repeat ``operand`` ``reps[i]`` times along each dimension ``i``."""
  return tile_p.bind1(operand, reps=int_tuple("tile", "reps", reps))


@tile_p.def_impl
def _tile_impl(x, *, reps):
  # One copy of x broadcast to (r0, d0, r1, d1, ...), as the lowering: np.tile
  # repeats axis by axis, and on a read-only operand (an Array's value) its
  # repeat copies even for a zero count (1e6 elements, reps 0: ~45 us).
  if not x.ndim:
    return [x]
  shape = tuple(r * d for r, d in zip(reps, x.shape))
  if not math.prod(shape):
    return [np.empty(shape, x.dtype)]
  pairs = tuple(n for r, d in zip(reps, x.shape) for n in (r, d))
  spread = x.reshape(tuple(n for d in x.shape for n in (1, d)))
  return [np.broadcast_to(spread, pairs).reshape(shape)]


@tile_p.def_eval_kernel
def _tile_eval_kernel(x, *, reps):
  # A small result by one np.concatenate per repeated axis (~0.6 us each),
  # where the impl's np.broadcast_to costs ~5 us of Python (tile of i32[3]
  # by (2, 1, 2) in a program: 21 -> 13 us); larger ones, empty results
  # and nothing to repeat: the impl (one copy).
  axes = tuple((i, r) for i, r in enumerate(reps) if r != 1)
  if (not x.shape or not axes or 0 in reps or max(reps) > 16
      or math.prod(x.shape) * math.prod(reps) > 4096):
    return None   # (a concatenate of 1000 copies of 2 elements: ~175 us)
  return functools.partial(_tile_by_concatenates, axes=axes)


def _tile_by_concatenates(v, *, axes):
  for i, r in axes:
    v = np.concatenate((v,) * r, axis=i)
  return v


@tile_p.def_abstract_eval
def _tile_abstract_eval(x, *, reps):
  if x.ndim != len(reps):
    raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} "
                    f"and x.ndim={x.ndim}.")
  if any(r < 0 for r in reps):
    raise ValueError(f"tile: reps must be nonnegative, got {reps}")
  return [ShapedArray(tuple(d * r for d, r in zip(x.shape, reps)), x.dtype, x.weak_type)]


tile_p.def_sharding_rule(tile_rule)


def _tile_transpose(ct, x, *, reps):
  # Result dim k is reps[k] copies of operand dim k: split it in two, sum the copies.
  shape = x.aval.shape
  ct = reshape(ct, tuple(n for pair in zip(reps, shape) for n in pair))
  return [reduce_sum(ct, tuple(range(0, 2 * len(shape), 2)))]


deflinear(tile_p, _tile_transpose)


@tile_p.def_batch
def _tile_batch(vals, dims, *, reps):
  x, = vals
  d, = dims
  return [tile(x, reps[:d] + (1,) + reps[d:])], [d]


@tile_p.def_lower
def _tile_lower(ctx, x, *, reps):
  # Broadcast to (r0, d0, r1, d1, ...), then merge each pair.
  aval = ctx.avals_in[0]
  if not aval.shape or all(r == 1 for r in reps):
    return [x]
  pairs = tuple(n for r, d in zip(reps, aval.shape) for n in (r, d))
  big = ctx.op("stablehlo.broadcast_in_dim", [x], ctx.tensor_type(pairs, aval.dtype),
               attrs={"broadcast_dimensions": tuple(range(1, 2 * aval.ndim, 2))})
  return [ctx.op("stablehlo.reshape", [big], ctx.avals_out[0])]


# ---------------------------------------------------------------------- slice
slice_p = Primitive("slice", kind="linear")


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001 - JAX's name
  """The static slice ``operand[start:limit:stride]`` in every dimension."""
  return slice_p.bind1(
      operand, start_indices=int_tuple("slice", "start_indices", start_indices),
      limit_indices=int_tuple("slice", "limit_indices", limit_indices),
      strides=None if strides is None else int_tuple("slice", "strides", strides))


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
  """``operand[start:limit:stride]`` along ``axis`` only; None and negative
  indices count as in Python."""
  shape = shape_of(operand)
  axis = int(axis)
  n = shape[axis]
  start = 0 if start_index is None else operator.index(start_index)
  limit = n if limit_index is None else operator.index(limit_index)
  start = start + n if start < 0 else start
  limit = limit + n if limit < 0 else limit
  # tuples of Python ints, which ``slice`` takes as they are (lists went
  # through its generic conversion: 7.9 -> 5.4 us an eager call)
  rank = len(shape)
  pos = axis % rank
  starts = (0,) * pos + (start,) + (0,) * (rank - pos - 1)
  limits = shape[:pos] + (limit,) + shape[pos + 1:]
  strides = (1,) * pos + (operator.index(stride),) + (1,) * (rank - pos - 1)
  return slice(operand, starts, limits, strides)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
  """``operand[index]`` along ``axis`` (the axis is kept unless
  ``keepdims=False``); IndexError when out of bounds."""
  index, axis = operator.index(index), int(axis)
  n = shape_of(operand)[axis]
  wrapped = index + n if index < 0 else index
  if not 0 <= wrapped < n:
    raise IndexError(f"index {index} is out of bounds for axis {axis} with size {n}")
  out = slice_in_dim(operand, wrapped, wrapped + 1, 1, axis)
  return out if keepdims else squeeze(out, (axis,))


@slice_p.def_impl
def _slice_impl(x, *, start_indices, limit_indices, strides):
  strides = strides or (1,) * x.ndim
  return [x[tuple(builtins_slice(s, l, st)
                  for s, l, st in zip(start_indices, limit_indices, strides))]]


@slice_p.def_eval_kernel
def _slice_eval_kernel(x, *, start_indices, limit_indices, strides):
  # The impl's view by one C-level index made once (the impl builds the
  # slices on every call).
  strides = strides or (1,) * len(start_indices)
  return operator.itemgetter(tuple(builtins_slice(s, l, st) for s, l, st in
                                   zip(start_indices, limit_indices, strides)) + (...,))


@slice_p.def_sharding_rule
def _slice_sharding_rule(specs, avals, out_avals, *, start_indices, limit_indices, strides):
  # A split dimension may be cut to a size its devices still divide (JAX
  # moves the data); other cuts need a reshard first.
  x, spec, out_shape = avals[0], specs[0], out_avals[0].shape
  for d, p in enumerate(spec):
    if p is None or out_shape[d] == x.shape[d]:
      continue
    axes = (p,) if isinstance(p, str) else p
    k = math.prod(x.sharding.mesh.shape[a] for a in axes)
    if out_shape[d] % k:
      raise ShardingTypeError(
          f"slicing on sharded dims where out dim ({out_shape[d]}) is not divisible by mesh "
          f"axes ({k}) with spec ({', '.join(axes)}) is not implemented. Got input "
          f"type={type_str(x, spec, short=True)} and output shape={tuple(out_shape)}")
  return [spec]


@slice_p.def_abstract_eval
def _slice_abstract_eval(x, *, start_indices, limit_indices, strides):
  check_shapelike("slice", "start_indices", start_indices)
  check_shapelike("slice", "limit_indices", limit_indices)
  if x.ndim != len(start_indices):
    raise TypeError("slice start_indices must have length equal to the number of "
                    f"dimensions of the operand, got indices {start_indices} for operand "
                    f"shape {x.shape}.")
  if len(start_indices) != len(limit_indices):
    raise TypeError("slice limit_indices must have the same length as start_indices, got "
                    f"start_indices {start_indices} and limit_indices {limit_indices}.")
  if not all(d >= l for d, l in zip(x.shape, limit_indices)):
    raise TypeError("slice limit_indices must be less than or equal to operand shape, got "
                    f"limit_indices {limit_indices} for operand shape {x.shape}.")
  if not all(l >= s for s, l in zip(start_indices, limit_indices)):
    raise TypeError("slice limit_indices must be greater than or equal to start_indices, "
                    f"got start_indices {start_indices} and limit_indices {limit_indices}.")
  diff = tuple(l - s for s, l in zip(start_indices, limit_indices))
  if strides is not None and tuple(strides) != (1,) * x.ndim:
    check_shapelike("slice", "strides", strides)
    if len(strides) != x.ndim:
      raise TypeError("slice strides must have length equal to the number of dimensions "
                      f"of the operand, got strides {strides} for operand shape {x.shape}.")
    if not all(s > 0 for s in strides):
      raise TypeError(f"slice strides must be positive, got {strides}")
    diff = tuple(0 if d == 0 else (d - 1) // s + 1 for d, s in zip(diff, strides))
  return [ShapedArray(diff, x.dtype, x.weak_type)]


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
  # Pad back with zeros; strides become interior padding.
  shape, out = x.aval.shape, get_aval(ct).shape
  strides = strides or (1,) * len(shape)
  limits = tuple(s + (0 if n == 0 else (n - 1) * st + 1)
                 for s, n, st in zip(start_indices, out, strides))
  config = tuple(zip(start_indices, (d - l for d, l in zip(shape, limits)),
                     (st - 1 for st in strides)))
  return [pad(ct, np.zeros((), get_aval(ct).dtype), config)]


deflinear(slice_p, _slice_transpose)


@slice_p.def_batch
def _slice_batch(vals, dims, *, start_indices, limit_indices, strides):
  x, = vals
  d, = dims
  size = get_aval(x).shape[d]
  strides = None if strides is None else strides[:d] + (1,) + strides[d:]
  return [slice(x, start_indices[:d] + (0,) + start_indices[d:],
                limit_indices[:d] + (size,) + limit_indices[d:], strides)], [d]


@slice_p.def_lower
def _slice_lower(ctx, x, *, start_indices, limit_indices, strides):
  out_aval = ctx.avals_out[0]
  # A stride over a dimension of one result element (or none) is no stride.
  strides = tuple(1 if n <= 1 else s for s, n in
                  zip(strides or (1,) * len(start_indices), out_aval.shape))
  limits = tuple(st + n if n <= 1 else lim
                 for st, lim, n in zip(start_indices, limit_indices, out_aval.shape))
  out = ctx.op("stablehlo.slice", [x], out_aval,
               attrs={"start_indices": tuple(start_indices), "limit_indices": limits,
                      "strides": strides})
  if strides and strides[-1] > 1:
    # IREE fuses a slice strided along the minor dimension into a consumer
    # that indexes it dynamically (gather, sort's permutation, top_k) as a
    # strided load, then fails to compile it ("LLVM Translation failed for
    # operation: builtin.unrealized_conversion_cast", jnp.sort(x[::2])).
    # Materialising the slice costs up to ~1.4x on fused strided
    # arithmetic (x[::2] + x[1::2]); a barrier on every gather's operand
    # instead cost 25x on x[5:][i].
    out = ctx.op("stablehlo.optimization_barrier", [out], out_aval)
  return [out]


# ------------------------------------------------- convenience wrappers
def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
  """Merge dimensions ``[start_dimension, stop_dimension)`` into one."""
  shape = tuple(np.shape(operand))
  lo, hi, _ = builtins_slice(start_dimension, stop_dimension).indices(len(shape))
  if hi < lo:
    raise ValueError(f"Invalid dimension range passed to collapse: {shape}"
                     f"[{start_dimension}:{stop_dimension}]")
  size = math.prod(shape[lo:hi])
  return reshape(operand, shape[:lo] + (size,) + shape[hi:])


def full(shape, fill_value, dtype=None, *, sharding=None):
  """An array of ``shape`` filled with the scalar ``fill_value`` (cast to
  ``dtype`` if given; weakly typed when ``fill_value`` is a Python scalar)."""
  shape = (shape,) if isinstance(shape, int) else shape
  shape = _shape_tuple("full", "shape", shape)
  if type(fill_value) not in dtypes.python_scalar_dtypes and np.shape(fill_value):
    raise TypeError(f"full must be called with scalar fill_value, got fill_value.shape "
                    f"{np.shape(fill_value)}.")
  if dtype is None:
    weak, dt = dtypes.is_weakly_typed(fill_value), dtypes.dtype(fill_value)
  else:
    weak, dt = False, dtypes.explicit_dtype(dtype, "full")
  # (``broadcast`` of the 0-d fill: broadcast_in_dim with no operand dimensions)
  return broadcast_in_dim(_convert_element_type(fill_value, dt, weak), shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
  """An array like ``x`` (its shape and dtype unless given) filled with
  ``fill_value``."""
  fill_shape = np.shape(x) if shape is None else shape
  weak = dtype is None and dtypes.is_weakly_typed(x)
  dt = dtypes.dtype(x if dtype is None else dtype)
  return full(fill_shape, _convert_element_type(fill_value, dt, weak))


def broadcast_shapes(*shapes):
  """The NumPy broadcast of ``shapes`` (ValueError when incompatible)."""
  if not shapes:
    raise TypeError("broadcast_shapes: At least one shape is required.")
  shapes = [tuple(s) for s in shapes]
  for s in shapes:
    checked = int_tuple("broadcast_shapes", "shape", s)
    if not all(d >= 0 for d in checked):
      raise TypeError("Only non-negative indices are allowed when broadcasting static "
                      f"shapes, but got shape {s!r}.")
  ndim = max(len(s) for s in shapes)
  out = []
  for ds in zip(*((1,) * (ndim - len(s)) + s for s in shapes)):
    non1 = {d for d in ds if d != 1}
    if len(non1) > 1:
      raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}")
    out.append(non1.pop() if non1 else 1)
  return tuple(out)


def broadcast_to_rank(x, rank: int):
  """Add leading size-1 dimensions to give ``x`` rank ``rank``."""
  ndim = np.ndim(x)
  return x if ndim == rank else broadcast(x, (1,) * (rank - ndim))
