"""Eager operations: one path through ``bind`` and the eval trace's plans.

Every eager ``jnp`` function and ``Array`` operator goes through the lax
wrappers and ``Primitive.bind`` to ``EvalTrace.process_primitive``, whose
plan cache (kernel, Python scalar casts, result avals) and inline cache of
the last plan must give exactly what abstract evaluation + the impl give: the
same bits, dtypes, weak types, shapes and errors, for every operand kind, and
step aside for tracers, deleted arrays and arrays still being computed.

The reference is the definition of eager evaluation without any cache:
``canonical_value`` of each operand, the primitive's abstract evaluation and
impl, and the general promotion path of the jnp helpers (``flags_ok`` off)."""
import contextlib
import importlib.util
import threading
import warnings

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import dtypes, lax
from openjax._src.core import Array, eval_trace, registry
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import canonical_value, check_nans, eager_config, get_aval
from openjax._src.numpy import index_plans, reductions
from openjax._src.primitives.elementwise import logic
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.sort.sort import _sort_lexsort

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
  v = np.resize(v, shape) if shape != (_N,) else v
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
  # NumPy scalars: strongly typed rank-0 operands, promoted by their type
  numpy_scalars = [np.float32(1.5), np.float64(-0.0), np.int8(-5), np.uint8(200),
                   np.bool_(True), np.complex64(1 - 2j), ml_dtypes.bfloat16(2.5),
                   np.int64(2 ** 40)]
  out += [(f"np_{type(s).__name__}_{s!r}", s) for s in numpy_scalars]
  return out




def _reference_process(primitive, args, params):
  """Eager evaluation by its definition: no plan, no inline cache."""
  vals = [canonical_value(x) for x in args]
  avals = [get_aval(x) if type(x) is Array else
           ShapedArray(np.shape(v), v.dtype, dtypes.is_weakly_typed(x))
           for x, v in zip(args, vals)]
  out_avals = primitive.abstract_eval(*avals, **params)
  outs = primitive.impl(*vals, **params)
  result = []
  for o, a in zip(outs, out_avals):
    o = np.asarray(o)
    if o.dtype != a.dtype:
      o = o.astype(a.dtype)
    o.setflags(write=False)
    result.append(Array(o, a))
  if jax.config.read("jax_debug_nans") or jax.config.read("jax_debug_infs"):
    check_nans(primitive, [o._value for o in result])
  return result


@contextlib.contextmanager
def _reference():
  """Run eager code by the reference: the eval trace without plans and the
  jnp helpers' general promotion (their cache is skipped without
  ``flags_ok``)."""
  flags_ok = eager_config.flags_ok
  eval_trace.process_primitive = _reference_process
  eager_config.flags_ok = False
  try:
    yield
  finally:
    del eval_trace.process_primitive
    eager_config.flags_ok = flags_ok


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


def _both(fn, *args):
  """``fn(*args)``'s outcome by the reference, then twice through the plans
  (the second call hits the inline cache)."""
  with _reference():
    want = _outcome(fn, *args)
  return want, _outcome(fn, *args), _outcome(fn, *args)


def _mismatch(what, want, got, again):
  if got == want and again == want:
    return None
  return f"{what}: {got[:3]} / {again[:3]} != {want[:3]}"


def _is_scalar(x):
  """A Python or NumPy scalar: two of them make no Array (NumPy's own arithmetic)."""
  return type(x) in (bool, int, float, complex) or isinstance(x, np.generic)


_OPERANDS = _operands()
_BINARY = ["add", "subtract", "multiply", "true_divide", "maximum", "minimum", "equal",
           "not_equal", "less", "greater_equal", "power", "floor_divide", "arctan2"]
_UNARY = ["sin", "cos", "exp", "log", "sqrt", "tanh", "arctanh", "negative", "expm1",
          "abs", "square", "floor", "sign"]


@pytest.mark.parametrize("name", _BINARY)
def test_binary_functions_match_the_reference(name):
  fn = getattr(jnp, name)
  mismatches = []
  for xn, x in _OPERANDS:
    for yn, y in _OPERANDS:
      if _is_scalar(x) and _is_scalar(y):
        continue
      m = _mismatch(f"{name}({xn}, {yn})", *_both(fn, x, y))
      if m:
        mismatches.append(m)
  assert not mismatches, "\n".join(mismatches[:20])


_OPERATORS = {"add": lambda x, y: x + y, "subtract": lambda x, y: x - y,
              "multiply": lambda x, y: x * y, "true_divide": lambda x, y: x / y,
              "equal": lambda x, y: x == y, "less": lambda x, y: x < y,
              "greater_equal": lambda x, y: x >= y, "matmul": lambda x, y: x @ y,
              "bitwise_and": lambda x, y: x & y, "power": lambda x, y: x ** y}


