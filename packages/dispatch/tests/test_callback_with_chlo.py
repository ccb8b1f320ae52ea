"""A jitted program holding a host callback and a CHLO operation compiles (issue 25:
diffrax's diffeqsolve; the callback path parses the module in plait's MLIR context,
which lacked the chlo dialect)."""

from __future__ import annotations

from typing import Any

import numpy as np

import plait_core.numpy as pnp
from plait_core.host_callbacks import debug_callback
from plait_dispatch import effects_barrier, jit


def test_callback_next_to_next_after() -> None:
    seen: list[float] = []

    @jit
    def f(x: Any) -> Any:
        debug_callback(lambda v: seen.append(float(v)), x)
        return pnp.nextafter(x, pnp.inf)

    out = f(np.float32(1.0))
    effects_barrier()
    assert np.asarray(out) == np.nextafter(np.float32(1.0), np.float32(np.inf))
    assert seen == [1.0]
