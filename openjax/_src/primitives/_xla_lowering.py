"""StableHLO emitters of XLA:CPU's float kernels (``_xla_numerics``'s
NumPy replicas, op for op), so that compiled code gives JAX's bits too.

Every ``a*b + c`` of the replicas that XLA fuses into one multiply-add is
emitted as a ``multiply`` whose only use is an ``add``: IREE's LLVM backend
contracts exactly those pairs, as XLA's does (where both addends are such
products, the first one is fused; the operands keep XLA's order). Denormal
inputs and outputs are flushed to zero, as XLA:CPU does.
"""
from __future__ import annotations

import numpy as np

from openjax._src.primitives import _elementwise_lowering as L
from openjax._src.primitives import _xla_numerics as X

F32, F64 = X.F32, X.F64
_I32 = np.dtype(np.int32)


class V:
  """A tensor value of one float (or int/bool) dtype with NumPy-style
  operators; Python and NumPy scalars become constants of that dtype."""
  __slots__ = ("ctx", "v", "dtype")

  def __init__(self, ctx, v, dtype):
    self.ctx, self.v, self.dtype = ctx, v, np.dtype(dtype)

  def c(self, value, dtype=None):
    return V(self.ctx, L.const_like(self.ctx, self.v, value, dtype or self.dtype),
             dtype or self.dtype)

  def _v(self, o):
    return o if isinstance(o, V) else self.c(o)

  def _bin(self, name, a, b):
    return V(self.ctx, L.op(self.ctx, f"stablehlo.{name}", [a.v, b.v]), a.dtype)

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
    return V(self.ctx, L.op(self.ctx, f"stablehlo.{name}", [self.v]), self.dtype)

  def cmp(self, o, direction):
    o = self._v(o)
    return V(self.ctx, L.compare(self.ctx, self.v, o.v, direction, self.dtype), np.bool_)

  def bitcast(self, dtype):
    return V(self.ctx, L.op(self.ctx, "stablehlo.bitcast_convert", [self.v], dtype), dtype)

  def convert(self, dtype):
    return V(self.ctx, L.op(self.ctx, "stablehlo.convert", [self.v], dtype), dtype)


def where(c, a, b):
  a = a if isinstance(a, V) else b.c(a)
  b = b if isinstance(b, V) else a.c(b)
  return V(c.ctx, L.select(c.ctx, c.v, a.v, b.v), a.dtype)


def fma(a, b, c):
  """``a*b + c`` as a multiply feeding an add (LLVM fuses the pair)."""
  return a * b + c


def fresh(x):
  """``x`` as a new value (``x + 0``), so that a product of it is not
  merged with an equal product elsewhere: XLA rounds one and fuses the other
  into an add (in different kernels), which one shared product would not."""
  return x + 0.0


def scalar(ctx, value, dtype):
  return V(ctx, ctx.constant(np.asarray(value, dtype)), dtype)


def broadcast(x, like):
  """The rank-0 ``x`` broadcast to ``like``'s shape."""
  shape = L.shape_of(like.v)
  return x if L.shape_of(x.v) == shape else V(x.ctx, L.to_shape(x.ctx, x.v, shape), x.dtype)


def any_true(c):
  """A rank-0 bool: whether any element of the bool tensor ``c`` is true."""
  ctx = c.ctx
  shape = L.shape_of(c.v)
  if not shape:
    return c
  t = "tensor<i1>"
  with ctx.region([t, t]) as r:
    ctx.ret([ctx.op("stablehlo.or", r.args, t)])
  out = ctx.op("stablehlo.reduce", [c.v, ctx.constant(np.asarray(False))], t,
               attrs={"dimensions": tuple(range(len(shape)))}, regions=[r])
  return V(ctx, out, np.bool_)


def while_loop(ctx, cond, body, init):
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


def flush_denormals(x):
  tiny = np.finfo(x.dtype).tiny
  return where(x.un("abs").cmp(tiny, "LT"), x * 0.0, x)


# ------------------------------------------------------------------ kernels
def log_f32(x):
  """``_xla_numerics.log_f32``."""
  x = flush_denormals(x)
  one, zero = x.c(1.0), x.c(0.0)
  xc = where(x.cmp(X._TINY32, "GT"), x, X._TINY32)
  bits = xc.bitcast(_I32)
  e = (_shr(bits, 23) - bits.c(127, _I32)).convert(F32) + one
  m = ((bits & bits.c(-2139095041, _I32)) | bits.c(0x3F000000, _I32)).bitcast(F32)
  low = m.cmp(X._SQRT_HALF, "LT")
  r = (m - one) + where(low, m, zero)
  e = e - where(low, one, zero)
  r2 = r * r
  r3 = r2 * r
  p = X._LOG_P
  y0 = fma(fma(r, p[0], p[1]), r, p[2])
  y1 = fma(fma(r, p[3], p[4]), r, p[5])
  y2 = fma(fma(r, p[6], p[7]), r, p[8])
  y = fma(fma(y0, r3, y1), r3, y2)
  y = y * r3 + e * X._LN2_LO
  out = (r - r2 * X._HALF + y) + e * X._LN2_HI
  out = where(x.cmp(0.0, "EQ"), -np.inf, out)
  out = where(x.cmp(np.inf, "EQ"), np.inf, out)
  return where(x.cmp(0.0, "LT") | x.cmp(x, "NE"), np.nan, out)


