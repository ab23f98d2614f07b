"""ALiBi and NoPE: encoders/alibi.py, encoders/nope.py, explain/chapters/alibi.py and the page.

Order: properties, pinned numbers, independent computations (explicit float64 loops, the reference
rule written out per case, HF transformers' BLOOM ALiBi as an oracle), then the page under AppTest.
"""

import math
from itertools import pairwise, permutations

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.alibi import Alibi, AlibiConfig, alibi_bias, alibi_bias_code, alibi_bias_symmetric, alibi_slopes
from encoders.attention import causal_mask, toy_layer
from encoders.base import Difference
from encoders.nope import equal_logit_weights
from explain.chapters import alibi as ch
from explain.chapters.common import run_tokens
from tests.helpers import chart, errors, fig_array, open_page, skip_questions

SENTENCE = "The cat sat on the mat. The dog sat on the log."
TOKENS = ("The", "cat", "sat", "on", "the", "mat", ".", "The", "dog", "sat", "on", "the", "log", ".")


def reference_rule(H: int) -> list[float]:
    """The slope rule written out per case, independently of encoders/alibi.py (METHODS §8)."""
    c = 1
    while c * 2 <= H:
        c *= 2
    if c == H:  # a power of two: 2^(−8h/H), h = 1 … H
        return [2.0 ** (-8.0 * h / H) for h in range(1, H + 1)]
    base = [2.0 ** (-8.0 * h / c) for h in range(1, c + 1)]
    extra = [2.0 ** (-4.0 * (2 * t - 1) / c) for t in range(1, H - c + 1)]  # odd positions of the 2c rule
    return base + extra


# Exponents e (m = 2^−e) for H = 1 … 16, worked out by hand from the rule:
# powers of two are 8/H, 16/H, …, 8; otherwise the c-head exponents 8h/c, then 4/c, 12/c, 20/c, ….
PINNED_EXPONENTS = {
    1: [8],
    2: [4, 8],
    3: [4, 8, 2],
    4: [2, 4, 6, 8],
    5: [2, 4, 6, 8, 1],
    6: [2, 4, 6, 8, 1, 3],
    7: [2, 4, 6, 8, 1, 3, 5],
    8: [1, 2, 3, 4, 5, 6, 7, 8],
    9: [1, 2, 3, 4, 5, 6, 7, 8, 0.5],
    10: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5],
    11: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5],
    12: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5],
    13: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5],
    14: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5],
    15: [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5, 4.5, 5.5, 6.5],
    16: [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 6.5, 7, 7.5, 8],
}


# ------------------------------------------------------------------------------- slopes: properties


@pytest.mark.parametrize("H", [1, 2, 4, 8, 16, 32, 64])
def test_power_of_two_slopes_are_geometric_with_ratio_2_to_minus_8_over_H(H):
    m = alibi_slopes(H)
    ratio = 2.0 ** (-8.0 / H)
    assert m.dtype == torch.float64 and m.shape == (H,)
    assert m[0].item() == pytest.approx(ratio, rel=1e-15)  # the start equals the ratio
    assert torch.allclose(m[1:] / m[:-1], torch.full((H - 1,), ratio, dtype=torch.float64), rtol=1e-14)
    assert m[-1].item() == pytest.approx(2.0**-8, rel=1e-14)  # every power of two ends at 1/256


@pytest.mark.parametrize("H", [3, 5, 6, 7, 12, 24])
def test_non_power_of_two_slopes_are_not_monotone_and_not_sorted(H):
    m = alibi_slopes(H)
    d = m[1:] - m[:-1]
    assert (d > 0).any() and (d < 0).any()
    assert not torch.equal(m, torch.sort(m, descending=True).values)
    c = 1 << (H.bit_length() - 1)
    assert torch.equal(m[:c], alibi_slopes(c))  # the first c heads keep the c-head slopes


def test_slopes_refuse_zero_heads():
    with pytest.raises(ValueError):
        alibi_slopes(0)


