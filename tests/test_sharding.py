"""jax.sharding: meshes, PartitionSpec, NamedSharding, Arrays over several
devices, set_mesh/reshard, and the sharding pictures of jax.debug.

Expected strings are JAX 0.10.2's, printed under
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` (20 for the seed).
Tests set the device count with ``jax_num_cpu_devices`` for their duration.
"""
import contextlib
import io
import json
import pathlib
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec as P,
                              SingleDeviceSharding)
from openjax._src.sharding import visualize
from openjax._src.errors import ShardingTypeError

DATA = pathlib.Path(__file__).parent / "data"


@contextlib.contextmanager
def cpu_devices(n: int):
  jax.config.update("jax_num_cpu_devices", n)
  try:
    yield jax.devices()
  finally:
    jax.config.update("jax_num_cpu_devices", -1)


@pytest.fixture
def devices8():
  with cpu_devices(8) as devices:
    yield devices


@pytest.fixture
def mesh42(devices8):
  return jax.make_mesh((4, 2), ("x", "y"))


# ---------------------------------------------------------------- meshes
def test_make_mesh_defaults_to_explicit_axes_and_prints_as_jax(mesh42, devices8):
  assert repr(mesh42) == ("Mesh(axis_sizes=(4, 2), axis_names=('x', 'y'), "
                          "axis_types=(Explicit, Explicit))")
  assert str(mesh42) == "Mesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit))"
  assert mesh42.axis_types == (AxisType.Explicit, AxisType.Explicit)
  assert list(mesh42.shape.items()) == [("x", 4), ("y", 2)]
  assert mesh42.shape_tuple == (("x", 4), ("y", 2))
  assert mesh42.axis_sizes == (4, 2) and mesh42.size == 8 and not mesh42.empty
  assert mesh42.devices.shape == (4, 2) and list(mesh42.devices.flat) == devices8
  assert mesh42.device_ids.tolist() == [[0, 1], [2, 3], [4, 5], [6, 7]]
  assert repr(mesh42.abstract_mesh) == (
      "AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
      "num_cores=None, platform=cpu)")
  assert mesh42 == jax.make_mesh((4, 2), ("x", "y"))
  assert hash(mesh42) == hash(jax.make_mesh((4, 2), ("x", "y")))
  assert repr(AxisType.Explicit) == "Explicit" and str(AxisType.Explicit) == "AxisType.Explicit"


def test_mesh_constructor_defaults_to_auto_and_checks_rank(devices8):
  m = Mesh(np.array(devices8[:4]), ("a",))
  assert repr(m) == "Mesh(axis_sizes=(4,), axis_names=('a',), axis_types=(Auto,))"
  m2 = Mesh(np.array(devices8[:4]).reshape(2, 2), ("a", "b"),
            axis_types=(AxisType.Explicit, AxisType.Auto))
  assert repr(m2) == ("Mesh(axis_sizes=(2, 2), axis_names=('a', 'b'), "
                      "axis_types=(Explicit, Auto))")
  assert m2.explicit_axes == ("a",) and m2.auto_axes == ("b",)
  with pytest.raises(ValueError, match="devices.ndim == 1 and len\\(axis_names\\) == 2"):
    Mesh(np.array(devices8[:4]), ("a", "b"))
  with pytest.raises(ValueError, match=r"Number of devices 8 must be >= the product of "
                     r"mesh_shape \(16,\)"):
    jax.make_mesh((16,), ("x",))
  sub = jax.make_mesh((2,), ("q",), devices=devices8[4:6])
  assert str(sub) == "Mesh('q': 2, axis_types=(Explicit,))"
  assert list(sub.devices.flat) == devices8[4:6]
  assert pickle.loads(pickle.dumps(m2)) == m2


