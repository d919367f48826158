"""Random-bit primitives: the threefry2x32 hash and the key operations built
on it (seed, bits, split, fold_in, clone), as JAX 0.10 with its default
``jax_threefry_partitionable=True``.

A key is held as its raw data, a ``uint32`` array whose trailing dimension
is 2 (``u32[*keys_shape, 2]``); typed keys (``jax.random.key``) wrap that
data in the library (``openjax._src.random.keys``). Every key primitive takes
keys with any leading shape, so batching moves the batch dimension to the
front and binds again.

Counters follow the partitionable scheme: element ``i`` (row-major index) of
a ``shape``-sized draw hashes the 64-bit counter ``(hi, lo) = (i >> 32,
i & 0xffffffff)``; ``bits`` XORs the two output words (32 bits), joins them
(64 bits) or truncates the XOR (8/16 bits); ``split`` keeps both words as the
new key; ``fold_in(k, d)`` is the hash of ``(0, d)``.

Lowerings emit the 20 threefry rounds unrolled with literal rotation
constants (IREE runs JAX's rolled ``while`` 6-13x slower), so a whole draw is
one fused elementwise dispatch.
"""
from __future__ import annotations

import math
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core import Primitive, ShapedArray
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.lowering.builder import Value
from openjax._src.primitives.base.ad_util import defjvp_zero
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front, broadcast_batcher
from openjax._src.primitives.base.util import broadcasting_shape

__all__ = ["threefry2x32_p", "threefry2x32", "random_seed_p", "random_seed",
           "random_bits_p", "random_bits", "random_split_p", "random_split",
           "random_fold_in_p", "random_fold_in", "random_clone_p", "random_clone",
           "threefry2x32_numpy", "KEY_SHAPE"]

KEY_SHAPE = (2,)
_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}
_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA


# ----------------------------------------------------------- NumPy threefry
_BLOCK = 1 << 14   # elements hashed per pass: the working set stays in cache


def _threefry2x32_scalar(k1: int, k2: int, a: int, b: int) -> tuple[int, int]:
  """One hash on Python ints (faster than NumPy calls for a few elements)."""
  m = 0xFFFFFFFF
  ks = (k1, k2, k1 ^ k2 ^ _PARITY)
  a, b = (a + k1) & m, (b + k2) & m
  for i in range(5):
    for r in _ROTATIONS[i % 2]:
      a = (a + b) & m
      b = (((b << r) & m) | (b >> (32 - r))) ^ a
    a = (a + ks[(i + 1) % 3]) & m
    b = (b + ks[(i + 2) % 3] + i + 1) & m
  return a, b


def threefry2x32_numpy(k1, k2, x1, x2):
  """The Threefry-2x32 hash (20 rounds) of the counter words ``(x1, x2)``
  under the key words ``(k1, k2)``; uint32 operands broadcast."""
  k1, k2, x1, x2 = (np.asarray(a, _U32) for a in (k1, k2, x1, x2))
  shape = np.broadcast_shapes(k1.shape, k2.shape, x1.shape, x2.shape)
  n = math.prod(shape)
  if n <= 8:
    args = [np.broadcast_to(v, shape).ravel().tolist() for v in (k1, k2, x1, x2)]
    out = [_threefry2x32_scalar(*t) for t in zip(*args)]
    return (np.array([o[0] for o in out], _U32).reshape(shape),
            np.array([o[1] for o in out], _U32).reshape(shape))

  def flat(v):  # 1-d arrays: NumPy wraps uint32 arithmetic silently on them
    return np.broadcast_to(v, shape).reshape(n)

  k1, k2, x1, x2 = flat(k1), flat(k2), flat(x1), flat(x2)
  out1, out2 = np.empty(n, _U32), np.empty(n, _U32)
  tmp = np.empty(min(n, _BLOCK), _U32)
  for lo in range(0, n, _BLOCK):
    hi = min(n, lo + _BLOCK)
    ks = (k1[lo:hi], k2[lo:hi])
    ks = ks + (ks[0] ^ ks[1] ^ np.uint32(_PARITY),)
    a, b, t = out1[lo:hi], out2[lo:hi], tmp[:hi - lo]
    np.add(x1[lo:hi], ks[0], out=a)
    np.add(x2[lo:hi], ks[1], out=b)
    for i in range(5):
      for r in _ROTATIONS[i % 2]:
        a += b
        np.right_shift(b, np.uint32(32 - r), out=t)
        b <<= np.uint32(r)
        b |= t
        b ^= a
      a += ks[(i + 1) % 3]
      b += ks[(i + 2) % 3]
      b += np.uint32(i + 1)
  return out1.reshape(shape), out2.reshape(shape)


