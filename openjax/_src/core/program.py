"""The jaxpr program evaluator: every jaxpr that is interpreted rather than
compiled runs here (``eval_jaxpr``, jit's interpreted and tiered first calls,
the impls of jit, cond, scan, while, remat and the custom-derivative calls).

``program_of(jaxpr)`` compiles a jaxpr once (cached per ``Jaxpr`` object,
weakly) into a ``Program``: a list of steps over value slots (constvars,
invars, literals, then equation outputs), each step naming its primitive, its
parameters, the slots it reads and writes and the slots whose value is dead
after it. A program runs in one of two ways:

* on concrete values with impls (``Program.runner``, and ``eval_jaxpr`` under
  the eval trace with concrete inputs of the jaxpr's types): each step calls
  its primitive's ``impl`` on NumPy values and casts the results to the
  jaxpr's dtypes, with no trace dispatch and no abstract evaluation; values
  become ``Array``s only at the program's boundary. With ``jax_debug_nans`` or
  ``jax_debug_infs`` on, each step's results are checked and a nan/inf raises
  ``FloatingPointError`` naming the step's primitive.
* by binding each step's primitive in the current trace (``eval_jaxpr`` under
  a transformation or with tracers among the inputs), so evaluating under a
  transformation transforms the program; an ``on_step`` hook may watch every
  equation (``print_saved_residuals`` gives equations their sources with it).

Slots whose value is large are released after their last use, so a big
intermediate does not live until the program ends.
"""
from __future__ import annotations

import math
import weakref
from operator import itemgetter
from typing import Any, Callable, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core.array import Array
from openjax._src.core.avals import ShapedArray
from openjax._src.core.common_steps import literal_key, repeated_steps
from openjax._src.core.compact_steps import compact_shapes, compact_step_kernel
from openjax._src.core.fused_steps import fused_releases, fused_steps
from openjax._src.core.jaxpr import Jaxpr, JaxprTypeError, Literal, eqn_effects, jaxprs_in_params
from openjax._src.core.memory import translate_memory_error
from openjax._src.core.program_codegen import compiled_steps, direct_runner, same_value
from openjax._src.core.trace import (FP_ERRSTATE, FP_IGNORE, SCALAR_TYPES, canonical_value,
                                     check_nans, eager_config, eval_trace, make_plan,
                                     scalar_value, trace_state)
from openjax._src.core.tracer import Tracer

# A dead value this large (bytes) has its slot cleared after its last use;
# smaller ones stay until the program ends (clearing costs more than they do).
RELEASE_MIN_BYTES = 1 << 12
_fp_set, _fp_reset = FP_ERRSTATE.set, FP_ERRSTATE.reset


def _no_inputs(env: list) -> tuple:
  return ()


def _nbytes(aval: ShapedArray) -> int:
  return math.prod(aval.shape) * aval.dtype.itemsize


class _MissingImpl:
  """A step's impl when its primitive has none (yet): the standard error
  when called."""
  __slots__ = ("primitive",)

  def __init__(self, primitive):
    self.primitive = primitive

  def __call__(self, *args, **params):
    return self.primitive.rule("impl")(*args, **params)


