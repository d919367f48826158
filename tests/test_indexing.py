"""Indexing: NumPy equivalence of ``x[idx]`` over many index expressions
(eager, jitted, with traced index arrays), the lowering chosen (slice /
dynamic_slice / gather), ``x.at[]`` modes and dtypes, weak types, general
gather/scatter dimension numbers, and errors."""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.errors import ConcretizationTypeError, NonConcreteBooleanIndexError
from tests.ops.rows_indexing import ref_gather, ref_scatter

GDN, SDN = lax.GatherDimensionNumbers, lax.ScatterDimensionNumbers
X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
MASK = (np.arange(60).reshape(3, 4, 5) % 7) < 3
MASK2 = np.zeros((3, 4), bool)
MASK2[0, 1] = MASK2[1, 3] = MASK2[2, 0] = True

INDICES = [
    0, -1, (1, 2), (1, 2, 3), (-1, -2, -3), np.int32(1), np.int64(-1), np.uint8(2),
    np.array(1), (np.array(2), 1),
    slice(None), slice(1, None), slice(None, 2), slice(None, None, -1), slice(None, None, 2),
    (slice(1, 3), slice(None, None, -2)), slice(-100, 100), slice(5, 1, -1), slice(3, 0, -2),
    (slice(None), slice(3, None, -3), slice(-2, None)), slice(0, 0), slice(2, 1),
    Ellipsis, (Ellipsis, 0), (0, Ellipsis), (Ellipsis, None), (None, Ellipsis, None, 1),
    (1, None, 2), None, (None, None), (0, Ellipsis, 4, None),
    np.array([0, 2]), np.array([[0], [2]]), np.array([-1, 0, 1]), ([0, 2],), ([0, 1], [1, 2]),
    (np.array([0, 2]), slice(None), np.array([1, 4])), (slice(None), [1, 3], [0, 4]),
    (slice(None), np.array([[1], [3]]), np.array([0, 4])), (0, slice(None), np.array([1, 2])),
    (np.array([1, 2]), 1), (Ellipsis, np.array([0, 4])),
    (np.array([0, 1]), Ellipsis, np.array([1, 2])), (np.array([1, 2]), None, np.array([0, 3])),
    (None, np.array([0, 1]), np.array([1, 2])), (slice(None, None, 2), np.array([1, 2])),
    (np.array([0, 1]), slice(None, None, -1), np.array([2, 3])),
    (np.array([[0, 1], [2, 0]]), np.array([3, -4]), slice(1, 4, 2)),
    (1, np.array([3, 0]), slice(None, None, -2)),
    np.array([True, False, True]), (slice(None), np.array([True, False, True, False])),
    MASK, MASK[:, :, 0], (MASK2, np.array([0, 4, 1])), (Ellipsis, MASK[0, 0]),
    True, False, (True, 0), (None, True), (0, True), (Ellipsis, True), (True, True),
    (np.array([0, 2]), True), (np.bool_(True), slice(1, 2)),
    np.array([], np.int32), ([],), (np.array([], np.int32), slice(None)),
    (slice(None), np.zeros((0, 2), np.int32)), (np.array([False, False, False]),),
]


def _np(x):
  return np.asarray(x)


def _ids(v):
  return repr(v).replace(" ", "")[:60]


@pytest.mark.parametrize("idx", INDICES, ids=_ids)
def test_getitem_matches_numpy(idx):
  expected = X[idx]
  out = jnp.asarray(X)[idx]
  assert isinstance(out, jax.Array)
  assert out.shape == expected.shape and out.dtype == expected.dtype
  np.testing.assert_array_equal(_np(out), expected)
  jitted = jax.jit(lambda x: x[idx])(X)
  np.testing.assert_array_equal(_np(jitted), expected)


def _traced_parts(idx):
  """Split an index into a template and its int/int-array parts, so the
  parts can be passed to a jitted function as traced arguments."""
  parts = idx if isinstance(idx, tuple) else (idx,)
  leaves, template = [], []
  for p in parts:
    if isinstance(p, (int, np.integer)) and not isinstance(p, (bool, np.bool_)) or (
        isinstance(p, np.ndarray) and p.dtype.kind in "iu"):
      template.append(len(leaves))
      leaves.append(np.asarray(p))
    else:
      template.append(("static", p))
  return template, leaves


