"""lax.scan / lax.map / lax.fori_loop and the ``scan`` primitive: values
against Python loops, JAX's errors and printed jaxprs (goldens from JAX
0.10.2), every transformation (grad against the unrolled loop, check_grads
to second order, jit, vmap), the compiled (IREE) loop, and the hoisting of
loop-invariant residuals out of the known scan."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import ClosedJaxpr, check_jaxpr, jaxprs_in_params
from openjax.test_util import check_grads

F32 = np.float32
RNG = np.random.default_rng(0)
W = np.arange(4.0, dtype=F32).reshape(2, 2) / 4


def _close(a, b, tol=1e-5):
  for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b), strict=True):
    np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=tol, atol=tol)


def _stack_tree(trees):
  return jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *trees)


def _all_avals(jaxpr):
  """Every variable's aval in a jaxpr and its sub-jaxprs."""
  jaxpr = jaxpr.jaxpr if isinstance(jaxpr, ClosedJaxpr) else jaxpr
  out = [v.aval for v in jaxpr.constvars + jaxpr.invars]
  for eqn in jaxpr.eqns:
    out += [v.aval for v in eqn.outvars]
    for sub in jaxprs_in_params(eqn.params):
      out += _all_avals(sub)
  return out


def _primitives(jaxpr):
  names = []
  for eqn in jaxpr.eqns:
    names.append(eqn.primitive.name)
    for sub in jaxprs_in_params(eqn.params):
      names += _primitives(sub)
  return names


# ------------------------------------------------------ functions under test
def cumsum(xs):
  return lax.scan(lambda c, x: (c + x, c), 0., xs)


def rnn(h, xs):
  return lax.scan(lambda h, x: (jnp.tanh(jnp.asarray(W) @ h + x), h.sum()), h, xs)


def rnn_loss(h, xs):
  c, ys = rnn(h, xs)
  return c.sum() + ys.sum()


def hoist_loss(w, h, xs):
  def body(h, x):
    h = jnp.tanh(jnp.sin(w) @ h + x)
    return h, h * 2
  c, ys = lax.scan(body, h, xs)
  return c.sum() + (ys ** 2).sum()


def hoist_loss_unrolled(w, h, xs):
  ys = []
  for x in xs:
    h = jnp.tanh(jnp.sin(w) @ h + x)
    ys.append(h * 2)
  return h.sum() + (jnp.stack(ys) ** 2).sum()


