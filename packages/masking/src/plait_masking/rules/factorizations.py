"""Matrix factorisations under ``mask``: the padded data is factorised as it
is when only leading (stacked) axes have symbolic sizes — each logical
matrix is factorised on its own, and what the padding matrices give lies in
the padding of the result.

A matrix axis (one of the last two of an operand) of symbolic size is not
supported (``NotImplementedError``, saying so): the padding would enter the
factorisation of every matrix (the Cholesky factor, LU, QR, eigen- or
singular vectors of a padded matrix are not the padded factors of the
logical one), and LAPACK has no masked kernels.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plait_core import Primitive, ShapedArray
from plait_core.primitives import factorizations as fz
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules


def _stack_axes_only(prim: Primitive) -> Any:
    def rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], **params: Any) -> Any:
        for a in avals:
            ragged = [d for d in a.shape[-2:] if is_ragged(d)]
            if ragged:
                raise NotImplementedError(
                    f"mask: {prim.name} of {a.str_short()} is not supported: its matrix axis has the symbolic "
                    f"size {ragged[0]}, and the padding would enter the factorisation of every matrix; only "
                    "leading (stacked) axes may be masked"
                )
        return prim.bind(*vals, **params)

    rule.__name__ = f"{prim.name}_masking_rule"
    return rule


for _prim in (fz.cholesky_p, fz.triangular_solve_p, fz.lu_p, fz.qr_p, fz.eigh_p, fz.svd_p, fz.eig_p):
    masking_rules[_prim] = _stack_axes_only(_prim)
