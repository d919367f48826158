"""Issue 15 leftovers, against JAX 0.10.2's printed values (stored here):
concatenate/stack of differently split arrays raise JAX's ShardingTypeError
instead of merging the splits; eager ``lax.broadcasted_iota(...,
out_sharding=)`` is laid out and typed as under jit; jnp creation functions
under ``jax.set_mesh(mesh)`` give Arrays replicated over the mesh."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.errors import ShardingTypeError
from openjax.sharding import AxisType, NamedSharding, PartitionSpec as P
from tests.test_pmap import cpu_devices

ABSTRACT = ("AbstractMesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit), device_kind=cpu, "
            "num_cores=None, platform=cpu)")


def _same_sharding_error(*specs):
  shown = ", ".join(f"NamedSharding(mesh={ABSTRACT}, spec={s})" for s in specs)
  return "All operands should have the same sharding. Got shardings " + shown


@pytest.fixture
def mesh():
  with cpu_devices(4):
    yield jax.make_mesh((2, 2), ("x", "y"))


def _put(mesh, spec, value=None):
  value = np.arange(16, dtype=np.float32).reshape(4, 4) if value is None else value
  return jax.device_put(value, NamedSharding(mesh, spec))


# ------------------------------------------------- concatenate and stack
CASES = {
    # name: (function, operand specs, the specs JAX's message shows)
    "stack": (lambda a, b: jnp.stack([a, b]), (P("x", None), P(None, "x")),
              ("P('x', None)", "P(None, 'x')")),
    "concatenate": (lambda a, b: jnp.concatenate([a, b]), (P("x", None), P(None, "x")),
                    ("P('x', None)", "P(None, 'x')")),
    "concatenate_axis1": (lambda a, b: jnp.concatenate([a, b], axis=1),
                          (P("x", None), P("y", None)), ("P('x', None)", "P('y', None)")),
    "concatenate_expanded": (lambda a, b: jnp.concatenate([a[None], b.T[None]]),
                             (P("x", None), P("x", None)),
                             ("P(None, 'x', None)", "P(None, None, 'x')")),
    "lax_concatenate": (lambda a, b: lax.concatenate([a, b], 0), (P("x", None), P(None, "y")),
                        ("P('x', None)", "P(None, 'y')")),
}


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_differently_split_operands_raise(mesh, case, jit):
  f, specs, shown = CASES[case]
  a, b = (_put(mesh, s) for s in specs)
  with pytest.raises(ShardingTypeError, match=re.escape(_same_sharding_error(*shown))):
    (jax.jit(f) if jit else f)(a, b)


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
def test_alike_or_unsplit_operands_join(mesh, jit):
  a = _put(mesh, P("x", None))
  host = np.ones((4, 4), np.float32)
  run = jax.jit if jit else (lambda f: f)
  same = run(lambda u: jnp.stack([u, u]))(a)
  assert str(jax.typeof(same)) == "float32[2,4@x,4]"
  np.testing.assert_array_equal(np.asarray(same), np.stack([np.asarray(a)] * 2))
  joined = run(lambda u: jnp.concatenate([u, host]))(a)
  assert str(jax.typeof(joined)) == "float32[8@x,4]"
  np.testing.assert_array_equal(np.asarray(joined), np.concatenate([np.asarray(a), host]))


def test_stack_binds_lax_stack_as_jax():
  text = str(jax.make_jaxpr(lambda a, b: jnp.stack([a, b], axis=1))(
      np.ones(3, np.float32), np.ones(3, np.int32)))
  assert text == """{ lambda ; a:f32[3] b:i32[3]. let
    c:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[3,2] = stack[axis=1] a c
  in (d,) }"""
  out = jnp.stack([jnp.ones(2), 3 * jnp.ones(2)], axis=-1, dtype=jnp.int32)
  assert out.dtype == np.int32
  np.testing.assert_array_equal(np.asarray(out), [[1, 3], [1, 3]])
  assert jnp.stack([np.int8(1), 2]).dtype == np.int8


# ------------------------------------------------------- broadcasted_iota
@pytest.mark.parametrize("under_mesh", [False, True], ids=["sharding", "set_mesh"])
def test_eager_iota_out_sharding_typed_as_jit(mesh, under_mesh):
  s = NamedSharding(mesh, P("x", None))

  def f():
    return lax.broadcasted_iota(jnp.int32, (4, 4), 0, out_sharding=s)
  if under_mesh:
    with jax.set_mesh(mesh):
      eager, jitted = f(), jax.jit(f)()
  else:
    eager, jitted = f(), jax.jit(f)()
  for out in (eager, jitted):
    assert str(jax.typeof(out)) == "int32[4@x,4]"
    assert out.sharding == s
    np.testing.assert_array_equal(np.asarray(out), np.arange(4)[:, None] + np.zeros((1, 4)))


def test_eager_iota_partition_spec_under_mesh(mesh):
  with jax.set_mesh(mesh):
    out = lax.broadcasted_iota(jnp.int32, (4, 4), 1, out_sharding=P("x", "y"))
  assert str(jax.typeof(out)) == "int32[4@x,4@y]"
  assert out.sharding == NamedSharding(mesh, P("x", "y"))
  np.testing.assert_array_equal(np.asarray(out), np.tile(np.arange(4), (4, 1)))
  shards = {s.device.id: np.asarray(s.data) for s in out.addressable_shards}
  np.testing.assert_array_equal(shards[3], [[2, 3], [2, 3]])


# ----------------------------------------------- creation under set_mesh
# (function, JAX 0.10.2's spec over an Explicit mesh, its typeof)
CREATION = {
    "zeros": (lambda: jnp.zeros(4), "P(None,)", "float32[4]"),
    "ones": (lambda: jnp.ones((2, 3)), "P(None, None)", "float32[2,3]"),
    "full": (lambda: jnp.full(4, 2.0), "P(None,)", "~float32[4]"),
    "arange": (lambda: jnp.arange(4), "P(None,)", "int32[4]"),
    "array": (lambda: jnp.array([1.0, 2.0]), "P()", "float32[2]"),
    "asarray": (lambda: jnp.asarray([1, 2]), "P()", "int32[2]"),
    "zeros_like": (lambda: jnp.zeros_like(np.ones(3)), "P(None,)", "float32[3]"),
    "eye": (lambda: jnp.eye(2), "P(None, None)", "float32[2,2]"),
    "linspace": (lambda: jnp.linspace(0, 1, 3), "P(None,)", "float32[3]"),
    "empty": (lambda: jnp.empty(3), "P(None,)", "float32[3]"),
    "zeros_scalar": (lambda: jnp.zeros(()), "P()", "float32[]"),
}


@pytest.mark.parametrize("name", sorted(CREATION))
def test_creation_under_set_mesh_is_replicated_on_it(mesh, name):
  f, spec, typed = CREATION[name]
  with jax.set_mesh(mesh):
    out = f()
    later = out + 1
  assert repr(out.sharding) == (
      f"NamedSharding(mesh=Mesh('x': 2, 'y': 2, axis_types=(Explicit, Explicit)), "
      f"spec={spec}, memory_kind=device)")
  assert str(jax.typeof(out)) == typed
  assert out.is_fully_replicated and len(out.addressable_shards) == 4
  assert later.sharding.mesh == mesh
  np.testing.assert_array_equal(np.asarray(out), np.asarray(f()))
  # Outside the mesh context: one device, as before.
  assert type(f().sharding).__name__ == "SingleDeviceSharding"


def test_creation_under_auto_mesh_is_spelled_p(mesh):
  auto = jax.make_mesh((2, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
  with jax.set_mesh(auto):
    z = jnp.zeros(4)
    w = z + 1
    key = jax.random.key(0)
  for v in (z, w, key):
    assert v.sharding == NamedSharding(auto, P())
    assert str(v.sharding.spec) == "P()"


def test_shard_map_in_specs_check_sees_the_mesh_layout(mesh):
  with jax.set_mesh(mesh):
    z = jnp.zeros(4)
    with pytest.raises(ValueError, match=re.escape(
        "in_specs passed to shard_map: P('x',) does not match the specs of the input: "
        "P(None,) for arg: float32[4].")):
      jax.shard_map(lambda a: a, in_specs=P("x"), out_specs=P("x"))(z)
    out = jax.shard_map(lambda a: a * 2, in_specs=P(), out_specs=P())(z + 1)
  np.testing.assert_array_equal(np.asarray(out), np.full(4, 2.0))


def test_key_sharding_under_set_mesh(mesh):
  with jax.set_mesh(mesh):
    key = jax.random.key(0)
    keys = jax.random.split(key, 4)
  assert str(key.sharding.spec) == "P()"
  assert keys.sharding.mesh == mesh and len(tuple(keys.sharding.spec)) <= 1


@pytest.mark.parametrize("under_mesh", [False, True], ids=["no_mesh", "set_mesh"])
def test_like_and_array_keep_a_split_layout(mesh, under_mesh):
  # (JAX 0.10.2: the *_like functions and jnp.array keep the operand's split.)
  a = _put(mesh, P("x", None))
  fns = {"zeros_like": lambda: jnp.zeros_like(a), "ones_like": lambda: jnp.ones_like(a),
         "empty_like": lambda: jnp.empty_like(a), "full_like": lambda: jnp.full_like(a, 3),
         "array": lambda: jnp.array(a), "asarray": lambda: jnp.asarray(a)}
  if under_mesh:
    with jax.set_mesh(mesh):
      outs = {k: f() for k, f in fns.items()}
  else:
    outs = {k: f() for k, f in fns.items()}
  for name, out in outs.items():
    assert out.sharding == NamedSharding(mesh, P("x", None)), name
    assert str(jax.typeof(out)) == "float32[4@x,4]", name
  np.testing.assert_array_equal(np.asarray(outs["full_like"]), np.full((4, 4), 3.0))
  assert type(jnp.ones_like(a, shape=(2,)).sharding).__name__ == "SingleDeviceSharding"
