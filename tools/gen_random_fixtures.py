"""Regenerate tests/data/random_fixtures.json: JAX's values for jax.random.

Run with a Python that has real JAX 0.10.2 installed (never openjax):

    /tmp/jaxvenv/bin/python tools/gen_random_fixtures.py

Every case is a pair of expression strings evaluated in a namespace holding
``jax``, ``jnp`` and ``np``: ``key`` builds the key, ``fn`` is a function of
that key. tests/test_random.py evaluates the same strings under
``import openjax as jax`` and compares the results with the stored ones:
exactly for integers, booleans and key data, within 2 ULPs (or a stated
number) for floats. Results are stored as base64 of their raw bytes with
dtype and shape, so floats round-trip exactly. Cases under ``x64`` run with
``jax_enable_x64``. ``kernels`` holds arguments and results of the float
functions whose algorithms openjax shares with JAX (``erf_inv``,
``random_gamma_grad``, ``igamma_grad_a``), compiled by jaxlib.
"""
from __future__ import annotations

import base64
import json
import os
import sys

import numpy as np

KEYS = ["jax.random.PRNGKey(0)", "jax.random.PRNGKey(42)", "jax.random.key(1701)",
        "jax.random.split(jax.random.PRNGKey(3))[1]"]

# name -> (fn expression, keys to use: None = all of KEYS)
CASES_X32 = {
    # keys and bits
    "PRNGKey_seeds": ("lambda key: jnp.stack([jax.random.PRNGKey(s) for s in "
                      "(0, 1, -1, -3, 2**31 - 1, 2**32 + 5, 2**40 + 7, -2**40)])", KEYS[:1]),
    "split": ("lambda key: jax.random.key_data(jax.random.split(key))", None),
    "split_shape": ("lambda key: jax.random.key_data(jax.random.split(key, (2, 3)))", None),
    "fold_in": ("lambda key: jax.random.key_data(jax.random.fold_in(key, 12345))", None),
    "fold_in_neg": ("lambda key: jax.random.key_data(jax.random.fold_in(key, 2**32 - 7))",
                    KEYS[:1]),
    "bits_u32": ("lambda key: jax.random.bits(key, (3, 5))", None),
    "bits_u8": ("lambda key: jax.random.bits(key, (7,), jnp.uint8)", None),
    "bits_u16": ("lambda key: jax.random.bits(key, (2, 3), jnp.uint16)", None),
    "bits_scalar": ("lambda key: jax.random.bits(key)", None),
    # uniform family
    "uniform": ("lambda key: jax.random.uniform(key, (4, 5))", None),
    "uniform_scalar": ("lambda key: jax.random.uniform(key)", None),
    "uniform_range": ("lambda key: jax.random.uniform(key, (6,), minval=-1., maxval=1.)", None),
    "uniform_minmax": ("lambda key: jax.random.uniform(key, (6,), minval=-0.3, maxval=2.)",
                       None),
    "uniform_array_bounds": ("lambda key: jax.random.uniform(key, (2, 3), minval="
                             "jnp.array([0., 1., 2.]), maxval=jnp.array([1., 3., 10.]))", None),
    "uniform_f16": ("lambda key: jax.random.uniform(key, (8,), jnp.float16)", None),
    "uniform_bf16": ("lambda key: jax.random.uniform(key, (8,), jnp.bfloat16)", None),
    "normal": ("lambda key: jax.random.normal(key, (3, 4))", None),
    "normal_scalar": ("lambda key: jax.random.normal(key)", None),
    "normal_f16": ("lambda key: jax.random.normal(key, (8,), jnp.float16)", None),
    "normal_bf16": ("lambda key: jax.random.normal(key, (8,), jnp.bfloat16)", None),
    "normal_c64": ("lambda key: jax.random.normal(key, (4,), jnp.complex64)", KEYS[:2]),
    "truncated_normal": ("lambda key: jax.random.truncated_normal(key, -0.5, 2., (6,))", None),
    "exponential": ("lambda key: jax.random.exponential(key, (6,))", None),
    "laplace": ("lambda key: jax.random.laplace(key, (6,))", None),
    "logistic": ("lambda key: jax.random.logistic(key, (6,))", None),
    "cauchy": ("lambda key: jax.random.cauchy(key, (6,))", None),
    "gumbel": ("lambda key: jax.random.gumbel(key, (6,))", None),
    "gumbel_high": ("lambda key: jax.random.gumbel(key, (6,), mode='high')", KEYS[:2]),
    "gumbel_highest": ("lambda key: jax.random.gumbel(key, (6,), mode='highest')", KEYS[:2]),
    "pareto": ("lambda key: jax.random.pareto(key, 3.0, (6,))", None),
    "weibull_min": ("lambda key: jax.random.weibull_min(key, 2.0, 1.5, (6,))", None),
    "rayleigh": ("lambda key: jax.random.rayleigh(key, 2.0, (6,))", None),
    "wald": ("lambda key: jax.random.wald(key, 1.5, (6,))", None),
    "triangular": ("lambda key: jax.random.triangular(key, 0., 0.3, 1., (6,))", None),
    "lognormal": ("lambda key: jax.random.lognormal(key, 0.5, (6,))", None),
    "maxwell": ("lambda key: jax.random.maxwell(key, (6,))", None),
    "double_sided_maxwell": ("lambda key: jax.random.double_sided_maxwell(key, 1., 2., (6,))",
                             None),
    "geometric": ("lambda key: jax.random.geometric(key, 0.3, (6,))", None),
    # discrete and combinatorial
    "randint": ("lambda key: jax.random.randint(key, (3, 4), -5, 100)", None),
    "randint_uint8": ("lambda key: jax.random.randint(key, (8,), 0, 256, jnp.uint8)", None),
    "randint_int8": ("lambda key: jax.random.randint(key, (8,), -128, 5, jnp.int8)", None),
    "randint_bounds": ("lambda key: jax.random.randint(key, (4,), jnp.array([0, 5, -3, 7]), "
                       "jnp.array([1, 50, 3, 7]))", None),
    "bernoulli": ("lambda key: jax.random.bernoulli(key, 0.4, (8,))", None),
    "bernoulli_p": ("lambda key: jax.random.bernoulli(key, jnp.array([0.1, 0.5, 0.9]))", None),
    "bernoulli_high": ("lambda key: jax.random.bernoulli(key, 0.4, (8,), mode='high')", None),
    "rademacher": ("lambda key: jax.random.rademacher(key, (8,))", None),
    "categorical": ("lambda key: jax.random.categorical(key, jnp.log(jnp.array([.1, .2, .3, "
                    ".4])), shape=(8,))", None),
    "categorical_axis0": ("lambda key: jax.random.categorical(key, jnp.arange(12.).reshape(3, 4)"
                          " / 4, axis=0)", None),
    "categorical_norep": ("lambda key: jax.random.categorical(key, jnp.log(jnp.array([.1, .2, "
                          ".3, .4])), shape=(3,), replace=False)", None),
    "choice": ("lambda key: jax.random.choice(key, 10, (4,))", None),
    "choice_array_axis": ("lambda key: jax.random.choice(key, jnp.arange(12).reshape(3, 4), "
                          "(2,), axis=1)", None),
    "choice_p": ("lambda key: jax.random.choice(key, 10, (4,), p=jnp.arange(10.) / 45)", None),
    "choice_norep": ("lambda key: jax.random.choice(key, 10, (4,), replace=False)", None),
    "choice_norep_p": ("lambda key: jax.random.choice(key, 10, (4,), replace=False, "
                       "p=jnp.arange(10.) / 45)", None),
    "permutation": ("lambda key: jax.random.permutation(key, 10)", None),
    "permutation_large": ("lambda key: jax.random.permutation(key, 2000)[:50]", KEYS[:2]),
    "permutation_axis": ("lambda key: jax.random.permutation(key, jnp.arange(12).reshape(3, 4),"
                         " axis=1)", None),
    "permutation_independent": ("lambda key: jax.random.permutation(key, jnp.arange(12)"
                                ".reshape(3, 4), axis=1, independent=True)", None),
    # linear algebra (need jax.numpy.linalg)
    "multivariate_normal": ("lambda key: jax.random.multivariate_normal(key, jnp.array([1., "
                            "-1.]), jnp.array([[2., 0.5], [0.5, 1.]]), (3,))", KEYS[:2]),
    "multivariate_normal_eigh": ("lambda key: jax.random.multivariate_normal(key, jnp.zeros(2), "
                                 "jnp.array([[2., 0.5], [0.5, 1.]]), (3,), method='eigh')",
                                 KEYS[:2]),
    "orthogonal": ("lambda key: jax.random.orthogonal(key, 3)", KEYS[:2]),
    # rejection loops
    "gamma": ("lambda key: jax.random.gamma(key, jnp.array([0.1, 0.5, 1., 2., 7., 30.]))", None),
    "gamma_shape": ("lambda key: jax.random.gamma(key, 2.5, (2, 3))", None),
    "gamma_f16": ("lambda key: jax.random.gamma(key, 2.5, (4,), jnp.float16)", KEYS[:2]),
    "loggamma": ("lambda key: jax.random.loggamma(key, jnp.array([0.01, 0.5, 1., 2., 7.]))",
                 None),
    "beta": ("lambda key: jax.random.beta(key, 2., 3., (6,))", None),
    "dirichlet": ("lambda key: jax.random.dirichlet(key, jnp.array([0.5, 1., 2.]), (2,))", None),
    "chisquare": ("lambda key: jax.random.chisquare(key, 3., (6,))", None),
    "f": ("lambda key: jax.random.f(key, 3., 5., (6,))", None),
    "t": ("lambda key: jax.random.t(key, 4., (6,))", None),
    "generalized_normal": ("lambda key: jax.random.generalized_normal(key, 1.5, (6,))", None),
    "ball": ("lambda key: jax.random.ball(key, 3, 2, (2,))", None),
    "poisson": ("lambda key: jax.random.poisson(key, jnp.array([0., 0.5, 3., 9.9, 10., 250.]))",
                None),
    "poisson_shape": ("lambda key: jax.random.poisson(key, 4., (3, 4))", None),
    "binomial": ("lambda key: jax.random.binomial(key, jnp.array([5., 20., 100., 1000., 3., "
                 "0.]), 0.3)", None),
    "binomial_p": ("lambda key: jax.random.binomial(key, 200., jnp.array([0.1, 0.5, 0.7, 0.9, "
                   "1., 0.]))", None),
    "multinomial": ("lambda key: jax.random.multinomial(key, 50., jnp.array([0.2, 0.3, 0.5]))",
                    None),
    # transformations: gradients (reparameterised and implicit) and vmap
    "grad_gamma": ("lambda key: jax.grad(lambda a: jax.random.gamma(key, a, (4,)).sum())(2.5)",
                   None),
    "grad_loggamma": ("lambda key: jax.grad(lambda a: jax.random.loggamma(key, a, (4,)).sum())"
                      "(0.5)", None),
    "grad_uniform_bounds": ("lambda key: jax.grad(lambda lo, hi: jax.random.uniform(key, (5,), "
                            "minval=lo, maxval=hi).sum(), argnums=(0, 1))(0.5, 3.)", None),
    "grad_normal_loc_scale": ("lambda key: jax.grad(lambda m, s: (m + s * jax.random.normal("
                              "key, (5,))).sum(), argnums=(0, 1))(1., 2.)", None),
    "grad_beta": ("lambda key: jax.grad(lambda a: jax.random.beta(key, a, 2., (3,)).sum())(1.5)",
                  None),
    "grad_dirichlet": ("lambda key: jax.grad(lambda a: jax.random.dirichlet(key, a)[0])("
                       "jnp.array([1., 2., 3.]))", None),
    "grad_truncated_normal": ("lambda key: jax.grad(lambda lo: jax.random.truncated_normal("
                              "key, lo, 2., (3,)).sum())(-1.)", None),
    "jacfwd_gamma": ("lambda key: jax.jacfwd(lambda a: jax.random.gamma(key, a))("
                     "jnp.array([1., 2.]))", None),
    "vmap_keys_normal": ("lambda key: jax.vmap(lambda k: jax.random.normal(k, (3,)))("
                         "jax.random.split(key, 4))", None),
    "vmap_keys_randint": ("lambda key: jax.vmap(lambda k: jax.random.randint(k, (3,), 0, 9))("
                          "jax.random.split(key, 4))", None),
    "vmap_gamma_alpha": ("lambda key: jax.vmap(lambda a: jax.random.gamma(key, a, (2,)))("
                         "jnp.array([0.5, 1., 3.]))", None),
    "vmap_poisson_keys": ("lambda key: jax.vmap(lambda k: jax.random.poisson(k, 3., (4,)))("
                          "jax.random.split(key, 3))", None),
    "vmap_binomial_keys": ("lambda key: jax.vmap(lambda k: jax.random.binomial(k, 30., 0.4, "
                           "(4,)))(jax.random.split(key, 3))", None),
    "vmap_permutation_keys": ("lambda key: jax.vmap(lambda k: jax.random.permutation(k, 6))("
                              "jax.random.split(key, 3))", None),
    "vmap_fold_in": ("lambda key: jax.random.key_data(jax.vmap(lambda i: jax.random.fold_in("
                     "key, i))(jnp.arange(4)))", None),
    # the data of seed program 002 (tests/test_seed_002_verbatim.py)
    "seed002_X": ("lambda key: jax.random.normal(key, (1000, 5))", KEYS[1:2]),
    "seed002_noise": ("lambda key: jax.random.normal(key, (1000,))", KEYS[1:2]),
    "seed002_init": ("lambda key: jax.random.normal(jax.random.split(key)[1], (5,))", KEYS[1:2]),
    "seed002_X_test": ("lambda key: jax.random.normal(jax.random.split(jax.random.split(key)"
                       "[0])[1], (100, 5))", KEYS[1:2]),
}

