"""Traceback filtering hooks (``jax._src.traceback_util``'s public surface).

JAX hides its own frames from user tracebacks; libraries written against JAX
mark their API entry points with ``api_boundary`` and register their source
files with ``register_exclusion``. openjax shows every frame, so the boundary
decorator returns the function unchanged and exclusions are only recorded.
"""
from __future__ import annotations

import functools
from collections.abc import Callable

# Source paths registered for exclusion (JAX's name; libraries edit it directly).
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
  """Record ``path`` as a library source file (openjax does not filter frames)."""
  if path not in _exclude_paths:
    _exclude_paths.append(path)


def api_boundary(fun: Callable | None = None, *, repro_api_name: str | None = None):
  """Mark ``fun`` as an API entry point; usable bare or with keywords."""
  if fun is None:
    return functools.partial(api_boundary, repro_api_name=repro_api_name)
  return fun


__all__ = ["api_boundary", "register_exclusion"]