def _iota_2x32(shape) -> tuple[np.ndarray, np.ndarray]:
  """The (hi, lo) words of the row-major uint64 index of each element."""
  n = math.prod(shape)
  if n < 2 ** 32:
    lo = np.arange(n, dtype=_U32).reshape(shape)
    return np.zeros(shape, _U32), lo
  idx = np.arange(n, dtype=np.uint64).reshape(shape)
  return (idx >> np.uint64(32)).astype(_U32), idx.astype(_U32)


def _key_words(keys: np.ndarray, extra_ndim: int):
  """The two uint32 words of ``keys`` (``[..., 2]``), with ``extra_ndim``
  trailing unit dimensions for broadcasting against a draw."""
  k1 = keys[..., 0].reshape(keys.shape[:-1] + (1,) * extra_ndim)
  k2 = keys[..., 1].reshape(keys.shape[:-1] + (1,) * extra_ndim)
  return k1, k2


def _hash_counters(keys: np.ndarray, shape: tuple) -> tuple[np.ndarray, np.ndarray]:
  k1, k2 = _key_words(keys, len(shape))
  hi, lo = _iota_2x32(shape)
  return threefry2x32_numpy(k1, k2, hi, lo)


# ------------------------------------------------------- lowering helpers
class _Emitter:
  """Emits uint32 elementwise StableHLO for one lowering rule, caching splat
  constants per (value, type)."""

  def __init__(self, ctx, shape):
    self.ctx = ctx
    self.shape = tuple(shape)
    self.type = ctx.tensor_type(self.shape, _U32)
    self._splats: dict = {}

  def splat(self, value: int) -> Value:
    hit = self._splats.get(value)
    if hit is None:
      hit = self._splats[value] = self.ctx.full(np.uint32(value), self.shape, _U32)
    return hit

  def binop(self, name: str, x: Value, y: Value) -> Value:
    return self.ctx.op(f"stablehlo.{name}", [x, y], self.type)

  def rotl(self, x: Value, r: int) -> Value:
    left = self.binop("shift_left", x, self.splat(r))
    right = self.binop("shift_right_logical", x, self.splat(32 - r))
    return self.binop("or", left, right)

  def threefry(self, k1: Value, k2: Value, x1: Value, x2: Value) -> tuple[Value, Value]:
    """The 20 rounds, unrolled, with literal rotation constants."""
    ks = (k1, k2, self.binop("xor", self.binop("xor", k1, k2), self.splat(_PARITY)))
    a = self.binop("add", x1, ks[0])
    b = self.binop("add", x2, ks[1])
    for i in range(5):
      for r in _ROTATIONS[i % 2]:
        a = self.binop("add", a, b)
        b = self.binop("xor", self.rotl(b, r), a)
      a = self.binop("add", a, ks[(i + 1) % 3])
      b = self.binop("add", self.binop("add", b, ks[(i + 2) % 3]), self.splat(i + 1))
    return a, b

  def broadcast(self, x: Value, dims) -> Value:
    return self.ctx.broadcast_in_dim(x, self.shape, tuple(dims))

  def counters(self, lead_ndim: int) -> tuple[Value, Value]:
    """(hi, lo) counter words of the trailing draw shape, broadcast over
    ``lead_ndim`` leading (key) dimensions."""
    ctx = self.ctx
    draw = self.shape[lead_ndim:]
    n = math.prod(draw)
    dims = tuple(range(lead_ndim, len(self.shape)))
    if n < 2 ** 32:
      flat = ctx.op("stablehlo.iota", [], ctx.tensor_type((n,), _U32),
                    attrs={"iota_dimension": 0})
      lo = ctx.op("stablehlo.reshape", [flat], ctx.tensor_type(draw, _U32))
      return self.splat(0), self.broadcast(lo, dims)
    u64 = np.dtype(np.uint64)
    flat = ctx.op("stablehlo.iota", [], ctx.tensor_type((n,), u64), attrs={"iota_dimension": 0})
    idx = ctx.op("stablehlo.reshape", [flat], ctx.tensor_type(draw, u64))
    shift = ctx.full(np.uint64(32), draw, u64)
    hi64 = ctx.op("stablehlo.shift_right_logical", [idx, shift], ctx.tensor_type(draw, u64))
    hi = ctx.op("stablehlo.convert", [hi64], ctx.tensor_type(draw, _U32))
    lo = ctx.op("stablehlo.convert", [idx], ctx.tensor_type(draw, _U32))
    return self.broadcast(hi, dims), self.broadcast(lo, dims)

  def key_words(self, keys: Value, keys_shape) -> tuple[Value, Value]:
    """The two words of ``keys`` (``[*keys_shape, 2]``) broadcast to the
    emitter's shape (keys lead)."""
    ctx = self.ctx
    lead = tuple(keys_shape)
    words = []
    for j in range(2):
      part = ctx.op("stablehlo.slice", [keys], ctx.tensor_type(lead + (1,), _U32),
                    attrs={"start_indices": (0,) * len(lead) + (j,),
                           "limit_indices": lead + (j + 1,),
                           "strides": (1,) * (len(lead) + 1)})
      part = ctx.op("stablehlo.reshape", [part], ctx.tensor_type(lead, _U32))
      words.append(self.broadcast(part, range(len(lead))))
    return words[0], words[1]

  def stack_words(self, a: Value, b: Value) -> Value:
    """``[*shape, 2]`` from two ``[*shape]`` words."""
    ctx = self.ctx
    col = ctx.tensor_type(self.shape + (1,), _U32)
    a = ctx.op("stablehlo.reshape", [a], col)
    b = ctx.op("stablehlo.reshape", [b], col)
    return ctx.op("stablehlo.concatenate", [a, b], ctx.tensor_type(self.shape + (2,), _U32),
                  attrs={"dimension": len(self.shape)})


