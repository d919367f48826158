"""The one jaxpr program evaluator (``core/program.py``): its impl path gives
what binding each equation gives, its bind path transforms, debug flags name
the failing primitive, dead values are released, and it is the only
evaluator of jaxprs in the code base."""
import ast
import pathlib
import weakref

import numpy as np
import pytest

import openjax
import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src import core
from openjax._src.config import config
from openjax._src.core import (ClosedJaxpr, DropVar, Jaxpr, Literal, Primitive, eval_jaxpr,
                               eval_trace, program_of, set_current_trace)
from openjax._src.core import program
from openjax._src.core.program import Program
from openjax._src.runtime.pipeline import interpreting_first_call

f32 = np.float32
SRC = pathlib.Path(openjax.__file__).resolve().parent / "_src"


def _bind_each(jaxpr: Jaxpr, consts, *args) -> list:
  """The reference: every equation bound in the eval trace, one by one."""
  env = dict(zip(jaxpr.constvars, consts))
  env.update(zip(jaxpr.invars, args))

  def read(a):
    return a.operand if type(a) is Literal else env[a]

  with set_current_trace(eval_trace):
    for eqn in jaxpr.eqns:
      env.update(zip(eqn.outvars, eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)))
  return [read(a) for a in jaxpr.outvars]


def _same(outs, expected, arrays=True):
  """Equal values and types (``arrays``: every output an Array; binding
  returns an input that is an output as it was given)."""
  assert len(outs) == len(expected)
  for o, e in zip(outs, expected):
    assert type(o) is core.Array or not arrays
    a, b = core.get_aval(o), core.get_aval(e)
    assert (a.shape, a.dtype, a.weak_type) == (b.shape, b.dtype, b.weak_type), (a, b)
    np.testing.assert_array_equal(np.asarray(o), np.asarray(e))


_C = np.arange(3, dtype=f32) + 0.5


def _with_cond(x):
  return lax.cond(x.sum() > 0, lambda x: jnp.sin(x), lambda x: -x, x) * 2.0


def _with_scan(x):
  carry, ys = lax.scan(lambda c, x: (c * 0.5 + x, c - x), 1.0, x)
  return carry, ys


def _with_while(x):
  return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * 1.5 + 1.0), (0, x))


def _with_jit(x):
  inner = jax.jit(lambda a, b: (a * b, a - b))
  p, m = inner(x, x + 1.0)
  return p + m


