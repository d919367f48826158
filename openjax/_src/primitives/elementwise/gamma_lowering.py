"""StableHLO lowerings of ``igamma_grad_a`` and ``random_gamma_grad``:
``gamma_kernels``' algorithm (JAX's, in the operands' precision), its
loops as ``stablehlo.while`` over all elements with a per-element running
mask. The algorithm is written against ``V``, a tensor value of one dtype
with NumPy-style operators."""
from __future__ import annotations

import math

import numpy as np

from openjax._src.primitives.elementwise import gamma_kernels
from openjax._src.primitives.elementwise.elementwise_lowering import (
    compare, const_like, downcast, op, operands_to_out, select, shape_of, to_shape, upcast)
from openjax._src.primitives.elementwise.gamma_kernels import (
    LANCZOS, LANCZOS_BASE, LANCZOS_G, MAX_CF_TERMS)

F32, F64 = gamma_kernels.F32, gamma_kernels.F64


class V:
  """A tensor value of one float (or int/bool) dtype with NumPy-style
  operators; Python and NumPy scalars become constants of that dtype."""
  __slots__ = ("ctx", "v", "dtype")

  def __init__(self, ctx, v, dtype):
    self.ctx, self.v, self.dtype = ctx, v, np.dtype(dtype)

  def c(self, value, dtype=None):
    return V(self.ctx, const_like(self.ctx, self.v, value, dtype or self.dtype),
             dtype or self.dtype)

  def _v(self, o):
    return o if isinstance(o, V) else self.c(o)

  def _bin(self, name, a, b):
    return V(self.ctx, op(self.ctx, f"stablehlo.{name}", [a.v, b.v]), a.dtype)

  def __add__(self, o):
    return self._bin("add", self, self._v(o))

  def __radd__(self, o):
    return self._bin("add", self._v(o), self)

  def __sub__(self, o):
    return self._bin("subtract", self, self._v(o))

  def __rsub__(self, o):
    return self._bin("subtract", self._v(o), self)

  def __mul__(self, o):
    return self._bin("multiply", self, self._v(o))

  def __rmul__(self, o):
    return self._bin("multiply", self._v(o), self)

  def __truediv__(self, o):
    return self._bin("divide", self, self._v(o))

  def __and__(self, o):
    return self._bin("and", self, self._v(o))

  def __or__(self, o):
    return self._bin("or", self, self._v(o))

  def __neg__(self):
    return self.un("negate")

  def __invert__(self):
    return self.un("not")

  def un(self, name):
    return V(self.ctx, op(self.ctx, f"stablehlo.{name}", [self.v]), self.dtype)

  def cmp(self, o, direction):
    o = self._v(o)
    return V(self.ctx, compare(self.ctx, self.v, o.v, direction, self.dtype), np.bool_)


def where(c, a, b):
  a = a if isinstance(a, V) else b.c(a)
  b = b if isinstance(b, V) else a.c(b)
  return V(c.ctx, select(c.ctx, c.v, a.v, b.v), a.dtype)


def _scalar(ctx, value, dtype):
  return V(ctx, ctx.constant(np.asarray(value, dtype)), dtype)


def _broadcast(x, like):
  """The rank-0 ``x`` broadcast to ``like``'s shape."""
  shape = shape_of(like.v)
  return x if shape_of(x.v) == shape else V(x.ctx, to_shape(x.ctx, x.v, shape), x.dtype)


def _any_true(c):
  """A rank-0 bool: whether any element of the bool tensor ``c`` is true."""
  ctx = c.ctx
  shape = shape_of(c.v)
  if not shape:
    return c
  t = "tensor<i1>"
  with ctx.region([t, t]) as r:
    ctx.ret([ctx.op("stablehlo.or", r.args, t)])
  out = ctx.op("stablehlo.reduce", [c.v, ctx.constant(np.asarray(False))], t,
               attrs={"dimensions": tuple(range(len(shape)))}, regions=[r])
  return V(ctx, out, np.bool_)


