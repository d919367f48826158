"""Sharding rules that keep a split where JAX keeps it: gather/scatter
(batch and passed-through dimensions), conv (batch and spatial dimensions of
the input), fft (every dimension keeps its layout), reduce_window and its
gradients, sort/cumsum/top_k along a whole axis, pad/split/dynamic_slice
(sizes its devices divide), tile, stack, dynamic_update_slice. Each case is
jitted over Explicit axes of a (2, 4) mesh: ``jax.typeof`` of the result
must print what JAX 0.10.2 prints (or the call raise JAX's
ShardingTypeError), and the values must equal the same program on
unsharded inputs.
"""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.sharding import NamedSharding, PartitionSpec as P
from openjax._src.errors import ShardingTypeError
from tests.test_sharded_jit import cpu_devices, executor, plans  # noqa: F401 - fixture

A_VALUE = np.arange(8 * 4 * 6, dtype=np.float32).reshape(8, 4, 6) / 7
IDX = np.array([0, 2], np.int32)

# name: (function of A (8@x,4@y,6) and B (8@x,4,6), what JAX 0.10.2 prints:
# jax.typeof of the result, or the start of its ShardingTypeError)
CASES = {
    "cumsum_whole_axis": (lambda A, B: jnp.cumsum(A, axis=2), "float32[8@x,4@y,6]"),
    "cumsum_split_axis": (lambda A, B: jnp.cumsum(A, axis=0),
                          "Input should be unsharded over the axis being reduced."),
    "sort_whole_axis": (lambda A, B: jnp.sort(A, axis=2), "float32[8@x,4@y,6]"),
    "argsort": (lambda A, B: jnp.argsort(A, axis=2), "int32[8@x,4@y,6]"),
    "fft_last": (lambda A, B: jnp.fft.fft(A), "complex64[8@x,4@y,6]"),
    "rfft": (lambda A, B: jnp.fft.rfft(B), "complex64[8@x,4,4]"),
    "fft2": (lambda A, B: jnp.fft.fft2(B), "complex64[8@x,4,6]"),
    "irfft": (lambda A, B: jnp.fft.irfft(B), "float32[8@x,4,10]"),
    "take_axis1": (lambda A, B: jnp.take(B, IDX, axis=1), "float32[8@x,2,6]"),
    "index_middle": (lambda A, B: B[:, IDX], "float32[8@x,2,6]"),
    "index_last": (lambda A, B: B[..., IDX], "float32[8@x,4,2]"),
    "index_split_axis": (lambda A, B: B[IDX], "Use `.at[...].get(out_sharding=)` to provide"),
    "index_int": (lambda A, B: A[:, :, 1], "float32[8@x,4@y]"),
    "take_along_axis": (lambda A, B: jnp.take_along_axis(
        B, jnp.zeros((8, 4, 1), jnp.int32), axis=2), "float32[8@x,4,1]"),
    "at_set_middle": (lambda A, B: B.at[:, IDX].set(1.0), "float32[8@x,4,6]"),
    "at_add_last": (lambda A, B: B.at[..., IDX].add(1.0), "float32[8@x,4,6]"),
    "at_set_split_axis": (lambda A, B: B.at[IDX].set(1.0),
                          "Use `.at[...].set/add/mul/...(out_sharding=)` to provide"),
    "reduce_window": (lambda A, B: lax.reduce_window(B, 0., lax.add, (1, 2, 2), (1, 1, 1),
                                                     "VALID"), "float32[8@x,3,5]"),
    "reduce_window_split_axis": (
        lambda A, B: lax.reduce_window(B, 0., lax.add, (2, 1, 1), (1, 1, 1), "VALID"),
        "reduce_window on sharded dims where out dim (7) is not divisible by mesh axes (2) "
        "with spec (x) is not implemented. Got input type=f32[8@x,4,6] and output "
        "shape=(7, 4, 6)"),
    "max_pool": (lambda A, B: lax.reduce_window(B, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2),
                                                "VALID"), "float32[8@x,2,3]"),
    "max_pool_grad": (lambda A, B: jax.grad(lambda t: jnp.sum(lax.reduce_window(
        t, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID")))(B), "float32[8@x,4,6]"),
    "overlapping_max_pool_grad": (lambda A, B: jax.grad(lambda t: jnp.sum(lax.reduce_window(
        t, -jnp.inf, lax.max, (1, 2, 2), (1, 1, 1), "VALID")))(B), "float32[8@x,4,6]"),
    "top_k": (lambda A, B: lax.top_k(A, 2)[0], "float32[8@x,4@y,2]"),
    "top_k_indices": (lambda A, B: lax.top_k(A, 2)[1], "int32[8@x,4@y,2]"),
    "pad": (lambda A, B: jnp.pad(B, ((0, 0), (1, 1), (1, 1))), "float32[8@x,6,8]"),
    "pad_split_axis": (lambda A, B: jnp.pad(B, ((1, 1), (0, 0), (0, 0))), "float32[10@x,4,6]"),
    "pad_indivisible": (lambda A, B: jnp.pad(B, ((1, 0), (0, 0), (0, 0))),
                        "padding on sharded dims where out dim (9) is not divisible by mesh "
                        "axes (2) with spec (x) is not implemented."),
    "dynamic_slice": (lambda A, B: lax.dynamic_slice(B, (0, 1, 1), (8, 2, 2)),
                      "float32[8@x,2,2]"),
    "dynamic_slice_split_axis": (lambda A, B: lax.dynamic_slice(B, (1, 1, 1), (4, 2, 2)),
                                 "float32[4@x,2,2]"),
    "dynamic_slice_indivisible": (lambda A, B: lax.dynamic_slice(B, (1, 1, 1), (3, 2, 2)),
                                  "dynamic_slice on sharded dims where out dim (3) is not "
                                  "divisible by mesh axes (2)"),
    "stack": (lambda A, B: jnp.stack([B, B]), "float32[2,8@x,4,6]"),
    "stack_axis1": (lambda A, B: jnp.stack([B, B], axis=1), "float32[8@x,2,4,6]"),
    "split": (lambda A, B: jnp.split(B, 2, axis=2)[0], "float32[8@x,4,3]"),
    "split_split_axis": (lambda A, B: jnp.split(B, 2, axis=0)[0], "float32[4@x,4,6]"),
    "tile": (lambda A, B: jnp.tile(B, (1, 2, 1)), "float32[8@x,8,6]"),
    "unstack": (lambda A, B: jnp.unstack(B, axis=2)[0], "float32[8@x,4]"),
    "argmax": (lambda A, B: jnp.argmax(A, axis=2), "int32[8@x,4@y]"),
}

CONV_CASES = {
    # lhs layout, rhs layout, what JAX prints
    "batch": ((8, 3, 10, 10), ("x", None, None, None), (4, 3, 3, 3), (), "float32[8@x,4,10,10]"),
    "spatial": ((2, 3, 8, 10), (None, None, "x", None), (4, 3, 3, 3), (),
                "float32[2,4,8@x,10]"),
    "kernel_split": ((2, 3, 10, 10), (), (8, 3, 3, 3), ("y", None, None, None),
                     "Please specify the output sharding via `out_sharding` parameter of "
                     "`conv_general_dilated`"),
    "input_features": ((2, 8, 10, 10), (None, "x", None, None), (4, 8, 3, 3), (),
                       "Please specify the output sharding via `out_sharding` parameter"),
}


def _check(fn, args_sharded, args_whole, want):
  f = jax.jit(fn)
  if "[" not in want or " " in want:   # an error's start
    with pytest.raises(ShardingTypeError) as info:
      f(*args_sharded)
    assert str(info.value).startswith(want), str(info.value)
    return
  out = f(*args_sharded)
  assert str(jax.typeof(out)) == want
  ref = f(*args_whole)
  np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-5, atol=1e-5)
  if "@" in want:   # laid out as typed: each device holds its piece
    for s in out.addressable_shards:
      np.testing.assert_allclose(np.asarray(s.data), np.asarray(ref)[s.index], rtol=1e-5,
                                 atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_typeof_and_values_match_jax(name, executor):
  fn, want = CASES[name]
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      a = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", "y", None)))
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      _check(fn, (a, b), (A_VALUE, A_VALUE), want)


@pytest.mark.parametrize("name", sorted(CONV_CASES))
def test_conv_typeof_and_values_match_jax(name, executor):
  lhs_shape, lhs_spec, rhs_shape, rhs_spec, want = CONV_CASES[name]
  rng = np.random.default_rng(0)
  lhs = rng.standard_normal(lhs_shape).astype(np.float32)
  rhs = rng.standard_normal(rhs_shape).astype(np.float32)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      put = lambda v, spec: jax.device_put(v, NamedSharding(mesh, P(*spec)))
      conv = lambda l, r: lax.conv_general_dilated(l, r, (1, 1), "SAME")
      _check(conv, (put(lhs, lhs_spec), put(rhs, rhs_spec)), (lhs, rhs), want)


def test_dynamic_update_slice_needs_matching_layouts():
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      u = jax.device_put(np.zeros((8, 2, 2), np.float32), NamedSharding(mesh, P(None, None, "x")))
      with pytest.raises(ShardingTypeError, match=r"^dynamic_update_slice operand sharding "
                         r"must be equal to update sharding, got operand sharding "
                         r"float32\[8@x,4,6\]\(\{Explicit: \('x', 'y'\)\}\) and update "
                         r"sharding float32\[8,2,2@x\]"):
        jax.jit(lambda o, v: lax.dynamic_update_slice(o, v, (0, 1, 1)))(b, u)
      same = jax.device_put(np.ones((8, 2, 2), np.float32), NamedSharding(mesh, P("x")))
      out = jax.jit(lambda o, v: lax.dynamic_update_slice(o, v, (0, 1, 1)))(b, same)
      assert str(jax.typeof(out)) == "float32[8@x,4,6]"   # JAX 0.10.2
      want = A_VALUE.copy()
      want[:, 1:3, 1:3] = 1
      np.testing.assert_array_equal(np.asarray(out), want)


def test_tile_and_top_k_errors_name_the_split_dimension():
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      with pytest.raises(ShardingTypeError, match=r"^Operand cannot be sharded on dimension 0 "
                         r"when the tiling is non-trivial. Got input type: float32\[8@x,4,6\] "
                         r"with reps: \(2, 1, 1\)$"):
        jax.jit(lambda t: jnp.tile(t, (2, 1, 1)))(b)
      c = jax.device_put(np.ones((8, 4), np.float32), NamedSharding(mesh, P(None, "y")))
      with pytest.raises(ShardingTypeError, match=r"^The input should be unsharded over the "
                         r"axis along which to compute the top_k values. Got input "
                         r"type=float32\[8,4@y\] and axis=1$"):
        jax.jit(lambda t: lax.top_k(t, 2))(c)


def test_eager_operations_keep_the_layouts_jit_gives():
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      for fn in (lambda t: jnp.fft.rfft(t), lambda t: t[:, IDX],
                 lambda t: jnp.pad(t, ((0, 0), (1, 1), (0, 0))), lambda t: jnp.sort(t, axis=2),
                 lambda t: jnp.cumsum(t, axis=1)):
        eager, jitted = fn(b), jax.jit(fn)(b)
        assert jax.typeof(eager) == jax.typeof(jitted)
        assert eager.sharding == jitted.sharding
        np.testing.assert_allclose(np.asarray(eager), np.asarray(jitted), rtol=1e-5)


# JAX 0.10.2: jax.make_jaxpr(lambda a: jax.sharding.reshard(a * 2, P('x')))(jnp.arange(8.0))
JAX_RESHARD_JAXPR = """{ lambda ; a:f32[8]. let
    b:f32[8] = mul a 2.0:f32[]
    c:f32[8@x] = reshard b
  in (c,) }"""


def test_reshard_inside_jit_types_and_lays_out_the_value(executor):
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      x = jnp.arange(8.0)
      double = lambda a: jax.sharding.reshard(a * 2, P("x"))
      assert str(jax.make_jaxpr(double)(x)) == JAX_RESHARD_JAXPR
      out = jax.jit(double)(x)
      assert str(jax.typeof(out)) == "float32[8@x]" and out.sharding.spec == P("x")
      assert [s.data.tolist() for s in out.addressable_shards[::4]] == [[0, 2, 4, 6],
                                                                       [8, 10, 12, 14]]
      y = jax.device_put(np.arange(8.0, dtype=np.float32), P("x"))
      whole = jax.jit(lambda a: jax.sharding.reshard(a, P()))(y)
      assert str(jax.typeof(whole)) == "float32[8]" and whole.tolist() == list(range(8))
      g = jax.grad(lambda a: jnp.sum(jax.sharding.reshard(a, P("x")) ** 2))(x)
      assert str(jax.typeof(g)) == "float32[8]" and g.tolist() == [2.0 * i for i in range(8)]
      v = jax.jit(jax.vmap(lambda a: jax.sharding.reshard(a, P("y"))))(jnp.ones((3, 8)))
      assert str(jax.typeof(v)) == "float32[3,8@y]"


# name: (sampler call, what jax.typeof prints in JAX 0.10.2 under jit)
OUT_SHARDING_CASES = {
    "normal": (lambda k: jax.random.normal(k, (8, 4), out_sharding=P("x", "y")),
               "float32[8@x,4@y]"),
    "uniform": (lambda k: jax.random.uniform(k, (8, 4), out_sharding=P("x")), "float32[8@x,4]"),
    "bits": (lambda k: jax.random.bits(k, (8, 4), out_sharding=P("x", None)), "uint32[8@x,4]"),
    "randint": (lambda k: jax.random.randint(k, (8, 4), 0, 10, out_sharding=P(None, "y")),
                "int32[8,4@y]"),
    "iota": (lambda k: lax.broadcasted_iota(jnp.int32, (8, 4), 0, out_sharding=P("x")),
             "int32[8@x,4]"),
    "iota_last": (lambda k: lax.broadcasted_iota(jnp.int32, (8, 4), 1, out_sharding=P(None, "y")),
                  "int32[8,4@y]"),
}


@pytest.mark.parametrize("name", sorted(OUT_SHARDING_CASES))
def test_out_sharding_of_samplers_and_iota(name):
  fn, want = OUT_SHARDING_CASES[name]
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      key = jax.random.key(1)
      out = jax.jit(fn)(key)
      assert str(jax.typeof(out)) == want
      plain = jax.jit(lambda k: _unsharded(name, k))(key)
      np.testing.assert_array_equal(np.asarray(out), np.asarray(plain))
      if not name.startswith("iota"):   # eager samplers are laid out too
        eager = fn(key)
        assert str(jax.typeof(eager)) == want and eager.sharding == out.sharding
        np.testing.assert_array_equal(np.asarray(eager), np.asarray(plain))


def _unsharded(name, key):
  return {"normal": lambda: jax.random.normal(key, (8, 4)),
          "uniform": lambda: jax.random.uniform(key, (8, 4)),
          "bits": lambda: jax.random.bits(key, (8, 4)),
          "randint": lambda: jax.random.randint(key, (8, 4), 0, 10),
          "iota": lambda: lax.broadcasted_iota(jnp.int32, (8, 4), 0),
          "iota_last": lambda: lax.broadcasted_iota(jnp.int32, (8, 4), 1)}[name]()


def test_results_carry_out_shardings_as_given(executor):
  # JAX 0.10.2 (4 devices, Explicit and Auto axes): P() asked gives P(),
  # P(None) gives P(None,), no out_shardings over a replicated input P(None,).
  with cpu_devices(4):
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P()))
    assert jax.jit(lambda a: a * 2)(x).sharding.spec == P(None)
    y = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(mesh, P("x")))
    for spec in (P(), P(None)):
      out = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, spec))(y)
      assert out.sharding.spec == spec and str(out.sharding.spec) == str(spec)
      assert out.tolist() == list(range(0, 16, 2))
    assert jax.jit(jnp.sum)(y).sharding.spec == P()
    auto = jax.make_mesh((4,), ("x",), axis_types=(jax.sharding.AxisType.Auto,))
    z = jax.device_put(np.arange(8.0, dtype=np.float32), NamedSharding(auto, P("x")))
    for spec in (P(), P(None)):
      out = jax.jit(lambda a: a * 2, out_shardings=NamedSharding(auto, spec))(z)
      assert str(out.sharding.spec) == str(spec)


