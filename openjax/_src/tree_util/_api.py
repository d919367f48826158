"""Pytree operations built on the core and key paths: ``tree_map`` (and
``tree_map_with_path``), ``tree_transpose``, the reductions, structural
diagnostics (prefix/equality errors) and prefix broadcasting.

Imports ``_flatten`` and ``_paths``; nothing imports it but the package.
"""
from __future__ import annotations

import difflib
import functools
import textwrap
import warnings
from collections.abc import Callable, Iterable
from typing import Any

from openjax._src.tree_util._flatten import (
    _LEAF, PyTreeDef, T, _flatten, _flatten_pred, _is_leaf_result, _lookup,
    _make_treedef, _unflatten, tree_flatten, tree_leaves, tree_structure,
    tree_unflatten)
from openjax._src.tree_util._paths import (
    flatten_one_level, flatten_one_level_with_keys, keystr,
    tree_flatten_with_path)

def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[[Any], bool] | None = None) -> Any:
  """Maps ``f`` over the leaves of ``tree`` (and of ``rest``), keeping structure.

  Each tree in ``rest`` must have ``tree``'s structure or have it as a prefix:
  where ``tree`` has a leaf, ``f`` receives the whole corresponding subtree.
  """
  leaves = []
  root = (_flatten(tree, leaves) if is_leaf is None
          else _flatten_pred(tree, leaves, is_leaf))
  if rest:
    treedef = _make_treedef(root, len(leaves))
    columns = [leaves]
    for r in rest:
      try:
        columns.append(treedef.flatten_up_to(r))
      except Exception as e:
        err = next(_prefix_error((), tree, r, is_leaf), None)
        raise (err("tree_map tree") if err is not None else e) from None
    mapped = map(f, *columns)
  else:
    mapped = map(f, leaves)
  if root is None:
    return next(mapped)
  return _unflatten(root, mapped.__next__)


def tree_transpose(outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None,
                   pytree_to_transpose: Any) -> Any:
  """Turns a tree of trees (outer structure over inner) inside out.

  ``inner_treedef=None`` infers the inner structure from the first subtree.
  """
  flat, treedef = tree_flatten(pytree_to_transpose)
  if inner_treedef is None:
    inner_treedef = tree_structure(
        outer_treedef.flatten_up_to(pytree_to_transpose)[0])
  inner_size = inner_treedef.num_leaves
  outer_size = outer_treedef.num_leaves
  if treedef.num_leaves != inner_size * outer_size:
    expected = outer_treedef.compose(inner_treedef)
    raise TypeError(f"Mismatch\n{treedef}\n != \n{expected}")
  rows = [flat[i * inner_size:(i + 1) * inner_size] for i in range(outer_size)]
  subtrees = [outer_treedef.unflatten(col) for col in zip(*rows)]
  return inner_treedef.unflatten(subtrees)


class Unspecified:
  """Sentinel for an omitted ``initializer``/``identity``."""


_UNSPECIFIED = Unspecified()


def tree_reduce(function: Callable[[T, Any], T], tree: Any,
                initializer: Any = _UNSPECIFIED,
                is_leaf: Callable[[Any], bool] | None = None) -> T:
  """``functools.reduce`` over the leaves of a pytree."""
  if isinstance(initializer, Unspecified):
    return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf))
  return functools.reduce(function, tree_leaves(tree, is_leaf=is_leaf),
                          initializer)


def _parallel_reduce(seq, op, identity):
  if not seq:
    if isinstance(identity, Unspecified):
      raise TypeError(
          "Must specify identity for parallel reduction of empty sequence.")
    return identity
  if len(seq) == 1:
    return seq[0]
  mid = len(seq) // 2
  return op(_parallel_reduce(seq[:mid], op, identity),
            _parallel_reduce(seq[mid:], op, identity))


