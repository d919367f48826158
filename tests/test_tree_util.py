"""Tests for openjax.tree_util / openjax.tree (pytrees).

Expected strings (treedef reprs, key-path strings, error messages) are JAX's
observable behaviour, taken from JAX's own tests and jaxlib's pytree module.
"""
import collections
import copy
import dataclasses
import functools
import pickle
import re
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import openjax.tree as jtree
from openjax import tree_util
from openjax._src.tree_util import (
    broadcast_flattened_prefix_with_treedef, broadcast_prefix,
    equality_errors, equality_errors_pytreedef, prefix_errors,
    treedef_is_strict_leaf)

SequenceKey = tree_util.SequenceKey
DictKey = tree_util.DictKey
GetAttrKey = tree_util.GetAttrKey
FlattenedIndexKey = tree_util.FlattenedIndexKey


# ---------------------------------------------------------------------------
# Test node types
# ---------------------------------------------------------------------------

def _dummy_func(*args, **kwargs):
  return


ATuple = collections.namedtuple("ATuple", ("foo", "bar"))


class ANamedTupleSubclass(ATuple):
  pass


ATuple2 = collections.namedtuple("ATuple2", ("foo", "bar"))
tree_util.register_pytree_node(ATuple2, lambda o: ((o.foo,), o.bar),
                               lambda bar, foo: ATuple2(foo[0], bar))

BadFlattenNonTuple = collections.namedtuple("BadFlattenNonTuple", "foo bar")
tree_util.register_pytree_node(BadFlattenNonTuple, lambda o: "hello",
                               lambda bar, foo: None)
BadFlattenBadArity = collections.namedtuple("BadFlattenBadArity", "foo bar")
tree_util.register_pytree_node(BadFlattenBadArity, lambda o: (2, 3, 4),
                               lambda bar, foo: None)
BadFlattenNonIterable = collections.namedtuple("BadFlattenNonIterable",
                                               "foo bar")
tree_util.register_pytree_node(BadFlattenNonIterable, lambda o: (7, 7),
                               lambda bar, foo: None)


class AnObject:

  def __init__(self, x, y, z):
    self.x, self.y, self.z = x, y, z

  def __eq__(self, other):
    return (self.x, self.y, self.z) == (other.x, other.y, other.z)

  def __hash__(self):
    return hash((self.x, self.y, self.z))

  def __repr__(self):
    return f"AnObject({self.x},{self.y},{self.z})"


tree_util.register_pytree_node(AnObject, lambda o: ((o.x, o.y), o.z),
                               lambda z, xy: AnObject(xy[0], xy[1], z))


class AnObject2(AnObject):
  pass


tree_util.register_pytree_with_keys(
    AnObject2,
    lambda o: ((("x", o.x), ("y", o.y)), o.z),
    lambda z, xy: AnObject2(xy[0], xy[1], z),
)


class ArrayMetadataBox:
  """A node whose aux data holds an array (unhashable, ambiguous ==)."""

  def __init__(self, x):
    self.x = x


tree_util.register_pytree_node(ArrayMetadataBox, lambda o: ((), (o.x,)),
                               lambda aux, _: ArrayMetadataBox(aux[0]))


@tree_util.register_pytree_node_class
class Special:

  def __init__(self, x, y):
    self.x, self.y = x, y

  def __repr__(self):
    return f"Special(x={self.x}, y={self.y})"

  def tree_flatten(self):
    return ((self.x, self.y), None)

  @classmethod
  def tree_unflatten(cls, aux_data, children):
    return cls(*children)

  def __eq__(self, other):
    return type(self) is type(other) and (self.x, self.y) == (other.x, other.y)


@tree_util.register_pytree_with_keys_class
class SpecialWithKeys(Special):

  def tree_flatten_with_keys(self):
    return (((GetAttrKey("x"), self.x), (GetAttrKey("y"), self.y)), None)


@tree_util.register_pytree_node_class
class FlatCache:
  """Node whose aux data is itself a treedef."""

  def __init__(self, structured, *, leaves=None, treedef=None):
    if treedef is None:
      leaves, treedef = tree_util.tree_flatten(structured)
    self._structured = structured
    self.treedef = treedef
    self.leaves = leaves

  def __hash__(self):
    return hash(self.structured)

  def __eq__(self, other):
    return self.structured == other.structured

  def __repr__(self):
    return f"FlatCache({self.structured!r})"

  @property
  def structured(self):
    if self._structured is None:
      self._structured = tree_util.tree_unflatten(self.treedef, self.leaves)
    return self._structured

  def tree_flatten(self):
    return self.leaves, self.treedef

  @classmethod
  def tree_unflatten(cls, meta, data):
    if not tree_util.all_leaves(data):
      data, meta = tree_util.tree_flatten(tree_util.tree_unflatten(meta, data))
    return FlatCache(None, leaves=data, treedef=meta)


@tree_util.register_static
class StaticInt(int):
  pass


@tree_util.register_static
class StaticTuple(tuple):
  pass


@tree_util.register_static
class StaticDict(dict):
  pass


@tree_util.register_static
@dataclasses.dataclass
class BlackBox:
  """Equal to every other BlackBox."""
  value: int

  def __hash__(self):
    return 0

  def __eq__(self, other):
    return isinstance(other, BlackBox)


@tree_util.register_dataclass
@dataclasses.dataclass
class ADataclass:
  x: tuple
  y: int


@tree_util.register_dataclass
@dataclasses.dataclass
class ADataclassWithMeta:
  x: tuple
  y: int
  z: int = dataclasses.field(metadata={"static": True})


# (tree, expected str(treedef)) -- strings as printed by JAX.
TREES_AND_STRINGS = [
    (None, "PyTreeDef(None)"),
    ((None,), "PyTreeDef((None,))"),
    ((), "PyTreeDef(())"),
    ([()], "PyTreeDef([()])"),
    ((1, 2), "PyTreeDef((*, *))"),
    (((1, "foo"), ["bar", (3, None, 7)]),
     "PyTreeDef(((*, *), [*, (*, None, *)]))"),
    ([3], "PyTreeDef([*])"),
    ([3, ATuple(foo=(3, ATuple(foo=3, bar=None)), bar={"baz": 34})],
     "PyTreeDef([*, CustomNode(namedtuple[ATuple], [(*, "
     "CustomNode(namedtuple[ATuple], [*, None])), {'baz': *}])])"),
    ([AnObject(3, None, [4, "foo"])],
     "PyTreeDef([CustomNode(AnObject[[4, 'foo']], [*, None])])"),
    ([AnObject2(3, None, [4, "foo"])],
     "PyTreeDef([CustomNode(AnObject2[[4, 'foo']], [*, None])])"),
    (Special(2, 3.0), "PyTreeDef(CustomNode(Special[None], [*, *]))"),
    ({"a": 1, "b": 2}, "PyTreeDef({'a': *, 'b': *})"),
    (StaticInt(1), "PyTreeDef(CustomNode(StaticInt[1], []))"),
    (StaticTuple((2, 3)), "PyTreeDef(CustomNode(StaticTuple[(2, 3)], []))"),
    (StaticDict(foo=4, bar=5),
     "PyTreeDef(CustomNode(StaticDict[{'foo': 4, 'bar': 5}], []))"),
    (ADataclass(x=(1, 2), y=3),
     "PyTreeDef(CustomNode(ADataclass[()], [(*, *), *]))"),
    (ADataclassWithMeta(x=(1, 2), y=3, z=4),
     "PyTreeDef(CustomNode(ADataclassWithMeta[(4,)], [(*, *), *]))"),
    (collections.OrderedDict([("foo", 34), ("baz", 101), ("something", -42)]),
     "PyTreeDef(CustomNode(OrderedDict[('foo', 'baz', 'something')], "
     "[*, *, *]))"),
    (collections.defaultdict(dict, [("foo", 34), ("baz", 101)]),
     "PyTreeDef(CustomNode(defaultdict[(<class 'dict'>, ('baz', 'foo'))], "
     "[*, *]))"),
    (ANamedTupleSubclass(foo="hello", bar=3.5),
     "PyTreeDef(CustomNode(namedtuple[ANamedTupleSubclass], [*, *]))"),
]
TREES = [t for t, _ in TREES_AND_STRINGS] + [
    FlatCache(None), FlatCache(1), FlatCache({"a": [1, 2]}), BlackBox(value=2)]
