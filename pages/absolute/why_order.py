"""Chapter: Why order matters — attention without positions is permutation-equivariant."""

import streamlit as st

from encoders import attention
from explain import figures as F
from explain.chapters import why_order as ch
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "why-order"
header(KEY, sources=(attention.attend, attention.SelfAttention.forward))
prose(KEY, "intro")

experiment = st.cache_data(ch.permutation_experiment)
tokens = sentence_tokens()
toks = tokens.tokens
n = len(toks)

st.subheader(t("why_order.shuffle_heading"))
st.session_state.setdefault("shuffles", 1)  # open on a shuffled copy: the point is visible at once
if n >= 2:
    # The answer is measured: the same experiment as below, without positions, on a shuffled copy.
    probe = experiment(toks, seed(), "none", ch.shuffle_order(n, seed(), max(1, st.session_state.shuffles)))
    options = ("same", "slight", "different")  # stable ids: the words come from the catalogue
    answer = options[0] if probe.max_abs_diff < 1e-9 else options[1] if probe.max_abs_diff < 0.1 else options[2]
    predict(
        "why_order_q",
        t("why_order.question"),
        options,
        answer,
        t("why_order.explanation", diff=probe.max_abs_diff),
        format_func=lambda v: t(f"why_order.opt.{v}"),
    )
prose(KEY, "shuffle")
b1, b2, b3 = st.columns([1, 1, 2])
if b1.button(t("why_order.shuffle_again"), key="shuffle", icon=":material/shuffle:", disabled=n < 2):
    st.session_state.shuffles += 1
if b2.button(t("why_order.original_order"), key="unshuffle", icon=":material/undo:"):
    st.session_state.shuffles = 0
with_pe = b3.toggle(t("why_order.with_pe"), key="with_pe", **URL, help=t("why_order.with_pe_help"))
if n < 2:
    st.info(t("why_order.single_token"))

order = ch.shuffle_order(n, seed(), st.session_state.shuffles)
method = "sinusoidal" if with_pe else "none"
r = experiment(toks, seed(), method, order)

st.markdown(t("why_order.original") + inline_tokens(toks))
st.markdown(t("why_order.shuffled") + inline_tokens(toks[k] for k in order))

m1, m2 = st.columns(2)
m1.metric(t("why_order.metric_diff"), f"{r.max_abs_diff:.6f}")
m2.metric(t("why_order.metric_pe"), t(f"why_order.pe.{method}"))
if not with_pe:
    exact = t("why_order.exactly_zero") if r.max_abs_diff == 0 else t("why_order.rounding", diff=r.max_abs_diff)
    if r.max_abs_diff < 1e-9:
        st.success(t("why_order.same_vectors", exact=exact))
    else:  # cannot happen unless the attention path is broken; say so rather than hide it
        st.error(t("why_order.broken", diff=r.max_abs_diff))
else:
    st.warning(t("why_order.order_matters"))

show = min(64, r.original.output.shape[1])
o1, o2, o3 = st.columns(3)
with o1:
    plot(
        F.token_heatmap(
            r.original.output[:, :show],
            toks,
            None,
            t("why_order.fig.out_original"),
            row_title=t("why_order.fig.token"),
            col_title=t("why_order.fig.channel"),
            value_label=t("why_order.fig.output"),
            show_values=False,
        ),
        "out_original",
    )
with o2:
    plot(
        F.token_heatmap(
            r.unshuffled_output[:, :show],
            toks,
            None,
            t("why_order.fig.out_back"),
            row_title=t("why_order.fig.token"),
            col_title=t("why_order.fig.channel"),
            value_label=t("why_order.fig.output"),
            show_values=False,
        ),
        "out_back",
    )
with o3:
    plot(
        F.token_heatmap(
            r.original.output[:, :show] - r.unshuffled_output[:, :show],
            toks,
            None,
            t("why_order.fig.out_diff"),
            row_title=t("why_order.fig.token"),
            col_title=t("why_order.fig.channel"),
            value_label=t("why_order.fig.difference"),
            zmax=1.0,
            show_values=False,
        ),
        "out_diff",
    )

shuffled_toks = [toks[k] for k in order]
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
            shuffled_toks,
            shuffled_toks,
            t("why_order.fig.att_shuffled"),
            kind="weights",
            value_label=t("why_order.fig.weight"),
        ),
        "att_shuffled",
    )

st.subheader(t("why_order.repeats_heading"))
prose(KEY, "repeats")
if r.repeats:
    st.table(
        {
            t("why_order.table.word"): [rep.word for rep in r.repeats],
            t("why_order.table.positions"): [", ".join(map(str, rep.positions)) for rep in r.repeats],
            t("why_order.table.diff"): [f"{rep.max_abs_diff:.6f}" for rep in r.repeats],
        }
    )
else:
    st.info(t("why_order.no_repeats"))

prose(KEY, "with-pe")
with st.expander(t("why_order.causal_expander")):
    prose(KEY, "causal")
