"""Lowering plait programs to StableHLO MLIR text.

:func:`lower_jaxpr` turns a closed jaxpr into a module whose public ``@main``
function jaxlib compiles (``_jaxlib.compile_stablehlo``).  Each primitive is
lowered by its rule in :data:`lowering_rules` (grouped by family under
``rules/``); a called jaxpr (``closed_call``) becomes a private function,
lowered once per module however often it is called, and the sub-programs of
control flow become regions.

The entry function's parameters are, in order, the *constant arguments* (see
below) then the jaxpr's inputs, except ``float0`` ones; its results are the
jaxpr's outputs except ``float0`` ones (``float0`` has no HLO type: such an
input carries no data and is simply not passed, such an output is all zeros
of a known shape, to be made on the host; see
:attr:`LoweredModule.float0_inputs` / :attr:`LoweredModule.float0_outputs`).

**Constants.**  The closed jaxpr's constants are embedded in the text as
dense constants when they are host values (NumPy arrays or scalars, Python
scalars) of at most :data:`MAX_EMBEDDED_CONST_BYTES` bytes; every other
constant (a larger array, or a device ``Array``, whose data would first have
to come back to the host) is a leading runtime argument of ``@main``: those
are :attr:`LoweredModule.const_args` (``num_const_args`` of them), to be passed
before the inputs on every call.  Constants of sub-programs (branches, loop
bodies, called jaxprs) are always embedded.

**Semantics.**  The rules reproduce core's semantics (XLA's, which core's
NumPy implementations follow) bit for bit for integer and boolean results.
Floating-point results agree to a few units in the last place, with these
known differences: subnormal results of arithmetic are flushed to zero on
CPU, ``max``/``min`` order ``-0.0`` below ``+0.0``, and sums in cumulative
reductions and scatters are associated differently.  See each family's
module under ``rules/``.

**Donation.**  Each donated input is aliased to the first output of the same
shape and dtype not already taken (``{tf.aliasing_output = k : i32}``, ``k``
counting the entry function's results); :attr:`LoweredModule.aliased_outputs`
says which output (counting the jaxpr's outputs), or ``None`` when no such
output was free and the donation cannot be used.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from plait_core import ClosedJaxpr, ShapedArray
from plait_dispatch.lowering.context import LoweringRule, RuleContext, lower_jaxpr_into, lowering_rules
from plait_dispatch.lowering.module import (
    FLOAT0,
    Function,
    LoweringError,
    ModuleBuilder,
    Value,
    concrete_shape,
)

__all__ = [
    "MAX_EMBEDDED_CONST_BYTES",
    "PLATFORMS",
    "LoweredModule",
    "SpmdLayout",
    "LoweringError",
    "LoweringRule",
    "RuleContext",
    "Value",
    "lower_jaxpr",
    "lowering_rules",
]

MAX_EMBEDDED_CONST_BYTES: Final[int] = 1 << 16
"""Host constants up to this many bytes are embedded in the module's text;
larger ones (and device arrays) are passed as leading arguments."""

PLATFORMS: Final[frozenset[str]] = frozenset({"cpu", "cuda", "rocm", "tpu"})
"""Platform names :func:`lower_jaxpr` accepts (the text does not depend on it)."""


@dataclass(frozen=True, slots=True, eq=False)
class LoweredModule:
    """A StableHLO module made from a closed jaxpr, and how to call it.

    * ``text``: the MLIR module (``module @name { func.func public @main(...) ... }``);
    * ``in_avals`` / ``out_avals``: the jaxpr's input and output types (all of them);
    * ``donated_invars``: one flag per input;
    * ``aliased_outputs``: per input, the output (index into ``out_avals``) its
      buffer is donated to, or ``None`` (not donated, or no output of its shape
      and dtype was free);
    * ``const_args`` / ``num_const_args``: constants passed as leading arguments;
    * ``const_avals``: their types;
    * ``float0_inputs`` / ``float0_outputs``: indices of the ``float0`` inputs
      (not passed) and outputs (not returned: zeros of their aval, made on the host);
    * ``platform``: the platform it was lowered for;
    * ``host_callbacks``: the Python functions its host-callback custom calls
      name by index (passed to the compiler).
    """

    text: str
    name: str
    in_avals: tuple[ShapedArray, ...]
    out_avals: tuple[ShapedArray, ...]
    donated_invars: tuple[bool, ...]
    aliased_outputs: tuple[int | None, ...]
    const_args: tuple[Any, ...]
    const_avals: tuple[ShapedArray, ...]
    float0_inputs: tuple[int, ...]
    float0_outputs: tuple[int, ...]
    platform: str
    host_callbacks: tuple[Any, ...] = ()

    @property
    def num_const_args(self) -> int:
        """How many leading arguments of ``@main`` are constants."""
        return len(self.const_args)

    @property
    def arg_avals(self) -> tuple[ShapedArray, ...]:
        """The types of ``@main``'s parameters: constants, then the non-``float0`` inputs."""
        skip = set(self.float0_inputs)
        return self.const_avals + tuple(a for i, a in enumerate(self.in_avals) if i not in skip)

    @property
    def result_avals(self) -> tuple[ShapedArray, ...]:
        """The types of ``@main``'s results: the non-``float0`` outputs."""
        skip = set(self.float0_outputs)
        return tuple(a for i, a in enumerate(self.out_avals) if i not in skip)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True, eq=False)
