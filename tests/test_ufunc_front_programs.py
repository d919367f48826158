"""Eager ufunc calls of several primitives on Arrays run as one library
program (``eager_program_when``): logical_and/or/xor of non-bool Arrays,
isfinite of complex Arrays, square of bools, rad2deg of integers and bools;
the complex comparisons call their program positionally. The results keep
the op-by-op bits, dtypes and weak types; a single operation (bool logical
functions, real isfinite) binds directly, and traced calls stage JAX's
equations inline."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.api import eager_call


def _same(a, b) -> None:
  assert type(a) is type(b)
  assert a.dtype == b.dtype and a.shape == b.shape and a.weak_type == b.weak_type
  np.testing.assert_array_equal(np.asarray(a).reshape(-1).view(np.uint8),
                                np.asarray(b).reshape(-1).view(np.uint8))


_RNG = np.random.default_rng(5)
_F = _RNG.standard_normal((3, 4)).astype(np.float32)
_F[0, 0], _F[0, 1], _F[1, 1], _F[2, 2] = np.nan, -0.0, 0.0, -np.inf
_G = _F[::-1].copy()


def _complex(re, im):
  z = np.empty(re.shape, np.complex64)
  z.real, z.imag = re, im
  return z


_C = _complex(_F, _G)
_C[1, 0] = complex(np.inf, np.nan)
_D = _complex(_F, _F[:, ::-1])
_D[0, 2] = _C[0, 2].real + 1j * 5.0   # equal real parts: the imaginary parts decide
_I = _RNG.integers(-3, 4, (3, 4)).astype(np.int32)
_B = _RNG.random((3, 4)) > 0.5
_U = _RNG.integers(0, 256, (3, 4)).astype(np.uint8)

A = jnp.asarray
_CALLS = [
    ("logical_and f32", lambda: jnp.logical_and(A(_F), A(_G))),
    ("logical_or int", lambda: jnp.logical_or(A(_I), A(_I[::-1]))),
    ("logical_xor complex", lambda: jnp.logical_xor(A(_C), A(_D))),
    ("logical_and bool int", lambda: jnp.logical_and(A(_B), A(_I))),
    ("logical_or f16", lambda: jnp.logical_or(A(_F.astype(np.float16)), A(_G.astype(np.float16)))),
    ("logical_and bool", lambda: jnp.logical_and(A(_B), A(_B[::-1]))),
    ("logical_or scalar", lambda: jnp.logical_or(A(_F), 0.0)),
    ("logical_and empty", lambda: jnp.logical_and(jnp.zeros((0, 2)), jnp.ones((0, 2)))),
    ("isfinite complex", lambda: jnp.isfinite(A(_C))),
    ("isfinite f32", lambda: jnp.isfinite(A(_F))),
    ("isfinite 0-d complex", lambda: jnp.isfinite(A(np.complex64(complex(1, np.inf))))),
    ("square bool", lambda: jnp.square(A(_B))),
    ("square f32", lambda: jnp.square(A(_F))),
    ("rad2deg uint8", lambda: jnp.rad2deg(A(_U))),
    ("rad2deg int32", lambda: jnp.rad2deg(A(_I))),
    ("rad2deg bool", lambda: jnp.rad2deg(A(_B))),
    ("rad2deg f16", lambda: jnp.rad2deg(A(_F.astype(np.float16)))),
    ("less complex", lambda: jnp.less(A(_C), A(_D))),
    ("less_equal complex", lambda: jnp.less_equal(A(_C), A(_D))),
    ("greater complex", lambda: jnp.greater(A(_D), A(_C))),
    ("greater_equal complex scalar", lambda: jnp.greater_equal(A(_C), 1 + 1j)),
]


@pytest.mark.parametrize("name,call", _CALLS, ids=[c[0] for c in _CALLS])
def test_programs_keep_the_op_by_op_bits(name, call):
  with jax.disable_jit():
    want = call()
  for _ in range(3):
    _same(call(), want)


def test_several_operations_run_as_programs():
  f, c, b, u = A(_F), A(_C), A(_B), A(_U)
  for _ in range(3):
    jnp.logical_and(f, f), jnp.logical_or(f, f), jnp.isfinite(c), jnp.square(b)
    jnp.rad2deg(u)
  for fn in (jnp.logical_and, jnp.logical_or, jnp.isfinite, jnp.square, jnp.rad2deg):
    assert any(callable(r) for r in fn.program._eager_fast.values()), fn.__name__


def test_complex_comparisons_call_their_program_without_a_key(monkeypatch):
  c, d = A(_C), A(_D)
  want = jnp.less(c, d)
  for _ in range(3):
    jnp.less(c, d)
  keys = []
  real = eager_call.eager_key

  def counting(*args, **kwargs):
    keys.append(args)
    return real(*args, **kwargs)
  monkeypatch.setattr(eager_call, "eager_key", counting)
  for _ in range(3):
    _same(jnp.less(c, d), want)
  assert not keys


def test_traced_calls_stage_the_equations_inline():
  f, c, b, u = A(_F), A(_C), A(_B), A(_U)
  for _ in range(3):
    jnp.logical_and(f, f), jnp.isfinite(c), jnp.square(b), jnp.rad2deg(u), jnp.less(c, c)
  text = str(jax.make_jaxpr(jnp.logical_and)(f, f))
  assert "jit" not in text and text.count("ne ") + text.count("ne[") >= 1 and "and" in text
  text = str(jax.make_jaxpr(jnp.isfinite)(c))
  assert "jit" not in text and "is_finite" in text and "real" in text
  text = str(jax.make_jaxpr(jnp.square)(b))
  assert "jit" not in text and "convert_element_type" in text
  text = str(jax.make_jaxpr(jnp.rad2deg)(u))
  assert "jit" not in text and "mul" in text
  text = str(jax.make_jaxpr(jnp.less)(c, c))
  assert "jit" not in text and "select_n" in text
  _same(jax.jit(jnp.logical_xor)(f, A(_G)), jnp.logical_xor(f, A(_G)))
  _same(jax.jit(jnp.isfinite)(c), jnp.isfinite(c))
  _same(jax.jit(jnp.greater)(c, A(_D)), jnp.greater(c, A(_D)))


def test_grad_through_square_and_rad2deg():
  g = jax.grad(lambda x: jnp.sum(jnp.square(x) + jnp.rad2deg(x)))(A(_I.astype(np.float32)))
  np.testing.assert_allclose(g, 2 * _I + 180 / np.pi, rtol=1e-6)
