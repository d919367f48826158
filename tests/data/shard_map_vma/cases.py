"""Programs typed by varying manual axes (shard_map with check_vma), each a
function of the library module (``jax`` or ``openjax``) returning the text
it prints or the error it raises. generate.py runs them under JAX 0.10.2
(``/tmp/jaxvenv/bin/python generate.py`` writes expected.json);
tests/test_shard_map_vma.py runs them under openjax and compares."""
import contextlib
import io

import numpy as np


def _mesh(jax):
  auto = jax.sharding.AxisType.Auto
  return jax.make_mesh((2, 2), ("i", "j"), axis_types=(auto, auto))


def _jaxpr(jax, f, in_specs, out_specs, *args):
  P = jax.sharding.PartitionSpec
  g = jax.shard_map(f, mesh=_mesh(jax), in_specs=in_specs, out_specs=out_specs)
  return str(jax.make_jaxpr(g)(*args))


def _outcome(thunk):
  """What ``thunk`` prints, then its result or the error it raises."""
  buf = io.StringIO()
  try:
    with contextlib.redirect_stdout(buf):
      result = thunk()
  except Exception as e:  # noqa: BLE001 - the error is the case's outcome
    result = f"{type(e).__name__}: {e}"
  return buf.getvalue() + result


def _x8(jax):
  return jax.numpy.arange(8.0, dtype=np.float32)


