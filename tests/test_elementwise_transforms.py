"""Transformation rules of the elementwise, conversion and special-function
primitives: derivative values at kinks, ties, zeros and infinities, complex
conventions and higher orders (goldens from JAX 0.10.2 in
``tests/data/elementwise_grads_jax.json``), printed JVP/VJP/vmap jaxprs
(``tests/data/elementwise_jaxprs_jax.json``), batching against a Python loop
for every batch-dim placement, float0 tangents, and the derivatives JAX does
not define."""
import itertools
import json
import pathlib
import re

import ml_dtypes
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.primitives.base.structural import add_any_p

DATA = pathlib.Path(__file__).parent / "data"
F32, F64, I32 = np.float32, np.float64, np.int32


# ------------------------------------------------------- values vs JAX
g = jax.grad


def _value_cases():
  F = F64
  return {
      "abs_sq_complex": lambda: g(lambda z: jnp.abs(z) ** 2)(1 + 1j),
      "abs_complex_zero": lambda: g(lambda z: jnp.abs(z))(0j),
      "abs_complex_vec": lambda: g(lambda z: jnp.sum(jnp.abs(z)))(jnp.array([3 + 4j, 0j, -1j])),
      "abs_at_zero": lambda: [g(jnp.abs)(F(0.)), g(jnp.abs)(F(-0.))],
      "holomorphic": lambda: g(
          lambda z: jnp.sqrt(z) * jnp.exp(z) / jnp.log(z) + jnp.tan(z) + jnp.arcsin(z)
          + jnp.arctanh(z) + jnp.arctan(z) + jnp.arccosh(z + 2) + jnp.tanh(z) + lax.logistic(z)
          + jnp.cosh(z) - jnp.sinh(z) + jnp.arcsinh(z) + jnp.cos(z) + lax.rsqrt(z) + jnp.expm1(z)
          + jnp.log1p(z) + jnp.exp2(z) + lax.integer_pow(z, 3) + z ** (0.5 + 0.25j)
          + jnp.arccos(z), holomorphic=True)(0.5 + 0.5j),
      "atan2_complex_parts": lambda: g(lambda x, y: lax.atan2(x, y), argnums=(0, 1))(F(1.), F(2.)),
      "max_min_ties": lambda: [g(lambda x: lax.max(x, F(1.)))(F(1.)),
                               g(lambda x: lax.min(F(1.), x))(F(1.)),
                               g(lambda x: lax.max(x, x))(F(2.))],
      "clamp_ties": lambda: [g(lambda x: lax.clamp(F(0.), x, F(1.)))(F(v))
                             for v in (0., 1., 0.5, -1., 2.)],
      "clamp_bounds": lambda: [g(lambda lo, hi: lax.clamp(lo, F(2.), hi), argnums=(0, 1))(F(a), F(b))
                               for a, b in ((1., 2.), (3., 4.), (1., 3.), (2., 2.))],
      "pow_at_zero": lambda: [g(lambda x: lax.pow(x, F(y)))(F(0.)) for y in (0., 0.5, 1., 2., 3.)],
      "pow_int_at_zero": lambda: [g(lambda x: lax.pow(x, np.int64(y)))(F(0.))
                                  for y in (0, 1, 2, 3, -1)],
      "pow_exponent": lambda: [g(lambda y: lax.pow(F(x), y))(F(2.)) for x in (0., 2., -2.)],
      "pow_negative_base_int": lambda: g(lambda x: lax.pow(x, np.int64(3)))(F(-2.)),
      "sqrt_rsqrt_cbrt": lambda: [g(jnp.sqrt)(F(0.)), g(lax.rsqrt)(F(4.)), g(jnp.cbrt)(F(-8.)),
                                  g(jnp.cbrt)(F(0.))],
      "zero_derivatives": lambda: [g(f)(F(1.3)) for f in (jnp.sign, jnp.floor, jnp.ceil, jnp.round,
                                                         jnp.trunc, jnp.rint)],
      "rem": lambda: [g(lax.rem, argnums=(0, 1))(F(5.5), F(2.)),
                      g(lax.rem, argnums=(0, 1))(F(-5.5), F(2.)),
                      g(jnp.remainder, argnums=(0, 1))(F(-5.5), F(2.))],
      "div": lambda: g(lax.div, argnums=(0, 1))(F(3.), F(2.)),
      "integer_pow": lambda: [g(lambda x: lax.integer_pow(x, y))(F(1.5)) for y in (0, 1, 2, 3, -1, -3)],
      "unary": lambda: [g(f)(F(0.3)) for f in (
          lax.exp, lax.exp2, lax.log, lax.log1p, lax.expm1, lax.tanh, lax.logistic, lax.sin, lax.cos,
          lax.tan, lax.asin, lax.acos, lax.atan, lax.sinh, lax.cosh, lax.asinh, lax.atanh, lax.sqrt,
          lax.rsqrt, lax.cbrt, lax.square)] + [g(lax.acosh)(F(1.3))],
      "accuracy_highest": lambda: [g(lambda x: f(x, accuracy=lax.AccuracyMode.HIGHEST))(F(0.5))
                                   for f in (lax.tanh, lax.logistic, lax.expm1)],
      "special": lambda: [g(lax.lgamma)(F(2.5)), g(lax.digamma)(F(2.5)), g(lax.erf)(F(0.5)),
                          g(lax.erfc)(F(0.5)), g(lax.erf_inv)(F(0.5)), g(lax.bessel_i0e)(F(0.5)),
                          g(lax.bessel_i1e)(F(0.5)), g(lax.bessel_i0e)(F(-0.5)),
                          g(lax.bessel_i1e)(F(0.)), g(lax.bessel_i0e)(F(0.)),
                          g(lambda x: lax.polygamma(F(2.), x))(F(1.5))],
      "igamma": lambda: [g(lax.igamma, argnums=(0, 1))(F(2.5), F(1.5)),
                         g(lax.igammac, argnums=(0, 1))(F(2.5), F(1.5))],
      "betainc_x": lambda: g(lax.betainc, argnums=2)(F(2.), F(3.), F(0.25)),
      "logaddexp": lambda: [g(jnp.logaddexp, argnums=(0, 1))(F(a), F(b)) for a, b in (
          (1., 1.), (1., 3.), (-np.inf, 1.), (np.inf, 1.), (-np.inf, -np.inf))],
      "logaddexp2": lambda: [g(jnp.logaddexp2, argnums=(0, 1))(F(a), F(b))
                             for a, b in ((1., 1.), (1., 3.))],
      "sinc_at_zero": lambda: [g(jnp.sinc)(F(0.)), g(g(jnp.sinc))(F(0.)), g(g(g(jnp.sinc)))(F(0.)),
                               g(g(g(g(jnp.sinc))))(F(0.)), g(jnp.sinc)(F(0.5))],
      "i0": lambda: [g(jnp.i0)(F(0.)), g(jnp.i0)(F(1.)), g(jnp.i0)(F(-2.))],
      "frexp_ldexp": lambda: [g(lambda x: jnp.frexp(x)[0])(F(3.)), g(lambda x: jnp.ldexp(x, 3))(F(1.5))],
      "hypot": lambda: [g(jnp.hypot, argnums=(0, 1))(F(3.), F(4.)),
                        g(jnp.hypot, argnums=(0, 1))(F(3.), F(3.)),
                        g(jnp.hypot, argnums=(0, 1))(F(0.), F(0.))],
      "fmax_copysign": lambda: [g(jnp.fmax, argnums=(0, 1))(F(1.), F(1.)),
                                g(jnp.copysign, argnums=(0, 1))(F(-2.), F(1.))],
      "complex_parts": lambda: [jax.vjp(lax.real, 1. + 2j)[1](F(1.)),
                                jax.vjp(lax.imag, 1. + 2j)[1](F(1.)),
                                jax.vjp(lax.conj, 1. + 2j)[1](1. + 1j),
                                jax.vjp(lax.conj, F(1.))[1](1. + 1j),
                                jax.vjp(lax.complex, F(1.), F(2.))[1](1. + 3j)],
      "convert": lambda: [
          g(lambda x: (x.astype(jnp.int32) * 2).astype(jnp.float64) + x)(F(1.5)),
          jax.vjp(lambda z: lax.convert_element_type(z, jnp.float64), 1. + 2j)[1](F(1.)),
          g(lambda x: jnp.abs(lax.convert_element_type(x, jnp.complex128) * (1 + 1j)))(F(2.))],
      "reduce_precision": lambda: [
          jax.jvp(lambda x: lax.reduce_precision(x, 5, 2), (F(1.0001),), (F(1.1),)),
          jax.vjp(lambda x: lax.reduce_precision(x, 5, 2), F(1.0001))[1](F(1.1))],
      "mul_broadcast_vjp": lambda: jax.vjp(lax.mul, np.ones((1, 3)), np.arange(2.).reshape(2, 1))[1](
          np.arange(6.).reshape(2, 3)),
      "add_sub_rank0_vjp": lambda: [jax.vjp(lax.add, F(1.), np.ones(3))[1](np.arange(3.)),
                                    jax.vjp(lax.sub, np.ones(3), F(1.))[1](np.arange(3.))],
      "select_vjp": lambda: [
          jax.vjp(lambda a, b: lax.select(np.array([True, False]), a, b), np.ones(2), np.ones(2))[1](
              np.array([2., 3.])),
          jax.vjp(lambda a, b, c: lax.select_n(np.array([2, 0, 1], np.int32), a, b, c),
                  np.ones(3), np.ones(3), np.ones(3))[1](np.array([1., 2., 3.]))],
      "mul_out_dtype": lambda: g(lambda x, y: lax.mul(x, y, out_dtype=jnp.float32), argnums=(0, 1))(
          ml_dtypes.bfloat16(2.), ml_dtypes.bfloat16(3.)),
  }


