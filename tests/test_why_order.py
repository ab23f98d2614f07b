"""Why order matters: the permutation experiment, its question, the recurrent contrast, and the page.

Order: properties, the question swept over its control space against an attention layer written out
in numpy, the recurrent network against a plain loop, then the page under AppTest (charts by key).
"""

import math

import numpy as np
import pytest

from encoders import build
from encoders.attention import toy_layer
from encoders.text import token_embeddings, token_key, tokenize
from explain.chapters import why_order as ch
from explain.chapters.why_order import permutation_experiment, shuffle_order
from tests.helpers import chart, errors, fig_array, open_page, skip_questions

TOKS = tuple(["The", "cat", "sat", "on", "the", "mat", ".", "The", "dog", "sat", "on", "the", "log", "."])
PAGE = "pages/absolute/why_order.py"
SENTENCES = (
    TOKS,
    tuple(tokenize("dog bites man").tokens),
    tuple(tokenize("고양이가 매트 위에 앉았다. 강아지가 통나무 위에 앉았다.").tokens),
    tuple(tokenize("a a a a b").tokens),  # repeated words: some shuffles leave the word sequence unchanged
    tuple(f"w{k % 7}" for k in range(40)),
)


def numpy_attention(tokens, seed, d=64):
    """One head without positions, written out in numpy from the layer's own weights (float64)."""
    layer = toy_layer(build("none", d, 1, seed), seed)
    wq, wk, wv, wo = (w.detach().double().numpy() for w in (layer.w_q, layer.w_k, layer.w_v, layer.w_o))
    x = token_embeddings([token_key(t) for t in tokens], d, seed).double().numpy()
    logits = (x @ wq) @ (x @ wk).T / math.sqrt(d)
    w = np.exp(logits - logits.max(axis=1, keepdims=True))
    w /= w.sum(axis=1, keepdims=True)
    return (w @ (x @ wv)) @ wo


def test_shuffle_order_is_a_real_permutation():
    for k in range(1, 20):
        order = shuffle_order(14, 0, k)
        assert sorted(order) == list(range(14)) and order != tuple(range(14))
    assert shuffle_order(14, 0, 0) == tuple(range(14))
    assert shuffle_order(1, 0, 5) == (0,)
    assert shuffle_order(14, 0, 1) == shuffle_order(14, 0, 1)  # same seed and press, same shuffle
    assert shuffle_order(14, 0, 1) != shuffle_order(14, 1, 1)


def test_without_positions_shuffling_only_reorders_the_outputs():
    r = permutation_experiment(TOKS, 0, "none", shuffle_order(len(TOKS), 0, 3))
    assert r.max_abs_diff < 1e-12
    # repeated words ("the" ×4, "sat", "on", ".") get identical outputs
    words = {rep.word.casefold(): rep for rep in r.repeats}
    assert set(words) == {"the", "sat", "on", "."}
    assert words["the"].positions == (0, 4, 7, 11)
    assert all(rep.max_abs_diff < 1e-12 for rep in r.repeats)
    np.testing.assert_allclose(r.original.output, numpy_attention(TOKS, 0), atol=1e-12)


def test_with_sinusoidal_positions_order_matters():
    r = permutation_experiment(TOKS, 0, "sinusoidal", shuffle_order(len(TOKS), 0, 3))
    assert r.max_abs_diff > 0.1
    assert all(rep.max_abs_diff > 1e-3 for rep in r.repeats)


def test_shuffle_view_properties_are_what_the_maps_draw():
    r = ch.shuffle_view(TOKS, 0, 2, False)
    order = shuffle_order(len(TOKS), 0, 2)
    assert r.shuffled_tokens == tuple(TOKS[k] for k in order)
    assert r.outputs_shown.shape == r.unshuffled_shown.shape == (14, 64)
    np.testing.assert_array_equal(r.difference_shown, r.outputs_shown - r.unshuffled_shown)
    assert ch.shuffle_view(TOKS, 0, 0, True).max_abs_diff == 0.0  # the original order against itself
    assert ch.shuffle_view(TOKS, 0, 0, True).exact
    assert [ch.verdict(v) for v in (0.0, 1e-12, 1e-3, 0.5)] == ["same", "same", "slight", "different"]


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("seed", [0, 12345])
def test_shuffle_question_over_its_control_space(seed, lang):
    """Every shuffle a learner reaches in a lesson (0 = the original order, then 1 … 8 presses), on
    short, long, Korean and repetitive sentences: the answer is an option and is "the same vectors",
    and the stated difference is the one an attention layer written out in numpy gives."""
    for tokens in SENTENCES:
        ref = numpy_attention(tokens, seed)
        for shuffles in range(9):
            q = ch.shuffle_question(tokens, seed, shuffles, lang)
            order = shuffle_order(len(tokens), seed, max(1, shuffles))
            shuffled = numpy_attention(tuple(tokens[k] for k in order), seed)
            independent = float(np.abs(ref - shuffled[np.argsort(order)]).max())
            assert q.answer in q.options and q.answer == "same"
            assert independent < 1e-12 and q.facts["diff"] < 1e-12
            assert f"{q.facts['diff']:.1e}" in q.explanation
            assert q.labels == tuple(ch.t(f"why_order.opt.{o}", lang) for o in q.options)
    assert ch.shuffle_question(("solo",), seed, 1, lang) is None  # one token: nothing to reorder


def test_question_explains_a_broken_layer_as_broken():
    """The explanation follows the measured verdict (the "same" text would be false otherwise)."""
    assert ch.verdict(0.05) == "slight"
    from explain.i18n import t

    assert "0.05" in t("why_order.broken", "en", diff=0.05)


