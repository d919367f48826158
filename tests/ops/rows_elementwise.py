"""Op-table rows for the elementwise lax primitives (unary math, binary
arithmetic, comparisons, bitwise ops, casts, select, clamp) and the special
functions, over float32/float16/bfloat16, integers, bool and complex64, with
edge values (signed zeros, infinities, NaN, extreme integers). SciPy is the
oracle for the special functions."""
import ml_dtypes
import numpy as np
from scipy import special as sp

from openjax import lax
from tests.ops.harness import OpRow

F32, F16, F64 = np.dtype(np.float32), np.dtype(np.float16), np.dtype(np.float64)
BF16 = np.dtype(ml_dtypes.bfloat16)
I8, I32, U8, U32 = (np.dtype(t) for t in (np.int8, np.int32, np.uint8, np.uint32))
BOOL, C64 = np.dtype(np.bool_), np.dtype(np.complex64)
FLOATS = (F32, F16, BF16)

_FLOAT_EDGES = [0.0, -0.0, 1.0, -1.5, 2.5, 0.75, -3.25, np.inf, -np.inf, np.nan]
_INT_EDGES = {I32: [0, 1, -1, 7, -8, 100, 2**31 - 1, -2**31], I8: [0, 1, -1, 7, -8, 100, 127, -128],
              U8: [0, 1, 2, 7, 100, 128, 254, 255], U32: [0, 1, 7, 2**31, 2**32 - 1, 5, 9, 3]}
_COMPLEX_EDGES = [0, 1 + 1j, -2.5 + 0.5j, 0.5 - 3j, -1j, 2, complex(np.inf, 0), complex(np.nan, 1)]


def sample(dtype, shape=(3, 4), edges=True, lo=-3.0, hi=3.0):
  """Random values of ``dtype`` with the dtype's edge values at the front."""
  dtype = np.dtype(dtype)

  def make(rng):
    if dtype == BOOL:
      x = rng.random(shape) < 0.5
      x.flat[:2] = (True, False)
      return x
    if dtype.kind in "iu":
      info = np.iinfo(dtype)
      x = rng.integers(max(info.min, -50), min(info.max, 50) + 1, shape).astype(dtype)
      e = _INT_EDGES[dtype]
    elif dtype.kind == "c":
      x = (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(dtype)
      e = _COMPLEX_EDGES
    else:
      x = rng.uniform(lo, hi, shape).astype(dtype)
      e = _FLOAT_EDGES
    if edges:
      n = min(len(e), x.size)
      x.flat[:n] = np.asarray(e[:n]).astype(dtype)
    return x
  return make


def args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


def via32(f, out=None):
  """A NumPy reference computed in float32 (complex64) for narrow floats and
  cast to ``out`` (default: the first operand's dtype)."""
  def ref(*xs):
    xs = [np.asarray(x) for x in xs]
    up = [x.astype(F32) if x.dtype in (F16, BF16) else x for x in xs]
    with np.errstate(all="ignore"):
      r = np.asarray(f(*up))
    return r.astype(out if out is not None else xs[0].dtype)
  return ref


ROWS = []


def add(name, fn, arg_maker, ref, **kw):
  ROWS.append(OpRow(name, fn, arg_maker, ref, **kw))


# ------------------------------------------------------------- unary math
_UNARY_FLOAT = {
    "exp": (lax.exp, np.exp), "exp2": (lax.exp2, np.exp2), "log": (lax.log, np.log),
    "log1p": (lax.log1p, np.log1p), "expm1": (lax.expm1, np.expm1),
    "tanh": (lax.tanh, np.tanh), "sin": (lax.sin, np.sin), "cos": (lax.cos, np.cos),
    "tan": (lax.tan, np.tan), "asin": (lax.asin, np.arcsin), "acos": (lax.acos, np.arccos),
    "atan": (lax.atan, np.arctan), "sinh": (lax.sinh, np.sinh), "cosh": (lax.cosh, np.cosh),
    "asinh": (lax.asinh, np.arcsinh), "acosh": (lax.acosh, np.arccosh),
    "atanh": (lax.atanh, np.arctanh), "sqrt": (lax.sqrt, np.sqrt),
    "rsqrt": (lax.rsqrt, lambda x: 1 / np.sqrt(x)),
    "logistic": (lax.logistic, lambda x: 1 / (1 + np.exp(-x))),
}
for name, (fn, ref) in _UNARY_FLOAT.items():
  for dt in FLOATS + (C64,):
    add(f"lax.{name}_{dt.name}", fn, args(sample(dt)), via32(ref))

for name, (fn, ref) in {"floor": (lax.floor, np.floor), "ceil": (lax.ceil, np.ceil),
                        "cbrt": (lax.cbrt, np.cbrt), "sign": (lax.sign, np.sign),
                        "neg": (lax.neg, np.negative)}.items():
  for dt in FLOATS:
    add(f"lax.{name}_{dt.name}", fn, args(sample(dt)), via32(ref))
for dt in (I32, I8):
  add(f"lax.sign_{dt.name}", lax.sign, args(sample(dt)), np.sign)
  add(f"lax.neg_{dt.name}", lax.neg, args(sample(dt)), np.negative)
  add(f"lax.abs_{dt.name}", lax.abs, args(sample(dt)), np.abs)
add("lax.sign_uint8", lax.sign, args(sample(U8)), np.sign)
add("lax.neg_uint8", lax.neg, args(sample(U8)), np.negative)
add("lax.sign_complex64", lax.sign, args(sample(C64, edges=False)), np.sign)
add("lax.neg_complex64", lax.neg, args(sample(C64)), np.negative)
for dt in FLOATS + (C64,):
  add(f"lax.abs_{dt.name}", lax.abs, args(sample(dt)), via32(np.abs, out=(F32 if dt == C64 else dt)))
  add(f"lax.square_{dt.name}", lax.square, args(sample(dt)), via32(np.square))
add("lax.square_int32", lax.square, args(sample(I32, edges=False)), np.square)
for dt in FLOATS:
  add(f"lax.is_finite_{dt.name}", lax.is_finite, args(sample(dt)), via32(np.isfinite, BOOL))
  add(f"lax.round_away_{dt.name}", lax.round,
      lambda rng, dt=dt: (np.array([0.5, 1.5, 2.5, -0.5, -2.5, np.nextafter(np.array(0.5, dt),
                                    np.array(0, dt)), 3.7, -0.0], dt),),
      lambda x: np.array([1, 2, 3, -1, -3, 0, 4, -0.0], x.dtype))
  add(f"lax.round_even_{dt.name}", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN),
      args(sample(dt)), via32(np.round))
