"""Every lesson step, walked in Korean: each word an instruction quotes (“…”, ‘…’) and each control or
button it names (*…*) is on the page the step opens, so a Korean learner is never told to type
“Well,” in front of “I like CV” on a page that shows “나는 CV를 좋아해”.

The banner that shows the instruction itself is left out of the page text, or every quote would be
found there."""

from __future__ import annotations

import re

import pytest
from streamlit.testing.v1 import AppTest

from explain.lessons import LESSONS, ByLang
from tests.helpers import APP, TIMEOUT, errors
from tests.i18n_scan import visible_strings

_QUOTED = re.compile(r"“([^”]+)”|‘([^’]+)’")
_CONTROL = re.compile(r"(?<!\*)\*([^*\s][^*]*?)\*(?!\*)")


def named(instruction: str) -> list[str]:
    """The quoted words and the control names of one instruction."""
    return [a or b for a, b in _QUOTED.findall(instruction)] + _CONTROL.findall(instruction)


def page_text(at: AppTest, instruction: str) -> str:
    """All the page shows (sidebar, labels, options, figure words, what the text boxes hold), without
    the banner that repeats the instruction."""
    shown = [text for _, text in visible_strings(at) if instruction not in text]
    shown += [str(w.value) for kind in ("text_area", "text_input") for w in getattr(at, kind)]
    return "\n".join(shown)


def missing(at: AppTest, instruction: str) -> list[str]:
    text = page_text(at, instruction)
    return [word for word in named(instruction) if word not in text]


def test_named_finds_quotes_and_controls_but_not_bold():
    assert named("“나는 CV를 좋아해” 앞에 “음,”을 붙였습니다. **같은** 단어, *다시 섞기*를 ‘a’") == [
        "나는 CV를 좋아해",
        "음,",
        "a",
        "다시 섞기",
    ]


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_every_korean_instruction_names_what_the_page_shows(lesson):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = "ko"
    at.run()
    at.selectbox(key="lesson").set_value(lesson.key).run()
    checked = 0
    for k, step in enumerate(lesson.steps):
        if k:
            at.button(key="lesson_next").click().run()
        assert not errors(at), (lesson.key, k, errors(at))
        instruction = lesson.instruction(k, "ko")
        assert [i.value for i in at.info if instruction in i.value], (lesson.key, k, "no banner")
        assert not missing(at, instruction), (lesson.key, k + 1, missing(at, instruction))
        checked += len(named(instruction))
        # The step set the Korean values, not the English ones.
        if isinstance(step.sentence, ByLang):
            assert at.sidebar.text_area(key="sentence").value == step.sentence.get("ko")
        for key, value in step.controls.items():
            if isinstance(value, ByLang):
                assert at.session_state[key] == value.get("ko"), (lesson.key, k, key)
        # The check is not blind: the English instruction's own words are not on a Korean page.
        english = [w for w in named(lesson.instruction(k, "en")) if re.search("[A-Za-z]{3}", w)]
        if english and isinstance(step.controls.get("trouble_prefix"), ByLang):
            assert missing(at, lesson.instruction(k, "en")), (lesson.key, k)
            checked += 1
    if lesson.key in ("why-relative", "what-cope-counts"):
        assert checked >= 3  # these lessons quote words and name controls; the walk checked them
