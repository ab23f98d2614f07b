"""Every page against the hostile corpus (tests/hostile.py): no exception, no traceback, no error box.

For each chapter in ui.chapters.CHAPTERS, one AppTest session takes every corpus input in turn —
in the shared sentence box, and in each text box of the page's own — and then every slider and
number box at its minimum and its maximum. After each run the page must have rendered its title
with no exception and no st.error; an input with no tokens must get the friendly "no text" note and
an input past the token limit the "draws the first" notice, on every page that reads the sentence.
One AppTest per page keeps this affordable: a rerun costs milliseconds to a few hundred.
"""

from __future__ import annotations

import pytest

from encoders.text import MAX_TOKENS, tokenize
from tests.helpers import errors, open_page
from tests.hostile import CORPUS
from tests.test_pages_smoke import CUT, NO_TEXT, reads_sentence
from ui.chapters import CHAPTERS
from ui.sidebar import DEFAULT_SENTENCE


def problems_after_run(at, chapter) -> list[str]:
    out = [f"error: {e}" for e in errors(at)]
    if chapter.title not in [t.value for t in at.title]:
        out.append("the page did not render its title")
    return out


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_every_hostile_sentence(chapter):
    at = open_page(chapter.path)
    reads = reads_sentence(chapter)
    box = at.text_area(key="sentence")
    failures = []
    for name, text in CORPUS.items():
        box.input(text)
        at.run()
        box = at.text_area(key="sentence")
        found = problems_after_run(at, chapter)
        if reads and not found:
            n = len(tokenize(text).tokens) if text else 0
            infos = [i.value for i in at.info]
            warnings = [w.value for w in at.warning]
            if n == 0 and not any(NO_TEXT in i for i in infos):
                found.append("no 'no text' note for an input without tokens")
            if n > MAX_TOKENS and not any(CUT.search(w) for w in warnings):
                found.append(f"{n} tokens but no 'draws the first' notice")
        failures += [f"{name}: {f}" for f in found]
    assert not failures, "\n".join(failures[:40])


def own_text_boxes(at):
    return [w for w in list(at.text_input) + list(at.text_area) if w.key != "sentence"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_own_text_boxes_and_extreme_controls(chapter):
    """The page's own inputs: every text box gets the corpus, every bounded control its ends."""
    at = open_page(chapter.path, sentence=DEFAULT_SENTENCE)
    failures = []
    for k in range(len(own_text_boxes(at))):
        for name, text in CORPUS.items():
            boxes = own_text_boxes(at)
            if k >= len(boxes):
                break
            key = boxes[k].key
            boxes[k].input(text)
            at.run()
            failures += [f"text box {key!r} ← {name}: {f}" for f in problems_after_run(at, chapter)]
    # Sliders and number boxes at both ends, one at a time, then all at once (the corner).
    for end in ("min", "max"):
        for kind in ("slider", "number_input"):
            for k in range(len(getattr(at, kind))):
                widgets = getattr(at, kind)
                if k >= len(widgets) or widgets[k].key in ("seed",):
                    continue
                w = widgets[k]
                target = getattr(w, end)
                if isinstance(w.value, (tuple, list)):  # a range slider: both handles to the end
                    target = (target, target)
                w.set_value(target)
                at.run()
                failures += [f"{kind} {w.key!r} = {end}: {f}" for f in problems_after_run(at, chapter)]
    assert not failures, "\n".join(failures[:40])
