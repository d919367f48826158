"""``jnp.einsum`` and ``jnp.einsum_path``.

opt_einsum chooses the contraction order (on shapes only); each step then
becomes at most one ``dot_general``, with sums for indices that only one
operand carries and a diagonal mask for indices repeated within an operand
(eagerly a gather of the diagonal, ``diagonal_take``).
"""
from __future__ import annotations

import collections
import functools
import math

import numpy as np
import opt_einsum

from openjax._src import dtypes
from openjax._src import lax
from openjax._src.core import Array, eval_trace, trace_state
from openjax._src.numpy import util

__all__ = ["einsum", "einsum_path"]


class _Unoptimized(opt_einsum.paths.PathOptimizer):
  """Contract operands left to right, in the order given."""

  def __call__(self, inputs, output, size_dict, memory_limit=None):
    return [(0, 1)] * (len(inputs) - 1)


def _path_type(optimize):
  if optimize is True:
    return "optimal"
  if optimize is False:
    return _Unoptimized()
  return optimize


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None, _dot_general=lax.dot_general, out_sharding=None):
  """Einstein summation over ``operands`` described by ``subscripts``
  (``'ij,jk->ik'``), or in the interleaved form ``einsum(x, [0, 1], y, [1, 2])``.

  ``optimize`` picks the contraction order: ``'auto'`` (default), ``True``
  (optimal), ``False`` (left to right), an opt_einsum strategy name, or a
  path from ``einsum_path``. ``preferred_element_type`` sets the
  accumulation and result dtype.
  """
  if out is None and out_sharding is None and trace_state.trace is eval_trace:
    if type(subscripts) is str:
      program, arrays = _eager_program(subscripts, operands, optimize, precision,
                                       preferred_element_type, _dot_general), operands
    elif type(subscripts) is Array:
      program, arrays = _interleaved_program((subscripts, *operands), optimize, precision,
                                             preferred_element_type, _dot_general)
    else:
      program = None
    if program is not None:
      return program(*arrays)
  if out is not None:
    raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
  if out_sharding is not None:
    raise NotImplementedError("jnp.einsum: out_sharding is not supported yet; pass "
                              "out_sharding=None.")
  args = tuple(a.__jax_array__() if hasattr(a, "__jax_array__") else a
               for a in (subscripts, *operands))
  if not isinstance(subscripts, str):
    # The interleaved form, as opt_einsum reads it: subscripts spelled as a
    # string (whose contraction path is then cached like any other).
    subscripts, args = opt_einsum.parser.convert_interleaved_input(args)
    args = (subscripts, *args)
  arrays = [util.ensure_arraylike("einsum", op) for op in args[1:]]
  contractions = _contractions(subscripts, tuple(np.shape(a) for a in arrays), optimize)
  if trace_state.trace is eval_trace and all(type(a) is Array for a in arrays):
    # Eager: the contraction's equations traced once per signature and run
    # as a program (JAX jits einsum too, inlined: traced, the equations are
    # staged directly, below).
    return _eager_contract(contractions, precision, preferred_element_type, _dot_general,
                           *arrays)
  return _contract(arrays, contractions, precision, preferred_element_type, _dot_general)


@util.jit(static_argnums=(0, 1, 2, 3))
def _eager_contract(contractions, precision, preferred_element_type, dot_general, *arrays):
  return _contract(list(arrays), contractions, precision, preferred_element_type, dot_general,
                   eager=True)


# (subscripts, optimize, precision, preferred_element_type, dot_general,
# operand shapes) -> the eager program of the operands alone (``_eager_program``).
_EAGER_PROGRAMS: dict = {}


def _eager_program(subscripts, operands, optimize, precision, preferred_element_type,
                   dot_general):
  """The eager library function ``arrays -> einsum(subscripts, *arrays)`` of a
  call on eager Arrays, made once per (subscripts, options, shapes); None
  for other calls (the general path). Called with the Arrays alone it takes
  the library call's fast path (its runner found by the Arrays' avals):
  the general front end (the interleaved-form check, operand conversion,
  the path lookup by shapes, statics compared per call) cost ~10 us of a
  20 us einsum of 12 elements."""
  shapes = []
  for a in operands:
    if type(a) is not Array:
      return None
    shapes.append(a.shape)
  key = (subscripts, optimize, precision, preferred_element_type, dot_general, *shapes)
  try:
    program = _EAGER_PROGRAMS.get(key)
  except TypeError:   # an explicit path (a list) or an unhashable option
    return None
  if program is None:
    contractions = _contractions(subscripts, tuple(shapes), optimize)

    def contract(*arrays):
      return _contract(list(arrays), contractions, precision, preferred_element_type,
                       dot_general, eager=True)
    contract.__name__ = contract.__qualname__ = "einsum"
    if len(_EAGER_PROGRAMS) >= 1024:
      _EAGER_PROGRAMS.clear()
    program = _EAGER_PROGRAMS[key] = util.jit(contract)
  return program


