"""The error classes users can catch (``openjax.errors``), with messages that
say what went wrong and how to fix it."""
from __future__ import annotations

_DOCS = "https://docs.jax.dev/en/latest/errors.html"


class _JAXErrorMixin:
  _error_page = _DOCS

  def __init__(self, message: str):
    name = type(self).__name__
    super().__init__(f"{message}\nSee {self._error_page}#openjax.errors.{name}")


class JAXTypeError(_JAXErrorMixin, TypeError):
  pass


class JAXIndexError(_JAXErrorMixin, IndexError):
  pass


class ConcretizationTypeError(JAXTypeError):
  """A concrete Python value was needed from a traced (abstract) value.

  Happens when Python control flow, ``int()``, ``float()`` or a shape argument
  depends on the value of an argument of a jitted function. Fix it by marking
  the argument static (``static_argnums``/``static_argnames``), or by using
  ``lax.cond``/``lax.while_loop``/``jnp.where`` for value-dependent logic.
  """

  def __init__(self, tracer, context: str = ""):
    super().__init__(
        f"Abstract tracer value encountered where concrete value is expected: "
        f"{_tracer_str(tracer)}\n{context}{_provenance(tracer)}"
        "If the value is a function argument, mark it static with "
        "`static_argnums` or `static_argnames` in jit; for value-dependent "
        "control flow use `lax.cond`, `lax.switch` or `jnp.where` instead.")


class NonConcreteBooleanIndexError(JAXIndexError):
  """A boolean mask was used to index inside a transformation (its result
  shape would depend on values). Use ``jnp.where(mask, x, fill)`` or
  ``jnp.nonzero(mask, size=...)`` instead."""

  def __init__(self, tracer):
    super().__init__(
        f"Array boolean indices must be concrete; got {_tracer_str(tracer)}\n"
        "The result shape would depend on the mask's values. Use "
        "`jnp.where(mask, x, fill_value)` to keep the shape, or "
        "`jnp.nonzero(mask, size=N)` with a static size.")


class TracerArrayConversionError(JAXTypeError):
  """A traced value was converted to a NumPy array (``np.asarray(tracer)``).
  Use ``jax.numpy`` functions inside transformed functions instead of NumPy."""

  def __init__(self, tracer):
    super().__init__(
        f"The numpy.ndarray conversion method __array__() was called on "
        f"{_tracer_str(tracer)}\n{_provenance(tracer)}"
        "This happens when a NumPy function is applied to a traced value. "
        "Use the corresponding `jax.numpy` function (`jnp.xxx`) inside "
        "jit/grad/vmap, or pass the value as a static argument.")


class TracerIntegerConversionError(JAXTypeError):
  """A traced value was used as a Python int (``int(x)``, an index into a
  list, a ``range`` bound). Mark the argument static or use ``lax`` ops."""

  def __init__(self, tracer):
    super().__init__(
        f"The __index__() method was called on {_tracer_str(tracer)}\n"
        f"{_provenance(tracer)}"
        "A traced value cannot be used as a Python integer (e.g. to index a "
        "list or as a `range` bound). Mark the argument static with "
        "`static_argnums`/`static_argnames`, or use `lax.dynamic_slice`/"
        "`lax.fori_loop` for value-dependent indexing and loops.")


class TracerBoolConversionError(ConcretizationTypeError):
  """A traced value was used in a Python ``if``/``while``/``and``/``or``.
  Use ``lax.cond``/``jnp.where`` or mark the argument static."""

  def __init__(self, tracer):
    JAXTypeError.__init__(
        self,
        f"Attempted boolean conversion of traced array with shape "
        f"{tracer.aval.str_short()}.\n{_provenance(tracer)}"
        "Python `if`, `while`, `and`, `or` and `not` need a concrete value. "
        "Use `jnp.where` or `lax.cond` for value-dependent branches, "
        "`lax.while_loop` for loops, or mark the argument static with "
        "`static_argnums`/`static_argnames` in jit.")


class UnexpectedTracerError(JAXTypeError):
  """A tracer escaped the transformation that created it (stored in a global,
  a closure or an object attribute) and was used after it ended. Return values
  from transformed functions instead of storing them as side effects."""

  def __init__(self, message: str):
    super().__init__(message)


class KeyReuseError(JAXTypeError):
  pass


def _tracer_str(tracer) -> str:
  try:
    return f"traced array with shape {tracer.aval.str_short()}"
  except Exception:  # noqa: BLE001
    return repr(tracer)


def _provenance(tracer) -> str:
  """The sentence naming which arguments of which function the value depends on."""
  try:
    fn = getattr(tracer, "_provenance", None)
    return fn() if fn is not None else ""
  except Exception:  # noqa: BLE001 - diagnostics must never mask the error
    return ""


class ShardingTypeError(Exception):
  """An operation whose result cannot be typed with the shardings of its
  operands (e.g. reshaping or slicing across a dimension split over an
  Explicit mesh axis): ``reshard`` an operand first, or pass
  ``out_sharding``."""


class JaxRuntimeError(RuntimeError):
  """An error of the runtime while a computation is dispatched or runs
  (``jax.errors.JaxRuntimeError``): its message starts with the status code,
  e.g. ``INVALID_ARGUMENT:`` or ``RESOURCE_EXHAUSTED:``."""



class InconclusiveDimensionOperation(Exception):
  """A comparison or arithmetic on symbolic dimensions has no definite result.
  openjax's shapes are always concrete, so it never raises this itself; it
  exists so that code catching JAX's error runs."""