CASES_X64 = {
    "PRNGKey_seeds_x64": ("lambda key: jnp.stack([jax.random.PRNGKey(s) for s in "
                          "(0, 1, -1, -3, 2**31 - 1, 2**32 + 5, 2**40 + 7, -2**40, 2**63 - 1, "
                          "-2**63)])", KEYS[:1]),
    "PRNGKey_uint64_x64": ("lambda key: jax.random.PRNGKey(np.uint64(2**64 - 1))", KEYS[:1]),
    "bits_u64_x64": ("lambda key: jax.random.bits(key, (5,))", None),
    "uniform_f64_x64": ("lambda key: jax.random.uniform(key, (6,))", None),
    "uniform_f32_x64": ("lambda key: jax.random.uniform(key, (6,), jnp.float32)", None),
    "normal_f64_x64": ("lambda key: jax.random.normal(key, (6,))", None),
    "randint_i64_x64": ("lambda key: jax.random.randint(key, (6,), -2**40, 2**40)", None),
    "randint_i32_x64": ("lambda key: jax.random.randint(key, (6,), 0, 10, jnp.int32)", None),
    "gamma_f64_x64": ("lambda key: jax.random.gamma(key, jnp.array([0.3, 1.5, 9.]))", None),
    "poisson_i64_x64": ("lambda key: jax.random.poisson(key, jnp.array([2., 40.]))", None),
    "permutation_x64": ("lambda key: jax.random.permutation(key, 10)", None),
    "choice_x64": ("lambda key: jax.random.choice(key, 10, (4,))", None),
}