def _interleaved_program(args, optimize, precision, preferred_element_type, dot_general):
  """``_eager_program`` of the interleaved form ``(x, [0, 1], y, [1], [0])``
  of eager Arrays, keyed by its sublists (opt_einsum's conversion to
  subscripts ~6 us a call); (None, None) for other calls."""
  n = len(args) - len(args) % 2
  arrays, subs = args[0:n:2], args[1:n:2]
  parts = []
  for sub in (*subs, *args[n:]):
    if type(sub) is not list and type(sub) is not tuple:
      return None, None
    parts.append(tuple(sub))
  key = ("interleaved", *parts)
  try:
    subscripts = _INTERLEAVED.get(key)
  except TypeError:
    return None, None
  if subscripts is None:
    if not all(type(a) is Array for a in arrays):
      return None, None
    subscripts, _ = opt_einsum.parser.convert_interleaved_input(args)
    if len(_INTERLEAVED) >= 1024:
      _INTERLEAVED.clear()
    _INTERLEAVED[key] = subscripts
  return _eager_program(subscripts, arrays, optimize, precision, preferred_element_type,
                        dot_general), arrays


# the interleaved form's sublists -> its subscripts
_INTERLEAVED: dict = {}


def _simplify(contractions):
  return tuple((idx, frozenset(removed), eq) for idx, removed, eq, *_ in contractions)


def _path(subscripts, shapes, optimize):
  _, contractions = opt_einsum.contract_path(
      subscripts, *shapes, shapes=True, einsum_call=True, use_blas=True,
      optimize=_path_type(optimize))
  return _simplify(contractions)


_cached_path = functools.lru_cache(maxsize=1024)(_path)


def _contractions(subscripts, shapes, optimize):
  """opt_einsum's contraction steps. They depend only on the subscripts, the
  shapes and ``optimize``, so repeated eager calls reuse them."""
  if isinstance(optimize, list):  # an explicit path: hashable as a tuple
    optimize = tuple(tuple(step) if isinstance(step, list) else step for step in optimize)
  try:
    return _cached_path(subscripts, shapes, optimize)
  except TypeError:  # an unhashable PathOptimizer
    return _path(subscripts, shapes, optimize)


def einsum_path(subscripts, /, *operands, optimize="auto"):
  """The contraction order ``einsum`` would use, and opt_einsum's printable
  report of it: ``(path, info)``."""
  return opt_einsum.contract_path(subscripts, *operands, optimize=_path_type(optimize))


# ------------------------------------------------------------ the contraction
# A library program computes a step of constants once when its result is
# smaller than this (core/program.py's RELEASE_MIN_BYTES): a small operand's
# mask and zeros are constants there and the mask costs one select step.
_FOLDED_BYTES = 1 << 12


def _nbytes(x) -> int:
  return math.prod(np.shape(x)) * dtypes.dtype(x).itemsize


def _remove(names: str, chars) -> str:
  return names.translate(str.maketrans(dict.fromkeys(chars)))


def _delta_mask(shape, axes):
  """True where the coordinates along all of ``axes`` agree."""
  base = tuple(shape[a] for a in axes)
  iotas = [lax.broadcasted_iota(np.uint32, base, i) for i in range(len(base))]
  mask = lax.eq(iotas[0], iotas[1])
  for i1, i2 in zip(iotas[1:-1], iotas[2:]):
    mask = lax.bitwise_and(mask, lax.eq(i1, i2))
  return lax.broadcast_in_dim(mask, tuple(shape), tuple(axes))


