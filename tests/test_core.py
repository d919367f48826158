"""Core: abstract values, primitives and rule slots, traces, the jaxpr IR,
its checker, evaluator and printer (golden strings in JAX's form)."""
import numpy as np
import pytest

import openjax as jax
from openjax import lax
from openjax._src import core
from openjax._src.core import (ClosedJaxpr, Jaxpr, JaxprEqn, JaxprTypeError, Literal,
                               Primitive, ShapedArray, Var, check_jaxpr, eval_jaxpr)
from openjax.errors import (ConcretizationTypeError, TracerArrayConversionError,
                            TracerBoolConversionError, TracerIntegerConversionError,
                            UnexpectedTracerError)

f32 = np.float32


# ------------------------------------------------------------------- avals
def test_shaped_array_str_short_and_repr():
  a = ShapedArray((3, 4), np.float32)
  assert a.str_short() == "f32[3,4]"
  assert ShapedArray((), np.int32).str_short() == "i32[]"
  assert ShapedArray((2,), np.bool_).str_short() == "bool[2]"
  assert ShapedArray((2,), jax.dtypes.bfloat16).str_short() == "bf16[2]"
  assert ShapedArray((1,), np.uint8).str_short() == "u8[1]"
  assert ShapedArray((1,), np.complex64).str_short() == "c64[1]"
  assert repr(ShapedArray((), np.float32, weak_type=True)) == \
      "ShapedArray(float32[], weak_type=True)"
  assert a.ndim == 2 and a.size == 12


def test_shaped_array_equality_includes_weak_type():
  assert ShapedArray((3,), np.float32) == ShapedArray((3,), np.float32)
  assert ShapedArray((3,), np.float32) != ShapedArray((3,), np.float32, True)
  assert hash(ShapedArray((3,), np.float32)) == hash(ShapedArray((3,), np.float32))


# --------------------------------------------------------------- printing
def test_print_single_line():
  jaxpr = jax.make_jaxpr(lambda x: lax.sin(x))(np.ones(3, f32))
  assert str(jaxpr) == "{ lambda ; a:f32[3]. let b:f32[3] = sin a in (b,) }"


def test_print_literal_and_weak_scalar_input():
  jaxpr = jax.make_jaxpr(lambda x: lax.mul(lax.sin(x), 2.0))(1.0)
  assert str(jaxpr) == \
      "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }"


def test_print_multi_line_when_long():
  def f(x, y):
    z = lax.add(lax.mul(x, y), lax.sin(x))
    return lax.cos(z), lax.exp(z)
  jaxpr = jax.make_jaxpr(f)(np.ones((2, 3), f32), np.ones((2, 3), f32))
  assert str(jaxpr) == """\
{ lambda ; a:f32[2,3] b:f32[2,3]. let
    c:f32[2,3] = mul a b
    d:f32[2,3] = sin a
    e:f32[2,3] = add c d
    f:f32[2,3] = cos e
    g:f32[2,3] = exp e
  in (f, g) }"""


def test_print_no_equations_and_literal_output():
  assert str(jax.make_jaxpr(lambda x: x)(1.0)) == "{ lambda ; a:f32[]. let  in (a,) }"
  assert str(jax.make_jaxpr(lambda x: (x, 1.0))(1.0)) == \
      "{ lambda ; a:f32[]. let  in (a, 1.0:f32[]) }"


def test_print_constvars_for_array_constants():
  c = np.arange(3, dtype=f32)
  jaxpr = jax.make_jaxpr(lambda x: lax.add(x, c))(np.ones(3, f32))
  assert str(jaxpr) == "{ lambda a:f32[3]; b:f32[3]. let c:f32[3] = add b a in (c,) }"
  assert len(jaxpr.consts) == 1
  np.testing.assert_array_equal(np.asarray(jaxpr.consts[0]), c)


def test_print_params_sorted_and_bracketed():
  jaxpr = jax.make_jaxpr(lambda x: lax.convert_element_type(x, np.int32))(np.ones(2, f32))
  assert str(jaxpr) == (
      "{ lambda ; a:f32[2]. let\n"
      "    b:i32[2] = convert_element_type[new_dtype=int32 weak_type=False] a\n"
      "  in (b,) }")


