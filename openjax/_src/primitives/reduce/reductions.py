"""Reduction primitives: monoid reductions over axes (``reduce_prod``,
``reduce_max``, ...; ``reduce_sum``, the transpose of ``broadcast_in_dim``,
is in ``base.structural``), ``argmax``/``argmin`` and the cumulative
reductions (``cumsum``, ``cumprod``, ``cummax``, ``cummin``, ``cumlogsumexp``).

Parameters and messages follow ``jax.lax``; ``jax.numpy`` builds its
NumPy-style reductions (dtype promotion, ``where``, ``keepdims``) on these.
"""
from __future__ import annotations

import ctypes
import functools
import math
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding_rules import reduce_axes_rule, unsharded_axis_rule
from openjax._src.primitives.base.ad_util import defjvp_zero
from openjax._src.primitives.base.convert import convert_element_type, lower_convert
from openjax._src.primitives.base.reduce_lowering import (acc_dtype, binary, compare, cumulative,
                                                          is_nan, order, reduce, select)
from openjax._src.primitives.base.structural import (add_tangents, broadcast_in_dim, defjvp2,
                                                     deflinear, reduce_sum, reshape, squeeze)
from openjax._src.primitives.base.util import (axes_tuple, check_number, in_float32, quiet,
                                               reduced_shape)
from openjax._src.primitives.elementwise import arithmetic, logic
from openjax._src.primitives.elementwise.arithmetic import add, div, mul, sub
from openjax._src.primitives.elementwise.logic import ne
from openjax._src.primitives.elementwise.transcendental import exp, log1p
from openjax._src.primitives.shape.shape import concatenate, full, full_like, pad, rev, slice_in_dim

__all__ = [
    "reduce_prod", "reduce_prod_p", "reduce_max", "reduce_max_p",
    "reduce_min", "reduce_min_p", "reduce_and", "reduce_and_p", "reduce_or", "reduce_or_p",
    "reduce_xor", "reduce_xor_p", "argmax", "argmax_p", "argmin", "argmin_p",
    "cumsum", "cumsum_p", "cumprod", "cumprod_p", "cummax", "cummax_p", "cummin", "cummin_p",
    "cumlogsumexp", "cumlogsumexp_p",
]


# ------------------------------------------------------------------ helpers
def _max_identity(dt: np.dtype):
  k = dtypes.kind(dt)
  if k in "fc":
    # Floats without infinities (some float8 types) use their lowest value.
    return -np.inf if _has_inf(dt) else float(dtypes.finfo(dt).min)
  if k in "iu":
    return dtypes.iinfo(dt).min
  return False


def _min_identity(dt: np.dtype):
  k = dtypes.kind(dt)
  if k in "fc":
    return np.inf if _has_inf(dt) else float(dtypes.finfo(dt).max)
  if k in "iu":
    return dtypes.iinfo(dt).max
  return True


def _has_inf(dt: np.dtype) -> bool:
  with np.errstate(all="ignore"):
    return bool(np.isinf(np.array(np.inf, np.float32).astype(dt)))


def _reducer_batch(prim: Primitive):
  """Batching rule of a reduction over ``axes``: the reduced axes shift past
  the batch dimension, which survives the reduction."""
  def rule(vals, dims, *, axes, **params):
    (x,), (d,) = vals, dims
    new_axes = tuple(a + (a >= d) for a in axes)
    out_dim = d - sum(a < d for a in axes)
    return prim.bind(x, axes=new_axes, **params), [out_dim]
  return rule


# JVPs of the tree-shaped reductions and prefix scans JAX differentiates
# (jax.lax's ``_reduce_jvp`` and ``associative_scan``): each combine maps two
# (primal, tangent) pairs to one, so the tangents get exactly JAX's values
# (ties included) from primitives that are themselves differentiable.
def _mul_pair(a, b):
  (ax, at), (bx, bt) = a, b
  return mul(ax, bx), add_tangents(mul(at, bx), mul(ax, bt))


def _balanced_eq(x, z, y):
  # 1 where x == z (halved when y == z too): JAX's max/min tangent weights.
  one, zero, two = (full_like(z, v) for v in (1, 0, 2))
  return div(logic.select(logic.eq(x, z), one, zero), logic.select(logic.eq(y, z), two, one))


