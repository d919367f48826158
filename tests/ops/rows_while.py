"""Op-table rows for ``while`` (``lax.while_loop``).

while_loop is differentiable in forward mode only (its transpose raises, as
in JAX), so the rows set ``vjp=False``. The vmap column batches loops whose
predicate depends on the batched values: lanes finish at different
iterations. tests/test_while_loop.py has the rest (errors, printed jaxprs,
linearize, nested loops)."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32 = np.float32


def _uniform(lo, hi, *shapes):
  return lambda rng: tuple(rng.uniform(lo, hi, s).astype(F32) for s in shapes)


# A fixed trip count with an int counter and a float carry. (Rows with the
# grad column return float outputs only: check_grads has no int tangents.)
def _affine_steps(x):
  return lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (0, x))[1]


def _affine_steps_ref(x):
  i, y = 0, x
  while i < 5:
    i, y = i + 1, y * F32(1.5) + F32(1.0)
  return y


# A trip count that depends on the data.
def _double_until(x):
  return lax.while_loop(lambda v: jnp.sum(v) < 100.0, lambda v: v * 2.0 + 1.0, x)


def _double_until_ref(x):
  while np.sum(x) < 100.0:
    x = x * F32(2.0) + F32(1.0)
  return x


# Newton's iteration for the square root, with a closed-over operand.
def _newton_sqrt(a):
  def cond(c):
    x, i = c
    return jnp.any(jnp.abs(x * x - a) > 1e-6 * a) & (i < 50)

  def body(c):
    x, i = c
    return 0.5 * (x + a / x), i + 1
  return lax.while_loop(cond, body, (a, 0))[0]


# A pytree carry (dict) and a closed-over operand.
def _geometric_sum(x, r):
  def body(c):
    return {"acc": c["acc"] + c["term"], "term": c["term"] * r, "n": c["n"] + 1}
  out = lax.while_loop(lambda c: c["n"] < 6, body,
                       {"acc": jnp.zeros_like(x), "term": x, "n": 0})
  return out["acc"] * out["n"].astype(x.dtype)


def _geometric_sum_ref(x, r):
  acc, term = np.zeros_like(x), x
  for _ in range(6):
    acc, term = acc + term, term * r
  return acc * F32(6)


# A loop in a loop; the inner trip count depends on the outer carry.
def _nested(x):
  def outer_body(c):
    i, acc = c
    inner = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] * x), (0, jnp.ones_like(x)))
    return i + 1, acc + inner[1]
  return lax.while_loop(lambda c: c[0] < 4, outer_body, (0, jnp.zeros_like(x)))[1]


def _nested_ref(x):
  return sum(x ** k for k in range(4))


ROWS = [
    OpRow("while_loop_affine_steps", _affine_steps, _uniform(-1, 1, (3,)), _affine_steps_ref,
          grad=True, vjp=False),
    OpRow("while_loop_double_until", _double_until, _uniform(0.1, 1, (3,)), _double_until_ref,
          grad=True, vjp=False),
    OpRow("while_loop_newton_sqrt", _newton_sqrt, _uniform(0.5, 4, (4,)), np.sqrt,
          atol=1e-6, rtol=1e-6, grad=True, vjp=False),
    OpRow("while_loop_geometric_sum", _geometric_sum, _uniform(-1, 1, (2, 3), ()),
          _geometric_sum_ref, rtol=1e-5, grad=True, vjp=False),
    OpRow("while_loop_nested", _nested, _uniform(-1.5, 1.5, (3,)), _nested_ref, rtol=1e-5,
          grad=True, vjp=False),
]
