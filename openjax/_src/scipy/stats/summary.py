"""Summary statistics of ``jax.scipy.stats``: ``mode``, ``rankdata`` and
``sem``."""
from __future__ import annotations

import math
from functools import partial
from typing import NamedTuple

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.api.jit import jit
from openjax._src.api.vmap import vmap
from openjax._src.numpy.util import check_arraylike, promote_args_inexact
from openjax._src.scipy import jnp

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
  mode: object
  count: object


def _check_nan_policy(name: str, nan_policy: str) -> None:
  if nan_policy not in ("propagate", "omit", "raise"):
    raise ValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                     "{'propagate', 'omit', 'raise'}")
  if nan_policy == "omit":
    raise NotImplementedError(f"Logic for `nan_policy` of {nan_policy} is not implemented")
  if nan_policy == "raise":
    raise NotImplementedError(
        f"In order to best JIT compile `{name}`, we cannot know whether `x` contains nans. "
        f"Please check if nans exist in `x` outside of the `{name}` function.")


def _canonical_axis(axis: int, ndim: int) -> int:
  if not -ndim <= axis < ndim:
    raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
  return axis % ndim


@partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False):
  """The most frequent value along ``axis`` (the smallest on ties) and its
  count, as a ``ModeResult``."""
  check_arraylike("mode", a)
  x = jnp.atleast_1d(a)
  _check_nan_policy("mode", nan_policy)
  if axis is not None:
    axis = _canonical_axis(axis, x.ndim)
  shape = x.shape
  if keepdims:
    out_shape = tuple(1 for _ in shape) if axis is None else tuple(
        1 if i == axis else s for i, s in enumerate(shape))
  else:
    out_shape = () if axis is None else tuple(s for i, s in enumerate(shape) if i != axis)
  if axis is None:
    axis, x = 0, x.ravel()

  def column_mode(column):
    if column.size == 0:
      nan = jnp.array(np.nan, dtype=dtypes.default_float_dtype())
      return nan, jnp.array(0, dtype=dtypes.default_float_dtype())
    values, counts = jnp.unique(column, return_counts=True, size=column.size)
    return values[jnp.argmax(counts)], counts.max()

  x = jnp.moveaxis(x, axis, 0)
  x = x.reshape(x.shape[0], math.prod(x.shape[1:]))
  values, counts = vmap(column_mode, in_axes=1)(x)
  return ModeResult(values.reshape(out_shape), counts.reshape(out_shape))


def _invert_permutation(perm):
  return jnp.empty_like(perm).at[perm].set(jnp.arange(perm.size, dtype=perm.dtype))


@partial(jit, static_argnames=("method", "axis", "nan_policy"))
def rankdata(a, method: str = "average", *, axis: int | None = None,
             nan_policy: str = "propagate"):
  """Ranks of the data, 1-based, with ties resolved by ``method`` ('average',
  'min', 'max', 'dense' or 'ordinal'); all NaN when the data hold a NaN."""
  check_arraylike("rankdata", a)
  _check_nan_policy("rankdata", nan_policy)
  if method not in ("average", "min", "max", "dense", "ordinal"):
    raise ValueError(f"unknown method '{method}'")
  if axis is not None:
    return jnp.apply_along_axis(rankdata, axis, a, method)
  a = jnp.ravel(a)
  out_dtype = dtypes.default_float_dtype()

  def ranks(a):
    sorted_a, order = lax.sort_key_val(a, jnp.arange(a.size))
    inverse = _invert_permutation(order)
    if method == "ordinal":
      return (inverse + 1).astype(out_dtype)
    first_of_run = jnp.concatenate([jnp.array([True]), sorted_a[1:] != sorted_a[:-1]])
    dense = first_of_run.cumsum()[inverse]
    if method == "dense":
      return dense.astype(out_dtype)
    # starts[r] = index in sorted order where the r-th distinct value's run
    # starts (starts[n_distinct] = n): run r spans ranks starts[r-1]+1 .. starts[r].
    starts = jnp.nonzero(first_of_run, size=sorted_a.size + 1,
                         fill_value=first_of_run.size)[0].astype(out_dtype)
    if method == "max":
      return starts[dense]
    if method == "min":
      return starts[dense - 1] + 1
    return 0.5 * (starts[dense] + starts[dense - 1] + 1)

  return lax.cond(jnp.any(jnp.isnan(a)), lambda a: jnp.full_like(a, np.nan, out_dtype),
                  ranks, a)


@partial(jit, static_argnames=("axis", "nan_policy", "keepdims"))
def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *,
        keepdims: bool = False):
  """Standard error of the mean: std(a, ddof) / sqrt(n)."""
  b, = promote_args_inexact("sem", a)
  if nan_policy == "propagate":
    size = b.size if axis is None else b.shape[axis]
    return jnp.std(b, axis, ddof=ddof, keepdims=keepdims) / np.sqrt(size).astype(b.dtype)
  if nan_policy == "omit":
    count = (~jnp.isnan(b)).sum(axis, keepdims=keepdims)
    return jnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / jnp.sqrt(count).astype(b.dtype)
  raise ValueError(f"{nan_policy} is not supported")