# The cases of GOLDEN_JAXPRS, printed by JAX 0.10.2 from the same code.
CASES = {
    "cumsum": (cumsum, (np.arange(3.0, dtype=F32),)),
    "rnn_consts": (rnn, (np.ones(2, F32), np.ones((3, 2), F32))),
    "grad_rnn": (jax.grad(rnn_loss), (np.ones(2, F32), np.ones((3, 2), F32))),
    "grad_hoisted": (jax.grad(hoist_loss, argnums=(0, 1, 2)),
                     (W, np.ones(2, F32), np.ones((3, 2), F32))),
    "reverse_unroll": (lambda xs: lax.scan(lambda c, x: (c * x, (x, c)), 1., xs, reverse=True,
                                           unroll=2), (np.arange(1., 5., dtype=F32),)),
    "xs_none": (lambda c: lax.scan(lambda c, _: (c * 2, None), c, None, length=4), (F32(1),)),
    "carry_forwarded": (lambda xs: lax.scan(lambda c, x: ((c[0] + x, c[1]), (x, c[0])),
                                            (0., 1), xs), (np.arange(3.0, dtype=F32),)),
    "weak_int_carry": (lambda xs: lax.scan(lambda c, x: (c + 1., None), 0, xs),
                       (np.ones(3, F32),)),
    "fori_static": (lambda x: lax.fori_loop(0, 3, lambda i, c: c * 2., x), (F32(1),)),
    "fori_traced": (lambda x, n: lax.fori_loop(0, n, lambda i, c: c * 2., x),
                    (F32(1), np.int32(3))),
    "map": (lambda x: lax.map(jnp.sin, x), (np.ones(5, F32),)),
    "map_batched": (lambda x: lax.map(jnp.sin, x, batch_size=2), (np.ones(5, F32),)),
    "vmap_xs": (jax.vmap(rnn, in_axes=(None, 0)), (np.ones(2, F32), np.ones((4, 3, 2), F32))),
    "jvp": (lambda x, t: jax.jvp(cumsum, (x,), (t,)), (np.arange(3.0, dtype=F32),
                                                        np.ones(3, F32))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_printed_jaxpr_matches_jax(name):
  fn, args = CASES[name]
  closed = jax.make_jaxpr(fn)(*args)
  check_jaxpr(closed)
  assert str(closed) == GOLDEN_JAXPRS[name]


# -------------------------------------------------------- values vs loops
def test_cumulative_sum_matches_loop():
  xs = RNG.standard_normal(6).astype(F32)
  c, ys = cumsum(xs)
  np.testing.assert_allclose(c, xs.sum(), rtol=1e-6)
  np.testing.assert_allclose(ys, np.concatenate([[0.], np.cumsum(xs)[:-1]]), rtol=1e-6)
  assert c.dtype == np.float32 and ys.shape == (6,)


def _cell(params, carry, x):
  h, count = carry["h"], carry["count"]
  h = jnp.tanh(params["w"] @ h + params["u"] * x)
  return {"h": h, "count": count + 1}, {"out": h.sum(), "h2": (h * 2, None)}


def test_rnn_with_pytree_carry_and_ys_matches_loop():
  params = {"w": RNG.standard_normal((3, 3)).astype(F32), "u": RNG.standard_normal(3).astype(F32)}
  xs = RNG.standard_normal((5, 3)).astype(F32)
  init = {"h": np.zeros(3, F32), "count": 0}
  carry, ys = lax.scan(lambda c, x: _cell(params, c, x), init, xs)
  ref_c, ref_ys = init, []
  for x in xs:
    ref_c, y = _cell(params, ref_c, x)
    ref_ys.append(y)
  _close(carry, ref_c)
  assert int(carry["count"]) == 5 and carry["count"].dtype == np.int32
  assert ys["h2"][1] is None
  _close(ys, _stack_tree(ref_ys))


@pytest.mark.parametrize("unroll", [1, 2, 3, 0, True, False])
def test_reverse_and_unroll_match_loop(unroll):
  xs = RNG.standard_normal((7, 2)).astype(F32)
  c, ys = lax.scan(lambda c, x: (jnp.sin(c) + x, c * x), np.ones(2, F32), xs, reverse=True,
                   unroll=unroll)
  rc, rys = np.ones(2, F32), [None] * 7
  for i in reversed(range(7)):
    rys[i] = rc * xs[i]
    rc = np.sin(rc) + xs[i]
  _close(c, rc)
  _close(ys, np.stack(rys))


def test_xs_none_with_length_and_ys_none():
  c, ys = lax.scan(lambda c, _: (c * 2 + 1, None), np.float32(1), None, length=4)
  assert float(c) == 31.0 and ys is None
  c, ys = lax.scan(lambda c, _: (c + 1, c), 0, None, length=3)
  np.testing.assert_array_equal(ys, [0, 1, 2])


def test_zero_length_scan_returns_init_and_empty_ys():
  c, ys = lax.scan(lambda c, x: (c + x, x * 2), jnp.ones(2), jnp.zeros((0, 2)))
  np.testing.assert_array_equal(c, [1., 1.])
  assert ys.shape == (0, 2) and ys.dtype == np.float32
  c, ys = lax.scan(lambda c, x: (c, None), 0, None, length=0)
  assert int(c) == 0 and ys is None


def test_forwarded_carry_and_ys_are_arrays():
  c, ys = lax.scan(lambda c, x: (c, x), 0., np.arange(3.0, dtype=F32))
  assert float(c) == 0.0
  assert isinstance(ys, jax.Array) and ys.dtype == np.float32
  np.testing.assert_array_equal(ys, [0., 1., 2.])


def test_weak_type_joining_of_the_carry():
  xs = jnp.arange(3.)
  c, _ = lax.scan(lambda c, x: (c + x, None), 0., xs)          # weak f32 + f32
  assert c.dtype == np.float32 and not c.weak_type
  c, _ = lax.scan(lambda c, x: (c + 1., None), 0., None, length=3)
  assert c.dtype == np.float32 and c.weak_type
  c, _ = lax.scan(lambda c, x: (c + 1., None), 0, None, length=3)   # weak int -> float
  assert c.dtype == np.float32 and not c.weak_type and float(c) == 3.0
  c, ys = lax.scan(lambda c, x: (c + x, x), 0, jnp.arange(3))
  assert c.dtype == np.int32 and not c.weak_type and int(c) == 3


def test_disable_jit_runs_the_python_loop():
  xs = np.arange(4.0, dtype=F32)
  with jax.disable_jit():
    c, ys = lax.scan(lambda c, x: (c + x, c), 0., xs, reverse=True)
    with pytest.raises(ValueError, match="zero-length scan is not supported in disable_jit"):
      lax.scan(lambda c, x: (c, x), 0., xs[:0])
  rc, rys = lax.scan(lambda c, x: (c + x, c), 0., xs, reverse=True)
  _close((c, ys), (rc, rys))


# ------------------------------------------------------------------ errors
def _raises(exc, text, fn):
  with pytest.raises(exc, match=re.escape(text)):
    fn()


def test_errors_match_jax():
  ones3 = jnp.ones(3)
  _raises(TypeError, "lax.scan: f argument should be a callable.",
          lambda: lax.scan(3, 1., ones3))
  _raises(ValueError, "scan got values with different leading axis sizes: 3, 4.",
          lambda: lax.scan(lambda c, x: (c, None), 1., (ones3, jnp.ones(4))))
  _raises(ValueError, "scan got no values to scan over and `length` not provided.",
          lambda: lax.scan(lambda c, x: (c, None), 1., None))
  _raises(ValueError, "scan got `length` argument of 4 which disagrees with leading axis "
          "sizes [3].", lambda: lax.scan(lambda c, x: (c, None), 1., ones3, length=4))
  _raises(ValueError, "scan got value with no leading axis to scan over: 3.0.",
          lambda: lax.scan(lambda c, x: (c, None), 1., 3.))
  _raises(TypeError, "scan body output must be a pair, got ~float32[].",
          lambda: lax.scan(lambda c, x: c, 1., ones3))
  _raises(ValueError, "`unroll` must be a `bool` or a non-negative `int`.",
          lambda: lax.scan(lambda c, x: (c, None), 1., ones3, unroll=-1))
  _raises(TypeError,
          "scan body function carry input and carry output must have the same pytree "
          "structure, but they differ:\n\nThe input carry c is a tuple of length 2 but the "
          "corresponding component of the carry output is a tuple of length 1, so the "
          "lengths do not match.\n\nRevise the function so that the carry output has the "
          "same pytree structure as the carry input.",
          lambda: lax.scan(lambda c, x: ((c[0],), None), (1., 2.), None, length=3))
  _raises(TypeError,
          "scan body function carry input and carry output must have equal types, but they "
          "differ:\n\n  * the input carry component c['a'] has type float32[] but the "
          "corresponding output carry component has type int32[], so the dtypes do not "
          "match;\n  * the input carry component c['b'] has type float32[2] but the "
          "corresponding output carry component has type float32[1,2], so the shapes do not "
          "match.\n\nRevise the function so that all output types match the corresponding "
          "input types.",
          lambda: lax.scan(lambda c, x: ({"a": c["a"].astype(jnp.int32), "b": c["b"][None]},
                                         None), {"a": jnp.float32(1.), "b": jnp.ones(2)},
                           None, length=3))
  with pytest.raises(jax.errors.ConcretizationTypeError,
                     match="The `length` argument to `scan` expects a concrete `int` value"):
    jax.jit(lambda n: lax.scan(lambda c, x: (c, None), 1., None, length=n))(3)


def test_fori_loop_errors_match_jax():
  _raises(ValueError, "Can only use `unroll` in `fori_loop` if the loop bounds are "
          "statically known.",
          lambda: jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c, 1., unroll=2))(3))
  _raises(TypeError, "lower and upper arguments to fori_loop must have equal types, got "
          "int32 and float32", lambda: lax.fori_loop(0, 3., lambda i, c: c, 1.))
  _raises(TypeError, "lower and upper arguments to fori_loop must have equal types, got "
          "int32 and int16", lambda: lax.fori_loop(np.int32(0), np.int16(3), lambda i, c: c, 1.))
  _raises(TypeError, "lax.fori_loop: body_fun argument should be callable.",
          lambda: lax.fori_loop(0, 3, None, 1.))


