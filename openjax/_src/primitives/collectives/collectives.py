"""Collectives over named axes: psum, pmax, pmin, all_gather, reduce_scatter
(``lax.psum_scatter``), ppermute, pbroadcast and axis_index (all_to_all in
``all_to_all.py``), with JAX's primitive names and parameters.

A collective names a mapped axis bound by an enclosing ``vmap(...,
axis_name=...)`` (later ``pmap``/``shard_map``). The names in scope form the
*axis env*: a thread-local stack of ``(name, size)`` frames that a mapping
transformation extends while it traces its function (``extend_axis_env``;
``make_jaxpr(f, axis_env=...)`` extends it too). Abstract evaluation checks
every name against it and raises JAX's ``NameError`` for an unbound one.

Batching: every primitive here sets ``batch_needs_axis``, so the batching
trace always calls its rule, handing it the trace's own axis as ``axis_data``
(``.name``, ``.size``; positionally or as ``axis_data=``: the frame cannot
travel as ``axis_name=``/``axis_size=`` keywords, which are parameters of
all_gather, ppermute and the others). When
the collective names that axis it is carried out over the batch dimension
with ordinary primitives (psum becomes a positional psum over the batch
dimension, all_gather a moveaxis or broadcast, ppermute a gather, axis_index
an iota); otherwise it is bound again for an outer axis, batch dim kept.

psum/pmax/pmin take ``axes`` mixing names and positional ints (an int
reduces an array dimension, as in JAX), so they evaluate outside any mapped
axis when every axis is positional. The user-facing wrappers (pytrees,
constants, axis sizes) are in ``openjax._src.lax.parallel``.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Iterable

import numpy as np

from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import MANUAL_AXES_ONLY
from openjax._src.primitives.base import ad_util
from openjax._src.primitives.base.structural import (broadcast_in_dim, deflinear, iota, moveaxis,
                                                     reduce_sum, reduce_sum_p, reshape)
from openjax._src.primitives.elementwise.arithmetic import add, mul
from openjax._src.primitives.elementwise.logic import eq, select_n
from openjax._src.primitives.reduce.reductions import reduce_max_p, reduce_min_p
from openjax._src.primitives.shape.shape import concatenate, full, index_in_dim, slice_in_dim

__all__ = ["psum_p", "psum_impl", "pmax_p", "pmin_p", "all_gather_p", "reduce_scatter_p", "ppermute_p",
           "pbroadcast_p", "axis_index_p"]


# ------------------------------------------------------------------ axis env
class _AxisEnv(threading.local):
  def __init__(self):
    self.frames: list[tuple] = []   # (name, size), innermost last


_axis_env = _AxisEnv()


@contextlib.contextmanager
def extend_axis_env(frames: Iterable[tuple]):
  """Bind ``(name, size)`` axis frames for the duration of a block."""
  frames = [(name, int(size)) for name, size in frames]
  n = len(_axis_env.frames)
  _axis_env.frames.extend(frames)
  try:
    yield
  finally:
    del _axis_env.frames[n:]


def current_axis_env() -> tuple:
  """The bound ``(name, size)`` frames, outermost first (hashable: a cache
  key for anything traced under them)."""
  return tuple(_axis_env.frames)


def _frame_size(name) -> int | None:
  for n, size in reversed(_axis_env.frames):
    if n == name:
      return size
  return None


def axis_exists(name) -> bool:
  return _frame_size(name) is not None


def bound_axis_size(name) -> int:
  """The size of the axis ``name``; JAX's NameError when it is unbound."""
  size = _frame_size(name)
  if size is None:
    raise NameError(f"unbound axis name: {name}")
  return size


def _names(axis_name) -> tuple:
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _named(axes) -> tuple:
  return tuple(a for a in axes if not isinstance(a, int))


def _check_axis_names(axes, api_name: str) -> None:
  for name in _named(axes):
    if not axis_exists(name):
      raise NameError(f"Found an unbound axis name: {name}. To fix this, please call "
                      f"{api_name} under `jax.shard_map`.")