# ------------------------------------------------------------------------------- slopes: pinned


def test_pinned_slopes_for_8_and_6_heads():
    assert alibi_slopes(8).tolist() == [1 / 2, 1 / 4, 1 / 8, 1 / 16, 1 / 32, 1 / 64, 1 / 128, 1 / 256]
    # H = 6, c = 4: 1/4, 1/16, 1/64, 1/256, then the 8-head rule's 1st and 3rd slopes 1/2 and 1/8.
    assert alibi_slopes(6).tolist() == [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8]


@pytest.mark.parametrize("H", sorted(PINNED_EXPONENTS))
def test_pinned_exponents_and_the_rule_written_out(H):
    m = alibi_slopes(H).numpy()
    assert np.allclose(-np.log2(m), PINNED_EXPONENTS[H], rtol=0, atol=1e-12)
    assert np.allclose(m, reference_rule(H), rtol=1e-14, atol=0)


def test_slopes_match_transformers_bloom():
    """HF BLOOM's ALiBi slopes (float32), an independent implementation of the same rule."""
    from transformers.models.bloom.modeling_bloom import _get_alibi_slopes

    for H in [*list(range(1, 17)), 20, 24, 32, 40, 48]:
        ours = alibi_slopes(H).numpy()
        theirs = _get_alibi_slopes(H, torch.device("cpu")).double().numpy()
        assert np.allclose(ours, theirs, rtol=1e-6, atol=0), H


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("H", range(1, ch.MAX_HEADS + 1))
def test_slopes_question_over_every_head_count(H, lang):
    """The steepest-head question at every value of the page's head slider, in both languages: the
    answer is an option, and every fact the explanation states agrees with the reference rule
    written out in this file (not with encoders/alibi.py)."""
    q = ch.slopes_question(H, lang)
    if H == 1:
        assert q is None  # one head: nothing to compare
        return
    ref = reference_rule(H)
    steepest = max(range(H), key=lambda k: ref[k]) + 1
    assert q.answer == steepest and steepest in q.options
    if H <= ch.QUESTION_OPTIONS:
        assert q.options == tuple(range(1, H + 1))
    else:
        assert len(q.options) <= 6 and {1, H} <= set(q.options)
    c = 2 ** math.floor(math.log2(H))
    f = q.facts
    assert f["head"] == steepest and f["H"] == H and f["c"] == c and f["c2"] == 2 * c
    assert f["m"] == ch.slope_label(ref[steepest - 1]) and f["m_first"] == ch.slope_label(ref[0])
    assert f["power_of_two"] is (c == H)
    if c == H:
        assert steepest == 1 and all(a > b for a, b in pairwise(ref))  # "falls with h"
    else:
        assert steepest == f["first_extra"] == c + 1  # the first extra head
        assert f["m_first_extra"] == ch.slope_label(2.0 ** (-4.0 / c)) and 2.0 ** (-4.0 / c) > max(ref[:c])
    # every value the explanation states is in it (the template is filled from the facts)
    for name in ("head", "m", "H") + (() if c == H else ("c", "first_extra", "m_first_extra")):
        assert str(f[name]) in q.explanation, (name, q.explanation)
    assert q.labels[q.options.index(steepest)] == q.answer_label


def test_slope_labels():
    assert ch.slopes_view(8).labels == ("1/2", "1/4", "1/8", "1/16", "1/32", "1/64", "1/128", "1/256")
    assert ch.slopes_view(6).labels == ("1/4", "1/16", "1/64", "1/256", "1/2", "1/8")
    assert ch.slopes_view(16).labels[:3] == ("2^-0.5", "1/2", "2^-1.5")
    assert np.allclose(ch.slopes_view(6).windows, [4, 16, 64, 256, 2, 8])


# -------------------------------------------------------------------------------------- the bias


