"""Top-level ``jax`` names: config context managers, naming helpers,
compile-time evaluation, typeof, environment/live-array reports, host queries
and the dlpack/stages/typing modules. Goldens come from JAX 0.10.2."""
import logging
import subprocess
import sys
import textwrap
import typing as _typing
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

_FLAG_CONTEXTS = [
    (jax.default_matmul_precision, "jax_default_matmul_precision", "highest"),
    (jax.numpy_rank_promotion, "jax_numpy_rank_promotion", "raise"),
    (jax.numpy_dtype_promotion, "jax_numpy_dtype_promotion", "strict"),
    (jax.debug_infs, "jax_debug_infs", True),
    (jax.enable_checks, "jax_enable_checks", True),
    (jax.log_compiles, "jax_log_compiles", True),
    (jax.explain_cache_misses, "jax_explain_cache_misses", True),
    (jax.check_tracer_leaks, "jax_check_tracer_leaks", True),
    (jax.threefry_partitionable, "jax_threefry_partitionable", False),
    (jax.softmax_custom_jvp, "jax_softmax_custom_jvp", True),
    (jax.default_prng_impl, "jax_default_prng_impl", "threefry2x32"),
    (jax.transfer_guard_host_to_device, "jax_transfer_guard_host_to_device", "disallow"),
    (jax.transfer_guard_device_to_host, "jax_transfer_guard_device_to_host", "log"),
    (jax.transfer_guard_device_to_device, "jax_transfer_guard_device_to_device", "allow"),
]


@pytest.mark.parametrize("ctx,flag,value", _FLAG_CONTEXTS, ids=[f for _, f, _ in _FLAG_CONTEXTS])
def test_flag_context_sets_and_restores(ctx, flag, value):
  before = jax.config.read(flag)
  with ctx(value):
    assert jax.config.read(flag) == value
  assert jax.config.read(flag) == before


def test_flag_contexts_validate_values():
  for ctx, bad in [(jax.numpy_rank_promotion, "sometimes"), (jax.numpy_dtype_promotion, "loose"),
                   (jax.default_prng_impl, "rbg"), (jax.transfer_guard, "maybe")]:
    with pytest.raises(ValueError, match="invalid value"):
      with ctx(bad):
        pass


def test_checking_leaks_and_transfer_guard_set_all_kinds():
  with jax.checking_leaks():
    assert jax.config.jax_check_tracer_leaks is True
  assert jax.config.jax_check_tracer_leaks is False
  with jax.transfer_guard("disallow"):
    for kind in ("", "_host_to_device", "_device_to_host", "_device_to_device"):
      assert jax.config.read(f"jax_transfer_guard{kind}") == "disallow"
  assert jax.config.jax_transfer_guard == "allow"


def test_default_matmul_precision_reaches_dot():
  x, y = jnp.ones((2, 3)), jnp.ones((3, 2))
  with jax.default_matmul_precision("highest"):
    text = str(jax.make_jaxpr(jnp.dot)(x, y))
  assert "precision=(Precision.HIGHEST, Precision.HIGHEST)" in text
  assert "Precision.HIGHEST" not in str(jax.make_jaxpr(jnp.dot)(x, y))


def test_numpy_rank_promotion_and_debug_infs_take_effect():
  with jax.numpy_rank_promotion("raise"):
    with pytest.raises(ValueError, match="rank"):
      jnp.add(jnp.ones(3), jnp.ones((2, 3)))
  assert jnp.add(jnp.ones(3), jnp.ones((2, 3))).shape == (2, 3)
  with jax.debug_infs(True):
    with pytest.raises(FloatingPointError):
      jnp.log(jnp.float32(0.0))
  assert np.isinf(float(jnp.log(jnp.float32(0.0))))


def test_numpy_dtype_promotion_strict_rejects_mixed_dtypes():
  f = jax.jit(lambda a, b: a * b)
  x32, xbf = jnp.ones(3, jnp.float32), jnp.ones(3, jnp.bfloat16)
  assert f(x32, xbf).dtype == np.float32   # traced under standard promotion first
  with jax.numpy_dtype_promotion("strict"):
    assert (x32 + 1.0).dtype == np.float32 and (jnp.ones(3, jnp.int32) + 1).dtype == np.int32
    for g in (lambda: jnp.ones(3, jnp.int32) + x32, lambda: f(x32, xbf),
              lambda: jnp.ones(3, jnp.int32) * 1.5):
      with pytest.raises(jax.dtypes.TypePromotionError, match="dtype_promotion=strict"):
        g()
  assert (jnp.ones(3, jnp.int32) + x32).dtype == np.float32


