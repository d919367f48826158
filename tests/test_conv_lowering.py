"""Convolutions with few output positions and a large window (kernel
gradients) lower as one matrix product per output position: compiled
results equal eager ones across layouts, strides, dilations and padding.
Every other convolution reaches IREE with a spatial-major kernel (HWIO),
the only layout IREE compiles into a fast kernel."""
import time

import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.config import config
from openjax._src.primitives.dot_conv import conv_lowering
from openjax._src.runtime import compiler

CASES = [
    # lhs shape, rhs shape, strides, padding, rhs_dilation, dimension numbers
    ((2, 9, 9, 3), (7, 7, 3, 4), (1, 1), ((0, 0), (0, 0)), (1, 1), ("NHWC", "HWIO", "NHWC")),
    ((2, 3, 10, 8), (4, 3, 8, 6), (2, 1), ((1, 2), (0, 1)), (1, 1), ("NCHW", "OIHW", "NCHW")),
    ((1, 2, 12, 12), (3, 2, 5, 5), (1, 2), ((0, 0), (1, 1)), (2, 2), ("NCHW", "OIHW", "NHWC")),
    ((3, 20, 2), (15, 2, 4), (1,), ((2, -1),), (1,), ("NWC", "WIO", "NWC")),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_positions_lowering_matches_eager(case):
  lhs_shape, rhs_shape, strides, padding, rhs_dil, dn = CASES[case]
  rng = np.random.default_rng(case)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)

  def f(a, b):
    return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=rhs_dil,
                                    dimension_numbers=dn)
  out = f(lhs, rhs)
  dnums = lax.conv_dimension_numbers(lhs_shape, rhs_shape, dn)
  assert conv_lowering.use_positions(lhs_shape, rhs_shape, out.shape, dnums, lhs_dilation=(1,),
                                     feature_group_count=1, batch_group_count=1)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    compiled = jax.jit(f)(lhs, rhs)
  assert "stablehlo.convolution" not in text and "stablehlo.dot_general" in text
  np.testing.assert_allclose(np.asarray(compiled), np.asarray(out), rtol=1e-4, atol=1e-4)


def test_kernel_gradient_of_a_conv_compiles_by_positions():
  rng = np.random.default_rng(0)
  x = rng.standard_normal((4, 16, 16, 3)).astype(np.float32)
  w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)

  def loss(x, w):
    y = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return (y ** 2).sum()
  g = jax.grad(loss, argnums=1)
  expected = g(x, w)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    got = jax.jit(g)(x, w)
  np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dn, rhs_shape", [
    (("NCHW", "OIHW", "NCHW"), (6, 4, 3, 3)),
    (("NHWC", "OHWI", "NCHW"), (6, 3, 3, 4)),
    (("NHWC", "IOHW", "NHWC"), (4, 6, 3, 3)),
])
def test_kernel_reaches_iree_spatial_major(dn, rhs_shape):
  # IREE compiles a convolution whose kernel is not (spatial..., in, out)
  # into a loop nest 30-80x slower; the lowering transposes the kernel behind
  # a barrier (IREE folds a bare transpose back into the convolution).
  nsp = len(rhs_shape) - 2
  lhs_shape = (2, 4) + (7,) * nsp if dn[0].index("C") == 1 else (2,) + (7,) * nsp + (4,)
  rng = np.random.default_rng(1)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)

  def f(a, b):
    return lax.conv_general_dilated(a, b, (1,) * nsp, "SAME", dimension_numbers=dn)
  expected = f(lhs, rhs)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    got = jax.jit(f)(lhs, rhs)
  conv_line = next(line for line in text.splitlines() if "stablehlo.convolution" in line)
  spatial = ", ".join(str(i) for i in range(nsp))
  assert f"x[{spatial}, i, o]->" in conv_line
  assert "stablehlo.optimization_barrier" in text
  np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-4)


