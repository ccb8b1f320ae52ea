"""``python -m plait.demo``: four small programs that show what plait is for.

1. An MLP trained on synthetic spirals with ``jit``, ``grad`` and donated
   parameters: the loss falls and the held-out accuracy is printed.
2. A reversible ResNet trained with ``invertible``: its gradients equal
   ordinary reverse mode, and the memory XLA needs for ``jit(grad(loss))``
   stays flat as the network gets deeper, while ordinary reverse mode grows.
3. A transformer layer on a ragged batch (a ``Pile``) with ``vmap``, checked
   against the layer run on each sequence alone.
4. A masked RNN (``lax.scan``) compiled once and run at many lengths, against
   a plain ``jit`` that traces and compiles once per length.

It runs on XLA on the CPU, needs no network, and every number it prints is
computed when it runs.  ``examples/`` holds the same four programs as
standalone scripts.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

import plait
from plait import lax, nn, random
from plait import numpy as pnp
from plait._progress import Progress

Params = dict[str, Any]

# Shared by sections 1 and 2: three interleaved spirals in the plane.
CLASSES = 3


def _section(title: str) -> None:
    print(f"\n{title}\n" + "-" * len(title))


def _line(label: str, text: str) -> None:
    print(f"  {label:<10} {text}")


def _max_abs_diff(a: Any, b: Any) -> float:
    """The largest absolute difference between two trees of arrays."""
    la, lb = plait.tree_util.tree_leaves(a), plait.tree_util.tree_leaves(b)
    if len(la) != len(lb):
        raise ValueError(f"trees with {len(la)} and {len(lb)} leaves")
    return max(float(np.max(np.abs(np.asarray(x, np.float64) - np.asarray(y, np.float64)))) for x, y in zip(la, lb))


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _kib(nbytes: int) -> str:
    return f"{nbytes / 1024:.1f} KiB"


def spirals(key: Any, n: int) -> tuple[Any, Any]:
    """``n`` points of three noisy interleaved spirals and their labels (0, 1, 2)."""
    k_label, k_noise = random.split(key)
    u = random.uniform(k_label, (2, n))
    label = pnp.floor(u[0] * CLASSES).astype(pnp.int32)
    radius = 0.05 + 0.95 * u[1]
    angle = 3.5 * radius + 2 * np.pi * label / CLASSES + 0.25 * random.normal(k_noise, (n,))
    return pnp.stack([radius * pnp.cos(angle), radius * pnp.sin(angle)], axis=1), label


def cross_entropy(logits: Any, labels: Any) -> Any:
    """Mean negative log-likelihood of integer ``labels`` under ``logits``."""
    logp = nn.log_softmax(logits)
    return -pnp.mean(pnp.take_along_axis(logp, labels[:, None], axis=1))


def accuracy(logits: Any, labels: Any) -> Any:
    return pnp.mean(pnp.argmax(logits, axis=1) == labels)


def momentum_step(loss: Callable[..., Any], lr: float) -> tuple[Callable[..., Any], list[int]]:
    """One jitted step of SGD with momentum on ``loss(params, x, y) -> (value, logits)``,
    and a counter of how many times it was traced.

    The state ``(params, velocity)`` is donated: XLA may write the new state
    into the old buffers, and the old arrays are deleted."""
    traces = [0]

    def step(state: tuple[Params, Params], x: Any, y: Any) -> tuple[tuple[Params, Params], Any]:
        traces[0] += 1
        params, velocity = state
        (value, _), grads = plait.value_and_grad(loss, has_aux=True)(params, x, y)
        velocity = plait.tree_util.tree_map(lambda v, g: 0.9 * v + g, velocity, grads)
        params = plait.tree_util.tree_map(lambda p, v: p - lr * v, params, velocity)
        return (params, velocity), value

    return plait.jit(step, donate_argnums=0), traces


def train(name: str, step: Callable[..., Any], state: Any, data: tuple[Any, Any], steps: int) -> tuple[Any, list[float]]:
    """Run ``steps`` steps from ``state`` with a progress bar; returns the
    final state and the loss at every step."""
    losses: list[float] = []
    with Progress(steps, f"  {name:<9}") as bar:
        for _ in range(steps):
            state, value = step(state, *data)
            losses.append(float(value))
            bar.update(note=f"loss {losses[-1]:.4f}")
    return state, losses


def initial_state(params: Params) -> tuple[Params, Params]:
    """Parameters and a zero momentum."""
    return params, plait.tree_util.tree_map(pnp.zeros_like, params)


def _loss_curve(losses: Sequence[float]) -> str:
    marks = sorted({0, len(losses) // 4, len(losses) // 2, 3 * len(losses) // 4, len(losses) - 1})
    return " -> ".join(f"{losses[i]:.4f}" for i in marks) + f"  (steps {', '.join(str(i) for i in marks)})"


# ---------------------------------------------------------------------------
# 1. MLP


def mlp_init(key: Any, hidden: int = 64) -> Params:
    k1, k2, k3 = random.split(key, 3)
    return {
        "w1": random.normal(k1, (2, hidden)),
        "b1": pnp.zeros(hidden),
        "w2": random.normal(k2, (hidden, hidden)) / np.sqrt(hidden),
        "b2": pnp.zeros(hidden),
        "w3": random.normal(k3, (hidden, CLASSES)) / np.sqrt(hidden),
        "b3": pnp.zeros(CLASSES),
    }


def mlp(params: Params, x: Any) -> Any:
    h = nn.relu(x @ params["w1"] + params["b1"])
    h = nn.relu(h @ params["w2"] + params["b2"])
    return h @ params["w3"] + params["b3"]


def mlp_loss(params: Params, x: Any, y: Any) -> tuple[Any, Any]:
    logits = mlp(params, x)
    return cross_entropy(logits, y), logits


def section_mlp(train_data: tuple[Any, Any], test_data: tuple[Any, Any]) -> None:
    _section("1. An MLP on synthetic spirals: jit, grad, donated parameters")
    n_train, n_test = int(train_data[0].shape[0]), int(test_data[0].shape[0])
    _line("data", f"{n_train} training and {n_test} held-out points, {CLASSES} classes (plait.random)")
    params = plait.jit(mlp_init)(random.PRNGKey(2))
    step, traces = momentum_step(mlp_loss, lr=0.05)
    first = initial_state(params)
    state, losses = train("mlp", step, first, train_data, 300)
    trained = state[0]
    _line("loss", _loss_curve(losses))
    acc = float(plait.jit(lambda p, x, y: accuracy(mlp(p, x), y))(trained, *test_data))
    _line("accuracy", f"{100 * acc:.1f}% on the held-out points")
    deleted = all(leaf.is_deleted() for leaf in plait.tree_util.tree_leaves(first))
    try:
        np.asarray(first[0]["w1"])
        reuse = "reading one works (not donated)"
    except plait.DeletedArrayError:
        reuse = "reading one raises DeletedArrayError"
    _line("donation", f"the first step's state was donated: deleted={deleted}; {reuse}")
    _line("compiles", f"the training step was traced {_times(traces[0])} for {len(losses)} steps")


# ---------------------------------------------------------------------------
# 2. Reversible ResNet


WIDTH = 16


def revnet_init(key: Any, depth: int) -> Params:
    """A stem (2 -> 2*WIDTH), ``depth`` reversible blocks, a head (2*WIDTH -> classes)."""
    k_blocks, k_ends = random.split(key)
    fg = random.normal(k_blocks, (depth, 2, WIDTH, WIDTH)) / np.sqrt(WIDTH)
    ends = random.normal(k_ends, (2 + CLASSES, 2 * WIDTH))
    return {
        "stem": ends[:2],
        "stem_b": pnp.zeros(2 * WIDTH),
        "blocks": [{"f": fg[i, 0], "g": fg[i, 1], "bf": pnp.zeros(WIDTH), "bg": pnp.zeros(WIDTH)} for i in range(depth)],
        "head": ends[2:].T / np.sqrt(2 * WIDTH),
        "head_b": pnp.zeros(CLASSES),
    }


def reversible_blocks(blocks: list[Params], x1: Any, x2: Any) -> tuple[Any, Any]:
    """``x1 += F(x2); x2 += G(x1)`` per block: each step can be undone from its outputs."""
    for b in blocks:
        x1 = x1 + pnp.tanh(x2 @ b["f"] + b["bf"])
        x2 = x2 + pnp.tanh(x1 @ b["g"] + b["bg"])
    return x1, x2


def revnet_loss(use_invertible: bool) -> Callable[[Params, Any, Any], tuple[Any, Any]]:
    def loss(params: Params, x: Any, y: Any) -> tuple[Any, Any]:
        # The stem is trained, so the blocks' inputs are differentiated too:
        # the backward pass then rebuilds them from the blocks' outputs.
        # The blocks' weights are an argument, as JAX users write it: the
        # backward pass keeps them (they cannot be rebuilt) and differentiates them.
        h = x @ params["stem"] + params["stem_b"]
        blocks = plait.invertible(reversible_blocks) if use_invertible else reversible_blocks
        y1, y2 = blocks(params["blocks"], h[:, :WIDTH], h[:, WIDTH:])
        logits = pnp.concatenate([y1, y2], axis=1) @ params["head"] + params["head_b"]
        return cross_entropy(logits, y), logits

    return loss


def grad_memory(depth: int, use_invertible: bool, data: tuple[Any, Any]) -> tuple[int, int]:
    """XLA's temporary and argument bytes for ``jit(grad(loss))`` at ``depth``.

    Compiling needs only the parameters' shapes, which ``eval_shape`` gives
    without computing them."""
    params = plait.eval_shape(lambda key: revnet_init(key, depth), random.PRNGKey(3))
    grad = plait.grad(revnet_loss(use_invertible), has_aux=True)
    stats = plait.jit(grad).lower(params, *data).compile().memory_analysis()
    return stats.temp_size_in_bytes, stats.argument_size_in_bytes


def section_revnet(train_data: tuple[Any, Any], test_data: tuple[Any, Any]) -> None:
    _section("2. A reversible ResNet with invertible: same gradients, flat memory")
    depth = 8
    params = plait.jit(revnet_init, static_argnums=1)(random.PRNGKey(3), depth)
    ordinary = plait.jit(plait.grad(revnet_loss(False), has_aux=True))(params, *train_data)[0]
    inverted = plait.jit(plait.grad(revnet_loss(True), has_aux=True))(params, *train_data)[0]
    scale = max(float(np.max(np.abs(np.asarray(g)))) for g in plait.tree_util.tree_leaves(ordinary))
    n_arrays = len(plait.tree_util.tree_leaves(ordinary))
    _line("gradients", f"max |invertible - ordinary| = {_max_abs_diff(inverted, ordinary):.2e} "
          f"over {n_arrays} arrays (largest |gradient| {scale:.3f}, depth {depth})")  # fmt: skip

    step, _ = momentum_step(revnet_loss(True), lr=0.02)
    state, losses = train("revnet", step, initial_state(params), train_data, 200)
    _line("loss", _loss_curve(losses))
    test_loss = revnet_loss(True)
    acc = float(plait.jit(lambda p, x, y: accuracy(test_loss(p, x, y)[1], y))(state[0], *test_data))
    _line("accuracy", f"{100 * acc:.1f}% on the held-out points")

    print(f"  memory of jit(grad(loss)) on a batch of {int(train_data[0].shape[0])}: XLA's temporary buffers "
          "(saved intermediates)")  # fmt: skip
    print(f"  {'depth':>7} {'arguments':>12} {'ordinary':>12} {'invertible':>12}")
    rows = []
    for d in (4, 16, 64):
        plain_temp, args = grad_memory(d, False, train_data)
        inv_temp, _ = grad_memory(d, True, train_data)
        rows.append((plain_temp, inv_temp))
        print(f"  {d:>7} {_kib(args):>12} {_kib(plain_temp):>12} {_kib(inv_temp):>12}")
    _line("growth", f"depth 4 -> 64: ordinary x{rows[-1][0] / rows[0][0]:.2f}, invertible x{rows[-1][1] / rows[0][1]:.2f}")


# ---------------------------------------------------------------------------
# 3. Transformer layer on a pile

D_MODEL, HEADS, D_FF = 32, 4, 64


def transformer_params(rng: np.random.Generator) -> Params:
    def dense(n_in: int, n_out: int) -> np.ndarray:
        w: np.ndarray = rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)
        return w.astype(np.float32)

    p: Params = {k: dense(D_MODEL, D_MODEL) for k in ("wq", "wk", "wv", "wo")}
    p.update(w1=dense(D_MODEL, D_FF), b1=np.zeros(D_FF, np.float32), w2=dense(D_FF, D_MODEL))
    p.update(g1=np.ones(D_MODEL, np.float32), g2=np.ones(D_MODEL, np.float32))
    return p


def layer_norm(x: Any, gain: Any) -> Any:
    mean = pnp.mean(x, axis=-1, keepdims=True)
    return (x - mean) / pnp.sqrt(pnp.var(x, axis=-1, keepdims=True) + 1e-5) * gain


def transformer_layer(x: Any, p: Params) -> Any:
    """Self-attention then an MLP, each residual and layer-normed; ``x`` is ``(n, D_MODEL)``."""
    n = x.shape[0]  # symbolic inside vmap over a pile: each sequence's own length

    def heads(y: Any) -> Any:
        return y.reshape(n, HEADS, D_MODEL // HEADS).transpose(1, 0, 2)

    q, k, v = heads(x @ p["wq"]), heads(x @ p["wk"]), heads(x @ p["wv"])
    weights = nn.softmax(pnp.einsum("hqd,hkd->hqk", q, k) / np.sqrt(D_MODEL // HEADS), axis=-1)
    attended = pnp.einsum("hqk,hkd->hqd", weights, v).transpose(1, 0, 2).reshape(n, D_MODEL)
    x = layer_norm(x + attended @ p["wo"], p["g1"])
    return layer_norm(x + nn.gelu(x @ p["w1"] + p["b1"]) @ p["w2"], p["g2"])


def section_pile() -> None:
    _section("3. A transformer layer on a ragged batch: vmap over a Pile")
    rng = np.random.default_rng(4)
    lengths = [5, 17, 3, 12, 9, 1, 24, 8]
    seqs = [rng.standard_normal((n, D_MODEL)).astype(np.float32) for n in lengths]
    params = transformer_params(rng)
    pile = plait.Pile.from_arrays(seqs)
    _line("pile", repr(pile))

    start = time.perf_counter()
    batched = plait.jit(plait.vmap(transformer_layer, in_axes=(plait.pile_axis, None), out_axes=plait.pile_axis))
    out = batched(pile, params)
    results = [np.asarray(r) for r in out.unpack()]
    pile_time = time.perf_counter() - start

    start = time.perf_counter()
    single = plait.jit(transformer_layer)
    expected = [np.asarray(single(s, params)) for s in seqs]
    loop_time = time.perf_counter() - start

    _line("check", f"max |pile - per-sequence| = {_max_abs_diff(results, expected):.2e} over {len(seqs)} sequences")
    padded = np.asarray(plait.jit(plait.vmap(transformer_layer, in_axes=(0, None)))(pile.data, params))
    leak = _max_abs_diff([padded[i, :n] for i, n in enumerate(lengths)], expected)
    _line("padding", f"the same layer on the zero-padded batch without a pile is off by {leak:.2f} "
          "(attention reads the padding)")  # fmt: skip
    _line("time", f"pile: one compile, {pile_time:.2f} s; per sequence: {len(set(lengths))} compiles, {loop_time:.2f} s")


# ---------------------------------------------------------------------------
# 4. Masked RNN

HIDDEN, FEATURES, MAX_LEN = 32, 16, 64


def section_masked_rnn() -> None:
    _section("4. A masked RNN: compiled once, run at every length")
    rng = np.random.default_rng(5)
    params = {
        "wh": (rng.standard_normal((HIDDEN, HIDDEN)) / np.sqrt(HIDDEN)).astype(np.float32),
        "wx": (rng.standard_normal((FEATURES, HIDDEN)) / np.sqrt(FEATURES)).astype(np.float32),
        "b": np.zeros(HIDDEN, np.float32),
    }
    xs = rng.standard_normal((MAX_LEN, FEATURES)).astype(np.float32)
    traces = [0]

    def rnn(params: Params, xs: Any) -> tuple[Any, Any]:
        """The final state and the mean state over the sequence ``xs`` of shape ``(n, FEATURES)``."""
        traces[0] += 1

        def cell(h: Any, x: Any) -> tuple[Any, Any]:
            h = pnp.tanh(h @ params["wh"] + x @ params["wx"] + params["b"])
            return h, h

        final, states = lax.scan(cell, pnp.zeros(HIDDEN, np.float32), xs)
        return final, pnp.mean(states, axis=0)  # the mean divides by the logical length n

    lengths = list(range(1, MAX_LEN + 1, 3))
    param_specs = {"wh": "(_, _)", "wx": "(_, _)", "b": "_"}
    masked = plait.jit(plait.mask(rnn, [param_specs, "(n, _)"], ("_", "_")))
    start = time.perf_counter()
    got = [masked([params, xs], {"n": n}) for n in lengths]
    got = [plait.block_until_ready(g) for g in got]
    masked_time, masked_traces = time.perf_counter() - start, traces[0]

    traces[0] = 0
    plain = plait.jit(rnn)
    start = time.perf_counter()
    want = [plait.block_until_ready(plain(params, xs[:n])) for n in lengths]
    plain_time, plain_traces = time.perf_counter() - start, traces[0]

    _line("lengths", f"{len(lengths)} lengths from {lengths[0]} to {lengths[-1]}, padded to {MAX_LEN}")
    _line("masked", f"traced {_times(masked_traces)}, {masked_time:.2f} s for all lengths")
    _line("plain jit", f"traced {_times(plain_traces)}, {plain_time:.2f} s for all lengths "
          f"(x{plain_time / masked_time:.1f} slower)")  # fmt: skip
    _line("check", f"max |masked - plain| = {_max_abs_diff(got, want):.2e}")


# ---------------------------------------------------------------------------


def main() -> None:
    start = time.perf_counter()
    device = plait.devices()[0]
    print(f"plait {plait.__version__} demo on {plait.default_backend()} ({device})")
    make_data = plait.jit(spirals, static_argnums=1)
    train_data = make_data(random.PRNGKey(0), 1024)
    test_data = make_data(random.PRNGKey(1), 1024)
    sections: list[float] = []
    runs: list[Callable[[], None]] = [
        lambda: section_mlp(train_data, test_data),
        lambda: section_revnet(train_data, test_data),
        section_pile,
        section_masked_rnn,
    ]
    for run in runs:
        t = time.perf_counter()
        run()
        sections.append(time.perf_counter() - t)
    each = ", ".join(f"{t:.1f}" for t in sections)
    print(f"\ndone in {time.perf_counter() - start:.1f} s (sections {each} s)")


if __name__ == "__main__":
    main()
