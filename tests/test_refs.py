"""Mutable array references (jax.Ref, new_ref, empty_ref, free_ref, freeze,
jax.ds) with JAX 0.10.2's semantics: the expected values and messages below
were printed by JAX 0.10.2 for the same programs."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp


def test_eager_reads_and_writes():
  r = jax.new_ref(jnp.zeros(3))
  assert repr(r) == "Ref([0., 0., 0.], dtype=float32)"
  assert str(jax.typeof(r)) == "Ref{float32[3]}"
  assert (r.shape, r.dtype, r.ndim) == ((3,), np.float32, 1)
  assert float(r[1]) == 0.0
  r[1] = 5.
  np.testing.assert_array_equal(r[...], [0., 5., 0.])
  r[...] += 1
  assert repr(r) == "Ref([1., 6., 1.], dtype=float32)"
  r.addupdate(1.)
  np.testing.assert_array_equal(r[...], [2., 7., 2.])
  assert isinstance(r, jax.Ref) and not isinstance(r, jax.Array)
  assert jax.tree.leaves([r]) == [r]


@pytest.mark.parametrize("executor", ["interpreter", "iree"])
def test_jit_updates_closed_over_refs_in_place(executor):
  with jax.config.override("openjax_executor", executor):
    r = jax.new_ref(jnp.zeros(3))
    r[...] = jnp.array([1., 6., 1.])

    @jax.jit
    def f(x):
      r[...] = r[...] + x
      return r[0] * 2
    assert float(f(1.)) == 4.0
    np.testing.assert_array_equal(r[...], [2., 7., 2.])
    assert float(f(1.)) == 6.0          # the second call sees the first's write
    np.testing.assert_array_equal(r[...], [3., 8., 3.])

    @jax.jit
    def g(ref, x):
      ref[0] = x
    assert g(r, 7.) is None
    np.testing.assert_array_equal(r[...], [7., 8., 3.])


def test_counter_in_nested_jits():
  c = jax.new_ref(0)

  @jax.jit
  def inc():
    c[...] += 1
  for _ in range(3):
    inc()
  assert int(c[...]) == 3

  @jax.jit
  def outer(x):
    inc()
    return x + c[...]
  assert int(outer(10)) == 14 and int(c[...]) == 4


def test_refs_cannot_be_returned_from_jit():
  r = jax.new_ref(jnp.zeros(3))
  with pytest.raises(ValueError, match=r"returned a mutable array reference of type "
                                       r"Ref\{float32\[3\]\}, but mutable array references "
                                       "cannot be returned"):
    jax.jit(lambda: r)()
  with pytest.raises(ValueError, match=r"Ref\{float32\[\]\}"):
    jax.jit(lambda x: jax.new_ref(x))(1.)


def test_local_refs_freeze_empty_ref_and_free_ref():
  assert float(jax.jit(lambda x: jax.freeze(jax.new_ref(x)) * 2)(3.)) == 6.0

  @jax.jit
  def h():
    e = jax.empty_ref(jax.ShapeDtypeStruct((2,), jnp.float32))
    e[...] = jnp.ones(2)
    v = e[...]
    jax.free_ref(e)
    return v
  np.testing.assert_array_equal(h(), [1., 1.])
  e = jax.new_ref(jnp.ones(2))
  jax.free_ref(e)
  with pytest.raises(ValueError, match="freed"):
    e[...]


def test_grad_and_vmap_through_local_refs():
  def loss(w):
    ref = jax.new_ref(w)
    ref[...] = ref[...] * 3
    return jax.freeze(ref).sum()
  np.testing.assert_array_equal(jax.grad(loss)(jnp.ones(2)), [3., 3.])
  np.testing.assert_array_equal(jax.jit(jax.grad(loss))(jnp.ones(2)), [3., 3.])

  def bump(x):
    rr = jax.new_ref(x)
    rr[...] = rr[...] + 1
    return rr[...]
  np.testing.assert_array_equal(jax.vmap(bump)(jnp.arange(3.)), [1., 2., 3.])


def test_errors_as_jax():
  rr = jax.new_ref(0.)
  with pytest.raises(ValueError, match="set/swap operation with a differentiated value on a "
                                       r"non-differentiated array reference of type "
                                       r"Ref\{float32\[\]\}"):
    jax.grad(lambda x: (rr.__setitem__(..., x), x * 2)[1])(1.)
  with pytest.raises(ValueError, match=r"Invalid shape for `swap`. Ref shape: \(2,\)."):
    jax.new_ref(jnp.zeros(2))[...] = jnp.zeros(3)


def test_ds_indexes_arrays_and_refs():
  assert repr(jax.ds(1, 2)) == "Slice(start=1, size=2, stride=1)"
  x = jnp.arange(10)
  np.testing.assert_array_equal(x[jax.ds(4, 2)], [4, 5])
  np.testing.assert_array_equal(x[jax.ds(1, 3, 2)], [1, 3, 5])
  np.testing.assert_array_equal(jax.jit(lambda x, i: x[jax.ds(i, 3)])(x, 2), [2, 3, 4])
  y = jnp.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(y[0, jax.ds(1, 2)], [1, 2])
  np.testing.assert_array_equal(jax.jit(lambda y, i: y[jax.ds(i, 2), 1])(y, 1), [5, 9])
  r2 = jax.new_ref(jnp.arange(10.))
  np.testing.assert_array_equal(r2[jax.ds(2, 3)], [2., 3., 4.])
  r2[jax.ds(2, 3)] = jnp.zeros(3)
  np.testing.assert_array_equal(r2[...], [0., 1., 0., 0., 0., 5., 6., 7., 8., 9.])

  @jax.jit
  def write_at(i):
    r2[jax.ds(i, 2)] = jnp.full(2, -1.)
  write_at(6)
  np.testing.assert_array_equal(r2[...], [0., 1., 0., 0., 0., 5., -1., -1., 8., 9.])


def test_make_jaxpr_of_a_jitted_function_with_refs_does_not_mutate():
  r = jax.new_ref(jnp.ones(2))

  @jax.jit
  def f(x):
    r[...] = r[...] + x
    return r[...].sum()
  jax.make_jaxpr(f)(1.)
  np.testing.assert_array_equal(r[...], [1., 1.])
  assert float(f(1.)) == 4.0


def test_refs_holding_typed_keys():
  # Values printed by JAX 0.10.2 for the same program.
  r = jax.new_ref(jax.random.key(0))
  assert str(jax.typeof(r)) == "Ref{key<fry>[]}"

  @jax.jit
  def draw():
    k, sub = jax.random.split(r[...])
    r[...] = k
    return jax.random.normal(sub)
  np.testing.assert_allclose([float(draw()), float(draw())], [-2.4424558, -1.2574776],
                             rtol=1e-6)


def test_traced_writes_into_outside_refs_raise():
  r = jax.new_ref(jnp.ones(3))

  def f(x):
    r[...] = x
    return r[...] * 2
  with pytest.raises(ValueError, match="set/swap operation with vmapped value on an unbatched "
                                       r"array reference of type Ref\{float32\[3\]\}"):
    jax.vmap(f)(jnp.ones((2, 3)))
  with pytest.raises(ValueError, match="only under jax.jit"):
    jax.make_jaxpr(f)(jnp.ones(3))
  np.testing.assert_array_equal(jax.jit(f)(jnp.full(3, 2.)), [4., 4., 4.])
  np.testing.assert_array_equal(r[...], [2., 2., 2.])


# Values below printed by JAX 0.10.2 for the same programs.
def test_refs_in_loop_bodies_accumulate():
  r = jax.new_ref(0.)

  @jax.jit
  def traced_bounds(n):
    def body(i, c):
      r[...] += 1.
      return c + i
    return jax.lax.fori_loop(0, n, body, 0)
  assert int(traced_bounds(5)) == 10 and float(r[...]) == 5.0

  @jax.jit
  def static_bounds():
    def body(i, c):
      r[...] += 1.
      return c + i
    return jax.lax.fori_loop(0, 5, body, 0)
  assert int(static_bounds()) == 10 and float(r[...]) == 10.0

  def total(x):
    ref = jax.new_ref(0.)

    def body(c, xi):
      ref[...] += xi
      return c, None
    jax.lax.scan(body, 0, x)
    return ref[...]
  assert float(total(jnp.arange(4.))) == 6.0 and float(jax.jit(total)(jnp.arange(4.))) == 6.0

  s = jax.new_ref(jnp.zeros(3))

  def body(c, xi):
    s[...] = s[...] + xi
    return c + 1, s[...].sum()
  carry, ys = jax.lax.scan(body, 0, jnp.ones((4, 3)))
  assert int(carry) == 4
  np.testing.assert_array_equal(ys, [3., 6., 9., 12.])
  np.testing.assert_array_equal(s[...], [4., 4., 4.])


def test_refs_in_cond_and_switch_branches():
  r = jax.new_ref(0.)
  assert jax.lax.cond(True, lambda: r.__setitem__(..., 7.), lambda: None) is None
  assert float(r[...]) == 7.0

  @jax.jit
  def f(p, x):
    def t(x):
      r[...] += x
      return x * 2
    return jax.lax.cond(p, t, lambda x: -x, x)
  got = [float(f(True, 1.)), float(r[...]), float(f(False, 1.)), float(r[...]),
         float(f(True, 2.)), float(r[...])]
  assert got == [2.0, 8.0, -1.0, 8.0, 4.0, 10.0]
  assert float(jax.lax.switch(1, [lambda: r[...] * 0, lambda: r[...] + 1])) == 11.0


def test_refs_in_while_loop():
  # JAX 0.10.2 prints 5 10 and 4 16.
  r = jax.new_ref(0)

  def body(c):
    r[...] += c
    return c + 1
  assert int(jax.lax.while_loop(lambda c: c < 5, body, 0)) == 5 and int(r[...]) == 10
  assert int(jax.jit(lambda n: jax.lax.while_loop(lambda c: c < n, body, 0))(4)) == 4
  assert int(r[...]) == 16


def test_static_args_kwargs_and_aot_message():
  from functools import partial
  r = jax.new_ref(jnp.zeros(2))

  @partial(jax.jit, static_argnums=1)
  def f(x, n, *, scale=1.):
    r[...] += x * n * scale
    return r[...].sum()
  assert float(f(1., 2)) == 4.0 and float(f(1., 3, scale=2.)) == 16.0
  np.testing.assert_array_equal(r[...], [8., 8.])
  with pytest.raises(Exception, match="not through jit"):
    jax.jit(lambda x: r[...] + x).lower(1.)


def test_ref_guide_examples_and_jax_ref_module():
  # From JAX's Ref guide and jax.ref docs; values printed by JAX 0.10.2.
  x_ref = jax.new_ref(jnp.zeros(3))

  @jax.jit
  def f():
    x_ref[1] += 1.
  f()
  f()
  assert repr(x_ref) == "Ref([0., 2., 0.], dtype=float32)"

  def g(x):
    ref = jax.new_ref(0.)
    ref[...] = jnp.sin(x)
    return ref[...]
  np.testing.assert_allclose(jax.grad(g)(1.0), 0.5403023, rtol=1e-6)
  np.testing.assert_allclose(jax.jit(jax.grad(g))(1.0), 0.5403023, rtol=1e-6)

  r = jax.new_ref(jnp.arange(5))
  assert int(jax.ref.swap(r, 1, 10)) == 1
  jax.ref.addupdate(r, 2, 5)
  np.testing.assert_array_equal(jax.ref.get(r), [0, 10, 7, 3, 4])
  np.testing.assert_array_equal(jax.ref.get(r, slice(1, 3)), [10, 7])
  jax.ref.set(r, ..., jnp.zeros(5, "int32"))
  assert repr(r) == "Ref([0, 0, 0, 0, 0], dtype=int32)"
  s = jax.new_ref(jnp.int32(0))
  s[...] = 4
  assert repr(s) == "Ref(4, dtype=int32)"
  assert jax.ref.AbstractRef is type(jax.typeof(s))


def test_vjp_with_refs_accumulates_gradients():
  # JAX 0.10.2: (GradRef(), DidntWant()) Ref(1.0806046), then Ref(2.161209).
  _, f_vjp = jax.vjp(lambda x, w: jnp.sin(x) * w, 1., 2.)
  g = jax.new_ref(0.)
  out = f_vjp.with_refs(g, jax.ad.DontWant())(1.)
  assert out == (jax.ad.GradRef(), jax.ad.DidntWant())
  np.testing.assert_allclose(g[...], 1.0806046, rtol=1e-6)
  out = f_vjp.with_refs(g, jax.ad.GradValue())(1.)
  np.testing.assert_allclose(out[1], 0.84147096, rtol=1e-6)
  np.testing.assert_allclose(g[...], 2.161209, rtol=1e-6)
  with pytest.raises(ValueError, match="unexpected tree structure"):
    f_vjp.with_refs(g)


def test_jitted_function_updating_a_ref_argument_inside_grad_and_jit():
  @jax.jit
  def inner(r, x):
    r[...] += x

  @jax.jit
  def outer(x):
    r = jax.new_ref(jnp.zeros(2))
    inner(r, x)
    inner(r, x)
    return r[...]
  np.testing.assert_array_equal(outer(jnp.ones(2)), [2., 2.])

  def h(x):
    r = jax.new_ref(x)
    inner(r, x)
    return jax.freeze(r).sum()
  np.testing.assert_array_equal(jax.grad(h)(jnp.ones(2)), [2., 2.])   # JAX 0.10.2: [2. 2.]
