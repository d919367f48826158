"""Run a page's code blocks in one namespace and print, as JSON, each
block's stdout, the repr of its last expression and the exception it raises.

    python runner.py PAGE.json MODULE      # MODULE: jax or openjax

With ``openjax`` the page's ``import jax`` (and ``jax.numpy``, ``jax.sharding``
...) resolve to openjax's modules, so the page runs unchanged."""
import ast
import contextlib
import importlib
import io
import json
import os
import sys

# 8 CPU devices as the pages assume, or PAGES_DEVICE_COUNT (4: the pages'
# meshes that need 8 fail as JAX's do).
os.environ["XLA_FLAGS"] = ("--xla_force_host_platform_device_count="
                           + os.environ.get("PAGES_DEVICE_COUNT", "8"))


def _alias_openjax():
  import openjax
  sys.modules["jax"] = openjax
  for sub in ("numpy", "lax", "sharding", "tree_util", "experimental", "nn", "random",
              "experimental.shard_map"):
    sys.modules[f"jax.{sub}"] = importlib.import_module(f"openjax.{sub}")


def run(blocks: list) -> list:
  ns = {"__name__": "__main__"}
  out = []
  for code in blocks:
    buf = io.StringIO()
    value = error = None
    with contextlib.redirect_stdout(buf):
      try:
        tree = ast.parse(code)
        last = tree.body[-1] if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        if last is not None:
          tree.body = tree.body[:-1]
        exec(compile(tree, "<block>", "exec"), ns)
        if last is not None:
          v = eval(compile(ast.Expression(last.value), "<block>", "eval"), ns)
          value = None if v is None else repr(v)
      except Exception as e:  # noqa: BLE001 - recorded as the block's outcome
        error = f"{type(e).__name__}: {e}"
    out.append({"stdout": buf.getvalue(), "value": value, "error": error})
  return out


if __name__ == "__main__":
  page, module = sys.argv[1], sys.argv[2]
  if module == "openjax":
    _alias_openjax()
  with open(page) as f:
    blocks = json.load(f)["blocks"]
  print(json.dumps(run(blocks)))
