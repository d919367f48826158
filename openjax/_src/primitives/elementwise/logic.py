"""Elementwise predicates, comparisons, logical and bitwise operations,
``select_n``, ``clamp`` and ``bitcast_convert_type``: the elementwise
primitives whose rules need no arithmetic, so ``arithmetic`` and
``transcendental`` write their rules with these.

Wrappers follow ``jax.lax``: operands must already have equal dtypes; rank-0
operands broadcast. A result is weakly typed exactly when every operand is.
"""
from __future__ import annotations

import builtins
import math
import time

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import elementwise_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.batch_util import axis_size, bdim_at_front
from openjax._src.primitives.base.structural import broadcast, broadcast_in_dim, defjvp, moveaxis
from openjax._src.primitives.base.util import check_same_dtypes
from openjax._src.primitives.elementwise.elementwise_lowering import (
    binary, bitcast_convert_rule, clamp_rule, compare_rule, not_rule, select_n_rule, shift_rule,
    unary)
from openjax._src.primitives.elementwise.elementwise_rules import (
    ANY, CUSTOM_COMPARE_MIN, FLOAT, HALF_COMPARE_MIN, INT, INT_OR_BOOL, ORDERED, bool_dtype,
    check_nary, half_via_float32, maybe_broadcast, naryop, scalar_like, unop, weak, zeros_like)

__all__ = [
    "is_finite", "is_finite_p", "bitwise_not", "not_p", "population_count", "population_count_p",
    "clz", "clz_p", "bitwise_and", "and_p", "bitwise_or", "or_p", "bitwise_xor", "xor_p",
    "shift_left", "shift_left_p", "shift_right_arithmetic", "shift_right_arithmetic_p",
    "shift_right_logical", "shift_right_logical_p", "eq", "eq_p", "ne", "ne_p", "lt", "lt_p",
    "le", "le_p", "gt", "gt_p", "ge", "ge_p", "select_n", "select_n_p", "select", "clamp",
    "clamp_p", "bitcast_convert_type", "bitcast_convert_type_p",
]


def _shape(x) -> tuple:
  return get_aval(x).shape


def _unsigned(x):
  # Same-width signed -> unsigned astype keeps the bits (two's complement).
  return np.asarray(x).astype(np.dtype(f"u{x.dtype.itemsize}"))


# ------------------------------------------------------------------ is_finite
is_finite_p = unop("is_finite", np.isfinite, FLOAT, result_dtype=bool_dtype,
                   kind="nondifferentiable", lower=unary("stablehlo.is_finite"))


def is_finite(x):
  """Elementwise test for neither infinite nor NaN."""
  return is_finite_p.bind1(x)


def _is_finite_float32(x):
  return np.isfinite(x.astype(np.float32))


@is_finite_p.def_eval_kernel
def _is_finite_eval_kernel(x):
  # ml_dtypes' isfinite loop converts per element; a float32 copy (exact)
  # and NumPy's SIMD test: 1e6 bfloat16 ~1.9 -> ~0.3 ms
  if x.dtype in dtypes.custom_float_dtypes and x.size >= CUSTOM_COMPARE_MIN:
    return _is_finite_float32
  return np.isfinite


# ------------------------------------------------------------------------ not
def _not(x):
  return np.logical_not(x) if x.dtype == np.bool_ else np.invert(x)


not_p = unop("not", _not, INT_OR_BOOL, kind="nondifferentiable", lower=not_rule)


def bitwise_not(x):
  """Elementwise NOT (logical for bool, bitwise for integers)."""
  return not_p.bind1(x)


# ----------------------------------------------------------- population_count
def _population_count(x):
  # NumPy counts the bits of |x| for signed ints; XLA counts the raw bits.
  return np.bitwise_count(_unsigned(x))


population_count_p = unop("population_count", _population_count, INT,
                          kind="nondifferentiable", lower=unary("stablehlo.popcnt"))


def population_count(x):
  """Elementwise count of set bits."""
  return population_count_p.bind1(x)


def _population_count_narrow(x):
  return np.bitwise_count(x.view(_UNSIGNED_OF[x.dtype])).view(x.dtype)


def _population_count_wide(x):
  return np.bitwise_count(x.view(_UNSIGNED_OF[x.dtype])).astype(x.dtype)


