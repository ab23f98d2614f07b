"""The trouble with absolute positions: shift sensitivity, length, and the four terms of a score."""

import math

import numpy as np
import pytest
import torch

from encoders import build
from encoders.attention import toy_layer
from encoders.base import PositionOutOfRange
from encoders.learned import LearnedConfig
from encoders.sinusoidal import sinusoidal_frequencies, sinusoidal_rows
from encoders.text import token_embeddings, token_key, tokenize
from explain.chapters import trouble as ch
from explain.chapters.common import run_tokens
from tests.helpers import errors, fig_array, figure, figure_titles, open_page

PAGE = "pages/absolute/trouble.py"
CV = ("I", "like", "CV")
SENTENCE = tuple(tokenize("The cat sat on the mat. The dog sat on the log.").tokens)


# -- the four terms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tokens,seed", [(SENTENCE, 0), (CV, 7), (tuple(["a", "b", "a", "b", "a", "c"]), 123), (("solo",), 3)]
)
def test_four_terms_sum_to_the_layer_logits(tokens, seed):
    t = ch.four_terms(tokens, seed)
    assert set(t.terms) == set(ch.TERM_NAMES)
    total = sum(t.terms.values())
    layer = run_tokens(tokens, seed, "sinusoidal", 64, 1, float64=True).logits[0]  # (i, j)
    np.testing.assert_allclose(total, layer, rtol=0, atol=1e-12)
    assert t.sum_max_diff < 1e-12
    # Dropping any one term breaks the equality: each term is really part of the score.
    for name, term in t.terms.items():
        if np.abs(term).max() > 1e-3:
            assert np.abs(total - term - layer).max() > 1e-3, name


