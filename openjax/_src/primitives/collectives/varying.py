"""Varying manual axes (JAX's "vma" types) inside ``shard_map``.

With ``check_vma`` (the default) every value inside a ``shard_map`` body has
in its type the set of manual mesh axes it varies over
(``ShapedArray.vma``, printed ``f32[3]{V:i}``): an input varies over the
axes its in_spec names, and each equation's results vary over the union of
its operands' axes, except where a collective changes the set
(``vma_rule``). Two primitives exist only for these types, as in JAX 0.10.2:

* ``pvary`` (``lax.pcast(x, axes, to='varying')``): an invariant value
  becomes varying over ``axes``. Its value is unchanged; its transpose is a
  ``psum_invariant`` (the cotangents of the devices' copies add up).
* ``psum_invariant``: ``lax.psum`` of a value varying over the summed axes
  (the result is invariant over them). Its transpose is ``pvary``.

While a check_vma body is traced (``checking_vma``), staging makes operand
types agree the way JAX does: an operation whose array operands vary over
different axes gets a ``pvary`` on the less varying ones, and a collective
that needs a varying operand (``vma_needs``) gets one too
(``interpreters/staging.py``). Outside such a trace (vmap, pmap, and
shard_map with check_vma=False) the types stay empty and nothing is
inserted.

The vma rules of the collectives defined in ``collectives.py`` are set here
(beside the two primitives whose meaning they share), so that file keeps
its size.
"""
from __future__ import annotations

import contextlib
import threading

from openjax._src.core import Primitive
from openjax._src.core.sharding_rules import MANUAL_AXES_ONLY
from openjax._src.primitives.base.structural import deflinear
from openjax._src.primitives.collectives.all_to_all import all_to_all_p
from openjax._src.primitives.collectives.collectives import (
    _check_axis_names, _named, _names, all_gather_p, axis_index_p, pbroadcast_p, pmax_p, pmin_p,
    ppermute_p, psum_impl, psum_p, reduce_scatter_p)

__all__ = ["pvary_p", "psum_invariant_p", "pvary", "psum_invariant", "checking_vma",
           "vma_checked_axes", "vma_of"]


# ---------------------------------------------------------- the check context
class _Checked(threading.local):
  def __init__(self):
    self.axes = frozenset()


_checked = _Checked()


@contextlib.contextmanager
def checking_vma(axes):
  """Trace a ``shard_map`` body with ``check_vma``: the manual ``axes`` are
  typed (JAX's ``config._check_vma`` inside the body). Axes of an enclosing
  check stay checked."""
  previous = _checked.axes
  _checked.axes = previous | frozenset(axes)
  try:
    yield
  finally:
    _checked.axes = previous


@contextlib.contextmanager
def not_checking_vma():
  """A body traced without ``check_vma`` (its values carry no vma types)."""
  previous = _checked.axes
  _checked.axes = frozenset()
  try:
    yield
  finally:
    _checked.axes = previous


def vma_checked_axes() -> frozenset:
  return _checked.axes


def vma_of(x) -> frozenset:
  aval = getattr(x, "aval", None)
  return getattr(aval, "vma", frozenset())


# ------------------------------------------------------------------- pvary
pvary_p = Primitive("pvary", kind="linear")


def pvary(x, axes: tuple):
  return pvary_p.bind1(x, axes=tuple(axes))


@pvary_p.def_impl
def _pvary_impl(x, *, axes):
  # Every device holds its own copy already: the value is unchanged.
  return [x]


@pvary_p.def_abstract_eval
def _pvary_abstract_eval(x, *, axes):
  # (Whether the operand was invariant over ``axes`` is lax.pcast's check:
  # the eager and per-device evaluations see untyped values here.)
  _check_axis_names(axes, "pvary")
  return [x.with_vma(x.vma | frozenset(axes))]


pvary_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)


pvary_p.batch_needs_axis = True


@pvary_p.def_batch
def _pvary_batch(vals, dims, axis_data, *, axes):
  # Mapping a mesh axis's devices (one program for the whole mesh): over
  # that axis the value just stays as it is.
  rest = tuple(a for a in axes if a != axis_data.name)
  if not rest:
    return [vals[0]], [dims[0]]
  return pvary_p.bind(vals[0], axes=rest), [dims[0]]


def _pvary_transpose(ct, x, *, axes):
  return [psum_invariant_p.bind1(ct, axes=axes)]


deflinear(pvary_p, _pvary_transpose)
pvary_p.def_lower(lambda ctx, x, *, axes: [x])


# ----------------------------------------------------------- psum_invariant
psum_invariant_p = Primitive("psum_invariant", kind="linear")
psum_invariant_p.batch_needs_axis = True


def psum_invariant(x, axes: tuple):
  return psum_invariant_p.bind1(x, axes=tuple(axes))


@psum_invariant_p.def_impl
def _psum_invariant_impl(x, *, axes):
  return psum_impl(x, axes=axes, axis_index_groups=None)


@psum_invariant_p.def_abstract_eval
def _psum_invariant_abstract_eval(x, *, axes):
  _check_axis_names(axes, "psum")
  return [x.with_vma(x.vma - frozenset(axes))]


psum_invariant_p.mark_not_applicable("sharding_rule", MANUAL_AXES_ONLY)


@psum_invariant_p.def_batch
def _psum_invariant_batch(vals, dims, axis_data, *, axes):
  if axis_data.name in axes:
    # Mapping the devices of a mesh axis (one program for the whole mesh):
    # the sum over that axis is psum's over the batch dimension.
    return psum_p.batch(vals, dims, axis_data, axes=axes, axis_index_groups=None)
  return psum_invariant_p.bind(vals[0], axes=axes), [dims[0]]


def _psum_invariant_transpose(ct, x, *, axes):
  # Every device's share of the sum gets the (invariant) cotangent.
  return [pvary_p.bind1(ct, axes=axes)]


deflinear(psum_invariant_p, _psum_invariant_transpose)


@psum_invariant_p.def_lower
def _psum_invariant_lower(ctx, x, *, axes):
  return psum_p.lower(ctx, x, axes=axes, axis_index_groups=None)


# ------------------------------------------------ the collectives' vma rules
# vma_rule(in_vma, **params) -> the results' vma from the union of the
# operands'; vma_needs(**params) -> the axes a collective's operand must
# vary over (staging inserts a pvary where it does not).
def _reduced(in_vma, *, axes, **params):
  return in_vma - frozenset(_named(axes))


def _stays_varying(name_param: str):
  # Over axes a check_vma body types (not those of vmap, pmap or an
  # unchecked shard_map) the result varies.
  def rule(in_vma, **params):
    return in_vma | (frozenset(_names(params[name_param])) & _checked.axes)
  return rule


def _needs(name_param: str, named=_names):
  return lambda **params: frozenset(named(params[name_param]))


psum_p.vma_rule = _reduced
pmax_p.vma_rule = pmin_p.vma_rule = _reduced
psum_invariant_p.vma_rule = _reduced
pvary_p.vma_rule = lambda in_vma, *, axes: in_vma | frozenset(axes)
axis_index_p.vma_rule = _stays_varying("axis_name")
for _p in (all_gather_p, reduce_scatter_p, all_to_all_p, ppermute_p, pbroadcast_p):
  _p.vma_rule = _stays_varying("axis_name")
  _p.vma_needs = _needs("axis_name")
psum_invariant_p.vma_needs = _needs("axes", _named)
pmax_p.vma_needs = pmin_p.vma_needs = _needs("axes", _named)
