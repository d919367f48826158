"""jax.random against JAX 0.10.2: stored JAX values (tests/data/random_fixtures.json,
made by tools/gen_random_fixtures.py), typed keys, errors, transformations
and the unrolled threefry lowering."""
import base64
import json
import os
import re
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.core import check_jaxpr
from openjax._src.primitives.random_bits.random_bits import (
    random_bits, random_fold_in, random_seed, random_split, threefry2x32)
from openjax._src.control.random_loops import random_gamma

_DATA = os.path.join(os.path.dirname(__file__), "data", "random_fixtures.json")
with open(_DATA) as _f:
  FIXTURES = json.load(_f)

NS = {"jax": jax, "jnp": jnp, "np": np}

# Distance in units in the last place allowed against JAX's floats: 2 (DESIGN
# decision 12: keys, bits and integer/boolean samples are JAX's bits; float
# samples agree within 2 ulps). The samplers' exp, log, log1p and pow are
# NumPy's when interpreted (up to 3 ulps from correctly rounded for float32
# log), IREE's when compiled, XLA:CPU's in JAX, and XLA and IREE fuse a*b + c
# into one multiply-add where the interpreter rounds twice. Listed: the
# fixtures where a sampler's own arithmetic magnifies such a last-bit
# difference, with the worst distance measured (interpreted, compiled):
# - a result near a zero of the transform or after a cancellation (gumbel
#   -log(-log u) near u = 1/e, logistic, generalized_normal, loggamma near 0,
#   wald's quadratic formula, uniform with inexact bounds near 0, pareto,
#   truncated_normal's erf/erf_inv round trip);
# - gamma compositions: Marsaglia-Tsang's d v^3 u^(1/a) (v = 1 + x c cubed),
#   chisquare, beta and dirichlet's normalisation, f's ratio;
# - gradients of gamma samples (the implicit derivative -dP/da / density
#   divides two such values): grad_beta, grad_dirichlet, grad_loggamma,
#   jacfwd_gamma, grad_truncated_normal;
# - normal: Giles' erf_inv polynomial in float32 (3 ulps once in 5000);
# - linear algebra: eigh and QR are LAPACK's in JAX, NumPy's here.
ULPS_INTERPRETED = {
    "beta": 3, "chisquare": 4, "dirichlet": 18, "f": 6, "gamma": 3, "gamma_f16": 3,
    "gamma_f64_x64": 3, "generalized_normal": 10, "grad_beta": 16, "grad_dirichlet": 6,
    "grad_loggamma": 8, "gumbel": 16, "gumbel_high": 5, "gumbel_highest": 5, "jacfwd_gamma": 3,
    "loggamma": 16, "multivariate_normal_eigh": 7, "orthogonal": 6, "pareto": 3,
    "truncated_normal": 4, "uniform_minmax": 7, "vmap_gamma_alpha": 7, "wald": 19,
}
ULPS_COMPILED = {
    "dirichlet": 3, "f": 6, "gamma_f64_x64": 3, "gamma_shape": 3, "generalized_normal": 6,
    "grad_dirichlet": 6, "grad_truncated_normal": 3, "gumbel": 16, "gumbel_high": 3,
    "jacfwd_gamma": 4, "logistic": 3, "multivariate_normal_eigh": 4, "orthogonal": 3,
    "seed002_X": 3,
}
DEFAULT_ULPS = 2


def _decode(r):
  dtype = jnp.dtype(r["dtype"]) if r["dtype"] == "bfloat16" else np.dtype(r["dtype"])
  return np.frombuffer(base64.b64decode(r["data"]), dtype=dtype).reshape(r["shape"])


def _ulps(a: np.ndarray, b: np.ndarray) -> int:
  if a.size == 0:
    return 0
  if a.dtype.kind == "c":
    return max(_ulps(a.real, b.real), _ulps(a.imag, b.imag))
  bits = 8 * a.dtype.itemsize
  it = {16: np.int16, 32: np.int32, 64: np.int64}[bits]

  def ordered(x):   # float bits as integers ordered like the floats
    i = x.view(it).astype(np.int64)
    return np.where(i < 0, -(i & ((1 << (bits - 1)) - 1)), i)
  same = (a == b) | (np.isnan(a.astype(np.float64)) & np.isnan(b.astype(np.float64)))
  d = np.abs(ordered(a) - ordered(b))
  return int(np.where(same, 0, d).max())


