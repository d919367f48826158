"""The AOT stages: ``jit(f).trace(...).lower().compile()`` and
``jit(f).lower(...)``: module text, cost and memory analysis, calling a
Compiled (exact types only, static arguments fixed), and the rule that
compiled functions cannot be transformed."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.config import config
from openjax._src.core import ShapedArray
from openjax._src.lowering.cost import cost_analysis
from openjax._src.primitives.elementwise.arithmetic import add_p, mul_p
from tests.test_compiler import _new, add, iree_executor, mul, sin, t_reduce_sum, t_scale

f32 = np.float32


@pytest.fixture(autouse=True, scope="module")
def _interpreter_default(tmp_path_factory):
  # AOT must work whatever the default executor is: run these tests with the
  # interpreter as default (the compile stage uses IREE regardless).
  with iree_executor(tmp_path_factory.getbasetemp() / "openjax_cache"):
    config.update("openjax_executor", "interpreter")
    yield


def f(x, y):
  return add(mul(x, y), sin(x))


def test_walkthrough_with_test_primitives():
  x, y = np.arange(3, dtype=f32), np.full(3, 2, f32)
  traced = jax.jit(f).trace(x, y)
  assert str(traced.jaxpr).splitlines()[0] == "{ lambda ; a:f32[3] b:f32[3]. let"
  lowered = traced.lower()
  text = lowered.as_text()
  assert text.startswith("module @jit_f {")
  assert "stablehlo.multiply %arg0, %arg1 : tensor<3xf32>" in text
  assert "stablehlo.sine %arg0 : tensor<3xf32>" in text
  assert lowered.compiler_ir() is not None
  assert lowered.out_info == jax.ShapeDtypeStruct((3,), f32)
  compiled = lowered.compile()
  # three elementwise ops on f32[3]: 9 flops; bytes of every operand and result
  assert compiled.cost_analysis() == {"flops": 9.0, "transcendentals": 0.0,
                                      "bytes accessed": 96.0}
  out = compiled(x, y)
  assert isinstance(out, jax.Array)
  np.testing.assert_allclose(np.asarray(out), x * y + np.sin(x), rtol=1e-6)
  assert compiled.as_text() == text
  assert jax.jit(f).lower(x, y).as_text() == text


def test_shape_dtype_struct_lowering():
  spec = jax.ShapeDtypeStruct((2, 2), np.dtype("float32"))
  compiled = jax.jit(f).trace(spec, spec).lower().compile()
  x = np.eye(2, dtype=f32)
  np.testing.assert_allclose(np.asarray(compiled(x, x)), x * x + np.sin(x), rtol=1e-6)


def test_pytrees_static_args_and_trees():
  def g(params, x, n):
    return {"y": t_scale.bind1(add(params["w"], x), s=float(n)), "n": x}

  params = {"w": np.ones(2, f32)}
  lowered = jax.jit(g, static_argnums=2).lower(params, np.ones(2, f32), 3)
  compiled = lowered.compile()
  out = compiled(params, np.full(2, 2, f32))       # the static 3 is not passed again
  np.testing.assert_array_equal(np.asarray(out["y"]), [9, 9])
  assert compiled.in_tree == lowered.in_tree
  assert compiled.in_tree.num_leaves == 2
  shardings = compiled.input_shardings
  assert jax.tree.structure(shardings) == compiled.in_tree
  assert jax.tree.structure(compiled.output_shardings) == jax.tree.structure(out)
  with pytest.raises(TypeError, match="input pytree does not match"):
    compiled(params, np.ones(2, f32), 3)


def test_mismatched_types_name_the_signature():
  compiled = jax.jit(f).lower(np.ones(3, f32), np.ones(3, f32)).compile()
  with pytest.raises(TypeError, match=r"Argument 1 compiled with f32\[3\] and called with "
                                      r"i32\[3\][\s\S]*compiled signature"):
    compiled(np.ones(3, f32), np.ones(3, np.int32))
  with pytest.raises(TypeError, match=r"compiled with f32\[3\] and called with f32\[4\]"):
    compiled(np.ones(4, f32), np.ones(4, f32))


def test_compiled_functions_cannot_be_transformed():
  compiled = jax.jit(lambda x: x).lower(np.ones(3, f32)).compile()
  with pytest.raises(TypeError, match="Cannot apply JAX transformations to a function "
                                      "lowered and compiled"):
    jax.jit(lambda x: compiled(x))(np.ones(3, f32))
  with pytest.raises(TypeError, match="Cannot apply JAX transformations"):
    jax.make_jaxpr(compiled)(np.ones(3, f32))


def test_cost_rules():
  x = np.ones((4, 5), f32)
  w = np.ones((5, 3), f32)
  cost = cost_analysis(jax.make_jaxpr(lambda a: jnp.sum(a, axis=1))(x))
  assert cost["flops"] == 16.0 and cost["transcendentals"] == 0.0
  cost = cost_analysis(jax.make_jaxpr(lambda a, b: jnp.dot(a, b))(x, w))
  assert cost["flops"] == 2 * 4 * 3 * 5
  cost = cost_analysis(jax.make_jaxpr(lambda a: jnp.sin(jnp.reshape(a, (20,))))(x))
  assert cost == {"flops": 0.0, "transcendentals": 20.0, "bytes accessed": 320.0}
  t_costly = _new("t_costly")
  t_costly.def_impl(lambda a: [a])
  t_costly.def_abstract_eval(lambda a: [a])
  t_costly.def_cost(lambda a, *, avals_out: {"flops": 1000.0, "bytes accessed": 7.0})
  cost = cost_analysis(jax.make_jaxpr(lambda a: t_costly.bind1(a))(x))
  assert cost == {"flops": 1000.0, "transcendentals": 0.0, "bytes accessed": 7.0}


def test_memory_analysis_and_compiler_options():
  lowered = jax.jit(f, donate_argnums=0).lower(np.ones(3, f32), np.ones(3, f32))
  compiled = lowered.compile({"iree-opt-level": "O1"})
  stats = compiled.memory_analysis()
  assert stats.argument_size_in_bytes == 24 and stats.output_size_in_bytes == 12
  assert stats.alias_size_in_bytes == 12 and stats.generated_code_size_in_bytes > 0


def test_lower_with_the_interpreter_default():
  assert config.read("openjax_executor") == "interpreter"
  out = jax.jit(f)(np.ones(2, f32), np.ones(2, f32))     # interpreted
  assert out._buffer is None
  compiled = jax.jit(f).lower(np.ones(2, f32), np.ones(2, f32)).compile()
  assert compiled(np.ones(2, f32), np.ones(2, f32))._buffer is not None


def test_seed_walkthrough():
  if add_p.lower is None or mul_p.lower is None:
    pytest.skip("needs the elementwise family's lowering rules for add and mul")

  def g(x, y):
    return 2 * x + y

  x, y = 3, 4
  traced = jax.jit(g).trace(x, y)
  assert str(traced.jaxpr) == """\
{ lambda ; a:i32[] b:i32[]. let
    c:i32[] = mul 2:i32[] a
    d:i32[] = add c b
  in (d,) }"""
  lowered = traced.lower()
  text = lowered.as_text()
  assert "stablehlo.multiply" in text and "stablehlo.add" in text
  compiled = lowered.compile()
  assert compiled.cost_analysis()["flops"] == 2.0
  out = compiled(x, y)
  assert int(out) == 10 and out.dtype == np.int32 and out.weak_type
  i32_scalar = jax.ShapeDtypeStruct((), np.dtype("int32"))
  out = jax.jit(g).trace(i32_scalar, i32_scalar).lower().compile()(x, y)
  assert int(out) == 10
  assert ShapedArray((), np.int32) == jax.jit(g).trace(i32_scalar, i32_scalar).jaxpr.out_avals[0]
