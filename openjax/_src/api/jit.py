"""``jit``, ``make_jaxpr``, ``eval_shape``: the staging transformations.

``jit(f)`` traces ``f`` once per combination of argument structure, abstract
values and static arguments. Outside any transformation, with the ``iree``
executor (config ``openjax_executor``, env ``OPENJAX_EXECUTOR``), the staged
jaxpr is lowered and compiled once per cache entry and the call dispatches
the executable asynchronously; otherwise it binds ``jit_p``, whose impl
compiles too under the ``iree`` executor or interprets the jaxpr.
"""
from __future__ import annotations

import functools
import inspect
import time
import warnings
import weakref
from typing import Callable

from openjax._src import tree_util
from openjax._src.api.shapes import abstractify, to_shape_dtype_struct
from openjax._src.config import _env_bool, config
from openjax._src.errors import (ConcretizationTypeError,
                                 NonConcreteBooleanIndexError, TracerArrayConversionError,
                                 TracerIntegerConversionError)
from openjax._src.api.aot import Lowered
from openjax._src.api.refs import NeedsRefs, RefJit, check_no_refs_returned, trace_in_ref_scope
from openjax._src.api.eager_call import call_eager
from openjax._src.api.jit_fast import plain_key, static_key
from openjax._src.api.jit_debug import (check_donated_once, explain_cache_miss, log_lowering,
                                        log_traced, run_checked)
from openjax._src.core.ref import Ref
from openjax._src.core import (Array, ClosedJaxpr, Jaxpr, Tracer, check_transformed, eval_jaxpr,
                               eval_trace, jaxpr_effects, program_of, trace_state)
from openjax._src.core.devices import local_devices
from openjax._src.core.memory import release_recycled
from openjax._src.core.mesh import get_concrete_mesh
from openjax._src.core.placement import IncompatibleDevicesError, commit, committed_device
from openjax._src.core.trace import eager_config
from openjax._src.core.transfer_guard import guard_host_to_device
from openjax._src.interpreters.fold_reductions import folded
from openjax._src.interpreters.staging import DebugInfo, flat_arg_names, trace_to_jaxpr
from openjax._src.control.checks import NOT_FUNCTIONALIZED
from openjax._src.control.closed_call import jit_p
from openjax._src.control.shard_map_jit import split_program
from openjax._src.control.spmd import Layout, SpmdPlan, constraint_mesh, layout_of, mesh_of
from openjax._src.core.array import ShardedBuffer
from openjax._src.core.sharding import (NamedSharding, is_meshless_argument, meshless_arguments,
                                        resolve_sharding)
from openjax._src.api.jit_tiers import TierTrial, pending_tier, runner_for
from openjax._src.api.jit_shardings import (as_asked, check_devices_agree, check_in_shardings,
                                            context_mesh, is_sharding_leaf, meshless_results,
                                            named_device_error, prefix_leaves,
                                            spelled_meshless, used_leaves)
from openjax._src.primitives.collectives.collectives import current_axis_env
from openjax._src.runtime.compiler import clear_memory_cache
from openjax._src.runtime.iree_device import trim_buffer_cache
from openjax._src.runtime.pipeline import (background, cached_executable, compile_lowered,
                                           compiling, interpreting_first_call,
                                           lower_closed_jaxpr, warn_background_compile_failed)
from openjax._src.runtime.transfer import device_put

config.define("openjax_tiered_compilation",
              _env_bool("OPENJAX_TIERED_COMPILATION", True),
              "Compile new jitted functions in a background thread and run their first "
              "calls with the jaxpr interpreter until the executable is ready (a function "
              "found in the compilation cache runs compiled at once).", validator=bool)

_all_jitted: "weakref.WeakSet[JitWrapped]" = weakref.WeakSet()


def _normalize_argnums(fun, argnums, argnames, what: str):
  """Fill in static/donate argnums from argnames and vice versa, as JAX does."""
  if isinstance(argnums, int):
    argnums = (argnums,)
  if isinstance(argnames, str):
    argnames = (argnames,)
  argnums = tuple(argnums or ())
  argnames = tuple(argnames or ())
  try:
    params = list(inspect.signature(fun).parameters.values())
  except (TypeError, ValueError):
    return argnums, argnames, None
  positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
  has_varargs = any(p.kind == p.VAR_POSITIONAL for p in params)
  n = len(positional)
  for i in argnums:
    if not has_varargs and not -n <= i < n:
      raise ValueError(f"jitted function has {what}_argnums={argnums} but only "
                       f"accepts {n} positional arguments.")
  norm = tuple(sorted({i % n if i < 0 and n else i for i in argnums}))
  names = set(argnames)
  for i in norm:
    if i < n and positional[i].kind == positional[i].POSITIONAL_OR_KEYWORD:
      names.add(positional[i].name)
  nums = set(norm)
  for name in argnames:
    for i, p in enumerate(positional):
      if p.name == name and p.kind == p.POSITIONAL_OR_KEYWORD:
        nums.add(i)
  return tuple(sorted(nums)), tuple(sorted(names)), positional


