"""Repeated eager reductions take their plan's shortest path
(numpy/reductions.py): a plan of one operation binds its reducer directly,
a plan of several operations without a mask calls its program with the
operand alone (the library call's fast path, no key built), and cumsum /
cumprod with an int axis bind their one operation from one plan lookup.
The results keep the op-by-op bits, dtypes and weak types (also of weakly
typed, empty and 0-d operands), and traced calls stage the same equations."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api import eager_call
from openjax._src.numpy import reductions


def _same(a, b) -> None:
  assert type(a) is type(b)
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                np.asarray(b).reshape(-1).view(np.uint8))


_RNG = np.random.default_rng(11)
_F = _RNG.standard_normal((3, 4)).astype(np.float32)
_F[0, 1], _F[1, 2], _F[2, 0] = np.nan, -0.0, np.inf
_B = _RNG.random((3, 4)) > 0.5
_I = _RNG.integers(-5, 6, (3, 4)).astype(np.int32)


def _weak_row():
  return jnp.broadcast_to(2.5, (4,))   # a weakly typed f32[4]


_CALLS = [
    ("sum f32 axis", lambda: jnp.sum(jnp.asarray(_F), axis=1)),
    ("sum f32 method", lambda: jnp.asarray(_F).sum(axis=0)),
    ("max f32", lambda: jnp.max(jnp.asarray(_F))),
    ("min f16 axis", lambda: jnp.min(jnp.asarray(_F.astype(np.float16)), axis=0)),
    ("prod i32", lambda: jnp.prod(jnp.asarray(_I), axis=(0, 1))),
    ("all bool", lambda: jnp.all(jnp.asarray(_B), axis=0)),
    ("any bool method", lambda: jnp.asarray(_B).any()),
    ("sum empty", lambda: jnp.sum(jnp.zeros((0, 4), np.float32), axis=0)),
    ("max 0-d", lambda: jnp.max(jnp.asarray(np.float32(-0.0)))),
    ("sum weak", lambda: jnp.sum(_weak_row())),
    ("sum python scalar", lambda: jnp.sum(2.5)),
    ("any f32", lambda: jnp.any(jnp.asarray(_F))),
    ("all f32 keepdims", lambda: jnp.all(jnp.asarray(_F), axis=-1, keepdims=True)),
    ("any complex", lambda: jnp.any(jnp.asarray(_F) * 1j)),
    ("sum f16 axis", lambda: jnp.sum(jnp.asarray(_F.astype(np.float16)), axis=0)),
    ("max keepdims", lambda: jnp.max(jnp.asarray(_I), axis=1, keepdims=True)),
    ("cumsum f32 axis", lambda: jnp.cumsum(jnp.asarray(_F), axis=0)),
    ("cumprod i32 method", lambda: jnp.asarray(_I).cumprod(axis=1)),
    ("cumsum weak", lambda: jnp.cumsum(_weak_row(), axis=0)),
    ("cumsum bool axis", lambda: jnp.cumsum(jnp.asarray(_B), axis=0)),
    ("cumsum f32 none", lambda: jnp.cumsum(jnp.asarray(_F))),
    ("cumprod f16 none", lambda: jnp.cumprod(jnp.asarray(_F.astype(np.float16)))),
    ("cumsum dtype", lambda: jnp.cumsum(jnp.asarray(_I), axis=1, dtype=jnp.float32)),
    ("cumsum empty", lambda: jnp.cumsum(jnp.zeros((0, 3), np.int32), axis=0)),
    ("mean i32 tuple", lambda: jnp.mean(jnp.asarray(_I), axis=(0, 1))),
    ("mean f16 keepdims", lambda: jnp.mean(jnp.asarray(_F.astype(np.float16)), axis=0,
                                           keepdims=True)),
    ("mean bool method", lambda: jnp.asarray(_B).mean(axis=1)),
    ("mean empty", lambda: jnp.mean(jnp.zeros((0, 3), np.int32), axis=0)),
    ("nancumsum f32 axis", lambda: jnp.nancumsum(jnp.asarray(_F), axis=1)),
    ("nancumprod f16 none", lambda: jnp.nancumprod(jnp.asarray(_F.astype(np.float16)))),
    ("nancumsum bool dtype", lambda: jnp.nancumsum(jnp.asarray(_B), axis=0, dtype=jnp.int8)),
    ("cumulative_sum initial", lambda: jnp.cumulative_sum(jnp.asarray(_F), axis=1,
                                                          include_initial=True)),
    ("cumulative_prod empty", lambda: jnp.cumulative_prod(jnp.zeros((2, 0), np.int32), axis=1)),
]


@pytest.mark.parametrize("name,call", _CALLS, ids=[c[0] for c in _CALLS])
def test_repeated_calls_keep_the_op_by_op_bits(name, call):
  with jax.disable_jit():
    want = call()
  for _ in range(3):
    _same(call(), want)


def test_weak_operands_give_strong_results():
  for _ in range(3):
    for out in (jnp.sum(_weak_row()), jnp.sum(2.5), jnp.max(_weak_row(), axis=0),
                jnp.cumsum(_weak_row(), axis=0)):
      assert out.dtype == np.float32 and not out.weak_type


def test_one_operation_binds_the_reducer_without_replaying(monkeypatch):
  x, b = jnp.asarray(_F), jnp.asarray(_B)
  calls = (lambda: jnp.sum(x, axis=1), lambda: jnp.max(x), lambda: x.min(axis=0),
           lambda: jnp.all(b, axis=0), lambda: jnp.cumsum(x, axis=0),
           lambda: x.cumprod(axis=1))
  want = [c() for c in calls]

  def replay(*args, **kwargs):
    raise AssertionError("a plan of one operation replayed")
  monkeypatch.setattr(reductions, "_replay", replay)
  monkeypatch.setattr(reductions, "_cumulative_reduction", replay)
  for c, w in zip(calls, want):
    _same(c(), w)


def test_several_operations_call_the_program_with_the_operand_alone(monkeypatch):
  x, b = jnp.asarray(_F), jnp.asarray(_B)
  calls = (lambda: jnp.any(x), lambda: jnp.all(x, axis=1, keepdims=True),
           lambda: jnp.sum(b, axis=0), lambda: jnp.cumsum(b, axis=0),
           lambda: jnp.cumsum(x), lambda: b.cumprod(), lambda: jnp.nancumsum(x, axis=0),
           lambda: jnp.nancumprod(b, axis=1, dtype=jnp.float32),
           lambda: jnp.cumulative_sum(x, axis=1, include_initial=True),
           lambda: jnp.cumulative_prod(b, axis=0),
           lambda: jnp.mean(jnp.asarray(_I), axis=(0, 1)), lambda: b.mean(axis=1))
  want = [c() for c in calls]
  for c in calls:   # each program's fast path set up
    c()
  keys = []
  real = eager_call.eager_key

  def counting(*args, **kwargs):
    keys.append(args)
    return real(*args, **kwargs)
  monkeypatch.setattr(eager_call, "eager_key", counting)
  for c, w in zip(calls, want):
    _same(c(), w)
    _same(c(), w)   # again: the fast path of the last call
  assert len(keys) <= len(calls)   # one key at most per change of program, not per call
  keys.clear()
  for _ in range(3):
    _same(calls[0](), want[0])
  assert not keys


def test_jit_and_traced_jaxprs_after_fast_paths():
  x, b = jnp.asarray(_F), jnp.asarray(_B)
  for _ in range(3):
    jnp.sum(x, axis=1), jnp.any(x), jnp.cumsum(x, axis=0), jnp.cumsum(b, axis=0)
  _same(jax.jit(lambda a: jnp.sum(a, axis=1))(x), jnp.sum(x, axis=1))
  _same(jax.jit(jnp.any)(x), jnp.any(x))
  _same(jax.jit(lambda a: jnp.cumsum(a, axis=0))(b), jnp.cumsum(b, axis=0))
  text = str(jax.make_jaxpr(lambda a: jnp.any(a))(x))
  assert "jit" not in text and "reduce_or" in text and "convert_element_type" in text
  text = str(jax.make_jaxpr(lambda a: jnp.cumsum(a, axis=0))(b))
  assert "name=cumsum" in text and "convert_element_type" in text
  text = str(jax.make_jaxpr(lambda a: jnp.cumsum(a, axis=0))(x))
  assert "name=cumsum" in text
  assert "name=nancumsum" in str(jax.make_jaxpr(lambda a: jnp.nancumsum(a, axis=1))(x))
  _same(jax.jit(lambda a: jnp.nancumsum(a, axis=1))(x), jnp.nancumsum(x, axis=1))
  text = str(jax.make_jaxpr(lambda a: jnp.sum(a))(_weak_row()))
  assert "convert_element_type" in text


def test_cumulative_errors_after_fast_paths():
  x = jnp.asarray(_F)
  for _ in range(3):
    jnp.cumsum(x, axis=0)
    with pytest.raises(np.exceptions.AxisError):
      jnp.cumsum(x, axis=2)
    with pytest.raises(NotImplementedError):
      jnp.cumsum(x, axis=0, out=x)