CASES = {
    "literals_and_repeated_vars": (lambda x: x * x + 2.0, (np.arange(3, dtype=f32),)),
    "python_scalar_weak": (lambda x: x * 3 + 1, (2.0,)),
    "multiple_outputs_and_input_out": (lambda x, y: (x + y, x - y, y),
                                       (np.ones(3, f32), np.arange(3, dtype=f32))),
    "consts": (lambda x: x * jnp.asarray(_C) + jnp.asarray(_C).sum(), (np.ones(3, f32),)),
    "integers_and_bools": (lambda i: (i * 2 + 1, i > 2, (i % 3).astype(np.float32)),
                           (np.arange(6, dtype=np.int32),)),
    "cond": (_with_cond, (np.linspace(-1, 2, 4, dtype=f32),)),
    "scan": (_with_scan, (np.arange(5, dtype=f32),)),
    "while": (_with_while, (np.float32(0.25),)),
    "jit": (_with_jit, (np.arange(4, dtype=f32),)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_impl_path_equals_binding_each_equation(name):
  f, args = CASES[name]
  closed = jax.make_jaxpr(f)(*args)
  core.check_jaxpr(closed)
  expected = _bind_each(closed.jaxpr, closed.consts, *args)
  _same(eval_jaxpr(closed.jaxpr, closed.consts, *args), expected)
  # The bind path of the same program, under the eval trace.
  with set_current_trace(eval_trace):
    _same(program_of(closed.jaxpr).bind(closed.consts, args), expected, arrays=False)
  # And the raw impl path (NumPy values in and out, what loop bodies use).
  values = program_of(closed.jaxpr).runner(closed.consts)(
      [np.asarray(core.canonical_value(a)) for a in args])
  for v, e in zip(values, expected):
    assert type(v) is np.ndarray and v.dtype == e.dtype
    np.testing.assert_array_equal(v, np.asarray(e))


def test_literal_and_dropped_outputs():
  x = np.arange(4, dtype=f32)
  closed = jax.make_jaxpr(lambda x: (jnp.sin(x), jnp.cos(x)))(x)
  sin_eqn, cos_eqn = closed.jaxpr.eqns
  # cos's result dropped; a literal returned directly.
  lit = Literal(np.float32(2.0), core.ShapedArray((), np.dtype(f32), weak_type=True))
  jaxpr = Jaxpr([], closed.jaxpr.invars, [sin_eqn.outvars[0], lit],
                [sin_eqn, cos_eqn.replace(outvars=[DropVar(cos_eqn.outvars[0].aval)])])
  out_sin, out_lit = eval_jaxpr(jaxpr, [], x)
  np.testing.assert_array_equal(np.asarray(out_sin), np.sin(x))
  assert out_lit.weak_type and float(out_lit) == 2.0
  _same([out_sin, out_lit], _bind_each(jaxpr, [], x))


def test_an_input_returned_unchanged_is_the_same_array():
  x, y = jnp.asarray(np.ones((), f32)), jnp.asarray(np.float32(3))
  closed = jax.make_jaxpr(lambda x, y: (y, x * 2.0))(x, y)
  out_y, _ = eval_jaxpr(closed.jaxpr, closed.consts, x, y)
  assert out_y is y


def test_arguments_of_other_types_are_bound():
  # A jaxpr traced on scalars and evaluated on vectors (as the scatter
  # combiners do): only binding gives the right result types.
  closed = jax.make_jaxpr(lambda x: jnp.sin(x) * 2.0)(np.float32(1))
  v = np.linspace(0, 1, 5, dtype=f32)
  (out,) = eval_jaxpr(closed.jaxpr, [], v)
  assert out.shape == (5,)
  np.testing.assert_allclose(np.asarray(out), np.sin(v) * 2.0, rtol=1e-6)
  # A strong argument where the jaxpr has a weak one keeps binding's types.
  closed = jax.make_jaxpr(lambda x: x + 1)(2.0)
  (out,) = eval_jaxpr(closed.jaxpr, [], jnp.asarray(np.float32(2)))
  assert not out.weak_type


def test_wrong_argument_count_names_eval_jaxpr():
  closed = jax.make_jaxpr(lambda x, y: x + y)(1.0, 2.0)
  with pytest.raises(TypeError, match="eval_jaxpr: jaxpr takes 0 constants and 2 arguments"):
    eval_jaxpr(closed.jaxpr, [], 1.0)


# ---------------------------------------------------------------- bind path
def _poly(x):
  return jnp.sin(x) * x + jnp.exp(-x) * 3.0


def test_eval_under_jvp_vmap_and_grad_transforms_the_program():
  x = np.linspace(-1, 1, 4, dtype=f32)
  closed = jax.make_jaxpr(_poly)(x)

  def evaluated(x):
    return eval_jaxpr(closed.jaxpr, closed.consts, x)[0]

  t = np.ones_like(x)
  p, tan = jax.jvp(evaluated, (x,), (t,))
  p_ref, tan_ref = jax.jvp(_poly, (x,), (t,))
  np.testing.assert_allclose(np.asarray(p), np.asarray(p_ref), rtol=1e-6)
  np.testing.assert_allclose(np.asarray(tan), np.asarray(tan_ref), rtol=1e-6)
  xs = np.stack([x, x * 2.0])
  np.testing.assert_allclose(np.asarray(jax.vmap(evaluated)(xs)),
                             np.asarray(jax.vmap(_poly)(xs)), rtol=1e-6)
  np.testing.assert_allclose(np.asarray(jax.grad(lambda x: evaluated(x).sum())(x)),
                             np.asarray(jax.grad(lambda x: _poly(x).sum())(x)), rtol=1e-6)
  staged = jax.make_jaxpr(evaluated)(x)
  assert [e.primitive.name for e in staged.eqns] == [e.primitive.name for e in closed.eqns]


def test_on_step_sees_every_equation_in_order():
  closed = jax.make_jaxpr(_poly)(np.ones(3, f32))
  seen = []
  (out,) = eval_jaxpr(closed.jaxpr, closed.consts, np.ones(3, f32), on_step=seen.append)
  assert seen == list(closed.jaxpr.eqns)
  np.testing.assert_allclose(np.asarray(out), np.asarray(_poly(np.ones(3, f32))), rtol=1e-6)


# -------------------------------------------------------------- debug flags
def _nan_in_log(x):
  return jnp.log(x) * 0.0 + 1.0


def test_debug_nans_names_the_primitive_in_jit_interpreted_code():
  f = jax.jit(_nan_in_log)
  x = np.array([1.0, -1.0], f32)
  assert config.read("openjax_executor") == "interpreter"
  np.testing.assert_array_equal(np.isnan(np.asarray(f(x))), [False, True])
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError, match=r"invalid value \(nan\) encountered in log"):
      f(x)
    # A tiered first call evaluates the jit's jaxpr the same way.
    closed = jax.make_jaxpr(_nan_in_log)(x)
    with interpreting_first_call():
      with pytest.raises(FloatingPointError, match="encountered in log"):
        eval_jaxpr(closed.jaxpr, closed.consts, x)


def test_debug_nans_and_infs_inside_scan_and_while_bodies():
  xs = np.array([1.0, 2.0, -1.0], f32)

  def scanned(xs):
    return lax.scan(lambda c, x: (c + jnp.sqrt(x), c), 0.0, xs)

  def looped(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, jnp.log(c[1] - 1.0)),
                          (0, x))

  assert np.isnan(float(scanned(xs)[0]))
  with jax.debug_nans(True):
    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
      scanned(xs)
    with pytest.raises(FloatingPointError, match="encountered in sqrt"):
      jax.jit(scanned)(xs)
    with pytest.raises(FloatingPointError, match="encountered in log"):
      looped(np.float32(0.5))
  with config.override("jax_debug_infs", True):
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
      lax.scan(lambda c, x: (c, 1.0 / x), 0.0, np.array([1.0, 0.0], f32))