def _chooser_pair(choose):
  def combine(a, b):
    (ax, at), (bx, bt) = a, b
    c = choose(ax, bx)
    return c, add_tangents(mul(at, _balanced_eq(ax, c, bx)),
                           mul(bt, _balanced_eq(bx, c, ax)))
  return combine


def _replace_inf(x):
  return logic.select(logic.eq(x, full_like(x, np.inf)), full_like(x, 0), x)


def _logaddexp(x, y):
  # jax.lax's logaddexp for real floats, bit for bit: max + log1p(exp(-|x - y|))
  # (NaN or same-signed infinities add). The larger and smaller operands are
  # picked with selects rather than max/abs, so that differentiating this
  # again (grad of grad) gives logaddexp's exact derivatives at ties, which
  # JAX gets from its custom_jvp.
  ge = logic.ge(x, y)
  hi, lo = logic.select(ge, x, y), logic.select(ge, y, x)
  delta = sub(x, y)
  big = add(hi, log1p(exp(sub(lo, hi))))
  return logic.select(ne(delta, delta), add(x, y), big)


def _logaddexp_pair(a, b):
  (ax, at), (bx, bt) = a, b
  c = _logaddexp(ax, bx)
  rc = _replace_inf(c)
  return c, add_tangents(mul(at, exp(sub(_replace_inf(ax), rc))),
                         mul(bt, exp(sub(_replace_inf(bx), rc))))


def _tree_reduce_jvp(combine, init, x, t, axes):
  """Tangent of reducing ``x`` over ``axes`` by halving the flattened reduced
  axis (odd halves padded with ``init``), as JAX's reduction JVP does."""
  shape = get_aval(x).shape
  non_axes = tuple(i for i in range(len(shape)) if i not in axes)
  rest = tuple(shape[i] for i in non_axes)
  n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
  if n == 0:
    return full(rest, np.zeros((), get_aval(t).dtype))
  perm = tuple(axes) + non_axes
  x = reshape(x, (n,) + rest, perm)
  t = reshape(t, (n,) + rest, perm)
  while n > 1:
    n1 = (n + 1) // 2
    x1, t1 = (slice_in_dim(v, 0, n1) for v in (x, t))
    x2, t2 = (slice_in_dim(v, n1, None) for v in (x, t))
    if n - n1 != n1:
      config = [(0, 0, 0)] * (len(rest) + 1)
      config[0] = (0, 1, 0)
      x2 = pad(x2, np.array(init, get_aval(x2).dtype), config)
      t2 = pad(t2, np.zeros((), get_aval(t2).dtype), config)
    x, t = combine((x1, t1), (x2, t2))
    n = n1
  return squeeze(t, (0,))


def _interleave(a, b, axis: int):
  na, nb = get_aval(a).shape[axis], get_aval(b).shape[axis]
  a_cfg, b_cfg = [(0, 0, 0)] * get_aval(a).ndim, [(0, 0, 0)] * get_aval(b).ndim
  a_cfg[axis] = (0, 1 if na == nb else 0, 1)
  b_cfg[axis] = (1, 0 if na == nb else 1, 1)
  zero = np.zeros((), get_aval(a).dtype)
  return add(pad(a, zero, a_cfg), pad(b, zero, b_cfg))


def _scan_jvp(combine, x, t, axis: int, reverse: bool):
  """Tangent of the inclusive scan of ``x`` by ``combine`` along ``axis``:
  the parallel prefix scan (``lax.associative_scan``) over (primal, tangent)
  pairs, as JAX differentiates cumulative reductions."""
  sl = slice_in_dim

  def scan(elems):
    n = get_aval(elems[0]).shape[axis]
    if n < 2:
      return elems
    reduced = combine(tuple(sl(e, 0, -1, 2, axis) for e in elems),
                      tuple(sl(e, 1, None, 2, axis) for e in elems))
    odd = scan(reduced)
    if n % 2 == 0:
      even = combine(tuple(sl(e, 0, -1, 1, axis) for e in odd),
                     tuple(sl(e, 2, None, 2, axis) for e in elems))
    else:
      even = combine(odd, tuple(sl(e, 2, None, 2, axis) for e in elems))
    even = [concatenate([sl(e, 0, 1, 1, axis), r], axis) for e, r in zip(elems, even)]
    return [_interleave(e, o, axis) for e, o in zip(even, odd)]

  if reverse:
    x, t = rev(x, (axis,)), rev(t, (axis,))
  _, t_out = scan((x, t))
  return rev(t_out, (axis,)) if reverse else t_out