def _kernel_inputs() -> dict:
  """Inputs of the kernel goldens: XLA:CPU's ``erf_inv`` and the gamma
  functions' a-derivatives, which openjax reproduces bit for bit (the gamma
  ones with a >= 0.5: below, XLA's float32 sine and cosine enter)."""
  rng = np.random.default_rng(20260)
  u32 = np.concatenate([rng.uniform(-1, 1, 1500), 1 - 10.0 ** -rng.uniform(1, 7.2, 250),
                        -(1 - 10.0 ** -rng.uniform(1, 7.2, 250)),
                        [0, -0.0, 1, -1, 0.5, -0.5, 1.5, -2, np.nan, 1e-40, -1e-40, 1e-30,
                         0.99999994, -0.99999994, 0.6443, 0.9966]]).astype(np.float32)
  u64 = np.concatenate([rng.uniform(-1, 1, 400), 1 - 10.0 ** -rng.uniform(1, 15.9, 200),
                        [0, 1, -1, 2, np.nan, 1e-310, 0.999999999999]])
  a = np.exp(rng.uniform(np.log(0.5), np.log(150), 1200))
  x = a * np.exp(rng.uniform(-4, 2, 1200))
  a[:200] = rng.uniform(0.5, 4, 200)
  x[:200] = rng.uniform(0, 12, 200)
  edges_a = [1, 2, 0.5, 3, 0, -1, np.nan, 1, 1, np.inf]
  edges_x = [2, 0, 0.5, 1e-30, 1, 1, 1, np.nan, np.inf, 1]
  a32 = np.concatenate([a, edges_a]).astype(np.float32)
  x32 = np.concatenate([x, edges_x]).astype(np.float32)
  return {"erf_inv_f32": (u32,), "erf_inv_f64": (u64,),
          "random_gamma_grad_f32": (a32, x32), "random_gamma_grad_f64": (a[::4], x[::4]),
          "igamma_grad_a_f32": (a32, x32)}


