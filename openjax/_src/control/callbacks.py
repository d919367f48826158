"""Host callbacks: Python functions called from inside transformed and
compiled programs (JAX's "External callbacks").

``pure_callback_p`` (a pure function of its operands: removable when its
results are unused, batched by ``vmap_method``, not differentiable),
``io_callback_p`` (an IO effect, ordered or not), ``debug_callback_p`` and
``debug_print_p`` (debug effects with no results: kept, run once per
example under ``vmap``, on the primal values under differentiation).

Every one runs its Python function in ``impl`` (eager calls and the jaxpr
interpreter) and lowers to a call of a host function
(``runtime.host_calls``), so a compiled program calls back into Python in
program order while it runs. The function always receives openjax Arrays
and its results are checked against the declared shapes and dtypes.
"""
from __future__ import annotations

import copy
import logging
import string
import sys
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes, tree_util
from openjax._src.core import Effect, Primitive, ShapedArray, array_of
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.control.scan import scan
from openjax._src.primitives.base.structural import broadcast, moveaxis
from openjax._src.primitives.shape.shape import concatenate, index_in_dim
from openjax._src.runtime import host_calls
from openjax._src.runtime.iree_device import synchronize_all


# ------------------------------------------------------------------ effects
class DebugEffect(Effect):
  """The effect of ``jax.debug.print``/``jax.debug.callback``."""
  def __str__(self):
    return "Debug"


class OrderedDebugEffect(Effect):
  """The effect of ordered ``jax.debug.print``/``jax.debug.callback``."""
  def __str__(self):
    return "OrderedDebug"


class IOEffect(Effect):
  def __str__(self):
    return "IO"


class OrderedIOEffect(Effect):
  def __str__(self):
    return "OrderedIO"


debug_effect = DebugEffect()
ordered_debug_effect = OrderedDebugEffect()
io_effect = IOEffect()
ordered_io_effect = OrderedIOEffect()


# ------------------------------------------------------- calling the host
class _FlatCallback:
  """A Python function called with flat arguments and giving flat results
  (equal for the same function and argument structure, so retracing a
  program gives equal parameters)."""
  __slots__ = ("callback_func", "in_tree", "__weakref__")

  def __init__(self, callback_func: Callable, in_tree):
    self.callback_func = callback_func
    self.in_tree = in_tree

  def __call__(self, *flat_args) -> list:
    args, kwargs = tree_util.tree_unflatten(self.in_tree, flat_args)
    return tree_util.tree_leaves(self.callback_func(*args, **kwargs))

  def __eq__(self, other):
    return (type(other) is _FlatCallback and self.callback_func == other.callback_func
            and self.in_tree == other.in_tree)

  def __hash__(self):
    return hash((self.callback_func, self.in_tree))

  def __repr__(self):
    return f"_FlatCallback(callback_func={self.callback_func!r}, in_tree={self.in_tree!r})"


def _as_arrays(values: Sequence) -> list:
  """NumPy operands as the Arrays a callback receives."""
  out = []
  for v in values:
    v = np.array(v)   # the callback may keep it: never a view of program memory
    out.append(array_of(v, ShapedArray(v.shape, v.dtype)))
  return out


def _checked_results(results, result_avals: Sequence[ShapedArray]) -> list[np.ndarray]:
  """A callback's results as NumPy arrays of ``result_avals`` (canonical
  dtypes, as JAX converts them), or JAX's errors."""
  results = list(results)
  if len(results) != len(result_avals):
    raise RuntimeError("Mismatched number of outputs from callback. "
                       f"Expected: {len(result_avals)}, Actual: {len(results)}")
  out = []
  for i, (r, aval) in enumerate(zip(results, result_avals)):
    r = np.asarray(r)
    canonical = dtypes.canonicalize_dtype(r.dtype)
    if canonical != r.dtype:
      r = r.astype(canonical)
    if r.shape != aval.shape:
      raise RuntimeError(f"Incorrect output shape for return value #{i}: "
                         f"Expected: {aval.shape}, Actual: {r.shape}")
    if r.dtype != aval.dtype:
      raise RuntimeError(f"Incorrect output dtype for return value #{i}: "
                         f"Expected: {aval.dtype}, Actual: {r.dtype}")
    out.append(r)
  return out


def _run_callback(callback: Callable, result_avals, values) -> list[np.ndarray]:
  return _checked_results(callback(*_as_arrays(values)), result_avals)


