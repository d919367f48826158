"""Long sorts in compiled programs run as host kernels
(control/sort_host_lowering.py): the sort primitive's NumPy impl on views of
the program's buffers. Compiled values against the eager (interpreted)
values and NumPy, bit for bit, for every dtype group, NaN/-0.0/inf mixes,
several operands and keys, axes, the JAX functions built on sort and its
transformations; the rule (long -> kernel, short -> IREE's sort); the
StableHLO users read stays plain; top_k that sorts long rows."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import sort_host_lowering
from openjax._src.core import ShapedArray
from openjax._src.runtime import host_calls
from tests.test_compiler import iree_executor

KERNEL = host_calls.KERNEL_PREFIX


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "host_sort_cache"):
    yield


def _kernel_count(f, *args):
  return jax.jit(f).lower(*args).compile().as_text().count(KERNEL)


def _bits(x):
  """An array's bytes with its dtype and shape: equality is bit equality."""
  x = np.asarray(x)
  return x.dtype, x.shape, x.tobytes()


def _check(f, *args, kernels=True):
  """``jit(f)`` compiled equals ``f`` eager bit for bit, and calls (or not) a kernel."""
  assert (_kernel_count(f, *args) > 0) == kernels
  got = jax.tree_util.tree_leaves(jax.jit(f)(*args))
  want = jax.tree_util.tree_leaves(f(*args))
  assert [_bits(g) for g in got] == [_bits(w) for w in want]
  return [np.asarray(g) for g in got]


def _specials(dtype, n, seed=0):
  """``n`` values of a float (complex) ``dtype`` with repeats, zeros of both
  signs, infinities and NaNs (of two sign bits)."""
  rng = np.random.default_rng(seed)
  x = rng.integers(-4, 5, n).astype(np.float64) / 2
  pick = rng.integers(0, 8, n)
  x[pick == 0] = -0.0
  x[pick == 1] = np.inf
  x[pick == 2] = -np.inf
  x[pick == 3] = np.nan
  x[pick == 4] = -np.nan
  if np.dtype(dtype).kind == "c":
    y = rng.integers(-2, 3, n).astype(np.float64)
    y[rng.integers(0, 6, n) == 0] = np.nan
    y[rng.integers(0, 6, n) == 0] = -0.0
    return (x + 1j * y).astype(dtype)
  return x.astype(dtype)


def _values(dtype, shape, seed=0):
  dt = np.dtype(dtype)
  n = int(np.prod(shape))
  rng = np.random.default_rng(seed)
  if dt == np.bool_:
    x = rng.integers(0, 2, n).astype(bool)
  elif dt.kind in "iu":
    info = np.iinfo(dt)
    x = rng.integers(max(info.min, -50), min(info.max, 50), n, endpoint=True).astype(dt)
  else:
    x = _specials(dt, n, seed)
  return x.reshape(shape)


def _numpy_sort(x, axis=-1):
  """NumPy's stable sort in JAX's order (the reference: -0.0 == 0.0, NaNs last)."""
  x = np.asarray(x)
  if x.dtype.kind == "c":
    perm = np.lexsort((x.imag, x.real), axis=axis)
  else:
    key = x.astype(np.float64) if x.dtype.kind == "V" else x   # ml_dtypes' floats
    perm = np.argsort(key, axis=axis, kind="stable")
  return np.take_along_axis(x, perm, axis)


DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, np.int8,
          np.int16, np.int32, np.uint8, np.uint16, np.uint32, np.bool_, np.complex64]


def test_every_dtype_group_sorts_on_the_host_as_eager():
  xs = {np.dtype(dt).name: _values(dt, (3, 300), seed=i) for i, dt in enumerate(DTYPES)}
  got = _check(lambda xs: {name: lax.sort(x, dimension=1) for name, x in xs.items()}, xs)
  for g, name in zip(got, sorted(xs)):   # leaves in key order
    want = _numpy_sort(xs[name], axis=1)
    if want.dtype.kind in "fV":   # (ml_dtypes' floats: "V")
      np.testing.assert_array_equal(g.astype(np.float64), want.astype(np.float64), err_msg=name)
    else:
      np.testing.assert_array_equal(g, want, err_msg=name)


