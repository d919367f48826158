"""``jnp.vectorize``, ``jnp.piecewise``, ``jnp.apply_along_axis`` and
``jnp.apply_over_axes``: values, dtypes and shapes against NumPy's loop-based
versions, error messages and printed jaxprs against JAX 0.10.2 (pasted here as
data), and composition with ``jit``/``grad``/``vmap``.

Everything runs eagerly or through the jaxpr interpreter except one test that
compiles a single IREE module for all the compiled checks.
"""
from functools import partial

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

F32 = np.float32
EXC = "on vectorized function with excluded=frozenset() and signature="


def _rng():
  return np.random.default_rng(0)


def _same(got, want, dtype=None, *, weak=False, rtol=1e-6, atol=1e-6):
  """``got`` is an openjax Array equal to ``want`` with ``want``'s shape and
  the given (or ``want``'s) dtype and weak type."""
  assert isinstance(got, jax.Array), type(got)
  want = np.asarray(want)
  assert got.shape == want.shape, (got.shape, want.shape)
  assert got.dtype == np.dtype(dtype if dtype is not None else want.dtype), got.dtype
  assert got.weak_type == weak
  np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


# ================================================================ vectorize
SIGNATURE_CASES = [
    # (name, signature, pyfunc (jnp, np), input shapes)
    ("dot", "(n),(n)->()", (jnp.dot, np.dot), [(2, 3, 4), (4,)]),
    ("matvec", "(m,n),(n)->(m)", (jnp.matmul, np.matmul), [(5, 2, 3), (3,)]),
    ("matvec_bcast", "(m,n),(n)->(m)", (jnp.matmul, np.matmul), [(4, 1, 2, 3), (5, 3)]),
    ("matmul", "(m,n),(n,k)->(m,k)", (jnp.matmul, np.matmul), [(2, 1, 2, 3), (4, 3, 2)]),
    ("outer", "(a),(b)->(a,b)", (jnp.outer, np.outer), [(3, 2), (1, 4)]),
    ("trace", "(n,n)->()", (jnp.trace, np.trace), [(2, 3, 3)]),
    ("no_loop_dims", "(n),(n)->()", (jnp.dot, np.dot), [(4,), (4,)]),
    ("scalar_core", "(),()->()", (jnp.add, np.add), [(2, 1), (3,)]),
    ("new_out_dim", "()->(k)", (lambda a: jnp.stack([a, 2 * a]), lambda a: np.stack([a, 2 * a])),
     [(2, 3)]),
    ("mixed_core", "(n),()->(n)", (lambda v, s: v * s, lambda v, s: v * s), [(2, 3), (4, 1)]),
]


@pytest.mark.parametrize("name,signature,fns,shapes", SIGNATURE_CASES,
                         ids=[c[0] for c in SIGNATURE_CASES])
def test_signature_matches_numpy(name, signature, fns, shapes):
  args = [_rng().standard_normal(s).astype(F32) for s in shapes]
  got = jnp.vectorize(fns[0], signature=signature)(*args)
  want = np.vectorize(fns[1], signature=signature)(*args)
  _same(got, want, F32, rtol=1e-5)


def test_scalar_functions_broadcast_like_numpy():
  rng = _rng()
  f = lambda a, b: a * jnp.sin(b) - b  # noqa: E731
  f_np = lambda a, b: a * np.sin(b) - b  # noqa: E731
  for shapes in [[(2, 3), (3,)], [(1, 3, 1), (2, 1, 1, 4)], [(2, 1), (1, 1)], [(), (3,)]]:
    args = [rng.standard_normal(s).astype(F32) for s in shapes]
    _same(jnp.vectorize(f)(*args), np.vectorize(f_np)(*args), F32)


def test_size_one_and_empty_loop_dims():
  # Loop dims of size 1 in every argument are re-inserted, not mapped.
  _same(jnp.vectorize(lambda a: a + 1)(np.ones((1, 1), F32)), np.full((1, 1), 2, F32))
  _same(jnp.vectorize(lambda a, b: a + b)(np.ones((1, 3), F32), np.ones((1, 1), F32)),
        np.full((1, 3), 2, F32))
  _same(jnp.vectorize(lambda a: a + 1)(np.ones((0, 3), F32)), np.ones((0, 3), F32))


