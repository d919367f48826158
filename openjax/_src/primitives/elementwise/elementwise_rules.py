"""Rule builders shared by the elementwise and special-function primitives:
JAX's dtype classes and its dtype-error messages, the table builders ``unop``
and ``naryop`` (a primitive with its impl, abstract evaluation, batching and
lowering rules from one row), NumPy helpers (float32 detour for ml_dtypes
floats) and the small helpers the families' JVP and transpose rules share
(constants of an operand's dtype, lax's implicit broadcasting and its
transpose)."""
from __future__ import annotations

import builtins
import math

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.memory import aligned_result, check_allocation
from openjax._src.core.sharding_rules import elementwise_rule
from openjax._src.primitives.base.batch_util import broadcast_batcher
from openjax._src.primitives.base.structural import broadcast_in_dim, reduce_sum, reshape
from openjax._src.primitives.base.util import (broadcasting_shape, check_same_dtypes, pp_hide_none,
                                               quiet)
from openjax._src.primitives.shape.shape import full_like

# ------------------------------------------------------------ dtype classes
# (types, the names JAX lists in its "Accepted dtypes are subtypes of" messages)
FLOAT = ((np.floating,), "floating")
INEXACT = ((np.floating, np.complexfloating), "floating, complexfloating")
COMPLEX = ((np.complexfloating,), "complexfloating")
INT = ((np.integer,), "integer")
NUM = ((np.integer, np.floating, np.complexfloating), "integer, floating, complexfloating")
ANY = ((np.integer, np.floating, np.complexfloating, np.bool_),
       "integer, floating, complexfloating, bool")
ORDERED = ((np.integer, np.floating, np.bool_), "integer, floating, bool")
INT_OR_BOOL = ((np.integer, np.bool_), "integer, bool")
INT_OR_FLOAT = ((np.integer, np.floating), "integer, floating")
ABS = ((np.signedinteger, np.floating, np.complexfloating),
       "floating, complexfloating, signedinteger")
CONJ = ((np.float32, np.float64, np.complexfloating), "float32, complexfloating, float64")
COMPLEX_PARTS = ((np.float32, np.float64), "float32, float64")

def accepts(dt, types) -> bool:
  return builtins.any(dtypes.issubdtype(dt, t) for t in types)


def float0_error(name: str, i: int) -> TypeError:
  return TypeError(
      f"Called {name} with a float0 at position {i}. float0s do not support any "
      "operations by design: they are the tangents of integer values. If you "
      "didn't expect a float0, you may have taken a gradient with respect to an "
      "integer argument.")


def check_unary(name: str, x: ShapedArray, accepted) -> None:
  types, names = accepted
  if not accepts(x.dtype, types):
    if x.dtype == dtypes.float0:
      raise float0_error(name, 0)
    raise TypeError(f"{name} does not accept dtype {x.dtype.name}. Accepted dtypes "
                    f"are subtypes of {names}.")


def check_nary(name: str, avals, accepted, require_same: bool = True) -> None:
  for i, (aval, (types, names)) in enumerate(zip(avals, accepted)):
    if not accepts(aval.dtype, types):
      if aval.dtype == dtypes.float0:
        raise float0_error(name, i)
      raise TypeError(f"{name} does not accept dtype {aval.dtype.name} at position {i}. "
                      f"Accepted dtypes at position {i} are subtypes of {names}.")
  if require_same:
    check_same_dtypes(name, avals)


def weak(*avals) -> bool:
  return builtins.all(a.weak_type for a in avals)


# ---------------------------------------------------------------- unary table
def unop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable",
          accuracy=False, lower=None) -> Primitive:
  """A unary primitive; ``result_dtype(in_dtype)`` gives the result dtype;
  ``accuracy``: it takes JAX's ``accuracy`` parameter; ``lower`` is its
  StableHLO lowering rule. Its batch dimension passes through."""
  p = Primitive(name, kind=kind)
  out_dt = result_dtype or (lambda dt: dt)

  @p.def_impl
  @quiet   # XLA produces inf/NaN silently
  def _impl(x, **params):
    params.pop("accuracy", None)
    return [np.asarray(impl(x, **params)).astype(out_dt(x.dtype), copy=False)]

  @p.def_abstract_eval
  def _abstract_eval(x, **params):
    check_unary(name, x, accepted)
    return [ShapedArray(x.shape, out_dt(x.dtype), x.weak_type)]

  @p.def_eval_kernel
  def _eval_kernel(x, accuracy=None, **params):
    # The impl's NumPy function itself (the eval trace checks its dtype and
    # silences warnings once); parameters other than accuracy need the impl.
    return None if params else _planned(impl, x.dtype)

  p.def_sharding_rule(elementwise_rule(name))
  if accuracy:
    p.def_pp(pp_hide_none("accuracy"))

  @p.def_batch
  def _batch(vals, dims, **params):
    x, = vals
    d, = dims
    return p.bind(x, **params), [d]

  if lower is not None:
    p.def_lower(lower)
  return p


