"""Comparing two outcomes: structure, shapes, dtypes, weak types, values.

Tolerances are relative to the result's own scale (``rtol`` of the largest
finite magnitude in it, at least 1), with NaN equal to NaN and infinities
compared exactly.  ``slack`` widens the bound elementwise where the oracle
knows its own answer is ill-conditioned (the NumPy oracle passes the gap
between its float64 and its float32 runs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .modes import Outcome
from .program import Program


@dataclass(frozen=True)
class Checks:
    """Which properties a comparison looks at (dtypes and weak types are switchable)."""

    dtypes: bool = True
    weak_types: bool = True


HALF = ("float16", "bfloat16")


def rtol_for(dtype: str) -> float:
    return 1e-2 if dtype in HALF else 1e-3


def program_rtol(program: Program) -> float:
    """The tolerance every result of ``program`` gets at least: a value that went through a half-precision
    dtype (an input or an ``astype``) is no more precise than that dtype, whatever its own dtype."""
    half = any(v.dtype in HALF for v in program.inputs) or any(h in s.expr for s in program.stmts for h in HALF)
    return rtol_for("float16") if half else 0.0


def values_close(got: np.ndarray, want: np.ndarray, rtol: float, slack: np.ndarray | float = 0.0) -> str | None:
    """None when close, else a one-line description of the worst element."""
    g = np.asarray(got)
    w = np.asarray(want)
    if g.dtype.kind not in "biufc" or w.dtype.kind not in "biufc":
        return None if g.dtype == w.dtype else f"incomparable dtypes {g.dtype} and {w.dtype}"
    g = g.astype(np.float64)
    w = w.astype(np.float64)
    if g.shape != w.shape:
        return f"shapes {g.shape} and {w.shape}"
    both_nan = np.isnan(g) & np.isnan(w)
    finite_w = w[np.isfinite(w)]
    scale = max(1.0, float(np.max(np.abs(finite_w)))) if finite_w.size else 1.0
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(g - w)
        bound = rtol * scale + rtol * np.abs(w) + slack
        same_inf = np.isinf(g) & (g == w)
        ok = both_nan | same_inf | (err <= bound)
    if np.all(ok):
        return None
    bad = np.argwhere(~ok)[0]
    at = tuple(int(i) for i in bad)
    return f"values differ at {at}: got {g[at]!r}, want {w[at]!r} ({int(np.sum(~ok))} of {ok.size} elements)"


def compare(
    got: Outcome, want: Outcome, checks: Checks, slack: list[np.ndarray] | None = None, rtol_floor: float = 0.0
) -> str | None:
    """None when ``got`` matches ``want``, else what differs (the first difference).  Values get the
    tolerance of their dtype, at least ``rtol_floor`` (see :func:`program_rtol`)."""
    if want.status == "skip" or got.status == "skip":
        return None
    if got.status == "error" or want.status == "error":
        if got.status == want.status:
            if want.error_base and got.error_classes and want.error_base not in got.error_classes:
                return f"error class: raises {got.error}, the oracle a {want.error_base} ({want.error})"
            return None
        if got.status == "error":
            return f"error where the oracle computes a value: {got.error}"
        return f"a value where the oracle raises: {want.error}"
    if len(got.values) != len(want.values):
        return f"{len(got.values)} outputs, oracle has {len(want.values)}"
    for k, (g, w) in enumerate(zip(got.values, want.values)):
        where = f"output {k}: " if len(got.values) > 1 else ""
        if g.shape != w.shape:
            return f"{where}shape {g.shape}, oracle {w.shape}"
        if checks.dtypes and got.dtypes[k] != want.dtypes[k]:
            return f"{where}dtype {got.dtypes[k]}, oracle {want.dtypes[k]}"
        gw, ww = got.weak[k], want.weak[k]
        if checks.weak_types and gw is not None and ww is not None and gw != ww:
            return f"{where}weak_type {gw}, oracle {ww} (dtype {got.dtypes[k]})"
        rtol = max(rtol_for(got.dtypes[k]), rtol_floor)
        diff = values_close(g, w, rtol, 0.0 if slack is None else slack[k])
        if diff is not None:
            return where + diff
    return None
