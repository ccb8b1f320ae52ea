"""Reading the sizes a masked call is made at.

*Padded* sizes come from the padded inputs: each dimension linear in one
name (``n``, ``2*n``, ``n + 1``) gives that name's padded value; the other
dimensions are then checked against them.  *Logical* sizes come from
``logical_env``; when they are concrete they are checked against the padded
ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes
from plait_core.abstract import get_aval
from plait_core.dims import Dim, SymbolicDim
from plait_core.primitives import elementwise as ew
from plait_core.trace import Tracer
from plait_masking.errors import ShapeError
from plait_masking.specs import SpecDim, Wildcard, spec_str

__all__ = ["check_logical_fits", "concrete_int", "logical_sizes", "padded_sizes"]

#: Where a dimension is: (argument description, dimension index).
Where = tuple[str, int]


def _linear_in_one_name(d: SymbolicDim) -> tuple[str, int, int] | None:
    """``(name, a, b)`` when ``d`` is ``a*name + b`` with ``a > 0``."""
    a = 0
    b = 0
    name = None
    for mono, coeff in d.terms:
        if not mono:
            b = coeff
        elif len(mono) == 1 and mono[0][1] == 1 and name is None:
            name, a = mono[0][0], coeff
        else:
            return None
    if name is None or a <= 0:
        return None
    return name, a, b


def padded_sizes(
    specs: Sequence[tuple[SpecDim, ...]], shapes: Sequence[tuple[int, ...]], wheres: Sequence[str]
) -> dict[str, int]:
    """The padded value of every named size, solved from the padded shapes.

    Raises :class:`ShapeError` naming the argument and the dimension for a
    padded shape that does not fit its spec (wrong rank, a constant that
    differs, a size no whole value of the name gives) and for two arguments
    that disagree on a name (naming both dimensions and both sizes);
    ``ValueError`` for a name whose padded value no linear dimension gives
    (the specs alone cannot be solved)."""
    padded: dict[str, int] = {}
    source: dict[str, str] = {}
    deferred: list[tuple[SymbolicDim, int, str, int, tuple[SpecDim, ...], tuple[int, ...]]] = []
    for spec, shape, where in zip(specs, shapes, wheres):
        if len(spec) != len(shape):
            raise ShapeError(
                f"mask: {where} has the padded shape {tuple(shape)} of rank {len(shape)}, but its spec "
                f"{spec_str(spec)} has rank {len(spec)}"
            )
        for k, (d, size) in enumerate(zip(spec, shape)):
            if isinstance(d, Wildcard):
                continue
            if type(d) is int:
                if d != size:
                    raise ShapeError(
                        f"mask: {where} has the padded shape {tuple(shape)}, which does not fit its spec "
                        f"{spec_str(spec)}: dimension {k} must be {d}, got {size}"
                    )
                continue
            assert isinstance(d, SymbolicDim)
            lin = _linear_in_one_name(d)
            if lin is None:
                deferred.append((d, size, where, k, spec, shape))
                continue
            name, a, b = lin
            value, rem = divmod(size - b, a)
            if rem or value < 1:
                raise ShapeError(
                    f"mask: {where} has the padded shape {tuple(shape)}, which does not fit its spec "
                    f"{spec_str(spec)}: dimension {k} is {d}, which is never {size} for a whole size "
                    f"{name} >= 1"
                )
            here = f"dimension {k} ({d}) of {where}, of padded size {size},"
            if name in padded and padded[name] != value:
                raise ShapeError(
                    f"mask: the padded inputs disagree on the size {name}: {source[name]} gives "
                    f"{name} = {padded[name]} but {here} gives {name} = {value}"
                )
            padded.setdefault(name, value)
            source.setdefault(name, here)
    for d, size, where, k, spec, shape in deferred:
        missing = sorted(n for n in d.free_names() if n not in padded)
        if missing:
            raise ValueError(
                f"mask: cannot tell the padded size of {', '.join(missing)} from the inputs: dimension {k} "
                f"({d}) of {where} is not linear in one size, and no other dimension names "
                f"{' or '.join(missing)} alone; add an input whose spec does"
            )
        expected = d.evaluate(padded)
        if expected != size:
            values = ", ".join(f"{n} = {padded[n]}" for n in sorted(d.free_names()))
            raise ShapeError(
                f"mask: {where} has the padded shape {tuple(shape)}, which does not fit its spec "
                f"{spec_str(spec)}: dimension {k} is {d} = {expected} at the padded sizes ({values}), "
                f"got {size}"
            )
    return padded


def concrete_int(value: Any) -> int | None:
    """The int behind a concrete scalar, or ``None`` when it is traced."""
    while isinstance(value, Tracer):
        value = value.to_concrete_value()
        if value is None:
            return None
    arr = np.asarray(value)
    return int(arr) if arr.shape == () else None


def logical_sizes(names: Sequence[str], logical_env: Any) -> dict[str, Any]:
    """The logical sizes as integer scalars of the default int dtype.

    ``logical_env`` must map every name in ``names`` to an integer scalar: a
    Python int, a NumPy integer or integer array of shape ``()``, or a traced
    integer scalar.  Other names are ignored, so one environment can serve
    several masked functions."""
    if not isinstance(logical_env, Mapping):
        raise TypeError(
            f"mask: logical_env must be a dict from size names to sizes, got {type(logical_env).__name__}"
        )
    missing = [n for n in names if n not in logical_env]
    if missing:
        raise ValueError(
            f"mask: logical_env has no size for {', '.join(missing)} (the in_shapes name {', '.join(names)})"
        )
    dt = dtypes.default_int_dtype()
    out: dict[str, Any] = {}
    for n in names:
        v = logical_env[n]
        try:
            aval = get_aval(v, f"mask: logical_env[{n!r}]")
        except TypeError:
            raise TypeError(
                f"mask: the logical size {n} must be an integer scalar, got {type(v).__name__} {v!r}"
            ) from None
        if not dtypes.is_int(aval.dtype):
            raise TypeError(f"mask: the logical size {n} must be an integer, got {aval.str_short()}")
        if aval.shape != ():
            raise ValueError(
                f"mask: the logical size {n} must be a scalar, got {aval.str_short()}; for one size per "
                "example, vmap the masked function over logical_env"
            )
        if isinstance(v, (int, np.integer, np.ndarray)):
            out[n] = np.asarray(v, dt)
        elif aval.dtype == dt and not aval.weak_type:
            out[n] = v
        else:
            out[n] = ew.convert_element_type_p.bind(v, new_dtype=dt, weak_type=False)
    return out


def check_logical_fits(
    specs: Sequence[tuple[SpecDim, ...]],
    shapes: Sequence[tuple[int, ...]],
    wheres: Sequence[str],
    logical_env: Mapping[str, Any],
) -> None:
    """``ValueError`` naming the size or the dimension when a concrete logical
    size the specs use is below 1 or a logical dimension is larger than its
    padded size (names the specs do not use are not looked at)."""
    used: set[str] = set()
    for spec in specs:
        for d in spec:
            if isinstance(d, SymbolicDim):
                used |= d.free_names()
    known: dict[str, int] = {}
    for n, v in logical_env.items():
        if n not in used:
            continue
        c = concrete_int(v)
        if c is None:
            continue
        if c < 1:
            raise ValueError(
                f"mask: the logical size {n} = {c} must be at least 1 (symbolic sizes are positive "
                "integers, which shape rules rely on)"
            )
        known[n] = c
    for spec, shape, where in zip(specs, shapes, wheres):
        for k, (d, size) in enumerate(zip(spec, shape)):
            if not isinstance(d, SymbolicDim) or not d.free_names() <= known.keys():
                continue
            value: Dim = d.evaluate(known)
            if value > size:
                values = ", ".join(f"{n} = {known[n]}" for n in sorted(d.free_names()))
                raise ValueError(
                    f"mask: the logical size of dimension {k} ({d}) of {where} is {value} ({values}), "
                    f"larger than its padded size {size}"
                )
