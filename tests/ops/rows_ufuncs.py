"""Op-table rows for the ``jax.numpy`` elementwise functions (ufuncs) over
float32, float16, bfloat16, int32, uint8, bool and complex64 where the
function is defined, with NumPy as the oracle. Integer and boolean inputs of
float-valued functions give float32 (JAX's default float), where NumPy gives
float16 or float64. Division-by-zero and shift-width edge cases, whose integer
results differ from NumPy by design, are tested in ``tests/test_ufuncs.py``."""
import numpy as np
from scipy import special as sp

import openjax.numpy as jnp
from tests.ops.harness import OpRow
from tests.ops.rows_elementwise import BF16, BOOL, C64, F16, F32, F64, I32, I8, U8, args, sample

ROWS = []


def add(name, fn, arg_maker, ref, **kw):
  ROWS.append(OpRow(name, fn, arg_maker, ref, **kw))


def out_dtype(dt):
  """JAX's result dtype of a float-valued function of ``dt``."""
  return dt if dt in (F32, F16, BF16, C64) else F32


def ref(npf, out=None):
  """NumPy reference: narrow floats computed in float32, integers and bools in
  float64, the result cast to ``out`` (default: ``out_dtype`` of the first
  operand)."""
  def f(*xs):
    xs = [np.asarray(x) for x in xs]
    up = [x.astype(F32) if x.dtype in (F16, BF16) else
          x.astype(F64) if x.dtype.kind in "iub" else x for x in xs]
    with np.errstate(all="ignore"):
      r = npf(*up)
      if isinstance(r, tuple):
        return tuple(np.asarray(p).astype(out or out_dtype(xs[0].dtype)) for p in r)
      return np.asarray(r).astype(out or out_dtype(xs[0].dtype))
  return f


def quiet(npf):
  """``npf`` with NumPy's floating-point warnings silenced (edge values)."""
  def f(*xs):
    with np.errstate(all="ignore"):
      return npf(*xs)
  return f


def small(dt, shape=(3, 4), lo=-3, hi=4):
  """Small values (integers in [lo, hi), floats in [lo, hi]) with zero first."""
  def make(rng):
    if dt == BOOL:
      return sample(BOOL, shape)(rng)
    if dt.kind in "iu":
      x = rng.integers(max(lo, 0) if dt.kind == "u" else lo, hi, shape).astype(dt)
    elif dt.kind == "c":
      x = (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dt)
    else:
      x = rng.uniform(lo, hi, shape).astype(dt)
    x.flat[0] = 0
    return x
  return make


ALL = (F32, F16, BF16, I32, U8, BOOL, C64)
REAL = (F32, F16, BF16, I32, U8, BOOL)

# -------------------------------------------------------- float-valued unary
_INEXACT_UNARY = {
    "sqrt": np.sqrt, "exp": np.exp, "exp2": np.exp2, "expm1": np.expm1, "log": np.log,
    "log2": np.log2, "log10": np.log10, "log1p": np.log1p, "sin": np.sin, "cos": np.cos,
    "tan": np.tan, "arcsin": np.arcsin, "arccos": np.arccos, "arctan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "arcsinh": np.arcsinh,
    "arccosh": np.arccosh, "arctanh": np.arctanh, "asin": np.arcsin, "acos": np.arccos,
    "atan": np.arctan, "asinh": np.arcsinh, "acosh": np.arccosh, "atanh": np.arctanh,
    "deg2rad": np.deg2rad, "rad2deg": np.rad2deg, "degrees": np.degrees,
    "radians": np.radians, "reciprocal": lambda x: 1 / x, "sinc": np.sinc,
}
for name, npf in _INEXACT_UNARY.items():
  for dt in ALL:
    maker = sample(dt) if dt.kind in "fc" or dt == BF16 else small(dt)
    if name == "sinc" and dt in (F32, F16, BF16, C64):
      maker = small(dt)     # JAX's sinc(±inf) is 0, NumPy's is NaN
    if name in ("deg2rad", "rad2deg", "degrees", "radians") and dt == C64:
      scale = np.pi / 180 if name in ("deg2rad", "radians") else 180 / np.pi
      npf = lambda x, scale=scale: x * scale   # noqa: E731 - NumPy has no complex loop
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(maker), ref(npf))
for name, npf in {"cbrt": np.cbrt, "fabs": np.fabs, "rint": np.rint, "i0": np.i0}.items():
  for dt in REAL:
    maker = sample(dt) if dt.kind == "f" or dt == BF16 else small(dt)
    if name == "i0":
      maker = small(dt, lo=-5, hi=6)
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(maker), ref(npf))