_UNSIGNED_OF = {np.dtype(t): np.dtype(f"u{np.dtype(t).itemsize}")
                for t in (np.int8, np.int16, np.int32, np.int64,
                          np.uint8, np.uint16, np.uint32, np.uint64)}


@population_count_p.def_eval_kernel
def _population_count_eval_kernel(x):
  # The raw bits through a free unsigned view (the impl cast a copy), and
  # np.bitwise_count's uint8 counts seen as int8/uint8 without a cast:
  # jnp.bitwise_count of 1e6 int8 ~0.42 -> ~0.18 ms
  if x.dtype not in _UNSIGNED_OF or not x.shape:
    return None
  return _population_count_narrow if x.dtype.itemsize == 1 else _population_count_wide


# ------------------------------------------------------------------------ clz
def _clz(x):
  bits = x.dtype.itemsize * 8
  if bits <= 32:
    # Up to 32 bits a value is exact in float64, whose frexp exponent is its
    # bit length (0 for 0): three NumPy calls where the search makes ~20.
    length = np.frexp(_unsigned(x).astype(np.float64))[1]
    return (bits - length).astype(x.dtype)
  v = _unsigned(x).astype(np.uint64)
  length = np.zeros(x.shape, np.int64)   # bit length, by binary search
  for shift in (32, 16, 8, 4, 2, 1):
    big = v >= (np.uint64(1) << np.uint64(shift))
    length = np.where(big, length + shift, length)
    v = np.where(big, v >> np.uint64(shift), v)
  length = np.where(v > 0, length + 1, length)
  return bits - length


clz_p = unop("clz", _clz, INT, kind="nondifferentiable",
             lower=unary("stablehlo.count_leading_zeros"))


def clz(x):
  """Elementwise count of leading zero bits."""
  return clz_p.bind1(x)


# ------------------------------------------------------------ and, or, xor
and_p = naryop("and", np.bitwise_and, INT_OR_BOOL, kind="nondifferentiable",
               lower=binary("stablehlo.and"))


def bitwise_and(x, y):
  """Elementwise AND (logical for bool, bitwise for integers)."""
  return and_p.bind1(x, y)


or_p = naryop("or", np.bitwise_or, INT_OR_BOOL, kind="nondifferentiable",
              lower=binary("stablehlo.or"))


def bitwise_or(x, y):
  """Elementwise OR (logical for bool, bitwise for integers)."""
  return or_p.bind1(x, y)


xor_p = naryop("xor", np.bitwise_xor, INT_OR_BOOL, kind="nondifferentiable",
               lower=binary("stablehlo.xor"))


def bitwise_xor(x, y):
  """Elementwise XOR (logical for bool, bitwise for integers)."""
  return xor_p.bind1(x, y)


# --------------------------------------------------------------------- shifts
# XLA reads a shift amount as unsigned: amounts of the bit width or more
# (negative ones included) shift every bit out, which leaves 0, or the sign
# fill for an arithmetic right shift. NumPy's shift loops define out-of-range
# amounts the same way (``npy_lshift``/``npy_rshift`` compare the amount as
# an unsigned ``size_t``), so one NumPy call per shift gives XLA's bits: the
# general case took ~12 us at 1e3 elements in five NumPy passes
# (tests/test_eager_library_kernels.py checks them against that formula).
def _shift_left(x, y):
  return np.asarray(np.left_shift(x, y))


def _shift_right_arithmetic(x, y):
  return np.asarray(np.right_shift(x, y))


def _shift_right_logical(x, y):
  if x.dtype.kind == "u":
    return np.asarray(np.right_shift(x, y))
  unsigned = np.dtype(f"u{x.dtype.itemsize}")
  return np.asarray(np.right_shift(x.view(unsigned), y.view(unsigned))).view(x.dtype)


shift_left_p = naryop("shift_left", _shift_left, INT, kind="nondifferentiable",
                      lower=shift_rule("left"))


def shift_left(x, y):
  """Elementwise left shift (0 when y >= the bit width)."""
  return shift_left_p.bind1(x, y)


@shift_left_p.def_eval_kernel
def _shift_left_eval_kernel(x, y):
  return np.left_shift   # the ufunc itself, no wrapper


