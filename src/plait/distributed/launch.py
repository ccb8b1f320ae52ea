"""Start N local processes of one distributed plait program.

``python -m plait.distributed.launch --nproc 2 [--devices-per-process 4]
[--port PORT] [--timeout SECONDS] [--python PATH] script.py [args...]`` (or
``-m module [args...]`` instead of a script) runs ``script.py`` in
``--nproc`` processes on this machine, each with ``$PLAIT_COORDINATOR_ADDRESS``
(``127.0.0.1:PORT``, a free port by default), ``$PLAIT_NUM_PROCESSES``,
``$PLAIT_PROCESS_ID`` and ``$PLAIT_NUM_CPU_DEVICES`` set, so that the script's
``plait.distributed.initialize()`` joins them into one run.  Each output
line is prefixed with ``[process k]``.  The launcher waits for all of them;
if one fails (or the timeout passes) it stops the others (only the processes
it started) and exits with the failing status (124 on timeout).
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from typing import IO


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _relay(k: int, stream: IO[str], lock: threading.Lock) -> None:
    for line in stream:
        with lock:
            sys.stdout.write(f"[process {k}] {line}")
            sys.stdout.flush()


def launch(
    command: Sequence[str], nproc: int, devices_per_process: int, port: int | None, timeout: float
) -> int:
    """Run ``command`` (an interpreter and its arguments) in ``nproc``
    processes; their exit status (see the module docs)."""
    address = f"127.0.0.1:{port or free_port()}"
    lock = threading.Lock()
    procs: list[subprocess.Popen[str]] = []
    relays = []
    for k in range(nproc):
        env = dict(
            os.environ,
            PLAIT_COORDINATOR_ADDRESS=address,
            PLAIT_NUM_PROCESSES=str(nproc),
            PLAIT_PROCESS_ID=str(k),
            PLAIT_NUM_CPU_DEVICES=str(devices_per_process),
        )
        p = subprocess.Popen(
            list(command), env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
        procs.append(p)
        assert p.stdout is not None
        t = threading.Thread(target=_relay, args=(k, p.stdout, lock), daemon=True)
        t.start()
        relays.append(t)
    deadline = time.monotonic() + timeout
    status = 0
    while any(p.poll() is None for p in procs):
        failed = [p.returncode for p in procs if p.returncode not in (None, 0)]
        if failed or time.monotonic() > deadline:
            status = failed[0] if failed else 124
            for p in procs:
                if p.poll() is None:
                    p.kill()
            break
        time.sleep(0.05)
    for p in procs:
        p.wait()
        if status == 0 and p.returncode != 0:
            status = p.returncode
    for t in relays:
        t.join(timeout=5)
    return status


def main(argv: Sequence[str] | None = None) -> int:
    """The command line (see the module docs)."""
    parser = argparse.ArgumentParser(prog="python -m plait.distributed.launch", description=__doc__.split("\n\n")[0])
    parser.add_argument("--nproc", type=int, default=2, help="number of processes (default 2)")
    parser.add_argument("--devices-per-process", type=int, default=4, help="CPU devices per process (default 4)")
    parser.add_argument("--port", type=int, default=None, help="coordinator port (default: a free one)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds before every process is stopped")
    parser.add_argument("--python", default=sys.executable, help="the interpreter of the processes")
    parser.add_argument("-m", dest="module", default=None, help="run a module (as python -m) instead of a script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script and its arguments")
    ns = parser.parse_args(argv)
    if ns.nproc < 1 or ns.devices_per_process < 1:
        parser.error("--nproc and --devices-per-process must be positive")
    if ns.module is None and not ns.args:
        parser.error("give a script (or -m module)")
    command = [ns.python, *(["-m", ns.module] if ns.module else []), *ns.args]
    return launch(command, ns.nproc, ns.devices_per_process, ns.port, ns.timeout)


if __name__ == "__main__":
    sys.exit(main())
