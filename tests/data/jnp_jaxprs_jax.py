"""Writes JAX 0.10.2's printed jaxprs of the cases in ``tests/jaxpr_cases*.py``:
``tests/jaxpr_cases.py`` -> ``jaxprs_jax.json``, ``tests/jaxpr_cases_NAME.py``
-> ``jaxprs_NAME_jax.json``. Run in a venv with JAX installed, from the
repository root: python tests/data/jnp_jaxprs_jax.py [NAME ...] (all by default)."""
import importlib
import json
import pathlib
import sys

import jax

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

for path in sorted((ROOT / "tests").glob("jaxpr_cases*.py")):
  group = path.stem[len("jaxpr_cases"):].lstrip("_")
  if sys.argv[1:] and group not in sys.argv[1:]:
    continue
  module = importlib.import_module("tests." + path.stem)
  out = {"jax_version": jax.__version__}
  out.update({name: thunk() for name, thunk in module.cases(jax).items()})
  target = path.parent / "data" / (f"jaxprs_{group}_jax.json" if group else "jaxprs_jax.json")
  target.write_text(json.dumps(out, indent=1) + "\n")
