"""``checkpoint`` (alias ``remat``): trade computation for memory in reverse mode.

``checkpoint(fun)`` stages ``fun`` and binds ``checkpoint(*consts, *args)``.
Its value is ``fun``'s.  When differentiated, the values the backward pass
needs are not stored: they are recomputed from the checkpoint's inputs,
except for those the ``policy`` lets it save.  A policy is a function
``policy(prim, *in_avals, **params) -> bool`` called on each equation of the
body; :data:`checkpoint_policies` holds the usual ones.
"""

from __future__ import annotations

import functools
import types
from collections.abc import Callable, Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.primitive import Primitive
from plait_core.primitives.calls import (
    StagingCache,
    checkpoint_p,
    fun_name,
    merge_static,
    normalize_argnums,
    split_static,
    stage_cached,
)
from plait_core.tree_util import tree_unflatten

__all__ = [
    "checkpoint",
    "checkpoint_policies",
    "dots_saveable",
    "dots_with_no_batch_dims_saveable",
    "everything_saveable",
    "nothing_saveable",
    "remat",
    "save_from_both_policies",
]

Policy = Callable[..., bool]

_DOT_PRIMITIVES = frozenset({"dot_general", "conv_general_dilated"})


def everything_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save every value (no recomputation: plain reverse mode)."""
    return True


def nothing_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save nothing: recompute every value from the checkpoint's inputs (the default)."""
    return False


def dots_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save the results of matrix products and convolutions; recompute the rest."""
    return prim.name in _DOT_PRIMITIVES


def dots_with_no_batch_dims_saveable(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
    """Save the results of ``dot_general`` without batch dimensions; recompute the rest."""
    if prim.name != "dot_general":
        return False
    try:
        _, (lhs_batch, rhs_batch) = params["dimension_numbers"]
    except (KeyError, TypeError, ValueError):
        return False
    return not lhs_batch and not rhs_batch


def save_from_both_policies(policy_1: Policy, policy_2: Policy) -> Policy:
    """A policy saving what either policy saves."""

    def policy(prim: Primitive, *avals: ShapedArray, **params: Any) -> bool:
        return bool(policy_1(prim, *avals, **params)) or bool(policy_2(prim, *avals, **params))

    policy.__name__ = f"save_from_both_policies({fun_name(policy_1)}, {fun_name(policy_2)})"
    return policy


#: The policies under JAX's names: ``checkpoint_policies.dots_saveable`` etc.
checkpoint_policies = types.SimpleNamespace(
    everything_saveable=everything_saveable,
    nothing_saveable=nothing_saveable,
    dots_saveable=dots_saveable,
    checkpoint_dots=dots_saveable,
    dots_with_no_batch_dims_saveable=dots_with_no_batch_dims_saveable,
    checkpoint_dots_with_no_batch_dims=dots_with_no_batch_dims_saveable,
    save_from_both_policies=save_from_both_policies,
)


def checkpoint(
    fun: Callable[..., Any],
    *,
    prevent_cse: bool = True,
    policy: Policy | None = None,
    static_argnums: int | Sequence[int] = (),
) -> Callable[..., Any]:
    """Make ``fun`` recompute its intermediate values in the backward pass
    instead of storing them.

    ``policy(prim, *in_avals, **params) -> bool`` names the values that may be
    stored anyway (default: none, as ``nothing_saveable``).  ``static_argnums``
    are passed as Python values (so ``fun`` may branch on them).
    ``prevent_cse`` keeps the compiler from merging the recomputation with
    the forward computation.  Returns a function with ``fun``'s signature
    and value.
    """
    if not callable(fun):
        raise TypeError(f"checkpoint expects a function, got {type(fun).__name__}")
    if policy is None:
        policy = nothing_saveable
    elif not callable(policy):
        raise TypeError(f"checkpoint: policy must be a function policy(prim, *avals, **params), got {type(policy).__name__}")
    what = f"checkpoint of {fun_name(fun)}"
    cache = StagingCache()
    prevent = bool(prevent_cse)

    @functools.wraps(fun)
    def checkpointed(*args: Any, **kwargs: Any) -> Any:
        dyn, static = split_static(args, normalize_argnums(what, static_argnums, len(args), "static_argnums"))
        staged, leaves = stage_cached(
            what,
            (dyn, kwargs),
            lambda t: fun(*merge_static(t[0], static), **t[1]),
            cache,
            tuple(sorted(static.items())),
        )
        outs = checkpoint_p.bind(
            *staged.consts, *leaves, jaxpr=staged.body, prevent_cse=prevent, differentiated=False, policy=policy
        )
        return tree_unflatten(staged.out_tree, outs)

    return checkpointed


remat = checkpoint