# ----------------------------------------------------------- reduce_prod
reduce_prod_p = Primitive("reduce_prod")


def reduce_prod(operand, axes):
  """Product of ``operand`` over ``axes`` (no upcast of narrow dtypes)."""
  return reduce_prod_p.bind1(operand, axes=axes_tuple("reduce_prod", axes))


@reduce_prod_p.def_impl
@quiet
def _reduce_prod_impl(x, *, axes):
  if not axes:   # JAX gives the operand back (a complex x * 1 can turn inf into NaN)
    return [x]
  xc, dt = in_float32(x)
  return [np.asarray(np.prod(xc, axis=axes, dtype=xc.dtype)).astype(dt)]


@reduce_prod_p.def_eval_kernel
def _reduce_prod_eval_kernel(x, *, axes):
  # The impl's NumPy reduction for NumPy's dtypes (ml_dtypes floats compute
  # in float32: the impl).
  if not axes:   # nothing reduced: the operand itself (NumPy's reduce copies it)
    return _same_value
  if x.dtype in dtypes.custom_float_dtypes:
    return None
  return functools.partial(np.multiply.reduce, axis=axes, dtype=x.dtype)


reduce_prod_p.def_sharding_rule(reduce_axes_rule)


@reduce_prod_p.def_abstract_eval
def _reduce_prod_abstract_eval(x, *, axes):
  check_number("reduce_prod", x)
  return [ShapedArray(reduced_shape(x, axes), x.dtype, x.weak_type)]


@reduce_prod_p.def_jvp
def _reduce_prod_jvp(primals, tangents, *, axes):
  # JAX's tree of pairwise products: exact where the operand holds zeros.
  (x,), (t,) = primals, tangents
  return [reduce_prod_p.bind1(x, axes=axes)], [_tree_reduce_jvp(_mul_pair, 1, x, t, axes)]


reduce_prod_p.def_batch(_reducer_batch(reduce_prod_p))


@reduce_prod_p.def_lower
def _reduce_prod_lower(ctx, x, *, axes):
  return [reduce(ctx, x, axes, "mul", 1, ctx.avals_in[0].dtype, ctx.avals_out[0])]


# ------------------------------------------------------ reduce_max / min
def _chooser_abstract_eval(x, *, axes):
  return [ShapedArray(reduced_shape(x, axes), x.dtype, x.weak_type)]


def _chooser_jvp(g, ans, x, *, axes):
  # JAX's "location indicators": the tangent is averaged over tied extrema.
  shape = get_aval(x).shape
  kept = tuple(i for i in range(len(shape)) if i not in axes)
  loc = convert_element_type(logic.eq(x, broadcast_in_dim(ans, shape, kept)),
                             get_aval(g).dtype)
  return div(reduce_sum(mul(g, loc), axes), reduce_sum(loc, axes))


reduce_max_p = Primitive("reduce_max")


def reduce_max(operand, axes):
  """Maximum of ``operand`` over ``axes`` (NaN propagates). As in JAX, no
  ``out_sharding`` (``reduce_sum``'s alone has one)."""
  return reduce_max_p.bind1(operand, axes=axes_tuple("reduce_max", axes))


@reduce_max_p.def_impl
@quiet
def _reduce_max_impl(x, *, axes):
  # An empty reduction gives the identity (-inf, iinfo.min, False), as XLA does.
  xc, dt = in_float32(x)
  return [np.asarray(np.max(xc, axis=axes, initial=_max_identity(dt))).astype(dt)]


@reduce_max_p.def_eval_kernel
def _reduce_max_eval_kernel(x, *, axes):
  if not axes:   # nothing reduced: the operand itself (NumPy's reduce copies it)
    return _same_value
  if x.dtype in dtypes.custom_float_dtypes:
    return None
  return functools.partial(np.maximum.reduce, axis=axes, initial=_max_identity(x.dtype))


reduce_max_p.def_abstract_eval(_chooser_abstract_eval)
reduce_max_p.def_sharding_rule(reduce_axes_rule)
defjvp2(reduce_max_p, _chooser_jvp)
reduce_max_p.def_batch(_reducer_batch(reduce_max_p))


