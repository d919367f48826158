"""``conv_general_dilated_p``: XLA's ConvGeneralDilated, and the ``lax``
wrappers built on it (``conv``, ``conv_with_general_padding``,
``conv_transpose``).

A convolution slides a window of ``rhs`` (the kernel) over the padded,
dilated spatial dimensions of ``lhs`` and contracts the input features:
``out[n, o, y] = sum_{c, k} lhs_dilated_padded[n, c, y * stride + k * rhs_dilation]
* rhs[o, c, k]``. ``feature_group_count`` splits the features (and kernel
rows) into independent groups; ``batch_group_count`` splits the batch instead
(the shape of a kernel gradient). ``dimension_numbers`` say where the batch,
feature and spatial dimensions sit in each operand and in the result.
"""
from __future__ import annotations

import enum
import math
import operator
from typing import NamedTuple, Sequence

import numpy as np

from openjax._src import dtypes
from openjax._src.core import Primitive, ShapedArray, get_aval
from openjax._src.core.sharding import NamedSharding, PartitionSpec
from openjax._src.core.sharding_rules_ops import conv_rule
from openjax._src.primitives.base.ad_util import Zero, is_undefined_primal
from openjax._src.primitives.base.convert import _convert_element_type
from openjax._src.primitives.base.structural import defjvp, reshape, transpose
from openjax._src.primitives.base.util import check_same_dtypes
from openjax._src.primitives.dot_conv import conv_lowering, conv_rules
from openjax._src.primitives.dot_conv.conv_kernel import conv_eval_kernel
from openjax._src.primitives.dot_conv.dot import (_compute_dtype, _lower_compute_dtype,
                                                  _lower_operand, _precision_attr,
                                                  canonicalize_precision)
from openjax._src.primitives.shape.shape import full, rev

__all__ = ["conv_general_dilated", "conv_general_dilated_p", "conv", "conv_with_general_padding",
           "conv_transpose", "conv_dimension_numbers", "ConvDimensionNumbers",
           "ConvGeneralDilatedDimensionNumbers", "padtype_to_pads",
           "conv_general_permutations", "conv_general_shape_tuple", "conv_shape_tuple",
           "conv_transpose_shape_tuple"]


# ------------------------------------------------------- dimension numbers
class ConvDimensionNumbers(NamedTuple):
  """Where the batch, feature and spatial dimensions of a convolution are.

  ``lhs_spec``: (batch dim, feature dim, spatial dims...) of the input;
  ``rhs_spec``: (output feature dim, input feature dim, spatial dims...) of
  the kernel; ``out_spec``: (batch dim, feature dim, spatial dims...) of the
  result. Spatial dimensions correspond by position.
  """
  lhs_spec: Sequence[int]
  rhs_spec: Sequence[int]
  out_spec: Sequence[int]


#: What ``dimension_numbers`` accepts: layout strings, the namedtuple, or None.
ConvGeneralDilatedDimensionNumbers = tuple[str, str, str] | ConvDimensionNumbers | None


def conv_general_permutations(dimension_numbers):
  """The (lhs, rhs, out) permutations to canonical layout for layout strings
  such as ``('NHWC', 'HWIO', 'NHWC')``; spatial dims follow ``rhs``'s order."""
  lhs_s, rhs_s, out_s = dimension_numbers
  pairs = (("N", "C"), ("O", "I"), ("N", "C"))
  for k, (a, b) in enumerate(pairs):
    spec = dimension_numbers[k]
    if not spec.count(a) == spec.count(b) == 1:
      raise TypeError(f"convolution dimension_numbers[{k}] must contain the characters "
                      f"'{a}' and '{b}' exactly once, got {spec}.")
    if len(spec) != len(set(spec)):
      raise TypeError(f"convolution dimension_numbers[{k}] cannot have duplicate "
                      f"characters, got {spec}.")
  if not (set(lhs_s) - set("NC") == set(rhs_s) - set("OI") == set(out_s) - set("NC")):
    raise TypeError("convolution dimension_numbers elements must each have the same set "
                    f"of spatial characters, got {dimension_numbers}.")

  def perm(spec, pair):
    spatial = sorted((i for i, ch in enumerate(spec) if ch not in pair),
                     key=lambda i: rhs_s.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)
  return tuple(perm(s, p) for s, p in zip(dimension_numbers, pairs))


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
  """``dimension_numbers`` (None, three layout strings, or a
  ``ConvDimensionNumbers``) as a ``ConvDimensionNumbers`` of int tuples.
  None means ``('NCHW', 'OIHW', 'NCHW')`` and its n-d analogues."""
  if isinstance(dimension_numbers, ConvDimensionNumbers):
    return ConvDimensionNumbers(*(tuple(int(d) for d in s) for s in dimension_numbers))
  if len(lhs_shape) != len(rhs_shape):
    raise TypeError("convolution requires lhs and rhs ndim to be equal, got "
                    f"{len(lhs_shape)} and {len(rhs_shape)}.")
  if dimension_numbers is None:
    iota = tuple(range(len(lhs_shape)))
    return ConvDimensionNumbers(iota, iota, iota)
  if not isinstance(dimension_numbers, (list, tuple)):
    raise TypeError("convolution dimension_numbers must be tuple/list or None, got "
                    f"{type(dimension_numbers)}.")
  if len(dimension_numbers) != 3:
    raise TypeError("convolution dimension_numbers list/tuple must be length 3, got "
                    f"{len(dimension_numbers)}.")
  if not all(isinstance(s, str) for s in dimension_numbers):
    raise TypeError("convolution dimension_numbers elements must be strings, got "
                    f"{tuple(map(type, dimension_numbers))}.")
  for k, s in enumerate(dimension_numbers):
    if len(s) != len(lhs_shape):
      raise TypeError(f"convolution dimension_numbers[{k}] must have len equal to the ndim "
                      f"of lhs and rhs, got {len(s)} for lhs and rhs shapes "
                      f"{tuple(lhs_shape)} and {tuple(rhs_shape)}.")
  return ConvDimensionNumbers(*conv_general_permutations(tuple(dimension_numbers)))


