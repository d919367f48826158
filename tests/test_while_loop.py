"""``lax.while_loop`` (the ``while`` primitive): values against Python loops,
JAX's errors, printed jaxprs against JAX 0.10.2, forward-mode AD (and the
reverse-mode error), linearize through jit, vmap (batched carries, consts and
predicates), nested loops, and compiled (IREE) against interpreted."""
import re

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.core import check_jaxpr
from openjax._src.interpreters.partial_eval import partial_eval_jaxpr

F32 = np.float32


def _newton_sqrt(a):
  """sqrt(a) by Newton's iteration; also returns the number of steps."""
  def cond(c):
    x, i = c
    return (jnp.abs(x * x - a) > 1e-6 * a) & (i < 50)

  def body(c):
    x, i = c
    return 0.5 * (x + a / x), i + 1
  return lax.while_loop(cond, body, (a, 0))


def _newton_sqrt_py(a):
  a = F32(a)
  x, i = a, 0
  while abs(x * x - a) > F32(1e-6) * a and i < 50:
    x, i = F32(0.5) * (x + a / x), i + 1
  return x, i


# ------------------------------------------------------------------ values
def test_int_counter():
  out = lax.while_loop(lambda i: i < 10, lambda i: i + 3, 0)
  assert int(out) == 12 and out.dtype == np.int32 and out.weak_type
  assert int(jax.jit(lambda n: lax.while_loop(lambda i: i < n, lambda i: i + 3, 0))(10)) == 12


@pytest.mark.parametrize("a", [2.0, 0.25, 1e4])
def test_newton_matches_python_loop(a):
  x, steps = _newton_sqrt(F32(a))
  x_py, steps_py = _newton_sqrt_py(a)
  assert int(steps) == steps_py
  np.testing.assert_allclose(np.asarray(x), x_py, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(x), np.sqrt(F32(a)), rtol=1e-6)
  xj, sj = jax.jit(_newton_sqrt)(F32(a))
  assert float(xj) == float(x) and int(sj) == int(steps)


def test_pytree_carry_and_closures():
  w = jnp.asarray(np.arange(6, dtype=F32).reshape(2, 3))

  def run(scale, v):
    def body(c):
      (m, [s]), d = c["state"], c["n"]
      return {"state": (m * scale + w, [s + jnp.sum(m)]), "n": d + 1}
    init = {"state": (v, [jnp.float32(0)]), "n": 0}
    return lax.while_loop(lambda c: c["n"] < 4, body, init)

  v = np.ones((2, 3), F32)
  m, s = v, F32(0)
  for _ in range(4):
    m, s = m * F32(0.5) + np.asarray(w), s + m.sum()
  for fn in (run, jax.jit(run)):
    out = fn(0.5, v)
    assert jax.tree_util.tree_structure(out) == jax.tree_util.tree_structure(
        {"state": (0, [0]), "n": 0})
    np.testing.assert_allclose(np.asarray(out["state"][0]), m, rtol=1e-6)
    np.testing.assert_allclose(float(out["state"][1][0]), s, rtol=1e-6)
    assert int(out["n"]) == 4


def test_int_float_and_bool_carries():
  def body(c):
    i, x, flag = c
    return i + 1, x * 2.0 - 1.0, jnp.logical_not(flag)
  init = (jnp.int32(0), jnp.float32(1.5), jnp.bool_(False))
  i, x, flag = lax.while_loop(lambda c: c[0] < 5, body, init)
  x_py = F32(1.5)
  for _ in range(5):
    x_py = x_py * F32(2) - F32(1)
  assert (int(i), float(x), bool(flag)) == (5, float(x_py), True)
  assert (i.dtype, x.dtype, flag.dtype) == (np.int32, np.float32, np.bool_)


def test_zero_iterations_return_the_initial_carry():
  x = np.arange(3, dtype=F32)
  for fn in (lambda v: lax.while_loop(lambda c: c[0] > 0, lambda c: (c[0] - 1, c[1] * 2), (0, v)),
             jax.jit(lambda v: lax.while_loop(lambda c: c[0] > 0, lambda c: (c[0] - 1, c[1] * 2),
                                              (0, v)))):
    i, y = fn(x)
    assert int(i) == 0
    np.testing.assert_array_equal(np.asarray(y), x)


def test_weak_typed_init_takes_the_body_type():
  # JAX traces again with the joined type: 0 (weak int) meets c + 1.5.
  out = lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0)
  assert (float(out), out.dtype, out.weak_type) == (3.0, np.float32, False)
  out = lax.while_loop(lambda c: c < 3, lambda c: c * 2, 1.)
  assert (float(out), out.dtype, out.weak_type) == (4.0, np.float32, True)
  out = lax.while_loop(lambda c: c < 3, lambda c: c + jnp.float16(1), 1.)
  assert (float(out), out.dtype, out.weak_type) == (3.0, np.float16, False)