def _loops(m, qpos, kpos, form):
    out = np.zeros((len(m), len(qpos), len(kpos)))
    for h, mh in enumerate(m):
        for a, i in enumerate(qpos):
            for b, j in enumerate(kpos):
                if form == "paper":
                    out[h, a, b] = -mh * (i - j)
                elif form == "symmetric":
                    out[h, a, b] = -mh * abs(i - j)
                else:
                    out[h, a, b] = mh * j
    return out


@pytest.mark.parametrize("H", [1, 6, 8])
def test_bias_against_explicit_float64_loops(H):
    m = reference_rule(H)
    qpos, kpos = [3, 4, 5, 6, 7], [0, 1, 2, 3, 4, 5, 6, 7]  # more keys than queries, as with a cache
    q, k = torch.tensor(qpos), torch.tensor(kpos)
    s = torch.tensor(m, dtype=torch.float64)
    assert np.allclose(alibi_bias(s, q, k).numpy(), _loops(m, qpos, kpos, "paper"), rtol=0, atol=1e-15)
    assert np.allclose(alibi_bias_symmetric(s, q, k).numpy(), _loops(m, qpos, kpos, "symmetric"), rtol=0, atol=1e-15)
    assert np.allclose(alibi_bias_code(s, q, k).numpy(), _loops(m, qpos, kpos, "code"), rtol=0, atol=1e-15)


def test_paper_bias_is_a_penalty_on_the_visible_side_and_zero_on_the_diagonal():
    n, s = 9, alibi_slopes(8)
    pos = torch.arange(n)
    b = alibi_bias(s, pos, pos).numpy()  # (h, i, j)
    visible = causal_mask(n, n).numpy()
    assert (b[:, visible] <= 0).all() and (b[:, ~visible] > 0).all()
    assert (np.diagonal(b, axis1=1, axis2=2) == 0).all()
    assert not np.signbit(np.diagonal(b, axis1=1, axis2=2)).any()  # +0.0, not −0.0
    # strictly more negative the further back the key lies, for every head
    last = b[:, -1, :]  # (h, j): the last query's row
    assert (np.diff(last, axis=1) > 0).all()
    # the steepest head (m = 1/2) penalises distance 8 by exactly 4
    assert b[0, 8, 0] == -4.0 and b[7, 8, 0] == -8 / 256


def test_relative_invariance_shifting_positions_leaves_the_bias_unchanged():
    s = alibi_slopes(6)
    pos = torch.arange(12)
    for shift in (1, 37, 1000, 123_456):
        for f in (alibi_bias, alibi_bias_symmetric):
            assert torch.equal(f(s, pos, pos), f(s, pos + shift, pos + shift))
    # the code form is not relative: the shift adds m·shift to every entry ...
    code, shifted = alibi_bias_code(s, pos, pos), alibi_bias_code(s, pos + 1000, pos + 1000)
    assert torch.allclose(shifted - code, (1000 * s)[:, None, None].expand_as(code), atol=1e-9)
    assert not torch.allclose(shifted, code)


def test_relative_invariance_through_the_layer():
    """The same sentence starting at position 0 or 500: identical logits and weights (float64)."""
    for causal in (True, False):
        a = run_tokens(TOKENS, 3, "alibi", 64, 4, causal, float64=True)
        b = run_tokens(TOKENS, 3, "alibi", 64, 4, causal, positions_offset=500, float64=True)
        assert np.allclose(a.terms["position"], b.terms["position"], atol=1e-12)
        assert np.allclose(a.weights, b.weights, atol=1e-12)


