"""StableHLO for sorting: total-order integer keys, ``stablehlo.sort`` for
short rows and a radix sort for long ones.

IREE lowers ``stablehlo.sort`` to a sort that costs O(n^2) per row (10k
elements take ~0.6 s, 1M would take hours), so long rows are sorted by a
stable LSD radix sort instead: a ``stablehlo.while`` over the key bits that
differ between the elements, two bits a pass, each pass a counting sort (a
prefix sum of the digit's one-hot rows, which IREE runs as a linear scan,
and a scatter to the new positions): O(n * bits), one small loop body to
compile. ``top_k`` with a small k selects instead of sorting.

Every key operand becomes one or two integer arrays whose signed order is
JAX's total order (``-0.0 == 0.0``, NaNs equal and after ``+inf``; complex
numbers by (real, imag)). Equal keys keep their input order on both paths
(the comparator's last key is the index; radix passes are stable), as the
NumPy impl does whatever ``is_stable`` says. The sorting permutation then
moves the operands with one gather.
"""
from __future__ import annotations

from typing import Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.lowering.builder import Value, dense_int_attr
from openjax._src.primitives.base.reduce_lowering import binary, compare, select, shape_of
from openjax._src.primitives.index.indexing_util import (GatherDimensionNumbers,
                                                         ScatterDimensionNumbers, gather_dnums_attr,
                                                         scatter_dnums_attr)

#: ``stablehlo.sort`` costs IREE about 3 ns * rows * n**2; the radix sort
#: about 1 ms + 0.2 us * rows * n (measured on IREE 3.13 CPU: one row of 512
#: in 0.8 ms vs 0.9 ms, of 768 in 1.5 ms vs 0.5 ms; 100 rows of 96 in 1.6 ms
#: vs 1.7 ms, 30 rows of 256 in 3.8 ms vs 1.2 ms, 1000 rows of 64 in 12 ms vs
#: 16 ms, of 96 in 22 ms vs 17 ms). Rows up to COMPARATOR_ALWAYS_N long
#: always use the comparator.
COMPARATOR_ALWAYS_N = 64


def use_comparator(rows: int, n: int, key_bytes: Sequence[int] = (4,)) -> bool:
  """Whether ``stablehlo.sort`` (O(n^2) per row in IREE) is the cheaper
  sort of ``rows`` rows of ``n`` by keys of ``key_bytes`` bytes each.

  IREE copies a tile of rows of every key but the first onto the stack as
  well, sized for one key: with several keys that overflows its 32 KiB
  stack limit (seen: 1000 rows of 64 by two f64 keys, a 50-row tile), so
  those sorts use the radix sort unless a generous tile fits."""
  if len(key_bytes) > 1 and min(rows, 64) * n * sum(key_bytes) > 24 * 1024:
    return False
  if n <= COMPARATOR_ALWAYS_N:
    return True
  return rows * n * (3 * n - 200) < 10 ** 6


# ------------------------------------------------------------------ keys
# Keys are signed integers (i32 or i64) compared as signed numbers: IREE
# compiles signless integers everywhere, unsigned element types not always.
_I32, _I64 = np.dtype(np.int32), np.dtype(np.int64)


def _key_width(dtype) -> np.dtype:
  """The key type of one (real) key dtype: i32 for everything up to 32
  bits wide, i64 for 64-bit types."""
  return _I64 if np.dtype(dtype).itemsize == 8 else _I32


def _float_key(ctx, x: Value, dtype) -> Value:
  """Integer keys of floats: -0.0 -> 0.0, every NaN -> +NaN, then the IEEE
  bits with the magnitude bits flipped for negative numbers, which orders
  like the numbers (NaN after +inf)."""
  dt = np.dtype(dtype)
  shape = shape_of(x)
  fdt = np.dtype(np.float64) if dt.itemsize == 8 else np.dtype(np.float32)
  if dt != fdt:   # f16, bf16, float8: exact in float32
    x = ctx.op("stablehlo.convert", [x], ctx.tensor_type(shape, fdt))
  idt = _key_width(fdt)
  bits = idt.itemsize * 8
  zero = ctx.full(0, shape, fdt)
  x = select(ctx, compare(ctx, x, zero, "EQ", fdt), zero, x)
  x = select(ctx, compare(ctx, x, x, "NE", fdt), ctx.full(np.nan, shape, fdt), x)
  i = ctx.op("stablehlo.bitcast_convert", [x], ctx.tensor_type(shape, idt))
  sign = binary(ctx, "shift_right_arithmetic", i, ctx.full(bits - 1, shape, idt))
  mask = binary(ctx, "and", sign, ctx.full(np.iinfo(idt).max, shape, idt))
  return binary(ctx, "xor", i, mask)


