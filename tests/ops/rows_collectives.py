"""Op-table rows: named-axis collectives, each inside a ``vmap`` with an
``axis_name`` (the only place a collective has a meaning without devices).
References state each collective's semantics over the leading axis."""
import numpy as np

import openjax as jax
from openjax import lax
from tests.ops.harness import OpRow

F32, I32 = np.float32, np.int32


def batching_passes_axis_data() -> bool:
  """Whether the batching trace hands collective batch rules its axis as
  ``axis_data`` (not as ``axis_name=``/``axis_size=`` keywords, which clash
  with the collectives' own parameters). Until batching.py does, the
  collectives cannot batch and their rows and tests are left out."""
  try:
    jax.vmap(lambda v: lax.axis_index("i"), axis_name="i")(np.zeros(2, F32))
  except TypeError as e:
    if "keyword argument 'axis_name'" in str(e):
      return False
    raise
  return True


def _arr(shape, dtype=F32):
  def make(rng):
    if np.dtype(dtype).kind == "i":
      return rng.integers(-5, 6, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)
  return lambda rng: (make(rng),)


def vmap_i(f):
  return jax.vmap(f, axis_name="i")


def _bcast(r):
  """Reference for a collective whose result is the same on every member."""
  return lambda x: np.broadcast_to(r(x), (x.shape[0],) + np.shape(r(x)))


def _all_to_all_ref(split_axis, concat_axis):
  def ref(x):
    n = x.shape[0]
    return np.stack([np.stack([np.take(x[m], j, axis=split_axis) for m in range(n)],
                              axis=concat_axis) for j in range(n)])
  return ref


_CYCLE = [(k, (k + 1) % 4) for k in range(4)]

ROWS = [
    OpRow("lax.psum_vmap", vmap_i(lambda v: lax.psum(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.sum(0)), grad=True),
    OpRow("lax.psum_vmap_int32", vmap_i(lambda v: lax.psum(v, "i")), _arr((4, 3), I32),
          _bcast(lambda x: x.sum(0, dtype=I32))),
    OpRow("lax.psum_vmap_positional", vmap_i(lambda v: lax.psum(v, ("i", 0))), _arr((4, 3)),
          _bcast(lambda x: x.sum()), grad=True),
    OpRow("lax.psum_nested", jax.vmap(vmap_i(lambda v: lax.psum(v, ("i", "j"))),
                                      axis_name="j"),
          _arr((2, 3, 4)), lambda x: np.broadcast_to(x.sum((0, 1)), x.shape), grad=True),
    OpRow("lax.pmean_vmap", vmap_i(lambda v: lax.pmean(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.mean(0)), grad=True),
    OpRow("lax.pmax_vmap", vmap_i(lambda v: lax.pmax(v, "i")), _arr((4, 3)),
          _bcast(lambda x: x.max(0))),
    OpRow("lax.pmin_vmap", vmap_i(lambda v: lax.pmin(v, "i")), _arr((4, 3), I32),
          _bcast(lambda x: x.min(0))),
    OpRow("lax.all_gather_vmap", vmap_i(lambda v: lax.all_gather(v, "i", axis=1)),
          _arr((4, 3)), _bcast(lambda x: x.T), grad=True),
    OpRow("lax.all_gather_vmap_tiled", vmap_i(lambda v: lax.all_gather(v, "i", tiled=True)),
          _arr((4, 2, 3)), _bcast(lambda x: x.reshape(-1, 3)), grad=True),
    OpRow("lax.psum_scatter_vmap", vmap_i(lambda v: lax.psum_scatter(v, "i")), _arr((4, 4, 2)),
          lambda x: x.sum(0), grad=True),
    OpRow("lax.psum_scatter_vmap_tiled",
          vmap_i(lambda v: lax.psum_scatter(v, "i", scatter_dimension=1, tiled=True)),
          _arr((4, 3, 8)), lambda x: x.sum(0).reshape(3, 4, 2).transpose(1, 0, 2), grad=True),
    OpRow("lax.ppermute_vmap", vmap_i(lambda v: lax.ppermute(v, "i", _CYCLE)), _arr((4, 3)),
          lambda x: np.roll(x, 1, axis=0), grad=True),
    OpRow("lax.pbroadcast_vmap", vmap_i(lambda v: lax.pbroadcast(v, "i", 1)), _arr((4, 3)),
          _bcast(lambda x: x[1]), grad=True),
    OpRow("lax.all_to_all_vmap", vmap_i(lambda v: lax.all_to_all(v, "i", 0, 1)),
          _arr((4, 4, 2)), _all_to_all_ref(0, 1), grad=True),
    OpRow("lax.axis_index_vmap", vmap_i(lambda v: v * lax.axis_index("i")), _arr((4, 3)),
          lambda x: x * np.arange(4, dtype=F32)[:, None], grad=True),
] if batching_passes_axis_data() else []
