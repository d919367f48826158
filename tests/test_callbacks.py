"""Host callbacks: jax.debug.print/callback, jax.pure_callback and
jax.experimental.io_callback eager, interpreted and compiled by IREE (the
program calls back into Python while it runs), under vmap, grad, scan,
while_loop and cond; their errors; the host-call runtime piece itself."""
import contextlib
import traceback

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax
from openjax._src.config import config
from openjax._src.core import ShapedArray, check_jaxpr
from openjax._src.runtime import compiler, host_calls
from openjax._src.runtime.executable import Executable
from openjax.experimental import io_callback

F32 = np.float32


@contextlib.contextmanager
def compiled():
  """Every jit compiles with IREE (no interpreted first call)."""
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


def lines(capsys) -> list[str]:
  return capsys.readouterr().out.splitlines()


# ------------------------------------------------------------ debug.print
def test_print_eager_jit_and_compiled(capsys):
  def f(x):
    jax.debug.print("x={x} y={}", x * 2, x=x)
    return x + 1
  x = jnp.arange(3.)
  f(x)
  jax.jit(f)(x)
  with compiled():
    jax.jit(f)(x)
    jax.jit(f)(x + 1)
  assert lines(capsys) == ["x=[0. 1. 2.] y=[0. 2. 4.]"] * 3 + ["x=[1. 2. 3.] y=[2. 4. 6.]"]


def test_print_without_placeholders_and_format_specs(capsys):
  jax.debug.print("plain", 1.5, skip_format_check=True)
  jax.jit(lambda x: jax.debug.print("{:.2f} and {s}", x, s="static text"))(jnp.float32(2))
  assert lines(capsys) == ["plain 1.5", "2.00 and static text"]


def test_print_format_errors():
  with pytest.raises(ValueError, match="Unused positional arguments"):
    jax.debug.print("{}", 1, 2)
  with pytest.raises(ValueError, match="f-string"):
    jax.debug.print("x", x=1)


def test_print_order_in_loops_interpreted_and_compiled(capsys):
  def f(x):
    def body(i, c):
      jax.debug.print("fori {} {}", i, c)
      return c * 2
    c = lax.fori_loop(0, 3, body, x)

    def step(carry, y):
      jax.debug.print("scan {}", y, ordered=True)
      return carry + y, carry
    c, _ = lax.scan(step, c, jnp.arange(2.))

    def cond(s):
      return s[0] < 2
    def loop(s):
      jax.debug.print("while {}", s[0])
      return s[0] + 1, s[1]
    lax.while_loop(cond, loop, (0, c))
    lax.cond(c > 0, lambda: jax.debug.print("pos {}", c), lambda: jax.debug.print("neg"))
    return c
  expected = ["fori 0 1.0", "fori 1 2.0", "fori 2 4.0", "scan 0.0", "scan 1.0",
              "while 0", "while 1", "pos 9.0"]
  x = jnp.float32(1)
  jax.jit(f)(x)
  assert lines(capsys) == expected
  with compiled():
    assert float(jax.jit(f)(x)) == 9.0
  assert lines(capsys) == expected


def test_vmap_prints_once_per_example(capsys):
  f = jax.vmap(lambda x, y: jax.debug.print("x {} y {}", x, y), in_axes=(0, None))
  f(jnp.arange(3.), 7.)
  with compiled():
    jax.jit(f)(jnp.arange(3.), 7.)
  assert lines(capsys) == ["x 0.0 y 7.0", "x 1.0 y 7.0", "x 2.0 y 7.0"] * 2


def test_grad_prints_primal_values(capsys):
  def f(x):
    jax.debug.print("x: {}", x)
    y = jnp.sin(x)
    jax.debug.print("y: {}", y)
    return y
  g = jax.grad(f)(0.5)
  np.testing.assert_allclose(float(g), np.cos(0.5), rtol=1e-6)
  assert lines(capsys) == ["x: 0.5", f"y: {np.float32(np.sin(0.5))}"]
  with compiled():
    jax.jit(jax.grad(f))(0.5)
  assert lines(capsys) == ["x: 0.5", f"y: {np.float32(np.sin(0.5))}"]