def _int_key(ctx, x: Value, dtype) -> Value:
  dt = np.dtype(dtype)
  shape = shape_of(x)
  idt = _key_width(dt)
  if dtypes.kind(dt) == "u" and dt.itemsize == idt.itemsize:
    # uint32/uint64: shift the range down by flipping the top bit.
    i = ctx.op("stablehlo.bitcast_convert", [x], ctx.tensor_type(shape, idt))
    return binary(ctx, "xor", i, ctx.full(np.iinfo(idt).min, shape, idt))
  return ctx.convert(x, idt, shape)   # narrower ints and bool extend exactly


def sort_keys(ctx, x: Value, dtype, *, descending: bool = False) -> list[Value]:
  """Integer arrays whose lexicographic (signed) order is JAX's total order
  of ``x`` (reversed when ``descending``)."""
  dt = np.dtype(dtype)
  k = dtypes.kind(dt)
  if k == "c":
    fdt = np.finfo(dt).dtype
    ft = ctx.tensor_type(shape_of(x), fdt)
    keys = [_float_key(ctx, ctx.op(f"stablehlo.{p}", [x], ft), fdt) for p in ("real", "imag")]
  elif k == "f":
    keys = [_float_key(ctx, x, dt)]
  else:
    keys = [_int_key(ctx, x, dt)]
  if descending:
    keys = [ctx.op("stablehlo.not", [key], key.type) for key in keys]
  return keys


def _key_dtype(v: Value) -> np.dtype:
  return _I64 if v.type.endswith("i64>") else _I32


def lex_less(ctx, a: Sequence[Value], b: Sequence[Value]) -> Value:
  """``a < b`` lexicographically over lists of integer key arrays."""
  less = compare(ctx, a[-1], b[-1], "LT", _key_dtype(a[-1]))
  for x, y in zip(reversed(a[:-1]), reversed(b[:-1])):
    dt = _key_dtype(x)
    less = binary(ctx, "or", compare(ctx, x, y, "LT", dt),
                  binary(ctx, "and", compare(ctx, x, y, "EQ", dt), less))
  return less


# ------------------------------------------------------------ permutations
def _index_dtype(n: int) -> np.dtype:
  return np.dtype(np.int32) if n < 2 ** 31 else np.dtype(np.int64)


def _comparator_permutation(ctx, keys: Sequence[Value], shape) -> Value:
  """The stable sorting permutation of rows of ``keys`` (shape ``(B, n)``)
  by ``stablehlo.sort``."""
  idt = _index_dtype(shape[-1])
  iota = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, idt),
                attrs={"iota_dimension": len(shape) - 1})
  operands = list(keys) + [iota]
  scalars = [ctx.tensor_type((), _key_dtype(k)) for k in keys] + [ctx.tensor_type((), idt)]
  with ctx.region([t for t in scalars for _ in range(2)]) as body:
    a, b = body.args[0::2], body.args[1::2]
    ctx.ret([lex_less(ctx, a, b)])
  outs = ctx.op("stablehlo.sort", operands, [o.type for o in operands],
                attrs={"dimension": len(shape) - 1, "is_stable": True}, regions=[body])
  return outs[-1]


# ------------------------------------------------------------ radix sort
def _scalar(ctx, value, dt) -> Value:
  return ctx.constant(np.asarray(value, dt))


def _splat(ctx, scalar: Value, shape, dt) -> Value:
  return ctx.broadcast_in_dim(scalar, shape, ())


