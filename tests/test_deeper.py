"""Going deeper (issue 43, item 6: core first, depth on demand): a chapter's expert sections are
declared `page.section(..., deeper=True)` (ui/section.py) and drawn in the chapter's one fold, a
closed expander at the end of the page, which a lesson step landing on one of them opens.

The source check reads every page as tests/test_sections.py does: a deeper section is called at the
page's top level (a fold inside another section's fragment would be redrawn with it, not at the end),
and no core section is called after the first deeper one.
"""

from __future__ import annotations

import ast

import pytest
from streamlit.testing.v1 import AppTest

from explain.i18n import t
from explain.lessons import LESSONS
from tests.helpers import ROOT, TIMEOUT
from ui.chapters import CHAPTERS


def _section_decorator(fn: ast.FunctionDef) -> ast.Call | None:
    for deco in fn.decorator_list:
        if isinstance(deco, ast.Call) and ast.unparse(deco.func) == "page.section":
            return deco
    return None


def page_sections(path: str) -> tuple[dict[str, bool], list[str], set[str]]:
    """A page's sections (name → declared deeper), the sections called at its top level in order,
    and those called anywhere else (inside another function)."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    deeper: dict[str, bool] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and (deco := _section_decorator(node)) is not None:
            flag = next((k.value for k in deco.keywords if k.arg == "deeper"), None)
            deeper[node.name] = isinstance(flag, ast.Constant) and flag.value is True
    top: list[str] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.ClassDef):
            continue
        for n in ast.walk(stmt):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in deeper:
                top.append(n.func.id)
    inner = {
        n.func.id
        for stmt in tree.body
        if isinstance(stmt, ast.FunctionDef)
        for n in ast.walk(stmt)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in deeper
    }
    return deeper, top, inner


# What a page may still draw after its fold: the trained-model panel every chapter ends with.
AFTER_THE_FOLD = {"trained_panel"}


def after_the_fold(path: str, deeper: dict[str, bool]) -> list[str]:
    """The page's top-level statements after its first deeper section's call, other than deeper
    sections' calls and definitions and AFTER_THE_FOLD: each would be drawn below the fold."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    out, folded = [], False

    def called(stmt: ast.stmt) -> str | None:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and isinstance(stmt.value.func, ast.Name):
            return stmt.value.func.id
        return None

    for stmt in tree.body:
        name = called(stmt)
        if name is not None and deeper.get(name):
            folded = True
        elif (
            folded and not (isinstance(stmt, ast.FunctionDef) and deeper.get(stmt.name)) and name not in AFTER_THE_FOLD
        ):
            out.append(ast.unparse(stmt).splitlines()[0])
    return out


@pytest.mark.parametrize("path", [c.path for c in CHAPTERS])
def test_deeper_sections_come_last_at_the_top_level(path):
    deeper, top, inner = page_sections(path)
    folded = [name for name in top if deeper[name]]
    nested = sorted(name for name in inner if deeper[name])
    assert not nested, f"{path}: deeper sections called inside another section: {nested}"
    if folded:
        first = top.index(folded[0])
        after = [name for name in top[first:] if not deeper[name]]
        assert not after, f"{path}: core sections after the Going-deeper fold: {after}"
        assert not after_the_fold(path, deeper), f"{path}: drawn below the fold: {after_the_fold(path, deeper)}"


# The chapters whose expert material is folded (issue 43, item 6), and what: a change here is a
# decision about a chapter's core.
FOLDED = {
    "pages/absolute/trouble.py": ["untied_section"],  # TUPE and the Toeplitz test
    "pages/relative/shaw.py": ["value_section", "cost_section"],  # the value side; cost and implementation
    "pages/relative/transformer_xl.py": ["relshift_section", "layout_section"],  # the shift trick; layouts
    "pages/labs/attention_lab.py": ["kv_section"],  # dynamic NTK meets a KV cache
}


@pytest.mark.parametrize(("path", "names"), FOLDED.items())
def test_the_expert_sections_are_folded(path, names):
    deeper, top, _ = page_sections(path)
    assert [name for name in top if deeper[name]] == names


def test_the_reader_finds_declarations():
    # A reader that found nothing would let every page pass.
    deeper, top, inner = page_sections("pages/rotary/rope.py")
    assert "circles_part" in deeper and "rotation_part" in top and "circles_part" in inner


def _fold_page() -> None:
    import streamlit as st

    from ui.chapters import BY_KEY
    from ui.i18n import activate
    from ui.section import ChapterPage

    activate()
    page = ChapterPage(BY_KEY[st.session_state["chapter"]])

    @page.section()
    def core_section() -> None:
        st.markdown("core words")

    def deep() -> None:
        st.markdown("deep words one")

    deep.__name__ = st.session_state.get("deep_name", "first_deep")  # a lesson step's section's name
    first_deep = page.section(deeper=True)(deep)

    @page.section(deeper=True)
    def second_deep() -> None:
        st.markdown("deep words two")

    core_section()
    first_deep()
    second_deep()
    st.markdown("after the page")


def _run(chapter: str, **state) -> AppTest:
    at = AppTest.from_function(_fold_page, default_timeout=TIMEOUT)
    at.session_state["chapter"] = chapter
    for key, value in state.items():
        at.session_state[key] = value
    return at.run()


def _words(block) -> list[str]:
    return [m.value for m in block.markdown]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_deeper_sections_share_one_closed_fold_after_the_core(lang):
    at = _run("rope", lang=lang)
    assert not at.exception
    (fold,) = at.expander
    assert fold.label == t("common.deeper.title", lang) and fold.proto.expanded is False
    assert fold.label != t("common.deeper.title", "ko" if lang == "en" else "en")
    assert [c.value for c in fold.caption] == [t("common.deeper.caption", lang)]
    assert _words(fold) == ["deep words one", "deep words two"]
    words = _words(at.main)
    assert words.index("core words") < words.index("deep words one") < words.index("after the page")


# A real step of a real lesson: the page's first deeper section bears its section's name, on the
# step's chapter (the fold opens) or on another chapter, or under another name (it stays closed).
LESSON, K, STEP = next((lsn.key, k, s) for lsn in LESSONS for k, s in enumerate(lsn.steps) if s.section)
OTHER = next(c.key for c in CHAPTERS if c.key != STEP.chapter)


@pytest.mark.parametrize(
    ("chapter", "name", "opens"),
    [(STEP.chapter, STEP.section, True), (OTHER, STEP.section, False), (STEP.chapter, "first_deep", False)],
)
def test_a_lesson_step_landing_in_the_fold_opens_it(chapter, name, opens):
    at = _run(chapter, lesson=LESSON, lesson_step=K, deep_name=name)
    assert not at.exception
    (fold,) = at.expander
    assert fold.proto.expanded is opens