LEAVES = ["foo", 0.1, 1, object(), np.arange(3)]


def _eq(a, b):
  """Equality that also works for numpy leaves."""
  if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
    return np.array_equal(a, b)
  return a == b


# ---------------------------------------------------------------------------
# Flatten / unflatten / treedef basics
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tree,expected", TREES_AND_STRINGS)
def test_treedef_repr(tree, expected):
  treedef = tree_util.tree_structure(tree)
  assert str(treedef) == expected
  assert repr(treedef) == expected


def test_treedef_repr_misc():
  assert str(tree_util.tree_structure({})) == "PyTreeDef({})"
  assert str(tree_util.tree_structure(1)) == "PyTreeDef(*)"
  assert str(tree_util.tree_structure((1,))) == "PyTreeDef((*,))"
  assert (str(tree_util.tree_structure({"b": 1, "a": [2, 3]}))
          == "PyTreeDef({'a': [*, *], 'b': *})")
  partial_def = tree_util.tree_structure(tree_util.Partial(print, 1, x=2))
  assert str(partial_def) == (
      "PyTreeDef(CustomNode(Partial[<built-in function print>], "
      "[(*,), {'x': *}]))")


@pytest.mark.parametrize("tree", TREES + LEAVES)
def test_roundtrip(tree):
  leaves, treedef = tree_util.tree_flatten(tree)
  assert _eq(tree_util.tree_unflatten(treedef, leaves), tree)
  assert treedef.num_leaves == len(leaves)


@pytest.mark.parametrize("tree", TREES + LEAVES)
def test_roundtrip_flatten_up_to(tree):
  treedef = tree_util.tree_structure(tree)
  assert _eq(treedef.unflatten(treedef.flatten_up_to(tree)), tree)


@pytest.mark.parametrize("tree", TREES)
def test_roundtrip_is_leaf(tree):
  leaves, treedef = tree_util.tree_flatten(
      tree, is_leaf=lambda t: isinstance(t, tuple))
  assert tree_util.tree_unflatten(treedef, leaves) == tree


@pytest.mark.parametrize("tree", TREES)
def test_pickle_and_copy_roundtrip(tree):
  leaves, treedef = tree_util.tree_flatten(tree)
  restored = pickle.loads(pickle.dumps(treedef))
  assert restored == treedef and hash(restored) == hash(treedef)
  assert restored.unflatten(leaves) == tree
  assert copy.deepcopy(treedef) == treedef


def test_none_is_an_empty_node():
  assert tree_util.tree_leaves([None, 1]) == [1]
  assert tree_util.tree_leaves(None) == []
  treedef = tree_util.tree_structure(None)
  assert (treedef.num_leaves, treedef.num_nodes) == (0, 1)
  assert tree_util.treedef_is_leaf(treedef)
  assert not treedef_is_strict_leaf(treedef)
  assert treedef.unflatten([]) is None
  assert tree_util.tree_map(lambda x: x + 1, [None, 1]) == [None, 2]


def test_leaf_types():
  class MyList(list):
    pass

  class MyDict(dict):
    pass

  class MyTuple(tuple):
    pass

  arr = np.ones(3)
  for leaf in (arr, MyList([1, 2]), MyDict(a=1), MyTuple((1, 2)), "s", 1.0,
               {1, 2}, b"x", object):
    leaves, treedef = tree_util.tree_flatten(leaf)
    assert leaves[0] is leaf and len(leaves) == 1
    assert str(treedef) == "PyTreeDef(*)"
    assert treedef_is_strict_leaf(treedef)


def test_flatten_order():
  flat1, _ = tree_util.tree_flatten([0, ((1, 2), 3, (4, (5, 6, 7))), 8, 9])
  flat2, _ = tree_util.tree_flatten([0, ((1, (2, 3)), (4, (5, 6, 7))), 8, 9])
  assert flat1 == flat2 == list(range(10))


def test_dict_key_order():
  d = {"b": 2, "a": 1, "c": {"b": 2, "a": 1}}
  leaves, treedef = tree_util.tree_flatten(d)
  assert leaves == [1, 2, 1, 2]
  assert str(treedef) == "PyTreeDef({'a': *, 'b': *, 'c': {'a': *, 'b': *}})"
  assert list(tree_util.tree_unflatten(treedef, leaves)) == ["a", "b", "c"]
  # Insertion order does not matter for structure equality.
  assert treedef == tree_util.tree_structure({"c": {"a": 0, "b": 0}, "a": 0,
                                              "b": 0})


def test_dict_keys_unsortable():
  with pytest.raises(ValueError, match="Comparator raised exception") as info:
    tree_util.tree_flatten({"a": 1, 2: "b"})
  assert isinstance(info.value.__cause__, TypeError)


def test_defaultdict():
  d = collections.defaultdict(int, {"b": 2, "a": 1, "c": {"b": 2, "a": 1}})
  leaves, treedef = tree_util.tree_flatten(d)
  assert leaves == [1, 2, 1, 2]
  restored = tree_util.tree_unflatten(treedef, leaves)
  assert type(restored) is collections.defaultdict
  assert restored.default_factory is int
  assert list(restored) == ["a", "b", "c"]
  assert treedef != tree_util.tree_structure(
      collections.defaultdict(list, {"b": 2, "a": 1, "c": {"b": 2, "a": 1}}))


def test_ordered_dict_keeps_insertion_order():
  d = collections.OrderedDict([("b", 2), ("a", 1)])
  leaves, treedef = tree_util.tree_flatten(d)
  assert leaves == [2, 1]
  restored = treedef.unflatten([20, 10])
  assert type(restored) is collections.OrderedDict
  assert list(restored.items()) == [("b", 20), ("a", 10)]
  assert treedef != tree_util.tree_structure(
      collections.OrderedDict([("a", 1), ("b", 2)]))


def test_namedtuple():
  t = ATuple(1, (2, 3))
  leaves, treedef = tree_util.tree_flatten(t)
  assert leaves == [1, 2, 3]
  out = treedef.unflatten([4, 5, 6])
  assert type(out) is ATuple and out == ATuple(4, (5, 6))
  assert treedef != tree_util.tree_structure((1, (2, 3)))
  assert treedef != tree_util.tree_structure(ATuple2(1, (2, 3)))
  assert treedef.node_data() == (ATuple, None)
  # ATuple2 is explicitly registered, which overrides namedtuple handling.
  assert tree_util.tree_leaves(ATuple2(1, "hi")) == [1]


