"""plait-batching: vmap, named-axis collectives, custom_vmap and ragged piles.

This package depends on plait-core alone.  Its rules for core's primitives
live in :data:`batching_rules` (see :mod:`plait_batching.registries`), keyed
by primitive and grouped by family under :mod:`plait_batching.rules`; the
coverage test walks core's catalog and names every primitive without a rule.

The public entry point is :func:`vmap`; :func:`batch_jaxpr` batches a closed
jaxpr (what the rules of higher-order primitives use).  :class:`Pile` and
:data:`pile_axis` are ragged batches and the ``in_axes``/``out_axes`` entry
that maps over them (see :mod:`plait_batching.ragged`); inside ``vmap`` a
pile's values are padded or packed, per operation (see
:mod:`plait_batching.packed` and :func:`pile_layout`).
"""

from plait_batching import packed_rules as _packed_rules
from plait_batching import rules as _rules
from plait_batching.api import vmap
from plait_batching.batch_jaxpr import batch_jaxpr
from plait_batching.packed import pile_layout
from plait_batching.pile import Pile, PileAxis, pile_axis
from plait_batching.ragged import ragged_dim
from plait_batching.registries import always_run, batching_rules, ragged_rules
from plait_batching.trace import AxisData, BatchTrace, BatchTracer
from plait_batching.vmappable import register_vmappable

__version__ = "0.1.0"

__all__ = [
    "AxisData",
    "BatchTrace",
    "BatchTracer",
    "Pile",
    "PileAxis",
    "always_run",
    "batch_jaxpr",
    "batching_rules",
    "pile_axis",
    "pile_layout",
    "ragged_dim",
    "ragged_rules",
    "register_vmappable",
    "vmap",
]
