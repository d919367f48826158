"""Reduction family: monoid reductions over axes, argmin/argmax,
cumulative reductions (``reductions``), monoid window reductions and
select_and_gather/select_and_scatter (the window primitives)."""
