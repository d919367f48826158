"""Which tier runs a jitted function's calls once its executable is ready.

A compiled call costs a fixed ~5-7 us inside IREE's ``invoke`` (argument
lists, the VM call, the dispatch) whatever the program does. A program of a
few steps on a few numbers runs faster through the program evaluator: the
same eager kernels, ~0.3-1 us a step. ``jit(lambda x, y: x * y + 1)`` on two
scalars: 7.1 us compiled, 3.9 us interpreted (JAX: 6.2 us).

So with tiered execution, a function whose every value is small (at most
``SMALL_BYTES``), whose steps are plain primitives (no sub-programs, no
effects) and few, is timed both ways on its first calls after the executable
is ready (``CALIBRATION_CALLS`` each, alternating, the first of each not
counted; a compiled call is timed until its results are ready) and keeps the
faster tier. The results are the
program's either way: values agree with the compiled ones as the interpreted
first calls' do (DESIGN decision 12). Functions outside these limits, and
every call with tiered execution off (the suite's compiled columns, AOT),
run compiled.
"""
from __future__ import annotations

import math
import time
from typing import Sequence

from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.core import Array, ClosedJaxpr, program_of
from openjax._src.core.placement import commit, committed_device
from openjax._src.core.program import small_plain_steps
from openjax._src.core.trace import eager_config
from openjax._src.interpreters.fold_reductions import folded

#: A program qualifies when no value it holds is larger than this (bytes):
#: larger values make the compiled kernels' speed, not the call, the cost.
#: Measured on ``tanh(x * 2 + 1) * x`` (compiled / interpreted us): 256
#: float32s 19 / 15, 1000 21 / 19, 4000 27 / 24, 16000 34 / 58.
SMALL_BYTES = 16384
#: ... and it has at most this many steps (at ~0.5 us a step the interpreter
#: cannot beat a ~6 us compiled call with more).
MAX_STEPS = 24
#: Calls timed in each tier before choosing; the first of each is not
#: counted (it loads the executable, imports the arguments).
CALIBRATION_CALLS = 5
_clock = time.perf_counter   # the tiers' timer (tests replace it)
#: An interpreted program's calls before it runs as one generated function
#: (generating costs ~0.2 ms + ~20 us a step, once; a call of a two-step
#: program then takes ~2.5 us less).
DIRECT_AFTER_CALLS = 100


def _small_program(closed: ClosedJaxpr) -> bool:
  jaxpr = closed.jaxpr
  return small_plain_steps([jaxpr], (*jaxpr.constvars, *jaxpr.invars), SMALL_BYTES, MAX_STEPS)


class InterpretedExecutable:
  """``execute(args)`` as an ``Executable`` has it, by the program
  evaluator with the eager kernels (results are ready at once); after
  ``DIRECT_AFTER_CALLS`` calls, by one function generated for the program
  (``Program.direct_call``)."""
  __slots__ = ("name", "closed", "program", "run", "out_avals", "consts", "calls", "direct")

  def __init__(self, closed: ClosedJaxpr, name: str):
    self.name = name
    self.closed = folded(closed)   # as it is lowered
    self.program = program_of(self.closed.jaxpr)
    self.consts = self.closed.consts
    self.run = self.program.runner(self.consts)
    self.out_avals = self.program.out_avals
    self.calls = 0
    self.direct = None

  def execute(self, args: Sequence) -> list:
    direct = self.direct
    if direct is not None:
      return direct(args)
    self.calls += 1
    if self.calls == DIRECT_AFTER_CALLS:   # (None for a long program: not asked again)
      self.direct = self.program.direct_call(self.consts, self.out_avals, self._general)
    if eager_config.flags_ok:
      vals = []
      for x in args:
        if type(x) is not Array or x._device is not None:
          break
        vals.append(x._value)
      else:
        outs = []
        for v, aval in zip(self.run(vals), self.out_avals):
          v.setflags(write=False)
          outs.append(Array(v, aval))
        return outs
    return self._general(args)

  def _general(self, args: Sequence) -> list:
    """Committed or non-Array arguments, or the debugging flags (checked
    per step by the evaluator): the general way."""
    device = committed_device(args, self.name)
    env = self.program.input_values(self.consts, args)
    outs = self.program.run_to_arrays(env, self.consts, args)
    return outs if device is None else commit(outs, device)


class TierTrial:
  """A cache entry's runner while its first compiled-ready calls time the
  two tiers; then ``entry.runner`` becomes the faster one."""
  __slots__ = ("entry", "compiled", "interpreted", "times", "turn")

  def __init__(self, entry, compiled, interpreted: InterpretedExecutable):
    self.entry, self.compiled, self.interpreted = entry, compiled, interpreted
    self.times = ([], [])   # (interpreted, compiled) seconds
    self.turn = 0

  def execute(self, args: Sequence) -> list:
    interpreted = self.turn % 2 == 0
    self.turn += 1
    t0 = _clock()
    if interpreted:
      outs = self.interpreted.execute(args)
    else:
      outs = self.compiled.execute(args)
      for o in outs:
        o.block_until_ready()
    self.times[0 if interpreted else 1].append(_clock() - t0)
    if self.turn >= 2 * CALIBRATION_CALLS:
      faster = min(self.times[0][1:]) < min(self.times[1][1:])
      self.entry.runner = self.interpreted if faster else self.compiled
    return outs


class PendingTier:
  """A cache entry's runner on jit's fast path while its program compiles
  in the background: the program evaluator (``InterpretedExecutable``).
  Once the compile is done it leaves the fast path and returns None: that
  call goes on through jit's general path, which takes the executable and
  its runner.

  Why: a call while compiling otherwise takes the general path (flatten,
  signature, cache lookup, ``eval_jaxpr``): ``jit(lambda x, y: x * y + 1)``
  on two scalars 68-76 us a call during its compile, 10-17 us here."""
  __slots__ = ("entry", "interpreted", "fast", "key")

  def __init__(self, entry, interpreted: InterpretedExecutable, fast: dict, key):
    self.entry, self.interpreted, self.fast, self.key = entry, interpreted, fast, key

  def execute(self, args: Sequence) -> list | None:
    pending = self.entry.pending
    if pending is None or pending.done():
      hit = self.fast.get(self.key)
      if hit is not None and hit[0] is self:
        del self.fast[self.key]
      return None
    return self.interpreted.execute(args)


def pending_tier(entry, name: str, fast: dict, key):
  """A ``PendingTier`` for a cache entry whose program compiles in the
  background, or None when its steps, with the nested calls an interpreted
  call runs inlined (``inline_interpreted_calls``: tiered jits, custom
  derivatives' primals), are not all plain primitives (a loop, a branch, an
  effect, a sampler's compiled call: those calls keep ``eval_jaxpr``)."""
  closed = inline_interpreted_calls(entry.closed_jaxpr)
  jaxpr = closed.jaxpr
  if not small_plain_steps([jaxpr], (*jaxpr.constvars, *jaxpr.invars), math.inf, math.inf):
    return None
  return PendingTier(entry, InterpretedExecutable(closed, name), fast, key)


def runner_for(entry, compiled, name: str, may_interpret: bool):
  """The runner of a cache entry whose executable ``compiled`` is ready
  (tiered execution): the executable, or a ``TierTrial`` for a small
  program (donating functions always run compiled)."""
  if not may_interpret or not _small_program(entry.closed_jaxpr):
    return compiled
  return TierTrial(entry, compiled, InterpretedExecutable(entry.closed_jaxpr, name))


__all__ = ["InterpretedExecutable", "TierTrial", "PendingTier", "pending_tier", "runner_for"]
