"""Sharded jit: the SPMD partition of a jitted program over 1, 2, 4, 8 and
20 CPU devices (control/spmd.py), against NumPy values and JAX 0.10.2's
printed shardings; in_shardings/out_shardings, with_sharding_constraint,
Auto and Explicit axes, grad and vmap, the AOT stages, uneven shapes."""
import contextlib
import time

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from openjax._src.control.spmd import SpmdPlan
from openjax._src.core.sharding import IndivisibleError


@pytest.fixture(params=["interpreter", "iree"])
def executor(request):
  """Both executors: the per-device programs interpreted, and compiled."""
  before = jax.config.read("openjax_executor")
  jax.config.update("openjax_executor", request.param)
  yield request.param
  jax.config.update("openjax_executor", before)


@contextlib.contextmanager
def cpu_devices(n: int):
  jax.config.update("jax_num_cpu_devices", n)
  try:
    yield jax.devices()
  finally:
    jax.config.update("jax_num_cpu_devices", -1)


def plans(f) -> list:
  """The SPMD plans a jitted function made."""
  return [p for e in f._cache.values() for p in e.spmd.values() if isinstance(p, SpmdPlan)]


def chain(x):
  for _ in range(3):
    x = jnp.sin(x) * 1.5 + jnp.cos(x)
  return x


def np_chain(x):
  for _ in range(3):
    x = np.sin(x) * 1.5 + np.cos(x)
  return x


@pytest.mark.parametrize("n", [1, 2, 4, 8])
def test_elementwise_chain_runs_on_every_device_without_a_gather(n, executor):
  with cpu_devices(n) as devices:
    mesh = jax.make_mesh((n,), ("x",))
    value = np.linspace(-3, 3, 16 * 6, dtype=np.float32).reshape(16, 6)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    f = jax.jit(chain)
    out = f(x)
    assert out.sharding == NamedSharding(mesh, P("x", None))
    assert str(jax.typeof(out)) == "float32[16@x,6]"   # JAX 0.10.2, also on 1 device
    shards = out.addressable_shards
    assert [s.device for s in shards] == devices
    for s in shards:
      assert s.data.devices() == {s.device} and s.data.shape == (16 // n, 6)
      np.testing.assert_allclose(np.asarray(s.data), np_chain(value)[s.index], rtol=1e-5)
    if n > 1:
      (plan,) = plans(f)
      assert [kind for kind, *_ in plan.steps] == ["segment"]   # no collective


def mlp_loss(params, x, y):
  h = x
  for w, b in params[:-1]:
    h = jnp.tanh(h @ w + b)
  w, b = params[-1]
  return jnp.mean((h @ w + b - y) ** 2)


def mlp_step(params, x, y):
  loss, grads = jax.value_and_grad(mlp_loss)(params, x, y)
  return jax.tree_util.tree_map(lambda p, g: p - 0.1 * g, params, grads), loss


def mlp_data(rng):
  sizes = (6, 16, 8, 3)
  params = [(rng.standard_normal((m, k)).astype(np.float32) / np.sqrt(m),
             rng.standard_normal(k).astype(np.float32) * 0.1)
            for m, k in zip(sizes[:-1], sizes[1:])]
  return params, rng.standard_normal((16, 6)).astype(np.float32), \
      rng.standard_normal((16, 3)).astype(np.float32)


@pytest.mark.parametrize("n", [2, 4, 8])
def test_data_parallel_train_step_matches_one_device(n, executor):
  params, x, y = mlp_data(np.random.default_rng(0))
  ref_params, ref_loss = jax.jit(mlp_step)(params, x, y)
  with cpu_devices(n):
    mesh = jax.make_mesh((n,), ("x",))
    put = lambda v, *spec: jax.device_put(v, NamedSharding(mesh, P(*spec)))
    step = jax.jit(mlp_step)
    sparams = jax.tree_util.tree_map(lambda p: put(p), params)
    new, loss = step(sparams, put(x, "x"), put(y, "x"))
    np.testing.assert_allclose(float(loss), float(ref_loss), rtol=1e-5)
    for a, b in zip(jax.tree_util.tree_leaves(new), jax.tree_util.tree_leaves(ref_params)):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-5, atol=1e-6)
      assert a.sharding.is_fully_replicated and a.sharding.mesh == mesh
    (plan,) = plans(step)
    # Every gradient is summed over the batch's devices in one host step.
    kinds = [kind for kind, *_ in plan.steps]
    assert kinds[0] == kinds[-1] == "segment" and kinds.count("segment") == 2


