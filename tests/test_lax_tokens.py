"""jax.lax's tokens (create_token, after_all), rng_uniform, the device_put
primitive and select_and_scatter_p: printed jaxprs as JAX 0.10.2 prints them
(expected text taken from JAX), values eager, interpreted and compiled."""
import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.control.select_and_scatter import select_and_scatter
from openjax._src.primitives.reduce.select_and_gather import select_and_scatter_add



@pytest.fixture(params=["interpreter", "iree"])
def executor(request):
  """Run the test's jitted calls interpreted, then compiled by IREE."""
  with jax.config.override("openjax_executor", request.param):
    yield request.param


# ------------------------------------------------------------------- tokens
def test_token_jaxprs_print_as_in_jax():
  assert str(jax.make_jaxpr(lambda x: lax.create_token(x))(1.)) == \
      "{ lambda ; a:f32[]. let b:Tok = create_token  in (b,) }"
  t = lax.create_token()
  assert str(jax.make_jaxpr(lambda t, x: (lax.after_all(t), x * 2))(t, 1.)) == (
      "{ lambda ; a:Tok b:f32[]. let\n    c:Tok = after_all a\n    d:f32[] = mul b 2.0:f32[]\n"
      "  in (c, d) }")


def test_token_values_and_type():
  t = lax.create_token()
  assert repr(t) == "Token()" and str(t) == "Token()"
  assert repr(jax.typeof(t)) == "AbstractToken()"
  assert lax.after_all().aval == jax.typeof(t)


def test_jit_takes_and_returns_tokens(executor):
  f = jax.jit(lambda t, x: (lax.after_all(t, lax.create_token()), x * 2))
  tok, y = f(lax.create_token(), 1.5)
  assert repr(tok) == "Token()" and float(y) == 3.0
  assert repr(jax.jit(lambda t: t)(tok)) == "Token()"


def test_tokens_lower_to_empty_placeholders():
  # IREE cannot carry !stablehlo.token (see primitives/identity/tokens.py).
  text = jax.jit(lambda t: lax.after_all(t)).lower(lax.create_token()).as_text()
  assert "tensor<0xi1>" in text and "stablehlo.token" not in text


def test_after_all_rejects_arrays():
  with pytest.raises(TypeError, match="Arguments to after_all must be tokens, got f32"):
    lax.after_all(1.)


def test_grad_through_a_function_making_tokens():
  assert float(jax.grad(lambda x: (lax.create_token(x), x * 2)[1])(1.)) == 2.0


# --------------------------------------------------------------- rng_uniform
def test_rng_uniform_draws_new_numbers_in_the_interval(executor):
  f = jax.jit(lambda a, b: lax.rng_uniform(a, b, (2000,)))
  x, y = np.asarray(f(np.float32(2), np.float32(5))), np.asarray(f(np.float32(2), np.float32(5)))
  assert x.dtype == np.float32 and x.shape == (2000,)
  assert x.min() >= 2 and x.max() < 5 and abs(x.mean() - 3.5) < 0.1
  assert not np.array_equal(x, y)   # stateful: each call continues the stream
  k = np.asarray(jax.jit(lambda a, b: lax.rng_uniform(a, b, (500,)))(3, 7))
  assert k.dtype == np.int32 and set(k.tolist()) == {3, 4, 5, 6}


def test_rng_uniform_eager_and_vmapped():
  x = np.asarray(lax.rng_uniform(0., 1., (100,)))
  assert 0 <= x.min() and x.max() < 1
  lo = jnp.arange(3.) * 10
  y = np.asarray(jax.vmap(lambda a: lax.rng_uniform(a, a + 1, (50,)))(lo))
  assert y.shape == (3, 50)
  assert all((lo_i <= r).all() and (r < lo_i + 1).all() for lo_i, r in zip([0, 10, 20], y))
  assert str(jax.make_jaxpr(lambda a: lax.rng_uniform(a, 1., (2, 3)))(0.)) == (
      "{ lambda ; a:f32[]. let\n    b:f32[2,3] = rng_uniform[shape=(2, 3)] a 1.0:f32[]\n"
      "  in (b,) }")


def test_rng_uniform_errors_as_jax():
  with pytest.raises(ValueError, match="identical dtypes, got float32 and int32"):
    lax.rng_uniform(0., 1, (3,))
  with pytest.raises(ValueError, match="must be scalars; got shapes"):
    lax.rng_uniform(jnp.zeros(2), jnp.ones(2), (3,))


