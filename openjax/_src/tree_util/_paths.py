"""Pytree key paths and node registration.

Key-path entries (``SequenceKey``, ``DictKey``, ``GetAttrKey``,
``FlattenedIndexKey``), ``keystr``, the registration functions (custom nodes,
dataclasses, static types, ``Partial``, plus the built-in ``OrderedDict`` and
``defaultdict`` registrations), ``tree_flatten_with_path`` and friends,
``flatten_one_level`` and ``default_registry``.

Imports only ``_flatten`` (the core below it).
"""
from __future__ import annotations

import collections
import dataclasses
import functools
import operator
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import Any

from openjax._src.tree_util._flatten import (
    _CUSTOM, _DATACLASS, _DICT, _LEAF, _LIST, _NAMEDTUPLE, _NONE, _TUPLE,
    _WARN_LEAF_REG, H, KeyLeafPairs, PyTreeDef, T, Typ, _add_registration,
    _classify, _custom_flatten, _dispatch_get, _is_leaf_result,
    _items_and_data, _lookup, _make_treedef, _Registration, _sorted_keys,
    _warn_iterable_leaf, is_tree_node, tree_flatten)

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
