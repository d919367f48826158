"""igamma_grad_a and random_gamma_grad's eager kernels (gamma_kernels) run
their series and continued fraction in blocks of steps over all running
elements (running sums down (terms, elements) matrices, a stacked (4, n)
fraction state) and the Lanczos sums as matrices for a few elements. Each
element must still take JAX's operations one step at a time in its own
order: here a plain per-element loop of those steps, in the operands'
float32 / float64 scalars, is the oracle, bit for bit, on elements that stop
inside, at and past the blocks' edges, and a few and many elements at once
(the matrix and the row-at-a-time paths)."""
import math

import numpy as np
import pytest

from openjax import lax
from openjax._src.primitives.elementwise import gamma_kernels


def _series_loop(a, x, t):
  """JAX's series of P and its a-derivative, one element, in scalars of t."""
  one, eps = t(1), t(np.finfo(t).eps)
  r, c, ans, dc, dans = a, one, one, t(0), t(0)
  while True:
    r = r + one
    xr = x / r
    dc = dc * xr - (c * x) / (r * r)
    dans = dans + dc
    ans = c * xr + ans
    c = c * xr
    if not abs(dc / dans) > eps:
      return ans, dans


def _fraction_loop(a, x, t):
  """JAX's continued fraction of Q and its a-derivative, one element."""
  one, eps = t(1), t(np.finfo(t).eps)
  y = one - a
  z = (x + y) + one
  p2, q2, p1, q1 = one, x, x + one, z * x
  ans = p1 / q1
  dp2, dq2, dp1, dq1 = t(0), t(0), t(0), -x
  dans = (ans * x) / q1
  big = one / eps
  for step in range(1, gamma_kernels.MAX_CF_TERMS + 1):
    cc = t(step)
    y = y + one
    z = z + t(2)
    yc = y * cc
    pk = p1 * z - p2 * yc
    qk = q1 * z - q2 * yc
    dpk = ((dp1 * z - p1) - dp2 * yc) + p2 * cc
    dqk = ((dq1 * z - q1) - dq2 * yc) + q2 * cc
    if qk != 0:
      ans_new = pk / qk
      dans_new = (dpk - ans_new * dqk) / qk
      change = abs(dans_new - dans)
    else:
      ans_new, dans_new, change = ans, dans, one
    scale = eps if abs(pk) > big else one
    p2, p1, q2, q1 = p1 * scale, pk * scale, q1 * scale, qk * scale
    dp2, dp1, dq2, dq1 = dp1 * scale, dpk * scale, dq1 * scale, dqk * scale
    ans, dans = ans_new, dans_new
    if not change > eps:
      break
  return ans, dans


def _loops(a, x, enabled, use_cf, t):
  ans, dans = np.ones_like(a), np.zeros_like(a)
  for i in np.flatnonzero(enabled):
    loop = _fraction_loop if use_cf[i] else _series_loop
    ans[i], dans[i] = loop(t(a[i]), t(x[i]), t)
  return ans, dans


# a and x whose loops stop after 1 to ~150 steps: inside the first series
# block (24 or 12 terms), at its edges and after several blocks; the
# fraction after a few steps and past many 8-step blocks (a ~ x large).
_A = np.array([0.5, 1, 2.5, 3, 7.5, 9, 20, 40, 137.5, 138, 300, 0.05, 2, 11, 60, 500])
_X = np.array([0.1, 0.9, 2, 6.5, 7, 15, 21, 38, 136, 140, 310, 3, 30, 12, 64, 520])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("repeat", [1, 8])   # 16 elements: matrices; 128: rows
def test_blocked_loops_give_the_step_by_step_bits(dtype, repeat):
  a = np.tile(_A, repeat).astype(dtype)
  x = np.tile(_X, repeat).astype(dtype)
  o = gamma_kernels._OPS[np.dtype(dtype)]
  use_cf = (x > 1) & (x > a)
  with np.errstate(all="ignore"):
    for loop, enabled in ((gamma_kernels._series, ~use_cf),
                          (gamma_kernels._continued_fraction, use_cf)):
      got = loop(a, x, enabled, o)
      want = _loops(a, x, enabled, use_cf, dtype)
      for g, w in zip(got, want):   # (the others are not the loop's: callers drop them)
        np.testing.assert_array_equal(g[enabled].view(np.uint8), w[enabled].view(np.uint8),
                                      err_msg=loop.__name__)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_lanczos_matrix_and_term_paths_agree_bitwise(dtype):
  rng = np.random.default_rng(0)
  x = np.concatenate([rng.uniform(-20, 40, 40), [0.5, 1, 2, -0.5, -1.5, 1e-3, 1e4]]).astype(dtype)
  o = gamma_kernels._OPS[np.dtype(dtype)]
  assert x.size <= gamma_kernels._MATRIX_MAX < 20 * x.size
  with np.errstate(all="ignore"):
    for fn in (gamma_kernels.lgamma, gamma_kernels.digamma):
      few = fn(x, o)
      many = fn(np.tile(x, 20), o)[:x.size]
      np.testing.assert_array_equal(few.view(np.uint8), many.view(np.uint8), err_msg=fn.__name__)
  # and against the CHLO formula's sum written out term by term
  z = np.where(x < 0.5, -x, x - dtype(1))
  total = np.full_like(x, dtype(gamma_kernels.LANCZOS_BASE))
  for i, c in enumerate(gamma_kernels.LANCZOS):
    total = total + dtype(c) / (z + dtype(i + 1))
  with np.errstate(all="ignore"):
    np.testing.assert_array_equal(gamma_kernels._lanczos_sum(z, o), total)


def test_primitives_of_few_and_many_elements_agree_bitwise():
  # 12 elements (matrices), 600 (rows), 12000 (chunks of the rows)
  rng = np.random.default_rng(1)
  a = rng.uniform(0.5, 10, 12).astype(np.float32)
  x = rng.uniform(0.1, 15, 12).astype(np.float32)
  assert 12 * 50 < gamma_kernels._CHUNK < 12 * 1000
  for prim in (lax.igamma_grad_a, lax.random_gamma_grad):
    few = np.asarray(prim(a, x))
    for repeat in (50, 1000):
      many = np.asarray(prim(np.tile(a, repeat), np.tile(x, repeat))).reshape(repeat, 12)
      np.testing.assert_array_equal(many, np.broadcast_to(few, many.shape))
    assert np.all(np.isfinite(few)) and not math.isnan(float(few.sum()))
