"""Shardings: how an array's elements are laid out over several devices.

These are the types of ``jax.sharding`` with JAX's semantics, defined in
core because the language needs them (``shard_map`` names a :class:`Mesh` and
:class:`PartitionSpec`\\ s; ``with_sharding_constraint`` carries a sharding)
while devices stay opaque objects here: core never talks to a device.  The
interpreter that runs programs on devices (plait-dispatch) turns a sharding
into XLA's form through :meth:`Sharding._tiling`.

* :class:`Mesh`: an n-dimensional array of devices with a name per axis.
* :class:`PartitionSpec` (alias ``P``): per array dimension, the mesh axis
  names it is split over (``None``: not split; a tuple: split over several
  axes, major to minor).  Mesh axes a spec does not name replicate the data.
* :class:`NamedSharding`: a mesh and a spec.
* :class:`SingleDeviceSharding`: the whole array on one device.
* :class:`AxisType`: whether a mesh axis is ``Auto`` (XLA's partitioner
  decides layouts along it), ``Explicit`` (layouts are part of values' types,
  see :mod:`plait_core.explicit_sharding`) or ``Manual`` (inside
  ``shard_map``).  :class:`AbstractMesh` is a mesh's axis names, sizes and
  types without devices (what types refer to); :func:`get_abstract_mesh` /
  :func:`use_abstract_mesh` read and set the one in context.

Every sharding can say which slice of a global array each device holds
(:meth:`Sharding.devices_indices_map`); a dimension a sharding splits must
be divisible by the number of pieces (``ValueError`` otherwise).
"""

from __future__ import annotations

import contextlib
import enum
import math
import threading
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "AbstractDevice",
    "AbstractMesh",
    "AxisType",
    "ManualAxisType",
    "Mesh",
    "NamedSharding",
    "P",
    "PartitionSpec",
    "Sharding",
    "SingleDeviceSharding",
    "Tiling",
    "TiledSharding",
    "get_abstract_mesh",
    "get_mesh",
    "make_single_device_sharding",
    "set_mesh",
    "use_abstract_mesh",
]

Index = tuple[slice, ...]