def test_encoder_adds_the_bias_to_already_scaled_content_logits():
    torch.manual_seed(0)
    enc = Alibi(32, 4)
    q, k = torch.randn(2, 4, 6, 8, dtype=torch.float64), torch.randn(2, 4, 6, 8, dtype=torch.float64)
    pos = torch.arange(6)
    t = enc.logit_terms(q, k, pos, pos, causal=True)
    assert set(t.terms) == {"content", "position"}
    assert t.terms["position"].shape == (2, 4, 6, 6)
    expected = np.zeros((2, 4, 6, 6))
    qn, kn, m = q.numpy(), k.numpy(), alibi_slopes(4).numpy()
    for b in range(2):
        for h in range(4):
            for i in range(6):
                for j in range(6):
                    expected[b, h, i, j] = float(qn[b, h, i] @ kn[b, h, j]) / math.sqrt(8) - m[h] * (i - j)
    assert np.allclose(t.total().numpy(), expected, atol=1e-12)
    # without a mask, the encoder switches to the symmetric form
    t2 = enc.logit_terms(q, k, pos, pos, causal=False)
    assert np.allclose(t2.terms["position"][0].numpy(), _loops(m, range(6), range(6), "symmetric"), atol=1e-15)


def test_registry_and_config():
    assert REGISTRY["alibi"] is Alibi
    assert Alibi.kind == "bias" and Alibi.term_names == ("content", "position")
    assert Alibi.relative_sign == Difference("query", "key") and Alibi.relative_sign.math == "i − j"
    e = build("alibi", 48, 6, seed=1)
    assert torch.equal(e.slopes, alibi_slopes(6)) and not list(e.parameters())  # nothing to learn
    with pytest.raises(ValueError):
        Alibi(16, 2, AlibiConfig(form="nonsense"))


# ----------------------------------------------------------------------- +m·j against −m·(i − j)


def _softmax_rows(z, mask=None):
    out = np.zeros_like(z)
    for i in range(z.shape[0]):
        idx = [j for j in range(z.shape[1]) if mask is None or mask[i][j]]
        top = max(z[i, j] for j in idx)
        e = {j: math.exp(z[i, j] - top) for j in idx}
        total = sum(e.values())
        for j in idx:
            out[i, j] = e[j] / total
    return out


def test_code_form_equals_paper_form_under_the_causal_softmax_only():
    rng = np.random.default_rng(7)
    n, m = 10, 0.5
    content = rng.standard_normal((n, n))
    paper = np.array([[-m * (i - j) for j in range(n)] for i in range(n)])
    code = np.array([[m * j for j in range(n)] for i in range(n)])
    symmetric = np.array([[-m * abs(i - j) for j in range(n)] for i in range(n)])
    mask = [[j <= i for j in range(n)] for i in range(n)]
    # causal: identical weights (they differ by m·i, a constant along each row)
    assert np.abs(_softmax_rows(content + paper, mask) - _softmax_rows(content + code, mask)).max() < 1e-14
    assert np.abs(_softmax_rows(content + symmetric, mask) - _softmax_rows(content + code, mask)).max() < 1e-14
    # no mask: the code form is NOT the distance penalty −m·|i − j| ...
    assert np.abs(_softmax_rows(content + symmetric) - _softmax_rows(content + code)).max() > 0.1
    # ... though it still equals −m·(i − j) taken literally for every j: both are linear in j
    assert np.abs(_softmax_rows(content + paper) - _softmax_rows(content + code)).max() < 1e-14


def test_code_form_through_the_layer_and_the_chapter():
    code = AlibiConfig(form="code")
    a = run_tokens(TOKENS, 0, "alibi", 96, 6, True, float64=True)
    b = run_tokens(TOKENS, 0, "alibi", 96, 6, True, config=code, float64=True)
    assert np.abs(a.weights - b.weights).max() < 1e-12
    assert np.abs(a.terms["position"] - b.terms["position"]).max() > 1.0  # different biases, same weights
    c = run_tokens(TOKENS, 0, "alibi", 96, 6, False, float64=True)
    d = run_tokens(TOKENS, 0, "alibi", 96, 6, False, config=code, float64=True)
    assert np.abs(c.weights - d.weights).max() > 0.05
    cf = ch.code_form_view(SENTENCE, 0, 8, 0)
    assert cf.diff_causal < 1e-12 and cf.diff_bidirectional > 0.1
    assert cf.last_key_mass_code > 3 * cf.last_key_mass_symmetric  # +m·j drags attention to the end
    assert np.isnan(cf.bias_paper[0, 1]) and cf.bias_paper[5, 2] == -1.5
    assert (cf.bias_code == cf.bias_code[0]).all() and cf.bias_code[0, 4] == 2.0


