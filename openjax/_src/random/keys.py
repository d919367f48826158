"""PRNG keys: legacy ``uint32[..., 2]`` key data (``PRNGKey``) and typed key
arrays (``key``), with JAX 0.10's key operations.

A typed key array is a :class:`PRNGKeyArray`: a pytree node over its
``uint32[*shape, 2]`` key data, so it passes through ``jit``, ``vmap`` and
``grad`` as that data (jaxprs show the data, ``u32[..., 2]``, where JAX shows
``key<fry>[...]``). Its ``shape`` leaves out the trailing 2 and its dtype
prints ``key<fry>``. Samplers accept either form and work on the data.
"""
from __future__ import annotations

import math
import operator
import warnings
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.config import config
from openjax._src.core import Array, Tracer, concrete_or_error
from openjax._src.core.sharding import NamedSharding, PartitionSpec
from openjax._src.numpy.creation import asarray
from openjax._src.numpy.reductions import all as _all, any as _any
from openjax._src.numpy.util import is_arraylike
from openjax._src.primitives.random_bits.random_bits import (
    KEY_SHAPE, random_bits, random_clone, random_fold_in, random_seed, random_split)
from openjax._src.random.out_sharding import lays_out_result
from openjax._src.tree_util import register_pytree_node

__all__ = ["PRNGKeyArray", "KeyTy", "PRNGImpl", "PRNGSpec", "PRNGKey", "key", "key_data",
           "wrap_key_data", "key_impl", "key_dtype", "split", "fold_in", "clone", "bits",
           "default_prng_impl", "resolve_prng_impl", "check_prng_key", "canonicalize_shape"]


class PRNGImpl:
  """The threefry2x32 implementation (the only one openjax provides)."""
  key_shape = KEY_SHAPE
  name = "threefry2x32"
  tag = "fry"

  def __repr__(self):
    return f"PRNGImpl({self.name})"

  def __str__(self):
    return self.tag


_THREEFRY = PRNGImpl()
_IMPLS = {_THREEFRY.name: _THREEFRY}


class PRNGSpec:
  """Specifies a PRNG key implementation (``jax.random.PRNGSpec``)."""
  __slots__ = ("_impl",)

  def __init__(self, impl):
    self._impl = impl

  def __repr__(self):
    return f"PRNGSpec({self._impl.name!r})"

  def __str__(self):
    return str(self._impl)

  def __hash__(self):
    return hash(self._impl.tag)

  def __eq__(self, other):
    return isinstance(other, PRNGSpec) and self._impl is other._impl


class KeyTy:
  """The element type of typed key arrays: ``key<fry>`` (an extended dtype:
  ``jnp.issubdtype(KeyTy, jax.dtypes.prng_key)``)."""
  type = dtypes.prng_key

  def __init__(self, impl: PRNGImpl):
    self._impl = impl

  @property
  def name(self) -> str:
    return f"key<{self._impl.tag}>"

  @property
  def itemsize(self) -> int:
    return 4 * int(np.prod(self._impl.key_shape))

  def __repr__(self):
    return self.name

  __str__ = __repr__

  def __eq__(self, other):
    return type(other) is KeyTy and self._impl is other._impl

  def __hash__(self):
    return hash((KeyTy, self._impl.tag))


def default_prng_impl() -> PRNGImpl:
  """The default PRNG implementation (threefry2x32)."""
  return _THREEFRY


def resolve_prng_impl(impl_spec) -> PRNGImpl:
  if impl_spec is None:
    return _THREEFRY
  if isinstance(impl_spec, PRNGImpl):
    return impl_spec
  if isinstance(impl_spec, PRNGSpec):
    return impl_spec._impl
  if isinstance(impl_spec, KeyTy):
    return impl_spec._impl
  if type(impl_spec) is str:
    if impl_spec in _IMPLS:
      return _IMPLS[impl_spec]
    keys_fmt = ", ".join(f'"{s}"' for s in _IMPLS)
    raise ValueError(f'unrecognized PRNG implementation "{impl_spec}". '
                     f"Did you mean one of: {keys_fmt}?")
  raise TypeError(f"unrecognized type {type(impl_spec)} for specifying PRNG implementation.")


