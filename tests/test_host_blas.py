"""Large matrix products in compiled CPU programs call the host's BLAS
(control/dot_lowering.py) through zero-copy host kernels
(runtime/host_calls.register_kernel); everything else keeps IREE's
``stablehlo.dot_general``. Values against NumPy in float64, the portable
text users read, the kernel's names across processes, its thread policy."""
import os
import subprocess
import sys

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src import blas_threads
from openjax._src.control import dot_lowering
from openjax._src.runtime import host_blas, host_calls, pipeline
from openjax.sharding import NamedSharding, PartitionSpec as P
from tests.test_compiler import iree_executor
from tests.test_sharded_jit import cpu_devices

KERNEL = host_calls.KERNEL_PREFIX


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "host_blas_cache"):
    yield


def _rand(shape, dtype=np.float32, seed=0):
  rng = np.random.default_rng(seed)
  x = rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * rng.standard_normal(shape)
  return x.astype(dtype)


def _compiled_text(f, *args):
  return jax.jit(f).lower(*args).compile().as_text()


# (lhs shape, rhs shape, dimension numbers): plain, transposed operands (read
# in place by GEMM), batch dimensions first, in the middle and last (the last
# leaves no contiguous axis: the kernel copies), several contracted axes.
PRODUCTS = [
    ((640, 480), (480, 500), (((1,), (0,)), ((), ()))),
    ((480, 640), (480, 500), (((0,), (0,)), ((), ()))),
    ((640, 480), (500, 480), (((1,), (1,)), ((), ()))),
    ((480, 640), (500, 480), (((0,), (1,)), ((), ()))),
    ((4, 400, 300), (4, 300, 320), (((2,), (1,)), ((0,), (0,)))),
    ((400, 4, 300), (300, 4, 320), (((2,), (0,)), ((1,), (1,)))),
    ((300, 400, 4), (320, 4, 300), (((0,), (2,)), ((2,), (1,)))),
    ((16, 40, 30, 40), (30, 40, 400), (((2, 3), (0, 1)), ((), ()))),
]


@pytest.mark.parametrize("dtype", [np.float32, np.complex64])
@pytest.mark.parametrize("lhs_shape,rhs_shape,dnums", PRODUCTS)
def test_large_products_call_blas_and_match_numpy(lhs_shape, rhs_shape, dnums, dtype):
  a, b = _rand(lhs_shape, dtype), _rand(rhs_shape, dtype, seed=1)
  f = lambda x, y: lax.dot_general(x, y, dnums)   # noqa: E731
  assert KERNEL in _compiled_text(f, a, b)
  got = np.asarray(jax.jit(f)(a, b))
  wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
  want = np.asarray(lax.dot_general(a.astype(wide), b.astype(wide), dnums))
  assert got.dtype == dtype and got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5 * np.abs(want).max())


def test_double_precision_products_call_blas():
  with jax.enable_x64(True):
    for dtype in (np.float64, np.complex128):
      a, b = _rand((640, 480), dtype), _rand((480, 500), dtype, seed=1)
      assert KERNEL in _compiled_text(jnp.matmul, a, b)
      got = np.asarray(jax.jit(jnp.matmul)(a, b))
      assert got.dtype == dtype
      np.testing.assert_allclose(got, a @ b, rtol=1e-12)


@pytest.mark.parametrize("case", ["small", "int32", "bfloat16", "mixed", "matvec", "outer",
                                  "thin", "shallow", "small_batches"])
