"""Matrix products of ``jax.numpy``: ``matmul``, ``dot``, ``vdot``, ``vecdot``,
``inner``, ``outer``, ``tensordot``, ``kron``, ``matvec``, ``vecmat``,
``cross``, and the diagonal/triangle helpers ``trace``, ``diagonal``,
``tril``, ``triu``; ``einsum`` lives in ``einsum.py`` and is re-exported here.

Products follow JAX: operands keep their own dtypes and ``dot_general``
gets the promoted dtype as ``preferred_element_type``, so mixed products
stage one equation, and the result is weak only when JAX's promotion says so.
"""
from __future__ import annotations

import functools
import math
import operator

import numpy as np

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import (Array, Tracer, concrete_or_error, eval_trace, get_aval,
                               is_concrete, to_concrete_value, trace_state)
from openjax._src.core.trace import eager_config
from openjax._src.numpy import util
from openjax._src.numpy.eager_programs import eager_program
from openjax._src.numpy._ufunc_helpers import _where
from openjax._src.numpy.einsum import diagonal_take, einsum, einsum_path
from openjax._src.numpy.reductions import sum as _sum
from openjax._src.numpy.vectorize import vectorize
from openjax._src.primitives.dot_conv.dot import canonicalize_precision, dot_general_p

__all__ = ["matmul", "dot", "vdot", "vecdot", "inner", "outer", "tensordot", "kron",
           "matvec", "vecmat", "cross", "trace", "diagonal", "tril", "triu",
           "einsum", "einsum_path"]


# ------------------------------------------------------------------ helpers
def _result_dtype(fun: str, args, preferred_element_type):
  """(dtype, weak) of a product: promotion of ``args``, or the requested type."""
  if preferred_element_type is None:
    return dtypes.result_type(*args, return_weak_type_flag=True)
  return dtypes.explicit_dtype(preferred_element_type, fun), False


def _check_sharding(fun: str, out_sharding) -> None:
  if out_sharding is not None:
    raise NotImplementedError(f"jnp.{fun}: out_sharding is not supported yet; pass "
                              "out_sharding=None.")


def _typeof(x) -> str:
  # JAX's str(aval): long dtype names, '~' marking a weak type.
  aval = get_aval(x)
  return ("~" if aval.weak_type else "") + aval.str_short(short_dtypes=False)


def _transpose(x, perm):
  perm = tuple(perm)
  return x if perm == tuple(range(len(perm))) else lax.transpose(x, perm)


def _moveaxis(x, source, destination):
  nd = np.ndim(x)
  src = [util.canonicalize_axis(s, nd) for s in source]
  dst = [util.canonicalize_axis(d, nd) for d in destination]
  perm = [i for i in range(nd) if i not in src]
  for d, s in sorted(zip(dst, src)):
    perm.insert(d, s)
  return _transpose(x, perm)


def _ravel(x):
  shape = np.shape(x)
  return x if len(shape) == 1 else lax.reshape(x, (math.prod(shape),))


def _batch_shape(fun: str, *shapes):
  try:
    return np.broadcast_shapes(*shapes)
  except ValueError:
    raise ValueError(f"jnp.{fun}: batch dimensions {', '.join(map(str, shapes))} cannot "
                     "be broadcast together; make them equal or 1.") from None


def _mul(a, b):
  # jnp.multiply on bools is a logical and (lax.mul rejects bool).
  return lax.bitwise_and(a, b) if dtypes.dtype(a) == np.bool_ else lax.mul(a, b)


def _multiply(a, b):
  """Broadcasting multiply with JAX's promotion (``a * b``)."""
  a, b = util.promote_dtypes(a, b)
  shape = np.broadcast_shapes(np.shape(a), np.shape(b))
  return _mul(util.broadcast_to_shape(a, shape), util.broadcast_to_shape(b, shape))


def _conj_if_complex(x):
  return lax.conj(x) if dtypes.kind(dtypes.dtype(x)) == "c" else x


def _product(a, b, contract, batch, precision, out_dtype, weak, out_sharding=None):
  out = lax.dot_general(a, b, (contract, batch), precision=precision,
                        preferred_element_type=out_dtype, out_sharding=out_sharding)
  return lax._convert_element_type(out, out_dtype, weak)


# ------------------------------------------------------------------ products
# (kind, operand avals, precision, preferred_element_type, x64) -> the lax
# steps (dot_general dimension numbers, ...), result dtype and weak type of a
# product seen before: its checks and promotion done once. Replays make the
# same lax calls.
_PRODUCT_PLANS: dict = {}


