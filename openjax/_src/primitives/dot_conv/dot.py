"""Contraction primitives: ``dot_general`` and the ``Precision`` /
``DotAlgorithmPreset`` enums that its ``precision`` parameter takes.

``dot_general`` contracts ``lhs`` and ``rhs`` over paired contracting
dimensions and zips paired batch dimensions; the result lays out the batch
dimensions, then the remaining ``lhs`` dimensions, then the remaining ``rhs``
dimensions (XLA's DotGeneral).
"""
from __future__ import annotations

import enum
import functools
import math
import operator
from typing import NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.config import config
from openjax._src.core import Array, Primitive, ShapedArray, Tracer, get_aval, pp_eqn
from openjax._src.core.sharding import NamedSharding, PartitionSpec, resolve_sharding
from openjax._src.core.sharding_rules import spec_of, type_str
from openjax._src.errors import ShardingTypeError
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.base.structural import defjvp, transpose

__all__ = ["dot_general", "dot_general_p", "dot", "batch_matmul", "Precision",
           "DotAlgorithm", "DotAlgorithmPreset"]


# ------------------------------------------------------------------ precision
class Precision(enum.Enum):
  """Matmul precision (``lax.Precision``): a speed/accuracy trade-off on
  accelerators; no effect on CPU. Strings such as ``'highest'`` also work."""
  DEFAULT = 0
  HIGH = 1
  HIGHEST = 2

  @classmethod
  def _missing_(cls, value):
    return _PRECISION_STRINGS.get(value)

  def __repr__(self):
    return f"{type(self).__name__}.{self.name}"

  def __str__(self):
    return self.name


_PRECISION_STRINGS = {
    "highest": Precision.HIGHEST, "float32": Precision.HIGHEST,
    "high": Precision.HIGH, "bfloat16_3x": Precision.HIGH, "tensorfloat32": Precision.HIGH,
    "default": Precision.DEFAULT, "bfloat16": Precision.DEFAULT, "fastest": Precision.DEFAULT,
    None: Precision.DEFAULT,
}


class DotAlgorithm(NamedTuple):
  """An explicit dot algorithm: storage types the operands are rounded to and
  the accumulation type (which also becomes the result type)."""
  lhs_precision_type: object
  rhs_precision_type: object
  accumulation_type: object
  lhs_component_count: int = 1
  rhs_component_count: int = 1
  num_primitive_operations: int = 1
  allow_imprecise_accumulation: bool = False


class DotAlgorithmPreset(enum.Enum):
  """Named dot algorithms (``LHS_RHS_ACCUM``); pass one, or its name, as
  ``precision``."""
  DEFAULT = enum.auto()
  ANY_F8_ANY_F8_F32 = enum.auto()
  ANY_F8_ANY_F8_F32_FAST_ACCUM = enum.auto()
  ANY_F8_ANY_F8_ANY = enum.auto()
  ANY_F8_ANY_F8_ANY_FAST_ACCUM = enum.auto()
  F16_F16_F16 = enum.auto()
  F16_F16_F32 = enum.auto()
  BF16_BF16_BF16 = enum.auto()
  BF16_BF16_F32 = enum.auto()
  BF16_BF16_F32_X3 = enum.auto()
  BF16_BF16_F32_X6 = enum.auto()
  BF16_BF16_F32_X9 = enum.auto()
  TF32_TF32_F32 = enum.auto()
  TF32_TF32_F32_X3 = enum.auto()
  F32_F32_F32 = enum.auto()
  F64_F64_F64 = enum.auto()

  def __repr__(self):
    return f"{type(self).__name__}.{self.name}"

  def __str__(self):
    return self.name

  @property
  def accumulation_type(self):
    """The accumulation (and result) dtype, or None when the inputs decide."""
    name = self.name
    if name in ("DEFAULT", "ANY_F8_ANY_F8_ANY", "ANY_F8_ANY_F8_ANY_FAST_ACCUM"):
      return None
    return {"F16_F16_F16": dtypes.float16, "BF16_BF16_BF16": dtypes.bfloat16,
            "F64_F64_F64": dtypes.float64}.get(name, dtypes.float32)


