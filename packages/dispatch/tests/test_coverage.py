"""Coverage: every primitive of core's catalog has a dispatch rule or a documented
"not supported: why" entry."""

import plait_dispatch
from plait_core import all_primitives
from plait_dispatch import lowering_rules


def test_catalog_is_not_empty() -> None:
    names = {p.name for p in all_primitives()}
    assert {"add", "dot_general", "cond", "scan", "closed_call"} <= names


def test_every_primitive_has_a_rule() -> None:
    missing = sorted(p.name for p in lowering_rules.missing())
    assert missing == [], f"plait_dispatch has no rule for: {', '.join(missing)}"


def test_every_primitive_is_lowered() -> None:
    unsupported = sorted(p.name for p in all_primitives() if lowering_rules.unsupported_reason(p) is not None)
    assert unsupported == []


def test_version() -> None:
    assert plait_dispatch.__version__ == "0.1.0"


def test_jaxlib_is_the_pinned_version() -> None:
    import jaxlib

    assert jaxlib.__version__ == "0.10.2"
