"""Transformations of the indexing family: JVP, VJP (transpose) and vmap of
gather, the scatters, dynamic_slice and dynamic_update_slice, through
``x[idx]``, ``x.at[]``, ``jnp.take``/``take_along_axis`` and ``lax``.

Expected values marked "JAX 0.10.2" were produced by JAX itself."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr

SDN, GDN = lax.ScatterDimensionNumbers, lax.GatherDimensionNumbers


def _close(a, b, **kw):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6, atol=1e-6, **kw)


def _prims(closed):
  return [e.primitive.name for e in closed.jaxpr.eqns]


def _checked_jaxpr(f, *args):
  closed = jax.make_jaxpr(f)(*args)
  check_jaxpr(closed.jaxpr)
  return closed


# ------------------------------------------------------------------ gather
def test_grad_of_getitem_accumulates_repeated_indices():
  x = jnp.array([1., 2., 3., 4., 5.])
  idx = jnp.array([1, 3, 1, 1, -1])
  g = jax.grad(lambda x: (x[idx] * jnp.arange(5.)).sum())(x)
  _close(g, [0., 5., 0., 1., 4.])   # JAX 0.10.2


def test_grad_of_gather_transposes_to_scatter_add():
  idx = np.array([[0], [2], [2]], np.int32)
  dn = GDN(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))

  def f(x):
    return lax.gather(x, idx, dn, (1,)).sum()
  closed = _checked_jaxpr(jax.grad(f), np.ones(3, np.float32))
  assert _prims(closed)[0] == "gather" and _prims(closed)[-1] == "scatter-add"
  (eqn,) = [e for e in closed.jaxpr.eqns if e.primitive.name == "scatter-add"]
  assert eqn.params["mode"] == lax.GatherScatterMode.PROMISE_IN_BOUNDS
  _close(jax.grad(f)(np.ones(3, np.float32)), [1., 0., 2.])


def test_gather_out_of_bounds_gradients_follow_the_mode():
  x = jnp.arange(4.)
  idx = jnp.array([9, -9, 1, 1])
  # Default reads clamp but the transposed scatter drops (JAX 0.10.2).
  _close(jax.grad(lambda x: x[idx].sum())(x), [0., 2., 0., 0.])
  _close(jax.grad(lambda x: x.at[jnp.array([9, 1, 1])].get(mode="clip").sum())(x),
         [0., 2., 0., 1.])
  # 'fill' windows are constants: no gradient flows to them.
  g = jax.grad(lambda x: x.at[idx].get(mode="fill", fill_value=7.).sum())(x)
  _close(g, [0., 2., 0., 0.])


def test_take_and_take_along_axis_gradients():
  g = jax.grad(lambda a: jnp.take_along_axis(a, jnp.array([[2, 0, 2], [1, 1, 1]]),
                                             axis=1).sum())(jnp.ones((2, 3)))
  _close(g, [[1., 0., 2.], [0., 3., 0.]])   # JAX 0.10.2
  g = jax.grad(lambda a: jnp.take(a, jnp.array([1, 1, 0]), axis=1).sum())(jnp.ones((2, 3)))
  _close(g, [[1., 2., 0.], [1., 2., 0.]])


def test_hessian_through_gather():
  h = jax.hessian(lambda x: (x[jnp.array([0, 2, 2])] ** 3).sum())(jnp.array([1., 2., 3.]))
  _close(h, [[6., 0., 0.], [0., 0., 0.], [0., 0., 36.]])   # JAX 0.10.2


def test_per_example_gradients_through_gather():
  W = jnp.arange(12.).reshape(4, 3) / 10
  ids = jnp.array([[0, 1, 1], [3, 3, 2]])

  def loss(W, i):
    return jnp.sum(jnp.tanh(W[i]) ** 2)
  per_example = jax.vmap(jax.grad(loss), in_axes=(None, 0))(W, ids)
  expected = [  # JAX 0.10.2
      [[0.0, 0.19735583662986755, 0.3793722689151764],
       [1.06636381149292, 1.30039644241333, 1.4537239074707031], [0.] * 3, [0.] * 3],
      [[0.] * 3, [0.] * 3, [0.7643051147460938, 0.7672322988510132, 0.7424663305282593],
       [1.3951112031936646, 1.2793999910354614, 1.1501610279083252]]]
  np.testing.assert_allclose(np.asarray(per_example), expected, rtol=1e-5)
  # ... and the same with both the table and the indices batched.
  Ws = jnp.stack([W, 2 * W])
  both = jax.vmap(jax.grad(loss))(Ws, ids)
  for b in range(2):
    _close(both[b], jax.grad(loss)(Ws[b], ids[b]))


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 1), (2, 0)])
def test_vmap_gather_matches_loop(in_axes):
  rng = np.random.default_rng(0)
  x = rng.standard_normal((3, 4, 5)).astype(np.float32)
  i = rng.integers(-2, 6, (3, 2, 2)).astype(np.int32)

  def f(x, i):
    x = jnp.asarray(x)
    return x[:, i[0], 1:] + x[i[1, 0], :, 0].sum()
  xs = np.stack([x, x + 1, x * 2], axis=in_axes[0]) if in_axes[0] is not None else x
  is_ = np.stack([i, 3 - i, i[::-1]], axis=in_axes[1]) if in_axes[1] is not None else i
  got = jax.vmap(f, in_axes=in_axes)(xs, is_)
  for b in range(3):
    xb = np.take(xs, b, axis=in_axes[0]) if in_axes[0] is not None else xs
    ib = np.take(is_, b, axis=in_axes[1]) if in_axes[1] is not None else is_
    _close(got[b], f(xb, ib))


def test_vmap_over_a_batch_of_index_arrays():
  x = jnp.arange(10.) * 10
  idx = jnp.array([[0, 9, 9], [1, 2, 3], [-1, 4, 4]])
  _close(jax.vmap(lambda i: x[i])(idx), np.asarray(x)[np.asarray(idx)])
  _close(jax.vmap(lambda i: x.at[i].add(1.))(idx),
         np.stack([_np_add_at(np.asarray(x), np.asarray(r) % 10, 1.) for r in idx]))
  _close(jax.vmap(lambda i: jnp.take(x, i, mode="clip"))(idx + 5),
         np.take(np.asarray(x), np.asarray(idx) + 5, mode="clip"))


def _np_add_at(x, i, v):
  out = x.copy()
  np.add.at(out, i, v)
  return out


# ----------------------------------------------------------------- scatter
def test_grad_of_at_set_in_operand_and_values():
  x = jnp.array([1., 2., 3., 4., 5.])
  u = jnp.array([10., 20., 30.])
  i = jnp.array([1, 3, 1])
  gx, gu = jax.grad(lambda x, u: (x.at[i].set(u) * jnp.arange(1., 6.)).sum(), (0, 1))(x, u)
  _close(gx, [1., 0., 3., 0., 5.])   # JAX 0.10.2
  _close(gu, [0., 4., 2.])
  t = jax.jvp(lambda x, u: x.at[i].set(u), (x, u), (jnp.ones(5), jnp.array([1., 2., 3.])))[1]
  _close(t, [1., 3., 1., 2., 1.])


def test_grad_of_at_set_with_unique_indices_uses_scatter_transpose():
  x, u = jnp.arange(4.), jnp.array([7., 8.])

  def f(x, u):
    return (x.at[jnp.array([3, 0])].set(u, unique_indices=True) * jnp.arange(1., 5.)).sum()
  gx, gu = jax.grad(f, (0, 1))(x, u)
  _close(gx, [0., 2., 3., 0.])
  _close(gu, [4., 1.])
  closed = _checked_jaxpr(jax.grad(f, (0, 1)), x, u)
  assert "scatter" in _prims(closed) and "scatter-add" not in _prims(closed)


def test_scatter_overlapping_windows_value_and_jvp():
  dn = SDN(update_window_dims=(1,), inserted_window_dims=(), scatter_dims_to_operand_dims=(0,))
  x, u = jnp.arange(6.), jnp.arange(1., 10.).reshape(3, 3) * 10
  i = jnp.array([[0], [2], [1]])
  out, t = jax.jvp(lambda x, u: lax.scatter(x, i, u, dn), (x, u),
                   (jnp.ones(6), jnp.ones((3, 3)) * 100.))
  _close(out, [10., 70., 80., 90., 60., 5.])   # JAX 0.10.2
  _close(t, [100., 100., 100., 100., 100., 1.])


def test_scatter_max_and_min_ties_average_the_tangents():
  x = jnp.array([1., 2., 3.])
  f = lambda x, u: x.at[jnp.array([0, 0, 1, 2])].max(u)
  u = jnp.array([1., 1., 5., 0.])
  t = jax.jvp(f, (x, u), (jnp.array([1., 2., 3.]), jnp.array([10., 20., 30., 40.])))[1]
  _close(t, [31 / 3, 30., 3.])   # JAX 0.10.2
  gx, gu = jax.grad(lambda x, u: (f(x, u) * jnp.array([1., 2., 3.])).sum(), (0, 1))(x, u)
  _close(gx, [1 / 3, 0., 3.])
  _close(gu, [1 / 3, 1 / 3, 2., 0.])
  fmin = lambda x, u: x.at[jnp.array([0, 0, 2])].min(u)
  gx, gu = jax.grad(lambda x, u: (fmin(x, u) * jnp.array([1., 2., 3.])).sum(),
                    (0, 1))(x, jnp.array([0.5, 0.5, 3.]))
  _close(gx, [0., 2., 1.5])
  _close(gu, [0.5, 0.5, 1.5])


def test_scatter_mul_gradients():
  x = jnp.array([1., 2., 3., 4., 5.])
  i = jnp.array([1, 3, 1])
  g = jax.grad(lambda x: x.at[i].multiply(jnp.array([2., 3., 4.])).sum())(x)
  _close(g, [1., 8., 1., 3., 1.])   # JAX 0.10.2
  gu = jax.grad(lambda u: x.at[jnp.array([1, 3])].multiply(u, unique_indices=True).sum())(
      jnp.array([2., 3.]))
  _close(gu, [2., 4.])
  with pytest.raises(NotImplementedError, match="only implemented if `unique_indices=True`"):
    jax.grad(lambda u: x.at[i].multiply(u).sum())(jnp.ones(3))


def test_unsupported_derivatives_raise_like_jax():
  x = jnp.arange(5.)
  with pytest.raises(NotImplementedError, match="scatter_apply JVP not implemented"):
    jax.grad(lambda x: x.at[jnp.array([1, 3])].apply(jnp.sin).sum())(x)
  dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  f = lambda x: lax.scatter(x, np.array([[0], [0]], np.int32), jnp.ones(2), dn)
  with pytest.raises(NotImplementedError, match="unique_indices=True"):
    jax.linear_transpose(f, x)(x)


def test_scatter_add_and_sub_transpose_to_gathers():
  dn = SDN(update_window_dims=(), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
  i = np.array([[1], [1], [7], [0]], np.int32)
  w = jnp.arange(1., 5.)
  for op, sign in ((lax.scatter_add, 1.), (lax.scatter_sub, -1.)):
    gx, gu = jax.grad(lambda x, u: (op(x, i, u, dn) * w).sum(), (0, 1))(jnp.ones(4), jnp.ones(4))
    _close(gx, w)
    _close(gu, sign * np.array([2., 2., 0., 1.]))   # index 7 is dropped


def test_vmap_of_at_updates_with_batched_indices_and_values():
  x = jnp.zeros((2, 5))
  idx = jnp.array([[0, 0, 4], [1, 3, 3]])
  vals = jnp.array([[1., 2., 3.], [4., 5., 6.]])
  _close(jax.vmap(lambda x, i, v: x.at[i].add(v))(x, idx, vals),
         [[3., 0., 0., 0., 3.], [0., 4., 0., 11., 0.]])
  _close(jax.vmap(lambda i, v: jnp.zeros(5).at[i].max(v))(idx, vals),
         [[2., 0., 0., 0., 3.], [0., 4., 0., 6., 0.]])
  _close(jax.vmap(lambda i: jnp.arange(5.).at[i].apply(lambda v: v * 10))(idx),
         [[0., 1., 2., 3., 40.], [0., 10., 2., 300., 4.]])


def test_transformations_compose_with_jit():
  x = jnp.array([1., 2., 3., 4.])
  i = jnp.array([[0, 3], [2, 2]])
  f = lambda x, i: (jnp.sin(x[i]) * x.at[i[0]].set(1.)[i[1]]).sum()
  g = jax.grad(f)(x, i)
  _close(jax.jit(jax.grad(f))(x, i), g)
  _close(jax.grad(jax.jit(f))(x, i), g)
  _close(jax.jit(jax.vmap(jax.grad(f), in_axes=(None, 0)))(x, jnp.stack([i, i[::-1]]))[0], g)


# ---------------------------------------------------- dynamic_slice & update
def test_dynamic_slice_vmap_with_batched_starts():
  X = jnp.arange(24.).reshape(4, 6)
  starts = jnp.array([0, 3, 5, -1])
  _close(jax.vmap(lambda x, s: lax.dynamic_slice(x, (s,), (3,)))(X, starts),   # JAX 0.10.2
         [[0., 1., 2.], [9., 10., 11.], [15., 16., 17.], [21., 22., 23.]])
  _close(jax.vmap(lambda s: lax.dynamic_slice(X, (1, s), (2, 2)))(starts),
         [[[6., 7.], [12., 13.]], [[9., 10.], [15., 16.]], [[10., 11.], [16., 17.]],
          [[10., 11.], [16., 17.]]])
  closed = _checked_jaxpr(jax.vmap(lambda s: lax.dynamic_slice(X, (1, s), (2, 2))), starts)
  assert "gather" in _prims(closed)
  closed = _checked_jaxpr(jax.vmap(lambda x: lax.dynamic_slice(x, (2,), (3,))), X)
  assert "dynamic_slice" in _prims(closed) and "gather" not in _prims(closed)


def test_dynamic_update_slice_vmap_with_batched_starts():
  X = jnp.arange(24.).reshape(4, 6)
  starts = jnp.array([0, 3, 5, -1])
  upd = jnp.array([-1., -2.])
  _close(jax.vmap(lambda x, s: lax.dynamic_update_slice(x, upd, (s,)))(X, starts),
         [[-1., -2., 2., 3., 4., 5.], [6., 7., 8., -1., -2., 11.],   # JAX 0.10.2
          [12., 13., 14., 15., -1., -2.], [18., 19., 20., 21., -1., -2.]])
  closed = _checked_jaxpr(jax.vmap(lambda x, s: lax.dynamic_update_slice(x, upd, (s,))),
                          X, starts)
  assert "scatter" in _prims(closed)
  us = jnp.arange(8.).reshape(4, 2)
  _close(jax.vmap(lambda u: lax.dynamic_update_slice(jnp.zeros(4), u, (1,)))(us),
         [[0., 2 * b, 2 * b + 1, 0.] for b in range(4)])


def test_dynamic_slice_and_update_gradients():
  X = jnp.arange(24.).reshape(4, 6)
  starts = jnp.array([0, 3, 5, -1])
  g = jax.vmap(jax.grad(lambda x, s: (lax.dynamic_slice(x, (s,), (3,)) ** 2).sum()))(X, starts)
  _close(g, [[0., 2., 4., 0., 0., 0.], [0., 0., 0., 18., 20., 22.],   # JAX 0.10.2
             [0., 0., 0., 30., 32., 34.], [0., 0., 0., 42., 44., 46.]])
  f = lambda x, u: (lax.dynamic_update_slice(x, u, (jnp.array(4),)) * jnp.arange(6.)).sum()
  gx, gu = jax.grad(f, (0, 1))(jnp.ones(6), jnp.ones(3))
  _close(gx, [0., 1., 2., 0., 0., 0.])   # JAX 0.10.2
  _close(gu, [3., 4., 5.])
  closed = _checked_jaxpr(jax.grad(f, (0, 1)), jnp.ones(6), jnp.ones(3))
  assert {"dynamic_slice", "dynamic_update_slice"} <= set(_prims(closed))


def test_traced_scalar_index_gradient():
  x = jnp.arange(12.).reshape(3, 4)
  g = jax.grad(lambda x, i: (x[i, 1:] ** 2).sum())(x, jnp.array(-1))
  expected = np.zeros((3, 4))
  expected[-1, 1:] = 2 * np.asarray(x)[-1, 1:]
  _close(g, expected)
  g = jax.vmap(jax.grad(lambda x, i: (x[i, 1:] ** 2).sum()), in_axes=(None, 0))(
      x, jnp.array([0, 2]))
  _close(g[1], expected)
