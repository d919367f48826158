"""Products a scan sums into a carry computed after the loop when a program
is lowered (interpreters/scan_sink.py): the lowered jaxpr contracts the
stacked operands over the trips once; what users see is unchanged; compiled
values match NumPy and the interpreter, forward, reversed, under grad, with
either add order, transposes and reshapes after the product, and carries
read elsewhere left alone."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.interpreters import scan_hoist, scan_sink
from openjax._src.runtime import pipeline
from tests import test_scan_hoist as scan_hoist_tests
from tests.test_compiler import iree_executor


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "scan_sink_cache"):
    yield


T, B, H = 12, 4, 16


def _dots(jaxpr):
  return [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]


def _scan(jaxpr):
  scans = [e for e in jaxpr.eqns if e.primitive.name == "scan"]
  return scans[-1]


def _xs(seed=0, shape=(T, B, H)):
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def gram(xs, reverse=False):
  """sum_t x_t^T x_t, accumulated in the carry."""
  def step(c, x):
    return c + x.T @ x, None
  return lax.scan(step, jnp.zeros((H, H), jnp.float32), xs, reverse=reverse)[0]


def test_the_accumulated_product_moves_after_the_loop():
  xs = _xs()
  closed = jax.make_jaxpr(gram)(xs)
  assert len(_dots(_scan(closed.jaxpr).params["jaxpr"].jaxpr)) == 1   # as traced
  sunk = scan_sink.sink_scan_accumulations(closed)
  body = _scan(sunk.jaxpr).params["jaxpr"].jaxpr
  assert not _dots(body)
  after, = _dots(sunk.jaxpr)
  (lc, rc), _ = after.params["dimension_numbers"]
  assert tuple(lc) == (0, 1) and tuple(rc) == (0, 1)
  assert after.invars[0] is _scan(sunk.jaxpr).invars[-1]       # the stacked xs itself
  # what users see is unchanged
  assert len(_dots(_scan(jax.make_jaxpr(gram)(xs).jaxpr).params["jaxpr"].jaxpr)) == 1


@pytest.mark.parametrize("reverse", [False, True])
def test_compiled_values_match(reverse):
  xs = _xs(1)
  got = np.asarray(jax.jit(gram, static_argnums=1)(xs, reverse))
  want = sum(x.T.astype(np.float64) @ x for x in xs)
  np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_body_operands_either_add_order_and_linear_steps():
  xs = _xs(2)
  w = _xs(3, (H, H))

  def f(xs):
    def step(carry, x):
      c1, c2, h = carry
      a = jnp.tanh(x @ w + h)                 # a body value (reads the carry h)
      c1 = (a.T @ x).T + c1                   # transpose after, the carry second
      c2 = c2 + (x.T @ a).reshape(H * H)      # reshape after
      return (c1, c2, a), a.sum()
    init = (jnp.ones((H, H), jnp.float32), jnp.zeros(H * H, jnp.float32),
            jnp.zeros((B, H), jnp.float32))
    return lax.scan(step, init, xs)

  closed = jax.make_jaxpr(f)(xs)
  sunk = scan_sink.sink_scan_accumulations(closed)
  assert len(_dots(_scan(sunk.jaxpr).params["jaxpr"].jaxpr)) == 1    # x @ w stays
  assert len(_dots(sunk.jaxpr)) == 2
  (c1, c2, h), sums = jax.jit(f)(xs)
  want1, want2 = np.ones((H, H)), np.zeros(H * H)
  hn = np.zeros((B, H))
  for x in xs.astype(np.float64):
    a = np.tanh(x @ w + hn)
    want1 = (a.T @ x).T + want1
    want2 = want2 + (x.T @ a).reshape(-1)
    hn = a
  np.testing.assert_allclose(np.asarray(c1), want1, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(np.asarray(c2), want2, rtol=1e-4, atol=1e-4)
  np.testing.assert_allclose(np.asarray(h), hn, rtol=1e-5, atol=1e-5)


def test_carries_read_elsewhere_or_products_of_constants_stay():
  xs = _xs(4)
  w = _xs(5, (H, H))

  def read_elsewhere(xs):
    def step(c, x):
      c = c + x.T @ x
      return c, c.sum()          # the accumulator is read by the body's output
    return lax.scan(step, jnp.zeros((H, H), jnp.float32), xs)

  def of_a_constant(xs):
    def step(c, x):
      return c + w @ x.T, None   # w is loop-invariant: nothing to stack
    return lax.scan(step, jnp.zeros((H, B), jnp.float32), xs)[0]

  for f in (read_elsewhere, of_a_constant):
    closed = jax.make_jaxpr(f)(xs)
    assert scan_sink.sink_scan_accumulations(closed) is closed
  np.testing.assert_allclose(np.asarray(jax.jit(read_elsewhere)(xs)[1]),
                             np.cumsum([(x.T @ x).sum() for x in xs.astype(np.float64)]),
                             rtol=1e-4, atol=1e-3)


def test_the_byte_limit(monkeypatch):
  xs = _xs(6)
  w = _xs(7, (H, H))

  def f(xs):
    def step(c, x):
      a = x @ w
      return c + a.T @ a, None
    return lax.scan(step, jnp.zeros((H, H), jnp.float32), xs)[0]

  closed = jax.make_jaxpr(f)(xs)
  monkeypatch.setattr(scan_sink, "HOIST_MAX_BYTES", T * B * H * 4 - 1)
  assert scan_sink.sink_scan_accumulations(closed) is closed
  monkeypatch.setattr(scan_sink, "HOIST_MAX_BYTES", T * B * H * 4)
  assert scan_sink.sink_scan_accumulations(closed) is not closed


def test_rnn_gradient_weight_products_leave_the_backward_loop():
  # test_scan_hoist's RNN; its test_compiled_gradients_match_the_interpreter
  # checks the values of this lowered program against the interpreter
  params, xs = scan_hoist_tests._data(8)
  loss = lambda p, xs: jnp.mean(scan_hoist_tests.rnn(p, xs) ** 2)  # noqa: E731
  closed = jax.make_jaxpr(jax.grad(loss))(params, xs)
  lowered = pipeline.lower_closed_jaxpr(closed, "rnn_grad").lowered_jaxpr.jaxpr
  backward = _scan(lowered).params["jaxpr"].jaxpr
  assert len(_dots(backward)) == 1            # only the carried h cotangent's product
  after = [e for e in _dots(lowered) if tuple(e.params["dimension_numbers"][0][0])[:1] == (0,)]
  assert len(after) >= 2                      # the wx and wh cotangents, over the trips


def test_after_hoisting_and_unused_final_carries():
  # the forward scan's input product hoisted, the backward's sunk; a sunk
  # carry whose final value nobody reads adds nothing after the loop
  xs = _xs(10)

  def f(xs):
    def step(carry, x):
      c, h = carry
      h = jnp.tanh(x + h)
      return (c + h.T @ x, h), h
    return lax.scan(step, (jnp.zeros((H, H), jnp.float32), jnp.zeros((B, H), jnp.float32)),
                    xs)[1]

  closed = jax.make_jaxpr(f)(xs)
  sunk = scan_sink.sink_scan_accumulations(scan_hoist.hoist_scan_products(closed))
  assert not _dots(_scan(sunk.jaxpr).params["jaxpr"].jaxpr) and not _dots(sunk.jaxpr)
  h = np.zeros((B, H))
  want = []
  for x in xs.astype(np.float64):
    h = np.tanh(x + h)
    want.append(h)
  np.testing.assert_allclose(np.asarray(jax.jit(f)(xs)), np.stack(want), rtol=1e-5, atol=1e-5)