def test_data_parallel_conv_gradients(executor):
  # JAX 0.10.2: grad of a conv over a batch split on x gives the kernel's
  # gradient whole (float32[4,3,3,3]) and the input's split (float32[8@x,3,10,10]).
  rng = np.random.default_rng(1)
  xv = rng.standard_normal((8, 3, 10, 10)).astype(np.float32)
  wv = rng.standard_normal((4, 3, 3, 3)).astype(np.float32) * 0.1
  loss = lambda w, x: jnp.sum(lax.conv_general_dilated(x, w, (1, 1), "SAME") ** 2)
  grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
  want = grad(wv, xv)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      x = jax.device_put(xv, NamedSharding(mesh, P("x")))
      gw, gx = grad(jnp.asarray(wv), x)
      assert [str(jax.typeof(g)) for g in (gw, gx)] == ["float32[4,3,3,3]",
                                                        "float32[8@x,3,10,10]"]
      for got, ref in zip((gw, gx), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=2e-4, atol=2e-4)


GRAD_CASES = sorted(n for n, (_, want) in CASES.items()
                    if want.startswith(("float", "complex")) and " " not in want)


@pytest.mark.parametrize("name", GRAD_CASES)
def test_gradients_through_the_rules_match_unsharded(name):
  # Transposes scatter into whole zeros (gather, dynamic_slice) or gather
  # from split cotangents: the rules accept their operands' layouts.
  fn = CASES[name][0]

  def loss(a, b):
    out = fn(a, b)
    return jnp.sum(jnp.abs(out) ** 2) if jnp.iscomplexobj(out) else jnp.sum(out ** 2)
  grad = jax.jit(jax.grad(loss, argnums=(0, 1)))
  want = grad(A_VALUE, A_VALUE)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      a = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", "y", None)))
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      for got, ref in zip(grad(a, b), want):
        np.testing.assert_allclose(np.asarray(got), np.asarray(ref), rtol=1e-4, atol=1e-3)


