"""``vmap``: in_axes/out_axes as ints, None, negative axes and pytree prefixes,
axis_size, nesting, keyword arguments, composition with jit and grad, JAX
0.10.2's errors, and the "vmapped log probs" Bayesian logistic regression."""
import re
from collections import namedtuple

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import check_jaxpr

f32 = np.float32
X = np.arange(6, dtype=f32).reshape(2, 3)


def _eq(a, b, tol=1e-6):
  np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


# -------------------------------------------------------------------- in_axes
@pytest.mark.parametrize("in_axes, want", [
    (0, X * 2), (1, X.T * 2), (-1, X.T * 2), (-2, X * 2), ((1,), X.T * 2), ([0], X * 2),
])
def test_in_axes_ints(in_axes, want):
  out = jax.vmap(lambda a: a * 2, in_axes=in_axes)(X)
  assert out.shape == want.shape
  _eq(out, want)


def test_in_axes_none_and_pytree_prefixes():
  v = np.ones(3, f32)
  _eq(jax.vmap(lambda a, b: a + b, in_axes=(None, 0))(v, X), X + 1)
  _eq(jax.vmap(lambda a, b: a + b, in_axes=[None, 0])(v, X), X + 1)
  _eq(jax.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 0, "b": None},))(
      {"a": X, "b": v}), X + 1)
  _eq(jax.vmap(lambda d: d["a"] + d["b"], in_axes=({"a": 1, "b": 0},))({"a": X.T, "b": X}),
      2 * X)
  Pt = namedtuple("Pt", "x y")
  _eq(jax.vmap(lambda p: p.x * p.y, in_axes=(Pt(0, None),))(Pt(X, f32(2))), 2 * X)
  # A whole-tuple prefix, a list argument, and None leaves in the argument.
  _eq(jax.vmap(lambda t: t[0] + t[1], in_axes=((0, 1),))((X, X.T)), 2 * X)
  _eq(jax.vmap(lambda a: a[0] + a[1])([X, X]), 2 * X)
  _eq(jax.vmap(lambda d: d["a"], in_axes=({"a": 0, "b": None},))({"a": X, "b": None}), X)


def test_custom_pytree_nodes():
  @jax.tree_util.register_pytree_node_class
  class Pair:
    def __init__(self, a, b):
      self.a, self.b = a, b

    def tree_flatten(self):
      return (self.a, self.b), None

    @classmethod
    def tree_unflatten(cls, aux, children):
      return cls(*children)

  out = jax.vmap(lambda p: Pair(p.a * 2, p.b), in_axes=(Pair(0, None),),
                 out_axes=Pair(1, None))(Pair(X, f32(5)))
  assert isinstance(out, Pair)
  _eq(out.a, 2 * X.T), _eq(out.b, 5.0)


def test_unmapped_arguments_pass_through_unchanged():
  seen = []
  jax.vmap(lambda a, s: seen.append(s) or a, in_axes=(0, None))(X, "hello")
  assert seen == ["hello"]
  _eq(jax.vmap(lambda a, s: a * s, in_axes=(0, None))(X, 3.0), 3 * X)
  out = jax.vmap(lambda a, b: b, in_axes=(0, None))(X, f32(3))
  _eq(out, [3.0, 3.0])
  assert jax.vmap(lambda a: None)(X) is None


# ------------------------------------------------------------------- out_axes
def test_out_axes():
  _eq(jax.vmap(lambda a: a * 2, out_axes=1)(X), 2 * X.T)
  a, b = jax.vmap(lambda a: (a * 2, a), out_axes=(-1, 0))(X)
  _eq(a, 2 * X.T), _eq(b, X)
  a, b = jax.vmap(lambda a, b: (a * 2, b), in_axes=(0, None), out_axes=(0, None))(X, f32(3))
  _eq(a, 2 * X), _eq(b, 3.0)
  assert b.shape == ()
  d = jax.vmap(lambda a: {"p": a, "q": a.sum()}, out_axes={"p": 1, "q": 0})(X)
  _eq(d["p"], X.T), _eq(d["q"], X.sum(1))
  a, b = jax.vmap(lambda a: [a, a], out_axes=[0, 1])(X)
  _eq(b, X.T)
  # Unbatched outputs are broadcast along out_axes.
  _eq(jax.vmap(lambda a: f32(1))(X), [1.0, 1.0])
  _eq(jax.vmap(lambda a: jnp.ones(2), out_axes=1)(X), np.ones((2, 2)))
  assert jax.vmap(lambda a: 1.0, out_axes=None)(X) == 1.0


