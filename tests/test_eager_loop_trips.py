"""Eager loops run their trips on one runner (core ``kernel_while_runner`` /
``kernel_scan_runner``): one set of slots per loop, the floating-point state
set once. The results must be the op-by-op loop's: carries, dtypes, weak
types, pass-through carries, literals, nested loops, released intermediates,
the debug flags' checked steps. Also the kernels of ``jnp.gcd``'s trip
(``rem`` by zero, ``reduce_or``) and ``lax.while_loop``'s keying by the
user's functions."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control import nested_calls
from openjax._src.core.fused_steps import fused_steps
from openjax._src.control.while_loop import keyed_while_loop
from openjax._src.primitives.elementwise.arithmetic import _rem
from openjax._src.primitives.reduce import reductions

f32, i32 = np.float32, np.int32


def _same(got, want):
  for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
    g, w = jnp.asarray(g), jnp.asarray(w)
    assert g.dtype == w.dtype and g.shape == w.shape and g.weak_type == w.weak_type, (g, w)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


def _both(f, *args):
  """``f(*args)`` on the loop's runner and as the Python loop."""
  got = f(*args)
  with jax.disable_jit():
    want = f(*args)
  _same(got, want)
  return got


# ------------------------------------------------------------ while loops
def test_while_carries_keep_dtypes_weak_types_and_pass_throughs():
  x = jnp.asarray(np.linspace(-1, 1, 5, dtype=f32))
  flags = jnp.asarray(np.array([True, False, True, True, False]))

  def loop(x, flags):
    # A weak int counter, a float array, a bool array the body passes
    # through, a uint8 carry and a carry the body sets to a literal.
    def body(c):
      i, v, b, u, z = c
      return i + 1, jnp.where(b, v * 1.5, v - 0.25), b, u + jnp.uint8(3), jnp.float32(2.0)
    return lax.while_loop(lambda c: c[0] < 6, body, (0, x, flags, jnp.uint8(250), f32(0)))
  out = _both(loop, x, flags)
  assert out[0].weak_type and out[0].dtype == i32 and int(out[0]) == 6
  assert out[3].dtype == np.uint8 and int(out[3]) == (250 + 18) % 256   # wraps, as in JAX
  assert out[2] is flags   # passed through: the same Array


def test_while_zero_trips_and_constant_predicate_inputs():
  x = jnp.asarray(np.arange(4, dtype=f32))
  limit = jnp.asarray(f32(-1))
  out = _both(lambda x: lax.while_loop(lambda v: jnp.sum(v) < limit, lambda v: v + 1.0, x), x)
  np.testing.assert_array_equal(np.asarray(out), np.arange(4, dtype=f32))
  # The predicate reads a constant the body does not: many trips.
  out = _both(lambda x: lax.while_loop(lambda v: v[0] < limit + 50.0, lambda v: v + 1.0, x), x)
  assert float(out[0]) == 49.0


def test_while_nested_loops_and_released_intermediates():
  # The body's intermediate (8192 float32s) is released after its last use
  # each trip; the slots are reused by the next trip.
  x = jnp.asarray(np.linspace(0, 1, 8192, dtype=f32))

  def loop(x):
    def body(c):
      i, acc = c
      inner = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] * 0.5),
                             (0, jnp.ones_like(x)))
      big = jnp.sin(acc) * 2.0
      return i + 1, big + inner[1]
    return lax.while_loop(lambda c: c[0] < 4, body, (0, jnp.zeros_like(x)))
  i, acc = _both(loop, x)
  want = np.zeros(8192, f32)
  for k in range(4):
    want = np.sin(want) * f32(2.0) + f32(0.5) ** k
  np.testing.assert_allclose(np.asarray(acc), want, rtol=1e-6)