def test_abstract_mesh():
  am = AbstractMesh((2, 4), ("a", "b"))
  assert repr(am) == "AbstractMesh('a': 2, 'b': 4, axis_types=(Explicit, Explicit))"
  assert repr(AbstractMesh((2, 4), ("a", "b"), axis_types=(AxisType.Auto, AxisType.Manual))) \
      == "AbstractMesh('a': 2, 'b': 4, axis_types=(Auto, Manual))"
  assert am == AbstractMesh((2, 4), ("a", "b")) and am.size == 8
  assert repr(jax.sharding.get_abstract_mesh()) == "AbstractMesh((), axis_types=())"
  with pytest.raises(ValueError, match="AbstractMesh does not implement devices"):
    am.devices
  assert repr(jax.make_mesh((1,), ("x",)).abstract_mesh.abstract_device) == (
      "AbstractDevice(device_kind=cpu, num_cores=None, platform=cpu)")
  empty = jax.sharding.get_mesh()
  assert repr(empty) == "Mesh(axis_sizes=(), axis_names=())" and str(empty) == "Mesh()"
  assert empty.empty and empty.size == 0


def test_mesh_context_manager_is_deprecated_as_in_jax(mesh42):
  with pytest.warns(DeprecationWarning, match="use `with jax.set_mesh"):
    with mesh42 as m:
      assert m is mesh42
      # JAX: `with mesh:` does not set the abstract mesh.
      assert jax.sharding.get_abstract_mesh().empty


# ---------------------------------------------------------- PartitionSpec
def test_partition_spec_reprs_and_equality():
  assert repr(P("x", None, ("x", "y"))) == "P('x', None, ('x', 'y'))"
  assert repr(P()) == "P()" and repr(P(None)) == "P(None,)" and repr(P("x")) == "P('x',)"
  assert repr(P(P.UNCONSTRAINED)) == "P(UNCONSTRAINED,)"
  assert repr(P.UNCONSTRAINED) == "UNCONSTRAINED"
  assert repr(P("x", P.UNCONSTRAINED)) == "P('x', UNCONSTRAINED)"
  assert repr(P(["a", "b"])) == "P(('a', 'b'),)" and repr(P(())) == "P(None,)"
  assert P(("x",)) == P("x") and hash(P(("x",))) == hash(P("x"))
  assert P("x") != ("x",) and P("x", None) != P("x")
  assert P("x") + ("y",) == P("x", "y") and ("y",) + P("x") == P("y", "x")
  assert len(P("x", None)) == 2 and list(P("x", None)) == ["x", None]
  assert repr(P("x", unreduced={"y"})) == "P('x', unreduced={'y'})"
  assert pickle.loads(pickle.dumps(P("x", ("y", "z")))) == P("x", ("y", "z"))
  assert jax.P is P


# ----------------------------------------------------------- shardings
def test_named_sharding_repr_hash_and_queries(mesh42, devices8):
  s = NamedSharding(mesh42, P("x", "y"))
  assert repr(s) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Explicit, "
                     "Explicit)), spec=P('x', 'y'), memory_kind=device)")
  assert s == NamedSharding(mesh42, P("x", "y"))
  assert hash(s) == hash(NamedSharding(mesh42, P("x", "y")))
  assert s != NamedSharding(mesh42, P("x", "y", None))
  assert s.mesh is mesh42 and s.spec == P("x", "y") and s.memory_kind == "device"
  assert s.num_devices == 8 and s.device_set == set(devices8)
  assert s.is_fully_addressable and not s.is_fully_replicated
  assert s.shard_shape((8, 4)) == (2, 2)
  assert NamedSharding(mesh42, P("x")).shard_shape((4, 6)) == (1, 6)
  assert NamedSharding(mesh42, P()).is_fully_replicated
  # JAX 0.10.2's devices_indices_map of P('x', 'y') over a (4, 2) mesh.
  expected = {0: (slice(0, 2), slice(0, 2)), 1: (slice(0, 2), slice(2, 4)),
              2: (slice(2, 4), slice(0, 2)), 3: (slice(2, 4), slice(2, 4)),
              4: (slice(4, 6), slice(0, 2)), 5: (slice(4, 6), slice(2, 4)),
              6: (slice(6, 8), slice(0, 2)), 7: (slice(6, 8), slice(2, 4))}
  assert {d.id: i for d, i in s.devices_indices_map((8, 4)).items()} == expected
  assert s.addressable_devices_indices_map((8, 4)) == s.devices_indices_map((8, 4))
  assert pickle.loads(pickle.dumps(s)) == s


