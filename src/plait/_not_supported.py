"""JAX 0.10.2's public names that plait does not have, with why.

One list for every module the name-coverage test (``tests/test_public_names.py``)
walks: ``NOT_SUPPORTED[module][name]`` is the reason ``plait``'s module of the
same path (``jax.numpy`` -> ``plait.numpy``) has no ``name``.  A listed name that
plait does have is an error of the test, so the list never goes stale; the one
exception is a reason starting with ``"owned by"``: work another part of the
project is doing, which may land at any time.
"""

from __future__ import annotations

from plait_core import random as _random

_CONFIG = "a JAX configuration context manager for a behaviour plait does not make configurable"
_REFS = "JAX's mutable array references (Ref) are not part of plait's language"
_MICROSCALING = ("not implemented yet: microscaling (block-scaled) dots of narrow floats (plait carries the "
                 "float8/float4 types; the block-scale quantisation and the scaled dot are not written)")
_TODO = "not implemented yet"


def _all(names: str, why: str) -> dict[str, str]:
    return dict.fromkeys(names.split(), why)


NOT_SUPPORTED: dict[str, dict[str, str]] = {
    "jax": {
        **_all("empty_ref free_ref freeze", _REFS),
        "ds": "a slice helper for Ref / Pallas indexing; plait has no Refs",
        "memory": "JAX's memory spaces (jax.memory.Space: device, pinned host, any), taken by device_put and "
                  "carried in abstract values; plait's Arrays and shardings have one memory (the device's), so "
                  "the enum would have nothing to act on",
        "ad": "JAX's internal autodiff namespace (jax._src.interpreters.ad), not API",
        "jax2tf_associative_scan_reductions": "configures jax2tf, which plait does not have",
        "auto_pcast": _CONFIG + " (automatic pcast of varying values in shard_map)",
        "remove_size_one_mesh_axis_from_type": _CONFIG + " (sharding-in-types)",
        "thread_guard": _CONFIG + " (multi-threaded dispatch guards)",
        "array_garbage_collection_guard": _CONFIG + " (jax.Array garbage-collection logging)",
        "make_user_context": "JAX's config internals (user contexts for custom config states)",
        "legacy_prng_key": _CONFIG + " (warnings on raw uint32 keys)",
        "allow_f16_reductions": _CONFIG + " (float16 reductions)",
        "softmax_custom_jvp": _CONFIG + " (softmax's derivative rule)",
    },
    "jax.debug": {
        "DebugEffect": "JAX's effect-system classes; plait's callbacks carry their ordering as a parameter",
        "OrderedDebugEffect": "JAX's effect-system classes; plait's callbacks carry their ordering as a parameter",
    },
    "jax.lax": {
        "AccuracyMode": "accuracy controls of transcendental functions on accelerators; XLA CPU has one implementation",
        "Tolerance": "accuracy controls of transcendental functions on accelerators; XLA CPU has one implementation",
        "DotAlgorithm": "dot-algorithm selection for accelerators; XLA CPU computes float32 dots in one way",
        "DotAlgorithmPreset": "dot-algorithm selection for accelerators; XLA CPU computes float32 dots in one way",
        **_all("RandomAlgorithm rng_bit_generator rng_uniform",
               "XLA's RngBitGenerator and stateful RNG are not plait primitives (plait.random draws JAX's "
               "Threefry streams)"),
        **_all("after_all create_token", "XLA tokens are not part of plait's language (ordered effects thread "
                                         "their own)"),
        **_all("psend precv", "point-to-point Send/Recv collectives ordered by XLA tokens, with NCCL's "
                              "semantics: JAX 0.10.2 implements them on GPU only (NotImplementedError on CPU); "
                              "plait's language has no tokens and runs on XLA CPU (lax.ppermute moves values)"),
        "ragged_all_to_all": "XLA's RaggedAllToAll collective (slices of data-dependent sizes per device): XLA "
                             "CPU does not implement the opcode (JAX 0.10.2 on CPU fails with UNIMPLEMENTED), "
                             "and plait runs on XLA CPU",
        **_all("dce_sink stage", "JAX compiler internals (a dead-code-elimination sink, a staging marker)"),
        **_all("igamma_grad_a random_gamma_grad", "derivative helpers of JAX's own igamma / random_gamma "
                                                  "primitives; plait differentiates its compositions directly"),
        "scaled_dot": _MICROSCALING,
    },
    "jax.nn": _all("get_scaled_dot_general_config scaled_dot_general scaled_matmul", _MICROSCALING),
    "jax.random": dict(_random.NOT_SUPPORTED),
    "jax.profiler": {
        **_all("ProfileData ProfileEvent ProfilePlane",
               "JAX's profile data (XSpace planes and events): plait records no profiles, so there is no data to "
               "read (its trace annotations are documented no-ops)"),
        **_all("device_memory_profile save_device_memory_profile",
               "a pprof profile of device memory: plait records no profiles and has no allocator profile to dump"),
        **_all("start_server stop_server register_subprocess",
               "JAX's profiler server for TensorBoard / remote capture: plait runs no profiler server"),
    },
    "jax.custom_derivatives": {
        "remat_opt_p": "an internal primitive of JAX's remat optimisation; plait's checkpoint is its own primitive",
    },
    "jax.tree_util": {
        "default_registry": "JAX's C++ PyTreeRegistry object; plait's registry is behind register_pytree_node",
    },
}
"""Per JAX module, the public names plait does not have and why."""


NOT_SUPPORTED_MODULES: dict[str, str] = {
    "jax.export": "JAX's serialization of staged programs (Exported, StableHLO with a calling-convention version, "
                  "deserialized and called by any later JAX): plait's lowered programs are not versioned for "
                  "reloading by another process; use jit(f).lower(...).as_text() to read the StableHLO",
}
"""JAX modules plait does not have at all, with why (``plait.compat`` says it on import)."""
