"""Second half of the pytree implementation: node registration, key paths
(``SequenceKey``, ``DictKey``, ..., ``keystr``, ``*_with_path``) and structural
diagnostics (prefix/equality errors, ``broadcast_prefix``).

Private: import it only through ``openjax._src.tree_util``, which imports this
module at its end (so that everything used here from it already exists).
"""
from __future__ import annotations

import collections
import dataclasses
import difflib
import functools
import operator
import textwrap
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any, TypeVar

from openjax._src.tree_util import (
    _CUSTOM, _DATACLASS, _DICT, _LEAF, _LIST, _NAMEDTUPLE, _NONE, _TUPLE,
    _WARN_LEAF_REG, KeyLeafPairs, PyTreeDef, _add_registration, _classify,
    _custom_flatten, _dispatch_get, _is_leaf_result, _items_and_data, _lookup,
    _make_treedef, _Registration, _sorted_keys, _warn_iterable_leaf,
    is_tree_node, tree_flatten, tree_structure, tree_unflatten)

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
H = TypeVar("H", bound=Hashable)

# Hash salts keep SequenceKey(1) and FlattenedIndexKey(1) from colliding.
_SEQUENCE_KEY_SALT = 1
_FLATTENED_INDEX_KEY_SALT = 42


class SequenceKey:
  """Key-path entry for an element of a tuple or list: ``SequenceKey(idx=0)``."""
  __slots__ = ("_idx",)
  __match_args__ = ("idx",)

  def __init__(self, idx: int):
    self._idx = idx if type(idx) is int else operator.index(idx)

  @property
  def idx(self) -> int:
    return self._idx

  def __str__(self):
    return f"[{self._idx}]"

  def __repr__(self):
    return f"SequenceKey(idx={self._idx})"

  def __eq__(self, other):
    return isinstance(other, SequenceKey) and self._idx == other._idx

  def __hash__(self):
    return self._idx + _SEQUENCE_KEY_SALT

  def __getstate__(self):
    return (self._idx,)

  def __setstate__(self, state):
    self._idx, = state


class DictKey:
  """Key-path entry for a mapping value: ``DictKey(key='a')``."""
  __slots__ = ("_key",)
  __match_args__ = ("key",)

  def __init__(self, key: Any):
    self._key = key

  @property
  def key(self) -> Any:
    return self._key

  def __str__(self):
    return f"[{self._key!r}]"

  def __repr__(self):
    return f"DictKey(key={self._key!r})"

  def __eq__(self, other):
    if not isinstance(other, DictKey):
      return False
    # Identity shortcut, like PyObject_RichCompareBool.
    return self._key is other._key or bool(self._key == other._key)

  def __hash__(self):
    return hash(self._key)

  def __getstate__(self):
    return (self._key,)

  def __setstate__(self, state):
    self._key, = state


class GetAttrKey:
  """Key-path entry for an attribute (namedtuple/dataclass field): ``GetAttrKey(name='x')``."""
  __slots__ = ("_name",)
  __match_args__ = ("name",)

  def __init__(self, name: str):
    if not isinstance(name, str):
      raise TypeError(f"GetAttrKey name must be a str, got {type(name)}")
    self._name = name

  @property
  def name(self) -> str:
    return self._name

  def __str__(self):
    return f".{self._name}"

  def __repr__(self):
    return f"GetAttrKey(name='{self._name}')"

  def __eq__(self, other):
    return isinstance(other, GetAttrKey) and self._name == other._name

  def __hash__(self):
    return hash(self._name)

  def __getstate__(self):
    return (self._name,)

  def __setstate__(self, state):
    self._name, = state


class FlattenedIndexKey:
  """Key-path entry used for custom nodes registered without key information."""
  __slots__ = ("_key",)
  __match_args__ = ("key",)

  def __init__(self, key: int):
    self._key = key if type(key) is int else operator.index(key)

  @property
  def key(self) -> int:
    return self._key

  def __str__(self):
    return f"[<flat index {self._key}>]"

  def __repr__(self):
    return f"FlattenedIndexKey(key={self._key})"

  def __eq__(self, other):
    return isinstance(other, FlattenedIndexKey) and self._key == other._key

  def __hash__(self):
    return self._key + _FLATTENED_INDEX_KEY_SALT

  def __getstate__(self):
    return (self._key,)

  def __setstate__(self, state):
    self._key, = state