def cases(jax):
  P = jax.sharding.PartitionSpec
  lax = jax.lax
  x = _x8(jax)
  out = {}

  def case(name, thunk):
    out[name] = _outcome(thunk)

  case("psum_varying", lambda: _jaxpr(jax, lambda v: lax.psum(v, "i") * 2.0, P("i"), P(), x))
  case("psum_replicated", lambda: _jaxpr(jax, lambda v: lax.psum(v, "i"), P(), P(), x))
  case("psum_two_axes", lambda: _jaxpr(jax, lambda v: lax.psum(v, ("i", "j")), P(("i", "j")),
                                       P(), x))
  case("psum_mixed_state", lambda: _jaxpr(jax, lambda v: lax.psum(v, ("i", "j")), P("i"), P(),
                                          x))
  case("pmax_varying", lambda: _jaxpr(jax, lambda v: lax.pmax(v, "i"), P("i"), P(), x))
  case("binary_pvary", lambda: _jaxpr(jax, lambda a, b: a * b, (P("i"), P()), P("i"), x,
                                      x[:4]))
  case("literal_pvary", lambda: _jaxpr(jax, lambda a: a * 2.0, P("i"), P("i"), x))
  case("two_axis_union", lambda: _jaxpr(jax, lambda a, b: (a + b, jax.numpy.sin(b)),
                                        (P("i"), P("j")), (P(("i", "j")), P("j")), x, x))
  case("pcast_order", lambda: _jaxpr(jax, lambda a: lax.pcast(a, ("j", "i"), to="varying"),
                                     P(), P(("i", "j")), x))
  case("pcast_varying_error", lambda: _jaxpr(jax, lambda a: lax.pcast(a, "i", to="varying"),
                                             P("i"), P("i"), x))
  case("pcast_bad_to", lambda: _jaxpr(jax, lambda a: lax.pcast(a, "i", to="somewhere"),
                                      P(), P(), x))
  case("collectives_types", lambda: _jaxpr(
      jax, lambda a: (lax.axis_index("i"), lax.all_gather(a, "i"),
                      lax.ppermute(a, "i", [(0, 1), (1, 0)])),
      P("i"), (P("i"), P("i"), P("i")), x))
  case("psum_scatter_replicated", lambda: _jaxpr(
      jax, lambda a: lax.psum_scatter(a, "i", tiled=True), P(), P("i"), x))
  case("out_spec_pvary", lambda: _jaxpr(jax, lambda a: a, P(), P("i"), x))
  case("out_spec_error_one_axis", lambda: _jaxpr(jax, lambda a: a, P("i"), P("i", "j"), x))
  case("out_spec_error_two_axes", lambda: _jaxpr(jax, lambda a: a, P("i"), P(), x))
  case("out_spec_error_eager", lambda: str(jax.shard_map(
      lambda a: a, mesh=_mesh(jax), in_specs=P("i"), out_specs=P())(x)))
  case("jit_in_body", lambda: _jaxpr(jax, lambda a: jax.jit(lambda u, w: u * w)(a, 2.0),
                                     P("i"), P("i"), x))
  case("typeof_eager", lambda: str(jax.shard_map(
      lambda a, b: (print(jax.typeof(a), jax.typeof(b), jax.typeof(lax.psum(a, "i")),
                          jax.typeof(lax.pcast(b, "j", to="varying"))), a)[1],
      mesh=_mesh(jax), in_specs=(P(("i", "j")), P()), out_specs=P(("i", "j")))(x, x)))
  def body_type():
    closed = jax.make_jaxpr(jax.shard_map(
        lambda a: a, mesh=_mesh(jax), in_specs=P(("i", "j")), out_specs=P(("i", "j"))))(x)
    body = closed.eqns[0].params["jaxpr"]
    body = getattr(body, "jaxpr", body)   # openjax keeps a ClosedJaxpr
    return str(sorted(body.invars[0].aval.manual_axis_type.varying))
  case("manual_axis_type", body_type)
  i32 = lambda v: jax.numpy.array(v, np.int32)
  case("ragged_all_to_all_jaxpr", lambda: _jaxpr(
      jax, lambda *a: lax.ragged_all_to_all(*a, axis_name="i"), P("i"), P("i"), x[:6],
      jax.numpy.zeros(8, np.float32), i32([0, 1, 0, 1]), i32([1, 2, 1, 1]), i32([0, 0, 1, 2]),
      i32([1, 1, 2, 1])))
  x2 = jax.numpy.arange(32.0, dtype=np.float32).reshape(8, 4)
  partial_psum = lambda: jax.shard_map(
      lambda a: lax.psum(a, "i") * 2, mesh=_mesh(jax), in_specs=P("i"), out_specs=P(),
      axis_names={"i"})
  case("partial_manual_jaxpr", lambda: str(jax.make_jaxpr(partial_psum())(x2)))
  case("partial_manual_eager", lambda: f"{partial_psum()(x2).sharding}\n{partial_psum()(x2)}")
  case("partial_manual_jit", lambda: f"{jax.jit(partial_psum())(x2).sharding}")
  case("partial_manual_body_type", lambda: (jax.shard_map(
      lambda a: (print(jax.typeof(a)), a)[1], mesh=_mesh(jax), in_specs=P("i"),
      out_specs=P("i"), axis_names={"i"})(x2), "")[1])
  case("partial_manual_spec_error", lambda: str(jax.shard_map(
      lambda a: a, mesh=_mesh(jax), in_specs=P("j"), out_specs=P(), axis_names={"i"})(x2)))
  case("partial_manual_unbound_axis", lambda: str(jax.shard_map(
      lambda a: lax.psum(a, "j"), mesh=_mesh(jax), in_specs=P("i"), out_specs=P(),
      axis_names={"i"})(x2)))
  case("axis_names_not_subset", lambda: str(jax.shard_map(
      lambda a: a, mesh=_mesh(jax), in_specs=P("i"), out_specs=P("i"), axis_names={"k"})(x2)))
  case("smap_in_axes_error", lambda: str(jax.smap(lambda a: a, in_axes=[0], out_axes=0,
                                                  axis_name="i")))
  case("smap_axis_name_error", lambda: str(jax.smap(lambda a: a, in_axes=0, out_axes=0,
                                                    axis_name=("i",))))

  with jax.auto_pcast(False):
    case("no_auto_pcast_binary", lambda: _jaxpr(jax, lambda a, b: a * b, (P("i"), P()), P("i"),
                                                x, x[:4]))
    case("no_auto_pcast_collective", lambda: _jaxpr(jax, lambda a: lax.all_gather(a, "i"), P(),
                                                    P("i"), x))
    case("no_auto_pcast_psum", lambda: _jaxpr(jax, lambda a: lax.psum(a, "i"), P(), P(), x))
    case("no_auto_pcast_explicit", lambda: _jaxpr(
        jax, lambda a, b: a * lax.pcast(b, "i", to="varying"), (P("i"), P()), P("i"), x, x[:4]))
  return out