class _Unconstrained:
    """``PartitionSpec.UNCONSTRAINED``: a dimension whose layout the partitioner may choose."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNCONSTRAINED"

    def __reduce__(self) -> str:
        return "UNCONSTRAINED"


#: The one ``PartitionSpec.UNCONSTRAINED`` (pickled by this name).
UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple[Any, ...]):
    """Per array dimension, the mesh axis names it is split over.

    ``P('x', None)`` splits dimension 0 over mesh axis ``'x'`` and keeps
    dimension 1 whole; ``P(('x', 'y'))`` splits dimension 0 over both axes
    (``'x'`` major); dimensions past the spec's length are not split, so
    ``P()`` replicates.  A name may be used once per spec.

    ``P.UNCONSTRAINED`` marks a dimension whose layout the partitioner may
    choose (JAX's); the spec keeps it, and plait's partitioner chooses to keep
    that dimension whole (it names no mesh axis)."""

    UNCONSTRAINED: Any = UNCONSTRAINED

    def __new__(cls, *entries: Any) -> PartitionSpec:
        seen: set[Hashable] = set()
        norm: list[Any] = []
        for e in entries:
            if isinstance(e, list):
                e = tuple(e)
            names = e if isinstance(e, tuple) else (() if e is None or e is UNCONSTRAINED else (e,))
            for n in names:
                if n is None:
                    raise TypeError(f"PartitionSpec: None inside a tuple entry {e!r}; use None alone")
                if n in seen:
                    raise ValueError(f"PartitionSpec{entries!r}: the mesh axis {n!r} is used more than once")
                seen.add(n)
            norm.append(e)
        return super().__new__(cls, norm)

    def __repr__(self) -> str:
        return f"P{tuple(self)!r}"

    def axis_names_of(self, dim: int) -> tuple[Hashable, ...]:
        """The mesh axes dimension ``dim`` is split over (``()``: none)."""
        if dim >= len(self):
            return ()
        e = self[dim]
        return () if e is None or e is UNCONSTRAINED else (e if isinstance(e, tuple) else (e,))

    def all_names(self) -> tuple[Hashable, ...]:
        """Every mesh axis the spec names, in order."""
        return tuple(n for d in range(len(self)) for n in self.axis_names_of(d))

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (PartitionSpec, tuple(self))


P = PartitionSpec


class AxisType(enum.Enum):
    """How layouts along a mesh axis are decided: ``Auto`` by XLA's
    partitioner, ``Explicit`` by the values' types (checked while tracing),
    ``Manual`` by the program itself (``shard_map`` bodies)."""

    Auto = "Auto"
    Explicit = "Explicit"
    Manual = "Manual"

    def __repr__(self) -> str:
        return self.name


def _axis_types(types: Any, names: tuple[Hashable, ...], what: str) -> tuple[AxisType, ...]:
    """``types`` checked against ``names``: ``None`` is every axis ``Auto``; one
    :class:`AxisType` is that type for every axis; else one per axis."""
    if types is None:
        return (AxisType.Auto,) * len(names)
    if isinstance(types, AxisType):
        return (types,) * len(names)
    out = tuple(types)
    if len(out) != len(names) or not all(isinstance(t, AxisType) for t in out):
        raise ValueError(
            f"{what}: axis_types must be one AxisType per axis ({len(names)} for axes {names!r}), got {types!r}"
        )
    return out


class ManualAxisType:
    """The mesh axes a value inside ``shard_map`` varies over, is unreduced or
    reduced over (JAX's record of manual axes in types; plait keeps the varying
    ones in ``ShapedArray.vma``).  Two with the same sets are equal."""

    __slots__ = ("reduced", "unreduced", "varying")

    varying: frozenset[Hashable]
    unreduced: frozenset[Hashable]
    reduced: frozenset[Hashable]

    def __init__(
        self,
        *,
        varying: Any = frozenset(),
        unreduced: Any = frozenset(),
        reduced: Any = frozenset(),
    ) -> None:
        v, u, r = frozenset(varying), frozenset(unreduced), frozenset(reduced)
        if v & u:
            raise ValueError(f"varying and unreduced cannot have common mesh axes. Got varying={v} and unreduced={u}")
        if v & r:
            raise ValueError(f"varying and reduced cannot have common mesh axes. Got varying={v} and reduced={r}")
        object.__setattr__(self, "varying", v)
        object.__setattr__(self, "unreduced", u)
        object.__setattr__(self, "reduced", r)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("ManualAxisType is immutable; use update()")

    def update(self, **kwargs: Any) -> ManualAxisType:
        """A copy with some of ``varying``, ``unreduced``, ``reduced`` replaced."""
        fields = {"varying": self.varying, "unreduced": self.unreduced, "reduced": self.reduced, **kwargs}
        return ManualAxisType(**fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ManualAxisType) and (self.varying, self.unreduced, self.reduced) == (
            other.varying,
            other.unreduced,
            other.reduced,
        )

    def __hash__(self) -> int:
        return hash((self.varying, self.unreduced, self.reduced))

    def __repr__(self) -> str:
        return f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, reduced={self.reduced})"


@dataclass(frozen=True)
class AbstractDevice:
    """What a type knows of the devices of a mesh: their kind, cores and platform."""

    device_kind: str
    num_cores: int | None
    platform: str


def _all_axes_are(mesh: Mesh | AbstractMesh, *kinds: AxisType) -> bool:
    # JAX's are_all_axes_*: False for a mesh without axes.
    return bool(mesh.axis_types) and all(t in kinds for t in mesh.axis_types)


class _AxisTypeQueries:
    """JAX's ``are_all_axes_*`` questions about a mesh's axis types (each False
    for a mesh without axes), shared by :class:`Mesh` and :class:`AbstractMesh`."""

    __slots__ = ()

    @property
    def are_all_axes_explicit(self) -> bool:
        """Whether the mesh has axes and every one is ``Explicit``."""
        return _all_axes_are(self, AxisType.Explicit)  # type: ignore[arg-type]

    @property
    def are_all_axes_auto(self) -> bool:
        """Whether the mesh has axes and every one is ``Auto``."""
        return _all_axes_are(self, AxisType.Auto)  # type: ignore[arg-type]

    @property
    def are_all_axes_manual(self) -> bool:
        """Whether the mesh has axes and every one is ``Manual``."""
        return _all_axes_are(self, AxisType.Manual)  # type: ignore[arg-type]

    @property
    def _are_all_axes_auto_or_manual(self) -> bool:
        return _all_axes_are(self, AxisType.Auto, AxisType.Manual)  # type: ignore[arg-type]

    @property
    def _are_all_axes_explicit_or_manual(self) -> bool:
        return _all_axes_are(self, AxisType.Explicit, AxisType.Manual)  # type: ignore[arg-type]


class AbstractMesh(_AxisTypeQueries):
    """A mesh without devices: axis sizes, names and :class:`AxisType`\\ s.

    It is what explicit sharding types refer to (``typeof(x).sharding.mesh``)
    and what :func:`get_abstract_mesh` returns.  ``AbstractMesh((), ())`` is
    the empty mesh (no context mesh)."""

    __slots__ = ("_hash", "axis_names", "axis_sizes", "axis_types")

    def __init__(
        self, axis_sizes: Sequence[int], axis_names: Sequence[Hashable], axis_types: Any = None, **_: Any
    ) -> None:
        sizes = tuple(int(s) for s in axis_sizes)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if len(sizes) != len(names):
            raise ValueError(f"AbstractMesh: {len(sizes)} axis sizes {sizes} but {len(names)} names {names!r}")
        if len(set(names)) != len(names):
            raise ValueError(f"AbstractMesh: axis names must be distinct, got {names!r}")
        self.axis_sizes: tuple[int, ...] = sizes
        self.axis_names: tuple[Hashable, ...] = names
        self.axis_types: tuple[AxisType, ...] = _axis_types(axis_types, names, "AbstractMesh")
        self._hash = hash((sizes, names, self.axis_types))

    @property
    def shape(self) -> dict[Hashable, int]:
        """Axis name -> size, in axis order."""
        return dict(zip(self.axis_names, self.axis_sizes))

    @property
    def shape_tuple(self) -> tuple[tuple[Hashable, int], ...]:
        """``(name, size)`` per axis."""
        return tuple(zip(self.axis_names, self.axis_sizes))

    @property
    def size(self) -> int:
        """Number of devices the mesh stands for."""
        return math.prod(self.axis_sizes)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no axes."""
        return not self.axis_names

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """Itself."""
        return self

    @property
    def explicit_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Explicit``."""
        return _axes_of(self, AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Auto``."""
        return _axes_of(self, AxisType.Auto)

    @property
    def manual_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Manual``."""
        return _axes_of(self, AxisType.Manual)

    def axis_size(self, name: Hashable) -> int:
        """The size of axis ``name`` (``ValueError`` naming the mesh's axes if it has none)."""
        try:
            return self.axis_sizes[self.axis_names.index(name)]
        except ValueError:
            raise ValueError(f"the mesh has no axis named {name!r}; its axes are {self.axis_names}") from None

    def update_axis_types(self, types: Mapping[Hashable, AxisType]) -> AbstractMesh:
        """The same mesh with the types of some axes (name -> type) replaced."""
        for n in types:
            self.axis_size(n)
        return AbstractMesh(self.axis_sizes, self.axis_names, tuple(types.get(n, t) for n, t in zip(self.axis_names, self.axis_types)))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, AbstractMesh)
            and self.axis_sizes == other.axis_sizes
            and self.axis_names == other.axis_names
            and self.axis_types == other.axis_types
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        types = ", ".join(t.name for t in self.axis_types) + ("," if len(self.axis_types) == 1 else "")
        if self.empty:
            return "AbstractMesh((), axis_types=())"
        axes = ", ".join(f"{n!r}: {s}" for n, s in zip(self.axis_names, self.axis_sizes))
        return f"AbstractMesh({axes}, axis_types=({types}))"

    def __enter__(self) -> AbstractMesh:
        _context.abstract.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.abstract.pop()


def _axes_of(mesh: Mesh | AbstractMesh, kind: AxisType) -> tuple[Hashable, ...]:
    return tuple(n for n, t in zip(mesh.axis_names, mesh.axis_types) if t is kind)



EMPTY_ABSTRACT_MESH = AbstractMesh((), ())


class Mesh(_AxisTypeQueries):
    """Devices arranged in an n-dimensional array whose axes have names.

    ``Mesh(devices, axis_names)``: ``devices`` an array (or nested lists) of
    distinct devices, ``axis_names`` one name per axis of it.  ``mesh.shape``
    maps names to sizes.  A mesh is also a context manager: inside ``with
    mesh:``, a bare :class:`PartitionSpec` given to ``with_sharding_constraint``
    refers to it.  ``axis_types`` (one :class:`AxisType` per axis, or one for
    all; default every axis ``Auto``) says how layouts along each axis are
    decided; a mesh with ``Explicit`` axes turns on sharding in types
    (:mod:`plait_core.explicit_sharding`)."""

    def __init__(self, devices: Any, axis_names: str | Sequence[Hashable], *, axis_types: Any = None) -> None:
        arr = np.array(devices, dtype=object)
        names = (axis_names,) if isinstance(axis_names, str) else tuple(axis_names)
        if arr.ndim != len(names):
            raise ValueError(
                f"Mesh: devices has {arr.ndim} dimension(s) (shape {arr.shape}) but {len(names)} axis name(s) "
                f"{names!r} were given; give one name per dimension"
            )
        if len(set(names)) != len(names):
            raise ValueError(f"Mesh: axis names must be distinct, got {names!r}")
        flat = list(arr.flat)
        if len({id(d) for d in flat}) != len(flat):
            raise ValueError("Mesh: a device appears more than once in devices")
        arr.flags.writeable = False
        self.devices = arr
        self.axis_names: tuple[Hashable, ...] = names
        self.axis_types: tuple[AxisType, ...] = _axis_types(axis_types, names, "Mesh")
        self._key = (tuple(id(d) for d in flat), arr.shape, names, self.axis_types)
        self._abstract = AbstractMesh(arr.shape, names, self.axis_types)
        if AxisType.Explicit in self.axis_types:
            _explicit_meshes[self._abstract] = self
            explicit_state.active = True

    @property
    def abstract_mesh(self) -> AbstractMesh:
        """The mesh's axis names, sizes and types, without its devices."""
        return self._abstract

    @property
    def explicit_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Explicit``."""
        return _axes_of(self, AxisType.Explicit)

    @property
    def auto_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Auto``."""
        return _axes_of(self, AxisType.Auto)

    @property
    def manual_axes(self) -> tuple[Hashable, ...]:
        """The axes of type ``Manual``."""
        return _axes_of(self, AxisType.Manual)

    def update_axis_types(self, types: Mapping[Hashable, AxisType]) -> Mesh:
        """The same devices with the types of some axes (name -> type) replaced."""
        for n in types:
            self.axis_size(n)
        return Mesh(self.devices, self.axis_names, axis_types=tuple(types.get(n, t) for n, t in zip(self.axis_names, self.axis_types)))

    @property
    def shape(self) -> dict[Hashable, int]:
        """Axis name -> size, in axis order."""
        return dict(zip(self.axis_names, self.devices.shape))

    @property
    def axis_sizes(self) -> tuple[int, ...]:
        """The size of each axis."""
        return tuple(self.devices.shape)

    @property
    def size(self) -> int:
        """Number of devices."""
        return int(self.devices.size)

    @property
    def empty(self) -> bool:
        """Whether the mesh has no devices."""
        return self.size == 0

    @property
    def device_ids(self) -> np.ndarray:
        """The devices' ids, in the mesh's shape."""
        return np.array([d.id for d in self.devices.flat], dtype=np.int64).reshape(self.devices.shape)

    @property
    def _flat_devices(self) -> tuple[Any, ...]:
        return tuple(self.devices.flat)

    def axis_size(self, name: Hashable) -> int:
        """The size of axis ``name`` (``ValueError`` naming the mesh's axes if it has none)."""
        try:
            return int(self.devices.shape[self.axis_names.index(name)])
        except ValueError:
            raise ValueError(f"the mesh has no axis named {name!r}; its axes are {self.axis_names}") from None

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Mesh) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        axes = ", ".join(f"{n!r}: {s}" for n, s in self.shape.items())
        if all(t is AxisType.Auto for t in self.axis_types):
            return f"Mesh({{{axes}}})"
        types = ", ".join(t.name for t in self.axis_types) + ("," if len(self.axis_types) == 1 else "")
        return f"Mesh({{{axes}}}, axis_types=({types}))"

    def __enter__(self) -> Mesh:
        _context.meshes.append(self)
        return self

    def __exit__(self, *exc: Any) -> None:
        _context.meshes.pop()


