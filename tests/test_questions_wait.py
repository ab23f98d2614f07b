"""Questions that wait (issue 43, item 2): nothing on a page answers its question before Reveal.

For every chapter page that asks a question, in English and in Korean, the page is opened at its
defaults and read twice: before Reveal and after the learner skips the prediction. What counts as
the answer is derived from the Question the page asked (ui/question.ask keeps it in the session as
`<key>__asked`; a question asked with ui/question.ask_first, whose measurement runs on Reveal, has it
from then on, and the page before Reveal is checked against the answer revealed), never copied by hand:

- the explanation, and each of its sentences;
- the answer stated as the widget states it ("The answer: **…**");
- the answer's numbers: every number the explanation states that the prompt and the option labels
  do not (the measured 1.0e-14 of RoPE, MiniLM's 0.22), written as the explanation writes it;
- the answer's name, where a page could title something with it: a heading, an expander, a metric,
  a box.

None of them may be on the page before Reveal, wherever they would be (prose, captions, metrics,
expander titles, tables, chart titles and annotations). Every placeholder ui.question.answer_shown
drew (a container keyed `<key>__waits_<part>`) must be gone after the skip, and the page must then
say more than before; the explanation and the answer's numbers are then on it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import pytest
from streamlit.testing.v1 import AppTest

from explain.i18n import t
from explain.question import Question
from tests.helpers import APP, TIMEOUT, chart_elements, errors, figure_of
from ui.chapters import CHAPTERS

LANGS = ("en", "ko")
# A number as the catalogue writes one: 1.0e-14, 47,117, 82%, −0.25, 0.000000.
NUMBER = re.compile(r"[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:e[-+−]?\d+)?%?")
SENTENCE_END = re.compile(r"(?<=[.!?。])\s+|\n+")
MIN_SENTENCE = 30  # shorter pieces ("Pair 31:") are not statements on their own


def open_at(path: str, lang: str) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(path).run()
    return at


def asking(at: AppTest) -> list[str]:
    """The keys of the questions the page asks this run (each has its radio `<key>__choice`)."""
    return [str(r.key)[: -len("__choice")] for r in at.radio if str(r.key or "").endswith("__choice")]


def asked(at: AppTest) -> list[Question]:
    """The questions the page asked this run, answered (`<key>__asked`). A question asked with
    ui.question.ask_first has its answer only once revealed: before that it is not among them."""
    return [at.session_state[f"{k}__asked"] for k in asking(at) if f"{k}__asked" in at.session_state]


def _blocks(node: Any) -> Iterator[Any]:
    yield node
    for child in getattr(node, "children", {}).values():
        yield from _blocks(child)


def keys_on_page(at: AppTest) -> set[str]:
    """The user keys of every keyed element and container on the page."""
    found = set()
    for node in _blocks(at._tree):
        proto_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if "-" in proto_id:
            found.add(proto_id.split("-", 2)[-1])
    return found


TITLES = {"title", "header", "subheader", "info", "success", "warning", "error"}
TEXTS = {"markdown", "caption", "latex", "text", "code", "table", "dataframe"}


def _chart_words(el: Any) -> list[str]:
    layout = figure_of(el).get("layout", {})
    title = layout.get("title", {})
    out = [str(title.get("text", "")) if isinstance(title, dict) else str(title)]
    return out + [str(a.get("text", "")) for a in layout.get("annotations", []) or []]


def read(at: AppTest, asking: set[str]) -> tuple[list[str], list[str], list[str]]:
    """The page as a learner reads it, in page order, the question boxes themselves aside:
    (titles: headings, expanders, tabs, metrics, boxes; everything said before the first box;
    everything said after it). `asking`: the questions' keys."""
    titles: list[str] = []
    said: tuple[list[str], list[str]] = ([], [])
    charts = {id(el.proto): el for el in chart_elements(at)}

    def walk(node: Any, after: bool) -> bool:
        kind = getattr(node, "type", None)
        proto_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if any(proto_id.endswith(f"-{k}__predict") for k in asking):
            return True  # the question's own box: its prompt and options are not answers
        words: list[str] = []
        if kind in TITLES:
            titles.append(str(node.value))
            words.append(str(node.value))
        elif kind in ("expander", "tab"):
            titles.append(str(node.label))
            words.append(str(node.label))
        elif kind == "metric":
            titles.append(f"{node.label} {node.value} {node.delta or ''}")
            words.append(titles[-1])
        elif kind in TEXTS:
            words.append(str(node.value))
        elif kind == "bidi_component" and id(getattr(node, "proto", None)) in charts:
            words += _chart_words(charts[id(node.proto)])
        said[after].extend(words)
        for child in getattr(node, "children", {}).values():
            after = walk(child, after)
        return after

    walk(at._tree, False)
    return titles, said[0], said[1]