def _kernels(jax) -> dict:
  # Jitted: JAX composes the gamma derivatives from lax ops, and its eager
  # op-by-op evaluation rounds the products XLA fuses into multiply-adds.
  fns = {"erf_inv": jax.lax.erf_inv, "random_gamma_grad": jax.lax.random_gamma_grad,
         "igamma_grad_a": jax.lax.igamma_grad_a}
  out = {}
  for name, args in _kernel_inputs().items():
    fn = jax.jit(fns[name.rsplit("_", 1)[0]])
    out[name] = {"args": [_encode(a) for a in args], "result": _encode(fn(*args))}
  return out


def _encode(x) -> dict:
  x = np.asarray(x)
  if x.dtype.names is not None or x.dtype == object:
    raise TypeError(f"cannot store {x.dtype}")
  return {"dtype": str(x.dtype), "shape": list(x.shape),
          "data": base64.b64encode(np.ascontiguousarray(x).tobytes()).decode()}


def _run(cases: dict, ns: dict) -> dict:
  out = {}
  for name, (fn_src, keys) in cases.items():
    entries = []
    for key_src in keys or KEYS:
      key = eval(key_src, ns)  # noqa: S307 - our own expressions
      fn = eval(fn_src, ns)  # noqa: S307
      val = fn(key)
      entries.append({"key": key_src, "result": _encode(val)})
    out[name] = {"fn": fn_src, "cases": entries}
  return out


def main() -> None:
  import jax  # noqa: PLC0415 - the oracle, only imported when generating
  import jax.numpy as jnp  # noqa: PLC0415
  if not jax.__version__.startswith("0.10.2"):
    sys.exit(f"expected JAX 0.10.2, got {jax.__version__}")
  ns = {"jax": jax, "jnp": jnp, "np": np}
  data = {"jax_version": jax.__version__, "x32": _run(CASES_X32, ns)}
  jax.config.update("jax_enable_x64", True)
  data["x64"] = _run(CASES_X64, ns)
  data["kernels"] = _kernels(jax)
  path = os.path.join(os.path.dirname(__file__), "..", "tests", "data", "random_fixtures.json")
  with open(path, "w") as f:
    json.dump(data, f, indent=1, sort_keys=True)
    f.write("\n")
  print(f"wrote {os.path.normpath(path)}: {len(CASES_X32)} + {len(CASES_X64)} cases")


if __name__ == "__main__":
  main()