ROWS = np.zeros((8, 2), np.int32) + np.array([0, 3], np.int32)

# name: (function of B (8@x,4,6) and per-row indices I (8@x,2), JAX 0.10.2's typeof)
VMAP_CASES = {
    "index": (lambda b, i: jax.vmap(lambda r: r[:, IDX])(b), "float32[8@x,4,2]"),
    "per_row_take": (lambda b, i: jax.vmap(lambda r, j: r[j])(b, i), "float32[8@x,2,6]"),
    "per_row_set": (lambda b, i: jax.vmap(lambda r, j: r.at[j].set(1.0))(b, i),
                    "float32[8@x,4,6]"),
    "sort": (lambda b, i: jax.vmap(lambda r: jnp.sort(r, axis=0))(b), "float32[8@x,4,6]"),
    "dynamic_slice": (lambda b, i: jax.vmap(lambda r: lax.dynamic_slice(r, (1, 1), (2, 2)))(b),
                      "float32[8@x,2,2]"),
    "rfft": (lambda b, i: jax.vmap(jnp.fft.rfft)(b), "complex64[8@x,4,4]"),
    "top_k": (lambda b, i: jax.vmap(lambda r: lax.top_k(r, 2)[0])(b), "float32[8@x,4,2]"),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_over_a_split_batch_keeps_it(name):
  # Batched library calls (jitted) are traced with the batch's sharding.
  fn, want = VMAP_CASES[name]
  ref = jax.jit(fn)(A_VALUE, ROWS)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      i = jax.device_put(ROWS, NamedSharding(mesh, P("x", None)))
      out = jax.jit(fn)(b, i)
      assert str(jax.typeof(out)) == want
      np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-5, atol=1e-5)


