"""Pytrees: nested containers of leaves, and functions that work on them (the
machinery; :mod:`plait_core.tree_util` is the public namespace).

A *pytree* is a Python value built from container "nodes" whose contents are
either further pytrees or *leaves*.  The node types understood out of the box
are:

* ``None`` -- a node with no children (so it contributes no leaves);
* ``tuple`` and ``list``;
* ``dict`` -- children are visited in sorted key order and a dict rebuilt by
  :func:`tree_unflatten` has its keys in sorted order;
* ``collections.OrderedDict`` -- children are visited in insertion order,
  which is kept;
* ``collections.defaultdict`` -- like ``dict``; ``default_factory`` is kept;
* named tuples (any ``tuple`` subclass with a ``_fields`` attribute), rebuilt
  as the same class.

Every other value is a leaf unless its exact type has been registered with
:func:`register_pytree_node` (or one of its variants).  Subclasses of the
built-in containers other than those listed above are leaves.

:func:`tree_flatten` splits a pytree into a list of leaves and a
:class:`PyTreeDef` describing the structure; :func:`tree_unflatten` performs
the inverse.  Both are on the hot path of transformed-function calls, so they
are written to do as little work per node as possible.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from itertools import islice
from typing import Any, Final, TypeAlias, TypeVar, cast, overload

__all__ = [
    "DictKey",
    "FlattenedIndexKey",
    "GetAttrKey",
    "KeyEntry",
    "KeyPath",
    "Partial",
    "PyTreeDef",
    "SequenceKey",
    "all_leaves",
    "keystr",
    "register_dataclass",
    "register_pytree_node",
    "register_pytree_node_class",
    "register_pytree_with_keys",
    "register_static",
    "tree_all",
    "tree_flatten",
    "tree_flatten_with_path",
    "tree_leaves",
    "tree_leaves_with_path",
    "tree_map",
    "tree_map_with_path",
    "tree_reduce",
    "tree_structure",
    "tree_transpose",
    "tree_unflatten",
    "treedef_children",
    "treedef_is_leaf",
    "treedef_is_strict_leaf",
    "treedef_tuple",
]

_T = TypeVar("_T")
_C = TypeVar("_C", bound="type[Any]")

IsLeaf: TypeAlias = "Callable[[Any], bool] | None"


# ---------------------------------------------------------------------------
# Key path entries
# ---------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True, slots=True)
class SequenceKey:
    """Path entry for the ``idx``-th element of a tuple or list.

    ``str(SequenceKey(1)) == "[1]"``.
    """

    idx: int

    def __str__(self) -> str:
        return f"[{self.idx!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class DictKey:
    """Path entry for the value stored under ``key`` in a mapping.

    ``str(DictKey("a")) == "['a']"``.
    """

    key: Hashable

    def __str__(self) -> str:
        return f"[{self.key!r}]"


@dataclasses.dataclass(frozen=True, slots=True)
class GetAttrKey:
    """Path entry for the attribute ``name`` (named tuple fields, dataclasses).

    ``str(GetAttrKey("x")) == ".x"``.
    """

    name: str

    def __str__(self) -> str:
        return f".{self.name}"


@dataclasses.dataclass(frozen=True, slots=True)
class FlattenedIndexKey:
    """Path entry for the ``key``-th child of a custom node registered
    without key information.

    ``str(FlattenedIndexKey(2)) == "[2]"``.
    """

    key: int

    def __str__(self) -> str:
        return f"[{self.key!r}]"


KeyEntry: TypeAlias = Hashable
"""One step of a key path; normally one of the four key classes above, but
custom nodes registered with keys may use any hashable object."""

KeyPath: TypeAlias = tuple[KeyEntry, ...]
"""The sequence of key entries leading from the root of a pytree to a node."""


def _simple_key(key: KeyEntry) -> str:
    if isinstance(key, SequenceKey):
        return str(key.idx)
    if isinstance(key, DictKey):
        return str(key.key)
    if isinstance(key, GetAttrKey):
        return key.name
    if isinstance(key, FlattenedIndexKey):
        return str(key.key)
    return str(key)


def keystr(keys: KeyPath, *, simple: bool = False, separator: str = "") -> str:
    """Render a key path as a string.

    By default each entry is rendered with ``str`` and the results are
    concatenated, giving Python-like accessor syntax::

        keystr((DictKey("a"), SequenceKey(1), GetAttrKey("x"))) == "['a'][1].x"

    With ``simple=True`` entries are rendered bare (``a``, ``1``, ``x``) and
    joined with ``separator``::

        keystr(path, simple=True, separator="/") == "a/1/x"
    """
    if simple:
        return separator.join([_simple_key(k) for k in keys])
    return separator.join([str(k) for k in keys])


# ---------------------------------------------------------------------------
# Node-type registry
# ---------------------------------------------------------------------------

_FlattenFn: TypeAlias = "Callable[[Any], tuple[Iterable[Any], Any]]"
_FlattenWithKeysFn: TypeAlias = "Callable[[Any], tuple[Iterable[tuple[KeyEntry, Any]], Any]]"
_UnflattenFn: TypeAlias = "Callable[[Any, Any], Any]"


def _builtin_has_no_custom_flatten(x: Any) -> tuple[Iterable[Any], Any]:
    raise AssertionError("built-in node kinds are handled inline")  # pragma: no cover


def _builtin_has_no_custom_unflatten(aux: Any, children: Any) -> Any:
    raise AssertionError("built-in node kinds are handled inline")  # pragma: no cover


class _NodeSpec:
    """How one node type is flattened; identity-compared.

    Built-in kinds use shared singleton specs and are handled inline by the
    traversal code; custom specs carry the user's callbacks.
    """

    __slots__ = ("builtin", "flatten", "flatten_with_keys", "node_type", "unflatten")

    def __init__(
        self,
        node_type: type,
        flatten: _FlattenFn,
        unflatten: _UnflattenFn,
        flatten_with_keys: _FlattenWithKeysFn | None,
        builtin: str | None = None,
    ) -> None:
        self.node_type = node_type
        self.flatten = flatten
        self.unflatten = unflatten
        self.flatten_with_keys = flatten_with_keys
        self.builtin = builtin

    def __repr__(self) -> str:
        return f"<pytree node spec for {self.node_type.__qualname__}>"

    def __reduce__(self) -> tuple[Any, ...]:
        if self.builtin is not None:
            return (_builtin_spec, (self.builtin,))
        return (_custom_spec, (self.node_type,))


def _make_builtin(node_type: type, name: str) -> _NodeSpec:
    return _NodeSpec(
        node_type,
        _builtin_has_no_custom_flatten,
        _builtin_has_no_custom_unflatten,
        None,
        builtin=name,
    )


_LEAF: Final = _make_builtin(object, "leaf")
_NONE: Final = _make_builtin(type(None), "none")
_TUPLE: Final = _make_builtin(tuple, "tuple")
_LIST: Final = _make_builtin(list, "list")
_DICT: Final = _make_builtin(dict, "dict")
_NAMEDTUPLE: Final = _make_builtin(tuple, "namedtuple")
_ORDEREDDICT: Final = _make_builtin(collections.OrderedDict, "ordereddict")
_DEFAULTDICT: Final = _make_builtin(collections.defaultdict, "defaultdict")

_BUILTIN_SPECS: Final[dict[str, _NodeSpec]] = {
    s.builtin: s
    for s in (_LEAF, _NONE, _TUPLE, _LIST, _DICT, _NAMEDTUPLE, _ORDEREDDICT, _DEFAULTDICT)
    if s.builtin is not None
}

# Exact type -> spec, for the built-in containers and registered types.
_registry: dict[type, _NodeSpec] = {
    type(None): _NONE,
    tuple: _TUPLE,
    list: _LIST,
    dict: _DICT,
    collections.OrderedDict: _ORDEREDDICT,
    collections.defaultdict: _DEFAULTDICT,
}

# Exact type -> spec for every type seen so far (registered types, named
# tuples and leaves), so that classifying a value is one dict lookup.
_cache: dict[type, _NodeSpec] = dict(_registry)
_CACHE_LIMIT: Final = 8192


def _builtin_spec(name: str) -> _NodeSpec:
    return _BUILTIN_SPECS[name]


def _custom_spec(node_type: type) -> _NodeSpec:
    try:
        return _registry[node_type]
    except KeyError:
        raise ValueError(f"{node_type.__qualname__} is not registered as a pytree node type") from None


def _classify(t: type) -> _NodeSpec:
    """Slow path of the type lookup: compute and cache ``t``'s spec."""
    spec = _registry.get(t)
    if spec is None:
        spec = _NAMEDTUPLE if issubclass(t, tuple) and hasattr(t, "_fields") else _LEAF
    if len(_cache) >= _CACHE_LIMIT:
        _cache.clear()
        _cache.update(_registry)
    _cache[t] = spec
    return spec


