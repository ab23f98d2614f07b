"""Why order matters: the permutation experiment and its page."""

import numpy as np

from explain.chapters.why_order import permutation_experiment, shuffle_order
from tests.helpers import errors, fig_array, figure, open_page

TOKS = tuple(["The", "cat", "sat", "on", "the", "mat", ".", "The", "dog", "sat", "on", "the", "log", "."])
PAGE = "pages/absolute/why_order.py"


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


def test_with_sinusoidal_positions_order_matters():
    r = permutation_experiment(TOKS, 0, "sinusoidal", shuffle_order(len(TOKS), 0, 3))
    assert r.max_abs_diff > 0.1
    assert all(rep.max_abs_diff > 1e-3 for rep in r.repeats)


def test_page_shuffle_and_switch():
    at = open_page(PAGE)
    assert not errors(at)
    assert at.metric[0].value == "0.000000"
    before = fig_array(figure(at, "Attention weights, shuffled")["data"][0]["z"])
    at.button(key="shuffle").click().run()
    assert not errors(at) and at.metric[0].value == "0.000000"
    after = fig_array(figure(at, "Attention weights, shuffled")["data"][0]["z"])
    assert not np.allclose(before, after)  # the shuffled map really is shuffled
    at.toggle(key="with_pe").set_value(True).run()
    assert not errors(at) and float(at.metric[0].value) > 0.01
    at.button(key="unshuffle").click().run()
    assert at.metric[0].value == "0.000000"  # the original order against itself


def test_page_with_one_token_and_no_repeats():
    at = open_page(PAGE, sentence="hello")
    assert not errors(at)
    assert any("single token" in i.value for i in at.info)
    at = open_page(PAGE, sentence="dog bites man")
    assert not errors(at) and any("repeats no word" in i.value for i in at.info)