# name: (function of B (8@x,4,6), JAX 0.10.2's typeof of its result)
PER_DEVICE_CASES = {
    "conv_batch": (lambda b: lax.conv_general_dilated(b[:, None], jnp.ones((2, 1, 3, 3)), (1, 1),
                                                      "SAME"), "float32[8@x,2,4,6]"),
    "sort": (lambda b: jnp.sort(b, axis=2), "float32[8@x,4,6]"),
    "top_k": (lambda b: lax.top_k(b, 3)[0], "float32[8@x,4,3]"),
    "rfft": (lambda b: jnp.fft.rfft(b), "complex64[8@x,4,4]"),
    "max_pool": (lambda b: lax.reduce_window(b, -jnp.inf, lax.max, (1, 2, 2), (1, 2, 2), "VALID"),
                 "float32[8@x,2,3]"),
    "cumsum": (lambda b: jnp.cumsum(b, axis=1), "float32[8@x,4,6]"),
}


@pytest.mark.parametrize("name", sorted(PER_DEVICE_CASES))
def test_split_batch_operations_run_per_device(name, executor):
  # Each device computes its own rows: one part, no collective, local shapes.
  fn, want = PER_DEVICE_CASES[name]
  ref = jax.jit(fn)(A_VALUE)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      f = jax.jit(fn)
      out = f(b)
      assert str(jax.typeof(out)) == want
      np.testing.assert_allclose(np.asarray(out), np.asarray(ref), rtol=1e-5, atol=1e-4)
      (plan,) = plans(f)
      kinds = [kind for kind, *_ in plan.steps]
      assert kinds == ["segment"], kinds
      (seg,) = [rest[0] for kind, *rest in plan.steps]
      assert seg.closed.in_avals[0].shape == (4, 4, 6)   # each device's rows only


