"""Which primitives the SPMD partition (control/spmd.py) runs per device:
the primitive itself on each device's pieces, its parameters unchanged
(``broadcast_in_dim`` and ``reshape`` get local shapes), given the layout
its sharding rule gives. Others are computed whole where they are needed.
"""
from __future__ import annotations

from openjax._src.core.sharding import dim_axes

# Per device whatever the (rule-accepted) layouts.
_ALWAYS = frozenset(["broadcast_in_dim", "reshape", "transpose", "squeeze", "cumsum", "cumprod",
                     "cummax", "cummin", "cumlogsumexp", "top_k"])


def _alike(specs) -> bool:
  return all(s == specs[0] for s in specs)


def _window_whole_on_split(specs, params) -> bool:
  """A windowed operation is per device where its operands are laid out
  alike and every split dimension has a trivial window (size and stride 1,
  no padding or dilation)."""
  if not _alike(specs):
    return False
  ones = (1,) * len(specs[-1])
  return all(params["window_dimensions"][d] == 1 and params["window_strides"][d] == 1
             and tuple(params["padding"][d]) == (0, 0)
             and params.get("base_dilation", ones)[d] == 1
             and params.get("window_dilation", ones)[d] == 1
             for d, p in enumerate(specs[-1]) if p is not None)


def _conv_batch_only(specs, params) -> bool:
  """A conv is per device on a split batch: the kernel whole, only the
  input's batch dimension split, the result laid out as the input."""
  lhs_spec, _, out_spec = params["dimension_numbers"]
  return (all(p is None for p in specs[1]) and tuple(lhs_spec) == tuple(out_spec)
          and params["batch_group_count"] == 1
          and all(p is None for d, p in enumerate(specs[0]) if d != lhs_spec[0]))


def _fft_whole_transformed(specs, params) -> bool:
  spec = specs[0]
  return all(p is None for p in spec[len(spec) - len(params["fft_lengths"]):])


# Per device when the operands' layouts pass the test.
_WHEN = {
    "sort": lambda specs, params: _alike(specs),
    "fft": _fft_whole_transformed,
    "reduce_window_sum": _window_whole_on_split,
    "reduce_window_max": _window_whole_on_split,
    "reduce_window_min": _window_whole_on_split,
    "select_and_gather_add": _window_whole_on_split,
    "select_and_scatter_add": _window_whole_on_split,
    "conv_general_dilated": _conv_batch_only,
}


def is_local(name: str, specs: list, params: dict) -> bool:
  """Whether primitive ``name`` runs per device on operands laid out by
  ``specs`` (one spec per operand)."""
  if name in _ALWAYS:
    return True
  when = _WHEN.get(name)
  return when is not None and when(specs, params)


__all__ = ["dot_gathered_specs", "is_local"]


def dot_gathered_specs(specs: list, params) -> list:
  """Operand layouts, most split first, under which a ``dot_general`` whose
  operands split their contracting dimensions differently runs per device,
  as XLA's partitioner does it: the contracting dimensions gathered, the
  free and batch ones kept (``v @ v`` of ``v`` split by rows stays split by
  rows); then also the rhs whole along axes the lhs keeps (``v @ v.T``)."""
  (lc, rc), _ = params["dimension_numbers"]
  lhs, rhs = (tuple(None if d in dims else p for d, p in enumerate(spec))
              for spec, dims in zip(specs, (lc, rc)))
  lhs_axes = {a for p in lhs for a in dim_axes(p)}
  return [[lhs, rhs], [lhs, tuple(None if set(dim_axes(p)) & lhs_axes else p for p in rhs)]]