# ------------------------------------------------------------ dead values
@pytest.fixture
def capture_and_probe():
  """Two test primitives: ``capture`` makes a new (big) array and keeps a
  weak reference to it; ``probe`` records whether that array is dead."""
  refs, dead = [], []
  capture_p, probe_p = Primitive("test_program_capture"), Primitive("test_program_probe")
  for p in (capture_p, probe_p):
    p.def_abstract_eval(lambda x: [x])

  @capture_p.def_impl
  def _capture_impl(x):
    y = np.asarray(x) * 2
    refs.append(weakref.ref(y))
    return [y]

  @probe_p.def_impl
  def _probe_impl(x):
    dead.append(refs[-1]() is None)
    return [x]

  def f(x):
    y = capture_p.bind1(x)
    return probe_p.bind1(jnp.sum(y)) + 1.0
  yield f, dead
  del core.registry["test_program_capture"], core.registry["test_program_probe"]


def test_a_dead_intermediate_is_released_before_the_program_ends(capture_and_probe):
  f, dead = capture_and_probe
  x = np.ones(100_000, f32)
  closed = jax.make_jaxpr(f)(x)
  expected = 2.0 * x.size + 1.0
  (out,) = eval_jaxpr(closed.jaxpr, closed.consts, x)              # impl path
  assert float(out) == expected
  with set_current_trace(eval_trace):
    (out,) = program_of(closed.jaxpr).bind(closed.consts, [x])     # bind path
  assert float(out) == expected
  assert float(jax.jit(f)(x)) == expected                          # jit's impl
  assert dead == [True, True, True]


# ------------------------------------------------------- one evaluator
def test_loops_and_jit_run_through_the_program(monkeypatch):
  # Every runner of kernel steps (``Program.runner``, the while loop's
  # ``kernel_while_runner``) takes its steps from ``Program.stepper``.
  runs = []
  stepper = Program.stepper

  def counting(self, consts, *args, **kwargs):
    runs.append(self)
    return stepper(self, consts, *args, **kwargs)
  monkeypatch.setattr(Program, "stepper", counting)
  x = np.arange(3, dtype=f32)
  lax.scan(lambda c, x: (c + x, c), 0.0, x)
  assert len(runs) == 1
  lax.while_loop(lambda c: c < 3.0, lambda c: c + 1.0, 0.0)
  assert len(runs) == 3
  lax.cond(True, jnp.sin, jnp.cos, x)
  assert len(runs) == 4
  jax.jit(lambda x: x * 2.0)(x)
  assert len(runs) == 5


_OLD_EVALUATORS = ("_NumpyBody", "_NumpyProgram", "eval_jaxpr_with_sources", "eval_jit_jaxpr")


def _equation_loops(path: pathlib.Path) -> list[int]:
  """Lines of loops over a jaxpr's equations that bind their primitives or
  run their impls."""
  lines = []
  for node in ast.walk(ast.parse(path.read_text())):
    if not isinstance(node, ast.For) or "eqns" not in ast.unparse(node.iter):
      continue
    calls = {n.func.attr for n in ast.walk(node)
             if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    impl = any(isinstance(n, ast.Constant) and n.value == "impl" for n in ast.walk(node))
    if impl or calls & {"bind", "bind1", "impl", "process_primitive"}:
      lines.append(node.lineno)
  return lines


def test_there_is_one_jaxpr_evaluator():
  found = {}
  for path in sorted(SRC.rglob("*.py")):
    text = path.read_text()
    rel = path.relative_to(SRC).as_posix()
    assert not [n for n in _OLD_EVALUATORS if n in text], rel
    if _equation_loops(path):
      found[rel] = _equation_loops(path)
    # Impls are read only by the eval trace and the program.
    if rel not in ("core/primitive.py", "core/trace.py", "core/program.py"):
      assert 'rule("impl")' not in text and ".impl(" not in text, rel
  # The program, and the transpose interpreter's forward sweep over the
  # non-linear equations of a jaxpr it transposes (a transformation, not an
  # evaluation).
  assert sorted(found) == ["core/program.py", "interpreters/transpose.py"], found
  assert core.eval_jaxpr is program.eval_jaxpr
