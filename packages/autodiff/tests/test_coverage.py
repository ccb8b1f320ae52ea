"""Coverage: every primitive of core's catalog has a autodiff rule or a documented
"not supported: why" entry."""

import pytest

import plait_autodiff
from plait_autodiff import jvp_rules, transpose_rules
from plait_core import all_primitives


def test_catalog_is_not_empty() -> None:
    names = {p.name for p in all_primitives()}
    assert {"add", "dot_general", "cond", "scan", "closed_call"} <= names


def test_every_primitive_has_a_rule() -> None:
    missing = sorted(p.name for p in jvp_rules.missing())
    assert missing == [], f"plait_autodiff has no rule for: {', '.join(missing)}"


def test_every_primitive_has_a_transpose_or_says_why_not() -> None:
    missing = sorted(p.name for p in transpose_rules.missing())
    assert missing == [], f"plait_autodiff has no transpose rule nor a reason for: {', '.join(missing)}"


@pytest.mark.parametrize("registry", [jvp_rules, transpose_rules], ids=["jvp", "transpose"])
def test_unsupported_entries_explain_themselves(registry: object) -> None:
    for p in all_primitives():
        reason = registry.unsupported_reason(p)  # type: ignore[attr-defined]
        if reason is not None:
            assert (len(reason) > 30 and p.name in reason) or "linear" in reason, (p.name, reason)


def test_unsupported_rule_lookup_names_the_reason() -> None:
    from plait_core.primitives.elementwise import exp_p

    with pytest.raises(NotImplementedError, match="autodiff \\(transpose\\) does not support exp: exp is not linear"):
        transpose_rules[exp_p]


def test_version() -> None:
    assert plait_autodiff.__version__ == "0.1.0"
