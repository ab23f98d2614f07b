"""The "Start here" chapter (explain/chapters/start.py, pages/start/start.py, ui/path.py): the map of the
field agrees with the encoder classes it is drawn from, every link names a declared chapter, the path's
chapters and sections exist in both languages, every chapter has its next, and the page renders in
English and Korean."""

from __future__ import annotations

import re
from typing import get_args

import pytest
import torch
from streamlit.testing.v1 import AppTest

from encoders import REGISTRY, build
from encoders.base import Kind
from explain.chapters import real_text_study as study
from explain.chapters import start as ch
from explain.chapters import start_figures as ch_figures
from explain.i18n import LANGS, catalogue, t
from explain.prose import sections
from tests.helpers import APP, TIMEOUT, chart, errors, open_page
from ui.chapters import BY_KEY, CHAPTERS, title
from ui.path import nav_title

CHAPTERS_ARG = ch.declared(CHAPTERS)
LINK = re.compile(r"\]\(\./([\w-]+)\?lang=(\w+)\)")


# ------------------------------------------------------------------------------- the taxonomy


def test_every_kind_has_a_column_and_every_method_one_place():
    assert set(ch.KIND_ORDER) == set(get_args(Kind)) and len(ch.KIND_ORDER) == len(get_args(Kind))
    groups = ch.by_kind()
    placed = [name for names in groups.values() for name in names]
    assert sorted(placed) == sorted(REGISTRY)  # each registered method exactly once
    for kind, names in groups.items():
        assert all(REGISTRY[n].kind == kind for n in names)


@pytest.mark.parametrize("lang", LANGS)
def test_the_figure_draws_each_column_from_the_registry(lang):
    """Each method is a note in its kind's column (x within the column's band), in registry order;
    each column has its header, with the catalogue's line breaks kept and nothing else unescaped."""
    fig = ch.taxonomy_figure(lang).to_plotly_json()
    assert not fig["data"]  # a diagram: notes and shapes only, no numbers to tabulate
    notes = fig["layout"]["annotations"]
    for col, kind in enumerate(ch.KIND_ORDER):
        shown = [
            a["text"].split("</span> ", 1)[1]
            for a in notes
            if "</span> " in a.get("text", "") and abs(a["x"] - col) < ch_figures.COLUMN_HALF
        ]
        assert shown == [ch.methods.short(n, lang) for n in ch.by_kind()[kind]]
    headers = [a["text"] for a in notes if a.get("text", "").startswith("<b>")]
    assert len(headers) == len(ch.KIND_ORDER) and not any("&lt;br&gt;" in h for h in headers)
    assert all("<br>" in h for h in headers)


# ------------------------------------------------------------------------- the property table


def _positions_only(name: str, shift: int) -> torch.Tensor:
    """The position terms (or, for an input encoding, the encoded input) of a small layer at
    positions shift … shift + 5, on fixed q, k and x."""
    enc = build(name, 16, 2, seed=3)
    g = torch.Generator().manual_seed(0)
    q, k = torch.randn(1, 2, 6, 8, generator=g), torch.randn(1, 2, 6, 8, generator=g)  # (b, h, n, d)
    x = torch.randn(1, 6, 16, generator=g)  # (b, n, D)
    pos = torch.arange(6) + shift
    with torch.no_grad():
        if REGISTRY[name].kind == "input":
            return enc.encode_input(x, pos)
        terms = enc.logit_terms(q, k, pos, pos, causal=True)
        return torch.stack([terms.terms[n] for n in REGISTRY[name].position_terms()] or [terms.total()])


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_the_relative_column_is_what_the_encoder_does(name):
    """ "yes": moving every position by 7 leaves the position terms unchanged (run, not read off a
    flag); "no": it changes what the layer gets; "partly" only where a relative sign exists."""
    answer = ch.relative(name)
    a, b = _positions_only(name, 0), _positions_only(name, 7)
    if answer == "yes":
        assert torch.allclose(a, b, atol=1e-5), name
    elif answer == "no":
        assert REGISTRY[name].relative_sign is None and not torch.allclose(a, b, atol=1e-5), name
    elif answer == "partly":
        assert REGISTRY[name].relative_sign is not None and not REGISTRY[name].shift_invariant
    else:
        assert REGISTRY[name].kind == "none" and answer == "none"


