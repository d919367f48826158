"""lax.cond and lax.switch (the ``cond`` primitive): values against Python
if/else, pytrees and closures, JAX's errors, printed jaxprs against JAX
0.10.2 goldens, derivatives against finite differences, vmap against a
Python loop, compiled (IREE) against interpreted, nesting."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr, eval_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr
from openjax.test_util import check_grads

F32 = np.float32
X3 = np.array([0.3, -1.2, 2.0], F32)


def _close(actual, expected, rtol=1e-6, atol=1e-6):
  a_leaves = jax.tree_util.tree_leaves(actual)
  e_leaves = jax.tree_util.tree_leaves(expected)
  assert len(a_leaves) == len(e_leaves)
  for a, e in zip(a_leaves, e_leaves):
    np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=rtol, atol=atol)


# ---------------------------------------------------------------- values
@pytest.mark.parametrize("pred", [True, False, 0, 3, -1.5, 0.0, np.bool_(True), np.int32(0),
                                  np.array(True)])
def test_cond_matches_python_if(pred):
  def true_fun(x):
    return jnp.sin(x) + 1.
  def false_fun(x):
    return x * 3.
  expected = np.sin(X3) + 1. if pred else X3 * 3.
  _close(lax.cond(pred, true_fun, false_fun, X3), expected)
  _close(jax.jit(lambda p, x: lax.cond(p, true_fun, false_fun, x))(pred, X3), expected)


@pytest.mark.parametrize("index", [-5, -1, 0, 1, 2, 3, 100])
def test_switch_matches_python_indexing_with_clamping(index):
  branches = [lambda x: x + 1., jnp.sin, lambda x: x * x, lambda x: -x]
  ref = [lambda x: x + 1., np.sin, lambda x: x * x, lambda x: -x][min(max(index, 0), 3)]
  _close(lax.switch(index, branches, X3), ref(X3))
  _close(jax.jit(lambda i, x: lax.switch(i, branches, x))(index, X3), ref(X3))
  _close(lax.switch(np.uint8(max(index, 0)), branches, X3), ref(X3))


def test_switch_with_one_branch_calls_it():
  assert float(lax.switch(7, [lambda x: x * 2.], 1.5)) == 3.0
  jaxpr = jax.make_jaxpr(lambda i, x: lax.switch(i, [lambda x: x * 2.], x))(0, 1.0)
  assert "cond" not in str(jaxpr)


def test_pytree_operands_and_outputs():
  def true_fun(d, t):
    return {"s": d["a"] + t[0], "pair": (t[1] * 2, None)}
  def false_fun(d, t):
    return {"s": d["a"] - t[0], "pair": (-t[1], None)}
  d, t = {"a": np.ones(2, F32)}, (np.float32(3.), np.arange(2, dtype=np.int32))
  for pred in (True, False):
    out = lax.cond(pred, true_fun, false_fun, d, t)
    expected = true_fun(d, t) if pred else false_fun(d, t)
    assert jax.tree_util.tree_structure(out) == jax.tree_util.tree_structure(expected)
    _close(out, expected)
    assert out["pair"][0].dtype == np.int32


def test_operand_keyword_and_no_operands():
  assert float(lax.cond(False, lambda x: x + 1, lambda x: x - 1, operand=1.0)) == 0.0
  assert float(lax.switch(1, [lambda x: x, lambda x: 2 * x], operand=3.0)) == 6.0
  assert float(lax.cond(True, lambda: 1., lambda: 2.)) == 1.0
  assert int(jax.jit(lambda p: lax.cond(p, lambda: 1, lambda: 2))(False)) == 2


def test_old_five_argument_form():
  out = lax.cond(False, 1.0, lambda x: x + 1., 5.0, lambda x: x * 10.)
  assert float(out) == 50.0


def test_closures_over_constants_and_tracers():
  w = jnp.array([1., 2., 3.])

  @jax.jit
  def f(x, s):
    # w is a constant, s a tracer of the jit: both become cond operands.
    return lax.cond(x.sum() > 0, lambda: w * s, lambda: x - s)
  _close(f(X3, 2.0), np.array([1., 2., 3.]) * 2.0)
  _close(f(-X3, 2.0), -X3 - 2.0)
  jaxpr = jax.make_jaxpr(f)(X3, 2.0)
  cond_eqn = jaxpr.jaxpr.eqns[0].params["jaxpr"].jaxpr.eqns[-1]
  assert cond_eqn.primitive.name == "cond"
  assert len(cond_eqn.invars) == 4            # index, w, s, x
  assert all(len(b.jaxpr.constvars) == 0 for b in cond_eqn.params["branches"])


def test_weak_types_follow_branch_zero_like_jax():
  # JAX 0.10.2: the result takes the weak type of branch 0 (false_fun).
  assert lax.cond(True, lambda: jnp.float32(1), lambda: 2.).weak_type
  assert not lax.cond(True, lambda: 2., lambda: jnp.float32(1)).weak_type
  assert lax.switch(1, [lambda x: x, lambda x: 2., lambda x: jnp.float32(1)], 1.0).weak_type
  out = jax.jit(lambda p: lax.cond(p, lambda: 1, lambda: 2))(1.5)
  assert out.dtype == np.int32 and out.weak_type


def test_forwarded_outputs_return_the_input():
  x = jnp.float32(1.5)
  a, b = lax.cond(True, lambda x: (x, x + 1), lambda x: (x, x - 1), x)
  assert a is x and float(b) == 2.5
  a, = lax.cond(True, lambda x: (x,), lambda x: (x,), 2.0)
  assert isinstance(a, jax.Array) and a.weak_type and float(a) == 2.0


def test_disable_jit_calls_only_the_taken_branch():
  calls = []

  def true_fun(x):
    calls.append("true")
    return x

  def false_fun(x):
    calls.append("false")
    return -x
  with jax.disable_jit():
    assert float(lax.cond(True, true_fun, false_fun, 1.0)) == 1.0
    assert float(lax.switch(5, [true_fun, false_fun], 1.0)) == -1.0
  assert calls == ["true", "false"]
  calls.clear()
  lax.cond(True, true_fun, false_fun, 1.0)
  assert sorted(calls) == ["false", "true"]     # traced: both branches run at trace time


def test_branch_traces_are_reused():
  count = []

  def branch(x):
    count.append(1)
    return x * 2.
  for _ in range(3):
    lax.cond(True, branch, branch, 1.0)
  assert len(count) == 1


def _psum_plus(x):
  return lax.psum(1., "i") + x


def test_branch_traces_are_not_reused_across_axis_sizes():
  # psum of a constant folds to the axis size while tracing the branch.
  f = lambda x: lax.cond(True, _psum_plus, lambda x: x, x)  # noqa: E731
  _close(jax.vmap(f, axis_name="i")(np.zeros(3, F32)), np.full(3, 3.))
  _close(jax.vmap(f, axis_name="i")(np.zeros(5, F32)), np.full(5, 5.))


def test_nested_conds():
  def f(x):
    def inner(x):
      return lax.switch(jnp.int32(x > 1) + jnp.int32(x > 2), [jnp.sin, jnp.cos, jnp.exp], x)
    return lax.cond(x > 0, inner, lambda x: -x, x)

  def ref(x):
    if x <= 0:
      return -x
    return [np.sin, np.cos, np.exp][int(x > 1) + int(x > 2)](x)
  for v in (-0.5, 0.5, 1.5, 2.5):
    _close(f(np.float32(v)), ref(np.float32(v)))
    _close(jax.jit(f)(np.float32(v)), ref(np.float32(v)))


def test_check_jaxpr_after_transformations():
  def f(x, y):
    return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * y, lambda x: jnp.cos(x) + y, x)

  def loss(x, y):
    return f(x, y).sum()
  batch = (np.ones((2, 3), F32), np.ones((2, 3), F32))
  for g, args in ((f, (X3, X3)), (jax.grad(loss), (X3, X3)), (jax.vmap(f), batch),
                  (jax.vmap(f, in_axes=(None, 0)), (X3, batch[1])),
                  (jax.jit(jax.grad(loss)), (X3, X3)), (jax.grad(jax.jit(loss)), (X3, X3)),
                  (lambda x, y: jax.jvp(f, (x, y), (x, y)), (X3, X3))):
    check_jaxpr(jax.make_jaxpr(g)(*args).jaxpr)


# ---------------------------------------------------------------- errors
def _raises(exc, text, fn):
  with pytest.raises(exc) as info:
    fn()
  assert str(info.value) == text, str(info.value)


def _src(fn):
  return f"{fn.__name__} at {fn.__code__.co_filename}:{fn.__code__.co_firstlineno}"


def _ident(x):
  return x


def _pair(x):
  return (x, x)


def _to_int(x):
  return x.astype(jnp.int32)


def _dict_first(x):
  return {"a": x, "b": x[0]}


def _dict_whole(x):
  return {"a": x, "b": x}


def test_pred_errors_match_jax():
  _raises(TypeError, "Pred must be a scalar, got [ True False] of shape (2,).",
          lambda: lax.cond(jnp.array([True, False]), _ident, _ident, 1.))
  _raises(TypeError, "Pred must be a scalar, got [True] of type <class 'list'>",
          lambda: lax.cond([True], _ident, _ident, 1.))
  _raises(TypeError, "Pred must be a scalar, got a of type <class 'str'>",
          lambda: lax.cond("a", _ident, _ident, 1.))
  _raises(TypeError, "cond predicate is None", lambda: lax.cond(None, _ident, _ident, 1.))
  _raises(TypeError, "Pred type must be either boolean or number, got complex64.",
          lambda: lax.cond(jnp.complex64(1), _ident, _ident, 1.))
  _raises(TypeError, "lax.cond: true_fun and false_fun arguments should be callable.",
          lambda: lax.cond(True, 1, _ident, 1.))
  _raises(TypeError, "if 'operand' keyword is passed then no positional operands can be "
          "passed, got operand=2.0 and positional operands (1.0,)",
          lambda: lax.cond(True, _ident, _ident, 1., operand=2.))


def test_index_errors_match_jax():
  _raises(TypeError, "Index type must be an integer, got 1.0 as float32",
          lambda: lax.switch(1.0, [_ident, _ident], 1.))
  _raises(TypeError, "Branch index must be scalar, got [1 2] of shape (2,).",
          lambda: lax.switch(jnp.array([1, 2]), [_ident, _ident], 1.))
  _raises(TypeError, "Index type must be an integer, got a.",
          lambda: lax.switch("a", [_ident, _ident], 1.))
  _raises(ValueError, "Empty branch sequence", lambda: lax.switch(1, [], 1.))
  _raises(TypeError, "lax.switch: branches argument should be a sequence of callables.",
          lambda: lax.switch(1, [_ident, 1], 1.))


def test_branch_output_structure_errors_match_jax():
  _raises(TypeError, (
      "cond branch outputs must have the same pytree structure, but they differ:\n\n"
      f"true_fun is {_src(_ident)}\nfalse_fun is {_src(_pair)}\n\n"
      "true_fun output is a pytree leaf but false_fun output is a <class 'tuple'>, so their "
      "Python types differ.\n\n"
      "Revise true_fun and/or false_fun so that they have the same pytree structure."),
      lambda: lax.cond(True, _ident, _pair, 1.))
  _raises(TypeError, (
      "switch branch outputs must have the same pytree structure, but they differ:\n\n"
      f"branch 0 is {_src(_ident)}\nbranch1 is {_src(_pair)}\n\n"
      "branch 0 output is a pytree leaf but branch1 output is a <class 'tuple'>, so their "
      "Python types differ.\n\n"
      "Revise branch 0 and/or branch1 so that they have the same pytree structure."),
      lambda: lax.switch(1, [_ident, _pair, _ident], 1.))


def _none_then_float(x):
  return {"a": (None, x), "b": x}


def _none_then_int(x):
  return {"a": (None, x.astype(jnp.int32)), "b": x}


def test_branch_output_type_errors_match_jax():
  _raises(TypeError, (
      "cond branches must have equal output types but they differ.\n\n"
      f"true_fun is {_src(_ident)}\nfalse_fun is {_src(_to_int)}\n\n"
      "The output of true_fun has type float32[] but the corresponding output of false_fun "
      "has type int32[], so the dtypes do not match.\n\n"
      "Revise true_fun and/or false_fun so that all output types match."),
      lambda: lax.cond(True, _ident, _to_int, 1.))
  _raises(TypeError, (
      "cond branches must have equal output types but they differ.\n\n"
      f"true_fun is {_src(_dict_first)}\nfalse_fun is {_src(_dict_whole)}\n\n"
      "The output of true_fun at path ['b'] has type float32[] but the corresponding output "
      "of false_fun has type float32[3], so the shapes do not match.\n\n"
      "Revise true_fun and/or false_fun so that all output types match."),
      lambda: lax.cond(True, _dict_first, _dict_whole, jnp.ones(3)))
  _raises(TypeError, (
      "cond branches must have equal output types but they differ.\n\n"
      f"true_fun is {_src(_none_then_float)}\nfalse_fun is {_src(_none_then_int)}\n\n"
      "The output of true_fun at path ['a'][1] has type float32[] but the corresponding output "
      "of false_fun has type int32[], so the dtypes do not match.\n\n"
      "Revise true_fun and/or false_fun so that all output types match."),
      lambda: lax.cond(True, _none_then_float, _none_then_int, 1.))
  _raises(TypeError, (
      "switch branches must have equal output types but they differ.\n\n"
      f"branch 0 is {_src(_ident)}\nbranch2 is {_src(_to_int)}\n\n"
      "The output of branch 0 has type float32[] but the corresponding output of branch2 "
      "has type int32[], so the dtypes do not match.\n\n"
      "Revise branch 0 and/or branch2 so that all output types match."),
      lambda: lax.switch(1, [_ident, _ident, _to_int], 1.))


def _returns_str():
  return ("a", 1.)


def test_invalid_operand_and_output_types_match_jax():
  _raises(TypeError, "Argument 'a' of type <class 'str'> is not a valid JAX type",
          lambda: lax.cond(True, _ident, _ident, "a"))
  obj = object()
  _raises(TypeError, f"Argument '{obj}' of type '<class 'object'>' is not a valid JAX type",
          lambda: lax.cond(True, _ident, _ident, obj))
  _raises(TypeError, f"function {_src(_returns_str)} traced for switch returned a value of "
          "type <class 'str'> at output component [0], which is not a valid JAX type",
          lambda: lax.switch(0, [_returns_str, _returns_str]))


def test_traced_python_if_inside_a_branch_names_the_fix():
  with pytest.raises(jax.errors.TracerBoolConversionError):
    lax.cond(True, lambda x: x if x > 0 else -x, _ident, 1.0)


def test_abstract_eval_rejects_mismatched_operands():
  branches = jax.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0) \
      .jaxpr.eqns[-1].params["branches"]
  cond_p = jax.make_jaxpr(lambda p, x: lax.cond(p, jnp.sin, jnp.cos, x))(True, 1.0) \
      .jaxpr.eqns[-1].primitive
  with pytest.raises(TypeError, match=r"index of type f32\[\] instead of i32\[\]"):
    cond_p.bind(np.float32(1), np.float32(1), branches=branches)
  with pytest.raises(TypeError, match=r"branches take input types \(f32\[\]\), called with "
                                      r"operands of type \(i32\[\]\)"):
    cond_p.bind(np.int32(1), np.int32(1), branches=branches)


# ------------------------------------------------------- printed jaxprs
Y3 = jnp.array([1., 2., 3.])


def _small(x):
  return x * 2.


def _big(x):
  for _ in range(11):
    x = jnp.sin(x)
  return x


def h(x):
  return lax.cond(x > 0, lambda x: jnp.sin(x) * x, lambda x: jnp.cos(x), x)


_PRINT_CASES = {
    "closure": (lambda p, x: lax.cond(p, lambda x: x + Y3, lambda x: x * 2., x),
                (True, np.ones(3, F32))),
    "switch3": (lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda x: x + 1.], x), (1, 2.0)),
    "grad": (jax.grad(h), (1.0,)),
    "jvp": (lambda x, t: jax.jvp(h, (x,), (t,)), (1.0, 1.0)),
    "vmap_pred": (jax.vmap(h), (np.ones(3, F32),)),
    "vmap_operand": (jax.vmap(lambda x: lax.cond(True, lambda x: x + 1, lambda x: x * 2, x)),
                     (np.ones(3, F32),)),
    "literal_outputs": (lambda p: lax.cond(p, lambda: 1., lambda: 2.), (True,)),
    "grad_jit": (jax.grad(jax.jit(h)), (1.0,)),
    "shared": (lambda p, x: lax.cond(p, lambda x: lax.cond(x > 0, _small, jnp.cos, x), _small, x),
               (True, 1.0)),
    "big_branch": (lambda p, x: lax.cond(p, _big, _small, x), (True, 1.0)),
    "forwarded": (lambda p, x: lax.cond(p, lambda x: (x, x), lambda x: (x, -x), x),
                  (True, np.float32(1.0))),
    "vmap_switch": (jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, lambda x: x * x, jnp.exp], x)),
                    (np.arange(3, dtype=np.int32), np.ones(3, F32))),
    "int_pred": (lambda n, x: lax.cond(n, lambda x: -x, lambda x: x, x), (2, 1.0)),
}

# make_jaxpr of the cases above in JAX 0.10.2.
_GOLDENS = {
    "closure": """\
{ lambda a:f32[3]; b:bool[] c:f32[3]. let
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    e:f32[3] = cond[
      branches=(
        { lambda ; f:f32[3] g:f32[3]. let h:f32[3] = mul g 2.0:f32[] in (h,) }
        { lambda ; i:f32[3] j:f32[3]. let k:f32[3] = add j i in (k,) }
      )
    ] d a c
  in (e,) }""",
    "switch3": """\
{ lambda ; a:i32[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:i32[] = clamp 0:i32[] c 2:i32[]
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let g:f32[] = sin f in (g,) }
        { lambda ; h:f32[]. let i:f32[] = cos h in (i,) }
        { lambda ; j:f32[]. let k:f32[] = add j 1.0:f32[] in (k,) }
      )
    ] d b
  in (e,) }""",
    "grad": """\
{ lambda ; a:f32[]. let
    b:bool[] = gt a 0.0:f32[]
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] b
    _:f32[] d:f32[] e:f32[] f:f32[] = cond[
      branches=(
        { lambda ; g:f32[]. let
            h:f32[] = cos g
            i:f32[] = sin g
            j:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
            k:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
            l:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
          in (h, i, k, l) }
        { lambda ; m:f32[]. let
            n:f32[] = sin m
            o:f32[] = cos m
            p:f32[] = mul n m
            q:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
            r:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
            s:f32[] = empty2[dtype=float32 memory_space=MemorySpace.Device] 
          in (p, o, m, n) }
      )
    ] c a
    t:f32[] = cond[
      branches=(
        { lambda ; u:f32[] v:f32[] w:f32[] x:f32[]. let
            y:f32[] = neg x
            z:f32[] = mul y u
          in (z,) }
        { lambda ; ba:f32[] bb:f32[] bc:f32[] bd:f32[]. let
            be:f32[] = mul bc bd
            bf:f32[] = mul bd bb
            bg:f32[] = mul bf ba
            bh:f32[] = add_any be bg
          in (bh,) }
      )
    ] c d e f 1.0:f32[]
  in (t,) }""",
    "jvp": """\
{ lambda ; a:f32[] b:f32[]. let
    c:bool[] = gt a 0.0:f32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] f:f32[] = cond[
      branches=(
        { lambda ; g:f32[] h:f32[]. let
            i:f32[] = cos g
            j:f32[] = sin g
            k:f32[] = mul h j
            l:f32[] = neg k
          in (i, l) }
        { lambda ; m:f32[] n:f32[]. let
            o:f32[] = sin m
            p:f32[] = cos m
            q:f32[] = mul n p
            r:f32[] = mul o m
            s:f32[] = mul q m
            t:f32[] = mul o n
            u:f32[] = add_any s t
          in (r, u) }
      )
    ] d a b
  in (e, f) }""",
    "vmap_pred": """\
{ lambda ; a:f32[3]. let
    b:bool[3] = gt a 0.0:f32[]
    c:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] b
    d:bool[3] = eq c 0:i32[]
    e:f32[3] = stop_gradient a
    f:f32[3] = select_n d e a
    g:f32[3] = cos f
    h:bool[3] = eq c 1:i32[]
    i:f32[3] = stop_gradient a
    j:f32[3] = select_n h i a
    k:f32[3] = sin j
    l:f32[3] = mul k j
    m:f32[3] = select_n c g l
  in (m,) }""",
    "vmap_operand": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = cond[
      branches=(
        { lambda ; c:f32[3]. let d:f32[3] = mul c 2.0:f32[] in (d,) }
        { lambda ; e:f32[3]. let f:f32[3] = add e 1.0:f32[] in (f,) }
      )
    ] 1:i32[] a
  in (b,) }""",
    "literal_outputs": """\
{ lambda ; a:bool[]. let
    b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    c:f32[] = cond[
      branches=(
        { lambda ; . let  in (2.0:f32[],) }
        { lambda ; . let  in (1.0:f32[],) }
      )
    ] b
  in (c,) }""",
    "grad_jit": """\
{ lambda ; a:f32[]. let
    _:f32[] b:i32[] c:f32[] d:f32[] e:f32[] = jit[
      name=h
      jaxpr={ lambda ; a:f32[]. let
          f:bool[] = gt a 0.0:f32[]
          b:i32[] = convert_element_type[new_dtype=int32 weak_type=False] f
          _:f32[] c:f32[] d:f32[] e:f32[] = cond[
            branches=(
              { lambda ; g:f32[]. let
                  h:f32[] = cos g
                  i:f32[] = sin g
                  j:f32[] = empty2[
                    dtype=float32
                    memory_space=MemorySpace.Device
                  ] 
                  k:f32[] = empty2[
                    dtype=float32
                    memory_space=MemorySpace.Device
                  ] 
                in (h, i, j, k) }
              { lambda ; l:f32[]. let
                  m:f32[] = sin l
                  n:f32[] = cos l
                  o:f32[] = mul m l
                in (o, n, l, m) }
            )
          ] b a
        in (_, b, c, d, e) }
    ] a
    p:f32[] = jit[
      name=h
      jaxpr={ lambda ; b:i32[] c:f32[] d:f32[] e:f32[] q:f32[]. let
          p:f32[] = cond[
            branches=(
              { lambda ; r:f32[] s:f32[] t:f32[] u:f32[]. let
                  v:f32[] = neg u
                  w:f32[] = mul v r
                in (w,) }
              { lambda ; x:f32[] y:f32[] z:f32[] ba:f32[]. let
                  bb:f32[] = mul z ba
                  bc:f32[] = mul ba y
                  bd:f32[] = mul bc x
                  be:f32[] = add_any bb bd
                in (be,) }
            )
          ] b c d e q
        in (p,) }
    ] b c d e 1.0:f32[]
  in (p,) }""",
    "shared": """\
let jaxpr = { lambda ; a:f32[]. let b:f32[] = mul a 2.0:f32[] in (b,) } in
{ lambda ; c:bool[] d:f32[]. let
    e:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    f:f32[] = cond[
      branches=(
        jaxpr
        { lambda ; g:f32[]. let
            h:bool[] = gt g 0.0:f32[]
            i:i32[] = convert_element_type[new_dtype=int32 weak_type=False] h
            j:f32[] = cond[
              branches=({ lambda ; k:f32[]. let l:f32[] = cos k in (l,) } jaxpr)
            ] i g
          in (j,) }
      )
    ] e d
  in (f,) }""",
    "big_branch": """\
let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = sin a
    c:f32[] = sin b
    d:f32[] = sin c
    e:f32[] = sin d
    f:f32[] = sin e
    g:f32[] = sin f
    h:f32[] = sin g
    i:f32[] = sin h
    j:f32[] = sin i
    k:f32[] = sin j
    l:f32[] = sin k
  in (l,) } in
{ lambda ; m:bool[] n:f32[]. let
    o:i32[] = convert_element_type[new_dtype=int32 weak_type=False] m
    p:f32[] = cond[
      branches=(
        { lambda ; q:f32[]. let r:f32[] = mul q 2.0:f32[] in (r,) }
        jaxpr
      )
    ] o n
  in (p,) }""",
    "forwarded": """\
{ lambda ; a:bool[] b:f32[]. let
    c:i32[] = convert_element_type[new_dtype=int32 weak_type=False] a
    d:f32[] = cond[
      branches=(
        { lambda ; e:f32[]. let f:f32[] = neg e in (f,) }
        { lambda ; g:f32[]. let  in (g,) }
      )
    ] c b
  in (b, d) }""",
    "vmap_switch": """\
{ lambda ; a:i32[3] b:f32[3]. let
    c:i32[3] = clamp 0:i32[] a 2:i32[]
    d:bool[3] = eq c 0:i32[]
    e:f32[3] = stop_gradient b
    f:f32[3] = select_n d e b
    g:f32[3] = sin f
    h:bool[3] = eq c 1:i32[]
    i:f32[3] = stop_gradient b
    j:f32[3] = select_n h i b
    k:f32[3] = mul j j
    l:bool[3] = eq c 2:i32[]
    m:f32[3] = stop_gradient b
    n:f32[3] = select_n l m b
    o:f32[3] = exp n
    p:f32[3] = select_n c g k o
  in (p,) }""",
    "int_pred": """\
{ lambda ; a:i32[] b:f32[]. let
    c:bool[] = ne a 0:i32[]
    d:i32[] = convert_element_type[new_dtype=int32 weak_type=False] c
    e:f32[] = cond[
      branches=(
        { lambda ; f:f32[]. let  in (f,) }
        { lambda ; g:f32[]. let h:f32[] = neg g in (h,) }
      )
    ] d b
  in (e,) }""",
}


