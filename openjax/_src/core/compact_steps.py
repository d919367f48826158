"""Elementwise steps of a ``Program`` over broadcast values, computed once per
distinct value: a step whose operands are all constant along some axes (an
``iota``, a ``broadcast_in_dim`` of a smaller array, a literal, or an
elementwise step of those) computes its kernel on one slice along those axes
and hands out the result broadcast back (a read-only view with zero strides).

JAX's formulations build such values where XLA fuses the broadcast into its
consumers: ``jnp.linspace(a, b, 5, axis=-1)`` of a (667, 1) and a (1000,)
array divides, subtracts and multiplies iotas and broadcasts of shape (667,
1000, 5) in 8 of its 14 steps, whose distinct values number 5, 667 and 1000
(x 5); ``jnp.tril``'s ``iota + k`` varies along one axis of two. The jaxpr
is unchanged (printed jaxprs, compiled programs and the bind path see every
equation); only the kernel steps compute less (``Program.kernel_steps``).
Each element of the result is the kernel applied to the same operand
elements: the same bits (a kernel that picks its method by the operand's
size, as the special functions evaluate small arrays element by element,
gives the smaller slice's, within its accuracy).

The compact shape of a value has, per axis, its size where the value may
vary along it and 1 where it is constant along it: an input's is its shape;
a literal's and a scalar's are all ones; an ``iota``'s varies along its
``dimension``; a ``broadcast_in_dim``'s takes its operand's compact sizes
at the mapped axes (1 where the operand's size is 1); an elementwise step's
is the largest of its operands' per axis. A step runs compactly when its
result has at least ``COMPACT_MIN_ELEMENTS`` elements, its compact shape a
quarter of them or fewer, and it stays under ``memory.CHECK_MIN_BYTES``
(larger results are allocated by their kernels, which fail where JAX fails).
"""
from __future__ import annotations

import math
from typing import Callable, Sequence

import numpy as np

from openjax._src.core.avals import ShapedArray
from openjax._src.core.jaxpr import Literal
from openjax._src.core.memory import CHECK_MIN_BYTES
from openjax._src.core.sharding_rules import is_elementwise_rule
from openjax._src.core.trace import make_plan

__all__ = ["compact_shapes", "compact_step_kernel", "COMPACT_MIN_ELEMENTS"]

#: Smaller results run their kernels as they are: slicing the operands and
#: broadcasting the result back costs ~1-2 us a step.
COMPACT_MIN_ELEMENTS = 8192
#: Primitives that take the elementwise sharding rule but change the shape
#: (a bitcast between widths adds or drops an axis).
_NOT_POINTWISE = frozenset({"bitcast_convert_type"})


def is_pointwise(eqn) -> bool:
  """Whether ``eqn`` computes each result element from the operand elements
  at its own position alone (an elementwise primitive with one result)."""
  p = eqn.primitive
  return (len(eqn.outvars) == 1 and p.name not in _NOT_POINTWISE and not p.multiple_results
          and is_elementwise_rule(p.sharding_rule))


def compact_shapes(eqns: Sequence) -> dict:
  """``{k: compact shape}`` for each equation ``k`` of ``eqns`` (a jaxpr's)
  worth running compactly (see the module's docstring)."""
  compact: dict = {}   # var -> its compact shape, where smaller than its shape

  def of(a) -> tuple:
    if type(a) is Literal:
      return (1,) * a.aval.ndim
    return compact.get(a, a.aval.shape)

  steps: dict = {}
  for k, eqn in enumerate(eqns):
    name = eqn.primitive.name
    if not eqn.outvars:
      continue
    out = eqn.outvars[0].aval
    shape = getattr(out, "shape", None)
    if shape is None or not shape:
      continue
    if name == "iota":
      d = eqn.params["dimension"]
      c = tuple(n if i == d else 1 for i, n in enumerate(shape))
    elif name == "broadcast_in_dim":
      x = eqn.invars[0]
      cx = of(x)
      c = [1] * len(shape)
      for i, d in enumerate(eqn.params["broadcast_dimensions"]):
        if x.aval.shape[i] == shape[d]:
          c[d] = cx[i]
      c = tuple(c)
    elif is_pointwise(eqn):
      c = [1] * len(shape)
      for a in eqn.invars:
        ca = of(a)
        if len(ca) == len(shape):
          c = [max(p, q) for p, q in zip(c, ca)]
      c = tuple(c)
      n = math.prod(shape)
      if (n >= COMPACT_MIN_ELEMENTS and 4 * math.prod(c) <= n
          and n * out.dtype.itemsize < CHECK_MIN_BYTES):
        steps[k] = c
    else:
      continue
    if c != shape:
      compact[eqn.outvars[0]] = c
  return steps


def compact_step_kernel(eqn, params: dict, compact: tuple) -> Callable | None:
  """The kernel of the elementwise step ``eqn`` (a ``compact_shapes`` step)
  over operands of its shape, computed on their slices of the ``compact``
  shape by the lean kernel of a plan for operands of that shape, its result
  broadcast back as a read-only view; None when that plan is no lean kernel
  (or there is no plan): the step's own plan runs."""
  ranks = [a.aval.ndim for a in eqn.invars]
  avals = [a.aval if not a.aval.ndim else ShapedArray(compact, a.aval.dtype, a.aval.weak_type)
           for a in eqn.invars]
  try:
    kernel, lean, _, _, _ = make_plan(eqn.primitive, avals, params)
  except Exception:  # noqa: BLE001 - the whole step's plan decides
    return None
  if not lean:
    return None
  shape = eqn.outvars[0].aval.shape
  index = tuple(slice(0, 1) if c == 1 and n != 1 else slice(None)
                for c, n in zip(compact, shape))
  sliced = tuple(r > 0 for r in ranks)   # rank-0 operands as they are
  broadcast_to = np.broadcast_to

  def run(*xs):
    # (np.broadcast_to: a read-only view of any layout the kernel's result has)
    return broadcast_to(kernel(*[x[index] if s else x for x, s in zip(xs, sliced)]), shape)
  return run
