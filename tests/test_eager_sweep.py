"""``benchmarks/eager_sweep.py``'s case building (not its timings): scaled
inputs keep matched dimensions matched, matrix rows get square and
vector-matrix cases, JAX's function is found by public name; flagged cases
are timed again, the floor is measured, an earlier run's rows can be swept
again."""
import importlib.util
import json
import pathlib

import numpy as np
import pytest

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


def test_a_flagged_case_is_timed_again_with_the_implementations_taking_turns(monkeypatch):
  # The first timing of openjax reads slow (a slow moment of the machine);
  # the confirming rounds, NumPy and openjax in turn, read it fast.
  (module, row), = eager_sweep.load_rows("jnp.add_float32")
  timings = {"numpy": iter([1e-6] + [1e-6] * 9), "openjax": iter([50e-6, 2e-6, 2e-6, 2e-6])}
  order = []

  def fake_best_time(call, budget, first):
    impl = "openjax" if "block_until_ready" in call.__code__.co_names else "numpy"
    order.append(impl)
    return next(timings[impl])

  monkeypatch.setattr(eager_sweep, "best_time", fake_best_time)
  results, _ = eager_sweep.sweep_row(module, row, [10], 1e-4, with_jax=False)
  assert results[0]["openjax_s"] == 2e-6 and results[0]["numpy_s"] == 1e-6
  assert not eager_sweep.is_slow(results[0])
  assert order == ["numpy", "openjax"] + ["numpy", "openjax"] * eager_sweep.CONFIRM_ROUNDS


def test_the_floor_is_measured_on_the_machine_and_recorded_per_case():
  entry, step = eager_sweep.measure_floor(budget=0.01)
  assert 0 < step < 50e-6 and 0 <= entry < 500e-6
  case = {"openjax_s": 30e-6, "numpy_s": 1e-6, "eqns": 10}
  assert eager_sweep.floor_s(case) == pytest.approx(eager_sweep.FLOOR_ENTRY_S
                                                    + 10 * eager_sweep.FLOOR_STEP_S)
  assert not eager_sweep.floor_bound(case)        # 9 us < the line (11 us)
  slow_machine = dict(case, floor_entry_s=4e-6, floor_step_s=1.5e-6)
  assert eager_sweep.floor_s(slow_machine) == pytest.approx(19e-6)
  assert eager_sweep.floor_bound(slow_machine)


def test_rows_from_an_earlier_run_sweeps_only_its_flagged_rows(tmp_path, capsys):
  earlier = [{"row": "jnp.add_float32", "module": "elementwise", "size": "10", "elements": 10,
              "openjax_s": 90e-6, "numpy_s": 1e-6},
             {"row": "jnp.subtract_float32", "module": "elementwise", "size": "10",
              "elements": 10, "openjax_s": 2e-6, "numpy_s": 1e-6}]
  path = tmp_path / "earlier.json"
  path.write_text(json.dumps(earlier))
  out = tmp_path / "now.json"
  eager_sweep.main(["--rows-from", str(path), "--sizes", "10",
                    "--budget", "1e-4", "--no-jax", "--json", str(out)])
  assert {r["row"] for r in json.loads(out.read_text())} == {"jnp.add_float32"}
  assert "eager floor on this machine" in capsys.readouterr().out


def test_constant_time_references_allow_a_microsecond_of_noise():
  def case(row, elements, numpy_s):
    return {"row": row, "elements": elements, "numpy_s": numpy_s}
  results = [case("view", 10, 0.3e-6), case("view", 10**6, 0.7e-6),
             case("work", 10, 1e-6), case("work", 10**6, 300e-6)]
  assert eager_sweep.constant_time_references(results) == {"view"}
