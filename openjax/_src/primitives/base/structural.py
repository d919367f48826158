"""The structural primitives every family's rules may use: add_any (tangent
accumulation), broadcast_in_dim, reshape, iota, squeeze, transpose and
reduce_sum, each with all its rules, and the JVP rule builders ``defjvp``,
``defjvp2`` and ``deflinear`` (written with add_any and zeros). Every other
family (and ``batch_util``) builds on these; the ``shape`` family adds the
slicing and joining primitives."""
from __future__ import annotations

import functools

import math
import operator
from typing import Callable

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core import Primitive, ShapedArray, array_of, get_aval, pp_eqn
from openjax._src.core.memory import CHECK_MIN_BYTES, check_allocation
from openjax._src.core.sharding import resolve_sharding
from openjax._src.core.sharding_rules import elementwise_rule, reduce_axes_rule, reshape_spec
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.convert import lower_convert
from openjax._src.primitives.base.reduce_lowering import reduce
from openjax._src.primitives.base.util import (axes_tuple, check_number, in_float32, int_tuple,
                                               is_int_tuple, quiet, reduced_shape, shape_of)

__all__ = ["broadcast_in_dim", "broadcast_in_dim_p", "reshape", "reshape_p", "iota", "iota_p",
           "broadcast", "broadcasted_iota", "squeeze", "squeeze_p", "expand_dims", "transpose",
           "transpose_p", "reduce_sum", "reduce_sum_p"]


def _shape_tuple(fun: str, name: str, shape) -> tuple[int, ...]:
  if is_int_tuple(shape) and (not shape or min(shape) >= 0):
    return shape
  try:
    out = tuple(operator.index(d) for d in shape)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a tuple of integers, got {shape!r}") from None
  if any(d < 0 for d in out):
    raise TypeError(f"{fun}: {name} must have non-negative dimensions, got {out}")
  return out


def moveaxis(x, src: int, dst: int):
  """Move axis ``src`` of ``x`` to position ``dst`` (no-op when equal)."""
  nd = get_aval(x).ndim
  src, dst = canonicalize_axis(src, nd), canonicalize_axis(dst, nd)
  if src == dst:
    return x
  perm = [i for i in range(nd) if i != src]
  perm.insert(dst, src)
  return transpose(x, tuple(perm))


def _shifted(axes, bdim: int) -> tuple[int, ...]:
  """Operand ``axes`` renumbered for an operand with a batch dim at ``bdim``."""
  return tuple(a + 1 if a >= bdim else a for a in axes)


def canonicalize_axis(axis, ndim: int) -> int:
  """``axis`` in ``[-ndim, ndim)`` as a non-negative int (lax's ValueError)."""
  axis = operator.index(axis)
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis + ndim if axis < 0 else axis


# ------------------------------------------ tangent zeros, add_any, JVP rule builders
# Here rather than in ad_util: zeros are staged as ``broadcast_in_dim`` and
# ``add_any`` batches with ``broadcast_in_dim``/``transpose``, while those
# primitives' own rules are built with ``deflinear``.
def zeros_like_aval(aval: ShapedArray):
  """An array of zeros for ``aval`` (staged as ``broadcast_in_dim 0.0`` under
  tracing, like JAX)."""
  if aval.dtype == dtypes.float0:
    return np.zeros(aval.shape, dtypes.float0)
  # A 0-d Array: an Array when eager, a literal when traced (like JAX).
  zero = array_of(np.zeros((), aval.dtype), ShapedArray((), aval.dtype, aval.weak_type))
  return zero if not aval.shape else broadcast_in_dim(zero, aval.shape, ())


def instantiate_zeros(t):
  """A real array for a possibly symbolic zero."""
  return zeros_like_aval(t.aval) if type(t) is Zero else t


# ----------------------------------------------------------------- add_any
add_any_p = Primitive("add_any", kind="linear")


def add_tangents(x, y):
  if type(x) is Zero:
    return y
  if type(y) is Zero:
    return x
  return add_any_p.bind1(x, y)


@add_any_p.def_impl
def _add_any_impl(x, y):
  if x.dtype == dtypes.float0:
    return [x]
  return [np.add(x, y).astype(x.dtype)]


