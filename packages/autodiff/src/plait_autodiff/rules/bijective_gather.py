"""JVP and transpose of ``bijective_gather``: it is linear in its operand, its
tangent is zero at the result's invalid positions (the ``masked=True``
primitive on the tangent), and its transpose is the inverse gather with the
operand's invalid positions zeroed (the same primitive, its two gathers
swapped): a gather, not a ``scatter_add``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_autodiff.registries import jvp_rules
from plait_autodiff.rules.common import def_transpose, linear_only_in
from plait_autodiff.tangents import Zero
from plait_core.primitives.bijective_gather import bijective_gather_p, inverse_params


def _jvp(primals: Sequence[Any], tangents: Sequence[Any], **params: Any) -> tuple[Any, Any]:
    ans = bijective_gather_p.bind(*primals, **params)
    t = tangents[0]
    if type(t) is Zero:
        return ans, Zero.from_primal_value(ans)
    return ans, bijective_gather_p.bind(t, *primals[1:], **dict(params, masked=True))


jvp_rules[bijective_gather_p] = _jvp


@def_transpose(bijective_gather_p)
def _transpose(ct: Any, operand: Any, indices: Any, valid: Any, inverse: Any, inverse_valid: Any,
               **params: Any) -> list[Any]:  # fmt: skip
    linear_only_in(bijective_gather_p, (operand, indices, valid, inverse, inverse_valid), (0,))
    back = bijective_gather_p.bind(ct, inverse, inverse_valid, indices, valid, **inverse_params(params))
    return [back, None, None, None, None]
