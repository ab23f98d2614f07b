"""The "trained on real text" panel under an encoding's own chapter (ui/trained.py): on every chapter
whose encoding has a shipped byte-level model it is there, closed, and costs nothing (no read, no
chart); opened, it draws that model's every-head grid on the learner's sentence and states what the
read computed; chapters whose encoding has no trained model have no panel."""

from __future__ import annotations

import numpy as np
import pytest

from explain.chapters import trained_attention as ta
from explain.i18n import t
from tests.helpers import chart, chart_elements, errors, open_page
from ui.chapters import BY_KEY, CHAPTERS

# The chapter → the registry name it teaches, for the chapters that put the panel under their maps.
PANELS = {
    "why-order": "none",
    "sinusoidal": "sinusoidal",
    "learned": "learned",
    "t5": "t5",
    "alibi": "alibi",
    "rope": "rope",
    "cope": "cope",
}


def test_rope_scaling_reads_rope_and_each_stretch_of_it():
    from explain.chapters import rope_scaling

    kept = [e for e in rope_scaling.TRAINED_SCHEMES if ta.resolve(e)]
    assert kept == ["rope", *ta.STRETCHES]
    at = open_page(BY_KEY["rope-scaling"].path, sentence="The cat sat on the mat.")
    at.session_state["rope-scaling_trained"] = True
    at.run()
    assert not errors(at)
    pick = at.radio(key="rope-scaling_trained_pick")
    assert list(pick.options) == [rt_label(e) for e in kept]
    for k, enc in enumerate(kept):
        pick.set_value(pick.options[k]).run()
        assert not errors(at)
        model, stretch = ta.resolve(enc)
        read = ta.read_text(model, "The cat sat on the mat.", stretch, "en")
        assert read.sentences[0] in " ".join(m.value for m in at.markdown)
        assert chart(at, "rope-scaling_trained_grid")["data"]
        pick = at.radio(key="rope-scaling_trained_pick")


def rt_label(encoding: str) -> str:
    from explain.chapters import real_text

    return real_text.enc_label(encoding, "en")


def test_every_panel_names_an_encoding_with_a_trained_model():
    assert all(ta.resolve(enc) == (enc, "") for enc in PANELS.values())
    # Every trained model has a chapter panel: no model is left without one.
    assert set(PANELS.values()) == set(ta.MODELS)


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("key", sorted(PANELS))
def test_the_panel_is_lazy_then_draws_the_chapters_model(key, lang):
    sentence = "The cat sat on the mat. 고양이"
    at = open_page(BY_KEY[key].path, sentence=sentence)
    if lang == "ko":
        at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    box = f"{key}_trained"
    assert box in at.session_state, f"{key}: no trained panel"
    assert not any(el.key == f"{key}_trained_grid" for el in chart_elements(at))  # closed: nothing drawn
    at.session_state[box] = True  # open it, as a click would
    at.run()
    assert not errors(at)
    fig = chart(at, f"{key}_trained_grid")
    read = ta.read_text(PANELS[key], sentence, "", lang)
    heatmaps = [tr for tr in fig["data"] if tr["type"] == "heatmap"]
    assert len(heatmaps) == read.n_layers * read.n_heads
    assert np.asarray(read.grid("weights")).shape[-1] == read.n == len(sentence.encode())
    text = " ".join(m.value for m in at.markdown)
    assert read.sentences[0] in text  # the computed "expects next" sentence, in this language
    assert t("trained_attention.chapter_panel.open", lang, model="").split(":")[0] in " ".join(
        e.label for e in at.expander
    )


@pytest.mark.parametrize(
    "chapter", [c for c in CHAPTERS if c.key not in PANELS and c.key != "rope-scaling"], ids=lambda c: c.key
)
def test_no_panel_where_the_chapter_has_no_trained_model(chapter):
    if chapter.part == "Labs":  # the labs show trained models in their own ways
        return
    at = open_page(chapter.path)
    assert not errors(at)
    assert not any(k.endswith("_trained") for k in at.session_state)