def test_axis_size():
  _eq(jax.vmap(lambda: jnp.ones(2), axis_size=3)(), np.ones((3, 2)))
  _eq(jax.vmap(lambda a: a * 2, in_axes=None, axis_size=2)(f32(1)), [2.0, 2.0])
  _eq(jax.vmap(lambda a: a, axis_size=2)(X), X)


def test_nested_vmaps_map_one_dim_each():
  xs, ys = np.arange(3, dtype=f32), np.arange(4, dtype=f32)
  out = jax.vmap(jax.vmap(lambda a, b: a * b, in_axes=(0, None)), in_axes=(None, 0))(xs, ys)
  _eq(out, np.outer(ys, xs))
  x4 = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(f32)
  _eq(jax.vmap(jax.vmap(jax.vmap(lambda a: a.sum())))(x4), x4.sum(-1), 1e-5)
  # Each level with its own in_axes: map dim 2 outside, then dim 0 of what is left.
  out = jax.vmap(jax.vmap(lambda a: a.sum(), in_axes=0), in_axes=2)(x4)
  _eq(out, np.transpose(x4, (2, 0, 1, 3)).sum((2, 3)), 1e-5)
  # A closure over the outer mapped value.
  _eq(jax.vmap(lambda x: jax.vmap(lambda y: x * y)(ys))(xs), np.outer(xs, ys))


def test_kwargs_are_mapped_over_axis_0():
  _eq(jax.vmap(lambda a, b: a + b)(X, b=X), 2 * X)
  _eq(jax.vmap(lambda a, b: a + b, in_axes=(1,))(X.T, b=X), 2 * X)


def test_vmap_of_dot_general_folds_batch_dims():
  w = np.arange(6, dtype=f32).reshape(3, 2)
  closed = jax.make_jaxpr(jax.vmap(lambda x: x @ w))(np.ones((4, 3), f32))
  check_jaxpr(closed)
  assert [e.primitive.name for e in closed.jaxpr.eqns] == ["dot_general"]
  _eq(jax.vmap(lambda x: x @ w)(np.ones((4, 3), f32)), np.ones((4, 3)) @ w)


# --------------------------------------------------------------- composition
def test_vmap_with_jit_and_grad():
  f = lambda x: jnp.sin(x) * x ** 2
  xs = np.linspace(0, 1, 4).astype(f32)
  df = np.cos(xs) * xs ** 2 + 2 * xs * np.sin(xs)
  _eq(jax.vmap(jax.jit(f))(xs), f(xs))
  _eq(jax.jit(jax.vmap(f))(xs), f(xs))
  _eq(jax.vmap(jax.grad(f))(xs), df, 1e-5)
  _eq(jax.vmap(jax.grad(jax.jit(f)))(xs), df, 1e-5)
  _eq(jax.grad(lambda v: jax.vmap(f)(v).sum())(xs), df, 1e-5)
  _eq(jax.vmap(jax.vmap(jax.jit(f)))(xs.reshape(2, 2)), f(xs).reshape(2, 2))
  a, b = jax.vmap(jax.jit(lambda a, b: (a * 2, b)), in_axes=(0, None))(xs, f32(0.7))
  _eq(b, np.full(4, 0.7))
  _eq(jax.vmap(jax.grad(jax.jit(lambda a, b: a * b)), in_axes=(None, 0))(f32(0.7), xs), xs)
  _eq(jax.jit(jax.vmap(jax.jit(lambda b: jnp.dot(np.ones((4, 3), f32), b))))(
      np.ones((5, 3), f32)), np.full((5, 4), 3.0))