# ------------------------------------------------------------------ padding
class PaddingType(enum.Enum):
  """The padding strings of convolutions and windowed reductions."""
  VALID = 1
  SAME = 2
  SAME_LOWER = 3


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list[tuple[int, int]]:
  """Explicit ``(low, high)`` pads for a padding string: ``'VALID'`` pads
  nothing; ``'SAME'`` pads so the output has ``ceil(in / stride)`` elements,
  the odd element going high; ``'SAME_LOWER'`` puts it low."""
  if isinstance(padding, str):
    try:
      padding = PaddingType[padding.upper()]
    except KeyError:
      raise RuntimeError("Unrecognized padding type: expected 'VALID', 'SAME', or "
                         f"'SAME_LOWER', got {padding}.") from None
  if padding == PaddingType.VALID:
    return [(0, 0)] * len(in_shape)
  if padding in (PaddingType.SAME, PaddingType.SAME_LOWER):
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
      n, w, s = int(n), int(w), int(s)
      total = max(0, (-(-n // s) - 1) * s + w - n)
      small, big = total // 2, total - total // 2
      pads.append((small, big) if padding == PaddingType.SAME else (big, small))
    return pads
  raise TypeError(f"Unknown padding type: {padding}.")


# ----------------------------------------------------------- shape helpers
def _check_dilation(dilation) -> None:
  if not all(d > 0 for d in dilation):
    raise TypeError(f"All dilations must be positive, got {tuple(dilation)}.")


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count=1):
  """The result shape of a convolution of canonical-layout shapes."""
  if isinstance(pads, str):
    pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
  if len(pads) != len(lhs_shape) - 2:
    raise TypeError("Wrong number of explicit pads for convolution: expected "
                    f"{len(lhs_shape) - 2}, got {len(pads)}.")
  padded = [int(n) + lo + hi for n, (lo, hi) in zip(lhs_shape[2:], pads)]
  if any(p < 0 for p in padded):
    raise ValueError("Negative padding is larger than the size of the corresponding "
                     f"dimension: got padding={tuple(map(tuple, pads))} for "
                     f"lhs_shape[2:]={tuple(int(n) for n in lhs_shape[2:])}")
  spatial = tuple(max(0, (p - int(k)) // int(s) + 1)
                  for p, k, s in zip(padded, rhs_shape[2:], strides))
  return (int(lhs_shape[0]) // batch_group_count, int(rhs_shape[0])) + spatial


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                             dimension_numbers):
  """The result shape for layout strings ``dimension_numbers``."""
  lp, rp, op = conv_general_permutations(dimension_numbers)
  out = conv_shape_tuple(np.take(lhs_shape, lp), np.take(rhs_shape, rp), window_strides,
                         padding)
  return tuple(out[i] for i in np.argsort(op))


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding,
                               dimension_numbers):
  """The result shape of ``conv_transpose`` for layout strings."""
  lp, rp, op = conv_general_permutations(dimension_numbers)
  lhs_c, rhs_c = np.take(lhs_shape, lp), np.take(rhs_shape, rp)
  if isinstance(padding, str):
    padding = [_conv_transpose_padding(int(k), int(s), padding)
               for k, s in zip(rhs_c[2:], window_strides)]
  spatial = tuple((int(i) - 1) * s - int(k) + 2 + lo + hi
                  for i, k, s, (lo, hi) in zip(lhs_c[2:], rhs_c[2:], window_strides, padding))
  out = (int(lhs_c[0]), int(rhs_c[0])) + spatial
  return tuple(out[i] for i in np.argsort(op))


def _int_tuple(fun: str, name: str, xs, n: int | None = None) -> tuple[int, ...]:
  try:
    out = tuple(operator.index(x) for x in xs)
  except TypeError:
    raise TypeError(f"{fun}: {name} must be a sequence of integers, got {xs!r}") from None
  if n is not None and len(out) != n:
    raise ValueError(f"{fun}: {name} must have one entry per spatial dimension ({n}), got "
                     f"{out}.")
  return out


# ----------------------------------------------------- conv_general_dilated
conv_general_dilated_p = Primitive("conv_general_dilated", kind="differentiable")


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count=1,
                         batch_group_count=1, precision=None, preferred_element_type=None,
                         out_sharding=None):
  """General n-dimensional convolution with dilation (XLA's ConvGeneralDilated).

  Args:
    lhs: the input, rank ``n + 2``.
    rhs: the kernel, rank ``n + 2``.
    window_strides: ``n`` strides between windows.
    padding: ``'SAME'``, ``'SAME_LOWER'``, ``'VALID'``, or ``n`` ``(low, high)``
      pairs (negative values crop).
    lhs_dilation: ``n`` input dilations (holes between input elements: a
      transposed convolution); None means 1.
    rhs_dilation: ``n`` kernel dilations (atrous convolution); None means 1.
    dimension_numbers: None (``('NCHW', 'OIHW', 'NCHW')`` and its n-d
      analogues), three layout strings such as ``('NHWC', 'HWIO', 'NHWC')``, or
      a ``ConvDimensionNumbers``. In strings, ``N``/``C`` mark batch and
      feature, ``O``/``I`` the kernel's output/input features, other letters
      spatial dimensions, matched across the three (strides follow ``rhs``'s
      spatial order).
    feature_group_count: split the features into this many independent groups.
    batch_group_count: split the batch into this many groups, each paired
      with a group of output features.
    precision: None, a ``lax.Precision``, a string, or a pair of them.
    preferred_element_type: the accumulation and result dtype.
    out_sharding: only None is supported.

  Returns:
    The convolution, laid out as ``dimension_numbers``' output spec says.
  """
  lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
  dnums = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
  if out_sharding is not None:
    raise NotImplementedError("conv_general_dilated: out_sharding is not supported yet; pass "
                              "out_sharding=None.")
  nsp = len(lhs_shape) - 2
  window_strides = _int_tuple("conv_general_dilated", "window_strides", window_strides)
  if lhs_dilation is None:
    lhs_dilation = (1,) * nsp
  else:
    lhs_dilation = _int_tuple("conv_general_dilated", "lhs_dilation", lhs_dilation, nsp)
    if isinstance(padding, str) and any(d != 1 for d in lhs_dilation):
      raise ValueError("String padding is not implemented for transposed convolution using "
                       "this op. Please either exactly specify the required padding or use "
                       "conv_transpose.")
  if rhs_dilation is None:
    rhs_dilation = (1,) * nsp
  else:
    rhs_dilation = _int_tuple("conv_general_dilated", "rhs_dilation", rhs_dilation, nsp)
  if isinstance(padding, str):
    _check_dilation(rhs_dilation)
    window = [conv_rules.dilated_size(rhs_shape[d], r)
              for d, r in zip(dnums.rhs_spec[2:], rhs_dilation)]
    padding = padtype_to_pads([lhs_shape[d] for d in dnums.lhs_spec[2:]], window,
                              window_strides, padding)
  try:
    padding = tuple((operator.index(lo), operator.index(hi)) for lo, hi in padding)
  except (TypeError, ValueError):
    raise ValueError("padding argument to conv_general_dilated should be a string or a "
                     f"sequence of (low, high) pairs, got {padding}") from None
  if preferred_element_type is not None:
    preferred_element_type = dtypes.explicit_dtype(preferred_element_type,
                                                   "conv_general_dilated")
  return conv_general_dilated_p.bind1(
      lhs, rhs, window_strides=window_strides, padding=padding,
      lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation, dimension_numbers=dnums,
      feature_group_count=operator.index(feature_group_count),
      batch_group_count=operator.index(batch_group_count),
      precision=canonicalize_precision(precision),
      preferred_element_type=preferred_element_type, out_sharding=None)


def conv(lhs, rhs, window_strides, padding, precision=None, preferred_element_type=None):
  """Convolution of an NCHW-style ``lhs`` with an OIHW-style kernel ``rhs``;
  ``padding`` is ``'SAME'`` or ``'VALID'``."""
  return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                              preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                              precision=None, preferred_element_type=None):
  """``conv`` with explicit ``(low, high)`` padding and input/kernel dilation."""
  return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation=lhs_dilation,
                              rhs_dilation=rhs_dilation, precision=precision,
                              preferred_element_type=preferred_element_type)


