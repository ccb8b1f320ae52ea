"""Coverage: every primitive of core's catalog has a autodiff rule or a documented
"not supported: why" entry."""

import pytest

import plait_autodiff
from plait_autodiff import jvp_rules
from plait_core import all_primitives


def test_catalog_is_not_empty() -> None:
    names = {p.name for p in all_primitives()}
    assert {"add", "dot_general", "cond", "scan", "closed_call"} <= names


@pytest.mark.xfail(strict=True, reason="the autodiff rules land with issue #4; strict, so this fails once they do")
def test_every_primitive_has_a_rule() -> None:
    missing = sorted(p.name for p in jvp_rules.missing())
    assert missing == [], f"plait_autodiff has no rule for: {', '.join(missing)}"


def test_version() -> None:
    assert plait_autodiff.__version__ == "0.1.0"
