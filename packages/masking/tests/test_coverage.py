"""Coverage: every primitive of core's catalog has a masking rule or a documented
"not supported: why" entry."""

import plait_masking
from plait_core import all_primitives
from plait_masking import masking_rules


def test_catalog_is_not_empty() -> None:
    names = {p.name for p in all_primitives()}
    assert {"add", "dot_general", "cond", "scan", "closed_call"} <= names


def test_every_primitive_has_a_rule() -> None:
    missing = sorted(p.name for p in masking_rules.missing())
    assert missing == [], f"plait_masking has no rule for: {', '.join(missing)}"


def test_version() -> None:
    assert plait_masking.__version__ == "0.1.0"


def test_unsupported_primitives_say_why() -> None:
    import pytest

    from plait_core.primitives.ad_helpers import custom_lin_p, invertible_lin_p

    for prim in (custom_lin_p, invertible_lin_p):
        with pytest.raises(NotImplementedError, match=rf"plait_masking does not support {prim.name}: it appears "
                                                      r"only in linearized programs"):
            masking_rules[prim]