def canonicalize_precision(precision):
  """``None``, a pair of ``Precision``s, a ``DotAlgorithm`` or a
  ``DotAlgorithmPreset`` from any accepted spelling."""
  if precision is None:
    default = config.read("jax_default_matmul_precision")
    if default is None:
      return None
    try:
      return canonicalize_precision(default)
    except ValueError:
      raise ValueError(
          "jax_default_matmul_precision flag must be set to None, a value in "
          f"{list(_PRECISION_STRINGS)}, or the name of a lax.DotAlgorithmPreset, "
          f"but got {default}") from None
  if isinstance(precision, str):
    if precision in _PRECISION_STRINGS:
      # The enum's own lookup (``Precision("highest")`` through ``_missing_``)
      # cost ~2 us of a 12.8 us lax.dot(precision="highest") of 15 elements.
      p = _PRECISION_STRINGS[precision]
      return p, p
    if precision in DotAlgorithmPreset.__members__:
      return DotAlgorithmPreset[precision]
  elif isinstance(precision, Precision):
    return precision, precision
  elif isinstance(precision, (DotAlgorithm, DotAlgorithmPreset)):
    return precision
  elif isinstance(precision, (list, tuple)) and len(precision) == 2:
    if all(isinstance(p, Precision) for p in precision):
      return tuple(precision)
    if all(isinstance(p, str) for p in precision):
      return tuple(canonicalize_precision(p)[0] for p in precision)
  raise ValueError(
      "Precision argument must be one of:\n- None,\n"
      f"- a string in {list(_PRECISION_STRINGS)},\n- a lax.Precision value,\n"
      "- a tuple of two lax.Precision values or strings,\n"
      "- a lax.DotAlgorithmPreset or the name of one of these presets, or\n"
      f"- a lax.DotAlgorithm value;\nbut got {precision}.")


# ---------------------------------------------------------------- dtype rules
def _bit_width(dt: np.dtype) -> int:
  if dt == dtypes.bool_:
    return 1
  if dtypes.kind(dt) in "fc":
    return dtypes.finfo(dt).bits
  return dtypes.iinfo(dt).bits


def _type_rank(dt: np.dtype) -> tuple:
  # XLA's "higher precision type" order: complex over real, then exponent
  # range, mantissa, width, and signed over unsigned.
  k = dtypes.kind(dt)
  real = dt if k != "c" else (dtypes.float32 if dt == dtypes.complex64 else dtypes.float64)
  fl = dtypes.kind(real) == "f"
  info = dtypes.finfo(real) if fl else None
  return (k == "c", info.maxexp if fl else -1, info.nmant if fl else -1,
          _bit_width(real), dtypes.kind(real) != "u")


def _dot_result_dtype(lhs_dt, rhs_dt, precision, preferred_element_type) -> np.dtype:
  lr, rr = _type_rank(lhs_dt), _type_rank(rhs_dt)
  if lr > rr:
    out = lhs_dt
  elif rr > lr:
    out = rhs_dt
  elif lhs_dt != rhs_dt:
    raise TypeError(f"lax.dot_general argument type error: {lhs_dt}, {rhs_dt}")
  else:
    out = lhs_dt
  if preferred_element_type is None or preferred_element_type == out:
    return out
  has_algorithm = isinstance(precision, (DotAlgorithm, DotAlgorithmPreset))
  if (not has_algorithm and dtypes.kind(out) != "f"
      and _bit_width(preferred_element_type) < _bit_width(out)):
    raise TypeError("`preferred_element_type` must not be narrower than the original "
                    f"type, got preferred_element_type of {preferred_element_type} for "
                    f"result type of {out}.")
  return preferred_element_type


# ----------------------------------------------------------------- dot_general
dot_general_p = Primitive("dot_general", kind="differentiable")


_DIMENSION_NUMBERS: dict = {}


def _dimension_numbers(dimension_numbers) -> tuple:
  """``dimension_numbers`` as tuples of ints, remembered when hashable."""
  try:
    (lc, rc), (lb, rb) = dimension_numbers
  except (TypeError, ValueError):
    raise TypeError("dot_general: dimension_numbers must be ((lhs_contracting, "
                    "rhs_contracting), (lhs_batch, rhs_batch)), got "
                    f"{dimension_numbers!r}") from None
  dims = ((_index_tuple(lc, "lhs_contracting"), _index_tuple(rc, "rhs_contracting")),
          (_index_tuple(lb, "lhs_batch"), _index_tuple(rb, "rhs_batch")))
  if type(dimension_numbers) is tuple and dims == dimension_numbers:
    try:
      if len(_DIMENSION_NUMBERS) < 1024:
        _DIMENSION_NUMBERS[dimension_numbers] = dims
    except TypeError:
      pass
  return dims


_PLAIN_DIMS = {1: (((0,), (0,)), ((), ())), 2: (((1,), (0,)), ((), ()))}   # lax.dot's by lhs rank
_SHAPED = (Array, Tracer)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
  """General dot product (XLA's DotGeneral). Without ``dimension_numbers``,
  the plain vector/matrix product of 1-D or 2-D operands.

  ``dimension_numbers`` is ``((lhs_contracting, rhs_contracting), (lhs_batch,
  rhs_batch))``; the result holds the batch dimensions, then the remaining
  ``lhs`` dimensions, then the remaining ``rhs`` dimensions.
  """
  dims = None
  if dimension_numbers is None:
    # (an Array's or tracer's shape without np.shape's dispatch)
    lhs_shape = lhs.shape if isinstance(lhs, _SHAPED) else np.shape(lhs)
    rhs_shape = rhs.shape if isinstance(rhs, _SHAPED) else np.shape(rhs)
    if 1 <= len(lhs_shape) <= 2 and 1 <= len(rhs_shape) <= 2 and \
        lhs_shape[-1] == rhs_shape[0]:
      # canonical as made: no lookup (lax.dot(f32[3,5], f32[5]) 8.2 -> ~7 us)
      dimension_numbers = dims = _PLAIN_DIMS[len(lhs_shape)]
    else:
      raise ValueError(
          "jax.lax.dot: dimension_numbers must be specified when not performing simple "
          "un-batched matrix-matrix, matrix-vector, or vector-vector products; got "
          f"lhs_shape={tuple(lhs_shape)} rhs_shape={tuple(rhs_shape)}")
  if out_sharding is not None:
    # Kept as the spec alone (hashable, printed): the mesh is the operands'.
    out_sharding = resolve_sharding(out_sharding, "dot_general")
    out_sharding = out_sharding.spec if isinstance(out_sharding, NamedSharding) else None
  if dims is None:
    try:   # dimension numbers seen before (tuples of ints, hashable): no checks
      dims = _DIMENSION_NUMBERS.get(dimension_numbers)
    except TypeError:
      dims = None
    if dims is None:
      dims = _dimension_numbers(dimension_numbers)
  return _bind_dot(lhs, rhs, dims, precision, preferred_element_type, out_sharding)