def _conv_transpose_padding(k: int, s: int, padding) -> tuple[int, int]:
  """(before, after) padding of the stride-dilated input for a transposed
  convolution with (dilated) kernel size ``k`` and stride ``s``, so that
  it inverts the shape map of a forward convolution with ``padding``."""
  if padding == "SAME":
    total = k + s - 2
    before = k - 1 if s > k - 1 else -(-total // 2)
  elif padding == "VALID":
    total = k + s - 2 + max(k - s, 0)
    before = k - 1
  elif isinstance(padding, tuple):
    before, after = (k - p - 1 for p in padding)
    return before, after
  else:
    raise ValueError(f"Invalid padding mode: {padding}")
  return before, total - before


def conv_transpose(lhs, rhs, strides, padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel=False, precision=None, preferred_element_type=None,
                   use_consistent_padding=False):
  """The n-d transposed ("fractionally strided") convolution: the input is
  dilated by ``strides`` and convolved with stride 1.

  Args:
    lhs, rhs: input and kernel, rank ``n + 2``.
    strides: ``n`` fractional strides (input dilations).
    padding: ``'SAME'`` or ``'VALID'`` (the padding of the forward
      convolution this one transposes), or ``n`` ``(low, high)`` pairs: the
      padding of this convolution, or with ``use_consistent_padding=True`` the
      forward convolution's padding, as in PyTorch.
    rhs_dilation: ``n`` kernel dilations; None means 1.
    dimension_numbers: as in ``conv_general_dilated``; defaults to
      TensorFlow's layout (``('NHWC', 'HWIO', 'NHWC')`` for 2-D).
    transpose_kernel: flip the kernel's spatial axes and swap its input and
      output feature axes, so the result is the gradient of ``conv`` as in
      Keras' ``Conv2DTranspose``.
    precision, preferred_element_type: as in ``conv_general_dilated``.
    use_consistent_padding: read explicit ``padding`` pairs as the forward
      convolution's padding too.
  """
  lhs_shape, rhs_shape = np.shape(lhs), np.shape(rhs)
  ndim = len(lhs_shape)
  if ndim != len(rhs_shape) or ndim < 2:
    raise ValueError("conv_transpose: lhs and rhs must have the same rank, at least 2; got "
                     f"shapes {tuple(lhs_shape)} and {tuple(rhs_shape)}.")
  if dimension_numbers is None:
    if ndim not in _TRANSPOSE_DEFAULT_DIMS:
      raise ValueError("No 4+ dimensional dimension_number defaults.")
    dimension_numbers = _TRANSPOSE_DEFAULT_DIMS[ndim]
  dn = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
  strides = _int_tuple("conv_transpose", "strides", strides)
  kernel_spatial = [rhs_shape[d] for d in dn.rhs_spec[2:]]
  if rhs_dilation is None:
    rhs_dilation = (1,) * (ndim - 2)
  if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
    per_dim = [padding] * len(strides) if isinstance(padding, str) else \
        [tuple(p) for p in padding]
    pads = tuple(_conv_transpose_padding(conv_rules.dilated_size(k, r), s, p)
                 for k, r, s, p in zip(kernel_spatial, rhs_dilation, strides, per_dim))
  else:
    pads = padding
  if transpose_kernel:
    rhs = rev(rhs, tuple(dn.rhs_spec[2:]))
    perm = list(range(ndim))
    perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = perm[dn.rhs_spec[1]], perm[dn.rhs_spec[0]]
    rhs = transpose(rhs, tuple(perm))
  return conv_general_dilated(lhs, rhs, (1,) * (ndim - 2), pads, strides, rhs_dilation, dn,
                              precision=precision,
                              preferred_element_type=preferred_element_type)


def _canonical_order(shape, spec) -> tuple[int, ...]:
  return tuple(shape[d] for d in spec)


def _conv_result_dtype(lhs_dt, rhs_dt, preferred_element_type) -> np.dtype:
  check_same_dtypes("conv_general_dilated", [ShapedArray((), lhs_dt), ShapedArray((), rhs_dt)])
  if preferred_element_type is None:
    return lhs_dt
  pet = np.dtype(preferred_element_type)
  kind, pkind = dtypes.kind(lhs_dt), dtypes.kind(pet)
  if not (kind in "iu" and pkind == "f"):
    for group in ("iu", "f", "c"):
      if kind in group and pkind not in group:
        raise TypeError("Input type is incompatible with `preferred_element_type`. The "
                        "compatible combinations of (input_type, preferred_element_type) "
                        "are (integral, integral), (integral, floating), "
                        "(floating, floating), (complex, complex.")
    if kind == "i" and pkind != "i":
      raise TypeError("`preferred_element_type` must have the same signedness as the "
                      "original type.")
  if pet.itemsize < np.dtype(lhs_dt).itemsize:
    raise TypeError("`preferred_element_type` must not be narrower than the original type.")
  return pet


@conv_general_dilated_p.def_impl
def _conv_general_dilated_impl(lhs, rhs, *, window_strides, padding, lhs_dilation,
                               rhs_dilation, dimension_numbers, feature_group_count,
                               batch_group_count, precision, preferred_element_type,
                               out_sharding=None):
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  out_dt = _conv_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
  out = conv_rules.conv_numpy(
      np.transpose(lhs, lhs_spec), np.transpose(rhs, rhs_spec),
      window_strides=window_strides, padding=padding, lhs_dilation=lhs_dilation,
      rhs_dilation=rhs_dilation, feature_group_count=feature_group_count,
      batch_group_count=batch_group_count,
      comp=_compute_dtype(lhs.dtype, rhs.dtype, out_dt), out_dtype=out_dt)
  return [np.transpose(out, np.argsort(out_spec))]


conv_general_dilated_p.def_eval_kernel(conv_eval_kernel)


@conv_general_dilated_p.def_abstract_eval
def _conv_general_dilated_abstract_eval(lhs, rhs, *, window_strides, padding, lhs_dilation,
                                        rhs_dilation, dimension_numbers, feature_group_count,
                                        batch_group_count, precision, preferred_element_type,
                                        out_sharding=None):
  if lhs.ndim != rhs.ndim:
    raise ValueError("conv_general_dilated lhs and rhs must have the same number of "
                     f"dimensions, but got {lhs.shape} and {rhs.shape}.")
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  for name, spec in zip(("lhs_spec", "rhs_spec", "out_spec"), dimension_numbers):
    if sorted(spec) != list(range(lhs.ndim)):
      raise TypeError(f"conv_general_dilated: dimension_numbers.{name} must be a permutation "
                      f"of range({lhs.ndim}), got {tuple(spec)}.")
  fgc, bgc = feature_group_count, batch_group_count
  if not fgc > 0:
    raise ValueError("conv_general_dilated feature_group_count must be a positive integer, "
                     f"got {fgc}.")
  lhs_feat = lhs.shape[lhs_spec[1]]
  if lhs_feat % fgc:
    raise ValueError("conv_general_dilated feature_group_count must divide lhs feature "
                     f"dimension size, but {fgc} does not divide {lhs_feat}.")
  if lhs_feat // fgc != rhs.shape[rhs_spec[1]]:
    raise ValueError("conv_general_dilated lhs feature dimension size divided by "
                     "feature_group_count must equal the rhs input feature dimension size, "
                     f"but {lhs_feat} // {fgc} != {rhs.shape[rhs_spec[1]]}.")
  rhs_out = rhs.shape[rhs_spec[0]]
  if rhs_out % fgc:
    raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                     f"multiple of feature_group_count, but {rhs_out} is not a multiple of "
                     f"{fgc}.")
  if not bgc > 0:
    raise ValueError("conv_general_dilated batch_group_count must be a positive integer, "
                     f"got {bgc}.")
  lhs_batch = lhs.shape[lhs_spec[0]]
  if bgc > 1 and lhs_batch % bgc:
    raise ValueError("conv_general_dilated batch_group_count must divide lhs batch "
                     f"dimension size, but {bgc} does not divide {lhs_batch}.")
  if rhs_out % bgc:
    raise ValueError("conv_general_dilated rhs output feature dimension size must be a "
                     f"multiple of batch_group_count, but {rhs_out} is not a multiple of "
                     f"{bgc}.")
  if bgc > 1 and fgc > 1:
    raise ValueError("At most one of batch_group_count and feature_group_count may be > 1, "
                     f"got batch_group_count={bgc} and feature_group_count={fgc}")
  nsp = lhs.ndim - 2
  if nsp != len(window_strides):
    raise ValueError("conv_general_dilated window and window_strides must have the same "
                     f"number of dimensions, but got {nsp} and {len(window_strides)}")
  if not all(s > 0 for s in window_strides):
    raise ValueError("conv_general_dilated window_strides must be positive, got "
                     f"{tuple(window_strides)}.")
  for name, dil in (("lhs_dilation", lhs_dilation), ("rhs_dilation", rhs_dilation)):
    if len(dil) != nsp:
      raise ValueError(f"conv_general_dilated {name} must have one entry per spatial "
                       f"dimension ({nsp}), got {tuple(dil)}.")
    _check_dilation(dil)
  lhs_c = _canonical_order(lhs.shape, lhs_spec)
  rhs_c = _canonical_order(rhs.shape, rhs_spec)
  if 0 in rhs_c[2:]:
    raise ValueError("conv_general_dilated: every spatial dimension of the window (rhs) "
                     f"must be positive, got rhs {rhs.str_short()} with spatial sizes "
                     f"{rhs_c[2:]}.")
  lhs_d = lhs_c[:2] + tuple(conv_rules.dilated_size(n, d)
                            for n, d in zip(lhs_c[2:], lhs_dilation))
  rhs_d = rhs_c[:2] + tuple(conv_rules.dilated_size(n, d)
                            for n, d in zip(rhs_c[2:], rhs_dilation))
  out_c = conv_shape_tuple(lhs_d, rhs_d, window_strides, padding, bgc)
  shape = tuple(out_c[i] for i in np.argsort(out_spec))
  dt = _conv_result_dtype(lhs.dtype, rhs.dtype, preferred_element_type)
  return [ShapedArray(shape, dt, lhs.weak_type and rhs.weak_type)]


