"""NumPy arrays passed to jnp functions (``jnp.add(np_a, np_b)``,
``jnp.sin(np_a)``): their promotion is cached per (dtype, rank) as Arrays'
is (``numpy/util._operand_key``, ``_dtype_key``), their conversion's bind
takes the eval trace's inline check of the last plan (``process_primitive``),
and ``dtypes.dtype`` reads their dtype at once; the results (values, dtypes,
weak types) are the general path's."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import dtypes
from openjax._src.core import trace
from openjax._src.numpy import util

DTYPES = [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.int64, np.uint32, np.float16,
          np.float32, np.float64, np.complex64, ml_dtypes.bfloat16]


def _expected(*args):
  dt, weak = dtypes.result_type(*args, return_weak_type_flag=True)
  return dt, weak


@pytest.mark.parametrize("a_dt", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("b_kind", ["numpy", "array", "python_float", "python_int",
                                    "numpy_scalar"])
def test_binary_promotion_of_numpy_arrays(a_dt, b_kind):
  a = (np.arange(4) % 2).astype(a_dt)
  b = {"numpy": np.arange(4, dtype=np.int16), "array": jnp.asarray(np.ones(4, np.float16)),
       "python_float": 2.0, "python_int": 3, "numpy_scalar": np.float32(2)}[b_kind]
  dt, weak = _expected(a, b)
  for _ in range(2):   # the general path, then the cached promotion
    out = jnp.add(a, b)
    assert out.dtype == dt and out.weak_type == weak
    np.testing.assert_array_equal(np.asarray(out, np.complex128),
                                  (np.asarray(a, np.complex128) + np.asarray(b, np.complex128)))


@pytest.mark.parametrize("dt", DTYPES, ids=lambda d: np.dtype(d).name)
def test_unary_functions_of_numpy_arrays(dt):
  a = (np.arange(5) % 3).astype(dt)
  for _ in range(2):
    out = jnp.negative(a) if dt is not np.bool_ else jnp.logical_not(a)
    assert out.dtype == dtypes.canonicalize_dtype(np.dtype(dt))
    assert not out.weak_type
  if np.dtype(dt).kind == "f" or dt is ml_dtypes.bfloat16:
    np.testing.assert_allclose(np.asarray(jnp.sin(a), np.float64),
                               np.sin(a.astype(np.float64)), rtol=1e-2)


def test_promotion_of_numpy_arrays_is_cached_by_dtype_and_rank():
  a, b = np.ones(3, np.float64), np.arange(3, dtype=np.int8)
  jnp.add(a, b)
  keys = [k for k in util._PROMOTIONS
          if len(k) == 4 and k[2] == (np.dtype(np.float64), None, 1)
          and k[3] == (np.dtype(np.int8), None, 1)]
  assert keys, "the NumPy operands' promotion was not cached"
  dt, weak, converts = util._PROMOTIONS[keys[0]]
  assert dt == np.float32 and not weak and converts == (True, True)
  key = util._dtype_key((a, b), util._same_dtype)
  assert key is not None and (np.ndarray, np.dtype(np.int8)) in key


def test_numpy_arrays_of_other_ranks_broadcast_as_before():
  a, b = np.ones((2, 3), np.float32), np.arange(3, dtype=np.float32)
  for _ in range(2):
    np.testing.assert_array_equal(np.asarray(jnp.add(a, b)), a + b)
  with jax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError, match="jax_numpy_rank_promotion"):
      jnp.add(a, b)


def test_a_numpy_operand_takes_the_inline_plan_check(monkeypatch):
  a = np.linspace(0, 1, 7, dtype=np.float32)
  jnp.sin(a)   # the plans of the conversion and of sin
  jnp.sin(a)
  calls = []
  real = trace.EvalTrace._recent

  def counting(self, *args):
    calls.append(args[0].name)
    return real(self, *args)
  monkeypatch.setattr(trace.EvalTrace, "_recent", counting)
  out = jnp.sin(a)
  np.testing.assert_allclose(np.asarray(out), np.sin(a), rtol=1e-6)
  assert calls == []


def test_numpy_operands_are_copied_not_aliased():
  a = np.arange(4, dtype=np.float32)
  out = jnp.negative(a)
  out2 = jnp.add(a, a)
  a[:] = 100
  np.testing.assert_array_equal(np.asarray(out), -np.arange(4, dtype=np.float32))
  np.testing.assert_array_equal(np.asarray(out2), 2 * np.arange(4, dtype=np.float32))


@pytest.mark.parametrize("value", [np.zeros(3, np.float64), np.zeros(2, np.int64),
                                   np.zeros((), np.uint16), np.float64(1.5), np.int8(3),
                                   np.bool_(True), np.complex128(1j)])
def test_dtype_of_numpy_values(value):
  want = dtypes.canonicalize_dtype(np.asarray(value).dtype)
  assert dtypes.dtype(value) == want
  assert dtypes.dtype(value, canonicalize=False) == np.asarray(value).dtype


@pytest.mark.parametrize("value", [np.array(["a"]), np.array([object()]),
                                   np.datetime64(1, "s")])
def test_dtype_of_invalid_numpy_values_raises(value):
  with pytest.raises(TypeError):
    dtypes.dtype(value)
  with pytest.raises(TypeError):
    jnp.add(value, value)


# make_jaxpr(lambda a: jnp.add(a, v))(v) and (lambda a: jnp.sin(v) + a), JAX 0.10.2
JAX_ADD_CONST = "{ lambda a:f32[5]; b:f32[5]. let c:f32[5] = add b a in (c,) }"
JAX_SIN_CONST = "{ lambda a:f32[5]; b:f32[5]. let c:f32[5] = sin a; d:f32[5] = add c b in (d,) }"


def test_numpy_constants_convert_while_tracing_as_in_jax():
  # JAX folds a NumPy constant's conversion at trace time: the jaxpr holds it
  # as a constant, with no convert equation of it (even of another dtype).
  v = np.linspace(0.1, 0.9, 5, dtype=np.float32)
  assert str(jax.make_jaxpr(lambda a: jnp.add(a, v))(v)) == JAX_ADD_CONST
  assert str(jax.make_jaxpr(lambda a: jnp.sin(v) + a)(v)) == JAX_SIN_CONST
  w = np.arange(5)   # int64 NumPy values, promoted to float32 with the traced operand
  closed = jax.make_jaxpr(lambda a: a * w)(v)
  assert [e.primitive.name for e in closed.jaxpr.eqns] == ["mul"]
  assert closed.consts[0].dtype == np.float32
  np.testing.assert_array_equal(np.asarray(jax.jit(lambda a: a * w)(v)), v * w.astype(np.float32))
  g = jax.grad(lambda a: jnp.sum(jnp.sin(a) * w))(v)
  np.testing.assert_allclose(np.asarray(g), np.cos(v) * w, rtol=1e-6)
  out = jax.vmap(lambda a: a + v)(np.ones((3, 5), np.float32))
  np.testing.assert_array_equal(np.asarray(out), np.ones((3, 5), np.float32) + v)