def test_grad_and_vmap_of_sharded_programs():
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    value = np.linspace(0, 1, 8 * 5, dtype=np.float32).reshape(8, 5)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    g = jax.jit(jax.grad(lambda x: jnp.sum(jnp.sin(x) ** 2)))(x)
    assert g.sharding == NamedSharding(mesh, P("x", None))
    np.testing.assert_allclose(np.asarray(g), 2 * np.sin(value) * np.cos(value), rtol=1e-5)
    per_row = lambda v: jnp.sum(jnp.sin(v) * v) + v[0] ** 2
    out = jax.jit(jax.vmap(per_row))(x)
    assert out.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_allclose(np.asarray(out), (np.sin(value) * value).sum(1) + value[:, 0] ** 2,
                               rtol=1e-5)
    out2 = jax.vmap(jax.jit(per_row))(x)
    np.testing.assert_allclose(np.asarray(out2), np.asarray(out), rtol=1e-6)


def test_seed_example_on_20_devices_runs_quickly():
  with cpu_devices(20) as devices:
    assert len(devices) == 20
    mesh = jax.make_mesh((20, 1), ("x", "y"))
    value = np.arange(200.0, dtype=np.float32).reshape(40, 5) / 100
    arr = jax.device_put(value, NamedSharding(mesh, P("x", "y")))
    func_vmap = jax.jit(jax.vmap(lambda v: jnp.sum(jnp.sin(v) * v) + v[0] ** 2, in_axes=0))
    t0 = time.perf_counter()
    out = func_vmap(arr)
    out.block_until_ready()
    first = time.perf_counter() - t0
    # JAX 0.10.2 prints these.
    assert str(out.sharding) == ("NamedSharding(mesh=Mesh('x': 20, 'y': 1, axis_types=(Explicit, "
                                 "Explicit)), spec=P('x',), memory_kind=device)")
    assert str(jax.typeof(out)) == "float32[40@x]"
    np.testing.assert_allclose(np.asarray(out), (np.sin(value) * value).sum(1)
                               + value[:, 0] ** 2, rtol=1e-5)
    t0 = time.perf_counter()
    func_vmap(arr).block_until_ready()
    assert time.perf_counter() - t0 < 2.0 and first < 60   # 20 devices on 2 cores


def test_in_and_out_shardings_over_auto_axes():
  with cpu_devices(4):
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
    value = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    f = lambda a: jnp.tanh(a) @ a.T
    g = jax.jit(f, in_shardings=NamedSharding(mesh, P("x", "y")),
                out_shardings=NamedSharding(mesh, P("y")))
    out = g(value)
    np.testing.assert_allclose(np.asarray(out), np.tanh(value) @ value.T, rtol=1e-5)
    # JAX 0.10.2 reports the spec as given.
    assert out.sharding == NamedSharding(mesh, P("y"))
    assert all(s.data.shape == (4, 8) for s in out.addressable_shards)
    with jax.set_mesh(mesh):   # bare specs refer to the mesh in context
      h = jax.jit(lambda a: a * 2, in_shardings=P("x"), out_shardings=P(None, "y"))
      out = h(value)
    assert out.sharding.spec == P(None, "y")
    np.testing.assert_array_equal(np.asarray(out), value * 2)


def test_with_sharding_constraint_inside_jit_partitions_the_call():
  with cpu_devices(4):
    mesh = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto, AxisType.Auto))
    value = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    f = lambda a: jax.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P("x", None))) + 1
    # JAX 0.10.2's printout.
    assert str(jax.make_jaxpr(f)(value)) == (
        "{ lambda ; a:f32[8,4]. let\n"
        "    b:f32[8,4] = mul a 2.0:f32[]\n"
        "    c:f32[8,4] = sharding_constraint[\n"
        "      context_mesh=Mesh()\n"
        "      layout=None\n"
        "      sharding=NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Auto, Auto)), "
        "spec=P('x', None), memory_kind=device)\n"
        "      unconstrained_dims=frozenset({})\n"
        "    ] b\n"
        "    d:f32[8,4] = add c 1.0:f32[]\n"
        "  in (d,) }")
    out = jax.jit(f)(value)
    assert out.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(out), value * 2 + 1)
    g = jax.jit(jax.grad(lambda a: jnp.sum(
        jax.lax.with_sharding_constraint(a, NamedSharding(mesh, P("x"))) ** 2)))(value)
    assert g.sharding.spec == P("x")
    np.testing.assert_allclose(np.asarray(g), 2 * value)
    # Outside jit it moves the data; over Explicit axes JAX asks for reshard.
    eager = jax.lax.with_sharding_constraint(value, NamedSharding(mesh, P("y")))
    assert eager.sharding.spec == P("y", None)
    explicit = jax.make_mesh((2, 2), ("x", "y"))
    with pytest.raises(ValueError, match="You probably meant to use `reshard` API"):
      jax.lax.with_sharding_constraint(value, NamedSharding(explicit, P("x")))


