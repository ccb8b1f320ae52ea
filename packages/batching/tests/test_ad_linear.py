"""The linear primitives of autodiff are documented as not supported by vmap."""

from __future__ import annotations

import numpy as np
import pytest

from plait_batching import batching_rules, vmap
from plait_core.primitives.ad_helpers import custom_lin_p, invertible_lin_p


@pytest.mark.parametrize("prim", [custom_lin_p, invertible_lin_p], ids=lambda p: p.name)
def test_reason_is_recorded(prim: object) -> None:
    reason = batching_rules.unsupported_reason(prim)  # type: ignore[arg-type]
    assert reason is not None and "vmap the function before" in reason


def test_vmapped_custom_lin_names_the_reason() -> None:
    a = np.ones((3, 2), np.float32)

    def f(x: object) -> object:
        return custom_lin_p.bind(x, x, num_res=1, bwd=None, out_avals=(), in_nonzeros=(True,))

    with pytest.raises(NotImplementedError, match=r"batching does not support custom_lin: it is the linear map"):
        vmap(f)(a)