@add_any_p.def_abstract_eval
def _add_any_abstract_eval(x, y):
  if x.shape != y.shape:
    raise TypeError(f"add_any: shapes differ, {x.str_short()} and {y.str_short()}")
  return [ShapedArray(x.shape, x.dtype, x.weak_type and y.weak_type)]


add_any_p.def_sharding_rule(elementwise_rule("add_any"))


@add_any_p.def_jvp
def _add_any_jvp(primals, tangents):
  return [add_any_p.bind1(*primals)], [add_tangents(*tangents)]


@add_any_p.def_transpose
def _add_any_transpose(cts, x, y):
  ct, = cts
  return [ct, ct]


@add_any_p.def_batch
def _add_any_batch(vals, dims):
  x, y = vals
  dx, dy = dims
  if dx == dy:
    return [add_any_p.bind1(x, y)], [dx]
  if dx is None:
    x, y, dx, dy = y, x, dy, dx          # symmetric: let x be the batched operand
  # y (unbatched, or batched at another dim) follows x's batch dim.
  if dy is None:
    aval = get_aval(y)
    shape = aval.shape[:dx] + (get_aval(x).shape[dx],) + aval.shape[dx:]
    bdims = tuple(i if i < dx else i + 1 for i in range(aval.ndim))
    y = broadcast_in_dim(y, shape, bdims)
  else:
    perm = [i for i in range(get_aval(y).ndim) if i != dy]
    perm.insert(dx, dy)
    y = transpose(y, tuple(perm))
  return [add_any_p.bind1(x, y)], [dx]


@add_any_p.def_lower
def _add_any_lower(ctx, x, y):
  if ctx.avals_out[0].dtype == dtypes.float0:
    return [x]          # float0 tangents carry no values (lowered as i1)
  if ctx.avals_out[0].dtype == np.bool_:
    return [ctx.op("stablehlo.or", [x, y], ctx.avals_out[0])]
  return [ctx.op("stablehlo.add", [x, y], ctx.avals_out[0])]


def defjvp(prim: Primitive, *jvp_fns: Callable | None) -> None:
  """JVP from one function per operand: ``fn(g, *primals, **params)`` is the
  tangent contribution of operand ``i`` (None: not differentiable there).
  Contributions are summed; zero tangents cost nothing."""
  def rule(primals, tangents, **params):
    out = prim.bind1(*primals, **params)
    total = None
    for fn, t in zip(jvp_fns, tangents):
      if fn is None or type(t) is Zero:
        continue
      contrib = fn(t, *primals, **params)
      total = contrib if total is None else add_any_p.bind1(total, contrib)
    return [out], [Zero.from_primal_value(out) if total is None else total]
  prim.def_jvp(rule)


def defjvp2(prim: Primitive, *jvp_fns: Callable | None) -> None:
  """Like ``defjvp`` but each function also receives the output:
  ``fn(g, ans, *primals, **params)`` (e.g. exp's tangent is ``g * ans``)."""
  def rule(primals, tangents, **params):
    out = prim.bind1(*primals, **params)
    total = None
    for fn, t in zip(jvp_fns, tangents):
      if fn is None or type(t) is Zero:
        continue
      contrib = fn(t, out, *primals, **params)
      total = contrib if total is None else add_any_p.bind1(total, contrib)
    return [out], [Zero.from_primal_value(out) if total is None else total]
  prim.def_jvp(rule)


def deflinear(prim: Primitive, transpose_fn: Callable) -> None:
  """A primitive linear in all operands: its JVP applies it to the tangents,
  and ``transpose_fn(ct, *invals, **params) -> list`` transposes it."""
  def jvp(primals, tangents, **params):
    outs = prim.bind(*primals, **params)
    if all(type(t) is Zero for t in tangents):
      return outs, [Zero.from_primal_value(o) for o in outs]
    return outs, prim.bind(*(instantiate_zeros(t) for t in tangents), **params)

  def transpose(cts, *invals, **params):
    ct = cts[0] if len(cts) == 1 else cts
    if type(ct) is Zero:
      return [Zero(x.aval) if is_undefined_primal(x) else None for x in invals]
    return transpose_fn(ct, *invals, **params)
  prim.def_jvp(jvp)
  prim.def_transpose(transpose)