class _MeshContext(threading.local):
    def __init__(self) -> None:
        self.meshes: list[Mesh] = []
        self.abstract: list[AbstractMesh] = []


_context = _MeshContext()


class _ExplicitState:
    """``active``: whether a mesh with ``Explicit`` axes was ever made in this
    process; until then staging skips the explicit-sharding hook entirely."""

    active = False


explicit_state = _ExplicitState()

_explicit_meshes: dict[AbstractMesh, Mesh] = {}
"""The last mesh made with each abstract mesh that has ``Explicit`` axes: the
devices that lower a type referring to it."""


def concrete_mesh(abstract: AbstractMesh) -> Mesh | None:
    """The devices of an abstract mesh: the context mesh if it is one of them,
    else the last :class:`Mesh` made with those axes (``None`` if none)."""
    m = get_mesh()
    if m is not None and m.abstract_mesh == abstract:
        return m
    return _explicit_meshes.get(abstract)


def get_abstract_mesh() -> AbstractMesh:
    """The abstract mesh in context: the innermost :func:`use_abstract_mesh`
    (also set by ``auto_axes`` / ``explicit_axes``), else the context mesh's
    (``set_mesh`` / ``with mesh:``), else the empty ``AbstractMesh((), ())``."""
    if _context.abstract:
        return _context.abstract[-1]
    m = get_mesh()
    return EMPTY_ABSTRACT_MESH if m is None else m.abstract_mesh