def test_dtypes_and_weak_types():
  x = np.arange(12, dtype=np.int32).reshape(3, 4)
  _same(jnp.vectorize(lambda a, b: a * b)(x, 2), x * 2, np.int32)
  # int32 times a weak float is a weak float32 (JAX's lattice).
  _same(jnp.vectorize(lambda a, b: a * b)(x, 2.0), x * 2.0, F32, weak=True)
  # Python scalars stay weakly typed, as in JAX.
  _same(jnp.vectorize(lambda a, b: a * b)(3.0, 2), 6.0, F32, weak=True)
  _same(jnp.vectorize(lambda a: a * 2)([1., 2., 3.]), [2., 4., 6.], F32)
  _same(jnp.vectorize(lambda a: a > 1)(x), x > 1, np.bool_)


def test_multiple_outputs():
  a = _rng().standard_normal((2, 3, 4)).astype(F32)
  total, top = jnp.vectorize(lambda v: (v.sum(), v.max()), signature="(n)->(),()")(a)
  _same(total, a.sum(-1), F32, rtol=1e-5)
  _same(top, a.max(-1), F32)
  doubled, total = jnp.vectorize(lambda v: (v * 2, v.sum()), signature="(n)->(n),()")(a)
  _same(doubled, a * 2, F32)
  _same(total, a.sum(-1), F32, rtol=1e-5)
  # Without a signature any pytree of outputs is mapped (and unit dims restored).
  out = jnp.vectorize(lambda v: (v, v * 2))(np.ones((1, 3), F32))
  assert isinstance(out, tuple) and len(out) == 2
  _same(out[1], np.full((1, 3), 2, F32))
  # A one-element tuple matches a one-output signature and stays a tuple.
  out = jnp.vectorize(lambda v: (v.sum(),), signature="(n)->()")(np.ones((2, 3), F32))
  assert isinstance(out, tuple) and len(out) == 1
  _same(out[0], [3., 3.], F32)


def test_excluded_arguments():
  rng = _rng()
  x = rng.standard_normal((2, 3)).astype(F32)
  p = np.array([2., 3.], F32)
  col = rng.standard_normal((2, 1)).astype(F32)
  got = jnp.vectorize(lambda a, q, b: a * q[0] + b * q[1], excluded={1})(x, p, col)
  _same(got, x * p[0] + col * p[1], F32)
  # An excluded position past the arguments given is ignored.
  _same(jnp.vectorize(lambda a, e=2: a ** e, excluded={1})(x), x ** 2, F32, rtol=1e-5)
  # A non-array (a function) passed by position or keyword.
  f = partial(jnp.vectorize, signature="(),()->()", excluded=[2, "func"])(
      lambda a, b, func=jnp.add: func(a, b))
  n = np.arange(4, dtype=np.int32)
  _same(f(n, 2), n + 2, np.int32)
  _same(f(n, 2, jnp.subtract), n - 2, np.int32)
  _same(f(n, 2, func=jnp.subtract), n - 2, np.int32)
  g = jnp.vectorize(lambda a, func=None: func(a), excluded={"func"})
  _same(g(x, func=jnp.sin), np.sin(x), F32)


def test_keyword_arguments_not_excluded_are_ignored_like_jax():
  # JAX 0.10.2 passes only excluded keyword arguments on to pyfunc.
  got = jnp.vectorize(lambda a, b=1.: a + b)(np.arange(3, dtype=F32), b=5.)
  _same(got, [1., 2., 3.], F32)