# ------------------------------------------------------------ broadcast_in_dim
broadcast_in_dim_p = Primitive("broadcast_in_dim", kind="linear")


def broadcast_in_dim(operand, shape, broadcast_dimensions, out_sharding=None):
  """Broadcast ``operand`` to ``shape``; operand dimension ``i`` becomes
  output dimension ``broadcast_dimensions[i]``."""
  shape = _shape_tuple("broadcast_in_dim", "shape", shape)
  bdims = broadcast_dimensions if is_int_tuple(broadcast_dimensions) else \
      tuple(int(d) for d in broadcast_dimensions)
  aval = getattr(operand, "aval", None)
  if aval is not None and aval.shape == shape and bdims == tuple(range(len(shape))):
    return operand
  return broadcast_in_dim_p.bind1(operand, shape=shape, broadcast_dimensions=bdims,
                                  sharding=out_sharding)


def broadcast(operand, sizes):
  """Add leading dimensions of ``sizes`` to ``operand``."""
  sizes = _shape_tuple("broadcast", "sizes", sizes)
  shape = shape_of(operand)
  return broadcast_in_dim(operand, sizes + shape, tuple(range(len(sizes), len(sizes) + len(shape))))


@broadcast_in_dim_p.def_impl
def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions, sharding=None):
  # The result is a view, but it stands for an array of ``shape``: JAX
  # allocates that and fails here when it cannot.
  check_allocation("broadcast_in_dim", shape, x.dtype)
  expanded = [1] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    expanded[d] = x.shape[i]
  return [np.broadcast_to(np.reshape(x, expanded), shape)]


@broadcast_in_dim_p.def_eval_kernel
def _broadcast_in_dim_eval_kernel(x, *, shape, broadcast_dimensions, sharding=None):
  new = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
  if (new and list(broadcast_dimensions) == sorted(broadcast_dimensions)
      and all(shape[d] == 1 for d in new)
      and all(shape[d] == n for d, n in zip(broadcast_dimensions, x.shape))):
    # Only new size-1 dimensions (keepdims, expand_dims): a view at any size
    # (no memory to check), by an index that needs no shapes (the plan
    # samples large operands at size 1): ``x[None, :, None]``.
    return operator.itemgetter(tuple(None if d in new else slice(None)
                                     for d in range(len(shape))))
  if math.prod(shape) * x.dtype.itemsize >= CHECK_MIN_BYTES:
    return None   # the impl checks that the memory it stands for exists
  if math.prod(x.shape) == math.prod(shape) and list(broadcast_dimensions) == sorted(
      broadcast_dimensions):
    return functools.partial(np.reshape, shape=shape)
  return functools.partial(_broadcast_view, shape=shape, broadcast_dimensions=broadcast_dimensions)


def _broadcast_view(x, *, shape, broadcast_dimensions):
  """The broadcast as a read-only view of ``x`` with zero strides along the
  new and the size-1 dimensions: ~0.4 us where ``np.broadcast_to`` takes
  ~3 us, and a broadcast of 1e6 elements holds no copy (a reduction over it
  reads ``x``'s memory)."""
  if not x.flags.c_contiguous:
    return _broadcast_in_dim_impl(x, shape=shape, broadcast_dimensions=broadcast_dimensions)[0]
  strides = [0] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    if x.shape[i] != 1:
      strides[d] = x.strides[i]
  return np.ndarray(shape, x.dtype, x, 0, strides)


@broadcast_in_dim_p.def_abstract_eval
def _broadcast_in_dim_abstract_eval(x, *, shape, broadcast_dimensions, sharding=None):
  if len(broadcast_dimensions) != x.ndim:
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must have length equal to operand "
        f"ndim; got broadcast_dimensions {broadcast_dimensions} for operand ndim "
        f"{x.ndim}.")
  if any(not 0 <= d < len(shape) for d in broadcast_dimensions):
    raise TypeError(
        "broadcast_in_dim broadcast_dimensions must be in range [0, len(shape)); "
        f"got {broadcast_dimensions} for shape {shape}.")
  if list(broadcast_dimensions) != sorted(set(broadcast_dimensions)):
    raise TypeError("broadcast_in_dim broadcast_dimensions must be strictly increasing; "
                    f"got broadcast_dimensions {broadcast_dimensions}")
  for i, d in enumerate(broadcast_dimensions):
    if x.shape[i] not in (1, shape[d]):
      raise TypeError(
          "broadcast_in_dim operand dimension sizes must either be 1, or be equal to "
          "their corresponding dimensions in the target broadcast shape; got operand "
          f"of shape {x.shape}, target broadcast shape {shape}, broadcast_dimensions "
          f"{broadcast_dimensions} ")
  return [ShapedArray(shape, x.dtype, x.weak_type)]


