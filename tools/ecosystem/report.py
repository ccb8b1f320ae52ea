"""The table: tests passed on JAX, passed on plait, and the grouped causes of the rest.

``python -m tools.ecosystem.report RESULTS_DIR [--out FILE]`` reads the
``<library>-jax.jsonl`` / ``<library>-plait.jsonl`` pairs written by ``run``.
A library is compared on the tests both runs reached (a run bounded in time may
stop early): of those that pass on JAX, how many pass on plait.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from tools.ecosystem.causes import group
from tools.ecosystem.libraries import LIBRARIES

TOP_CAUSES = 12


@dataclass(frozen=True)
class Comparison:
    """One library's numbers over the tests both runs reached."""

    library: str
    reached: int
    jax_passed: int
    plait_passed: int
    plait_extra: int
    causes: list[tuple[str, int]]

    @property
    def rate(self) -> float:
        return self.plait_passed / self.jax_passed if self.jax_passed else 0.0


def load(path: Path) -> dict[str, dict[str, str]]:
    """Test id -> its record, from one ``run`` output."""
    records: dict[str, dict[str, str]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            rec = json.loads(line)
            records[rec["id"]] = rec
    return records


def compare(library: str, jax: dict[str, dict[str, str]], plait: dict[str, dict[str, str]]) -> Comparison:
    """Compare the two runs of ``library`` on the tests both reached.  A test module
    that plait could not even collect counts each of its tests as failed with the
    collection error (its tests have no records of their own)."""
    unimportable = {t: r for t, r in plait.items() if "::" not in t and r["outcome"] == "error"}
    plait = dict(plait)
    for t in jax:
        module = t.split("::", 1)[0]
        if t not in plait and module in unimportable:
            plait[t] = {"id": t, "outcome": "error", "error": unimportable[module]["error"]}
    both = [t for t in jax if t in plait and t != "<run>"]
    jax_ok = [t for t in both if jax[t]["outcome"] == "passed"]
    plait_ok = [t for t in jax_ok if plait[t]["outcome"] == "passed"]
    extra = sum(1 for t in both if plait[t]["outcome"] == "passed" and jax[t]["outcome"] != "passed")
    lost = [plait[t] for t in jax_ok if plait[t]["outcome"] != "passed"]
    errors = [r["error"] if r["outcome"] != "skipped" else "skipped on plait" for r in lost]
    return Comparison(library, len(both), len(jax_ok), len(plait_ok), extra, group(errors))


def markdown(comparisons: list[Comparison]) -> str:
    """The summary table and, per library, its causes."""
    lines = [
        "# The JAX ecosystem's own test suites on plait",
        "",
        "Written by `tools/ecosystem/report.py` (`nox -s ecosystem`, issue 25). Each library's tests run",
        "from its sdist (equinox's and diffrax's from their release tags: their sdists ship none), once on",
        "plait through `python -m plait.compat -m pytest` and once on JAX 0.10.2 in an environment of its",
        "own. Counted over the tests both runs reached: passed on JAX, and of those, passed on plait.",
        "",
        "| library | tests run (subset) | passed on JAX 0.10.2 | passed on plait | plait / JAX |",
        "| --- | --- | ---: | ---: | ---: |",
    ]
    for c in comparisons:
        subset = LIBRARIES[c.library].note
        lines.append(f"| {c.library} | {c.reached} ({subset}) | {c.jax_passed} | {c.plait_passed} "
                     f"| {100 * c.rate:.1f}% |")
    for c in comparisons:
        lines += ["", f"### {c.library}: the {c.jax_passed - c.plait_passed} tests passing on JAX only, by cause",
                  "", "| tests | error on plait |", "| ---: | --- |"]
        for text, n in c.causes[:TOP_CAUSES]:
            lines.append(f"| {n} | `{text.replace('|', '/')}` |")
        rest = sum(n for _, n in c.causes[TOP_CAUSES:])
        if rest:
            lines.append(f"| {rest} | ({len(c.causes) - TOP_CAUSES} other causes) |")
        if c.plait_extra:
            lines.append(f"\n({c.plait_extra} tests pass on plait and not on JAX.)")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--out", type=Path, default=None)
    parser.add_argument("--min-rate", type=float, default=None,
                        help="exit 1 when a library's plait/JAX rate is below this (0..1)")
    args = parser.parse_args(argv)
    comparisons = []
    for name in LIBRARIES:
        jax_file, plait_file = args.results / f"{name}-jax.jsonl", args.results / f"{name}-plait.jsonl"
        if jax_file.exists() and plait_file.exists():
            comparisons.append(compare(name, load(jax_file), load(plait_file)))
    text = markdown(comparisons)
    if args.out is None:
        sys.stdout.write(text)
    else:
        args.out.write_text(text, encoding="utf-8")
    if not comparisons:
        print(f"no <library>-jax.jsonl / <library>-plait.jsonl pairs in {args.results}", file=sys.stderr)
        return 1
    if args.min_rate is not None:
        low = [c for c in comparisons if c.rate < args.min_rate]
        for c in low:
            print(f"{c.library}: plait passes {c.plait_passed} of the {c.jax_passed} tests passing on JAX "
                  f"({100 * c.rate:.1f}% < {100 * args.min_rate:.0f}%)", file=sys.stderr)
        return 1 if low else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