def _check_keys(name: str, keys: ShapedArray) -> tuple[int, ...]:
  if keys.dtype != _U32 or keys.ndim < 1 or keys.shape[-1:] != KEY_SHAPE:
    raise TypeError(f"{name}: expected threefry2x32 key data (uint32 with trailing "
                    f"dimension 2), got {keys.str_short()}")
  return keys.shape[:-1]


def _front_batcher(prim: Primitive):
  """Batching for key primitives: every operand's batch dim moves to the
  front (unbatched ones are broadcast); the result is batched at 0."""
  def rule(vals, dims, **params):
    size = axis_size(vals, dims)
    outs = prim.bind(*(bdim_at_front(v, d, size) for v, d in zip(vals, dims)), **params)
    return outs, [0] * len(outs)
  return rule


# ------------------------------------------------------------ threefry2x32
threefry2x32_p = Primitive("threefry2x32", multiple_results=True, kind="nondifferentiable")


def threefry2x32(k1, k2, x1, x2):
  """The Threefry-2x32 hash of counter words ``(x1, x2)`` under key words
  ``(k1, k2)`` (uint32 arrays, lax broadcasting); returns two uint32 arrays."""
  return threefry2x32_p.bind(k1, k2, x1, x2)


@threefry2x32_p.def_impl
def _threefry2x32_impl(k1, k2, x1, x2):
  return list(threefry2x32_numpy(k1, k2, x1, x2))


@threefry2x32_p.def_abstract_eval
def _threefry2x32_abstract_eval(k1, k2, x1, x2):
  args = (k1, k2, x1, x2)
  if any(a.dtype != _U32 for a in args):
    raise TypeError("Arguments to threefry2x32 must have uint32 type, got "
                    f"({', '.join(a.str_short() for a in args)})")
  shape = broadcasting_shape("threefry2x32", args)
  return [ShapedArray(shape, _U32), ShapedArray(shape, _U32)]


threefry2x32_p.def_sharding_rule(replicated_rule)


threefry2x32_p.def_batch(broadcast_batcher(threefry2x32_p))
defjvp_zero(threefry2x32_p)


@threefry2x32_p.def_lower
def _threefry2x32_lower(ctx, k1, k2, x1, x2):
  shape = ctx.avals_out[0].shape
  em = _Emitter(ctx, shape)
  ops = []
  for v, aval in zip((k1, k2, x1, x2), ctx.avals_in):
    if aval.shape == shape:
      ops.append(v)
    else:
      ops.append(em.broadcast(v, () if not aval.shape else range(len(shape))))
  return list(em.threefry(*ops))


# ------------------------------------------------------------- random_seed
random_seed_p = Primitive("random_seed", kind="nondifferentiable")


def random_seed(seeds, impl: str = "fry"):
  """Key data ``u32[*seeds.shape, 2]`` from integer seeds (JAX's threefry
  seeding: 64-bit seeds keep their high word)."""
  return random_seed_p.bind1(seeds, impl=impl)


