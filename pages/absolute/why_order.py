"""Chapter: Why order matters — attention without positions is permutation-equivariant.

A page only shows: widgets → one cached call into explain/chapters/why_order.py per section → figures
→ st.*. The numbers, the question and the sentences that state them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import why_order as ch
from explain.question import Question
from ui.cache import cached
from ui.common import control_row, inline_tokens, plot, seed, sentence_tokens
from ui.i18n import current, t
from ui.question import answer_shown, ask_alone, folded
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
shuffle_view = cached(ch.shuffle_view)
shuffle_question = cached(ch.shuffle_question)
recurrence_view = cached(ch.recurrence_view)
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)
lang = current()


def shuffle_again() -> None:
    st.session_state.shuffles += 1


def unshuffle() -> None:
    st.session_state.shuffles = 0


st.header(t("why_order.shuffle_heading"))
st.session_state.setdefault("shuffles", 1)  # open on a shuffled copy: the point is visible at once
q = shuffle_question(toks, seed(), st.session_state.shuffles, lang)


if q is not None:
    # The metric, the verdict and the recurrent section's numbers below answer it: Reveal reruns
    # the whole page, so they can wait for it.
    ask_alone(q, whole_page=True)
page.prose("shuffle")
row = control_row()
# Callbacks run before the script, so the question, the maps and the recurrent network below all see
# the new shuffle in the same run.
row.button(
    t("why_order.shuffle_again"), key="shuffle", icon=":material/shuffle:", disabled=n < 2, on_click=shuffle_again
)
row.button(t("why_order.original_order"), key="unshuffle", icon=":material/undo:", on_click=unshuffle)
with_pe = row.toggle(t("why_order.with_pe"), key="with_pe", **URL, help=t("why_order.with_pe_help"))
if n < 2:
    st.info(t("why_order.single_token"))

shuffles = st.session_state.shuffles
r = shuffle_view(toks, seed(), shuffles, with_pe)
st.markdown(t("why_order.original") + inline_tokens(toks))
st.markdown(t("why_order.shuffled") + inline_tokens(r.shuffled_tokens))

m1, m2 = st.columns(2)
with m1:
    # Without positions, the difference is the question's answer: it waits for Reveal.
    shown = with_pe or answer_shown(q, "verdict")
    if shown:
        st.metric(t("why_order.metric_diff"), f"{r.max_abs_diff:.6f}")
m2.metric(t("why_order.metric_pe"), t("why_order.pe.sinusoidal" if with_pe else "why_order.pe.none"))
if shown and not with_pe:
    exact = t("why_order.exactly_zero") if r.exact else t("why_order.rounding", diff=r.max_abs_diff)
    if ch.verdict(r.max_abs_diff) == ch.SAME:
        st.success(t("why_order.same_vectors", exact=exact))
    else:  # cannot happen unless the attention path is broken; say so rather than hide it
        st.error(t("why_order.broken", diff=r.max_abs_diff))
elif with_pe:
    st.warning(t("why_order.order_matters"))


@page.section(owns=("out_original", "out_back", "out_diff", "att_original", "att_shuffled"))
def maps_section(toks: tuple[str, ...], r: ch.PermutationResult, q: Question | None) -> None:
    """The output and weight maps' Numbers panels: opening one reruns these five charts only. The
    difference map is the question's answer (blank without positions): folded until Reveal, which
    reruns the whole page."""
    token_axis, channel_axis = t("why_order.fig.token"), t("why_order.fig.channel")
    o1, o2, o3 = st.columns(3)
    with o1:
        plot(
            F.token_heatmap(
                r.outputs_shown,
                toks,
                None,
                t("why_order.fig.out_original"),
                row_title=token_axis,
                col_title=channel_axis,
                value_label=t("why_order.fig.output"),
                show_values=False,
            ),
            "out_original",
        )
    with o2:
        plot(
            F.token_heatmap(
                r.unshuffled_shown,
                toks,
                None,
                t("why_order.fig.out_back"),
                row_title=token_axis,
                col_title=channel_axis,
                value_label=t("why_order.fig.output"),
                show_values=False,
            ),
            "out_back",
        )
    with o3, folded(q, "difference"):
        plot(
            F.token_heatmap(
                r.difference_shown,
                toks,
                None,
                t("why_order.fig.out_diff"),
                row_title=token_axis,
                col_title=channel_axis,
                value_label=t("why_order.fig.difference"),
                zmax=1.0,
                show_values=False,
            ),
            "out_diff",
        )

    w1, w2 = st.columns(2)
    with w1:
        plot(
            F.token_heatmap(
                r.original.weights[0],
                toks,
                toks,
                t("why_order.fig.att_original"),
                kind="weights",
                value_label=t("why_order.fig.weight"),
            ),
            "att_original",
        )
    with w2:
        plot(
            F.token_heatmap(
                r.shuffled.weights[0],
                r.shuffled_tokens,
                r.shuffled_tokens,
                t("why_order.fig.att_shuffled"),
                kind="weights",
                value_label=t("why_order.fig.weight"),
            ),
            "att_shuffled",
        )


maps_section(toks, r, None if with_pe else q)  # with positions the map answers nothing

rv = recurrence_view(toks, seed(), shuffles)
trained_panel(page.chapter)  # the same (no) encoding, trained on real text

st.header(t("why_order.repeats_heading"))
page.prose("repeats")
if r.repeats:
    st.table(
        {
            t("why_order.table.word"): [rep.word for rep in r.repeats],
            t("why_order.table.positions"): [", ".join(map(str, rep.positions)) for rep in r.repeats],
            t("why_order.table.diff"): [f"{rep.max_abs_diff:.6f}" for rep in r.repeats],
            t("why_order.table.recurrent"): [f"{d:.6f}" for d in rv.repeat_state_diff],
        }
    )
else:
    st.info(t("why_order.no_repeats"))

page.prose("with-pe")


@page.section(owns=("rnn_change",))
def rnn_section(toks: tuple[str, ...], shuffles: int, rv: ch.RecurrenceView, q: Question | None) -> None:
    """The recurrent contrast's Numbers panel: opening it reruns this section only. Its sentence
    states the attention layer's largest change, the question's answer: it waits for Reveal (which
    reruns the whole page, this section with it)."""
    n = len(toks)
    st.header(t("why_order.rnn.heading"))
    page.prose("rnn")
    if n < 2:
        st.info(t("why_order.single_token"))
    elif shuffles == 0:
        st.info(t("why_order.rnn.unshuffled"))
    else:
        plot(
            F.token_bars(
                toks,
                {t("why_order.rnn.attention"): rv.attention_change, t("why_order.rnn.recurrent"): rv.recurrent_change},
                t("why_order.rnn.title"),
                x_title=t("why_order.rnn.x"),
                y_title=t("why_order.rnn.y"),
            ),
            "rnn_change",
        )
        if answer_shown(q, "rnn"):
            st.markdown(
                t(
                    "why_order.rnn.measured",
                    attention=rv.attention_max,
                    rnn=rv.recurrent_max,
                    unchanged=rv.unchanged_words,
                    n=n,
                )
            )


rnn_section(toks, shuffles, rv, q)

with st.expander(t("why_order.causal_expander")):
    page.prose("causal")