def test_print_nested_jit_names_vars_like_outer():
  inner = jax.jit(lambda y: lax.sin(y))
  jaxpr = jax.make_jaxpr(lambda x: lax.add(x, inner(x)))(1.0)
  assert str(jaxpr) == """\
{ lambda ; a:f32[]. let
    b:f32[] = jit[
      name=<lambda>
      jaxpr={ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }
    ] a
    c:f32[] = add a b
  in (c,) }"""


def test_pretty_printer_breaks_groups_that_do_not_fit():
  from openjax._src.core.pretty import brk, concat, group, nest, text
  doc = group(concat([text("aaaa"), brk(), text("bbbb")]))
  assert doc.format(width=20) == "aaaa bbbb"
  assert doc.format(width=5) == "aaaa\nbbbb"
  nested = group(nest(2, concat([text("x"), brk(), text("y")])))
  assert nested.format(width=1) == "x\n  y"


# ------------------------------------------------------- checking/evaluation
def _mul_jaxpr():
  a, b = Var(ShapedArray((3,), np.float32)), Var(ShapedArray((3,), np.float32))
  c = Var(ShapedArray((3,), np.float32))
  eqn = JaxprEqn([a, b], [c], lax.mul_p, {})
  return Jaxpr([], [a, b], [c], [eqn])


def test_eval_jaxpr_and_check():
  jaxpr = _mul_jaxpr()
  check_jaxpr(jaxpr)
  out, = eval_jaxpr(jaxpr, [], np.arange(3, dtype=f32), np.full(3, 2, f32))
  np.testing.assert_array_equal(np.asarray(out), [0, 2, 4])


def test_check_jaxpr_rejects_use_before_definition():
  jaxpr = _mul_jaxpr()
  bad = Jaxpr([], jaxpr.invars[:1], jaxpr.outvars, jaxpr.eqns)
  with pytest.raises(JaxprTypeError, match="used before it is defined"):
    check_jaxpr(bad)


def test_check_jaxpr_rejects_wrong_output_type():
  a = Var(ShapedArray((3,), np.float32))
  c = Var(ShapedArray((4,), np.float32))
  bad = Jaxpr([], [a], [c], [JaxprEqn([a], [c], lax.sin_p, {})])
  with pytest.raises(JaxprTypeError, match="f32\\[4\\].*f32\\[3\\]"):
    check_jaxpr(bad)


def test_staged_jaxprs_type_check():
  def f(x, y):
    return lax.select_n(lax.lt(x, y), lax.sub(x, y), lax.add(x, y))
  check_jaxpr(jax.make_jaxpr(f)(np.ones(3, f32), np.zeros(3, f32)))


def test_closed_jaxpr_avals_and_literals():
  closed = jax.make_jaxpr(lambda x: lax.add(x, 1.0))(np.ones(2, f32))
  assert isinstance(closed, ClosedJaxpr)
  assert closed.in_avals == [ShapedArray((2,), np.float32)]
  assert closed.out_avals == [ShapedArray((2,), np.float32)]
  lit = closed.eqns[0].invars[1]
  assert isinstance(lit, Literal) and lit.aval.weak_type


# -------------------------------------------------------------- primitives
def test_primitive_bind_and_missing_rule_message():
  p = Primitive("my_prim")
  p.def_abstract_eval(lambda x: [x])
  with pytest.raises(NotImplementedError, match="Evaluation rule for 'my_prim' not implemented"):
    p.bind1(np.ones(2, f32))
  p.def_impl(lambda x: [np.asarray(x) * 3])
  np.testing.assert_array_equal(np.asarray(p.bind1(np.ones(2, f32))), [3, 3])
  assert repr(p) == "my_prim"
  del core.registry["my_prim"]


def test_primitive_rules_return_lists_and_bind_returns_list():
  outs = lax.add_p.bind(np.float32(1), np.float32(2))
  assert isinstance(outs, list) and len(outs) == 1


def test_not_applicable_reason_in_message():
  p = Primitive("my_other_prim")
  p.mark_not_applicable("jvp", "integer-valued")
  with pytest.raises(NotImplementedError, match="integer-valued"):
    p.rule("jvp")
  del core.registry["my_other_prim"]


# ------------------------------------------------------------------ errors
def test_bool_conversion_error_names_argument_and_fix():
  def f(x, y):
    return lax.sin(x) if lax.gt(y, 0.0) else x
  with pytest.raises(TracerBoolConversionError) as info:
    jax.jit(f)(1.0, 2.0)
  msg = str(info.value)
  assert "bool[]" in msg and "argument y" in msg
  assert "lax.cond" in msg and "static_argnums" in msg
  assert isinstance(info.value, ConcretizationTypeError)
  assert isinstance(info.value, TypeError)