def _rebuild(template, leaves):
  return tuple(leaves[t] if isinstance(t, int) else t[1] for t in template)


@pytest.mark.parametrize("idx", [i for i in INDICES if _traced_parts(i)[1]], ids=_ids)
def test_getitem_traced_indices_match_numpy(idx):
  template, leaves = _traced_parts(idx)
  expected = X[idx]
  out = jax.jit(lambda x, *ls: x[_rebuild(template, ls)])(X, *leaves)
  assert out.shape == expected.shape
  np.testing.assert_array_equal(_np(out), expected)


@pytest.mark.parametrize("dtype", [np.float16, np.int8, np.uint32, np.bool_, "bfloat16"])
def test_getitem_dtypes(dtype):
  x = (np.arange(12).reshape(3, 4) % 5).astype(jnp.dtype(dtype))
  for idx in [1, (slice(None), -1), np.array([2, 0]), (np.array([1]), slice(None, None, -2)),
              x.astype(bool)]:
    out = jnp.asarray(x)[idx]
    assert out.dtype == x.dtype
    np.testing.assert_array_equal(_np(out).astype(np.float32), x[idx].astype(np.float32))


# ----------------------------------------------------------- lowering chosen
def _prims(f, *args):
  return [e.primitive.name for e in jax.make_jaxpr(f)(*args).jaxpr.eqns]


def test_static_indices_lower_to_slice_and_squeeze():
  x = jnp.asarray(X)
  assert _prims(lambda x: x[1], x) == ["slice", "squeeze"]
  assert _prims(lambda x: x[1:3, ::2], x) == ["slice"]
  assert _prims(lambda x: x[::-1], x) == ["slice", "rev"] or _prims(lambda x: x[::-1], x) == ["rev"]
  assert _prims(lambda x: x[:, None], x) == ["broadcast_in_dim"]
  assert _prims(lambda x: x[...], x) == []
  assert _prims(lambda x: x[:], x) == []


def test_traced_scalar_index_lowers_to_dynamic_slice():
  prims = _prims(lambda x, i: x[i], jnp.asarray(X), np.int32(1))
  assert "dynamic_slice" in prims and "gather" not in prims
  assert prims[-1] == "squeeze"
  prims = _prims(lambda x, i: x[1:3, i], jnp.asarray(X), np.int32(1))
  assert "dynamic_slice" in prims and "gather" not in prims


def test_array_index_lowers_to_gather():
  jaxpr = jax.make_jaxpr(lambda x, i: x[i])(jnp.asarray(X), np.array([0, 2], np.int32))
  (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "gather"]
  assert eqn.params["mode"] == lax.GatherScatterMode.PROMISE_IN_BOUNDS
  assert eqn.params["dimension_numbers"] == GDN(offset_dims=(1, 2), collapsed_slice_dims=(0,),
                                                start_index_map=(0,))
  assert eqn.params["slice_sizes"] == (1, 4, 5)
  assert eqn.params["fill_value"] is None
  assert "gather[" in str(jaxpr)


def test_static_out_of_bounds_index_clamps_like_jax():
  x = jnp.arange(5)
  assert int(x[7]) == 4 and int(x[-9]) == 0
  assert int(jax.jit(lambda x: x[7])(x)) == 4
  np.testing.assert_array_equal(_np(x[np.array([7, -9])]), [4, 0])
  assert "dynamic_slice" in _prims(lambda x: x[7], x)


# ------------------------------------------------------------------- errors
@pytest.mark.parametrize("idx,exc", [
    (1.5, TypeError), ("a", TypeError), ([0, 1], TypeError), ((0, 0, 0, 0), IndexError),
    ((Ellipsis, Ellipsis), IndexError), (object(), IndexError),
    (np.array([1.0]), TypeError), (np.array([True, False]), IndexError),
    ((np.array([0, 1]), np.array([0, 1, 2])), ValueError), ([[0, 1]], TypeError),
])
def test_getitem_errors(idx, exc):
  with pytest.raises(exc):
    jnp.asarray(X)[idx]


