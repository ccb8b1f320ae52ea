"""``Trace.main``: a trace's identity shared by its tracers (JAX's trace tag; equinox's
filter_jvp tells its own JVP tracers apart with ``x._trace.main is main``) (issue 25)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core as pc
from plait_core.trace import Tracer, current_trace


def test_tracers_of_one_trace_share_its_main_and_nested_traces_differ() -> None:
    seen: dict[str, Any] = {}

    def inner(y: Any, x: Any) -> Any:
        seen["inner"] = current_trace().main
        assert isinstance(y, Tracer) and y._trace.main is seen["inner"]
        assert x._trace.main is not seen["inner"]
        return y + x

    def outer(x: Any) -> Any:
        seen["outer"] = current_trace().main
        assert isinstance(x, Tracer) and x._trace.main is seen["outer"]
        z = x * 2
        assert z._trace.main is x._trace.main
        pc.make_jaxpr(lambda y: inner(y, x))(np.float32(1))
        return z

    pc.make_jaxpr(outer)(np.float32(1))
    assert seen["inner"] is not seen["outer"]
