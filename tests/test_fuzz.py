"""The differential fuzzer (``tests/fuzz``): a short fixed-seed run against the
NumPy float64 oracle, and the fuzzer's own machinery (it finds a planted bug,
shrinks it, writes a repro that runs).  The long run is ``nox -s fuzz``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from fuzz.compare import Checks, compare, program_rtol
from fuzz.data import make_data
from fuzz.deviations import FLOAT64_AGREES, JIT_CHECKPOINT_AGREES, NO_DERIVATIVE, ZERO_DERIVATIVE, excuse
from fuzz.generate import generate
from fuzz.modes import ORACLE_MODES, SELF_MODES, Backend, Outcome, run_mode
from fuzz.program import Program, Stmt, Var
from fuzz.runner import PLAIT, Fuzzer, Report, second_opinion

import plait
import plait.numpy as pnp
from plait import nn

SHORT_RUN_SEEDS = range(24)


def test_short_fixed_seed_run_finds_no_failure() -> None:
    with Fuzzer(checks=Checks(dtypes=False, weak_types=False)) as fuzzer:
        report = fuzzer.run(SHORT_RUN_SEEDS)
    assert report.failures == [], report.summary()
    assert report.programs == len(SHORT_RUN_SEEDS)
    for mode in ORACLE_MODES:
        assert report.checks[mode] >= 6, report.summary()
    for mode in SELF_MODES:
        assert report.checks[mode] >= 3, report.summary()


def test_generated_programs_are_deterministic_and_sized() -> None:
    a, b = generate(7), generate(7)
    assert a.source() == b.source()
    sizes = [len(generate(s).stmts) for s in range(30)]
    assert min(sizes) >= 1 and max(sizes) <= 12
    assert Program.from_json(a.to_json()).source() == a.source()


class _WrongSin:
    """plait.numpy, but ``sin`` is 1% off: a bug the fuzzer must find."""

    def __getattr__(self, name: str) -> Any:
        if name == "sin":
            return lambda x: pnp.sin(x) * 1.01
        return getattr(pnp, name)


def _chain() -> Program:
    x = Var("x0", (5,), "f", "float32")

    def stmt(k: int, shape: tuple[int, ...], expr: str, arg: str, op: str) -> Stmt:
        return Stmt(Var(f"v{k}", shape, "f"), expr, (arg,), op)

    stmts = (
        stmt(1, (5,), "jnp.exp({0})", "x0", "unary:jnp.exp"),
        stmt(2, (5,), "jnp.sin({0})", "v1", "unary:jnp.sin"),
        stmt(3, (5,), "{0} * 2.0", "v2", "binary:*"),
        stmt(4, (5,), "jnp.cumsum({0}, axis=0)", "v3", "cumulative:jnp.cumsum"),
        stmt(5, (5,), "jnp.tanh({0})", "v4", "unary:jnp.tanh"),
    )
    return Program((x,), stmts, "v5", seed=3)


def test_a_planted_bug_is_found_shrunk_and_reproduced(tmp_path: Path) -> None:
    buggy = Backend(plait, _WrongSin(), plait.lax, plait.nn)
    with Fuzzer(modes=["eager", "grad"], repro_dir=tmp_path, backend=buggy) as fuzzer:
        report = Report()
        fuzzer.check_program(_chain(), {}, report)
    assert [f.mode for f in report.failures] == ["eager", "grad"]
    eager = report.failures[0]
    assert eager.category == "value"
    assert eager.shrunk is not None and [s.render() for s in eager.shrunk.stmts] == ["jnp.sin(x0)"]
    assert eager.repro is not None
    # the repro runs on its own (with the real plait, whose sin is right)
    out = subprocess.run([sys.executable, str(eager.repro)], capture_output=True, text=True, timeout=120, check=True)
    dtype, weak, values = out.stdout.strip().split(" ", 2)
    assert (dtype, weak) == ("float32", "strong")
    x = np.asarray(eval(values.split("]")[0] + "]"), np.float32)
    assert x.shape == (5,)
    # the same seed's input, through NumPy: the repro printed sin of it
    np.testing.assert_allclose(x, np.sin(make_data(eager.shrunk).args[0]), rtol=1e-6)


def test_the_same_program_without_the_bug_passes() -> None:
    with Fuzzer(modes=["eager", "grad", "mask"]) as fuzzer:
        report = Report()
        fuzzer.check_program(_chain(), {}, report)
    assert report.failures == []
    assert report.checks["eager"] == report.checks["grad"] == report.checks["mask"] == 1


@pytest.mark.parametrize(
    ("got", "want", "checks", "message"),
    [
        (Outcome("ok", [np.ones(2, np.float16)], ["float16"], [False]),
         Outcome("ok", [np.ones(2, np.float32)], ["float32"], [False]), Checks(), "dtype float16, oracle float32"),
        (Outcome("ok", [np.ones(2, np.float32)], ["float32"], [True]),
         Outcome("ok", [np.ones(2, np.float32)], ["float32"], [False]), Checks(), "weak_type True, oracle False"),
        (Outcome("ok", [np.ones(2, np.float32)], ["float32"], [True]),
         Outcome("ok", [np.ones(2, np.float32)], ["float32"], [False]), Checks(weak_types=False), None),
        (Outcome("ok", [np.array([1.0, 2.0])], ["float32"], [False]),
         Outcome("ok", [np.array([1.0, 2.1])], ["float32"], [False]), Checks(), "values differ at (1,)"),
        (Outcome("error", error="TypeError: no"), Outcome("ok", [np.ones(1)], ["float32"], [False]), Checks(),
         "error where the oracle computes a value: TypeError: no"),
        (Outcome("error", error="ValueError: no", error_classes=["ValueError", "Exception"], error_base="ValueError"),
         Outcome("error", error="TypeError: no", error_classes=["TypeError"], error_base="TypeError"), Checks(),
         "error class: raises ValueError: no, the oracle a TypeError"),
        (Outcome("error", error="ShapeError: no", error_classes=["ShapeError", "TypeError"], error_base="TypeError"),
         Outcome("error", error="TypeError: no", error_classes=["TypeError"], error_base="TypeError"), Checks(), None),
    ],
)
def test_compare_names_the_first_difference(got: Outcome, want: Outcome, checks: Checks, message: str | None) -> None:
    result = compare(got, want, checks)
    if message is None:
        assert result is None
    else:
        assert result is not None and result.startswith(message)


def test_mask_of_a_numpy_argument_sees_an_array() -> None:
    # found by the fuzzer: an argument of mask with no masked size stayed a NumPy array (no .at)
    def f(x: Any, w: Any) -> Any:
        return w[pnp.array([0, 1])].at[0].max(-0.5) + pnp.sum(x)

    out = plait.mask(f, ["n", "3"], "_")([np.ones(5, np.float32), np.array([-1.0, 2.0, 3.0], np.float32)], {"n": 3})
    np.testing.assert_allclose(np.asarray(out), [2.5, 5.0])


# Bugs the fuzzer found, fixed: each test asserts JAX's answer (a newly found bug gets a strict-xfail test
# here and a "known bug" entry in tests/fuzz/deviations.py until it is fixed).


def test_float_floordiv_tangent_is_a_symbolic_zero() -> None:
    # found by the fuzzer: an instantiated zero tangent made cbrt(x // 3) NaN at 0
    x = pnp.asarray(np.array([1.0, -2.0, 4.0], np.float32))
    _, tangent = plait.jvp(lambda x: pnp.cbrt(x // 3), (x,), (pnp.ones(3),))
    np.testing.assert_array_equal(np.asarray(tangent), [0.0, 0.0, 0.0])  # JAX 0.10.2's tangent


def test_pile_at_slice_past_an_elements_end_is_clipped() -> None:
    # found by the fuzzer: one scatter window dropped the whole update of an element shorter than the slice
    elements = [np.arange(1.0, 6.0, dtype=np.float32), np.arange(1.0, 5.0, dtype=np.float32)]
    out = plait.vmap(lambda x: x.at[3:5].mul(-1.0), in_axes=plait.pile_axis, out_axes=plait.pile_axis)(
        plait.Pile.from_arrays(elements)
    )
    got = [np.asarray(a).tolist() for a in out.unpack()]
    assert got == [[1.0, 2.0, 3.0, -4.0, -5.0], [1.0, 2.0, 3.0, -4.0]]  # as a loop over the elements gives


def test_pile_result_keeps_its_weak_type() -> None:
    # found by the fuzzer: zeroing a pile's padding made a weak result strong (JAX's vmap keeps it weak)
    pile = plait.Pile.from_arrays([np.ones((2, 3), np.float32), np.ones((1, 3), np.float32)])
    out = plait.vmap(lambda x: (x < x) / 0.5, in_axes=plait.pile_axis, out_axes=plait.pile_axis)(pile)
    assert [(a.dtype, a.weak_type) for a in out.unpack()] == [(np.float32, True)] * 2
    strong = plait.vmap(lambda x: (x < x) / 0.5 + x, in_axes=plait.pile_axis, out_axes=plait.pile_axis)(pile)
    assert [a.weak_type for a in strong.unpack()] == [False, False]


def test_masked_static_index_that_may_pass_the_start_reads_clamped() -> None:
    # found by the fuzzer: x[-3] of a masked length n was refused (n - 3 may be negative); JAX clamps
    read = plait.mask(lambda x: x[-3], ["n"], "")
    x = pnp.asarray(np.arange(8.0, dtype=np.float32))
    assert [float(read([x], {"n": n})) for n in (5, 3, 2, 1)] == [2.0, 0.0, 0.0, 0.0]


def test_float16_at_min_of_float32_updates_compares_in_float32() -> None:
    # found by the fuzzer (seed 706401581): float32 scan outputs scattered by .at[].min into a float16
    # array.  The updates were rounded to float16 before the scatter, so two of them tied with the operand
    # and shared the gradient; JAX compares in the promoted float32, where one side wins alone.
    x0 = np.array([[1.5497852563858032, 0.9873862266540527, -1.0, 1.5872998237609863, 0.2970757484436035],
                   [1.1180294752120972, 0.30288007855415344, 0.43492549657821655, -0.8066404461860657,
                    -0.7299232482910156],
                   [0.40092822909355164, -1.187694787979126, 0.21782298386096954, 0.6237965226173401,
                    -1.8315801620483398]], np.float32)
    weights = np.array([[[0.0562111958861351], [-0.6849547028541565], [-0.5013940930366516],
                         [-0.06080808490514755], [-0.7484766244888306]],
                        [[0.31445956230163574], [0.6217135787010193], [0.46900591254234314],
                         [0.5424013733863831], [-0.3898164927959442]],
                        [[0.8088298439979553], [0.9136596322059631], [0.66691654920578],
                         [-0.20866483449935913], [-0.7413615584373474]]], np.float32)

    def f(x: Any) -> Any:
        v1 = x.astype(pnp.float16)
        v3 = plait.lax.scan(lambda c, r: (c * 0.5 + r, pnp.sin(c) * r), pnp.zeros_like(x[0]), x)[1]
        return pnp.expand_dims(v1, 2).at[..., 0].min(v3)

    g = np.asarray(plait.grad(lambda x: pnp.sum(f(x) * weights))(pnp.asarray(x0)))
    np.testing.assert_allclose(g[0, 0], -0.043930064886808395, rtol=1e-5)  # JAX 0.10.2's value
    np.testing.assert_allclose(g[0, 3], -0.06506215035915375, rtol=1e-5)
    np.testing.assert_allclose(g[1, 0], 0.21175104, rtol=1e-6)  # the update wins (tied, it gave 0.21178575)
    np.testing.assert_allclose(g[1, 3], 0.41235617, rtol=1e-6)  # the operand wins (tied, it gave 0.41231924)


def test_boolean_divided_by_zero_is_xlas_select_when_compiled() -> None:
    # found by the fuzzer (seed 738067200), documented in tests/fuzz/deviations.py: XLA rewrites
    # convert(bool) / y as select(bool, 1 / y, 0), so a compiled false / 0 is 0 (JAX 0.10.2's eager answer,
    # since each jnp function is compiled); plait's eager ops keep IEEE's 0 / 0 = NaN
    b = pnp.asarray(np.array([-1.2, 2.0, 1.5], np.float32)) == pnp.int32(2)
    compiled = plait.jit(lambda b: b / False)(b)
    assert compiled.dtype == np.float32 and not compiled.weak_type
    np.testing.assert_array_equal(np.asarray(compiled), [0.0, np.inf, 0.0])
    np.testing.assert_array_equal(np.asarray(b / False), [np.nan, np.inf, np.nan])


def test_gradient_through_cummax_keeps_a_signed_zero() -> None:
    # found by the fuzzer (seed 739000682), documented in tests/fuzz/deviations.py: JAX's derivative program
    # of cummax turns -0.0 into +0.0 and so differentiates arctan2 on the other side of its branch cut;
    # plait's gradient is the function's, checked against a float64 central difference
    x = np.array([[-0.0, -0.556], [-0.29, -0.946], [-1.54, -1.0], [0.844, 0.743], [-1.8, 0.0857]], np.float32)
    w = np.array([[-0.83, 0.91], [-0.12, 0.29], [0.18, -0.47], [0.65, -0.02], [-0.94, 0.86]], np.float32)

    def f(x: Any) -> Any:
        v = pnp.arctan2(x, plait.lax.cummax(x, axis=1))
        return pnp.sum(plait.nn.softmax(plait.nn.softmax(v, axis=1), axis=0) * w)

    def f64(x: np.ndarray) -> float:
        def softmax(v: np.ndarray, axis: int) -> np.ndarray:
            e = np.exp(v - v.max(axis, keepdims=True))
            return np.asarray(e / e.sum(axis, keepdims=True))

        v = np.arctan2(x, np.maximum.accumulate(x, axis=1))
        return float((softmax(softmax(v, 1), 0) * w).sum())

    got = np.asarray(plait.grad(f)(pnp.asarray(x)))
    base = x.astype(np.float64)
    for i, j in ((1, 0), (1, 1), (3, 0), (3, 1)):
        hi, lo = base.copy(), base.copy()  # one entry moved: the -0.0 elsewhere keeps its sign
        hi[i, j] += 1e-6
        lo[i, j] -= 1e-6
        np.testing.assert_allclose(got[i, j], (f64(hi) - f64(lo)) / 2e-6, rtol=1e-4, atol=1e-7)
    assert np.isnan(got[0, 0])  # arctan2(y, y) at 0: no derivative there, in JAX too


def test_second_derivative_through_scan_keeps_unused_cotangents_symbolic() -> None:
    # found by the fuzzer (seed 741000000): the transpose of a scan returned instantiated zeros for the residuals
    # its body does not use, so grad(grad) multiplied them by a NaN carry (0 * NaN) where JAX 0.10.2 gives a value
    x = pnp.asarray(np.array([[-1.0, 2.0], [0.5, 0.3], [0.9, 0.4]], np.float32))
    w = np.array([1.0, -1.0], np.float32)

    def f(x: Any) -> Any:
        carry = plait.lax.scan(lambda c, r: (c * 0.5 + r, pnp.sin(c) * r), pnp.zeros(2), x**0.5)[0]
        return plait.lax.cond(pnp.sum(carry) > 0, pnp.tanh, lambda a: a * 2.0, carry)

    first = plait.grad(lambda x: pnp.sum(f(x) * w))
    second = np.asarray(plait.grad(lambda x: pnp.sum(first(x)))(x))
    # column 0's carry is NaN from row 0 on (sqrt(-1)); the false branch a * 2 is linear, so rows 1 and 2 of
    # column 0 get -w0 / (4 x^1.5) * 2 * 0.5^(2 - row) from sqrt'' alone
    np.testing.assert_allclose(second[1:, 0], [-0.70710677, -0.585607], rtol=1e-6)
    assert np.isnan(second[0, 0])


def test_relu_tangent_at_nan_is_zero() -> None:
    # found by the fuzzer (seed 741000181): JAX's relu has the derivative select(x > 0, g, 0), so 0 at NaN
    x = pnp.asarray(np.array([np.nan, -1.0, 0.0, 2.0], np.float32))
    value, tangent = plait.jvp(nn.relu, (x,), (pnp.ones(4),))
    np.testing.assert_array_equal(np.asarray(value), [np.nan, 0.0, 0.0, 2.0])
    np.testing.assert_array_equal(np.asarray(tangent), [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(np.asarray(plait.grad(lambda x: nn.relu(x).sum())(x)), [0.0, 0.0, 0.0, 1.0])


def test_cholesky_gradient_ignores_the_cotangent_above_the_diagonal() -> None:
    # found by the fuzzer (seed 741000169): log of the factor makes the cotangent of its zeros above the
    # diagonal infinite; the factor's derivative there is structurally zero, so the gradient is finite (JAX too)
    a = np.array([[1.5, -0.5], [0.8, 0.6], [-2.0, 1.4]], np.float32)

    def f(a: Any) -> Any:
        low = pnp.linalg.cholesky(a @ a.T + 3 * pnp.eye(3, dtype=pnp.float32))
        return pnp.sum(pnp.log(pnp.abs(low) + pnp.tril(pnp.ones((3, 3)))))  # log(0) = -inf above the diagonal

    got = np.asarray(plait.grad(f)(pnp.asarray(a)))
    assert np.isfinite(got).all()

    def f64(a: np.ndarray) -> float:  # the entries above the diagonal are constant (log 0): no derivative
        low = np.linalg.cholesky(a @ a.T + 3 * np.eye(3))
        return float(np.sum(np.log(np.abs(low[np.tril_indices(3)]) + 1)))

    for i, j in np.ndindex(*a.shape):
        hi, lo = a.astype(np.float64), a.astype(np.float64)
        hi[i, j] += 1e-6
        lo[i, j] -= 1e-6
        np.testing.assert_allclose(got[i, j], (f64(hi) - f64(lo)) / 2e-6, rtol=1e-3, atol=1e-4)


def test_checkpoint_outside_jit_runs_compiled() -> None:
    # documented in tests/fuzz/deviations.py (seed 741000035): XLA rewrites log(x ** 0.5) as 0.5 * log(|x|);
    # plait's checkpoint runs its function compiled, as jit does, where JAX's eager checkpoint runs op by op
    x = pnp.asarray(np.array([1.53, -1.09], np.float32))

    def f(x: Any) -> Any:
        return pnp.log(x**0.5)

    compiled = np.asarray(plait.jit(f)(x))
    np.testing.assert_allclose(compiled, [0.5 * np.log(1.53), 0.5 * np.log(1.09)], rtol=1e-5)
    np.testing.assert_array_equal(np.asarray(plait.checkpoint(f)(x)), compiled)
    assert np.isnan(np.asarray(f(x))[1])  # op by op: the power is NaN


def test_second_derivative_of_std_of_two_is_rounding_noise_in_float16() -> None:
    # documented in tests/fuzz/deviations.py (seed 741000712): std of two values is |a - b| / 2, whose second
    # derivative is 0; in float16 it is a difference of terms near 1 / sqrt(var) ~ 70, so only noise is left
    x = np.array([-0.2012, -0.2284], np.float16)
    v = np.array([-0.1411, 0.751], np.float16)

    def second(x: Any) -> Any:
        return pnp.sum(plait.grad(lambda x: pnp.std(x) * -0.788)(x) * v.astype(x.dtype))

    noisy = np.asarray(plait.grad(second)(pnp.asarray(x)))
    assert noisy.dtype == np.float16 and np.abs(noisy.astype(np.float64)).max() < 2e-2
    exact = np.asarray(plait.grad(second)(pnp.asarray(x.astype(np.float32))))
    np.testing.assert_allclose(exact, [0.0, 0.0], atol=1e-4)


def test_nan_tangent_at_a_loser_of_min_stays_nan() -> None:
    # documented in tests/fuzz/deviations.py (seed 742000300): the tangent of min is the product of the input's
    # tangent with a 0/1 indicator, so a NaN tangent at a loser makes it NaN (JAX's compiled jnp.min gives the
    # winner's tangent: XLA turns its product with convert(pred) into a select)
    x = pnp.asarray(np.array([[1.0, np.inf, 2.0], [0.5, 3.0, -1.0]], np.float32))
    t = pnp.asarray(np.array([[0.1, np.nan, 0.2], [0.3, 0.4, 0.5]], np.float32))
    assert np.isnan(float(plait.jvp(pnp.min, (x,), (t,))[1]))
    finite = pnp.asarray(np.array([[0.1, 0.7, 0.2], [0.3, 0.4, 0.5]], np.float32))
    assert float(plait.jvp(pnp.min, (x,), (finite,))[1]) == pytest.approx(0.5)


def test_gradient_at_a_pole_of_a_product_keeps_the_chain_rule_infinity() -> None:
    # documented in tests/fuzz/deviations.py (seed 742000732): d(2 / prod(x)) / dx_j is -2 / p**2 times the
    # product of the other factors; at factors [1.5, -1, 0] that is NaN (-inf * 0) for the first two and
    # -inf * -1.5 = +inf for the zero factor (JAX's compiled derivative gives NaN there)
    g = plait.jit(plait.grad(lambda x: 2 / pnp.prod(x)))(pnp.asarray(np.array([1.5, -1.0, 0.0], np.float32)))
    got = np.asarray(g)
    assert np.isnan(got[:2]).all() and got[2] == np.inf


def test_gradient_at_the_pole_of_log_is_the_chain_rules_infinity() -> None:
    # documented in tests/fuzz/deviations.py (seed 743000660): d log(tanh(x)) / dx = 1 / (sinh x cosh x),
    # -inf at x = -0.0 from the left; plait's chain rule gives it (JAX 0.10.2 gives NaN)
    g = plait.grad(lambda x: pnp.sum(pnp.log(pnp.tanh(x)) * 0.5))(pnp.asarray(np.array([1.33, -0.0], np.float32)))
    got = np.asarray(g)
    np.testing.assert_allclose(got[0], 0.5 / (np.sinh(1.33) * np.cosh(1.33)), rtol=1e-5)
    assert got[1] == -np.inf


def test_at_min_passes_the_tangent_of_untouched_nan_entries() -> None:
    # found by the fuzzer (seed 744000106): .at[..., 0].min(v) zeroed the gradient of every NaN entry, also
    # those no update touches (NaN != NaN made the operand "lose"); JAX 0.10.2 passes 1 / x there
    x = np.array([[-0.115, -1.038], [-1.634, -0.575], [0.401, -1.969]], np.float32)
    w = np.array([[-0.27, -0.28], [-0.39, 0.98], [0.80, 0.27]], np.float32)
    g = np.asarray(plait.grad(lambda x: pnp.sum(pnp.log(x).at[..., 0].min(-0.5) * w))(pnp.asarray(x)))
    np.testing.assert_allclose(g[:, 1], w[:, 1] / x[:, 1], rtol=1e-6)  # untouched column: log's derivative
    # column 0: NaN wins in rows 0 and 1 (min of NaN is NaN), which neither side's tangent matches; row 2's
    # log(0.401) = -0.91 beats -0.5
    np.testing.assert_allclose(g[:, 0], [0.0, 0.0, w[2, 0] / x[2, 0]], rtol=1e-6)


def _constant_quotient_program() -> Program:
    # seed 745000167, shrunk: c / c for c = cumsum(sinh((x + 1.5) ** 3)), identically 1
    x = Var("x0", (5, 3), "f", "float32")
    names = ["v1", "v2", "v3", "v4", "v5"]
    exprs = ["{0} - -1.5", "{0} ** 3", "jnp.sinh({0})", "jnp.cumsum({0}, axis=1)", "{0} / {1}"]
    ops = ["binary:-", "binary:**", "unary:sinh", "cumulative:cumsum", "binary:/"]
    stmts, prev = [], "x0"
    for name, expr, op in zip(names, exprs, ops):
        args = (prev, prev) if op == "binary:/" else (prev,)
        stmts.append(Stmt(Var(name, (5, 3), "f"), expr, args, op))
        prev = name
    return Program((x,), tuple(stmts), "v5", seed=745000167)


def test_second_opinion_sides_with_float64_only_when_it_accepts_plait_and_refuses_jax() -> None:
    # documented in tests/fuzz/deviations.py: the second derivative of a constant c / c is exactly 0; plait's
    # float32 program returns noise below 1e-4, JAX 0.10.2's returned 871.7 in 3 of 15 entries (cancelling
    # terms of size 1e18). The runner appends the float64 oracle's verdict, and only a verdict for plait counts.
    program = _constant_quotient_program()
    data = make_data(program)
    got = run_mode(PLAIT, program, data, "grad_grad")
    assert got.status == "ok" and np.abs(got.values[0]).max() < 1e-3
    noisy = Outcome("ok", [got.values[0].copy()], got.dtypes, got.weak)
    noisy.values[0][0, 2] = 871.7
    checks = Checks()
    verdict = second_opinion(program, data, "grad_grad", got, noisy, None, checks)
    assert verdict.startswith(f" [{FLOAT64_AGREES}: <grad(grad), t>: got ")
    assert excuse(program, "grad_grad", "values differ at (0, 2)" + verdict) is not None
    # plait's the noisy one: the oracle only says the derivative is 0, which excuses nothing in float32
    verdict = second_opinion(program, data, "grad_grad", noisy, got, None, checks)
    assert verdict == f" [{ZERO_DERIVATIVE}]"
    assert excuse(program, "grad_grad", "values differ at (0, 2): got np.float64(871.7), want np.float64(0.0)"
                  + verdict) is None
    assert second_opinion(program, data, "grad_grad", got, got, None, checks) == ""  # float64 refuses neither
    assert excuse(program, "grad_grad", "values differ at (0, 2)") is None


def test_checkpoint_at_a_tie_of_cummax_is_jits_value() -> None:
    # documented in tests/fuzz/deviations.py (seed 745000025): std(cummax(x) ** 3) at a tie of cummax has a
    # variance of exactly 0 op by op (derivative NaN, as JAX's eager checkpoint gives) and an ulp above 0 in
    # the compiled program, which plait's checkpoint and JAX's jit run (-0.5127 both)
    x = pnp.asarray(np.array([-0.856948733329773, -1.2617027759552002], np.float32))

    def f(x: Any) -> Any:
        return pnp.std(plait.lax.cummax(x, axis=0) ** 3, axis=0) * 0.4654282331466675

    remat = plait.grad(plait.checkpoint(f))(x)
    np.testing.assert_array_equal(np.asarray(remat), np.asarray(plait.jit(plait.grad(f))(x)))
    assert np.isfinite(np.asarray(remat)).all()
    assert np.isnan(np.asarray(plait.grad(f)(x))).all()  # op by op
    program = generate(745000025)
    message = "values differ at (0,): got np.float64(-0.51), want np.float64(nan)"
    assert excuse(program, "checkpoint", message) is None  # only with the runner's evidence
    assert excuse(program, "checkpoint", f"{message} [{JIT_CHECKPOINT_AGREES}]") is not None


def test_gradient_at_the_pole_of_rsqrt_is_the_chain_rules_infinity() -> None:
    # documented in tests/fuzz/deviations.py (seed 746000073): grad(rsqrt)(-0.0) is -inf (JAX's too) and
    # tanh'(-0.0) is 1, so the chain rule gives -inf; JAX 0.10.2 gives NaN (its tanh derivative multiplies the
    # infinity by tanh(-0.0) = -0.0)
    x = pnp.asarray(np.array([-0.0, 0.61], np.float32))
    got = np.asarray(plait.grad(lambda x: pnp.sum(plait.lax.rsqrt(pnp.tanh(x))))(x))
    assert got[0] == -np.inf
    t = np.tanh(np.float64(0.61))
    np.testing.assert_allclose(got[1], -0.5 * t**-1.5 * (1 - t * t), rtol=1e-5)
    assert float(plait.grad(plait.lax.rsqrt)(pnp.asarray(np.float32(-0.0)))) == -np.inf


def test_tanh_passes_an_infinite_cotangent_on_as_the_chain_rule_does() -> None:
    # documented in tests/fuzz/deviations.py (seeds 743000660, 746000073, 7419000160): the cotangent of tanh's
    # output is 1 / 0 = inf; tanh' = 1 - tanh(x)**2 is in (0, 1], so the gradient is +inf, also where tanh(x) is
    # negative or -0.0 (JAX 0.10.2's h + h * tanh(x) is NaN there)
    x = pnp.asarray(np.array([-0.39, -0.0, 0.5], np.float32))
    got = np.asarray(plait.grad(lambda x: pnp.sum(pnp.tanh(x) / pnp.zeros_like(x)))(x))
    np.testing.assert_array_equal(got, [np.inf, np.inf, np.inf])


def test_norm_gradient_at_the_zero_vector_is_zero() -> None:
    # documented in tests/fuzz/deviations.py (seed 7419000172) and plait_core/numpy/norms.py: JAX gives NaN
    x = pnp.asarray(np.array([[0.0, 0.5], [0.3, 0.2]], np.float32))
    g = np.asarray(plait.grad(lambda x: pnp.linalg.norm(pnp.prod(x, keepdims=True), axis=-1)[0])(x))
    np.testing.assert_array_equal(g, np.zeros((2, 2), np.float32))
    away = np.asarray(plait.grad(lambda x: pnp.linalg.norm(x, axis=-1)[0])(x))
    np.testing.assert_allclose(away[0], [0.0, 1.0], atol=1e-7)


def test_a_value_that_went_through_float16_gets_float16s_tolerance() -> None:
    # seed 7419000139: a float32 gradient of std(x.astype(float16)) has float16's precision (1.318 vs 1.337)
    x = Var("x0", (5, 2), "f", "float32")
    half = Stmt(Var("v1", (5, 2), "f"), "{0}.astype(jnp.float16)", ("x0",), "astype:float16")
    plain = Stmt(Var("v1", (5, 2), "f"), "jnp.sin({0})", ("x0",), "unary:sin")
    assert program_rtol(Program((x,), (half,), "v1")) == 1e-2
    assert program_rtol(Program((x,), (plain,), "v1")) == 0.0
    got = Outcome("ok", [np.array([1.3177717], np.float32)], ["float32"], [False])
    want = Outcome("ok", [np.array([1.3367198], np.float32)], ["float32"], [False])
    assert compare(got, want, Checks(), rtol_floor=1e-2) is None
    assert compare(got, want, Checks()) == "values differ at (0,): got np.float64(1.3177716732025146), " \
        "want np.float64(1.3367197513580322) (1 of 1 elements)"


def test_std_of_equal_values_has_no_derivative_and_each_mean_rounds_its_own_way() -> None:
    # documented in tests/fuzz/deviations.py (seed 7429000638): XLA divides by n as a product with 1 / n, so
    # the deviations from the mean of equal values are equal non-zero numbers and std's gradient is 0, eagerly
    # (one compiled program per mean or std, as JAX's jitted ones: issue 26) and compiled; with the exact
    # division of an op-by-op mean the variance is 0 and the gradient 0 / 0
    y = np.full((5,), -1.3927906, np.float32)
    total = np.float32(np.sum(y))
    assert float(pnp.mean(pnp.asarray(y))) == float(total * np.float32(1 / 5)) != float(total / np.float32(5))
    assert float(plait.jit(pnp.mean)(pnp.asarray(y))) == float(total * np.float32(1 / 5))
    np.testing.assert_array_equal(np.asarray(plait.grad(pnp.std)(pnp.asarray(y))), np.zeros(5, np.float32))
    x = Var("x0", (5,), "f", "float32")
    stmts = (
        Stmt(Var("v1", (5,), "f"), "lax.cummin({0}, axis=0)", ("x0",), "cumulative:lax.cummin"),
        Stmt(Var("v2", (), "f"), "{0}.std(axis=-1)", ("v1",), "reduce:jnp.std"),
    )
    program = Program((x,), stmts, "v2", seed=7429000638)
    data = make_data(program)
    data.args[0] = np.array([-1.3927906, -0.0465, -1.1674, 0.3648, 0.3192], np.float32)  # x0 the minimum
    got = run_mode(PLAIT, program, data, "grad")
    np.testing.assert_array_equal(got.values[0], np.zeros(5, np.float32))  # JAX's eager grad: 0
    nan = Outcome("ok", [np.full(5, np.nan, np.float32)], got.dtypes, got.weak)
    assert second_opinion(program, data, "grad", nan, got, None, Checks()) == f" [{NO_DERIVATIVE}]"
    assert excuse(program, "grad", f"values differ at (0,) [{NO_DERIVATIVE}]") is not None
    assert excuse(program, "grad", "values differ at (0,)") is None


def test_compiled_gradient_of_sqrt_of_a_cumsum_product_matches_central_differences() -> None:
    # documented in tests/fuzz/deviations.py (seed 7529000020): JAX 0.10.2's jit(grad) of this loss gives
    # -0.291 where its eager grad and float64 central differences give -0.122; plait's jit agrees with them
    rng = np.random.default_rng(7529000020)
    x = rng.uniform(-2, 2, (5, 3)).astype(np.float32)
    x[:, 1] = np.abs(x[:, 1]) + 0.5  # keeps cumsum(x)[:, 1] @ x positive
    x[:, 0] = np.abs(x[:, 0])
    x[:, 2] = np.abs(x[:, 2])
    w = np.array([0.3, -0.6, 0.9], np.float32)

    def loss64(x: np.ndarray) -> float:
        return float(np.sum(np.sqrt(np.cumsum(x, axis=1)[:, 1] @ x) * w))

    got = np.asarray(plait.jit(plait.grad(lambda x: pnp.sum(pnp.sqrt(pnp.cumsum(x, axis=1)[:, 1] @ x) * w)))(
        pnp.asarray(x)))
    x64 = x.astype(np.float64)
    for i, j in np.ndindex(*x.shape):
        e = np.zeros_like(x64)
        e[i, j] = 1e-6
        np.testing.assert_allclose(got[i, j], (loss64(x64 + e) - loss64(x64 - e)) / 2e-6, rtol=1e-3, atol=1e-4)


def test_float16_noise_of_a_constant_is_excused_only_with_the_oracles_zero() -> None:
    # documented in tests/fuzz/deviations.py (seed 7619000517): grad(grad) of v / v (a constant) in float16:
    # plait -0.0042, JAX 0.0203; the float64 oracle's central difference is exactly 0
    x = Var("x0", (5, 3), "f", "float16")
    stmts = (
        Stmt(Var("v1", (5, 3), "f"), "jnp.cumprod({0}, axis=1)", ("x0",), "cumulative:jnp.cumprod"),
        Stmt(Var("v2", (5, 3), "f"), "{0} / {1}", ("v1", "v1"), "binary:/"),
    )
    program = Program((x,), stmts, "v2", seed=7619000517)
    data = make_data(program)
    got = run_mode(PLAIT, program, data, "grad_grad")
    noisy = Outcome("ok", [np.full(got.values[0].shape, 0.05, np.float16)], got.dtypes, got.weak)
    mine = Outcome("ok", [np.full(got.values[0].shape, -0.03, np.float16)], got.dtypes, got.weak)
    assert second_opinion(program, data, "grad_grad", mine, noisy, None, Checks()) == f" [{ZERO_DERIVATIVE}]"
    base = "values differ at (1, 1): got np.float64(-0.00421905517578125), want np.float64(0.02032470703125)"
    assert excuse(program, "grad_grad", base) is None
    assert excuse(program, "grad_grad", f"{base} [{ZERO_DERIVATIVE}]") is not None
    far = "values differ at (1, 1): got np.float64(-0.5), want np.float64(0.02032470703125)"
    assert excuse(program, "grad_grad", f"{far} [{ZERO_DERIVATIVE}]") is None


def test_float16_cumprod_keeps_its_running_product_finite() -> None:
    # documented in tests/fuzz/deviations.py (seed 7729000456): JAX 0.10.2 gives NaN last (inf * 0)
    x = pnp.asarray(np.array([48.5625, 48.5625, 48.5625, 48.5625, 0.0], np.float16))
    want = [48.5625, 2358.0, np.inf, np.inf, 0.0]
    np.testing.assert_array_equal(np.asarray(pnp.cumprod(x)), np.array(want, np.float16))
    np.testing.assert_array_equal(np.asarray(plait.jit(pnp.cumprod)(x)), np.array(want, np.float16))
    np.testing.assert_array_equal(np.asarray(plait.vmap(pnp.cumprod)(pnp.stack([x, x])))[1], np.array(want, np.float16))


def test_cbrt_pole_in_a_second_derivative_is_non_finite_and_excused_only_so() -> None:
    # documented in tests/fuzz/deviations.py (seed 9100000023): at x = 0, cbrt's derivative is infinite; the
    # second derivative of cumlogsumexp(cbrt(x)) is that infinity times sums of finite terms of both signs.
    x = np.array([-0.343, 0.0, -0.291], np.float32)
    w = np.array([0.64, 0.85, -0.92], np.float32)
    v = np.array([0.48, -0.62, -0.55], np.float32)

    def second(x: Any) -> Any:
        first = plait.grad(lambda x: pnp.sum(plait.lax.cumlogsumexp(pnp.cbrt(x), reverse=True) * w))
        return pnp.sum(first(x) * v)

    out = np.asarray(plait.grad(second)(x))
    assert not np.isfinite(out[1])  # the pole itself
    program = generate(9100000023)
    verdict = f" [{NO_DERIVATIVE}]"
    assert excuse(program, "grad_grad", "values differ at (1, 1): got np.float64(-inf), want np.float64(nan)" + verdict)
    assert excuse(program, "grad_grad", "values differ at (3, 0): got np.float64(nan), want np.float64(inf)" + verdict)
    # a finite difference, or one without the oracle's verdict, is not excused
    assert excuse(program, "grad_grad", "values differ at (1, 0): got np.float64(1.5), want np.float64(2.0)" + verdict) is None
    assert excuse(program, "grad_grad", "values differ at (1, 1): got np.float64(-inf), want np.float64(nan)") is None
