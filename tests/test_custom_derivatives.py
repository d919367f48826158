"""custom_jvp, custom_vjp, custom_gradient, closure_convert and stop_gradient.

Expected values and printed jaxprs come from JAX 0.10.2 (JAX's documentation
examples: log1pexp, clip_gradient, app with nondiff_argnums)."""
import functools
import textwrap

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax.core import check_jaxpr
from openjax.custom_derivatives import (SymbolicZero, closure_convert, custom_gradient,
                                        custom_jvp_call_p, custom_vjp_call_p)
from openjax.errors import UnexpectedTracerError
from openjax._src.control.custom_derivatives import custom_lin_p


def _close(a, b, tol=1e-6):
  np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64),
                             rtol=tol, atol=tol)


def _dedent(s):
  return textwrap.dedent(s).strip("\n")


# ------------------------------------------------------------ custom_jvp
@jax.custom_jvp
def log1pexp(x):
  return jnp.log(1. + jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  ans = log1pexp(x)
  ans_dot = (1 - 1 / (1 + jnp.exp(x))) * x_dot
  return ans, ans_dot


def test_log1pexp_custom_rule_fixes_nan_gradient():
  naive = lambda x: jnp.log(1. + jnp.exp(x))
  assert np.isnan(np.asarray(jax.grad(naive)(100.)))
  assert float(log1pexp(3.)) == pytest.approx(3.0485873)
  _close(jax.grad(log1pexp)(100.), 1.0)
  _close(jax.jit(jax.grad(log1pexp))(3.), 0.95257413)
  _close(jax.vmap(jax.grad(log1pexp))(jnp.arange(3.)), [0.5, 0.7310586, 0.8807971])
  _close(jax.grad(jax.jit(log1pexp))(100.), 1.0)


def test_log1pexp_jaxpr_as_jax():
  expected = """
  { lambda ; a:f32[]. let
      b:f32[] = custom_jvp_call[
        name=log1pexp
        call_jaxpr={ lambda ; c:f32[]. let
            d:f32[] = exp c
            e:f32[] = add 1.0:f32[] d
            f:f32[] = log e
          in (f,) }
        jvp=log1pexp_jvp
        symbolic_zeros=False
      ] a
    in (b,) }"""
  closed = jax.make_jaxpr(log1pexp)(3.)
  check_jaxpr(closed)
  assert str(closed) == _dedent(expected)


@jax.custom_jvp
def cube(x):
  return x ** 3


@cube.defjvp
def cube_jvp(primals, tangents):
  x, = primals
  x_dot, = tangents
  return cube(x), 2. * x * x_dot   # deliberately not 3x^2: the rule is used


def test_higher_order_uses_the_rule_derivative():
  assert float(jax.grad(cube)(3.)) == 6.0
  assert float(jax.grad(jax.grad(cube))(3.)) == 2.0
  assert float(jax.grad(jax.grad(jax.grad(cube)))(3.)) == 0.0
  _close(jax.jit(jax.grad(jax.grad(cube)))(3.), 2.0)


def test_vmap_jaxpr_as_jax():
  expected = """
  { lambda ; a:f32[3]. let
      b:f32[3] = custom_jvp_call[
        name=cube
        call_jaxpr={ lambda ; c:f32[3]. let
            d:f32[3] = integer_pow[y=3] c
          in (d,) }
        jvp=cube_jvp
        symbolic_zeros=False
      ] a
    in (b,) }"""
  closed = jax.make_jaxpr(jax.vmap(cube))(jnp.ones(3))
  check_jaxpr(closed)
  assert str(closed) == _dedent(expected)
  _close(jax.vmap(jax.grad(cube))(jnp.arange(3.)), [0., 2., 4.])
  p, t = jax.jvp(jax.vmap(cube), (jnp.arange(3.),), (jnp.ones(3),))
  _close(p, [0., 1., 8.])
  _close(t, [0., 2., 4.])


@jax.custom_jvp
def sin_mul(x, y):
  return jnp.sin(x) * y


@sin_mul.defjvp
def sin_mul_jvp(primals, tangents):
  x, y = primals
  x_dot, y_dot = tangents
  return sin_mul(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot * 2.  # "wrong" in y


def test_docs_example_value_and_grad():
  @jax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y

  @f.defjvp
  def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    return f(x, y), jnp.cos(x) * x_dot * y + jnp.sin(x) * y_dot

  v, g = jax.value_and_grad(f)(jnp.float32(1.0), jnp.float32(2.0))
  _close(v, 1.6829419)
  _close(g, 1.0806046)
  gx, gy = jax.grad(f, (0, 1))(1.0, 2.0)
  _close(gx, 1.0806046)
  _close(gy, 0.84147096)


def test_defjvps():
  @jax.custom_jvp
  def f(x, y):
    return jnp.sin(x) * y

  f.defjvps(lambda x_dot, primal_out, x, y: jnp.cos(x) * x_dot * y,
            lambda y_dot, primal_out, x, y: jnp.sin(x) * y_dot)
  v, g = jax.value_and_grad(f)(jnp.float32(1.0), jnp.float32(2.0))
  _close(v, 1.6829419)
  _close(g, 1.0806046)
  _close(jax.grad(f, 1)(1.0, 2.0), 0.84147096)
  _close(jax.jvp(f, (1.0, 2.0), (1.0, 0.0))[1], 1.0806046)


X = jnp.arange(3.) / 3
Y = jnp.array([1., 2., 3.])

# (name, function, expected) with values from JAX 0.10.2 (p5 probe).
VMAP_CASES = [
    ("vmap", lambda: jax.vmap(sin_mul)(X, Y), [0.0, 0.65439, 1.85511]),
    ("vmap in_axes", lambda: jax.vmap(sin_mul, in_axes=(0, None))(X, 2.),
     [0.0, 0.65439, 1.23674]),
    ("jvp vmap", lambda: jax.jvp(jax.vmap(sin_mul, in_axes=(0, None)), (X, 2.),
                                 (jnp.ones(3), 1.)),
     ([0.0, 0.65439, 1.23674], [2.0, 2.54430, 2.80851])),
    ("vmap jvp", lambda: jax.vmap(lambda a, b: jax.jvp(sin_mul, (a, b), (1., 1.)))(X, Y),
     ([0.0, 0.65439, 1.85511], [1.0, 2.54430, 3.59440])),
    ("grad vmap", lambda: jax.grad(lambda a, b: jax.vmap(sin_mul, in_axes=(0, None))(a, b).sum(),
                                   (0, 1))(X, 2.),
     ([2.0, 1.88991, 1.57177], 1.89113)),
    ("vmap grad", lambda: jax.vmap(jax.grad(sin_mul, (0, 1)))(X, Y),
     ([1.0, 1.88991, 2.35766], [0.0, 0.65439, 1.23674])),
    ("hessian", lambda: jax.hessian(sin_mul)(0.5, 2.), -0.95885),
    ("jacrev", lambda: jax.jacrev(sin_mul)(X, Y),
     [[1.0, 0.0, 0.0], [0.0, 1.88991, 0.0], [0.0, 0.0, 2.35766]]),
    ("jit vmap grad", lambda: jax.jit(jax.vmap(jax.grad(sin_mul, (0, 1))))(X, Y),
     ([1.0, 1.88991, 2.35766], [0.0, 0.65439, 1.23674])),
    ("vmap vmap", lambda: jax.vmap(jax.vmap(sin_mul))(jnp.stack([X, X]), jnp.stack([Y, Y])),
     [[0.0, 0.65439, 1.85511]] * 2),
    ("jvp vmap vmap", lambda: jax.jvp(jax.vmap(jax.vmap(sin_mul)),
                                      (jnp.stack([X, X]), jnp.stack([Y, Y])),
                                      (jnp.ones((2, 3)), jnp.ones((2, 3))))[1],
     [[1.0, 2.54430, 3.59440]] * 2),
]


@pytest.mark.parametrize("name,fn,expected", VMAP_CASES, ids=[c[0] for c in VMAP_CASES])
def test_custom_jvp_transformations(name, fn, expected):
  jax.tree_util.tree_map(lambda a, e: _close(a, e, 1e-5), fn(), expected)


def test_nondiff_argnums_docs_example():
  @functools.partial(jax.custom_jvp, nondiff_argnums=(0,))
  def app(f, x):
    return f(x)

  def app_jvp(f, primals, tangents):
    x, = primals
    x_dot, = tangents
    return f(x), 2. * x_dot

  app.defjvp(app_jvp)
  assert float(app(lambda x: x ** 3, 3.)) == 27.0
  assert float(jax.grad(app, 1)(lambda x: x ** 3, 3.)) == 2.0
  assert float(jax.jit(jax.grad(app, 1), static_argnums=0)(lambda x: x ** 3, 3.)) == 2.0


def test_python_control_flow_in_function_and_rule():
  @jax.custom_jvp
  def f(x):
    if x > 0:
      return jnp.sin(x)
    return jnp.cos(x)

  @f.defjvp
  def f_jvp(primals, tangents):
    x, = primals
    x_dot, = tangents
    ans = f(x)
    return ans, (2 * x_dot if x > 0 else 3 * x_dot)

  assert float(jax.grad(f)(1.)) == 2.0
  assert float(jax.grad(f)(-1.)) == 3.0


def test_symbolic_zeros():
  seen = []

  @jax.custom_jvp
  def f(x, y):
    return x * y

  @functools.partial(f.defjvp, symbolic_zeros=True)
  def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    seen.append((type(x_dot) is SymbolicZero, type(y_dot) is SymbolicZero))
    out = 0.
    if type(x_dot) is not SymbolicZero:
      out = out + x_dot * y
    if type(y_dot) is not SymbolicZero:
      out = out + x * y_dot
    return f(x, y), out

  assert float(jax.grad(f)(2., 3.)) == 3.0
  assert seen[-1] == (False, True)
  p, t = jax.jvp(f, (2., 3.), (1., 1.))
  assert (float(p), float(t)) == (6.0, 5.0)
  assert seen[-1] == (False, False)
  z = SymbolicZero(jax.core.ShapedArray((2,), np.float32))
  assert z.shape == (2,) and z.dtype == np.float32


def test_keyword_arguments_resolve_to_positions():
  @jax.custom_jvp
  def kw(x, y=2.):
    return x * y

  kw.defjvp(lambda p, t: (kw(*p), t[0] * p[1] + t[1] * p[0]))
  assert float(kw(3.)) == 6.0
  assert float(kw(3., y=4.)) == 12.0
  assert float(jax.grad(kw)(3.)) == 2.0
  assert float(jax.grad(lambda y: kw(3., y=y))(1.)) == 3.0

  @jax.custom_jvp
  def ko(x, *, y):
    return x * y

  ko.defjvp(lambda p, t: (ko(*p), t[0]))
  with pytest.raises(TypeError, match="The input arguments to the custom_jvp-decorated "
                     "function ko could not be resolved to positional-only arguments. "
                     "Binding failed with the error:\nThe following keyword arguments "
                     "could not be resolved to positions: y"):
    ko(1., y=2.)


def test_custom_jvp_errors():
  @jax.custom_jvp
  def nojvp(x):
    return x

  with pytest.raises(AttributeError,
                     match="No JVP defined for custom_jvp function nojvp using defjvp."):
    nojvp(1.)

  @jax.custom_jvp
  def bad(x):
    return x

  bad.defjvp(lambda p, t: (p[0], jnp.zeros(3)))
  with pytest.raises(TypeError, match=r"Custom JVP rule must produce primal and tangent "
                     r"outputs with corresponding shapes and dtypes. Expected float32\[\] "
                     r"\(tangent type of float32\[\]\) but got float32\[3\]."):
    jax.grad(bad)(1.)

  @jax.custom_jvp
  def bad2(x):
    return x

  bad2.defjvp(lambda p, t: p[0])
  with pytest.raises(TypeError, match="Custom JVP rule <lambda> for function bad2 must "
                     "produce a pair"):
    jax.grad(bad2)(1.)

  @jax.custom_jvp
  def bad3(x):
    return jnp.sin(x)

  bad3.defjvp(lambda p, t: ((p[0],), (t[0],)))
  with pytest.raises(TypeError, match=r"the JVP rule output's first element had "
                     r"container/pytree structure:\n    \(float32\[\],\)\nwhile the "
                     r"custom_jvp-decorated function bad3 had output container/pytree "
                     r"structure:\n    float32\[\]."):
    jax.grad(jax.jit(bad3))(1.)

  app = jax.custom_jvp(lambda f, x: f(x), nondiff_argnums=(0,))
  with pytest.raises(TypeError, match="Can't use ``defjvps`` with ``nondiff_argnums``."):
    app.defjvps(None, None)


def test_closed_over_tracer_raises_unexpected_tracer():
  def f(x):
    @jax.custom_jvp
    def g(y):
      return x + y
    g.defjvp(lambda p, t: (g(p[0]), 2 * t[0]))
    return g(1.)

  with pytest.raises(UnexpectedTracerError):
    jax.grad(f)(3.)


def test_custom_jvp_under_jit_stages_the_call():
  closed = jax.make_jaxpr(jax.jit(log1pexp))(1.)
  inner = closed.jaxpr.eqns[0].params["jaxpr"].jaxpr
  assert [e.primitive for e in inner.eqns] == [custom_jvp_call_p]
  lin = jax.make_jaxpr(jax.linearize(jax.jit(log1pexp), 1.)[1])(1.)
  check_jaxpr(lin)


def test_custom_jvp_inside_checkpoint_and_nested():
  f = jax.checkpoint(lambda a: sin_mul(a, 2.))
  _close(jax.grad(f)(0.5), 2.0 * np.cos(0.5))
  _close(jax.grad(lambda a: jax.jit(lambda b: log1pexp(b) * b)(a))(0.5),
         np.log1p(np.exp(0.5)) + 0.5 / (1 + np.exp(-0.5)), 1e-5)


# ------------------------------------------------------------ custom_vjp
@jax.custom_vjp
def clip_gradient(lo, hi, x):
  return x  # identity function


def clip_gradient_fwd(lo, hi, x):
  return x, (lo, hi)  # save bounds as residuals


def clip_gradient_bwd(res, g):
  lo, hi = res
  return (None, None, jnp.clip(g, lo, hi))  # use None to indicate zero cotangents


clip_gradient.defvjp(clip_gradient_fwd, clip_gradient_bwd)


def test_clip_gradient_docs_example():
  t = jnp.linspace(0, 10, 7)
  g = jax.vmap(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))))(t)
  _close(g, 0.75 * np.cos(np.linspace(0, 10, 7)), 1e-5)   # clip(1.0) * cos(t)
  _close(jax.jit(jax.grad(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))))(0.5), 0.6581869)
  _close(jax.grad(jax.jit(lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))))(0.5), 0.6581869)
  g2 = jax.grad(lambda x: jax.vmap(lambda y: clip_gradient(-0.75, 0.75, jnp.sin(y)))(x).sum())(t)
  _close(g2, g, 1e-6)
  assert float(jax.grad(lambda x: clip_gradient(-0.75, 0.75, 3 * x))(1.)) == 2.25


