"""``lax.scan``, ``lax.map`` and ``lax.fori_loop``: the user-facing loops
built on ``scan_p`` (its rules are in ``_scan_rules.py`` and
``_scan_autodiff.py``). A ``fori_loop`` with traced bounds is a
``while_loop``."""
from __future__ import annotations

from typing import Callable

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.config import config
from openjax._src.core import (Array, ClosedJaxpr, Jaxpr, Tracer, array_of, canonical_value,
                               concrete_or_error, eval_jaxpr, get_aval, is_concrete, typematch)
from openjax._src.errors import ConcretizationTypeError
from openjax._src.control import _scan_autodiff  # noqa: F401 - registers the autodiff rules
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.elementwise.logic import lt
from openjax._src.control._scan_rules import (checked_closed, forwarded_inputs, mapped_aval,
                                                 scan_p)
from openjax._src.control.while_loop import check_carry_type, join_carries, while_loop
from openjax._src.control.trace_cache import TraceCache, avals_key, fun_key
from openjax._src.primitives.collectives.collectives import current_axis_env
from openjax._src.control.ref_threading import run_threading_refs
from openjax._src.core.ref import close_scope
from openjax._src.interpreters.batching import batch_jaxpr
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import expand_dims, reshape
from openjax._src.primitives.shape.shape import concatenate, index_in_dim, slice

__all__ = ["scan", "scan_p", "map", "fori_loop"]


# --------------------------------------------------------------------- scan
def scan(f: Callable, init, xs=None, length: int | None = None, reverse: bool = False,
         unroll: int | bool = 1, _split_transpose: bool = False):
  """Scan ``f`` over leading array axes while carrying along state.

  The semantics are those of this Python loop (with ``xs`` and the returned
  ``ys`` any pytrees of arrays, sliced and stacked leaf by leaf)::

    def scan(f, init, xs, length=None):
      if xs is None:
        xs = [None] * length
      carry = init
      ys = []
      for x in xs:
        carry, y = f(carry, x)
        ys.append(y)
      return carry, np.stack(ys)

  but ``f`` is traced once and the loop is one ``scan`` primitive (one
  ``stablehlo.while`` under ``jit``), differentiable in forward and reverse
  mode and batchable with ``vmap``.

  Args:
    f: ``(carry, x) -> (carry, y)``. The output carry must have the structure
      and types of the input carry (a weakly typed initial value, such as a
      Python scalar, takes the type ``f`` gives it).
    init: the initial carry, an array, scalar or pytree of them.
    xs: the values to scan over, a pytree of arrays with equal leading axis
      sizes, or None (then ``length`` gives the number of iterations).
    length: the number of iterations; must agree with the leading axis of
      ``xs`` when both are given.
    reverse: iterate from the last index to the first (``ys`` stay in index
      order).
    unroll: how many iterations one trip of the compiled loop runs (an int
      >= 0; 0 or True unrolls the whole loop, False is 1).
    _split_transpose: accepted for compatibility; it changes nothing.

  Returns:
    ``(carry, ys)``: the final carry and the stacked ``y`` outputs.
  """
  del _split_transpose
  if not callable(f):
    raise TypeError("lax.scan: f argument should be a callable.")
  init_flat, init_tree = tree_util.tree_flatten(init)
  xs_flat, xs_tree = tree_util.tree_flatten(xs)
  length = _infer_scan_length(xs_flat, length)
  if config.read("jax_disable_jit"):
    return _scan_python_loop(f, init, xs_flat, xs_tree, length, reverse)

  def plain(state):
    return _scan(f, state, init, init_flat, init_tree, xs_flat, xs_tree, length, reverse,
                 unroll)

  def threaded(state):
    # The refs the body uses ride along as carries (control/ref_threading.py).
    def body(carry, x):
      (c, finals), y = _swap(state.call(f, carry[1], carry[0], x))
      return (c, finals), y
    (carry, finals), ys = scan(body, (init, state.values()), xs, length, reverse, unroll)
    state.write_back(finals)
    return carry, ys
  return run_threading_refs(plain, threaded)


def _swap(out_finals):
  # ((carry, y), finals) -> ((carry, finals), y), checking the pair first.
  out, finals = out_finals
  if not isinstance(out, (tuple, list)) or len(out) != 2:
    raise _pair_error(out)
  return (out[0], finals), out[1]