_GRADS_JAX = json.loads((DATA / "elementwise_grads_jax.json").read_text())


def _compare(got, want, where):
  if isinstance(want, list):
    got = list(got)
    assert len(got) == len(want), where
    for i, (a, b) in enumerate(zip(got, want)):
      _compare(a, b, f"{where}[{i}]")
    return
  if want == "float0":
    assert np.asarray(got).dtype == jax.dtypes.float0, where
    return
  a = np.asarray(got)
  assert a.dtype.name == want["dtype"], (where, a.dtype, want["dtype"])
  expected = np.asarray(want["value"], np.float64)
  if a.dtype.kind == "c":
    expected = expected[..., 0] + 1j * expected[..., 1]
  else:
    a = a.astype(np.float64)
  np.testing.assert_allclose(a, expected, rtol=1e-12, atol=1e-14, err_msg=where)


@pytest.mark.parametrize("name", sorted(_GRADS_JAX))
def test_derivative_values_match_jax(name):
  with jax.enable_x64():
    _compare(_value_cases()[name](), _GRADS_JAX[name], name)


def test_abs_squared_of_complex_follows_jax_convention():
  assert complex(jax.grad(lambda z: jnp.abs(z) ** 2)(1 + 1j)) == pytest.approx(2 - 2j)


# ------------------------------------------------------ printed jaxprs
x2 = np.linspace(0.5, 1.5, 6, dtype=F32).reshape(2, 3)
y2 = np.linspace(1.5, 2.5, 6, dtype=F32).reshape(2, 3)
pred = np.array([True, False])