def test_nchw_conv_compiles_about_as_fast_as_nhwc():
  # JAX's default layout ran 40x slower than NHWC once compiled (IREE's
  # generic loop nest for an OIHW kernel): 73 ms vs 0.9 ms here.
  rng = np.random.default_rng(2)
  x = rng.standard_normal((8, 16, 32, 32)).astype(np.float32)
  w = rng.standard_normal((16, 16, 3, 3)).astype(np.float32)
  nchw = jax.jit(lambda x, w: lax.conv_general_dilated(
      x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW")))
  nhwc = jax.jit(lambda x, w: lax.conv_general_dilated(
      x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")))
  args = {nchw: (x, w), nhwc: (x.transpose(0, 2, 3, 1), w.transpose(2, 3, 1, 0))}
  best = {nchw: np.inf, nhwc: np.inf}
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    for f in best:
      f(*args[f]).block_until_ready()
    for _ in range(7):
      for f in best:
        t = time.perf_counter()
        f(*args[f]).block_until_ready()
        best[f] = min(best[f], time.perf_counter() - t)
  assert best[nchw] < 8 * best[nhwc] + 2e-3, best


@pytest.mark.parametrize("dn, lhs_shape, rhs_shape", [
    (("NCHW", "OIHW", "NCHW"), (2, 3, 5, 4), (6, 3, 1, 1)),
    (("NCHW", "OIHW", "NHWC"), (2, 3, 5, 4), (6, 3, 1, 1)),
    (("NHWC", "HWIO", "NCHW"), (2, 5, 4, 3), (1, 1, 3, 6)),
    (("NCW", "OIW", "NWC"), (2, 3, 5), (6, 3, 1)),
    (("NCDHW", "OIDHW", "NCDHW"), (2, 3, 4, 5, 2), (6, 3, 1, 1, 1)),
])
def test_pointwise_conv_runs_channels_last(dn, lhs_shape, rhs_shape):
  # A 1x1 conv in a feature-major layout becomes, in IREE, a batched product
  # reading features strided (3x slower); it is lowered as a channels-last
  # product between transposes that barriers keep apart.
  rng = np.random.default_rng(3)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)
  nsp = len(lhs_shape) - 2

  def f(a, b):
    return lax.conv_general_dilated(a, b, (1,) * nsp, "VALID", dimension_numbers=dn)
  grad = jax.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
  expected, expected_grads = f(lhs, rhs), grad(lhs, rhs)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    got, got_grads = jax.jit(f)(lhs, rhs), jax.jit(grad)(lhs, rhs)
  conv_line = next(line for line in text.splitlines() if "stablehlo.convolution" in line)
  spatial = ", ".join(str(i) for i in range(nsp))
  assert f"dim_numbers = [b, {spatial}, f]x[{spatial}, i, o]->[b, {spatial}, f]" in conv_line
  np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-4, atol=1e-4)
  for g, e in zip(got_grads, expected_grads):
    np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-3)


def test_shallow_pointwise_convs_compile_without_data_tiling():
  # Data tiling made a 1x1 conv with 32 features over 64x32x32 positions
  # 2-7x slower; 3x3 kernel gradients (deep products) keep it.
  def tiling(f, *shapes):
    text = jax.jit(f).lower(*(np.zeros(s, np.float32) for s in shapes)).as_text()
    return compiler.compile_flags(text)[len(compiler.BASE_FLAGS):]

  def conv(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                    dimension_numbers=("NHWC", "HWIO", "NHWC"))
  assert tiling(conv, (64, 32, 32, 32), (1, 1, 32, 32)) == ("--iree-opt-data-tiling=false",)
  assert "--iree-opt-data-tiling" in tiling(conv, (64, 32, 32, 256), (1, 1, 256, 256))
  kernel_grad = jax.grad(lambda x, w: (conv(x, w) ** 2).sum(), argnums=1)
  assert "--iree-opt-data-tiling" in tiling(kernel_grad, (64, 32, 32, 16), (3, 3, 16, 32))
  assert "--iree-opt-data-tiling" in tiling(conv, (64, 32, 32, 16), (3, 3, 16, 32))


@pytest.mark.parametrize("dtype", [np.float32, np.int32])
@pytest.mark.parametrize("dn, lhs_shape, rhs_shape, strides, padding, rhs_dil", [
    (("NCH", "OIH", "NCH"), (2, 3, 11), (4, 3, 3), (1,), "SAME", (1,)),
    (("NHC", "HIO", "NHC"), (2, 11, 3), (3, 3, 4), (2,), "VALID", (1,)),
    (("NCH", "HIO", "NHC"), (2, 3, 12), (3, 3, 4), (2,), ((2, 1),), (2,)),
    (("HNC", "IHO", "CNH"), (11, 2, 3), (3, 3, 4), (3,), ((0, 3),), (3,)),
])
def test_1d_conv_lowers_as_one_product_per_tap(dtype, dn, lhs_shape, rhs_shape, strides,
                                               padding, rhs_dil):
  # IREE's 1-d convolution kernel ran 3x slower than the products' sum.
  rng = np.random.default_rng(4)
  lhs = (rng.standard_normal(lhs_shape) * 3).astype(dtype)
  rhs = (rng.standard_normal(rhs_shape) * 3).astype(dtype)

  def f(a, b):
    return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=rhs_dil,
                                    dimension_numbers=dn)
  expected = f(lhs, rhs)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    got = jax.jit(f)(lhs, rhs)
    if dtype == np.float32:
      grad = jax.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
      got_grads = jax.jit(grad)(lhs, rhs)
  assert "stablehlo.convolution" not in text
  assert text.count("stablehlo.dot_general") == rhs_shape[dn[1].index("H")]
  np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=1e-5, atol=1e-4)
  if dtype == np.float32:
    for g, e in zip(got_grads, grad(lhs, rhs)):
      np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("dn, lhs_shape, rhs_shape, groups", [
    (("NCHW", "OIHW", "NCHW"), (2, 8, 7, 6), (8, 2, 3, 3), 4),
    (("NHWC", "HWIO", "NHWC"), (2, 7, 6, 9), (3, 2, 3, 9), 3),
    (("NHWC", "OIHW", "NCHW"), (2, 7, 6, 4), (4, 2, 1, 3), 2),
    (("NCDHW", "OIDHW", "NCDHW"), (1, 4, 4, 5, 3), (4, 2, 2, 3, 2), 2),
])
def test_grouped_conv_lowers_as_one_conv_per_group(dn, lhs_shape, rhs_shape, groups):
  # IREE compiled grouped convolutions 13x slower than their groups apart.
  rng = np.random.default_rng(5)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)
  nsp = len(lhs_shape) - 2

  def f(a, b):
    return lax.conv_general_dilated(a, b, (1,) * nsp, "SAME", dimension_numbers=dn,
                                    feature_group_count=groups)
  grad = jax.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    got, got_grads = jax.jit(f)(lhs, rhs), jax.jit(grad)(lhs, rhs)
  convs = [line for line in text.splitlines() if "stablehlo.convolution" in line]
  assert len(convs) == groups and all("feature_group_count = 1 " in c for c in convs)
  np.testing.assert_allclose(np.asarray(got), np.asarray(f(lhs, rhs)), rtol=1e-4, atol=1e-4)
  for g, e in zip(got_grads, grad(lhs, rhs)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-3)