add("lax.real_complex64", lax.real, args(sample(C64)), np.real)
add("lax.imag_complex64", lax.imag, args(sample(C64)), np.imag)
add("lax.conj_complex64", lax.conj, args(sample(C64)), np.conj)
add("lax.conj_float32", lax.conj, args(sample(F32)), lambda x: x.astype(C64))
add("lax.complex_float32", lax.complex, args(sample(F32), sample(F32, edges=False)),
    lambda x, y: (x + 1j * y.astype(C64)).astype(C64))
for dt in (I32, I8, U8, BOOL):
  add(f"lax.bitwise_not_{dt.name}", lax.bitwise_not, args(sample(dt)),
      np.logical_not if dt == BOOL else np.invert)
for dt in (I32, I8, U8):
  add(f"lax.population_count_{dt.name}", lax.population_count, args(sample(dt)),
      lambda x: np.bitwise_count(x.astype(f"u{x.dtype.itemsize}")).astype(x.dtype))
add("lax.clz_int32", lax.clz, lambda rng: (np.array([0, 1, -1, 7, 2**30, 255, 2**31 - 1], I32),),
    lambda x: np.array([32, 31, 0, 29, 1, 24, 1], I32))
add("lax.clz_uint8", lax.clz, lambda rng: (np.array([0, 1, 128, 255, 16], U8),),
    lambda x: np.array([8, 7, 0, 0, 3], U8))
for dt, exps in ((F32, (0, 1, 2, 3, -1, -2, 7)), (F16, (2, -3)), (BF16, (3,)), (C64, (2, -1)),
                 (I32, (0, 2, 3, 5))):
  for y in exps:
    add(f"lax.integer_pow_{dt.name}_{y}".replace("-", "m"), lambda x, y=y: lax.integer_pow(x, y),
        args(sample(dt, edges=dt.kind != "i")),
        via32(lambda x, y=y: np.power(x, y) if y >= 0 else 1 / np.power(x, -y)))
add("lax.reciprocal_float32", lax.reciprocal, args(sample(F32)), via32(lambda x: 1 / x))

# ---------------------------------------------------------- binary arithmetic
_BINARY = {"add": (lax.add, np.add), "sub": (lax.sub, np.subtract),
           "mul": (lax.mul, np.multiply), "max": (lax.max, np.maximum),
           "min": (lax.min, np.minimum)}
for name, (fn, ref) in _BINARY.items():
  for dt in FLOATS + (C64, I32, U8, I8):
    add(f"lax.{name}_{dt.name}", fn, args(sample(dt), sample(dt, edges=False)), via32(ref))
for name in ("max", "min"):
  add(f"lax.{name}_bool", _BINARY[name][0], args(sample(BOOL), sample(BOOL)), _BINARY[name][1])
add("lax.add_scalar_broadcast", lax.add, lambda rng: (sample(F32)(rng), np.float32(2.5)), np.add)
add("lax.mul_size1_broadcast", lax.mul, args(sample(F32, (1, 4)), sample(F32, (3, 1))),
    np.multiply)
add("lax.mul_out_dtype", lambda x, y: lax.mul(x, y, out_dtype=np.int32),
    args(sample(I8), sample(I8)), lambda x, y: x.astype(I32) * y.astype(I32))
