"""Seed program 002, verbatim: the seed's code blocks (tests/data/seed_002_program.txt)
run unchanged with ``jax`` bound to openjax, and print what JAX 0.10.2 prints
(tests/data/seed_002_expected.txt, from tools/gen_seed_002_expected.py), less
the timing and device-list lines.

The text around the numbers must be JAX's exactly (same lines, same words,
same formatting up to NumPy's column padding); the numbers agree within
float32 tolerance: sums, products and a 100-step training loop reassociate
differently in NumPy, IREE and XLA:CPU (DESIGN decision 12), so their last
bits differ. The program runs under each executor: interpreted (the suite's
default) and compiled with tiered execution (users' default: the jitted
step's first calls interpreted while IREE compiles, later ones compiled)."""
import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
DROP = ("Training completed in", "Available devices:")

RUNNER = """
import sys
import openjax, openjax.numpy
sys.modules["jax"] = openjax
sys.modules["jax.numpy"] = openjax.numpy
with open(sys.argv[1]) as f:
  src = f.read()
exec(compile(src, "seed_002", "exec"), {"__name__": "__main__"})
"""

_NUMBER = re.compile(r"-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+\.(?!\d)|-?\d+")
# Relative agreement of every printed number with JAX's: float32 rounding
# accumulated over the training loop (measured: 2.6e-6 at most).
RTOL = 1e-5

EXECUTORS = {
    "interpreter": {"OPENJAX_EXECUTOR": "interpreter", "OPENJAX_TIERED_COMPILATION": "0"},
    "iree_tiered": {"OPENJAX_EXECUTOR": "iree", "OPENJAX_TIERED_COMPILATION": "1"},
}


def _run_seed(**env):
  proc = subprocess.run([sys.executable, "-c", RUNNER, os.path.join(DATA, "seed_002_program.txt")],
                        capture_output=True, text=True, timeout=600,
                        env={**os.environ, "PYTHONWARNINGS": "default", **env})
  assert proc.returncode == 0, proc.stderr[-3000:]
  got = "".join(l for l in proc.stdout.splitlines(keepends=True) if not l.startswith(DROP))
  with open(os.path.join(DATA, "seed_002_expected.txt")) as f:
    expected = f.read()
  return got, expected, proc.stderr


@pytest.fixture(scope="module", params=sorted(EXECUTORS))
def outputs(request):
  return _run_seed(**EXECUTORS[request.param])


def _split_numbers(line):
  # NumPy pads printed arrays to the widest number: compare text up to spacing
  text = re.sub(r"\s+", " ", _NUMBER.sub("#", line)).replace("[ ", "[").replace(" ]", "]")
  return text, _NUMBER.findall(line)


def _last_digit_unit(number: str) -> float:
  mantissa = number.split("e")[0]
  digits = len(mantissa.split(".")[1]) if "." in mantissa else 0
  exponent = int(number.split("e")[1]) if "e" in number else 0
  return 10.0 ** (exponent - digits)


def test_prints_what_jax_prints_within_float32_tolerance(outputs):
  got, expected, _ = outputs
  got_lines, exp_lines = got.splitlines(), expected.splitlines()
  assert len(got_lines) == len(exp_lines), got
  for g, e in zip(got_lines, exp_lines):
    g_text, g_nums = _split_numbers(g)
    e_text, e_nums = _split_numbers(e)
    assert g_text == e_text, (g, e)
    assert len(g_nums) == len(e_nums), (g, e)
    for a, b in zip(g_nums, e_nums):
      # JAX's value within RTOL, or a printed rounding that flipped the last digit
      tol = max(RTOL * abs(float(b)), _last_digit_unit(b))
      assert abs(float(a) - float(b)) <= tol, (g, e)


def test_number_parsing_rejects_other_values():
  # The comparison above would pass anything if the parsing lost the numbers.
  text, nums = _split_numbers("Learned weights: [ 1.2570468  -1.6951364   0.51987636]")
  assert text == "Learned weights: [# # #]" and nums == ["1.2570468", "-1.6951364", "0.51987636"]
  assert _last_digit_unit("0.652301") == pytest.approx(1e-6)
  assert _last_digit_unit("-2.") == 1.0 and _last_digit_unit("1.5e-05") == pytest.approx(1e-6)


def test_deprecated_tree_aliases_warn(outputs):
  _, _, stderr = outputs
  assert "jax.tree_leaves is deprecated" in stderr
  assert "jax.tree_map is deprecated" in stderr
