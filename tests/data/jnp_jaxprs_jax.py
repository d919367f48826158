"""Writes jnp_jaxprs_jax.json: JAX 0.10.2's printed jaxprs of the cases in
``tests/jaxpr_cases.py``. Run in a venv with JAX installed, from the
repository root: python tests/data/jnp_jaxprs_jax.py"""
import json
import pathlib
import sys

import jax

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2]))
from tests.jaxpr_cases import cases  # noqa: E402

out = {"jax_version": jax.__version__}
out.update({name: thunk() for name, thunk in cases(jax).items()})
(pathlib.Path(__file__).parent / "jnp_jaxprs_jax.json").write_text(json.dumps(out, indent=1) + "\n")
