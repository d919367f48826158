"""Constant folding before lowering (interpreters/fold_constants.py): a
jitted function's equations over constants run once, their results become
module constants; the compiled results equal the unfolded program's."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import ClosedJaxpr
from openjax._src.interpreters.fold_constants import FOLD_MAX_BYTES, fold_constants
from openjax._src.runtime import pipeline


def _compiled(f, *args):
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(f)(*args)
    for leaf in jax.tree_util.tree_leaves(out):
      assert leaf._buffer is not None, "did not run compiled"
    return out


def _closed(f, *args) -> ClosedJaxpr:
  return jax.make_jaxpr(f)(*args)


def _prims(closed: ClosedJaxpr) -> list:
  return [e.primitive.name for e in closed.jaxpr.eqns]


RNG = np.random.default_rng(0)
A = RNG.standard_normal((16, 16)).astype(np.float32)
B = RNG.standard_normal((16, 16)).astype(np.float32)


def test_products_of_closed_over_arrays_are_folded():
  a, b = jnp.asarray(A), jnp.asarray(B)

  def f(x):
    return x @ (a @ b.T) + jnp.tanh(a).sum(0)

  x = jnp.asarray(RNG.standard_normal((4, 16)).astype(np.float32))
  closed = _closed(f, x)
  out = fold_constants(closed)
  assert _prims(closed).count("dot_general") == 2
  assert _prims(out).count("dot_general") == 1      # only x @ (...) is left
  assert "tanh" not in _prims(out) and "reduce_sum" not in _prims(out)
  assert len(out.jaxpr.constvars) == len(out.consts)
  got = np.asarray(_compiled(f, x))
  np.testing.assert_allclose(got, np.asarray(x) @ (A @ B.T) + np.tanh(A).sum(0),
                             rtol=2e-5, atol=2e-5)
  text = jax.jit(f).lower(x).as_text()
  assert text.count("stablehlo.dot_general") == 1 and "tanh" not in text


def test_hessian_with_a_closed_over_matrix():
  m = A @ A.T / 16
  am = jnp.asarray(m)

  def f(x):
    return 0.5 * x @ (am @ x) + jnp.sum(jnp.tanh(x))

  x = jnp.asarray(RNG.standard_normal(16).astype(np.float32))
  t = np.tanh(np.asarray(x, np.float64))
  expected = 0.5 * (m + m.T) + np.diag(-2 * t * (1 - t * t))
  np.testing.assert_allclose(np.asarray(_compiled(jax.hessian(f), x)), expected,
                             rtol=1e-4, atol=1e-5)
  lowered = pipeline.lower_closed_jaxpr(_closed(jax.hessian(f), x), "h")
  assert "dot_general" not in _prims(lowered.lowered_jaxpr)   # A @ I folded
  assert "dot_general" in _prims(lowered.closed_jaxpr)        # what users see is unchanged


def test_what_is_not_folded():
  a = jnp.asarray(A)
  key = jax.random.key(0)

  def f(x):
    big = jnp.broadcast_to(a[0, 0], (512, 512))              # expands: stays a splat
    noise = jax.random.normal(key, (16,))                     # a nested jit: not folded
    jax.debug.print("{}", a[0, 0])                            # an effect
    return x + big.sum() + noise + lax.cond(a[0, 0] > 0, lambda: a[0], lambda: a[1])

  x = jnp.zeros(16)
  out = fold_constants(_closed(f, x))
  prims = _prims(out)
  assert "broadcast_in_dim" in prims and "debug_print" in prims and "cond" in prims
  assert "jit" in prims
  bits = _closed(lambda x: x + jax.random.bits(key, (16,)).astype(np.float32), x)
  assert [p for p in _prims(fold_constants(bits)) if p.startswith("random")]


def test_large_results_are_not_folded():
  n = int(np.sqrt(FOLD_MAX_BYTES / 4)) + 8
  a = jnp.ones((n, n), jnp.float32)

  def f(x):
    return x + (a * 2.0)

  x = jnp.zeros((n, n), jnp.float32)
  assert "mul" in _prims(fold_constants(_closed(f, x)))


def test_functions_without_constant_work_are_unchanged():
  closed = _closed(lambda x: jnp.sin(x) * 2.0, jnp.zeros(3))
  assert fold_constants(closed) is closed


@pytest.mark.parametrize("dtype", [np.int32, np.float32, np.bool_, np.complex64])
def test_folded_values_keep_their_dtypes(dtype):
  c = jnp.asarray(np.arange(6).reshape(2, 3).astype(dtype))

  def f(x):
    return x + (c.T == c.T[0]).astype(x.dtype), (c * c).sum(0)

  x = jnp.zeros((3, 2), np.float32)
  got, s = _compiled(f, x)
  cn = np.arange(6).reshape(2, 3).astype(dtype)
  np.testing.assert_array_equal(np.asarray(got), (cn.T == cn.T[0]).astype(np.float32))
  np.testing.assert_array_equal(np.asarray(s), (cn * cn).sum(0))
  assert s.dtype == jnp.asarray(cn).sum(0).dtype


def test_same_module_text_keeps_each_signatures_weak_types():
  # x * 2 + 1 lowers to the same module for a weak and a strong f32 scalar:
  # the executable cache must not hand one the other's result types.
  strong = _compiled(lambda x: x * 2 + 1, jnp.float32(3.0))
  weak = _compiled(lambda x: x * 2 + 1, 3.0)
  assert not strong.weak_type and weak.weak_type
  assert float(strong) == float(weak) == 7.0
