"""The eager fast path (``openjax/_src/numpy/ufuncs_eager.py``) against the
general path it short-cuts: the same values bit for bit, dtypes, weak types,
shapes and errors for every pair of operand kinds, and out of the way under
transformations, debug flags and x64 changes.

The general path of a jnp function is its ``__wrapped__`` (promotion, casts
and primitive binds through the eval trace)."""
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import dtypes, lax
from openjax._src.core import Array, eval_trace, ShapedArray
from openjax._src.numpy import indexing, reductions, ufuncs_eager

_DTYPES = [np.dtype(t) for t in (
    np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
    np.uint64, np.float16, np.float32, np.float64, np.complex64, np.complex128,
    ml_dtypes.bfloat16)]
_N = 9


def _values(dt: np.dtype) -> np.ndarray:
  """Nine values of ``dt`` with its edge cases (signed zeros, inf, NaN, limits)."""
  if dt == np.bool_:
    vals = [True, False, True, True, False, False, True, False, True]
  elif dt.kind in "iu":
    info = np.iinfo(dt)
    vals = [0, 1, 7, info.max, info.min, info.max - 1, 3, 2, 5 if dt.kind == "u" else -5]
  elif dt.kind == "c":
    vals = [0, complex(-0.0, 1), 1.5 - 2j, complex(np.inf, 0), complex(np.nan, 1), 3e38j,
            -2.25, 1e-40 + 1j, complex(0, -np.inf)]
  else:
    vals = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, 3e38, 1e-40]
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    return np.array(vals).astype(dt)


def _array(dt, weak=False, shape=(_N,)):
  v = _values(np.dtype(dt))
  v = v[:int(np.prod(shape))].reshape(shape) if shape != (_N,) else v
  x = jnp.asarray(v) if np.dtype(dt) != np.float64 and np.dtype(dt) != np.int64 and \
      np.dtype(dt) != np.uint64 and np.dtype(dt) != np.complex128 else None
  if x is None:   # 64-bit dtypes need x64 to be made; they stay 64-bit afterwards
    with jax.enable_x64():
      x = jnp.asarray(v)
  if weak:
    x = lax._convert_element_type(x, x.dtype, weak_type=True)
  return x


def _operands():
  out = [("%s" % dt.name, _array(dt)) for dt in _DTYPES]
  out += [("weak_%s" % t, _array(t, weak=True)) for t in ("int32", "float32", "complex64")]
  scalars = [True, 3, -1, 300, 2 ** 40, 1.5, -0.0, float("nan"), float("inf"), 1e300, 1 + 2j]
  out += [(f"py_{s!r}", s) for s in scalars]
  return out


_OPERANDS = _operands()
_BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "equal",
           "not_equal", "less", "greater_equal"]
_UNARY = ["sin", "cos", "exp", "log", "sqrt", "tanh", "arctanh", "negative", "expm1"]


def _outcome(fn, *args):
  """(dtype, weak type, shape, bytes) of ``fn(*args)``, or its error."""
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      r = fn(*args)
  except Exception as e:  # noqa: BLE001 - the error is compared
    return ("error", type(e).__name__, str(e))
  assert type(r) is Array, type(r)
  v = np.asarray(r)
  return (r.dtype, r.weak_type, r.shape, v.tobytes())


def _is_scalar(x):
  return type(x) in (bool, int, float, complex)


@pytest.mark.parametrize("name", _BINARY)
def test_binary_functions_match_the_general_path(name):
  fast = getattr(jnp, name)
  general = fast.__wrapped__
  mismatches = []
  for xn, x in _OPERANDS:
    for yn, y in _OPERANDS:
      if _is_scalar(x) and _is_scalar(y):
        continue
      want, got = _outcome(general, x, y), _outcome(fast, x, y)
      if got != want:
        mismatches.append(f"{name}({xn}, {yn}): {got[:3]} != {want[:3]}")
  assert not mismatches, "\n".join(mismatches[:20])


_OPERATORS = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
              "multiply": lambda x, y: x * y, "true_divide": lambda x, y: x / y,
              "equal": lambda x, y: x == y, "less": lambda x, y: x < y,
              "greater_equal": lambda x, y: x >= y}


