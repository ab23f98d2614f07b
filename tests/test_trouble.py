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
from explain.chapters import trouble_terms as terms
from explain.chapters.common import run_tokens
from explain.figures.theme import SCREEN_CELLS, panel_cells, screen_factor
from tests.helpers import chart, chart_elements, errors, fig_array, figure_titles, open_page

PAGE = "pages/absolute/trouble.py"
CV = ("I", "like", "CV")
SENTENCE = tuple(tokenize("The cat sat on the mat. The dog sat on the log.").tokens)


# -- the four terms ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "tokens,seed", [(SENTENCE, 0), (CV, 7), (tuple(["a", "b", "a", "b", "a", "c"]), 123), (("solo",), 3)]
)
def test_four_terms_sum_to_the_layer_logits(tokens, seed):
    t = terms.four_terms(tokens, seed)
    assert set(t.terms) == set(terms.TERM_NAMES)
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
    t = terms.four_terms(tokens, seed)
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            q = [sum(x[i, a] * wq[a, c] for a in range(D)) for c in range(D)]
            k = [sum(p[j, a] * wk[a, c] for a in range(D)) for c in range(D)]
            want = sum(q[c] * k[c] for c in range(D)) / math.sqrt(D)
            assert abs(t.terms["content–position"][i, j] - want) < 1e-11


def test_which_terms_depend_on_what():
    a = terms.four_terms(SENTENCE, 0)
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
    b = terms.four_terms(other, 0)
    # Same length, different words: position–position is identical, every other term changes.
    np.testing.assert_array_equal(a.terms["position–position"], b.terms["position–position"])
    for name in ("content–content", "content–position", "position–content"):
        assert np.abs(a.terms[name] - b.terms[name]).max() > 0.1, name


def test_position_position_is_toeplitz_only_without_projections():
    tokens = tuple(f"w{i}" for i in range(48))
    t = terms.four_terms(tokens, 0)
    assert t.toeplitz["p·p (no projections)"] < 1e-12
    assert t.toeplitz["relative part of W_qᵀW_k"] < 1e-12
    # With the seeded random projections the term is far from constant along its diagonals.
    assert t.toeplitz["with W_q, W_k"] > 0.05
    assert t.toeplitz_relative["with W_q, W_k"] > 0.3
    np.testing.assert_allclose(t.pp_plain, terms.four_terms(tokens, 99).pp_plain)  # no seed in p·p
    assert list(t.position_maps) == list(t.toeplitz) == list(t.spread)
    np.testing.assert_array_equal(t.offsets, np.arange(-46, 47))
    for name in t.position_maps:
        assert t.spread[name].mean() == pytest.approx(t.toeplitz[name], abs=1e-15)


def test_toeplitz_deviation_pinned():
    assert terms.toeplitz_deviation(np.array([[0.0, 1.0], [2.0, 3.0]])) == pytest.approx(1.5)  # main diagonal only
    toeplitz = np.array([[5, 1, 2], [7, 5, 1], [9, 7, 5]], dtype=float)
    assert terms.toeplitz_deviation(toeplitz) == 0.0
    m = toeplitz.copy()
    m[2, 2] = 8.0  # main diagonal 5, 5, 8: std √2; diagonals ±1 are constant → mean √2 / 3
    assert terms.toeplitz_deviation(m) == pytest.approx(math.sqrt(2) / 3)
    assert math.isnan(terms.toeplitz_deviation(np.ones((1, 1))))
    offsets, spread = terms.diagonal_spread(m)
    np.testing.assert_array_equal(offsets, [-1, 0, 1])
    np.testing.assert_allclose(spread, [0, math.sqrt(2), 0])