@pytest.mark.parametrize("name", sorted(_PRINT_CASES))
def test_printed_jaxpr_matches_jax(name):
  fn, args = _PRINT_CASES[name]
  assert str(jax.make_jaxpr(fn)(*args)) == _GOLDENS[name]


# ------------------------------------------------------------ derivatives
def _f(x, y):
  return lax.cond(x.sum() > 0, lambda x: jnp.sin(x) * y, lambda x: jnp.cos(x) + y.sum(), x)


@pytest.mark.parametrize("sign", [1., -1.])
def test_grads_match_finite_differences(sign):
  with jax.enable_x64():
    x, y = sign * X3.astype(np.float64), X3.astype(np.float64) + 1.
    check_grads(_f, (x, y), order=2, modes=("fwd", "rev"))
    check_grads(jax.jit(_f), (x, y), order=1, modes=("fwd", "rev"))


@pytest.mark.parametrize("index", [0, 1, 2])
def test_switch_grads_match_finite_differences(index):
  def f(x):
    return lax.switch(index, [lambda x: jnp.sin(x) * 2, lambda x: x * x * x, jnp.exp], x)
  with jax.enable_x64():
    check_grads(f, (0.7,), order=2, modes=("fwd", "rev"))


def test_grad_of_jit_and_jit_of_grad():
  def loss(x):
    return _f(x, X3 + 1.).sum()
  for x in (X3, -X3):
    g = jax.grad(loss)(x)
    _close(jax.grad(jax.jit(loss))(x), g)
    _close(jax.jit(jax.grad(loss))(x), g)
    _close(jax.jit(jax.grad(jax.jit(loss)))(x), g)
    expected = np.cos(x) * (X3 + 1.) if x.sum() > 0 else -np.sin(x)
    _close(g, expected)