def key_dtype(impl_spec=None) -> KeyTy:
  """The dtype of typed keys of a PRNG implementation (``key<fry>``)."""
  return KeyTy(resolve_prng_impl(impl_spec))


# ------------------------------------------------------------ key arrays
def _normalize_index(idx):
  """An index into a key array's leading dims, as one into its data."""
  parts = idx if isinstance(idx, tuple) else (idx,)
  if any(p is Ellipsis for p in parts):
    return parts + (slice(None),)
  return idx


class KeyArrayType:
  """The type of a typed key array (``jax.typeof(key)``): ``key<fry>[]``."""
  __slots__ = ("shape", "dtype", "weak_type")

  def __init__(self, shape: tuple[int, ...], dtype: "KeyTy"):
    self.shape, self.dtype, self.weak_type = tuple(shape), dtype, False

  @property
  def ndim(self) -> int:
    return len(self.shape)

  def __eq__(self, other):
    return (type(other) is KeyArrayType and self.shape == other.shape
            and self.dtype == other.dtype)

  def __hash__(self):
    return hash((KeyArrayType, self.shape, str(self.dtype)))

  def str_short(self, short_dtypes: bool = True) -> str:
    return f"{self.dtype}[{','.join(map(str, self.shape))}]"

  __str__ = str_short

  def __repr__(self):
    return f"ShapedArray({self.str_short()})"