@broadcast_in_dim_p.def_sharding_rule
def _broadcast_in_dim_sharding_rule(specs, avals, out_avals, *, shape, broadcast_dimensions,
                                    sharding=None):
  if sharding is not None:   # asked for (a transpose lays a cotangent out as its primal)
    return [tuple(sharding.spec._normalized_spec_for_aval(len(shape)))]
  out = [None] * len(shape)
  for i, d in enumerate(broadcast_dimensions):
    if avals[0].shape[i] == shape[d]:
      out[d] = specs[0][i]
  return [tuple(out)]


@broadcast_in_dim_p.def_pp
def _broadcast_in_dim_pp(eqn, ctx):
  # Like JAX: the shape is implied by the binder's type; trivial dims hidden.
  params = {k: v for k, v in eqn.params.items() if k not in ("shape", "sharding")}
  if not params["broadcast_dimensions"]:
    del params["broadcast_dimensions"]
  return pp_eqn(eqn, ctx, params=dict(sorted(params.items())))


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions, sharding=None):
  if not is_undefined_primal(x):
    return [None]
  # Sum over the new dims; operand dims of size 1 that were stretched come
  # back through a final expand_dims (as JAX does).
  unit_dims = tuple(i for i, d in enumerate(x.aval.shape) if d == 1)
  kept = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
  axes = tuple(i for i in range(len(shape)) if i not in kept)
  return [expand_dims(reduce_sum(ct, axes), unit_dims)]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


@broadcast_in_dim_p.def_batch
def _broadcast_in_dim_batch(vals, dims, *, shape, broadcast_dimensions, sharding=None):
  x, = vals
  d, = dims
  x = moveaxis(x, d, 0)
  size = get_aval(x).shape[0]
  return [broadcast_in_dim(x, (size,) + shape,
                           (0,) + tuple(b + 1 for b in broadcast_dimensions))], [0]


@broadcast_in_dim_p.def_lower
def _broadcast_in_dim_lower(ctx, x, *, shape, broadcast_dimensions, sharding=None):
  out = ctx.op("stablehlo.broadcast_in_dim", [x], ctx.avals_out[0],
               attrs={"broadcast_dimensions": tuple(broadcast_dimensions)})
  if ctx.avals_out[0].dtype == np.complex128 and not ctx.avals_in[0].shape:
    # IREE cannot fill a buffer with a 128-bit pattern: equal complex128
    # fills become one computed buffer, and a loop updating one of them in
    # place (dynamic_update_slice) wrote into the others (two triangular
    # solves in one module gave wrong solutions). The barrier keeps each
    # fill a value of its own.
    out = ctx.op("stablehlo.optimization_barrier", [out], out.type)
  return [out]


# -------------------------------------------------------------------- reshape
reshape_p = Primitive("reshape", kind="linear")


def reshape(operand, new_sizes, dimensions=None, out_sharding=None):
  """Reshape ``operand`` to ``new_sizes`` (after transposing by ``dimensions``
  if given); the total size must not change."""
  new_sizes = _shape_tuple("reshape", "new_sizes", new_sizes)
  dims = None if dimensions is None else tuple(int(d) for d in dimensions)
  if dims is not None and dims == tuple(range(len(shape_of(operand)))):
    dims = None
  if dims is None and getattr(operand, "aval", None) is not None and \
      operand.aval.shape == new_sizes:
    return operand
  return reshape_p.bind1(operand, new_sizes=new_sizes, dimensions=dims, sharding=None)


