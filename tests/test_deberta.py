"""DeBERTa: log buckets, the three disentangled terms, and the chapter page.

Properties first, then pinned numbers, then independent computations (exact integer arithmetic,
explicit float64 loops over i, j) and the HuggingFace transformers oracle, then the page.
"""

import math

import numpy as np
import pytest
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.deberta import DeBERTa, DebertaConfig, check_buckets, log_bucket_position
from explain.chapters import deberta as ch
from tests.helpers import chart, errors, fig_array, figures, open_page

PAGE = "pages/relative/deberta.py"
D, H = 32, 4
d = D // H
SETTINGS = [
    (2, 5),
    (4, 9),
    (6, 11),
    (8, 64),
    (16, 128),
    (16, 1025),
    (32, 129),
    (64, 512),
    (98, 257),
    (128, 513),
    (256, 512),
    (256, 130),
    (512, 1024),
]


def _loop_bucket(r: int, B: int, M: int) -> tuple[int, float]:
    """One bucket in float64 from the formula (METHODS §6), and the log-part value before ⌈·⌉."""
    mid = B // 2
    a = mid - 1 if -mid < r < mid else abs(r)
    if a <= mid:
        return r, float("nan")
    x = math.log(a / mid) / math.log((M - 1) / mid) * (mid - 1)
    return int(math.copysign(math.ceil(x) + mid, r)), x


def _exact_bucket(r: int, B: int, M: int) -> int:
    """Exact arithmetic, no floats: ⌈x⌉ with x = ln(a/mid)/ln((M−1)/mid)·(mid−1) is the smallest
    integer t with (a/mid)^(mid−1) ≤ ((M−1)/mid)^t, i.e. a^(mid−1)·mid^t ≤ (M−1)^t·mid^(mid−1)."""
    mid = B // 2
    a = abs(r)
    if a <= mid:
        return r

    def reached(t: int) -> bool:
        return a ** (mid - 1) * mid**t <= (M - 1) ** t * mid ** (mid - 1)

    # Start just below a float estimate (only for speed): the integer test decides every step.
    t = max(0, math.floor(math.log(a / mid) / math.log((M - 1) / mid) * (mid - 1)) - 2)
    assert t == 0 or not reached(t)
    while not reached(t):
        t += 1
    return int(math.copysign(t + mid, r))


# ---------------------------------------------------------------- log buckets


@pytest.mark.parametrize("B,M", SETTINGS)
def test_buckets_are_odd_monotone_bounded_and_exact_near_zero(B, M):
    mid = B // 2
    r = torch.arange(-3 * M, 3 * M + 1)
    b = log_bucket_position(r, B, M)
    assert b.dtype == torch.long
    assert torch.equal(log_bucket_position(-r, B, M), -b)  # odd
    assert (b[1:] >= b[:-1]).all()  # monotone in r = i − j
    near = r.abs() <= mid
    assert torch.equal(b[near], r[near])  # exact band
    inside = r.abs() <= M - 1
    assert b[inside].abs().max() <= B - 1  # 2B table rows suffice inside ±(M − 1)
    assert int(log_bucket_position(torch.tensor(M - 1), B, M)) == B - 1
    if M >= B:  # the log part maps [mid, M − 1] onto [mid, B − 1]: a compression only when M ≥ B
        assert (b[inside].abs() <= r[inside].abs()).all()
        if M > B:
            assert (b[inside].abs() < r[inside].abs()).any()  # … and it does merge some distances
    else:  # M < B stretches instead: distance M − 1 lands in bucket B − 1 > M − 1
        assert (b[inside].abs() > r[inside].abs()).any()


@pytest.mark.parametrize("B,M", SETTINGS)
def test_buckets_equal_the_transformers_oracle(B, M):
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    r = torch.arange(-4000, 4001)
    ours = log_bucket_position(r, B, M)
    theirs = make_log_bucket_position(r, B, M).to(torch.long)
    assert torch.equal(ours, theirs)
    # … including on a (query, key) matrix, as the reference builds it
    from transformers.models.deberta_v2.modeling_deberta_v2 import build_relative_position

    q = torch.zeros(1, 50, 8)
    rel = build_relative_position(q, q, bucket_size=B, max_position=M)[0]  # (i, j)
    pos = torch.arange(50)
    assert torch.equal(log_bucket_position(pos[:, None] - pos[None, :], B, M), rel)


