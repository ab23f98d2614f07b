"""A trained byte-level model on the learner's text (explain/chapters/trained_attention.py) and the
attention lab's "trained on real text" switch: every number agrees with a computation written here
from the shipped model's own logits and weights."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from explain.chapters import attention_lab as lab
from explain.chapters import trained_attention as T
from explain.chapters import trained_attention_figures as TF
from explain.figures.theme import panel_cells, screen_blocks, screen_factor
from explain.i18n import t
from lab import corpus as C
from lab import lm
from tests.helpers import chart, chart_elements, errors, open_page
from tests.hostile import HAND_PICKED, LONG

# One thread: these models are tiny, and on a busy 2-core machine torch's second thread spends ~100×
# the work waiting for the first (0.3 s of CPU for a 6-byte text, 4 ms with one thread).
torch.set_num_threads(1)

PAGE = "pages/labs/attention_lab.py"
TEXT = "The cat sat on the mat. 고양이가 매트 위에 앉았다 😀\t<b>$x$</b>\x01"
LONG_TEXT = ("def f(x):\n    return x + 1  # 한글 " * 12)[:300]  # > TRAIN_LEN bytes, < MAX_TEXT_BYTES


def reference(encoding: str, stretch: str, text: str) -> tuple[bytes, np.ndarray]:
    """(the bytes read, float64 next-byte probabilities (n, 256)) straight from the model's logits."""
    model = lm.shipped(encoding) if not stretch else lm.stretched(lm.shipped(encoding), stretch, T.run_length(text))
    data = text.encode("utf-8")[: lm.MAX_TEXT_BYTES]
    while data and len(text.encode("utf-8")) > len(data) and (text.encode("utf-8")[len(data)] & 0xC0) == 0x80:
        data = data[:-1]  # never inside a character
    if model.cfg.encoding == "learned":
        data = data[: model.cfg.max_len]  # a table with rows for the trained positions only
    ids = torch.tensor(list(data), dtype=torch.long)[None]
    with torch.no_grad():
        logits = model(ids)[0].double().numpy()  # (n, 256)
    z = logits - logits.max(-1, keepdims=True)
    p = np.exp(z)
    return data, p / p.sum(-1, keepdims=True)


@pytest.mark.parametrize("method", T.readable())
@pytest.mark.parametrize("text", [TEXT, LONG_TEXT], ids=["short", "long"])
def test_read_agrees_with_the_models_own_logits(method, text):
    encoding, stretch = T.resolve(method)
    r = T.read_text(encoding, text, stretch, "en")
    data, p = reference(encoding, stretch, text)
    n = len(data)
    assert r.data == data and r.n == n == len(r.labels)
    # Surprise: −log2 of the probability of each actual next byte.
    want = -np.log2(p[np.arange(n - 1), np.frombuffer(data[1:], np.uint8)])
    np.testing.assert_allclose(r.surprise, want, rtol=1e-5, atol=1e-6)
    assert r.bits_per_byte == pytest.approx(want.mean(), rel=1e-6)
    # The readout after the last byte: the k most likely, sorted, as the softmax says.
    best = np.sort(p[-1])[::-1][: T.TOP_K]
    assert list(r.top_probs) == sorted(r.top_probs, reverse=True)
    np.testing.assert_allclose(r.top_probs, best, rtol=1e-6)
    np.testing.assert_allclose(p[-1][list(r.top_bytes)], r.top_probs, rtol=1e-6)  # the bytes named
    assert r.top_labels == tuple(chr(b) if 0x20 < b < 0x7F else T.next_byte_label(b) for b in r.top_bytes)
    # Attention: causal, rows sum to 1, the first m bytes.
    a = r.attention.astype(np.float64)
    m = r.drawn
    assert a.shape == (2, 4, m, m) and m == min(n, T.DRAWN)
    np.testing.assert_allclose(a.sum(-1), 1.0, atol=1e-5)
    assert np.all(a[..., np.triu_indices(m, 1)[0], np.triu_indices(m, 1)[1]] == 0.0)
    assert np.all(a >= 0)
    # The grid: the same weights, the future blank.
    g = r.grid()
    assert g.shape == (8, m, m)
    assert np.isnan(g[:, 0, 1:]).all() if m > 1 else True
    low = np.tril(np.ones((m, m), dtype=bool))
    np.testing.assert_array_equal(g[:, low], r.attention.reshape(8, m, m)[:, low])


