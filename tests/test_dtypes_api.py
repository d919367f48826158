"""The dtype API of ``jax.numpy`` (scalar types, ``result_type``,
``isdtype``, ``finfo``, ...), the array API metadata, and the errors and
warnings of ``where``, ``clip``, ``astype``, ``view`` and ``round``."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import errors

SCALAR_TYPES = [
    "bool_", "int2", "int4", "int8", "int16", "int32", "int64", "uint2", "uint4", "uint8",
    "uint16", "uint32", "uint64", "float16", "float32", "float64", "bfloat16", "complex64",
    "complex128", "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
    "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
]
_64BIT = {"int64", "uint64", "float64", "complex128"}


# --------------------------------------------------------------- scalar types
@pytest.mark.parametrize("name", SCALAR_TYPES)
def test_scalar_type_is_a_dtype_and_constructor(name):
  t = getattr(jnp, name)
  np_type = np.dtype(t).type
  assert np.dtype(t) == t.dtype
  assert t == np_type and hash(t) == hash(np_type)
  assert isinstance(np_type(1), t)
  assert not isinstance(jnp.zeros(()), t)
  with jax.enable_x64():
    x = t(1)
    assert isinstance(x, jax.Array) and x.shape == () and not x.weak_type
    assert x.dtype == np.dtype(t)
    assert jnp.zeros(2, t).dtype == np.dtype(t)
  if name not in _64BIT:
    assert t(1).dtype == np.dtype(t)


@pytest.mark.parametrize("name", sorted(_64BIT))
def test_64bit_scalar_types_truncate_with_warning(name):
  t = getattr(jnp, name)
  with pytest.warns(UserWarning, match=f"Explicitly requested dtype {name} requested in asarray"):
    x = t(1)
  assert x.dtype == jax.dtypes.canonicalize_dtype(np.dtype(t))


def test_scalar_type_calls():
  x = jnp.float32(1.5)
  assert repr(x) == "Array(1.5, dtype=float32)"
  v = jnp.int32([1, 2.7])
  assert v.shape == (2,) and v.dtype == np.int32 and v.tolist() == [1, 2]
  assert jnp.bool_(0).dtype == np.bool_ and not bool(jnp.bool_(0))
  assert jnp.bfloat16(1.5).dtype == ml_dtypes.bfloat16
  assert jnp.uint8(jnp.arange(3)).dtype == np.uint8
  out = jax.jit(lambda a: jnp.float16(a))(np.int32(3))
  assert out.dtype == np.float16 and float(out) == 3.0


def test_scalar_type_aliases():
  assert jnp.bool is jnp.bool_
  assert jnp.single is jnp.float32 and jnp.double is jnp.float64
  assert jnp.csingle is jnp.complex64 and jnp.cdouble is jnp.complex128
  assert jnp.int_ is jnp.int64 and jnp.uint is jnp.uint64
  assert jnp.float_ is jnp.float64 and jnp.complex_ is jnp.complex128
  assert jnp.dtype is np.dtype
  assert jnp.dtype(jnp.bfloat16) == ml_dtypes.bfloat16
  assert jnp.float32.__name__ == "float32"


# ---------------------------------------------------------------- dtype API
def test_result_type_and_promote_types():
  assert jnp.result_type(jnp.int32, jnp.float32) == np.float32
  assert jnp.result_type(jnp.arange(3), 1.0) == np.float32
  assert jnp.result_type(jnp.bfloat16, 1.0) == ml_dtypes.bfloat16
  assert jnp.result_type(np.int8, np.uint8) == np.int16
  assert jnp.result_type(np.float64) == np.float32
  assert jnp.result_type(int) == np.int32
  with jax.enable_x64():
    assert jnp.result_type(np.float64) == np.float64
  assert jnp.promote_types(jnp.int32, jnp.float64) == np.float64
  assert jnp.promote_types("int8", "uint8") == np.int16
  assert jnp.promote_types(jnp.bfloat16, jnp.float16) == np.float32
  with pytest.raises(jax.dtypes.TypePromotionError):
    jnp.promote_types(jnp.float8_e4m3fn, jnp.float8_e5m2)


def test_issubdtype_isdtype():
  assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
  assert jnp.issubdtype(jnp.float8_e4m3fn, jnp.inexact)
  assert jnp.issubdtype(jnp.int4, jnp.signedinteger)
  assert jnp.issubdtype(jnp.uint8, jnp.unsignedinteger)
  assert not jnp.issubdtype(jnp.int32, jnp.floating)
  assert jnp.issubdtype(jnp.complex64, jnp.complexfloating)
  assert jnp.issubdtype(jnp.float32, np.float32)
  assert jnp.issubdtype(np.dtype("int16"), jnp.number)
  assert jnp.isdtype(jnp.float32, "real floating")
  assert jnp.isdtype(jnp.bfloat16, "real floating")
  assert jnp.isdtype(np.int8, ("bool", "integral"))
  assert jnp.isdtype(np.uint16, "unsigned integer") and not jnp.isdtype(np.int16, "unsigned integer")
  assert jnp.isdtype(np.bool_, "bool") and not jnp.isdtype(np.bool_, "numeric")
  assert jnp.isdtype(np.complex64, "numeric")
  assert jnp.isdtype(np.float32, np.float32) and not jnp.isdtype(np.float32, np.float64)
  assert jnp.isdtype(jnp.float16, (jnp.float16, "integral"))
  with pytest.raises(ValueError, match="Unrecognized kind"):
    jnp.isdtype(np.float32, "floating point")
  with pytest.raises(TypeError, match="Expected kind to be a dtype, string, or tuple"):
    jnp.isdtype(np.float32, 3.5)


def test_can_cast_finfo_iinfo():
  assert jnp.can_cast(jnp.int8, jnp.int32)
  assert not jnp.can_cast(jnp.float32, jnp.int32)
  assert jnp.can_cast(jnp.float32, jnp.int32, casting="unsafe")
  assert jnp.can_cast(jnp.bfloat16, jnp.float32)
  assert jnp.finfo(jnp.float32).eps == np.finfo(np.float32).eps
  assert jnp.finfo(jnp.bfloat16).bits == 16
  assert jnp.finfo(jnp.float8_e4m3fn).max == float(ml_dtypes.finfo(ml_dtypes.float8_e4m3fn).max)
  assert jnp.finfo(np.complex64).dtype == np.float32
  assert jnp.finfo(jnp.zeros(2, jnp.float16)).bits == 16
  assert jnp.iinfo(jnp.int8).max == 127 and jnp.iinfo(jnp.int4).min == -8
  assert jnp.iinfo(jnp.uint16).max == 65535


def test_object_queries():
  assert jnp.iscomplexobj(1j) and jnp.iscomplexobj(jnp.zeros(2, jnp.complex64))
  assert jnp.iscomplexobj(np.complex64(1)) and jnp.iscomplexobj([1j])
  assert not jnp.iscomplexobj(1.0) and not jnp.iscomplexobj(None)
  assert jnp.isrealobj(jnp.arange(2)) and not jnp.isrealobj(1j)
  for yes in (1, 2.0, np.float32(1), jnp.asarray(1.0), np.array(2), True):
    assert jnp.isscalar(yes), yes
  for no in (jnp.arange(2), np.zeros(1), [1], None, object()):
    assert not jnp.isscalar(no), no
  assert jnp.ndim(jnp.zeros((2, 3))) == 2 and jnp.ndim(3.0) == 0
  assert jnp.shape(jnp.zeros((2, 3))) == (2, 3) and jnp.shape(1) == ()
  assert jnp.size(jnp.zeros((2, 3))) == 6 and jnp.size(jnp.zeros((2, 3)), 1) == 3
  assert jnp.size(jnp.zeros((2, 3)), (0, 1)) == 6 and jnp.size(2.0) == 1
  for fn, want in ((jnp.ndim, 1), (jnp.shape, (2,)), (jnp.size, 2)):
    with pytest.warns(DeprecationWarning, match="requires ndarray or scalar arguments"):
      assert fn([1, 2]) == want
  assert jnp.iterable([1]) and not jnp.iterable(1)


def test_shape_queries_under_jit():
  def f(x):
    assert jnp.ndim(x) == 2 and jnp.shape(x) == (2, 3) and jnp.size(x) == 6
    assert not jnp.isscalar(x) and jnp.isscalar(jnp.sum(x) if hasattr(jnp, "sum") else 0)
    return x
  jax.jit(f)(np.zeros((2, 3), np.float32))


def test_constants_and_type_classes():
  assert jnp.pi == np.pi and jnp.e == np.e and jnp.euler_gamma == np.euler_gamma
  assert np.isinf(jnp.inf) and np.isnan(jnp.nan) and jnp.newaxis is None
  for name in ("number", "inexact", "floating", "integer", "signedinteger", "unsignedinteger",
               "complexfloating", "generic", "character", "flexible", "object_"):
    assert getattr(jnp, name) is getattr(np, name)
  assert jnp.ComplexWarning is np.exceptions.ComplexWarning


def test_printoptions():
  x = jnp.array([1.123456789])
  with jnp.printoptions(precision=2):
    assert "1.12" in str(x) and "1.123" not in str(x)
    assert jnp.get_printoptions()["precision"] == 2
  old = jnp.get_printoptions()
  try:
    jnp.set_printoptions(precision=3)
    assert np.get_printoptions()["precision"] == 3
  finally:
    np.set_printoptions(**old)


# --------------------------------------------------------- array API metadata
def test_array_api_metadata():
  assert jnp.__array_api_version__ == "2024.12"
  info = jnp.__array_namespace_info__()
  assert info.capabilities() == {"boolean indexing": False, "data-dependent shapes": False,
                                 "max dimensions": 64}
  assert info.default_device() is None
  devs = info.devices()
  assert devs[0] is None and devs[1:] == list(jax.devices())
  assert info.default_dtypes() == {
      "real floating": np.dtype("float32"), "complex floating": np.dtype("complex64"),
      "integral": np.dtype("int32"), "indexing": np.dtype("int32")}
  assert set(info.dtypes()) == {"bool", "int8", "int16", "int32", "uint8", "uint16", "uint32",
                                "float32", "complex64"}
  assert info.dtypes(kind="real floating") == {"float32": np.dtype("float32")}
  assert set(info.dtypes(kind=("bool", "unsigned integer"))) == {"bool", "uint8", "uint16",
                                                                  "uint32"}
  with jax.enable_x64():
    assert info.default_dtypes()["integral"] == np.int64
    assert "float64" in info.dtypes(kind="real floating")
  assert jnp.zeros(2).__array_namespace__() is jnp


# ------------------------------------------------- where / clip / comparisons
def test_where_values_and_dtypes():
  c = np.array([True, False, True])
  out = jnp.where(c, 1, 2)
  assert out.dtype == np.int32 and out.weak_type and out.tolist() == [1, 2, 1]
  out = jnp.where(c, jnp.arange(3, dtype=jnp.int8), 2.5)
  assert out.dtype == np.float32 and out.weak_type
  out = jnp.where(c, jnp.zeros(3, jnp.float16), 1)
  assert out.dtype == np.float16 and not out.weak_type
  out = jnp.where(np.zeros((2, 1), bool), np.arange(3), -1)
  assert out.shape == (2, 3) and out.tolist() == [[-1] * 3] * 2
  assert jnp.where(True, jnp.zeros((0, 2)), 1.0).shape == (0, 2)


def test_where_errors():
  with pytest.raises(TypeError, match="where requires ndarray or scalar arguments"):
    jnp.where(True, None, 1)
  with pytest.raises(TypeError, match="where requires ndarray or scalar arguments"):
    jnp.where([True], 1, 2)
  with pytest.raises(ValueError, match="size and fill_value arguments cannot be used"):
    jnp.where(True, 1, 2, size=3)
  with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
    jnp.where(np.ones(3, bool), np.ones(2), 0)


def test_clip_behaviour_and_errors():
  x = jnp.arange(6)
  assert jnp.clip(x, 1, 4).tolist() == [1, 1, 2, 3, 4, 4]
  assert jnp.clip(x, max=2).tolist() == [0, 1, 2, 2, 2, 2]
  assert jnp.clip(x).tolist() == list(range(6))
  assert jnp.clip(x, 4, 1).tolist() == [1] * 6  # max wins
  assert jnp.clip(jnp.float16(3), 0, 1).dtype == np.float16
  assert x.clip(2, 3).tolist() == [2, 2, 2, 3, 3, 3]
  with pytest.raises(ValueError, match="No input was provided to the clip function"):
    jnp.clip()
  with pytest.raises(ValueError, match="Complex values have no ordering"):
    jnp.clip(jnp.zeros(2, jnp.complex64), 0, 1)
  with pytest.raises(ValueError, match="Complex values have no ordering"):
    jnp.clip(x, 1j)
  with pytest.raises(TypeError):
    jnp.clip(x, a_min=1)
  with pytest.raises(TypeError, match="clip requires ndarray or scalar arguments"):
    jnp.clip([1, 2], 0, 1)


def test_isclose_dtypes_and_defaults():
  out = jnp.isclose(jnp.arange(3), np.array([0, 1, 3]))
  assert out.dtype == np.bool_ and out.tolist() == [True, True, False]
  assert jnp.isclose(1e10, 1.000001e10).tolist()
  assert not jnp.isclose(1e10, 1.00001e10).tolist()  # float32: |a - b| > rtol * |b|
  assert not jnp.isclose(jnp.inf, -jnp.inf).tolist()
  assert jnp.isclose(jnp.inf, jnp.inf).tolist()
  assert jnp.isclose(jnp.nan, jnp.nan, equal_nan=True).tolist()
  assert not jnp.isclose(jnp.nan, jnp.nan).tolist()
  assert bool(jnp.allclose(jnp.ones(3), 1.0 + 1e-9))
  assert bool(jnp.array_equal(jnp.ones(3), jnp.ones(3)))
  assert bool(jnp.array_equal([1, 2], (1, 2)))
  assert not bool(jnp.array_equal(jnp.ones(2), jnp.ones(3)))
  assert not bool(jnp.array_equiv(jnp.ones(2), jnp.ones(3)))
  assert bool(jnp.array_equiv(jnp.ones((1, 3)), jnp.ones((2, 3))))
  with pytest.raises(TypeError, match="allclose requires ndarray or scalar arguments"):
    jnp.allclose([1.0], [1.0])


# ------------------------------------------------------------------ casting
def test_astype():
  x = jnp.arange(3)
  assert jnp.astype(x, None).dtype == np.float32
  assert jnp.astype(x, float).dtype == np.float32
  assert jnp.astype(x, jnp.int32) is x
  y = jnp.astype(x, jnp.int32, copy=True)
  assert y is not x and y.tolist() == [0, 1, 2]
  assert not jnp.astype(jnp.asarray(1.0), jnp.float32).weak_type
  assert x.astype(jnp.bfloat16).dtype == ml_dtypes.bfloat16
  with pytest.warns(UserWarning, match="float64 requested in astype"):
    assert x.astype(np.float64).dtype == np.float32
  with pytest.warns(DeprecationWarning, match="Casting from complex to real dtypes"):
    assert jnp.astype(jnp.array([1 + 2j]), jnp.float32).tolist() == [1.0]
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert jnp.astype(jnp.array([0j, 1j]), bool).tolist() == [False, True]
  with pytest.raises(TypeError, match="astype requires ndarray or scalar arguments"):
    jnp.astype([1], jnp.int32)


def test_view_errors_and_shapes():
  x = jnp.zeros((2, 3), jnp.int16)
  assert x.view(jnp.int8).shape == (2, 6)
  assert jnp.zeros((1, 4), jnp.int8).view(jnp.int16).shape == (1, 2)
  assert x.view() is x and x.view(jnp.int16) is x
  assert jnp.array([1, 0, 1], dtype=jnp.int8).view(jnp.bool_).tolist() == [True, False, True]
  assert jnp.float32(1.0).view(jnp.int32).tolist() == 0x3F800000
  with pytest.raises(ValueError, match="view\\(\\) of a 0d array"):
    jnp.float32(1.0).view(jnp.int8)
  with pytest.raises(ValueError, match="When changing to a larger dtype"):
    jnp.zeros(3, jnp.int8).view(jnp.int16)
  with pytest.raises(NotImplementedError, match="`type` argument"):
    x.view(type=np.ndarray)
  out = jax.jit(lambda a: a.view(jnp.uint16))(np.ones(2, np.float16))
  assert out.tolist() == [0x3C00, 0x3C00]


def test_round():
  x = jnp.array([0.5, 1.5, 2.5, -2.5, 1.25])
  assert jnp.round(x).tolist() == [0.0, 2.0, 2.0, -2.0, 1.0]
  assert jnp.round(x, 1).tolist() == pytest.approx([0.5, 1.5, 2.5, -2.5, 1.2])
  assert jnp.round(jnp.arange(3), 2).dtype == np.int32
  assert jnp.round(2.5).weak_type and float(jnp.round(2.5)) == 2.0
  assert jnp.round(jnp.float32(3.14159), 50).tolist() == pytest.approx(3.14159)
  assert jnp.round(jnp.float16(1.26), 1).dtype == np.float16
  assert jnp.around(1.26, 1).tolist() == pytest.approx(1.3)
  c = jnp.round(jnp.array([1.5 + 2.5j]))
  assert c.dtype == np.complex64 and c.tolist() == [2 + 2j]
  assert round(jnp.float32(2.6)).tolist() == 3.0
  with pytest.raises(NotImplementedError, match="integer np.round not implemented"):
    jnp.round(jnp.arange(3), -1)
  with pytest.raises(NotImplementedError, match="'out' argument"):
    jnp.round(x, out=x)
  with pytest.raises(errors.ConcretizationTypeError, match="'decimals' argument of jnp.round"):
    jax.jit(lambda d: jnp.round(x, d))(1)
  assert jax.jit(lambda a: jnp.round(a, 1))(x).tolist() == jnp.round(x, 1).tolist()
