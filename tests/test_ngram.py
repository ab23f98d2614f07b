"""The real-text lab's anchors (lab/ngram.py): interpolated modified Kneser-Ney over bytes worked by
hand, normalised, cut at window starts as the models' windows are; the compressor arithmetic."""

from __future__ import annotations

import math

import numpy as np
import pytest

from lab import ngram as N

# --- the n-gram ---------------------------------------------------------------------------------


def test_kneser_ney_by_hand() -> None:
    """train "aab": every count-of-counts too thin to estimate, so D = (0.5, 1, 1.5) everywhere
    except where estimated; worked out on paper below."""
    m1 = N.KneserNey(b"aab", 1)
    d = m1.distribution(b"")
    # unigram: c(a) = 2, c(b) = 1, total 3; n1 = n2 = 1, n3 = 0 → fallback D1 = .5, D2 = 1
    gamma = (0.5 * 1 + 1.0 * 1) / 3
    assert d[ord("a")] == pytest.approx((2 - 1.0) / 3 + gamma / 256)
    assert d[ord("b")] == pytest.approx((1 - 0.5) / 3 + gamma / 256)
    assert d[ord("c")] == pytest.approx(gamma / 256)
    m2 = N.KneserNey(b"aab", 2)
    # bigrams aa, ab (count 1 each): history a has total 2, N1 = 2; D1 = .5 (fallback)
    # continuation unigrams: a ← {a}, b ← {a}: c′ = 1, 1, total 2, N1 = 2, D1 = .5
    p_cont_b = (1 - 0.5) / 2 + (0.5 * 2 / 2) / 256
    assert m2.distribution(b"a")[ord("b")] == pytest.approx((1 - 0.5) / 2 + (0.5 * 2 / 2) * p_cont_b)
    # an unseen history backs off entirely to the continuation unigram
    assert m2.distribution(b"b")[ord("b")] == pytest.approx(p_cont_b)
    # no context at all (a window's first byte): the raw unigram, as in m1
    assert m2.distribution(b"")[ord("a")] == pytest.approx(d[ord("a")])


@pytest.mark.parametrize("order", [1, 2, 3, 5, 6])
def test_kneser_ney_sums_to_one(order: int) -> None:
    rng = np.random.default_rng(order)
    train = bytes(rng.choice(np.frombuffer(b"the cat sat on the mat. ", np.uint8), 4000)) + bytes(
        rng.integers(0, 256, 500, dtype=np.uint8)
    )
    m = N.KneserNey(train, order)
    for _ in range(20):
        n = int(rng.integers(0, 8))
        ctx = bytes(rng.integers(0, 256, n, dtype=np.uint8)) if rng.random() < 0.5 else train[100 : 100 + n]
        p = m.distribution(ctx)
        assert p.min() > 0
        assert p.sum() == pytest.approx(1.0, abs=1e-12)


def test_ngram_bits_cut_at_window_starts() -> None:
    m = N.KneserNey(b"abcabcabcabd" * 20, 3)
    text = b"abcabcabcab"
    cut = m.bits(text, 4)  # predicted bytes 1 … 10; bytes 1, 5, 9 start a window (1 byte of context)
    whole = m.bits(text, None)
    for g in range(1, len(text)):
        avail = g - ((g - 1) // 4) * 4
        top = min(avail + 1, 3)
        want = (
            -math.log2(m.distribution(text[g - top + 1 : g])[text[g]])
            if top > 1
            else -math.log2(m.distribution(b"")[text[g]])
        )
        assert cut[g - 1] == pytest.approx(want)
    assert cut[1] == pytest.approx(whole[1]) and cut[4] != pytest.approx(whole[4])


def test_compressor_arithmetic() -> None:
    identity = lambda b: b  # noqa: E731  # 8 bits per byte, given anything
    assert N.conditional_bits(identity, b"given", b"text!") == 8 * 5
    train = bytes(range(256)) * 40
    bpb = N.compressor_bpb(train, b"x" + bytes(range(256)) * 4)
    # the held-out text repeats the train text: xz given it needs far less than 8 bits per byte
    assert bpb["xz"] < 1.0 and set(bpb) == {"xz", "bz2", "zlib"}
