"""Every chapter in ui.chapters.CHAPTERS, run through the app's frame under AppTest (no browser).

Each page must run with no exception and no st.error on the sentences a learner really types:
the default, nothing, 300 tokens, Korean + emoji + Arabic + combining marks, text that looks like
HTML / Markdown / LaTeX, and the extreme seeds. Pages that read the shared sentence must say so
when there is none (the friendly st.info) and when they cut it (the "draws the first" notice), must
show the learner's tokens, and must never let typed text become markup.

The sidebar's sentence and seed must survive every page switch, be mirrored in the query string
and be restored from it. The list of pages is CHAPTERS itself: a chapter added tomorrow is tested
without touching this file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from encoders.text import MAX_CHARS, MAX_TOKENS
from tests.helpers import APP, TIMEOUT, errors, figures, open_page
from ui.chapters import CHAPTERS
from ui.sidebar import DEFAULT_SENTENCE, MAX_SEED

# Figures are what these page runs test: each is checked against plotly's own build (tests/conftest.py).
pytestmark = pytest.mark.check_figures

ROOT = Path(__file__).resolve().parents[1]
LONG = " ".join(f"w{k}" for k in range(300))  # 300 tokens: more than any page draws
UNICODE = (
    "고양이가 매트 위에 앉았다. 😀 👩‍💻 🇰🇷 مرحبا بالعالم "  # Hangul, emoji (ZWJ, flag), RTL Arabic
    "cafe\u0301 n\u0303o Z\u0351\u0322a\u0308lgo"  # combining marks on Latin letters
)
MARKUP = "<b>x</b> $$ \\frac{ ** [a](javascript:alert(1)) `"
NO_TEXT = "There is no text to work on yet"
CUT = re.compile(r"Your text has ([\d,]+) tokens; this page draws the first (\d+)\.")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.S)


def reads_sentence(chapter) -> bool:
    """Does the page use the shared sentence? (A page of pure mathematics may not.)"""
    src = (ROOT / chapter.path).read_text(encoding="utf-8")
    return re.search(r"sentence_tokens\(|session_state(\.sentence|\[.sentence.\])", src) is not None


def texts(at: AppTest) -> list[str]:
    """Every piece of Markdown-rendered text on the page (st.markdown, captions, alerts, titles…)."""
    out: list[str] = []
    for kind in ("markdown", "caption", "info", "warning", "success", "error", "title", "header", "subheader", "latex"):
        out += [str(e.value) for e in getattr(at, kind)]
    return out


def token_labels(at: AppTest) -> list[str]:
    """Tick labels of every axis and every customdata string: where figures show typed tokens."""
    out: list[str] = []
    for f in figures(at):
        for name, axis in f.get("layout", {}).items():
            if re.fullmatch(r"[xy]axis\d*", name) and isinstance(axis, dict):
                out += [str(t) for t in axis.get("ticktext", []) or []]
        for trace in f.get("data", []):
            stack = [trace.get("customdata")]
            while stack:
                v = stack.pop()
                if isinstance(v, list):
                    stack += v
                elif isinstance(v, str):
                    out.append(v)
    return out


def shows(at: AppTest, token: str) -> bool:
    """Is `token` shown to the learner as a token: a figure's tick label or hover label ("3 · cat"),
    or a Markdown code span (ui.common.inline_tokens)? Prose that merely contains the letters
    ("category") does not count. Long texts get thinned tick labels, but position 0 always has
    one: ask for a sentence's first token."""
    return any(label == token or label.endswith(f" · {token}") for label in token_labels(at)) or any(
        f"`{token}`" in t for t in texts(at)
    )


def notices(at: AppTest) -> tuple[list[str], list[str]]:
    return [i.value for i in at.info], [w.value for w in at.warning]


def use(at: AppTest, sentence: str | None = None, seed: int | None = None) -> AppTest:
    """Change the sidebar as a learner would (the widgets, not session state) and rerun."""
    if sentence is not None and at.text_area(key="sentence").value != sentence:
        at.text_area(key="sentence").input(sentence).run()
    if seed is not None and at.number_input(key="seed").value != seed:
        at.number_input(key="seed").set_value(seed).run()
    return at


def check_ran(at: AppTest, chapter) -> None:
    assert not errors(at), errors(at)
    assert chapter.title in [t.value for t in at.title], (
        f"{chapter.path} did not run (titles: {[t.value for t in at.title]})"
    )


@pytest.fixture(scope="module")
def check_at_module_setup() -> str | None:
    return os.environ.get("PE_ATLAS_CHECK_FIGURES")


def test_every_page_run_here_checks_its_figures(check_at_module_setup):
    # The module's mark turns the check on before its module fixtures run (chapter_app's first runs).
    assert (check_at_module_setup, os.environ.get("PE_ATLAS_CHECK_FIGURES")) == ("1", "1")


@pytest.fixture(scope="module", params=CHAPTERS, ids=[c.key for c in CHAPTERS])
def chapter_app(request):
    """One AppTest per chapter, opened through the frame with the default sentence and seed.
    The cases below reuse it, each first setting the sidebar to what it needs."""
    chapter = request.param
    at = open_page(chapter.path)
    return chapter, at


def test_default_sentence(chapter_app):
    chapter, at = chapter_app
    use(at, DEFAULT_SENTENCE, 0)
    check_ran(at, chapter)
    info, warning = notices(at)
    assert not any(NO_TEXT in i for i in info), info
    assert not any(CUT.search(w) for w in warning), warning  # 14 tokens: nothing is cut
    if reads_sentence(chapter):
        assert figures(at), "the page draws no figure"
        assert shows(at, "The"), "the learner's first token appears nowhere on the page"