def _register(nodetype: type, spec: _NodeSpec) -> None:
    if not isinstance(nodetype, type):
        raise TypeError(f"pytree node types must be classes, got {nodetype!r}")
    if nodetype in _registry:
        raise ValueError(
            f"Type {nodetype.__module__}.{nodetype.__qualname__} is already registered as a pytree node type"
        )
    _registry[nodetype] = spec
    _cache[nodetype] = spec
    for listener in _registration_listeners:
        listener(nodetype, spec.flatten, spec.unflatten)


_RegistrationListener: TypeAlias = "Callable[[type, _FlattenFn, _UnflattenFn], None]"
_registration_listeners: list[_RegistrationListener] = []


def add_registration_listener(listener: _RegistrationListener) -> None:
    """Call ``listener(nodetype, flatten, unflatten)`` for every custom node
    type registered so far and for every one registered later.

    This is how an interpreter keeps a faster flattener of its own (plait-
    dispatch's, for the cached ``jit`` call) in step with this registry:
    ``flatten`` and ``unflatten`` are the callbacks :func:`tree_flatten` and
    :func:`tree_unflatten` use for that type.  The built-in node kinds
    (``None``, tuples, lists, dicts, ``OrderedDict``, ``defaultdict``, named
    tuples) are not reported.
    """
    for nodetype, spec in list(_registry.items()):
        if spec.builtin is None:
            listener(nodetype, spec.flatten, spec.unflatten)
    _registration_listeners.append(listener)


def register_pytree_node(
    nodetype: type[_T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Any]],
    unflatten_func: Callable[[Any, Any], _T],
    flatten_with_keys_func: (Callable[[_T], tuple[Iterable[tuple[KeyEntry, Any]], Any]] | None) = None,
) -> None:
    """Make instances of exactly ``nodetype`` pytree nodes.

    ``flatten_func(x)`` must return ``(children, aux_data)``: an iterable of
    child pytrees and hashable, comparable auxiliary data that is stored in
    the :class:`PyTreeDef` (so it takes part in structure equality).
    ``unflatten_func(aux_data, children)`` must rebuild the node; it receives
    the children as a tuple.  Subclasses of ``nodetype`` are not affected.

    ``flatten_with_keys_func``, if given, returns ``(((key, child), ...),
    aux_data)`` and supplies the key-path entries used by the ``*_with_path``
    functions; without it children are keyed by :class:`FlattenedIndexKey`.

    Raises ``ValueError`` if ``nodetype`` is already registered (this includes
    the built-in container types).
    """
    _register(
        nodetype,
        _NodeSpec(
            nodetype,
            cast(_FlattenFn, flatten_func),
            unflatten_func,
            cast("_FlattenWithKeysFn | None", flatten_with_keys_func),
        ),
    )


