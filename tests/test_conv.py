"""``lax.conv_general_dilated`` and its wrappers: values against a direct
loop reference (tests/ops/rows_conv.py), ``conv_transpose`` against JAX
0.10.2 and against its definition, gradients against finite differences,
vmap against a Python loop, IREE-compiled against eager, printed jaxprs
against JAX's, and JAX's errors."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr
from openjax._src.primitives.dot_conv import conv_rules
from tests.ops.rows_conv import conv_reference

NHWC = ("NHWC", "HWIO", "NHWC")

# (lhs shape, rhs shape, window_strides, padding, lhs_dilation, rhs_dilation,
#  dimension_numbers, feature_group_count, batch_group_count)
CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 1), "SAME", None, None, None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 3), "VALID", None, None, None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (2, 1), ((1, 2), (0, 3)), (2, 1), (1, 2), None, 1, 1),
    ((2, 3, 7, 6), (4, 3, 3, 2), (1, 2), ((-1, 2), (2, -1)), (1, 3), (2, 1), None, 1, 1),
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "SAME", None, None, NHWC, 1, 1),
    ((2, 7, 6, 4), (3, 2, 2, 6), (2, 1), "SAME_LOWER", None, (2, 1),
     ("NHWC", "HWIO", "NCHW"), 2, 1),
    ((1, 6, 5, 4), (3, 3, 1, 4), (1, 1), "SAME", None, None, NHWC, 4, 1),
    ((4, 3, 9), (6, 3, 2), (2,), ((1, 1),), None, (2,), None, 1, 2),
    ((6, 3, 9), (2, 3, 6), (3,), ((-1, 1),), (2,), None, ("NCW", "WIO", "NWC"), 1, 3),
    ((2, 4, 5), (8, 1, 3), (2,), ((0, -1),), (3,), (2,), ("NCW", "OIW", "NWC"), 4, 1),
    ((2, 4, 5, 4, 3), (6, 2, 2, 3, 2), (1, 2, 1), "SAME", None, None, None, 2, 1),
    ((2, 2, 9, 5), (3, 2, 2, 1), (4, 3), ((0, 0), (1, 0)), None, None, None, 1, 1),
    ((2, 4), (6, 4), (), (), None, None, None, 1, 1),
]
IDS = [f"case{i}" for i in range(len(CASES))]


def _inputs(case, dtype=np.float32, seed=0):
  rng = np.random.default_rng(seed)
  return (rng.standard_normal(case[0]).astype(dtype), rng.standard_normal(case[1]).astype(dtype))


def _conv(case):
  return lambda x, w: lax.conv_general_dilated(x, w, *case[2:])


# ------------------------------------------------------------------ values
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_matches_reference(case):
  x, w = _inputs(case)
  out = _conv(case)(x, w)
  expected = conv_reference(x, w, *case[2:])
  assert out.dtype == np.float32 and out.shape == expected.shape
  np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("case", [CASES[2], CASES[5], CASES[7], CASES[10]], ids=str)
@pytest.mark.parametrize("limit", [1, 300])
def test_window_matrix_blocks_and_taps(monkeypatch, case, limit):
  # A tiny limit forces the per-tap accumulation, a small one row blocks.
  x, w = _inputs(case)
  expected = np.asarray(_conv(case)(x, w))
  monkeypatch.setattr(conv_rules, "_IM2COL_LIMIT", limit)
  np.testing.assert_allclose(np.asarray(_conv(case)(x, w)), expected, rtol=1e-6, atol=1e-6)


def test_integer_convolution_is_exact_and_wraps():
  rng = np.random.default_rng(1)
  x = rng.integers(-128, 128, (2, 5, 6, 6)).astype(np.int8)
  w = rng.integers(-128, 128, (3, 5, 3, 3)).astype(np.int8)
  out = lax.conv(x, w, (1, 1), "SAME")
  exact = conv_reference(x, w, (1, 1), "SAME")
  assert out.dtype == np.int8
  np.testing.assert_array_equal(np.asarray(out), exact.astype(np.int8))
  wide = lax.conv(x, w, (1, 1), "SAME", preferred_element_type=np.int32)
  assert wide.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(wide), exact)


@pytest.mark.parametrize("dtype,pref,expected", [
    (np.float16, None, np.float16), (ml_dtypes.bfloat16, None, ml_dtypes.bfloat16),
    (ml_dtypes.bfloat16, np.float32, np.float32), (np.int8, np.float32, np.float32),
    (np.uint8, np.uint16, np.uint16), (np.bool_, None, np.bool_),
    (np.bool_, np.int32, np.int32), (np.complex64, None, np.complex64),
    (np.float32, np.float64, np.float32),   # x64 off: float64 truncates (with a warning)
])
def test_result_dtypes(dtype, pref, expected):
  x, w = np.ones((1, 2, 4, 4), dtype), np.ones((3, 2, 2, 2), dtype)
  if pref == np.float64:
    with pytest.warns(UserWarning, match="truncated"):
      out = lax.conv(x, w, (1, 1), "SAME", preferred_element_type=pref)
  else:
    out = lax.conv(x, w, (1, 1), "SAME", preferred_element_type=pref)
  assert out.dtype == expected
  ref = conv_reference(x, w, (1, 1), "SAME")
  np.testing.assert_allclose(np.asarray(out).astype(np.complex128),
                             ref if expected != np.bool_ else ref != 0)


def test_weak_type_only_when_both_operands_are_weak():
  from openjax._src.primitives.base.convert import _convert_element_type
  x, w = np.ones((1, 2, 4, 4), np.float32), np.ones((3, 2, 2, 2), np.float32)

  def f(weak_x, weak_w):
    return lambda a, b: lax.conv(_convert_element_type(a, np.float32, weak_x),
                                 _convert_element_type(b, np.float32, weak_w), (1, 1), "SAME")
  assert jax.make_jaxpr(f(True, True))(x, w).out_avals[0].weak_type
  assert not jax.make_jaxpr(f(True, False))(x, w).out_avals[0].weak_type


# ------------------------------------------------- padding and dimension numbers
def test_padtype_to_pads_matches_jax():
  # Expected values from JAX 0.10.2.
  assert lax.padtype_to_pads((5, 6, 7), (4, 3, 2), (1, 2, 3), "SAME") == \
      [(1, 2), (0, 1), (0, 1)]
  assert lax.padtype_to_pads((5, 6, 7), (4, 3, 2), (1, 2, 3), "same_lower") == \
      [(2, 1), (1, 0), (1, 0)]
  assert lax.padtype_to_pads((5, 6, 7), (4, 3, 2), (1, 2, 3), "VALID") == [(0, 0)] * 3
  assert lax.padtype_to_pads((1, 10), (5, 3), (4, 4), "SAME") == [(2, 2), (0, 1)]
  with pytest.raises(RuntimeError, match="Unrecognized padding type"):
    lax.padtype_to_pads((5,), (3,), (1,), "FULL")
  with pytest.raises(TypeError, match="Unknown padding type: 3"):
    lax.padtype_to_pads((5,), (3,), (1,), 3)


def test_conv_dimension_numbers():
  dn = lax.conv_dimension_numbers((2, 8, 8, 3), (3, 3, 3, 4), NHWC)
  assert dn == lax.ConvDimensionNumbers((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
  # Spatial dims of lhs and out follow the kernel's spatial order.
  dn = lax.conv_dimension_numbers((2, 3, 8, 9), (4, 3, 5, 6), ("NCHW", "OIWH", "NWHC"))
  assert dn == lax.ConvDimensionNumbers((0, 1, 3, 2), (0, 1, 2, 3), (0, 3, 1, 2))
  assert lax.conv_dimension_numbers((1, 2, 3), (4, 2, 1), None) == \
      lax.ConvDimensionNumbers((0, 1, 2), (0, 1, 2), (0, 1, 2))
  assert lax.conv_general_shape_tuple((2, 8, 8, 3), (3, 3, 3, 4), (2, 1), "SAME", NHWC) == \
      (2, 4, 8, 4)


# ---------------------------------------------------------- conv_transpose
_X1 = (np.arange(10).reshape(1, 5, 2) * 7 % 11 - 5).astype(np.float32)
_W1 = (np.arange(18).reshape(3, 2, 3) * 5 % 7 - 3).astype(np.float32)
# (strides, padding, rhs_dilation, transpose_kernel, use_consistent_padding, JAX's result)
_CONV_TRANSPOSE_GOLDEN = [
    ((2,), "SAME", None, False, False, [[[-1, 5, 11], [5, 11, -4], [19, -2, -2], [2, -4, 11], [-9, 10, 8], [-1, 3, -7], [7, -11, -15], [-4, -12, 8], [-10, 12, 6], [4, 6, 1]]]),  # noqa: E501
    ((2,), "VALID", None, False, False, [[[-1, 5, 11], [5, 11, -4], [19, -2, -2], [2, -4, 11], [-9, 10, 8], [-1, 3, -7], [7, -11, -15], [-4, -12, 8], [-10, 12, 6], [4, 6, 1], [6, 1, 3]]]),  # noqa: E501
    ((3,), "SAME", None, True, False, [[[11, -4, 2], [5, 11, -4], [-1, 5, 11], [-4, 11, 5], [2, -4, 11], [8, 2, -4], [3, -7, -3], [-1, 3, -7], [-5, -1, 3], [-12, 8, 0], [-4, -12, 8], [4, -4, -12], [6, 1, 3], [4, 6, 1], [2, 4, 6]]]),  # noqa: E501
    ((1,), "VALID", (2,), True, False, [[[11, -4, 2], [-4, 11, 5], [8, 4, -7], [-10, 4, 11], [4, 9, 7], [4, -10, 4], [-1, 5, 4], [4, -4, -12], [2, 4, 6]]]),  # noqa: E501
    ((2,), ((1, 2),), None, False, False, [[[5, 11, -4], [19, -2, -2], [2, -4, 11], [-9, 10, 8], [-1, 3, -7], [7, -11, -15], [-4, -12, 8], [-10, 12, 6], [4, 6, 1], [6, 1, 3]]]),  # noqa: E501
    ((2,), ((1, 0),), None, True, True, [[[5, 11, -4], [-5, 16, 16], [2, -4, 11], [11, -5, -7], [-1, 3, -7], [-17, 7, 3], [-4, -12, 8], [10, -3, -9], [4, 6, 1], [2, 4, 6]]]),  # noqa: E501
    ((3,), "VALID", (2,), False, False, [[[-1, 5, 11], [0, 0, 0], [5, 11, -4], [8, 2, -4], [11, -4, 2], [2, -4, 11], [-5, -1, 3], [-4, 11, 5], [-1, 3, -7], [4, -4, -12], [3, -7, -3], [-4, -12, 8], [2, 4, 6], [-12, 8, 0], [4, 6, 1], [0, 0, 0], [6, 1, 3]]]),  # noqa: E501
]


@pytest.mark.parametrize("strides,padding,rhs_dilation,transpose_kernel,consistent,expected",
                         _CONV_TRANSPOSE_GOLDEN)
def test_conv_transpose_matches_jax(strides, padding, rhs_dilation, transpose_kernel,
                                    consistent, expected):
  w = _W1.transpose(0, 2, 1) if transpose_kernel else _W1
  out = lax.conv_transpose(_X1, w, strides, padding, rhs_dilation=rhs_dilation,
                           transpose_kernel=transpose_kernel,
                           use_consistent_padding=consistent)
  np.testing.assert_array_equal(np.asarray(out), np.array(expected, np.float32))


@pytest.mark.parametrize("strides,padding,shape", [
    ((2, 3), "SAME", (2, 4, 14, 18)), ((2, 1), "VALID", (2, 4, 15, 7)),
    ((3, 2), ((1, 1), (0, 2)), (2, 4, 19, 12))])
def test_conv_transpose_shapes_match_jax(strides, padding, shape):
  x, w = np.ones((2, 3, 7, 6), np.float32), np.ones((3, 4, 3, 2), np.float32)
  dn = ("NCHW", "IOHW", "NCHW")
  assert lax.conv_transpose(x, w, strides, padding, dimension_numbers=dn).shape == shape
  assert lax.conv_transpose_shape_tuple(x.shape, w.shape, strides, padding, dn) == shape


@pytest.mark.parametrize("padding,size", [("SAME", 8), ("VALID", 9)])
def test_conv_transpose_with_transposed_kernel_is_the_conv_gradient(padding, size):
  # With transpose_kernel=True, conv_transpose is the VJP of conv w.r.t. its
  # input (when the forward output size determines the input size).
  rng = np.random.default_rng(2)
  x = rng.standard_normal((2, size, size, 3)).astype(np.float32)
  w = rng.standard_normal((3, 3, 3, 5)).astype(np.float32)

  def fwd(x):
    return lax.conv_general_dilated(x, w, (2, 2), padding, dimension_numbers=NHWC)
  y, vjp = jax.vjp(fwd, x)
  ct = rng.standard_normal(y.shape).astype(np.float32)
  got = lax.conv_transpose(ct, w, (2, 2), padding, dimension_numbers=NHWC,
                           transpose_kernel=True)
  np.testing.assert_allclose(np.asarray(got), np.asarray(vjp(ct)[0]), rtol=1e-5, atol=1e-5)

# Printed by JAX 0.10.2 (make_jaxpr of the functions in _golden_functions).
_GOLDEN_JAXPRS = {
    "forward_nchw_same": """\
{ lambda ; a:f32[2,3,8,8] b:f32[4,3,3,3]. let
    c:f32[2,4,8,8] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 1)
      out_sharding=None
      padding=((1, 1), (1, 1))
      precision=None
      preferred_element_type=None
      rhs_dilation=(1, 1)
      window_strides=(1, 1)
    ] a b
  in (c,) }