def tree_reduce_associative(operation: Callable[[T, T], T], tree: Any, *,
                            identity: Any = _UNSPECIFIED,
                            is_leaf: Callable[[Any], bool] | None = None) -> T:
  """Reduces the leaves with an associative ``operation`` as a balanced tree."""
  return _parallel_reduce(tree_leaves(tree, is_leaf=is_leaf), operation,
                          identity)


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None
             ) -> bool:
  """True if all leaves are truthy (``all(tree_leaves(tree))``)."""
  return all(tree_leaves(tree, is_leaf=is_leaf))


def tree_map_with_path(f: Callable[..., Any], tree: Any, *rest: Any,
                       is_leaf: Callable[..., bool] | None = None,
                       is_leaf_takes_path: bool = False) -> Any:
  """Like ``tree_map``, but calls ``f(key_path, leaf, *rest_leaves)``."""
  pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
  columns = [[p for p, _ in pairs], [x for _, x in pairs]]
  for r in rest:
    try:
      columns.append(treedef.flatten_up_to(r))
    except Exception as e:
      err = next(_prefix_error((), tree, r, is_leaf), None)
      raise (err("tree_map_with_path tree") if err is not None else e) from None
  return treedef.unflatten(map(f, *columns))


# ---------------------------------------------------------------------------
# Structural diagnostics
# ---------------------------------------------------------------------------

def _is_strict_leaf(x, is_leaf) -> bool:
  if is_leaf is not None and _is_leaf_result(is_leaf(x)):
    return True
  return _lookup(x).kind == _LEAF


def _child_keys(tree) -> tuple:
  return tuple(k for k, _ in flatten_one_level_with_keys(tree)[0])


def _prefix_error(key_path, prefix_tree, full_tree, is_leaf=None):
  """Yields ``name -> ValueError`` callables describing why ``prefix_tree`` is
  not a tree prefix of ``full_tree`` (nothing if it is one)."""
  if _is_strict_leaf(prefix_tree, is_leaf):  # a leaf prefixes anything
    return
  where = lambda name: f"    {name}{keystr(key_path)}\n"
  if type(prefix_tree) != type(full_tree):
    yield lambda name: ValueError(
        "pytree structure error: different types at key path\n" + where(name) +
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        "but at the same key path the full pytree has a subtree of different "
        f"type\n    {type(full_tree)}.")
    return
  prefix_children, prefix_meta = flatten_one_level(prefix_tree)
  full_children, full_meta = flatten_one_level(full_tree)
  prefix_children, full_children = tuple(prefix_children), tuple(full_children)
  prefix_keys, full_keys = _child_keys(prefix_tree), _child_keys(full_tree)
  if isinstance(prefix_tree, (list, tuple)):
    if len(prefix_tree) != len(full_tree):
      ty = type(prefix_tree).__name__
      yield lambda name: ValueError(
          f"pytree structure error: different lengths of {ty} at key path\n" +
          where(name) +
          f"At that key path, the prefix pytree {name} has a subtree of type "
          f"{ty} of length {len(prefix_tree)}, but the full pytree has a "
          f"subtree of the same type but of length {len(full_tree)}.")
      return
  elif len(prefix_children) != len(full_children):
    try:
      diff = set(prefix_keys).symmetric_difference(set(full_keys))
    except Exception:
      diff = None
    yield lambda name: ValueError(
        "pytree structure error: different numbers of pytree children at key "
        "path\n" + where(name) +
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        f"with {len(prefix_children)} child keys\n"
        f"    {' '.join(str(k) for k in prefix_keys)}\n"
        "but at the same key path the full pytree has a subtree of the same "
        f"type but with {len(full_children)} child keys\n"
        f"    {' '.join(str(k) for k in full_keys)}\n" +
        ("" if diff is None else
         "so the symmetric difference on key sets is\n"
         f"    {' '.join(str(k) for k in diff)}"))
    return
  if prefix_meta != full_meta:
    p_str, f_str = str(prefix_meta), str(full_meta)
    meta_diff = textwrap.indent("\n".join(
        difflib.ndiff(p_str.splitlines(), f_str.splitlines())), prefix="    ")
    yield lambda name: ValueError(
        "pytree structure error: different pytree metadata at key path\n" +
        where(name) +
        f"At that key path, the prefix pytree {name} has a subtree of type\n"
        f"    {type(prefix_tree)}\n"
        f"with metadata\n    {p_str}\n"
        "but at the same key path the full pytree has a subtree of the same "
        f"type but with metadata\n    {f_str}\n"
        f"so the diff in the metadata at these pytree nodes is\n{meta_diff}")
    return
  # Same node at the root: the problem must be further down.
  for k, p, f in zip(prefix_keys, prefix_children, full_children):
    yield from _prefix_error((*key_path, k), p, f, is_leaf)