def register_pytree_with_keys(
    nodetype: type[_T],
    flatten_with_keys: Callable[[_T], tuple[Iterable[tuple[KeyEntry, Any]], Any]],
    unflatten_func: Callable[[Any, Any], _T],
    flatten_func: Callable[[_T], tuple[Iterable[Any], Any]] | None = None,
) -> None:
    """Register ``nodetype`` as a pytree node whose children carry keys.

    ``flatten_with_keys(x)`` returns ``(((key, child), ...), aux_data)``.
    ``flatten_func`` is an optional faster key-less flatten returning
    ``(children, aux_data)``; it must agree with ``flatten_with_keys``.  When
    omitted, it is derived from ``flatten_with_keys``.  See
    :func:`register_pytree_node` for the other arguments.
    """
    if flatten_func is None:

        def derived_flatten(x: _T) -> tuple[Iterable[Any], Any]:
            pairs, aux = flatten_with_keys(x)
            return [child for _, child in pairs], aux

        flatten_func = derived_flatten
    register_pytree_node(nodetype, flatten_func, unflatten_func, flatten_with_keys)


def register_pytree_node_class(cls: _C) -> _C:
    """Class decorator registering ``cls`` as a pytree node.

    The class must define an instance method ``tree_flatten(self)`` returning
    ``(children, aux_data)`` and a classmethod ``tree_unflatten(cls,
    aux_data, children)``.  Returns ``cls`` unchanged.
    """
    for name in ("tree_flatten", "tree_unflatten"):
        if not callable(getattr(cls, name, None)):
            raise TypeError(f"register_pytree_node_class: {cls.__qualname__} has no {name} method")

    def flatten(x: Any) -> tuple[Iterable[Any], Any]:
        result: tuple[Iterable[Any], Any] = x.tree_flatten()
        return result

    unflatten: Callable[[Any, Any], Any] = cls.tree_unflatten
    register_pytree_node(cls, flatten, unflatten)
    return cls


def register_static(cls: _C) -> _C:
    """Register ``cls`` as a pytree node with no children.

    Instances are stored whole in the :class:`PyTreeDef` (so they must be
    hashable) and contribute no leaves.  Usable as a class decorator.
    """

    def flatten(x: Any) -> tuple[Iterable[Any], Any]:
        return (), x

    def unflatten(aux: Any, children: Any) -> Any:
        return aux

    register_pytree_node(cls, flatten, unflatten)
    return cls


def register_dataclass(
    nodetype: _C,
    data_fields: Sequence[str] | None = None,
    meta_fields: Sequence[str] | None = None,
) -> _C:
    """Register a dataclass-like class as a pytree node; returns the class.

    ``data_fields`` name the attributes that are child pytrees; ``meta_fields``
    name attributes stored as auxiliary data in the :class:`PyTreeDef` (they
    take part in structure equality, compared with ``==``; as in JAX they need
    not be hashable).  Instances are
    rebuilt with ``nodetype(**fields)``.

    When both are omitted, ``nodetype`` must be a dataclass and the split is
    inferred from :func:`dataclasses.fields`: fields declared with
    ``metadata=dict(static=True)`` are meta fields, the other ``init`` fields
    are data fields.  For dataclasses, every ``init`` field must be listed in
    exactly one of the two.  Usable as a plain class decorator.

    Children are keyed by :class:`GetAttrKey` in key paths.
    """
    if isinstance(data_fields, str) or isinstance(meta_fields, str):
        raise TypeError(
            "register_dataclass: data_fields and meta_fields must be sequences of field names, not strings"
        )
    name = nodetype.__qualname__
    if data_fields is None and meta_fields is None:
        if not dataclasses.is_dataclass(nodetype):
            raise TypeError(
                f"register_dataclass: {name} is not a dataclass; pass data_fields and meta_fields explicitly"
            )
        init_fields = [f for f in dataclasses.fields(nodetype) if f.init]
        data = tuple(f.name for f in init_fields if not f.metadata.get("static", False))
        meta = tuple(f.name for f in init_fields if f.metadata.get("static", False))
    elif data_fields is None or meta_fields is None:
        raise TypeError("register_dataclass: pass both data_fields and meta_fields, or neither")
    else:
        data = tuple(data_fields)
        meta = tuple(meta_fields)
        listed = data + meta
        dupes = sorted({f for f in listed if listed.count(f) > 1})
        if dupes:
            raise ValueError(f"register_dataclass: fields listed more than once: {dupes}")
        if dataclasses.is_dataclass(nodetype):
            init_names = [f.name for f in dataclasses.fields(nodetype) if f.init]
            missing = [f for f in init_names if f not in listed]
            unknown = [f for f in listed if f not in init_names]
            if missing or unknown:
                raise ValueError(
                    f"register_dataclass: the init fields of {name} must each be "
                    f"listed exactly once in data_fields or meta_fields; "
                    f"missing {missing}, not init fields {unknown}"
                )

    def flatten(x: Any) -> tuple[Iterable[Any], Any]:
        # As JAX's: meta fields need not be hashable (flax.nnx keeps a list there); a
        # PyTreeDef holding an unhashable one hashes the rest and compares all with ==.
        return [getattr(x, f) for f in data], tuple([getattr(x, f) for f in meta])

    def flatten_with_keys(x: Any) -> tuple[Iterable[tuple[KeyEntry, Any]], Any]:
        children, aux = flatten(x)
        return list(zip([GetAttrKey(f) for f in data], children)), aux

    def unflatten(aux: Any, children: Any) -> Any:
        kwargs = dict(zip(meta, aux))
        kwargs.update(zip(data, children))
        return nodetype(**kwargs)

    register_pytree_with_keys(nodetype, flatten_with_keys, unflatten, flatten)
    return nodetype


# ---------------------------------------------------------------------------
# PyTreeDef
# ---------------------------------------------------------------------------

# Internal structure encoding.  A leaf is ``None``; every other node is the
# tuple ``(spec, data, children)`` where ``children`` is a tuple of nodes and
# ``data`` is:
#   tuple / list / None node:     None
#   dict:                         tuple of keys, sorted
#   OrderedDict:                  tuple of keys, insertion order
#   defaultdict:                  (default_factory, tuple of sorted keys)
#   named tuple:                  the named tuple class
#   custom:                       the aux data returned by the flatten function
# Plain nested tuples give C-speed equality and need no per-leaf allocation.
_Node: TypeAlias = "tuple[_NodeSpec, Any, tuple[_Node, ...]] | None"