def _product_plan(kind: str, a, b, precision, preferred_element_type):
  """The plan key of a product of two arrays (or tracers; or an eager Array
  and a Python float, ``jnp.dot(x, 2.0)``) under the standard flags (None
  for other operands) and its plan, if one is recorded."""
  if not eager_config.flags_ok:
    return None, None
  ka, kb = _operand_key(a), _operand_key(b)
  if ka is None or kb is None:
    return None, None
  x64 = eager_config.x64
  last = _LAST_PLAN.get(kind)
  # The kind's last plan, by identity (a repeated call: no key to build,
  # hash and compare, ~2.5 us of a 10 us jnp.matmul of 12 elements).
  if (last is not None and last[0] is ka and last[1] is kb and last[2] is precision
      and last[3] is preferred_element_type and last[4] is x64):
    return last[5], last[6]
  key = (kind, ka, kb, precision, preferred_element_type, x64)
  try:
    plan = _PRODUCT_PLANS.get(key)
  except TypeError:   # an unhashable precision or dtype: no plan
    return None, None
  if plan is not None:
    _LAST_PLAN[kind] = (ka, kb, precision, preferred_element_type, x64, key, plan)
  return key, plan


# kind -> (operand keys, precision, preferred_element_type, x64, key, plan)
# of its last plan found
_LAST_PLAN: dict = {}


def _operand_key(x):
  if type(x) is Array or isinstance(x, Tracer):
    return x.aval
  # A Python float keys by its type (its value is an argument of the plan's
  # program); only eager calls replay such a plan (``_replay``).
  return float if type(x) is float else None


def _record_plan(key, dims, out_dt, weak, several: bool, direct: bool = False) -> None:
  """Record a product's plan: its lax steps ``dims``, result dtype and weak
  type, and whether it makes several binds (then eager calls run its steps
  as one program, made at the first replay: a bind costs ~4.5 us, a program
  step ~0.6); ``direct``: it is one dot_general whose result needs no cast
  (bound without lax.dot's checks)."""
  if key is not None:
    if len(_PRODUCT_PLANS) >= 4096:
      _PRODUCT_PLANS.clear()
    _PRODUCT_PLANS[key] = [dims, out_dt, weak, None if several else False, direct]


def _strong_product(a, b, weak: bool) -> bool:
  """Whether dot_general of ``a`` and ``b`` (arrays or tracers) gives the
  product's strong result type itself (no cast after it): a weak result is
  made only of two weak operands."""
  return (not weak and _is_array(a) and _is_array(b)
          and not (a.aval.weak_type and b.aval.weak_type))


def _dot_general(a, b, dims, precision, out_dt):
  """A plan's one dot_general (canonical dimension numbers and result dtype),
  bound as lax.dot binds it without its checks (the dimension numbers'
  lookup, explicit_dtype) and the no-op cast after it: ~2 us of a 9 us
  jnp.matmul of 12 elements."""
  return dot_general_p.bind1(a, b, dimension_numbers=dims,
                             precision=canonicalize_precision(precision),
                             preferred_element_type=out_dt, out_sharding=None)


def _is_array(x) -> bool:
  return type(x) is Array or isinstance(x, Tracer)


def _eager_plan(plan, a, b) -> bool:
  """Whether an eager call runs ``plan``'s program: a plan of several binds
  (or with a Python float operand) called on eager Arrays."""
  return (plan[3] is not False and trace_state.trace is eval_trace
          and (type(a) is Array or type(a) is float) and (type(b) is Array or type(b) is float)
          and (type(a) is Array or type(b) is Array))


def _plan_program(plan, steps):
  """``plan``'s eager program of (a, b): ``steps`` traced once (a library
  program: the same kernels and bits as the binds one by one)."""
  program = plan[3]
  if program is None:
    program = plan[3] = util.jit(steps)
  return program