def test_none_arguments_pass_through():
  x = np.arange(3, dtype=F32)
  f = jnp.vectorize(lambda a, b: a if b is None else b if a is None else a + b)
  _same(f(x, None), x, F32)
  _same(f(None, x), x, F32)   # JAX 0.10.2 fails here (None at position 0 only)
  _same(f(x, x), 2 * x, F32)
  g = jnp.vectorize(lambda v, b: v.sum(), signature="(n),()->()")
  _same(g(np.ones((2, 3), F32), None), [3., 3.], F32)
  with pytest.raises(ValueError, match=r"^Cannot pass None at locations \{1\} with "
                     r"signature='\(n\),\(n\)->\(n\)'$"):
    jnp.vectorize(lambda a, b: a, signature="(n),(n)->(n)")(x, None)


def test_decorator_forms_keep_name_and_doc():
  @jnp.vectorize
  def add_one(a):
    """Adds one."""
    return a + 1

  @partial(jnp.vectorize, signature="(k),(k)->(k)")
  def cross(a, b):
    assert a.shape == b.shape == (3,)
    return jnp.array([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                      a[0] * b[1] - a[1] * b[0]])

  assert add_one.__name__ == "add_one" and add_one.__doc__ == "Adds one."
  _same(add_one(np.zeros((2, 2), F32)), np.ones((2, 2), F32))
  a = np.ones((1, 2, 3), F32)
  b = np.arange(6, dtype=F32).reshape(2, 1, 3)
  _same(cross(a, b), np.cross(a, b), F32)


ERROR_CASES = [
    # (name, thunk, error type, JAX 0.10.2's message)
    ("bad_signature", lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->")(np.ones(3), np.ones(3)),
     ValueError, "not a valid gufunc signature: (n),(n)->"),
    ("spaces_in_signature",
     lambda: jnp.vectorize(jnp.dot, signature="(n) -> ()")(np.ones(3), np.ones(3)),
     ValueError, "not a valid gufunc signature: (n) -> ()"),
    ("too_few_dims",
     lambda: jnp.vectorize(jnp.matmul, signature="(n,m),(m)->(n)")(np.ones(3), np.ones(3)),
     ValueError, "input with shape (3,) does not have enough dimensions for all core "
     "dimensions ('n', 'm') " + EXC + "'(n,m),(m)->(n)'"),
    ("inconsistent_core",
     lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(np.ones(3), np.ones(4)),
     ValueError, "inconsistent size for core dimension 'n': 4 vs 3 " + EXC + "'(n),(n)->()'"),
    ("wrong_arg_count", lambda: jnp.vectorize(jnp.dot, signature="(n),(n)->()")(np.ones(3)),
     TypeError, "wrong number of positional arguments: expected 2, got 1 " + EXC
     + "'(n),(n)->()'"),
    ("output_core_rank",
     lambda: jnp.vectorize(lambda a: a, signature="(n)->()")(np.ones((2, 3))),
     ValueError, "output shape (3,) does not match core dimensions () " + EXC + "'(n)->()'"),
    ("output_core_size",
     lambda: jnp.vectorize(lambda a: a[:2], signature="(n)->(n)")(np.ones((2, 3))),
     ValueError, "inconsistent size for core dimension 'n': 2 vs 3 " + EXC + "'(n)->(n)'"),
    ("too_many_outputs",
     lambda: jnp.vectorize(lambda a: (a.sum(),) * 3, signature="(n)->(),()")(np.ones((2, 3))),
     TypeError, "wrong number of output arguments: expected 2, got 3 " + EXC + "'(n)->(),()'"),
    ("tuple_for_one_output",
     lambda: jnp.vectorize(lambda a: (a.sum(),) * 2, signature="(n)->()")(np.ones((2, 3))),
     TypeError, "wrong number of output arguments: expected 1, got 2 " + EXC + "'(n)->()'"),
    ("loop_dims_mismatch", lambda: jnp.vectorize(lambda a, b: a + b)(np.ones(2), np.ones(3)),
     ValueError, "Incompatible shapes for broadcasting: shapes=[(2,), (3,)]"),
    ("excluded_float", lambda: jnp.vectorize(lambda a: a, excluded={1.5}), TypeError,
     "jax.numpy.vectorize can only exclude integer or string arguments, but excluded={1.5}"),
    ("excluded_negative", lambda: jnp.vectorize(lambda a: a, excluded={-1}), ValueError,
     "excluded={-1} contains negative numbers"),
]


