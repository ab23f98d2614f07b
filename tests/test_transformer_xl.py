"""Transformer-XL: the rel-shift trick, the four terms, and the chapter page.

Properties first, then pinned numbers, then independent computations (explicit float64 loops over
i, j), then the page under AppTest.
"""

import math

import numpy as np
import pytest
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.base import Difference
from encoders.sinusoidal import concatenated_permutation
from encoders.transformer_xl import (
    TransformerXL,
    TransformerXLConfig,
    rel_shift,
    rel_shift_steps,
    rel_shift_valid,
    relative_distances,
    relative_encoding,
)
from explain.chapters import transformer_xl as ch
from tests.helpers import chart, errors, fig_array, figures, open_page

PAGE = "pages/relative/transformer_xl.py"
D, H = 32, 4
d = D // H


def _encoder(seed=0, **cfg):
    return build("transformer-xl", D, H, seed, TransformerXLConfig(**cfg) if cfg else None).double()


def _qk(qlen, klen, seed=0, b=2):
    g = torch.Generator().manual_seed(seed)
    q = torch.randn(b, H, qlen, d, generator=g, dtype=torch.float64)  # (b, h, i, d)
    k = torch.randn(b, H, klen, d, generator=g, dtype=torch.float64)  # (b, h, j, d)
    return q, k


def _R_loop(delta: int, D: int) -> np.ndarray:
    """R_δ from scratch, concatenated layout [sin(δω_0) … | cos(δω_0) …], ω_f = 10000^(−2f/D)."""
    half = D // 2
    R = np.zeros(D)
    for f in range(half):
        w = 10000.0 ** (-2.0 * f / D)
        R[f] = math.sin(delta * w)
        R[half + f] = math.cos(delta * w)
    return R


# ---------------------------------------------------------------- rel_shift: properties and pins


def test_rel_shift_pinned_small_matrix():
    x = torch.arange(12.0).view(3, 4)
    assert rel_shift(x).tolist() == [[2, 3, 0, 4], [5, 6, 7, 0], [8, 9, 10, 11]]
    assert rel_shift_valid(3, 4).tolist() == [
        [True, True, False, False],
        [True, True, True, False],
        [True, True, True, True],
    ]


@pytest.mark.parametrize("qlen,klen", [(1, 1), (1, 5), (4, 4), (3, 7), (6, 6), (5, 9)])
def test_rel_shift_equals_an_explicit_gather_and_its_garbage_is_the_pad_or_the_next_row(qlen, klen):
    """out[i, j] = x[i, j + qlen − 1 − i] where j ≤ i + (klen − qlen); above, the next row or 0."""
    x = torch.randn(2, 3, qlen, klen, generator=torch.Generator().manual_seed(qlen * 31 + klen), dtype=torch.float64)
    out = rel_shift(x)
    assert out.shape == x.shape
    valid = rel_shift_valid(qlen, klen)
    for i in range(qlen):
        for j in range(klen):
            if j <= i + (klen - qlen):
                assert valid[i, j]
                assert torch.equal(out[..., i, j], x[..., i, j + qlen - 1 - i])
            else:
                assert not valid[i, j]
                col = qlen + j - i - (klen + 1)  # column of padded row i + 1 the cell reads
                expect = torch.zeros(2, 3, dtype=torch.float64) if col == 0 else x[..., i + 1, col - 1]
                assert torch.equal(out[..., i, j], expect)


def test_rel_shift_steps_only_move_line_breaks():
    x = torch.randn(3, 5, dtype=torch.float64)
    s = rel_shift_steps(x)
    assert s.padded.shape == (3, 6) and s.reshaped.shape == (6, 3)
    assert s.sliced.shape == (5, 3) and s.result.shape == (3, 5)
    assert (s.padded[:, 0] == 0).all() and torch.equal(s.padded[:, 1:], x)
    assert torch.equal(s.reshaped.flatten(), s.padded.flatten())  # same memory, new row length
    assert torch.equal(s.sliced, s.reshaped[1:])
    assert torch.equal(s.result.flatten(), s.sliced.flatten())
    assert torch.equal(s.result, rel_shift(x))


def test_descending_distances_are_the_references():
    assert relative_distances(3, 5, causal=True).tolist() == [4, 3, 2, 1, 0]
    assert relative_distances(3, 5, causal=False).tolist() == [4, 3, 2, 1, 0, -1, -2]


