"""The real-text lab's evidence (issue 39): the byte n-gram, the compressor anchor, the same-bytes
evaluation on a tiny model, and the page's verdict sentences against the shipped evidence.json."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from lab import lm_eval as E
from lab import ngram as N
from lab.model import ModelConfig, TinyTransformer

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


# --- the same-bytes evaluation ------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny() -> TinyTransformer:
    torch.manual_seed(0)
    return TinyTransformer(ModelConfig("alibi", 256, 16, 16, 2, 2), seed=0).eval()


def test_capped_bits_is_a_sliding_window(tiny: TinyTransformer) -> None:
    data = bytes(np.random.default_rng(1).integers(0, 256, 70, dtype=np.uint8))
    ids = torch.tensor(list(data))
    cap = 8
    got = E.capped_bits(tiny, data, cap=cap, stride=1)
    assert got.shape == (69,)
    with torch.no_grad():
        for g in (1, 5, 8, 9, 30, 69):
            ctx = ids[max(0, g - cap) : g][None]
            p = torch.log_softmax(tiny(ctx)[0, -1], -1)[ids[g]]
            assert got[g - 1] == pytest.approx(float(-p / math.log(2)), abs=1e-4)
    strided = E.capped_bits(tiny, data, cap=cap, stride=3)  # 6 … 8 bytes of context past the first cap
    assert strided.shape == got.shape
    np.testing.assert_allclose(strided[:cap], got[:cap], atol=1e-6)
    with torch.no_grad():  # windows end at bytes 11, 14, …: byte 12 opens the one ending at 14 (6 bytes)
        p = torch.log_softmax(tiny(ids[6:12][None])[0, -1], -1)[ids[12]]
    assert strided[11] == pytest.approx(float(-p / math.log(2)), abs=1e-4)


def test_same_bytes_pairs_the_right_bytes(tiny: TinyTransformer) -> None:
    data = bytes(np.random.default_rng(2).integers(0, 256, 65, dtype=np.uint8))
    cap, length = 8, 32
    capped = E.capped_bits(tiny, data, cap=cap, stride=1)
    long = E.long_bits(tiny, data, length)
    out = E.same_bytes(long, capped, length, cap)
    assert out["windows"] == 2 and len(out["past"]) == 2
    for w in range(2):
        sl = slice(w * length + cap, (w + 1) * length)
        assert out["past"][w] == pytest.approx(float(np.mean(long[sl] - capped[sl])), abs=1e-4)
    # window 0's first cap bytes have the same context both ways: identical scores
    np.testing.assert_allclose(long[:cap], capped[:cap], atol=1e-5)


# --- the page's sentences follow from the shipped evidence.json ------------------------------------


def test_verdicts_follow_from_shipped_evidence() -> None:
    from explain.chapters import real_text_evidence as ev_ch
    from explain.chapters.real_text_stats import bootstrap

    ev = ev_ch.load_evidence()
    if not ev.get("models"):
        pytest.skip("assets/lm/evidence.json holds no model yet")
    sb = ev_ch.same_bytes(lang="en")
    assert sb is not None
    top = ev["eval_lengths"][-1]
    for name, m in ev["models"].items():
        entry = m["lengths"].get(str(top))
        if not entry or not entry["past"]:
            continue
        e = bootstrap(entry["past"])
        label = ev_ch.enc_label(name, "en")
        (line,) = [s for s in sb.sentences if s.startswith(f"**{label}**")]
        assert e.signed_text() in line
        word = {-1: "it uses context past", 1: "hurts it", 0: "not distinguishable"}[e.sign]
        assert word in line
    an = ev_ch.anchors(lang="en")
    assert an is not None
    k4 = f"{ev['anchors']['ngram']['4']['bpb']:.3f}"
    assert any(k4 in s for s in an.sentences)
    for lang in ("en", "ko"):
        assert "reproduces" not in json.dumps(ev_ch.same_bytes(lang=lang).sentences)  # type: ignore[union-attr]
