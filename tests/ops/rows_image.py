"""Op-table rows for ``jax.image``: nearest and (upsampling) linear resize against
NumPy references; the antialiased and Lanczos/cubic paths against JAX's values
live in tests/test_image.py, here they get the jit/vmap/grad columns."""
import numpy as np

import openjax.image as image
from tests.ops.harness import OpRow

F32 = np.float32


def _img(shape):
  return lambda rng: (rng.standard_normal(shape).astype(F32),)


def _nearest_ref(shape):
  def ref(x):
    for d, n in enumerate(shape):
      m = x.shape[d]
      idx = np.floor((np.arange(n, dtype=np.float32) + 0.5) * np.float32(m / n)).astype(int)
      x = np.take(x, idx, axis=d)
    return x
  return ref


def _linear_up_ref(shape):
  # Half-pixel centres, edges clamped: np.interp along each axis in turn.
  def ref(x):
    x = x.astype(np.float64)
    for d, n in enumerate(shape):
      m = x.shape[d]
      if m == n:
        continue
      src = (np.arange(n) + 0.5) * m / n - 0.5
      x = np.apply_along_axis(lambda v: np.interp(src, np.arange(m), v), d, x)
    return x.astype(F32)
  return ref


ROWS = [
    OpRow("image.resize_nearest", lambda x: image.resize(x, (5, 7), "nearest"), _img((3, 4)),
          _nearest_ref((5, 7)), grad=True),
    OpRow("image.resize_linear_up", lambda x: image.resize(x, (6, 9, 2), "linear"),
          _img((4, 5, 2)), _linear_up_ref((6, 9, 2)), grad=True),
    OpRow("image.resize_lanczos3_down_antialias",
          lambda x: image.resize(x, (3, 4), "lanczos3"), _img((7, 9)), None, grad=True),
    OpRow("image.resize_area_down", lambda x: image.resize(x, (2, 3), "area"), _img((6, 6)),
          lambda x: x.reshape(2, 3, 3, 2).mean((1, 3)), grad=True),
    OpRow("image.scale_and_translate_cubic",
          lambda x: image.scale_and_translate(x, (6, 5), (0, 1), np.array([1.4, 0.8], F32),
                                              np.array([0.3, -0.2], F32), "cubic"),
          _img((4, 5)), None, grad=True),
]
