"""jax.pmap: every collective over 1, 2, 4 and 8 devices against NumPy
(per-device run, and inside jit), pmap's arguments (in_axes, out_axes,
static_broadcasted_argnums, devices, axis_size, backend), its errors,
results sharded one row per device, composition with vmap, jit and grad
(finite differences), and collective transposes (psum's is psum,
all_gather's psum_scatter, ppermute's the inverse permutation)."""
import contextlib
import functools
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.sharding import NamedSharding, PartitionSpec as P
from openjax._src.control.shard_map_plan import plan_of
from openjax._src.core.sharding import IndivisibleError
from openjax._src.runtime import executable
from openjax._src.runtime.iree_device import host_cores


@contextlib.contextmanager
def cpu_devices(n: int):
  jax.config.update("jax_num_cpu_devices", n)
  try:
    yield jax.devices()
  finally:
    jax.config.update("jax_num_cpu_devices", -1)


@pytest.fixture(params=[1, 2, 4, 8], ids=lambda n: f"{n}dev")
def ndev(request):
  with cpu_devices(request.param):
    yield request.param


def _x(n, *rest, dtype=np.float32, seed=0):
  rng = np.random.default_rng(seed)
  return rng.standard_normal((n, *rest)).astype(dtype)


def _bcast(v, n):
  return np.broadcast_to(v, (n, *np.shape(v)))


def _ppermute_ref(x, perm):
  out = np.zeros_like(x)
  for s, t in perm:
    out[t] = x[s]
  return out


def _all_to_all_ref(x, split_axis, concat_axis):
  # member m's block x[m] is split along split_axis into n chunks; member j
  # gets chunk j of every member, stacked (non-tiled) at concat_axis.
  n = x.shape[0]
  return np.stack([np.stack([np.take(x[m], j, axis=split_axis) for m in range(n)],
                            axis=concat_axis) for j in range(n)])


def _cases(n):
  cycle = [(k, (k + 1) % n) for k in range(n)]
  partial = [(k, k + 1) for k in range(n - 1)]
  return {
      "psum": (lambda v: lax.psum(v, "i"), _x(n, 3), lambda x: _bcast(x.sum(0), n)),
      "pmean": (lambda v: lax.pmean(v, "i"), _x(n, 3), lambda x: _bcast(x.mean(0), n)),
      "pmax": (lambda v: lax.pmax(v, "i"), _x(n, 3), lambda x: _bcast(x.max(0), n)),
      "pmin": (lambda v: lax.pmin(v, "i"), _x(n, 3), lambda x: _bcast(x.min(0), n)),
      "psum_int": (lambda v: lax.psum(v, "i"), _x(n, 3, dtype=np.int32),
                   lambda x: _bcast(x.sum(0), n)),
      "all_gather": (lambda v: lax.all_gather(v, "i"), _x(n, 3), lambda x: _bcast(x, n)),
      "all_gather_axis1": (lambda v: lax.all_gather(v, "i", axis=1), _x(n, 3),
                           lambda x: _bcast(x.T, n)),
      "all_gather_tiled": (lambda v: lax.all_gather(v, "i", tiled=True), _x(n, 2, 3),
                           lambda x: _bcast(x.reshape(n * 2, 3), n)),
      "psum_scatter": (lambda v: lax.psum_scatter(v, "i"), _x(n, n, 3),
                       lambda x: x.sum(0)),
      "psum_scatter_tiled": (lambda v: lax.psum_scatter(v, "i", tiled=True), _x(n, 2 * n),
                             lambda x: x.sum(0).reshape(n, 2)),
      "all_to_all": (lambda v: lax.all_to_all(v, "i", 0, 0), _x(n, n, 2),
                     lambda x: _all_to_all_ref(x, 0, 0)),
      "all_to_all_1_0": (lambda v: lax.all_to_all(v, "i", 1, 0), _x(n, 3, n),
                         lambda x: _all_to_all_ref(x, 1, 0)),
      "ppermute_cycle": (lambda v: lax.ppermute(v, "i", cycle), _x(n, 3),
                         lambda x: _ppermute_ref(x, cycle)),
      "ppermute_partial": (lambda v: lax.ppermute(v, "i", partial), _x(n, 3),
                           lambda x: _ppermute_ref(x, partial)),
      "pshuffle": (lambda v: lax.pshuffle(v, "i", list(reversed(range(n)))), _x(n, 3),
                   lambda x: x[::-1]),
      "axis_index": (lambda v: v + lax.axis_index("i"), np.zeros(n, np.int32),
                     lambda x: np.arange(n, dtype=np.int32)),
  }


CASES = list(_cases(4))


