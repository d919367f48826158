"""jax.shard_map: every collective over 1, 2, 4 and 8 devices against NumPy
(per-device run and under jit), block shapes inside the body, specs over
two mesh axes, the context mesh, check_vma's replication error, grad/vmap/
jit composition, jax.experimental.shard_map, and the jaxpr it stages."""
import functools

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.sharding import Mesh, NamedSharding, PartitionSpec as P
from tests.test_pmap import CASES, _cases, _fd_grad, cpu_devices


@pytest.fixture(params=[1, 2, 4, 8], ids=lambda n: f"{n}dev")
def mesh1(request):
  with cpu_devices(request.param) as devs:
    yield Mesh(np.array(devs), ("i",))


def _per_member(f):
  # pmap's rows as shard_map blocks: a leading dimension of one per device
  return lambda b: f(b[0])[None]


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", CASES)
def test_collective_in_shard_map_matches_numpy(mesh1, case, jit):
  n = mesh1.devices.size
  f, x, ref = _cases(n)[case]
  g = jax.shard_map(_per_member(f), mesh=mesh1, in_specs=P("i"), out_specs=P("i"))
  out = (jax.jit(g) if jit else g)(x)
  np.testing.assert_allclose(np.asarray(out), ref(x), rtol=1e-5, atol=1e-5)


def test_block_shapes_and_two_axis_mesh():
  with cpu_devices(8) as devs:
    mesh = Mesh(np.array(devs).reshape(4, 2), ("x", "y"))
    a = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    shapes = []

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", None))
    def f(block):
      shapes.append(block.shape)
      return lax.psum(block, "y")
    out = f(a)
    assert shapes == [(2, 8)]
    np.testing.assert_allclose(np.asarray(out), a[:, :8] + a[:, 8:])
    assert out.sharding == NamedSharding(mesh, P("x", None))

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P(("x", "y")), out_specs=P(("x", "y")))
    def idx(block):
      return block * 0 + lax.axis_index(("x", "y"))
    np.testing.assert_array_equal(np.asarray(idx(np.zeros(8, np.int32))), np.arange(8))

    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x", "y"), out_specs=P())
    def total(block):
      return lax.psum(block.sum(), ("x", "y"))
    np.testing.assert_allclose(float(total(a)), a.sum(), rtol=1e-6)


def test_matmul_with_psum_scatter_under_context_mesh():
  # The "Manual mode" example of JAX's parallel programming page.
  with cpu_devices(8) as devs:
    mesh = Mesh(np.array(devs).reshape(4, 2), ("X", "Y"))
    x = np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4)
    y = np.arange(4 * 16.0, dtype=np.float32).reshape(4, 16)
    with jax.set_mesh(mesh):
      @jax.shard_map(in_specs=(P(None, "X"), P("X", None)), out_specs=P("X", None))
      def matmul(x_shard, y_shard):
        return lax.psum_scatter(jnp.dot(x_shard, y_shard), "X", tiled=True)
      z = matmul(x, y)
    np.testing.assert_allclose(np.asarray(z), x @ y, rtol=1e-6)


def test_check_vma_replication_error():
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    with pytest.raises(ValueError, match="out_specs which require replication"):
      jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("i"), out_specs=P())(np.arange(6.0))
    # psum makes the value replicated: accepted
    out = jax.shard_map(lambda x: lax.psum(x, "i"), mesh=mesh, in_specs=P("i"),
                        out_specs=P())(np.arange(6.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), [3.0, 5.0, 7.0])
    # check_vma=False: device 0's block
    out = jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("i"), out_specs=P(),
                        check_vma=False)(np.arange(6.0, dtype=np.float32))
    np.testing.assert_allclose(np.asarray(out), [0.0, 1.0, 2.0])


