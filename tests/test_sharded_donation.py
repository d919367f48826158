"""Donating Arrays split over devices to a sharded ``jit`` (``donate_argnums``):
the donated Array and each of its shards are consumed as JAX 0.10.2 consumes
them (per-device pieces matched to results by shape and dtype, else by byte
size), unusable donations warn with JAX's message and keep the Array, and
the per-device program really writes its result into the donated piece.
Expected outcomes were printed by JAX 0.10.2 on 4 CPU devices.
"""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.sharding import NamedSharding, PartitionSpec as P
from openjax._src.errors import JaxRuntimeError
from tests.test_sharded_jit import cpu_devices, executor, plans  # noqa: F401 - fixture

f32 = np.float32


def _split(mesh, value, *spec):
  return jax.device_put(value, NamedSharding(mesh, P(*spec)))


def test_donated_sharded_array_and_its_shards_are_deleted(executor):
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    x = _split(mesh, np.arange(8, dtype=f32), "x")
    shards = [s.data for s in x.addressable_shards]
    double = jax.jit(lambda a: a * 2, donate_argnums=0)
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      y = double(x)
    assert x.is_deleted() and all(s.is_deleted() for s in shards)
    assert y.sharding == NamedSharding(mesh, P("x"))
    np.testing.assert_array_equal(np.asarray(y), np.arange(8) * 2)
    for use in (lambda: x + 1, lambda: np.asarray(x), lambda: x.addressable_shards,
                lambda: double(x)):
      with pytest.raises(RuntimeError, match=r"Array has been deleted with shape=float32\[8@x\]\."):
        use()
    # A result computed on the devices, donated in turn (its shards are
    # device buffers the next program writes into).
    z = double(y)
    assert y.is_deleted() and not z.is_deleted()
    np.testing.assert_array_equal(np.asarray(z), np.arange(8) * 4)


def test_replicated_and_single_device_leaves_are_consumed_too(executor):
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    r = _split(mesh, np.ones(4, f32))
    out = jax.jit(lambda a: a + 1, donate_argnums=0)(r)
    assert r.is_deleted() and out.tolist() == [2.0] * 4
    tree = {"p": _split(mesh, np.arange(8, dtype=f32), "x"), "q": jnp.ones(3)}
    out = jax.jit(lambda d: jax.tree.map(lambda a: a + 1, d), donate_argnums=0)(tree)
    assert tree["p"].is_deleted() and tree["q"].is_deleted()
    assert out["q"].tolist() == [2.0] * 3 and out["p"].tolist() == list(range(1, 9))
    # Two results: the donated piece goes to one of them.
    v = _split(mesh, np.arange(8, dtype=f32), "x")
    a, b = jax.jit(lambda t: (t * 2, t + 1), donate_argnums=0)(v)
    assert v.is_deleted() and a.tolist() == list(range(0, 16, 2))


def test_pieces_of_another_type_but_the_same_size_are_consumed(executor):
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    x = _split(mesh, np.arange(8, dtype=f32), "x")
    out = jax.jit(lambda a: a.astype(jnp.int32), donate_argnums=0)(x)
    assert x.is_deleted() and out.dtype == np.int32 and out.tolist() == list(range(8))
    x = _split(mesh, np.arange(16, dtype=f32), "x")
    out = jax.jit(lambda a: a.reshape(4, 4), donate_argnums=0,
                  out_shardings=NamedSharding(mesh, P(None, "x")))(x)
    assert x.is_deleted()
    np.testing.assert_array_equal(np.asarray(out), np.arange(16).reshape(4, 4))


@pytest.mark.parametrize("case", ["sum", "to_replicated"])
def test_unusable_donation_warns_with_the_piece_and_keeps_the_array(case, executor):
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    x = _split(mesh, np.arange(8, dtype=f32), "x")
    if case == "sum":
      f, piece, want = jax.jit(jnp.sum, donate_argnums=0), "float32[2]", 28.0
    else:
      f = jax.jit(lambda a: a * 2, donate_argnums=0,
                  out_shardings=NamedSharding(mesh, P()))
      piece, want = "float32[2]", list(range(0, 16, 2))
    with pytest.warns(UserWarning, match=rf"^Some donated buffers were not usable: "
                                         rf"{piece.replace('[', '.').replace(']', '.')}\.\n"
                                         r"See an explanation at https://docs\.jax\.dev/"):
      out = f(x)
    assert not x.is_deleted() and np.asarray(out).tolist() == want
    np.testing.assert_array_equal(np.asarray(x), np.arange(8))
    with warnings.catch_warnings():
      warnings.simplefilter("error")
      f(x)   # warned once, when the call was first planned


def test_donating_one_buffer_twice_raises():
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    z = _split(mesh, np.arange(8, dtype=f32), "x")
    with pytest.raises(JaxRuntimeError, match="Attempt to donate the same buffer twice"):
      jax.jit(lambda a, b: a + b, donate_argnums=(0, 1))(z, z)
    with pytest.raises(JaxRuntimeError, match="Attempt to use a buffer that was donated"):
      jax.jit(lambda a, b: a * b, donate_argnames="a")(z, z)
    assert not z.is_deleted()


def test_compiled_parts_write_results_into_donated_pieces():
  before = jax.config.read("openjax_executor")
  jax.config.update("openjax_executor", "iree")
  try:
    with cpu_devices(2):
      mesh = jax.make_mesh((2,), ("x",))
      step = jax.jit(lambda w, g: w - 0.5 * g, donate_argnums=0)
      w = jax.jit(lambda a: a + 0)(_split(mesh, np.ones((4, 3), f32), "x"))
      g = _split(mesh, np.full((4, 3), 2, f32), "x")
      for _ in range(3):
        w = step(w, g)
      np.testing.assert_array_equal(np.asarray(w), np.full((4, 3), -2.0))
      (plan,) = plans(step)
      segments = [rest[0] for kind, *rest in plan.steps if kind == "segment"]
      (seg,) = segments
      # The part's piece of ``w`` is written by its only result.
      assert seg.executable.aliases == {seg.inputs.index(plan.in_keys[0]): 0}
  finally:
    jax.config.update("openjax_executor", before)