def test_depthwise_conv_stays_one_convolution():
  x = np.zeros((2, 8, 6, 6), np.float32)
  w = np.zeros((8, 1, 3, 3), np.float32)
  text = jax.jit(lambda x, w: lax.conv_general_dilated(
      x, w, (1, 1), "SAME", feature_group_count=8)).lower(x, w).as_text()
  assert text.count("stablehlo.convolution") == 1


@pytest.mark.parametrize("dn, lhs_shape, rhs_shape, strides, padding, rhs_dil", [
    (("NDHWC", "DHWIO", "NDHWC"), (2, 5, 6, 4, 3), (3, 3, 2, 3, 4), (1, 1, 1), "SAME", (1, 1, 1)),
    (("NCDHW", "OIDHW", "NCDHW"), (2, 3, 7, 5, 6), (4, 3, 3, 2, 3), (2, 1, 2), "VALID", (1, 2, 1)),
    (("NCDHW", "DHWIO", "NDHWC"), (1, 2, 8, 4, 5), (2, 3, 2, 2, 3), (3, 2, 1),
     ((1, 2), (0, 1), (-1, 1)), (2, 1, 1)),
])
def test_3d_conv_lowers_as_2d_convs_per_depth_tap(dn, lhs_shape, rhs_shape, strides, padding,
                                                   rhs_dil):
  # IREE's 3-d convolutions ran 20x slower than the sum of 2-d ones.
  rng = np.random.default_rng(6)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)

  def f(a, b):
    return lax.conv_general_dilated(a, b, strides, padding, rhs_dilation=rhs_dil,
                                    dimension_numbers=dn)
  grad = jax.grad(lambda a, b: (f(a, b) ** 2).sum(), argnums=(0, 1))
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(f).lower(lhs, rhs).as_text()
    got, got_grads = jax.jit(f)(lhs, rhs), jax.jit(grad)(lhs, rhs)
  convs = [line for line in text.splitlines() if "stablehlo.convolution" in line]
  assert len(convs) == rhs_shape[dn[1].index("D")]
  assert all("[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" in c for c in convs)
  np.testing.assert_allclose(np.asarray(got), np.asarray(f(lhs, rhs)), rtol=1e-4, atol=1e-4)
  for g, e in zip(got_grads, grad(lhs, rhs)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-4, atol=1e-3)


def test_nchw_kernel_gradient_contracts_trailing_dims():
  # The kernel gradient of an NCHW conv keeps the feature dim (the middle
  # one) of x and of the cotangent; both are moved to (kept, contracted...)
  # once, not transposed per position (nine 8 ms transposes at 64x32x32x32).
  rng = np.random.default_rng(7)
  x = rng.standard_normal((4, 3, 16, 16)).astype(np.float32)
  w = rng.standard_normal((5, 3, 3, 3)).astype(np.float32)

  def loss(x, w):
    return (lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2).sum()
  g = jax.grad(loss, argnums=1)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    text = jax.jit(g).lower(x, w).as_text()
    got = jax.jit(g)(x, w)
  dots = [line for line in text.splitlines() if "stablehlo.dot_general" in line]
  assert len(dots) == 9
  assert all("contracting_dims = [1, 2, 3] x [1, 2, 3]" in d or
             "lhs_contracting_dimensions = [1, 2, 3], rhs_contracting_dimensions = [1, 2, 3]" in d
             for d in dots), dots[0]
  np.testing.assert_allclose(np.asarray(got), np.asarray(g(x, w)), rtol=1e-4, atol=1e-3)


def test_long_kernels_stay_one_convolution():
  # per-tap lowering is bounded (a kernel gradient's "kernel" is the forward
  # output, as long as the sequence)
  x = np.zeros((2, 4, 300), np.float32)
  w = np.zeros((3, 4, conv_lowering.MAX_SLICES + 1), np.float32)
  text = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1,), "SAME")).lower(x, w).as_text()
  assert text.count("stablehlo.convolution") == 1 and "stablehlo.dot_general" not in text
