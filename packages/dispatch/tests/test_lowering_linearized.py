"""The linear primitives of linearized programs, lowered through their
implementations: ``custom_lin`` is an error, as when evaluated eagerly.
(``invertible_lin``, which plait-autodiff makes, is lowered in the root
``tests/test_cross_package_rules.py``.)"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from test_lowering_harness import F32, stage

from plait_core import ShapedArray
from plait_core.primitives.ad_helpers import custom_lin_p
from plait_dispatch.lowering import lower_jaxpr


def test_custom_lin_cannot_run_forwards() -> None:
    aval = ShapedArray((3,), F32)

    def linear(r: Any, t: Any) -> Any:
        return custom_lin_p.bind(r, t, num_res=1, bwd=lambda *a: a, out_avals=(aval,), in_nonzeros=(True,))

    closed = stage(linear, np.ones(3, np.float32), np.ones(3, np.float32))
    with pytest.raises(TypeError, match=r"can't apply forward-mode differentiation \(jvp\) to a custom_vjp function"):
        lower_jaxpr(closed)