def test_forwarded_carry_is_returned_as_given():
  # A carry the body passes through and the cond never reads becomes a body
  # constant; JAX hands back the initial value itself.
  x, y = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + c[1], c[1]), (1., 2.))
  assert float(x) == 5.0 and y == 2.0 and type(y) is float


def test_disable_jit_runs_a_python_loop():
  calls = []

  def body(c):
    calls.append(c)
    return c + 1
  with jax.disable_jit():
    out = lax.while_loop(lambda c: c < 3, body, 0)
    assert isinstance(out, jax.Array) and int(out) == 3 and out.weak_type
    assert len(calls) == 3 and all(isinstance(c, jax.Array) for c in calls)
    # A traced predicate (vmap) falls back to the primitive.
    got = jax.vmap(lambda x: lax.while_loop(lambda c: c < 3, lambda c: c + 1, x))(jnp.arange(4))
    np.testing.assert_array_equal(np.asarray(got), [3, 3, 3, 3])


def test_nested_loops():
  def triangle_sums(n):
    def outer_body(c):
      i, acc = c
      j = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] + d[0]), (0, 0))[1]
      return i + 1, acc + j
    return lax.while_loop(lambda c: c[0] < n, outer_body, (0, 0))

  expected = sum(sum(range(i)) for i in range(7))
  for fn in (triangle_sums, jax.jit(triangle_sums)):
    i, acc = fn(7)
    assert (int(i), int(acc)) == (7, expected)


# ------------------------------------------------------------------ errors
def _carry_fn(carry):
  return carry + 1.5


_ERRORS = [
    (lambda: lax.while_loop(lambda c: c, lambda c: c + 1, 0),
     "cond_fun must return a boolean scalar, but got output type(s) "
     "[ShapedArray(int32[], weak_type=True)]."),
    (lambda: lax.while_loop(lambda c: (c < 1, c < 2), lambda c: c + 1, 0),
     "cond_fun must return a boolean scalar, but got pytree PyTreeDef((*, *))."),
    (lambda: lax.while_loop(lambda c: c < 1., lambda c: c + 1, jnp.zeros(2)),
     "cond_fun must return a boolean scalar, but got output type(s) [ShapedArray(bool[2])]."),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: (c, c), 0),
     "while_loop body function carry input and carry output must have the same pytree "
     "structure, but they differ:\n\nThe input carry c is a <class 'SHAPED_ARRAY'> but the "
     "corresponding component of the carry output is a <class 'tuple'>, so their Python types "
     "differ.\n\nRevise the function so that the carry output has the same pytree structure "
     "as the carry input."),
    (lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1,), (0, 1.0)),
     "while_loop body function carry input and carry output must have the same pytree "
     "structure, but they differ:\n\nThe input carry c is a tuple of length 2 but the "
     "corresponding component of the carry output is a tuple of length 1, so the lengths do "
     "not match.\n\nRevise the function so that the carry output has the same pytree "
     "structure as the carry input."),
    (lambda: lax.while_loop(lambda c: c[0] < 3, lambda c: [c[0] + 1, c[1]], (0, 1.0)),
     "while_loop body function carry input and carry output must have the same pytree "
     "structure, but they differ:\n\nThe input carry c is a <class 'tuple'> but the "
     "corresponding component of the carry output is a <class 'list'>, so their Python types "
     "differ.\n\nRevise the function so that the carry output has the same pytree structure "
     "as the carry input."),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, jnp.int32(0)),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry c has type int32[] but the corresponding output carry "
     "component has type float32[], so the dtypes do not match.\n\nRevise the function so "
     "that all output types match the corresponding input types."),
    (lambda: lax.while_loop(lambda c: c[0] < 3,
                            lambda c: (c[0] + 1.5, c[1].astype(jnp.int32)),
                            (jnp.int32(0), jnp.float32(1))),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\n  * the input carry component c[0] has type int32[] but the corresponding "
     "output carry component has type float32[], so the dtypes do not match;\n  * the "
     "input carry component c[1] has type float32[] but the corresponding output carry "
     "component has type int32[], so the dtypes do not match.\n\nRevise the function so that "
     "all output types match the corresponding input types."),
    (lambda: lax.while_loop(lambda c: c < 3, lambda c: jnp.zeros(3, jnp.int32), jnp.float32(0)),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry c has type float32[] but the corresponding output carry "
     "component has type int32[3], so the dtypes do not match, and the shapes do not "
     "match.\n\nRevise the function so that all output types match the corresponding input "
     "types."),
    (lambda: lax.while_loop(lambda c: c < 3, _carry_fn, jnp.int32(0)),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry carry has type int32[] but the corresponding output carry "
     "component has type float32[], so the dtypes do not match.\n\nRevise the function so "
     "that all output types match the corresponding input types."),
    (lambda: lax.while_loop(lambda c: c["a"] < 3,
                            lambda c: {"a": c["a"] + 1, "b": c["b"].astype(jnp.int32)},
                            {"a": 0, "b": jnp.float32(1)}),
     "while_loop body function carry input and carry output must have equal types, but they "
     "differ:\n\nThe input carry component c['b'] has type float32[] but the corresponding "
     "output carry component has type int32[], so the dtypes do not match.\n\nRevise the "
     "function so that all output types match the corresponding input types."),
    (lambda: lax.while_loop(1, _carry_fn, 0),
     "lax.while_loop: body_fun and cond_fun arguments should be callable."),
]


