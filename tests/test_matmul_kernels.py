"""Which IREE kernel and data-tiling path compile a module's matrix products
(compiler.py ``data_tiling_flags``), the fallback when IREE rejects them, and
compiled results of the products they apply to."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.runtime import compiler, pipeline
from tests.test_compiler import iree_executor

f32 = np.float32
INNER = compiler.INNER_TILED_FLAG
DEFAULT = (compiler.DATA_TILING_FLAG,)
AVX512 = compiler._host_has_avx512()
PLAIN = DEFAULT + (INNER,) if AVX512 else DEFAULT
GLOBAL = (compiler.GLOBAL_DATA_TILING_FLAG, INNER) if AVX512 else DEFAULT


@pytest.fixture(autouse=True)
def _iree(tmp_path, monkeypatch):
  # IREE's own kernels: large products would call BLAS (control/dot_lowering).
  monkeypatch.setattr(pipeline, "_HOST_KERNELS", False)
  # A private disk cache per test, so a compile (and its fallback) happens.
  compiler.clear_memory_cache()
  with iree_executor(tmp_path / "cache"):
    yield
  compiler.clear_memory_cache()


def _text(f, *args):
  return jax.jit(f).lower(*args).as_text()


def _tiling(f, *args):
  flags = compiler.compile_flags(_text(f, *args))
  return flags[len(compiler.BASE_FLAGS):]


def _rand(*shape, dtype=f32, seed=0):
  x = np.random.default_rng(seed).standard_normal(shape) * 2
  return np.round(x).astype(dtype) if np.dtype(dtype).kind == "i" else x.astype(dtype)


def test_large_plain_products_get_the_inner_tiled_kernel():
  a, b = _rand(600, 500), _rand(500, 400)
  assert _tiling(lambda a, b: a @ b, a, b) == PLAIN
  # a scalar broadcast (2 * x) is no vector broadcast
  assert _tiling(lambda a, b: 2.0 * (a @ b), a, b) == PLAIN


def test_deep_products_with_a_bias_take_the_global_path():
  x, w, b = _rand(256, 784), _rand(784, 512), _rand(512)
  assert _tiling(lambda x, w, b: jax.nn.relu(x @ w + b), x, w, b) == GLOBAL
  # shallow (K = 30): a separate unpacking pass would cost more than it saves
  x, w, b = _rand(2000, 30), _rand(30, 1000), _rand(1000)
  assert _tiling(lambda x, w, b: x @ w + b, x, w, b) == DEFAULT
  # one deep product (K = 10000) does not make up for a shallow one's large
  # output (the vmap_logprob gradient: mean depth 60)
  betas, x, y = _rand(1000, 30), _rand(10000, 30), _rand(10000)
  assert _tiling(lambda b, x, y: jnp.tanh(b @ x.T + y) @ x, betas, x, y) == DEFAULT


def test_small_products_and_convolutions_keep_the_defaults():
  assert "--iree-opt-data-tiling=false" in _tiling(lambda a, b: a @ b, _rand(64, 64), _rand(64, 64))
  conv = lambda x, w: jax.lax.conv_general_dilated(   # noqa: E731
      x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
  assert _tiling(conv, _rand(8, 32, 32, 32), _rand(3, 3, 32, 64)) == DEFAULT
  # the generic MLIR form of a broadcast is recognised too
  generic = ('%0 = "stablehlo.dot_general"(%a, %b) : (tensor<600x30xf32>, '
             'tensor<30x400xf32>) -> tensor<600x400xf32>\n%1 = "stablehlo.broadcast_in_dim"'
             '(%c) <{broadcast_dimensions = array<i64: 1>}>')
  assert compiler.data_tiling_flags(generic, 30.0) == DEFAULT


def test_compiler_options_turn_the_kernel_off():
  a, b = _rand(600, 500), _rand(500, 400)
  flags = compiler.compile_flags(_text(lambda a, b: a @ b, a, b),
                                 {"iree-llvmcpu-enable-inner-tiled": False})
  assert flags[-1] == INNER + "=false"     # last occurrence wins in IREE's flag parser


@pytest.mark.parametrize("name,f,shapes,dtype,expected", [
    ("matmul", lambda a, b: a @ b, [(600, 500), (500, 400)], f32, PLAIN),
    ("odd", lambda a, b: a @ b, [(257, 1000), (1000, 513)], f32, PLAIN),
    ("int32", lambda a, b: a @ b, [(600, 500), (500, 400)], np.int32, PLAIN),
    ("batched", lambda a, b: a @ b, [(16, 200, 300), (16, 300, 250)], f32, PLAIN),
    ("lhs_T", lambda a, b: a.T @ b, [(500, 600), (500, 700)], f32, PLAIN),
    ("rhs_T", lambda a, b: a @ b.T, [(600, 500), (700, 500)], f32, PLAIN),
    ("chain_tanh", lambda a, b, c: jnp.tanh((a @ b) @ c * 3e-4) * 3.0,
     [(600, 500), (500, 400), (400, 300)], f32, PLAIN),
    ("matvec_wide", lambda a, b: a @ b, [(1, 100000), (100000, 512)], f32, PLAIN),
    ("bias_relu", lambda x, w, b: jax.nn.relu(x @ w + b), [(256, 784), (784, 512), (512,)],
     f32, GLOBAL),
    ("bias_N10", lambda x, w, b: x @ w + b, [(8000, 512), (512, 10), (10,)], f32, GLOBAL),
    ("bias_lhs_T_update", lambda x, g, p: p - 0.01 * (x.T @ g) + p.mean(0),
     [(256, 784), (256, 512), (784, 512)], f32, GLOBAL),
])
def test_compiled_products_match_numpy(name, f, shapes, dtype, expected):
  args = [_rand(*s, dtype=dtype, seed=i) for i, s in enumerate(shapes)]
  assert _tiling(f, *args) == expected
  got = np.asarray(jax.jit(f)(*args))
  default = np.asarray(jax.jit(f, compiler_options={INNER[2:]: False})(*args))
  np.testing.assert_allclose(got, default, rtol=1e-5, atol=1e-6 * np.abs(default).max())
  want = np.asarray(f(*[a.astype(np.float64) if dtype == f32 else a for a in args]))
  if dtype == np.int32:
    np.testing.assert_array_equal(got, want)
  else:
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3 * np.abs(want).max())


def test_a_rejected_inner_tiled_kernel_falls_back_once(monkeypatch):
  # Pretend the broadcast check missed x @ w + b (IREE 3.13 cannot compile it
  # inner-tiled): the module still compiles, with the default kernel.
  monkeypatch.setattr(compiler, "_VECTOR_BROADCAST", re.compile(r"(?!)"))
  monkeypatch.setattr(compiler, "_host_has_avx512", lambda: True)
  x, w, b = _rand(256, 784), _rand(784, 512, seed=1), _rand(512, seed=2)
  f = lambda x, w, b: x @ w + b   # noqa: E731
  assert _tiling(f, x, w, b) == DEFAULT + (INNER,)
  before = dict(compiler.stats)
  got = np.asarray(jax.jit(f)(x, w, b))
  np.testing.assert_allclose(got, x.astype(np.float64) @ w + b, rtol=1e-4, atol=1e-3)
  assert compiler.stats["inner_tiled_fallbacks"] == before["inner_tiled_fallbacks"] + 1
  assert compiler.stats["compiles"] == before["compiles"] + 1
  # the fallback's result is cached under the module's key: no second failure
  compiler.clear_memory_cache()
  np.asarray(jax.jit(lambda x, w, b: x @ w + b)(x, w, b))
  assert compiler.stats["inner_tiled_fallbacks"] == before["inner_tiled_fallbacks"] + 1
  assert compiler.stats["disk_hits"] == before["disk_hits"] + 1