@pytest.mark.parametrize("B,M", SETTINGS)
def test_buckets_against_float64_loops_and_exact_arithmetic(B, M):
    """Inside ±(M − 1) — the distances that pick distinct rows — the float32 reference agrees with a
    float64 loop and with exact integer arithmetic, except where the log part is a whole number
    (up to float32 rounding): there ⌈·⌉ flips with the last bit, in either direction."""
    rs = range(-(M - 1), M)
    ours = log_bucket_position(torch.tensor(list(rs)), B, M).tolist()
    for r, o in zip(rs, ours, strict=False):
        loop, x = _loop_bucket(r, B, M)
        exact = _exact_bucket(r, B, M)
        for other in (loop, exact):
            if o != other:
                assert abs(o - other) == 1 and abs(x - round(x)) < 1e-4 * max(1.0, x), (r, o, other, x)


def test_pinned_bucket_boundaries():
    # B = 16, M = 128: exact up to ±8, then log-spaced up to bucket ±15 at distance 127.
    r = torch.tensor([0, 1, 8, 9, 12, 20, 50, 126, 127, 128, 500, -9, -127, -128])
    assert log_bucket_position(r, 16, 128).tolist() == [0, 1, 8, 9, 10, 11, 13, 15, 15, 16, 19, -9, -15, -16]
    # A tie: B = 128, M = 513, |r| = 128 has ln(2)/ln(8)·63 = 21 exactly. Float32 (the reference)
    # gives 85 like exact arithmetic; float64 would round up to 86.
    assert int(log_bucket_position(torch.tensor(128), 128, 513)) == 85 == _exact_bucket(128, 128, 513)
    assert _loop_bucket(128, 128, 513)[0] == 86
    # and the opposite: B = 98, M = 257, |r| = 112 is exactly 24; the reference's float32 says 74.
    assert int(log_bucket_position(torch.tensor(112), 98, 257)) == 74 and _exact_bucket(112, 98, 257) == 73


def test_impossible_bucket_settings_are_refused():
    for B, M in [(1, 10), (0, 10), (16, 9), (256, 129)]:
        with pytest.raises(ValueError):
            check_buckets(B, M)
        with pytest.raises(ValueError):
            log_bucket_position(torch.arange(3), B, M)
    check_buckets(256, 130)
    with pytest.raises(ValueError):
        DeBERTa(D, H, DebertaConfig(pos_att_type=("c2p", "p2p")))


def test_bucket_map_regions_and_row_counts():
    bm = ch.bucket_map(16, 128)
    assert bm.exact_until == 8 and bm.n_within == 255
    assert bm.rows_within == 31  # rows 1 … 31: row 0 only past −(M − 1)
    far_left = bm.table_row[bm.distances < -127]
    far_right = bm.table_row[bm.distances > 127]
    assert (far_left == 0).all() and (far_right == 31).all()  # the asymmetric clamp the page explains
    assert set(np.unique(bm.region)) == {0, 1, 2}


# ---------------------------------------------------------------- the three terms


def _layer(cfg=None, seed=3):
    return toy_layer(build("deberta", D, H, seed, cfg), seed).double()


def _x(n, seed=1):
    return torch.randn(1, n, D, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)


@pytest.mark.parametrize("B,M", [(8, 24), (-1, 6), (256, 512)])
def test_terms_equal_explicit_loops_in_float64(B, M):
    """c2c, c2p, p2c from scratch: the table row is clamp(bucket(i − j) + k, 0, 2k − 1) for both
    position terms (the reference's index, query − key), scale 1/√(3d)."""
    n = 30
    layer = _layer(DebertaConfig(position_buckets=B, max_relative_positions=M))
    enc = layer.encoder
    with torch.no_grad():
        r = layer(_x(n))
    q, k = r.q[0].numpy(), r.k[0].numpy()  # (h, n, d)
    P = enc.rel_embeddings.detach().numpy()
    Kr = P @ enc.w_kr.detach().numpy()  # (2k, D)
    Qr = P @ enc.w_qr.detach().numpy()
    span = B if B > 0 else M
    s = 1 / math.sqrt(3 * d)
    for h in range(H):
        for i in range(n):
            for j in range(n):
                bucket = _loop_bucket(i - j, B, M)[0] if B > 0 else i - j
                row = min(max(bucket + span, 0), 2 * span - 1)
                sl = slice(h * d, (h + 1) * d)
                assert float(r.terms["c2c"][0, h, i, j]) == pytest.approx(q[h, i] @ k[h, j] * s, abs=1e-12)
                assert float(r.terms["c2p"][0, h, i, j]) == pytest.approx(q[h, i] @ Kr[row, sl] * s, abs=1e-12)
                assert float(r.terms["p2c"][0, h, i, j]) == pytest.approx(k[h, j] @ Qr[row, sl] * s, abs=1e-12)