class Program:
  """A jaxpr compiled to steps over value slots.

  ``steps`` holds one tuple per equation: (primitive, impl, params, gather,
  unary, outs, free), where ``gather(env)`` reads the equation's operands
  (the operand itself when ``unary``, else a tuple), ``outs`` is
  ((slot, dtype), ...) of its results and ``free`` the slots dead after it.
  ``values`` and ``operands`` are the initial slot lists of the two ways to
  run (literals as NumPy values, or as the Arrays that binding takes).
  """
  __slots__ = ("n_consts", "n_args", "in_avals", "eqns", "steps", "out_slots", "out_vars",
               "out_avals",
               "out_literals", "values", "operands", "reads", "literal_slots", "repeats",
               "_kernel_steps",
               "_kernel_reads", "_step_runner",
               "__weakref__")

  def __init__(self, jaxpr: Jaxpr):
    slots: dict = {}
    values: list = []
    operands: list = []
    literal_slots: dict = {}   # slot -> its literal_key
    last_use: dict[int, int] = {}   # large slot -> the step after which it is dead

    def define(v, k: int) -> int:
      i = slots[v] = len(values)
      values.append(None)
      operands.append(None)
      if k >= 0 and _nbytes(v.aval) >= RELEASE_MIN_BYTES:
        last_use[i] = k   # until read: dead once written
      return i

    def read(a, k: int) -> int:
      if type(a) is Literal:
        value = np.asarray(a.val, a.aval.dtype)
        value.setflags(False)
        values.append(value)
        operands.append(a.operand)
        literal_slots[len(values) - 1] = literal_key(value, a.aval.weak_type)
        return len(values) - 1
      i = slots.get(a)
      if i is None:
        raise JaxprTypeError(f"eval_jaxpr: variable {a} is used before it is defined")
      if i in last_use:
        last_use[i] = k
      return i

    invars = [*jaxpr.constvars, *jaxpr.invars]
    for v in invars:
      define(v, -1)   # the caller's values: never released here
    self.n_consts, self.n_args = len(jaxpr.constvars), len(jaxpr.invars)
    self.in_avals = [v.aval for v in invars]
    self.eqns = list(jaxpr.eqns)
    reads, writes = [], []
    for k, eqn in enumerate(self.eqns):
      reads.append(tuple(read(a, k) for a in eqn.invars))
      writes.append(tuple(define(v, k) for v in eqn.outvars))
    self.out_slots = [read(a, len(self.eqns)) for a in jaxpr.outvars]
    # Kernel steps that repeat an earlier step read its result (repeat ->
    # (original, its result's slot)): it lives until the repeat's step, as
    # if the repeat read it.
    self.repeats = {k: (j, writes[j][0])
                    for k, j in repeated_steps(self.eqns, reads, writes, literal_slots).items()}
    for k, (_, i) in self.repeats.items():
      if i in last_use:
        last_use[i] = max(last_use[i], k)
    self.out_vars = list(jaxpr.outvars)
    self.out_avals = [a.aval for a in jaxpr.outvars]
    self.out_literals = [a.operand if type(a) is Literal else None for a in jaxpr.outvars]
    free_after: dict[int, list] = {}
    for i, k in last_use.items():
      free_after.setdefault(k, []).append(i)   # outputs: k is past the last step
    self.steps = []
    for k, (eqn, ins, outs) in enumerate(zip(self.eqns, reads, writes)):
      p = eqn.primitive
      gather = itemgetter(*ins) if ins else _no_inputs
      self.steps.append((p, p.impl or _MissingImpl(p), eqn.params, gather, len(ins) == 1,
                         tuple((i, v.aval.dtype) for i, v in zip(outs, eqn.outvars)),
                         tuple(sorted(free_after.get(k, ())))))
    self.values, self.operands = values, operands
    self.reads, self.literal_slots = reads, literal_slots
    self._kernel_steps = self._kernel_reads = self._step_runner = None

  @property
  def kernel_steps(self) -> list:
    """The steps with the kernels the eval trace's plans run for the same
    operand types (a primitive's lean eval kernel, else its impl), made on
    first use: (kernel, lean, params, gather, unary, outs, free, slot), ``slot``
    the first result's (a lean step's one result). Running
    them gives the bits an eager call of each equation gives, without a
    dispatch or a plan lookup per equation. Steps of literals alone are
    run here once and left out (``_fold``), as are steps whose results
    nothing reads and that have no effect (``linspace``'s step when
    ``retstep=False``): a compiled program drops them too. A few library
    patterns run as one fused NumPy call at their last step, their other
    steps dropped (``fused_steps``); a step repeating an earlier one takes
    its result (``common_steps``)."""
    if self._kernel_steps is None:
      ksteps, kreads = [], []
      constant = set(self.literal_slots)
      live = self._live_steps()
      fused = fused_steps(self.eqns, self.out_vars)
      compacts = compact_shapes(self.eqns)
      owner, held = fused_releases(fused, self.reads, live)
      deferred: dict[int, set] = {k: set() for k in fused}
      pending_free: tuple = ()   # dead steps' slots to release: after the next live step
      for k, (eqn, ins, (p, impl, params, gather, unary, outs, free)) in enumerate(
          zip(self.eqns, self.reads, self.steps)):
        if held and any(held.get(i, -1) > k for i in free):
          for i in free:
            if held.get(i, -1) > k:
              deferred[held[i]].add(i)
          free = tuple(i for i in free if held.get(i, -1) <= k)
        if k in owner:
          deferred[owner[k]].update(free)
          continue
        if k not in live:
          pending_free += free + tuple(deferred.get(k, ()))
          continue
        if k in deferred:
          free = tuple(sorted({*free, *deferred[k]}))
        if pending_free:
          free, pending_free = tuple(sorted({*pending_free, *free})), ()
        if k in fused:
          kernel, ops, _, out_steps = fused[k]
          ins = tuple(self.reads[j][i] for j, i in ops)
          if out_steps is not None:   # the kernel returns the results of several steps
            outs = tuple(self.steps[j][5][r] for j, r in out_steps)
          ksteps.append((kernel, out_steps is None, params if out_steps is None else {},
                         itemgetter(*ins), len(ins) == 1, outs, free, outs[0][0]))
          kreads.append((ins, False))
          continue
        repeat = self.repeats.get(k)
        if repeat is not None and repeat[0] not in owner:   # the original's result
          i = repeat[1]
          kernel, lean, ins, gather, unary = same_value, True, (i,), itemgetter(i), True
        else:
          kernel = compact_step_kernel(eqn, params, compacts[k]) if k in compacts else None
          lean = kernel is not None
          try:
            if not lean:
              kernel, lean, _, _, _ = make_plan(p, [a.aval for a in eqn.invars], params)
          except Exception:  # noqa: BLE001 - no plan for these operands: the impl, as before
            kernel, lean = impl, False
        if (not lean and p.name == "convert_element_type" and params.get("sharding") is None
            and eqn.invars[0].aval.dtype == eqn.outvars[0].aval.dtype):
          kernel, lean = same_value, True
        lean = lean and len(outs) == 1
        if lean and not free and self._fold(kernel, eqn, ins, unary, gather, outs, constant):
          continue
        slot = outs[0][0] if outs else -1
        ksteps.append((kernel, lean, params, gather, unary, outs, free, slot))
        # (the slots it reads; whether its result is an ndarray by
        # construction: a ufunc's result of a shape with axes)
        kreads.append((ins, lean and type(kernel) is np.ufunc and eqn.outvars[0].aval.ndim > 0))
      if pending_free and ksteps:
        kernel, lean, params, gather, unary, outs, free, slot = ksteps[-1]
        ksteps[-1] = (kernel, lean, params, gather, unary, outs,
                      tuple(sorted({*pending_free, *free})), slot)
      self._kernel_reads = kreads
      self._kernel_steps = ksteps
    return self._kernel_steps

  def step_runner(self, steps: list, fp: bool = True) -> "StepRunner":
    """A ``StepRunner`` of ``steps``, this program's kernel steps (or them
    with kernels substituted: ``_substituted`` keeps their order). The
    kernel steps themselves share one runner (impls that make a runner per
    call, ``remat``'s, the custom-derivative calls', count toward one
    compilation)."""
    if steps is self.kernel_steps and fp:
      if self._step_runner is None:
        self._step_runner = StepRunner(steps, self._kernel_reads, self.out_slots, True)
      return self._step_runner
    return StepRunner(steps, self._kernel_reads, self.out_slots, fp)

  def _live_steps(self) -> set:
    """The indices of the steps the results depend on, and of those with
    side effects."""
    used = set(self.out_slots)
    live = set()
    for k in range(len(self.eqns) - 1, -1, -1):
      outs = self.steps[k][5]
      if any(i in used for i, _ in outs) or eqn_effects(self.eqns[k]):
        live.add(k)
        used.update(self.reads[k])
        repeat = self.repeats.get(k)
        if repeat is not None:   # its kernel step reads the original's result
          used.add(repeat[1])
    return live

  def _fold(self, kernel, eqn, ins, unary, gather, outs, constant: set) -> bool:
    """Run a lean step whose operands are all literals (or folded steps'
    results) now, once: its result becomes a constant slot of the program
    (``broadcast_in_dim 0.0``, a small ``iota``), the same bits every run
    without the step's ~1 us. Large results are not held (the step stays)."""
    if any(i not in constant for i in ins) or _nbytes(eqn.outvars[0].aval) >= RELEASE_MIN_BYTES:
      return False
    try:
      with np.errstate(all="ignore"):
        o = kernel(gather(self.values)) if unary else kernel(*gather(self.values))
    except Exception:  # noqa: BLE001 - the step runs each time and raises (or not) there
      return False
    o = o if type(o) is np.ndarray else np.asarray(o)
    o.setflags(write=False)   # shared by every run: no kernel may write into it
    i = outs[0][0]
    self.values[i] = o
    constant.add(i)
    return True

  # ---------------------------------------------------------- impl path
  def runner(self, consts: Sequence[Any],
             step_kernel: Callable | None = None) -> Callable[[Sequence], list]:
    """``args -> outs`` on NumPy values of the invars' types, by impls, for a
    caller that runs the program many times (a loop body) or inside an impl
    (under the eval trace). The debug flags are read now. ``step_kernel``:
    as ``library_runner``'s (for the kernel steps; checked steps run impls)."""
    run, out_slots = _impl_loop(), self.out_slots
    if run is _run_kernels:
      steps, env0 = self.stepper(consts, step_kernel)
      run = self.step_runner(steps)
    else:
      steps, env0 = self.steps, self.values.copy()
      env0[:self.n_consts] = [canonical_value(c) for c in consts]
      run = StepRunner.checked(run)
    lo, hi = self.n_consts, self.n_consts + self.n_args
    if len(out_slots) == 1:
      out_slot, = out_slots

      def run_program(args: Sequence) -> list:
        env = env0.copy()
        env[lo:hi] = _ndarrays(args)
        run.run_steps(steps, env)
        return [env[out_slot]]
      return run_program

    def run_program(args: Sequence) -> list:
      env = env0.copy()
      env[lo:hi] = _ndarrays(args)
      run.run_steps(steps, env)
      return [env[i] for i in out_slots]
    return run_program

  def stepper(self, consts: Sequence[Any], step_kernel: Callable | None = None) -> tuple:
    """(steps, env0): the kernel steps (``step_kernel`` as ``runner``'s) and
    the initial slots with the constants ``consts`` set, for a caller that
    runs the steps itself (``kernel_while_runner``, ``kernel_scan_runner``)."""
    steps = _substituted(self.kernel_steps, step_kernel)   # folds constants first
    env0 = self.values.copy()
    env0[:self.n_consts] = [canonical_value(c) for c in consts]
    return steps, env0

  def direct_call(self, consts: Sequence[Any], out_avals: Sequence,
                  general: Callable[[Sequence], list]) -> Callable[[Sequence], list] | None:
    """``args -> outs``, uncommitted Arrays in and read-only Arrays of
    ``out_avals`` out, as one generated function of the kernel steps
    (``program_codegen.direct_runner``; other arguments and the debugging
    flags: ``general(args)``); None for programs over ``COMPILE_MAX_STEPS``
    steps, which stay interpreted."""
    steps, env0 = self.stepper(consts)
    if len(steps) > COMPILE_MAX_STEPS:
      return None
    lo = self.n_consts
    return direct_runner(steps, self._kernel_reads, self.out_slots, env0,
                         range(lo, lo + self.n_args), out_avals, general)

  def input_values(self, consts: Sequence, args: Sequence) -> list | None:
    """The initial slots for the impl path: NumPy values of ``consts`` and
    ``args``; None when one is a tracer or differs from the jaxpr's types
    (then only binding gives the right result types)."""
    if self._kernel_steps is None:
      self.kernel_steps   # noqa: B018 - folds the constant steps into ``values`` first
    env = self.values.copy()
    i = 0
    for xs in (consts, args):
      for x in xs:
        aval = self.in_avals[i]
        if type(x) is Array:
          a = x.aval
          if a is not aval and (a.shape != aval.shape or a.dtype != aval.dtype
                                or a.weak_type != aval.weak_type):
            return None
          env[i] = x._value
        elif isinstance(x, Tracer):
          return None
        else:
          v = canonical_value(x)
          if (v.shape != aval.shape or v.dtype != aval.dtype
              or dtypes.is_weakly_typed(x) != aval.weak_type):
            return None
          env[i] = v
        i += 1
    return env

  def run_to_arrays(self, env: list, consts: Sequence, args: Sequence) -> list:
    """Run the impl path on initial slots ``env`` and return Arrays (an
    output that is an input Array is that Array)."""
    run = _impl_loop()
    if run is _run_kernels:
      run = self.step_runner(self.kernel_steps).run_steps   # (now: it may be compiled)
    try:
      run(self.kernel_steps if run is not _run_impls_checked else self.steps, env)
    except MemoryError as err:   # a step's NumPy result did not fit: JAX's error type
      raise translate_memory_error(err, "jit (interpreted)") from None
    n_in = self.n_consts + self.n_args
    outs = []
    for i, aval, lit in zip(self.out_slots, self.out_avals, self.out_literals):
      if lit is not None:
        outs.append(lit)
        continue
      if i < n_in:
        x = consts[i] if i < self.n_consts else args[i - self.n_consts]
        if type(x) is Array:
          outs.append(x)
          continue
      v = env[i]
      v.setflags(False)   # write=False, positional
      outs.append(Array(v, aval))
    return outs

  def library_runner(self, consts: Sequence, leaves: Sequence, single: bool,
                     step_kernel: Callable | None = None):
    """``(run, impls)`` for the eager calls of a library function (a ``jnp``
    function JAX jits) whose arguments have the kinds of ``leaves``: its
    caller keys the calls by them (an Array with a value by its aval, a
    Python or NumPy scalar by its type, a NumPy array by shape and dtype),
    so what ``input_values`` and ``run_to_arrays`` check and decide on every
    call is decided here once. ``run(leaves)`` gives the results as Arrays
    (the one result when ``single``); ``impls``: (kernel, params) of the
    steps that run impls (one may call a jitted function: the caller
    decides whether to run the program as an interpreted call).
    ``step_kernel(impl, params)``, when given, may give a step that runs an
    impl another kernel (called as impls are, with the parameters). None
    when the values would not have the jaxpr's types (``eval_jaxpr`` binds
    those) or a debug flag asks for checked steps."""
    if _impl_loop() is not _run_kernels or len(leaves) != self.n_args:
      return None
    env0 = self.input_values(consts, leaves)   # folds the constant steps first
    if env0 is None:
      return None
    steps = _substituted(self.kernel_steps, step_kernel)
    lo, hi = self.n_consts, self.n_consts + self.n_args
    # How each leaf becomes its slot's value: None, an Array's value; a
    # dtype, a Python scalar made in it (cached); False, ``canonical_value``.
    casts = tuple(None if type(x) is Array else self.in_avals[lo + i].dtype
                  if type(x) in SCALAR_TYPES else False for i, x in enumerate(leaves))
    env0[lo:hi] = [None] * self.n_args
    # Each result: (slot, aval, the Array it is as it is or None).
    outs = []
    for i, aval, lit in zip(self.out_slots, self.out_avals, self.out_literals):
      same = lit
      if lit is None and i < lo and type(consts[i]) is Array:
        same = consts[i]
      outs.append((i, aval, same, i - lo if lit is None and lo <= i < hi
                   and type(leaves[i - lo]) is Array else None))
    arrays = all(c is None for c in casts)
    one = arrays and self.n_args == 1
    scalars = {i: (None, None) for i in range(lo, hi)}   # slot -> the last scalar and its value
    step_runner, setflags, array = self.step_runner(steps), np.ndarray.setflags, Array

    def values(leaves) -> list:
      env = env0.copy()
      if one:
        env[lo] = leaves[0]._np
      elif arrays:
        env[lo:hi] = [x._np for x in leaves]
      else:
        i = lo
        for x, c in zip(leaves, casts):
          if c is None:
            env[i] = x._np
          elif c is False:
            env[i] = canonical_value(x)
          else:
            last = scalars[i]
            if last[0] is not x:   # a call's constants are the same objects each time
              last = scalars[i] = (x, scalar_value(x, c))
            env[i] = last[1]
          i += 1
      try:
        step_runner.run_steps(steps, env)
      except MemoryError as err:   # a step's NumPy result did not fit: JAX's error type
        raise translate_memory_error(err, "jit (interpreted)") from None
      return env

    def result(env, leaves, i, aval, same, arg):
      if same is not None:
        return same
      if arg is not None:
        return leaves[arg]
      v = env[i]
      setflags(v, False)   # write=False, positional
      return array(v, aval)

    if single and outs[0][2] is None and outs[0][3] is None:
      (slot, aval, _, _), = outs

      def run(leaves):
        v = values(leaves)[slot]
        setflags(v, False)
        return array(v, aval)
    elif single:
      def run(leaves):
        return result(values(leaves), leaves, *outs[0])
    else:
      def run(leaves):
        env = values(leaves)
        return [result(env, leaves, *out) for out in outs]
    return run, [(kernel, params) for kernel, lean, params, *_ in steps if not lean]

  # ---------------------------------------------------------- bind path
  def bind(self, consts: Sequence, args: Sequence, on_step: Callable | None = None) -> list:
    """Bind each step's primitive in the current trace; ``on_step(eqn)``
    runs before each equation is bound."""
    env = self.operands.copy()
    n = self.n_consts
    env[:n] = consts
    env[n:n + self.n_args] = args
    if on_step is None:
      for p, _, params, gather, unary, outs, free in self.steps:
        results = p.bind(gather(env), **params) if unary else p.bind(*gather(env), **params)
        for (i, _), o in zip(outs, results):
          env[i] = o
        for i in free:
          env[i] = None
    else:
      for eqn, (p, _, params, gather, unary, outs, free) in zip(self.eqns, self.steps):
        on_step(eqn)
        results = p.bind(gather(env), **params) if unary else p.bind(*gather(env), **params)
        for (i, _), o in zip(outs, results):
          env[i] = o
        for i in free:
          env[i] = None
    return [env[i] for i in self.out_slots]


