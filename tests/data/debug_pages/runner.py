"""Runs the code of a JAX documentation page block by block in one
namespace, as a reader would, recording for each block its stdout, the repr
of its last expression and the exception it raises. ``generate.py`` runs it
under JAX (the expected data); tests/test_debug_pages.py under openjax with
``import jax`` resolving to openjax (the page's code runs unchanged)."""
import ast
import contextlib
import io
import re
import sys

FENCE = re.compile(r"^```(\{code-cell\}|python)[^\n]*\n(.*?)^```", re.S | re.M)


def blocks(markdown: str) -> list[str]:
  """The page's Python blocks that parse, in order (notebook cell options,
  IPython magics and removed cells dropped)."""
  out = []
  for m in FENCE.finditer(markdown):
    lines = [ln for ln in m.group(2).splitlines()
             if not ln.startswith(":") and not ln.lstrip().startswith("%")]
    code = "\n".join(lines).strip("\n")
    if "remove-cell" in m.group(2) or not code:
      continue
    try:
      ast.parse(code)
    except SyntaxError:
      continue
    out.append(code)
  return out


def run_block(code: str, namespace: dict, stdin_text: str = "c\n" * 20) -> dict:
  """Run one block; returns {stdout, result, error}."""
  tree = ast.parse(code)
  last = None
  if tree.body and isinstance(tree.body[-1], ast.Expr):
    last = ast.Expression(tree.body.pop().value)
  out = io.StringIO()
  result = error = None
  old_stdin = sys.stdin
  sys.stdin = io.StringIO(stdin_text)
  try:
    with contextlib.redirect_stdout(out):
      exec(compile(tree, "<page>", "exec"), namespace)
      if last is not None:
        value = eval(compile(last, "<page>", "eval"), namespace)
        result = None if value is None else repr(value)
  except BaseException as e:  # noqa: BLE001 - recorded
    error = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
  finally:
    sys.stdin = old_stdin
  return {"stdout": out.getvalue(), "result": result, "error": error}


def run_page(markdown_or_blocks) -> list[dict]:
  """Every block of a page in one fresh namespace."""
  codes = blocks(markdown_or_blocks) if isinstance(markdown_or_blocks, str) else markdown_or_blocks
  ns: dict = {"__name__": "__page__"}
  return [{"code": code, **run_block(code, ns)} for code in codes]


if __name__ == "__main__":
  # python runner.py blocks.json [openjax]: run the blocks, print JSON results.
  import json
  if len(sys.argv) > 2 and sys.argv[2] == "openjax":
    import importlib.abc
    import importlib.util
    import openjax

    class _JaxIsOpenjax(importlib.abc.MetaPathFinder, importlib.abc.Loader):
      """``import jax[.x]`` gives ``openjax[.x]``: the page's code unchanged."""
      def find_spec(self, name, path=None, target=None):
        if name == "jax" or name.startswith("jax."):
          return importlib.util.spec_from_loader(name, self)
        return None

      def create_module(self, spec):
        return importlib.import_module("open" + spec.name)

      def exec_module(self, module):
        pass
    import importlib
    sys.meta_path.insert(0, _JaxIsOpenjax())
  codes = [c["code"] for c in json.load(open(sys.argv[1]))]
  sys.__stdout__.write(json.dumps(run_page(codes)))