def _scan(f, state, init, init_flat, init_tree, xs_flat, xs_tree, length, reverse, unroll):
  init_avals = tuple(get_aval(x) for x in init_flat)
  x_avals = tuple(mapped_aval(get_aval(x)) for x in xs_flat)
  key = (fun_key(f), init_tree, avals_key(init_avals), xs_tree, avals_key(x_avals), length,
         bool(reverse), unroll, config.values_snapshot(), current_axis_env())
  loop = _scans.get(key)
  if loop is None:
    # The carry's paths (for error messages) only when tracing: ~1 us a call.
    init_paths = [p for p, _ in tree_util.tree_flatten_with_path(init)[0]]
    loop = _PreparedScan(f, state, list(init_flat), init_tree, init_paths, xs_tree,
                         list(init_avals), x_avals, length, reverse, unroll)
    if not loop.holds_tracers:
      _scans.put(key, loop, loop.consts)
  return loop.bind(list(init_flat), xs_flat)


# (fun_key(f), carry and xs trees and types, length, reverse, unroll, flags,
# axis env) -> _PreparedScan: an eager scan called again with the same body
# (or a fresh closure of the same code over the same values) binds the same
# jaxpr, so neither tracing nor the eval trace's plan runs again.
_scans = TraceCache()


class _PreparedScan:
  """A traced ``scan``: its body jaxpr and constants, the weak carries the
  body's types join, the carries that are loop constants and the ys that
  are xs."""

  def __init__(self, f, state, init_flat, init_tree, init_paths, xs_tree, init_avals, x_avals,
               length, reverse, unroll):
    body, consts, carry_tree, ys_tree = _trace_body(f, init_tree, init_avals, xs_tree, x_avals,
                                                    state)
    num_carry = len(init_flat)
    carry_out_avals = body.out_avals[:carry_tree.num_leaves]
    if len(carry_out_avals) != num_carry:
      check_carry_type("scan body", f, init_tree, init_paths, init_avals, carry_tree,
                       carry_out_avals)
    self.joins = [(i, o) for i, (a, o) in enumerate(zip(init_avals, carry_out_avals))
                  if a.weak_type and not typematch(a, o)]
    if self.joins:
      join_carries(init_flat, self.joins)
      init_avals = [get_aval(x) for x in init_flat]
      body, consts, carry_tree, ys_tree = _trace_body(f, init_tree, init_avals, xs_tree,
                                                      x_avals, state)
      carry_out_avals = body.out_avals[:num_carry]
    check_carry_type("scan body", f, init_tree, init_paths, init_avals, carry_tree,
                     carry_out_avals)

    unroll = concrete_or_error(
        None, unroll, "The `unroll` argument to `scan` expects a concrete `int` or `bool` value.")
    if isinstance(unroll, (bool, np.bool_)):
      unroll = max(length, 1) if unroll else 1
    unroll = int(unroll)
    if unroll < 0:
      raise ValueError("`unroll` must be a `bool` or a non-negative `int`.")

    # A carry the body returns unchanged is a loop constant; a y that is a
    # slice of xs is xs itself. Neither goes through the loop.
    nk = len(consts)
    fwd = forwarded_inputs(body)
    carry_fwd, ys_fwd = fwd[:num_carry], fwd[num_carry:]
    self.to_const = [f_ == nk + i for i, f_ in enumerate(carry_fwd)]
    self.ys_from_xs = [None if f_ is None or f_ < nk + num_carry else f_ - nk - num_carry
                       for f_ in ys_fwd]
    carry_in, xs_in = body.invars[nk:nk + num_carry], body.invars[nk + num_carry:]
    carry_out, ys_out = body.outvars[:num_carry], body.outvars[num_carry:]
    body = body.replace(
        invars=[*(v for v, m in zip(carry_in, self.to_const) if m), *body.invars[:nk],
                *(v for v, m in zip(carry_in, self.to_const) if not m), *xs_in],
        outvars=[*(v for v, m in zip(carry_out, self.to_const) if not m),
                 *(v for v, j in zip(ys_out, self.ys_from_xs) if j is None)])
    self.consts, self.carry_tree, self.ys_tree = consts, carry_tree, ys_tree
    n_moved = sum(self.to_const)
    self.params = dict(reverse=bool(reverse), length=length, jaxpr=checked_closed(body, []),
                       num_consts=n_moved + len(consts), num_carry=num_carry - n_moved,
                       unroll=unroll)
    self.holds_tracers = any(isinstance(c, Tracer) for c in consts)

  def bind(self, init_flat: list, xs_flat: list):
    if self.joins:
      join_carries(init_flat, self.joins)
    to_const = self.to_const
    loop_consts = [x for x, m in zip(init_flat, to_const) if m] + self.consts
    loop_init = [x for x, m in zip(init_flat, to_const) if not m]
    outs = scan_p.bind(*loop_consts, *loop_init, *xs_flat, **self.params)
    n_loop_carry = len(loop_init)
    loop_carry, loop_ys = iter(outs[:n_loop_carry]), iter(outs[n_loop_carry:])
    carry = [_as_array(x) if m else next(loop_carry) for x, m in zip(init_flat, to_const)]
    ys = [next(loop_ys) if j is None else _as_array(xs_flat[j]) for j in self.ys_from_xs]
    return (tree_util.tree_unflatten(self.carry_tree, carry),
            tree_util.tree_unflatten(self.ys_tree, ys))


