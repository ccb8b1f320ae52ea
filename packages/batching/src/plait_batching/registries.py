"""The registries that hold plait-batching's rules, keyed by core's primitives.

``batching_rules[prim]`` is called as ``rule(axis, args, dims, **params)``
with the parent trace current: ``axis`` is the :class:`~plait_batching.trace.AxisData`
of the vmap, ``args`` the operands with their batch dimensions still in
place and ``dims`` one batch dimension (an ``int``) or ``None`` (unbatched)
per operand.  It returns ``(out, out_dim)``, or for a primitive with multiple
results ``(outs, out_dims)``.

``ragged_rules[prim]`` is called as ``rule(trace, prim, args, params)`` when a
ragged value (inside ``vmap`` over piles) is an operand or a ragged size
appears in the params; it returns the results as values of ``trace`` (see
:mod:`plait_batching.ragged`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from plait_core import Primitive, RuleRegistry

BatchingRule = Callable[..., tuple[Any, Any]]

batching_rules: RuleRegistry[BatchingRule] = RuleRegistry("batching")
ragged_rules: RuleRegistry[Callable[..., Any]] = RuleRegistry("batching (ragged piles)")

#: Primitives whose rule runs even when no operand is batched (the named-axis
#: collectives: ``axis_index`` has no operand, and ``psum`` of an unbatched
#: value over this vmap's axis still multiplies it by the axis size).
always_run: set[Primitive] = set()
