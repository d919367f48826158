"""Eval kernels and impl fast paths behind eager library calls (bincount,
lexsort, unique, gcd, median, erfc): each must give the bits of the general
impl it stands in for (decision 12), and be chosen where it applies."""
import math

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.core.avals import ShapedArray
from openjax._src.core.program import program_of
from openjax._src.core.trace import make_plan
from openjax._src.primitives.base import convert, structural
from openjax._src.primitives.elementwise import arithmetic, special_numerics
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.index.indexing_util import GatherScatterMode, ScatterDimensionNumbers
from openjax._src.primitives.sort.sort import _sort_impl

_FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16)]
_NARROW_INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                      np.uint32)]
_EDGES = np.array([np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 0.99, -0.99, 127.5,
                   128, -128.7, -129, 255.9, 256, 2.0**31, -2.0**31 - 1, 65535.7, 65536, 1e30,
                   -1e30, 3.7, -3.7])


def _aval(x: np.ndarray) -> ShapedArray:
  return ShapedArray(x.shape, x.dtype)


def _lean_kernel(p, operands, **params):
  """The lean kernel the eval trace plans for ``operands`` (asserting there is one)."""
  kernel, lean, *_ = make_plan(p, [_aval(x) for x in operands], params)
  assert lean, f"{p.name}: no eval kernel for {[_aval(x).str_short() for x in operands]}"
  return kernel


def _same_bits(a, b) -> None:
  a, b = np.asarray(a), np.asarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


# ------------------------------------------------------------ float -> int
@pytest.mark.parametrize("src", _FLOATS, ids=str)
@pytest.mark.parametrize("dst", _NARROW_INTS, ids=str)
def test_float_to_int_kernel_saturates_like_the_impl(src, dst):
  rng = np.random.default_rng(0)
  wide = rng.standard_normal(200) * 10.0 ** rng.integers(0, 12, 200)
  with np.errstate(over="ignore"):   # float16 and bfloat16 round the large ones to inf
    samples = (_EDGES.astype(src), wide.astype(src), np.array(np.nan).astype(src),
               np.array(3.9).astype(src))
  for x in samples:
    params = dict(new_dtype=dst, weak_type=False, sharding=None)
    kernel = _lean_kernel(convert.convert_element_type_p, [x], **params)
    with np.errstate(all="ignore"):
      _same_bits(kernel(x), convert.convert_numpy(x, dst))


def test_float_to_int64_keeps_the_impl():
  # float64 cannot hold int64's bounds: the impl's saturation path decides.
  x = np.array([2.0**63, -2.0**64, np.nan], np.float64)
  _, lean, *_ = make_plan(convert.convert_element_type_p, [_aval(x)],
                          dict(new_dtype=np.dtype(np.int64), weak_type=False, sharding=None))
  assert not lean
  np.testing.assert_array_equal(convert.convert_numpy(x, np.int64), [2**63 - 1, -2**63, 0])


# ---------------------------------------------------------------- scatter
_SCATTERS = [gather_scatter.scatter_add_p, gather_scatter.scatter_sub_p,
             gather_scatter.scatter_mul_p, gather_scatter.scatter_min_p,
             gather_scatter.scatter_max_p]
_MODES = [GatherScatterMode.FILL_OR_DROP, GatherScatterMode.CLIP,
          GatherScatterMode.PROMISE_IN_BOUNDS]


def _scatter_cases(dt, rng):
  """(operand, indices, updates, dimension numbers) of point scatters."""
  def draw(*shape):
    v = (rng.standard_normal(shape) * 3).astype(dt)
    if dt.kind == "f":
      v.reshape(-1)[::7] = np.nan   # NaNs and repeated indices: the order of application shows
    return v
  matrix = draw(6, 3)
  return [
      (draw(16), rng.integers(-3, 20, (40, 1)).astype(np.int32), draw(40),
       ScatterDimensionNumbers((), (0,), (0,))),                       # bincount
      (matrix, rng.integers(-2, 8, (2, 5, 1)).astype(np.int64), draw(2, 5, 3),
       ScatterDimensionNumbers((2,), (0,), (0,))),                     # x.at[rows].add
      (matrix, rng.integers(-1, 4, (4, 1)).astype(np.uint32), draw(4, 6),
       ScatterDimensionNumbers((1,), (1,), (1,))),                     # x.at[:, cols].add
      (matrix, np.stack([rng.integers(-1, 7, 9), rng.integers(0, 4, 9)], 1).astype(np.int32),
       draw(9), ScatterDimensionNumbers((), (0, 1), (0, 1))),          # x.at[i, j].add
  ]