def test_vjp_and_linearize():
  fn = lambda x: lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)  # noqa: E731
  y, vjp = jax.vjp(fn, X3)
  _close(y, np.sin(X3))
  _close(vjp(jnp.ones(3))[0], np.cos(X3))
  y, lin = jax.linearize(fn, -X3)
  _close(lin(jnp.ones(3)), np.sin(X3))


def test_grad_with_one_constant_branch_and_integer_operands():
  c = lambda x: lax.cond(x > 0, lambda x: 3.0, lambda x: x * x, x)  # noqa: E731
  assert float(jax.grad(c)(1.0)) == 0.0 and float(jax.grad(c)(-1.0)) == -2.0
  assert float(jax.grad(jax.jit(c))(-1.0)) == -2.0

  def f(x, n):
    out, k = lax.cond(n > 2, lambda x, n: (x * n, n + 1), lambda x, n: (jnp.sin(x), n * 2), x, n)
    return out * k
  assert float(jax.grad(f)(1.5, 3)) == 12.0
  _close(jax.grad(f)(1.5, 1), 2 * np.cos(1.5))
  _close(jax.grad(jax.jit(f))(1.5, 1), 2 * np.cos(1.5))


def test_closed_over_tracers_get_gradients():
  def f(x, y):
    return lax.cond(x > 0, lambda: x * y, lambda: y - x)
  assert [float(g) for g in jax.grad(f, argnums=(0, 1))(1.0, 2.0)] == [2.0, 1.0]
  assert [float(g) for g in jax.grad(jax.jit(f), argnums=(0, 1))(-1.0, 2.0)] == [-1.0, 1.0]


