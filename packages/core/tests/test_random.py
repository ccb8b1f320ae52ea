"""plait_core.random: Threefry-2x32 known answers, determinism, distributions."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import plait_core as pc
from plait_core import random


@pytest.mark.parametrize(
    "key,count,expected",
    [  # Known-answer vectors of Threefry-2x32 with 20 rounds (Random123).
        ((0x00000000, 0x00000000), (0x00000000, 0x00000000), (0x6B200159, 0x99BA4EFE)),
        ((0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF), (0x1CB996FC, 0xBB002BE7)),
        ((0x13198A2E, 0x03707344), (0x243F6A88, 0x85A308D3), (0xC4923A9C, 0x483DF7A0)),
    ],
)
def test_threefry_known_answers(key: tuple[int, int], count: tuple[int, int], expected: tuple[int, int]) -> None:
    out = random.threefry_2x32(np.array(key, np.uint32), np.array(count, np.uint32))
    assert [int(v) for v in np.asarray(out)] == list(expected)


def test_same_key_same_numbers_and_staging_agrees() -> None:
    key = random.PRNGKey(42)
    a = np.asarray(random.uniform(key, (6,)))
    b = np.asarray(random.uniform(key, (6,)))
    np.testing.assert_array_equal(a, b)
    closed = pc.make_jaxpr(lambda k: random.uniform(k, (6,)))(key)
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, key)[0]
    np.testing.assert_array_equal(np.asarray(staged), a)


def test_split_and_fold_in_give_distinct_keys() -> None:
    key = random.PRNGKey(0)
    keys = np.asarray(random.split(key, 4))
    assert keys.shape == (4, 2) and keys.dtype == np.uint32
    assert len({tuple(k) for k in keys}) == 4
    f1, f2 = np.asarray(random.fold_in(key, 1)), np.asarray(random.fold_in(key, 2))
    assert tuple(f1) != tuple(f2) and tuple(f1) != tuple(np.asarray(key))


def test_uniform_range_and_moments() -> None:
    u = np.asarray(random.uniform(random.PRNGKey(1), (20000,), minval=-2.0, maxval=3.0))
    assert u.dtype == np.float32 and u.min() >= -2.0 and u.max() < 3.0
    assert abs(u.mean() - 0.5) < 0.05
    assert abs(u.var() - 25 / 12) < 0.1


def test_normal_moments() -> None:
    z = np.asarray(random.normal(random.PRNGKey(2), (20000,)))
    assert np.all(np.isfinite(z))
    assert abs(z.mean()) < 0.03 and abs(z.std() - 1.0) < 0.03


def test_bernoulli_frequency() -> None:
    b = np.asarray(random.bernoulli(random.PRNGKey(3), 0.3, (20000,)))
    assert b.dtype == np.bool_ and abs(b.mean() - 0.3) < 0.02


def test_randint_covers_the_range() -> None:
    r = np.asarray(random.randint(random.PRNGKey(4), (5000,), 3, 10))
    assert r.dtype == np.int32 and set(np.unique(r).tolist()) == set(range(3, 10))
    counts = np.bincount(r - 3) / r.size
    assert np.all(np.abs(counts - 1 / 7) < 0.03)


def test_permutation_is_a_permutation() -> None:
    p = np.asarray(random.permutation(random.PRNGKey(5), 50))
    assert sorted(p.tolist()) == list(range(50)) and p.tolist() != list(range(50))
    x = np.arange(12).reshape(6, 2)
    px = np.asarray(random.permutation(random.PRNGKey(5), x))
    assert sorted(map(tuple, px.tolist())) == sorted(map(tuple, x.tolist()))


def test_categorical_frequencies_follow_softmax() -> None:
    logits = np.log(np.array([0.2, 0.5, 0.3], np.float32))
    draws = np.asarray(random.categorical(random.PRNGKey(6), logits, shape=(20000,)))
    freq = np.bincount(draws, minlength=3) / draws.size
    np.testing.assert_allclose(freq, [0.2, 0.5, 0.3], atol=0.02)


def test_bits_dtypes() -> None:
    b8 = np.asarray(random.bits(random.PRNGKey(7), (1000,), np.uint8))
    assert b8.dtype == np.uint8 and b8.max() > 200
    with pytest.raises(ValueError, match=r"random.bits: dtype argument must be an unsigned int dtype, got int32"):
        random.bits(random.PRNGKey(7), (3,), np.int32)


def test_bad_key_is_reported() -> None:
    with pytest.raises(TypeError, match=r"random.uniform: invalid PRNG key data: .* got f32\[3\]"):
        random.uniform(np.zeros(3, np.float32), (2,))
    with pytest.raises(ValueError, match=r"random.normal: dtype argument must be a float or complex dtype, got int32"):
        random.normal(random.PRNGKey(0), (2,), np.int32)


def test_traced_seed() -> None:
    def f(seed: Any) -> Any:
        return random.uniform(random.PRNGKey(seed), (3,))

    closed = pc.make_jaxpr(f)(np.int32(9))
    staged = pc.eval_jaxpr(closed.jaxpr, closed.consts, np.int32(9))[0]
    np.testing.assert_array_equal(np.asarray(staged), np.asarray(f(9)))