@pytest.mark.parametrize("fn,message", _ERRORS)
def test_errors_match_jax(fn, message):
  with pytest.raises(TypeError) as info:
    fn()
  got = re.sub(r"<class '[\w.]*ShapedArray'>", "<class 'SHAPED_ARRAY'>", str(info.value))
  assert got == message


_REVERSE_MODE = ("Reverse-mode differentiation does not work for lax.while_loop or "
                 "lax.fori_loop with dynamic start/stop values. Try using lax.scan, or using "
                 "fori_loop with static start/stop.")


def _doubling(x):
  return lax.while_loop(lambda c: c < 10., lambda c: c * 2., x)


@pytest.mark.parametrize("transform", [
    lambda: jax.grad(_doubling)(1.),
    lambda: jax.grad(jax.jit(_doubling))(1.),
    lambda: jax.vjp(_doubling, 1.)[1](1.),
], ids=["grad", "grad_of_jit", "vjp"])
def test_reverse_mode_raises(transform):
  with pytest.raises(ValueError) as info:
    transform()
  assert str(info.value) == _REVERSE_MODE


# --------------------------------------------------------- printed jaxprs
def _k(x):
  return lax.while_loop(lambda c: c < 10., lambda c: c * 2., x)


def _jc(x):
  return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))[1]


def _nested_counts(n):
  def outer_body(c):
    i, acc = c
    j = lax.while_loop(lambda d: d[0] < i, lambda d: (d[0] + 1, d[1] + d[0]), (0, 0))[1]
    return i + 1, acc + j
  return lax.while_loop(lambda c: c[0] < n, outer_body, (0, 0))


def _big_body(x):
  def body(c):
    for _ in range(11):
      c = c * 0.5 + 1.0
    return c
  return lax.while_loop(lambda c: c < 10., body, x)


def _closure_consts():
  c, d = jnp.arange(3.0), jnp.ones(3)

  def g(x, y):
    return lax.while_loop(lambda v: v.sum() < 5., lambda v: ((v + x) * c + y) * d, jnp.zeros(3))
  return jax.make_jaxpr(g)(jnp.ones(3), jnp.ones(3))


def _vmap_batched_const():
  def vb(x):
    return lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] * x), (0, 1.0))
  return jax.make_jaxpr(jax.vmap(vb))(jnp.arange(3.))


def _vmap_pred_partial():
  def vp(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x, c[2] + 1.),
                          (0, 1.0, 0.))
  return jax.make_jaxpr(jax.vmap(vp, in_axes=(0, None)))(jnp.arange(3), 2.)


def _pytree_with_forwarded():
  return jax.make_jaxpr(lambda x: lax.while_loop(
      lambda c: c["a"][0] < x, lambda c: {"a": (c["a"][0] + 1,), "b": c["b"]},
      {"a": (0,), "b": x}))(3)