@pytest.mark.parametrize("qlen,mlen", [(q, m) for q in range(1, 7) for m in range(4)])
def test_demo_result_matches_the_gather_and_garbage_never_looks_right(qlen, mlen):
    demo = ch.rel_shift_demo(qlen, mlen)
    assert demo.matches_gather and demo.garbage_differs
    result = demo.stages[-1]
    assert result.ids.shape == (qlen, qlen + mlen)
    # every valid cell holds the distance it should: (mlen + i) − j
    assert np.array_equal(result.distance[demo.valid], demo.wanted[demo.valid])
    for i in range(qlen):  # and it comes from its own query's row
        for j in range(qlen + mlen):
            if demo.valid[i, j]:
                assert demo.labels[int(result.ids[i, j])] == f"q{i}·R{mlen + i - j}"
    assert [s.name for s in demo.stages] == ["raw", "padded", "reshaped", "sliced", "result"]


# ---------------------------------------------------------------- the four terms


def test_u_v_and_w_kr_are_seeded_with_the_reference_shapes():
    a, b, c = _encoder(1), _encoder(1), _encoder(2)
    assert a.u.shape == (H, d) and a.v.shape == (H, d) and a.w_kr.shape == (D, H * d)
    assert torch.equal(a.u, b.u) and torch.equal(a.w_kr, b.w_kr)
    assert not torch.equal(a.u, c.u) and not torch.equal(a.v, a.u)
    assert TransformerXL.relative_sign == Difference("query", "key") and TransformerXL.term_names == (
        "a",
        "b",
        "c",
        "d",
    )


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("qlen,mlen", [(7, 0), (4, 3)])
def test_terms_equal_explicit_loops_in_float64(causal, qlen, mlen):
    """Each term against a from-scratch loop: R_δ from math.sin/cos, δ = (mlen + i) − j."""
    klen = qlen + mlen
    enc = _encoder(3)
    q, k = _qk(qlen, klen, seed=4)
    with torch.no_grad():
        t = enc.logit_terms(q, k, torch.arange(mlen, klen), torch.arange(klen), causal).terms
    W, u, v = (p.detach().numpy() for p in (enc.w_kr, enc.u, enc.v))
    qn, kn = q.numpy(), k.numpy()
    s = 1 / math.sqrt(d)
    for h in range(H):
        for i in range(qlen):
            for j in range(klen):
                delta = (mlen + i) - j
                rk = (_R_loop(delta, D) @ W)[h * d : (h + 1) * d]  # head h's slice of W_kR R_δ
                want = {"a": qn[0, h, i] @ kn[0, h, j], "b": qn[0, h, i] @ rk, "c": u[h] @ kn[0, h, j], "d": v[h] @ rk}
                for name, value in want.items():
                    got = float(t[name][0, h, i, j])
                    if causal and delta < 0 and name in "bd":
                        assert got == 0.0  # garbage zeroed; masked anyway
                    else:
                        assert got == pytest.approx(value * s, abs=1e-12), (name, h, i, j)


def test_c_is_constant_down_columns_and_d_along_diagonals():
    enc = _encoder(5)
    q, k = _qk(9, 9, seed=6)
    with torch.no_grad():
        t = enc.logit_terms(q, k, torch.arange(9), torch.arange(9), causal=False).terms
    c, dd = t["c"][0, 0], t["d"][0, 0]
    assert torch.allclose(c, c[:1].expand_as(c), atol=0)
    for off in range(-8, 9):
        diag = torch.diagonal(dd, offset=off)
        assert torch.allclose(diag, diag[:1].expand_as(diag), atol=1e-12)
    assert not torch.allclose(torch.diagonal(dd, 1)[0], torch.diagonal(dd, -1)[0])  # i − j has a sign


@pytest.mark.parametrize("causal", [True, False])
def test_shifting_all_positions_leaves_every_term_unchanged(causal):
    enc = _encoder(7)
    q, k = _qk(8, 8, seed=8)
    with torch.no_grad():
        a = enc.logit_terms(q, k, torch.arange(8), torch.arange(8), causal).terms
        b = enc.logit_terms(q, k, torch.arange(8) + 1000, torch.arange(8) + 1000, causal).terms
    for name in "abcd":
        assert torch.equal(a[name], b[name])
    view0 = ch.term_maps("one two three one two", 3, 1, causal)
    view1 = ch.term_maps("one two three one two", 3, 1, causal, positions_offset=250)
    for name in "bd":
        np.testing.assert_array_equal(view0.terms[name], view1.terms[name])


@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("off", list("abcd"))
def test_a_switched_off_term_leaves_the_softmax_of_the_others(causal, off):
    enc = build("transformer-xl", D, H, 2)
    layer = toy_layer(enc, 2).double()
    x = torch.randn(1, 10, D, generator=torch.Generator().manual_seed(11), dtype=torch.float64)
    with torch.no_grad():
        r = layer(x, causal=causal, term_scales={off: 0.0})
    others = sum(r.terms[t] for t in "abcd" if t != off)  # (b, h, i, j)
    if causal:
        others = others.masked_fill(torch.triu(torch.ones(10, 10, dtype=torch.bool), 1), float("-inf"))
    assert torch.allclose(r.weights, torch.softmax(others, -1), atol=1e-12)
    full = torch.softmax(
        sum(r.terms.values()).masked_fill(
            torch.triu(torch.ones(10, 10, dtype=torch.bool), 1) if causal else torch.zeros(10, 10, dtype=torch.bool),
            float("-inf"),
        ),
        -1,
    )
    assert not torch.allclose(r.weights, full, atol=1e-3)  # the switch did something