@pytest.mark.parametrize("name", sorted(_OPERATORS))
def test_operators_match_the_reference(name):
  op = _OPERATORS[name]
  mismatches = []
  for xn, x in _OPERANDS:
    for yn, y in _OPERANDS:
      if _is_scalar(x) and _is_scalar(y):
        continue
      m = _mismatch(f"{xn} {name} {yn}", *_both(op, x, y))
      if m:
        mismatches.append(m)
  assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("name", _UNARY)
def test_unary_functions_match_the_reference(name):
  fn = getattr(jnp, name)
  mismatches = []
  for xn, x in _OPERANDS:
    m = _mismatch(f"{name}({xn})", *_both(fn, x))
    if m:
      mismatches.append(m)
  for xn, x in _OPERANDS[:5]:
    m = _mismatch(f"-{xn}", *_both(lambda a: -a, x))
    if m:
      mismatches.append(m)
  assert not mismatches, "\n".join(mismatches[:20])


@pytest.mark.parametrize("xshape,yshape", [
    ((), ()), ((), (3,)), ((3,), ()), ((2, 3), (3,)), ((1, 3), (2, 1)), ((2, 3), (2, 3)),
    ((0,), (0,)), ((0,), ()), ((2, 3), (3, 2)), ((3,), (3, 2)), ((2, 3), (3, 4))])
def test_shapes_match_the_reference(xshape, yshape):
  for dx, dy in [(np.float32, np.float32), (np.int32, np.float32), (np.bool_, np.uint8)]:
    x, y = _array(dx, shape=xshape), _array(dy, shape=yshape)
    for fn in (jnp.add, jnp.multiply, jnp.less, jnp.matmul, lambda a, b: jnp.where(a > 0, a, b),
               lambda a, b: a * 2.5):
      want, got, again = _both(fn, x, y)
      assert got == want and again == want, (fn, xshape, yshape, got[:3], want[:3])


def test_eval_kernels_give_the_impls_bits():
  """Every primitive's lean eval kernel, on every NumPy dtype its abstract
  evaluation accepts, gives what its impl gives (bits and dtypes)."""
  checked = 0
  for prim in list(registry.values()):
    if prim.eval_kernel is None or prim.name in ("dot_general", "sort", "select_n") \
        or prim.name.startswith("reduce_"):
      continue   # those are checked below with their parameters
    for dt in _DTYPES:
      for n in (1, 2):
        args = [_array(dt), _array(dt, shape=(_N,))[::-1]][:n]
        with _reference():
          want = _outcome(lambda *a: prim.bind1(*a), *args)
        if want[0] == "error":
          continue
        got = _outcome(lambda *a: prim.bind1(*a), *args)
        assert got == want, (prim, dt)
        checked += 1
  assert checked > 300
  for dt in _DTYPES:
    x = _array(dt, shape=(3, 3))
    for prim in (lax.reduce_sum_p, lax.reduce_prod_p, lax.reduce_max_p, lax.reduce_min_p):
      for axes in ((), (0,), (1,), (0, 1)):
        with _reference():
          want = _outcome(lambda a: prim.bind1(a, axes=axes), x)
        assert _outcome(lambda a: prim.bind1(a, axes=axes), x) == want, (prim, dt, axes)
    for dims in ((((1,), (0,)), ((), ())), (((0,), (0,)), ((), ())), (((1,), (1,)), ((), ())),
                 (((0,), (1,)), ((), ()))):
      fn = lambda a, b: lax.dot_general(a, b, dims)  # noqa: E731
      with _reference():
        want = _outcome(fn, x, x)
      assert _outcome(fn, x, x) == want, (dt, dims)


def test_sort_kernel_keeps_the_stable_order_of_zeros_and_nans():
  rng = np.random.default_rng(0)
  for dt in (np.float16, np.float32, np.float64, np.int8, np.uint32, np.bool_):
    for n in (0, 1, 9, 1000, 5000):
      v = rng.standard_normal(n) * 3
      v[rng.random(n) < 0.2] = 0.0
      if np.dtype(dt).kind == "f":
        v[rng.random(n) < 0.1] = -0.0
        v[rng.random(n) < 0.1] = np.nan
        v[rng.random(n) < 0.05] = -np.nan
        v[rng.random(n) < 0.05] = -np.inf
      with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        x = v.astype(dt)
      for shaped, axis in ((x, 0), (np.resize(x, (3, n)), 1), (np.resize(x, (3, n)), 0)):
        want, = _sort_lexsort(shaped, dimension=axis, is_stable=True, num_keys=1)
        with jax.enable_x64():
          got = np.asarray(jnp.sort(jnp.asarray(shaped), axis=axis))
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), (dt, n, axis)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "min", "mean"])
def test_reductions_match_the_reference(name):
  fn = getattr(jnp, name)
  promotes = (True, False) if name in ("sum", "prod") else (None,)
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
              kw = {} if promote is None else {"promote_integers": promote}
              call = lambda a: fn(a, axis, keepdims=keepdims, **kw)  # noqa: B023,E731
              m = _mismatch(f"{name}({x.aval}, {axis}, {keepdims}, {promote})", *_both(call, x))
              if m:
                mismatches.append(m)
  assert not mismatches, "\n".join(mismatches[:20])


