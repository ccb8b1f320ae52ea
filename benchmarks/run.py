"""Run every benchmark and write ``benchmarks/RESULTS.md``.

Usage: ``python -m benchmarks.run`` (or ``nox -s bench``) from the repository
root.  JAX 0.10.2 is measured side by side when it is importable; plait
itself never imports it.  ``--only NAME ...`` runs some sections (their
names are listed by ``--list``) and prints them without writing the file
unless ``--output`` is given.  See ``benchmarks/README.md`` for what each row
measures and how to read it.
"""

from __future__ import annotations

import argparse
import datetime
import importlib
import importlib.metadata
import os
import pathlib
import platform
import re
import sys
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from benchmarks.harness import Result, fmt_seconds

RESULTS = pathlib.Path(__file__).with_name("RESULTS.md")


@dataclass
class Section:
    """A titled group of rows, or (``text``) a markdown section of its own."""

    key: str
    title: str
    rows: Callable[[Any | None], list[Result]] | None = None
    text: Callable[[Any | None], str] | None = None


def _rows(module: str, name: str) -> Callable[[Any | None], list[Result]]:
    """Rows from ``benchmarks.<module>.<name>(jax)`` (a Result, a list, or None: not measured)."""

    def rows(jax: Any | None) -> list[Result]:
        out = getattr(importlib.import_module(f"benchmarks.{module}"), name)(jax)
        if out is None:
            return []
        return out if isinstance(out, list) else [out]

    return rows


def _concat(*parts: Callable[[Any | None], list[Result]]) -> Callable[[Any | None], list[Result]]:
    return lambda jax: [r for part in parts for r in part(jax)]


def _invertible(jax: Any | None) -> str:
    return str(importlib.import_module("benchmarks.invertible").invertible_memory_section(jax))


SECTIONS = [
    Section(
        "latency",
        "Dispatch latency (per call, warm)",
        rows=_concat(
            _rows("dispatch", "bench_jit_cached_call"),
            _rows("dispatch", "bench_jit_cached_calls"),
            _rows("dispatch", "bench_eager_ops"),
            _rows("dispatch", "bench_mlp_loop"),
        ),
    ),
    Section(
        "tracing",
        "Tracing, lowering and compilation",
        rows=_concat(
            _rows("tracing", "bench_make_jaxpr_chain"),
            _rows("dispatch", "bench_trace_lower_chain"),
            _rows("compile", "compile_results"),
            _rows("compile", "sample_grid_results"),
            _rows("compile", "persistent_cache_results"),
        ),
    ),
    Section(
        "compile_corpus",
        "Compile-time corpus: every program's compilations, plait against JAX",
        text=lambda jax: str(importlib.import_module("benchmarks.compile").corpus_section(jax)),
    ),
    Section(
        "training",
        "Compiled training programs (per step or call, warm)",
        rows=_concat(_rows("dispatch", "bench_mlp_step"), _rows("training", "training_results")),
    ),
    Section(
        "piles", "Ragged batches: piles against padding and loops", rows=_rows("batching", "batching_results")
    ),
    Section("masking", "Masking: compile once for every length", rows=_rows("masking", "bench_masked_rnn")),
    Section("donation", "Memory: donation", rows=_rows("dispatch", "bench_donation_memory")),
    Section("linalg", "Linear algebra under jit (LAPACK kernels)", rows=_rows("linalg", "linalg_results")),
    Section("fft", "FFTs under jit (stablehlo.fft)", rows=_rows("fft", "fft_results")),
    Section("stack", "Stacking many small arrays", rows=_rows("stack", "bench_stack")),
    Section("invertible", "", text=_invertible),
]


# ---------------------------------------------------------------------------
# Verdicts: read from each row's target text.

_LE_JAX = re.compile(r"^≤ ([\d.]+)× JAX$")
_SELF = re.compile(r"= ([\d.]+)× \(target ([≤≥]) ([\d.]+)×\)")


def verdict(r: Result) -> str:
    """``met``/``missed`` where the target text states a checkable bound, else ``—``."""
    m = _LE_JAX.match(r.target)
    if m is not None:
        if r.ratio is None:
            return "— (no JAX)"
        return "met" if r.ratio <= float(m.group(1)) + 1e-9 else "**missed**"
    m = _SELF.search(r.target)
    if m is not None:
        value, op, bound = float(m.group(1)), m.group(2), float(m.group(3))
        return "met" if (value <= bound if op == "≤" else value >= bound) else "**missed**"
    if r.target.endswith(", NOT met"):
        return "**missed**"
    if r.target.endswith(", met"):
        return "met"
    return "—"