def _substituted(steps: list, step_kernel: Callable | None) -> list:
  """Kernel ``steps`` with the kernels ``step_kernel(impl, params)`` gives
  in place of their impls (None: the impl stays)."""
  if step_kernel is None:
    return steps
  return [step if step[1] else (step_kernel(step[0], step[2]) or step[0], *step[1:])
          for step in steps]


def _ndarrays(values: Sequence) -> list:
  """Loop bodies get NumPy scalars (a row of a 1-d ``xs``) where the kernels
  take arrays (``np.ndarray.astype`` is one)."""
  return [v if type(v) is np.ndarray else np.asarray(v) for v in values]


def _run_kernels(steps: list, env: list) -> None:
  """Run ``Program.kernel_steps`` (``_run_steps``) with NumPy's
  floating-point warnings off for the whole program, as the eval trace does
  around each. (Only a ``StepRunner``'s first ``COMPILE_AFTER_RUNS`` runs,
  and programs too long to generate, come here: the extra call is ~0.06 us
  a run of those.)"""
  token = _fp_set(FP_IGNORE)
  try:
    _run_steps(steps, env)
  finally:
    _fp_reset(token)


def _run_steps(steps: list, env: list, ndarray=np.ndarray, asarray=np.asarray) -> None:
  """The kernel steps: lean kernels on the values alone, impls with their
  parameters, large values released after their last use; NumPy's
  floating-point state is the caller's (``_run_kernels``, or a loop's runner
  around all its trips). (``ndarray`` and ``asarray`` are locals: ~0.1 us
  of each step's ~0.6 us loop is lookups.)"""
  for kernel, lean, params, gather, unary, outs, free, slot in steps:
    if lean:
      o = kernel(gather(env)) if unary else kernel(*gather(env))
      env[slot] = o if type(o) is ndarray else asarray(o)
    else:
      # No name holds the result list: a dead value must not outlive its slot.
      for (i, dt), o in zip(outs, kernel(gather(env), **params) if unary
                            else kernel(*gather(env), **params)):
        if type(o) is not ndarray:
          o = asarray(o)
        env[i] = o if o.dtype is dt or o.dtype == dt else o.astype(dt)
    if free:
      for i in free:
        env[i] = None


