"""StableHLO lowerings of the special functions IREE has no (right) ``chlo``
op for: ``lgamma`` and ``digamma`` (IREE's lose up to all digits near
their zeros and poles), ``bessel_i0e``, ``zeta`` (IREE's chlo.zeta is NaN
for negative non-integer q), ``igamma``, ``igammac`` and the incomplete
beta function (the gamma functions' a-derivatives are ``gamma_lowering``'s).

They run the float64 algorithms of ``special_numerics`` (the eager impls)
on float64 values and round back, so compiled and eager results agree to
float64 rounding. The algorithms are written against ``T``, a small tensor
wrapper that emits StableHLO for NumPy-style arithmetic, and ``iterate``,
which turns the impls' convergence loops into ``stablehlo.while``.
"""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.base.convert import lower_convert
from openjax._src.primitives.elementwise import elementwise_lowering
from openjax._src.primitives.elementwise.elementwise_lowering import (
    chlo, compare, const_like, op, operands_to_out, real_pow, select, shape_of, to_shape)
from openjax._src.primitives.elementwise.math_lowering import real_log1p
from openjax._src.primitives.elementwise.special_numerics import (
    _BESSEL_SPLIT, _DIGAMMA_ASYMPTOTIC, _EM_COEFS, _ERF_INV64, _HALF_LOG_2PI, _LANCZOS, _LANCZOS_G,
    _MAX_ITER, _TINY)

F64 = np.dtype(np.float64)
_EPS = float(np.finfo(np.float64).eps)


class T:
  """A float64 (or bool) tensor value with NumPy-style operators; Python
  scalars and rank-0 tensors broadcast."""
  __slots__ = ("ctx", "v", "dtype")

  def __init__(self, ctx, v, dtype=F64):
    self.ctx, self.v, self.dtype = ctx, v, np.dtype(dtype)

  @property
  def shape(self):
    return shape_of(self.v)

  def _lift(self, o):
    if isinstance(o, T):
      if o.shape != self.shape and not o.shape:
        return T(self.ctx, to_shape(self.ctx, o.v, self.shape), o.dtype)
      return o
    return T(self.ctx, const_like(self.ctx, self.v, o, self.dtype), self.dtype)

  def _bin(self, o, name, rev=False):
    o = self._lift(o)
    a = self
    if not self.shape and o.shape:
      a = T(self.ctx, to_shape(self.ctx, self.v, o.shape), self.dtype)
    x, y = (o, a) if rev else (a, o)
    return T(self.ctx, op(self.ctx, f"stablehlo.{name}", [x.v, y.v]), x.dtype)

  def _cmp(self, o, d):
    o = self._lift(o)
    a = self
    if not self.shape and o.shape:
      a = T(self.ctx, to_shape(self.ctx, self.v, o.shape), self.dtype)
    return T(self.ctx, compare(self.ctx, a.v, o.v, d, a.dtype), np.bool_)

  __add__ = lambda s, o: s._bin(o, "add")  # noqa: E731
  __radd__ = lambda s, o: s._bin(o, "add", True)  # noqa: E731
  __sub__ = lambda s, o: s._bin(o, "subtract")  # noqa: E731
  __rsub__ = lambda s, o: s._bin(o, "subtract", True)  # noqa: E731
  __mul__ = lambda s, o: s._bin(o, "multiply")  # noqa: E731
  __rmul__ = lambda s, o: s._bin(o, "multiply", True)  # noqa: E731
  __truediv__ = lambda s, o: s._bin(o, "divide")  # noqa: E731
  __rtruediv__ = lambda s, o: s._bin(o, "divide", True)  # noqa: E731
  __and__ = lambda s, o: s._bin(o, "and")  # noqa: E731
  __or__ = lambda s, o: s._bin(o, "or")  # noqa: E731
  __lt__ = lambda s, o: s._cmp(o, "LT")  # noqa: E731
  __le__ = lambda s, o: s._cmp(o, "LE")  # noqa: E731
  __gt__ = lambda s, o: s._cmp(o, "GT")  # noqa: E731
  __ge__ = lambda s, o: s._cmp(o, "GE")  # noqa: E731

  def eq(self, o):
    return self._cmp(o, "EQ")

  def ne(self, o):
    return self._cmp(o, "NE")

  def __neg__(self):
    return self._un("negate")

  def __invert__(self):
    return self._un("not")

  def _un(self, name):
    return T(self.ctx, op(self.ctx, f"stablehlo.{name}", [self.v]), self.dtype)