REAL_OF = {dtypes.complex64: dtypes.float32, dtypes.complex128: dtypes.float64}
COMPLEX_OF = {dtypes.float32: dtypes.complex64, dtypes.float64: dtypes.complex128}


def real_dtype(dt):
  return REAL_OF.get(dt, dt)


def complex_dtype(dt):
  return COMPLEX_OF.get(dt, dt)


def bool_dtype(_):
  return dtypes.bool_


def via_float32(fn):
  """Run ``fn`` on ml_dtypes floats (bfloat16, float8) in float32 and round back;
  NumPy has no transcendental loops for them."""
  def impl(x, *args, **params):
    if x.dtype in dtypes.custom_float_dtypes:
      out = fn(x.astype(np.float32), *(a.astype(np.float32) for a in args), **params)
      return np.asarray(out).astype(x.dtype)
    return fn(x, *args, **params)
  impl.direct = fn   # what an eval kernel planned for other dtypes calls (no test per call)
  return impl


# NumPy's float16 loops convert every element to float and back inside the
# loop; one float32 pass (SIMD casts) gives the same values: compares and
# max/min select exactly, and atan2 computes in float either way (within an
# ulp: NumPy's half loop rounds near-ties its own way). Measured per size
# (the float32 route's three casts cost ~5 us at 1e3): atan2 wins from
# ~64 elements (1e3: 46 -> 8 us, 1e5: 11.8 -> 0.6 ms), ordering compares and
# max/min from ~5e3 (1e5: less 0.79 -> 0.29 ms, maximum 1.19 -> 0.56 ms).
HALF_ATAN2_MIN = 64
HALF_COMPARE_MIN = 8192


# ml_dtypes' bfloat16/float8 compare loops convert both operands to float
# per element (~2.5 ns an element); float32 copies (exact) and NumPy's SIMD
# compare give the same booleans at ~0.7 ns (1e6 bfloat16 less ~3.0 -> ~0.6 ms, min of repeats).
CUSTOM_COMPARE_MIN = 64


def half_via_float32(ufunc, min_size: int, otherwise=None, *, compare=False,
                     custom_only=False):
  """The eval-kernel rule of a primitive computing ``ufunc``: ``ufunc`` on
  float32 copies of float16 operands (the result rounded back, booleans as
  they are) from ``min_size`` elements on, else ``otherwise(dtype)``
  (default: ``ufunc``). ``compare``: ``ufunc``'s booleans, also of
  bfloat16/float8 operands through float32 from ``CUSTOM_COMPARE_MIN``;
  ``custom_only``: only those, every other case ``otherwise(*avals)`` (an
  eval-kernel rule)."""
  def in_float32(*args):
    out = ufunc(*[a.astype(np.float32) for a in args])
    return out if out.dtype == np.bool_ else out.astype(np.float16)

  def compare_in_float32(x, y):
    x32 = x.astype(np.float32)
    # isnan's ne(x, x): one copy (a fresh 1e6 buffer is ~0.2-1 ms of page faults)
    return ufunc(x32, x32 if y is x else y.astype(np.float32))

  def rule(*avals, out_dtype=None):
    if out_dtype is not None:
      return None
    dt = avals[0].dtype
    if custom_only:
      if dt in dtypes.custom_float_dtypes and builtins.max(a.size for a in avals) >= \
          CUSTOM_COMPARE_MIN:
        shape = broadcasting_shape(ufunc.__name__, avals)
        if math.prod(shape) >= CONSTANT_OPERANDS_MIN_SIZE:   # broadcast scalars: one element
          return constant_operands(compare_in_float32, shape, np.dtype(np.bool_),
                                   ufunc.__name__)
        return compare_in_float32
      return otherwise(*avals)
    if dt == np.float16 and builtins.max(a.size for a in avals) >= min_size:
      return in_float32
    if (compare and dt in dtypes.custom_float_dtypes
        and builtins.max(a.size for a in avals) >= CUSTOM_COMPARE_MIN):
      return compare_in_float32
    return ufunc if otherwise is None else otherwise(dt)
  return rule


def _planned(impl, dt: np.dtype):
  """``impl``'s NumPy function for operands of ``dt``: a ``via_float32``
  wrapper's own function unless ``dt`` needs the float32 round trip."""
  direct = getattr(impl, "direct", None)
  return impl if direct is None or dt in dtypes.custom_float_dtypes else direct


def fl(fn):
  return via_float32(fn)


# From this many result elements an n-ary kernel first checks whether every
# operand is one value seen through zero strides (broadcast scalars, as
# ``jnp.iscomplex`` of a real array compares: ``ne(broadcast(0.0), 0.0)``):
# then one element is computed and broadcast (1e6: ~0.9 ms -> ~10 us). The
# check costs ~0.3 us; below this size a whole pass costs about as little.
CONSTANT_OPERANDS_MIN_SIZE = 1 << 14