_NONE_NODE: Final[_Node] = (_NONE, None, ())

_new_object = object.__new__


class PyTreeDef:
    """The structure of a pytree, with its leaves left out.

    Instances are immutable (they expose no way to change them) and hashable
    (the hash is computed once, on first use); two treedefs are equal when
    they have the same node types, the same node data (dict keys, named tuple
    classes, custom aux data) and the same shape.  Obtain one with
    :func:`tree_flatten` or :func:`tree_structure`; they cannot be
    constructed directly.
    """

    # ``_hash`` is -1 (never a hash value) until first needed.  There is no
    # ``__setattr__`` override: it would triple the construction cost, and
    # construction happens on every flatten.
    __slots__ = ("_hash", "_node", "_num_leaves")

    _node: _Node
    _num_leaves: int
    _hash: int

    def __init__(self) -> None:
        raise TypeError("PyTreeDef objects are created by tree_flatten/tree_structure")

    def __copy__(self) -> PyTreeDef:
        return self

    def __deepcopy__(self, memo: Any) -> PyTreeDef:
        return self

    def __reduce__(self) -> tuple[Any, ...]:
        # The cached hash is not pickled: str hashes differ between processes.
        return (_make_treedef, (self._node, self._num_leaves))

    @property
    def num_leaves(self) -> int:
        """Number of leaves in the structure."""
        return self._num_leaves

    @property
    def num_nodes(self) -> int:
        """Number of nodes in the structure, counting leaves and ``None``s.

        For example ``tree_structure((1, None)).num_nodes == 3``.
        """
        return _count_nodes(self._node)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, PyTreeDef):
            return NotImplemented
        return self._num_leaves == other._num_leaves and self._node == other._node

    def __hash__(self) -> int:
        h = self._hash
        if h == -1:
            try:
                h = hash(self._node)
            except TypeError:  # unhashable aux data (a dict): hash the rest, compare all with ==, as JAX
                h = _hash_without_unhashable(self._node)
            self._hash = h
        return h

    def __repr__(self) -> str:
        return f"PyTreeDef({_repr_node(self._node)})"

    def unflatten(self, leaves: Iterable[Any]) -> Any:
        """Build a pytree of this structure from ``leaves`` (see :func:`tree_unflatten`)."""
        return tree_unflatten(self, leaves)

    def children(self) -> list[PyTreeDef]:
        """The treedefs of the root node's immediate children (empty for a leaf)."""
        node = self._node
        if node is None:
            return []
        return [_make_treedef(c, _count_leaves(c)) for c in node[2]]

    def node_data(self) -> tuple[type, Any] | None:
        """``(node_type, data)`` for the root node, or ``None`` for a leaf.

        ``data`` is ``None`` for tuples, lists, ``None`` and named tuples; the
        tuple of keys for dicts (sorted) and OrderedDicts (in order);
        ``(default_factory, keys)`` for defaultdicts; and the aux data for
        custom nodes.  ``node_type`` is the named tuple class for named tuples.
        """
        node = self._node
        if node is None:
            return None
        spec, data, _ = node
        if spec is _NAMEDTUPLE:
            return (cast(type, data), None)
        return (spec.node_type, data)

    def flatten_up_to(self, tree: Any) -> list[Any]:
        """Flatten ``tree`` only as deep as this structure goes.

        This treedef must be a prefix of ``tree``'s structure: wherever this
        treedef has a leaf, the whole corresponding subtree of ``tree`` is
        returned as one element.  Raises ``ValueError`` naming the key path
        where the structures first differ.
        """
        out: list[Any] = []
        try:
            _match(self._node, tree, out, False, None)
        except _MismatchError as e:
            raise ValueError(
                f"flatten_up_to: tree structure mismatch at {e.where()}: "
                f"expected {e.expected}, got {e.got}.\n  expected structure: "
                f"{_short(repr(self), 400)}"
            ) from None
        return out

    def compose(self, inner: PyTreeDef) -> PyTreeDef:
        """The structure obtained by putting ``inner`` at every leaf of ``self``."""
        return _make_treedef(_compose(self._node, inner._node), self._num_leaves * inner._num_leaves)


def _make_treedef(node: _Node, num_leaves: int) -> PyTreeDef:
    td: PyTreeDef = _new_object(PyTreeDef)
    td._node = node
    td._num_leaves = num_leaves
    td._hash = -1
    return td


def _count_leaves(node: _Node) -> int:
    if node is None:
        return 1
    return sum([_count_leaves(c) for c in node[2]])


def _count_nodes(node: _Node) -> int:
    if node is None:
        return 1
    return 1 + sum([_count_nodes(c) for c in node[2]])


def _compose(outer: _Node, inner: _Node) -> _Node:
    if outer is None:
        return inner
    spec, data, children = outer
    return (spec, data, tuple([_compose(c, inner) for c in children]))


def _callable_name(f: Any) -> str:
    name = getattr(f, "__qualname__", None)
    return name if isinstance(name, str) else repr(f)


def _repr_node(node: _Node) -> str:
    if node is None:
        return "*"
    spec, data, children = node
    parts = [_repr_node(c) for c in children]
    if spec is _NONE:
        return "None"
    if spec is _TUPLE:
        return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"
    if spec is _LIST:
        return f"[{', '.join(parts)}]"
    if spec is _DICT or spec is _ORDEREDDICT:
        body = "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(data, parts)) + "}"
        return body if spec is _DICT else f"OrderedDict({body})"
    if spec is _DEFAULTDICT:
        factory, keys = data
        body = "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(keys, parts)) + "}"
        return f"defaultdict({_callable_name(factory)}, {body})"
    if spec is _NAMEDTUPLE:
        fields = getattr(data, "_fields", ())
        inner = ", ".join(f"{f}={p}" for f, p in zip(fields, parts))
        return f"{data.__name__}({inner})"
    return f"CustomNode({spec.node_type.__name__}[{data!r}], [{', '.join(parts)}])"


def _short(s: str, limit: int = 60) -> str:
    s = s.split("\n", 1)[0] if "\n" in s else s
    return s if len(s) <= limit else s[: limit - 3] + "..."


