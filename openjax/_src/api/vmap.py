"""``vmap``: vectorising map over a pytree of arguments."""
from __future__ import annotations

import collections
import functools
import inspect
import types
from typing import Any, Callable

import numpy as np

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify
from openjax._src.api.transform_cache import call_transformed
from openjax._src.interpreters.batching import SpecMatchError, batch_flat


def check_callable(fun) -> None:
  """JAX's check that a transformed ``fun`` is a plain callable."""
  if isinstance(fun, staticmethod):
    raise TypeError(f"staticmethod arguments are not supported, got {fun}")
  if not callable(fun):
    raise TypeError(f"Expected a callable value, got {fun}")
  if inspect.isgeneratorfunction(fun):
    raise TypeError(f"Expected a function, got a generator function: {fun}")


def fun_name(fun, default: str = "<unnamed function>") -> str:
  name = getattr(fun, "__name__", None)
  if name is not None:
    return name
  return fun_name(fun.func) if isinstance(fun, functools.partial) else default


def wraps(wrapped, docstr: str | None = None, **kwargs):
  """``functools.wraps`` with JAX's docstrings (``docstr`` formatted with
  ``fun``, ``doc`` and ``kwargs``). Attributes in ``__dict__`` are copied only
  from plain functions: the internal state of callable objects (a jitted
  function's caches) must not leak into the wrapper."""
  def wrapper(fun):
    name = fun_name(wrapped)
    doc = getattr(wrapped, "__doc__", "") or ""
    if isinstance(wrapped, types.FunctionType):
      fun.__dict__.update(wrapped.__dict__)
    fun.__name__ = name
    fun.__module__ = getattr(wrapped, "__module__", "<unknown module>")
    fun.__doc__ = doc if docstr is None else docstr.format(fun=name, doc=doc, **kwargs)
    fun.__qualname__ = getattr(wrapped, "__qualname__", name)
    fun.__wrapped__ = wrapped
    return fun
  return wrapper


class PytreeLeaf:
  """Stands for each leaf of a value tree in prefix-error messages."""

  def __repr__(self):
    return "pytree leaf"


def flatten_axes(name: str, treedef, axis_tree, *, kws: bool = False) -> list:
  """One axis (int or None) per leaf of ``treedef``, from ``axis_tree``, a tree
  prefix of it whose leaves are ints and Nones. ``kws``: ``treedef`` is that of
  ``(args, kwargs)`` and ``axis_tree`` is ``(in_axes, 0)``; errors then talk
  about the positional arguments only."""
  dummy = tree_util.tree_unflatten(treedef, [PytreeLeaf()] * treedef.num_leaves)
  try:
    return tree_util.broadcast_prefix(axis_tree, dummy, is_leaf=lambda x: x is None)
  except ValueError:
    pass
  if kws:
    treedef = tree_util.treedef_children(treedef)[0]
    axis_tree = axis_tree[0]
    dummy = tree_util.tree_unflatten(treedef, [PytreeLeaf()] * treedef.num_leaves)
  errors = tree_util.prefix_errors(axis_tree, dummy, is_leaf=lambda x: x is None)
  details = "\n  ".join(e(name).args[0] for e in errors)
  raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                   f"value; \n  Mismatch details ({len(errors)} found):\n  {details}")


def _shape(x):
  shape = getattr(x, "shape", None)
  return tuple(shape) if shape is not None else np.shape(x)


def _is_jax_value(x) -> bool:
  try:
    abstractify(x)
    return True
  except TypeError:
    return False


def _arg_type_str(x) -> str:
  try:
    return abstractify(x).str_short(short_dtypes=False)
  except TypeError:
    return "unknown"


def mapped_axis_size(fun, tree, vals, dims, name: str, axis_size=None) -> int:
  """The size of the mapped axis, with JAX's errors: ranks too small for an
  axis, no mapped argument, and inconsistent sizes (each argument named)."""
  if not vals:
    if axis_size is not None:
      return axis_size
    args, kwargs = tree_util.tree_unflatten(tree, vals)
    raise ValueError(
        f"{name} wrapped function must be passed at least one argument containing an "
        f"array or axis_size must be specified, got empty *args={args} and "
        f"**kwargs={kwargs}")

  def axis_len(x, axis):
    shape = _shape(x)
    try:
      return shape[axis]
    except (IndexError, TypeError):
      if not _is_jax_value(x) or not isinstance(axis, int):
        return None   # custom values are not checked
      min_rank = axis + 1 if axis >= 0 else -axis
      raise ValueError(
          f"{name} was requested to map its argument along axis {axis}, which implies "
          f"that its rank should be at least {min_rank}, but is only {len(shape)} "
          f"(its shape is {shape})") from None

  all_sizes = [None if d is None else axis_len(x, d) for x, d in zip(vals, dims)]
  sizes = [s for s in all_sizes if s is not None]
  if axis_size is not None:
    sizes.append(axis_size)
  distinct = list(dict.fromkeys(sizes))
  if len(distinct) == 1:
    return distinct[0]
  if not distinct:
    raise ValueError(f"{name} must have at least one non-None value in in_axes or "
                     "axis_size must be specified")
  raise ValueError(_inconsistent_sizes_message(fun, tree, vals, dims, name, axis_size,
                                               all_sizes))