@reshape_p.def_impl
def _reshape_impl(x, *, new_sizes, dimensions, sharding=None):
  if dimensions is not None:
    x = np.transpose(x, dimensions)
  if x.ndim >= 2 and x.strides[-1] == 0 and x.shape[-1] > 1:
    # A broadcast along the last axis (``jnp.repeat``'s): when the reshape
    # must copy, np.repeat writes the copy ~2x faster than the strided one.
    try:
      return [np.reshape(x, new_sizes, copy=False)]
    except ValueError:
      x = np.repeat(x[..., :1], x.shape[-1], axis=-1)
  return [np.reshape(x, new_sizes)]


@reshape_p.def_eval_kernel
def _reshape_eval_kernel(x, *, new_sizes, dimensions, sharding=None):
  # A small row-major reshape: the ndarray method (~0.2 us; the impl ~1.5). Over 4096
  # elements the plan samples at size 1, which a reshape cannot take: the impl runs.
  if dimensions is not None or math.prod(x.shape) > 4096:
    return None
  return operator.methodcaller("reshape", new_sizes)


@reshape_p.def_abstract_eval
def _reshape_abstract_eval(x, *, new_sizes, dimensions, sharding=None):
  if math.prod(new_sizes) != x.size:
    raise TypeError(f"reshape total size must be unchanged, got new_sizes {new_sizes} "
                    f"(of total size {math.prod(new_sizes)}) for shape "
                    f"{x.shape} (of total size {x.size}).")
  if dimensions is not None and sorted(dimensions) != list(range(x.ndim)):
    raise TypeError("reshape dimensions must be a permutation of operand dimensions, "
                    f"got dimensions {dimensions} for shape {x.shape}.")
  return [ShapedArray(new_sizes, x.dtype, x.weak_type)]


@reshape_p.def_sharding_rule
def _reshape_sharding_rule(specs, avals, out_avals, *, new_sizes, dimensions, sharding=None):
  spec, shape = specs[0], avals[0].shape
  if dimensions is not None:
    spec = tuple(spec[d] for d in dimensions)
    shape = tuple(shape[d] for d in dimensions)
  return [reshape_spec(spec, shape, tuple(new_sizes), avals[0])]


def _reshape_transpose(ct, x, *, new_sizes, dimensions, sharding=None):
  shape = x.aval.shape
  if dimensions is None:
    return [reshape(ct, shape)]
  ct = reshape(ct, tuple(shape[d] for d in dimensions))
  return [transpose(ct, tuple(int(i) for i in np.argsort(dimensions)))]


deflinear(reshape_p, _reshape_transpose)


@reshape_p.def_batch
def _reshape_batch(vals, dims, *, new_sizes, dimensions, sharding=None):
  x, = vals
  d, = dims
  x = moveaxis(x, d, 0)
  if dimensions is not None:
    dimensions = (0,) + tuple(i + 1 for i in dimensions)
  return [reshape(x, get_aval(x).shape[:1] + new_sizes, dimensions)], [0]


@reshape_p.def_lower
def _reshape_lower(ctx, x, *, new_sizes, dimensions, sharding=None):
  if dimensions is not None:
    aval = ctx.avals_in[0]
    x = ctx.op("stablehlo.transpose", [x],
               ctx.tensor_type(tuple(aval.shape[d] for d in dimensions), aval.dtype),
               attrs={"permutation": tuple(dimensions)})
  return [ctx.op("stablehlo.reshape", [x], ctx.avals_out[0])]


# ----------------------------------------------------------------------- iota
iota_p = Primitive("iota", kind="nondifferentiable")


def iota(dtype, size: int):
  """``[0, 1, ..., size-1]`` of ``dtype``."""
  return broadcasted_iota(dtype, (size,), 0)


def broadcasted_iota(dtype, shape, dimension: int, out_sharding=None):
  """An array of ``shape`` counting along ``dimension``."""
  dtype = dtypes.explicit_dtype(dtype, "iota")
  shape = _shape_tuple("broadcasted_iota", "shape", shape)
  dimension = int(dimension)
  sharding = None if out_sharding is None else resolve_sharding(out_sharding, "broadcasted_iota")
  return iota_p.bind1(dtype=dtype, shape=shape, dimension=dimension, sharding=sharding)


@iota_p.def_impl
def _iota_impl(*, dtype, shape, dimension, sharding=None):
  check_allocation("iota", shape, dtype)
  n = shape[dimension]
  vals = np.arange(n).astype(dtype)
  expanded = [1] * len(shape)
  expanded[dimension] = n
  return [np.broadcast_to(vals.reshape(expanded), shape)]