class NonHashableStaticError(ValueError):
  """A static argument that does not hash."""


# Errors that make a library function's call run inline instead of staged: its
# body needs the concrete value of an argument jit would trace.
_INLINE_ERRORS = (NonHashableStaticError, ConcretizationTypeError, TracerArrayConversionError,
                  TracerIntegerConversionError, NonConcreteBooleanIndexError)


class _HashableStatic:
  __slots__ = ("val", "_hash")

  def __init__(self, val):
    try:
      self._hash = hash(val)
    except TypeError as e:
      raise NonHashableStaticError(
          "Non-hashable static arguments are not supported. An error occurred "
          f"while trying to hash an object of type {type(val)}, {val!r}. The "
          f"error was:\nTypeError: {e}\nPass it as a traced (non-static) "
          "argument, or convert it to a hashable value (e.g. a tuple).") from None
    self.val = val

  def __hash__(self):
    return self._hash

  def __eq__(self, other):
    if not isinstance(other, _HashableStatic):
      return False
    try:
      return bool(type(self.val) is type(other.val) and self.val == other.val)
    except Exception:  # noqa: BLE001 - __eq__ of user objects may fail
      return False


class _CacheEntry:
  __slots__ = ("closed_jaxpr", "out_tree", "hoisted", "lowered", "executable", "pending",
               "compile_error", "single", "program", "unchecked", "spmd", "exact", "interpreted_s",
               "runner", "pending_plain")

  def __init__(self, closed_jaxpr, out_tree, hoisted):
    self.closed_jaxpr = closed_jaxpr
    self.out_tree = out_tree
    self.hoisted = hoisted
    self.lowered = None      # LoweredModule, made on first compiled call or lower()
    self.executable = None   # Executable, made on first compiled call
    self.pending = None      # Future of a background compile (tiered execution)
    self.compile_error = None   # why that compile failed (the calls stay interpreted)
    self.single = out_tree.num_leaves == 1 and out_tree.num_nodes == 1  # one bare leaf
    self.program = None      # the jaxpr's Program, for eager library functions
    # A checkify.check staged without checkify: the program cannot run.
    self.unchecked = any(getattr(e, "must_be_functionalized", False)
                         for e in jaxpr_effects(closed_jaxpr))
    # (mesh, argument layouts, result specs) -> SpmdPlan; also the constraint
    # mesh and jit_shardings' per-program flags
    self.spmd = {}
    self.exact = None        # eager library call: runs compiled (library_compile.py)
    self.interpreted_s = 0.0   # time of its interpreted calls before compiling starts
    self.runner = None       # what runs its compiled-ready calls (api/jit_tiers.py)
    # False once its program is known not to run on the fast path while it
    # compiles (jit_tiers.pending_tier: a loop, a branch, an effect)
    self.pending_plain = None

  def run_program(self, leaves) -> list:
    """Run the jaxpr with the eval trace's kernels (an eager library call):
    the bits of running its equations one by one, without their dispatch."""
    program = self.program
    if program is None:
      program = self.program = program_of(self.closed_jaxpr.jaxpr)
    consts = self.closed_jaxpr.consts
    # Library functions calling library functions (jnp.std calls jnp.var)
    # interpret those calls too, as a tiered first call does: jit's impl
    # would compile them (other bits, a compile stall). Samplers' calls
    # (tiered=False) still run compiled.
    with interpreting_first_call():
      env = program.input_values(consts, leaves)
      if env is None:   # operands of other types than traced (cannot happen for avals' keys)
        return eval_jaxpr(self.closed_jaxpr.jaxpr, consts, *leaves)
      return program.run_to_arrays(env, consts, leaves)

  def unflatten(self, outs):
    return outs[0] if self.single else tree_util.tree_unflatten(self.out_tree, outs)