""",
    "nhwc_dilated_precision": """\
{ lambda ; a:f32[2,8,8,3] b:f32[3,3,3,4]. let
    c:f32[2,3,17,4] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
      feature_group_count=1
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 0), (2, 2))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
      preferred_element_type=float32
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
  in (c,) }
""",
    "grad_feature_groups": """\
{ lambda ; a:f32[2,4,8,8] b:f32[6,2,3,3]. let
    c:f32[2,3,17,6] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2, 3), rhs_spec=(0, 1, 2, 3), out_spec=(0, 3, 1, 2))
      feature_group_count=2
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 0), (2, 2))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a b
    _:f32[] = reduce_sum[axes=(0, 1, 2, 3) out_sharding=None] c
    d:f32[2,3,17,6] = broadcast_in_dim 1.0:f32[]
    e:f32[6,2,3,3] = conv_general_dilated[
      batch_group_count=2
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(1, 0, 2, 3), rhs_spec=(3, 0, 1, 2), out_spec=(1, 0, 2, 3))
      feature_group_count=1
      lhs_dilation=(1, 2)
      out_sharding=None
      padding=((1, 0), (2, 2))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(2, 1)
    ] a d
    f:f32[2,3,2,3,3] = reshape[
      dimensions=None
      new_sizes=(2, 3, 2, 3, 3)
      sharding=None
    ] b
    g:f32[3,4,3,3] = reshape[
      dimensions=(1, 0, 2, 3, 4)
      new_sizes=(3, 4, 3, 3)
      sharding=None
    ] f
    h:f32[3,4,3,3] = rev[dimensions=(2, 3)] g
    i:f32[2,4,8,8] = conv_general_dilated[
      batch_group_count=1
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(1, 0, 2, 3), out_spec=(0, 1, 2, 3))
      feature_group_count=2
      lhs_dilation=(2, 1)
      out_sharding=None
      padding=((3, 4), (0, 0))
      precision=None
      preferred_element_type=None
      rhs_dilation=(2, 1)
      window_strides=(1, 2)
    ] d h
  in (i, e) }
