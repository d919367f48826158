"""The all_to_all collective over named axes (``lax.all_to_all``): each
member splits its operand along ``split_axis`` into one chunk per member and
concatenates the chunks it receives along ``concat_axis``. The axis env, the
device execution and the layout helpers are the other collectives'
(``collectives.py``)."""
from __future__ import annotations

import math

import numpy as np

from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.primitives.base.structural import deflinear, expand_dims, moveaxis, transpose
from openjax._src.primitives.collectives.collectives import (
    _bcast_along, _check_axis_names, _device_member, _foldaxis, _group_values, _names,
    _same_split_rule, _splitaxis, bound_axis_size)

__all__ = ["all_to_all_p", "all_to_all_array"]


all_to_all_p = Primitive("all_to_all", kind="linear")
all_to_all_p.batch_needs_axis = True


def all_to_all_array(x, axis_name, split_axis: int, concat_axis: int, axis_index_groups,
                     tiled: bool):
  return all_to_all_p.bind1(x, split_axis=int(split_axis), concat_axis=int(concat_axis),
                            axis_name=axis_name, axis_index_groups=axis_index_groups,
                            tiled=bool(tiled))


@all_to_all_p.def_impl
def _all_to_all_impl(x, *, split_axis, concat_axis, axis_name, axis_index_groups, tiled):
  names = _names(axis_name)
  member = _device_member(names, "all_to_all")
  values, index = _group_values(member, names, x, axis_index_groups, "all_to_all")
  n = len(values)
  return [np.concatenate([np.split(v, n, axis=split_axis)[index] for v in values],
                         axis=concat_axis)]


def _group_size(axis_name, axis_index_groups) -> int:
  if axis_index_groups is not None:
    return len(axis_index_groups[0])
  return math.prod(bound_axis_size(n) for n in _names(axis_name))


@all_to_all_p.def_abstract_eval
def _all_to_all_abstract_eval(x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                              tiled):
  _check_axis_names(_names(axis_name), "all_to_all")
  n = _group_size(axis_name, axis_index_groups)
  shape = list(x.shape)
  if shape[split_axis] % n != 0:
    raise ValueError(f"all_to_all: split_axis {split_axis} of {x.str_short()} is not "
                     f"divisible by the axis size {n}")
  shape[split_axis] //= n
  shape[concat_axis] *= n
  return [ShapedArray(tuple(shape), x.dtype, False)]


all_to_all_p.def_sharding_rule(_same_split_rule)


@all_to_all_p.def_batch
def _all_to_all_batch(vals, dims, axis_data, *, split_axis, concat_axis, axis_name,
                      axis_index_groups, tiled):
  (x,), (d,) = vals, dims
  names = _names(axis_name)
  params = dict(axis_name=axis_name, axis_index_groups=axis_index_groups, tiled=tiled)
  if axis_data.name not in names:
    if d is None:
      return all_to_all_p.bind(x, split_axis=split_axis, concat_axis=concat_axis,
                               **params), [None]
    return all_to_all_p.bind(x, split_axis=split_axis + (d <= split_axis),
                             concat_axis=concat_axis + (d <= concat_axis), **params), [d]
  if axis_index_groups is not None:
    raise NotImplementedError("axis_index_groups not supported in vmap: please open a "
                              "feature request!")
  size = axis_data.size
  if d is None:
    x, d = _bcast_along(x, size, 0), 0
  pos = names.index(axis_data.name)
  major, minor = names[:pos], names[pos + 1:]
  if not major and not minor:
    if split_axis == concat_axis:
      axis = split_axis + (d <= split_axis)
      d_out = d
      x = _splitaxis(axis, size, x)
      d += axis <= d
      perm = list(range(get_aval(x).ndim))
      perm[d], perm[axis] = axis, d
      return [_foldaxis(axis, transpose(x, tuple(perm)))], [d_out]
    x = _foldaxis(concat_axis, moveaxis(x, d, concat_axis))
    return [_splitaxis(split_axis, size, x)], [split_axis]
  # Several names: chunks gather in three leading dims [major, frame, minor, ...]
  # (JAX's construction).
  x, d = expand_dims(moveaxis(x, d, 0), (0, 2)), 1
  split_axis += 3
  concat_axis += 3
  if major:
    x = all_to_all_p.bind1(x, axis_name=major, split_axis=split_axis, concat_axis=0,
                           axis_index_groups=None, tiled=tiled)
  x = _splitaxis(split_axis, size, x)
  new_d = split_axis
  concat_axis += split_axis <= concat_axis
  split_axis += 1
  if minor:
    x = all_to_all_p.bind1(x, axis_name=minor, split_axis=split_axis, concat_axis=2,
                           axis_index_groups=None, tiled=tiled)
  x = _foldaxis(0, _foldaxis(0, x))
  concat_axis -= 2
  new_d -= 2
  x = _foldaxis(concat_axis - 1, moveaxis(x, 0, concat_axis - 1))
  return [x], [new_d - 1]


def _all_to_all_transpose(ct, x, *, split_axis, concat_axis, axis_name, axis_index_groups,
                          tiled):
  return [all_to_all_p.bind1(ct, split_axis=concat_axis, concat_axis=split_axis,
                             axis_name=axis_name, axis_index_groups=axis_index_groups,
                             tiled=tiled)]


deflinear(all_to_all_p, _all_to_all_transpose)


# Under vmap it is rewritten into array ops before lowering, as the others.
all_to_all_p.mark_not_applicable(
    "lower", "named-axis collective: vmap rewrites it into array ops before lowering; "
    "across devices it needs pmap/shard_map, which do not exist yet")
