"""Sharding in types (Explicit mesh axes): each primitive's sharding rule
types results as JAX 0.10.2 does, or raises its ShardingTypeError; eager
operations lay results out the same way. Expected types and messages were
printed by JAX 0.10.2 on the same programs."""
import contextlib

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import registry
from openjax._src.core.sharding_rules import elementwise_rule, reshape_spec
from openjax._src.errors import ShardingTypeError
from openjax.sharding import NamedSharding, PartitionSpec as P


@contextlib.contextmanager
def cpu_devices(n: int):
  jax.config.update("jax_num_cpu_devices", n)
  try:
    yield jax.devices()
  finally:
    jax.config.update("jax_num_cpu_devices", -1)


@pytest.fixture
def mesh22():
  with cpu_devices(4):
    yield jax.make_mesh((2, 2), ("x", "y"))


@pytest.fixture
def arrays(mesh22):
  value = np.arange(32, dtype=np.float32).reshape(8, 4)
  put = lambda *spec: jax.device_put(value, NamedSharding(mesh22, P(*spec)))
  return value, put("x", "y"), put("y", None), put(None, "x")


def typeof_jit(f, *args):
  return str(jax.typeof(jax.jit(f)(*args)))


# JAX 0.10.2, mesh (x=2, y=2), a: f32[8@x,4@y], b: f32[8@y,4], c: f32[8,4@x].
TYPED = [
    ("sin", lambda a, b, c: jnp.sin(a) * 2, "float32[8@x,4@y]"),
    ("add_complementary", lambda a, b, c: b + c, "float32[8@y,4@x]"),
    ("reshape_merge", lambda a, b, c: a.reshape(32), "float32[32@(x,y)]"),
    ("reshape_split", lambda a, b, c: a.reshape(2, 4, 4), "float32[2@x,4,4@y]"),
    ("slice_divisible", lambda a, b, c: a[:4], "float32[4@x,4@y]"),
    ("sum_all", lambda a, b, c: a.sum(), "float32[]"),
    ("sum_rows", lambda a, b, c: a.sum(1), "float32[8@x]"),
    ("argmax", lambda a, b, c: jnp.argmax(a, 1), "int32[8@x]"),
    ("concat_split_dim", lambda a, b, c: jnp.concatenate([a, a], 0), "float32[16@x,4@y]"),
    ("concat_whole_dim", lambda a, b, c: jnp.concatenate([b, b], 1), "float32[8@y,8]"),
    ("iota", lambda a, b, c: a + jnp.arange(4.0), "float32[8@x,4@y]"),
    ("keepdims", lambda a, b, c: jnp.exp(a).sum(1, keepdims=True) * a, "float32[8@x,4@y]"),
    ("transpose", lambda a, b, c: a.T, "float32[4@y,8@x]"),
    ("matmul_free", lambda a, b, c: b @ jnp.ones((4, 3)), "float32[8@y,3]"),
    ("broadcast", lambda a, b, c: a[None] + 1, "float32[1,8@x,4@y]"),
]


@pytest.mark.parametrize("name,f,expected", TYPED, ids=[t[0] for t in TYPED])
def test_jit_types_and_values_as_jax(arrays, name, f, expected):
  value, a, b, c = arrays
  out = jax.jit(f)(a, b, c)
  assert str(jax.typeof(out)) == expected
  np.testing.assert_allclose(np.asarray(out), np.asarray(f(value, value, value)), rtol=1e-5)
  # The staged program is typed the same.
  assert str(jax.make_jaxpr(f)(a, b, c).out_avals[0].str_short()).replace(
      "f32", "float32").replace("i32", "int32") == expected


ERRORS = [
    ("add_conflict", lambda a, b, c: a + b,
     "add got incompatible shardings for broadcasting: ('x', 'y'), ('y', None)."),
    ("reshape_unsupported", lambda a, b, c: a.reshape(4, 8),
     "This reshape is not supported. Please specify the sharding of the output via the "
     "`out_sharding` argument of jax.lax.reshape. Got operand type: float32[8@x,4@y], new "
     "sizes: (4, 8)"),
    ("cumsum_split_axis", lambda a, b, c: jnp.cumsum(a, 1),
     "Input should be unsharded over the axis being reduced. Got input type=float32[8@x,4@y] "
     "and axis=1"),
    ("sort_split_axis", lambda a, b, c: jnp.sort(a, 1),
     "Arguments to sort must be unsharded over the sorting dimension."),
    ("contracting_inconsistent", lambda a, b, c: a @ c.T,
     "dot_general requires contracting dimensions to have consistent sharding, got ('y',) "
     "and ('x',)."),
    ("contracting_split", lambda a, b, c: b.T @ b,
     "Contracting dimensions are sharded and it is ambiguous how the output should be sharded."
     " Please specify the output sharding via the `out_sharding` parameter. Got "
     "lhs_contracting_spec=('y',) and rhs_contracting_spec=('y',)"),
    ("illegal_result", lambda a, b, c: b @ b.T,
     "dot_general operation with inputs: f32[8@y,4], f32[4,8@y] produces an illegally sharded "
     "result: f32[8@y,8@y]"),
    ("slice_indivisible", lambda a, b, c: lax.slice(a, (0, 0), (3, 4)),
     "slicing on sharded dims where out dim (3) is not divisible by mesh axes (2) with spec (x) "
     "is not implemented. Got input type=f32[8@x,4@y] and output shape=(3, 4)"),
]