@pytest.mark.parametrize("method", T.readable())
def test_head_facts_agree_with_a_naive_loop(method):
    encoding, stretch = T.resolve(method)
    r = T.read_text(encoding, LONG_TEXT, stretch, "en", drawn=lm.MAX_TEXT_BYTES)  # keep every row
    n = r.n
    assert r.drawn == n
    for s in r.heads:
        w = r.attention[s.layer, s.head].astype(np.float64)
        dist = sum(sum(w[i, j] * (i - j) for j in range(i + 1)) for i in range(n)) / n
        prev = sum(w[i, i - 1] for i in range(1, n)) / (n - 1)
        assert s.distance == pytest.approx(dist, rel=1e-9, abs=1e-9)
        assert s.previous == pytest.approx(prev, rel=1e-9, abs=1e-12)
        assert s.is_previous == (prev >= T.PREVIOUS)
    for s, line in zip(r.heads, r.head_sentences, strict=True):
        assert f"{s.distance:.1f}" in line and f"{s.previous:.0%}" in line
        assert ("previous-byte head" in line) == s.is_previous


def test_sentences_state_the_computed_facts():
    for lang in ("en", "ko"):
        r = T.read_text("rope", LONG_TEXT, "", lang)
        worst = int(np.argmax(r.surprise)) + 1
        expects, surprise = r.sentences
        assert f"«{T.md(r.top_labels[0])}»" in expects and f"{r.top_probs[0]:.2f}" in expects
        assert f"{r.bits_per_byte:.2f}" in surprise and f"{r.surprise[worst - 1]:.1f}" in surprise
        assert str(worst) in surprise
        # Past the training length: the two means, over the bytes before and from position TRAIN_LEN.
        past = next(x for x in r.notes if str(r.n - T.TRAIN_LEN) in x)
        assert f"{r.surprise[: T.TRAIN_LEN - 1].mean():.2f}" in past
        assert f"{r.surprise[T.TRAIN_LEN - 1 :].mean():.2f}" in past
    short = T.read_text("rope", "hi", "", "en")
    assert not any(str(T.TRAIN_LEN) in x for x in short.notes)


def test_learned_reads_as_far_as_its_table_and_long_text_is_cut():
    r = T.read_text("learned", LONG_TEXT, "", "en")
    assert r.n == T.TRAIN_LEN and r.table_end == T.TRAIN_LEN
    assert any(f"0 … {T.TRAIN_LEN - 1}" in x for x in r.notes)
    big = T.read_text("alibi", "가" * 2000, "", "en")
    assert big.n == 1023 and big.n_bytes == 6000 and big.cut_at == 1023  # 341 whole syllables
    assert big.data.decode("utf-8") == "가" * 341
    assert any("6000" in x and "1023" in x for x in big.notes)


@pytest.mark.parametrize("stretch", T.STRETCHES)
def test_a_stretch_within_the_training_length_is_the_plain_model(stretch):
    plain = T.read_text(T.STRETCHED, TEXT, "", "en")
    same = T.read_text(T.STRETCHED, TEXT, stretch, "en")
    assert len(TEXT.encode()) <= T.TRAIN_LEN and same.scale == 1.0
    np.testing.assert_allclose(same.attention, plain.attention, atol=1e-6)
    np.testing.assert_allclose(same.surprise, plain.surprise, atol=1e-5)
    # Past it the frequencies do change (so the check above can fail): s = bytes / TRAIN_LEN.
    long_plain = T.read_text(T.STRETCHED, LONG_TEXT, "", "en")
    long_same = T.read_text(T.STRETCHED, LONG_TEXT, stretch, "en")
    assert long_same.scale == pytest.approx(len(LONG_TEXT.encode()) / T.TRAIN_LEN)
    assert np.abs(long_same.attention - long_plain.attention).max() > 1e-4
    assert any(f"{long_same.scale:.2f}" in x for x in long_same.notes)