def test_integer_conversion_error():
  with pytest.raises(TracerIntegerConversionError, match="static_argnums"):
    jax.jit(lambda x: [1, 2, 3][x])(1)


def test_array_conversion_error():
  with pytest.raises(TracerArrayConversionError, match="jax.numpy"):
    jax.jit(lambda x: np.sin(x))(np.ones(2, f32))


def test_float_conversion_is_concretization_error():
  with pytest.raises(ConcretizationTypeError, match="float"):
    jax.jit(lambda x: float(x))(1.0)


def test_leaked_tracer_raises_unexpected_tracer_error():
  leaked = []

  @jax.jit
  def f(x):
    leaked.append(x)
    return x

  f(1.0)
  with pytest.raises(UnexpectedTracerError, match="side effect|finished"):
    lax.sin(leaked[0])
  with pytest.raises(UnexpectedTracerError):
    jax.jit(lambda y: lax.add(y, leaked[0]))(1.0)


def test_tracer_shape_queries_are_static():
  def f(x):
    assert x.shape == (2, 3) and x.ndim == 2 and x.size == 6 and x.dtype == np.float32
    assert len(x) == 2
    return x
  jax.make_jaxpr(f)(np.ones((2, 3), f32))


def test_tracer_setitem_points_to_at():
  def f(x):
    x[0] = 1.0
  with pytest.raises(TypeError, match=r"\.at\["):
    jax.make_jaxpr(f)(np.ones(3, f32))


def test_operations_on_constants_are_staged_under_jit():
  # Omnistaging: even ops on constants are recorded, so they are not concrete.
  @jax.jit
  def f(x):
    return lax.mul(x, float(lax.add(np.float32(2), np.float32(1))))
  with pytest.raises(ConcretizationTypeError, match="float"):
    f(2.0)


def test_print_goldens_with_jnp_from_jax_0_10_2():
  import openjax.numpy as jnp
  assert str(jax.make_jaxpr(lambda x: jnp.zeros(3) + x)(1.0)) == """\
{ lambda ; a:f32[]. let
    b:f32[3] = broadcast_in_dim 0.0:f32[]
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] a
    d:f32[3] = add b c
  in (d,) }"""
  assert str(jax.make_jaxpr(lambda x: jnp.broadcast_to(x, (2, 3)))(np.ones(3, f32))) == """\
{ lambda ; a:f32[3]. let
    b:f32[2,3] = broadcast_in_dim[broadcast_dimensions=(1,)] a
  in (b,) }"""
  assert str(jax.make_jaxpr(lambda x: x[0])(np.ones(3, f32))) == """\
{ lambda ; a:f32[3]. let
    b:f32[1] = slice[limit_indices=(1,) start_indices=(0,) strides=None] a
    c:f32[] = squeeze[dimensions=(0,)] b
  in (c,) }"""
  assert str(jax.make_jaxpr(lambda x: jnp.sum(x, axis=0))(np.ones((2, 3), f32))) == """\
{ lambda ; a:f32[2,3]. let
    b:f32[3] = reduce_sum[axes=(0,) out_sharding=None] a
  in (b,) }"""
  assert str(jax.make_jaxpr(lambda x: jnp.arange(3) + x)(1)) == """\
{ lambda ; a:i32[]. let
    b:i32[3] = iota[dimension=0 dtype=int32 shape=(3,) sharding=None] 
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[3] = add b c
  in (d,) }"""


def test_unused_results_print_as_underscore_like_jax():
  jaxpr = jax.make_jaxpr(jax.grad(lambda x, y: 2 * x, (0, 1)))(1.0, 2.0)
  # Golden from JAX 0.10.2.
  assert str(jaxpr) == """\
{ lambda ; a:f32[] b:f32[]. let
    _:f32[] = mul 2.0:f32[] a
    c:f32[] = mul 2.0:f32[] 1.0:f32[]
  in (c, 0.0:f32[]) }"""
  g = jax.grad(lambda x, y: 2 * x, (0, 1))(1.0, 2.0)
  assert isinstance(g[1], jax.Array) and g[1].weak_type