def _spacing(x):
  x = np.asarray(x)
  if x.dtype.kind in "iub":
    x = x.astype(F32)
  with np.errstate(all="ignore"):
    out = np.nextafter(x, np.copysign(np.asarray(np.inf, x.dtype), x)) - x
  return np.where(out == 0, np.copysign(np.asarray(_TINIEST[x.dtype], x.dtype), x), out)


_TINIEST = {F32: 1e-45, BF16: 9.183549615799121e-41, F16: 6e-08}
for dt in (F32, BF16, I32, U8):    # (float16 follows JAX: it steps toward +inf)
  add(f"jnp.spacing_{dt.name}", jnp.spacing, args(sample(dt) if dt in (F32, BF16) else small(dt)),
      _spacing)
add("jnp.spacing_float16_positive", jnp.spacing, args(small(F16, lo=0.5, hi=100)), _spacing)
add("jnp.rint_complex64", jnp.rint, args(sample(C64)), np.rint)
add("jnp.arccosh_complex_branch", jnp.arccosh,
    lambda rng: (np.array([0.5, 2, -2 + 1j, -3 - 2j, 0.1j], C64),), np.arccosh)

# -------------------------------------------------- dtype-preserving unary
for dt in (F32, F16, BF16, I32, I8, U8, C64):
  add(f"jnp.negative_{dt.name}", jnp.negative, args(sample(dt)), ref(np.negative, dt))
  add(f"jnp.positive_{dt.name}", jnp.positive, args(sample(dt)), ref(np.positive, dt))
  add(f"jnp.square_{dt.name}", jnp.square, args(small(dt)), ref(np.square, dt))
  add(f"jnp.sign_{dt.name}", jnp.sign, args(sample(dt)), ref(np.sign, dt))
for dt in (F32, F16, BF16, I32, I8, U8, BOOL, C64):
  real_out = F32 if dt == C64 else dt
  add(f"jnp.abs_{dt.name}", jnp.abs, args(sample(dt)), ref(np.abs, real_out))
  add(f"jnp.absolute_{dt.name}", jnp.absolute, args(sample(dt)), ref(np.absolute, real_out))
add("jnp.square_bool", jnp.square, args(sample(BOOL)), lambda x: x.astype(I32))
for name in ("floor", "ceil", "trunc"):
  for dt in (F32, F16, BF16, I32, U8, BOOL):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(sample(dt)),
        ref(getattr(np, name), dt) if dt.kind == "f" or dt == BF16 else lambda x: x)
for dt in (F32, F16, BF16, I32, U8, BOOL, C64):
  add(f"jnp.real_{dt.name}", jnp.real, args(sample(dt)), ref(np.real, F32 if dt == C64 else dt))
  add(f"jnp.imag_{dt.name}", jnp.imag, args(sample(dt)), ref(np.imag, F32 if dt == C64 else dt))
  add(f"jnp.conj_{dt.name}", jnp.conj, args(sample(dt)), ref(np.conj, dt))
  add(f"jnp.conjugate_{dt.name}", jnp.conjugate, args(sample(dt)), ref(np.conjugate, dt))
  add(f"jnp.iscomplex_{dt.name}", jnp.iscomplex, args(sample(dt)), ref(np.iscomplex, BOOL))
  add(f"jnp.isreal_{dt.name}", jnp.isreal, args(sample(dt)), ref(np.isreal, BOOL))
  add(f"jnp.angle_{dt.name}", jnp.angle, args(sample(dt)),
      ref(np.angle, dt if dt in (F32, F16, BF16) else F32))