def test_vmap_docstring():
  def f(x):
    """Doc of f."""
    return x
  g = jax.vmap(f)
  assert g.__name__ == "f" and g.__wrapped__ is f
  assert g.__doc__ == ("Vectorized version of f. Takes similar arguments as f but with "
                       "additional array axes over which f is mapped.\n\nOriginal "
                       "documentation:\n\nDoc of f.")


# --------------------------------------------------------------------- errors
def _err(exc, fn):
  with pytest.raises(exc) as e:
    fn()
  return str(e.value)


def test_inconsistent_sizes_messages():
  msg = _err(ValueError, lambda: jax.vmap(lambda a, b: a + b)(X, X.T))
  assert msg == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                 "  * one axis had size 2: axis 0 of argument a of type float32[2,3];\n"
                 "  * one axis had size 3: axis 0 of argument b of type float32[3,2]")
  msg = _err(ValueError, lambda: jax.vmap(lambda a, b, c: a)(X, X, np.ones(5)))
  assert msg == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                 "  * most axes (2 of them) had size 2, e.g. axis 0 of argument a of type "
                 "float32[2,3];\n"
                 "  * one axis had size 5: axis 0 of argument c of type float32[5]")
  msg = _err(ValueError, lambda: jax.vmap(lambda a, b: a)({"u": X, "v": X.T}, [X]))
  assert msg == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                 "  * most axes (2 of them) had size 2, e.g. axis 0 of argument a['u'] of "
                 "type float32[2,3];\n"
                 "  * one axis had size 3: axis 0 of argument a['v'] of type float32[3,2]")
  msg = _err(ValueError, lambda: jax.vmap(lambda a, b: a + b)(X, b=X.T))
  assert msg.endswith("  * one axis had size 3: axis 0 of kwargs['b'] of type float32[3,2]")
  msg = _err(ValueError, lambda: jax.vmap(lambda *a: a[0])(X, X.T))
  assert msg.endswith("  * one axis had size 3: axis 0 of args[1] of type float32[3,2]")
  msg = _err(ValueError, lambda: jax.vmap(lambda a, b: a, in_axes=(-1, 0))(X, X))
  assert "axis -1 of argument a of type float32[2,3]" in msg
  msg = _err(ValueError, lambda: jax.vmap(lambda a: a, axis_size=3)(X))
  assert msg == ("vmap got inconsistent sizes for array axes to be mapped:\n"
                 "  * the `axis_size` argument was 3;\n"
                 "  * one axis had size 2: axis 0 of argument a of type float32[2,3]")


