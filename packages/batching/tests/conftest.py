"""Every pile test (the modules ``test_pile*``) runs in four modes with the
same oracle: under each layout of a pile's values inside ``vmap`` (``auto``,
plait's choice; ``packed`` and ``padded`` forced, see
:mod:`plait_batching.packed`), and ``buckets``: the automatic layout with
every pile built from concrete lengths carrying them statically
(:func:`plait_batching.pile.pile_static_lengths`), so ``vmap`` computes it in
buckets of similar lengths (:mod:`plait_batching.buckets`); ``plan``: the
same with only a coarse plan of buckets static (``static_lengths="plan"``,
:mod:`plait_batching.length_plan`: the lengths stay values and the elements
are sorted while running); and ``stored``,
``stored-packed``, ``stored-padded``: the piles that ``Pile.from_arrays``
builds stored packed (:func:`plait_batching.storage.pile_storage`; piles of
several ragged axes stay padded), under the automatic layout and each forced
one.  The modes give identical results.  ``PLAIT_PILE_TEST_LAYOUTS`` (a comma-separated list)
narrows the modes run.

Under the automatic layout (``auto``, ``stored``) the piles keep the
library's defaults of what is static (``Pile.from_arrays`` without
``pad_to`` or ``capacity`` gives a plan); under a forced layout they are
whole piles (``static_lengths=False``), so that the layout's rules see them.

A test marked ``whole_pile`` (with its reason) asserts on the program a
whole pile gives (equation counts, the layout chosen, how often a rule is
traced), which buckets legitimately change: it is skipped in the ``buckets``
and ``plan`` modes, and runs with whole piles in the others."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from plait_batching import pile_layout
from plait_batching.pile import pile_static_lengths
from plait_batching.storage import pile_storage

MODES = ("auto", "packed", "padded", "buckets", "plan", "stored", "stored-packed", "stored-padded")
LAYOUTS = tuple(os.environ.get("PLAIT_PILE_TEST_LAYOUTS", ",".join(MODES)).split(","))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "whole_pile(reason): asserts on a whole pile's program; whole piles, skipped in the bucket modes"
    )


@pytest.fixture(autouse=True)
def layout_of_piles(request: pytest.FixtureRequest) -> Iterator[str]:
    """The mode of piles in this test (``auto`` outside the pile modules)."""
    mode = getattr(request, "param", "auto")
    if mode not in MODES:
        raise ValueError(
            f"PLAIT_PILE_TEST_LAYOUTS: unknown mode {mode!r}, expected some of {', '.join(MODES)}"
        )
    marker = request.node.get_closest_marker("whole_pile")
    whole = marker is not None
    if marker is not None and mode in ("buckets", "plan"):
        pytest.skip(f"whole_pile: {marker.kwargs.get('reason', marker.args[0] if marker.args else '')}")
    stored = mode.startswith("stored")
    layout = mode.partition("-")[2] or "auto" if stored else "auto" if mode in ("buckets", "plan") else mode
    # What is static: the library's defaults under the automatic layout (so ``from_arrays`` piles get plans),
    # unless the test asserts on a whole pile's program; whole piles under a forced layout.
    static: bool | str | None = (
        "plan" if mode == "plan" else True if mode == "buckets" else None if layout == "auto" and not whole else False
    )
    with pile_layout(layout), pile_static_lengths(static), pile_storage("packed" if stored else "padded"):
        yield mode


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rpartition(".")[2].startswith("test_pile"):
        metafunc.parametrize("layout_of_piles", LAYOUTS, indirect=True)
