"""``reduce_window`` with any computation (held as a scalar jaxpr, over
pytrees of operands) and the ``lax.reduce_window`` wrapper, which binds a
monoid primitive (``reduce_window_sum``/``max``/``min``) when JAX would.
The impl tree-reduces the stacked window positions with the computation
(``_reduce_computation``).
"""
from __future__ import annotations

import numpy as np

from openjax._src import tree_util
from openjax._src.core import Primitive, ShapedArray, get_aval, is_concrete, to_concrete_value
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.control._reduce_computation import (differentiable, flatten_operands_and_inits,
                                                      tangent_or_zero,
                                                      trace_computation, tree_reduce_jvp,
                                                      tree_reduce_np)
from openjax._src.primitives.reduce.window_util import (dilate_shape, max_identity,
                                                        min_identity, pads_tuple, padtype_to_pads,
                                                        reduce_window_shape, window_args,
                                                        window_offsets, window_rows,
                                                        window_shape)
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.base.structural import instantiate_zeros, reshape
from openjax._src.primitives.base.util import int_tuple
from openjax._src.primitives.shape.shape import concatenate, pad, slice
from openjax._src.primitives.reduce.window_lowering import lower_reduce_window
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.reduce.reduce_window_monoid import (
    reduce_window_max_p, reduce_window_min_p, reduce_window_sum_p, window_cost, with_unit_axis)

__all__ = ["reduce_window", "reduce_window_p"]


# ------------------------------------------------ reduce_window (generic)
reduce_window_p = Primitive("reduce_window", multiple_results=True)


def _split(args):
  k = len(args) // 2
  return args[:k], args[k:]


@reduce_window_p.def_impl
def _reduce_window_impl(*args, jaxpr, consts, **params):
  operands, inits = _split(args)
  xs = [window_rows(x, i, *window_args(params)) for x, i in zip(operands, inits)]
  out_shape = window_shape(operands[0].shape, *window_args(params))
  outs = tree_reduce_np(jaxpr, xs, inits)
  return [o.reshape(out_shape) for o in outs]


@reduce_window_p.def_abstract_eval
def _reduce_window_abstract_eval(*avals, jaxpr, consts, **params):
  operands, inits = _split(avals)
  if any(o.dtype != i.dtype for o, i in zip(operands, inits)):
    raise TypeError("reduce_window got inconsistent dtypes for operands and init_values: got "
                    f"operand dtypes {[o.dtype for o in operands]} and init_value dtypes "
                    f"{[i.dtype for i in inits]}.")
  if any(i.ndim != 0 for i in inits):
    raise TypeError("reduce_window expected init_values to be scalars but init_values have "
                    f"shapes {[i.shape for i in inits]}.")
  if any(o.shape != operands[0].shape for o in operands):
    raise TypeError("reduce_window operands must have equal shapes, got "
                    f"{', '.join(o.str_short() for o in operands)}")
  shape = reduce_window_shape("reduce_window", operands[0], *window_args(params))
  return [ShapedArray(shape, o.dtype) for o in operands]


reduce_window_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


@reduce_window_p.def_jvp
def _reduce_window_jvp(primals, tangents, *, jaxpr, consts, **params):
  # Every window position as one strided slice of the padded, dilated
  # operand, stacked on a new leading axis and tree-reduced in (primal,
  # tangent) pairs: slices, pads and the computation's JVP, all of which
  # transpose, so reverse mode works too.
  operands, inits = _split(primals)
  t_ops, t_inits = _split(tangents)
  if any(type(t) is not Zero for t in t_inits):
    raise TypeError("reduce_window jvp does not support non-zero init_value_tangent.")
  window_dimensions, window_strides, padding, base_dilation, window_dilation = \
      window_args(params)
  out_shape = reduce_window_shape("reduce_window", get_aval(operands[0]),
                                  *window_args(params))
  m = int(np.prod(out_shape, dtype=np.int64))
  if m == 0:   # no window fits: empty results, zero tangents
    outs = reduce_window_p.bind(*primals, jaxpr=jaxpr, consts=consts, **params)
    return outs, [Zero.from_primal_value(o) for o in outs]
  config = [(lo, hi, d - 1) for (lo, hi), d in zip(padding, base_dilation)]

  def stacked(x, fill):
    xp = pad(x, fill, config)
    rows = []
    for offset in window_offsets(window_dimensions):
      starts = [k * r for k, r in zip(offset, window_dilation)]
      limits = [s0 + (n - 1) * s + 1 for s0, n, s in zip(starts, out_shape, window_strides)]
      rows.append(reshape(slice(xp, starts, limits, window_strides), (1, m)))
    return concatenate(rows, 0)

  xs, ts = [], []
  for x, t, i in zip(operands, t_ops, inits):
    dt = get_aval(x).dtype
    xs.append(stacked(x, i))
    ts.append(stacked(instantiate_zeros(t), np.zeros((), dt))
              if differentiable(dt) else None)
  outs, t_outs = tree_reduce_jvp(jaxpr, xs, ts, inits)
  outs = [_convert_element_type(reshape(o, out_shape), get_aval(x).dtype, weak_type=False)
          for o, x in zip(outs, operands)]
  t_outs = [tangent_or_zero(None if t is None else reshape(t, out_shape),
                            get_aval(o)) for t, o in zip(t_outs, outs)]
  return outs, t_outs