def _lower_host_call(ctx, operands, run: Callable, key):
  """Lower a callback equation to a call of a host function running
  ``run(*numpy operands) -> numpy results``."""
  try:
    hash(key)
  except TypeError:   # unhashable static arguments: a new host function each lowering
    key = None
  host = host_calls.register(run, ctx.avals_in, ctx.avals_out, key=key)
  return ctx.call_import(host.symbol, list(operands), ctx.avals_out)


def _result_avals(result_shape_dtypes, fun: str):
  leaves, out_tree = tree_util.tree_flatten(result_shape_dtypes)
  avals = []
  for leaf in leaves:
    dt = np.dtype(leaf.dtype)
    if dtypes.canonicalize_dtype(dt) != dt:
      raise ValueError("result_shape_dtypes cannot specify 64-bit types when "
                       "`jax_enable_x64` is disabled")
    avals.append(ShapedArray(tuple(leaf.shape), dt))
  return tuple(avals), out_tree


def _batch_size(vals, dims) -> int:
  return next(v.shape[d] for v, d in zip(vals, dims) if d is not None)


def _scan_per_example(bind_one: Callable, vals, dims):
  """Results of ``bind_one(*operands)`` for each example, one after the
  other in a loop (batch dimension 0 of the results)."""
  vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
  batched = [d is not None for d in dims]
  fixed = [v for v, b in zip(vals, batched) if not b]
  per_example = [v for v, b in zip(vals, batched) if b]

  def body(carry, xs):
    fixed_it, xs_it = iter(fixed), iter(xs)
    return carry, bind_one(*[next(xs_it) if b else next(fixed_it) for b in batched])

  _, outs = scan(body, (), per_example)
  return list(outs), [0] * len(outs)


# ----------------------------------------------------------- pure_callback
pure_callback_p = Primitive("pure_callback", multiple_results=True)
pure_callback_p.def_sharding_rule(replicated_rule)   # the host sees whole values

_VMAP_METHODS = ("sequential", "sequential_unrolled", "expand_dims", "broadcast_all",
                 "legacy_vectorized", None)


def pure_callback(callback: Callable, result_shape_dtypes: Any, *args: Any, sharding=None,
                  vmap_method: str | None = None, **kwargs: Any):
  """Call the pure Python function ``callback(*args, **kwargs)`` from
  traced or compiled code; it must return arrays of ``result_shape_dtypes``
  (a pytree of objects with ``shape`` and ``dtype``). Being pure, the call
  may be removed when its results are unused. ``vmap_method`` says how
  ``vmap`` calls it: ``"sequential"`` once per example, ``"expand_dims"``
  once with unbatched arguments given a size-1 leading axis,
  ``"broadcast_all"`` once with every argument broadcast to the batch,
  ``"legacy_vectorized"`` once with unbatched arguments as they are."""
  if vmap_method not in _VMAP_METHODS:
    raise ValueError(f"vmap_method must be on of the allowed methods {list(_VMAP_METHODS)}, "
                     f"but got: {vmap_method}")
  if not callable(callback):
    raise TypeError(f"pure_callback: callback must be callable, got {type(callback).__name__}")
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes, "pure_callback")
  outs = pure_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                              result_avals=result_avals, sharding=sharding,
                              vmap_method=vmap_method)
  return tree_util.tree_unflatten(out_tree, outs)


@pure_callback_p.def_impl
def _pure_callback_impl(*args, callback, result_avals, sharding, vmap_method):
  return _run_callback(callback, result_avals, args)


@pure_callback_p.def_abstract_eval
def _pure_callback_abstract_eval(*avals, callback, result_avals, sharding, vmap_method):
  return list(result_avals)


@pure_callback_p.def_jvp
def _pure_callback_jvp(primals, tangents, **params):
  raise ValueError("Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use "
                   "callbacks while taking gradients.")


pure_callback_p.mark_not_applicable(
    "transpose", "Pure callbacks do not support transpose. Please use `jax.custom_vjp` to "
    "use callbacks while taking gradients.")