conv_general_dilated_p.def_sharding_rule(conv_rule)


# JVP: bilinear, so each operand's tangent convolves with the other operand.
defjvp(conv_general_dilated_p,
       lambda g, lhs, rhs, **params: conv_general_dilated_p.bind1(g, rhs, **params),
       lambda g, lhs, rhs, **params: conv_general_dilated_p.bind1(lhs, g, **params))


# ------------------------------------------------------- axis regrouping
def _split_axis(x, axis: int, major: int):
  """Split ``axis`` of ``x`` into (major, size // major)."""
  shape = get_aval(x).shape
  return reshape(x, shape[:axis] + (major, shape[axis] // major) + shape[axis + 1:])


def _merge_axes(x, axis: int):
  """Merge ``axis`` and ``axis + 1`` of ``x``, ``axis`` the major part."""
  shape = get_aval(x).shape
  return reshape(x, shape[:axis] + (shape[axis] * shape[axis + 1],) + shape[axis + 2:])


def _move_and_merge(x, src: int, dst: int):
  """Move axis ``src`` of ``x`` to position ``dst`` (of the axes without it)
  and merge it into the axis that follows it there, as the major part: one
  ``reshape`` with ``dimensions``."""
  shape = get_aval(x).shape
  perm = [i for i in range(len(shape)) if i != src]
  perm.insert(dst, src)
  moved = [shape[i] for i in perm]
  merged = tuple(moved[:dst]) + (moved[dst] * moved[dst + 1],) + tuple(moved[dst + 2:])
  return reshape(x, merged, tuple(perm))


def _fold_axis(x, src: int, dst: int):
  """Merge axis ``src`` into axis ``dst`` (both numbered in ``x``) as its major
  part; the merged axis takes ``dst``'s place once ``src`` is gone."""
  return _move_and_merge(x, src, dst - (src < dst))


def _fold_batch(x, bdim: int, axis: int, groups: int = 1):
  """Fold the vmapped axis ``bdim`` into ``axis`` (numbered without ``bdim``).
  The merged axis is laid out (groups, vmapped, size // groups), so each of
  ``groups`` contiguous groups of ``axis`` stays contiguous."""
  if groups == 1:
    return _move_and_merge(x, bdim, axis)
  target = axis + (bdim <= axis)
  x = _split_axis(x, target, groups)
  # Without the vmapped axis, the groups sit at ``axis`` and the rest after them.
  x = _move_and_merge(x, bdim + (bdim > target), axis + 1)
  return _merge_axes(x, axis)


def _unfold_batch(x, axis: int, size: int, groups: int = 1):
  """Undo ``_fold_batch`` on a result: ``axis`` holds (groups, size, rest);
  returns the vmapped axis at ``axis`` and (groups * rest) after it."""
  if groups == 1:
    return _split_axis(x, axis, size)
  x = _split_axis(_split_axis(x, axis, groups), axis + 1, size)
  # (groups, size, rest) -> size first, then (groups * rest).
  shape = get_aval(x).shape
  perm = list(range(len(shape)))
  perm[axis], perm[axis + 1] = axis + 1, axis
  merged = shape[:axis] + (size, groups * shape[axis + 2]) + shape[axis + 3:]
  return reshape(x, merged, tuple(perm))


def _to_dtype(x, dtype):
  return x if get_aval(x).dtype == dtype else _convert_element_type(x, dtype, False)


def _swap_roles(spec) -> tuple[int, ...]:
  """A spec with its first two roles exchanged (batch <-> feature, out <-> in)."""
  return (spec[1], spec[0]) + tuple(spec[2:])


# ---------------------------------------------------------------- transpose
def _transpose_lhs(ct, rhs, lhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding=None):
  # d lhs[n, c, i] = sum_{o, k} ct_dil[n, o, i*ld + lo - k*rd] rhs[o, c, k], ct_dil the
  # cotangent with stride-1 holes: a convolution of ct_dil with the flipped
  # kernel (its roles swapped: o in, c out) at window stride ld.
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  groups = max(feature_group_count, batch_group_count)
  kernel = rhs
  if groups > 1:
    # Group g's kernel rows (g, o') produce its input features (g, c'): move
    # the group from the output-feature axis into the input-feature axis.
    kernel = _split_axis(kernel, rhs_spec[0], groups)
    kernel = _fold_axis(kernel, rhs_spec[0], rhs_spec[1] + (rhs_spec[1] > rhs_spec[0]))
  lhs_c = _canonical_order(lhs_aval.shape, lhs_spec)
  rhs_c = _canonical_order(get_aval(rhs).shape, rhs_spec)
  ct_c = _canonical_order(get_aval(ct).shape, out_spec)
  pads = []
  for n, k, y, s, (lo, _), ld, rd in zip(lhs_c[2:], rhs_c[2:], ct_c[2:], window_strides,
                                         padding, lhs_dilation, rhs_dilation):
    k_ext = conv_rules.dilated_size(k, rd)
    before = k_ext - 1 - lo
    after = (conv_rules.dilated_size(n, ld) + k_ext - 1 - conv_rules.dilated_size(y, s)
             - before)
    pads.append((before, after))
  kernel = rev(kernel, tuple(rhs_spec[2:]))
  kernel = _to_dtype(kernel, get_aval(ct).dtype)
  out = conv_general_dilated_p.bind1(
      ct, kernel, window_strides=tuple(lhs_dilation), padding=tuple(pads),
      lhs_dilation=tuple(window_strides), rhs_dilation=tuple(rhs_dilation),
      dimension_numbers=ConvDimensionNumbers(out_spec, _swap_roles(rhs_spec), lhs_spec),
      feature_group_count=groups, batch_group_count=1, precision=precision,
      preferred_element_type=preferred_element_type,
      out_sharding=lhs_aval.sharding)   # None: the rule lays it out as ct
  out = _to_dtype(out, lhs_aval.dtype)
  if batch_group_count > 1:
    # The result's features are (group, c); the groups index the lhs batch.
    out = _split_axis(out, lhs_spec[1], batch_group_count)
    out = _fold_axis(out, lhs_spec[1], lhs_spec[0] + (lhs_spec[0] > lhs_spec[1]))
  return out


def _transpose_rhs(ct, lhs, rhs_aval, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   preferred_element_type, out_sharding=None):
  # d rhs[o, c, k] = sum_{n, y} ct[n, o, y] lhs_dil_pad[n, c, k*rd + y*s]: a
  # convolution over the batch (the contracted "feature"), lhs features as its
  # batch, the cotangent as kernel with window dilation s, window stride rd.
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  lhs_c = _canonical_order(get_aval(lhs).shape, lhs_spec)
  rhs_c = _canonical_order(rhs_aval.shape, rhs_spec)
  ct_c = _canonical_order(get_aval(ct).shape, out_spec)
  pads = []
  for n, k, y, s, (lo, _), ld, rd in zip(lhs_c[2:], rhs_c[2:], ct_c[2:], window_strides,
                                         padding, lhs_dilation, rhs_dilation):
    after = (conv_rules.dilated_size(k, rd) - 1 + conv_rules.dilated_size(y, s)
             - conv_rules.dilated_size(n, ld) - lo)
    pads.append((lo, after))
  # Feature groups pair lhs-feature groups with kernel-row groups: in the new
  # convolution the lhs features are the batch, so they become batch groups;
  # batch groups likewise become feature groups.
  lhs = _to_dtype(lhs, get_aval(ct).dtype)
  out = conv_general_dilated_p.bind1(
      lhs, ct, window_strides=tuple(rhs_dilation), padding=tuple(pads),
      lhs_dilation=tuple(lhs_dilation), rhs_dilation=tuple(window_strides),
      dimension_numbers=ConvDimensionNumbers(_swap_roles(lhs_spec), _swap_roles(out_spec),
                                             _swap_roles(rhs_spec)),
      feature_group_count=batch_group_count, batch_group_count=feature_group_count,
      precision=precision, preferred_element_type=preferred_element_type,
      out_sharding=_cotangent_sharding(rhs_aval, ct, lhs))
  return _to_dtype(out, rhs_aval.dtype)


def _cotangent_sharding(primal_aval, *operands):
  """The layout of the kernel's cotangent over Explicit axes: the primal's
  (whole when it has none); None when no operand is split. As JAX's
  transpose asks for it: a data-parallel kernel gradient sums over the
  split batch."""
  if primal_aval.sharding is not None:
    return primal_aval.sharding
  for x in operands:
    s = get_aval(x).sharding
    if s is not None:
      return NamedSharding(s.mesh, PartitionSpec())
  return None


@conv_general_dilated_p.def_transpose
def _conv_general_dilated_transpose(cts, lhs, rhs, **params):
  ct, = cts
  lhs_lin, rhs_lin = is_undefined_primal(lhs), is_undefined_primal(rhs)
  if lhs_lin and rhs_lin:
    raise ValueError("conv_general_dilated transpose: both operands are linear (the "
                     "convolution is bilinear, not linear)")
  if type(ct) is Zero or 0 in get_aval(ct).shape:
    return [Zero(lhs.aval) if lhs_lin else None, Zero(rhs.aval) if rhs_lin else None]
  if lhs_lin:
    return [_transpose_lhs(ct, rhs, lhs.aval, **params), None]
  return [None, _transpose_rhs(ct, lhs, rhs.aval, **params)]


# ----------------------------------------------------------------- batching
@conv_general_dilated_p.def_batch
def _conv_general_dilated_batch(vals, dims, **params):
  lhs, rhs = vals
  lbd, rbd = dims
  lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
  fgc, bgc = params["feature_group_count"], params["batch_group_count"]
  size = get_aval(lhs).shape[lbd] if lbd is not None else get_aval(rhs).shape[rbd]
  if size == 0:
    # Groups cannot be multiplied by zero: the result is empty anyway.
    unbatched = [ShapedArray(tuple(s for j, s in enumerate(get_aval(v).shape) if j != d),
                             get_aval(v).dtype, get_aval(v).weak_type)
                 if d is not None else get_aval(v) for v, d in zip(vals, dims)]
    aval, = _conv_general_dilated_abstract_eval(*unbatched, **params)
    return [full((0,) + aval.shape, 0, aval.dtype)], [0]
  new = dict(params)
  if lbd is not None and rbd is not None:
    # One convolution with size-times more groups: the vmapped index is the
    # major part of the group index on both sides.
    if bgc > 1:
      lhs = _fold_batch(lhs, lbd, lhs_spec[0])
      new["batch_group_count"] = bgc * size
    else:
      lhs = _fold_batch(lhs, lbd, lhs_spec[1])
      new["feature_group_count"] = fgc * size
    rhs = _fold_batch(rhs, rbd, rhs_spec[0])
    out = conv_general_dilated_p.bind1(lhs, rhs, **new)
    return [_unfold_batch(out, out_spec[1], size)], [out_spec[1]]
  if lbd is not None:
    # Extra batch elements: fold them into the batch, inside each batch group.
    lhs = _fold_batch(lhs, lbd, lhs_spec[0], groups=bgc)
    out = conv_general_dilated_p.bind1(lhs, rhs, **new)
    return [_unfold_batch(out, out_spec[0], size)], [out_spec[0]]
  # Extra kernels: fold them into the output features, inside each group.
  groups = max(fgc, bgc)
  rhs = _fold_batch(rhs, rbd, rhs_spec[0], groups=groups)
  out = conv_general_dilated_p.bind1(lhs, rhs, **new)
  return [_unfold_batch(out, out_spec[1], size, groups=groups)], [out_spec[1]]


# ----------------------------------------------------------------- lowering
@conv_general_dilated_p.def_lower
def _conv_general_dilated_lower(ctx, lhs, rhs, *, window_strides, padding, lhs_dilation,
                                rhs_dilation, dimension_numbers, feature_group_count,
                                batch_group_count, precision, preferred_element_type,
                                out_sharding=None):
  lhs_aval, rhs_aval = ctx.avals_in
  out_aval, = ctx.avals_out
  lhs_spec, rhs_spec, out_spec = dimension_numbers
  if (math.prod(out_aval.shape) == 0 or rhs_aval.shape[rhs_spec[1]] == 0
      or 0 in _canonical_order(rhs_aval.shape, rhs_spec)[2:]):
    # An empty contraction sums nothing (IREE cannot compile zero extents).
    return [ctx.full(False if out_aval.dtype == dtypes.bool_ else 0, out_aval.shape,
                     out_aval.dtype)]
  comp = _lower_compute_dtype(lhs_aval.dtype, rhs_aval.dtype, out_aval.dtype)
  lhs, rhs = (_lower_operand(ctx, x, a, comp) for x, a in ((lhs, lhs_aval), (rhs, rhs_aval)))
  if dtypes.kind(comp) != "c" and conv_lowering.use_positions(
      lhs_aval.shape, rhs_aval.shape, out_aval.shape, dimension_numbers,
      lhs_dilation=lhs_dilation, feature_group_count=feature_group_count,
      batch_group_count=batch_group_count):
    out = conv_lowering.emit_by_positions(
        ctx, lhs, rhs, lhs_aval.shape, rhs_aval.shape, out_aval.shape, comp,
        window_strides=window_strides, padding=padding, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers)
    return [_finish_conv_output(ctx, out, out_aval, comp)]
  pointwise = conv_rules.is_pointwise(
      rhs_aval.shape, dimension_numbers, window_strides=window_strides, padding=padding,
      lhs_dilation=lhs_dilation, rhs_dilation=rhs_dilation,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count)
  rhs, dimension_numbers = conv_rules.kernel_spatial_major(ctx, rhs, rhs_aval.shape,
                                                           dimension_numbers, comp)
  kernel_shape = tuple(rhs_aval.shape[d] for d in (*rhs_spec[2:], rhs_spec[1], rhs_spec[0]))
  if dtypes.kind(comp) != "c" and not pointwise and conv_lowering.use_taps(
      lhs_aval.shape, rhs_aval.shape, (lhs_spec, rhs_spec, out_spec), padding=padding,
      lhs_dilation=lhs_dilation,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count):
    out = conv_lowering.emit_by_taps(
        ctx, lhs, rhs, lhs_aval.shape, kernel_shape, out_aval.shape, comp,
        window_strides=window_strides, padding=padding, rhs_dilation=rhs_dilation,
        dimension_numbers=dimension_numbers)
    return [_finish_conv_output(ctx, out, out_aval, comp)]
  back, conv_shape = None, out_aval.shape
  if pointwise:
    lhs, dimension_numbers, back = conv_rules.channels_last(ctx, lhs, lhs_aval.shape,
                                                            dimension_numbers, comp)
    if back is not None:
      conv_shape = tuple(out_aval.shape[d] for d in np.argsort(back))
  attrs = {
      "batch_group_count": batch_group_count,
      "dimension_numbers": conv_rules.conv_dimension_numbers_attr(dimension_numbers),
      "feature_group_count": feature_group_count,
      "lhs_dilation": tuple(lhs_dilation),
      "padding": conv_rules.padding_attr(padding),
      "precision_config": _precision_attr(precision),
      "rhs_dilation": tuple(rhs_dilation),
      "window_strides": tuple(window_strides),
  }
  if not pointwise and conv_lowering.use_depth_slices(
      lhs_aval.shape, rhs_aval.shape, (lhs_spec, rhs_spec, out_spec), padding=padding,
      lhs_dilation=lhs_dilation,
      feature_group_count=feature_group_count, batch_group_count=batch_group_count):
    out = conv_lowering.emit_by_depth_slices(
        ctx, lhs, rhs, lhs_aval.shape, kernel_shape, out_aval.shape, comp,
        dict(attrs, padding_pairs=padding), dimension_numbers=dimension_numbers)
    return [_finish_conv_output(ctx, out, out_aval, comp)]
  if conv_lowering.use_group_split(rhs_aval.shape, (lhs_spec, rhs_spec, out_spec),
                                   feature_group_count):
    out = conv_lowering.emit_by_groups(
        ctx, lhs, rhs, lhs_aval.shape, kernel_shape, out_aval.shape, comp, attrs,
        dimension_numbers=dimension_numbers, groups=feature_group_count)
    return [_finish_conv_output(ctx, out, out_aval, comp)]
  out = conv_rules.emit_convolution(ctx, lhs, rhs, conv_shape, comp, attrs)
  out = conv_rules.restore_layout(ctx, out, out_aval.shape, back, comp)
  return [_finish_conv_output(ctx, out, out_aval, comp)]


def _finish_conv_output(ctx, out, out_aval, comp):
  if out_aval.dtype == dtypes.bool_:
    zero = ctx.full(0, out_aval.shape, comp)
    return ctx.op("stablehlo.compare", [out, zero], out_aval,
                  attrs={"comparison_direction": "#stablehlo<comparison_direction NE>"})
  return ctx.convert(out, out_aval)


@conv_general_dilated_p.def_cost
def _conv_general_dilated_cost(lhs, rhs, *, avals_out, dimension_numbers, **_):
  # One multiply and one add per output element, kernel tap and input
  # feature of its group: 2 * |out| * |rhs| / (rhs output features).
  rhs_out = rhs.shape[dimension_numbers.rhs_spec[0]]
  per_out = math.prod(rhs.shape) // rhs_out if rhs_out else 0
  return {"flops": 2.0 * math.prod(avals_out[0].shape) * per_out}




_TRANSPOSE_DEFAULT_DIMS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"),
                           4: ("NHWC", "HWIO", "NHWC"), 5: ("NHWDC", "HWDIO", "NHWDC")}
