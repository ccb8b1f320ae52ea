"""``in_axes`` and ``out_axes``: checking them and matching them to values.

An axis spec is a pytree *prefix* of the value it describes: each of its
leaves (an ``int``, ``None``, or an instance of a vmappable type's spec type
such as ``pile_axis``) applies to every leaf of the corresponding subtree.
Values of registered vmappable types are leaves of the value trees.  Every
leaf is reported with where it is (``argument x['a'][1]``), for messages.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np

from plait_batching.vmappable import is_vmappable_value, spec_of
from plait_core.tree_util import PyTreeDef, keystr, tree_flatten, tree_flatten_with_path, tree_leaves

AxisSpec = Any  # int | None | a spec object | a pytree of those
Spec = Any  # one leaf of an AxisSpec: int | None | a spec object


def is_axis(x: Any) -> bool:
    """A Python or NumPy integer (not a bool)."""
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def is_spec_leaf(x: Any) -> bool:
    """An integer axis or an instance of a registered vmappable spec type."""
    return is_axis(x) or spec_of(x) is not None


def normalize_spec(x: Spec) -> Spec:
    """``None``, an ``int`` (NumPy integers become ints) or a spec object."""
    return int(x) if is_axis(x) else x


def check_spec(what: str, spec: AxisSpec) -> AxisSpec:
    """``TypeError`` unless every leaf of ``spec`` is a valid spec leaf."""
    bad = [leaf for leaf in tree_leaves(spec) if not is_spec_leaf(leaf)]
    if bad:
        raise TypeError(
            f"vmap {what} must be an int, None, or a (nested) tuple, list or dict of those, "
            f"but got {what}={spec!r}, which has the entry {bad[0]!r} of type {type(bad[0]).__name__}"
        )
    return spec


def check_in_axes(in_axes: AxisSpec) -> AxisSpec:
    """``in_axes`` as vmap accepts it: an int, ``None``, a spec object, or a
    tuple (a list is taken as a tuple) with one entry per positional argument."""
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)
    if not (in_axes is None or is_spec_leaf(in_axes) or type(in_axes) is tuple):
        raise TypeError(
            "vmap in_axes must be an int, None, or a tuple with one entry per positional argument "
            f"of the function, but got in_axes={in_axes!r} of type {type(in_axes).__name__}"
        )
    return check_spec("in_axes", in_axes)


class SpecLeaf:
    """One leaf of a value: the leaf, where it is, and its spec."""

    __slots__ = ("spec", "value", "where")

    def __init__(self, value: Any, where: str, spec: Spec) -> None:
        self.value = value
        self.where = where
        self.spec = spec


def flatten_value(value: Any) -> tuple[list[Any], PyTreeDef]:
    """``tree_flatten`` with values of vmappable types as leaves."""
    return tree_flatten(value, is_leaf=is_vmappable_value)


def _subtree_leaves(value: Any, where: str, spec: Spec, out: list[SpecLeaf]) -> None:
    for path, leaf in tree_flatten_with_path(value, is_leaf=is_vmappable_value)[0]:
        out.append(SpecLeaf(leaf, where + keystr(path), spec))


def match_groups(spec: AxisSpec, value: Any, where: str, what: str) -> tuple[list[tuple[Spec, Any, str]], PyTreeDef | None]:
    """Split ``value`` along the prefix ``spec``: one ``(spec leaf, subtree,
    where)`` per leaf of ``spec``, and the structure of ``spec`` (``None``
    when ``spec`` is itself a leaf).  ``ValueError`` when ``spec`` is not a
    prefix of ``value``."""
    if spec is None or is_spec_leaf(spec):
        return [(normalize_spec(spec), value, where)], None
    spec_leaves, spec_tree = tree_flatten(spec, is_leaf=lambda x: x is None)
    try:
        subtrees = spec_tree.flatten_up_to(value)
    except ValueError as e:
        detail = str(e).removeprefix("flatten_up_to: ").split("\n")[0]
        raise ValueError(
            f"vmap {what} specification must be a tree prefix of the corresponding value: got "
            f"{what}={spec!r} for {where}, of structure {flatten_value(value)[1]}; {detail}"
        ) from None
    paths = [keystr(p) for p, _ in tree_flatten_with_path(spec, is_leaf=lambda x: x is None)[0]]
    groups = [(normalize_spec(s), sub, where + p) for s, sub, p in zip(spec_leaves, subtrees, paths)]
    return groups, spec_tree


def match_prefix(spec: AxisSpec, value: Any, where: str, what: str, out: list[SpecLeaf]) -> None:
    """Append every leaf of ``value`` with its spec from ``spec``, a tree prefix of it."""
    for s, sub, w in match_groups(spec, value, where, what)[0]:
        _subtree_leaves(sub, w, s, out)


def arg_names(fun: Callable[..., Any], nargs: int) -> list[str]:
    """A name for each positional argument: the parameter's name when the
    signature says it, else ``args[i]``."""
    names = [f"args[{i}]" for i in range(nargs)]
    try:
        params = list(inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        return names
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    for i, p in enumerate(positional[:nargs]):
        names[i] = p.name
    return names


def flatten_inputs(
    fun: Callable[..., Any], in_axes: AxisSpec, args: tuple[Any, ...], kwargs: dict[str, Any]
) -> tuple[list[SpecLeaf], PyTreeDef]:
    """Every leaf of the arguments with its spec, and the arguments' structure.
    Keyword arguments are mapped over their axis 0."""
    names = arg_names(fun, len(args))
    leaves: list[SpecLeaf] = []
    if type(in_axes) is tuple:
        if len(in_axes) != len(args):
            raise ValueError(
                "vmap in_axes must be an int, None, or a tuple with one entry per positional argument, "
                f"but got a tuple of length {len(in_axes)} (in_axes={in_axes!r}) for {len(args)} "
                "positional arguments"
            )
        for spec, a, n in zip(in_axes, args, names):
            match_prefix(spec, a, f"argument {n}", "in_axes", leaves)
    else:
        for a, n in zip(args, names):
            match_prefix(in_axes, a, f"argument {n}", "in_axes", leaves)
    for k in sorted(kwargs):
        match_prefix(0, kwargs[k], f"keyword argument {k}", "in_axes", leaves)
    return leaves, flatten_value((args, kwargs))[1]