@pytest.mark.parametrize("name", sorted(_OPERATORS))
def test_operators_match_the_general_path(name):
  op, general = _OPERATORS[name], getattr(jnp, name).__wrapped__
  mismatches = []
  for xn, x in _OPERANDS:
    for yn, y in _OPERANDS:
      if _is_scalar(x) and _is_scalar(y):
        continue
      want, got = _outcome(general, x, y), _outcome(op, x, y)
      if got != want:
        mismatches.append(f"{xn} {name} {yn}: {got[:3]} != {want[:3]}")
  assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("name", _UNARY)
def test_unary_functions_match_the_general_path(name):
  fast = getattr(jnp, name)
  general = fast.__wrapped__
  for xn, x in _OPERANDS:
    if _is_scalar(x):
      continue
    assert _outcome(fast, x) == _outcome(general, x), (name, xn)
  x = _array(np.float32)
  assert _outcome(lambda a: -a, x) == _outcome(jnp.negative.__wrapped__, x)


@pytest.mark.parametrize("xshape,yshape", [
    ((), ()), ((), (3,)), ((3,), ()), ((2, 3), (3,)), ((1, 3), (2, 1)), ((2, 3), (2, 3)),
    ((0,), (0,)), ((0,), ()), ((2, 3), (3, 2))])
def test_shapes_match_the_general_path(xshape, yshape):
  for dx, dy in [(np.float32, np.float32), (np.int32, np.float32), (np.bool_, np.uint8)]:
    x, y = _array(dx, shape=xshape), _array(dy, shape=yshape)
    for name in ("add", "multiply", "less"):
      fast = getattr(jnp, name)
      assert _outcome(fast, x, y) == _outcome(fast.__wrapped__, x, y), (name, xshape, yshape)
    assert _outcome(lambda a, b: a * b, x, 2.5) == _outcome(jnp.multiply.__wrapped__, x, 2.5)


def test_common_cases_bind_no_primitive(monkeypatch):
  """The cases the fast path exists for really take it (no eval-trace bind)."""
  binds = []
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: binds.append(p) or [])
  x, y, i = _array(np.float32), _array(np.float32), _array(np.int32)
  for f in (lambda: x * y, lambda: x + 1.0, lambda: 2.0 - x, lambda: jnp.sin(x),
            lambda: i * 2, lambda: i + 1.5, lambda: x < y, lambda: -x, lambda: x / i,
            lambda: jnp.maximum(x, 0.0), lambda: jnp.exp(i), lambda: jnp.sum(x),
            lambda: jnp.prod(i, axis=0), lambda: x.sum(), lambda: x[0], lambda: x[1:3],
            lambda: jnp.mean(i), lambda: jnp.max(x), lambda: x.min(axis=0)):
    f()
    f()
  assert binds == []


def test_results_are_read_only_and_rank_0_results_are_arrays():
  x, y = _array(np.float32), _array(np.float32)
  for r in (x * y, x + 1.0, jnp.sin(x), 2.0 - x):
    assert not np.asarray(r).flags.writeable
  s = jnp.asarray(np.float32(2)) * 3.0
  assert type(s) is Array and s.shape == () and s.dtype == np.float32 and not s.weak_type
  assert isinstance(s._value, np.ndarray) and not s._value.flags.writeable


def test_signed_zero_and_nan_scalars_are_not_confused():
  x = jnp.asarray(np.ones(3, np.float32))
  assert np.signbit(np.asarray(x * -0.0)).all()
  assert not np.signbit(np.asarray(x * 0.0)).any()
  assert np.signbit(np.asarray(x * -0.0)).all()
  assert np.isnan(np.asarray(x + float("nan"))).all()
  assert (np.asarray(x + 1) == 2).all() and (np.asarray(x + True) == 2).all()
  assert (x + 1.0).dtype == np.float32 and (x + 1j).dtype == np.complex64


def test_no_floating_point_warnings():
  x = jnp.asarray(np.array([3e38, 0.0, np.inf], np.float32))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    x * x, x / 0.0, x - x, jnp.log(x - 1.0), jnp.sqrt(-x), x < float("nan")  # noqa: B018


