"""Tutorial: pytrees (tree_map over parameters, custom nodes, flatten/unflatten)."""
import itertools

import jax
import jax.numpy as jnp
import numpy as np
from _check import show


def init(sizes):
    return [{"w": jnp.ones((m, n)) * 0.1, "b": jnp.zeros(n)} for m, n in itertools.pairwise(sizes)]


params = init([3, 4, 2])
show("n_leaves", len(jax.tree_util.tree_leaves(params)), 4)
shapes = jax.tree_util.tree_map(lambda p: p.shape, params)
show("shapes", [shapes[0]["w"], shapes[1]["w"]], [[3, 4], [4, 2]])
scaled = jax.tree.map(lambda p, g: p - 0.5 * g, params, params)
show("scaled_w", scaled[0]["w"], np.full((3, 4), 0.05))
leaves, treedef = jax.tree_util.tree_flatten(params)
again = jax.tree_util.tree_unflatten(treedef, [leaf + 1 for leaf in leaves])
show("unflatten", again[1]["b"], [1.0, 1.0])


@jax.tree_util.register_pytree_node_class
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def tree_flatten(self):
        return (self.x, self.y), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        return cls(*children)


def norm2(p):
    return p.x ** 2 + p.y ** 2


g = jax.grad(norm2)(Point(3.0, 4.0))
show("custom_node_grad", [g.x, g.y], [6.0, 8.0])
show("tree_reduce", jax.tree_util.tree_reduce(lambda a, b: a + b, [1.0, (2.0, 3.0)]), 6.0)
paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_flatten_with_path({"a": [1, 2]})[0]]
print("paths:", paths)
assert paths == ["['a'][0]", "['a'][1]"]