# JAX's QR is LAPACK's float32 sgeqrf/sorgqr (scipy's reproduces the fixture
# bit for bit); openjax's eager QR is numpy.linalg.qr, whose rounding differs
# by ~135 ulps for PRNGKey(42)'s 3x3 draw (PRNGKey(0)'s is within tolerance).
LAPACK_QR_ROUNDING = {("orthogonal", 1)}


def _params():
  out = []
  for section in ("x32", "x64"):
    for name, case in sorted(FIXTURES[section].items()):
      for i, c in enumerate(case["cases"]):
        marks = ([pytest.mark.xfail(strict=True, reason="numpy.linalg.qr vs LAPACK sgeqrf rounding")]
                 if (name, i) in LAPACK_QR_ROUNDING else [])
        out.append(pytest.param(section, name, i, id=f"{name}-{i}", marks=marks))
  return out


def _check(section, name, i, wrap, ulps_table):
  case = FIXTURES[section][name]
  c = case["cases"][i]
  expected = _decode(c["result"])
  with jax.enable_x64(section == "x64"), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    key = eval(c["key"], NS)  # noqa: S307 - expressions from our fixture file
    fn = eval(case["fn"], NS)  # noqa: S307
    try:
      got = wrap(fn)(key)
    except NotImplementedError as e:
      if "jax.numpy.linalg" in str(e):
        pytest.skip(str(e))
      raise
  got = jax.tree_util.tree_leaves(got)
  got = np.stack([np.asarray(g) for g in got]) if len(got) > 1 else np.asarray(got[0])
  assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
  assert got.shape == expected.shape, (got.shape, expected.shape)
  if expected.dtype.kind in "fc" or expected.dtype == jnp.bfloat16:
    ulps = _ulps(got, expected)
    allowed = ulps_table.get(name, DEFAULT_ULPS)
    assert ulps <= allowed, f"{name}: {ulps} ULPs from JAX\n{got}\n{expected}"
  else:
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("section,name,i", _params())
def test_matches_jax(section, name, i):
  _check(section, name, i, lambda f: f, ULPS_INTERPRETED)


_JIT_NAMES = ("split", "fold_in", "bits_u32", "bits_u8", "uniform", "uniform_bf16", "normal",
              "randint", "randint_uint8", "bernoulli", "categorical", "choice_p",
              "permutation_axis", "gamma", "poisson", "binomial", "multinomial", "dirichlet",
              "vmap_poisson_keys", "grad_gamma", "bits_u64_x64", "uniform_f64_x64",
              "randint_i64_x64")


@pytest.mark.parametrize("section,name,i", [p for p in _params()
                                            if p.values[1] in _JIT_NAMES])
def test_matches_jax_under_jit(section, name, i):
  _check(section, name, i, jax.jit, ULPS_INTERPRETED)


_IREE_NAMES = ("split", "fold_in", "bits_u32", "bits_u8", "uniform", "uniform_minmax",
               "uniform_bf16", "normal", "normal_f16", "randint", "randint_uint8", "bernoulli",
               "categorical", "choice_p", "permutation_axis", "cauchy", "exponential", "gamma",
               "loggamma", "poisson", "binomial", "multinomial", "dirichlet", "t",
               "vmap_poisson_keys", "vmap_gamma_alpha", "grad_normal_loc_scale",
               "grad_uniform_bounds", "bits_u64_x64", "uniform_f64_x64", "normal_f64_x64",
               "randint_i64_x64", "gamma_f64_x64", "gumbel", "logistic", "f", "wald", "pareto")


@pytest.mark.parametrize("section,name,i", [p for p in _params()
                                            if p.values[1] in _IREE_NAMES])
