"""The compiler path: StableHLO text, lowering rules and contexts, IREE
compilation (flags, diagnostics, options), and compiled jit results
against the interpreter.

Family lowering rules arrive later, so these tests use test-only primitives
(``t_add``, ``t_mul``, ...) with impl, abstract-eval and lowering rules.
They are taken out of the primitive registry at once (the registry test
demands an op-table row for every registered primitive). Other compiler
test modules import them from here.
"""
import contextlib
import pathlib
import subprocess
import sys
import textwrap
import threading

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src.config import config
from openjax._src.core import ClosedJaxpr, Primitive, ShapedArray, eval_jaxpr, registry
from openjax._src.lowering import (ModuleBuilder, dense_attr, enum_attr,
                                   lower_jaxpr_to_module, tensor_type)
from openjax._src.control.closed_call import jit_p
from openjax._src.runtime import compiler
from openjax._src.runtime.executable import Executable
from openjax._src.runtime.pipeline import parse_module

f32 = np.float32


# ------------------------------------------------------------ test primitives
def _new(name, **kw) -> Primitive:
  p = Primitive(name, **kw)
  del registry[name]    # test-only: not part of openjax's op table
  return p


def _binop(name, fn, op):
  p = _new(name)
  p.def_impl(lambda x, y: [fn(x, y)])
  p.def_abstract_eval(lambda x, y: [ShapedArray(x.shape, x.dtype)])
  p.def_lower(lambda ctx, x, y: [ctx.op(op, [x, y], ctx.avals_out[0])])
  return p


t_add = _binop("t_add", np.add, "stablehlo.add")
t_mul = _binop("t_mul", np.multiply, "stablehlo.multiply")

t_sin = _new("t_sin")
t_sin.def_impl(lambda x: [np.sin(x)])
t_sin.def_abstract_eval(lambda x: [ShapedArray(x.shape, x.dtype)])
t_sin.def_lower(lambda ctx, x: [ctx.op("stablehlo.sine", [x], ctx.avals_out[0])])

# scale(x, s): x * s with s a Python float parameter (exercises ctx.full).
t_scale = _new("t_scale")
t_scale.def_impl(lambda x, *, s: [(x * s).astype(x.dtype)])
t_scale.def_abstract_eval(lambda x, *, s: [ShapedArray(x.shape, x.dtype)])


@t_scale.def_lower
def _t_scale_lower(ctx, x, *, s):
  aval = ctx.avals_out[0]
  c = ctx.full(s, aval.shape, aval.dtype)
  return [ctx.op("stablehlo.multiply", [x, c], aval)]


# reduce_sum over ``axes`` (exercises regions).
t_reduce_sum = _new("t_reduce_sum")
t_reduce_sum.def_impl(lambda x, *, axes: [np.sum(x, axis=axes, dtype=x.dtype)])
t_reduce_sum.def_abstract_eval(lambda x, *, axes: [ShapedArray(
    tuple(d for i, d in enumerate(x.shape) if i not in axes), x.dtype)])


@t_reduce_sum.def_lower
def _t_reduce_sum_lower(ctx, x, *, axes):
  out = ctx.avals_out[0]
  scalar = ctx.tensor_type((), out.dtype)
  init = ctx.constant(np.zeros((), out.dtype))
  with ctx.region([scalar, scalar]) as body:
    a, b = body.args
    ctx.ret([ctx.op("stablehlo.add", [a, b], scalar)])
  return [ctx.op("stablehlo.reduce", [x, init], out, attrs={"dimensions": tuple(axes)},
                 regions=[body])]


# twice(x; jaxpr) = jaxpr(jaxpr(x)): a higher-order primitive.
t_twice = _new("t_twice")


@t_twice.def_impl
def _t_twice_impl(x, *, jaxpr):
  y, = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, x)
  return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, y)


t_twice.def_abstract_eval(lambda x, *, jaxpr: list(jaxpr.out_avals))


@t_twice.def_lower
def _t_twice_lower(ctx, x, *, jaxpr):
  sym = ctx.lower_jaxpr_as_function(jaxpr, "twice_body")
  y, = ctx.call(sym, [x], ctx.avals_out)
  return ctx.call(ctx.lower_jaxpr_as_function(jaxpr, "twice_body"), [y], ctx.avals_out)


# repeat(x; n, jaxpr): apply jaxpr n times in a stablehlo.while (two regions,
# constants inside regions, a jaxpr lowered inline into a region).
t_repeat = _new("t_repeat")