def prefix_errors(prefix_tree: Any, full_tree: Any,
                  is_leaf: Callable[[Any], bool] | None = None,
                  ) -> list[Callable[[str], ValueError]]:
  """All reasons ``prefix_tree`` is not a prefix of ``full_tree``, as
  callables taking a name for the prefix tree (e.g. ``'in_axes'``)."""
  return list(_prefix_error((), prefix_tree, full_tree, is_leaf))


def equality_errors(tree1: Any, tree2: Any,
                    is_leaf: Callable[[Any], bool] | None = None,
                    ) -> Iterable[tuple[tuple, str, str, str]]:
  """Yields ``(key_path, thing1, thing2, explanation)`` for each structural
  difference between two pytrees."""
  yield from _equality_errors((), tree1, tree2, is_leaf)


def equality_errors_pytreedef(tree1: PyTreeDef, tree2: PyTreeDef
                              ) -> Iterable[tuple[tuple, str, str, str]]:
  """Like :func:`equality_errors`, for two treedefs."""
  leaf = _PytreeLeaf()
  return equality_errors(tree_unflatten(tree1, [leaf] * tree1.num_leaves),
                         tree_unflatten(tree2, [leaf] * tree2.num_leaves))


class _PytreeLeafMeta(type):
  def __repr__(cls):
    return "pytree leaf"


class _PytreeLeaf(metaclass=_PytreeLeafMeta):
  """Placeholder leaf; its type prints as 'pytree leaf' in error messages."""


def _children_str(t, n):
  return f"{type(t)} with {n} child{'ren' if n > 1 else ''}"


def _equality_errors(path, t1, t2, is_leaf):
  if _is_strict_leaf(t1, is_leaf) and _is_strict_leaf(t2, is_leaf):
    return
  if type(t1) != type(t2):
    yield path, str(type(t1)), str(type(t2)), "their Python types differ"
    return
  if isinstance(t1, (list, tuple)) and len(t1) != len(t2):
    name = type(t1).__name__
    yield (path, f"{name} of length {len(t1)}", f"{name} of length {len(t2)}",
           "the lengths do not match")
    return
  c1, meta1 = flatten_one_level(t1)
  c2, meta2 = flatten_one_level(t2)
  c1, c2 = tuple(c1), tuple(c2)
  k1, k2 = _child_keys(t1), _child_keys(t2)
  if len(c1) != len(c2):
    try:
      diff = " ".join(repr(k.key) for k in set(k1).symmetric_difference(k2))
    except Exception:
      diff = ""
    yield (path, _children_str(t1, len(c1)), _children_str(t2, len(c2)),
           "the numbers of children do not match" +
           (diff and f", with the symmetric difference of key sets: {{{diff}}}"))
    return
  if meta1 != meta2:
    yield (path, f"{type(t1)} with pytree metadata {meta1}",
           f"{type(t2)} with pytree metadata {meta2}",
           "the pytree node metadata does not match")
    return
  for k, a, b in zip(k1, c1, c2):
    yield from _equality_errors((*path, k), a, b, is_leaf)


# ---------------------------------------------------------------------------
# Broadcasting a prefix tree
# ---------------------------------------------------------------------------