def test_list_index_message_names_the_fix():
  with pytest.raises(TypeError, match=r"arr\[array\(seq\)\]"):
    jnp.arange(4)[[0, 1]]
  with pytest.raises(TypeError, match=r"arr\[tuple\(seq\)\]"):
    jnp.arange(4)[[slice(None)]]


def test_traced_boolean_mask_raises():
  x = jnp.arange(4.0)
  with pytest.raises(NonConcreteBooleanIndexError):
    jax.jit(lambda x: x[x > 1])(x)
  with pytest.raises(IndexError):   # it is an IndexError, as in JAX
    jax.jit(lambda x: x.at[x > 1].set(0.0))(x)
  # A concrete mask closed over is fine.
  m = np.array([True, False, True, False])
  np.testing.assert_array_equal(_np(jax.jit(lambda x: x[m])(x)), [0.0, 2.0])


def test_traced_slice_bounds_raise_index_error():
  with pytest.raises(IndexError, match="static start/stop/step"):
    jax.jit(lambda x, i: x[i:])(jnp.arange(4), 1)


def test_setitem_raises():
  x = jnp.arange(3)
  with pytest.raises(TypeError, match=r"\.at\[\]|at\["):
    x[0] = 1


# ------------------------------------------------------------------ weak types
def test_weak_types_follow_the_operand():
  weak = lax.full((4,), 1.0)
  assert weak.weak_type
  assert weak[0].weak_type and weak[1:].weak_type and weak[np.array([0, 1])].weak_type
  assert jax.jit(lambda x, i: x[i])(weak, np.array([0])).weak_type
  assert weak.at[0].set(2.0).weak_type
  strong = jnp.ones(4)
  assert not strong.at[0].set(2.0).weak_type
  assert not strong[np.array([1])].weak_type
  assert not jnp.arange(3)[1].weak_type


# ----------------------------------------------------------------------- .at
def test_at_defaults_reads_clamp_writes_drop():
  x = jnp.arange(5.0)
  assert float(x.at[10].get()) == 4.0
  assert np.isnan(float(x.at[10].get(mode="fill")))
  assert float(x.at[10].get(mode="fill", fill_value=-1)) == -1.0
  np.testing.assert_array_equal(_np(x.at[10].add(10)), _np(x))
  np.testing.assert_array_equal(_np(x.at[20].add(10, mode="clip")), [0, 1, 2, 3, 14])
  np.testing.assert_array_equal(_np(x.at[-1].set(99)), [0, 1, 2, 3, 99])
  np.testing.assert_array_equal(
      _np(x.at[-1].set(99, wrap_negative_indices=False, mode="drop")), _np(x))
  np.testing.assert_array_equal(_np(x.at[np.array([1, 9])].set(7, mode="promise_in_bounds")),
                                [0, 7, 2, 3, 4])


def test_at_get_fill_defaults_by_dtype():
  idx = np.array([0, 9])
  assert np.isnan(_np(jnp.arange(3.0).at[idx].get(mode="fill"))[1])
  assert _np(jnp.arange(3).at[idx].get(mode="fill"))[1] == np.iinfo(np.int32).min
  assert _np(jnp.arange(3, dtype=jnp.uint8).at[idx].get(mode="fill"))[1] == 255
  assert _np(jnp.zeros(3, bool).at[idx].get(mode="fill"))[1]


def test_at_repeated_indices_accumulate():
  x = jnp.zeros(3)
  idx = np.array([0, 0, 2, 0])
  np.testing.assert_array_equal(_np(x.at[idx].add(1.0)), [3, 0, 1])
  np.testing.assert_array_equal(_np(jax.jit(lambda x, i: x.at[i].add(1.0))(x, idx)), [3, 0, 1])
  np.testing.assert_array_equal(_np(jnp.ones(3).at[idx].multiply(2.0)), [8, 1, 2])
  np.testing.assert_array_equal(_np(jnp.ones(3).at[idx].apply(lambda v: v * 3)), [27, 1, 3])