def test_p2c_uses_query_minus_key_not_the_papers_mirror():
    """The paper's δ(j, i) would read row clamp((j − i) + k): a different number, so this can fail."""
    layer = _layer(DebertaConfig(position_buckets=-1, max_relative_positions=16))
    enc = layer.encoder
    with torch.no_grad():
        r = layer(_x(6))
        Qr = (enc.rel_embeddings @ enc.w_qr).view(-1, H, d).transpose(0, 1)  # (h, 2k, d)
    i, j, h = 4, 1, 0
    code = r.k[0, h, j] @ Qr[h, (i - j) + 16] / math.sqrt(3 * d)
    paper = r.k[0, h, j] @ Qr[h, (j - i) + 16] / math.sqrt(3 * d)
    assert float(r.terms["p2c"][0, h, i, j]) == pytest.approx(float(code), abs=1e-12)
    assert abs(float(code - paper)) > 1e-3


PATTERNS = [("c2p", "p2c"), ("c2p",), ("p2c",)]


@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("B,M", [(8, 24), (-1, 16), (256, 512)])
def test_attention_equals_the_transformers_oracle(pattern, B, M):
    """Same weights loaded into HF DisentangledSelfAttention (share_att_key=False, biases 0)."""
    from transformers import DebertaV2Config
    from transformers.models.deberta_v2.modeling_deberta_v2 import DisentangledSelfAttention

    n = 40
    layer = _layer(DebertaConfig(position_buckets=B, max_relative_positions=M, pos_att_type=pattern))
    enc = layer.encoder
    x = _x(n)
    with torch.no_grad():
        r = layer(x)
    cfg = DebertaV2Config(
        hidden_size=D,
        num_attention_heads=H,
        relative_attention=True,
        pos_att_type=list(pattern),
        position_buckets=B,
        max_relative_positions=M,
        share_att_key=False,
        attention_probs_dropout_prob=0.0,
        hidden_dropout_prob=0.0,
    )
    att = DisentangledSelfAttention(cfg).double().eval()
    with torch.no_grad():
        for ours, theirs in [(layer.w_q, att.query_proj), (layer.w_k, att.key_proj), (layer.w_v, att.value_proj)]:
            theirs.weight.copy_(ours.T)
            theirs.bias.zero_()
        if "c2p" in pattern:
            att.pos_key_proj.weight.copy_(enc.w_kr.T)
            att.pos_key_proj.bias.zero_()
        if "p2c" in pattern:
            att.pos_query_proj.weight.copy_(enc.w_qr.T)
            att.pos_query_proj.bias.zero_()
        _, probs = att(x, torch.ones(1, 1, n, n), output_attentions=True, rel_embeddings=enc.rel_embeddings.double())
        q = att.transpose_for_scores(att.query_proj(x), H)
        k = att.transpose_for_scores(att.key_proj(x), H)
        bias = att.disentangled_attention_bias(q, k, None, enc.rel_embeddings.double(), enc.scale_factor)
    # HF takes √(d·s) in float32, which is inexact for s = 3 (√24): 3e-8 relative.
    tol = 1e-6 if len(pattern) == 2 else 1e-12
    assert torch.allclose(probs, r.weights, atol=tol)
    ours_bias = (r.terms["c2p"] + r.terms["p2c"])[0]  # (h, i, j)
    assert torch.allclose(bias.view(H, n, n), ours_bias, atol=tol)
    assert enc.scale_factor == 1 + len(pattern)