for dt in FLOATS + (C64,):
  add(f"lax.div_{dt.name}", lax.div, args(sample(dt), sample(dt, edges=False)), via32(np.divide))
for dt in (I32, I8, U8):
  def _nonzero(rng, dt=dt):
    y = sample(dt, edges=False)(rng)
    return np.where(y == 0, 3, y).astype(dt)
  add(f"lax.div_{dt.name}", lax.div, args(sample(dt, edges=False), _nonzero),
      lambda x, y: (np.trunc(x.astype(F64) / y)).astype(x.dtype))
  add(f"lax.rem_{dt.name}", lax.rem, args(sample(dt, edges=False), _nonzero), np.fmod)
for dt in FLOATS:
  add(f"lax.rem_{dt.name}", lax.rem, args(sample(dt), sample(dt, edges=False)), via32(np.fmod))
  add(f"lax.atan2_{dt.name}", lax.atan2, args(sample(dt), sample(dt)), via32(np.arctan2))
  add(f"lax.nextafter_{dt.name}", lax.nextafter, args(sample(dt), sample(dt, edges=False)),
      np.nextafter if dt != F32 else np.nextafter, rtol=0, atol=0)
add("lax.atan2_complex64", lax.atan2,
    lambda rng: (np.array([1, 0.5], C64), np.array([2, -1], C64)),
    lambda x, y: np.arctan2(x.real, y.real).astype(C64))
add("lax.mulhi_int32", lax.mulhi,
    lambda rng: (np.array([-5, 7, 2**31 - 1, -2**31], I32), np.array([2**30, -3, 2**31 - 1, 3], I32)),
    lambda x, y: ((x.astype(np.int64) * y) >> 32).astype(I32))
add("lax.mulhi_uint32", lax.mulhi,
    lambda rng: (np.array([5, 2**32 - 1, 2**31], U32), np.array([2**30, 2**32 - 1, 4], U32)),
    lambda x, y: ((x.astype(np.uint64) * y) >> np.uint64(32)).astype(U32))
for dt in FLOATS:
  add(f"lax.pow_{dt.name}", lax.pow, args(sample(dt, lo=0.1, hi=3), sample(dt, edges=False)),
      via32(np.power))
  add(f"lax.pow_{dt.name}_int_exponent", lax.pow,
      args(sample(dt), lambda rng: rng.integers(-3, 4, (3, 4)).astype(I32)),
      via32(lambda x, y: np.power(x.astype(F64), y)))
add("lax.pow_complex64", lax.pow, args(sample(C64, edges=False), sample(C64, edges=False)),
    np.power, rtol=1e-4)

# ------------------------------------------------------- logic and bitwise
for name, (fn, ref) in {"bitwise_and": (lax.bitwise_and, np.bitwise_and),
                        "bitwise_or": (lax.bitwise_or, np.bitwise_or),
                        "bitwise_xor": (lax.bitwise_xor, np.bitwise_xor)}.items():
  for dt in (BOOL, I32, I8, U8):
    add(f"lax.{name}_{dt.name}", fn, args(sample(dt), sample(dt, edges=False)), ref)


def _shift_amounts(dt):
  bits = dt.itemsize * 8
  return lambda rng: np.array([0, 1, 3, bits - 1, bits, bits + 3, 2, 5], dt)


def _shift_ref(kind):
  def ref(x, y):
    bits = x.dtype.itemsize * 8
    u = x.astype(f"u{x.dtype.itemsize}")
    big = y.astype(f"u{x.dtype.itemsize}") >= bits
    s = np.where(big, 0, y).astype(x.dtype)
    if kind == "left":
      return np.where(big, 0, np.left_shift(x, s)).astype(x.dtype)
    if kind == "logical":
      return np.where(big, 0, np.right_shift(u, s.astype(u.dtype)).astype(x.dtype)).astype(x.dtype)
    fill = np.where(x < 0, -1, 0) if x.dtype.kind == "i" else 0
    return np.where(big, fill, np.right_shift(x, s)).astype(x.dtype)
  return ref


for dt in (I32, I8, U8):
  xs = lambda rng, dt=dt: (np.array(_INT_EDGES[dt], dt),)  # noqa: E731
  for name, fn, kind in (("shift_left", lax.shift_left, "left"),
                         ("shift_right_logical", lax.shift_right_logical, "logical"),
                         ("shift_right_arithmetic", lax.shift_right_arithmetic, "arith")):
    add(f"lax.{name}_{dt.name}", fn, args(lambda rng, dt=dt: np.array(_INT_EDGES[dt], dt),
                                          _shift_amounts(dt)), _shift_ref(kind))
add("lax.shift_left_negative_amount", lax.shift_left,
    lambda rng: (np.array([1, -1, 5], I32), np.array([-1, -32, 2], I32)),
    lambda x, y: np.array([0, 0, 20], I32))