def test_at_update_dtypes_cast_to_operand():
  x = jnp.zeros(3, jnp.int32)
  with pytest.warns(FutureWarning, match="cannot safely cast"):
    out = x.at[0].set(1.7)
  assert out.dtype == jnp.int32 and int(out[0]) == 1
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    assert jnp.zeros(3).at[0].set(jnp.int32(2)).dtype == jnp.float32
    assert jnp.zeros(3, jnp.int8).at[0].set(300).dtype == jnp.int8
  assert jnp.zeros(2, jnp.bfloat16).at[1].add(1.5).dtype == jnp.bfloat16
  out = jnp.arange(4).at[1].divide(2)
  assert out.dtype == jnp.float32
  np.testing.assert_allclose(_np(out), [0, 0.5, 2, 3])


def test_at_scatter_lowering_and_params():
  x = jnp.zeros((3, 4))
  for method, prim in [("set", "scatter"), ("add", "scatter-add"), ("subtract", "scatter-sub"),
                       ("multiply", "scatter-mul"), ("min", "scatter-min"),
                       ("max", "scatter-max")]:
    jaxpr = jax.make_jaxpr(lambda x, i: getattr(x.at[i], method)(1.0))(x, np.array([0, 2]))
    (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name.startswith("scatter")]
    assert eqn.primitive.name == prim
    assert eqn.params["mode"] == lax.GatherScatterMode.FILL_OR_DROP
    assert eqn.params["update_jaxpr"] is None and eqn.params["update_consts"] == ()
  jaxpr = jax.make_jaxpr(lambda x: x.at[0, 1].set(2.0, indices_are_sorted=True))(x)
  (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scatter"]
  assert eqn.params["indices_are_sorted"] and eqn.params["unique_indices"]
  jaxpr = jax.make_jaxpr(lambda x, i: x.at[i].set(2.0, unique_indices=True, mode="clip"))(
      x, np.array([1]))
  (eqn,) = [e for e in jaxpr.jaxpr.eqns if e.primitive.name == "scatter"]
  assert eqn.params["unique_indices"] and eqn.params["mode"] == lax.GatherScatterMode.CLIP


@pytest.mark.parametrize("idx", [
    1, (slice(None), 2), np.array([0, 2]), (np.array([[0], [1]]), np.array([1, 3])),
    (slice(None, None, -1), np.array([0, 3])), (Ellipsis, slice(None, None, 2)), MASK[:, :, 0],
    (None, 1, slice(1, 3)), True, (0, np.array([3, 1]), slice(1, None, 2)),
])
def test_at_set_and_add_match_numpy(idx):
  x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
  shape = x[idx].shape
  vals = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float32).reshape(shape)
  expected = x.copy()
  expected[idx] = vals
  np.testing.assert_array_equal(_np(jnp.asarray(x).at[idx].set(vals)), expected)
  expected = x.copy()
  expected[idx] += vals
  np.testing.assert_array_equal(_np(jnp.asarray(x).at[idx].add(vals)), expected)
  jitted = jax.jit(lambda x, v: x.at[idx].add(v))(x, vals)
  np.testing.assert_array_equal(_np(jitted), expected)


def test_at_set_broadcasts_values_and_rejects_bad_shapes():
  x = jnp.zeros((3, 4))
  np.testing.assert_array_equal(_np(x.at[:, 1].set(np.arange(3.0))[:, 1]), [0, 1, 2])
  np.testing.assert_array_equal(_np(x.at[1].set(np.arange(4.0))[1]), [0, 1, 2, 3])
  with pytest.raises(ValueError):
    x.at[1].set(np.arange(3.0))


def test_at_apply_under_jit_and_repr():
  x = jnp.arange(4.0)
  f = jax.jit(lambda x: x.at[np.array([1, 1, 3])].apply(jnp.negative))
  np.testing.assert_array_equal(_np(f(x)), [0, 1, 2, -3])
  assert "_IndexUpdateRef" in repr(x.at[1]) and "_IndexUpdateHelper" in repr(x.at)