def test_unsupported_operands_keep_python_semantics():
  x = _array(np.float32)
  assert (x == None) is False  # noqa: E711 - the operator itself is tested
  with pytest.raises(TypeError):
    x * object()
  with pytest.raises(TypeError):
    object() - x
  with pytest.raises(TypeError):
    jnp.multiply(x, [1.0] * _N)
  got = x * np.float32(2)      # NumPy operands take the general path
  assert got.dtype == np.float32 and not got.weak_type


def _accepts(prim, dt, n):
  try:
    prim.abstract_eval(*[ShapedArray((), dt) for _ in range(n)])
  except TypeError:
    return False
  return True


def test_kernels_are_the_primitive_impls():
  """Each kernel gives the primitive impl's bits for every NumPy dtype its
  abstract evaluation accepts."""
  checked = 0
  for table, n in ((ufuncs_eager.BINARY_KERNELS, 2), (ufuncs_eager.UNARY_KERNELS, 1)):
    for prim, kernel in table.items():
      for dt in sorted(ufuncs_eager.NUMPY_DTYPES, key=str):
        if not ufuncs_eager._kernel_applies(prim, dt) or not _accepts(prim, dt, n):
          continue
        args = (_values(dt), _values(dt)[::-1].copy())[:n]
        want, = prim.impl(*args)
        with np.errstate(all="ignore"):
          got = np.asarray(kernel(*args))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (prim, dt)
        checked += 1
  assert checked > 150


def _general_reduction(name):
  """The general path of jnp.<name> with the fast path's arguments."""
  if name in ("sum", "prod"):
    f = getattr(reductions, "_" + name)
    return lambda x, axis, keepdims, promote: f(x, axis, None, None, keepdims, None, None, promote)
  if name in ("max", "min"):
    f = getattr(reductions, "_" + name)
    return lambda x, axis, keepdims, promote: f(x, axis, None, keepdims, None, None)
  return lambda x, axis, keepdims, promote: reductions._mean(x, axis, keepdims=keepdims)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_reductions_match_the_general_path(name):
  general = _general_reduction(name)
  promotes = (True, False) if name in ("sum", "prod") else (True,)

  def fast(x, axis, keepdims, promote):
    kw = {"promote_integers": promote} if name in ("sum", "prod") else {}
    return getattr(jnp, name)(x, axis, keepdims=keepdims, **kw)

  mismatches = []
  for dt in _DTYPES:
    for shape in ((), (_N,), (3, 3), (0, 3)):
      x = _array(dt, shape=shape)
      for weak in (False, True):
        if weak:
          x = lax._convert_element_type(x, x.dtype, weak_type=True)
        for axis in (None, 0, -1, (0, 1), (), (1, 0), 2, [0]):
          for keepdims in (False, True):
            for promote in promotes:
              args = (x, axis, keepdims, promote)
              want, got = _outcome(general, *args), _outcome(fast, *args)
              if got != want:
                mismatches.append(f"{name}({x.aval}, {axis}, {keepdims}, {promote}): "
                                  f"{got[:3]} != {want[:3]}")
  assert not mismatches, "\n".join(mismatches[:20])


def test_sum_under_global_x64():
  x = _array(np.int8, shape=(3, 3))
  try:
    jax.config.update("jax_enable_x64", True)
    assert jnp.sum(x).dtype == np.int64 and jnp.prod(x, 0).dtype == np.int64
    assert _outcome(jnp.sum, x) == _outcome(reductions._sum, x, None, None, None, False, None,
                                            None, True)
  finally:
    jax.config.update("jax_enable_x64", False)
  assert jnp.sum(x).dtype == np.int32


@pytest.mark.parametrize("idx", [
    0, -1, 2, 3, -4, 7, slice(None), slice(1, None), slice(None, None, -1), slice(5, 1, -2),
    slice(-100, 100), (0,), (1, 2), (-1, -1), (0, slice(None, None, 2)), (slice(None), 1),
    (), (0, 0, 0), True, None, Ellipsis, (Ellipsis, 0), np.int32(1), slice(np.int64(1), 2),
    slice(0, 3, 0)])
def test_basic_indexing_matches_the_general_path(idx):
  for x in (_array(np.float32, shape=(3, 3)), _array(np.int8, weak=True, shape=(3, 3)),
            _array(np.bool_, shape=(_N,))):
    got, want = _outcome(lambda a: a[idx], x), _outcome(indexing._getitem, x, idx)
    assert got == want, (idx, x.aval)