# JAX 0.10.2: jit(grad(f, argnums=(0, 1)))(a, b), a split P('x', 'y'), b P('x'):
# every gradient is typed as its argument.
GRAD_TYPES = ["float32[8@x,4@y,6]", "float32[8@x,4,6]"]
GRAD_TYPED_CASES = {
    "elementwise_mixed": lambda A, B: jnp.tanh(A) * B,
    "unused_argument": lambda A, B: B * 2,
    "matmul": lambda A, B: B.reshape(8, 24) @ jnp.ones((24, 3)),
    "take": lambda A, B: jnp.take(B, IDX, axis=1),
    "pad": lambda A, B: jnp.pad(B, ((0, 0), (1, 1), (1, 1))),
    "top_k": lambda A, B: lax.top_k(A, 2)[0],
}


@pytest.mark.parametrize("name", sorted(GRAD_TYPED_CASES))
def test_gradients_are_typed_as_their_arguments(name):
  fn = GRAD_TYPED_CASES[name]
  eager = jax.grad(lambda a, b: jnp.sum(fn(a, b) ** 2), argnums=(0, 1))
  grad = jax.jit(eager)
  want = grad(A_VALUE, A_VALUE)
  with cpu_devices(8):
    mesh = jax.make_mesh((2, 4), ("x", "y"))
    with jax.set_mesh(mesh):
      a = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", "y", None)))
      b = jax.device_put(A_VALUE, NamedSharding(mesh, P("x", None, None)))
      for got in (grad(a, b), eager(a, b)):
        assert [str(jax.typeof(g)) for g in got] == GRAD_TYPES
        assert [g.sharding for g in got] == [a.sharding, b.sharding]
        for g, r in zip(got, want):
          np.testing.assert_allclose(np.asarray(g), np.asarray(r), rtol=1e-4, atol=1e-3)
