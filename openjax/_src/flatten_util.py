"""``ravel_pytree``: a pytree of arrays as one flat vector, and the inverse map.

Optimisers and solvers written for vectors (``jax.scipy.optimize``, optax's
projections, hand-written Newton steps) use it on parameter trees.
"""
import warnings

import numpy as np

from openjax._src import dtypes
from openjax._src.nn import jnp
from openjax._src.primitives.base.convert import convert_element_type
from openjax._src.tree_util import tree_flatten, tree_unflatten


def ravel_pytree(pytree):
  """Ravel (flatten) a pytree of arrays down to a 1D array.

  Returns ``(flat, unravel_pytree)``: ``flat`` concatenates every leaf raveled,
  in ``tree_flatten`` order, in the leaves' promoted dtype; ``unravel_pytree``
  maps a vector of that shape and dtype back to a pytree like the input, each
  leaf in its own shape and dtype.
  """
  leaves, treedef = tree_flatten(pytree)
  flat, unravel_list = _ravel_list(leaves)
  return flat, lambda flat_vector: tree_unflatten(treedef, unravel_list(flat_vector))


def _ravel_list(leaves):
  if not leaves:
    return jnp.array([], np.float32), lambda _: []
  from_dtypes = tuple(dtypes.dtype(leaf) for leaf in leaves)
  to_dtype = dtypes.result_type(*from_dtypes)
  sizes = tuple(int(np.size(leaf)) for leaf in leaves)
  shapes = tuple(tuple(np.shape(leaf)) for leaf in leaves)
  split_points = tuple(int(i) for i in np.cumsum(sizes)[:-1])
  if all(dt == to_dtype for dt in from_dtypes):
    flat = jnp.concatenate([jnp.ravel(leaf) for leaf in leaves])
  else:
    flat = jnp.concatenate([jnp.ravel(convert_element_type(leaf, to_dtype)) for leaf in leaves])
  total = sum(sizes)

  def unravel_list(flat_vector):
    if np.shape(flat_vector) != (total,):
      raise ValueError(
          f"ravel_pytree's unravel function expected an array of shape {(total,)}, got "
          f"shape {np.shape(flat_vector)}: pass a vector as long as the raveled tree")
    given = dtypes.dtype(flat_vector)
    if given != to_dtype:
      raise TypeError(
          f"ravel_pytree's unravel function was given an array of dtype {given} but expects "
          f"dtype {to_dtype} (the raveled tree's dtype): convert it with .astype({to_dtype})")
    chunks = jnp.split(flat_vector, split_points)
    with warnings.catch_warnings():
      # Complex leaves raveled beside real ones come back real by design.
      warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
      return [convert_element_type(chunk.reshape(shape), dt)
              for chunk, shape, dt in zip(chunks, shapes, from_dtypes)]

  return flat, unravel_list
