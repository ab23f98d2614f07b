"""Chapter: Shaw et al. 2018 — relative position representations (clipped distances, aᴷ and aⱽ).

A page only shows: widgets → one cached call into explain/chapters/shaw.py per section → figures →
st.*. The numbers, the question and every sentence that states a fact about them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import shaw as ch
from explain.chapters import shaw_figures
from explain.chapters.common import sign_text
from explain.takeaway import takeaway_sentence
from ui import panels
from ui.cache import cached
from ui.common import plot, seed, sentence_tokens
from ui.i18n import current, t
from ui.question import ask
from ui.section import open_chapter
from ui.url_state import URL

CLIPPED = t("shaw.clipped", sign=sign_text(ch.CHAPTER.encodings[0]))  # "clipped j − i (key − query)": the paper's sign
QUERY_I, KEY_J, CHANNEL = t("shaw.query_i"), t("shaw.key_j"), t("shaw.channel")

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
shaw_view = cached(ch.shaw_view)
index_section = cached(ch.index_section)
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)
lang = current()

c1, c2 = st.columns([2, 1])
k = c1.slider(t("shaw.k_label"), 1, ch.K_MAX, 4, key="shaw_k", **URL, help=t("shaw.k_help", max=ch.K_MAX))
head = c2.selectbox(
    t("shaw.head_label"),
    list(range(ch.N_HEADS)),
    key="shaw_head",
    **URL,
    help=t("shaw.head_help", heads=ch.N_HEADS, size=ch.D_MODEL // ch.N_HEADS),
)
v = shaw_view(tuple(toks), seed(), k)
sec = index_section(n, k, lang)
labels = ch.distance_labels(k)  # rows of the tables and columns of the mass map
panel_h = 320 if n <= 24 else 430  # the logit and attention pairs


@page.section(heading="shaw.index.subheader", prose="index", owns=("shaw_index",))
def index_map_section(toks: list[str], k: int, v: ch.ShawView, sec: ch.IndexSection) -> None:
    """Owns the question's radio and Reveal and the index map's Numbers panel."""
    if sec.question is not None:
        ask(sec.question)
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
    st.markdown(sec.share)


index_map_section(toks, k, v, sec)


@page.section(heading="shaw.tables.subheader", prose="tables", owns=("shaw_ak", "shaw_av"))
def tables_section(k: int, v: ch.ShawView, labels: list[str]) -> None:
    """The aᴷ and aⱽ tables' Numbers panels: opening one reruns this section only."""
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


tables_section(k, v, labels)


@page.section(heading="shaw.logits.subheader", prose="logits", owns=("shaw_terms",))
def logits_section(toks: list[str], head: int, v: ch.ShawView, panel_h: int) -> None:
    """The logit pair's Numbers panel: opening it reruns this section only."""
    panels.pair(
        v.terms_pair(head),
        toks,
        t("shaw.logits.title", head=head),
        [t("shaw.logits.content"), t("shaw.logits.position")],
        t("shaw.logits.value"),
        "shaw_terms",
        panel_height=panel_h,
    )
    page.prose("query-side")


logits_section(toks, head, v, panel_h)


@page.section(owns=("shaw_attention",))
def attention_section(toks: list[str], head: int, v: ch.ShawView, panel_h: int) -> None:
    """The attention pair's Numbers panel: opening it reruns this section only."""
    n = len(toks)
    st.header(t("shaw.attention.subheader"))
    page.prose("attention")
    top = v.attention_top(head)
    panels.pair(
        v.attention_pair(head),
        toks,
        t("shaw.attention.title", head=head),
        [t("shaw.attention.off"), t("shaw.attention.on")],
        t("shaw.attention.value"),
        "shaw_attention",
        weights=True,
        zmax=top,
        panel_height=panel_h,
    )
    if n > 24:
        st.caption(t("shaw.attention.scale", top=top, n=n))
    pair = v.attention_pair(head)  # (off, on)
    st.markdown(takeaway_sentence(pair[1], toks, without=pair[0]))


attention_section(toks, head, v, panel_h)


# Going deeper: the value side (aⱽ), a second lookup beside the key side the chapter is about.
@page.section(owns=("shaw_mass", "shaw_value_norms", "shaw_value_term"), deeper=True)
def value_section(toks: list[str], head: int, v: ch.ShawView, labels: list[str]) -> None:
    """The value-side charts' Numbers panels: opening one reruns this section only."""
    n = len(toks)
    st.header(t("shaw.value.subheader"))
    page.prose("value")
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
        norm_content, norm_position = v.value_norms(head)
        sizes = {t("shaw.value.content"): norm_content, t("shaw.value.position"): norm_position}
        size_title = t("shaw.value.size_title", head=head)
        if n <= 40:
            plot(
                F.token_bars(toks, sizes, size_title, x_title=QUERY_I, y_title=t("shaw.value.length")),
                "shaw_value_norms",
            )
        else:  # hundreds of grouped bars are unreadable: one line per part over the query position
            plot(
                F.lines(
                    v.positions, sizes, size_title, x_title=t("shaw.query_position"), y_title=t("shaw.value.length")
                ),
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


st.header(t("shaw.shift.subheader"))
page.prose("shift")
panels.shift_metrics(v.shift, "shaw.shift.position", "shaw.shift.output")


# Going deeper: what the lookup costs and how an implementation avoids the n × n × d tensor.
@page.section(heading="shaw.cost.subheader", prose="cost", deeper=True)
def cost_section(n: int, k: int, v: ch.ShawView) -> None:
    """Owns no widget or chart: the sizes of the two forms, in the fold."""
    st.markdown(
        t(
            "shaw.cost.sizes",
            n=n,
            d=v.a_k.shape[1],
            heads=ch.N_HEADS,
            rows=2 * k + 1,
            per_pair=v.per_pair_numbers,
            gathered=v.gathered_numbers,
            diff=v.paper_form_difference,
        )
    )
    page.prose("cost-kernel")


value_section(toks, head, v, labels)
cost_section(n, k, v)