def test_relative_part_is_the_closed_form_in_the_offset():
    """p_iᵀ A_rel p_j = Σ_f a_f cos((i−j)ω_f) + b_f sin((i−j)ω_f), a_f, b_f read off A's pair blocks."""
    D = 16
    a = torch.randn(D, D, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    rel = terms.relative_part(a)
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
    torch.testing.assert_close(terms.relative_part(rel), rel)
    assert not torch.allclose(rel, a)
    # With a sine part it is not symmetric: it tells left from right.
    assert np.abs(got - got.T).max() > 0.1


def test_relative_part_does_not_move_under_a_shift():
    t = terms.four_terms(SENTENCE, 0, shift=5)
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
    np.testing.assert_allclose(fig_array(chart(at, "shift_diff")["data"][0]["z"]), r.logits_diff, atol=1e-12)
    np.testing.assert_allclose(fig_array(chart(at, "shift_after")["data"][0]["z"]), r.logits_after, atol=1e-12)
    assert "k = 2" in _markdown(at)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Largest |change|"] == f"{r.max_abs_change:.3f}"
    # Learned table refuses positions past the default L_train = 32 (test 128): explained, not raised.
    assert any("no row" in w.value and "32–127" in w.value for w in at.warning)
    assert "Check: the four terms add up" in "\n".join(c.value for c in at.caption)
    grid = chart(at, "four_terms")
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
    assert np.abs(fig_array(chart(at, "shift_diff")["data"][0]["z"])).max() == 0.0


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
        pe = fig_array(chart(at, "length_sin")["data"][0]["z"])
        # Past SCREEN_CELLS² cells the positions are drawn in blocks of f (channels whole)
        f = screen_factor(test, SCREEN_CELLS) if test * 64 > SCREEN_CELLS**2 else 1
        assert pe.shape == (-(-test // f), 64)
        learned = fig_array(chart(at, "length_learned")["data"][0]["z"])
        assert np.isnan(learned[-(-train // f) :]).all() and np.isfinite(learned[: min(train, test) // f]).all()
        refused = any("no row" in w.value for w in at.warning)
        assert refused == (test > train)


def test_page_on_the_sidebar_sentence_long_and_multilingual():
    long = " ".join(f"w{i % 50}" for i in range(300))
    at = open_page(PAGE, sentence=long)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    assert any("300" in w.value for w in at.warning)  # the four-terms section says it cut the text
    assert any("first 256 are shifted" in c.value for c in at.caption)
    grid = chart(at, "four_terms")
    side = -(-256 // screen_factor(256, panel_cells(len(grid["data"]))))  # the panels' share of cells
    assert fig_array(grid["data"][0]["z"]).shape == (side, side) and side < 256
    pair = chart(at, "shift_before_after")
    assert fig_array(pair["data"][1]["z"]).shape == (86, 86)  # two panels: blocks of 3

    text = "나는 CV를 좋아해 🙂 <i>정말</i>"
    at = open_page(PAGE, sentence=text, seed=4)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    toks = tokenize(text).tokens
    t = terms.four_terms(toks, 4)
    z = fig_array(chart(at, "four_terms")["data"][3]["z"])
    np.testing.assert_allclose(z, t.terms["position–position"], atol=1e-6)  # float32 in the browser
    assert "<i>" not in "".join(figure_titles(at))


def test_page_single_token_and_empty_sentence():
    at = open_page(PAGE, sentence="alone")
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at)
    assert any("single token" in i.value for i in at.info)

    at = open_page(PAGE, sentence="")
    assert not errors(at)  # the classic example still runs; section 3 asks for a sentence
    assert chart(at, "shift_after")["layout"]["title"]["text"] == "Scores with the prefix (shift 2)"
    assert any("no text to work on" in i.value for i in at.info)
    at.radio(key="trouble_base").set_value("sidebar").run()
    assert not errors(at) and any("sidebar sentence is empty" in i.value for i in at.info)


# -- the question --------------------------------------------------------------------------------


def numpy_logit(tokens, seed, positions, i, j, d=64):
    """(W_q(x_i + p_i))ᵀ(W_k(x_j + p_j))/√d written out in numpy, at explicit positions."""
    layer = toy_layer(build("sinusoidal", d, 1, seed), seed)
    wq, wk = layer.w_q.detach().double().numpy(), layer.w_k.detach().double().numpy()
    x = token_embeddings([token_key(t) for t in tokens], d, seed).double().numpy()

    def pe(pos):
        return np.array(
            [
                math.sin(pos * 10000 ** (-(c // 2) * 2 / d))
                if c % 2 == 0
                else math.cos(pos * 10000 ** (-(c // 2) * 2 / d))
                for c in range(d)
            ]
        )

    q = (x[i] + pe(positions[i])) @ wq
    k = (x[j] + pe(positions[j])) @ wk
    return float(q @ k) / math.sqrt(d)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_shift_question_over_seeds(lang):
    """The question asks about the classic example of each language at the sidebar's seed: over 40
    seeds, the answer is an option, the stated change is the numpy score difference, k is the
    prefix's token count and the cosine is Σ_f cos(kω_f)/(d/2)."""
    ex = ch.EXAMPLES[lang]
    tokens = tokenize(ex.sentence).tokens
    k = len(tokenize(ex.prefix).tokens)
    omega = sinusoidal_frequencies(64).numpy()
    for seed in range(40):
        q = ch.shift_question(seed, lang)
        before = numpy_logit(tokens, seed, range(len(tokens)), ex.query, ex.key)
        after = numpy_logit(tokens, seed, [p + k for p in range(len(tokens))], ex.query, ex.key)
        assert q.answer in q.options
        assert q.facts["change"] == pytest.approx(after - before, abs=1e-9)
        assert q.answer == ("changes" if abs(after - before) > 1e-6 else "same")
        assert q.facts["k"] == k == 2 and q.facts["seed"] == seed
        assert q.facts["cosine"] == pytest.approx(np.cos(k * omega).sum() / 32, abs=1e-12) and q.facts["cosine"] < 1
        assert q.facts["query"] == tokens[ex.query] and q.facts["key"] == tokens[ex.key]
        assert abs(ex.query - ex.key) == 1  # the "same" option's reason: "still one apart"
        assert f"{q.facts['change']:+.3f}" in q.explanation and str(seed) in q.explanation
        assert q.explanation == ch.t(f"trouble.shift.explanation_{q.answer}", lang, **q.facts)


# -- the page's sections ---------------------------------------------------------------------------


def test_shift_section_on_the_example_the_sentence_and_nothing():
    sec = ch.shift_section("ignored", "Well,", 0, True, "en")
    assert sec.base.tokens == CV and sec.k == 2 and sec.more_tokens == 0
    np.testing.assert_array_equal(sec.result.logits_diff, ch.shift_experiment(CV, ("Well", ","), 0).logits_diff)
    ko = ch.shift_section("", "음,", 0, True, "ko")
    assert ko.base.tokens == tokenize("나는 CV를 좋아해").tokens
    assert ch.shift_section("", "Well,", 0, False, "en").result is None  # no sentence: nothing to shift
    long = ch.shift_section(" ".join(SENTENCE * 3), "x " * 40, 0, False, "en")
    assert long.k == ch.MAX_PREFIX_TOKENS and long.prefix.truncated
    assert long.shown_tokens == SENTENCE[: ch.SHOW_TOKENS] and long.more_tokens == 42 - ch.SHOW_TOKENS
    r = long.result
    assert not r.small and r.before_after.shape == (2, 42, 42) and r.diff_panel.shape == (1, 42, 42)
    assert r.score_limit == pytest.approx(max(np.abs(r.logits_before).max(), np.abs(r.logits_after).max()))
    assert r.mean_cosine == pytest.approx(float(np.mean(r.pe_cosine))) and r.cosine_spread < 1e-12
    np.testing.assert_array_equal(r.pe_change, r.pe_after - r.pe_before)


def test_length_result_properties():
    r = ch.length_experiment(32, 200, 0)
    assert r.beyond and r.end_line == 31.5 and r.pairs.size == 32
    assert r.wrapped == int((31 * r.omega >= 2 * np.pi).sum()) and r.worst_pair == int(np.argmax(r.angle_gap))
    np.testing.assert_array_equal(r.positions, np.arange(200))
    assert r.step == pytest.approx(float(np.linalg.norm(r.pe[1] - r.pe[0])))
    assert (r.full_turn == 2 * np.pi).all() and (r.farthest == np.pi).all() and (r.step_line == r.step).all()
    assert not ch.length_experiment(50, 50, 0).beyond


def test_four_terms_properties():
    t = terms.four_terms(CV, 0)
    assert t.stacked.shape == (4, 3, 3) and t.panel_height == 300
    np.testing.assert_array_equal(t.stacked[1], t.terms["content–position"])
    assert t.mean_sizes["position–position"] == pytest.approx(np.abs(t.terms["position–position"]).mean())
    assert [key for key, _, _ in t.map_charts] == ["toeplitz_0", "toeplitz_1", "toeplitz_2"]
    assert [name for _, name, _ in t.map_charts] == list(terms.MAP_NAMES)
    assert terms.four_terms(tuple(f"w{i}" for i in range(100)), 0).panel_height == 560
    # the table's "depends on" columns: only content–content is free of positions, only
    # position–position of words (checked on the numbers in test_which_terms_depend_on_what)
    assert terms.TERM_DEPENDS == {"cc": (True, False), "cp": (True, True), "pc": (True, True), "pp": (False, True)}


# -- TUPE ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("tokens,seed", [(CV, 0), (SENTENCE, 3), (("solo",), 1)])
def test_tupe_terms_against_the_formula_written_out(tokens, seed):
    """α_ij = x_iᵀW_qᵀW_k x_j/√(2d) + p_iᵀU_qᵀU_k p_j/√(2d) (TUPE §3.1, Eq. (7)), each term a loop."""
    D = 64
    u = terms.tupe_terms(tokens, seed, shift=2)
    layer = toy_layer(build("sinusoidal", D, 1, seed), seed)
    wq, wk = layer.w_q.detach().double().numpy(), layer.w_k.detach().double().numpy()
    uq, uk = (m.numpy() for m in terms.tupe_projections(seed))
    x = token_embeddings([token_key(t) for t in tokens], D, seed).double().numpy()
    p = sinusoidal_rows(torch.arange(len(tokens)), D).numpy()
    for i in range(len(tokens)):
        for j in range(len(tokens)):
            c = sum((x[i] @ wq)[a] * (x[j] @ wk)[a] for a in range(D)) / math.sqrt(2 * D)
            q = sum((p[i] @ uq)[a] * (p[j] @ uk)[a] for a in range(D)) / math.sqrt(2 * D)
            assert u.content[i, j] == pytest.approx(c, abs=1e-12)
            assert u.position[i, j] == pytest.approx(q, abs=1e-12)
    np.testing.assert_allclose(u.total, u.content + u.position)
    four = terms.four_terms(tokens, seed, shift=2)
    np.testing.assert_allclose(u.content * math.sqrt(2), four.terms["content–content"], atol=1e-12)
    assert u.content_check < 1e-12
    assert u.dropped == pytest.approx(
        (np.abs(four.terms["content–position"]).mean(), np.abs(four.terms["position–content"]).mean())
    )
    assert u.stacked.shape == (3, len(tokens), len(tokens))


def test_tupe_position_term_ignores_the_words_but_not_the_absolute_positions():
    other = tuple(f"z{i}" for i in range(len(SENTENCE)))
    a, b = terms.tupe_terms(SENTENCE, 0, shift=2), terms.tupe_terms(other, 0, shift=2)
    np.testing.assert_array_equal(a.position, b.position)  # no word enters it
    assert np.abs(a.content - b.content).max() > 0.1
    assert a.position_shift_change > 0.05  # a prefix still moves it: absolute
    # its own projections: not the layer's W_q, W_k (those give the four-term position–position)
    pp = terms.four_terms(SENTENCE, 0).terms["position–position"] / math.sqrt(2)
    assert np.abs(a.position - pp).max() > 0.05
    assert terms.tupe_terms(SENTENCE, 0, shift=0).position_shift_change == 0.0


def test_page_shows_tupe_beside_the_four_terms():
    at = open_page(PAGE, seed=0)
    assert not errors(at)
    toks = tuple(tokenize(at.session_state["sentence"]).tokens)
    u = terms.tupe_terms(toks, 0, shift=2)
    grid = chart(at, "tupe_terms")
    np.testing.assert_allclose(fig_array(grid["data"][1]["z"]), u.position, atol=1e-6)  # float32 in the browser
    keys = [el.key for el in chart_elements(at)]
    assert keys.index("tupe_terms") == keys.index("four_terms") + 1
    line = next(m.value for m in at.markdown if m.value.startswith("On your sentence TUPE"))
    assert f"**{u.position_shift_change:.3f}**" in line
