"""``rng_bit_generator_p``: ``lax.rng_bit_generator``, a stateless bit generator
over an explicit ``uint32[4]`` state: ``(new_state, bits)``.

JAX documents the bits as platform specific (XLA picks the algorithm per
backend); openjax defines them with Threefry-2x32 (for ``RNG_DEFAULT`` and
``RNG_THREE_FRY``): words 0 and 1 of the state are the key, words 2 and 3 a
little-endian 64-bit counter; block ``i`` hashes counter ``c + i`` into two
words and the new state advances the counter by the blocks used. Values are
laid out as XLA's ThreeFry generator lays them out (two neighbours along one
dimension per block; 64-bit values take both words of a block; 8/16-bit ones
the low bits), so ``RNG_THREE_FRY`` gives JAX's bits exactly. JAX's CPU
default is Philox, which openjax does not implement: ``RNG_DEFAULT`` is
Threefry here. The generator is written with lax wrappers, traced for lowering.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, eval_trace, get_aval, set_current_trace
from openjax._src.core.sharding_rules import replicated_rule
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.primitives.base.structural import broadcast_in_dim, iota, moveaxis, reshape
from openjax._src.primitives.elementwise.arithmetic import add
from openjax._src.primitives.elementwise.logic import bitwise_or, lt, shift_left
from openjax._src.primitives.random_bits.random_bits import threefry2x32
from openjax._src.primitives.shape.shape import concatenate, index_in_dim, slice

__all__ = ["THREE_FRY_ALGORITHMS", "rng_bit_generator_p"]

_U32 = np.dtype(np.uint32)
# RandomAlgorithm values: RNG_DEFAULT (0) and RNG_THREE_FRY (1) use Threefry.
THREE_FRY_ALGORITHMS = (0, 1)

rng_bit_generator_p = Primitive("rng_bit_generator", multiple_results=True,
                                kind="nondifferentiable")
rng_bit_generator_p.def_sharding_rule(replicated_rule)


def _add_u64(lo, hi, n):
  """``(hi, lo) + n`` in 64-bit unsigned arithmetic on 32-bit words."""
  new_lo = add(lo, n)
  carry = convert_element_type(lt(new_lo, lo), _U32)
  return new_lo, add(hi, carry)


def _split_dim(shape) -> int:
  """XLA's choice of the dimension whose adjacent pairs share a Threefry block:
  the first even dimension, else the first largest."""
  for i, d in enumerate(shape):
    if d % 2 == 0:
      return i
  return max(range(len(shape)), key=lambda i: (shape[i], -i))


def _threefry_words(key, n_blocks: int):
  """Both output words of blocks ``0..n_blocks-1`` (counter ``c + i``), and the
  counter advanced past them."""
  k0, k1, c_lo, c_hi = (index_in_dim(key, i, 0, keepdims=False) for i in range(4))
  lo, hi = _add_u64(broadcast_in_dim(c_lo, (n_blocks,), ()),
                    broadcast_in_dim(c_hi, (n_blocks,), ()), iota(_U32, n_blocks))
  k0b, k1b = (broadcast_in_dim(k, (n_blocks,), ()) for k in (k0, k1))
  w1, w2 = threefry2x32(k0b, k1b, lo, hi)
  new_lo, new_hi = _add_u64(c_lo, c_hi, np.array(n_blocks, _U32))
  new_key = concatenate([reshape(w, (1,)) for w in (k0, k1, new_lo, new_hi)], 0)
  return w1, w2, new_key


def _generate(key, *, shape, dtype, algorithm):
  if dtype.itemsize == 8:
    # One block per value: the low word, then the high word.
    count = math.prod(shape)
    w1, w2, new_key = _threefry_words(key, count)
    low, high = (convert_element_type(w, dtype) for w in (w1, w2))
    values = reshape(bitwise_or(low, shift_left(high, np.array(32, dtype))), shape)
    return [new_key, values]
  if not shape:
    w1, _, new_key = _threefry_words(key, 1)
    return [new_key, convert_element_type(reshape(w1, ()), dtype)]
  # 32 bits per value (narrower dtypes keep the low bits). As XLA does, one
  # block fills two neighbours along the split dimension: the counters run
  # over the shape with that dimension halved.
  d = _split_dim(shape)
  half = -(-shape[d] // 2)
  half_shape = shape[:d] + (half, 1) + shape[d + 1:]
  w1, w2, new_key = _threefry_words(key, math.prod(half_shape))
  pairs = concatenate([reshape(w, half_shape) for w in (w1, w2)], d + 1)
  words = reshape(pairs, shape[:d] + (2 * half,) + shape[d + 1:])
  if 2 * half != shape[d]:
    words = slice(words, (0,) * len(shape), shape)
  return [new_key, convert_element_type(words, dtype)]


def _avals(key, shape, dtype):
  return [ShapedArray((4,), _U32), ShapedArray(shape, dtype)]


@rng_bit_generator_p.def_impl
def _rng_bit_generator_impl(key, *, shape, dtype, algorithm):
  with set_current_trace(eval_trace):
    outs = _generate(key, shape=shape, dtype=dtype, algorithm=algorithm)
  return [np.asarray(o) for o in outs]


@rng_bit_generator_p.def_abstract_eval
def _rng_bit_generator_abstract_eval(key, *, shape, dtype, algorithm):
  if key.shape != (4,) or key.dtype != _U32:
    raise TypeError(f"rng_bit_generator: the key must be u32[4], got {key.str_short()}")
  if dtypes.kind(dtype) != "u":
    raise TypeError(f"rng_bit_generator: bits are unsigned integers, got {dtype}")
  if algorithm not in THREE_FRY_ALGORITHMS:
    raise NotImplementedError(
        "rng_bit_generator: openjax implements RNG_DEFAULT and RNG_THREE_FRY (Threefry-2x32); "
        "RNG_PHILOX is not implemented")
  return _avals(key, shape, dtype)


@rng_bit_generator_p.def_batch
def _rng_bit_generator_batch(vals, dims, *, shape, dtype, algorithm):
  # JAX's rule: the first key draws the bits of the whole batch at once (shape
  # (batch, *shape)) and only that key advances.
  (keys,), (d,) = vals, dims
  keys = moveaxis(keys, d, 0)
  batch = get_aval(keys).shape[0]
  new_key, bits = rng_bit_generator_p.bind(index_in_dim(keys, 0, 0, keepdims=False),
                                           shape=(batch, *shape), dtype=dtype,
                                           algorithm=algorithm)
  rest = slice(keys, (1, 0), (batch, 4))
  return [concatenate([reshape(new_key, (1, 4)), rest], 0), bits], [0, 0]


@rng_bit_generator_p.def_lower
def _rng_bit_generator_lower(ctx, key, **params):
  jaxpr, consts = trace_to_jaxpr(lambda k: _generate(k, **params), list(ctx.avals_in))
  return ctx.lower_jaxpr_inline(jaxpr, [key], consts)