@reduce_max_p.def_lower
def _reduce_max_lower(ctx, x, *, axes):
  dt = ctx.avals_in[0].dtype
  return [reduce(ctx, x, axes, "max", _max_identity(dt), dt, ctx.avals_out[0])]


reduce_min_p = Primitive("reduce_min")


def reduce_min(operand, axes):
  """Minimum of ``operand`` over ``axes`` (NaN propagates); no ``out_sharding``."""
  return reduce_min_p.bind1(operand, axes=axes_tuple("reduce_min", axes))


@reduce_min_p.def_impl
@quiet
def _reduce_min_impl(x, *, axes):
  xc, dt = in_float32(x)
  return [np.asarray(np.min(xc, axis=axes, initial=_min_identity(dt))).astype(dt)]


@reduce_min_p.def_eval_kernel
def _reduce_min_eval_kernel(x, *, axes):
  if not axes:   # nothing reduced: the operand itself (NumPy's reduce copies it)
    return _same_value
  if x.dtype in dtypes.custom_float_dtypes:
    return None
  return functools.partial(np.minimum.reduce, axis=axes, initial=_min_identity(x.dtype))


reduce_min_p.def_abstract_eval(_chooser_abstract_eval)
reduce_min_p.def_sharding_rule(reduce_axes_rule)
defjvp2(reduce_min_p, _chooser_jvp)
reduce_min_p.def_batch(_reducer_batch(reduce_min_p))


@reduce_min_p.def_lower
def _reduce_min_lower(ctx, x, *, axes):
  dt = ctx.avals_in[0].dtype
  return [reduce(ctx, x, axes, "min", _min_identity(dt), dt, ctx.avals_out[0])]


# -------------------------------------------------- reduce_and / or / xor
def _logical_impl(ufunc):
  def impl(x, *, axes):
    if not axes:
      return [x]
    return [np.asarray(ufunc.reduce(x, axis=axes)).astype(x.dtype)]
  return impl


def _logical_abstract_eval(x, *, axes):
  if x.dtype != np.bool_ and not dtypes.issubdtype(x.dtype, np.integer):
    raise TypeError("logical reduction requires operand dtype bool or int, got "
                    f"{x.dtype.name}.")
  # These reductions are never weakly typed in JAX.
  return [ShapedArray(reduced_shape(x, axes), x.dtype, False)]


def _logical_lower(kind: str):
  def rule(ctx, x, *, axes):
    dt = ctx.avals_in[0].dtype
    init = (True if dt == np.bool_ else np.array(-1).astype(dt)) if kind == "and" else 0
    return [reduce(ctx, x, axes, kind, init, dt, ctx.avals_out[0])]
  return rule


def _logical_eval_kernel(ufunc):
  # The impl's reduction as a lean kernel (the bitwise ufuncs keep the
  # operand's dtype): ~0.3 us where the impl's call and cast take ~2 us, on
  # every trip of a loop whose predicate is ``any(b != 0)`` (jnp.gcd).
  def kernel(x, *, axes):
    if not axes:
      return _same_value
    return functools.partial(ufunc.reduce, axis=axes)
  return kernel


reduce_and_p = Primitive("reduce_and", kind="nondifferentiable")


def reduce_and(operand, axes):
  """Bitwise (logical for bool) AND of ``operand`` over ``axes``."""
  return reduce_and_p.bind1(operand, axes=axes_tuple("reduce_and", axes))


reduce_and_p.def_impl(_logical_impl(np.bitwise_and))
reduce_and_p.def_eval_kernel(_logical_eval_kernel(np.bitwise_and))
reduce_and_p.def_abstract_eval(_logical_abstract_eval)
reduce_and_p.def_sharding_rule(reduce_axes_rule)
reduce_and_p.def_batch(_reducer_batch(reduce_and_p))
reduce_and_p.def_lower(_logical_lower("and"))

reduce_or_p = Primitive("reduce_or", kind="nondifferentiable")


def reduce_or(operand, axes):
  """Bitwise (logical for bool) OR of ``operand`` over ``axes``."""
  return reduce_or_p.bind1(operand, axes=axes_tuple("reduce_or", axes))


