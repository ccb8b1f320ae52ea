"""Batching: a transformer encoder layer on a ragged batch (a pile).

32 sequences of lengths 8 to 125 (model width 32, 4 heads, MLP 64), several
ways, all under ``jit`` with compilation done before timing, forward and
``grad`` (of the summed squares of the true outputs, with respect to the
weights):

* **pile**: ``jit(vmap(layer, in_axes=(pile_axis, None), out_axes=pile_axis))``
  on the :class:`~plait.Pile` that ``Pile.from_arrays(sequences)`` builds by
  default (the layer is written for one sequence), with plait's automatic
  choice of layout per operation: the pile carries a coarse plan of buckets
  (``static_lengths="plan"``, ``plait_batching.length_plan``): only the plan
  is static, the lengths stay traced and ``vmap`` sorts the elements while
  running and computes them in at most 3 buckets of similar lengths, so
  ``jit`` compiles once per plan; the row also counts the distinct plans of
  50 random batches of 32 lengths uniform in 8-125 padded to 128 (as many
  compilations; exact static lengths: one per batch);
* **pile with traced lengths**: the same pile with only its capacity static
  (``Pile(data, lengths, capacity=...)``, as ``pad_to`` with a capacity
  gives): one compilation for every batch of that capacity; the dense
  layers, layer norms and activations run on the packed tokens, attention
  on padded blocks (see ``plait_batching.packed``);
* **pile with static lengths**: the same pile built with
  ``static_lengths=True``: buckets of the exact lengths, each padded only to
  its own longest (``plait_batching.buckets``); ``jit`` compiles once per set
  of lengths;
* **padded and masked**: the same layer rewritten to take a padded sequence
  and its length, masking the attention by hand, ``jit(vmap(...))``;
* **loop**: the layer called once per sequence from Python, either as
  ``jit(layer)`` (one compilation per distinct length, all done before
  timing) or eagerly, operation by operation.

A row with every length equal compares the pile with the dense
``jit(vmap(layer))``.  A last row times the *first* pass over a batch of new
lengths, compilation included, as a program meets it when lengths vary from
batch to batch: the pile compiles one program, the loop of ``jit(layer)``
one per distinct length.

JAX (which has no piles) runs the padded-and-masked version, the loop and
the dense layer.  Issue 28's targets compare plait with itself: the pile at
most 0.7x plait's padded-and-masked layer and 0.85x the loop of
``jit(layer)``, forward and ``grad``, and within 1.05x of the dense layer
when the lengths are equal; the last column says how each row fares, and
the plait / JAX column compares the same program.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

import numpy as np

from benchmarks.harness import Result, interleaved, interleaved_ratio

N_SEQ, D, H, F = 32, 32, 4, 64
LENGTHS = [int(n) for n in np.random.default_rng(0).integers(8, 129, N_SEQ)]


def _params() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(1)
    p = {k: (rng.standard_normal((D, D)) / np.sqrt(D)).astype(np.float32) for k in ("wq", "wk", "wv", "wo")}
    p["w1"] = (rng.standard_normal((D, F)) / np.sqrt(D)).astype(np.float32)
    p["w2"] = (rng.standard_normal((F, D)) / np.sqrt(F)).astype(np.float32)
    return p


def _layer(np_mod: Any, nn_mod: Any, masked: bool) -> Callable[..., Any]:
    """The encoder layer for one sequence ``x`` (n, D); ``masked``: ``x`` is
    padded and ``n`` is its true length (an extra argument)."""

    def layer(x: Any, n: Any, p: dict[str, Any]) -> Any:
        rows = x.shape[0]

        def heads(y: Any) -> Any:
            return y.reshape(rows, H, D // H).transpose(1, 0, 2)

        def norm(y: Any) -> Any:
            mu = np_mod.mean(y, axis=-1, keepdims=True)
            return (y - mu) / np_mod.sqrt(np_mod.var(y, axis=-1, keepdims=True) + 1e-5)

        q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
        s = np_mod.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D // H)
        where = (np_mod.arange(rows) < n)[None, None, :] if masked else None
        att = nn_mod.softmax(s, axis=-1, where=where) if masked else nn_mod.softmax(s, axis=-1)
        o = np_mod.einsum("hqk,hkd->hqd", att, v).transpose(1, 0, 2).reshape(rows, D)
        x = norm(x + o @ p["wo"])
        return norm(x + nn_mod.gelu(x @ p["w1"]) @ p["w2"])

    if masked:
        return layer
    return lambda x, p: layer(x, None, p)


def _plait() -> Any | None:
    try:
        return importlib.import_module("plait_dispatch")
    except ImportError:
        return None


def _check(got: list[np.ndarray], want: list[np.ndarray], what: str) -> None:
    for i, (a, b) in enumerate(zip(got, want)):
        np.testing.assert_allclose(a, b, rtol=2e-3, atol=2e-3, err_msg=f"{what}: sequence {i}")


def _loss(np_mod: Any, nn_mod: Any, masked: bool) -> Callable[..., Any]:
    """The sum of squares of the layer's true outputs (what the grad rows differentiate)."""
    layer = _layer(np_mod, nn_mod, masked)
    if not masked:
        return lambda p, x: np_mod.sum(layer(x, p) ** 2)

    def loss(p: Any, x: Any, n: Any) -> Any:
        keep = (np_mod.arange(x.shape[0]) < n)[:, None]
        return np_mod.sum(np_mod.where(keep, layer(x, n, p), 0.0) ** 2)

    return loss