def test_devices_indices_map_of_a_tuple_of_axes(devices8):
  mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"))
  got = NamedSharding(mesh, P(("c", "a"))).devices_indices_map((8,))
  # JAX 0.10.2: 'c' is the major axis of the split.
  starts = [0, 4, 0, 4, 2, 6, 2, 6]
  assert [got[d] for d in devices8] == [(slice(s, s + 2),) for s in starts]


def test_named_sharding_errors_are_jaxs(mesh42):
  with pytest.raises(ValueError, match=r"Resource axis: z of P\('z',\) is not found in mesh: "
                     r"\('x', 'y'\)\."):
    NamedSharding(mesh42, P("z"))
  with pytest.raises(ValueError, match=r"A single NamedSharding spec specification can map every "
                     r"mesh axis to at most one positional dimension, but P\('x', 'x'\) has "
                     r"duplicate entries for `x`"):
    NamedSharding(mesh42, P("x", "x"))
  with pytest.raises(ValueError, match="cannot contain `P.UNCONSTRAINED` when no mesh "
                     "axis_types are `Auto`"):
    NamedSharding(mesh42, P(P.UNCONSTRAINED))


def test_single_device_sharding(devices8):
  s = SingleDeviceSharding(devices8[1])
  assert repr(s) == "SingleDeviceSharding(device=CpuDevice(id=1), memory_kind=device)"
  assert s.device_set == {devices8[1]} and s.num_devices == 1 and s.is_fully_replicated
  assert s.devices_indices_map((2, 3)) == {devices8[1]: (slice(None), slice(None))}
  assert jax.sharding.make_single_device_sharding(devices8[1]) == s


# ---------------------------------------------------------- sharded Arrays
def test_device_put_splits_over_the_mesh_and_np_asarray_gathers(mesh42, devices8):
  value = np.arange(32, dtype=np.float32).reshape(8, 4)
  x = jax.device_put(value, NamedSharding(mesh42, P("x", "y")))
  assert str(jax.typeof(x)) == "float32[8@x,4@y]"
  assert repr(jax.typeof(x)) == "ShapedArray(float32[8@x,4@y])"
  assert repr(x.aval.sharding) == (
      "NamedSharding(mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), "
      "device_kind=cpu, num_cores=None, platform=cpu), spec=P('x', 'y'))")
  assert x.sharding == NamedSharding(mesh42, P("x", "y"))
  assert x.device == x.sharding and x.devices() == set(devices8)
  np.testing.assert_array_equal(np.asarray(x), value)
  shards = x.addressable_shards
  assert len(shards) == 8 and x.global_shards[3].device == devices8[3]
  assert repr(shards[0]) == ("Shard(device=CpuDevice(id=0), index=(slice(0, 2, None), "
                             "slice(0, 2, None)), replica_id=0, data=[[0. 1.]\n [4. 5.]])")
  for shard in shards:
    assert shard.data.devices() == {shard.device}
    assert shard.data.sharding == SingleDeviceSharding(shard.device)
    np.testing.assert_array_equal(np.asarray(shard.data), value[shard.index])
  np.testing.assert_array_equal(x.addressable_data(3), value[2:4, 2:4])
  assert not x.is_fully_replicated and x.is_fully_addressable and x.committed
  value[:] = -1   # the Array holds its own copy
  assert float(np.asarray(x)[0, 1]) == 1.0
  # As in JAX 0.10.2: indexing across dimensions split over Explicit axes
  # needs a reshard first.
  with pytest.raises(ShardingTypeError, match="slicing on sharded dims"):
    x[0, 1]