reduce_or_p.def_impl(_logical_impl(np.bitwise_or))
reduce_or_p.def_eval_kernel(_logical_eval_kernel(np.bitwise_or))
reduce_or_p.def_abstract_eval(_logical_abstract_eval)
reduce_or_p.def_sharding_rule(reduce_axes_rule)
reduce_or_p.def_batch(_reducer_batch(reduce_or_p))
reduce_or_p.def_lower(_logical_lower("or"))

reduce_xor_p = Primitive("reduce_xor", kind="nondifferentiable")


def reduce_xor(operand, axes):
  """Bitwise (logical for bool) XOR of ``operand`` over ``axes``."""
  return reduce_xor_p.bind1(operand, axes=axes_tuple("reduce_xor", axes))


reduce_xor_p.def_impl(_logical_impl(np.bitwise_xor))
reduce_xor_p.def_eval_kernel(_logical_eval_kernel(np.bitwise_xor))
reduce_xor_p.def_abstract_eval(_logical_abstract_eval)
reduce_xor_p.def_sharding_rule(reduce_axes_rule)
reduce_xor_p.def_batch(_reducer_batch(reduce_xor_p))
reduce_xor_p.def_lower(_logical_lower("xor"))


def _same_value(x):
  return x




# --------------------------------------------------------- argmax / argmin
def _argminmax_impl(np_fn):
  # NumPy's argmax/argmin pick the first occurrence and treat NaN as the
  # extreme value (the first NaN wins), exactly XLA's comparator in JAX.
  def impl(x, *, axes, index_dtype):
    (axis,) = axes
    xc, _ = in_float32(x)
    return [np.asarray(np_fn(xc, axis=axis)).astype(index_dtype)]
  return impl


# NumPy's argmax/argmin copy a read-only operand before scanning it (they ask
# for a "behaved" array, which includes writeable), and Arrays hold read-only
# values: at 1e6 elements that copy is 2/3 of the call. From this size on,
# the kernel scans a writeable alias of the same memory (never written).
_ALIAS_MIN_ELEMENTS = 1 << 14
# Bool arg-reductions along another axis than the last, of at most this
# many slices, pack the slices' bits (_bool_first_index).
_SLICES_MAX = 8


def _writeable_alias(x: np.ndarray) -> np.ndarray:
  """``x`` itself, or for a read-only C-contiguous ``x`` a writeable ndarray
  over its memory, for reading only (the caller holds ``x`` meanwhile)."""
  if x.flags.writeable or not x.flags.c_contiguous:
    return x
  memory = (ctypes.c_char * x.nbytes).from_address(x.ctypes.data)
  return np.frombuffer(memory, x.dtype).reshape(x.shape)


# The lowest set bit of each byte (0 for 0): the first True among up to 8
# bool slices packed one per bit.
_FIRST_SET_BIT = np.array([0] + [(b & -b).bit_length() - 1 for b in range(1, 256)], np.uint8)


def _bool_first_index(x: np.ndarray, axis: int, target: bool, index_dtype) -> np.ndarray:
  """The first index along ``axis`` (at most 8 long) holding ``target``,
  0 where none does: bool argmax (``target`` True) / argmin. The slices are
  packed one per bit of a byte and the byte's lowest set bit looked up,
  where NumPy's argmax along an axis other than the last runs its loop once
  per output element (jnp.select's (3, 1e6) conditions: ~35 -> ~6 ms)."""
  lead = (slice(None),) * axis
  bits = x[lead + (0,)].view(np.uint8).copy()
  for i in range(1, x.shape[axis]):
    bits |= x[lead + (i,)].view(np.uint8) << np.uint8(i)
  if not target:   # the first False: the first set bit of the complement
    bits ^= np.uint8((1 << x.shape[axis]) - 1)
  return _FIRST_SET_BIT.take(bits).astype(index_dtype)


