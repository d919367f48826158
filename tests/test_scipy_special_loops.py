"""Eager-speed formulations of jax.scipy.special/stats (issue 14's sweep),
checked where they could go wrong:

- expn/exp1/expi and hyp1f1 run their while loops on 1-d views of operands
  of two or more dimensions (a compiled loop whose condition reduces a 2-d
  array costs ~7 us a trip in IREE) and make several steps a trip: the values
  must be the one-step loop's, bit for bit, at every shape (0-d included);
- ndtr is one erfc (JAX writes erf and two erfc), betaln one log Gamma of
  ``a`` for both branches: the equations, and the values in the tails;
- the truncated normal's pdf/cdf/sf are jits with a compiled tier, as its
  log functions are (a library program interpreted their nested jits).
"""
import numpy as np
import pytest
from scipy import special, stats

import openjax as jax
import openjax.numpy as jnp
import openjax.scipy.special as jsp
import openjax.scipy.stats as jst
from openjax._src.core import jaxprs_in_params
import openjax._src.scipy.special
from openjax._src.scipy import special_error, special_hypergeometric, special_series
from openjax._src.scipy.stats import incomplete


def _eqns(closed):
  """Every equation of ``closed``, nested jaxprs included."""
  out, stack = [], [closed.jaxpr]
  while stack:
    jaxpr = stack.pop()
    for eqn in jaxpr.eqns:
      out.append(eqn)
      stack.extend(getattr(j, "jaxpr", j) for j in jaxprs_in_params(eqn.params))
  return out


def _same_bits(a, b):
  a, b = np.asarray(a), np.asarray(b)
  assert a.dtype == b.dtype and a.shape == b.shape
  np.testing.assert_array_equal(a.reshape(-1).view(np.uint8), b.reshape(-1).view(np.uint8))


_SHAPES = [(), (7,), (3, 4), (2, 3, 2)]


def _expn_args(shape, rng):
  n = rng.integers(0, 7, shape).astype(np.int32)
  x = rng.uniform(0.02, 6.0, shape).astype(np.float32)
  return n, x


@pytest.mark.parametrize("shape", _SHAPES, ids=str)
def test_expn_loops_same_values_as_one_step_a_trip(monkeypatch, shape):
  rng = np.random.default_rng(0)
  n, x = _expn_args(shape, rng)
  with jax.disable_jit():   # the interpreted jaxpr: no compiled tier in the way
    got_e = jsp.expn(n, x)
    got_1 = jsp.exp1(x)
    got_h = jsp.hyp1f1(x / 4, x + 0.5, x)
  monkeypatch.setattr(special_series, "_STEPS_PER_TRIP", 1)
  monkeypatch.setattr(special_hypergeometric, "_STEPS_PER_TRIP", 1)
  with jax.disable_jit():
    want_e = jsp.expn(n, x)
    want_1 = jsp.exp1(x)
    want_h = jsp.hyp1f1(x / 4, x + 0.5, x)
  _same_bits(got_e, want_e)
  _same_bits(got_1, want_1)
  _same_bits(got_h, want_h)
  xs = x.astype(np.float64)
  np.testing.assert_allclose(np.asarray(got_e, np.float64), special.expn(n, xs), rtol=2e-5)
  np.testing.assert_allclose(np.asarray(got_h, np.float64),
                             special.hyp1f1(xs / 4, xs + 0.5, xs), rtol=2e-5)


def _while_eqns(closed):
  return [e for e in _eqns(closed) if e.primitive.name == "while"]


@pytest.mark.parametrize("shape", [(3, 4), (2, 3, 2)], ids=str)
def test_loops_run_on_one_dimensional_views(shape):
  n, x = _expn_args(shape, np.random.default_rng(1))
  for closed in (jax.make_jaxpr(jsp.expn)(n, x), jax.make_jaxpr(jsp.exp1)(x),
                 jax.make_jaxpr(jsp.expi)(x), jax.make_jaxpr(jsp.hyp1f1)(x, x, x),
                 jax.make_jaxpr(jax.grad(lambda a: jsp.hyp1f1(a, 2.0, 1.5).sum()))(x)):
    loops = _while_eqns(closed)
    assert loops
    for eqn in loops:
      assert all(len(v.aval.shape) <= 1 for v in eqn.invars), eqn
    assert closed.out_avals[0].shape == shape


