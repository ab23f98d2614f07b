"""Chapter: Shaw et al. 2018 — relative position representations (clipped distances, aᴷ and aⱽ)."""

import numpy as np
import streamlit as st

from encoders import shaw as enc
from explain import figures as F
from explain.chapters import shaw as ch
from explain.chapters import shaw_figures
from explain.chapters.common import sign_text
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "shaw"
K_MAX = 64
CLIPPED = t("shaw.clipped", sign=sign_text(enc.ShawRelative.name))  # "clipped j − i (key − query)": the paper's sign
QUERY_I, KEY_J, CHANNEL = t("shaw.query_i"), t("shaw.key_j"), t("shaw.channel")

header(
    KEY,
    enc.PAPER,
    sources=(
        enc.clipped_relative_index,
        enc.relative_position_index,
        enc.position_logits,
        enc.value_position_term,
        enc.ShawRelative.logit_terms,
    ),
)
prose(KEY, "intro")

shaw_view = st.cache_data(ch.shaw_view)
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)

c1, c2 = st.columns([2, 1])
k = c1.slider(t("shaw.k_label"), 1, K_MAX, 4, key="shaw_k", **URL, help=t("shaw.k_help", max=K_MAX))
head = c2.selectbox(
    t("shaw.head_label"),
    list(range(ch.N_HEADS)),
    key="shaw_head",
    **URL,
    help=t("shaw.head_help", heads=ch.N_HEADS, size=ch.D_MODEL // ch.N_HEADS),
)
v = shaw_view(tuple(toks), seed(), k)
share = ch.clipped_share(n, k)

st.subheader(t("shaw.index.subheader"))
prose(KEY, "index")
rows_used = int(np.unique(v.clipped).size)  # counted on the very map drawn below
if n > 1:
    predict(
        "shaw_q",
        t("shaw.index.question", n=n, k=k),
        sorted({rows_used, n, 2 * k + 1, 2 * n - 1, n * n}),
        rows_used,
        t("shaw.index.explanation", rows=rows_used, last=n - 1, values=2 * n - 1, k=k, possible=2 * k + 1),
        format_func=lambda r: f"{r:,}",
    )
plot(
    shaw_figures.token_heatmap_marked(
        v.clipped,
        toks,
        toks,
        t("shaw.index.title", k=k),
        mark=v.is_clipped,
        kind="signed",
        zmax=float(k),
        row_title=QUERY_I,
        col_title=KEY_J,
        value_label=t("shaw.index.value"),
    ),
    "shaw_index",
)
st.markdown(
    t("shaw.index.share", n=n, pairs=n * n, share=share, k=k, rest=n * n - int(v.is_clipped.sum()), rows=2 * k - 1)
)

st.subheader(t("shaw.tables.subheader"))
prose(KEY, "tables")
labels = ch.distance_labels(k)
t1, t2 = st.columns(2)
table_h = int(min(640, max(320, 120 + 18 * (2 * k + 1))))
with t1:
    plot(
        F.matrix_heatmap(
            v.a_k,
            t("shaw.tables.key_title", rows=2 * k + 1, d=v.a_k.shape[1]),
            x_title=CHANNEL,
            y_title=CLIPPED,
            y=labels,
            value_label="wᴷ",
            height=table_h,
        ),
        "shaw_ak",
    )
with t2:
    plot(
        F.matrix_heatmap(
            v.a_v,
            t("shaw.tables.value_title", rows=2 * k + 1, d=v.a_v.shape[1]),
            x_title=CHANNEL,
            y_title=CLIPPED,
            y=labels,
            value_label="wⱽ",
            height=table_h,
        ),
        "shaw_av",
    )

st.subheader(t("shaw.logits.subheader"))
prose(KEY, "logits")
panel_h = 320 if n <= 24 else 430
plot(
    F.token_heatmap_grid(
        np.stack([v.content[head], v.position[head]]),
        toks,
        t("shaw.logits.title", head=head),
        panel_titles=[t("shaw.logits.content"), t("shaw.logits.position")],
        value_label=t("shaw.logits.value"),
        row_title=QUERY_I,
        col_title=KEY_J,
        cols=2,
        panel_height=panel_h,
    ),
    "shaw_terms",
)

st.subheader(t("shaw.attention.subheader"))
prose(KEY, "attention")
pair = np.stack([v.weights_content_only[head], v.weights[head]])
plot(
    F.token_heatmap_grid(
        pair,
        toks,
        t("shaw.attention.title", head=head),
        kind="weights",
        zmax=float(pair.max()),
        panel_titles=[t("shaw.attention.off"), t("shaw.attention.on")],
        value_label=t("shaw.attention.value"),
        row_title=QUERY_I,
        col_title=KEY_J,
        cols=2,
        panel_height=panel_h,
    ),
    "shaw_attention",
)
if n > 24:
    st.caption(t("shaw.attention.scale", top=float(pair.max()), n=n))

st.subheader(t("shaw.value.subheader"))
prose(KEY, "value")
b1, b2 = st.columns(2)
with b1:
    plot(
        F.token_heatmap(
            v.mass_per_distance[head],
            toks,
            labels,
            t("shaw.value.mass_title", head=head),
            kind="weights",
            row_title=QUERY_I,
            col_title=CLIPPED,
            value_label=t("shaw.value.mass"),
        ),
        "shaw_mass",
    )
with b2:
    sizes = {
        t("shaw.value.content"): np.linalg.norm(v.value_content[head], axis=-1),
        t("shaw.value.position"): np.linalg.norm(v.value_position[head], axis=-1),
    }
    size_title = t("shaw.value.size_title", head=head)
    if n <= 40:
        plot(F.token_bars(toks, sizes, size_title, x_title=QUERY_I, y_title=t("shaw.value.length")), "shaw_value_norms")
    else:  # hundreds of grouped bars are unreadable: one line per part over the query position
        plot(
            F.lines(np.arange(n), sizes, size_title, x_title=t("shaw.query_position"), y_title=t("shaw.value.length")),
            "shaw_value_norms",
        )
plot(
    F.token_heatmap(
        v.value_position[head],
        toks,
        None,
        t("shaw.value.term_title", head=head),
        row_title=QUERY_I,
        col_title=CHANNEL,
        value_label=t("shaw.value.term"),
        show_values=False,
        height=int(min(720, max(340, 110 + 18 * n))),
    ),
    "shaw_value_term",
)

st.subheader(t("shaw.shift.subheader"))
prose(KEY, "shift")
m1, m2 = st.columns(2)
m1.metric(t("shaw.shift.position", shift=ch.SHIFT), f"{v.shift_position_change:.1e}")
m2.metric(t("shaw.shift.output", shift=ch.SHIFT), f"{v.shift_output_change:.1e}")

st.subheader(t("shaw.cost.subheader"))
prose(KEY, "cost")