def _argminmax_eval_kernel(np_fn):
  # The impl's NumPy call without its conversions (ml_dtypes floats: the
  # impl); large operands reduced along their last axis scan an alias.
  target = np_fn is np.ndarray.argmax

  def rule(x, *, axes, index_dtype):
    if x.dtype in dtypes.custom_float_dtypes:
      return None
    (axis,) = axes
    if (x.dtype == np.bool_ and axis != len(x.shape) - 1 and x.shape[axis] <= _SLICES_MAX
        and math.prod(x.shape) >= _ALIAS_MIN_ELEMENTS):
      def kernel(v):
        return _bool_first_index(v, axis, target, index_dtype)
    elif axis == len(x.shape) - 1 and math.prod(x.shape) >= _ALIAS_MIN_ELEMENTS:
      def kernel(v):
        return np_fn(_writeable_alias(v), axis=axis).astype(index_dtype)
    else:
      def kernel(v):
        return np_fn(v, axis=axis).astype(index_dtype)
    return kernel
  return rule


def _argminmax_abstract_eval(x, *, axes, index_dtype):
  (axis,) = axes
  if not 0 <= axis < x.ndim:
    raise ValueError(f"Invalid axis {axis} for operand shape {x.shape}")
  if x.shape[axis] < 1:
    raise ValueError("argmin and argmax require non-empty reduced dimension. "
                     f"operand.shape={x.shape} axis={axis}")
  if not dtypes.issubdtype(index_dtype, np.integer):
    raise TypeError(f"index_dtype must be an integer type, but got {np.dtype(index_dtype).name}")
  shape = tuple(d for i, d in enumerate(x.shape) if i != axis)
  return [ShapedArray(shape, index_dtype, False)]


def _argminmax_two_pass(ctx, x, axis: int, dt, largest: bool, out):
  # The extreme (NaN-propagating max/min), then the first index holding it
  # (a NaN when the extreme is NaN): two plain reductions, which IREE
  # vectorizes, where a variadic (value, index) reduce runs ~6x slower.
  shape = ctx.avals_in[0].shape
  kept = tuple(d for d in range(len(shape)) if d != axis)
  kind = "max" if largest else "min"
  init = (_max_identity if largest else _min_identity)(ctx.avals_in[0].dtype)
  m = reduce(ctx, x, (axis,), kind, init, dt, ShapedArray(out.shape, dt))
  mb = ctx.broadcast_in_dim(m, shape, kept)
  hit = compare(ctx, x, mb, "EQ", dt)
  if dtypes.kind(dt) == "f":
    hit = binary(ctx, "or", hit, binary(ctx, "and", is_nan(ctx, mb, dt),
                                        is_nan(ctx, x, dt)))
  n = shape[axis]
  wide = np.dtype(np.int32 if n < 2 ** 31 else np.int64)
  iota = ctx.op("stablehlo.iota", [], ctx.tensor_type(shape, wide),
                attrs={"iota_dimension": int(axis)})
  cand = select(ctx, hit, iota, ctx.full(n, shape, wide))
  idx = reduce(ctx, cand, (axis,), "min", n, wide, ShapedArray(out.shape, wide))
  return ctx.convert(idx, out.dtype, out.shape)


def _argminmax_lower(largest: bool):
  # Real numbers: the first index of the extreme (NaN beats every number):
  # NumPy's first occurrence. Complex numbers: a variadic reduce over
  # (value, index) whose combiner is commutative: the larger (smaller) value
  # wins, a NaN part beats every number, ties go to the lower index.
  def rule(ctx, x, *, axes, index_dtype):
    (axis,) = axes
    aval, out = ctx.avals_in[0], ctx.avals_out[0]
    dt = acc_dtype(aval.dtype)
    x = lower_convert(ctx, x, aval.dtype, dt)
    if dtypes.kind(dt) != "c":
      return [_argminmax_two_pass(ctx, x, axis, dt, largest, out)]
    idt = np.dtype(index_dtype)
    iota = ctx.op("stablehlo.iota", [], ctx.tensor_type(aval.shape, idt),
                  attrs={"iota_dimension": int(axis)})
    vt, it = ctx.tensor_type((), dt), ctx.tensor_type((), idt)
    with ctx.region([vt, it, vt, it]) as body:
      a, ia, b, ib = body.args
      better, eq = order(ctx, a, b, dt, largest)
      first = binary(ctx, "and", eq, compare(ctx, ia, ib, "LT", idt))
      pick_a = binary(ctx, "or", better, first)
      ctx.ret([select(ctx, pick_a, a, b), select(ctx, pick_a, ia, ib)])
    # the lexicographic extreme, (-inf, -inf)
    init = np.array(complex(-np.inf, -np.inf) if largest else complex(np.inf, np.inf), dt)
    _, idx = ctx.op("stablehlo.reduce",
                    [x, iota, ctx.constant(init), ctx.constant(np.zeros((), idt))],
                    [ctx.tensor_type(out.shape, dt), ctx.aval_type(out)],
                    attrs={"dimensions": (int(axis),)}, regions=[body])
    return [idx]
  return rule