def test_replica_ids_of_partly_and_fully_replicated_arrays(devices8):
  mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"))
  x = jax.device_put(np.arange(16.0).reshape(4, 4), NamedSharding(mesh, P("b")))
  # JAX 0.10.2: (device id, index, replica id) of every shard.
  assert [(s.device.id, s.index[0].start, s.replica_id) for s in x.addressable_shards] == [
      (0, 0, 0), (1, 0, 1), (2, 2, 0), (3, 2, 1), (4, 0, 2), (5, 0, 3), (6, 2, 2), (7, 2, 3)]
  assert all(s.index[1] == slice(None) for s in x.addressable_shards)
  assert str(jax.typeof(x)) == "float32[4@b,4]"
  r = jax.device_put(np.arange(8.0), NamedSharding(mesh, P()))
  assert str(jax.typeof(r)) == "float32[8]" and r.is_fully_replicated
  assert [s.replica_id for s in r.addressable_shards] == list(range(8))
  np.testing.assert_array_equal(np.asarray(r), np.arange(8.0, dtype=np.float32))
  t = jax.device_put(np.ones((8, 4, 6)), NamedSharding(mesh, P(("a", "b"))))
  assert str(jax.typeof(t)) == "float32[8@(a,b),4,6]"
  u = jax.device_put(np.ones((4, 4)), NamedSharding(mesh, P(None, "b")))
  assert str(jax.typeof(u)) == "float32[4,4@b]"


def test_auto_axes_are_not_in_the_type(devices8):
  mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  w = jax.device_put(np.ones((8, 4)), NamedSharding(mesh, P("x", "y")))
  assert str(jax.typeof(w)) == "float32[8,4]" and w.aval.sharding is None
  assert repr(w.sharding) == ("NamedSharding(mesh=Mesh('x': 4, 'y': 2, axis_types=(Auto, "
                              "Auto)), spec=P('x', 'y'), memory_kind=device)")
  assert len(w.addressable_shards) == 8


def test_uneven_shapes_raise_jaxs_error_with_the_padding_fix(mesh42):
  with pytest.raises(ValueError) as e:
    jax.device_put(np.ones((7, 4)), NamedSharding(mesh42, P("x", "y")))
  assert str(e.value).startswith(
      "Sharding spec ('x',) implies that array axis 0 is partitioned 4 times, but does not "
      "evenly divide the dimension size 7. Got shape: (7, 4) and sharding NamedSharding("
      "mesh=AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
      "num_cores=None, platform=cpu), spec=P('x', 'y'))")
  assert "pad axis 0 to the next multiple of 4 (8), e.g. x = jnp.pad(x, ((0, 1), (0, 0)))" \
      in str(e.value)
  auto = jax.make_mesh((4,), ("x",), axis_types=(AxisType.Auto,))
  with pytest.raises(ValueError, match=r"^Sharding NamedSharding\(mesh=Mesh\('x': 4, axis_types="
                     r"\(Auto,\)\), spec=P\('x',\), memory_kind=device\) implies that array "
                     r"axis 0 is partitioned 4 times, but the dimension size is 6 \(full shape: "
                     r"\(6, 5\), per-dimension tiling factors: \[4, 1\] should evenly divide "
                     r"the shape\) To shard it, pad axis 0 to the next multiple of 4 \(8\)"):
    jax.device_put(np.ones((6, 5)), NamedSharding(auto, P("x")))
  with pytest.raises(ValueError, match="only valid for values of rank at least 1, but was "
                     "applied to a value of rank 0. For scalars the PartitionSpec should be P()"):
    jax.device_put(np.float32(1), NamedSharding(auto, P("x")))


def test_padding_solution_shards_and_slices_back(mesh42):
  x = np.arange(7 * 3, dtype=np.float32).reshape(7, 3)
  padded = jax.device_put(jnp.pad(x, ((0, 1), (0, 0))), NamedSharding(mesh42, P("x")))
  assert str(jax.typeof(padded)) == "float32[8@x,3]"
  # JAX 0.10.2: slicing across the split dimension needs the value whole first.
  with pytest.raises(ShardingTypeError):
    jnp.sin(padded)[:7]
  out = jax.reshard(jnp.sin(padded), NamedSharding(mesh42, P()))[:7]
  assert str(jax.typeof(out)) == "float32[7,3]"
  np.testing.assert_allclose(np.asarray(out), np.sin(x), rtol=1e-6)