def broadcast_prefix(prefix_tree: Any, full_tree: Any,
                     is_leaf: Callable[[Any], bool] | None = None) -> list:
  """For each leaf of ``full_tree``, the leaf of ``prefix_tree`` above it.

  ``prefix_tree`` must be a tree prefix of ``full_tree`` (e.g. ``in_axes``
  against the arguments); raises ValueError describing the mismatch otherwise.
  ``is_leaf`` applies to ``prefix_tree`` only.
  """
  prefix_leaves, prefix_def = tree_flatten(prefix_tree, is_leaf)
  try:
    subtrees = prefix_def.flatten_up_to(full_tree)
  except Exception:
    errors = prefix_errors(prefix_tree, full_tree, is_leaf)
    if not errors:
      raise
    raise errors[0]("broadcast_prefix prefix_tree") from None
  result = []
  for x, sub in zip(prefix_leaves, subtrees):
    result.extend([x] * tree_structure(sub).num_leaves)
  return result


def tree_broadcast(prefix_tree: Any, full_tree: Any,
                   is_leaf: Callable[[Any], bool] | None = None) -> Any:
  """Broadcasts ``prefix_tree`` to the structure of ``full_tree``: each leaf
  of the prefix is repeated over the corresponding subtree."""
  leaves = broadcast_prefix(prefix_tree, full_tree, is_leaf=is_leaf)
  return tree_structure(full_tree).unflatten(leaves)


def broadcast_flattened_prefix_with_treedef(
    prefix_leaves: list, prefix_treedef: PyTreeDef, full_treedef: PyTreeDef,
) -> list:
  """:func:`broadcast_prefix` for an already-flattened prefix and a treedef."""
  out = []

  def go(start, prefix, full):
    if prefix._root is None:  # a leaf of the prefix covers the whole subtree
      out.extend([prefix_leaves[start]] * full.num_leaves)
      return
    if full._root is None:
      raise ValueError("`prefix_treedef` is not a prefix of `full_treedef`")
    if prefix.node_data() != full.node_data():
      raise ValueError(f"expected {full.node_data()}, got "
                       f"{prefix.node_data()}")
    pcs, fcs = prefix.children(), full.children()
    if len(pcs) != len(fcs):
      raise ValueError("`prefix_treedef` is not a prefix of `full_treedef`")
    for pc, fc in zip(pcs, fcs):
      go(start, pc, fc)
      start += pc.num_leaves

  go(0, prefix_treedef, full_treedef)
  return out


# Old top-level pytree aliases (removed from JAX 0.6): ``jax.tree_map`` and
# friends still work, and warn. ``openjax/__init__.py`` uses this function as
# its module ``__getattr__``.
_DEPRECATED_TOP_LEVEL = {
    "tree_map": (tree_map, "jax.tree.map"), "tree_leaves": (tree_leaves, "jax.tree.leaves"),
    "tree_flatten": (tree_flatten, "jax.tree.flatten"),
    "tree_unflatten": (tree_unflatten, "jax.tree.unflatten"),
    "tree_structure": (tree_structure, "jax.tree.structure"),
    "tree_transpose": (tree_transpose, "jax.tree.transpose"),
    "tree_reduce": (tree_reduce, "jax.tree.reduce"), "tree_all": (tree_all, "jax.tree.all"),
}


def deprecated_top_level_alias(name: str):
  """``openjax.<name>`` for the removed top-level pytree aliases, with JAX's
  deprecation warning; any other name is an AttributeError."""
  if name in _DEPRECATED_TOP_LEVEL:
    fn, new = _DEPRECATED_TOP_LEVEL[name]
    warnings.warn(f"jax.{name} is deprecated: use {new} (or jax.tree_util.{name}) instead.",
                  DeprecationWarning, stacklevel=2)
    return fn
  raise AttributeError(f"module 'openjax' has no attribute {name!r}")
