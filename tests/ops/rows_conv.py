"""Op-table rows for convolutions: ``lax.conv_general_dilated`` and its
wrappers, ``jnp.convolve``/``jnp.correlate`` and ``jax.scipy.signal``.

``conv_reference`` is a direct loop over output positions and kernel taps,
written from the definition of XLA's ConvGeneralDilated; tests/test_conv.py
uses it too."""
import itertools

import ml_dtypes
import numpy as np
import scipy.signal

import openjax.numpy as jnp
import openjax.scipy.signal as jsp_signal
from openjax import lax
from tests.ops.harness import OpRow

F16, F32, I8, I32, U8, BOOL, C64 = (np.float16, np.float32, np.int8, np.int32, np.uint8,
                                    np.bool_, np.complex64)
BF16 = ml_dtypes.bfloat16


# ------------------------------------------------------------- reference
def _spec_perms(dimension_numbers, ndim):
  """(lhs, rhs, out) permutations to (batch, feature, spatial...) order."""
  if dimension_numbers is None:
    iota = tuple(range(ndim))
    return iota, iota, iota
  if not isinstance(dimension_numbers[0], str):
    return tuple(tuple(s) for s in dimension_numbers)
  lhs_s, rhs_s, out_s = dimension_numbers
  spatial = [ch for ch in rhs_s if ch not in "OI"]

  def perm(spec, a, b):
    return (spec.index(a), spec.index(b)) + tuple(spec.index(ch) for ch in spatial)
  return perm(lhs_s, "N", "C"), perm(rhs_s, "O", "I"), perm(out_s, "N", "C")


