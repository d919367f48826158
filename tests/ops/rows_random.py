"""Op-table rows: the random-bit primitives (threefry2x32, random_seed,
random_bits, random_split, random_fold_in, random_clone, random_gamma,
random_poisson, random_binomial) and samplers of ``jax.random`` (jit and vmap
columns; bit-exact values against JAX live in tests/test_random.py).

The eager references use a scalar, pure-Python Threefry-2x32 written
independently of the library's vectorised NumPy one."""
import numpy as np

from openjax import random
from openjax._src.primitives.random_bits.random_bits import (
    random_bits, random_clone, random_fold_in, random_seed, random_split, threefry2x32)
from tests.ops.harness import OpRow

U32 = np.dtype(np.uint32)
_MASK = 0xFFFFFFFF
_ROT = ((13, 15, 26, 6), (17, 29, 16, 24))


def _threefry_scalar(k1: int, k2: int, x1: int, x2: int) -> tuple[int, int]:
  ks = (k1, k2, k1 ^ k2 ^ 0x1BD11BDA)
  x = [(x1 + ks[0]) & _MASK, (x2 + ks[1]) & _MASK]
  for i in range(5):
    for r in _ROT[i % 2]:
      x[0] = (x[0] + x[1]) & _MASK
      x[1] = (((x[1] << r) | (x[1] >> (32 - r))) & _MASK) ^ x[0]
    x[0] = (x[0] + ks[(i + 1) % 3]) & _MASK
    x[1] = (x[1] + ks[(i + 2) % 3] + i + 1) & _MASK
  return x[0], x[1]


def threefry_ref(k1, k2, x1, x2):
  k1, k2, x1, x2 = np.broadcast_arrays(*(np.asarray(a, U32) for a in (k1, k2, x1, x2)))
  out = [_threefry_scalar(int(a), int(b), int(c), int(d))
         for a, b, c, d in zip(k1.ravel(), k2.ravel(), x1.ravel(), x2.ravel())]
  y1 = np.array([o[0] for o in out], U32).reshape(k1.shape)
  y2 = np.array([o[1] for o in out], U32).reshape(k1.shape)
  return y1, y2


def _hash_iota(keys, shape):
  keys = np.asarray(keys, U32)
  n = int(np.prod(shape))
  lo = np.arange(n, dtype=U32).reshape(shape)
  k1 = keys[..., 0].reshape(keys.shape[:-1] + (1,) * len(shape))
  k2 = keys[..., 1].reshape(keys.shape[:-1] + (1,) * len(shape))
  return threefry_ref(k1, k2, np.zeros((), U32), lo)


def bits_ref(keys, bit_width, shape):
  b1, b2 = _hash_iota(keys, shape)
  x = b1 ^ b2
  return x if bit_width == 32 else x.astype(np.dtype(f"uint{bit_width}"))


def split_ref(keys, shape):
  return np.stack(_hash_iota(keys, shape), axis=-1)


def fold_in_ref(keys, msgs):
  keys = np.asarray(keys, U32)
  return np.stack(threefry_ref(keys[..., 0], keys[..., 1], np.zeros((), U32), msgs), axis=-1)


def seed_ref(seeds):
  seeds = np.asarray(seeds)
  lo = seeds.astype(np.int64).astype(np.uint64).astype(U32)
  return np.stack([np.zeros(seeds.shape, U32), lo], axis=-1)


def _u32(*shape):
  return lambda rng: rng.integers(0, 2 ** 32, shape, dtype=np.uint64).astype(U32)


def _keys(*lead):
  return _u32(*lead, 2)


ROWS = []


def _add(name, fn, args, ref=None, **kw):
  ROWS.append(OpRow(name, fn, args, ref, **kw))


# ------------------------------------------------------------- primitives
_add("random.threefry2x32", lambda a, b, c, d: tuple(threefry2x32(a, b, c, d)),
     lambda rng: tuple(_u32(4)(rng) for _ in range(4)), threefry_ref)
_add("random.threefry2x32_scalar_key",
     lambda a, b, c, d: tuple(threefry2x32(a, b, c, d)),
     lambda rng: (_u32()(rng), _u32()(rng), _u32(2, 3)(rng), _u32(2, 3)(rng)), threefry_ref)
for bw in (8, 16, 32):
  _add(f"random.random_bits_{bw}", lambda k, bw=bw: random_bits(k, bw, (3, 4)),
       lambda rng: (_keys()(rng),), lambda k, bw=bw: bits_ref(k, bw, (3, 4)))
_add("random.random_bits_key_array", lambda k: random_bits(k, 32, (5,)),
     lambda rng: (_keys(3)(rng),), lambda k: bits_ref(k, 32, (5,)))
_add("random.random_split", lambda k: random_split(k, (3,)),
     lambda rng: (_keys()(rng),), lambda k: split_ref(k, (3,)))
_add("random.random_split_key_array", lambda k: random_split(k, (2, 2)),
     lambda rng: (_keys(3)(rng),), lambda k: split_ref(k, (2, 2)))
_add("random.random_fold_in", lambda k, m: random_fold_in(k, m),
     lambda rng: (_keys()(rng), _u32()(rng)), fold_in_ref)
_add("random.random_fold_in_key_array", lambda k, m: random_fold_in(k, m),
     lambda rng: (_keys(3)(rng), _u32(3)(rng)), fold_in_ref)
_add("random.random_seed", lambda s: random_seed(s),
     lambda rng: (rng.integers(-2 ** 31, 2 ** 31, (3,)).astype(np.int32),), seed_ref)
_add("random.random_clone", lambda k: random_clone(k), lambda rng: (_keys(2)(rng),),
     lambda k: k)

# --------------------------------------------------------------- samplers
_add("random.key_ops", lambda k: random.fold_in(random.split(k)[1], 7),
     lambda rng: (_keys()(rng),))
_add("random.uniform", lambda k: random.uniform(k, (2, 3)), lambda rng: (_keys()(rng),))
_add("random.uniform_minmax", lambda k, lo: random.uniform(k, (3,), minval=lo, maxval=4.),
     lambda rng: (_keys()(rng), rng.random(3).astype(np.float32)))
_add("random.normal", lambda k: random.normal(k, (4,)), lambda rng: (_keys()(rng),))
_add("random.randint", lambda k: random.randint(k, (5,), -3, 9), lambda rng: (_keys()(rng),))
_add("random.bernoulli", lambda k, p: random.bernoulli(k, p),
     lambda rng: (_keys()(rng), rng.random(4).astype(np.float32)))
_add("random.permutation", lambda k: random.permutation(k, 6), lambda rng: (_keys()(rng),))
_add("random.categorical", lambda k, logits: random.categorical(k, logits),
     lambda rng: (_keys()(rng), rng.standard_normal((2, 4)).astype(np.float32)))
_add("random.gamma", lambda k, a: random.gamma(k, a),
     lambda rng: (_keys()(rng), (rng.random(4) * 3 + 0.2).astype(np.float32)))
_add("random.loggamma", lambda k, a: random.loggamma(k, a, (2, 3)),
     lambda rng: (_keys()(rng), (rng.random(3) * 3 + 0.05).astype(np.float32)))
_add("random.poisson", lambda k, lam: random.poisson(k, lam),
     lambda rng: (_keys()(rng), np.array([0., 0.7, 4., 12., 60.], np.float32)))
_add("random.binomial", lambda k, n: random.binomial(k, n, 0.3),
     lambda rng: (_keys()(rng), np.array([0., 3., 20., 150.], np.float32)))