def test_sum_under_global_x64():
  x = _array(np.int8, shape=(3, 3))
  try:
    jax.config.update("jax_enable_x64", True)
    assert jnp.sum(x).dtype == np.int64 and jnp.prod(x, 0).dtype == np.int64
    want, got, again = _both(jnp.sum, x)
    assert got == want == again
  finally:
    jax.config.update("jax_enable_x64", False)
  assert jnp.sum(x).dtype == np.int32


@pytest.mark.parametrize("idx", [
    0, -1, 2, 3, -4, 7, slice(None), slice(1, None), slice(None, None, -1), slice(5, 1, -2),
    slice(-100, 100), (0,), (1, 2), (-1, -1), (0, slice(None, None, 2)), (slice(None), 1),
    (), (0, 0, 0), True, None, Ellipsis, (Ellipsis, 0), np.int32(1), slice(np.int64(1), 2),
    slice(0, 3, 0), (None, 1), ((0, 1),), [0]])
def test_indexing_matches_the_reference(idx):
  for x in (_array(np.float32, shape=(3, 3)), _array(np.int8, weak=True, shape=(3, 3)),
            _array(np.bool_, shape=(_N,))):
    index_plans._STATIC_PLANS.clear()
    with _reference():
      want = _outcome(lambda a: a[idx], x)
    assert _outcome(lambda a: a[idx], x) == want, (idx, x.aval)   # plans made
    assert _outcome(lambda a: a[idx], x) == want, (idx, x.aval)   # plans reused


# ------------------------------------------------------------ one path
def test_there_is_one_eager_path(monkeypatch):
  """Operators, jnp functions and methods reach the primitive's bind in the
  eval trace; the separate fast paths are gone."""
  assert importlib.util.find_spec("openjax._src.numpy.ufuncs_eager") is None
  assert not hasattr(jnp.add, "eager_plan") and not hasattr(jnp.add, "__wrapped__")
  assert not hasattr(reductions, "_EAGER_PLANS") and not hasattr(reductions, "_eager_reduce")
  bound = []
  process = eval_trace.process_primitive
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: bound.append(p.name) or process(p, args, params))
  x, y, i = _array(np.float32), _array(np.float32), _array(np.int32)
  m = _array(np.float32, shape=(3, 3))
  cases = [(lambda: x + y, "add"), (lambda: jnp.add(x, y), "add"), (lambda: 2.0 - x, "sub"),
           (lambda: x * 2.0, "mul"), (lambda: jnp.sin(x), "sin"), (lambda: -x, "neg"),
           (lambda: x < y, "lt"), (lambda: x / i, "div"), (lambda: jnp.sum(x), "reduce_sum"),
           (lambda: x.sum(), "reduce_sum"), (lambda: jnp.max(x), "reduce_max"),
           (lambda: x[0], "slice"), (lambda: x[1:3], "slice"), (lambda: m @ m, "dot_general"),
           (lambda: lax.select(x > 0, x, y), "select_n"),
           (lambda: jnp.mean(m, axis=1), "reduce_sum")]
  for f, name in cases:
    for _ in range(2):   # the first call makes the plans, the second reuses them
      bound.clear()
      f()
      assert name in bound, (name, bound)
  # jnp.where is a library program, as JAX jits it (``jit[name=_where]``):
  # one cached program, no bind per primitive.
  bound.clear()
  jnp.where(x > 0, x, y)
  assert bound == ["gt"], bound


def test_plans_are_shared_and_chains_keep_their_avals():
  x, y = _array(np.float32), _array(np.float32)
  z = x + y
  # Results of one plan share its aval object, an operand's when equal: a
  # chain of operations keeps hitting the inline caches.
  assert (x + y).aval is z.aval and (z * y).aval is z.aval and (z + 1.0).aval is z.aval
  assert (z - z).aval is z.aval
  key_count = len(eval_trace._plans)
  for _ in range(3):
    x * y + 2.0
  assert len(eval_trace._plans) <= key_count + 2


