"""The entry of eager control flow and transformations (session 14): keys
made from per-code plans (``control/trace_cache._code_plan``), the flag check
of ``api/transform_cache.call_transformed`` made once per flag state, and
flat Array arguments checked without flattening. Each keeps the keys and
results of before; these tests pin what the shortcuts must not change."""
import json
import types

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api import transform_cache
from openjax._src.config import config
from openjax._src.core import Array
from openjax._src.control import trace_cache


@pytest.fixture(autouse=True)
def _fresh_cache():
  transform_cache.clear()
  yield
  transform_cache.clear()


def _reads_jnp(x):
  return jnp.sin(x) * 2.0


def test_the_same_code_under_other_globals_is_keyed_by_those_globals():
  # One code object, three globals: the plan made for the first must not
  # serve the others (a non-library module is not keyable; a rebound
  # library module keys apart).
  code = _reads_jnp.__code__
  lib = types.FunctionType(code, {"jnp": jnp, "__name__": "user"})
  other = types.FunctionType(code, {"jnp": json, "__name__": "user"})
  lib2 = types.FunctionType(code, {"jnp": np, "__name__": "user"})
  for _ in range(2):
    k1 = trace_cache.pure_fun_key(lib)
    assert k1 is not None
    assert trace_cache.pure_fun_key(other) is None
    k3 = trace_cache.pure_fun_key(lib2)
    assert k3 is not None and k3 != k1
  # A function of library code is keyed by its closure only.
  wrapper = types.FunctionType(code, {"jnp": json, "__name__": "openjax._src.fake"})
  assert trace_cache.pure_fun_key(wrapper) is not None


def test_fresh_closures_key_equal_and_check_modules_once(monkeypatch):
  def make(y):
    return lambda x: jnp.sin(x) * y
  y = jnp.arange(3.0)
  keys = [trace_cache.pure_fun_key(make(y)) for _ in range(2)]
  calls = []
  real = trace_cache._library_module
  monkeypatch.setattr(trace_cache, "_library_module", lambda v: calls.append(v) or real(v))
  keys += [trace_cache.pure_fun_key(make(y)) for _ in range(5)]
  assert all(k == keys[0] for k in keys)
  assert calls == []   # jnp's check was made once, before
  assert trace_cache.pure_fun_key(make(jnp.arange(3.0) + 1)) != keys[0]


def test_a_flag_that_reports_traces_sends_calls_op_by_op_at_once():
  x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
  calls = []

  def transformed(x):
    calls.append(1)
    return jnp.sin(x)
  params = ("test_flags",)
  for _ in range(3):
    transform_cache.call_transformed(params, _reads_jnp, transformed, (x,), {})
  built = len(calls)
  transform_cache.call_transformed(params, _reads_jnp, transformed, (x,), {})
  assert len(calls) == built   # the program runs: no Python call of ``transformed``
  with config.override("jax_log_compiles", True):
    out = transform_cache.call_transformed(params, _reads_jnp, transformed, (x,), {})
  assert len(calls) == built + 1
  np.testing.assert_allclose(np.asarray(out), np.sin(np.asarray(x)), rtol=1e-6)
  jax.config.update("jax_explain_cache_misses", True)
  try:
    transform_cache.call_transformed(params, _reads_jnp, transformed, (x,), {})
  finally:
    jax.config.update("jax_explain_cache_misses", False)
  assert len(calls) == built + 2
  transform_cache.call_transformed(params, _reads_jnp, transformed, (x,), {})
  assert len(calls) == built + 2


@pytest.mark.parametrize("args", [
    lambda x: (x, 1.0),               # a Python scalar leaf at the top
    lambda x: ((x, 2),),              # inside a tuple
    lambda x: ({"a": x, "b": np.float32(1)},),
])
def test_arguments_that_are_not_arrays_run_op_by_op(args):
  x = jnp.asarray(np.array([0.5, -1.0], np.float32))
  calls = []

  def transformed(*a):
    calls.append(1)
    return x
  for _ in range(3):
    transform_cache.call_transformed(("test_leaves",), _reads_jnp, transformed, args(x), {})
  assert len(calls) == 3   # op by op every time: no program stands in


