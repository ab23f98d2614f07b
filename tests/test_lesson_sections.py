"""Every lesson step names a section of its page (issue 43: lessons that land), and a timed lesson
adds up to its class.

A step's `section` is the name of a `page.section` function on its chapter's page; ui/section.py
gives that function's box the key section-<name>, and the step's page scrolls to it
(tests/e2e/test_lesson_landing_browser.py watches it land). Read from the page's source, as
tests/test_sections.py reads the declarations, so a renamed section fails here, not in a class.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from explain.i18n import LANGS, t
from explain.lessons import BY_KEY, LESSONS
from ui.chapters import BY_KEY as CHAPTERS

ROOT = Path(__file__).resolve().parents[1]


def page_sections(path: str) -> dict[str, set[str]]:
    """A page's declared sections: function name → the keys it declares it owns."""
    tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
    out: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for deco in node.decorator_list:
            if (
                isinstance(deco, ast.Call)
                and isinstance(deco.func, ast.Attribute)
                and deco.func.attr == "section"
                and isinstance(deco.func.value, ast.Name)
                and deco.func.value.id == "page"
            ):
                owns = next((kw.value for kw in deco.keywords if kw.arg == "owns"), None)
                keys = {str(e.value) for e in getattr(owns, "elts", []) if isinstance(e, ast.Constant)}
                out[node.name] = keys
    return out


STEPS = [(lesson.key, k, step) for lesson in LESSONS for k, step in enumerate(lesson.steps)]


@pytest.mark.parametrize(("lesson", "k", "step"), STEPS, ids=[f"{key}-{k + 1}" for key, k, _ in STEPS])
def test_every_step_names_a_section_of_its_page(lesson, k, step):
    sections = page_sections(CHAPTERS[step.chapter].path)
    assert step.section in sections, (lesson, k + 1, step.section, sorted(sections))


def test_page_sections_reads_a_known_page():
    # The reader finds what it should (a reader that found nothing would let every step pass).
    rope = page_sections(CHAPTERS["rope"].path)
    assert {"circles_part", "identity_part", "decay_section"} <= set(rope)
    assert "rope_move" in rope["circles_part"]


def test_the_lecture_is_fifty_minutes_and_every_lesson_says_what_next():
    lecture = BY_KEY["lecture"]
    assert lecture.minutes == 50 and all(step.minutes for step in lecture.steps)
    # It reaches the real-text result (trained models reading text at 8× their training length).
    assert ("real-text", "lengths_section") in {(s.chapter, s.section) for s in lecture.steps}
    for lesson in LESSONS:
        for lang in LANGS:
            assert lesson.what_next(lang).strip(), (lesson.key, lang)
        assert lesson.minutes in (None, sum(s.minutes or 0 for s in lesson.steps))
    assert t("classroom.lessons.lecture.title", "en") != t("classroom.lessons.lecture.title", "ko")