def numbers(text: str) -> set[str]:
    return set(NUMBER.findall(text))


def significant(n: str) -> int:
    """How many significant digits `n` writes (0.04 → 1, 0.22 → 2, 1.0e-14 → 2, 47,117 → 5)."""
    mantissa = re.split(r"e", n)[0]
    return len(mantissa.replace(",", "").replace(".", "").lstrip("-−0").rstrip("%")) or 0


def answer_numbers(q: Question) -> set[str]:
    """The numbers the explanation states that the prompt and the labels do not: what was measured or
    computed to answer the question. Only numbers specific enough not to turn up by chance elsewhere
    on the page: an exponent (1.0e-14), or a decimal point and two significant digits (0.22, 2.5)
    (a count, a head number, 95% or 0.04 also appear in axis titles, controls and unrelated numbers)."""
    given = numbers(q.prompt) | {n for label in q.labels for n in numbers(label)}
    return {n for n in numbers(q.explanation) - given if "e" in n or ("." in n and significant(n) >= 2)}


def answer_sentences(q: Question) -> list[str]:
    return [s.strip() for s in SENTENCE_END.split(q.explanation) if len(s.strip()) >= MIN_SENTENCE]


def statements(q: Question, lang: str) -> list[str]:
    """The answer as the widget states it, in every form."""
    return [t("classroom.answer", lang, answer=q.answer_label), t("classroom.right", lang, answer=q.answer_label)]


def has_number(text: str, n: str) -> bool:
    """`n` stands in `text` as a whole number (1.0e-14 in '**1.0e-14**', not 0.5 inside 10.5)."""
    return any(m == n for m in NUMBER.findall(text))


def leaks(q: Question, lang: str, above: Iterable[str], below: Iterable[str], titles: Iterable[str]) -> list[str]:
    """What on a page states `q`'s answer: each a short description (empty: nothing). `above`: what
    the page says before the question's box, the material the learner predicts from (the spline's
    knots, listed there, are numbers its explanation repeats); `below`: what it says after the box;
    `titles`: its headings, expanders, metrics and boxes, wherever they are."""
    above, below, titles = list(above), list(below), list(titles)
    found = []
    for text in above + below:
        if q.explanation.strip() and q.explanation.strip() in text:
            found.append(f"the explanation in {text[:80]!r}")
        found += [f"the statement {s!r}" for s in statements(q, lang) if s in text]
        found += [f"the sentence {s[:60]!r}… in {text[:80]!r}" for s in answer_sentences(q) if s in text]
    for text in below:
        hits = sorted(n for n in answer_numbers(q) if has_number(text, n))
        # One number of two significant digits (6.6) can be on a page by chance; three or more
        # digits, an exponent, or two of the answer's numbers in one text cannot.
        if len(hits) >= 2 or any("e" in n or significant(n) >= 3 for n in hits):
            found += [f"the number {n} in {text[:100]!r}" for n in hits]

    # The answer's name as a title (CoPE's proof expander 'p_ij = i − j + 1'): its name is the
    # label, or the label's head before a colon ('i − j + 1: the ordinary relative distance').
    # Only a name that stands out: when the titles name every other option as well (Transformer-XL's
    # four terms, each with its own chart), naming the answer among them gives nothing away.
    def name(label: str) -> str:
        head = label.split(":")[0].strip()
        return head if len(head) >= 3 else label

    others = [name(label) for label in q.labels if label != q.answer_label]
    answer = name(q.answer_label)
    if not any(answer in other for other in others) and not all(any(o in s for s in titles) for o in others):
        found += [
            f"the answer {answer!r} in the title {s[:80]!r}"
            for s in titles
            if answer in s and not any(o in s for o in others)  # '(b)+(d)' names two: no verdict
        ]
    return found


