"""Regenerate the seed-002 expectation from real JAX 0.10.2.

    /tmp/jaxvenv/bin/python tools/gen_seed_002_expected.py [/work/shared/seeds/002_*.txt]

Writes tests/data/seed_002_program.txt (the seed's ```python blocks joined,
verbatim) and tests/data/seed_002_expected.txt (what JAX prints for it, less
the timing line and the device-list line). JAX 0.10 has removed the
deprecated ``jax.tree_leaves``/``jax.tree_map`` that the seed's last step
calls (openjax keeps them, with a DeprecationWarning); only for that step
they are aliased to ``jax.tree_util.tree_leaves``/``tree_map`` here.
"""
from __future__ import annotations

import contextlib
import glob
import io
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "..", "tests", "data")
DROP = ("Training completed in", "Available devices:")


def extract_program(seed_path: str) -> str:
  with open(seed_path) as f:
    text = f.read()
  blocks = re.findall(r"```python\n(.*?)```", text, re.S)
  return "\n".join(blocks)


def filter_output(out: str) -> str:
  return "".join(line for line in out.splitlines(keepends=True)
                 if not line.startswith(DROP))


def main() -> None:
  seed = sys.argv[1] if len(sys.argv) > 1 else glob.glob("/work/shared/seeds/002_*.txt")[0]
  program = extract_program(seed)
  import jax  # noqa: PLC0415 - the oracle, only imported when generating
  if not jax.__version__.startswith("0.10.2"):
    sys.exit(f"expected JAX 0.10.2, got {jax.__version__}")
  jax.tree_leaves = jax.tree_util.tree_leaves
  jax.tree_map = jax.tree_util.tree_map
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    exec(compile(program, "seed_002", "exec"), {"__name__": "__main__"})  # noqa: S102
  with open(os.path.join(DATA, "seed_002_program.txt"), "w") as f:
    f.write(program)
  with open(os.path.join(DATA, "seed_002_expected.txt"), "w") as f:
    f.write(filter_output(buf.getvalue()))
  print(filter_output(buf.getvalue()))


if __name__ == "__main__":
  main()