class SpmdLayout:
    """How an SPMD module is laid out: ``devices`` (partition ``i`` runs on
    ``devices[i]``), the ``mhlo.sharding`` text of each input of the jaxpr
    (constants passed as arguments are replicated) and of each output
    (``None``: XLA's partitioner chooses)."""

    devices: tuple[Any, ...]
    in_shardings: tuple[str, ...]
    out_shardings: tuple[str | None, ...]

    def attributes(
        self,
        module: ModuleBuilder,
        attrs: list[str | None],
        kept_inputs: Sequence[int],
        float0_outputs: Sequence[int],
        n_out: int,
    ) -> tuple[list[str | None], list[str | None]]:
        """Set the module's partition count; the argument and result attributes."""
        module.attrs["mhlo.num_partitions"] = f"{len(self.devices)} : i32"
        module.attrs["mhlo.num_replicas"] = "1 : i32"
        module.spmd = self.devices
        n_const = len(attrs) - len(kept_inputs)
        shardings = ['"{replicated}"'] * n_const + [f'"{self.in_shardings[i]}"' for i in kept_inputs]
        args = [
            ", ".join(x for x in (a, f"mhlo.sharding = {sh}") if x) for a, sh in zip(attrs, shardings)
        ]
        outs: list[str | None] = [
            None if self.out_shardings[j] is None else f'mhlo.sharding = "{self.out_shardings[j]}"'
            for j in range(n_out)
            if j not in float0_outputs
        ]
        return list(args), outs


def _is_host_value(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, bool, int, float, complex))


def _embed(x: Any, aval: ShapedArray) -> bool:
    if aval.dtype == FLOAT0:
        return True
    if not _is_host_value(x):
        return False
    nbytes = int(np.prod(concrete_shape(aval), dtype=np.int64)) * aval.dtype.itemsize
    return nbytes <= MAX_EMBEDDED_CONST_BYTES


def _check_arg_avals(closed: ClosedJaxpr, arg_avals: Sequence[ShapedArray] | None) -> tuple[ShapedArray, ...]:
    expected = closed.in_avals
    if arg_avals is None:
        return tuple(expected)
    got = tuple(arg_avals)
    if len(got) != len(expected):
        raise ValueError(f"lower_jaxpr: arg_avals has {len(got)} entries but the jaxpr takes {len(expected)} inputs")
    for k, (a, e) in enumerate(zip(got, expected)):
        if a.dtype != e.dtype or concrete_shape(a) != concrete_shape(e):
            raise ValueError(
                f"lower_jaxpr: arg_avals[{k}] is {a.str_short()} but the jaxpr's input {k} is {e.str_short()}"
            )
    return got


def _check_donated(donated_invars: Sequence[bool], n: int) -> tuple[bool, ...]:
    donated = tuple(bool(d) for d in donated_invars)
    if not donated:
        return (False,) * n
    if len(donated) != n:
        raise ValueError(f"lower_jaxpr: donated_invars has {len(donated)} entries but the jaxpr takes {n} inputs")
    return donated


