"""jit's interpreted tier after ``DIRECT_AFTER_CALLS`` calls
(``api/jit_tiers.InterpretedExecutable``): the program as one generated
function, Arrays in and Arrays out (``core/program_codegen.direct_runner``);
the same kernels on the same values, so the same bits, dtypes and weak types
as the calls before it; committed arguments, non-Array arguments and the
debugging flags take the general way."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.api import jit_tiers
from openjax._src.api.jit_tiers import InterpretedExecutable
from openjax._src.core.array import Array

f32, i32 = np.float32, np.int32

X = np.array([-3.5, -0.0, 0.0, 1e-30, 2.5, np.inf, np.nan, 7.25], f32)
Y = np.array([2.0, -1.5, 0.0, 3.0, -0.5, 1.0, 2.0, np.inf], f32)
N = np.array([-7, 0, 5, 2**31 - 1, -2**31, 3, 9, -1], i32)
BIG = np.linspace(-2, 2, 4096, dtype=f32)

PROGRAMS = [
    ("scalar_mul_add", lambda x, y: x * y + 1, (f32(2.0), f32(3.0))),
    ("constant", lambda x: jnp.sin(x) * 2.0 + jnp.asarray([1, 2, 3, 4, 5, 6, 7, 8], f32), (X,)),
    ("two_results", lambda n: jnp.divmod(n, 3), (N,)),
    ("frexp", lambda x: jnp.frexp(x), (X,)),        # a step with several results
    ("identity_result", lambda x, y: (x, x + y), (X, Y)),
    ("constant_result", lambda x: (x * 2, jnp.float32(7.0)), (X,)),
    ("weak_scalar", lambda x: x * 2 + 1, (f32(3.0),)),
    ("int_clip", lambda n: jnp.clip(n, -3, 3), (N,)),
    ("released", lambda x: jnp.tanh(jnp.sinh(x) * 2.0 + jnp.cosh(x)), (BIG,)),
    ("no_inputs", lambda: jnp.arange(3.0) * 2, ()),
    ("cast", lambda x: lax.convert_element_type(x, i32) + 1, (X[:4],)),
]


def _bits(outs):
  return [(np.asarray(o).dtype, np.asarray(o).shape, np.asarray(o).tobytes(), o.weak_type)
          for o in outs]


def _executable(fun, args):
  closed = jax.make_jaxpr(fun)(*args)
  return InterpretedExecutable(closed, "f"), [jnp.asarray(a) for a in args]


@pytest.mark.parametrize("name,fun,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_direct_calls_give_the_evaluators_bits(monkeypatch, name, fun, args):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 3)
  ex, arrays = _executable(fun, args)
  before = [_bits(ex.execute(arrays)) for _ in range(2)]
  assert ex.direct is None
  ex.execute(arrays)
  assert ex.direct is not None   # generated on the third call
  after = [_bits(ex.execute(arrays)) for _ in range(2)]
  assert after == before
  want = [np.asarray(o) for o in jax.tree_util.tree_leaves(fun(*arrays))]
  for got, w in zip(ex.execute(arrays), want):
    assert type(got) is Array
    np.testing.assert_array_equal(np.asarray(got), w)


def test_direct_results_are_read_only(monkeypatch):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 1)
  ex, arrays = _executable(lambda x, y: (x, x * y), (X, Y))
  ex.execute(arrays)
  same, prod = ex.execute(arrays)
  with pytest.raises(ValueError):
    np.asarray(prod)[0] = 1.0
  with pytest.raises(ValueError):
    np.asarray(same)[0] = 1.0
  np.testing.assert_array_equal(np.asarray(arrays[0]), X)   # the input untouched


def test_committed_and_non_array_arguments_take_the_general_way(monkeypatch):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 1)
  ex, arrays = _executable(lambda x, y: x * y + 1, (X, Y))
  ex.execute(arrays)
  assert ex.direct is not None
  device = jax.devices()[0]
  committed = [jax.device_put(a, device) for a in arrays]
  out, = ex.execute(committed)
  assert out.committed and out.devices() == {device}
  np.testing.assert_array_equal(np.asarray(out), X * Y + f32(1))
  out, = ex.execute([X, Y])   # NumPy arguments
  np.testing.assert_array_equal(np.asarray(out), X * Y + f32(1))
  out, = ex.execute(arrays)
  assert not out.committed


def test_debug_nans_after_the_direct_function_is_made(monkeypatch):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 1)
  ex, arrays = _executable(lambda x: jnp.log(x) * 2.0, (np.array([1.0, 2.0], f32),))
  ex.execute(arrays)
  assert ex.direct is not None
  bad = [jnp.asarray(np.array([1.0, -1.0], f32))]
  assert np.isnan(np.asarray(ex.execute(bad)[0])[1])
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError, match="log"):
      ex.execute(bad)


def test_a_deleted_argument_raises(monkeypatch):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 1)
  ex, arrays = _executable(lambda x: x + 1, (X,))
  ex.execute(arrays)
  gone = jnp.asarray(X) + 0
  gone.delete()
  with pytest.raises(RuntimeError, match="deleted"):
    ex.execute([gone])


def test_floating_point_warnings_stay_off_and_the_state_is_restored(monkeypatch):
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 1)
  ex, arrays = _executable(lambda x, y: x / y, (X, Y))
  ex.execute(arrays)
  with np.errstate(all="raise"):
    out, = ex.execute(arrays)   # 0/0 and x/inf: no FloatingPointError
    with pytest.raises(FloatingPointError):
      np.float32(1.0) / np.float32(0.0)
  with np.errstate(all="ignore"):
    want = X / Y
  np.testing.assert_array_equal(np.asarray(out), want)


def test_long_programs_stay_interpreted(monkeypatch):
  from openjax._src.core import program
  monkeypatch.setattr(jit_tiers, "DIRECT_AFTER_CALLS", 2)
  monkeypatch.setattr(program, "COMPILE_MAX_STEPS", 3)
  ex, arrays = _executable(lambda x: jnp.tanh(jnp.sin(x) * 2.0 + 1.0) - x, (X,))
  outs = [_bits(ex.execute(arrays)) for _ in range(5)]
  assert ex.direct is None and outs[0] == outs[-1]
  with np.errstate(all="ignore"):
    want = np.tanh(np.sin(X) * f32(2) + f32(1)) - X
  np.testing.assert_array_equal(np.asarray(ex.execute(arrays)[0]), want)
