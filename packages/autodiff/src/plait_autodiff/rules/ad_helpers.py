"""Rules of the AD helper primitives: ``stop_gradient`` (zero derivative),
``add_any`` (linear: the cotangent flows to both operands) and ``zeros_like``
(its output does not depend on its input)."""

from __future__ import annotations

from typing import Any

from plait_autodiff.registries import transpose_rules
from plait_autodiff.rules.common import def_transpose, defjvp_zero, deflinear
from plait_core.primitives import ad_helpers as ad

defjvp_zero(ad.stop_gradient_p)
defjvp_zero(ad.zeros_like_p)
deflinear(ad.add_any_p, lambda ct, x, y: [ct, ct])


@def_transpose(ad.zeros_like_p)
def _zeros_like_transpose(ct: Any, x: Any) -> list[Any]:
    return [None]


transpose_rules.not_supported(
    ad.stop_gradient_p,
    "stop_gradient has a zero derivative, so it never takes a linear input in a linearized program",
)