add("jnp.angle_deg", lambda z: jnp.angle(z, deg=True), args(sample(C64)),
    ref(lambda z: np.angle(z, deg=True), F32))

# --------------------------------------------------- float inspection
for dt in (F32, F16, BF16, I32, U8, BOOL, C64):
  for name in ("isnan", "isinf", "isfinite"):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(sample(dt)), ref(getattr(np, name), BOOL))
for dt in (F32, F16, BF16, I32, U8, BOOL):
  for name in ("isposinf", "isneginf", "signbit"):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(sample(dt)), ref(getattr(np, name), BOOL))
def _nan_to_num(x):
  info = np.finfo(F32) if x.dtype == C64 else np.finfo(x.dtype) if x.dtype != BF16 else None
  big = info.max if info is not None else 3.3895313892515355e38
  with np.errstate(all="ignore"):
    return np.nan_to_num(x.astype(np.complex128 if x.dtype == C64 else F64), posinf=big,
                         neginf=-big).astype(x.dtype)


for dt in (F32, F16, BF16, C64):
  add(f"jnp.nan_to_num_{dt.name}", jnp.nan_to_num, args(sample(dt)), _nan_to_num)
add("jnp.nan_to_num_values", lambda x: jnp.nan_to_num(x, nan=1.5, posinf=7, neginf=-7.0),
    args(sample(F32)), lambda x: np.nan_to_num(x, nan=1.5, posinf=7, neginf=-7.0))
add("jnp.nan_to_num_int32", jnp.nan_to_num, args(sample(I32)), lambda x: x)
for dt in (F32, F16, BF16):
  add(f"jnp.frexp_{dt.name}", jnp.frexp, args(sample(dt)),
      lambda x: (np.frexp(x.astype(F32))[0].astype(x.dtype), np.frexp(x.astype(F32))[1]))
  add(f"jnp.modf_{dt.name}", jnp.modf, args(small(dt)), ref(np.modf, dt))   # JAX: modf(inf) is NaN
  add(f"jnp.ldexp_{dt.name}", jnp.ldexp,
      args(sample(dt), lambda rng: rng.integers(-5, 6, (3, 4)).astype(I32)),
      lambda x, e: np.ldexp(x.astype(F32), e).astype(x.dtype))
add("jnp.frexp_int32", jnp.frexp, args(small(I32)),
    lambda x: (np.frexp(x.astype(F32))[0], np.frexp(x.astype(F32))[1]))
# Compiled CPU code flushes float32 subnormals; frexp reads them from their
# bits (JAX 0.10.2's XLA returns (+-0.5, -149) for all three).
add("jnp.frexp_subnormal", jnp.frexp, lambda rng: (np.array([1e-40, -3e-42, 1e-45], F32),),
    lambda x: np.frexp(x))
add("jnp.ldexp_overflow", jnp.ldexp, lambda rng: (np.array([1, 1.5, 3, 0], F32),
                                                  np.array([200, -140, 128, 5], I32)),
    quiet(np.ldexp))
add("jnp.modf_int32", jnp.modf, args(small(I32)), ref(np.modf, F32))

# ------------------------------------------------------------- binary
def pair(dt, lo=-3, hi=4, nonzero=False):
  def make(rng):
    x = (sample(dt) if dt.kind in "fc" or dt == BF16 else small(dt, lo=lo, hi=hi))(rng)
    y = small(dt, lo=lo, hi=hi)(rng)
    if nonzero:
      y = np.where(y == 0, np.asarray(2).astype(dt), y).astype(dt)
    return x, y
  return make


