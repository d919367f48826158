"""Differentiation: ``jvp``, ``linearize``, ``vjp``, ``grad``/``value_and_grad``,
``jacfwd``/``jacrev``/``hessian``, ``linear_transpose``, ``check_grads``, their
compositions with each other and with ``jit``/``vmap``, and the autodiff
cookbook's patterns. Values, dtypes, weak types and error messages are
those of JAX 0.10.2."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import Tracer, check_jaxpr
from openjax.dtypes import float0

f32, i32 = np.float32, np.int32


def _eq(a, b, tol=1e-6):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def _prims(closed):
  names, stack = [], [closed.jaxpr]
  while stack:
    j = stack.pop()
    for e in j.eqns:
      names.append(e.primitive.name)
      stack.extend(p.jaxpr for p in e.params.values() if hasattr(p, "jaxpr"))
  return names


# ------------------------------------------------------------------------ jvp
def test_jvp_values_and_pytrees():
  y, t = jax.jvp(lambda x: jnp.sin(x) * x, (2.0,), (1.0,))
  _eq(y, np.sin(2.0) * 2.0)
  _eq(t, np.cos(2.0) * 2.0 + np.sin(2.0))
  assert y.weak_type and t.weak_type
  f = lambda p: (p["x"] * p["y"], [p["x"]])
  (a, (b,)), (ta, (tb,)) = jax.jvp(f, ({"x": 2.0, "y": 3.0},), ({"x": 1.0, "y": 0.5},))
  _eq(a, 6.0), _eq(ta, 4.0), _eq(tb, 1.0)
  assert b == 2.0


def test_jvp_has_aux_returns_primal_values():
  y, t, aux = jax.jvp(lambda x: (x * x, {"a": x, "b": jnp.sin(x)}), (3.0,), (1.0,),
                      has_aux=True)
  _eq(y, 9.0), _eq(t, 6.0), _eq(aux["b"], np.sin(3.0))
  assert not isinstance(aux["a"], Tracer) and aux["a"] == 3.0


def test_jvp_integer_inputs_take_float0_tangents():
  zero = np.zeros((), float0)
  y, t = jax.jvp(lambda x, n: x * n, (2.0, 3), (1.0, zero))
  _eq(y, 6.0), _eq(t, 3.0)
  (y, n), (ty, tn) = jax.jvp(lambda x: (x * 2, jnp.int32(1)), (1.0,), (1.0,))
  assert tn.dtype == float0 and tn.shape == ()
  assert jax.jvp(lambda n: n * 2, (3,), (zero,))[1].dtype == float0


@pytest.mark.parametrize("primals, tangents, exc, msg", [
    ((2.0, 3), (1.0, 1), TypeError,
     "primal and tangent arguments to jax.jvp do not match; dtypes must be equal, or in "
     "case of int/bool primal dtype the tangent dtype must be float0.Got primal dtype int32 "
     "and so expected tangent dtype [('float0', 'V')], but got tangent dtype int32 instead."),
    ((np.ones(3, f32), 1.0), (np.ones(2, f32), 1.0), ValueError,
     "jvp called with different primal and tangent shapes;Got primal shape (3,) and tangent "
     "shape as (2,)"),
    ((2.0, 1.0), ((1.0,), 1.0), TypeError,
     "primal and tangent arguments to jax.jvp must have the same tree structure; primals "
     "have tree structure PyTreeDef((*, *)) whereas tangents have tree structure "
     "PyTreeDef(((*,), *))."),
    (2.0, 1.0, TypeError,
     "primal and tangent arguments to jax.jvp must be tuples or lists; found float and "
     "float."),
])
def test_jvp_errors(primals, tangents, exc, msg):
  with pytest.raises(exc) as e:
    jax.jvp(lambda x, n: x * n, primals, tangents)
  assert str(e.value) == msg


def test_jvp_float64_tangent_for_float32_primal_under_x64():
  with jax.enable_x64():
    with pytest.raises(TypeError, match="Got primal dtype float32 and so expected tangent "
                                        "dtype float32, but got tangent dtype float64"):
      jax.jvp(jnp.sin, (np.float32(1),), (np.float64(1),))


# ------------------------------------------------------------------ linearize
def test_linearize_matches_jvp_and_reuses_residuals():
  f = lambda x: jnp.sin(jnp.sin(x) * x).sum()
  x = np.linspace(0.1, 1, 4).astype(f32)
  y, f_jvp = jax.linearize(f, x)
  for t in (np.ones(4, f32), np.arange(4, dtype=f32)):
    _eq(f_jvp(t), jax.jvp(f, (x,), (t,))[1], 1e-5)
  _eq(y, f(x))
  # The linear function only scales tangents by saved residuals: no sin or cos.
  names = _prims(jax.make_jaxpr(f_jvp)(x))
  assert "sin" not in names and "cos" not in names, names


def test_linearize_pytrees_and_aux():
  y, f_jvp = jax.linearize(lambda p: p["a"] * p["b"], {"a": 2.0, "b": 3.0})
  _eq(f_jvp({"a": 1.0, "b": 1.0}), 5.0)
  y, f_jvp, aux = jax.linearize(lambda x: (x * 2, x + 1), 2.0, has_aux=True)
  _eq(aux, 3.0), _eq(f_jvp(1.0), 2.0)


def test_linearize_errors():
  _, f_jvp = jax.linearize(lambda x: x * 2, np.ones(3, f32))
  with pytest.raises(TypeError, match=re.escape("expected PyTreeDef((*,)), got "
                                                "PyTreeDef(((*,),))")):
    f_jvp((np.ones(3, f32),))
  with pytest.raises(ValueError) as e:
    f_jvp(np.ones(2, f32))
  assert str(e.value) == ("linearized function called on tangent values inconsistent with "
                          "the original primal values:\nGot tangent aval float32[2] for "
                          "primal aval float32[3] but expected float32[3].")


def test_reverse_mode_cost_is_linear_in_program_size():
  # grad of N chained primitives runs each forward primitive once and stages
  # one linear equation per nonlinear step: no recomputation.
  def chain(n):
    def f(x):
      for _ in range(n):
        x = jnp.sin(x)
      return x
    return f
  for n in (5, 10, 20):
    names = _prims(jax.make_jaxpr(jax.grad(chain(n)))(0.5))
    assert names.count("sin") == n and names.count("cos") == n
    assert names.count("mul") == n
    _, f_jvp = jax.linearize(chain(n), 0.5)
    assert _prims(jax.make_jaxpr(f_jvp)(0.5)).count("mul") == n


# ------------------------------------------------------------------------ vjp
def test_vjp_pytrees_and_int_inputs():
  f = lambda x, y: (jnp.sin(x) * y, {"a": x * y})
  x, y = np.arange(3, dtype=f32), f32(2.0)
  out, f_vjp = jax.vjp(f, x, y)
  gx, gy = f_vjp((np.ones(3, f32), {"a": np.ones(3, f32)}))
  _eq(gx, np.cos(x) * 2 + 2), _eq(gy, np.sin(x).sum() + x.sum())
  _, f_vjp = jax.vjp(lambda x, n: x * n, 2.0, 3)
  gx, gn = f_vjp(1.0)
  _eq(gx, 3.0)
  assert gn.dtype == float0
  # float0 and integer cotangents are accepted for integer outputs.
  _, f_vjp = jax.vjp(lambda x: (x * 2, jnp.int32(3)), 1.0)
  _eq(f_vjp((1.0, np.zeros((), float0)))[0], 2.0)
  _eq(f_vjp((1.0, 0))[0], 2.0)


def test_vjp_has_aux():
  out, f_vjp, aux = jax.vjp(lambda x: (x * 2, {"x": x}), 1.5, has_aux=True)
  _eq(out, 3.0), _eq(f_vjp(1.0)[0], 2.0)
  assert aux["x"] == 1.5


def f_two_outputs(x, y):
  return jnp.sin(x) * y, {"a": x * y}


def test_vjp_errors():
  x, y = np.arange(3, dtype=f32), f32(2.0)
  _, f_vjp = jax.vjp(f_two_outputs, x, y)
  code = f_two_outputs.__code__
  with pytest.raises(ValueError) as e:
    f_vjp((np.ones(3, f32),))
  assert str(e.value) == (
      "unexpected tree structure.\n\nThe argument to a VJP function returned by `jax.vjp` "
      "must match the pytree\nstructure of the differentiated function f_two_outputs at "
      f"{code.co_filename}:{code.co_firstlineno}.\n\nBut the tree structures differ:\n"
      "  * out was a tuple of length 2 in the original output, but a tuple of length 1 "
      "here, so the lengths do not match.")
  with pytest.raises(ValueError) as e:
    f_vjp((np.ones(2, f32), {"a": np.ones(3, f32)}))
  assert str(e.value) == (
      "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
      "float32[2], but expected float32[3] because the corresponding output of the "
      "differentiated function had JAX type float32[3]")
  with pytest.raises(ValueError, match=r"got int32\[3\], but expected float32\[3\]"):
    f_vjp((np.ones(3, i32), {"a": np.ones(3, f32)}))
  _, f_vjp = jax.vjp(f_two_outputs, 1.0, 2.0)
  with pytest.raises(TypeError) as e:
    f_vjp(1.0, 2.0)
  assert str(e.value).startswith(
      "\nThe function returned by `jax.vjp` applied to f_two_outputs was called with 2 "
      "arguments,\nbut functions returned by `jax.vjp` must be called with a single "
      "argument\n")


def test_vjp_and_linearize_functions_are_pytrees_of_residuals():
  f = lambda x, W: jnp.tanh(x @ W)
  x, W = np.ones((4, 4), f32), np.eye(4, dtype=f32) * 0.5
  _, f_vjp = jax.vjp(f, x, W)
  ct = np.ones((4, 4), f32)
  eager = f_vjp(ct)
  through_jit = jax.jit(lambda fv, c: fv(c))(f_vjp, ct)
  for a, b in zip(eager, through_jit):
    _eq(a, b)
  _eq(jax.jit(f_vjp)(ct)[1], eager[1])
  _, f_jvp = jax.linearize(f, x, W)
  _eq(jax.jit(lambda fj, t: fj(t, t))(f_jvp, x), f_jvp(x, x))
  assert all(not isinstance(leaf, Tracer) for leaf in jax.tree_util.tree_leaves(f_jvp))


# ----------------------------------------------------------------------- grad
def test_grad_values_dtypes_and_weak_types():
  g = jax.grad(lambda x: x * x)(3.0)
  _eq(g, 6.0)
  assert g.dtype == f32 and g.weak_type
  g = jax.grad(lambda x: (x * x).sum())(np.ones(3, np.float16))
  assert g.dtype == np.float16
  g = jax.grad(lambda p: p["w"] * p["b"][0])({"w": 2.0, "b": [3.0, 4.0]})
  _eq(g["w"], 3.0), _eq(g["b"][0], 2.0), _eq(g["b"][1], 0.0)
  # Cookbook: derivatives of tanh to third order.
  _eq(jax.grad(jnp.tanh)(2.0), 0.070650816)
  _eq(jax.grad(jax.grad(jnp.tanh))(2.0), -0.13621868)
  _eq(jax.grad(jax.grad(jax.grad(jnp.tanh)))(2.0), 0.25265405)
  _eq(jax.grad(jax.grad(jax.grad(lambda x: x ** 4)))(2.0), 48.0)


def test_grad_argnums_and_kwargs():
  f = lambda x, y, z: x * y * z
  g = jax.grad(f, argnums=(0, 2))(2.0, 3.0, 4.0)
  assert isinstance(g, tuple) and len(g) == 2
  _eq(g[0], 12.0), _eq(g[1], 6.0)
  _eq(jax.grad(f, argnums=-1)(2.0, 3.0, 4.0), 6.0)
  _eq(jax.grad(f, argnums=[0, 1])(2.0, 3.0, 4.0)[1], 8.0)
  _eq(jax.grad(lambda x, y=2.0: x * y)(3.0, y=5.0), 5.0)


def test_grad_has_aux_and_value_and_grad():
  g, aux = jax.grad(lambda x: (x * x, {"a": x + 1}), has_aux=True)(2.0)
  _eq(g, 4.0), _eq(aux["a"], 3.0)
  (v, aux), g = jax.value_and_grad(lambda x: (x * x, x), has_aux=True)(3.0)
  _eq(v, 9.0), _eq(g, 6.0)
  assert not isinstance(aux, Tracer)
  v, (gx, gy) = jax.value_and_grad(lambda x, y: x * y, argnums=(0, 1))(2.0, 3.0)
  _eq(v, 6.0), _eq(gx, 3.0), _eq(gy, 2.0)


def test_grad_holomorphic_allow_int_and_complex_inputs():
  _eq(jax.grad(lambda x: x * x, holomorphic=True)(2.0 + 1j), 4 + 2j)
  # Non-holomorphic grad of a real function of a complex input: conj convention.
  _eq(jax.grad(lambda x: (x * x).real)(2.0 + 1j), 4 + 2j)
  gx, gn = jax.grad(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(2.0, 3)
  _eq(gx, 3.0)
  assert gn.dtype == float0


@pytest.mark.parametrize("fun, kw, arg, msg", [
    (lambda x: x * 2.0, {}, 2,
     "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
     "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
     "vjp or set allow_int to True."),
    (lambda x: 1.0, {}, True,
     "grad requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
     "np.inexact), but got bool. If you want to use Boolean- or integer-valued inputs, use "
     "vjp or set allow_int to True."),
    (lambda x: jnp.sin(x), {}, np.ones(3, f32),
     "Gradient only defined for scalar-output functions. Output had shape: (3,)."),
    (lambda x: x * 1j, {}, 2.0,
     "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
     "but got complex64. For holomorphic differentiation, pass holomorphic=True. For "
     "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
     "directly."),
    (lambda x: jnp.int32(1), {}, 2.0,
     "grad requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
     "but got int32. For differentiation of functions with integer outputs, use jax.vjp "
     "directly."),
    (lambda x: x * x, {"holomorphic": True}, 2.0,
     "grad with holomorphic=True requires inputs with complex dtype, but got float32."),
    (lambda x: (x * x).real, {"holomorphic": True}, 2.0 + 1j,
     "grad with holomorphic=True requires outputs with complex dtype, but got float32."),
    (lambda x: 2.0, {}, "a", "Argument 'a' of type <class 'str'> is not a valid JAX type."),
    (lambda x: x * x, {"has_aux": True}, 2.0,
     "expected function with aux output to return a two-element tuple, but got type "
     "<class 'openjax._src.interpreters.jvp.JVPTracer'> with value "
     "JVPTracer<float32[]>"),
])
def test_grad_errors(fun, kw, arg, msg):
  with pytest.raises(TypeError) as e:
    jax.grad(fun, **kw)(arg)
  assert str(e.value) == msg


def test_grad_structural_errors():
  with pytest.raises(TypeError) as e:
    jax.grad(lambda x, y: x * y, argnums=2)(2.0, 3.0)
  assert str(e.value) == ("differentiating with respect to argnums=2 requires at least 3 "
                          "positional arguments to be passed by the caller, but got only 2 "
                          "positional arguments.")
  with pytest.raises(ValueError, match="Positional argument indices, e.g. for "
                                       "`static_argnums`, must have value greater than or "
                                       "equal to -len"):
    jax.grad(lambda x: x, argnums=-2)(1.0)
  with pytest.raises(TypeError, match="Gradient only defined for scalar-output functions. "
                                      "Output was "):
    jax.grad(lambda x: [x])(2.0)
  with pytest.raises(TypeError, match="Expected a callable value, got 3"):
    jax.grad(3)
  with pytest.raises(NotImplementedError, match="reduce_axes argument to grad is deprecated"):
    jax.grad(lambda x: x, reduce_axes=("i",))


def test_grad_docstring_and_name():
  def loss(w):
    """The loss."""
    return w * w
  g = jax.grad(loss, argnums=0)
  assert g.__name__ == "loss" and g.__wrapped__ is loss
  assert g.__doc__ == ("Gradient of loss with respect to positional argument(s) 0. Takes "
                       "the same arguments as loss but returns the gradient, which has the "
                       "same shape as the arguments at positions 0.")


# ------------------------------------------------------------------ Jacobians
def test_jacfwd_jacrev_on_pytrees():
  f = lambda p: {"o": p["a"] * p["b"][0], "q": p["a"].sum()}
  p = {"a": np.arange(2, dtype=f32), "b": [f32(3.0)]}
  for jac in (jax.jacfwd, jax.jacrev, jax.jacobian):
    J = jac(f)(p)
    _eq(J["o"]["a"], 3 * np.eye(2)), _eq(J["o"]["b"][0], [0.0, 1.0])
    _eq(J["q"]["a"], [1.0, 1.0]), _eq(J["q"]["b"][0], 0.0)
    assert J["o"]["b"][0].shape == (2,) and J["q"]["b"][0].shape == ()
  for jac in (jax.jacfwd, jax.jacrev):
    Jx, Jy = jac(lambda x, y: x * y, argnums=(0, 1))(np.arange(2, dtype=f32), f32(3.0))
    _eq(Jx, 3 * np.eye(2)), _eq(Jy, [0.0, 1.0])
    J, aux = jac(lambda x: (x * 2, x.sum()), has_aux=True)(np.arange(2, dtype=f32))
    _eq(J, 2 * np.eye(2)), _eq(aux, 1.0)


def test_jacobian_dtypes():
  # jacfwd takes the output's dtype, jacrev the input's (as JAX).
  f = lambda x, y: (x * y).astype(f32)
  args = (np.ones(2, np.float16), f32(2))
  Jx, Jy = jax.jacfwd(f, argnums=(0, 1))(*args)
  assert Jx.dtype == Jy.dtype == f32
  Jx, Jy = jax.jacrev(f, argnums=(0, 1))(*args)
  assert Jx.dtype == np.float16 and Jy.dtype == f32
  J = jax.jacfwd(lambda x: x * 2j)(np.ones(2, f32))
  assert J.dtype == np.complex64
  _, Jn = jax.jacrev(lambda x, n: x * n, argnums=(0, 1), allow_int=True)(f32(1.0), 3)
  assert Jn.dtype == i32 and float(Jn) == 0


@pytest.mark.parametrize("jac, arg, msg", [
    (jax.jacfwd, np.arange(2),
     "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
     "but got int32. For holomorphic differentiation, pass holomorphic=True. For "
     "differentiation of non-holomorphic functions involving complex inputs or integer "
     "inputs, use jax.jvp directly."),
    (jax.jacfwd, np.ones(2, np.complex64),
     "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of np.floating), "
     "but got complex64. For holomorphic differentiation, pass holomorphic=True. For "
     "differentiation of non-holomorphic functions involving complex inputs or integer "
     "inputs, use jax.jvp directly."),
    (jax.jacrev, np.arange(2),
     "jacrev requires real- or complex-valued inputs (input dtype that is a sub-dtype of "
     "np.inexact), but got int32. If you want to use Boolean- or integer-valued inputs, use "
     "vjp or set allow_int to True."),
    (jax.jacrev, np.ones(2, np.complex64),
     "jacrev requires real-valued outputs (output dtype that is a sub-dtype of np.floating), "
     "but got complex64. For holomorphic differentiation, pass holomorphic=True. For "
     "differentiation of non-holomorphic functions involving complex outputs, use jax.vjp "
     "directly."),
])
def test_jacobian_errors(jac, arg, msg):
  with pytest.raises(TypeError) as e:
    jac(lambda x: x * 2)(arg)
  assert str(e.value) == msg


def test_hessian():
  _eq(jax.hessian(lambda x: (x ** 3).sum())(np.arange(3, dtype=f32)), np.diag([0, 6, 12]))
  # The docstring example: a tree of trees of trees.
  f = lambda d: {"c": jnp.power(d["a"], d["b"])}
  H = jax.hessian(f)({"a": np.arange(2, dtype=f32) + 1, "b": np.arange(2, dtype=f32) + 2})
  _eq(H["c"]["a"]["a"], [[[2, 0], [0, 0]], [[0, 0], [0, 12]]], 1e-5)
  _eq(H["c"]["b"]["b"], [[[0, 0], [0, 0]], [[0, 0], [0, 3.843624]]], 1e-5)
  _eq(H["c"]["a"]["b"], H["c"]["b"]["a"])
  H = jax.hessian(lambda x, y: (x * y ** 2).sum(), argnums=(0, 1))(f32(1.0), f32(2.0))
  _eq(H[0][0], 0.0), _eq(H[0][1], 4.0), _eq(H[1][0], 4.0), _eq(H[1][1], 2.0)
  g = lambda x: x[0] ** 3 - 2 * x[0] * x[1] - x[1] ** 6
  _eq(jax.hessian(g)(jnp.array([1.0, 2.0])), [[6, -2], [-2, -480]])


# ----------------------------------------------------------- linear_transpose
def test_linear_transpose():
  t = jax.linear_transpose(lambda x, y: 0.5 * x - 0.5 * y, 1.0, 1.0)
  a, b = t(1.0)
  _eq(a, 0.5), _eq(b, -0.5)
  t = jax.linear_transpose(lambda p: (p["a"] * 2, p["b"].sum()),
                           {"a": f32(1), "b": np.ones(3, f32)})
  (g,) = t((f32(1), f32(2)))
  _eq(g["a"], 2.0), _eq(g["b"], [2, 2, 2])
  spec = jax.ShapeDtypeStruct((2,), f32)
  _eq(jax.linear_transpose(lambda x: x * 2, spec)(np.ones(2, f32))[0], [2, 2])
  _eq(jax.linear_transpose(lambda x, y: x * 2, 1.0, 1.0)(1.0)[1], 0.0)
  _eq(jax.linear_transpose(lambda x: x * (1 + 2j), np.complex64(1))(np.complex64(1))[0],
      1 + 2j)
  assert jax.linear_transpose(lambda x: x * 2, 1)(1)[0].dtype == i32


def test_linear_transpose_errors():
  with pytest.raises(TypeError) as e:
    jax.linear_transpose(lambda x: x.astype(f32), 1)
  assert str(e.value) == (
      "linear_transpose only supports [float or complex] -> [float or complex], and integer "
      "-> integer functions, but got [dtype('int32')] -> [dtype('float32')].")
  with pytest.raises(TypeError) as e:
    jax.linear_transpose(lambda x: (x, x), 1.0)(1.0)
  assert str(e.value) == ("cotangent tree does not match function output, expected "
                          "PyTreeDef((*, *)) but got PyTreeDef(*)")
  with pytest.raises(TypeError, match=re.escape("cotangent type does not match function "
                                                "output, expected (ShapedArray(float32[2]),) "
                                                "but got [array([1., 1., 1.]")):
    jax.linear_transpose(lambda x: x * 2, np.ones(2, f32))(np.ones(3, f32))


# ------------------------------------------------------------- composition
F = lambda x: jnp.sin(x) * x ** 2
DF = lambda x: np.cos(x) * x ** 2 + 2 * x * np.sin(x)
D2F = lambda x: -np.sin(x) * x ** 2 + 4 * x * np.cos(x) + 2 * np.sin(x)


@pytest.mark.parametrize("make, d", [
    (lambda: jax.grad(jax.jit(F)), DF), (lambda: jax.jit(jax.grad(F)), DF),
    (lambda: jax.grad(jax.grad(jax.jit(F))), D2F), (lambda: jax.jit(jax.grad(jax.grad(F))), D2F),
    (lambda: jax.grad(jax.jit(jax.grad(F))), D2F),
    (lambda: jax.grad(lambda x: jax.jvp(F, (x,), (f32(1),))[1]), D2F),
    (lambda: (lambda x: jax.jvp(lambda v: jax.vjp(F, v)[1](f32(1))[0], (x,), (f32(1),))[1]),
     D2F),
])
def test_compositions_with_jit(make, d):
  x = f32(0.7)
  _eq(make()(x), d(0.7), 1e-5)


def test_jit_of_grad_of_jit_jaxpr_is_well_formed():
  closed = jax.make_jaxpr(jax.grad(jax.jit(F)))(1.0)
  check_jaxpr(closed)
  names = _prims(closed)
  # The forward jit runs once (primal and residuals); the transposed jit is linear.
  assert names.count("sin") == 1 and names.count("cos") == 1


def test_grad_of_nested_jits_keeps_primal_values_concrete():
  inner = jax.jit(jax.vmap(jax.jit(lambda b: jnp.sum(jnp.sin(b)))))
  elbo = jax.jit(lambda loc, e: jnp.mean(inner(loc + e)))
  eps = np.ones((8, 3), f32)
  for vg in (jax.value_and_grad(elbo), jax.jit(jax.value_and_grad(elbo))):
    v, g = vg(jnp.zeros(3), eps)
    assert not isinstance(v, Tracer)
    _eq(v, 3 * np.sin(1.0)), _eq(g, np.full(3, np.cos(1.0)))


def test_perturbation_confusion():
  _eq(jax.grad(lambda x: jax.grad(lambda y: x * y)(1.0))(2.0), 1.0)
  _eq(jax.grad(lambda x: x * jax.grad(lambda y: x + y)(1.0))(2.0), 1.0)
  _eq(jax.jvp(lambda x: jax.jvp(lambda y: x * y, (1.0,), (1.0,))[1], (2.0,), (1.0,))[1], 1.0)


def test_jit_closure_and_integer_arguments_under_grad():
  x = f32(0.7)
  _eq(jax.grad(lambda a: jax.jit(lambda b: a * b)(f32(3)))(x), 3.0)
  _eq(jax.grad(jax.jit(lambda a, n: a * n))(x, 3), 3.0)
  _eq(jax.grad(jax.jit(lambda a, n: a * n, static_argnums=1))(x, 3), 3.0)
  g = jax.grad(jax.jit(lambda a, b: b * 2.0), argnums=(0, 1))(x, x)
  _eq(g[0], 0.0), _eq(g[1], 2.0)
  _eq(jax.grad(lambda a: jax.jit(lambda b: (jnp.int32(1), b * 2))(a)[1])(x), 2.0)


# -------------------------------------------------------------- check_grads
def test_check_grads_passes_and_fails():
  jax.test_util.check_grads(lambda x, y: jnp.sin(x) * y, (np.float32(0.3), np.float32(2.0)),
                            order=2)
  jax.test_util.check_grads(lambda p: jnp.tanh(p["a"]) @ p["b"],
                            ({"a": np.ones(3, f32), "b": np.arange(3, dtype=f32)},), order=1)
  with jax.enable_x64():
    jax.test_util.check_grads(jnp.exp, (np.linspace(0, 1, 5),), order=3)
  bad = jax.custom_jvp(jnp.sin)
  bad.defjvp(lambda primals, tangents: (jnp.sin(primals[0]), 2 * tangents[0]))
  with pytest.raises(AssertionError):
    jax.test_util.check_grads(bad, (np.float32(0.3),), order=1, modes=("fwd",))


# ------------------------------------------------------ the autodiff cookbook
def _sigmoid(x):
  return 0.5 * (jnp.tanh(x / 2) + 1)


def _predict(W, b, inputs):
  return _sigmoid(jnp.dot(inputs, W) + b)


INPUTS = np.array([[0.52, 1.12, 0.77], [0.88, -1.08, 0.15], [0.52, 0.06, -1.30],
                   [0.74, -2.49, 1.39]], f32)
TARGETS = np.array([True, True, False, True])
W0, B0 = np.array([0.3, -0.7, 1.1], f32), f32(0.2)
W_GRAD = [-0.27214217, -0.15290874, -0.6900469]       # JAX 0.10.2
B_GRAD = -0.37447792
JAC = [[0.12445715, 0.26806158, 0.18429233], [0.14090934, -0.1729342, 0.02401864],
       [0.09665055, 0.01115199, -0.2416264], [0.01752299, -0.05896249, 0.03291481]]


def _loss(W, b):
  preds = _predict(W, b, INPUTS)
  label_probs = preds * TARGETS + (1 - preds) * (1 - TARGETS)
  return -jnp.sum(jnp.log(label_probs))


def test_cookbook_logistic_regression_gradients():
  _eq(jax.grad(_loss)(W0, B0), W_GRAD, 1e-5)
  _eq(jax.grad(_loss, 1)(W0, B0), B_GRAD, 1e-5)
  v, (gw, gb) = jax.value_and_grad(_loss, (0, 1))(W0, B0)
  _eq(v, 1.0367677), _eq(gw, W_GRAD, 1e-5), _eq(gb, B_GRAD, 1e-5)
  g = jax.grad(lambda d: _loss(d["W"], d["b"]))({"W": W0, "b": B0})
  _eq(g["W"], W_GRAD, 1e-5), _eq(g["b"], B_GRAD, 1e-5)
  eps = 1e-3
  _eq((_loss(W0, B0 + eps / 2) - _loss(W0, B0 - eps / 2)) / eps, B_GRAD, 1e-3)


def test_cookbook_jacobians_of_pytrees():
  f = lambda W: _predict(W, B0, INPUTS)
  _eq(jax.jacfwd(f)(W0), JAC, 1e-5)
  _eq(jax.jacrev(f)(W0), JAC, 1e-5)
  assert jax.hessian(f)(W0).shape == (4, 3, 3)
  J = jax.jacrev(lambda p, x: _predict(p["W"], p["b"], x))({"W": W0, "b": B0}, INPUTS)
  _eq(J["W"], JAC, 1e-5)
  _eq(J["b"], [0.2393407, 0.16012426, 0.18586646, 0.02367972], 1e-5)


def test_cookbook_hessian_vector_products():
  g = lambda x: jnp.sum(jnp.tanh(x) ** 2 * jnp.arange(3.0))
  x, v = jnp.array([0.5, -1.0, 2.0]), jnp.array([1.0, 2.0, -0.5])
  want = np.asarray(jax.hessian(g)(x)) @ np.asarray(v)
  _eq(want, [0.0, -1.2432537, 0.25265405], 1e-5)
  hvp_rev = jax.grad(lambda x: jnp.vdot(jax.grad(g)(x), v))(x)      # reverse-over-reverse
  hvp_fwd = jax.jvp(jax.grad(g), (x,), (v,))[1]                      # forward-over-reverse
  hvp_rev_fwd = jax.grad(lambda x: jax.jvp(g, (x,), (v,))[1])(x)     # reverse-over-forward
  for h in (hvp_rev, hvp_fwd, hvp_rev_fwd, jax.jit(lambda x: jax.jvp(jax.grad(g), (x,),
                                                                    (v,))[1])(x)):
    _eq(h, want, 1e-5)
  # A batch of HVPs with vmap.
  vs = jnp.stack([v, 2 * v, jnp.ones(3)])
  hs = jax.vmap(lambda v: jax.jvp(jax.grad(g), (x,), (v,))[1])(vs)
  H = np.asarray(jax.hessian(g)(x))
  _eq(hs, np.asarray(vs) @ H.T, 1e-5)


def test_cookbook_per_example_gradients():
  def ploss(W, b, x, t):
    p = _predict(W, b, x)
    return -(t * jnp.log(p) + (1 - t) * jnp.log(1 - p))
  t = TARGETS.astype(f32)
  gw, gb = jax.vmap(jax.grad(ploss, argnums=(0, 1)), in_axes=(None, None, 0, 0))(
      W0, B0, INPUTS, t)
  assert gw.shape == (4, 3) and gb.shape == (4,)
  loop = [jax.grad(ploss, argnums=(0, 1))(W0, B0, INPUTS[i], t[i]) for i in range(4)]
  _eq(gw, np.stack([np.asarray(l[0]) for l in loop]), 1e-6)
  _eq(gb, np.stack([np.asarray(l[1]) for l in loop]), 1e-6)
  _eq(gb, [-0.39675605, -0.20020717, 0.24675399, -0.02426869], 1e-5)
  jitted = jax.jit(jax.vmap(jax.grad(ploss), in_axes=(None, None, 0, 0)))(W0, B0, INPUTS, t)
  _eq(jitted, gw, 1e-6)
  # The sum of per-example gradients is the gradient of the summed loss.
  _eq(np.asarray(gw).sum(0), jax.grad(lambda W: jnp.sum(ploss(W, B0, INPUTS, t)))(W0), 1e-5)


# ------------------------------------------------- jaxprs stay well typed
_G = lambda x: jnp.sum(jnp.tanh(x) * x[::-1]) + jnp.dot(x, x)
_GJ = jax.jit(_G)


@pytest.mark.parametrize("name, fn", [
    ("grad", jax.grad(_G)), ("grad jit", jax.grad(_GJ)), ("jit grad", jax.jit(jax.grad(_G))),
    ("hessian", jax.hessian(_G)), ("hessian jit", jax.hessian(_GJ)),
    ("jacrev", jax.jacrev(jnp.sin)), ("jacfwd jit", jax.jacfwd(jax.jit(jnp.sin))),
    ("vmap grad", jax.vmap(jax.grad(lambda v: _GJ(v * 2)))),
    ("hvp", lambda x: jax.jvp(jax.grad(_GJ), (x,), (x,))[1]),
    ("linearized", lambda x: jax.linearize(_GJ, x)[1](x)),
    ("vjp", lambda x: jax.vjp(_GJ, x)[1](f32(1.0))),
    ("grad of grad of nested jits", jax.grad(lambda x: jax.grad(
        lambda y: jax.jit(lambda z: _GJ(z) * y.sum())(y))(x).sum())),
])
def test_transformed_jaxprs_type_check(name, fn):
  x = np.linspace(0.1, 1, 3).astype(f32)
  closed = jax.make_jaxpr(fn)(x if name != "vmap grad" else np.stack([x, x]))
  check_jaxpr(closed)
