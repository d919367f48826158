"""``jax.debug.log`` and ``jax.debug.inspect_array_sharding``."""
from __future__ import annotations

import logging
import sys
from typing import Callable

from openjax._src.control.callbacks import debug_print
from openjax._src.core import Tracer, default_device
from openjax._src.core.sharding import SingleDeviceSharding
from openjax._src.debug.breakpoint import is_user_frame

#: The logger ``jax.debug.log`` writes to (at level INFO).
logger = logging.getLogger("openjax._src.debugging")


def _user_record(level: int) -> logging.LogRecord:
  """A log record naming the user's file and line that called us."""
  frame = sys._getframe(1)
  while frame is not None and not is_user_frame(frame.f_code.co_filename):
    frame = frame.f_back
  filename, lineno = ("(unknown file)", 0) if frame is None else (
      frame.f_code.co_filename, frame.f_lineno)
  return logger.makeRecord(logger.name, level, filename, lineno, "", (), None)


def log(fmt: str, *args, ordered: bool = False, partitioned: bool = False,
        skip_format_check: bool = False, **kwargs) -> None:
  """``jax.debug.print`` that writes a log record (level INFO, logger
  ``openjax._src.debugging``, the caller's file and line) instead of
  printing to stdout."""
  debug_print(ordered=ordered, partitioned=partitioned, skip_format_check=skip_format_check,
              _logging_record=_user_record(logging.INFO))(fmt, *args, **kwargs)


def inspect_array_sharding(value, *, callback: Callable) -> None:
  """Call ``callback`` with the sharding of ``value``: at once for a
  concrete Array, at trace time for a traced value (the sharding the
  compiled program gives it; a jitted program runs on one device)."""
  if isinstance(value, Tracer):
    callback(SingleDeviceSharding(default_device()))
  else:
    callback(value.sharding)


__all__ = ["log", "inspect_array_sharding", "logger"]