def batching_results(jax: Any | None, repeats: int = 15) -> list[Result]:
    """The pile rows; empty when plait-dispatch (``jit``) is not installed."""
    dispatch = _plait()
    if dispatch is None:
        return []
    import plait_autodiff
    import plait_core.numpy as pnp
    from plait_batching import Pile, pile_axis, vmap
    from plait_core import nn

    jit, block, grad = dispatch.jit, dispatch.block_until_ready, plait_autodiff.grad
    rng = np.random.default_rng(2)
    seqs = [rng.standard_normal((n, D)).astype(np.float32) for n in LENGTHS]
    pile = Pile.from_arrays(seqs)  # by default: a plan of buckets (static), the lengths traced, no capacity
    assert pile.static_lengths is not None and pile.capacity is None, pile
    padded, lengths = np.asarray(pile.data), np.asarray(pile.lengths)
    p = _params()
    dp = dispatch.device_put(p)
    ppile = dispatch.device_put(pile)
    assert ppile.static_lengths == pile.static_lengths
    # The same pile with only its capacity (the sum of the lengths) static: attention stays padded.
    dpile = Pile(ppile.data, ppile.lengths, capacity=int(lengths.sum()))
    # The same pile with its lengths static: vmap computes it in buckets of the exact lengths.
    spile = Pile(dpile.data, dpile.lengths, capacity=dpile.capacity, static_lengths=True)
    dseqs = [dispatch.device_put(s) for s in seqs]
    dpadded, dlengths = dpile.data, dpile.lengths

    piled = jit(vmap(_layer(pnp, nn, False), in_axes=(pile_axis, None), out_axes=pile_axis))
    masked = jit(vmap(_layer(pnp, nn, True), in_axes=(0, 0, None)))
    single = jit(_layer(pnp, nn, False))
    loss_one, loss_masked = _loss(pnp, nn, False), _loss(pnp, nn, True)

    def loss_pile(p: Any, x: Any) -> Any:
        return pnp.sum(vmap(lambda x, p: loss_one(p, x), in_axes=(pile_axis, None))(x, p))

    grad_pile = jit(grad(loss_pile))
    grad_masked = jit(grad(lambda p, x, n: pnp.sum(vmap(loss_masked, in_axes=(None, 0, 0))(p, x, n))))
    grad_single = jit(grad(loss_one))

    def plait_traced() -> Any:
        return block(piled(dpile, dp).data)

    def plait_static() -> Any:
        return block(piled(spile, dp).data)

    def plait_pile() -> Any:
        return block(piled(ppile, dp).data)

    def plait_masked() -> Any:
        return block(masked(dpadded, dlengths, dp))

    def plait_loop() -> Any:
        return block([single(s, dp) for s in dseqs])

    def plait_grad_traced() -> Any:
        return block(grad_pile(dp, dpile))

    def plait_grad_static() -> Any:
        return block(grad_pile(dp, spile))

    def plait_grad_pile() -> Any:
        return block(grad_pile(dp, ppile))

    def plait_grad_masked() -> Any:
        return block(grad_masked(dp, dpadded, dlengths))

    def plait_grad_loop() -> Any:
        return block([grad_single(dp, s) for s in dseqs])

    eager = _layer(pnp, nn, False)

    def plait_eager_loop() -> Any:
        return block([eager(s, dp) for s in dseqs])

    reference = [np.asarray(single(s, dp)) for s in dseqs]
    _check([np.asarray(a) for a in piled(ppile, dp).unpack()], reference, "pile (a plan)")
    _check([np.asarray(a) for a in piled(dpile, dp).unpack()], reference, "pile with traced lengths")
    _check([np.asarray(a) for a in piled(spile, dp).unpack()], reference, "pile with static lengths")
    out = np.asarray(masked(dpadded, dlengths, dp))
    _check([out[i, :n] for i, n in enumerate(LENGTHS)], reference, "padded and masked")
    grads = [grad_single(dp, s) for s in dseqs]
    grad_reference = {k: sum(np.asarray(g[k]) for g in grads) for k in p}
    for what, got in (("pile (a plan)", grad_pile(dp, ppile)), ("pile with traced lengths", grad_pile(dp, dpile)),
                      ("pile with static lengths", grad_pile(dp, spile)),
                      ("padded and masked", grad_masked(dp, dpadded, dlengths))):  # fmt: skip
        for k in p:
            np.testing.assert_allclose(np.asarray(got[k]), grad_reference[k], rtol=2e-3, atol=2e-2,
                                       err_msg=f"grad, {what}: {k}")  # fmt: skip

    jax_masked = jax_loop = jax_eager_loop = jax_grad_masked = jax_grad_loop = None
    if jax is not None:
        jnp, jnn = jax.numpy, jax.nn
        jp = jax.device_put(p)
        jpadded, jlengths = jax.device_put(padded), jax.device_put(lengths)
        jseqs = [jax.device_put(s) for s in seqs]
        jm = jax.jit(jax.vmap(_layer(jnp, jnn, True), in_axes=(0, 0, None)))
        js = jax.jit(_layer(jnp, jnn, False))
        jloss_one, jloss_masked = _loss(jnp, jnn, False), _loss(jnp, jnn, True)
        jgm = jax.jit(jax.grad(lambda p, x, n: jnp.sum(jax.vmap(jloss_masked, in_axes=(None, 0, 0))(p, x, n))))
        jgs = jax.jit(jax.grad(jloss_one))

        def jax_masked() -> Any:
            return jax.block_until_ready(jm(jpadded, jlengths, jp))

        def jax_loop() -> Any:
            return jax.block_until_ready([js(s, jp) for s in jseqs])

        def jax_grad_masked() -> Any:
            return jax.block_until_ready(jgm(jp, jpadded, jlengths))

        def jax_grad_loop() -> Any:
            return jax.block_until_ready([jgs(jp, s) for s in jseqs])

        jeager = _layer(jnp, jnn, False)

        def jax_eager_loop() -> Any:
            return jax.block_until_ready([jeager(s, jp) for s in jseqs])

        jout = np.asarray(jm(jpadded, jlengths, jp))
        _check([jout[i, :n] for i, n in enumerate(LENGTHS)], reference, "JAX padded and masked")
        _check([np.asarray(js(s, jp)) for s in jseqs], reference, "JAX loop")
        jgot = jgm(jp, jpadded, jlengths)
        for k in p:
            np.testing.assert_allclose(np.asarray(jgot[k]), grad_reference[k], rtol=2e-3, atol=2e-2,
                                       err_msg=f"grad, JAX padded and masked: {k}")  # fmt: skip
        jax_grad_loop()

    # Medians of interleaved runs; the pile's ratios to plait's own padded+masked layer and loop are medians of
    # the ratios of neighbouring runs (robust to the machine's load).  "pile" is the default pile (a plan).
    pile_t, jm_t = interleaved(plait_pile, jax_masked, repeats)
    masked_t, _ = interleaved(plait_masked, None, repeats)
    _, _, pile_over_masked = interleaved_ratio(plait_pile, plait_masked, 2 * repeats)
    loop_t, jl_t = interleaved(plait_loop, jax_loop, max(3, repeats // 3))
    _, _, pile_over_loop = interleaved_ratio(plait_pile, plait_loop, repeats)
    gpile_t, jgm_t = interleaved(plait_grad_pile, jax_grad_masked, max(3, repeats // 2))
    gmasked_t, _ = interleaved(plait_grad_masked, None, max(3, repeats // 2))
    _, _, gpile_over_masked = interleaved_ratio(plait_grad_pile, plait_grad_masked, repeats)
    gloop_t, jgl_t = interleaved(plait_grad_loop, jax_grad_loop, max(3, repeats // 3))
    _, _, gpile_over_loop = interleaved_ratio(plait_grad_pile, plait_grad_loop, repeats)
    traced_t, _ = interleaved(plait_traced, None, repeats)
    _, _, traced_over_masked = interleaved_ratio(plait_traced, plait_masked, repeats)
    _, _, traced_over_loop = interleaved_ratio(plait_traced, plait_loop, max(3, repeats // 2))
    gtraced_t, _ = interleaved(plait_grad_traced, None, max(3, repeats // 2))
    _, _, gtraced_over_masked = interleaved_ratio(plait_grad_traced, plait_grad_masked, max(3, repeats // 2))
    _, _, gtraced_over_loop = interleaved_ratio(plait_grad_traced, plait_grad_loop, max(3, repeats // 2))
    static_t, _ = interleaved(plait_static, None, repeats)
    _, _, static_over_masked = interleaved_ratio(plait_static, plait_masked, repeats)
    _, _, static_over_loop = interleaved_ratio(plait_static, plait_loop, max(3, repeats // 2))
    _, _, pile_over_static = interleaved_ratio(plait_pile, plait_static, repeats)
    gstatic_t, _ = interleaved(plait_grad_static, None, max(3, repeats // 2))
    _, _, gstatic_over_masked = interleaved_ratio(plait_grad_static, plait_grad_masked, max(3, repeats // 2))
    _, _, gstatic_over_loop = interleaved_ratio(plait_grad_static, plait_grad_loop, max(3, repeats // 2))
    _, _, gpile_over_static = interleaved_ratio(plait_grad_pile, plait_grad_static, max(3, repeats // 2))
    assert None not in (pile_over_masked, pile_over_loop, gpile_over_masked, gpile_over_loop, traced_over_masked,
                        traced_over_loop, gtraced_over_masked, gtraced_over_loop, static_over_masked,
                        static_over_loop, pile_over_static, gstatic_over_masked, gstatic_over_loop,
                        gpile_over_static)  # fmt: skip
    plait_eager_loop()  # the eager operations compile on first use
    if jax_eager_loop is not None:
        jax_eager_loop()
    eager_t, je_t = interleaved(plait_eager_loop, jax_eager_loop, 3)
    first_pile, first_loop, jax_first_loop = _first_passes(jax, dispatch, ppile, dseqs, dp)
    first_traced, _, _ = _first_passes(None, dispatch, dpile, dseqs, dp, loop=False)
    first_static, _, _ = _first_passes(None, dispatch, spile, dseqs, dp, loop=False)
    plans = _plans_of_random_batches()
    equal = _equal_lengths(jax, dispatch, repeats)
    rows = len(LENGTHS) * max(LENGTHS) / sum(LENGTHS)
    pairs = N_SEQ * max(LENGTHS) ** 2 / sum(n * n for n in LENGTHS)
    what = f"transformer layer, {N_SEQ} sequences of lengths {min(LENGTHS)}–{max(LENGTHS)}"
    how = (f"(the padded layout computes {rows:.1f}× the tokens and {pairs:.1f}× the attention pairs; the pile: "
           f"{ppile.static_lengths!r}, lengths traced; 50 random batches padded to 128 make {plans} plans, so compilations; "
           "exact static lengths: 50)")  # fmt: skip
    return [
        Result(f"{what}: plait pile (automatic layout, the default plan of buckets) vs JAX padded+masked", pile_t,
               jm_t, f"pile / plait padded+masked, run by run = {pile_over_masked:.2f}× (target ≤ 0.7×) {how}"),
        Result(f"{what}: Python loop of jit(layer), plait vs JAX", loop_t, jl_t,
               f"pile / loop, run by run = {pile_over_loop:.2f}× (target ≤ 0.85×)"),
        Result(f"{what}: padded+masked, plait vs JAX", masked_t, jm_t, "reference"),
        Result(f"{what}: plait pile with traced lengths (capacity static: one compilation per capacity) vs JAX "
               "padded+masked", traced_t, jm_t,
               f"pile / plait padded+masked = {traced_over_masked:.2f}×, pile / loop = {traced_over_loop:.2f}× "
               "(for information: the dense layers packed, attention padded)"),
        Result(f"{what}: plait pile with static lengths (buckets of the exact lengths) vs JAX padded+masked",
               static_t, jm_t,
               f"pile / plait padded+masked = {static_over_masked:.2f}×, pile / loop = {static_over_loop:.2f}×; "
               f"the default pile takes {pile_over_static:.2f}× its time"),
        Result(f"{what}: grad of the summed squares, plait pile (the default plan) vs JAX padded+masked", gpile_t,
               jgm_t, f"pile / plait padded+masked, run by run = {gpile_over_masked:.2f}× (target ≤ 0.7×)"),
        Result(f"{what}: grad, Python loop of jit(grad), plait vs JAX", gloop_t, jgl_t,
               f"pile / loop, run by run = {gpile_over_loop:.2f}× (target ≤ 0.85×)"),
        Result(f"{what}: grad, padded+masked, plait vs JAX", gmasked_t, jgm_t, "reference"),
        Result(f"{what}: grad, plait pile with traced lengths vs JAX padded+masked", gtraced_t, jgm_t,
               f"pile / plait padded+masked = {gtraced_over_masked:.2f}×, pile / loop = "
               f"{gtraced_over_loop:.2f}× (for information)"),
        Result(f"{what}: grad, plait pile with static lengths (buckets) vs JAX padded+masked", gstatic_t, jgm_t,
               f"pile / plait padded+masked = {gstatic_over_masked:.2f}×, pile / loop = "
               f"{gstatic_over_loop:.2f}×; the default pile takes {gpile_over_static:.2f}× its time"),
        equal,
        Result(f"{what}: Python loop, eager (op by op), plait vs JAX", eager_t, je_t,
               f"eager loop / pile = {eager_t / pile_t:.1f}× (target ≥ 5×)"),
        Result(f"{what}: first pass over new lengths, compilation included: loop of jit(layer), plait vs JAX",
               first_loop, jax_first_loop,
               f"loop / pile = {first_loop / first_pile:.1f}× (pile: {first_pile * 1e3:.0f} ms, one compilation "
               f"of one copy of the layer per bucket; loop: {len(set(LENGTHS))} compilations; pile with traced "
               f"lengths: {first_traced * 1e3:.0f} ms; pile with static lengths: {first_static * 1e3:.0f} ms)"),
    ]  # fmt: skip


def _plans_of_random_batches(batches: int = 50) -> int:
    """How many distinct plans (so compilations) ``batches`` random batches of
    ``N_SEQ`` lengths uniform in 8-125, padded to 128, make."""
    from plait_batching.length_plan import make_plan

    rng = np.random.default_rng(4)
    return len({make_plan(rng.integers(8, 126, N_SEQ), 128) for _ in range(batches)})


def _equal_lengths(jax: Any | None, dispatch: Any, repeats: int) -> Result:
    """A pile whose lengths are all equal against the dense layer ``jit(vmap(layer))``
    on the stacked sequences (plait and JAX): the pile is full (every length is
    the padded size, checked and recorded statically), so it computes as the
    dense batch, without masks, fills or packing."""
    import plait_core.numpy as pnp
    from plait_batching import Pile, pile_axis, vmap
    from plait_core import nn

    n = max(LENGTHS)
    rng = np.random.default_rng(3)
    stacked = rng.standard_normal((N_SEQ, n, D)).astype(np.float32)
    p = _params()
    dp = dispatch.device_put(p)
    dpile = Pile(dispatch.device_put(stacked), dispatch.device_put(np.full(N_SEQ, n, np.int32)), full=True)
    dstacked = dispatch.device_put(stacked)
    piled = dispatch.jit(vmap(_layer(pnp, nn, False), in_axes=(pile_axis, None), out_axes=pile_axis))
    dense = dispatch.jit(vmap(_layer(pnp, nn, False), in_axes=(0, None)))
    block = dispatch.block_until_ready

    def plait_pile() -> Any:
        return block(piled(dpile, dp).data)

    def plait_dense() -> Any:
        return block(dense(dstacked, dp))

    np.testing.assert_allclose(np.asarray(piled(dpile, dp).data), np.asarray(dense(dstacked, dp)), rtol=2e-3,
                               atol=2e-3)  # fmt: skip
    jax_dense = None
    if jax is not None:
        jd = jax.jit(jax.vmap(_layer(jax.numpy, jax.nn, False), in_axes=(0, None)))
        jstacked, jp = jax.device_put(stacked), jax.device_put(p)

        def jax_dense() -> Any:
            return jax.block_until_ready(jd(jstacked, jp))

        jax_dense()
    pile_t, jd_t = interleaved(plait_pile, jax_dense, repeats)
    _, _, pile_over_dense = interleaved_ratio(plait_pile, plait_dense, 2 * repeats)
    assert pile_over_dense is not None
    return Result(f"transformer layer, {N_SEQ} sequences all of length {n}: plait pile vs JAX dense jit(vmap(layer))",
                  pile_t, jd_t, f"pile / plait dense, run by run = {pile_over_dense:.2f}× (target ≤ 1.05×)")


def _first_passes(jax: Any | None, dispatch: Any, dpile: Any, dseqs: list[Any], dp: Any,
                  repeats: int = 3, loop: bool = True) -> tuple[float, float, float | None]:
    """Seconds of a first call (fresh function, so nothing is cached): the
    pile once, the loop of ``jit(layer)`` over every sequence (plait and JAX;
    ``loop=False``: not timed, 0), medians of ``repeats``."""
    import plait_core.numpy as pnp
    from plait_batching import pile_axis, vmap
    from plait_core import nn

    jit, block = dispatch.jit, dispatch.block_until_ready

    def pile_first() -> Any:
        f = jit(vmap(_layer(pnp, nn, False), in_axes=(pile_axis, None), out_axes=pile_axis))
        return block(f(dpile, dp).data)

    def loop_first() -> Any:
        f = jit(_layer(pnp, nn, False))
        return block([f(s, dp) for s in dseqs])

    jax_loop_first = None
    if jax is not None:
        jp = jax.device_put(dispatch.device_get(dp))
        jseqs = [jax.device_put(np.asarray(s)) for s in dseqs]

        def jax_loop_first() -> Any:
            f = jax.jit(_layer(jax.numpy, jax.nn, False))
            return jax.block_until_ready([f(s, jp) for s in jseqs])

    pile_t, _ = interleaved(pile_first, None, repeats)
    if not loop:
        return pile_t, 0.0, None
    loop_t, jax_t = interleaved(loop_first, jax_loop_first, repeats)
    return pile_t, loop_t, jax_t