# ------------------------------------------------ device (mesh) execution
class _MeshDevice(threading.local):
  def __init__(self):
    # The running device's member of a multi-device run (``shard_map``,
    # ``pmap``): ``.axis_names``, ``.index(names)``, ``.size(names)`` and
    # ``.exchange(names, value, api_name) -> [every member's value]``.
    self.member = None


_mesh_device = _MeshDevice()


@contextlib.contextmanager
def running_on_mesh_device(member):
  """Evaluate collectives over ``member``'s mesh axes by exchanging values
  with the other devices of its run (this thread runs that device's
  program)."""
  previous = _mesh_device.member
  _mesh_device.member = member
  try:
    yield
  finally:
    _mesh_device.member = previous


def current_mesh_member():
  return _mesh_device.member


def _device_member(names: tuple, api_name: str, checked_as: str | None = None):
  # An unbound name is the NameError abstract evaluation raises (the eval
  # trace may reuse a plan made while the name was bound).
  _check_axis_names(names, checked_as or api_name)
  member = _mesh_device.member
  if member is None or not all(n in member.axis_names for n in names):
    raise RuntimeError(f"{api_name} must be used within a mapped context like vmap or "
                       "shard_map.")
  return member


def _group_values(member, names: tuple, value, axis_index_groups, api_name: str):
  """Every group member's ``value`` (in group order) and this device's
  position in its group."""
  values = member.exchange(names, value, api_name)
  index = member.index(names)
  if axis_index_groups is None:
    return values, index
  for group in axis_index_groups:
    if index in group:
      return [values[i] for i in group], list(group).index(index)
  raise ValueError(f"{api_name}: axis_index_groups {axis_index_groups} do not contain the "
                   f"device index {index}")


# ---------------------------------------------------------- layout helpers
def _splitaxis(axis: int, factor: int, x):
  shape = list(get_aval(x).shape)
  shape[axis:axis + 1] = [factor, shape[axis] // factor]
  return reshape(x, tuple(shape))


def _foldaxis(axis: int, x):
  shape = list(get_aval(x).shape)
  shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
  return reshape(x, tuple(shape))


def _times(x, n: int):
  return mul(x, np.asarray(n, get_aval(x).dtype))


def _bcast_along(x, size: int, dim: int):
  """``x`` repeated ``size`` times along a new dimension ``dim``."""
  shape = list(get_aval(x).shape)
  shape.insert(dim, size)
  return broadcast_in_dim(x, tuple(shape), tuple(i for i in range(len(shape))
                                                         if i != dim))


def _no_groups_in_vmap(axis_index_groups) -> None:
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups not supported in vmap collectives. "
                              "Please open a feature request!")


# ---------------------------------------------------------- psum/pmax/pmin
def _allreduce_abstract_eval(x, *, axes, axis_index_groups):
  _check_axis_names(axes, "psum")   # JAX names psum for pmax and pmin too
  pos = tuple(a for a in axes if isinstance(a, int))
  if axis_index_groups is not None and pos:
    raise ValueError("axis_index_groups can only be used with reductions over named "
                     f"axes, but got: {axes}")
  if not all(0 <= a < x.ndim for a in pos) or len(set(pos)) != len(pos):
    raise ValueError(f"reduction axes {pos} contains out-of-bounds indices for {x}.")
  shape = tuple(d for i, d in enumerate(x.shape) if i not in pos)
  return [ShapedArray(shape, x.dtype, False)]


# A collective moves blocks between the devices of Manual axes. Inside a
# partially manual shard_map over an Explicit mesh, its operand may also be
# split along the other (Explicit) axes: that split stays on the result's
# dimensions as JAX types them.
def _allreduce_sharding_rule(specs, avals, out_avals, *, axes, axis_index_groups):
  pos = {a for a in axes if isinstance(a, int)}
  return [tuple(p for d, p in enumerate(specs[0]) if d not in pos)]