def test_while_runner_made_once_and_checked_under_debug_nans():
  closed = jax.make_jaxpr(
      lambda x: lax.while_loop(lambda v: v[0] < 3.0, lambda v: jnp.log(v) + 2.0, x))(
          jnp.ones(2, f32))
  eqn, = closed.jaxpr.eqns
  cond, body = eqn.params["cond_jaxpr"], eqn.params["body_jaxpr"]
  run = nested_calls.while_runner(cond, body)
  assert run is not None and nested_calls.while_runner(cond, body) is run
  with jax.debug_nans(True):
    assert nested_calls.while_runner(cond, body) is None   # checked steps instead
    with pytest.raises(FloatingPointError):
      lax.while_loop(lambda v: v[0] < 3.0, lambda v: jnp.log(v) + 2.0,
                     jnp.asarray(np.array([0.5, -1.0], f32)))
  assert nested_calls.while_runner(cond, body) is run


def test_while_batched_predicate_under_vmap():
  xs = jnp.asarray(np.array([1.0, 5.0, 20.0], f32))
  out = jax.vmap(lambda x: lax.while_loop(lambda v: v < 30.0, lambda v: v * 2.0, x))(xs)
  np.testing.assert_array_equal(np.asarray(out), [32.0, 40.0, 40.0])


# ------------------------------------------------------------------ scan
def test_scan_rows_of_1d_xs_reverse_and_stacked_dtypes():
  xs = jnp.asarray(np.arange(6, dtype=i32))
  scale = jnp.asarray(f32(0.5))

  def f(xs):
    def step(c, x):
      c = c * scale + x
      return c, (x * 2, c > 1.0, c)
    return lax.scan(step, f32(0), xs, reverse=True)
  c, (doubled, flags, cs) = _both(f, xs)
  assert doubled.dtype == i32 and flags.dtype == np.bool_ and cs.dtype == f32
  want, c0 = [], f32(0)
  for x in reversed(range(6)):
    c0 = c0 * f32(0.5) + f32(x)
    want.append(c0)
  np.testing.assert_array_equal(np.asarray(cs), want[::-1])


def test_scan_without_xs_pass_through_carry_and_zero_length():
  x = jnp.asarray(np.arange(3, dtype=f32))
  k = jnp.asarray(np.int32(7))
  _both(lambda x: lax.scan(lambda c, _: ((c[0] + 1.0, c[1]), c[0].sum()), (x, k), None,
                           length=4), x)
  carry, ys = lax.scan(lambda c, r: (c + r, c), x, jnp.zeros((0, 3), f32))
  assert ys.shape == (0, 3)
  np.testing.assert_array_equal(np.asarray(carry), np.arange(3, dtype=f32))
  out = _both(lambda x: lax.fori_loop(0, 5, lambda i, c: c * 2.0 + i, x), x)
  np.testing.assert_array_equal(np.asarray(out), np.arange(3, dtype=f32) * 32 + 26)


def test_scan_runner_none_under_debug_nans():
  closed = jax.make_jaxpr(lambda c, x: lax.scan(lambda c, r: (c + r, c), c, x))(
      jnp.ones(2, f32), jnp.ones((3, 2), f32))
  eqn, = closed.jaxpr.eqns
  p = eqn.params
  run = nested_calls.scan_runner(p["jaxpr"], p["num_consts"], p["num_carry"])
  assert run is not None
  assert nested_calls.scan_runner(p["jaxpr"], p["num_consts"], p["num_carry"]) is run
  with jax.debug_nans(True):
    assert nested_calls.scan_runner(p["jaxpr"], p["num_consts"], p["num_carry"]) is None
    with pytest.raises(FloatingPointError):
      lax.scan(lambda c, r: (jnp.log(c + r), c), jnp.ones(2, f32),
               jnp.asarray(np.array([[0.0, 0.0], [-5.0, 0.0]], f32)))


# ----------------------------------------------- the kernels of gcd's trip
_INTS = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64]


