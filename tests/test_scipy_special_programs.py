"""Eager calls of jax.scipy.special functions JAX does not jit (beta, betaln,
gamma, loggamma, factorial, multigammaln, i0, i1) run as one cached library
program: no primitive is bound per call, the bits are the op-by-op call's,
and under a trace the equations are staged inline as before. The helpers JAX
jits (gammasgn, the complex log-gamma) stay jits: eagerly, their compiled tier."""
import numpy as np
import pytest

import openjax as jax
import openjax.scipy.special as jsp
from openjax._src.core import eval_trace
from openjax._src.scipy import special

_A = np.array([0.5, 1.0, 2.5, 7.0, 11.0, -0.5, -1.0, 0.0, -0.0, np.nan, 30.0, 1e-3], np.float32)
_B = np.array([0.25, 3.0, 2.5, 9.0, 0.5, 1.5, 2.0, 1.0, 4.0, 1.0, 12.0, 40.0], np.float32)
_C = (np.array([0.5, 1.0, 2.5, -3.5, 0.2, 4.0], np.float32)
      + 1j * np.array([0.0, 1.0, -2.0, 0.5, 3.0, -1.0], np.float32)).astype(np.complex64)

_CASES = [
    ("beta", lambda a, b: jsp.beta(a, b), _A, _B),
    ("betaln", lambda a, b: jsp.betaln(a, b), _A, _B),
    ("gamma", lambda a, b: jsp.gamma(a), _A, _B),
    ("gamma_complex", lambda a, b: jsp.gamma(a), _C, _C),
    ("loggamma", lambda a, b: jsp.loggamma(a), _A, _B),
    ("factorial", lambda a, b: jsp.factorial(a), _A, _B),
    ("multigammaln", lambda a, b: jsp.multigammaln(a, 3), _A + np.float32(3), _B),
    ("i0", lambda a, b: jsp.i0(a), _A, _B),
    ("i1", lambda a, b: jsp.i1(a), _A, _B),
]


def _same(a, b):
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                np.asarray(b).reshape(-1).view(np.uint8))


@pytest.mark.parametrize("name,f,a,b", _CASES, ids=[c[0] for c in _CASES])
def test_runs_as_one_eager_program_with_op_by_op_bits(monkeypatch, name, f, a, b):
  a, b = jax.numpy.asarray(a), jax.numpy.asarray(b)
  with jax.disable_jit():
    want = f(a, b)
  f(a, b)
  bound = []
  process = eval_trace.process_primitive
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: bound.append(p.name) or process(p, args, params))
  got = f(a, b)
  assert bound == []
  _same(got, want)


def test_traced_equations_stay_inline():
  x = np.ones(3, np.float32)
  assert [e.primitive.name for e in jax.make_jaxpr(jsp.gamma)(x).jaxpr.eqns] == [
      "jit", "lgamma", "exp", "mul"]   # JAX 0.10.2's: jit(gammasgn), lgamma, exp, mul
  assert [e.primitive.name for e in jax.make_jaxpr(jsp.i0)(x).jaxpr.eqns] == [
      "abs", "exp", "bessel_i0e", "mul"]
  eqns = jax.make_jaxpr(jsp.betaln)(x, x).jaxpr.eqns
  assert [e.primitive.name for e in eqns[:3]] == ["min", "max", "lgamma"]


def test_complex_loggamma_keeps_its_jit():
  # Complex loggamma is its jit (a while loop: interpreted, its trips cost
  # more than the compiled tier's call); real loggamma is a program.
  assert not special.gammasgn.eager and not special._complex_loggamma.eager
  z = jax.numpy.asarray(_C)
  with jax.disable_jit():
    want = jsp.loggamma(z)
  np.testing.assert_allclose(np.asarray(jsp.loggamma(z)), np.asarray(want), rtol=2e-6, atol=1e-6)
  assert [e.primitive.name for e in jax.make_jaxpr(jsp.loggamma)(z).jaxpr.eqns] == ["jit"]


def test_gamma_and_beta_of_large_arrays_run_op_by_op(monkeypatch):
  # Past _PROGRAM_MAX_ELEMENTS the op-by-op call (gammasgn's jit compiled)
  # beats the program (gammasgn interpreted): primitives are bound.
  n = special._PROGRAM_MAX_ELEMENTS + 1
  a = jax.numpy.asarray(np.linspace(0.5, 9.0, n, dtype=np.float32))
  want = jsp.beta(a, a)
  bound = []
  process = eval_trace.process_primitive
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: bound.append(p.name) or process(p, args, params))
  got = jsp.beta(a, a)
  assert bound[:2] == ["jit", "jit"]   # the gammasgn jits, each its own eager call
  np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


