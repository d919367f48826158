"""``reduce_p``: ``lax.reduce`` with any computation, over pytrees of operands.

``lax.reduce`` recognises the monoids JAX recognises (``lax.add`` with 0,
``lax.mul`` with 1, ``lax.max``/``lax.min`` with their identities, the
bitwise and/or/xor of integers with theirs) and binds the dedicated
reductions (``reduce_sum``, ...). Any other computation is traced to a
scalar jaxpr held by ``reduce_p`` (JAX's primitive ``reduce``, parameters
``computation``, ``jaxpr``, ``dimensions``), whose operands are the flat
operands followed by the flat init values.
"""
from __future__ import annotations

import math
import operator
import weakref
from functools import partial
from typing import Callable

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.core import (ClosedJaxpr, Primitive, ShapedArray, eval_trace, get_aval,
                               is_concrete, to_concrete_value, trace_state)
from openjax._src.core.trace import eager_config
from openjax._src.core.sharding_rules import TYPED_BY_SUB_JAXPR
from openjax._src.control._reduce_computation import (computation_of, differentiable,
                                                      flatten_operands_and_inits,
                                                      tangent_or_zero,
                                                      trace_computation, tree_reduce_jvp,
                                                      tree_reduce_np, tree_reducer)
from openjax._src.primitives.base.structural import instantiate_zeros, reduce_sum, reshape
from openjax._src.primitives.reduce.reductions import (reduce_and, reduce_max, reduce_min,
                                                       reduce_or, reduce_prod, reduce_xor)
from openjax._src.primitives.elementwise import arithmetic
from openjax._src.primitives.elementwise.arithmetic import add, mul
from openjax._src.primitives.elementwise.logic import bitwise_and, bitwise_or, bitwise_xor
from openjax._src.primitives.base.util import reduced_shape
from openjax._src.primitives.reduce.window_util import max_identity, min_identity
from openjax._src.primitives.base.ad_util import Zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.convert import _convert_element_type

__all__ = ["reduce", "reduce_p"]

reduce_p = Primitive("reduce", multiple_results=True)


def _split(args):
  k = len(args) // 2
  return args[:k], args[k:]


def _layout(shape, dimensions):
  """(permutation putting the reduced axes first, in order; reduced size n;
  kept shape)."""
  dims = sorted(dimensions)
  kept = [i for i in range(len(shape)) if i not in dims]
  n = math.prod(shape[d] for d in dims)
  return tuple(dims + kept), n, tuple(shape[i] for i in kept)


# (computation, n, m, dtypes) -> the planned tree reduction, per computation.
_reducers: "weakref.WeakKeyDictionary[ClosedJaxpr, dict]" = weakref.WeakKeyDictionary()


def _planned_tree(closed, n: int, m: int, dts: tuple) -> Callable:
  """``tree_reducer``, kept per computation and shape while no debug flag
  is set (the runners read the flags when they are built)."""
  if not eager_config.flags_ok:
    return partial(tree_reduce_np, closed)
  per = _reducers.get(closed)
  if per is None:
    per = _reducers[closed] = {}
  key = (n, m, dts)
  hit = per.get(key)
  if hit is None:
    if len(per) > 64:
      per.clear()
    hit = per[key] = tree_reducer(closed, n, m, dts)
  return hit


def _operand_layout(shape, dimensions):
  """(transpose permutation or None, n, m, kept shape) of ``_layout``."""
  perm, n, kept = _layout(shape, dimensions)
  return (None if perm == tuple(range(len(shape))) else perm), n, math.prod(kept), kept


@reduce_p.def_impl
def _reduce_impl(*args, computation, jaxpr, dimensions):
  operands, inits = _split(args)
  perm, n, m, kept = _operand_layout(operands[0].shape, dimensions)
  xs = [(x if perm is None else np.transpose(x, perm)).reshape(n, m) for x in operands]
  outs = _planned_tree(jaxpr, n, m, tuple(x.dtype for x in xs))(xs, inits)
  return [o.reshape(kept) for o in outs]


@reduce_p.def_abstract_eval
def _reduce_abstract_eval(*avals, computation, jaxpr, dimensions):
  operands, inits = _split(avals)
  if any(a.shape != () for a in inits):
    raise ValueError(f"reduce found non-scalar initial value: {[a.shape for a in inits]}")
  if [o.dtype for o in operands] != [i.dtype for i in inits]:
    raise TypeError("reduce operand dtypes should match corresponding initial value dtypes, "
                    f"got operands={list(operands)} and initial_values={list(inits)}")
  if any(o.shape != operands[0].shape for o in operands):
    raise TypeError("reduce operands must have equal shapes, got "
                    f"{', '.join(o.str_short() for o in operands)}")
  if len(jaxpr.out_avals) != len(operands):
    raise TypeError(f"reduce computation returns {len(jaxpr.out_avals)} values for "
                    f"{len(operands)} operands")
  shape = reduced_shape(operands[0], dimensions)
  return [ShapedArray(shape, o.dtype, o.weak_type and i.weak_type)
          for o, i in zip(operands, inits)]


