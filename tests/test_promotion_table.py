"""Dtype promotion and weak types against JAX 0.10.2, case by case.

The cases (``tests/promotion_cases.py``): every binary operator (``numpy``
and ``lax``) over every pair of dtypes and weakly typed Python scalars, unary
functions (``numpy``, ``nn``, ``lax``), reductions and ``.at[]`` updates over
every dtype and weak kind, with x64 off and on (about 18,600 cases).
JAX's results come from a fresh run of ``tools/record_promotion_table.py``
when ``PLAIT_JAX_PYTHON`` names an interpreter that imports JAX 0.10.2, and
otherwise from the table it recorded (``tests/data/promotion_table.json``).

Every case is checked staged (``eval_shape``); a fixed sample of them also
eagerly, where the XLA backend compiles each operation (set
``PLAIT_PROMOTION_EAGER=all`` to run every case eagerly, which takes minutes).

:data:`DEVIATIONS` lists, in this one place, the cases where plait knowingly
differs from JAX, what it gives instead (asserted too) and why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path

import promotion_cases as pc
import pytest

import plait

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "data" / "promotion_table.json"
RECORDER = HERE.parent / "tools" / "record_promotion_table.py"

#: Where plait knowingly differs from JAX: a pattern over case names (the
#: first that matches applies), what plait gives there, and why.  The result
#: is a literal, ``"computes"`` (JAX's result where JAX computes one; where
#: JAX raises ``TypeError``, plait may compute a value) or ``"unmatched"``
#: (not matched yet: not compared, but each such entry must still differ
#: somewhere, so that it is removed once fixed).
DEVIATIONS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"^rfft\((float16|bfloat16)\)"), "complex64",
     "plait's rfft takes half-precision input, in complex64 as JAX's fft does; JAX 0.10.2's rfft raises "
     "ValueError (float32 or float64 only)"),
    (re.compile(r"^kron\(bool"), "computes",
     "plait's kron of booleans is their logical product, as its outer (and JAX's outer) is; JAX 0.10.2's kron "
     "raises TypeError (its mul rejects bool)"),
    (re.compile(r"^interp\(bfloat16\)"), "bfloat16",
     "JAX 0.10.2 fails inside its own dtype logic (NumPy's finfo of bfloat16: ValueError); plait interpolates "
     "in bfloat16"),
    (re.compile(r"^(lax\.)?(arctan2|atan2)\(.*complex"), "!TypeError",
     "atan2 is real-only in plait; JAX also accepts complex operands"),
    (re.compile(r"^(argmax|argmin|lax\.(cummax|reduce_max|reduce_min|argmax))\(\w*complex"),
     "!TypeError",
     "plait's ordering primitives reject complex numbers (they have no natural order); JAX's lax orders them "
     "lexicographically (numpy's max/min/ptp of complex are lexicographic in plait too)"),
    (re.compile(r"^lax\.(max\(complex\w*,complex|cummax\(bool)"), "computes",
     "plait's lax.max orders complex numbers lexicographically (as numpy.maximum does) and cummax takes "
     "booleans; JAX's lax rejects both"),
    (re.compile(r"^(logaddexp2?\(.*complex|nn\.(softplus|softmax|log_softmax|log_sigmoid)\(\w*complex)"),
     "unmatched",
     "complex logaddexp and the nn functions built on it: JAX computes them (typing weak complex results "
     "strongly); plait's logaddexp is real-only and its softmax family rejects complex inputs"),
    (re.compile(r"^nn\.hard_tanh\(uint"), "!OverflowError",
     "plait refuses a Python int that does not fit the unsigned dtype it meets (hard_tanh's -1); JAX wraps "
     "it around"),
    (re.compile(r"^sum\(u?int[124]\b"), "unmatched",
     "sums of the narrow integers: JAX 0.10.2 fails inside its own dtype logic (numpy.iinfo of an ml_dtypes "
     "type: ValueError); plait sums them as the other small integers (in the default integer)"),
    (re.compile(r"^abs\(int[124]\)"), "unmatched",
     "abs of the narrow signed integers: JAX 0.10.2 rejects int2/int4 (TypeError) and gives int8 for int1; "
     "plait keeps the dtype, as for every other signed integer"),
    (re.compile(r"^angle\("), "unmatched",
     "numpy.angle computes integers in the default float (float64 with x64, JAX: float32) and keeps a "
     "Python scalar's weak type (JAX: strong)"),
]


@cache
def jax_table() -> dict[str, dict[str, str]]:
    """JAX's results by section (``x64_off``, ``x64_on``) and case name."""
    python = os.environ.get("PLAIT_JAX_PYTHON")
    if python:
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"promotion_table_{os.getpid()}.json"
        subprocess.run([python, str(RECORDER), str(out)], check=True, timeout=1800)  # ~27k cases per section
        recorded = json.loads(out.read_text())
        out.unlink()
    else:
        recorded = json.loads(RECORDED.read_text())
    assert recorded["jax_version"] == "0.10.2", recorded["jax_version"]
    return {key: pc.from_ops(plait, recorded[key]) for key in ("x64_off", "x64_on")}