# --------------------------------------------- lax.gather/scatter, general
_GATHER_CASES = [
    # (operand shape, indices, dnums, slice_sizes)
    ((4, 5, 6), np.array([[1, 0], [3, 4], [9, -2]]),
     GDN(offset_dims=(1,), collapsed_slice_dims=(0, 2), start_index_map=(2, 0)), (1, 3, 1)),
    ((3, 4, 5), np.array([[[1], [2]], [[0], [3]]]),
     GDN(offset_dims=(0, 3), collapsed_slice_dims=(1,), start_index_map=(1,)), (2, 1, 4)),
    ((2, 3, 4, 5), np.array([[[1, 2], [0, 0], [2, 3]], [[0, 1], [1, 1], [2, 2]]]),
     GDN(offset_dims=(2,), collapsed_slice_dims=(1, 3), start_index_map=(1, 3),
         operand_batching_dims=(0,), start_indices_batching_dims=(0,)), (1, 1, 4, 1)),
    ((3, 2, 4), np.array([[[0], [3]], [[1], [2]], [[3], [0]]]),
     GDN(offset_dims=(), collapsed_slice_dims=(2,), start_index_map=(2,),
         operand_batching_dims=(0, 1), start_indices_batching_dims=(0, 1)), (1, 1, 1)),
    ((5,), np.zeros((2, 0), np.int32), GDN(offset_dims=(1,), collapsed_slice_dims=(),
                                           start_index_map=()), (3,)),
]


@pytest.mark.parametrize("case", range(len(_GATHER_CASES)))
@pytest.mark.parametrize("mode", ["clip", "fill", "promise_in_bounds"])
def test_gather_general_dimension_numbers(case, mode):
  shape, idx, dn, sizes = _GATHER_CASES[case]
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
  ref_mode = "fill" if mode == "fill" else "clip"
  expected = ref_gather(x, idx, dn, sizes, ref_mode, np.nan)
  out = lax.gather(x, idx.astype(np.int32), dn, sizes, mode=mode)
  np.testing.assert_array_equal(_np(out), expected)
  out = jax.jit(lambda x, i: lax.gather(x, i, dn, sizes, mode=mode))(x, idx.astype(np.int32))
  np.testing.assert_array_equal(_np(out), expected)


_SCATTER_CASES = [
    ((4, 5), np.array([[1, 3], [3, 0], [0, 4], [1, 3]]),
     SDN(update_window_dims=(1,), inserted_window_dims=(1,),
         scatter_dims_to_operand_dims=(1, 0)), (4, 2)),
    ((2, 3, 4), np.array([[[0], [2]], [[1], [3]]]),
     SDN(update_window_dims=(2,), inserted_window_dims=(2,), scatter_dims_to_operand_dims=(2,),
         operand_batching_dims=(0,), scatter_indices_batching_dims=(0,)), (2, 2, 3)),
    ((3, 4), np.array([[0], [2], [-1]]),
     SDN(update_window_dims=(0,), inserted_window_dims=(1,),
         scatter_dims_to_operand_dims=(1,)), (3, 3)),
]


@pytest.mark.parametrize("case", range(len(_SCATTER_CASES)))
@pytest.mark.parametrize("op,combine", [(lax.scatter_add, np.add), (lax.scatter_mul, np.multiply),
                                        (lax.scatter_min, np.minimum),
                                        (lax.scatter_max, np.maximum),
                                        (lax.scatter_sub, np.subtract)])
@pytest.mark.parametrize("mode", ["clip", "drop"])
def test_scatter_general_dimension_numbers(case, op, combine, mode):
  shape, idx, dn, ushape = _SCATTER_CASES[case]
  x = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape) - 5
  u = np.linspace(-3, 3, int(np.prod(ushape)), dtype=np.float32).reshape(ushape)
  expected = ref_scatter(x, idx, u, dn, combine, mode)
  np.testing.assert_allclose(_np(op(x, idx.astype(np.int32), u, dn, mode=mode)), expected)
  out = jax.jit(lambda x, i, u: op(x, i, u, dn, mode=mode))(x, idx.astype(np.int32), u)
  np.testing.assert_allclose(_np(out), expected)


