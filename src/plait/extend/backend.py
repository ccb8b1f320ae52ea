"""``jax.extend.backend``: the XLA backend plait runs on.

plait runs on jaxlib's CPU client (plait-dispatch); :func:`get_backend`
describes it with a :class:`Backend` (platform, devices), :func:`backends`
lists it by platform, :func:`get_default_device` is the device uncommitted
values live on, :func:`clear_backends` and
:func:`clear_in_memory_compilation_cache` forget compiled computations.
Registering other backends is not supported (plait-dispatch has one client).
"""

from __future__ import annotations

from typing import Any

import plait_dispatch
from plait_dispatch import _jaxlib

__all__ = [
    "Backend",
    "backends",
    "clear_backends",
    "clear_in_memory_compilation_cache",
    "get_backend",
    "get_default_device",
    "register_backend_factory",
]


class Backend:
    """The backend of one platform: its name and devices."""

    __slots__ = ("platform",)

    def __init__(self, platform: str) -> None:
        self.platform = platform

    def devices(self) -> list[Any]:
        """Every device of the backend (of every process)."""
        return list(plait_dispatch.devices())

    def local_devices(self) -> list[Any]:
        """The devices of this process."""
        return list(plait_dispatch.local_devices())

    def device_count(self) -> int:
        """How many devices."""
        return len(self.devices())

    def local_device_count(self) -> int:
        """How many devices this process has."""
        return len(self.local_devices())

    def process_index(self) -> int:
        """This process's index."""
        return int(plait_dispatch.process_index())

    def __repr__(self) -> str:
        return f"Backend({self.platform!r})"


def get_backend(platform: str | None = None) -> Backend:
    """The backend of ``platform`` (``None``: the default one); a ``RuntimeError``
    for a platform plait does not run on."""
    default = plait_dispatch.default_backend()
    if platform is not None and platform != default:
        raise RuntimeError(f"Unknown backend {platform!r}: plait runs on the {default!r} backend only")
    return Backend(default)


def backends() -> dict[str, Backend]:
    """The backends by platform name."""
    b = get_backend()
    return {b.platform: b}


def get_default_device() -> Any:
    """The device uncommitted values are placed on."""
    return _jaxlib.default_device()


def clear_backends() -> None:
    """Forget every compiled computation (plait keeps its one client)."""
    plait_dispatch.clear_caches()


def clear_in_memory_compilation_cache() -> None:
    """Forget every compiled computation."""
    plait_dispatch.clear_caches()


def register_backend_factory(
    name: str, factory: Any, *, priority: int = 0, fail_quietly: bool = True
) -> None:
    """Not supported: plait-dispatch runs on one jaxlib client it makes itself."""
    raise NotImplementedError(
        f"register_backend_factory({name!r}): plait runs on one jaxlib client (CPU) that plait-dispatch makes; "
        "other backends cannot be registered"
    )
