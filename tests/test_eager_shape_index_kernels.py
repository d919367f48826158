"""Eager kernels and formulations of shape and indexing functions: the
gather kernel for jnp.take's layout along any axis, static takes as one
slice/broadcast/gather (delete, repeat), size-1 dimension insertion as a view
at any size, jnp.pad with a callable, and stacking the rows of one array -
values against the impls and NumPy, and the primitives they bind."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core.avals import ShapedArray
from openjax._src.core.trace import make_plan
from openjax._src.primitives.base import structural
from openjax._src.primitives.index import gather_scatter


@pytest.mark.parametrize("mode", ["clip", "promise_in_bounds", "fill"])
@pytest.mark.parametrize("batch", [(), (4,), (2, 3)])
def test_axis_take_gather_kernel_gives_the_impls_result(mode, batch):
  """jnp.take's layout along a middle or last axis (the index's batch
  dimensions where the axis was: ``take(x, i, axis=1)``, ``x[:, i]``, what
  delete/repeat with static indices bind) runs np.take: the impl's values
  for in-bounds, negative and out-of-bounds indices, every dtype kind."""
  mode = gather_scatter.GatherScatterMode.from_any(mode)
  fill = mode == gather_scatter.GatherScatterMode.FILL_OR_DROP
  rng = np.random.default_rng(1)
  for dt in (np.float32, np.int32, np.bool_, np.complex64):
    for shape, axis in (((3, 4), 1), ((2, 3, 4), 1), ((2, 3, 4), 2), ((2, 5), 1)):
      n = len(batch)
      dn = gather_scatter.GatherDimensionNumbers(
          offset_dims=tuple(range(axis)) + tuple(range(axis + n, len(shape) + n - 1)),
          collapsed_slice_dims=(axis,), start_index_map=(axis,), operand_batching_dims=(),
          start_indices_batching_dims=())
      sizes = tuple(1 if d == axis else shape[d] for d in range(len(shape)))
      params = dict(dimension_numbers=dn, slice_sizes=sizes, unique_indices=False,
                    indices_are_sorted=False, mode=mode,
                    fill_value=(None if not fill else np.array(7, dt).item()))
      x = (np.arange(np.prod(shape)).reshape(shape) % 5).astype(dt)
      idx_shape = batch + (1,)
      kernel = gather_scatter.gather_p.eval_kernel(
          ShapedArray(x.shape, x.dtype), ShapedArray(idx_shape, np.dtype(np.int32)), **params)
      assert kernel is not None
      for idx in (np.zeros(idx_shape, np.int32), np.full(idx_shape, shape[axis] - 1),
                  np.full(idx_shape, -1), np.full(idx_shape, shape[axis] + 2),
                  rng.integers(-2, shape[axis] + 2, idx_shape)):
        idx = np.ascontiguousarray(idx, np.int32)
        got = kernel(x, idx)
        want = gather_scatter.gather_p.impl(x, idx, **params)[0]
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_static_takes_are_one_slice_broadcast_or_gather():
  """delete/repeat with static indices bind one primitive: a (strided)
  slice, a broadcast of a repeated index, or a gather, with NumPy's values."""
  x = np.arange(24, dtype=np.float32).reshape(4, 6)
  cases = [(lambda v: jnp.delete(v, slice(None, None, 2)),
            lambda v: np.delete(v, slice(None, None, 2)), "slice"),
           (lambda v: jnp.delete(v, np.array([0, 2, 3]), axis=1),
            lambda v: np.delete(v, [0, 2, 3], axis=1), "gather"),
           (lambda v: jnp.delete(v, np.array([0]), axis=0),
            lambda v: np.delete(v, [0], axis=0), "slice"),
           (lambda v: jnp.repeat(v, np.array([0, 3, 0, 0]), axis=0),
            lambda v: np.repeat(v, [0, 3, 0, 0], axis=0), "broadcast_in_dim"),
           (lambda v: jnp.repeat(v, np.array([2, 0, 1, 1, 0, 3]), axis=1),
            lambda v: np.repeat(v, [2, 0, 1, 1, 0, 3], axis=1), "gather")]
  for fun, ref, prim in cases:
    np.testing.assert_array_equal(fun(x), ref(x))
    eqns = jax.make_jaxpr(fun)(x).jaxpr.eqns
    assert [e.primitive.name for e in eqns][-1] == prim
    assert len([e for e in eqns if e.primitive.name in ("slice", "concatenate")]) <= 1


