"""JAX 0.10.2's top-level config context managers (jax.no_tracing,
jax.no_execution, jax.allow_f16_reductions, jax.legacy_prng_key,
jax.make_user_context, ...): each sets its flag in the thread, and the
flags openjax has a mechanism for change behaviour as in JAX."""
import warnings

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax import lax

FLAGS = {   # context manager -> the flag it sets, and a non-default value
    "allow_f16_reductions": ("jax_allow_f16_reductions", False),
    "array_garbage_collection_guard": ("jax_array_garbage_collection_guard", "log"),
    "debug_key_reuse": ("jax_debug_key_reuse", True),
    "enable_custom_prng": ("jax_enable_custom_prng", True),
    "jax2tf_associative_scan_reductions": ("jax2tf_associative_scan_reductions", True),
    "legacy_prng_key": ("jax_legacy_prng_key", "warn"),
    "no_execution": ("jax_no_execution", True),
    "no_tracing": ("jax_no_tracing", True),
    "remove_size_one_mesh_axis_from_type": ("jax_remove_size_one_mesh_axis_from_type", True),
    "thread_guard": ("jax_thread_guard", True),
}


@pytest.mark.parametrize("name", sorted(FLAGS))
def test_context_manager_sets_its_flag(name):
  flag, value = FLAGS[name]
  before = getattr(jax.config, flag)
  with getattr(jax, name)(value):
    assert getattr(jax.config, flag) == value
  assert getattr(jax.config, flag) == before


def test_allow_f16_reductions():
  x = jnp.ones(4, jnp.float16)
  with jax.allow_f16_reductions(False):
    with pytest.raises(ValueError, match=r"reduce_sum on operand f16\[4\] is not allowed when "
                                         "jax_allow_f16_reductions=False"):
      lax.reduce_sum(x, (0,))
    assert float(x.sum()) == 4.0   # jnp.sum accumulates half floats in float32, as JAX
    np.testing.assert_array_equal(lax.reduce_sum(jnp.ones((1, 3), jnp.float16), (0,)), 1)
  assert float(lax.reduce_sum(x, (0,))) == 4.0


def test_no_tracing_and_no_execution():
  f = jax.jit(lambda x: x * 2)
  f(1.)
  with jax.no_tracing(True):
    assert float(f(2.)) == 4.0   # cached: no new trace
    with pytest.raises(RuntimeError, match="re-tracing function <lambda> for `jit`, but "
                                           "'no_tracing' is set"):
      f(jnp.ones(3))
  with jax.no_execution(True):
    with pytest.raises(RuntimeError, match="JAX tried to execute function <lambda>, but the "
                                           "no_execution config option is set"):
      f(2.)
    with pytest.raises(RuntimeError, match="no_execution"):
      jnp.ones(3) + 1
  assert float(f(2.)) == 4.0


def test_legacy_prng_key():
  raw = jax.random.PRNGKey(0)
  with jax.legacy_prng_key("error"):
    with pytest.raises(ValueError, match="Legacy uint32 key array passed as key"):
      jax.random.normal(raw)
    typed = jax.random.key(0)   # typed keys keep working everywhere
    jax.random.normal(typed), jax.random.categorical(typed, jnp.zeros(3))
    jax.vmap(jax.random.normal)(jax.random.split(typed, 3))
  with jax.legacy_prng_key("warn"), warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    jax.random.categorical(raw, jnp.zeros(3))
  assert len(caught) == 1 and "Legacy uint32 key" in str(caught[0].message)


def test_make_user_context_is_part_of_the_jit_cache_key():
  ctx = jax.make_user_context(0)
  traces = []
  g = jax.jit(lambda x: (traces.append(1), x + ctx.value)[1])
  assert float(g(1.)) == 1.0 and float(g(1.)) == 1.0
  with ctx(5):
    assert ctx.value == 5 and float(g(1.)) == 6.0
  assert float(g(1.)) == 1.0 and len(traces) == 2 and ctx.value == 0
  ctx.set_global(2)
  assert ctx.get_global() == 2 and float(g(1.)) == 3.0
  ctx.set_global(0)


def test_memory_spaces_and_ad_markers():
  assert repr(jax.memory.Space.Host) == "MemorySpace.Host"
  assert [s.name for s in jax.memory.Space] == ["Device", "Host", "Any"]
  assert jax.tree.leaves(jax.ad.GradRef()) == [] and jax.ad.DontWant() == jax.ad.DontWant()
