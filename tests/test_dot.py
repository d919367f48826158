"""The dot family beyond the op table: ``dot_general``'s dtype rules and
messages, ``Precision``, result dtypes and weak types of the ``jax.numpy``
products, their errors, and printed jaxprs (as JAX 0.10.2 prints them)."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.core import check_jaxpr

f32, i32, i8, u8, f16, c64 = np.float32, np.int32, np.int8, np.uint8, np.float16, np.complex64
bf16 = ml_dtypes.bfloat16
MM = (((1,), (0,)), ((), ()))


def _weak(x):
  """A weakly typed array (as a Python scalar would give)."""
  return _convert_element_type(np.asarray(x, f32), f32, weak_type=True)


# ------------------------------------------------------------- dot_general
@pytest.mark.parametrize("lhs, rhs, pref, want", [
    (i32, i32, None, i32), (i8, i8, None, i8), (i8, i8, i32, i32), (u8, u8, f32, f32),
    (np.bool_, np.bool_, None, np.bool_), (np.bool_, np.bool_, i32, i32),
    (f16, f16, None, f16), (f16, f16, f32, f32), (bf16, bf16, f32, f32),
    (i32, f32, None, f32), (f16, f32, None, f32), (bf16, f16, None, bf16),
    (i8, u8, None, i8), (f32, c64, None, c64), (c64, c64, None, c64),
    (f32, f32, i32, i32),
])
def test_dot_general_result_dtype(lhs, rhs, pref, want):
  x, y = np.ones((2, 3), lhs), np.ones((3, 2), rhs)
  out = lax.dot_general(x, y, MM, preferred_element_type=pref)
  assert out.dtype == np.dtype(want)
  assert jax.jit(lambda a, b: lax.dot_general(a, b, MM, preferred_element_type=pref))(
      x, y).dtype == np.dtype(want)


def test_dot_general_values_are_exact_for_ints():
  x = np.array([[2 ** 20, 3]], i32)
  y = np.array([[2 ** 12], [5]], i32)
  # 2**32 + 15 wraps to 15 in int32, as XLA's integer dot does.
  assert int(lax.dot(x, y)[0, 0]) == 15
  big = np.full((1, 4), 2 ** 62, np.int64)
  with jax.enable_x64():
    out = lax.dot(big.astype(np.int64), np.ones((4, 1), np.int64))
    assert out.dtype == np.int64 and int(out[0, 0]) == 0  # 2**64 wraps to 0


def test_dot_general_f16_accumulates_in_f32():
  x = np.full((1, 4096), 1.0, f16)
  y = np.full((4096, 1), 1.0, f16)
  # Summing in float16 would stall at 2048; XLA accumulates in float32.
  assert float(lax.dot(x, y)[0, 0]) == 4096.0


@pytest.mark.parametrize("dims, msg", [
    ((((1,), (1,)), ((), ())), "dot_general requires contracting dimensions to have the "
                               "same shape, got (3,) and (2,)."),
    ((((2,), (0,)), ((), ())), "dot_general requires lhs dimension numbers to be "
                               "nonnegative and less than the number of axes of the lhs "
                               "value, got lhs_batch of () and lhs_contracting of (2,) for "
                               "lhs of rank 2"),
    ((((1,), (0,)), ((0,), ())), "dot_general requires equal numbers of lhs_batch and "
                                 "rhs_batch dimensions, got lhs_batch (0,) and rhs_batch ()."),
    ((((1, 1), (0, 1)), ((), ())), "dot_general requires lhs contracting dimensions to be "
                                   "distinct, got lhs_contracting (1, 1)."),
    ((((0,), (0,)), ((0,), (1,))), "dot_general requires lhs batch dimensions to be disjoint "
                                   "from contracting dimensions, got lhs_batch (0,) and "
                                   "lhs_contracting (0,)."),
])
def test_dot_general_shape_errors(dims, msg):
  x, y = np.ones((2, 3), f32), np.ones((3, 2), f32)
  with pytest.raises(TypeError) as e:
    lax.dot_general(x, y, dims)
  assert str(e.value) == msg


def test_dot_general_batch_shape_error():
  with pytest.raises(TypeError, match=r"batch dimensions to have the same shape, got "
                                      r"\(2,\) and \(4,\)"):
    lax.dot_general(np.ones((2, 3, 4), f32), np.ones((4, 4, 5), f32),
                    (((2,), (1,)), ((0,), (0,))))


def test_dot_general_dtype_errors():
  with pytest.raises(TypeError, match="`preferred_element_type` must not be narrower than "
                                      "the original type, got preferred_element_type of "
                                      "int8 for result type of int32."):
    lax.dot(np.ones(3, i32), np.ones(3, i32), preferred_element_type=i8)
  e4m3, e4m3fnuz = ml_dtypes.float8_e4m3, ml_dtypes.float8_e4m3fnuz
  with pytest.raises(TypeError, match="lax.dot_general argument type error: float8_e4m3, "
                                      "float8_e4m3fnuz"):
    lax.dot(np.ones(3, e4m3), np.ones(3, e4m3fnuz))


def test_lax_dot_needs_dimension_numbers_beyond_2d():
  with pytest.raises(ValueError, match="jax.lax.dot: dimension_numbers must be specified"):
    lax.dot(np.ones((2, 2, 2), f32), np.ones((2, 2), f32))
  out = lax.dot(np.ones((2, 2, 3), f32), np.ones((2, 3, 4), f32),
                dimension_numbers=(((2,), (1,)), ((0,), (0,))))
  assert out.shape == (2, 2, 4)


def test_batch_matmul_errors():
  with pytest.raises(ValueError, match="must be at least 2D, got 1, 2"):
    lax.batch_matmul(np.ones(3, f32), np.ones((3, 3), f32))
  with pytest.raises(ValueError, match="must have same ndim, got 3, 2"):
    lax.batch_matmul(np.ones((2, 3, 3), f32), np.ones((3, 3), f32))


def test_precision_forms():
  assert lax.Precision("highest") is lax.Precision.HIGHEST
  assert lax.Precision("tensorfloat32") is lax.Precision.HIGH
  assert repr(lax.Precision.HIGH) == "Precision.HIGH" and str(lax.Precision.HIGH) == "HIGH"
  x = np.ones((2, 2), f32)
  for p in ("high", lax.Precision.DEFAULT, ("highest", "default"), "F32_F32_F32",
            lax.DotAlgorithmPreset.BF16_BF16_F32):
    np.testing.assert_array_equal(lax.dot(x, x, precision=p), x @ x)
  with pytest.raises(ValueError, match="Precision argument must be one of"):
    lax.dot(x, x, precision="fast")


def test_default_matmul_precision_config():
  x = np.ones((2, 2), f32)
  with jax.config.override("jax_default_matmul_precision", "highest"):
    text = str(jax.make_jaxpr(lambda a: lax.dot(a, a))(x))
  assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text


# ------------------------------------------------------------ printed jaxprs
def test_print_jnp_matmul():
  jaxpr = jax.make_jaxpr(jnp.matmul)(np.ones((3, 4), f32), np.ones((4, 5), f32))
  check_jaxpr(jaxpr)
  assert str(jaxpr) == """\
{ lambda ; a:f32[3,4] b:f32[4,5]. let
    c:f32[3,5] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""


def test_print_mixed_dtype_matmul_has_no_convert():
  jaxpr = jax.make_jaxpr(lambda a, b: a @ b)(np.ones((3, 4), i32), np.ones((4,), f32))
  assert str(jaxpr) == """\
{ lambda ; a:i32[3,4] b:f32[4]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([1], [0]), ([], []))
      preferred_element_type=float32
    ] a b
  in (c,) }"""


def test_print_lax_dot_general_with_precision():
  f = lambda a, b: lax.dot_general(a, b, (((2,), (1,)), ((0,), (0,))),
                                   precision=lax.Precision.HIGHEST)
  jaxpr = jax.make_jaxpr(f)(np.ones((2, 3, 4), f32), np.ones((2, 4, 5), f32))
  check_jaxpr(jaxpr)
  assert str(jaxpr) == """\
{ lambda ; a:f32[2,3,4] b:f32[2,4,5]. let
    c:f32[2,3,5] = dot_general[
      dimension_numbers=(([2], [1]), ([0], [0]))
      precision=(Precision.HIGHEST, Precision.HIGHEST)
    ] a b
  in (c,) }"""


def test_print_broadcast_matmul_squeezes_and_restores():
  jaxpr = jax.make_jaxpr(jnp.matmul)(np.ones((1, 1, 3, 4), f32), np.ones((1, 4, 2), f32))
  check_jaxpr(jaxpr)
  assert str(jaxpr) == """\
{ lambda ; a:f32[1,1,3,4] b:f32[1,4,2]. let
    c:f32[1,3,4] = squeeze[dimensions=(1,)] a
    d:f32[4,2] = squeeze[dimensions=(0,)] b
    e:f32[1,3,2] = dot_general[
      dimension_numbers=(([2], [0]), ([], []))
      preferred_element_type=float32
    ] c d
    f:f32[1,1,3,2] = broadcast_in_dim[broadcast_dimensions=(0, 2, 3)] e
  in (f,) }"""


def test_print_dot_with_weak_scalar():
  jaxpr = jax.make_jaxpr(jnp.dot)(np.ones(3, i32), 2.0)
  assert str(jaxpr) == """\
{ lambda ; a:i32[3] b:f32[]. let
    c:f32[3] = dot_general[
      dimension_numbers=(([], []), ([], []))
      preferred_element_type=float32
    ] a b
    d:f32[3] = convert_element_type[new_dtype=float32 weak_type=True] c
  in (d,) }"""


def test_print_einsum():
  f = lambda a, b: jnp.einsum("ij,jk->ik", a, b)
  jaxpr = jax.make_jaxpr(f)(np.ones((3, 4), f32), np.ones((4, 5), f32))
  assert str(jaxpr) == str(jax.make_jaxpr(jnp.matmul)(np.ones((3, 4), f32),
                                                      np.ones((4, 5), f32)))
  jaxpr = jax.make_jaxpr(lambda a: jnp.einsum("ij->", a))(np.ones((3, 4), f32))
  assert str(jaxpr) == ("{ lambda ; a:f32[3,4]. let\n"
                        "    b:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] a\n"
                        "  in (b,) }")


# --------------------------------------------------- jnp dtypes, weak types
@pytest.mark.parametrize("a, b, want", [
    (i32, i32, i32), (np.bool_, np.bool_, np.bool_), (i32, f32, f32), (i8, u8, np.int16),
    (bf16, f32, f32), (f16, f16, f16), (bf16, f16, f32), (c64, f32, c64), (np.bool_, i8, i8),
])
def test_matmul_result_dtypes(a, b, want):
  x, y = np.ones((2, 3), a), np.ones((3, 2), b)
  for fn in (jnp.matmul, jnp.dot, lambda p, q: jnp.einsum("ij,jk", p, q),
             lambda p, q: jnp.tensordot(p, q, 1)):
    assert fn(x, y).dtype == np.dtype(want)
    assert jax.jit(fn)(x, y).dtype == np.dtype(want)


def test_matmul_x64_dtypes():
  with jax.enable_x64():
    x, y = np.ones((2, 3), f32), np.ones((3, 2), np.float64)
    assert jnp.matmul(x, y).dtype == np.float64
    assert jnp.matmul(np.ones((2, 2), np.int64), np.ones((2, 2), i32)).dtype == np.int64


def test_preferred_element_type_in_jnp():
  x, xt = np.ones((2, 3), i8), np.ones((3, 2), i8)
  cases = [(jnp.matmul, xt), (jnp.dot, xt), (jnp.inner, x), (jnp.vdot, x),
           (lambda p, q, **kw: jnp.tensordot(p, q, 1, **kw), xt),
           (lambda p, q, **kw: jnp.einsum("ij,jk", p, q, **kw), xt),
           (lambda p, q, **kw: jnp.vecdot(p, q, **kw), x)]
  for fn, y in cases:
    out = fn(x, y, preferred_element_type=f32)
    assert out.dtype == f32 and not out.weak_type
  out = jnp.matmul(np.ones((2, 2), f16), np.ones((2, 2), f16), preferred_element_type=f32)
  assert out.dtype == f32


def test_weak_types():
  w = _weak(np.ones((2, 2)))
  s = np.ones((2, 2), f32)
  assert jnp.matmul(w, w).weak_type
  assert not jnp.matmul(w, s).weak_type
  assert jax.jit(jnp.matmul)(w, w).weak_type
  assert jnp.dot(np.arange(3, dtype=i32), 2.0).weak_type
  assert jnp.dot(np.arange(3, dtype=i32), 2.0).dtype == f32
  assert not jnp.dot(np.arange(3, dtype=f32), 2.0).weak_type
  assert lax.dot(w, w).weak_type and not lax.dot(w, s).weak_type
  assert jnp.einsum("ij,jk", w, w).weak_type
  assert jnp.tril(w).weak_type and jnp.triu(w).weak_type
  assert jnp.diagonal(w).weak_type and not jnp.trace(w).weak_type  # jnp.sum strips it
  assert jnp.outer(w, w).weak_type and jnp.kron(w, w).weak_type
  assert not jnp.matmul(w, w, preferred_element_type=f32).weak_type


# ---------------------------------------------------------------- jnp errors
def test_matmul_errors():
  with pytest.raises(ValueError, match="matmul input operand 1 must have ndim at least 1, "
                                       "but it has ndim 0"):
    jnp.matmul(np.ones(3, f32), 2.0)
  with pytest.raises(ValueError, match=r"Incompatible types for matmul arguments: "
                                       r"float32\[2,3,4\] and float32\[3,4,5\]"):
    jnp.matmul(np.ones((2, 3, 4), f32), np.ones((3, 4, 5), f32))
  with pytest.raises(TypeError, match=r"contracting dimensions to have the same shape, "
                                      r"got \(4,\) and \(5,\)"):
    jnp.matmul(np.ones((3, 4), f32), np.ones((5, 2), f32))
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    jnp.matmul([1.0, 2.0], np.ones(2, f32))


def test_tensordot_errors():
  x = np.ones((2, 3), f32)
  with pytest.raises(TypeError, match=r"Number of tensordot axes \(axes 3\) exceeds input "
                                      r"ranks \(\(2, 3\) and \(2, 3\)\)"):
    jnp.tensordot(x, x, 3)
  with pytest.raises(TypeError, match="tensordot requires axes lists to have equal length"):
    jnp.tensordot(x, x, ([0, 1], [0]))
  with pytest.raises(TypeError, match="tensordot axes argument must be an int"):
    jnp.tensordot(x, x, "ab")
  with pytest.raises(TypeError, match="tensordot requires both axes lists to be either"):
    jnp.tensordot(x, x, (0, [0]))


def test_other_product_errors():
  with pytest.raises(ValueError, match=r"axes must match; got shapes \(2, 3\) and \(2, 4\) "
                                       r"with axis=-1"):
    jnp.vecdot(np.ones((2, 3), f32), np.ones((2, 4), f32))
  with pytest.raises(ValueError, match="Dimension must be either 2 or 3 for cross product"):
    jnp.cross(np.ones(4, f32), np.ones(3, f32))
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.outer"):
    jnp.outer(np.ones(2, f32), np.ones(2, f32), out=np.ones((2, 2)))
  with pytest.raises(ValueError, match="inconsistent size for core dimension 'm': 3 vs 4"):
    jnp.matvec(np.ones((2, 4), f32), np.ones(3, f32))


def test_diagonal_trace_triangle_errors():
  with pytest.raises(ValueError, match="diagonal requires an array of at least two "
                                       "dimensions."):
    jnp.diagonal(np.ones(3, f32))
  with pytest.raises(ValueError, match="axis1 and axis2 cannot be the same"):
    jnp.diagonal(np.ones((2, 2), f32), 0, 1, 1)
  with pytest.raises(ValueError, match="axis1 and axis2 can not be same. axis1=0 and "
                                       "axis2=-2"):
    jnp.trace(np.ones((2, 2), f32), 0, 0, -2)
  with pytest.raises(ValueError, match="Argument to jax.numpy.tril must be at least 2D"):
    jnp.tril(np.ones(3, f32))
  with pytest.raises(ValueError, match="Argument to jax.numpy.triu must be at least 2D"):
    jnp.triu(np.ones(3, f32))
  with pytest.raises(jax.errors.ConcretizationTypeError):
    jax.jit(lambda x, k: jnp.diagonal(x, k))(np.ones((2, 2), f32), 1)


def test_einsum_options():
  x, y, z = np.ones((2, 3), f32), np.ones((3, 4), f32), np.ones((4, 5), f32)
  path, info = jnp.einsum_path("ij,jk,kl->il", x, y, z, optimize="optimal")
  assert len(path) == 2 and all(len(step) == 2 for step in path)
  assert "Complete contraction" in str(info)
  want = x @ y @ z
  for opt in (True, False, "greedy", path):
    np.testing.assert_allclose(jnp.einsum("ij,jk,kl->il", x, y, z, optimize=opt), want)
  with pytest.raises(NotImplementedError, match="'out' argument to jnp.einsum"):
    jnp.einsum("ij->ji", x, out=x)
  out = jnp.einsum("ij,jk", x, y, precision=lax.Precision.HIGHEST)
  np.testing.assert_allclose(out, x @ y)


def test_methods_and_operator():
  x = jnp.asarray(np.arange(9, dtype=f32).reshape(3, 3))
  np.testing.assert_array_equal(x @ x, np.asarray(x) @ np.asarray(x))
  np.testing.assert_array_equal(x.dot(x), np.asarray(x) @ np.asarray(x))
  assert float(x.trace(offset=1)) == 1 + 5
  np.testing.assert_array_equal(x.diagonal(offset=-1), [3, 7])
  np.testing.assert_array_equal(np.ones((3, 3), f32) @ x, np.ones((3, 3)) @ np.asarray(x))


# ------------------------------------------------- transformation rules
# Printed jaxprs are JAX 0.10.2's for the same programs.
PERMUTED = (((1, 2), (3, 0)), ((0,), (1,)))


def _dg(dims, **kw):
  return lambda a, b: lax.dot_general(a, b, dims, **kw)


def test_dot_general_jvp_is_bilinear():
  x, y = np.ones((2, 4, 3), f32), np.ones((3, 2, 5, 4), f32)
  jaxpr = jax.make_jaxpr(lambda a, b, ta, tb: jax.jvp(_dg(PERMUTED), (a, b), (ta, tb)))(
      x, y, x, y)
  check_jaxpr(jaxpr)
  assert str(jaxpr) == """\
{ lambda ; a:f32[2,4,3] b:f32[3,2,5,4] c:f32[2,4,3] d:f32[3,2,5,4]. let
    e:f32[2,5] = dot_general[dimension_numbers=(([1, 2], [3, 0]), ([0], [1]))] a
      b
    f:f32[2,5] = dot_general[dimension_numbers=(([1, 2], [3, 0]), ([0], [1]))] c
      b
    g:f32[2,5] = dot_general[dimension_numbers=(([1, 2], [3, 0]), ([0], [1]))] a
      d
    h:f32[2,5] = add_any f g
  in (e, h) }"""
  # A zero tangent costs nothing.
  jaxpr = jax.make_jaxpr(lambda a, b, ta: jax.jvp(lambda a: _dg(PERMUTED)(a, b), (a,),
                                                  (ta,)))(x, y, x)
  assert [e.primitive.name for e in jaxpr.jaxpr.eqns] == ["dot_general", "dot_general"]


def test_dot_general_transpose_each_operand():
  x, y = np.ones((2, 4, 3), f32), np.ones((3, 2, 5, 4), f32)
  ct = np.ones((2, 5), f32)
  tl = jax.linear_transpose(lambda a: _dg(PERMUTED)(a, y), x)
  assert str(jax.make_jaxpr(tl)(ct)) == """\
{ lambda a:f32[3,2,5,4]; b:f32[2,5]. let
    c:f32[2,3,4] = dot_general[dimension_numbers=(([1], [2]), ([0], [1]))] b a
    d:f32[2,4,3] = transpose[permutation=(0, 2, 1)] c
  in (d,) }"""
  tr = jax.linear_transpose(lambda b: _dg(PERMUTED)(x, b), y)
  assert str(jax.make_jaxpr(tr)(ct)) == """\
{ lambda a:f32[2,4,3]; b:f32[2,5]. let
    c:f32[2,5,4,3] = dot_general[dimension_numbers=(([], []), ([0], [0]))] b a
    d:f32[3,2,5,4] = transpose[permutation=(3, 0, 1, 2)] c
  in (d,) }"""
  # Values: the transposes are the adjoints of the product.
  rng = np.random.default_rng(0)
  x, y = rng.standard_normal((2, 4, 3)).astype(f32), rng.standard_normal((3, 2, 5, 4)).astype(f32)
  ct = rng.standard_normal((2, 5)).astype(f32)
  gx, gy = jax.vjp(_dg(PERMUTED), x, y)[1](ct)
  np.testing.assert_allclose(gx, np.einsum("bn,cbnk->bkc", ct, y), rtol=1e-5, atol=1e-5)
  np.testing.assert_allclose(gy, np.einsum("bn,bkc->cbnk", ct, x), rtol=1e-5, atol=1e-5)


def test_dot_general_transpose_with_preferred_element_type():
  xb, yb = np.ones((3, 4), bf16), np.ones((4, 2), bf16)
  g = _dg(MM, preferred_element_type=f32)
  t = jax.linear_transpose(lambda a: g(a, yb), xb)
  assert str(jax.make_jaxpr(t)(np.ones((3, 2), f32))) == """\
{ lambda a:bf16[4,2]; b:f32[3,2]. let
    c:f32[3,4] = dot_general[
      dimension_numbers=(([1], [1]), ([], []))
      preferred_element_type=float32
    ] b a
    d:bf16[3,4] = convert_element_type[new_dtype=bfloat16 weak_type=False] c
  in (d,) }"""
  gx, gy = jax.grad(lambda a, b: g(a, b).sum(), argnums=(0, 1))(xb, yb)
  assert gx.dtype == gy.dtype == bf16
  np.testing.assert_array_equal(np.asarray(gx, f32), np.full((3, 4), 2, f32))
  np.testing.assert_array_equal(np.asarray(gy, f32), np.full((4, 2), 3, f32))


def test_dot_general_grad_mixed_dtypes():
  x = np.arange(12, dtype=f32).reshape(3, 4)
  y = (np.arange(8) + 1j).reshape(4, 2).astype(c64)
  h = lambda a, b: (a @ b).real.sum()
  gx = jax.grad(h, argnums=0)(x, y)        # real operand of a complex product: real part
  assert gx.dtype == f32
  np.testing.assert_allclose(gx, np.tile([1.0, 5.0, 9.0, 13.0], (3, 1)))
  gy = jax.grad(h, argnums=1)(x, y)
  assert gy.dtype == c64
  np.testing.assert_allclose(gy, np.tile(x.sum(0)[:, None], (1, 2)).astype(c64))
  # An integer operand has no tangent; the float one does.
  gy = jax.grad(lambda a, b: _dg(MM)(a, b).sum(), argnums=1)(np.ones((3, 4), i32),
                                                              np.ones((4, 2), f32))
  np.testing.assert_allclose(gy, np.full((4, 2), 3.0))


@pytest.mark.parametrize("in_axes, shapes, want", [
    ((1, None), ((2, 7, 4, 3), (3, 2, 5, 4)), """\
{ lambda ; a:f32[2,7,4,3] b:f32[3,2,5,4]. let
    c:f32[2,7,5] = dot_general[dimension_numbers=(([2, 3], [3, 0]), ([0], [1]))] a
      b
    d:f32[7,2,5] = transpose[permutation=(1, 0, 2)] c
  in (d,) }"""),
    ((None, 2), ((2, 4, 3), (3, 2, 7, 5, 4)), """\
{ lambda ; a:f32[2,4,3] b:f32[3,2,7,5,4]. let
    c:f32[2,7,5] = dot_general[dimension_numbers=(([1, 2], [4, 0]), ([0], [1]))] a
      b
    d:f32[7,2,5] = transpose[permutation=(1, 0, 2)] c
  in (d,) }"""),
    ((2, -1), ((2, 4, 7, 3), (3, 2, 5, 4, 7)), """\
{ lambda ; a:f32[2,4,7,3] b:f32[3,2,5,4,7]. let
    c:f32[7,2,5] = dot_general[
      dimension_numbers=(([1, 3], [3, 0]), ([2, 0], [4, 1]))
    ] a b
  in (c,) }"""),
])
def test_dot_general_batching_folds_into_dimension_numbers(in_axes, shapes, want):
  args = [np.ones(s, f32) for s in shapes]
  jaxpr = jax.make_jaxpr(jax.vmap(_dg(PERMUTED), in_axes=in_axes))(*args)
  check_jaxpr(jaxpr)
  assert str(jaxpr) == want


@pytest.mark.parametrize("dims, shapes, kw", [
    (MM, ((3, 4), (4, 5)), {}),
    ((((2,), (1,)), ((0,), (0,))), ((2, 3, 4), (2, 4, 5)), {}),
    (PERMUTED, ((2, 4, 3), (3, 2, 5, 4)), {}),
    ((((), ()), ((), ())), ((2, 3), (4,)), {}),
    (MM, ((3, 4), (4, 2)), {"preferred_element_type": i32}),
])
@pytest.mark.parametrize("axes", [(0, 0), (1, None), (None, 0), (-1, 1), (None, -1)])
def test_dot_general_vmap_matches_loop(dims, shapes, kw, axes):
  rng = np.random.default_rng(1)
  dt = i8 if kw else f32
  base = [rng.integers(-3, 4, s).astype(dt) for s in shapes]
  args = [np.stack([b + k for k in range(3)], axis=ax) if ax is not None else b
          for b, ax in zip(base, axes)]
  got = jax.vmap(_dg(dims, **kw), in_axes=axes)(*args)
  loop = np.stack([np.asarray(_dg(dims, **kw)(*[np.take(a, k, axis=ax) if ax is not None else a
                                                  for a, ax in zip(args, axes)]))
                   for k in range(3)])
  assert got.dtype == loop.dtype
  np.testing.assert_allclose(np.asarray(got), loop, rtol=1e-5, atol=1e-5)


# ------------------------------------------------------ compiled (IREE)
def _compiled(f, *args):
  with jax.config.override("openjax_executor", "iree"):
    return jax.jit(f)(*args)


@pytest.mark.parametrize("lt, rt, kw", [
    (f32, f32, {}), (i8, i8, {}), (i8, i8, {"preferred_element_type": i32}),
    (np.bool_, np.bool_, {}), (f16, f16, {}), (bf16, bf16, {"preferred_element_type": f32}),
    (c64, c64, {}), (i32, f32, {}), (u8, u8, {"preferred_element_type": f32}),
    (u8, u8, {"preferred_element_type": i32}), (u8, u8, {}), (i8, u8, {}),
])
def test_dot_general_compiled_matches_eager(lt, rt, kw):
  rng = np.random.default_rng(3)
  x = rng.integers(-100, 100, (2, 3, 40)).astype(lt) if lt != c64 else \
      (rng.normal(size=(2, 3, 40)) + 1j * rng.normal(size=(2, 3, 40))).astype(c64)
  y = rng.integers(-100, 100, (2, 40, 5)).astype(rt) if rt != c64 else \
      (rng.normal(size=(2, 40, 5)) + 1j * rng.normal(size=(2, 40, 5))).astype(c64)
  if lt == np.bool_:
    x, y = x > 50, y > 50
  f = _dg((((2,), (1,)), ((0,), (0,))), **kw)
  eager, compiled = f(x, y), _compiled(f, x, y)
  assert compiled.dtype == eager.dtype
  tol = 1e-2 if lt in (f16, bf16) else 1e-5
  np.testing.assert_allclose(np.asarray(compiled).astype(np.complex128),
                             np.asarray(eager).astype(np.complex128), rtol=tol, atol=tol)


def test_dot_general_compiled_empty_contraction():
  x, y = np.ones((3, 0), f32), np.ones((0, 2), f32)
  np.testing.assert_array_equal(np.asarray(_compiled(jnp.matmul, x, y)), np.zeros((3, 2)))


def test_dot_general_compiled_x64():
  with jax.enable_x64():
    x = np.random.default_rng(0).normal(size=(4, 3))
    y = np.random.default_rng(1).normal(size=(3, 2))
    got = _compiled(jnp.matmul, x, y)
    assert got.dtype == np.float64
    np.testing.assert_allclose(np.asarray(got), x @ y, rtol=1e-13)


def test_dot_general_cost_analysis_flops():
  x, y = np.ones((8, 16), f32), np.ones((16, 4), f32)
  cost = jax.jit(jnp.matmul).lower(x, y).compile().cost_analysis()
  assert cost["flops"] == 2 * 8 * 16 * 4
  xb, yb = np.ones((3, 8, 16), f32), np.ones((3, 16, 4), f32)
  cost = jax.jit(jnp.matmul).lower(xb, yb).compile().cost_analysis()
  assert cost["flops"] == 2 * 3 * 8 * 16 * 4


def test_trace_gives_the_same_bits_eager_and_jitted():
  # One formulation (the diagonal's sum) eager and traced: JAX's masked sum of
  # the whole matrix, staged under jit only, summed in another order and gave
  # other last bits for 41 of these 80 matrices.
  rng = np.random.default_rng(0)
  for n in (4, 9, 33, 100):
    for _ in range(20):
      x = jnp.asarray(rng.standard_normal((n, n)).astype(np.float32))
      for args in ((), (1,), (-2,)):
        eager = np.asarray(jnp.trace(x, *args))
        jitted = np.asarray(jax.jit(lambda a: jnp.trace(a, *args))(x))
        assert eager.tobytes() == jitted.tobytes()
      eager = np.asarray(jnp.linalg.trace(x, offset=1))
      jitted = np.asarray(jax.jit(lambda a: jnp.linalg.trace(a, offset=1))(x))
      assert eager.tobytes() == jitted.tobytes()
