"""While a program compiles in the background, NumPy's OpenBLAS runs on one
core fewer (the compiler takes it): interpreted calls that keep every core
busy with products otherwise stretch the compile ~10x (blas_threads.py)."""
import numpy as np
import pytest

import openjax as jax
from openjax._src import blas_threads
from openjax._src.runtime import pipeline
from tests.test_pending_tier import held_compiles  # noqa: F401 - the fixture
from tests.test_tiered import tiered  # noqa: F401 - the fixture

_counts = blas_threads._numpy_openblas()
pytestmark = pytest.mark.skipif(_counts is None, reason="NumPy without OpenBLAS")


@pytest.fixture
def blas_at_four():
  get, put = _counts
  before = get()
  put(4)
  yield get
  put(before)


def test_leave_a_core_and_restore(blas_at_four):
  assert blas_threads.leave_a_core(3) == 4
  assert blas_at_four() == 2
  blas_threads.restore(4)
  assert blas_at_four() == 4


def test_nothing_changes_with_one_core_or_few_threads(blas_at_four):
  assert blas_threads.leave_a_core(1) is None
  assert blas_threads.leave_a_core(5) is None      # 4 threads <= 5 - 1 already
  assert blas_at_four() == 4
  blas_threads.restore(None)
  assert blas_at_four() == 4


def test_a_pending_compile_holds_a_core_until_it_is_done(held_compiles, blas_at_four,
                                                         monkeypatch):
  monkeypatch.setattr(pipeline, "host_cores", lambda: 3)

  def triple_minus_one(x):
    return x * 3.0 - 1.0
  f = jax.jit(triple_minus_one)
  x = np.arange(5, dtype=np.float32)
  np.testing.assert_array_equal(np.asarray(f(x)), x * 3 - 1)   # interpreted meanwhile
  assert blas_at_four() == 2
  held_compiles.set()
  assert pipeline.background.wait_idle(120)
  assert blas_at_four() == 4
  np.testing.assert_array_equal(np.asarray(f(x)), x * 3 - 1)