def _as_array(x):
  if isinstance(x, Tracer) or type(x) is Array:
    return x
  return array_of(canonical_value(x), get_aval(x))


def _infer_scan_length(xs_flat: list, length) -> int:
  shapes = []
  for x in xs_flat:
    shape = getattr(x, "shape", None)
    if shape is None or len(shape) == 0:
      raise ValueError(f"scan got value with no leading axis to scan over: {x}.")
    shapes.append(shape[0])
  if length is not None:
    try:
      length = int(length)
    except ConcretizationTypeError:
      raise ConcretizationTypeError(
          length, "The `length` argument to `scan` expects a concrete `int` value. For "
          "scan-like iteration with a dynamic length, use `while_loop` or `fori_loop`.\n"
      ) from None
    if not all(length == n for n in shapes):
      raise ValueError(f"scan got `length` argument of {length} which disagrees with "
                       f"leading axis sizes {shapes}.")
    return length
  if len(set(shapes)) > 1:
    raise ValueError("scan got values with different leading axis sizes: "
                     f"{', '.join(str(n) for n in shapes)}.")
  if not shapes:
    raise ValueError("scan got no values to scan over and `length` not provided.")
  return shapes[0]


def _pair_error(out) -> TypeError:
  if tree_util.treedef_is_leaf(tree_util.tree_structure(out)):
    try:
      a = get_aval(out)
      shown = ("~" if a.weak_type else "") + a.str_short(short_dtypes=False)
    except TypeError:
      shown = repr(out)
  else:
    shown = str(tree_util.tree_map(get_aval, out))
  return TypeError(f"scan body output must be a pair, got {shown}.")


def _trace_body(f, init_tree, carry_avals, xs_tree, x_avals, state):
  """Trace ``f`` to a jaxpr over (closed-over consts, carry leaves, x
  leaves) -> (carry leaves, y leaves), in a ref scope of ``state``. Returns
  (jaxpr, consts, carry_tree, ys_tree)."""
  trees: list = []
  n = len(carry_avals)

  def flat(*leaves):
    carry = tree_util.tree_unflatten(init_tree, leaves[:n])
    x = tree_util.tree_unflatten(xs_tree, leaves[n:])
    scope = state.open()
    try:
      out = f(carry, x)
    finally:
      close_scope(scope)
    if not isinstance(out, (tuple, list)) or len(out) != 2:
      raise _pair_error(out)
    carry_leaves, carry_tree = tree_util.tree_flatten(out[0])
    y_leaves, ys_tree = tree_util.tree_flatten(out[1])
    trees[:] = [carry_tree, ys_tree]
    return [*carry_leaves, *y_leaves]

  jaxpr, consts = trace_to_jaxpr(flat, [*carry_avals, *x_avals])
  jaxpr = Jaxpr([], [*jaxpr.constvars, *jaxpr.invars], jaxpr.outvars, jaxpr.eqns,
                jaxpr.debug_info)
  return jaxpr, consts, trees[0], trees[1]


def _stack(arrays):
  return concatenate([expand_dims(a, (0,)) for a in arrays], 0)