def kernel_while_runner(cond: tuple, body: tuple, n_carry: int) -> Callable | None:
  """``run(cond_args, body_args, carry) -> carry``: a ``while`` loop with a
  scalar predicate on kernel steps. ``cond`` and ``body`` are (program,
  constants, step_kernel) of the cond and body jaxprs, whose last
  ``n_carry`` inputs are the carry (``cond_args``/``body_args`` the
  inputs before it). Each program keeps one set of slots for every trip
  (a trip writes each step's slot before reading it) and the
  floating-point state is set once per loop: a trip costs its kernels
  plus ~1 us, where two runner calls cost ~3 us (slot copies, frames, the
  state set and reset twice). None when the debug flags ask for checked
  steps (``runner`` then)."""
  if _impl_loop() is not _run_kernels:
    return None
  (cprog, cconsts, ckernel), (bprog, bconsts, bkernel) = cond, body
  csteps, cenv0 = cprog.stepper(cconsts, ckernel)
  bsteps, benv0 = bprog.stepper(bconsts, bkernel)
  cond_runner = cprog.step_runner(csteps, fp=False)
  body_runner = bprog.step_runner(bsteps, fp=False)
  c_lo, c_hi = cprog.n_consts, cprog.n_consts + cprog.n_args
  b_lo, b_hi = bprog.n_consts, bprog.n_consts + bprog.n_args
  c_mid, b_mid = c_hi - n_carry, b_hi - n_carry
  pred_slot, out_slots = cprog.out_slots[0], tuple(bprog.out_slots)

  def run(cond_args: Sequence, body_args: Sequence, carry: Sequence) -> list:
    cenv, benv = cenv0.copy(), benv0.copy()
    cenv[c_lo:c_mid] = _ndarrays(cond_args)
    benv[b_lo:b_mid] = _ndarrays(body_args)
    carry = _ndarrays(carry)
    token = _fp_set(FP_IGNORE)
    try:
      while True:
        cenv[c_mid:c_hi] = carry
        cond_runner.run_steps(csteps, cenv)
        if not cenv[pred_slot]:
          return list(carry)
        benv[b_mid:b_hi] = carry
        body_runner.run_steps(bsteps, benv)
        carry = [benv[i] for i in out_slots]
    finally:
      _fp_reset(token)
  return run