# ------------------------------------------------------ stepping aside
def test_transformations_stage_operations_on_concrete_arrays():
  c = jnp.asarray(np.arange(3, dtype=np.float32))
  jaxpr = str(jax.make_jaxpr(lambda a: c * c + jnp.sin(c) + a * 2.0)(c))
  assert jaxpr.count("mul") == 2 and "sin" in jaxpr and "add" in jaxpr
  np.testing.assert_allclose(jax.grad(lambda a: jnp.sum(a * a * 2.0))(c), 4 * np.arange(3))
  np.testing.assert_allclose(jax.vmap(lambda a: a * c)(jnp.ones((2, 3))),
                             np.tile(np.arange(3), (2, 1)))
  np.testing.assert_array_equal(jax.jit(lambda a: a * 2.0 - c)(c),
                                np.arange(3) * 2.0 - np.arange(3))
  with jax.disable_jit():
    np.testing.assert_array_equal(jax.jit(lambda a: a * 2.0 - c)(c), np.arange(3))


def test_another_thread_tracing_does_not_change_eager_results():
  c = jnp.asarray(np.arange(3, dtype=np.float32))
  started, go, out = threading.Event(), threading.Event(), {}

  def traced(a):
    started.set()
    go.wait(10)
    return c * c + a

  t = threading.Thread(target=lambda: out.setdefault("jaxpr", str(jax.make_jaxpr(traced)(c))))
  t.start()
  assert started.wait(10)
  eager = c * c                   # this thread is not tracing: concrete, fast
  go.set()
  t.join(10)
  assert type(eager) is Array
  np.testing.assert_array_equal(eager, np.arange(3) ** 2)
  assert "mul" in out["jaxpr"]


def test_debug_nans_still_raises():
  x = jnp.asarray(np.array([0.0, 1.0], np.float32))
  try:
    jax.config.update("jax_debug_nans", True)
    with pytest.raises(FloatingPointError):
      x / x
    with pytest.raises(FloatingPointError):
      jnp.log(x - 1.0)
  finally:
    jax.config.update("jax_debug_nans", False)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      x * float("nan")
  assert np.isnan(np.asarray(x / x))[0]


def test_x64_changes_are_seen():
  b = jnp.asarray(np.array([True, False]))
  assert (b + 1).dtype == np.int32
  with jax.enable_x64():
    assert (b + 1).dtype == np.int64 and (b + 1).weak_type
  assert (b + 1).dtype == np.int32
  try:
    jax.config.update("jax_enable_x64", True)
    assert (b + 1).dtype == np.int64
    assert (b * 1.5).dtype == np.float64
  finally:
    jax.config.update("jax_enable_x64", False)
  assert (b + 1).dtype == np.int32 and (b * 1.5).dtype == np.float32


def test_x64_override_in_another_thread_stays_there():
  b = jnp.asarray(np.array([True, False]))
  inside, release, seen = threading.Event(), threading.Event(), {}

  def worker():
    with jax.enable_x64():
      seen["worker"] = ((b + 1).dtype, jnp.sum(b).dtype, dtypes.canonicalize_dtype(np.int64))
      inside.set()
      release.wait(10)

  t = threading.Thread(target=worker)
  t.start()
  assert inside.wait(10)
  here = ((b + 1).dtype, jnp.sum(b).dtype, dtypes.canonicalize_dtype(np.int64))
  release.set()
  t.join(10)
  assert seen["worker"] == (np.int64, np.int64, np.int64)
  assert here == (np.int32, np.int32, np.int32)


def test_arrays_still_being_computed_and_deleted_arrays():
  x = jnp.asarray(np.arange(4, dtype=np.float32))
  compiled = jax.jit(lambda a: a + 1.0).lower(x).compile()
  y = compiled(x)              # backed by an IREE buffer until read
  np.testing.assert_array_equal(y * 2.0, (np.arange(4) + 1.0) * 2.0)
  np.testing.assert_array_equal(jnp.sin(compiled(x)), np.sin(np.arange(4, dtype=np.float32) + 1))
  z = x * 1.0
  z.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    z * x
  with pytest.raises(RuntimeError, match="deleted"):
    jnp.sin(z)
