"""jit (the interpreter executor for now), make_jaxpr, eval_shape,
ShapeDtypeStruct, static arguments, caching and the AOT ``trace`` stage."""
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.core import check_jaxpr

f32 = np.float32


def test_jit_matches_eager_and_returns_arrays():
  f = lambda x, y: lax.add(lax.sin(x), lax.mul(x, y))  # noqa: E731
  x, y = np.arange(4, dtype=f32), np.full(4, 2, f32)
  out = jax.jit(f)(x, y)
  assert isinstance(out, jax.Array)
  np.testing.assert_allclose(np.asarray(out), np.sin(x) + x * y, rtol=1e-6)


def test_cache_hits_and_retraces_on_new_shape_or_dtype():
  traces = []

  @jax.jit
  def f(x):
    traces.append(1)
    return lax.mul(x, x)

  f(np.ones(3, f32)); f(np.ones(3, f32)); f(np.zeros(3, f32))
  assert len(traces) == 1 and f._cache_size() == 1
  f(np.ones(4, f32))
  assert len(traces) == 2
  f(np.ones(4, np.int32))
  assert len(traces) == 3 and f._cache_size() == 3
  f(1.0)           # weak f32[] differs from strong f32[]
  f(np.float32(1.0))
  assert f._cache_size() == 5
  jax.clear_caches()
  assert f._cache_size() == 0


def test_pytree_inputs_and_outputs():
  @jax.jit
  def f(params, x):
    return {"out": lax.add(lax.mul(params["w"], x), params["b"]), "aux": (x, None)}

  res = f({"w": np.float32(2), "b": np.float32(1)}, np.float32(3))
  assert set(res) == {"out", "aux"}
  assert float(res["out"]) == 7.0
  assert res["aux"][1] is None


def test_static_argnums_and_argnames():
  def f(x, n, *, mode):
    out = x
    for _ in range(n):
      out = lax.mul(out, 2.0) if mode == "double" else lax.add(out, 1.0)
    return out

  g = jax.jit(f, static_argnums=1, static_argnames="mode")
  assert float(g(1.0, 3, mode="double")) == 8.0
  assert float(g(1.0, 3, mode="inc")) == 4.0
  assert g._cache_size() == 2
  assert float(g(1.0, n=2, mode="inc")) == 3.0  # argnums 1 also static by name


def test_unhashable_static_arg_is_a_clear_error():
  g = jax.jit(lambda x, s: x, static_argnums=1)
  with pytest.raises(ValueError, match="Non-hashable static arguments"):
    g(1.0, np.arange(3))


def test_static_argnums_out_of_range():
  with pytest.raises(ValueError, match="static_argnums"):
    jax.jit(lambda x: x, static_argnums=3)


def test_non_array_argument_names_static_argnums():
  with pytest.raises(TypeError, match="static_argnums"):
    jax.jit(lambda x, s: x)(1.0, "hello")


def test_kwargs_are_traced():
  f = jax.jit(lambda x, *, y: lax.sub(x, y))
  assert float(f(3.0, y=1.0)) == 2.0


def test_decorator_form_with_options():
  @jax.jit(static_argnames=("n",))
  def f(x, n):
    return lax.mul(x, float(n))
  assert float(f(2.0, n=3)) == 6.0


def test_disable_jit_runs_python():
  seen = []

  @jax.jit
  def f(x):
    seen.append(type(x))
    return x

  with jax.disable_jit():
    f(np.float32(1))
  assert seen[0] is np.float32
  f(np.float32(1))
  assert seen[1] is not np.float32


def test_weak_type_preserved_through_jit():
  out = jax.jit(lambda x: x)(1.0)
  assert out.weak_type and out.dtype == np.float32
  out = jax.jit(lambda x: x)(np.float32(1.0))
  assert not out.weak_type


def test_closure_over_array_constant():
  c = np.arange(3, dtype=f32)
  out = jax.jit(lambda x: lax.add(x, c))(np.ones(3, f32))
  np.testing.assert_array_equal(np.asarray(out), c + 1)


