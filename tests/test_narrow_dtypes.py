"""JAX 0.10.2's narrow ML number types in plait, value by value against JAX.

The cases (``tests/narrow_cases.py``): for each of the 17 narrow types,
conversions both ways (edge values: halfway points, subnormals, overflow,
infinities, NaN; every bit pattern of the 8-bit floats), creation, printing,
transfers, arithmetic, comparisons, reductions and a gradient through a cast,
eagerly and under ``jit``; results are compared bit for bit.  JAX's results
come from a fresh run of ``tools/record_narrow_dtypes.py`` when
``PLAIT_JAX_PYTHON`` names an interpreter with JAX 0.10.2, and otherwise from
the table it recorded (``tests/data/narrow_dtypes_0.10.2.json``).

:data:`DEVIATIONS` lists, in this one place, where plait knowingly differs
from JAX, what it gives instead (asserted too) and why.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from functools import cache
from pathlib import Path

import ml_dtypes
import narrow_cases as nc
import numpy as np
import pytest

import plait
import plait.numpy as pnp
from plait_core import dtypes

HERE = Path(__file__).resolve().parent
RECORDED = HERE / "data" / "narrow_dtypes_0.10.2.json"
RECORDER = HERE.parent / "tools" / "record_narrow_dtypes.py"

_ONE_BIT = ("int1", "uint1")
_SIX_BIT = ("float6_e2m3fn", "float6_e3m2fn")

#: Where plait knowingly differs from JAX: a pattern over case names (the
#: first that matches applies), what plait gives there (a literal result,
#: ``"computes"``: a value where JAX raises, or ``"unmatched"``: not compared,
#: but each such entry must still differ somewhere), and why.
DEVIATIONS: list[tuple[re.Pattern[str], str, str]] = [
    (re.compile(r"\((int1|uint1)\)$"), "refuses",
     "XLA cannot hold 1-bit integers (StableHLO has only the boolean i1): plait refuses them on the XLA backend "
     "with a ValueError naming the dtype; JAX 0.10.2 silently computes int1 as booleans (wrong values: 1 is "
     "out of int1's range) and fails to lower uint1"),
    (re.compile(r"^(sum|prod|jit\.sum|jit\.prod|power|jit\.power)\(u?int[24]\)$"), "computes",
     "JAX 0.10.2 fails inside its own dtype logic (numpy.iinfo of an ml_dtypes type: 'Invalid integer data type "
     "V'); plait sums and multiplies narrow integers as the other small integers"),
    (re.compile(r"^(jit\.)?abs\(int[24]\)$"), "computes",
     "JAX 0.10.2's abs rejects int2/int4 (TypeError) while it takes int8; plait's takes every signed integer"),
    (re.compile(r"^(jit\.)?sort\(u?int2\)$"), "unmatched",
     "XLA's CPU sort returns 2-bit integers unsorted (JAX 0.10.2's eager and jit results even differ); plait "
     "sorts them as 8-bit integers (test_narrow_integers_sort)"),
    (re.compile(r"^(jit\.)?(relu|argmax)\(float8_e8m0fnu\)$"), "unmatched",
     "float8_e8m0fnu has no zero (0 becomes NaN): JAX's relu (max with 0) is all NaN and its argmax starts "
     "from a NaN; plait's relu is where(x <= 0, 0, x) and its argmax finds the NaN element"),
]


def _refused(got: str) -> bool:
    return got in ("!ValueError", "!RuntimeError", "!OverflowError")


@cache
def jax_table() -> dict[str, str]:
    """JAX's result of every case."""
    python = os.environ.get("PLAIT_JAX_PYTHON")
    if python:
        out = Path(os.environ.get("TMPDIR", "/tmp")) / f"narrow_dtypes_{os.getpid()}.json"
        subprocess.run([python, str(RECORDER), str(out)], check=True, timeout=900)
        recorded = json.loads(out.read_text())
        out.unlink()
    else:
        recorded = json.loads(RECORDED.read_text())
    assert recorded["jax_version"] == "0.10.2", recorded["jax_version"]
    return dict(recorded["cases"])


@cache
def plait_table() -> dict[str, str]:
    return nc.table(plait)


def expected(name: str, jax_result: str) -> str:
    for pattern, result, _ in DEVIATIONS:
        if pattern.search(name):
            return result
    return jax_result


def agrees(got: str, want: str, jax_result: str) -> bool:
    if want == "unmatched":
        return True
    if want == "refuses":  # (or the same as JAX where XLA is not involved: iinfo, a dtype TypeError)
        return _refused(got) or got == jax_result
    if want == "computes":
        return not got.startswith("!")
    return got == want