def test_children_and_treedef_tuple():
  _, tree = tree_util.tree_flatten(((1, 2, 3), (4,)))
  c0 = tree_util.tree_structure((0, 0, 0))
  c1 = tree_util.tree_structure((7,))
  assert tree.children() == [c0, c1]
  assert tree_util.treedef_children(tree) == [c0, c1]
  assert tree_util.treedef_tuple([c0, c1]) == tree
  assert tree_util.tree_structure(1).children() == []
  assert (tree_util.tree_structure((3,))
          == tree_util.treedef_tuple((tree_util.tree_structure(3),)))
  tree = ((1, 2, (3, 4)), (5,))
  leaves, treedef1 = tree_util.tree_flatten(tree)
  treedef2 = tree_util.treedef_tuple(treedef1.children())
  assert treedef1.num_leaves == treedef2.num_leaves == len(leaves)
  assert treedef1.num_nodes == treedef2.num_nodes == 9


def test_treedef_is_leaf():
  assert tree_util.treedef_is_leaf(tree_util.tree_structure(1))
  assert not tree_util.treedef_is_leaf(tree_util.tree_structure([1, 2]))
  assert tree_util.treedef_is_leaf(tree_util.tree_structure(()))


def test_node_data_and_from_node_data_and_children():
  tree = {"a": [1, (2,)], "b": ATuple(3, None), "c": AnObject(4, 5, "z")}
  treedef = tree_util.tree_structure(tree)
  assert treedef.node_data() == (dict, ["a", "b", "c"])
  kids = treedef.children()
  assert kids[0].node_data() == (list, None)
  assert kids[1].node_data() == (ATuple, None)
  assert kids[2].node_data() == (AnObject, "z")
  assert tree_util.tree_structure(1).node_data() is None
  assert tree_util.tree_structure(None).node_data() == (type(None), None)

  def rebuild(td):
    return tree_util.PyTreeDef.from_node_data_and_children(
        tree_util.default_registry, td.node_data(),
        [rebuild(c) for c in td.children()])

  assert rebuild(treedef) == treedef
  assert str(rebuild(treedef)) == str(treedef)


def test_treedef_equality_and_hash():
  t1 = tree_util.tree_structure([1, {"a": (2, None)}])
  t2 = tree_util.tree_structure(["x", {"a": ("y", None)}])
  assert t1 == t2 and hash(t1) == hash(t2) and not (t1 != t2)
  assert len({t1, t2}) == 1
  t3 = tree_util.tree_structure([1, {"b": (2, None)}])
  assert t1 != t3
  assert t1 != tree_util.tree_structure([1, {"a": [2, None]}])
  # Like jaxlib, a treedef is neither == nor != to a non-treedef.
  assert not (t1 == 3) and not (t1 != 3)
  with pytest.raises(TypeError):
    tree_util.PyTreeDef()


def test_treedef_equality_with_array_metadata():
  td_a = tree_util.tree_structure(ArrayMetadataBox(np.arange(3)))
  td_b = tree_util.tree_structure(ArrayMetadataBox(np.arange(3)))
  hash(td_a)  # aux data is not hashed
  hash(td_b)
  with pytest.raises(ValueError, match="ArrayMetadataBox"):
    td_a == td_b  # pylint: disable=pointless-statement
  with pytest.raises(ValueError, match="arrays cannot be passed as metadata"):
    td_a == td_b  # pylint: disable=pointless-statement


def test_unflatten_wrong_number_of_leaves():
  treedef = tree_util.tree_structure((1, [2, 3]))
  with pytest.raises(ValueError, match=re.escape(
      "Too few leaves for PyTreeDef; expected 3, got 2")):
    treedef.unflatten([1, 2])
  with pytest.raises(ValueError, match=re.escape(
      "Too many leaves for PyTreeDef; expected 3.")):
    treedef.unflatten([1, 2, 3, 4])
  assert treedef.unflatten(iter([1, 2, 3])) == (1, [2, 3])


def test_compose():
  for tree in TREES:
    treedef = tree_util.tree_structure(tree)
    inner = tree_util.tree_structure(["*", "*", "*"])
    composed = treedef.compose(inner)
    expected_leaves = treedef.num_leaves * inner.num_leaves
    assert composed.num_leaves == expected_leaves
    assert composed.num_nodes == ((treedef.num_nodes - treedef.num_leaves)
                                  + inner.num_nodes * treedef.num_leaves)
    leaves = [1] * expected_leaves
    assert tree_util.tree_leaves(composed.unflatten(leaves)) == leaves


def test_walk():
  d = {"b": 2, "a": 1, "c": {"b": 2, "a": 1}}
  leaves, treedef = tree_util.tree_flatten(d)
  nodes, node_data, seen_leaves = [], [], []

  def f_node(node, data):
    nodes.append(node)
    node_data.append(data)

  treedef.walk(f_node, seen_leaves.append, leaves)
  assert seen_leaves == [1, 2, 1, 2]
  assert nodes == [(None, None), (None, None, None)]
  assert node_data == [["a", "b"], ["a", "b", "c"]]
  total = treedef.walk(lambda xs, _: sum(xs), None, leaves)
  assert total == 6


def test_build_tree():
  treedef = tree_util.tree_structure([(1, 2), {"a": 3}])
  assert tree_util.build_tree(treedef, [[10, 11], [12]]) == [(10, 11),
                                                             {"a": 12}]
  with pytest.raises(ValueError, match="Arity mismatch"):
    tree_util.build_tree(treedef, [[10], [12]])


def test_bad_flatten_results():
  with pytest.raises(ValueError, match=re.escape(
      "The to_iterable function for a custom PyTree node should return a "
      "(children, aux_data) tuple, got 'hello'")):
    tree_util.tree_flatten(BadFlattenNonTuple(3, 4))
  with pytest.raises(ValueError, match=re.escape(
      "should return a (children, aux_data) tuple, got (2, 3, 4)")):
    tree_util.tree_flatten(BadFlattenBadArity(3, 4))
  with pytest.raises(ValueError, match=re.escape(
      "tuple where 'children' is iterable, got (7, 7)")):
    tree_util.tree_flatten(BadFlattenNonIterable(3, 4))


def test_iterator_leaf_warns():
  with pytest.warns(DeprecationWarning, match="'generator' is treated as a leaf"):
    leaves = tree_util.tree_leaves([(i for i in range(3))])
  assert len(leaves) == 1
  with pytest.warns(DeprecationWarning, match="'dict_values'"):
    tree_util.tree_leaves({}.values())
  with warnings.catch_warnings():
    warnings.simplefilter("error")
    tree_util.tree_leaves(zip(), is_leaf=lambda x: isinstance(x, zip))


# ---------------------------------------------------------------------------
# is_leaf
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("leaf_fn", [
    tree_util.tree_leaves,
    lambda tree, is_leaf: tree_util.tree_flatten(tree, is_leaf)[0]])
def test_flatten_is_leaf(leaf_fn):
  x = [(1, 2), (3, 4), (5, 6)]
  assert leaf_fn(x, is_leaf=lambda t: False) == [1, 2, 3, 4, 5, 6]
  assert leaf_fn(x, is_leaf=lambda t: isinstance(t, tuple)) == x
  assert leaf_fn(x, is_leaf=lambda t: isinstance(t, list)) == [x]
  assert leaf_fn(x, is_leaf=lambda t: True) == [x]
  y = [[[(1,)], [[(2,)], {"a": (3,)}]]]
  assert leaf_fn(y, is_leaf=lambda t: isinstance(t, tuple)) == [(1,), (2,),
                                                                (3,)]


def test_structure_is_leaf():
  x = [(1, 2), (3, 4), (5, 6)]
  assert tree_util.tree_structure(x, is_leaf=lambda t: False).num_leaves == 6
  assert tree_util.tree_structure(
      x, is_leaf=lambda t: isinstance(t, tuple)).num_leaves == 3
  assert tree_util.tree_structure(x, is_leaf=lambda t: True).num_leaves == 1


