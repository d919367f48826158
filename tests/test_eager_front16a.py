"""Session 16's eager front ends of joins, repeat, tile, reshape(order="F"),
meshgrid and full/full_like with an Array fill: eager calls of several
primitives run as one library program (no bind through the eval trace on a
repeated call). Each is checked against the op-by-op path (``disable_jit``:
the program's function itself) and a compiled ``jit`` call: values (bits),
dtypes, weak types, shapes, errors; and with the debugging flags on (the
programs fall back to their function, which must not re-enter them)."""
import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core.trace import EvalTrace
from tests.test_eager_floor import _same

_RNG = np.random.default_rng(16)


def _a(shape, dtype=np.float32):
  dt = np.dtype(dtype)
  if dt.kind == "b":
    return jnp.asarray(_RNG.random(shape) > 0.5)
  if dt.kind in "iu":
    return jnp.asarray(_RNG.integers(0 if dt.kind == "u" else -5, 6, shape).astype(dt))
  if dt.kind == "c":
    return jnp.asarray((_RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)).astype(dt))
  v = _RNG.standard_normal(shape).astype(np.float32)
  if v.size >= 3:
    v.reshape(-1)[:3] = [np.nan, -0.0, np.inf]
  return jnp.asarray(v.astype(dt))


_F = _a((2, 3))
_G = _a((2, 1))
_V = _a((3,))
_I = _a((3,), np.int32)
_I2 = _a((3, 2), np.int32)
_B = _a((2, 3), bool)
_H = _a((2, 3), np.float16)
_BF = _a((2, 3), ml_dtypes.bfloat16)
_C = _a((2, 3), np.complex64)
_S = jnp.asarray(np.float32(-0.0))
_W = jnp.asarray(2.5)                        # weakly typed, 0-d
_WV = jax.lax.broadcast(_W, (3,))            # a weakly typed vector
_E = _a((0, 3))
_NAN = jnp.asarray(np.float32(np.nan))
_BIG = jnp.asarray(np.float32(3e9))