@iota_p.def_eval_kernel
def _iota_eval_kernel(*, dtype, shape, dimension, sharding=None):
  # A small 1-d iota: the impl's arange alone (~1 us where its allocation
  # check, reshape and broadcast take ~7 us).
  if len(shape) == 1:
    if shape[0] * np.dtype(dtype).itemsize >= CHECK_MIN_BYTES:
      return None
    return functools.partial(_iota_1d, shape[0], dtype)
  if math.prod(shape) > _SMALL_IOTA_ND:   # the impl's broadcast view: no copy to write
    return None
  # More dimensions (argsort's iota): the counts along ``dimension``, made
  # once, written into a fresh array each call (np.broadcast_to costs ~3 us).
  expanded = [1] * len(shape)
  expanded[dimension] = shape[dimension]
  counts = _iota_1d(shape[dimension], dtype).reshape(expanded)
  counts.setflags(write=False)
  return functools.partial(_iota_nd, counts, shape)


# Up to this many elements an iota of several dimensions is written out (~1 us)
# rather than broadcast (~3-4 us of np.broadcast_to, then a view of no copy).
_SMALL_IOTA_ND = 1 << 14


def _iota_1d(n: int, dtype) -> np.ndarray:
  return np.arange(n).astype(dtype)


def _iota_nd(counts: np.ndarray, shape: tuple) -> np.ndarray:
  out = np.empty(shape, counts.dtype)
  out[...] = counts
  return out


@iota_p.def_abstract_eval
def _iota_abstract_eval(*, dtype, shape, dimension, sharding=None):
  if not 0 <= dimension < len(shape):
    raise ValueError(f"iota dimension must be between 0 and len(shape), got "
                     f"dimension={dimension} for shape {shape}")
  return [ShapedArray(shape, dtype, False)]


@iota_p.def_sharding_rule
def _iota_sharding_rule(specs, avals, out_avals, *, dtype, shape, dimension, sharding=None):
  if sharding is None:
    return [(None,) * len(shape)]
  return [tuple(sharding.spec._normalized_spec_for_aval(len(shape)))]
iota_p.mark_not_applicable("batch", "no operands: iota is never batched (vmap only batches "
                                    "primitives applied to batched operands)")


@iota_p.def_lower
def _iota_lower(ctx, *, dtype, shape, dimension, sharding=None):
  # Counting happens in i32/i64; other dtypes take convert's cast of those
  # integers, as the impl's ``arange(n).astype(dtype)`` does.
  dt = np.dtype(dtype)
  idt = dt if dt in (np.dtype(np.int32), np.dtype(np.int64)) else \
      np.dtype(np.int32 if shape[dimension] <= 2 ** 31 else np.int64)
  out = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, idt),
               attrs={"iota_dimension": int(dimension)})
  return [lower_convert(ctx, out, idt, dt)]


# -------------------------------------------------------------------- squeeze
squeeze_p = Primitive("squeeze", kind="linear")


def squeeze(array, dimensions):
  """Remove the size-1 ``dimensions`` from ``array``."""
  ndim = len(shape_of(array))
  if type(dimensions) is tuple and len(dimensions) == 1 and type(dimensions[0]) is int \
      and 0 <= dimensions[0] < ndim:
    dims = dimensions   # most calls: one axis, canonical already
  else:
    dims = tuple(sorted(canonicalize_axis(d, ndim) for d in dimensions))
  if not dims and hasattr(array, "aval"):
    return array
  return squeeze_p.bind1(array, dimensions=dims)


def expand_dims(array, dimensions):
  """Insert size-1 dimensions at ``dimensions`` (positions in the result)."""
  dimensions = tuple(dimensions)
  shape = shape_of(array)
  if not is_int_tuple(dimensions):   # (1.0 hashes as 1: only ints are keys)
    return broadcast_in_dim(array, *_expand_dims_layout(shape, dimensions))
  layout = _EXPAND_DIMS.get((shape, dimensions))   # the checks and layout (~3 us) once
  if layout is None:
    if len(_EXPAND_DIMS) >= 1024:
      _EXPAND_DIMS.clear()
    layout = _EXPAND_DIMS[shape, dimensions] = _expand_dims_layout(shape, dimensions)
  return broadcast_in_dim(array, *layout)


