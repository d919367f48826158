"""Products of a scan's inputs computed before the loop when a program is
lowered (interpreters/scan_hoist.py): the jaxpr users see keeps them in the
body; the lowered one multiplies the stacked inputs once; compiled values
match the interpreted ones, forward, reversed and under grad."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.interpreters import scan_hoist
from openjax._src.runtime import pipeline
from tests.test_compiler import iree_executor


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "scan_hoist_cache"):
    yield


T, B, H = 12, 4, 16


def _data(seed=0):
  rng = np.random.default_rng(seed)
  wx = (rng.standard_normal((H, H)) / 4).astype(np.float32)
  wh = (rng.standard_normal((H, H)) / 4).astype(np.float32)
  b = rng.standard_normal(H).astype(np.float32)
  xs = rng.standard_normal((T, B, H)).astype(np.float32)
  return (wx, wh, b), xs


def rnn(params, xs, reverse=False):
  wx, wh, b = params

  def cell(h, x):
    h = jnp.tanh(x @ wx + h @ wh + b)
    return h, h
  _, hs = lax.scan(cell, jnp.zeros((xs.shape[1], H), xs.dtype), xs, reverse=reverse)
  return hs


def _dots(jaxpr):
  return [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]


def _scan(jaxpr):
  scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
  assert len(scans) == 1
  return scans[0]


def _numpy_rnn(params, xs, reverse=False):
  wx, wh, b = (p.astype(np.float64) for p in params)
  h = np.zeros((xs.shape[1], H))
  hs = [None] * len(xs)
  for t in (reversed(range(len(xs))) if reverse else range(len(xs))):
    h = np.tanh(xs[t] @ wx + h @ wh + b)
    hs[t] = h
  return np.stack(hs)


def test_the_input_product_moves_before_the_loop():
  params, xs = _data()
  closed = jax.make_jaxpr(rnn)(params, xs)
  assert len(_dots(_scan(closed.jaxpr).params["jaxpr"].jaxpr)) == 2   # as traced
  hoisted = scan_hoist.hoist_scan_products(closed)
  before = _dots(hoisted.jaxpr)
  assert len(before) == 1 and before[0].outvars[0].aval.shape == (T, B, H)
  scan = _scan(hoisted.jaxpr)
  assert len(_dots(scan.params["jaxpr"].jaxpr)) == 1                   # only h @ wh
  assert scan.invars[-1] is before[0].outvars[0]                       # a new xs
  # what users see is unchanged
  assert len(_dots(_scan(jax.make_jaxpr(rnn)(params, xs).jaxpr).params["jaxpr"].jaxpr)) == 2


@pytest.mark.parametrize("reverse", [False, True])
def test_compiled_values_match(reverse):
  params, xs = _data()
  f = jax.jit(rnn, static_argnums=2)
  want = _numpy_rnn(params, xs, reverse)
  np.testing.assert_allclose(np.asarray(f(params, xs, reverse)), want, rtol=2e-5, atol=2e-5)


def test_compiled_gradients_match_the_interpreter():
  params, xs = _data(1)
  loss = lambda p, xs: jnp.mean(rnn(p, xs) ** 2)  # noqa: E731
  got = jax.jit(jax.grad(loss))(params, xs)
  with jax.disable_jit():
    want = jax.grad(loss)(params, xs)
  for g, w in zip(got, want):
    np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-6)


def test_a_product_of_constants_computed_in_the_body_and_an_input_used_as_output():
  # x @ (2 * wx) reads a constant-only equation of the body; the x product
  # is also a scan output.
  params, xs = _data(2)
  wx, wh, b = params

  def f(xs):
    def cell(h, x):
      p = x @ (wx * 2.0)
      return jnp.tanh(p + h @ wh), p
    return lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)

  closed = jax.make_jaxpr(f)(xs)
  hoisted = scan_hoist.hoist_scan_products(closed)
  assert len(_dots(hoisted.jaxpr)) == 1
  (h_got, p_got) = jax.jit(f)(xs)
  np.testing.assert_allclose(np.asarray(p_got), xs @ (wx * 2.0), rtol=1e-5, atol=1e-5)
  h = np.zeros((B, H), np.float32)
  for t in range(T):
    h = np.tanh(xs[t] @ (wx * 2.0) + h @ wh)
  np.testing.assert_allclose(np.asarray(h_got), h, rtol=1e-4, atol=1e-5)


def test_nothing_moves_without_an_input_product_or_over_the_byte_limit(monkeypatch):
  params, xs = _data()

  def carry_only(xs):
    def cell(h, x):
      return jnp.tanh(h @ params[1] + x), h.sum()
    return lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)

  closed = jax.make_jaxpr(carry_only)(xs)
  assert scan_hoist.hoist_scan_products(closed) is closed
  closed = jax.make_jaxpr(rnn)(params, xs)
  monkeypatch.setattr(scan_hoist, "HOIST_MAX_BYTES", T * B * H * 4 - 1)
  assert scan_hoist.hoist_scan_products(closed) is closed
  monkeypatch.setattr(scan_hoist, "HOIST_MAX_BYTES", T * B * H * 4)
  assert scan_hoist.hoist_scan_products(closed) is not closed


def test_effects_in_the_body_stay_in_the_loop():
  params, xs = _data(3)
  seen = []

  def f(xs):
    def cell(h, x):
      p = x @ params[0]
      jax.debug.callback(lambda v: seen.append(np.asarray(v)), p)
      return jnp.tanh(p + h @ params[1]), None
    return lax.scan(cell, jnp.zeros((B, H), jnp.float32), xs)[0]

  closed = jax.make_jaxpr(f)(xs)
  hoisted = scan_hoist.hoist_scan_products(closed)
  body = _scan(hoisted.jaxpr).params["jaxpr"].jaxpr
  assert [e.primitive.name for e in body.eqns].count("debug_callback") == 1
  jax.block_until_ready(jax.jit(f)(xs))
  jax.effects_barrier()
  assert len(seen) == T
  np.testing.assert_allclose(seen[3], xs[3] @ params[0], rtol=1e-5, atol=1e-5)


def test_lowered_programs_use_it():
  params, xs = _data()
  lowered = pipeline.lower_closed_jaxpr(jax.make_jaxpr(rnn)(params, xs), "rnn")
  assert len(_dots(lowered.lowered_jaxpr.jaxpr)) == 1
