"""``sort``'s and ``top_k``'s lowerings: long sorts in compiled CPU programs
run as host kernels.

IREE lowers ``stablehlo.sort`` as O(n^2) per row, so the primitives' own
lowerings (``primitives/sort/sort_lowering.py``) sort long rows by a radix
sort written in StableHLO (a ``while`` over the key bits, a counting sort per
two bits): correct, but ~10x slower than NumPy's sorts (jaxbench's ``sort``,
``jit(jnp.sort)`` of 1M float32: 150-230 ms compiled vs 15-30 ms
interpreted). A compiled program whose module may call host kernels
(``ModuleBuilder.host_kernels``) therefore runs a sort that repays a host
call (``worth_host``) as the NumPy sort the primitive's impl runs
(``sort.sort_arrays``: the values the interpreted path gives, bit for bit:
JAX's total order, equal keys in input order) on views of the program's
buffers, copied into the result buffers (~2% of a 1M sort's time);
so does a ``top_k`` (or ``approx_max_k``/``approx_min_k``, exact on the
CPU) that the primitive would sort for (``top_k_worth_host``).
Short sorts, where IREE's comparator sort costs less than the call, top_k of
a few elements of long rows (selected by min-reductions), and modules
lowered for reading (``Lowered.as_text``) keep the primitives' lowerings.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.primitives.sort.approx_top_k import approx_top_k_arrays, approx_top_k_p
from openjax._src.primitives.sort.sort import sort_arrays, sort_p, top_k_arrays, top_k_p
from openjax._src.primitives.sort.sort_lowering import SELECTION_MAX_K, use_comparator
from openjax._src.runtime import host_blas, host_calls
from openjax._src.runtime.iree_device import hal_element_type

#: A sort runs on the host when its rows are at least HOST_MIN_ROW long and
#: IREE's comparator sort (~3 ns * rows * n**2) would cost at least ~60 us:
#: rows * n**2 >= HOST_MIN_WORK; rows the primitive sorts by its radix sort
#: (~1 ms + 0.2 us an element) always do. A/B in one process, process CPU
#: ms, min of 7-9 (2 shared cores), IREE -> host kernel, one row: 64 0.157
#: -> 0.182, 96 0.175 -> 0.188, 128 0.21-0.29 -> 0.18-0.32, 144 0.278 ->
#: 0.228, 200 0.331 -> 0.196, 512 1.25 -> 0.30, 1e3 0.57 -> 0.28, 1e5 14.8
#: -> 2.4, 1e6 153 -> 13.9; rows x n: 1000x2 0.152 -> 0.260, 1e5x2 2.7 ->
#: 5.7, 1e5x4 6.7 -> 7.6, 1e5x8 27.8 -> 18.8, 1000x8 0.311 -> 0.309,
#: 100x16 0.239 -> 0.237, 1000x16 0.93 -> 0.57, 100x32 0.54 -> 0.31,
#: 1000x64 16.5 -> 3.2, 1000x1000 227 -> 9.7 (axis 0: 247 -> 15.0);
#: sort_key_val 100 0.243 -> 0.277, 200 0.275 -> 0.217, 1e6 145 -> 60;
#: two keys 200 0.428 -> 0.317, 1e6 196 -> 126.
HOST_MIN_ROW = 8
HOST_MIN_WORK = 2e4

_primitive_lower = sort_p.lower
_top_k_primitive_lower = top_k_p.lower
_approx_primitive_lower = approx_top_k_p.lower


#: A sort of several rows sorts a block of rows per core, each of at least
#: this many elements (``host_blas.block_count``, ``run_blocks``; the
#: hand-off to a pool thread costs ~20-50 us). Quiet 2-core machine, wall
#: ms, min of 15, one block -> two: 1000x1000 f32 13.6 -> 7.9, 64x16384 12.6
#: -> 8.0, 8x125000 12.1 -> 9.6, 100x1000 1.02 -> 0.90; compiled jnp.sort of
#: 1000x1000 along axis 1, median 14.2 -> 7.4 ms: two blocks from 2**17
#: elements on 2 cores. (On the loaded machine, with the second core busy,
#: the two were equal.) One row stays on one thread.
BLOCK_MIN_ELEMENTS = 1 << 16


class _HostSort:
  """A sort of ``n_operands`` arrays by the first ``num_keys`` along
  ``dimension`` as the impl computes it; calling it is the kernel. Rows
  are independent: large sorts of several rows split them over the cores
  along the longest other axis (``BLOCK_MIN_ELEMENTS``)."""
  __slots__ = ("dimension", "num_keys", "n_operands")

  def __init__(self, dimension: int, num_keys: int, n_operands: int):
    self.dimension = dimension
    self.num_keys = num_keys
    self.n_operands = n_operands

  def __call__(self, *buffers) -> None:
    operands, results = buffers[:self.n_operands], buffers[self.n_operands:]
    shape = operands[0].shape
    others = [d for d in range(len(shape)) if d != self.dimension]
    axis = max(others, key=lambda d: shape[d], default=None)
    count = 1
    if axis is not None:
      count = min(host_blas.block_count(operands[0].size, BLOCK_MIN_ELEMENTS), shape[axis])
    if count <= 1:
      self._sort(operands, results)
      return
    bounds = [shape[axis] * i // count for i in range(count + 1)]

    def block(i: int) -> None:
      index = [slice(None)] * len(shape)
      index[axis] = slice(bounds[i], bounds[i + 1])
      index = tuple(index)
      self._sort([o[index] for o in operands], [r[index] for r in results])
    host_blas.run_blocks(block, count)

  def _sort(self, operands, results) -> None:
    outs = sort_arrays(*operands, dimension=self.dimension, num_keys=self.num_keys)
    for r, o in zip(results, outs):
      np.copyto(r, o, casting="no")


def worth_host(avals, dimension: int, num_keys: int) -> bool:
  """Whether sorting operands of ``avals`` along ``dimension`` costs less
  as a host kernel than as IREE's sort (``HOST_MIN_ROW``, ``HOST_MIN_WORK``)."""
  shape = avals[0].shape
  if not shape or 0 in shape or not all(_in_buffers(a.dtype) for a in avals):
    return False
  n = shape[dimension]
  rows = avals[0].size // n
  if n < HOST_MIN_ROW:
    return False
  if rows * n * n >= HOST_MIN_WORK:
    return True
  return not use_comparator(rows, n, [b for a in avals[:num_keys] for b in _key_bytes(a.dtype)])