@pytest.mark.parametrize("call, exc, msg", [
    (lambda: jax.vmap(lambda a: a, in_axes=2)(X), ValueError,
     "vmap was requested to map its argument along axis 2, which implies that its rank "
     "should be at least 3, but is only 2 (its shape is (2, 3))"),
    (lambda: jax.vmap(lambda a: a, in_axes=-3)(X), ValueError,
     "vmap was requested to map its argument along axis -3, which implies that its rank "
     "should be at least 3, but is only 2 (its shape is (2, 3))"),
    (lambda: jax.vmap(lambda a: a)(3), ValueError,
     "vmap was requested to map its argument along axis 0, which implies that its rank "
     "should be at least 1, but is only 0 (its shape is ())"),
    (lambda: jax.vmap(lambda a: a * 2, in_axes=None)(f32(1)), ValueError,
     "vmap must have at least one non-None value in in_axes or axis_size must be "
     "specified"),
    (lambda: jax.vmap(lambda: 1.0)(), ValueError,
     "vmap wrapped function must be passed at least one argument containing an array or "
     "axis_size must be specified, got empty *args=() and **kwargs={}"),
    (lambda: jax.vmap(lambda a, b: a, in_axes=(0,))(X, X), ValueError,
     "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
     "positional arguments passed to the function, but got len(in_axes)=1, len(args)=2"),
    (lambda: jax.vmap(lambda a: a, in_axes="a"), TypeError,
     "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
     "positional arguments passed to the function, but got a."),
    (lambda: jax.vmap(lambda a: a, in_axes={"a": 0}), TypeError,
     "vmap in_axes must be an int, None, or a tuple of entries corresponding to the "
     "positional arguments passed to the function, but got {'a': 0}."),
    (lambda: jax.vmap(lambda a: a, in_axes=(1.0,)), TypeError,
     "vmap in_axes must be an int, None, or (nested) container with those types as leaves, "
     "but got (1.0,)."),
    (lambda: jax.vmap(lambda a: a, out_axes=(1.0,)), TypeError,
     "vmap out_axes must be an int, None, or (nested) container with those types as leaves, "
     "but got (1.0,)."),
    (lambda: jax.vmap(lambda a: a * 2, out_axes=None)(X), ValueError,
     "at vmap out_axes, got axis spec None but output was batched on axis 0"),
    (lambda: jax.vmap(lambda a: (a, a * 2), out_axes=(0, None))(X), ValueError,
     "at vmap out_axes[1], got axis spec None but output was batched on axis 0"),
    (lambda: jax.vmap(lambda a: a, out_axes=3)(X), ValueError,
     "axis 3 is out of bounds for array of dimension 2"),
    (lambda: jax.vmap(3), TypeError, "Expected a callable value, got 3"),
])
def test_errors(call, exc, msg):
  assert _err(exc, call) == msg


def test_tree_prefix_errors():
  msg = _err(ValueError, lambda: jax.vmap(lambda a: a, in_axes=({"a": 0},))(X))
  assert msg.startswith(
      "vmap in_axes specification must be a tree prefix of the corresponding value; \n"
      "  Mismatch details (1 found):\n  pytree structure error: different types at key "
      "path\n    vmap in_axes[0]\nAt that key path, the prefix pytree vmap in_axes has a "
      "subtree of type\n    <class 'dict'>\nbut at the same key path the full pytree has a "
      "subtree of different type\n    <class ")
  msg = _err(ValueError, lambda: jax.vmap(lambda a: (a, a), out_axes=(0, 0, 0))(X))
  assert msg == (
      "vmap out_axes specification must be a tree prefix of the corresponding value; \n"
      "  Mismatch details (1 found):\n  pytree structure error: different lengths of tuple "
      "at key path\n    vmap out_axes\nAt that key path, the prefix pytree vmap out_axes has "
      "a subtree of type tuple of length 3, but the full pytree has a subtree of the same "
      "type but of length 2.")
  msg = _err(ValueError, lambda: jax.vmap(lambda a: [a, a], out_axes=(0, 1))(X))
  assert re.search(r"subtree of type\n    <class 'tuple'>\nbut at the same key path the "
                   r"full pytree has a subtree of different type\n    <class 'list'>\.$", msg)


# ------------------------------------------- Bayesian logistic regression
# "Autobatching for Bayesian inference": a log-joint written for one parameter
# vector, vmapped over samples, and the gradient of an ELBO built on it.
_RS = np.random.RandomState(10009)
NUM_FEATURES, NUM_POINTS = 10, 100
TRUE_BETA = _RS.randn(NUM_FEATURES).astype(f32)
ALL_X = _RS.randn(NUM_POINTS, NUM_FEATURES).astype(f32)
Y = (_RS.rand(NUM_POINTS) < 1 / (1 + np.exp(-ALL_X.dot(TRUE_BETA)))).astype(np.int32)
BETA1 = _RS.randn(NUM_FEATURES).astype(f32)
BETAS = _RS.randn(10, NUM_FEATURES).astype(f32)
EPS = _RS.randn(8, NUM_FEATURES).astype(f32)
# JAX 0.10.2 on the same data.
BATCHED = [-117.4646, -157.08408, -129.61482, -138.82112, -177.08249, -109.08, -126.867836,
           -215.05022, -144.06303, -113.38397]