def test_resolve_covers_exactly_lab_lm():
    from encoders import REGISTRY

    for name in REGISTRY:
        got = T.resolve(name)
        if name in lm.ENCODINGS:
            assert got == (name, "")
        elif name in lm.STRETCHES:
            assert got == (lm.STRETCHED, name)
        else:
            assert got is None
    with pytest.raises(ValueError):
        T.read_text("shaw", "abc")
    with pytest.raises(ValueError):
        T.read_text("cope", "abc", "rope-pi")


@pytest.mark.parametrize("encoding", lm.ENCODINGS)
def test_maps_are_the_weight_like_extras(encoding):
    r = T.read_text(encoding, TEXT, "", "en")
    want = ["weights"] + [
        k for k, a in r.extras.items() if a.shape == r.attention.shape and a.min() >= 0 and a.max() <= 1
    ]
    assert list(r.maps) == want
    for shown in r.maps:
        g = r.grid(shown)
        src = r.attention if shown == "weights" else r.extras[shown]
        low = np.tril(np.ones((r.drawn, r.drawn), dtype=bool))
        np.testing.assert_array_equal(g[:, low], src.reshape(g.shape)[:, low])
    if "gates" in r.extras:  # CoPE: its gates are σ(logits), in [0, 1]
        assert "gates" in r.maps and "positions" not in r.maps
    with pytest.raises(ValueError):
        r.grid("nonsense")


def _unlabel(labels: tuple[str, ...]) -> bytes:
    """The bytes back from their labels: a label names the character its byte starts ("·" for the
    bytes that continue it), or "\\xNN" for a byte that starts none."""
    out = bytearray()
    inverse = {"␣": " ", "↵": "\n", "⇥": "\t"}
    for lab_ in labels:
        if lab_ == "·":
            continue
        if lab_.startswith("\\x") and len(lab_) == 4:
            out.append(int(lab_[2:], 16))
        elif lab_.startswith("^") and len(lab_) == 2:
            out.append(ord(lab_[1]) ^ 0x40)
        else:
            out += inverse.get(lab_, lab_).encode("utf-8")
    return bytes(out)