def values(jax):
  """Results (as lists) of running typed bodies: grads through pvary and
  psum, and the scan whose carry needs a pcast."""
  P = jax.sharding.PartitionSpec
  lax = jax.lax
  mesh = _mesh(jax)
  x = _x8(jax)
  out = {}

  def body(a, b):
    return a[0] * b, a + 1.0
  f = jax.shard_map(body, mesh=mesh, in_specs=(P(), P(("i", "j"))), out_specs=(P(("i", "j")), P()))
  loss = lambda a, b: f(a, b)[0].sum() + f(a, b)[1].sum()
  out["grad_pvary"] = [np.asarray(g).tolist() for g in jax.grad(loss, (0, 1))(x[1:3], x)]
  out["grad_pvary_jit"] = [np.asarray(g).tolist()
                           for g in jax.jit(jax.grad(loss, (0, 1)))(x[1:3], x)]
  g = jax.shard_map(lambda a: lax.psum(a * a, "i"), mesh=mesh, in_specs=P("i"), out_specs=P())
  out["grad_psum"] = np.asarray(jax.grad(lambda a: g(a).sum())(x)).tolist()
  h = jax.shard_map(lambda a: lax.psum(a, ("i", "j")) * a, mesh=mesh, in_specs=P(),
                    out_specs=P())
  out["grad_psum_replicated"] = np.asarray(jax.grad(lambda a: h(a).sum())(x[:3])).tolist()
  k = jax.shard_map(lambda a: lax.psum(a[0], "i")[None], mesh=mesh, in_specs=P("i"),
                    out_specs=P("i"))
  out["grad_out_pvary"] = np.asarray(jax.grad(
      lambda a: (k(a) * jax.numpy.arange(2.0)[:, None]).sum())(x.reshape(2, 4))).tolist()

  def swap(a, b):
    b = lax.pcast(b, "i", to="varying")
    (a, b), _ = lax.scan(lambda c, _: ((c[1], c[0]), ()), (a, b), (), length=3)
    return a, b
  s = jax.shard_map(swap, mesh=mesh, in_specs=(P("i"), P()), out_specs=(P("i"), P("i")))
  out["scan_pcast"] = [np.asarray(v).tolist() for v in s(x, x[:4])]

  def control(a, b):
    c = lax.cond(b[0] > 1, lambda: a * 2, lambda: a + b)
    d = lax.fori_loop(0, 3, lambda i, v: v + b, a)
    e = jax.nn.relu(a - 2.0) + jax.checkpoint(lambda t: jax.numpy.sin(t) * b)(a)
    return c + d + e, lax.psum(jax.numpy.sum(b * b), "i")
  t = jax.shard_map(control, mesh=mesh, in_specs=(P("i"), P()), out_specs=(P("i"), P()))
  tloss = lambda a, b: t(a, b)[0].sum() + t(a, b)[1]
  xs, ys = jax.numpy.arange(8.0), jax.numpy.arange(4.0)
  out["control_flow"] = [np.asarray(v).tolist() for v in jax.jit(t)(xs, ys)]
  out["control_flow_grad"] = [np.asarray(v).tolist() for v in jax.grad(tloss, (0, 1))(xs, ys)]

  x2 = jax.numpy.arange(32.0, dtype=np.float32).reshape(8, 4)
  g = jax.shard_map(lambda a: a * lax.axis_index("i"), mesh=mesh, in_specs=P("i"),
                    out_specs=P("i"), axis_names={"i"})
  out["partial_manual"] = np.asarray(g(x2)).tolist()
  out["partial_manual_jit"] = np.asarray(jax.jit(g)(x2)).tolist()
  out["partial_manual_grad"] = np.asarray(
      jax.grad(lambda a: (g(a) * a).sum())(x2)).tolist()
  with jax.set_mesh(mesh):
    sm = jax.smap(lambda a, b: a * b + lax.axis_index("j"), in_axes=(1, None), out_axes=1,
                  axis_name="j")
    out["smap"] = np.asarray(sm(x2, 2.0)).tolist()
    out["smap_jit"] = np.asarray(jax.jit(sm)(x2, 2.0)).tolist()
  return out