_CASES = [
    ("concatenate promote", lambda x, y: jnp.concatenate((x, y)), (_I, _V)),
    ("concatenate bool int", lambda x, y: jnp.concatenate((x, y), axis=-1), (_B, _I2[:2])),
    ("concatenate none", lambda x, y: jnp.concatenate([x, y], axis=None), (_F, _V)),
    ("concatenate an array", lambda x: jnp.concatenate(x, axis=1), (_a((3, 2, 2), np.int32),)),
    ("concatenate dtype", lambda x, y: jnp.concatenate([x, y], dtype=jnp.int32), (_V, _I)),
    ("concatenate dtype bf16", lambda x, y: jnp.concatenate([x, y], 0, jnp.bfloat16), (_F, _H)),
    ("concatenate weak strong", lambda x, y: jnp.concatenate([x, y]), (_WV, _V.astype(jnp.float16))),
    ("concatenate complex", lambda x, y: jnp.concatenate([x, y], 1), (_C, _F)),
    ("concatenate empty", lambda x, y: jnp.concatenate([x, y]), (_E, _H)),
    ("stack casts", lambda x, y: jnp.stack((x, y), axis=-1), (_I, _V > 0)),
    ("stack an array", lambda x: jnp.stack(x, axis=1), (_F,)),
    ("stack dtype", lambda x, y: jnp.stack([x, y], dtype=jnp.float16), (_F, _F)),
    ("vstack", lambda x, y: jnp.vstack([x, y]), (_V, _F)),
    ("vstack an array", jnp.vstack, (_I2,)),
    ("vstack dtype", lambda x, y: jnp.vstack([x, y], jnp.int8), (_V, _F)),
    ("hstack", lambda x, y: jnp.hstack([x, y]), (_F, _G)),
    ("hstack 0-d", lambda x, y: jnp.hstack((x, y)), (_I, _S)),
    ("dstack", lambda x, y: jnp.dstack([x, y]), (_F, _B)),
    ("column_stack", lambda x, y: jnp.column_stack([x, y]), (_I, _I2)),
    ("column_stack an array", jnp.column_stack, (_F,)),
    ("repeat", lambda x: jnp.repeat(x, 2), (_F,)),
    ("repeat axis", lambda x: jnp.repeat(x, 3, axis=-1), (_I2,)),
    ("repeat zero", lambda x: jnp.repeat(x, 0, axis=0), (_F,)),
    ("repeat 0-d", lambda x: jnp.repeat(x, 3), (_S,)),
    ("repeat counts", lambda x: jnp.repeat(x, np.array([0, 2, 1]), axis=1), (_C,)),
    ("repeat counts total", lambda x: jnp.repeat(x, np.array([2, 1, 0]), total_repeat_length=6),
     (_I,)),
    ("repeat total truncates", lambda x: jnp.repeat(x, 2, axis=0, total_repeat_length=3),
     (_V > 0,)),
    ("repeat uint8 counts", lambda x: jnp.repeat(x, np.array([1, 3], np.uint8), axis=0), (_BF,)),
    ("repeat method", lambda x: x.repeat(2), (_WV,)),
    ("reshape F", lambda x: jnp.reshape(x, (3, 2), order="F"), (_F,)),
    ("ravel F", lambda x: jnp.ravel(x, order="F"), (_C,)),
    ("ravel F empty", lambda x: jnp.ravel(x, order="F"), (_E,)),
    ("tile new axes", lambda x: jnp.tile(x, (2, 1, 2)), (_I,)),
    ("tile 0-d", lambda x: jnp.tile(x, (2, 2)), (_S,)),
    ("tile zero", lambda x: jnp.tile(x, (0, 1, 1)), (_F,)),
    ("meshgrid", lambda x, y: jnp.meshgrid(x, y), (_V, _I)),
    ("meshgrid ij sparse", lambda x, y, z: jnp.meshgrid(x, y, z, indexing="ij", sparse=True),
     (_V, _I, _WV)),
    ("meshgrid one", lambda x: jnp.meshgrid(x), (_V,)),
    ("full 0-d fill int", lambda v: jnp.full((2,), v, dtype=jnp.int32), (_a((), np.float32),)),
    ("full nan to int", lambda v: jnp.full((2,), v, dtype=jnp.int32), (_NAN,)),
    ("full saturates", lambda v: jnp.full(3, v, jnp.uint8), (_BIG,)),
    ("full negative zero", lambda v: jnp.full((2, 2), v), (_S,)),
    ("full weak", lambda v: jnp.full((3,), v), (_W,)),
    ("full weak f16", lambda v: jnp.full((3,), v, jnp.float16), (_W,)),
    ("full array fill", lambda v: jnp.full((2, 3), v), (_V,)),
    ("full array fill bool", lambda v: jnp.full((2, 3), v, dtype=jnp.complex64), (_V > 0,)),
    ("full_like array fill", lambda x, v: jnp.full_like(x, v), (_F, _I)),
    ("full_like array fill shape", lambda x, v: jnp.full_like(x, v, shape=(4, 3)), (_B, _V)),
    ("eye numpy offset", lambda k: jnp.eye(3, 4, k=k), (np.int32(1),)),
    ("eye array offset", lambda k: jnp.eye(3, k=k, dtype=jnp.int8), (jnp.asarray(np.int32(-2)),)),
    ("eye far offset", lambda k: jnp.eye(2, 3, k=k, dtype=bool), (np.int64(-7),)),
    ("eye uint8 offset", lambda k: jnp.eye(3, k=k, dtype=jnp.bfloat16), (np.uint8(1),)),
    ("tri numpy offset", lambda k: jnp.tri(3, 4, k=k, dtype=jnp.int32), (np.int32(-1),)),
    ("tri array offset", lambda k: jnp.tri(3, k=k), (jnp.asarray(np.int32(2)),)),
    ("tri empty", lambda k: jnp.tri(0, 3, k=k, dtype=jnp.float16), (np.int16(1),)),
    ("diagflat", lambda v: jnp.diagflat(v, -1), (_a((2, 2)),)),
    ("diagflat weak 0-d", lambda v: jnp.diagflat(v, 2), (_W,)),
    ("diagflat complex", lambda v: jnp.diagflat(v), (_C,)),
    ("insert", lambda x: jnp.insert(x, 1, 9), (_I,)),
    ("insert indices", lambda x, v: jnp.insert(x, np.array([3, 0, 3]), v), (_V, _V)),
    ("insert axis", lambda x, v: jnp.insert(x, -1, v, axis=1), (_F, _a((2,)))),
    ("insert slice", lambda x: jnp.insert(x, slice(0, 2), 0.5, axis=0), (_F,)),
    ("insert negative zero", lambda x: jnp.insert(x, 2, -0.0), (_V,)),
    ("insert nan", lambda x: jnp.insert(x, np.int64(0), float("nan")), (_H,)),
    ("insert complex", lambda x: jnp.insert(x, 1, 1 - 2j, axis=1), (_C,)),
    ("insert numpy value", lambda x: jnp.insert(x, 0, np.float16(-0.0)), (_BF,)),
    ("insert weak", lambda x: jnp.insert(x, 1, 7), (_WV,)),
    ("delete", lambda x: jnp.delete(x, 1), (_I,)),
    ("delete indices", lambda x: jnp.delete(x, np.array([0, 2]), axis=1), (_F,)),
    ("delete slice", lambda x: jnp.delete(x, slice(None, None, 2)), (_B,)),
    ("delete mask", lambda x: jnp.delete(x, np.array([True, False, True]), axis=0), (_a((3, 2)),)),
    ("delete empty", lambda x: jnp.delete(x, np.array([], np.int32)), (_C,)),
    ("array_equal", jnp.array_equal, (_I, _I + 0)),
    ("array_equal promote", jnp.array_equal, (_I, _a((3,)))),
    ("array_equal nan", lambda a, b: jnp.array_equal(a, b, equal_nan=True), (_F, _F + 0)),
    ("array_equal nan unequal", jnp.array_equal, (_F, _F + 0)),
    ("array_equal complex nan", lambda a, b: jnp.array_equal(a, b, True), (_C, _C * 1)),
    ("array_equal empty", jnp.array_equal, (_E, _E + 1)),
    ("full_like 0-d fill", lambda x, v: jnp.full_like(x, v, shape=(2, 2)), (_V, _a(()))),
    ("full_like nan to uint8", lambda x, v: jnp.full_like(x, v), (_a((3,), np.uint8), _NAN)),
    ("full_like negative zero", lambda x, v: jnp.full_like(x, v), (_V, _S)),
    ("full_like of a weak array", lambda x, v: jnp.full_like(x, v), (_WV, _a(()))),
    ("full_like weak fill f16", lambda x, v: jnp.full_like(x, v, dtype=jnp.float16), (_V, _W)),
    ("full_like saturates int8", lambda x, v: jnp.full_like(x, v, dtype=jnp.int8), (_V, -_BIG)),
    ("full_like complex", lambda x, v: jnp.full_like(x, v, dtype=jnp.complex64), (_B, _S)),
    ("block", lambda a, b: jnp.block([[a, b], [b, a]]), (_a((2, 2)), _a((2, 2), np.int32))),
    ("block 1-d", lambda a, b: jnp.block([a, b, a]), (_I, _V)),
    ("block rank", lambda a, b: jnp.block([[a], [b]]), (_V, _F)),
    ("block weak", lambda a, b: jnp.block([[a, b]]), (_WV, _a((3,), np.float16))),
    ("block 3 deep", lambda a: jnp.block([[[a, a]], [[a, a]]]), (_C,)),
    ("block one", lambda a: jnp.block([a]), (_S,)),
    ("full_like weak array fill", lambda x, v: jnp.full_like(x, v, dtype=jnp.bfloat16), (_I, _WV)),
]