# ------------------------------------------------------------------------- the recurrent network


def loop_states(x, w_x, w_h):
    """h_t = tanh(x_t W_x + h_{t−1} W_h), one multiply-add at a time."""
    n, d = len(x), len(x[0])
    h = [0.0] * d
    out = []
    for t in range(n):
        h = [
            math.tanh(sum(x[t][a] * w_x[a][c] for a in range(d)) + sum(h[a] * w_h[a][c] for a in range(d)))
            for c in range(d)
        ]
        out.append(h)
    return np.array(out)


def test_elman_states_against_a_plain_loop():
    tokens = ("dog", "bites", "man", "dog")
    x = token_embeddings([token_key(t) for t in tokens], 16, 3).double()
    w_x, w_h = ch.recurrent_weights(3, 16)
    got = ch.elman_states(x, w_x, w_h).numpy()
    np.testing.assert_allclose(got, loop_states(x.tolist(), w_x.tolist(), w_h.tolist()), atol=1e-13)
    assert np.abs(got[0] - got[3]).max() > 0.1  # the same word, after different words: another state


@pytest.mark.parametrize("seed", [0, 5])
def test_recurrence_view_against_the_loop_and_the_word_prefixes(seed):
    for tokens in SENTENCES[:4]:
        for shuffles in range(8):
            rv = ch.recurrence_view(tokens, seed, shuffles)
            order = shuffle_order(len(tokens), seed, shuffles)
            w_x, w_h = (w.tolist() for w in ch.recurrent_weights(seed))
            x = token_embeddings([token_key(t) for t in tokens], 64, seed).double().tolist()
            a = loop_states(x, w_x, w_h)
            b = loop_states([x[k] for k in order], w_x, w_h)[np.argsort(order)]
            np.testing.assert_allclose(rv.recurrent_change, np.abs(a - b).max(axis=1), atol=1e-12)
            assert rv.attention_max < 1e-12  # attention: the same shuffle changes nothing
            # "exactly those preceded by the very same sequence of words in both orders"
            keys = [token_key(t) for t in tokens]
            shuffled_keys = [keys[k] for k in order]
            where = {orig: pos for pos, orig in enumerate(order)}  # original index → shuffled position
            same_prefix = sum(keys[: i + 1] == shuffled_keys[: where[i] + 1] for i in range(len(tokens)))
            assert rv.unchanged_words == same_prefix
            if shuffles == 0:
                assert rv.recurrent_max == 0.0
            elif len(set(keys)) == len(keys):  # all words distinct: some word surely moved
                assert rv.recurrent_max > 0.05


def test_swapping_two_copies_of_a_word_still_moves_them_in_the_recurrent_network():
    """The word sequence "a a b" is the same after swapping the two "a", yet each copy now stands
    at the other's place, after a different number of steps: its state is the other copy's."""
    rv = ch.recurrence_view(("a", "a", "b"), 2, 1)  # seed 2, first press: the two "a" swap places
    assert rv.order == (1, 0, 2)
    assert rv.recurrent_change[0] > 0.1 and rv.recurrent_change[1] > 0.1 and rv.recurrent_change[2] == 0.0
    assert rv.unchanged_words == 1 and rv.attention_max < 1e-12


def test_recurrent_states_stay_of_order_one_over_256_words():
    rv = ch.recurrence_view(tuple(f"w{k}" for k in range(256)), 0, 1)
    assert 0.2 < rv.recurrent_max < 2.0  # tanh bounds each entry by 1, so |Δ| ≤ 2


# --------------------------------------------------------------------------------------- the page


def test_page_shuffle_and_switch():
    at = skip_questions(open_page(PAGE))  # the metric answers the question: it waits for Reveal
    assert not errors(at)
    assert at.metric[0].value == "0.000000"
    before = fig_array(chart(at, "att_shuffled")["data"][0]["z"])
    at.button(key="shuffle").click().run()
    assert not errors(at) and at.metric[0].value == "0.000000"
    after = fig_array(chart(at, "att_shuffled")["data"][0]["z"])
    assert not np.allclose(before, after)  # the shuffled map really is shuffled
    bars = chart(at, "rnn_change")["data"]
    assert fig_array(bars[0]["y"]).max() < 1e-12 and fig_array(bars[1]["y"]).max() > 0.1
    at.toggle(key="with_pe").set_value(True).run()
    assert not errors(at) and float(at.metric[0].value) > 0.01
    at.button(key="unshuffle").click().run()
    assert at.metric[0].value == "0.000000"  # the original order against itself
    assert any("original order" in i.value for i in at.info)  # no recurrent comparison to draw


def test_page_question_is_the_chapter_question():
    at = open_page(PAGE, seed=4)
    q = ch.shuffle_question(tuple(tokenize(at.session_state["sentence"]).tokens), 4, 1, "en")
    radio = at.radio(key="why_order_q__choice")
    assert radio.options == list(q.labels)
    radio.set_value(q.answer_label).run()
    at.button(key="why_order_q__reveal").click().run()
    assert any(s.value.startswith("Right:") for s in at.success)
    # The explanation states the page's own measurement (rounding-level: its last digits may differ
    # from this process's run, so the number is read back, not compared as text).
    shown = next(m.value for m in at.markdown if m.value.startswith("Measured on your sentence"))
    assert float(shown.split("**")[1]) < 1e-12


def test_page_with_one_token_and_no_repeats():
    at = open_page(PAGE, sentence="hello")
    assert not errors(at)
    assert any("single token" in i.value for i in at.info)
    at = open_page(PAGE, sentence="dog bites man")
    assert not errors(at) and any("repeats no word" in i.value for i in at.info)
