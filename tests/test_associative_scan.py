"""lax.associative_scan: prefix scans against NumPy and Python loops, reverse,
axis, pytrees, jit (interpreted and IREE-compiled), vmap, gradients, JAX's
errors, the O(log n) depth and the printed jaxpr against JAX 0.10.2's."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.test_util import check_grads


def recurrence(x, y):
  # h_t = a_t * h_{t-1} + b_t as composition of affine maps: associative.
  (a1, b1), (a2, b2) = x, y
  return a1 * a2, a2 * b1 + b2


def recurrence_loop(a, b, axis=0):
  a, b = np.moveaxis(a, axis, 0), np.moveaxis(b, axis, 0)
  h, out = np.zeros(a.shape[1:], a.dtype), []
  for t in range(a.shape[0]):
    h = a[t] * h + b[t]
    out.append(h)
  return np.moveaxis(np.stack(out), 0, axis)


def matmul_2x2(a, b):
  a00, a01, a10, a11 = a
  b00, b01, b10, b11 = b
  return (a00 * b00 + a01 * b10, a00 * b01 + a01 * b11,
          a10 * b00 + a11 * b10, a10 * b01 + a11 * b11)


def _normal(shape, seed=0):
  return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 9, 17])
def test_cumulative_ops_match_numpy(n):
  x = _normal((n, 3), n)
  np.testing.assert_allclose(lax.associative_scan(lax.add, x), np.cumsum(x, 0), rtol=1e-5,
                             atol=1e-6)
  np.testing.assert_allclose(lax.associative_scan(jnp.multiply, x), np.cumprod(x, 0),
                             rtol=1e-5)
  np.testing.assert_array_equal(lax.associative_scan(lax.max, x), np.maximum.accumulate(x, 0))
  i = np.random.default_rng(n).integers(-3, 4, (n,)).astype(np.int32)
  out = lax.associative_scan(lax.mul, i)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(out, np.cumprod(i, dtype=np.int32))
  b = np.random.default_rng(n).random(n) < 0.3
  np.testing.assert_array_equal(lax.associative_scan(lax.bitwise_or, b),
                                np.logical_or.accumulate(b))


def test_linear_recurrence_reverse_and_axis():
  a = np.random.default_rng(1).uniform(0.5, 1.0, (4, 11, 2)).astype(np.float32)
  b = _normal((4, 11, 2), 2)
  for axis in (1, -2):
    _, h = lax.associative_scan(recurrence, (a, b), axis=axis)
    np.testing.assert_allclose(h, recurrence_loop(a, b, 1), rtol=1e-5, atol=1e-6)
  _, h = lax.associative_scan(recurrence, (a, b), reverse=True, axis=1)
  want = np.flip(recurrence_loop(np.flip(a, 1), np.flip(b, 1), 1), 1)
  np.testing.assert_allclose(h, want, rtol=1e-5, atol=1e-6)
  x = _normal((3, 5), 3)
  np.testing.assert_allclose(lax.associative_scan(lax.add, x, reverse=True, axis=1),
                             np.flip(np.cumsum(np.flip(x, 1), 1), 1), rtol=1e-5, atol=1e-6)


def test_noncommutative_scan_is_in_order():
  mats = np.random.default_rng(4).integers(-9, 10, (13, 2, 2)).astype(np.int32)
  out = lax.associative_scan(matmul_2x2, tuple(mats[:, i, j] for i in (0, 1) for j in (0, 1)))
  acc = np.eye(2, dtype=np.int32)
  for k in range(13):
    acc = acc @ mats[k]
    np.testing.assert_array_equal([int(o[k]) for o in out], acc.reshape(-1))


def test_pytrees():
  x, y = _normal((6,), 5), _normal((6,), 6)
  out = lax.associative_scan(lambda p, q: {"s": p["s"] + q["s"], "m": lax.max(p["m"], q["m"])},
                             {"s": x, "m": y})
  assert set(out) == {"m", "s"}
  np.testing.assert_allclose(out["s"], np.cumsum(x), rtol=1e-5, atol=1e-6)
  np.testing.assert_array_equal(out["m"], np.maximum.accumulate(y))


def test_depth_is_logarithmic():
  calls = []

  def add(a, b):
    calls.append(a.shape)
    return a + b

  x = np.ones(1000, np.float32)
  np.testing.assert_array_equal(lax.associative_scan(add, x), np.arange(1, 1001))
  assert len(calls) <= 2 * 10


def test_jit_vmap_grad():
  a = np.random.default_rng(7).uniform(0.5, 1.0, (3, 9)).astype(np.float32)
  b = _normal((3, 9), 8)

  def scan_h(a, b):
    return lax.associative_scan(recurrence, (a, b), axis=-1)[1]

  want = recurrence_loop(a, b, 1)
  np.testing.assert_allclose(jax.jit(scan_h)(a, b), want, rtol=1e-5, atol=1e-6)
  compiled = jax.jit(scan_h).lower(a, b).compile()(a, b)
  np.testing.assert_allclose(compiled, want, rtol=1e-5, atol=1e-6)
  for axis in (0, 1):
    got = jax.vmap(lambda a, b: lax.associative_scan(recurrence, (a, b))[1],
                   in_axes=axis)(a, b)
    rows = [recurrence_loop(np.take(a, k, axis), np.take(b, k, axis))
            for k in range(a.shape[axis])]
    np.testing.assert_allclose(got, np.stack(rows), rtol=1e-5, atol=1e-6)
  with jax.enable_x64():
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    check_grads(scan_h, (a64, b64), order=2, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    check_grads(lambda x: lax.associative_scan(lax.max, x, reverse=True, axis=1), (b64,),
                order=1, modes=("fwd", "rev"), atol=1e-6, rtol=1e-6)
    g = jax.grad(lambda b: scan_h(a64, b).sum())(b64)
    np.testing.assert_allclose(g[:, -1], 1.)


def test_errors():
  with pytest.raises(ValueError, match=r"Array inputs to associative_scan must have the same "
                                       r"first dimension. \(saw: \[\(3,\), \(4,\)\]\)"):
    lax.associative_scan(lax.add, (jnp.ones(3), jnp.ones(4)))
  with pytest.raises(TypeError, match="lax.associative_scan: fn argument should be callable."):
    lax.associative_scan(3, jnp.ones(3))
  with pytest.raises(ValueError, match="axis 2 is out of bounds for array of dimension 1"):
    lax.associative_scan(lax.add, jnp.ones(3), axis=2)


GOLDEN = {
    "associative_scan": """\
{ lambda ; a:f32[3,4]. let
    b:f32[3,2] = slice[limit_indices=(3, 3) start_indices=(0, 0) strides=(1, 2)] a
    c:f32[3,2] = slice[limit_indices=(3, 4) start_indices=(0, 1) strides=(1, 2)] a
    d:f32[3,2] = add b c
    e:f32[3,1] = slice[limit_indices=(3, 1) start_indices=(0, 0) strides=(1, 2)] d
    f:f32[3,1] = slice[limit_indices=(3, 2) start_indices=(0, 1) strides=(1, 2)] d
    g:f32[3,1] = add e f
    h:f32[3,0] = slice[limit_indices=(3, 0) start_indices=(0, 0) strides=(1, 1)] g
    i:f32[3,0] = slice[limit_indices=(3, 2) start_indices=(0, 2) strides=(1, 2)] d
    j:f32[3,0] = add h i
    k:f32[3,1] = slice[limit_indices=(3, 1) start_indices=(0, 0) strides=(1, 1)] d
    l:f32[3,1] = concatenate[dimension=1] k j
    m:f32[3,2] = pad[padding_config=((0, 0, 0), (0, 1, 1))] l 0.0:f32[]
    n:f32[3,2] = pad[padding_config=((0, 0, 0), (1, 0, 1))] g 0.0:f32[]
    o:f32[3,2] = add m n
    p:f32[3,1] = slice[limit_indices=(3, 1) start_indices=(0, 0) strides=(1, 1)] o
    q:f32[3,1] = slice[limit_indices=(3, 4) start_indices=(0, 2) strides=(1, 2)] a
    r:f32[3,1] = add p q
    s:f32[3,1] = slice[limit_indices=(3, 1) start_indices=(0, 0) strides=(1, 1)] a
    t:f32[3,2] = concatenate[dimension=1] s r
    u:f32[3,4] = pad[padding_config=((0, 0, 0), (0, 1, 1))] t 0.0:f32[]
    v:f32[3,4] = pad[padding_config=((0, 0, 0), (1, 0, 1))] o 0.0:f32[]
    w:f32[3,4] = add u v
  in (w,) }""",
}


def test_printed_jaxpr_matches_jax():
  jaxpr = jax.make_jaxpr(lambda x: lax.associative_scan(lax.add, x, axis=1))(
      np.zeros((3, 4), np.float32))
  assert str(jaxpr) == GOLDEN["associative_scan"]