# ------------------------------------------------------------- autodiff
def _hoist_args():
  rng = np.random.default_rng(1)
  return (rng.standard_normal((3, 3)).astype(F32), rng.standard_normal(3).astype(F32),
          rng.standard_normal((5, 3)).astype(F32))


def test_grad_matches_unrolled_loop_and_composes_with_jit():
  args = _hoist_args()
  want = jax.grad(hoist_loss_unrolled, argnums=(0, 1, 2))(*args)
  _close(jax.grad(hoist_loss, argnums=(0, 1, 2))(*args), want)
  _close(jax.grad(jax.jit(hoist_loss), argnums=(0, 1, 2))(*args), want)
  _close(jax.jit(jax.grad(hoist_loss, argnums=(0, 1, 2)))(*args), want)
  for argnums in (0, 1, 2):   # symbolic-zero tangents of the other operands
    _close(jax.grad(hoist_loss, argnums)(*args), want[argnums])
  check_jaxpr(jax.make_jaxpr(jax.grad(jax.jit(hoist_loss), argnums=(0, 1, 2)))(*args))


def test_check_grads_second_order_fwd_and_rev():
  args = [a.astype(np.float64) for a in _hoist_args()]
  with jax.enable_x64():
    check_grads(hoist_loss, args, order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
    check_grads(lambda xs: lax.scan(lambda c, x: (jnp.sin(c) * x, c * x), 0.5, xs,
                                    reverse=True, unroll=2), (args[2][:, 0],),
                order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)


def test_nested_scan_gradients():
  def nested(w, xs):
    def outer(c, x):
      d, ys = lax.scan(lambda d, y: (jnp.sin(w * d + y), d * y), c, x)
      return d, ys.sum()
    return lax.scan(outer, jnp.zeros(3), xs)
  args = (np.full(3, 0.5), RNG.standard_normal((4, 2, 3)))
  with jax.enable_x64():
    check_grads(nested, args, order=2, modes=("fwd", "rev"), atol=1e-4, rtol=1e-4)
    check_grads(jax.jit(nested), args, order=1, modes=("rev",), atol=1e-4, rtol=1e-4)


def test_grad_through_checkpoint():
  args = _hoist_args()
  want = jax.grad(hoist_loss)(*args)
  _close(jax.grad(jax.checkpoint(hoist_loss))(*args), want)

  def remat_body(w, h, xs):
    body = jax.checkpoint(lambda h, x: (jnp.tanh(jnp.sin(w) @ h + x),) * 2)
    c, ys = lax.scan(body, h, xs)
    return c.sum() + ((ys * 2) ** 2).sum()
  _close(jax.grad(remat_body)(*args), want)


def _invariant_loss(h):
  wc = jnp.asarray(W)
  return lax.scan(lambda h, x: (jnp.tanh(jnp.sin(wc) @ h + x), None), h, jnp.ones((50, 2)))[0]


def test_loop_invariant_residuals_are_hoisted_unstacked():
  # sin(W) depends only on a loop constant: its residual is one f32[2,2],
  # never a stack of 50 (which would make grad O(length * size)).
  _, f_jvp = jax.linearize(_invariant_loss, jnp.ones(2))
  lin = jax.make_jaxpr(f_jvp)(jnp.ones(2))
  const_shapes = [v.aval.shape for v in lin.jaxpr.constvars]
  assert (2, 2) in const_shapes and (50, 2, 2) not in const_shapes
  _, vjp_fn = jax.vjp(_invariant_loss, jnp.ones(2))
  shapes = [leaf.shape for leaf in jax.tree_util.tree_leaves(vjp_fn)]
  assert (2, 2) in shapes and all(len(s) <= 2 for s in shapes)
  # The same inside jit (the jaxpr-level split of a scan equation).
  for fn in (jax.grad(lambda h: jax.jit(_invariant_loss)(h).sum()),
             jax.grad(lambda h: _invariant_loss(h).sum())):
    avals = _all_avals(jax.make_jaxpr(fn)(jnp.ones(2)))
    assert not any(a.shape == (50, 2, 2) for a in avals)


# ---------------------------------------------------------------- vmap
@pytest.mark.parametrize("in_axes", [(0, 0, 0), (None, None, 0), (None, None, 1),
                                     (None, 0, None), (2, None, None), (0, None, 2)])
def test_vmap_matches_loop(in_axes):
  def f(w, h, xs):
    return lax.scan(lambda h, x: (jnp.tanh(w @ h + x), h.sum()), h, xs, reverse=True)
  ws, hs, xss = (RNG.standard_normal(s).astype(F32) for s in ((4, 3, 3), (4, 3), (4, 5, 3)))
  args = [a if ax is None else np.moveaxis(a, 0, ax) for a, ax in zip((ws, hs, xss), in_axes)]
  args = [a[0] if ax is None else a for a, ax in zip(args, in_axes)]
  got = jax.vmap(f, in_axes=in_axes)(*args)
  want = _stack_tree([f(*[a if ax is None else b[i] for a, b, ax in
                          zip(args, (ws, hs, xss), in_axes)]) for i in range(4)])
  _close(got, want)


def test_vmap_of_grad_and_named_axis_collective():
  ws, hs, xss = (RNG.standard_normal(s).astype(F32) for s in ((3, 3, 3), (3, 3), (3, 4, 3)))
  g = jax.vmap(jax.grad(hoist_loss))(ws, hs, xss)
  _close(g, np.stack([jax.grad(hoist_loss)(ws[i], hs[i], xss[i]) for i in range(3)]))
  f = lambda x: lax.scan(lambda c, xi: (c + lax.psum(xi, "i"), c), 0., x)
  c, ys = jax.vmap(f, axis_name="i")(jnp.arange(6.).reshape(2, 3))
  np.testing.assert_array_equal(c, [15., 15.])
  np.testing.assert_array_equal(ys, [[0., 3., 8.], [0., 3., 8.]])


# ---------------------------------------------------------- map, fori_loop
@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 6, 10, 0])
def test_map_matches_loop(batch_size):
  xs = (RNG.standard_normal((6, 2)).astype(F32), np.arange(6, dtype=np.int32))
  f = lambda x: {"s": jnp.sin(x[0]) * x[1], "n": x[1] + 1}
  got = lax.map(f, xs, batch_size=batch_size)
  _close(got, _stack_tree([f((xs[0][i], xs[1][i])) for i in range(6)]))
  assert got["n"].dtype == np.int32


