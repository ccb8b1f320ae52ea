"""plait: composable transformations of array programs.

One public API over the plait packages: the language (plait-core) and its
interpreters.  ``plait.numpy``, ``plait.lax``, ``plait.random``, ``plait.nn``,
``plait.tree_util``, ``plait.tree``, ``plait.scipy`` (with ``special``,
``stats``, ``linalg`` and ``signal``) and ``plait.flatten_util`` are the core
modules themselves, so
``import plait.numpy as pnp`` works as ``import jax.numpy as jnp`` does.
"""

from __future__ import annotations

import sys

import plait_autodiff
import plait_batching
import plait_core
import plait_dispatch
import plait_masking
from plait import core as core
from plait import custom_batching as custom_batching
from plait import custom_derivatives as custom_derivatives
from plait import debug as debug
from plait import distributed as distributed
from plait import dlpack as dlpack
from plait import dtypes as dtypes
from plait import errors as errors
from plait import experimental as experimental
from plait import image as image
from plait import interpreters as interpreters
from plait import lib as lib
from plait import ops as ops
from plait import profiler as profiler
from plait import sharding as sharding
from plait import stages as stages
from plait import typing as typing
from plait._jax_extras import (
    check_tracer_leaks,
    checking_leaks,
    closure_convert,
    copy_to_host_async,
    custom_gradient,
    debug_infs,
    debug_key_reuse,
    debug_nans,
    default_matmul_precision,
    default_prng_impl,
    enable_checks,
    ensure_compile_time_eval,
    explain_cache_misses,
    fwd_and_bwd,
    named_scope,
    numpy_dtype_promotion,
    numpy_rank_promotion,
    print_environment_info,
    threefry_partitionable,
    transfer_guard,
    transfer_guard_device_to_device,
    transfer_guard_device_to_host,
    transfer_guard_host_to_device,
    typeof,
)
from plait._naming import named_call
from plait._refs import Ref, new_ref
from plait.sharding import reshard
from plait_autodiff import (
    InvertibilityError,
    grad,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linear_transpose,
    linearize,
    value_and_grad,
    vjp,
)
from plait_batching import Pile, pile_axis, pile_layout, register_vmappable, vmap
from plait_core import (
    ClosedJaxpr,
    ConcretizationTypeError,
    DeletedArrayError,
    InvertibleDriftWarning,
    ShapedArray,
    ShapeDtypeStruct,
    TracerLeakError,
    UnboundAxisNameError,
    checkpoint,
    checkpoint_policies,
    config,
    custom_ivjp,
    custom_jvp,
    custom_vjp,
    custom_vmap,
    disable_jit,
    enable_x64,
    eval_jaxpr,
    eval_shape,
    invertible,
    make_jaxpr,
    remat,
)
from plait_core import flatten_util as flatten_util
from plait_core import lax as lax
from plait_core import nn as nn
from plait_core import numpy as numpy
from plait_core import random as random
from plait_core import scipy as scipy
from plait_core import tree as tree
from plait_core import tree_util as tree_util
from plait_core.config import default_device, enable_custom_prng, log_compiles, no_execution, no_tracing
from plait_core.dtypes import float0
from plait_core.host_callbacks import pure_callback
from plait_core.numpy.array_type import Array
from plait_core.scipy import special as _special
from plait_core.scipy import stats as _stats
from plait_core.scipy.stats import bernoulli as _bernoulli
from plait_core.scipy.stats import norm as _norm
from plait_core.scipy.stats import uniform as _uniform
from plait_core.shard_map import shard_map, smap
from plait_core.sharding import NamedSharding, P, set_mesh
from plait_dispatch import (
    Device,
    Shard,
    block_until_ready,
    clear_caches,
    default_backend,
    device_count,
    device_get,
    device_put,
    devices,
    effects_barrier,
    host_count,
    host_id,
    host_ids,
    jit,
    live_arrays,
    local_device_count,
    local_devices,
    make_array_from_callback,
    make_array_from_process_local_data,
    make_array_from_single_device_arrays,
    make_mesh,
    pmap,
    process_count,
    process_index,
    process_indices,
)
from plait_masking import ShapeError, mask, shapecheck

