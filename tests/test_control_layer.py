"""The control layer (DESIGN.md's layer table): higher-order primitives live
in ``openjax/_src/control`` and call the interpreters and the runtime
directly, so nothing below reaches upward through late-bound slots; Array is
core's value type."""
import ast
import pathlib
import subprocess
import sys

import numpy as np

import openjax as jax
import openjax.numpy as jnp
from openjax._src import core
from openjax._src.control.closed_call import jit_p
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr

SRC = pathlib.Path(jax.__file__).parent / "_src"
_BELOW_CONTROL = ("core", "lowering", "primitives", "interpreters", "runtime")
_ABOVE_CONTROL = ("api", "numpy", "lax", "random", "scipy", "nn", "testing")


def _imported_src_layers(path: pathlib.Path):
  """(line, layer) for every ``openjax._src.<layer>`` import of a module."""
  for node in ast.walk(ast.parse(path.read_text())):
    names = []
    if isinstance(node, ast.ImportFrom) and node.module:
      names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
    elif isinstance(node, ast.Import):
      names = [a.name for a in node.names]
    for name in names:
      parts = name.split(".")
      if parts[:2] == ["openjax", "_src"] and len(parts) > 2:
        yield node.lineno, parts[2]


def test_layers_below_control_import_neither_control_nor_what_is_above():
  bad = []
  for layer in _BELOW_CONTROL + ("control",):
    forbidden = set(_ABOVE_CONTROL) | ({"control"} if layer != "control" else set())
    for path in sorted((SRC / layer).rglob("*.py")):
      bad += [f"{path.relative_to(SRC)}:{line} imports {target}"
              for line, target in _imported_src_layers(path) if target in forbidden]
  assert not bad, "\n".join(bad)


def test_no_late_bound_hooks_remain():
  # The slots through which lower layers used to call upward at run time.
  names = ("jaxpr_transforms", "jit_executor", "recording_hooks", "array_hooks",
           "register_array_type", "register_zeros_maker", "_zeros_maker")
  hits = [f"{p.relative_to(SRC)}: {n}" for p in SRC.rglob("*.py")
          for n in names if n in p.read_text()]
  assert not hits, hits
  assert not (SRC / "core" / "hooks.py").exists()


def test_higher_order_primitives_are_defined_in_control():
  modules = {
      "jit": "closed_call", "cond": "_cond_rules", "while": "while_loop", "scan": "_scan_rules",
      "remat2": "remat", "custom_jvp_call": "custom_derivatives",
      "custom_vjp_call": "custom_derivatives", "reduce": "reduce_variadic",
      "reduce_window": "reduce_window", "random_gamma": "random_loops"}
  for name, module in modules.items():
    text = (SRC / "control" / f"{module}.py").read_text()
    assert f'Primitive("{name}"' in text, (name, module)
  for path in (SRC / "primitives").rglob("*.py"):
    for name in modules:
      assert f'Primitive("{name}"' not in path.read_text(), (name, path)


def test_array_is_cores_value_type_and_eager_results_are_arrays():
  assert jax.Array is core.Array
  out = jax.lax.add(np.float32(1), np.float32(2))
  assert type(out) is core.Array and out.dtype == np.float32 and float(out) == 3.0
  # Literals evaluate to Arrays that keep their weak type.
  lit = core.Literal(np.float32(2), core.ShapedArray((), np.dtype(np.float32), weak_type=True))
  assert type(lit.operand) is core.Array and lit.operand.weak_type


def test_compiled_results_hold_the_runtimes_buffer_until_read():
  f = jax.jit(lambda x: x * 2.0)
  x = jnp.arange(4.0)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    y = f(x)
  assert type(y) is core.Array and y._buffer is not None
  assert y.block_until_ready() is y and y.is_ready()
  np.testing.assert_array_equal(np.asarray(y), [0., 2., 4., 6.])


def test_jit_equation_splits_by_its_own_partial_eval_rule():
  # A jit equation with one known and one unknown input: the known part
  # stays a jit equation of the known jaxpr, the unknown part reads residuals.
  def inner(a, b):
    return jnp.sin(a) * b, jnp.cos(a)

  closed = jax.make_jaxpr(lambda a, b: jax.jit(inner)(a, b))(1.0, 2.0)
  assert closed.jaxpr.eqns[0].primitive is jit_p
  assert jit_p.partial_eval_jaxpr_custom is not None
  known, unknown, out_unknowns, n_res = partial_eval_jaxpr(closed.jaxpr, [False, True])
  assert out_unknowns == [True, False]
  assert [e.primitive for e in known.eqns] == [jit_p]
  assert [e.primitive for e in unknown.eqns] == [jit_p]
  assert n_res >= 1
  core.check_jaxpr(known)
  core.check_jaxpr(unknown)
  # And end to end: grad through the jitted call.
  g = jax.grad(lambda a, b: jax.jit(inner)(a, b)[0], argnums=1)(1.0, 2.0)
  np.testing.assert_allclose(g, np.sin(1.0), rtol=1e-6)


def test_import_openjax_in_a_fresh_process():
  code = ("import openjax, openjax.numpy as jnp; from openjax import lax;"
          "print(float(lax.linalg.cholesky(jnp.eye(2) * 4.0)[1, 1]))")
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       check=True, cwd=str(SRC.parent.parent))
  assert out.stdout.strip() == "2.0"