def test_clip_gradient_jaxpr_as_jax():
  expected = """
  { lambda ; a:f32[] b:f32[] c:f32[]. let
      d:f32[] = custom_vjp_call[
        name=clip_gradient
        bwd=clip_gradient_bwd
        call_jaxpr={ lambda ; e:f32[] f:f32[] g:f32[]. let  in (g,) }
        fwd=clip_gradient_fwd
        symbolic_zeros=False
      ] a b c
    in (d,) }"""
  closed = jax.make_jaxpr(clip_gradient)(-0.75, 0.75, 1.)
  check_jaxpr(closed)
  assert str(closed) == _dedent(expected)


def test_linearized_custom_vjp_holds_custom_lin():
  f = lambda x: clip_gradient(-0.75, 0.75, jnp.sin(x))
  closed = jax.make_jaxpr(jax.linearize(f, 1.)[1])(1.)
  check_jaxpr(closed)
  lin = closed.jaxpr.eqns[-1]
  assert lin.primitive is custom_lin_p
  text = str(closed)
  assert "custom_lin[\n      bwd=clip_gradient_bwd\n      in_zeros=[True, True, False]\n" \
         "      num_res=2\n      symbolic_zeros=False\n    ] -0.75:f32[] 0.75:f32[]" in text


NO_JVP = "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


