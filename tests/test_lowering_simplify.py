"""Jaxpr rewrites before lowering: transpose(dot_general(a, b)) that swaps
the free dimensions lowers as dot_general(b, a)."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.config import config
from openjax._src.lowering.simplify import fold_transposed_dots

rng = np.random.default_rng(0)
X = rng.standard_normal((6, 3)).astype(np.float32)
B = rng.standard_normal((4, 3)).astype(np.float32)


def _prims(jaxpr):
  return [e.primitive.name for e in jaxpr.eqns]


def _compiled(f, *args):
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    return jax.jit(f)(*args), jax.jit(f).lower(*args).as_text()


def test_vmapped_dot_folds_its_transpose():
  # As in a vmapped log-likelihood: the product meets an unbatched operand,
  # so its batch dim (last) moves to the front right after the dot.
  c = np.linspace(-1, 1, 6).astype(np.float32)
  f = jax.vmap(lambda b, x: jnp.tanh(jnp.dot(x, b) * c), in_axes=(0, None))
  jaxpr = jax.make_jaxpr(f)(B, X).jaxpr
  assert "transpose" in _prims(jaxpr)
  folded = fold_transposed_dots(jaxpr)
  assert "transpose" not in _prims(folded) and _prims(folded).count("dot_general") == 1
  out, text = _compiled(f, B, X)
  assert "stablehlo.transpose" not in text
  np.testing.assert_allclose(np.asarray(out), np.tanh(B @ X.T * c), rtol=1e-5)


def test_not_folded_when_the_product_has_another_use():
  def f(a, b):
    d = lax.dot_general(a, b, (((1,), (1,)), ((), ())))
    return d.T, d
  jaxpr = jax.make_jaxpr(f)(X, B).jaxpr
  assert fold_transposed_dots(jaxpr) is jaxpr
  (t, d), _ = _compiled(f, X, B)
  np.testing.assert_allclose(np.asarray(t), (X @ B.T).T, rtol=1e-5)


def test_not_folded_for_batched_products_or_other_permutations():
  a = rng.standard_normal((2, 5, 3)).astype(np.float32)
  b = rng.standard_normal((2, 3, 4)).astype(np.float32)
  batched = jax.make_jaxpr(lambda a, b: jnp.swapaxes(a @ b, 1, 2))(a, b).jaxpr
  assert fold_transposed_dots(batched) is batched
  x3 = rng.standard_normal((2, 3, 4)).astype(np.float32)
  w = rng.standard_normal((4, 5)).astype(np.float32)
  other = jax.make_jaxpr(lambda x, w: jnp.transpose(x @ w, (1, 0, 2)))(x3, w).jaxpr
  assert fold_transposed_dots(other) is other


def test_multi_dim_free_blocks_and_precision():
  x = rng.standard_normal((2, 3, 4)).astype(np.float32)
  w = rng.standard_normal((4, 5, 6)).astype(np.float32)

  def f(x, w):
    d = lax.dot_general(x, w, (((2,), (0,)), ((), ())),
                        precision=(lax.Precision.HIGHEST, lax.Precision.DEFAULT))
    return jnp.transpose(d, (2, 3, 0, 1))
  jaxpr = jax.make_jaxpr(f)(x, w).jaxpr
  folded = fold_transposed_dots(jaxpr)
  (dot,) = [e for e in folded.eqns if e.primitive.name == "dot_general"]
  assert dot.params["dimension_numbers"] == (((0,), (2,)), ((), ()))
  assert dot.params["precision"][0] == lax.Precision.DEFAULT
  out, _ = _compiled(f, x, w)
  np.testing.assert_allclose(np.asarray(out), np.einsum("abk,kcd->cdab", x, w), rtol=1e-4,
                             atol=1e-5)


def test_long_reductions_split_into_rows():
  # A reduction of >= 2**16 elements to few outputs lowers as rows reduced in
  # parallel, then the rows (with identity padding when the length does not
  # divide): values equal NumPy's.
  x = rng.standard_normal(100_003).astype(np.float32)
  i = rng.integers(-50, 50, (3, 70_001)).astype(np.int32)
  fns = {
      "sum": (lambda x, i: jnp.sum(x), lambda x, i: np.sum(x.astype(np.float64))),
      "max": (lambda x, i: jnp.max(x), lambda x, i: np.max(x)),
      "min": (lambda x, i: jnp.min(x), lambda x, i: np.min(x)),
      "argmax": (lambda x, i: jnp.argmax(x), lambda x, i: np.argmax(x)),
      "int_sum_rows": (lambda x, i: jnp.sum(i, axis=1), lambda x, i: np.sum(i, axis=1)),
      "prod_int": (lambda x, i: jnp.prod(jnp.sign(i)), lambda x, i: np.prod(np.sign(i))),
  }
  for name, (f, ref) in fns.items():
    out, text = _compiled(f, x, i)
    np.testing.assert_allclose(np.asarray(out), ref(x, i), rtol=1e-5, err_msg=name)
