"""jax.image.resize / scale_and_translate on fixed images, for every method.

Written against JAX: under JAX 0.10.2 it wrote tests/data/image.npz;
tests/test_image.py runs the same functions under ``openjax.alias_jax()``.
"""
import sys

import jax
import jax.numpy as jnp
import numpy as np

METHODS = ("nearest", "linear", "lanczos3", "lanczos5", "cubic", "cubic-pytorch", "area")
SHAPES = {"up": ((5, 7, 2), (9, 11, 2)), "down": ((9, 11, 2), (4, 5, 2)),
          "mixed": ((6, 6, 1), (10, 3, 1)), "same": ((4, 4, 1), (4, 4, 1))}


def image(shape, dtype=np.float32):
  n = int(np.prod(shape))
  return jnp.asarray((np.sin(np.arange(n) * 0.7) * 3 + np.arange(n) % 5).reshape(shape), dtype)


def resize_cases():
  out = {}
  for method in METHODS:
    for antialias in (True, False):
      for name, (src, dst) in SHAPES.items():
        key = f"resize/{method}/{int(antialias)}/{name}"
        out[key] = np.asarray(jax.image.resize(image(src), dst, method, antialias=antialias))
  out["resize/int_input/linear"] = np.asarray(
      jax.image.resize(image((4, 5), np.int32), (7, 3), "linear"))
  out["resize/int_input/nearest"] = np.asarray(
      jax.image.resize(image((4, 5), np.int32), (7, 3), "nearest"))
  out["resize/enum/bicubic"] = np.asarray(
      jax.image.resize(image((3, 4)), (6, 2), jax.image.ResizeMethod.CUBIC))
  return out


def scale_and_translate_cases():
  out = {}
  x = image((6, 8, 1))
  for method in ("linear", "cubic", "lanczos3", "area", "cubic-pytorch"):
    for antialias in (True, False):
      y = jax.image.scale_and_translate(x, (9, 5, 1), (0, 1), jnp.array([1.7, 0.6]),
                                        jnp.array([-0.8, 1.3]), method, antialias=antialias)
      out[f"st/{method}/{int(antialias)}"] = np.asarray(y)
  return out


def gradient_cases():
  x = image((5, 6))

  def loss(img, scale, translation):
    y = jax.image.scale_and_translate(img, (7, 4), (0, 1), scale, translation, "linear")
    return jnp.sum(y * jnp.arange(28.0).reshape(7, 4))

  g_img, g_scale, g_trans = jax.grad(loss, argnums=(0, 1, 2))(
      x, jnp.array([1.3, 0.7]), jnp.array([0.2, -0.4]))
  g_resize = jax.grad(lambda img: jnp.sum(jax.image.resize(img, (3, 9), "lanczos3") ** 2))(x)
  return {"grad/image": np.asarray(g_img), "grad/scale": np.asarray(g_scale),
          "grad/translation": np.asarray(g_trans), "grad/resize": np.asarray(g_resize)}


def all_cases():
  return {**resize_cases(), **scale_and_translate_cases(), **gradient_cases()}


if __name__ == "__main__":
  np.savez(sys.argv[1], **all_cases())
