"""``python -m openjax script.py [args]``: run a JAX program on openjax, unedited.

Inside the script ``import jax`` (and every ``jax.*`` submodule) resolves to
openjax (see ``openjax._src.alias``), so libraries written against JAX run
too. ``python -m openjax -m package.module [args]`` runs a module the same way.
"""
import os
import runpy
import sys

from openjax._src.alias import alias_jax

USAGE = "usage: python -m openjax script.py [args ...] | -m module [args ...]"


def main(argv: list[str]) -> None:
  if not argv or argv[0] in ("-h", "--help"):
    print(USAGE, file=sys.stderr if not argv else sys.stdout)
    raise SystemExit(2 if not argv else 0)
  alias_jax()
  if argv[0] == "-m":
    if len(argv) < 2:
      raise SystemExit(f"python -m openjax -m: no module named after -m\n{USAGE}")
    sys.argv = argv[1:]
    runpy.run_module(argv[1], run_name="__main__", alter_sys=True)
  else:
    sys.argv = argv
    # The script's own folder comes first on the path, as with `python script.py`.
    sys.path.insert(0, os.path.dirname(os.path.abspath(argv[0])))
    runpy.run_path(argv[0], run_name="__main__")


if __name__ == "__main__":
  main(sys.argv[1:])