@pytest.mark.parametrize("name,f,message", ERRORS, ids=[t[0] for t in ERRORS])
def test_jax_sharding_type_errors(arrays, name, f, message):
  _, a, b, c = arrays
  for run in (lambda: jax.make_jaxpr(f)(a, b, c), lambda: jax.jit(f)(a, b, c),
              lambda: f(a, b, c)):   # staged, jitted and eager alike
    with pytest.raises(ShardingTypeError) as info:
      run()
    assert str(info.value).startswith(message)


def test_make_jaxpr_prints_sharded_types_as_jax(arrays):
  _, a, _, _ = arrays
  # JAX 0.10.2's printout.
  assert str(jax.make_jaxpr(lambda x: jnp.sin(x).T * 2)(a)) == (
      "{ lambda ; a:f32[8@x,4@y]. let\n"
      "    b:f32[8@x,4@y] = sin a\n"
      "    c:f32[4@y,8@x] = transpose[permutation=(1, 0)] b\n"
      "    d:f32[4@y,8@x] = mul c 2.0:f32[]\n"
      "  in (d,) }")


def test_contracting_over_a_split_dimension_with_out_sharding(arrays, mesh22):
  value, _, b, _ = arrays
  with jax.set_mesh(mesh22):
    f = lambda b: lax.dot_general(b, b, (((0,), (0,)), ((), ())), out_sharding=P())
    out = jax.jit(f)(b)
  assert str(jax.typeof(out)) == "float32[4,4]"
  np.testing.assert_allclose(np.asarray(out), value.T @ value, rtol=1e-5)


def test_eager_operations_lay_results_out_by_the_rules(arrays):
  value, a, _, _ = arrays
  cases = [(jnp.sin(a), "float32[8@x,4@y]", P("x", "y")),
           (a.sum(0), "float32[4@y]", P("y")),
           (a.sum(1), "float32[8@x]", P("x")),
           (a.T, "float32[4@y,8@x]", P("y", "x")),
           (jnp.mean(a), "float32[]", P()),
           (a.reshape(32), "float32[32@(x,y)]", P(("x", "y")))]
  refs = [np.sin(value), value.sum(0), value.sum(1), value.T, value.mean(), value.reshape(32)]
  for (out, typ, spec), ref in zip(cases, refs):
    assert str(jax.typeof(out)) == typ and out.sharding.spec == spec
    np.testing.assert_allclose(np.asarray(out), ref, rtol=1e-5)
    for shard in out.addressable_shards:
      np.testing.assert_allclose(np.asarray(shard.data), np.asarray(ref)[shard.index],
                                 rtol=1e-5)


def test_reshape_spec_groups_merges_and_splits():
  assert reshape_spec(("x", None), (8, 2), (16,)) == ("x",)
  assert reshape_spec(("x", None), (8, 2), (8, 2, 1)) == ("x", None, None)
  assert reshape_spec((None, None), (8, 2), (4, 4)) == (None, None)
  with pytest.raises(ShardingTypeError):
    reshape_spec((None, "x"), (8, 2), (16,))   # a split minor dimension cannot merge


def test_elementwise_rule_broadcasts_scalars_and_keeps_whole_dims_open():
  f32 = jax.ShapeDtypeStruct
  rule = elementwise_rule("mul")
  a, s = f32((8, 4), np.float32), f32((), np.float32)
  assert rule([("x", None), ()], [a, s], [a]) == [("x", None)]
  assert rule([("x", None), (None, "y")], [a, a], [a]) == [("x", "y")]


def test_every_primitive_has_a_sharding_rule_or_a_reason():
  for name, prim in registry.items():
    assert prim.sharding_rule is not None or "sharding_rule" in prim.not_applicable, name