class PRNGKeyArray:
  """An array of typed PRNG keys (dtype ``key<fry>``) over ``uint32`` data
  whose trailing dimension holds each key's two words."""
  __slots__ = ("_base_array",)
  __array_priority__ = 100
  __hash__ = None

  def __init__(self, key_data: Any):
    self._base_array = key_data

  # ---- array-like attributes ----
  @property
  def shape(self) -> tuple[int, ...]:
    return tuple(np.shape(self._base_array)[:-1])

  @property
  def ndim(self) -> int:
    return len(self.shape)

  @property
  def size(self) -> int:
    return math.prod(self.shape)

  @property
  def dtype(self) -> KeyTy:
    return KeyTy(_THREEFRY)

  @property
  def itemsize(self) -> int:
    return self.dtype.itemsize

  def _typeof(self) -> KeyArrayType:
    return KeyArrayType(self.shape, self.dtype)

  @property
  def nbytes(self) -> int:
    return self.itemsize * self.size

  @property
  def T(self) -> "PRNGKeyArray":
    return self.transpose()

  def _is_scalar(self) -> bool:
    return self.ndim == 0

  def __len__(self):
    if self._is_scalar():
      raise TypeError("len() of unsized object")
    return len(self._base_array)

  def __iter__(self):
    if self._is_scalar():
      raise TypeError("iteration over a 0-d key array")
    return (PRNGKeyArray(self._base_array[i]) for i in range(self.shape[0]))

  def __getitem__(self, idx) -> "PRNGKeyArray":
    parts = idx if isinstance(idx, tuple) else (idx,)
    n = sum(1 for p in parts if p is not None and p is not Ellipsis)
    if n > self.ndim:
      raise IndexError(f"Too many indices: array is {self.ndim}-dimensional, but {n} "
                       "were indexed")
    return PRNGKeyArray(self._base_array[_normalize_index(idx)])

  def __bool__(self):
    raise TypeError("key array cannot be converted to boolean.")

  def __array__(self, dtype=None, copy=None):
    raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy array. "
                    "Use jax.random.key_data(arr) if you wish to extract the underlying "
                    "integer array.")

  def __repr__(self):
    return f"Array({self.shape}, dtype={self.dtype.name}) overlaying:\n{self._base_array}"

  __str__ = __repr__

  def __eq__(self, other):
    if not isinstance(other, PRNGKeyArray):
      return NotImplemented
    return _all(lax.eq(self._base_array, other._base_array), axis=-1)

  def __ne__(self, other):
    if not isinstance(other, PRNGKeyArray):
      return NotImplemented
    return _any(lax.ne(self._base_array, other._base_array), axis=-1)

  # ---- arithmetic is refused with JAX's messages ----
  def _refuse(self, name, other, reflected=False):
    names = [self.dtype.name, _dtype_name(other)]
    if reflected:
      names.reverse()
    raise TypeError(f"{name} does not accept dtypes {', '.join(names)}.")

  def _refuse_unary(self, name, accepted):
    raise TypeError(f"{name} does not accept dtype {self.dtype.name}. Accepted dtypes are "
                    f"subtypes of {accepted}.")

  def _refuse_compare(self, name, other):
    if isinstance(other, PRNGKeyArray):
      raise TypeError(f"{name} does not accept dtype {self.dtype.name} at position 0. "
                      "Accepted dtypes at position 0 are subtypes of integer, floating, bool.")
    self._refuse({"lt": "less", "le": "less_equal", "gt": "greater",
                  "ge": "greater_equal"}[name], other)

  __add__ = lambda s, o: s._refuse("add", o)  # noqa: E731
  __radd__ = lambda s, o: s._refuse("add", o, True)  # noqa: E731
  __sub__ = lambda s, o: s._refuse("subtract", o)  # noqa: E731
  __rsub__ = lambda s, o: s._refuse("subtract", o, True)  # noqa: E731
  __mul__ = lambda s, o: s._refuse("multiply", o)  # noqa: E731
  __rmul__ = lambda s, o: s._refuse("multiply", o, True)  # noqa: E731
  __truediv__ = lambda s, o: s._refuse("true_divide", o)  # noqa: E731
  __rtruediv__ = lambda s, o: s._refuse("true_divide", o, True)  # noqa: E731
  __floordiv__ = lambda s, o: s._refuse("floor_divide", o)  # noqa: E731
  __mod__ = lambda s, o: s._refuse("remainder", o)  # noqa: E731
  __and__ = lambda s, o: s._refuse("bitwise_and", o)  # noqa: E731
  __or__ = lambda s, o: s._refuse("bitwise_or", o)  # noqa: E731
  __xor__ = lambda s, o: s._refuse("bitwise_xor", o)  # noqa: E731
  __lt__ = lambda s, o: s._refuse_compare("lt", o)  # noqa: E731
  __le__ = lambda s, o: s._refuse_compare("le", o)  # noqa: E731
  __gt__ = lambda s, o: s._refuse_compare("gt", o)  # noqa: E731
  __ge__ = lambda s, o: s._refuse_compare("ge", o)  # noqa: E731
  __neg__ = lambda s: s._refuse_unary("neg", "integer, floating, complexfloating")  # noqa: E731
  __abs__ = lambda s: s._refuse_unary(  # noqa: E731
      "abs", "floating, complexfloating, signedinteger")

  # ---- shape methods act on the leading (key) dims ----
  def reshape(self, *shape, order: str = "C") -> "PRNGKeyArray":
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
      shape = tuple(shape[0])
    shape = tuple(int(d) for d in shape)
    if -1 in shape:
      known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
      shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
    return PRNGKeyArray(lax.reshape(self._base_array, shape + KEY_SHAPE))

  def ravel(self, order: str = "C") -> "PRNGKeyArray":
    return self.reshape((self.size,))

  flatten = ravel

  def squeeze(self, axis=None) -> "PRNGKeyArray":
    if axis is None:
      axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
    elif isinstance(axis, int):
      axis = (axis,)
    axis = tuple(a % self.ndim for a in axis)
    return PRNGKeyArray(lax.squeeze(self._base_array, axis))

  def transpose(self, *axes) -> "PRNGKeyArray":
    if not axes or axes == (None,):
      axes = tuple(reversed(range(self.ndim)))
    elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
      axes = tuple(axes[0])
    perm = tuple(a % self.ndim for a in axes) + (self.ndim,)
    return PRNGKeyArray(lax.transpose(self._base_array, perm))

  def swapaxes(self, axis1: int, axis2: int) -> "PRNGKeyArray":
    perm = list(range(self.ndim))
    a, b = axis1 % self.ndim, axis2 % self.ndim
    perm[a], perm[b] = perm[b], perm[a]
    return self.transpose(tuple(perm))

  def copy(self) -> "PRNGKeyArray":
    return PRNGKeyArray(self._base_array)

  def block_until_ready(self) -> "PRNGKeyArray":
    block = getattr(self._base_array, "block_until_ready", None)
    if block is not None:
      block()
    return self

  def is_deleted(self) -> bool:
    return bool(getattr(self._base_array, "is_deleted", lambda: False)())

  def devices(self):
    return self._base_array.devices()

  @property
  def device(self):
    return self._base_array.device

  @property
  def sharding(self):
    # The key data's layout over the key array's own dimensions (a key's
    # trailing data dimension is never split).
    base = self._base_array.sharding
    if not isinstance(base, NamedSharding):
      return base
    return NamedSharding(base.mesh, PartitionSpec(*tuple(base.spec)[:self.ndim]),
                         memory_kind=base.memory_kind)

  @property
  def is_fully_addressable(self) -> bool:
    return bool(getattr(self._base_array, "is_fully_addressable", True))

  @property
  def is_fully_replicated(self) -> bool:
    return bool(getattr(self._base_array, "is_fully_replicated", True))


