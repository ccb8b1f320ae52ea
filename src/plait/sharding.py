"""``plait.sharding``: how arrays are laid out over devices (``jax.sharding``).

``Mesh``, ``PartitionSpec`` and the shardings are plait-core's
(:mod:`plait_core.sharding`); ``make_mesh`` and ``reshard`` need devices and
come from plait-dispatch.  The names of ``jax.sharding`` that belong to
JAX's *explicit sharding* mode (sharding in types, checked at trace time)
are not supported: plait's shardings are layouts of values, decided by
XLA's partitioner from the requests of ``jit``, ``device_put``,
``with_sharding_constraint`` and ``shard_map``.  Reading one raises an
``AttributeError`` saying so (:data:`NOT_SUPPORTED` lists them), so that
``hasattr`` answers False.  ``AbstractMesh`` is the exception: libraries
name it in annotations and ``isinstance`` checks at import, so the class
exists, no plait value is one, and making one raises ``NotImplementedError``.
"""

from __future__ import annotations

from typing import Any

from plait_core import Tracer
from plait_core.shard_map import with_sharding_constraint
from plait_core.sharding import (
    Mesh,
    NamedSharding,
    P,
    PartitionSpec,
    Sharding,
    SingleDeviceSharding,
    get_mesh,
    make_single_device_sharding,
    set_mesh,
)
from plait_core.tree_util import tree_leaves, tree_map
from plait_dispatch import device_put, make_mesh

__all__ = [
    "NOT_SUPPORTED",
    "AbstractMesh",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "get_mesh",
    "make_mesh",
    "make_single_device_sharding",
    "reshard",
    "set_mesh",
]

_EXPLICIT = (
    "belongs to JAX's explicit-sharding mode (shardings as part of types, checked while tracing); plait "
    "lays values out with jit's in/out_shardings, device_put, with_sharding_constraint and shard_map, and "
    "XLA's partitioner decides the rest"
)

NOT_SUPPORTED: dict[str, str] = {
    "AbstractDevice": f"AbstractDevice {_EXPLICIT}",
    "AxisType": f"AxisType {_EXPLICIT} (every mesh axis is 'auto' in plait)",
    "ManualAxisType": f"ManualAxisType {_EXPLICIT}",
    "auto_axes": f"auto_axes {_EXPLICIT}",
    "explicit_axes": f"explicit_axes {_EXPLICIT}",
    "get_abstract_mesh": f"get_abstract_mesh {_EXPLICIT}; use get_mesh",
    "use_abstract_mesh": f"use_abstract_mesh {_EXPLICIT}; use `with mesh:`",
}
"""The public names of ``jax.sharding`` plait does not provide, with why."""


class AbstractMesh:
    """JAX's device-free mesh (axis sizes, names and types), the mesh of JAX's
    explicit-sharding mode.  plait has no abstract meshes: its meshes are
    :class:`Mesh` es of devices, and shardings are layouts decided by XLA.  The
    class exists so that code naming it (annotations, ``isinstance``) runs; no
    plait value is an ``AbstractMesh``, and making one raises
    ``NotImplementedError``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"plait.sharding.AbstractMesh is not supported: AbstractMesh {_EXPLICIT}")


def __getattr__(name: str) -> Any:
    reason = NOT_SUPPORTED.get(name)
    if reason is not None:
        # an AttributeError, so that hasattr(plait.sharding, name) is False (libraries probe with it)
        raise AttributeError(f"plait.sharding.{name} is not supported: {reason}", name=name)
    raise AttributeError(f"module 'plait.sharding' has no attribute {name!r}")


def reshard(x: Any, out_shardings: Any) -> Any:
    """``x`` laid out as ``out_shardings`` (one sharding or PartitionSpec of the
    context mesh, or a pytree prefix of ``x``): ``device_put`` for values,
    ``with_sharding_constraint`` inside ``jit``."""
    if any(isinstance(leaf, Tracer) for leaf in tree_leaves(x)):
        return with_sharding_constraint(x, out_shardings)
    if isinstance(out_shardings, PartitionSpec):
        mesh = get_mesh()
        if mesh is None:
            raise ValueError(f"reshard: a bare PartitionSpec {out_shardings!r} needs a context mesh (with mesh: ...)")
        out_shardings = NamedSharding(mesh, out_shardings)
    if isinstance(out_shardings, Sharding):
        return device_put(x, out_shardings)
    return tree_map(lambda s, sub: device_put(sub, s), out_shardings, x, is_leaf=lambda s: isinstance(s, Sharding))