@reduce_window_p.def_batch
def _reduce_window_batch(vals, dims, *, jaxpr, consts, **params):
  operands, inits = _split(vals)
  op_dims, init_dims = _split(dims)
  if any(d is not None for d in init_dims):
    raise NotImplementedError("reduce_window batching is not implemented for initial values")
  size = axis_size(operands, op_dims)
  operands = [bdim_at_front(x, d, size) for x, d in zip(operands, op_dims)]
  outs = reduce_window_p.bind(*operands, *inits, jaxpr=jaxpr, consts=consts,
                              **with_unit_axis(params, 0))
  return outs, [0] * len(outs)


@reduce_window_p.def_lower
def _reduce_window_lower(ctx, *args, jaxpr, consts, **params):
  operands, inits = _split(args)
  _, init_avals = _split(ctx.avals_in)
  scalars = [ctx.aval_type(ShapedArray((), a.dtype)) for a in init_avals]
  with ctx.region(scalars + scalars) as body:
    ctx.ret(ctx.lower_jaxpr_inline(jaxpr, body.args))
  return lower_reduce_window(ctx, operands, inits, body,
                             [ctx.aval_type(a) for a in ctx.avals_out], *window_args(params))


reduce_window_p.def_cost(window_cost)


# ------------------------------------------------------------------ wrapper
def _monoid_window_primitive(computation, inits):
  """The monoid primitive for ``computation`` when JAX picks one: ``lax.add``,
  ``lax.max`` or ``lax.min`` with its (concrete, scalar) identity."""
  if len(inits) != 1:
    return None
  x, = inits
  aval = get_aval(x)
  if aval.shape != () or not is_concrete(x):
    return None
  val = np.asarray(to_concrete_value(x))
  if computation is add:
    return reduce_window_sum_p if val == 0 else None
  if computation is arithmetic.max:
    return reduce_window_max_p if val == max_identity(aval.dtype) else None
  if computation is arithmetic.min:
    return reduce_window_min_p if val == min_identity(aval.dtype) else None
  return None


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
  """Reduce every window of ``operand`` with ``computation``.

  ``operand`` and ``init_value`` are pytrees of the same structure (arrays of
  one shape; scalars of their dtypes). Windows have extent
  ``window_dimensions`` and move by ``window_strides`` (default 1) over the
  operand after ``base_dilation`` (holes between its elements) and
  ``padding``: ``'VALID'``, ``'SAME'``, ``'SAME_LOWER'`` or ``(low, high)``
  pairs; ``window_dilation`` spreads a window's elements apart. Places that
  are not operand elements hold the init value. ``lax.add`` with 0 and
  ``lax.max``/``lax.min`` with their identities become ``reduce_window_sum``,
  ``reduce_window_max`` and ``reduce_window_min``.
  """
  flat_ops, flat_inits, op_tree = flatten_operands_and_inits(operand, init_value)
  if not flat_ops:
    raise ValueError("reduce_window must have at least one operand.")
  fun = "reduce_window"
  window_dimensions = int_tuple(fun, "window_dimensions", window_dimensions)
  ones = (1,) * len(window_dimensions)
  window_strides = ones if window_strides is None else \
      int_tuple(fun, "window_strides", window_strides)
  base_dilation = ones if base_dilation is None else \
      int_tuple(fun, "base_dilation", base_dilation)
  window_dilation = ones if window_dilation is None else \
      int_tuple(fun, "window_dilation", window_dilation)
  if isinstance(padding, str):
    span = dilate_shape(window_dimensions, window_dilation)
    padding = padtype_to_pads(fun, get_aval(flat_ops[0]).shape, span, window_strides,
                              padding)
  else:
    padding = pads_tuple(fun, padding)
  params = dict(window_dimensions=window_dimensions, window_strides=window_strides,
                padding=padding, base_dilation=base_dilation, window_dilation=window_dilation)
  monoid = _monoid_window_primitive(computation, flat_inits)
  if monoid is not None:
    return tree_util.tree_unflatten(op_tree, [monoid.bind1(flat_ops[0], **params)])
  init_avals = [get_aval(i) for i in flat_inits]
  closed, out_tree = trace_computation("lax.reduce_window", computation, init_avals,
                                       op_tree)
  if out_tree != op_tree:
    raise ValueError("reduce_window output must have the same tree structure as the operands"
                     f" {op_tree} vs. {out_tree}")
  params.update(jaxpr=closed, consts=tuple(closed.consts))
  # Checked here too: transformations (jvp, vmap) apply their rules unchecked.
  _reduce_window_abstract_eval(*(get_aval(x) for x in flat_ops), *init_avals, **params)
  outs = reduce_window_p.bind(*flat_ops, *flat_inits, **params)
  return tree_util.tree_unflatten(out_tree, outs)