def _same_split_rule(specs, avals, out_avals, **params):
  return [specs[0]]


def _all_gather_sharding_rule(specs, avals, out_avals, *, tiled, **params):
  # JAX appends the new (untiled) dimension's entry last.
  return [specs[0] if tiled else specs[0] + (None,)]


def _reduce_scatter_sharding_rule(specs, avals, out_avals, *, scatter_dimension, tiled,
                                  **params):
  return [specs[0] if tiled else
          tuple(p for d, p in enumerate(specs[0]) if d != scatter_dimension)]


def _allreduce_impl(np_reduce, ufunc, api_name: str):
  def impl(x, *, axes, axis_index_groups):
    pos = tuple(a for a in axes if isinstance(a, int))
    named = _named(axes)
    if pos:
      x = np_reduce(x, axis=pos)
    if not named:
      return [x]
    member = _device_member(named, api_name, "psum")
    if axis_index_groups is None:
      return member.all_reduce(named, [np.asarray(x)], ufunc, api_name)
    values, _ = _group_values(member, named, x, axis_index_groups, api_name)
    return [np_reduce(np.stack(values), axis=0)]
  return impl


def _allreduce_batch(prim: Primitive, if_unmapped):
  """JAX's ``_batched_reduction_collective``: the batch axis of the frame
  joins the reduction as a positional axis; an unbatched operand reduced over
  the frame is ``if_unmapped(x, size)``."""
  def rule(vals, dims, axis_data, *, axes, axis_index_groups):
    (x,), (d,) = vals, dims
    frame = axis_data.name
    over_frame = frame is not None and frame in _named(axes)
    if d is None:
      if not over_frame:
        return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), [None]
      _no_groups_in_vmap(axis_index_groups)
      rest = tuple(a for a in axes if isinstance(a, int) or a != frame)
      if rest:
        x = prim.bind1(x, axes=rest, axis_index_groups=None)
      return [if_unmapped(x, axis_data.size)], [None]
    if not over_frame and not any(isinstance(a, int) for a in axes):
      return prim.bind(x, axes=axes, axis_index_groups=axis_index_groups), [d]
    _no_groups_in_vmap(axis_index_groups)
    x = moveaxis(x, d, 0)
    new_axes = tuple(a + 1 if isinstance(a, int) else (0 if a == frame else a) for a in axes)
    return prim.bind(x, axes=new_axes, axis_index_groups=None), [None if over_frame else 0]
  return rule


def _allreduce_lower(reduce_p: Primitive, name: str):
  """Positional axes (what vmap leaves of a named reduction) lower like the
  matching reduction; reductions across devices need pmap/shard_map."""
  def rule(ctx, x, *, axes, axis_index_groups):
    named = _named(axes)
    if named:
      raise NotImplementedError(
          f"{name} over the named axes {named} cannot be compiled here: named axes are "
          "only bound by vmap (which rewrites them into array reductions) for now.")
    pos = tuple(a for a in axes if isinstance(a, int))
    if not pos:
      return [x]
    return reduce_p.rule("lower")(ctx, x, axes=pos)
  return rule


psum_p = Primitive("psum", kind="linear")
psum_p.batch_needs_axis = True


def psum_array(x, axes: tuple, axis_index_groups=None):
  return psum_p.bind1(x, axes=tuple(axes), axis_index_groups=axis_index_groups)


psum_impl = _allreduce_impl(lambda x, axis: np.sum(x, axis=axis, dtype=x.dtype), np.add,
                            "psum")
psum_p.def_impl(psum_impl)
psum_p.def_abstract_eval(_allreduce_abstract_eval)
psum_p.def_sharding_rule(_allreduce_sharding_rule)
psum_p.def_batch(_allreduce_batch(psum_p, _times))


