"""Run code written against JAX on openjax: ``import jax`` resolves to openjax.

``alias_jax()`` puts a finder first on ``sys.meta_path`` that answers every
import of ``jax`` or ``jax.X.Y`` with the module ``openjax.X.Y`` (the same
module object, so ``jax.numpy is openjax.numpy``), and ``jaxlib`` with
``openjax``. Libraries written against JAX (optax, flax, equinox, ...) then
run on openjax without edits, even where a real JAX is installed beside it:
the finder comes before the path finders, so JAX's own files are never read.
``python -m openjax script.py`` calls it before running the script.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys

# Import names whose modules are answered by openjax's (name -> openjax name).
ALIASED_ROOTS = {"jax": "openjax", "jaxlib": "openjax"}


def openjax_name(fullname: str) -> str | None:
  """The openjax module that answers ``fullname`` (``jax.numpy`` ->
  ``openjax.numpy``), or None when ``fullname`` is not a JAX module."""
  root, dot, rest = fullname.partition(".")
  target = ALIASED_ROOTS.get(root)
  if target is None:
    return None
  return target + dot + rest


class _ExistingModuleLoader(importlib.abc.Loader):
  """Hands the import system an already imported openjax module."""

  def __init__(self, module):
    self.module = module

  def create_module(self, spec):
    return self.module

  def exec_module(self, module):
    # The openjax module ran when it was imported under its own name; running it
    # again would make a second copy of every primitive and registry.
    pass


class JaxAliasFinder(importlib.abc.MetaPathFinder):
  """Answers ``jax.*`` and ``jaxlib.*`` imports with openjax's modules."""

  def find_spec(self, fullname, path=None, target=None):
    name = openjax_name(fullname)
    if name is None:
      return None
    try:
      module = importlib.import_module(name)
    except ModuleNotFoundError as err:
      if err.name is None or not (name == err.name or name.startswith(err.name + ".")):
        raise
      # Falling through to the path finders would load a real JAX's module
      # beside openjax's, mixing two array types in one program.
      raise ModuleNotFoundError(
          f"import {fullname}: openjax has no module {name}, so JAX code that imports "
          f"{fullname} does not run on openjax yet (alias_jax maps jax.X to openjax.X)",
          name=fullname) from None
    return importlib.machinery.ModuleSpec(
        fullname, _ExistingModuleLoader(module),
        is_package=hasattr(module, "__path__"))


_FINDER = JaxAliasFinder()


def alias_jax() -> None:
  """Make ``import jax`` (and ``jax.numpy``, ``jax.lax``, ...) import openjax.

  For notebooks and test suites: call it before the code that imports JAX. It
  also replaces any ``jax`` modules already imported in this process, so names
  imported before the call keep the old modules while new imports get openjax's.
  """
  if _FINDER not in sys.meta_path:
    sys.meta_path.insert(0, _FINDER)
  for fullname in [m for m in sys.modules if openjax_name(m) is not None]:
    module = sys.modules[fullname]
    if not module.__name__.startswith("openjax"):
      del sys.modules[fullname]
  sys.modules["jax"] = importlib.import_module("openjax")
  sys.modules["jaxlib"] = sys.modules["jax"]


def unalias_jax() -> None:
  """Undo ``alias_jax``: later ``import jax`` statements find JAX (if installed)."""
  if _FINDER in sys.meta_path:
    sys.meta_path.remove(_FINDER)
  for fullname in [m for m in sys.modules if openjax_name(m) is not None]:
    if sys.modules[fullname].__name__.startswith("openjax"):
      del sys.modules[fullname]


def is_aliased() -> bool:
  return _FINDER in sys.meta_path