def test_nested_cond_higher_order_derivatives():
  def nest(x):
    return lax.cond(x > 0, lambda x: lax.cond(x > 1, lambda x: x ** 3, lambda x: x ** 2, x),
                    lambda x: -x, x)
  for v, d1, d2 in ((-0.5, -1., 0.), (0.5, 1., 2.), (2., 12., 12.)):
    assert float(jax.grad(nest)(v)) == d1
    assert float(jax.grad(jax.jit(nest))(v)) == d1
    assert float(jax.grad(jax.grad(nest))(v)) == d2
  _close(jax.vmap(jax.grad(nest))(np.array([-0.5, 0.5, 2.0], F32)), np.array([-1., 1., 12.]))


# ------------------------------------------------------------------ vmap
def test_vmap_batched_operands_keeps_a_cond():
  ys = np.random.default_rng(0).normal(size=(4, 3)).astype(F32)
  got = jax.vmap(_f, in_axes=(None, 0))(X3, ys)
  _close(got, np.stack([_f(X3, y) for y in ys]))
  assert "cond" in str(jax.make_jaxpr(jax.vmap(_f, in_axes=(None, 0)))(X3, ys))
  got = jax.vmap(_f, in_axes=(None, 1))(X3, ys.T)
  _close(got, np.stack([_f(X3, y) for y in ys]))