def _psum_transpose(ct, x, *, axes, axis_index_groups):
  # psum is psum + pbroadcast over its named axes, so the cotangent is summed
  # over them again; positional axes transpose like reduce_sum (broadcast).
  pos = tuple(a for a in axes if isinstance(a, int))
  if pos:
    shape = x.aval.shape
    ct = broadcast_in_dim(ct, shape, tuple(i for i in range(len(shape)) if i not in pos))
  named = _named(axes)
  if named:
    ct = psum_p.bind1(ct, axes=named, axis_index_groups=axis_index_groups)
  return [ct]


deflinear(psum_p, _psum_transpose)
psum_p.def_lower(_allreduce_lower(reduce_sum_p, "psum"))

pmax_p = Primitive("pmax")
pmax_p.batch_needs_axis = True


def pmax_array(x, axes: tuple, axis_index_groups=None):
  return pmax_p.bind1(x, axes=tuple(axes), axis_index_groups=axis_index_groups)


pmax_p.def_impl(_allreduce_impl(lambda x, axis: np.max(x, axis=axis), np.maximum, "pmax"))
pmax_p.def_abstract_eval(_allreduce_abstract_eval)
pmax_p.def_sharding_rule(_allreduce_sharding_rule)
pmax_p.def_batch(_allreduce_batch(pmax_p, lambda x, size: x))
pmax_p.mark_not_applicable("jvp", "JAX defines no derivative of pmax")
pmax_p.def_lower(_allreduce_lower(reduce_max_p, "pmax"))

pmin_p = Primitive("pmin")
pmin_p.batch_needs_axis = True


def pmin_array(x, axes: tuple, axis_index_groups=None):
  return pmin_p.bind1(x, axes=tuple(axes), axis_index_groups=axis_index_groups)


pmin_p.def_impl(_allreduce_impl(lambda x, axis: np.min(x, axis=axis), np.minimum, "pmin"))
pmin_p.def_abstract_eval(_allreduce_abstract_eval)
pmin_p.def_sharding_rule(_allreduce_sharding_rule)
pmin_p.def_batch(_allreduce_batch(pmin_p, lambda x, size: x))
pmin_p.mark_not_applicable("jvp", "JAX defines no derivative of pmin")
pmin_p.def_lower(_allreduce_lower(reduce_min_p, "pmin"))


# --------------------------------------------------------------- all_gather
all_gather_p = Primitive("all_gather", kind="linear")
all_gather_p.batch_needs_axis = True


def all_gather_array(x, *, all_gather_dimension: int, axis_name: tuple, axis_index_groups,
                     axis_size: int, tiled: bool):
  return all_gather_p.bind1(x, all_gather_dimension=int(all_gather_dimension),
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            axis_size=int(axis_size), tiled=bool(tiled))


@all_gather_p.def_impl
def _all_gather_impl(x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size,
                     tiled):
  names = _names(axis_name)
  member = _device_member(names, "all_gather")
  values, _ = _group_values(member, names, x, axis_index_groups, "all_gather")
  join = np.concatenate if tiled else np.stack
  return [join(values, axis=all_gather_dimension)]


