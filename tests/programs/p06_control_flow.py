"""Tutorial: structured control flow (cond, switch, fori_loop, while_loop, scan)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax


@jax.jit
def piecewise(x):
    return lax.cond(x > 0, lambda v: v ** 2, lambda v: -v, x)


show("cond", [piecewise(3.0), piecewise(-2.0)], [9.0, 2.0])
show("switch", [lax.switch(i, [lambda v: v + 1, lambda v: v * 10, lambda v: -v], 2.0) for i in range(3)], [3.0, 20.0, -2.0])
show("fori", lax.fori_loop(0, 10, lambda i, acc: acc + i * i, 0), sum(i * i for i in range(10)))


def collatz_steps(n):
    def cond(s):
        return s[0] != 1

    def body(s):
        n, k = s
        return jnp.where(n % 2 == 0, n // 2, 3 * n + 1), k + 1

    return lax.while_loop(cond, body, (n, 0))[1]


show("while", collatz_steps(27), 111)


def cumsum_step(c, x):
    c = c + x
    return c, c


xs = jnp.arange(1.0, 6.0)
final, ys = lax.scan(cumsum_step, 0.0, xs)
show("scan_carry", final, 15.0)
show("scan_ys", ys, np.cumsum(np.arange(1.0, 6.0)))
show("grad_through_scan", jax.grad(lambda a: lax.scan(lambda c, x: (c * a + x, None), 0.0, xs)[0])(0.5),
     sum(k * 0.5 ** (k - 1) * x for k, x in zip(range(4, -1, -1), np.arange(1.0, 6.0))))
show("map", lax.map(lambda v: v ** 2, xs), np.arange(1.0, 6.0) ** 2)