def kernel_scan_runner(body: tuple, n_consts: int, n_carry: int) -> Callable | None:
  """``run(consts, carry, xs, length, reverse) -> carry + ys``: a ``scan``
  on kernel steps. ``body`` is (program, constants, step_kernel) of the
  scan's jaxpr, whose inputs are ``n_consts`` loop constants, ``n_carry``
  carries and one row of each ``xs``; ``ys`` stacks each trip's other
  outputs. One set of slots serves every trip and the floating-point state
  is set once (as ``kernel_while_runner``): ~1 us a trip where a runner call
  took ~3. None when the debug flags ask for checked steps."""
  if _impl_loop() is not _run_kernels:
    return None
  program, consts, kernel = body
  steps, env0 = program.stepper(consts, kernel)
  step_runner = program.step_runner(steps, fp=False)
  lo = program.n_consts
  c_lo, x_lo, hi = lo + n_consts, lo + n_consts + n_carry, lo + program.n_args
  carry_slots, y_slots = program.out_slots[:n_carry], program.out_slots[n_carry:]
  y_avals = program.out_avals[n_carry:]
  # One carry, row and output spelled out (most scans), ``itemgetter`` for
  # several carries: ~0.3-0.5 us a trip less than list comprehensions.
  one_carry, one_x, one_y = n_carry == 1, hi - x_lo == 1, len(y_slots) == 1
  carry_of = itemgetter(*carry_slots) if n_carry > 1 else None
  carry_slot, y_slot = carry_slots[0] if one_carry else None, y_slots[0] if one_y else None

  def run(loop_consts: Sequence, carry: Sequence, xs: Sequence, length: int,
          reverse: bool) -> list:
    env = env0.copy()
    env[lo:c_lo] = _ndarrays(loop_consts)
    env[c_lo:x_lo] = _ndarrays(carry)
    ys = [np.empty((length,) + a.shape, a.dtype) for a in y_avals]
    x0, y0 = xs[0] if one_x else None, ys[0] if one_y else None
    token = _fp_set(FP_IGNORE)
    try:
      for i in (range(length - 1, -1, -1) if reverse else range(length)):
        if one_x:   # ``x[i, ...]``: a 0-d row (``x[i]`` of 1-d ``xs``: a NumPy scalar)
          env[x_lo] = x0[i, ...]
        else:
          env[x_lo:hi] = [x[i, ...] for x in xs]
        step_runner.run_steps(steps, env)
        if one_y:   # outputs first: one may be a carry's input slot
          y0[i] = env[y_slot]
        else:
          for y, k in zip(ys, y_slots):
            y[i] = env[k]
        if one_carry:   # the next trip's carry (the last trip's: the result)
          env[c_lo] = env[carry_slot]
        elif carry_of is not None:
          env[c_lo:x_lo] = carry_of(env)
    finally:
      _fp_reset(token)
    return [*env[c_lo:x_lo], *ys]
  return run


