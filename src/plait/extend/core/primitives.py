"""``jax.extend.core.primitives``: plait's primitives by JAX's names (``sin_p``, ...).

Every primitive of plait-core's catalog is here as ``<name>_p``; plait's
``add_any`` is also ``add_jaxvals_p``, as JAX calls it.
"""

from __future__ import annotations

from typing import Any

from plait_core import Primitive, all_primitives

__all__: list[str] = []


def _export(name: str, prim: Primitive) -> None:
    globals()[name] = prim
    __all__.append(name)


for _p in all_primitives():
    _export(f"{_p.name}_p", _p)
_export("add_jaxvals_p", globals()["add_any_p"])


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"plait has no primitive {name!r} (jax.extend.core.primitives names plait's primitives as <name>_p; "
        f"plait's catalog has {len(__all__)})"
    )