def test_fori_loop_static_bounds_is_a_differentiable_scan():
  body = lambda i, c: jnp.sin(c) * (i + 1)
  f = lambda x: lax.fori_loop(2, 5, body, x)
  assert "scan" in _primitives(jax.make_jaxpr(f)(1.).jaxpr)
  want = 1.0
  for i in range(2, 5):
    want = np.sin(want) * (i + 1)
  np.testing.assert_allclose(f(1.), want, rtol=1e-6)
  with jax.enable_x64():
    check_grads(f, (0.3,), order=2, modes=("fwd", "rev"))
  assert float(lax.fori_loop(5, 2, body, 1.)) == 1.0
  assert float(lax.fori_loop(np.int32(0), 3, lambda i, c: c + i, 0.)) == 3.0


def test_fori_loop_traced_bounds_is_a_while_loop():
  f = jax.jit(lambda x, n: lax.fori_loop(1, n, lambda i, c: c * i, x))
  assert "while" in _primitives(jax.make_jaxpr(f)(1., 5).jaxpr)
  assert float(f(1., 5)) == 24.0
  assert float(jax.jit(lambda n: lax.fori_loop(0, n, lambda i, c: c + i, 0))(np.int16(4))) == 6
  assert float(jax.jvp(lambda x: f(x, 4), (2.,), (1.,))[1]) == 6.0