def _bind_dot(lhs, rhs, dims, precision, preferred_element_type, out_sharding):
  """dot_general of canonical dimension numbers ``dims``."""
  if preferred_element_type is not None:
    preferred_element_type = dtypes.explicit_dtype(preferred_element_type, "dot")
  return dot_general_p.bind1(lhs, rhs, dimension_numbers=dims,
                             precision=canonicalize_precision(precision),
                             preferred_element_type=preferred_element_type,
                             out_sharding=out_sharding)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):
  """``lax.dot`` with explicit ``dimension_numbers`` ``((lhs_contracting,
  rhs_contracting), (lhs_batch, rhs_batch))``."""
  return dot(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
             preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
  """Batched matrix product over the leading dimensions of equal-rank
  operands of rank at least 2."""
  lnd = lhs.ndim if isinstance(lhs, _SHAPED) else np.ndim(lhs)
  rnd = rhs.ndim if isinstance(rhs, _SHAPED) else np.ndim(rhs)
  if min(lnd, rnd) < 2:
    raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lnd}, {rnd}")
  if lnd != rnd:
    raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lnd}, {rnd}")
  dims = _BATCH_DIMS.get(lnd)
  if dims is None:   # canonical as made: dot() skips its lookup and checks
    batch = tuple(range(lnd - 2))
    dims = _BATCH_DIMS[lnd] = (((lnd - 1,), (rnd - 2,)), (batch, batch))
  return _bind_dot(lhs, rhs, dims, precision, None, None)


_BATCH_DIMS: dict = {}   # batch_matmul's dimension numbers by rank


def _index_tuple(x, what: str) -> tuple[int, ...]:
  try:
    if isinstance(x, (tuple, list)):
      return tuple(map(operator.index, x))
    if hasattr(x, "__index__"):
      return (operator.index(x),)
    return tuple(map(operator.index, x))
  except TypeError:
    raise TypeError(f"dot_general: {what} must be an int or a sequence of ints, "
                    f"got {x!r}") from None


def _free_dims(ndim: int, contract: Sequence[int], batch: Sequence[int]) -> list[int]:
  used = set(contract) | set(batch)
  return [d for d in range(ndim) if d not in used]


def _compute_dtype(lhs_dt, rhs_dt, out_dt) -> np.dtype:
  """The NumPy dtype the product is accumulated in: float32 for narrow
  floats (XLA's CPU accumulates them in float32), 64-bit when any side is."""
  kinds = {dtypes.kind(d) for d in (lhs_dt, rhs_dt, out_dt)}
  wide = any(d.itemsize >= 8 and dtypes.kind(d) in "iuf" or d == dtypes.complex128
             for d in (lhs_dt, rhs_dt, out_dt))
  if "c" in kinds:
    return dtypes.complex128 if wide else dtypes.complex64
  if "f" in kinds:
    return dtypes.float64 if wide else dtypes.float32
  return dtypes.bool_ if kinds == {"b"} else dtypes.int64


def _int_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
  """Exact wrapping integer matmul (int64 result, to be narrowed by the
  caller). Uses float64 BLAS when every partial sum is exactly representable."""
  k = a.shape[-1]
  if a.size and b.size and k:
    bound = k * float(np.abs(a.astype(np.float64)).max()) * \
        float(np.abs(b.astype(np.float64)).max())
    if bound < 2.0 ** 53:
      return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.int64)
  # Arithmetic modulo 2**64 gives the wrapped result of any narrower type.
  with np.errstate(all="ignore"):
    return np.matmul(a.astype(np.uint64), b.astype(np.uint64)).view(np.int64)