def folds(at: AppTest) -> dict[str, set[str]]:
    """Each closed expander ui.question.folded drew (`<key>__folds_<part>`) → the keyed charts and
    tables in it."""
    out: dict[str, set[str]] = {}
    for node in _blocks(at._tree):
        proto_id = getattr(getattr(node, "proto", None), "id", "") or ""
        if "__folds_" in proto_id:
            out[proto_id.split("-", 2)[-1]] = {
                str(el.key)
                for el in _blocks(node)
                if getattr(el, "type", None) in ("bidi_component", "arrow_data_frame", "dataframe") and el.key
            }
    return out


def keyed(at: AppTest) -> set[str]:
    """The keys of the page's charts and tables."""
    return {
        str(el.key)
        for el in _blocks(at._tree)
        if getattr(el, "type", None) in ("bidi_component", "arrow_data_frame", "dataframe") and el.key
    }


CASES = [(c, lang) for c in CHAPTERS for lang in LANGS]


@pytest.mark.parametrize(("chapter", "lang"), CASES, ids=[f"{c.key}-{lang}" for c, lang in CASES])
def test_no_answer_before_reveal(chapter, lang):
    at = open_at(chapter.path, lang)
    assert not errors(at), errors(at)
    keys = set(asking(at))
    if not keys:
        pytest.skip(f"{chapter.key} asks no question")
    titles, above, below = read(at, keys)
    folded = folds(at)
    before = {q.key: q for q in asked(at)}
    assert all(folded.values()), f"a fold with no chart or table: {folded}"

    for key in sorted(keys):
        at.button(key=f"{key}__skip").click().run()
        assert not errors(at), errors(at)
    _, above_after, below_after = read(at, set())  # the boxes too: the explanation is in them
    after = above_after + below_after
    questions = asked(at)
    # Every question is answered now, those measured on Reveal too; one answered before is the same.
    assert {q.key for q in questions} == keys
    assert all(before[q.key].explanation == q.explanation for q in questions if q.key in before)
    # Nothing on the page before Reveal stated the answers revealed now.
    found = [f"{q.key}: {leak}" for q in questions for leak in leaks(q, lang, above, below, titles)]
    assert not found, f"{chapter.key} ({lang}) answers before Reveal:\n" + "\n".join(found[:10])
    assert not {k for k in keys_on_page(at) if "__waits_" in k}, "a placeholder is still there after Reveal"
    assert not folds(at), "a chart is still folded after Reveal"
    assert set(after) - set(above + below), "nothing appeared after Reveal"
    assert set().union(*folded.values()) <= keyed(at), "a folded chart or table is gone after Reveal"
    for q in questions:
        assert any(q.explanation.strip() in text for text in after), f"{q.key}: no explanation after Reveal"
        for n in answer_numbers(q):
            assert any(has_number(text, n) for text in after), (q.key, n)


def test_the_check_catches_a_leak():
    """Not blind: a planted number, sentence, statement or title that answers is found; the
    question's own words are not."""
    q = Question(
        key="demo_q",
        prompt="Move every position by c = 1,000. Does the score change?",
        options=("no", "yes"),
        labels=("no, not at all", "yes, a lot"),
        answer="no",
        explanation="Measured: the largest change is **1.0e-14**, float64 rounding. The extra angle cancels.",
        facts={"change": 1.0e-14},
    )
    assert answer_numbers(q) == {"1.0e-14"}  # 1,000 is in the prompt: not an answer
    clean = ["Move every position by c = 1,000 and compare.", "Largest spread: **8.9e-16**."]
    assert leaks(q, "en", [], clean, ["Numbers"]) == []
    assert leaks(q, "en", [], ["Largest change after moving by c = 1,000: **1.0e-14**."], [])
    assert leaks(q, "en", ["Measured: the largest change is **1.0e-14**, float64 rounding."], [], [])
    assert leaks(q, "en", [], [], ["Why the answer is no, not at all"])
    assert leaks(q, "en", [t("classroom.answer", "en", answer="no, not at all")], [], [])
    assert not leaks(q, "en", [], ["Largest change: **11.0e-14**"], [])  # a whole number only
    assert not leaks(q, "en", [], [], ["Compare no, not at all with yes, a lot"])  # every option named
    assert not leaks(q, "en", ["Given: **1.0e-14**."], [], [])  # a number above the question is given