def test_matches_jax_compiled(section, name, i):
  with jax.config.override("openjax_executor", "iree"):
    _check(section, name, i, jax.jit, ULPS_COMPILED)


# ------------------------------------------------------------ typed keys
def test_typed_key_basics():
  k = jax.random.key(0)
  assert k.shape == () and k.ndim == 0 and k.size == 1
  assert str(k.dtype) == "key<fry>" and k.dtype.name == "key<fry>" and k.dtype.itemsize == 8
  assert k.dtype == jax.random.key_dtype() == jax.random.key_dtype("threefry2x32")
  assert repr(k) == "Array((), dtype=key<fry>) overlaying:\n[0 0]"
  assert jax.random.key_impl(k) == "threefry2x32"
  assert jax.random.key_impl(jax.random.PRNGKey(0)) == "threefry2x32"
  np.testing.assert_array_equal(jax.random.key_data(k), [0, 0])
  ks = jax.random.split(k, 4)
  assert ks.shape == (4,) and ks.reshape(2, 2).shape == (2, 2) and ks.T.shape == (4,)
  assert len(ks) == 4 and len(list(ks)) == 4
  np.testing.assert_array_equal(jax.random.key_data(ks[1]), jax.random.key_data(list(ks)[1]))
  assert ks[1:].shape == (3,) and ks[..., 0].shape == ()
  np.testing.assert_array_equal(np.asarray(ks == ks), [True] * 4)
  assert bool((ks[0] != ks[1]))
  w = jax.random.wrap_key_data(jax.random.key_data(ks))
  np.testing.assert_array_equal(np.asarray(w == ks), [True] * 4)
  np.testing.assert_array_equal(jax.random.key_data(jax.random.clone(k)), [0, 0])
  # typed and raw keys give the same numbers
  np.testing.assert_array_equal(jax.random.uniform(jax.random.key(5), (3,)),
                                jax.random.uniform(jax.random.PRNGKey(5), (3,)))
  k1, k2 = jax.random.split(jax.random.key(3))
  assert isinstance(k1, type(k))


def test_typed_keys_are_arrays_with_an_extended_dtype():
  k = jax.random.key(0)
  assert isinstance(k, jax.Array) and issubclass(type(k), jax.Array)
  assert not isinstance(k.dtype, np.dtype) and k.dtype.type is jax.dtypes.prng_key
  assert jnp.issubdtype(k.dtype, jax.dtypes.prng_key)
  assert jnp.issubdtype(k.dtype, jax.dtypes.extended)
  assert jax.dtypes.issubdtype(k.dtype, np.generic)
  assert not jnp.issubdtype(k.dtype, np.integer)
  assert jnp.issubdtype(k.dtype, jax.random.key_dtype())
  assert not jnp.issubdtype(jax.random.PRNGKey(0).dtype, jax.dtypes.prng_key)
  assert not jnp.issubdtype(np.float32, jax.dtypes.extended)
  assert jnp.issubdtype(jax.dtypes.prng_key, jax.dtypes.extended)
  assert k.is_fully_addressable and k.is_fully_replicated
  with pytest.raises(TypeError, match="expected key_data.ndim >= 1; got ndim=0"):
    jax.random.wrap_key_data(k)
  # under jit the key is still a jax.Array
  seen = []
  jax.jit(lambda kk: seen.append(isinstance(kk, jax.Array)) or jax.random.key_data(kk))(k)
  assert seen == [True]


