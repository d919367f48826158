"""make_jaxpr prints JAX's text for the cases of ``jaxpr_cases*.py``: JAX
0.10.2's texts are data (``data/jaxprs*_jax.json``, written by
``data/jnp_jaxprs_jax.py`` with JAX installed)."""
import importlib
import json
import pathlib

import numpy as np
import pytest

import openjax as jax
import openjax.numpy as jnp

_TESTS = pathlib.Path(__file__).parent


def _groups() -> dict:
  """module stem -> (its cases under openjax, JAX's texts)."""
  out = {}
  for path in sorted(_TESTS.glob("jaxpr_cases*.py")):
    group = path.stem[len("jaxpr_cases"):].lstrip("_")
    data = _TESTS / "data" / (f"jaxprs_{group}_jax.json" if group else "jaxprs_jax.json")
    out[path.stem] = (importlib.import_module("tests." + path.stem).cases(jax),
                      json.loads(data.read_text()))
  return out


_GROUPS = _groups()


@pytest.mark.parametrize("stem", sorted(_GROUPS))
def test_every_case_has_jaxs_text(stem):
  cases, texts = _GROUPS[stem]
  assert texts["jax_version"] == "0.10.2"
  assert sorted(cases) == sorted(k for k in texts if k != "jax_version")


@pytest.mark.parametrize("stem,name", [(s, n) for s, (c, _) in sorted(_GROUPS.items())
                                       for n in sorted(c)])
def test_prints_jaxs_jaxpr(stem, name):
  cases, texts = _GROUPS[stem]
  assert cases[name]() == texts[name]


def test_select_values_eager_and_jitted():
  # The first True condition's choice, else the default; conditions of
  # other dtypes count as nonzero (NaN too); broadcasting of every operand.
  rng = np.random.default_rng(0)
  a = rng.standard_normal((4, 5)).astype(np.float32)
  a[0, 0] = np.nan
  conds = [a > 0.5, np.nan_to_num(a * 10).astype(np.int32) % 3,
           np.array([1.0, 0.0, np.nan, 0.0, 2.0], np.float32)]
  choices = [a, -a, np.float32(7)]
  want = np.select([np.asarray(c).astype(bool) for c in conds], choices, default=-1.0)
  for f in (jnp.select, jax.jit(jnp.select)):
    for _ in range(2):   # the eager program's first and cached calls
      got = f(conds, choices, -1.0)
      assert got.dtype == np.float32 and got.shape == (4, 5)
      np.testing.assert_array_equal(np.asarray(got), want)
  assert jnp.select([True], [np.int8(3)], 1).dtype == np.int8
  with pytest.raises(ValueError, match="condlist must have length equal to choicelist"):
    jnp.select([a > 0], [a, a])
  with pytest.raises(ValueError, match="condlist must be non-empty"):
    jnp.select([], [])