shift_right_arithmetic_p = naryop("shift_right_arithmetic", _shift_right_arithmetic, INT,
                                  kind="nondifferentiable", lower=shift_rule("arithmetic"))


def shift_right_arithmetic(x, y):
  """Elementwise sign-filling right shift."""
  return shift_right_arithmetic_p.bind1(x, y)


@shift_right_arithmetic_p.def_eval_kernel
def _shift_right_arithmetic_eval_kernel(x, y):
  return np.right_shift


shift_right_logical_p = naryop("shift_right_logical", _shift_right_logical, INT,
                               kind="nondifferentiable", lower=shift_rule("logical"))


def shift_right_logical(x, y):
  """Elementwise zero-filling right shift."""
  return shift_right_logical_p.bind1(x, y)


# A signed operand's unsigned views decided at plan time (10 elements: 2.1
# -> 1.2 us; jnp.power of integers runs 6 of them).
@shift_right_logical_p.def_eval_kernel
def _shift_right_logical_eval_kernel(x, y):
  if x.dtype.kind == "u":
    return np.right_shift
  signed, unsigned = x.dtype, np.dtype(f"u{x.dtype.itemsize}")

  def shift_right_logical_signed(a, b):
    return np.asarray(np.right_shift(a.view(unsigned), b.view(unsigned))).view(signed)
  return shift_right_logical_signed


# ---------------------------------------------------------------- comparisons
eq_p = naryop("eq", np.equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=compare_rule("EQ"))


def eq(x, y):
  """Elementwise equals: x == y."""
  return eq_p.bind1(x, y)


# bfloat16/float8 operands through float32; the others as naryop plans them
# (broadcast scalars computed once)
eq_p.def_eval_kernel(half_via_float32(np.equal, HALF_COMPARE_MIN, eq_p.eval_kernel,
                                      compare=True, custom_only=True))


ne_p = naryop("ne", np.not_equal, ANY, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=compare_rule("NE"))


def ne(x, y):
  """Elementwise not-equals: x != y."""
  return ne_p.bind1(x, y)


ne_p.def_eval_kernel(half_via_float32(np.not_equal, HALF_COMPARE_MIN, ne_p.eval_kernel,
                                      compare=True, custom_only=True))


lt_p = naryop("lt", np.less, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=compare_rule("LT"))


def lt(x, y):
  """Elementwise less-than: x < y."""
  return lt_p.bind1(x, y)


lt_p.def_eval_kernel(half_via_float32(np.less, HALF_COMPARE_MIN, compare=True))


le_p = naryop("le", np.less_equal, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=compare_rule("LE"))


def le(x, y):
  """Elementwise less-than-or-equals: x <= y."""
  return le_p.bind1(x, y)


le_p.def_eval_kernel(half_via_float32(np.less_equal, HALF_COMPARE_MIN, compare=True))


gt_p = naryop("gt", np.greater, ORDERED, result_dtype=bool_dtype, kind="nondifferentiable",
              lower=compare_rule("GT"))


def gt(x, y):
  """Elementwise greater-than: x > y."""
  return gt_p.bind1(x, y)


gt_p.def_eval_kernel(half_via_float32(np.greater, HALF_COMPARE_MIN, compare=True))


ge_p = naryop("ge", np.greater_equal, ORDERED, result_dtype=bool_dtype,
              kind="nondifferentiable", lower=compare_rule("GE"))


def ge(x, y):
  """Elementwise greater-than-or-equals: x >= y."""
  return ge_p.bind1(x, y)


ge_p.def_eval_kernel(half_via_float32(np.greater_equal, HALF_COMPARE_MIN, compare=True))


# ------------------------------------------------------------------- select_n
select_n_p = Primitive("select_n")


def select_n(which, *cases):
  """``cases[which]`` elementwise; ``which`` is bool (two cases) or int."""
  if not cases:
    raise ValueError("select_n() must have at least one case")
  return select_n_p.bind1(which, *cases)


def select(pred, on_true, on_false):
  """``on_true`` where ``pred`` else ``on_false`` (``select_n(pred, on_false, on_true)``)."""
  return select_n_p.bind1(pred, on_false, on_true)