@pytest.mark.parametrize("name,thunk,err,msg", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_vectorize_errors_match_jax(name, thunk, err, msg):
  with pytest.raises(err) as info:
    thunk()
  assert str(info.value) == msg


def test_single_output_where_tuple_expected():
  with pytest.raises(TypeError, match=r"^output must be a tuple when multiple outputs are "
                     r"expected, got: .*\non vectorized function with excluded=frozenset\(\) "
                     r"and signature='\(n\)->\(\),\(\)'$"):
    jnp.vectorize(lambda a: a.sum(), signature="(n)->(),()")(np.ones((2, 3)))


def test_rank_promotion_config():
  f = jnp.vectorize(lambda a, b: a + b, signature="(),()->()")
  msg = ("operands with shapes [(2, 3), (3,)] require rank promotion for jnp.vectorize "
         "function with signature (),()->(). Set the jax_numpy_rank_promotion config option "
         "to 'allow' to disable this message; for more information, see "
         "https://docs.jax.dev/en/latest/rank_promotion_warning.html.")
  with jax.config.override("jax_numpy_rank_promotion", "raise"):
    with pytest.raises(ValueError) as info:
      f(np.ones((2, 3)), np.ones(3))
    assert str(info.value) == msg
    _same(f(np.ones((2, 3), F32), 1.), np.full((2, 3), 2, F32))  # scalars need no promotion
  with jax.config.override("jax_numpy_rank_promotion", "warn"):
    with pytest.warns(UserWarning) as record:
      f(np.ones((2, 3)), np.ones(3))
  assert str(record[0].message) == msg


# Printed by JAX 0.10.2's make_jaxpr for the same programs.
JAXPRS = [
    ("sin", lambda: (jnp.vectorize(jnp.sin), [np.ones((2, 3), F32)]),
     "{ lambda ; a:f32[2,3]. let b:f32[2,3] = sin a in (b,) }"),
    ("unit_dims", lambda: (jnp.vectorize(lambda a, b: a + b),
                           [np.ones((1, 3), F32), np.ones((1, 1), F32)]),
     """{ lambda ; a:f32[1,3] b:f32[1,1]. let
    c:f32[3] = squeeze[dimensions=(0,)] a
    d:f32[] = squeeze[dimensions=(0, 1)] b
    e:f32[3] = add c d
    f:f32[1,3] = broadcast_in_dim[broadcast_dimensions=(1,)] e
  in (f,) }"""),
    ("matvec", lambda: (jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)"),
                        [np.ones((4, 1, 2, 3), F32), np.ones((5, 3), F32)]),
     """{ lambda ; a:f32[4,1,2,3] b:f32[5,3]. let
    c:f32[4,2,3] = squeeze[dimensions=(1,)] a
    d:f32[4,2,5] = dot_general[
      dimension_numbers=(([2], [1]), ([], []))
      preferred_element_type=float32
    ] c b
    e:f32[4,5,2] = transpose[permutation=(0, 2, 1)] d
  in (e,) }"""),
    ("excluded", lambda: (jnp.vectorize(lambda a, p: a * p, excluded={1}),
                          [np.ones((2, 3), F32), 2.0]),
     """{ lambda ; a:f32[2,3] b:f32[]. let
    c:f32[] = convert_element_type[new_dtype=float32 weak_type=False] b
    d:f32[2,3] = mul a c
  in (d,) }"""),
    ("apply_over_axes", lambda: (lambda a: jnp.apply_over_axes(jnp.sum, a, [0, 2]),
                                 [np.ones((2, 3, 4), F32)]),
     """{ lambda ; a:f32[2,3,4]. let
    b:f32[3,4] = reduce_sum[axes=(0,) out_sharding=None] a
    c:f32[1,3,4] = broadcast_in_dim[broadcast_dimensions=(1, 2)] b
    d:f32[1,3] = reduce_sum[axes=(2,) out_sharding=None] c
    e:f32[1,3,1] = broadcast_in_dim[broadcast_dimensions=(0, 1)] d
  in (e,) }"""),
]


