"""The primitive conformance harness: one op table, several columns.

Each ``OpRow`` names an openjax function, a maker of sample NumPy inputs and a
NumPy/SciPy reference. Columns check the function eager (against the
reference) and under ``jit`` (against eager); later issues add ``vmap`` (against
a Python loop) and JVP/VJP (against finite differences) from the same rows.
Row modules are ``tests/ops/rows_*.py``, each defining ``ROWS``.
"""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Any, Callable

import numpy as np

import openjax
from openjax._src import dtypes
from openjax._src.core import jaxprs_in_params

_DEFAULT_TOL = {
    np.dtype(np.float16): (2e-3, 1e-2), dtypes.bfloat16: (1e-2, 5e-2),
    np.dtype(np.float32): (1e-6, 2e-5), np.dtype(np.float64): (1e-12, 1e-10),
    np.dtype(np.complex64): (1e-6, 2e-5), np.dtype(np.complex128): (1e-12, 1e-10),
}


@dataclasses.dataclass
class OpRow:
  """One entry of the op table.

  fn: the openjax function under test (positional array operands).
  args: ``rng -> tuple`` of sample inputs (NumPy arrays or Python scalars).
  ref: the NumPy/SciPy reference on the same inputs (None: no eager oracle).
  out_dtype: the expected result dtype when it differs from the reference's
    canonicalised dtype (e.g. jnp.mean of ints); ``check_dtype=False`` skips.
  atol/rtol: tolerances overriding the per-dtype defaults.
  jit/vmap/grad/compile: which columns apply (grad: differentiable in float
    args; compile: the IREE-compiled column, ``"alone"`` to compile the row in
    a module of its own); vjp=False keeps only the JVP
    half of the grad column (forward-mode-only functions: while_loop).
  """
  name: str
  fn: Callable
  args: Callable[[np.random.Generator], tuple]
  ref: Callable | None = None
  out_dtype: Any = None
  check_dtype: bool = True
  atol: float | None = None
  rtol: float | None = None
  jit: bool = True
  vmap: bool = True
  grad: bool = False
  vjp: bool = True
  compile: bool | str = True   # False only where IREE cannot run it (say why in a comment)

  def __repr__(self):
    return self.name


def all_rows() -> list[OpRow]:
  """Every row of every ``tests/ops/rows_*.py`` module."""
  import tests.ops as pkg  # noqa: PLC0415 - test-time discovery of row modules
  rows = []
  for info in sorted(pkgutil.iter_modules(pkg.__path__), key=lambda i: i.name):
    if info.name.startswith("rows_"):
      mod = importlib.import_module(f"tests.ops.{info.name}")
      rows.extend(mod.ROWS)
  names = [r.name for r in rows]
  dup = {n for n in names if names.count(n) > 1}
  assert not dup, f"duplicate op-table row names: {sorted(dup)}"
  return rows


def tolerance(dtype, row: OpRow) -> tuple[float, float]:
  atol, rtol = _DEFAULT_TOL.get(np.dtype(dtype), (0.0, 0.0))
  return (row.atol if row.atol is not None else atol,
          row.rtol if row.rtol is not None else rtol)


def assert_close(actual, expected, row: OpRow, *, check_dtype: bool = True,
                 expected_dtype=None) -> None:
  """Compare pytrees leaf by leaf with the row's tolerance; optionally check
  dtypes (the reference's dtype is canonicalised for x64 first)."""
  a_leaves = openjax.tree_util.tree_leaves(actual)
  e_leaves = openjax.tree_util.tree_leaves(expected)
  assert len(a_leaves) == len(e_leaves), (len(a_leaves), len(e_leaves))
  for a, e in zip(a_leaves, e_leaves):
    a_np, e_np = np.asarray(a), np.asarray(e)
    if check_dtype:
      want = np.dtype(expected_dtype) if expected_dtype is not None else \
          dtypes.canonicalize_dtype(e_np.dtype)
      assert a_np.dtype == want, f"{row.name}: dtype {a_np.dtype} != expected {want}"
    assert a_np.shape == e_np.shape, f"{row.name}: shape {a_np.shape} != {e_np.shape}"
    atol, rtol = tolerance(a_np.dtype, row)
    if a_np.dtype.kind in "fc" or a_np.dtype in dtypes.custom_float_dtypes:
      np.testing.assert_allclose(a_np.astype(np.complex128 if a_np.dtype.kind == "c" else np.float64),
                                 e_np.astype(np.complex128 if e_np.dtype.kind == "c" else np.float64),
                                 atol=atol, rtol=rtol, equal_nan=True, err_msg=row.name)
    else:
      np.testing.assert_array_equal(a_np, e_np, err_msg=row.name)


def primitives_used(fn: Callable, args: tuple) -> set[str]:
  """Names of the primitives ``fn`` stages for ``args`` (nested jaxprs included)."""
  closed = openjax.make_jaxpr(fn)(*args)
  names, stack = set(), [closed.jaxpr]
  while stack:
    j = stack.pop()
    for eqn in j.eqns:
      names.add(eqn.primitive.name)
      stack.extend(jaxprs_in_params(eqn.params))
  return names


# ------------------------------------------------------------- vmap column
def is_batchable(a) -> bool:
  return isinstance(a, np.ndarray)


def vmap_cases(args: tuple) -> list[tuple]:
  """in_axes to try: every array batched at 0, 1 and -1, and each array alone
  at 0 with the others unbatched."""
  idx = [i for i, a in enumerate(args) if is_batchable(a)]
  cases = []
  for ax in (0, 1, -1):
    if ax == 1 and any(args[i].ndim < 1 for i in idx):
      continue
    cases.append(tuple(ax if i in idx else None for i in range(len(args))))
  if len(idx) > 1:
    for j in idx:
      cases.append(tuple(0 if i == j else None for i in range(len(args))))
  return [c for c in dict.fromkeys(cases) if any(a is not None for a in c)]


def batched_inputs(row: OpRow, in_axes: tuple, size: int = 3):
  """Stacked inputs for ``in_axes`` and the per-example argument lists."""
  samples = [row.args(np.random.default_rng(k)) for k in range(size)]
  stacked = []
  for i, ax in enumerate(in_axes):
    if ax is None:
      stacked.append(samples[0][i])
    else:
      stacked.append(np.stack([s[i] for s in samples], axis=ax))
  per_example = [[s[i] if ax is not None else samples[0][i] for i, ax in enumerate(in_axes)]
                 for s in samples]
  return stacked, per_example


def stack_outputs(outs: list):
  leaves = [openjax.tree_util.tree_leaves(o) for o in outs]
  tree = openjax.tree_util.tree_structure(outs[0])
  return openjax.tree_util.tree_unflatten(
      tree, [np.stack([np.asarray(l[k]) for l in leaves]) for k in range(len(leaves[0]))])


# ------------------------------------------------------------- grad columns
def float_arg_indices(args: tuple) -> list[int]:
  return [i for i, a in enumerate(args) if isinstance(a, np.ndarray)
          and a.dtype in (np.float32, np.float64, np.complex64, np.complex128)]


def upcast(a):
  if isinstance(a, np.ndarray) and a.dtype == np.float32:
    return a.astype(np.float64)
  if isinstance(a, np.ndarray) and a.dtype == np.complex64:
    return a.astype(np.complex128)
  return a
