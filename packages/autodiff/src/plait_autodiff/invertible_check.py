"""How far the values an invertible function's backward pass rebuilds drift
from the forward values (inverses can amplify rounding: a block that adds a
large value and subtracts it again loses the small one).

:func:`drift` evaluates the body forwards, remembering every value, rebuilds
from the outputs exactly as the backward pass does (the same kept
arguments), and compares: the largest absolute difference over the largest
magnitude of the forward value, per rebuilt argument and per block (a call
in the body: ``jit``, ``custom_ivjp``, a nested ``invertible``).
:func:`check_drift` is what ``invertible(f, check=...)`` runs when it is
differentiated: the drift is computed where the values are (eagerly, or in
the program ``jit`` compiles) and reported by a host callback, so the
warning comes when the program runs.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_autodiff.invertible import reconstruct
from plait_core import ClosedJaxpr, Literal, Var, dtypes
from plait_core.dce import dce_jaxpr
from plait_core.host_callbacks import debug_callback
from plait_core.invertible import DriftCheck, InvertibleDriftWarning
from plait_core.jaxpr import literal_value
from plait_core.primitives.calls import CALL_PRIMITIVES

__all__ = ["check_drift", "drift"]


def _relative_error(rebuilt: Any, forward: Any) -> Any:
    a = pnp.asarray(rebuilt).astype(np.float32)
    b = pnp.asarray(forward).astype(np.float32)
    scale = pnp.maximum(pnp.max(pnp.abs(b)), np.float32(np.finfo(np.float32).tiny))
    return pnp.max(pnp.abs(a - b)) / scale


def _block_name(k: int, eqn: Any) -> str:
    name = eqn.params.get("name") or getattr(eqn.params.get("ivjp"), "name", None) or ""
    return f"equation {k}: {eqn.primitive.name} {name}".rstrip()


def drift(
    closed: ClosedJaxpr, name: str, known: Sequence[bool], operands: Sequence[Any]
) -> tuple[list[Any], dict[str, Any]]:
    """Relative errors of the rebuilt arguments (``None`` for kept and
    non-float ones) and of each block's rebuilt inputs."""
    jaxpr, _ = dce_jaxpr(closed.jaxpr)
    forward: dict[Var, Any] = dict(zip(jaxpr.constvars, closed.consts))
    forward.update(zip(jaxpr.invars, operands))

    def read(a: Any) -> Any:
        return literal_value(a) if type(a) is Literal else forward[a]

    for eqn in jaxpr.eqns:
        out = eqn.primitive.bind(*[read(a) for a in eqn.invars], **eqn.params)
        forward.update(zip(eqn.outvars, out if eqn.primitive.multiple_results else [out]))
    ys = [read(a) for a in jaxpr.outvars]
    record: dict[Var, Any] = {}
    inputs = [x if k else None for x, k in zip(operands, known)]
    reconstruct(ClosedJaxpr(jaxpr, closed.consts), inputs, ys, None, name, record)
    stored = {v for v, k in zip(jaxpr.invars, known) if k} | set(jaxpr.constvars)

    def error_of(v: Any) -> Any:
        return _relative_error(record[v], forward[v])

    def is_rebuilt(a: Any) -> bool:
        return type(a) is Var and a not in stored and a in record and dtypes.is_inexact(a.aval.dtype)

    per_arg = [error_of(v) if is_rebuilt(v) else None for v in jaxpr.invars]
    per_block: dict[str, Any] = {}
    for k, eqn in enumerate(jaxpr.eqns):
        rebuilt = [a for a in dict.fromkeys(eqn.invars) if is_rebuilt(a)]
        if eqn.primitive in CALL_PRIMITIVES and rebuilt:
            errors = [error_of(a) for a in rebuilt]
            worst = errors[0]
            for e in errors[1:]:
                worst = pnp.maximum(worst, e)
            per_block[_block_name(k, eqn)] = worst
    return per_arg, per_block


def check_drift(
    closed: ClosedJaxpr, name: str, known: Sequence[bool], operands: Sequence[Any], num_consts: int, check: DriftCheck
) -> None:
    """Compute the drift where the operands are (eagerly, or inside the
    program being staged: ``jit``, ``vmap``) and hand it to a host callback
    that issues an :class:`InvertibleDriftWarning` listing every rebuilt
    argument and block whose relative error exceeds the tolerance."""
    per_arg, per_block = drift(closed, name, known, operands)
    args = {check.paths[i - num_consts]: e for i, e in enumerate(per_arg) if e is not None and i >= num_consts}
    if args or per_block:
        debug_callback(functools.partial(_warn_if_drifting, name, check.tol), args, per_block)


def _warn_if_drifting(name: str, tol: float, args: dict[str, Any], blocks: dict[str, Any]) -> None:
    found = [(what, float(np.max(e))) for what, e in (*args.items(), *blocks.items())]
    bad = [(what, e) for what, e in found if not e <= tol]
    if bad:
        listed = "; ".join(f"{what}: {e:.3g}" for what, e in bad)
        warnings.warn(
            f"invertible function {name}: values rebuilt from its outputs drift from the forward values by more "
            f"than the relative tolerance {tol:g} ({listed}); its inverse amplifies rounding, so store these "
            "values instead (differentiate this part without invertible, or checkpoint it)",
            InvertibleDriftWarning,
            stacklevel=2,
        )