#: A program's kernel steps run interpreted (``_run_kernels``) for this many
#: runs, then as one generated function (``compiled_steps``). Generating
#: costs ~0.3 ms + ~20 us a step, once; a compiled step saves ~0.14 us of
#: the interpreter's ~0.25 (no step tuple to unpack, no ``itemgetter``
#: call, values in locals), so a program called this often pays it back.
COMPILE_AFTER_RUNS = 100
#: Larger programs stay interpreted (their steps' kernels dominate).
COMPILE_MAX_STEPS = 4000


class StepRunner:
  """``run_steps(steps, env)``: a program's kernel steps on its slots
  ``env`` (``_run_kernels``' contract: operands read from ``env``, the
  program's results written to their slots), interpreted for the first
  ``COMPILE_AFTER_RUNS`` runs, then by a Python function generated for
  these steps: the same kernels called on the same values in the same
  order. ``fp``: set NumPy's floating-point state around each run (False
  for a loop's trips, whose runner sets it once)."""
  __slots__ = ("steps", "reads", "out_slots", "fp", "runs", "run_steps")

  @classmethod
  def checked(cls, run: Callable[[list, list], None]) -> "StepRunner":
    """A runner of ``run`` (``_run_impls_checked``) alone, never compiled."""
    runner = cls([], [], [], False)
    runner.run_steps = run
    return runner

  def __init__(self, steps: list, reads: list, out_slots: list, fp: bool):
    self.steps, self.reads, self.out_slots, self.fp, self.runs = steps, reads, out_slots, fp, 0
    self.run_steps = self._interpreted if len(steps) <= COMPILE_MAX_STEPS else (
        _run_kernels if fp else _run_steps)

  def _interpreted(self, steps: list, env: list) -> None:
    self.runs += 1
    if self.runs >= COMPILE_AFTER_RUNS:
      self.run_steps = compiled_steps(self.steps, self.reads, self.out_slots, self.fp)
    if self.fp:
      _run_kernels(steps, env)
    else:
      _run_steps(steps, env)


