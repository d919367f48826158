"""``python -m openjax script.py`` and ``openjax.alias_jax()``: JAX code runs unedited."""
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import openjax
from openjax._src import alias


def run_openjax(tmp_path, source: str, *args: str) -> subprocess.CompletedProcess:
  script = tmp_path / "script.py"
  script.write_text(textwrap.dedent(source))
  return subprocess.run([sys.executable, "-m", "openjax", str(script), *args],
                        capture_output=True, text=True, timeout=300)


def test_main_runs_script_with_jax_resolving_to_openjax(tmp_path):
  (tmp_path / "helper_mod.py").write_text("VALUE = 7\n")
  result = run_openjax(tmp_path, """
      import sys
      import jax
      import jax.numpy as jnp
      from jax import lax, random
      import jax.tree_util
      import openjax
      import helper_mod
      assert jax.jit is openjax.jit and jnp is openjax.numpy and lax is openjax.lax
      assert jax.__version_info__ == (0, 10, 2)
      assert jax.tree_util is openjax.tree_util
      assert __name__ == "__main__"
      print(sys.argv[1:], helper_mod.VALUE, float(jax.grad(lambda x: jnp.sin(x) * x)(1.0)))
      """, "a", "--flag=1")
  assert result.returncode == 0, result.stderr
  args, value, grad = result.stdout.rsplit(" ", 2)
  assert args == "['a', '--flag=1']" and value == "7"
  assert float(grad) == pytest.approx(np.cos(1.0) + np.sin(1.0), rel=1e-6)


def test_main_runs_module_with_dash_m(tmp_path):
  (tmp_path / "prog.py").write_text(textwrap.dedent("""
      import sys
      import jax.numpy as jnp
      print(sys.argv[1:], int(jnp.arange(4).sum()))
      """))
  result = subprocess.run([sys.executable, "-m", "openjax", "-m", "prog", "x"],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path)
  assert result.returncode == 0, result.stderr
  assert result.stdout.strip() == "['x'] 6"


def test_main_without_arguments_prints_usage():
  result = subprocess.run([sys.executable, "-m", "openjax"], capture_output=True, text=True,
                          timeout=300)
  assert result.returncode == 2 and "usage: python -m openjax" in result.stderr


def test_script_errors_keep_their_traceback(tmp_path):
  result = run_openjax(tmp_path, "raise ValueError('boom from script')\n")
  assert result.returncode == 1
  assert "ValueError: boom from script" in result.stderr and "script.py" in result.stderr


@pytest.fixture
def aliased():
  alias.alias_jax()
  yield
  alias.unalias_jax()


def test_alias_jax_maps_submodules_to_the_same_module_objects(aliased):
  import jax
  import jax.numpy
  import jax.nn.initializers
  import jaxlib
  assert jax.numpy is openjax.numpy and jax.grad is openjax.grad
  assert jax.nn.initializers is openjax.nn.initializers
  # jax and jaxlib forward to openjax but report the JAX API version openjax follows.
  assert jax.__version__ == jaxlib.__version__ == alias.JAX_API_VERSION == "0.10.2"
  assert jax.__version_info__ >= (0, 4, 29) and jaxlib.version.__version__ == "0.10.2"
  assert "vmap" in dir(jax)


def test_alias_jax_missing_module_names_the_openjax_module(aliased):
  with pytest.raises(ModuleNotFoundError, match=r"openjax has no module openjax\.no_such_mod"):
    import jax.no_such_mod  # noqa: F401


def test_alias_jax_from_import_of_a_name(aliased):
  from jax.numpy import float32
  from jax.tree_util import tree_map
  assert float32 is openjax.numpy.float32 and tree_map is openjax.tree_util.tree_map


def test_unalias_jax_removes_the_finder():
  alias.alias_jax()
  assert alias.is_aliased() and sys.modules["jax"].vmap is openjax.vmap
  alias.unalias_jax()
  assert not alias.is_aliased() and "jax" not in sys.modules
  assert "jax.numpy" not in sys.modules


def test_alias_jax_is_public():
  assert openjax.alias_jax is alias.alias_jax


def test_missing_private_jax_module_imports_empty(aliased):
  import jax._src.no_such_private_module as private
  with pytest.raises(AttributeError, match="no counterpart of JAX's private module"):
    private.wait_for_tokens  # noqa: B018
  assert not hasattr(private, "anything")
  with pytest.raises(ImportError):
    from jax._src.no_such_private_module import LiteralArray  # noqa: F401


def test_aliased_modules_keep_their_own_spec(aliased):
  import jax.numpy  # noqa: F401
  import jax._src  # noqa: F401
  assert openjax.numpy.__spec__.name == "openjax.numpy"
  assert sys.modules["openjax._src"].__spec__.name == "openjax._src"


def test_from_import_of_a_missing_private_submodule(aliased):
  from jax._src import no_such_private_submodule  # a jax name: an empty module
  from jax._src import core
  assert core.Tracer is sys.modules["openjax._src.core"].Tracer
  with pytest.raises(AttributeError, match="no counterpart"):
    no_such_private_submodule.anything  # noqa: B018