def test_code_form_matches_transformers_bloom_alibi_tensor():
    """BLOOM implements exactly the code's +m·j (its docstring cites the fairseq line)."""
    from transformers.models.bloom.modeling_bloom import build_alibi_tensor

    n, H = 11, 6
    theirs = build_alibi_tensor(torch.ones(1, n, dtype=torch.long), H, torch.float32)  # (H, 1, n)
    ours = alibi_bias_code(alibi_slopes(H), torch.arange(n), torch.arange(n))  # (H, n, n)
    assert torch.allclose(ours[:, :1, :].float(), theirs, rtol=1e-6, atol=1e-6)


# --------------------------------------------------------------------------- past the training length


def test_last_query_weights_equal_the_last_row_of_the_full_layer():
    tokens = ch.extended_tokens(SENTENCE, 40)
    assert len(tokens) == 40 and tokens[14] == "The" and tokens[:14] == TOKENS
    w = ch.last_query_weights(tokens, 2, 4)
    full = run_tokens(tokens, 2, "alibi", ch.d_model_for(4), 4, True, float64=True).weights
    assert np.allclose(w, full[:, -1, :], atol=1e-12)


def test_extrapolation_numbers_against_explicit_sums():
    H, train, test = 8, 32, 400
    ex = ch.extrapolation(SENTENCE, 0, H, train, test)
    m = reference_rule(H)
    assert ex.within.shape == (H, test) and len(ex.tokens) == test
    assert (np.diff(ex.within, axis=1) >= -1e-12).all() and np.allclose(ex.within[:, -1], 1.0)
    assert np.allclose(ex.penalty[:, 300], [-mh * 300 for mh in m])
    for h, mh in enumerate(m):
        # the bias alone: weights ∝ exp(−m·δ) over δ = 0 … L−1
        z = sum(math.exp(-mh * d) for d in range(test))
        closed = [sum(math.exp(-mh * d) for d in range(w + 1)) / z for w in range(test)]
        assert np.allclose(ex.within_bias_only[h], closed, atol=1e-12)
        half = next(w for w, v in enumerate(closed) if v >= 0.5)
        assert ex.half_distance_bias_only[h] == half
    w_last = ch.last_query_weights(ch.extended_tokens(SENTENCE, test), 0, H)
    beyond = [sum(w_last[h, j] for j in range(test) if (test - 1 - j) >= train) for h in range(H)]
    assert np.allclose(ex.beyond_train, beyond, atol=1e-12)
    # the steepest heads never look past the training length; the flattest do
    assert ex.beyond_train[0] < 1e-6 and ex.beyond_train[1] < 1e-3 and ex.beyond_train[7] > 0.5


def test_effective_window_is_about_one_over_m():
    """Bias alone, long text: half the mass within ≈ ln2/m − 1 tokens, whatever the slope."""
    ex = ch.extrapolation("a", 0, 8, 4, 2048)  # one repeated word: only the bias varies
    for h, mh in enumerate(reference_rule(8)):
        assert abs(ex.half_distance_bias_only[h] - (math.log(2) / mh - 1)) <= 1.0
        assert np.allclose(ex.within[h], ex.within_bias_only[h], atol=1e-12)  # equal keys: content is flat


def test_sample_distances():
    d = ch.sample_distances(2048, log=True)
    assert d[0] == 1 and d[-1] == 2047 and len(d) <= 301 and (np.diff(d) > 0).all()
    d = ch.sample_distances(100, log=False)
    assert d[0] == 0 and d[-1] == 99 and len(d) == 100