for name, npf in {"add": np.add, "multiply": np.multiply, "maximum": np.maximum,
                  "minimum": np.minimum, "equal": np.equal, "not_equal": np.not_equal,
                  "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
                  "greater_equal": np.greater_equal}.items():
  compare = name not in ("add", "multiply", "maximum", "minimum")
  for dt in ALL:
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt),
        ref(npf, BOOL if compare else dt))
for dt in (F32, F16, BF16, I32, U8, C64):
  add(f"jnp.subtract_{dt.name}", jnp.subtract, pair(dt), ref(np.subtract, dt))
for name, npf in {"divide": np.divide, "true_divide": np.true_divide}.items():
  for dt in ALL:
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt, nonzero=dt.kind in "iub"),
        ref(npf))
for name, npf in {"floor_divide": np.floor_divide, "remainder": np.remainder,
                  "mod": np.mod, "fmod": np.fmod}.items():
  for dt in (F32, F16, BF16, I32, I8, U8):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt, nonzero=True), ref(npf, dt))
for dt in (F32, F16, I32, U8):
  add(f"jnp.divmod_{dt.name}", jnp.divmod, pair(dt, nonzero=True), ref(np.divmod, dt))
add("jnp.divmod_by_zero_float", jnp.divmod,
    lambda rng: (np.array([1.0, -1.0, 0.0, np.inf, 5.0], F32), np.zeros(5, F32)),
    lambda x, y: (np.array([np.inf, -np.inf, np.nan, np.inf, np.inf], F32),
                  np.array([np.nan] * 5, F32)))
for name, npf in {"fmax": np.fmax, "fmin": np.fmin}.items():
  for dt in (F32, F16, BF16, I32, C64):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt), ref(npf, dt))
for name, npf in {"arctan2": np.arctan2, "atan2": np.arctan2, "hypot": np.hypot,
                  "logaddexp": np.logaddexp, "logaddexp2": np.logaddexp2,
                  "copysign": np.copysign, "heaviside": np.heaviside}.items():
  for dt in REAL:
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt), ref(npf))
add("jnp.logaddexp_infinities", jnp.logaddexp,
    lambda rng: (np.array([1.0, -np.inf, np.inf, np.inf, np.nan], F32),
                 np.array([2.0, -np.inf, np.inf, -np.inf, 1.0], F32)), quiet(np.logaddexp))
add("jnp.logaddexp_complex64", jnp.logaddexp, args(small(C64), small(C64)),
    lambda x, y: np.log(np.exp(x.astype(np.complex128)) + np.exp(y)).astype(C64), atol=1e-5,
    rtol=1e-4)
add("jnp.hypot_extremes", jnp.hypot,
    lambda rng: (np.array([3e38, 1e-40, np.inf, np.nan, 0], F32),
                 np.array([3e38, 1e-40, np.nan, np.inf, 0], F32)), quiet(np.hypot))
for dt in (F32, F16, BF16):
  add(f"jnp.nextafter_{dt.name}", jnp.nextafter, pair(dt), np.nextafter, atol=0, rtol=0)
for dt in (F32, F16, BF16, C64):
  add(f"jnp.power_{dt.name}", jnp.power, pair(dt, lo=0, hi=3), ref(np.power, dt))
  add(f"jnp.float_power_{dt.name}", jnp.float_power, pair(dt, lo=0, hi=3), ref(np.power, dt))
for dt in (I32, U8, I8):
  add(f"jnp.power_{dt.name}", jnp.power, pair(dt, lo=0, hi=5), ref(np.power, dt))
  add(f"jnp.pow_{dt.name}", jnp.pow, pair(dt, lo=0, hi=5), ref(np.power, dt))