def test_the_recorded_table_has_every_case() -> None:
    names = [name for name, _ in nc.cases(plait) if name not in nc.ABORTS_JAX]
    assert len(names) == len(set(names)) > 1000
    assert set(jax_table()) == set(names)


@pytest.mark.parametrize("group", ["float8", "float4", "float6", "int"])
def test_results_match_jax(group: str) -> None:
    table, mine = jax_table(), plait_table()
    bad = [f"{name}: JAX {table[name][:70]}, plait {got[:70]}" for name, got in mine.items()
           if name.split("(", 1)[1].startswith(group if group != "int" else ("int", "uint"))
           and not agrees(got, expected(name, table[name]), table[name])]
    assert not bad, f"{len(bad)} differences, e.g.\n" + "\n".join(bad[:40])


def test_every_deviation_is_used_and_differs() -> None:
    table, mine = jax_table(), plait_table()
    for pattern, _result, _ in DEVIATIONS:
        hits = [name for name in table if pattern.search(name)]
        assert hits, pattern.pattern
        assert any(mine[name] != table[name] for name in hits), f"{pattern.pattern} is matched now: remove it"


def test_eager_and_jit_agree() -> None:
    mine = plait_table()
    pairs = [(name, "jit." + name) for name in mine if "jit." + name in mine]
    assert len(pairs) > 150
    # (1-bit integers: eagerly, the conversion is refused before jit's trace-time TypeError of sin)
    differ = [(a, mine[a], mine[b]) for a, b in pairs if mine[a] != mine[b] and not a.endswith(("(int1)", "(uint1)"))]
    assert not differ, differ[:10]


# ---------------------------------------------------------------------------
# Conversions bit-exact against ml_dtypes, refusals, gradients, printing.


@pytest.mark.parametrize("name", [n for n in nc.NARROW if n not in _ONE_BIT + _SIX_BIT])
def test_conversion_rounds_as_ml_dtypes(name: str) -> None:
    host = np.dtype(getattr(ml_dtypes, name))
    source = nc.EDGE_FLOATS if name.startswith("float") else nc.EDGE_INTS.astype(np.float32)
    got = np.asarray(pnp.asarray(source).astype(getattr(pnp, name)))
    assert got.dtype == host
    if name.startswith("float"):
        want = source.astype(host)
        assert got.view(np.uint8).tolist() == want.view(np.uint8).tolist()
    else:  # float to integer truncates and saturates (XLA's rule), where ml_dtypes wraps
        info = ml_dtypes.iinfo(host)
        want = np.clip(np.trunc(source), int(info.min), int(info.max)).astype(np.int64)
        assert got.astype(np.int64).tolist() == want.tolist()
    back = np.asarray(plait.jit(lambda x: x.astype(pnp.float32))(pnp.asarray(got)))
    assert back.tolist() == got.astype(np.float32).tolist() or np.isnan(back).any()


@pytest.mark.parametrize("name", _SIX_BIT)
def test_six_bit_floats_are_refused_by_xla_with_why(name: str) -> None:
    t = getattr(pnp, name)
    assert str(pnp.finfo(t).max) == {"float6_e2m3fn": "7.5", "float6_e3m2fn": "28"}[name]
    with pytest.raises(RuntimeError, match=f"cannot (hold|compute with) {name} values: jaxlib 0.10.2's XLA has no primitive type"):
        pnp.zeros(3, pnp.float32).astype(t)
    # Staging needs no XLA: the type is a full plait dtype there.
    out = plait.eval_shape(lambda x: x.astype(t) * 2, plait.ShapeDtypeStruct((3,), pnp.float32))
    assert out.dtype == dtypes.NARROW_FLOATS[1 + _SIX_BIT.index(name)]


@pytest.mark.parametrize("name", _ONE_BIT)
def test_one_bit_integers_are_refused_by_xla_with_why(name: str) -> None:
    t = getattr(pnp, name)
    with pytest.raises(ValueError, match=f"cannot (hold|compute with) {name} values: StableHLO has no 1-bit"):
        pnp.asarray(np.array([1, 0], np.int32)).astype(t)
    assert (int(pnp.iinfo(t).min), int(pnp.iinfo(t).max)) == ((-1, 0) if name == "int1" else (0, 1))