_PROGRAMS = {
    "simple": lambda: jax.make_jaxpr(lambda x: lax.while_loop(
        lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, x)))(1.0),
    "closure_consts": _closure_consts,
    "forwarded_carry": lambda: jax.make_jaxpr(lambda x, y: lax.while_loop(
        lambda c: c[0] < 5, lambda c: (c[0] + c[1], c[1]), (x, y)))(1.0, 2.0),
    "weak_promotion": lambda: jax.make_jaxpr(
        lambda: lax.while_loop(lambda c: c < 3, lambda c: c + 1.5, 0))(),
    "weak_promotion_f16": lambda: jax.make_jaxpr(
        lambda x: lax.while_loop(lambda c: c < 3, lambda c: c + x, 0.))(jnp.float16(1)),
    "vmap_batched_pred": lambda: jax.make_jaxpr(jax.vmap(_k))(jnp.arange(1., 4.)),
    "jvp_scalar": lambda: jax.make_jaxpr(lambda x: jax.jvp(_k, (x,), (1.,)))(1.),
    "linearize_scalar": lambda: jax.make_jaxpr(lambda x: jax.linearize(_k, x)[1](1.))(1.),
    "nested": lambda: jax.make_jaxpr(_nested_counts)(5),
    "vmap_batched_const": _vmap_batched_const,
    "vmap_pred_partial": _vmap_pred_partial,
    "jvp_closure": lambda: jax.make_jaxpr(lambda x: jax.jvp(_jc, (x,), (1.,)))(2.),
    "linearize_closure": lambda: jax.make_jaxpr(lambda x: jax.linearize(_jc, x)[1](1.))(2.),
    "big_body": lambda: jax.make_jaxpr(_big_body)(1.),
    "vmap_of_jvp": lambda: jax.make_jaxpr(
        jax.vmap(lambda x: jax.jvp(_jc, (x,), (1.,))))(jnp.arange(3.)),
    "pytree_forwarded": _pytree_with_forwarded,
}


