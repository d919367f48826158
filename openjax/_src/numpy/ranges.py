"""Ranges, grids and diagonals: ``arange``, ``linspace``/``logspace``/
``geomspace``, ``eye``/``identity``/``tri``, ``diag``/``diagflat``,
``meshgrid``, ``indices``, ``fromfunction``.

Sizes and axes must be static (Python values, or concrete arrays); the values
themselves are built with ``iota`` and elementwise lax ops, so they trace.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, concrete_or_error, eval_trace, trace_state
from openjax._src.core.mesh import get_concrete_mesh
from openjax._src.numpy import util
from openjax._src.numpy.creation import (
    asarray, canonicalize_shape, fill, host_array, is_weak, put_on, user_dtype)
from openjax._src.numpy.eager_programs import quiet_dtype
from openjax._src.numpy.linalg_ops import diagonal

__all__ = ["arange", "diag", "diagflat", "eye", "fromfunction", "geomspace", "identity",
           "indices", "linspace", "logspace", "meshgrid", "tri"]


def _strong(x, dtype):
  """``x`` cast to ``dtype``, strongly typed (a host constant stays one)."""
  return lax._convert_element_type(x, dtype, False)


def _bcast(x, shape, dims):
  return lax.broadcast_in_dim(x, tuple(shape), tuple(dims))


# -------------------------------------------------------------------- arange
def _static(val, name: str):
  val = concrete_or_error(None, val, f"It arose in the jnp.arange argument '{name}'")
  if val is not None and np.ndim(val) != 0:
    raise ValueError(f"jax.numpy.arange: arguments must be scalars; got {name}={val}")
  return val


def arange(start: Any, stop: Any = None, step: Any = None, dtype: Any = None, *,
           device: Any = None, out_sharding: Any = None):
  """Evenly spaced values in ``[start, stop)``; the arguments must be static."""
  dtype = user_dtype(dtype, "arange")
  for pos, arg in enumerate((start, stop, step)):
    if arg is not None and not util.is_arraylike(arg):
      raise TypeError("arange requires ndarray, scalar, or None arguments, got "
                      f"{type(arg)} at position {pos}.")
  start_name = "stop" if stop is None and step is None else "start"
  start = _static(start, start_name)
  stop = _static(stop, "stop")
  step = _static(step, "step")
  if dtype is None:
    dtype = dtypes.result_type(start, *(x for x in (stop, step) if x is not None))
  if any(x is not None and dtypes.kind(dtypes.dtype(x)) == "c" for x in (start, stop, step)):
    raise ValueError("Passing complex start/stop/step to jnp.arange is no longer supported "
                     "starting in JAX v0.10.0.")
  # Array arguments are concrete here: compute sizes with their host values.
  start, stop, step = (x if x is None or isinstance(x, (int, float)) else np.asarray(x)[()]
                       for x in (start, stop, step))
  if stop is None:
    start, stop = 0, start
  if step is not None:
    work = (np.dtype(np.float32) if dtypes.kind(dtype) == "f" and dtype.itemsize < 4
            else dtype)
    size = max(0, int(np.ceil((stop - start) / step)))
    out = lax.add(_strong(start, work),
                  lax.mul(_strong(step, work), lax.broadcasted_iota(work, (size,), 0)))
    out = _strong(out, dtype)
  elif start == 0:
    out = lax.broadcasted_iota(dtype, (max(0, int(np.ceil(stop))),), 0)
  else:
    size = max(0, int(np.ceil(stop - start)))
    out = lax.add(_strong(start, dtype), lax.broadcasted_iota(dtype, (size,), 0))
  return put_on(out, device if device is not None else out_sharding)


# ---------------------------------------------------------- linspace & co.
def _space_dtype(fun: str, start, stop, dtype):
  if dtype is None:
    return util.to_inexact_dtype(dtypes.result_type(start, stop))
  return dtypes.explicit_dtype(dtype, fun)


def linspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             retstep: bool = False, dtype: Any = None, axis: int = 0, *, device: Any = None):
  """``num`` evenly spaced values from ``start`` to ``stop`` (array bounds give
  one sequence per element, laid out along ``axis``)."""
  num = concrete_or_error(operator.index, num, "'num' argument of jnp.linspace")
  axis = concrete_or_error(operator.index, axis, "'axis' argument of jnp.linspace")
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  util.check_arraylike("linspace", start, stop)
  out = _linspace(start, stop, num, endpoint, retstep, dtype, axis)
  if retstep:
    return put_on(out[0], device), out[1]
  return put_on(out, device)


# JAX jits the bodies of linspace, logspace and geomspace (``_linspace``, ...):
# eagerly each runs as one cached program (~80 us op by op at 7 elements).
@util.jit(static_argnames=("num", "endpoint", "retstep", "dtype", "axis"))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
  start, stop = util.ensure_arraylike("linspace", start, stop)
  dtype = _space_dtype("linspace", start, stop, dtype)
  cdt = util.to_inexact_dtype(dtype)
  start, stop = _strong(start, cdt), _strong(stop, cdt)
  bounds = tuple(np.broadcast_shapes(np.shape(start), np.shape(stop)))
  start = util.broadcast_to_shape(start, bounds)
  stop = util.broadcast_to_shape(stop, bounds)
  axis = len(bounds) + axis + 1 if axis < 0 else axis
  axis = util.canonicalize_axis(axis, len(bounds) + 1)
  out_shape = list(bounds)
  out_shape.insert(axis, num)
  rest = tuple(d for d in range(len(out_shape)) if d != axis)
  if num > 1:
    div = num - 1 if endpoint else num
    delta = lax.div(lax.sub(stop, start), np.asarray(div, cdt))
    real = dtypes.finfo(cdt).dtype
    # start * (1 - t) + stop * t with t = i / div recovers both endpoints exactly.
    t = _strong(lax.div(lax.broadcasted_iota(real, out_shape, axis), np.asarray(div, real)), cdt)
    lo, hi = _bcast(start, out_shape, rest), _bcast(stop, out_shape, rest)
    out = lax.add(lax.mul(lo, lax.sub(np.asarray(1, cdt), t)), lax.mul(hi, t))
    if endpoint:
      last = lax.eq(lax.broadcasted_iota(np.int32, out_shape, axis), np.asarray(num - 1, np.int32))
      out = lax.select(last, hi, out)
  elif num == 1:
    delta = (fill((), np.nan, cdt, False) if endpoint else lax.sub(stop, start))
    out = _bcast(start, out_shape, rest)
  else:
    delta = fill((), np.nan, cdt, False)
    out = fill(tuple(out_shape), 0, cdt, False)
  if dtypes.kind(dtype) in "iu" and dtypes.kind(cdt) not in "iu":
    out = lax.floor(out)
  result = _strong(out, dtype)
  return (result, delta) if retstep else result


def _power(fun: str, base, x):
  base, x = util.promote_args(fun, base, x)
  shape = np.broadcast_shapes(np.shape(base), np.shape(x))
  return lax.pow(util.broadcast_to_shape(base, shape), util.broadcast_to_shape(x, shape))


def logspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
             base: Any = 10.0, dtype: Any = None, axis: int = 0):
  """``base ** linspace(start, stop, num)``."""
  num = concrete_or_error(operator.index, num, "'num' argument of jnp.logspace")
  axis = concrete_or_error(operator.index, axis, "'axis' argument of jnp.logspace")
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  util.check_arraylike("logspace", start, stop)
  return _logspace(start, stop, num, endpoint, base, dtype, axis)


@util.jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
  start, stop = util.ensure_arraylike("logspace", start, stop)
  dtype = _space_dtype("logspace", start, stop, dtype)
  cdt = util.to_inexact_dtype(dtype)
  lin = _linspace(_strong(start, cdt), _strong(stop, cdt), num, endpoint, False, None, axis)
  return _strong(_power("logspace", base, lin), dtype)


def _log10(x):
  # log(x) * (1 / log(10)), as jnp.log10 computes it
  return lax.mul(lax.log(x), np.asarray(0.4342944819032518, dtypes.finfo(x.dtype).dtype))


def geomspace(start: Any, stop: Any, num: int = 50, endpoint: bool = True,
              dtype: Any = None, axis: int = 0):
  """``num`` values spaced evenly on a log scale from ``start`` to ``stop``."""
  num = concrete_or_error(operator.index, num, "'num' argument of jnp.geomspace")
  axis = concrete_or_error(operator.index, axis, "'axis' argument of jnp.geomspace")
  if num < 0:
    raise ValueError(f"Number of samples, {num}, must be non-negative.")
  util.check_arraylike("geomspace", start, stop)
  return _geomspace(start, stop, num, endpoint, dtype, axis)


@util.jit(static_argnames=("num", "endpoint", "dtype", "axis"))
def _geomspace(start, stop, num, endpoint, dtype, axis):
  start, stop = util.ensure_arraylike("geomspace", start, stop)
  dtype = _space_dtype("geomspace", start, stop, dtype)
  cdt = util.to_inexact_dtype(dtype)
  start, stop = _strong(start, cdt), _strong(stop, cdt)
  sign = lax.sign(start)
  logs = _logspace(_log10(lax.div(start, sign)), _log10(lax.div(stop, sign)), num, endpoint,
                   10.0, cdt, 0)
  res = lax.mul(util.broadcast_to_shape(sign, np.shape(logs)), logs)
  axis = util.canonicalize_axis(axis, np.ndim(res))
  if axis != 0:
    res = lax.transpose(res, (*range(1, axis + 1), 0, *range(axis + 1, np.ndim(res))))
  return _strong(res, dtype)


# -------------------------------------------------------- eye / tri / diag
def _dim(d: Any, context: str) -> int:
  return canonicalize_shape((d,), context)[0]


def _array_offset_call(N: Any, M: Any, k: Any, dtype: Any) -> bool:
  """Whether an eye/tri call with the offset ``k`` an eager Array or NumPy
  integer (static dimensions, a dtype-like) runs as one library program:
  its iotas, add, compare and cast cost ~4.5 us a bind against ~0.6 a step
  (eye(3, 4, k=np.int32(1)) 37 -> 11 us)."""
  return ((type(k) is Array or isinstance(k, np.integer)) and type(N) is int
          and (M is None or type(M) is int)
          and (dtype is None or isinstance(dtype, (type, np.dtype, str))) and quiet_dtype(dtype)
          and trace_state.trace is eval_trace and get_concrete_mesh().empty)


def eye(N: Any, M: Any = None, k: Any = 0, dtype: Any = None, *, device: Any = None):
  """A 2-D array with ones on diagonal ``k`` (``k`` may be traced)."""
  if device is None and _array_offset_call(N, M, k, dtype):
    return _eye_program(N, M, k, dtype)
  return _eye(N, M, k, dtype, device)


def _eye(N: Any, M: Any, k: Any, dtype: Any, device: Any):
  dtype = dtypes.explicit_dtype(float if dtype is None else dtype, "eye")
  if type(k) is int:
    info = np.iinfo(np.int32)
    k = min(max(k, int(info.min)), int(info.max))
  offset = util.ensure_arraylike("eye", k)
  if not (np.shape(offset) == () and dtypes.kind(dtypes.dtype(offset)) in "iu"):
    raise ValueError(f"k must be a scalar integer; got {k}")
  n = _dim(N, "argument of 'N' jnp.eye()")
  m = n if M is None else _dim(M, "argument 'M' of jnp.eye()")
  if n < 0 or m < 0:
    raise ValueError(f"negative dimensions are not allowed, got {N} and {M}")
  odt = dtypes.dtype(offset)
  i = lax.broadcasted_iota(odt, (n, m), 0)
  j = lax.broadcasted_iota(odt, (n, m), 1)
  on_diag = lax.eq(lax.add(i, offset), j)
  return put_on(_strong(on_diag, dtype), device)


_eye_program = util.jit(lambda N, M, k, dtype: _eye(N, M, k, dtype, None),
                        static_argnums=(0, 1, 3))


def identity(n: Any, dtype: Any = None):
  """The ``n x n`` identity matrix."""
  dtype = None if dtype is None else dtypes.explicit_dtype(dtype, "identity")
  return eye(n, dtype=dtype)


def tri(N: Any, M: Any = None, k: Any = 0, dtype: Any = None):
  """Ones at and below diagonal ``k``, zeros above (float32 by default)."""
  if _array_offset_call(N, M, k, dtype):
    return _tri_program(N, M, k, dtype)
  return _tri(N, M, k, dtype)


def _tri(N: Any, M: Any, k: Any, dtype: Any):
  dtype = np.dtype(np.float32) if dtype is None else dtypes.explicit_dtype(dtype, "tri")
  M = N if M is None else M
  shape = canonicalize_shape((N, M), "shape argument of jnp.tri()")
  offset = asarray(k)
  odt = dtypes.dtype(offset)
  if dtypes.kind(odt) not in "iu":
    raise TypeError(f"offset must be an integer, got {k!r}")
  sdt = np.dtype(np.int64) if odt.itemsize > 4 else np.dtype(np.int32)
  below = lax.ge(lax.add(lax.broadcasted_iota(sdt, shape, 0), _strong(offset, sdt)),
                 lax.broadcasted_iota(sdt, shape, 1))
  return _strong(below, dtype)


_tri_program = util.jit(_tri, static_argnums=(0, 1, 3))


def diag(v: Any, k: int = 0):
  """The ``k``-th diagonal of a 2-D array, or a 2-D array with 1-D ``v`` on
  its ``k``-th diagonal."""
  util.check_arraylike("diag", v)
  return _diag(v, operator.index(k))


# JAX's diag is a jit named ``_diag``: eagerly one cached program (the
# op-by-op 1-d case bound eight primitives, ~90 us at 3 elements).
@util.jit(static_argnames=("k",))
def _diag(v, k):
  v = util.ensure_arraylike("diag", v)
  shape = np.shape(v)
  if len(shape) == 2:
    return diagonal(v, offset=k)
  if len(shape) != 1:
    raise ValueError("diag input must be 1d or 2d")
  zero = fill((), 0, dtypes.dtype(v), is_weak(v))
  m = shape[0]
  n = m + abs(k)
  if m == 0:
    return _bcast(zero, (n, n), ())
  # Row-major, v[i] lands at flat index i * (n + 1) + k (k >= 0) or
  # i * (n + 1) - k * n (k < 0): one pad with n zeros between elements, then
  # a reshape. Two steps that write the n * n result once, where selecting
  # by an eye() mask made seven passes over it (1.5 ms at n = 1000).
  low = k if k >= 0 else -k * n
  high = n * n - low - m - (m - 1) * n
  return lax.reshape(lax.pad(v, zero, ((low, high, n),)), (n, n))


def diagflat(v: Any, k: int = 0):
  """A 2-D array with the flattened ``v`` on its ``k``-th diagonal."""
  if type(v) is Array and type(k) is int and trace_state.trace is eval_trace:
    # Eagerly its reshape and diag's program as one library program (a bind
    # ~4.5 us and the front ends against ~0.6 a step: diagflat 59 -> 16 us).
    return _diagflat_program(v, k)
  return _diagflat(v, k)


def _diagflat(v: Any, k: int):
  util.check_arraylike("diagflat", v)
  v = asarray(v)
  flat = lax.reshape(_strong(v, v.dtype), (math.prod(np.shape(v)),))
  return diag(flat, k)


_diagflat_program = util.jit(_diagflat, static_argnums=(1,))


# ----------------------------------------------------------- grids / indices
def meshgrid(*xi: Any, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
  """Coordinate arrays from 1-D coordinate vectors (``indexing`` 'xy' or 'ij')."""
  if (xi and trace_state.trace is eval_trace and type(copy) is bool and type(sparse) is bool
      and type(indexing) is str and all(type(x) is Array for x in xi)):
    # Eagerly one library program of its broadcasts (one a vector; binds of
    # several shapes each find their plan among the recent ones): ~4.5-6 us
    # a bind against ~0.6 a step (3 sparse vectors 31 -> 12 us).
    return _meshgrid_program(*xi, copy=copy, sparse=sparse, indexing=indexing)
  return _meshgrid(*xi, copy=copy, sparse=sparse, indexing=indexing)


def _meshgrid(*xi: Any, copy: bool, sparse: bool, indexing: str):
  util.check_arraylike("meshgrid", *xi)
  args = [util.asarray_operand(x) for x in xi]
  if not copy:
    raise ValueError("jax.numpy.meshgrid only supports copy=True")
  if indexing not in ("xy", "ij"):
    raise ValueError(f"Valid values for indexing are 'xy' and 'ij', got {indexing}")
  if any(np.ndim(a) != 1 for a in args):
    raise ValueError("Arguments to jax.numpy.meshgrid must be 1D, got shapes "
                     f"{[tuple(np.shape(a)) for a in args]}")
  if indexing == "xy" and len(args) >= 2:
    args[0], args[1] = args[1], args[0]
  sizes = [np.shape(a)[0] for a in args]
  full = [1 if sparse else s for s in sizes]
  out = []
  for i, a in enumerate(args):
    shape = [*full[:i], sizes[i], *full[i + 1:]] if sparse else full
    out.append(_bcast(a, shape, (i,)))
  if indexing == "xy" and len(args) >= 2:
    out[0], out[1] = out[1], out[0]
  return tuple(out)


_meshgrid_program = util.jit(_meshgrid, static_argnames=("copy", "sparse", "indexing"))


def indices(dimensions: Any, dtype: Any = None, sparse: bool = False):
  """Arrays holding the index of each position of a grid of ``dimensions``."""
  dtype = dtypes.explicit_dtype(int if dtype is None else dtype, "indices")
  dims = tuple(concrete_or_error(operator.index, d, "dimensions argument of jnp.indices")
               for d in dimensions)
  n = len(dims)
  out = []
  for i, d in enumerate(dims):
    shape = (1,) * i + (d,) + (1,) * (n - i - 1) if sparse else dims
    out.append(_bcast(lax.broadcasted_iota(dtype, (d,), 0), shape, (i,)))
  if sparse:
    return tuple(out)
  if not out:
    return host_array(np.array([], dtype), dtype)
  return lax.concatenate([lax.expand_dims(o, (0,)) for o in out], 0)


def fromfunction(function: Callable[..., Any], shape: Any, *, dtype: Any = float,
                 **kwargs: Any):
  """``function`` applied to index grids of ``shape`` (as in NumPy, it is
  called once with one full coordinate array per axis)."""
  shape = canonicalize_shape(shape, "shape argument of jnp.fromfunction()")
  dtype = dtypes.explicit_dtype(dtype, "fromfunction")
  grids = [_bcast(lax.broadcasted_iota(dtype, (d,), 0), shape, (i,))
           for i, d in enumerate(shape)]
  return function(*grids, **kwargs)
