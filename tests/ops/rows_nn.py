"""Op-table rows for ``jax.nn``: every activation, the softmax family,
``logsumexp``, ``standardize``, ``one_hot``, ``glu`` and
``dot_product_attention``, against NumPy/SciPy formulas evaluated in float64.

Inputs keep away from the kinks of the piecewise functions (relu at 0, relu6
at 0 and 6, hard_tanh at +-1, ...), where finite differences are meaningless;
tests/test_nn.py checks the derivatives there against JAX's values."""
import numpy as np
from scipy import special

import openjax.nn as nn
from tests.ops.harness import OpRow

F32, F16 = np.dtype(np.float32), np.dtype(np.float16)
_KINKS = np.array([-3., -1., 0., 1., 3., 6.])


def _away_from_kinks(shape=(3, 4), scale=3.0, dtype=F32):
  def make(rng):
    x = rng.standard_normal(shape) * scale
    near = np.abs(x[..., None] - _KINKS).min(-1) < 0.05
    x = np.where(near, x + 0.1, x)
    return (x.astype(dtype),)
  return make


def _positive(shape=(3, 4)):
  return lambda rng: ((np.abs(rng.standard_normal(shape)) * 2 + 0.05).astype(F32),)


def _normal(*shapes, dtype=F32):
  return lambda rng: tuple(rng.standard_normal(s).astype(dtype) for s in shapes)


