"""Batching rules of the matrix factorisations (``cholesky``,
``triangular_solve``, ``lu``, ``qr``, ``eigh``, ``svd``, ``eig``).

Every factorisation maps over the leading dimensions of its operands, so the
vmapped batch dimension is moved to the front (an unbatched operand of
``triangular_solve`` is broadcast there) and becomes one more leading batch
dimension; every result is batched at 0.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_batching.moves import BDim, to_front
from plait_batching.registries import batching_rules
from plait_batching.trace import AxisData
from plait_core import Primitive
from plait_core.primitives import factorizations as fz


def _leading_batch_rule(prim: Primitive) -> Any:
    def rule(axis: AxisData, args: Sequence[Any], dims: Sequence[BDim], /, **params: Any) -> tuple[Any, Any]:
        vals = [to_front(x, d, axis.size) for x, d in zip(args, dims)]
        out = prim.bind(*vals, **params)
        if prim.multiple_results:
            return list(out), [0] * len(out)
        return out, 0

    return rule


FACTORIZATIONS = (fz.cholesky_p, fz.triangular_solve_p, fz.lu_p, fz.qr_p, fz.eigh_p, fz.svd_p, fz.eig_p)

for _prim in FACTORIZATIONS:
    batching_rules[_prim] = _leading_batch_rule(_prim)