@contextlib.contextmanager
def use_abstract_mesh(mesh: AbstractMesh | Mesh) -> Iterator[None]:
    """Make ``mesh``'s abstract mesh the one :func:`get_abstract_mesh` returns
    inside the block (types created there refer to it)."""
    if not isinstance(mesh, (AbstractMesh, Mesh)):
        raise ValueError(f"use_abstract_mesh: expected an AbstractMesh, got {type(mesh).__name__}: {mesh!r}")
    _context.abstract.append(mesh.abstract_mesh)
    try:
        yield
    finally:
        _context.abstract.pop()


def get_mesh() -> Mesh | None:
    """The mesh of the innermost ``with mesh:`` / :func:`set_mesh`, or ``None``."""
    return _context.meshes[-1] if _context.meshes else None


class set_mesh:  # JAX's name: called like a function, usable as a context manager
    """Make ``mesh`` the context mesh now, replacing any (``None`` clears it),
    for ``shard_map``, ``reshard`` and bare ``PartitionSpec`` shardings.  Used as
    ``with set_mesh(mesh):`` the previous context meshes come back when the
    block ends (the block's value is ``None``, as in JAX)."""

    def __init__(self, mesh: Mesh | None) -> None:
        if mesh is not None and not isinstance(mesh, Mesh):
            raise ValueError(f"set_mesh: expected a plait.sharding.Mesh or None, got {type(mesh).__name__}: {mesh!r}")
        self._previous = list(_context.meshes)
        self._previous_abstract = list(_context.abstract)
        _context.meshes[:] = [] if mesh is None else [mesh]
        _context.abstract[:] = []

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        _context.meshes[:] = self._previous
        _context.abstract[:] = self._previous_abstract


