"""Op-table rows: the jax.lax names of session 7 (tokens, rng_uniform,
device_put_p, select_and_scatter_p).

``rng_uniform``'s numbers are implementation defined, so its rows use an
empty interval (``b == a``), where openjax returns ``a`` in every column.
select_and_scatter's reference is a plain loop over windows."""
import itertools

import numpy as np

import openjax as jax
from openjax import lax
from openjax._src.control.select_and_scatter import select_and_scatter
from tests.ops.harness import OpRow

ROWS = []


def _add(name, fn, args, ref, **kw):
  ROWS.append(OpRow(name, fn, args, ref, **kw))


def select_and_scatter_reference(x, source, init, select, scatter, window_dimensions,
                                 window_strides, padding):
  """By definition: per window, scan its in-bounds elements in row-major
  order, replacing the kept one when ``select(kept, candidate)`` is false,
  then combine the window's source value into the result there."""
  out = np.full(x.shape, init, x.dtype)
  for o in itertools.product(*map(range, source.shape)):
    best = None
    for k in itertools.product(*map(range, window_dimensions)):
      p = tuple(oi * s + ki - lo for oi, s, ki, (lo, _) in
                zip(o, window_strides, k, padding))
      if not all(0 <= pi < n for pi, n in zip(p, x.shape)):
        continue
      if best is None or not select(x[best], x[p]):
        best = p
    if best is not None:
      out[best] = scatter(out[best], source[o])
  return out


_SAS = {  # name: (operand shape, window_dimensions, window_strides, padding)
    "tiled": ((4, 6), (2, 2), (2, 2), ((0, 0), (0, 0))),
    "overlapping": ((5, 5), (3, 3), (1, 1), ((0, 0), (0, 0))),
    "padded": ((5, 4), (3, 2), (2, 1), ((1, 1), (0, 1))),
}
for sname, (shape, wd, ws, pad) in _SAS.items():
  src_shape = tuple((n + lo + hi - w) // s + 1 for n, (lo, hi), w, s in zip(shape, pad, wd, ws))

  def _args(rng, shape=shape, src_shape=src_shape):
    return (rng.standard_normal(shape).astype(np.float32),
            rng.standard_normal(src_shape).astype(np.float32))
  _add(f"lax.select_and_scatter_max_add_{sname}",
       lambda x, s, w=(wd, ws, pad): select_and_scatter(x, lax.ge, *w, s, np.float32(0), lax.add),
       _args,
       lambda x, s, w=(wd, ws, pad): select_and_scatter_reference(
           x, s, np.float32(0), np.greater_equal, np.add, *w))
  _add(f"lax.select_and_scatter_min_max_{sname}",
       lambda x, s, w=(wd, ws, pad): select_and_scatter(x, lax.lt, *w, s, np.float32(-np.inf),
                                                        lax.max),
       _args,
       lambda x, s, w=(wd, ws, pad): select_and_scatter_reference(
           x, s, np.float32(-np.inf), np.less, np.maximum, *w))

_add("lax.after_all_create_token",
     lambda x: lax.after_all(lax.create_token(x), lax.create_token()),
     lambda rng: (rng.standard_normal(3).astype(np.float32),),
     lambda x: np.zeros((0,), np.bool_), vmap=False)
_add("lax.rng_uniform_empty_interval_f32",
     lambda a: lax.rng_uniform(a, a, (2, 3)),
     lambda rng: (np.float32(rng.standard_normal()),),
     lambda a: np.full((2, 3), a, np.float32))
_add("lax.rng_uniform_empty_interval_i32",
     lambda a: lax.rng_uniform(a, a, (4,)),
     lambda rng: (np.int32(rng.integers(-5, 5)),),
     lambda a: np.full((4,), a, np.int32))
_add("jax.device_put_traced",
     lambda x: jax.device_put(x) * 2,
     lambda rng: (rng.standard_normal((3, 2)).astype(np.float32),),
     lambda x: x * 2, grad=True)
