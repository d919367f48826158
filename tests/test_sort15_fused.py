"""Fused sort steps of library programs (``primitives/sort/sort_fused.py``):
argsort/lexsort's permutation alone, top_k's values alone. Each eager call
must give the bits of the equations run one by one (``disable_jit``: the
sort impl and its takes) and of the compiled program, with JAX's jaxpr."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.program import program_of
from openjax._src.primitives.sort.sort import _top_k_argsort
from openjax._src.primitives.sort.sort_fused import top_k_values


def _same_bits(a, b) -> None:
  a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


def _kernels(f, *args):
  jaxpr = jax.make_jaxpr(f)(*args).jaxpr
  if jaxpr.eqns and jaxpr.eqns[0].primitive.name == "jit":
    jaxpr = jaxpr.eqns[0].params["jaxpr"].jaxpr
  return [getattr(s[0], "__qualname__", "") for s in program_of(jaxpr).kernel_steps]


def _sample(dtype, shape, seed=0):
  rng = np.random.default_rng(seed)
  dt = np.dtype(dtype)
  if dt == np.bool_:
    return rng.random(shape) < 0.5
  if dt.kind in "iu":
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -5), min(info.max, 5), shape, endpoint=True).astype(dt)
  x = np.round(rng.standard_normal(shape) * 2) / 2   # ties
  x = x.astype(dt)
  flat = x.reshape(-1)
  if flat.size >= 8:
    flat[::7] = dt.type(0.0)
    flat[3::11] = -dt.type(0.0)
    flat[1::13] = np.nan
    flat[5::17] = -np.inf
    flat[6::19] = np.inf
  if dt in (np.float16, np.float32, np.float64) and flat.size >= 30:
    bits = flat.view(f"u{dt.itemsize}")
    bits[29] |= 1   # a NaN payload
    bits[29] |= np.array(np.nan, dt).view(bits.dtype)
    flat[27] = -np.abs(np.array(np.nan, dt))   # a negative NaN
  return x


_DTYPES = [np.float32, np.float16, np.float64, np.int32, np.uint8, np.int8, np.bool_,
           ml_dtypes.bfloat16]
_SHAPES = [(0,), (1,), (9,), (3, 3), (4, 7), (40, 25), (3000,), (60, 50), (2, 3, 4)]


def _op_by_op(f, *args):
  with jax.disable_jit():
    return f(*args)


@pytest.mark.parametrize("dtype", _DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", _SHAPES, ids=str)
def test_argsort_fused_matches_the_sort_impl(shape, dtype):
  x = jnp.asarray(_sample(dtype, shape))
  for axis in range(-len(shape), len(shape)):
    f = lambda v, a=axis: jnp.argsort(v, axis=a)   # noqa: E731
    got = f(x)
    _same_bits(got, _op_by_op(f, x))
    _same_bits(got, np.argsort(np.asarray(x).astype(np.float32) if dtype == ml_dtypes.bfloat16
                               else np.asarray(x), axis=axis, kind="stable").astype(got.dtype))
  _same_bits(jnp.argsort(x, axis=None), _op_by_op(lambda v: jnp.argsort(v, axis=None), x))
  _same_bits(jnp.argsort(x, axis=-1, dtype=jnp.int16),
             _op_by_op(lambda v: jnp.argsort(v, axis=-1, dtype=jnp.int16), x))


def test_argsort_fused_is_one_kernel_and_the_jaxpr_is_jax():
  x = jnp.asarray(_sample(np.float32, (3, 3)))
  kernels = _kernels(lambda v: jnp.argsort(v, axis=0), x)
  assert kernels == ["_argsort_pattern.<locals>.kernel"]
  text = str(jax.make_jaxpr(lambda v: jnp.argsort(v, axis=0))(x))
  assert "iota[dimension=0 dtype=int32 shape=(3, 3) sharding=None]" in text
  assert "sort[dimension=0 is_stable=True num_keys=1]" in text
  # A sort whose keys are read keeps its impl (sort_key_val).
  kernels = _kernels(lambda v: jax.lax.sort_key_val(v, jax.lax.broadcasted_iota(
      np.int32, v.shape, 0), dimension=0), x)
  assert "_argsort_pattern.<locals>.kernel" not in kernels


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float16, np.bool_,
                                   ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1,), (10,), (5, 4), (60, 50), (3000,)], ids=str)
def test_lexsort_fused_matches_the_sort_impl(shape, dtype):
  a, b = (jnp.asarray(_sample(dtype, shape, seed)) for seed in (1, 2))
  c = jnp.asarray(_sample(np.int32, shape, 3))
  for axis in range(-len(shape), len(shape)):
    for keys in ((a, b), [a, b, c], (c,)):
      f = lambda *k, ax=axis, t=type(keys): jnp.lexsort(t(k), axis=ax)   # noqa: E731
      got = f(*keys)
      _same_bits(got, _op_by_op(f, *keys))
      ref = [np.asarray(k).astype(np.float32) if k.dtype == ml_dtypes.bfloat16 else np.asarray(k)
             for k in keys]
      _same_bits(got, np.lexsort(ref, axis=axis).astype(got.dtype))
  assert _kernels(lambda u, v: jnp.lexsort((u, v)), a, b) == [
      "_argsort_pattern.<locals>.kernel"]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.float64, np.int32, np.uint8,
                                   np.int8, np.bool_], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1,), (9,), (4, 7), (60, 50), (3000,), (2, 3, 4)], ids=str)
def test_top_k_values_match_the_impl(shape, dtype):
  x = _sample(dtype, shape)
  for axis in range(len(shape)):
    n = shape[axis]
    for k in sorted({0, 1, n // 2, n - 1, n}):
      if k < 0:
        continue
      want, _ = _top_k_argsort(x, k=k, axis=axis)
      _same_bits(top_k_values(x, k, axis), want)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.float16],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(1,), (10,), (5, 4), (60, 50), (3000,), (20000,)], ids=str)
def test_partition_fused_matches_op_by_op(shape, dtype):
  x = jnp.asarray(_sample(dtype, shape))
  for axis in range(len(shape)):
    n = shape[axis]
    for kth in sorted({0, n // 3, n - 1}):
      f = lambda v, kt=kth, a=axis: jnp.partition(v, kt, axis=a)   # noqa: E731
      got = f(x)
      _same_bits(got, _op_by_op(f, x))
      g = lambda v, kt=kth, a=axis: jnp.argpartition(v, kt, axis=a)   # noqa: E731
      _same_bits(g(x), _op_by_op(g, x))


def test_partition_takes_the_values_kernel():
  x = jnp.asarray(_sample(np.float32, (3000,)))
  kernels = _kernels(lambda v: jnp.partition(v, 2), x)
  assert kernels.count("_top_k_values_pattern.<locals>.kernel") == 2
  small = jnp.asarray(_sample(np.float32, (20,)))
  assert _kernels(lambda v: jnp.partition(v, 2), small).count(
      "_top_k_values_pattern.<locals>.kernel") == 2
  # argpartition reads top_k's indices: the impl.
  assert "_top_k_values_pattern.<locals>.kernel" not in _kernels(
      lambda v: jnp.argpartition(v, 2), x)


def test_fused_sorts_compiled_and_under_jit_agree():
  x = jnp.asarray(_sample(np.float32, (40, 25)))
  for f in (lambda v: jnp.argsort(v, axis=0), lambda v: jnp.partition(v, 3),
            lambda v: jnp.lexsort((v, -v), axis=0)):
    _same_bits(jax.jit(f)(x), f(x))



@pytest.mark.parametrize("zeros", ["negative", "positive", "both", "none"])
@pytest.mark.parametrize("shape,axis", [((40000,), 0), ((200, 150), 1), ((200, 150), 0)],
                         ids=str)
def test_float16_sort_through_float32_keeps_the_bits(shape, axis, zeros):
  from openjax._src.primitives.sort.sort import _sort_lexsort
  rng = np.random.default_rng(7)
  x = (rng.standard_normal(shape) * 100).astype(np.float16)
  flat = x.reshape(-1)
  flat[::5] = rng.choice(np.array([0.0, 1.0, -2.5, 65504.0, -np.inf, np.inf], np.float16),
                         flat[::5].size)
  if zeros != "none":
    signs = {"negative": [-0.0], "positive": [0.0], "both": [0.0, -0.0]}[zeros]
    flat[3::7] = rng.choice(np.array(signs, np.float16), flat[3::7].size)
  bits = flat.view(np.uint16)
  bits[1::97] = rng.choice(np.array([0x7E00, 0xFE00, 0x7C01, 0xFD55, 0x7FFF], np.uint16),
                           bits[1::97].size)   # quiet, negative, signalling, payload NaNs
  bits[11::1001] = 0x0001   # subnormals
  want, = _sort_lexsort(x, dimension=axis, is_stable=True, num_keys=1)
  got = jnp.sort(jnp.asarray(x), axis=axis)
  _same_bits(got, want)
  _same_bits(jax.jit(lambda v: jnp.sort(v, axis=axis))(jnp.asarray(x)), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.uint8, np.int64],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", [(5000,), (70, 60), (3, 2000)], ids=str)
def test_top_k_values_of_a_few_by_partition(shape, dtype):
  rng = np.random.default_rng(3)
  dt = np.dtype(dtype)
  if dt.kind == "f":
    x = (np.round(rng.standard_normal(shape) * 8) / 4 + 0.125).astype(dt)   # ties, no zeros
  else:
    x = rng.integers(0 if dt.kind == "u" else -20, 20, shape).astype(dt)
  for axis in range(len(shape)):
    n = shape[axis]
    for k in (1, 2, 3, n // 2):
      want, _ = _top_k_argsort(x, k=k, axis=axis)
      _same_bits(top_k_values(x, k, axis), want)
      if dt.kind == "f":   # a zero or NaN among the largest: the packed kernel
        y = x.copy()
        np.moveaxis(y, axis, -1)[..., 0] = np.nan
        np.moveaxis(y, axis, -1)[..., 1] = -0.0
        want, _ = _top_k_argsort(y, k=k, axis=axis)
        _same_bits(top_k_values(y, k, axis), want)
        _same_bits(top_k_values(-np.abs(y), k, axis), _top_k_argsort(-np.abs(y), k=k, axis=axis)[0])