def test_eager_ops_give_numpy_values_and_elementwise_keeps_the_sharding(mesh42):
  value = np.arange(32, dtype=np.float32).reshape(8, 4)
  s = NamedSharding(mesh42, P("x"))
  x = jax.device_put(value, s)
  z = jnp.cos(x) * 2 + x
  np.testing.assert_allclose(np.asarray(z), np.cos(value) * 2 + value, rtol=1e-6)
  # JAX 0.10.2: results report the spec with one entry per dimension.
  assert z.sharding == NamedSharding(mesh42, P("x", None))
  assert str(jax.typeof(z)) == "float32[8@x,4]" and len(z.addressable_shards) == 8
  u = jnp.ones((8, 4)) + x
  assert u.sharding == NamedSharding(mesh42, P("x", None))
  np.testing.assert_allclose(np.asarray(jnp.sum(x, axis=0)), value.sum(0))
  # JAX 0.10.2: both operands split over x along the free dimensions.
  with pytest.raises(ShardingTypeError, match="illegally sharded result: f32\\[8@x,8@x\\]"):
    x @ x.T
  np.testing.assert_allclose(float(jnp.mean(x)), value.mean())
  assert jnp.mean(x).sharding.spec == P() and jnp.sum(x, axis=0).sharding.spec == P(None)


def test_jit_and_grad_of_sharded_arrays(mesh42):
  value = np.linspace(0, 1, 32, dtype=np.float32).reshape(8, 4)
  x = jax.device_put(value, NamedSharding(mesh42, P("x", "y")))
  f = jax.jit(lambda a: jnp.sum(jnp.sin(a) * a))
  np.testing.assert_allclose(float(f(x)), np.sum(np.sin(value) * value), rtol=1e-5)
  g = jax.grad(lambda a: jnp.sum(a ** 2))(x)
  np.testing.assert_allclose(np.asarray(g), 2 * value, rtol=1e-6)
  assert "a:f32[8@x,4@y]" in str(jax.make_jaxpr(lambda a: a * 2)(x))
  with jax.config.override("openjax_executor", "iree"):
    np.testing.assert_allclose(np.asarray(jax.jit(lambda a: a * 3)(x)), 3 * value)


def test_device_put_of_pytrees_with_pytrees_of_shardings(mesh42, devices8):
  tree = {"a": np.ones(4), "b": np.arange(2.0)}
  out = jax.device_put(tree, {"a": NamedSharding(mesh42, P("x")), "b": NamedSharding(mesh42, P())})
  assert str(jax.typeof(out["a"])) == "float32[4@x]" and out["b"].is_fully_replicated
  both = jax.device_put(tree, NamedSharding(mesh42, P()))
  assert all(len(v.addressable_shards) == 8 for v in both.values())
  back = jax.device_put(out["a"], devices8[2])
  assert back.devices() == {devices8[2]} and str(jax.typeof(back)) == "float32[4]"
  np.testing.assert_array_equal(np.asarray(back), np.ones(4))
  same = jax.device_put(out["a"], NamedSharding(mesh42, P("x")))
  assert same is out["a"]


def test_make_array_from_callback_single_device_arrays_and_local_data(mesh42):
  s = NamedSharding(mesh42, P("x", "y"))
  full = np.arange(32.0).reshape(8, 4)
  calls = []

  def piece(index):
    calls.append(index)
    return full[index]
  y = jax.make_array_from_callback((8, 4), s, piece)
  assert str(jax.typeof(y)) == "float32[8@x,4@y]" and len(calls) == 8
  np.testing.assert_array_equal(np.asarray(y), full)
  r = jax.make_array_from_callback((8, 4), NamedSharding(mesh42, P("x")), piece)
  assert len(calls) == 8 + 4   # replicas share one call per piece
  np.testing.assert_array_equal(np.asarray(r), full)
  arrays = [jax.device_put(np.ones((2, 2)) * i, d) for i, d in enumerate(mesh42.devices.flat)]
  z = jax.make_array_from_single_device_arrays((8, 4), s, arrays)
  # JAX 0.10.2's value: device i's 2x2 block holds i.
  np.testing.assert_array_equal(np.asarray(z), np.kron(np.arange(8).reshape(4, 2),
                                                       np.ones((2, 2))))
  assert z.addressable_data(5) is arrays[5]
  with pytest.raises(ValueError, match="spans 8 devices, but 7 arrays were given"):
    jax.make_array_from_single_device_arrays((8, 4), s, arrays[:7])
  with pytest.raises(ValueError, match="callback returned data of shape"):
    jax.make_array_from_callback((8, 4), s, lambda index: full)
  w = jax.make_array_from_process_local_data(s, full)
  assert str(jax.typeof(w)) == "float32[8@x,4@y]"
  np.testing.assert_array_equal(np.asarray(w), full)