# ----------------------------------------------------------- comparisons
for name, (fn, ref) in {"eq": (lax.eq, np.equal), "ne": (lax.ne, np.not_equal),
                        "lt": (lax.lt, np.less), "le": (lax.le, np.less_equal),
                        "gt": (lax.gt, np.greater), "ge": (lax.ge, np.greater_equal)}.items():
  for dt in FLOATS + (I32, U8, BOOL):
    def _pair(rng, dt=dt):
      x = sample(dt)(rng)
      y = sample(dt, edges=False)(rng)
      y.flat[::2] = x.flat[::2]       # equal elements too
      return x, y
    add(f"lax.{name}_{dt.name}", fn, _pair, via32(ref, BOOL))
add("lax.eq_complex64", lax.eq, args(sample(C64), sample(C64)), np.equal)
add("lax.ne_complex64", lax.ne, args(sample(C64), sample(C64)), np.not_equal)

# ------------------------------------------------------ casts, select, clamp
_CASTS = [(F32, I32), (F32, U8), (F32, BOOL), (I32, F32), (I32, U8), (F32, F16), (F32, BF16),
          (BF16, F16), (C64, F32), (BOOL, F32), (F16, C64), (U8, I8)]
for src, dst in _CASTS:
  def _cast_ref(x, dst=dst):
    with np.errstate(all="ignore"):
      if x.dtype.kind == "c" and dst.kind != "c":
        x = x.real
      if x.dtype.kind == "f" or x.dtype == BF16:
        if dst.kind in "iu":
          info = np.iinfo(dst)
          xf = x.astype(F64)
          return np.where(np.isnan(xf), 0, np.clip(np.trunc(xf), info.min, info.max)).astype(dst)
        if dst == BOOL:
          return x != 0
      if x.dtype == BF16 and dst == F16:
        return x.astype(F32).astype(dst)
      return x.astype(dst)
  add(f"lax.convert_element_type_{src.name}_{dst.name}",
      lambda x, dst=dst: lax.convert_element_type(x, dst),
      args(sample(src, lo=-400, hi=400)), _cast_ref)
add("lax.bitcast_convert_type_f32_i32", lambda x: lax.bitcast_convert_type(x, np.int32),
    args(sample(F32)), lambda x: x.view(np.int32))
add("lax.bitcast_convert_type_f32_u8", lambda x: lax.bitcast_convert_type(x, np.uint8),
    args(sample(F32, (3,))), lambda x: x.view(np.uint8).reshape(3, 4))
add("lax.bitcast_convert_type_u8_i32", lambda x: lax.bitcast_convert_type(x, np.int32),
    args(sample(U8, (2, 4))), lambda x: x.view(np.int32).reshape(2))
for dt, (e, m) in ((F32, (5, 10)), (F32, (8, 7)), (F32, (5, 0)), (F16, (4, 3))):
  def _rp_ref(x, e=e, m=m):
    if (e, m) == (8, 7):
      return x.astype(BF16).astype(x.dtype)
    if (e, m) == (5, 10):
      with np.errstate(over="ignore"):
        y = x.astype(F16).astype(x.dtype)
      return np.where(np.abs(x) < np.finfo(np.float16).tiny, np.copysign(0, x), y).astype(x.dtype)
    return None
  if dt == F32 and (e, m) in ((8, 7), (5, 10)):
    add(f"lax.reduce_precision_{dt.name}_{e}_{m}", lambda x, e=e, m=m: lax.reduce_precision(x, e, m),
        args(sample(dt, lo=-1e5, hi=1e5)), _rp_ref)
  else:
    add(f"lax.reduce_precision_{dt.name}_{e}_{m}", lambda x, e=e, m=m: lax.reduce_precision(x, e, m),
        args(sample(dt)), None)
add("lax.select_n_bool", lax.select_n, args(sample(BOOL), sample(F32), sample(F32)),
    lambda p, a, b: np.where(p, b, a))
add("lax.select_n_scalar_pred", lambda p, a, b: lax.select_n(p, a, b),
    lambda rng: (np.bool_(True), sample(I32)(rng), sample(I32)(rng)), lambda p, a, b: b)
add("lax.select_n_int32_3way", lax.select_n,
    args(lambda rng: rng.integers(0, 3, (3, 4)).astype(I32), sample(F32), sample(F32),
         sample(F32)), lambda w, a, b, c: np.choose(w, [a, b, c]))
add("lax.select_complex64", lax.select, args(sample(BOOL), sample(C64), sample(C64)), np.where)
for dt in (F32, I32, BF16):
  add(f"lax.clamp_{dt.name}", lax.clamp,
      lambda rng, dt=dt: (np.array(-1, dt), sample(dt)(rng), np.array(2, dt)),
      via32(lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), out=dt))
add("lax.clamp_arrays", lax.clamp, args(sample(F32, edges=False), sample(F32),
                                        lambda rng: np.full((3, 4), 5, F32)),
    lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi))