def test_empty_sentence(chapter_app):
    chapter, at = chapter_app
    use(at, "")
    check_ran(at, chapter)
    if reads_sentence(chapter):
        info, _ = notices(at)
        assert any(NO_TEXT in i for i in info), f"no friendly note for an empty sentence: {info}"
    use(at, DEFAULT_SENTENCE)  # and back: the page recovers
    check_ran(at, chapter)
    assert not any(NO_TEXT in i for i in notices(at)[0])


def test_300_tokens_are_cut_with_a_notice(chapter_app):
    chapter, at = chapter_app
    use(at, LONG)
    check_ran(at, chapter)
    if reads_sentence(chapter):
        cuts = [m for w in notices(at)[1] if (m := CUT.search(w))]
        assert cuts, f"no 'draws the first' notice for 300 tokens: {notices(at)[1]}"
        found, drawn = int(cuts[0].group(1).replace(",", "")), int(cuts[0].group(2))
        assert found == 300 and 1 <= drawn <= MAX_TOKENS
        assert not shows(at, "w299"), "a token past the cut was drawn"


def test_at_most_256_tokens_are_not_cut(chapter_app):
    chapter, at = chapter_app
    use(at, " ".join(f"w{k}" for k in range(MAX_TOKENS)))
    check_ran(at, chapter)
    # A page may draw fewer than 256 (and say so); the shared limit itself must not cut.
    for w in notices(at)[1]:
        if m := CUT.search(w):
            assert int(m.group(2)) < MAX_TOKENS, w


def test_korean_emoji_arabic_combining_marks(chapter_app):
    chapter, at = chapter_app
    use(at, UNICODE)
    check_ran(at, chapter)
    if reads_sentence(chapter):
        assert shows(at, "고양이가"), "the learner's first token appears nowhere on the page"


def test_markup_is_shown_as_text(chapter_app):
    chapter, at = chapter_app
    use(at, MARKUP)
    check_ran(at, chapter)
    for t in texts(at):
        outside = CODE_SPAN.sub("", t)  # inside a code span nothing is interpreted
        for bad in ("javascript:", "<b>x", "[a](", "\\frac{ **"):
            assert bad not in outside, f"typed text rendered as Markdown/HTML/LaTeX: {t!r}"
    for label in token_labels(at):  # plotly renders labels as HTML-ish text: figures escape them
        bare = label.replace("<br>", "")  # a figure's own line breaks (never typed text, which is escaped)
        assert "<" not in bare and ">" not in bare, f"unescaped label {label!r}"
    if reads_sentence(chapter):  # the first token, "<", is shown escaped (figures) or in a code span
        assert shows(at, "&lt;") or any("`<`" in t for t in texts(at)), "the typed text appears nowhere"


@pytest.mark.parametrize("seed", [0, MAX_SEED])
def test_extreme_seeds(chapter_app, seed):
    chapter, at = chapter_app
    use(at, DEFAULT_SENTENCE, seed)
    check_ran(at, chapter)
    assert at.number_input(key="seed").value == seed
    assert at.query_params.get("seed") == str(seed)


def test_sidebar_survives_switching_to_the_next_page(chapter_app):
    chapter, at = chapter_app
    sentence, seed = "Order travels with the learner", 42
    use(at, sentence, seed)
    target = CHAPTERS[(CHAPTERS.index(chapter) + 1) % len(CHAPTERS)]
    at.switch_page(target.path).run()
    try:
        check_ran(at, target)
        assert at.text_area(key="sentence").value == sentence
        assert at.number_input(key="seed").value == seed
        assert (at.query_params.get("s"), at.query_params.get("seed")) == (sentence, str(seed))
    finally:
        at.switch_page(chapter.path).run()  # leave the shared AppTest on its own chapter
    check_ran(at, chapter)
    assert at.text_area(key="sentence").value == sentence


def test_url_restores_sentence_and_seed_on_every_page():
    """A shared link (?s=…&seed=…) restores both, and they stay through a tour of every page."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["s"] = "hello world"
    at.query_params["seed"] = "7"
    at.run()
    problems = []
    for chapter in CHAPTERS:
        at.switch_page(chapter.path).run()
        got = (
            at.text_area(key="sentence").value,
            at.number_input(key="seed").value,
            at.query_params.get("s"),
            at.query_params.get("seed"),
        )
        if got != ("hello world", 7, "hello world", "7"):
            problems.append(f"{chapter.key}: sentence, seed, ?s, ?seed = {got}")
        if errors(at):
            problems.append(f"{chapter.key}: {errors(at)}")
        elif reads_sentence(chapter) and not shows(at, "hello"):
            problems.append(f"{chapter.key}: the restored sentence appears nowhere on the page")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize(
    "params, sentence, seed",
    [
        ({"seed": "abc"}, DEFAULT_SENTENCE, 0),
        ({"seed": "-5"}, DEFAULT_SENTENCE, 0),
        ({"seed": "1" * 40}, DEFAULT_SENTENCE, MAX_SEED),  # read as its first 12 digits, clamped
        ({"seed": "123456"}, DEFAULT_SENTENCE, MAX_SEED),
        ({"s": "x" * (MAX_CHARS + 5000)}, "x" * MAX_CHARS, 0),
    ],
    ids=["seed-not-a-number", "seed-negative", "seed-huge", "seed-too-big", "sentence-too-long"],
)
def test_hostile_url_is_bounded(params, sentence, seed):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not errors(at), errors(at)
    assert at.text_area(key="sentence").value == sentence
    assert at.number_input(key="seed").value == seed