def expected(name: str, jax_result: str) -> str:
    """JAX's result, or plait's documented deviation from it."""
    for pattern, result, _ in DEVIATIONS:
        if pattern.search(name):
            if result == "computes":
                return "computes" if jax_result == "!TypeError" else jax_result
            return result
    return jax_result


def agrees(got: str, want: str) -> bool:
    """Whether plait's result is the expected one (``"computes"``: a value or
    JAX's ``TypeError``; ``"unmatched"``: anything)."""
    if want == "unmatched":
        return True
    return got == want or (want == "computes" and (got == "!TypeError" or not got.startswith("!")))


def mismatches(section: str, staged: bool, select: object = None) -> list[str]:
    table = jax_table()[section]
    if staged and select is None:
        mine = staged_table(section)
    else:
        mine = pc.table(plait, x64=section == "x64_on", staged=staged, select=select)  # type: ignore[arg-type]
    assert set(mine) <= set(table), "cases missing from the recorded table: record it again"
    return [f"{name}: JAX {table[name]} (plait should give {expected(name, table[name])}), plait {got}"
            for name, got in mine.items() if not agrees(got, expected(name, table[name]))]


def test_the_recorded_table_has_every_case() -> None:
    names = [name for name, _, _ in pc.cases(plait)]
    assert len(names) == len(set(names))
    for section in ("x64_off", "x64_on"):
        assert set(jax_table()[section]) == set(names)


@cache
def staged_table(section: str) -> dict[str, str]:
    return pc.table(plait, x64=section == "x64_on", staged=True)


def test_every_deviation_is_used_and_differs_from_jax() -> None:
    table = jax_table()["x64_off"]
    mine = staged_table("x64_off")
    for pattern, result, _ in DEVIATIONS:
        hits = [name for name in table if pattern.search(name)]
        assert hits, pattern.pattern
        if result == "unmatched":
            assert any(mine[name] != table[name] for name in hits), f"{pattern.pattern} is matched now: remove it"
        else:
            assert any(table[name] != expected(name, table[name]) for name in hits), pattern.pattern


@pytest.mark.parametrize("section", ["x64_off", "x64_on"])
def test_staged_results_match_jax(section: str) -> None:
    bad = mismatches(section, staged=True)
    assert not bad, f"{len(bad)} differences, e.g.\n" + "\n".join(bad[:40])


#: Types XLA cannot hold (plait refuses them eagerly with why; JAX 0.10.2 fails
#: or computes 1-bit integers as booleans): their cases are checked staged only.
NOT_ON_XLA = re.compile(r"\b(int1|uint1|float6_e2m3fn|float6_e3m2fn)\b")


def _eager_sample(name: str) -> bool:
    """Every ``.at[:].set`` (eager code takes its own path there) and one case
    in 80 of the rest (a fixed, spread-out sample)."""
    if NOT_ON_XLA.search(name):
        return False
    if os.environ.get("PLAIT_PROMOTION_EAGER") == "all":
        return True
    return name.startswith("at[:].set") or hash_of(name) % 80 == 0


def hash_of(name: str) -> int:
    """A hash of a case name that is the same in every process."""
    return sum((k + 1) * ord(c) for k, c in enumerate(name))


def test_eager_results_match_jax() -> None:
    bad = mismatches("x64_off", staged=False, select=_eager_sample)
    assert not bad, f"{len(bad)} differences, e.g.\n" + "\n".join(bad[:40])


def test_the_eager_sample_is_broad() -> None:
    picked = [name for name, _, _ in pc.cases(plait) if _eager_sample(name)]
    ops = {pc.op_of(name) for name in picked}
    assert 200 <= len(picked) <= 400, len(picked)
    assert len(ops) >= 40, sorted(ops)


if __name__ == "__main__":  # pragma: no cover - a report of every difference, for debugging
    for section in ("x64_off", "x64_on"):
        print(section, *mismatches(section, staged=True), sep="\n")
    sys.exit(0)
