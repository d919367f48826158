"""Op-table rows for ``cond`` (``lax.cond`` and ``lax.switch``) and ``empty2``
(the placeholder residual of untaken branches under reverse mode).

Predicates and indices are array arguments, so the vmap column batches them
too (a batched predicate turns the cond into ``select_n``, as in JAX), and
the references are NumPy if/else on the same inputs."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32 = np.float32


def _normal(*shapes):
  return lambda rng: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


# ---------------------------------------------------------------- cond
def _cond_closure(x, y):
  # The predicate depends on x; y is closed over by one branch.
  return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * y, lambda x: jnp.cos(x) - 2. * x, x)


def _cond_closure_ref(x, y):
  return np.sin(x) * y if x.sum() > 0 else np.cos(x) - 2. * x


def _cond_pred_arg(p, x, y):
  return lax.cond(p, lambda a, b: (a * b, jnp.exp(a)), lambda a, b: (a - b, a * a), x, y)


def _cond_pred_arg_ref(p, x, y):
  return (x * y, np.exp(x)) if p else (x - y, x * x)


def _pred_and_arrays(rng):
  return (np.asarray(rng.standard_normal() > 0),
          rng.standard_normal((2, 3)).astype(F32), rng.standard_normal((2, 3)).astype(F32))


def _cond_pytree(x, y):
  def true_fun(d):
    return {"s": d["a"] @ d["b"], "t": (jnp.tanh(d["a"]), None)}

  def false_fun(d):
    return {"s": d["a"] @ (d["b"] * 2.), "t": (d["a"] ** 2, None)}
  return lax.cond(x[0, 0] > 0, true_fun, false_fun, {"a": x, "b": y})


def _cond_pytree_ref(x, y):
  if x[0, 0] > 0:
    return {"s": x @ y, "t": (np.tanh(x), None)}
  return {"s": x @ (y * 2.), "t": (x ** 2, None)}


def _cond_int(n, x):
  # Integer operands and outputs next to a float one.
  return lax.cond(n.sum() > 0, lambda n, x: (n * 2, x + n), lambda n, x: (n - 1, x * n), n, x)


def _cond_int_ref(n, x):
  return (n * 2, x + n) if n.sum() > 0 else (n - 1, x * n)


def _ints_and_floats(rng):
  return (rng.integers(-3, 4, (3,)).astype(np.int32), rng.standard_normal(3).astype(F32))


def _cond_nested(x):
  def inner(x):
    return lax.cond(x.sum() > 0.5, lambda x: x ** 3, lambda x: jnp.sin(x) * x, x)
  return lax.cond(x.sum() > -0.5, inner, lambda x: -jnp.exp(x), x)


def _cond_nested_ref(x):
  if x.sum() > -0.5:
    return x ** 3 if x.sum() > 0.5 else np.sin(x) * x
  return -np.exp(x)


# -------------------------------------------------------------- switch
_BRANCHES = [lambda x: jnp.sin(x), lambda x: x * x, lambda x: jnp.exp(-x), lambda x: 2. - x]
_BRANCHES_REF = [np.sin, lambda x: x * x, lambda x: np.exp(-x), lambda x: 2. - x]


def _switch(i, x):
  return lax.switch(i, _BRANCHES, x)


def _switch_ref(i, x):
  return _BRANCHES_REF[int(np.clip(i, 0, 3))](x)


def _index_and_array(rng):
  # Out-of-range indices are clamped.
  return (np.asarray(rng.integers(-1, 5), np.int32), rng.standard_normal(4).astype(F32))


# ------------------------------------------------------------ empty2
def _cond_grad(x):
  # Reverse mode of a cond: each branch fills the other's residual slots
  # with empty2 placeholders.
  return jax.grad(lambda x: lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * x,
                                     lambda x: jnp.cos(x), x).sum())(x)


def _cond_grad_ref(x):
  return np.cos(x) * x + np.sin(x) if x.sum() > 0 else -np.sin(x)


ROWS = [
    OpRow("cond_closure", _cond_closure, _normal((3,), (3,)), ref=_cond_closure_ref, grad=True),
    OpRow("cond_pred_arg", _cond_pred_arg, _pred_and_arrays, ref=_cond_pred_arg_ref, grad=True),
    OpRow("cond_pytree", _cond_pytree, _normal((2, 3), (3, 2)), ref=_cond_pytree_ref,
          grad=True, atol=1e-5),
    # check_grads (like JAX's) compares tangents of integer outputs by dtype
    # and fails on their float0 tangents, so the grad row drops them.
    OpRow("cond_int_operands", _cond_int, _ints_and_floats, ref=_cond_int_ref),
    OpRow("cond_int_operands_grad", lambda n, x: _cond_int(n, x)[1], _ints_and_floats,
          ref=lambda n, x: _cond_int_ref(n, x)[1], grad=True),
    OpRow("cond_nested", _cond_nested, _normal((2,)), ref=_cond_nested_ref, grad=True),
    OpRow("switch_4", _switch, _index_and_array, ref=_switch_ref, grad=True),
    OpRow("cond_grad_empty2", _cond_grad, _normal((3,)), ref=_cond_grad_ref),
]
