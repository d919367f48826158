"""Convolutions with few output positions and a large window (kernel
gradients) lower as one matrix product per output position: compiled
results equal eager ones across layouts, strides, dilations and padding."""
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.config import config
from openjax._src.primitives.dot_conv import conv_lowering

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