for _cls in (SequenceKey, DictKey, GetAttrKey, FlattenedIndexKey):
  _cls.__module__ = "openjax.tree_util"
del _cls


def _simple_entrystr(key: Any) -> str:
  t = type(key)
  if t is SequenceKey:
    return str(key.idx)
  if t is DictKey or t is FlattenedIndexKey:
    return str(key.key)
  if t is GetAttrKey:
    return key.name
  return str(key)


def keystr(keys: tuple, *, simple: bool = False, separator: str = "") -> str:
  """Pretty-prints a key path, e.g. ``"['a'][0].x"``.

  Args:
    keys: a tuple of key entries (or any objects convertible to ``str``).
    simple: if True, print each entry without brackets/dots (``a/0/x`` style);
      more compact, but ambiguous in some cases.
    separator: string used to join the entries.
  """
  str_fn = _simple_entrystr if simple else str
  return separator.join(map(str_fn, keys))


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def register_pytree_node(
    nodetype: type[T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_with_keys_func: Callable[[T], tuple[KeyLeafPairs, Hashable]]
    | None = None,
) -> None:
  """Registers ``nodetype`` as a pytree node (instead of a leaf).

  Args:
    nodetype: the class to register (exact type; subclasses are not covered).
    flatten_func: ``obj -> (children, aux_data)``; ``children`` is an iterable
      of sub-pytrees, ``aux_data`` hashable static metadata kept in the treedef.
    unflatten_func: ``(aux_data, children) -> obj``.
    flatten_with_keys_func: optional ``obj -> (((key, child), ...), aux_data)``
      used by the ``*_with_path`` functions.

  Raises:
    ValueError: if ``nodetype`` is already registered.
  """
  _add_registration(nodetype, _Registration(
      _CUSTOM, nodetype, flatten_func, unflatten_func, flatten_with_keys_func))


def register_pytree_node_class(cls: Typ) -> Typ:
  """Class decorator registering ``cls`` via its ``tree_flatten`` method and
  ``tree_unflatten(aux_data, children)`` classmethod.  Returns ``cls``."""
  register_pytree_node(cls, operator.methodcaller("tree_flatten"),
                       cls.tree_unflatten)
  return cls


def register_pytree_with_keys(
    nodetype: type[T],
    flatten_with_keys: Callable[[T], tuple[KeyLeafPairs, Hashable]],
    unflatten_func: Callable[[Hashable, Iterable[Any]], T],
    flatten_func: Callable[[T], tuple[Iterable[Any], Hashable]] | None = None,
) -> None:
  """Registers a pytree node type whose children carry key-path entries.

  Args:
    nodetype: the class to register.
    flatten_with_keys: ``obj -> (((key, child), ...), aux_data)``.
    unflatten_func: ``(aux_data, children) -> obj``.
    flatten_func: optional faster ``obj -> (children, aux_data)`` returning
      the same children and aux data; derived from ``flatten_with_keys`` if
      omitted.
  """
  if not flatten_func:
    def flatten_func(tree):
      pairs, aux = flatten_with_keys(tree)
      return [c for _, c in pairs], aux
  register_pytree_node(nodetype, flatten_func, unflatten_func,
                       flatten_with_keys)


def register_pytree_with_keys_class(cls: Typ) -> Typ:
  """Class decorator registering ``cls`` via its ``tree_flatten_with_keys``
  method (and ``tree_flatten`` if defined) and ``tree_unflatten`` classmethod."""
  flatten = (operator.methodcaller("tree_flatten")
             if hasattr(cls, "tree_flatten") else None)
  register_pytree_with_keys(cls, operator.methodcaller("tree_flatten_with_keys"),
                            cls.tree_unflatten, flatten)
  return cls


# OrderedDict keeps insertion order; defaultdict sorts its keys like dict and
# keeps default_factory in the aux data.
register_pytree_with_keys(
    collections.OrderedDict,
    lambda x: (tuple((DictKey(k), v) for k, v in x.items()), tuple(x)),
    lambda keys, values: collections.OrderedDict(zip(keys, values)),
    lambda x: (tuple(x.values()), tuple(x)),
)


def _defaultdict_flatten(d):
  keys = tuple(sorted(d))
  return tuple(d[k] for k in keys), (d.default_factory, keys)


def _defaultdict_flatten_with_keys(d):
  keys = tuple(sorted(d))
  return tuple((DictKey(k), d[k]) for k in keys), (d.default_factory, keys)


register_pytree_with_keys(
    collections.defaultdict,
    _defaultdict_flatten_with_keys,
    lambda aux, values: collections.defaultdict(aux[0], zip(aux[1], values)),
    _defaultdict_flatten,
)


def register_dataclass(nodetype: Typ,
                       data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] | None = None,
                       drop_fields: Sequence[str] = ()) -> Typ:
  """Registers a dataclass-like type whose fields are its pytree children.

  ``data_fields`` become children (leaves/subtrees); ``meta_fields`` are static
  metadata stored in the treedef.  For a dataclass both may be omitted: fields
  marked ``field(metadata=dict(static=True))`` are meta, the rest data
  (minus ``drop_fields``).  Instances are rebuilt with ``nodetype(**fields)``.
  Usable as a decorator; returns ``nodetype``.
  """
  if data_fields is None or meta_fields is None:
    if (data_fields is None) != (meta_fields is None):
      raise TypeError(
          "register_dataclass: data_fields and meta_fields must both be "
          "specified when either is specified. Got "
          f"{data_fields=} {meta_fields=}.")
    if not dataclasses.is_dataclass(nodetype):
      raise TypeError(
          "register_dataclass: data_fields and meta_fields are required when "
          f"nodetype is not a dataclass. Got {nodetype=}.")
    fields = [f for f in dataclasses.fields(nodetype)
              if f.name not in drop_fields]
    data_fields = [f.name for f in fields if not f.metadata.get("static", False)]
    meta_fields = [f.name for f in fields if f.metadata.get("static", False)]
  # Tuples: the closures below must not see later mutation of the caller's lists.
  data_fields, meta_fields = tuple(data_fields), tuple(meta_fields)
  if dataclasses.is_dataclass(nodetype):
    init_fields = {f.name for f in dataclasses.fields(nodetype) if f.init}
    init_fields.difference_update(drop_fields)
    given = {*meta_fields, *data_fields}
    if given != init_fields:
      msg = ("data_fields and meta_fields must include all dataclass fields "
             "with ``init=True`` and only them.")
      if missing := init_fields - given:
        msg += (f" Missing fields: {missing}. Add them to drop_fields to "
                "suppress this error.")
      if unexpected := given - init_fields:
        msg += f" Unexpected fields: {unexpected}."
      raise ValueError(msg)
  if overlap := set(data_fields) & set(meta_fields):
    raise ValueError("data_fields and meta_fields must not overlap. "
                     f"Overlapping fields: {overlap}.")

  get_data, get_meta = _tuple_getter(data_fields), _tuple_getter(meta_fields)

  def flatten(x):
    return get_data(x), get_meta(x)

  def unflatten(meta, data):
    kwargs = dict(zip(meta_fields, meta))
    kwargs.update(zip(data_fields, data))
    return nodetype(**kwargs)

  _add_registration(nodetype, _Registration(
      _DATACLASS, nodetype, flatten, unflatten, None, data_fields, meta_fields),
      what="custom dataclass")
  return nodetype


