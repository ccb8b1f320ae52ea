"""Ragged rules of the matrix factorisations.

A factorisation of a stack of matrices whose *stack* (leading) axes are
ragged runs on the padded data: each true matrix is factorised as it is, and
what the padding matrices give (possibly NaN) lies in the padding of the
result.  A ragged *matrix* axis (the last two of an operand) is refused with
a ``ValueError`` that says why: the padding would enter the factorisation of
every element (an LU or a Cholesky factor of a padded matrix is not the
padded factor of the true one), and LAPACK has no masked kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.ragged import Operand, RaggedEnv, env_of, operands, padded_rule, refuse
from plait_batching.registries import ragged_rules
from plait_batching.rules.factorizations import FACTORIZATIONS
from plait_batching.trace import BatchTrace
from plait_core import Primitive


def _stack_axes_only(env: RaggedEnv, prim: Primitive, ops: Sequence[Operand], params: dict[str, Any]) -> None:
    for o in ops:
        if any(env.is_ragged(d) for d in o.aval.shape[-2:]):
            raise refuse(
                prim,
                ops,
                env,
                "cannot factorise matrices with a ragged row or column axis: the padding would enter every "
                "element's factorisation (only the leading, stacked axes of a factorisation may be ragged)",
            )


_on_padded_data = padded_rule()


def _ragged_factorization(trace: BatchTrace, prim: Primitive, args: Sequence[Any], params: dict[str, Any]) -> Any:
    # Checked before the element types are computed (a ragged matrix size would
    # make the shape rule's comparisons inconclusive, a less helpful error).
    _stack_axes_only(env_of(trace), prim, operands(trace, prim, args), params)
    return _on_padded_data(trace, prim, args, params)


for _prim in FACTORIZATIONS:
    ragged_rules[_prim] = _ragged_factorization