@pytest.mark.parametrize("p", _SCATTERS, ids=lambda p: p.name)
@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.float32, np.float64, np.int32,
                                                      np.uint8, np.int8, np.float16)], ids=str)
def test_scatter_ufunc_kernel_matches_the_impl(p, dt):
  rng = np.random.default_rng(1)
  for operand, indices, updates, dn in _scatter_cases(dt, rng):
    for mode in _MODES:
      params = dict(dimension_numbers=dn, indices_are_sorted=False, unique_indices=False,
                    mode=mode, update_jaxpr=None, update_consts=())
      kernel = _lean_kernel(p, [operand, indices, updates], **params)
      with np.errstate(all="ignore"):
        _same_bits(kernel(operand, indices, updates),
                   p.impl(operand, indices, updates, **params)[0])


def test_bincount_and_at_add_eagerly():
  x = jnp.asarray(np.array([3, 6, 1, 3, 0, 19, 3], np.int32))
  np.testing.assert_array_equal(jnp.bincount(x, length=8), np.bincount(np.asarray(x))[:8])
  w = np.array([0.1, 1e8, -1e8, 0.2, np.nan, 1.0, 0.3], np.float32)
  got = jnp.zeros(8, np.float32).at[x].add(w)
  want = np.zeros(8, np.float32)
  np.add.at(want, np.asarray(x)[np.asarray(x) < 8], w[np.asarray(x) < 8])   # in order
  _same_bits(got, want)


# ------------------------------------------------------------------- iota
@pytest.mark.parametrize("dt", [np.dtype(t) for t in (np.int32, np.uint8, np.float32, np.bool_,
                                                      np.int64, ml_dtypes.bfloat16)], ids=str)
def test_small_iota_kernel_matches_the_impl(dt):
  for n in (0, 1, 10, 300):
    params = dict(dtype=dt, shape=(n,), dimension=0, sharding=None)
    kernel = _lean_kernel(structural.iota_p, [], **params)
    _same_bits(kernel(), structural.iota_p.impl(**params)[0])


# ------------------------------------------------------------------- sort
@pytest.mark.parametrize("dts", [(np.int32, np.int32, np.int32), (np.float32, np.int32),
                                 (np.float16, np.float32), (ml_dtypes.bfloat16, np.int32),
                                 (np.complex64, np.int32), (np.bool_, np.float64)],
                         ids=lambda d: "-".join(np.dtype(t).name for t in d))
def test_sort_of_vectors_matches_the_general_path(dts):
  # 1-d operands take a plain lexsort and take; a leading size-1 axis the
  # general path (moved axes, take_along_axis): the results must agree.
  rng = np.random.default_rng(2)
  ops = []
  for dt in dts:
    v = rng.integers(-3, 4, 40).astype(np.float64)
    v[::5], v[1::7] = np.nan, -0.0
    if np.dtype(dt).kind in "iub":
      v = np.nan_to_num(v)
    ops.append((v + 1j * v[::-1]).astype(dt) if np.dtype(dt).kind == "c" else v.astype(dt))
  for num_keys in range(1, len(ops) + 1):
    flat = _sort_impl(*ops, dimension=0, is_stable=True, num_keys=num_keys)
    rows = _sort_impl(*[o[None] for o in ops], dimension=1, is_stable=True, num_keys=num_keys)
    for a, b in zip(flat, rows):
      _same_bits(a, b[0])