@select_n_p.def_impl
def _select_n_impl(which, *cases):
  if len(cases) == 1:
    return [np.asarray(cases[0])]
  if which.dtype == np.bool_:
    return [np.where(which, cases[1], cases[0])]
  out = cases[-1]
  for i in range(len(cases) - 2, -1, -1):   # out-of-range indices pick an end case
    out = np.where(which <= i, cases[i], out)
  return [np.asarray(out)]


def _select2(which, on_false, on_true):
  return np.where(which, on_true, on_false)


def _select2_scalar(which, on_false, on_true):
  # A rank-0 predicate picks a whole case: no copy (values are immutable),
  # where np.where took ~0.6 ms at 1e6 elements to copy one.
  return on_true if which else on_false


# np.where branches per element: on a predicate the CPU cannot predict it
# runs at ~10-17 ns an element (a mispredicted branch each), 10-20x its speed
# on a predictable one (sorted, or periodic: branch predictors learn periods
# of hundreds). Blending the cases' bits, ``f ^ ((f ^ t) & mask)``, costs four
# passes (~2.5 ns an element) whatever the predicate holds, and gives the
# same bits. Which one wins is measured on the data: np.where on a first
# chunk, timed. Either way the bits are np.where's.
_BLEND_MIN_SIZE = 1 << 16
_BLEND_PROBE = 1 << 14
_BLEND_NS_PER_ELEMENT = 2.5
_INT_OF_ITEMSIZE = {1: np.dtype(np.int8), 2: np.dtype(np.int16), 4: np.dtype(np.int32),
                    8: np.dtype(np.int64)}


def _constant_case(case) -> bool:
  """``case`` is one value seen through zero strides (a broadcast scalar:
  ``jnp.where(jnp.isnan(a), jnp.inf, a)``'s ``inf``)."""
  return not any(case.strides)


def _select2_large(which, on_false, on_true):
  if not which.flags.c_contiguous:
    return np.where(which, on_true, on_false)
  f_whole, t_whole = on_false.flags.c_contiguous, on_true.flags.c_contiguous
  if f_whole and t_whole:
    w, f, t = which.reshape(-1), on_false.reshape(-1), on_true.reshape(-1)
    start = time.perf_counter()
    np.where(w[:_BLEND_PROBE], t[:_BLEND_PROBE], f[:_BLEND_PROBE])
    if time.perf_counter() - start < _BLEND_PROBE * _BLEND_NS_PER_ELEMENT * 1e-9:
      return np.where(which, on_true, on_false)   # predictable: np.where's branches win
    return _blend(which, on_false, on_true)
  if f_whole and _constant_case(on_true):
    return _select_constant(which, on_false, on_true, True)
  if t_whole and _constant_case(on_false):
    return _select_constant(which, on_true, on_false, False)
  return np.where(which, on_true, on_false)


# A predicate this close to all-false or all-true: a copy and a masked
# copy of the few other elements beat np.where's pass (1e6 float32 with 1 in
# 1000 set: 0.70 -> 0.41 ms; none set: 0.73 -> 0.29 ms, a plain copy).
_SPARSE_FRACTION = 0.01


def _select_constant(which, case, constant, constant_where):
  """``case`` with ``constant`` (a broadcast scalar) where ``which`` is
  ``constant_where``, decided on the count of set elements (~45 us at 1e6):
  none or all set, a copy of one side; nearly none or all, a copy of the
  majority side and a masked copy of the minority; otherwise np.where or
  the bit blend with the scalar, as for whole cases (random predicate: 4.9
  -> 1.2 ms). The same bits as np.where in every case."""
  value = constant[(0,) * constant.ndim]
  n = which.size
  hits = np.count_nonzero(which)
  if not constant_where:
    hits = n - hits
  if hits <= _SPARSE_FRACTION * n:   # the constant in few places
    out = np.array(case, order="C")
    if hits:
      np.copyto(out, value, where=which if constant_where else ~which)
    return out
  if n - hits <= _SPARSE_FRACTION * n:   # the case in few places
    out = np.full(case.shape, value, case.dtype)
    if hits != n:
      np.copyto(out, case, where=~which if constant_where else which)
    return out
  w, c = which.reshape(-1), case.reshape(-1)
  start = time.perf_counter()
  np.where(w[:_BLEND_PROBE], value, c[:_BLEND_PROBE])
  if time.perf_counter() - start < _BLEND_PROBE * _BLEND_NS_PER_ELEMENT * 1e-9:
    return np.where(which, constant, case) if constant_where else np.where(which, case, constant)
  if constant_where:
    return _blend(which, case, constant)
  return _blend(which, constant, case)