ELBO = -155.3751
ELBO_GRAD_LOC = [-4.6494727, -5.794541, -6.6537857, 13.106312, -9.442903, -3.6713667,
                 11.049934, 23.097466, 10.048185, -16.284235]


def _norm_logpdf(x, loc=0.0, scale=1.0):
  return -0.5 * ((x - loc) / scale) ** 2 - jnp.log(scale) - 0.5 * np.log(2 * np.pi)


def log_joint(beta):
  result = 0.
  result = result + jnp.sum(_norm_logpdf(beta, loc=0., scale=1.))
  result = result + jnp.sum(-jnp.log(1 + jnp.exp(-(2 * Y - 1) * jnp.dot(ALL_X, beta))))
  return result


def batched_log_joint(beta):
  result = 0.
  result = result + jnp.sum(_norm_logpdf(beta, loc=0., scale=1.), axis=-1)
  result = result + jnp.sum(-jnp.log(1 + jnp.exp(-(2 * Y - 1) * jnp.dot(ALL_X, beta.T).T)),
                            axis=-1)
  return result


def test_vmapped_log_joint_matches_manual_batching():
  single = log_joint(BETA1)
  assert single.shape == () and single.dtype == f32
  with pytest.raises(ValueError):
    log_joint(BETAS)          # not written for a batch
  manual = batched_log_joint(BETAS)
  _eq(manual, BATCHED, 1e-5)
  for f in (jax.vmap(log_joint), jax.jit(jax.vmap(jax.jit(log_joint)))):
    _eq(f(BETAS), manual, 1e-5)
  _eq(jax.vmap(log_joint)(BETAS), [log_joint(b) for b in BETAS], 1e-5)


def test_vmapped_log_joint_gradients():
  g = jax.grad(log_joint)(BETA1)
  s = 1 / (1 + np.exp((2 * Y - 1) * ALL_X.astype(np.float64).dot(BETA1)))
  want = -BETA1 + ALL_X.T.astype(np.float64) @ ((2 * Y - 1) * s)
  _eq(g, want, 1e-4)
  per_sample = jax.vmap(jax.grad(log_joint))(BETAS[:3])
  _eq(per_sample, np.stack([np.asarray(jax.grad(log_joint)(b)) for b in BETAS[:3]]), 1e-5)


def test_elbo_value_and_grad_under_jit():
  batched = jax.jit(jax.vmap(jax.jit(log_joint)))

  def elbo(beta_loc, beta_log_scale, epsilon):
    beta_sample = beta_loc + jnp.exp(beta_log_scale) * epsilon
    return (jnp.mean(batched(beta_sample), 0)
            + jnp.sum(beta_log_scale - 0.5 * np.log(2 * np.pi)))

  elbo_val_and_grad = jax.jit(jax.value_and_grad(jax.jit(elbo), argnums=(0, 1)))
  loc, log_scale = jnp.zeros(NUM_FEATURES), jnp.zeros(NUM_FEATURES)
  v, (g_loc, g_scale) = elbo_val_and_grad(loc, log_scale, EPS)
  _eq(v, ELBO, 1e-4)
  _eq(g_loc, ELBO_GRAD_LOC, 1e-4)
  v2, (g_loc2, g_scale2) = jax.value_and_grad(elbo, argnums=(0, 1))(loc, log_scale, EPS)
  _eq(v2, v, 1e-5), _eq(g_loc2, g_loc, 1e-5), _eq(g_scale2, g_scale, 1e-5)
  for _ in range(5):   # a few SGD steps raise the ELBO
    v_new, (gl, gs) = elbo_val_and_grad(loc, log_scale, EPS)
    loc, log_scale = loc + 0.01 * gl, log_scale + 0.01 * gs
  assert float(elbo(loc, log_scale, EPS)) > float(v)
