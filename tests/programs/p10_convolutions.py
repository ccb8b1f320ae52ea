"""Tutorial: convolutions (jnp.convolve, lax.conv_general_dilated, conv_transpose)."""
import jax
import jax.numpy as jnp
import numpy as np
from _check import show
from jax import lax

x = np.linspace(0, 1, 12)
k = np.array([0.25, 0.5, 0.25])
show("convolve_same", jnp.convolve(jnp.asarray(x), jnp.asarray(k), mode="same"), np.convolve(x, k, mode="same"))
show("correlate_full", jnp.correlate(jnp.asarray(x), jnp.asarray(k), mode="full"), np.correlate(x, k, mode="full"))

img = np.arange(2 * 3 * 6 * 6, dtype=np.float32).reshape(2, 3, 6, 6) / 100
ker = np.linspace(-1, 1, 4 * 3 * 3 * 3, dtype=np.float32).reshape(4, 3, 3, 3)
out = lax.conv_general_dilated(jnp.asarray(img), jnp.asarray(ker), (1, 1), "VALID")


def conv_ref(img, ker, stride=1):
    n, _c, h, w = img.shape
    o, _, kh, kw = ker.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    res = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = img[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw].astype(np.float64)
            res[:, :, i, j] = np.einsum("nchw,ochw->no", patch, ker.astype(np.float64))
    return res


show("conv_valid", out, conv_ref(img, ker), rtol=1e-4, atol=1e-4)
strided = lax.conv_general_dilated(jnp.asarray(img), jnp.asarray(ker), (2, 2), "VALID")
show("conv_strided", strided, conv_ref(img, ker, 2), rtol=1e-4, atol=1e-4)
same = lax.conv_general_dilated(jnp.asarray(img), jnp.asarray(ker), (1, 1), "SAME")
padded = np.pad(img, ((0, 0), (0, 0), (1, 1), (1, 1)))
show("conv_same", same, conv_ref(padded, ker), rtol=1e-4, atol=1e-4)
nhwc = lax.conv_general_dilated(jnp.asarray(img.transpose(0, 2, 3, 1)), jnp.asarray(ker.transpose(2, 3, 1, 0)),
                                (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"))
show("conv_nhwc", nhwc, conv_ref(img, ker).transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-4)
g = jax.grad(lambda k: jnp.sum(lax.conv_general_dilated(jnp.asarray(img), k, (1, 1), "VALID") ** 2))(jnp.asarray(ker))
show("conv_grad_shape", g.shape, [4, 3, 3, 3])
show("conv_grad_head", g[0, 0, 0])