@pytest.mark.parametrize("dt", _INTS, ids=str)
def test_rem_by_zero_is_the_dividend(dt):
  info = np.iinfo(dt)
  rng = np.random.default_rng(3)
  x = rng.integers(info.min, info.max, 300, dtype=dt, endpoint=True)
  y = rng.integers(info.min, info.max, 300, dtype=dt, endpoint=True)
  y[::3] = 0
  x[::7] = info.min
  y[1::11] = -1 if info.min < 0 else 1
  with np.errstate(all="ignore"):
    want = np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y)))
  got = _rem(x, y)
  assert got.dtype == dt
  np.testing.assert_array_equal(got, want)
  if np.dtype(dt).itemsize <= 4:   # 64-bit values become 32-bit ones without x64
    np.testing.assert_array_equal(np.asarray(lax.rem(jnp.asarray(x), jnp.asarray(y))), want)
  assert _rem(np.array(9, dt), np.array(0, dt)) == 9
  np.testing.assert_array_equal(_rem(x[:4], np.array(0, dt)), x[:4])


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint8, np.int16, np.int32, np.uint32], ids=str)
@pytest.mark.parametrize("shape,axes", [((5,), (0,)), ((3, 4), (0, 1)), ((3, 4), (1,)),
                                        ((0, 3), (0,)), ((2, 3), ())])
def test_logical_reductions_match_their_impls(dt, shape, axes):
  rng = np.random.default_rng(4)
  x = (rng.integers(0, 2, shape).astype(dt) if dt is np.bool_
       else rng.integers(0, 200, shape).astype(dt))
  for p, f in ((reductions.reduce_or_p, lax.reduce_or), (reductions.reduce_and_p,
               lax.reduce_and), (reductions.reduce_xor_p, lax.reduce_xor)):
    want, = p.impl(x, axes=axes)
    got = f(jnp.asarray(x), axes)
    assert got.dtype == want.dtype == dt and got.shape == want.shape
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32], ids=str)
def test_gcd_lcm_of_arrays_of_two_and_three_axes(dt):
  info = np.iinfo(dt)
  rng = np.random.default_rng(5)
  for shape in ((3, 4), (2, 3, 2)):
    a = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    b = rng.integers(-40, 40, shape).astype(dt)
    a.flat[0], b.flat[1], a.flat[2], b.flat[2] = 0, 0, info.min, 0
    with np.errstate(all="ignore"):
      want_gcd = np.gcd(a.astype(np.int64), b.astype(np.int64)).astype(dt)
      want_lcm = np.lcm(a.astype(np.int64), b.astype(np.int64)).astype(dt)
    for got, want in ((jnp.gcd(a, b), want_gcd), (jnp.lcm(a, b), want_lcm),
                      (jax.jit(jnp.gcd)(a, b), want_gcd)):
      assert got.dtype == dt and got.shape == shape
      np.testing.assert_array_equal(np.asarray(got), want)


def _gcd_loop_steps(*args):
  """(the fused steps, the equations) of jnp.gcd's eager program."""
  closed = nested_calls.inline_interpreted_calls(jax.make_jaxpr(jnp.gcd)(*args))
  return fused_steps(closed.jaxpr.eqns, closed.jaxpr.outvars), closed.jaxpr.eqns


@pytest.mark.parametrize("shapes", [((7,), (7,)), ((3, 4), (3, 4)), ((), ()), ((0,), (0,)),
                                    ((2, 3), ())], ids=str)
def test_gcd_loop_is_one_np_gcd_step(shapes):
  fused, eqns = _gcd_loop_steps(*(np.ones(s, i32) for s in shapes))
  loop, = [k for k, e in enumerate(eqns) if e.primitive.name == "while"]
  assert loop in fused   # the loop's equation runs np.gcd
  rng = np.random.default_rng(6)
  a = rng.integers(-50, 50, shapes[0]).astype(i32)
  b = rng.integers(-50, 50, shapes[1]).astype(i32)
  got = jnp.gcd(a, b)
  want = np.gcd(a, b)
  assert got.shape == np.shape(want) and got.dtype == i32
  np.testing.assert_array_equal(np.asarray(got), want)
  with jax.disable_jit():   # the loop trip by trip
    np.testing.assert_array_equal(np.asarray(jnp.gcd(a, b)), want)