def _hoist_tracer_consts(jaxpr: Jaxpr, consts: list):
  """Closed-over tracers of enclosing transformations become leading
  arguments of the call, so those transformations see them."""
  keep_vars, keep_vals, hoist_vars, hoist_vals = [], [], [], []
  for v, c in zip(jaxpr.constvars, consts):
    if isinstance(c, Tracer):
      hoist_vars.append(v)
      hoist_vals.append(c)
    else:
      keep_vars.append(v)
      keep_vals.append(c)
  if not hoist_vars:
    return ClosedJaxpr(jaxpr, consts), []
  new = ClosedJaxpr(jaxpr.replace(constvars=keep_vars, invars=hoist_vars + jaxpr.invars),
                    keep_vals)
  check_transformed(new, "jit (closed-over tracers as arguments)")
  return new, hoist_vals


class JitWrapped:
  """What ``jit(f)`` returns: call it, or use the AOT stages."""

  def __init__(self, fun: Callable, *, static_argnums=None, static_argnames=None,
               donate_argnums=None, donate_argnames=None, keep_unused=False,
               inline=False, compiler_options=None, name=None, tiered=None, eager=False,
               in_shardings=None, out_shardings=None):
    if not callable(fun):
      raise TypeError(f"Expected a callable value, got {fun!r}")
    self.fun = fun
    self.static_argnums, self.static_argnames, self._positional = _normalize_argnums(
        fun, static_argnums, static_argnames, "static")
    self.donate_argnums, self.donate_argnames, _ = _normalize_argnums(
        fun, donate_argnums, donate_argnames, "donate")
    self.keep_unused = keep_unused
    self.inline = inline
    self.compiler_options = dict(compiler_options or {})
    # None: the openjax_tiered_compilation flag decides; False for library
    # functions whose results must not depend on the tier that computed them
    # (jax.random's samplers: the interpreter's bits differ in the last place):
    # they run compiled, also inside an interpreted first call (jit_p's
    # ``tiered`` parameter).
    self.tiered = tiered
    # True for library functions that JAX jits (jnp.hypot, jnp.var, the
    # decompositions, ...): traced, they stage a jit call as JAX does; outside
    # any transformation their jaxpr runs on the eval trace's kernels (the
    # bits of running it op by op, LAPACK's for decompositions, as JAX's
    # eager impls are), never compiled: ~1 us a primitive plus the call,
    # where binding each one costs several, and no compile stall.
    self.eager = eager
    self._eager_fast: dict = {}   # api/eager_call.py's cache: eager_key(...) -> runner or entry
    self.name = name or getattr(fun, "__name__", type(fun).__name__)
    self._cache: dict = {}
    # Fast path for the common call: positional Array arguments only, no
    # static arguments; (config snapshot, avals) -> compiled cache entry.
    self._fast: dict = {}
    self._donates = bool(self.donate_argnums or self.donate_argnames)
    self.in_shardings, self.out_shardings = in_shardings, out_shardings
    self._sharded = in_shardings is not None or out_shardings is not None
    # Donating calls take the general path, which checks the donated buffers.
    # Static arguments passed by position join the fast key by value (a
    # call with keywords takes the general path).
    self._fast_ok = not self._donates
    self._fast_static = frozenset(self.static_argnums)
    self._refs: RefJit | None = None   # set once the function is seen to use refs
    # updated=(): the function's __dict__ must not overwrite our attributes.
    functools.update_wrapper(self, fun, updated=())
    _all_jitted.add(self)

  def __get__(self, obj, objtype=None):
    if obj is None:
      return self
    return functools.partial(self, obj)

  # ---- splitting arguments ----
  def _split(self, args, kwargs):
    static, dyn_args, dyn_kwargs = [], [], {}
    for i, a in enumerate(args):
      if i in self.static_argnums:
        static.append((i, _HashableStatic(a)))
      else:
        dyn_args.append(a)
    for k in sorted(kwargs):
      if k in self.static_argnames:
        static.append((k, _HashableStatic(kwargs[k])))
      else:
        dyn_kwargs[k] = kwargs[k]
    return tuple(static), tuple(dyn_args), dyn_kwargs

  def _flat_fun(self, static, n_dyn_args, in_tree, out_tree_box, meshless=()):
    fun = self.fun

    def flat(*leaves):
      if meshless:
        with meshless_arguments([t for t, m in zip(leaves, meshless) if m]):
          return call(leaves)
      return call(leaves)

    def call(leaves):
      dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, leaves)
      args = list(dyn_args)
      kwargs = dict(dyn_kwargs)
      for key, s in static:
        if isinstance(key, int):
          args.insert(key, s.val)
        else:
          kwargs[key] = s.val
      out = fun(*args, **kwargs)
      out_leaves, out_tree = tree_util.tree_flatten(out)
      check_no_refs_returned(self.name, out_leaves)
      out_tree_box.append(out_tree)
      return out_leaves
    return flat

  def _abstract_leaves(self, leaves, in_tree, args, kwargs):
    avals = []
    for i, x in enumerate(leaves):
      if isinstance(x, Ref):
        raise NeedsRefs()
      try:
        avals.append(abstractify(x))
      except TypeError:
        names = flat_arg_names(self.fun, args, kwargs, [1] * len(leaves))
        which = names[i] if i < len(names) else f"#{i}"
        raise TypeError(
            f"Error interpreting argument to {self.fun!r} as an abstract array. "
            f"The problematic value is of type {type(x)} and was passed to the "
            f"function at path {which}.\nThis typically means that a jit-wrapped "
            "function was called with a non-array argument, and this argument "
            "was not marked as static using the static_argnums or "
            "static_argnames parameters of jax.jit.") from None
    return tuple(avals)

  def _get_entry(self, args, kwargs, *, avals_override=None):
    static, dyn_args, dyn_kwargs = self._split(args, kwargs)
    leaves, in_tree = tree_util.tree_flatten((dyn_args, dyn_kwargs))
    avals = avals_override or self._abstract_leaves(leaves, in_tree, dyn_args, dyn_kwargs)
    # Under jax.set_mesh an argument on no mesh is typed apart (JAX's empty
    # mesh, not the context's): its own trace.
    meshless = () if get_concrete_mesh().empty else tuple(
        is_meshless_argument(x) if isinstance(x, Tracer)
        else not (type(x) is Array and isinstance(x.sharding, NamedSharding)) for x in leaves)
    # Axis sizes of enclosing named axes are baked into the jaxpr.
    key = (in_tree, avals, static, config.values_snapshot(), current_axis_env(), meshless)
    entry = self._cache.get(key)
    if entry is None:
      logging_compiles = config.read("jax_log_compiles")
      if logging_compiles or config.read("jax_explain_cache_misses"):
        self._explain_miss(key, dyn_args, dyn_kwargs, leaves)
      if config.read("jax_no_tracing"):
        raise RuntimeError(f"re-tracing function {self.name} for `jit`, but 'no_tracing' is set")
      t0 = time.perf_counter()
      box: list = []
      flat = self._flat_fun(static, len(dyn_args), in_tree, box, meshless)
      leaf_counts = [tree_util.tree_structure(a).num_leaves for a in dyn_args] + [
          tree_util.tree_structure(dyn_kwargs[k]).num_leaves for k in sorted(dyn_kwargs)]
      dbg = DebugInfo("jit", self.fun, flat_arg_names(
          self.fun, dyn_args, {k: dyn_kwargs[k] for k in sorted(dyn_kwargs)}, leaf_counts))
      jaxpr, consts = trace_in_ref_scope(trace_to_jaxpr, flat, avals, dbg)
      if logging_compiles:
        log_traced(self.name, time.perf_counter() - t0)
      closed, hoisted = _hoist_tracer_consts(jaxpr, consts)
      entry = _CacheEntry(closed, box[0], hoisted)
      if not hoisted:  # entries with outer tracers are valid only for this trace
        self._cache[key] = entry
    return entry, leaves, in_tree

  def _explain_miss(self, key, dyn_args, dyn_kwargs, leaves) -> None:
    counts = [tree_util.tree_structure(a).num_leaves for a in dyn_args] + [
        tree_util.tree_structure(dyn_kwargs[k]).num_leaves for k in sorted(dyn_kwargs)]
    names = flat_arg_names(self.fun, dyn_args, {k: dyn_kwargs[k] for k in sorted(dyn_kwargs)},
                           counts)
    explain_cache_miss(self.fun, self.name, key, list(self._cache), names)

  def _donated_invars(self, entry, in_tree, n_leaves):
    if not self.donate_argnums and not self.donate_argnames:
      return (False,) * (len(entry.hoisted) + n_leaves)
    # Placeholders must be leaves (None would be an empty subtree).
    dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, [0] * n_leaves)
    flags = []
    for i, a in enumerate(dyn_args):
      flags += [i in self.donate_argnums] * tree_util.tree_structure(a).num_leaves
    for k in sorted(dyn_kwargs):
      flags += [k in self.donate_argnames] * tree_util.tree_structure(dyn_kwargs[k]).num_leaves
    return (False,) * len(entry.hoisted) + tuple(flags)

  def _library_entry(self, args, kwargs):
    """A library function's cache entry for this call, or None when the call
    runs inline, as the function itself (not staged): a static argument that
    does not hash (``axis=[0, 1]``, a tracer), or a body that needs the value
    of an argument jit traces. Library functions accept every argument their
    un-jitted bodies accept; jit must not narrow that."""
    try:
      entry, leaves, in_tree = self._get_entry(args, kwargs)
    except _INLINE_ERRORS:
      return None, None, None
    if entry.hoisted:
      return None, None, None
    return entry, leaves, in_tree

  def __call__(self, *args, **kwargs):
    if self.eager and trace_state.trace is eval_trace:
      return call_eager(self, args, kwargs)
    # Fast path: positional Arrays, a compiled entry for their avals under the
    # current flags (state_key changes with every flag, disable_jit included).
    fast_key = None
    if self._fast_ok and trace_state.trace is eval_trace:
      statics = self._fast_static
      dyn = args
      if kwargs or statics:   # static values join the key; dyn: the others
        fast_key = static_key(args, statics, kwargs, self.static_argnames)
        if fast_key is not None and statics:
          dyn = [a for i, a in enumerate(args) if i not in statics]
      elif len(args) == 2:    # the common arities spelled out (no loop, no list)
        a, b = args
        if type(a) is Array and type(b) is Array and type(a._buffer) is not ShardedBuffer \
            and type(b._buffer) is not ShardedBuffer:
          fast_key = (config.state_key(), a.aval, b.aval)
      elif len(args) == 1:
        a, = args
        if type(a) is Array and type(a._buffer) is not ShardedBuffer:
          fast_key = (config.state_key(), a.aval)
      if fast_key is None and not kwargs and not statics:
        fast_key = plain_key(args)
      if fast_key is not None:
        hit = self._fast.get(fast_key)
        if hit is not None:
          runner, entry = hit
          try:
            outs = runner.execute(dyn)
          except IncompatibleDevicesError as err:
            raise named_device_error(err, self.fun, dyn, args, kwargs) from None
          if outs is not None:   # None: a PendingTier whose compile is done
            return outs[0] if entry.single else tree_util.tree_unflatten(entry.out_tree, outs)
    if config.read("jax_disable_jit"):
      return self.fun(*args, **kwargs)
    if self._refs is not None:
      return self._refs(args, kwargs)
    try:
      if not eager_config.flags_ok and trace_state.trace is eval_trace:
        return self._call_flagged(args, kwargs)
      return self._call(args, kwargs, fast_key)
    except NeedsRefs as err:   # the function uses refs: api/refs.py's path from now on
      self._refs = RefJit(self, err.ref)
      return self._refs(args, kwargs)
    except IncompatibleDevicesError as err:   # named by the call's arguments, as in JAX
      leaves = tree_util.tree_leaves(self._split(args, kwargs)[1:])
      raise named_device_error(err, self.fun, leaves, args, kwargs, self.static_argnums,
                               self.static_argnames) from None

  def _call_flagged(self, args, kwargs):
    """A call under the debugging flags: the host-to-device transfer guard
    on the arguments, the nan/inf checks on the results, ``no_execution``."""
    if config.read("jax_no_execution"):
      raise RuntimeError(f"JAX tried to execute function {self.name}, but the no_execution "
                         "config option is set")
    _, dyn_args, dyn_kwargs = self._split(args, kwargs)
    guard_host_to_device(tree_util.tree_leaves((dyn_args, dyn_kwargs)), abstractify)
    if not (config.read("jax_debug_nans") or config.read("jax_debug_infs")):
      return self._call(args, kwargs, None)
    box = []

    def call():
      box.append(self._call(args, kwargs, None))
      return tree_util.tree_leaves(box[-1])
    run_checked(call, lambda: self.fun(*args, **kwargs), self.name)
    return box[-1]

  def _call(self, args, kwargs, fast_key):
    if self.eager:   # traced (eager calls were handled in __call__)
      entry, leaves, in_tree = self._library_entry(args, kwargs)
      if entry is None:
        return self.fun(*args, **kwargs)
    else:
      entry, leaves, in_tree = self._get_entry(args, kwargs)
    if entry.unchecked and trace_state.trace is eval_trace:
      raise ValueError(NOT_FUNCTIONALIZED)
    if self._donates and trace_state.trace is eval_trace:
      check_donated_once(leaves, self._donated_invars(entry, in_tree, len(leaves)))
    if trace_state.trace is eval_trace and not entry.hoisted:
      split = (None if self._donates or self.in_shardings or self.out_shardings
               else split_program(entry.closed_jaxpr, self.name))
      if split is not None:   # shard_map/pmap calls run one program per device
        return entry.unflatten(split.run(leaves))
    if trace_state.trace is eval_trace and not entry.hoisted:
      outs = self._call_sharded(entry, leaves, in_tree, args)
      if outs is not None:
        return entry.unflatten(outs)
    if (trace_state.trace is eval_trace and not entry.hoisted
        and compiling(self.tiered is not False)):
      ex = entry.executable or self._executable(entry, in_tree, len(leaves))
      if ex is None:   # compiling in the background: interpret this call
        if (fast_key is not None and eager_config.flags_ok and entry.pending is not None
            and entry.pending_plain is not False):
          runner = pending_tier(entry, self.name, self._fast, fast_key)
          entry.pending_plain = runner is not None
          if runner is not None:
            self._remember_fast(fast_key, runner, entry)
            outs = runner.execute(leaves)
            if outs is not None:
              return entry.unflatten(outs)
        jaxpr = folded(entry.closed_jaxpr)   # as it is lowered
        device = committed_device(leaves, self.name)
        with interpreting_first_call():
          outs = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *leaves)
        return entry.unflatten(outs if device is None else commit(outs, device))
      tiered = config.read("openjax_tiered_compilation") if self.tiered is None else self.tiered
      runner = entry.runner if tiered else ex
      if runner is None:
        runner = entry.runner = runner_for(entry, ex, self.name, not self._donates)
      if type(runner) is TierTrial:   # timing its tiers: not yet for the fast path
        return entry.unflatten(runner.execute(leaves))
      if fast_key is not None and eager_config.flags_ok:   # flagged calls check each time
        self._remember_fast(fast_key, runner, entry)
      return entry.unflatten(runner.execute(leaves))
    outs = jit_p.bind(*entry.hoisted, *leaves, jaxpr=entry.closed_jaxpr, name=self.name,
                      donated_invars=self._donated_invars(entry, in_tree, len(leaves)),
                      keep_unused=self.keep_unused, inline=self.inline,
                      tiered=self.tiered is not False)
    return entry.unflatten(outs)

  def _remember_fast(self, fast_key, runner, entry) -> None:
    """Serve later calls of ``fast_key`` by ``runner`` on the fast path
    (at most 64 keys: the dict starts over past that)."""
    if len(self._fast) >= 64:
      self._fast.clear()
    self._fast[fast_key] = (runner, entry)

  def _call_sharded(self, entry, leaves, in_tree, args):
    """Run a call whose arguments (or ``in_shardings``/``out_shardings``)
    split over a mesh of several devices as an SPMD partition; None for an
    unsharded call."""
    plan = self._spmd_plan(entry, leaves, in_tree)
    if plan is None:
      return None
    outs = plan.run(leaves, self._donated_invars(entry, in_tree, len(leaves))
                    if self._donates else None)
    if self.out_shardings is None:
      outs = spelled_meshless(outs, meshless_results(entry.closed_jaxpr, leaves, plan.mesh,
                                                     entry.spmd))
    else:
      # Results carry the sharding asked for as given (JAX reports
      # ``out_shardings=P()`` as P(), not as the layout's P(None,)).
      asked = prefix_leaves(self.out_shardings, entry.out_tree, "out_shardings")
      outs = [as_asked(o, s) for o, s in zip(outs, asked)]
    return outs

  def _spmd_plan(self, entry, leaves, in_tree):
    """The SPMD partition of ``entry`` for arguments ``leaves`` (Arrays or
    ShapeDtypeStructs), or None when nothing splits over several devices."""
    in_sh = self._leaf_shardings(self.in_shardings, in_tree, len(leaves), "in_shardings")
    out_sh = None
    if self.out_shardings is not None:
      out_sh = prefix_leaves(self.out_shardings, entry.out_tree, "out_shardings")
    placing = leaves if self.keep_unused else used_leaves(entry.closed_jaxpr, leaves, entry.spmd)
    mesh = mesh_of(placing, (in_sh or []) + (out_sh or []))
    if mesh is None:
      # A with_sharding_constraint inside partitions the call too.
      if "constraint_mesh" not in entry.spmd:
        entry.spmd["constraint_mesh"] = constraint_mesh(entry.closed_jaxpr)
      mesh = entry.spmd["constraint_mesh"] or context_mesh(self.name, placing)
      if mesh is None:
        return None
    check_devices_agree(self.name, leaves, out_sh)
    check_in_shardings(leaves, in_sh)
    in_avals = entry.closed_jaxpr.in_avals
    layouts = []
    for i, (x, aval) in enumerate(zip(leaves, in_avals)):
      s = in_sh[i] if in_sh is not None else None
      ndim = len(aval.shape)
      if isinstance(s, NamedSharding):
        layouts.append(Layout(tuple(s.spec._normalized_spec_for_aval(ndim))))
      else:
        layouts.append(layout_of(x, mesh, ndim))
    out_specs = None
    if out_sh is not None:
      out_specs = [None if not isinstance(s, NamedSharding) else
                   tuple(s.spec._normalized_spec_for_aval(len(a.shape)))
                   for s, a in zip(out_sh, entry.closed_jaxpr.out_avals)]
    key = (mesh, tuple(layouts), None if out_specs is None else tuple(out_specs))
    plan = entry.spmd.get(key)
    if plan is None:
      plan = entry.spmd[key] = SpmdPlan(entry.closed_jaxpr, mesh, layouts, out_specs,
                                        self.name)
    return plan

  def _leaf_shardings(self, shardings, in_tree, n_leaves, what):
    if shardings is None:
      return None
    dyn_args, dyn_kwargs = tree_util.tree_unflatten(in_tree, [0] * n_leaves)
    if is_sharding_leaf(shardings):
      return [resolve_sharding(shardings, "jit")] * n_leaves
    shardings = tuple(shardings)
    if len(shardings) != len(dyn_args):
      raise ValueError(
          f"pjit {what} specification must be a tree prefix of the positional arguments "
          f"tuple. In particular, pjit {what} must either be a Sharding, a PartitionSpec, or "
          f"a tuple of length equal to the number of positional arguments. But pjit {what} "
          f"is the wrong length: got a tuple or list of length {len(shardings)} for an args "
          f"tuple of length {len(dyn_args)}.")
    out = []
    for s, a in zip(shardings, dyn_args):
      out.extend(prefix_leaves(s, tree_util.tree_structure(a), what))
    return out + [None] * (n_leaves - len(out))

  def _executable(self, entry, in_tree, n_leaves):
    """The entry's executable: from the caches, compiled now, or (tiered
    execution) None while a background compile is under way."""
    if entry.compile_error is not None:
      return None   # its background compile failed: its calls stay interpreted
    if entry.pending is not None:
      if not entry.pending.done():
        return None
      pending, entry.pending = entry.pending, None
      try:
        entry.executable = pending.result()
      except Exception as e:  # noqa: BLE001 - the interpreted calls worked
        # Its first calls returned results: the later ones must not raise.
        entry.compile_error = e
        warn_background_compile_failed(self.name, e)
      return entry.executable
    lowered = self._lower_entry(entry, in_tree, n_leaves)
    options = self.compiler_options or None
    tiered = config.read("openjax_tiered_compilation") if self.tiered is None else self.tiered
    if not tiered or lowered.aliases or any(lowered.donated_invars):
      entry.executable = compile_lowered(lowered, options)
      return entry.executable
    entry.executable = cached_executable(lowered, options)
    if entry.executable is None:
      entry.pending = background.submit(lowered, options)
    return entry.executable

  def _lower_entry(self, entry, in_tree, n_leaves):
    if entry.lowered is None:
      def lower():
        return lower_closed_jaxpr(entry.closed_jaxpr, self.name,
                                  self._donated_invars(entry, in_tree, n_leaves))
      if config.read("jax_log_compiles"):
        entry.lowered = log_lowering(self.name, entry.closed_jaxpr.in_avals, lower)
      else:
        entry.lowered = lower()
    return entry.lowered

  def _compile_entry(self, entry, in_tree, n_leaves):
    lowered = self._lower_entry(entry, in_tree, n_leaves)
    entry.executable = compile_lowered(lowered, self.compiler_options or None)
    return entry.executable

  def lower(self, *args, **kwargs) -> Lowered:
    """Lower ``f`` for these arguments (arrays or ``ShapeDtypeStruct``s) to
    StableHLO: ``jit(f).lower(x).compile()(x)``."""
    return self.trace(*args, **kwargs).lower()

  # ---- introspection ----
  def _cache_size(self) -> int:
    return len(self._cache)

  def clear_cache(self) -> None:
    self._cache.clear()
    self._fast.clear()
    self._eager_fast.clear()

  def eval_shape(self, *args, **kwargs):
    entry, _, _ = self._get_entry(args, kwargs)
    return tree_util.tree_unflatten(
        entry.out_tree, [to_shape_dtype_struct(a) for a in entry.closed_jaxpr.out_avals])

  def trace(self, *args, **kwargs) -> "Traced":
    """Stage ``f`` for these arguments (arrays or ``ShapeDtypeStruct``s)."""
    entry, leaves, in_tree = self._get_entry(args, kwargs)
    return Traced(self, entry, in_tree, args, kwargs, leaves)

  def __repr__(self):
    return f"<PjitFunction of {self.fun!r}>"