def _cast(x: np.ndarray, dt: np.dtype) -> np.ndarray:
  """Round the accumulator to the result dtype with XLA's conversion rules
  (integers wrap; floats saturate into integers, NaN becoming 0)."""
  if x.dtype == dt:
    return x
  if dt == dtypes.bool_:
    return x != 0
  if x.dtype.kind == "c" and dtypes.kind(dt) != "c":
    x = np.real(x)
  if x.dtype.kind == "f" and dtypes.kind(dt) in "iu":
    info = dtypes.iinfo(dt)
    x = np.nan_to_num(np.clip(np.trunc(x), float(info.min), float(info.max)), nan=0.0)
    with np.errstate(invalid="ignore"):
      out = x.astype(dt)
    # float(max) of a 64-bit type rounds up past the range: pin it.
    return np.where(x >= float(info.max), np.array(info.max, dt), out)
  return x.astype(dt)


@functools.lru_cache(maxsize=4096)
def _impl_plan(lhs_dt, rhs_dt, precision, preferred_element_type):
  """(result dtype, accumulation dtype) for the impl (cached: hot in eager)."""
  out_dt = _dot_result_dtype(lhs_dt, rhs_dt, precision, preferred_element_type)
  return out_dt, _compute_dtype(lhs_dt, rhs_dt, out_dt)


def _dot_tl(lhs, rhs):
  return np.dot(lhs.T, rhs)


def _dot_tr(lhs, rhs):
  return np.dot(lhs, rhs.T)


def _dot_tlr(lhs, rhs):
  return np.dot(lhs.T, rhs.T)


# Integer products up to this many multiply-adds run NumPy's exact wrapping
# uint64 matmul directly; larger ones take the impl's float64 BLAS path when
# exact. Bool products up to it (or any matrix-vector one) run NumPy's bool
# matmul, which stops at the first true term (a wholly false product costs
# ~2 ns a term, where the impl's float32 BLAS path costs its conversions:
# a false 256 x 256 product takes 40 ms there, 1 ms here).
_SMALL_PRODUCT = 1 << 16


def _operand_prep(shape, perm, target, comp):
  """The function bringing an operand to its matmul layout ``target`` in the
  accumulation dtype, skipping the steps that do nothing (the eval trace
  checks a large operand's kernel at shapes of ones: a layout without a
  reshape passes that check)."""
  transpose = perm != tuple(range(len(perm)))
  reshape = tuple(shape[d] for d in perm) != target
  def prep(x):
    if x.dtype != comp:
      x = x.astype(comp)
    if transpose:
      x = x.transpose(perm)
    return x.reshape(target) if reshape else x
  return prep


def _stacked_matvec(lhs_ndim: int, rhs_ndim: int, dimension_numbers) -> bool:
  """Whether the product is np.matmul's of a vector and a stack of matrices
  in its own layout: a vector contracted with the rows of the matrices
  (``v @ B``), no batch dimensions. np.matmul reads the stack in place where
  the general path copies it transposed (jnp.matmul(f32[189],
  f32[126,189,252]) 14 -> 0.86 ms)."""
  (lc, rc), (lb, _) = dimension_numbers
  if lb or len(lc) != 1:
    return False
  # (B @ v reads the stack as one matrix already: a free reshape, one GEMV.)
  return lhs_ndim == 1 and rhs_ndim >= 3 and rc[0] == rhs_ndim - 2


def _general_kernel(lhs, rhs, dimension_numbers, out_dt, comp):
  """The impl's product as a kernel planned from the operands' avals, or None
  where the impl's care is needed (large integer products, float
  accumulators rounded to integers, complex ones to reals)."""
  (lc, rc), (lb, rb) = dimension_numbers
  ck, ok = dtypes.kind(comp), dtypes.kind(out_dt)
  lf, rf = _free_dims(len(lhs.shape), lc, lb), _free_dims(len(rhs.shape), rc, rb)
  batch_shape = tuple(lhs.shape[d] for d in lb)
  m_shape = tuple(lhs.shape[d] for d in lf)
  n_shape = tuple(rhs.shape[d] for d in rf)
  nb, m, n = math.prod(batch_shape), math.prod(m_shape), math.prod(n_shape)
  k = math.prod(lhs.shape[d] for d in lc)
  terms = nb * m * n * k
  if ck == "b":
    if terms > _SMALL_PRODUCT and min(m, n) > 1:
      return None
  elif ck in "iu":
    if ok not in "iu" or terms > _SMALL_PRODUCT:
      return None
    # NumPy's integer matmul wraps modulo 2**w in the result's own width,
    # which gives the bits of any wider wrapping accumulator cast down: the
    # same terms without casting both operands and the result through
    # uint64 (i32 x i32 of 12 elements 9.2 -> ~6 us).
    comp = out_dt
  elif ck != ok:
    return None
  # np.matmul's layouts: batch dimensions first, a side without free
  # dimensions a vector (given a unit axis under batch dimensions).
  unit = bool(batch_shape)
  lhs_target = batch_shape + ((m,) if lf or unit else ()) + (k,)
  rhs_target = batch_shape + (k,) + ((n,) if rf or unit else ())
  out_shape = batch_shape + m_shape + n_shape
  lhs_prep = _operand_prep(lhs.shape, (*lb, *lf, *lc), lhs_target, comp)
  rhs_prep = _operand_prep(rhs.shape, (*rb, *rc, *rf), rhs_target, comp)
  got = batch_shape + lhs_target[len(batch_shape):-1] + rhs_target[len(batch_shape) + 1:]
  reshape, cast = got != out_shape, comp != out_dt
  if k == 1:
    # Nothing contracted (an outer product, a product by a scalar): one
    # broadcast multiply, the one term matmul would compute, without its
    # K=1 GEMM (jnp.dot(i32[1e6], 2.0) 3.0 -> 0.9 ms, tensordot(a, b, 0) of
    # 1e3 1.0 -> 0.6 ms).
    lhs_col, rhs_row = batch_shape + (m, 1), batch_shape + (1, n)

    def outer(x, y):
      out = np.multiply(lhs_prep(x).reshape(lhs_col), rhs_prep(y).reshape(rhs_row))
      out = out.reshape(out_shape)
      return out.astype(out_dt) if cast else out
    return outer

  def kernel(x, y):
    out = np.matmul(lhs_prep(x), rhs_prep(y))
    if reshape:
      out = out.reshape(out_shape)
    return out.astype(out_dt) if cast else out
  return kernel