def _blend(which, on_false, on_true):
  int_t = _INT_OF_ITEMSIZE[on_false.dtype.itemsize]
  mask = np.negative(which.view(np.int8), dtype=int_t)   # True -> all ones
  f = on_false.view(int_t)
  out = np.bitwise_xor(f, on_true.view(int_t))
  out &= mask
  out ^= f
  return out.view(on_false.dtype)


@select_n_p.def_eval_kernel
def _select_n_eval_kernel(which, *cases):
  # ``jnp.where``'s case, one NumPy call or a bit blend (the impl handles
  # the others).
  if len(cases) != 2 or which.dtype != np.bool_:
    return None
  if not which.shape:
    return _select2_scalar
  if (math.prod(which.shape) >= _BLEND_MIN_SIZE
      and cases[0].dtype.itemsize in _INT_OF_ITEMSIZE):
    return _select2_large
  return _select2


select_n_p.def_sharding_rule(elementwise_rule("select_n"))


@select_n_p.def_abstract_eval
def _select_n_abstract_eval(which, *cases):
  if not cases:
    raise TypeError("select must have at least one case")
  if builtins.any(c.shape != cases[0].shape for c in cases[1:]):
    raise TypeError("select cases must have the same shapes, got "
                    f"[{', '.join(str(c.shape) for c in cases)}].")
  if which.shape and which.shape != cases[0].shape:
    raise TypeError("select `which` must be scalar or have the same shape as cases, got "
                    f"`which` shape {which.shape} but case shape {cases[0].shape}.")
  check_same_dtypes("select", cases)
  if not (which.dtype == np.bool_ or dtypes.issubdtype(which.dtype, np.integer)):
    raise TypeError(f"select `which` must be boolean or integer type, got {which.dtype.name}.")
  if which.dtype == np.bool_ and len(cases) > 2:
    raise TypeError("select with boolean `which` cannot have > 2 cases.")
  return [ShapedArray(cases[0].shape, cases[0].dtype, weak(*cases))]


@select_n_p.def_jvp
def _select_n_jvp(primals, tangents):
  which, *cases = primals
  case_tangents = tangents[1:]              # the predicate is not differentiable
  out = select_n_p.bind1(which, *cases)
  nonzero = [t for t in case_tangents if type(t) is not Zero]
  if not nonzero:
    return [out], [Zero.from_primal_value(out)]
  z = zeros_like(nonzero[0])
  return [out], [select_n_p.bind1(which, *(z if type(t) is Zero else t
                                           for t in case_tangents))]


@select_n_p.def_transpose
def _select_n_transpose(cts, which, *cases):
  ct, = cts
  if is_undefined_primal(which):
    raise NotImplementedError("select_n: the predicate cannot be a linear input")
  if type(ct) is Zero:
    return [None] + [Zero(c.aval) if is_undefined_primal(c) else None for c in cases]
  zeros = zeros_like(ct)
  if get_aval(which).dtype == np.bool_:
    pick = lambda i: select(which, zeros, ct) if i == 0 else select(which, ct, zeros)  # noqa: E731
  else:
    pick = lambda i: select(eq(which, scalar_like(which, i)), ct, zeros)  # noqa: E731
  if len(cases) == 1:
    pick = lambda i: ct  # noqa: E731
  return [None] + [pick(i) if is_undefined_primal(c) else None for i, c in enumerate(cases)]


