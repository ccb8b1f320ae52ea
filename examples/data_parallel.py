"""Data-parallel training of a small MLP over several devices and processes.

The global batch is split over a one-axis mesh named ``data`` (one slice per
device) and the parameters are replicated; one ``jit`` with
``in_shardings``/``out_shardings`` computes the loss and its gradient and
takes an SGD step, and XLA's SPMD partitioner adds the all-reduce of the
gradients.  Run it alone (8 CPU devices in one process) or as two processes
of 4 CPU devices each::

    python examples/data_parallel.py
    python -m plait.distributed.launch --nproc 2 examples/data_parallel.py

Either way it prints the same losses, and checks them against the same steps
run on one device.  With several processes, each one builds its part of the
global batch (``make_array_from_process_local_data``) and every byte between
processes moves through jaxlib's distributed runtime and gloo collectives.
"""

from __future__ import annotations

import os

if "PLAIT_NUM_PROCESSES" not in os.environ:
    os.environ.setdefault("PLAIT_NUM_CPU_DEVICES", "8")

import numpy as np

import plait
import plait.numpy as pnp
from plait.sharding import NamedSharding, P

STEPS = 5
BATCH = 64
LEARNING_RATE = 0.5


def init_params(rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {
        "w1": (rng.standard_normal((16, 32)) / 4).astype(np.float32),
        "b1": np.zeros(32, np.float32),
        "w2": (rng.standard_normal((32, 1)) / 6).astype(np.float32),
        "b2": np.zeros(1, np.float32),
    }


def loss_fn(params: dict, x: plait.Array, y: plait.Array) -> plait.Array:
    h = pnp.tanh(x @ params["w1"] + params["b1"])
    pred = h @ params["w2"] + params["b2"]
    return pnp.mean((pred - y) ** 2)


def sgd_step(params: dict, x: plait.Array, y: plait.Array) -> tuple[dict, plait.Array]:
    loss, grads = plait.value_and_grad(loss_fn)(params, x, y)
    new = plait.tree_util.tree_map(lambda p, g: p - LEARNING_RATE * g, params, grads)
    return new, loss


def dataset(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    x = rng.standard_normal((BATCH, 16)).astype(np.float32)
    teacher = rng.standard_normal((16, 1)).astype(np.float32)
    y = np.sin(x @ teacher).astype(np.float32)
    return x, y


def main() -> None:
    if "PLAIT_NUM_PROCESSES" in os.environ:
        plait.distributed.initialize()
    nproc, me = plait.process_count(), plait.process_index()
    mesh = plait.sharding.make_mesh((plait.device_count(),), ("data",))
    batch, replicated = NamedSharding(mesh, P("data")), NamedSharding(mesh, P())
    rng = np.random.default_rng(0)
    params0 = init_params(rng)
    x, y = dataset(rng)
    rows = slice(me * BATCH // nproc, (me + 1) * BATCH // nproc)  # this process's part of the batch
    xb = plait.make_array_from_process_local_data(batch, x[rows])
    yb = plait.make_array_from_process_local_data(batch, y[rows])
    step = plait.jit(sgd_step, in_shardings=(replicated, batch, batch), out_shardings=(replicated, replicated))
    params = plait.device_put(params0, replicated)
    losses = []
    print(f"{nproc} process(es), {plait.device_count()} devices, batch {BATCH} split {len(xb.addressable_shards)} ways here")
    for i in range(STEPS):
        params, loss = step(params, xb, yb)
        losses.append(float(loss))
        print(f"step {i}: loss {losses[-1]:.6f}")
    assert params["w1"].sharding == replicated and xb.sharding == batch

    # The same steps on one device.
    single = plait.jit(sgd_step)
    p = plait.device_put(params0, plait.local_devices()[0])
    reference = []
    for _ in range(STEPS):
        p, loss = single(p, x, y)
        reference.append(float(loss))
    np.testing.assert_allclose(losses, reference, rtol=1e-5, atol=1e-6)
    assert reference[-1] < reference[0], "the loss should go down"
    print("data_parallel.py: all checks passed")


if __name__ == "__main__":
    main()
    plait.distributed.shutdown()