def matmul(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """Matrix product with NumPy's rules: 1-D operands act as vectors and
  leading (batch) dimensions broadcast. Scalars are an error (use ``*``)."""
  key, plan = (None, None) if out_sharding is not None else \
      _product_plan("matmul", a, b, precision, preferred_element_type)
  if plan is not None:
    steps, out_dt, weak, _, direct = plan
    if direct:
      return _dot_general(a, b, steps[2], precision, out_dt)
    if _eager_plan(plan, a, b):
      # jnp.matmul(f32[1,1,3,4], f32[1,4,2]): 4 binds, 40 -> 13 us
      return _plan_program(plan, lambda a, b: _matmul_steps(a, b, steps, precision, out_dt,
                                                            weak))(a, b)
    if type(a) is not float and type(b) is not float:
      return _matmul_steps(a, b, steps, precision, out_dt, weak)
  a, b = util.ensure_arraylike("matmul", a, b)
  _check_sharding("matmul", out_sharding)
  a_shape, b_shape = util.shape_of(a), util.shape_of(b)
  for i, shape in enumerate((a_shape, b_shape)):
    if not shape:
      raise ValueError(f"matmul input operand {i} must have ndim at least 1, but it has "
                       f"ndim 0")
  out_dt, weak = _result_dtype("matmul", (a, b), preferred_element_type)
  a_mat, b_mat = len(a_shape) > 1, len(b_shape) > 1
  if len(a_shape) <= 2 and len(b_shape) <= 2:
    # Vectors and matrices (no batch dimensions): the one dot_general below,
    # without the batch bookkeeping.
    dims = (((len(a_shape) - 1,), (len(b_shape) - 1 - b_mat,)), ((), ()))
    steps = ((), (), dims, None, ())
    _record_plan(key, steps, out_dt, weak, several=weak, direct=_strong_product(a, b, weak))
    return _matmul_steps(a, b, steps, precision, out_dt, weak)
  a_bd = a_shape[:-2] if a_mat else ()
  b_bd = b_shape[:-2] if b_mat else ()
  nb = max(len(a_bd), len(b_bd))
  a_off, b_off = nb - len(a_bd), nb - len(b_bd)
  # Classify each broadcast batch position: a batch dim of dot_general when
  # both sides have it; a free dim of one side when the other lacks it or has
  # size 1 (that size-1 dim is squeezed away); restored at the end when both
  # sides have size 1.
  a_keep, b_keep, lhs_batch, rhs_batch = [], [], [], []
  out_batch, out_a, out_b, restore = [], [], [], []
  for i in range(nb):
    da = a_bd[i - a_off] if i >= a_off else None
    db = b_bd[i - b_off] if i >= b_off else None
    if da is not None and db is not None and da == db and da != 1:
      lhs_batch.append(len(a_keep))
      rhs_batch.append(len(b_keep))
      a_keep.append(i - a_off)
      b_keep.append(i - b_off)
      out_batch.append(i)
    elif da == 1 and db == 1:
      restore.append(i)
    elif da is None or (da == 1 and db is not None):
      b_keep.append(i - b_off)
      out_b.append(i)
    elif db is None or db == 1:
      a_keep.append(i - a_off)
      out_a.append(i)
    else:
      raise ValueError(f"Incompatible types for matmul arguments: {_typeof(a)} and "
                       f"{_typeof(b)}")
  a_sq = tuple(d for d in range(len(a_bd)) if d not in a_keep)
  b_sq = tuple(d for d in range(len(b_bd)) if d not in b_keep)
  a_nd, b_nd = len(a_shape) - len(a_sq), len(b_shape) - len(b_sq)
  dims = (((a_nd - 1,), (b_nd - 1 - b_mat,)), (tuple(lhs_batch), tuple(rhs_batch)))
  order = out_batch + out_a + ([nb] if a_mat else []) + out_b + ([nb + 1] if b_mat else [])
  perm = tuple(sorted(range(len(order)), key=order.__getitem__))
  if perm == tuple(range(len(perm))):
    perm = None   # (no transpose: the batch-major layout already)
  steps = (a_sq, b_sq, dims, perm, tuple(restore))
  several = bool(a_sq or b_sq or restore or weak or perm)
  _record_plan(key, steps, out_dt, weak, several,
               direct=not several and _strong_product(a, b, weak))
  return _matmul_steps(a, b, steps, precision, out_dt, weak)


def _matmul_steps(a, b, steps, precision, out_dt, weak):
  """matmul's lax calls: squeeze size-1 batch dimensions, one dot_general,
  the result's axes put in order, size-1 batch dimensions restored."""
  a_sq, b_sq, dims, perm, restore = steps
  if a_sq:
    a = lax.squeeze(a, a_sq)
  if b_sq:
    b = lax.squeeze(b, b_sq)
  out = lax.dot_general(a, b, dims, precision=precision, preferred_element_type=out_dt)
  if perm is not None:
    out = _transpose(out, perm)
  if restore:
    out = lax.expand_dims(out, restore)
  return lax._convert_element_type(out, out_dt, weak)


def dot(a, b, *, precision=None, preferred_element_type=None, out_sharding=None):
  """NumPy's dot: a product over the last axis of ``a`` and the second-to-last
  of ``b`` (the only axis of a 1-D ``b``); batch axes are stacked, not
  broadcast. With a scalar operand it is elementwise multiplication."""
  key, plan = _product_plan("dot", a, b, precision, preferred_element_type)
  if plan is not None:
    contract, out_dt, weak, _, direct = plan
    if direct and out_sharding is None:
      return _dot_general(a, b, (contract, ((), ())), precision, out_dt)
    if out_sharding is None and _eager_plan(plan, a, b):
      # jnp.dot(i32[3], 2.0): ensure_arraylike, promotion and 2 binds, 35 -> 12 us
      return _plan_program(plan, lambda a, b: _product(a, b, contract, ((), ()), precision,
                                                       out_dt, weak))(a, b)
    if type(a) is not float and type(b) is not float:
      return _product(a, b, contract, ((), ()), precision, out_dt, weak, out_sharding)
  a, b = util.ensure_arraylike("dot", a, b)
  out_dt, weak = _result_dtype("dot", (a, b), preferred_element_type)
  an, bn = np.ndim(a), np.ndim(b)
  if an == 0 or bn == 0:
    contract = ((), ())
  else:
    contract = ((an - 1,), (0,) if bn == 1 else (bn - 2,))
  several = weak or float in (type(a), type(b))
  _record_plan(key, contract, out_dt, weak, several, direct=not several and _strong_product(a, b,
                                                                                          weak))
  # out_sharding: the result's layout (a PartitionSpec over the context
  # mesh, or a NamedSharding), as lax.dot_general takes it.
  return _product(a, b, contract, ((), ()), precision, out_dt, weak, out_sharding)


@eager_program(static_argnames=('precision', 'preferred_element_type'))
def vdot(a, b, *, precision=None, preferred_element_type=None):
  """Dot product of the flattened operands, conjugating ``a`` when complex."""
  a, b = util.ensure_arraylike("vdot", a, b)
  a = _conj_if_complex(a)
  return dot(_ravel(a), _ravel(b), precision=precision,
             preferred_element_type=preferred_element_type)


@eager_program(static_argnames=('axis', 'precision', 'preferred_element_type'))
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
  """Conjugate dot product of vectors along ``axis``; the other axes
  broadcast against each other."""
  x1, x2 = util.ensure_arraylike("jnp.vecdot", x1, x2)
  s1, s2 = np.shape(x1), np.shape(x2)
  ax1, ax2 = util.canonicalize_axis(axis, len(s1)), util.canonicalize_axis(axis, len(s2))
  if s1[ax1] != s2[ax2]:
    raise ValueError(f"axes must match; got shapes {s1} and {s2} with axis={axis}")
  # As JAX: vdot vectorized over the batch axes, so a side without an axis is
  # not broadcast along it (the product keeps it a free dimension).
  product = functools.partial(vdot, precision=precision,
                              preferred_element_type=preferred_element_type)
  return vectorize(product, signature="(n),(n)->()")(
      _moveaxis(x1, (ax1,), (-1,)), _moveaxis(x2, (ax2,), (-1,)))


@util.jit
def matvec(x1, x2, /):
  """Batched matrix-vector product: ``(..., m, n) x (..., n) -> (..., m)``."""
  x1, x2 = util.ensure_arraylike("matvec", x1, x2)
  return vectorize(matmul, signature="(n,m),(m)->(n)")(x1, x2)


@util.jit
def vecmat(x1, x2, /):
  """Batched conjugate vector-matrix product: ``(..., n) x (..., n, m) -> (..., m)``."""
  x1, x2 = util.ensure_arraylike("vecmat", x1, x2)
  return vectorize(matmul, signature="(n),(n,m)->(m)")(_conj_if_complex(x1), x2)


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
              out_sharding=None):
  """Sum products over the last ``axes`` axes of ``a`` and the first of ``b``,
  or over the explicit pair of axis sequences ``axes``."""
  if type(axes) is not int:
    axes = _static_axes(axes)
  return _tensordot(a, b, axes, precision=precision,
                    preferred_element_type=preferred_element_type, out_sharding=out_sharding)