def _digit_positions(ctx, digit: Value, shape, idt) -> Value:
  """Where a stable counting sort by a 2-bit ``digit`` (i32, 0..3) moves each
  element of a ``(B, n)`` row, as flat indices (``idt``)."""
  b, n = shape
  s3 = (b, 3, n)
  d3 = ctx.broadcast_in_dim(digit, s3, (0, 2))
  which = ctx.op("stablehlo.iota", [], ctx.tensor_type(s3, _I32), attrs={"iota_dimension": 1})
  onehot = ctx.convert(compare(ctx, d3, which, "EQ", _I32), _I32, s3)
  t = ctx.tensor_type((), _I32)
  with ctx.region([t, t]) as body:
    ctx.ret([binary(ctx, "add", *body.args)])
  pad = np.array([[0, 0], [0, 0], [n - 1, 0]], np.int64)
  incl = ctx.op("stablehlo.reduce_window", [onehot, _scalar(ctx, 0, _I32)], onehot.type,
                attrs={"window_dimensions": (1, 1, n), "window_strides": (1, 1, 1),
                       "padding": dense_int_attr(pad.reshape(-1), shape=(3, 2))},
                regions=[body])
  rt = ctx.tensor_type(shape, _I32)

  def part(j, start, stop):
    sl = ctx.op("stablehlo.slice", [incl], ctx.tensor_type((b, 1, stop - start), _I32),
                attrs={"start_indices": (0, j, start), "limit_indices": (b, j + 1, stop),
                       "strides": (1, 1, 1)})
    if stop - start == 1:
      return ctx.broadcast_in_dim(ctx.op("stablehlo.reshape", [sl], ctx.tensor_type((b,), _I32)),
                                  shape, (0,))
    return ctx.op("stablehlo.reshape", [sl], rt)

  c = [part(j, 0, n) for j in range(3)]
  tot = [part(j, n - 1, n) for j in range(3)]
  one = ctx.full(1, shape, _I32)
  i = ctx.op("stablehlo.iota", [], rt, attrs={"iota_dimension": 1})
  off1 = tot[0]
  off2 = binary(ctx, "add", off1, tot[1])
  off3 = binary(ctx, "add", off2, tot[2])
  p0 = binary(ctx, "subtract", c[0], one)
  p1 = binary(ctx, "add", off1, binary(ctx, "subtract", c[1], one))
  p2 = binary(ctx, "add", off2, binary(ctx, "subtract", c[2], one))
  p3 = binary(ctx, "add", off3, binary(ctx, "subtract", i, binary(
      ctx, "add", c[0], binary(ctx, "add", c[1], c[2]))))

  def is_(v):
    return compare(ctx, digit, ctx.full(v, shape, _I32), "EQ", _I32)

  pos = select(ctx, is_(0), p0, select(ctx, is_(1), p1, select(ctx, is_(2), p2, p3)))
  pos = ctx.convert(pos, idt, shape)
  row = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, idt), attrs={"iota_dimension": 0})
  flat = binary(ctx, "add", binary(ctx, "multiply", row, ctx.full(n, shape, idt)), pos)
  return ctx.op("stablehlo.reshape", [flat], ctx.tensor_type((b * n, 1), idt))


def _permute(ctx, x: Value, flat_pos: Value, shape) -> Value:
  """``out[flat_pos[i]] = x[i]`` over the flattened ``(B, n)`` array."""
  b, n = shape
  dt = _key_dtype(x)
  flat_t = ctx.tensor_type((b * n,), dt)
  flat = ctx.op("stablehlo.reshape", [x], flat_t)
  t = ctx.tensor_type((), dt)
  with ctx.region([t, t]) as body:
    ctx.ret([body.args[1]])
  dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                               scatter_dims_to_operand_dims=(0,))
  # A fresh destination: IREE cannot scatter a tensor into itself.
  dest = ctx.full(0, (b * n,), dt)
  out = ctx.op("stablehlo.scatter", [dest, flat_pos, flat], flat_t,
               attrs={"scatter_dimension_numbers": scatter_dnums_attr(dn, 1),
                      "indices_are_sorted": False, "unique_indices": True}, regions=[body])
  return ctx.op("stablehlo.reshape", [out], x.type)


def _varying_bits(ctx, key: Value, shape, mask: int) -> Value:
  """The bits (within ``mask``) that differ between elements of ``key``:
  only those need a radix pass."""
  dt = _key_dtype(key)
  t = ctx.tensor_type((), dt)
  with ctx.region([t, t, t, t]) as body:
    o1, a1, o2, a2 = body.args
    ctx.ret([binary(ctx, "or", o1, o2), binary(ctx, "and", a1, a2)])
  ones = _scalar(ctx, -1, dt)
  any_, all_ = ctx.op("stablehlo.reduce", [key, key, _scalar(ctx, 0, dt), ones], [t, t],
                      attrs={"dimensions": (0, 1)}, regions=[body])
  return binary(ctx, "and", binary(ctx, "xor", any_, all_), _scalar(ctx, mask, dt))


