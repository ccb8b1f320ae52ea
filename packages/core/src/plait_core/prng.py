"""JAX's Threefry-2x32 keys: seeding, ``split``, ``fold_in``, random bits, and
typed key arrays.

The bit layout is JAX's (with its default ``jax_threefry_partitionable``):

- a seed ``s`` gives the key words ``(s >> 32, s & 0xFFFFFFFF)`` (the high word
  is 0 unless x64 is on, as a seed is then a 32-bit integer);
- ``split(key, shape)`` numbers the new keys ``i = 0, 1, ...`` in row-major
  order and enciphers the counter pair ``(i >> 32, i & 0xFFFFFFFF)`` under
  ``key``; the two output words are the new key;
- ``fold_in(key, d)`` is the same encryption of the pair ``(0, d)``;
- ``random_bits`` enciphers the same counters; a 32-bit draw is the XOR of
  the two output words, a 64-bit one their concatenation (high word first),
  an 8- or 16-bit one the low bits of the XOR.

The cipher is Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random
numbers: as easy as 1, 2, 3", SC 2011), written with plait's integer
primitives so every interpreter can transform it.  Internally a key is its
data, a ``uint32[..., 2]`` array; users see either that raw form (from
``PRNGKey``) or a :class:`PRNGKeyArray` (from ``key``), whose shape leaves the
trailing 2 out.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from plait_core import dtypes, lax
from plait_core.abstract import get_aval
from plait_core.config import config
from plait_core.lax import _lenient
from plait_core.lax.calls import named_call
from plait_core.numpy.creation import array, asarray
from plait_core.primitives.elementwise import convert_element_type_p
from plait_core.tree_util import register_pytree_node

Array = Any

_ROTATIONS = ((13, 15, 26, 6), (17, 29, 16, 24))
_PARITY = 0x1BD11BDA
_U32 = dtypes.uint32
IMPL_NAME = "threefry2x32"
"""The name of the one PRNG implementation plait has (JAX's default)."""


# ---------------------------------------------------------------------------
# The cipher


def _rotate_left(x: Array, r: Array) -> Array:
    """``x`` rotated left by ``r`` bits (``0 < r < 32``; ``r`` of ``x``'s shape)."""
    return _lenient.bitwise_or(
        _lenient.shift_left(x, r), _lenient.shift_right_logical(x, _lenient.sub(np.uint32(32), r))
    )


def _threefry_pair(k0: Array, k1: Array, x0: Array, x1: Array) -> tuple[Array, Array]:
    """Threefry-2x32 (20 rounds) of the word pairs ``(x0, x1)`` under the key
    words ``(k0, k1)``: ``x0`` and ``x1`` are ``uint32`` arrays of one shape,
    ``k0`` and ``k1`` ``uint32`` arrays whose shape is a leading part of it
    (each key enciphers the pairs of the trailing axes).

    The five blocks of four rounds are one ``while_loop`` of five iterations,
    not twenty unrolled rounds: XLA treats an unrolled cipher as cheap
    elementwise work and copies all of it into every consumer's fusion, so a
    draw read through many slices (a grid of images built from samples)
    compiled the cipher once per slice, ten times slower than JAX, whose CPU
    lowering rolls the rounds the same way (issue 26).  The loop's output is
    computed once and then read.  The carry holds the block number and the
    key schedule at the keys' own (small) shape, rotated each block; a
    block's rotation distances are literals chosen by its parity (no array
    constants, which a jitted program would take as arguments).  The bits
    are those of the unrolled cipher."""
    shape = tuple(x0.shape)
    kdims = tuple(range(len(k0.shape)))

    def spread(k: Array) -> Array:
        return lax.broadcast_in_dim(k, shape, kdims)

    k2 = _lenient.bitwise_xor(_lenient.bitwise_xor(k0, k1), np.uint32(_PARITY))
    x0 = _lenient.add(x0, spread(k0))
    x1 = _lenient.add(x1, spread(k1))

    def block(state: tuple[Array, ...]) -> tuple[Array, ...]:
        i, y0, y1, ka, kb, kc = state
        odd = _lenient.ne(_lenient.bitwise_and(i, np.uint32(1)), np.uint32(0))
        for even_r, odd_r in zip(*_ROTATIONS):
            r = _lenient.select(odd, np.uint32(odd_r), np.uint32(even_r))
            y0 = _lenient.add(y0, y1)
            y1 = _lenient.bitwise_xor(_rotate_left(y1, lax.broadcast_in_dim(r, shape, ())), y0)
        i = _lenient.add(i, np.uint32(1))
        y0 = _lenient.add(y0, spread(kb))
        y1 = _lenient.add(_lenient.add(y1, spread(kc)), lax.broadcast_in_dim(i, shape, ()))
        return i, y0, y1, kb, kc, ka

    init = (np.uint32(0), x0, x1, k0, k1, k2)
    final = lax.while_loop(lambda state: lax.lt(state[0], np.uint32(5)), block, init)
    return final[1], final[2]


_cipher = named_call(_threefry_pair, name="threefry2x32")
"""The cipher staged once per shape and bound as one call: eager execution
compiles one program instead of one per operation, and jaxprs stay short."""


def _u32(x: Any) -> Array:
    return lax.convert_element_type(x, _U32)


def _dims(x: Array) -> tuple[Any, ...]:
    return tuple(x.shape)


def _word(data: Array, i: int) -> Array:
    """Word ``i`` (0 or 1) of key data ``uint32[..., 2]``."""
    return lax.index_in_dim(data, i, len(data.shape) - 1, keepdims=False)


def _size(shape: Sequence[int]) -> int:
    return int(np.prod(shape, dtype=np.int64))


def _encipher_counters(data: Array, shape: tuple[int, ...]) -> tuple[Array, Array]:
    """The cipher of the counters ``0 .. prod(shape) - 1`` (row-major, as
    64-bit numbers split in two words) under every key of ``data``
    (``uint32[*batch, 2]``): two ``uint32[*batch, *shape]`` arrays."""
    n = _size(shape)
    if n >= 2**32:
        raise ValueError(f"random: cannot draw {n} values from one key (at most 2**32 - 1 per call)")
    batch = _dims(data)[:-1]
    full = (*batch, *shape)
    nb = len(batch)
    lo = lax.reshape(lax.iota(_U32, n), shape) if n else lax.broadcast_in_dim(np.uint32(0), shape, ())
    lo = lax.broadcast_in_dim(lo, full, tuple(range(nb, len(full))))
    hi = lax.broadcast_in_dim(np.uint32(0), full, ())
    y0, y1 = _cipher(_word(data, 0), _word(data, 1), hi, lo)
    return y0, y1


def _stack_words(y0: Array, y1: Array) -> Array:
    shape = _dims(y0)
    dims = tuple(range(len(shape)))
    col = (*shape, 1)
    return lax.concatenate([lax.broadcast_in_dim(y0, col, dims), lax.broadcast_in_dim(y1, col, dims)], len(shape))


def threefry_2x32(key: Array, count: Array) -> Array:
    """Encrypt the ``uint32`` words of ``count`` under the raw key ``key``
    (``uint32[2]``), JAX's original layout: the flattened words (padded with a
    zero to even length) are split in halves that form the cipher's pairs.
    Returns ``uint32`` words of ``count``'s shape."""
    aval = get_aval(key, "the key of random.threefry_2x32")
    if tuple(aval.shape) != (2,) or aval.dtype != _U32:
        raise TypeError(f"random.threefry_2x32: expected a uint32[2] key, got {aval.str_short()}")
    count = _u32(count)
    shape = _dims(count)
    n = _size(shape)
    flat = lax.reshape(count, (n,))
    odd = n % 2
    if odd:
        flat = lax.concatenate([flat, np.zeros(1, np.uint32)], 0)
    half = (n + odd) // 2
    x0 = lax.slice(flat, (0,), (half,))
    x1 = lax.slice(flat, (half,), (2 * half,))
    y0, y1 = _cipher(_word(key, 0), _word(key, 1), x0, x1)
    out = lax.concatenate([y0, y1], 0)
    if odd:
        out = lax.slice(out, (0,), (n,))
    return lax.reshape(out, shape)


# ---------------------------------------------------------------------------
# Key data operations (data: uint32[*batch, 2])


def seed_data(seed: Any, where: str) -> Array:
    """The key data ``uint32[2]`` of an integer scalar seed."""
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"random.{where} accepts a scalar seed, but was given a PRNG key")
    if isinstance(seed, (bool, float, complex)):
        raise TypeError(f"random.{where}: the seed must be an integer, got {type(seed).__name__}")
    if isinstance(seed, int):
        s = seed
        if not -(2**63) <= s < 2**64:
            raise OverflowError(f"random.{where}: the seed {s} does not fit in 64 bits")
        s &= 0xFFFFFFFFFFFFFFFF
        top = (s >> 32) if config.x64_enabled else 0
        # Bound (not returned as NumPy) so the key is an array of the current
        # trace, as JAX's: a device array when eager, a constant when staged.
        words = np.array([top, s & 0xFFFFFFFF], np.uint32)
        return convert_element_type_p.bind(words, new_dtype=words.dtype, weak_type=False)
    aval = get_aval(seed, f"the seed of random.{where}")
    if aval.shape != ():
        raise TypeError(
            f"random.{where} accepts a scalar seed, but was given an array of shape {tuple(aval.shape)} != (). "
            "Use vmap for batching"
        )
    if not dtypes.is_int(aval.dtype):
        raise TypeError(f"random.{where}: the seed must be an integer, got {aval.str_short()}")
    seed = lax.convert_element_type(seed, dtypes.canonicalize_dtype(aval.dtype))
    width = np.dtype(seed.dtype).itemsize
    if width == 8:
        high = _u32(_lenient.shift_right_logical(seed, np.asarray(32, seed.dtype)))
    else:
        high = _u32(np.uint32(0))
    low = _u32(seed)  # sign-extends narrower signed seeds, as JAX does
    if width < 4 and dtypes.is_signed_int(np.dtype(seed.dtype)):
        low = _u32(lax.convert_element_type(seed, dtypes.int32))
    return _stack_words(high, low)