# -------------------------------------------------------------------------------------------- NoPE


def test_uniform_causal_attention_is_one_over_i_plus_one():
    n = 17
    w = equal_logit_weights(n, causal=True).numpy()
    expected = np.array([[1 / (i + 1) if j <= i else 0.0 for j in range(n)] for i in range(n)])
    assert np.allclose(w, expected, rtol=0, atol=1e-15)
    assert np.allclose(equal_logit_weights(n, causal=False).numpy(), 1 / n, rtol=0, atol=1e-15)


def test_nope_layer_on_equal_words_gives_one_over_i_plus_one():
    n = 25
    for H in (1, 4):
        r = run_tokens(("a",) * n, 5, "none", 64, H, True, float64=True)
        for i in range(n):
            assert np.allclose(r.weights[:, i, : i + 1], 1 / (i + 1), atol=1e-13)
        assert np.allclose(run_tokens(("a",) * n, 5, "none", 64, H, False, float64=True).weights, 1 / n, atol=1e-13)


def test_counting_recovers_the_position_only_under_the_causal_mask():
    cv = ch.counting(64, 3)
    i = np.arange(64)
    assert np.allclose(cv.uniform_causal, 1 / (i + 1), atol=1e-15)
    assert np.allclose(cv.same_word_causal, 1 / (i + 1), atol=1e-13)
    assert np.allclose(cv.same_word_bidirectional, 1 / 64, atol=1e-13)
    assert np.allclose(cv.share_uniform_causal, 1 / (i + 1), atol=1e-12)
    assert cv.max_recovery_error < 1e-9 and np.allclose(cv.recovered_positions, i, atol=1e-9)
    assert np.allclose(cv.share_uniform_bidirectional, 1 / 64, atol=1e-12)  # no position left to read
    # with content logits on, the share is that head's weight on [BOS]: still strictly falling
    assert np.allclose(cv.share_head_causal, cv.weight_head_causal, atol=1e-12)
    assert (np.diff(cv.share_head_causal) < 0).all()
    assert not np.allclose(cv.share_head_causal, 1 / (i + 1), atol=1e-3)


def test_nope_bidirectional_is_permutation_equivariant_causal_is_not():
    rng = np.random.default_rng(11)
    layer = toy_layer(build("none", 32, 4, 0), 0).double()
    x = torch.randn(1, 9, 32, dtype=torch.float64, generator=torch.Generator().manual_seed(4))
    for _ in range(5):
        perm = torch.from_numpy(rng.permutation(9))
        with torch.no_grad():
            for causal, equal in ((False, True), (True, False)):
                out = layer(x, causal=causal).output[:, perm]
                out_p = layer(x[:, perm], causal=causal).output
                assert torch.allclose(out, out_p, atol=1e-12) == equal


def test_causal_nope_sees_its_prefix_as_a_set():
    """One causal NoPE layer: reordering the tokens before position i leaves output i unchanged,
    and changes the outputs inside the reordered prefix (the claim the prose makes)."""
    base = ("x", "y", "z", "w", "q")
    ref = run_tokens(base, 1, "none", 32, 2, True, float64=True).output
    for prefix in list(permutations(base[:4]))[1::5]:  # 5 of the 23 reorderings: each one must pass
        out = run_tokens(prefix + base[4:], 1, "none", 32, 2, True, float64=True).output
        assert np.allclose(out[4], ref[4], atol=1e-12)
        assert not np.allclose(out[:4], ref[:4], atol=1e-6)


def test_nope_symmetry_experiment():
    ns = ch.nope_symmetry(SENTENCE, 0, 1)
    assert sorted(ns.order) == list(range(14)) and ns.order != tuple(range(14))
    assert ns.diff_bidirectional < 1e-12 and ns.diff_causal > 0.1
    assert ns.per_token_causal.shape == (14,)