def _un(name):
  return lambda x: x._un(name)


log, exp, absolute, floor, sqrt, sin, cos = (
    _un(n) for n in ("log", "exponential", "abs", "floor", "sqrt", "sine", "cosine"))


def log1p(x):
  return T(x.ctx, real_log1p(x.ctx, x.v, F64))


def full_like(x, value):
  return T(x.ctx, const_like(x.ctx, x.v, value, F64))


def where(c, a, b):
  """``a`` where ``c`` else ``b``; Python scalars become float64 constants."""
  ctx = c.ctx
  shape = max((v.shape for v in (c, a, b) if isinstance(v, T)), key=len)

  def lift(v, dt=F64):
    if not isinstance(v, T):
      return T(ctx, ctx.full(v, shape, dt), dt)
    return v if v.shape == shape else T(ctx, to_shape(ctx, v.v, shape), v.dtype)
  c, a = lift(c, np.bool_), lift(a)
  b = lift(b, a.dtype)
  return T(ctx, select(ctx, c.v, a.v, b.v), a.dtype)


def isnan(x):
  return x.ne(x)


def isinf(x):
  return absolute(x).eq(np.inf)


def isfinite(x):
  return absolute(x) < np.inf


def isposinf(x):
  return x.eq(np.inf)


def copysign(m, s):
  return T(m.ctx, elementwise_lowering.copysign(m.ctx, m.v, s.v, F64))


def power(x, y):
  y = x._lift(y)
  return T(x.ctx, real_pow(x.ctx, x.v, y.v, F64))


def remainder(x, m):
  """Python's (floor) modulo."""
  return x - m * floor(x / m)


def any_true(c):
  """A rank-0 bool: whether any element of ``c`` is true."""
  ctx = c.ctx
  if not c.shape:
    return c
  body = L_scalar_or(ctx)
  out = ctx.op("stablehlo.reduce", [c.v, ctx.constant(np.asarray(False))], "tensor<i1>",
               attrs={"dimensions": tuple(range(len(c.shape)))}, regions=[body])
  return T(ctx, out, np.bool_)


def max_all(x):
  ctx = x.ctx
  if not x.shape:
    return x
  t = ctx.tensor_type((), F64)
  with ctx.region([t, t]) as r:
    ctx.ret([ctx.op("stablehlo.maximum", r.args, t)])
  out = ctx.op("stablehlo.reduce", [x.v, ctx.constant(np.asarray(-np.inf))], t,
               attrs={"dimensions": tuple(range(len(x.shape)))}, regions=[r])
  return T(ctx, out)


def L_scalar_or(ctx):
  t = "tensor<i1>"
  with ctx.region([t, t]) as r:
    ctx.ret([ctx.op("stablehlo.or", r.args, t)])
  return r


def while_loop(ctx, cond, body, init):
  """``stablehlo.while`` over a list of ``T``: ``cond(*state) -> rank-0 bool
  T``, ``body(*state) -> list of T``."""
  types = [s.v.type for s in init]
  dts = [s.dtype for s in init]
  with ctx.region(types) as rc:
    ctx.ret([cond(*[T(ctx, a, d) for a, d in zip(rc.args, dts)]).v])
  with ctx.region(types) as rb:
    outs = body(*[T(ctx, a, d) for a, d in zip(rb.args, dts)])
    ctx.ret([o.v for o in outs])
  res = ctx.op("stablehlo.while", [s.v for s in init], types, regions=[rc, rb])
  return [T(ctx, r, d) for r, d in zip(res, dts)]


