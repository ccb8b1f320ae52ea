"""Tutorial: the sharp bits (immutable arrays, out-of-bounds indexing, dtypes, NaNs)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show

x = jnp.arange(5.0)
y = x.at[2].set(10.0)
show("at_set", [x[2], y[2]], [2.0, 10.0])
show("at_add", x.at[jnp.array([0, 0, 1])].add(1.0), [2.0, 2.0, 2.0, 3.0, 4.0])
show("at_mul", x.at[1:3].multiply(3.0), [0.0, 3.0, 6.0, 3.0, 4.0])
show("oob_gather_clamps", x[10], 4.0)
show("oob_scatter_drops", x.at[10].set(99.0), np.arange(5.0))
show("take_fill", jnp.take(x, jnp.array([1, 7]), mode="fill", fill_value=-1.0), [1.0, -1.0])
try:
    jnp.sum([1, 2, 3])
    raised = 0
except TypeError:
    raised = 1
show("list_arg_raises", raised, 1)
show("default_float32", jnp.array(1.5).dtype == jnp.float32, 1.0)
show("int_div_promotes", (jnp.arange(3) / 2).dtype == jnp.float32, 1.0)
show("weak_scalar_keeps_dtype", (jnp.ones(2, jnp.float16) * 2.0).dtype == jnp.float16, 1.0)
show("nan_propagates", jnp.isnan(jnp.max(jnp.array([1.0, jnp.nan]))), 1.0)
show("grad_of_where_safe", jax.grad(lambda v: jnp.where(v > 0, jnp.sqrt(jnp.where(v > 0, v, 1.0)), 0.0))(0.0), 0.0)
try:
    jax.jit(lambda v: 1.0 if v > 0 else 0.0)(1.0)
    concrete = 0
except jax.errors.ConcretizationTypeError:
    concrete = 1
show("python_if_under_jit_raises", concrete, 1)
show("numpy_vs_jnp_update", np.asarray(jnp.array([1, 2, 3]).at[0].set(5)), [5, 2, 3])