@pure_callback_p.def_batch
def _pure_callback_batch(vals, dims, *, callback, result_avals, sharding, vmap_method):
  size = _batch_size(vals, dims)
  batched_avals = tuple(ShapedArray((size, *a.shape), a.dtype) for a in result_avals)
  params = dict(callback=callback, sharding=sharding, vmap_method=vmap_method)
  if vmap_method in ("sequential", "sequential_unrolled"):
    return _scan_per_example(
        lambda *xs: pure_callback_p.bind(*xs, result_avals=result_avals, **params), vals, dims)
  if vmap_method in ("expand_dims", "broadcast_all", "legacy_vectorized"):
    vals = [v if d is None else moveaxis(v, d, 0) for v, d in zip(vals, dims)]
    if vmap_method != "legacy_vectorized":
      n = size if vmap_method == "broadcast_all" else 1
      vals = [broadcast(v, (n,)) if d is None else v for v, d in zip(vals, dims)]
    outs = pure_callback_p.bind(*vals, result_avals=batched_avals, **params)
    return outs, [0] * len(outs)
  raise NotImplementedError(
      "vmap is only supported for the pure_callback primitive when vmap_method is one of "
      "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
      f"'legacy_vectorized'. Got vmap_method={vmap_method}.")


@pure_callback_p.def_lower
def _pure_callback_lower(ctx, *args, callback, result_avals, sharding, vmap_method):
  def run(*values):
    return _run_callback(callback, result_avals, values)
  return _lower_host_call(ctx, args, run, ("pure_callback", callback, result_avals))


# ------------------------------------------------------------- io_callback
io_callback_p = Primitive("io_callback", multiple_results=True)
io_callback_p.def_sharding_rule(replicated_rule)   # the host sees whole values


def io_callback(callback: Callable, result_shape_dtypes: Any, *args: Any, sharding=None,
                ordered: bool = False, **kwargs: Any):
  """Call the impure Python function ``callback(*args, **kwargs)`` from
  traced or compiled code (never removed; ``ordered=True`` keeps its order
  with the other ordered effects and forbids ``vmap``)."""
  if not callable(callback):
    raise TypeError(f"io_callback: callback must be callable, got {type(callback).__name__}")
  flat_args, in_tree = tree_util.tree_flatten((args, kwargs))
  result_avals, out_tree = _result_avals(result_shape_dtypes, "io_callback")
  outs = io_callback_p.bind(*flat_args, callback=_FlatCallback(callback, in_tree),
                            result_avals=result_avals, sharding=sharding, ordered=ordered)
  return tree_util.tree_unflatten(out_tree, outs)


@io_callback_p.def_impl
def _io_callback_impl(*args, callback, result_avals, sharding, ordered):
  return _run_callback(callback, result_avals, args)


@io_callback_p.def_abstract_eval
def _io_callback_abstract_eval(*avals, callback, result_avals, sharding, ordered):
  return list(result_avals)


@io_callback_p.def_effects
def _io_callback_effects(*, ordered, **params):
  return frozenset({ordered_io_effect if ordered else io_effect})


@io_callback_p.def_jvp
def _io_callback_jvp(primals, tangents, **params):
  raise ValueError("IO callbacks do not support JVP.")


io_callback_p.mark_not_applicable("transpose", "IO callbacks do not support transpose.")


@io_callback_p.def_batch
def _io_callback_batch(vals, dims, *, callback, result_avals, sharding, ordered):
  if ordered:
    raise ValueError("Cannot `vmap` ordered IO callback.")
  return _scan_per_example(
      lambda *xs: io_callback_p.bind(*xs, callback=callback, result_avals=result_avals,
                                     sharding=sharding, ordered=False), vals, dims)


@io_callback_p.def_lower
def _io_callback_lower(ctx, *args, callback, result_avals, sharding, ordered):
  def run(*values):
    return _run_callback(callback, result_avals, values)
  return _lower_host_call(ctx, args, run, ("io_callback", callback, result_avals))


# ---------------------------------------------------------- debug_callback
debug_callback_p = Primitive("debug_callback", multiple_results=True)
debug_callback_p.def_sharding_rule(replicated_rule)   # the host sees whole values


def split_callback_args(args: tuple, kwargs: dict):
  """``(in_tree, array leaves, {position: static leaf})``: leaves that are
  not arrays (strings, None-like objects, functions) pass to the callback
  as they are instead of being traced."""
  flat, in_tree = tree_util.tree_flatten((args, kwargs))
  dynamic, static = [], {}
  for i, leaf in enumerate(flat):
    if _is_array_like(leaf):
      dynamic.append(leaf)
    else:
      static[i] = leaf
  return in_tree, dynamic, static