def _tuple_getter(names):
  """``x -> tuple(getattr(x, n) for n in names)``, via a C-level attrgetter."""
  if not names:
    return lambda x: ()
  if len(names) == 1:
    get = operator.attrgetter(names[0])
    return lambda x: (get(x),)
  return operator.attrgetter(*names)


def register_static(cls: type[H]) -> type[H]:
  """Registers ``cls`` as a pytree with no leaves: instances are stored whole
  in the treedef (so they must be hashable) and treated as static by ``jit``.
  Usable as a decorator; returns ``cls``."""
  flatten = lambda obj: ((), obj)
  register_pytree_node(cls, flatten, lambda obj, _: obj, flatten)
  return cls


def static(**kwargs):
  """``dataclasses.field`` with ``metadata={'static': True}`` (``jax.tree.static``)."""
  metadata = {"static": True, **(kwargs.pop("metadata", {}) or {})}
  return dataclasses.field(metadata=metadata, **kwargs)


class _HashableCallableShim:
  """Wraps a ``functools.partial`` so that ``Partial`` does not merge it."""

  def __init__(self, fun):
    self.fun = fun

  def __call__(self, *args, **kw):
    return self.fun(*args, **kw)

  def __hash__(self):
    return hash(self.fun)

  def __eq__(self, other):
    if isinstance(other, _HashableCallableShim):
      return self.fun == other.fun
    return self.fun == other

  def __repr__(self):
    return f"_HashableCallableShim({self.fun!r})"