def test_unused_print_is_kept_and_unused_pure_callback_is_dropped(capsys):
  calls = []

  def f(x):
    jax.pure_callback(lambda a: calls.append(1) or a, jax.ShapeDtypeStruct((), F32), x)
    jax.debug.print("kept")
    return x
  with compiled():
    jax.jit(f)(1.)
  assert calls == [] and lines(capsys) == ["kept"]
  f(1.)   # eager: JAX calls it too
  assert calls == [1]


def test_make_jaxpr_prints_as_jax():
  def f(x):
    jax.debug.print("x={x} y={}", x * 2, x=x)
    y = jax.pure_callback(np.sin, jax.ShapeDtypeStruct(x.shape, x.dtype), x,
                          vmap_method="sequential")
    z = io_callback(np.cos, jax.ShapeDtypeStruct(x.shape, x.dtype), y, ordered=True)
    jax.debug.callback(print, z, ordered=True)
    return z
  closed = jax.make_jaxpr(f)(jnp.ones(3))
  check_jaxpr(closed)
  # JAX 0.10.2's printout of the same function.
  expected = (
      "{ lambda ; a:f32[3]. let\n    b:f32[3] = mul a 2.0:f32[]\n    debug_print[\n"
      "      fmt=x={x} y={}\n      has_placeholders=True\n"
      "      in_tree=PyTreeDef(((*,), {'x': *}))\n      logging_record=None\n"
      "      np_printoptions=(('edgeitems', 3), ('threshold', 1000), ('floatmode', 'maxprec'),"
      " ('precision', 8), ('suppress', False), ('linewidth', 75), ('nanstr', 'nan'), "
      "('infstr', 'inf'), ('sign', '-'), ('formatter', None), ('legacy', False), "
      "('override_repr', None))\n      ordered=False\n      partitioned=False\n"
      "      static_args=()\n    ] b a\n    c:f32[3] = pure_callback[\n"
      "      callback=_FlatCallback(callback_func=<ufunc 'sin'>, in_tree=PyTreeDef(((*,), {})))\n"
      "      result_avals=(ShapedArray(float32[3]),)\n      sharding=None\n"
      "      vmap_method=sequential\n    ] a\n    d:f32[3] = io_callback[\n"
      "      callback=_FlatCallback(callback_func=<ufunc 'cos'>, in_tree=PyTreeDef(((*,), {})))\n"
      "      ordered=True\n      result_avals=(ShapedArray(float32[3]),)\n      sharding=None\n"
      "    ] c\n    debug_callback[\n      callback=<function debug_callback.<locals>."
      "_debug_callback.<locals>._flat_callback at 0xXXXXXXXXXXXX>\n      effect=OrderedDebug\n"
      "      partitioned=False\n    ] d\n  in (d,) }")
  assert str(closed) == expected


# ---------------------------------------------------------- debug.callback
def test_debug_callback_gets_arrays_and_static_args():
  seen = []

  def cb(x, tag, *, scale):
    seen.append((type(x), np.asarray(x).tolist(), tag, scale))

  def f(x):
    jax.debug.callback(cb, x, "tag", scale=2.0)
    jax.debug.callback(ordered=True)(cb, x + 1, "two-call", scale=3)
    return x
  jax.jit(f)(jnp.arange(2.))
  with compiled():
    jax.jit(f)(jnp.arange(2.))
  expected = [(jax.Array, [0.0, 1.0], "tag", 2.0), (jax.Array, [1.0, 2.0], "two-call", 3)]
  assert seen == expected * 2
  with pytest.raises(TypeError, match="must be callable"):
    jax.debug.callback(3)


# ----------------------------------------------------------- pure_callback
def _host_sin(x):
  return np.sin(np.asarray(x))