@pytest.mark.parametrize("case", CASES)
def test_collective_in_pmap_matches_numpy(ndev, case):
  f, x, ref = _cases(ndev)[case]
  out = jax.pmap(f, axis_name="i")(x)
  np.testing.assert_allclose(np.asarray(out), ref(x), rtol=1e-5, atol=1e-5)
  assert isinstance(out.sharding, NamedSharding)
  assert out.sharding.spec == P("i") and len(out.sharding.device_set) == ndev


@pytest.mark.parametrize("case", CASES)
def test_collective_in_jitted_pmap_matches_numpy(ndev, case):
  f, x, ref = _cases(ndev)[case]
  out = jax.jit(jax.pmap(f, axis_name="i"))(x)
  np.testing.assert_allclose(np.asarray(out), ref(x), rtol=1e-5, atol=1e-5)


def test_psum_axis_index_groups():
  with cpu_devices(4):
    x = _x(4, 3)
    out = jax.pmap(lambda v: lax.psum(v, "i", axis_index_groups=[[0, 1], [2, 3]]),
                   axis_name="i")(x)
    ref = np.concatenate([_bcast(x[:2].sum(0), 2), _bcast(x[2:].sum(0), 2)])
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5)


def test_in_axes_out_axes_and_broadcast_argument():
  with cpu_devices(4):
    x = _x(3, 4)   # mapped along axis 1
    y = _x(3, seed=1)
    f = jax.pmap(lambda a, b: a * b, axis_name="i", in_axes=(1, None), out_axes=1)
    np.testing.assert_allclose(np.asarray(f(x, y)), x * y[:, None], rtol=1e-6)
    g = jax.pmap(lambda a: lax.psum(a, "i"), axis_name="i", out_axes=None)
    np.testing.assert_allclose(np.asarray(g(_x(4, 2))), _x(4, 2).sum(0), rtol=1e-5)
    # pytrees: dict in, tuple out
    h = jax.pmap(lambda d: (d["a"] + 1, d["b"] * 2))
    a, b = h({"a": np.ones((4, 2), np.float32), "b": np.arange(4.0, dtype=np.float32)})
    np.testing.assert_array_equal(np.asarray(a), np.full((4, 2), 2.0))
    np.testing.assert_array_equal(np.asarray(b), 2 * np.arange(4.0))


def test_static_broadcasted_argnums_and_axis_size():
  with cpu_devices(2):
    f = jax.pmap(lambda x, k: x * k, static_broadcasted_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(np.ones((2, 3), np.float32), 3)),
                                  np.full((2, 3), 3.0))
    g = jax.pmap(lambda: lax.axis_index("i"), axis_name="i", axis_size=2)
    np.testing.assert_array_equal(np.asarray(g()), [0, 1])


def test_devices_and_backend_arguments():
  with cpu_devices(4) as devs:
    f = jax.pmap(lambda x: x + 1, devices=[devs[2], devs[3]], backend="cpu")
    out = f(np.zeros((2, 2), np.float32))
    assert out.sharding.device_set == {devs[2], devs[3]}
    np.testing.assert_array_equal(np.asarray(out), np.ones((2, 2)))
    with pytest.raises(RuntimeError, match="Unknown backend"):
      jax.pmap(lambda x: x, backend="tpu")(np.zeros((2,), np.float32))


def test_mapped_size_larger_than_device_count_raises():
  # JAX 0.10.2's errors: the axis split unevenly over the devices there are,
  # or several rows per device where the body squeezes one.
  with cpu_devices(4):
    with pytest.raises(IndivisibleError, match=re.escape(
        "Sharding NamedSharding(mesh=Mesh('i': 4, axis_types=(Auto,)), spec=P('i',), "
        "memory_kind=device) implies that array axis 0 is partitioned 4 times, but the "
        "dimension size is 5 (full shape: (5, 2), per-dimension tiling factors: [4, 1] "
        "should evenly divide the shape)")):
      jax.pmap(lambda x: x, axis_name="i")(np.zeros((5, 2), np.float32))
  with cpu_devices(1):
    with pytest.raises(ValueError, match=re.escape(
        "cannot select an axis to squeeze out which has size not equal to one, got "
        "shape=(2,) and dimensions=(0,)")):
      jax.pmap(lambda x: x)(np.zeros(2, np.float32))


def test_inconsistent_mapped_sizes_raise():
  with cpu_devices(4):
    with pytest.raises(ValueError, match="pmap got inconsistent sizes|inconsistent"):
      jax.pmap(lambda a, b: a + b)(np.zeros((2,), np.float32), np.zeros((3,), np.float32))


