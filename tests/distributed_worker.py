"""One process of ``test_distributed.py``'s two-process run (started by
``python -m plait.distributed.launch``): the data-parallel example, then
collectives across the processes, each checked against NumPy."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import numpy as np

import plait
from plait import lax
from plait.sharding import NamedSharding, P

example = runpy.run_path(str(Path(__file__).resolve().parents[1] / "examples" / "data_parallel.py"))
example["main"]()  # initializes plait.distributed from the launcher's environment

me = plait.process_index()
print(f"process_count {plait.process_count()} device_count {plait.device_count()} local {plait.local_device_count()}")
mesh = plait.sharding.make_mesh((8,), ("d",))
local = np.arange(4, dtype=np.float32) + 4 * me + 1
x = plait.make_array_from_process_local_data(NamedSharding(mesh, P("d")), local)
assert x.shape == (8,) and len(x.addressable_shards) == 4
total = plait.shard_map(lambda a: lax.psum(a, "d"), mesh=mesh, in_specs=P("d"), out_specs=P())(x)
# all_gather's result varies over "d" in JAX 0.10's types: out_specs=P() takes it unchecked.
gathered = plait.shard_map(
    lambda a: lax.all_gather(a, "d", tiled=True), mesh=mesh, in_specs=P("d"), out_specs=P(), check_vma=False
)(x)
np.testing.assert_allclose(np.asarray(total), [36.0])
np.testing.assert_allclose(np.asarray(gathered), np.arange(1, 9, dtype=np.float32))
doubled = plait.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh, P("d")))(x)
np.testing.assert_allclose(np.concatenate([np.asarray(s.data) for s in doubled.addressable_shards]), 2 * local)
print(f"cross-process psum {float(np.asarray(total)[0])} all_gather {np.asarray(gathered).astype(int).tolist()}")
plait.distributed.shutdown()
sys.exit(0)