def test_partial_sums_over_auto_axes_are_all_reduced(executor):
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    value = np.arange(32.0, dtype=np.float32).reshape(8, 4) / 10
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    f = jax.jit(lambda a: (a.T @ a, jnp.max(a), jnp.exp(a).sum(0) * a[0]))
    gram, top, scaled = f(x)
    np.testing.assert_allclose(np.asarray(gram), value.T @ value, rtol=1e-5)
    assert float(top) == value.max()
    np.testing.assert_allclose(np.asarray(scaled), np.exp(value).sum(0) * value[0], rtol=1e-5)
    # A partial sum constrained split (a reduce-scatter), and a split value
    # constrained along another dimension (an all-to-all).
    g = jax.jit(lambda a: (
        jax.lax.with_sharding_constraint(a.T @ a, NamedSharding(mesh, P("x"))),
        jax.lax.with_sharding_constraint(a * 2, NamedSharding(mesh, P(None, "x")))))
    scattered, moved = g(x)
    assert scattered.sharding.spec == P("x") and moved.sharding.spec == P(None, "x")
    assert [s.data.shape for s in scattered.addressable_shards] == [(1, 4)] * 4
    np.testing.assert_allclose(np.asarray(scattered), value.T @ value, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(moved), value * 2, rtol=1e-6)


def test_lowered_text_and_compiled_shardings_as_jax():
  with cpu_devices(4):
    mesh = jax.make_mesh((2, 2), ("x", "y"))
    value = np.ones((8, 4), np.float32)
    x = jax.device_put(value, NamedSharding(mesh, P("x", "y")))
    lowered = jax.jit(lambda a: a * 2).lower(x)
    text = lowered.as_text()
    # JAX 0.10.2's module header, mesh and signature.
    assert 'attributes {mhlo.num_partitions = 4 : i32, mhlo.num_replicas = 1 : i32} {' in text
    assert ('  sdy.mesh @mesh = <["x"=2, "y"=2]> {stablehlo.mesh = {axes = [{name = "x", size '
            '= 2 : i64}, {name = "y", size = 2 : i64}]}}') in text
    assert ('@main(%arg0: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})'
            ' -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>})') in text
    compiled = lowered.compile()
    s = NamedSharding(mesh, P("x", "y"))
    assert compiled.input_shardings == ((s,), {}) and compiled.output_shardings == s
    out = compiled(x)
    assert out.sharding == s
    np.testing.assert_array_equal(np.asarray(out), value * 2)
    shape = jax.ShapeDtypeStruct((8, 4), np.float32, sharding=s)
    assert jax.jit(lambda a: a + 1).lower(shape).compile().output_shardings == s


def test_uneven_shapes():
  with cpu_devices(4):
    auto = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    # JAX 0.10.2 raises for every uneven split, in device_put and jit alike.
    with pytest.raises(IndivisibleError, match="partitioned 4 times"):
      jax.device_put(np.arange(10.0), NamedSharding(auto, P("x")))
    with pytest.raises(IndivisibleError, match="partitioned 4 times"):
      jax.jit(lambda a: a * 2, in_shardings=NamedSharding(auto, P("x")))(np.arange(10.0))
    explicit = jax.make_mesh((4,), ("x",))
    with pytest.raises(ValueError, match="pad axis 0 to the next multiple of 4 \\(12\\)"):
      jax.device_put(np.arange(10.0), NamedSharding(explicit, P("x")))
    # Uneven values inside a partitioned program over Auto axes are whole.
    x = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(auto, P("x")))
    out = jax.jit(lambda a: jnp.sin(a[:6]) * 2)(x)
    np.testing.assert_allclose(np.asarray(out), np.sin(np.arange(6.0)) * 2, rtol=1e-6)
    # The padding solution over Explicit axes.
    padded = jax.device_put(np.pad(np.arange(10.0, dtype=np.float32), (0, 2)),
                            NamedSharding(explicit, P("x")))
    y = jax.jit(jnp.cos)(padded)
    np.testing.assert_allclose(np.asarray(jax.reshard(y, NamedSharding(explicit, P())))[:10],
                               np.cos(np.arange(10.0)), rtol=1e-6)


