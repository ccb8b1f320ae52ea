"""``plait.named_scope`` and ``plait.named_call`` name the operations they
stage, as JAX 0.10.2 (``eqn.source_info.name_stack``; haiku's jaxpr_info
reads them), also inside a ``jit`` traced under a scope (relative names)."""

from __future__ import annotations

from typing import Any

import plait
from plait.extend import source_info_util

pnp = plait.numpy


def _names(eqns: Any) -> list[tuple[str, str]]:
    return [(e.primitive.name, str(e.source_info.name_stack)) for e in eqns]


def _f(x: Any) -> Any:
    with plait.named_scope("inner"):
        y = pnp.sin(x)
    return plait.named_call(lambda v: v * 2, name="nc")(y)


def test_named_scope_and_named_call_name_their_operations() -> None:
    assert _names(plait.make_jaxpr(_f)(1.0).eqns) == [("sin", "inner"), ("mul", "nc")]
    with plait.named_scope("outer"):
        assert _names(plait.make_jaxpr(_f)(1.0).eqns) == [("sin", "inner"), ("mul", "nc")]
    outer = plait.make_jaxpr(plait.jit(_f))(1.0)
    (call,) = outer.eqns
    assert str(call.source_info.name_stack) == ""
    inner = call.params.get("jaxpr") or call.params["call_jaxpr"]
    assert _names(inner.eqns) == [("sin", "inner"), ("mul", "nc")]


def test_extend_api_name_stack_is_the_one_staging_records() -> None:
    with source_info_util.extend_name_stack("lib"):
        assert str(source_info_util.current().name_stack) == "lib"
    assert str(source_info_util.current().name_stack) == ""
    closed = plait.make_jaxpr(_scoped_cos)(1.0)
    assert _names(closed.eqns) == [("cos", "lib")]
    assert source_info_util.summarize(closed.eqns[0].source_info) == "lib"


def _scoped_cos(x: Any) -> Any:
    with source_info_util.extend_name_stack("lib"):
        return pnp.cos(x)