def test_forward_mode_raises():
  f = lambda x: clip_gradient(-0.75, 0.75, x)
  with pytest.raises(TypeError, match=NO_JVP.replace("(", r"\(").replace(")", r"\)")):
    jax.jvp(f, (1.,), (1.,))
  with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
    jax.jacfwd(f)(1.)
  with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
    jax.linearize(f, 1.)[1](1.)
  with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
    custom_lin_p.batch([1.], [0], num_res=0, bwd=None, out_avals=(), symbolic_zeros=False,
                       in_zeros=(False,))


@jax.custom_vjp
def g_sin_mul(x, y):
  return jnp.sin(x) * y


def _g_fwd(x, y):
  return g_sin_mul(x, y), (jnp.cos(x), jnp.sin(x), y)


def _g_bwd(res, ct):
  c, s, y = res
  return (c * ct * y, s * ct * 3.)   # "wrong" in y: the rule is used


g_sin_mul.defvjp(_g_fwd, _g_bwd)

VJP_CASES = [
    ("vmap", lambda: jax.vmap(g_sin_mul)(X, Y), [0.0, 0.65439, 1.85511]),
    ("grad vmap", lambda: jax.grad(lambda a, b: jax.vmap(g_sin_mul, in_axes=(0, None))(a, b)
                                   .sum(), (0, 1))(X, 2.),
     ([2.0, 1.88991, 1.57177], 2.83669)),
    ("vmap grad", lambda: jax.vmap(jax.grad(g_sin_mul, (0, 1)))(X, Y),
     ([1.0, 1.88991, 2.35766], [0.0, 0.98158, 1.85511])),
    ("jacrev", lambda: jax.jacrev(g_sin_mul, (0, 1))(X, Y),
     ([[1.0, 0.0, 0.0], [0.0, 1.88991, 0.0], [0.0, 0.0, 2.35766]],
      [[0.0, 0.0, 0.0], [0.0, 0.98158, 0.0], [0.0, 0.0, 1.85511]])),
    ("jit grad", lambda: jax.jit(jax.grad(g_sin_mul, (0, 1)))(0.5, 2.), (1.75517, 1.43828)),
    ("grad jit", lambda: jax.grad(jax.jit(g_sin_mul), (0, 1))(0.5, 2.), (1.75517, 1.43828)),
    ("grad grad", lambda: jax.grad(lambda a: jax.grad(g_sin_mul)(a, 2.))(0.5), -0.95885),
    ("vmap vmap grad", lambda: jax.grad(
        lambda a, b: jax.vmap(jax.vmap(g_sin_mul, in_axes=(0, None)), in_axes=(0, None))(a, b)
        .sum(), (0, 1))(jnp.stack([X, X]), 2.),
     ([[2.0, 1.88991, 1.57177]] * 2, 5.67339)),
]


