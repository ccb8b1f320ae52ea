"""``cond``, ``while`` and ``scan``: their bodies are masked jaxprs.

Each body is staged anew on padded data (:func:`~plait_masking.trace.stage_masked`),
taking the logical sizes as extra leading operands so that they may be
traced or batched.  A ``while`` loop whose trip count depends on a symbolic
size (``fori_loop(0, x.shape[0], ...)``) runs exactly the logical number of
iterations, since its predicate reads the logical size.  A ``scan`` over a
symbolic length runs over the padded length with a step counter and keeps
the old carry once the counter passes the logical length, so the carry stops
at ``n``; the stacked outputs past ``n`` are padding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from plait_core import ClosedJaxpr, ShapedArray, dtypes, ops
from plait_core.abstract import get_aval
from plait_core.primitives import elementwise as ew
from plait_core.primitives.control_flow import cond_p, join_consts, scan_p, split_list, while_p
from plait_core.staging import trace_to_jaxpr
from plait_masking.env import MaskEnv, is_ragged
from plait_masking.registry import masking_rules
from plait_masking.trace import eval_masked, mask_jaxpr, stage_masked

# ---------------------------------------------------------------------------
# cond


def _cond_rule(env: MaskEnv, vals: Sequence[Any], avals: Sequence[ShapedArray], *, branches: Any) -> list[Any]:
    index, ops_ = vals[0], list(vals[1:])
    sizes = env.logical_values()
    size_avals = [get_aval(v).strip_weak_type() for v in sizes]
    in_avals = [env.padded_aval(a) for a in branches[0].in_avals]
    staged: list[ClosedJaxpr] = []
    for br in branches:

        def fun(*args: Any, br: ClosedJaxpr = br) -> list[Any]:
            return eval_masked(env.rebind(args[: len(sizes)]), br, args[len(sizes) :])

        staged.append(trace_to_jaxpr(fun, size_avals + in_avals))
    bodies, consts = join_consts(staged)
    return list(cond_p.bind(index, *consts, *sizes, *ops_, branches=tuple(bodies)))


masking_rules[cond_p] = _cond_rule


# ---------------------------------------------------------------------------
# while


def _while_rule(
    env: MaskEnv,
    vals: Sequence[Any],
    avals: Sequence[ShapedArray],
    *,
    cond_jaxpr: ClosedJaxpr,
    body_jaxpr: ClosedJaxpr,
    cond_nconsts: int,
    body_nconsts: int,
) -> list[Any]:
    cconsts, bconsts, init = split_list(vals, cond_nconsts, body_nconsts)
    cj, c_lead = mask_jaxpr(env, cond_jaxpr)
    bj, b_lead = mask_jaxpr(env, body_jaxpr)
    return list(while_p.bind(
        *c_lead, *cconsts, *b_lead, *bconsts, *init,
        cond_jaxpr=cj, body_jaxpr=bj,
        cond_nconsts=len(c_lead) + cond_nconsts, body_nconsts=len(b_lead) + body_nconsts,
    ))


masking_rules[while_p] = _while_rule


# ---------------------------------------------------------------------------
# scan


def _scan_rule(
    env: MaskEnv,
    vals: Sequence[Any],
    avals: Sequence[ShapedArray],
    *,
    jaxpr: ClosedJaxpr,
    num_consts: int,
    num_carry: int,
    length: Any,
    reverse: bool,
    unroll: int,
    linear: Any,
) -> list[Any]:
    consts, init, xs = split_list(vals, num_consts, num_carry)
    padded_length = env.padded_dim(length)
    if not is_ragged(length):
        body, lead = mask_jaxpr(env, jaxpr)
        return list(scan_p.bind(
            *lead, *vals, jaxpr=body, num_consts=len(lead) + num_consts, num_carry=num_carry,
            length=padded_length, reverse=reverse, unroll=unroll, linear=(False,) * (len(lead) + len(vals)),
        ))
    idt = dtypes.default_int_dtype()
    counter_aval = ShapedArray((), idt)
    in_avals = list(jaxpr.in_avals)
    c_avals, carry_avals, x_avals = split_list(in_avals, num_consts, num_carry)

    def step(sub: MaskEnv, *args: Any) -> list[Any]:
        cs, (i,), carry, x = split_list(args, num_consts, 1, num_carry)
        outs = eval_masked(sub, jaxpr, [*cs, *carry, *x])
        new_carry, ys = outs[:num_carry], outs[num_carry:]
        # Past the logical length the carry keeps its value: it stops at n.
        live = ops.lt(i, sub.size(length, idt))
        kept = [ops.select(live, ops.as_dtype(new, get_aval(old).dtype, get_aval(old).weak_type), old)
                for old, new in zip(carry, new_carry)]
        nxt = ew.add_p.bind(i, np.asarray(-1 if reverse else 1, idt))
        return [nxt, *kept, *ys]

    body, lead = stage_masked(env, step, [*c_avals, counter_aval, *carry_avals, *x_avals])
    start = np.asarray(padded_length - 1 if reverse else 0, idt)
    n_in = len(lead) + len(vals) + 1
    outs = scan_p.bind(
        *lead, *consts, start, *init, *xs, jaxpr=body, num_consts=len(lead) + num_consts, num_carry=num_carry + 1,
        length=padded_length, reverse=reverse, unroll=unroll, linear=(False,) * n_in,
    )
    return list(outs[1:])


masking_rules[scan_p] = _scan_rule