# Radix passes per loop iteration: each iteration waits for the host to read
# the loop condition, and two passes per wait were ~20% faster at 1M
# elements (a pass with no bits left is an identity permutation).
UNROLL = 2


def _radix_passes(ctx, key: Value, payload: Value | None, shape, mask: int, idt):
  """Stable LSD radix sort of ``(B, n)`` rows by the bits of ``key`` in
  ``mask`` (unsigned order): a ``stablehlo.while`` whose passes each sort by
  a 2-bit digit starting at the lowest varying bit left (a counting sort:
  one prefix sum of the digit's one-hot rows, then a scatter; 2 bits a pass
  were ~25% faster than 1 at 1M elements); ``payload`` moves along.
  Returns (key, payload)."""
  dt = _key_dtype(key)
  st = ctx.tensor_type((), dt)
  carried = [_varying_bits(ctx, key, shape, mask), key] + ([payload] if payload else [])
  types = [v.type for v in carried]
  with ctx.region(types) as cond:
    ctx.ret([compare(ctx, cond.args[0], _scalar(ctx, 0, dt), "NE", dt)])
  with ctx.region(types) as body:
    rem, *arrays = body.args
    for _ in range(UNROLL):
      low = binary(ctx, "and", rem, binary(ctx, "subtract", _scalar(ctx, 0, dt), rem))
      # The digit: the lowest bit left and the one above it.
      shift = ctx.op("stablehlo.popcnt", [binary(ctx, "subtract", low, _scalar(ctx, 1, dt))], st)
      dig = binary(ctx, "shift_right_logical", arrays[0], _splat(ctx, shift, shape, dt))
      dig = ctx.convert(binary(ctx, "and", dig, ctx.full(3, shape, dt)), _I32, shape)
      pos = _digit_positions(ctx, dig, shape, idt)
      two = binary(ctx, "or", low, binary(ctx, "shift_left", low, _scalar(ctx, 1, dt)))
      rem = binary(ctx, "and", rem, ctx.op("stablehlo.not", [two], st))
      arrays = [_permute(ctx, v, pos, shape) for v in arrays]
    ctx.ret([rem] + arrays)
  outs = ctx.op("stablehlo.while", carried, types, regions=[cond, body])
  return outs[1], (outs[2] if payload else None)


def _radix_permutation(ctx, keys: Sequence[Value], shape) -> Value:
  """The stable sorting permutation of rows of ``keys`` (shape ``(B, n)``)
  by LSD radix sort: keys from the last to the first, each over its bits
  (the sign bit flipped, so signed order becomes unsigned order). A 32-bit
  key travels packed with the permutation in one i64, ``key << 32 | index``."""
  b, n = shape
  idt = _index_dtype(b * n)
  perm = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, _I32), attrs={"iota_dimension": 1})
  first = True
  for key in reversed(keys):
    dt = _key_dtype(key)
    if not first:
      key = take_rows(ctx, key, perm, dt)
    first = False
    key = binary(ctx, "xor", key, ctx.full(np.iinfo(dt).min, shape, dt))
    if dt == _I32:
      hi = binary(ctx, "shift_left", ctx.convert(key, _I64, shape), ctx.full(32, shape, _I64))
      packed = binary(ctx, "or", hi, ctx.convert(perm, _I64, shape))
      packed, _ = _radix_passes(ctx, packed, None, shape, -(1 << 32), idt)
      perm = ctx.convert(binary(ctx, "and", packed, ctx.full(0xFFFFFFFF, shape, _I64)), _I32, shape)
    else:
      _, perm = _radix_passes(ctx, key, perm, shape, -1, idt)
  return perm


def sort_permutation(ctx, keys: Sequence[Value], shape) -> Value:
  """Indices (``(B, n)``, int32) that sort each row of the key arrays
  stably: ``stablehlo.sort`` for short rows, the radix sort for long ones."""
  if use_comparator(*shape, [_key_dtype(k).itemsize for k in keys]):
    return _comparator_permutation(ctx, keys, shape)
  return _radix_permutation(ctx, keys, shape)


