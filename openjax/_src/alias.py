"""Run code written against JAX on openjax: ``import jax`` resolves to openjax.

``alias_jax()`` puts a finder first on ``sys.meta_path`` that answers every
import of ``jax.X.Y`` with the module ``openjax.X.Y`` (the same module object,
so ``jax.numpy is openjax.numpy``). ``jax`` and ``jaxlib`` themselves are
facades that forward every attribute to ``openjax`` but report the JAX API
version openjax implements (``JAX_API_VERSION``): libraries gate code paths on
``jax.__version_info__``, and openjax's own version number means nothing to
them. Libraries written against JAX (optax, flax, equinox, ...) then run on
openjax without edits, even where a real JAX is installed beside it: the
finder comes before the path finders, so JAX's own files are never read.
``python -m openjax script.py`` calls it before running the script.
"""
import importlib
import importlib.abc
import importlib.machinery
import sys
import types

# Import names whose modules are answered by openjax's (name -> openjax name).
ALIASED_ROOTS = {"jax": "openjax", "jaxlib": "openjax"}

# JAX private modules whose counterpart openjax keeps under another name
# (libraries import them: flax.nnx reads ``jax._src.checkify``).
PRIVATE_MODULES = {"jax._src.checkify": "openjax._src.debug.checkify"}

# The JAX release whose public API openjax follows (tests/data/jax_names).
JAX_API_VERSION = "0.10.2"


class _JaxFacade(types.ModuleType):
  """``jax`` / ``jaxlib``: openjax's attributes, JAX's version."""

  def __getattr__(self, name):
    return getattr(openjax_module(), name)

  def __dir__(self):
    return sorted(set(dir(openjax_module())) | set(self.__dict__))


def openjax_module():
  # The package this module belongs to: imported (and in sys.modules) first.
  return sys.modules["openjax"]


def _facade(name: str) -> _JaxFacade:
  facade = _JaxFacade(name, openjax_module().__doc__)
  facade.__version__ = JAX_API_VERSION
  facade.__version_info__ = tuple(int(p) for p in JAX_API_VERSION.split("."))
  facade.version = types.SimpleNamespace(__version__=JAX_API_VERSION,
                                         __version_info__=facade.__version_info__,
                                         _version=JAX_API_VERSION)
  # Submodules (jax.numpy, ...) are found through the alias finder, not this path.
  facade.__path__ = []
  return facade


def openjax_name(fullname: str) -> str | None:
  """The openjax module that answers ``fullname`` (``jax.numpy`` ->
  ``openjax.numpy``), or None when ``fullname`` is not a JAX module."""
  if fullname in PRIVATE_MODULES:
    return PRIVATE_MODULES[fullname]
  root, dot, rest = fullname.partition(".")
  target = ALIASED_ROOTS.get(root)
  if target is None:
    return None
  return target + dot + rest


class _ExistingModuleLoader(importlib.abc.Loader):
  """Hands the import system an already imported openjax module."""

  def __init__(self, module):
    self.module = module
    self.own_spec = getattr(module, "__spec__", None)

  def create_module(self, spec):
    return self.module

  def exec_module(self, module):
    # The openjax module ran when it was imported under its own name; running it
    # again would make a second copy of every primitive and registry. The import
    # system has just set its __spec__ to the jax.* one: give it its own back.
    if self.own_spec is not None:
      module.__spec__ = self.own_spec


class _MissingPrivateModule(types.ModuleType):
  """A JAX-private module openjax has no counterpart of."""

  def __init__(self, name: str):
    super().__init__(name)
    self.__path__ = []

  def __getattr__(self, attr):
    if attr.startswith("__"):
      raise AttributeError(attr)
    raise AttributeError(
        f"{self.__name__}.{attr}: openjax has no counterpart of JAX's private module "
        f"{self.__name__} (alias_jax maps jax.X to openjax.X)")


class _PrivateFacade(types.ModuleType):
  """``jax._src.X`` where openjax has ``openjax._src.X``: its attributes, but
  named ``jax._src.X``, so ``from jax._src.X import missing_submodule`` is
  looked up as a jax name (an empty module) and not as an openjax one."""

  def __init__(self, name: str, target):
    super().__init__(name, getattr(target, "__doc__", None))
    self.__path__ = []
    self._target = target

  def __getattr__(self, attr):
    if attr.startswith("__"):
      raise AttributeError(attr)
    return getattr(self._target, attr)


class JaxAliasFinder(importlib.abc.MetaPathFinder):
  """Answers ``jax.*`` and ``jaxlib.*`` imports with openjax's modules."""

  def find_spec(self, fullname, path=None, target=None):
    name = openjax_name(fullname)
    if name is None:
      return None
    if fullname in ALIASED_ROOTS:
      return importlib.machinery.ModuleSpec(fullname, _ExistingModuleLoader(_facade(fullname)),
                                            is_package=True)
    try:
      module = importlib.import_module(name)
    except ModuleNotFoundError as err:
      if err.name is None or not (name == err.name or name.startswith(err.name + ".")):
        raise
      parent = sys.modules.get(fullname.rpartition(".")[0])
      if fullname.startswith("jax._src.") and not isinstance(parent, _MissingPrivateModule):
        # JAX's private modules are not its API; libraries reach into them
        # defensively (hasattr, try/except AttributeError), so an empty module
        # whose attributes raise AttributeError lets them import.
        return importlib.machinery.ModuleSpec(
            fullname, _ExistingModuleLoader(_MissingPrivateModule(fullname)), is_package=True)
      # Falling through to the path finders would load a real JAX's module
      # beside openjax's, mixing two array types in one program.
      raise ModuleNotFoundError(
          f"import {fullname}: openjax has no module {name}, so JAX code that imports "
          f"{fullname} does not run on openjax yet (alias_jax maps jax.X to openjax.X)",
          name=fullname) from None
    if fullname.startswith("jax._src"):
      module = _PrivateFacade(fullname, module)
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
    if not isinstance(module, _JaxFacade) and not module.__name__.startswith("openjax"):
      del sys.modules[fullname]
  for root in ALIASED_ROOTS:
    if not isinstance(sys.modules.get(root), _JaxFacade):
      sys.modules[root] = _facade(root)


def unalias_jax() -> None:
  """Undo ``alias_jax``: later ``import jax`` statements find JAX (if installed)."""
  if _FINDER in sys.meta_path:
    sys.meta_path.remove(_FINDER)
  for fullname in [m for m in sys.modules if openjax_name(m) is not None]:
    module = sys.modules[fullname]
    if isinstance(module, (_JaxFacade, _PrivateFacade, _MissingPrivateModule)) or (
        module.__name__.startswith("openjax")):
      del sys.modules[fullname]


def is_aliased() -> bool:
  return _FINDER in sys.meta_path