def _static_axes(axes):
  """A pair of axis lists as a pair of tuples (the same contraction): a
  static argument of the eager program must hash, and lists made every eager
  call take jit's general path, which traced it again (tensordot(axes=([0,
  2], [2, 0])) of 24 elements 79 -> 9 us). Other spellings stay as they
  are (their errors print them)."""
  if type(axes) is list or type(axes) is tuple:
    if len(axes) == 2:
      ax1, ax2 = axes
      if (type(ax1) in (list, tuple) and type(ax2) in (list, tuple) and len(ax1) == len(ax2)
          and all(type(i) is int for i in (*ax1, *ax2))):
        return (tuple(ax1), tuple(ax2))
      if type(ax1) is int and type(ax2) is int:
        return (ax1, ax2)
  return axes


@eager_program(static_argnames=('axes', 'precision', 'preferred_element_type', 'out_sharding'))
def _tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None,
               out_sharding=None):
  a, b = util.ensure_arraylike("tensordot", a, b)
  _check_sharding("tensordot", out_sharding)
  an, bn = np.ndim(a), np.ndim(b)
  out_dt, weak = _result_dtype("tensordot", (a, b), preferred_element_type)
  if type(axes) is int:
    if axes > min(an, bn):
      raise TypeError(f"Number of tensordot axes (axes {axes}) exceeds input ranks "
                      f"({np.shape(a)} and {np.shape(b)})")
    contract = (tuple(range(an - axes, an)), tuple(range(axes)))
  elif isinstance(axes, (tuple, list)) and len(axes) == 2:
    ax1, ax2 = axes
    if isinstance(ax1, int) and isinstance(ax2, int):
      contract = ((util.canonicalize_axis(ax1, an),), (util.canonicalize_axis(ax2, bn),))
    elif isinstance(ax1, (tuple, list)) and isinstance(ax2, (tuple, list)):
      if len(ax1) != len(ax2):
        raise TypeError("tensordot requires axes lists to have equal length, got "
                        f"{ax1} and {ax2}.")
      contract = (tuple(util.canonicalize_axis(i, an) for i in ax1),
                  tuple(util.canonicalize_axis(i, bn) for i in ax2))
    else:
      raise TypeError("tensordot requires both axes lists to be either ints, tuples or "
                      f"lists, got {ax1} and {ax2}")
  else:
    raise TypeError("tensordot axes argument must be an int, a pair of ints, or a pair "
                    "of lists/tuples of ints.")
  return _product(a, b, contract, ((), ()), precision, out_dt, weak)