@all_gather_p.def_abstract_eval
def _all_gather_abstract_eval(x, *, all_gather_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  _check_axis_names(_names(axis_name), "all_gather")
  shape = list(x.shape)
  if tiled:
    shape[all_gather_dimension] *= axis_size
  else:
    shape.insert(all_gather_dimension, axis_size)
  return [ShapedArray(tuple(shape), x.dtype, x.weak_type)]


all_gather_p.def_sharding_rule(_all_gather_sharding_rule)


@all_gather_p.def_batch
def _all_gather_batch(vals, dims, axis_data, *, all_gather_dimension, axis_name,
                      axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                axis_size=axis_size, tiled=tiled)
  if axis_data.name not in names:
    if d is None:
      return all_gather_p.bind(x, all_gather_dimension=all_gather_dimension, **params), [None]
    dim = all_gather_dimension
    if d <= dim:
      dim += 1
    elif not tiled:   # a tiled gather keeps the rank
      d += 1
    return all_gather_p.bind(x, all_gather_dimension=dim, **params), [d]
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups not supported in vmap")
  if len(names) > 1:
    raise NotImplementedError("all_gather over several axis names under vmap: please "
                              "open a feature request!")
  if d is None:
    y = _bcast_along(x, axis_data.size, all_gather_dimension)
  else:
    y = moveaxis(x, d, all_gather_dimension)
  if tiled:
    y = _foldaxis(all_gather_dimension, y)
  return [y], [None]


def _all_gather_transpose(ct, x, *, all_gather_dimension, axis_name, axis_index_groups,
                          axis_size, tiled):
  return [reduce_scatter_p.bind1(ct, scatter_dimension=all_gather_dimension,
                                 axis_name=axis_name, axis_index_groups=axis_index_groups,
                                 axis_size=axis_size, tiled=tiled)]


deflinear(all_gather_p, _all_gather_transpose)


# ----------------------------------------------------------- reduce_scatter
reduce_scatter_p = Primitive("reduce_scatter", kind="linear")
reduce_scatter_p.batch_needs_axis = True


def reduce_scatter_array(x, *, scatter_dimension: int, axis_name: tuple, axis_index_groups,
                         axis_size: int, tiled: bool):
  return reduce_scatter_p.bind1(x, scatter_dimension=int(scatter_dimension),
                                axis_name=axis_name, axis_index_groups=axis_index_groups,
                                axis_size=int(axis_size), tiled=bool(tiled))


@reduce_scatter_p.def_impl
def _reduce_scatter_impl(x, *, scatter_dimension, axis_name, axis_index_groups, axis_size,
                         tiled):
  names = _names(axis_name)
  member = _device_member(names, "psum_scatter", "reduce_scatter")
  values, index = _group_values(member, names, x, axis_index_groups, "psum_scatter")
  total = np.sum(np.stack(values), axis=0, dtype=x.dtype)
  if tiled:
    return [np.split(total, len(values), axis=scatter_dimension)[index]]
  return [np.take(total, index, axis=scatter_dimension)]


def _scattered_shape(shape, scatter_dimension: int, axis_size: int, tiled: bool) -> tuple:
  shape = list(shape)
  n = shape[scatter_dimension]
  if tiled:
    if n % axis_size != 0:
      raise ValueError(f"tiled reduce_scatter operand scatter dimension size {n} must be "
                       f"divisible by shard_count {axis_size}")
    shape[scatter_dimension] = n // axis_size
  else:
    if n != axis_size:
      raise ValueError(f"reduce_scatter operand scatter dimension size {n} must match "
                       f"shard count {axis_size}")
    del shape[scatter_dimension]
  return tuple(shape)


@reduce_scatter_p.def_abstract_eval
def _reduce_scatter_abstract_eval(x, *, scatter_dimension, axis_name, axis_index_groups,
                                  axis_size, tiled):
  _check_axis_names(_names(axis_name), "reduce_scatter")
  shape = _scattered_shape(x.shape, scatter_dimension, axis_size, tiled)
  return [ShapedArray(shape, x.dtype, x.weak_type)]


reduce_scatter_p.def_sharding_rule(_reduce_scatter_sharding_rule)


@reduce_scatter_p.def_batch
def _reduce_scatter_batch(vals, dims, axis_data, *, scatter_dimension, axis_name,
                          axis_index_groups, axis_size, tiled):
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups,
                axis_size=axis_size, tiled=tiled)
  if axis_data.name not in names:
    if d is None:
      return reduce_scatter_p.bind(x, scatter_dimension=scatter_dimension, **params), [None]
    dim = scatter_dimension
    if d <= dim:
      dim += 1
    elif not tiled:   # a tiled scatter keeps the rank
      d -= 1
    return reduce_scatter_p.bind(x, scatter_dimension=dim, **params), [d]
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups not supported in vmap")
  if len(names) > 1:
    raise NotImplementedError("psum_scatter over several axis names under vmap: please "
                              "open a feature request!")
  y = _times(x, axis_data.size) if d is None else reduce_sum(x, (d,))
  _scattered_shape(get_aval(y).shape, scatter_dimension, axis_data.size, tiled)
  if tiled:
    y = _splitaxis(scatter_dimension, axis_data.size, y)
  return [y], [scatter_dimension]