def _vjp_of(f):
  def fn(*args):
    *primals, ct = args
    out, pullback = jax.vjp(f, *primals)
    return (out, *pullback(ct))
  return fn


def _jvp_of(f):
  def fn(*args):
    n = len(args) // 2
    return jax.jvp(f, args[:n], args[n:])
  return fn


x, y = x2, y2
JAXPR_CASES = {
    "jvp_sin": (_jvp_of(lax.sin), (x, y)),
    "jvp_exp2": (_jvp_of(lax.exp2), (x, y)),
    "jvp_tanh": (_jvp_of(lax.tanh), (x, y)),
    "jvp_abs": (_jvp_of(lax.abs), (x, y)),
    "jvp_integer_pow": (_jvp_of(lambda x: lax.integer_pow(x, 3)), (x, y)),
    "jvp_atan2": (_jvp_of(lax.atan2), (x, y, y, x)),
    "jvp_rem": (_jvp_of(lax.rem), (x, y, y, x)),
    "jvp_erf_inv": (_jvp_of(lax.erf_inv), (x / 2, y)),
    "jvp_bessel_i1e": (_jvp_of(lax.bessel_i1e), (x, y)),
    "jvp_igamma": (_jvp_of(lax.igamma), (x, y, y, x)),
    "jvp_add_one_tangent": (lambda a, t: jax.jvp(lambda a: lax.add(a, y2), (a,), (t,)),
                            (F32(1.5), F32(1.))),
    "vjp_max": (_vjp_of(lax.max), (x, y, x)),
    "vjp_clamp": (_vjp_of(lax.clamp), (x, y, x + 1, x)),
    "vjp_pow": (_vjp_of(lax.pow), (x, y, x)),
    "vjp_pow_int": (_vjp_of(lambda x: lax.pow(x, np.int32(3))), (x, x)),
    "vjp_select": (_vjp_of(lambda a, b: lax.select(x2 > 1, a, b)), (x, y, x)),
    "vjp_select_n3": (_vjp_of(lambda a, b, c: lax.select_n(np.array([[0, 1, 2], [2, 1, 0]], I32),
                                                           a, b, c)), (x, y, x, y)),
    "vjp_convert": (_vjp_of(lambda a: lax.convert_element_type(a, np.float16)),
                    (x, x.astype(np.float16))),
    "vjp_complex_abs": (_vjp_of(lambda a, b: lax.abs(lax.complex(a, b))), (x, y, x)),
    "vjp_mul_broadcast": (_vjp_of(lax.mul), (x[:1], y[:, :1], x)),
    "vjp_sub_rank0": (_vjp_of(lax.sub), (F32(1.5), y, x)),
    "vjp_div": (_vjp_of(lax.div), (x, y, x)),
    "vjp_logaddexp": (_vjp_of(jnp.logaddexp), (x, y, x)),
    "vjp_real_imag_conj": (_vjp_of(lambda z: lax.real(lax.conj(z)) + lax.imag(z)),
                           (x.astype(np.complex64), x)),
    "vmap_select_pred_scalar": (jax.vmap(lambda p, x, y: lax.select(p, x, y), (0, None, 0)),
                                (pred, y[0], x)),
    "vmap_select_pred_unbatched": (jax.vmap(lambda p, x, y: lax.select(p, x, y), (None, 1, 0)),
                                   (pred[0], y.T, x)),
    "vmap_select_pred_array": (jax.vmap(lambda p, x, y: lax.select(p, x, y), (1, None, 0)),
                               (x.T > 1, y[0], x)),
    "vmap_select_n3": (jax.vmap(lambda w, a, b, c: lax.select_n(w, a, b, c), (0, 0, None, 1)),
                       (np.array([[0, 1, 2], [2, 1, 0]], I32), x, y[0], x.T)),
    "vmap_clamp_unbatched_bounds": (jax.vmap(lambda x: lax.clamp(F32(1.), x, F32(2.))), (x,)),
    "vmap_clamp_batched_scalar_lo": (jax.vmap(lambda lo, x: lax.clamp(lo, x, F32(2.)), (0, 0)),
                                     (x[:, 0], y)),
    "vmap_clamp_array_bounds": (jax.vmap(lax.clamp, (0, 1, None)), (x.T, x, y[:, 0] + 1)),
    "vmap_clamp_scalar_operand": (jax.vmap(lambda lo, x, hi: lax.clamp(lo, x, hi), (0, None, 0)),
                                  (x, F32(1.5), y)),
    "vmap_add_axes": (jax.vmap(lax.add, (0, 1)), (x, x.T)),
    "vmap_pow": (jax.vmap(lax.pow, (0, None)), (x, F32(1.5))),
    "vmap_igamma": (jax.vmap(lax.igamma, (1, 0)), (x.T, x)),
    "vmap_convert": (jax.vmap(lambda x: lax.convert_element_type(x, np.int32), 1), (x,)),
    "vmap_bitcast_grow": (jax.vmap(lambda x: lax.bitcast_convert_type(x, np.uint8), 1), (x,)),
}
del x, y

