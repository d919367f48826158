"""The code of JAX's pages "External callbacks", "Introduction to
debugging", "Compiled prints and breakpoints" and "The checkify
transformation" runs unchanged (``import jax`` resolves to openjax) and
prints what JAX 0.10.2 prints, block by block: stdout, the value of the
block's last expression and the exception it raises. Breakpoints read a
scripted stdin (``c``). Every jit compiles with IREE, so the callbacks run
from compiled programs. The expected data and how it was made:
tests/data/debug_pages/ (generate.py, runner.py)."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

DATA = pathlib.Path(__file__).parent / "data" / "debug_pages"

# Where openjax differs from JAX on purpose or for a reason outside this
# feature; every other block must match.
EXPECTED_DIFFERENCES = {
    # XLA may reorder unordered prints (JAX shows y before x inside lax.map);
    # openjax keeps program order: the same lines, in another order.
    ("debugging", 3): "order", ("print_breakpoint", 1): "order",
    # JAX's own run of this block raises TypeError (a Python int reaches
    # check's format arguments in eager checkify); openjax traces it as an
    # array and raises the out-of-bounds error the page documents.
    ("checkify_guide", 1): "jax-raises",
}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")


def _same_text(a, b) -> bool:
  """Equal up to whitespace (JAX's Array repr joins a wrapped dtype line
  with spaces; NumPy pads numbers to a common width) and float rounding
  (IREE's and XLA's sin differ in the last bit of a float32)."""
  if a is None or b is None:
    return a is b
  if "".join(_NUMBER.sub("#", a).split()) != "".join(_NUMBER.sub("#", b).split()):
    return False
  for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
    fx, fy = float(x), float(y)
    if not (fx == fy or abs(fx - fy) <= 1e-6 * max(abs(fx), abs(fy))
            or (fx != fx and fy != fy)):
      return False
  return True


def _run_page(page: str) -> list[dict]:
  env = dict(os.environ, OPENJAX_EXECUTOR="iree", OPENJAX_TIERED_COMPILATION="0",
             PYTHONPATH=str(DATA.parents[2]))
  run = subprocess.run([sys.executable, str(DATA / "runner.py"), str(DATA / f"{page}.json"),
                        "openjax"], capture_output=True, text=True, env=env, timeout=600)
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout)


@pytest.mark.parametrize("page", ["external-callbacks", "debugging", "print_breakpoint",
                                  "checkify_guide"])
def test_page_prints_what_jax_prints(page):
  expected = json.loads((DATA / f"{page}.json").read_text())
  got = _run_page(page)
  assert len(got) == len(expected)
  mismatches = []
  for i, (g, e) in enumerate(zip(got, expected)):
    why = EXPECTED_DIFFERENCES.get((page, i))
    if why == "jax-raises":
      assert g["error"] is not None, f"block {i} ({why}) now runs: update the test"
      continue
    if why == "order":
      assert sorted(g["stdout"].splitlines()) != [] and _same_text(
          "\n".join(sorted(g["stdout"].splitlines())), "\n".join(sorted(e["stdout"].splitlines())))
      assert _same_text(g["result"], e["result"]) and g["error"] == e["error"]
      continue
    for key in ("stdout", "result", "error"):
      same = _same_text(g[key], e[key])
      if key == "stdout":   # line by line: the same lines in the same order
        lines, want = g[key].splitlines(), e[key].splitlines()
        same = len(lines) == len(want) and all(map(_same_text, lines, want))
      if not same:
        mismatches.append(f"block {i} {key}:\n{e['code']}\n  JAX:     {e[key]!r}\n"
                          f"  openjax: {g[key]!r}")
  assert not mismatches, "\n".join(mismatches)
