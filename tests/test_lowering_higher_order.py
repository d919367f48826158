"""Compiled (IREE) lowering of the higher-order and identity primitives of
autodiff: custom_jvp_call, custom_vjp_call, remat (checkpoint), name
(checkpoint_name), stop_gradient and nested jit. Each compiled result must
equal the eager one."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.ad_checkpoint import checkpoint_name

X = np.linspace(-1.0, 1.5, 12, dtype=np.float32).reshape(3, 4)
W = np.random.default_rng(0).normal(size=(4, 4)).astype(np.float32)


def _check(f, *args, rtol=1e-5, atol=1e-6):
  with jax.disable_jit():
    eager = f(*args)
  with jax.config.override("openjax_executor", "iree"):
    compiled = jax.jit(f)(*args)
  e_leaves, c_leaves = jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(compiled)
  assert len(e_leaves) == len(c_leaves)
  for e, c in zip(e_leaves, c_leaves):
    assert np.asarray(c).dtype == np.asarray(e).dtype
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=rtol, atol=atol)
  return compiled


def _text(f, *args):
  return jax.jit(f).lower(*args).as_text()


# ------------------------------------------------------------- custom_jvp
@jax.custom_jvp
def _softplus(x):
  return jnp.log1p(jnp.exp(x))


@_softplus.defjvp
def _softplus_jvp(primals, tangents):
  x, = primals
  t, = tangents
  return _softplus(x), t * 2.0 / (1.0 + jnp.exp(-x))   # deliberately twice the derivative


def test_custom_jvp_primal():
  _check(lambda x: _softplus(x) @ W, X)
  assert "custom_jvp" not in _text(lambda x: _softplus(x), X)


def test_custom_jvp_grad_and_jvp():
  g = _check(jax.grad(lambda x: _softplus(x).sum()), X)
  np.testing.assert_allclose(np.asarray(g), 2.0 / (1.0 + np.exp(-X)), rtol=1e-5)
  _check(lambda x, t: jax.jvp(_softplus, (x,), (t,)), X, np.ones_like(X))


def test_custom_jvp_vmap():
  _check(jax.vmap(lambda row: _softplus(row) @ W), X)


# ------------------------------------------------------------- custom_vjp
@jax.custom_vjp
def _clip_grad(x, w):
  return jnp.tanh(x @ w)


def _clip_fwd(x, w):
  y = jnp.tanh(x @ w)
  return y, (y, x, w)


def _clip_bwd(res, ct):
  y, x, w = res
  g = jnp.clip(ct * (1 - y * y), -0.1, 0.1)
  return g @ w.T, x.T @ g


_clip_grad.defvjp(_clip_fwd, _clip_bwd)


def test_custom_vjp_primal():
  _check(_clip_grad, X, W)


def test_custom_vjp_grad():
  _check(jax.grad(lambda x, w: (_clip_grad(x, w) * 3.0).sum(), argnums=(0, 1)), X, W)


def test_custom_vjp_closure_and_value_and_grad():
  scale = np.float32(1.7)

  def f(x):
    return _clip_grad(x * scale, W).sum()

  _check(jax.value_and_grad(f), X)


def test_custom_vjp_linearized_jvp_is_an_error():
  # custom_lin (a custom_vjp's linear part) cannot run forward, eagerly or compiled.
  def f(x):
    _, f_jvp = jax.linearize(lambda y: _clip_grad(y, W), x)
    return f_jvp(x)

  with pytest.raises(TypeError, match="custom_vjp"):
    with jax.config.override("openjax_executor", "iree"):
      jax.jit(f)(X)


# ------------------------------------------------------------- checkpoint
def _deep(x):
  for _ in range(3):
    x = jnp.sin(x @ W)
  return x


def test_checkpoint_forward():
  _check(jax.checkpoint(_deep), X)


def test_grad_of_checkpoint():
  f = lambda x: jax.checkpoint(_deep)(x).sum()
  _check(jax.grad(f), X)
  # The recomputation is kept apart from the forward pass, as JAX does.
  assert "stablehlo.optimization_barrier" in _text(jax.grad(f), X)


def test_grad_of_checkpoint_prevent_cse_false_and_policy():
  f = jax.checkpoint(_deep, prevent_cse=False,
                     policy=jax.checkpoint_policies.dots_with_no_batch_dims_saveable)
  _check(jax.grad(lambda x: f(x).sum()), X)


def test_checkpoint_name_with_policy():
  def g(x):
    h = checkpoint_name(jnp.sin(x @ W), "h")
    return jnp.cos(h @ W)

  policy = jax.checkpoint_policies.save_only_these_names("h")
  f = jax.checkpoint(g, policy=policy)
  _check(jax.grad(lambda x: f(x).sum()), X)
  _check(lambda x: checkpoint_name(x * 2.0, "y"), X)


def test_vmap_grad_of_checkpoint():
  f = jax.checkpoint(lambda r: jnp.sin(r @ W).sum())
  _check(jax.vmap(jax.grad(f)), X)


# ---------------------------------------------------------- stop_gradient
def test_stop_gradient():
  f = lambda x: (x * jax.lax.stop_gradient(x @ W)).sum()
  _check(f, X)
  _check(jax.grad(f), X)
  _check(lambda x: jax.lax.stop_gradient({"a": x, "b": (x.astype(jnp.int32),)}), X)


# ----------------------------------------------------------- nested jit
def test_nested_jit():
  inner = jax.jit(lambda x: jnp.tanh(x @ W))

  def f(x):
    return inner(x) + inner(x * 2.0) + jax.jit(lambda y: inner(y) * 3.0)(x)

  _check(f, X)
  _check(jax.grad(lambda x: f(x).sum()), X)


def test_custom_rules_inside_nested_jit_and_checkpoint():
  inner = jax.jit(lambda x: _softplus(_clip_grad(x, W)))
  f = jax.checkpoint(lambda x: inner(x).sum())
  _check(jax.value_and_grad(f), X)


def test_cost_analysis_sees_through_higher_order():
  f = jax.checkpoint(lambda x: _clip_grad(x, W))
  cost = jax.jit(f).lower(X).compile().cost_analysis()
  assert cost["flops"] >= 2 * 3 * 4 * 4