def test_is_leaf_called_on_every_node_and_none():
  seen = []

  def is_leaf(x):
    seen.append(x)
    return x is None

  tree = [None, (1,)]
  leaves, treedef = tree_util.tree_flatten(tree, is_leaf)
  assert leaves == [None, 1]
  assert seen == [tree, None, (1,), 1]
  assert str(treedef) == "PyTreeDef([*, (*,)])"


def test_is_leaf_must_return_bool():
  with pytest.raises(ValueError, match="non-boolean value 1"):
    tree_util.tree_leaves([1], is_leaf=lambda x: 1)
  assert tree_util.tree_leaves([1], is_leaf=lambda x: None) == [1]


def test_all_leaves():
  for tree in TREES:
    assert tree_util.all_leaves(tree_util.tree_leaves(tree))
    assert not tree_util.all_leaves([tree])
    is_leaf = lambda t: tree_util.all_leaves([t])
    assert not tree_util.all_leaves([tree], is_leaf=is_leaf)
  for leaf in LEAVES:
    assert tree_util.all_leaves([leaf])
    assert tree_util.all_leaves([leaf], is_leaf=lambda t: False)
  assert not tree_util.all_leaves([None])


def test_is_tree_node():
  for typ in (list, dict, tuple, type(None), AnObject, ATuple,
              ANamedTupleSubclass, collections.OrderedDict, ADataclass):
    assert tree_util.is_tree_node(typ)
  for typ in (int, str, float, np.ndarray):
    assert not tree_util.is_tree_node(typ)


# ---------------------------------------------------------------------------
# flatten_up_to and tree_map
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tree,xs,expected", [
    ([(1, 2), None, ATuple(foo=3, bar=7)],
     [({"foo": 7}, (3, 4)), None, ATuple(foo=(11, 9), bar=None)],
     [{"foo": 7}, (3, 4), (11, 9), None]),
    ([1], [{"a": 7}], [{"a": 7}]),
    ([1], [(7,)], [(7,)]),
    ((1, 2), ({"a": 7}, {"a": 8}), [{"a": 7}, {"a": 8}]),
    ({"a": 1, "b": (2, 3)}, {"a": [7], "b": ([8], (9,))}, [[7], [8], (9,)]),
    ({"a": 1}, {"a": {"a": 7}}, [{"a": 7}]),
    (None, None, []),
    (1, [1, 2], [[1, 2]]),
])
def test_flatten_up_to(tree, xs, expected):
  assert tree_util.tree_structure(tree).flatten_up_to(xs) == expected


@pytest.mark.parametrize("tree,xs,error", [
    ([1, 2], [7], "List arity mismatch: 1 != 2; list: [7]."),
    ((1,), (7, 8), "Tuple arity mismatch: 2 != 1; tuple: (7, 8)."),
    ({"a": 1}, {"a": 7, "b": 8},
     "Dict key mismatch; expected keys: ['a']; present keys: ['a', 'b']."),
    ({"a": 1}, {"b": 7}, "Dict key mismatch; expected keys: ['a'];"),
    ([1], {"a": 7}, "Expected list, got {'a': 7}."),
    ([1], (7,), "Expected list, got (7,)."),
    ((1,), [7], "Expected tuple, got [7]."),
    ({"a": 1}, (7,), "Expected dict, got (7,)."),
    ([[1]], [7], "Expected list, got 7."),
    ([(1,)], [{"a": 7}], "Expected tuple, got {'a': 7}."),
    ({"a": {"a": 1}}, {"a": [7]}, "Expected dict, got [7]."),
    ([ATuple(foo=1, bar=2)], [(1, 2)], "Expected named tuple, got (1, 2)."),
    ([ATuple(foo=1, bar=2)], [ANamedTupleSubclass(foo=1, bar=2)],
     "Named tuple type mismatch"),
    ([AnObject(x=[1], y=(2,), z={"a": [1]})], [([1], (2,), {"a": [1]})],
     "Custom node type mismatch"),
    ([AnObject(1, 2, "z")], [AnObject(1, 2, "w")],
     "Mismatch custom node data: 'z' != 'w'"),
    (ADataclass(x=1, y=2), (1, 2), "Custom dataclass node type mismatch"),
    (None, [2], "Expected None, got [2]."),
    ([1, (2,)], [(7,), [8]], "Expected tuple, got [8]."),  # rightmost first
])
def test_flatten_up_to_errors(tree, xs, error):
  with pytest.raises(ValueError, match=re.escape(error)):
    tree_util.tree_structure(tree).flatten_up_to(xs)


def test_tree_map():
  x = ((1, 2), (3, 4, 5))
  y = (([3], None), ({"foo": "bar"}, 7, [5, 6]))
  out = tree_util.tree_map(lambda *xs: tuple(xs), x, y)
  assert out == (((1, [3]), (2, None)), ((3, {"foo": "bar"}), (4, 7),
                                         (5, [5, 6])))
  assert tree_util.tree_map(lambda a: a * 2, 3) == 6
  assert tree_util.tree_map(lambda a: a, None) is None
  custom = tree_util.tree_map(lambda a: a + 1, [AnObject(1, 2, "z")])
  assert custom == [AnObject(2, 3, "z")]


def test_tree_map_is_leaf():
  x = ((1, 2), [3, 4, 5])
  y = (([3], None), ({"foo": "bar"}, 7, [5, 6]))
  out = tree_util.tree_map(lambda *xs: tuple(xs), x, y,
                           is_leaf=lambda n: isinstance(n, list))
  assert out == (((1, [3]), (2, None)),
                 ([3, 4, 5], ({"foo": "bar"}, 7, [5, 6])))


@pytest.mark.parametrize("t1,t2,error", [
    ([1, 2], [7], "different lengths of list at key path\n    tree_map tree\n"),
    ((1, (2, 3)), (1, [2, 3]),
     "different types at key path\n    tree_map tree[1]\n"),
    ({"a": 1}, {"b": 2},
     "different pytree metadata at key path\n    tree_map tree\n"),
    ([None], [1], "different types at key path\n    tree_map tree[0]\n"),
])
def test_tree_map_mismatch_errors(t1, t2, error):
  with pytest.raises(ValueError, match="pytree structure error: " +
                     re.escape(error)):
    tree_util.tree_map(lambda a, b: a, t1, t2)


def test_tree_reduce():
  assert tree_util.tree_reduce(lambda a, b: a + b, [1, (2, {"x": 3})]) == 6
  assert tree_util.tree_reduce(lambda a, b: a + b, [], 10) == 10
  assert tree_util.tree_reduce(lambda a, b: a + b, [1, 2], initializer=5) == 8
  out = tree_util.tree_reduce(lambda x, y: x + y, [(1, 2), [(3, 4), (5, 6)]],
                              is_leaf=lambda l: isinstance(l, tuple))
  assert out == (1, 2, 3, 4, 5, 6)
  with pytest.raises(TypeError):
    tree_util.tree_reduce(lambda a, b: a + b, [])


def test_tree_reduce_associative():
  out = tree_util.tree_reduce_associative(
      lambda x, y: x + y, [(1, 2), [(3, 4), (5, 6)]],
      is_leaf=lambda l: isinstance(l, tuple))
  assert out == (1, 2, 3, 4, 5, 6)
  calls = []
  tree_util.tree_reduce_associative(
      lambda a, b: calls.append((a, b)) or a + b, [1, 2, 3, 4])
  assert calls == [(1, 2), (3, 4), (3, 7)]  # balanced, not left fold
  assert tree_util.tree_reduce_associative(max, [], identity=-1) == -1
  with pytest.raises(TypeError, match="Must specify identity"):
    tree_util.tree_reduce_associative(max, [])