def _dtype_name(x) -> str:
  """The dtype JAX names for an operand combined with a key array."""
  if isinstance(x, PRNGKeyArray):
    return x.dtype.name
  try:
    return str(dtypes.dtype(x))
  except (TypeError, ValueError):
    return type(x).__name__


# ``isinstance(key, jax.Array)`` holds for typed keys, as in JAX.
Array.register(PRNGKeyArray)
register_pytree_node(PRNGKeyArray, lambda k: ((k._base_array,), None),
                     lambda _, children: PRNGKeyArray(children[0]))


# ------------------------------------------------------------- checking
def _check_key_data(key_data) -> None:
  if not all(hasattr(key_data, a) for a in ("ndim", "shape", "dtype")):
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data to have "
                    f"ndim, shape, and dtype attributes. Got {key_data}")
  if key_data.ndim < 1:
    raise TypeError("JAX encountered invalid PRNG key data: expected "
                    f"key_data.ndim >= 1; got ndim={key_data.ndim}")
  if tuple(key_data.shape[-1:]) != KEY_SHAPE:
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.shape to "
                    f"end with {KEY_SHAPE}; got shape={tuple(key_data.shape)} for "
                    f"impl={_THREEFRY}")
  if key_data.dtype not in (np.uint32, dtypes.float0):
    raise TypeError("JAX encountered invalid PRNG key data: expected key_data.dtype = "
                    f"uint32; got dtype={key_data.dtype}")


# Key data handed on by check_prng_key (id -> data) while jax_legacy_prng_key
# is not "allow": passed to another sampler, it is not a user's raw key.
_checked_data: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()


def check_prng_key(name: str, key, *, allow_batched: bool = False):
  """``(key_data, typed)`` for a typed key array or legacy key data; raises
  JAX's errors for anything else, and for key arrays unless
  ``allow_batched``."""
  if isinstance(key, PRNGKeyArray):
    data, typed = key._base_array, True
    shape = key.shape
    if config.read("jax_legacy_prng_key") != "allow" and not isinstance(data, Tracer):
      _checked_data[id(data)] = data
  elif is_arraylike(key) or np.isscalar(key):
    _check_key_data(key)
    data, typed = key, False
    shape = tuple(np.shape(key))
    legacy = config.read("jax_legacy_prng_key")
    # Checked on concrete keys the user passed: the samplers pass key data on
    # to each other (inside their jitted bodies, or data checked already).
    if (legacy != "allow" and not isinstance(key, Tracer)
        and _checked_data.get(id(key)) is not key):
      message = ("Legacy uint32 key array passed as key to jax.random function. Please create "
                 "keys using jax.random.key(). If use of a raw key array was intended, set "
                 'jax_legacy_prng_key="allow".')
      if legacy == "error":
        raise ValueError(message)
      warnings.warn(message, stacklevel=3)
      _checked_data[id(key)] = key
  else:
    raise TypeError(f"unexpected PRNG key type {type(key)}")
  if not allow_batched and len(shape) - (0 if typed else 1):
    raise ValueError(f"{name} accepts a single key, but was given a key array of "
                     f"shape {shape} != (). Use jax.vmap for batching.")
  return data, typed


def return_keys(typed: bool, data):
  return PRNGKeyArray(data) if typed else data