# Printed by JAX 0.10.2 (jax.make_jaxpr) for the programs above.
JAX_JAXPRS = {
    "simple": """\
{ lambda ; a:f32[]. let
    b:i32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:f32[]. let
          f:i32[] = add d 1:i32[]
          g:f32[] = mul e 2.0:f32[]
        in (f, g) }
      body_nconsts=0
      cond_jaxpr={ lambda ; h:i32[] i:f32[]. let
          j:bool[] = lt h 10:i32[]
        in (j,) }
      cond_nconsts=0
    ] 0:i32[] a
  in (b, c) }""",
    "closure_consts": """\
{ lambda a:f32[3] b:f32[3]; c:f32[3] d:f32[3]. let
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:f32[3] = while[
      body_jaxpr={ lambda ; g:f32[3] h:f32[3] i:f32[3] j:f32[3] k:f32[3]. let
          l:f32[3] = add k g
          m:f32[3] = mul l h
          n:f32[3] = add m i
          o:f32[3] = mul n j
        in (o,) }
      body_nconsts=4
      cond_jaxpr={ lambda ; p:f32[3]. let
          q:f32[] = reduce_sum[axes=(0,) out_sharding=None] p
          r:bool[] = lt q 5.0:f32[]
        in (r,) }
      cond_nconsts=0
    ] c a d b e
  in (f,) }""",
    "forwarded_carry": """\
{ lambda ; a:f32[] b:f32[]. let
    c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add e d in (f,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; g:f32[]. let h:bool[] = lt g 5.0:f32[] in (h,) }
      cond_nconsts=0
    ] b a
  in (c, b) }""",
    "weak_promotion": """\
{ lambda ; . let
    a:f32[] = while[
      body_jaxpr={ lambda ; b:f32[]. let c:f32[] = add b 1.5:f32[] in (c,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; d:f32[]. let e:bool[] = lt d 3.0:f32[] in (e,) }
      cond_nconsts=0
    ] 0.0:f32[]
  in (a,) }""",
    "weak_promotion_f16": """\
{ lambda ; a:f16[]. let
    b:f16[] = while[
      body_jaxpr={ lambda ; c:f16[] d:f16[]. let e:f16[] = add d c in (e,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; f:f16[]. let g:bool[] = lt f 3.0:f16[] in (g,) }
      cond_nconsts=0
    ] a 0.0:f16[]
  in (b,) }""",
    "vmap_batched_pred": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = while[
      body_jaxpr={ lambda ; c:f32[3]. let d:f32[3] = mul c 2.0:f32[] in (d,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; e:f32[3]. let f:bool[3] = lt e 10.0:f32[] in (f,) }
      cond_nconsts=0
    ] a
  in (b,) }""",
    "jvp_scalar": """\
{ lambda ; a:f32[]. let
    b:f32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[] e:f32[]. let
          f:f32[] = mul d 2.0:f32[]
          g:f32[] = mul e 2.0:f32[]
        in (f, g) }
      body_nconsts=0
      cond_jaxpr={ lambda ; h:f32[] i:f32[]. let
          j:bool[] = lt h 10.0:f32[]
        in (j,) }
      cond_nconsts=0
    ] a 1.0:f32[]
  in (b, c) }""",
    "linearize_scalar": """\
{ lambda ; a:f32[]. let
    _:f32[] = while[
      body_jaxpr={ lambda ; b:f32[]. let c:f32[] = mul b 2.0:f32[] in (c,) }
      body_nconsts=0
      cond_jaxpr={ lambda ; d:f32[]. let e:bool[] = lt d 10.0:f32[] in (e,) }
      cond_nconsts=0
    ] a
    _:f32[] f:f32[] = while[
      body_jaxpr={ lambda ; g:f32[] h:f32[]. let
          i:f32[] = mul g 2.0:f32[]
          j:f32[] = mul h 2.0:f32[]
        in (i, j) }
      body_nconsts=0
      cond_jaxpr={ lambda ; k:f32[] l:f32[]. let
          m:bool[] = lt k 10.0:f32[]
        in (m,) }
      cond_nconsts=0
    ] a 1.0:f32[]
  in (f,) }""",
    "nested": """\
{ lambda ; a:i32[]. let
    b:i32[] c:i32[] = while[
      body_jaxpr={ lambda ; d:i32[] e:i32[]. let
          f:i32[] g:i32[] = while[
            body_jaxpr={ lambda ; h:i32[] i:i32[]. let
                j:i32[] = add h 1:i32[]
                k:i32[] = add i h
              in (j, k) }
            body_nconsts=0
            cond_jaxpr={ lambda ; l:i32[] m:i32[] n:i32[]. let
                o:bool[] = lt m l
              in (o,) }
            cond_nconsts=1
          ] d 0:i32[] 0:i32[]
          p:i32[] = add d 1:i32[]
          q:i32[] = add e g
        in (p, q) }
      body_nconsts=0
      cond_jaxpr={ lambda ; r:i32[] s:i32[] t:i32[]. let
          u:bool[] = lt s r
        in (u,) }
      cond_nconsts=1
    ] a 0:i32[] 0:i32[]
  in (b, c) }""",
    "vmap_batched_const": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = broadcast_in_dim 1.0:f32[]
    c:i32[] d:f32[3] = while[
      body_jaxpr={ lambda ; e:f32[3] f:i32[] g:f32[3]. let
          h:i32[] = add f 1:i32[]
          i:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] g
          j:f32[3] = mul i e
        in (h, j) }
      body_nconsts=1
      cond_jaxpr={ lambda ; k:i32[] l:f32[3]. let
          m:bool[] = lt k 3:i32[]
        in (m,) }
      cond_nconsts=0
    ] a 0:i32[] b
    n:i32[3] = broadcast_in_dim c
  in (n, d) }""",
    "vmap_pred_partial": """\
{ lambda ; a:i32[3] b:f32[]. let
    c:i32[3] = broadcast_in_dim 0:i32[]
    d:f32[3] = broadcast_in_dim 1.0:f32[]
    e:f32[3] = broadcast_in_dim 0.0:f32[]
    f:i32[3] g:f32[3] h:f32[3] = while[
      body_jaxpr={ lambda ; i:f32[] j:i32[3] k:f32[3] l:f32[3]. let
          m:i32[3] = add j 1:i32[]
          n:f32[3] = mul k i
          o:f32[3] = add l 1.0:f32[]
        in (m, n, o) }
      body_nconsts=1
      cond_jaxpr={ lambda ; p:i32[3] q:i32[3] r:f32[3] s:f32[3]. let
          t:i32[3] = convert_element_type[new_dtype=int32 weak_type=False] q
          u:bool[3] = lt t p
        in (u,) }
      cond_nconsts=1
    ] a b c d e
  in (f, g, h) }""",
    "jvp_closure": """\
{ lambda ; a:f32[]. let
    _:i32[] b:f32[] c:f32[] = while[
      body_jaxpr={ lambda ; d:f32[] e:f32[] f:i32[] g:f32[] h:f32[]. let
          i:i32[] = add f 1:i32[]
          j:f32[] = mul g d
          k:f32[] = mul h d
          l:f32[] = mul g e
          m:f32[] = add_any k l
        in (i, j, m) }
      body_nconsts=2
      cond_jaxpr={ lambda ; n:i32[] o:f32[] p:f32[]. let
          q:bool[] = lt n 3:i32[]
        in (q,) }
      cond_nconsts=0
    ] a 1.0:f32[] 0:i32[] 1.0:f32[] 0.0:f32[]
  in (b, c) }""",
    "linearize_closure": """\
{ lambda ; a:f32[]. let
    _:i32[] _:f32[] = while[
      body_jaxpr={ lambda ; b:f32[] c:i32[] d:f32[]. let
          e:i32[] = add c 1:i32[]
          f:f32[] = mul d b
        in (e, f) }
      body_nconsts=1
      cond_jaxpr={ lambda ; g:i32[] h:f32[]. let
          i:bool[] = lt g 3:i32[]
        in (i,) }
      cond_nconsts=0
    ] a 0:i32[] 1.0:f32[]
    _:i32[] _:f32[] j:f32[] = while[
      body_jaxpr={ lambda ; k:f32[] l:f32[] m:i32[] n:f32[] o:f32[]. let
          p:i32[] = add m 1:i32[]
          q:f32[] = mul n k
          r:f32[] = mul o k
          s:f32[] = mul n l
          t:f32[] = add_any r s
        in (p, q, t) }
      body_nconsts=2
      cond_jaxpr={ lambda ; u:i32[] v:f32[] w:f32[]. let
          x:bool[] = lt u 3:i32[]
        in (x,) }
      cond_nconsts=0
    ] a 1.0:f32[] 0:i32[] 1.0:f32[] 0.0:f32[]
  in (j,) }""",
    "big_body": """\
let jaxpr = { lambda ; a:f32[]. let
    b:f32[] = mul a 0.5:f32[]
    c:f32[] = add b 1.0:f32[]
    d:f32[] = mul c 0.5:f32[]
    e:f32[] = add d 1.0:f32[]
    f:f32[] = mul e 0.5:f32[]
    g:f32[] = add f 1.0:f32[]
    h:f32[] = mul g 0.5:f32[]
    i:f32[] = add h 1.0:f32[]
    j:f32[] = mul i 0.5:f32[]
    k:f32[] = add j 1.0:f32[]
    l:f32[] = mul k 0.5:f32[]
    m:f32[] = add l 1.0:f32[]
    n:f32[] = mul m 0.5:f32[]
    o:f32[] = add n 1.0:f32[]
    p:f32[] = mul o 0.5:f32[]
    q:f32[] = add p 1.0:f32[]
    r:f32[] = mul q 0.5:f32[]
    s:f32[] = add r 1.0:f32[]
    t:f32[] = mul s 0.5:f32[]
    u:f32[] = add t 1.0:f32[]
    v:f32[] = mul u 0.5:f32[]
    w:f32[] = add v 1.0:f32[]
  in (w,) } in
{ lambda ; x:f32[]. let
    y:f32[] = while[
      body_jaxpr=jaxpr
      body_nconsts=0
      cond_jaxpr={ lambda ; z:f32[]. let ba:bool[] = lt z 10.0:f32[] in (ba,) }
      cond_nconsts=0
    ] x
  in (y,) }""",
    "vmap_of_jvp": """\
{ lambda ; a:f32[3]. let
    b:f32[3] = broadcast_in_dim 1.0:f32[]
    c:f32[3] = broadcast_in_dim 0.0:f32[]
    _:i32[] d:f32[3] e:f32[3] = while[
      body_jaxpr={ lambda ; f:f32[3] g:f32[] h:i32[] i:f32[3] j:f32[3]. let
          k:i32[] = add h 1:i32[]
          l:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] i
          m:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] j
          n:f32[3] = mul l f
          o:f32[3] = mul m f
          p:f32[3] = mul l g
          q:f32[3] = add_any o p
        in (k, n, q) }
      body_nconsts=2
      cond_jaxpr={ lambda ; r:i32[] s:f32[3] t:f32[3]. let
          u:bool[] = lt r 3:i32[]
        in (u,) }
      cond_nconsts=0
    ] a 1.0:f32[] 0:i32[] b c
  in (d, e) }""",
    "pytree_forwarded": """\
{ lambda ; a:i32[]. let
    b:i32[] = while[
      body_jaxpr={ lambda ; c:i32[] d:i32[]. let
          e:i32[] = add d 1:i32[]
        in (e,) }
      body_nconsts=1
      cond_jaxpr={ lambda ; f:i32[] g:i32[]. let h:bool[] = lt g f in (h,) }
      cond_nconsts=1
    ] a a 0:i32[]
  in (b, a) }""",
}


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_printed_jaxpr_matches_jax(name):
  closed = _PROGRAMS[name]()
  check_jaxpr(closed)
  assert str(closed) == JAX_JAXPRS[name]