for _name, _module in {
    "numpy": numpy,
    "numpy.linalg": numpy.linalg,
    "numpy.fft": numpy.fft,
    "lax.linalg": lax.linalg,
    "lax": lax,
    "random": random,
    "nn": nn,
    "tree": tree,
    "tree_util": tree_util,
    "nn.initializers": nn.initializers,
    "scipy": scipy,
    "scipy.special": _special,
    "scipy.linalg": scipy.linalg,
    "scipy.signal": scipy.signal,
    "scipy.stats": _stats,
    "scipy.stats.bernoulli": _bernoulli,
    "scipy.stats.norm": _norm,
    "scipy.stats.uniform": _uniform,
    "flatten_util": flatten_util,
}.items():
    sys.modules[f"{__name__}.{_name}"] = _module
for _dist in _stats.__all__:  # every distribution, as ``import plait.scipy.stats.gamma`` finds it
    sys.modules[f"{__name__}.scipy.stats.{_dist}"] = getattr(_stats, _dist)

__version__ = "0.1.0"

#: The versions of the packages this installation is made of.
package_versions = {
    "plait-core": plait_core.__version__,
    "plait-autodiff": plait_autodiff.__version__,
    "plait-batching": plait_batching.__version__,
    "plait-masking": plait_masking.__version__,
    "plait-dispatch": plait_dispatch.__version__,
}

#: JAX's name for reverse-mode Jacobians.
jacobian = jacrev

__all__ = [
    "Device",
    "NamedSharding",
    "P",
    "Shard",
    "default_device",
    "effects_barrier",
    "enable_custom_prng",
    "host_count",
    "host_id",
    "host_ids",
    "live_arrays",
    "log_compiles",
    "make_mesh",
    "no_execution",
    "no_tracing",
    "process_indices",
    "reshard",
    "set_mesh",
    "smap",
    "check_tracer_leaks",
    "checking_leaks",
    "closure_convert",
    "copy_to_host_async",
    "custom_gradient",
    "debug_infs",
    "debug_key_reuse",
    "debug_nans",
    "default_matmul_precision",
    "default_prng_impl",
    "enable_checks",
    "ensure_compile_time_eval",
    "explain_cache_misses",
    "fwd_and_bwd",
    "named_scope",
    "numpy_dtype_promotion",
    "numpy_rank_promotion",
    "print_environment_info",
    "threefry_partitionable",
    "transfer_guard",
    "transfer_guard_device_to_device",
    "transfer_guard_device_to_host",
    "transfer_guard_host_to_device",
    "typeof",
    "clear_caches",
    "debug",
    "experimental",
    "interpreters",
    "lib",
    "pure_callback",
    "device_count",
    "dtypes",
    "errors",
    "float0",
    "jacobian",
    "local_device_count",
    "named_call",
    "Ref",
    "new_ref",
    "Array",
    "block_until_ready",
    "default_backend",
    "device_get",
    "device_put",
    "devices",
    "jit",
    "local_devices",
    "distributed",
    "make_array_from_callback",
    "make_array_from_process_local_data",
    "make_array_from_single_device_arrays",
    "pmap",
    "process_count",
    "process_index",
    "shard_map",
    "sharding",
    "mask",
    "shapecheck",
    "ShapeError",
    "InvertibilityError",
    "grad",
    "hessian",
    "jacfwd",
    "jacrev",
    "jvp",
    "linear_transpose",
    "linearize",
    "value_and_grad",
    "vjp",
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "DeletedArrayError",
    "ShapeDtypeStruct",
    "ShapedArray",
    "TracerLeakError",
    "UnboundAxisNameError",
    "checkpoint",
    "checkpoint_policies",
    "config",
    "custom_ivjp",
    "custom_jvp",
    "custom_vjp",
    "custom_vmap",
    "invertible",
    "InvertibleDriftWarning",
    "Pile",
    "pile_axis",
    "pile_layout",
    "register_vmappable",
    "remat",
    "vmap",
    "disable_jit",
    "enable_x64",
    "eval_jaxpr",
    "eval_shape",
    "flatten_util",
    "lax",
    "make_jaxpr",
    "nn",
    "numpy",
    "package_versions",
    "random",
    "scipy",
    "tree",
    "tree_util",
]
