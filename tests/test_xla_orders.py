"""XLA:CPU's summation orders and fusions give JAX's bits: sums by the
tree-reduction rewrite, vector products as fused multiply-add chains, products
contracted into the sums that use them under jit, division by a literal as a
multiplication by its reciprocal (``_xla_orders``, ``_xla_rewrites``).

Expected values are JAX 0.10.2's (tests/data/xla_orders.npz, from
tools/gen_xla_order_fixtures.py); each is checked eagerly, with the jaxpr
interpreter and compiled by IREE."""
import os

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives import _xla_orders as xo
from openjax._src.primitives import _xla_rewrites

DATA = np.load(os.path.join(os.path.dirname(__file__), "data", "xla_orders.npz"))
SUMS = sorted({k.split("/")[1] for k in DATA.files if k.startswith("sum/")})
DOTS = sorted({k.split("/")[1] for k in DATA.files if k.startswith("dot/")})
FUSED = sorted(k.split("/")[1] for k in DATA.files if k.startswith("fused/") and k.endswith("/src"))
MODES = ("eager", "interpreter", "compiled")


def _run(mode, f, *args):
  if mode == "eager":
    return f(*args)
  if mode == "interpreter":
    with jax.config.override("openjax_executor", "interpreter"):
      return jax.jit(f)(*args)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    return jax.jit(f)(*args)


def _fused_fn(name):
  # The case's source as tools/gen_xla_order_fixtures.py ran it under JAX.
  return eval(str(DATA[f"fused/{name}/src"]), {"jnp": jnp})  # noqa: S307 - fixture text


def _bits_equal(got, want):
  got = np.asarray(got)
  assert got.dtype == want.dtype and got.shape == want.shape
  np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", SUMS)
def test_sum_has_jax_bits(name, mode):
  x, axes, want = (DATA[f"sum/{name}/{k}"] for k in ("x", "axes", "out"))
  axes = tuple(int(a) for a in axes)
  with jax.enable_x64(x.dtype == np.float64):
    got = _run(mode, lambda v: lax.reduce_sum(v, axes), jnp.asarray(x))
    _bits_equal(got, want)
    if mode == "eager":   # jnp.sum's cached eager plan too
      _bits_equal(jnp.sum(jnp.asarray(x), axis=axes), want)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", DOTS)
def test_vector_product_has_jax_bits(name, mode):
  lhs, rhs, dn, want = (DATA[f"dot/{name}/{k}"] for k in ("lhs", "rhs", "dn", "out"))
  dims = (((int(dn[0]),), (int(dn[1]),)), ((), ()))
  got = _run(mode, lambda a, b: lax.dot_general(a, b, dims), jnp.asarray(lhs), jnp.asarray(rhs))
  _bits_equal(got, want)


@pytest.mark.parametrize("mode", ("interpreter", "compiled"))
@pytest.mark.parametrize("name", FUSED)
def test_jitted_products_and_divisions_have_jax_bits(name, mode):
  if name == "shared" and mode == "compiled":
    pytest.xfail("IREE merges the per-use copies of a product with two uses back into one, "
                 "which LLVM then leaves unfused (XLA fuses it into both sums)")
  args = [jnp.asarray(DATA[f"fused/arg{i}"]) for i in range(4)]
  out = _run(mode, _fused_fn(name), *args)
  out = out if isinstance(out, tuple) else (out,)
  _bits_equal(np.concatenate([np.ravel(np.asarray(v)) for v in out]),
              DATA[f"fused/{name}/out"])


def test_tiered_first_call_has_the_compiled_bits():
  # The first calls of a tiered jit run the interpreter while IREE compiles:
  # both must give XLA's bits, or a function's results change mid-run.
  args = [jnp.asarray(DATA[f"fused/arg{i}"]) for i in range(4)]
  f = _fused_fn("c-a*b")
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", True):
    g = jax.jit(f)
    first = [np.asarray(g(*args)) for _ in range(3)]
  for r in first:
    _bits_equal(r, DATA["fused/c-a*b/out"])


