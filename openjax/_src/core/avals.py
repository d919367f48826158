"""Abstract values: what tracing knows about an array (shape, dtype, weak type,
for arrays split over Explicit mesh axes their sharding and, inside
``shard_map``, the manual mesh axes they vary over)."""
from __future__ import annotations

import contextlib
import math
import threading

import numpy as np

from openjax._src import dtypes
from openjax._src.core.mesh import get_abstract_mesh
from openjax._src.core.sharding import shape_sharding_str

_NO_AXES = frozenset()


class ManualAxisType:
  """JAX's ``typeof(x).manual_axis_type``: the manual mesh axes a value
  inside ``shard_map`` varies over (``varying``; a value whose type leaves
  an axis out is the same on every device along it). ``unreduced`` and
  ``reduced`` are always empty here (openjax has no unreduced types)."""
  __slots__ = ("varying", "unreduced", "reduced")

  def __init__(self, varying=_NO_AXES):
    self.varying = frozenset(varying)
    self.unreduced = _NO_AXES
    self.reduced = _NO_AXES

  @property
  def empty(self) -> bool:
    return not self.varying

  def __eq__(self, other):
    return type(other) is ManualAxisType and self.varying == other.varying

  def __hash__(self):
    return hash(self.varying)

  def __repr__(self):
    return (f"ManualAxisType(varying={set(self.varying) or 'frozenset()'}, "
            "unreduced=frozenset(), reduced=frozenset())")


class _AxisOrder(threading.local):
  def __init__(self):
    self.names: tuple = ()


_axis_order = _AxisOrder()


@contextlib.contextmanager
def manual_axis_order(names):
  """The mesh axis order varying axes are named in while a ``shard_map``
  body runs (JAX orders them by its context mesh)."""
  previous = _axis_order.names
  _axis_order.names = tuple(names)
  try:
    yield
  finally:
    _axis_order.names = previous


def ordered_axes(names) -> tuple:
  """``names`` in the running shard_map's (else the context mesh's) axis
  order, as JAX prints and binds them; other names after them sorted."""
  mesh_names = _axis_order.names or get_abstract_mesh().axis_names
  first = [a for a in mesh_names if a in names]
  return tuple(first) + tuple(sorted((a for a in names if a not in mesh_names), key=str))


def vma_str(vma) -> str:
  """``{V:i}`` / ``{V:(i,j)}``: the varying manual axes as a type prints
  them ("" for none)."""
  if not vma:
    return ""
  names = [str(a) for a in ordered_axes(vma)]
  shown = names[0] if len(names) == 1 else f"({','.join(names)})"
  return f"{{V:{shown}}}"


class AbstractValue:
  """The base of abstract values (JAX's ``core.AbstractValue``), which
  libraries subclass for their own types."""
  __slots__ = ()


class ShapedArray(AbstractValue):
  """The abstract value of an array: its shape, dtype, weak type and sharding.

  ``sharding`` is None, or a NamedSharding over an AbstractMesh naming the
  Explicit mesh axes each dimension is split over (``core/sharding.py``'s
  ``aval_sharding``). ``str_short()`` gives JAX's compact form, e.g.
  ``f32[3,4]``, ``f32[8@x,4]``, ``f32[3]{V:i}``.

  ``vma``: the manual mesh axes the value varies over inside a
  ``shard_map`` with ``check_vma`` (JAX's varying manual axes). It is part
  of the printed type but not of equality or hashing: staging recomputes it
  for every equation (``interpreters/staging.py``), while rules that build
  avals from shapes alone need not carry it.
  """
  __slots__ = ("shape", "dtype", "weak_type", "sharding", "vma", "_hash")
  array_abstraction_level = 1

  def __init__(self, shape, dtype, weak_type: bool = False, sharding=None, vma=_NO_AXES):
    self.shape = tuple(int(d) for d in shape)
    self.dtype = np.dtype(dtype)
    self.weak_type = bool(weak_type)
    self.sharding = sharding
    self.vma = vma if type(vma) is frozenset else frozenset(vma)
    self._hash = None

  @property
  def manual_axis_type(self) -> ManualAxisType:
    return ManualAxisType(self.vma)

  mat = manual_axis_type

  def with_vma(self, vma) -> "ShapedArray":
    vma = frozenset(vma)
    if vma == self.vma or type(self) is not ShapedArray:
      return self   # (kinds of value built on ShapedArray, such as tokens, carry none)
    return ShapedArray(self.shape, self.dtype, self.weak_type, self.sharding, vma)

  @property
  def ndim(self) -> int:
    return len(self.shape)

  @property
  def size(self) -> int:
    # math.prod: 0.1 us; np.prod of a shape tuple took 3.7 us (every eager
    # kernel and wrapper asking an aval's size paid it).
    return int(math.prod(self.shape))

  def update(self, shape=None, dtype=None, weak_type=None, sharding=None,
             vma=None) -> "ShapedArray":
    # The sharding describes the dimensions: a new shape (even an equal one,
    # as a square transpose gives) drops it unless one is given.
    if sharding is None and shape is None:
      sharding = self.sharding
    return ShapedArray(self.shape if shape is None else shape,
                       self.dtype if dtype is None else dtype,
                       self.weak_type if weak_type is None else weak_type, sharding,
                       self.vma if vma is None else vma)

  def strip_weak_type(self) -> "ShapedArray":
    return (self if not self.weak_type
            else ShapedArray(self.shape, self.dtype, False, self.sharding, self.vma))

  def __eq__(self, other):
    return (type(other) is ShapedArray and self.shape == other.shape
            and self.dtype == other.dtype and self.weak_type == other.weak_type
            and (self.sharding is other.sharding or self.sharding == other.sharding))

  def __hash__(self):
    h = self._hash
    if h is None:
      s = self.sharding
      h = self._hash = hash((self.shape, self.dtype, self.weak_type) if s is None
                            else (self.shape, self.dtype, self.weak_type, s))
    return h

  def str_short(self, short_dtypes: bool = True) -> str:
    dt = dtypes.short_dtype_name(self.dtype) if short_dtypes else self.dtype.name
    vma = vma_str(self.vma) if self.vma else ""
    if self.sharding is not None:
      return f"{dt}[{shape_sharding_str(self.shape, self.sharding)}]{vma}"
    return f"{dt}[{','.join(str(d) for d in self.shape)}]{vma}"

  def __repr__(self):
    wt = ", weak_type=True" if self.weak_type else ""
    return f"ShapedArray({self.str_short(short_dtypes=False)}{wt})"

  def __str__(self):
    # JAX prints a type as ``float32[3,4]``, weak types with a leading ``~``.
    return ("~" if self.weak_type else "") + self.str_short(short_dtypes=False)


