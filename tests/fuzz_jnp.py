"""A seeded fuzzer of the ``jax.numpy`` namespace (run by tests/test_fuzz.py
in a subprocess, so a crash or a hang is caught too).

Each case calls one jnp function on random operands (shapes with 0-d and
0-size arrays, every common dtype, NaN/inf/huge/subnormal values, random and
out-of-range axes, odd keyword values) eagerly, under an interpreted ``jit``
and (every ``--compile-every``-th case) under a compiled ``jit``, and checks:

* failures are clean Python exceptions (``TypeError``, ``ValueError``,
  ``IndexError``, ``JaxRuntimeError``, ...): never an ``AssertionError``,
  ``AttributeError``, ``UnboundLocalError``, ``ZeroDivisionError`` or a
  crash, and the three executions fail alike;
* the three executions agree (dtype, shape, values within float tolerance,
  NaN where NaN);
* for the functions whose JAX semantics are NumPy's on the same dtype, the
  values agree with NumPy's.

    python tests/fuzz_jnp.py --seconds 60 --max-cases 2000 --seed 0   # what CI runs
    python tests/fuzz_jnp.py --seed 0 --case 123 -v    # replay one case

Each case's description is printed before it runs (``-v``) or kept as the
last line written, so a crash names it. Exit status 1 lists the failures.
"""
from __future__ import annotations

import argparse
import sys
import time
import traceback

import numpy as np

import openjax as jax
import openjax.numpy as jnp

# -------------------------------------------------------------- the namespace
UNARY = ["abs", "negative", "positive", "sign", "floor", "ceil", "round", "trunc", "rint",
         "sqrt", "cbrt", "square", "reciprocal", "exp", "exp2", "expm1", "log", "log2",
         "log10", "log1p", "sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh",
         "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "deg2rad", "rad2deg", "isnan",
         "isinf", "isfinite", "signbit", "logical_not", "invert", "conj", "real", "imag",
         "angle", "fabs", "sinc", "i0", "nan_to_num", "isreal", "iscomplex", "spacing",
         "frexp", "modf", "exp", "cumsum", "cumprod", "ravel", "transpose", "flip",
         "sort", "argsort", "fliplr", "flipud", "atleast_1d", "atleast_2d", "squeeze",
         "nonzero", "unique", "copy", "diag", "trace", "tril", "triu", "ptp", "median"]
BINARY = ["add", "subtract", "multiply", "divide", "true_divide", "floor_divide", "power",
          "float_power", "mod", "remainder", "fmod", "maximum", "minimum", "fmax", "fmin",
          "arctan2", "hypot", "copysign", "nextafter", "logaddexp", "logaddexp2",
          "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
          "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
          "bitwise_xor", "left_shift", "right_shift", "gcd", "lcm", "heaviside", "ldexp",
          "divmod", "isclose", "allclose", "array_equal", "dot", "matmul", "inner", "outer",
          "kron", "cross", "convolve", "polyval", "where_xy", "append", "searchsorted",
          "digitize", "intersect1d", "union1d", "setdiff1d", "isin"]
REDUCTIONS = ["sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax",
              "argmin", "nansum", "nanmax", "nanmin", "nanmean", "count_nonzero",
              "cumsum", "cumprod", "median", "ptp", "average", "logsumexp"]
# Elementwise functions whose JAX values are NumPy's on the same float dtype
# (correctly rounded or exact operations), checked against NumPy.
NUMPY_EXACT = {"abs", "negative", "positive", "floor", "ceil", "trunc", "rint", "sqrt",
               "square", "isnan", "isinf", "isfinite", "signbit", "fabs", "add", "subtract",
               "multiply", "divide", "maximum", "minimum", "fmax", "fmin", "equal",
               "not_equal", "less", "less_equal", "greater", "greater_equal", "copysign",
               "sort", "flip", "transpose", "ravel", "max", "min", "argmax", "argmin",
               "any", "all", "count_nonzero", "nanmax", "nanmin"}
# Where JAX itself fails eagerly and runs under jit: name -> the exception.
# jnp.power with a concrete negative integer exponent is lax.integer_pow,
# which refuses it; traced, the exponent is a value and the result is 0.
JAX_EAGER_ONLY_ERRORS = {"power": TypeError}
# Functions whose result shape depends on values: never jitted (JAX raises).
VALUE_SHAPED = {"nonzero", "unique", "intersect1d", "union1d", "setdiff1d"}