def top_k_worth_host(aval, k: int, axis: int) -> bool:
  """Whether ``top_k`` of ``aval`` costs less as a host kernel: a sort worth
  it (``worth_host``) that the primitive would not do by selecting the ``k``
  smallest keys (``sort_lowering.smallest_permutation``: k min-reductions,
  faster than the host's partition and sort; A/B as above, IREE -> host:
  k=5 of 1e6 7.3 -> 33.7, k=32 5.9 -> 34.7, k=5 of 100x1000 0.82 -> 1.22).
  Sorting instead, the host wins as for sort: k=100 of 1e6 295 -> 32, k=40
  of 100x1000 14.9 -> 2.3, of 1e4 1.69 -> 0.61, of 200 0.345 -> 0.321, of
  100 0.221 -> 0.283, k=3 of 1000x16 1.38 -> 1.06, k=10 of 300 0.57 -> 0.31.
  ``approx_max_k``/``approx_min_k`` follow the same rule."""
  shape = aval.shape
  if k <= 0 or not shape or 0 in shape:
    return False
  n = shape[axis]
  rows = aval.size // n
  selects = (k <= SELECTION_MAX_K and np.dtype(aval.dtype).itemsize <= 4
             and not use_comparator(rows, n, [4]) and n < 2 ** 32 - 1)
  return not selects and worth_host([aval], axis, 1)


