"""Libraries written against JAX train on openjax unedited (``python -m openjax``).

Each script in tests/libs/ runs under ``python -m openjax`` and must print the
same losses as under JAX 0.10.2 (stored in tests/data/lib_losses.json) within
float32 tolerance. The libraries are not openjax dependencies: install them
with ``pip install -e .[libs]``; without them these tests skip.
"""
import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

LIBS = pathlib.Path(__file__).parent / "libs"
EXPECTED = json.loads((pathlib.Path(__file__).parent / "data" / "lib_losses.json").read_text())


def _require(*packages: str) -> None:
  absent = [p for p in packages if importlib.util.find_spec(p) is None]
  if absent:
    pytest.skip(f"needs {', '.join(absent)} (pip install -e .[libs]); not an openjax dependency")


def _require_openjax(*names: str) -> None:
  """Skip until openjax has the modules/attributes (``"scipy.stats.norm"``,
  ``"pmap"``) a library touches at import time."""
  absent = []
  for name in names:
    module, _, attr = name.rpartition(".") if "." in name else ("", "", name)
    try:
      target = importlib.import_module("openjax" + ("." + module if module else ""))
      if not hasattr(target, attr):
        target = importlib.import_module(f"openjax.{name}")
    except ImportError:
      absent.append(f"jax.{name}")
  if absent:
    pytest.skip(f"the library imports {', '.join(absent)}, which openjax does not have yet")


def _losses(script: str) -> dict:
  result = subprocess.run([sys.executable, "-m", "openjax", str(LIBS / script)],
                          capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stderr[-4000:]
  return json.loads(result.stdout.strip().splitlines()[-1])


def test_optax_chain_trains_a_small_model_as_under_jax():
  _require("optax", "chex")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.Sharding")
  losses = _losses("train_optax.py")["optax"]
  np.testing.assert_allclose(losses, EXPECTED["optax"], rtol=2e-4, atol=1e-6)
  assert losses[-1] < 0.1 * losses[0]


def test_flax_linen_mlp_trains_as_under_jax():
  _require("flax", "optax", "msgpack")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.NamedSharding",
                   "sharding.PartitionSpec")
  losses = _losses("train_flax_linen.py")["flax_linen"]
  np.testing.assert_allclose(losses, EXPECTED["flax_linen"], rtol=2e-4, atol=1e-6)


def test_flax_nnx_mlp_trains_as_under_jax():
  _require("flax", "optax", "msgpack", "treescope")
  _require_openjax("experimental.hijax", "new_ref", "Ref")
  losses = _losses("train_flax_nnx.py")["flax_nnx"]
  np.testing.assert_allclose(losses, EXPECTED["flax_nnx"], rtol=2e-4, atol=1e-6)


def test_flax_nnx_modules_transforms_and_ref_variables_match_jax():
  # BatchNorm/Dropout training with nnx.jit, split/merge under jax.jit,
  # Variables backed by jax.Ref updated in place by jax.jit, nnx.vmap, nnx.scan.
  _require("flax", "optax", "msgpack", "treescope")
  _require_openjax("experimental.hijax", "new_ref", "Ref")
  expected = json.loads((LIBS.parent / "data" / "flax_nnx_many.json").read_text())
  values = _run_json("flax_nnx_many.py")
  assert values.keys() == expected.keys()
  for name, want in expected.items():
    got = values[name]
    assert not isinstance(got, str), f"{name}: {got}"
    if name == "refs_as_variables":
      assert got[-1] == want[-1] == "Ref"
      got, want = got[:-1], want[:-1]
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5, err_msg=name)


def test_equinox_mlp_trains_as_under_jax():
  _require("equinox", "optax", "jaxtyping")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.Sharding", "pmap",
                   "experimental.io_callback")
  losses = _losses("train_equinox.py")["equinox"]
  np.testing.assert_allclose(losses, EXPECTED["equinox"], rtol=2e-4, atol=1e-6)


def _run_json(script: str) -> dict:
  return _losses(script)


def test_optax_optimizers_and_losses_match_jax():
  _require("optax", "chex")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.Sharding")
  expected = json.loads((LIBS.parent / "data" / "optax_many.json").read_text())
  values = _run_json("optax_many.py")
  assert values.keys() == expected.keys()
  for name, want in expected.items():
    np.testing.assert_allclose(values[name], want, rtol=1e-5, atol=1e-6, err_msg=name)


def test_flax_linen_layers_and_lifted_transforms_match_jax():
  _require("flax", "optax", "msgpack")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.NamedSharding",
                   "sharding.PartitionSpec")
  expected = json.loads((LIBS.parent / "data" / "flax_many.json").read_text())
  values = _run_json("flax_many.py")
  from openjax._src.core import ShapedArray
  for name, want in expected.items():
    if name == "rnn_scan" and not hasattr(ShapedArray, "sharding"):
      # flax's scan builds avals with x.aval.sharding (the sharding helper's).
      assert "sharding" in values[name]
      continue
    got = values[name]
    assert not isinstance(got, str), f"{name}: {got}"
    if name in ("cnn", "remat_jit"):
      for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=2e-5, err_msg=name)
    else:
      np.testing.assert_allclose(got, want, atol=2e-5, err_msg=name)


def test_equinox_layers_and_filtered_transforms_match_jax():
  _require("equinox", "optax", "jaxtyping")
  _require_openjax("scipy.stats.norm", "scipy.special", "sharding.Sharding", "pmap",
                   "experimental.io_callback")
  expected = json.loads((LIBS.parent / "data" / "equinox_many.json").read_text())
  values = _run_json("equinox_many.py")
  for name, want in expected.items():
    got = values[name]
    assert not isinstance(got, str), f"{name}: {got}"
    if name == "filter_vmap_grad":
      for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, atol=5e-5, err_msg=name)
    else:
      np.testing.assert_allclose(got, want, atol=5e-5, err_msg=name)


def test_chex_asserts_and_dataclasses_work():
  _require("chex")
  _require_openjax("experimental.checkify")
  result = subprocess.run([sys.executable, "-m", "openjax", str(LIBS / "chex_basic.py")],
                          capture_output=True, text=True, timeout=600)
  assert result.returncode == 0, result.stderr[-4000:]
  assert result.stdout.split() == ["12.0", "2.0", "shape", "error", "ok", "True", "chex", "ok"]