def _reduce_scatter_transpose(ct, x, *, scatter_dimension, axis_name, axis_index_groups,
                              axis_size, tiled):
  return [all_gather_p.bind1(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name,
                             axis_index_groups=axis_index_groups, axis_size=axis_size,
                             tiled=tiled)]


deflinear(reduce_scatter_p, _reduce_scatter_transpose)


# ----------------------------------------------------------------- ppermute
ppermute_p = Primitive("ppermute", kind="linear")
ppermute_p.batch_needs_axis = True


def ppermute_array(x, axis_name: tuple, perm):
  return ppermute_p.bind1(x, axis_name=axis_name, perm=tuple(tuple(p) for p in perm))


@ppermute_p.def_impl
def _ppermute_impl(x, *, axis_name, perm):
  names = _names(axis_name)
  member = _device_member(names, "ppermute")
  _check_perm(perm, member.size(names))
  values = member.exchange(names, x, "ppermute")
  index = member.index(names)
  for s, t in perm:
    if t == index:
      return [values[s]]
  return [np.zeros_like(x)]


@ppermute_p.def_abstract_eval
def _ppermute_abstract_eval(x, *, axis_name, perm):
  _check_axis_names(_names(axis_name), "ppermute")
  return [x]


ppermute_p.def_sharding_rule(_same_split_rule)


def _check_perm(perm, size: int) -> None:
  srcs = [s for s, _ in perm]
  dsts = [t for _, t in perm]
  if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
    raise ValueError(f"ppermute sources and destinations must be unique, got {perm}")
  if not all(0 <= i < size for i in srcs + dsts):
    raise ValueError(f"ppermute indices must lie in [0, {size}) for the axis of size "
                     f"{size}, got {perm}")


def _permuted(x, src: list, axis: int):
  """``x`` along ``axis`` rearranged so position ``t`` holds ``x[src[t]]``
  (zeros where ``src[t]`` is None): one slice per run of consecutive sources,
  so a cyclic shift is two slices and a concatenate."""
  runs: list[list] = []
  for t, s in enumerate(src):
    last = runs[-1] if runs else None
    if last is not None and ((s is None and last[0] is None) or
                             (s is not None and last[0] is not None and s == last[1])):
      last[1] = None if s is None else s + 1
      last[2] += 1
    else:
      runs.append([s, None if s is None else s + 1, 1])
  aval = get_aval(x)
  pieces = []
  for start, _, length in runs:
    if start is None:
      shape = aval.shape[:axis] + (length,) + aval.shape[axis + 1:]
      pieces.append(full(shape, 0, aval.dtype))
    else:
      pieces.append(slice_in_dim(x, start, start + length, 1, axis))
  return pieces[0] if len(pieces) == 1 else concatenate(pieces, axis)


@ppermute_p.def_batch
def _ppermute_batch(vals, dims, axis_data, *, axis_name, perm):
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  if axis_data.name not in names:
    return ppermute_p.bind(x, axis_name=axis_name, perm=perm), [d]
  if len(names) > 1:
    raise NotImplementedError("ppermute over several axis names under vmap: please open "
                              "a feature request!")
  size = axis_data.size
  _check_perm(perm, size)
  src: list = [None] * size
  for s, t in perm:
    src[t] = s
  if d is None:
    if None not in src:   # the same value everywhere, permuted: unchanged
      return [x], [None]
    x, d = _bcast_along(x, size, 0), 0
  return [_permuted(x, src, d)], [d]