def test_results_are_one_shard_per_device():
  with cpu_devices(4) as devs:
    out = jax.pmap(lambda x: 2 * x)(np.arange(8.0, dtype=np.float32).reshape(4, 2))
    shards = out.addressable_shards
    assert [s.device for s in shards] == devs
    for k, s in enumerate(shards):
      np.testing.assert_array_equal(np.asarray(s.data), [[4.0 * k, 4.0 * k + 2]])
    # fed back in, the shards are reused without gathering
    again = jax.pmap(lambda x: x + 1)(out)
    np.testing.assert_array_equal(np.asarray(again), 2 * np.arange(8.0).reshape(4, 2) + 1)


def test_pmap_of_vmap_and_vmap_of_pmap():
  with cpu_devices(2):
    x = _x(2, 3, 4)
    f = jax.pmap(jax.vmap(lambda v: lax.psum(v, "i") * v, axis_name="j"), axis_name="i")
    np.testing.assert_allclose(np.asarray(f(x)), x.sum(0) * x, rtol=1e-5)
    inner = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")
    y = _x(3, 2, 4)
    out = jax.vmap(inner)(y)
    np.testing.assert_allclose(np.asarray(out), _bcast_rows(y), rtol=1e-5)
    # a collective over the vmap axis and the pmap axis at once
    both = jax.pmap(jax.vmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"),
                    axis_name="i")
    np.testing.assert_allclose(np.asarray(both(x)), np.broadcast_to(x.sum((0, 1)), x.shape),
                               rtol=1e-5)


def _bcast_rows(y):
  return np.broadcast_to(y.sum(1, keepdims=True), y.shape)


def test_pmap_of_jit():
  with cpu_devices(2):
    f = jax.pmap(jax.jit(lambda v: lax.psum(jnp.sin(v), "i")), axis_name="i")
    x = _x(2, 3)
    np.testing.assert_allclose(np.asarray(f(x)), _bcast(np.sin(x).sum(0), 2), rtol=1e-5)


def _fd_grad(f, x, eps=1e-3):
  g = np.zeros_like(x, dtype=np.float64)
  for idx in np.ndindex(x.shape):
    e = np.zeros_like(x)
    e[idx] = eps
    g[idx] = (float(f(x + e)) - float(f(x - e))) / (2 * eps)
  return g


@pytest.mark.parametrize("name,body", [
    ("psum", lambda v: lax.psum(v, "i") * jnp.sin(v)),
    ("all_gather", lambda v: jnp.cos(lax.all_gather(v, "i")) * v[0]),
    ("psum_scatter", lambda v: jnp.sin(lax.psum_scatter(v, "i"))),
    ("ppermute", lambda v: lax.ppermute(v, "i", [(0, 1), (1, 0)]) * v),
    ("all_to_all", lambda v: jnp.sin(lax.all_to_all(v, "i", 0, 0)) * v),
    ("pmean", lambda v: jnp.exp(lax.pmean(v, "i"))),
])
def test_grad_through_pmap_matches_finite_differences(name, body):
  with cpu_devices(2):
    f = jax.pmap(body, axis_name="i")
    x = _x(2, 2, seed=3)

    def loss(v):
      return jnp.sum(f(v) ** 2)
    g = jax.grad(loss)(x)
    np.testing.assert_allclose(np.asarray(g), _fd_grad(loss, x), rtol=2e-2, atol=2e-2)


def test_collective_transposes():
  with cpu_devices(2):
    x = _x(2, 2, 3)

    def vjp_of(f):
      def per_device(v, ct):
        _, pull = jax.vjp(f, v)
        return pull(ct)[0]
      return jax.pmap(per_device, axis_name="i")

    ct = _x(2, 2, 3, seed=5)
    # psum's transpose is psum
    np.testing.assert_allclose(np.asarray(vjp_of(lambda v: lax.psum(v, "i"))(x, ct)),
                               _bcast(ct.sum(0), 2), rtol=1e-5)
    # all_gather's transpose is psum_scatter
    gct = _x(2, 2, 2, 3, seed=6)
    got = vjp_of(lambda v: lax.all_gather(v, "i"))(x, gct)
    np.testing.assert_allclose(np.asarray(got), gct.sum(0), rtol=1e-5)
    # ppermute's transpose is the inverse permutation
    perm = [(0, 1)]
    got = vjp_of(lambda v: lax.ppermute(v, "i", perm))(x, ct)
    np.testing.assert_allclose(np.asarray(got), _ppermute_ref(ct, [(1, 0)]), rtol=1e-5)