def test_vmap_batched_predicate_selects_per_example():
  xs = np.random.default_rng(1).normal(size=(6, 3)).astype(F32)
  for in_axes in ((0, None), (1, None), (0, 0)):
    args = (xs if in_axes[0] == 0 else xs.T,
            np.ones(3, F32) if in_axes[1] is None else xs + 1.)
    got = jax.vmap(_f, in_axes=in_axes)(*args)
    per = [(xs[i], args[1] if in_axes[1] is None else args[1][i]) for i in range(6)]
    _close(got, np.stack([_f(*a) for a in per]), rtol=1e-5)
  ps = np.array([True, False, True])
  g = lambda p, x: lax.cond(p, lambda x: x * 2, lambda x: x - 1, x)  # noqa: E731
  _close(jax.vmap(g)(ps, np.arange(3, dtype=F32)), np.array([0., 0., 4.]))


def test_vmap_switch_with_batched_index():
  sw = lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, lambda x: x + 1.], x)  # noqa: E731
  idx = np.array([-1, 0, 1, 2, 5], np.int32)
  xs = np.arange(5, dtype=F32)
  _close(jax.vmap(sw)(idx, xs), np.stack([sw(i, x) for i, x in zip(idx, xs)]))
  _close(jax.vmap(sw, in_axes=(0, None))(idx, np.float32(0.5)),
         np.stack([sw(i, np.float32(0.5)) for i in idx]))