# ------------------------------------------------------- forward-mode AD
def _fd_check(f, x):
  with jax.enable_x64():
    jax.test_util.check_grads(f, (np.asarray(x, np.float64),), order=2, modes=("fwd",),
                              atol=1e-5, rtol=1e-5)


def test_jvp_matches_finite_differences():
  _fd_check(lambda a: _newton_sqrt(a)[0], 2.0)
  _fd_check(_jc, 1.3)                      # tangent through a body constant
  _fd_check(lambda x: lax.while_loop(      # through the carry, data-dependent count
      lambda c: jnp.sum(c) < 50., lambda c: c * c + 1., x), np.array([0.5, 1.5]))


def test_jvp_tangents():
  y, t = jax.jvp(_jc, (2.,), (1.,))        # x**3
  assert (float(y), float(t)) == (8.0, 12.0)
  (i, x), (ti, tx) = jax.jvp(
      lambda x: lax.while_loop(lambda c: c[0] < 3, lambda c: (c[0] + 1, c[1] + x), (0, x)),
      (1.,), (1.,))
  assert (int(i), float(x), float(tx)) == (3, 4.0, 4.0)
  assert ti.dtype == jax.dtypes.float0
  # A constant carry (no tangent flows into it) keeps a zero tangent.
  _, (t0, t1) = jax.jvp(lambda x: lax.while_loop(
      lambda c: c[0] < 3., lambda c: (c[0] + 1., c[1] * x), (0., 1.)), (2.,), (1.,))
  assert (float(t0), float(t1)) == (0.0, 12.0)