class Partial(functools.partial):
  """A ``functools.partial`` that is a pytree.

  The bound positional and keyword arguments are the children (so they are
  traced/mapped over); the wrapped function is static metadata.  This lets a
  partially-applied function be passed as an argument to transformed code::

    add_one = Partial(jnp.add, 1)
    jax.jit(lambda f, x: f(x))(add_one, 2)
  """

  def __new__(klass, func, *args, **kw):
    # functools.partial flattens a partial passed as `func` into one object;
    # we must keep exactly our own args as children, so box such a func.
    if isinstance(func, functools.partial):
      original = func
      func = _HashableCallableShim(original)
      out = super().__new__(klass, func, *args, **kw)
      func.func = original.func
      func.args = original.args
      func.keywords = original.keywords
      return out
    return super().__new__(klass, func, *args, **kw)


Partial.__module__ = "openjax.tree_util"

register_pytree_node(
    Partial,
    lambda p: ((p.args, p.keywords), p.func),
    lambda func, xs: Partial(func, *xs[0], **xs[1]),
)


# ---------------------------------------------------------------------------
# Flattening with key paths
# ---------------------------------------------------------------------------

def _keyed_items_and_data(reg, x):
  """Children of a non-leaf ``x`` as (key, child) pairs, and its node data."""
  kind = reg.kind
  if kind == _TUPLE or kind == _LIST:
    return [(SequenceKey(i), c) for i, c in enumerate(x)], None
  if kind == _DICT:
    keys = _sorted_keys(x)
    return [(DictKey(k), x[k]) for k in keys], tuple(keys)
  if kind == _NONE:
    return [], None
  if kind == _NAMEDTUPLE:
    fields = getattr(x, "_fields", None)
    if not isinstance(fields, tuple) or len(fields) != len(x):
      raise ValueError("A namedtuple's _fields attribute should have the same "
                       "size as the tuple.")
    return [(GetAttrKey(str(f)), c) for f, c in zip(fields, x)], type(x)
  if kind == _DATACLASS:
    children, data = reg.flatten(x)
    return [(GetAttrKey(n), c) for n, c in zip(reg.data_fields, children)], data
  if reg.flatten_with_keys is None:  # no key information: use flat indices
    children, data = _custom_flatten(reg, x)
    return [(FlattenedIndexKey(i), c) for i, c in enumerate(children)], data
  out = reg.flatten_with_keys(x)
  prefix = ("The to_iterable_with_keys function for a custom PyTree node "
            "should return a (key_leaf_pairs, aux_data) tuple")
  if not isinstance(out, tuple) or len(out) != 2:
    raise ValueError(f"{prefix}, got {out!r}")
  try:
    pairs = list(out[0])
  except TypeError:
    raise ValueError(
        f"{prefix} where 'key_leaf_pairs' is iterable, got {out!r}") from None
  for p in pairs:
    if not isinstance(p, tuple) or len(p) != 2:
      raise ValueError(f"{prefix} where each child is a (key, child) pair, "
                       f"got {p!r}")
  return pairs, out[1]