def test_pure_callback_eager_jit_compiled():
  x = np.linspace(0, 1, 5, dtype=F32)
  spec = jax.ShapeDtypeStruct(x.shape, x.dtype)
  f = lambda x: jax.pure_callback(_host_sin, spec, x) * 2  # noqa: E731
  for out in (f(x), jax.jit(f)(x)):
    np.testing.assert_allclose(np.asarray(out), np.sin(x) * 2, rtol=1e-6)
  with compiled():
    np.testing.assert_allclose(np.asarray(jax.jit(f)(x)), np.sin(x) * 2, rtol=1e-6)


def test_pure_callback_pytrees_and_kwargs():
  def host(a, *, b):
    return {"sum": np.asarray(a[0] + b), "n": np.int32(a[1].size)}
  spec = {"sum": jax.ShapeDtypeStruct((2,), F32), "n": jax.ShapeDtypeStruct((), np.int32)}
  f = lambda x, y: jax.pure_callback(host, spec, (x, y), b=x)  # noqa: E731
  x, y = np.ones(2, F32), np.zeros((3, 2), F32)
  with compiled():
    out = jax.jit(f)(x, y)
  assert np.asarray(out["sum"]).tolist() == [2.0, 2.0] and int(out["n"]) == 6


@pytest.mark.parametrize("method, shapes", [
    ("sequential", [((), ())] * 3),
    ("expand_dims", [((3,), (1,))]),
    ("broadcast_all", [((3,), (3,))]),
    ("legacy_vectorized", [((3,), ())]),
])
def test_pure_callback_vmap_methods(method, shapes):
  seen = []

  def host(x, y):
    seen.append((np.shape(x), np.shape(y)))
    return np.asarray(x) + np.asarray(y)

  def f(x, y):
    return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x, y,
                             vmap_method=method)
  out = jax.vmap(f, in_axes=(0, None))(jnp.arange(3.), jnp.float32(10))
  assert np.asarray(out).tolist() == [10.0, 11.0, 12.0]
  assert seen == shapes
  seen.clear()
  with compiled():
    out = jax.jit(jax.vmap(f, in_axes=(0, None)))(jnp.arange(3.), jnp.float32(10))
  assert np.asarray(out).tolist() == [10.0, 11.0, 12.0] and seen == shapes


def test_pure_callback_vmap_needs_a_method():
  f = lambda x: jax.pure_callback(_host_sin, jax.ShapeDtypeStruct((), F32), x)  # noqa: E731
  with pytest.raises(NotImplementedError, match="vmap_method"):
    jax.vmap(f)(jnp.arange(3.))
  with pytest.raises(ValueError, match="vmap_method must be"):
    jax.pure_callback(_host_sin, jax.ShapeDtypeStruct((), F32), 1., vmap_method="bad")


def test_pure_callback_wrong_shape_or_dtype():
  wrong_shape = lambda x: jax.pure_callback(  # noqa: E731
      lambda a: np.zeros(4, F32), jax.ShapeDtypeStruct((3,), F32), x)
  wrong_dtype = lambda x: jax.pure_callback(  # noqa: E731
      lambda a: np.zeros(3, np.int32), jax.ShapeDtypeStruct((3,), F32), x)
  x = np.ones(3, F32)
  for run in (lambda f: f(x), lambda f: jax.jit(f)(x)):
    with pytest.raises(RuntimeError, match=r"Incorrect output shape for return value #0: "
                       r"Expected: \(3,\), Actual: \(4,\)"):
      run(wrong_shape)
    with pytest.raises(RuntimeError, match="Incorrect output dtype for return value #0: "
                       "Expected: float32, Actual: int32"):
      run(wrong_dtype)
  with compiled():
    with pytest.raises(RuntimeError, match="Incorrect output shape"):
      jax.jit(wrong_shape)(x)
    # The device is usable after a failed host call.
    np.testing.assert_allclose(np.asarray(jax.jit(jnp.sin)(x)), np.sin(x), rtol=1e-6)
  with pytest.raises(ValueError, match="64-bit"):
    jax.pure_callback(_host_sin, jax.ShapeDtypeStruct((), np.float64), 1.)