@pytest.mark.parametrize("off", ["c2c", "c2p", "p2c"])
def test_a_switched_off_term_leaves_the_softmax_of_the_others(off):
    layer = _layer(DebertaConfig(position_buckets=8, max_relative_positions=32))
    with torch.no_grad():
        r = layer(_x(20), term_scales={off: 0.0})
    others = sum(r.terms[t] for t in ("c2c", "c2p", "p2c") if t != off)
    assert torch.allclose(r.weights, torch.softmax(others, -1), atol=1e-12)
    assert not torch.allclose(r.weights, torch.softmax(sum(r.terms.values()), -1), atol=1e-3)


def test_shifting_all_positions_leaves_the_position_terms_unchanged():
    enc = build("deberta", D, H, 0, DebertaConfig(position_buckets=8, max_relative_positions=32)).double()
    g = torch.Generator().manual_seed(2)
    q = torch.randn(1, H, 12, d, generator=g, dtype=torch.float64)
    k = torch.randn(1, H, 12, d, generator=g, dtype=torch.float64)
    with torch.no_grad():
        a = enc.logit_terms(q, k, torch.arange(12), torch.arange(12), False).terms
        b = enc.logit_terms(q, k, torch.arange(12) + 777, torch.arange(12) + 777, False).terms
    for name in ("c2p", "p2c"):
        assert torch.equal(a[name], b[name])
    m0 = ch.term_maps("a b c a b c", 5, 2, True, 8, 32)
    m1 = ch.term_maps("a b c a b c", 5, 2, True, 8, 32, positions_offset=300)
    for name in ("c2p", "p2c"):
        np.testing.assert_array_equal(m0.terms[name], m1.terms[name])


def test_shared_buckets_make_position_terms_equal():
    """Two distances in one bucket read one table row: c2p cannot tell them apart."""
    enc = build("deberta", D, H, 0, DebertaConfig(position_buckets=8, max_relative_positions=64)).double()
    n = 40
    g = torch.Generator().manual_seed(3)
    q = torch.randn(1, H, n, d, generator=g, dtype=torch.float64)
    k = torch.randn(1, H, n, d, generator=g, dtype=torch.float64)
    with torch.no_grad():
        t = enc.logit_terms(q, k, torch.arange(n), torch.arange(n), False).terms
    b = log_bucket_position(torch.tensor([30, 31, 3, 4]), 8, 64).tolist()
    assert b[0] == b[1] and b[2] != b[3]
    c2p, p2c = t["c2p"][0, 0], t["p2c"][0, 0]
    assert c2p[35, 5] == c2p[35, 4]  # same query, i − j = 30 and 31: one bucket …
    assert c2p[35, 32] != c2p[35, 31]  # … 3 and 4: two
    assert p2c[35, 5] == p2c[36, 5]  # same key, i − j = 30 and 31
    assert p2c[35, 32] != p2c[36, 32]  # 3 and 4


# ------------------------------------------------------------ the clamp is [−M, M − 1], not ±M


@pytest.mark.parametrize("M", [1, 2, 3, 8, 16, 128, 1024])
def test_plain_distances_clamp_to_minus_m_through_m_minus_1(M):
    """Without buckets the lookup row is clamp(r + M, 0, 2M − 1), so the distances with a row of
    their own are exactly −M … M − 1: −M keeps row 0 while +M already shares the last row with M − 1.
    Against the encoder, over every distance from −3M to 3M."""
    enc = DeBERTa(1, 1, DebertaConfig(position_buckets=-1, max_relative_positions=M), torch.Generator().manual_seed(0))
    r = torch.arange(-3 * M, 3 * M + 1)  # i − j
    rows = enc.table_index(r, torch.zeros(1, dtype=torch.long))[:, 0]  # query at r, key at 0
    expected = [min(max(int(x), -M), M - 1) + M for x in r]
    assert rows.tolist() == expected
    distinct = {int(x): int(row) for x, row in zip(r, rows, strict=True)}
    assert len(set(rows.tolist())) == 2 * M  # every one of the 2M rows is used
    assert distinct[-M] == 0 and distinct[-M - 1] == 0 and (M == 1 or distinct[-M + 1] == 1)
    assert distinct[M] == distinct[M - 1] == 2 * M - 1  # +M shares; there is no row for +M
    assert distinct[M - 1] != distinct[M - 2] if M > 1 else True


