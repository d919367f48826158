"""Seed program 002, verbatim: the seed's code blocks (tests/data/seed_002_program.txt)
run unchanged with ``jax`` bound to openjax, and print exactly what JAX 0.10.2
prints (tests/data/seed_002_expected.txt, from tools/gen_seed_002_expected.py),
less the timing and device-list lines.

Exact text needs JAX's bits throughout: the random draws, XLA:CPU's summation
orders (the 1000-element means, the fused multiply-add chains of ``X @ w``
and of the weight gradient's ``g @ X``), the jitted step's fused
multiply-adds and its division by a literal (``_xla_orders``,
``_xla_rewrites``). The runner inherits the suite's executor settings; the
tests below also run it compiled with tiered execution, as users get it."""
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


def _run_seed(**env):
  proc = subprocess.run([sys.executable, "-c", RUNNER, os.path.join(DATA, "seed_002_program.txt")],
                        capture_output=True, text=True, timeout=600,
                        env={**os.environ, "PYTHONWARNINGS": "default", **env})
  assert proc.returncode == 0, proc.stderr[-3000:]
  got = "".join(l for l in proc.stdout.splitlines(keepends=True) if not l.startswith(DROP))
  with open(os.path.join(DATA, "seed_002_expected.txt")) as f:
    expected = f.read()
  return got, expected, proc.stderr


@pytest.fixture(scope="module")
def outputs():
  return _run_seed()


def _split_numbers(line):
  # NumPy pads printed arrays to the widest number: compare text up to spacing
  text = re.sub(r"\s+", " ", _NUMBER.sub("#", line)).replace("[ ", "[").replace(" ]", "]")
  return text, [float(x) for x in _NUMBER.findall(line)]


def test_prints_what_jax_prints_to_float32_precision(outputs):
  got, expected, _ = outputs
  got_lines, exp_lines = got.splitlines(), expected.splitlines()
  assert len(got_lines) == len(exp_lines), got
  for g, e in zip(got_lines, exp_lines):
    g_text, g_nums = _split_numbers(g)
    e_text, e_nums = _split_numbers(e)
    assert g_text == e_text, (g, e)
    assert len(g_nums) == len(e_nums), (g, e)
    for a, b in zip(g_nums, e_nums):
      # a unit of the last printed digit, or float32 rounding of the value
      digits = len(str(b).split(".")[1]) if "." in str(b) else 0
      assert abs(a - b) <= max(10.0 ** -digits, 4e-6 * abs(b)), (g, e)


def test_deprecated_tree_aliases_warn(outputs):
  _, _, stderr = outputs
  assert "jax.tree_leaves is deprecated" in stderr
  assert "jax.tree_map is deprecated" in stderr


def test_prints_exactly_what_jax_prints(outputs):
  got, expected, _ = outputs
  assert got == expected


def test_prints_exactly_what_jax_prints_compiled_and_tiered():
  # Users' default: the jitted step's first calls interpreted while IREE
  # compiles, later ones compiled; both must give XLA's bits.
  got, expected, _ = _run_seed(OPENJAX_EXECUTOR="iree", OPENJAX_TIERED_COMPILATION="1")
  assert got == expected