def _count_binds(monkeypatch) -> list:
  """The names of the primitives bound through the eval trace from now on."""
  calls = []
  original = EvalTrace.process_primitive

  def counting(self, primitive, *rest):
    calls.append(primitive.name)
    return original(self, primitive, *rest)
  monkeypatch.setattr(EvalTrace, "process_primitive", counting)
  return calls


@pytest.mark.parametrize("name,f,args", _CASES, ids=[c[0] for c in _CASES])
def test_eager_program_is_the_op_by_op_result(name, f, args):
  got = f(*args)
  _same(f(*args), got)   # the cached program, run again
  with jax.disable_jit():
    _same(got, f(*args))


@pytest.mark.parametrize("name,f,args", _CASES, ids=[c[0] for c in _CASES])
def test_compiled_values_agree(name, f, args):
  got, want = jax.jit(f)(*args), f(*args)
  leaves_g, leaves_w = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
  for g, w in zip(leaves_g, leaves_w):
    assert g.dtype == w.dtype and g.shape == w.shape
    wide = np.complex128 if g.dtype.kind == "c" else np.float64   # (bfloat16 NaNs compare)
    np.testing.assert_array_equal(np.asarray(g).astype(wide), np.asarray(w).astype(wide))


@pytest.mark.parametrize("name,f,args", _CASES, ids=[c[0] for c in _CASES])
def test_a_repeated_eager_call_binds_nothing(name, f, args, monkeypatch):
  # One library program: its kernels run without a bind each.
  f(*args)
  calls = _count_binds(monkeypatch)
  f(*args)
  assert calls == []


