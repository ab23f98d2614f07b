"""Predict, then reveal: the widget that shows an explain.question.Question.

The question arrives whole (options, labels, answer, explanation, all computed in explain/); this
module only draws it: a radio with nothing chosen, a Reveal button, then right / not quite and the
explanation. Nothing a user typed becomes HTML here: prompts, labels and explanations are catalogue
Markdown filled with computed values (typed tokens inside them are code spans).
"""

from __future__ import annotations

import streamlit as st

from explain.question import Question
from ui.i18n import t
from ui.section import section


def ask(q: Question) -> bool:
    """Show `q`; True once the learner has revealed the answer (a page may put the picture the
    question is about behind it)."""
    choice_key, shown_key, picked_key = f"{q.key}__choice", f"{q.key}__revealed", f"{q.key}__picked"

    def reveal() -> None:
        st.session_state[shown_key] = True

    def again() -> None:
        st.session_state[shown_key] = False
        st.session_state[choice_key] = None
        st.session_state[picked_key] = None

    labels = list(q.labels)
    # The radio holds the shown labels (unique), so its state is plain text. A language switch renames
    # every option: carry the learner's pick over by its position, as long as the options themselves
    # (not their names) are still the same.
    signature = repr(q.options)
    picked = st.session_state.get(picked_key)
    if st.session_state.get(choice_key) not in labels and picked and picked[0] == signature:
        st.session_state[choice_key] = labels[picked[1]]
    with st.container(border=True, key=f"{q.key}__predict"):
        st.markdown(f":material/psychology_alt: {t('classroom.predict_first')} {q.prompt}")
        label = st.radio(
            t("classroom.your_prediction"),
            labels,
            index=None,
            key=choice_key,
            horizontal=len(labels) <= 4,
            label_visibility="collapsed",
        )
        choice = q.options[labels.index(label)] if label in labels else None
        st.session_state[picked_key] = (signature, labels.index(label)) if label in labels else None
        if not st.session_state.get(shown_key, False):
            st.button(
                t("classroom.reveal"),
                key=f"{q.key}__reveal",
                icon=":material/visibility:",
                on_click=reveal,
                disabled=choice is None,
                help=t("classroom.reveal_help"),
            )
            return False
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
        return True


@section()
def ask_alone(q: Question) -> None:
    """Owns the question's radio and Reveal, for a question asked outside any section's fragment:
    choosing an answer or pressing Reveal changes nothing outside this box, so it reruns this box
    only, not the page (in the toy lab that was ~0.1 s of server time). A question inside a
    section's fragment is asked with ask()."""
    ask(q)