# ---------------------------------------------------------------- device_put
_GRAD_DEVICE_PUT = """{ lambda ; a:f32[]. let
    b:f32[] = device_put[
      copy_semantics=(ArrayCopySemantics.REUSE_INPUT,)
      devices=(None,)
      srcs=(None,)
    ] a
    _:f32[] = mul b a
    c:f32[] = mul b 1.0:f32[]
    d:f32[] = mul 1.0:f32[] a
    e:f32[] = device_put[
      copy_semantics=(ArrayCopySemantics.ALWAYS_COPY,)
      devices=(None,)
      srcs=(None,)
    ] d
    f:f32[] = add_any c e
  in (f,) }"""


def test_traced_device_put_stages_jaxs_equation():
  # Expected text printed by JAX 0.10.2.
  assert str(jax.make_jaxpr(lambda x: jax.grad(lambda x: jax.device_put(x) * x)(x))(1.)) == \
      _GRAD_DEVICE_PUT
  text = str(jax.make_jaxpr(lambda x, y: jax.device_put((x, y), jax.devices()[0]))(1., 2))
  assert "devices=(CpuDevice(id=0), CpuDevice(id=0))" in text
  assert "c:f32[] d:i32[] = device_put" in text
  text = str(jax.make_jaxpr(lambda x: (jax.device_put(x, may_alias=False),
                                       jax.device_put(x, donate=True)))(1.))
  assert "ALWAYS_COPY" in text and "DONATE_INPUT" in text


def test_traced_device_put_values():
  x = jnp.arange(6.).reshape(2, 3)
  assert np.array_equal(jax.jit(lambda x: jax.device_put(x) + 1)(x), np.asarray(x) + 1)
  assert np.array_equal(jax.vmap(lambda x: jax.device_put(x) * 2)(x), np.asarray(x) * 2)


# -------------------------------------------------------- select_and_scatter
def test_select_and_scatter_prints_as_jax():
  x = np.ones((4, 4), np.float32)
  jaxpr = jax.make_jaxpr(lambda x, s: select_and_scatter(
      x, lax.ge, (2, 2), (2, 2), ((0, 0), (0, 0)), s, np.float32(0), lax.add))(x, x[:2, :2])
  assert str(jaxpr) == """{ lambda ; a:f32[4,4] b:f32[2,2]. let
    c:f32[4,4] = select_and_scatter[
      padding=((0, 0), (0, 0))
      scatter_consts=()
      scatter_jaxpr={ lambda ; d:f32[] e:f32[]. let f:f32[] = add d e in (f,) }
      select_consts=()
      select_jaxpr={ lambda ; g:f32[] h:f32[]. let i:bool[] = ge g h in (i,) }
      window_dimensions=(2, 2)
      window_strides=(2, 2)
    ] a b 0.0:f32[]
  in (c,) }"""


@pytest.mark.parametrize("window", [((2, 2), (2, 2), ((0, 0), (0, 0))),
                                    ((3, 3), (1, 1), ((0, 0), (0, 0))),
                                    ((3, 2), (2, 1), ((1, 1), (0, 1)))])
def test_select_and_scatter_agrees_with_select_and_scatter_add(executor, window):
  # The max-pooling transpose written with the general primitive gives the
  # same numbers as select_and_scatter_add (what max-pool grads use).
  rng = np.random.default_rng(0)
  x = rng.standard_normal((5, 6)).astype(np.float32)
  wd, ws, pad = window
  src_shape = [(n + lo + hi - w) // s + 1 for n, (lo, hi), w, s in zip(x.shape, pad, wd, ws)]
  src = rng.standard_normal(src_shape).astype(np.float32)
  got = jax.jit(lambda x, s: select_and_scatter(x, lax.ge, wd, ws, pad, s, np.float32(0),
                                                lax.add))(x, src)
  want = select_and_scatter_add(src, x, lax.ge_p, wd, ws, pad)
  np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_select_and_scatter_has_no_derivative_as_in_jax():
  x = np.ones((4, 4), np.float32)
  with pytest.raises(NotImplementedError, match="select_and_scatter"):
    jax.grad(lambda x: select_and_scatter(x, lax.ge, (2, 2), (2, 2), ((0, 0), (0, 0)),
                                          np.ones((2, 2), np.float32), np.float32(0),
                                          lax.add).sum())(x)


def test_device_put_to_a_memory_space():
  # openjax's devices have one memory; JAX's jaxpr types the result f32<host>[].
  x = jax.device_put(1., jax.memory.Space.Host)
  assert repr(x) == "Array(1., dtype=float32, weak_type=True)"
  text = str(jax.make_jaxpr(lambda x: jax.device_put(x, jax.memory.Space.Host))(1.))
  assert "devices=(MemorySpace.Host,)" in text
  assert float(jax.jit(lambda x: jax.device_put(x, jax.memory.Space.Host) * 2)(1.)) == 2.0
