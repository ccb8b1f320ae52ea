"""Newton's method for roots and for a minimum, with grad inside lax.while_loop."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax


def newton(f, x0, tol=1e-6, max_iter=50):
    df = jax.grad(f)

    def cond(s):
        _x, i, step = s
        return (jnp.abs(step) > tol) & (i < max_iter)

    def body(s):
        x, i, _ = s
        step = f(x) / df(x)
        return x - step, i + 1, step

    x, iters, _ = lax.while_loop(cond, body, (x0, 0, 1.0))
    return x, iters


root, iters = jax.jit(lambda x0: newton(lambda x: x ** 3 - 2 * x - 5, x0))(2.0)
show("cubic_root", root, 2.0945514815423265, rtol=1e-6)
show("cos_fixed_point", newton(lambda x: jnp.cos(x) - x, 1.0)[0], 0.7390851332151607, rtol=1e-6)
sqrt2 = jax.vmap(lambda a: newton(lambda x: x * x - a, 1.0)[0])(jnp.array([2.0, 9.0, 0.25]))
show("vmapped_sqrt", sqrt2, np.sqrt([2.0, 9.0, 0.25]), rtol=1e-6)


def rosen(p):
    return (1 - p[0]) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2


p = jnp.array([-1.0, 1.5])
for _ in range(20):
    p = p - jnp.linalg.solve(jax.hessian(rosen)(p), jax.grad(rosen)(p))
show("rosenbrock_newton", p, [1.0, 1.0], rtol=1e-4, atol=1e-4)