def test_typed_key_errors():
  k = jax.random.key(0)
  with pytest.raises(TypeError, match="len\\(\\) of unsized object"):
    len(k)
  with pytest.raises(TypeError, match="iteration over a 0-d key array"):
    iter(k)
  with pytest.raises(TypeError, match="key array cannot be converted to boolean"):
    bool(k)
  with pytest.raises(IndexError, match="Too many indices: array is 0-dimensional"):
    k[0]
  with pytest.raises(TypeError, match="cannot be converted to a NumPy array"):
    np.asarray(k)
  with pytest.raises(TypeError, match="key accepts a scalar seed, but was given a PRNG key"):
    jax.random.key(k)
  for expr, msg in [
      (lambda: k + 1, "add does not accept dtypes key<fry>, int32."),
      (lambda: 1 + k, "add does not accept dtypes int32, key<fry>."),
      (lambda: k * 2.0, "multiply does not accept dtypes key<fry>, float32."),
      (lambda: k / 2, "true_divide does not accept dtypes key<fry>, int32."),
      (lambda: k & 1, "bitwise_and does not accept dtypes key<fry>, int32."),
      (lambda: k > 1, "greater does not accept dtypes key<fry>, int32."),
      (lambda: k < k, "lt does not accept dtype key<fry> at position 0. Accepted dtypes at "
                      "position 0 are subtypes of integer, floating, bool."),
      (lambda: -k, "neg does not accept dtype key<fry>. Accepted dtypes are subtypes of "
                   "integer, floating, complexfloating."),
      (lambda: abs(k), "abs does not accept dtype key<fry>. Accepted dtypes are subtypes of "
                       "floating, complexfloating, signedinteger.")]:
    with pytest.raises(TypeError) as info:
      expr()
    assert str(info.value) == msg


def test_typed_keys_through_jit_vmap_and_pytrees():
  k = jax.random.key(11)
  f = jax.jit(lambda k: jax.random.split(k, 3))
  out = f(k)
  assert out.shape == (3,) and str(out.dtype) == "key<fry>"
  np.testing.assert_array_equal(jax.random.key_data(out),
                                jax.random.key_data(jax.random.split(k, 3)))
  keys = jax.random.split(k, 5)
  vm = jax.vmap(lambda kk: jax.random.normal(kk, (2,)))(keys)
  loop = np.stack([np.asarray(jax.random.normal(kk, (2,))) for kk in keys])
  np.testing.assert_array_equal(vm, loop)
  vk = jax.vmap(lambda kk: jax.random.fold_in(kk, 3))(keys)
  assert vk.shape == (5,)
  assert len(jax.tree_util.tree_leaves(keys)) == 1


# ------------------------------------------------------------- errors
@pytest.mark.parametrize("fn,exc,msg", [
    (lambda k: jax.random.normal(k, (3,), jnp.int32), ValueError,
     "dtype argument to `normal` must be a float or complex dtype, got int32"),
    (lambda k: jax.random.uniform(k, dtype=jnp.int32), ValueError,
     "dtype argument to `uniform` must be a float dtype, got int32"),
    (lambda k: jax.random.randint(k, (3,), 0, 5, jnp.float32), TypeError,
     "randint only accepts integer dtypes, got float32"),
    (lambda k: jax.random.bits(k, dtype=jnp.int32), ValueError,
     "dtype argument to `bits` must be an unsigned int dtype, got int32"),
    (lambda k: jax.random.normal(k, (3.0,)), TypeError,
     "Shapes must be 1D sequences of concrete values of integer type, got \\(3.0,\\)."),
    (lambda k: jax.random.bernoulli(k, 1, (2,)), TypeError,
     "bernoulli probability `p` must have a floating dtype, got int32."),
    (lambda k: jax.random.choice(k, 3, (5,), replace=False), ValueError,
     "Cannot take a larger sample \\(size 5\\) than population \\(size 3\\)"),
    (lambda k: jax.random.choice(k, 3, 5), TypeError,
     "shape argument of jax.random.choice must be a sequence, got 5"),
    (lambda k: jax.random.split(jax.random.split(k)), ValueError,
     "split accepts a single key, but was given a key array of shape \\(2, 2\\) != \\(\\)"),
    (lambda k: jax.random.categorical(k, jnp.zeros(3), shape=(2, 2), replace=False),
     ValueError, "Number of samples without replacement \\(4\\) cannot exceed"),
    (lambda k: jax.random.permutation(k, 2.5), TypeError,
     "x must be an integer or at least 1-dimensional"),
    (lambda k: jax.random.gumbel(k, (2,), mode="x"), ValueError,
     "Must provide valid mode for gumbel got: x"),
    (lambda k: jax.random.bernoulli(k, 0.5, mode="x"), ValueError,
     "got mode='x', expected 'high' or 'low'"),
    (lambda k: jax.random.multivariate_normal(k, jnp.zeros(2), jnp.eye(2), method="x"),
     ValueError, "method must be one of"),
    (lambda k: jax.random.dirichlet(k, 1.0), ValueError,
     "dirichlet requires alpha.ndim >= 1, got alpha.ndim == 0"),
    (lambda k: jax.random.pareto(k, np.float64(2.0), (2,), jnp.float16), ValueError,
     "In arguments to pareto, cannot safely cast argument of type float32 to float16"),
    (lambda k: jax.random.fold_in(k, np.arange(2)), TypeError,
     "fold_in accepts a scalar, but was given an array ofshape \\(2,\\)"),
    (lambda k: jax.random.uniform(k, (3,), minval=jnp.zeros(4)), TypeError, "shapes"),
])
def test_errors_match_jax(fn, exc, msg):
  with pytest.raises(exc, match=msg):
    fn(jax.random.PRNGKey(0))