def _same_pads(sizes, windows, strides, lower=False):
  pads = []
  for n, k, s in zip(sizes, windows, strides):
    total = max(0, (-(-n // s) - 1) * s + k - n)
    small, big = total // 2, total - total // 2
    pads.append((big, small) if lower else (small, big))
  return pads


def conv_reference(lhs, rhs, window_strides, padding, lhs_dilation=None, rhs_dilation=None,
                   dimension_numbers=None, feature_group_count=1, batch_group_count=1):
  """The convolution summed in int64 (integers, bool), float64 or complex128."""
  lhs, rhs = np.asarray(lhs), np.asarray(rhs)
  kind = np.result_type(lhs.dtype, rhs.dtype).kind
  acc = {"c": np.complex128, "f": np.float64}.get(kind, np.int64)
  if lhs.dtype in (BF16,):
    acc = np.float64
  lp, rp, op = _spec_perms(dimension_numbers, lhs.ndim)
  x = np.transpose(lhs, lp).astype(acc)
  w = np.transpose(rhs, rp).astype(acc)
  nsp = x.ndim - 2
  ld = tuple(lhs_dilation or (1,) * nsp)
  rd = tuple(rhs_dilation or (1,) * nsp)
  kext = [(k - 1) * d + 1 for k, d in zip(w.shape[2:], rd)]
  if isinstance(padding, str):
    padding = [(0, 0)] * nsp if padding == "VALID" else \
        _same_pads(x.shape[2:], kext, window_strides, padding == "SAME_LOWER")
  # The dilated input: x[j] sits at j * ld.
  dil = [(n - 1) * d + 1 for n, d in zip(x.shape[2:], ld)]
  xd = np.zeros(x.shape[:2] + tuple(dil), acc)
  xd[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in ld)] = x
  out_sp = [max(0, (n + lo + hi - k) // s + 1)
            for n, (lo, hi), k, s in zip(dil, padding, kext, window_strides)]
  groups = max(feature_group_count, batch_group_count)
  n, o, i = x.shape[0], w.shape[0], w.shape[1]
  nb, og = n // batch_group_count, o // groups
  out = np.zeros((nb, o) + tuple(out_sp), acc)
  for y in itertools.product(*map(range, out_sp)):
    for k in itertools.product(*map(range, w.shape[2:])):
      pos = [yy * s + kk * d - lo for yy, kk, s, d, (lo, _) in
             zip(y, k, window_strides, rd, padding)]
      if any(p < 0 or p >= size for p, size in zip(pos, dil)):
        continue
      v = xd[(slice(None), slice(None)) + tuple(pos)]            # (n, c)
      wk = w[(slice(None), slice(None)) + k]                      # (o, i)
      for g in range(groups):
        rows = wk[g * og:(g + 1) * og]
        if batch_group_count > 1:
          contrib = v[g * nb:(g + 1) * nb] @ rows.T
        else:
          contrib = v[:, g * i:(g + 1) * i] @ rows.T
        out[(slice(None), slice(g * og, (g + 1) * og)) + y] += contrib
  return np.transpose(out, np.argsort(op))


def _cast_ref(fn, dtype):
  """A reference rounded to ``dtype`` (integers wrap, booleans test != 0)."""
  def ref(*args):
    out = fn(*args)
    if np.dtype(dtype) == np.bool_:
      return out != 0
    if np.dtype(dtype).kind in "iu":
      return out.astype(np.int64).astype(dtype)
    return out.astype(dtype)
  return ref


# ------------------------------------------------------------- samples
def _arr(shape, dtype=F32):
  def make(rng):
    dt = np.dtype(dtype)
    if dt == np.bool_:
      return rng.random(shape) > 0.7
    if dt.kind in "iu":
      return rng.integers(0 if dt.kind == "u" else -4, 5, size=shape).astype(dt)
    if dt.kind == "c":
      return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)
    return rng.standard_normal(shape).astype(dt)
  return make


def _args(*makers):
  return lambda rng: tuple(m(rng) for m in makers)


def _conv_row(name, lhs_shape, rhs_shape, *conv_args, dtype=F32, out=None, grad=True,
              preferred_element_type=None, precision=None, **conv_kw):
  """A row for ``lax.conv_general_dilated(lhs, rhs, *conv_args, **conv_kw)``."""
  def fn(x, w):
    return lax.conv_general_dilated(x, w, *conv_args, precision=precision,
                                    preferred_element_type=preferred_element_type, **conv_kw)
  ref = _cast_ref(lambda x, w: conv_reference(x, w, *conv_args, **conv_kw),
                  out or preferred_element_type or dtype)
  grad = grad and np.dtype(dtype).kind in "fc" and np.dtype(dtype).itemsize >= 4
  return OpRow(name, fn, _args(_arr(lhs_shape, dtype), _arr(rhs_shape, dtype)), ref,
               atol=1e-5 if np.dtype(dtype) in (np.dtype(F32), np.dtype(C64)) else None,
               grad=grad)


NHWC = ("NHWC", "HWIO", "NHWC")

ROWS = [
    # ------------------------------------------------- lax.conv_general_dilated
    _conv_row("lax.conv_nchw_same", (2, 3, 6, 5), (4, 3, 3, 2), (1, 1), "SAME"),
    _conv_row("lax.conv_nhwc_strided_dilated", (2, 6, 5, 4), (3, 2, 4, 6), (2, 1),
              ((1, 0), (2, 1)), (1, 2), (2, 1), NHWC),
    _conv_row("lax.conv_1d_feature_groups", (2, 4, 7), (6, 2, 3), (2,), "VALID",
              feature_group_count=2),
    _conv_row("lax.conv_depthwise_nhwc", (1, 5, 6, 3), (3, 3, 1, 3), (1, 1), "SAME",
              dimension_numbers=NHWC, feature_group_count=3),
    _conv_row("lax.conv_1d_batch_groups", (4, 3, 6), (6, 3, 2), (1,), ((1, 1),),
              batch_group_count=2),
    _conv_row("lax.conv_3d_same_lower", (1, 2, 4, 3, 5), (2, 2, 2, 2, 3), (1, 2, 1),
              "SAME_LOWER", dimension_numbers=("NCDHW", "OIDHW", "NDHWC")),
    _conv_row("lax.conv_negative_padding", (2, 2, 7, 6), (3, 2, 2, 2), (1, 2),
              ((-1, 2), (1, -2)), (2, 1)),
    _conv_row("lax.conv_precision_highest", (1, 2, 5, 5), (2, 2, 3, 3), (1, 1), "VALID",
              precision=lax.Precision.HIGHEST),
    _conv_row("lax.conv_c64", (1, 2, 5, 4), (3, 2, 2, 2), (1, 1), "SAME", dtype=C64),
    _conv_row("lax.conv_i32", (1, 2, 5, 4), (3, 2, 2, 2), (1, 1), "SAME", dtype=I32),
    _conv_row("lax.conv_i8_wraps", (1, 3, 4, 4), (2, 3, 3, 3), (1, 1), "SAME", dtype=I8),
    _conv_row("lax.conv_u8_pref_i32", (1, 3, 4, 4), (2, 3, 3, 3), (1, 1), "SAME", dtype=U8,
              preferred_element_type=I32),
    _conv_row("lax.conv_i8_pref_f32", (1, 3, 4, 4), (2, 3, 3, 3), (1, 1), "VALID", dtype=I8,
              preferred_element_type=F32),
    _conv_row("lax.conv_f16", (1, 3, 5, 5), (2, 3, 3, 3), (1, 1), "SAME", dtype=F16),
    _conv_row("lax.conv_bf16", (1, 3, 5, 5), (2, 3, 3, 3), (1, 1), "SAME", dtype=BF16),
    _conv_row("lax.conv_bf16_pref_f32", (1, 3, 5, 5), (2, 3, 3, 3), (2, 2), "SAME",
              dtype=BF16, preferred_element_type=F32),
    _conv_row("lax.conv_bool", (1, 2, 5, 4), (2, 2, 2, 2), (1, 1), "SAME", dtype=BOOL),
    OpRow("lax.conv", lambda x, w: lax.conv(x, w, (2, 1), "SAME"),
          _args(_arr((2, 3, 5, 6)), _arr((2, 3, 2, 3))),
          lambda x, w: conv_reference(x, w, (2, 1), "SAME").astype(F32), atol=1e-5,
          grad=True),
    OpRow("lax.conv_with_general_padding",
          lambda x, w: lax.conv_with_general_padding(x, w, (1, 2), ((2, 1), (0, 1)), (2, 1),
                                                     (1, 2)),
          _args(_arr((2, 3, 4, 6)), _arr((2, 3, 2, 2))),
          lambda x, w: conv_reference(x, w, (1, 2), ((2, 1), (0, 1)), (2, 1),
                                      (1, 2)).astype(F32), atol=1e-5, grad=True),
    # conv_transpose is a stride-1 convolution of the stride-dilated input.
    OpRow("lax.conv_transpose_same",
          lambda x, w: lax.conv_transpose(x, w, (2, 2), "SAME"),
          _args(_arr((1, 4, 3, 2)), _arr((3, 3, 2, 2))),
          lambda x, w: conv_reference(x, w, (1, 1), ((2, 1), (2, 1)), (2, 2), None,
                                      NHWC).astype(F32), atol=1e-5, grad=True),
    OpRow("lax.conv_transpose_kernel_valid",
          lambda x, w: lax.conv_transpose(x, w, (2,), "VALID", transpose_kernel=True),
          _args(_arr((2, 4, 3)), _arr((3, 2, 3))),
          lambda x, w: conv_reference(x, np.swapaxes(w[::-1], 1, 2), (1,), ((2, 2),), (2,),
                                      None, ("NHC", "HIO", "NHC")).astype(F32),
          atol=1e-5, grad=True),

    # -------------------------------------------------- jnp.convolve/correlate
    OpRow("jnp.convolve_full", jnp.convolve, _args(_arr((7,)), _arr((3,))), np.convolve,
          atol=1e-5, grad=True),
    OpRow("jnp.convolve_same_v_longer", lambda a, v: jnp.convolve(a, v, "same"),
          _args(_arr((3,)), _arr((6,))), lambda a, v: np.convolve(a, v, "same"), atol=1e-5,
          grad=True),
    OpRow("jnp.convolve_valid_i32", lambda a, v: jnp.convolve(a, v, "valid"),
          _args(_arr((6,), I32), _arr((4,), I32)), lambda a, v: np.convolve(a, v, "valid"),
          out_dtype=F32),
    OpRow("jnp.correlate_valid", jnp.correlate, _args(_arr((7,)), _arr((3,))), np.correlate,
          atol=1e-5, grad=True),
    OpRow("jnp.correlate_full_c64_v_longer", lambda a, v: jnp.correlate(a, v, "full"),
          _args(_arr((3,), C64), _arr((5,), C64)),
          lambda a, v: np.correlate(a, v, "full"), atol=1e-5, grad=True),

    # ------------------------------------------------------ jax.scipy.signal
    OpRow("jsp.signal.convolve_2d_same", lambda a, b: jsp_signal.convolve(a, b, "same"),
          _args(_arr((6, 5)), _arr((3, 2))), lambda a, b: scipy.signal.convolve(a, b, "same"),
          atol=1e-5, grad=True),
    OpRow("jsp.signal.correlate_3d_full", jsp_signal.correlate,
          _args(_arr((2, 4, 3)), _arr((2, 2, 3))), scipy.signal.correlate, atol=1e-5,
          grad=True),
    OpRow("jsp.signal.convolve2d_valid_swapped",
          lambda a, b: jsp_signal.convolve2d(a, b, "valid"),
          _args(_arr((2, 3)), _arr((5, 4))),
          lambda a, b: scipy.signal.convolve2d(a, b, "valid"), atol=1e-5, grad=True),
    OpRow("jsp.signal.correlate2d_full_c64", jsp_signal.correlate2d,
          _args(_arr((3, 4), C64), _arr((2, 3), C64)), scipy.signal.correlate2d, atol=1e-5,
          grad=True),
]
