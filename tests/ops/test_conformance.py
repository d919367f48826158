"""Columns of the conformance harness over the op table (see harness.py)."""
import numpy as np
import pytest

import openjax as jax
from tests.ops.harness import (all_rows, assert_close, batched_inputs, float_arg_indices,
                               stack_outputs, upcast, vmap_cases)

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


# ---------------------------------------------------------------- vmap
def _vmap_params():
  out = []
  for r in ROWS:
    if not r.vmap:
      continue
    for axes in vmap_cases(_args(r)):
      out.append(pytest.param(r, axes, id=f"{r.name}-{axes}"))
  return out


@pytest.mark.parametrize("row,in_axes", _vmap_params())
def test_vmap_matches_loop(row, in_axes):
  stacked, per_example = batched_inputs(row, in_axes)
  got = jax.vmap(row.fn, in_axes=in_axes)(*stacked)
  expected = stack_outputs([row.fn(*ex) for ex in per_example])
  assert_close(got, expected, row, check_dtype=False)


# ------------------------------------------------------------ gradients
def _grad_setup(row):
  args = tuple(upcast(a) for a in _args(row))
  idx = float_arg_indices(args)

  def f(*dyn):
    full = list(args)
    for i, d in zip(idx, dyn):
      full[i] = d
    return row.fn(*full)
  return f, [args[i] for i in idx]


@pytest.mark.parametrize("row", [r for r in ROWS if r.grad], ids=repr)
def test_jvp_matches_finite_differences(row):
  with jax.enable_x64():
    f, dyn = _grad_setup(row)
    jax.test_util.check_grads(f, dyn, order=2, modes=("fwd",), atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("row", [r for r in ROWS if r.grad and r.vjp], ids=repr)
def test_vjp_matches_finite_differences(row):
  with jax.enable_x64():
    f, dyn = _grad_setup(row)
    jax.test_util.check_grads(f, dyn, order=2, modes=("rev",), atol=1e-4, rtol=1e-4)


# ------------------------------------------------------ compiled (IREE) column
# Rows are compiled in groups: one IREE module evaluates a whole chunk of rows
# (a compile costs ~0.3 s, so one module per row would dominate the suite).
CHUNK = 24


def _compile_chunks():
  rows = [r for r in ROWS if r.jit and getattr(r, "compile", True)]
  by_module: dict = {}
  for r in rows:
    by_module.setdefault(r.fn.__module__ if hasattr(r.fn, "__module__") else "", []).append(r)
  chunks = []
  for mod, rs in sorted(by_module.items()):
    together = [r for r in rs if r.compile != "alone"]
    for i in range(0, len(together), CHUNK):
      chunks.append(pytest.param(together[i:i + CHUNK],
                                 id=f"{mod.rsplit('.', 1)[-1]}-{i // CHUNK}"))
    chunks.extend(pytest.param([r], id=r.name) for r in rs if r.compile == "alone")
  return chunks


def _traceable(a) -> bool:
  return isinstance(a, (np.ndarray, np.generic, int, float, complex, bool))


@pytest.mark.parametrize("chunk", _compile_chunks())
def test_compiled_matches_eager(chunk):
  all_args = [_args(r) for r in chunk]
  # Array arguments become inputs of the compiled module; anything else
  # (modes, shapes) is closed over as a static value.
  flat_args = [a for args in all_args for a in args if _traceable(a)]

  def run_all(*flat):
    outs, it = [], iter(flat)
    for r, args in zip(chunk, all_args):
      outs.append(r.fn(*[next(it) if _traceable(a) else a for a in args]))
    return outs

  eager = [r.fn(*args) for r, args in zip(chunk, all_args)]
  with jax.config.override("openjax_executor", "iree"), \
       jax.config.override("openjax_tiered_compilation", False):
    compiled = jax.jit(run_all)(*flat_args)
  # Computed by IREE (results over IREE buffers), not by the interpreter.
  leaves = [x for x in jax.tree_util.tree_leaves(compiled) if isinstance(x, jax.Array)]
  assert any(x._buffer is not None for x in leaves), "the chunk did not run compiled"
  for r, e, c in zip(chunk, eager, compiled):
    assert_close(c, e, r, check_dtype=True)
