"""The transfer guards (``jax.transfer_guard*``): a transfer of a value from
the host (NumPy arrays, Python scalars) to a device, made implicitly by an
eager operation or a jitted call, or explicitly by ``device_put``, is
allowed, logged (``openjax._src.dispatch`` logger, WARNING) or refused
(``JaxRuntimeError``) as the levels say. Eager code calls in here only
when a guard is set (``EagerConfig.flags_ok`` is False then)."""
from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

from openjax._src.config import transfer_guard_level
from openjax._src.core.array import Array
from openjax._src.core.devices import default_device
from openjax._src.core.sharding import SingleDeviceSharding
from openjax._src.core.tracer import Tracer
from openjax._src.errors import JaxRuntimeError

logger = logging.getLogger("openjax._src.dispatch")


def transfer(level: str, direction: str, aval, explicit: bool = False) -> None:
  """Log or refuse one ``direction`` transfer ("host-to-device", ...) of a
  value of ``aval`` as the guard ``level`` says. Explicit transfers
  (``device_put``) are guarded only by the ``*_explicit`` levels."""
  if explicit and not level.endswith("_explicit"):
    return
  text = (f"{direction} transfer: aval={aval!r}, "
          f"dst_sharding={SingleDeviceSharding(default_device())!r}")
  if level.startswith("disallow"):
    raise JaxRuntimeError(f"INVALID_ARGUMENT: Disallowed {text}")
  if level.startswith("log"):
    logger.warning(text)


def guard_host_to_device(values: Sequence, avals_of, explicit: bool = False) -> None:
  """Apply the host-to-device guard to the ``values`` that are not device
  Arrays or tracers (``avals_of(x)`` gives the transferred value's aval):
  the arguments of a jitted call or of ``device_put``."""
  level = transfer_guard_level("host_to_device")
  if level == "allow":
    return
  for x in values:
    if type(x) is Array or isinstance(x, Tracer):
      continue
    transfer(level, "host-to-device", avals_of(x), explicit)


def guard_eager_operands(values: Sequence, avals_of) -> None:
  """The guard for an eager operation's operands: NumPy arrays the user
  passes (``jnp.add(np.ones(3), x)``). Scalars are not guarded: openjax's
  library functions run eagerly and pass their constants as scalars, which
  JAX makes inside its own jitted library functions (no transfer there)."""
  level = transfer_guard_level("host_to_device")
  if level == "allow":
    return
  for x in values:
    if type(x) is np.ndarray and x.ndim:
      transfer(level, "host-to-device", avals_of(x))


__all__ = ["transfer", "guard_host_to_device", "guard_eager_operands"]
