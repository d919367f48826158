"""Smaller ``jax.lax`` functions written on the primitives: ``broadcast_like``,
``dtype``, ``empty``, ``stage``, ``shape_as_value``, ``dce_sink``,
``scatter_apply``, ``composite`` and the type names of lax's signatures."""
from __future__ import annotations

import dataclasses
import enum
import functools
from collections.abc import Callable, Sequence
from typing import Any, Union

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src import tree_util
from openjax._src.api.jit import jit
from openjax._src.config import config
from openjax._src.control.rng_bit_generator import rng_bit_generator_p
from openjax._src.control.trace_cache import TraceCache, fun_key
from openjax._src.core import ClosedJaxpr, ShapedArray, Tracer, get_aval
from openjax._src.core.devices import default_backend
from openjax._src.interpreters.staging import trace_to_jaxpr
from openjax._src.primitives.identity.identity_ops import dce_sink_p, stage_p
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.primitives.index import gather_scatter
from openjax._src.primitives.index.gather_scatter import scatter_apply_jaxpr

__all__ = ["DotDimensionNumbers", "PrecisionLike", "RaggedDotDimensionNumbers",
           "RandomAlgorithm", "broadcast_like", "composite", "dce_sink", "dtype", "empty",
           "index_take", "platform_dependent", "rng_bit_generator", "rng_bit_generator_p", "scatter_apply",
           "shape_as_value", "stage"]

# ((lhs_contracting, rhs_contracting), (lhs_batch, rhs_batch))
DotDimensionNumbers = tuple[tuple[Sequence[int], Sequence[int]],
                            tuple[Sequence[int], Sequence[int]]]
# index_take's 10 equations (the wrap of each index, their concatenation,
# the gather) as one library program when called eagerly: 3x4x2 operand
# 124 -> ~30 us; traced, JAX's equations inline.
_index_take_program = eager_program(static_argnames=("axes",))(gather_scatter.index_take)


@functools.wraps(gather_scatter.index_take)
def index_take(src, idxs, axes):
  return _index_take_program(src, tuple(idxs), axes=tuple(int(a) for a in axes))


PrecisionLike = Union[None, str, lax.Precision, tuple[str, str],
                      tuple[lax.Precision, lax.Precision]]


@dataclasses.dataclass(frozen=True)
class RaggedDotDimensionNumbers:
  """``ragged_dot_general``'s dimensions: the dot's ``((contracting), (batch))``
  numbers, the lhs dimensions that are ragged, and the rhs group dimensions."""
  dot_dimension_numbers: DotDimensionNumbers
  lhs_ragged_dimensions: Sequence[int]
  rhs_group_dimensions: Sequence[int]


class RandomAlgorithm(enum.IntEnum):
  """The bit generator algorithms of ``rng_bit_generator``."""
  RNG_DEFAULT = 0
  RNG_THREE_FRY = 1
  RNG_PHILOX = 2

  def __str__(self) -> str:
    return self.name


def dtype(x: Any) -> np.dtype:
  """The canonical dtype of ``x`` (an array, a scalar or a dtype-like)."""
  return dtypes.dtype(x, canonicalize=True)


def broadcast_like(arr, like_arr):
  """``arr`` broadcast (NumPy rules, trailing axes aligned) to ``like_arr``'s shape."""
  shape = np.shape(like_arr)
  aval = get_aval(arr) if isinstance(arr, Tracer) else None
  ndim = aval.ndim if aval is not None else np.ndim(arr)
  if ndim > len(shape):
    raise ValueError(f"lax.broadcast_like: cannot broadcast an array of rank {ndim} to "
                     f"shape {shape}")
  return lax.broadcast_in_dim(arr, shape, tuple(range(len(shape) - ndim, len(shape))))


def empty(shape, dtype, *, out_sharding=None):
  """An array of ``shape`` and ``dtype`` whose values are unspecified (zeros here,
  as JAX's CPU backend gives)."""
  shape = (shape,) if np.ndim(shape) == 0 else tuple(shape)
  return lax.full(shape, 0, dtype)


def stage(x, /):
  """Lift ``x`` (a Python scalar, NumPy array or Array) into the current trace;
  outside any trace, an Array. The identity on values."""
  if isinstance(x, Tracer):
    return x  # already in the trace: as in JAX, no equation
  return stage_p.bind1(x)


def shape_as_value(shape):
  """``shape`` as an int32 vector (a constant: openjax shapes are static)."""
  shape = tuple(shape)
  if not shape:
    return lax.full((0,), 0, np.int32)
  return np.asarray(shape, dtype=np.int32)