TEXTS = st.text(
    alphabet=st.characters(blacklist_characters="␣↵⇥^·\\", blacklist_categories=("Cs",)),
    max_size=30,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(TEXTS)
def test_byte_labels_round_trip_to_the_text(text):
    r = T.read_text("alibi", text, "", "en")
    assert r.data == text.encode("utf-8")
    assert _unlabel(r.labels) == r.data
    for k in range(r.n):
        ch = T.character_at(r.data, k)
        start = k
        while (r.data[start] & 0xC0) == 0x80:
            start -= 1
        assert ch == lm.byte_labels(r.data[start:])[0]
    for b in r.top_bytes:
        assert T.next_byte_label(b) == (lm.visible(chr(b)) if b < 0x80 else f"\\x{b:02x}")


def test_hostile_texts_read_without_an_exception():
    short = {k: v for k, v in HAND_PICKED.items() if v not in LONG.values()}
    for text in short.values():
        for method in T.readable():
            encoding, stretch = T.resolve(method)
            r = T.read_text(encoding, text, stretch, "ko")
            assert r.sentences and all(isinstance(s, str) for s in r.sentences)
    for text in LONG.values():  # every one cut at MAX_TEXT_BYTES: the stretch at 8×, the table's end
        for method in ("learned", "rope-yarn"):
            encoding, stretch = T.resolve(method)
            r = T.read_text(encoding, text, stretch, "en")
            assert r.n <= lm.MAX_TEXT_BYTES and r.data.decode("utf-8")


def test_the_grid_figure():
    r = T.read_text("cope", LONG_TEXT, "", "en")
    fig = TF.head_grid(
        r.grid("gates"),
        r.drawn_labels,
        "title",
        panel_titles=r.panel_titles,
        cols=r.n_heads,
        value_label="gate",
        row_title="query",
        col_title="key",
        mark_at=T.TRAIN_LEN,
        mark_label="mark",
    )
    heat = [d for d in fig.data if d.type == "heatmap"]
    assert len(heat) == r.n_layers * r.n_heads
    assert all(d.texttemplate is None for d in heat)  # no per-cell text
    # Past theme.panel_cells bytes a panel draws each f × f block's largest value: the mark sits at byte
    # TRAIN_LEN's place among the blocks, the value label says what a cell is.
    m = np.asarray(r.grid("gates")).shape[-1]
    f = TF.grid_factor(m, panel_cells(len(heat)), T.TRAIN_LEN)
    assert f >= screen_factor(m, panel_cells(len(heat))) > 1 and T.TRAIN_LEN % f == 0
    assert heat[0].z.shape == (-(-m // f),) * 2 and -(-m // f) <= panel_cells(len(heat))
    np.testing.assert_allclose(heat[0].z, screen_blocks(np.asarray(r.grid("gates"))[0], f, f, "max"), atol=1e-6)
    assert {s.x0 for s in fig.layout.shapes} >= {T.TRAIN_LEN / f - 0.5}
    assert f"largest of {f} × {f} cells" in heat[0].hovertemplate
    assert [a.text for a in fig.layout.annotations][: len(r.panel_titles)] == list(r.panel_titles)
    assert len(fig.layout.xaxis.tickvals) <= TF.GRID_TICKS
    short = T.read_text("cope", "abc", "", "en")
    small = TF.head_grid(
        short.grid(),
        short.drawn_labels,
        "t",
        panel_titles=short.panel_titles,
        cols=4,
        value_label="w",
        row_title="q",
        col_title="k",
        mark_at=T.TRAIN_LEN,
    )
    assert not small.layout.shapes  # the line only where the text reaches it
    bars = TF.surprise_bars(r.labels, r.surprise, "t", x_title="x", y_title="y", mark_at=T.TRAIN_LEN)
    assert list(bars.data[0].x) == list(range(1, r.n))
    nb = TF.next_bytes(r.top_labels, r.top_probs, "t", x_title="p")
    assert [float(x) for x in nb.data[0].text] == pytest.approx(list(r.top_probs), abs=5e-4)


# -- the attention lab's switch ------------------------------------------------------------------

# Every registry name in groups of at most MAX_METHODS (each with two), so the switch is seen with
# every encoding chosen.
GROUPS = [list(lab.REGISTRY_NAMES[k : k + 4]) for k in range(0, len(lab.REGISTRY_NAMES), 4)]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_lab_switch_draws_every_trainable_encoding_and_names_the_others(lang):
    at = open_page(PAGE)
    if lang == "ko":
        at.session_state["lang"] = "ko"
        at.run()
    assert at.radio(key="lab_source").value == "random"
    assert not [c for c in chart_elements(at) if (c.key or "").startswith("lab_trained_")]
    at.radio(key="lab_source").set_value("trained").run()
    assert not errors(at)
    groups = [g if len(g) >= 2 else [*g, "rope"] for g in GROUPS]
    for group in groups:
        at.multiselect(key="lab_methods").set_value(group).run()
        assert not errors(at), group
        texts = " ".join(m.value for m in at.info)
        for m in group:
            if T.resolve(m) is None:
                assert lab.short(m, lang) in texts, (m, lang)
                with pytest.raises(AssertionError):
                    chart(at, f"lab_trained_{m}")
            else:
                fig = chart(at, f"lab_trained_{m}")
                heat = [d for d in fig["data"] if d["type"] == "heatmap"]
                assert len(heat) == 8
                assert fig["layout"]["title"]["text"].startswith(lab.short(m, lang))
        if all(T.resolve(m) is not None for m in group):
            assert not at.info
    note = t("trained_attention.lab.bytes_note", lang, n=0, layers=2, heads=4).split("0")[0]
    assert any(c.value.startswith(note[:10]) for c in at.caption)
    at.multiselect(key="lab_methods").set_value(["cope", "rope"]).run()
    at.radio(key="lab_trained_show_cope").set_value("gates").run()
    assert not errors(at)
    assert chart(at, "lab_trained_cope")["layout"]["title"]["text"].endswith(T.shown_label("gates", lang))


@pytest.mark.parametrize("encoding", lm.ENCODINGS)
def test_grid_colours_stop_at_the_99th_percentile(encoding):
    r = T.read_text(encoding, LONG_TEXT, "", "en")
    for shown in r.maps:
        vals = []
        for p in range(r.n_layers * r.n_heads):
            src = (r.attention if shown == "weights" else r.extras[shown]).reshape(-1, r.drawn, r.drawn)[p]
            vals += [float(src[i, j]) for i in range(1, r.drawn) for j in range(i + 1)]
        q = float(np.percentile(vals, 99.0))
        want = min(1.0, max(0.05, math.ceil(q * 20 - 1e-9) / 20))
        assert r.zmax(shown) == pytest.approx(want)
        assert r.zmax(shown) >= q
        label = T.scale_label(shown, r.zmax(shown), "en")
        assert (f"{r.zmax(shown):.2f}" in label) == (r.zmax(shown) < 1.0)


def test_grid_factor_draws_at_most_the_cells_asked_and_keeps_the_mark_on_a_block_edge():
    for m, cap, mark in itertools.product(range(1, 300), (32, 45, 64, 86), (None, 64, 128)):
        f = TF.grid_factor(m, cap, mark)
        assert -(-m // f) <= cap
        assert f == 1 or not mark or mark % f == 0
        assert all(-(-m // g) > cap or (mark and mark % g) for g in range(1, f))  # the least such f


def test_grid_ticks_sit_on_characters_not_continuation_bytes():
    labels = lm.byte_labels(("고양이가 매트 위에 앉았습니다. 😀 " * 8).encode())
    for max_ticks in range(2, 20):
        idx, text = TF._ticks(labels, max_ticks)
        assert len(idx) <= max_ticks and idx == sorted(set(idx))
        assert all(labels[k] != "·" for k in idx) and "·" not in text
        step = math.ceil(len(labels) / max_ticks)
        assert all(k * step <= i < (k + 1) * step for k, i in enumerate(idx))


def test_lab_switch_in_korean_shows_no_english():
    from tests.i18n_scan import leaks, open_korean

    at = open_korean(PAGE)
    at.radio(key="lab_source").set_value("trained").run()
    at.multiselect(key="lab_methods").set_value(["cope", "rope-yarn", "shaw"]).run()
    at.radio(key="lab_trained_show_cope").set_value("gates").run()
    assert not errors(at)
    assert chart(at, "lab_trained_cope")["layout"]["title"]["text"].endswith(T.shown_label("gates", "ko"))
    assert any("바이트" in c.value for c in at.caption)
    found = leaks(at)
    assert not found, "\n".join(f"[{k}] {sorted(set(w))} ← {s[:120]!r}" for k, s, w in found[:12])


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_unseen_bytes_note_counts_the_bytes_the_corpus_never_has(lang):
    text = "The cat 고양이 sat 🐈."
    r = T.read_text("alibi", text, "", lang)
    corpus_bytes = set(C.load().train)
    unseen = [k for k in range(1, len(r.data)) if r.data[k] not in corpus_bytes]
    assert unseen  # Korean and the emoji bring bytes the docstrings never have
    expected = t(
        "trained_attention.unseen",
        lang,
        unseen=len(unseen),
        n=len(r.data) - 1,
        bits=float(np.mean([r.surprise[k - 1] for k in unseen])),
        rest=float(np.mean([r.surprise[k - 1] for k in range(1, len(r.data)) if k not in unseen])),
    )
    assert expected in r.notes
    plain = T.read_text("alibi", "The cat sat.", "", lang)
    assert not any("never" in x or "나오지 않습니다" in x for x in plain.notes)