@dot_general_p.def_eval_kernel
def _dot_general_eval_kernel(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                             out_sharding=None):
  # The impl's common case (vector and matrix products of one float dtype),
  # chosen once per plan: one BLAS call on views. Other products: the impl's
  # batched GEMM with its layout planned here.
  out_dt, comp = _impl_plan(lhs.dtype, rhs.dtype, precision, preferred_element_type)
  (lc, rc), (lb, _) = dimension_numbers
  if (lhs.dtype == rhs.dtype == out_dt == comp and dtypes.kind(comp) in "fc"
      and _stacked_matvec(len(lhs.shape), len(rhs.shape), dimension_numbers)):
    return np.matmul
  if (lb or len(lc) != 1 or len(lhs.shape) > 2 or len(rhs.shape) > 2
      or not lhs.dtype == rhs.dtype == out_dt == comp or dtypes.kind(comp) not in "fc"):
    return _general_kernel(lhs, rhs, dimension_numbers, out_dt, comp)
  tl = len(lhs.shape) == 2 and lc[0] == 0
  tr = len(rhs.shape) == 2 and rc[0] == 1
  return (_dot_tlr if tr else _dot_tl) if tl else (_dot_tr if tr else np.dot)


@dot_general_p.def_impl
def _dot_general_impl(lhs, rhs, *, dimension_numbers, precision, preferred_element_type,
                      out_sharding=None):
  out_dt, comp = _impl_plan(lhs.dtype, rhs.dtype, precision, preferred_element_type)
  (lc, rc), (lb, rb) = dimension_numbers
  if (lhs.dtype == rhs.dtype == out_dt == comp and dtypes.kind(comp) in "fc"
      and _stacked_matvec(lhs.ndim, rhs.ndim, dimension_numbers)):
    with np.errstate(all="ignore"):
      return [np.asarray(np.matmul(lhs, rhs))]
  if (not lb and len(lc) == 1 and lhs.ndim <= 2 and rhs.ndim <= 2
      and lhs.dtype == rhs.dtype == out_dt == comp and dtypes.kind(comp) in "fc"):
    # The common cases (vector and matrix products): one BLAS call on views.
    if lhs.ndim == 2 and lc[0] == 0:
      lhs = lhs.T
    if rhs.ndim == 2 and rc[0] == 1:
      rhs = rhs.T
    with np.errstate(all="ignore"):
      return [np.asarray(np.dot(lhs, rhs))]
  lf, rf = _free_dims(lhs.ndim, lc, lb), _free_dims(rhs.ndim, rc, rb)
  batch_shape = tuple(lhs.shape[d] for d in lb)
  m_shape = tuple(lhs.shape[d] for d in lf)
  n_shape = tuple(rhs.shape[d] for d in rf)
  nb, m, n = math.prod(batch_shape), math.prod(m_shape), math.prod(n_shape)
  k = math.prod(lhs.shape[d] for d in lc)
  # (batch, free, contract) @ (batch, contract, free): one batched GEMM.
  a = np.transpose(lhs, (*lb, *lf, *lc)).reshape(nb, m, k)
  b = np.transpose(rhs, (*rb, *rc, *rf)).reshape(nb, k, n)
  if k == 1:   # nothing contracted: the one term, by a broadcast multiply
    if comp == dtypes.bool_:
      out = np.logical_and(a, b)
    else:
      with np.errstate(all="ignore"):
        out = np.multiply(a.astype(comp, copy=False), b.astype(comp, copy=False))
  elif comp == dtypes.bool_:
    acc = np.float32 if k < 2 ** 24 else np.float64
    out = np.matmul(a.astype(acc), b.astype(acc)) > 0
  elif comp == dtypes.int64 and min(m, n) == 1 and dtypes.kind(out_dt) in "iu" \
      and out_dt.itemsize <= 4:
    # Matrix-vector products: NumPy's integer loop in the result's width,
    # unsigned (wrapping is the exact result modulo 2**bits, as the int64
    # path narrowed), no float64 copies: i32[2,5e5] . i32[5e5] 6.6 -> 0.5 ms.
    wrap = np.dtype(f"u{out_dt.itemsize}")
    out = np.matmul(a.astype(out_dt, copy=False).view(wrap),
                    b.astype(out_dt, copy=False).view(wrap)).view(out_dt)
  elif comp == dtypes.int64:
    out = _int_matmul(a, b)
  else:
    with np.errstate(all="ignore"):
      out = np.matmul(a.astype(comp, copy=False), b.astype(comp, copy=False))
  out = out.reshape(batch_shape + m_shape + n_shape)
  return [_cast(np.asarray(out), out_dt)]


