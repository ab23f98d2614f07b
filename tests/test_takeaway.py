"""The sentence maps' one-line takeaway (explain/takeaway.py; issue 43, item 6): computed from the
weights the map draws, in both languages, and pinned against the charts a page sends.
"""

from __future__ import annotations

import numpy as np
import pytest

from explain.i18n import t
from explain.takeaway import READS_WELL, last_word, map_takeaway, takeaway_sentence, where
from tests.helpers import chart, fig_array, open_page, skip_questions

TOKENS = ["the", "cat", "sat", "on", "the", "mat", "."]


def causal_map(n: int, favourite: int) -> np.ndarray:
    """A causal map whose every row puts half its weight on `favourite` (or on itself before it)."""
    w = np.tril(np.ones((n, n)))
    for i in range(n):
        w[i, min(favourite, i)] += w[i].sum()
    w[np.triu_indices(n, 1)] = np.nan  # masked, as the pages draw it
    return w / np.nansum(w, axis=1, keepdims=True)


def test_the_last_word_and_its_strongest_key():
    w = causal_map(7, favourite=1)
    tk = map_takeaway(w, last_word(TOKENS))
    assert last_word(TOKENS) == 5 and last_word(["."]) == 0
    assert (tk.query, tk.key, tk.heads) == (5, 1, 1)
    assert where(tk, "en") == t("common.takeaway.back", "en", d=4)
    # reach: Σ_j w_ij |i − j|, averaged over the rows, computed here by loops
    rows = [sum(np.nan_to_num(w[i, j]) * abs(i - j) for j in range(7)) for i in range(7)]
    assert tk.reach == pytest.approx(np.mean(rows))


def test_ties_go_to_the_nearest_key_and_heads_are_averaged():
    flat = np.full((4, 4), 0.25)
    assert map_takeaway(flat).key == 3  # every key ties: the query's own place
    assert where(map_takeaway(flat), "en") == t("common.takeaway.itself", "en")
    stack = np.stack([causal_map(5, 0), causal_map(5, 4)])
    avg = map_takeaway(stack)
    assert avg.heads == 2 and avg.weight == pytest.approx(np.nan_to_num(stack).mean(axis=0)[4].max())
    with pytest.raises(ValueError):
        map_takeaway(np.ones((3, 4)))


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_sentence_in_both_languages(lang):
    w, off = causal_map(7, 1), causal_map(7, 4)
    text = takeaway_sentence(w, TOKENS, lang, without=off)
    assert "“mat”" in text and "“cat”" in text and "“the”" in text
    assert f"{map_takeaway(w, 5).reach:.1f}" in text and f"{map_takeaway(off, 5).reach:.1f}" in text
    assert f"{READS_WELL[0]}–{READS_WELL[1]}" in text and "(" in text
    assert takeaway_sentence(np.ones((1, 1)), ["a"], lang) == ""
    assert text != takeaway_sentence(w, TOKENS, "ko" if lang == "en" else "en", without=off)


# Pages whose sentence map carries the takeaway, and the chart keys of the map with and without
# positions ((chart, trace) pairs: a pair chart draws both maps, one trace each).
PAGES = {
    "pages/absolute/sinusoidal.py": (("att_sin", 0), ("att_nope", 0)),
    "pages/bias/alibi.py": (("att_pair", 0), ("att_pair", 1)),
}


@pytest.mark.parametrize("path", PAGES)
def test_the_page_states_what_its_map_draws(path):
    at = skip_questions(open_page(path))
    assert not at.exception
    (on_key, on_trace), (off_key, off_trace) = PAGES[path]
    on = fig_array(chart(at, on_key)["data"][on_trace]["z"]).astype(float)
    off = fig_array(chart(at, off_key)["data"][off_trace]["z"]).astype(float)
    ticks = chart(at, on_key)["layout"]["yaxis"]["ticktext"]
    sentences = [m.value for m in at.markdown if m.value.startswith("The strongest weight from")]
    assert len(sentences) == 1, sentences
    text = sentences[0]
    i = max(k for k, tok in enumerate(ticks) if any(c.isalnum() for c in tok))
    for w, part in ((on, text.split("Without")[0]), (off, text.split("Without")[1])):
        row = np.nan_to_num(w[i])
        j = max(np.flatnonzero(row >= row.max() - 1e-6), key=lambda j: -abs(i - j))
        d = np.abs(np.subtract.outer(np.arange(len(w)), np.arange(len(w))))
        reach = (np.nan_to_num(w) * d).sum(axis=1).mean()
        assert f"“{ticks[j]}”" in part and f"{reach:.1f}" in part, (part, ticks[j], reach)