def constant_operands(kernel, shape: tuple, dtype: np.dtype, name: str):
  """``kernel``, computing one element and broadcasting it to ``shape`` when
  every operand is an ndarray of zero strides (the same bits: every element
  is that one's). Otherwise a ufunc writes into aligned memory, as the plan
  makes a ufunc kernel do (``aligned_result``)."""
  corner = tuple(builtins.slice(0, 1) for _ in shape)
  whole = aligned_result(kernel, shape, np.dtype(dtype))

  def run(*args):
    for a in args:
      if type(a) is not np.ndarray or any(a.strides):
        return whole(*args)
    # (a result too large for memory fails as a computed one does: a
    # broadcast view of it would only move the failure, or an hour-long
    # pass, to the next operation)
    check_allocation(name, shape, dtype)
    one = kernel(*[a[corner[:a.ndim]] for a in args])
    return np.broadcast_to(one, shape)
  return run


def naryop(name: str, impl, accepted, *, result_dtype=None, kind="differentiable",
           out_dtype_param=False, lower=None) -> Primitive:
  """An elementwise primitive of ``len(accepted)`` operands (one dtype class
  each, or one class for all when given a single class) with equal dtypes;
  ``result_dtype(first operand's dtype)`` gives the result dtype; ``lower``
  is its StableHLO lowering rule. Batching follows lax's broadcasting."""
  p = Primitive(name, kind=kind)
  out_dt = result_dtype or (lambda dt: dt)
  if isinstance(accepted[1], str):   # one class for both operands of a binary op
    accepted = (accepted, accepted)

  @p.def_impl
  @quiet   # XLA produces inf/NaN silently
  def _impl(*args, out_dtype=None):
    if out_dtype is not None:
      args = [a.astype(out_dtype) for a in args]
    return [np.asarray(impl(*args)).astype(out_dt(args[0].dtype), copy=False)]

  @p.def_abstract_eval
  def _abstract_eval(*avals, out_dtype=None):
    check_nary(name, avals, accepted, require_same=out_dtype is None)
    shape = broadcasting_shape(name, avals)
    dt = np.dtype(out_dtype) if out_dtype is not None else out_dt(avals[0].dtype)
    return [ShapedArray(shape, dt, weak(*avals))]

  @p.def_eval_kernel
  def _eval_kernel(*avals, out_dtype=None):
    if out_dtype is not None:
      return None
    kernel = _planned(impl, avals[0].dtype)
    shape = broadcasting_shape(name, avals)
    if math.prod(shape) >= CONSTANT_OPERANDS_MIN_SIZE:
      return constant_operands(kernel, shape, out_dt(avals[0].dtype), name)
    return kernel

  p.def_sharding_rule(elementwise_rule(name))
  if out_dtype_param:
    p.def_pp(pp_hide_none("out_dtype"))
  p.def_batch(broadcast_batcher(p))
  if lower is not None:
    p.def_lower(lower)
  return p


# ------------------------------------------- helpers of the JVP/transpose rules
_SCALAR_TYPE = {"f": float, "c": complex, "i": int, "u": int, "b": bool}


def scalar_like(x, val):
  """``val`` as a constant of ``x``'s dtype: a weak Python scalar beside a weak
  scalar ``x`` (as JAX's), else a 0-d NumPy array."""
  aval = get_aval(x)
  if aval.weak_type and aval.ndim == 0:
    py = _SCALAR_TYPE[dtypes.kind(aval.dtype)](val)
    if dtypes.dtype(py) == aval.dtype:
      return py
  return np.array(val, aval.dtype)


def one_like(x):
  """A rank-0 one of ``x``'s dtype (a literal, weak when ``x`` is)."""
  return full_like(x, 1, shape=())


def zeros_like(x):
  return full_like(x, 0)


def maybe_broadcast(shape, x):
  """``x`` broadcast to ``shape`` (from rank 0 or size-1 dims of equal rank)."""
  xs = get_aval(x).shape
  if xs == tuple(shape):
    return x
  dims = () if not xs else tuple(range(len(shape)))
  return broadcast_in_dim(x, shape, dims)


def unbroadcast(aval, x):
  """Sum ``x`` back to ``aval``'s shape: the transpose of lax's implicit
  broadcasting (rank-0 operands, equal-rank size-1 dims)."""
  xs = get_aval(x).shape
  if xs == aval.shape:
    return x
  if not aval.shape:
    return reduce_sum(x, tuple(range(len(xs))))
  dims = tuple(i for i, (a, b) in enumerate(zip(xs, aval.shape)) if a != b)
  return reshape(reduce_sum(x, dims), aval.shape)
