"""Chapter: Start here — the questions a learner comes with, each a timed path through the atlas
(issue 43), and a map of the field: where position enters, the methods side by side, who uses what,
and why RoPE won (issue 41).

A page only shows: one call into explain/chapters/start.py per part → figures and tables → st.*.
The path, the minutes, the table's facts and the sentences that state numbers are computed there.
"""

import streamlit as st

from explain.chapters import start as ch
from ui.cache import cached
from ui.chapters import BY_KEY, CHAPTERS
from ui.common import plot
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask_alone, revealed
from ui.section import open_chapter
from ui.url_state import Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")
lang = current()
# Shared by every learner, bounded where each function is defined (explain/bounds.py).
property_table = cached(ch.property_table)
models_table = cached(ch.models_table)
rope_numbers = cached(ch.rope_numbers)
quiz = cached(ch.quiz)
size_note = cached(ch.size_note)
chapters = ch.declared(CHAPTERS)


@page.section(heading="start.heading.path", owns=("start_q",))
def path_section() -> None:
    """Owns the question picker: it changes only the path shown under it."""
    QUESTION = Param.choice("start_q", tuple(ch.QUESTIONS), default=next(iter(ch.QUESTIONS)))
    question = QUESTION.widget(
        st.radio,
        t("start.path.pick"),
        QUESTION.options,
        horizontal=True,
        format_func=option_names(QUESTION.options, lambda q: t(f"start.question.{q}")),
    )
    with st.container(border=True):
        for key in ch.QUESTIONS[question]:
            chapter, step = BY_KEY[key], ch.step(key)
            st.page_link(chapter.path, label=chapter.title, icon=chapter.icon)
            sections = " · ".join(t(h) for h in step.headings)
            st.caption(t("start.path.step", minutes=step.minutes(), sections=sections))
        st.markdown(t("start.path.total", minutes=ch.question_minutes(question)))
    st.markdown(t("start.path.core", count=len(ch.CORE), minutes=ch.path_minutes()))
    row = st.container(horizontal=True, gap="small")
    for key in ch.CORE:
        row.page_link(BY_KEY[key].path, label=BY_KEY[key].title, icon=BY_KEY[key].icon)
    st.caption(t("start.path.estimate", wpm=ch.READING_WPM, minutes=ch.TRY_MINUTES))


path_section()

st.header(t("start.heading.map"))
page.prose("map")
plot(ch.taxonomy_figure(lang), "start_taxonomy")

st.header(t("start.heading.table"))
page.prose("table")
st.markdown(property_table(chapters, lang))
st.caption(size_note(lang))
quiz_q = quiz(lang)
ask_alone(quiz_q, whole_page=True)  # "Why RoPE won" below answers it: Reveal reruns the page

st.header(t("start.heading.models"))
page.prose("models")
st.markdown(models_table(chapters, lang))

st.header(t("start.heading.why_rope" if revealed(quiz_q) else "start.heading.why_rope_waiting"))
if answer_shown(quiz_q, "why_rope"):
    page.prose("why-rope")
    measured = rope_numbers(lang)
    if measured is not None:
        st.markdown(measured)