def test_results_are_read_only_and_rank_0_results_are_arrays():
  x, y = _array(np.float32), _array(np.float32)
  for r in (x * y, x + 1.0, jnp.sin(x), 2.0 - x, jnp.sum(x), x[0], jnp.sort(x)):
    assert not np.asarray(r).flags.writeable
  s = jnp.asarray(np.float32(2)) * 3.0
  assert type(s) is Array and s.shape == () and s.dtype == np.float32 and not s.weak_type
  assert isinstance(s._value, np.ndarray) and not s._value.flags.writeable
  d = x @ y
  assert type(d) is Array and isinstance(d._value, np.ndarray) and d.shape == ()


def test_signed_zero_and_nan_scalars_are_not_confused():
  x = jnp.asarray(np.ones(3, np.float32))
  for _ in range(2):
    assert np.signbit(np.asarray(x * -0.0)).all()
    assert not np.signbit(np.asarray(x * 0.0)).any()
    assert np.signbit(np.asarray(lax.mul(x, -0.0))).all()
    assert not np.signbit(np.asarray(lax.mul(x, 0.0))).any()
  assert np.isnan(np.asarray(x + float("nan"))).all()
  assert (np.asarray(x + 1) == 2).all() and (np.asarray(x + True) == 2).all()
  assert (x + 1.0).dtype == np.float32 and (x + 1j).dtype == np.complex64
  assert (x + 1).weak_type is False and jnp.asarray(2.0).weak_type


def test_python_scalars_at_the_primitive_level():
  x = jnp.asarray(np.arange(3, dtype=np.float32))
  for s in (2.0, -0.0, float("nan"), 1e300):
    with _reference():
      want = _outcome(lax.mul, x, s)
    assert _outcome(lax.mul, x, s) == want == _outcome(lax.mul, x, s)
  i = jnp.asarray(np.arange(3, dtype=np.int32))
  with pytest.raises(OverflowError):
    lax.add(i, 2 ** 40)
  assert _outcome(lax.add, i, 2) == _outcome(lax.add, i, 2)
  assert np.asarray(lax.add(i, 2)).tolist() == [2, 3, 4]


def test_no_floating_point_warnings():
  x = jnp.asarray(np.array([3e38, 0.0, np.inf], np.float32))
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    for _ in range(2):
      x * x, x / 0.0, x - x, jnp.log(x - 1.0), jnp.sqrt(-x), x < float("nan")  # noqa: B018
      jnp.sum(x * x), x @ x, jnp.prod(x)  # noqa: B018


def test_unsupported_operands_keep_python_semantics():
  x = _array(np.float32)
  assert (x == None) is False  # noqa: E711 - the operator itself is tested
  with pytest.raises(TypeError):
    x * object()
  with pytest.raises(TypeError):
    object() - x
  with pytest.raises(TypeError):
    jnp.multiply(x, [1.0] * _N)

  class Other:
    def __radd__(self, other):
      return "radd"
  assert x + Other() == "radd"
  got = x * np.float32(2)      # NumPy operands: converted as canonical_value does
  assert got.dtype == np.float32 and not got.weak_type


def test_tracers_never_use_a_plan():
  x = _array(np.float32)
  leaked = []

  def f(a):
    leaked.append(a)
    return a * 2.0
  jax.jit(f).lower(x)
  x * x   # a plan for f32[9] operands exists
  with pytest.raises(jax.errors.UnexpectedTracerError):
    leaked[0] * x
  with pytest.raises(jax.errors.UnexpectedTracerError):
    lax.mul(x, leaked[0])


def test_debug_nans_is_checked_on_every_result():
  x = jnp.asarray(np.array([0.0, 1.0], np.float32))
  for _ in range(2):   # plans and inline caches made before the flag is set
    x / x, jnp.log(x - 1.0), x * float("nan"), jnp.sum(x / x)  # noqa: B018
  try:
    jax.config.update("jax_debug_nans", True)
    with pytest.raises(FloatingPointError, match="div"):
      x / x
    with pytest.raises(FloatingPointError):
      jnp.log(x - 1.0)
    with pytest.raises(FloatingPointError, match="div"):
      lax.div(x, x)
  finally:
    jax.config.update("jax_debug_nans", False)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      x * float("nan")
  with jax.debug_infs(True):
    with pytest.raises(FloatingPointError):
      x / 0.0
  assert np.isnan(np.asarray(x / x))[0]


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