def table(results: list[Result], jax_label: str) -> str:
    lines = [
        f"| benchmark | plait | {jax_label} | plait / JAX | target | verdict |",
        "|---|---|---|---|---|---|",
    ]
    for r in results:
        ratio = "—" if r.ratio is None else f"{r.ratio:.2f}×"
        lines.append(
            f"| {r.name} | {fmt_seconds(r.plait)} | {fmt_seconds(r.jax)} | {ratio} | {r.target} | {verdict(r)} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The environment the numbers come from.


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> str:
    try:
        with open("/proc/meminfo") as f:
            kib = int(f.readline().split()[1])
        return f"{kib / 2**20:.0f} GiB"
    except (OSError, ValueError, IndexError):
        return "unknown"


def _load() -> str:
    try:
        return ", ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "unknown"


def environment(jax: Any | None, load_at_start: str) -> str:
    import numpy as np

    plait_version = _version("plait")
    if plait_version == "not installed":
        plait_version = "source tree (not installed)"
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            f"- Date: {date}",
            f"- Machine: {_cpu_model()}, {os.cpu_count()} logical cores, {_memory_gib()} RAM, "
            f"{platform.system()} {platform.release()} ({platform.machine()})",
            f"- Load average (1, 5, 15 min) at start: {load_at_start}; at end: {_load()}",
            f"- Python {platform.python_version()}, NumPy {np.__version__}, jaxlib {_version('jaxlib')}, "
            f"JAX {getattr(jax, '__version__', 'not installed')}, plait {plait_version}",
            "- Backend: XLA on the CPU for both (plait through jaxlib, JAX through its own runtime)",
        ]
    )


# ---------------------------------------------------------------------------


def _maybe_jax() -> Any | None:
    try:
        return importlib.import_module("jax")
    except ImportError:
        return None


def run_sections(sections: list[Section], jax: Any | None) -> tuple[list[str], list[str]]:
    """Markdown per section, and the names of the sections that failed."""
    jax_label = f"JAX {jax.__version__}" if jax is not None else "JAX (not installed)"
    parts, failed = [], []
    for s in sections:
        t = time.perf_counter()
        print(f"[bench] {s.key} ...", file=sys.stderr, flush=True)
        try:
            if s.text is not None:
                body = s.text(jax).rstrip()
            else:
                assert s.rows is not None
                results = s.rows(jax)
                body = f"## {s.title}\n\n" + (
                    table(results, jax_label) if results else "Not measured: a plait package is missing."
                )
        except Exception:
            failed.append(s.key)
            body = f"## {s.title or s.key}\n\nFAILED:\n\n```\n{traceback.format_exc()}```"
            traceback.print_exc()
        print(f"[bench] {s.key} done in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        parts.append(body)
    return parts, failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="SECTION", help="run these sections only")
    parser.add_argument("--list", action="store_true", help="list the sections and exit")
    parser.add_argument(
        "--output", type=pathlib.Path, help=f"where to write the markdown (default {RESULTS})"
    )
    args = parser.parse_args(argv)
    if args.list:
        for s in SECTIONS:
            print(s.key)
        return 0
    sections = SECTIONS
    if args.only:
        unknown = set(args.only) - {s.key for s in SECTIONS}
        if unknown:
            parser.error(f"unknown sections {sorted(unknown)}; choose from {[s.key for s in SECTIONS]}")
        sections = [s for s in SECTIONS if s.key in args.only]
    output = args.output if args.output is not None or args.only else RESULTS

    load_at_start = _load()
    started = time.perf_counter()
    jax = _maybe_jax()
    parts, failed = run_sections(sections, jax)
    minutes = (time.perf_counter() - started) / 60
    doc = (
        "# Benchmarks\n\n"
        "plait against JAX 0.10.2, side by side in one process: plait and JAX take turns repetition by "
        "repetition and each figure is the median (see `benchmarks/README.md` for what each row measures and how "
        "to read the ratios). Written by `python -m benchmarks.run` (`nox -s bench`); "
        f"this run took {minutes:.1f} min.\n\n"
        + environment(jax, load_at_start)
        + "\n\n"
        + "\n\n".join(parts)
        + "\n"
    )
    if output is not None:
        output.write_text(doc)
        print(f"[bench] wrote {output}", file=sys.stderr)
    print(doc)
    if failed:
        print(f"[bench] FAILED sections: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