def test_threefry_partitionable_and_softmax_custom_jvp_take_effect():
  with jax.threefry_partitionable(False):
    with pytest.raises(NotImplementedError, match="jax_threefry_partitionable"):
      jax.random.bits(jax.random.key(0), (4,))
  # JAX 0.10.2: jax.random.bits(jax.random.key(0), (4,))
  assert jax.random.bits(jax.random.key(0), (4,)).tolist() == [
      4070199207, 4202968722, 1427181096, 2012915765]
  with jax.softmax_custom_jvp(True):
    assert "custom_jvp_call" in str(jax.make_jaxpr(jax.nn.softmax)(jnp.ones(3)))
  assert "custom_jvp_call" not in str(jax.make_jaxpr(jax.nn.softmax)(jnp.ones(3)))


def test_default_device_moves_jitted_and_eager_results():
  code = textwrap.dedent("""
      import openjax as jax, openjax.numpy as jnp
      jax.config.update("jax_num_cpu_devices", 2)
      d0, d1 = jax.devices()
      with jax.default_device(d1):
        eager = jnp.arange(3) + 1
        jitted = jax.jit(lambda x: x * 2)(jnp.arange(3))
        assert eager.devices() == {d1}, eager.devices()
        assert jitted.devices() == {d1}, jitted.devices()
        assert jitted.tolist() == [0, 2, 4]
      assert jax.jit(lambda x: x * 2)(jnp.arange(3)).devices() == {d0}
      print("ok")
  """)
  out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
  assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_float0_is_the_integer_tangent_dtype():
  assert jax.float0 == jax.dtypes.float0
  assert jax.grad(lambda i: 1.0, allow_int=True)(1).dtype == jax.float0


def test_named_call_and_named_scope():
  from openjax._src.api.misc import current_name_stack

  seen = []

  def f(x):
    seen.append(current_name_stack())
    return jnp.sin(x) * 2

  g = jax.named_call(f, name="foo")
  assert g.__name__ == "f"
  np.testing.assert_allclose(g(1.0), np.sin(1.0) * 2, rtol=1e-6)
  # JAX 0.10.2 prints the same jaxpr as for f itself.
  assert str(jax.make_jaxpr(g)(1.0)) == (
      "{ lambda ; a:f32[]. let b:f32[] = sin a; c:f32[] = mul b 2.0:f32[] in (c,) }")
  with jax.named_scope("outer"):
    jax.named_call(f)(1.0)
  assert seen[0] == "foo" and seen[-1] == "outer/f" and current_name_stack() == ""
  with pytest.raises(TypeError, match="named_scope name argument must be a string"):
    with jax.named_scope(3):
      pass


def test_ensure_compile_time_eval_runs_concrete_ops_eagerly():
  kinds = []

  def f(x):
    with jax.ensure_compile_time_eval():
      y = jnp.sin(2.0) + jnp.arange(3)
      kinds.append(type(y) is jax.Array)
      if y[0] > 0:     # concrete: Python control flow works under jit
        y = y + 0
      z = x * 2
      kinds.append(type(z) is jax.Array)
    return z + y

  # JAX 0.10.2 golden: y is a constant, only the traced ops are staged.
  assert str(jax.make_jaxpr(f)(jnp.ones(3))) == textwrap.dedent("""\
      { lambda a:f32[3]; b:f32[3]. let
          c:f32[3] = mul b 2.0:f32[]
          d:f32[3] = convert_element_type[new_dtype=float32 weak_type=False] a
          e:f32[3] = add c d
        in (e,) }""")
  assert kinds == [True, False]
  np.testing.assert_allclose(jax.jit(f)(jnp.ones(3)), 2 + np.sin(2.0) + np.arange(3), rtol=1e-6)
  np.testing.assert_allclose(jax.vmap(f)(jnp.ones((2, 3)))[1], 2 + np.sin(2.0) + np.arange(3),
                             rtol=1e-6)
  with jax.ensure_compile_time_eval():   # eager: nothing changes
    assert float(jnp.sin(0.0)) == 0.0