@select_n_p.def_batch
def _select_n_batch(vals, dims):
  which, *cases = vals
  which_d, *case_ds = dims
  size = axis_size(vals, dims)
  if builtins.all(which_d == d for d in case_ds):
    if _shape(which) == _shape(cases[0]):
      return [select_n_p.bind1(which, *cases)], [which_d]
    # A scalar predicate batched beside batched cases: spread it along them.
    which = broadcast_in_dim(which, _shape(cases[0]), (which_d,))
    return [select_n_p.bind1(which, *cases)], [which_d]
  if not _shape(which) and builtins.all(d is not None for d in case_ds):
    # An unbatched scalar predicate: the cases keep (or share) their batch dim.
    d0 = case_ds[0]
    cases = [moveaxis(c, d, d0) for c, d in zip(cases, case_ds)]
    return [select_n_p.bind1(which, *cases)], [d0]
  if _shape(which):
    which = bdim_at_front(which, which_d, size)
  if not builtins.all(_shape(c) == () for c in cases):
    cases = [bdim_at_front(c, d, size) for c, d in zip(cases, case_ds)]
  case_shape = _shape(cases[0])
  if 0 < len(_shape(which)) < len(case_shape):
    which = broadcast_in_dim(which, case_shape, (0,))   # a batched scalar predicate
  if len(_shape(which)) > len(case_shape):
    cases = [broadcast_in_dim(c, _shape(which), ()) for c in cases]
  return [select_n_p.bind1(which, *cases)], [0]


select_n_p.def_lower(select_n_rule)


# ---------------------------------------------------------------------- clamp
clamp_p = Primitive("clamp")


def clamp(min, x, max):  # noqa: A002 - JAX's parameter names
  """Elementwise ``minimum(maximum(x, min), max)``."""
  return clamp_p.bind1(min, x, max)


@clamp_p.def_impl
def _clamp_impl(lo, x, hi):
  with np.errstate(all="ignore"):
    return [np.minimum(np.maximum(x, lo), hi).astype(x.dtype, copy=False)]


@clamp_p.def_eval_kernel
def _clamp_eval_kernel(lo, x, hi):
  # The impl's two NumPy calls without its errstate block and cast (~3 us
  # of jnp.median's ~40 on a scalar, twice): the eval trace silences NumPy
  # and checks the result's dtype once.
  if (not lo.shape and not hi.shape and x.dtype in _CLIP_FLOATS
      and math.prod(x.shape) >= _CLIP_MIN_SIZE):
    return _clamp_scalar_bounds
  return _clamp_values


def _clamp_values(lo, x, hi):
  return np.minimum(np.maximum(x, lo), hi)


# np.maximum/np.minimum against a 0-d operand run a slow loop (1e6 float32
# ~1.2 ms each, ~0.4 against a whole array); np.clip's loop computes the
# same min(max(x, lo), hi) in one pass (1e6 float32 2.5 -> 0.4 ms), a NaN x
# staying itself; but its ties give x where np.maximum's give the bound:
# zero bounds (+-0 ties) and NaN bounds (np.clip fills its own NaN) keep
# the two calls.
_CLIP_FLOATS = frozenset((np.dtype(np.float32), np.dtype(np.float64)))
_CLIP_MIN_SIZE = 1 << 14


def _clamp_scalar_bounds(lo, x, hi):
  if lo != lo or hi != hi or lo == 0 or hi == 0:
    return np.minimum(np.maximum(x, lo), hi)
  return np.clip(x, lo, hi)


clamp_p.def_sharding_rule(elementwise_rule("clamp"))


@clamp_p.def_abstract_eval
def _clamp_abstract_eval(lo, x, hi):
  for name, a in (("min", lo), ("max", hi)):
    if a.shape and a.shape != x.shape:
      raise TypeError(f"clamp requires {name}.shape == operand.shape or {name}.shape == (), "
                      f"got {name}.shape={a.shape}, operand.shape={x.shape}.")
  check_nary("clamp", (lo, x, hi), (ANY, ANY, ANY))
  return [ShapedArray(x.shape, x.dtype, weak(lo, x, hi))]


def _clamp_jvp_bound(pred):
  def fn(g, lo, x, hi):
    return select(pred(lo, x, hi), maybe_broadcast(_shape(x), g), zeros_like(x))
  return fn


# min's tangent flows where min is above x (and below max); x's strictly
# inside; max's where max is below x -- JAX's convention at the ties.
defjvp(clamp_p,
       _clamp_jvp_bound(lambda lo, x, hi: bitwise_and(gt(lo, x), lt(lo, hi))),
       _clamp_jvp_bound(lambda lo, x, hi: bitwise_and(gt(x, lo), lt(x, hi))),
       _clamp_jvp_bound(lambda lo, x, hi: lt(hi, x)))