def test_new_unit_dimensions_are_a_view_at_any_size():
  """broadcast_in_dim that only inserts size-1 dimensions (expand_dims,
  atleast_2d, keepdims) plans the lean index kernel at every size (1e6
  elements included: the plan samples those at size 1), giving the impl's
  values as a view; real broadcasts and 0-d identities keep their paths."""
  prim = structural.broadcast_in_dim_p
  for shape_in, shape, dims in [((1000, 1000), (1, 1000, 1000, 1), (1, 2)),
                                ((6,), (6, 1), (0,)), ((), (1, 1), ()),
                                ((0, 3), (0, 1, 3), (0, 2)), ((2, 3), (1, 2, 1, 3), (1, 3))]:
    x = np.arange(int(np.prod(shape_in)), dtype=np.int32).reshape(shape_in)
    params = dict(shape=shape, broadcast_dimensions=dims, sharding=None)
    kernel, lean = make_plan(prim, [ShapedArray(x.shape, x.dtype)], params)[:2]
    assert lean
    got = kernel(x)
    want = prim.impl(x, **params)[0]
    assert got.shape == want.shape == shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert np.shares_memory(got, x) or x.size == 0
  got = lax.expand_dims(jnp.asarray(np.ones((1000, 1000), np.float32)), (0, -1))
  assert got.shape == (1, 1000, 1000, 1)
  kernel = prim.eval_kernel(ShapedArray((3, 1), np.dtype(np.float32)), shape=(3, 4),
                            broadcast_dimensions=(0, 1), sharding=None)
  np.testing.assert_array_equal(kernel(np.ones((3, 1), np.float32)), np.ones((3, 4)))


def test_pad_callable_one_vmapped_call_per_axis():
  # As JAX's apply_along_axis: func runs once per axis on a batch of vectors
  # (not once per vector), with NumPy's values; kwargs reach it.
  calls = []

  def fill(v, width, axis, kwargs):
    calls.append(axis)
    lo, hi = width
    inner = lax.slice_in_dim(v, lo, v.shape[0] - hi)
    return lax.pad(inner, np.float32(kwargs["base"] + axis), [(lo, hi, 0)])

  def np_fill(vector, width, axis, kwargs):
    vector[:width[0]] = kwargs["base"] + axis
    if width[1]:
      vector[-width[1]:] = kwargs["base"] + axis

  x = np.random.default_rng(5).standard_normal((3, 4, 5)).astype(np.float32)
  widths = ((1, 2), (0, 1), (2, 0))
  got = jnp.pad(x, widths, mode=fill, base=10.)
  np.testing.assert_array_equal(got, np.pad(x, widths, mode=np_fill, base=10.))
  assert calls == [0, 1, 2]
  empty = jnp.pad(np.zeros((0, 3), np.float32), 1, mode=fill, base=0.)
  assert empty.shape == (2, 5)


@pytest.mark.parametrize("shape", [(3,), (2, 3), (2, 3, 4), (2, 1, 3, 2), (4, 0)])
def test_stacking_one_array_stacks_its_rows(shape):
  # vstack/hstack/dstack of one array treat its rows as the inputs (NumPy's
  # iteration), made at least 2-/1-/3-D together: one expand_dims and one
  # reshape, whatever the number of rows.
  x = np.arange(int(np.prod(shape)), dtype=np.int32).reshape(shape)
  for fun, ref in ((jnp.vstack, np.vstack), (jnp.hstack, np.hstack), (jnp.dstack, np.dstack),
                   (jnp.column_stack, np.column_stack)):
    got = fun(x)
    want = ref(x)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    eqns = jax.make_jaxpr(fun)(x).jaxpr.eqns
    assert len(eqns) <= 2, [e.primitive.name for e in eqns]


def test_pad_is_one_staged_program_as_in_jax():
  # JAX 0.10.2: make_jaxpr(lambda x: jnp.pad(x, 2))(f32[3]).
  expected = """\
{ lambda ; a:f32[3]. let
    b:f32[7] = jit[
      name=_pad
      jaxpr={ lambda ; a:f32[3] c:i32[]. let
          d:f32[] = convert_element_type[new_dtype=float32 weak_type=False] c
          b:f32[7] = pad[padding_config=((2, 2, 0),)] a d
        in (b,) }
    ] a 0:i32[]
  in (b,) }"""
  assert str(jax.make_jaxpr(lambda x: jnp.pad(x, 2))(np.ones(3, np.float32))) == expected
  # Every mode: the eager call (a cached program; constant/empty bind lax.pad
  # directly) gives the jitted call's values and NumPy's.
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  widths = ((2, 1), (0, 3))
  for kw in [{}, dict(constant_values=((1, 2), (3, 4))), dict(mode="edge"),
             dict(mode="wrap"), dict(mode="reflect", reflect_type="odd"),
             dict(mode="symmetric"), dict(mode="maximum", stat_length=2),
             dict(mode="mean"), dict(mode="linear_ramp", end_values=((5, -2), (1, 0)))]:
    eager = jnp.pad(x, widths, **kw)
    jitted = jax.jit(lambda v, kw=kw: jnp.pad(v, widths, **kw))(x)
    np.testing.assert_array_equal(eager, jitted)
    np.testing.assert_allclose(eager, np.pad(x, widths, **kw), rtol=1e-6, atol=1e-6)
