"""Eager ``x[idx]`` and ``x.at[idx]`` with host index values plan their gather
once per index structure (numpy/index_plans.py) and rebuild only the index
values per call: every outcome (values, dtype, weak type, shape, error) must
equal the general path's (parse -> to_gather per call), on the call that
makes the plan and on later calls with other values of the same structure;
traced indices keep the general path and its jaxprs."""
import contextlib
import gc
import warnings
import weakref

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import lax
from openjax._src.numpy import index_plans

SHAPE = (4, 5, 6)


@contextlib.contextmanager
def _general_path():
  """No eager key for any index: every call parses and plans from scratch."""
  with pytest.MonkeyPatch.context() as patch:
    patch.setattr(index_plans, "eager_index_key", lambda idx: None)
    yield


def _outcome(fn, *args):
  try:
    with warnings.catch_warnings():
      warnings.simplefilter("ignore")
      r = fn(*args)
  except Exception as e:  # noqa: BLE001 - the error is compared
    return ("error", type(e).__name__, str(e))
  return (r.dtype, r.weak_type, r.shape, np.asarray(r).tobytes())


def _ints(rng, shape, lo, hi, dtype=np.int32):
  return rng.integers(lo, hi, size=shape).astype(dtype)


def _mask(rng, shape, count=None):
  m = np.zeros(int(np.prod(shape)), bool)
  m[rng.permutation(m.size)[:count if count is not None else m.size // 2]] = True
  return m.reshape(shape)


# Index makers: each call draws new values of one structure (same shapes,
# dtypes, mask True counts); values run out of bounds on both sides.
INDEX_MAKERS = {
    "array": lambda r: _ints(r, (3,), -8, 8),
    "array_2d": lambda r: _ints(r, (2, 3), -4, 4),
    "separated": lambda r: (_ints(r, (2, 1), -4, 4), slice(None), _ints(r, (3,), -6, 6)),
    "adjacent": lambda r: (slice(None), _ints(r, (2, 1), -5, 5), _ints(r, (3,), -6, 6)),
    "array_strided_slice": lambda r: (_ints(r, (2,), -4, 4), slice(None, None, -2)),
    "slices_around": lambda r: (slice(1, 3), _ints(r, (2,), 0, 5), slice(None, None, 2)),
    "int_and_array": lambda r: (1, _ints(r, (2,), -5, 5)),
    "scalar_array_and_array": lambda r: (np.asarray(r.integers(-4, 4), np.int32),
                                         _ints(r, (3,), -5, 5)),
    "scalar_array": lambda r: np.asarray(r.integers(-6, 6), np.int32),
    "scalar_arrays_and_slice": lambda r: (slice(1, None), np.asarray(r.integers(-7, 7), np.int64),
                                          np.asarray(r.integers(0, 8), np.uint8)),
    "scalar_array_int_newaxis": lambda r: (None, 2, np.asarray(r.integers(-6, 6), np.int16),
                                           slice(None, None, -1)),
    "openjax_scalar": lambda r: (Ellipsis, jnp.asarray(int(r.integers(-7, 7)))),
    "uint8": lambda r: _ints(r, (4,), 0, 7, np.uint8),
    "int8_broadcast": lambda r: (Ellipsis, _ints(r, (2, 1), -6, 6, np.int8),
                                 _ints(r, (3,), -6, 6, np.int16)),
    "int64": lambda r: _ints(r, (3,), -4, 4, np.int64),
    "same_array_twice": lambda r: (lambda i: (i, i))(_ints(r, (3,), -4, 4)),
    "openjax_array": lambda r: jnp.asarray(_ints(r, (3,), -4, 4)),
    "int_list": lambda r: ([int(v) for v in r.integers(-4, 4, size=4)],),
    "newaxis": lambda r: (None, _ints(r, (2,), -4, 4), Ellipsis, None),
    "mask": lambda r: _mask(r, (4,)),
    "mask_2d": lambda r: _mask(r, (4, 5)),
    "mask_last": lambda r: (Ellipsis, _mask(r, (6,), 2)),
    "mask_and_array": lambda r: (_mask(r, (4,), 2), slice(None), _ints(r, (2,), -6, 6)),
    "mask_all_false": lambda r: _mask(r, (4, 5), 0),
    "scalar_bool": lambda r: (True, 1),
    "scalar_false": lambda r: (False, _ints(r, (2,), 0, 4)),
    "numpy_bool_scalar": lambda r: (np.bool_(True), _ints(r, (2,), 0, 4)),
    "empty_array": lambda r: np.zeros((0,), np.int32),
    "bad_mask_shape": lambda r: _mask(r, (3,)),
    "float_array": lambda r: r.random(3).astype(np.float32),
    "too_many": lambda r: (0, 0, 0, _ints(r, (2,), 0, 2)),
    "incompatible": lambda r: (_ints(r, (2,), 0, 4), _ints(r, (3,), 0, 5)),
}


def _operand(dtype=np.float32, weak=False):
  x = np.arange(np.prod(SHAPE)).reshape(SHAPE).astype(dtype) - 7
  return lax._convert_element_type(x, dtype, weak)


def _check(fn, x, make, calls=3):
  """Each call's outcome on a new draw, through the plans and the general path."""
  index_plans._EAGER_PLANS.clear()
  for k in range(calls):
    idx = make(np.random.default_rng(k))
    with _general_path():
      want = _outcome(fn, x, idx)
    assert _outcome(fn, x, idx) == want, (k, idx)


@pytest.mark.parametrize("name", sorted(INDEX_MAKERS))
@pytest.mark.parametrize("mode", [None, "clip", "fill"])
def test_getitem_equals_the_general_path(name, mode):
  make = INDEX_MAKERS[name]
  _check(lambda x, i: x[i], _operand(), make)
  _check(lambda x, i: x.at[i].get(mode=mode, fill_value=-1 if mode == "fill" else None),
         _operand(np.int8), make)
  _check(lambda x, i: x.at[i].get(mode=mode, wrap_negative_indices=False), _operand(np.uint16),
         make)


@pytest.mark.parametrize("name", sorted(INDEX_MAKERS))
@pytest.mark.parametrize("op", ["set", "add", "min", "max", "multiply", "divide"])
def test_updates_equal_the_general_path(name, op):
  make = INDEX_MAKERS[name]
  for mode in (None, "clip", "drop"):
    _check(lambda x, i: getattr(x.at[i], op)(np.float32(2.5), mode=mode), _operand(), make)
  weak = _operand(np.int32, weak=True)
  assert weak.weak_type
  _check(lambda x, i: getattr(x.at[i], op)(3), weak, make)
  _check(lambda x, i: getattr(x.at[i], op)(7, wrap_negative_indices=False), _operand(np.uint8),
         make)


def test_update_values_broadcast_and_warn_as_before():
  x, make = _operand(np.int32), INDEX_MAKERS["adjacent"]
  for k in range(3):
    idx = make(np.random.default_rng(k))
    u = np.random.default_rng(k).random((4, 2, 3)).astype(np.float32)
    with _general_path():
      want = _outcome(lambda: x.at[idx].add(u))
    assert _outcome(lambda: x.at[idx].add(u)) == want
    with pytest.warns(FutureWarning, match="scatter inputs have incompatible types"):
      x.at[idx].set(u)


def test_plans_are_made_once_per_structure(monkeypatch):
  made = []
  plan = index_plans._eager_plan
  monkeypatch.setattr(index_plans, "_eager_plan",
                      lambda *a: made.append(a[2]) or plan(*a))
  index_plans._EAGER_PLANS.clear()
  x = _operand()
  for k in range(5):
    r = np.random.default_rng(k)
    x[_ints(r, (3,), -4, 4)]
    x[:, _ints(r, (2, 1), 0, 5), _ints(r, (3,), 0, 6)]
    x.at[_ints(r, (3,), -4, 4)].add(1.0)
    x[_mask(r, (4, 5), 7)]
    x[1:, np.asarray(r.integers(-4, 4))]
  assert len(made) == 5   # one plan per structure: later calls hit
  x[_ints(np.random.default_rng(0), (4,), 0, 4)]           # another shape: a new plan
  x[_mask(np.random.default_rng(0), (4, 5), 8)]            # another True count
  x[np.int64([1, 2, 3])]                                   # another dtype
  assert len(made) == 8


def test_plan_indices_are_not_shared_between_calls():
  x = _operand()
  index_plans._EAGER_PLANS.clear()
  first = x[np.array([0, 1])]
  second = x[np.array([3, 2])]
  np.testing.assert_array_equal(np.asarray(first), np.asarray(x)[[0, 1]])
  np.testing.assert_array_equal(np.asarray(second), np.asarray(x)[[3, 2]])
  np.testing.assert_array_equal(np.asarray(x[np.array([0, 1])]), np.asarray(first))


def test_traced_indices_keep_the_general_path_and_jaxpr():
  x = _operand()
  fns = [lambda x, i: x[i], lambda x, i: x[:, i, ::2], lambda x, i: x.at[i].add(1.0),
         lambda x, i: x.at[i, 1:].set(2.0, mode="drop")]
  i = np.array([0, -1, 2], np.int32)
  for fn in fns:
    with _general_path():
      want_jaxpr = str(jax.make_jaxpr(fn)(x, i))
      want = _outcome(jax.jit(fn), x, i)
    assert str(jax.make_jaxpr(fn)(x, i)) == want_jaxpr
    assert _outcome(jax.jit(fn), x, i) == want
    assert _outcome(fn, x, i) == want
    g = jax.grad(lambda x: fn(x, i).sum())(x)
    with _general_path():
      np.testing.assert_array_equal(np.asarray(g),
                                    np.asarray(jax.grad(lambda x: fn(x, i).sum())(x)))


def test_index_values_are_not_modified():
  i = np.array([-1, 0, -2], np.int32)
  i.setflags(write=False)
  x = _operand()
  for _ in range(2):
    x[i]
    x.at[i].set(0.0)
  np.testing.assert_array_equal(i, [-1, 0, -2])


def test_host_indices_under_transforms_give_the_same_jaxprs():
  x = _operand()
  fns = [lambda x: x[np.array([0, -1])], lambda x: x[:, np.array([[1], [4]]), np.array([0, 5])],
         lambda x: x.at[np.array([1, -1])].add(2.0), lambda x: x[np.arange(4) % 2 == 0],
         lambda x: x[jnp.asarray(2)], lambda x: x[1:, np.asarray(-1, np.int64), 2]]
  for fn in fns:
    with _general_path():
      want_jaxpr = str(jax.make_jaxpr(fn)(x))
      want_vmap = _outcome(jax.vmap(fn), jnp.stack([x, x + 1]))
    assert str(jax.make_jaxpr(fn)(x)) == want_jaxpr
    assert _outcome(jax.vmap(fn), jnp.stack([x, x + 1])) == want_vmap


def test_plans_keep_no_index_values():
  x = _operand()
  index_plans._EAGER_PLANS.clear()
  for make in (lambda: np.array([0, -1, 2]), lambda: (slice(None), np.array([[1], [2]]), 1)):
    idx = make()
    x[idx]
    x.at[idx].add(1.0)
    arrays = [e for e in (idx if type(idx) is tuple else (idx,)) if type(e) is np.ndarray]
    refs = [weakref.ref(a) for a in arrays]
    del idx, arrays
    gc.collect()
    assert all(r() is None for r in refs)
  assert len(index_plans._EAGER_PLANS) == 4