def _seed_words(seeds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
  """JAX's threefry seed: a 64-bit seed is bit-cast to (hi, lo) words; a
  narrower one is sign- or zero-extended into ``lo`` with ``hi = 0``."""
  if seeds.dtype.itemsize == 8:
    u = seeds.view(np.uint64) if seeds.dtype.kind == "i" else seeds.astype(np.uint64)
    return (u >> np.uint64(32)).astype(_U32), u.astype(_U32)
  lo = seeds.astype(np.int64).astype(np.uint64).astype(_U32)
  return np.zeros(seeds.shape, _U32), lo


@random_seed_p.def_impl
def _random_seed_impl(seeds, *, impl="fry"):
  seeds = np.asarray(seeds)
  hi, lo = _seed_words(seeds)
  return [np.stack([hi, lo], axis=-1)]


@random_seed_p.def_abstract_eval
def _random_seed_abstract_eval(seeds, *, impl="fry"):
  if not dtypes.issubdtype(seeds.dtype, np.integer):
    raise TypeError(f"PRNG key seed must be an integer; got {seeds.str_short()}")
  return [ShapedArray(seeds.shape + KEY_SHAPE, _U32)]


random_seed_p.def_sharding_rule(replicated_rule)


@random_seed_p.def_batch
def _random_seed_batch(vals, dims, *, impl="fry"):
  (seeds,), (d,) = vals, dims
  return [random_seed_p.bind1(seeds, impl=impl)], [d]


defjvp_zero(random_seed_p)


@random_seed_p.def_lower
def _random_seed_lower(ctx, seeds, *, impl="fry"):
  aval = ctx.avals_in[0]
  shape = aval.shape
  em = _Emitter(ctx, shape)
  lo = ctx.convert(seeds, _U32, shape)
  if aval.dtype.itemsize == 8:
    t = ctx.aval_type(aval)
    shift = ctx.full(np.array(32, aval.dtype), shape, aval.dtype)
    hi = ctx.convert(ctx.op("stablehlo.shift_right_logical", [seeds, shift], t), _U32, shape)
  else:
    hi = em.splat(0)
  return [em.stack_words(hi, lo)]


# ------------------------------------------------------------- random_bits
random_bits_p = Primitive("random_bits", kind="nondifferentiable")


def random_bits(keys, bit_width: int, shape):
  """Uniform random bits ``uint{bit_width}[*keys_shape, *shape]`` from key
  data ``u32[*keys_shape, 2]``."""
  _check_partitionable()
  return random_bits_p.bind1(keys, bit_width=int(bit_width),
                             shape=tuple(operator.index(d) for d in shape))


def _bits_from_words(b1, b2, bit_width: int):
  if bit_width == 64:
    return (b1.astype(np.uint64) << np.uint64(32)) | b2.astype(np.uint64)
  x = b1 ^ b2
  return x if bit_width == 32 else x.astype(_UINT[bit_width])


@random_bits_p.def_impl
def _random_bits_impl(keys, *, bit_width, shape):
  b1, b2 = _hash_counters(np.asarray(keys), shape)
  return [_bits_from_words(b1, b2, bit_width)]


@random_bits_p.def_abstract_eval
def _random_bits_abstract_eval(keys, *, bit_width, shape):
  keys_shape = _check_keys("random_bits", keys)
  if bit_width not in _UINT:
    raise TypeError("requires 8-, 16-, 32- or 64-bit field width.")
  if math.prod(shape) > 2 ** 64:
    raise NotImplementedError("random bits array of size exceeding 2 ** 64")
  return [ShapedArray(keys_shape + tuple(shape), _UINT[bit_width])]


random_bits_p.def_sharding_rule(replicated_rule)


random_bits_p.def_batch(_front_batcher(random_bits_p))
defjvp_zero(random_bits_p)


@random_bits_p.def_lower
def _random_bits_lower(ctx, keys, *, bit_width, shape):
  keys_shape = ctx.avals_in[0].shape[:-1]
  out_shape = keys_shape + tuple(shape)
  em = _Emitter(ctx, out_shape)
  k1, k2 = em.key_words(keys, keys_shape)
  hi, lo = em.counters(len(keys_shape))
  b1, b2 = em.threefry(k1, k2, hi, lo)
  out_type = ctx.aval_type(ctx.avals_out[0])
  if bit_width == 64:
    hi64 = ctx.op("stablehlo.convert", [b1], out_type)
    lo64 = ctx.op("stablehlo.convert", [b2], out_type)
    shift = ctx.full(np.uint64(32), out_shape, np.uint64)
    hi64 = ctx.op("stablehlo.shift_left", [hi64, shift], out_type)
    return [ctx.op("stablehlo.or", [hi64, lo64], out_type)]
  x = em.binop("xor", b1, b2)
  return [x if bit_width == 32 else ctx.op("stablehlo.convert", [x], out_type)]


def _check_partitionable() -> None:
  if not config.read("jax_threefry_partitionable"):
    raise NotImplementedError(
        "jax_threefry_partitionable=False (JAX's original, pre-0.5 threefry key "
        "derivation and bit layout) is not implemented; openjax follows JAX's default.")


# ------------------------------------------------------------ random_split
random_split_p = Primitive("random_split", kind="nondifferentiable")


def random_split(keys, shape):
  """New key data ``u32[*keys_shape, *shape, 2]`` derived from ``keys``."""
  _check_partitionable()
  return random_split_p.bind1(keys, shape=tuple(operator.index(d) for d in shape))


@random_split_p.def_impl
def _random_split_impl(keys, *, shape):
  b1, b2 = _hash_counters(np.asarray(keys), shape)
  return [np.stack([b1, b2], axis=-1)]


@random_split_p.def_abstract_eval
def _random_split_abstract_eval(keys, *, shape):
  keys_shape = _check_keys("random_split", keys)
  return [ShapedArray(keys_shape + tuple(shape) + KEY_SHAPE, _U32)]


random_split_p.def_sharding_rule(replicated_rule)


random_split_p.def_batch(_front_batcher(random_split_p))
defjvp_zero(random_split_p)


@random_split_p.def_lower
def _random_split_lower(ctx, keys, *, shape):
  keys_shape = ctx.avals_in[0].shape[:-1]
  em = _Emitter(ctx, keys_shape + tuple(shape))
  k1, k2 = em.key_words(keys, keys_shape)
  hi, lo = em.counters(len(keys_shape))
  return [em.stack_words(*em.threefry(k1, k2, hi, lo))]


# ---------------------------------------------------------- random_fold_in
random_fold_in_p = Primitive("random_fold_in", kind="nondifferentiable")


def random_fold_in(keys, msgs):
  """Key data with the uint32 ``msgs`` folded in (lax broadcasting between the
  keys' shape and the messages' shape)."""
  return random_fold_in_p.bind1(keys, msgs)


def _fold_in_shape(keys: ShapedArray, msgs: ShapedArray) -> tuple[int, ...]:
  keys_shape = _check_keys("random_fold_in", keys)
  if msgs.dtype != _U32:
    raise TypeError(f"random_fold_in: messages must be uint32, got {msgs.str_short()}")
  return broadcasting_shape("random_fold_in", [ShapedArray(keys_shape, _U32), msgs])


@random_fold_in_p.def_impl
def _random_fold_in_impl(keys, msgs):
  keys = np.asarray(keys)
  msgs = np.asarray(msgs, _U32)
  b1, b2 = threefry2x32_numpy(keys[..., 0], keys[..., 1], np.zeros((), _U32), msgs)
  return [np.stack([b1, b2], axis=-1)]


@random_fold_in_p.def_abstract_eval
def _random_fold_in_abstract_eval(keys, msgs):
  return [ShapedArray(_fold_in_shape(keys, msgs) + KEY_SHAPE, _U32)]


random_fold_in_p.def_sharding_rule(replicated_rule)


random_fold_in_p.def_batch(_front_batcher(random_fold_in_p))
defjvp_zero(random_fold_in_p)


@random_fold_in_p.def_lower
def _random_fold_in_lower(ctx, keys, msgs):
  keys_aval, msgs_aval = ctx.avals_in
  keys_shape = keys_aval.shape[:-1]
  shape = ctx.avals_out[0].shape[:-1]
  em = _Emitter(ctx, shape)
  k1, k2 = _Emitter(ctx, keys_shape).key_words(keys, keys_shape)
  if keys_shape != shape:
    k1, k2 = (em.broadcast(k, () if not keys_shape else range(len(shape))) for k in (k1, k2))
  if msgs_aval.shape != shape:
    msgs = em.broadcast(msgs, () if not msgs_aval.shape else range(len(shape)))
  return [em.stack_words(*em.threefry(k1, k2, em.splat(0), msgs))]


# ------------------------------------------------------------ random_clone
random_clone_p = Primitive("random_clone", kind="nondifferentiable")


def random_clone(keys):
  """An identity on keys (a marker for key-reuse checking in JAX)."""
  return random_clone_p.bind1(keys)


random_clone_p.def_impl(lambda keys: [keys])
random_clone_p.def_abstract_eval(lambda keys: [keys])
random_clone_p.def_sharding_rule(replicated_rule)
defjvp_zero(random_clone_p)


@random_clone_p.def_batch
def _random_clone_batch(vals, dims):
  return [random_clone_p.bind1(vals[0])], [dims[0]]


@random_clone_p.def_lower
def _random_clone_lower(ctx, keys):
  return [keys]
