"""The eager per-call floor: what a library call's runner (``Program.library_runner``,
``api/eager_call.py``) and the cached dtype promotions decide once must be
what the general paths decide on every call (the same bits, dtypes and weak
types, the same errors), and the debugging flags must still take effect after
a runner is cached."""
from types import FunctionType

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src import dtypes
from openjax._src.api.eager_call import eager_key
from openjax._src.control.nested_calls import nested_call_kernel
from openjax._src.control.closed_call import jit_p
from openjax._src.core.avals import ShapedArray
from openjax._src.core.program import program_of
from openjax._src.core.program_codegen import same_value
from openjax._src.core.trace import make_plan
from openjax._src.numpy import util
from openjax._src.primitives.base import convert
from openjax._src.primitives.elementwise import logic
from openjax._src.runtime import pipeline


def _same(a, b) -> None:
  """Equal bits, dtype, shape and weak type."""
  assert type(a) is type(b)
  if isinstance(a, (tuple, list)):
    assert len(a) == len(b)
    for x, y in zip(a, b):
      _same(x, y)
    return
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  # (contiguous first: a strided 1-d view reshapes to itself)
  np.testing.assert_array_equal(np.ascontiguousarray(a).reshape(-1).view(np.uint8),
                                np.ascontiguousarray(b).reshape(-1).view(np.uint8))


def _runner_of(fn, *args, **kwargs):
  key, _ = eager_key(fn, args, kwargs)
  return fn._eager_fast.get(key)


_X = np.array([-1.5, -0.0, 0.0, 0.25, 2.0, np.inf, -np.inf, np.nan, 7.0, 1e30], np.float32)
_Y = np.array([1.0, 2.0, -3.0, 0.5, np.nan, 1.0, 4.0, 2.0, -0.0, 3.0], np.float32)

_CALLS = [
    ("clip scalars", lambda x, y: jnp.clip(x, 0.2, 0.8)),
    ("clip int scalars", lambda x, y: jnp.clip(x, -1, 3)),
    ("clip numpy bound", lambda x, y: jnp.clip(x, np.float32(0.5), _Y)),
    ("clip numpy operand", lambda x, y: jnp.clip(_X, y, 3.0)),
    ("clip int array", lambda x, y: jnp.clip(jnp.arange(10, dtype=jnp.int8), -2, 5)),
    ("hypot", lambda x, y: jnp.hypot(x, y)),
    ("hypot weak", lambda x, y: jnp.hypot(x, 2.0)),
    ("divmod", lambda x, y: jnp.divmod(x, y)),
    ("frexp", lambda x, y: jnp.frexp(x)),
    ("median", lambda x, y: jnp.median(x)),
    ("quantile", lambda x, y: jnp.quantile(y, 0.3)),
    ("var", lambda x, y: jnp.var(y, axis=0, keepdims=True)),
    ("where", lambda x, y: jnp.where(x > y, x, y)),
    ("linspace", lambda x, y: jnp.linspace(0, 1, 10)),
    ("round", lambda x, y: jnp.round(x, 2)),
]


@pytest.mark.parametrize("call", [c for _, c in _CALLS], ids=[n for n, _ in _CALLS])
def test_runner_gives_the_bits_of_running_op_by_op(call):
  x, y = jnp.asarray(_X), jnp.asarray(_Y)
  with jax.disable_jit():
    expected = call(x, y)
  first, second, third = call(x, y), call(x, y), call(x, y)   # a miss, then the runner
  _same(first, expected)
  _same(second, expected)
  _same(third, expected)


def test_runner_is_cached_per_argument_kinds():
  x = jnp.asarray(_X)
  jnp.clip(x, 0.2, 0.8)
  jnp.clip(x, 0.2, 0.8)
  assert type(_runner_of(jnp.clip, x, 0.2, 0.8)) is FunctionType
  # Another kind of bound (a Python int): its own entry, its own bits.
  _same(jnp.clip(x, 0, 1), jnp.clip(x, 0.0, 1.0).astype(jnp.float32))
  assert jnp.clip(x, 0, 1).weak_type is False


def test_runner_returns_an_argument_as_it_is():
  # jnp.clip without bounds returns its operand: the runner must too.
  x = jnp.asarray(_X)
  outs = [jnp.round(x.astype(jnp.int32)) for _ in range(3)]
  for out in outs:
    _same(out, x.astype(jnp.int32))