add("jnp.power_bool", jnp.power, pair(BOOL), lambda x, y: np.power(x.astype(I32), y))
add("jnp.power_static_int", lambda x: jnp.power(x, 3), args(sample(F32)), lambda x: x ** 3)
add("jnp.power_static_negative", lambda x: jnp.power(x, -2), args(sample(F16)),
    ref(lambda x: x ** -2.0, F16))
add("jnp.power_int_static", lambda x: jnp.power(x, 4), args(small(I32)), lambda x: x ** 4)
add("jnp.power_float_int_array", jnp.power,
    args(sample(F32), lambda rng: rng.integers(-3, 4, (3, 4)).astype(I32)),
    quiet(lambda x, y: np.power(x.astype(F64), y).astype(F32)))
add("jnp.power_int_overflow_parity", jnp.power,
    lambda rng: (np.array([-1, -1, 1, 2, 0, 0], I32), np.array([64, 65, 1000, 30, 0, 5], I32)),
    lambda x, y: np.array([1, -1, 1, 2**30, 1, 0], I32))
add("jnp.float_power_int32", jnp.float_power, pair(I32, lo=0, hi=4), ref(np.power))
for dt in (I32, U8, I8):
  add(f"jnp.gcd_{dt.name}", jnp.gcd, pair(dt, lo=-30, hi=60), np.gcd)
  add(f"jnp.lcm_{dt.name}", jnp.lcm, pair(dt, lo=-12, hi=12), np.lcm)
add("jnp.gcd_fibonacci", jnp.gcd,
    lambda rng: (np.array([1836311903, 1134903170, 0, 2**31 - 1], I32),
                 np.array([1134903170, 1836311903, 0, 6], I32)), np.gcd)

# ----------------------------------------------------- logic and bitwise
for name, npf in {"logical_and": np.logical_and, "logical_or": np.logical_or,
                  "logical_xor": np.logical_xor}.items():
  for dt in (BOOL, I32, F32, C64):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt), ref(npf, BOOL))
for dt in (BOOL, I32, F32, C64, U8):
  add(f"jnp.logical_not_{dt.name}", jnp.logical_not, args(sample(dt)), ref(np.logical_not, BOOL))
for name, npf in {"bitwise_and": np.bitwise_and, "bitwise_or": np.bitwise_or,
                  "bitwise_xor": np.bitwise_xor}.items():
  for dt in (BOOL, I32, I8, U8):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), pair(dt, lo=-100, hi=100), npf)
for name in ("invert", "bitwise_not", "bitwise_invert"):
  for dt in (BOOL, I32, I8, U8):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name), args(sample(dt)), np.invert)
for dt in (I32, I8, U8, BOOL):
  add(f"jnp.bitwise_count_{dt.name}", jnp.bitwise_count, args(sample(dt)),
      lambda x: np.bitwise_count(x.astype(I32) if x.dtype == BOOL else x))
for name, npf in {"left_shift": np.left_shift, "bitwise_left_shift": np.left_shift,
                  "right_shift": np.right_shift, "bitwise_right_shift": np.right_shift}.items():
  for dt in (I32, I8, U8):
    add(f"jnp.{name}_{dt.name}", getattr(jnp, name),
        args(small(dt, lo=-100, hi=100), lambda rng, dt=dt: rng.integers(0, 7, (3, 4)).astype(dt)),
        npf)

# ------------------------------------------------------------ interp
def _interp_args(rng):
  xp = np.sort(rng.uniform(-3, 3, 6)).astype(F32)
  fp = rng.standard_normal(6).astype(F32)
  x = np.concatenate([rng.uniform(-4, 4, 6), xp[:2]]).astype(F32)
  return x, xp, fp


add("jnp.interp", jnp.interp, _interp_args, np.interp)
add("jnp.interp_left_right", lambda x, xp, fp: jnp.interp(x, xp, fp, left=-9.0, right=9.0),
    _interp_args, lambda x, xp, fp: np.interp(x, xp, fp, left=-9.0, right=9.0))