def test_64_bit_dtypes():
  with jax.enable_x64(True):
    xs = {np.dtype(dt).name: _values(dt, (2, 400), seed=i)
          for i, dt in enumerate((np.float64, np.int64, np.uint64, np.complex128))}
    got = _check(lambda xs: {name: jnp.sort(x, axis=-1) for name, x in xs.items()}, xs)
    for g, name in zip(got, sorted(xs)):
      np.testing.assert_array_equal(g, _numpy_sort(xs[name], axis=-1), err_msg=name)


@pytest.mark.parametrize("n", [600, 20000])
def test_nan_and_signed_zero_runs_keep_their_input_order(n):
  # 20000 elements take the eager kernel's SIMD sort with its runs restored.
  x = _specials(np.float32, n, seed=n)
  got, = _check(jnp.sort, x)
  want = _numpy_sort(x)
  assert got.view(np.uint32).tolist() == want.view(np.uint32).tolist()


def test_the_host_matches_the_compiled_radix_and_comparator_sorts(monkeypatch):
  x = _specials(np.float32, 3000, seed=3).reshape(3, 1000)
  perm = jnp.asarray(np.random.default_rng(0).permutation(3000).reshape(3, 1000).astype(np.int32))

  def f(x, v):
    return lax.sort((x, v), dimension=1, num_keys=1)
  host = _check(f, x, perm)
  monkeypatch.setattr(sort_host_lowering, "HOST_MIN_ROW", 1 << 40)
  iree = _check(f, x, perm, kernels=False)   # the radix sort (rows of 1000)
  assert [_bits(h) for h in host] == [_bits(i) for i in iree]
  monkeypatch.undo()
  short = _check(lambda x: lax.sort(x[:, :60], dimension=1), x, kernels=False)   # comparator
  monkeypatch.setattr(sort_host_lowering, "HOST_MIN_WORK", 0)
  host_short = _check(lambda x: lax.sort(x[:, :60], dimension=1), x)
  assert _bits(short[0]) == _bits(host_short[0])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_axes_of_2d_and_3d(axis):
  x2 = _specials(np.float32, 200 * 30, seed=1).reshape(200, 30)
  got, = _check(lambda x: jnp.sort(x, axis=axis), x2)
  np.testing.assert_array_equal(got, _numpy_sort(x2, axis=axis))
  x3 = _specials(np.float32, 8 * 20 * 30, seed=2).reshape(8, 20, 30)
  got, = _check(lambda x: jnp.sort(x, axis=axis), x3)
  np.testing.assert_array_equal(got, _numpy_sort(x3, axis=axis))


def test_several_operands_by_one_and_two_keys():
  rng = np.random.default_rng(4)
  k1 = rng.integers(0, 4, (5, 300)).astype(np.int32)
  k2 = _specials(np.float32, 1500, seed=5).reshape(5, 300)
  v = rng.standard_normal((5, 300)).astype(np.float32)
  one = _check(lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=1), k1, k2, v)
  perm = np.argsort(k1, axis=1, kind="stable")
  for got, x in zip(one, (k1, k2, v)):
    assert _bits(got) == _bits(np.take_along_axis(x, perm, 1))
  two = _check(lambda a, b, c: lax.sort((a, b, c), dimension=1, num_keys=2), k1, k2, v)
  perm = np.lexsort((k2, k1), axis=1)
  for got, x in zip(two, (k1, k2, v)):
    np.testing.assert_array_equal(got, np.take_along_axis(x, perm, 1))
  # An operand passed twice.
  _check(lambda a, b: lax.sort((a, b, a), dimension=0, num_keys=1), k2.T, v.T)