@pytest.mark.parametrize("name,fn,expected", VJP_CASES, ids=[c[0] for c in VJP_CASES])
def test_custom_vjp_transformations(name, fn, expected):
  jax.tree_util.tree_map(lambda a, e: _close(a, e, 1e-5), fn(), expected)


def test_custom_vjp_nondiff_argnums_docs_example():
  @functools.partial(jax.custom_vjp, nondiff_argnums=(0,))
  def app(f, x):
    return f(x)

  def app_fwd(f, x):
    return f(x), x

  def app_bwd(f, x, g):
    return (5 * g,)

  app.defvjp(app_fwd, app_bwd)
  assert float(app(lambda x: x ** 2, 4.)) == 16.0
  assert float(jax.grad(app, 1)(lambda x: x ** 2, 4.)) == 5.0
  with pytest.raises(UnexpectedTracerError, match="Found a JAX Tracer object passed as an "
                     "argument to a custom_vjp function in a position indicated by "
                     "nondiff_argnums as non-differentiable."):
    jax.jit(lambda x: app(x, 1.))(2.)


def test_residual_pytrees_and_bwd_list_with_none():
  @jax.custom_vjp
  def f(x, y):
    return x * y

  f.defvjp(lambda x, y: (x * y, {"a": x, "b": [y]}),
           lambda r, g: [r["b"][0] * g, None])
  gx, gy = jax.grad(f, (0, 1))(2., 3.)
  assert (float(gx), float(gy)) == (3.0, 0.0)