@pytest.mark.parametrize("B,M", [(4, 8), (16, 128), (256, 512), (256, 1024)])
def test_buckets_clamp_to_minus_b_through_b_minus_1(B, M):
    """With log buckets the lookup clamps the bucket, not the distance, to −B … B − 1."""
    enc = DeBERTa(1, 1, DebertaConfig(position_buckets=B, max_relative_positions=M), torch.Generator().manual_seed(0))
    r = torch.arange(-4 * M, 4 * M + 1)
    zero = torch.zeros(1, dtype=torch.long)
    buckets = enc.relative_positions(r, zero)[:, 0]
    rows = enc.table_index(r, zero)[:, 0]
    assert torch.equal(rows, buckets.clamp(-B, B - 1) + B)
    assert int(rows.min()) == 0 and int(rows.max()) == 2 * B - 1


def test_no_catalogue_string_says_the_plain_clamp_is_plus_minus_m():
    from explain.i18n import catalogue
    from explain.prose import sections

    for lang in ("en", "ko"):
        words = [v for k, v in catalogue(lang).items() if k.startswith("deberta.")]
        words += list(sections("deberta", lang).values())
        for text in words:
            assert "±M" not in text and "±max_position" not in text and "\\pm M" not in text, text
        assert "−M … M − 1" in catalogue(lang)["deberta.buckets.max_position_help"]


# ------------------------------------------------------------------------------ the question

Q_SIZES = range(4, 257, 4)  # every bucket size of the slider
Q_POSITIONS = range(8, 1025, 8)  # every max position of the slider