@pytest.mark.parametrize("bad,msg", [
    (np.zeros(2, np.int32), "expected key_data.dtype = uint32; got dtype=int32"),
    (np.zeros(3, np.uint32), "expected key_data.shape to end with \\(2,\\); got shape=\\(3,\\)"),
    (np.zeros((), np.uint32), "expected key_data.ndim >= 1; got ndim=0"),
    ("x", "expected key_data to have ndim, shape, and dtype attributes"),
])
def test_invalid_keys(bad, msg):
  with pytest.raises(TypeError, match=msg):
    jax.random.normal(bad)


def test_seed_errors():
  with pytest.raises(TypeError, match="PRNG key seed must be an integer"):
    jax.random.PRNGKey(1.5)
  with pytest.raises(TypeError, match="PRNGKey accepts a scalar seed, but was given an array"):
    jax.random.PRNGKey(np.zeros(2, np.int32))
  with pytest.raises(OverflowError):
    jax.random.PRNGKey(2 ** 64)
  np.testing.assert_array_equal(jax.random.PRNGKey(True), [0, 1])


def test_x32_truncation_warns():
  with pytest.warns(UserWarning, match="Explicitly requested dtype float64"):
    out = jax.random.uniform(jax.random.PRNGKey(0), dtype=jnp.float64)
  assert out.dtype == np.float32
  with pytest.warns(UserWarning, match="Explicitly requested dtype uint64"):
    out = jax.random.bits(jax.random.PRNGKey(0), dtype=jnp.uint64)
  assert out.dtype == np.uint32


# ---------------------------------------------------- transformations
def test_jaxpr_follows_jax():
  k = jax.random.PRNGKey(0)
  jaxpr = jax.make_jaxpr(lambda k: jax.random.normal(k, (3,)))(k)
  check_jaxpr(jaxpr.jaxpr)
  text = str(jaxpr)
  for piece in ("name=_normal", "name=_normal_real", "name=_uniform",
                "random_bits[bit_width=32 shape=(3,)]", "shift_right_logical f 9:u32[]",
                "or g 1065353216:u32[]", "erf_inv", "mul 1.4142135381698608:f32[]"):
    assert piece in text, piece
  text = str(jax.make_jaxpr(lambda s: jax.random.PRNGKey(s))(3))
  assert "random_seed[impl=fry]" in text
  text = str(jax.make_jaxpr(lambda k: jax.random.split(k))(k))
  assert "random_split[shape=(2,)]" in text
  text = str(jax.make_jaxpr(lambda k: jax.random.fold_in(k, 3))(k))
  assert "random_fold_in" in text
  text = str(jax.make_jaxpr(lambda k: jax.random.gamma(k, 2.0, (3,)))(k))
  assert "name=_gamma" in text and "random_gamma[log_space=False]" in text


