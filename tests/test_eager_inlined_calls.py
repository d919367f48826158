"""Eager library programs run their nested interpreted calls (jit, a
custom_jvp/vjp function's primal) inlined (``api/eager_call.
inline_interpreted_calls``): the same kernels, without a nested program's
entry per call. Checked: the flattened jaxpr keeps no such call, gives the
nested run's bits, handles a jaxpr called twice, inner constants, dropped
and passed-through results, and keeps compiled (tiered=False) calls."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.control.nested_calls import inline_interpreted_calls
from openjax._src.control.closed_call import jit_p
from openjax._src.control.custom_derivatives import custom_jvp_call_p
from openjax._src.core import eval_jaxpr

F32 = np.float32
_CALLS = (jit_p, custom_jvp_call_p)


def _prims(closed):
  return [e.primitive for e in closed.jaxpr.eqns]


def _same_bits(closed, flat, *args):
  want = eval_jaxpr(closed.jaxpr, closed.consts, *args)
  got = eval_jaxpr(flat.jaxpr, flat.consts, *args)
  for w, g in zip(want, got):
    np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
    assert np.asarray(g).dtype == np.asarray(w).dtype


@pytest.mark.parametrize("name,fn,args", [
    ("ldexp", jnp.ldexp, (np.linspace(0.1, 3, 10).astype(F32), np.arange(10, dtype=np.int32))),
    ("frexp", jnp.frexp, (np.linspace(-3, 3, 10).astype(F32),)),
    ("median", jnp.median, (np.random.default_rng(0).standard_normal(11).astype(F32),)),
    ("spacing", jnp.spacing, (np.linspace(-3, 3, 10).astype(F32),)),
    ("softplus", jax.nn.softplus, (np.linspace(-3, 3, 10).astype(F32),))])
def test_library_programs_flatten_with_the_same_bits(name, fn, args):
  closed = jax.make_jaxpr(fn)(*args)
  flat = inline_interpreted_calls(closed)
  assert not any(p in _CALLS for p in _prims(flat))
  _same_bits(closed, flat, *args)
  eager = fn(*[jnp.asarray(a) for a in args])
  for e, w in zip(jax.tree_util.tree_leaves(eager),
                  eval_jaxpr(closed.jaxpr, closed.consts, *args)):
    np.testing.assert_array_equal(np.asarray(e), np.asarray(w))


def test_a_jaxpr_called_twice_constants_and_passed_through_results():
  table = np.arange(4, dtype=F32) * 0.5   # an inner constant
  inner = jax.jit(lambda v: (jnp.sin(v) + table, v))

  def outer(v):
    a, same = inner(v)
    b, _ = inner(a)          # the same inner jaxpr again; one result dropped
    return b * 2, same
  x = np.linspace(0, 1, 4).astype(F32)
  closed = jax.make_jaxpr(outer)(x)
  flat = inline_interpreted_calls(closed)
  assert not any(p in _CALLS for p in _prims(flat))
  assert len(flat.consts) >= len(closed.consts)
  _same_bits(closed, flat, x)
  np.testing.assert_allclose(np.asarray(jnp.asarray(outer(jnp.asarray(x))[0])),
                             (np.sin(np.sin(x) + table) + table) * 2, rtol=1e-6)


def test_compiled_calls_stay_calls():
  # jax.random's samplers call jits with tiered=False (they run compiled,
  # the same bits at every tier): those are not inlined.
  closed = jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(jax.random.key(0))
  kept = [e for e in closed.jaxpr.eqns if e.primitive is jit_p and not e.params["tiered"]]
  assert kept
  flat = inline_interpreted_calls(closed)
  assert [e for e in flat.jaxpr.eqns if e.primitive is jit_p] == kept


def test_nothing_to_inline_is_the_same_object():
  closed = jax.make_jaxpr(lambda v: jnp.sin(v) * 2)(np.ones(3, F32))
  assert inline_interpreted_calls(closed) is closed


def test_list_arguments_key_the_eager_call(monkeypatch):
  # A flat list or tuple of Arrays keys an eager library call (jnp.block's
  # list): repeat calls skip jit's general path; other lengths, element
  # avals and list-vs-tuple key calls of their own.
  from openjax._src.api.jit import JitWrapped
  x = jnp.asarray(np.arange(3, dtype=F32))
  y = jnp.asarray(np.arange(4, dtype=F32))
  jnp.block([x, x])
  jnp.block([x, y])
  real = JitWrapped._library_entry
  calls = []

  def counting(self, args, kwargs):
    calls.append(self.name)
    return real(self, args, kwargs)
  monkeypatch.setattr(JitWrapped, "_library_entry", counting)
  np.testing.assert_array_equal(np.asarray(jnp.block([x, x])), np.r_[np.arange(3), np.arange(3)])
  np.testing.assert_array_equal(np.asarray(jnp.block([x, y])), np.r_[np.arange(3), np.arange(4)])
  assert not calls
  np.testing.assert_array_equal(np.asarray(jnp.block([y, x, x])),
                                np.r_[np.arange(4), np.arange(3), np.arange(3)])
