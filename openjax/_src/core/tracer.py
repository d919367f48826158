"""``Trace`` and ``Tracer``: the interpreter interface and the value that
stands for an array while a function is transformed.

They sit apart from ``trace`` (the eval trace and the current-trace context)
because ``Array`` (``core/array.py``) counts tracers as virtual instances of
itself, and the eval trace in turn builds Arrays.
"""
from __future__ import annotations

import numpy as np

from openjax._src import dtypes
from openjax._src.core.avals import AvalQueries, ShapedArray
from openjax._src.errors import (
    ConcretizationTypeError, TracerArrayConversionError, TracerBoolConversionError,
    TracerIntegerConversionError)


class Trace:
  """An interpreter for primitives. Subclasses implement ``process_primitive``;
  higher-order primitives may add ``process_<name>`` hooks later."""

  def __init__(self):
    self.is_valid = True

  def process_primitive(self, primitive, args, params) -> list:
    raise NotImplementedError

  def invalidate(self) -> None:
    self.is_valid = False

  def __repr__(self):
    return f"{type(self).__name__}"


class Tracer(AvalQueries):
  """A value that stands for an array while a function is being transformed.

  It carries its trace and its abstract value (``aval``). Python control flow
  on a tracer raises the ``openjax.errors`` class that names the fix.
  """
  __slots__ = ("_trace",)
  __array_priority__ = 1000

  @property
  def aval(self) -> ShapedArray:
    raise NotImplementedError

  def to_concrete_value(self):
    """The concrete NumPy value when this tracer is known to be constant."""
    return None

  @property
  def sharding(self):
    # Where a traced value will lie is not known while tracing; its type
    # says how it is split (JAX's error and advice).
    raise AttributeError(
        "The 'sharding' attribute is not available on traced array with shape "
        f"{self.aval.str_short(short_dtypes=False)}. To query sharding information on "
        "tracers, use `jax.typeof(x)`.")

  # ---- conversions to Python values need concreteness ----
  def __bool__(self):
    val = self.to_concrete_value()
    if val is None:
      raise TracerBoolConversionError(self)
    return bool(val)

  def __index__(self):
    val = self.to_concrete_value()
    if val is None or not dtypes.issubdtype(self.dtype, np.integer):
      raise TracerIntegerConversionError(self)
    return int(val)

  def __int__(self):
    val = self.to_concrete_value()
    if val is None:
      raise ConcretizationTypeError(
          self, "The problem arose with the `int` function. ")
    return int(val)

  def __float__(self):
    val = self.to_concrete_value()
    if val is None:
      raise ConcretizationTypeError(
          self, "The problem arose with the `float` function. ")
    return float(val)

  def __complex__(self):
    val = self.to_concrete_value()
    if val is None:
      raise ConcretizationTypeError(
          self, "The problem arose with the `complex` function. ")
    return complex(val)

  def __array__(self, dtype=None, copy=None):
    # Like JAX: even a tracer with a known value is not silently converted.
    raise TracerArrayConversionError(self)

  def item(self, *args):
    val = self.to_concrete_value()
    if val is None:
      raise ConcretizationTypeError(
          self, "The problem arose with the `item` method. ")
    return np.asarray(val).item(*args)

  def tolist(self):
    val = self.to_concrete_value()
    if val is None:
      raise ConcretizationTypeError(
          self, "The problem arose with the `tolist` method. ")
    return np.asarray(val).tolist()

  def __hash__(self):
    raise TypeError(f"unhashable type: {type(self).__name__} (traced arrays are "
                    "unhashable; pass hashable values as static arguments)")

  def __setitem__(self, idx, value):
    raise TypeError(
        f"'{type(self).__name__}' object does not support item assignment. JAX "
        "arrays are immutable. Instead of ``x[idx] = y``, use "
        "``x = x.at[idx].set(y)`` or another .at[] method: "
        "https://docs.jax.dev/en/latest/_autosummary/jax.numpy.ndarray.at.html")

  def __repr__(self):
    return f"{type(self).__name__}<{self.aval.str_short(short_dtypes=False)}>"

  def __reduce__(self):
    raise TypeError("tracers cannot be pickled")

  def _provenance(self) -> str:
    return ""