class Traced:
  """The result of ``jit(f).trace(*args)``: the staged program."""

  def __init__(self, wrapped: JitWrapped, entry: _CacheEntry, in_tree, args, kwargs,
               leaves: list):
    self._wrapped = wrapped
    self._entry = entry
    self.in_tree = in_tree
    self.args_info = (args, kwargs)
    self._leaves = leaves
    self._n_leaves = len(leaves)

  def lower(self, *, lowering_platforms=None) -> Lowered:
    """Lower the staged program to StableHLO (works whatever the executor)."""
    if lowering_platforms not in (None, ("cpu",), ["cpu"]):
      raise ValueError(f"Traced.lower: openjax lowers for 'cpu' only, got "
                       f"lowering_platforms={lowering_platforms!r}")
    if self._entry.hoisted:
      raise TypeError(f"jit of {self._wrapped.name}: cannot lower a function that closes "
                      "over values of an enclosing transformation (tracers); pass them as "
                      "arguments instead.")
    module = self._wrapped._lower_entry(self._entry, self.in_tree, self._n_leaves)
    plan = self._wrapped._spmd_plan(self._entry, self._leaves, self.in_tree)
    return Lowered(module, self.in_tree, self._entry.out_tree, self.args_info,
                   self._wrapped.compiler_options, spmd=plan)

  @property
  def jaxpr(self) -> ClosedJaxpr:
    return self._entry.closed_jaxpr

  @property
  def out_info(self):
    return tree_util.tree_unflatten(
        self._entry.out_tree, [to_shape_dtype_struct(a) for a in self.jaxpr.out_avals])

  @property
  def fun_name(self) -> str:
    return self._wrapped.name