# Eager calls whose values decide JAX's branches (gamma/beta/poch of positive
# operands: gammasgn is 1; betaln with max(a, b) < 8 everywhere or >= 8
# everywhere: one branch of its where) skip the rest with the same bits.
_POS = np.array([0.5, 1.0, 2.5, 7.0, 7.9, 1e-3, 3.25, 0.125, 5.5, 6.0, 2.0, 1.5], np.float32)
_POS_B = np.array([0.25, 3.0, 2.5, 0.5, 1.5, 2.0, 1.0, 4.0, 7.5, 0.75, 6.0, 3.5], np.float32)
_FULL = [
    ("gamma", lambda a, b: jsp.gamma(a), lambda a, b: special._gamma(a)),
    ("beta", jsp.beta, special._beta),
    ("betaln_small", jsp.betaln, special._betaln),
    ("betaln_large", lambda a, b: jsp.betaln(a + 8, b), lambda a, b: special._betaln(a + 8, b)),
    ("betaln_large_b", lambda a, b: jsp.betaln(a, b * 4 + 8),
     lambda a, b: special._betaln(a, b * 4 + 8)),
    ("poch", jsp.poch,
     lambda z, m: jax.numpy.where(m == 0, 1.0, special._gamma(z + m) / special._gamma(z))),
]


@pytest.mark.parametrize("size", [12, special._PROGRAM_MAX_ELEMENTS + 4])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, jax.numpy.bfloat16, np.float64])
@pytest.mark.parametrize("name,f,full", _FULL, ids=[c[0] for c in _FULL])
def test_decided_branches_keep_the_full_formulas_bits(name, f, full, dtype, size):
  a = jax.numpy.asarray(np.resize(_POS, size).astype(dtype))
  b = jax.numpy.asarray(np.resize(_POS_B, size).astype(dtype))
  _same(f(a, b), full(a, b))


def test_positive_operands_skip_gammasgn(monkeypatch):
  n = special._PROGRAM_MAX_ELEMENTS + 1     # op by op: the binds show
  a = jax.numpy.asarray(np.linspace(0.5, 7.5, n, dtype=np.float32))
  bound = []
  process = eval_trace.process_primitive
  monkeypatch.setattr(eval_trace, "process_primitive",
                      lambda p, args, params: bound.append(p.name) or process(p, args, params))
  jsp.beta(a, a)
  jsp.gamma(a)
  assert "jit" not in bound and bound.count("lgamma") == 4
  shifted = a - 1
  bound.clear()
  jsp.gamma(shifted)   # a negative value: JAX's formula with gammasgn
  assert bound[0] == "jit"


@pytest.mark.parametrize("value", [np.nan, 0.0, -0.0, np.inf, -2.5, 8.0])
def test_undecided_values_take_the_full_formula(value):
  # NaN, zeros, negatives and (for beta) 8: gammasgn or the other branch decides.
  a = np.resize(_POS, 12)
  a[3] = value
  a = jax.numpy.asarray(a)
  b = jax.numpy.asarray(_POS_B)
  _same(jsp.gamma(a), special._gamma(a))
  _same(jsp.beta(a, b), special._beta(a, b))
  _same(jsp.betaln(a, b), special._betaln(a, b))
  _same(jsp.poch(a, b), jax.numpy.where(b == 0, 1.0, special._gamma(a + b) / special._gamma(a)))


def test_weak_and_traced_operands_keep_jaxs_formula():
  # A Python scalar (weak) keeps gammasgn's strong result type; a trace over
  # concrete positive Arrays stages JAX's equations (the gammasgn jits).
  assert not jsp.gamma(2.5).weak_type and not jsp.beta(2.5, 1.5).weak_type
  np.testing.assert_allclose(float(jsp.gamma(2.5)), 1.3293404, rtol=1e-6)
  a = jax.numpy.asarray(_POS)
  names = [e.primitive.name for e in jax.make_jaxpr(lambda: jsp.beta(a, a))().jaxpr.eqns]
  assert names[:3] == ["jit", "jit", "add"] or names.count("jit") >= 3
  assert [e.primitive.name for e in jax.make_jaxpr(lambda: jsp.gamma(a))().jaxpr.eqns] == [
      "jit", "lgamma", "exp", "mul"]
  np.testing.assert_allclose(np.asarray(jax.jit(jsp.beta)(a, a)), np.asarray(jsp.beta(a, a)),
                             rtol=2e-6)