def iterate(ctx, step, state, active, max_iter=_MAX_ITER):
  """The impls' ``_iterate``: ``step(state, i) -> (state, converged)`` on all
  elements until every active one converged (or ``max_iter``)."""
  i0 = T(ctx, ctx.constant(np.asarray(1.0)))
  n = len(state)

  def cond(i, act, *st):
    return any_true(act) & (i < float(max_iter))

  def body(i, act, *st):
    new, conv = step(tuple(st), i)
    return [i + 1.0, act & ~conv] + list(new)
  out = while_loop(ctx, cond, body, [i0, active] + list(state))
  return tuple(out[2:2 + n])


# --------------------------------------------------------- the algorithms
def sinpi(x):
  r = x - 2 * T(x.ctx, op(x.ctx, "stablehlo.round_nearest_even", [(x / 2).v]))
  a = absolute(r)
  a = where(a > 0.5, 1 - a, a)
  s = where(a <= 0.25, sin(np.pi * a), cos(np.pi * (0.5 - a)))
  return copysign(s, r)


def cospi(x):
  rr = x - 2 * T(x.ctx, op(x.ctx, "stablehlo.round_nearest_even", [(x / 2).v]))
  return sinpi(0.5 - absolute(rr))


def _lgamma_lanczos(x):
  z = x - 1
  a = full_like(x, _LANCZOS[0])
  for k in range(1, len(_LANCZOS)):
    a = a + _LANCZOS[k] / (z + k)
  t = z + _LANCZOS_G + 0.5
  log_t = math.log(_LANCZOS_G + 0.5) + log1p(z / (_LANCZOS_G + 0.5))
  return _HALF_LOG_2PI + (z + 0.5) * log_t - t + log(a)


def lgamma(x):
  reflect = x < 0.5
  lg = _lgamma_lanczos(where(reflect, 1 - x, x))
  reflected = math.log(math.pi) - log(absolute(sinpi(x))) - lg
  out = where(reflect, reflected, lg)
  return where(isinf(x), np.inf, out)


def digamma(x):
  reflect = x < 0.5
  z = where(reflect, 1 - x, x)
  acc = full_like(x, 0.0)
  for _ in range(10):
    small = z < 10
    acc = where(small, acc - 1 / z, acc)
    z = where(small, z + 1, z)
  inv2 = 1 / (z * z)
  series = full_like(x, 0.0)
  for c in reversed(_DIGAMMA_ASYMPTOTIC):
    series = (series + c) * inv2
  psi = acc + log(z) - 0.5 / z - series
  reflected = psi - np.pi * cospi(x) / sinpi(x)
  out = where(reflect, reflected, psi)
  pole = (x <= 0) & x.eq(floor(x))
  return where(pole | x.eq(-np.inf), np.nan, out)


def zeta(x, q):
  ctx = x.ctx
  q_int = q.eq(floor(q))
  x_int = x.eq(floor(x))
  neg = where(isfinite(q) & (q < 0), -q, 0.0)
  shift = T(ctx, op(ctx, "stablehlo.ceil", [max_all(neg).v]))
  shift = where(shift < 100_000.0, shift, 100_000.0)
  n = shift + 10.0
  safe_q = where(isfinite(q), q, 1.0)
  k0 = T(ctx, ctx.constant(np.asarray(0.0)))

  def body(k, s):
    base = safe_q + k
    term = where(base.eq(0), 0.0, power(where(base.eq(0), 1.0, base), -x))
    return [k + 1.0, s + term]
  _, s = while_loop(ctx, lambda k, s: k < n, body, [k0, full_like(x, 0.0)])
  w = safe_q + n
  wx = power(w, -x)
  s = s + w * wx / (x - 1) + 0.5 * wx
  rising = x
  w_pow = wx / w
  prev = full_like(x, np.inf)
  going = T(ctx, ctx.full(True, x.shape, np.bool_), np.bool_)
  for j, coef in enumerate(_EM_COEFS):
    term = coef * rising * w_pow
    going = going & (absolute(term) < absolute(prev))
    s = s + where(going, term, 0.0)
    prev = term
    rising = rising * (x + (2 * j + 1)) * (x + (2 * j + 2))
    w_pow = w_pow / (w * w)
  out = s
  out = where((x < 1) | ~isfinite(x) | ~isfinite(q), np.nan, out)
  pole = (q <= 0) & q_int
  even = x_int & remainder(x, 2.0).eq(0)
  out = where(pole, where(even & (x > 1), np.inf, np.nan), out)
  out = where((q < 0) & ~q_int & ~x_int, np.nan, out)
  # The pole at x == 1 comes first, whatever q is (XLA's, as JAX 0.10.2 gives).
  return where(x.eq(1), np.inf, out)