def test_gather_and_scatter_shape_errors():
  x = np.zeros((3, 4), np.float32)
  dn = GDN(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
  with pytest.raises(ValueError, match="integer type"):
    lax.gather(x, np.zeros((2, 1), np.float32), dn, (1, 4))
  with pytest.raises(TypeError, match="collapse slice dims with bound 1"):
    lax.gather(x, np.zeros((2, 1), np.int32), dn, (2, 4))
  with pytest.raises(TypeError, match="start_index_map"):
    lax.gather(x, np.zeros((2, 2), np.int32), dn, (1, 4))
  with pytest.raises(TypeError, match="one slice size for every input dimension"):
    lax.gather(x, np.zeros((2, 1), np.int32), dn, (1,))
  with pytest.raises(TypeError, match="out of range"):
    lax.gather(x, np.zeros((2, 1), np.int32), dn, (1, 5))
  with pytest.raises(TypeError, match="sorted"):
    lax.gather(x, np.zeros((2, 1), np.int32),
               GDN(offset_dims=(1, 0), collapsed_slice_dims=(), start_index_map=(0,)), (1, 4))
  sdn = SDN(update_window_dims=(1,), inserted_window_dims=(0,),
            scatter_dims_to_operand_dims=(0,))
  with pytest.raises(TypeError, match="Updates tensor must be of rank 2"):
    lax.scatter_add(x, np.zeros((2, 1), np.int32), np.zeros(2, np.float32), sdn)
  with pytest.raises(TypeError, match="same dtypes"):
    lax.scatter(x, np.zeros((2, 1), np.int32), np.zeros((2, 4), np.int32), sdn)
  with pytest.raises(TypeError, match="Bounds of the scatter dimensions"):
    lax.scatter(x, np.zeros((2, 1), np.int32), np.zeros((3, 4), np.float32), sdn)
  with pytest.raises(ValueError, match="Unknown gather mode"):
    lax.gather(x, np.zeros((2, 1), np.int32), dn, (1, 4), mode="nearest")


def test_dynamic_slice_errors_and_clamping():
  x = np.arange(10, dtype=np.float32)
  with pytest.raises(TypeError, match="slice_sizes must be less than or equal"):
    lax.dynamic_slice(x, (0,), (11,))
  with pytest.raises(ValueError, match="Length of slice indices"):
    lax.dynamic_slice(x, (0, 0), (2,))
  with pytest.raises(TypeError, match="integers of the same type"):
    lax.dynamic_slice(np.zeros((2, 2)), (np.int32(0), np.int8(0)), (1, 1))
  with pytest.raises(TypeError, match="same dtypes"):
    lax.dynamic_update_slice(x, np.zeros(2, np.int32), (0,))
  with pytest.raises(ValueError, match="allow_negative_indices=False"):
    lax.dynamic_slice(x, (-1,), (2,), allow_negative_indices=False)
  np.testing.assert_array_equal(_np(lax.dynamic_slice(x, (8,), (4,))), x[6:])
  np.testing.assert_array_equal(_np(lax.dynamic_update_slice(x, np.ones(3, np.float32), (9,)))[7:],
                                [1, 1, 1])
  assert lax.dynamic_slice(x, (np.int32(1),), (2,)).dtype == np.float32


def test_gather_scatter_mode_enum():
  M = lax.GatherScatterMode
  assert M.from_any("clip") is M.CLIP and M.from_any(None) is M.FILL_OR_DROP
  assert M.from_any("drop") is M.from_any("fill") is M.FILL_OR_DROP
  assert M.from_any("promise_in_bounds") is M.PROMISE_IN_BOUNDS
  assert str(M.CLIP) == "GatherScatterMode.CLIP"


# ----------------------------------------------------------- index functions
def test_take_modes_and_errors():
  x = jnp.arange(6.0).reshape(2, 3)
  np.testing.assert_array_equal(_np(jnp.take(x, np.array([-1, 5]), axis=1))[:, 0], [2, 5])
  assert np.isnan(_np(jnp.take(x, np.array([5]), axis=1))).all()
  with pytest.raises(NotImplementedError):
    jnp.take(x, np.array([0]), mode="raise")
  with pytest.raises(ValueError, match="Invalid mode"):
    jnp.take(x, np.array([0]), mode="nope")
  with pytest.raises(TypeError, match="take requires ndarray"):
    jnp.take(x, [0, 1])
  with pytest.raises(IndexError, match="empty axis"):
    jnp.take(jnp.zeros((0, 2)), np.array([0]), axis=0)
  assert jnp.take(x, np.zeros((0,), np.int32), axis=0).shape == (0, 3)


def test_take_along_axis_errors_and_modes():
  x = jnp.arange(6.0).reshape(2, 3)
  with pytest.raises(TypeError, match="integer type"):
    jnp.take_along_axis(x, np.zeros((2, 1)), axis=1)
  with pytest.raises(ValueError, match="same number of dimensions"):
    jnp.take_along_axis(x, np.zeros(2, np.int32), axis=1)
  out = jnp.take_along_axis(x, np.array([[5], [-1]]), axis=1, mode="clip")
  np.testing.assert_array_equal(_np(out), [[2], [5]])
  out = jnp.take_along_axis(x, np.array([[7], [1]]), axis=1, mode="one_hot")
  np.testing.assert_array_equal(_np(out), [[0], [4]])


def test_nonzero_family():
  x = np.array([[0, 3, 0], [1, 0, 2]])
  for a, b in zip(jnp.nonzero(x), np.nonzero(x)):
    assert a.dtype == jnp.int32
    np.testing.assert_array_equal(_np(a), b)
  with pytest.raises(ValueError, match="0d arrays"):
    jnp.nonzero(3)
  with pytest.raises(ConcretizationTypeError, match="size argument"):
    jax.jit(jnp.nonzero)(x)
  f = jax.jit(lambda x: jnp.nonzero(x, size=4, fill_value=-1))
  for a, b in zip(f(x), ([0, 1, 1, -1], [1, 0, 2, -1])):
    np.testing.assert_array_equal(_np(a), b)
  f = jax.jit(lambda x: jnp.nonzero(x, size=2))
  for a, b in zip(f(x), ([0, 1], [1, 0])):
    np.testing.assert_array_equal(_np(a), b)
  np.testing.assert_array_equal(_np(jax.jit(lambda x: jnp.argwhere(x, size=4))(x)),
                                [[0, 1], [1, 0], [1, 2], [0, 0]])
  assert jnp.argwhere(0).shape == (0, 0) and jnp.argwhere(5).shape == (1, 0)
  np.testing.assert_array_equal(_np(jnp.flatnonzero(x)), np.flatnonzero(x))
  with pytest.raises(ValueError, match="fill_value must be a scalar"):
    jnp.nonzero(x, size=3, fill_value=(1, 2, 3))


def test_nonzero_x64():
  with jax.enable_x64():
    (i,) = jnp.nonzero(np.array([0, 1, 1]))
    assert i.dtype == jnp.int64
    (i,) = jax.jit(lambda x: jnp.nonzero(x, size=2))(np.array([0, 1, 1]))
    assert i.dtype == jnp.int64
    np.testing.assert_array_equal(_np(i), [1, 2])
    assert jnp.arange(5)[np.array([3])].dtype == jnp.int64


def test_compress_and_extract():
  a = np.arange(12).reshape(3, 4)
  np.testing.assert_array_equal(_np(jnp.compress(np.array([1, 0, 1]), a, axis=0)),
                                np.compress([1, 0, 1], a, axis=0))
  np.testing.assert_array_equal(_np(jnp.compress(np.array([True, True]), a)), [0, 1])
  with pytest.raises(ValueError, match="out of bounds"):
    jnp.compress(np.array([0, 0, 0, 0, 1]), np.arange(4))
  with pytest.raises(ConcretizationTypeError, match="size argument of jnp.compress"):
    jax.jit(lambda c: jnp.compress(c, a, axis=0))(np.array([True, False, True]))
  out = jax.jit(lambda c: jnp.compress(c, a, axis=1, size=3, fill_value=-1))(
      np.array([False, True, False, True]))
  np.testing.assert_array_equal(_np(out), [[1, 3, -1], [5, 7, -1], [9, 11, -1]])
  np.testing.assert_array_equal(_np(jnp.extract(a % 3 == 0, a)), np.extract(a % 3 == 0, a))
  from openjax._src.numpy.indexing import _method_compress
  np.testing.assert_array_equal(_np(_method_compress(jnp.asarray(a), np.array([0, 1]), axis=1)),
                                a[:, 1:2])


def test_choose_and_select():
  a = np.array([0, 1, 2, 1])
  c = [np.arange(4), np.arange(4) * 10, 7]
  np.testing.assert_array_equal(_np(jnp.choose(a, c)), np.choose(a, c))
  with pytest.raises(ValueError, match="invalid entry"):
    jnp.choose(np.array([3]), c)
  with pytest.raises(ConcretizationTypeError, match="mode='raise'"):
    jax.jit(lambda a: jnp.choose(a, c))(a)
  with pytest.raises(ValueError, match="integer typed"):
    jnp.choose(np.array([0.0]), c)
  with pytest.raises(ValueError, match="not understood"):
    jnp.choose(a, c, mode="nope")
  conds = [np.array([True, False, False]), np.array([True, True, False])]
  out = jnp.select(conds, [np.array([1, 2, 3]), 9])
  np.testing.assert_array_equal(_np(out), np.select(conds, [np.array([1, 2, 3]), 9]))
  with pytest.raises(ValueError, match="condlist must have length"):
    jnp.select(conds, [1])
  with pytest.raises(ValueError, match="non-empty"):
    jnp.select([], [])


def test_index_generators():
  for a, b in zip(jnp.tril_indices(4, 1, 3), np.tril_indices(4, 1, 3)):
    np.testing.assert_array_equal(_np(a), b)
  for a, b in zip(jnp.triu_indices_from(np.zeros((3, 5)), -1),
                  np.triu_indices_from(np.zeros((3, 5)), -1)):
    np.testing.assert_array_equal(_np(a), b)
  for a, b in zip(jnp.mask_indices(4, jnp.tril), np.mask_indices(4, np.tril)):
    np.testing.assert_array_equal(_np(a), b)
  with pytest.raises(ValueError, match="2-D"):
    jnp.tril_indices_from(np.zeros(3))
  with pytest.raises(ValueError, match="nonnegative"):
    jnp.diag_indices(-1)
  with pytest.raises(ValueError, match="equal length"):
    jnp.diag_indices_from(np.zeros((2, 3)))
  with pytest.raises(ValueError, match="1-dimensional"):
    jnp.ix_(np.zeros((2, 2), np.int32))
  rows, cols = jnp.ix_(np.array([0, 2]), np.array([1, 3]))
  x = np.arange(16).reshape(4, 4)
  np.testing.assert_array_equal(_np(jnp.asarray(x)[rows, cols]), x[np.ix_([0, 2], [1, 3])])


def test_unravel_and_ravel_multi_index():
  i = np.array([0, 5, 11])
  for a, b in zip(jnp.unravel_index(i, (3, 4)), np.unravel_index(i, (3, 4))):
    np.testing.assert_array_equal(_np(a), b)
  out = jnp.unravel_index(7, (2, 4))
  assert [int(o) for o in out] == [1, 3] and out[0].weak_type
  assert jnp.unravel_index(np.array([1], np.uint8), (2,))[0].dtype == jnp.uint8
  idx = (np.array([0, 2]), np.array([1, 3]))
  np.testing.assert_array_equal(_np(jnp.ravel_multi_index(idx, (3, 4))),
                                np.ravel_multi_index(idx, (3, 4)))
  with pytest.raises(ValueError, match="invalid entry"):
    jnp.ravel_multi_index((np.array([3]), np.array([0])), (3, 4))
  with pytest.raises(ConcretizationTypeError):
    jax.jit(lambda i, j: jnp.ravel_multi_index((i, j), (3, 4)))(*idx)
  with pytest.raises(ValueError, match="invalid mode"):
    jnp.ravel_multi_index(idx, (3, 4), mode="nope")
  with pytest.raises(TypeError, match="only int indices"):
    jnp.ravel_multi_index((np.array([0.0]), np.array([0])), (3, 4), mode="clip",
                          dtype=jnp.int32)
  with pytest.raises(ValueError, match="not an integer type"):
    jnp.ravel_multi_index((np.array([0.0]), np.array([0])), (3, 4), mode="clip")