class AbstractToken(ShapedArray):
  """The type of tokens (``lax.create_token``, ``lax.after_all``): values that
  order side effects and carry no data. Jaxprs print it ``Tok``. IREE cannot
  pass ``!stablehlo.token`` through a function or legalise ``after_all``, so
  a token is stored, traced and lowered as an empty boolean array (``bool[0]``):
  every layer that moves arrays moves tokens without a case of its own."""
  __slots__ = ()

  def __init__(self):
    super().__init__((0,), np.bool_)

  def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
    return self if shape in (None, (0,)) and dtype in (None, np.bool_) else super().update(
        shape, dtype, weak_type, sharding)

  def __eq__(self, other):
    return type(other) is AbstractToken

  def __hash__(self):
    return hash(AbstractToken)

  def str_short(self, short_dtypes: bool = True) -> str:
    return "Tok"

  def __repr__(self):
    return "AbstractToken()"

  def __str__(self):
    return "Tok"


abstract_token = AbstractToken()


class AvalQueries:
  """Shape/dtype queries answered from ``self.aval``: shared by concrete
  Arrays and tracers (they are static, so always allowed while tracing)."""
  __slots__ = ()

  @property
  def shape(self):
    return self.aval.shape

  @property
  def dtype(self):
    return self.aval.dtype

  @property
  def ndim(self):
    return len(self.aval.shape)

  @property
  def size(self):
    return self.aval.size

  @property
  def weak_type(self):
    return self.aval.weak_type

  def __len__(self):
    if not self.aval.shape:
      raise TypeError("len() of unsized object")
    return self.aval.shape[0]

  def __iter__(self):
    if not self.aval.shape:
      raise TypeError("iteration over a 0-d array")
    return (self[i] for i in range(self.aval.shape[0]))


_new_aval = ShapedArray.__new__
_AVALS: dict = {}


def shaped_array(shape: tuple, dtype: np.dtype, weak_type: bool) -> ShapedArray:
  """``ShapedArray(shape, dtype, weak_type)`` for an already-canonical tuple
  of ints and ``np.dtype``, shared through a cache (the constructor's checks
  cost more than a whole eager operation)."""
  key = (shape, dtype, weak_type)
  aval = _AVALS.get(key)
  if aval is None:
    aval = _new_aval(ShapedArray)
    aval.shape, aval.dtype, aval.weak_type, aval._hash = shape, dtype, weak_type, None
    aval.sharding = None
    aval.vma = _NO_AXES
    if len(_AVALS) >= 10_000:
      _AVALS.clear()
    _AVALS[key] = aval
  return aval


def shaped_array_of(value) -> ShapedArray:
  """The abstract value of a concrete value (NumPy array, scalar, Array)."""
  aval = getattr(value, "aval", None)
  if aval is not None:
    return aval
  if type(value) in dtypes.python_scalar_dtypes:
    return ShapedArray((), dtypes.dtype(value), weak_type=type(value) is not bool)
  arr = np.asarray(value)
  return ShapedArray(arr.shape, dtypes.canonicalize_dtype(arr.dtype), False)


def str_short_of(value) -> str:
  """``f32[3,4]`` for any array-like, for error messages."""
  try:
    return shaped_array_of(value).str_short()
  except Exception:  # noqa: BLE001 - message helper must never fail
    return type(value).__name__


def typematch(a: ShapedArray, b: ShapedArray) -> bool:
  """Equal types up to weak typing (JAX's ``core.typematch``)."""
  return a.shape == b.shape and a.dtype == b.dtype