def test_x64_changes_reach_primitive_level_scalars():
  x = jnp.asarray(np.arange(3, dtype=np.float32))
  assert lax.add(2.0, 1.0).dtype == np.float32
  with jax.enable_x64():
    assert lax.add(2.0, 1.0).dtype == np.float64 and lax.add(2, 1).dtype == np.int64
    assert (x + 1.5).dtype == np.float32
  assert lax.add(2.0, 1.0).dtype == np.float32 and lax.add(2, 1).dtype == np.int32


def test_arrays_still_being_computed_and_deleted_arrays():
  x = jnp.asarray(np.arange(4, dtype=np.float32))
  for _ in range(2):   # plans and inline caches for f32[4] operands exist
    x * 2.0, jnp.sin(x), x * x  # noqa: B018
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


def test_a_primitive_alternating_signatures_reuses_its_recent_plans(monkeypatch):
  """A jnp function that uses one primitive on operands of a few kinds (two
  shapes, a NumPy constant) finds each in the primitive's recent plans: no
  key is built after the first calls."""
  x, m = _array(np.float32), _array(np.float32, shape=(3, 3))
  const = np.array(2.0, np.float32)
  made = []
  process = type(eval_trace)._process
  monkeypatch.setattr(type(eval_trace), "_process",
                      lambda self, *a: made.append(a[0].name) or process(self, *a))
  for _ in range(3):
    made.clear()
    outs = (lax.add(x, x), lax.add(m, m), lax.add(x, const), lax.add(const, m))
  assert made == []
  np.testing.assert_array_equal(outs[2], np.asarray(x) + 2)
  np.testing.assert_array_equal(outs[3], np.asarray(m) + 2)
  assert len(eval_trace._last[lax.add_p]) <= type(eval_trace).RECENT


def test_numpy_operands_are_canonicalised_and_never_aliased():
  a = np.arange(3, dtype=np.float64)
  for _ in range(2):   # the plan's first use, then the recent-plan path
    y = lax.add(a, a)
    z = lax.reshape(a, (3, 1))
    assert y.dtype == np.float32 and z.dtype == np.float32
  b = np.arange(3, dtype=np.float32)
  outs = [lax.reshape(b, (3,)) for _ in range(2)] + [lax.neg(lax.neg(b)) for _ in range(2)]
  b[0] = 100.0   # the caller mutates its array afterwards: results keep their values
  for o in outs:
    np.testing.assert_array_equal(o, [0.0, 1.0, 2.0])
  assert b.flags.writeable


def test_broadcasts_are_read_only_views_with_the_right_values():
  base = np.arange(6, dtype=np.float32).reshape(2, 3)
  x = jnp.asarray(base)
  for shape, dims in [((4, 2, 3), (1, 2)), ((2, 5, 3), (0, 2)), ((2, 3, 2), (0, 1))]:
    y = lax.broadcast_in_dim(x, shape, dims)
    expected = np.broadcast_to(np.expand_dims(base, [d for d in range(3) if d not in dims]),
                               shape)
    np.testing.assert_array_equal(y, expected)
    assert not np.asarray(y).flags.writeable
  t = x.T   # not C-contiguous: still right
  np.testing.assert_array_equal(lax.broadcast_in_dim(t, (3, 2, 4), (0, 1)),
                                np.broadcast_to(base.T[:, :, None], (3, 2, 4)))
  big = lax.broadcast_in_dim(jnp.float32(1.5), (1000, 1000), ())
  assert np.asarray(big).strides == (0, 0)   # no copy of a million elements
  assert float(jnp.sum(big)) == 1.5e6


@pytest.mark.parametrize("name,call", [
    ("hypot", lambda x, y: jnp.hypot(x, y)), ("sinc", lambda x, y: jnp.sinc(x)),
    ("_var", lambda x, y: jnp.var(x, axis=0, ddof=1)), ("_std", lambda x, y: jnp.std(x)),
    ("nanmean", lambda x, y: jnp.nanmean(x, axis=1, keepdims=True)),
    ("quantile", lambda x, y: jnp.quantile(x, 0.3, axis=0)),
    ("median", lambda x, y: jnp.median(x)), ("nancumsum", lambda x, y: jnp.nancumsum(x, axis=1)),
    ("sort", lambda x, y: jnp.sort(x, axis=0)), ("heaviside", lambda x, y: jnp.heaviside(x, y)),
    ("isclose", lambda x, y: jnp.isclose(x, y, rtol=0.5)), ("clip", lambda x, y: jnp.clip(x, -1, y)),
    ("trapezoid", lambda x, y: jnp.trapezoid(x, dx=0.5)), ("ldexp", lambda x, y: jnp.ldexp(x, 3)),
    ("kron", lambda x, y: jnp.kron(x, y)), ("polyval", lambda x, y: jnp.polyval(x, y))])