# -------------------------------------------------------------------------------------- the page

PAGE = "pages/bias/alibi.py"


def _grid_panels(fig):
    return [fig_array(t["z"]) for t in fig["data"]]


def test_page_default_and_head_extremes():
    at = open_page(PAGE, sentence=SENTENCE)
    assert not errors(at)
    slopes = fig_array(chart(at, "slopes")["data"][0]["y"])
    assert np.allclose(slopes, [2.0**-e for e in range(1, 9)])
    panels = _grid_panels(chart(at, "bias_grid"))
    assert len(panels) == 8 and panels[0].shape == (14, 14)
    assert panels[0][5, 2] == pytest.approx(-1.5) and np.isnan(panels[0][2, 5])  # −m(i−j), masked above

    at.slider(key="alibi_heads").set_value(1).run()
    assert not errors(at)
    assert np.allclose(fig_array(chart(at, "slopes")["data"][0]["y"]), [1 / 256])
    assert len(_grid_panels(chart(at, "att_grid"))) == 1

    at.slider(key="alibi_heads").set_value(16).run()
    at.selectbox(key="alibi_head").set_value(16).run()
    assert not errors(at)
    assert len(_grid_panels(chart(at, "bias_grid"))) == 16
    pair = _grid_panels(chart(at, "att_pair"))
    assert len(pair) == 2 and np.allclose(np.nansum(pair[0], axis=1), 1.0, atol=1e-5)

    # shrinking H below the chosen head must not break the page
    at.slider(key="alibi_heads").set_value(6).run()
    assert not errors(at)
    assert at.selectbox(key="alibi_head").value == 6
    slopes = fig_array(chart(at, "slopes")["data"][0]["y"])
    assert np.allclose(slopes, [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])  # in head order, unsorted
    skip_questions(at)  # the note on the slope rule answers the question: it waits for Reveal
    assert any("not a power of two" in i.value for i in at.info)


def test_page_causal_toggle_switches_to_the_symmetric_bias():
    at = open_page(PAGE, sentence=SENTENCE)
    at.toggle(key="alibi_causal").set_value(False).run()
    assert not errors(at)
    head1 = _grid_panels(chart(at, "bias_grid"))[0]
    assert not np.isnan(head1).any() and np.allclose(head1, head1.T)
    assert head1[2, 5] == pytest.approx(-1.5)
    weights = _grid_panels(chart(at, "att_grid"))[0]
    assert (weights[0, 1:] > 0).all()  # the first token now sees the future
    at.toggle(key="alibi_causal").set_value(True).run()
    weights = _grid_panels(chart(at, "att_grid"))[0]
    assert (np.nan_to_num(weights[0, 1:]) == 0).all()


def test_page_training_and_test_length_extremes():
    at = open_page(PAGE, sentence=SENTENCE)
    at.slider(key="alibi_train_len").set_value(512).run()
    at.slider(key="alibi_test_len").set_value(8).run()
    assert not errors(at)
    assert "text of 512 tokens" in chart(at, "within")["layout"]["title"]["text"]
    at.slider(key="alibi_train_len").set_value(4).run()
    at.slider(key="alibi_test_len").set_value(2048).run()
    at.checkbox(key="alibi_log_x").uncheck().run()
    assert not errors(at)
    within = chart(at, "within")
    assert fig_array(within["data"][0]["x"])[-1] == 2047
    at.checkbox(key="alibi_scaled").check().run()
    assert not errors(at)
    x = fig_array(chart(at, "within")["data"][0]["x"])
    assert x[-1] == pytest.approx(2047 / 2)  # head 1, m = 1/2: distance in units of 1/m
    at.checkbox(key="alibi_log_slopes").uncheck().run()
    assert not errors(at)


