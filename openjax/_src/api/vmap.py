"""``vmap``: vectorising map over a pytree of arguments."""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify
from openjax._src.interpreters.batching import batch_flat


def _flatten_axes(what: str, tree_def, axes) -> list:
  """One axis per leaf, from ``axes`` (a prefix of the argument tree)."""
  proxy = object()
  dummy = tree_util.tree_unflatten(tree_def, [proxy] * tree_def.num_leaves)
  try:
    return tree_util.broadcast_prefix(axes, dummy, is_leaf=lambda x: x is None)
  except ValueError:
    raise ValueError(
        f"vmap {what} specification must be a tree prefix of the corresponding "
        f"value, got specification {axes} for value tree {tree_def}.") from None


def _check_axis(kind: str, ax, ndim: int, where: str):
  if ax is None:
    return None
  if not isinstance(ax, int):
    raise TypeError(f"vmap {kind} must be an int, None, or a tree of them; got {ax!r}")
  if not -ndim <= ax < ndim:
    raise ValueError(f"vmap was requested to map its argument along axis {ax}, which "
                     f"implies that its rank should be at least {ax + 1 if ax >= 0 else -ax}, "
                     f"but is only {ndim} (its shape is {where})")
  return ax % ndim


def _mapped_sizes_error(leaves, dims, arg_names):
  lines = []
  for leaf, d, name in zip(leaves, dims, arg_names):
    if d is None:
      continue
    aval = abstractify(leaf)
    lines.append(f"  * one axis had size {aval.shape[d]}: axis {d} of {name} of type "
                 f"{aval.str_short(short_dtypes=False)}")
  return ValueError("vmap got inconsistent sizes for array axes to be mapped:\n" + ";\n".join(lines))


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name=None,
         axis_size: int | None = None, spmd_axis_name=None) -> Callable:
  """Vectorise ``fun`` over a new leading (or ``in_axes``-chosen) axis.

  ``in_axes``: an int, None, or a pytree prefix of the positional arguments
  (None leaves an argument unmapped); keyword arguments are mapped over axis
  0. ``out_axes`` likewise for the outputs. ``axis_name`` names the axis for
  collectives (``lax.psum``...); ``axis_size`` is required when no argument is
  mapped.
  """
  if isinstance(in_axes, list):
    in_axes = tuple(in_axes)

  @functools.wraps(fun)
  def vmap_f(*args, **kwargs):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
      raise ValueError(
          "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
          "the positional arguments passed to the function, but got "
          f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    arg_tree = tree_util.tree_structure(args)
    dims = _flatten_axes("in_axes", arg_tree, in_axes) + [0] * (len(leaves) - arg_tree.num_leaves)
    names = _arg_names(fun, args, kwargs, len(leaves))
    norm = []
    for leaf, d, name in zip(leaves, dims, names):
      aval = abstractify(leaf)
      norm.append(_check_axis("in_axes", d, aval.ndim, f"{aval.shape} for {name}"))
    sizes = {abstractify(leaf).shape[d] for leaf, d in zip(leaves, norm) if d is not None}
    if len(sizes) > 1:
      raise _mapped_sizes_error(leaves, norm, names)
    if not sizes:
      if axis_size is None:
        raise ValueError("vmap must have at least one non-None value in in_axes")
      size = axis_size
    else:
      size = sizes.pop()
      if axis_size is not None and axis_size != size:
        raise ValueError(f"vmap got axis_size={axis_size} but the mapped arguments have "
                         f"size {size}")
    out_box: list = []

    def flat_fun(*xs):
      a, k = tree_util.tree_unflatten(in_tree, xs)
      out = fun(*a, **k)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      out_box.append(out_tree)
      return out_leaves

    # The output tree is known only once fun has run: out dims resolve lazily.
    outs = batch_flat(flat_fun, leaves, norm, _LazyOutDims(out_box, out_axes),
                      size, axis_name, spmd_axis_name)
    return tree_util.tree_unflatten(out_box[0], outs)

  return vmap_f


class _LazyOutDims:
  """Out dims resolved against the output tree once ``fun`` has run."""

  def __init__(self, box, out_axes):
    self.box, self.out_axes = box, out_axes

  def __iter__(self):
    tree = self.box[0]
    axes = self.out_axes
    if isinstance(axes, list):
      axes = tuple(axes)
    dims = _flatten_axes("out_axes", tree, axes)
    return iter(dims)


def _arg_names(fun, args, kwargs, n_leaves) -> list[str]:
  try:
    bound = inspect.signature(fun).bind(*args, **kwargs)
    names = []
    for name, val in bound.arguments.items():
      k = tree_util.tree_structure(val).num_leaves
      names += [f"argument {name}"] * k
    if len(names) == n_leaves:
      return names
  except (TypeError, ValueError):
    pass
  return [f"argument {i}" for i in range(n_leaves)]
