"""Primitives of automatic differentiation.

``stop_gradient``, ``add_any`` and ``zeros_like`` are elementwise, so they
pass through (core's padded rules, :mod:`plait_core.padded.structural`).  ``custom_lin`` and ``invertible_lin`` are not supported: they
exist only inside the linearized programs that reverse mode transposes (never
evaluated forwards under ``mask``), and they carry rules written for logical
values.  Differentiating a masked function (``grad(mask(f))``) or inside one
(``mask(grad(f))``) does not bind them on the masking interpreter.
"""

from __future__ import annotations

from plait_core.primitives import ad_helpers as adh
from plait_masking.registry import masking_rules

_LINEARIZED_ONLY = (
    "it appears only in linearized programs, which reverse mode transposes instead of evaluating, and its "
    "{rule} speaks of logical values that masking cannot rewrite for padded ones; differentiate the masked "
    "function (grad(mask(f))) or inside it (mask(grad(f))) instead"
)

masking_rules.not_supported(adh.custom_lin_p, _LINEARIZED_ONLY.format(rule="backward rule"))
masking_rules.not_supported(adh.invertible_lin_p, _LINEARIZED_ONLY.format(rule="reconstruction jaxpr"))