@t_repeat.def_impl
def _t_repeat_impl(x, *, n, jaxpr):
  for _ in range(n):
    x, = eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, x)
  return [x]


t_repeat.def_abstract_eval(lambda x, *, n, jaxpr: [x])


@t_repeat.def_lower
def _t_repeat_lower(ctx, x, *, n, jaxpr):
  i32, xt = ctx.tensor_type((), np.int32), ctx.aval_type(ctx.avals_in[0])
  with ctx.region([i32, xt]) as cond:
    i, _ = cond.args
    lt = ctx.op("stablehlo.compare", [i, ctx.constant(np.int32(n))], ctx.tensor_type((), bool),
                attrs={"comparison_direction": enum_attr("comparison_direction", "LT")})
    ctx.ret([lt])
  with ctx.region([i32, xt]) as body:
    i, v = body.args
    v2, = ctx.lower_jaxpr_inline(jaxpr, [v])
    ctx.ret([ctx.op("stablehlo.add", [i, ctx.constant(np.int32(1))], i32), v2])
  _, out = ctx.op("stablehlo.while", [ctx.constant(np.int32(0)), x], [i32, xt],
                  regions=[cond, body])
  return [out]


# switch(i, x; branches): stablehlo.case with branch regions capturing x.
t_switch = _new("t_switch")


@t_switch.def_impl
def _t_switch_impl(i, x, *, branches):
  b = branches[int(np.clip(i, 0, len(branches) - 1))]
  return eval_jaxpr(b.jaxpr, b.consts, x)


t_switch.def_abstract_eval(lambda i, x, *, branches: [x])


@t_switch.def_lower
def _t_switch_lower(ctx, i, x, *, branches):
  regions = []
  for b in branches:
    with ctx.region([]) as r:
      ctx.ret(ctx.lower_jaxpr_inline(b, [x]))
    regions.append(r)
  return [ctx.op("stablehlo.case", [i], ctx.avals_out[0], regions=regions)]


t_nolower = _new("t_nolower")
t_nolower.def_impl(lambda x: [x])
t_nolower.def_abstract_eval(lambda x: [x])

t_badtype = _new("t_badtype")
t_badtype.def_impl(lambda x: [x])
t_badtype.def_abstract_eval(lambda x: [x])
t_badtype.def_lower(lambda ctx, x: [ctx.convert(x, np.int32, ctx.avals_in[0].shape)])

t_badop = _new("t_badop")
t_badop.def_impl(lambda x: [x])
t_badop.def_abstract_eval(lambda x: [x])
# stablehlo.sine of an integer tensor: well-formed text, rejected by the verifier.
t_badop.def_lower(lambda ctx, x: [ctx.op("stablehlo.sine", [x], ctx.avals_out[0])])


def add(x, y):
  return t_add.bind1(x, y)


def mul(x, y):
  return t_mul.bind1(x, y)


def sin(x):
  return t_sin.bind1(x)


@contextlib.contextmanager
def iree_executor(cache_dir):
  """Run jitted functions through IREE with a private disk cache."""
  old = (config.read("openjax_executor"), config.read("jax_compilation_cache_dir"))
  config.update("openjax_executor", "iree")
  config.update("jax_compilation_cache_dir", str(cache_dir))
  try:
    yield
  finally:
    config.update("openjax_executor", old[0])
    config.update("jax_compilation_cache_dir", old[1])


@pytest.fixture(autouse=True, scope="module")
def _iree(tmp_path_factory):
  with iree_executor(tmp_path_factory.getbasetemp() / "openjax_cache"):
    yield


def test_test_primitives_are_not_registered():
  for name in ("t_add", "t_mul", "t_sin", "t_reduce_sum", "t_twice", "t_scale", "t_repeat",
               "t_switch"):
    assert name not in registry


# ------------------------------------------------------------ MLIR text
def test_tensor_types_for_every_dtype():
  cases = {np.bool_: "i1", np.int8: "i8", np.uint16: "ui16", np.uint64: "ui64",
           np.int64: "i64", np.float16: "f16", ml_dtypes.bfloat16: "bf16", np.float64: "f64",
           np.complex64: "complex<f32>", np.complex128: "complex<f64>",
           ml_dtypes.float8_e4m3fn: "f8E4M3FN", ml_dtypes.float8_e5m2: "f8E5M2"}
  for dt, elt in cases.items():
    assert tensor_type((2, 3), dt) == f"tensor<2x3x{elt}>"
  assert tensor_type((), np.float32) == "tensor<f32>"


