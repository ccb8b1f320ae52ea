"""JAX's own ``examples/mnist_vae.py``, unmodified, on plait and on JAX: the
first epoch's seconds (issue 26: plait at most 1.3 times JAX).

The program is read from a JAX source checkout (``--jax-repo``, a git
repository: ``examples/mnist_vae.py``, ``examples/datasets.py`` and
``examples/__init__.py`` at ``HEAD``) into a temporary directory; nothing of
it is kept in plait.  Each run is a fresh process: plait's through
``plait.compat`` (the interpreter running this module, this tree's sources on
its path), JAX's with the JAX interpreter (``$JAX_PYTHON``, default this one),
the two taking turns.  The figure is the program's own print of its first
epoch, ``time.time()`` around ``run_epoch`` (1,875 momentum steps in one
``fori_loop``) and ``evaluate`` (test ELBO and a 10 x 10 grid of sampled
images), both compiled on their first call; the process is stopped after it.

The data: the program's ``datasets.mnist()`` reads four IDX files from
``datasets._DATA`` and downloads them when absent.  This machine has no
network, so the runs point ``_DATA`` at ``--data``: a directory holding
``train-images-idx3-ubyte.gz``, ``train-labels-idx1-ubyte.gz``,
``t10k-images-idx3-ubyte.gz``, ``t10k-labels-idx1-ubyte.gz`` in MNIST's
format (Fashion-MNIST's files are: same shapes and dtype, other pictures;
compile and step times do not depend on the pixels).  ``matplotlib`` is not
installed here: ``pyplot.imsave`` is replaced by a function that reads the
image into a NumPy array (what imsave does first) and writes nothing.

``python -m benchmarks.vae_example --data DIR [--rounds 3]`` prints a
markdown row.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "packages" / p / "src" for p in ("core", "autodiff", "batching", "masking", "dispatch")] + [ROOT / "src"]
FILES = ("examples/__init__.py", "examples/datasets.py", "examples/mnist_vae.py")
DATA_FILES = ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz", "t10k-images-idx3-ubyte.gz",
              "t10k-labels-idx1-ubyte.gz")
_EPOCH = re.compile(r"^\s*0 (\S+) \((\d+(?:\.\d+)?) sec\)$")

# Run in the child: a stand-in for matplotlib, the data directory, then the program as __main__.
_BOOT = """
import sys, types, runpy
import numpy as np
here, data = sys.argv[1], sys.argv[2]
plt = types.ModuleType("matplotlib.pyplot")
plt.imsave = lambda fname, arr, **kw: np.asarray(arr)
plt.cm = types.SimpleNamespace(gray=None)
mpl = types.ModuleType("matplotlib")
mpl.pyplot = plt
sys.modules.update({"matplotlib": mpl, "matplotlib.pyplot": plt})
sys.path.insert(0, here)
from examples import datasets
datasets._DATA = data.rstrip("/") + "/"
sys.argv = [here + "/examples/mnist_vae.py"]
runpy.run_path(sys.argv[0], run_name="__main__")
"""


def extract(jax_repo: Path, into: Path) -> None:
    """Write JAX's example files (at the checkout's HEAD) under ``into``."""
    for name in FILES:
        text = subprocess.run(["git", "-C", str(jax_repo), "show", f"HEAD:{name}"], capture_output=True, text=True,
                              check=True).stdout
        out = into / name
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)


def first_epoch(framework: str, here: Path, data: Path, jax_python: str, timeout: float) -> tuple[float, str]:
    """One fresh process: the program's first-epoch seconds and its test ELBO."""
    boot = here / "boot.py"
    boot.write_text(_BOOT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PLAIT_", "XLA_FLAGS"))}
    env["TF_CPP_MIN_LOG_LEVEL"] = "2"
    if framework == "plait":
        env["PYTHONPATH"] = os.pathsep.join([*(str(s) for s in SOURCES), env.get("PYTHONPATH", "")])
        cmd = [sys.executable, "-m", "plait.compat", str(boot), str(here), str(data)]
    else:
        cmd = [jax_python, str(boot), str(here), str(data)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=here)
    deadline = time.monotonic() + timeout
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            m = _EPOCH.match(line.rstrip("\n"))
            if m:
                return float(m.group(2)), m.group(1)
            if time.monotonic() > deadline:
                break
        err = proc.stderr.read()[-2000:] if proc.stderr is not None else ""
        raise RuntimeError(f"{framework}: no first-epoch line from mnist_vae.py (exit {proc.poll()}): {err}")
    finally:
        proc.kill()
        proc.wait()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--jax-repo", type=Path, default=Path("/work/.mirror/jax-ml+jax/repo"))
    parser.add_argument("--data", type=Path, required=True, help="a directory with MNIST's four .gz IDX files")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=900.0)
    args = parser.parse_args()
    missing = [f for f in DATA_FILES if not (args.data / f).is_file()]
    if missing:
        parser.error(f"--data {args.data} lacks {', '.join(missing)}")
    jax_python = os.environ.get("JAX_PYTHON", sys.executable)
    times: dict[str, list[float]] = {"plait": [], "jax": []}
    elbos: dict[str, list[str]] = {"plait": [], "jax": []}
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        here = Path(tmp)
        extract(args.jax_repo, here)
        for r in range(args.rounds):
            order = ("plait", "jax") if r % 2 == 0 else ("jax", "plait")
            got = {}
            for fw in order:
                got[fw], elbo = first_epoch(fw, here, args.data, jax_python, args.timeout)
                times[fw].append(got[fw])
                elbos[fw].append(elbo)
                print(f"round {r}: {fw} {got[fw]:.2f} s (test ELBO {elbo})", file=sys.stderr, flush=True)
            ratios.append(got["plait"] / got["jax"])
    p, j = statistics.median(times["plait"]), statistics.median(times["jax"])
    ratio = statistics.median(ratios)
    print("| row | plait | JAX | plait / JAX | target | verdict |")
    print("|---|---|---|---|---|---|")
    verdict = "met" if ratio <= 1.3 else "**missed**"
    print(f"| JAX's `examples/mnist_vae.py`, first epoch (1,875 steps + evaluate, compiles included) | {p:.2f} s | "
          f"{j:.2f} s | {ratio:.2f}× | ≤ 1.3× JAX | {verdict} |")
    print(f"\nrounds: plait {', '.join(f'{t:.2f}' for t in times['plait'])} s; JAX "
          f"{', '.join(f'{t:.2f}' for t in times['jax'])} s; ratios {', '.join(f'{x:.2f}' for x in ratios)}; "
          f"first-epoch test ELBO plait {elbos['plait'][0]}, JAX {elbos['jax'][0]}")


if __name__ == "__main__":
    main()