def test_pure_callback_grad_needs_custom_jvp():
  f = lambda x: jax.pure_callback(_host_sin, jax.ShapeDtypeStruct((), F32), x)  # noqa: E731
  with pytest.raises(ValueError, match="Pure callbacks do not support JVP. Please use "
                     "`jax.custom_jvp`"):
    jax.grad(f)(1.)

  spec = jax.ShapeDtypeStruct((), F32)

  @jax.custom_jvp
  def sin(x):
    return jax.pure_callback(_host_sin, spec, x)

  @sin.defjvp
  def _sin_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return sin(x), jax.pure_callback(lambda a: np.cos(np.asarray(a)), spec, x) * t

  np.testing.assert_allclose(float(jax.grad(sin)(1.)), np.cos(1.), rtol=1e-6)
  with compiled():
    np.testing.assert_allclose(float(jax.jit(jax.grad(sin))(1.)), np.cos(1.), rtol=1e-6)


def test_pure_callback_in_scan_compiled():
  def f(xs):
    def step(c, x):
      y = jax.pure_callback(_host_sin, jax.ShapeDtypeStruct((), F32), x)
      return c + y, y
    return lax.scan(step, jnp.float32(0), xs)
  xs = np.arange(4, dtype=F32)
  with compiled():
    total, ys = jax.jit(f)(xs)
  np.testing.assert_allclose(np.asarray(ys), np.sin(xs), rtol=1e-6)
  np.testing.assert_allclose(float(total), np.sin(xs).sum(), rtol=1e-6)


# ------------------------------------------------------------- io_callback
def test_io_callback_ordered_in_loops():
  log = []

  def record(i, x):
    log.append((int(i), float(x)))
    return np.float32(x) * 2

  def f(x):
    def body(i, c):
      return io_callback(record, jax.ShapeDtypeStruct((), F32), i, c, ordered=True)
    return lax.fori_loop(0, 3, body, x)
  assert float(jax.jit(f)(1.)) == 8.0
  with compiled():
    assert float(jax.jit(f)(1.)) == 8.0
  assert log == [(0, 1.0), (1, 2.0), (2, 4.0)] * 2


def test_io_callback_vmap_and_grad():
  calls = []

  def host(x):
    calls.append(np.shape(x))
    return np.asarray(x) + 1

  f = lambda x: io_callback(host, jax.ShapeDtypeStruct((), F32), x)  # noqa: E731
  assert np.asarray(jax.vmap(f)(jnp.arange(3.))).tolist() == [1.0, 2.0, 3.0]
  assert calls == [()] * 3
  g = lambda x: io_callback(host, jax.ShapeDtypeStruct((), F32), x, ordered=True)  # noqa: E731
  with pytest.raises(ValueError, match="Cannot `vmap` ordered IO callback"):
    jax.vmap(g)(jnp.arange(3.))
  with pytest.raises(ValueError, match="IO callbacks do not support JVP"):
    jax.grad(f)(1.)


def test_io_callback_is_never_dropped():
  calls = []

  def f(x):
    io_callback(lambda a: calls.append(1) or a, jax.ShapeDtypeStruct((), F32), x)
    return x
  with compiled():
    jax.jit(f)(1.)
  assert calls == [1]


# -------------------------------------------------------------- exceptions
class _HostError(Exception):
  pass


def _raising_host(x):
  raise _HostError(f"bad value {float(x)}")


