"""``plait.sharding``: how arrays are laid out over devices (``jax.sharding``).

``Mesh``, ``PartitionSpec``, the shardings, ``AxisType`` and ``AbstractMesh``
are plait-core's (:mod:`plait_core.sharding`); ``make_mesh`` and ``reshard``
need devices and come from plait-dispatch.  A mesh whose axes are
``AxisType.Explicit`` turns on JAX's *explicit sharding* mode: values laid
out over it carry their layout in their types (``typeof(x).sharding``),
primitives compute their results' layouts while tracing and refuse
ambiguous ones (:mod:`plait_core.explicit_sharding`), and :func:`auto_axes` /
:func:`explicit_axes` switch axis types inside a function.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Hashable
from typing import Any

from plait_core import Tracer
from plait_core.explicit_sharding import ShardingTypeError, suspended
from plait_core.primitives.sharding import sharding_constraint_p
from plait_core.sharding import (
    AbstractDevice,
    AbstractMesh,
    AxisType,
    ManualAxisType,
    Mesh,
    NamedSharding,
    P,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    concrete_mesh,
    get_abstract_mesh,
    get_mesh,
    make_single_device_sharding,
    set_mesh,
    use_abstract_mesh,
)
from plait_core.tree_util import tree_leaves, tree_map
from plait_dispatch import device_put, make_mesh

__all__ = [
    "NOT_SUPPORTED",
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "ShardingTypeError",
    "SingleDeviceSharding",
    "auto_axes",
    "explicit_axes",
    "get_abstract_mesh",
    "get_mesh",
    "make_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
    "use_abstract_mesh",
]

NOT_SUPPORTED: dict[str, str] = {}
"""The public names of ``jax.sharding`` plait does not provide, with why (none)."""


def __getattr__(name: str) -> Any:
    reason = NOT_SUPPORTED.get(name)
    if reason is not None:
        # an AttributeError, so that hasattr(plait.sharding, name) is False (libraries probe with it)
        raise AttributeError(f"plait.sharding.{name} is not supported: {reason}", name=name)
    raise AttributeError(f"module 'plait.sharding' has no attribute {name!r}")


def _context_mesh(what: str, spec: PartitionSpec) -> Mesh:
    mesh = get_mesh()
    if mesh is None:
        abstract = get_abstract_mesh()
        mesh = None if abstract.empty else concrete_mesh(abstract)
    if mesh is None:
        raise ValueError(
            f"{what}: a bare PartitionSpec {spec!r} needs a context mesh (plait.set_mesh(mesh) or with mesh: ...)"
        )
    return mesh


def _as_sharding(s: Any, what: str) -> Any:
    return NamedSharding(_context_mesh(what, s), s) if isinstance(s, PartitionSpec) else s


def reshard(xs: Any, out_shardings: Any) -> Any:
    """``xs`` laid out as ``out_shardings`` (one sharding or PartitionSpec of the
    context mesh, or a pytree prefix of ``xs``): ``device_put`` for values, a
    ``sharding_constraint`` inside ``jit``.  Over ``Explicit`` mesh axes the
    result's type is the new sharding (``typeof(y).sharding.spec``)."""
    is_sharding = lambda s: isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    shardings = tree_map(lambda s: _as_sharding(s, "reshard"), out_shardings, is_leaf=is_sharding)
    if any(isinstance(leaf, Tracer) for leaf in tree_leaves(xs)):
        return _constrain(xs, shardings)
    if isinstance(shardings, Sharding):
        return device_put(xs, shardings)
    return tree_map(lambda s, sub: device_put(sub, s), shardings, xs, is_leaf=lambda s: isinstance(s, Sharding))


def _constrain(xs: Any, shardings: Any) -> Any:
    """``sharding_constraint`` of each leaf of ``xs`` (``shardings``: one, or a
    pytree prefix of ``xs``); unlike ``with_sharding_constraint`` it may name
    ``Explicit`` axes, whose types it sets."""

    def one(s: Sharding, sub: Any) -> Any:
        return tree_map(lambda leaf: sharding_constraint_p.bind(leaf, sharding=s), sub)

    if isinstance(shardings, Sharding):
        return one(shardings, xs)
    return tree_map(one, shardings, xs, is_leaf=lambda s: isinstance(s, Sharding))


def _axes_arg(axes: Any, mesh: AbstractMesh, kind: AxisType, what: str) -> tuple[Hashable, ...]:
    if mesh.empty:
        raise ValueError(f"{what}: there is no context mesh; call it under plait.set_mesh(mesh)")
    names = (
        tuple(n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is not kind)
        if axes is None
        else ((axes,) if isinstance(axes, str) else tuple(axes))
    )
    for n in names:
        mesh.axis_size(n)
    return names


def auto_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None, out_sharding: Any = None) -> Any:
    """``f`` run with mesh axes ``axes`` (default: every ``Explicit`` axis of the
    context mesh) of type ``Auto``: inside, types do not record splits over
    them and XLA lays values out along them; the results are resharded to
    ``out_sharding`` (required: a sharding or PartitionSpec, or a pytree of them)."""
    if f is None:
        return functools.partial(auto_axes, axes=axes, out_sharding=out_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        mesh = get_abstract_mesh()
        names = _axes_arg(axes, mesh, AxisType.Auto, "auto_axes")
        if out_sharding is None:
            raise ValueError("auto_axes: out_sharding is required (the layout of the results over the explicit mesh)")
        with use_abstract_mesh(mesh.update_axis_types(dict.fromkeys(names, AxisType.Auto))), suspended(frozenset(names)):
            out = f(*args, **kwargs)
        return reshard(out, out_sharding)

    return wrapped


def explicit_axes(f: Callable[..., Any] | None = None, /, *, axes: Any = None, in_sharding: Any = None) -> Any:
    """``f`` run with mesh axes ``axes`` (default: every ``Auto`` axis of the
    context mesh) of type ``Explicit``: the arguments are resharded to
    ``in_sharding`` (required) and typed by it, so that ``f`` computes with
    sharding in types; the results keep their layout, typed over the axes
    that are explicit outside."""
    if f is None:
        return functools.partial(explicit_axes, axes=axes, in_sharding=in_sharding)

    @functools.wraps(f)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        mesh = get_abstract_mesh()
        names = _axes_arg(axes, mesh, AxisType.Explicit, "explicit_axes")
        if in_sharding is None:
            raise ValueError("explicit_axes: in_sharding is required (the layout of the arguments)")
        outer = _context_mesh("explicit_axes", PartitionSpec())
        inner = outer.update_axis_types(dict.fromkeys(names, AxisType.Explicit))
        is_spec = lambda s: isinstance(s, PartitionSpec)  # noqa: E731
        specs = tree_map(lambda s: s.spec if isinstance(s, NamedSharding) else s, in_sharding, is_leaf=is_spec)
        with use_abstract_mesh(inner.abstract_mesh):
            typed = reshard(args, tree_map(lambda s: NamedSharding(inner, s), specs, is_leaf=is_spec))
            out = f(*typed, **kwargs)
        return tree_map(lambda y: _retype(y, outer), out)

    return wrapped


def _retype(y: Any, mesh: Mesh) -> Any:
    """``y`` typed over ``mesh``'s axis types, its layout unchanged."""
    spec = getattr(y, "aval", None)
    s = spec._sharding if spec is not None else None
    if s is None:
        return y
    return reshard(y, NamedSharding(mesh, s.spec))