def test_dense_attribute_forms():
  assert dense_attr(np.float32(2.0)) == "dense<2.0> : tensor<f32>"
  assert dense_attr(np.full((2, 2), 1.5, f32)) == "dense<1.5> : tensor<2x2xf32>"
  assert dense_attr(np.float32(np.nan)) == "dense<0x7FC00000> : tensor<f32>"
  assert dense_attr(np.array([True, False])) == "dense<[true, false]> : tensor<2xi1>"
  assert dense_attr(np.complex64(1 + 2j)) == "dense<(1.0, 2.0)> : tensor<complex<f32>>"
  assert dense_attr(np.uint32(4000000000)) == "dense<4000000000> : tensor<ui32>"
  assert dense_attr(np.array([1.0, 2.0], f32)) == 'dense<"0x0000803F00000040"> : tensor<2xf32>'
  assert dense_attr(np.zeros((0, 3), f32)) == "dense<> : tensor<0x3xf32>"
  assert dense_attr(np.array(-0.0, f32)) == "dense<-0.0> : tensor<f32>"


_CONSTANTS = [
    np.array([True, False, True]), np.array(True),
    np.array([-128, 5, 127], np.int8), np.array([0, 255, 7], np.uint8),
    np.array([-5, 40000, 2**31 - 1], np.int32), np.array([2**63 - 1, -2**63], np.int64),
    np.array([2**64 - 1, 3], np.uint64), np.array([0, 4000000000], np.uint32),
    np.array([1.5, -np.inf, np.nan, -0.0, 1e-40], f32), np.full(3, 0.1, f32),
    np.array([0.1, 1e300, -np.inf], np.float64),
    np.array([1.5, 65504, np.nan], np.float16),
    np.array([1.5, -3.0, np.inf], ml_dtypes.bfloat16), np.full(2, 0.1, ml_dtypes.bfloat16),
    np.array([1 + 2j, np.nan - 1j], np.complex64), np.array(3 - 0.5j, np.complex128),
    np.array([1.0, -2.0, 448.0], ml_dtypes.float8_e4m3fn),
    np.array([1.0, -2.0, 0.125], ml_dtypes.float8_e5m2),
    np.arange(24, dtype=np.int16).reshape(2, 3, 4), np.zeros((0, 2), f32),
]


def test_constants_of_every_dtype_round_trip_through_iree():
  m = ModuleBuilder("jit_constants")
  fn = m.new_function("main", [], public=True)
  fn.ret([fn.constant(c) for c in _CONSTANTS])
  _, vmfb = compiler.compile_module(m.text(), name="constants")
  avals = [ShapedArray(c.shape, c.dtype) for c in _CONSTANTS]
  ex = Executable("constants", vmfb, [], avals, "constants")
  for c, out in zip(_CONSTANTS, ex.execute([])):
    got = np.asarray(out)
    assert got.dtype == c.dtype
    assert got.tobytes() == np.ascontiguousarray(c).tobytes(), (c, got)


# ------------------------------------------------------------ lowering
def _jaxpr(f, *args) -> ClosedJaxpr:
  return jax.make_jaxpr(f)(*args)


def test_module_structure_and_parse():
  x = np.ones(3, f32)
  text = lower_jaxpr_to_module(_jaxpr(lambda a, b: add(sin(a), b), x, x), "f")
  assert text.startswith("module @jit_f {")
  assert "func.func public @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>)" in text
  assert '"stablehlo.sine"' in text and '"stablehlo.add"' in text
  assert parse_module(text) is not None


def test_literals_and_consts_become_constants():
  c = np.arange(3, dtype=f32)
  text = lower_jaxpr_to_module(_jaxpr(lambda a: add(t_scale.bind1(a, s=2.5), c),
                                      np.ones(3, f32)), "g")
  assert "dense<2.5> : tensor<f32>" in text
  assert 'dense<"0x000000000000803F00000040"> : tensor<3xf32>' in text
  assert parse_module(text) is not None


def test_missing_lowering_rule_names_the_primitive():
  f = jax.jit(lambda x: t_nolower.bind1(x))
  with pytest.raises(NotImplementedError,
                     match="MLIR translation rule for primitive 't_nolower' not found"):
    f(np.ones(2, f32))