@dataclass(frozen=True)
class Tiling:
    """How a sharding lays out an array of a given rank: ``assignment`` has one
    axis per array dimension (its size: how many pieces that dimension is cut
    into) plus a last axis of replicas; its entries are positions in the
    sharding's ``_device_assignment``."""

    assignment: np.ndarray

    @property
    def tiles(self) -> tuple[int, ...]:
        """Pieces per array dimension."""
        return tuple(self.assignment.shape[:-1])

    @property
    def replicas(self) -> int:
        """How many devices hold each piece."""
        return int(self.assignment.shape[-1])

    def key(self) -> tuple[Any, ...]:
        return (self.assignment.shape, tuple(self.assignment.flat))


class Sharding:
    """The layout of an array over devices (base class of every sharding)."""

    memory_kind: str | None = None

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        """The devices in the order the tiling's positions count them."""
        raise NotImplementedError

    def _tiling(self, ndim: int) -> Tiling:
        """The layout of an array of rank ``ndim``."""
        raise NotImplementedError

    @property
    def device_set(self) -> set[Any]:
        """Every device holding some of the data."""
        return set(self._device_assignment)

    @property
    def num_devices(self) -> int:
        """How many devices hold data."""
        return len(self._device_assignment)

    @property
    def addressable_devices(self) -> set[Any]:
        """The devices of this process holding data."""
        return {d for d in self._device_assignment if _is_local(d)}

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device holding data belongs to this process."""
        return all(_is_local(d) for d in self._device_assignment)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array."""
        return self.num_devices == 1 or all(t == 1 for t in self._tiling(8).tiles)

    def devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, Index]:
        """Device -> the slices of an array of ``global_shape`` it holds."""
        shape = tuple(int(d) for d in global_shape)
        tiling = self._tiling(len(shape))
        devs = self._device_assignment
        for d, (size, t) in enumerate(zip(shape, tiling.tiles)):
            if size % t:
                raise ValueError(
                    f"{self!r} splits dimension {d} of an array of shape {shape} into {t} pieces, but {size} "
                    f"is not divisible by {t}"
                )
        out: dict[Any, Index] = {}
        for coords in np.ndindex(*tiling.assignment.shape):
            pos = int(tiling.assignment[coords])
            out[devs[pos]] = tuple(
                slice(c * (size // t), (c + 1) * (size // t)) if t > 1 else slice(None)
                for c, size, t in zip(coords[:-1], shape, tiling.tiles)
            )
        return {d: out[d] for d in devs}

    def addressable_devices_indices_map(self, global_shape: Sequence[int]) -> dict[Any, Index]:
        """As :meth:`devices_indices_map`, for this process's devices only."""
        return {d: i for d, i in self.devices_indices_map(global_shape).items() if _is_local(d)}

    def shard_shape(self, global_shape: Sequence[int]) -> tuple[int, ...]:
        """The shape of each device's piece of an array of ``global_shape``."""
        shape = tuple(int(d) for d in global_shape)
        self.devices_indices_map(shape)  # checks divisibility
        return tuple(s // t for s, t in zip(shape, self._tiling(len(shape)).tiles))

    def is_equivalent_to(self, other: Sharding, ndim: int) -> bool:
        """Whether both put the same pieces on the same devices for rank ``ndim``."""
        a, b = self._tiling(ndim), other._tiling(ndim)
        da, db = self._device_assignment, other._device_assignment
        if a.assignment.shape != b.assignment.shape:
            return False
        if a.tiles == (1,) * ndim and b.tiles == (1,) * ndim:
            return set(map(id, da)) == set(map(id, db))
        pa = np.vectorize(lambda p: id(da[p]), otypes=[object])(a.assignment)
        pb = np.vectorize(lambda p: id(db[p]), otypes=[object])(b.assignment)
        return bool(np.all(np.sort(pa, axis=-1) == np.sort(pb, axis=-1)))


def _is_local(device: Any) -> bool:
    client = getattr(device, "client", None)
    if client is None:
        return True
    return bool(device.process_index == client.process_index())


class SingleDeviceSharding(Sharding):
    """The whole array on one device."""

    def __init__(self, device: Any, *, memory_kind: str | None = None) -> None:
        self._device = device
        self.memory_kind = memory_kind

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return (self._device,)

    def _tiling(self, ndim: int) -> Tiling:
        return Tiling(np.zeros((1,) * ndim + (1,), np.int64))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SingleDeviceSharding) and other._device is self._device

    def __hash__(self) -> int:
        return hash(("single", id(self._device)))

    def __repr__(self) -> str:
        return f"SingleDeviceSharding(device={self._device!r})"


def make_single_device_sharding(device: Any) -> SingleDeviceSharding:
    """``SingleDeviceSharding(device)``."""
    return SingleDeviceSharding(device)


class NamedSharding(Sharding):
    """An array laid out over ``mesh`` as ``spec`` says (see :class:`PartitionSpec`)."""

    def __init__(
        self, mesh: Mesh | AbstractMesh, spec: PartitionSpec | None = None, *, memory_kind: str | None = None
    ) -> None:
        if not isinstance(mesh, (Mesh, AbstractMesh)):
            raise TypeError(f"NamedSharding: mesh must be a Mesh, got {type(mesh).__name__}: {mesh!r}")
        spec = PartitionSpec() if spec is None else spec
        if not isinstance(spec, PartitionSpec):
            if isinstance(spec, tuple):
                spec = PartitionSpec(*spec)
            else:
                raise TypeError(f"NamedSharding: spec must be a PartitionSpec, got {type(spec).__name__}: {spec!r}")
        for n in spec.all_names():
            if n not in mesh.axis_names:
                raise ValueError(
                    f"NamedSharding: the spec {spec!r} names the axis {n!r}, which the mesh does not have "
                    f"(its axes: {mesh.axis_names})"
                )
        self.mesh = mesh
        self.spec = spec
        self.memory_kind = memory_kind

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        if isinstance(self.mesh, AbstractMesh):
            raise ValueError(f"{self!r} refers to an abstract mesh, which has no devices")
        return self.mesh._flat_devices

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holds the whole array; over an abstract mesh (a
        type's sharding, ``typeof(x).sharding``) too: no mesh axis of size above 1 splits it."""
        if isinstance(self.mesh, AbstractMesh):
            return all(t == 1 for t in self._tiling(len(self.spec)).tiles)
        return super().is_fully_replicated

    def _tiling(self, ndim: int) -> Tiling:
        if len(self.spec) > ndim:
            raise ValueError(
                f"NamedSharding: the spec {self.spec!r} has {len(self.spec)} entries, more than the {ndim} "
                "dimension(s) of the array"
            )
        mesh = self.mesh
        positions = np.arange(mesh.size, dtype=np.int64).reshape(mesh.axis_sizes)
        order: list[int] = []
        tiles: list[int] = []
        for d in range(ndim):
            names = self.spec.axis_names_of(d)
            order.extend(mesh.axis_names.index(n) for n in names)
            tiles.append(math.prod(mesh.axis_size(n) for n in names))
        rest = [i for i in range(len(mesh.axis_names)) if i not in order]
        reps = math.prod(mesh.axis_sizes[i] for i in rest)
        return Tiling(np.transpose(positions, order + rest).reshape(*tiles, reps))

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, NamedSharding)
            and self.mesh == other.mesh
            and _trimmed(self.spec) == _trimmed(other.spec)
        )

    def __hash__(self) -> int:
        return hash((self.mesh, _trimmed(self.spec)))

    def __repr__(self) -> str:
        return f"NamedSharding(mesh={self.mesh!r}, spec={self.spec!r})"

    def with_spec(self, spec: PartitionSpec) -> NamedSharding:
        """The same mesh with another spec."""
        return NamedSharding(self.mesh, spec)

    def update(self, **kwargs: Any) -> NamedSharding:
        """A copy with ``mesh``, ``spec`` and/or ``memory_kind`` replaced (JAX's; flax's
        partitioning calls it).  Another keyword is a TypeError naming it."""
        unknown = sorted(set(kwargs) - {"mesh", "spec", "memory_kind"})
        if unknown:
            raise TypeError(f"NamedSharding.update: unexpected keyword(s) {unknown}; it takes mesh, spec, memory_kind")
        return NamedSharding(kwargs.get("mesh", self.mesh), kwargs.get("spec", self.spec),
                             memory_kind=kwargs.get("memory_kind", self.memory_kind))


def _trimmed(spec: PartitionSpec) -> tuple[Any, ...]:
    entries = list(spec)
    while entries and entries[-1] is None:
        entries.pop()
    return tuple(e[0] if isinstance(e, tuple) and len(e) == 1 else e for e in entries)


class TiledSharding(Sharding):
    """A layout given directly by devices and a tiling: what XLA's partitioner
    may choose for a computation's outputs when no :class:`NamedSharding`
    describes it (JAX calls it ``GSPMDSharding``, not a public name)."""

    def __init__(self, devices: Sequence[Any], assignment: np.ndarray) -> None:
        self._devices = tuple(devices)
        self._assignment = np.asarray(assignment, np.int64)

    @property
    def _device_assignment(self) -> tuple[Any, ...]:
        return self._devices

    def _tiling(self, ndim: int) -> Tiling:
        a = self._assignment
        if a.ndim != ndim + 1:
            # Replicated over all devices: any rank.
            if a.ndim >= 1 and all(t == 1 for t in a.shape[:-1]):
                return Tiling(a.reshape((1,) * ndim + (a.shape[-1],)))
            raise ValueError(f"{self!r} lays out arrays of rank {a.ndim - 1}, not {ndim}")
        return Tiling(a)

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TiledSharding)
            and tuple(map(id, self._devices)) == tuple(map(id, other._devices))
            and self._assignment.shape == other._assignment.shape
            and bool(np.all(self._assignment == other._assignment))
        )

    def __hash__(self) -> int:
        return hash((tuple(map(id, self._devices)), self._assignment.shape, tuple(self._assignment.flat)))

    def __repr__(self) -> str:
        return f"TiledSharding(devices={len(self._devices)}, tiles={self._assignment.shape})"


def mesh_axis_sizes(mesh: Mesh, names: Iterator[Hashable] | Sequence[Hashable]) -> int:
    """The product of the sizes of the mesh axes ``names``."""
    return math.prod(mesh.axis_size(n) for n in names)


def spec_of(names: Mapping[int, tuple[Hashable, ...]], ndim: int) -> PartitionSpec:
    """A spec from dimension -> axis names."""
    entries: list[Any] = []
    for d in range(ndim):
        ns = names.get(d, ())
        entries.append(None if not ns else (ns[0] if len(ns) == 1 else tuple(ns)))
    while entries and entries[-1] is None:
        entries.pop()
    return PartitionSpec(*entries)