def test_library_functions_run_their_program_with_the_eager_bits(name, call):
  """The jnp functions JAX jits run their cached jaxpr on the eval trace's
  kernels when called eagerly: no primitive is bound after the first call,
  and the bits are those of running the function op by op (disable_jit)."""
  rng = np.random.default_rng(0)
  x = jnp.asarray(rng.standard_normal((4, 5)).astype(np.float32))
  y = jnp.asarray(rng.standard_normal((4, 5)).astype(np.float32))
  with jax.disable_jit():
    expected = call(x, y)
  call(x, y)
  bound = []
  process = eval_trace.process_primitive
  try:
    eval_trace.process_primitive = lambda p, args, params: bound.append(p.name) or process(
        p, args, params)
    got = call(x, y)
  finally:
    del eval_trace.process_primitive
  assert bound == [], bound
  for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
    assert type(g) is Array and g.dtype == e.dtype and g.shape == e.shape
    np.testing.assert_array_equal(np.asarray(g), np.asarray(e))
  traced = str(jax.make_jaxpr(call)(x, y))
  assert f"name={name}" in traced   # staged as a jit call, as JAX prints it


def test_library_functions_with_numpy_arguments_run_their_program():
  """NumPy scalars and arrays key an eager library call as Arrays do (by
  type; by shape and dtype): the cached program runs, no primitive is bound
  after the first call, and the results equal those of Array arguments."""
  x = jnp.asarray(np.linspace(-2, 2, 10).astype(np.float32))
  xn = np.asarray(x)
  calls = [lambda: jnp.clip(x, np.float32(-1), 1.0), lambda: jnp.var(xn),
           lambda: jnp.where(xn > 0, x, 0.0), lambda: jnp.clip(xn, np.int8(-1), np.float64(1)),
           lambda: jnp.var(xn.astype(np.float64)), lambda: jnp.clip(x, np.int64(2 ** 40), None)]
  expected = [jnp.clip(x, jnp.float32(-1), 1.0), jnp.var(x), jnp.where(jnp.asarray(xn > 0), x, 0.0),
              jnp.clip(x, jnp.int8(-1), jnp.float32(1)), jnp.var(x),
              jnp.clip(x, jnp.int32(0), None)]   # int64 2**40 wraps to int32 0 without x64
  for call, want in zip(calls, expected):
    call()
    bound = []
    process = eval_trace.process_primitive
    try:
      eval_trace.process_primitive = lambda p, args, params: bound.append(p.name) or process(
          p, args, params)
      got = call()
    finally:
      del eval_trace.process_primitive
    assert bound == [], bound
    assert got.dtype == want.dtype and got.weak_type == want.weak_type and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
  # A NumPy array keys by shape and dtype: new values, same program; a new shape retraces.
  a = np.arange(6.0, dtype=np.float32)
  np.testing.assert_allclose(np.asarray(jnp.var(a)), np.var(a), rtol=1e-6)
  a[0] = 100.0   # mutating the caller's array between calls
  np.testing.assert_allclose(np.asarray(jnp.var(a)), np.var(a), rtol=1e-6)
  b = np.arange(7.0, dtype=np.float32)
  np.testing.assert_allclose(np.asarray(jnp.var(b)), np.var(b), rtol=1e-6)
  # (the calls took the keyed fast path, not jit's general one)
  assert (np.ndarray, (7,), np.dtype(np.float32)) in {
      part for key in reductions._var_program._eager_fast for part in key if type(part) is tuple}
  assert any(np.float32 in key for key in jnp.clip._eager_fast)


def test_library_functions_with_arguments_jit_cannot_stage_run_inline():
  """A list axis (does not hash) or a body that needs a value jit would trace
  runs the function itself, eagerly and under a transformation."""
  x = jnp.arange(24.0).reshape(2, 3, 4)
  np.testing.assert_allclose(jnp.var(x, axis=[0, 2]), np.var(np.asarray(x), axis=(0, 2)),
                             rtol=1e-6)
  np.testing.assert_allclose(jax.jit(lambda a: jnp.var(a, axis=[0, 2]))(x),
                             np.var(np.asarray(x), axis=(0, 2)), rtol=1e-6)
  np.testing.assert_allclose(jnp.round(x / 7, decimals=2), np.round(np.asarray(x) / 7, 2),
                             rtol=1e-6)