def _in_buffers(dtype) -> bool:
  """Whether IREE buffers hold ``dtype`` (sub-byte types stay in the program)."""
  try:
    hal_element_type(np.dtype(dtype))
  except NotImplementedError:
    return False
  return True


def _key_bytes(dtype) -> list[int]:
  """The widths of the integer keys the primitive's lowering sorts ``dtype``
  by (``sort_lowering.sort_keys``: i64 for 64-bit parts, else i32)."""
  dt = np.dtype(dtype)
  if dtypes.kind(dt) == "c":
    return [8 if dt.itemsize == 16 else 4] * 2
  return [8 if dt.itemsize == 8 else 4]


@sort_p.def_lower
def _sort_lower(ctx, *operands, dimension, is_stable, num_keys):
  avals = ctx.avals_in
  if ctx.module.host_kernels and worth_host(avals, dimension, num_keys):
    sort = _HostSort(dimension, num_keys, len(avals))
    kernel = host_calls.register_kernel(sort, avals, ctx.avals_out,
                                        key=("sort", dimension, num_keys))
    return ctx.call_import(kernel.symbol, list(operands), ctx.avals_out)
  return _primitive_lower(ctx, *operands, dimension=dimension, is_stable=is_stable,
                          num_keys=num_keys)


class _HostTopK:
  """``top_k`` as the impl computes it; calling it is the kernel."""
  __slots__ = ("k", "axis")

  def __init__(self, k: int, axis: int):
    self.k, self.axis = k, axis

  def __call__(self, x: np.ndarray, values: np.ndarray, indices: np.ndarray) -> None:
    got_values, got_indices = top_k_arrays(x, k=self.k, axis=self.axis)
    np.copyto(values, got_values, casting="no")
    np.copyto(indices, got_indices, casting="no")


class _HostApproxTopK:
  """``approx_max_k``/``approx_min_k`` as the impl computes them (exact on
  the CPU, as in JAX); calling it is the kernel."""
  __slots__ = ("params",)

  def __init__(self, params: dict):
    self.params = params

  def __call__(self, x: np.ndarray, values: np.ndarray, indices: np.ndarray) -> None:
    got_values, got_indices = approx_top_k_arrays(x, **self.params)
    np.copyto(values, got_values, casting="no")
    np.copyto(indices, got_indices, casting="no")


@approx_top_k_p.def_lower
def _approx_top_k_lower(ctx, x, **params):
  # As top_k: the primitive's lowering selects a few of long rows by
  # min-reductions, and sorts otherwise (its radix sort: k=100 of 1e6
  # float32, process CPU ms, IREE 354 vs the impl's partition kernel ~10).
  aval, (values, _) = ctx.avals_in[0], ctx.avals_out
  axis = params["reduction_dimension"] % aval.ndim
  if ctx.module.host_kernels and top_k_worth_host(aval, values.shape[axis], axis):
    kernel = host_calls.register_kernel(_HostApproxTopK(params), ctx.avals_in, ctx.avals_out,
                                        key=("approx_top_k", *sorted(params.items())))
    return ctx.call_import(kernel.symbol, [x], ctx.avals_out)
  return _approx_primitive_lower(ctx, x, **params)


@top_k_p.def_lower
def _top_k_lower(ctx, x, *, k, axis):
  if ctx.module.host_kernels and top_k_worth_host(ctx.avals_in[0], k, axis):
    kernel = host_calls.register_kernel(_HostTopK(k, axis), ctx.avals_in, ctx.avals_out,
                                        key=("top_k", k, axis))
    return ctx.call_import(kernel.symbol, [x], ctx.avals_out)
  return _top_k_primitive_lower(ctx, x, k=k, axis=axis)


__all__ = ["HOST_MIN_ROW", "HOST_MIN_WORK", "BLOCK_MIN_ELEMENTS", "worth_host",
           "top_k_worth_host"]
