"""Printed shardings where openjax differed from JAX 0.10.2 (issue 16):
``jnp.zeros``/``ones``/``empty``/``full`` with ``out_sharding`` inside a
partially manual shard_map body and under ``jit`` (typed along the
Explicit axes), where a ``jit`` call's results lie (no mesh, ``set_mesh``,
sharded or unused arguments, constant results, ``out_shardings``), and
``jax.typeof`` of ``jit`` arguments made off the mesh. Each case is a
function of the library module (``jax`` or ``openjax``) and the device
count, returning what it prints and its result or error. generate.py runs
them under JAX 0.10.2 on 2 and 4 CPU devices (expected.json);
tests/test_sharding_leftovers10.py runs them under openjax and compares."""
import contextlib
import io

import numpy as np


def _outcome(thunk):
  buf = io.StringIO()
  try:
    with contextlib.redirect_stdout(buf):
      result = thunk()
  except Exception as e:  # noqa: BLE001 - the error is the case's outcome
    # (JAX names the user's source line after its message)
    result = f"{type(e).__name__}: {str(e).split(' This error occurs at source')[0]}"
  return buf.getvalue() + str(result)


def _show(jax, r):
  return "\n".join(f"{jax.typeof(x)} {x.sharding} {np.asarray(x).tolist()}"
                   for x in jax.tree_util.tree_leaves(r))