DTYPES = [np.float32, np.float32, np.float32, np.int32, np.int32, np.bool_, np.float16,
          np.complex64, np.uint8, np.int8, np.uint32]
SPECIAL_F = [np.nan, np.inf, -np.inf, 0.0, -0.0, 3e38, -3e38, 1e-38, 1e-40, 65504.0, 1.0,
             -1.0, 0.5]
SPECIAL_I = [0, 1, -1, 2 ** 31 - 1, -2 ** 31, 127, -128, 255]

# Exceptions a user may see from a bad call; anything else is a bug.
CLEAN = (TypeError, ValueError, IndexError, KeyError, NotImplementedError, OverflowError,
         jax.errors.JaxRuntimeError, FloatingPointError)
TOL = {np.dtype(np.float16): 2e-3, np.dtype(np.float32): 2e-5, np.dtype(np.complex64): 2e-5,
       np.dtype(np.float64): 1e-12, np.dtype(np.complex128): 1e-12}


# ------------------------------------------------------------------ operands
def rand_shape(rng, max_rank=3) -> tuple:
  rank = int(rng.integers(0, max_rank + 1))
  return tuple(int(rng.choice([0, 1, 1, 2, 3, 4, 5])) for _ in range(rank))


def rand_array(rng, shape, dtype) -> np.ndarray:
  dt = np.dtype(dtype)
  n = int(np.prod(shape))
  if dt.kind == "b":
    return rng.random(shape) < 0.5
  if dt.kind in "iu":
    info = np.iinfo(dt)
    vals = rng.integers(-20, 20, size=n)
    if n and rng.random() < 0.3:
      k = int(rng.integers(1, n + 1))
      vals[rng.integers(0, n, size=k)] = rng.choice(SPECIAL_I, size=k)
    return np.clip(vals, info.min, info.max).astype(dt).reshape(shape)
  vals = rng.standard_normal(n) * rng.choice([1.0, 10.0, 1000.0])
  if n and rng.random() < 0.4:
    k = int(rng.integers(1, n + 1))
    vals[rng.integers(0, n, size=k)] = rng.choice(SPECIAL_F, size=k)
  with np.errstate(all="ignore"):
    out = vals.astype(dt if dt.kind != "c" else np.float32)
    if dt.kind == "c":
      out = (out + 1j * rng.standard_normal(n).astype(np.float32)).astype(dt)
  return out.reshape(shape)


def rand_axis(rng, ndim):
  """An axis: mostly valid, sometimes negative, None, a tuple or out of range."""
  r = rng.random()
  if r < 0.2 or ndim == 0:
    return None if rng.random() < 0.8 else 0
  if r < 0.3:
    return int(rng.integers(-ndim - 1, ndim + 2))   # may be out of range
  if r < 0.45 and ndim > 1:
    k = int(rng.integers(1, ndim + 1))
    return tuple(int(a) for a in rng.choice(np.arange(ndim), size=k, replace=False))
  return int(rng.integers(-ndim, ndim))


def make_case(rng) -> tuple[str, list, dict]:
  """(function name, positional operands, keyword arguments)."""
  kind = rng.choice(["unary", "binary", "reduce"], p=[0.4, 0.35, 0.25])
  dtype = DTYPES[int(rng.integers(len(DTYPES)))]
  if kind == "unary":
    name = UNARY[int(rng.integers(len(UNARY)))]
    return name, [rand_array(rng, rand_shape(rng), dtype)], {}
  if kind == "binary":
    name = BINARY[int(rng.integers(len(BINARY)))]
    shape = rand_shape(rng)
    other = shape if rng.random() < 0.6 else (
        shape[int(rng.integers(0, len(shape) + 1)):] if rng.random() < 0.5 else rand_shape(rng))
    dtype2 = dtype if rng.random() < 0.7 else DTYPES[int(rng.integers(len(DTYPES)))]
    x, y = rand_array(rng, shape, dtype), rand_array(rng, other, dtype2)
    if rng.random() < 0.1:   # a Python scalar operand (weakly typed)
      y = [1, 2.5, -0.0, True, 3 + 1j, float("nan"), 2 ** 40][int(rng.integers(7))]
    return name, [x, y], {}
  name = REDUCTIONS[int(rng.integers(len(REDUCTIONS)))]
  x = rand_array(rng, rand_shape(rng), dtype)
  kwargs = {"axis": rand_axis(rng, x.ndim)}
  if name not in ("argmax", "argmin", "cumsum", "cumprod", "median", "average",
                  "count_nonzero", "logsumexp", "ptp") and rng.random() < 0.3:
    kwargs["keepdims"] = True
  if name in ("cumsum", "cumprod") and isinstance(kwargs["axis"], tuple):
    kwargs["axis"] = kwargs["axis"][0]
  if name in ("var", "std") and rng.random() < 0.3:
    kwargs["ddof"] = int(rng.integers(0, 3))
  return name, [x], kwargs