def test_parameter_counts_are_what_the_size_gives():
    """Pinned against each method's own formula at the stated size (768 wide, 12 heads, 512 trained)."""
    d, h, n = ch.PARAM_D_MODEL, ch.PARAM_HEADS, ch.PARAM_TRAINED
    assert ch.parameters("learned") == n * d  # one row of d numbers per trained position
    assert ch.parameters("t5") == 32 * h  # one scalar per bucket per head (32 buckets)
    for name in ("none", "sinusoidal", "rope", "alibi", "rope-pi", "rope-yarn", "xpos"):
        assert ch.parameters(name) == 0, name
    assert all(ch.parameters(name) >= 0 for name in REGISTRY)


@pytest.mark.parametrize("lang", LANGS)
def test_the_table_has_every_method_and_its_links_resolve(lang):
    table = ch.property_table(CHAPTERS_ARG, lang)
    body = [line for line in table.splitlines()[2:] if line.startswith("|")]
    assert len(body) == len(REGISTRY)
    for key, link_lang in LINK.findall(table):
        assert key in BY_KEY and link_lang == lang
    linked = {name for name in REGISTRY if ch.chapter_of(name, CHAPTERS_ARG)}
    assert len(LINK.findall(table)) == len(linked)
    for name in ("sinusoidal", "learned", "t5", "alibi", "rope", "cope", "shaw", "deberta", "transformer-xl"):
        assert ch.chapter_of(name, CHAPTERS_ARG) == name  # the method's own chapter


def test_measured_numbers_are_the_lab_evaluation():
    st = study.load()
    assert st is not None, "the study ships with the atlas"
    for name in ("rope", "alibi", "t5"):
        m = ch.measured(name)
        assert m is not None and m.change is not None
        # The change over seeds, by hand: each seed's mean at the top length minus at 128 bytes.
        per_seed = [
            sum(r.ev["long"][str(st.top)]) / len(r.ev["long"][str(st.top)])
            - sum(r.ev["long"][str(st.train_len)]) / len(r.ev["long"][str(st.train_len)])
            for r in st.runs[name].values()
        ]
        assert m.change.mean == pytest.approx(sum(per_seed) / len(per_seed))
        assert m.change.n == len(per_seed) and (m.trained, m.long) == (st.train_len, st.top)
    assert ch.measured("learned").change is None  # type: ignore[union-attr]  # no rows past the trained length
    assert ch.measured("shaw") is None  # not trained here
    assert ch.measured("rope-pi").zero_shot and not ch.measured("rope").zero_shot  # type: ignore[union-attr]
    assert t("start.measured.zero_shot", "en") in ch.property_table(CHAPTERS_ARG, "en")
    sentence = ch.rope_numbers("en")
    assert sentence is not None
    assert f"{ch.measured('rope').change.mean:+.2f}" in sentence  # type: ignore[union-attr]


# ----------------------------------------------------------------------------- who uses what


@pytest.mark.parametrize("lang", LANGS)
def test_models_name_registered_methods_and_cite_sources(lang):
    table = ch.models_table(CHAPTERS_ARG, lang)
    assert len([line for line in table.splitlines()[2:] if line.startswith("|")]) == len(ch.MODELS)
    for model in ch.MODELS:
        assert model.method and all(name in REGISTRY for name in model.method), model.key
        assert model.sources and all(s.url.startswith("https://") for s in model.sources), model.key
        assert t(f"start.models.{model.key}", lang, **model.facts)
    for key, _ in LINK.findall(table):
        assert key in BY_KEY


# ------------------------------------------------------------------------------------ the path


def test_the_path_names_declared_chapters_and_their_sections():
    assert len(set(ch.CORE)) == len(ch.CORE) and ch.CHAPTER.key not in ch.CORE
    for step in ch.PATH:
        assert step.chapter in BY_KEY
        for lang in LANGS:
            assert all(h in catalogue(lang) for h in step.headings), (step.chapter, lang)
            assert all(p in sections(step.chapter, lang) for p in step.prose), (step.chapter, lang)
        assert step.minutes() >= ch.TRY_MINUTES * len(step.headings) and step.words() > 0
    for steps in ch.QUESTIONS.values():
        assert steps and all(c in ch.CORE for c in steps)
        assert list(steps) == sorted(steps, key=ch.CORE.index)  # in the path's order
    assert {c for steps in ch.QUESTIONS.values() for c in steps} == set(ch.CORE)
    assert ch.path_minutes() == sum(step.minutes() for step in ch.PATH)
    for q in ch.QUESTIONS:
        assert all(f"start.question.{q}" in catalogue(lang) for lang in LANGS)


