"""Buffer donation: a donated input's buffer holds a matching output (it is
written in place), the donated Array is deleted, buffers other Arrays can
see are never overwritten, and unusable donations warn like JAX."""
import warnings

import numpy as np
import pytest

import openjax as jax
from openjax._src.config import config
from tests.test_compiler import add, iree_executor, mul, t_reduce_sum

f32 = np.float32


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "openjax_cache"):
    yield


def _buffer_id(a):
  return a._buffer.ref()


def _computed(v):
  """An Array produced by a compiled call (not yet mapped to NumPy)."""
  return jax.jit(lambda x: add(x, x))(np.asarray(v, f32) / 2)


step = jax.jit(lambda p, g: add(p, mul(g, g)), donate_argnums=0)


def test_donated_buffer_is_reused_and_the_array_deleted():
  p = _computed(np.arange(4))
  g = np.ones(4, f32)
  before = _buffer_id(p)
  out = step(p, g)
  assert p.is_deleted()
  assert _buffer_id(out) == before          # the output lives in p's buffer
  np.testing.assert_array_equal(np.asarray(out), np.arange(4) + 1)
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    np.asarray(p)
  with pytest.raises(RuntimeError, match="Array has been deleted"):
    step(p, g)


def test_training_loop_updates_in_place():
  p = _computed(np.zeros(3))
  g = jax.device_put(np.full(3, 2, f32))
  first = _buffer_id(p)
  for _ in range(10):
    p = step(p, g)
  assert _buffer_id(p) == first
  np.testing.assert_array_equal(np.asarray(p), np.full(3, 40, f32))


def test_numpy_backed_donation_copies_and_deletes():
  p = jax.device_put(np.arange(3, dtype=f32))
  view = np.asarray(p)
  out = step(p, np.ones(3, f32))
  assert p.is_deleted()
  np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
  np.testing.assert_array_equal(view, [0, 1, 2])     # the old view is untouched


def test_materialized_array_is_not_overwritten():
  p = _computed(np.arange(3))
  view = np.asarray(p)            # someone holds a view of the buffer
  out = step(p, np.ones(3, f32))
  np.testing.assert_array_equal(view, [0, 1, 2])
  np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])


def test_shared_buffers_are_not_overwritten():
  x = _computed(np.arange(3))
  y = jax.jit(lambda v: v)(x)      # IREE returns x's own buffer for y
  assert _buffer_id(y) == _buffer_id(x)
  out = step(y, np.ones(3, f32))
  np.testing.assert_array_equal(np.asarray(x), [0, 1, 2])
  np.testing.assert_array_equal(np.asarray(out), [1, 2, 3])
  a, b = jax.jit(lambda v: (add(v, v), add(v, v)))(np.arange(3, dtype=f32))
  out = step(a, np.ones(3, f32))
  np.testing.assert_array_equal(np.asarray(b), [0, 2, 4])
  np.testing.assert_array_equal(np.asarray(out), [1, 3, 5])


def test_donated_input_read_by_other_outputs():
  # The tied output is written only after every read of the donated input.
  f = jax.jit(lambda x, y: (add(x, y), mul(x, y), t_reduce_sum.bind1(x, axes=(0,))),
              donate_argnums=0)
  x = _computed(np.arange(8))
  y = np.full(8, 2, f32)
  s, m, r = f(x, y)
  np.testing.assert_array_equal(np.asarray(s), np.arange(8) + 2)
  np.testing.assert_array_equal(np.asarray(m), np.arange(8) * 2)
  assert float(r) == 28.0


def test_donate_argnames_and_pytrees():
  f = jax.jit(lambda params, scale: {k: mul(v, scale[k]) for k, v in params.items()},
              donate_argnames="params")
  params = {"w": _computed(np.ones(2)), "b": _computed(np.ones(3))}
  scale = {"w": np.full(2, 3, f32), "b": np.full(3, 4, f32)}
  out = f(params, scale)
  assert params["w"].is_deleted() and params["b"].is_deleted()
  np.testing.assert_array_equal(np.asarray(out["w"]), [3, 3])
  np.testing.assert_array_equal(np.asarray(out["b"]), [4, 4, 4])


def test_unusable_donation_warns_and_keeps_the_array():
  f = jax.jit(lambda x: t_reduce_sum.bind1(x, axes=(0,)), donate_argnums=0)
  x = _computed(np.arange(4))
  with pytest.warns(UserWarning, match=r"Some donated buffers were not usable: "
                                       r"ShapedArray\(float32\[4\]\)"):
    out = f(x)
  assert not x.is_deleted()
  assert float(out) == 6.0
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    f(x)                             # warned once, at lowering


def test_donated_python_scalars_and_numpy_inputs_are_copied():
  inc = jax.jit(lambda x, one: add(x, one), donate_argnums=0)
  assert float(inc(1.0, 1.0)) == 2.0
  assert float(inc(1.0, 1.0)) == 2.0        # a cached scalar buffer was not overwritten
  big = np.arange(100000, dtype=f32)
  out = inc(big, np.ones_like(big))
  np.testing.assert_array_equal(big, np.arange(100000, dtype=f32))
  np.testing.assert_array_equal(np.asarray(out), big + 1)


def test_donation_module_text():
  text = step.lower(np.ones(3, f32), np.ones(3, f32)).as_text()
  assert "iree.abi.output = 0 : index" in text
  assert "stablehlo.optimization_barrier" in text


def test_interpreter_executor_ignores_donation():
  old = config.read("openjax_executor")
  config.update("openjax_executor", "interpreter")
  try:
    p = jax.device_put(np.ones(2, f32))
    out = step(p, np.ones(2, f32))
    np.testing.assert_array_equal(np.asarray(out), [2, 2])
  finally:
    config.update("openjax_executor", old)


def test_donating_the_same_array_twice_raises_jax_runtime_error():
  f = jax.jit(lambda a, b: add(a, b), donate_argnums=(0, 1))
  x = _computed(np.arange(4))
  with pytest.raises(jax.errors.JaxRuntimeError, match="donate the same buffer twice"):
    f(x, x)
  assert not x.is_deleted()          # nothing ran, nothing was consumed
  np.testing.assert_array_equal(np.asarray(x), np.arange(4, dtype=f32))


def test_donated_array_also_read_in_the_same_call_raises():
  f = jax.jit(lambda a, b: add(a, b), donate_argnums=(0,))
  x = _computed(np.arange(4))
  with pytest.raises(jax.errors.JaxRuntimeError, match="donated in the same call"):
    f(x, x)
  y = _computed(np.arange(4))
  np.testing.assert_array_equal(np.asarray(f(y, x)), 2 * np.arange(4, dtype=f32))


def test_repr_of_a_deleted_array_raises():
  x = _computed(np.arange(3))
  x.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    repr(x)
  assert issubclass(jax.errors.JaxRuntimeError, RuntimeError)