def test_loops_like_gcds_are_not_fused():
  u = np.array([12, 7, 0, 30], np.uint32)
  v = np.array([8, 0, 5, 45], np.uint32)

  def loop(cond, body):
    return jax.make_jaxpr(lambda a, b: lax.while_loop(cond, body, (a, b)))(u, v)

  euclid = (lambda c: lax.rem(c[0], c[1]), lambda c, r: (lax.max(c[1], r), lax.min(c[1], r)))

  def body(c):
    return euclid[1](c, euclid[0](c))
  cases = [
      (lambda c: jnp.any(c[1] != 0), body, True),
      (lambda c: jnp.any(c[1] != 1), body, False),                       # another bound
      (lambda c: jnp.any(c[0] != 0), body, False),                       # the other carry
      (lambda c: jnp.any(c[1] != 0), lambda c: (lax.min(c[1], lax.rem(c[0], c[1])),
                                                 lax.max(c[1], lax.rem(c[0], c[1]))), False),
      (lambda c: jnp.any(c[1] != 0), lambda c: (lax.max(c[1], lax.rem(c[1], c[0] + 1)),
                                                 lax.min(c[1], lax.rem(c[1], c[0] + 1))), False),
  ]
  for cond, b, fuses in cases:
    closed = loop(cond, b)
    fused = fused_steps(closed.jaxpr.eqns, closed.jaxpr.outvars)
    assert bool(fused) == fuses
  closed = jax.make_jaxpr(lambda a, b: lax.while_loop(
      lambda c: jnp.any(c[1] != 0), body, (a, b)))(u.astype(i32), v.astype(i32))
  assert not fused_steps(closed.jaxpr.eqns, closed.jaxpr.outvars)   # signed: not NumPy's gcd
  # Both results: the gcd and the zeros the loop ends with.
  g, z = lax.while_loop(lambda c: jnp.any(c[1] != 0), body, (u, v))
  np.testing.assert_array_equal(np.asarray(g), np.gcd(u, v))
  np.testing.assert_array_equal(np.asarray(z), np.zeros(4, np.uint32))
  assert g.dtype == z.dtype == np.uint32


def test_gcd_loops_over_one_axis():
  # Compiled, a loop over at most 16 values of one axis runs as one dispatch.
  closed = jax.make_jaxpr(jnp.gcd)(np.ones((3, 4), i32), np.ones((3, 4), i32))
  inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
  loop, = [e for e in inner.eqns if e.primitive.name == "while"]
  assert [v.aval.shape for v in loop.outvars] == [(12,), (12,)]
  assert inner.outvars[0].aval.shape == (3, 4)


# ------------------------------------------- lax.while_loop's keying
def test_keyed_while_loop_makes_the_traced_functions_only_when_tracing():
  made = []
  x = jnp.asarray(np.arange(3, dtype=f32))

  def funs(cond, body):
    def make():
      made.append(1)
      return cond, body
    return make

  k = jnp.asarray(f32(1.5))

  def run():
    cond, body = (lambda c: c[0] < 3), (lambda c: (c[0] + 1, c[1] * k))
    return keyed_while_loop(cond, body, (0, x), funs(cond, body))
  first, again = run(), run()   # fresh closures of the same code over the same values
  assert made == [1]
  _same(first, again)
  np.testing.assert_array_equal(np.asarray(again[1]), np.arange(3, dtype=f32) * f32(3.375))


def test_lax_while_loop_with_a_python_scalar_carry_and_refs():
  x = jnp.asarray(np.arange(3, dtype=f32))
  outs = [lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 2.0), (0, x))
          for _ in range(2)]
  for i, v in outs:
    assert i.weak_type and int(i) == 4
    np.testing.assert_array_equal(np.asarray(v), np.arange(3, dtype=f32) * 16)
  # A body that uses an outside ref still threads it (after a plain call of
  # the same code cached its loop).
  r = jax.new_ref(0)

  def body(c):
    r[...] += c
    return c + 1
  for expect in (10, 20):
    assert int(lax.while_loop(lambda c: c < 5, body, 0)) == 5 and int(r[...]) == expect