def _flatten_path(x, path, leaves, pred):
  if pred is not None and _is_leaf_result(pred(tuple(path), x)):
    leaves.append((tuple(path), x))
    return None
  reg = _dispatch_get(type(x)) or _classify(type(x))
  if reg.kind == _LEAF:
    if reg is _WARN_LEAF_REG:
      _warn_iterable_leaf(x)
    leaves.append((tuple(path), x))
    return None
  pairs, data = _keyed_items_and_data(reg, x)
  children = []
  for k, c in pairs:
    path.append(k)
    children.append(_flatten_path(c, path, leaves, pred))
    path.pop()
  return (reg, data, tuple(children))


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> tuple[list[tuple[tuple, Any]], PyTreeDef]:
  """Like ``tree_flatten``, but each leaf comes as ``(key_path, leaf)``.

  With ``is_leaf_takes_path=True``, ``is_leaf`` is called as
  ``is_leaf(key_path, node)``.
  """
  pred = is_leaf
  if is_leaf is not None and not is_leaf_takes_path:
    pred = lambda _, x: is_leaf(x)
  leaves = []
  root = _flatten_path(tree, [], leaves, pred)
  return leaves, _make_treedef(root, len(leaves))


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> list[tuple[tuple, Any]]:
  """Returns the ``(key_path, leaf)`` pairs of a pytree."""
  return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


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


def flatten_one_level(tree: Any) -> tuple[Iterable[Any], Hashable]:
  """Returns ``(children, node_data)`` of a pytree node, one level deep.

  Raises ValueError if ``tree`` is a leaf.
  """
  reg = _lookup(tree)
  if reg.kind == _LEAF:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  items, data = _items_and_data(reg, tree)
  if reg.kind == _DICT:
    items = tuple(items)
  elif reg.kind == _NAMEDTUPLE or reg.kind == _DATACLASS:
    items = list(items)
  return items, data


def flatten_one_level_with_keys(tree: Any) -> tuple[Iterable[Any], Hashable]:
  """Like :func:`flatten_one_level`, with ``(key, child)`` pairs as children."""
  reg = _lookup(tree)
  if reg.kind == _LEAF:
    raise ValueError(f"can't tree-flatten type: {type(tree)}")
  pairs, data = _keyed_items_and_data(reg, tree)
  if reg.kind in (_TUPLE, _LIST, _DICT):
    pairs = tuple(pairs)
  return pairs, data


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


# ---------------------------------------------------------------------------
# Registry object
# ---------------------------------------------------------------------------

class _DefaultRegistry:
  """Minimal stand-in for jaxlib's ``PyTreeRegistry`` (single global registry)."""

  def flatten(self, tree, leaf_predicate=None):
    return tree_flatten(tree, leaf_predicate)

  def flatten_with_path(self, tree, leaf_predicate=None):
    return tree_flatten_with_path(tree, leaf_predicate, is_leaf_takes_path=True)

  def flatten_one_level(self, tree):
    return None if _lookup(tree).kind == _LEAF else flatten_one_level(tree)

  def flatten_one_level_with_keys(self, tree):
    if _lookup(tree).kind == _LEAF:
      return None
    return flatten_one_level_with_keys(tree)

  def register_node(self, type, to_iterable, from_iterable,
                    to_iterable_with_keys=None):
    register_pytree_node(type, to_iterable, from_iterable,
                         to_iterable_with_keys)

  def register_dataclass_node(self, type, data_fields, meta_fields, /):
    register_dataclass(type, data_fields, meta_fields)

  def is_node(self, type):
    return is_tree_node(type)

  def __reduce__(self):
    return "default_registry"


default_registry = _DefaultRegistry()
