"""``lax.rem`` of integers by one divisor: when every |x| < |y| the
remainder is x itself, returned without NumPy's integer fmod (two
reductions decide it, from ``_REM_RANGE_MIN`` elements); the values are
C's remainder in every case (NumPy's fmod as the oracle)."""
import numpy as np
import pytest

import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.elementwise import arithmetic

N = arithmetic._REM_RANGE_MIN + 3


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.uint8, np.uint16, np.uint32])
def test_rem_by_one_divisor_matches_fmod(dt):
  rng = np.random.default_rng(0)
  info = np.iinfo(dt)
  divisors = [1, 3, 100, int(info.max)] + ([-3, int(info.min)] if info.min < 0 else [7])
  for d in divisors:
    ad = abs(d)
    for lo, hi in ((max(-ad + 1, int(info.min)), min(ad, int(info.max) + 1)),
                   (int(info.min), int(info.max) + 1)):
      x = rng.integers(lo, hi, N, dtype=np.int64).astype(dt)
      y = np.array(d).astype(dt)
      with np.errstate(all="ignore"):
        want = np.fmod(x, y)
      got = lax.rem(jnp.asarray(x), jnp.asarray(y))
      assert got.dtype == dt
      np.testing.assert_array_equal(np.asarray(got), want)


def test_in_range_remainders_skip_fmod(monkeypatch):
  x = np.arange(-50, 50, dtype=np.int32).repeat(N // 100 + 1)
  calls = []
  real = np.fmod
  monkeypatch.setattr(np, "fmod", lambda *a, **k: calls.append(1) or real(*a, **k))
  out = arithmetic._rem(x, np.array(51, np.int32))
  assert calls == [] and out is not x
  np.testing.assert_array_equal(out, x)
  arithmetic._rem(x, np.array(50, np.int32))   # -50 is not inside (-50, 50)
  assert calls == [1]