def _scan_python_loop(f, init, xs_flat, xs_tree, length, reverse):
  """``scan`` under ``jax.disable_jit()``: the Python loop of the docstring."""
  if length == 0:
    raise ValueError("zero-length scan is not supported in disable_jit() mode because "
                     "the output type is unknown.")
  order = range(length - 1, -1, -1) if reverse else range(length)
  carry, ys = init, []
  for i in order:
    x = tree_util.tree_unflatten(xs_tree, [index_in_dim(x, i, keepdims=False)
                                           for x in xs_flat])
    carry, y = f(carry, x)
    ys.append(y)
  if reverse:
    ys.reverse()
  return carry, tree_util.tree_map(lambda *leaves: _stack(leaves), *ys)


# ---------------------------------------------------------------------- map
def map(f: Callable, xs, *, batch_size: int | None = None):  # noqa: A001 - JAX's name
  """Apply ``f`` to each slice of ``xs`` along its leading axis and stack
  the results: ``np.stack([f(x) for x in xs])`` for any pytree ``xs``, as
  one ``scan`` (``f`` is traced once).

  With ``batch_size`` the slices are processed ``batch_size`` at a time
  under ``vmap`` (fewer, larger iterations); slices left over when
  ``batch_size`` does not divide the length are mapped by one more ``vmap``
  after the scan. ``batch_size=0`` is one ``vmap`` of everything.
  """
  if batch_size is None:
    _, ys = scan(lambda _, x: ((), f(x)), (), xs)
    return ys
  batch_size = int(batch_size)
  if batch_size < 0:
    raise TypeError(f"lax.map: batch_size must be a non-negative int, got {batch_size}.")
  scan_xs, remainder_xs = _batch_and_remainder(xs, batch_size)
  scan_ys = None
  if scan_xs is not None:
    _, scan_ys = scan(lambda _, x: ((), _vmap(f, x)), (), scan_xs)
  if scan_ys is None:
    return _vmap(f, remainder_xs)

  def flatten(y):
    shape = get_aval(y).shape
    return reshape(y, (shape[0] * shape[1],) + shape[2:])

  if remainder_xs is None:
    return tree_util.tree_map(flatten, scan_ys)
  remainder_ys = _vmap(f, remainder_xs)
  return tree_util.tree_map(lambda a, b: concatenate([flatten(a), b], 0), scan_ys,
                            remainder_ys)


def _batch_and_remainder(xs, batch_size: int):
  """(leaves reshaped to [num_batches, batch_size, ...] or None, the
  leftover slices or None)."""
  leaves, tree = tree_util.tree_flatten(xs)
  if not leaves:
    return xs, None
  n = get_aval(leaves[0]).shape[0]
  num_batches, remainder = (0, n) if batch_size == 0 else divmod(n, batch_size)
  used = num_batches * batch_size

  def batched(x):
    shape = get_aval(x).shape
    return reshape(slice(x, (0,) * len(shape), (used,) + shape[1:]),
                   (num_batches, batch_size) + shape[1:])

  def rest(x):
    shape = get_aval(x).shape
    return slice(x, (used,) + (0,) * (len(shape) - 1), shape)

  scan_part = None if num_batches == 0 else tree_util.tree_unflatten(
      tree, [batched(x) for x in leaves])
  rest_part = None if num_batches and not remainder else tree_util.tree_unflatten(
      tree, [rest(x) for x in leaves])
  return scan_part, rest_part


def _vmap(f: Callable, xs):
  """``vmap(f)(xs)`` over the leading axis of every leaf of ``xs``, through
  the batching hook (this layer sits below the ``vmap`` API)."""
  leaves, tree = tree_util.tree_flatten(xs)
  avals = tuple(get_aval(x) for x in leaves)
  size = avals[0].shape[0]
  key = (fun_key(f), tree, avals_key(avals), config.values_snapshot(), current_axis_env())
  hit = _vmaps.get(key)
  if hit is None:
    out_trees: list = []

    def flat(*ls):
      out_leaves, out_tree = tree_util.tree_flatten(f(tree_util.tree_unflatten(tree, ls)))
      out_trees[:] = [out_tree]
      return out_leaves

    jaxpr, consts = trace_to_jaxpr(flat, [mapped_aval(a) for a in avals])
    batched, _ = batch_jaxpr(ClosedJaxpr(jaxpr, consts), [0] * len(leaves), size)
    hit = (batched, out_trees[0])
    if not any(isinstance(c, Tracer) for c in batched.consts):
      _vmaps.put(key, hit, batched.consts)
  batched, out_tree = hit
  outs = eval_jaxpr(batched.jaxpr, batched.consts, *leaves)
  return tree_util.tree_unflatten(out_tree, outs)


