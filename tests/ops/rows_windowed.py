"""Op-table rows: lax.reduce with computations, the reduce_window family,
select_and_gather_add / select_and_scatter_add and lax.associative_scan.

References are plain loops over output positions (``window_reference``),
written independently of the library's window views."""
import itertools

import numpy as np

from openjax import lax
from openjax._src.primitives.reduce.select_and_gather import (
    select_and_gather_add, select_and_scatter_add)
from tests.ops.harness import OpRow

F32, I32, U8 = np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.uint8)


def window_reference(x, init, op, window_dimensions, window_strides, padding,
                     base_dilation=None, window_dilation=None):
  """reduce_window by definition: for every output position, fold ``op``
  over the window's elements (init where a window position is padding or a
  dilation hole), starting from ``init``."""
  x = np.asarray(x)
  nd = x.ndim
  bd = base_dilation or (1,) * nd
  wd = window_dilation or (1,) * nd
  span = [(w - 1) * r + 1 for w, r in zip(window_dimensions, wd)]
  dilated = [(n - 1) * b + 1 if n else 0 for n, b in zip(x.shape, bd)]
  padded = [d + lo + hi for d, (lo, hi) in zip(dilated, padding)]
  out_shape = [max(0, (p - w) // s + 1) for p, w, s in zip(padded, span, window_strides)]
  out = np.empty(out_shape, x.dtype)
  for o in itertools.product(*map(range, out_shape)):
    acc = init
    for k in itertools.product(*map(range, window_dimensions)):
      idx = []
      for ax in range(nd):
        p = o[ax] * window_strides[ax] + k[ax] * wd[ax] - padding[ax][0]
        if p % bd[ax] or not 0 <= p // bd[ax] < x.shape[ax]:
          break
        idx.append(p // bd[ax])
      acc = op(acc, x[tuple(idx)] if len(idx) == nd else init)
    out[o] = acc
  return out


def gather_reference(t, x, largest, window_dimensions, window_strides, padding,
                     base_dilation=None, window_dilation=None):
  """select_and_gather_add by definition: the tangent at the first maximum
  (minimum) of every window; padding never wins."""
  pairs = np.empty(x.shape, dtype=[("v", x.dtype), ("t", t.dtype)])
  pairs["v"], pairs["t"] = x, t
  ident = np.array((-np.inf if largest else np.inf, 0), pairs.dtype)

  def pick(a, b):
    better = b["v"] > a["v"] if largest else b["v"] < a["v"]
    return b if better else a

  out = window_reference(pairs, ident, pick, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation)
  return out["t"]


def scatter_reference(s, x, largest, window_dimensions, window_strides, padding):
  """select_and_scatter_add by definition: each window adds its source value
  at its first maximum (minimum)."""
  out = np.zeros(x.shape, s.dtype)
  for o in itertools.product(*map(range, s.shape)):
    best, place = None, None
    for k in itertools.product(*map(range, window_dimensions)):
      p = tuple(oi * st + ki - lo for oi, st, ki, (lo, _) in
                zip(o, window_strides, k, padding))
      if not all(0 <= pi < n for pi, n in zip(p, x.shape)):
        continue
      v = x[p]
      if best is None or (v > best if largest else v < best):
        best, place = v, p
    if place is not None:
      out[place] += s[o]
  return out


def _normal(*shapes, dtype=F32):
  def make(rng):
    return tuple(rng.standard_normal(s).astype(dtype) for s in shapes)
  return make


def _ints(*shapes, dtype=I32, lo=-20, hi=20):
  def make(rng):
    return tuple(rng.integers(lo, hi, s).astype(dtype) for s in shapes)
  return make


ROWS = []


def _add(name, fn, args, ref, **kw):
  ROWS.append(OpRow(name, fn, args, ref, **kw))


# ------------------------------------------------------------ reduce_window
_W = {  # name: (window_dimensions, window_strides, padding, base_dilation, window_dilation)
    "valid": ((2, 2), (1, 1), ((0, 0), (0, 0)), None, None),
    "strided_padded": ((3, 2), (2, 1), ((1, 2), (0, 1)), None, None),
    "base_dilated": ((2, 2), (1, 2), ((0, 1), (1, 0)), (2, 1), None),
    "window_dilated": ((2, 2), (1, 1), ((1, 0), (0, 1)), None, (2, 1)),
    "cut": ((2, 3), (2, 2), ((-1, 2), (2, -1)), (1, 2), None),
}
for wname, w in _W.items():
  grad_max = w[4] is None   # JAX has no VJP for max pooling with window dilation
  _add(f"lax.reduce_window_sum_{wname}",
       lambda x, w=w: lax.reduce_window(x, 0., lax.add, *w), _normal((4, 5)),
       lambda x, w=w: window_reference(x, np.float32(0), np.add, *w), atol=1e-5, grad=True)
  _add(f"lax.reduce_window_max_{wname}",
       lambda x, w=w: lax.reduce_window(x, -np.inf, lax.max, *w), _normal((4, 5)),
       lambda x, w=w: window_reference(x, np.float32(-np.inf), np.maximum, *w), grad=grad_max)
  _add(f"lax.reduce_window_min_{wname}",
       lambda x, w=w: lax.reduce_window(x, np.inf, lax.min, *w), _normal((4, 5)),
       lambda x, w=w: window_reference(x, np.float32(np.inf), np.minimum, *w), grad=grad_max)
  _add(f"lax.reduce_window_mul_{wname}",
       lambda x, w=w: lax.reduce_window(x, 1., lax.mul, *w), _normal((4, 5)),
       lambda x, w=w: window_reference(x, np.float32(1), np.multiply, *w), atol=1e-5,
       grad=True)
_add("lax.reduce_window_max_pool_nhwc",
     lambda x: lax.reduce_window(x, -np.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"),
     _normal((2, 4, 6, 3)),
     lambda x: x.reshape(2, 2, 2, 3, 2, 3).max(axis=(2, 4)), grad=True)
_add("lax.reduce_window_avg_pool_nhwc",
     lambda x: lax.reduce_window(x, 0., lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4,
     _normal((2, 4, 6, 3)),
     lambda x: x.reshape(2, 2, 2, 3, 2, 3).mean(axis=(2, 4)), atol=1e-6, grad=True)
_add("lax.reduce_window_max_same_3x3",
     lambda x: lax.reduce_window(x, -np.inf, lax.max, (3, 3), (1, 1), "SAME"), _normal((5, 6)),
     lambda x: window_reference(x, np.float32(-np.inf), np.maximum, (3, 3), (1, 1),
                                ((1, 1), (1, 1))), grad=True)
_add("lax.reduce_window_sum_same_lower_int32",
     lambda x: lax.reduce_window(x, 0, lax.add, (2, 3), (2, 2), "SAME_LOWER"), _ints((5, 6)),
     lambda x: window_reference(x, np.int32(0), np.add, (2, 3), (2, 2), ((1, 0), (1, 0))))
_add("lax.reduce_window_max_int32",
     lambda x: lax.reduce_window(x, np.iinfo(np.int32).min, lax.max, (2, 2), (1, 2), "VALID"),
     _ints((4, 5)),
     lambda x: window_reference(x, np.iinfo(np.int32).min, np.maximum, (2, 2), (1, 2),
                                ((0, 0), (0, 0))))
_add("lax.reduce_window_min_uint8",
     lambda x: lax.reduce_window(x, np.uint8(255), lax.min, (3,), (1,), "SAME"),
     _ints((7,), dtype=U8, lo=0, hi=255),
     lambda x: window_reference(x, np.uint8(255), np.minimum, (3,), (1,), ((1, 1),)))
_add("lax.reduce_window_generic_add_lambda",
     lambda x: lax.reduce_window(x, 0., lambda a, b: a + b, (2, 3), (1, 2), "SAME"),
     _normal((4, 5)),
     lambda x: window_reference(x, np.float32(0), np.add, (2, 3), (1, 2), ((0, 1), (1, 1))),
     atol=1e-5, grad=True)


def _argmax_pair(a, b):
  (av, ai), (bv, bi) = a, b
  pick_b = (bv > av) | ((bv == av) & (bi < ai))
  return lax.select(pick_b, bv, av), lax.select(pick_b, bi, ai)


def _argmax_window_ref(x, i):
  pairs = np.empty(x.shape, dtype=[("v", x.dtype), ("i", i.dtype)])
  pairs["v"], pairs["i"] = x, i
  ident = np.array((-np.inf, np.iinfo(np.int32).max), pairs.dtype)

  def pick(a, b):
    take_b = b["v"] > a["v"] or (b["v"] == a["v"] and b["i"] < a["i"])
    return b if take_b else a
  out = window_reference(pairs, ident, pick, (2, 2), (1, 1), ((0, 1), (0, 1)))
  return out["v"], out["i"]


_add("lax.reduce_window_variadic_argmax",
     lambda x, i: lax.reduce_window((x, i), (-np.inf, np.iinfo(np.int32).max), _argmax_pair,
                                    (2, 2), (1, 1), "SAME"),
     lambda rng: (rng.standard_normal((4, 5)).astype(F32),
                  rng.permutation(20).reshape(4, 5).astype(I32)),
     _argmax_window_ref)


# ------------------------------------------------- select_and_gather/scatter
for wname in ("valid", "strided_padded", "base_dilated", "window_dilated"):
  w = _W[wname]
  ones = (1, 1)
  full = tuple(v or ones for v in w)
  grad = w[4] is None   # no transpose with window dilation (as in JAX)
  _add(f"select_and_gather_add_ge_{wname}",
       lambda t, x, full=full: select_and_gather_add(t, x, lax.ge_p, *full),
       _normal((4, 5), (4, 5)),
       lambda t, x, w=w: gather_reference(t, x, True, *w), grad=grad)
  _add(f"select_and_gather_add_le_{wname}",
       lambda t, x, full=full: select_and_gather_add(t, x, lax.le_p, *full),
       _normal((4, 5), (4, 5)),
       lambda t, x, w=w: gather_reference(t, x, False, *w), grad=grad)
for wname, (wd, ws, pad) in {"overlapping": ((2, 2), (1, 1), ((0, 0), (0, 0))),
                             "strided_padded": ((3, 2), (2, 1), ((1, 2), (0, 1))),
                             "pool": ((2, 2), (2, 2), ((0, 0), (0, 0)))}.items():
  out_shape = lax.reduce_window_shape_tuple((4, 5), wd, ws, pad)
  _add(f"select_and_scatter_add_ge_{wname}",
       lambda s, x, wd=wd, ws=ws, pad=pad: select_and_scatter_add(s, x, lax.ge_p, wd, ws,
                                                                  pad),
       _normal(out_shape, (4, 5)),
       lambda s, x, wd=wd, ws=ws, pad=pad: scatter_reference(s, x, True, wd, ws, pad),
       atol=1e-6, grad=True)
  _add(f"select_and_scatter_add_le_{wname}",
       lambda s, x, wd=wd, ws=ws, pad=pad: select_and_scatter_add(s, x, lax.le_p, wd, ws,
                                                                  pad),
       _normal(out_shape, (4, 5)),
       lambda s, x, wd=wd, ws=ws, pad=pad: scatter_reference(s, x, False, wd, ws, pad),
       atol=1e-6, grad=True)


# ---------------------------------------------------------------- lax.reduce
def _logaddexp(a, b):
  hi = lax.max(a, b)
  return hi + lax.log1p(lax.exp(-lax.abs(a - b)))


_add("lax.reduce_lambda_add", lambda x: lax.reduce(x, 0., lambda a, b: a + b, (0,)),
     _normal((5, 3)), lambda x: np.sum(x, axis=0), atol=1e-5, grad=True)
_add("lax.reduce_lambda_mul_all", lambda x: lax.reduce(x, 1., lambda a, b: a * b, (0, 1)),
     _normal((3, 3)), lambda x: np.prod(x), atol=1e-6, grad=True)
_add("lax.reduce_logaddexp", lambda x: lax.reduce(x, -np.inf, _logaddexp, (1,)),
     _normal((3, 7)), lambda x: np.logaddexp.reduce(x, axis=1), atol=1e-5, grad=True)
_add("lax.reduce_lambda_max_3d", lambda x: lax.reduce(x, -np.inf, lambda a, b: lax.max(a, b),
                                                      (0, 2)),
     _normal((3, 2, 5)), lambda x: np.max(x, axis=(0, 2)), grad=True)
_add("lax.reduce_int32_wrapping_mul",
     lambda x: lax.reduce(x, np.int32(1), lambda a, b: a * b, (1,)),
     _ints((3, 9), lo=-100000, hi=100000),
     lambda x: np.multiply.reduce(x, axis=1, dtype=np.int32))
_add("lax.reduce_variadic_argmax",
     lambda x, i: lax.reduce((x, i), (-np.inf, np.iinfo(np.int32).max), _argmax_pair, (1,)),
     lambda rng: (rng.standard_normal((3, 6)).astype(F32),
                  np.broadcast_to(np.arange(6, dtype=I32), (3, 6)).copy()),
     lambda x, i: (np.max(x, axis=1), np.argmax(x, axis=1).astype(I32)))
_add("lax.reduce_monoid_add", lambda x: lax.reduce(x, 0., lax.add, (1,)), _normal((3, 4)),
     lambda x: np.sum(x, axis=1), atol=1e-6, grad=True)


# ---------------------------------------------------------- associative_scan
def _recurrence(x, y):
  (a1, b1), (a2, b2) = x, y
  return a1 * a2, a2 * b1 + b2


def _recurrence_ref(a, b):
  h, out = np.zeros(a.shape[1:], a.dtype), []
  for t in range(a.shape[0]):
    h = a[t] * h + b[t]
    out.append(h)
  return np.cumprod(a, axis=0), np.stack(out)


_add("lax.associative_scan_add", lambda x: lax.associative_scan(lax.add, x, axis=1),
     _normal((3, 7)), lambda x: np.cumsum(x, axis=1), atol=1e-5, grad=True)
_add("lax.associative_scan_max_reverse",
     lambda x: lax.associative_scan(lax.max, x, reverse=True),
     _normal((6, 2)), lambda x: np.flip(np.maximum.accumulate(np.flip(x, 0), axis=0), 0),
     grad=True)
_add("lax.associative_scan_linear_recurrence",
     lambda a, b: lax.associative_scan(_recurrence, (a, b)),
     lambda rng: (rng.uniform(0.5, 1.0, (9, 2)).astype(F32),
                  rng.standard_normal((9, 2)).astype(F32)),
     _recurrence_ref, atol=1e-5, grad=True)
_add("lax.associative_scan_int32_mul",
     lambda x: lax.associative_scan(lax.mul, x), _ints((8,), lo=-3, hi=4),
     lambda x: np.cumprod(x, dtype=np.int32))