def split_data(data: Array, shape: tuple[int, ...]) -> Array:
    """``uint32[*batch, *shape, 2]``: new keys from each key of ``data``."""
    return _stack_words(*_encipher_counters(data, shape))


def fold_in_data(data: Array, value: Array) -> Array:
    """A key from ``data`` (``uint32[2]``) and a ``uint32`` scalar."""
    y0, y1 = _cipher(_word(data, 0), _word(data, 1), np.uint32(0), _u32(value))
    return _stack_words(y0, y1)


UINT_DTYPES = {8: dtypes.uint8, 16: dtypes.uint16, 32: dtypes.uint32, 64: dtypes.uint64}


def random_bits(data: Array, bit_width: int, shape: tuple[int, ...]) -> Array:
    """Uniform ``uint{bit_width}`` draws of ``shape`` from each key of ``data``."""
    y0, y1 = _encipher_counters(data, shape)
    dtype = UINT_DTYPES[bit_width]
    if bit_width == 64:
        if not config.x64_enabled:
            raise TypeError("random: 64-bit random bits need x64 (plait.config.update('jax_enable_x64', True))")
        hi = lax.convert_element_type(y0, dtype)
        return _lenient.bitwise_or(_lenient.shift_left(hi, np.uint64(32)), lax.convert_element_type(y1, dtype))
    words = _lenient.bitwise_xor(y0, y1)
    return words if bit_width == 32 else lax.convert_element_type(words, dtype)


