"""``jax.lax`` collectives over named axes: psum, pmean, pmax, pmin,
all_gather, psum_scatter, ppermute, pshuffle, pswapaxes, all_to_all,
pbroadcast, axis_index and axis_size, with JAX's signatures.

Each takes a pytree and a name (or a tuple of names: ``psum(x, ('i', 'j'))``
reduces over both axes of nested ``vmap``s). As in JAX, ``psum`` of values
that are not traced (Python scalars, NumPy arrays) is folded at trace time to
``value * axis size``, which is how ``axis_size`` and ``pmean`` count members.
The primitives and their rules are in ``openjax._src.primitives.collectives.collectives``.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.config import config
from openjax._src.core import Tracer, get_aval
from openjax._src.primitives.collectives.all_to_all import all_to_all_array, all_to_all_p
from openjax._src.primitives.collectives.collectives import (
    all_gather_array, all_gather_p, axis_index_array, axis_index_p, bound_axis_size,
    pbroadcast_array, pbroadcast_p, pmax_array, pmax_p, pmin_array, pmin_p, ppermute_array,
    ppermute_p, psum_array, psum_p, reduce_scatter_array, reduce_scatter_p)
from openjax._src.primitives.collectives.ragged import ragged_all_to_all_array, ragged_all_to_all_p
from openjax._src.primitives.collectives.send_recv import out_shape_aval, precv_array, psend_array
from openjax._src.primitives.collectives.varying import (psum_invariant, pvary,
                                                         vma_checked_axes, vma_of)
from openjax._src.core.avals import ordered_axes
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.elementwise.arithmetic import add, mul
from openjax._src.primitives.base.structural import (canonicalize_axis, expand_dims, reduce_sum,
                                                     squeeze)

__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "ppermute",
           "pshuffle", "psend", "precv", "pswapaxes", "all_to_all", "pbroadcast", "axis_index",
           "axis_size", "pcast",
           "ragged_all_to_all", "ragged_all_to_all_p",
           "psum_p", "pmax_p", "pmin_p", "all_gather_p", "reduce_scatter_p", "ppermute_p",
           "pbroadcast_p", "all_to_all_p", "axis_index_p"]


def _axes(axis_name) -> tuple:
  return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _validate_reduce_axis_index_groups(axis_index_groups) -> None:
  if axis_index_groups is None:
    return
  axis_space = range(sum(len(group) for group in axis_index_groups))
  if {i for g in axis_index_groups for i in g} != set(axis_space):
    raise ValueError("axis_index_groups must cover all indices exactly once")


def _canonicalize_axis_index_groups(axis_index_groups):
  if axis_index_groups is None:
    return None
  return tuple(tuple(int(i) for i in g) for g in axis_index_groups)


def _const(example, val):
  # JAX's lax._const: a Python scalar of the example's kind, else a NumPy array.
  if type(example) in dtypes.python_scalar_dtypes:
    return type(example)(val)
  return np.array(val, dtypes.dtype(example))


def _check_reduce_args(axes, axis_index_groups) -> None:
  if any(isinstance(a, int) for a in axes) and axis_index_groups is not None:
    raise ValueError("axis_index_groups only supported for sums over just named axes")
  _validate_reduce_axis_index_groups(axis_index_groups)


# ------------------------------------------------------------------- psum
def psum(x, axis_name, *, axis_index_groups=None):
  """All-reduce sum of ``x`` over the mapped axis (or axes) ``axis_name``;
  integer entries of ``axis_name`` reduce positional dimensions. Boolean
  inputs are summed as int32."""
  axes = _axes(axis_name)
  if not axes:
    return x
  _check_reduce_args(axes, axis_index_groups)
  leaves, treedef = tree_util.tree_flatten(x)
  leaves = [convert_element_type(leaf, np.int32) if dtypes.dtype(leaf) == np.bool_ else leaf
            for leaf in leaves]
  groups = _canonicalize_axis_index_groups(axis_index_groups)
  if all(not isinstance(leaf, Tracer) for leaf in leaves):
    # Values that are not traced are the same on every member: fold now.
    named = [a for a in axes if not isinstance(a, int)]
    pos = [a for a in axes if isinstance(a, int)]
    size = (len(groups[0]) if groups is not None
            else math.prod(bound_axis_size(name) for name in named))

    def pos_reduce(v):
      if not pos:
        return v
      return reduce_sum(v, tuple(canonicalize_axis(a, np.ndim(v)) for a in pos))
    out = [_const(leaf, size) * pos_reduce(leaf) for leaf in leaves]
  else:
    out = [_psum_leaf(leaf, axes, groups) for leaf in leaves]
  return tree_util.tree_unflatten(treedef, out)


def _psum_leaf(leaf, axes: tuple, groups):
  # In a check_vma shard_map body psum takes a value varying over the axes
  # to an invariant one (an invariant value is made varying first: n times
  # its value), as JAX's psum_invariant.
  if groups is not None and vma_checked_axes():
    # JAX 0.10.2 has no typed psum over groups (the result would vary across
    # groups); pass check_vma=False to shard_map to use them.
    raise NotImplementedError()
  if not any(isinstance(a, int) for a in axes) and vma_checked_axes():
    if _vma_state(leaf, axes, "jax.lax.psum") == "invarying":
      if not config.read("jax_auto_pcast"):
        raise ValueError(
            "psum is a variant->invariant collective. This means that the axis names "
            "mentioned in `axes` passed to `psum` must be present in "
            f"`jax.typeof(inp).mat.varying`. Got axes={axes} and "
            f"jax.typeof(inp).mat.varying={vma_of(leaf)}")
      leaf = pvary(leaf, ordered_axes(axes))
    return psum_invariant(leaf, axes)
  return psum_array(leaf, axes, groups)


def _vma_state(leaf, axes: tuple, name: str) -> str:
  vma = vma_of(leaf)
  states = {"varying" if a in vma else "invarying" for a in axes}
  if len(states) > 1:
    raise ValueError(
        f"{name} can only accept axis_name which corresponds to one of varying, unreduced, "
        f"reduced or invarying state of the input. Got input type: {get_aval(leaf)}, axes: "
        f"{axes} and input state: {{'invarying', 'varying'}}")
  return states.pop()


def pcast(x, axis_name, *, to: str):
  """Change the varying manual axes of ``x`` inside ``shard_map``:
  ``to='varying'`` makes a value that is the same on every device along
  ``axis_name`` typed as varying over it (no data moves)."""
  if isinstance(axis_name, (set, frozenset)):
    raise TypeError(f"{axis_name=} must be a tuple or a str. Got {axis_name}")
  axes = axis_name if isinstance(axis_name, tuple) else (axis_name,)
  if not axis_name:
    return x
  if to not in ("unreduced", "reduced", "varying"):
    raise ValueError("Got unexpected `to` value. Allowed `to` values are: {'reduced', "
                     "'unreduced', 'varying'}")

  def cast(leaf):
    from_ = _vma_state(leaf, axes, "jax.lax.pcast")
    if (from_, to) != ("invarying", "varying"):
      raise ValueError(f"Unsupported pcast from={from_}, {to=}")
    if not set(axes) <= vma_checked_axes():
      return leaf   # check_vma=False: values carry no vma types
    return pvary(leaf, ordered_axes(axes))
  return tree_util.tree_map(cast, x)


def _axis_size(axis_name, axis_index_groups=None) -> int:
  return psum(1, axis_name, axis_index_groups=_canonicalize_axis_index_groups(axis_index_groups))


def axis_size(axis_name) -> int:
  """The size of the mapped axis ``axis_name`` (the product for a tuple)."""
  return _axis_size(axis_name)


def pmean(x, axis_name, *, axis_index_groups=None):
  """All-reduce mean of ``x`` over ``axis_name``."""
  x = psum(x, axis_name=axis_name, axis_index_groups=axis_index_groups)
  n = _axis_size(axis_name, axis_index_groups)
  return tree_util.tree_map(lambda v: v / n, x)


def _chooser(array_fn):
  def reduce(x, axis_name, *, axis_index_groups=None):
    axes = _axes(axis_name)
    _check_reduce_args(axes, axis_index_groups)
    groups = _canonicalize_axis_index_groups(axis_index_groups)
    return tree_util.tree_map(lambda leaf: array_fn(leaf, axes, groups), x)
  return reduce


pmax = _chooser(pmax_array)
pmax.__name__ = pmax.__qualname__ = "pmax"
pmax.__doc__ = "All-reduce max of ``x`` over the mapped axis (or axes) ``axis_name``."
pmin = _chooser(pmin_array)
pmin.__name__ = pmin.__qualname__ = "pmin"
pmin.__doc__ = "All-reduce min of ``x`` over the mapped axis (or axes) ``axis_name``."


# ------------------------------------------------------- gather and scatter
def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
  """Gather ``x`` from every member of ``axis_name``: stacked along a new
  dimension ``axis`` (``tiled=False``) or concatenated along ``axis``."""
  allowed = {"varying", "reduced", "invarying"}
  if to not in allowed:
    raise ValueError("Got unexpected `to` value for `jax.lax.all_gather`. Allowed `to` "
                     f"values are: {allowed}")
  names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
  if not names:
    return x
  groups = _canonicalize_axis_index_groups(axis_index_groups)
  size = _axis_size(names, groups)

  def gather(leaf):
    ndim = np.ndim(leaf) if not isinstance(leaf, Tracer) else get_aval(leaf).ndim
    return all_gather_array(
        leaf, all_gather_dimension=canonicalize_axis(axis, ndim if tiled else ndim + 1),
        axis_name=names, axis_index_groups=groups, axis_size=size, tiled=tiled)
  return tree_util.tree_map(gather, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
  """Like ``psum(x, axis_name)``, but each member keeps only its slice of the
  sum along ``scatter_dimension`` (squeezed unless ``tiled``)."""
  names = axis_name if isinstance(axis_name, tuple) else (axis_name,)
  if not names:
    return x
  size = _axis_size(names, axis_index_groups)
  groups = _canonicalize_axis_index_groups(axis_index_groups)
  return tree_util.tree_map(
      lambda leaf: reduce_scatter_array(
          leaf, scatter_dimension=scatter_dimension, axis_name=names,
          axis_index_groups=groups, axis_size=size, tiled=tiled), x)


# ------------------------------------------------------------ permutations
def ppermute(x, axis_name, perm):
  """Send each member's ``x`` along ``perm``, pairs ``(source, destination)``
  of indices into ``axis_name``; members no pair sends to get zeros."""
  names = _axes(axis_name)
  return tree_util.tree_map(lambda leaf: ppermute_array(leaf, names, perm), x)


def psend(x, axis_name, perm):
  """Send each member's ``x`` (a pytree: each leaf) to the destination of
  the pair ``(source, destination)`` of ``perm`` whose source it is; gives a
  token (a pytree of tokens) that a ``precv`` or ``optimization_barrier`` can
  order after the send. Runs between the devices of a ``shard_map`` or
  ``pmap``, where JAX 0.10.2 needs a GPU; the matching ``precv`` takes the
  value (see ``openjax._src.primitives.collectives.send_recv``)."""
  names = _axes(axis_name)
  return tree_util.tree_map(lambda leaf: psend_array(leaf, names, perm), x)


def precv(token, out_shape, axis_name, perm):
  """Receive on each destination of ``perm`` the value its source sent with
  ``psend`` (same ``axis_name`` and pair), of ``out_shape`` (a
  ``ShapeDtypeStruct``); zeros on members no pair sends to. ``token`` (from
  ``psend`` or ``lax.create_token()``) orders it after other effects."""
  names = _axes(axis_name)
  return precv_array(token, out_shape_aval(out_shape), names, perm)


def pshuffle(x, axis_name, perm):
  """``ppermute`` with ``perm[i]`` the source of member ``i``."""
  if set(perm) != set(range(len(perm))):
    raise ValueError(f"`perm` does not represent a permutation: {perm}")
  return ppermute(x, axis_name, list(zip(perm, range(len(perm)))))


def pbroadcast(x, axis_name, source):
  """Every member of ``axis_name`` gets the ``source`` member's ``x``."""
  return tree_util.tree_map(lambda leaf: pbroadcast_array(leaf, axis_name, source), x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
  """Split ``split_axis`` into one chunk per member, send chunk ``j`` to member
  ``j`` and concatenate what arrives along ``concat_axis`` (stacked in a new
  axis there unless ``tiled``)."""
  groups = _canonicalize_axis_index_groups(axis_index_groups)

  def bind(leaf, split_axis=split_axis, concat_axis=concat_axis):
    group_size = _axis_size(axis_name, groups)
    shape = np.shape(leaf) if not isinstance(leaf, Tracer) else get_aval(leaf).shape
    if tiled:
      if shape[split_axis] % group_size != 0:
        raise ValueError(f"The size of all_to_all split_axis ({shape[split_axis]}) has to "
                         "be divisible by the size of the named axis "
                         f"{axis_name} ({group_size})")
    else:
      if group_size != shape[split_axis]:
        raise ValueError("all_to_all requires the size of the mapped axis axis_name to "
                         "equal x.shape[split_axis], but they are "
                         f"{group_size} and {shape[split_axis]} respectively.")
      if split_axis < concat_axis:
        concat_axis += 1    # concat_axis is a position after split_axis is removed
        leaf = expand_dims(leaf, (concat_axis,))
      elif split_axis != concat_axis:
        leaf = expand_dims(leaf, (concat_axis,))
        split_axis += 1
    out = all_to_all_array(leaf, axis_name, split_axis, concat_axis, groups, tiled)
    if not tiled and split_axis != concat_axis:
      out = squeeze(out, (split_axis,))
    return out
  return tree_util.tree_map(bind, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
  """Swap the mapped axis ``axis_name`` with the positional ``axis``."""
  return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# ------------------------------------------------------------- axis index
def axis_index(axis_name):
  """This member's index along ``axis_name`` (row-major over a tuple of names)."""
  if not isinstance(axis_name, (tuple, list)):
    return axis_index_array(axis_name)
  inner_size = 1
  index = 0
  for name in reversed(axis_name):
    index = add(index, mul(axis_index(name), inner_size))
    inner_size *= axis_size(name)
  return index


def ragged_all_to_all(operand, output, input_offsets, send_sizes, output_offsets, recv_sizes,
                      *, axis_name, axis_index_groups=None):
  """An all_to_all of ragged slices: each member sends ``operand``'s rows
  ``input_offsets[i]:input_offsets[i] + send_sizes[i]`` to member
  ``i // (K / n)``, which writes them at ``output_offsets[i]`` of its copy of
  ``output`` (``recv_sizes[j]`` long, for the ``j``-th slice it receives)."""
  names = _axes(axis_name)
  return ragged_all_to_all_array(operand, output, input_offsets, send_sizes, output_offsets,
                                 recv_sizes, axis_name=names,
                                 axis_index_groups=_canonicalize_axis_index_groups(
                                     axis_index_groups))
