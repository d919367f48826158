"""Every public name of JAX 0.10.2's modules exists in openjax.

The name lists were taken from JAX 0.10.2 (``tests/data/jax_names/generate.py``,
run in a separate venv). A module joins ``COMPLETE`` when openjax has all its
names; ``test_missing_counts`` keeps the others from losing names.
"""
import importlib
import pathlib

import pytest

DATA = pathlib.Path(__file__).parent / "data" / "jax_names"

# Modules whose every JAX 0.10.2 name exists in openjax.
COMPLETE = (
  "jax.dtypes",
  "jax.errors",
  "jax.example_libraries.optimizers",
  "jax.example_libraries.stax",
  "jax.flatten_util",
  "jax.image",
  "jax.nn",
  "jax.nn.initializers",
  "jax.numpy",
  "jax.numpy.fft",
  "jax.numpy.linalg",
  "jax.random",
  "jax.tree",
  "jax.tree_util",
)


def jax_names(module: str) -> list[str]:
  return (DATA / f"{module}.txt").read_text().split()


def missing(module: str) -> list[str]:
  try:
    mod = importlib.import_module("openjax" + module[len("jax"):])
  except ImportError:
    return jax_names(module)
  return [n for n in jax_names(module) if not hasattr(mod, n)]


@pytest.mark.parametrize("module", COMPLETE)
def test_every_name_exists(module):
  assert missing(module) == [], f"openjax lacks these names of {module}"


def test_name_lists_are_stored():
  stored = {p.stem for p in DATA.glob("*.txt")}
  assert set(COMPLETE) <= stored