def test_lexsort_eagerly():
  a = np.array([3, 1, 3, 2, 1, 3], np.int32)
  b = np.array([0, 2, 1, 0, 1, 0], np.int32)
  np.testing.assert_array_equal(jnp.lexsort((jnp.asarray(a), jnp.asarray(b))),
                                np.lexsort((a, b)))


# -------------------------------------------------------------------- rem
@pytest.mark.parametrize("dt", [np.int8, np.uint8, np.int32, np.int64], ids=str)
def test_integer_rem_by_zero_keeps_the_dividend(dt):
  info = np.iinfo(dt)
  x = np.array([7, -7 if info.min < 0 else 9, info.min, info.max, 0], dt)
  for y in (np.array([3, 2, 5, 4, 1], dt), np.array([0, 3, 0, 2, 0], dt)):
    got = arithmetic._rem(x, y)
    with np.errstate(all="ignore"):
      want = np.where(y == 0, x, np.fmod(x, np.where(y == 0, 1, y)))
    _same_bits(got, want)
  np.testing.assert_array_equal(jnp.gcd(jnp.asarray(np.array([12, 0, 21], np.int32)),
                                        jnp.asarray(np.array([18, 5, 0], np.int32))),
                                [6, 5, 21])


# --------------------------------------------------------------- erf, erfc
def test_erf_erfc_impls_are_accurate_and_odd():
  x = np.concatenate([np.linspace(-6, 6, 2001), [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 1e-300]])
  erf, erfc = special_numerics.erf(x), special_numerics.erfc(x)
  for v, e, c in zip(x, erf, erfc):
    assert math.isclose(e, math.erf(v), rel_tol=1e-14, abs_tol=1e-300)
    assert math.isclose(c, math.erfc(v), rel_tol=1e-13, abs_tol=1e-300)
  _same_bits(special_numerics.erf(-x), -erf)   # the series sums |x|: sign put back exactly
  assert math.copysign(1.0, special_numerics.erf(np.array(-0.0))) == -1.0


def test_erf_erfc_edge_values():
  x = np.array([np.nan, np.inf, -np.inf, 30.0, -30.0])
  np.testing.assert_array_equal(special_numerics.erf(x), [np.nan, 1, -1, 1, -1])
  np.testing.assert_array_equal(special_numerics.erfc(x), [np.nan, 0, 2, 0, 2])
  for f in (special_numerics.erf, special_numerics.erfc):
    assert f(np.zeros(0)).shape == (0,)
    assert f(np.array(0.7)).shape == ()
  # Elements on one side of the split give what they give among the other side's.
  near, far = np.array([0.3, -1.2]), np.array([2.0, -3.0])
  both = special_numerics.erfc(np.concatenate([near, far]))
  _same_bits(both[2:], special_numerics.erfc(far))


# ------------------------------------------------- constant steps, folded
def test_program_folds_steps_of_literals_once():
  def f(x):
    zeros = lax.broadcast_in_dim(np.float32(0), x.shape, ())   # a literal broadcast
    ramp = lax.iota(np.int32, 5)                               # no operands at all
    return lax.select(x > 1, x, zeros), ramp + 1
  x = np.array([0.5, 2.0, 1.5, -1.0, 3.0], np.float32)
  closed = jax.make_jaxpr(f)(x)
  program = program_of(closed.jaxpr)
  names = [e.primitive.name for e in closed.jaxpr.eqns]
  assert "broadcast_in_dim" in names and "iota" in names
  # The broadcast, the iota and the add of the iota to a literal (a chain) fold.
  assert len(program.kernel_steps) == len(program.steps) - 3
  for _ in range(2):   # the folded values are shared by the runs, never written
    sel, ramp = jax.jit(f)(x)
    np.testing.assert_array_equal(sel, np.where(x > 1, x, 0))
    np.testing.assert_array_equal(ramp, np.arange(1, 6))
  run = program.runner(closed.consts)
  for _ in range(2):
    sel, ramp = run([x])
    np.testing.assert_array_equal(sel, np.where(x > 1, x, 0))
    np.testing.assert_array_equal(ramp, np.arange(1, 6))