reduce_p.mark_not_applicable("sharding_rule", TYPED_BY_SUB_JAXPR)


# Computations that are one lax monoid applied to their two operands (``lambda
# a, b: a + b`` traces to a single ``add``): eagerly one NumPy reduction
# instead of the impl's O(log n) levels of the computation's program (~20 us a
# level). Integer results are the impl's bits (wrapping arithmetic is
# associative and commutative); float sums and products differ by reassociation.
_MONOID_UFUNCS = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum,
                  "and": np.bitwise_and, "or": np.bitwise_or, "xor": np.bitwise_xor}
_BITWISE = frozenset(("and", "or", "xor"))


def _one_monoid_ufunc(closed, dt):
  """NumPy's ufunc for a computation that is one monoid equation on (x, y)
  or (y, x), for operands of NumPy dtype ``dt``; None otherwise."""
  jaxpr = closed.jaxpr
  if closed.consts or len(jaxpr.eqns) != 1 or len(jaxpr.invars) != 2:
    return None
  eqn, = jaxpr.eqns
  name = eqn.primitive.name
  ufunc = _MONOID_UFUNCS.get(name)
  # (``mul``'s ``out_dtype=None`` is the plain product)
  if (ufunc is None or any(v is not None for v in eqn.params.values())
      or list(eqn.outvars) != list(jaxpr.outvars)
      or set(map(id, eqn.invars)) != set(map(id, jaxpr.invars)) or len(eqn.invars) != 2):
    return None
  kind = dt.kind
  if name in _BITWISE:
    return ufunc if kind in "biu" else None
  if kind == "b" or kind not in "iuf" or dt in dtypes.custom_float_dtypes:
    return None
  return ufunc


@reduce_p.def_eval_kernel
def _reduce_eval_kernel(*avals, computation, jaxpr, dimensions):
  if len(avals) != 2:   # several operands (variadic reductions): the impl
    return None
  dt = avals[0].dtype
  ufunc = _one_monoid_ufunc(jaxpr, dt)
  if ufunc is None:
    # Any other computation: the impl's tree reduction, planned for these
    # shapes (lax.reduce of logaddexp over (3, 7) 83 -> ~50 us).
    perm, n, m, kept = _operand_layout(avals[0].shape, dimensions)
    reducer = tree_reducer(jaxpr, n, m, (np.dtype(dt),))

    def tree(x, init):
      x = (x if perm is None else np.transpose(x, perm)).reshape(n, m)
      return reducer([x], [init])[0].reshape(kept)
    return tree
  axes = tuple(dimensions)

  def kernel(x, init):
    # ``initial`` folds the init value in (the impl folds it in once too) and
    # gives empty reductions their result where max/min have no identity.
    return ufunc.reduce(x, axis=axes, dtype=dt, initial=init[()])
  return kernel


@reduce_p.def_jvp
def _reduce_jvp(primals, tangents, *, computation, jaxpr, dimensions):
  operands, inits = _split(primals)
  t_ops, t_inits = _split(tangents)
  if any(type(t) is not Zero for t in t_inits):
    raise NotImplementedError(
        "Gradient of general lax.reduce with non-zero tangents for initial values to "
        "reduction not implemented")
  shape = get_aval(operands[0]).shape
  perm, n, kept = _layout(shape, dimensions)
  m = int(np.prod(kept, dtype=np.int64))
  xs = [reshape(x, (n, m), perm) for x in operands]
  ts = [reshape(instantiate_zeros(t), (n, m), perm)
        if differentiable(get_aval(x).dtype) else None for x, t in zip(operands, t_ops)]
  outs, t_outs = tree_reduce_jvp(jaxpr, xs, ts, inits)
  weak = [dtypes.is_weakly_typed(x) and dtypes.is_weakly_typed(i) for x, i in zip(operands, inits)]
  outs = [_convert_element_type(reshape(o, kept), get_aval(x).dtype, weak_type=w)
          for o, x, w in zip(outs, operands, weak)]
  t_outs = [tangent_or_zero(None if t is None else reshape(t, kept), get_aval(o))
            for t, o in zip(t_outs, outs)]
  return outs, t_outs


@reduce_p.def_batch
def _reduce_batch(vals, dims, *, computation, jaxpr, dimensions):
  operands, inits = _split(vals)
  op_dims, init_dims = _split(dims)
  if any(d is not None for d in init_dims):
    raise NotImplementedError(
        "lax.reduce: vmap over the init values is not supported (their values must be "
        "scalars shared by every batch element); pass constant init values, or map "
        "with a Python loop or lax.map")
  size = axis_size(operands, op_dims)
  operands = [bdim_at_front(x, d, size) for x, d in zip(operands, op_dims)]
  outs = reduce_p.bind(*operands, *inits, computation=computation, jaxpr=jaxpr,
                       dimensions=tuple(d + 1 for d in dimensions))
  return outs, [0] * len(outs)


