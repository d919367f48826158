"""Compiled float32 sin/cos/tan of large operands reduce huge arguments (|x| >=
2**23) in a branch taken only when the operand holds one
(``math_lowering._huge_branch``): the values must be those of the
per-element path (small operands, bit for bit) whether or not the branch is
taken, wherever the huge elements are, for every shape and for the real
parts of complex64 operands."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.primitives.elementwise import math_lowering

LIMIT = math_lowering.HUGE_BRANCH_MIN_ELEMENTS


def _compiled(f, *xs):
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.jit(f)(*xs)
    assert out._buffer is not None, "did not run compiled"
    return np.asarray(out)


def _per_element(f, x):
  """``f`` compiled on pieces smaller than the branch's limit (the
  per-element path), joined."""
  flat = x.reshape(-1)
  step = LIMIT // 2
  return np.concatenate([_compiled(f, flat[i:i + step])
                         for i in range(0, flat.size, step)]).reshape(x.shape)


def _operand(n, huge_at=(), seed=0):
  rng = np.random.default_rng(seed)
  x = np.concatenate([rng.standard_normal(n // 2) * 10,
                      rng.uniform(-2.0 ** 23, 2.0 ** 23, n - n // 2)]).astype(np.float32)
  rng.shuffle(x)
  huge = np.array([3e38, -1e30, 2.0 ** 23, -2.0 ** 23, 1e20, 8388609.0, np.inf, np.nan],
                  np.float32)
  for k, i in enumerate(huge_at):
    x[i] = huge[k % huge.size]
  return x


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
@pytest.mark.parametrize("huge_at", [(), (0,), (LIMIT + 5,), (-1,), (3, 100, LIMIT, -7, -2, -1)])
def test_large_operand_matches_the_per_element_path(name, huge_at):
  n = 2 * LIMIT + 64
  x = _operand(n, [i % n for i in huge_at])
  f = getattr(jnp, name)
  got = _compiled(f, x)
  want = _per_element(f, x)
  np.testing.assert_array_equal(got, want)   # the same bits, NaN where NaN
  finite = np.isfinite(x)
  exact = getattr(np, name)(x[finite].astype(np.float64))
  if name == "tan":   # relative, away from its poles
    ok = np.abs(exact) < 1e3
    np.testing.assert_allclose(got[finite][ok], exact[ok], rtol=3e-6, atol=3e-7)
  else:
    np.testing.assert_allclose(got[finite], exact, rtol=0, atol=1.2e-7)
  assert np.isnan(got[~finite]).all()


@pytest.mark.parametrize("shape", [(LIMIT + 1,), (129, 257), (4, 64, 65)])
def test_shapes_whose_size_has_no_row_split(shape):
  # sizes not divisible by 64 (or by 2: a single row) take the same branch
  x = _operand(int(np.prod(shape)), (0, -1), seed=1).reshape(shape)
  got = _compiled(lambda v: jnp.sin(v) * jnp.cos(v), x)
  want = np.sin(x.astype(np.float64)) * np.cos(x.astype(np.float64))
  finite = np.isfinite(x)
  np.testing.assert_allclose(got[finite], want[finite], rtol=0, atol=3e-7)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_branch_in_the_lowered_module_of_large_operands_only(name):
  f = getattr(jnp, name)
  small = jax.jit(f).lower(jnp.ones(LIMIT - 1, jnp.float32)).as_text()
  large = jax.jit(f).lower(jnp.ones(LIMIT, jnp.float32)).as_text()
  assert "stablehlo.if" not in small
  assert large.count("stablehlo.if") == 1


@pytest.mark.parametrize("huge", [None, 1e20])
def test_fused_consumers_and_a_sum(huge):
  # jaxbench's fused_elementwise: the branch's values feed fused consumers
  # and a reduction
  n = 4 * LIMIT
  x, y = _operand(n, (), seed=2), _operand(n, (), seed=3)
  if huge is not None:
    x[17] = huge
  xd, yd = x.astype(np.float64), y.astype(np.float64)
  f = lambda a, b: a * 2 + jnp.sin(a) * jnp.cos(b) - jnp.exp(-a * a)  # noqa: E731
  got = _compiled(f, x, y)
  want = xd * 2 + np.sin(xd) * np.cos(yd) - np.exp(-xd * xd)
  err = np.abs(got - want) / (np.abs(xd * 2) + 1)   # float32 rounding of each term
  assert err.max() <= 3e-7, (x[np.argmax(err)], err.max())
  total = float(_compiled(lambda a, b: jnp.sum(f(a, b)), x, y))
  assert abs(total - want.sum()) <= 1e-6 * np.abs(want).sum()


def test_complex64_real_parts():
  n = LIMIT + 32
  rng = np.random.default_rng(4)
  z = (rng.standard_normal(n) * 100 + 1j * rng.standard_normal(n)).astype(np.complex64)
  z[5] = np.complex64(3e38 + 0.5j)
  got = _compiled(jnp.sin, z)
  want = np.sin(z.astype(np.complex128))
  np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6)


def test_gradient_and_vmap_of_large_operands():
  x = _operand(LIMIT * 2, (9,), seed=5)
  x = np.where(np.isfinite(x), x, np.float32(0.25))
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    g = np.asarray(jax.jit(jax.grad(lambda v: jnp.sum(jnp.sin(v))))(x))
    rows = np.asarray(jax.jit(jax.vmap(jnp.cos))(x.reshape(4, -1)))
  np.testing.assert_allclose(g, np.cos(x.astype(np.float64)), rtol=0, atol=1.2e-7)
  np.testing.assert_allclose(rows.reshape(-1), np.cos(x.astype(np.float64)), rtol=0, atol=1.2e-7)