def test_layout_is_a_permutation_of_w_kr():
    perm = concatenated_permutation(D)
    R_i = relative_encoding(torch.arange(-5, 6), D, "interleaved")
    R_c = relative_encoding(torch.arange(-5, 6), D, "concatenated")
    assert torch.equal(R_c, R_i[:, perm])
    assert np.allclose(R_c[7].numpy(), _R_loop(2, D), atol=1e-15)  # row 7 is δ = 2
    chk = ch.layout_check(0)
    assert chk.same_weights > 0.1  # a fixed W_kR sees the layout …
    assert chk.permuted_weights < 1e-12  # … and the permuted W_kR undoes it exactly


def test_positions_the_rel_shift_cannot_handle_are_refused():
    enc = _encoder()
    q, k = _qk(4, 4)
    with pytest.raises(ValueError):
        enc.logit_terms(q, k, torch.tensor([0, 2, 4, 6]), torch.tensor([0, 2, 4, 6]), True)
    with pytest.raises(ValueError):
        enc.logit_terms(q, k, torch.arange(4), torch.arange(4).flip(0), True)
    with pytest.raises(ValueError):
        build("transformer-xl", D, H, 0, TransformerXLConfig(r_layout="diagonal"))


def test_distance_curve_is_the_diagonal_of_term_d():
    sentence = "a b c d e f g"
    m = ch.term_maps(sentence, 4, 2, causal=False)
    g = ch.global_position_bias(4, 6)
    for i in range(7):
        for j in range(7):
            k = int(np.where(g.distances == i - j)[0][0])
            assert m.terms["d"][i, j] == pytest.approx(g.d_term[2, k], rel=1e-5, abs=1e-6)


# ---------------------------------------------------------------- the page


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("causal", [True, False])
@pytest.mark.parametrize("head", range(ch.N_HEADS))
def test_terms_question_over_every_head_causal_and_several_seeds(head, causal, lang):
    """Which term is the same for two texts with no word in common? At every head, both causal
    settings and five seeds: measured, the answer is always (d), and the differences the
    explanation states are recomputed here from the encoder's own terms on the two texts."""
    for seed in range(5):
        q = ch.terms_question(seed, head, causal, lang)
        assert q is not None and q.answer == "d" and q.options == ("a", "b", "c", "d")
        maps = [run_layer_terms(text, seed, head, causal) for text in ch.PROBE_TEXTS]  # {term: (i, j)} on each text
        diffs = {}
        for term in "abcd":
            a, b = maps[0][term], maps[1][term]
            seen = ~np.isnan(a)
            assert np.array_equal(seen, ~np.isnan(b))
            diffs[term] = float(np.abs(a[seen] - b[seen]).max())
        assert diffs["d"] <= ch.SAME and q.facts["same"] == pytest.approx(diffs["d"], abs=1e-12)
        assert q.facts["other"] == pytest.approx(min(diffs[t] for t in "abc"), rel=1e-6)
        assert q.facts["other"] > 0.01  # the other three really differ
        assert set(ch.PROBE_TEXTS[0].split()).isdisjoint(ch.PROBE_TEXTS[1].split())
        assert len(ch.PROBE_TEXTS[0].split()) == len(ch.PROBE_TEXTS[1].split())
        for text in ch.PROBE_TEXTS:
            assert text in q.explanation
        assert f"{q.facts['other']:.2f}" in q.explanation and q.answer_label == "(d)"


def run_layer_terms(text, seed, head, causal):
    """The four terms of one head straight from the encoder through the toy layer (float32, as
    the page), NaN above the diagonal when causal."""
    from encoders.text import token_embeddings, token_key

    toks = text.split()
    x = token_embeddings(tuple(token_key(w) for w in toks), 64, seed)[None]
    layer = toy_layer(build("transformer-xl", 64, ch.N_HEADS, seed), seed)
    with torch.no_grad():
        r = layer(x, positions=torch.arange(len(toks)), causal=causal)
    out = {}
    for term in "abcd":
        z = r.terms[term][0, head].numpy().astype(float)
        if causal:
            z[np.triu(np.ones_like(z, dtype=bool), 1)] = np.nan
        out[term] = z
    return out