argmax_p = Primitive("argmax", kind="nondifferentiable")


def argmax(operand, axis: int, index_dtype):
  """Index of the maximum of ``operand`` along ``axis`` (first occurrence;
  NaN counts as the maximum)."""
  index_dtype = dtypes.explicit_dtype(index_dtype, "argmax")
  return argmax_p.bind1(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


argmax_p.def_impl(_argminmax_impl(np.argmax))
argmax_p.def_eval_kernel(_argminmax_eval_kernel(np.ndarray.argmax))
argmax_p.def_abstract_eval(_argminmax_abstract_eval)
argmax_p.def_sharding_rule(reduce_axes_rule)
defjvp_zero(argmax_p)               # integer indices: float0 tangents, as in JAX
argmax_p.def_batch(_reducer_batch(argmax_p))
argmax_p.def_lower(_argminmax_lower(True))

argmin_p = Primitive("argmin", kind="nondifferentiable")


def argmin(operand, axis: int, index_dtype):
  """Index of the minimum of ``operand`` along ``axis`` (first occurrence;
  NaN counts as the minimum)."""
  index_dtype = dtypes.explicit_dtype(index_dtype, "argmin")
  return argmin_p.bind1(operand, axes=(operator.index(axis),), index_dtype=index_dtype)


argmin_p.def_impl(_argminmax_impl(np.argmin))
argmin_p.def_eval_kernel(_argminmax_eval_kernel(np.ndarray.argmin))
argmin_p.def_abstract_eval(_argminmax_abstract_eval)
argmin_p.def_sharding_rule(reduce_axes_rule)
defjvp_zero(argmin_p)
argmin_p.def_batch(_reducer_batch(argmin_p))
argmin_p.def_lower(_argminmax_lower(False))


# ------------------------------------------------------ cumulative reductions
# NumPy's ``ufunc.accumulate`` along any axis but the last runs an inner loop
# along the axis for every other element (~5-20x slower than one ufunc call
# per row: measured on 1e6 float32 as (3, 333333), (64, 15625) and
# (1000, 1000)), so from rows of this many elements a loop over the axis
# combines whole rows instead (the same operations in the same order).
# Shorter rows lose to the loop's ~0.6 us a call (cumsum of (128, 128) along
# axis 0: 49 us accumulated, 89 us by rows; (100, 512): 239 vs 77 us).
_ROW_LOOP_MIN_ROW = 512


def _accumulate_rows(ufunc, x: np.ndarray, axis: int, reverse: bool) -> np.ndarray:
  """``ufunc.accumulate`` of ``x`` along ``axis`` (from the end when
  ``reverse``), one ufunc call per row along the axis."""
  out = np.empty_like(x)
  xs, outs = np.moveaxis(x, axis, 0), np.moveaxis(out, axis, 0)
  n = xs.shape[0]
  order = range(n - 1, -1, -1) if reverse else range(n)
  prev = None
  for i in order:
    if prev is None:
      outs[i] = xs[i]
    else:
      ufunc(outs[prev], xs[i], out=outs[i])
    prev = i
  return out


def _cumulative_primitive(name: str, accumulate, kind: str = "differentiable",
                          ufunc=None) -> Primitive:
  """``ufunc``: the binary ufunc ``accumulate`` applies (for the row loop)."""
  p = Primitive(name, kind=kind)

  @quiet
  def impl(x, *, axis, reverse):
    xc, dt = in_float32(x)
    if reverse:
      xc = np.flip(xc, axis)
    out = np.asarray(accumulate(xc, axis)).astype(dt)
    return [np.flip(out, axis) if reverse else out]

  def eval_kernel(x, *, axis, reverse):
    # The impl's accumulation without its copies (ml_dtypes floats: the impl).
    if x.dtype in dtypes.custom_float_dtypes:
      return None
    if (ufunc is not None and x.ndim > 1 and axis != x.ndim - 1 and x.shape[axis]
        and math.prod(x.shape) // x.shape[axis] >= _ROW_LOOP_MIN_ROW):
      return functools.partial(_accumulate_rows, ufunc, axis=axis, reverse=reverse)
    if reverse:
      return lambda v: np.flip(accumulate(np.flip(v, axis), axis), axis)
    return lambda v: accumulate(v, axis)

  def abstract_eval(x, *, axis, reverse):
    if axis < 0:
      raise ValueError("XLA operations do not allow negative axes")
    if axis >= x.ndim:
      raise ValueError(f"axis {axis} is out of bounds for array of shape {x.shape}")
    check_number(name, x)
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]

  def batch(vals, dims, *, axis, reverse):
    (x,), (d,) = vals, dims
    return p.bind(x, axis=axis + (d <= axis), reverse=reverse), [d]

  p.def_impl(impl)
  p.def_eval_kernel(eval_kernel)
  p.def_abstract_eval(abstract_eval)
  p.def_sharding_rule(unsharded_axis_rule(
      "Input should be unsharded over the axis being reduced. Got input type={type} and "
      "axis={axis}", "axis"))
  p.def_batch(batch)
  return p


def _def_scan_jvp(p: Primitive, combine) -> None:
  @p.def_jvp
  def jvp(primals, tangents, *, axis, reverse):
    (x,), (t,) = primals, tangents
    return [p.bind1(x, axis=axis, reverse=reverse)], [_scan_jvp(combine, x, t, axis, reverse)]


def _cumulative_lower(kind: str, init_fn):
  def rule(ctx, x, *, axis, reverse):
    aval = ctx.avals_in[0]
    return [cumulative(ctx, x, axis, reverse, kind, init_fn(aval.dtype), aval.dtype)]
  return rule


# cumsum is linear (its transpose sums from the other end); the others are
# differentiated as JAX does, through the parallel prefix scan.
cumsum_p = _cumulative_primitive("cumsum", lambda x, a: np.cumsum(x, a, dtype=x.dtype),
                                 kind="linear", ufunc=np.add)


def cumsum(operand, axis: int = 0, reverse: bool = False):
  """Cumulative sum along ``axis`` (from the end when ``reverse``)."""
  return cumsum_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])
