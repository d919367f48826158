"""Pytree core: the node registry, flatten/unflatten and ``PyTreeDef``.

This is the pure-Python counterpart of jaxlib's C++ pytree module plus
``jax._src.tree_util``.  A treedef is stored as a nested tuple of nodes
``(registration, node_data, children)`` where a leaf is represented by ``None``;
this keeps flatten/unflatten/equality cheap in Python (tuple comparison runs in
C).  Node types are dispatched on ``type(x)`` through a cache dict.

Bottom module of the ``tree_util`` package: it imports nothing of ours.  Key
paths and registration live in ``_paths``; ``tree_map`` and the structural
diagnostics in ``_api``.
"""
from __future__ import annotations

import warnings
from collections.abc import Callable, Hashable, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
Typ = TypeVar("Typ", bound=type)
H = TypeVar("H", bound=Hashable)
Leaf = Any
PyTree = Any
KeyEntry = TypeVar("KeyEntry", bound=Any)
KeyLeafPair = tuple[KeyEntry, Any]
KeyLeafPairs = Iterable[KeyLeafPair]
KeyPath = tuple[KeyEntry, ...]

# ---------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------

_LEAF, _NONE, _TUPLE, _NAMEDTUPLE, _LIST, _DICT, _CUSTOM, _DATACLASS = range(8)


class _Registration:
  """How to take apart / rebuild one node type.  Compared by identity."""
  __slots__ = ("kind", "type", "flatten", "unflatten", "flatten_with_keys",
               "data_fields", "meta_fields")

  def __init__(self, kind, typ=None, flatten=None, unflatten=None,
               flatten_with_keys=None, data_fields=(), meta_fields=()):
    self.kind = kind
    self.type = typ
    self.flatten = flatten
    self.unflatten = unflatten
    self.flatten_with_keys = flatten_with_keys
    self.data_fields = data_fields
    self.meta_fields = meta_fields

  def __reduce__(self):  # registrations are process-local; pickle treedefs instead
    raise TypeError("pytree registrations cannot be pickled")


_LEAF_REG = _Registration(_LEAF)
# Leaves that JAX warns about (iterators and dict views silently become leaves).
_WARN_LEAF_REG = _Registration(_LEAF)
_NONE_REG = _Registration(_NONE, type(None))
_TUPLE_REG = _Registration(_TUPLE, tuple)
_LIST_REG = _Registration(_LIST, list)
_DICT_REG = _Registration(_DICT, dict)
# One shared registration for all namedtuples; the node data is the class.
_NAMEDTUPLE_REG = _Registration(_NAMEDTUPLE)
_NONE_NODE = (_NONE_REG, None, ())
_EMPTY_DICT_NODE = (_DICT_REG, (), ())

# Explicit registrations (the equivalent of jaxlib's registry).
_registry: dict[type, _Registration] = {
    type(None): _NONE_REG, tuple: _TUPLE_REG, list: _LIST_REG, dict: _DICT_REG}
# Cache of type -> registration for every type seen so far, including leaf and
# namedtuple types, so that flattening is one dict lookup per object.
_dispatch: dict[type, _Registration] = dict(_registry)
_dispatch_get = _dispatch.get
_DISPATCH_CACHE_LIMIT = 8192

_WARN_LEAF_TYPES = frozenset(type(x) for x in (
    {}.values(), (i for i in ()), zip(), map(abs, ()), filter(None, ()),
    enumerate(()), reversed(()), iter([]), iter(set()), iter(()), iter({}),
    iter({}.values()), iter({}.items())))


def _classify(t: type) -> _Registration:
  reg = _registry.get(t)
  if reg is None:
    if issubclass(t, tuple) and hasattr(t, "_fields"):
      reg = _NAMEDTUPLE_REG  # namedtuples are recognised structurally
    elif t in _WARN_LEAF_TYPES:
      reg = _WARN_LEAF_REG
    else:
      reg = _LEAF_REG
  if len(_dispatch) > _DISPATCH_CACHE_LIMIT:
    _dispatch.clear()
    _dispatch.update(_registry)
  _dispatch[t] = reg
  return reg