def test_custom_vjp_bwd_errors():
  @jax.custom_vjp
  def f(x, y):
    return x * y

  f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g,))
  with pytest.raises(TypeError, match=r"Custom VJP bwd rule must produce an output with the "
                     r"same container \(pytree\) structure as the args tuple of the primal "
                     r"function, and in particular must produce a tuple of length equal to "
                     r"the number of arguments to the primal function, but got bwd output "
                     r"structure PyTreeDef\(\(\*,\)\) for primal input structure "
                     r"PyTreeDef\(\(\*, \*\)\)."):
    jax.grad(f)(1., 2.)
  f.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g, jnp.ones(3)))
  with pytest.raises(ValueError, match=r"Custom VJP bwd rule must produce an output with the "
                     r"same type as the args tuple of the primal function, but at output\[1\] "
                     r"the bwd rule produced an output of type float32\[3\] corresponding to an "
                     r"input of type float32\[\], so the shapes do not match"):
    jax.grad(f)(1., 2.)
  f.defvjp(lambda x, y: x * y, lambda r, g: (g, g))
  with pytest.raises(TypeError, match="must produce a pair"):
    jax.grad(f)(1., 2.)

  @jax.custom_vjp
  def h(x):
    return x

  with pytest.raises(AttributeError,
                     match="No VJP defined for custom_vjp function h using defvjp."):
    h(1.)