@reduce_p.def_lower
def _reduce_lower(ctx, *args, computation, jaxpr, dimensions):
  _, init_avals = _split(ctx.avals_in)
  scalars = [ctx.aval_type(ShapedArray((), a.dtype)) for a in init_avals]
  with ctx.region(scalars + scalars) as body:
    ctx.ret(ctx.lower_jaxpr_inline(jaxpr, body.args))
  return ctx.op("stablehlo.reduce", list(args), [ctx.aval_type(a) for a in ctx.avals_out],
                attrs={"dimensions": tuple(int(d) for d in dimensions)}, regions=[body])


# ------------------------------------------------------------------ wrapper
def _bitwise_identity(kind: str, dt) -> np.ndarray:
  return np.array(-1).astype(dt) if kind == "and" else np.array(0, dt)


# lax's monoids: (operation, dedicated reduction, identity of a dtype, whether
# integers and booleans only). Looked up by identity: JAX does the same.
_MONOIDS = (
    (add, reduce_sum, lambda dt: 0, False),
    (mul, reduce_prod, lambda dt: 1, False),
    (arithmetic.max, reduce_max, max_identity, False),
    (arithmetic.min, reduce_min, min_identity, False),
    (bitwise_or, reduce_or, lambda dt: _bitwise_identity("or", dt), True),
    (bitwise_and, reduce_and, lambda dt: _bitwise_identity("and", dt), True),
    (bitwise_xor, reduce_xor, lambda dt: _bitwise_identity("xor", dt), True),
)


def _monoid_reducer(computation, inits):
  """The dedicated reduction for ``computation`` when it is one of lax's
  monoids and the (single, concrete, scalar) init value is its identity."""
  if len(inits) != 1:
    return None
  for op, reducer, identity, integers_only in _MONOIDS:
    if computation is op:
      break
  else:   # e.g. a lambda
    return None
  x, = inits
  aval = get_aval(x)
  if aval.shape != () or not is_concrete(x):
    return None
  dt = aval.dtype
  if integers_only and dtypes.kind(dt) not in "biu":
    return None
  val = np.asarray(to_concrete_value(x))
  return reducer if bool(np.equal(val, identity(dt))) else None


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
  """Reduce ``operands`` over ``dimensions`` with ``computation``.

  ``operands`` and ``init_values`` are pytrees of the same structure (arrays
  of one shape, and scalars of their dtypes); ``computation(x, y)`` maps two
  such pytrees of scalars to one. ``init_values`` must be an identity of
  ``computation`` and ``computation`` associative (XLA's contract); the
  result is then exact whatever the order XLA picks. lax's own monoids
  (``lax.add`` with 0, ``lax.max`` with -inf, ...) become the dedicated
  reductions (``reduce_sum``, ``reduce_max``, ...). ``out_sharding`` is
  passed to ``reduce_sum`` (other reductions do not take one).
  """
  flat_ops, flat_inits, op_tree = flatten_operands_and_inits(operands, init_values)
  try:
    dimensions = tuple(operator.index(d) for d in dimensions)
  except TypeError:
    raise TypeError(f"lax.reduce: dimensions must be a sequence of integers, got "
                    f"{dimensions!r}") from None
  reducer = _monoid_reducer(computation, flat_inits)
  if reducer is not None:
    if out_sharding is not None and reducer is not reduce_sum:
      raise NotImplementedError(
          f"lax.reduce: out_sharding is supported only for sums, not {reducer.__name__}")
    kw = {} if out_sharding is None else {"out_sharding": out_sharding}
    # The dedicated reductions keep the operand's weak type; a general
    # reduce's result is weak only when the init value is too.
    weak = dtypes.is_weakly_typed(flat_ops[0]) and dtypes.is_weakly_typed(flat_inits[0])
    return _convert_element_type(reducer(flat_ops[0], dimensions, **kw), weak_type=weak)
  init_avals = [get_aval(i) for i in flat_inits]
  closed, out_tree = trace_computation("lax.reduce", computation, init_avals, op_tree)
  params = dict(computation=computation_of(closed, computation), jaxpr=closed,
                dimensions=dimensions)
  # Checked here too: transformations (jvp, vmap) apply their rules unchecked
  # (an eager bind checks once per signature, making its plan).
  if trace_state.trace is not eval_trace:
    _reduce_abstract_eval(*(get_aval(x) for x in flat_ops), *init_avals, **params)
  outs = reduce_p.bind(*flat_ops, *flat_inits, **params)
  return tree_util.tree_unflatten(out_tree, outs)