def _meshes(jax, n):
  types = jax.sharding.AxisType
  return {"explicit": jax.make_mesh((n // 2, 2), ("i", "j"), axis_types=(types.Explicit,) * 2),
          "auto": jax.make_mesh((n // 2, 2), ("i", "j"), axis_types=(types.Auto,) * 2)}


def creation_cases(jax, n):
  """Creation functions with ``out_sharding`` in a shard_map body manual
  over 'i' of an Explicit ('i', 'j') mesh, eagerly and under jit, and under
  jit with a context mesh."""
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  jnp = jax.numpy
  mesh = _meshes(jax, n)["explicit"]
  x = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                     NamedSharding(mesh, P("i", "j")))
  xr = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                      NamedSharding(mesh, P("i")))
  out = {}

  def typed(tag, make):
    try:
      v = make()
      print(tag, jax.typeof(v), jax.typeof(v).sharding)
    except Exception as e:  # noqa: BLE001 - printed as the case's outcome
      print(tag, f"{type(e).__name__}: {str(e).split(' This error occurs at source')[0]}")

  def body(v):
    typed("zeros", lambda: jnp.zeros((4, 4), out_sharding=P(None, "j")))
    typed("zeros_j", lambda: jnp.zeros((4,), out_sharding=P("j")))
    typed("zeros_whole", lambda: jnp.zeros((4, 4), out_sharding=P()))
    typed("ones", lambda: jnp.ones((4, 4), jnp.int32, out_sharding=P("j")))
    typed("empty", lambda: jnp.empty((4, 4), out_sharding=P(None, "j")))
    typed("full", lambda: jnp.full((4, 4), 2.0, out_sharding=P(None, "j")))
    typed("full_array", lambda: jnp.full((4, 4), jnp.arange(4.0), out_sharding=P(None, "j")))
    typed("zeros_manual_axis", lambda: jnp.zeros((4, 4), out_sharding=P("i")))
    typed("zeros_outer_mesh",
          lambda: jnp.zeros((4, 4), out_sharding=NamedSharding(mesh, P(None, "j"))))
    z = jnp.zeros((4, 4), out_sharding=P(None, "j"))
    return v + z

  def body_zeros(v):
    z = jnp.full((4, 4), 3.0, out_sharding=P(None, "j"))
    print("z", jax.typeof(z))
    return z * 2

  def body_like(v):
    typed("zeros_like", lambda: jnp.zeros_like(v))
    typed("ones_like", lambda: jnp.ones_like(v, dtype=jnp.int32))
    typed("full_like", lambda: jnp.full_like(v, 3))
    typed("empty_like", lambda: jnp.empty_like(v))
    typed("zeros_like_asked", lambda: jnp.zeros_like(v, out_sharding=P(None, "j")))
    typed("zeros_like_reshaped", lambda: jnp.zeros_like(v, shape=(2, 4)))
    return jnp.ones_like(v) + v

  like = jax.shard_map(body_like, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
  like_whole = jax.shard_map(body_like, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
  out["like_whole_mesh_manual_jit"] = _outcome(lambda: _show(jax, jax.jit(like_whole)(xr)))
  out["like_jit_no_mesh"] = _outcome(lambda: _show(jax, jax.jit(body_like)(x)))
  with jax.set_mesh(mesh):
    out["like_body_eager"] = _outcome(lambda: _show(jax, like(x)))
    out["like_body_jit"] = _outcome(lambda: _show(jax, jax.jit(like)(x)))
    out["like_jit"] = _outcome(lambda: _show(jax, jax.jit(body_like)(x)))
    f = jax.shard_map(body, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    g = jax.shard_map(body_zeros, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    out["body_eager"] = _outcome(lambda: _show(jax, f(x)))
    out["body_jit"] = _outcome(lambda: _show(jax, jax.jit(f)(x)))
    out["body_result_eager"] = _outcome(lambda: _show(jax, g(xr)))
    out["body_result_jit"] = _outcome(lambda: _show(jax, jax.jit(g)(xr)))
    out["jit_spec"] = _outcome(lambda: _show(jax, jax.jit(
        lambda: jnp.zeros((4, 4), out_sharding=P(None, "j")))()))
    out["jit_named"] = _outcome(lambda: _show(jax, jax.jit(
        lambda: jnp.ones((4, 4), out_sharding=NamedSharding(mesh, P("i"))))()))
    out["jit_full"] = _outcome(lambda: _show(jax, jax.jit(
        lambda: jnp.full((4, 4), 1, out_sharding=P(None, "j")))()))
    out["jit_device"] = _outcome(lambda: _show(jax, jax.jit(
        lambda: jnp.zeros((4, 4), device=NamedSharding(mesh, P(None, "j"))))()))
  auto = _meshes(jax, n)["auto"]
  with jax.set_mesh(auto):
    out["jit_auto_axis"] = _outcome(lambda: _show(jax, jax.jit(
        lambda: jnp.zeros((4, 4), out_sharding=P(None, "j")))()))
    out["eager_auto_axis"] = _outcome(lambda: _show(jax, jnp.ones((4, 4), out_sharding=P("j"))))
    out["eager_auto_whole"] = _outcome(lambda: _show(jax, jnp.ones((4, 4), out_sharding=P())))
  split = NamedSharding(auto, P("j"))
  out["eager_named_auto"] = _outcome(lambda: _show(jax, jnp.zeros((4, 4), out_sharding=split)))
  out["eager_full_auto"] = _outcome(lambda: _show(jax, jnp.full((4,), 2, out_sharding=split)))
  out["eager_array_auto"] = _outcome(lambda: _show(jax, jnp.array(np.ones(4), out_sharding=split)))
  out["eager_device_auto"] = _outcome(lambda: _show(jax, jnp.zeros((4, 4), device=split)))
  out["jit_spec_no_mesh"] = _outcome(lambda: _show(jax, jax.jit(
      lambda: jnp.zeros((4, 4), out_sharding=P(None, "j")))()))
  return out


def placement_cases(jax, n):
  """Where a jit call's results lie: constant results with no mesh, with
  sharded arguments (read or not), with ``out_shardings``, and under
  ``jax.set_mesh``."""
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  jnp = jax.numpy
  out = {}
  x = jnp.arange(4.0)
  # (a new function per call: JAX's caches keyed by the function would
  # carry one case's placement into the next)
  def ones():
    return lambda: jnp.ones(3)

  def zeros():
    return lambda x: jnp.zeros(2)

  def both():
    return lambda x: (x * 2, jnp.zeros(2))

  def literal():
    return lambda x: (x, jnp.float32(1))

  def case(name, thunk):
    out[name] = _outcome(lambda: _show(jax, thunk()))

  warm = jax.jit(lambda a: a * 3)   # called outside the meshes first

  def printing(a):   # a replicated program's callback runs once
    jax.debug.print("a={a}", a=a)
    return a + 1

  def printed(r):
    jax.block_until_ready(r)
    jax.effects_barrier()
    return r
  case("warm_no_mesh", lambda: [warm(x), warm(x)])
  case("no_mesh_no_args", lambda: jax.jit(ones())())
  case("no_mesh_arg", lambda: jax.jit(zeros())(x))
  for kind, mesh in _meshes(jax, n).items():
    xs = jax.device_put(x, NamedSharding(mesh, P("i")))
    case(f"{kind}_sharded_arg_unused", lambda: jax.jit(zeros())(xs))
    case(f"{kind}_sharded_arg_unused_kept", lambda: jax.jit(zeros(), keep_unused=True)(xs))
    case(f"{kind}_sharded_arg_and_constant", lambda: jax.jit(both())(xs))
    case(f"{kind}_sharded_arg_and_literal", lambda: jax.jit(literal())(xs))
    case(f"{kind}_out_shardings",
         lambda: jax.jit(ones(), out_shardings=NamedSharding(mesh, P()))())
    with jax.set_mesh(mesh):
      case(f"{kind}_set_mesh_no_args", lambda: jax.jit(ones())())
      case(f"{kind}_set_mesh_arg", lambda: jax.jit(zeros())(x))
      case(f"{kind}_set_mesh_sharded_arg", lambda: jax.jit(zeros())(xs))
      case(f"{kind}_set_mesh_both", lambda: jax.jit(both())(x))
      case(f"{kind}_set_mesh_both_sharded", lambda: jax.jit(both())(xs))
      case(f"{kind}_set_mesh_passthrough", lambda: jax.jit(lambda a: a)(x))
      case(f"{kind}_set_mesh_scalar", lambda: jax.jit(lambda: jnp.float32(2))())
      case(f"{kind}_set_mesh_python_int", lambda: jax.jit(lambda: 3)())
      case(f"{kind}_set_mesh_out_shardings_spec", lambda: jax.jit(ones(), out_shardings=P())())
      x1 = jax.device_put(x, jax.devices()[1])
      case(f"{kind}_set_mesh_committed_unused", lambda: jax.jit(zeros())(x1))
      case(f"{kind}_set_mesh_committed_read", lambda: jax.jit(both())(x1))
      case(f"{kind}_set_mesh_eager", lambda: ones()())
      case(f"{kind}_set_mesh_warm", lambda: [warm(x), warm(x)])
      case(f"{kind}_set_mesh_debug_print", lambda: printed(jax.jit(printing)(x)))
    case(f"{kind}_after_set_mesh_warm", lambda: [warm(x), warm(x)])
  return out


def typeof_cases(jax, n):
  """``jax.typeof`` of jit arguments under ``jax.set_mesh``: those made off
  the mesh name the empty mesh, those laid out over it the mesh; values
  computed inside name the mesh."""
  jnp = jax.numpy
  out = {}
  x = jnp.arange(4.0)

  def make():
    def f(*args):
      for a in args:
        print("arg", jax.typeof(a), jax.typeof(a).sharding)
      b = args[0] * 2
      print("computed", jax.typeof(b), jax.typeof(b).sharding)
      return b
    return jax.jit(f)

  def inner(a, b):
    print("inner", jax.typeof(a).sharding.mesh, jax.typeof(b).sharding.mesh)
    return a + b

  def nested(a):   # an argument passed on keeps its type; a computed value has the mesh
    return jax.jit(inner)(a, a * 2)

  def vmap_grad(a):
    rows = jax.vmap(lambda r: print("row", jax.typeof(r).sharding.mesh) or r)(a)
    grads = jax.grad(lambda v: print("primal", jax.typeof(v).sharding.mesh) or v.sum())(a)
    return rows + grads

  for kind, mesh in _meshes(jax, n).items():
    with jax.set_mesh(mesh):
      y = jnp.arange(4.0)
      f = make()
      out[f"{kind}_made_before"] = _outcome(lambda: _show(jax, f(x)))
      out[f"{kind}_numpy_same_type"] = _outcome(lambda: _show(jax, f(np.arange(4.0))))
      out[f"{kind}_made_under_mesh"] = _outcome(lambda: _show(jax, f(y)))
      out[f"{kind}_scalar"] = _outcome(lambda: _show(jax, make()(2.0)))
      out[f"{kind}_numpy"] = _outcome(lambda: _show(jax, make()(np.ones(3, np.float32))))
      out[f"{kind}_both"] = _outcome(lambda: _show(jax, make()(x, y)))
      out[f"{kind}_nested"] = _outcome(lambda: _show(jax, jax.jit(nested)(x)))
      out[f"{kind}_vmap_grad"] = _outcome(lambda: _show(jax, jax.jit(vmap_grad)(x[None])))
  out["no_mesh"] = _outcome(lambda: _show(jax, make()(x)))
  return out