def test_runner_keeps_python_int_overflow_error():
  x = jnp.arange(5, dtype=jnp.int32)
  jnp.clip(x, 0, 3)
  jnp.clip(x, 0, 3)
  with pytest.raises(OverflowError):
    jnp.clip(x, 0, 2**40)


def test_runner_copies_numpy_operands():
  a = np.linspace(0.0, 1.0, 10, dtype=np.float32)
  for _ in range(3):
    out = jnp.clip(a, 0.2, 0.8)
  a[:] = 5.0   # the caller's array changes: results made before must not
  np.testing.assert_array_equal(np.asarray(out), np.clip(np.linspace(0, 1, 10, dtype=np.float32),
                                                        0.2, 0.8))


def test_debug_nans_after_runner_is_cached():
  x = jnp.asarray(np.array([np.inf, 1.0], np.float32))
  jnp.var(x)
  jnp.var(x)
  assert np.isnan(np.asarray(jnp.var(x)))
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      jnp.var(x)
  jax.config.update("jax_debug_nans", True)
  try:
    with pytest.raises(FloatingPointError):
      jnp.var(x)
  finally:
    jax.config.update("jax_debug_nans", False)
  assert np.isnan(np.asarray(jnp.var(x)))


def test_disable_jit_after_runner_is_cached():
  calls = []

  @util.jit
  def body(x):
    calls.append(1)
    return x * 2.0

  x = jnp.asarray(_X)
  body(x)
  body(x)
  traced = len(calls)
  body(x)
  assert len(calls) == traced   # the runner: the body is not called
  with jax.disable_jit():
    body(x)
  assert len(calls) == traced + 1   # op by op: the body runs
  jax.config.update("jax_disable_jit", True)
  try:
    body(x)
  finally:
    jax.config.update("jax_disable_jit", False)
  assert len(calls) == traced + 2


def test_nested_call_kernel_keeps_untiered_calls_on_the_impl():
  closed = jax.make_jaxpr(lambda x: x + 1.0)(jnp.zeros(3))
  params = dict(jaxpr=closed, name="f", donated_invars=(False,), keep_unused=False,
                inline=False, tiered=False)
  assert nested_call_kernel(jit_p.impl, params) is None
  kernel = nested_call_kernel(jit_p.impl, dict(params, tiered=True))
  out, = kernel(np.ones(3, np.float32), **params)
  np.testing.assert_array_equal(out, np.full(3, 2.0, np.float32))


def test_same_dtype_convert_step_is_the_value_itself():
  closed = jax.make_jaxpr(lambda x, s: jnp.clip(x, s, 1.0))(jnp.zeros(3), 0.5)
  inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
  program = program_of(inner)
  kernels = [k for k, *_ in program.kernel_steps]
  assert same_value in kernels
  x = jnp.asarray(np.array([0.1, 0.7, 3.0], np.float32))
  for _ in range(3):
    out = jnp.clip(x, 0.5, 1.0)
    assert out.dtype == np.float32 and out.weak_type is False
    np.testing.assert_array_equal(np.asarray(out), np.array([0.5, 0.7, 1.0], np.float32))


_OPERANDS = [
    jnp.zeros(3, jnp.float32), jnp.zeros((), jnp.int32), jnp.zeros(2, jnp.bool_),
    jnp.zeros(2, jnp.float16), jnp.asarray(1.0), 3, 2.5, True, 1j, np.float16(2),
    np.int8(3), jnp.zeros(2, jnp.uint8), jnp.zeros(2, jnp.complex64),
]


@pytest.mark.parametrize("promote, refine", [
    (util.promote_dtypes, lambda d: d),
    (util.promote_dtypes_inexact, util.to_inexact_dtype),
    (util.promote_dtypes_numeric, dtypes.to_numeric_dtype),
    (util.promote_dtypes_complex, lambda d: dtypes.canonicalize_dtype(dtypes.to_complex_dtype(d))),
], ids=["plain", "inexact", "numeric", "complex"])
def test_cached_dtype_promotion_matches_result_type(promote, refine):
  for a in _OPERANDS:
    for b in _OPERANDS:
      dt, weak = dtypes.result_type(a, b, return_weak_type_flag=True)
      dt = refine(dt)
      for _ in range(2):   # the second answer comes from the cache
        outs = promote(a, b)
        for out in outs:
          assert out.dtype == dt and out.weak_type == weak, (a, b)


