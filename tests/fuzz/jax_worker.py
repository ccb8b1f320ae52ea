"""The JAX side: run in JAX's interpreter, never in plait's.

``python -m fuzz.jax_worker`` (with ``tests/`` on ``PYTHONPATH``) reads
pickled requests ``[(program_json, data, modes), ...]`` from stdin and writes,
for each, ``{mode: Outcome}`` to stdout, until stdin closes.
"""

from __future__ import annotations

import os
import pickle
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # type: ignore[import-not-found,unused-ignore]

from .modes import Backend, run_mode
from .program import Program


def main() -> None:
    backend = Backend(jax, jax.numpy, jax.lax, jax.nn)
    requests, replies = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but replies on the pipe
    while True:
        try:
            batch = pickle.load(requests)
        except EOFError:
            return
        answer = []
        for program_json, data, modes in batch:
            program = Program.from_json(program_json)
            answer.append({mode: run_mode(backend, program, data, mode) for mode in modes})
        pickle.dump(answer, replies)
        replies.flush()


if __name__ == "__main__":
    main()