add("jnp.interp_period", lambda x, xp, fp: jnp.interp(x, xp, fp, period=2.0), _interp_args,
    lambda x, xp, fp: np.interp(x, xp, fp, period=2.0).astype(F32))
add("jnp.interp_int", jnp.interp,
    lambda rng: (np.array([0, 1, 2, 5], I32), np.array([0, 2, 4], I32), np.array([1, 3, 7], I32)),
    lambda x, xp, fp: np.interp(x, xp, fp).astype(F32))
add("jnp.i0_scipy", jnp.i0, args(small(F32, lo=-20, hi=20)), lambda x: sp.i0(x.astype(F64)))


# ------------------------------------------------- differentiable rows
# Float32 samples away from kinks, ties, poles and branch cuts, for the JVP/VJP
# columns (finite differences in float64) and the vmap column.
def uni(lo, hi, shape=(2, 3)):
  return lambda rng: rng.uniform(lo, hi, shape).astype(F32)


def away(lo, hi, shape=(2, 3)):
  """Magnitudes in [lo, hi] with random signs."""
  return lambda rng: (rng.uniform(lo, hi, shape) * rng.choice([-1, 1], shape)).astype(F32)


def off_grid(shape=(2, 3)):
  """Values well away from the integers and half-integers."""
  return lambda rng: (rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape)).astype(F32)


def grad_row(name, fn, arg_maker, npf, **kw):
  add(f"jnp.{name}_grad", fn, arg_maker, ref(npf, F32), grad=True, **kw)


_GRAD_UNARY = {
    "sqrt": uni(0.3, 4), "exp": uni(-2, 2), "exp2": uni(-2, 2), "expm1": uni(-2, 2),
    "log": uni(0.3, 4), "log2": uni(0.3, 4), "log10": uni(0.3, 4), "log1p": uni(-0.5, 3),
    "sin": uni(-3, 3), "cos": uni(-3, 3), "tan": uni(-1.2, 1.2), "arcsin": uni(-0.8, 0.8),
    "arccos": uni(-0.8, 0.8), "arctan": uni(-3, 3), "sinh": uni(-2, 2), "cosh": uni(-2, 2),
    "tanh": uni(-2, 2), "arcsinh": uni(-3, 3), "arccosh": uni(1.3, 4),
    "arctanh": uni(-0.8, 0.8), "deg2rad": uni(-90, 90), "rad2deg": uni(-3, 3),
    "reciprocal": away(0.5, 3), "sinc": away(0.2, 2.5), "cbrt": away(0.3, 4),
    "fabs": away(0.3, 3), "i0": away(0.3, 4), "negative": uni(-3, 3), "positive": uni(-3, 3),
    "square": uni(-3, 3), "sign": away(0.3, 3), "abs": away(0.3, 3), "floor": off_grid(),
    "ceil": off_grid(), "trunc": off_grid(), "rint": off_grid(), "real": uni(-3, 3),
    "imag": uni(-3, 3), "conj": uni(-3, 3), "angle": away(0.5, 3), "nan_to_num": uni(-3, 3),
}
for name, maker in _GRAD_UNARY.items():
  grad_row(name, getattr(jnp, name), args(maker), getattr(np, name))
grad_row("sinc_at_zero", jnp.sinc, lambda rng: (np.zeros((2, 3), F32),), np.sinc)
grad_row("power_static_int", lambda x: jnp.power(x, 3), args(uni(-2, 2)), lambda x: x ** 3)
grad_row("power_static_negative", lambda x: jnp.power(x, -2), args(away(0.5, 2)),
         lambda x: x ** -2.0)
grad_row("power_int_array", jnp.power,
         args(away(0.5, 2), lambda rng: rng.integers(-3, 4, (2, 3)).astype(I32)),
         lambda x, y: np.power(x, y.astype(F64)))