def test_vmap_over_keys_and_parameters():
  keys = jax.random.split(jax.random.PRNGKey(1), 4)
  # keys batched along axis 1 of the raw data
  got = jax.vmap(lambda k: jax.random.uniform(k, (3,)), in_axes=1)(keys.T)
  np.testing.assert_array_equal(got, jax.vmap(lambda k: jax.random.uniform(k, (3,)))(keys))
  # parameters batched, key shared
  k = jax.random.PRNGKey(2)
  lam = jnp.array([0.5, 4., 30.])
  got = jax.vmap(lambda l: jax.random.poisson(k, l, (5,)))(lam)
  loop = np.stack([np.asarray(jax.random.poisson(k, l, (5,))) for l in lam])
  np.testing.assert_array_equal(got, loop)
  n = jnp.array([3., 40., 500.])
  got = jax.vmap(lambda c: jax.random.binomial(k, c, 0.3, (4,)))(n)
  loop = np.stack([np.asarray(jax.random.binomial(k, c, 0.3, (4,))) for c in n])
  np.testing.assert_array_equal(got, loop)
  lo = jnp.array([0., 1., -2.])
  got = jax.vmap(lambda m: jax.random.uniform(k, (2,), minval=m, maxval=5.))(lo)
  loop = np.stack([np.asarray(jax.random.uniform(k, (2,), minval=m, maxval=5.)) for m in lo])
  np.testing.assert_array_equal(got, loop)
  # both batched, nested, under jit
  f = jax.jit(jax.vmap(jax.vmap(lambda kk, a: jax.random.gamma(kk, a, (2,)))))
  kk = jax.random.split(k, (2, 3))
  a = jnp.arange(1., 7.).reshape(2, 3)
  got = f(kk, a)
  loop = np.stack([np.stack([np.asarray(jax.random.gamma(kk[i, j], a[i, j], (2,)))
                             for j in range(3)]) for i in range(2)])
  np.testing.assert_array_equal(got, loop)


def test_grad_location_scale_and_gamma():
  k = jax.random.PRNGKey(0)
  g = jax.grad(lambda m, s: (m + s * jax.random.normal(k, (5,))).sum(), argnums=(0, 1))(1., 2.)
  np.testing.assert_allclose(g[0], 5.0)
  np.testing.assert_allclose(g[1], np.asarray(jax.random.normal(k, (5,))).sum(), rtol=1e-6)
  # gamma's implicit gradient matches finite differences through the same key
  # loosely (float32 differences of a rejection sampler; JAX's own gradient,
  # 2.844253, is as far from them), and JAX's value exactly
  f = lambda a: jax.random.gamma(k, a, (3,)).sum()  # noqa: E731
  h = 1e-2
  fd = (f(3.0 + h) - f(3.0 - h)) / (2 * h)
  np.testing.assert_allclose(jax.grad(f)(3.0), fd, rtol=1e-2)
  assert float(jax.grad(f)(3.0)) == np.float32(2.844253)
  np.testing.assert_allclose(jax.lax.random_gamma_grad(np.float32(1), np.float32(2)),
                             1.6316915, rtol=1e-6)
  # integer-valued samplers have zero (float0) tangents and do not break grad
  g = jax.grad(lambda x: x * jax.random.poisson(k, 3.0).astype(jnp.float32))(2.0)
  np.testing.assert_allclose(g, float(jax.random.poisson(k, 3.0)))


# ------------------------------------------------------------ lowering
def test_threefry_lowering_is_unrolled_and_exact():
  k = np.array([0, 42], np.uint32)
  f = jax.jit(lambda k: random_bits(k, 32, (4, 5)))
  text = f.lower(k).as_text()
  assert "stablehlo.while" not in text
  for r in (13, 15, 26, 6, 17, 29, 16, 24):
    assert f"dense<{r}>" in text
  with jax.config.override("openjax_executor", "iree"):
    ks = np.stack([k, k + 1])
    for fn, args in [
        (lambda k: random_bits(k, 32, (4, 5)), (k,)),
        (lambda k: random_bits(k, 8, (3,)), (ks,)),
        (lambda k: random_bits(k, 16, ()), (ks,)),
        (lambda k: random_split(k, (2, 3)), (ks,)),
        (lambda k, m: random_fold_in(k, m), (ks, np.array([3, 9], np.uint32))),
        (lambda s: random_seed(s), (np.array([-3, 7], np.int32),)),
        (lambda a, b, c, d: tuple(threefry2x32(a, b, c, d)),
         (np.uint32(1), np.uint32(2), np.arange(6, dtype=np.uint32),
          np.arange(6, dtype=np.uint32) * 7)),
    ]:
      compiled = jax.jit(fn)(*args)
      with jax.disable_jit():
        eager = fn(*args)
      for c, e in zip(jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(eager)):
        np.testing.assert_array_equal(np.asarray(c), np.asarray(e))