#: ``top_k`` with at most this many results from long rows selects them one
#: by one (k min-reductions over ``key << 32 | index``) instead of sorting
#: (1M elements, k=10: 5 ms, sorting 360 ms; the unrolled selections grow
#: the module with k).
SELECTION_MAX_K = 32


#: Rows longer than ``SELECTION_CHUNKS * k * SELECTION_CHUNK`` first pick
#: the k chunks of SELECTION_CHUNK elements holding the k smallest elements.
SELECTION_CHUNK = 1024
SELECTION_CHUNKS = 4
_I64_MAX = int(np.iinfo(np.int64).max)


def _select_smallest(ctx, packed: Value, shape, k: int) -> Value:
  """The ``k`` smallest values of each row of the i64 ``packed`` (all
  distinct), ascending, ``(B, k)``: repeated min-reductions, each found
  value then replaced by the largest i64."""
  b, n = shape
  t = ctx.tensor_type((), _I64)
  with ctx.region([t, t]) as body:
    ctx.ret([binary(ctx, "minimum", *body.args)])
  col_t = ctx.tensor_type((b, 1), _I64)
  found = []
  for i in range(k):
    m = ctx.op("stablehlo.reduce", [packed, _scalar(ctx, _I64_MAX, _I64)],
               ctx.tensor_type((b,), _I64), attrs={"dimensions": (1,)}, regions=[body])
    found.append(ctx.op("stablehlo.reshape", [m], col_t))
    if i + 1 < k:
      hit = compare(ctx, packed, ctx.broadcast_in_dim(m, shape, (0,)), "EQ", _I64)
      packed = select(ctx, hit, ctx.full(_I64_MAX, shape, _I64), packed)
  if k == 1:
    return found[0]
  return ctx.op("stablehlo.concatenate", found, ctx.tensor_type((b, k), _I64),
                attrs={"dimension": 1})


