"""Run JAX-style programs in one process and report, per program, the time
its compilations took: tracing, lowering to StableHLO, XLA's compile.

``python -m plait.compat benchmarks/compile_driver.py plait PROG.py ...`` runs
them on plait (the compat hook answers ``import jax``), reading plait-dispatch's
counters (:data:`plait_dispatch.stats`); ``python benchmarks/compile_driver.py
jax PROG.py ...`` runs them on JAX, summing JAX's own duration events
(``/jax/core/compile/jaxpr_trace_duration``, ``.../jaxpr_to_mlir_module_duration``,
``.../backend_compile_duration``).  Each program runs as ``__main__`` with its
output swallowed; one line per program, starting with ``@@ ``, holds a JSON
object: name, ok, wall (seconds of the whole program), trace, lower, xla
(seconds), compiles (XLA compilations), error.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import runpy
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

_JAX_EVENTS = {
    "/jax/core/compile/jaxpr_trace_duration": "trace",
    "/jax/core/compile/jaxpr_to_mlir_module_duration": "lower",
    "/jax/core/compile/backend_compile_duration": "xla",
}


def _jax_counters() -> Callable[[], dict[str, float]]:
    """Totals of JAX's compile-duration events since this call."""
    monitoring: Any = importlib.import_module("jax.monitoring")
    totals = {"trace": 0.0, "lower": 0.0, "xla": 0.0, "compiles": 0.0}

    def listener(event: str, seconds: float, **kwargs: Any) -> None:
        key = _JAX_EVENTS.get(event)
        if key is not None:
            totals[key] += seconds
            if key == "xla":
                totals["compiles"] += 1

    monitoring.register_event_duration_secs_listener(listener)
    return lambda: dict(totals)


def _plait_counters() -> Callable[[], dict[str, float]]:
    """plait-dispatch's compile counters."""
    stats: Any = importlib.import_module("plait_dispatch").stats

    def read() -> dict[str, float]:
        s = stats.snapshot()
        return {
            "trace": s["trace_seconds"],
            "lower": s["lower_seconds"],
            "xla": s["xla_compile_seconds"],
            "compiles": s["xla_compiles"],
        }

    return read


def main(framework: str, paths: list[str]) -> None:
    """Run each program and print its report line."""
    read = _plait_counters() if framework == "plait" else _jax_counters()
    for path in paths:
        sys.path.insert(0, str(Path(path).resolve().parent))
        before = read()
        start = time.perf_counter()
        error = None
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                runpy.run_path(path, run_name="__main__")
        except BaseException as err:  # report every failure, including SystemExit
            error = "".join(traceback.format_exception_only(type(err), err)).strip()[-500:]
        wall = time.perf_counter() - start
        after = read()
        report: dict[str, Any] = {"name": Path(path).stem, "ok": error is None, "wall": wall, "error": error}
        report.update({k: after[k] - before[k] for k in after})
        print("@@ " + json.dumps(report), flush=True)
        sys.path.pop(0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