def test_linearize_and_jvp_through_jit():
  f = jax.jit(lambda a: _newton_sqrt(a)[0])
  y, f_lin = jax.linearize(f, 2.0)
  np.testing.assert_allclose(float(y), np.sqrt(2.0), rtol=1e-6)
  np.testing.assert_allclose(float(f_lin(1.0)), 0.5 / np.sqrt(2.0), rtol=1e-5)
  y2, t2 = jax.jvp(f, (2.0,), (3.0,))
  assert float(y2) == float(y)
  np.testing.assert_allclose(float(t2), 1.5 / np.sqrt(2.0), rtol=1e-5)
  nested = jax.jit(lambda x: lax.while_loop(lambda c: c[0] < 4, lambda c: (
      c[0] + 1, c[1] + lax.while_loop(lambda d: d[0] < c[0], lambda d: (d[0] + 1, d[1] * x),
                                      (0, 1.))[1]), (0, 0.))[1])
  y, f_lin = jax.linearize(nested, 2.0)     # 1 + x + x**2 + x**3
  assert (float(y), float(f_lin(1.0))) == (15.0, 17.0)
  check_jaxpr(jax.make_jaxpr(lambda x: jax.linearize(nested, x)[1](1.))(2.))


def test_partial_eval_jaxpr_splits_a_known_loop():
  # Known carries get their own loop; a loop whose predicate reads an
  # unknown carry stays whole.
  def f(x, t):
    return lax.while_loop(lambda c: c[0] < 3., lambda c: (c[0] + 1., c[1] * 2. + c[0]), (x, t))
  jaxpr = jax.make_jaxpr(f)(0., 1.).jaxpr
  known, unknown, out_uk, _ = partial_eval_jaxpr(jaxpr, [False, True])
  assert out_uk == [False, True]
  assert [e.primitive.name for e in known.eqns] == ["while"]
  assert len(known.eqns[0].outvars) == 1 and unknown.eqns[0].primitive.name == "while"
  check_jaxpr(known)
  check_jaxpr(unknown)
  known, unknown, out_uk, _ = partial_eval_jaxpr(jaxpr, [True, False])
  assert out_uk == [True, True] and not known.eqns
  check_jaxpr(unknown)


# ----------------------------------------------------------------- vmap
def test_vmap_batched_carry_and_consts():
  def f(x, w):
    return lax.while_loop(lambda c: c[0] < 4, lambda c: (c[0] + 1, c[1] * w + x), (0, x))
  xs = np.arange(6, dtype=F32).reshape(3, 2)
  ws = np.array([0.5, -1.0, 2.0], F32)
  for in_axes in [(0, 0), (0, None), (None, 0), (1, None)]:
    xb = xs.T if in_axes[0] == 1 else xs
    got_i, got = jax.vmap(f, in_axes=in_axes)(xb, ws if in_axes[1] is not None else ws[0])
    size = 2 if in_axes[0] == 1 else 3
    for k in range(size):
      x = xb[:, k] if in_axes[0] == 1 else (xb[k] if in_axes[0] == 0 else xb)
      w = ws[k] if in_axes[1] is not None else ws[0]
      y = x
      for _ in range(4):
        y = y * w + x
      np.testing.assert_allclose(np.asarray(got)[k], y, rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(got_i), 4)