def test_page_nope_widgets():
    at = open_page(PAGE, sentence=SENTENCE)
    before = fig_array(chart(at, "nope_shuffle_bars")["data"][1]["y"])
    at.button(key="nope_shuffle").click().run()
    assert not errors(at)
    after = fig_array(chart(at, "nope_shuffle_bars")["data"][1]["y"])
    assert not np.allclose(before, after)
    for n in (2, 256):
        at.slider(key="nope_count_n").set_value(n).run()
        assert not errors(at)
        fig = chart(at, "count_weights")
        causal = fig_array(fig["data"][0]["y"])
        assert causal.shape == (n,) and np.allclose(causal, 1 / (np.arange(n) + 1), atol=1e-9)


def test_page_with_300_tokens():
    text = " ".join(f"w{k % 41}" for k in range(300))
    at = open_page(PAGE, sentence=text)
    assert not errors(at)
    assert any("300 tokens" in w.value for w in at.warning)
    # A grid's panels share one budget of cells (theme.panel_cells): 16 panels of the first 64
    # tokens draw 32 a side, a pair of 256-token maps 86 a side (blocks of 3).
    assert _grid_panels(chart(at, "bias_grid"))[0].shape == (32, 32)
    assert "first 64 of 256 tokens" in chart(at, "att_grid")["layout"]["title"]["text"]
    assert _grid_panels(chart(at, "att_pair"))[0].shape == (86, 86)
    assert _grid_panels(chart(at, "code_bias"))[0].shape == (86, 86)


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="고양이가 매트 위에 앉았다 🐱 👩‍💻 🇰🇷 <b>x</b>")
    assert not errors(at)
    pair = chart(at, "att_pair")
    names = pair["data"][0]["y"]
    assert len(names) == 15 and names[0] == "0 · 고양이가" and names[4] == "4 · 🐱"
    assert names[5] == "5 · 👩\u200d💻" and names[6] == "6 · 🇰🇷"  # one token per grapheme cluster
    assert names[7] == "7 · &lt;"  # typed markup is shown as text, not rendered
    assert "[BOS]" in chart(at, "count_share")["layout"]["title"]["text"]


# ------------------------------------------------------------------------------- English and Korean


def test_axis_sign_is_the_encoders_sign():
    """The page's axis titles render the encoder's own sign: same symbols, words in each language."""
    from explain.chapters.common import sign_text

    assert sign_text("alibi", "en") == "i − j (query − key)"
    assert sign_text("alibi", "ko") == "i − j (쿼리 − 키)"


def test_page_switches_to_korean_and_keeps_every_control():
    from explain.i18n import t

    typed = "Seven quick zebras jump over the lazy dogs today"  # not a default: it stays in Korean
    at = open_page(PAGE, sentence=typed)
    at.slider(key="alibi_heads").set_value(6).run()
    at.toggle(key="alibi_causal").set_value(False).run()
    at.selectbox(key="alibi_head").set_value(5).run()
    at.slider(key="alibi_train_len").set_value(64).run()
    bias_en = _grid_panels(chart(at, "bias_grid"))
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.session_state["sentence"] == typed
    assert at.slider(key="alibi_heads").value == 6 and at.toggle(key="alibi_causal").value is False
    assert at.selectbox(key="alibi_head").value == 5 and at.slider(key="alibi_train_len").value == 64
    assert at.slider(key="alibi_heads").label == t("alibi.heads", "ko") != t("alibi.heads", "en")
    # the same numbers under Korean titles
    slopes = fig_array(chart(at, "slopes")["data"][0]["y"])
    assert np.allclose(slopes, [1 / 4, 1 / 16, 1 / 64, 1 / 256, 1 / 2, 1 / 8])
    bias_ko = _grid_panels(chart(at, "bias_grid"))
    assert all(np.array_equal(a, b, equal_nan=True) for a, b in zip(bias_en, bias_ko, strict=False))
    skip_questions(at)
    assert any("2의 거듭제곱이 아닙니다" in i.value for i in at.info)
    assert at.selectbox(key="alibi_head").options[4] == "헤드 5 · m = 1/2"
