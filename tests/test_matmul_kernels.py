"""Which IREE kernel compiles a module's matrix products (compiler.py
``matmul_kernel_flags``), the fallback when IREE rejects the faster one, and
compiled results of the products it applies to."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.runtime import compiler
from tests.test_compiler import iree_executor

f32 = np.float32
INNER = compiler.INNER_TILED_FLAG
EXPECTED = (INNER,) if compiler._host_has_avx512() else ()


@pytest.fixture(autouse=True)
def _iree(tmp_path):
  # A private disk cache per test, so a compile (and its fallback) happens.
  compiler.clear_memory_cache()
  with iree_executor(tmp_path / "cache"):
    yield
  compiler.clear_memory_cache()


def _text(f, *args):
  return jax.jit(f).lower(*args).as_text()


def _rand(*shape, dtype=f32, seed=0):
  x = np.random.default_rng(seed).standard_normal(shape) * 2
  return np.round(x).astype(dtype) if np.dtype(dtype).kind == "i" else x.astype(dtype)


def test_large_plain_products_get_the_inner_tiled_kernel():
  a, b = _rand(600, 500), _rand(500, 400)
  assert compiler.matmul_kernel_flags(_text(lambda a, b: a @ b, a, b)) == EXPECTED
  assert compiler.compile_flags(_text(lambda a, b: a @ b, a, b))[-1] == (
      INNER if EXPECTED else "--iree-opt-data-tiling")
  # a scalar broadcast (2 * x) is no vector broadcast
  assert compiler.matmul_kernel_flags(_text(lambda a, b: 2.0 * (a @ b), a, b)) == EXPECTED


def test_vector_broadcasts_small_products_and_convolutions_keep_the_default_kernel():
  a, b, c = _rand(600, 500), _rand(500, 400), _rand(400)
  assert compiler.matmul_kernel_flags(_text(lambda a, b, c: a @ b + c, a, b, c)) == ()
  small = _text(lambda a, b: a @ b, _rand(64, 64), _rand(64, 64))
  assert INNER not in compiler.compile_flags(small)
  conv = _text(lambda x, w: jax.lax.conv_general_dilated(
      x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
      _rand(8, 32, 32, 32), _rand(3, 3, 32, 64))
  assert compiler.matmul_kernel_flags(conv) == ()
  # the generic MLIR form is recognised too
  generic = ('%0 = "stablehlo.dot_general"(%a, %b) : (tensor<600x500xf32>, '
             'tensor<500x400xf32>) -> tensor<600x400xf32>\n%1 = "stablehlo.broadcast_in_dim"'
             '(%c) <{broadcast_dimensions = array<i64: 1>}>')
  assert compiler.matmul_kernel_flags(generic) == ()


def test_compiler_options_turn_the_kernel_off():
  a, b = _rand(600, 500), _rand(500, 400)
  flags = compiler.compile_flags(_text(lambda a, b: a @ b, a, b),
                                 {"iree-llvmcpu-enable-inner-tiled": False})
  assert flags[-1] == INNER + "=false"     # last occurrence wins in IREE's flag parser


@pytest.mark.parametrize("name,f,shapes,dtype", [
    ("matmul", lambda a, b: a @ b, [(600, 500), (500, 400)], f32),
    ("odd", lambda a, b: a @ b, [(257, 1000), (1000, 513)], f32),
    ("int32", lambda a, b: a @ b, [(600, 500), (500, 400)], np.int32),
    ("batched", lambda a, b: a @ b, [(16, 200, 300), (16, 300, 250)], f32),
    ("lhs_T", lambda a, b: a.T @ b, [(500, 600), (500, 700)], f32),
    ("rhs_T", lambda a, b: a @ b.T, [(600, 500), (700, 500)], f32),
    ("chain_tanh", lambda a, b, c: jnp.tanh((a @ b) @ c * 3e-4) * 3.0,
     [(600, 500), (500, 400), (400, 300)], f32),
    ("matvec_wide", lambda a, b: a @ b, [(1, 100000), (100000, 512)], f32),
])
def test_compiled_products_match_numpy(name, f, shapes, dtype):
  args = [_rand(*s, dtype=dtype, seed=i) for i, s in enumerate(shapes)]
  text = _text(f, *args)
  assert compiler.matmul_kernel_flags(text) == EXPECTED
  got = np.asarray(jax.jit(f)(*args))
  default = np.asarray(jax.jit(f, compiler_options={INNER[2:]: False})(*args))
  np.testing.assert_allclose(got, default, rtol=1e-5, atol=1e-6 * np.abs(default).max())
  want = f(*[a.astype(np.float64) if dtype == f32 else a for a in args])
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
  assert INNER in compiler.compile_flags(_text(f, x, w, b))
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
