"""Make the page files and JAX's expected outputs (run with JAX 0.10.2):

    python generate.py JAX_REPO_CHECKOUT JAX_PYTHON

Pages: the shard_map part of "Introduction to parallel programming"
(docs/sharded-computation.md, section 3) and "Manual parallelism with
shard_map" (docs/notebooks/shard_map.py). Each page's code blocks go into
PAGE.json (``blocks``); JAX's per-block outputs on 8 CPU devices into
PAGE.expected.json, on 4 into PAGE.expected4.json."""
import json
import os
import pathlib
import re
import subprocess
import sys

HERE = pathlib.Path(__file__).parent


def md_blocks(text: str, start: str) -> tuple:
  """All code cells of a MyST page, and the index of the first one after
  the heading ``start`` (the earlier ones set up its names)."""
  cells = re.findall(r"```\{code-cell\}[^\n]*\n(.*?)```", text, re.S)
  first = len(re.findall(r"```\{code-cell\}", text[:text.index(start)]))
  return ["\n".join(l for l in c.split("\n") if not l.startswith(":")) for c in cells], first


def light_blocks(text: str) -> list:
  """Code cells of a jupytext 'light' .py notebook."""
  blocks, cur, inside = [], [], False
  lines = text.split("\n")

  def flush():
    if any(l.strip() and not l.lstrip().startswith("#") for l in cur):
      blocks.append("\n".join(cur))
    cur.clear()
  for i, line in enumerate(lines):
    if line.startswith("# +"):
      flush()
      inside = True
    elif line.startswith("# -") and inside:
      flush()
      inside = False
    elif not inside and not line.strip():
      following = next((l for l in lines[i + 1:] if l.strip()), "")
      if following.startswith((" ", "\t")):   # a blank line inside a def
        cur.append(line)
      else:
        flush()
    else:
      cur.append(line)
  flush()
  return blocks


def main():
  repo, jax_python = pathlib.Path(sys.argv[1]), sys.argv[2]
  setup = "import jax\nimport jax.numpy as jnp\nimport numpy as np\nfrom functools import partial"
  sc_blocks, sc_first = md_blocks((repo / "docs/sharded-computation.md").read_text(),
                                  "## 3. Manual parallelism")
  pages = {
      "sharded_computation": ([setup] + sc_blocks, sc_first + 1),
      "shard_map_notebook": (light_blocks((repo / "docs/notebooks/shard_map.py").read_text()), 0),
  }
  for name, (blocks, first) in pages.items():
    (HERE / f"{name}.json").write_text(json.dumps({"blocks": blocks, "first": first}, indent=1))
    for devices, suffix in (("8", ""), ("4", "4")):
      run = subprocess.run([jax_python, str(HERE / "runner.py"), str(HERE / f"{name}.json"),
                            "jax"], capture_output=True, text=True, check=True,
                           env=dict(os.environ, PAGES_DEVICE_COUNT=devices))
      (HERE / f"{name}.expected{suffix}.json").write_text(
          json.dumps(json.loads(run.stdout.strip().splitlines()[-1]), indent=1))


if __name__ == "__main__":
  main()