""",
    "vmap_batch_groups": """\
{ lambda ; a:f32[3,4,3,9] b:f32[6,3,3,2]. let
    c:f32[12,3,9] = reshape[dimensions=None new_sizes=(12, 3, 9) sharding=None] a
    d:f32[18,3,2] = reshape[
      dimensions=(1, 0, 2, 3)
      new_sizes=(18, 3, 2)
      sharding=None
    ] b
    e:f32[2,18,5] = conv_general_dilated[
      batch_group_count=6
      dimension_numbers=ConvDimensionNumbers(lhs_spec=(0, 1, 2), rhs_spec=(0, 1, 2), out_spec=(0, 1, 2))
      feature_group_count=1
      lhs_dilation=(1,)
      out_sharding=None
      padding=((1, 1),)
      precision=None
      preferred_element_type=None
      rhs_dilation=(2,)
      window_strides=(2,)
    ] c d
    f:f32[2,3,6,5] = reshape[
      dimensions=None
      new_sizes=(2, 3, 6, 5)
      sharding=None
    ] e
    g:f32[3,2,6,5] = transpose[permutation=(1, 0, 2, 3)] f
  in (g,) }
""",
}


# --------------------------------------------------------------- gradients
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_grads_match_finite_differences(case):
  with jax.enable_x64():
    x, w = _inputs(case, np.float64)
    jax.test_util.check_grads(_conv(case), (x, w), order=2, modes=("fwd", "rev"),
                              atol=1e-5, rtol=1e-5)
    # The staged second-order gradient is a well-typed jaxpr.
    loss = lambda x, w: (_conv(case)(x, w) ** 2).sum()
    hess_vec = jax.grad(lambda x, w: jax.grad(loss, argnums=(0, 1))(x, w)[1].sum())
    check_jaxpr(jax.make_jaxpr(hess_vec)(x, w))


def test_grad_with_preferred_element_type_keeps_input_dtypes():
  x, w = _inputs(CASES[2], ml_dtypes.bfloat16)

  def loss(x, w):
    return lax.conv_general_dilated(x, w, *CASES[2][2:],
                                    preferred_element_type=np.float32).sum()
  gx, gw = jax.grad(loss, argnums=(0, 1))(x, w)
  assert gx.dtype == gw.dtype == ml_dtypes.bfloat16
  fx, fw = jax.grad(loss, argnums=(0, 1))(x.astype(np.float32), w.astype(np.float32))
  np.testing.assert_allclose(np.asarray(gx, np.float32), np.asarray(fx), rtol=0.05, atol=0.1)
  np.testing.assert_allclose(np.asarray(gw, np.float32), np.asarray(fw), rtol=0.05, atol=0.1)


def test_grad_composes_with_jit():
  case = CASES[5]
  x, w = _inputs(case)
  loss = lambda x, w: (_conv(case)(x, w) ** 2).sum()
  expected = jax.grad(loss, argnums=(0, 1))(x, w)
  for got in (jax.jit(jax.grad(loss, argnums=(0, 1)))(x, w),
              jax.grad(jax.jit(loss), argnums=(0, 1))(x, w)):
    for g, e in zip(got, expected):
      np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)


def test_grad_of_empty_output_is_zero():
  x, w = np.ones((2, 3, 2, 2), np.float32), np.ones((4, 3, 3, 3), np.float32)
  gx, gw = jax.grad(lambda x, w: lax.conv(x, w, (1, 1), "VALID").sum(), argnums=(0, 1))(x, w)
  assert not np.asarray(gx).any() and not np.asarray(gw).any()


# -------------------------------------------------------------------- vmap
@pytest.mark.parametrize("case", [CASES[i] for i in (0, 3, 5, 6, 7, 8, 9, 12)], ids=str)
@pytest.mark.parametrize("in_axes", [(0, None), (2, None), (None, 0), (None, 1), (0, 0),
                                     (1, -1)])
def test_vmap_matches_loop(case, in_axes):
  size = 3
  rng = np.random.default_rng(3)
  xs = rng.standard_normal((size,) + case[0]).astype(np.float32)
  ws = rng.standard_normal((size,) + case[1]).astype(np.float32)
  args = [np.moveaxis(a, 0, ax) if ax is not None else a[0] for a, ax in zip((xs, ws), in_axes)]
  got = jax.vmap(_conv(case), in_axes=in_axes)(*args)
  check_jaxpr(jax.make_jaxpr(jax.vmap(_conv(case), in_axes=in_axes))(*args))
  expected = np.stack([np.asarray(_conv(case)(xs[i] if in_axes[0] is not None else xs[0],
                                             ws[i] if in_axes[1] is not None else ws[0]))
                       for i in range(size)])
  np.testing.assert_allclose(np.asarray(got), expected, rtol=1e-5, atol=1e-5)


def test_vmap_of_grad_and_zero_size_batch():
  case = CASES[7]
  x, w = _inputs(case)
  xs = np.stack([x, 2 * x])
  grad = jax.grad(lambda x, w: _conv(case)(x, w).sum(), argnums=1)
  got = jax.vmap(grad, in_axes=(0, None))(xs, w)
  for i in range(2):
    np.testing.assert_allclose(np.asarray(got[i]), np.asarray(grad(xs[i], w)), rtol=1e-5)
  empty = jax.vmap(_conv(case), in_axes=(0, 0))(np.zeros((0,) + case[0], np.float32),
                                                np.zeros((0,) + case[1], np.float32))
  assert empty.shape == (0,) + _conv(case)(x, w).shape


# -------------------------------------------------------- compiled (IREE)
def test_compiled_matches_eager():
  # One module (a compile costs ~0.5-1 s per convolution): dilations and
  # negative padding, mixed layouts with feature groups, batch groups, 3-D,
  # 0-D, the gradient of a grouped convolution and a vmapped batch-grouped one.
  cases = [CASES[i] for i in (2, 3, 5, 7, 8, 10, 12)]
  flat = [a for i, c in enumerate(cases) for a in _inputs(c, seed=i)]

  def run_all(*flat):
    outs = [_conv(c)(flat[2 * i], flat[2 * i + 1]) for i, c in enumerate(cases)]
    loss = lambda x, w: (_conv(cases[2])(x, w) ** 2).sum()
    outs.extend(jax.grad(loss, argnums=(0, 1))(flat[4], flat[5]))
    outs.append(jax.vmap(_conv(cases[3]), in_axes=(None, 0))(
        flat[6], jnp.stack([flat[7], flat[7] + 1])))
    return outs
  eager = run_all(*flat)
  compiled = jax.jit(run_all).lower(*flat).compile()(*flat)
  for e, c in zip(eager, compiled):
    assert e.dtype == c.dtype and e.shape == c.shape
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-4, atol=1e-4)


def test_lowering_text():
  # depthwise: other grouped convolutions lower as one convolution per group
  x, w = np.ones((2, 8, 8, 4), np.float32), np.ones((3, 3, 1, 8), np.float32)
  f = lambda x, w: lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, 2)), (1, 2), (2, 1), NHWC,
                                            feature_group_count=4, precision="highest")
  text = jax.jit(f).lower(x, w).as_text()
  assert "stablehlo.convolution" in text
  assert "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]" in text
  assert "feature_group_count = 4" in text and "HIGHEST" in text


def test_cost_analysis_counts_multiply_adds():
  x, w = np.ones((2, 4, 8, 8), np.float32), np.ones((6, 2, 3, 3), np.float32)
  f = lambda x, w: lax.conv_general_dilated(x, w, (2, 1), "SAME", feature_group_count=2)
  cost = jax.jit(f).lower(x, w).cost_analysis()
  # 2 flops per output element (2*6*4*8) per input feature of its group (2)
  # per kernel tap (9).
  assert cost["flops"] == 2 * (2 * 6 * 4 * 8) * 2 * 9


# ---------------------------------------------------------- printed jaxprs
def _golden_functions():
  x = np.ones((2, 3, 8, 8), np.float32)
  w = np.ones((4, 3, 3, 3), np.float32)
  xh, wh = np.ones((2, 8, 8, 3), np.float32), np.ones((3, 3, 3, 4), np.float32)
  xg, wg = np.ones((2, 4, 8, 8), np.float32), np.ones((6, 2, 3, 3), np.float32)
  xb, wb = np.ones((3, 4, 3, 9), np.float32), np.ones((6, 3, 3, 2), np.float32)

  def grouped(x, w):
    return lax.conv_general_dilated(x, w, (2, 1), ((1, 0), (2, 2)), (1, 2), (2, 1),
                                    ("NCHW", "OIHW", "NHWC"), feature_group_count=2)

  def batch_grouped(x, w):
    return lax.conv_general_dilated(x, w, (2,), ((1, 1),), None, (2,), None, 1, 2)
  return {
      "forward_nchw_same": (lambda x, w: lax.conv_general_dilated(x, w, (1, 1), "SAME"),
                            (x, w)),
      "nhwc_dilated_precision": (lambda x, w: lax.conv_general_dilated(
          x, w, (2, 1), ((1, 0), (2, 2)), lhs_dilation=(1, 2), rhs_dilation=(2, 1),
          dimension_numbers=NHWC, precision="highest", preferred_element_type=np.float32),
          (xh, wh)),
      "grad_feature_groups": (jax.grad(lambda x, w: grouped(x, w).sum(), argnums=(0, 1)),
                              (xg, wg)),
      "vmap_batch_groups": (jax.vmap(batch_grouped, in_axes=(0, 1)), (xb, wb)),
  }


@pytest.mark.parametrize("name", ["forward_nchw_same", "nhwc_dilated_precision",
                                  "grad_feature_groups", "vmap_batch_groups"])
def test_printed_jaxpr_matches_jax(name):
  fn, args = _golden_functions()[name]
  closed = jax.make_jaxpr(fn)(*args)
  check_jaxpr(closed)
  assert str(closed) + "\n" == _GOLDEN_JAXPRS[name]


# ------------------------------------------------------------------ errors
_X = np.ones((2, 4, 6, 6), np.float32)
_W = np.ones((6, 4, 3, 3), np.float32)
_W2 = np.ones((6, 2, 3, 3), np.float32)


@pytest.mark.parametrize("fn,exc,match", [
    (lambda: lax.conv(_X, _W.astype(np.int32), (1, 1), "SAME"), TypeError,
     "lax.conv_general_dilated requires arguments to have the same dtypes, got float32, int32"),
    (lambda: lax.conv(_X, _W[0], (1, 1), "SAME"), TypeError,
     "convolution requires lhs and rhs ndim to be equal, got 4 and 3"),
    (lambda: lax.conv(_X, _W2, (1, 1), "SAME"), ValueError,
     r"divided by feature_group_count must equal the rhs input feature dimension size, but "
     r"4 // 1 != 2"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME", feature_group_count=0),
     ValueError, "feature_group_count must be a positive integer, got 0"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME", feature_group_count=3),
     ValueError, "feature_group_count must divide lhs feature dimension size, but 3 does not "
     "divide 4"),
    (lambda: lax.conv_general_dilated(_X, _W2[:5], (1, 1), "SAME", feature_group_count=2),
     ValueError, "rhs output feature dimension size must be a multiple of "
     "feature_group_count, but 5 is not a multiple of 2"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME", batch_group_count=3),
     ValueError, "batch_group_count must divide lhs batch dimension size, but 3 does not "
     "divide 2"),
    (lambda: lax.conv_general_dilated(_X, _W[:5], (1, 1), "SAME", batch_group_count=2),
     ValueError, "must be a multiple of batch_group_count, but 5 is not a multiple of 2"),
    (lambda: lax.conv_general_dilated(_X, _W2, (1, 1), "SAME", batch_group_count=2,
                                      feature_group_count=2),
     ValueError, "At most one of batch_group_count and feature_group_count may be > 1"),
    (lambda: lax.conv_general_dilated(_X, _W, (1,), "VALID"), ValueError,
     "window and window_strides must have the same number of dimensions, but got 2 and 1"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), [(1, 1)]), TypeError,
     "Wrong number of explicit pads for convolution: expected 2, got 1"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), [(1, 1, 1), (1, 1)]), ValueError,
     "padding argument to conv_general_dilated should be a string or a sequence of"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), [(-5, -5), (1, 1)]), ValueError,
     "Negative padding is larger than the size of the corresponding dimension"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "FOO"), RuntimeError,
     "Unrecognized padding type"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME", lhs_dilation=(2, 1)),
     ValueError, "String padding is not implemented for transposed convolution"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "VALID", rhs_dilation=(0, 1)),
     TypeError, r"All dilations must be positive, got \(0, 1\)"),
    (lambda: lax.conv_general_dilated(_X, _W, (0, 1), "VALID"), ValueError,
     r"window_strides must be positive, got \(0, 1\)"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NCHW", "OIHW")),
     TypeError, "dimension_numbers list/tuple must be length 3, got 2"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NCHW", "OIHW", 1)),
     TypeError, "dimension_numbers elements must be strings"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NCH", "OIHW", "NCHW")),
     TypeError, r"dimension_numbers\[0\] must have len equal to the ndim of lhs and rhs"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NXHW", "OIHW", "NCHW")),
     TypeError, "must contain the characters 'N' and 'C' exactly once, got NXHW"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NCHH", "OIHW", "NCHW")),
     TypeError, "cannot have duplicate characters, got NCHH"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME",
                                      dimension_numbers=("NCHW", "OIHX", "NCHW")),
     TypeError, "must each have the same set of spatial characters"),
    (lambda: lax.conv_general_dilated(_X, _W, (1, 1), "SAME", dimension_numbers=5),
     TypeError, "dimension_numbers must be tuple/list or None"),
    (lambda: lax.conv(_X, _W, (1, 1), "SAME", preferred_element_type=np.int32), TypeError,
     "Input type is incompatible with `preferred_element_type`"),
    (lambda: lax.conv(_X, _W, (1, 1), "SAME", preferred_element_type=np.float16), TypeError,
     "`preferred_element_type` must not be narrower than the original type"),
    (lambda: lax.conv(_X.astype(np.int8), _W.astype(np.int8), (1, 1), "SAME",
                      preferred_element_type=np.uint16),
     TypeError, "`preferred_element_type` must have the same signedness"),
    (lambda: lax.conv(_X, _W, (1, 1), "SAME", precision="foo"), ValueError,
     "Precision argument must be one of"),
    (lambda: lax.conv(_X, np.ones((6, 4, 0, 3), np.float32), (1, 1), "VALID"), ValueError,
     "every spatial dimension of the window"),
    (lambda: lax.conv_transpose(np.ones((1,) * 6, np.float32),
                                np.ones((1,) * 6, np.float32), (1,) * 4, "SAME"),
     ValueError, "No 4\\+ dimensional dimension_number defaults"),
])
def test_errors_match_jax(fn, exc, match):
  with pytest.raises(exc, match=match):
    fn()


def test_window_larger_than_input_gives_empty_output():
  out = lax.conv_general_dilated(_X, np.ones((6, 4, 9, 9), np.float32), (1, 1), "VALID")
  assert out.shape == (2, 6, 0, 0)