def test_other_products_stay_in_iree(case):
  a, b = _rand((640, 480)), _rand((480, 500), seed=1)
  if case == "small":
    a, b = a[:200, :200], b[:200, :200]   # 1.6e7 flops: under every threshold
  elif case == "int32":
    a, b = np.round(a * 10).astype(np.int32), np.round(b * 10).astype(np.int32)
  elif case == "bfloat16":
    a, b = a.astype(jnp.bfloat16), b.astype(jnp.bfloat16)
  elif case == "mixed":
    b = b.astype(np.float16)
  elif case == "matvec":
    b = b[:, 0]
  elif case == "outer":
    a, b = a[:, :1], b[:1, :]
  elif case == "thin":      # 32 columns
    a, b = _rand((4000, 1000)), _rand((1000, 32), seed=1)
  elif case == "shallow":   # contracting 32
    a, b = _rand((1000, 32)), _rand((32, 5000), seed=1)
  elif case == "small_batches":   # 64 products of 128^2 matrices
    a, b = _rand((64, 128, 128)), _rand((64, 128, 128), seed=1)
  text = _compiled_text(jnp.matmul, a, b)
  assert KERNEL not in text and "stablehlo.dot_general" in text
  got = np.asarray(jax.jit(jnp.matmul)(a, b)).astype(np.float64)
  want = np.matmul(np.asarray(a, np.float64), np.asarray(b, np.float64))
  np.testing.assert_allclose(got, want, rtol=2e-2 if case == "bfloat16" else 1e-5,
                             atol=1e-3 * np.abs(want).max())


def test_lowered_text_is_plain_stablehlo():
  a, b = _rand((640, 640)), _rand((640, 640), seed=1)
  lowered = jax.jit(lambda x, y: jnp.tanh(x @ y)).lower(a, b)
  assert "stablehlo.dot_general" in lowered.as_text()
  assert "openjax_host" not in lowered.as_text()
  compiled = lowered.compile().as_text()
  assert KERNEL in compiled and "stablehlo.dot_general" not in compiled
  # float32 sums of 640 products: OpenBLAS's kernels for the host (AVX2 or
  # AVX-512) and NumPy's add them in different orders (2.8e-5 apart seen).
  np.testing.assert_allclose(np.asarray(lowered.compile()(a, b)), np.tanh(a @ b), atol=1e-4)


def test_host_kernels_off_gives_iree_products_of_the_same_values(monkeypatch):
  a, b = _rand((700, 600)), _rand((600, 500), seed=1)
  f = lambda x, y: jnp.sin(x @ y) @ y.T   # noqa: E731
  with_blas = np.asarray(jax.jit(f)(a, b))
  monkeypatch.setattr(pipeline, "_HOST_KERNELS", False)
  assert KERNEL not in _compiled_text(f, a, b)
  without = np.asarray(jax.jit(lambda x, y: jnp.sin(x @ y) @ y.T)(a, b))
  np.testing.assert_allclose(with_blas, without, rtol=1e-4, atol=1e-3)


def test_gradient_of_a_jitted_mlp_matches_eager():
  rng = np.random.default_rng(3)
  params = [rng.standard_normal((784, 512)).astype(np.float32) * 0.05,
            rng.standard_normal((512, 256)).astype(np.float32) * 0.05]
  x = rng.standard_normal((512, 784)).astype(np.float32)

  def loss(p, x):
    return jnp.mean(jnp.tanh(x @ p[0]) @ p[1])

  assert KERNEL in _compiled_text(jax.grad(loss), params, x)
  got = jax.jit(jax.grad(loss))(params, x)
  want = jax.grad(loss)(params, x)
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-7)


def test_products_inside_loops_call_blas_each_trip():
  w = _rand((600, 600)) / 24

  def body(c, _):
    return jnp.tanh(c @ w), jnp.sum(c)

  f = jax.jit(lambda c: lax.scan(body, c, None, length=5))
  c0 = _rand((600, 600), seed=2)
  assert KERNEL in f.lower(c0).compile().as_text()
  got_c, got_s = f(c0)
  c, sums = c0.astype(np.float64), []
  for _ in range(5):
    sums.append(c.sum())
    c = np.tanh(c @ w)
  np.testing.assert_allclose(np.asarray(got_c), c, rtol=1e-4, atol=1e-5)
  np.testing.assert_allclose(np.asarray(got_s), sums, rtol=1e-4, atol=1e-2)


