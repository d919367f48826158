"""Large channels-last float convolutions in compiled programs on hosts
without AVX-512 run as host kernels (control/conv_host_lowering.py): im2col
blocks and the host's BLAS. Values against float64 convolutions, the rule
per host kind, layout and size, gradients, and the kernel-gradient form."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import conv_host_lowering
from openjax._src.runtime import host_blas, host_calls
from tests.test_compiler import iree_executor

KERNEL = host_calls.KERNEL_PREFIX

pytestmark = pytest.mark.skipif(not host_blas.available(), reason="no host BLAS wheel")


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "host_conv_cache"):
    yield


@pytest.fixture
def avx2(monkeypatch):
  """An AVX2 host, and small convolutions counted as large."""
  monkeypatch.setattr(conv_host_lowering, "native_vector_bytes", lambda: 32)
  monkeypatch.setattr(conv_host_lowering, "CONV_MIN_FLOPS", 1e5)


def _rand(shape, dtype=np.float32, seed=0, scale=1.0):
  rng = np.random.default_rng(seed)
  x = scale * rng.standard_normal(shape)
  if np.dtype(dtype).kind == "c":
    x = x + 1j * scale * rng.standard_normal(shape)
  return x.astype(dtype)


def _conv_fn(strides, padding, dn, lhs_dilation=None, rhs_dilation=None):
  def f(x, w):
    return lax.conv_general_dilated(x, w, strides, padding, lhs_dilation=lhs_dilation,
                                    rhs_dilation=rhs_dilation, dimension_numbers=dn)
  return f


def _kernel_count(f, *args):
  return jax.jit(f).lower(*args).compile().as_text().count(KERNEL)


def _wide(f, *args):
  """``f`` evaluated eagerly in float64 (complex128)."""
  with jax.enable_x64(True):
    wide = [jnp.asarray(a, np.complex128 if a.dtype.kind == "c" else np.float64)
            for a in args]
    out = f(*wide)
    return jax.tree_util.tree_map(np.asarray, out)


# (lhs shape, rhs shape, dimension numbers, strides, padding, lhs dilation,
#  rhs dilation): SAME and VALID, strides, dilated kernels, cropping and
# asymmetric padding, a dilated input (a strided conv's input gradient),
# 1-d and 3-d, and a kernel stored output-features first.
CONVS = [
    ((4, 12, 12, 16), (3, 3, 16, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), "SAME", None, None),
    ((3, 13, 11, 16), (3, 2, 16, 16), ("NHWC", "HWIO", "NHWC"), (2, 3), "VALID", None, None),
    ((2, 15, 15, 8), (3, 3, 8, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), "VALID", None, (2, 2)),
    ((2, 12, 12, 8), (3, 3, 8, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), ((2, 0), (-1, 3)), None,
     None),
    ((2, 7, 6, 8), (3, 3, 8, 16), ("NHWC", "HWIO", "NHWC"), (1, 1), ((2, 2), (1, 1)), (2, 2),
     None),
    ((3, 40, 16), (5, 16, 24), ("NWC", "WIO", "NWC"), (1,), "SAME", None, None),
    ((2, 6, 5, 4, 8), (2, 3, 2, 8, 16), ("NDHWC", "DHWIO", "NDHWC"), (1, 1, 1), "SAME", None,
     None),
    ((4, 12, 12, 8), (16, 3, 3, 8), ("NHWC", "OHWI", "NHWC"), (1, 1), "SAME", None, None),
    ((4, 12, 12, 8), (3, 3, 8, 16), ("NHWC", "HWIO", "NCHW"), (1, 1), "SAME", None, None),
]


@pytest.mark.parametrize("case", CONVS, ids=lambda c: f"{c[0]}x{c[1]}:{c[2][0]}")
def test_channels_last_convolutions_call_the_host_and_match(avx2, case):
  xs, ws, dn, strides, padding, ld, rd = case
  x, w = _rand(xs), _rand(ws, seed=1, scale=0.2)
  f = _conv_fn(strides, padding, dn, ld, rd)
  assert _kernel_count(f, x, w) > 0
  got = np.asarray(jax.jit(f)(x, w))
  want = _wide(f, x, w)
  assert got.dtype == np.float32 and got.shape == want.shape
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5 * np.abs(want).max())


@pytest.mark.parametrize("case", [c for c in CONVS[:6] if c[5] is None],
                         ids=lambda c: f"{c[0]}x{c[1]}")
def test_gradients_call_the_host_for_both_operands(avx2, case):
  xs, ws, dn, strides, padding, ld, rd = case
  x, w = _rand(xs), _rand(ws, seed=1, scale=0.2)
  f = _conv_fn(strides, padding, dn, ld, rd)
  g = jax.grad(lambda x, w: 0.5 * jnp.sum(f(x, w) ** 2), argnums=(0, 1))
  text = jax.jit(g).lower(x, w).compile().as_text()
  # each kernel imported and called: the forward and the kernel gradient
  # (16 output features); the input gradient too where it has 16 features
  kernels = 6 if xs[-1] >= conv_host_lowering.MIN_FEATURES else 4
  assert text.count(KERNEL) >= kernels
  got = jax.jit(g)(x, w)
  want = _wide(g, x, w)
  for a, b in zip(got, want):
    np.testing.assert_allclose(np.asarray(a), b, rtol=2e-5, atol=2e-5 * np.abs(b).max())


def test_kernel_gradient_form_matches_a_direct_convolution(avx2):
  # A convolution with few output positions over a large window, written
  # directly (the kernel gradient of a 3x3 NHWC conv).
  x, dy = _rand((4, 10, 10, 8)), _rand((4, 10, 10, 16), seed=1)
  dn = lax.ConvDimensionNumbers(lhs_spec=(3, 0, 1, 2), rhs_spec=(3, 0, 1, 2),
                                out_spec=(2, 3, 0, 1))
  f = _conv_fn((1, 1), ((1, 1), (1, 1)), dn)
  assert _kernel_count(f, x, dy) > 0
  np.testing.assert_allclose(np.asarray(jax.jit(f)(x, dy)), _wide(f, x, dy), rtol=1e-5,
                             atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float64, np.complex64])
def test_double_and_complex_convolutions(avx2, dtype):
  with jax.enable_x64(True):
    x, w = _rand((2, 9, 9, 8), dtype), _rand((3, 3, 8, 16), dtype, seed=1, scale=0.2)
    f = _conv_fn((1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))
    assert _kernel_count(f, x, w) > 0
    got = np.asarray(jax.jit(f)(x, w))
    assert got.dtype == dtype
  want = _wide(f, x, w)
  tol = 1e-12 if dtype == np.float64 else 1e-5
  np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("why", ["avx512", "nchw", "small", "grouped", "thin", "int"])
def test_other_convolutions_keep_the_compiled_lowering(monkeypatch, why):
  monkeypatch.setattr(conv_host_lowering, "native_vector_bytes",
                      lambda: 64 if why == "avx512" else 32)
  if why != "small":
    monkeypatch.setattr(conv_host_lowering, "CONV_MIN_FLOPS", 1e5)
  dn, xs, ws, groups, dtype = ("NHWC", "HWIO", "NHWC"), (4, 12, 12, 8), (3, 3, 8, 16), 1, \
      np.float32
  if why == "nchw":
    dn, xs, ws = ("NCHW", "OIHW", "NCHW"), (4, 8, 12, 12), (16, 8, 3, 3)
  elif why == "grouped":
    ws, groups = (3, 3, 4, 16), 2
  elif why == "thin":
    ws = (3, 3, 8, 4)
  elif why == "int":
    dtype = np.int32
  x, w = _rand(xs).astype(dtype), _rand(ws, seed=1).astype(dtype)
  f = lambda x, w: lax.conv_general_dilated(   # noqa: E731
      x, w, (1, 1), "SAME", dimension_numbers=dn, feature_group_count=groups)
  assert _kernel_count(f, x, w) == 0
  got = np.asarray(jax.jit(f)(x, w))
  np.testing.assert_allclose(got, np.asarray(f(x, w)), rtol=1e-5, atol=1e-4)


def test_a_large_convolution_calls_the_host_at_the_default_threshold(monkeypatch):
  monkeypatch.setattr(conv_host_lowering, "native_vector_bytes", lambda: 32)
  x, w = np.zeros((8, 64, 64, 32), np.float32), np.zeros((3, 3, 32, 64), np.float32)
  f = _conv_fn((1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))
  assert 2 * 8 * 64 * 64 * 9 * 32 * 64 >= conv_host_lowering.CONV_MIN_FLOPS
  assert _kernel_count(f, x, w) > 0


def test_lowered_text_is_plain_stablehlo(avx2):
  x, w = _rand((4, 12, 12, 8)), _rand((3, 3, 8, 16), seed=1)
  text = jax.jit(_conv_fn((1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))).lower(x, w).as_text()
  assert KERNEL not in text and "stablehlo.convolution" in text


def test_blocks_over_the_cores_give_the_same_values(avx2, monkeypatch):
  # Several image blocks (a small column budget), run on the calling thread
  # and the pool.
  monkeypatch.setattr(conv_host_lowering, "COLUMN_BYTES", 4096)
  monkeypatch.setattr(host_blas, "FLOPS_PER_BLOCK", 1.0)
  x, w = _rand((7, 10, 10, 8)), _rand((3, 3, 8, 16), seed=1, scale=0.2)
  f = _conv_fn((1, 1), "SAME", ("NHWC", "HWIO", "NHWC"))
  g = jax.grad(lambda x, w: jnp.sum(f(x, w) ** 2), argnums=(0, 1))
  got = jax.jit(g)(x, w)
  want = _wide(g, x, w)
  for a, b in zip(got, want):
    np.testing.assert_allclose(np.asarray(a), b, rtol=2e-5, atol=2e-5 * np.abs(b).max())