# ---------------------------------------------------------------------------
# Typed keys


class KeyDType:
    """The dtype of typed key arrays (``key<fry>``, JAX's name for Threefry keys)."""

    name = "key<fry>"
    impl = IMPL_NAME
    type = dtypes.prng_key  # an extended dtype: issubdtype(KEY_DTYPE, dtypes.prng_key)

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, KeyDType) or other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


KEY_DTYPE = KeyDType()


class PRNGKeyArray:
    """An array of typed PRNG keys (from ``random.key``, ``split`` of one,
    ``wrap_key_data``): ``shape`` leaves out the key's two words, so
    ``random.key(0).shape == ()``.  It is a pytree over its ``uint32`` data,
    so it passes through ``jit``, ``vmap``, ``scan`` and ``grad`` (where it is
    not differentiable: its tangents are ``float0``)."""

    __slots__ = ("_data",)

    def __init__(self, data: Any) -> None:
        self._data = data

    @property
    def data(self) -> Array:
        """The raw ``uint32[*shape, 2]`` key data."""
        return self._data

    @property
    def shape(self) -> tuple[Any, ...]:
        return tuple(self._data.shape)[:-1]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return _size(self.shape)

    @property
    def dtype(self) -> KeyDType:
        return KEY_DTYPE

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of a scalar key array")
        return int(self.shape[0])

    def __iter__(self) -> Iterator[PRNGKeyArray]:
        return (self[i] for i in range(len(self)))

    def __getitem__(self, index: Any) -> PRNGKeyArray:
        idx = index if isinstance(index, tuple) else (index,)
        # Indexing that selects everything (k[...], k[:], k[()]) returns the key array itself, as
        # JAX's (flax.nnx's Rngs tests check identity); so does any index the data's indexing
        # answers with the data itself (k[0:n] of n keys).
        if all(i is Ellipsis or (isinstance(i, slice) and i == slice(None)) for i in idx):
            return self
        if any(i is Ellipsis for i in idx):
            idx = (*idx, slice(None))
        data = _data_array(self._data)[idx]
        return self if data is self._data else PRNGKeyArray(data)

    def reshape(self, *shape: Any) -> PRNGKeyArray:
        """The keys in a new shape (the key words stay last)."""
        dims = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        return PRNGKeyArray(_data_array(self._data).reshape((*dims, 2)))

    def copy(self) -> PRNGKeyArray:
        """A new key array holding the same keys."""
        return PRNGKeyArray(array(self._data, copy=True))

    def ravel(self) -> PRNGKeyArray:
        """The keys as a one-dimensional key array."""
        return self.reshape(-1)

    flatten = ravel

    def __eq__(self, other: object) -> Any:
        if not isinstance(other, PRNGKeyArray):
            return NotImplemented
        same = _data_array(self._data) == _data_array(other._data)
        return same.all(axis=-1)

    def __ne__(self, other: object) -> Any:
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else ~eq

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Array({self.shape}, dtype={KEY_DTYPE}) overlaying:\n{self._data}"