# ------------------------------------------------------- compiled (IREE)
def test_compiled_matches_interpreted():
  w, h, xs = _hoist_args()

  def run_all(w, h, xs):
    outs = []
    for reverse in (False, True):
      for unroll in (1, 2, 5, 0):
        outs.append(lax.scan(lambda c, x: (jnp.tanh(jnp.sin(w) @ c + x), (c.sum(), x * c)),
                             h, xs, reverse=reverse, unroll=unroll))
    outs.append(jax.grad(hoist_loss, argnums=(0, 1, 2))(w, h, xs))
    outs.append(jax.vmap(lambda x: lax.scan(lambda c, y: (c * y, c + y), 1., x))(xs.T))
    outs.append(lax.scan(lambda c, x: (c + x, x * 2), h, xs[:0]))
    outs.append(lax.scan(lambda c, _: (c * 2, c), jnp.int32(1), None, length=6))
    outs.append(lax.map(jnp.cos, xs, batch_size=2))
    outs.append(lax.fori_loop(0, 4, lambda i, c: c * w[0] + i, h))
    return outs

  eager = run_all(w, h, xs)
  compiled = jax.jit(run_all).lower(w, h, xs).compile()(w, h, xs)
  for e, c in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(compiled),
                  strict=True):
    assert np.asarray(e).dtype == np.asarray(c).dtype
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=2e-5, atol=2e-5)
  text = jax.jit(run_all).lower(w, h, xs).as_text()
  assert "stablehlo.while" in text and "dynamic_update_slice" in text