def test_ensure_arraylike_still_rejects_lists():
  with pytest.raises(TypeError, match="requires ndarray or scalar arguments"):
    util.ensure_arraylike("f", [1, 2])
  x = jnp.zeros(3)
  assert util.ensure_arraylike("f", x) is x


def test_dead_steps_are_dropped_and_effects_kept():
  def f(x):
    jnp.sin(x)   # read by nothing: no kernel step
    return x * 2.0
  program = program_of(jax.make_jaxpr(f)(jnp.zeros(3)).jaxpr)
  assert len(program.steps) == 2 and len(program.kernel_steps) == 1
  seen = []

  @util.jit
  def g(x):
    jax.debug.callback(lambda v: seen.append(np.asarray(v)), x)   # no result: an effect
    jnp.cos(x)
    return x + 1.0

  x = jnp.asarray(np.array([1.0, 2.0], np.float32))
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(g(x)), np.array([2.0, 3.0], np.float32))
  assert len(seen) == 3


_EDGES = [np.nan, -np.nan, np.inf, -np.inf, -0.0, 0.0, 0.5, -0.5, 0.99, -0.99, 127.5, 128,
          -128.7, -129, 255.9, 256, 2.0**31, -2.0**31 - 1, 65535.7, 65536, 2.0**63, -2.0**63,
          2.0**64, 1e30, -1e30, 3.7, -3.7]
_FLOATS = [np.dtype(t) for t in (np.float16, np.float32, np.float64, dtypes.bfloat16)]
_INTS = [np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                               np.int64, np.uint64)]


def _kernel(p, operands, **params):
  kernel, lean, *_ = make_plan(p, [ShapedArray(x.shape, x.dtype) for x in operands], params)
  assert lean, p.name
  return kernel


@pytest.mark.parametrize("src", _FLOATS, ids=str)
@pytest.mark.parametrize("dst", _INTS, ids=str)
def test_scalar_float_to_int_kernel_matches_the_impl(src, dst):
  params = dict(new_dtype=dst, weak_type=False, sharding=None)
  kernel = _kernel(convert.convert_element_type_p, [np.zeros((), src)], **params)
  for v in _EDGES:
    with np.errstate(over="ignore"):
      x = np.array(v).astype(src)
    out = kernel(x)
    expected = convert.convert_numpy(x, dst)
    assert out.dtype == expected.dtype == dst and out.shape == ()
    assert out.tobytes() == expected.tobytes(), (v, src, dst)


@pytest.mark.parametrize("dt", [np.float32, np.float16, np.float64, np.int32, np.uint8],
                         ids=str)
def test_clamp_kernel_matches_the_impl(dt):
  with np.errstate(invalid="ignore", over="ignore"):
    x = np.array(_EDGES[:20]).astype(dt)
  for lo, hi in ((np.array(-0.0), np.array(0.5)), (np.array(0.0), np.array(np.nan)),
                 (np.array(np.nan), np.array(200.0)), (x[::-1], x)):
    with np.errstate(invalid="ignore"):
      lo, hi = lo.astype(dt), hi.astype(dt)
    kernel = _kernel(logic.clamp_p, [lo, x, hi])
    with np.errstate(all="ignore"):
      out = kernel(lo, x, hi)
    expected, = logic.clamp_p.impl(lo, x, hi)
    assert out.dtype == expected.dtype and out.tobytes() == expected.tobytes()
  canonical = dtypes.canonicalize_dtype(dt)
  x, lo, hi = x.astype(canonical), np.array(1, canonical), np.array(3, canonical)
  for _ in range(2):   # eagerly, through the plan
    out = jax.lax.clamp(jnp.asarray(lo), jnp.asarray(x), jnp.asarray(hi))
    assert out.dtype == canonical and not out.weak_type
    assert np.asarray(out).tobytes() == logic.clamp_p.impl(lo, x, hi)[0].tobytes()