def _ppermute_transpose(ct, x, *, axis_name, perm):
  return [ppermute_p.bind1(ct, axis_name=axis_name, perm=tuple((t, s) for s, t in perm))]


deflinear(ppermute_p, _ppermute_transpose)


# --------------------------------------------------------------- axis_index
axis_index_p = Primitive("axis_index", kind="nondifferentiable")
axis_index_p.batch_needs_axis = True


def axis_index_array(axis_name):
  return axis_index_p.bind1(axis_name=axis_name)


@axis_index_p.def_impl
def _axis_index_impl(*, axis_name):
  names = _names(axis_name)
  return [np.asarray(_device_member(names, "axis_index").index(names), np.int32)]
ad_util.defjvp_zero(axis_index_p)


@axis_index_p.def_abstract_eval
def _axis_index_abstract_eval(*, axis_name):
  _check_axis_names(_names(axis_name), "axis_index")
  return [ShapedArray((), np.dtype(np.int32), False)]


axis_index_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)


@axis_index_p.def_batch
def _axis_index_batch(vals, dims, axis_data, *, axis_name):
  if axis_data.name not in _names(axis_name):
    return axis_index_p.bind(axis_name=axis_name), [None]
  return [iota(np.int32, axis_data.size)], [0]


# --------------------------------------------------------------- pbroadcast
pbroadcast_p = Primitive("pbroadcast", kind="linear")
pbroadcast_p.batch_needs_axis = True


def pbroadcast_array(x, axis_name, source: int):
  return pbroadcast_p.bind1(x, axis_name=axis_name, source=int(source))


@pbroadcast_p.def_impl
def _pbroadcast_impl(x, *, axis_name, source):
  names = _names(axis_name)
  return [_device_member(names, "pbroadcast").exchange(names, x, "pbroadcast")[source]]


@pbroadcast_p.def_abstract_eval
def _pbroadcast_abstract_eval(x, *, axis_name, source):
  _check_axis_names(_names(axis_name), "pbroadcast")
  return [x]


pbroadcast_p.def_sharding_rule(_same_split_rule)


@pbroadcast_p.def_batch
def _pbroadcast_batch(vals, dims, axis_data, *, axis_name, source):
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  if axis_data.name not in names:
    return pbroadcast_p.bind(x, axis_name=axis_name, source=source), [d]
  if len(names) > 1:
    raise NotImplementedError("pbroadcast batcher only supports a single axis")
  if not 0 <= source < axis_data.size:
    raise ValueError(f"pbroadcast source {source} is out of range for the axis "
                     f"{axis_data.name!r} of size {axis_data.size}")
  if d is None:
    return [x], [None]
  return [index_in_dim(x, source, d, keepdims=False)], [None]


def _pbroadcast_transpose(ct, x, *, axis_name, source):
  # Every member's cotangent flows back to the source member.
  names = _names(axis_name)
  index, inner = None, 1
  for i, name in enumerate(reversed(names)):
    term = mul(axis_index_p.bind1(axis_name=name), np.int32(inner))
    index = term if index is None else add(index, term)
    if i < len(names) - 1:
      inner *= bound_axis_size(name)
  total = psum_p.bind1(ct, axes=names, axis_index_groups=None)
  aval = get_aval(total)
  is_source = broadcast_in_dim(eq(index, np.int32(source)), aval.shape, ())
  return [select_n(is_source, full(aval.shape, 0, aval.dtype), total)]


deflinear(pbroadcast_p, _pbroadcast_transpose)


# Under vmap these collectives are rewritten into ordinary array ops before
# lowering; bound to devices (pmap/shard_map) they will lower to host calls.
for _p in (all_gather_p, reduce_scatter_p, ppermute_p, axis_index_p, pbroadcast_p):
  _p.mark_not_applicable(
      "lower", "named-axis collective: vmap rewrites it into array ops before lowering; "
      "across devices it needs pmap/shard_map, which do not exist yet")