@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
def test_point_scatter_kernel_gives_the_impls_result(mode):
  """``x.at[i].set(v)``'s eager kernel (NumPy item assignment) equals the
  scatter impl for in-bounds, out-of-bounds and negative indices, rows and
  elements, every dtype kind."""
  mode = gather_scatter.GatherScatterMode.from_any(mode)
  cases = [((5,), (0,), ()), ((3, 4), (0,), (4,)), ((3, 4), (0, 1), ()),
           ((2, 3, 4), (0, 1), (4,)), ((2, 3, 4), (1,), ())]
  for dt in (np.float32, np.int32, np.bool_, np.complex64):
    for shape, points, upd_shape in cases:
      rest = [d for d in range(len(shape)) if d not in points]
      if tuple(shape[d] for d in rest) != upd_shape:
        continue
      dn = gather_scatter.ScatterDimensionNumbers(tuple(range(len(upd_shape))), points, points)
      params = dict(dimension_numbers=dn, indices_are_sorted=True, unique_indices=True,
                    mode=mode, update_jaxpr=None, update_consts=())
      x = (np.arange(np.prod(shape)).reshape(shape) % 3).astype(dt)
      u = np.ones(upd_shape, dt)
      kernel = gather_scatter.scatter_p.eval_kernel(ShapedArray(x.shape, x.dtype),
                                        ShapedArray((len(points),), np.dtype(np.int32)),
                                        ShapedArray(u.shape, u.dtype), **params)
      assert kernel is not None
      for where in ([0] * len(points), [shape[d] - 1 for d in points], [-1] * len(points),
                    [shape[d] + 2 for d in points]):
        idx = np.array(where, np.int32)
        if mode == gather_scatter.GatherScatterMode.PROMISE_IN_BOUNDS and (
            any(not 0 <= i < shape[d] for i, d in zip(where, points))):
          continue   # undefined by contract
        np.testing.assert_array_equal(kernel(x, idx, u),
                                      gather_scatter.scatter_p.impl(x, idx, u, **params)[0])


def test_static_index_plans_are_made_once():
  assert index_plans.gather_plan((1, 2), (3, 4)) is index_plans.gather_plan((1, 2), (3, 4))
  assert index_plans.gather_plan(1, (3, 4)) is not index_plans.gather_plan(1, (5, 4))
  x = jnp.zeros((3, 4))
  for i in range(3):
    x = x.at[i, i].set(float(i + 1))
  np.testing.assert_array_equal(np.asarray(x), np.diag([1.0, 2.0, 3.0, 0.0])[:3])


@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds", "fill"])
@pytest.mark.parametrize("batch", [(), (4,), (2, 3)])
def test_take_gather_kernel_gives_the_impls_result(mode, batch):
  """A take's eager kernel (NumPy item read or advanced indexing, clamped
  into bounds or filled) equals the gather impl for in-bounds, out-of-bounds
  and negative indices, point reads and index arrays, rows and elements,
  every dtype kind."""
  mode = gather_scatter.GatherScatterMode.from_any(mode)
  fill = mode == gather_scatter.GatherScatterMode.FILL_OR_DROP
  cases = [((5,), (0,)), ((3, 4), (0,)), ((3, 4), (1,)), ((3, 4), (0, 1)), ((2, 3, 4), (0, 1)),
           ((2, 3, 4), (1,)), ((2, 3, 4), (0, 2))]
  rng = np.random.default_rng(0)
  for dt in (np.float32, np.int32, np.bool_, np.complex64):
    for shape, points in cases:
      rest = [d for d in range(len(shape)) if d not in points]
      dn = gather_scatter.GatherDimensionNumbers(
          offset_dims=tuple(range(len(batch), len(batch) + len(rest))),
          collapsed_slice_dims=points, start_index_map=points, operand_batching_dims=(),
          start_indices_batching_dims=())
      sizes = tuple(1 if d in points else shape[d] for d in range(len(shape)))
      params = dict(dimension_numbers=dn, slice_sizes=sizes, unique_indices=False,
                    indices_are_sorted=False, mode=mode,
                    fill_value=(None if not fill else np.array(7, dt).item()))
      x = (np.arange(np.prod(shape)).reshape(shape) % 5).astype(dt)
      idx_shape = batch + (len(points),)
      kernel = gather_scatter.gather_p.eval_kernel(
          ShapedArray(x.shape, x.dtype), ShapedArray(idx_shape, np.dtype(np.int32)), **params)
      assert kernel is not None
      highs = np.array([shape[d] for d in points])
      for idx in (np.zeros(idx_shape, np.int32), np.broadcast_to(highs - 1, idx_shape),
                  np.full(idx_shape, -1, np.int32), np.broadcast_to(highs + 2, idx_shape),
                  rng.integers(-2, highs.max() + 2, idx_shape)):
        idx = np.ascontiguousarray(idx, np.int32)
        got = kernel(x, idx)
        want = gather_scatter.gather_p.impl(x, idx, **params)[0]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_take_gather_kernel_declines_what_it_cannot_take():
  """Windows wider than one position along an indexed dimension, for more
  than 16 index vectors (fewer: one basic slice each), and empty operands,
  keep the general impl."""
  dn = gather_scatter.GatherDimensionNumbers(
      offset_dims=(1,), collapsed_slice_dims=(), start_index_map=(0,),
      operand_batching_dims=(), start_indices_batching_dims=())
  params = dict(dimension_numbers=dn, slice_sizes=(2,), unique_indices=False,
                indices_are_sorted=False, mode=gather_scatter.GatherScatterMode.CLIP,
                fill_value=None)
  assert gather_scatter.gather_p.eval_kernel(
      ShapedArray((5,), np.dtype(np.float32)), ShapedArray((17, 1), np.dtype(np.int32)),
      **params) is None
  assert gather_scatter.gather_p.eval_kernel(
      ShapedArray((5,), np.dtype(np.float32)), ShapedArray((3, 1), np.dtype(np.int32)),
      **params) is not None
  dn = gather_scatter.GatherDimensionNumbers(
      offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,),
      operand_batching_dims=(), start_indices_batching_dims=())
  params.update(dimension_numbers=dn, slice_sizes=(1,))
  assert gather_scatter.gather_p.eval_kernel(
      ShapedArray((5,), np.dtype(np.float32)), ShapedArray((0, 1), np.dtype(np.int32)),
      **params) is None


