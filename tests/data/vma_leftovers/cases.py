"""Loops and conds inside shard_map whose carries/branches differ in the
manual axes they vary over (JAX's TypeErrors naming the types with their
{V:...} and its ``pcast`` advice), and jit's errors for arguments committed
to different devices (arguments named as JAX names them). Each case is a
function of the library module (``jax`` or ``openjax``) and the device
count, returning what it prints and its result or error. generate.py runs
them under JAX 0.10.2 on 2 and 4 CPU devices (expected.json);
tests/test_vma_leftovers.py and tests/test_sharding_errors_names.py run them
under openjax and compare."""
import contextlib
import io

import numpy as np


def _mesh(jax, n):
  auto = jax.sharding.AxisType.Auto
  return jax.make_mesh((n // 2, 2), ("i", "j"), axis_types=(auto, auto))


def _outcome(thunk):
  buf = io.StringIO()
  try:
    with contextlib.redirect_stdout(buf):
      result = thunk()
  except Exception as e:  # noqa: BLE001 - the error is the case's outcome
    result = f"{type(e).__name__}: {e}"
  else:
    result = np.array2string(np.asarray(result), precision=4)
  return buf.getvalue() + result


def _smap(jax, n, body, jit=True, out_specs=None, check_vma=True):
  P = jax.sharding.PartitionSpec
  f = jax.shard_map(body, mesh=_mesh(jax, n), in_specs=(P("i"), P()),
                    out_specs=P("i") if out_specs is None else out_specs, check_vma=check_vma)
  x = jax.numpy.arange(8.0, dtype=np.float32)
  y = jax.numpy.arange(4.0, dtype=np.float32)
  return lambda: (jax.jit(f) if jit else f)(x, y)


def _halves(jax, c):
  # a (4,) block per device from a replicated (4,) carry, for out_specs P('i')
  return jax.numpy.concatenate([c[:2], c[:2]])


def vma_cases(jax, n):
  lax, jnp = jax.lax, jax.numpy
  out = {}

  def case(name, body, **kw):
    out[name] = _outcome(_smap(jax, n, body, **kw))

  def scan_widens(x, y):
    c, _ = lax.scan(lambda c, _: (c + x.sum(), None), y, None, length=3)
    return _halves(jax, c)
  case("scan_carry_widens", scan_widens)
  case("scan_carry_widens_eager", scan_widens, jit=False)
  case("scan_carry_widens_unchecked", scan_widens, check_vma=False)

  def scan_pcast(x, y):
    c, _ = lax.scan(lambda c, _: (c + x.sum(), None), lax.pcast(y, ("i",), to="varying"),
                    None, length=3)
    return c
  case("scan_carry_pcast", scan_pcast)
  case("scan_carry_pcast_eager", scan_pcast, jit=False)

  def scan_narrows(x, y):
    c, _ = lax.scan(lambda c, _: (jnp.zeros(4), None), x, None, length=3)
    return c
  case("scan_carry_narrows", scan_narrows)

  def scan_tuple(x, y):
    (a, _), _ = lax.scan(lambda c, _: ((c[0] + x.sum(), c[1]), None), (y, jnp.float32(1)),
                         None, length=3)
    return _halves(jax, a)
  case("scan_carry_tuple", scan_tuple)

  def scan_two(x, y):
    c, _ = lax.scan(lambda c, _: ((c[0] + x.sum(), c[1] + lax.axis_index("j")), None),
                    (y, y), None, length=3)
    return _halves(jax, c[0])
  case("scan_carry_two_axes", scan_two)

  def scan_xs(x, y):
    c, _ = lax.scan(lambda c, xi: (c * xi, None), jnp.float32(1), x)
    return jnp.stack([c] * 4)
  case("scan_carry_from_xs", scan_xs)

  def scan_dtype(x, y):
    c, _ = lax.scan(lambda c, _: ((c + x.sum()).astype(jnp.int32), None), y, None, length=3)
    return c
  case("scan_carry_dtype_and_vma", scan_dtype)

  def scan_ys(x, y):
    c, ys = lax.scan(lambda c, xi: (c + 1.0, (xi * 2, c)), jnp.float32(0), x)
    print(jax.typeof(c), jax.typeof(ys[0]), jax.typeof(ys[1]))
    return ys[0]
  case("scan_ys_types", scan_ys)
  case("scan_ys_types_eager", scan_ys, jit=False)

  def fori_static(x, y):
    return _halves(jax, lax.fori_loop(0, 3, lambda i, c: c + x.sum(), y))
  case("fori_static_carry_widens", fori_static)

  def fori_dynamic(x, y):
    upper = jnp.int32(3) + 0 * lax.axis_index("j")
    return _halves(jax, lax.fori_loop(0, upper, lambda i, c: c + x.sum(), y))
  case("fori_dynamic_carry_widens", fori_dynamic)

  def while_widens(x, y):
    c = lax.while_loop(lambda c: c[0] < 100, lambda c: c + x.sum(), y)
    return _halves(jax, c)
  case("while_carry_widens", while_widens)
  case("while_carry_widens_eager", while_widens, jit=False)

  def while_pcast(x, y):
    return lax.while_loop(lambda c: c[0] < 100, lambda c: c + x.sum(),
                          lax.pcast(y, ("i",), to="varying"))
  case("while_carry_pcast", while_pcast)

  def cond_one(x, y):
    return lax.cond(True, lambda: y + x.sum(), lambda: y)
  case("cond_branches_differ", cond_one)
  case("cond_branches_differ_eager", cond_one, jit=False)

  def cond_two(x, y):
    r = lax.cond(True, lambda: (y, y + x.sum()), lambda: (y + lax.axis_index("j"), y))
    return r[0]
  case("cond_branches_differ_two", cond_two)

  def switch_(x, y):
    return lax.switch(1, [lambda: y, lambda: y + x.sum(), lambda: y])
  case("switch_branches_differ", switch_)

  def cond_dtype(x, y):
    return lax.cond(True, lambda: y.astype(jnp.int32) + x.sum().astype(jnp.int32),
                    lambda: y)
  case("cond_dtype_and_vma", cond_dtype)

  # A data-parallel step: grads through a scan over micro-batches whose
  # carry is cast to varying (without the cast: the carry error).
  mesh_b = jax.make_mesh((n,), ("b",), axis_types=(jax.sharding.AxisType.Explicit,))
  P = jax.sharding.PartitionSpec
  w = jnp.arange(6.0, dtype=np.float32).reshape(3, 2) / 10
  xb = jax.device_put(jnp.arange(24.0, dtype=np.float32).reshape(8, 3) / 24,
                      jax.sharding.NamedSharding(mesh_b, P("b")))

  def train_step(cast):
    def step(w, x):
      def loss(w):
        def body(c, xi):
          return c + jnp.sum(jnp.tanh(xi @ w) ** 2), None
        c0 = jnp.float32(0)
        tot, _ = lax.scan(body, lax.pcast(c0, ("b",), to="varying") if cast else c0,
                          x.reshape(2, -1, 3))
        return lax.psum(tot, "b")
      l, g = jax.value_and_grad(loss)(w)
      return jnp.concatenate([l[None], g.ravel()])
    return jax.shard_map(step, mesh=mesh_b, in_specs=(P(), P("b")), out_specs=P())

  for cast in (True, False):
    suffix = "" if cast else "_uncast"
    out["scan_grad_step" + suffix] = _outcome(lambda: train_step(cast)(w, xb))
    out["scan_grad_step_jit" + suffix] = _outcome(lambda: jax.jit(train_step(cast))(w, xb))
  return out


def device_error_cases(jax, n):
  jnp = jax.numpy
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  d = jax.devices()
  a = jax.device_put(jnp.ones(4), d[0])
  b = jax.device_put(jnp.ones(4), d[1])
  out = {}

  def case(name, thunk):
    out[name] = _outcome(thunk)

  def add(x, y):
    return x + y

  def varargs(x, *args, **kw):
    return x + args[0] + kw["z"]

  def static_first(s, x, y):
    return x + y

  def static_middle(x, s, y):
    return x + y

  def positional_only(p, /, q):
    return p + q

  def outer(x, y):
    return jax.jit(add)(x, y)

  case("jit_positional", lambda: jax.jit(add)(a, b))
  case("jit_positional_again", lambda: jax.jit(add)(a, b))   # (a warm cache entry)
  case("jit_keyword", lambda: jax.jit(add)(a, y=b))
  case("jit_lambda_names", lambda: jax.jit(lambda inp, other: inp + other)(a, b))
  case("jit_dict_tree", lambda: jax.jit(lambda t: t["p"] + t["q"][0])({"p": a, "q": (b,)}))
  case("jit_list", lambda: jax.jit(lambda xs: xs[0] + xs[1])([a, b]))
  case("jit_varargs_kwargs", lambda: jax.jit(varargs)(a, a, z=b))
  case("jit_varargs", lambda: jax.jit(varargs)(a, b, z=a))
  case("jit_static_argnums", lambda: jax.jit(static_first, static_argnums=0)(1, a, b))
  case("jit_static_argnames", lambda: jax.jit(static_middle, static_argnames="s")(a, s=1, y=b))
  case("jit_positional_only", lambda: jax.jit(positional_only)(a, b))
  case("jit_nested", lambda: jax.jit(outer)(a, b))
  case("jit_same_device", lambda: jax.jit(add)(b, b))
  # eager operations whose operands also differ in dtype: the message shows
  # them as passed (before promotion converts one); any ValueError subclass
  bi = jax.device_put(jnp.arange(4), d[1])

  def value_error(thunk):
    def run():
      try:
        return thunk()
      except ValueError as e:
        return f"ValueError: {e}"
    return run
  case("eager_add_mixed_dtypes", value_error(lambda: a + bi))
  case("eager_jnp_multiply_mixed_dtypes", value_error(lambda: jnp.multiply(bi, a)))
  case("eager_jnp_maximum_mixed_dtypes", value_error(lambda: jnp.maximum(a, bi)))
  half = n // 2
  mesh1 = jax.make_mesh((half,), ("x",), devices=d[:half])
  mesh2 = jax.make_mesh((half,), ("x",), devices=d[half:])
  s1 = jax.device_put(jnp.ones(4), NamedSharding(mesh1, P("x")))
  s2 = jax.device_put(jnp.ones(4), NamedSharding(mesh2, P("x")))
  case("jit_sharded_meshes", lambda: jax.jit(add)(s1, s2))
  case("jit_sharded_and_single", lambda: jax.jit(add)(s1, jax.device_put(jnp.ones(4), d[-1])))
  case("jit_out_shardings_devices",
       lambda: jax.jit(lambda x, y: x, out_shardings=NamedSharding(mesh2, P("x")))(s1, s1))
  # in_shardings against committed arguments (JAX compares layouts, not ids)
  split = NamedSharding(mesh1, P("x"))
  case("jit_in_shardings_single_device",
       lambda: jax.jit(lambda x: x, in_shardings=split)(jax.device_put(jnp.ones(4), d[-1])))
  case("jit_in_shardings_other_spec",
       lambda: jax.jit(lambda x: x, in_shardings=NamedSharding(mesh1, P()))(s1))
  case("jit_in_shardings_other_devices_same_layout",
       lambda: jax.jit(lambda x: x, in_shardings=split)(s2))
  case("jit_in_shardings_uncommitted", lambda: jax.jit(lambda x: x, in_shardings=split)(
      jnp.ones(4)))
  return out


def placement_cases(jax, n):
  """Where jit of shard_map puts its results: JAX's sharding and each
  device's shard, interpreted or compiled alike."""
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  lax, jnp = jax.lax, jax.numpy
  mesh = _mesh(jax, n)
  emesh = jax.make_mesh((n // 2, 2), ("i", "j"))
  out = {}

  def show(r):
    shards = [(s.device.id, str(s.index)) for s in r.addressable_shards]
    return (f"{jax.typeof(r)} {r.sharding} {sorted(d.id for d in r.devices())} {shards} "
            f"{np.asarray(r).tolist()}")

  def case(name, thunk):
    try:
      rs = thunk()
      out[name] = [show(r) for r in (rs if isinstance(rs, tuple) else (rs,))]
    except Exception as e:  # noqa: BLE001 - the error is the case's outcome
      out[name] = f"{type(e).__name__}: {e}"

  x8 = jnp.arange(8.0, dtype=np.float32)
  x44 = jnp.arange(16.0, dtype=np.float32).reshape(4, 4)
  case("jit_shard_map", lambda: jax.jit(jax.shard_map(
      lambda x: x * 2, mesh=mesh, in_specs=P("i"), out_specs=P("i")))(x8))
  case("jit_shard_map_psum", lambda: jax.jit(jax.shard_map(
      lambda x: lax.psum(x, "i"), mesh=mesh, in_specs=P("i", "j"),
      out_specs=P(None, "j")))(x44))
  case("jit_shard_map_two_outputs", lambda: jax.jit(jax.shard_map(
      lambda x: (x, x.sum()), mesh=mesh, in_specs=P("i"), out_specs=(P("i"), P()),
      check_vma=False))(x8))
  case("jit_shard_map_after_op", lambda: jax.jit(lambda x: jax.shard_map(
      lambda v: v + 1, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x * 3))(x8))
  xe = jax.device_put(x8, NamedSharding(emesh, P("i")))
  case("jit_shard_map_explicit", lambda: jax.jit(jax.shard_map(
      lambda x: x + 1, mesh=emesh, in_specs=P("i"), out_specs=P("i")))(xe))
  return out


def partial_explicit_cases(jax, n):
  """A shard_map manual over some axes of an Explicit mesh: the body's
  types along the other (Explicit) axes, and the results' layout."""
  P, NamedSharding = jax.sharding.PartitionSpec, jax.sharding.NamedSharding
  jnp = jax.numpy
  mesh = jax.make_mesh((n // 2, 2), ("i", "j"))
  x = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                     NamedSharding(mesh, P("i", "j")))
  xr = jax.device_put(np.arange(32.0, dtype=np.float32).reshape(8, 4),
                      NamedSharding(mesh, P("i")))
  out = {}

  def body(v):
    print("in", jax.typeof(v))
    w = v * 2 + 1
    print("elementwise", jax.typeof(w))
    print("sum0", jax.typeof(w.sum(axis=0)), "sum1", jax.typeof(w.sum(axis=1)))
    print("T", jax.typeof(w.T), "sin", jax.typeof(jnp.sin(w)))
    print("all", jax.typeof(jnp.sum(w)), "cast", jax.typeof(w.astype(jnp.int32)))
    return w

  def body_j(v):
    print("in", jax.typeof(v), jax.typeof(v).sharding)
    return v - 1

  def body_collectives(v):
    lax = jax.lax
    gathered = lax.all_gather(v, "i", axis=1, tiled=True)
    stacked = lax.all_gather(v, "i")
    summed = lax.psum(v, "i")
    scattered = lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True)
    swapped = lax.all_to_all(v, "i", 0, 1, tiled=True)
    moved = lax.ppermute(v, "i", [(k, (k + 1) % (n // 2)) for k in range(n // 2)])
    for name, r in (("all_gather", gathered), ("all_gather_untiled", stacked),
                    ("psum", summed), ("psum_scatter", scattered), ("all_to_all", swapped),
                    ("ppermute", moved), ("pmax", lax.pmax(v, "i"))):
      print(name, jax.typeof(r))
    return gathered[:, :4] + summed * 2 + moved * 3

  def body_illegal(v):
    return v + v.T   # a result split over j twice

  def body_sharding(v):
    print("in", jax.typeof(v), jax.typeof(v).sharding)
    return v

  def show(r):
    return f"{jax.typeof(r)} {r.sharding.spec} {np.asarray(r).tolist()}"

  def case(name, thunk):
    out[name] = _outcome(lambda: show(thunk()))

  with jax.set_mesh(mesh):
    f = jax.shard_map(body, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    case("manual_i", lambda: f(x))
    c = jax.shard_map(body_collectives, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    bad = jax.shard_map(body_illegal, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    if n == 4:
      # (JAX 0.10.2 fails these collectives inside XLA eagerly, and under jit
      # when the manual axis has size 1)
      case("manual_i_collectives_jit", lambda: jax.jit(c)(x))
      case("manual_i_illegal_result", lambda: bad(x))   # (square blocks)
    h = jax.shard_map(body_sharding, in_specs=P("i"), out_specs=P("i"), axis_names={"i"})
    case("manual_i_body_sharding", lambda: h(x))
    case("manual_i_body_sharding_jit", lambda: jax.jit(h)(x))
    case("manual_i_jit", lambda: jax.jit(f)(x))
    case("manual_i_replicated_arg", lambda: f(xr))
    case("manual_i_replicated_arg_jit", lambda: jax.jit(f)(xr))
    g = jax.shard_map(body_j, in_specs=P(None, "j"), out_specs=P(None, "j"), axis_names={"j"})
    case("manual_j", lambda: g(x))
    case("manual_j_jit", lambda: jax.jit(g)(x))
  return out
