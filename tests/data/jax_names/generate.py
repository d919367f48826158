"""Write the public names of JAX 0.10.2's modules, one file per module.

Run in a separate venv that has ``jax[cpu]==0.10.2`` (JAX is never a
dependency of openjax): ``python tests/data/jax_names/generate.py``.
"""
import importlib
import pathlib

import jax

MODULES = [
  "jax", "jax.numpy", "jax.numpy.linalg", "jax.numpy.fft", "jax.lax", "jax.lax.linalg",
  "jax.random", "jax.nn", "jax.nn.initializers", "jax.image", "jax.sharding", "jax.debug",
  "jax.tree_util", "jax.tree", "jax.flatten_util", "jax.dtypes", "jax.errors",
  "jax.experimental.checkify", "jax.experimental.shard_map", "jax.example_libraries.optimizers",
  "jax.example_libraries.stax", "jax.scipy.special", "jax.scipy.stats", "jax.scipy.linalg",
  "jax.scipy.optimize", "jax.scipy.fft", "jax.scipy.ndimage", "jax.scipy.integrate",
  "jax.scipy.interpolate", "jax.scipy.spatial.transform", "jax.scipy.cluster.vq",
  "jax.scipy.signal", "jax.scipy.sparse.linalg",
]
STATS = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
         "gamma", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
         "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "t",
         "truncnorm", "uniform", "vonmises", "wrapcauchy"]

here = pathlib.Path(__file__).parent
assert jax.__version__ == "0.10.2", jax.__version__
for name in MODULES + [f"jax.scipy.stats.{d}" for d in STATS]:
  try:
    mod = importlib.import_module(name)
  except ImportError as e:
    print("skip", name, e)
    continue
  names = sorted(n for n in dir(mod) if not n.startswith("_")
                 and not (type(getattr(mod, n)).__name__ == "module"
                          and not name.startswith("jax.scipy.stats")))
  (here / f"{name}.txt").write_text("\n".join(names) + "\n")
  print(name, len(names))
