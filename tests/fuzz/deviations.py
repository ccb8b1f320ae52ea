"""Every accepted difference between plait and its oracle, in one place.

A fuzz failure that one of these entries matches is counted as excused, not
as a failure.  Each entry says what differs and why; ``status`` is
``"deviation"`` for a documented, intended difference from JAX and
``"known bug"`` for a bug that is tracked but not fixed yet (remove the
entry with the fix).  Nothing else in the fuzzer excuses a difference.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from .program import Program

#: What the runner appends to a value difference from JAX when a second opinion sides with plait.
JIT_CHECKPOINT_AGREES = "plait equals JAX's jit(grad(checkpoint(f)))"
FLOAT64_AGREES = "the float64 NumPy oracle accepts plait's value and refuses JAX's"
NO_DERIVATIVE = "the float64 NumPy oracle finds no derivative here (a kink or a singular point)"
ZERO_DERIVATIVE = "the float64 NumPy oracle finds this derivative exactly 0 (the function is constant there)"


@dataclass(frozen=True)
class Deviation:
    name: str
    status: str  # "deviation" or "known bug"
    reason: str
    matches: Callable[[Program, str, str], bool]  # (program, mode, failure message)


def _uses(program: Program, *fragments: str) -> bool:
    return any(f in s.expr or f in s.op for s in program.stmts for f in fragments)


_DIFF_MODES = ("grad", "jvp", "vjp", "jit_vmap_grad", "grad_grad", "checkpoint")


def _derivative_value(program: Program, mode: str, message: str, *fragments: str) -> bool:
    return mode in _DIFF_MODES and "values differ" in message and _uses(program, *fragments)


DEVIATIONS: tuple[Deviation, ...] = (
    Deviation(
        "abs at zero",
        "deviation",
        "the derivative of |x| at exactly 0 is sign(0) = 0 in plait (the middle of the subgradient); JAX takes 1",
        lambda p, mode, msg: _derivative_value(p, mode, msg, "jnp.abs"),
    ),
    Deviation(
        "scatter_mul gradient",
        "deviation",
        "plait differentiates .at[].mul for any indices (issue 11); JAX 0.10.2 raises NotImplementedError "
        "unless the indices are declared unique",
        lambda p, mode, msg: mode in _DIFF_MODES and msg.startswith("a value where") and "scatter_mul" in msg,
    ),
    Deviation(
        "NaN folded in JAX's compiled derivative",
        "deviation",
        "a NaN cotangent or tangent times a zero indicator (the losers of min/max, of .at[].min/max) is NaN in "
        "plait, eager and compiled alike (its indicator is a select of 1 and 0), as in JAX's eager reverse-mode "
        "derivative, whose indicator reaches the backward pass as a residual; where JAX's indicator is "
        "convert(pred) inside one compiled program (its jit(vmap(grad)), and the jvp of a jnp reduction, which "
        "JAX compiles), XLA rewrites the product as a select and gives 0 there. Measured (seed 742000300, jvp of "
        "jnp.min with a NaN tangent at a loser): plait NaN, JAX -1.42",
        lambda p, mode, msg: mode in ("jit_vmap_grad", "jvp") and "got np.float64(nan), want np.float64(" in msg
        and "want np.float64(nan)" not in msg and _uses(p, "jnp.min", "jnp.max", ".min(", ".max(", "amin", "amax"),
    ),
    Deviation(
        "tie lost to XLA's rounding",
        "deviation",
        "the first element of a cumulative op (cumsum, cumprod, ...) equals its input, so min/max of the two is an "
        "exact tie whose derivative goes half to each side; in a compiled program XLA may compute that input in "
        "two fusions that round differently (a division by a broadcast sum becomes a product with its reciprocal, "
        "contracted to a fused multiply-add in one fusion and not in the other), and then one side wins alone. "
        "Measured (seed 704566091, -1 - softmax(x) then cumprod and minimum): the value is -1.3494788 in one "
        "fusion and -1.3494787 in the other, and one gradient entry is 0.0976 instead of 0.0680; JAX's compiled "
        "program keeps that tie only because XLA fuses its different jaxpr otherwise (its eager and compiled "
        "values of -1 - softmax(x) differ by the same ulp)",
        lambda p, mode, msg: mode == "jit_vmap_grad" and "values differ" in msg
        and any(s.op.startswith("cumulative:") for s in p.stmts) and _uses(p, "jnp.minimum", "jnp.maximum"),
    ),
    Deviation(
        "a boolean divided by zero",
        "deviation",
        "XLA's simplifier rewrites convert(bool) / y as select(bool, 1 / y, 0), so false / 0 is 0 in any compiled "
        "program instead of IEEE's NaN; every jnp function of JAX is one compiled program, so JAX's eager "
        "(bool / 0) gives 0, while plait's eager NumPy-style ops run primitive by primitive and give NaN; "
        "plait.jit of the same program gives JAX's 0 (tests/test_fuzz.py checks both)",
        lambda p, mode, msg: mode in ("eager", "vmap", "jvp", "vjp") and "got np.float64(nan), want np.float64(0.0)"
        in msg and _bool_divided(p),
    ),
    Deviation(
        "signed zero lost in JAX's derivative of cummax",
        "deviation",
        "JAX differentiates cummax/cummin through an associative scan that rebuilds the values with pad and add, "
        "so an entry -0.0 becomes +0.0 in its derivative program (its forward keeps -0.0); an arctan2 of that "
        "value then sits on the other side of its branch cut (arctan2(-0, -0) = -pi, arctan2(-0, +0) = -0) and "
        "JAX's gradient is that of another point. Measured (seed 739000682, arctan2(x, cummax(x)) then two "
        "softmaxes): plait's gradient -0.0042696 equals the float64 central difference -0.0042696, JAX's is "
        "-0.0060109 (tests/test_fuzz.py checks plait's against the difference)",
        lambda p, mode, msg: mode in _DIFF_MODES and "values differ" in msg and _uses(p, "lax.cummax", "lax.cummin")
        and _uses(p, "arctan2"),
    ),
    Deviation(
        "plait's checkpoint runs compiled",
        "deviation",
        "plait runs a checkpointed function compiled even outside jit (as the body of its remat call); JAX 0.10.2 "
        "runs it op by op outside jit. Where XLA's rewrites or its rounding of a fused program change a value, "
        "plait's checkpoint gives what JAX's jit(grad(checkpoint(f))) gives, not JAX's eager value. The runner "
        "asks JAX for that compiled value and this entry matches only when plait equals it. Measured: "
        "log(x ** 0.5) at x = -1.09, which XLA rewrites as 0.5 * log(|x|) (seed 741000035: plait and JAX's jit "
        "0.0447, JAX's eager NaN); std of cummax(x) ** 3 at a tie of cummax, a variance of exactly 0 op by op and "
        "an ulp above 0 compiled (seed 745000025: plait and JAX's jit -0.5127, JAX's eager NaN)",
        lambda p, mode, msg: mode == "checkpoint" and JIT_CHECKPOINT_AGREES in msg,
    ),
    Deviation(
        "JAX's value is off where plait's is float64's",
        "deviation",
        "a difference from JAX where the float64 NumPy oracle (values by float64 evaluation, derivatives by "
        "central differences) accepts plait's answer and refuses JAX's. The runner asks the NumPy oracle about both "
        "answers and this entry matches only on that verdict. Measured: the rounding of JAX's float32 program went "
        "one way and plait's another (seed 745000167, grad(grad) of c / c for c = cumsum(sinh((x + 1.5) ** 3)), a "
        "constant 1: exact second derivative 0, plait within 5e-5 of it, JAX 871.7 in 3 of 15 entries, from terms "
        "of size 1e18 that cancel); JAX's compiled gradient is wrong (seed 7529000020, jit(grad) of "
        "sum(w * sqrt(cumsum(x, axis=1)[:, 1] @ x)): JAX's jit gives -0.291 for d/dx[0, 2], its eager grad, "
        "plait (eager and jit) and float64 central differences give -0.122)",
        lambda p, mode, msg: FLOAT64_AGREES in msg,
    ),
    Deviation(
        "float16 rounding in a second derivative that cancels",
        "deviation",
        "a second derivative that is 0 in exact arithmetic (std of two values is |a - b| / 2, piecewise linear) "
        "is computed as a difference of large float16 terms (1 / sqrt of a small variance), so each framework "
        "returns its own rounding noise. Measured (seed 741000712, grad(grad(std)) of float16[2]): plait "
        "0.0047, JAX -0.0088, exact 0; seed 7419000139, std of x.astype(float16): plait -0.0016, JAX 0.00025; "
        "seed 7619000517, v / v for v = cumprod(x)[[1]], a constant: plait -0.0042, JAX 0.0203); excused only "
        "where both values are below 2e-2 in a program with float16 values, or below 0.1 where the float64 oracle "
        "finds the derivative exactly 0",
        lambda p, mode, msg: mode == "grad_grad" and "values differ" in msg and _float16_rounding(p, msg),
    ),
    Deviation(
        "the chain rule's infinity at a pole",
        "deviation",
        "at a product that is exactly 0 under a pole (2 / prod(x)), the chain rule gives the zero factor's "
        "entry -2 / p**2 times the product of the other factors: an infinity; plait's derivative of prod "
        "computes that product of the others and returns the infinity, JAX's compiled jit(vmap(grad)) returns "
        "NaN there (both are non-finite). Measured (seed 742000732, float16 factors [1.5, -1, 0]): plait +inf, "
        "JAX NaN, the chain rule -inf * -1.5 = +inf",
        lambda p, mode, msg: _infinity_for_nan(mode, msg) and _uses(p, "prod"),
    ),
    Deviation(
        "non-finite second derivatives around cbrt's pole",
        "deviation",
        "cbrt has an infinite derivative at 0 (1 / (3 x**(2/3))), so a second derivative through it at 0 is "
        "that infinity times sums of finite terms of both signs; whether an entry comes out +inf, -inf or NaN "
        "(inf - inf) depends on how each framework groups those sums, and the float64 oracle finds no derivative "
        "there. Matched only on that verdict. Measured (seed 9100000023, grad(grad) of "
        "cumlogsumexp(cbrt(x), reverse=True) with zeros in x: plait -inf where JAX gives NaN in one entry, "
        "NaN where JAX gives inf in another; every finite entry equal)",
        lambda p, mode, msg: mode in _DIFF_MODES and NO_DERIVATIVE in msg and _uses(p, "cbrt")
        and ("want np.float64(nan)" in msg or "got np.float64(nan)" in msg)
        and "inf)" in msg,
    ),
    Deviation(
        "JAX's derivative of tanh turns an infinite cotangent into NaN",
        "deviation",
        "JAX writes tanh's derivative as h + h * t with h = g * (1 - t) (t = tanh(x)); where the cotangent g is "
        "infinite (a pole after tanh) and t is negative or -0.0, h * t is an infinity of the other sign or "
        "inf * -0.0, and the sum is NaN. plait multiplies g by 1 - t**2 (positive, at most 1) and returns the "
        "chain rule's infinity. Measured: log(tanh(x)) at x = -0.0 (seed 743000660: plait -inf, the limit "
        "1 / (sinh x cosh x) from the left; JAX NaN); rsqrt(tanh(x)) at x = -0.0 (seed 746000073: JAX's own "
        "grad(rsqrt)(-0.0) is -inf, plait -inf * 1 = -inf, JAX NaN); tanh(x) / pad(x) at the padded zeros with "
        "x = -0.39 (seed 7419000160: plait +inf, JAX NaN)",
        lambda p, mode, msg: _infinity_for_nan(mode, msg) and _uses(p, "tanh"),
    ),
    Deviation(
        "norm's gradient at zero",
        "deviation",
        "plait's linalg.norm differentiates to 0 at the zero vector (a subgradient of every norm; its square root "
        "is taken of a stand-in value there), JAX's to NaN; documented in plait_core/numpy/norms.py. Measured "
        "(seed 7419000172, norm(prod(x)) where one batch element has a zero entry: plait 0, JAX NaN; seed "
        "7529000292, norm of a -0.0 pair: plait -0.0, JAX NaN)",
        lambda p, mode, msg: mode in _DIFF_MODES and _ZERO_FOR_NAN.search(msg) is not None
        and _uses(p, "linalg.norm"),
    ),
    Deviation(
        "the derivative of std where its values are equal",
        "deviation",
        "std of values that are all equal (a cummin that reached its minimum early, a clip) is sqrt of a variance "
        "that is 0 in exact arithmetic, where sqrt has no derivative; what each framework returns is what its "
        "rounding makes of the mean: JAX's eager jnp.mean is one compiled program, where XLA divides by n as a "
        "product with 1 / n, which rounds, so the deviations x - mean are equal non-zero numbers and the "
        "gradient comes out 0; plait's eager mean and std are one compiled program too (issue 26) and round as "
        "JAX's; compiled inside a larger program, each framework's own program rounds its own way. Matched only "
        "where the float64 oracle finds no derivative at the point, or finds it exactly 0 (the values stay equal "
        "along the direction). Measured (seed 7429000638, std(cummin(x)) with x[0] the minimum: eager plait 0, "
        "JAX 0 (plait NaN while its eager mean divided exactly); jit(vmap(grad)) plait 0.266, JAX 0.053)",
        lambda p, mode, msg: mode in _DIFF_MODES and (NO_DERIVATIVE in msg or ZERO_DERIVATIVE in msg)
        and _uses(p, "std(", "var("),
    ),
    Deviation(
        "a float16 cumprod keeps its running product finite",
        "deviation",
        "plait's cumprod of float16 values rounds each output to float16 but carries the running product at "
        "XLA's higher internal precision, so a product that overflows float16 and then meets a zero gives 0 "
        "(the exact product times 0); JAX's scan rounds every partial product to float16, so it is inf * 0 = NaN. "
        "Measured (seed 7729000456, cumprod of float16 [48.56, 48.56, 48.56, 48.56, 0]: plait eager, jit and vmap "
        "[48.56, 2358, inf, inf, 0], JAX [..., inf, inf, NaN])",
        lambda p, mode, msg: "values differ" in msg and "want np.float64(nan)" in msg
        and "got np.float64(nan)" not in msg and _uses(p, "cumprod") and _uses_float16(p),
    ),
)


def _uses_float16(program: Program) -> bool:
    return any(v.dtype == "float16" for v in program.inputs) or _uses(program, "float16")


def _infinity_for_nan(mode: str, msg: str) -> bool:
    """A derivative that is an infinity where JAX's is NaN."""
    return mode in _DIFF_MODES and "values differ" in msg and "want np.float64(nan)" in msg and (
        "got np.float64(inf)" in msg or "got np.float64(-inf)" in msg
    )


def _bool_divided(program: Program) -> bool:
    kinds = {v.name: v.kind for v in program.all_vars()}
    return any(
        s.op == "binary:/" and s.expr.startswith("{0} /") and kinds.get(s.args[0]) == "b" for s in program.stmts
    )


_ZERO_FOR_NAN = re.compile(r"got np\.float64\(-?0\.0\), want np\.float64\(nan\)")
_GOT_WANT = re.compile(r"got np\.float64\(([-+0-9.e]+|nan|inf)\), want np\.float64\(([-+0-9.e]+|nan|inf)\)")


def _float16_rounding(program: Program, msg: str) -> bool:
    """In a program with float16 inputs or values: both values below 2e-2 (twice float16's tolerance), or
    below 0.1 where the float64 oracle finds the derivative exactly 0."""
    m = _GOT_WANT.search(msg)
    if m is None or not _uses_float16(program):
        return False
    bound = 0.1 if ZERO_DERIVATIVE in msg else 2e-2
    return max(abs(float(m.group(1))), abs(float(m.group(2)))) < bound


def excuse(program: Program, mode: str, message: str) -> Deviation | None:
    """The entry that excuses this failure, if any."""
    for d in DEVIATIONS:
        if d.matches(program, mode, message):
            return d
    return None