def resolve(name):
  if name == "where_xy":
    return lambda x, y: jnp.where(jnp.asarray(x).real > 0 if jnp.asarray(x).dtype != bool
                                  else x, x, y)
  if name == "logsumexp":
    return jax.nn.logsumexp
  return getattr(jnp, name)


def numpy_ref(name):
  return getattr(np, name, None)


# ------------------------------------------------------------------- running
# How many cases reached each check (printed at the end: a fuzzer whose
# cases all raise checks nothing).
STATS = {"raised": 0, "jit": 0, "compiled": 0, "numpy": 0}


def _run(fn, args, kwargs):
  try:
    out = fn(*args, **kwargs)
    return jax.tree_util.tree_map(np.asarray, jax.block_until_ready(out)), None
  except CLEAN as e:
    return None, e


def _leaves(x):
  return [np.asarray(l) for l in jax.tree_util.tree_leaves(x)]


def _compare(a, b, what: str, tol_scale: float = 1.0) -> str | None:
  la, lb = _leaves(a), _leaves(b)
  if len(la) != len(lb):
    return f"{what}: {len(la)} results vs {len(lb)}"
  for x, y in zip(la, lb):
    if x.dtype != y.dtype or x.shape != y.shape:
      return f"{what}: {x.dtype}{list(x.shape)} vs {y.dtype}{list(y.shape)}"
    if x.dtype.kind in "fc":
      tol = TOL.get(x.dtype, 1e-2) * tol_scale
      xx, yy = x.astype(np.complex128), y.astype(np.complex128)
      same = (np.isclose(xx, yy, rtol=tol, atol=tol, equal_nan=True)
              # infinities of the same sign, and huge values rounded either way
              | (xx == yy))
      if not same.all():
        i = np.argwhere(~same)[0]
        return f"{what}: at {tuple(i)}: {x[tuple(i)]!r} vs {y[tuple(i)]!r}"
    elif not np.array_equal(x, y):
      i = np.argwhere(x != y)[0] if x.ndim else ()
      return f"{what}: at {tuple(i)}: {x[tuple(i)]!r} vs {y[tuple(i)]!r}"
  return None


def _has_subnormal(arrays) -> bool:
  for a in arrays:
    if isinstance(a, np.ndarray) and a.dtype.kind in "fc" and a.size:
      parts = (a.real, a.imag) if a.dtype.kind == "c" else (a,)
      for p in parts:
        m = np.abs(p)
        if np.any((m > 0) & (m < np.finfo(p.dtype).tiny)):
          return True
  return False


def _bool_times_nonfinite(args) -> bool:
  if not any(isinstance(a, np.ndarray) and a.dtype == np.bool_ for a in args):
    return False
  for a in args:
    v = np.asarray(a)
    if v.dtype.kind in "fc" and not np.isfinite(v).all():
      return True
  return False


