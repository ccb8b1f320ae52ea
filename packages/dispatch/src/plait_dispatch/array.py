"""``Array``: an immutable array whose data lives on XLA devices.

An ``Array`` wraps one jaxlib single-device buffer together with plait's
abstract value (shape, dtype, weak type), the device it lives on and whether
it is *committed* to that device (see :mod:`plait_dispatch.placement`).

A *multi-device* Array (made by ``device_put(x, sharding)``, an SPMD
computation or ``make_array_from_*``) wraps a jaxlib multi-device buffer and
its :class:`~plait_core.sharding.Sharding`; its ``_device`` is ``None``
(which is how the single-device paths tell it apart at no cost) and it is
always committed.  Every Array has ``.sharding`` and ``.addressable_shards``.

Deleting (``x.delete()``) or donating an Array frees its buffer; every later
use that needs its data (``repr``, ``np.asarray``, ``float(x)``, passing it to
a computation, ``device_put``) raises :class:`plait_core.DeletedArrayError`
saying which of the two happened.  Metadata (``shape``, ``dtype``, ``device``)
stays readable.

Arrays are registered with core (so core knows their abstract value and
data); operators and NumPy-style methods come from
``plait_core.numpy.methods.install_array_methods`` when core provides it.
"""

from __future__ import annotations

import importlib
import math
import operator
from collections.abc import Iterator, Sequence
from typing import Any, Final

import numpy as np

from plait_core import DeletedArrayError, ShapedArray, dtypes, register_array_type
from plait_core.explicit_sharding import explicit_type
from plait_core.sharding import Index, Sharding, SingleDeviceSharding, explicit_state
from plait_dispatch import _jaxlib

_LIVE: Final = 0
_DELETED: Final = 1
_DONATED: Final = 2
_SHARED_GONE: Final = 3  # the buffer died through another Array sharing it

_DL_CPU: Final = 1  # DLPack's kDLCPU