def test_rule_returning_the_wrong_type_is_named():
  with pytest.raises(TypeError, match="lowering rule for 't_badtype' returned tensor<2xi32>"):
    jax.jit(lambda x: t_badtype.bind1(x)).lower(np.ones(2, f32))


def test_compile_error_carries_diagnostics_and_prints_nothing(capfd):
  f = jax.jit(lambda x: t_badop.bind1(x))
  with pytest.raises(compiler.CompilationError) as info:
    f(np.ones(2, np.int32))
  msg = str(info.value)
  assert "jit of <lambda>: IREE failed to compile" in msg
  assert "error:" in msg and "sine" in msg
  out, err = capfd.readouterr()
  assert out == "" and err == ""


def test_nested_jit_is_a_private_function_and_call():
  inner = jax.jit(lambda x: sin(x))
  text = jax.jit(lambda x: add(inner(x), x)).lower(np.ones(2, f32)).as_text()
  assert "func.func private @_lambda_" in text
  assert "call @_lambda_" in text
  inline = jax.jit(lambda x: sin(x), inline=True)
  text = jax.jit(lambda x: add(inline(x), x)).lower(np.ones(2, f32)).as_text()
  assert "call" not in text


def test_higher_order_rule_lowers_its_jaxpr_once():
  body = _jaxpr(lambda v: t_scale.bind1(v, s=3.0), np.ones(2, f32))
  f = jax.jit(lambda x: t_twice.bind1(x, jaxpr=body))
  text = f.lower(np.ones(2, f32)).as_text()
  assert text.count("func.func private @twice_body") == 1
  assert text.count("call @twice_body") == 2
  np.testing.assert_allclose(np.asarray(f(np.arange(2, dtype=f32))), [0.0, 9.0])


def test_while_and_case_regions():
  body = _jaxpr(lambda v: add(t_scale.bind1(v, s=2.0), np.ones(3, f32)), np.ones(3, f32))
  x = np.arange(3, dtype=f32)
  f = jax.jit(lambda v: t_repeat.bind1(v, n=4, jaxpr=body))
  ref = x
  for _ in range(4):
    ref = 2 * ref + 1
  np.testing.assert_array_equal(np.asarray(f(x)), ref)
  branches = (_jaxpr(lambda v: sin(v), x), _jaxpr(lambda v: mul(v, v), x),
              _jaxpr(lambda v: t_scale.bind1(v, s=-1.0), x))
  g = jax.jit(lambda i, v: t_switch.bind1(i, v, branches=branches))
  for i, expect in enumerate([np.sin(x), x * x, -x]):
    np.testing.assert_allclose(np.asarray(g(np.int32(i), x)), expect, rtol=1e-6)
  assert "stablehlo.case" in g.lower(np.int32(0), x).as_text()


