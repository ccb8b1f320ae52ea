"""Batching: a transformer encoder layer on a ragged batch (a pile).

32 sequences of lengths 8 to 128 (model width 32, 4 heads, MLP 64), three
ways, all under ``jit`` with compilation done before timing:

* **pile**: ``jit(vmap(layer, in_axes=(pile_axis, None), out_axes=pile_axis))``
  on a :class:`~plait.Pile` (the layer is written for one sequence);
* **padded and masked**: the same layer rewritten to take a padded sequence
  and its length, masking the attention by hand, ``jit(vmap(...))``;
* **loop**: the layer called once per sequence from Python, either as
  ``jit(layer)`` (one compilation per distinct length, all done before
  timing) or eagerly, operation by operation.

A last row times the *first* pass over a batch of new lengths, compilation
included, as a program meets it when lengths vary from batch to batch: the
pile compiles one program (for the padded size), the loop of ``jit(layer)``
one per distinct length.

JAX (which has no piles) runs the padded-and-masked version and the loop.
The issue's targets compare plait with itself: the pile at least 5x faster
than a Python loop over the sequences, and within 1.5x of padded-and-masked;
the last column says how each row fares, and the plait / JAX column compares
the same program.  On a CPU the loop of ``jit(layer)`` is bound by compute,
and the pile computes on the padding too (the last column of that row says
how much more), so it only wins where a call costs more than its arithmetic
(eagerly, or on an accelerator).
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


def batching_results(jax: Any | None, repeats: int = 15) -> list[Result]:
    """The pile rows; empty when plait-dispatch (``jit``) is not installed."""
    dispatch = _plait()
    if dispatch is None:
        return []
    import plait_core.numpy as pnp
    from plait_batching import Pile, pile_axis, vmap
    from plait_core import nn

    jit, block = dispatch.jit, dispatch.block_until_ready
    rng = np.random.default_rng(2)
    seqs = [rng.standard_normal((n, D)).astype(np.float32) for n in LENGTHS]
    pile = Pile.from_arrays(seqs)
    padded, lengths = np.asarray(pile.data), np.asarray(pile.lengths)
    p = _params()
    dp = dispatch.device_put(p)
    dpile = Pile(dispatch.device_put(padded), dispatch.device_put(lengths))
    dseqs = [dispatch.device_put(s) for s in seqs]

    piled = jit(vmap(_layer(pnp, nn, False), in_axes=(pile_axis, None), out_axes=pile_axis))
    masked = jit(vmap(_layer(pnp, nn, True), in_axes=(0, 0, None)))
    single = jit(_layer(pnp, nn, False))

    def plait_pile() -> Any:
        return block(piled(dpile, dp).data)

    def plait_masked() -> Any:
        return block(masked(dpile.data, dpile.lengths, dp))

    def plait_loop() -> Any:
        return block([single(s, dp) for s in dseqs])

    eager = _layer(pnp, nn, False)

    def plait_eager_loop() -> Any:
        return block([eager(s, dp) for s in dseqs])

    reference = [np.asarray(single(s, dp)) for s in dseqs]
    _check([np.asarray(a) for a in piled(dpile, dp).unpack()], reference, "pile")
    out = np.asarray(masked(dpile.data, dpile.lengths, dp))
    _check([out[i, :n] for i, n in enumerate(LENGTHS)], reference, "padded and masked")

    jax_masked = jax_loop = jax_eager_loop = None
    if jax is not None:
        jnp, jnn = jax.numpy, jax.nn
        jp = jax.device_put(p)
        jpadded, jlengths = jax.device_put(padded), jax.device_put(lengths)
        jseqs = [jax.device_put(s) for s in seqs]
        jm = jax.jit(jax.vmap(_layer(jnp, jnn, True), in_axes=(0, 0, None)))
        js = jax.jit(_layer(jnp, jnn, False))

        def jax_masked() -> Any:
            return jax.block_until_ready(jm(jpadded, jlengths, jp))

        def jax_loop() -> Any:
            return jax.block_until_ready([js(s, jp) for s in jseqs])

        jeager = _layer(jnp, jnn, False)

        def jax_eager_loop() -> Any:
            return jax.block_until_ready([jeager(s, jp) for s in jseqs])

        jout = np.asarray(jm(jpadded, jlengths, jp))
        _check([jout[i, :n] for i, n in enumerate(LENGTHS)], reference, "JAX padded and masked")
        _check([np.asarray(js(s, jp)) for s in jseqs], reference, "JAX loop")

    pile_t, jm_t = interleaved(plait_pile, jax_masked, repeats)
    # The pile against plait's own padded+masked layer, run by run (robust to the machine's load).
    _, masked_t, pile_over_masked = interleaved_ratio(plait_pile, plait_masked, 2 * repeats)
    assert masked_t is not None and pile_over_masked is not None
    loop_t, jl_t = interleaved(plait_loop, jax_loop, max(3, repeats // 3))
    plait_eager_loop()  # the eager operations compile on first use
    if jax_eager_loop is not None:
        jax_eager_loop()
    eager_t, je_t = interleaved(plait_eager_loop, jax_eager_loop, 3)
    first_pile, first_loop, jax_first_loop = _first_passes(jax, dispatch, dpile, dseqs, dp)
    tokens = N_SEQ * max(LENGTHS) / sum(LENGTHS)
    pairs = N_SEQ * max(LENGTHS) ** 2 / sum(n * n for n in LENGTHS)
    what = f"transformer layer, {N_SEQ} sequences of lengths {min(LENGTHS)}–{max(LENGTHS)}"
    return [
        Result(f"{what}: plait pile vs JAX padded+masked", pile_t, jm_t,
               f"pile / plait padded+masked, run by run = {pile_over_masked:.2f}× (target ≤ 1.0×)"),
        Result(f"{what}: padded+masked, plait vs JAX", masked_t, jm_t, "reference"),
        Result(f"{what}: Python loop of jit(layer), plait vs JAX", loop_t, jl_t,
               f"loop / pile = {loop_t / pile_t:.1f}× (the pile computes {tokens:.1f}× the tokens and "
               f"{pairs:.1f}× the attention pairs of the loop)"),
        Result(f"{what}: Python loop, eager (op by op), plait vs JAX", eager_t, je_t,
               f"eager loop / pile = {eager_t / pile_t:.1f}× (target ≥ 5×)"),
        Result(f"{what}: first pass over new lengths, compilation included: loop of jit(layer), plait vs JAX",
               first_loop, jax_first_loop,
               f"loop / pile = {first_loop / first_pile:.1f}× (pile: {first_pile * 1e3:.0f} ms, one compilation; "
               f"loop: {len(set(LENGTHS))} compilations)"),
    ]  # fmt: skip


def _first_passes(jax: Any | None, dispatch: Any, dpile: Any, dseqs: list[Any], dp: Any,
                  repeats: int = 3) -> tuple[float, float, float | None]:
    """Seconds of a first call (fresh function, so nothing is cached): the
    pile once, the loop of ``jit(layer)`` over every sequence (plait and JAX),
    medians of ``repeats``."""
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
    loop_t, jax_t = interleaved(loop_first, jax_loop_first, repeats)
    return pile_t, loop_t, jax_t

