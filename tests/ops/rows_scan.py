"""Op-table rows for ``lax.scan`` (the ``scan`` primitive), ``lax.map`` and
``lax.fori_loop`` with static bounds, against NumPy loops."""
import numpy as np

import openjax.numpy as jnp
from openjax import lax
from tests.ops.harness import OpRow

F32 = np.float32


def _arrs(*shapes):
  return lambda rng: tuple(rng.standard_normal(s).astype(F32) for s in shapes)


# ------------------------------------------------------------ cumulative ops
def _cumulative(xs):
  return lax.scan(lambda c, x: (c + x * c + x, c * x), jnp.zeros(xs.shape[1:], xs.dtype), xs)


def _cumulative_ref(xs):
  c, ys = np.zeros(xs.shape[1:], xs.dtype), []
  for x in xs:
    ys.append(c * x)
    c = c + x * c + x
  return c, np.stack(ys)


# ------------------------------------------------ an RNN cell with a pytree carry
def _rnn(w, h, xs):
  def cell(carry, x):
    h, n = carry["h"], carry["n"]
    h = jnp.tanh(w @ h + x)
    return {"h": h, "n": n + 1}, (h.sum() * n, h * 2)
  carry, ys = lax.scan(cell, {"h": h, "n": 0}, xs)
  return carry["h"], ys   # the int counter is no output: no float0 in the grad columns


def _rnn_ref(w, h, xs):
  sums, hs = [], []
  for n, x in enumerate(xs):
    h = np.tanh(w @ h + x)
    sums.append(h.sum() * n)
    hs.append(h * 2)
  return h, (np.stack(sums), np.stack(hs))


# ----------------------------------------------- reverse with unrolled steps
def _reverse_unrolled(c0, xs):
  return lax.scan(lambda c, x: (jnp.sin(c) * x, c + x), c0, xs, reverse=True, unroll=2)


def _reverse_unrolled_ref(c0, xs):
  c, ys = c0, [None] * len(xs)
  for i in reversed(range(len(xs))):
    ys[i] = c + xs[i]
    c = np.sin(c) * xs[i]
  return c, np.stack(ys)


# ------------------------------------------------------------- map, fori_loop
def _map_pair(x):
  return lax.map(lambda r: (jnp.sin(r) * r.sum(), r[0]), x)


def _map_pair_ref(x):
  return np.sin(x) * x.sum(axis=1, keepdims=True), x[:, 0]


def _map_batched(x):
  # 7 rows in batches of 3: two scanned batches and a remainder of one.
  return lax.map(lambda r: jnp.cos(r) * r, x, batch_size=3)


def _fori_static(a, x):
  return lax.fori_loop(0, 4, lambda i, c: c * a + jnp.sin(x) * i, x)


def _fori_static_ref(a, x):
  c = x
  for i in range(4):
    c = c * a + np.sin(x) * i
  return c


ROWS = [
    OpRow("scan_cumulative", _cumulative, _arrs((5, 3)), ref=_cumulative_ref, grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("scan_rnn_pytree_carry", _rnn, _arrs((3, 3), (3,), (4, 3)), ref=_rnn_ref,
          grad=True, atol=1e-5, rtol=1e-5),
    OpRow("scan_reverse_unroll2", _reverse_unrolled, _arrs((2,), (5, 2)),
          ref=_reverse_unrolled_ref, grad=True, atol=1e-5, rtol=1e-5),
    OpRow("map_pytree_out", _map_pair, _arrs((4, 3)), ref=_map_pair_ref, grad=True,
          atol=1e-5, rtol=1e-5),
    OpRow("map_batch_size_remainder", _map_batched, _arrs((7, 2)),
          ref=lambda x: np.cos(x) * x, grad=True),
    OpRow("fori_loop_static", _fori_static, _arrs((3,), (3,)), ref=_fori_static_ref,
          grad=True, atol=1e-5, rtol=1e-5),
]