# ---------------------------------------------------------------------------
# Flatten / unflatten
# ---------------------------------------------------------------------------


def _hash_without_unhashable(node: Any) -> int:
    """A hash of a treedef node whose aux data may not be hashable: such aux data
    counts by its type only (equal treedefs still hash alike; ``==`` decides)."""
    if node is None:
        return hash(None)
    kind, aux, children = node[0], node[1], node[2]
    try:
        aux_hash = hash(aux)
    except TypeError:
        aux_hash = hash(type(aux).__qualname__)
    return hash((kind, aux_hash, tuple(_hash_without_unhashable(c) for c in children)))


def _sorted_keys(d: Any) -> tuple[Any, ...]:
    try:
        return tuple(sorted(d))
    except TypeError as err:
        # As JAX: a dict's children are in sorted key order, so keys that cannot
        # be compared with each other (an int and a str) make no pytree.
        raise ValueError(
            f"a dict whose keys cannot be sorted is not a pytree (its children are visited in sorted key "
            f"order): sorting the keys {list(d)!r}"[:300] + f" raised {err}") from err


_cache_get: Final = _cache.get  # _cache is only ever mutated in place


def _flatten_children(xs: Sequence[Any], leaves: list[Any]) -> tuple[_Node, ...]:
    # Fast path for the common case of a node whose children are all leaves
    # (e.g. a tuple of arrays): one cheap scan, then C-level copies.
    for c in xs:
        if _cache_get(type(c)) is not _LEAF:
            break
    else:
        leaves.extend(xs)
        return (None,) * len(xs)
    # Otherwise leaves are still handled inline, saving a call per leaf.
    nodes: list[_Node] = []
    for c in xs:
        if _cache_get(type(c)) is _LEAF:
            leaves.append(c)
            nodes.append(None)
        else:
            nodes.append(_flatten(c, leaves))
    return tuple(nodes)


def _flatten(x: Any, leaves: list[Any]) -> _Node:
    t = type(x)
    spec = _cache.get(t)
    if spec is None:
        spec = _classify(t)
    if spec is _LEAF:
        leaves.append(x)
        return None
    if spec is _TUPLE or spec is _LIST:
        return (spec, None, _flatten_children(x, leaves))
    if spec is _DICT:
        keys = _sorted_keys(x)
        return (spec, keys, _flatten_children([x[k] for k in keys], leaves))
    if spec is _NONE:
        return _NONE_NODE
    if spec is _NAMEDTUPLE:
        return (spec, t, _flatten_children(x, leaves))
    if spec is _ORDEREDDICT:
        return (spec, tuple(x), _flatten_children(list(x.values()), leaves))
    if spec is _DEFAULTDICT:
        keys = _sorted_keys(x)
        return (
            spec,
            (x.default_factory, keys),
            _flatten_children([x[k] for k in keys], leaves),
        )
    children, aux = spec.flatten(x)
    if type(children) is not tuple and type(children) is not list:
        children = list(children)
    return (spec, aux, _flatten_children(children, leaves))


def _shallow(
    x: Any, is_leaf: IsLeaf, with_keys: bool
) -> tuple[_NodeSpec, Any, list[Any], list[KeyEntry]] | None:
    """One level of flattening: ``None`` for a leaf, else
    ``(spec, data, children, keys)`` (``keys`` is empty unless ``with_keys``)."""
    if is_leaf is not None and is_leaf(x):
        return None
    t = type(x)
    spec = _cache.get(t)
    if spec is None:
        spec = _classify(t)
    if spec is _LEAF:
        return None
    keys: list[KeyEntry] = []
    if spec is _TUPLE or spec is _LIST or spec is _NAMEDTUPLE:
        children = list(x)
        if with_keys:
            if spec is _NAMEDTUPLE:
                keys = [GetAttrKey(f) for f in t._fields]
            else:
                keys = [SequenceKey(i) for i in range(len(children))]
        return (spec, t if spec is _NAMEDTUPLE else None, children, keys)
    if spec is _NONE:
        return (spec, None, [], keys)
    if spec is _DICT or spec is _ORDEREDDICT or spec is _DEFAULTDICT:
        ks = tuple(x) if spec is _ORDEREDDICT else _sorted_keys(x)
        if with_keys:
            keys = [DictKey(k) for k in ks]
        data = (x.default_factory, ks) if spec is _DEFAULTDICT else ks
        return (spec, data, [x[k] for k in ks], keys)
    if with_keys:
        if spec.flatten_with_keys is not None:
            pairs, aux = spec.flatten_with_keys(x)
            pairs = list(pairs)
            return (spec, aux, [c for _, c in pairs], [k for k, _ in pairs])
        kids, aux = spec.flatten(x)
        children = list(kids)
        return (spec, aux, children, [FlattenedIndexKey(i) for i in range(len(children))])
    kids, aux = spec.flatten(x)
    return (spec, aux, list(kids), keys)


def _flatten_is_leaf(x: Any, leaves: list[Any], is_leaf: Callable[[Any], bool]) -> _Node:
    sh = _shallow(x, is_leaf, False)
    if sh is None:
        leaves.append(x)
        return None
    spec, data, children, _ = sh
    if spec is _NONE:
        return _NONE_NODE
    return (spec, data, tuple([_flatten_is_leaf(c, leaves, is_leaf) for c in children]))


def _flatten_with_path(
    x: Any, path: KeyPath, out: list[tuple[KeyPath, Any]], is_leaf: Any, takes_path: bool = False
) -> _Node:
    # With takes_path, is_leaf is called as is_leaf(path, subtree).
    leaf_fn = (lambda y: is_leaf(path, y)) if takes_path and is_leaf is not None else is_leaf
    sh = _shallow(x, leaf_fn, True)
    if sh is None:
        out.append((path, x))
        return None
    spec, data, children, keys = sh
    if spec is _NONE:
        return _NONE_NODE
    return (
        spec,
        data,
        tuple([_flatten_with_path(c, (*path, k), out, is_leaf, takes_path) for k, c in zip(keys, children)]),
    )