def test_threefry_lowering_64_bit_paths():
  with jax.enable_x64(), jax.config.override("openjax_executor", "iree"):
    k = np.array([7, 8], np.uint32)
    np.testing.assert_array_equal(jax.jit(lambda k: random_bits(k, 64, (5,)))(k),
                                  random_bits(k, 64, (5,)))
    s = np.array([-5, 2 ** 40 + 3], np.int64)
    np.testing.assert_array_equal(jax.jit(random_seed)(s), random_seed(s))


# -------------------------------------------- erf_inv and the gamma derivatives
_KERNELS = {"erf_inv": jax.lax.erf_inv, "random_gamma_grad": jax.lax.random_gamma_grad,
            "igamma_grad_a": jax.lax.igamma_grad_a}
# Relative distance from jaxlib's values allowed (same algorithms, other
# roundings): erf_inv is Giles' polynomial (float32: ~2 ulps); the gamma
# derivatives sum a series or a continued fraction whose terms cancel near
# a ~ x for large a (igamma_grad_a at a = 138, x = 136: 1.2e-4 apart,
# JAX's float32 value is no closer to the exact one).
_KERNEL_RTOL = {("erf_inv", np.float32): 2.5e-7, ("erf_inv", np.float64): 5e-15,
                ("random_gamma_grad", np.float32): 1e-5,
                ("random_gamma_grad", np.float64): 5e-14,
                ("igamma_grad_a", np.float32): 2e-4}


def _kernel_cases():
  for name, case in sorted(FIXTURES["kernels"].items()):
    yield name, _KERNELS[name.rsplit("_", 1)[0]], [_decode(a) for a in case["args"]], \
        _decode(case["result"])


def _assert_close_to_jax(got, want, name, what):
  got = np.asarray(got)
  assert got.dtype == want.dtype and got.shape == want.shape, what
  np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
  np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)], err_msg=what)
  finite = np.isfinite(want)
  # XLA:CPU flushes subnormal results to zero, NumPy and IREE keep them.
  np.testing.assert_allclose(got[finite], want[finite],
                             rtol=_KERNEL_RTOL[name.rsplit("_", 1)[0], want.dtype.type],
                             atol=np.finfo(want.dtype).tiny, err_msg=what)


def test_kernels_match_jax():
  # erf_inv (float32 and float64) and the gamma derivatives on arguments
  # covering every branch, against the values jaxlib computed
  for name, fn, args, want in _kernel_cases():
    with jax.enable_x64(want.dtype == np.float64):
      _assert_close_to_jax(fn(*args), want, name, name)


def test_kernels_compiled_match_jax():
  # one module per precision (compiles cost seconds)
  cases = list(_kernel_cases())
  for x64 in (False, True):
    group = [c for c in cases if (c[3].dtype == np.float64) == x64]
    fns = [fn for _, fn, _, _ in group]
    with jax.config.override("openjax_executor", "iree"), jax.enable_x64(x64):
      outs = jax.jit(lambda *args: [f(*a) for f, a in zip(fns, args)])(
          *[args for _, _, args, _ in group])
    for (name, _, _, want), got in zip(group, outs):
      _assert_close_to_jax(got, want, name, f"{name} (compiled)")


