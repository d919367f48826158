"""Programs as generated Python functions (``core/program.py``'s kernel
steps, straight-line): the same kernels called on the same values in the same
order as the step interpreter calls them, with each value in a local instead
of a slot of a list and no step tuples to unpack.

* ``compiled_steps``: a ``StepRunner``'s ``run_steps(steps, env)`` (reads and
  writes the program's slots list).
* ``direct_runner``: a whole call, Arrays in and Arrays out
  (``jit``'s interpreted tier on its fast path): the slots list, its copy,
  the argument loop and the result loop are gone too.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from openjax._src.core.array import Array
from openjax._src.core.trace import FP_ERRSTATE, FP_IGNORE, eager_config

_fp_set, _fp_reset = FP_ERRSTATE.set, FP_ERRSTATE.reset


def same_value(x: np.ndarray) -> np.ndarray:
  """The kernel of a ``convert_element_type`` to the dtype its operand has
  (a weak scalar made strong): the value itself, as the impl returns it, as
  a lean step (the impl's call and result check cost ~0.5 us)."""
  return x


def _step_lines(steps: list, reads: list, names: dict, written: set,
                value: Callable[[int], str]) -> list:
  """The body lines of ``steps`` (``reads``: the slots each step reads):
  each result in a local ``v<slot>`` (added to ``written``), operands by
  ``value(slot)``, kernels and parameters added to ``names``."""
  body = []

  def checked(i: int, dt_name: str | None) -> None:
    body.append(f"if type(v{i}) is not ndarray: v{i} = asarray(v{i})")
    if dt_name is not None:
      body.append(f"if v{i}.dtype is not {dt_name} and v{i}.dtype != {dt_name}: "
                  f"v{i} = v{i}.astype({dt_name})")

  for n, ((kernel, lean, params, gather, unary, outs, free, slot), (ins, ufunc_array)) in (
      enumerate(zip(steps, reads))):
    names[f"k{n}"] = kernel
    operands = ", ".join(value(i) for i in ins)
    if lean and kernel is same_value and ins[0] in written:
      body.append(f"v{slot} = {operands}")   # an earlier step's ndarray itself
      written.add(slot)
    elif lean:
      body.append(f"v{slot} = k{n}({operands})")
      written.add(slot)
      if not ufunc_array:
        checked(slot, None)
    else:
      names[f"p{n}"] = params
      body.append(f"r = k{n}({operands}{', ' if ins else ''}**p{n})")
      for j, (i, dt) in enumerate(outs):
        names[f"d{n}_{j}"] = dt
        body.append(f"v{i} = r[{j}]")
        written.add(i)
        checked(i, f"d{n}_{j}")
      body.append("r = None")   # a dead result list must not outlive its slots
    for i in free:
      if i in written:
        body.append(f"v{i} = None")
  return body


def _names() -> dict:
  return {"ndarray": np.ndarray, "asarray": np.asarray, "fp_set": _fp_set,
          "fp_reset": _fp_reset, "FP_IGNORE": FP_IGNORE}


def _function(header: str, head: list, body: list, tail: list, fp: bool,
              names: dict) -> Callable:
  """``header``'s function: ``head``, then ``body`` (with NumPy's
  floating-point warnings off when ``fp``), then ``tail``."""
  lines = [header] + [f"  {line}" for line in head]
  if fp:
    lines += ["  token = fp_set(FP_IGNORE)", "  try:"]
    lines += [f"    {line}" for line in body] or ["    pass"]
    lines += ["  finally:", "    fp_reset(token)"]
  else:
    lines += [f"  {line}" for line in body] or ["  pass"]
  lines += [f"  {line}" for line in tail]
  exec(compile("\n".join(lines), "<openjax program>", "exec"), names)   # noqa: S102
  return names["run"]


def compiled_steps(steps: list, reads: list, out_slots: Sequence[int],
                   fp: bool) -> Callable[[list, list], None]:
  """The kernel ``steps`` (``reads``: the slots each step reads) as one
  straight-line function ``run(steps, env)`` (``_run_kernels``' signature;
  ``steps`` unused): each step's result in a local, the program's results
  stored to ``env`` at the end, large values released after their last use
  as ``_run_kernels`` releases them."""
  names = _names()
  written: set = set()
  body = _step_lines(steps, reads, names, written,
                     lambda i: f"v{i}" if i in written else f"env[{i}]")
  body += [f"env[{i}] = v{i}" for i in dict.fromkeys(out_slots) if i in written]
  return _function("def run(steps, env):", [], body, [], fp, names)


def direct_runner(steps: list, reads: list, out_slots: Sequence[int], env0: list,
                  inputs: range, out_avals: Sequence, general: Callable) -> Callable:
  """A call of a program as one generated function ``run(args) -> outs``:
  ``args`` the program's inputs (slots ``inputs``), uncommitted Arrays of its
  types; ``outs`` its results as read-only Arrays of ``out_avals``. Other
  slots read by the steps hold the constants of ``env0``. Committed or
  non-Array arguments, and calls under the debugging flags, go to
  ``general(args)``.

  Why: jit's fast path for a small interpreted program
  (``jit(lambda x, y: x * y + 1)`` on two scalars) spent ~2.5 of its ~6 us
  of Python outside the kernels building the slots list and the argument and
  result lists that this function does without."""
  names = _names()
  names.update(Array=Array, eager_config=eager_config, general=general)
  args = [f"a{j}" for j in range(len(inputs))]
  written: set = set(inputs)
  head = []
  if args:
    head.append(f"{', '.join(args)}, = args")
    bad = " or ".join(f"type({a}) is not Array or {a}._device is not None" for a in args)
    head.append(f"if {bad} or not eager_config.flags_ok: return general(args)")
    head += [f"v{i} = {a}._value" for i, a in zip(inputs, args)]
  else:
    head.append("if not eager_config.flags_ok: return general(args)")

  def value(i: int) -> str:
    if i in written:
      return f"v{i}"
    names[f"c{i}"] = env0[i]   # a constant: the program's, or a folded step's
    return f"c{i}"

  body = _step_lines(steps, reads, names, written, value)
  outs = []
  for j, (i, aval) in enumerate(zip(out_slots, out_avals)):
    names[f"o{j}"] = aval
    v = value(i)
    outs.append(f"Array({v}, o{j})")
  tail = [f"{value(i)}.setflags(write=False)" for i in dict.fromkeys(out_slots)]
  tail.append(f"return [{', '.join(outs)}]")
  return _function("def run(args):", head, body, tail, True, names)


__all__ = ["compiled_steps", "direct_runner", "same_value"]