@clamp_p.def_batch
def _clamp_batch(vals, dims):
  lo, x, hi = vals
  lo_d, x_d, hi_d = dims
  size = axis_size(vals, dims)
  nd = [len(_shape(v)) for v in vals]
  if lo_d == x_d == hi_d:
    if _shape(lo) == _shape(x) == _shape(hi):
      return [clamp_p.bind1(lo, x, hi)], [x_d]
    if nd[0] == nd[2] == 1:       # batched scalar bounds beside a batched operand
      lo = broadcast_in_dim(lo, _shape(x), (lo_d,))
      hi = broadcast_in_dim(hi, _shape(x), (hi_d,))
      return [clamp_p.bind1(lo, x, hi)], [x_d]
  elif nd[0] == nd[2] == 0 and x_d is not None:   # unbatched scalar bounds
    return [clamp_p.bind1(lo, x, hi)], [x_d]
  lo = bdim_at_front(lo, lo_d, size) if _shape(lo) else lo
  hi = bdim_at_front(hi, hi_d, size) if _shape(hi) else hi
  x = bdim_at_front(x, x_d, size) if _shape(x) else x
  xs = _shape(x)
  if not _shape(lo) and xs:
    lo = broadcast(lo, xs)
  if not _shape(hi) and xs:
    hi = broadcast(hi, xs)
  if 0 < len(_shape(lo)) < len(xs):       # a batched scalar bound
    lo = broadcast_in_dim(lo, xs, (0,))
  if 0 < len(_shape(hi)) < len(xs):
    hi = broadcast_in_dim(hi, xs, (0,))
  if len(_shape(lo)) > len(xs):           # a scalar operand beside batched bounds
    x = broadcast(x, _shape(lo))
  return [clamp_p.bind1(lo, x, hi)], [0]


clamp_p.def_lower(clamp_rule)


# ------------------------------------------------------- bitcast_convert_type
bitcast_convert_type_p = Primitive("bitcast_convert_type", kind="nondifferentiable")


def bitcast_convert_type(operand, new_dtype):
  """Reinterpret the bits of ``operand`` as ``new_dtype``."""
  return bitcast_convert_type_p.bind1(operand, new_dtype=dtypes.explicit_dtype(new_dtype))


@bitcast_convert_type_p.def_impl
def _bitcast_impl(x, *, new_dtype):
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  flat = np.ascontiguousarray(x).reshape(-1).view(new_dtype)
  if old == new:
    return [flat.reshape(x.shape)]
  if old > new:
    return [flat.reshape(x.shape + (old // new,))]
  return [flat.reshape(x.shape[:-1])]


@bitcast_convert_type_p.def_eval_kernel
def _bitcast_eval_kernel(x, *, new_dtype):
  # Same item size: a view (values are immutable, so sharing the buffer is
  # safe), where the impl's copy and reshapes took ~2-3 us at 10 elements.
  new = np.dtype(new_dtype)
  if new.itemsize != x.dtype.itemsize:
    return None

  def view(v):
    return v.view(new)
  return view


bitcast_convert_type_p.def_sharding_rule(elementwise_rule("bitcast_convert_type"))


@bitcast_convert_type_p.def_abstract_eval
def _bitcast_abstract_eval(x, *, new_dtype):
  old, new = x.dtype.itemsize, np.dtype(new_dtype).itemsize
  if old == new:
    shape = x.shape
  elif old > new:
    shape = x.shape + (old // new,)
  else:
    if not x.shape or x.shape[-1] != new // old:
      raise TypeError(f"bitcast_convert_type: {x.str_short()} cannot be bitcast to "
                      f"{np.dtype(new_dtype).name}: the last dimension must be {new // old}.")
    shape = x.shape[:-1]
  return [ShapedArray(shape, new_dtype, False)]


@bitcast_convert_type_p.def_batch
def _bitcast_batch(vals, dims, *, new_dtype):
  x, = vals
  d, = dims
  aval = get_aval(x)
  if aval.dtype.itemsize < np.dtype(new_dtype).itemsize and d == aval.ndim - 1:
    x, d = moveaxis(x, d, 0), 0          # the last axis is consumed by the cast
  return [bitcast_convert_type_p.bind1(x, new_dtype=new_dtype)], [d]


bitcast_convert_type_p.def_lower(bitcast_convert_rule)