def test_loops_make_several_steps_a_trip():
  x = np.linspace(0.1, 5.0, 12, dtype=np.float32)
  loops = _while_eqns(jax.make_jaxpr(jsp.exp1)(x))
  body = loops[0].params["body_jaxpr"].jaxpr
  # Each step divides once (the series' term or the fraction's convergent).
  assert sum(e.primitive.name == "div" for e in body.eqns) >= special_series._STEPS_PER_TRIP > 1


def test_zero_dimensional_operands_keep_their_shape():
  assert jsp.expn(2, 1.5).shape == ()
  assert jsp.hyp1f1(0.5, 1.5, 2.0).shape == ()
  np.testing.assert_allclose(jsp.expn(2, np.float32(1.5)), special.expn(2, 1.5), rtol=2e-6)
  np.testing.assert_allclose(jsp.hyp1f1(0.5, 1.5, np.float32(2.0)),
                             special.hyp1f1(0.5, 1.5, 2.0), rtol=2e-6)


def test_ndtr_is_one_erfc():
  x = np.linspace(-3, 3, 5, dtype=np.float32)
  names = [e.primitive.name for e in _eqns(jax.make_jaxpr(jsp.ndtr)(x))]
  assert names.count("erfc") == 1 and "erf" not in names
  names = [e.primitive.name for e in _eqns(jax.make_jaxpr(jst.norm.cdf)(x))]
  assert names.count("erfc") == 1 and "erf" not in names


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_ndtr_tails_and_centre(dtype):
  with jax.enable_x64(dtype == np.float64):
    x = np.concatenate([np.linspace(-37 if dtype == np.float64 else -13, 9, 4001),
                        np.linspace(-0.8, 0.8, 1601), [0.0, -0.0]]).astype(dtype)
    got = np.asarray(jsp.ndtr(x))
    assert got.dtype == dtype
    want = special.ndtr(x.astype(np.float64))
    # float32: the rounding of x / sqrt(2) moves erfc by 2 x^2 eps relative.
    rtol = 4e-14 * (1 + x.astype(np.float64) ** 2) if dtype == np.float64 else \
        2e-7 * (1 + x.astype(np.float64) ** 2)
    assert np.all(np.abs(got - want) <= rtol * want + np.finfo(dtype).tiny)
    assert got[-1] == got[-2] == dtype(0.5)
    assert np.all(np.diff(got[:4001]) >= 0)   # monotone
    for inf, value in ((np.inf, 1.0), (-np.inf, 0.0)):
      assert jsp.ndtr(dtype(inf)) == value
    assert np.isnan(jsp.ndtr(dtype(np.nan)))


def test_betaln_one_lgamma_of_a():
  a = np.array([0.3, 2.0, 7.5, 11.0], np.float32)
  b = np.array([9.0, 0.5, 30.0, 12.0], np.float32)
  names = [e.primitive.name for e in _eqns(jax.make_jaxpr(jsp.betaln)(a, b))]
  assert names.count("lgamma") == 3
  np.testing.assert_allclose(jsp.betaln(a, b), special.betaln(a, b), rtol=2e-6)
  with jax.enable_x64():
    np.testing.assert_allclose(jsp.betaln(a.astype(np.float64), b.astype(np.float64) * 100),
                               special.betaln(a.astype(np.float64), b * 100.0), rtol=1e-9)


@pytest.mark.parametrize("name", ["pdf", "cdf", "sf"])
def test_truncnorm_functions_are_jits(name):
  # Not library programs (``eager``): those inline their nested jits
  # (logpdf, logcdf, logsf) and interpret ~20 special-function kernels.
  fn = getattr(incomplete, f"truncnorm_{name}")
  assert not fn.eager
  log_fn = getattr(jst.truncnorm, f"log{name}")
  x = jnp.asarray(np.linspace(-2.5, 3.5, 12, dtype=np.float32).reshape(3, 4))
  a, b = np.float32(-1.5), np.float32(2.0)
  got = getattr(jst.truncnorm, name)(x, a, b)
  assert got.shape == (3, 4) and got.dtype == np.float32
  np.testing.assert_allclose(got, np.exp(np.asarray(log_fn(x, a, b))), rtol=1e-6)
  want = getattr(stats.truncnorm, name)(np.asarray(x, np.float64), -1.5, 2.0)
  np.testing.assert_allclose(got, want, rtol=2e-5, atol=1e-7)