def dce_sink(val, *, prevent_mlir_dce: bool = False):
  """Mark every array of the pytree ``val`` as used (``dce_sink_p``); returns None."""
  for leaf in tree_util.tree_leaves(val):
    dce_sink_p.bind(leaf, prevent_mlir_dce=prevent_mlir_dce)


def scatter_apply(operand, scatter_indices, func: Callable, dimension_numbers, *,
                  update_shape=(), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode=None):
  """Apply the scalar function ``func`` to the elements of ``operand`` that the
  scatter addresses (repeated indices apply it repeatedly)."""
  operand_dtype = dtypes.dtype(operand)
  updates = lax.full(tuple(update_shape), 0, operand_dtype)
  return scatter_apply_jaxpr(operand, scatter_indices, updates, dimension_numbers,
                             _apply_jaxpr(func, operand_dtype),
                             indices_are_sorted=indices_are_sorted,
                             unique_indices=unique_indices, mode=mode)


# (fun_key(func), dtype, flags) -> the ClosedJaxpr of ``old, _ -> func(old)``.
# As JAX's cached reduction jaxprs, one function traces once per dtype; a
# fresh effect-free closure over the same values finds its trace too, so the
# scatter's parameters repeat and an eager call reuses its plan (tracing and
# planning anew cost ~0.5 ms a call).
_apply_jaxprs = TraceCache()


def _apply_jaxpr(func: Callable, dtype) -> ClosedJaxpr:
  key = (fun_key(func), dtype, config.values_snapshot())
  closed = _apply_jaxprs.get(key)
  if closed is not None:
    return closed
  aval = ShapedArray((), dtype)
  jaxpr, consts = trace_to_jaxpr(lambda old, _: [func(old)], [aval, aval])
  if any(isinstance(c, Tracer) for c in consts):
    raise NotImplementedError(
        "lax.scatter_apply: func closes over a traced value; compute it with jnp.where "
        "or pass a function of the operand element only")
  (out_aval,) = jaxpr.out_avals
  if out_aval.shape != ():
    raise TypeError(f"lax.scatter_apply: func must map a scalar to a scalar, got "
                    f"{out_aval.str_short()} for input {aval.str_short()}")
  closed = ClosedJaxpr(jaxpr, consts)
  _apply_jaxprs.put(key, closed, consts)
  return closed


def composite(decomposition: Callable, name: str, version: int = 0):
  """Wrap ``decomposition`` as a named composite operation.

  ``composite(f, name)(*args, **attributes)`` computes ``f(*args, **attributes)``
  (keyword attributes are static); the call is staged as one named jitted call,
  so it shows up under its ``name`` in jaxprs and lowered modules.
  """
  if not isinstance(name, str) or not name:
    raise TypeError(f"lax.composite: name must be a non-empty string, got {name!r}")

  @functools.wraps(decomposition)
  def call(*args, **attributes):
    for key, value in attributes.items():
      if isinstance(value, (Tracer, np.ndarray)) or hasattr(value, "aval"):
        raise TypeError(f"lax.composite {name}: attribute {key} must be a static Python "
                        f"value or NumPy scalar, got an array")
    fn = functools.partial(decomposition, **attributes)
    fn.__name__ = name  # the jitted call's name in jaxprs
    return jit(fn)(*args)

  return call


# Names platform_dependent accepts for each openjax backend (JAX's spellings).
_PLATFORM_NAMES = {"cpu": ("cpu",), "gpu": ("cuda", "gpu"), "cuda": ("cuda", "gpu")}


def platform_dependent(*args, default: Callable | None = None, **per_platform: Callable):
  """Call the function for the platform computations run on (``cpu=``, ``cuda=``,
  ...), or ``default`` when none is given for it."""
  from_backend = _PLATFORM_NAMES.get(default_backend(), (default_backend(),))
  for name in from_backend:
    if name in per_platform:
      return per_platform[name](*args)
  if default is None:
    raise NotImplementedError(
        f"lax.platform_dependent: no branch for platform {from_backend[0]!r} (given: "
        f"{sorted(per_platform)}); pass {from_backend[0]}= or default=")
  return default(*args)


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
  """``(new_key, bits)``: ``bits`` of ``shape`` and unsigned ``dtype`` from the
  ``uint32[4]`` state ``key`` (stateless; see ``control/rng_bit_generator``)."""
  shape = tuple(int(d) for d in shape)
  dtype = dtypes.canonicalize_dtype(dtype)
  if dtype not in (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.uint32),
                   np.dtype(np.uint64)):
    raise TypeError(f"rng_bit_generator: unsupported dtype {dtype}")
  return tuple(rng_bit_generator_p.bind(key, shape=shape, dtype=dtype,
                                        algorithm=int(algorithm)))