def diagonal_take(x, axes, offsets, position: int):
  """The elements of ``x`` whose coordinates along ``axes`` are ``t +
  offsets[j]`` (offsets >= 0) for t = 0, 1, ...: ``x`` without ``axes`` and
  with that diagonal axis inserted at ``position``. Only the diagonal is
  read (where a mask over the axes' product reads, and builds, all of
  ``x``): adjacent axes merge into one axis (a free reshape of a row-major
  operand) where the diagonal is one strided slice; two apart are strided
  slices of rows of the block between them (``_split_diagonal``); other
  layouts, and empty results, are one gather."""
  axes, offsets = zip(*sorted(zip(axes, offsets)))
  shape = np.shape(x)
  size = max(0, min(shape[a] - o for a, o in zip(axes, offsets)))
  first, k = axes[0], len(axes)
  if size and math.prod(shape):
    if axes == tuple(range(first, first + k)):
      block = shape[first:first + k]
      steps = [math.prod(block[j + 1:]) for j in range(k)]
      start = sum(o * st for o, st in zip(offsets, steps))
      stride = sum(steps)
      pre, post = shape[:first], shape[first + k:]
      flat = lax.reshape(x, pre + (math.prod(block),) + post)
      out = lax.slice(flat, (0,) * len(pre) + (start,) + (0,) * len(post),
                      pre + (start + (size - 1) * stride + 1,) + post,
                      (1,) * len(pre) + (stride,) + (1,) * len(post))
      return _move_axis(out, first, position)
    if k == 2:
      return _move_axis(_split_diagonal(x, axes, offsets, size), first, position)
  # Constant indices (a jaxpr constant): no iota/add steps to run per call.
  # The diagonal axis leads the gather's result (its points layout, with no
  # transpose of the result: moved after, when at all).
  starts = np.arange(size, dtype=np.int32)[:, None] + np.array(offsets if size else (0,) * k,
                                                                np.int32)
  rest = len(shape) - k
  dnums = lax.GatherDimensionNumbers(
      offset_dims=tuple(range(1, rest + 1)), collapsed_slice_dims=axes, start_index_map=axes)
  slice_sizes = tuple(1 if d in axes else n for d, n in enumerate(shape))
  out = lax.gather(x, starts, dnums, slice_sizes, indices_are_sorted=True,
                   unique_indices=True, mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
  return _move_axis(out, 0, position)


def _split_diagonal(x, axes, offsets, size: int):
  """``diagonal_take``'s diagonal over axes a < b with axes between them, at
  position a. Merged, the block from a to the last axis holds the element of
  step t at base + t * R + (the middle and trailing coordinates), R = P *
  (M * nb + 1) (M, P: the middle and trailing sizes): each step's elements
  are every nb-th group of P in a row of R, so the first size - 1 steps are
  rows of R reshaped and sliced with stride nb, and the last step (whose row
  ends early) is a plain slice of ``x``."""
  shape = np.shape(x)
  a, b = axes
  oa, ob = offsets
  pre, mid, post = shape[:a], shape[a + 1:b], shape[b + 1:]
  nb, m, p = shape[b], math.prod(mid), math.prod(post)
  row = p * (m * nb + 1)
  base = oa * m * nb * p + ob * p
  lead = len(pre)
  zeros = (0,) * lead
  last_start = list((0,) * len(shape))
  last_start[a], last_start[b] = oa + size - 1, ob + size - 1
  last_limit = list(shape)
  last_limit[a], last_limit[b] = oa + size, ob + size
  last = lax.reshape(lax.slice(x, tuple(last_start), tuple(last_limit)), pre + (1,) + mid + post)
  if size == 1:
    return last
  flat = lax.reshape(x, pre + (math.prod(shape[a:]),))
  rows = lax.slice(flat, zeros + (base,), pre + (base + (size - 1) * row,))
  rows = lax.reshape(rows, pre + (size - 1, m * nb + 1, p))
  steps = lax.slice(rows, zeros + (0, 0, 0), pre + (size - 1, (m - 1) * nb + 1, p),
                    (1,) * lead + (1, nb, 1))
  steps = lax.reshape(steps, pre + (size - 1,) + mid + post)
  return lax.concatenate([steps, last], lead)


def _move_axis(x, source: int, destination: int):
  if source == destination:
    return x
  perm = [d for d in range(np.ndim(x)) if d != source]
  perm.insert(destination, source)
  return lax.transpose(x, tuple(perm))


def _contract(operands, contractions, precision, preferred_element_type, dot_general,
              eager: bool = False):
  if preferred_element_type is None:
    out_dt, weak = dtypes.result_type(*operands, return_weak_type_flag=True)
  else:
    out_dt, weak = dtypes.explicit_dtype(preferred_element_type, "einsum"), False

  def total(x, axes):
    # Sums accumulate in the result dtype (bool sums are a logical or).
    if dtypes.result_type(x, out_dt) != dtypes.dtype(x):
      x = lax.convert_element_type(x, out_dt)
    if dtypes.dtype(x) == np.bool_:
      return lax.reduce_or(x, tuple(axes))
    return lax.reduce_sum(x, tuple(axes))

  def sum_uniques(x, names, uniques):
    if uniques:
      x = total(x, [names.index(n) for n in uniques])
      names = _remove(names, uniques)
    return x, names

  def sum_repeats(x, names, counts, keep):
    for name, count in counts.items():
      if count > 1:
        axes = [i for i, n in enumerate(names) if n == name]
        # Adjacent axes' diagonal is one strided slice of a free reshape:
        # eagerly that at any size (iij,jk->k of 1e3 elements 18.3 -> 12.0 us;
        # the mask's select reads all of x); others from _FOLDED_BYTES.
        if eager and np.shape(x)[axes[0]] > 1 and (
            _nbytes(x) >= _FOLDED_BYTES or axes[-1] - axes[0] == len(axes) - 1):
          x, names = eager_repeats(x, names, name, axes, keep)
          continue
        x = lax.select(_delta_mask(np.shape(x), axes), x, lax.full_like(x, 0))
        if name not in keep:
          x = total(x, axes)
          names = names.replace(name, "")
        else:  # keep one copy: the diagonal
          x = total(x, axes[:-1])
          names = names.replace(name, "", count - 1)
    return x, names

  def eager_repeats(x, names, name, axes, keep):
    # Eagerly the diagonal is sliced or gathered rather than masked (JAX's
    # equations, staged when traced, build an n**k mask and select over all
    # of x: ~1 ms at 1e6 elements for a diagonal of 1e3). Sums over the mask
    # add +0.0 terms, so a -0.0 result becomes +0.0: adding 0 keeps those
    # bits. A diagonal summed away is taken where it lands (no transpose).
    kept = name in keep
    position = axes[-1] - (len(axes) - 1) if kept else axes[0]
    x = diagonal_take(x, axes, (0,) * len(axes), position)
    names = names.replace(name, "", len(axes) - 1)
    if not kept:
      x = total(x, [position])
      names = names.replace(name, "")
    if dtypes.kind(dtypes.dtype(x)) in "fc":
      x = lax.add(x, np.zeros((), dtypes.dtype(x)))
    return x, names

  def drop_singletons(x, names, other_shape, other_names):
    # A size-1 axis whose partner in the other operand is larger broadcasts:
    # squeeze it so the other side's axis becomes a free axis.
    shape = np.shape(x)
    drop = [i for i, n in enumerate(names)
            if shape[i] == 1 and n in other_names and other_shape[other_names.index(n)] != 1]
    if drop:
      x = lax.squeeze(x, tuple(drop))
      names = "".join(n for i, n in enumerate(names) if i not in drop)
    return x, names

  for idx, removed, eq in contractions:
    contracted = sorted(removed)
    inputs, result_names = eq.split("->")
    input_names = inputs.split(",")
    if len(idx) == 1:
      x = operands.pop(idx[0])
      (names,) = input_names
      counts = collections.Counter(names)
      x, names = sum_uniques(x, names, [n for n in contracted if counts[n] == 1])
      x, names = sum_repeats(x, names, counts, result_names)
    elif len(idx) == 2:
      lhs, rhs = map(operands.pop, idx)
      lnames, rnames = input_names
      lhs, lnames = drop_singletons(lhs, lnames, np.shape(rhs), rnames)
      rhs, rnames = drop_singletons(rhs, rnames, np.shape(lhs), lnames)
      lcounts, rcounts = collections.Counter(lnames), collections.Counter(rnames)
      lhs, lnames = sum_uniques(
          lhs, lnames, [n for n in contracted if lcounts[n] == 1 and rcounts[n] == 0])
      rhs, rnames = sum_uniques(
          rhs, rnames, [n for n in contracted if rcounts[n] == 1 and lcounts[n] == 0])
      lhs, lnames = sum_repeats(lhs, lnames, lcounts, result_names + rnames)
      rhs, rnames = sum_repeats(rhs, rnames, rcounts, result_names + lnames)
      both = set(lnames) & set(rnames)
      contracted = [n for n in contracted if n in set(lnames) | set(rnames)]
      batch = [n for n in result_names if n in both]
      lbatch = tuple(lnames.index(n) for n in batch)
      rbatch = tuple(rnames.index(n) for n in batch)
      lcon = tuple(lnames.index(n) for n in contracted)
      rcon = tuple(rnames.index(n) for n in contracted)
      gone = "".join(batch) + "".join(contracted)
      lfree, rfree = _remove(lnames, gone), _remove(rnames, gone)
      # opt_einsum tends to contract right to left, so (rhs, lhs) order often
      # yields the result layout directly and saves a transpose.
      names = "".join(batch) + rfree + lfree
      if names == result_names:
        x = dot_general(rhs, lhs, ((rcon, lcon), (rbatch, lbatch)), precision,
                        preferred_element_type=out_dt)
      else:
        names = "".join(batch) + lfree + rfree
        x = dot_general(lhs, rhs, ((lcon, rcon), (lbatch, rbatch)), precision,
                        preferred_element_type=out_dt)
    else:
      raise NotImplementedError(
          "jax.numpy.einsum does not support simultaneous contraction of 3 or more "
          "operands. Typically this means you've passed an unsupported path to the "
          "einsum optimize parameter.")
    if names != result_names:
      x = lax.transpose(x, tuple(names.index(n) for n in result_names))
    operands.append(x)
  return lax._convert_element_type(operands[0], out_dt, weak)