def test_nested_jit_is_one_equation():
  inner = jax.jit(lambda x: lax.sin(x))
  outer = jax.jit(lambda x: lax.add(inner(x), 1.0))
  jaxpr = jax.make_jaxpr(outer)(1.0)
  assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
  inner_jaxpr = jaxpr.eqns[0].params["jaxpr"].jaxpr
  assert [e.primitive.name for e in inner_jaxpr.eqns] == ["jit", "add"]
  check_jaxpr(jaxpr)
  assert float(outer(0.0)) == 1.0


def test_jit_method_with_static_self():
  class Model:
    def __init__(self, scale):
      self.scale = scale

    def __hash__(self):
      return hash(self.scale)

    def __eq__(self, other):
      return isinstance(other, Model) and other.scale == self.scale

    def apply(self, x):
      return lax.mul(x, float(self.scale))

  apply = jax.jit(Model.apply, static_argnums=0)
  assert float(apply(Model(2), 3.0)) == 6.0
  assert float(apply(Model(3), 3.0)) == 9.0
  assert apply._cache_size() == 2


def test_make_jaxpr_static_argnums_and_return_shape():
  def f(x, n):
    return lax.mul(x, float(n)), lax.convert_element_type(x, np.int32)

  jaxpr, shapes = jax.make_jaxpr(f, static_argnums=(1,), return_shape=True)(
      np.ones((2,), f32), 3)
  assert "mul a 3.0:f32[]" in str(jaxpr)
  assert shapes[0] == jax.ShapeDtypeStruct((2,), np.float32)
  assert shapes[1] == jax.ShapeDtypeStruct((2,), np.int32)


def test_eval_shape_with_shape_dtype_structs():
  def f(x, y):
    return {"s": lax.add(x, y), "c": lax.convert_element_type(x, np.int8)}
  spec = jax.ShapeDtypeStruct((3, 4), np.float32)
  out = jax.eval_shape(f, spec, spec)
  assert out["s"].shape == (3, 4) and out["s"].dtype == np.float32
  assert out["c"].dtype == np.int8
  assert repr(spec) == "ShapeDtypeStruct(shape=(3, 4), dtype=float32)"


def test_eval_shape_runs_no_flops():
  calls = []

  def f(x):
    calls.append(type(x).__name__)
    return lax.sin(x)
  jax.eval_shape(f, np.ones(5, f32))
  assert calls == ["DynamicJaxprTracer"]


def test_trace_stage_with_shape_dtype_struct():
  def f(x, y):
    return lax.add(lax.mul(2, x), y)

  i32 = jax.ShapeDtypeStruct((), np.dtype("int32"))
  traced = jax.jit(f).trace(i32, i32)
  # Golden from JAX 0.10.2 for the seed's AOT example.
  assert str(traced.jaxpr) == """\
{ lambda ; a:i32[] b:i32[]. let
    c:i32[] = mul 2:i32[] a
    d:i32[] = add c b
  in (d,) }"""
  assert traced.out_info == jax.ShapeDtypeStruct((), np.int32)


def test_jit_of_python_scalars_is_weak_traced():
  jaxpr = jax.make_jaxpr(jax.jit(lambda x: x))(3)
  assert "a:i32[]" in str(jaxpr)


def test_jit_wrapper_has_function_metadata():
  def my_function(x):
    """Doc."""
    return x
  g = jax.jit(my_function)
  assert g.__name__ == "my_function" and g.__doc__ == "Doc."
  assert g.__wrapped__ is my_function


def test_four_threads_calling_jitted_functions():
  import threading
  f = jax.jit(lambda x: lax.mul(x, x))
  errors = []

  def work(i):
    try:
      for _ in range(20):
        v = f(np.full(3, i, f32))
        assert np.all(np.asarray(v) == i * i)
    except Exception as e:  # noqa: BLE001
      errors.append(e)
  threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
def test_python_scalars_come_back_as_arrays_in_every_executor(executor):
  """An interpreted call (the tiered first call) returns what the compiled
  call returns: Arrays with the weak type, never the Python scalar passed in."""
  with jax.config.override("openjax_executor", executor):
    for f, arg in ((lambda x: x, 1), (lambda x: x, 1.5), (lambda x: (x, 2), 1)):
      outs = jax.tree_util.tree_leaves(jax.jit(f)(arg))
      for out in outs:
        assert isinstance(out, jax.Array) and out.weak_type and out.shape == ()
