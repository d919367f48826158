"""XLA:CPU's float32 ``log`` and ``log1p`` kernels and the float64 route to a
correctly rounded ``rsqrt``, written with lax primitives (``_xla_numerics``'s
replicas, op for op) for jaxprs that are traced only to be lowered: the
random samplers' loop bodies. Lowered, IREE fuses their multiply-adds as
XLA does (see ``_xla_lowering``), so compiled loops give the eager loops'
(and JAX's) bits.
"""
from __future__ import annotations

import numpy as np

from openjax._src.core import get_aval
from openjax._src.primitives import _xla_numerics as X
from openjax._src.primitives import elementwise as ew
from openjax._src.primitives.convert import _convert_element_type
from openjax._src.primitives.shape import full_like

_F32, _F64, _I32 = X.F32, X.F64, np.dtype(np.int32)


def _c(value, dtype=_F32):
  return np.array(value, dtype)


def _fma(a, b, c):
  return ew.add(ew.mul(a, b), c)


def _flush(x):
  return ew.select(ew.lt(ew.abs(x), _c(X._TINY32)), ew.mul(x, _c(0.0)), x)


def log_f32(x):
  """``_xla_numerics.log_f32`` on a float32 tracer."""
  x = _flush(x)
  one = _c(1.0)
  xc = ew.select(ew.gt(x, _c(X._TINY32)), x, full_like(x, X._TINY32))
  bits = ew.bitcast_convert_type(xc, _I32)
  e = ew.sub(ew.shift_right_logical(bits, _c(23, _I32)), _c(127, _I32))
  e = ew.add(ew.convert_element_type(e, _F32), one)
  m = ew.bitcast_convert_type(ew.bitwise_or(ew.bitwise_and(bits, _c(-2139095041, _I32)),
                                            _c(0x3F000000, _I32)), _F32)
  low = ew.lt(m, _c(X._SQRT_HALF))
  r = ew.add(ew.sub(m, one), ew.select(low, m, full_like(m, 0.0)))
  e = ew.sub(e, ew.select(low, full_like(e, 1.0), full_like(e, 0.0)))
  r2 = ew.mul(r, r)
  r3 = ew.mul(r2, r)
  p = [_c(v) for v in X._LOG_P]
  y0 = _fma(_fma(r, p[0], p[1]), r, p[2])
  y1 = _fma(_fma(r, p[3], p[4]), r, p[5])
  y2 = _fma(_fma(r, p[6], p[7]), r, p[8])
  y = _fma(_fma(y0, r3, y1), r3, y2)
  y = ew.add(ew.mul(y, r3), ew.mul(e, _c(X._LN2_LO)))
  out = ew.add(ew.add(ew.sub(r, ew.mul(r2, _c(0.5))), y), ew.mul(e, _c(X._LN2_HI)))
  out = ew.select(ew.eq(x, _c(0.0)), full_like(out, -np.inf), out)
  out = ew.select(ew.eq(x, _c(np.inf)), full_like(out, np.inf), out)
  bad = ew.bitwise_or(ew.lt(x, _c(0.0)), ew.ne(x, x))
  return ew.select(bad, full_like(out, np.nan), out)


def log1p_f32(x):
  """``_xla_numerics.log1p_f32`` on a float32 tracer."""
  x = _flush(x)
  x2 = ew.mul(x, x)
  q = ew.add(x, _c(X._LOG1P_Q32[0]))
  for c in X._LOG1P_Q32[1:]:
    q = _fma(q, x, _c(c))
  p = _fma(full_like(x, X._LOG1P_P32[0]), x, _c(X._LOG1P_P32[1]))
  for c in X._LOG1P_P32[2:]:
    p = _fma(p, x, _c(c))
  # XLA fuses x2 * -0.5 into the add; the other product gets a second use
  # (a NaN test that changes nothing) so that IREE cannot fuse that one.
  t = ew.mul(ew.mul(x, x2), ew.div(p, q))
  small = ew.add(x, ew.add(ew.mul(x2, _c(-0.5)), t))
  small = ew.select(ew.ne(t, t), t, small)
  large = log_f32(ew.add(x, _c(1.0)))
  return ew.select(ew.lt(ew.abs(x), _c(X._LOG1P_SPLIT32)), small, large)


def rsqrt(x):
  """``1/sqrt(x)`` rounded once (float32 through float64), or float64's
  ``1/sqrt(x)`` (XLA's float64 rsqrt), as the eager loops compute it."""
  dt = get_aval(x).dtype
  if dt == _F32:
    # float64 even without x64: this jaxpr is only lowered (and a module with
    # float64 in it is compiled with IREE's float64 support)
    w = _convert_element_type(x, _F64)
    r = ew.div(full_like(w, 1.0), ew.sqrt(w))
    return _convert_element_type(r, _F32)
  if dt == _F64:
    return ew.div(full_like(x, 1.0), ew.sqrt(x))
  return ew.rsqrt(x)