_COMPILED_TIER = [jsp.ndtr, jsp.ndtri, special_error._log_ndtr_jit[3], jsp.erfcx, jsp.wofz,
                  jsp.dawsn, jsp.owens_t, jsp.spence, jsp.fresnel,
                  openjax._src.scipy.special._comb, openjax._src.scipy.special._comb_repetition,
                  jsp.rel_entr, jsp.kl_div, jst.norm.cdf, jst.norm.sf, jst.norm.logcdf,
                  jst.norm.logsf, jst.norm.ppf, jst.norm.isf]


@pytest.mark.parametrize("fn", _COMPILED_TIER, ids=lambda f: f.__name__)
def test_long_float_programs_are_jits_with_a_compiled_tier(fn):
  # Library programs (``eager``) are never compiled: interpreted, these
  # 10-100 steps of float arithmetic cost ~1 us each at 10 elements and a
  # NumPy pass each at 1e6 (ndtri: 93 us / 159 ms; compiled 7 us / 3 ms).
  assert not fn.eager


def test_compiled_tier_agrees_with_the_interpreted_one():
  rng = np.random.default_rng(5)
  p = rng.uniform(0.01, 0.99, (3, 4)).astype(np.float32)
  x = rng.uniform(-6, 6, (3, 4)).astype(np.float32)
  cases = [(jsp.ndtri, (p,)), (jsp.log_ndtr, (x,)), (jsp.dawsn, (x,)), (jsp.owens_t, (x, p)),
           (jst.norm.logsf, (x,)), (jsp.spence, (np.abs(x),))]
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    compiled = [fn(*args) for fn, args in cases]
  with jax.disable_jit():
    interpreted = [fn(*args) for fn, args in cases]
  for (fn, _), c, i in zip(cases, compiled, interpreted):
    assert c.dtype == i.dtype == np.float32 and c.shape == i.shape == (3, 4)
    np.testing.assert_allclose(c, i, rtol=2e-6, atol=1e-7, err_msg=fn.__name__)



def test_static_argument_functions_print_one_jit():
  # log_ndtr and comb dispatch to a jit per static value (jit's eager fast
  # path takes positional arrays only); traced, each is one jit equation
  # named after the function, as before.
  x = np.linspace(-3, 3, 4, dtype=np.float32)
  for fn, args, name in ((jsp.log_ndtr, (x,), "log_ndtr"),
                         (lambda x: jsp.log_ndtr(x, series_order=5), (x,), "log_ndtr"),
                         (jsp.comb, (x + 5, x + 3), "comb"),
                         (lambda n, k: jsp.comb(n, k, repetition=True), (x + 5, x + 3), "comb")):
    eqns = jax.make_jaxpr(fn)(*args).jaxpr.eqns
    assert [(e.primitive.name, e.params["name"]) for e in eqns] == [("jit", name)]
  lower = np.array([-30.0, -12.0], np.float64)
  with jax.enable_x64():
    np.testing.assert_allclose(jsp.log_ndtr(lower, series_order=5), special.log_ndtr(lower),
                               rtol=1e-10)
    assert jsp.log_ndtr(-21.0, 0) != jsp.log_ndtr(-21.0, 3)
  np.testing.assert_allclose(jsp.comb(np.float32(6), np.float32(2), repetition=True), 21.0,
                             rtol=1e-6)
  np.testing.assert_allclose(jsp.comb(np.float32(6), np.float32(2)), 15.0, rtol=1e-6)
  with pytest.raises(TypeError, match="series_order must be a Python integer"):
    jsp.log_ndtr(x, series_order=2.0)
  with pytest.raises(TypeError, match="float32 or float64"):
    jsp.log_ndtr(np.arange(3, dtype=np.int32))


def test_sph_harm_one_jit_per_degree():
  n = np.array([0, 1, 2, 3], np.int32)
  m = np.array([0, -1, 2, 1], np.int32)
  theta = np.array([0.3, 1.1, 2.0, 2.9], np.float32)
  phi = np.array([0.5, 4.0, 1.5, 6.0], np.float32)
  eqns = jax.make_jaxpr(lambda t, p: jsp.sph_harm_y(n, m, t, p, n_max=3))(theta, phi).jaxpr.eqns
  assert [(e.primitive.name, e.params["name"]) for e in eqns] == [("jit", "_sph_harm")]
  got = jsp.sph_harm_y(n, m, theta, phi)   # n_max from n
  np.testing.assert_allclose(got, special.sph_harm_y(n, m, theta.astype(np.float64), phi),
                             rtol=2e-5, atol=1e-6)
  assert jsp.sph_harm_y(n, m, theta, phi, n_max=5).shape == (4,)
