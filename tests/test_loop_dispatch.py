"""Loops over small values compile to one IREE dispatch (the whole loop runs
as machine code, control/loop_dispatch.py); other loops keep the per-trip
lowering. Both must give the interpreter's results."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.config import config
from openjax._src.control import loop_dispatch


@pytest.fixture(autouse=True)
def compiled():
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


def _regions(f, *args) -> int:
  return jax.jit(f).lower(*args).as_text().count("flow.dispatch.region")


def _check(f, *args, rtol=1e-5):
  got = jax.jit(f)(*args)
  with config.override("openjax_executor", "interpreter"):
    expected = jax.jit(f)(*args)
  for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected),
                  strict=True):
    assert np.asarray(g).dtype == np.asarray(e).dtype
    # float16: IREE keeps x * a + b in float32 between the two ops (a few ulp).
    tol = 4e-3 if np.asarray(g).dtype == np.float16 else rtol
    np.testing.assert_allclose(np.asarray(g).astype(np.float64),
                               np.asarray(e).astype(np.float64), rtol=tol, atol=1e-5)


def test_scalar_fori_loop_is_one_dispatch():
  f = lambda x: lax.fori_loop(0, 10_000, lambda i, x: x * 0.999 + 0.5, x)
  assert _regions(f, np.float32(1)) == 1
  x = np.float32(1)
  for _ in range(10_000):
    x = np.float32(x * np.float32(0.999) + np.float32(0.5))
  # IREE contracts x * a + b into an FMA: last-bit differences only.
  np.testing.assert_allclose(float(jax.jit(f)(np.float32(1))), float(x), rtol=2e-6)


X4 = np.linspace(0.1, 0.9, 4).astype(np.float32)
X16 = np.linspace(0.1, 0.9, 16).astype(np.float32)
# The most elements a moving or combining op takes inside a dispatch loop:
# 16 with AVX-512, 8 with AVX2 (control/loop_dispatch.py).
N_FLAT = loop_dispatch.VECTOR_ELEMENTS
XFLAT = np.linspace(0.1, 0.9, N_FLAT).astype(np.float32)
M34 = np.linspace(-1, 1, 12).astype(np.float32).reshape(3, 4)

# name: (function, args, whether it runs as one dispatch)
CASES = {
    "while_traced_bound": (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 0.999 + 0.5, x),
                           (np.float32(1), np.int32(1000)), True),
    "while_cond_on_data": (lambda x: lax.while_loop(lambda c: jnp.max(c) < 100.,
                                                    lambda c: c * 1.5 + 0.1, x), (X4,), True),
    "while_reduce_in_body": (lambda x: lax.while_loop(
        lambda c: c[0] < 20, lambda c: (c[0] + 1, c[1] * 0.5 + jnp.sum(c[1]) * 0.01), (0, x)),
        (XFLAT,), True),
    "while_reduce_past_vector": (lambda x: lax.while_loop(
        lambda c: c[0] < 20, lambda c: (c[0] + 1, c[1] * 0.5 + jnp.sum(c[1]) * 0.01), (0, x)),
        (np.linspace(0.1, 0.9, 2 * N_FLAT).astype(np.float32),), False),
    "while_vmapped": (lambda lim: jax.vmap(lambda n: lax.while_loop(
        lambda c: c[1] < n, lambda c: (c[0] * 1.5, c[1] + 1), (jnp.float32(1.0), 0)))(lim),
        (np.array([0, 3, 17, 40], np.int32),), True),
    "while_dead_carry": (lambda x: lax.while_loop(
        lambda s: s[0] < 5, lambda s: (s[0] + 1, s[1] * 2, s[1] @ s[1]), (0, x, jnp.float32(0))),
        (X4,), True),
    "fori_unsigned": (lambda x: lax.fori_loop(
        0, 100, lambda i, c: (c * 1103515245 + 12345) ^ (c >> 3), x),
        (np.arange(4, dtype=np.uint32),), True),
    "fori_bool_and_float": (lambda x: lax.fori_loop(
        0, 5, lambda i, c: (c[0] ^ (c[1] > 2.0), c[1] * 1.3), (jnp.zeros(4, bool), x)),
        (X4,), True),
    "fori_argmax_iota": (lambda x: lax.fori_loop(0, 6, lambda i, c: c + (
        jnp.arange(4) == jnp.argmax(c)).astype(jnp.float32) * -0.3, x), (X4,), True),
    "fori_concatenate": (lambda x: lax.fori_loop(
        0, 7, lambda i, c: jnp.concatenate([c[1:], c[:1] + 1.0]), x), (X4,), True),
    "fori_transcendental": (lambda x: lax.fori_loop(0, 30, lambda i, c: (
        jnp.exp(-c) + jnp.log1p(c) * jnp.cos(c) + jnp.sqrt(c + 1) + jnp.arctan2(c, 1.0 + c)),
        x), (X4,), True),
    "fori_float16": (lambda x: lax.fori_loop(0, 9, lambda i, c: c * 1.01 + 0.1,
                                             x.astype(jnp.float16)), (X4,), True),
    "fori_int8": (lambda x: lax.fori_loop(0, 9, lambda i, c: c * 3 + 1, x.astype(jnp.int8)),
                  (X4 * 10,), True),
    "fori_over_constants_only": (lambda: lax.fori_loop(
        0, 6, lambda i, c: (c[0] * 2., c[1] + 1), (jnp.float32(1), jnp.zeros(6))), (), True),
    "scan_ys": (lambda x: lax.scan(lambda c, t: (jnp.tanh(c * 0.9 + t), jnp.sin(c)), x,
                                   jnp.arange(50.0).reshape(50, 1) * jnp.ones(4)), (X4,), True),
    "scan_reverse": (lambda x: lax.scan(lambda c, t: (c * 0.9 + t, c.sum()), x[0], x,
                                        reverse=True), (X4,), True),
    "scan_long_xs": (lambda x: lax.scan(lambda c, t: (c * 0.99 + t, c * 2), x[0],
                                        jnp.arange(1000.0)), (X4,), True),
    "scan_no_xs": (lambda: lax.scan(lambda c, _: (c * 2, c), jnp.int32(1), None, length=6),
                   (), True),
    "scan_uint8_ys": (lambda x: lax.scan(lambda c, t: (c + t, c), x,
                                         jnp.arange(10, dtype=jnp.uint8)), (np.uint8(3),), True),
    "while_empty_carry": (lambda x: lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)),
        (np.zeros(0, np.float32),), True),
    "scan_16kb_xs_ys": (lambda x: lax.scan(lambda c, t: (c * 0.99 + t, c * 2), x[0],
                                           jnp.arange(2000.0)), (X4,), True),
    # A while loop's guarded steps do not fuse: elementwise bodies over up to
    # 4 KB values run faster in one dispatch (four 4 KB carries: 16 KB).
    "while_elementwise_4kb": (lambda x, n: lax.while_loop(lambda c: c[0] < n, lambda c: (
        c[0] + 1, jnp.tanh(c[1] + c[2]) + jnp.sin(c[3] * c[1]), c[1] * 0.5, c[2] - c[3]),
        (0, x, x * 0.5, x * 0.25)), (np.linspace(0.1, 0.9, 1024, dtype=np.float32),
                                     np.int32(50)), True),
    "while_reduce_64": (lambda x: lax.while_loop(lambda c: jnp.sum(c) < 1e4,
                                                 lambda c: c * 1.5 + 0.1, x),
                        (np.ones(64, np.float32),), False),
    # Reductions: at most N_FLAT elements, whatever their size.
    "while_vmapped_flat_int8": (lambda lim: jax.vmap(lambda n: lax.while_loop(
        lambda c: c < n, lambda c: c + jnp.int8(1), jnp.int8(0)))(lim),
        (np.arange(N_FLAT, dtype=np.int8),), True),
    "while_vmapped_past_vector_int8": (lambda lim: jax.vmap(lambda n: lax.while_loop(
        lambda c: c < n, lambda c: c + jnp.int8(1), jnp.int8(0)))(lim),
        (np.arange(2 * N_FLAT, dtype=np.int8),), False),
    "while_vmapped_64_int8": (lambda lim: jax.vmap(lambda n: lax.while_loop(
        lambda c: c < n, lambda c: c + jnp.int8(1), jnp.int8(0)))(lim),
        (np.arange(64, dtype=np.int8) % 20,), False),
    "while_large_carry": (lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (
        c[0] + 1, c[1] * 1.01), (0, x)), (np.ones(8192, np.float32),), False),
    # Values with two axes: elementwise bodies only.
    "fori_elementwise_2d": (lambda m: lax.fori_loop(
        0, 9, lambda i, c: jnp.where(c > 0.5, jnp.tanh(c), -c * 1.1) + i, m), (M34,), True),
    "fori_reduce_2d": (lambda m: lax.fori_loop(0, 4, lambda i, c: (
        c * 0.5 + jnp.prod(c, axis=0) + jnp.min(c, axis=1, keepdims=True)), m), (M34,), False),
    "fori_matmul_2d": (lambda m: lax.fori_loop(0, 10, lambda i, c: jnp.tanh(c @ m.T @ m * 0.3),
                                               m), (M34,), False),
    # Past one vector register the per-trip lowering is faster (its unrolled
    # steps fuse into vectorised dispatches).
    "fori_reduce_64": (lambda x: lax.fori_loop(0, 9, lambda i, c: c * 0.5 + jnp.sum(c) * 0.01,
                                               x), (np.ones(64, np.float32),), False),
    "fori_elementwise_32": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 1.01, x),
                            (np.ones(32, np.float32),), False),
    # Stacked inputs and outputs past the dispatch's stack (32 KB).
    "scan_64kb_xs_ys": (lambda x: lax.scan(lambda c, t: (c * 0.99 + t, c * 2), x,
                                           jnp.ones((1000, 16))), (X16,), False),
    "fori_pad_rev": (lambda x: lax.fori_loop(0, 3, lambda i, c: lax.pad(
        c[::-1], 0.0, [(0, 0, 0)])[:4] + 1, x), (X4,), False),
    "fori_dynamic_update_slice": (lambda x: lax.fori_loop(0, 3, lambda i, c: (
        lax.dynamic_update_slice(c * 0.9, c[:1] * 1.1, (2,))), x), (X4,), False),
    # Nested loops, conds and called functions run inside the one dispatch.
    "nested_loops": (lambda x: lax.fori_loop(0, 3, lambda i, c: lax.fori_loop(
        0, 4, lambda j, d: d * 1.1 + j + i, c) * 0.5, x), (X4,), True),
    "while_in_scan": (lambda x: lax.scan(lambda c, t: (lax.while_loop(
        lambda d: d[0] < t, lambda d: (d[0] + 1, d[1] * 1.01), (0, c))[1], c.sum()), x,
        jnp.arange(5)), (X4,), True),
    "vmapped_while_in_fori": (lambda lim: lax.fori_loop(0, 3, lambda i, c: c + jax.vmap(
        lambda n: lax.while_loop(lambda d: d[1] < n + i, lambda d: (d[0] * 1.5, d[1] + 1),
                                 (jnp.float32(1.0), 0))[0])(lim), jnp.zeros(4)),
        (np.array([0, 3, 17, 40], np.int32),), True),
    "scan_with_ys_in_while": (lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (
        c[0] + 1, lax.scan(lambda d, t: (d + t, d + t), 0.0, c[1])[1] * 0.5), (0, x))[1],
        (X4,), True),
    "cond_in_while": (lambda x: lax.while_loop(lambda c: c[0] < 30, lambda c: (
        c[0] + 1, lax.cond(c[0] % 3 == 0, lambda v: v * 2.0, lambda v: v - 1.0, c[1])),
        (0, x))[1], (X4,), True),
    "cond_in_fori_2d": (lambda m: lax.fori_loop(0, 6, lambda i, c: lax.cond(
        i > 2, lambda c: c + 1, lambda c: c * 0.5, c), m), (M34,), True),
    "calls_in_fori": (lambda x: lax.fori_loop(0, 6, lambda i, c: jnp.clip(
        jax.nn.relu(c - 0.3) * 1.7, 0., 2.) + c // (i + 1), x), (X4,), True),
    # The outer scan reads (5, 4) slices: per trip, each inner loop one dispatch.
    "scan_in_scan": (lambda x: lax.scan(lambda c, t: (lax.scan(
        lambda d, u: (d * 0.9 + u, d), c, t)[0], c[0]), x, jnp.ones((3, 5, 4))), (X4,), True),
}


@pytest.mark.parametrize("name", list(CASES))
def test_loop_matches_the_interpreter(name):
  f, args, one_dispatch = CASES[name]
  assert (_regions(f, *args) > 0) == one_dispatch
  _check(f, *args)


def test_effects_keep_the_per_trip_lowering(capfd):
  def f(x):
    def body(i, c):
      jax.debug.print("step {i}", i=i)
      return c * 2.0
    return lax.fori_loop(0, 3, body, x)
  assert _regions(f, np.float32(1)) == 0
  assert float(jax.jit(f)(np.float32(1))) == 8.0
  jax.effects_barrier()
  assert capfd.readouterr().out.count("step") == 3


def test_x64_loop():
  with config.override("jax_enable_x64", True):
    f = lambda x: lax.fori_loop(0, 100, lambda i, c: c * 1.0001 + jnp.exp(-i / 50.0), x)
    assert _regions(f, np.float64(1)) == 1
    got = jax.jit(f)(np.float64(1))
    assert got.dtype == np.float64
    x = 1.0
    for i in range(100):
      x = x * 1.0001 + np.exp(-i / 50.0)
    np.testing.assert_allclose(float(got), x, rtol=1e-12)


F4 = np.array([0.3, 0.5, 0.7, 0.9], np.float32)
I4 = np.array([3, 5, 7, 9], np.int32)
# One body per allowed primitive family, each iterated inside its own loop.
BODIES = [
    (lambda c: jnp.abs(c - 0.6) + 0.1, F4),
    (lambda c: (jnp.ceil(c * 3) + jnp.floor(c * 2) + jnp.round(c * 5.3)) * 0.1, F4),
    (lambda c: lax.clamp(0.2, c * 1.3, 0.95), F4),
    (lambda c: lax.clz(c) + lax.population_count(c) + c // 2 + lax.rem(c * 7, 5), I4),
    (lambda c: lax.shift_right_arithmetic(c * 3, 1) + (c << 1) - (c >> 2) ^ c, I4),
    (lambda c: c / 1.1 + c ** 3 * 0.5 + c ** 0.7 * 0.1 + jnp.square(c) * 0.1, F4),
    (lambda c: jnp.where(jnp.isfinite(c / (c - 0.5)), lax.nextafter(c, c + 1), c), F4),
    (lambda c: lax.rem(c * 7.3, 1.3) + jnp.sign(c - 0.6) * 0.1, F4),
    (lambda c: lax.bitcast_convert_type(lax.bitcast_convert_type(c, jnp.int32) + 1,
                                        jnp.float32), F4),
    (lambda c: (jnp.arccos(c * 0.9) + jnp.arcsin(c * 0.9) + jnp.arctan(c)) * 0.3, F4),
    (lambda c: (jnp.arccosh(c + 1.5) + jnp.arcsinh(c) + jnp.arctanh(c * 0.9)) * 0.3, F4),
    # Scaled to contract (x 0.2 expands: tan's slope takes a 1-ulp difference
    # to 4e-5 in 7 trips, float32 against float64 alike).
    (lambda c: (jnp.cbrt(c) + jnp.cosh(c) + jnp.sinh(c) + jnp.tan(c) + jnp.sin(c)) * 0.1, F4),
    (lambda c: (lax.erf(c) + lax.erfc(c) + lax.erf_inv(c * 0.9)) * 0.3, F4),
    (lambda c: (jnp.exp2(c) + jnp.expm1(c) + jnp.log(c + 1) + jnp.sqrt(c)) * 0.2, F4),
    (lambda c: (jax.nn.sigmoid(c) + lax.rsqrt(c + 1) + jnp.tanh(c)) * 0.4, F4),
    (lambda c: (c * 10).astype(jnp.int32).astype(jnp.float32) * 0.1 + 0.05, F4),
    (lambda c: jnp.where((c > 0.5) & ~(c > 0.8) | (c < 0.1), c * 1.1, c * 0.9), F4),
    (lambda c: jnp.maximum(jnp.minimum(c * 1.2, 0.9), 0.2) + jnp.arange(4) * 0.01, F4),
    (lambda c: c * 0.9 + jnp.prod(c) * 0.1 + jnp.all(c > 0.1) * 0.01 + jnp.max(c) * 0.1, F4),
    (lambda c: c + 0.1 * (jnp.arange(4) == jnp.argmin(c)) + jnp.dot(c, c) * 0.01, F4),
    (lambda c: jnp.concatenate([c[1:], c[:1]]) * 0.9 + c[2] * 0.1, F4),
]


def test_every_allowed_primitive_compiles_in_one_dispatch():
  def f(*xs):
    return [lax.fori_loop(0, 7, lambda i, c, body=body: body(c), x)
            for (body, _), x in zip(BODIES, xs)]
  args = [x for _, x in BODIES]
  assert _regions(f, *args) == len(BODIES)
  _check(f, *args, rtol=2e-5)