_JAXPRS_JAX = json.loads((DATA / "elementwise_jaxprs_jax.json").read_text())
_TOKEN = re.compile(r"(?<![\w.])([a-z]+|_)(?![\w(])")


def _canonical(text: str) -> str:
  """Rename variables in order of appearance (JAX prints unused binders as
  ``_``, each a fresh variable here; some batching dims print as np.int64(k))."""
  text = re.sub(r"np\.int64\((\d+)\)", r"\1", text)
  variables = set(re.findall(r"(?<![\w.])([a-z]+|_):[a-z0-9]+\[", text))
  names: dict = {}

  def rename(m):
    n = m.group(1)
    if n not in variables:
      return n
    key = object() if n == "_" else n
    names.setdefault(key, f"v{len(names) + 1}")
    return names[key]
  return _TOKEN.sub(rename, text)


@pytest.mark.parametrize("name", sorted(JAXPR_CASES))
def test_transformed_jaxpr_matches_jax(name):
  f, args = JAXPR_CASES[name]
  got = str(jax.make_jaxpr(f)(*args))
  assert _canonical(got) == _canonical(_JAXPRS_JAX[name]), got


# -------------------------------------------------- batching vs a loop
def _loop(f, args, in_axes, size):
  outs = []
  for i in range(size):
    outs.append(np.asarray(f(*(a if d is None else np.take(a, i, d) for a, d in zip(args, in_axes)))))
  return np.stack(outs)