# ------------------------------------------------------------ compiled results
def _check_against_interpreter(f, *args):
  compiled = jax.jit(f)(*args)
  with jax.disable_jit():
    expected = f(*args)
  for c, e in zip(jax.tree.leaves(compiled), jax.tree.leaves(expected)):
    assert isinstance(c, jax.Array)
    assert c.dtype == np.asarray(e).dtype and c.shape == np.shape(e)
    np.testing.assert_allclose(np.asarray(c), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_results_match_the_interpreter():
  x = np.linspace(-2, 2, 12, dtype=f32).reshape(3, 4)
  _check_against_interpreter(lambda a, b: add(sin(a), mul(a, b)), x, x + 1)
  _check_against_interpreter(lambda a: {"s": t_reduce_sum.bind1(a, axes=(1,)),
                                        "t": (t_reduce_sum.bind1(a, axes=(0, 1)), a)}, x)
  _check_against_interpreter(lambda a: t_scale.bind1(a, s=-2.0), np.arange(5, dtype=np.int32))


def test_scalars_bools_and_empty_arrays():
  _check_against_interpreter(lambda a, b: add(a, b), np.float32(1.5), np.float32(2))
  _check_against_interpreter(lambda a, b: add(a, b), np.zeros((0, 3), f32), np.zeros((0, 3), f32))
  out = jax.jit(lambda a: a)(np.array([True, False]))
  assert out.dtype == np.bool_ and np.asarray(out).tolist() == [True, False]


def test_weak_types_and_python_scalars():
  out = jax.jit(lambda a, b: (add(a, b), b))(1.0, 2.0)
  assert out[0].dtype == f32 and float(out[0]) == 3.0
  assert out[1].weak_type and float(out[1]) == 2.0
  out = jax.jit(lambda a, b: mul(a, b))(3, 4)
  assert out.dtype == np.int32 and int(out) == 12


def test_unaligned_and_noncontiguous_inputs_do_not_crash():
  base = np.arange(40, dtype=f32)
  unaligned = base[1:17]
  assert unaligned.ctypes.data % 64 != 0
  strided = base[::2][:16]
  fortran = np.asfortranarray(np.arange(16, dtype=f32).reshape(4, 4)).reshape(16, order="F")
  readonly = np.arange(16, dtype=f32)
  readonly.flags.writeable = False
  f = jax.jit(lambda a, b: add(a, b))
  for a in (unaligned, strided, fortran, readonly):
    for b in (a, jax.device_put(a)):
      np.testing.assert_array_equal(np.asarray(f(b, b)), a + a)


def test_input_mutated_after_the_call_is_not_seen():
  x = np.ones(1000, f32)
  out = jax.jit(lambda a: mul(a, a))(x)
  x[:] = 7
  np.testing.assert_array_equal(np.asarray(out), np.ones(1000, f32))


def test_disable_jit_runs_python_op_by_op():
  seen = []

  def f(x):
    seen.append(type(x).__name__)
    return sin(x)
  with jax.disable_jit():
    jax.jit(f)(np.ones(2, f32))
  assert seen == ["ndarray"]


def test_jit_p_impl_compiles_under_the_eval_trace():
  closed = _jaxpr(lambda a: mul(a, a), np.ones(3, f32))
  before = compiler.stats["compiles"] + compiler.stats["disk_hits"] + compiler.stats["memory_hits"]
  out, = jit_p.bind(np.arange(3, dtype=f32), jaxpr=closed, name="sq", donated_invars=(False,))
  after = compiler.stats["compiles"] + compiler.stats["disk_hits"] + compiler.stats["memory_hits"]
  assert after == before + 1
  np.testing.assert_array_equal(np.asarray(out), [0, 1, 4])


def test_eager_operations_on_compiled_results():
  out = jax.jit(lambda a: mul(a, a))(np.arange(3, dtype=f32))
  np.testing.assert_array_equal(np.asarray(lax.add(out, 1.0)), [1, 2, 5])


def test_executor_flag_is_validated():
  with pytest.raises(ValueError, match="openjax_executor must be one of"):
    config.update("openjax_executor", "xla")


def test_interpreter_executor_still_interprets():
  old = config.read("openjax_executor")
  config.update("openjax_executor", "interpreter")
  try:
    out = jax.jit(lambda x: t_nolower.bind1(x))(np.ones(2, f32))   # no rule needed
    assert np.asarray(out).tolist() == [1.0, 1.0]
  finally:
    config.update("openjax_executor", old)


def test_vmap_of_jit_batches_the_inner_jaxpr():
  old = config.read("openjax_executor")
  config.update("openjax_executor", "interpreter")     # lax primitives lack lowerings yet
  try:
    f = jax.jit(lambda a, b: lax.add(lax.sin(a), b))
    x, y = np.arange(6, dtype=f32).reshape(2, 3), np.ones(3, f32)
    out = jax.vmap(f, in_axes=(0, None))(x, y)
    np.testing.assert_allclose(np.asarray(out), np.sin(x) + y, rtol=1e-6)
    jaxpr = jax.make_jaxpr(jax.vmap(f, in_axes=(0, None)))(x, y)
    assert [e.primitive.name for e in jaxpr.eqns] == ["jit"]
    out = jax.vmap(jax.jit(lambda a: lax.mul(a, 2.0)), in_axes=1)(x)
    np.testing.assert_array_equal(np.asarray(out), 2 * x.T)
  finally:
    config.update("openjax_executor", old)


# ------------------------------------------------------------ flags and options
def test_flags():
  flags = compiler.compile_flags("module {}")
  for f in compiler.BASE_FLAGS:
    assert f in flags
  assert "--iree-input-demote-f64-to-f32=false" not in flags
  assert "--iree-input-demote-f64-to-f32=false" in compiler.compile_flags("tensor<2xf64>")
  with jax.enable_x64():
    assert "--iree-llvmcpu-link-embedded=false" in compiler.compile_flags("module {}")
  dot = '%0 = "stablehlo.dot_general"(%a, %b) : (tensor<2x2xcomplex<f32>>, ...'
  assert compiler.compile_flags(dot)[-1] == "--iree-opt-data-tiling=false"
  assert compiler.compile_flags("m", {"iree-opt-level": "O1"})[-1] == "--iree-opt-level=O1"
  with pytest.warns(UserWarning, match="XLA option"):
    assert compiler.compile_flags("m", {"xla_cpu_foo": True}) == compiler.BASE_FLAGS + (
        "--iree-opt-data-tiling=false",)


def test_data_tiling_only_for_large_matrix_products():
  def dot(n):
    t = f"tensor<{n}x{n}xf32>"
    return (f"%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
            f"({t}, {t}) -> {t}")
  assert "--iree-opt-data-tiling=false" in compiler.compile_flags(dot(64))
  assert "--iree-opt-data-tiling" in compiler.compile_flags(dot(1024))
  assert "--iree-opt-data-tiling=false" not in compiler.compile_flags(dot(1024))


def test_no_data_tiling_where_products_feed_complex_numbers():
  # IREE fuses a data-tiled product's unpacking into the stablehlo.complex
  # reading it and cannot compile the complex padding value (jit(rfft) of 1e6
  # points, whose real DFT products make complex values, failed to compile);
  # both printed forms of the op are seen.
  big = "tensor<1024x1024xf32>"
  dot = (f"%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : "
         f"({big}, {big}) -> {big}\n")
  for make in ("%1 = stablehlo.complex %0, %0 : tensor<1024x1024xcomplex<f32>>",
               '%1 = "stablehlo.complex"(%0, %0) : (...) -> tensor<1024x1024xcomplex<f32>>'):
    assert compiler.compile_flags(dot + make)[-1] == "--iree-opt-data-tiling=false"
  assert "--iree-opt-data-tiling=false" not in compiler.compile_flags(dot)


def test_large_non_power_of_two_fft_compiles():
  x = np.random.default_rng(0).standard_normal(1_000_000).astype(f32)
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    got = np.asarray(jax.jit(jax.numpy.fft.rfft)(x))
  want = np.fft.rfft(x.astype(np.float64))
  assert float(np.abs(got - want).max() / np.abs(want).max()) < 1e-5


def test_compiler_options_reach_iree():
  f = jax.jit(lambda x: sin(x), compiler_options={"iree-opt-level": "O1"})
  np.testing.assert_allclose(np.asarray(f(np.ones(2, f32))), np.sin(np.ones(2, f32)))
  bad = jax.jit(lambda x: sin(x), compiler_options={"iree-no-such-flag": 1})
  with pytest.raises(compiler.CompilationError, match="rejected the compiler flags"):
    bad(np.ones(2, f32))


def test_x64_keeps_float64():
  with jax.enable_x64():
    x = np.linspace(0, 3, 7)
    out = jax.jit(lambda a: sin(a))(x)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.asarray(out), np.sin(x), rtol=1e-14)