@pytest.mark.parametrize("name,make,text", JAXPRS, ids=[c[0] for c in JAXPRS])
def test_printed_jaxprs_match_jax(name, make, text):
  fn, args = make()
  assert str(jax.make_jaxpr(fn)(*args)) == text


def test_vectorize_under_transformations():
  rng = _rng()
  a = rng.standard_normal((2, 3, 4)).astype(F32)
  b = rng.standard_normal((3, 4)).astype(F32)
  v = rng.standard_normal(3).astype(F32)
  vdot = jnp.vectorize(lambda x, y: jnp.dot(x, y), signature="(n),(n)->()")
  ones = np.ones(4, F32)
  _same(jax.jit(vdot)(a, ones), a.sum(-1), F32, rtol=1e-5)
  ga, gb = jax.grad(lambda x, y: vdot(x, y).sum(), argnums=(0, 1))(a, b)
  _same(ga, np.broadcast_to(b, a.shape), F32)
  _same(gb, a.sum(0), F32, rtol=1e-5)
  _same(jax.vmap(vdot, in_axes=(1, None))(a, ones), a.sum(-1).T, F32, rtol=1e-5)
  _same(jax.jacfwd(jnp.vectorize(jnp.sin))(v), np.diag(np.cos(v)), F32)
  _same(jax.hessian(lambda w: jnp.vectorize(lambda x, y: x * y * y)(w, w).sum())(v),
        np.diag(6 * v), F32, rtol=1e-5)
  # vectorize of a transformed function (per-element derivative).
  _same(jnp.vectorize(jax.grad(jnp.tanh))(b), 1 - np.tanh(b) ** 2, F32, rtol=1e-5)
  _same(jax.jit(jax.grad(lambda x: vdot(x, x).sum()))(a), 2 * a, F32)


# ================================================================ piecewise
X = np.linspace(-3, 3, 13).astype(F32)
XI = np.arange(-4, 5, dtype=np.int32)

PIECEWISE_CASES = [
    ("two_pieces", X, lambda x: [x < 0, x >= 0], [lambda t: -t, lambda t: t ** 2]),
    ("default_const", X, lambda x: [x < -1, x > 1], [lambda t: 1 + t, lambda t: t - 1, 0]),
    ("default_fn", X, lambda x: [x < -1, x > 1], [lambda t: 1 + t, lambda t: t - 1,
                                                  lambda t: t * 10]),
    ("constants", X, lambda x: [x < 0, x > 1], [lambda t: -t, 3., 7]),
    ("last_true_wins", X, lambda x: [x < 1, x > -1], [1., 2.]),
    ("no_default_is_zero", X, lambda x: [x > 2], [lambda t: t]),
    ("int", XI, lambda x: [x < 0, x >= 0], [lambda t: 0 * t, lambda t: t]),
    ("int_float_fn_cast", XI, lambda x: [x < 0], [lambda t: t * 1.5, lambda t: t]),
    ("2d", np.linspace(-1, 1, 12).astype(F32).reshape(3, 4), lambda x: [x < 0],
     [np.sin, np.cos]),
]


@pytest.mark.parametrize("name,x,conds,funcs", PIECEWISE_CASES,
                         ids=[c[0] for c in PIECEWISE_CASES])
def test_piecewise_matches_numpy(name, x, conds, funcs):
  # NumPy ufuncs in funclist (np.sin) become their jnp twins here.
  jfuncs = [getattr(jnp, f.__name__) if isinstance(f, np.ufunc) else f for f in funcs]
  got = jnp.piecewise(x, conds(x), jfuncs)
  _same(got, np.piecewise(x, conds(x), funcs), x.dtype)