def _f64(ref):
  """``ref`` evaluated in float64, returned in the input's dtype."""
  def wrapped(*args):
    dt = next(a.dtype for a in args if isinstance(a, np.ndarray) and a.dtype.kind == "f")
    out = ref(*[a.astype(np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                else a for a in args])
    return tuple(np.asarray(o).astype(dt) for o in out) if isinstance(out, tuple) \
        else np.asarray(out).astype(dt)
  return wrapped


def _softplus(x):
  return np.logaddexp(x, 0)


def _elu(x, alpha=1.0):
  return np.where(x > 0, x, alpha * np.expm1(np.minimum(x, 0)))


def _gelu_tanh(x):
  return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def _gelu_erf(x):
  return 0.5 * x * (1 + special.erf(x / np.sqrt(2)))


def _standardize(x, axis=-1, where=None, eps=1e-5):
  w = np.ones_like(x, bool) if where is None else np.broadcast_to(where, x.shape)
  n = w.sum(axis, keepdims=True)
  mean = np.where(w, x, 0).sum(axis, keepdims=True) / n
  var = np.where(w, (x - mean) ** 2, 0).sum(axis, keepdims=True) / n
  return (x - mean) / np.sqrt(var + eps)


def _one_hot(x, n, axis=-1, dtype=np.float32):
  out = (x[..., None] == np.arange(n)).astype(dtype)
  return np.moveaxis(out, -1, axis)


def attention_reference(q, k, v, bias=None, mask=None, *, scale=None, is_causal=False):
  """Multi-head attention written out head by head in float64 (``BTNH``;
  ``K`` key/value heads, each shared by ``N // K`` query heads)."""
  B, T, N, H = q.shape
  S, K = k.shape[1], k.shape[2]
  scale = 1 / np.sqrt(H) if scale is None else scale
  out = np.zeros((B, T, N, H))
  for b in range(B):
    for n in range(N):
      kv = n // (N // K)
      logits = q[b, :, n].astype(np.float64) @ k[b, :, kv].T * scale
      if bias is not None:
        logits = logits + np.broadcast_to(bias, (B, N, T, S))[b, n]
      keep = np.ones((T, S), bool)
      if mask is not None:
        keep &= np.broadcast_to(mask, (B, N, T, S))[b, n]
      if is_causal:
        keep &= np.tril(np.ones((T, S), bool))
      logits = np.where(keep, logits, -0.7 * np.finfo(np.float32).max)
      out[b, :, n] = special.softmax(logits, axis=-1) @ v[b, :, kv]
  return out


def _attention_args(B=2, T=3, S=4, N=4, K=2, H=5, bias=False, mask=False):
  def make(rng):
    args = [rng.standard_normal((B, T, N, H)).astype(F32),
            rng.standard_normal((B, S, K, H)).astype(F32),
            rng.standard_normal((B, S, K, H)).astype(F32)]
    if bias:
      args.append(rng.standard_normal((1, N, T, S)).astype(F32))
    if mask:
      m = rng.random((B, 1, T, S)) < 0.7
      m[..., 0] = True     # every query row keeps at least one key
      args.append(m)
    return tuple(args)
  return make


ROWS = [
    OpRow("nn.relu", nn.relu, _away_from_kinks(), _f64(lambda x: np.maximum(x, 0)), grad=True),
    OpRow("nn.relu_f16", nn.relu, _away_from_kinks(dtype=F16), lambda x: np.maximum(x, 0)),
    OpRow("nn.relu6", nn.relu6, _away_from_kinks(), _f64(lambda x: np.clip(x, 0, 6)),
          grad=True),
    OpRow("nn.squareplus", nn.squareplus, _normal((3, 4)),
          _f64(lambda x: (x + np.sqrt(x * x + 4)) / 2), grad=True),
    OpRow("nn.squareplus_b", lambda x, b: nn.squareplus(x, b),
          lambda rng: (rng.standard_normal((3, 4)).astype(F32), (rng.random(4) + 0.1).astype(F32)),
          _f64(lambda x, b: (x + np.sqrt(x * x + b)) / 2), grad=True),
    OpRow("nn.softplus", nn.softplus, _away_from_kinks(scale=10), _f64(_softplus), grad=True),
    OpRow("nn.sparse_plus", nn.sparse_plus, _away_from_kinks(),
          _f64(lambda x: np.where(x <= -1, 0, np.where(x >= 1, x, (x + 1) ** 2 / 4))),
          grad=True),
    OpRow("nn.soft_sign", nn.soft_sign, _away_from_kinks(), _f64(lambda x: x / (np.abs(x) + 1)),
          grad=True),
    OpRow("nn.sigmoid", nn.sigmoid, _away_from_kinks(scale=5), _f64(special.expit), grad=True),
    OpRow("nn.sparse_sigmoid", nn.sparse_sigmoid, _away_from_kinks(),
          _f64(lambda x: np.clip(x + 1, 0, 2) / 2), grad=True),
    OpRow("nn.silu", nn.silu, _away_from_kinks(), _f64(lambda x: x * special.expit(x)),
          grad=True),
    OpRow("nn.mish", nn.mish, _away_from_kinks(), _f64(lambda x: x * np.tanh(_softplus(x))),
          grad=True),
    OpRow("nn.log_sigmoid", nn.log_sigmoid, _away_from_kinks(scale=10),
          _f64(special.log_expit), grad=True),
    OpRow("nn.elu", nn.elu, _away_from_kinks(), _f64(_elu), grad=True),
    OpRow("nn.elu_alpha", lambda x: nn.elu(x, 0.5), _away_from_kinks(),
          _f64(lambda x: _elu(x, 0.5)), grad=True),
    OpRow("nn.leaky_relu", lambda x: nn.leaky_relu(x, 0.2), _away_from_kinks(),
          _f64(lambda x: np.where(x >= 0, x, 0.2 * x)), grad=True),
    OpRow("nn.hard_tanh", nn.hard_tanh, _away_from_kinks(), _f64(lambda x: np.clip(x, -1, 1)),
          grad=True),
    OpRow("nn.celu", lambda x: nn.celu(x, 0.7), _away_from_kinks(),
          _f64(lambda x: np.maximum(x, 0) + 0.7 * np.expm1(np.minimum(x, 0) / 0.7)),
          grad=True),
    OpRow("nn.selu", nn.selu, _away_from_kinks(),
          _f64(lambda x: 1.0507009873554805 * _elu(x, 1.6732632423543772)), grad=True),
    OpRow("nn.gelu", nn.gelu, _away_from_kinks(), _f64(_gelu_tanh), grad=True),
    OpRow("nn.gelu_exact", lambda x: nn.gelu(x, approximate=False), _away_from_kinks(),
          _f64(_gelu_erf), grad=True),
    OpRow("nn.gelu_f16", nn.gelu, _normal((3, 4), dtype=F16), _f64(_gelu_tanh)),
    OpRow("nn.glu", nn.glu, _normal((3, 6)),
          _f64(lambda x: x[:, :3] * special.expit(x[:, 3:])), grad=True),
    OpRow("nn.glu_axis0", lambda x: nn.glu(x, 0), _normal((4, 3)),
          _f64(lambda x: x[:2] * special.expit(x[2:])), grad=True),
    OpRow("nn.hard_sigmoid", nn.hard_sigmoid, _away_from_kinks(),
          _f64(lambda x: np.clip(x + 3, 0, 6) / 6), grad=True),
    OpRow("nn.hard_silu", nn.hard_silu, _away_from_kinks(),
          _f64(lambda x: x * np.clip(x + 3, 0, 6) / 6), grad=True),
    OpRow("nn.log1mexp", nn.log1mexp, _positive(), _f64(lambda x: np.log(-np.expm1(-x))),
          grad=True),
    OpRow("nn.identity", nn.identity, _normal((3, 4)), lambda x: x, grad=True),
    # ------------------------------------------------------ softmax family
    OpRow("nn.softmax", nn.softmax, _normal((3, 4)), _f64(lambda x: special.softmax(x, -1)),
          grad=True),
    OpRow("nn.softmax_axes", lambda x: nn.softmax(x, axis=(0, 2)), _normal((2, 3, 4)),
          _f64(lambda x: special.softmax(x, (0, 2))), grad=True),
    OpRow("nn.softmax_where", lambda x, w: nn.softmax(x, where=w),
          lambda rng: (rng.standard_normal((3, 4)).astype(F32), rng.random((3, 4)) < 0.6),
          _f64(lambda x, w: np.where(w, special.softmax(np.where(w, x, -np.inf), -1), 0)),
          grad=True),
    OpRow("nn.log_softmax", lambda x: nn.log_softmax(x, axis=0), _normal((3, 4)),
          _f64(lambda x: special.log_softmax(x, 0)), grad=True),
    OpRow("nn.log_softmax_none", lambda x: nn.log_softmax(x, axis=None), _normal((3, 4)),
          _f64(lambda x: special.log_softmax(x, None)), grad=True),
    OpRow("nn.logsumexp", lambda x: nn.logsumexp(x, axis=1), _normal((3, 4)),
          _f64(lambda x: special.logsumexp(x, 1)), grad=True),
    OpRow("nn.logsumexp_b", lambda x, b: nn.logsumexp(x, axis=(0, 1), b=b, keepdims=True),
          lambda rng: (rng.standard_normal((3, 4)).astype(F32),
                       (rng.random(4) + 0.5).astype(F32)),
          _f64(lambda x, b: special.logsumexp(x, (0, 1), b=b, keepdims=True)), grad=True),
    OpRow("nn.logsumexp_sign", lambda x, b: nn.logsumexp(x, 0, b=b, return_sign=True),
          _normal((3, 4), (3, 4)),
          _f64(lambda x, b: special.logsumexp(x, 0, b=b, return_sign=True)), grad=True),
    OpRow("nn.logmeanexp", lambda x: nn.logmeanexp(x, axis=-1), _normal((3, 4)),
          _f64(lambda x: special.logsumexp(x, -1) - np.log(4)), grad=True),
    OpRow("nn.standardize", nn.standardize, _normal((3, 5)), _f64(_standardize), grad=True),
    OpRow("nn.standardize_where", lambda x, w: nn.standardize(x, axis=0, where=w,
                                                              algorithm="stable"),
          lambda rng: (rng.standard_normal((5, 3)).astype(F32),
                       np.array([[1, 1, 0]] * 4 + [[0, 1, 1]], bool)),
          _f64(lambda x, w: _standardize(x, 0, w)), grad=True),
    OpRow("nn.one_hot", lambda i: nn.one_hot(i, 5), lambda rng: (rng.integers(-1, 6, (3, 4)),),
          lambda i: _one_hot(i, 5)),
    OpRow("nn.one_hot_axis0_i8", lambda i: nn.one_hot(i, 4, axis=0, dtype=np.int8),
          lambda rng: (rng.integers(0, 4, (3,)).astype(np.int32),),
          lambda i: _one_hot(i, 4, 0, np.int8)),
    # ------------------------------------------------------------ attention
    # (no grad column: the softmax runs in float32 even for float64 inputs, as
    # in JAX, so second-order finite differences miss the harness's 1e-4;
    # tests/test_nn.py checks attention gradients with float32 tolerances)
    OpRow("nn.dot_product_attention_gqa", nn.dot_product_attention, _attention_args(),
          _f64(attention_reference), atol=2e-6),
    OpRow("nn.dot_product_attention_bias_mask",
          lambda q, k, v, b, m: nn.dot_product_attention(q, k, v, b, m, is_causal=True,
                                                         scale=0.4),
          _attention_args(N=2, K=1, bias=True, mask=True),
          _f64(lambda q, k, v, b, m: attention_reference(q, k, v, b, m, is_causal=True,
                                                         scale=0.4)),
          atol=2e-6),
]
