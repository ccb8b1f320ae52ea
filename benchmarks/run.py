"""Run every benchmark and write ``benchmarks/RESULTS.md``.

Usage: ``python -m benchmarks.run`` (or ``nox -s bench``).  JAX 0.10.2 is
measured side by side when it is importable; plait itself never imports it.
"""

from __future__ import annotations

import importlib
import pathlib
import platform
from typing import Any

from benchmarks.batching import batching_results
from benchmarks.dispatch import dispatch_results
from benchmarks.harness import markdown_table
from benchmarks.masking import bench_masked_rnn
from benchmarks.tracing import bench_make_jaxpr_chain


def _maybe_jax() -> Any | None:
    try:
        return importlib.import_module("jax")
    except ImportError:
        return None


def main() -> None:
    jax = _maybe_jax()
    results = [bench_make_jaxpr_chain(jax)]
    results.extend(batching_results(jax))  # empty without plait-dispatch
    results.extend(dispatch_results(jax))
    masked_rnn = bench_masked_rnn(jax)  # None without plait-dispatch
    if masked_rnn is not None:
        results.append(masked_rnn)
    table = markdown_table(results)
    table += "\n\n" + importlib.import_module("benchmarks.invertible").invertible_memory_section(jax)
    header = (
        "# Benchmarks\n\n"
        f"Machine: {platform.machine()}, Python {platform.python_version()}; "
        f"JAX: {getattr(jax, '__version__', 'not installed')}. Medians of interleaved runs.\n\n"
    )
    out = pathlib.Path(__file__).with_name("RESULTS.md")
    out.write_text(header + table + "\n")
    print(table)


if __name__ == "__main__":
    main()
