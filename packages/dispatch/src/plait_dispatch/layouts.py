"""``jit(in_shardings=, out_shardings=)``: the requested layouts, per leaf.

Each is ``None`` (no request), one sharding for every leaf, or a pytree
prefix: of the tuple of dynamic positional arguments for ``in_shardings``,
of the output for ``out_shardings``.  A leaf of the prefix is a sharding, a
:class:`~plait_core.sharding.PartitionSpec` (of the context mesh: ``with
mesh:`` or ``set_mesh``) or ``None`` (unconstrained).  Keyword arguments are
not constrained.
"""

from __future__ import annotations

from typing import Any

from plait_core.sharding import NamedSharding, PartitionSpec, Sharding, get_mesh
from plait_core.tree_util import PyTreeDef, tree_flatten, tree_structure, tree_unflatten
from plait_dispatch.sharded import check_sharding

__all__ = ["ShardingRequest"]


def _is_leaf(x: Any) -> bool:
    return x is None or isinstance(x, (Sharding, PartitionSpec))


def _resolve(x: Any, where: str) -> Sharding | None:
    if x is None:
        return None
    if isinstance(x, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(
                f"{where}: a bare PartitionSpec {x!r} needs a context mesh (with mesh: ...); "
                "or pass NamedSharding(mesh, spec)"
            )
        return NamedSharding(mesh, x)
    return check_sharding(x, where)


def _check_tree(spec: Any, what: str) -> None:
    for leaf in tree_flatten(spec, is_leaf=_is_leaf)[0]:
        if not _is_leaf(leaf):
            raise TypeError(
                f"{what}: expected shardings, PartitionSpecs or None as leaves, got {type(leaf).__name__}: {leaf!r}"
            )


class ShardingRequest:
    """The ``in_shardings`` and ``out_shardings`` of one jitted function."""

    def __init__(self, in_shardings: Any, out_shardings: Any, desc: str) -> None:
        _check_tree(in_shardings, f"{desc}: in_shardings")
        _check_tree(out_shardings, f"{desc}: out_shardings")
        self.ins = in_shardings
        self.outs = out_shardings
        self.desc = desc

    def _broadcast(self, spec: Any, value_tree: Any, what: str) -> list[Any]:
        if _is_leaf(spec):
            return [_resolve(spec, f"{self.desc}: {what}")] * len(tree_flatten(value_tree)[0])
        spec_leaves, spec_tree = tree_flatten(spec, is_leaf=_is_leaf)
        try:
            subtrees = spec_tree.flatten_up_to(value_tree)
        except ValueError as e:
            raise ValueError(
                f"{self.desc}: {what} must be a pytree prefix of the {'arguments' if what == 'in_shardings' else 'output'}"
                f" ({tree_structure(value_tree)}), got {spec!r}: {str(e).splitlines()[0]}"
            ) from None
        out: list[Any] = []
        for s, sub in zip(spec_leaves, subtrees):
            out.extend([_resolve(s, f"{self.desc}: {what}")] * len(tree_flatten(sub)[0]))
        return out

    def for_args(self, dyn: Any, dyn_pos: list[int]) -> tuple[Any, ...]:
        """One requested sharding (or ``None``) per argument leaf."""
        args, kwargs = dyn
        spec = self.ins
        if isinstance(spec, list):
            spec = tuple(spec)
        if isinstance(spec, tuple) and not isinstance(spec, PartitionSpec) and len(spec) != len(args):
            raise ValueError(
                f"{self.desc}: in_shardings has {len(spec)} entries but the function was called with "
                f"{len(args)} positional (non-static) argument(s)"
            )
        ins = self._broadcast(spec, tuple(args), "in_shardings")
        return tuple(ins) + (None,) * len(tree_flatten(kwargs)[0])

    def for_outputs(self, out_tree: PyTreeDef, n: int) -> tuple[Any, ...]:
        """One requested sharding (or ``None``) per output leaf."""
        placeholder = tree_unflatten(out_tree, [0] * n)
        spec = self.outs
        if isinstance(spec, list):
            spec = tuple(spec)
        return tuple(self._broadcast(spec, placeholder, "out_shardings"))