def _while_loop(ctx, cond, body, init):
  """``stablehlo.while`` over a list of ``V``: ``cond(*state)`` gives a
  rank-0 bool ``V``, ``body(*state)`` the next state."""
  types = [s.v.type for s in init]
  dts = [s.dtype for s in init]
  with ctx.region(types) as rc:
    ctx.ret([cond(*[V(ctx, a, d) for a, d in zip(rc.args, dts)]).v])
  with ctx.region(types) as rb:
    ctx.ret([o.v for o in body(*[V(ctx, a, d) for a, d in zip(rb.args, dts)])])
  res = ctx.op("stablehlo.while", [s.v for s in init], types, regions=[rc, rb])
  return [V(ctx, r, d) for r, d in zip(res, dts)]


# ------------------------------------------------------------ the algorithm
def _lanczos_z(x):
  reflect = x.cmp(0.5, "LT")
  return where(reflect, -x, x + -1.0), reflect


def _log_t(z):
  return z.c(math.log(LANCZOS_G + 0.5)) + (z / (LANCZOS_G + 0.5)).un("log_plus_one")


def lgamma(x):
  """``gamma_kernels.lgamma``."""
  z, reflect = _lanczos_z(x)
  a = x.c(LANCZOS_BASE)
  for i, c in enumerate(LANCZOS):
    a = a + x.c(c) / (z + float(i + 1))
  t = x.c(LANCZOS_G + 0.5) + z
  log_t = _log_t(z)
  r = (z + 0.5) - t / log_t
  out = (r * log_t + (math.log(2) + math.log(math.pi)) / 2) + a.un("log")
  ax = x.un("abs")
  frac = ax - ax.un("floor")
  frac = where(x.c(0.5).cmp(frac, "LT"), x.c(1.0) - frac, frac)
  denom = (x.c(math.pi) * frac).un("sine").un("log")
  finite = denom.un("abs").cmp(np.inf, "LT")
  refl = where(finite, (x.c(math.log(math.pi)) - denom) - out, -denom)
  out = where(reflect, refl, out)
  return where(x.un("abs").cmp(np.inf, "EQ"), np.inf, out)


def digamma(x, x_minus_one=None):
  """``gamma_kernels.digamma``."""
  z, reflect = _lanczos_z(x)
  if x_minus_one is not None:
    z = where(reflect, z, x_minus_one)
  num, den = x.c(0.0), x.c(LANCZOS_BASE)
  for i, c in enumerate(LANCZOS):
    zk = z + float(i + 1)
    num = num - x.c(c) / (zk * zk)
    den = den + x.c(c) / zk
  t = x.c(LANCZOS_G + 0.5) + z
  out = (_log_t(z) + num / den) - x.c(LANCZOS_G) / t
  arg = (x + (x + 0.5).un("floor").un("abs")) * math.pi
  refl = out - (arg.un("cosine") * math.pi) / arg.un("sine")
  out = where(reflect, refl, out)
  pole = x.cmp(0.0, "LE") & x.cmp(x.un("floor"), "EQ")
  return where(pole, np.nan, out)


def _series(a, x, enabled):
  """``gamma_kernels._series``: (ans, dans)."""
  ctx = a.ctx
  one, zero = a.c(1.0), a.c(0.0)
  eps = float(np.finfo(a.dtype).eps)

  def cond(act, *_):
    return _any_true(act)

  def body(act, r, c, ans, dc, dans):
    rr = r + 1.0
    xr = x / rr
    dcn = dc * xr - (c * x) / (rr * rr)
    dansn = dans + dcn
    ansn = c * xr + ans
    new = [rr, c * xr, ansn, dcn, dansn]
    old = [r, c, ans, dc, dans]
    go = act & (dcn / dansn).un("abs").cmp(eps, "GT")
    return [go] + [where(act, n, o) for n, o in zip(new, old)]
  out = _while_loop(ctx, cond, body, [enabled, a, one, one, zero, zero])
  return out[3], out[5]


