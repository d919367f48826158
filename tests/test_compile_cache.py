"""The compilation caches: in memory, and on disk across processes (a second
process compiles nothing), atomic and checksummed entries (a corrupt or
truncated entry is recompiled, never loaded), the enable/dir flags."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import openjax as jax
from openjax._src.config import config
from openjax._src.runtime import compiler
from tests.test_compiler import add, iree_executor, mul, sin

f32 = np.float32
REPO = pathlib.Path(__file__).resolve().parent.parent


@pytest.fixture
def cache_dir(tmp_path):
  """A fresh cache directory and an empty memory cache for one test."""
  compiler.clear_memory_cache()
  with iree_executor(tmp_path / "cache"):
    yield tmp_path / "cache"
  compiler.clear_memory_cache()


def _entries(d):
  return sorted(p for p in d.iterdir() if p.suffix == ".vmfb") if d.exists() else []


_SCRIPT = textwrap.dedent("""
    import json, sys
    import numpy as np, openjax as jax
    from openjax._src.runtime import compiler
    from tests.test_compiler import add, mul, sin, iree_executor
    with iree_executor(sys.argv[1]):
      f = jax.jit(lambda x, y: add(sin(x), mul(x, y)))
      out = f(np.arange(3, dtype=np.float32), np.ones(3, np.float32))
      g = jax.jit(lambda x: mul(x, x))
      out2 = g(np.arange(3, dtype=np.float32))
      print(json.dumps({"stats": compiler.stats, "out": np.asarray(out).tolist(),
                        "out2": np.asarray(out2).tolist()}))
""")


def _run(cache, n=1):
  procs = [subprocess.Popen([sys.executable, "-c", _SCRIPT, str(cache)], cwd=str(REPO),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
           for _ in range(n)]
  results = []
  for p in procs:
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err
    results.append(json.loads(out.strip().splitlines()[-1]))
  return results


def test_second_process_compiles_nothing(tmp_path):
  first, = _run(tmp_path)
  assert first["stats"]["compiles"] == 2 and first["stats"]["disk_hits"] == 0
  second, = _run(tmp_path)
  assert second["stats"]["compiles"] == 0 and second["stats"]["disk_hits"] == 2
  assert second["out"] == first["out"] and second["out2"] == [0.0, 1.0, 4.0]


def test_processes_sharing_a_fresh_cache_concurrently(tmp_path):
  results = _run(tmp_path, n=2)
  assert all(r["out2"] == [0.0, 1.0, 4.0] for r in results)
  entries = _entries(tmp_path)
  assert len(entries) == 2
  assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]
  third, = _run(tmp_path)
  assert third["stats"]["compiles"] == 0


def test_memory_cache_serves_identical_modules(cache_dir):
  x = np.ones(3, f32)
  jax.jit(lambda v: sin(v))(x)
  before = dict(compiler.stats)
  jax.jit(lambda v: sin(v))(x)            # another wrapper, same module text
  assert compiler.stats["compiles"] == before["compiles"]
  assert compiler.stats["memory_hits"] == before["memory_hits"] + 1


@pytest.mark.parametrize("damage", ["truncate", "flip", "garbage", "empty"])
def test_corrupt_entry_is_recompiled(cache_dir, damage):
  x = np.arange(4, dtype=f32)
  f = lambda v: mul(v, add(v, v))   # noqa: E731
  np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), 2 * x * x)
  entry, = _entries(cache_dir)
  data = entry.read_bytes()
  if damage == "truncate":
    entry.write_bytes(data[:len(data) // 2])
  elif damage == "flip":
    entry.write_bytes(data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:])
  elif damage == "garbage":
    entry.write_bytes(b"not a cache entry" * 10)
  else:
    entry.write_bytes(b"")
  compiler.clear_memory_cache()
  before = dict(compiler.stats)
  np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), 2 * x * x)
  assert compiler.stats["disk_corrupt"] == before["disk_corrupt"] + 1
  assert compiler.stats["compiles"] == before["compiles"] + 1
  assert entry.read_bytes() == data            # rewritten whole


def test_entry_copied_over_another_key_is_not_run(cache_dir):
  """An entry is trusted by the key stored inside it, not by its file name:
  another program's entry copied over this key's file is recompiled."""
  x = np.arange(4, dtype=f32)
  f = lambda v: mul(v, add(v, v))   # noqa: E731
  g = lambda v: add(v, v)           # noqa: E731
  jax.jit(f)(x).block_until_ready()
  entry_f, = _entries(cache_dir)
  jax.jit(g)(x).block_until_ready()
  entry_g, = [e for e in _entries(cache_dir) if e != entry_f]
  good = entry_f.read_bytes()
  entry_f.write_bytes(entry_g.read_bytes())
  compiler.clear_memory_cache()
  before = dict(compiler.stats)
  np.testing.assert_array_equal(np.asarray(jax.jit(f)(x)), 2 * x * x)
  assert compiler.stats["disk_corrupt"] == before["disk_corrupt"] + 1
  assert compiler.stats["compiles"] == before["compiles"] + 1
  assert entry_f.read_bytes() == good


def test_disabled_disk_cache_writes_nothing(cache_dir):
  config.update("jax_enable_compilation_cache", False)
  try:
    jax.jit(lambda v: add(v, sin(v)))(np.ones(2, f32))
  finally:
    config.update("jax_enable_compilation_cache", True)
  assert _entries(cache_dir) == []


def test_unwritable_cache_dir_warns_and_still_runs(tmp_path):
  blocker = tmp_path / "file"
  blocker.write_text("x")
  compiler.clear_memory_cache()
  with iree_executor(blocker / "sub"):
    with pytest.warns(RuntimeWarning, match="could not write the compilation cache"):
      out = jax.jit(lambda v: mul(v, sin(v)))(np.ones(2, f32))
  np.testing.assert_allclose(np.asarray(out), np.sin(1.0) * np.ones(2), rtol=1e-6)


def test_key_covers_text_flags_and_version():
  k = compiler.cache_key("module {}", compiler.BASE_FLAGS)
  assert k != compiler.cache_key("module { }", compiler.BASE_FLAGS)
  assert k != compiler.cache_key("module {}", compiler.BASE_FLAGS + ("--iree-opt-level=O1",))
  assert len(k) == 64 and compiler.COMPILER_VERSION in compiler.COMPILER_VERSION


def test_default_cache_dir_follows_xdg(monkeypatch):
  monkeypatch.setenv("XDG_CACHE_HOME", "/some/where")
  old = config.read("jax_compilation_cache_dir")
  config.update("jax_compilation_cache_dir", None)
  try:
    assert compiler.cache_dir() == os.path.join("/some/where", "openjax", "compilation_cache")
  finally:
    config.update("jax_compilation_cache_dir", old)