def _check_vmap(f, args, in_axes):
  size = next(np.shape(a)[d] for a, d in zip(args, in_axes) if d is not None)
  got = jax.vmap(f, in_axes)(*args)
  np.testing.assert_array_equal(np.asarray(got), _loop(f, args, in_axes, size))


def _batched(shape, d, size, rng, dtype=F32):
  """A sample of logical ``shape`` batched (``size``) at ``d`` (None: not)."""
  full = rng.uniform(-2, 2, (size,) + shape).astype(dtype)
  if d is None:
    return full[0]
  return np.moveaxis(full, 0, d)


def _placements(ranks):
  """Batch-dim choices per operand (None, or an axis of the batched value)
  with at least one operand batched."""
  choices = [[None] + list(range(r + 1)) for r in ranks]
  return [d for d in itertools.product(*choices) if any(v is not None for v in d)]


@pytest.mark.parametrize("pred_rank, dims", [(r, d) for r in (0, 1) for d in _placements((r, 1, 1))])
def test_select_n_batching_matches_loop(pred_rank, dims):
  pd, ad, bd = dims
  rng = np.random.default_rng(0)
  which = _batched((3,) if pred_rank else (), pd, 4, rng) > 0
  a, b = _batched((3,), ad, 4, rng), _batched((3,), bd, 4, rng)
  _check_vmap(lax.select, (which, a, b), dims)


@pytest.mark.parametrize("bound_rank, dims", [(r, d) for r in (0, 1) for d in _placements((r, 1, r))])
def test_clamp_batching_matches_loop(bound_rank, dims):
  ld, xd, hd = dims
  rng = np.random.default_rng(1)
  bshape = (3,) if bound_rank else ()
  lo = _batched(bshape, ld, 4, rng) - 1
  hi = _batched(bshape, hd, 4, rng) + 1
  _check_vmap(lax.clamp, (lo, _batched((3,), xd, 4, rng) * 2, hi), dims)


def test_clamp_batching_with_a_scalar_operand():
  rng = np.random.default_rng(2)
  lo, hi = rng.uniform(-2, 0, (4, 3)).astype(F32), rng.uniform(0, 2, (4, 3)).astype(F32)
  # (bounds batched as scalars beside an unbatched scalar operand)
  _check_vmap(lax.clamp, (lo[:, 0], F32(0.5), hi[:, 0]), (0, None, 0))
  _check_vmap(lax.clamp, (lo[:, 0], F32(0.5), F32(1.)), (0, None, None))


@pytest.mark.parametrize("in_axes", [(0, 0), (0, 1), (1, 0), (None, 1), (1, None), (None, 0)])
def test_add_any_batching_matches_loop(in_axes):
  rng = np.random.default_rng(3)
  a, b = (_batched((3, 2), d, 4, rng) for d in in_axes)
  _check_vmap(lambda u, v: add_any_p.bind1(u, v), (a, b), in_axes)


@pytest.mark.parametrize("in_axes", [0, 1, 2])
def test_bitcast_batching_on_every_axis(in_axes):
  rng = np.random.default_rng(4)
  u8 = rng.integers(0, 256, (4, 4, 4)).astype(np.uint8)           # shrinks to int32
  _check_vmap(lambda v: lax.bitcast_convert_type(v, np.int32), (u8,), (in_axes,))
  f32 = rng.uniform(-2, 2, (4, 3, 2)).astype(F32)                 # grows to uint8
  _check_vmap(lambda v: lax.bitcast_convert_type(v, np.uint8), (f32,), (in_axes,))


@pytest.mark.parametrize("fn, args, in_axes", [
    (lambda x: lax.integer_pow(x, 3), (np.ones((2, 3), F32) * 1.5,), (1,)),
    (lambda x: lax.convert_element_type(x, np.int32), (np.ones((2, 3), F32) * 2.5,), (1,)),
    (lambda x: lax.reduce_precision(x, 5, 2), (np.linspace(0, 1, 6, dtype=F32).reshape(2, 3),),
     (1,)),
    (lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
     (np.linspace(0, 3, 6, dtype=F32).reshape(2, 3),), (1,)),
    (lax.conj, (np.ones((2, 3), F32),), (1,)),
    (lambda m, x: lax.polygamma(m, x), (np.ones((2, 3), F32), np.full((3,), 1.5, F32)), (0, None)),
    (lax.betainc, (np.full((3,), 2, F32), np.full((2, 3), 3, F32), np.full((3, 2), 0.3, F32)),
     (None, 0, 1)),
])
def test_other_batching_rules(fn, args, in_axes):
  _check_vmap(fn, args, in_axes)


