"""The composition matrix (issue 7): every ordered pair and the important
triples of plait's transformations, on every program of :mod:`composition_matrix` (tests/composition_matrix.py).

A composition either equals its oracle (derived from the program's NumPy
oracle: finite differences for derivatives, a loop for ``vmap`` and piles,
logical slices for ``mask``), or is listed in one of ``composition_matrix.TABLES``
and raises exactly the error its entry documents: unsupported compositions,
known bugs (which xfail after checking their current symptom) and
compositions that compute the right values but bypass a custom rule.

The full matrix runs with core's NumPy eager backend, since op-by-op XLA
compilation of every eager operation would dominate the run; every pair is
run once more on the default (XLA) eager backend, on one program each.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import composition_matrix as M
import pytest

PROGRAMS = list(M.BASE_PROGRAMS)
COMPOSITIONS = M.PAIRS + M.TRIPLES
DOC = Path(__file__).resolve().parents[1] / "docs" / "composition_matrix.md"


def _id(comp: tuple[str, ...]) -> str:
    return ".".join(comp)


@pytest.fixture
def numpy_eager() -> Iterator[None]:
    with M.eager_backend("numpy"):
        yield


def _check(comp: tuple[str, ...], program: str) -> None:
    status, entry = M.expectation(comp, program)
    if entry is None:
        M.check_case(comp, program)
        return
    with pytest.raises(entry.error, match=entry.match):
        M.check_case(comp, program)
    if status == "bug":
        pytest.xfail(f"known bug: {entry.reason}")


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("comp", COMPOSITIONS, ids=_id)
def test_composition(comp: tuple[str, ...], program: str, numpy_eager: None) -> None:
    _check(comp, program)


XLA_CASES = [(comp, PROGRAMS[k % len(PROGRAMS)]) for k, comp in enumerate(M.PAIRS)]


@pytest.mark.parametrize(("comp", "program"), XLA_CASES, ids=[f"{_id(c)}-{p}" for c, p in XLA_CASES])
def test_pair_with_xla_eager(comp: tuple[str, ...], program: str) -> None:
    _check(comp, program)


def test_every_pair_and_triple_is_listed() -> None:
    assert len(M.PAIRS) == len(M.TRANSFORMS) ** 2 == 196
    assert len(set(M.PAIRS)) == 196
    assert all(len(t) == 3 and set(t) <= set(M.TRANSFORMS) for t in M.TRIPLES)
    assert len(set(M.TRIPLES)) == len(M.TRIPLES)


@pytest.mark.parametrize(
    ("status", "entry"),
    [(status, e) for status, table in M.TABLES for e in table],
    ids=lambda v: v.pattern if isinstance(v, M.Expectation) else str(v),
)
def test_every_table_entry_covers_a_case(status: str, entry: M.Expectation) -> None:
    covered = [
        (c, p)
        for c, p in itertools.product(COMPOSITIONS, PROGRAMS)
        if entry.applies(c, p) and M.expectation(c, p)[1] is entry
    ]
    assert covered, f"the {status} entry {entry.pattern!r} covers no composition of the matrix"


@pytest.mark.parametrize(
    ("pattern", "comp", "matches"),
    [
        ("grad", ("jit", "grad"), True),
        ("jvp", ("custom_jvp", "vmap"), False),
        ("jvp|linearize ∘ …(no grad) ∘ custom_vjp", ("jvp", "custom_vjp"), True),
        ("jvp|linearize ∘ …(no grad) ∘ custom_vjp", ("linearize", "vmap", "custom_vjp"), True),
        ("jvp|linearize ∘ …(no grad) ∘ custom_vjp", ("jvp", "grad", "custom_vjp"), False),
        ("jvp|linearize ∘ …(no grad) ∘ custom_vjp", ("custom_jvp", "custom_vjp"), False),
        ("mask ∘ … ∘ mask", ("mask", "mask"), True),
        ("mask ∘ … ∘ mask", ("mask", "jit", "mask"), True),
        ("mask ∘ … ∘ mask", ("jit", "mask"), False),
        ("grad ∘ invertible ∘ grad|mask", ("grad", "invertible", "mask"), True),
        ("grad ∘ invertible ∘ grad|mask", ("grad", "invertible", "vmap"), False),
    ],
)
def test_composition_patterns(pattern: str, comp: tuple[str, ...], matches: bool) -> None:
    assert bool(M.compile_pattern(pattern).search(M.composition_name(comp) + " ∘ ")) is matches


def _mutant(name: str, scale: float) -> M.Program:
    """The mlp program with its plait function off by a relative ``scale``."""
    base = M.BASE_PROGRAMS["mlp"]

    def fn(*args: object) -> object:
        y1, y2 = base.fn(*args)
        return y1 * scale, y2

    return replace(base, name=name, fn=fn)


@pytest.mark.parametrize(
    "comp", [("jit",), ("grad",), ("vmap", "grad"), ("jvp", "mask"), ("piles",)], ids=_id
)
def test_the_oracles_catch_a_small_error(
    comp: tuple[str, ...], numpy_eager: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    name = f"mutant_{_id(comp)}"
    monkeypatch.setitem(M.BASE_PROGRAMS, name, _mutant(name, 1.001))
    with pytest.raises(AssertionError, match="output 0"):
        M.check_case(comp, name)


def test_a_rule_that_is_not_used_is_reported(numpy_eager: None, monkeypatch: pytest.MonkeyPatch) -> None:
    # No composition of the matrix bypasses a rule any more: a program claims a
    # custom_vjp rule (inside every wrapper: depth -1) that it never runs.
    name = "claims_an_unused_rule"
    base = replace(M.BASE_PROGRAMS["elementwise"], name=name, rules=(M.RuleUse("custom_vjp", -1, [0]),))
    monkeypatch.setitem(M.BASE_PROGRAMS, name, base)
    with pytest.raises(
        M.RuleBypassed, match="the custom_vjp rule never ran although grad is applied outside it"
    ):
        M.check_case(("grad",), name)
    M.check_case(("vmap",), name)  # vmap does not use a custom_vjp rule


def test_donation_deletes_the_input() -> None:
    # check_case hands a fresh device array to an outermost donation and fails unless it is deleted.
    M.check_case(("donation", "vmap"), "mlp")
    M.check_case(("donation", "vmap"), "mlp")  # a second call with fresh inputs reuses the compilation


def test_script_prints_and_writes_the_matrix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "matrix.md"
    code = M.main(["--eager", "numpy", "--program", "cond", "--only", "grad ∘ mask", "--markdown", str(out)])
    assert code == 0
    printed = capsys.readouterr().out
    assert "grad ∘ mask ∘ checkpoint" in printed and "cases in" in printed
    text = out.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| **grad** |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[1 + list(M.TRANSFORMS).index("mask")] == "✓"
    assert "- grad ∘ mask ∘ custom_vjp: ✓\n" in text  # the rule survives mask
    assert "custom rule bypassed" not in text


def test_cells_and_notes() -> None:
    a, b, c = ("grad", "mask"), ("mask", "mask"), ("jit", "piles")
    outcomes = [
        M.Outcome(a, "mlp", "pass"),
        M.Outcome(a, "cond", "pass"),
        M.Outcome(b, "mlp", "unsupported", "nested"),
        M.Outcome(b, "cond", "unsupported", "nested"),
        M.Outcome(c, "mlp", "pass"),
        M.Outcome(c, "cond", "bypassed", "inlined"),
    ]
    marks, notes = M.cells(outcomes)
    assert marks == {a: "✓", b: "✗1", c: "✓2"}
    assert notes == ["unsupported: nested", "custom rule bypassed (on cond): inlined"]
    marks, notes = M.cells([M.Outcome(c, "mlp", "pass"), M.Outcome(c, "cond", "fail", "TypeError: boom")])
    assert marks == {c: "✓ ✗1"} and notes == ["FAILS (on cond): TypeError: boom"]


def test_the_documented_matrix_is_current() -> None:
    text = DOC.read_text(encoding="utf-8")
    for status, table in M.TABLES:
        for entry in table:
            assert entry.reason in text, (
                f"docs/composition_matrix.md lacks the {status} entry {entry.pattern!r}"
            )
    for comp in M.TRIPLES:
        assert M.composition_name(comp) in text
    for name in M.TRANSFORMS:
        assert f"| **{name}** |" in text
    assert "FAILS" not in text