class Array:
    """An array on an XLA device (plait's counterpart of ``jax.Array``).

    Arrays are made by computations, by ``device_put`` and by the
    ``plait.numpy`` constructors, never by calling ``Array(...)`` directly.
    They are immutable; ``np.asarray(x)`` returns a NumPy copy of the data.
    """

    __slots__ = ("__weakref__", "_buf", "_committed", "_device", "_sharding", "_state", "aval")

    __array_priority__ = 100  # NumPy defers binary operators to ours

    _buf: Any
    aval: ShapedArray
    _device: _jaxlib.Device
    _committed: bool
    _state: int
    _sharding: Sharding

    def __init__(self, buf: _jaxlib.Buffer, aval: ShapedArray, device: _jaxlib.Device, committed: bool) -> None:
        self._buf = buf
        self.aval = aval
        self._device = device
        self._committed = committed
        self._state = _LIVE

    @classmethod
    def _multi(cls, buf: _jaxlib.Buffer, aval: ShapedArray, sharding: Sharding) -> Array:
        """A multi-device Array of a jaxlib multi-device buffer laid out as ``sharding``
        (over a mesh with ``Explicit`` axes its type records the layout over them)."""
        if explicit_state.active:
            aval = explicit_type(aval, sharding)
        x = cls(buf, aval, None, True)
        x._sharding = sharding
        return x

    # -- metadata (readable even after deletion) ---------------------------

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape, a tuple of ints."""
        return self.aval.shape  # type: ignore[return-value]

    @property
    def dtype(self) -> np.dtype[Any]:
        """The element type."""
        return self.aval.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.aval.shape)

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.aval.shape)  # type: ignore[arg-type]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.aval.dtype.itemsize

    @property
    def nbytes(self) -> int:
        """Bytes of data (``size * itemsize``)."""
        return self.size * self.aval.dtype.itemsize

    @property
    def weak_type(self) -> bool:
        """Whether the dtype is weak (came from a Python scalar) and yields to
        the other operand's dtype in promotion."""
        return self.aval.weak_type

    @property
    def committed(self) -> bool:
        """Whether the array was explicitly placed (``device_put(x, device)``).

        Computations run where their committed arguments are; uncommitted
        arrays follow them."""
        return self._committed

    @property
    def device(self) -> Any:
        """The device holding the data; for an array on several devices, its sharding (as in JAX)."""
        if self._device is None:
            return self._sharding
        return self._device

    def devices(self) -> set[_jaxlib.Device]:
        """The set of devices holding the data."""
        if self._device is None:
            return self._sharding.device_set
        return {self._device}

    @property
    def sharding(self) -> Sharding:
        """How the data is laid out: a ``SingleDeviceSharding`` for an array on
        one device, else the sharding it was placed or computed with."""
        if self._device is None:
            return self._sharding
        return _single_sharding(self._device)

    @property
    def is_fully_replicated(self) -> bool:
        """Whether every device holding data holds all of it."""
        return self.sharding.is_fully_replicated

    @property
    def is_fully_addressable(self) -> bool:
        """Whether every device holding data belongs to this process."""
        return self.sharding.is_fully_addressable

    @property
    def addressable_shards(self) -> list[Shard]:
        """This process's pieces of the array: each a :class:`Shard` with its
        ``device``, ``index`` (the slices of the global array it holds) and
        ``data`` (a single-device Array, committed to the device)."""
        buf = self._live_buffer("read its shards")
        if self._device is not None:
            return [Shard._of(self._device, tuple(slice(None) for _ in self.aval.shape), 0, self)]
        sharding = self._sharding
        indices = sharding.devices_indices_map(self.shape)
        aval = ShapedArray(sharding.shard_shape(self.shape), self.aval.dtype, self.aval.weak_type)
        local = [d for d in sharding._device_assignment if d in sharding.addressable_devices]
        seen: dict[Any, int] = {}
        out = []
        for d, b in zip(local, _jaxlib.shards_of(buf)):
            key = tuple((s.start, s.stop) for s in indices[d])
            replica = seen[key] = seen.get(key, -1) + 1
            out.append(Shard._of(d, indices[d], replica, Array(b, aval, d, True)))
        return out

    # -- lifetime ----------------------------------------------------------

    def is_deleted(self) -> bool:
        """Whether the array was deleted or donated (its data is gone)."""
        if self._state != _LIVE:
            return True
        if _jaxlib.is_deleted(self._buf):
            self._forget(_SHARED_GONE)
            return True
        return False

    def delete(self) -> None:
        """Free the device memory now.  Later uses of the data raise
        :class:`~plait_core.DeletedArrayError`; deleting twice is harmless."""
        buf = self._buf
        if self._state == _LIVE:
            self._forget(_DELETED)
            _jaxlib.delete(buf)

    def _donate(self) -> None:
        """Mark the array donated (its buffer was given to a computation or to
        ``device_put(donate=True)``) and free the buffer if XLA did not."""
        buf = self._buf
        if self._state == _LIVE:
            self._forget(_DONATED)
            if not _jaxlib.buffer_is_deleted(buf):  # XLA reused it: nothing left to free
                _jaxlib.delete(buf)

    def _move(self, committed: bool) -> Array:
        """A new Array taking over this one's buffer; this one counts as donated.

        Donation without a copy: the old Array can never be read again, so
        handing its buffer to the new one is indistinguishable from copying
        and freeing, and needs no second buffer."""
        buf = self._live_buffer("donate")
        self._forget(_DONATED)
        if self._device is None:
            return Array._multi(buf, self.aval, self._sharding)
        return Array(buf, self.aval, self._device, committed)

    def _forget(self, state: int) -> None:
        self._state = state
        self._buf = None

    def _live_buffer(self, use: str) -> _jaxlib.Buffer:
        """The buffer, or :class:`DeletedArrayError` naming ``use``."""
        if self._state == _LIVE and not _jaxlib.is_deleted(self._buf):
            return self._buf
        raise self._deleted_error(use)

    def _deleted_error(self, use: str) -> DeletedArrayError:
        if self._state == _LIVE:
            self._forget(_SHARED_GONE)
        what = f"Array {self.aval.str_short()}"
        if self._state == _DONATED:
            why = (
                f"{what} was donated (to a computation's donate_argnums or to device_put(donate=True)); "
                "its buffer now belongs to that computation's result. Keep a copy (x.copy()) "
                "if you need the value after donating it"
            )
        elif self._state == _DELETED:
            why = f"{what} was deleted (x.delete() freed its buffer)"
        else:
            why = f"{what} was deleted or donated through another Array that shares its device buffer"
        return DeletedArrayError(f"cannot {use}: {why}")

    def block_until_ready(self) -> Array:
        """Wait until the value is computed; returns the array itself."""
        _jaxlib.block_until_ready([self._live_buffer("block_until_ready")])
        return self

    def is_ready(self) -> bool:
        """Whether the value is computed (``block_until_ready`` would not wait)."""
        return bool(self._live_buffer("is_ready").is_ready())

    def on_device_size_in_bytes(self) -> int:
        """Bytes the data occupies on its device."""
        return _jaxlib.nbytes_on_device(self._live_buffer("on_device_size_in_bytes"))

    def unsafe_buffer_pointer(self) -> int:
        """The address of the array's data in its device's memory (host memory
        on CPU), as ``jax.Array.unsafe_buffer_pointer``.  Unsafe: it is valid
        only while the array is alive, and nothing keeps it so.  Only for an
        array on one device (``ValueError`` otherwise)."""
        if self._device is None:
            raise ValueError("unsafe_buffer_pointer() is supported only for arrays on one device; "
                             "use one of its addressable_shards' data")
        return _jaxlib.buffer_pointer(self._live_buffer("unsafe_buffer_pointer"))

    def copy(self) -> Array:
        """A new array with its own buffer on the same device(s) (same committedness)."""
        if self._device is None:
            self._live_buffer("copy")
            shards = self.addressable_shards
            copies = [_jaxlib.copy_buffer(s.data._buf, s.device) for s in shards]
            sharding = self._sharding
            jsharding = _jaxlib.multi_device_sharding(
                sharding._device_assignment, sharding._tiling(self.ndim).assignment
            )
            return Array._multi(_jaxlib.assemble(self.aval, jsharding, copies), self.aval, sharding)
        buf = _jaxlib.copy_buffer(self._live_buffer("copy"), self._device)
        return Array(buf, self.aval, self._device, self._committed)

    def __copy__(self) -> Array:
        return self.copy()

    def __deepcopy__(self, memo: Any) -> Array:
        return self.copy()

    # -- data on the host ----------------------------------------------------

    def _value(self, use: str) -> np.ndarray:
        """The data as a new NumPy array (raises if deleted or donated)."""
        buf = self._live_buffer(use)
        if self._device is None:
            return self._gather(use)
        if self.aval.dtype.kind == "V":  # ml_dtypes types: sub-byte ones have no DLPack form
            from plait_dispatch.lowering.module import HOST_CONTAINER

            container = HOST_CONTAINER.get(self.aval.dtype)
            if container is not None:  # widen exactly on the device, narrow back on the host
                from plait_core.primitives.elementwise import convert_element_type_p
                from plait_dispatch.eager import xla_backend

                wide = xla_backend(convert_element_type_p, [self], {"new_dtype": container, "weak_type": False})
                return wide._value(use).astype(self.aval.dtype)  # type: ignore[no-any-return]
        try:
            return _jaxlib.to_numpy(buf, self.aval.dtype)
        except _jaxlib.XlaRuntimeError:
            if _jaxlib.is_deleted(buf):  # deleted by another thread meanwhile
                raise self._deleted_error(use) from None
            raise

    def _gather(self, use: str) -> np.ndarray:
        """The data of a multi-device Array assembled on the host."""
        if not self._sharding.is_fully_addressable:
            if self._sharding.is_fully_replicated:  # every device has all of it: read a local one
                return self.addressable_shards[0].data._value(use)
            raise RuntimeError(
                f"cannot {use}: the Array {self.aval.str_short()} spans devices of other processes; "
                "only its addressable_shards can be read here"
            )
        out = np.empty(self.shape, self.aval.dtype)
        for shard in self.addressable_shards:
            if shard.replica_id == 0:
                out[shard.index] = shard.data._value(use)
        return out

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        if copy is False:
            raise ValueError(
                "np.asarray(Array, copy=False): the data of a plait Array lives on a device and "
                "can only be read as a copy; use copy=None or copy=True"
            )
        value = self._value("convert to NumPy")
        if dtype is not None and np.dtype(dtype) != value.dtype:
            value = value.astype(dtype)
        return value

    def tolist(self) -> Any:
        """The data as nested Python lists of Python scalars."""
        return self._value("tolist").tolist()

    def item(self, *args: Any) -> Any:
        """One element as a Python scalar (like ``numpy.ndarray.item``)."""
        return self._value("item").item(*args)

    def __repr__(self) -> str:
        value = self._value("repr")
        prefix = "Array("
        body = np.array2string(value, separator=", ", prefix=prefix, suffix=",")
        extra = []
        if value.size == 0 and value.shape != (0,):
            extra.append(f"shape={value.shape}")
        extra.append(f"dtype={self.aval.dtype.name}")
        if self.aval.weak_type:
            extra.append("weak_type=True")
        tail = ", ".join(extra)
        last_line = body.rsplit("\n", 1)[-1]
        width = int(np.get_printoptions()["linewidth"])
        if "\n" in body and len(last_line) + len(tail) + 3 > width:
            return f"{prefix}{body},\n{' ' * len(prefix)}{tail})"
        return f"{prefix}{body}, {tail})"

    def __str__(self) -> str:
        return str(self._value("str"))

    def __format__(self, spec: str) -> str:
        return format(self._value("format"), spec)

    # -- Python protocols ----------------------------------------------------

    def __len__(self) -> int:
        if not self.aval.shape:
            raise TypeError(f"len() of unsized object (a 0-d Array {self.aval.str_short()})")
        return self.aval.shape[0]  # type: ignore[return-value]

    def __iter__(self) -> Iterator[Array]:
        if not self.aval.shape:
            raise TypeError(f"iteration over a 0-d Array ({self.aval.str_short()})")
        return self._rows(self._value("iterate over"))

    def _rows(self, value: np.ndarray) -> Iterator[Array]:
        """Arrays of the rows of ``value``, placed and typed like this one."""
        aval = ShapedArray(self.aval.shape[1:], self.aval.dtype, self.aval.weak_type)
        device, committed = self._device, self._committed
        if device is None:  # rows of a multi-device array: on the default device
            device, committed = _jaxlib.default_device(), False
        for row in value:
            yield Array(_jaxlib.device_put(row, aval, device, committed), aval, device, committed)

    def __bool__(self) -> bool:
        return bool(self._value("convert to bool"))

    def __int__(self) -> int:
        return int(self._value("convert to int"))

    def __float__(self) -> float:
        return float(self._value("convert to float"))

    def __complex__(self) -> complex:
        return complex(self._value("convert to complex"))

    def __index__(self) -> int:
        if self.aval.dtype.kind not in "iu" or self.aval.shape:
            raise TypeError(
                f"only 0-d integer Arrays can be used as an index, got {self.aval.str_short()}"
            )
        return operator.index(self._value("use as an index"))

    def __hash__(self) -> int:
        raise TypeError(
            f"unhashable type: 'Array' ({self.aval.str_short()}); arrays are mutable-looking values "
            "compared elementwise. For a static argument pass a tuple or a NumPy scalar, or hash x.tobytes()"
        )

    def __reduce__(self) -> tuple[Any, tuple[Any, ...]]:
        return (_unpickle_array, (self._value("pickle"), self.aval.weak_type))

    def __dlpack__(
        self,
        *,
        stream: Any = None,
        max_version: Any = None,
        dl_device: Any = None,
        copy: bool | None = None,
    ) -> Any:
        """Export the data as a DLPack capsule.

        The capsule holds a private device copy, so the Array may still be
        deleted or donated while the consumer keeps the capsule; hence
        ``copy=False`` is refused with ``BufferError``.
        """
        if copy is False:
            raise BufferError("Array.__dlpack__(copy=False): plait exports DLPack tensors as copies")
        if dl_device is not None and int(dl_device[0]) != _DL_CPU:
            raise BufferError(f"Array.__dlpack__: cannot export to DLPack device {dl_device}; only CPU")
        if self._device is None:
            raise BufferError(
                "Array.__dlpack__: the array lives on several devices; export one of its addressable_shards' data"
            )
        return _jaxlib.dlpack_capsule(self._live_buffer("export with DLPack"), self._device)

    def __dlpack_device__(self) -> tuple[int, int]:
        return (_DL_CPU, 0)