def test_piecewise_forms():
  # The control-flow tutorial's example.
  x = jnp.array([-1., 2.])
  _same(jnp.piecewise(x, [x < 0], [lambda t: -t, lambda t: t * 2]), [1., 4.], F32)
  # An array of scalar conditions selects one function for the whole domain.
  got = jnp.piecewise(XI, jnp.array([False, True, False]),
                      [lambda t: t * 0, lambda t: t * 10, lambda t: t * 100])
  _same(got, XI * 10, np.int32)
  # Extra positional and keyword arguments reach every function.
  got = jnp.piecewise(X, [X < 0], [lambda t, a, b=1.: a * t + b, lambda t, a, b=1.: t - a - b],
                      2., b=3.)
  _same(got, np.piecewise(X, [X < 0], [lambda t: 2 * t + 3, lambda t: t - 5]), F32)
  _same(jnp.piecewise(2.0, [True], [lambda t: t * 3, 0.]), 6., F32)


def test_piecewise_errors():
  with pytest.raises(ValueError) as info:
    jnp.piecewise(X, [X < 0], [1., 2., 3.])
  assert str(info.value) == "with 1 condition(s), either 1 or 2 functions are expected; got 3"
  with pytest.raises(TypeError) as info:
    jnp.piecewise([1., 2.], [True], [1.])
  assert str(info.value) == ("piecewise requires ndarray or scalar arguments, got "
                             "<class 'list'> at position 0.")


def test_piecewise_under_transformations():
  f = lambda x: jnp.piecewise(x, [x < 0], [lambda t: t ** 2, jnp.sin])  # noqa: E731
  _same(jax.grad(lambda x: f(x).sum())(X), np.where(X < 0, 2 * X, np.cos(X)), F32)
  b = np.linspace(-2, 2, 12).astype(F32).reshape(3, 4)
  _same(jax.vmap(f)(b), np.where(b < 0, b ** 2, np.sin(b)), F32)
  g = lambda x: jnp.piecewise(x, [x < 0, x > 2], [lambda t: t ** 2, 1., jnp.sin])  # noqa: E731
  want = np.piecewise(X, [X < 0, X > 2], [lambda t: t ** 2, 1., np.sin])
  _same(jax.jit(g)(X), want, F32)
  _same(jax.grad(lambda x: jax.jit(g)(x).sum())(X),
        np.piecewise(X, [X < 0, X > 2], [lambda t: 2 * t, 0., np.cos]), F32)
  # Conditions batched by vmap while x is not, and the other way round.
  conds = np.stack([X < 0, X > 0])
  got = jax.vmap(lambda c: jnp.piecewise(X, [c], [lambda t: t * 2, lambda t: -t]))(conds)
  _same(got, np.stack([np.where(c, X * 2, -X) for c in conds]), F32)


def test_piecewise_stages_a_switch_inside_jit_named_piecewise():
  closed = jax.make_jaxpr(lambda x: jnp.piecewise(x, [x < 0], [lambda t: -t, lambda t: t * 2]))(
      np.float32(1))
  call = closed.jaxpr.eqns[-1]
  assert call.primitive.name == "jit" and call.params["name"] == "_piecewise"
  inner = [e.primitive.name for e in call.params["jaxpr"].jaxpr.eqns]
  assert inner[-1] == "cond" and "argmax" in inner


# ================================================ apply_along/over_axes
def test_apply_along_axis_matches_numpy():
  a = _rng().standard_normal((2, 3, 4)).astype(F32)
  ints = np.arange(12, dtype=np.int32).reshape(3, 4)
  cases = [
      (lambda v: jnp.sum(v ** 2), lambda v: np.sum(v ** 2), ints, 0),
      (lambda v: jnp.sum(v ** 2), lambda v: np.sum(v ** 2), ints, 1),
      (jnp.cumsum, np.cumsum, a, 1),
      (lambda v: jnp.outer(v, v), lambda v: np.outer(v, v), a, -1),
      (lambda v: jnp.outer(v, v[:2]), lambda v: np.outer(v, v[:2]), a, 0),
      (jnp.sum, np.sum, a[0, 0], 0),
  ]
  for f, f_np, x, axis in cases:
    _same(jnp.apply_along_axis(f, axis, x), np.apply_along_axis(f_np, axis, x), x.dtype,
          rtol=1e-5)
  want = np.apply_along_axis(lambda v, e: np.sum(v ** e), 0, ints, 3)
  _same(jnp.apply_along_axis(lambda v, e: jnp.sum(v ** e), 0, ints, e=3), want, np.int32)
  _same(jnp.apply_along_axis(lambda v, e: jnp.sum(v ** e), 0, ints, 3), want, np.int32)
  with pytest.raises(ValueError, match="axis 3 is out of bounds for array of dimension 3"):
    jnp.apply_along_axis(jnp.sum, 3, a)
  with pytest.raises(TypeError, match="apply_along_axis requires ndarray or scalar arguments"):
    jnp.apply_along_axis(jnp.sum, 0, [1., 2.])


