"""The shard_map code of JAX's pages "Introduction to parallel programming"
(section 3, manual parallelism) and "Manual parallelism with shard_map" runs
unchanged (``import jax`` resolves to openjax) on 8 and 4 CPU devices and prints
what JAX 0.10.2 prints, block by block: stdout, the value of the block's
last expression and the exception it raises. The pages' code and JAX's
outputs, and how they were made: tests/data/shard_map_pages/ (generate.py,
runner.py)."""
import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

DATA = pathlib.Path(__file__).parent / "data" / "shard_map_pages"

# Blocks where openjax differs, each for a reason outside this feature or
# on purpose (none at present); every other block (from the page's
# shard_map part on) must match.
EXPECTED_DIFFERENCES: dict = {}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?inf|nan")
_ADDRESS = re.compile(r"0x[0-9a-f]+")


def _same_text(a, b) -> bool:
  """Equal up to whitespace and float rounding (a few float32 ulps: IREE's
  and XLA's kernels reassociate sums differently)."""
  if a is None or b is None:
    return a is b
  a, b = _ADDRESS.sub("", a), _ADDRESS.sub("", b)
  if "".join(_NUMBER.sub("#", a).split()) != "".join(_NUMBER.sub("#", b).split()):
    return False
  for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b)):
    fx, fy = float(x), float(y)
    if not (fx == fy or abs(fx - fy) <= 1e-6 * max(abs(fx), abs(fy), 1.0)
            or (fx != fx and fy != fy)):
      return False
  return True


def _run_page(page: str, devices: int) -> list:
  env = dict(os.environ, OPENJAX_EXECUTOR="iree", OPENJAX_TIERED_COMPILATION="0",
             PYTHONPATH=str(DATA.parents[2]), PAGES_DEVICE_COUNT=str(devices))
  run = subprocess.run([sys.executable, str(DATA / "runner.py"), str(DATA / f"{page}.json"),
                        "openjax"], capture_output=True, text=True, env=env, timeout=900)
  assert run.returncode == 0, run.stderr[-3000:]
  return json.loads(run.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("devices", [8, 4], ids=lambda n: f"{n}dev")
@pytest.mark.parametrize("page", ["sharded_computation", "shard_map_notebook"])
def test_page_prints_what_jax_prints(page, devices):
  # On 4 devices the pages' 8-device meshes fail, as JAX's do, and the rest
  # runs on fewer devices.
  suffix = "" if devices == 8 else str(devices)
  expected = json.loads((DATA / f"{page}.expected{suffix}.json").read_text())
  first = json.loads((DATA / f"{page}.json").read_text())["first"]
  got = _run_page(page, devices)
  assert len(got) == len(expected)
  mismatched = []
  for i in range(first, len(expected)):
    e, g = expected[i], got[i]
    same = all(_same_text(e[k], g[k]) for k in ("stdout", "value")) and (
        (e["error"] is None) == (g["error"] is None))
    if (page, i) in EXPECTED_DIFFERENCES:
      continue
    if not same:
      mismatched.append((i, e, g))
  assert not mismatched, "\n\n".join(
      f"block {i}:\n JAX:     {e}\n openjax: {g}" for i, e, g in mismatched[:5])