def _data_array(data: Any) -> Any:
    """``data`` as an array with NumPy-style methods (indexing, reshape)."""
    return asarray(data)


register_pytree_node(PRNGKeyArray, lambda k: ((k._data,), None), lambda _, children: PRNGKeyArray(*children))


def check_key(key: Any, where: str, allow_batched: bool = False) -> tuple[Array, bool]:
    """The data of ``key`` (typed or raw) and whether it was raw; a TypeError for
    what is not a key, a ValueError for a key array where one key is wanted."""
    if isinstance(key, PRNGKeyArray):
        data, raw = key.data, False
    else:
        try:
            aval = get_aval(key, f"the key of random.{where}")
        except TypeError:
            raise TypeError(f"random.{where}: unexpected PRNG key type {type(key).__name__}") from None
        if aval.dtype != _U32 or not aval.shape or aval.shape[-1] != 2:
            raise TypeError(
                f"random.{where}: invalid PRNG key data: expected a uint32 array whose shape ends with (2,) "
                f"(from random.key or PRNGKey), got {aval.str_short()}"
            )
        data, raw = key, True
    shape = tuple(data.shape)[:-1]
    if not allow_batched and shape:
        raise ValueError(
            f"random.{where} accepts a single key, but was given a key array of shape {shape} != (). "
            "Use vmap for batching."
        )
    return data, raw


def out_keys(data: Array, raw: bool) -> Any:
    """Key data returned in the form the caller gave (raw or typed)."""
    return data if raw else PRNGKeyArray(data)
