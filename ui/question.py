"""Predict, then reveal: the widget that shows an explain.question.Question.

The question arrives whole (options, labels, answer, explanation, all computed in explain/); this
module only draws it: a radio with nothing chosen, a Reveal button, then right / not quite and the
explanation. Nothing a user typed becomes HTML here: prompts, labels and explanations are catalogue
Markdown filled with computed values (typed tokens inside them are code spans).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

import streamlit as st

from explain.question import Prompt, Question
from ui.i18n import t
from ui.section import section


def revealed(q: Question | Prompt | None) -> bool:
    """Whether `q`'s answer has been revealed (or skipped); True when there is no question (nothing
    to wait for)."""
    return q is None or bool(st.session_state.get(f"{q.key}__revealed", False))


def answer_shown(q: Question | None, part: str) -> bool:
    """True when what answers `q` (a sentence, a metric, an expander titled with the answer) may be
    drawn: once the learner has revealed the answer, or chosen to skip the prediction. Otherwise it
    draws one placeholder line in its place (keyed `<q.key>__waits_<part>`, so a test can find it)
    and returns False.

    Reveal inside a section reruns that section's fragment only: call this in the section that asks
    `q` (or in a section nested in it), or the part would wait until the next full run."""
    if revealed(q):
        return True
    assert q is not None  # revealed(None) is True
    with st.container(key=f"{q.key}__waits_{part}"):
        st.caption(f":material/visibility_off: {t('classroom.after_reveal')}")
    return False


@contextmanager
def folded(q: Question | None, part: str) -> Iterator[None]:
    """Where a chart is itself the answer (the bars that fall from head to head, the curve that
    climbs from pair to pair): before Reveal it is drawn inside a closed expander (keyed
    `<q.key>__folds_<part>`) that says it gives the answer away, after Reveal in the open. The chart
    stays on the page, the same figure, so the tests that read it and the figure snapshots see it
    either way. As for answer_shown(): use it in the section that asks `q`."""
    if revealed(q):
        yield
        return
    assert q is not None  # revealed(None) is True
    with st.expander(t("classroom.folded"), icon=":material/visibility_off:", key=f"{q.key}__folds_{part}"):
        yield


def ask(q: Question, *, whole_page: bool = False) -> bool:
    """Show `q`; True once the learner has revealed the answer (or skipped the prediction). What
    answers the question waits for it: see answer_shown(). `whole_page`: Reveal reruns the whole
    page, not only the section that asks (a fragment), for a page whose parts outside that section
    wait for the answer too."""
    st.session_state[f"{q.key}__asked"] = q  # what tests/test_questions_wait.py reads the answer from
    return _ask(q, lambda: q, whole_page) is not None


def ask_first(p: Prompt, measure: Callable[[], Question]) -> Question | None:
    """Show the prompt `p`, and only on Reveal (or skip) run `measure`, which answers it: for a
    question whose answer costs a measurement worth running only when the learner asks for it. Returns
    the answered question once revealed, else None, after a line (keyed `<key>__waits_measure`) that
    says the measurement runs on Reveal; what the measurement draws comes after it, in the open.
    Use it in a section (a fragment), as ask()."""

    def answered() -> Question:
        q = measure()
        if (q.key, q.prompt, q.options, q.labels) != (p.key, p.prompt, p.options, p.labels):
            raise ValueError(f"{p.key}: the measured question is not the one asked")
        st.session_state[f"{q.key}__asked"] = q  # as ask(): what the tests read the answer from
        return q

    q = _ask(p, answered, False)
    if q is None:
        with st.container(key=f"{p.key}__waits_measure"):
            st.caption(f":material/visibility_off: {t('classroom.measured_on_reveal')}")
    return q


def _ask(p: Question | Prompt, answer: Callable[[], Question], whole_page: bool) -> Question | None:
    """The prediction box for `p`; after Reveal, `answer()` and the verdict (returned)."""
    choice_key, shown_key, picked_key = f"{p.key}__choice", f"{p.key}__revealed", f"{p.key}__picked"
    if whole_page and st.session_state.pop(f"{p.key}__page_waits", False):
        st.rerun(scope="app")  # the callback below ran in a fragment's rerun: now the page's

    def reveal() -> None:
        st.session_state[shown_key] = True
        if whole_page:
            st.session_state[f"{p.key}__page_waits"] = True

    def again() -> None:
        st.session_state[shown_key] = False
        st.session_state[choice_key] = None
        st.session_state[picked_key] = None
        if whole_page:  # what waits outside the section hides again
            st.session_state[f"{p.key}__page_waits"] = True

    labels = list(p.labels)
    # The radio holds the shown labels (unique), so its state is plain text. A language switch renames
    # every option: carry the learner's pick over by its position, as long as the options themselves
    # (not their names) are still the same.
    signature = repr(p.options)
    picked = st.session_state.get(picked_key)
    if st.session_state.get(choice_key) not in labels and picked and picked[0] == signature:
        st.session_state[choice_key] = labels[picked[1]]
    with st.container(border=True, key=f"{p.key}__predict"):
        st.markdown(f":material/psychology_alt: {t('classroom.predict_first')} {p.prompt}")
        label = st.radio(
            t("classroom.your_prediction"),
            labels,
            index=None,
            key=choice_key,
            horizontal=len(labels) <= 4,
            label_visibility="collapsed",
        )
        choice = p.options[labels.index(label)] if label in labels else None
        st.session_state[picked_key] = (signature, labels.index(label)) if label in labels else None
        if not st.session_state.get(shown_key, False):
            left, right = st.columns([1, 3], vertical_alignment="center")
            left.button(
                t("classroom.reveal"),
                key=f"{p.key}__reveal",
                icon=":material/visibility:",
                on_click=reveal,
                disabled=choice is None,
                help=t("classroom.reveal_help"),
            )
            # Skip: show the answer (and everything waiting for it) without predicting.
            right.button(
                t("classroom.skip"),
                key=f"{p.key}__skip",
                icon=":material/fast_forward:",
                on_click=reveal,
                type="tertiary",
                help=t("classroom.skip_help"),
            )
            return None
        q = answer()
        if choice is None:
            st.info(t("classroom.answer", answer=q.answer_label))
        elif choice == q.answer:
            st.success(t("classroom.right", answer=q.answer_label))
        else:
            st.warning(t("classroom.not_quite", choice=q.label(choice), answer=q.answer_label))
        st.markdown(q.explanation)
        st.button(
            t("classroom.again"), key=f"{q.key}__again", icon=":material/replay:", on_click=again, type="tertiary"
        )
        return q


@section()
def ask_alone(q: Question, *, whole_page: bool = False) -> None:
    """Owns the question's radio and Reveal, for a question asked outside any section's fragment:
    choosing an answer changes nothing outside this box, so it reruns this box only, not the page
    (in the toy lab that was ~0.1 s of server time). Reveal too, unless parts of the page outside
    the box wait for the answer (`whole_page`). A question inside a section's fragment is asked with
    ask()."""
    ask(q, whole_page=whole_page)