def test_median_of_scalars_and_edges_keeps_its_bits():
  rng = np.random.default_rng(1)
  for x in (rng.standard_normal(11).astype(np.float32), np.array([np.nan, 1.0, 2.0], np.float32),
            np.array([-0.0, 0.0, 3.0, -3.0], np.float32)):
    with jax.disable_jit():
      expected = jnp.median(jnp.asarray(x))
    for _ in range(3):
      _same(jnp.median(jnp.asarray(x)), expected)
      _same(jnp.percentile(jnp.asarray(x), 30.0), jnp.quantile(jnp.asarray(x), 0.3))


def test_runner_runs_nested_calls_as_an_interpreted_call():
  # The interpreted-call mark is set around programs whose impls may call a
  # jitted function (a nested jit) and not around NumPy impls alone.
  marks = []

  @util.jit
  def nested(x):
    return inner(x) + 1.0

  def probe(v):
    marks.append(pipeline._first_call.interpreting)
    return v

  @jax.jit
  def inner(x):
    return jax.pure_callback(probe, jax.ShapeDtypeStruct(x.shape, x.dtype), x)

  x = jnp.asarray(np.arange(4.0, dtype=np.float32))
  for _ in range(3):
    np.testing.assert_array_equal(np.asarray(nested(x)), np.arange(4.0, dtype=np.float32) + 1)
  assert marks and all(marks)

  @util.jit
  def plain(x):
    return jnp.sum(x.reshape(2, 2), axis=0)

  plain(x)
  plain(x)
  run = _runner_of(plain, x)
  assert type(run) is FunctionType and run.__qualname__.endswith("library_runner.<locals>.run")


def test_nested_custom_jvp_call_runs_its_primal_program():
  # jnp.frexp's program is one custom_jvp_call whose primal program holds a
  # nested jit (isinf): the runner's kernel runs it without its impl's
  # per-call lookups, with the same bits as op by op.
  closed = jax.make_jaxpr(jnp.frexp)(jnp.zeros(7))
  while len(closed.jaxpr.eqns) == 1 and closed.jaxpr.eqns[0].primitive is jit_p:
    closed = closed.jaxpr.eqns[0].params["jaxpr"]
  eqn, = closed.jaxpr.eqns
  kernel = nested_call_kernel(eqn.primitive.impl, eqn.params)
  assert kernel is not None
  x = np.array([0.0, -0.0, 1e-45, -3.5, np.inf, np.nan, 6e37], np.float32)
  mantissa, exponent = kernel(x, **eqn.params)
  expected = eqn.primitive.impl(x, **eqn.params)
  assert mantissa.tobytes() == np.asarray(expected[0]).tobytes()
  assert exponent.tobytes() == np.asarray(expected[1]).tobytes()
  with jax.disable_jit():
    op_by_op = jnp.frexp(jnp.asarray(x))
  for _ in range(3):
    _same(jnp.frexp(jnp.asarray(x)), op_by_op)


def test_last_call_slot_checks_every_argument_and_the_flags():
  # The last positional call is matched by aval identity and scalar type;
  # anything else (another aval, another scalar type, an Array for a scalar,
  # other flags) takes the keyed path, with its own results.
  x = jnp.asarray(np.array([0.1, 0.7, 3.0], np.float32))
  xi = jnp.asarray(np.array([1, 5, 9], np.int32))
  for _ in range(3):
    _same(jnp.clip(x, 0.5, 1.0), jnp.asarray(np.array([0.5, 0.7, 1.0], np.float32)))
  out = jnp.clip(xi, 2, 8)
  assert out.dtype == np.int32 and np.asarray(out).tolist() == [2, 5, 8]
  with jax.disable_jit():
    expected = jnp.clip(xi, 2.5, 8)
  _same(jnp.clip(xi, 2.5, 8), expected)   # a float bound: the same position, another type
  assert expected.dtype == np.float32 and expected.weak_type
  out = jnp.clip(x, jnp.asarray(np.float32(0.5)), 1.0)   # an Array where a scalar was
  np.testing.assert_array_equal(np.asarray(out), np.array([0.5, 0.7, 1.0], np.float32))
  y = jnp.asarray(np.array([np.inf, 1.0], np.float32))
  for _ in range(3):
    jnp.var(y)
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError):
      jnp.var(y)
  with jax.disable_jit():
    assert np.isnan(np.asarray(jnp.var(y)))