def test_content_position_term_by_explicit_loops():
    """x_iᵀ W_qᵀ W_k p_j / √d, one float64 multiply-add at a time, from the layer's own matrices."""
    tokens, seed, D = CV, 5, 64
    layer = toy_layer(build("sinusoidal", D, 1, seed), seed)
    wq, wk = layer.w_q.detach().double().numpy(), layer.w_k.detach().double().numpy()  # q = x @ w_q
    x = token_embeddings([token_key(t) for t in tokens], D, seed).double().numpy()
    p = np.array(
        [
            [
                math.sin(i * 10000 ** (-(c // 2) * 2 / D)) if c % 2 == 0 else math.cos(i * 10000 ** (-(c // 2) * 2 / D))
                for c in range(D)
            ]
            for i in range(len(tokens))
        ]
    )
    t = ch.four_terms(tokens, seed)
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            q = [sum(x[i, a] * wq[a, c] for a in range(D)) for c in range(D)]
            k = [sum(p[j, a] * wk[a, c] for a in range(D)) for c in range(D)]
            want = sum(q[c] * k[c] for c in range(D)) / math.sqrt(D)
            assert abs(t.terms["content–position"][i, j] - want) < 1e-11


def test_which_terms_depend_on_what():
    a = ch.four_terms(SENTENCE, 0)
    other = tuple(
        [
            "A",
            "completely",
            "different",
            "sentence",
            "with",
            "exactly",
            "fourteen",
            "tokens",
            ",",
            "yes",
            "it",
            "is",
            ",",
            "see",
        ]
    )
    assert len(other) == len(SENTENCE)
    b = ch.four_terms(other, 0)
    # Same length, different words: position–position is identical, every other term changes.
    np.testing.assert_array_equal(a.terms["position–position"], b.terms["position–position"])
    for name in ("content–content", "content–position", "position–content"):
        assert np.abs(a.terms[name] - b.terms[name]).max() > 0.1, name


def test_position_position_is_toeplitz_only_without_projections():
    tokens = tuple(f"w{i}" for i in range(48))
    t = ch.four_terms(tokens, 0)
    assert t.toeplitz["p·p (no projections)"] < 1e-12
    assert t.toeplitz["relative part of W_qᵀW_k"] < 1e-12
    # With the seeded random projections the term is far from constant along its diagonals.
    assert t.toeplitz["with W_q, W_k"] > 0.05
    assert t.toeplitz_relative["with W_q, W_k"] > 0.3
    np.testing.assert_allclose(t.pp_plain, ch.four_terms(tokens, 99).pp_plain)  # no seed in p·p
    assert list(t.position_maps) == list(t.toeplitz) == list(t.spread)
    np.testing.assert_array_equal(t.offsets, np.arange(-46, 47))
    for name in t.position_maps:
        assert t.spread[name].mean() == pytest.approx(t.toeplitz[name], abs=1e-15)


def test_toeplitz_deviation_pinned():
    assert ch.toeplitz_deviation(np.array([[0.0, 1.0], [2.0, 3.0]])) == pytest.approx(1.5)  # main diagonal only
    toeplitz = np.array([[5, 1, 2], [7, 5, 1], [9, 7, 5]], dtype=float)
    assert ch.toeplitz_deviation(toeplitz) == 0.0
    m = toeplitz.copy()
    m[2, 2] = 8.0  # main diagonal 5, 5, 8: std √2; diagonals ±1 are constant → mean √2 / 3
    assert ch.toeplitz_deviation(m) == pytest.approx(math.sqrt(2) / 3)
    assert math.isnan(ch.toeplitz_deviation(np.ones((1, 1))))
    offsets, spread = ch.diagonal_spread(m)
    np.testing.assert_array_equal(offsets, [-1, 0, 1])
    np.testing.assert_allclose(spread, [0, math.sqrt(2), 0])


def test_relative_part_is_the_closed_form_in_the_offset():
    """p_iᵀ A_rel p_j = Σ_f a_f cos((i−j)ω_f) + b_f sin((i−j)ω_f), a_f, b_f read off A's pair blocks."""
    D = 16
    a = torch.randn(D, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    rel = ch.relative_part(a)
    omega = sinusoidal_frequencies(D).numpy()
    P = sinusoidal_rows(torch.arange(20), D)
    got = (P @ rel @ P.T).numpy()
    A = a.numpy()
    for i in range(20):
        for j in range(20):
            want = sum(
                (A[2 * f, 2 * f] + A[2 * f + 1, 2 * f + 1]) / 2 * math.cos((i - j) * omega[f])
                + (A[2 * f, 2 * f + 1] - A[2 * f + 1, 2 * f]) / 2 * math.sin((i - j) * omega[f])
                for f in range(D // 2)
            )
            assert abs(got[i, j] - want) < 1e-12
    # It keeps what already has the form and is a projection (applying it twice changes nothing).
    torch.testing.assert_close(ch.relative_part(rel), rel)
    assert not torch.allclose(rel, a)
    # With a sine part it is not symmetric: it tells left from right.
    assert np.abs(got - got.T).max() > 0.1


def test_relative_part_does_not_move_under_a_shift():
    t = ch.four_terms(SENTENCE, 0, shift=5)
    assert t.relative_shift_change < 1e-12


# -- shift ---------------------------------------------------------------------------------------


def test_prefix_changes_sinusoidal_logits_but_not_the_content_term():
    r = ch.shift_experiment(CV, ("Well", ","), 0)
    assert r.shift == 2
    assert r.max_abs_change > 0.05 and r.mean_abs_change > 0.01
    assert r.content_max_change == 0.0  # exactly: no position enters the content-only score
    i, j = r.largest_pair
    assert abs(r.logits_diff[i, j]) == pytest.approx(r.max_abs_change)
    assert r.prefixed_run_max_diff < 1e-12  # offset run = the whole prefixed sentence, sliced


def test_only_the_number_of_prefix_tokens_matters():
    a = ch.shift_experiment(SENTENCE, ("Well", ","), 3)
    b = ch.shift_experiment(SENTENCE, ("Hmm", "!"), 3)
    np.testing.assert_array_equal(a.logits_after, b.logits_after)
    c = ch.shift_experiment(SENTENCE, ("Well",), 3)
    assert np.abs(a.logits_after - c.logits_after).max() > 0.01


def test_empty_prefix_changes_nothing():
    r = ch.shift_experiment(CV, (), 0)
    assert r.shift == 0 and r.max_abs_change == 0.0
    np.testing.assert_allclose(r.pe_cosine, 1.0)


def test_the_position_vectors_all_turn_by_the_same_angle():
    """cos(PE(p), PE(p+k)) = Σ_f cos(kω_f) / (d/2) for every p: the same for every word."""
    r = ch.shift_experiment(SENTENCE, ("Well", ","), 0)
    omega = sinusoidal_frequencies(64).numpy()
    want = np.cos(2 * omega).sum() / 32
    np.testing.assert_allclose(r.pe_cosine, want, atol=1e-12)
    assert want == pytest.approx(0.884496, abs=1e-6)  # pinned
    np.testing.assert_allclose(r.pe_before, sinusoidal_rows(torch.arange(len(SENTENCE)), 64).numpy(), atol=1e-6)
    np.testing.assert_allclose(r.pe_after, sinusoidal_rows(torch.arange(len(SENTENCE)) + 2, 64).numpy(), atol=1e-6)
    # The rows themselves differ from word to word.
    diff = r.pe_after - r.pe_before
    assert np.abs(diff[0] - diff[1]).max() > 0.1


# -- length --------------------------------------------------------------------------------------


def test_learned_table_has_no_row_past_the_training_length():
    enc = build("learned", 64, 1, 0, LearnedConfig(max_len=10))
    enc.encode_input(torch.zeros(1, 10, 64), torch.arange(10))  # positions 0…9 exist
    with pytest.raises(PositionOutOfRange) as e:
        enc.encode_input(torch.zeros(1, 11, 64), torch.arange(11))
    assert e.value.max_len == 10 and e.value.position == 10

    r = ch.length_experiment(10, 30, 0)
    assert r.learned_error is not None and "0…9" in r.learned_error and r.learned_bad_position == 10
    assert np.isfinite(r.learned_table[:10]).all() and np.isnan(r.learned_table[10:]).all()
    np.testing.assert_allclose(r.learned_table[:10], enc.table.detach().double().numpy())
    ok = ch.length_experiment(30, 30, 0)
    assert ok.learned_error is None and np.isfinite(ok.learned_table).all()


def test_sinusoidal_rows_exist_everywhere_but_are_new_past_training():
    r = ch.length_experiment(32, 200, 0)
    assert r.pe.shape == (200, 64) and np.isfinite(r.pe).all()
    np.testing.assert_allclose(r.pe, sinusoidal_rows(torch.arange(200), 64).float().numpy())
    assert (r.nearest_distance[:32] < 1e-9).all()
    assert (r.nearest_distance[32:] > 0.5).all()
    np.testing.assert_allclose(r.train_max_angle, 31 * r.omega)
    np.testing.assert_allclose(r.test_max_angle, 199 * r.omega)
    np.testing.assert_array_equal(r.wrapped_in_training, 31 * r.omega >= 2 * np.pi)
    assert r.wrapped_in_training[0] and not r.wrapped_in_training[-1]


def test_angle_gap_against_brute_force_and_closed_form():
    l_train, l_test = 20, 90
    r = ch.length_experiment(l_train, l_test, 0)
    for f, w in enumerate(r.omega):
        seen = np.arange(l_train) * w
        new = np.arange(l_train, l_test) * w
        d = np.abs(np.mod(new[:, None] - seen[None, :] + np.pi, 2 * np.pi) - np.pi)  # circular distance
        assert r.angle_gap[f] == pytest.approx(d.min(axis=1).max(), abs=1e-12)
        if r.test_max_angle[f] < np.pi:  # slow pair: the last position is the farthest new angle
            assert r.angle_gap[f] == pytest.approx(r.test_max_angle[f] - r.train_max_angle[f], abs=1e-12)
    # Fast pairs have seen the whole circle; some middle pair enters far-off territory.
    fast = r.wrapped_in_training
    assert r.angle_gap[fast].max() < 0.4
    assert r.angle_gap[~fast].max() > 2.0
    assert ch.length_experiment(50, 50, 0).angle_gap.max() == 0.0  # nothing new without new positions


def test_length_bounds():
    with pytest.raises(ValueError):
        ch.length_experiment(ch.MAX_TRAIN_LEN + 1, 10, 0)
    with pytest.raises(ValueError):
        ch.length_experiment(10, ch.MAX_TEST_LEN + 1, 0)


# -- the page ------------------------------------------------------------------------------------


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def test_page_default_shows_the_shift_from_the_chapter_numbers():
    at = open_page(PAGE, seed=0)
    assert not errors(at)
    r = ch.shift_experiment(CV, ("Well", ","), 0)
    np.testing.assert_allclose(fig_array(figure(at, "Difference")["data"][0]["z"]), r.logits_diff, atol=1e-12)
    np.testing.assert_allclose(
        fig_array(figure(at, "Scores with the prefix")["data"][0]["z"]), r.logits_after, atol=1e-12
    )
    assert "k = 2" in _markdown(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Largest |change|"] == f"{r.max_abs_change:.3f}"
    # Learned table refuses positions past the default L_train = 32 (test 128): explained, not raised.
    assert any("no row" in w.value and "32–127" in w.value for w in at.warning)
    assert "Check: the four terms add up" in "\n".join(c.value for c in at.caption)
    grid = figure(at, "The four terms")
    assert len(grid["data"]) == 4


def test_page_prefix_edits_html_korean_and_empty():
    at = open_page(PAGE)
    at.text_input(key="trouble_prefix").input("<b>hi</b>").run()
    assert not errors(at)
    md = _markdown(at)
    assert "`<`" in md and "<b>" not in md.replace("`<`", "")  # shown as code spans, never as markup
    k = len(tokenize("<b>hi</b>").tokens)
    assert f"k = {k}" in md

    at.text_input(key="trouble_prefix").input("음, 👋🏽").run()
    assert not errors(at) and "k = 3" in _markdown(at)

    at.text_input(key="trouble_prefix").input("").run()
    assert not errors(at)
    assert any("prefix is empty" in i.value for i in at.info)
    assert np.abs(fig_array(figure(at, "Difference")["data"][0]["z"])).max() == 0.0


def test_page_long_prefix_is_cut_to_its_bound():
    at = open_page(PAGE)
    prefix = " ".join("abcdefghijklmnopqrst")  # 39 characters, 20 tokens > MAX_PREFIX_TOKENS
    at.text_input(key="trouble_prefix").input(prefix).run()
    assert not errors(at)
    assert f"k = {ch.MAX_PREFIX_TOKENS}" in _markdown(at)
    assert any(f"the first {ch.MAX_PREFIX_TOKENS} are used" in c.value for c in at.caption)


def test_page_sliders_at_their_extremes():
    at = open_page(PAGE)
    for train, test in [(2, 2), (ch.MAX_TRAIN_LEN, ch.MAX_TEST_LEN), (2, ch.MAX_TEST_LEN), (ch.MAX_TRAIN_LEN, 2)]:
        at.slider(key="trouble_l_train").set_value(train)
        at.slider(key="trouble_l_test").set_value(test).run()  # both applied in one rerun
        assert not errors(at), (train, test)
        pe = fig_array(figure(at, "Sinusoidal: rows")["data"][0]["z"])
        assert pe.shape == (test, 64)
        learned = fig_array(figure(at, "Learned:")["data"][0]["z"])
        assert np.isnan(learned[train:]).all() and np.isfinite(learned[: min(train, test)]).all()
        refused = any("no row" in w.value for w in at.warning)
        assert refused == (test > train)


def test_page_on_the_sidebar_sentence_long_and_multilingual():
    long = " ".join(f"w{i % 50}" for i in range(300))
    at = open_page(PAGE, sentence=long)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    assert any("300" in w.value for w in at.warning)  # the four-terms section says it cut the text
    assert any("first 256 are shifted" in c.value for c in at.caption)
    grid = figure(at, "The four terms")
    assert fig_array(grid["data"][0]["z"]).shape == (256, 256)
    assert fig_array(figure(at, "Scores without and with")["data"][1]["z"]).shape == (256, 256)

    text = "나는 CV를 좋아해 🙂 <i>정말</i>"
    at = open_page(PAGE, sentence=text, seed=4)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    toks = tokenize(text).tokens
    t = ch.four_terms(toks, 4)
    z = fig_array(figure(at, "The four terms")["data"][3]["z"])
    np.testing.assert_allclose(z, t.terms["position–position"], atol=1e-6)  # float32 in the browser
    assert "<i>" not in "".join(figure_titles(at))


def test_page_single_token_and_empty_sentence():
    at = open_page(PAGE, sentence="alone")
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    assert any("single token" in i.value for i in at.info)

    at = open_page(PAGE, sentence="")
    assert not errors(at)  # the classic example still runs; section 3 asks for a sentence
    assert "Scores with the prefix (shift 2)" in figure_titles(at)
    assert any("no text to work on" in i.value for i in at.info)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at) and any("sidebar sentence is empty" in i.value for i in at.info)