def _log_prefactor(a, x):
  return a * log(x) - x - lgamma(a)


def _gamma_series(a, x, active):
  def step(st, n):
    term, total = st
    term = term * x / (a + n)
    total = total + term
    return (term, total), absolute(term) <= _EPS * absolute(total)
  ones = full_like(a, 1.0)
  return iterate(a.ctx, step, (ones, ones), active)[1]


def _gamma_cf(a, x, active):
  tiny = _TINY
  b = x + 1 - a
  d = 1 / where(b.eq(0), tiny, b)
  c = full_like(a, 1 / tiny)
  h = d

  def step(st, i):
    b, c, d, h = st
    an = -i * (i - a)
    b = b + 2
    den = an * d + b
    d = 1 / where(absolute(den) < tiny, tiny, den)
    c_new = b + an / c
    c = where(absolute(c_new) < tiny, tiny, c_new)
    delta = d * c
    h = h * delta
    return (b, c, d, h), absolute(delta - 1) <= _EPS
  return iterate(a.ctx, step, (b, c, d, h), active)[3]


def _igamma_parts(a, x):
  valid = (a > 0) & (x > 0) & isfinite(a) & isfinite(x)
  a = where(valid, a, 1.0)
  x = where(valid, x, 1.0)
  use_series = (x < a + 1) | (x <= 1)
  log_pre = _log_prefactor(a, x)
  p_series = exp(log_pre - log(a)) * _gamma_series(a, x, valid & use_series)
  q_cf = exp(log_pre) * _gamma_cf(a, x, valid & ~use_series)
  p = where(use_series, p_series, 1 - q_cf)
  q = where(use_series, 1 - p_series, q_cf)
  return p, q


def _igamma_edges(a, x, out, at_zero_x, at_zero_a, at_inf_x):
  # As special_numerics._igamma_edges: x = 0 and x = inf decide first.
  out = where(isposinf(x) & (a > 0), at_inf_x, out)
  out = where(x.eq(0), at_zero_x, out)
  out = where(a.eq(0) & (x > 0), at_zero_a, out)
  bad = ((a < 0) | (x < 0) | (a.eq(0) & x.eq(0)) | (isinf(a) & (x > 0) & isfinite(x))
         | isnan(a) | isnan(x))
  return where(bad, np.nan, out)


def igamma(a, x):
  return _igamma_edges(a, x, _igamma_parts(a, x)[0], 0.0, 1.0, 1.0)


def igammac(a, x):
  return _igamma_edges(a, x, _igamma_parts(a, x)[1], 1.0, 0.0, 0.0)


def _beta_cf(a, b, x, active):
  tiny = _TINY
  qab, qap, qam = a + b, a + 1, a - 1
  d = 1 - qab * x / qap
  d = 1 / where(absolute(d) < tiny, tiny, d)
  c = full_like(a, 1.0)
  h = d

  def step(st, m):
    c, d, h = st
    m2 = 2 * m
    delta = None
    for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
               -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
      d = 1 + aa * d
      d = 1 / where(absolute(d) < tiny, tiny, d)
      c = 1 + aa / c
      c = where(absolute(c) < tiny, tiny, c)
      delta = d * c
      h = h * delta
    return (c, d, h), absolute(delta - 1) <= _EPS
  return iterate(a.ctx, step, (c, d, h), active)[2]


