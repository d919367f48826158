"""Compiled loops that are not one dispatch (control/loop_dispatch.py) run
several steps per trip (scan: unrolled steps; while: guarded steps for small
carries). Results must equal the interpreter's and a Python loop's for every
trip count, including counts that do not divide the steps per trip, and
while loops whose body overflows past the end, in both lowerings."""
import subprocess
import sys

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.config import config
from openjax._src.control import loop_dispatch
from openjax._src.control._scan_rules import _auto_unroll
from openjax._src.control.while_loop import _guarded_steps


@pytest.fixture(autouse=True)
def compiled():
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


@pytest.fixture(params=["one_dispatch", "per_trip"])
def lowering(request, monkeypatch):
  """Both loop lowerings (no loop fits one dispatch when no value may have
  a byte)."""
  if request.param == "per_trip":
    monkeypatch.setattr(loop_dispatch, "VALUE_BYTES", -1)
    monkeypatch.setattr(loop_dispatch, "WHILE_VALUE_BYTES", -1)
  return request.param


def _python_fori(n, x):
  for _ in range(n):
    x = np.float32(x * np.float32(0.999) + np.float32(0.5))
  return x


def test_dynamic_trip_counts_match_a_python_loop(lowering):
  f = jax.jit(lambda x, n: lax.fori_loop(0, n, lambda i, x: x * 0.999 + 0.5, x))
  x = np.float32(1.0)
  text = f.lower(x, 3).as_text()
  assert ("flow.dispatch.region" in text) == (lowering == "one_dispatch")
  for n in (0, 1, 2, 15, 16, 17, 31, 1000):
    # IREE contracts x * a + b into an FMA: last-bit differences only.
    np.testing.assert_allclose(float(f(x, n)), float(_python_fori(n, x)), rtol=2e-6,
                               err_msg=str(n))


def test_guarded_steps_discard_work_past_the_end(lowering):
  # Past the end the body overflows to inf; the guarded steps must drop it.
  def f(x):
    return lax.while_loop(lambda c: c[0] < 1e30, lambda c: (c[0] * 10.0, c[1] + 1), (x, 0))
  compiled = jax.jit(f)(np.float32(1.0))
  with config.override("openjax_executor", "interpreter"):
    expected = jax.jit(f)(np.float32(1.0))
  assert float(compiled[0]) == float(expected[0]) and int(compiled[1]) == int(expected[1]) == 30


def test_guarded_steps_under_vmap(lowering):
  def count(limit):
    return lax.while_loop(lambda c: c[1] < limit, lambda c: (c[0] * 1.5, c[1] + 1),
                          (jnp.float32(1.0), 0))
  limits = np.array([0, 3, 17, 40], np.int32)
  got = jax.jit(jax.vmap(count))(limits)
  np.testing.assert_array_equal(np.asarray(got[1]), limits)
  np.testing.assert_allclose(np.asarray(got[0]), 1.5 ** limits.astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("length", [1, 7, 97, 200])
@pytest.mark.parametrize("reverse", [False, True])
def test_scan_unrolled_per_trip_matches_the_interpreter(length, reverse, lowering):
  xs = np.random.default_rng(length).standard_normal((length, 3)).astype(np.float32)

  def f(xs):
    return lax.scan(lambda c, x: (jnp.tanh(c * 0.9 + x), c.sum()), jnp.zeros(3), xs,
                    reverse=reverse)
  got = jax.jit(f)(xs)
  with config.override("openjax_executor", "interpreter"):
    expected = jax.jit(f)(xs)
  for g, e in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(expected)):
    np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=2e-6, atol=1e-6)


def test_unroll_choices():
  small = jax.make_jaxpr(lambda c, x: (c * 0.5 + x, c))(1.0, 1.0).jaxpr
  assert _auto_unroll(small, 200) == 50          # a divisor of the length
  assert _auto_unroll(small, 1) == 1
  assert 1 < _auto_unroll(small, 97) <= 64        # prime: k_max with a remainder
  closed = jax.make_jaxpr(lambda c: c < 3)(1)
  body = jax.make_jaxpr(lambda c: c + 1)(1)
  assert _guarded_steps(closed, body, body.out_avals, 0) > 1
  big = jax.make_jaxpr(lambda c: c + 1)(np.zeros(10000, np.float32))
  assert _guarded_steps(jax.make_jaxpr(lambda c: c[0] < 3)(np.zeros(10000, np.float32)),
                        big, big.out_avals, 0) == 1


_DEAD_CARRY_PROGRAM = r"""
import sys
import numpy as np
import openjax as jax, openjax.numpy as jnp
from openjax import lax
from openjax._src.config import config
from openjax._src.control import loop_dispatch, while_loop
config.update("openjax_executor", "iree")
loop_dispatch.WHILE_VALUE_BYTES = -1   # the per-trip lowering, with guarded steps
config.update("openjax_tiered_compilation", False)
while_loop._GUARD_MAX_STEPS = int(sys.argv[1])
x = jnp.arange(4.0)
bodies = [lambda s: (s[0] + 1, s[1] * 2, jnp.max(s[1])),
          lambda s: (s[0] + 1, s[1] * 2, s[1][1] * 3.0),
          lambda s: (s[0] + 1, s[1] * 2, s[1] @ s[1])]
for body in bodies:
  out = jax.jit(lambda x: lax.while_loop(lambda s: s[0] < 5, body, (0, x, jnp.float32(0))))(x)
  s = (0, np.arange(4.0, dtype=np.float32), np.float32(0))
  while s[0] < 5:
    s = tuple(np.asarray(v) for v in body(s))
  np.testing.assert_allclose(np.asarray(out[2]), s[2], rtol=1e-6)
print("ok")
"""


@pytest.mark.parametrize("max_steps", [2, 16])
def test_a_carry_the_body_does_not_read_compiles(max_steps):
  """A carry overwritten without being read (``(i + 1, x * 2, max(x))``):
  IREE failed to compile its guarded steps, or aborted the whole process
  (LLVM out of memory) for 2 steps; such loops run one step a trip."""
  proc = subprocess.run([sys.executable, "-c", _DEAD_CARRY_PROGRAM, str(max_steps)],
                        capture_output=True, text=True, timeout=600)
  assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-2000:]
