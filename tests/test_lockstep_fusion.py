"""A lock-step run (compiled ``pmap``/``shard_map`` whose collectives sit at
the top level) runs an all-reduce and the segment that reads its results as
one program per device (``control/shard_map_lockstep._fused_executable``):
results must equal the interpreted run's and NumPy's, whatever later steps
still read the reduced values."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import shard_map_plan
from openjax.sharding import Mesh, PartitionSpec as P
from tests.test_collectives_compiled import compiled  # noqa: F401 - the fixture
from tests.test_pmap import _bcast, cpu_devices


def _fused_steps(f) -> list:
  """The (plan step index) of every fused all-reduce of ``f``'s plans."""
  plans = [p for p in list(shard_map_plan.plans.values())
           if any(s[0] == "allreduce" for s in p.steps)]
  return [k[1] for p in plans for k in list(p.programs) if k[0] == "fused" and len(k) == 2]


def _x(n, *shape):
  return np.random.default_rng(n).standard_normal((n, *shape)).astype(np.float32)


@pytest.mark.parametrize("n", [2, 4])
def test_psum_then_segment(compiled, n):
  shard_map_plan.plans.clear()
  with cpu_devices(n):
    f = jax.pmap(lambda v: jnp.exp(lax.psum(jnp.sin(v), "i")) * 0.5 + 1, axis_name="i")
    x = _x(n, 3, 5)
    np.testing.assert_allclose(np.asarray(f(x)), _bcast(np.exp(np.sin(x).sum(0)) * 0.5 + 1, n),
                               rtol=1e-5)
    assert _fused_steps(f) == [1]


@pytest.mark.parametrize("prim,ref", [(lax.pmax, np.max), (lax.pmin, np.min)])
def test_pmax_pmin_then_segment(compiled, prim, ref):
  with cpu_devices(2):
    f = jax.pmap(lambda v: prim(v * 2, "i") - v, axis_name="i")
    x = _x(2, 4)
    np.testing.assert_allclose(np.asarray(f(x)), ref(x * 2, axis=0) - x, rtol=1e-6)


def test_reduced_value_read_later_and_returned(compiled):
  # ``s`` is read by the fused segment, by the segment after a second psum and
  # returned: the fused program must hand it on.
  def body(v, w):
    s = lax.psum(v * w, "i")
    t = lax.psum(jnp.tanh(s) + w, "i")
    return t * s, s
  with cpu_devices(2):
    x, w = _x(2, 3), _x(3, 3)[:2]
    out, s = jax.pmap(body, axis_name="i")(x, w)
    s_ref = (x * w).sum(0)
    t_ref = (np.tanh(s_ref)[None] + w).sum(0)
    np.testing.assert_allclose(np.asarray(s), _bcast(s_ref, 2), rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out), _bcast(t_ref * s_ref, 2), rtol=1e-5)


def test_group_over_one_axis_of_two(compiled):
  # psum over 'i' of a 2 x 2 mesh: each device's group is its column.
  with cpu_devices(4) as devices:
    mesh = Mesh(np.array(devices[:4]).reshape(2, 2), ("i", "j"))
    f = jax.jit(jax.shard_map(lambda v: lax.psum(v, "i") * 3 + v, mesh=mesh,
                              in_specs=P("i", "j"), out_specs=P("i", "j")))
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    blocks = x.reshape(2, 2, 2, 4)                     # (i, rows, j, cols)
    summed = blocks.sum(0, keepdims=True)
    want = (np.broadcast_to(summed, blocks.shape) * 3 + blocks).reshape(4, 8)
    np.testing.assert_allclose(np.asarray(f(x)), want, rtol=1e-6)


def test_train_step_matches_interpreted_bits():
  # A data-parallel step (pmean of a gradient pytree, then the update reading
  # the parameters): compiled with the fused update as interpreted, and the
  # replicated results identical on every device.
  def step(params, x, y):
    def loss(p):
      h = jnp.tanh(x @ p["w"] + p["b"])
      return jnp.mean((h - y) ** 2)
    g = lax.pmean(jax.grad(loss)(params), "d")
    return jax.tree_util.tree_map(lambda p, q: p - 0.1 * q, params, g)
  rs = np.random.default_rng(0)
  params = {"w": np.stack([rs.standard_normal((4, 3)).astype(np.float32)] * 2),
            "b": np.zeros((2, 3), np.float32)}
  x = rs.standard_normal((2, 5, 4)).astype(np.float32)
  y = rs.standard_normal((2, 5, 3)).astype(np.float32)
  with cpu_devices(2):
    want = jax.pmap(step, axis_name="d")(params, x, y)
    jax.config.update("openjax_executor", "iree")
    try:
      shard_map_plan.plans.clear()
      f = jax.pmap(step, axis_name="d")
      got = f(params, x, y)
      assert _fused_steps(f)
    finally:
      jax.config.update("openjax_executor", "interpreter")
  for k in ("w", "b"):
    g = np.asarray(got[k])
    np.testing.assert_allclose(g, np.asarray(want[k]), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(g[0], g[1])