# ------------------------------------------------------- special functions
def _pos(dt, lo=0.05, hi=8.0, shape=(3, 4)):
  return lambda rng: rng.uniform(lo, hi, shape).astype(dt)


def _scipy(f, out=None):
  def ref(*xs):
    with np.errstate(all="ignore"):
      return np.asarray(f(*(np.asarray(x, F64) for x in xs))).astype(out or np.asarray(xs[0]).dtype)
  return ref


_SPECIAL_EDGES = [0.0, -0.0, 1.0, 2.0, -2.5, 0.5, np.inf, -np.inf, np.nan]


def _special_sample(dt):
  def make(rng):
    x = rng.uniform(-6, 12, (3, 4)).astype(dt)
    x.flat[:len(_SPECIAL_EDGES)] = np.asarray(_SPECIAL_EDGES, F64).astype(dt)
    return x
  return make


for dt in (F32, F16, BF16):
  n = dt.name
  add(f"lax.lgamma_{n}", lax.lgamma, args(_special_sample(dt)),   # XLA: lgamma(-inf) = inf
      _scipy(lambda x: np.where(x == -np.inf, np.inf, sp.gammaln(x))))
  add(f"lax.erf_{n}", lax.erf, args(_special_sample(dt)), _scipy(sp.erf))
  add(f"lax.erfc_{n}", lax.erfc, args(_special_sample(dt)), _scipy(sp.erfc))
  add(f"lax.bessel_i0e_{n}", lax.bessel_i0e, args(_special_sample(dt)), _scipy(sp.i0e))
  add(f"lax.bessel_i1e_{n}", lax.bessel_i1e, args(_special_sample(dt)), _scipy(sp.i1e))
  add(f"lax.erf_inv_{n}", lax.erf_inv,
      lambda rng, dt=dt: (np.concatenate([rng.uniform(-1, 1, 8), [0, -1, 1, 1.5, 0.999, np.nan,
                                                                   -0.5, 1e-3]]).astype(dt),),
      _scipy(sp.erfinv))
add("lax.digamma_float32", lax.digamma,
    lambda rng: (np.concatenate([rng.uniform(-6, 12, 8), [0.5, 1, -1.5, np.inf, 1e-3, 100.5, -2, 0]]
                                ).astype(F32),),
    lambda x: np.where((x <= 0) & (x == np.floor(x)), np.nan, sp.digamma(x)).astype(F32))
add("lax.digamma_float16", lax.digamma, args(_pos(F16)), _scipy(sp.digamma))
add("lax.digamma_bfloat16", lax.digamma, args(_pos(BF16)), _scipy(sp.digamma))
for dt in (F32, F16):
  n = dt.name
  add(f"lax.igamma_{n}", lax.igamma, args(_pos(dt, 0.05, 20), _pos(dt, 0.0, 30)),
      _scipy(sp.gammainc), atol=1e-12 if dt == F64 else None)
  add(f"lax.igammac_{n}", lax.igammac, args(_pos(dt, 0.05, 20), _pos(dt, 0.0, 30)),
      _scipy(sp.gammaincc), atol=1e-12 if dt == F64 else None)
  add(f"lax.betainc_{n}", lax.betainc, args(_pos(dt, 0.1, 30), _pos(dt, 0.1, 30), _pos(dt, 0, 1)),
      _scipy(sp.betainc), atol=1e-12 if dt == F64 else 1e-6)
  add(f"lax.zeta_{n}", lax.zeta, args(_pos(dt, 1.1, 12), _pos(dt, 0.1, 10)), _scipy(sp.zeta))
  add(f"lax.polygamma_{n}", lax.polygamma,
      args(lambda rng, dt=dt: rng.integers(0, 5, (3, 4)).astype(dt), _pos(dt, 0.1, 10)),
      _scipy(sp.polygamma), rtol=1e-4 if dt == F32 else None)
add("lax.igamma_edges", lax.igamma,
    lambda rng: (np.array([1, 0, -1, 1, 1, 2, 0, np.inf], F32),
                 np.array([0, 1, 1, -1, np.inf, np.nan, 0, 1], F32)),
    lambda a, x: np.array([0, 1, np.nan, np.nan, 1, np.nan, np.nan, np.nan], F32))
add("lax.igammac_edges", lax.igammac,
    lambda rng: (np.array([1, 0, -1, 1, 1, 2, 0], F32), np.array([0, 1, 1, -1, np.inf, np.nan, 0], F32)),
    lambda a, x: np.array([1, 0, np.nan, np.nan, 0, np.nan, np.nan], F32))
add("lax.zeta_poles", lax.zeta,
    lambda rng: (np.array([1, 0.5, 2, 3, 2, 3, 2.5, np.inf], F32),
                 np.array([1, 1, 0, 0, -1, -1.5, -1.5, 2], F32)),
    lambda x, q: np.array([np.inf, np.nan, np.inf, np.nan, np.inf, sp.zeta(3, -1.5), np.nan,
                           np.nan], F32))
