"""The current lesson step, read from session state: what ui/lessons.py steps through and ui/section.py
asks (does the step land in this chapter's Going-deeper fold?). Apart from ui/lessons.py, which
imports ui/section.py for a section's anchor, so that the two do not import each other.
"""

from __future__ import annotations

import streamlit as st

from explain.lessons import BY_KEY as LESSON_BY_KEY
from explain.lessons import Lesson, Step

LESSON_KEY, STEP_KEY = "lesson", "lesson_step"  # session_state keys


def current_step() -> tuple[Lesson, int, Step] | None:
    lesson = LESSON_BY_KEY.get(st.session_state.get(LESSON_KEY) or "")
    if lesson is None:
        return None
    k = min(max(int(st.session_state.get(STEP_KEY, 0)), 0), len(lesson.steps) - 1)
    return lesson, k, lesson.steps[k]
