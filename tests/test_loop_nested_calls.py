"""Loop bodies and cond branches run their nested calls without the calls'
impls (``control/nested_calls.loop_runner``): runners made once per jaxpr,
flags and tier; inside an interpreted call, nested ``jit`` and
custom-derivative calls are inlined into the body's steps. The results are
the bits of the impls' path."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import custom_derivatives, nested_calls
from openjax._src.control.closed_call import jit_p
from openjax._src.control.nested_calls import (custom_call_kernel, loop_runner,
                                               nested_call_kernel)
from openjax._src.runtime.pipeline import interpreting_first_call


def _counting(monkeypatch, primitive):
  calls = []
  impl = primitive.impl

  def counted(*args, **params):
    calls.append(1)
    return impl(*args, **params)
  monkeypatch.setattr(primitive, "impl", counted)
  return calls


def _step(scale):
  @jax.jit
  def step(x):
    return jnp.where(x > 1.0, x * scale, x + 1.0)
  return step


def test_while_body_nested_jit_runs_no_impl_per_trip(monkeypatch):
  calls = _counting(monkeypatch, jit_p)
  step = _step(0.75)   # traced after the patch: its equation's impl is the counter
  x = jnp.asarray(np.linspace(-2.0, 3.0, 7, dtype=np.float32))
  with interpreting_first_call():
    out = lax.while_loop(lambda c: c[0] < 6, lambda c: (c[0] + 1, step(c[1])), (0, x))[1]
  assert calls == []
  expect = x
  for _ in range(6):
    expect = step(expect)   # jit's own call path, trip by trip
  np.testing.assert_array_equal(np.asarray(out), np.asarray(expect))


def test_scan_and_cond_bodies_nested_jit_run_no_impl(monkeypatch):
  calls = _counting(monkeypatch, jit_p)
  step = _step(1.25)
  x = jnp.asarray(np.linspace(-2.0, 3.0, 5, dtype=np.float32))
  with interpreting_first_call():
    carry, ys = lax.scan(lambda c, _: (step(c), c), x, None, length=4)
    branch = lax.cond(jnp.sum(x) > 0, step, lambda v: v - 1.0, x)
  assert calls == []
  expect, rows = x, []
  for _ in range(4):
    rows.append(expect)
    expect = step(expect)
  np.testing.assert_array_equal(np.asarray(carry), np.asarray(expect))
  np.testing.assert_array_equal(np.asarray(ys), np.stack([np.asarray(r) for r in rows]))
  np.testing.assert_array_equal(np.asarray(branch), np.asarray(step(x)))


def test_while_body_custom_jvp_runs_its_primal_without_the_impl(monkeypatch):
  calls = _counting(monkeypatch, custom_derivatives.custom_jvp_call_p)

  @jax.custom_jvp
  def halve(x):
    return x * 0.5

  halve.defjvp(lambda p, t: (halve(p[0]), t[0] * 0.5))
  x = jnp.asarray(np.arange(4, dtype=np.float32) + 10.0)
  out = lax.while_loop(lambda v: jnp.max(v) > 1.0, halve, x)
  assert calls == []
  np.testing.assert_array_equal(np.asarray(out), np.asarray(x) / np.float32(16.0))


def test_library_program_loop_matches_op_by_op():
  # scipy.special.expn as an eager library jit: its two while loops call
  # jnp.where (a nested jit) ~10 times a trip.
  from openjax._src.numpy import util
  from openjax._src.scipy import special_series
  x = jnp.asarray(np.array([0.2, 0.9, 1.0, 1.5, 3.0, 7.0], np.float32))
  n = jnp.asarray(np.array([1, 2, 3, 1, 2, 4], np.float32))
  lib = util.jit(special_series._expn_values.fun)
  with jax.disable_jit():
    expect = special_series._expn_values.fun(n, x)
  np.testing.assert_allclose(np.asarray(lib(n, x)), np.asarray(expect), rtol=2e-6)
  np.testing.assert_array_equal(np.asarray(lib(n, x)), np.asarray(lib(n, x)))


def test_loop_runner_is_made_once_per_jaxpr_and_flags():
  closed = jax.make_jaxpr(_step(0.5))(jnp.ones(3, jnp.float32))
  run = loop_runner(closed)
  assert loop_runner(closed) is run
  with jax.debug_nans(True):
    checked = loop_runner(closed)
  assert checked is not run
  assert loop_runner(closed) is run


def test_debug_nans_inside_a_loop_body_still_raises():
  f = jax.jit(lambda v: jnp.log(v))
  x = jnp.asarray(np.array([1.0, -1.0], np.float32))
  with jax.debug_nans(True), pytest.raises(FloatingPointError):
    with interpreting_first_call():
      lax.fori_loop(0, 2, lambda i, v: f(v), x)


def test_kernels_by_tier():
  closed = jax.make_jaxpr(_step(0.5))(jnp.ones(3, jnp.float32))
  eqn, = closed.jaxpr.eqns
  assert eqn.primitive is jit_p and eqn.params["tiered"]
  # Where jit's impl compiles, a nested jit keeps its impl.
  assert custom_call_kernel(jit_p.impl, eqn.params) is None
  assert nested_call_kernel(jit_p.impl, eqn.params) is not None
  assert nested_calls.nested_call_kernel(lambda *a, **p: a, {}) is None


def test_cached_loops_flatten_the_carry_without_paths(monkeypatch):
  # The carry's paths only name leaves in error messages: a call that finds
  # its traced loop does not build them.
  from openjax._src import tree_util
  cond = lambda c: c[0] < 3  # noqa: E731
  body = lambda c: (c[0] + 1, c[1] * 2.0)  # noqa: E731
  step = lambda c, x: (c * 2.0 + x, c)  # noqa: E731
  init, xs = (0, jnp.ones(3, jnp.float32)), jnp.arange(4.0, dtype=jnp.float32)
  first = lax.while_loop(cond, body, init), lax.scan(step, jnp.float32(1.0), xs)
  calls = []
  with_path = tree_util.tree_flatten_with_path
  monkeypatch.setattr(tree_util, "tree_flatten_with_path",
                      lambda *a, **k: calls.append(1) or with_path(*a, **k))
  again = lax.while_loop(cond, body, init), lax.scan(step, jnp.float32(1.0), xs)
  assert calls == []
  for a, b in zip(jax.tree_util.tree_leaves(first), jax.tree_util.tree_leaves(again)):
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_carry_type_errors_still_name_the_leaf():
  with pytest.raises(TypeError, match=r"\['b'\]"):
    lax.while_loop(lambda c: c["a"] < 3, lambda c: {"a": c["a"] + 1, "b": c["b"] * 1},
                   {"a": 0, "b": jnp.ones(2, jnp.float32) > 0})