# Printed by JAX 0.10.2 for CASES (its numpy-scalar params, `np.int64(1)`, written as ints).
GOLDEN_JAXPRS = {
    "cumsum": """\
{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          g:f32[] = add f e
        in (g, d) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b, c) }""",
    "rnn_consts": """\
{ lambda a:f32[2,2]; b:f32[2] c:f32[3,2]. let
    d:f32[2] e:f32[3] = scan[
      jaxpr={ lambda ; f:f32[2,2] g:f32[2] h:f32[2]. let
          i:f32[2] = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] f g
          j:f32[2] = add i h
          k:f32[2] = tanh j
          l:f32[] = reduce_sum[axes=(0,) out_sharding=None] g
        in (k, l) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] a b c
  in (d, e) }""",
    "grad_rnn": """\
{ lambda a:f32[2,2]; b:f32[2] c:f32[3,2]. let
    d:f32[2] e:f32[3] f:f32[3,2] g:f32[3,2] = scan[
      jaxpr={ lambda ; h:f32[2,2] i:f32[2] j:f32[2]. let
          k:f32[2] = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] h i
          l:f32[2] = add k j
          m:f32[2] = tanh l
          n:f32[2] = sub 1.0:f32[] m
          o:f32[] = reduce_sum[axes=(0,) out_sharding=None] i
        in (m, o, m, n) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] a b c
    p:f32[] = reduce_sum[axes=(0,) out_sharding=None] d
    q:f32[] = reduce_sum[axes=(0,) out_sharding=None] e
    _:f32[] = add p q
    r:f32[3] = broadcast_in_dim 1.0:f32[]
    s:f32[2] = broadcast_in_dim 1.0:f32[]
    t:f32[2] = scan[
      jaxpr={ lambda ; u:f32[2,2] v:f32[2] w:f32[] x:f32[2] y:f32[2]. let
          z:f32[2] = broadcast_in_dim w
          ba:f32[2] = mul v y
          bb:f32[2] = mul ba x
          bc:f32[2] = add_any ba bb
          bd:f32[2] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] bc u
          be:f32[2] = add_any z bd
        in (be,) }
      length=3
      num_carry=1
      num_consts=1
      reverse=True
      unroll=1
    ] a s r f g
  in (t,) }""",
    "grad_hoisted": """\
{ lambda ; a:f32[2,2] b:f32[2] c:f32[3,2]. let
    d:f32[2,2] = sin a
    e:f32[2,2] = cos a
    f:f32[2] g:f32[3,2] h:f32[3,2] i:f32[3,2] j:f32[3,2] = scan[
      jaxpr={ lambda ; k:f32[2,2] l:f32[2] m:f32[2]. let
          n:f32[2] = dot_general[
            dimension_numbers=(([1], [0]), ([], []))
            preferred_element_type=float32
          ] k l
          o:f32[2] = add n m
          p:f32[2] = tanh o
          q:f32[2] = sub 1.0:f32[] p
          r:f32[2] = mul p 2.0:f32[]
        in (p, r, l, p, q) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] d b c
    s:f32[] = reduce_sum[axes=(0,) out_sharding=None] f
    t:f32[3,2] = integer_pow[y=2] g
    u:f32[3,2] = mul 2.0:f32[] g
    v:f32[] = reduce_sum[axes=(0, 1) out_sharding=None] t
    _:f32[] = add s v
    w:f32[3,2] = broadcast_in_dim 1.0:f32[]
    x:f32[3,2] = mul w u
    y:f32[2] = broadcast_in_dim 1.0:f32[]
    z:f32[2,2] = broadcast_in_dim 0.0:f32[]
    ba:f32[2,2] bb:f32[2] bc:f32[3,2] = scan[
      jaxpr={ lambda ; bd:f32[2,2] be:f32[2,2] bf:f32[2,2] bg:f32[2] bh:f32[2] bi:f32[2]
          bj:f32[2] bk:f32[2]. let
          bl:f32[2] = mul bh 2.0:f32[]
          bm:f32[2] = add_any bg bl
          bn:f32[2] = mul bm bk
          bo:f32[2] = mul bn bj
          bp:f32[2] = add_any bn bo
          bq:f32[2] = dot_general[
            dimension_numbers=(([0], [0]), ([], []))
            preferred_element_type=float32
          ] bp be
          br:f32[2,2] = dot_general[
            dimension_numbers=(([], []), ([], []))
            preferred_element_type=float32
          ] bp bi
          bs:f32[2,2] = mul br bd
          bt:f32[2,2] = add_any bf bs
        in (bt, bq, bp) }
      length=3
      num_carry=2
      num_consts=2
      reverse=True
      unroll=1
    ] e d z y x h i j
  in (ba, bb, bc) }""",
    "reverse_unroll": """\
{ lambda ; a:f32[4]. let
    b:f32[] c:f32[4] = scan[
      jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = convert_element_type[new_dtype=float32 weak_type=False] d
          g:f32[] = mul f e
        in (g, d) }
      length=4
      num_carry=1
      num_consts=0
      reverse=True
      unroll=2
    ] 1.0:f32[] a
  in (b, a, c) }""",
    "xs_none": """\
{ lambda ; a:f32[]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[]. let d:f32[] = mul c 2.0:f32[] in (d,) }
      length=4
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }""",
    "carry_forwarded": """\
{ lambda ; a:f32[3]. let
    b:f32[] c:f32[3] = scan[
      jaxpr={ lambda ; d:i32[] e:f32[] f:f32[]. let
          g:f32[] = convert_element_type[new_dtype=float32 weak_type=False] e
          h:f32[] = add g f
        in (h, e) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] 1:i32[] 0.0:f32[] a
  in (b, 1:i32[], a, c) }""",
    "weak_int_carry": """\
{ lambda ; a:f32[3]. let
    b:f32[] = scan[
      jaxpr={ lambda ; c:f32[] d:f32[]. let e:f32[] = add c 1.0:f32[] in (e,) }
      length=3
      num_carry=1
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] a
  in (b,) }""",
    "fori_static": """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] = scan[
      jaxpr={ lambda ; c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d 2.0:f32[]
        in (e, f) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0:i32[] a
  in (b,) }""",
    "fori_traced": """\
{ lambda ; a:f32[] b:i32[]. let
    _:i32[] _:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[] f:f32[]. let
          g:i32[] = add d 1:i32[]
          h:f32[] = mul f 2.0:f32[]
        in (g, e, h) }
      body_nconsts=0
      cond_jaxpr={ lambda ; i:i32[] j:i32[] k:f32[]. let
          l:bool[] = lt i j
        in (l,) }
      cond_nconsts=0
    ] 0:i32[] b a
  in (c,) }""",
    "map": """\
{ lambda ; a:f32[5]. let
    b:f32[5] = scan[
      jaxpr={ lambda ; c:f32[]. let d:f32[] = sin c in (d,) }
      length=5
      num_carry=0
      num_consts=0
      reverse=False
      unroll=1
    ] a
  in (b,) }""",
    "map_batched": """\
{ lambda ; a:f32[5]. let
    b:f32[4] = slice[limit_indices=(4,) start_indices=(0,) strides=None] a
    c:f32[2,2] = reshape[dimensions=None new_sizes=(2, 2) sharding=None] b
    d:f32[1] = slice[limit_indices=(5,) start_indices=(4,) strides=None] a
    e:f32[2,2] = scan[
      jaxpr={ lambda ; f:f32[2]. let g:f32[2] = sin f in (g,) }
      length=2
      num_carry=0
      num_consts=0
      reverse=False
      unroll=1
    ] c
    h:f32[1] = sin d
    i:f32[4] = reshape[dimensions=None new_sizes=(4,) sharding=None] e
    j:f32[5] = concatenate[dimension=0] i h
  in (j,) }""",
    "vmap_xs": """\
{ lambda a:f32[2,2]; b:f32[2] c:f32[4,3,2]. let
    d:f32[4,2] = broadcast_in_dim[broadcast_dimensions=(1,)] b
    e:f32[3,4,2] = transpose[permutation=(1, 0, 2)] c
    f:f32[4,2] g:f32[3,4] = scan[
      jaxpr={ lambda ; h:f32[2,2] i:f32[4,2] j:f32[4,2]. let
          k:f32[2,4] = dot_general[
            dimension_numbers=(([1], [1]), ([], []))
            preferred_element_type=float32
          ] h i
          l:f32[4,2] = transpose[permutation=(1, 0)] k
          m:f32[4,2] = add l j
          n:f32[4,2] = tanh m
          o:f32[4] = reduce_sum[axes=(1,) out_sharding=None] i
        in (n, o) }
      length=3
      num_carry=1
      num_consts=1
      reverse=False
      unroll=1
    ] a d e
    p:f32[4,3] = transpose[permutation=(1, 0)] g
  in (f, p) }""",
    "jvp": """\
{ lambda ; a:f32[3] b:f32[3]. let
    c:f32[] d:f32[] e:f32[3] f:f32[3] = scan[
      jaxpr={ lambda ; g:f32[] h:f32[] i:f32[] j:f32[]. let
          k:f32[] = convert_element_type[new_dtype=float32 weak_type=False] g
          l:f32[] = convert_element_type[new_dtype=float32 weak_type=False] h
          m:f32[] = add k i
          n:f32[] = add l j
        in (m, n, g, h) }
      length=3
      num_carry=2
      num_consts=0
      reverse=False
      unroll=1
    ] 0.0:f32[] 0.0:f32[] a b
  in (c, e, d, f) }""",
}