def test_erf_inv_narrow_floats_and_jvp():
  x = np.array([-0.9, -0.3, 0.0, 0.25, 0.7, 0.999], np.float32)
  for dt in (np.float16, jnp.bfloat16):
    got = jax.lax.erf_inv(x.astype(dt))
    assert got.dtype == dt
    want = jax.lax.erf_inv(x.astype(dt).astype(np.float32)).astype(dt)
    np.testing.assert_array_equal(np.asarray(got, np.float32), np.asarray(want, np.float32))
  # d/dx erf_inv(x) = sqrt(pi)/2 exp(erf_inv(x)^2)
  g = jax.vmap(jax.grad(jax.lax.erf_inv))(x)
  y = np.asarray(jax.lax.erf_inv(x), np.float64)
  np.testing.assert_allclose(g, np.sqrt(np.pi) / 2 * np.exp(y * y), rtol=1e-6)


def test_erf_inv_lowers_to_giles_polynomials():
  # float32: JAX's lowering, chlo.erf_inv; float64: the double-precision
  # polynomial written out, with an accurate log1p (IREE's chlo.erf_inv takes
  # its float64 log_plus_one, ~1e-10 off near |x| = 1)
  text = jax.jit(jax.lax.erf_inv).lower(np.zeros(3, np.float32)).as_text()
  assert "chlo.erf_inv" in text
  with jax.enable_x64():
    text = jax.jit(jax.lax.erf_inv).lower(np.zeros(3, np.float64)).as_text()
    assert "chlo.erf_inv" not in text and "stablehlo.log_plus_one" not in text
    constants = {float(v) for v in re.findall(r"dense<([-+0-9.eE]+)>", text)}
    for piece in (-3.6444120640178196996e-21, 2.2137376921775787049e-09,
                  -2.7109920616438573243e-11, 4.8499064014085844221):
      assert piece in constants, piece
    x = 1 - np.geomspace(1e-15, 0.5, 200)
    with jax.config.override("openjax_executor", "iree"):
      got = np.asarray(jax.jit(jax.lax.erf_inv)(x))
    np.testing.assert_allclose(got, np.asarray(jax.lax.erf_inv(x)), rtol=1e-15)


def test_gamma_grad_below_one_half():
  # a < 1/2 reflects lgamma/digamma through sin and cos. JAX's values within
  # float32 rounding of the algorithm (up to 8 ulps: the series' terms cancel;
  # JAX's are no closer to a float64 evaluation than these)
  a = np.array([0.05, 0.1, 0.25, 0.4, 0.45, 0.3, 0.2], np.float32)
  x = np.array([0.01, 0.5, 2.0, 3.0, 7.5, 12.0, 0.3], np.float32)
  jax_grad = np.array([0.8311544060707092, 5.119692802429199, 4.0715532302856445,
                       3.3559207916259766, 4.091963291168213, 5.749034404754639,
                       2.15370512008667], np.float32)
  jax_igamma = np.array([-3.357151746749878, -0.6090920567512512, -0.09036862105131149,
                         -0.03896394371986389, -0.0003796504170168191, -2.07364973903168e-06,
                         -0.9105595350265503], np.float32)
  np.testing.assert_allclose(jax.lax.random_gamma_grad(a, x), jax_grad, rtol=1e-6)
  np.testing.assert_allclose(jax.lax.igamma_grad_a(a, x), jax_igamma, rtol=1e-6)


def test_loop_primitives_lower_to_while():
  k = jax.random.PRNGKey(0)
  f = jax.jit(lambda k, a: random_gamma(k, a))
  a = np.array([0.5, 2.0], np.float32)
  try:
    text = f.lower(k, a).as_text()
  except NotImplementedError as e:   # the elementwise families' lowering rules
    assert "random_gamma" not in str(e).split("'")[1]
    pytest.skip(f"lowering rules still missing: {e}")
  assert "stablehlo.while" in text


def test_non_partitionable_threefry_is_refused():
  with jax.config.override("jax_threefry_partitionable", False):
    with pytest.raises(NotImplementedError, match="jax_threefry_partitionable=False"):
      jax.random.split(jax.random.PRNGKey(0))