def test_data_parallel_train_step():
  with cpu_devices(2):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((3, 1)).astype(np.float32)
    xs = rng.standard_normal((2, 8, 3)).astype(np.float32)
    ys = rng.standard_normal((2, 8, 1)).astype(np.float32)

    def loss(w, x, y):
      return jnp.mean((x @ w - y) ** 2)

    @functools.partial(jax.pmap, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)
    def step(w, x, y):
      g = lax.pmean(jax.grad(loss)(w, x, y), "batch")
      return w - 0.1 * g

    new_w = step(w, xs, ys)
    x_all, y_all = xs.reshape(16, 3), ys.reshape(16, 1)
    ref = w - 0.1 * (2 * x_all.T @ (x_all @ w - y_all) / 16)
    np.testing.assert_allclose(np.asarray(new_w), ref, rtol=1e-5, atol=1e-6)


def test_nested_pmap_collectives_over_both_axes():
  with cpu_devices(8):
    x = _x(2, 4, 3)
    f = jax.pmap(jax.pmap(lambda v: lax.psum(v, ("i", "j")), axis_name="j"), axis_name="i")
    np.testing.assert_allclose(np.asarray(f(x)), np.broadcast_to(x.sum((0, 1)), x.shape),
                               rtol=1e-5)
    g = jax.pmap(jax.pmap(lambda v: lax.psum(v, "i") + lax.axis_index("j"), axis_name="j"),
                 axis_name="i")
    np.testing.assert_allclose(np.asarray(g(x)),
                               _bcast(x.sum(0), 2) + np.arange(4)[None, :, None], rtol=1e-5)


def test_pmap_lower():
  with cpu_devices(2):
    f = jax.pmap(lambda v, k: lax.psum(v * k, "i"), axis_name="i",
                 static_broadcasted_argnums=1)
    lowered = f.lower(np.ones((2, 3), np.float32), 3)
    assert "func.func public @main" in lowered.as_text()
    np.testing.assert_array_equal(np.asarray(lowered.compile()(np.ones((2, 3), np.float32))),
                                  np.full((2, 3), 6.0))


def test_donate_argnums_deletes_the_donated_input():
  with cpu_devices(2):
    x = jax.pmap(lambda v: v)(np.ones((2, 3), np.float32))
    y = jax.pmap(lambda v: v * 2, donate_argnums=0)(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), np.full((2, 3), 2.0))
    with pytest.raises(RuntimeError):
      np.asarray(x)
    # passed through unchanged: the result stays alive
    x = jax.pmap(lambda v: v)(np.ones((2, 3), np.float32))
    y = jax.pmap(lambda v: v, donate_argnums=0)(x)
    assert x.is_deleted() and not y.is_deleted()
    np.testing.assert_array_equal(np.asarray(y), np.ones((2, 3)))
    # NumPy arguments: nothing to delete
    np.testing.assert_array_equal(
        np.asarray(jax.pmap(lambda v: v + 1, donate_argnums=0)(np.zeros((2, 3), np.float32))),
        np.ones((2, 3)))


def test_pmap_after_a_partial_shard_map_over_an_equal_submesh():
  # A partially manual shard_map over a (1, 2) mesh runs over its sub-mesh of
  # device 0 alone, which equals the mesh a later pmap over device 0 makes:
  # the pmap's results must stay on its own device (meshes are matched by
  # identity, not equality, where shard_map remembers its sub-meshes).
  with cpu_devices(2):
    auto = jax.sharding.AxisType.Auto
    mesh = jax.make_mesh((1, 2), ("i", "j"), axis_types=(auto, auto))
    f = jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i"),
                      axis_names={"i"})
    np.testing.assert_array_equal(np.asarray(f(np.ones((2, 3), np.float32))), 2.0)
  with cpu_devices(1) as devs:
    out = jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i")(np.ones((1, 3), np.float32))
    assert [s.device for s in out.addressable_shards] == list(devs[:1])
    jitted = jax.jit(jax.pmap(lambda v: lax.psum(v, "i"), axis_name="i"))
    out = jitted(np.ones((1, 3), np.float32))
    assert [s.device for s in out.addressable_shards] == list(devs[:1])


def _big_step(w):
  # ~5e8 flops a device: over PER_DEVICE_THREAD_MIN_WORK
  h = jnp.tanh(w @ w)
  return lax.psum(jnp.tanh(h @ w), "i")