@pytest.mark.parametrize("mode", ["eager", "interpreted", "compiled"])
def test_exception_in_callback_reaches_caller_with_its_traceback(mode):
  def f(x):
    return jax.pure_callback(_raising_host, jax.ShapeDtypeStruct((), F32), x)
  ctx = compiled() if mode == "compiled" else contextlib.nullcontext()
  with ctx, pytest.raises(_HostError, match="bad value 3.0") as info:
    (f if mode == "eager" else jax.jit(f))(3.)
  frames = [fr.name for fr in traceback.extract_tb(info.value.__traceback__)]
  assert "_raising_host" in frames
  if mode == "compiled":   # the next call on the device works
    assert float(jax.jit(lambda x: x + 1)(1.)) == 2.0


# ------------------------------------------------------ host-call runtime
def test_host_call_runtime_piece_directly():
  """A hand-written program calling a registered host function (what
  compiled collectives build on): its operands arrive as NumPy arrays, its
  results flow on in the program."""
  f32_4 = ShapedArray((4,), np.dtype(F32))
  i32 = ShapedArray((), np.dtype(np.int32))
  seen = []

  def host(x, n):
    seen.append((x.tolist(), int(n)))
    return [(x * n).astype(F32), np.arange(2, dtype=np.int32)]

  fn = host_calls.register(host, [f32_4, i32], [f32_4, ShapedArray((2,), np.dtype(np.int32))],
                           key="test_host_call_runtime_piece")
  assert host_calls.register(host, [f32_4, i32], fn.out_avals,
                             key="test_host_call_runtime_piece") is fn
  text = (
      "module @host_probe {\n"
      f"  func.func private @{fn.symbol}(tensor<4xf32>, tensor<i32>) -> "
      "(tensor<4xf32>, tensor<2xi32>)\n"
      "  func.func public @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n"
      "    %n = stablehlo.constant dense<3> : tensor<i32>\n"
      "    %y = stablehlo.multiply %x, %x : tensor<4xf32>\n"
      f"    %r:2 = func.call @{fn.symbol}(%y, %n) : (tensor<4xf32>, tensor<i32>) -> "
      "(tensor<4xf32>, tensor<2xi32>)\n"
      "    %z = stablehlo.add %r#0, %x : tensor<4xf32>\n"
      "    return %z : tensor<4xf32>\n  }\n}\n")
  assert host_calls.imports_of(text) == (fn.module_name,)
  key, vmfb = compiler.compile_module(text, name="host_probe")
  for inline in (False, True):
    ex = Executable(key, vmfb, [f32_4], [f32_4], "host_probe", inline=inline,
                    host_imports=host_calls.imports_of(text))
    out = ex.execute([np.arange(4, dtype=F32)])
    assert np.asarray(out[0]).tolist() == [0.0, 4.0, 14.0, 30.0]
  assert seen == [([0.0, 1.0, 4.0, 9.0], 3)] * 2


def test_callback_on_a_returned_value_in_a_task_device_program():
  """A callback reading a value the program computes and also returns, in a
  program large enough for the local-task device (it used to hang there)."""
  seen = []
  m = np.random.default_rng(0).normal(size=(256, 256)).astype(F32)

  def f(x):
    y = x @ x
    jax.debug.callback(lambda a: seen.append(np.asarray(a).shape), y)
    jax.debug.print("corner {}", y[0, 0])
    return y
  with compiled():
    ex = jax.jit(f).lower(m).compile()
    out = ex(m).block_until_ready()
  np.testing.assert_allclose(np.asarray(out), m @ m, rtol=1e-4, atol=1e-3)
  assert seen == [(256, 256)]


def test_callback_calling_jit_from_a_compiled_program():
  # The calling program holds its device: the nested jitted call interprets
  # instead of waiting for it.
  inner = jax.jit(lambda a: a * 3)

  def host(a):
    assert host_calls.active()
    return np.asarray(inner(a))

  f = lambda x: jax.pure_callback(host, jax.ShapeDtypeStruct((2,), F32), x) + 1  # noqa: E731
  with compiled():
    out = jax.jit(f)(np.ones(2, F32))
  assert np.asarray(out).tolist() == [4.0, 4.0] and not host_calls.active()