def exp_f32(x):
  """``_xla_numerics.exp_f32``."""
  x = flush_denormals(x)
  xc = where(x.cmp(-87.8, "LT"), -87.8, x)
  xc = where(xc.cmp(88.8, "GT"), 88.8, xc)
  n = (xc * X._LOG2E + 0.5).un("floor")
  n = where(n.cmp(-127.0, "LT"), -127.0, n)
  n = where(n.cmp(127.0, "GT"), 127.0, n)
  r = xc - x.c(X._LN2_HI) * n
  r = r - x.c(X._LN2_LO) * n
  y = r * X._EXP_P[0] + X._EXP_P[1]
  for c in X._EXP_P[2:]:
    y = y * r + c
  y = y * r + 0.5
  y = x.c(1.0) + (r + y * (r * r))
  nan = x.cmp(x, "NE")
  k = where(nan, 0.0, n).convert(_I32)
  scale = V(x.ctx, L.op(x.ctx, "stablehlo.shift_left", [(k + k.c(127, _I32)).v,
                                                        k.c(23, _I32).v]), _I32).bitcast(F32)
  return flush_denormals(where(nan, x, y * scale))


def _shr(bits, n):
  return V(bits.ctx, L.op(bits.ctx, "stablehlo.shift_right_logical",
                          [bits.v, bits.c(n, _I32).v]), _I32)


def _log1p_small(x, p_coefs, q_coefs):
  x2 = x * x
  q = x + q_coefs[0]                    # (1 * x + q0: the leading coefficient is 1)
  for c in q_coefs[1:]:
    q = fma(q, x, c)
  p = fma(x.c(p_coefs[0]), x, p_coefs[1])
  for c in p_coefs[2:]:
    p = fma(p, x, c)
  # XLA fuses x2 * -0.5 into the add; IREE would fuse the other product, so
  # that one gets a second use (a NaN test that changes nothing).
  t = (x * x2) * (p / q)
  out = x + (x2 * -0.5 + t)
  return where(t.cmp(t, "NE"), t, out)


def log1p(x):
  """``_xla_numerics.log1p_f32`` / ``log1p_f64`` (the float64 ``log`` is
  ``stablehlo.log``)."""
  if x.dtype == F32:
    split, pc, qc = X._LOG1P_SPLIT32, X._LOG1P_P32, X._LOG1P_Q32
    large = log_f32(x + 1.0)
  else:
    split, pc, qc = X._LOG1P_SPLIT64, X._LOG1P_P64, X._LOG1P_Q64
    large = (x + 1.0).un("log")
  return where(x.un("abs").cmp(split, "LT"), _log1p_small(x, pc, qc), large)


def erf_inv(x):
  """``_xla_numerics.erf_inv`` for float32 or float64 ``x``."""
  x = flush_denormals(x)
  nl = log1p(x * -x)                               # -w
  if x.dtype == F32:
    small = nl.cmp(-5.0, "GT")
    w = where(small, x.c(-2.5) - nl, nl.un("negate").un("sqrt") + -3.0)
    k = len(X._ERF_INV32_SMALL)
    sel = [where(small, x.c(a), x.c(b)) for a, b in zip(X._ERF_INV32_SMALL, X._ERF_INV32_LARGE)]
    p = fma(sel[0], w, sel[1])
    for i in range(2, k):
      p = fma(w, p, sel[i])
  else:
    a, b, c = X._ERF_INV64_A, X._ERF_INV64_B, X._ERF_INV64_C
    lt6 = nl.cmp(-6.25, "GT")
    lt16 = nl.cmp(-16.0, "GT")
    w = where(lt6, x.c(-3.125) - nl,
              nl.un("negate").un("sqrt") - where(lt16, x.c(3.25), x.c(5.0)))

    def coef(i):
      v = x.c(a[i])
      if i < len(b):
        v = where(lt6, v, x.c(b[i]))
      if i < len(c):
        v = where(lt16, v, x.c(c[i]))
      return v
    p = fma(coef(0), w, coef(1))
    for i in range(2, len(c)):
      p = fma(w, p, coef(i))
    for i in range(len(c), len(b)):
      p = where(lt16, fma(w, p, coef(i)), p)
    for i in range(len(b), len(a)):
      p = where(lt6, fma(w, p, coef(i)), p)
  p = where(x.un("abs").cmp(1.0, "EQ"), np.inf, p)
  return flush_denormals(x * p)


def lower_kernel(ctx, kernel, x, cdt=F32):
  """``kernel`` (one of the emitters above) on ``x``, the rule's operand, in
  ``cdt``: narrow floats are computed in float32 and rounded back."""
  dt = np.dtype(ctx.avals_in[0].dtype)
  return L.downcast(ctx, kernel(V(ctx, L.upcast(ctx, x, dt), cdt)).v, dt)


def erf_inv_rule(ctx, x, **params):
  """The lowering of ``erf_inv``: XLA's kernel in float64, or in float32
  (narrow floats computed in float32 and rounded)."""
  cdt = F64 if np.dtype(ctx.avals_in[0].dtype) == F64 else F32
  return [lower_kernel(ctx, erf_inv, x, cdt)]