def test_custom_vjp_symbolic_zeros_and_perturbed():
  seen = []

  @jax.custom_vjp
  def f(x, y):
    return x * y

  def fwd(x, y):
    seen.append((x.perturbed, y.perturbed))
    return f(x.value, y.value), (x.value, y.value)

  def bwd(res, g):
    x, y = res
    return (g * y, SymbolicZero(jax.core.ShapedArray((), np.float32)))

  f.defvjp(fwd, bwd, symbolic_zeros=True)
  assert float(jax.grad(f)(2., 3.)) == 3.0
  assert seen[-1] == (True, False)


def test_custom_gradient_and_closure_convert():
  @custom_gradient
  def f(x):
    return x ** 2, lambda g: (g * x,)

  assert float(f(3.)) == 9.0
  assert float(jax.grad(f)(3.)) == 3.0
  assert float(jax.jit(jax.grad(f))(3.)) == 3.0

  def outer(y):
    h, consts = closure_convert(lambda x: x * y, 1.)
    return h(2., *consts), len(consts)

  v, n = outer(3.)
  assert float(v) == 6.0 and n == 0
  assert float(jax.jit(lambda y: outer(y)[0])(3.)) == 6.0
  assert jax.jit(lambda y: jnp.float32(outer(y)[1]))(3.) == 1


def test_custom_vjp_staged_under_jit_and_vmap():
  closed = jax.make_jaxpr(jax.vmap(g_sin_mul))(X, Y)
  check_jaxpr(closed)
  assert closed.jaxpr.eqns[0].primitive is custom_vjp_call_p
  assert "name=g_sin_mul" in str(closed)


