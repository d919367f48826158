"""Eval kernels of elementwise primitives sped up in session 12 (issue 14's
eager sweep): ``pow`` of the constant 2 to integral exponents through
np.ldexp (jnp.ldexp's 2**e, slow in NumPy's pow where results overflow or
are subnormal), and complex ``atan2`` on the operands' real parts. Each
must give the bits (integral powers of two are exact) or the values within
tolerance of the general formula, edge values included."""
import ml_dtypes
import numpy as np
import pytest

import openjax.numpy as jnp
from openjax._src.primitives.elementwise import transcendental
from tests.test_eager_library_kernels import _lean_kernel, _same_bits

_BF16 = np.dtype(ml_dtypes.bfloat16)


def _integral_exponents(dt):
  """Every exponent from far below the subnormals to far past overflow,
  signed zeros and infinities, in ``dt``."""
  k = np.concatenate([np.arange(-1100, 1100), [-0.0, np.inf, -np.inf, 5000, -5000]])
  with np.errstate(over="ignore"):
    return k.astype(dt)


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(np.float32),
                                np.dtype(np.float64), _BF16], ids=str)
def test_pow_of_two_to_integral_exponents_gives_the_impl_bits(dt):
  y = _integral_exponents(dt)
  for x in (np.array(2, dt), np.broadcast_to(np.array(2, dt), y.shape)):
    kernel = _lean_kernel(transcendental.pow_p, [x, y])
    with np.errstate(all="ignore"):
      _same_bits(kernel(x, y), transcendental._pow_impl(x, y)[0])


@pytest.mark.parametrize("dt", [np.dtype(np.float32), _BF16], ids=str)
def test_pow_of_two_keeps_numpy_pow_for_other_operands(dt):
  # Non-integral or NaN exponents, a base that is not 2 everywhere, or one
  # that is 2 but not a constant: NumPy's pow, with the impl's bits.
  rng = np.random.default_rng(1)
  frac = (rng.standard_normal(300) * 50).astype(dt)
  ints = np.arange(-150, 150).astype(dt)
  nan_one = ints.copy()
  nan_one[7] = np.nan
  varied = np.full(ints.shape, 2, dt)
  varied[3] = 3
  with np.errstate(all="ignore"):
    for x, y in ((np.array(2, dt), frac), (np.array(2, dt), nan_one), (varied, ints),
                 (np.full(ints.shape, 2, dt), ints), (np.array(0.5, dt), ints)):
      kernel = _lean_kernel(transcendental.pow_p, [x, y])
      _same_bits(kernel(x, y), transcendental._pow_impl(x, y)[0])


def test_ldexp_overflow_and_subnormal_results_eagerly():
  x = np.resize(np.array([1, 1.5, 3, 0, -2.5, 1e-40], np.float32), 600)
  e = np.resize(np.array([200, -140, 128, 5, -149, 20], np.int32), 600)
  with np.errstate(all="ignore"):
    _same_bits(jnp.ldexp(jnp.asarray(x), jnp.asarray(e)), np.ldexp(x, e))
