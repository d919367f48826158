"""``jax.debug.breakpoint``: an interactive debugger (``(jdb)``) at a point
of a traced or compiled program, over the Python frames that traced it,
with the values the program computed there.

At trace time the frames above the call are captured (openjax's own frames
left out with ``filter_frames``); every tracer among their local variables
becomes an operand of a ``debug_callback``, so when the program runs the
callback gets the concrete values and the debugger shows each frame's
locals with those values in place of the tracers. Eager calls open the
debugger at once.
"""
from __future__ import annotations

import cmd
import inspect
import os
import pprint
import sys
import threading
import traceback
import warnings
from typing import Any

from openjax._src import tree_util
from openjax._src.control.callbacks import debug_callback
from openjax._src.core import Tracer

_OPENJAX_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def is_user_frame(filename: str) -> bool:
  """Whether a frame's file is user code (not openjax's own)."""
  return not os.path.abspath(filename).startswith(_OPENJAX_DIR + os.sep)


class DebuggerFrame:
  """One Python frame as the debugger shows it: file, line, source and
  local variables."""
  __slots__ = ("filename", "locals", "globals", "source", "lineno", "offset")

  def __init__(self, filename, locals_, globals_, source, lineno, offset):
    self.filename = filename
    self.locals = locals_
    self.globals = globals_
    self.source = source
    self.lineno = lineno
    self.offset = offset

  @classmethod
  def from_frame(cls, frame) -> "DebuggerFrame":
    lineno = frame.f_lineno
    try:
      lines, start = inspect.getsourcelines(frame)
      source = "".join(lines).split("\n")
      # ``start`` is 1-based, or 0 for a whole module.
      offset = lineno - max(start, 1)
      if offset >= len(source):
        source, offset = [], None
    except (OSError, TypeError):
      source, offset = [], None
    return cls(frame.f_code.co_filename, dict(frame.f_locals), frame.f_globals, source,
               lineno, offset)


def _capture_frames(frame, filter_frames: bool, num_frames: int | None) -> list[DebuggerFrame]:
  frames = []
  while frame is not None:
    if not filter_frames or is_user_frame(frame.f_code.co_filename):
      frames.append(DebuggerFrame.from_frame(frame))
    frame = frame.f_back
  return frames if num_frames is None else frames[:num_frames]


def _split_tracers(frames: list[DebuggerFrame]):
  """(tracers among the frames' locals, a function rebuilding the frames
  from their values). Locals that do not flatten stay as they are."""
  tracers = []
  plans = []   # per frame: [(name, treedef, [leaf or index into tracers])]
  for fr in frames:
    plan = []
    for name, value in fr.locals.items():
      try:
        with warnings.catch_warnings():   # locals of any type: no pytree warnings
          warnings.simplefilter("ignore")
          leaves, tree = tree_util.tree_flatten(value)
      except Exception:  # noqa: BLE001 - an object that cannot flatten is shown as is
        plan.append((name, None, value))
        continue
      if not any(isinstance(leaf, Tracer) for leaf in leaves):
        plan.append((name, None, value))
        continue
      slots = []
      for leaf in leaves:
        if isinstance(leaf, Tracer):
          slots.append(("dyn", len(tracers)))
          tracers.append(leaf)
        else:
          slots.append(("static", leaf))
      plan.append((name, tree, slots))
    plans.append(plan)

  def rebuild(values) -> list[DebuggerFrame]:
    out = []
    for fr, plan in zip(frames, plans):
      locals_ = {}
      for name, tree, entry in plan:
        if tree is None:
          locals_[name] = entry
        else:
          leaves = [values[i] if kind == "dyn" else i for kind, i in entry]
          locals_[name] = tree_util.tree_unflatten(tree, leaves)
      out.append(DebuggerFrame(fr.filename, locals_, fr.globals, fr.source, fr.lineno,
                               fr.offset))
    return out
  return tracers, rebuild


