"""``make_jaxpr`` and ``eval_shape``: a function staged to a jaxpr for
example arguments, without running it."""
from __future__ import annotations

import functools
from typing import Callable, Sequence

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify, to_shape_dtype_struct
from openjax._src.core import ClosedJaxpr
from openjax._src.interpreters.staging import DebugInfo, flat_arg_names, trace_to_jaxpr
from openjax._src.primitives.collectives.collectives import extend_axis_env


def make_jaxpr(fun: Callable, static_argnums: int | Sequence[int] = (), axis_env=None,
               return_shape: bool = False, abstracted_axes=None):
  """A function that returns the ``ClosedJaxpr`` of ``fun`` for example
  arguments (and, with ``return_shape=True``, the output's
  ``ShapeDtypeStruct`` pytree)."""
  if isinstance(static_argnums, int):
    static_argnums = (static_argnums,)
  static_argnums = tuple(static_argnums)

  @functools.wraps(fun)
  def make_jaxpr_f(*args, **kwargs):
    n = len(args)
    static_idx = {i % n if i < 0 else i for i in static_argnums}
    dyn_args = tuple(a for i, a in enumerate(args) if i not in static_idx)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, kwargs))
    avals = [abstractify(x) for x in leaves]
    box: list = []

    def flat(*tracers):
      d_args, d_kwargs = tree_util.tree_unflatten(in_tree, tracers)
      it = iter(d_args)
      full = [args[i] if i in static_idx else next(it) for i in range(n)]
      out = fun(*full, **d_kwargs)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      box.append(out_tree)
      return out_leaves

    counts = [tree_util.tree_structure(a).num_leaves for a in dyn_args] + [
        tree_util.tree_structure(kwargs[k]).num_leaves for k in sorted(kwargs)]
    dbg = DebugInfo("make_jaxpr", fun, flat_arg_names(fun, dyn_args, kwargs, counts))
    with extend_axis_env(axis_env or ()):
      jaxpr, consts = trace_to_jaxpr(flat, avals, dbg)
    closed = ClosedJaxpr(jaxpr, consts)
    if return_shape:
      shapes = tree_util.tree_unflatten(
          box[0], [to_shape_dtype_struct(a) for a in jaxpr.out_avals])
      return closed, shapes
    return closed

  make_jaxpr_f.__name__ = f"make_jaxpr({getattr(fun, '__name__', 'fun')})"
  return make_jaxpr_f


def eval_shape(fun: Callable, *args, **kwargs):
  """The output shapes and dtypes of ``fun(*args, **kwargs)`` as a pytree of
  ``ShapeDtypeStruct``, computed by tracing alone (no FLOPs)."""
  leaves, in_tree = tree_util.tree_flatten((args, kwargs))
  avals = [abstractify(x) for x in leaves]
  box: list = []

  def flat(*tracers):
    a, k = tree_util.tree_unflatten(in_tree, tracers)
    out_leaves, out_tree = tree_util.tree_flatten(fun(*a, **k))
    box.append(out_tree)
    return out_leaves

  jaxpr, _ = trace_to_jaxpr(flat, avals, DebugInfo("eval_shape", fun, None))
  return tree_util.tree_unflatten(box[0], [to_shape_dtype_struct(a) for a in jaxpr.out_avals])


__all__ = ["make_jaxpr", "eval_shape"]