def test_introduction_to_parallel_programming_examples():
  # The sharded-array and sharded-jit examples of JAX's "Introduction to
  # parallel programming", as written (jax.make_mesh: Explicit axes), with
  # the values and layouts JAX 0.10.2 gives.
  with cpu_devices(8):
    arr = jnp.arange(32.0).reshape(4, 8)
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    sharding = jax.sharding.NamedSharding(mesh, P("x", "y"))
    arr_sharded = jax.device_put(arr, sharding)

    @jax.jit
    def f_elementwise(x):
      return 2 * jnp.sin(x) + 1
    result = f_elementwise(arr_sharded)
    assert result.sharding == arr_sharded.sharding

    @jax.jit
    def f_contract(x):
      return x.sum(axis=0)
    result = f_contract(arr_sharded)
    assert result.sharding.spec == P("y") and [s.device.id for s in result.addressable_shards
                                               if s.index[0].start == 0] == [0, 4]
    np.testing.assert_array_equal(np.asarray(result), np.arange(32.0).reshape(4, 8).sum(0))

    @jax.jit
    def f_contract_2(x):
      out = x.sum(axis=0)
      return jax.lax.with_sharding_constraint(out, jax.sharding.NamedSharding(mesh, P("x")))
    with pytest.raises(ValueError, match="can only refer to Auto axes"):
      f_contract_2(arr_sharded)

    @jax.jit
    def layer(x, weights, bias):
      return jax.nn.sigmoid(x @ weights + bias)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(32,))
    weights = rng.normal(size=(32, 4))
    bias = rng.normal(size=(4,))
    expected = 1 / (1 + np.exp(-(x @ weights + bias)))
    np.testing.assert_allclose(np.asarray(layer(x, weights, bias)), expected, rtol=1e-5)
    # Over Auto axes (the tutorial's meaning before Explicit became the
    # default): the contraction over the split axis is all-reduced.
    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))
    sharding = jax.sharding.NamedSharding(mesh, P("x"))
    out = layer(jax.device_put(x, sharding), jax.device_put(weights, sharding), bias)
    np.testing.assert_allclose(np.asarray(out), expected, rtol=1e-5)

    @jax.jit
    def layer_auto(x, weights, bias):
      x = jax.lax.with_sharding_constraint(x, sharding)
      weights = jax.lax.with_sharding_constraint(weights, sharding)
      return layer(x, weights, bias)
    np.testing.assert_allclose(np.asarray(layer_auto(x, weights, bias)), expected, rtol=1e-5)
    # A constraint over another mesh of the same devices.
    auto24 = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    a = jax.device_put(arr, NamedSharding(auto24, P("x", "y")))
    out = jax.jit(lambda v: jax.lax.with_sharding_constraint(v.sum(0), sharding))(a)
    assert out.sharding == sharding
    np.testing.assert_array_equal(np.asarray(out), np.arange(32.0).reshape(4, 8).sum(0))


def test_grad_over_explicit_axes_types_cotangents_as_jax():
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    xv = np.linspace(0, 1, 32, dtype=np.float32).reshape(8, 4)
    wv = np.ones((4, 3), np.float32) / 3
    x = jax.device_put(xv, NamedSharding(mesh, P("x")))
    w = jax.device_put(wv, NamedSharding(mesh, P()))
    loss = lambda w, x: jnp.mean(jnp.tanh(x @ w) ** 2)
    with jax.set_mesh(mesh):
      jaxpr = str(jax.make_jaxpr(jax.grad(loss))(w, x))
      eager, jitted = jax.grad(loss)(w, x), jax.jit(jax.grad(loss))(w, x)
    # JAX 0.10.2: the mean's cotangent is broadcast split as its operand, and
    # the weight gradient contracts the split batch (a partial sum).
    assert "f32[8@x,3] = broadcast_in_dim" in jaxpr
    assert "o:f32[3,4] = dot_general" in jaxpr or "f32[3,4] = dot_general" in jaxpr
    t = np.tanh(xv @ wv)
    ref = xv.T @ (2 * t * (1 - t ** 2) / t.size)
    for g in (eager, jitted):
      assert str(jax.typeof(g)) == "float32[4,3]"
      np.testing.assert_allclose(np.asarray(g), ref, rtol=1e-5)