@pytest.mark.parametrize("n", [1, 2, 4, 8, 20])
def test_any_device_count(n):
  with cpu_devices(n) as devices:
    mesh = jax.make_mesh((n,), ("x",))
    value = np.arange(2 * n * 3, dtype=np.int32).reshape(2 * n, 3)
    x = jax.device_put(value, NamedSharding(mesh, P("x")))
    assert [s.device for s in x.addressable_shards] == devices
    assert all(s.data.shape == (2, 3) for s in x.addressable_shards)
    np.testing.assert_array_equal(np.asarray(x + 1), value + 1)
    assert str(jax.typeof(x)) == f"int32[{2 * n}@x,3]"


def test_deleting_a_sharded_array_deletes_its_shards(mesh42):
  x = jax.device_put(np.ones((8, 4)), NamedSharding(mesh42, P("x")))
  shards = [s.data for s in x.addressable_shards]
  x.delete()
  assert x.is_deleted() and all(s.is_deleted() for s in shards)
  with pytest.raises(RuntimeError, match="deleted"):
    np.asarray(x)


# ------------------------------------------------- set_mesh and reshard
def test_set_mesh_resolves_bare_specs_and_reshard(mesh42):
  with jax.set_mesh(mesh42):
    assert repr(jax.sharding.get_abstract_mesh()) == (
        "AbstractMesh('x': 4, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
        "num_cores=None, platform=cpu)")
    assert jax.sharding.get_mesh() == mesh42
    a = jnp.ones((8, 4))
    assert str(jax.typeof(a)) == "float32[8,4]"
    b = jax.reshard(a, P("x"))
    assert str(jax.typeof(b)) == "float32[8@x,4]"
    assert b.sharding == NamedSharding(mesh42, P("x", None))
    c = jax.device_put(np.ones((8, 4)), P("x", "y"))
    assert str(jax.typeof(c)) == "float32[8@x,4@y]"
  assert jax.sharding.get_abstract_mesh().empty and jax.sharding.get_mesh().empty
  with pytest.raises(ValueError, match="Using PartitionSpec when you are not under a mesh "
                     "context is not allowed"):
    jax.device_put(np.ones(4), P("x"))
  jax.set_mesh(mesh42)   # as a statement: stays set
  try:
    assert jax.sharding.get_mesh() == mesh42
  finally:
    jax.set_mesh(None)
  assert jax.sharding.get_mesh().empty
  with pytest.raises(ValueError, match="can only be used outside of `jax.jit`"):
    jax.jit(lambda x: jax.set_mesh(mesh42) and x)(1.0)


def test_use_abstract_mesh_checks_the_size(mesh42):
  with jax.sharding.use_abstract_mesh(mesh42.abstract_mesh):
    assert jax.sharding.get_abstract_mesh() == mesh42.abstract_mesh
    with pytest.raises(ValueError, match="use_abstract_mesh cannot change the size of the mesh"):
      with jax.sharding.use_abstract_mesh(AbstractMesh((2,), ("q",))):
        pass
  assert jax.sharding.get_abstract_mesh().empty