def test_tree_all():
  assert tree_util.tree_all([True, (True, 1)])
  assert not tree_util.tree_all([True, (True, False)])
  assert tree_util.tree_all([])
  assert tree_util.tree_all([True, (True, False)],
                            is_leaf=lambda x: isinstance(x, tuple))


@pytest.mark.parametrize("tree", [t for t in TREES
                                  if not isinstance(t, FlatCache)])
def test_transpose(tree):
  outer = tree_util.tree_structure(tree)
  if not outer.num_leaves:
    pytest.skip("empty tree")
  make_inner = lambda x: [x, x, x]
  inner = tree_util.tree_structure(make_inner(1))
  nested = tree_util.tree_map(make_inner, tree)
  assert tree_util.tree_transpose(outer, inner, nested) == make_inner(tree)
  make_inner2 = lambda x: [x, {"a": x}, (x,)]
  nested = tree_util.tree_map(make_inner2, tree)
  assert tree_util.tree_transpose(outer, None, nested) == make_inner2(tree)


def test_transpose_mismatch_and_custom():
  tree = {"a": [1, 2], "b": [3, 4]}
  inner = tree_util.tree_structure([1, 2])
  with pytest.raises(TypeError, match="Mismatch"):
    tree_util.tree_transpose(tree_util.tree_structure({"a": 1, "b": 2, "c": 3}),
                             inner, tree)
  with pytest.raises(TypeError, match="Mismatch"):
    tree_util.tree_transpose(tree_util.tree_structure({"a": 1, "b": 2}),
                             tree_util.tree_structure([1, 2, 3]), tree)
  outer = tree_util.tree_structure(FlatCache({"a": 1, "b": 2}))
  actual = tree_util.tree_transpose(outer, inner,
                                    FlatCache({"a": [3, 4], "b": [5, 6]}))
  assert actual == [FlatCache({"a": 3, "b": 5}), FlatCache({"a": 4, "b": 6})]


# ---------------------------------------------------------------------------
# Broadcasting prefixes
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tree", [t for t in TREES
                                  if not isinstance(t, FlatCache)])
def test_broadcast(tree):
  nested = tree_util.tree_map(lambda x: [x, x, x], tree)
  assert tree_util.tree_broadcast(tree, nested) == nested
  full_def = tree_util.tree_structure(nested)
  flat = broadcast_flattened_prefix_with_treedef(
      *tree_util.tree_flatten(tree), full_def)
  assert full_def.unflatten(flat) == nested


def test_broadcast_simple_and_errors():
  full = (0, {"a": 0, "b": 0}, (0, 0))
  assert tree_util.tree_broadcast((1, 2, 3), full) == (1, {"a": 2, "b": 2},
                                                      (3, 3))
  assert jtree.broadcast((1, 2, 3), full) == (1, {"a": 2, "b": 2}, (3, 3))
  assert broadcast_prefix((1, 2, 3), full) == [1, 2, 2, 3, 3]
  assert broadcast_prefix(0, full) == [0] * 5
  # None is an empty node, not a leaf, unless is_leaf says so (as vmap does).
  assert broadcast_prefix((None, 1), ((1, 2), [3]),
                          is_leaf=lambda x: x is None) == [None, None, 1]
  with pytest.raises(ValueError, match=r"different types at key path\n"
                     r"    broadcast_prefix prefix_tree\[0\]"):
    broadcast_prefix((None, 1), ((1, 2), [3]))
  assert broadcast_prefix([(1, 2)], [[3, 4]],
                          is_leaf=lambda x: isinstance(x, tuple)) == [(1, 2)] * 2
  for prefix, full in [((1, 2, 3), (0, {"a": 0, "b": 0})),
                       ((1, 2), (0, {"a": 0, "b": 0}, (0, 0))),
                       ((1, {"a": 0}), (0, {"a": 0, "b": 0}))]:
    with pytest.raises(ValueError, match="pytree structure error"):
      tree_util.tree_broadcast(prefix, full)
    with pytest.raises(ValueError, match="broadcast_prefix prefix_tree"):
      broadcast_prefix(prefix, full)
    with pytest.raises(Exception):
      broadcast_flattened_prefix_with_treedef(
          *tree_util.tree_flatten(prefix), tree_util.tree_structure(full))


# ---------------------------------------------------------------------------
# Key paths
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tree", TREES + LEAVES)
def test_roundtrip_with_path(tree):
  key_leaves, treedef = tree_util.tree_flatten_with_path(tree)
  assert treedef == tree_util.tree_structure(tree)
  assert _eq(tree_util.tree_unflatten(treedef, [l for _, l in key_leaves]),
             tree)


def test_flatten_with_path_builtin():
  flattened, treedef = tree_util.tree_flatten_with_path((1, {"a": 2, "b": 3}))
  assert flattened == [((SequenceKey(0),), 1),
                       ((SequenceKey(1), DictKey("a")), 2),
                       ((SequenceKey(1), DictKey("b")), 3)]
  assert treedef == tree_util.tree_structure((1, {"a": 2, "b": 3}))


def test_flatten_with_path_custom():
  x = [AnObject2(x=12, y={"foo": SpecialWithKeys(x=2, y=3), "bar": None},
                 z="constantdef"), 5]
  flattened, _ = tree_util.tree_flatten_with_path(x)
  assert flattened == [
      ((SequenceKey(0), "x"), 12),
      ((SequenceKey(0), "y", DictKey("foo"), GetAttrKey("x")), 2),
      ((SequenceKey(0), "y", DictKey("foo"), GetAttrKey("y")), 3),
      ((SequenceKey(1),), 5)]
  # Nodes registered without keys get FlattenedIndexKey entries.
  flattened, _ = tree_util.tree_flatten_with_path(Special([1, 2], [3, 4]))
  assert [p for p, _ in flattened][0] == (FlattenedIndexKey(0), SequenceKey(0))
  assert len(flattened) == 4
  partial = tree_util.tree_leaves_with_path(tree_util.Partial(print, 1, x=2))
  assert [tree_util.keystr(p) for p, _ in partial] == [
      "[<flat index 0>][0]", "[<flat index 1>]['x']"]


def test_flatten_with_path_dicts_and_dataclass():
  d = collections.defaultdict(int, {"b": 2, "a": 1, "c": {"b": 2, "a": 1}})
  leaves, treedef = tree_util.tree_flatten_with_path(d)
  assert leaves == [((DictKey("a"),), 1), ((DictKey("b"),), 2),
                    ((DictKey("c"), DictKey("a")), 1),
                    ((DictKey("c"), DictKey("b")), 2)]
  assert treedef == tree_util.tree_structure(d)
  od = collections.OrderedDict({"b": 2, "a": 1})
  assert tree_util.tree_leaves_with_path(od) == [((DictKey("b"),), 2),
                                                 ((DictKey("a"),), 1)]
  dc = ADataclassWithMeta(x=(1, 2), y=3, z=4)
  assert [tree_util.keystr(p) for p, _ in
          tree_util.tree_leaves_with_path(dc)] == [".x[0]", ".x[1]", ".y"]