def _run_impls_checked(steps: list, env: list) -> None:
  """``_run_impls`` checking every step's results for nan/inf."""
  for p, impl, params, gather, unary, outs, free in steps:
    results = impl(gather(env), **params) if unary else impl(*gather(env), **params)
    for (i, dt), o in zip(outs, results):
      if type(o) is not np.ndarray:
        o = np.asarray(o)
      env[i] = o if o.dtype is dt or o.dtype == dt else o.astype(dt)
    check_nans(p, [env[i] for i, _ in outs])
    for i in free:
      env[i] = None


def _impl_loop() -> Callable[[list, list], None]:
  """The impl loop the debug flags ask for."""
  if not eager_config.flags_ok and (config.read("jax_debug_nans")
                                   or config.read("jax_debug_infs")):
    return _run_impls_checked
  return _run_kernels


_programs: "weakref.WeakKeyDictionary[Jaxpr, Program]" = weakref.WeakKeyDictionary()


def program_of(jaxpr: Jaxpr) -> Program:
  """``jaxpr``'s program, compiled on first use."""
  program = _programs.get(jaxpr)
  if program is None:
    program = _programs[jaxpr] = Program(jaxpr)
  return program


def small_plain_steps(jaxprs: Sequence[Jaxpr], inputs: Sequence, max_bytes: int,
                      max_steps: int) -> bool:
  """Whether ``jaxprs`` (run one after another on ``inputs``) are work the
  program evaluator does faster than a compiled call: at most ``max_steps``
  equations in all, none with a sub-program or an effect, every input and
  equation result an array of at most ``max_bytes`` (tokens, refs and opaque
  types are not). jit's and pmap's tiers ask it."""
  if sum(len(j.eqns) for j in jaxprs) > max_steps:
    return False
  if any(_host_bytes(v.aval) > max_bytes for v in inputs):
    return False
  for j in jaxprs:
    for eqn in j.eqns:
      if (eqn_effects(eqn) or jaxprs_in_params(eqn.params)
          or any(_host_bytes(v.aval) > max_bytes for v in eqn.outvars)):
        return False
  return True


def _host_bytes(aval) -> float:
  shape = getattr(aval, "shape", None)
  dtype = getattr(aval, "dtype", None)
  if shape is None or dtype is None:
    return math.inf
  return math.prod(shape) * dtype.itemsize


def eval_jaxpr(jaxpr: Jaxpr, consts: Sequence[Any], *args: Any,
               on_step: Callable | None = None) -> list:
  """Evaluate ``jaxpr`` on ``consts`` and ``args``.

  Under the eval trace with concrete inputs of the jaxpr's types, each
  equation runs its primitive's impl (results are Arrays); otherwise each
  equation's primitive is bound in the current trace, so evaluating under a
  transformation transforms it. ``on_step(eqn)``, when given, runs before each
  equation is bound (the bind path is then always taken)."""
  program = program_of(jaxpr)
  if len(args) != program.n_args or len(consts) != program.n_consts:
    raise TypeError(f"eval_jaxpr: jaxpr takes {program.n_consts} constants and "
                    f"{program.n_args} arguments, got {len(consts)} and {len(args)}")
  if on_step is None and trace_state.trace is eval_trace:
    env = program.input_values(consts, args)
    if env is not None:
      return program.run_to_arrays(env, consts, args)
  return program.bind(consts, args, on_step)