def test_auto_axes_and_explicit_axes_eagerly(mesh42):
  value = np.arange(32.0, dtype=np.float32).reshape(8, 4)
  with jax.set_mesh(mesh42):
    x = jax.device_put(value, P("x", "y"))
    seen = []

    @jax.sharding.auto_axes(out_sharding=P("x", None))
    def f(a):
      seen.append(str(jax.typeof(a)))
      seen.append(jax.sharding.get_abstract_mesh().axis_types)
      return a * 2
    out = f(x)
    assert seen == ["float32[8,4]", (AxisType.Auto, AxisType.Auto)]
    assert str(jax.typeof(out)) == "float32[8@x,4]"
    np.testing.assert_array_equal(np.asarray(out), value * 2)

    @jax.sharding.explicit_axes(axes="y", in_sharding=P(None, "y"))
    def g(a):
      seen.append(str(jax.typeof(a)))
      return a + 1
    with pytest.raises(TypeError, match="Missing required keyword argument: 'out_sharding'"):
      jax.sharding.auto_axes(lambda a: a)(x)
  auto = Mesh(mesh42.devices, ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  with jax.set_mesh(auto):
    y = g(jax.device_put(value, P("x")))
    assert seen[-1] == "float32[8,4@y]"
    assert str(jax.typeof(y)) == "float32[8,4]"
    np.testing.assert_array_equal(np.asarray(y), value + 1)


# ------------------------------------------------------------ pictures
_PICTURES = json.loads((DATA / "sharding_viz.json").read_text())


def _picture(case: dict) -> str:
  mesh = jax.make_mesh(tuple(case["mesh_shape"]), tuple(case["mesh_names"]))
  spec = P(*[tuple(s) if isinstance(s, list) else s for s in case["spec"]])
  x = jax.device_put(np.zeros(case["shape"], np.float32), NamedSharding(mesh, spec))
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    jax.debug.visualize_array_sharding(x)
  return buf.getvalue()


@pytest.mark.parametrize("renderer", ["rich", "plain"])
@pytest.mark.parametrize("name", sorted(_PICTURES))
def test_visualize_array_sharding_draws_jaxs_picture(name, renderer, monkeypatch):
  if renderer == "rich":
    pytest.importorskip("rich")
  else:
    monkeypatch.setattr(visualize, "_HAS_RICH", False)
  with cpu_devices(20):
    assert _picture(_PICTURES[name]) == _PICTURES[name]["picture"]


def test_visualize_sharding_takes_a_shape_and_a_sharding(mesh42):
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    jax.debug.visualize_sharding((8,), NamedSharding(mesh42, P("x")))
  assert "│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│" in buf.getvalue()
  with pytest.raises(ValueError, match="only works for shapes with 1 and 2 dimensions"):
    jax.debug.visualize_sharding((2, 2, 2), NamedSharding(mesh42, P()))


# ---------------------------------------------------------------- seed
def test_seed_000_sharding_program_prints_what_jax_prints():
  # Run as written (it sets XLA_FLAGS for 20 devices before importing).
  out = subprocess.run([sys.executable, str(DATA / "seed000_sharding.py")],
                       capture_output=True, text=True, timeout=300)
  assert out.returncode == 0, out.stderr
  assert out.stdout == (DATA / "seed000_sharding.out").read_text()


def test_is_equivalent_to_compares_placements(mesh42, devices8):
  a = NamedSharding(mesh42, P("x"))
  assert a.is_equivalent_to(NamedSharding(mesh42, P("x", None)), 2)
  assert not a.is_equivalent_to(NamedSharding(mesh42, P("y")), 2)
  flat = Mesh(np.array(devices8).reshape(4, 2), ("x", "y"))
  assert a.is_equivalent_to(NamedSharding(flat, P("x")), 2)
  one = jax.make_mesh((1,), ("x",))
  assert NamedSharding(one, P("x")).is_equivalent_to(SingleDeviceSharding(devices8[0]), 1)


def test_creation_functions_take_out_sharding(mesh42):
  z = jnp.zeros((8, 4), out_sharding=NamedSharding(mesh42, P("x")))
  assert str(jax.typeof(z)) == "float32[8@x,4]" and not np.asarray(z).any()
  with jax.set_mesh(mesh42):
    assert str(jax.typeof(jnp.ones((8, 4), out_sharding=P(None, "y")))) == "float32[8,4@y]"
    full = jnp.full((8,), 2.0, dtype=jnp.float32, out_sharding=P("x"))
    assert str(jax.typeof(full)) == "float32[8@x]"
    assert str(jax.typeof(jnp.zeros_like(full, out_sharding=P("x")))) == "float32[8@x]"
  x = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh42, P("x", "y")))
  y = jnp.array(x)
  assert y is not x and y.sharding == x.sharding
  np.testing.assert_array_equal(np.asarray(y), np.ones((8, 4)))