def _selection_permutation(ctx, key: Value, shape, k: int) -> Value:
  """Indices of the ``k`` smallest of each row of the i32 ``key`` (ties by
  index), selected from the unique ``key << 32 | index``. Long rows first
  keep the k chunks with the smallest minima (they hold the k smallest
  elements), so the k selections scan ``k * SELECTION_CHUNK`` elements."""
  b, n = shape
  hi = binary(ctx, "shift_left", ctx.convert(key, _I64, shape), ctx.full(32, shape, _I64))
  iota = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, _I64), attrs={"iota_dimension": 1})
  packed = binary(ctx, "or", hi, iota)
  low32 = 0xFFFFFFFF
  c = SELECTION_CHUNK
  if n > SELECTION_CHUNKS * k * c:
    m = -(-n // c)
    padded = ctx.op("stablehlo.pad", [packed, _scalar(ctx, _I64_MAX, _I64)],
                    ctx.tensor_type((b, m * c), _I64),
                    attrs={"edge_padding_low": (0, 0), "edge_padding_high": (0, m * c - n),
                           "interior_padding": (0, 0)})
    chunks = ctx.op("stablehlo.reshape", [padded], ctx.tensor_type((b, m, c), _I64))
    t = ctx.tensor_type((), _I64)
    with ctx.region([t, t]) as body:
      ctx.ret([binary(ctx, "minimum", *body.args)])
    mins = ctx.op("stablehlo.reduce", [chunks, _scalar(ctx, _I64_MAX, _I64)],
                  ctx.tensor_type((b, m), _I64), attrs={"dimensions": (2,)}, regions=[body])
    best = _select_smallest(ctx, mins, (b, m), k)
    first = binary(ctx, "multiply", binary(ctx, "shift_right_logical",
                                           binary(ctx, "and", best, ctx.full(low32, (b, k), _I64)),
                                           ctx.full(c.bit_length() - 1, (b, k), _I64)),
                   ctx.full(c, (b, k), _I64))
    offs = ctx.op("stablehlo.iota", [], ctx.tensor_type((b, k, c), _I64),
                  attrs={"iota_dimension": 2})
    idx = binary(ctx, "add", ctx.broadcast_in_dim(first, (b, k, c), (0, 1)), offs)
    idx = ctx.op("stablehlo.reshape", [idx], ctx.tensor_type((b, k * c), _I64))
    packed = take_rows(ctx, padded, idx, _I64)
    # Materialize the gathered chunks: fused into the reductions below, IREE
    # would stage a whole gathered row on its (32 KiB) stack.
    packed = ctx.op("stablehlo.optimization_barrier", [packed], packed.type)
    shape = (b, k * c)
  out = _select_smallest(ctx, packed, shape, k)
  out = binary(ctx, "and", out, ctx.full(low32, (b, k), _I64))
  return ctx.convert(out, _I32, (b, k))


def smallest_permutation(ctx, keys: Sequence[Value], shape, k: int) -> Value:
  """Indices (``(B, k)``, int32) of the ``k`` smallest elements of each row,
  in order (ties by index): ``top_k``'s order on descending keys."""
  b, n = shape
  if (k <= SELECTION_MAX_K and len(keys) == 1 and _key_dtype(keys[0]) == _I32
      and not use_comparator(b, n, [4]) and n < 2 ** 32 - 1):
    return _selection_permutation(ctx, keys[0], shape, k)
  perm = sort_permutation(ctx, keys, shape)
  if k == n:
    return perm
  return ctx.op("stablehlo.slice", [perm], ctx.tensor_type((b, k), _key_dtype(perm)),
                attrs={"start_indices": (0, 0), "limit_indices": (b, k), "strides": (1, 1)})


def take_rows(ctx, x: Value, perm: Value, dtype) -> Value:
  """``x[r, perm[r, i]]`` for ``x`` of shape ``(B, n)`` and ``perm`` of shape
  ``(B, m)``: one gather over the flattened rows."""
  b, n = shape_of(x)
  m = shape_of(perm)[1]
  idt = np.dtype(np.int32) if b * n < 2 ** 31 else np.dtype(np.int64)
  perm = ctx.convert(perm, idt, (b, m))
  base = ctx.op("stablehlo.iota", [], ctx.tensor_type((b, m), idt), attrs={"iota_dimension": 0})
  base = binary(ctx, "multiply", base, ctx.full(n, (b, m), idt))
  flat_idx = ctx.op("stablehlo.reshape", [binary(ctx, "add", base, perm)],
                    ctx.tensor_type((b * m, 1), idt))
  flat_x = ctx.op("stablehlo.reshape", [x], ctx.tensor_type((b * n,), dtype))
  dn = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,),
                              operand_batching_dims=(), start_indices_batching_dims=())
  g = ctx.op("stablehlo.gather", [flat_x, flat_idx], ctx.tensor_type((b * m,), dtype),
             attrs={"dimension_numbers": gather_dnums_attr(dn, 1),
                    "indices_are_sorted": False, "slice_sizes": (1,)})
  return ctx.op("stablehlo.reshape", [g], ctx.tensor_type((b, m), dtype))


# ------------------------------------------------------------- layouts
def to_rows(ctx, x: Value, axis: int, dtype) -> tuple[Value, tuple, tuple]:
  """``x`` with ``axis`` moved last and the rest flattened: ``(B, n)``; also
  the moved shape and the permutation, for ``from_rows``."""
  shape = shape_of(x)
  rank = len(shape)
  perm = tuple(i for i in range(rank) if i != axis) + (axis,)
  moved = tuple(shape[i] for i in perm)
  if perm != tuple(range(rank)):
    x = ctx.op("stablehlo.transpose", [x], ctx.tensor_type(moved, dtype),
               attrs={"permutation": perm})
  b = int(np.prod(moved[:-1], dtype=np.int64))
  rows = ctx.op("stablehlo.reshape", [x], ctx.tensor_type((b, moved[-1]), dtype))
  return rows, moved, perm


def from_rows(ctx, rows: Value, moved, perm, dtype) -> Value:
  """Undo ``to_rows`` (the last dimension may have a new length)."""
  moved = tuple(moved[:-1]) + (shape_of(rows)[1],)
  x = ctx.op("stablehlo.reshape", [rows], ctx.tensor_type(moved, dtype))
  if perm != tuple(range(len(perm))):
    inv = tuple(int(i) for i in np.argsort(perm))
    x = ctx.op("stablehlo.transpose", [x],
               ctx.tensor_type(tuple(moved[i] for i in inv), dtype),
               attrs={"permutation": inv})
  return x


__all__ = ["use_comparator", "sort_keys", "lex_less", "sort_permutation",
           "smallest_permutation", "take_rows",
           "to_rows", "from_rows"]