def test_calls_inside_are_partitioned_through():
  # jit, custom_jvp/custom_vjp and checkpoint calls compute their
  # sub-jaxprs: the partition sees through them (no gather).
  @jax.custom_jvp
  def softsin(x):
    return jnp.sin(x)
  softsin.defjvp(lambda primals, tangents: (softsin(primals[0]),
                                            jnp.cos(primals[0]) * tangents[0]))

  @jax.custom_vjp
  def double(x):
    return 2 * x
  double.defvjp(lambda x: (2 * x, None), lambda _, g: (2 * g,))

  f = jax.jit(lambda x: jax.checkpoint(lambda v: jax.jit(softsin)(double(v)))(x) + 1)
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    value = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
    out = f(jax.device_put(value, NamedSharding(mesh, P("x"))))
    assert out.sharding == NamedSharding(mesh, P("x", None))
    np.testing.assert_allclose(np.asarray(out), np.sin(2 * value) + 1, rtol=1e-6)
    (plan,) = plans(f)
    assert [kind for kind, *_ in plan.steps] == ["segment"]


def test_in_and_out_shardings_as_pytree_prefixes():
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
    s, r = NamedSharding(mesh, P("x")), NamedSharding(mesh, P())
    x = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    out = jax.jit(lambda a, b: a + b, in_shardings=(s, None))(x, x)
    assert out.sharding.spec == P("x") and np.array_equal(np.asarray(out), 2 * x)
    out = jax.jit(lambda a: {"u": a, "v": a * 2}, out_shardings={"u": s, "v": r})(x)
    assert out["u"].sharding.spec == P("x") and out["v"].sharding.spec == P()
    out = jax.jit(lambda d: d["a"] * d["b"], in_shardings=({"a": s, "b": s},))({"a": x, "b": x})
    assert out.sharding.spec == P("x") and np.array_equal(np.asarray(out), x * x)
    out = jax.jit(lambda a, c: a * c, in_shardings=(s, None))(x, 3.0)
    assert np.array_equal(np.asarray(out), x * 3)
    # JAX 0.10.2's message.
    with pytest.raises(ValueError, match="pjit in_shardings is the wrong length: got a tuple or "
                                         "list of length 1 for an args tuple of length 2"):
      jax.jit(lambda a, b: a + b, in_shardings=(s,))(x, x)


def test_a_library_call_inlined_twice_keeps_its_calls_apart(executor):
  """The partition inlines nested calls; ``relu``'s cached jaxpr is the same
  object for every layer of one shape, and each inlining must get its own
  values: jit(grad) of a data-parallel MLP gave wrong middle-layer weight
  gradients (the second relu's residual overwrote the first's)."""
  rng = np.random.default_rng(0)
  sizes = [3, 4, 4, 2]
  params = [(rng.standard_normal((m, n)).astype(np.float32),
             rng.standard_normal(n).astype(np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
  x = rng.standard_normal((4, 3)).astype(np.float32)
  y = rng.standard_normal((4, 2)).astype(np.float32)

  def loss(params, x, y):
    h = x
    for w, b in params:
      out = jnp.dot(h, w) + b
      h = jax.nn.relu(out)
    return jnp.mean(jnp.sum((out - y) ** 2, axis=-1))
  expected = jax.grad(loss)(params, x, y)
  with cpu_devices(2):
    mesh = jax.make_mesh((2,), ("b",))
    xs, ys = (jax.device_put(a, NamedSharding(mesh, P("b"))) for a in (x, y))
    ps = jax.device_put(params, NamedSharding(mesh, P()))
    got = jax.jit(jax.grad(loss))(ps, xs, ys)
  for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5, atol=1e-5)