add("lax.polygamma_noninteger_order", lax.polygamma,
    lambda rng: (np.array([1.5, -1, 1, 2], F32), np.array([1, 1, 0, 0], F32)),
    lambda m, x: np.array([np.nan, np.nan, np.inf, np.nan], F32))
add("lax.betainc_edges", lax.betainc,
    lambda rng: (np.array([1, 0, 1, -1, 1, 1, 2, 2], F32), np.array([1, 1, 0, 1, 1, 1, 2, 2], F32),
                 np.array([0.5, 0.5, 0.5, 0.5, -0.1, 1.1, 0, 1], F32)),
    lambda a, b, x: np.array([0.5, 1, 0, np.nan, np.nan, np.nan, 0, 1], F32))


def _fd_igamma_a(a, x, h=1e-6):
  a, x = a.astype(F64), x.astype(F64)
  return ((sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)).astype(F32)


add("lax.igamma_grad_a_float32", lax.igamma_grad_a, args(_pos(F32, 0.5, 10), _pos(F32, 0.1, 15)),
    _fd_igamma_a, atol=1e-5, rtol=1e-4)


def _gamma_sample_grad(a, x, h=1e-6):
  a, x = a.astype(F64), x.astype(F64)
  dp = (sp.gammainc(a + h, x) - sp.gammainc(a - h, x)) / (2 * h)
  density = np.exp((a - 1) * np.log(x) - x - sp.gammaln(a))
  return (-dp / density).astype(F32)


add("lax.random_gamma_grad_float32", lax.random_gamma_grad,
    args(_pos(F32, 0.5, 10), _pos(F32, 0.2, 15)), _gamma_sample_grad, atol=1e-4, rtol=1e-4)
add("lax.random_gamma_grad_zero", lax.random_gamma_grad,
    lambda rng: (np.array([0.5, 1, 3], F32), np.array([0, 0, 0], F32)),
    lambda a, x: np.zeros(3, F32))


# ------------------------------------------------- differentiable rows
# Float32 samples away from kinks, ties, poles and branch cuts: these rows run
# the JVP/VJP columns (finite differences in float64) and the vmap column.
# Complex arithmetic is differentiated through real-valued compositions.
def uni(lo, hi, shape=(2, 3)):
  return lambda rng: rng.uniform(lo, hi, shape).astype(F32)


def away(lo, hi, shape=(2, 3)):
  """Magnitudes in [lo, hi] with random signs."""
  return lambda rng: (rng.uniform(lo, hi, shape) * rng.choice([-1, 1], shape)).astype(F32)


def off_grid(shape=(2, 3)):
  """Values a quarter away from the integers and half-integers (floor/round steps)."""
  return lambda rng: (rng.integers(-3, 3, shape) + rng.uniform(0.1, 0.4, shape)).astype(F32)


def grad_row(name, fn, arg_maker, ref, **kw):
  add(f"{name}_grad", fn, arg_maker, ref, grad=True, **kw)


_GRAD_UNARY = {
    "exp": (lax.exp, np.exp, uni(-2, 2)), "exp2": (lax.exp2, np.exp2, uni(-2, 2)),
    "log": (lax.log, np.log, uni(0.5, 3)), "log1p": (lax.log1p, np.log1p, uni(-0.5, 2)),
    "expm1": (lax.expm1, np.expm1, uni(-2, 2)), "tanh": (lax.tanh, np.tanh, uni(-2, 2)),
    "logistic": (lax.logistic, lambda x: 1 / (1 + np.exp(-x)), uni(-3, 3)),
    "sin": (lax.sin, np.sin, uni(-3, 3)), "cos": (lax.cos, np.cos, uni(-3, 3)),
    "tan": (lax.tan, np.tan, uni(-1.2, 1.2)), "asin": (lax.asin, np.arcsin, uni(-0.8, 0.8)),
    "acos": (lax.acos, np.arccos, uni(-0.8, 0.8)), "atan": (lax.atan, np.arctan, uni(-3, 3)),
    "sinh": (lax.sinh, np.sinh, uni(-2, 2)), "cosh": (lax.cosh, np.cosh, uni(-2, 2)),
    "asinh": (lax.asinh, np.arcsinh, uni(-3, 3)), "acosh": (lax.acosh, np.arccosh, uni(1.3, 4)),
    "atanh": (lax.atanh, np.arctanh, uni(-0.8, 0.8)), "sqrt": (lax.sqrt, np.sqrt, uni(0.3, 4)),
    "rsqrt": (lax.rsqrt, lambda x: 1 / np.sqrt(x), uni(0.3, 4)),
    "cbrt": (lax.cbrt, np.cbrt, away(0.3, 4)), "abs": (lax.abs, np.abs, away(0.3, 3)),
    "square": (lax.square, np.square, uni(-3, 3)), "neg": (lax.neg, np.negative, uni(-3, 3)),
    "sign": (lax.sign, np.sign, away(0.3, 3)), "floor": (lax.floor, np.floor, off_grid()),
    "ceil": (lax.ceil, np.ceil, off_grid()), "round": (lax.round, np.round, off_grid()),
    "reciprocal": (lax.reciprocal, lambda x: 1 / x, away(0.5, 3)),
    "lgamma": (lax.lgamma, sp.gammaln, uni(0.5, 5)),
    "digamma": (lax.digamma, sp.digamma, uni(0.5, 5)),
    "erf": (lax.erf, sp.erf, uni(-2, 2)), "erfc": (lax.erfc, sp.erfc, uni(-2, 2)),
    "erf_inv": (lax.erf_inv, sp.erfinv, uni(-0.8, 0.8)),
    "bessel_i0e": (lax.bessel_i0e, sp.i0e, away(0.3, 4)),
    "bessel_i1e": (lax.bessel_i1e, sp.i1e, away(0.3, 4)),
}
for name, (fn, ref, maker) in _GRAD_UNARY.items():
  grad_row(f"lax.{name}", fn, args(maker), _scipy(ref, F32))