def _inconsistent_sizes_message(fun, tree, vals, dims, name, axis_size, all_sizes) -> str:
  args, kwargs = tree_util.tree_unflatten(tree, vals)
  try:
    params = list(inspect.signature(fun).bind(*args, **kwargs).signature.parameters)
  except (TypeError, ValueError):
    params = None

  def arg_name(path):
    if params is None or path[0].idx >= len(params):
      return f"args{tree_util.keystr(path)}"
    return f"argument {params[path[0].idx]}" + tree_util.keystr(path[1:])

  paths = ([f"{arg_name(p)} of type {_arg_type_str(x)}"
            for p, x in tree_util.tree_flatten_with_path(args)[0]]
           + [f"kwargs{tree_util.keystr(p)} of type {_arg_type_str(x)}"
              for p, x in tree_util.tree_flatten_with_path(kwargs)[0]])
  counts = collections.Counter(s for s in all_sizes if s is not None).most_common()
  first = {s: all_sizes.index(s) for s, _ in counts}
  lines = [f"{name} got inconsistent sizes for array axes to be mapped:\n"]
  if axis_size is not None:
    lines.append(f"  * the `axis_size` argument was {axis_size};\n")
  for k, (sz, ct) in enumerate(counts):
    i = first[sz]
    where = f"axis {dims[i]} of {paths[i]}"
    if ct == 1:
      lines.append(f"  * one axis had size {sz}: {where};\n")
    elif k == 0:
      lines.append(f"  * most axes ({ct} of them) had size {sz}, e.g. {where};\n")
    else:
      lines.append(f"  * some axes ({ct} of them) had size {sz}, e.g. {where};\n")
  return "".join(lines)[:-2]


def _check_axes_spec(in_axes, out_axes) -> None:
  if not (in_axes is None or type(in_axes) in (int, tuple)):
    raise TypeError("vmap in_axes must be an int, None, or a tuple of entries corresponding "
                    "to the positional arguments passed to the function, but got "
                    f"{in_axes}.")
  if not all(type(a) is int for a in tree_util.tree_leaves(in_axes)):
    raise TypeError("vmap in_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {in_axes}.")
  if not all(type(a) is int for a in tree_util.tree_leaves(out_axes)):
    raise TypeError("vmap out_axes must be an int, None, or (nested) container with those "
                    f"types as leaves, but got {out_axes}.")


def vmap(fun: Callable, in_axes: Any = 0, out_axes: Any = 0, axis_name=None,
         axis_size: int | None = None, spmd_axis_name=None) -> Callable:
  """Vectorise ``fun`` over a new leading (or ``in_axes``-chosen) axis.

  ``in_axes``: an int, None, or a tuple (a list is taken as a tuple) with one
  entry per positional argument, each a pytree prefix of the argument (None
  leaves an argument unmapped and passes it through as it is); keyword
  arguments are mapped over axis 0. ``out_axes``: likewise for the outputs (None
  for outputs that must not depend on the mapped axis). ``axis_name`` names the
  axis for collectives (``lax.psum``...); ``axis_size`` is needed when no
  argument is mapped.
  """
  check_callable(fun)
  if isinstance(in_axes, list):
    # Users expect lists and tuples to be interchangeable here (JAX issue 2367).
    in_axes = tuple(in_axes)
  _check_axes_spec(in_axes, out_axes)

  docstr = ("Vectorized version of {fun}. Takes similar arguments as {fun} but with "
            "additional array axes over which {fun} is mapped.")
  if fun.__doc__:
    docstr += "\n\nOriginal documentation:\n\n" + fun.__doc__.replace("{", "{{").replace(
        "}", "}}")

  params = ("vmap", in_axes, out_axes, axis_name, axis_size, spmd_axis_name)

  @wraps(fun, docstr=docstr)
  def vmap_f(*args, **kwargs):
    return call_transformed(params, fun, batched, args, kwargs)

  def batched(*args, **kwargs):
    if isinstance(in_axes, tuple) and len(in_axes) != len(args):
      raise ValueError(
          "vmap in_axes must be an int, None, or a tuple of entries corresponding to "
          "the positional arguments passed to the function, but got "
          f"len(in_axes)={len(in_axes)}, len(args)={len(args)}")
    leaves, in_tree = tree_util.tree_flatten((args, kwargs))
    dims = flatten_axes("vmap in_axes", in_tree, (in_axes, 0), kws=True)
    size = mapped_axis_size(fun, in_tree, leaves, dims, "vmap", axis_size)
    dims = [None if d is None else d % len(_shape(x)) for x, d in zip(leaves, dims)]
    out_box: list = []

    def flat_fun(*xs):
      a, k = tree_util.tree_unflatten(in_tree, xs)
      out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **k))
      out_box.append(out_tree)
      return out_leaves

    def out_dims():
      return flatten_axes("vmap out_axes", out_box[0], out_axes)

    try:
      outs = batch_flat(flat_fun, leaves, dims, out_dims, size, axis_name, spmd_axis_name)
    except SpecMatchError as e:
      full = tree_util.tree_unflatten(out_box[0], out_dims())
      pairs = tree_util.tree_flatten_with_path(full, is_leaf=lambda x: x is None)[0]
      path = tree_util.keystr(pairs[e.leaf_idx][0])
      raise ValueError(f"at vmap out_axes{path}, got axis spec {e.dst} but output was "
                       f"batched on axis {e.src}") from None
    return tree_util.tree_unflatten(out_box[0], outs)

  return vmap_f