def test_vmap_batched_predicate_gradients_ignore_untaken_branches():
  # The untaken branch sees stop_gradient'ed operands: no NaN from sqrt(-x).
  f = lambda x: lax.cond(x > 0, jnp.sqrt, lambda x: -x, x)  # noqa: E731
  g = jax.grad(lambda xs: jax.vmap(f)(xs).sum())(np.array([-4., 4.], F32))
  _close(g, np.array([-1., 0.25]))


def test_cond_inside_vmap_inside_grad():
  def loss(a):
    return jax.vmap(lambda x: lax.cond(x > 0, lambda x: a * x, lambda x: a * a, x))(
        np.array([-1., 2.], F32)).sum()
  assert float(jax.grad(loss)(3.0)) == 8.0
  assert float(jax.jit(jax.grad(loss))(3.0)) == 8.0


def test_vmap_of_grad_and_grad_of_vmap():
  xs = np.random.default_rng(2).normal(size=(5, 3)).astype(F32)
  loss = lambda x: _f(x, X3).sum()  # noqa: E731
  _close(jax.vmap(jax.grad(loss))(xs), np.stack([jax.grad(loss)(x) for x in xs]))
  _close(jax.grad(lambda xs: jax.vmap(loss)(xs).sum())(xs),
         np.stack([jax.grad(loss)(x) for x in xs]))