def test_scalars_and_keys_on_a_mesh(mesh42):
  s = jax.device_put(np.float32(3), NamedSharding(mesh42, P()))
  assert str(jax.typeof(s)) == "float32[]" and len(s.addressable_shards) == 8
  assert all(sh.index == () and sh.data.shape == () for sh in s.addressable_shards)
  assert float(s + 1) == 4.0
  w = jax.device_put(1.0, NamedSharding(mesh42, P()))   # JAX: weak, and so are its pieces
  assert str(jax.typeof(w)) == "~float32[]" and w.addressable_shards[0].data.weak_type
  keys = jax.device_put(jax.random.split(jax.random.key(0), 8), NamedSharding(mesh42, P("x")))
  assert keys.sharding == NamedSharding(mesh42, P("x"))
  np.testing.assert_array_equal(jax.random.key_data(keys),
                                jax.random.key_data(jax.random.split(jax.random.key(0), 8)))


def test_pickling_a_sharded_array_gives_a_single_device_array(mesh42):
  # As in JAX 0.10.2 (devices do not pickle): the value comes back whole.
  x = jax.device_put(np.arange(8.0), NamedSharding(mesh42, P("x")))
  y = pickle.loads(pickle.dumps(x))
  assert isinstance(y.sharding, SingleDeviceSharding) and str(jax.typeof(y)) == "float32[8]"
  np.testing.assert_array_equal(np.asarray(y), np.arange(8.0))


@pytest.mark.parametrize("renderer", ["rich", "plain"])
def test_visualize_a_single_device_array(renderer, monkeypatch):
  if renderer == "rich":
    pytest.importorskip("rich")
  else:
    monkeypatch.setattr(visualize, "_HAS_RICH", False)
  buf = io.StringIO()
  with contextlib.redirect_stdout(buf):
    jax.debug.visualize_array_sharding(jnp.ones((4,)))
  # JAX 0.10.2's picture.
  assert buf.getvalue() == "┌───────┐\n│ CPU 0 │\n└───────┘\n"


def test_results_live_on_the_current_devices_after_the_count_changes():
  value = np.arange(8.0, dtype=np.float32).reshape(4, 2)
  for n in (4, 2, 4):
    with cpu_devices(n) as devices:
      mesh = jax.make_mesh((n,), ("x",))
      y = jax.device_put(value, NamedSharding(mesh, P("x"))) * 2
      assert y.devices() == set(devices)
      assert [s.device for s in y.addressable_shards] == devices


def test_reshard_to_an_abstract_values_sharding(mesh42):
  y = jax.device_put(np.ones((8, 4)), NamedSharding(mesh42, P(None, "y")))
  with jax.set_mesh(mesh42):
    x = jax.reshard(jnp.zeros((8, 4)), jax.typeof(y).sharding)
  assert x.sharding == NamedSharding(mesh42, P(None, "y"))
  with pytest.raises(ValueError, match="is over an AbstractMesh; enter a mesh"):
    jax.reshard(jnp.zeros((8, 4)), jax.typeof(y).sharding)


def test_avals_with_a_sharding(mesh42):
  from openjax._src.core import ShapedArray
  s = jax.typeof(jax.device_put(np.ones((8, 4)), NamedSharding(mesh42, P("x")))).sharding
  a = ShapedArray((8, 4), np.float32, sharding=s)
  plain = ShapedArray((8, 4), np.float32)
  assert a != plain and a == ShapedArray((8, 4), np.float32, sharding=s)
  assert hash(a) == hash(ShapedArray((8, 4), np.float32, sharding=s))
  assert a.str_short() == "f32[8@x,4]" and str(a.update(weak_type=True)) == "~float32[8@x,4]"
  assert a.update(dtype=np.int32).sharding == s and a.strip_weak_type() is a
  assert a.update(shape=(8, 4)).sharding is None   # a new shape drops the sharding
  assert plain.sharding is None and hash(plain) == hash(ShapedArray((8, 4), np.float32))