def test_typeof_prints_like_jax():
  t = jax.typeof(jnp.ones((3, 4)))
  assert (str(t), repr(t)) == ("float32[3,4]", "ShapedArray(float32[3,4])")
  assert str(jax.typeof(1.0)) == "~float32[]"
  assert str(jax.typeof(jnp.int32(2))) == "int32[]"
  shapes = []
  jax.make_jaxpr(lambda x: shapes.append(str(jax.typeof(x))) or x)(jnp.ones((2,), jnp.int32))
  assert shapes == ["int32[2]"]


def test_print_environment_info(capsys):
  info = jax.print_environment_info(return_string=True)
  assert info.startswith(f"openjax: {jax.__version__}\n")
  assert f"numpy: {np.__version__}" in info and "process_count: 1" in info
  assert jax.print_environment_info() is None
  assert capsys.readouterr().out.strip() == info.strip()


def test_live_arrays_tracks_alive_not_deleted():
  x = jnp.arange(5) + 1
  assert any(a is x for a in jax.live_arrays())
  x.delete()
  assert not any(a is x for a in jax.live_arrays())
  with pytest.raises(RuntimeError, match="unknown platform"):
    jax.live_arrays("tpu")


def test_host_and_process_queries():
  assert jax.process_indices() == [0]
  with pytest.warns(UserWarning, match="renamed to jax.process_count"):
    assert jax.host_count() == 1
  with pytest.warns(UserWarning, match="renamed to jax.process_index"):
    assert jax.host_id() == 0
  with pytest.warns(UserWarning, match="renamed to jax.process_indices"):
    assert jax.host_ids() == [0]


def test_copy_to_host_async_returns_tree():
  tree = {"a": jnp.arange(3) * 2, "b": (jnp.ones(2), 5)}
  out = jax.copy_to_host_async(tree)
  assert out is tree and out["a"].tolist() == [0, 2, 4]


def test_dlpack_from_dlpack():
  x = jax.dlpack.from_dlpack(np.arange(3.0))
  assert isinstance(x, jax.Array) and x.dtype == np.float32 and x.tolist() == [0.0, 1.0, 2.0]
  y = jax.dlpack.from_dlpack(jnp.arange(4, dtype=jnp.int32) * 3)
  assert y.dtype == np.int32 and y.tolist() == [0, 3, 6, 9]
  src = np.arange(4, dtype=np.int32)
  z = jax.dlpack.from_dlpack(src)
  src[0] = 99
  assert z.tolist() == [0, 1, 2, 3]   # copied by default
  with pytest.raises(TypeError, match="__dlpack__"):
    jax.dlpack.from_dlpack([1, 2])
  assert jax.dlpack.is_supported_dtype(np.float16) and jax.dlpack.is_supported_dtype(jnp.bfloat16)
  assert not jax.dlpack.is_supported_dtype(jax.float0)


def test_stages_are_the_aot_objects():
  wrapped = jax.jit(lambda x: x + 1)
  assert isinstance(wrapped, jax.stages.Wrapped)
  traced = wrapped.trace(jnp.ones(2))
  assert isinstance(traced, jax.stages.Traced)
  lowered = traced.lower()
  assert isinstance(lowered, jax.stages.Lowered)
  compiled = lowered.compile()
  assert isinstance(compiled, jax.stages.Compiled)
  assert compiled(jnp.ones(2)).tolist() == [2.0, 2.0]


def test_typing_aliases_cover_arrays_and_dtypes():
  def scale(x: jax.typing.ArrayLike, dtype: jax.typing.DTypeLike = None) -> jax.Array:
    return jnp.asarray(x, dtype) * 2
  assert scale(3, "float32").dtype == np.float32
  array_types = _typing.get_args(jax.typing.ArrayLike)
  for v in (jnp.ones(2), np.ones(2), np.float32(1), 1, 1.0, True, 1j):
    assert isinstance(v, array_types)
  dtype_args = _typing.get_args(jax.typing.DTypeLike)
  assert str in dtype_args and np.dtype in dtype_args