def _lookup(x) -> _Registration:
  return _dispatch_get(type(x)) or _classify(type(x))


def _add_registration(nodetype, reg, what="custom"):
  if nodetype in _registry:
    raise ValueError(
        f"Duplicate {what} PyTreeDef type registration for {nodetype!r}.")
  _registry[nodetype] = reg
  _dispatch[nodetype] = reg


def _warn_iterable_leaf(x):
  warnings.warn(
      f"Python iterable type '{type(x).__name__}' is treated as a leaf in "
      "PyTree. Use is_leaf to suppress this warning if you want this "
      "behavior. In a future version of JAX, this will become an error.",
      DeprecationWarning, stacklevel=4)


def _is_leaf_result(r) -> bool:
  if r is True:
    return True
  if r is False or r is None:  # None is accepted for historical reasons
    return False
  if type(r).__name__ in ("bool", "bool_") and type(r).__module__ == "numpy":
    return bool(r)
  raise ValueError(
      f"is_leaf predicate returned a non-boolean value {r!r}; expected a "
      "boolean")


def _sorted_keys(d) -> list:
  try:
    return sorted(d)
  except Exception as e:
    raise ValueError("Comparator raised exception while sorting pytree "
                     "dictionary keys.") from e


def _custom_flatten(reg, x):
  out = reg.flatten(x)
  if not isinstance(out, tuple) or len(out) != 2:
    raise ValueError(
        "The to_iterable function for a custom PyTree node should return a "
        f"(children, aux_data) tuple, got {out!r}")
  children = out[0]
  if type(children) is not tuple and type(children) is not list:
    try:
      iter(children)
    except TypeError:
      raise ValueError(
          "The to_iterable function for a custom PyTree node should return a "
          "(children, aux_data) tuple where 'children' is iterable, got "
          f"{out!r}") from None
  return out


def _items_and_data(reg, x):
  """Children (iterable) and node data of a non-leaf ``x``."""
  kind = reg.kind
  if kind == _TUPLE or kind == _LIST:
    return x, None
  if kind == _DICT:
    keys = _sorted_keys(x)
    return [x[k] for k in keys], tuple(keys)
  if kind == _NONE:
    return (), None
  if kind == _NAMEDTUPLE:
    return x, type(x)
  if kind == _CUSTOM:
    return _custom_flatten(reg, x)
  return reg.flatten(x)  # dataclass: generated, always well formed


# ---------------------------------------------------------------------------
# Flattening
# ---------------------------------------------------------------------------

def _flatten(x, leaves):
  """Appends the leaves of ``x`` to ``leaves`` and returns its node."""
  reg = _dispatch_get(type(x)) or _classify(type(x))
  kind = reg.kind
  if kind == _TUPLE or kind == _LIST:
    items, data = x, None
  elif kind == _DICT:
    if not x:
      return _EMPTY_DICT_NODE
    keys = _sorted_keys(x)
    items, data = map(x.__getitem__, keys), tuple(keys)
  elif kind == _LEAF:
    if reg is _WARN_LEAF_REG:
      _warn_iterable_leaf(x)
    leaves.append(x)
    return None
  elif kind == _NONE:
    return _NONE_NODE
  else:
    items, data = _items_and_data(reg, x)
  # Leaf children are handled inline, saving a recursive call per leaf.  (An
  # explicit loop is faster than a comprehension for the typical small node.)
  children = []
  cappend = children.append
  lappend = leaves.append
  for c in items:
    if _dispatch_get(type(c)) is _LEAF_REG:
      lappend(c)
      cappend(None)
    else:
      cappend(_flatten(c, leaves))
  return (reg, data, tuple(children))


