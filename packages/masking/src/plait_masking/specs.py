"""Polymorphic shape specs: the strings ``mask`` and ``shapecheck`` read.

A spec is a comma-separated tuple of dimensions, parentheses optional for a
single one: ``'n'``, ``'(m, n)'``, ``'(n + 1, 3)'``, ``'2 * n'``,
``'m * n - 1'``.  Each dimension is an integer polynomial in named sizes
(``+ - *``, integer constants, parentheses; anything
:func:`plait_core.dims.parse_dim` reads), ``'_'`` is a dimension of any size
that is not tracked, and ``''`` (or ``'()'``) is a scalar.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final, TypeAlias

from plait_core.dims import Dim, SymbolicDim, free_names, parse_dim

__all__ = ["WILDCARD", "SpecDim", "Wildcard", "parse_spec", "spec_names", "spec_str"]


class Wildcard:
    """The ``'_'`` dimension: any size, not tracked (one object, :data:`WILDCARD`)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "_"


WILDCARD: Final = Wildcard()

SpecDim: TypeAlias = Dim | Wildcard
"""A dimension of a parsed spec: a polynomial (or int), or :data:`WILDCARD`."""


def _outer_parens_wrap(text: str) -> bool:
    """Whether ``text`` is ``( ... )`` with the first parenthesis closing at the end."""
    if not (text.startswith("(") and text.endswith(")")):
        return False
    depth = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
            if depth == 0:
                return i == len(text) - 1
    return False


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    start = 0
    for i, ch in enumerate(text):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def parse_spec(spec: str) -> tuple[SpecDim, ...]:
    """The dimensions a polymorphic shape spec names.

    ``parse_spec('(n + 1, 3)')`` is ``(n + 1, 3)`` with ``n`` a
    :class:`~plait_core.dims.SymbolicDim`; ``'_'`` entries become
    :data:`WILDCARD`; ``''`` is ``()``.  Raises ``TypeError`` for a spec that
    is not a string and ``ValueError`` (quoting the spec) for malformed text
    or a negative constant dimension."""
    if not isinstance(spec, str):
        raise TypeError(f"a shape spec must be a string such as '(n, 3)', got {type(spec).__name__} {spec!r}")
    text = spec.strip()
    if _outer_parens_wrap(text):
        inner = text[1:-1].strip()
        parts = _split_top_level(inner) if inner else []
        if len(parts) == 1 and not parts[0].strip():
            parts = []
    else:
        parts = _split_top_level(text) if text else []
    if len(parts) > 1 and not parts[-1].strip():
        parts = parts[:-1]  # a trailing comma: '(n,)'
    dims: list[SpecDim] = []
    for k, part in enumerate(parts):
        piece = part.strip()
        if not piece:
            raise ValueError(f"cannot parse the shape spec {spec!r}: dimension {k} is empty")
        if piece == "_":
            dims.append(WILDCARD)
            continue
        try:
            d = parse_dim(piece)
        except ValueError as e:
            raise ValueError(f"cannot parse the shape spec {spec!r}: {e}") from None
        except TypeError as e:  # an inexact division such as 'n // 2'
            raise ValueError(f"cannot parse the shape spec {spec!r}: {e}") from None
        if type(d) is int and d < 0:
            raise ValueError(f"the shape spec {spec!r} has the negative dimension {d} at position {k}")
        if isinstance(d, SymbolicDim) and d.is_constant:
            d = d.constant_term
        dims.append(d)
    return tuple(dims)


def spec_names(specs: Iterable[tuple[SpecDim, ...]]) -> list[str]:
    """The size names the parsed specs mention, sorted."""
    names: set[str] = set()
    for spec in specs:
        for d in spec:
            if not isinstance(d, Wildcard):
                names |= free_names(d)
    return sorted(names)


def spec_str(spec: tuple[SpecDim, ...] | tuple[Dim, ...]) -> str:
    """A parsed spec (or a shape) written as a tuple: ``(n, 3)``, ``(2*n,)``."""
    inner = ", ".join(str(d) for d in spec)
    return f"({inner},)" if len(spec) == 1 else f"({inner})"