def test_a_failing_kernel_raises_its_error_at_the_call(monkeypatch):
  def fail(self, lhs, rhs, out):
    raise MemoryError("no room for the product")

  monkeypatch.setattr(dot_lowering._BlasProduct, "__call__", fail)
  a = _rand((700, 600))
  with pytest.raises(MemoryError, match="no room"):
    jax.jit(lambda x: x @ x.T)(a).block_until_ready()


def test_kernel_names_do_not_depend_on_the_process():
  # Equal names in every process keep modules with kernels in the disk cache.
  code = ("import numpy as np, openjax as jax, openjax.numpy as jnp\n"
          "from openjax import config\n"
          "config.update('openjax_executor', 'iree')\n"
          "a = np.ones((700, 500), np.float32)\n"
          "t = jax.jit(lambda x: jnp.sin(x.T @ x)).lower(a).compile().as_text()\n"
          "print([w for w in t.split() if w.startswith('@openjax_host_k')][0])\n")
  jax.pure_callback(lambda x: x, jax.ShapeDtypeStruct((), np.float32), np.float32(0))
  mine = _compiled_text(lambda x: jnp.sin(x.T @ x), np.ones((700, 500), np.float32))
  name = next(w for w in mine.split() if w.startswith("@" + KERNEL))
  env = dict(os.environ, OPENJAX_TIERED_COMPILATION="0")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=env, timeout=300, check=True)
  assert out.stdout.split()[-1].split("(")[0] == name.split("(")[0]


@pytest.mark.parametrize("lhs_shape,rhs_shape,dnums,axis", [
    ((600, 40, 64), (600, 64, 50), (((2,), (1,)), ((0,), (0,))), 0),     # batches
    ((900, 200), (200, 250), (((1,), (0,)), ((), ())), 1),                   # rows
    ((250, 200), (200, 900), (((1,), (0,)), ((), ())), 2),                   # columns
    ((900, 200), (250, 200), (((1,), (1,)), ((), ())), 1),                   # rows, b^T
    ((200, 250), (200, 900), (((0,), (0,)), ((), ())), 2),                   # columns, a^T
])
@pytest.mark.parametrize("dtype", [np.float32, np.complex128])
def test_products_split_into_blocks_over_the_cores(monkeypatch, lhs_shape, rhs_shape, dnums,
                                                   axis, dtype):
  monkeypatch.setattr(host_blas, "host_cores", lambda: 3)
  # the blocks' way, not NumPy's threaded GEMM (as while a compile runs)
  monkeypatch.setattr(blas_threads, "_compiling", True)
  blocks = []
  gemm_block = host_blas._gemm_block

  def record(blas, a, b, out):
    blocks.append(out.shape)
    gemm_block(blas, a, b, out)

  monkeypatch.setattr(host_blas, "_gemm_block", record)
  product = dot_lowering._BlasProduct(lhs_shape, rhs_shape, dnums)
  a, b = _rand(lhs_shape, dtype), _rand(rhs_shape, dtype, seed=1)
  wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
  want = np.asarray(lax.dot_general(a.astype(wide), b.astype(wide), dnums))
  out = np.full(want.shape, np.nan, dtype)
  product(a, b, out)
  np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)
  # three blocks (3 cores) cut along the largest of batch, rows, columns
  full = (product.b, product.m, product.n)
  assert len(blocks) == 3 and sum(s[axis] for s in blocks) == full[axis]
  assert all(s[:axis] + s[axis + 1:] == full[:axis] + full[axis + 1:] for s in blocks)
  # one device's program of an SPMD step computes in one block
  blocks.clear()
  out[...] = np.nan
  monkeypatch.setattr(host_blas, "on_device_thread", lambda: True)
  product(a, b, out)
  assert blocks == [full]
  np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-3)


def test_blas_products_in_sharded_and_pmapped_programs():
  with cpu_devices(2):
    _sharded_and_pmapped_products()