def canonicalize_shape(shape, context: str = "") -> tuple[int, ...]:
  """JAX's ``core.canonicalize_shape``: a tuple of concrete integers."""
  try:
    return tuple(operator.index(concrete_or_error(None, d, context)) for d in shape)
  except TypeError:
    pass
  raise TypeError("Shapes must be 1D sequences of concrete values of integer type, "
                  f"got {shape}.")


# --------------------------------------------------------- constructors
def _key(ctor_name: str, seed, impl_spec):
  resolve_prng_impl(impl_spec)
  if isinstance(seed, PRNGKeyArray):
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given a PRNG key.")
  if np.ndim(seed):
    raise TypeError(f"{ctor_name} accepts a scalar seed, but was given an array of shape "
                    f"{np.shape(seed)} != (). Use jax.vmap for batching")
  if isinstance(seed, int):   # Python ints (and bools) are seeded as int64, as JAX does
    seeds = asarray(np.int64(seed))
  else:
    seeds = asarray(seed)
  return random_seed(seeds, impl=_THREEFRY.tag)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
  """A typed PRNG key (dtype ``key<fry>``, shape ``()``) from an integer seed."""
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to jax.random.key")
    impl = dtype
  return PRNGKeyArray(_key("key", seed, impl))


def PRNGKey(seed, *, impl=None):
  """A legacy PRNG key, ``uint32[2]``, from an integer seed (a 64-bit seed
  keeps its high word; a 32-bit one has a zero high word)."""
  return _key("PRNGKey", seed, impl)


def key_data(keys):
  """The ``uint32`` data underlying a PRNG key array."""
  data, _ = check_prng_key("key_data", keys, allow_batched=True)
  return data if isinstance(data, Tracer) else asarray(data)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
  """A typed key array over ``uint32`` key data (trailing dimension 2)."""
  if dtype is not None:
    if impl is not None:
      raise ValueError("Cannot specify both `impl` and `dtype` arguments to"
                       " jax.random.wrap_key_data")
    impl = dtype
  resolve_prng_impl(impl)
  if isinstance(key_bits_array, PRNGKeyArray):   # its shape has no trailing 2
    _check_key_data(key_bits_array)
  data = key_bits_array if isinstance(key_bits_array, Tracer) else \
      asarray(key_bits_array)
  _check_key_data(data)
  return PRNGKeyArray(data)


def key_impl(keys) -> str:
  """The name of the keys' PRNG implementation (``'threefry2x32'``)."""
  check_prng_key("key_impl", keys, allow_batched=True)
  return _THREEFRY.name


# ------------------------------------------------------- key operations
def split(key, num: int | Sequence[int] = 2):
  """Split a key into ``num`` new keys (or a ``num``-shaped array of keys)."""
  data, typed = check_prng_key("split", key)
  shape = tuple(num) if isinstance(num, Sequence) else (num,)
  shape = tuple(operator.index(d) for d in shape)
  return return_keys(typed, random_split(data, shape))


def fold_in(key, data):
  """Fold integer ``data`` (a 32-bit scalar) into a key, giving a new key."""
  key_data_, typed = check_prng_key("fold_in", key)
  if np.ndim(data):
    raise TypeError("fold_in accepts a scalar, but was given an array of"
                    f"shape {np.shape(data)} != (). Use jax.vmap for batching.")
  msgs = asarray(data, dtype="uint32")
  return return_keys(typed, random_fold_in(key_data_, msgs))


def clone(key):
  """An identical key, for reuse (an identity outside key-reuse checking)."""
  if isinstance(key, PRNGKeyArray):
    return PRNGKeyArray(random_clone(key._base_array))
  return random_clone(key)


@lays_out_result
def bits(key, shape=(), dtype=None, *, out_sharding=None):
  """Uniform random bits as unsigned integers of ``dtype`` (default uint32,
  uint64 under x64)."""
  data, _ = check_prng_key("bits", key)
  if dtype is None:
    dtype = dtypes.default_uint_dtype()
  else:
    dtype = dtypes.explicit_dtype(dtype)
  if not dtypes.issubdtype(dtype, np.unsignedinteger):
    raise ValueError("dtype argument to `bits` must be an unsigned int dtype, "
                     f"got {dtype}")
  shape = canonicalize_shape(shape)
  return random_bits(data, np.dtype(dtype).itemsize * 8, shape)