def _flatten_pred(x, leaves, pred):
  """Like `_flatten`, but ``pred(node)`` may declare any subtree a leaf."""
  r = pred(x)
  if r is True or (r is not False and r is not None and _is_leaf_result(r)):
    leaves.append(x)
    return None
  reg = _dispatch_get(type(x)) or _classify(type(x))
  if reg.kind == _LEAF:
    if reg is _WARN_LEAF_REG:
      _warn_iterable_leaf(x)
    leaves.append(x)
    return None
  items, data = _items_and_data(reg, x)
  children = []
  for c in items:
    children.append(_flatten_pred(c, leaves, pred))
  return (reg, data, tuple(children))


# ---------------------------------------------------------------------------
# Unflattening and other traversals of treedef nodes
# ---------------------------------------------------------------------------

def _build(reg, data, vals: list):
  kind = reg.kind
  if kind == _TUPLE:
    return tuple(vals)
  if kind == _LIST:
    return vals
  if kind == _DICT:
    return dict(zip(data, vals))
  if kind == _NONE:
    return None
  if kind == _NAMEDTUPLE:
    return data(*vals)
  return reg.unflatten(data, tuple(vals))


def _unflatten(node, nxt):
  """Rebuilds ``node`` taking leaves from ``nxt()``, in order."""
  reg, data, children = node
  vals = []
  append = vals.append
  for c in children:
    append(nxt() if c is None else _unflatten(c, nxt))
  kind = reg.kind
  if kind == _TUPLE:  # the common kinds are inlined (no `_build` call)
    return tuple(vals)
  if kind == _LIST:
    return vals
  if kind == _DICT:
    return dict(zip(data, vals))
  return _build(reg, data, vals)


def _count_leaves(node) -> int:
  if node is None:
    return 1
  return sum([1 if c is None else _count_leaves(c) for c in node[2]])


def _count_nodes(node) -> int:
  if node is None:
    return 1
  return 1 + sum([1 if c is None else _count_nodes(c) for c in node[2]])


def _node_hash(node) -> int:
  # Custom node data may be unhashable, so like jaxlib we only hash the node
  # kind/type/arity (plus dict keys and namedtuple classes, always hashable).
  reg, data, children = node
  parts = [reg, data if reg.kind == _DICT or reg.kind == _NAMEDTUPLE else None]
  append = parts.append
  for c in children:
    append(0 if c is None else _node_hash(c))
  return hash(tuple(parts))


def _nodes_equal(a, b) -> bool:
  """Slow structural equality with jaxlib's error for bad metadata."""
  if a is None or b is None:
    return a is b
  if a[0] is not b[0] or len(a[2]) != len(b[2]):
    return False
  da, db = a[1], b[1]
  try:
    if da is not db and da != db:
      return False
  except Exception as e:
    msg = "Exception raised while checking equality of metadata fields of pytree"
    if a[0].kind in (_CUSTOM, _DATACLASS):
      msg += f" node of type {a[0].type!r}"
    raise ValueError(
        msg + ". Make sure that metadata fields are hashable and have simple "
        "equality semantics. (Note: arrays cannot be passed as metadata "
        "fields!)") from e
  return all(_nodes_equal(x, y) for x, y in zip(a[2], b[2]))


def _node_str(node) -> str:
  if node is None:
    return "*"
  reg, data, children = node
  kind = reg.kind
  parts = [_node_str(c) for c in children]
  if kind == _TUPLE:
    return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
  if kind == _LIST:
    return "[" + ", ".join(parts) + "]"
  if kind == _DICT:
    return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(data, parts)) + "}"
  if kind == _NONE:
    return "None"
  if kind == _NAMEDTUPLE:
    head = f"namedtuple[{data.__name__}]"
  else:
    head = f"{reg.type.__name__}[{data}]"
  return f"CustomNode({head}, [{', '.join(parts)}])"


def _mismatch(what, x):
  return ValueError(f"Expected {what}, got {x!r}.")


