"""Lowering of the host-callback primitive: one ``stablehlo.custom_call`` of
jaxlib's CPU Python-callback target (``_jaxlib.HOST_CALLBACK_TARGET``), the
Python function registered with the module by index and handed to the
compiler with it.  Compiled code calls back into Python without leaving the
program.

A call with effects (``io``, ``debug``) is marked ``has_side_effect`` so that
XLA keeps it; an ordered one also takes and returns a ``!stablehlo.token``,
chained through the ordered calls of its block (the first one starts from a
fresh ``stablehlo.after_all``), which fixes their order.

In a module over several devices (SPMD), where the call runs follows JAX
0.10.2: where XLA chooses the layout, one device (the program's first, or
the device of the call's ``sharding``) runs it once on the whole values
(``{maximal device=k}``); inside ``shard_map`` every device runs it on its
own pieces (``{manual}``); a ``partitioned`` debug call runs on every
device with its pieces wherever it is (jaxlib's partitioned callback
target, whose partitioner keeps the operands' layouts).  An ordered
``debug.callback`` over more than one device is refused, as JAX does (the
devices' calls have no order among themselves); an ordered ``io_callback``
keeps its order per device.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ShapedArray
from plait_core.primitives.callbacks import HostCallback, callback_p, check_results
from plait_dispatch import _jaxlib
from plait_dispatch.lowering.context import RuleContext, lowering_rules
from plait_dispatch.lowering.module import LoweringError, Value, concrete_shape, result_types
from plait_dispatch.lowering.rules.sharding import current_mesh


class _Token(Value):
    """An SSA value of type ``!stablehlo.token``."""

    __slots__ = ()

    @property
    def type(self) -> str:
        return "!stablehlo.token"


#: The abstract value a token carries (never rendered: tokens print their own type).
_TOKEN_AVAL = ShapedArray((), np.dtype(np.bool_))


def _layout(rank: int) -> str:
    return "dense<[" + ", ".join(str(d) for d in reversed(range(rank))) + "]> : tensor<" + str(rank) + "xindex>"


def _host_function(callback: HostCallback, result_avals: Sequence[ShapedArray], token: bool) -> Any:
    """What XLA calls: the callback on NumPy arrays, its results checked
    (and the token handed back first, for an ordered call)."""

    def run(*args: Any) -> tuple[Any, ...]:
        if token:
            tok, *rest = args
            return (tok, *check_results(callback.name, callback(*rest), result_avals))
        return tuple(check_results(callback.name, callback(*args), result_avals))

    return run


def _token(ctx: RuleContext) -> _Token:
    """The current token of ``ctx``'s block (a fresh one for its first ordered call)."""
    tok = ctx.module.effect_tokens.get(id(ctx.block))
    if tok is None:
        name = ctx.block.namer.fresh()
        ctx.block.lines.append(f'{name} = "stablehlo.after_all"() : () -> !stablehlo.token')
        tok = _Token(name, _TOKEN_AVAL)
    return tok


def _placement(ctx: RuleContext, callback: HostCallback, kind: str, ordered: bool, sharding: Any,
               partitioned: bool) -> tuple[str, str | None]:  # fmt: skip
    """The custom-call target and the ``mhlo.sharding`` text of the call
    (``None``: no annotation) in the module being built (see the module docs)."""
    devices = ctx.module.spmd
    if devices is None:
        return _jaxlib.HOST_CALLBACK_TARGET, None
    if ordered and kind == "debug" and len(devices) > 1 and not callback.order_per_device:
        raise LoweringError(
            f"host callback {callback.name}: an ordered debug callback cannot run in a program over "
            f"{len(devices)} devices (each device would call it, in no order among them), as in JAX; "
            "pass ordered=False, or use io_callback(..., ordered=True)"
        )
    if partitioned:
        return _jaxlib.PARTITIONED_HOST_CALLBACK_TARGET, None
    if current_mesh() is not None:
        if sharding is not None:
            raise NotImplementedError(
                f"not supported: host callback {callback.name} with sharding= inside shard_map, where every "
                "device calls the callback on its own pieces (JAX refuses it too); drop sharding="
            )
        return _jaxlib.HOST_CALLBACK_TARGET, _jaxlib.manual_sharding_text()
    index = 0
    if sharding is not None:
        device = sharding._device_assignment[0]
        found = [k for k, d in enumerate(devices) if d is device or d == device]
        if not found:
            raise LoweringError(
                f"host callback {callback.name}: its sharding names {device}, which is not one of the "
                f"{len(devices)} devices the program runs on"
            )
        index = found[0]
    return _jaxlib.HOST_CALLBACK_TARGET, _jaxlib.maximal_sharding_text(index)


@lowering_rules.register(callback_p)
def _callback(
    ctx: RuleContext, *args: Value, callback: HostCallback, result_avals: tuple[ShapedArray, ...], kind: str,
    ordered: bool, vmap_method: str | None, sharding: Any, partitioned: bool,
) -> list[Value]:  # fmt: skip
    target, placement = _placement(ctx, callback, kind, ordered, sharding, partitioned)
    for a in result_avals:
        concrete_shape(a)
    index = len(ctx.module.host_callbacks)
    ctx.module.host_callbacks.append(_host_function(callback, result_avals, ordered))
    operands: list[Value] = list(args)
    layouts = [_layout(len(v.shape)) for v in args]
    results_text = [result_types([a]) for a in result_avals]
    result_layouts = [_layout(len(a.shape)) for a in result_avals]
    if ordered:
        operands = [_token(ctx), *operands]
        layouts = ["dense<> : tensor<0xindex>", *layouts]
        results_text = ["!stablehlo.token", *results_text]
        result_layouts = ["dense<> : tensor<0xindex>", *result_layouts]
    attrs = [
        f'call_target_name = "{target}"',
        "api_version = 4 : i32",
        f"has_side_effect = {'false' if kind == 'pure' else 'true'}",
        f"backend_config = {{index = {index} : ui64}}",
        f"operand_layouts = [{', '.join(layouts)}]",
        f"result_layouts = [{', '.join(result_layouts)}]",
    ]
    if placement is not None:
        attrs.append(f'mhlo.sharding = "{placement}"')
    names = [v.name for v in operands]
    ctx.block.namer.used.update(names)
    n = len(results_text)
    base = ctx.block.namer.fresh() if n else ""
    lhs = "" if n == 0 else (f"{base} = " if n == 1 else f"{base}:{n} = ")
    types = ", ".join(v.type for v in operands)
    out_types = results_text[0] if n == 1 else "(" + ", ".join(results_text) + ")"
    ctx.block.lines.append(
        f'{lhs}"stablehlo.custom_call"({", ".join(names)}) {{{", ".join(attrs)}}} : ({types}) -> {out_types}'
    )
    outs = [base] if n == 1 else [f"{base}#{k}" for k in range(n)]
    if ordered:
        ctx.module.effect_tokens[id(ctx.block)] = _Token(outs[0], _TOKEN_AVAL)
        outs = outs[1:]
    return [Value(o, a) for o, a in zip(outs, result_avals)]
