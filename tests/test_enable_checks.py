"""``jax_enable_checks``: the suite runs with it on (tests/conftest.py), and
with it every jaxpr a transformation builds is type-checked where it is built,
so a transformation bug fails at its source with the transformation's name."""
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src import core
from openjax._src.core import (ClosedJaxpr, JaxprTypeError, Primitive, ShapedArray,
                               check_jaxpr)
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr

f32 = np.dtype(np.float32)


@pytest.fixture
def probe_p():
  """``probe(x, y; n)``: ``x[:n] + y[:n]``, with a partial-evaluation splitter
  that gets the type of its unknown equation wrong (it changes ``n``)."""
  p = Primitive("checks_probe")
  p.def_impl(lambda x, y, *, n: [np.asarray(x)[:n] + np.asarray(y)[:n]])
  p.def_abstract_eval(lambda x, y, *, n: [ShapedArray((n,), x.dtype)])

  def buggy_split(eqn, unknowns):
    return None, eqn.replace(params=dict(eqn.params, n=eqn.params["n"] - 1)), [True]
  p.partial_eval_jaxpr_custom = buggy_split
  yield p
  del core.registry["checks_probe"]


def _probe_jaxpr(probe_p):
  return jax.make_jaxpr(lambda x, y: probe_p.bind1(lax.sin(x), y, n=3))(
      np.ones(4, f32), np.ones(4, f32))


def test_the_suite_runs_with_checks_on():
  assert jax.config.jax_enable_checks


def test_partial_eval_result_is_checked(probe_p):
  closed = _probe_jaxpr(probe_p)
  with pytest.raises(JaxprTypeError) as info:
    partial_eval_jaxpr(closed.jaxpr, [False, True])
  msg = str(info.value)
  assert "partial_eval_jaxpr (unknown part)" in msg
  assert "checks_probe: output typed f32[3] but the primitive produces f32[2]" in msg


def test_without_checks_the_bad_split_goes_unnoticed(probe_p):
  closed = _probe_jaxpr(probe_p)
  with jax.enable_checks(False):
    known, unknown, out_unknowns, _ = partial_eval_jaxpr(closed.jaxpr, [False, True])
  assert out_unknowns == [True]
  with pytest.raises(JaxprTypeError):
    check_jaxpr(unknown)


def test_traced_jaxprs_are_checked(probe_p):
  # An abstract eval that answers differently the second time: the staged
  # equation no longer matches its primitive, which only a check can see.
  calls = []

  def flaky_abstract_eval(x, y, *, n):
    calls.append(n)
    return [ShapedArray((n + len(calls) - 1,), x.dtype)]
  probe_p.def_abstract_eval(flaky_abstract_eval)
  with pytest.raises(JaxprTypeError, match=r"trace_to_jaxpr \(make_jaxpr of .*output typed "
                                           r"f32\[3\] but the primitive produces f32\[4\]"):
    _probe_jaxpr(probe_p)


def test_constants_are_checked_against_their_constvars():
  closed = jax.make_jaxpr(lambda x: x + np.arange(3, dtype=f32))(np.ones(3, f32))
  assert len(closed.consts) == 1
  check_jaxpr(closed)
  wrong_shape = ClosedJaxpr(closed.jaxpr, [np.arange(4, dtype=f32)])
  with pytest.raises(JaxprTypeError, match=r"typed f32\[3\] holds a constant of type f32\[4\]"):
    check_jaxpr(wrong_shape)