def _flatten_up_to(node, x, out):
  """Appends the subtrees of ``x`` at ``node``'s leaves to ``out``, in reverse.

  Children are visited right-to-left (as jaxlib does) so that the first
  mismatch reported is the same one jaxlib reports.
  """
  reg, data, children = node
  kind = reg.kind
  n = len(children)
  if kind == _TUPLE:
    if type(x) is not tuple:
      raise _mismatch("tuple", x)
    if len(x) != n:
      raise ValueError(f"Tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
    items = x
  elif kind == _LIST:
    if type(x) is not list:
      raise _mismatch("list", x)
    if len(x) != n:
      raise ValueError(f"List arity mismatch: {len(x)} != {n}; list: {x!r}.")
    items = x
  elif kind == _DICT:
    if type(x) is not dict:
      raise _mismatch("dict", x)
    keys = tuple(_sorted_keys(x))
    if keys != data:
      raise ValueError(f"Dict key mismatch; expected keys: {list(data)!r}; "
                       f"present keys: {list(keys)!r}.")
    items = [x[k] for k in keys]
  elif kind == _NONE:
    if x is not None:
      raise ValueError(
          f"Expected None, got {x!r}.\n\nIn previous releases of JAX, "
          "flatten-up-to used to consider None to be a tree-prefix of non-None "
          "values. To obtain the previous behavior, you can usually write:\n"
          "  jax.tree.map(lambda x, y: None if x is None else f(x, y), a, b, "
          "is_leaf=lambda x: x is None)")
    return
  elif kind == _NAMEDTUPLE:
    if not isinstance(x, tuple) or not hasattr(x, "_fields"):
      raise _mismatch("named tuple", x)
    if len(x) != n:
      raise ValueError(
          f"Named tuple arity mismatch: {len(x)} != {n}; tuple: {x!r}.")
    if type(x) != data:
      raise ValueError(f"Named tuple type mismatch: expected type: {data!r}, "
                       f"tuple: {x!r}.")
    items = x
  else:
    what = "custom" if kind == _CUSTOM else "custom dataclass"
    if _registry.get(type(x)) is not reg:
      raise ValueError(f"{what.capitalize()} node type mismatch: expected "
                       f"type: {reg.type!r}, value: {x!r}.")
    items, aux = _items_and_data(reg, x)
    if data is not aux and data != aux:
      raise ValueError(f"Mismatch {what} node data: {data!r} != {aux!r}; "
                       f"value: {x!r}.")
    items = list(items)
    if len(items) != n:
      raise ValueError(
          f"Custom type arity mismatch: {len(items)} != {n}; value: {x!r}.")
  append = out.append
  for i in range(n - 1, -1, -1):
    c = children[i]
    if c is None:
      append(items[i])
    else:
      _flatten_up_to(c, items[i], out)


def _from_iterable_tree(node, xs):
  if node is None:
    return xs
  reg, data, children = node
  ys = list(xs)
  if len(ys) != len(children):
    raise ValueError("Arity mismatch between trees")
  return _build(reg, data, [_from_iterable_tree(c, y)
                            for c, y in zip(children, ys)])


def _compose(node, inner):
  if node is None:
    return inner
  reg, data, children = node
  return (reg, data, tuple([_compose(c, inner) for c in children]))


def _walk(node, f_node, f_leaf, nxt):
  if node is None:
    leaf = nxt()
    return leaf if f_leaf is None else f_leaf(leaf)
  reg, data, children = node
  vals = tuple([_walk(c, f_node, f_leaf, nxt) for c in children])
  return f_node(vals, list(data) if reg.kind == _DICT else data)


def _encode(node):
  """Picklable form of a node: registrations are replaced by their type."""
  if node is None:
    return None
  reg, data, children = node
  return (reg.kind, reg.type, data, tuple([_encode(c) for c in children]))


def _decode(enc):
  if enc is None:
    return None
  kind, typ, data, children = enc
  if kind == _NAMEDTUPLE:
    reg = _NAMEDTUPLE_REG
  else:
    reg = _registry.get(typ)
    if reg is None or reg.kind != kind:
      raise ValueError(f"Unknown custom type in pickled PyTreeDef: {typ!r}")
  return (reg, data, tuple([_decode(c) for c in children]))


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

def _make_treedef(root, num_leaves: int) -> PyTreeDef:
  td = _new_treedef(PyTreeDef)
  td._root = root
  td._num_leaves = num_leaves
  return td


class PyTreeDef:
  """The structure of a pytree, without its leaves (immutable, hashable)."""
  __slots__ = ("_root", "_num_leaves", "_num_nodes", "_hash", "__weakref__")

  def __init__(self, *args, **kwargs):
    raise TypeError("PyTreeDef: No constructor defined! Use "
                    "jax.tree.structure or jax.tree.flatten.")

  @property
  def num_leaves(self) -> int:
    return self._num_leaves

  @property
  def num_nodes(self) -> int:
    try:
      return self._num_nodes
    except AttributeError:
      self._num_nodes = n = _count_nodes(self._root)
      return n

  def unflatten(self, leaves: Iterable[Any], /) -> Any:
    """Rebuilds a pytree of this structure from an iterable of leaves."""
    if type(leaves) is not list and type(leaves) is not tuple:
      leaves = list(leaves)
    n = self._num_leaves
    if len(leaves) != n:
      if len(leaves) < n:
        raise ValueError(f"Too few leaves for PyTreeDef; expected {n}, got "
                         f"{len(leaves)}")
      raise ValueError(f"Too many leaves for PyTreeDef; expected {n}.")
    root = self._root
    if root is None:
      return leaves[0]
    return _unflatten(root, iter(leaves).__next__)

  def flatten_up_to(self, tree: Any) -> list:
    """Flattens ``tree`` only down to this treedef's leaves.

    ``tree`` must have this structure, but may hold arbitrary subtrees where
    this treedef has leaves; those subtrees are returned, in leaf order.
    """
    root = self._root
    if root is None:
      return [tree]
    out = []
    _flatten_up_to(root, tree, out)
    out.reverse()
    return out

  def children(self) -> list[PyTreeDef]:
    """The treedefs of the root node's immediate children."""
    root = self._root
    if root is None:
      return []
    return [_make_treedef(c, _count_leaves(c)) for c in root[2]]

  def node_data(self) -> tuple[type, Any] | None:
    """``None`` for a leaf, else ``(node_type, node_metadata)`` of the root."""
    root = self._root
    if root is None:
      return None
    reg, data, _ = root
    kind = reg.kind
    if kind == _NAMEDTUPLE:
      return (data, None)
    if kind == _DICT:
      return (dict, list(data))
    return (reg.type, data)

  @staticmethod
  def from_node_data_and_children(registry, node_data, children):
    """Builds a treedef from ``node_data()`` and a list of child treedefs."""
    del registry  # there is a single registry
    kids = [c._root for c in children]
    nleaves = sum(c._num_leaves for c in children)
    if node_data is None:
      return _make_treedef(None, nleaves + 1)
    typ, data = node_data
    reg = _registry.get(typ)
    if reg is not None:
      if reg.kind == _DICT:
        data = tuple(data)
      elif reg.kind in (_NONE, _TUPLE, _LIST):
        data = None
    elif isinstance(typ, type) and issubclass(typ, tuple) and hasattr(
        typ, "_fields"):
      reg, data = _NAMEDTUPLE_REG, typ
    else:
      raise RuntimeError(f"Could not find type: {typ!r}.")
    return _make_treedef((reg, data, tuple(kids)), nleaves)

  def compose(self, inner: PyTreeDef, /) -> PyTreeDef:
    """Replaces every leaf of this treedef by the ``inner`` structure."""
    return _make_treedef(_compose(self._root, inner._root),
                         self._num_leaves * inner._num_leaves)

  def walk(self, f_node, f_leaf, leaves, /):
    """Post-order traversal: ``f_node(children_tuple, node_data)`` at nodes,
    ``f_leaf(leaf)`` (identity if None) at leaves."""
    leaves = list(leaves)
    if len(leaves) != self._num_leaves:
      raise ValueError("Too few leaves for PyTreeDef"
                       if len(leaves) < self._num_leaves
                       else "Too many leaves for PyTreeDef")
    return _walk(self._root, f_node, f_leaf, iter(leaves).__next__)

  def from_iterable_tree(self, xs, /):
    """Builds a pytree from nested iterables matching this structure."""
    return _from_iterable_tree(self._root, xs)

  def __repr__(self):
    return f"PyTreeDef({_node_str(self._root)})"

  def __eq__(self, other):
    if not isinstance(other, PyTreeDef):
      return False
    if self is other:
      return True
    if self._num_leaves != other._num_leaves:
      return False
    try:
      # Fast path: nested tuple comparison runs in C.
      return self._root == other._root
    except Exception:
      return _nodes_equal(self._root, other._root)

  def __ne__(self, other):  # jaxlib: non-treedefs are neither == nor !=
    return isinstance(other, PyTreeDef) and not self.__eq__(other)

  def __hash__(self):
    try:
      return self._hash
    except AttributeError:
      root = self._root
      self._hash = h = 0x5F3759DF if root is None else _node_hash(root)
      return h

  def __reduce__(self):
    return (_treedef_from_pickle, (_encode(self._root), self._num_leaves))

  def __copy__(self):
    return self

  def __deepcopy__(self, memo):
    return self


_new_treedef = object.__new__
PyTreeDef.__module__ = "openjax.tree_util"


def _treedef_from_pickle(enc, num_leaves):
  return _make_treedef(_decode(enc), num_leaves)


# ---------------------------------------------------------------------------
# Public API
# ---------------------------------------------------------------------------

def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                 ) -> tuple[list[Leaf], PyTreeDef]:
  """Flattens a pytree into a list of leaves and a treedef.

  ``is_leaf``, if given, is called on every node before recursing; when it
  returns True that node is kept as a single leaf.
  """
  leaves = []
  if is_leaf is None:
    root = _flatten(tree, leaves)
  else:
    root = _flatten_pred(tree, leaves, is_leaf)
  return leaves, _make_treedef(root, len(leaves))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Leaf]) -> Any:
  """Rebuilds a pytree from a treedef and its leaves."""
  return treedef.unflatten(leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                ) -> list[Leaf]:
  """Returns the leaves of a pytree, in flattening order."""
  leaves = []
  if is_leaf is None:
    _flatten(tree, leaves)
  else:
    _flatten_pred(tree, leaves, is_leaf)
  return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None
                   ) -> PyTreeDef:
  """Returns the treedef (structure) of a pytree."""
  return tree_flatten(tree, is_leaf)[1]


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
  """Makes the treedef of a tuple whose elements have the given treedefs."""
  treedefs = list(treedefs)
  return _make_treedef((_TUPLE_REG, None, tuple(t._root for t in treedefs)),
                       sum(t._num_leaves for t in treedefs))


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
  """Returns the treedefs of the immediate children of ``treedef``'s root."""
  return treedef.children()


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
  """True if the treedef has a single node (a leaf, or e.g. ``None``)."""
  return treedef.num_nodes == 1


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
  """True only if the treedef is a single leaf."""
  return treedef._root is None


def all_leaves(iterable: Iterable[Any],
               is_leaf: Callable[[Any], bool] | None = None) -> bool:
  """True if every element of ``iterable`` is a pytree leaf."""
  if is_leaf is None:
    return all(_lookup(x).kind == _LEAF for x in iterable)
  items = list(iterable)
  leaves = tree_leaves(items, is_leaf)
  return len(leaves) == len(items) and all(
      a is b for a, b in zip(items, leaves))


def is_tree_node(typ: type) -> bool:
  """True if ``typ`` is a pytree node type (built-in, registered or namedtuple)."""
  if typ in _registry:
    return True
  return isinstance(typ, type) and issubclass(typ, tuple) and hasattr(
      typ, "_fields")



def build_tree(treedef: PyTreeDef, xs: Any) -> Any:
  """Builds a pytree of structure ``treedef`` from nested iterables ``xs``.

  Deprecated in JAX; prefer :func:`tree_unflatten`.
  """
  return treedef.from_iterable_tree(xs)