_EXPAND_DIMS: dict = {}   # (shape, dimensions) -> (result shape, kept dimensions)


def _expand_dims_layout(shape: tuple, dimensions: tuple) -> tuple:
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"repeated axis in lax.expand_dims: {dimensions}")
  ndim_out = len(shape) + len(dimensions)
  dims = [canonicalize_axis(d, ndim_out) for d in dimensions]
  if len(set(dims)) != len(dims):  # -1 and ndim_out-1 name the same axis
    raise ValueError(f"repeated axis in lax.expand_dims: {dims}")
  out = list(shape)
  for d in sorted(dims):
    out.insert(d, 1)
  new = set(dims)
  return tuple(out), tuple(i for i in range(ndim_out) if i not in new)


@squeeze_p.def_impl
def _squeeze_impl(x, *, dimensions):
  return [np.squeeze(x, axis=dimensions) if dimensions else x]


@squeeze_p.def_eval_kernel
def _squeeze_eval_kernel(x, *, dimensions):
  # One C-level index, 0 at the squeezed axes (a view; ``...`` keeps rank 0 an array).
  dims = set(dimensions)
  return operator.itemgetter(tuple(0 if d in dims else slice(None) for d in range(x.ndim))
                             + (...,))


@squeeze_p.def_abstract_eval
def _squeeze_abstract_eval(x, *, dimensions):
  if len(set(dimensions)) != len(dimensions):
    raise ValueError(f"dimensions are not unique: {dimensions}")
  if not all(0 <= d < x.ndim for d in dimensions):
    raise ValueError(f"dimensions outside range [0, ndim): {dimensions}")
  if any(x.shape[d] != 1 for d in dimensions):
    raise ValueError("cannot select an axis to squeeze out which has size not equal to "
                     f"one, got shape={x.shape} and dimensions={dimensions}")
  shape = tuple(s for i, s in enumerate(x.shape) if i not in dimensions)
  return [ShapedArray(shape, x.dtype, x.weak_type)]


@squeeze_p.def_sharding_rule
def _squeeze_sharding_rule(specs, avals, out_avals, *, dimensions):
  return [tuple(p for d, p in enumerate(specs[0]) if d not in dimensions)]


def _squeeze_transpose(ct, x, *, dimensions):
  return [expand_dims(ct, dimensions)]


deflinear(squeeze_p, _squeeze_transpose)


@squeeze_p.def_batch
def _squeeze_batch(vals, dims, *, dimensions):
  x, = vals
  d, = dims
  x = moveaxis(x, d, 0)
  return [squeeze(x, tuple(i + 1 for i in dimensions))], [0]


@squeeze_p.def_lower
def _squeeze_lower(ctx, x, *, dimensions):
  return [ctx.op("stablehlo.reshape", [x], ctx.avals_out[0])]


# ------------------------------------------------------------------ transpose
transpose_p = Primitive("transpose", kind="linear")


def transpose(operand, permutation):
  """Permute the dimensions of ``operand``: result dimension ``i`` is operand
  dimension ``permutation[i]``."""
  if not isinstance(permutation, (tuple, list, np.ndarray)):
    raise TypeError(f"transpose permutation must be a tuple/list/ndarray, got "
                    f"{type(permutation)}.")
  perm = int_tuple("transpose", "permutation", permutation)
  if perm == tuple(range(len(shape_of(operand)))) and hasattr(operand, "aval"):
    return operand
  return transpose_p.bind1(operand, permutation=perm)


@transpose_p.def_impl
def _transpose_impl(x, *, permutation):
  return [np.transpose(x, permutation)]


@transpose_p.def_eval_kernel
def _transpose_eval_kernel(x, *, permutation):
  # The ndarray method: np.transpose's view without its function frames.
  return operator.methodcaller("transpose", permutation)


@transpose_p.def_abstract_eval
def _transpose_abstract_eval(x, *, permutation):
  if tuple(sorted(permutation)) != tuple(range(x.ndim)):
    raise TypeError("transpose permutation isn't a permutation of operand dimensions, "
                    f"got permutation {permutation} for operand shape {x.shape}.")
  return [ShapedArray(tuple(x.shape[i] for i in permutation), x.dtype, x.weak_type)]