@pytest.mark.parametrize("name,f,args", _CASES, ids=[c[0] for c in _CASES])
def test_debugging_flags_run_the_function(name, f, args):
  # The programs fall back to their function with a debugging flag on (it
  # must not call the program again), and find no NaN in these operands'
  # results unless they hold one.
  want = f(*args)
  with jax.debug_infs(False), jax.debug_nans(False), jax.disable_jit():
    _same(f(*args), want)
  has_nan = any(np.isnan(np.asarray(a, np.complex128)).any() for a in args)
  if not has_nan:
    with jax.debug_nans(True):
      _same(f(*args), want)


def test_one_bind_joins_stay_binds(monkeypatch):
  # A concatenate or stack of Arrays of one dtype is its one bind (a program
  # would cost more).
  x, y = _a((2, 3)), _a((1, 3))
  x0, y0 = x[0], y[0]
  calls = _count_binds(monkeypatch)
  jnp.concatenate([x, y])
  jnp.stack([x, x])
  jnp.concatenate([x0, y0], axis=None)
  jnp.tile(x, (2, 2))
  assert calls == ["concatenate", "stack", "concatenate", "tile"]


@pytest.mark.parametrize("f,error,match", [
    (lambda: jnp.repeat(_V, np.array([1, -1, 2])), ValueError, "may not contain negative"),
    (lambda: jnp.repeat(_V, np.array([1.0, 2.0, 3.0])), TypeError, "must be integers"),
    (lambda: jnp.repeat(_V, -1), ValueError, "may not contain negative"),
    (lambda: jnp.concatenate([_F, _V]), TypeError, "concatenate"),
    (lambda: jnp.concatenate([_F, _I], axis=2), np.exceptions.AxisError, "out of bounds"),
    (lambda: jnp.stack([_F, _I]), ValueError, "same shape"),
    (lambda: jnp.vstack([_F, _a((2, 2))]), TypeError, "concatenate"),
    (lambda: jnp.meshgrid(_F, _V), ValueError, "must be 1D"),
    (lambda: jnp.meshgrid(_V, indexing="xx"), ValueError, "Valid values for indexing"),
    (lambda: jnp.full((2, 2), _V), ValueError, "broadcast"),
    (lambda: jnp.tile(_V, (2, -1)), ValueError, "nonnegative"),
    (lambda: jnp.reshape(_F, (4, 2), order="F"), TypeError, "cannot reshape"),
    (lambda: jnp.insert(_V, 2, 2 ** 40), OverflowError, "too large"),
    (lambda: jnp.block([[_F], _F]), ValueError, "Mismatched list depths"),
    (lambda: jnp.block([_F, []]), ValueError, "empty list"),
    (lambda: jnp.block([_F, _a((1, 2))]), TypeError, "Cannot concatenate"),
    (lambda: jnp.insert(_V, np.array([[1]]), 1.0), ValueError, "one-dimensional"),
    (lambda: jnp.delete(_V, 7), np.exceptions.AxisError, "out of bounds"),
    (lambda: jnp.delete(_V, np.array([1.5])), ValueError, "must be integer or bool"),
    (lambda: jnp.delete(_V, np.array([True])), ValueError, "boolean indices"),
])
def test_errors_are_the_op_by_op_errors(f, error, match):
  with pytest.raises(error, match=match) as eager:
    f()
  with jax.disable_jit(), pytest.raises(error) as op_by_op:
    f()
  assert str(eager.value).split("\n")[0] == str(op_by_op.value).split("\n")[0]


@pytest.mark.parametrize("shape,axis", [((3, 2), 0), ((2, 3), -1), ((40, 5), 0), ((2, 0), 0),
                                        ((4, 3, 2), 1)])
def test_unstack_slices(shape, axis):
  x = _a(shape)
  got = jnp.unstack(x, axis=axis)
  assert type(got) is tuple and len(got) == shape[axis]
  want = np.moveaxis(np.asarray(x), axis, 0)
  for g, w in zip(got, want):
    assert type(g) is jax.Array and g.dtype == x.dtype and not g.weak_type
    assert np.asarray(g).tobytes() == w.tobytes()
    assert not np.asarray(g).flags.writeable
  traced = jax.jit(lambda x: jnp.unstack(x, axis=axis))(x)
  for g, t in zip(got, traced):
    np.testing.assert_array_equal(np.asarray(g), np.asarray(t))


def test_unstack_of_a_weak_array_stays_weak():
  for t in jnp.unstack(jax.lax.broadcast(_W, (3, 2))):
    assert t.weak_type and t.dtype == _W.dtype