def test_keystr():
  tree = [ATuple(12, {"cin": [1, 4, 10], "bar": None}), np.arange(5)]
  flattened, _ = tree_util.tree_flatten_with_path(tree)
  assert [f"{tree_util.keystr(kp)}: {x}" for kp, x in flattened] == [
      "[0].foo: 12", "[0].bar['cin'][0]: 1", "[0].bar['cin'][1]: 4",
      "[0].bar['cin'][2]: 10", "[1]: [0 1 2 3 4]"]
  assert [f"{tree_util.keystr(kp, simple=True, separator='/')}: {x}"
          for kp, x in flattened] == [
              "0/foo: 12", "0/bar/cin/0: 1", "0/bar/cin/1: 4",
              "0/bar/cin/2: 10", "1: [0 1 2 3 4]"]
  params = {"foo": {"bar": {"baz": 1, "bat": [2, 3]}}}
  assert [tree_util.keystr(p) for p, _ in
          tree_util.tree_leaves_with_path(params)] == [
              "['foo']['bar']['bat'][0]", "['foo']['bar']['bat'][1]",
              "['foo']['bar']['baz']"]
  assert tree_util.keystr(()) == ""
  assert tree_util.keystr((FlattenedIndexKey(3), "raw"), simple=True,
                          separator=".") == "3.raw"


def test_tree_map_with_path():
  tree = [{i: i for i in range(10)}]
  all_zeros = tree_util.tree_map_with_path(
      lambda kp, val: val - kp[1].key + kp[0].idx, tree)
  assert all_zeros == [{i: 0 for i in range(10)}]
  tree1 = [AnObject2(x=12, y={"cin": [1, 4, 10], "bar": None}, z="c"), 5]
  tree2 = [AnObject2(x=2, y={"cin": [2, 2, 2], "bar": None}, z="c"), 2]
  assert (tree_util.tree_map_with_path(lambda kp, a, b: a + b, tree1, tree2)
          == tree_util.tree_map(lambda a: a + 2, tree1))
  with pytest.raises(ValueError, match="tree_map_with_path tree"):
    tree_util.tree_map_with_path(lambda kp, a, b: a, [1], [1, 2])


def test_with_path_is_leaf():
  x = ((1, 2), [3, 4, 5])
  y = (([3], None), ([0], 7, [5, 6]))
  expected = (((0, 1, [3]), (0, 2, None)), (1, [3, 4, 5], ([0], 7, [5, 6])))
  out = tree_util.tree_map_with_path(
      lambda kp, *xs: (kp[0].idx, *xs), x, y,
      is_leaf=lambda kp, n: isinstance(n, list), is_leaf_takes_path=True)
  assert out == expected
  out = tree_util.tree_map_with_path(
      lambda kp, *xs: (kp[0].idx, *xs), x, y,
      is_leaf=lambda n: isinstance(n, list))
  assert out == expected
  flattened, _ = tree_util.tree_flatten_with_path(
      ((1, 2), [3, {4: 4, 5: 5}]), is_leaf=lambda kp, _: len(kp) >= 2,
      is_leaf_takes_path=True)
  assert flattened == [((SequenceKey(0), SequenceKey(0)), 1),
                       ((SequenceKey(0), SequenceKey(1)), 2),
                       ((SequenceKey(1), SequenceKey(0)), 3),
                       ((SequenceKey(1), SequenceKey(1)), {4: 4, 5: 5})]


def test_flatten_with_path_is_leaf_empty_nodes():
  def is_empty(x):
    try:
      children, _ = tree_util.flatten_one_level(x)
    except ValueError:
      return True
    return len(children) == 0

  EmptyTuple = collections.namedtuple("EmptyTuple", ())
  tree = {"a": 1, "sub": [np.array((1, 2)), ATuple(foo=(), bar=[None])],
          "obj": AnObject2(x=EmptyTuple(), y=0, z="constantdef")}
  flattened, _ = tree_util.tree_flatten_with_path(
      tree, lambda kp, x: is_empty(x), is_leaf_takes_path=True)
  assert [f"{tree_util.keystr(kp)}: {x}" for kp, x in flattened] == [
      "['a']: 1", "['obj']x: EmptyTuple()", "['obj']y: 0",
      "['sub'][0]: [1 2]", "['sub'][1].foo: ()", "['sub'][1].bar[0]: None"]


def test_flatten_one_level():
  EmptyTuple = collections.namedtuple("EmptyTuple", ())
  tree = {"a": 1, "sub": [np.arange(2), ATuple(foo=(), bar=[None])],
          "obj": AnObject2(x=EmptyTuple(), y=0, z="constantdef")}
  assert tree_util.flatten_one_level(tree["sub"])[0] is tree["sub"]
  assert tree_util.flatten_one_level(tree["sub"][1]) == ([(), [None]], ATuple)
  assert tree_util.flatten_one_level(tree["obj"])[0] == [EmptyTuple(), 0]
  assert tree_util.flatten_one_level({"a": [1, 2], "b": {"c": 3}}) == (
      ([1, 2], {"c": 3}), ("a", "b"))
  assert tree_util.flatten_one_level(None) == ((), None)
  with pytest.raises(ValueError, match="can't tree-flatten type"):
    tree_util.flatten_one_level(1)
  with pytest.raises(ValueError, match="can't tree-flatten type"):
    tree_util.flatten_one_level(np.arange(2))

  children, meta = tree_util.flatten_one_level_with_keys(tree)
  assert list(children) == [(DictKey("a"), 1), (DictKey("obj"), tree["obj"]),
                            (DictKey("sub"), tree["sub"])]
  assert meta == ("a", "obj", "sub")
  children, meta = tree_util.flatten_one_level_with_keys(tree["sub"])
  assert list(children) == [(SequenceKey(0), tree["sub"][0]),
                            (SequenceKey(1), tree["sub"][1])]
  assert meta is None
  children, meta = tree_util.flatten_one_level_with_keys(tree["sub"][1])
  assert list(children) == [(GetAttrKey("foo"), ()), (GetAttrKey("bar"),
                                                      [None])]
  assert meta is ATuple
  children, meta = tree_util.flatten_one_level_with_keys(tree["obj"])
  assert list(children) == [("x", EmptyTuple()), ("y", 0)]
  assert meta == "constantdef"
  with pytest.raises(ValueError, match="can't tree-flatten type"):
    tree_util.flatten_one_level_with_keys(1)


def test_optional_flatten_with_keys_class():
  @tree_util.register_pytree_with_keys_class
  class FooClass:

    def __init__(self, x, y):
      self.x, self.y = x, y

    def tree_flatten(self):
      return ((self.x, self.y), "treedef")

    def tree_flatten_with_keys(self):
      return (((GetAttrKey("x"), self.x), (GetAttrKey("x"), self.y)),
              "treedef")

    @classmethod
    def tree_unflatten(cls, _, children):
      return cls(*children)

  tree = FooClass(x=1, y=2)
  expected = "PyTreeDef(CustomNode(FooClass[treedef], [*, *]))"
  assert str(tree_util.tree_flatten(tree)[1]) == expected
  assert str(tree_util.tree_flatten_with_path(tree)[1]) == expected
  assert tree_util.tree_leaves(tree) == [
      l for _, l in tree_util.tree_flatten_with_path(tree)[0]]