def tree_flatten(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> tuple[list[Any], PyTreeDef]:
    """Split ``tree`` into its leaves (in traversal order) and its structure.

    Traversal is depth first, visiting children in node order (dicts by
    sorted key).  ``None`` is a node without children, so it yields no
    leaves.  If ``is_leaf`` is given it is called on every subtree, root
    first, and a subtree for which it returns true is kept whole as a leaf
    (this is how to make ``None`` or a container a leaf).

    ``tree_unflatten(treedef, leaves)`` rebuilds an equivalent tree.
    """
    leaves: list[Any] = []
    node = _flatten(tree, leaves) if is_leaf is None else _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves, _make_treedef(node, len(leaves))


def _collect_leaves(x: Any, leaves: list[Any]) -> None:
    # tree_leaves without building a treedef.
    t = type(x)
    spec = _cache.get(t)
    if spec is None:
        spec = _classify(t)
    if spec is _LEAF:
        leaves.append(x)
        return
    if spec is _TUPLE or spec is _LIST or spec is _NAMEDTUPLE:
        children: Sequence[Any] = x
    elif spec is _NONE:
        return
    elif spec is _DICT or spec is _DEFAULTDICT:
        children = [x[k] for k in _sorted_keys(x)]
    elif spec is _ORDEREDDICT:
        children = list(x.values())
    else:
        children = list(spec.flatten(x)[0])
    for c in children:
        if _cache_get(type(c)) is _LEAF:
            leaves.append(c)
        else:
            _collect_leaves(c, leaves)


def tree_leaves(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> list[Any]:
    """The leaves of ``tree`` in traversal order (as in :func:`tree_flatten`)."""
    leaves: list[Any] = []
    if is_leaf is None:
        _collect_leaves(tree, leaves)
    else:
        _flatten_is_leaf(tree, leaves, is_leaf)
    return leaves


def tree_structure(tree: Any, is_leaf: Callable[[Any], bool] | None = None) -> PyTreeDef:
    """The :class:`PyTreeDef` of ``tree`` (as in :func:`tree_flatten`)."""
    return tree_flatten(tree, is_leaf)[1]


def _unflatten_children(children: tuple[_Node, ...], it: Iterator[Any]) -> Sequence[Any]:
    if not any(children):  # every child is a leaf (a None entry)
        return tuple(islice(it, len(children)))
    return [next(it) if c is None else _unflatten(c, it) for c in children]


def _unflatten(node: _Node, it: Iterator[Any]) -> Any:
    if node is None:
        return next(it)
    spec, data, children = node
    if spec is _TUPLE:
        return tuple(_unflatten_children(children, it))
    if spec is _LIST:
        return list(_unflatten_children(children, it))
    if spec is _DICT:
        return dict(zip(data, _unflatten_children(children, it)))
    if spec is _NONE:
        return None
    if spec is _NAMEDTUPLE:
        return data(*_unflatten_children(children, it))
    if spec is _ORDEREDDICT:
        return collections.OrderedDict(zip(data, _unflatten_children(children, it)))
    if spec is _DEFAULTDICT:
        return collections.defaultdict(data[0], zip(data[1], _unflatten_children(children, it)))
    return spec.unflatten(data, tuple(_unflatten_children(children, it)))


def tree_unflatten(treedef: PyTreeDef, leaves: Iterable[Any]) -> Any:
    """Rebuild a pytree with structure ``treedef`` from ``leaves``.

    ``leaves`` is consumed in traversal order and must hold exactly
    ``treedef.num_leaves`` items; otherwise ``ValueError`` is raised stating
    the expected and actual counts.  Leaves are used as-is (they need not
    be leaves of any particular type; they may even be pytrees).
    """
    if type(treedef) is not PyTreeDef:
        raise TypeError(
            f"tree_unflatten: expected a PyTreeDef as first argument, got {type(treedef).__name__}"
        )
    if not isinstance(leaves, (list, tuple)):
        leaves = list(leaves)
    if len(leaves) != treedef._num_leaves:
        raise ValueError(
            f"tree_unflatten: expected {treedef._num_leaves} leaves for "
            f"{_short(repr(treedef), 200)}, got {len(leaves)}"
        )
    return _unflatten(treedef._node, iter(leaves))


# ---------------------------------------------------------------------------
# Structure matching (flatten_up_to, tree_map errors)
# ---------------------------------------------------------------------------


class _MismatchError(Exception):
    """Internal: structures differ.  ``path`` is built innermost-first while
    the exception unwinds, so the success path pays nothing for it."""

    def __init__(self, expected: str, got: str) -> None:
        super().__init__(expected, got)
        self.expected = expected
        self.got = got
        self.rpath: list[KeyEntry] = []

    def where(self) -> str:
        if not self.rpath:
            return "the root"
        return "path " + keystr(tuple(reversed(self.rpath)))


def _describe_node(spec: _NodeSpec, data: Any, n: int) -> str:
    if spec is _NONE:
        return "None"
    if spec is _TUPLE:
        return f"a tuple of length {n}"
    if spec is _LIST:
        return f"a list of length {n}"
    if spec is _DICT:
        return f"a dict with keys {list(data)!r}"
    if spec is _ORDEREDDICT:
        return f"an OrderedDict with keys {list(data)!r}"
    if spec is _DEFAULTDICT:
        return f"a defaultdict({_callable_name(data[0])}) with keys {list(data[1])!r}"
    if spec is _NAMEDTUPLE:
        return f"a namedtuple {data.__qualname__}"
    return (
        f"a {spec.node_type.__qualname__} node with aux data {_short(repr(data))} "
        f"and {n} {'child' if n == 1 else 'children'}"
    )


def _describe_leaf_value(x: Any) -> str:
    return f"a leaf of type {type(x).__qualname__} ({_short(repr(x), 40)})"


def _child_key(x: Any, i: int, is_leaf: IsLeaf) -> KeyEntry:
    sh = _shallow(x, is_leaf, True)
    if sh is None or i >= len(sh[3]):  # pragma: no cover - defensive
        return FlattenedIndexKey(i)
    return sh[3][i]


def _match(node: _Node, x: Any, out: list[Any], strict: bool, is_leaf: IsLeaf) -> None:
    """Walk ``x`` along ``node``, appending the subtrees at ``node``'s leaves
    to ``out``.  With ``strict``, those subtrees must themselves be leaves
    (judged with ``is_leaf``).  Raises ``_MismatchError`` on a difference."""
    if node is None:
        if strict:
            sh = _shallow(x, is_leaf, False)
            if sh is not None:
                raise _MismatchError("a leaf", _describe_node(sh[0], sh[1], len(sh[2])))
        out.append(x)
        return
    spec, data, children = node
    sh = _shallow(x, is_leaf, False)
    if sh is None:
        raise _MismatchError(_describe_node(spec, data, len(children)), _describe_leaf_value(x))
    xspec, xdata, xchildren, _ = sh
    if xspec is not spec or len(xchildren) != len(children) or not (xdata is data or xdata == data):
        raise _MismatchError(
            _describe_node(spec, data, len(children)),
            _describe_node(xspec, xdata, len(xchildren)),
        )
    for i, (c, xc) in enumerate(zip(children, xchildren)):
        try:
            _match(c, xc, out, strict, is_leaf)
        except _MismatchError as e:
            e.rpath.append(_child_key(x, i, is_leaf))
            raise


def _rest_leaves(fname: str, treedef: PyTreeDef, rest: Sequence[Any]) -> list[list[Any]]:
    """The subtrees of each tree in ``rest`` at the leaves of ``treedef``.

    As in JAX, ``treedef`` (the first tree's structure) need only be a prefix
    of each other tree: wherever the first tree has a leaf, the other tree's
    whole subtree there is passed along.  ``is_leaf`` shaped ``treedef`` and
    is not consulted again here, matching ``PyTreeDef.flatten_up_to``.
    """
    result = []
    for i, r in enumerate(rest, 1):
        leaves, td = tree_flatten(r)
        if td == treedef:
            result.append(leaves)
            continue
        subtrees: list[Any] = []
        try:
            _match(treedef._node, r, subtrees, False, None)
        except _MismatchError as e:
            raise ValueError(
                f"{fname}: tree argument {i} has a different structure from "
                f"tree argument 0 at {e.where()}: argument 0 has {e.expected} "
                f"there, argument {i} has {e.got}. Argument 0's structure must "
                f"be a prefix of every other argument's."
            ) from None
        result.append(subtrees)
    return result


# ---------------------------------------------------------------------------
# Mapping and reduction
# ---------------------------------------------------------------------------


def tree_map(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Apply ``f`` to every leaf of ``tree`` and return a tree of the results.

    With extra trees in ``rest``, ``f`` is called as ``f(x, *xs)`` with the
    corresponding subtree of each tree.  ``tree`` defines the structure: it
    must be a *prefix* of every tree in ``rest``, which may go deeper where
    ``tree`` has a leaf (that whole subtree is passed to ``f``), as in JAX:
    ``tree_map(lambda a, b: b, 0, {'x': 1})`` is ``{'x': 1}``.  Where a tree
    in ``rest`` differs otherwise (another node type, length, keys or aux
    data, or a leaf where ``tree`` has a node; ``None`` is a node with no
    children) ``ValueError`` is raised, naming the offending argument's
    position (``tree`` is argument 0), the key path where the structures
    differ, and what each argument has there.  ``is_leaf`` shapes ``tree``
    only (see :func:`tree_flatten`); the other trees are cut at ``tree``'s
    leaves.  The result has ``tree``'s structure.
    """
    leaves, treedef = tree_flatten(tree, is_leaf)
    if not rest:
        return _unflatten(treedef._node, iter([f(x) for x in leaves]))
    others = _rest_leaves("tree_map", treedef, rest)
    return _unflatten(treedef._node, iter([f(*xs) for xs in zip(leaves, *others)]))


def tree_flatten_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> tuple[list[tuple[KeyPath, Any]], PyTreeDef]:
    """Like :func:`tree_flatten`, but each leaf is paired with its key path.

    Returns ``([(path, leaf), ...], treedef)``; ``path`` is a tuple of key
    entries (:class:`SequenceKey`, :class:`DictKey`, :class:`GetAttrKey`,
    :class:`FlattenedIndexKey` or a custom node's keys), usable with
    :func:`keystr`.  With ``is_leaf_takes_path``, ``is_leaf`` is called as
    ``is_leaf(path, subtree)``.
    """
    out: list[tuple[KeyPath, Any]] = []
    node = _flatten_with_path(tree, (), out, is_leaf, is_leaf_takes_path)
    return out, _make_treedef(node, len(out))


def tree_leaves_with_path(
    tree: Any, is_leaf: Callable[..., bool] | None = None, is_leaf_takes_path: bool = False
) -> list[tuple[KeyPath, Any]]:
    """The ``(key_path, leaf)`` pairs of ``tree`` in traversal order (``is_leaf``
    as in :func:`tree_flatten_with_path`)."""
    return tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)[0]


def tree_map_with_path(
    f: Callable[..., Any],
    tree: Any,
    *rest: Any,
    is_leaf: Callable[..., bool] | None = None,
    is_leaf_takes_path: bool = False,
) -> Any:
    """Like :func:`tree_map`, but ``f`` is called as ``f(path, x, *xs)`` where
    ``path`` is the key path of the leaf in ``tree`` (``is_leaf`` as in
    :func:`tree_flatten_with_path`)."""
    pairs, treedef = tree_flatten_with_path(tree, is_leaf, is_leaf_takes_path)
    others = _rest_leaves("tree_map_with_path", treedef, rest)
    results = [f(p, x, *xs) for (p, x), *xs in zip(pairs, *others)]
    return _unflatten(treedef._node, iter(results))


def tree_all(tree: Any, *, is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``True`` if every leaf of ``tree`` is truthy (``True`` for no leaves)."""
    return all(tree_leaves(tree, is_leaf))


class _NoInitializer:
    __slots__ = ()

    def __repr__(self) -> str:
        return "<no initializer>"


_NO_INIT: Final = _NoInitializer()


@overload
def tree_reduce(
    function: Callable[[_T, Any], _T],
    tree: Any,
    *,
    is_leaf: Callable[[Any], bool] | None = None,
) -> _T: ...


@overload
def tree_reduce(
    function: Callable[[_T, Any], _T],
    tree: Any,
    initializer: _T,
    is_leaf: Callable[[Any], bool] | None = None,
) -> _T: ...


def tree_reduce(
    function: Callable[[Any, Any], Any],
    tree: Any,
    initializer: Any = _NO_INIT,
    is_leaf: Callable[[Any], bool] | None = None,
) -> Any:
    """Fold ``function`` over the leaves of ``tree`` from left to right.

    Equivalent to ``functools.reduce(function, tree_leaves(tree), initializer)``.
    Without ``initializer`` the tree must have at least one leaf, otherwise
    ``TypeError`` is raised.
    """
    leaves = tree_leaves(tree, is_leaf)
    if initializer is _NO_INIT:
        if not leaves:
            raise TypeError("tree_reduce() of a tree with no leaves and no initializer")
        return functools.reduce(function, leaves)
    return functools.reduce(function, leaves, initializer)


def tree_transpose(
    outer_treedef: PyTreeDef, inner_treedef: PyTreeDef | None, pytree_to_transpose: Any
) -> Any:
    """Turn an outer-structure tree of inner-structure trees inside out.

    ``pytree_to_transpose`` must have structure
    ``outer_treedef.compose(inner_treedef)``; the result has structure
    ``inner_treedef.compose(outer_treedef)``.  For example a list of pairs
    becomes a pair of lists.  If ``inner_treedef`` is ``None`` it is inferred
    from the first subtree at a leaf of ``outer_treedef``.  As in JAX, only
    the numbers of leaves are checked: ``TypeError`` if the tree's is not
    the product of the two treedefs'; the leaves are taken in order.
    """
    if inner_treedef is None:
        subtrees = outer_treedef.flatten_up_to(pytree_to_transpose)
        if not subtrees:
            raise ValueError("tree_transpose: cannot infer inner_treedef when outer_treedef has no leaves")
        inner_treedef = tree_structure(subtrees[0])
    leaves, treedef = tree_flatten(pytree_to_transpose)
    # As JAX, only the number of leaves must agree: the leaves are read in
    # order (a custom node such as haiku's FlatMap may flatten its inner trees
    # into one level, which is fine).
    if len(leaves) != outer_treedef.num_leaves * inner_treedef.num_leaves:
        expected = outer_treedef.compose(inner_treedef)
        raise TypeError(
            f"tree_transpose: the tree has structure {_short(repr(treedef), 300)} ({len(leaves)} leaves), "
            f"expected outer_treedef.compose(inner_treedef) = {_short(repr(expected), 300)} "
            f"({expected.num_leaves} leaves)"
        )
    n_inner = inner_treedef.num_leaves
    # leaves[o * n_inner + i] is inner leaf i of outer leaf o.
    columns = [_unflatten(outer_treedef._node, iter(leaves[i::n_inner])) for i in range(n_inner)]
    return _unflatten(inner_treedef._node, iter(columns))


# ---------------------------------------------------------------------------
# Treedef helpers
# ---------------------------------------------------------------------------


def treedef_is_leaf(treedef: PyTreeDef) -> bool:
    """``True`` if ``treedef`` consists of a single node: a leaf, or a node
    without children such as ``None`` or ``()``.  See also
    :func:`treedef_is_strict_leaf`."""
    node = treedef._node
    return node is None or not node[2]


def treedef_is_strict_leaf(treedef: PyTreeDef) -> bool:
    """``True`` only if ``treedef`` is the structure of a single leaf."""
    return treedef._node is None


def treedef_children(treedef: PyTreeDef) -> list[PyTreeDef]:
    """The treedefs of the root's immediate children (``treedef.children()``)."""
    return treedef.children()


def treedef_tuple(treedefs: Iterable[PyTreeDef]) -> PyTreeDef:
    """The treedef of a tuple whose elements have the given structures."""
    tds = list(treedefs)
    return _make_treedef((_TUPLE, None, tuple([t._node for t in tds])), sum(t._num_leaves for t in tds))


def all_leaves(iterable: Iterable[Any], is_leaf: Callable[[Any], bool] | None = None) -> bool:
    """``True`` if every element of ``iterable`` is a leaf.

    ``None`` and containers are not leaves (unless ``is_leaf`` says so).
    """
    return all(_shallow(x, is_leaf, False) is None for x in iterable)


# ---------------------------------------------------------------------------
# Partial
# ---------------------------------------------------------------------------


class Partial(functools.partial[_T]):
    """A :class:`functools.partial` that is a pytree.

    The bound positional and keyword arguments are the children (so arrays
    among them are leaves), while the wrapped function is auxiliary data
    stored in the :class:`PyTreeDef`.  This lets partially-applied functions
    be passed through transformations.  Wrapping a ``Partial`` merges the
    arguments rather than nesting, so all bound arguments stay children.
    """

    def __new__(cls, func: Callable[..., _T], /, *args: Any, **kwargs: Any) -> Partial[_T]:
        if isinstance(func, Partial):
            args = (*func.args, *args)
            kwargs = {**func.keywords, **kwargs}
            func = func.func
        return super().__new__(cls, func, *args, **kwargs)


def _partial_flatten_with_keys(p: Partial[Any]) -> tuple[Iterable[tuple[KeyEntry, Any]], Any]:
    return [(GetAttrKey("args"), p.args), (GetAttrKey("keywords"), p.keywords)], p.func


def _partial_flatten(p: Partial[Any]) -> tuple[Iterable[Any], Any]:
    return (p.args, p.keywords), p.func


def _partial_unflatten(func: Any, children: Any) -> Partial[Any]:
    args, keywords = children
    return Partial(func, *args, **keywords)


register_pytree_with_keys(Partial, _partial_flatten_with_keys, _partial_unflatten, _partial_flatten)
