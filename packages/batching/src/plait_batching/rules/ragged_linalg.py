"""Ragged rules of the linalg family.

``dot_general`` keeps ragged free and batch dimensions as they are; when it
contracts a ragged axis (``scores @ values`` in attention) the padding of
both operands along it is set to zero first, so it adds nothing to the sum
(zeroing both keeps a non-finite value in one operand's padding from making
``0 * inf``).  Contracted axes must have the same ragged size, which the
shape rule checks.  ``conv_general_dilated`` is not supported on ragged
values: its windows would slide into the padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, fill_padding, padded_rule
from plait_batching.registries import ragged_rules
from plait_core.primitives.linalg import conv_general_dilated_p, dot_general_p


def _zero_contracted(env: RaggedEnv, ops: Sequence[Operand], params: dict[str, Any]) -> list[Any]:
    lhs, rhs = ops
    (lc, rc), _ = params["dimension_numbers"]
    ragged = [(a, b) for a, b in zip(lc, rc) if env.is_ragged(lhs.aval.shape[a])]
    if not ragged:
        return [lhs.val, rhs.val]
    return [
        fill_padding(env, lhs, [a for a, _ in ragged], 0),
        fill_padding(env, rhs, [b for _, b in ragged], 0),
    ]


ragged_rules[dot_general_p] = padded_rule(prepare=_zero_contracted)
ragged_rules.not_supported(
    conv_general_dilated_p, "a convolution's windows would slide over the padding of a ragged axis"
)