def test_minutes_follow_the_words():
    step = ch.step("rope")
    words = sum(len(sections("rope", "en")[p].split()) for p in step.prose)
    assert abs(step.words() - words) <= 0.2 * words  # the same text, counted a little differently
    assert step.minutes() == -(-(step.words() + ch.READING_WPM * ch.TRY_MINUTES * len(step.headings)) // ch.READING_WPM)


def test_every_chapter_has_its_next():
    order = tuple(c.key for c in CHAPTERS)
    seen, key = [], ch.CHAPTER.key
    while True:  # the core path, followed link by link from the start page
        key = ch.next_chapters(key, order)[0]
        if key is None:
            break
        seen.append(key)
    assert tuple(seen) == ch.CORE
    rest = [k for k in order if k != ch.CHAPTER.key]
    for k, key in enumerate(rest):
        core_next, nav_next = ch.next_chapters(key, order)
        assert nav_next == (rest[k + 1] if k + 1 < len(rest) else None)
        assert core_next is None or core_next in BY_KEY
    assert CHAPTERS[0].key == ch.CHAPTER.key  # the first page a learner opens
    for c in CHAPTERS:
        assert nav_title(c).endswith(" ★") == (c.key in ch.CORE)


# ------------------------------------------------------------------------------------ the page


@pytest.mark.parametrize("lang", LANGS)
def test_the_page_renders(lang):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()  # the default page: Start here
    assert not errors(at)
    assert at.title[0].value == t("chapters.start.title", lang)
    assert len(chart(at, "start_taxonomy")["layout"]["annotations"]) > len(ch.KIND_ORDER)
    markdown = "\n".join(m.value for m in at.markdown)
    assert ch.property_table(CHAPTERS_ARG, lang) in markdown
    assert ch.models_table(CHAPTERS_ARG, lang) in markdown
    first = next(iter(ch.QUESTIONS))
    assert t("start.path.total", lang, minutes=ch.question_minutes(first)) in markdown
    links = list(at.get("page_link"))
    assert {el.proto.page for el in links} >= set(ch.CORE)  # every chapter of the path is one click away
    assert any(t("start.next.start", lang, title=title(ch.CORE[0], lang)) in el.proto.label for el in links)
    for question, steps in ch.QUESTIONS.items():  # each question shows its own path
        at.radio(key="start_q").set_value(question).run()
        assert not errors(at)
        shown = [el.proto.page for el in at.get("page_link")]
        assert all(key in shown for key in steps)
        assert t("start.path.total", lang, minutes=ch.question_minutes(question)) in [m.value for m in at.markdown]


def test_a_chapter_ends_with_its_next():
    at = open_page(BY_KEY["trouble"].path)
    assert not errors(at)
    labels = [el.proto.label for el in at.get("page_link")]
    assert t("start.next.core", "en", title=BY_KEY["rope"].title) in labels
    assert t("start.next.nav", "en", title=CHAPTERS[[c.key for c in CHAPTERS].index("trouble") + 1].title) in labels


@pytest.mark.parametrize("lang", LANGS)
def test_the_question_is_answered_by_the_table(lang):
    """The answer is the one option whose position terms survive a shift unchanged and whose encoder
    has no trainable number, both checked here by running and counting, not by the page's helpers."""
    q = ch.quiz(lang)
    free = [
        name
        for name in q.options
        if torch.allclose(_positions_only(name, 0), _positions_only(name, 7), atol=1e-5)
        and REGISTRY[name].relative_sign is not None
        and sum(p.numel() for p in build(name, ch.PARAM_D_MODEL, ch.PARAM_HEADS).parameters()) == 0
    ]
    assert free == [q.answer]
    assert f"**{q.facts['params']}**" in q.explanation and q.facts["params"] == 0
    for name in q.options:
        if name != q.answer:
            assert f"{ch.parameters(name):,}" in q.explanation
