"""lax functions of the calls family, and the call and customisation front-ends.

``named_call`` stages a function and calls it through ``closed_call`` (so it
stays one call in jaxprs); the customisation front-ends (``custom_jvp``,
``custom_vjp``, ``custom_vmap``, ``checkpoint``/``remat``, ``invertible``,
``custom_ivjp``) are re-exported from their modules.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from plait_core.checkpoint import checkpoint, checkpoint_policies, remat
from plait_core.custom_batching import custom_vmap
from plait_core.custom_derivatives import custom_jvp, custom_vjp
from plait_core.invertible import custom_ivjp, invertible
from plait_core.primitives.calls import StagingCache, closed_call_p, fun_name, stage_cached
from plait_core.tree_util import tree_unflatten

__all__ = [
    "checkpoint",
    "checkpoint_policies",
    "custom_ivjp",
    "custom_jvp",
    "custom_vjp",
    "custom_vmap",
    "invertible",
    "named_call",
    "remat",
]


def named_call(fun: Callable[..., Any], *, name: str | None = None) -> Callable[..., Any]:
    """``fun`` as a named call: staged once per argument types and bound as a
    ``closed_call`` named ``name`` (default: ``fun``'s name), so it appears
    as one call in jaxprs.  Returns a function with ``fun``'s value."""
    if not callable(fun):
        raise TypeError(f"named_call expects a function, got {type(fun).__name__}")
    if name is not None and not isinstance(name, str):
        raise TypeError(f"named_call: name must be a str, got {type(name).__name__}")
    call_name = fun_name(fun) if name is None else name
    cache = StagingCache()

    @functools.wraps(fun)
    def called(*args: Any, **kwargs: Any) -> Any:
        staged, leaves = stage_cached(
            f"named_call of {call_name}", (args, kwargs), lambda t: fun(*t[0], **t[1]), cache
        )
        outs = closed_call_p.bind(*staged.consts, *leaves, call_jaxpr=staged.body, name=call_name, jit_info=None)
        return tree_unflatten(staged.out_tree, outs)

    return called