def betainc(a, b, x):
  valid = (a > 0) & (b > 0) & (x > 0) & (x < 1) & isfinite(a) & isfinite(b)
  sa, sb = where(valid, a, 1.0), where(valid, b, 1.0)
  sx = where(valid, x, 0.5)
  flip = sx > (sa + 1) / (sa + sb + 2)
  pa, pb, px = where(flip, sb, sa), where(flip, sa, sb), where(flip, 1 - sx, sx)
  log_front = pa * log(px) + pb * log1p(-px) - (lgamma(pa) + lgamma(pb) - lgamma(pa + pb))
  part = exp(log_front) * _beta_cf(pa, pb, px, valid) / pa
  out = where(flip, 1 - part, part)
  out = where(a.eq(0) & (b > 0), 1.0, out)
  out = where(b.eq(0) & (a > 0), 0.0, out)
  out = where(isposinf(a) & isfinite(b), 0.0, out)
  out = where(isposinf(b) & isfinite(a), 1.0, out)
  # x at an end of [0, 1] decides first (JAX: betainc(1, 0, 1) = 1, betainc(0, 2, 0) = 0).
  out = where(x.eq(0), 0.0, where(x.eq(1), 1.0, out))
  bad = (a < 0) | (b < 0) | (x < 0) | (x > 1) | (a.eq(0) & b.eq(0))
  return where(bad | isnan(a) | isnan(b) | isnan(x), np.nan, out)


def bessel_i0e(x):
  ax = absolute(x)
  small = ax <= _BESSEL_SPLIT
  xs = where(small, ax, 0.0)
  q = xs * xs / 4

  def step(st, k):
    term, total = st
    term = term * q / (k * k)
    total = total + term
    return (term, total), term <= _EPS * total
  ones = full_like(xs, 1.0)
  every = T(x.ctx, x.ctx.full(True, x.shape, np.bool_), np.bool_)
  _, total = iterate(x.ctx, step, (ones, ones), every, max_iter=200)
  series = exp(-xs) * total
  xl = where(small, _BESSEL_SPLIT + 1, ax)
  term, tot = full_like(xl, 1.0), full_like(xl, 1.0)
  for k in range(1, 40):
    term = term * (-(0.0 - (2 * k - 1) ** 2)) / (xl * (k * 8))
    tot = tot + term
  asym = tot / sqrt(2 * np.pi * xl)
  out = where(small, series, asym)
  out = where(isinf(ax), 0.0, out)
  return where(isnan(x), np.nan, out)


def erf_inv(x):
  """``num.erf_inv``'s double-precision approximation (float64 operands:
  IREE's ``chlo.erf_inv`` takes its float64 ``log_plus_one``, ~1e-10 off
  near |x| = 1)."""
  w = -log1p(-(x * x))
  p = full_like(x, 0.0)
  below = w.ne(w)
  for bound, shift, in_sqrt, coefs in _ERF_INV64:
    piece = ~below & (w < bound)
    below = below | piece
    t = (sqrt(w) if in_sqrt else w) - shift
    acc = full_like(x, coefs[0])
    for c in coefs[1:]:
      acc = acc * t + c
    p = where(piece, acc, p)
  out = where(absolute(x).eq(1.0), copysign(full_like(x, np.inf), x), x * p)
  return where(absolute(x) > 1.0, np.nan, out)


# ------------------------------------------------------------------ rules
def rule(fn):
  """A lowering rule evaluating ``fn`` on float64 copies of the operands
  (broadcast to the result shape) and rounding to the result dtype."""
  def lower(ctx, *args, **params):
    args = operands_to_out(ctx, args)
    ts = [T(ctx, lower_convert(ctx, a, av.dtype, F64)) for a, av in zip(args, ctx.avals_in)]
    out = fn(*ts)
    return [lower_convert(ctx, out.v, F64, ctx.avals_out[0].dtype)]
  return lower


def erf_inv_rule(ctx, x, **params):
  """``erf_inv``: JAX's lowering (``chlo.erf_inv``, Giles' single-precision
  polynomial) for float32 and narrower floats, the double-precision one
  written out for float64."""
  if np.dtype(ctx.avals_in[0].dtype) == F64:
    return rule(erf_inv)(ctx, x)
  return chlo("chlo.erf_inv")(ctx, x)


__all__ = ["rule", "erf_inv_rule", "bessel_i0e", "zeta", "igamma", "igammac", "betainc"]
