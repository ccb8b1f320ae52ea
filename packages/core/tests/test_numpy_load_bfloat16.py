"""``plait.numpy.load`` reads ``bfloat16`` back from ``.npy`` data (saved as 2-byte
void, which the header cannot name) as JAX 0.10.2's does (equinox's serialisation of
bfloat16 leaves); other void data stays NumPy's."""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np

import plait_core.numpy as pnp
from plait_core import dtypes
from plait_core.numpy.array_type import Array


def _saved(arr: np.ndarray) -> io.BytesIO:
    f = io.BytesIO()
    np.save(f, arr)
    f.seek(0)
    return f


def test_bfloat16_round_trips() -> None:
    out = pnp.load(_saved(np.array([1.5, -2.0, 3.25], ml_dtypes.bfloat16)))
    assert isinstance(out, Array) and out.dtype == dtypes.bfloat16
    assert np.asarray(out).astype(np.float32).tolist() == [1.5, -2.0, 3.25]
    scalar = pnp.load(_saved(np.array(ml_dtypes.bfloat16(1))))
    assert scalar.shape == () and scalar.dtype == dtypes.bfloat16 and float(scalar) == 1.0


def test_plain_and_other_void_data() -> None:
    out = pnp.load(_saved(np.arange(3, dtype=np.int32)))
    assert isinstance(out, Array) and np.asarray(out).tolist() == [0, 1, 2]
    raw = pnp.load(_saved(np.array([1.0, 2.0], ml_dtypes.float8_e4m3fn)))
    assert type(raw) is np.ndarray and raw.dtype == np.dtype("V1") and raw.tobytes() == b"\x38\x40"