@pytest.mark.parametrize("dt", [np.int8, np.int32, np.uint8, np.uint32, np.int64])
def test_shift_by_a_constant_amount_equals_the_bit_arithmetic(dt):
  """Shifts by a 0-d in-range amount (a literal in frexp's and the PRNG's
  programs) take one NumPy shift; results equal two's-complement arithmetic
  on Python ints for every amount, and out-of-range amounts keep XLA's
  rule (0, or the sign fill)."""
  info = np.iinfo(dt)
  bits = info.bits
  x = np.array([info.min, -5 if info.min else 5, 0, 1, 7, info.max], dt)
  for amount in [*range(bits), bits, bits + 3]:
    y = np.array(amount, dt)
    for p, ref in ((logic.shift_left_p, lambda v, a: v << a),
                   (logic.shift_right_logical_p, lambda v, a: (v % (1 << bits)) >> a),
                   (logic.shift_right_arithmetic_p, lambda v, a: v >> a)):
      want = []
      for v in x.tolist():
        if amount >= bits:
          r = -1 if (p is logic.shift_right_arithmetic_p and v < 0) else 0
        else:
          r = ref(v, amount)
        r %= 1 << bits   # wrap into the dtype's bits
        want.append(r - (1 << bits) if info.min and r > info.max else r)
      got, = p.impl(x, y)
      assert got.dtype == x.dtype, (p, amount)
      np.testing.assert_array_equal(got, np.array(want, dt), err_msg=f"{p} by {amount}")


def test_numpy_scalars_are_canonicalised_first_as_in_jax():
  # Without x64 a NumPy scalar is first an array of its canonical dtype
  # (int64 wraps to int32, float64 rounds to float32), then promoted: JAX
  # 0.10.2's results, stored here.
  x = jnp.asarray(np.array([1.5, 3.0], np.float32))
  i = jnp.asarray(np.array([1, 2], np.int32))
  with warnings.catch_warnings():
    warnings.simplefilter("ignore")   # float64 1e300 -> float32 overflows, as in JAX
    cases = [(np.int64(2 ** 40), [0.0, 0.0], [1, 2], np.int32),
             (np.int64(2 ** 40 + 5), [7.5, 15.0], [6, 7], np.int32),
             (np.float64(1e300), [np.inf, np.inf], [np.inf, np.inf], np.float32),
             (np.uint64(2 ** 63 + 1), [1.5, 3.0], [2, 3], np.int32),
             (np.float64(2.0 ** 31 + 0.75), [3.2212255e9, 6.4424509e9],
              [2.1474836e9, 2.1474836e9], np.float32)]
    for y, times_x, plus_i, plus_dtype in cases:
      for _ in range(2):   # the promotion cache's miss, then its hit
        got = x * y
        assert got.dtype == np.float32 and not got.weak_type
        np.testing.assert_allclose(np.asarray(got), times_x, rtol=1e-7)
        got = i + y
        assert got.dtype == plus_dtype
        np.testing.assert_allclose(np.asarray(got), plus_i, rtol=1e-7)
    assert np.asarray(jnp.floor_divide(x, np.int64(2 ** 40))).tolist() == [np.inf, np.inf]