grad_row("modf", jnp.modf, args(off_grid()), np.modf)
grad_row("frexp_mantissa", lambda x: jnp.frexp(x)[0], args(away(0.3, 20)),
         lambda x: np.frexp(x)[0])
grad_row("ldexp", jnp.ldexp, args(away(0.3, 20), lambda rng: rng.integers(-3, 4, (2, 3))
                                  .astype(I32)), lambda x, e: np.ldexp(x, e.astype(np.int64)))


def _distinct(rng, shape=(2, 3)):
  x = rng.uniform(-3, 3, shape).astype(F32)
  return x, (x + rng.uniform(0.3, 1, shape) * rng.choice([-1, 1], shape)).astype(F32)


def _mod_pair(rng, shape=(2, 3)):
  y = rng.uniform(1, 2, shape) * rng.choice([-1, 1], shape)
  x = (rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)) * y
  return x.astype(F32), y.astype(F32)


_GRAD_BINARY = {
    "add": args(uni(-3, 3), uni(-3, 3)), "subtract": args(uni(-3, 3), uni(-3, 3)),
    "multiply": args(uni(-3, 3), uni(-3, 3)), "divide": args(uni(-3, 3), away(0.5, 3)),
    "true_divide": args(uni(-3, 3), away(0.5, 3)), "floor_divide": _mod_pair,
    "remainder": _mod_pair, "mod": _mod_pair, "fmod": _mod_pair, "maximum": _distinct,
    "minimum": _distinct, "fmax": _distinct, "fmin": _distinct,
    "arctan2": args(away(0.5, 2), away(0.5, 2)), "hypot": _distinct,
    "logaddexp": args(uni(-3, 3), uni(-3, 3)), "logaddexp2": args(uni(-3, 3), uni(-3, 3)),
    "copysign": args(away(0.3, 3), away(0.3, 3)), "heaviside": args(away(0.3, 3), uni(0, 1)),
    "power": args(uni(0.5, 2), uni(-2, 2)), "float_power": args(uni(0.5, 2), uni(-2, 2)),
}
for name, maker in _GRAD_BINARY.items():
  grad_row(name, getattr(jnp, name), maker, getattr(np, name))
grad_row("divmod", jnp.divmod, _mod_pair, np.divmod)
grad_row("logaddexp_ties", jnp.logaddexp, lambda rng: (uni(-3, 3)(rng),) * 2, np.logaddexp)
grad_row("multiply_broadcast", jnp.multiply, args(uni(-3, 3, (3,)), uni(-3, 3, (2, 1))),
         np.multiply)
grad_row("add_scalar", lambda x: jnp.add(x, 2.5), args(uni(-3, 3)), lambda x: x + 2.5)
grad_row("interp", jnp.interp,
         lambda rng: (rng.uniform(-2.5, 2.5, 5).astype(F32), np.linspace(-3, 3, 6).astype(F32),
                      rng.standard_normal(6).astype(F32)), np.interp)


def cuni(lo=0.5, hi=1.5, shape=(2, 3)):
  """Complex samples in the square [lo, hi] + i[lo, hi] (off every branch cut)."""
  return lambda rng: (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(C64)


for name in ("sqrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos", "tan",
             "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh", "arccosh",
             "arctanh", "reciprocal", "square", "negative", "abs", "real", "imag", "conj",
             "angle", "sinc"):
  out = F32 if name in ("abs", "real", "imag", "angle") else C64
  add(f"jnp.{name}_complex64_grad", getattr(jnp, name), args(cuni()),
      ref(getattr(np, name), out), grad=True)
for name in ("add", "subtract", "multiply", "divide", "power", "logaddexp"):
  npf = getattr(np, name) if name != "logaddexp" else \
      lambda a, b: np.log(np.exp(a) + np.exp(b))
  add(f"jnp.{name}_complex64_grad", getattr(jnp, name), args(cuni(), cuni()), ref(npf, C64),
      grad=True, rtol=1e-5)
