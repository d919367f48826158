"""``jax.nn.initializers.orthogonal`` and ``delta_orthogonal``: (semi-)orthogonal
weight matrices from ``jax.random.orthogonal``, and convolution kernels that are
orthogonal at the centre tap and zero elsewhere."""
from __future__ import annotations

import math

import numpy as np

from openjax._src import dtypes
from openjax._src.nn import jnp
from openjax._src.random.samplers_continuous import orthogonal as random_orthogonal

__all__ = ["delta_orthogonal", "orthogonal"]


def orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
  """Build an initializer of (semi-)orthogonal matrices: the shape flattened to
  ``(rows, shape[column_axis])`` has orthonormal rows or columns, times ``scale``."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    if out_sharding is not None:
      raise NotImplementedError("orthogonal initializer: out_sharding is not supported")
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    shape = tuple(shape)
    if len(shape) < 2:
      raise ValueError("orthogonal initializer requires at least a 2D shape")
    if any(dim == 0 for dim in shape):
      return jnp.zeros(shape, dtype=dtype)
    n_cols = shape[column_axis]
    n_rows = math.prod(shape) // n_cols
    q = random_orthogonal(key, n_rows, (), dtype, n_cols)
    q = jnp.reshape(q, tuple(np.delete(shape, column_axis)) + (n_cols,))
    q = jnp.moveaxis(q, -1, column_axis)
    return jnp.array(scale, dtype) * q
  return init


def delta_orthogonal(scale=1.0, column_axis: int = -1, dtype=None):
  """Build an initializer of 1-3D convolution kernels ``(*spatial, in, out)``
  that are an orthogonal ``(in, out)`` matrix at the central tap and zero
  elsewhere (Xiao et al. 2018): the convolution then preserves norms."""
  def init(key, shape, dtype=dtype, out_sharding=None):
    if out_sharding is not None:
      raise NotImplementedError("delta_orthogonal initializer: out_sharding is not supported")
    dtype = dtypes.default_float_dtype() if dtype is None else dtype
    shape = tuple(shape)
    if len(shape) not in (3, 4, 5):
      raise ValueError("Delta orthogonal initializer requires a 3D, 4D or 5D shape.")
    if shape[-1] < shape[-2]:
      raise ValueError("`fan_in` must be less or equal than `fan_out`. ")
    matrix = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
    centre = tuple((k - 1) // 2 for k in shape[:-2])
    return jnp.zeros(shape, dtype=dtype).at[centre].set(matrix)
  return init