def test_spec_errors():
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    with pytest.raises(ValueError, match="does not have"):
      jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("k"), out_specs=P("k"))(np.ones(2))
    with pytest.raises(ValueError, match="must divide evenly"):
      jax.shard_map(lambda x: x, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(np.ones(3))


def test_grad_vmap_jit_of_shard_map():
  with cpu_devices(4) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    f = jax.shard_map(lambda b: jnp.sin(b) * lax.psum(b, "i"), mesh=mesh, in_specs=P("i"),
                      out_specs=P("i"))
    x = np.random.default_rng(0).standard_normal(8).astype(np.float32)

    def loss(v):
      return jnp.sum(f(v) ** 2)
    np.testing.assert_allclose(np.asarray(jax.grad(loss)(x)), _fd_grad(loss, x), rtol=2e-2,
                               atol=2e-2)
    np.testing.assert_allclose(np.asarray(jax.jit(jax.grad(loss))(x)),
                               np.asarray(jax.grad(loss)(x)), rtol=1e-5)
    xs = np.stack([x, 2 * x])
    np.testing.assert_allclose(np.asarray(jax.vmap(f)(xs)),
                               np.stack([np.asarray(f(x)), np.asarray(f(2 * x))]), rtol=1e-5)
    # replicated input: its cotangent sums the devices' shares
    g = jax.shard_map(lambda w, b: b * w, mesh=mesh, in_specs=(P(), P("i")), out_specs=P("i"))
    gw = jax.grad(lambda w: jnp.sum(g(w, x)))(np.float32(2.0))
    np.testing.assert_allclose(float(gw), x.sum(), rtol=1e-5)


def test_shard_map_in_staged_jaxpr():
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    f = jax.shard_map(lambda b: lax.psum(b, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
    text = str(jax.make_jaxpr(f)(np.ones(4, np.float32)))
    # JAX 0.10.2 prints a psum of a varying value in a check_vma body as psum_invariant.
    assert "shard_map[" in text and "psum_invariant[axes=('i',)]" in text
    assert "b:f32[2]" in text or "f32[2]" in text


def test_experimental_shard_map():
  from openjax.experimental.shard_map import shard_map as old_shard_map
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    with pytest.warns(DeprecationWarning):
      f = old_shard_map(lambda b: lax.psum(b, "i"), mesh, in_specs=P("i"), out_specs=P())
    np.testing.assert_allclose(np.asarray(f(np.arange(4.0, dtype=np.float32))), [2.0, 4.0])


@pytest.mark.parametrize("case", CASES)
def test_eager_collectives_run_in_step_without_threads(monkeypatch, case):
  # An eager body's top-level collective runs every device from the calling
  # thread (record, then serve): no thread of the pool is started for it.
  from openjax._src.control import shard_map_eager

  def no_threads(*args, **kwargs):
    raise AssertionError("eager collective used the thread pool")
  with cpu_devices(4) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    f, x, ref = _cases(4)[case]
    g = jax.shard_map(_per_member(f), mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    monkeypatch.setattr(shard_map_eager._pool, "submit", no_threads)
    np.testing.assert_allclose(np.asarray(g(x)), ref(x), rtol=1e-5, atol=1e-5)


def test_eager_in_step_sums_in_device_order_over_two_axes():
  # psum over both axes of a 4x2 mesh and over each axis alone, with groups:
  # every device's sum of its group, in the group's order (float32 values
  # whose sum depends on the order: the threaded rendezvous' order).
  with cpu_devices(8) as devs:
    mesh = Mesh(np.array(devs).reshape(4, 2), ("x", "y"))
    x = (np.float32(1e8) * (np.arange(8, dtype=np.float32) % 3 - 1)
         + np.arange(8, dtype=np.float32)).reshape(4, 2)

    def body(b):
      return (lax.psum(b, ("x", "y")), lax.psum(b, "x"), lax.psum(b, "y"),
              lax.psum(b, "x", axis_index_groups=[[0, 1], [2, 3]]))
    outs = jax.shard_map(body, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"),
                         check_vma=False)(x)
    flat = x.reshape(-1)
    total = flat[0]
    for v in flat[1:]:
      total = np.float32(total + v)
    np.testing.assert_array_equal(np.asarray(outs[0]), np.full((4, 2), total))
    col = [functools.reduce(lambda a, b: np.float32(a + b), x[:, j]) for j in range(2)]
    np.testing.assert_array_equal(np.asarray(outs[1]), np.tile(col, (4, 1)))
    np.testing.assert_array_equal(np.asarray(outs[2]), np.repeat(x.sum(1, keepdims=True), 2, 1))
    pairs = np.concatenate([np.tile(x[0] + x[1], (2, 1)), np.tile(x[2] + x[3], (2, 1))])
    np.testing.assert_array_equal(np.asarray(outs[3]), pairs)


def test_eager_collectives_of_large_blocks_meet_in_threads(monkeypatch):
  # Blocks past IN_STEP_MAX_ELEMENTS meet in the threaded rendezvous (which
  # splits an all-reduce over the devices' threads); same values.
  from openjax._src.control import shard_map_eager
  submitted = []
  submit = shard_map_eager._pool.submit

  def counted(*args, **kwargs):
    submitted.append(1)
    return submit(*args, **kwargs)
  monkeypatch.setattr(shard_map_eager._pool, "submit", counted)
  with cpu_devices(2) as devs:
    mesh = Mesh(np.array(devs), ("i",))
    n = shard_map_eager.IN_STEP_MAX_ELEMENTS + 1
    x = np.arange(2 * n, dtype=np.float32).reshape(2, n)
    g = jax.shard_map(lambda b: lax.psum(b, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
    np.testing.assert_array_equal(np.asarray(g(x)), x.sum(0, keepdims=True))
    assert submitted
    submitted.clear()
    g(x[:, :8])
    assert not submitted