def test_descending_argsort_and_sort_key_val():
  x = _specials(np.float32, 2000, seed=6)
  v = np.arange(2000, dtype=np.int32)

  def f(x, v):   # one program (one compile)
    return (jnp.sort(x, descending=True), jnp.argsort(x), jnp.argsort(x, descending=True),
            lax.sort_key_val(x, v))
  desc, idx, idx_desc, keys, vals = _check(f, x, v)
  stable = np.argsort(x, kind="stable")
  np.testing.assert_array_equal(desc, _numpy_sort(x)[::-1])
  np.testing.assert_array_equal(idx, stable)
  np.testing.assert_array_equal(vals, stable)
  np.testing.assert_array_equal(keys, x[stable])
  # descending and stable: equal keys (NaNs, zeros of both signs) in input order
  rev = x.shape[0] - 1 - np.argsort(x[::-1], kind="stable")[::-1]
  np.testing.assert_array_equal(idx_desc, rev)


def test_grad_of_sort_and_vmap_of_a_jitted_sort():
  x = np.random.default_rng(7).standard_normal(500).astype(np.float32)
  w = np.linspace(0.0, 1.0, 500, dtype=np.float32)

  def loss(x):
    return jnp.sum(jnp.sort(x) * w)
  g = jax.grad(loss)
  assert _kernel_count(g, x) > 0
  got = np.asarray(jax.jit(g)(x))
  want = np.empty_like(w)
  want[np.argsort(x, kind="stable")] = w
  np.testing.assert_array_equal(got, want)
  xs = np.random.default_rng(8).standard_normal((6, 500)).astype(np.float32)
  got = np.asarray(jax.jit(jax.vmap(jax.jit(jnp.sort)))(xs))
  np.testing.assert_array_equal(got, np.sort(xs, axis=1))


def test_short_sorts_keep_the_compiled_sort():
  cases = [((100,), 0), ((1000, 4), 1), ((100, 7), 1), ((4, 50), 1), ((2, 1), 1)]
  xs = [_specials(np.float32, int(np.prod(shape)), seed=9).reshape(shape) for shape, _ in cases]

  def f(*xs):   # one program (one compile)
    return [jnp.sort(x, axis=axis) for x, (_, axis) in zip(xs, cases)]
  got = _check(f, *xs, kernels=False)
  for g, x, (_, axis) in zip(got, xs, cases):
    np.testing.assert_array_equal(g, _numpy_sort(x, axis=axis))


def test_the_rule():
  f32, c64 = np.dtype(np.float32), np.dtype(np.complex64)

  def worth(shape, axis=-1, dtypes=(f32,), num_keys=1):
    avals = [ShapedArray(shape, dt) for dt in dtypes]
    return sort_host_lowering.worth_host(avals, axis % max(len(shape), 1), num_keys)
  assert worth((1_000_000,)) and worth((1000, 1000), 0) and worth((150,))
  assert worth((1000, 16)) and worth((1000, 8))
  assert not worth((100,)) and not worth((100_000, 4)) and not worth((100, 7))
  assert not worth((10, 20)) and not worth((0, 1000)) and not worth(())
  assert worth((2, 300), dtypes=(c64, f32))
  assert not worth((64,), dtypes=(np.dtype(ml_dtypes.int4),))


def test_lowered_text_is_plain_stablehlo():
  x = np.zeros(5000, np.float32)
  lowered = jax.jit(jnp.sort).lower(x)
  assert KERNEL not in lowered.as_text()
  assert "stablehlo.while" in lowered.as_text()   # the radix sort
  assert KERNEL in lowered.compile().as_text()


def _numpy_top_k(x, k):
  """top_k's reference: descending, NaN largest, equal keys in index order."""
  key = np.where(np.isnan(x), np.inf, x).astype(np.float64)
  order = np.lexsort((np.broadcast_to(np.arange(x.shape[-1]), x.shape), -key,
                      ~np.isnan(x)), axis=-1)[..., :k]
  return np.take_along_axis(x, order, -1), order.astype(np.int32)