def jit(fun: Callable | None = None, *, static_argnums=None, static_argnames=None,
        donate_argnums=None, donate_argnames=None, keep_unused: bool = False,
        device=None, backend=None, inline: bool = False, abstracted_axes=None,
        compiler_options=None, in_shardings=None, out_shardings=None, _tiered=None,
        _eager=False):
  """Compile ``fun`` with the JAX semantics of ``jax.jit``.

  ``fun`` is traced once per combination of argument pytree structure, shapes,
  dtypes (and weak types) and static argument values; the staged program is
  cached and reused. ``static_argnums``/``static_argnames`` mark arguments
  passed as Python values (they must be hashable). Also usable as
  ``@jit(static_argnames=...)``.
  """
  if fun is None:
    return functools.partial(jit, static_argnums=static_argnums,
                             static_argnames=static_argnames,
                             donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                             keep_unused=keep_unused, device=device, backend=backend,
                             inline=inline, abstracted_axes=abstracted_axes,
                             compiler_options=compiler_options,
                             in_shardings=in_shardings, out_shardings=out_shardings,
                             _tiered=_tiered, _eager=_eager)
  options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                 donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                 keep_unused=keep_unused, inline=inline,
                 compiler_options=compiler_options, tiered=_tiered, eager=_eager,
                 in_shardings=in_shardings, out_shardings=out_shardings)
  if device is None and backend is None:
    return JitWrapped(fun, **options)
  warnings.warn("backend and device argument on jit is deprecated. You can use "
                "`jax.device_put(..., jax.local_devices(backend=\"cpu\")[0])` on the inputs to "
                "the jitted function to get the same behavior.", DeprecationWarning, stacklevel=2)
  return _PlacedJit(fun, device if device is not None else local_devices(backend=backend)[0],
                    **options)


class _PlacedJit(JitWrapped):
  """``jit(fun, device=d)`` (or ``backend=``; deprecated in JAX): the
  arguments are placed on ``d`` first, so the program runs there, and its
  results are committed to ``d``."""

  def __init__(self, fun, device, **options):
    super().__init__(fun, **options)
    self._device = device

  def __call__(self, *args, **kwargs):
    d = self._device
    args = tuple(a if i in self.static_argnums else device_put(a, d) for i, a in enumerate(args))
    kwargs = {k: v if k in self.static_argnames else device_put(v, d) for k, v in kwargs.items()}
    return device_put(super().__call__(*args, **kwargs), d)


def clear_caches() -> None:
  """Drop every jit cache and the eval trace's plans, and return the freed
  device buffers and large host results kept for reuse to the system."""
  for w in list(_all_jitted):
    w.clear_cache()
  eval_trace.clear_cache()
  clear_memory_cache()
  trim_buffer_cache()
  release_recycled()


__all__ = ["jit", "clear_caches", "ShapeDtypeStruct",
           "JitWrapped", "Traced", "Lowered"]
