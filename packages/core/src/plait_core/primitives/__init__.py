"""Every primitive of the language, grouped by family as in DESIGN.md §4.

Importing this package defines the whole catalog (see
:func:`plait_core.primitive.all_primitives`).
"""

from plait_core.primitives import (
    ad_helpers,
    bijective_gather,
    callbacks,
    calls,
    collectives,
    complex_numbers,
    control_flow,
    elementwise,
    factorizations,
    fft,
    linalg,
    optimization_barrier,
    reduce_window,
    reductions,
    shapes,
    sharding,
    structural,
)