for y in (0, 1, 2, 3, -2):
  grad_row(f"lax.integer_pow_{y}".replace("-", "m"), lambda x, y=y: lax.integer_pow(x, y),
           args(away(0.5, 2)), lambda x, y=y: np.power(x.astype(F64), y).astype(x.dtype))


def _distinct_pair(rng, shape=(2, 3)):
  x = rng.uniform(-3, 3, shape).astype(F32)
  return x, (x + rng.uniform(0.3, 1, shape) * rng.choice([-1, 1], shape)).astype(F32)


def _rem_pair(rng, shape=(2, 3)):
  y = rng.uniform(1, 2, shape) * rng.choice([-1, 1], shape)
  x = (rng.integers(-3, 3, shape) + rng.uniform(0.2, 0.8, shape)) * y
  return x.astype(F32), y.astype(F32)


for name, fn, ref, maker in (
    ("add", lax.add, np.add, args(uni(-3, 3), uni(-3, 3))),
    ("sub", lax.sub, np.subtract, args(uni(-3, 3), uni(-3, 3))),
    ("mul", lax.mul, np.multiply, args(uni(-3, 3), uni(-3, 3))),
    ("div", lax.div, np.divide, args(uni(-3, 3), away(0.5, 3))),
    ("rem", lax.rem, np.fmod, _rem_pair),
    ("max", lax.max, np.maximum, _distinct_pair), ("min", lax.min, np.minimum, _distinct_pair),
    ("atan2", lax.atan2, np.arctan2, args(away(0.5, 2), away(0.5, 2))),
    ("pow", lax.pow, np.power, args(uni(0.5, 2), uni(-2, 2))),
    ("igamma", lambda x: lax.igamma(2.5, x), lambda x: sp.gammainc(2.5, x), args(uni(0.5, 5))),
    ("igammac", lambda x: lax.igammac(2.5, x), lambda x: sp.gammaincc(2.5, x),
     args(uni(0.5, 5))),
    ("betainc", lambda x: lax.betainc(2.0, 3.0, x), lambda x: sp.betainc(2, 3, x),
     args(uni(0.1, 0.9))),
    ("polygamma", lambda x: lax.polygamma(2.0, x), lambda x: sp.polygamma(2, x),
     args(uni(0.5, 5))),
):
  grad_row(f"lax.{name}", fn, maker, _scipy(ref, F32))
grad_row("lax.add_rank0_broadcast", lax.add, args(uni(-3, 3), uni(-3, 3, ())), np.add)
grad_row("lax.mul_size1_broadcast", lax.mul, args(uni(-3, 3, (1, 3)), uni(-3, 3, (2, 1))),
         np.multiply)
grad_row("lax.div_rank0_numerator", lax.div, args(uni(-3, 3, ()), away(0.5, 3)), np.divide)
grad_row("lax.pow_int_exponent", lax.pow,
         args(away(0.5, 2), lambda rng: rng.integers(-3, 4, (2, 3)).astype(I32)),
         lambda x, y: np.power(x.astype(F64), y).astype(F32))
grad_row("lax.pow_rank0_exponent", lax.pow, args(uni(0.5, 2), uni(-2, 2, ())), np.power)


def _clamp_args(rng, shape=(2, 3)):
  lo = rng.uniform(-1, 0, shape)
  hi = lo + rng.uniform(1.5, 2.5, shape)
  where = rng.integers(0, 3, shape)        # below, inside, above
  x = np.where(where == 0, lo - rng.uniform(0.3, 1, shape),
               np.where(where == 1, lo + rng.uniform(0.3, 1.2, shape), hi + 0.5))
  return lo.astype(F32), x.astype(F32), hi.astype(F32)