# -------------------------------------------------------------- compiled
def test_compiled_matches_interpreted():
  # One module holds every case (an IREE compile costs ~0.5 s).
  xs = np.random.default_rng(3).normal(size=(4, 3)).astype(F32)

  def everything(x, xs, i, p):
    nest = lambda v: lax.cond(v > 0, lambda v: lax.cond(v > 1, lambda v: v ** 3,  # noqa: E731
                                                        lambda v: v ** 2, v), lambda v: -v, v)
    return (
        lax.cond(p, lambda x: (jnp.sin(x), x.sum()), lambda x: (x * 2., jnp.float32(3.)), x),
        lax.switch(i, [jnp.sin, jnp.cos, lambda x: x + 1.], x),
        lax.cond(x.sum() > 0, lambda: 1, lambda: 2),
        jax.grad(lambda x: _f(x, X3).sum())(x),
        jax.vmap(lambda x: _f(x, X3))(xs),
        jax.vmap(lambda i, x: lax.switch(i, [jnp.sin, jnp.exp], x))(
            np.array([0, 1, 1, 0], np.int32), xs),
        jax.vmap(jax.grad(nest))(x),
        lax.cond(p, lambda: jnp.zeros((0, 2)), lambda: jnp.ones((0, 2))),
    )
  compiled_fn = jax.jit(everything).lower(X3, xs, 1, True).compile()
  for args in ((X3, xs, 1, True), (-X3, xs, 7, False), (X3 * 2, -xs, -1, False)):
    interpreted = jax.jit(everything)(*args)
    compiled = compiled_fn(*args)
    for a, b in zip(jax.tree_util.tree_leaves(interpreted), jax.tree_util.tree_leaves(compiled)):
      assert np.asarray(a).dtype == np.asarray(b).dtype
      np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-6, atol=1e-6)


