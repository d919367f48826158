"""Bugs tests/fuzz_jnp.py found, each pinned by a direct test."""
import numpy as np

import openjax as jax
import openjax.numpy as jnp


def test_gcd_lcm_of_int_min_terminate_and_match_numpy():
  # jnp.gcd(int8(-128), int8(-14)) looped forever (abs(INT_MIN) is INT_MIN).
  a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
  np.testing.assert_array_equal(np.asarray(jnp.gcd(a, b)), np.gcd(a, b))
  np.testing.assert_array_equal(np.asarray(jax.jit(jnp.gcd)(a, b)), np.gcd(a, b))
  np.testing.assert_array_equal(np.asarray(jnp.lcm(a, b)), np.lcm(a, b))
  x = np.array([-2 ** 31, 12, 0, -7], np.int32)
  y = np.array([6, -2 ** 31, -2 ** 31, 0], np.int32)
  np.testing.assert_array_equal(np.asarray(jnp.gcd(x, y)), np.gcd(x, y))
  assert jnp.gcd(np.int8(-128), np.int8(-14)).dtype == np.int8


def test_gcd_unsigned_and_weak():
  assert int(jnp.gcd(np.uint8(200), np.uint8(150))) == 50
  out = jnp.gcd(12, 18)
  assert int(out) == 6 and out.dtype == jnp.int32