class Shard:
    """One device's piece of an Array: ``device``, ``index`` (a tuple of slices
    of the global array), ``replica_id`` (0 for the first device holding that
    piece) and ``data`` (a single-device Array, or ``None``).

    ``Shard(device, sharding, global_shape, data=None)`` (JAX's constructor)
    finds the index and replica id of ``device`` in ``sharding`` laying out an
    array of ``global_shape``."""

    __slots__ = ("data", "device", "index", "replica_id")

    data: Array  # None only in a shard made by hand without data

    def __init__(self, device: Any, sharding: Sharding, global_shape: Sequence[int], data: Array | None = None) -> None:
        shape = tuple(global_shape)
        indices = sharding.devices_indices_map(shape)
        if device not in indices:
            raise ValueError(f"Shard: the device {device!r} holds no piece of {sharding!r}")
        key = _index_key(indices[device])
        replica = 0
        for d in sharding._device_assignment:
            if d is device or d == device:
                break
            if _index_key(indices[d]) == key:
                replica += 1
        self.device = device
        self.index = indices[device]
        self.replica_id = replica
        self.data = data  # type: ignore[assignment]

    @classmethod
    def _of(cls, device: Any, index: Index, replica_id: int, data: Array) -> Shard:
        """A shard whose index and replica id are known already."""
        shard = cls.__new__(cls)
        shard.device, shard.index, shard.replica_id, shard.data = device, index, replica_id, data
        return shard

    def __repr__(self) -> str:
        return f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, data={self.data})"