def test_grad_through_a_float8_cast_is_the_identity_cotangent() -> None:
    x = pnp.asarray(np.array([0.3, 1.7, -2.2], np.float32))
    g = plait.grad(lambda v: (v.astype(pnp.float8_e4m3fn).astype(pnp.float32) * 3.0).sum())(x)
    assert g.dtype == np.float32 and np.asarray(g).tolist() == [3.0, 3.0, 3.0]
    y = plait.jit(plait.grad(lambda v: v.astype(pnp.float8_e5m2).astype(pnp.float32).sum()))(x)
    assert np.asarray(y).tolist() == [1.0, 1.0, 1.0]


def test_printing_and_scalar_types() -> None:
    x = pnp.asarray(np.array([1.0, 2.5, -0.3], np.float32)).astype(pnp.float8_e4m3fn)
    assert str(x) == "[1 2.5 -0.3125]"
    assert repr(x) == "Array([1, 2.5, -0.3125], dtype=float8_e4m3fn)"
    assert repr(pnp.arange(3, dtype=pnp.int4)) == "Array([0, 1, 2], dtype=int4)"
    assert pnp.float8_e4m3fn == np.dtype(ml_dtypes.float8_e4m3fn) and pnp.dtype(pnp.uint4).name == "uint4"
    assert pnp.issubdtype(pnp.int4, pnp.signedinteger) and pnp.issubdtype(pnp.float4_e2m1fn, pnp.floating)
    assert not pnp.issubdtype(pnp.uint2, pnp.signedinteger) and not pnp.issubdtype(pnp.int2, pnp.floating)


def test_promotion_errors_are_jax_type_promotion_errors() -> None:
    x = pnp.zeros(2, pnp.float8_e4m3fn)
    with pytest.raises(dtypes.TypePromotionError, match="no implicit promotion between float8_e4m3fn and float32"):
        x + pnp.zeros(2, pnp.float32)
    with pytest.raises(ValueError, match="between int4 and a weakly typed float"):
        pnp.zeros(2, pnp.int4) + 1.5
    assert (x + 1.5).dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert (pnp.zeros(2, pnp.int8) * x).dtype == np.dtype(ml_dtypes.float8_e4m3fn)
    assert pnp.promote_types(pnp.bool_, pnp.uint2) == np.dtype(ml_dtypes.uint2)


@pytest.mark.parametrize("name", ["int2", "uint2", "int4", "uint4"])
def test_narrow_integers_sort(name: str) -> None:
    t = getattr(pnp, name)
    x = pnp.asarray(np.array([0, 1, -1, 2, 3, -2, 1, 0], np.int32)).astype(t)
    want = sorted(np.asarray(x).astype(np.int64).tolist())
    assert np.asarray(pnp.sort(x)).astype(np.int64).tolist() == want
    assert np.asarray(plait.jit(pnp.sort)(x)).astype(np.int64).tolist() == want


def test_cumulative_sums_round_at_every_step_in_order() -> None:
    x = pnp.asarray(np.array([0.5, 1.0, 1.5, 2.0, 3.0, -0.75, 4.0, 0.25], np.float32)).astype(pnp.float4_e2m1fn)
    # 3 + 2 = 5 rounds to 4 (ties to even), 4 + 3 = 7 to 6, 6 - 1 = 5 to 4, 4 + 4 = 8 overflows to 6 (no inf)
    assert np.asarray(pnp.cumsum(x)).astype(np.float32).tolist() == [0.5, 1.5, 3.0, 4.0, 6.0, 4.0, 6.0, 6.0]
    rev = plait.lax.cumsum(x, reverse=True)
    assert np.asarray(rev).astype(np.float32).tolist()[-1] == 0.0


def test_transformations_of_float8_values_keep_the_type() -> None:
    # JAX 0.10.2 gives these exact values and dtypes (float8 tangents and cotangents of float8 inputs).
    x = pnp.asarray(np.array([0.5, 1.5, -2.0], np.float32)).astype(pnp.float8_e4m3fn)
    g = plait.grad(lambda v: (v.astype(pnp.float32) ** 2).sum())(x)
    assert g.dtype == pnp.float8_e4m3fn and np.asarray(g).astype(np.float32).tolist() == [1.0, 3.0, -4.0]
    v = plait.vmap(lambda v: v * 2)(x)
    assert v.dtype == pnp.float8_e4m3fn and np.asarray(v).astype(np.float32).tolist() == [1.0, 3.0, -4.0]
    t = plait.jvp(lambda v: v * v, (x,), (x,))[1]
    assert t.dtype == pnp.float8_e4m3fn and np.asarray(t).astype(np.float32).tolist() == [0.5, 4.5, 8.0]