@pytest.mark.parametrize("n", (10, 100, 1000))
def test_eager_mean_multiplies_by_the_reciprocal(n):
  x, want = DATA[f"mean/{n}/x"], DATA[f"mean/{n}/out"]
  _bits_equal(jnp.mean(jnp.asarray(x)), want)
  # The general path (a where mask) agrees with the cached plan.
  _bits_equal(jnp.mean(jnp.asarray(x), where=jnp.ones(n, bool)), want)


def test_the_printed_jaxpr_keeps_jax_s_operations():
  # The rewrites apply to the program a jit runs, never to what users see.
  text = str(jax.make_jaxpr(lambda a, b, c: (c - a * b, a / 3.0))(*[jnp.ones(3)] * 3))
  assert "mul" in text and "sub" in text and "div" in text and "xla_fma" not in text


def test_rewrite_contracts_single_use_products_only():
  def f(a, b, c):
    t = a * b
    return t + c, (a * c) * 2.0, c / 4.0
  closed = jax.make_jaxpr(f)(*[jnp.ones(3)] * 3)
  names = [e.primitive.name for e in _xla_rewrites.rewrite_jaxpr(closed.jaxpr, True).eqns]
  assert names.count("xla_fma") == 1          # t + c; (a*c)*2.0 feeds no sum
  assert names.count("div") == 0              # c / 4.0 -> c * 0.25
  plain = [e.primitive.name for e in _xla_rewrites.rewrite_jaxpr(closed.jaxpr).eqns]
  assert "xla_fma" not in plain and "div" not in plain


def test_fused_multiply_add_rounds_once():
  # 1 + 2**-24 is not a float32: a*b + c rounded twice loses the 2**-48 term.
  a = np.float32(1 + 2.0 ** -12)
  got = _xla_rewrites.fma_p.impl(a, a, np.float32(-1.0), negate_product=False,
                                 negate_addend=False)[0]
  assert got == np.float32(2.0 ** -11 + 2.0 ** -24)
  assert np.float32(a * a) - np.float32(1.0) != got


@pytest.mark.parametrize("shape,axes,ordered", [
    ((1000,), (0,), True), ((4095,), (0,), True), ((4096,), (0,), False),
    ((64, 64), (1,), False), ((40, 50), (0, 1), False), ((1, 300, 1), (0, 1, 2), True),
    ((0, 5), (0,), False), ((10,), (), False)])
def test_which_sums_follow_xla_s_order(shape, axes, ordered):
  assert (xo.sum_axis(shape, np.float32, axes) is not None) == ordered
  assert xo.sum_axis(shape, np.int32, axes) is None


def test_sums_xla_leaves_to_other_kernels_stay_close_to_numpy():
  rng = np.random.default_rng(0)
  for shape, axes in (((5000,), (0,)), ((40, 50), (0, 1))):
    x = rng.standard_normal(shape).astype(np.float32)
    for mode in MODES:
      got = _run(mode, lambda v: lax.reduce_sum(v, axes), jnp.asarray(x))
      np.testing.assert_allclose(got, x.astype(np.float64).sum(axis=axes), rtol=1e-5)


@pytest.mark.parametrize("n", (1, 2, 31, 32, 33, 1000))
def test_ordered_sum_edge_values(n):
  # -0.0 alone stays -0.0 (XLA drops the one-element reduce); sums start at +0.
  x = np.full(n, -0.0, np.float32)
  got = np.asarray(lax.reduce_sum(jnp.asarray(x), (0,)))
  assert np.signbit(got) == (n == 1)
  y = np.array([np.inf] + [1.0] * (n - 1), np.float32)
  for mode in MODES:
    assert np.asarray(_run(mode, lambda v: lax.reduce_sum(v, (0,)), jnp.asarray(y))) == np.inf