def hf_row(r: int, B: int, M: int) -> tuple[int, int]:
    """(bucket, row) of distance r by HF's make_log_bucket_position and the reference's clamp."""
    from transformers.models.deberta_v2.modeling_deberta_v2 import make_log_bucket_position

    b = int(make_log_bucket_position(torch.tensor([r]), B, M).to(torch.long)[0])
    return b, min(max(b + B, 0), 2 * B - 1)


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("B", Q_SIZES)
def test_rows_question_over_the_control_space(B, lang):
    """Which pair of neighbouring distances reads one row, 2 and 3 or 60 and 61? At every bucket size
    and every max position of the sliders (an invalid M falls back as the page does), both languages:
    the answer, every row and the stated reason agree with HF's log buckets and the clamp written out
    here."""
    for slider_m in Q_POSITIONS:
        M = slider_m if slider_m - 1 > B // 2 else ch.smallest_valid_max_position(B)  # the page's fallback
        q = ch.rows_question(B, M, lang)
        (b2, row2), (b3, row3) = hf_row(2, B, M), hf_row(3, B, M)
        (b60, row60), (b61, row61) = hf_row(60, B, M), hf_row(61, B, M)
        f = q.facts
        truth = {(False, True): "far", (True, False): "near", (True, True): "both", (False, False): "neither"}[
            (row2 == row3, row60 == row61)
        ]
        assert q.answer == truth and q.options == ("near", "far", "both", "neither")
        assert row2 != row3  # near the query, distances never share a row: "near"/"both" are distractors
        assert (f["b2"], f["b3"], f["row2"], f["row3"]) == (b2, b3, row2, row3)
        assert (f["b60"], f["b61"], f["row60"], f["row61"]) == (b60, b61, row60, row61)
        assert (f["half"], f["last"], f["top"], f["b"], f["m"]) == (B // 2, M - 1, B - 1, B, M)
        if row60 == row61:
            if b60 == b61:
                assert f["reason"] == "same_bucket" and B // 2 < 60  # a shared log bucket
            else:
                assert f["reason"] == "same_clamp" and b61 > B - 1 and row61 == 2 * B - 1 and M - 1 < 61
        elif B // 2 >= 61:
            assert f["reason"] == "different_exact" and (b60, b61) == (60, 61)
        else:
            assert f["reason"] == "different_log" and b60 != b61
        for name in ("row2", "row3", "row60", "row61"):
            assert str(f[name]) in q.explanation


# ---------------------------------------------------------------- the page


def _z(fig, trace=0):
    return fig_array(fig["data"][trace]["z"])


def test_page_draws_three_terms_their_sum_and_the_buckets():
    at = open_page(PAGE, sentence="the cat sat on the mat")
    assert not errors(at)
    terms = chart(at, "deb_terms")
    assert len(terms["data"]) == 3
    zs = np.stack([_z(terms, p) for p in range(3)])
    assert np.allclose(zs.sum(0), _z(chart(at, "deb_sum")), atol=1e-4)
    buckets = _z(chart(at, "deb_buckets"))
    assert buckets.shape == (6, 6) and buckets[5, 0] == 5 and buckets[0, 5] == -5
    bm = chart(at, "deb_bucket_map")
    xs = np.concatenate([fig_array(tr["x"]) for tr in bm["data"][1:]])
    assert xs.min() == -160 and xs.max() == 160  # 1.25 · M for M = 128


def test_sliders_and_switches_move_the_pictures():
    at = open_page(PAGE, sentence=" ".join(f"w{k}" for k in range(40)))
    before = _z(chart(at, "deb_buckets"))
    assert before[39, 0] == 13  # B = 16, M = 128: distance 39 is log-bucketed
    at.slider(key="deb_bucket_size").set_value(4).run()
    at.slider(key="deb_max_position").set_value(8).run()
    assert not errors(at)
    small = _z(chart(at, "deb_buckets"))
    # B = 4, M = 8: distance 39 is far past M − 1; its bucket 5 is clamped by the lookup to 3 (−5 to −4)
    assert int(log_bucket_position(torch.tensor(39), 4, 8)) == 5
    assert small[39, 0] == 3 and small[0, 39] == -4
    at.slider(key="deb_bucket_size").set_value(256).run()
    at.slider(key="deb_max_position").set_value(1024).run()
    assert not errors(at)
    assert _z(chart(at, "deb_buckets"))[39, 0] == 39  # all exact
    at.slider(key="deb_max_position").set_value(8).run()  # B = 256 needs M > 129
    assert not errors(at)
    assert any("Using M = 130" in w.value for w in at.warning)
    at.toggle(key="deb_log").set_value(False).run()
    assert not errors(at)
    assert any("from −8 to 7" in i.value for i in at.info)
    plain = _z(chart(at, "deb_buckets"))
    assert plain[3, 0] == 3 and plain[39, 0] == 7 and plain[0, 39] == -8  # clamped to [−M, M − 1]
    at.selectbox(key="deb_head").set_value(2).run()
    for t in ("c2c", "c2p"):
        at.toggle(key=f"deb_on_{t}").set_value(False).run()
    assert not errors(at)
    terms = chart(at, "deb_terms")
    assert np.allclose(_z(chart(at, "deb_sum")), _z(terms, 2), atol=1e-5)
    at.toggle(key="deb_on_p2c").set_value(False).run()
    assert np.allclose(_z(chart(at, "deb_weights")), 1 / 40, atol=1e-6)


def test_page_with_300_tokens():
    at = open_page(PAGE, sentence=" ".join(f"w{k % 41}" for k in range(300)))
    assert not errors(at)
    assert any("draws the first 256" in w.value for w in at.warning)
    assert _z(chart(at, "deb_terms")).shape == (64, 64)  # 4 panels share a figure's cells: blocks of 4
    buckets = _z(chart(at, "deb_buckets"))
    # bucket(255) = 17 with B = 16, M = 128; the lookup clamps it to 15 (row 31), −255 to −16 (row 0):
    # drawn in 2 × 2 block means, the corner blocks (254–255 × 0–1) hold 15 and −16 alone
    assert buckets.shape == (128, 128) and buckets[127, 0] == 15 and buckets[0, 127] == -16
    assert sum(len(str(f)) for f in figures(at)) < 12_000_000


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="강아지가 통나무 위에 앉았다 🐶🪵 — 좋아요 👍🏽")
    assert not errors(at)
    terms = chart(at, "deb_terms")
    n = _z(terms).shape[0]
    assert n >= 7 and "강아지가" in str(terms["layout"])


def test_page_without_text_still_draws_the_bucket_map():
    at = open_page(PAGE, sentence="")
    assert not errors(at)
    assert any("no text" in i.value for i in at.info)
    assert [f["layout"]["title"]["text"] for f in figures(at)] == ["Bucket of each distance"]
