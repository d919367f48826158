"""``benchmarks/time_to_speed.py``: its cases are jaxbench's jitted ones; the
analysis of a call trace finds the call at compiled speed (after the switch,
or before it only when every call up to the switch is that fast); and a real
tiered run of ``while_loop`` in a fresh process interprets its first call,
switches once the background compile is done, and reports numbers that agree
with its own trace."""
import argparse
import importlib.util
import os
import pathlib
import statistics
import sys

import pytest

_REPO = pathlib.Path(__file__).resolve().parents[1]
_DIR = _REPO / "benchmarks"
sys.path.insert(0, str(_DIR))
_spec = importlib.util.spec_from_file_location("time_to_speed", _DIR / "time_to_speed.py")
time_to_speed = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(time_to_speed)


def test_the_cases_are_jaxbench_jitted_programs():
  jaxbench = time_to_speed.jaxbench
  for key in time_to_speed.CASES:
    name = key.partition("/")[0]
    assert "jax" in jaxbench.REGISTRY[name]["impl"], key
  assert "eager_op" not in time_to_speed.CASES   # no jit: nothing to reach


def _trace(durations):
  """Back-to-back calls of these durations from t0 = 0."""
  calls, t = [], 0.0
  for d in durations:
    calls.append((t, d))
    t += d
  return calls


def test_speed_after_the_switch_and_the_work_lost():
  # 3 interpreted calls of 0.1 s, the switch call loads the executable (0.05),
  # then compiled calls of 0.01
  calls = _trace([0.5, 0.1, 0.1, 0.1, 0.05, 0.01, 0.01])
  r = time_to_speed.analyse(calls, 4, 0.01)
  assert r["first_s"] == 0.5 and r["switch"] == 4
  assert r["switch_s"] == pytest.approx(0.85)
  assert r["speed_call"] == 5 and r["to_speed_s"] == pytest.approx(0.86)
  assert r["lost_s"] == pytest.approx(0.86 - 6 * 0.01)
  assert r["lost_calls"] == pytest.approx(r["lost_s"] / 0.01)


def test_an_interpreter_at_compiled_speed_reaches_it_before_the_switch():
  calls = _trace([0.5, 0.012, 0.011, 0.012, 0.05, 0.01])
  r = time_to_speed.analyse(calls, 4, 0.01)
  assert r["speed_call"] == 1 and r["to_speed_s"] == pytest.approx(0.512)


def test_one_fast_interpreted_call_does_not_count():
  calls = _trace([0.5, 0.1, 0.01, 0.1, 0.1, 0.01, 0.01])
  assert time_to_speed.analyse(calls, 5, 0.01)["speed_call"] == 5


def test_without_a_switch_every_later_call_must_be_at_speed():
  calls = _trace([0.5, 0.01, 0.1, 0.01, 0.01])
  r = time_to_speed.analyse(calls, None, 0.01)
  assert r["speed_call"] == 3 and r["switch_s"] is None
  never = time_to_speed.analyse(_trace([0.5, 0.1, 0.1]), None, 0.01)
  assert never["speed_call"] is None and never["to_speed_s"] is None


def test_a_tiered_run_in_a_fresh_process(monkeypatch):
  # the child imports this checkout's openjax; checks off for the timing
  monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
      p for p in (str(_REPO), os.environ.get("PYTHONPATH")) if p))
  monkeypatch.setenv("JAX_ENABLE_CHECKS", "0")
  args = argparse.Namespace(limit=60.0, steady=5, factor=1.5, slack_us=10.0)
  r = time_to_speed.run_case("openjax tiered", "while_loop", args)
  assert "error" not in r, r.get("error")
  calls = r["trace"]
  assert len(calls) == r["n_calls"] <= time_to_speed.TRACE_KEEP
  for (s0, d0), (s1, _) in zip(calls, calls[1:]):   # back to back, in order
    assert s1 >= s0 + d0
  # the first call traces and submits the compile, so it is interpreted; the
  # switch comes after it, and AFTER calls are recorded from the switch on
  assert r["switch"] >= 1 and r["n_calls"] == r["switch"] + time_to_speed.AFTER
  assert 0 < r["steady_s"] < r["first_s"]
  # the switch is where the tier changes: 10k interpreted loop trips take
  # milliseconds, the compiled loop tens of microseconds; a switch detected
  # too early or too late puts calls of the other tier on the wrong side
  steady, switch = r["steady_s"], r["switch"]
  assert all(d > 10 * steady for _, d in calls[:switch])
  assert statistics.median(d for _, d in calls[switch + 1:]) <= 1.5 * steady + 10e-6
  assert r["speed_call"] is not None
  assert r["to_speed_s"] >= r["first_s"]
  s, d = calls[r["speed_call"]]
  assert r["to_speed_s"] == pytest.approx(s + d)
  assert d <= 1.5 * r["steady_s"] + 10e-6
  assert r["lost_s"] == pytest.approx(r["to_speed_s"] - (r["speed_call"] + 1) * r["steady_s"])
  assert r["switch_s"] == pytest.approx(sum(calls[r["switch"]]))
