"""The debugging flags act: jax_debug_nans/jax_debug_infs (eager, and
inside jitted functions interpreted or compiled, naming the primitive and
the user's line), jax_disable_jit, jax_log_compiles,
jax_explain_cache_misses and the host-to-device transfer guards."""
import contextlib
import logging

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.config import config
from openjax.errors import JaxRuntimeError


@contextlib.contextmanager
def compiled():
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


def _bad(x):
  y = jnp.log(x)   # the line the error names
  return y * 2


_BAD_LINE = _bad.__code__.co_firstlineno + 1


@pytest.mark.parametrize("mode", ["eager", "interpreted", "compiled"])
def test_debug_nans_names_primitive_and_line(mode, capsys):
  ctx = compiled() if mode == "compiled" else contextlib.nullcontext()
  f = _bad if mode == "eager" else jax.jit(_bad)
  with ctx, jax.debug_nans(True):
    with pytest.raises(FloatingPointError, match=rf"invalid value \(nan\) encountered in log "
                       rf"at {__file__}:{_BAD_LINE} \(_bad\)"):
      f(-1.)
    assert float(f(2.)) == pytest.approx(2 * np.log(2.))
  if mode != "eager":
    assert "Calling the de-optimized version" in capsys.readouterr().out


def test_debug_infs_and_flags_off():
  with config.override("jax_debug_infs", True):
    with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in log"):
      jax.jit(_bad)(0.)
  assert np.isnan(float(jax.jit(_bad)(-1.)))   # off: no check, no error


def test_disable_jit_runs_python(capsys):
  @jax.jit
  def f(x):
    print("tracing or running", type(x).__name__)
    return x + 1
  f(1.)
  f(2.)
  with jax.disable_jit():
    f(3.)
    f(4.)
  out = capsys.readouterr().out.splitlines()
  assert out[0].startswith("tracing or running") and out[1:] == ["tracing or running float"] * 2


def test_log_compiles(caplog):
  def fun(x):
    return x * 2
  with compiled(), caplog.at_level(logging.WARNING, logger="openjax._src.dispatch"), \
       config.override("jax_log_compiles", True):
    g = jax.jit(fun)
    g(jnp.ones(3))
    g(jnp.ones(3))   # cached: nothing logged
    g(jnp.ones(4))
  text = caplog.text
  assert text.count("Compiling jit(fun) with global shapes and types") == 2
  assert "(ShapedArray(float32[4]),). Argument mapping: (UnspecifiedValue,)." in text
  assert text.count("Finished IREE compilation of jit(fun)") == 2
  assert "* at x, now f32[4] and before f32[3]" in text   # why it compiled again


def test_explain_cache_misses(caplog):
  def h(x, y):
    return x + y
  k = jax.jit(h)
  s = jax.jit(lambda x, n: x * n, static_argnums=1)
  with caplog.at_level(logging.WARNING, logger="openjax._src.dispatch"), \
       config.override("jax_explain_cache_misses", True):
    k(jnp.ones(3), 2.)
    k(jnp.ones(3), 2.)
    k(jnp.ones(3), jnp.ones(3, jnp.int32))
    s(1., 2)
    s(1., 3)
  misses = [r.getMessage() for r in caplog.records]
  assert len(misses) == 4
  assert misses[0].startswith(f"TRACING CACHE MISS at {__file__}:")
  assert "never seen function:\n    h id=" in misses[0]
  assert misses[1].endswith("different input types:\n  * at y, now i32[3] and before "
                            "f32[]{weak_type=True}")
  assert misses[3].endswith("different value of static args:\n  * at argument 1, now 3 and "
                            "before 2")


def test_transfer_guard_host_to_device(caplog):
  x = jnp.arange(3.)
  f = jax.jit(lambda a: a * 2)
  f(x)
  msg = ("INVALID_ARGUMENT: Disallowed host-to-device transfer: aval=ShapedArray(float32[3]), "
         "dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind=device)")
  with jax.transfer_guard("disallow"):
    assert np.asarray(f(x)).tolist() == [0.0, 2.0, 4.0]      # device arrays: no transfer
    with pytest.raises(JaxRuntimeError, match=msg.replace("(", r"\(").replace(")", r"\)")
                       .replace("[", r"\[").replace("]", r"\]")):
      f(np.ones(3, np.float32))
    with pytest.raises(JaxRuntimeError, match="weak_type=True"):
      f(1.0)
    with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device"):
      jnp.add(np.ones(3, np.float32), x)
    jax.device_put(np.ones(3))            # explicit transfers are allowed
    assert float(jnp.sum(jnp.sin(x))) > 0  # library code passes no host arrays
  with jax.transfer_guard("disallow_explicit"):
    with pytest.raises(JaxRuntimeError, match="Disallowed host-to-device"):
      jax.device_put(np.ones(3))
  with jax.transfer_guard_host_to_device("disallow"):
    with pytest.raises(JaxRuntimeError):
      f(np.ones(3, np.float32))
  with caplog.at_level(logging.WARNING, logger="openjax._src.dispatch"), \
       jax.transfer_guard("log"):
    f(np.ones(3, np.float32))
  assert "host-to-device transfer: aval=ShapedArray(float32[3])" in caplog.text
  f(np.ones(3, np.float32))   # allowed again