def _aliases(
    in_avals: Sequence[ShapedArray], out_avals: Sequence[ShapedArray], donated: Sequence[bool]
) -> tuple[int | None, ...]:
    """The output each donated input is aliased to: the first free one of its shape and dtype."""
    taken: set[int] = set()
    out: list[int | None] = []
    for a, d in zip(in_avals, donated):
        match = None
        if d and a.dtype != FLOAT0:
            shape = concrete_shape(a)
            for j, o in enumerate(out_avals):
                if j not in taken and o.dtype == a.dtype and concrete_shape(o) == shape:
                    match = j
                    taken.add(j)
                    break
        out.append(match)
    return tuple(out)


def lower_jaxpr(
    closed: ClosedJaxpr,
    *,
    name: str = "main",
    donated_invars: Sequence[bool] = (),
    arg_avals: Sequence[ShapedArray] | None = None,
    platform: str = "cpu",
    spmd: SpmdLayout | None = None,
) -> LoweredModule:
    """Lower ``closed`` to a StableHLO module named ``name`` (see the module docs).

    ``donated_invars`` (one flag per input, or empty for none) marks inputs
    whose buffers the computation may reuse for an output; ``arg_avals`` are
    the types the module will be called with (default: the jaxpr's input
    types; they may differ from those in weak type only).  Raises
    ``NotImplementedError`` naming a primitive that has no rule (or why it is
    not supported) and :class:`LoweringError` (a ``ValueError``) for programs
    StableHLO cannot express, such as symbolic shapes.

    ``spmd`` makes a module for XLA's SPMD partitioner: the number of
    partitions and an ``mhlo.sharding`` per input and output (see
    :class:`SpmdLayout`).
    """
    if platform not in PLATFORMS:
        raise ValueError(f"lower_jaxpr: unknown platform {platform!r}; expected one of {sorted(PLATFORMS)}")
    jaxpr = closed.jaxpr
    in_avals = _check_arg_avals(closed, arg_avals)
    out_avals = tuple(closed.out_avals)
    donated = _check_donated(donated_invars, len(in_avals))
    aliased = _aliases(in_avals, out_avals, donated)
    float0_inputs = tuple(i for i, a in enumerate(in_avals) if a.dtype == FLOAT0)
    float0_outputs = tuple(i for i, a in enumerate(out_avals) if a.dtype == FLOAT0)
    result_index = {j: k for k, j in enumerate(j for j in range(len(out_avals)) if j not in float0_outputs)}

    embedded = [_embed(c, v.aval) for v, c in zip(jaxpr.constvars, closed.consts)]
    const_args = tuple(c for c, e in zip(closed.consts, embedded) if not e)
    const_avals = tuple(v.aval for v, e in zip(jaxpr.constvars, embedded) if not e)
    kept_inputs = [i for i in range(len(in_avals)) if i not in float0_inputs]
    attrs: list[str | None] = [None] * len(const_args)
    for i in kept_inputs:
        j = aliased[i]
        attrs.append(None if j is None else f"tf.aliasing_output = {result_index[j]} : i32")

    module = ModuleBuilder(name, platform)
    result_attrs: list[str | None] = []
    if spmd is not None:
        attrs, result_attrs = spmd.attributes(module, attrs, kept_inputs, float0_outputs, len(out_avals))
    main = Function(
        "main",
        list(const_avals) + [in_avals[i] for i in kept_inputs],
        public=True,
        arg_attrs=attrs,
        result_attrs=result_attrs,
    )
    ctx = RuleContext(module, main.body)
    params = iter(main.args)
    consts: list[Value] = []
    for v, c, e in zip(jaxpr.constvars, closed.consts, embedded):
        consts.append(main.body.constant(np.asarray(c) if v.aval.dtype != FLOAT0 else 0, v.aval) if e else next(params))
    args = [main.body.constant(0, a) if a.dtype == FLOAT0 else next(params) for a in in_avals]
    outs = lower_jaxpr_into(ctx, jaxpr, consts, args)
    results = [o for j, o in enumerate(outs) if j not in float0_outputs]
    module.functions.append(main.finish(results))
    return LoweredModule(
        text=module.text(),
        name=module.name,
        in_avals=in_avals,
        out_avals=out_avals,
        donated_invars=donated,
        aliased_outputs=aliased,
        const_args=const_args,
        const_avals=const_avals,
        float0_inputs=float0_inputs,
        float0_outputs=float0_outputs,
        platform=platform,
        host_callbacks=tuple(module.host_callbacks),
    )


# Register every rule (importing a family module fills lowering_rules).
from plait_dispatch.lowering.rules import (  # noqa: E402
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
    sharding,
    structural,
)
