"""Coverage: every primitive of core's catalog has a batching rule or a documented
"not supported: why" entry."""

import plait_batching
from plait_batching import batching_rules
from plait_core import all_primitives


def test_catalog_is_not_empty() -> None:
    names = {p.name for p in all_primitives()}
    assert {"add", "dot_general", "cond", "scan", "closed_call"} <= names


def test_every_primitive_has_a_rule() -> None:
    missing = sorted(p.name for p in batching_rules.missing())
    assert missing == [], f"plait_batching has no rule for: {', '.join(missing)}"


def test_version() -> None:
    assert plait_batching.__version__ == "0.1.0"
