"""Name stacks recorded by staging (``eqn.source_info.name_stack``), as JAX's:
the names pushed around an operation, relative to the stack staging began
under; none outside any scope."""

from __future__ import annotations

import pytest

from plait_core import numpy as pnp
from plait_core.source_info import (
    NO_SOURCE_INFO,
    NameStack,
    current_name_stack,
    extend_name_stack,
    new_name_stack,
    set_name_stack,
)
from plait_core.staging import make_jaxpr


def _names(closed: object) -> list[tuple[str, str]]:
    return [(e.primitive.name, str(e.source_info.name_stack)) for e in closed.jaxpr.eqns]  # type: ignore[attr-defined]


def _f(x: object) -> object:
    with extend_name_stack("inner"):
        y = pnp.sin(x)
        with extend_name_stack("deeper"):
            y = y * 2
    return pnp.cos(y)


def test_equations_carry_the_names_they_were_staged_under() -> None:
    assert _names(make_jaxpr(_f)(1.0)) == [("sin", "inner"), ("mul", "inner/deeper"), ("cos", "")]
    assert make_jaxpr(_f)(1.0).jaxpr.eqns[-1].source_info is NO_SOURCE_INFO


def test_names_are_relative_to_where_staging_began() -> None:
    with extend_name_stack("outer"):
        assert str(current_name_stack()) == "outer"
        assert _names(make_jaxpr(_f)(1.0)) == [("sin", "inner"), ("mul", "inner/deeper"), ("cos", "")]
    assert current_name_stack() == NameStack()


def test_name_stack_changes_last_for_their_block() -> None:
    with new_name_stack("a") as stack:
        assert stack == NameStack(("a",)) and str(current_name_stack()) == "a"
        with set_name_stack(NameStack(("x", "y"))):
            assert str(current_name_stack()) == "x/y"
        assert str(current_name_stack()) == "a"
    assert str(current_name_stack()) == ""
    with pytest.raises(TypeError, match="set_name_stack takes a NameStack, got str"), set_name_stack("a/b"):  # type: ignore[arg-type]
        pass