def test_vmap_batched_predicate_lanes_finish_at_different_iterations():
  def f(x, limit):
    return lax.while_loop(lambda c: jnp.sum(c[0]) < limit,
                          lambda c: (c[0] * 2.0 + 1.0, c[1] + 1, c[2] + c[1]),
                          (x, 0, 0.))
  xs = np.array([[0.1, 0.2], [5., 7.], [30., 40.], [0.5, 0.]], F32)
  limits = np.array([10., 50., 60., 1.], F32)
  got = jax.vmap(f)(xs, limits)
  for k in range(len(xs)):
    x, n, s = xs[k], 0, F32(0)
    while np.sum(x) < limits[k]:
      x, n, s = x * F32(2) + F32(1), n + 1, s + F32(n)
    np.testing.assert_allclose(np.asarray(got[0])[k], x, rtol=1e-6)
    assert int(got[1][k]) == n and float(got[2][k]) == s
  assert np.asarray(got[1]).tolist() == [3, 2, 0, 1]   # lane 2 starts done
  np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(f))(xs, limits)[0]),
                             np.asarray(got[0]))


def test_vmap_nested_and_collectives():
  def f(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] + x), (0, x))[1]
  ns = np.array([[1, 2, 3], [0, 4, 1]], np.int32)
  xs = np.arange(6, dtype=F32).reshape(2, 3)
  got = jax.vmap(jax.vmap(f))(ns, xs)
  np.testing.assert_array_equal(np.asarray(got), xs * (ns + 1))
  got = jax.vmap(jax.vmap(f, in_axes=(None, 0)), in_axes=(0, None))(ns[0], xs[0])
  np.testing.assert_array_equal(np.asarray(got), xs[0][None, :] * (ns[0][:, None] + 1))

  # The axis name reaches a collective inside the body.
  def g(x):
    return lax.while_loop(lambda c: c[0] < 2, lambda c: (c[0] + 1, c[1] + lax.psum(c[1], "i")),
                          (0, x))[1]
  x = np.array([1., 2., 3.], F32)
  y = x
  for _ in range(2):
    y = y + y.sum()
  np.testing.assert_array_equal(np.asarray(jax.vmap(g, axis_name="i")(x)), y)


def test_jvp_of_vmap_and_vmap_of_jvp():
  xs = np.array([0.5, 1., 2.], F32)
  p1, t1 = jax.vmap(lambda x: jax.jvp(_jc, (x,), (1.,)))(xs)
  p2, t2 = jax.jvp(jax.vmap(_jc), (xs,), (np.ones(3, F32),))
  np.testing.assert_allclose(np.asarray(p1), xs ** 3, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(t1), 3 * xs ** 2, rtol=1e-6)
  np.testing.assert_array_equal(np.asarray(p1), np.asarray(p2))
  np.testing.assert_array_equal(np.asarray(t1), np.asarray(t2))


# -------------------------------------------------------------- compiled
def test_compiled_matches_interpreted():
  """One IREE module runs every kind of loop: plain, pytree, nested, JVP,
  batched predicate (vmap), nested vmap, zero iterations."""
  def batched(n, x):
    return lax.while_loop(lambda c: c[0] < n, lambda c: (c[0] + 1, c[1] * x + 1.), (0, x))

  def run_all(a, xs, ns, ns2):
    return {
        "newton": _newton_sqrt(a),
        "nested": _nested_counts(ns[2]),
        "jvp": jax.jvp(_jc, (a,), (1.,)),
        "vmap_pred": jax.vmap(batched)(ns, xs),
        "vmap_vmap": jax.vmap(jax.vmap(batched))(ns2, jnp.stack([xs, xs + 1.])),
        "zero_trips": lax.while_loop(lambda c: c[0] < 0, lambda c: (c[0] + 1, c[1] * 2.),
                                     (0, xs)),
        "doubling": jax.vmap(_k)(xs),
    }
  args = (F32(2.0), np.array([0.5, 2.0, 3.0], F32), np.array([0, 3, 5], np.int32),
          np.array([[1, 2, 0], [4, 0, 2]], np.int32))
  text = jax.jit(run_all).lower(*args).as_text()
  assert text.count("stablehlo.while") >= 7
  compiled = jax.jit(run_all).lower(*args).compile()(*args)
  interpreted = run_all(*args)
  assert jax.tree_util.tree_structure(compiled) == jax.tree_util.tree_structure(interpreted)
  for c, i in zip(jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(interpreted)):
    assert np.asarray(c).dtype == np.asarray(i).dtype
    np.testing.assert_allclose(np.asarray(c), np.asarray(i), rtol=1e-6)