def _is_array_like(x) -> bool:
  if isinstance(x, (bool, int, float, complex, np.ndarray, np.generic)):
    return True
  return hasattr(x, "aval") or hasattr(x, "__jax_array__")


def merge_callback_args(in_tree, dynamic: Sequence, static: dict):
  """``(args, kwargs)`` from the array leaves and the static ones."""
  it = iter(dynamic)
  flat = [static[i] if i in static else next(it) for i in range(len(dynamic) + len(static))]
  return tree_util.tree_unflatten(in_tree, flat)


def debug_callback(callback: Callable | None = None, *args: Any, ordered: bool = False,
                   partitioned: bool = False, **kwargs: Any):
  """Call ``callback(*args, **kwargs)`` (returning None) from traced or
  compiled code, for debugging: it runs with the values of that point,
  once per example under ``vmap``, on primal values under ``grad``. Also
  ``debug_callback(ordered=True)(callback, *args)``."""
  def _debug_callback(callback, *c_args, **c_kwargs):
    if not callable(callback):
      raise TypeError("first argument to jax.debug.callback must be callable, but got an "
                      f"object of type {type(callback)}")
    in_tree, dynamic, static = split_callback_args(c_args, c_kwargs)

    def _flat_callback(*values):
      args_, kwargs_ = merge_callback_args(in_tree, values, static)
      callback(*args_, **kwargs_)
      return ()
    debug_callback_p.bind(*dynamic, callback=_flat_callback,
                          effect=ordered_debug_effect if ordered else debug_effect,
                          partitioned=partitioned)

  if callback is not None:
    _debug_callback(callback, *args, **kwargs)
    return None
  if args or kwargs:
    raise TypeError("debug_callback received unexpected arguments in the two-call form: "
                    f"args={args} kwargs={kwargs}")
  return _debug_callback


@debug_callback_p.def_impl
def _debug_callback_impl(*args, callback, effect, partitioned):
  callback(*_as_arrays(args))
  return []


@debug_callback_p.def_abstract_eval
def _debug_callback_abstract_eval(*avals, callback, effect, partitioned):
  return []


@debug_callback_p.def_effects
def _debug_callback_effects(*, effect, **params):
  return frozenset({effect})


def _unrolled_batch(primitive):
  """Batching for debug primitives: one call per example (as JAX prints
  once per example under ``vmap``)."""
  def rule(vals, dims, **params):
    for i in range(_batch_size(vals, dims)):
      primitive.bind(*[v if d is None else index_in_dim(v, i, d, keepdims=False)
                       for v, d in zip(vals, dims)], **params)
    return [], []
  return rule


debug_callback_p.def_batch(_unrolled_batch(debug_callback_p))


def _primal_only_jvp(primitive):
  def rule(primals, tangents, **params):
    primitive.bind(*primals, **params)
    return [], []
  return rule


debug_callback_p.def_jvp(_primal_only_jvp(debug_callback_p))


@debug_callback_p.def_transpose
def _debug_callback_transpose(cts, *args, **params):
  return [None] * len(args)


@debug_callback_p.def_lower
def _debug_callback_lower(ctx, *args, callback, effect, partitioned):
  def run(*values):
    callback(*_as_arrays(values))
    return ()
  return _lower_host_call(ctx, args, run, ("debug_callback", callback))


def effects_barrier() -> None:
  """Wait until every callback of the programs dispatched so far has run.
  (Compiled programs call their host functions while ``invoke`` runs, so
  this waits for the device work still queued.)"""
  synchronize_all()


# ------------------------------------------------------------ debug_print
debug_print_p = Primitive("debug_print", multiple_results=True)
debug_print_p.def_sharding_rule(replicated_rule)   # the host sees whole values


class _FormatChecker(string.Formatter):
  """Checks a format string against its arguments without formatting."""

  def format_field(self, value, format_spec):
    return ""

  def check_unused_args(self, used_args, args, kwargs):
    unused = [a for i, a in enumerate(args) if i not in used_args]
    unused_kwargs = [k for k in kwargs if k not in used_args]
    if unused:
      raise ValueError(f"Unused positional arguments to `jax.debug.print`: {unused}")
    if unused_kwargs:
      raise ValueError(
          f"Unused keyword arguments to `jax.debug.print`: {unused_kwargs}. You may be "
          "passing an f-string (i.e, `f\"{x}\"`) into `jax.debug.print` and instead should "
          "pass in a regular string.")