def test_cond_with_fresh_closures_keeps_values_and_program():
  x = jnp.asarray(np.array([0.5, -1.0, 2.0], np.float32))
  y = jnp.asarray(np.array([3.0, 4.0, -5.0], np.float32))
  for p in (True, False, True):
    out = lax.cond(jnp.asarray(p), lambda x: jnp.sin(x) * y, lambda x: jnp.cos(x) - 2. * x, x)
    xn, yn = np.asarray(x), np.asarray(y)
    want = np.sin(xn) * yn if p else np.cos(xn) - np.float32(2.) * xn
    np.testing.assert_allclose(np.asarray(out), want, rtol=1e-6)
  assert len(transform_cache._programs._entries) == 1


def _leaves_typed(out):
  return [(type(l).__name__, np.asarray(l).dtype, np.asarray(l).tolist(),
           getattr(getattr(l, "aval", None), "weak_type", None))
          for l in jax.tree_util.tree_leaves(out)]


_X = np.array([0.25, -0.5, 1.5], np.float32)
_N = np.int32(4)
_LOOPS = [
    # (carry maker, cond, body): Python scalars counted, forwarded, read by
    # the cond while forwarded, inside dicts, joined to the body's type.
    (lambda x, n: (0, x), lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0)),
    (lambda x, n: (7, 0, x), lambda c: c[1] < 5, lambda c: (c[0], c[1] + 1, c[2] * 2)),
    (lambda x, n: (7, 0, x), lambda c: c[0] < 5, lambda c: (c[0], c[1] + 1, c[2] * 2)),
    (lambda x, n: (7.5, True, 0, x), lambda c: c[2] < 3,
     lambda c: (c[0], c[1], c[2] + 1, c[3] - c[0])),
    (lambda x, n: (0, 1), lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + 0.5)),
    (lambda x, n: (0, 5, n), lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1], c[2] * 2)),
    (lambda x, n: (0, -0.0, x), lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1], c[2] * c[1])),
    (lambda x, n: {"a": 2.0, "n": 0, "x": x}, lambda c: c["n"] < 3,
     lambda c: {"a": c["a"], "n": c["n"] + 1, "x": c["x"] + c["a"]}),
    (lambda x, n: (0, (1, x)), lambda c: c[0] < 2,
     lambda c: (c[0] + 1, (c[1][0], c[1][1] * 2))),
    (lambda x, n: (1, 2), lambda c: c[0] > 5, lambda c: (c[1], c[0])),   # no trip
]


@pytest.mark.parametrize("i", range(len(_LOOPS)))
def test_while_carries_with_python_scalars_match_the_op_by_op_loop(i):
  make, cond, body = _LOOPS[i]
  x, n = jnp.asarray(_X), jnp.asarray(_N)
  with jax.disable_jit(False), config.override("jax_log_compiles", True):
    want = lax.while_loop(cond, body, make(x, n))   # the op-by-op loop (no program)
  assert len(transform_cache._programs._entries) == 0
  for _ in range(4):
    got = lax.while_loop(cond, body, make(x, n))
    assert jax.tree_util.tree_structure(got) == jax.tree_util.tree_structure(want)
    assert _leaves_typed(got) == _leaves_typed(want)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
      if type(w) is not Array:
        assert g is not None and type(g) is type(w) and repr(g) == repr(w)


def test_forwarded_python_scalars_come_back_from_compiled_integer_loops():
  # An integer loop may run compiled (new result buffers): the forwarded
  # carry is found from the trace's record, not by identity.
  n = jnp.asarray(np.int32(4))
  for _ in range(4):
    got = lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1], c[2] * 2), (0, 5, n))
    assert type(got[1]) is int and got[1] == 5
    assert int(got[0]) == 3 and int(got[2]) == 32
  records = [r for r, _ in transform_cache._forwards._entries.values()]
  assert any(1 in pos and 0 not in pos and 2 not in pos
             for r in records for pos in r.values())