@eager_program(static_argnames=('precision', 'preferred_element_type'))
def inner(a, b, *, precision=None, preferred_element_type=None):
  """Inner product over the last axis of each operand; other axes are
  stacked: ``(*a.shape[:-1], *b.shape[:-1])``."""
  a, b = util.ensure_arraylike("inner", a, b)
  if np.ndim(a) == 0 or np.ndim(b) == 0:
    if preferred_element_type is not None:
      dt = dtypes.explicit_dtype(preferred_element_type, "inner")
      a, b = lax.convert_element_type(a, dt), lax.convert_element_type(b, dt)
    return _multiply(a, b)
  return tensordot(a, b, (-1, -1), precision=precision,
                   preferred_element_type=preferred_element_type)


@eager_program(static_argnames=('out',))
def outer(a, b, out=None):
  """Outer product of the flattened operands: shape ``(a.size, b.size)``."""
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.outer is not supported.")
  a, b = util.ensure_arraylike("outer", a, b)
  a, b = util.promote_dtypes(a, b)
  a, b = _ravel(a), _ravel(b)
  n, m = np.shape(a)[0], np.shape(b)[0]
  # As JAX: [n,1] * [1,m], the multiply broadcasting the size-1 dims.
  return _mul(lax.broadcast_in_dim(a, (n, 1), (0,)), lax.broadcast_in_dim(b, (1, m), (1,)))


