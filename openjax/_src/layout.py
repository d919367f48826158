"""``jax.experimental.layout``: ``Layout`` (the order of an array's dimensions
in memory, major to minor, with optional tiling) and ``Format`` (a layout with
a sharding). openjax's arrays are always row-major and untiled; these
descriptors let programs and libraries that pass them around run."""
from __future__ import annotations


class _AutoLayout:
  """``Layout.AUTO``: let the compiler choose."""

  def __repr__(self):
    return "AUTO"


class Layout:
  """Dimension order in memory (``major_to_minor``), tiling and sub-byte size."""
  __slots__ = ("major_to_minor", "tiling", "sub_byte_element_size_in_bits")
  AUTO = _AutoLayout()

  def __init__(self, major_to_minor: tuple[int, ...],
               tiling: tuple[tuple[int, ...], ...] | None = None,
               sub_byte_element_size_in_bits: int = 0):
    self.major_to_minor = tuple(major_to_minor)
    self.tiling = None if tiling is None else tuple(map(tuple, tiling))
    self.sub_byte_element_size_in_bits = sub_byte_element_size_in_bits

  def __repr__(self):
    return (f"Layout(major_to_minor={self.major_to_minor}, tiling={self.tiling}, "
            f"sub_byte_element_size_in_bits={self.sub_byte_element_size_in_bits})")

  def __eq__(self, other):
    return isinstance(other, Layout) and (
        (self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits)
        == (other.major_to_minor, other.tiling, other.sub_byte_element_size_in_bits))

  def __hash__(self):
    return hash((self.major_to_minor, self.tiling, self.sub_byte_element_size_in_bits))


class Format:
  """A layout (``None``, ``Layout.AUTO`` or a ``Layout``) with a sharding."""
  __slots__ = ("layout", "sharding")

  def __init__(self, layout=None, sharding=None):
    if isinstance(layout, Layout) and sharding is None:
      raise ValueError(
          "Sharding has to be concrete when layout is of type "
          f"{type(layout)}. Please pass a `jax.sharding.NamedSharding` or "
          "`jax.sharding.SingleDeviceSharding` to the sharding argument. Got "
          f"sharding {sharding}")
    if not isinstance(layout, (Layout, type(None), _AutoLayout)):
      raise TypeError(
          "Invalid value received for the layout argument. Expected values are `None`, "
          f"`Layout.AUTO` or an instance of `Layout`. Got {layout} of type {type(layout)}")
    self.layout = layout
    self.sharding = sharding

  def __repr__(self):
    return f"Format(layout={self.layout}, sharding={self.sharding})"

  def __eq__(self, other):
    return isinstance(other, Format) and (self.layout, self.sharding) == (
        other.layout, other.sharding)

  def __hash__(self):
    return hash((self.layout, self.sharding))


__all__ = ["Format", "Layout"]
