"""Eager library programs whose every value is an integer or a bool run
compiled once compiled (api/library_compile.py): the same bits as the
interpreter's, which runs every other library program (floats may round
differently compiled: DESIGN decision 12)."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api import library_compile
from openjax._src.config import config
from openjax._src.numpy import util
from openjax._src.runtime import compiler

INT_DTYPES = [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32]


@pytest.fixture
def compiled(monkeypatch):
  """The iree executor, compiling before the first call (no tiers); a
  signature lowers on its second call (its first call's time is over the
  interpreted-time budget)."""
  monkeypatch.setattr(library_compile, "INTERPRETED_S", 1e-9)
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


def _interpreted(f, *args):
  with config.override("openjax_executor", "interpreter"):
    return np.asarray(f(*args))


def _edge_values(dtype, n=24):
  info = np.iinfo(dtype)
  edge = [0, 1, 2, 3, info.max, info.max - 1, info.min, info.min + 1, 6, 12, 18, 35]
  if info.min < 0:
    edge += [-1, -2, -6, -12]
  rng = np.random.default_rng(0)
  rest = rng.integers(info.min, int(info.max) + 1, n - len(edge), dtype=np.int64)
  return np.asarray(edge + list(rest)).astype(dtype)


def _entries_with_executables(f):
  return [e for e in f._cache.values() if e.executable is not None]


def _bit_loop(x, y):
  """An integer while loop of a library function: (x, y) -> (x + 3 y
  (wrapping), y >> 1 logically) until every y is 0."""
  def body(c):
    return c[0] + c[1] * 3, lax.shift_right_logical(c[1], jnp.ones_like(c[1]))
  return lax.while_loop(lambda c: jnp.any(c[1] != 0), body, (x, y))[0]


_BIT_LOOP = util.jit(_bit_loop)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
def test_integer_loops_run_compiled_with_the_interpreters_bits(compiled, dtype):
  f = _BIT_LOOP
  x = _edge_values(dtype)
  y = np.roll(_edge_values(dtype), 5)
  expected = _interpreted(f, x, y)
  f.clear_cache()
  first = f(jnp.asarray(x), jnp.asarray(y))   # interpreted, not lowered
  assert not _entries_with_executables(f)
  out = f(jnp.asarray(x), jnp.asarray(y))
  assert _entries_with_executables(f), "the loop did not switch to its compiled program"
  assert out.dtype == first.dtype == expected.dtype
  np.testing.assert_array_equal(np.asarray(first), expected)
  np.testing.assert_array_equal(np.asarray(out), expected)
  # And again on the compiled entry.
  np.testing.assert_array_equal(np.asarray(f(jnp.asarray(x), jnp.asarray(y))), expected)


@pytest.mark.parametrize("dtype", INT_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name", ["gcd", "lcm"])
def test_gcd_lcm_eager_and_compiled_give_the_same_integers(compiled, name, dtype):
  # Eagerly gcd's loop is one np.gcd (core/fused_steps), so it is not
  # compiled; jit compiles IREE's loop: the same integers.
  f = getattr(jnp, name)
  x, y = _edge_values(dtype), np.roll(_edge_values(dtype), 5)
  f.clear_cache()
  eager = [f(jnp.asarray(x), jnp.asarray(y)) for _ in range(3)]
  assert not _entries_with_executables(f)
  jitted = jax.jit(f)(x, y)
  wide = getattr(np, name)(x.astype(np.int64), y.astype(np.int64))
  for got in (*eager, jitted):
    assert got.dtype == dtype
    np.testing.assert_array_equal(np.asarray(got), np.asarray(eager[0]))
  # gcd of |INT_MIN| wraps back to INT_MIN, as JAX's uint bitcast gives;
  # lcm is NumPy's where it fits the dtype.
  fits = wide <= np.iinfo(dtype).max if name == "lcm" else wide == wide
  np.testing.assert_array_equal(np.asarray(jitted)[fits], wide[fits].astype(dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint8], ids=lambda d: np.dtype(d).name)
def test_integer_power_runs_compiled_with_the_interpreters_bits(compiled, dtype):
  # Overflowing int8/uint8 powers wrap the same way compiled.
  x = _edge_values(dtype)
  p = np.arange(24).astype(dtype) % 9
  expected = _interpreted(jnp.power, x, p)
  jnp.power(jnp.asarray(x), jnp.asarray(p))
  out = jnp.power(jnp.asarray(x), jnp.asarray(p))
  np.testing.assert_array_equal(np.asarray(out), expected)
  assert out.dtype == expected.dtype


def _float_loop(x):
  return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * 1.5 + 0.1, c[1] + 1), (x, 0))[0]


def _int_loop_with_callback(x):
  def body(c):
    y = jax.pure_callback(lambda v: np.asarray(v), jax.ShapeDtypeStruct(c.shape, c.dtype), c)
    return y + 1
  return lax.while_loop(lambda c: c.sum() < 10, body, x)


def test_float_and_host_call_programs_never_switch(compiled):
  float_loop = util.jit(_float_loop)
  out = float_loop(jnp.arange(4.0))
  (entry,) = float_loop._cache.values()
  assert entry.exact is False and entry.executable is None
  np.testing.assert_allclose(np.asarray(out), _interpreted(util.jit(_float_loop),
                                                           jnp.arange(4.0)))
  callback_loop = util.jit(_int_loop_with_callback)
  np.testing.assert_array_equal(np.asarray(callback_loop(jnp.zeros(3, jnp.int32))), [4, 4, 4])
  (entry,) = callback_loop._cache.values()
  assert entry.exact is False and entry.executable is None


def test_sorting_and_short_programs_stay_interpreted(compiled):
  # Measured: IREE's sort is slower than NumPy's; a 2-step program
  # interprets faster than a compiled call.
  x = jnp.asarray(np.array([3, -1, 2, 7, 0], np.int32))
  np.testing.assert_array_equal(np.asarray(jnp.argsort(x)), [1, 4, 2, 0, 3])
  # (entries of other tests' traced calls have exact None: never decided)
  assert not any(e.exact for e in jnp.argsort._cache.values())
  short = util.jit(lambda a, b: a * b + 1)
  np.testing.assert_array_equal(np.asarray(short(x, x)), [10, 2, 5, 50, 1])
  (entry,) = short._cache.values()
  assert entry.exact is False and entry.executable is None


def test_rule_counts_steps_of_sub_jaxprs():
  def many_steps(x):
    for _ in range(library_compile.MIN_STEPS):
      x = x + 1
    return x
  closed = jax.make_jaxpr(many_steps)(jnp.zeros(3, jnp.int32))
  assert library_compile.compiles_exactly(closed) and library_compile.worth_compiling(closed)
  closed = jax.make_jaxpr(lambda x: x + 1)(jnp.zeros(3, jnp.int32))
  assert library_compile.compiles_exactly(closed)
  assert not library_compile.worth_compiling(closed)
  closed = jax.make_jaxpr(many_steps)(jnp.zeros(3, jnp.float32))
  assert not library_compile.compiles_exactly(closed)


def test_errors_are_unchanged_when_compiling(compiled):
  with pytest.raises(ValueError, match="Arguments to jax.numpy.gcd must be integers"):
    jnp.gcd(jnp.arange(3.0), jnp.arange(3.0))


def test_interpreter_executor_never_compiles():
  with config.override("openjax_executor", "interpreter"):
    f = util.jit(lambda x: lax.while_loop(lambda c: c.sum() < 10, lambda c: c + 1, x))
    np.testing.assert_array_equal(np.asarray(f(jnp.zeros(3, jnp.int32))), [4, 4, 4])
  (entry,) = f._cache.values()
  assert entry.exact is True and entry.executable is None and entry.pending is None


def test_tiered_first_calls_interpret_while_compiling(tmp_path, monkeypatch):
  monkeypatch.setattr(library_compile, "INTERPRETED_S", 1e-9)
  compiler.clear_memory_cache()
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", True), \
       config.override("jax_compilation_cache_dir", str(tmp_path / "cache")):
    f = util.jit(lambda x: lax.while_loop(lambda c: c.sum() < 100, lambda c: c * 2 + 1, x))
    x = jnp.asarray(np.array([0, 1, -3], np.int32))
    first = f(x)
    (entry,) = f._cache.values()
    assert entry.pending is None and entry.executable is None and entry.lowered is None
    np.testing.assert_array_equal(np.asarray(f(x)), np.asarray(first))
    assert entry.pending is not None or entry.executable is not None
    if entry.pending is not None:
      entry.pending.result(timeout=300)
    second = f(x)
    assert entry.executable is not None and entry.pending is None
    np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
    np.testing.assert_array_equal(np.asarray(second), [127, 255, -257])
  compiler.clear_memory_cache()


def test_cheap_calls_interpret_until_their_time_pays_for_lowering():
  # Lowering costs ~10-40 ms: a signature whose calls take microseconds
  # interprets until they have taken INTERPRETED_S, then compiles.
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    f = util.jit(lambda x: lax.while_loop(lambda c: c.sum() < 50, lambda c: c + 1, x))
    x = jnp.asarray(np.array([0, 1, 2], np.int32))
    outs = [np.asarray(f(x)) for _ in range(3)]
    (entry,) = f._cache.values()
    assert entry.exact is True and entry.executable is None and entry.lowered is None
    assert 0 < entry.interpreted_s < library_compile.INTERPRETED_S
    entry.interpreted_s = library_compile.INTERPRETED_S   # as after many calls
    outs.append(np.asarray(f(x)))
    assert entry.executable is not None
    for out in outs:
      np.testing.assert_array_equal(out, [16, 17, 18])


def test_functions_needing_concrete_values_still_run_inline(compiled):
  # bincount without `length` reads its argument's maximum: it runs as the
  # function itself (no program to compile), with NumPy's results.
  x = np.array([0, 3, 3, 1, 7], np.int32)
  for _ in range(2):
    np.testing.assert_array_equal(np.asarray(jnp.bincount(jnp.asarray(x))), np.bincount(x))
  with pytest.raises(jax.errors.ConcretizationTypeError):
    jax.jit(jnp.bincount)(jnp.asarray(x))
