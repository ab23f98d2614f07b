"""Chapter: DeBERTa — disentangled attention (c2c, c2p, p2c) and log buckets.

A page only shows: widgets → one cached call into explain/chapters/deberta.py per section → figures →
st.*. The numbers, the question and every sentence that states a fact about them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import deberta as ch
from explain.chapters import deberta_figures
from explain.chapters.common import sign_text
from explain.takeaway import takeaway_sentence
from ui import panels
from ui.cache import cached
from ui.common import control_row, plot, seed, sentence, sentence_tokens
from ui.derivation import proof
from ui.i18n import current, option_names, t
from ui.question import ask, folded
from ui.section import open_chapter
from ui.url_state import URL, Param

SIGN = sign_text(ch.CHAPTER.encodings[0])
N_HEADS = ch.N_HEADS
page = open_chapter(ch.CHAPTER)
page.prose("intro")
page.prose("equation")
proof(t("deberta.derivation"), "deberta-three-terms", "deberta_proof")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
term_maps = cached(ch.term_maps)
bucket_map = cached(ch.bucket_map)
sentence_buckets = cached(ch.sentence_buckets)
rows_question = cached(ch.rows_question)
lang = current()


def term_title(term: str) -> str:
    return t(f"deberta.term.{term}")


st.header(t("deberta.buckets.subheader"))
page.prose("buckets")
row = control_row()
log_buckets = row.toggle(t("deberta.buckets.log"), value=True, key="deb_log", **URL, help=t("deberta.buckets.log_help"))
bucket_size = row.slider(
    t("deberta.buckets.size"),
    4,
    256,
    16,
    step=4,
    key="deb_bucket_size",
    **URL,
    disabled=not log_buckets,
    help=t("deberta.buckets.size_help"),
)
max_position = row.slider(
    t("deberta.buckets.max_position"),
    8,
    1024,
    128,
    step=8,
    key="deb_max_position",
    **URL,
    help=t("deberta.buckets.max_position_help"),
)
if log_buckets and max_position - 1 <= bucket_size // 2:
    fixed = ch.smallest_valid_max_position(bucket_size)
    st.warning(t("deberta.buckets.too_small", b=bucket_size, need=bucket_size // 2 + 1, fixed=fixed))
    max_position = fixed


@page.section(owns=("deb_bucket_map",))
def bucket_map_section(log_buckets: bool, bucket_size: int, max_position: int) -> None:
    """Owns the question's radio and Reveal and the bucket map's Numbers panel (the three controls above
    are the page's: the sentence and the terms read them too)."""
    if log_buckets:
        q = rows_question(bucket_size, max_position, lang)
        ask(q)
        bm = bucket_map(bucket_size, max_position)
        with folded(q, "staircase"):  # which distances share a row, read off the staircase: the answer
            plot(
                deberta_figures.bucket_staircase(
                    bm.distances,
                    bm.bucket,
                    bm.region,
                    t("deberta.buckets.title"),
                    regions=[
                        t("deberta.buckets.region_exact", half=bm.exact_until),
                        t("deberta.buckets.region_log"),
                        t("deberta.buckets.region_clamped", last=max_position - 1),
                    ],
                    x_title=t("deberta.buckets.x_title", sign=SIGN),
                    y_title=t("deberta.buckets.y_title"),
                    last_row=t("deberta.buckets.last_row", bucket=bucket_size - 1),
                    last_bucket=bucket_size - 1,
                ),
                "deb_bucket_map",
            )
        st.markdown(
            t("deberta.buckets.rows", n=bm.n_within, last=max_position - 1, rows=bm.rows_within, table=2 * bucket_size)
        )
        if max_position < bucket_size:
            st.caption(t("deberta.buckets.stretch", last=max_position - 1, bucket=bucket_size - 1))
        with st.expander(t("deberta.buckets.clamp")):
            page.prose("clamp")
    else:
        st.info(t("deberta.buckets.plain", m=max_position, last=max_position - 1, rows=2 * max_position))


bucket_map_section(log_buckets, bucket_size, max_position)

st.header(t("deberta.sentence.subheader"))
page.prose("sentence")
tokens = sentence_tokens()  # stops here, with a note, when there is no text: the map above needs none
toks = list(tokens.tokens)


@page.section(owns=("deb_buckets",))
def sentence_section(toks: list[str], log_buckets: bool, bucket_size: int, max_position: int) -> None:
    """The sentence's bucket map's Numbers panel: opening it reruns this section only."""
    n = len(toks)
    sb = sentence_buckets(n, log_buckets, bucket_size, max_position)
    panels.token_map(
        sb.clamped_bucket,
        toks,
        t("deberta.sentence.title_log" if log_buckets else "deberta.sentence.title_plain"),
        "signed",
        t("deberta.sentence.value"),
        "deb_buckets",
    )


sentence_section(toks, log_buckets, bucket_size, max_position)


@page.section(owns=("deb_terms", "deb_sum", "deb_weights", "deb_head", "deb_on_*"))
def terms_section(toks: list[str], log_buckets: bool, bucket_size: int, max_position: int) -> None:
    """Owns the head picker and the three term switches (nothing else reads them) and the Numbers panels."""
    n = len(toks)
    st.header(t("deberta.terms.subheader"))
    page.prose("terms")
    c1, c2, c3, c4 = st.columns(4)
    HEAD = Param.integer("deb_head", 0, N_HEADS - 1, default=0)
    with c1:
        head = HEAD.widget(
            st.selectbox,
            t("deberta.terms.head"),
            list(range(N_HEADS)),
            format_func=option_names(range(N_HEADS), lambda h: t("deberta.terms.head_option", h=h + 1)),
            help=t("deberta.terms.head_help", n=N_HEADS),
        )
    switches = tuple(
        c.toggle(term, value=True, key=f"deb_on_{term}", help=term_title(term), **URL)
        for c, term in zip((c2, c3, c4), ch.TERMS, strict=False)
    )
    m = term_maps(sentence(), seed(), head, log_buckets, bucket_size, max_position, switches, n_heads=N_HEADS)
    panel_titles = [
        term_title(term) + ("" if on else t("deberta.terms.switched_off"))
        for term, on in zip(ch.TERMS, switches, strict=False)
    ]
    plot(
        F.token_heatmap_grid(
            m.stacked,
            toks,
            t("deberta.terms.grid_title", h=head + 1),
            panel_titles=panel_titles,
            value_label=t("deberta.terms.grid_value"),
            cols=3,
            panel_height=320 if n <= 40 else 420,
        ),
        "deb_terms",
    )
    if not any(switches):
        st.info(t("deberta.terms.all_off"))
    s1, s2 = st.columns(2)
    with s1:
        on = [term for term, o in zip(ch.TERMS, switches, strict=False) if o]
        panels.token_map(
            m.total,
            toks,
            t("deberta.terms.logits_title", terms=" + ".join(on) if on else t("deberta.terms.nothing")),
            "signed",
            t("deberta.terms.logit"),
            "deb_sum",
        )
    with s2:
        panels.token_map(
            m.weights, toks, t("deberta.terms.weights_title"), "weights", t("deberta.terms.weight"), "deb_weights"
        )
    st.markdown(takeaway_sentence(m.weights, toks))

    page.prose("p2c")
    page.prose("projections")


terms_section(toks, log_buckets, bucket_size, max_position)