def _many_on_the_host(top_k, seed):
  """``top_k(x, 40)`` of 3 rows of 500 calls the kernel and gives NumPy's
  order (descending, NaN first, ties in index order); the input and indices."""
  x = _specials(np.float32, 3 * 500, seed=seed).reshape(3, 500)
  values, idx = _check(lambda x: top_k(x, 40), x)
  want_values, want_idx = _numpy_top_k(x, 40)
  np.testing.assert_array_equal(idx, want_idx)
  np.testing.assert_array_equal(values, want_values)
  return x, want_idx


def test_top_k_of_many_sorts_on_the_host_and_few_select():
  x, want_idx = _many_on_the_host(lax.top_k, seed=12)
  # a few of long rows: IREE's selection by min-reductions stays
  y = _specials(np.float32, 5000, seed=13)
  values, idx = _check(lambda y: lax.top_k(y, 3), y, kernels=False)
  np.testing.assert_array_equal(idx, _numpy_top_k(y, 3)[1])
  # the gradient scatters through the kernel's indices
  g = jax.jit(jax.grad(lambda x: jnp.sum(lax.top_k(x, 40)[0] * 2.0)))(x)
  want = np.zeros_like(x)
  np.put_along_axis(want, want_idx.astype(np.int64), 2.0, -1)
  np.testing.assert_array_equal(np.asarray(g), want)


def test_the_top_k_rule():
  def worth(shape, k):
    return sort_host_lowering.top_k_worth_host(ShapedArray(shape, np.dtype(np.float32)), k,
                                               len(shape) - 1)
  assert worth((10 ** 6,), 100) and worth((100, 1000), 40) and worth((300,), 10)
  assert worth((1000, 16), 3)
  assert not worth((10 ** 6,), 32) and not worth((100, 1000), 5) and not worth((100,), 40)
  assert not worth((0, 100), 0)


def test_sorts_inside_loops_and_conditionals():
  xs = _specials(np.float32, 4 * 300, seed=14).reshape(4, 300)

  def f(xs):
    def body(carry, x):
      s = jnp.sort(x + carry[0])
      return carry + s[:1], s
    _, ys = lax.scan(body, jnp.zeros(1, np.float32), xs)
    z = lax.cond(xs[0, 0] > 0, lambda x: jnp.sort(x), lambda x: jnp.sort(-x), xs[1])
    return ys, z
  _check(f, xs)


def test_approx_top_k_of_many_sorts_on_the_host_and_few_select():
  x, _ = _many_on_the_host(lax.approx_max_k, seed=14)
  _check(lambda x: lax.approx_min_k(x, 40, reduction_dimension=0), x.T.copy())
  _check(lambda x: lax.approx_max_k(x, 10, aggregate_to_topk=False), x)
  y = _specials(np.float32, 5000, seed=15)
  _check(lambda y: lax.approx_max_k(y, 3), y, kernels=False)


def test_rows_of_a_large_sort_split_over_the_cores(monkeypatch):
  from openjax._src.runtime import host_blas
  monkeypatch.setattr(sort_host_lowering, "BLOCK_MIN_ELEMENTS", 500)
  monkeypatch.setattr(host_blas, "host_cores", lambda: 3)
  counts = []
  real = host_blas.run_blocks

  def counting(work, count):
    counts.append(count)
    return real(work, count)
  monkeypatch.setattr(host_blas, "run_blocks", counting)
  x = _specials(np.float32, 7 * 300, seed=21).reshape(7, 300)
  payload = np.arange(7 * 300, dtype=np.int32).reshape(7, 300)
  _check(lambda x: jnp.sort(x, axis=1), x)
  _check(lambda x: jnp.sort(x, axis=0), x.T.copy())    # split along axis 1
  _check(lambda x, y: lax.sort((x, y), dimension=1, num_keys=1), x, payload)
  _check(lambda x: jnp.sort(x, axis=1), _specials(np.float32, 2 * 600, seed=22).reshape(2, 600))
  assert counts == [3, 3, 3, 2]