# ------------------------------------------------------------ threads
def test_four_threads_calling_jitted_functions():
  fs = [jax.jit(lambda x: mul(x, x)), jax.jit(lambda x: add(x, x))]
  errors = []

  def work(i):
    try:
      for k in range(30):
        v = fs[k % 2](np.full(3, i, f32))
        expect = i * i if k % 2 == 0 else 2 * i
        assert np.all(np.asarray(v) == expect)
    except Exception as e:  # noqa: BLE001
      errors.append(e)
  threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
  for t in threads:
    t.start()
  for t in threads:
    t.join()
  assert not errors


def test_process_exits_cleanly_with_arrays_alive(tmp_path):
  # Arrays (and views of them) alive at exit must not crash teardown, and
  # nothing may be printed.
  script = textwrap.dedent(f"""
      import numpy as np, openjax as jax
      from tests.test_compiler import mul, iree_executor
      with iree_executor({str(tmp_path)!r}):
        f = jax.jit(lambda x: mul(x, x))
        a = f(np.arange(4, dtype=np.float32))
        view = np.asarray(f(a))
        pending = [f(a) for _ in range(50)]
        host = f(jax.device_put(np.arange(4, dtype=np.float32)))
      print("ok", view.tolist())
  """)
  r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                     timeout=300, cwd=str(pathlib.Path(__file__).resolve().parent.parent))
  assert r.returncode == 0, r.stderr
  assert r.stdout.strip() == "ok [0.0, 1.0, 16.0, 81.0]"
  assert r.stderr == ""
