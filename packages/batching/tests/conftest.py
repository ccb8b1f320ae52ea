"""Every pile test (the modules ``test_pile*``) runs under each layout of a
pile's values inside ``vmap``: ``auto`` (plait's choice), ``packed`` and
``padded`` forced (see :mod:`plait_batching.packed`), with the same oracle,
so the layouts give identical results.  ``PLAIT_PILE_TEST_LAYOUTS`` (a
comma-separated list) narrows the layouts run."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from plait_batching import pile_layout

LAYOUTS = tuple(os.environ.get("PLAIT_PILE_TEST_LAYOUTS", "auto,packed,padded").split(","))


@pytest.fixture(autouse=True)
def layout_of_piles(request: pytest.FixtureRequest) -> Iterator[str]:
    """The layout piles use in this test (``auto`` outside the pile modules)."""
    layout = getattr(request, "param", "auto")
    with pile_layout(layout):
        yield layout


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rpartition(".")[2].startswith("test_pile"):
        metafunc.parametrize("layout_of_piles", LAYOUTS, indirect=True)