@util.jit
def kron(a, b):
  """Kronecker product: every element of ``a`` scales a copy of ``b``; the
  shape is the elementwise product of the (rank-aligned) shapes."""
  util.check_arraylike("kron", a, b)
  a, b = util.promote_dtypes(a, b)
  sa, sb = np.shape(a), np.shape(b)
  nd = max(len(sa), len(sb))
  if len(sa) < nd:   # leading size-1 axes (JAX's expand_dims)
    a = lax.expand_dims(a, tuple(range(nd - len(sa))))
  if len(sb) < nd:
    b = lax.expand_dims(b, tuple(range(nd - len(sb))))
  sa, sb = (1,) * (nd - len(sa)) + tuple(sa), (1,) * (nd - len(sb)) + tuple(sb)
  # Interleave: a's axes at even positions, b's at odd, then merge pairs.
  # As JAX: size-1 axes interleaved, the multiply broadcasting them.
  a_shape = tuple(d for x in sa for d in (x, 1))
  b_shape = tuple(d for x in sb for d in (1, x))
  prod = _mul(lax.broadcast_in_dim(a, a_shape, tuple(range(0, 2 * nd, 2))),
              lax.broadcast_in_dim(b, b_shape, tuple(range(1, 2 * nd, 2))))
  return lax.reshape(prod, tuple(x * y for x, y in zip(sa, sb)))


@util.jit(static_argnames=('axisa', 'axisb', 'axisc', 'axis'))
def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
  """Cross product of 3-vectors (or 2-vectors) along ``axisa``/``axisb``,
  stored along ``axisc``; ``axis`` sets all three. Other axes broadcast."""
  util.check_arraylike("cross", a, b)
  if axis is not None:
    axisa = axisb = axisc = axis
  a, b = util.promote_dtypes(a, b)
  a = _moveaxis(a, (axisa,), (-1,))
  b = _moveaxis(b, (axisb,), (-1,))
  na, nb_ = np.shape(a)[-1], np.shape(b)[-1]
  if na not in (2, 3) or nb_ not in (2, 3):
    raise ValueError("Dimension must be either 2 or 3 for cross product")
  batch = _batch_shape("cross", np.shape(a)[:-1], np.shape(b)[:-1])

  def comps(x, n):
    nd = np.ndim(x)
    cs = [util.broadcast_to_shape(lax.index_in_dim(x, i, nd - 1, keepdims=False), batch)
          for i in range(n)]
    if n == 2:
      cs.append(lax.full_like(cs[0], 0))
    return cs

  a0, a1, a2 = comps(a, na)
  b0, b1, b2 = comps(b, nb_)
  if na == 2 and nb_ == 2:
    return lax.sub(_mul(a0, b1), _mul(a1, b0))
  parts = [lax.sub(_mul(a1, b2), _mul(a2, b1)),
           lax.sub(_mul(a2, b0), _mul(a0, b2)),
           lax.sub(_mul(a0, b1), _mul(a1, b0))]
  c = lax.concatenate([lax.expand_dims(p, (0,)) for p in parts], 0)
  # JAX stacks the parts with jnp.array, which gives a strongly typed result.
  c = lax._convert_element_type(c, dtypes.dtype(c), weak_type=False)
  return _moveaxis(c, (0,), (axisc,))


# ---------------------------------------------------- diagonals and triangles
@util.jit(static_argnames=('offset', 'axis1', 'axis2'))
def diagonal(a, offset=0, axis1: int = 0, axis2: int = 1):
  """The ``offset`` diagonal over ``axis1``/``axis2``, appended as the last
  axis of the result (the two axes are removed)."""
  a = util.ensure_arraylike("diagonal", a)
  shape = np.shape(a)
  if len(shape) < 2:
    raise ValueError("diagonal requires an array of at least two dimensions.")
  offset = concrete_or_error(operator.index, offset, "'offset' argument of jnp.diagonal()")
  ax1, ax2 = util.canonicalize_axis(axis1, len(shape)), util.canonicalize_axis(axis2, len(shape))
  if ax1 == ax2:
    raise ValueError(f"diagonal: axis1 and axis2 cannot be the same, got axis1={axis1} and "
                     f"axis2={axis2}; pass two different axes.")
  # Only the diagonal is read: strided slices where the layout allows, else a
  # gather (moving the axes last first would copy all of ``a``).
  offsets = (0, offset) if offset >= 0 else (-offset, 0)
  return diagonal_take(a, (ax1, ax2), offsets, len(shape) - 2)


