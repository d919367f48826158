"""The eager indexing front end (issue 14's eager sweep): Arrays made from
host values share their aval objects (the eval trace's recent plans match
operands by aval identity); gathers of whole slices at point indices
(``jnp.median(x, axis, keepdims=True)``) run an eval kernel bit-identical to
the impl; ``x.at[]`` updates decide once per signature what depends on it."""
import numpy as np

import openjax.numpy as jnp
from openjax._src.core import eval_trace
from openjax._src.core.avals import shaped_array


def test_asarray_of_host_values_shares_the_aval_of_its_type():
  a = np.arange(10, dtype=np.float32)
  x, y = jnp.asarray(a), jnp.asarray(a[::-1].copy())
  assert x.aval is y.aval is shaped_array((10,), np.dtype(np.float32), False)
  assert jnp.asarray(np.arange(3, dtype=np.int32)).aval is not jnp.asarray(
      np.arange(3, dtype=np.float32)).aval
  weak = jnp.asarray(2.0)
  assert weak.weak_type and weak.aval is shaped_array((), np.dtype(np.float32), True)
  assert jnp.array(2.0, dtype=jnp.float32).aval is shaped_array((), np.dtype(np.float32), False)


def test_asarray_then_an_operation_reuses_the_recent_plan():
  a = np.arange(10, dtype=np.float32)
  jnp.asarray(a) + 1
  eval_trace._plans.clear()   # a second call that misses the recent plan would make one
  out = jnp.asarray(a) + 1
  assert not eval_trace._plans
  np.testing.assert_array_equal(np.asarray(out), a + 1)
