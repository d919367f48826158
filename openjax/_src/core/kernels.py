"""Which float kernels evaluate exp, log, log1p and pow.

openjax's own by default (NumPy's eagerly, IREE's or ours when compiled:
fast, within an ulp or two of JAX). ``jax.random``'s samplers promise JAX's
bits, so their bodies run with ``xla_kernels`` set: the impls and lowerings
of those primitives then replicate XLA:CPU's kernels op for op
(``primitives/_xla_numerics``, ``_xla_lowering``), which costs some speed.
A context variable, so a jit inside a sampler inherits it while it is
traced, interpreted or lowered in the same thread.
"""
from __future__ import annotations

import contextlib
from contextvars import ContextVar

xla_kernels: ContextVar[bool] = ContextVar("openjax_xla_kernels", default=False)


@contextlib.contextmanager
def use_xla_kernels(on: bool = True):
  """Within the block, evaluate and lower with XLA:CPU's kernels if ``on``
  (``on=False`` leaves the current choice alone)."""
  if not on:
    yield
    return
  token = xla_kernels.set(True)
  try:
    yield
  finally:
    xla_kernels.reset(token)