def _index_key(index: Index) -> tuple[tuple[Any, Any], ...]:
    return tuple((sl.start, sl.stop) for sl in index)


_single_shardings: dict[Any, SingleDeviceSharding] = {}


def _single_sharding(device: Any) -> SingleDeviceSharding:
    s = _single_shardings.get(device)
    if s is None:
        s = _single_shardings[device] = SingleDeviceSharding(device)
    return s


def _unpickle_array(value: np.ndarray, weak_type: bool) -> Array:
    """Rebuild a pickled Array: uncommitted, on the default device (64-bit data
    pickled with x64 on is narrowed when loaded with x64 off)."""
    dtype = dtypes.canonicalize_dtype(value.dtype)
    if value.dtype != dtype:
        value = value.astype(dtype)
    aval = ShapedArray(value.shape, dtype, weak_type)
    device = _jaxlib.default_device()
    return Array(_jaxlib.device_put(value, aval, device, False), aval, device, False)


def _numpy_of(x: Array) -> np.ndarray:
    return x._value("convert to NumPy")


# The abstract value is read by an attribute getter: core asks for it on every
# operation, and a getter written in C costs no Python frame.
register_array_type(Array, operator.attrgetter("aval"), _numpy_of)


def _install_core_methods() -> None:
    """Give Array core's operators and NumPy methods, when core has them.

    Attributes Array defines itself (data access, protocols, lifetime) stay
    Array's own: they are device-specific."""
    try:
        methods = importlib.import_module("plait_core.numpy.methods")
    except ModuleNotFoundError as e:
        if e.name in ("plait_core.numpy", "plait_core.numpy.methods"):
            return
        raise
    install = getattr(methods, "install_array_methods", None)
    if install is None:
        return
    own = {k: v for k, v in vars(Array).items() if not k.startswith("__") or k in _OWN_DUNDERS}
    install(Array)
    for name, attr in own.items():
        setattr(Array, name, attr)


_OWN_DUNDERS: Final = frozenset({
    "__array__", "__repr__", "__str__", "__format__", "__len__", "__iter__", "__bool__", "__int__",
    "__float__", "__complex__", "__index__", "__hash__", "__reduce__", "__dlpack__",
    "__dlpack_device__", "__copy__", "__deepcopy__", "__array_priority__",
})

_install_core_methods()