# (fun_key(f), xs tree and types, flags, axis env) -> (batched jaxpr, out tree).
_vmaps = TraceCache()


# ---------------------------------------------------------------- fori_loop
def fori_loop(lower, upper, body_fun: Callable, init_val, *, unroll: int | bool | None = None):
  """Run ``val = body_fun(i, val)`` for ``i`` from ``lower`` to ``upper - 1``
  and return ``val`` (``init_val`` when ``upper <= lower``).

  With concrete bounds (Python or NumPy integers, concrete arrays) the loop
  is a ``scan`` over the trip count, so it is differentiable in reverse mode
  and ``unroll`` applies. With traced bounds it is a ``while_loop``
  (forward-mode differentiable only; ``unroll`` must then be left unset).

  Args:
    lower: the first index (inclusive), an integer scalar.
    upper: the end index (exclusive), an integer scalar of the same dtype
      (a Python int adopts the other bound's integer dtype).
    body_fun: ``(i, val) -> val`` keeping the structure and types of ``val``.
    init_val: the initial value, an array, scalar or pytree of them.
    unroll: iterations per trip of the compiled loop (int or bool), only
      with concrete bounds.

  Returns:
    The value after the last iteration.
  """
  if not callable(body_fun):
    raise TypeError("lax.fori_loop: body_fun argument should be callable.")
  lower_dtype, upper_dtype = dtypes.dtype(lower), dtypes.dtype(upper)
  dtype = lower_dtype if lower_dtype == upper_dtype else None
  if dtype is None and (dtypes.issubdtype(lower_dtype, np.signedinteger)
                        and dtypes.issubdtype(upper_dtype, np.signedinteger)):
    # One weakly typed bound (a Python int) takes the other bound's type.
    lower_weak, upper_weak = dtypes.is_weakly_typed(lower), dtypes.is_weakly_typed(upper)
    if lower_weak and not upper_weak:
      dtype = upper_dtype
    elif upper_weak and not lower_weak:
      dtype = lower_dtype
  if dtype is None:
    raise TypeError("lower and upper arguments to fori_loop must have equal types, got "
                    f"{lower_dtype.name} and {upper_dtype.name}")

  static = False
  if is_concrete(lower) and is_concrete(upper):
    try:
      lower_, upper_ = int(lower), int(upper)
      static = True
    except (TypeError, ValueError):
      static = False
  if static:
    length = max(upper_ - lower_, 0)
    if config.read("jax_disable_jit") and length == 0:
      return init_val

    # The carry's name shows in carry type errors (JAX calls it loop_carry).
    def scan_body(loop_carry, _):
      i, x = loop_carry
      return (i + 1, body_fun(i, x)), None

    (_, result), _ = scan(scan_body, (lower_, init_val), None, length=length,
                          unroll=False if unroll is None else unroll)
    return result
  if unroll is not None and unroll is not False and unroll != 1:
    raise ValueError("Can only use `unroll` in `fori_loop` if the loop bounds are statically "
                     "known.")
  if lower_dtype != dtype:
    lower = convert_element_type(lower, dtype)
  if upper_dtype != dtype:
    upper = convert_element_type(upper, dtype)

  def plain(state):
    def while_body(loop_carry):
      i, hi, x = loop_carry
      i_next = add(i, np.array(1, get_aval(i).dtype))   # staged first, as JAX orders it
      return i_next, hi, state.call(body_fun, [], i, x)[0]
    _, _, result = while_loop(lambda carry: lt(carry[0], carry[1]), while_body,
                              (lower, upper, init_val))
    return result

  def threaded(state):
    # The refs the body uses ride along in the carry (control/ref_threading.py).
    def while_body(loop_carry):
      i, hi, x, values = loop_carry
      i_next = add(i, np.array(1, get_aval(i).dtype))
      x, finals = state.call(body_fun, values, i, x)
      return i_next, hi, x, finals
    _, _, result, finals = while_loop(lambda carry: lt(carry[0], carry[1]), while_body,
                                      (lower, upper, init_val, state.values()))
    state.write_back(finals)
    return result
  return run_threading_refs(plain, threaded)