def test_vmap_of_grad_and_grad_of_vmap():
  xs = np.linspace(0.5, 1.5, 4, dtype=F32)
  f = lambda v: lax.sin(v) * lax.exp(v) + lax.max(v, F32(1.))  # noqa: E731
  per_example = np.stack([np.asarray(jax.grad(f)(v)) for v in xs])
  np.testing.assert_allclose(np.asarray(jax.vmap(jax.grad(f))(xs)), per_example, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(jax.grad(lambda v: jnp.sum(jax.vmap(f)(v)))(xs)),
                             per_example, rtol=1e-6)
  np.testing.assert_allclose(np.asarray(jax.jit(jax.vmap(jax.grad(f)))(xs)), per_example,
                             rtol=1e-6)


# ------------------------------------------------------ float0 tangents
def test_integer_inputs_and_conversions_have_float0_or_zero_derivatives():
  _, pullback = jax.vjp(lambda v, i: v * i, F32(1.), 2)
  ct_v, ct_i = pullback(F32(1.))
  assert float(ct_v) == 2.0 and np.asarray(ct_i).dtype == jax.dtypes.float0
  out, tangent = jax.jvp(lambda i: i * 3, (2,), (np.zeros((), jax.dtypes.float0),))
  assert int(out) == 6 and np.asarray(tangent).dtype == jax.dtypes.float0
  assert float(jax.grad(lambda v: lax.convert_element_type(v, np.int32).astype(F32) * v)(F32(2.5))) \
      == 2.0
  assert float(jax.grad(jax.jit(lambda v, i: v * i))(F32(1.), 2)) == 2.0


# ------------------------------------------ derivatives JAX does not define
def test_derivatives_jax_does_not_define():
  with pytest.raises(NotImplementedError, match="Differentiation rule for 'zeta' not implemented"):
    jax.grad(lax.zeta)(F32(3.), F32(2.))
  with pytest.raises(NotImplementedError, match="igamma_grad_a"):
    jax.grad(lax.igamma_grad_a)(F32(3.), F32(2.))
  with pytest.raises(NotImplementedError, match="random_gamma_grad"):
    jax.grad(lax.random_gamma_grad)(F32(3.), F32(2.))
  with pytest.raises(ValueError, match="polygamma gradient with respect to m is not supported"):
    jax.grad(lax.polygamma)(F32(1.), F32(2.))
  with pytest.raises(ValueError, match="Betainc gradient with respect to a and b not supported."):
    jax.grad(lax.betainc)(F32(1.), F32(2.), F32(0.5))


def test_igamma_first_derivative_in_a_matches_finite_differences():
  with jax.enable_x64():
    for f in (lax.igamma, lax.igammac):
      jax.test_util.check_grads(f, (np.array([0.7, 2.5, 6.0]), np.array([0.4, 1.5, 9.0])),
                                order=1, modes=("fwd", "rev"), atol=1e-5, rtol=1e-5)


def test_reduce_precision_is_linear_in_its_tangent():
  t = np.array([1.0001, 3.14159, -2.71828], F32)
  _, tangent = jax.jvp(lambda v: lax.reduce_precision(v, 8, 7), (t,), (t,))
  np.testing.assert_array_equal(np.asarray(tangent), np.asarray(lax.reduce_precision(t, 8, 7)))
  (ct,) = jax.vjp(lambda v: lax.reduce_precision(v, 8, 7), t)[1](t)
  np.testing.assert_array_equal(np.asarray(ct), np.asarray(lax.reduce_precision(t, 8, 7)))


def test_nonlinear_transposes_raise():
  from openjax._src.primitives.base.ad_util import UndefinedPrimal
  from openjax._src.core import ShapedArray
  a = UndefinedPrimal(ShapedArray((), np.dtype(F32)))
  with pytest.raises(NotImplementedError, match="not linear"):
    lax.mul_p.transpose([np.float32(1)], a, a, out_dtype=None)
  with pytest.raises(NotImplementedError, match="not linear"):
    lax.div_p.transpose([np.float32(1)], np.float32(1), a)