@pytest.mark.parametrize("n", [2, 4])
def test_large_per_device_programs_run_on_device_threads(n):
  rng = np.random.default_rng(0)
  w = (rng.standard_normal((n, 512, 512)) / 30).astype(np.float32)
  with cpu_devices(n), jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.pmap(_big_step, axis_name="i")(w)
    np.testing.assert_allclose(np.asarray(out[0]), sum(
        np.tanh(np.tanh(w[k] @ w[k]) @ w[k]) for k in range(n)), rtol=2e-4, atol=2e-4)
    assert [s.device for s in out.addressable_shards] == jax.devices()[:n]
  if host_cores() > 1:
    assert executable._per_device_pool is not None


def test_host_callback_in_a_device_thread_runs_another_spmd_step():
  # A pure_callback in a program running on a device thread may itself run
  # a pmap: it runs its devices' programs in its own thread (no wait for the
  # pool it occupies).
  rng = np.random.default_rng(1)
  w = (rng.standard_normal((2, 512, 512)) / 30).astype(np.float32)
  inner = jax.pmap(_big_step, axis_name="i")

  def host(v):
    return np.asarray(inner(np.stack([np.asarray(v)] * 2))[0]).astype(np.float32)

  def body(v):
    big = _big_step(v)
    return jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), big)

  with cpu_devices(2), jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    out = jax.pmap(body, axis_name="i")(w)
    total = sum(np.tanh(np.tanh(w[k] @ w[k]) @ w[k]) for k in range(2))
    np.testing.assert_allclose(np.asarray(out[1]), 2 * np.tanh(np.tanh(total @ total) @ total),
                               rtol=2e-3, atol=2e-3)


def test_psums_of_a_gradient_meet_the_devices_together():
  # grad over replicated parameters in shard_map puts a psum in the backward
  # pass after each parameter's product, between the other products: the
  # plan moves what reads a psum after the next psums, so they meet once.
  with cpu_devices(2) as devs:
    mesh = jax.sharding.Mesh(np.array(devs), ("i",))

    def loss(w1, w2, w3, x):
      return jnp.sum(jnp.tanh(jnp.tanh(x @ w1) @ w2) @ w3)

    def step(w1, w2, w3, x):
      g = jax.grad(loss, argnums=(0, 1, 2))(w1, w2, w3, x)
      return lax.pmean(g, "i")

    rng = np.random.default_rng(0)
    ws = [rng.standard_normal((4, 4)).astype(np.float32) / 2 for _ in range(3)]
    x = rng.standard_normal((8, 4)).astype(np.float32)
    f = jax.shard_map(step, mesh=mesh, in_specs=(P(), P(), P(), P("i")), out_specs=P())
    closed = jax.make_jaxpr(f)(*ws, x).jaxpr.eqns[0].params["jaxpr"]
    names = [e.primitive.name for e in closed.jaxpr.eqns]
    runs = sum(1 for k, n in enumerate(names) if n.startswith("psum")
               and (k == 0 or not names[k - 1].startswith("psum")))
    kinds = [step[0] for step in plan_of(closed).steps]
    assert kinds.count("allreduce") < runs, (kinds, names)
    with jax.config.override("openjax_executor", "iree"), \
         jax.config.override("openjax_tiered_compilation", False):
      got = jax.jit(f)(*ws, x)
    want = jax.grad(loss, argnums=(0, 1, 2))(*ws, x)
    for a, b in zip(got, want):
      np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


def test_pmean_of_a_pytree_meets_the_devices_once():
  # pmean of a pytree is psum, divide, psum, divide ...: the plan groups the
  # psums into one all-reduce (the divides after it), unless an effect or
  # another collective stands between them.
  with cpu_devices(2) as devs:
    mesh = jax.sharding.Mesh(np.array(devs), ("i",))

    def body(a, b, c, effect):
      if effect:
        a = lax.pmean(a, "i")
        jax.debug.print("{}", a[0])
        b, c = lax.pmean((b, c), "i")
        return a * 2, b + 1, c * c
      a, b, c = lax.pmean((a, b, c), "i")
      return a * 2, b + 1, c * c

    args = [np.arange(8.0, dtype=np.float32).reshape(2, 4) + k for k in range(3)]
    for effect, groups in ((False, 1), (True, 2)):
      f = jax.shard_map(functools.partial(body, effect=effect), mesh=mesh,
                        in_specs=P("i"), out_specs=P())
      closed = jax.make_jaxpr(f)(*args).jaxpr.eqns[0].params["jaxpr"]
      kinds = [step[0] for step in plan_of(closed).steps]
      assert kinds.count("allreduce") == groups, kinds
      with jax.config.override("openjax_executor", "iree"), \
           jax.config.override("openjax_tiered_compilation", False):
        outs = jax.jit(f)(*args)
      means = [a.mean(0, keepdims=True) for a in args]
      for got, want in zip(outs, (means[0] * 2, means[1] + 1, means[2] * means[2])):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-6)