def test_while_carry_scalar_overflow_raises_jaxs_error():
  with pytest.raises(OverflowError):
    lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1]), (0, 2 ** 40))


def test_while_with_python_scalars_under_jit_prints_the_same_jaxpr():
  def f(x):
    return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (0, x))
  x = jnp.asarray(_X)
  f(x)
  text = str(jax.make_jaxpr(f)(x))
  assert "while[" in text and "body_jaxpr" in text
  jitted = jax.jit(f)(x)
  eager = f(x)
  np.testing.assert_allclose(np.asarray(jitted[1]), np.asarray(eager[1]), rtol=1e-6)
  assert int(jitted[0]) == int(eager[0]) == 5


_XS = np.arange(1.0, 6.0, dtype=np.float32)
_SCANS = [
    # (body, init): outputs that are the old carry, carries swapped, a carry
    # taken from the row, several carries and outputs, none at all.
    (lambda c, x: (c + x, c), np.float32(0)),
    (lambda c, x: ((c[1], c[0] + x), c[0] * x), (np.float32(1), np.float32(2))),
    (lambda c, x: (x, c), np.float32(-1)),
    (lambda c, x: ((c[0] + x, c[1] * x, c[2]), (c[0], c[1] - x)),
     (np.float32(0), np.float32(1), np.int32(7))),
    (lambda c, x: (c * 2, None), np.float32(1)),
    (lambda c, x: ((), x * 3), ()),
]


def _python_scan(f, init, xs, reverse):
  carry, ys = init, []
  for x in (xs[::-1] if reverse else xs):
    carry, y = f(carry, x)
    ys.append(y)
  if reverse:
    ys = ys[::-1]
  return carry, ys


@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("i", range(len(_SCANS)))
def test_scan_trips_match_a_python_loop(i, reverse):
  f, init = _SCANS[i]
  xs = jnp.asarray(_XS)
  want_carry, want_ys = _python_scan(f, jax.tree_util.tree_map(jnp.asarray, init), xs, reverse)
  for _ in range(3):
    carry, ys = lax.scan(f, jax.tree_util.tree_map(jnp.asarray, init), xs, reverse=reverse)
    for g, w in zip(jax.tree_util.tree_leaves(carry), jax.tree_util.tree_leaves(want_carry)):
      np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
      assert np.asarray(g).dtype == np.asarray(w).dtype
    if want_ys and jax.tree_util.tree_leaves(want_ys[0]):
      stacked = jax.tree_util.tree_map(lambda *r: np.stack([np.asarray(v) for v in r]), *want_ys)
      for g, w in zip(jax.tree_util.tree_leaves(ys), jax.tree_util.tree_leaves(stacked)):
        np.testing.assert_array_equal(np.asarray(g), w)


def test_scan_of_no_trips_returns_its_init():
  xs = jnp.zeros((0,), np.float32)
  for _ in range(2):
    carry, ys = lax.scan(lambda c, x: ((c[1], c[0] + x), c[0]),
                         (jnp.float32(1), jnp.float32(2)), xs)
    assert [float(c) for c in carry] == [1.0, 2.0] and ys.shape == (0,)


def test_under_disable_jit_while_carries_are_all_arrays_as_in_jax():
  # JAX's disable_jit loop makes every carry an array (lax.asarray), a
  # forwarded Python scalar included; calls before and after keep theirs.
  x = jnp.asarray(_X)

  def loop():
    return lax.while_loop(lambda c: c[1] < 5, lambda c: (c[0], c[1] + 1, c[2] * 2), (7, 0, x))
  assert type(loop()[0]) is int
  with jax.disable_jit():
    for _ in range(2):
      out = loop()
      assert all(type(v) is Array for v in out)
      assert int(out[0]) == 7 and out[0].aval.weak_type
  assert type(loop()[0]) is int