def _check_dims(side: str, ndim: int, contract, batch) -> None:
  if not all(0 <= d < ndim for d in (*contract, *batch)):
    raise TypeError(
        f"dot_general requires {side} dimension numbers to be nonnegative and less "
        f"than the number of axes of the {side} value, got {side}_batch of "
        f"{batch} and {side}_contracting of {contract} for {side} of rank {ndim}")


def _clash(lhs_spec: tuple, rhs_spec: tuple) -> bool:
  return any(p is not None and q is not None and p != q for p, q in zip(lhs_spec, rhs_spec))


@dot_general_p.def_sharding_rule
def _dot_general_sharding_rule(specs, avals, out_avals, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding=None):
  # JAX's rule: batch dimensions split alike; contracting dimensions alike
  # where both are split, and not split on both sides (a partial sum's
  # layout is ambiguous); one side's split of a contracting dimension is
  # summed away (the result is whole along it: an all-reduce). The free
  # dimensions keep their splits, no mesh axis twice.
  if out_sharding is not None:
    return [tuple(out_sharding._normalized_spec_for_aval(len(out_avals[0].shape)))]
  (lc, rc), (lb, rb) = dimension_numbers
  ls, rs = specs
  lbs, rbs = tuple(ls[d] for d in lb), tuple(rs[d] for d in rb)
  if _clash(lbs, rbs):
    raise ShardingTypeError("dot_general requires lhs batch dimensions and rhs batch "
                            f"dimensions to have the consistent sharding, got {lbs} and {rbs}.")
  lcs, rcs = tuple(ls[d] for d in lc), tuple(rs[d] for d in rc)
  if _clash(lcs, rcs):
    raise ShardingTypeError("dot_general requires contracting dimensions to have consistent "
                            f"sharding, got {lcs} and {rcs}.")
  if any(p is not None and q is not None for p, q in zip(lcs, rcs)):
    raise ShardingTypeError(
        "Contracting dimensions are sharded and it is ambiguous how the output should be "
        "sharded. Please specify the output sharding via the `out_sharding` parameter. Got "
        f"lhs_contracting_spec={lcs} and rhs_contracting_spec={rcs}")
  out = (lbs + tuple(p for d, p in enumerate(ls) if d not in lc and d not in lb)
         + tuple(p for d, p in enumerate(rs) if d not in rc and d not in rb))
  used = [a for p in out if p is not None for a in ((p,) if isinstance(p, str) else p)]
  if len(used) != len(set(used)):
    raise ShardingTypeError(
        f"dot_general operation with inputs: {avals[0].str_short()}, "
        f"{avals[1].str_short()} produces an illegally sharded result: "
        # (the result's type as built from its spec: no varying axes, as JAX)
        f"{type_str(out_avals[0].update(vma=frozenset()), out, short=True)}")
  return [out]


@dot_general_p.def_abstract_eval
def _dot_general_abstract_eval(lhs, rhs, *, dimension_numbers, precision,
                               preferred_element_type, out_sharding=None):
  (lc, rc), (lb, rb) = dimension_numbers
  _check_dims("lhs", lhs.ndim, lc, lb)
  _check_dims("rhs", rhs.ndim, rc, rb)
  if len(lb) != len(rb):
    raise TypeError("dot_general requires equal numbers of lhs_batch and rhs_batch "
                    f"dimensions, got lhs_batch {lb} and rhs_batch {rb}.")
  for side, dims, what in (("lhs", lb, "batch"), ("rhs", rb, "batch"),
                           ("lhs", lc, "contracting"), ("rhs", rc, "contracting")):
    if len(set(dims)) != len(dims):
      noun = "batch dimensions" if what == "batch" else "contracting dimensions"
      raise TypeError(f"dot_general requires {side} {noun} to be distinct, got "
                      f"{side}_{what} {dims}.")
  for side, c, b in (("lhs", lc, lb), ("rhs", rc, rb)):
    if set(c) & set(b):
      raise TypeError(f"dot_general requires {side} batch dimensions to be disjoint from "
                      f"contracting dimensions, got {side}_batch {b} and "
                      f"{side}_contracting {c}.")
  lbs, rbs = tuple(lhs.shape[d] for d in lb), tuple(rhs.shape[d] for d in rb)
  if lbs != rbs:
    raise TypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                    f"to have the same shape, got {lbs} and {rbs}.")
  lcs, rcs = tuple(lhs.shape[d] for d in lc), tuple(rhs.shape[d] for d in rc)
  if lcs != rcs:
    raise TypeError("dot_general requires contracting dimensions to have the same "
                    f"shape, got {lcs} and {rcs}.")
  shape = (lbs + tuple(lhs.shape[d] for d in _free_dims(lhs.ndim, lc, lb))
           + tuple(rhs.shape[d] for d in _free_dims(rhs.ndim, rc, rb)))
  dt = _dot_result_dtype(lhs.dtype, rhs.dtype, precision, preferred_element_type)
  return [ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)]