# -------------------------------------------------------- nanargmax/min
def test_nanargmax_is_jitted_as_in_jax():
  # JAX 0.10.2: ``jit[name=_nanargmax]`` around ne, the -inf select, argmax,
  # reduce_and and the -1 select; eager calls run that program.
  x = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan] * 4, [2.0, 7.0, np.nan, 7.0]], np.float32)
  text = str(jax.make_jaxpr(jnp.nanargmax)(x))
  assert "name=_nanargmax" in text and "argmax[axes=(0,)" in text
  assert "name=_nanargmin" in str(jax.make_jaxpr(lambda v: jnp.nanargmin(v, axis=1))(x))
  np.testing.assert_array_equal(jnp.nanargmax(x, axis=1), [2, -1, 1])
  np.testing.assert_array_equal(jnp.nanargmin(x, axis=1, keepdims=True), [[3], [-1], [0]])
  assert int(jnp.nanargmax(x)) == 9
  np.testing.assert_array_equal(jnp.nanargmax(np.array([[4, 9, 9]], np.int32), axis=1), [1])
  with pytest.raises(TypeError, match="nanargmax requires ndarray or scalar arguments"):
    jnp.nanargmax([1.0, np.nan])


def test_unique_sorts_in_a_jit_named_as_in_jax():
  x = np.array([3, 6, 9, 3, 15, 0, 6, 8, 1, 2], np.int32)
  first = jax.make_jaxpr(lambda v: jnp.unique(v, size=8))(x).jaxpr.eqns[0]
  assert first.primitive.name == "jit" and first.params["name"] == "_unique_sorted_mask"
  assert [str(v.aval) for v in first.outvars] == ["int32[10]", "bool[10]", "int32[10]"]
  values, counts = jnp.unique(x, size=8, return_counts=True)
  want_values, want_counts = np.unique(x, return_counts=True)
  np.testing.assert_array_equal(values, want_values)
  np.testing.assert_array_equal(counts, want_counts)
  np.testing.assert_array_equal(jnp.unique(np.array([1.0, np.nan, 1.0, np.nan]), equal_nan=False),
                                [1.0, np.nan, np.nan])


# ------------------------------------------------- reshape of a broadcast
def test_reshape_of_a_last_axis_broadcast_copies_like_numpy():
  x = np.arange(12, dtype=np.float32).reshape(3, 4)
  wide = np.broadcast_to(x[..., None], (3, 4, 5))   # jnp.repeat's broadcast
  for new_sizes in [(60,), (3, 20), (12, 5), (3, 4, 5, 1)]:
    out, = structural.reshape_p.impl(wide, new_sizes=new_sizes, dimensions=None)
    _same_bits(out, np.reshape(wide, new_sizes))
  # A reshape that needs no copy stays a view of the broadcast.
  out, = structural.reshape_p.impl(wide, new_sizes=(12, 5), dimensions=None)
  assert np.shares_memory(out, x) and out.strides[-1] == 0
  np.testing.assert_array_equal(jnp.repeat(jnp.asarray(x), 3), np.repeat(x, 3))


def test_erfc_fraction_in_python_floats_matches_numpy():
  # Up to 12 elements the continued fraction runs in Python floats; the
  # fraction is elementwise, so the same elements among many (NumPy's loop)
  # must give the same bits.
  rng = np.random.default_rng(3)
  # (All past erf's split too, so neither function's series sees them.)
  far = np.concatenate([[2.5, 3.0, 7.25, 26.5, np.inf, np.nan], 2.5 + rng.exponential(2.0, 6)])
  many = np.concatenate([far, 2.5 + rng.exponential(2.0, 100)])
  for f in (special_numerics.erfc, special_numerics.erf):
    for k in (1, 5, 12):
      _same_bits(f(far[:k]), f(many)[:k])
      _same_bits(f(-far[:k]), f(-many)[:k])
