"""Every primitive of core's catalog under vmap equals a Python loop over the
batch: one or more example programs per primitive (``batching_cases.py``),
each checked with several in_axes patterns (all in front, all last, one
argument batched at a time, nested vmaps), eagerly and staged."""

from __future__ import annotations

import pytest
from batching_cases import CASES, TESTED_ELSEWHERE, Case
from batching_checks import check_against_loop, modes

from plait_core import all_primitives

PARAMS = [(c, name, levels) for c in CASES for name, levels in modes(len(c.gens))]


@pytest.mark.parametrize(("case", "mode", "levels"), PARAMS, ids=[f"{c.name}-{m}" for c, m, _ in PARAMS])
def test_vmap_matches_loop(case: Case, mode: str, levels: list[list[int | None]]) -> None:
    check_against_loop(case.fun, case.gens, levels)


def test_every_primitive_has_a_case() -> None:
    exercised = {p for c in CASES for p in c.prims} | set(TESTED_ELSEWHERE)
    missing = sorted(p.name for p in all_primitives() if p.name not in exercised)
    assert missing == [], f"no vmap test for: {', '.join(missing)}"
