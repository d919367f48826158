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