def _sharded_and_pmapped_products():
  mesh = jax.make_mesh((2,), ("x",))
  a, b = _rand((1600, 600)), _rand((600, 600), seed=1) / 24
  f = jax.jit(lambda x, y: jnp.tanh(x @ y) @ y)
  xs = jax.device_put(a, NamedSharding(mesh, P("x")))
  got = f(xs, jax.device_put(b, NamedSharding(mesh, P())))
  assert KERNEL in f.lower(xs, b).compile().as_text()
  np.testing.assert_allclose(np.asarray(got), np.tanh(a @ b) @ b, rtol=1e-4, atol=1e-4)
  g = jax.pmap(lambda x, y: lax.psum(x @ y, "i"), axis_name="i")
  got = g(a.reshape(2, 800, 600), np.stack([b, b]))
  np.testing.assert_allclose(np.asarray(got)[1], a[:800] @ b + a[800:] @ b, rtol=1e-4,
                             atol=1e-4)


# The MLP step's per-device products: 128x784 @ 784x512 (1.03e8 flops) and its
# gradient's 784x128 @ 128x512, under BLAS_MIN_FLOPS (3e8), over
# NARROW_VECTOR_BLAS_MIN_FLOPS (5e7).
MID = ((128, 784), (784, 512), (((1,), (0,)), ((), ())))


@pytest.mark.parametrize("vector_bytes,blas", [
    (32, True),     # AVX2: OpenBLAS's kernels are the faster
    (64, False),    # AVX-512: IREE's kernels were the faster
])
def test_mid_size_products_by_vector_width(monkeypatch, vector_bytes, blas):
  monkeypatch.setattr(dot_lowering, "native_vector_bytes", lambda: vector_bytes)
  lhs_shape, rhs_shape, dnums = MID
  a, b = _rand(lhs_shape), _rand(rhs_shape, seed=1)
  closed = jax.make_jaxpr(lambda x, y: jnp.maximum(lax.dot_general(x, y, dnums), 0.0))(a, b)
  lowered = pipeline.lower_closed_jaxpr(closed, "mid")
  assert (KERNEL in lowered.text) == blas
  got = pipeline.compile_lowered(lowered).execute([jnp.asarray(a), jnp.asarray(b)])[0]
  np.testing.assert_allclose(np.asarray(got), np.maximum(a.astype(np.float64) @ b, 0.0),
                             rtol=1e-4, atol=1e-4)


def test_pmapped_mlp_gradients_use_one_thread_blas_products(monkeypatch):
  # Each device's program runs on a core of its own (execute_per_device), so
  # on hosts without AVX-512 its mid-size products call OpenBLAS on one
  # thread; values as on one device.
  monkeypatch.setattr(dot_lowering, "native_vector_bytes", lambda: 32)
  calls = []
  matmul = host_blas.matmul

  def record(a, b, out):
    calls.append((a.shape, host_blas.on_device_thread()))
    matmul(a, b, out)

  monkeypatch.setattr(host_blas, "matmul", record)
  rng = np.random.default_rng(0)
  w = (rng.standard_normal((784, 512)) / 28).astype(np.float32)
  x = rng.standard_normal((2, 128, 784)).astype(np.float32)

  def loss(w, x):
    return jnp.sum(jnp.tanh(x @ w) ** 2)

  with cpu_devices(2):
    step = jax.pmap(lambda w, x: lax.pmean(jax.grad(loss)(w, x), "i"), axis_name="i")
    got = np.asarray(step(np.stack([w, w]), x))
  want = np.mean([np.asarray(jax.grad(loss)(w, x[k])) for k in range(2)], axis=0)
  np.testing.assert_allclose(got[0], want, rtol=2e-4, atol=2e-4)
  np.testing.assert_allclose(got[1], want, rtol=2e-4, atol=2e-4)
  assert calls and all(on_thread for _, on_thread in calls)
  assert {shape for shape, _ in calls} >= {(1, 128, 784), (1, 784, 128)}