# --------------------------------------------------------- stop_gradient
def test_stop_gradient():
  expected = """
  { lambda ; a:f32[]. let
      b:f32[] = sin a
      c:f32[] = stop_gradient b
      d:f32[] = mul c 2.0:f32[]
    in (d,) }"""
  closed = jax.make_jaxpr(lambda x: lax.stop_gradient(jnp.sin(x)) * 2.)(1.)
  assert str(closed) == _dedent(expected)
  assert float(jax.grad(lambda x: lax.stop_gradient(x) * x)(3.)) == 3.0
  assert float(jax.hessian(lambda x: lax.stop_gradient(x) * x ** 2)(3.)) == 6.0
  _close(jax.vmap(lambda x: lax.stop_gradient(x) * x)(jnp.arange(3.)), [0., 1., 4.])
  _close(jax.jacfwd(lambda x: lax.stop_gradient(x) * x)(jnp.arange(3.)), np.diag([0., 1., 2.]))
  tree = jax.make_jaxpr(lambda x: lax.stop_gradient((x, {"a": 2 * x})))(1.)
  assert [e.primitive.name for e in tree.jaxpr.eqns] == ["mul", "stop_gradient", "stop_gradient"]
  out = lax.stop_gradient(np.arange(3, dtype=np.int32))
  assert out.dtype == np.int32


def test_closure_over_vmap_tracer_in_jvp_rule():
  # JAX issue 8783: the rule closes over a vmap tracer; no vmapped argument.
  def h(z):
    def f(x):
      @jax.custom_jvp
      def g(y):
        return x * y

      @g.defjvp
      def g_jvp(primals, tangents):
        (y,), (ydot,) = primals, tangents
        return x * y, x * ydot

      return g(z)
    return jax.vmap(f)(jnp.arange(3., dtype="float32"))

  primals, tangents = jax.jvp(h, (jnp.float32(1.),), (jnp.float32(2.),))
  _close(primals, [0., 1., 2.])
  _close(tangents, [0., 2., 4.])


def test_closure_over_vmap_tracer_in_vjp_rule():
  def h(z):
    def f(x):
      @jax.custom_vjp
      def g(y):
        return x * y

      g.defvjp(lambda y: (x * y, (x, x * y, y)), lambda res, w_bar: (res[0] * w_bar,))
      return g(z)
    return jax.vmap(f)(jnp.arange(3., dtype="float32")).sum()

  _close(jax.grad(h)(jnp.float32(3.14)), 3.0)


def test_rule_output_batched_where_primal_is_not():
  # JAX's "hard stuff 2": the primal output is a constant, the tangent is not.
  @jax.custom_jvp
  def f(x):
    return np.zeros(x.shape, x.dtype)

  @f.defjvp
  def f_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return f(x), t

  _close(jax.jit(jax.vmap(f))(jnp.arange(3.)), np.zeros(3))
  _close(jax.jit(jax.vmap(jax.grad(f)))(jnp.arange(3.)), np.ones(3))
  _close(jax.grad(lambda x: jax.vmap(f)(x).sum())(jnp.arange(3.)), np.ones(3))
  p, t = jax.jvp(jax.vmap(f), (jnp.arange(3.),), (jnp.ones(3),))
  _close(p, np.zeros(3))
  _close(t, np.ones(3))


def test_symbolic_zeros_survive_vmap():
  @jax.custom_jvp
  def f(x, y):
    return x * y

  @functools.partial(f.defjvp, symbolic_zeros=True)
  def f_jvp(primals, tangents):
    x, y = primals
    x_dot, y_dot = tangents
    assert type(y_dot) is SymbolicZero
    return f(x, y), y_dot

  jax.grad(lambda x, y: jax.vmap(f)(x, y).sum())(jnp.ones(3), jnp.ones(3))

  @jax.custom_vjp
  def g(x, y):
    return x, y

  def fwd(x, y):
    assert x.perturbed and not y.perturbed
    return g(x.value, y.value), None

  def bwd(_, ct):
    assert type(ct[1]) is SymbolicZero
    return ct

  g.defvjp(fwd, bwd, symbolic_zeros=True)
  _close(jax.grad(lambda x, y: jax.vmap(g)(x, y)[0].sum())(jnp.ones(3), jnp.ones(3)),
         np.ones(3))


def test_closure_convert_structure_error():
  h, consts = closure_convert(lambda x: x * 2., 1.)
  with pytest.raises(TypeError, match="The inputs to the closure produced by closure_convert "
                     "must have the same Pytree structure as the example arguments"):
    h(1., [])
