"""plait-core: the language every plait interpreter interprets.

Abstract values, primitives, tracing to jaxprs, partial evaluation, pytrees
and the NumPy-style user API built from primitives.  Interpreters (autodiff,
batching, masking, dispatch) register rules for these primitives in their own
packages; core never imports them.
"""

from plait_core import (
    dtypes,
    errors,
    lax,
    lax_compositions,
    nn,
    numpy,
    primitives,
    random,
    tree,
    tree_util,
)
from plait_core.abstract import (
    ShapedArray,
    ShapeDtypeStruct,
    get_aval,
    register_array_type,
    registered_array_types,
    to_numpy,
    to_tangent_type,
)
from plait_core.axes import axis_frame_size, bound_axis_names, extend_axis_env
from plait_core.checkpoint import checkpoint, checkpoint_policies, remat
from plait_core.config import config, disable_jit, enable_x64
from plait_core.custom_batching import custom_vmap
from plait_core.custom_derivatives import custom_jvp, custom_vjp
from plait_core.dce import dce_closed_jaxpr, dce_jaxpr, dce_rules
from plait_core.dims import InconclusiveDimensionOperation, SymbolicDim
from plait_core.errors import (
    ConcretizationTypeError,
    DeletedArrayError,
    TracerBoolConversionError,
    TracerIntegerConversionError,
    TracerLeakError,
    UnboundAxisNameError,
    UnexpectedTracerError,
)
from plait_core.invertible import InvertibleDriftWarning, custom_ivjp, invertible
from plait_core.jaxpr import (
    ClosedJaxpr,
    Jaxpr,
    JaxprEqn,
    JaxprTypeError,
    Literal,
    Var,
    check_jaxpr,
    eval_closed_jaxpr,
    eval_jaxpr,
    jaxpr_as_fun,
    pp_jaxpr,
)
from plait_core.partial_eval import (
    PartialEvalTrace,
    PartialVal,
    partial_eval_jaxpr,
    partial_eval_rules,
    trace_to_jaxpr_partial,
)
from plait_core.primitive import Primitive, RuleRegistry, all_primitives, primitive_by_name
from plait_core.staging import (
    StagingTrace,
    StagingTracer,
    eval_shape,
    make_jaxpr,
    shaped_abstractify,
    trace_pytree_function,
    trace_to_jaxpr,
)
from plait_core.trace import (
    EvalTrace,
    Trace,
    Tracer,
    concrete_or_error,
    current_trace,
    eager_backend,
    is_eager,
    set_current_trace,
    set_eager_backend,
    transformation,
)

__version__ = "0.1.0"

__all__ = [
    "ClosedJaxpr",
    "ConcretizationTypeError",
    "DeletedArrayError",
    "EvalTrace",
    "InconclusiveDimensionOperation",
    "Jaxpr",
    "JaxprEqn",
    "JaxprTypeError",
    "Literal",
    "PartialEvalTrace",
    "PartialVal",
    "Primitive",
    "RuleRegistry",
    "ShapeDtypeStruct",
    "ShapedArray",
    "StagingTrace",
    "StagingTracer",
    "SymbolicDim",
    "Trace",
    "Tracer",
    "TracerBoolConversionError",
    "TracerIntegerConversionError",
    "TracerLeakError",
    "UnboundAxisNameError",
    "UnexpectedTracerError",
    "Var",
    "all_primitives",
    "axis_frame_size",
    "bound_axis_names",
    "check_jaxpr",
    "checkpoint",
    "checkpoint_policies",
    "custom_ivjp",
    "custom_jvp",
    "custom_vjp",
    "custom_vmap",
    "invertible",
    "InvertibleDriftWarning",
    "remat",
    "concrete_or_error",
    "config",
    "current_trace",
    "dce_closed_jaxpr",
    "dce_jaxpr",
    "dce_rules",
    "dtypes",
    "eager_backend",
    "disable_jit",
    "enable_x64",
    "errors",
    "eval_closed_jaxpr",
    "eval_jaxpr",
    "eval_shape",
    "extend_axis_env",
    "get_aval",
    "is_eager",
    "jaxpr_as_fun",
    "lax",
    "make_jaxpr",
    "nn",
    "numpy",
    "random",
    "tree",
    "partial_eval_jaxpr",
    "partial_eval_rules",
    "pp_jaxpr",
    "primitive_by_name",
    "register_array_type",
    "registered_array_types",
    "set_current_trace",
    "set_eager_backend",
    "shaped_abstractify",
    "to_numpy",
    "to_tangent_type",
    "trace_pytree_function",
    "trace_to_jaxpr",
    "transformation",
    "tree_util",
]
