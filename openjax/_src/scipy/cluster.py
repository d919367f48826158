"""``jax.scipy.cluster.vq``: ``vq``, the nearest code-book entry of each
observation."""
from __future__ import annotations

from functools import partial

from openjax._src.numpy import util
from openjax._src.scipy import jnp

__all__ = ["vq"]


# A cached library program per signature (eagerly ~1 us a step).
@partial(util.jit, static_argnames=("check_finite",))
def vq(obs, code_book, check_finite: bool = True):
  """``(code, dist)``: for each observation (row of ``obs``, ``[M]`` or
  ``[M, N]``), the index of the nearest code (row of ``code_book``) in the
  Euclidean norm and the distance to it."""
  del check_finite
  util.check_arraylike("scipy.cluster.vq.vq", obs, code_book)
  obs, code_book = util.promote_dtypes_inexact(obs, code_book)
  if obs.ndim != code_book.ndim:
    raise ValueError("Observation and code_book should have the same rank")
  if obs.ndim == 1:
    obs, code_book = obs[..., None], code_book[..., None]
  if obs.ndim != 2:
    raise ValueError("ndim different than 1 or 2 are not supported")
  dist = jnp.linalg.norm(obs[:, None, :] - code_book[None, :, :], axis=-1)
  code = jnp.argmin(dist, axis=-1)
  return code, jnp.take_along_axis(dist, code[:, None], axis=-1)[:, 0]