class TestKeys:

  def test_basic(self):
    key = SequenceKey(idx=1)
    assert (str(key), repr(key), key.idx) == ("[1]", "SequenceKey(idx=1)", 1)
    assert key == SequenceKey(1) and hash(key) == hash(SequenceKey(1))
    key = DictKey(key="foo")
    assert (str(key), repr(key), key.key) == ("['foo']", "DictKey(key='foo')",
                                              "foo")
    assert key == DictKey("foo") and hash(key) == hash(DictKey("foo"))
    assert str(DictKey(1)) == "[1]"
    key = GetAttrKey(name="bar")
    assert (str(key), repr(key), key.name) == (".bar", "GetAttrKey(name='bar')",
                                               "bar")
    assert key == GetAttrKey("bar") and hash(key) == hash(GetAttrKey("bar"))
    key = FlattenedIndexKey(1)
    assert (str(key), repr(key), key.key) == (
        "[<flat index 1>]", "FlattenedIndexKey(key=1)", 1)
    assert key == FlattenedIndexKey(1)
    assert hash(key) != hash(SequenceKey(1))
    assert SequenceKey(1) != FlattenedIndexKey(1)
    assert DictKey("a") != GetAttrKey("a")
    with pytest.raises(AttributeError):
      SequenceKey(1).idx = 2

  def test_custom_dict_key_equality(self):
    class Entry:

      def __init__(self, s):
        self.s = s

      def __hash__(self):
        return hash(self.s)

      def __eq__(self, other):
        return self.s == other.s

    assert DictKey(Entry("foo")) == DictKey(Entry("foo"))
    assert hash(DictKey(Entry("foo"))) == hash(DictKey(Entry("foo")))

  def test_pattern_matching(self):
    for key in [SequenceKey(1), DictKey("foo"), GetAttrKey("bar"),
                FlattenedIndexKey(1)]:
      match key:
        case tree_util.SequenceKey(idx=idx):
          assert idx == 1
        case tree_util.DictKey(key=k):
          assert k == "foo"
        case tree_util.GetAttrKey(name=name):
          assert name == "bar"
        case tree_util.FlattenedIndexKey(key=k):
          assert k == 1
        case _:
          raise AssertionError(key)
    match [DictKey("foo")]:
      case [DictKey("foo"), *_]:
        pass
      case _:
        raise AssertionError

  def test_pickle(self):
    for key in [SequenceKey(1), DictKey("foo"), GetAttrKey("bar"),
                FlattenedIndexKey(1)]:
      assert pickle.loads(pickle.dumps(key)) == key


# ---------------------------------------------------------------------------
# Prefix / equality errors
# ---------------------------------------------------------------------------

def _raises(err, pattern):
  with pytest.raises(ValueError, match=pattern):
    raise err("in_axes")


def test_prefix_errors():
  e, = prefix_errors((1, 2), [1, 2])
  _raises(e, "pytree structure error: different types at key path\n    in_axes")
  e, = prefix_errors(((1,), (2,)), ([3], (4,)))
  _raises(e, r"different types at key path\n    in_axes\[0\]")
  e1, e2 = prefix_errors(((1,), (2,)), ([3], [4]))
  _raises(e2, r"different types at key path\n    in_axes\[1\]")
  e, = prefix_errors((1,), (2, 3))
  _raises(e, "different lengths of tuple at key path\n    in_axes")
  e, = prefix_errors([[1]], [[2, 3]])
  _raises(e, r"different lengths of list at key path\n    in_axes\[0\]")
  e, = prefix_errors({"hi": 1}, {"hi": 2, "bye": 3})
  _raises(e, "different numbers of pytree children at key path\n    in_axes")
  e, = prefix_errors({"a": 1}, {"a": 2, "b": 3})
  _raises(e, "so the symmetric difference on key sets is\n    \\['b'\\]")
  e, = prefix_errors({1: 2}, {3: 4})
  _raises(e, "different pytree metadata at key path\n    in_axes")
  e1, e2 = prefix_errors([{1: 2}, {3: 4}], [{3: 4}, {5: 6}])
  _raises(e2, r"different pytree metadata at key path\n    in_axes\[1\]")
  e, = prefix_errors(Special(1, [2]), Special(3, 4))
  _raises(e, r"different types at key path\n    in_axes\[<flat index 1>\]")
  e, = prefix_errors({}, {"a": []})
  _raises(e, "different numbers of pytree children")
  e, = prefix_errors({"{oops}": []}, {"{oops}": [{}]})
  _raises(e, r"different lengths of list at key path\n    in_axes\['{oops}'\]")
  assert prefix_errors((1, 2), ((11, 12, 13), 2)) == []


def test_prefix_error_custom_node_with_keys():
  @tree_util.register_pytree_with_keys_class
  class Foo:

    def __init__(self, fields):
      self.fields = dict(fields)

    def tree_flatten_with_keys(self):
      return ([(GetAttrKey(k), v) for k, v in self.fields.items()],
              tuple(self.fields))

    @classmethod
    def tree_unflatten(cls, keys, children):
      return cls(zip(keys, children))

  e, = prefix_errors(Foo({"a": 1}), Foo({"a": 2, "b": 3}))
  _raises(e, "(?s)different numbers of pytree children at key path\n"
          "    in_axes\n.*so the symmetric difference on key sets is\n"
          r"    \.b")


def test_equality_errors():
  errs = list(equality_errors([1, {"a": 2}], [1, {"b": 2}]))
  assert errs == [((SequenceKey(1),),
                   "<class 'dict'> with pytree metadata ('a',)",
                   "<class 'dict'> with pytree metadata ('b',)",
                   "the pytree node metadata does not match")]
  errs = list(equality_errors((1, 2), (1, 2, 3)))
  assert errs == [((), "tuple of length 2", "tuple of length 3",
                   "the lengths do not match")]
  errs = list(equality_errors({"a": 1}, {"a": 1, "b": 2}))
  assert errs[0][3] == ("the numbers of children do not match, with the "
                        "symmetric difference of key sets: {'b'}")
  assert list(equality_errors([1, (2,)], [3, (4,)])) == []
  errs = list(equality_errors_pytreedef(tree_util.tree_structure([1, 2]),
                                        tree_util.tree_structure([1, (2,)])))
  assert errs == [((SequenceKey(1),), "pytree leaf", "<class 'tuple'>",
                   "their Python types differ")]


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------

def test_duplicate_registration():
  with pytest.raises(ValueError, match="Duplicate custom PyTreeDef type "
                     "registration for <class '.*AnObject'>."):
    tree_util.register_pytree_node(AnObject, lambda o: ((), None),
                                   lambda a, c: None)
  with pytest.raises(ValueError, match="Duplicate"):
    tree_util.register_pytree_node(list, lambda o: ((), None),
                                   lambda a, c: None)
  with pytest.raises(ValueError, match="Duplicate custom dataclass"):
    tree_util.register_dataclass(ADataclass)


def test_registration_is_by_exact_type():
  class Sub(AnObject):
    pass

  assert tree_util.tree_leaves(Sub(1, 2, 3)) == [Sub(1, 2, 3)]


def test_register_later_overrides_cached_leaf():
  class Box:

    def __init__(self, v):
      self.v = v

  assert len(tree_util.tree_leaves([Box(1)])) == 1  # cached as a leaf type
  tree_util.register_pytree_node(Box, lambda b: ((b.v,), None),
                                 lambda _, c: Box(c[0]))
  assert tree_util.tree_leaves([Box([1, 2])]) == [1, 2]


def test_register_dataclass():
  @tree_util.register_dataclass
  @dataclasses.dataclass
  class Foo:
    x: int
    y: int = dataclasses.field(metadata=dict(static=True))
    z: int = jtree.static(default=7)

  leaves, treedef = tree_util.tree_flatten(Foo(2, 3))
  assert leaves == [2]
  assert str(treedef) == "PyTreeDef(CustomNode(Foo[(3, 7)], [*]))"
  assert treedef.unflatten([5]) == Foo(5, 3, 7)
  assert treedef != tree_util.tree_structure(Foo(2, 4))

  @functools.partial(tree_util.register_dataclass, data_fields=["a", "b"],
                     meta_fields=[])
  class Plain:  # not a dataclass: fields are not validated

    def __init__(self, a, b):
      self.a, self.b = a, b

  assert tree_util.tree_leaves(Plain(1, [2, 3])) == [1, 2, 3]


