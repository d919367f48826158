"""Eager cond/while_loop/scan/map reuse the traces of fresh closures of the
same code over the same values (control/trace_cache.py), and trace again
whenever a value the function can read changed."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import cond, scan, trace_cache, while_loop

SCALE = 2.0


@pytest.fixture
def traces(monkeypatch):
  """Counts the traces of control-flow bodies."""
  count = [0]

  def counting(real):
    def trace(*args, **kwargs):
      count[0] += 1
      return real(*args, **kwargs)
    return trace
  for module in (cond, while_loop, scan):
    monkeypatch.setattr(module, "trace_to_jaxpr", counting(module.trace_to_jaxpr))
  return count


def _loop(x, y):
  return lax.while_loop(lambda c: c[1] < 3, lambda c: (c[0] * y + 1.0, c[1] + 1), (x, 0))[0]


def test_fresh_closures_over_the_same_values_trace_once(traces):
  x, y = jnp.arange(3.0), jnp.full(3, 0.5)
  first = _loop(x, y)
  n = traces[0]
  assert n > 0
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(_loop(x, y)), np.asarray(first))
  assert traces[0] == n


def test_a_closure_over_a_new_value_traces_again(traces):
  x = jnp.arange(3.0)
  a = _loop(x, jnp.full(3, 0.5))
  n = traces[0]
  b = _loop(x, jnp.full(3, 2.0))
  assert traces[0] > n
  np.testing.assert_allclose(np.asarray(a), ((np.arange(3.0) * .5 + 1) * .5 + 1) * .5 + 1)
  np.testing.assert_allclose(np.asarray(b), ((np.arange(3.0) * 2 + 1) * 2 + 1) * 2 + 1)


@pytest.mark.parametrize("values", [(0.0, -0.0), (1, True), (2, 2.0), (1.0, float("nan"))])
def test_python_scalars_in_closures_key_by_type_and_bits(values):
  def f(c):
    return lax.cond(True, lambda x: x / c, lambda x: x, jnp.ones(2))
  outs = [np.asarray(f(c)) for c in values]
  for c, out in zip(values, outs):
    with np.errstate(all="ignore"):
      np.testing.assert_array_equal(out, np.ones(2, np.float32) / np.float32(c))
  assert outs[0].dtype == outs[1].dtype


def test_a_rebound_global_traces_again(monkeypatch):
  def f(x):
    return lax.scan(lambda c, xi: (c + xi * SCALE, c), 0.0, x)[0]
  x = jnp.arange(4.0)
  assert float(f(x)) == 12.0
  monkeypatch.setitem(globals(), "SCALE", 3.0)
  assert float(f(x)) == 18.0


def test_closures_over_mutable_objects_trace_every_call(traces):
  buf = np.zeros(2, np.float32)

  def f(x):
    return lax.cond(True, lambda v: v + buf, lambda v: v, x)
  x = jnp.ones(2)
  np.testing.assert_array_equal(np.asarray(f(x)), [1.0, 1.0])
  n = traces[0]
  buf[:] = 5.0     # a NumPy array changes in place: its identity says nothing
  np.testing.assert_array_equal(np.asarray(f(x)), [6.0, 6.0])
  assert traces[0] > n


def test_map_and_fori_loop_reuse_traces(traces):
  xs = jnp.arange(10.0).reshape(5, 2)
  w = jnp.asarray([1.0, -1.0])

  def f(xs):
    return lax.map(lambda r: jnp.dot(r, w), xs, batch_size=2), lax.fori_loop(
        0, 3, lambda i, c: c * 2.0 + i, xs[0])
  first = f(xs)
  n = traces[0]
  second = f(xs)
  assert traces[0] == n
  for a, b in zip(first, second):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
  np.testing.assert_array_equal(np.asarray(first[0]), np.asarray(xs) @ np.asarray(w))


def test_fun_key():
  def make(y):
    return lambda x: x * y
  a = jnp.ones(2)
  assert trace_cache.fun_key(make(a)) == trace_cache.fun_key(make(a))
  # A small uncommitted array by its value (a closure over ``a.T`` made per
  # call traces once); dtype, weak type and the bits of -0.0 count.
  assert trace_cache.fun_key(make(a)) == trace_cache.fun_key(make(jnp.ones(2)))
  assert trace_cache.fun_key(make(a)) != trace_cache.fun_key(make(jnp.zeros(2)))
  assert trace_cache.fun_key(make(a)) != trace_cache.fun_key(make(jnp.ones(2, np.int32)))
  assert trace_cache.fun_key(make(jnp.asarray(1.0))) != trace_cache.fun_key(
      make(jnp.asarray(np.float32(1.0))))
  assert trace_cache.fun_key(make(jnp.zeros(2))) != trace_cache.fun_key(make(-jnp.zeros(2)))
  # Large or committed arrays by identity.
  big = jnp.ones(2000)
  assert trace_cache.fun_key(make(big)) == trace_cache.fun_key(make(big))
  assert trace_cache.fun_key(make(big)) != trace_cache.fun_key(make(jnp.ones(2000)))
  placed = jax.device_put(jnp.ones(2), jax.devices()[0])
  assert trace_cache.fun_key(make(placed)) != trace_cache.fun_key(make(a))
  assert trace_cache.fun_key(make(1.0)) == trace_cache.fun_key(make(1.0))
  assert trace_cache.fun_key(make(0.0)) != trace_cache.fun_key(make(-0.0))
  # A list by its contents when keyed: mutating it traces again.
  assert trace_cache.fun_key(make([1])) == trace_cache.fun_key(make([1]))
  assert trace_cache.fun_key(make([1])) != trace_cache.fun_key(make([2]))
  # An instance (an unknown object): by the closure's identity.
  obj = object()
  assert trace_cache.fun_key(make(obj)) != trace_cache.fun_key(make(obj))
  g = make(obj)
  assert trace_cache.fun_key(g) == trace_cache.fun_key(g)


def test_traced_closures_are_not_kept():
  # Closing over a tracer (the enclosing jit's): never cached, results right.
  @jax.jit
  def f(x, y):
    return lax.while_loop(lambda c: c[1] < 2, lambda c: (c[0] + y, c[1] + 1), (x, 0))[0]
  np.testing.assert_array_equal(np.asarray(f(jnp.zeros(2), jnp.ones(2))), [2.0, 2.0])
  np.testing.assert_array_equal(np.asarray(f(jnp.zeros(2), jnp.full(2, 3.0))), [6.0, 6.0])


def test_piecewise_with_fresh_lambdas_reuses_its_program():
  from openjax._src.numpy import functional
  x = jnp.linspace(-2.0, 2.0, 7)

  def f(x, k):
    return jnp.piecewise(x, [x < 0], [lambda t: -t * k, lambda t: t * 2])
  functional._piecewise.clear_cache()
  first = f(x, 3.0)
  second = f(x, 3.0)
  assert len(functional._piecewise._cache) == 1
  np.testing.assert_array_equal(np.asarray(first), np.asarray(second))
  # A closure over another value, or other code: another program.
  np.testing.assert_allclose(np.asarray(f(x, 5.0)),
                             np.where(np.asarray(x) < 0, -np.asarray(x) * 5, np.asarray(x) * 2))
  other = jnp.piecewise(x, [x < 0], [lambda t: t * 0, lambda t: t * 2])
  np.testing.assert_allclose(np.asarray(other), np.where(np.asarray(x) < 0, 0, np.asarray(x) * 2))
  assert len(functional._piecewise._cache) == 3


def test_the_cache_does_not_keep_large_constants_alive():
  cache = trace_cache.TraceCache(max_entries=8, max_bytes=5000)
  for i in range(5):   # 1200 bytes each: four fill the budget
    cache.put(i, f"trace {i}", [jnp.zeros(300)])
  assert cache.get(0) is None and cache.get(1) == "trace 1" and cache.get(4) == "trace 4"
  cache.put("huge", "x", [jnp.zeros(400)])   # over a quarter of the budget: not kept
  assert cache.get("huge") is None
  for i in range(10):
    cache.put(("small", i), i)
  assert len(cache._entries) == 8 and cache.get(("small", 9)) == 9


_jitted_double = jax.jit(lambda x: x * 2.0)


def test_closures_calling_jitted_and_numpy_functions_are_keyed_by_code(traces):
  def f(x, y):
    return lax.cond(True, lambda v: _jitted_double(v) + jnp.sin(y), lambda v: v, x)
  x, y = jnp.ones(2), jnp.zeros(2)
  f(x, y)
  n = traces[0]
  np.testing.assert_array_equal(np.asarray(f(x, y)), [2.0, 2.0])
  assert traces[0] == n