cumsum_p.def_lower(_cumulative_lower("add", lambda dt: 0))

cumprod_p = _cumulative_primitive("cumprod", lambda x, a: np.cumprod(x, a, dtype=x.dtype),
                                  ufunc=np.multiply)


def cumprod(operand, axis: int = 0, reverse: bool = False):
  """Cumulative product along ``axis`` (from the end when ``reverse``)."""
  return cumprod_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


_def_scan_jvp(cumprod_p, _mul_pair)
cumprod_p.def_lower(_cumulative_lower("mul", lambda dt: 1))

cummax_p = _cumulative_primitive("cummax", lambda x, a: np.maximum.accumulate(x, a),
                                 ufunc=np.maximum)


def cummax(operand, axis: int = 0, reverse: bool = False):
  """Cumulative maximum along ``axis`` (from the end when ``reverse``)."""
  return cummax_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


_def_scan_jvp(cummax_p, _chooser_pair(arithmetic.max))
cummax_p.def_lower(_cumulative_lower("max", _max_identity))

cummin_p = _cumulative_primitive("cummin", lambda x, a: np.minimum.accumulate(x, a),
                                 ufunc=np.minimum)


def cummin(operand, axis: int = 0, reverse: bool = False):
  """Cumulative minimum along ``axis`` (from the end when ``reverse``)."""
  return cummin_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


_def_scan_jvp(cummin_p, _chooser_pair(arithmetic.min))
cummin_p.def_lower(_cumulative_lower("min", _min_identity))

cumlogsumexp_p = _cumulative_primitive("cumlogsumexp",
                                       lambda x, a: np.logaddexp.accumulate(x, a))


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
  """Cumulative ``log(sum(exp(x)))`` along ``axis`` (from the end when ``reverse``)."""
  return cumlogsumexp_p.bind1(operand, axis=int(axis), reverse=bool(reverse))


_def_scan_jvp(cumlogsumexp_p, _logaddexp_pair)
cumlogsumexp_p.def_lower(_cumulative_lower("logaddexp", lambda dt: -np.inf))