class TextDebugger(cmd.Cmd):
  """The ``(jdb)`` prompt: evaluate expressions in a frame, move between
  frames, list source, continue or quit."""
  prompt = "(jdb) "

  def __init__(self, frames: list[DebuggerFrame], stdin=None, stdout=None):
    super().__init__(stdin=stdin, stdout=stdout)
    self.use_rawinput = stdin is None
    self.frames = frames
    self.frame_index = 0
    self.intro = "Entering jdb:"

  def _write(self, text: str) -> None:
    print(text, file=self.stdout)

  def _eval(self, expr: str):
    frame = self.frames[self.frame_index]
    env = dict(frame.globals)
    env.update(frame.locals)
    return eval(expr, {}, env)  # noqa: S307 - the user's own debugger input

  def _show_error(self) -> None:
    kind, value = sys.exc_info()[:2]
    self._write("*** " + traceback.format_exception_only(kind, value)[-1].strip())

  def default(self, line):
    self.do_p(line)

  def emptyline(self):
    return False

  def do_p(self, arg):
    """p expression: print the value of an expression in the current frame."""
    try:
      self._write(repr(self._eval(arg)))
    except Exception:  # noqa: BLE001 - reported at the prompt
      self._show_error()

  def do_pp(self, arg):
    """pp expression: pretty-print the value of an expression."""
    try:
      self._write(pprint.pformat(self._eval(arg)))
    except Exception:  # noqa: BLE001 - reported at the prompt
      self._show_error()

  def _context(self, around: int = 2) -> None:
    frame = self.frames[self.frame_index]
    out = [f"> {frame.filename}({frame.lineno})"]
    if frame.offset is not None:
      for i, line in enumerate(frame.source):
        if frame.offset - 1 - around <= i <= frame.offset + around:
          out.append(("->  " if i == frame.offset else "    ") + line)
    self._write("\n".join(out))

  def do_up(self, arg):
    """u(p): move to the calling frame."""
    if self.frame_index == len(self.frames) - 1:
      self._write("At topmost frame.")
    else:
      self.frame_index += 1
    self._context()
  do_u = do_up

  def do_down(self, arg):
    """d(own): move to the called frame."""
    if self.frame_index == 0:
      self._write("At bottommost frame.")
    else:
      self.frame_index -= 1
    self._context()
  do_d = do_down

  def do_list(self, arg):
    """l(ist): show the source around the current line."""
    self._context(around=5)
  do_l = do_list

  def do_where(self, arg):
    """w(here): print the stack, most recent frame last ('bt' too)."""
    out = ["Traceback:"]
    for frame in reversed(self.frames):
      out.append(f'  File "{frame.filename}", line {frame.lineno}')
      out.append("    " + (frame.source[frame.offset].strip() if frame.offset is not None
                           else "<no source>"))
    self._write("\n".join(out))
  do_w = do_bt = do_where

  def do_continue(self, arg):
    """c(ont(inue)): leave the debugger; the program goes on."""
    return True
  do_c = do_cont = do_continue

  def do_quit(self, arg):
    """q(uit)/exit: leave the debugger and exit the program."""
    sys.exit(0)
  do_q = do_exit = do_EOF = do_quit


_debugger_lock = threading.Lock()


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None,
               **kwargs: Any):
  """Stop at this point of the program in an interactive debugger
  (``(jdb)`` prompt: ``p expr``, ``pp``, ``u``/``d``, ``l``, ``w``, ``c``,
  ``q``) that shows the local variables of the frames that traced it with
  the values computed there; eager, under ``jit`` (compiled programs call
  it while they run), ``vmap`` (once per example) and ``grad``.
  ``num_frames`` limits the frames shown; ``filter_frames=False`` keeps
  openjax's own; ``token`` (a pytree of arrays) is returned unchanged and
  the breakpoint runs once it is computed."""
  if backend not in (None, "cli"):
    raise ValueError(f"jax.debug.breakpoint: unknown debugger backend {backend!r}; openjax "
                     "has the 'cli' debugger")
  if token is not None and ordered:
    raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
  frames = _capture_frames(sys._getframe(1), filter_frames, num_frames)
  tracers, rebuild = _split_tracers(frames)
  token_leaves = tree_util.tree_leaves(token) if token is not None else []

  def _breakpoint_callback(*values):
    with _debugger_lock:   # programs on several threads stop one at a time
      TextDebugger(rebuild(values[len(token_leaves):]), **kwargs).cmdloop()

  debug_callback(_breakpoint_callback, *token_leaves, *tracers, ordered=ordered)
  return token


__all__ = ["breakpoint", "DebuggerFrame", "TextDebugger", "is_user_frame"]
