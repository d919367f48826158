"""Columns of the conformance harness over the op table (see harness.py)."""
import numpy as np
import pytest

import openjax as jax
from tests.ops.harness import all_rows, assert_close

ROWS = all_rows()


def _args(row):
  return row.args(np.random.default_rng(0))


@pytest.mark.parametrize("row", [r for r in ROWS if r.ref is not None], ids=repr)
def test_eager_matches_reference(row):
  args = _args(row)
  out = row.fn(*args)
  expected = row.ref(*args)
  for leaf in jax.tree_util.tree_leaves(out):
    assert isinstance(leaf, jax.Array), f"{row.name} returned {type(leaf)}"
  assert_close(out, expected, row, check_dtype=row.check_dtype, expected_dtype=row.out_dtype)


@pytest.mark.parametrize("row", [r for r in ROWS if r.jit], ids=repr)
def test_jit_matches_eager(row):
  args = _args(row)
  eager = row.fn(*args)
  jitted = jax.jit(row.fn)(*args)
  assert_close(jitted, eager, row, check_dtype=False)
  for e, j in zip(jax.tree_util.tree_leaves(eager), jax.tree_util.tree_leaves(jitted)):
    assert np.asarray(e).dtype == np.asarray(j).dtype
    assert getattr(e, "weak_type", False) == getattr(j, "weak_type", False), row.name