def trace(a, offset=0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
  """Sum of the ``offset`` diagonal over ``axis1``/``axis2`` (``dtype``: the
  accumulation and result dtype, as for ``jnp.sum``)."""
  # The diagonal's strided slice and its sum, eager and traced alike: JAX's
  # masked sum of the whole matrix (its printed jaxpr) reads every element and
  # sums in another order, so jit's bits would differ from eager's (41 of 80
  # random matrices); a traced offset takes the mask. The defaults keep an
  # eager call's key short.
  if type(offset) is int and offset == 0 and axis1 == 0 and axis2 == 1 and dtype is None \
      and out is None:
    return _trace_diagonal(a)
  if trace_state.trace is eval_trace or isinstance(offset, (int, np.integer)):
    return _trace_diagonal(a, offset, axis1, axis2, dtype, out)
  return trace_masked(a, offset, axis1=axis1, axis2=axis2, dtype=dtype, out=out)


def _trace_axes(a, axis1, axis2, dtype, out):
  a = util.ensure_arraylike("trace", a)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
  nd = np.ndim(a)
  ax1, ax2 = util.canonicalize_axis(axis1, nd), util.canonicalize_axis(axis2, nd)
  if ax1 == ax2:
    raise ValueError(f"axis1 and axis2 can not be same. axis1={axis1} and axis2={axis2}")
  if dtype is not None:
    dtype = dtypes.explicit_dtype(dtype, "trace")
  return a, ax1, ax2, dtype


@util.jit(static_argnames=('offset', 'axis1', 'axis2', 'dtype', 'out'))
def _trace_diagonal(a, offset=0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
  a, ax1, ax2, dtype = _trace_axes(a, axis1, axis2, dtype, out)
  off = operator.index(to_concrete_value(offset))
  return _sum(diagonal(a, off, ax1, ax2), axis=-1, dtype=dtype)


def trace_masked(a, offset=0, axis1: int = 0, axis2: int = 1, dtype=None, out=None):
  # JAX's formulation (its printed jaxpr): the axes moved last, the matrix
  # masked by (row + offset == col) through jnp.where, summed.
  a, ax1, ax2, dtype = _trace_axes(a, axis1, axis2, dtype, out)
  if not isinstance(offset, int):
    off = util.ensure_arraylike("trace", offset)
    if np.shape(off) or dtypes.kind(dtypes.dtype(off)) not in "iu":
      raise ValueError(f"k must be a scalar integer; got {offset}")
    offset = off
  a = _moveaxis(a, (ax1, ax2), (-2, -1))
  shape = np.shape(a)
  mask = _offset_mask(shape[-2:], offset, lax.eq, add_first=False)
  return _sum(_where(mask, a, lax.full_like(a, 0)), axis=(-2, -1), dtype=dtype)


trace_masked.__name__ = "trace"
trace_masked = util.jit(trace_masked, static_argnames=('axis1', 'axis2', 'dtype', 'out'))


def _offset_mask(nm, offset, cmp, add_first=True):
  """``cmp(row + offset, col)`` over an ``n x m`` grid of int32 iotas (the
  offset added before or after the column iota: JAX's tril's and trace's)."""
  def add(rows):
    # A static offset is a rank-0 int32 constant (a literal when traced).
    return lax.add(rows, np.int32(offset) if isinstance(offset, int)
                   else lax.convert_element_type(offset, np.int32))
  rows = lax.broadcasted_iota(np.int32, nm, 0)
  if add_first:
    rows = add(rows)
  cols = lax.broadcasted_iota(np.int32, nm, 1)
  return cmp(rows if add_first else add(rows), cols)


def _triangle(fun: str, m, k, lower: bool):
  m = util.ensure_arraylike(fun, m)
  shape = np.shape(m)
  if len(shape) < 2:
    raise ValueError(f"Argument to jax.numpy.{fun} must be at least 2D")
  k = concrete_or_error(operator.index, k, f"'k' argument of jnp.{fun}()")
  n, mm = shape[-2:]
  # Clipping k keeps the int32 iotas exact; the mask is unchanged.
  k = max(-n - 1, min(k, mm + 1))
  mask = lax.broadcast(_offset_mask((n, mm), k if lower else k - 1, lax.ge), shape[:-2])
  zeros = lax.full_like(m, 0)
  return lax.select(mask, m, zeros) if lower else lax.select(mask, zeros, m)


@util.jit(static_argnames=('k',))
def tril(m, k: int = 0):
  """Lower triangle of the last two axes: entries above diagonal ``k`` zeroed."""
  return _triangle("tril", m, k, lower=True)


@util.jit(static_argnames=('k',))
def triu(m, k: int = 0):
  """Upper triangle of the last two axes: entries below diagonal ``k`` zeroed."""
  return _triangle("triu", m, k, lower=False)