def run_case(seed: int, index: int, compile_: bool) -> tuple[str, str | None]:
  """(description, failure or None) of case ``index`` of ``seed``."""
  rng = np.random.default_rng([seed, index])
  name, args, kwargs = make_case(rng)
  desc = f"jnp.{name}(" + ", ".join(
      [f"{a.dtype}{list(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args]
      + [f"{k}={v!r}" for k, v in kwargs.items()]) + ")"
  try:
    return desc, _check(name, args, kwargs, compile_)
  except Exception:  # noqa: BLE001 - an unclean exception is a finding
    return desc, "unclean exception:\n" + traceback.format_exc(limit=-4)


def _check(name, args, kwargs, compile_) -> str | None:
  fn = resolve(name)
  eager, e_err = _run(fn, args, kwargs)
  if name in VALUE_SHAPED:
    return None
  # Arrays are jit's arguments; Python scalars are closed over (as jit
  # arguments they would be int32/float32 values, which 2**40 overflows).
  arrays = [a for a in args if isinstance(a, np.ndarray)]

  def call(*a):
    it = iter(a)
    return fn(*[next(it) if isinstance(x, np.ndarray) else x for x in args], **kwargs)
  with jax.config.override("openjax_executor", "interpreter"):
    interp, i_err = _run(jax.jit(call), arrays, {})
  if isinstance(e_err, JAX_EAGER_ONLY_ERRORS.get(name, ())) and i_err is None:
    return None
  if (e_err is None) != (i_err is None):
    return f"eager {'raised ' + repr(e_err) if e_err else 'ran'}, jit (interpreted) " \
                 f"{'raised ' + repr(i_err) if i_err else 'ran'}"
  if e_err is not None:
    STATS["raised"] += 1
    return None
  STATS["jit"] += 1
  problem = _compare(eager, interp, "eager vs jit (interpreted)")
  if problem:
    return problem
  # Compiled CPU code flushes subnormals to zero, as JAX's jit on the CPU
  # does (tests/test_edge19.py holds JAX 0.10.2's values); the interpreter
  # keeps them (NumPy): the compiled column skips subnormal operands. IREE (as
  # XLA: JAX 0.10.2 gives 0 too) computes convert(bool) * x as a select, so
  # False * NaN is 0 compiled where the interpreter (NumPy) gives NaN.
  if compile_ and not _has_subnormal(args) and not _bool_times_nonfinite(args):
    with jax.config.override("openjax_executor", "iree"), \
         jax.config.override("openjax_tiered_compilation", False):
      compiled, c_err = _run(jax.jit(call), arrays, {})
    STATS["compiled"] += 1
    if c_err is not None:
      return f"jit (compiled) raised {c_err!r} where interpreted ran"
    problem = _compare(interp, compiled, "jit (interpreted) vs jit (compiled)", 50.0)
    if problem:
      return problem
  ref = numpy_ref(name)
  if name in NUMPY_EXACT and ref is not None and all(
      isinstance(a, np.ndarray) and a.dtype == args[0].dtype and a.dtype.kind == "f"
      for a in args):
    try:
      with np.errstate(all="ignore"):
        expected = ref(*args, **kwargs)
    except Exception:  # noqa: BLE001 - NumPy refuses what JAX accepts: no reference
      return None
    expected = np.asarray(expected)
    got = _leaves(eager)[0]
    if expected.dtype.kind == got.dtype.kind or (expected.dtype.kind in "iu"
                                                 and got.dtype.kind in "iu"):
      STATS["numpy"] += 1
      problem = _compare(got, expected.astype(got.dtype), "eager vs NumPy")
      if problem:
        return problem
  return None


def main(argv=None) -> int:
  p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
  p.add_argument("--seed", type=int, default=0)
  p.add_argument("--seconds", type=float, default=60.0)
  p.add_argument("--max-cases", type=int, default=None,
                 help="stop after this many cases (the time budget still applies)")
  p.add_argument("--case", type=int, default=None, help="run only this case")
  p.add_argument("--compile-every", type=int, default=4)
  p.add_argument("-v", "--verbose", action="store_true")
  opts = p.parse_args(argv)
  cases = [opts.case] if opts.case is not None else None
  failures, n, start = [], 0, time.monotonic()
  index = 0
  while True:
    if cases is not None:
      if not cases:
        break
      index = cases.pop()
    elif time.monotonic() - start > opts.seconds or (opts.max_cases is not None
                                                    and n >= opts.max_cases):
      break
    if opts.verbose:
      print(f"case {index} ...", flush=True)
    desc, problem = run_case(opts.seed, index, opts.case is not None
                             or index % opts.compile_every == 0)
    if opts.verbose:
      print(f"  {desc}: {problem or 'ok'}", flush=True)
    if problem:
      failures.append(f"seed {opts.seed} case {index}: {desc}: {problem}")
    n += 1
    index += 1
  print(f"fuzz_jnp: {n} cases ({STATS['raised']} raised alike, {STATS['jit']} compared "
        f"jitted, {STATS['compiled']} compiled, {STATS['numpy']} against NumPy), "
        f"{len(failures)} failures, {time.monotonic() - start:.1f} s")
  for f in failures:
    print(f)
  return 1 if failures else 0


if __name__ == "__main__":
  sys.exit(main())