def test_jaxprs_are_unchanged():
  # Traced calls stage JAX's equations as before (the programs are eager only).
  assert str(jax.make_jaxpr(lambda x: jnp.repeat(x, 2))(_V)).count("broadcast_in_dim") == 1
  jaxpr = str(jax.make_jaxpr(lambda x, y: jnp.concatenate([x, y]))(_I, _V))
  assert "convert_element_type" in jaxpr and "concatenate" in jaxpr and "jit" not in jaxpr
  jaxpr = str(jax.make_jaxpr(lambda x, y: jnp.vstack([x, y]))(_V, _F))
  # (JAX's atleast_2d jit, shared: tests/jaxpr_cases_ops.py holds the text)
  assert "name=atleast_2d" in jaxpr and "concatenate" in jaxpr
  jaxpr = str(jax.make_jaxpr(lambda v: jnp.full((2,), v, dtype=jnp.int32))(_S))
  assert "jit" not in jaxpr and "convert_element_type" in jaxpr


def test_unstack_makes_each_slice_once(monkeypatch):
  # The slices are lax.unstack's results as they are (a per-slice as_array
  # cost ~0.4 us a slice: 1732 slices at 1e6 elements) and the eval trace
  # makes multiple results without a call per result.
  from openjax._src.core import trace
  from openjax._src.numpy import shape_joining

  def fail(*args):
    raise AssertionError("a call per slice")
  x = _a((5, 2))
  monkeypatch.setattr(shape_joining, "as_array", fail)
  monkeypatch.setattr(trace, "_concrete_result", fail)
  got = jnp.unstack(x)
  assert len(got) == 5 and all(np.asarray(g).tobytes() == np.asarray(x)[i].tobytes()
                               for i, g in enumerate(got))


@pytest.mark.parametrize("f", [
    lambda: jnp.full((2,), _S, dtype=np.float64),
    lambda: jnp.vstack([_V, _F], dtype=np.int64),
    lambda: jnp.stack([_V, _V], dtype=np.complex128),
    lambda: jnp.eye(3, k=np.int32(1), dtype=np.float64),
    lambda: jnp.tri(3, k=np.int32(1), dtype=np.uint64),
])
def test_truncation_warnings_on_every_call(f):
  # Without x64 a 64-bit dtype warns on each call (a program would warn once,
  # at its trace): those calls keep the op-by-op path.
  for _ in range(2):
    with pytest.warns(UserWarning, match="truncated"):
      f()


@pytest.mark.parametrize("shape,reps,dtype", [
    ((3,), (2,), np.int32), ((1, 1, 3), (2, 1, 2), np.float32), ((2, 2), (1, 2), np.uint32),
    ((2, 3), (3, 1), ml_dtypes.bfloat16), ((1, 1), (2, 2), bool), ((2, 0), (2, 3), np.float32),
    ((2, 3), (1, 1), np.float16), ((40, 30), (2, 2), np.float32), ((2, 3), (0, 2), np.int8),
    ((2,), (1000,), np.complex64), ((2, 2), (16, 16), np.float32)])
def test_tile_kernel_is_the_impl(shape, reps, dtype):
  # Small tiles by one np.concatenate per repeated axis: the impl's bits.
  from openjax._src.primitives.shape.shape import _tile_eval_kernel, _tile_impl
  from openjax._src.core.avals import ShapedArray
  v = np.asarray(_a(shape, dtype))
  got = jax.lax.tile(jnp.asarray(v), reps)
  want = _tile_impl(v, reps=reps)[0]
  assert got.shape == want.shape and got.dtype == want.dtype
  assert np.asarray(got).tobytes() == want.tobytes()
  kernel = _tile_eval_kernel(ShapedArray(shape, np.dtype(dtype)), reps=reps)
  if shape == (1, 1, 3):
    assert kernel is not None and kernel(v).tobytes() == want.tobytes()
  if reps in ((1000,), (1, 1), (0, 2)):
    assert kernel is None
  wide = np.complex128 if want.dtype.kind == "c" else np.float64   # (bfloat16 NaNs compare)
  np.testing.assert_array_equal(
      np.asarray(jax.jit(lambda x: jax.lax.tile(x, reps))(v)).astype(wide), want.astype(wide))


def test_block_traced_is_jaxs_jit():
  jaxpr = str(jax.make_jaxpr(lambda a, b: jnp.block([[a, b], [b, a]]))(_F, _F))
  assert "name=block" in jaxpr and jaxpr.count("concatenate") == 3