grad_row("lax.clamp", lax.clamp, _clamp_args, lambda lo, x, hi: np.clip(x, lo, hi))
grad_row("lax.clamp_scalar_bounds", lambda x: lax.clamp(-1.0, x, 1.0),
         args(away(0.2, 2)), lambda x: np.clip(x, -1, 1))
grad_row("lax.select_n", lax.select_n,
         args(sample(BOOL, (2, 3)), uni(-3, 3), uni(-3, 3)), lambda p, a, b: np.where(p, b, a))
grad_row("lax.select_n_int32_3way", lax.select_n,
         args(lambda rng: rng.integers(0, 3, (2, 3)).astype(I32), uni(-3, 3), uni(-3, 3),
              uni(-3, 3)), lambda w, a, b, c: np.choose(w, [a, b, c]))
grad_row("lax.select_scalar_pred", lambda x, y: lax.select(True, x, y),
         args(uni(-3, 3), uni(-3, 3)), lambda x, y: x)


def _complex_of(x):
  return np.result_type(np.dtype(x.dtype), np.complex64)


grad_row("lax.convert_element_type_complex_real",
         lambda x: lax.real(lax.convert_element_type(x, _complex_of(x))), args(uni(-3, 3)),
         lambda x: np.real(x.astype(_complex_of(x))))
grad_row("lax.convert_element_type_int_roundtrip",
         lambda x: lax.add(lax.convert_element_type(lax.convert_element_type(x, np.int32),
                                                    x.dtype), x),
         args(off_grid()), lambda x: np.trunc(x) + x)


def _complex_ops(x, y):
  # Every complex rule on one path: complex, real, imag, conj, mul, div,
  # exp, log, sin, sqrt, abs, integer_pow and pow with complex operands.
  z = lax.complex(x, y)
  w = lax.add(lax.mul(z, lax.conj(z)), lax.div(lax.exp(z), lax.add(z, lax.complex(3.0, 1.0))))
  w = lax.add(w, lax.mul(lax.log(z), lax.sin(z)))
  w = lax.add(w, lax.sqrt(lax.integer_pow(z, 2)))
  w = lax.add(w, lax.pow(z, lax.complex(0.5, 0.25)))
  return lax.add(lax.add(lax.real(w), lax.imag(w)), lax.abs(z))


def _complex_ops_ref(x, y):
  z = x.astype(np.complex128) + 1j * y
  w = z * np.conj(z) + np.exp(z) / (z + (3 + 1j)) + np.log(z) * np.sin(z) + np.sqrt(z ** 2)
  w = w + z ** (0.5 + 0.25j)
  return (w.real + w.imag + np.abs(z)).astype(F32)


grad_row("lax.complex_ops", _complex_ops, args(uni(0.5, 2), uni(0.5, 2)), _complex_ops_ref,
         rtol=1e-5)
grad_row("lax.complex_tanh_logistic",
         lambda x: lax.imag(lax.add(lax.tanh(lax.complex(x, x)), lax.logistic(lax.complex(x, x)))),
         args(uni(-1, 1)),
         lambda x: np.imag(np.tanh(x + 1j * x) + 1 / (1 + np.exp(-(x + 1j * x)))).astype(F32))


def cuni(lo=0.5, hi=1.5, shape=(2, 3)):
  """Complex samples in the square [lo, hi] + i[lo, hi] (off every branch cut)."""
  return lambda rng: (rng.uniform(lo, hi, shape) + 1j * rng.uniform(lo, hi, shape)).astype(C64)


_COMPLEX_UNARY = dict(_UNARY_FLOAT, abs=(lax.abs, np.abs), square=(lax.square, np.square),
                      neg=(lax.neg, np.negative), reciprocal=(lax.reciprocal, lambda z: 1 / z),
                      real=(lax.real, np.real), imag=(lax.imag, np.imag),
                      conj=(lax.conj, np.conj))   # (sign's JVP is zero even for complex, as JAX's)
for name, (fn, ref) in _COMPLEX_UNARY.items():
  grad_row(f"lax.{name}_complex64", fn, args(cuni()),
           via32(ref, out=F32 if name in ("abs", "real", "imag") else C64))
grad_row("lax.integer_pow_complex64", lambda z: lax.integer_pow(z, 3), args(cuni()),
         lambda z: z ** 3)
for name, fn, ref in (("add", lax.add, np.add), ("sub", lax.sub, np.subtract),
                      ("mul", lax.mul, np.multiply), ("div", lax.div, np.divide),
                      ("pow", lax.pow, np.power)):
  grad_row(f"lax.{name}_complex64", fn, args(cuni(), cuni()), ref, rtol=1e-5)
grad_row("lax.complex", lax.complex, args(uni(-3, 3), uni(-3, 3)),
         lambda x, y: (x + 1j * y.astype(C64)).astype(C64))
grad_row("lax.select_n_complex64", lax.select_n, args(sample(BOOL, (2, 3)), cuni(), cuni()),
         lambda p, a, b: np.where(p, b, a))