def test_apply_over_axes_matches_numpy():
  a = _rng().standard_normal((2, 3, 4)).astype(F32)
  ints = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
  cases = [(jnp.sum, np.sum, a, [0, 2]), (jnp.sum, np.sum, a, [-1]),
           (jnp.cumsum, np.cumsum, a, [0, 1]), (jnp.prod, np.prod, ints, [0, 1]),
           (jnp.max, np.max, a, 1)]
  for f, f_np, x, axes in cases:
    _same(jnp.apply_over_axes(f, x, axes), np.apply_over_axes(f_np, x, axes), x.dtype,
          rtol=1e-5)
  with pytest.raises(ValueError) as info:
    jnp.apply_over_axes(lambda x, ax: x.sum(), a, [0])
  assert str(info.value) == "function is not returning an array of the correct shape"
  with pytest.raises(TypeError, match="apply_over_axes requires ndarray or scalar arguments"):
    jnp.apply_over_axes(jnp.sum, [1., 2.], [0])


def test_apply_along_axis_under_transformations():
  a = _rng().standard_normal((2, 3, 4)).astype(F32)
  f = lambda x: jnp.apply_along_axis(lambda v: jnp.sum(v * v) * v[0], 1, x)  # noqa: E731
  want = np.apply_along_axis(lambda v: np.sum(v * v) * v[0], 1, a)
  _same(jax.jit(f)(a), want, F32, rtol=1e-5)
  _same(jax.vmap(f, in_axes=2, out_axes=1)(a), want, F32, rtol=1e-5)
  g = jax.grad(lambda x: f(x).sum())(a)
  # d/dv (|v|^2 v0) = 2 v v0 + |v|^2 e0 along axis 1.
  want_g = 2 * a * a[:, :1] + np.eye(3, dtype=F32)[0][None, :, None] * (a * a).sum(1,
                                                                                   keepdims=True)
  _same(g, want_g, F32, rtol=1e-5)


# ================================================================ compiled
def test_compiled_module_matches_eager():
  rng = _rng()
  a = rng.standard_normal((4, 2, 3)).astype(F32)
  v = rng.standard_normal(3).astype(F32)

  def everything(a, v, x):
    matvec = jnp.vectorize(jnp.matmul, signature="(m,n),(n)->(m)")(a, v)
    total, top = jnp.vectorize(lambda w: (w.sum(), w.max()), signature="(n)->(),()")(a)
    pw = jnp.piecewise(x, [x < 0, x > 2], [lambda t: t ** 2, 1., jnp.sin])
    pw_grad = jax.grad(lambda t: jnp.piecewise(t, [t < 0], [jnp.sin, jnp.cos]).sum())(x)
    along = jnp.apply_along_axis(lambda w: jnp.outer(w, w[:2]), 0, a)
    over = jnp.apply_over_axes(jnp.sum, a, [0, 2])
    return matvec, total, top, pw, pw_grad, along, over

  eager = everything(a, v, X)
  compiled = jax.jit(everything).lower(a, v, X).compile()(a, v, X)
  for e, c in zip(eager, compiled):
    _same(c, np.asarray(e), e.dtype, rtol=1e-5, atol=1e-5)
