"""JAX's ``lax.<name>_p`` primitive objects, answered with plait's primitives.

JAX's ``jax.lax`` exports its primitives as ``<name>_p`` (``lax.tanh_p``,
``lax.stop_gradient_p``); libraries key tables of their own rules by them or
compare an equation's primitive with them.  ``plait.lax.<name>_p`` is plait's
primitive named ``<name>`` (the same operation: plait's primitives carry
JAX's names), found in core's catalog on first use; a name with no plait
primitive is an ``AttributeError`` that says so.
"""

from __future__ import annotations

from plait_core.primitive import Primitive, primitive_by_name


def __getattr__(name: str) -> Primitive:
    """``<name>_p`` -> plait's primitive ``<name>``."""
    if name.endswith("_p") and not name.startswith("_"):
        try:
            return primitive_by_name(name[:-2])
        except KeyError:
            pass
        raise AttributeError(f"module 'plait.lax' has no attribute {name!r}: plait has no primitive named "
                             f"{name[:-2]!r}", name=name)
    raise AttributeError(f"module 'plait.lax' has no attribute {name!r}", name=name)