def test_lowered_text_is_a_stablehlo_case():
  text = jax.jit(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.exp], x)).lower(1, X3).as_text()
  assert len(re.findall(r"stablehlo\.case", text)) == 1
  assert text.count("stablehlo.return") == 3


# ------------------------------------------- jaxpr-level partial evaluation
def test_jaxpr_level_split_with_known_and_unknown_index():
  closed = jax.make_jaxpr(lambda i, x, y: lax.switch(i, [lambda x, y: jnp.sin(x) * y,
                                                         lambda x, y: x * y], x, y))(1, 2., 3.)
  # Index and x known, y unknown: one cond computes sin(x)/x now, one stages the rest.
  known, unknown, out_uk, n_res = partial_eval_jaxpr(closed.jaxpr, [False, False, True])
  assert out_uk == [True] and [e.primitive.name for e in known.eqns][-1] == "cond"
  assert [e.primitive.name for e in unknown.eqns] == ["cond"]
  check_jaxpr(known)
  check_jaxpr(unknown)
  res = eval_jaxpr(known, [], 1, np.float32(2.))
  _close(eval_jaxpr(unknown, [], *res, np.float32(3.)), [np.float32(6.)])
  res = eval_jaxpr(known, [], 0, np.float32(2.))
  _close(eval_jaxpr(unknown, [], *res, np.float32(3.)), [np.sin(np.float32(2.)) * 3])
  # An unknown index stages the whole cond.
  known, unknown, out_uk, n_res = partial_eval_jaxpr(closed.jaxpr, [True, False, False])
  assert out_uk == [True] and "cond" not in [e.primitive.name for e in known.eqns]
  assert [e.primitive.name for e in unknown.eqns][-1] == "cond"