_format_checker = _FormatChecker()


def format_message(fmt: str, np_printoptions, has_placeholders: bool, args, kwargs) -> str:
  """The text ``jax.debug.print`` writes for these (host) values."""
  if has_placeholders:
    with np.printoptions(**dict(np_printoptions)):
      return fmt.format(*args, **kwargs)
  return " ".join((fmt, *(str(a) for a in args)))


def debug_print_params(fmt: str, args: tuple, kwargs: dict, *, ordered: bool,
                       partitioned: bool, skip_format_check: bool, logging_record):
  """``(array leaves, params)`` of the ``debug_print`` equation printing
  ``fmt.format(*args, **kwargs)``."""
  if not skip_format_check:
    _format_checker.format(fmt, *args, **kwargs)
  has_placeholders = False
  if fmt:
    _, field_name, *_ = next(iter(string.Formatter().parse(fmt)))
    has_placeholders = field_name is not None
  in_tree, dynamic, static = split_callback_args(args, kwargs)
  return dynamic, dict(fmt=fmt, has_placeholders=has_placeholders, in_tree=in_tree,
                       logging_record=logging_record,
                       np_printoptions=tuple(np.get_printoptions().items()),
                       ordered=ordered, partitioned=partitioned,
                       static_args=tuple(static.items()))


def debug_print(fmt: str | None = None, *args, ordered: bool = False, partitioned: bool = False,
                skip_format_check: bool = False, _logging_record=None, **kwargs):
  """Print ``fmt.format(*args, **kwargs)`` with the values at this point of
  a traced or compiled program (not an f-string: formatting is delayed).
  Also ``debug_print(ordered=True)(fmt, *args)``. ``_logging_record`` (a
  ``logging.LogRecord``; ``jax.debug.log``) logs the text instead."""
  def bind_print(fmt, *c_args, **c_kwargs):
    dynamic, params = debug_print_params(fmt, c_args, c_kwargs, ordered=ordered,
                                         partitioned=partitioned,
                                         skip_format_check=skip_format_check,
                                         logging_record=_logging_record)
    debug_print_p.bind(*dynamic, **params)

  if fmt is not None:
    bind_print(fmt, *args, **kwargs)
    return None
  if args or kwargs:
    raise TypeError("debug_print received unexpected arguments in the two-call form: "
                    f"args={args} kwargs={kwargs}")
  return bind_print


def _emit(message: str, logging_record) -> None:
  if logging_record is not None:
    record = copy.copy(logging_record)
    record.msg = message
    logging.getLogger(record.name).handle(record)
  else:
    sys.stdout.write(message + "\n")


def _print_values(values, *, fmt, has_placeholders, in_tree, logging_record, np_printoptions,
                  static_args, **_):
  args, kwargs = merge_callback_args(in_tree, _as_arrays(values), dict(static_args))
  _emit(format_message(fmt, np_printoptions, has_placeholders, args, kwargs), logging_record)


@debug_print_p.def_impl
def _debug_print_impl(*args, **params):
  _print_values(args, **params)
  return []


@debug_print_p.def_abstract_eval
def _debug_print_abstract_eval(*avals, **params):
  return []


@debug_print_p.def_effects
def _debug_print_effects(*, ordered, **params):
  return frozenset({ordered_debug_effect if ordered else debug_effect})


debug_print_p.def_batch(_unrolled_batch(debug_print_p))
debug_print_p.def_jvp(_primal_only_jvp(debug_print_p))


@debug_print_p.def_transpose
def _debug_print_transpose(cts, *args, **params):
  return [None] * len(args)


@debug_print_p.def_lower
def _debug_print_lower(ctx, *args, **params):
  def run(*values):
    _print_values(values, **params)
    return ()
  return _lower_host_call(ctx, args, run, ("debug_print", tuple(sorted(params.items()))))


__all__ = ["pure_callback_p", "io_callback_p", "debug_callback_p", "debug_print_p",
           "effects_barrier", "pure_callback", "io_callback", "debug_callback", "debug_print",
           "DebugEffect", "OrderedDebugEffect", "IOEffect", "OrderedIOEffect",
           "debug_effect", "ordered_debug_effect", "split_callback_args",
           "merge_callback_args", "format_message", "debug_print_params"]