def _continued_fraction(a, x, enabled):
  """``gamma_kernels._continued_fraction``: (ans, dans)."""
  ctx = a.ctx
  dt = a.dtype
  eps = float(np.finfo(dt).eps)
  y = a.c(1.0) - a
  z = (x + y) + 1.0
  pkm1, qkm1 = x + 1.0, z * x
  ans = pkm1 / qkm1
  zero = a.c(0.0)
  dans = (ans * x) / qkm1
  step0 = _scalar(ctx, 0.0, dt)

  def cond(step, act, *_):
    return step.cmp(float(MAX_CF_TERMS), "LT") & _any_true(act)

  def body(step, act, y, z, ans, dans, pkm1, qkm1, pkm2, qkm2, dpkm1, dqkm1, dpkm2, dqkm2):
    step = step + 1.0
    cc = _broadcast(step, a)
    y1, z1 = y + 1.0, z + 2.0
    yc = y1 * cc
    pk = pkm1 * z1 - pkm2 * yc
    qk = qkm1 * z1 - qkm2 * yc
    nonzero = qk.cmp(0.0, "NE")
    ans1 = where(nonzero, pk / qk, ans)
    dpk = ((dpkm1 * z1 - pkm1) - dpkm2 * yc) + pkm2 * cc
    dqk = ((dqkm1 * z1 - qkm1) - dqkm2 * yc) + qkm2 * cc
    dans1 = where(nonzero, (dpk - ans1 * dqk) / qk, dans)
    change = where(nonzero, (dans1 - dans).un("abs"), 1.0)
    scale = where(pk.un("abs").cmp(1 / eps, "GT"), pk.c(eps), pk.c(1.0))
    new = [y1, z1, ans1, dans1, pk * scale, qk * scale, pkm1 * scale, qkm1 * scale,
           dpk * scale, dqk * scale, dpkm1 * scale, dqkm1 * scale]
    old = [y, z, ans, dans, pkm1, qkm1, pkm2, qkm2, dpkm1, dqkm1, dpkm2, dqkm2]
    go = act & change.cmp(eps, "GT")
    return [step, go] + [where(act, n, o) for n, o in zip(new, old)]
  out = _while_loop(ctx, cond, body, [step0, enabled, y, z, ans, dans, pkm1, qkm1,
                                          a.c(1.0), x, zero, -x, zero, zero])
  return out[4], out[5]


def _gamma_derivative(a, x, sample: bool):
  is_nan = a.cmp(a, "NE") | x.cmp(x, "NE")
  x_is_zero = x.cmp(0.0, "EQ")
  domain_error = x.cmp(0.0, "LT") | a.cmp(0.0, "LE")
  use_cf = x.cmp(1.0, "GT") & x.cmp(a, "GT")
  log_x = x.un("log")
  lax_ = (a * log_x - x) - lgamma(a)
  underflow = lax_.cmp(-float(np.log(np.finfo(a.dtype).max)), "LT")
  enabled = ~(x_is_zero | domain_error | underflow | is_nan)
  s_ans, s_dans = _series(a, x, enabled & ~use_cf)
  c_ans, c_dans = _continued_fraction(a, x, enabled & use_cf)
  s_sum = s_ans * (log_x - digamma(a + 1.0, x_minus_one=a)) + s_dans
  c_sum = c_ans * (log_x - digamma(a)) + c_dans
  if sample:
    out = where(use_cf, c_sum * x, (-s_sum * x) / a)
  else:
    ax = lax_.un("exponential")
    out = where(use_cf, -(ax * c_sum), (ax * s_sum) / a)
  out = where(x_is_zero, 0.0, out)
  return where(domain_error | is_nan, np.nan, out)


def _rule(sample: bool):
  def lower(ctx, a, x, **params):
    dt = np.dtype(ctx.avals_out[0].dtype)
    cdt = F64 if dt == F64 else F32
    a, x = (V(ctx, upcast(ctx, v, dt), cdt) for v in operands_to_out(ctx, [a, x]))
    return [downcast(ctx, _gamma_derivative(a, x, sample).v, dt)]
  return lower


random_gamma_grad_rule = _rule(sample=True)
igamma_grad_a_rule = _rule(sample=False)
