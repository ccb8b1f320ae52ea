"""Padded rules of the linalg family.

``dot_general`` contracting a padded axis (``scores @ values`` in attention)
first zeroes the padding of *both* operands along it, so it adds nothing to
the sum (zeroing both keeps a non-finite value in one operand's padding from
making ``0 * inf``); padded batch and free axes pass through, each on its own
(``per_axis``: queries of one pile against keys of another give ``n x m``
scores).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core.abstract import ShapedArray
from plait_core.padded.env import PaddedEnv
from plait_core.padded.registry import padded_rules
from plait_core.primitives.linalg import dot_general_p

__all__: list[str] = []


def zero_of(aval: ShapedArray) -> Any:
    """The zero of ``aval``'s dtype (``False`` for booleans)."""
    return False if aval.dtype.kind == "b" else 0


def _dot_general(
    env: PaddedEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, dimension_numbers: Any, **params: Any
) -> Any:
    (lhs, rhs), (la, ra) = vals, avals
    (lc, rc), _ = dimension_numbers
    padded = [(a, b) for a, b in zip(lc, rc) if env.is_padded(la.shape[a])]
    if padded:
        lhs = env.fill(lhs, la, [a for a, _ in padded], zero_of(la))
        rhs = env.fill(rhs, ra, [b for _, b in padded], zero_of(ra))
    return dot_general_p.bind(lhs, rhs, dimension_numbers=dimension_numbers, **params)


padded_rules.define(_dot_general, dot_general_p, per_axis=True)