def test_u_and_v_are_one_pair_per_head_and_the_page_shows_one_layer():
    """What the chapter says about sharing: u and v are (h, d) — one vector per head, nothing per
    layer inside them — and the page's layer has exactly one encoder with one u, v and W_kR."""
    enc = ch.encoder(0)
    assert tuple(enc.u.shape) == tuple(enc.v.shape) == (ch.N_HEADS, 64 // ch.N_HEADS)
    assert tuple(enc.w_kr.shape) == (64, 64)
    assert {name for name, _ in enc.named_parameters()} == {"u", "v", "w_kr"}


def _z(fig, trace=0):
    return fig_array(fig["data"][trace]["z"])


def test_page_draws_four_terms_and_their_sum():
    at = open_page(PAGE, sentence="the cat sat on the mat")
    assert not errors(at)
    terms = chart(at, "xl_terms")
    assert len(terms["data"]) == 4 and _z(terms).shape == (6, 6)
    zs = [_z(terms, p) for p in range(4)]
    total = _z(chart(at, "xl_sum"))
    assert np.allclose(np.nansum(zs, axis=0)[np.isfinite(total)], total[np.isfinite(total)], atol=1e-4)
    assert np.isnan(total[0, 1]) and np.isfinite(total[1, 0])  # causal by default: the future is blank
    w = _z(chart(at, "xl_weights"))
    assert np.allclose(np.nansum(w, axis=1), 1, atol=1e-5)


def test_switches_head_and_causal_move_the_pictures():
    at = open_page(PAGE, sentence="the cat sat on the mat")
    before = _z(chart(at, "xl_terms"), 1)
    at.selectbox(key="xl_head").set_value(3).run()
    assert not errors(at)
    assert chart(at, "xl_terms")["layout"]["title"]["text"].startswith("Head 4: the four terms")
    assert not np.allclose(np.nan_to_num(_z(chart(at, "xl_terms"), 1)), np.nan_to_num(before))
    for t in "abc":
        at.toggle(key=f"xl_on_{t}").set_value(False).run()
    assert not errors(at)
    only_d = _z(chart(at, "xl_terms"), 3)
    assert chart(at, "xl_sum")["layout"]["title"]["text"].startswith("Logits: (d)")
    total = _z(chart(at, "xl_sum"))
    ok = np.isfinite(total)
    assert np.allclose(total[ok], only_d[ok], atol=1e-5)
    at.toggle(key="xl_causal").set_value(False).run()
    assert not errors(at)
    total = _z(chart(at, "xl_sum"))
    assert np.isfinite(total).all()  # bidirectional: nothing masked, and no garbage either
    assert np.allclose(np.diagonal(total, 1), np.diagonal(total, 1)[0], atol=1e-5)  # (d) alone: Toeplitz
    at.toggle(key="xl_on_d").set_value(False).run()
    assert not errors(at)
    assert np.allclose(_z(chart(at, "xl_weights")), 1 / 6, atol=1e-6)


def test_rel_shift_stepper_moves_through_all_stages():
    at = open_page(PAGE, sentence="a b")
    shapes = {}
    at.slider(key="xl_qlen").set_value(6).run()
    at.slider(key="xl_mlen").set_value(3).run()
    for step in ["raw", "padded", "reshaped", "sliced", "result"]:
        at.select_slider(key="xl_step").set_value(step).run()
        assert not errors(at)
        shapes[step] = _z(chart(at, "xl_step_grid")).shape
    assert shapes == {"raw": (6, 9), "padded": (6, 10), "reshaped": (10, 6), "sliced": (9, 6), "result": (6, 9)}
    assert any("equals the direct gather on all 39 valid cells" in s.value for s in at.success)
    at.slider(key="xl_qlen").set_value(2).run()
    at.slider(key="xl_mlen").set_value(0).run()
    assert not errors(at)
    assert _z(chart(at, "xl_gather")).shape == (2, 2)


def test_page_with_300_tokens_stays_complete():
    sentence = " ".join(f"w{k % 37}" for k in range(300))
    at = open_page(PAGE, sentence=sentence)
    assert not errors(at)
    assert any("draws the first 256" in w.value for w in at.warning)
    assert _z(chart(at, "xl_terms")).shape == (64, 64)  # 4 panels share a figure's cells: blocks of 4
    assert _z(chart(at, "xl_sum")).shape == (128, 128)  # one map: blocks of 2
    at.toggle(key="xl_on_b").set_value(False).run()
    assert not errors(at)
    size = sum(len(str(f)) for f in figures(at))
    assert size < 12_000_000  # no megabytes of per-cell hover labels


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="고양이가 매트 위에 앉았다 🐱 👩‍💻 🇰🇷!")
    assert not errors(at)
    terms = chart(at, "xl_terms")
    assert _z(terms).shape == (8, 8)
    assert "고양이가" in str(terms["layout"])  # the tokens are on the axes


def test_page_without_text_says_so():
    at = open_page(PAGE, sentence="   ")
    assert not errors(at)
    assert any("no text" in i.value for i in at.info) and not figures(at)