def test_register_dataclass_errors():
  class Foo:
    x: int

  with pytest.raises(TypeError, match="data_fields and meta_fields are "
                     "required when nodetype is not a dataclass. Got "
                     "nodetype=<class '.*Foo'>"):
    tree_util.register_dataclass(Foo)
  with pytest.raises(TypeError, match=r"must both be specified when either is "
                     r"specified. Got data_fields=\['x'\] meta_fields=None."):
    tree_util.register_dataclass(Foo, data_fields=["x"])

  @dataclasses.dataclass
  class Bar:
    x: int
    y: int
    z: float = dataclasses.field(default=0.0, init=False)

  with pytest.raises(ValueError, match="Missing fields: {'y'}"):
    tree_util.register_dataclass(Bar, data_fields=["x"], meta_fields=[])
  with pytest.raises(ValueError, match="Unexpected fields: {'w'}"):
    tree_util.register_dataclass(Bar, data_fields=["x"], meta_fields=["y", "w"])
  with pytest.raises(ValueError, match="Overlapping fields: {'x'}"):
    tree_util.register_dataclass(Bar, data_fields=["x", "y"],
                                 meta_fields=["x"])
  with pytest.raises(ValueError):  # z is init=False but a field: must drop it
    tree_util.register_dataclass(Bar, data_fields=["x", "y", "z"],
                                 meta_fields=[])
  tree_util.register_dataclass(Bar, data_fields=["x"], meta_fields=["y"])


def test_register_dataclass_drop_fields():
  @dataclasses.dataclass
  class Foo:
    x: int
    y: int = 42

  tree_util.register_dataclass(Foo, drop_fields=["y"])
  leaves, treedef = tree_util.tree_flatten(Foo(1, 2))
  assert leaves == [1] and treedef.unflatten([3]) == Foo(3, 42)


def test_register_static():
  leaves, treedef = tree_util.tree_flatten([StaticInt(1), 2])
  assert leaves == [2]
  assert treedef.unflatten([5]) == [StaticInt(1), 5]
  assert treedef == tree_util.tree_structure([StaticInt(1), 0])
  assert treedef != tree_util.tree_structure([StaticInt(2), 0])
  assert (tree_util.tree_structure(BlackBox(1))
          == tree_util.tree_structure(BlackBox(2)))
  assert StaticInt.__name__ == "StaticInt"


def test_static_field():
  assert jtree.static().metadata == {"static": True}
  assert jtree.static().default is dataclasses.MISSING
  assert jtree.static(default="abc").default == "abc"
  assert jtree.static(metadata={"k": "v"}).metadata == {"static": True,
                                                        "k": "v"}
  assert jtree.static(metadata={"static": False}).metadata == {"static": False}


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("p", [
    tree_util.Partial(_dummy_func),
    tree_util.Partial(_dummy_func, 1, 2),
    tree_util.Partial(_dummy_func, x="a"),
    tree_util.Partial(_dummy_func, 1, 2, 3, x=4, y=5),
])
def test_partial_roundtrip(p):
  leaves, treedef = tree_util.tree_flatten(p)
  actual = tree_util.tree_unflatten(treedef, leaves)
  assert (actual.func, actual.args, actual.keywords) == (p.func, p.args,
                                                         p.keywords)
  assert len(leaves) == len(p.args) + len(p.keywords)


def test_partial_with_tree_map():
  add = tree_util.Partial(lambda a, b, c=0: a + b + c, 1, c=10)
  doubled = tree_util.tree_map(lambda x: x * 2, add)
  assert isinstance(doubled, tree_util.Partial)
  assert doubled.args == (2,) and doubled.keywords == {"c": 20}
  assert doubled(3) == 25
  assert tree_util.tree_structure(add) == tree_util.tree_structure(doubled)


def test_partial_does_not_merge_partials():
  def f(a, b, c):
    return (a, b, c)

  g = functools.partial(f, 2)
  h = tree_util.Partial(g, 3)
  assert h.args == (3,)
  assert h(4) == (2, 3, 4)
  fun = functools.partial(print, 1)
  p1, p2 = tree_util.Partial(fun, 2), tree_util.Partial(fun, 2)
  assert fun == p1.func and p1.func == fun and p1.func == p2.func
  assert hash(p1.func) == hash(p2.func)
  assert tree_util.tree_structure(p1) == tree_util.tree_structure(p2)


# ---------------------------------------------------------------------------
# openjax.tree aliases
# ---------------------------------------------------------------------------

def test_tree_module_aliases():
  obj = [1, 2, (3, 4)]
  is_leaf = lambda x: isinstance(x, tuple)
  assert jtree.flatten(obj) == tree_util.tree_flatten(obj)
  assert jtree.flatten(obj, is_leaf) == tree_util.tree_flatten(obj, is_leaf)
  assert jtree.leaves(obj, is_leaf=is_leaf) == [1, 2, (3, 4)]
  assert jtree.structure(obj) == tree_util.tree_structure(obj)
  assert jtree.map(lambda x: x * 2, obj) == [2, 4, (6, 8)]
  assert jtree.map(lambda x, y: x + y, obj, obj) == [2, 4, (6, 8)]
  assert jtree.reduce(lambda a, b: a + b, obj) == 10
  assert jtree.reduce_associative(lambda a, b: a + b, obj) == 10
  assert jtree.all([True, (True, False)], is_leaf=is_leaf)
  leaves, treedef = jtree.flatten(obj)
  assert jtree.unflatten(treedef, leaves) == obj
  assert jtree.flatten_with_path(obj) == tree_util.tree_flatten_with_path(obj)
  assert jtree.leaves_with_path(obj)[2] == ((SequenceKey(2), SequenceKey(0)),
                                           3)
  assert jtree.map_with_path(lambda kp, x: len(kp), obj) == [1, 1, (2, 2)]
  outer = jtree.structure(["*", "*", "*"])
  inner = jtree.structure(("*", "*"))
  assert jtree.transpose(outer, inner, [(1, 2), (3, 4), (5, 6)]) == (
      [1, 3, 5], [2, 4, 6])
  assert jtree.map is tree_util.tree_map
  for name in jtree.__all__:
    assert hasattr(jtree, name)
  for name in tree_util.__all__:
    assert hasattr(tree_util, name)


# ---------------------------------------------------------------------------
# Property-based round trips
# ---------------------------------------------------------------------------

_leaf = st.one_of(st.integers(), st.floats(allow_nan=False), st.text(max_size=3))
_trees = st.recursive(
    st.one_of(_leaf, st.none()),
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.lists(children, max_size=4).map(tuple),
        st.dictionaries(st.text(max_size=3), children, max_size=4),
        st.tuples(children, children).map(lambda t: ATuple(*t)),
        st.dictionaries(st.integers(), children, max_size=3).map(
            lambda d: collections.OrderedDict(d)),
        st.tuples(children, children, st.integers()).map(
            lambda t: AnObject(*t)),
    ),
    max_leaves=20)


@settings(max_examples=150, deadline=None)
@given(_trees)
def test_hypothesis_roundtrip(tree):
  leaves, treedef = tree_util.tree_flatten(tree)
  assert treedef.num_leaves == len(leaves)
  assert tree_util.tree_unflatten(treedef, leaves) == tree
  assert treedef.flatten_up_to(tree) == leaves
  assert tree_util.tree_structure(tree_util.tree_map(lambda x: 0, tree)) == (
      treedef)
  assert pickle.loads(pickle.dumps(treedef)) == treedef
  path_leaves, path_def = tree_util.tree_flatten_with_path(tree)
  assert path_def == treedef and [l for _, l in path_leaves] == leaves
  assert treedef.num_nodes == 1 + sum(c.num_nodes for c in treedef.children())
  assert str(treedef).startswith("PyTreeDef(")
  assert broadcast_prefix(tree, tree) == leaves
