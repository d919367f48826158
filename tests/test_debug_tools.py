"""jax.debug.breakpoint (a (jdb) session driven by a scripted stdin, eager,
interpreted, compiled and under vmap), jax.debug.log and
jax.debug.inspect_array_sharding."""
import contextlib
import io
import logging

import pytest

import openjax as jax
import openjax.numpy as jnp
from openjax._src.config import config


@contextlib.contextmanager
def compiled():
  with config.override("openjax_executor", "iree"), \
       config.override("openjax_tiered_compilation", False):
    yield


def _f(x):
  y, z = jnp.sin(x), jnp.cos(x)
  jax.debug.breakpoint()
  return y * z


def _session(monkeypatch, capsys, commands: str, run):
  monkeypatch.setattr("sys.stdin", io.StringIO(commands))
  result = run()
  return result, capsys.readouterr().out


def test_breakpoint_eager_session(monkeypatch, capsys):
  out, text = _session(monkeypatch, capsys, "p y\npp z\np nope\nw\nc\n", lambda: _f(2.))
  lines = text.splitlines()
  assert lines[0] == "Entering jdb:"
  assert lines[1] == "(jdb) Array(0.9092974, dtype=float32, weak_type=True)"
  assert lines[2] == "(jdb) Array(-0.4161468, dtype=float32, weak_type=True)"
  assert lines[3] == "(jdb) *** NameError: name 'nope' is not defined"
  assert lines[4] == "(jdb) Traceback:"
  assert "jax.debug.breakpoint()" in text and text.rstrip().endswith("(jdb)")
  assert abs(float(out) - 0.9092974 * -0.4161468) < 1e-6


@pytest.mark.parametrize("mode", ["interpreted", "compiled"])
def test_breakpoint_under_jit_sees_the_values(monkeypatch, capsys, mode):
  ctx = compiled() if mode == "compiled" else contextlib.nullcontext()
  with ctx:
    _, text = _session(monkeypatch, capsys, "p x, y\nl\nd\nu\nc\n", lambda: jax.jit(_f)(2.))
  lines = text.splitlines()
  assert lines[1] == "(jdb) (Array(2., dtype=float32), Array(0.9092974, dtype=float32))"
  assert "->    jax.debug.breakpoint()" in text
  assert "At bottommost frame." in text


def test_breakpoint_vmap_stops_once_per_example(monkeypatch, capsys):
  with compiled():
    _, text = _session(monkeypatch, capsys, "p x\nc\np x\nc\n",
                       lambda: jax.jit(jax.vmap(_f))(jnp.arange(2.)))
  assert text.count("Entering jdb:") == 2
  assert "(jdb) Array(0., dtype=float32)" in text and "(jdb) Array(1., dtype=float32)" in text


def test_breakpoint_quit_exits_and_token_is_returned(monkeypatch, capsys):
  monkeypatch.setattr("sys.stdin", io.StringIO("q\n"))
  with pytest.raises(SystemExit):
    _f(1.)
  monkeypatch.setattr("sys.stdin", io.StringIO("p t\nc\n"))
  tok = jax.jit(lambda t: jax.debug.breakpoint(token=t) * 2)(jnp.float32(4))
  assert float(tok) == 8.0
  assert "Array(4., dtype=float32)" in capsys.readouterr().out
  with pytest.raises(ValueError, match="mutually exclusive"):
    jax.debug.breakpoint(token=1., ordered=True)


def test_log_writes_a_record_with_the_callers_line(caplog):
  with caplog.at_level(logging.INFO, logger="openjax._src.debugging"):
    jax.jit(lambda x: jax.debug.log("x is {}", x))(3.)
    with compiled():
      jax.jit(lambda x: jax.debug.log("x is {}", x))(4.)
  records = [r for r in caplog.records if r.name == "openjax._src.debugging"]
  assert [r.getMessage() for r in records] == ["x is 3.0", "x is 4.0"]
  assert all(r.pathname == __file__ and r.levelno == logging.INFO for r in records)


def test_inspect_array_sharding():
  seen = []
  jax.debug.inspect_array_sharding(jnp.ones(3), callback=seen.append)
  jax.jit(lambda x: jax.debug.inspect_array_sharding(x, callback=seen.append))(jnp.ones(3))
  assert len(seen) == 2 and all(s.device_set == {jax.devices()[0]} for s in seen)


def test_effect_names():
  assert str(jax.debug.DebugEffect()) == "Debug"
  assert str(jax.debug.OrderedDebugEffect()) == "OrderedDebug"