@transpose_p.def_sharding_rule
def _transpose_sharding_rule(specs, avals, out_avals, *, permutation):
  return [tuple(specs[0][d] for d in permutation)]


def _transpose_transpose(ct, x, *, permutation):
  return [transpose(ct, tuple(int(i) for i in np.argsort(permutation)))]


deflinear(transpose_p, _transpose_transpose)


@transpose_p.def_batch
def _transpose_batch(vals, dims, *, permutation):
  x, = vals
  d, = dims
  return [transpose(x, (d,) + _shifted(permutation, d))], [0]


@transpose_p.def_lower
def _transpose_lower(ctx, x, *, permutation):
  return [ctx.op("stablehlo.transpose", [x], ctx.avals_out[0],
                 attrs={"permutation": tuple(permutation)})]


# ------------------------------------------------------------ reduce_sum
reduce_sum_p = Primitive("reduce_sum", kind="linear")


# The dtypes jax_allow_f16_reductions=False forbids summing.
_HALF_FLOATS = frozenset((np.dtype(np.float16), np.dtype(dtypes.bfloat16)))


def reduce_sum(operand, axes, *, out_sharding=None):
  """Sum of ``operand`` over ``axes`` (no upcast of narrow dtypes)."""
  dt = getattr(operand, "dtype", None)
  if (dt in _HALF_FLOATS and not config.read("jax_allow_f16_reductions")
      and any(operand.shape[a] != 1 for a in axes_tuple("reduce_sum", axes))):
    raise ValueError(f"reduce_sum on operand {get_aval(operand).str_short()} is not allowed "
                     "when jax_allow_f16_reductions=False; sum in float32 "
                     "(dtype=jnp.float32) or allow half-precision reductions.")
  return reduce_sum_p.bind1(operand, axes=axes_tuple("reduce_sum", axes), out_sharding=None)


@reduce_sum_p.def_impl
@quiet
def _reduce_sum_impl(x, *, axes, out_sharding=None):
  if not axes:   # JAX gives the operand back (np.sum would turn -0.0 into 0.0)
    return [x]
  xc, dt = in_float32(x)
  return [np.asarray(np.sum(xc, axis=axes, dtype=xc.dtype)).astype(dt)]


@reduce_sum_p.def_eval_kernel
def _reduce_sum_eval_kernel(x, *, axes, out_sharding=None):
  # The impl's np.sum for NumPy's dtypes (ml_dtypes floats sum in float32).
  if not axes:   # nothing reduced: the operand itself (np.add.reduce copies it)
    return _same_value
  if x.dtype in dtypes.custom_float_dtypes:
    return None
  return functools.partial(np.add.reduce, axis=axes, dtype=x.dtype)


def _same_value(x):
  return x


@reduce_sum_p.def_abstract_eval
def _reduce_sum_abstract_eval(x, *, axes, out_sharding=None):
  check_number("reduce_sum", x)
  return [ShapedArray(reduced_shape(x, axes), x.dtype, x.weak_type)]


reduce_sum_p.def_sharding_rule(reduce_axes_rule)


def _reduce_sum_transpose(ct, x, *, axes, out_sharding=None):
  shape = x.aval.shape
  kept = tuple(i for i in range(len(shape)) if i not in axes)
  # The cotangent is laid out as the operand (JAX's rule).
  return [broadcast_in_dim(ct, shape, kept, out_sharding=x.aval.sharding)]


deflinear(reduce_sum_p, _reduce_sum_transpose)


@reduce_sum_p.def_batch
def _reduce_sum_batch(vals, dims, *, axes, out_sharding=None):
  x, = vals
  d, = dims
  axes = _shifted(axes, d)
  out_dim = d - sum(a < d for a in axes)
  return [reduce_sum(x, axes)], [out_dim]


@reduce_sum_p.def_lower
def _reduce_sum_lower(ctx, x, *, axes, out_sharding=None):
  # ml_dtypes floats accumulate in float32, as the impl does.
  return [reduce(ctx, x, axes, "add", 0, ctx.avals_in[0].dtype, ctx.avals_out[0])]