@dot_general_p.def_pp
def _dot_general_pp(eqn, ctx):
  # As JAX prints it: None-valued parameters hidden, dimension numbers as lists.
  params = {k: v for k, v in sorted(eqn.params.items())
            if v is not None and k != "out_sharding"}
  (lc, rc), (lb, rb) = params["dimension_numbers"]
  params["dimension_numbers"] = ((list(lc), list(rc)), (list(lb), list(rb)))
  return pp_eqn(eqn, ctx, params=params)


# Bilinear: each operand's tangent contracts against the other operand.
defjvp(dot_general_p,
       lambda g, x, y, **params: dot_general_p.bind1(g, y, **params),
       lambda g, x, y, **params: dot_general_p.bind1(x, g, **params))


def _ranges_like(*xs):
  start = 0
  for x in xs:
    n = len(x)
    yield tuple(range(start, start + n))
    start += n


def _transpose_lhs(ct, x_aval, y, *, dimension_numbers, precision, preferred_element_type,
                   swap_ans=False):
  (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
  y_ndim = get_aval(y).ndim
  x_kept = _free_dims(x_aval.ndim, x_contract, x_batch)
  y_kept = _free_dims(y_ndim, y_contract, y_batch)
  if swap_ans:
    ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
  else:
    ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
  dims = ((ans_y, tuple(y_kept)), (ans_batch, tuple(y_batch)))
  # ct . y lays out (x batch, x kept, x contract ordered like y's contract).
  x_contract_by_y = [c for _, c in sorted(zip(y_contract, x_contract))]
  unsorted = list(x_batch) + x_kept + x_contract_by_y
  perm = tuple(int(i) for i in np.argsort(unsorted))
  out_sharding = None
  if get_aval(ct).sharding is not None or get_aval(y).sharding is not None:
    # The cotangent is laid out as the primal operand (JAX's rule): its
    # contracting dimensions may be split (a partial sum the partition reduces).
    x_spec = spec_of(x_aval)
    out_sharding = PartitionSpec(*(x_spec[d] for d in unsorted))
  out = dot_general_p.bind1(ct, y, dimension_numbers=dims, precision=precision,
                            preferred_element_type=preferred_element_type,
                            out_sharding=out_sharding)
  x_bar = transpose(out, perm)
  if get_aval(x_bar).dtype != x_aval.dtype:
    x_bar = _convert_element_type(x_bar, x_aval.dtype, x_aval.weak_type)
  return x_bar


@dot_general_p.def_transpose
def _dot_general_transpose(cts, x, y, *, dimension_numbers, precision,
                           preferred_element_type, out_sharding=None):
  ct, = cts
  x_lin, y_lin = is_undefined_primal(x), is_undefined_primal(y)
  if x_lin and y_lin:
    raise ValueError("dot_general transpose: both operands are linear (the product "
                     "is bilinear, not linear)")
  if type(ct) is Zero:
    return [Zero(x.aval) if x_lin else None, Zero(y.aval) if y_lin else None]
  if x_lin:
    return [_transpose_lhs(ct, x.aval, y, dimension_numbers=dimension_numbers,
                           precision=precision,
                           preferred_element_type=preferred_element_type), None]
  (xc, yc), (xb, yb) = dimension_numbers
  return [None, _transpose_lhs(ct, y.aval, x, dimension_numbers=((yc, xc), (yb, xb)),
                               precision=precision,
                               preferred_element_type=preferred_element_type, swap_ans=True)]


def _bump(dims, b: int) -> tuple:
  return tuple(d + (d >= b) for d in dims)


def _batch_dim_nums(ndims, bdims, dimension_numbers):
  """Dimension numbers of the batched dot_general and where its result's batch
  dim lands: two batched operands zip their batch dims as a new leading batch
  dimension; one batched operand keeps its batch dim as a free dimension."""
  lhs_ndim, _ = ndims
  lbd, rbd = bdims
  (lc, rc), (lb, rb) = dimension_numbers
  if lbd is not None and rbd is not None:
    new = ((_bump(lc, lbd), _bump(rc, rbd)),
           ((lbd,) + _bump(lb, lbd), (rbd,) + _bump(rb, rbd)))
    return new, 0
  if lbd is not None:
    lhs_free = _free_dims(lhs_ndim, _bump(lc, lbd), _bump(lb, lbd))
    out_dim = len(lb) + sum(d < lbd for d in lhs_free)
    return ((_bump(lc, lbd), rc), (_bump(lb, lbd), rb)), out_dim
  rhs_free = _free_dims(ndims[1], _bump(rc, rbd), _bump(rb, rbd))
  out_dim = lhs_ndim - len(lc) + sum(d < rbd for d in rhs_free)
  return ((lc, _bump(rc, rbd)), (lb, _bump(rb, rbd))), out_dim


@dot_general_p.def_batch
def _dot_general_batch(vals, dims, *, dimension_numbers, **params):
  lhs, rhs = vals
  new_dims, out_dim = _batch_dim_nums((get_aval(lhs).ndim, get_aval(rhs).ndim), dims,
                                      dimension_numbers)
  return [dot_general_p.bind1(lhs, rhs, dimension_numbers=new_dims, **params)], [out_dim]


def _lower_compute_dtype(lhs_dt, rhs_dt, out_dt) -> np.dtype:
  """The element type the compiled product runs in: the impl's accumulation
  type for floats (narrow floats in float32), the result type for integers
  (wrapping arithmetic gives the same low bits at any width), float32 counts
  for booleans (IREE cannot tile an i1 matmul)."""
  if out_dt == dtypes.bool_:
    return np.dtype(np.float32)
  comp = _compute_dtype(lhs_dt, rhs_dt, out_dt)
  if dtypes.kind(comp) in "iu":
    return out_dt
  if dtypes.kind(comp) == "f" and dtypes.kind(out_dt) == "f" and out_dt.itemsize >= 4:
    return out_dt
  return comp


def _lower_operand(ctx, x, aval, comp):
  if aval.dtype != dtypes.bool_:
    y = ctx.convert(x, comp, aval.shape)
    if y is not x and dtypes.kind(aval.dtype) == "u":
      # IREE folds a widening of unsigned operands into the matmul as a sign
      # extension (200 as uint8 becomes -56): keep the widened tensor apart.
      y, = ctx.op("stablehlo.optimization_barrier", [y], [y.type])
    return y
  # A select, not a convert: IREE folds an i1 convert into the matmul's
  # operand encoding and then cannot materialise it.
  return ctx.op("stablehlo.select", [x, ctx.full(1, aval.shape, comp),
                                     ctx.full(0, aval.shape, comp)],
                ctx.tensor_type(aval.shape, comp))


def _precision_attr(precision) -> str:
  pair = precision if isinstance(precision, tuple) else (Precision.DEFAULT, Precision.DEFAULT)
  return "[" + ", ".join(f"#stablehlo<precision {p.name}>" for p in pair) + "]"


# dot_general's lowering rule is control/dot_lowering.py's: it calls this
# for the StableHLO op, and the host's BLAS (a host kernel, runtime layer)
# for large products in CPU programs.
def dot_general_stablehlo(ctx, lhs, rhs, *, dimension_numbers, precision,
                          preferred_element_type, out_sharding=None):
  """``stablehlo.dot_general`` of ``lhs`` and ``rhs`` (``ctx.avals_out[0]``)."""
  (lc, rc), (lb, rb) = dimension_numbers
  lhs_aval, rhs_aval = ctx.avals_in
  out_aval, = ctx.avals_out
  if math.prod(lhs_aval.shape[d] for d in lc) == 0 or math.prod(out_aval.shape) == 0:
    # An empty contraction sums nothing (IREE's compiler divides by the zero
    # extent and crashes): the result is zeros.
    return [ctx.full(False if out_aval.dtype == dtypes.bool_ else 0, out_aval.shape,
                     out_aval.dtype)]
  comp = _lower_compute_dtype(lhs_aval.dtype, rhs_aval.dtype, out_aval.dtype)
  lhs, rhs = (_lower_operand(ctx, x, a, comp) for x, a in ((lhs, lhs_aval), (rhs, rhs_aval)))
  dnums = (f"#stablehlo.dot<lhs_batching_dimensions = {list(lb)}, "
           f"rhs_batching_dimensions = {list(rb)}, lhs_contracting_dimensions = {list(lc)}, "
           f"rhs_contracting_dimensions = {list(rc)}>")
  out = ctx.op("stablehlo.dot_general", [lhs, rhs], ctx.tensor_type(out_aval.shape, comp),
               attrs={"dot_dimension_numbers": dnums,
                      "precision_config": _precision_attr(precision)})
  if out_aval.dtype == dtypes.bool_:
    zero = ctx.full(0, out_aval.shape, comp)
    return [ctx.op("stablehlo.compare", [out, zero], out_aval,
                   attrs={"comparison_direction": "#stablehlo<comparison_direction NE>"})]
  return [ctx.convert(out, out_aval)]


@dot_general_p.def_cost
def _dot_general_cost(lhs, rhs, *, avals_out, dimension_numbers, **_):
  # One multiply and one add per (batch, m, n, k): 2 * batch * M * N * K.
  (lc, _), _ = dimension_numbers
  k = math.prod(lhs.shape[d] for d in lc)
  return {"flops": 2.0 * math.prod(avals_out[0].shape) * k}
