"""``benchmarks/eager_sweep.py``'s case building (not its timings): scaled
inputs keep matched dimensions matched, matrix rows get square and
vector-matrix cases, JAX's function is found by public name."""
import importlib.util
import pathlib

import numpy as np

import openjax
import openjax.numpy as jnp

_PATH = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "eager_sweep.py"
_spec = importlib.util.spec_from_file_location("eager_sweep", _PATH)
eager_sweep = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(eager_sweep)


def test_scaled_inputs_keep_matched_dimensions_and_values():
  rng = np.random.default_rng(0)
  a, b, bias = rng.random((3, 4)), rng.random((4, 5)), rng.random((1, 5))
  big_a, big_b, big_bias = eager_sweep.scaled((a, b, bias), 1000)
  assert big_a.shape[1] == big_b.shape[0]
  assert big_bias.shape == (1, big_b.shape[1])          # size-1 axes still broadcast
  assert 500 <= max(x.size for x in (big_a, big_b)) <= 2000
  np.testing.assert_array_equal(big_a[:3, :4], a)      # extended cyclically
  np.testing.assert_array_equal(big_a[3:6, :4], a)
  assert eager_sweep.scaled((a, b), 10) is None        # never smaller than the sample
  assert eager_sweep.scaled((np.float32(2.0),), 1000) is None


def test_matrix_rows_get_square_and_vector_cases():
  cases = dict()
  for label, args in eager_sweep.square_products((np.ones((3, 4)), np.ones((4, 5)))):
    cases.setdefault(label, []).append(tuple(a.shape for a in args))
  assert cases["8x8"] == [((8, 8), (8, 8))]
  assert cases["1024x1024"] == [((1024, 1024), (1024, 1024))]
  assert cases["vec256"] == [((256,), (256, 256)), ((1, 256), (256, 256))]
  assert eager_sweep.square_products((np.ones((3, 4)), np.ones((5, 4)))) == []


def test_jax_equivalent_is_found_by_public_name():
  assert eager_sweep.jax_equivalent(jnp.sin, openjax) is jnp.sin
  assert eager_sweep.jax_equivalent(openjax.lax.add, openjax) is openjax.lax.add
  assert eager_sweep.jax_equivalent(jnp.linalg.inv, openjax) is jnp.linalg.inv
  assert eager_sweep.jax_equivalent(lambda x: jnp.sin(x), openjax) is None


def test_a_row_is_timed_at_each_size_beside_numpy():
  (module, row), = eager_sweep.load_rows("jnp.add_float32")
  results, notes = eager_sweep.sweep_row(module, row, [10, 1e3], 1e-4, with_jax=False)
  assert notes == []
  assert [r["size"] for r in results] == ["10", "1e3"]
  assert results[1]["elements"] >= 500
  assert all(r["openjax_s"] > 0 and r["numpy_s"] > 0 for r in results)


def test_slow_threshold():
  assert eager_sweep.is_slow({"openjax_s": 40e-6, "numpy_s": 10e-6})
  assert not eager_sweep.is_slow({"openjax_s": 10e-6, "numpy_s": 1e-6})   # within 10 us
  assert not eager_sweep.is_slow({"openjax_s": 2.9e-3, "numpy_s": 1e-3})  # within 3x
