"""Pytrees: flattening nested containers into leaves and a structure (treedef).

The implementation is split by concept, with imports flowing one way:

* ``_flatten``: the node registry, flatten/unflatten, ``PyTreeDef`` and the
  treedef helpers (imports nothing of ours);
* ``_paths``: key-path entries, ``keystr``, node registration (custom nodes,
  dataclasses, ``Partial``, ``OrderedDict``/``defaultdict``) and the
  ``*_with_path`` flatteners (imports ``_flatten``);
* ``_api``: ``tree_map``, ``tree_transpose``, the reductions, structural
  diagnostics and prefix broadcasting (imports both).

This package only re-exports them.
"""
from openjax._src.tree_util._flatten import (  # noqa: F401
    H, KeyEntry, KeyLeafPair, KeyLeafPairs, KeyPath, Leaf, PyTree, PyTreeDef,
    T, Typ, all_leaves, build_tree, is_tree_node, tree_flatten, tree_leaves,
    tree_structure, tree_unflatten, treedef_children, treedef_is_leaf,
    treedef_is_strict_leaf, treedef_tuple)
from openjax._src.tree_util._paths import (  # noqa: F401
    DictKey, FlattenedIndexKey, GetAttrKey, Partial, SequenceKey,
    default_registry, flatten_one_level, flatten_one_level_with_keys, keystr,
    register_dataclass, register_pytree_node, register_pytree_node_class,
    register_pytree_with_keys, register_pytree_with_keys_class,
    register_static, static, tree_flatten_with_path, tree_leaves_with_path)
from openjax._src.tree_util._api import (  # noqa: F401
    Unspecified, broadcast_flattened_prefix_with_treedef, broadcast_prefix,
    deprecated_top_level_alias, equality_errors, equality_errors_pytreedef, prefix_errors, tree_all,
    tree_broadcast, tree_map, tree_map_with_path, tree_reduce,
    tree_reduce_associative, tree_transpose)
# The node registry under JAX's private name: libraries test membership in
# ``jax._src.tree_util._registry`` (flax.nnx's graph nodes).
from openjax._src.tree_util._flatten import _registry  # noqa: F401,E402
