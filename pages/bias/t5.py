"""Chapter: T5 relative position bias — buckets of distances, one learned scalar per bucket per head.

A page only shows: widgets → one cached call into explain/chapters/t5.py per section → figures →
st.*. The numbers, the question and every sentence that states a fact about them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import t5 as ch
from explain.chapters import t5_figures
from explain.chapters.common import sign_text
from explain.takeaway import takeaway_sentence
from ui import panels
from ui.cache import cached
from ui.common import control_row, plot, seed, sentence_tokens
from ui.derivation import proof
from ui.i18n import current, t
from ui.question import ask, folded
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL

SIGN = sign_text(ch.CHAPTER.encodings[0])
BUCKETS_MIN, BUCKETS_MAX = 4, 128
DIST_MIN, DIST_MAX = 2, 1024

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
bucket_map = cached(ch.bucket_map)
bucket_question = cached(ch.bucket_question)
t5_view = cached(ch.t5_view)
lang = current()
tokens = sentence_tokens()
toks = list(tokens.tokens)
n = len(toks)

st.header(t("t5.buckets.subheader"))
page.prose("buckets")
row = control_row()
num_buckets = row.slider(
    t("t5.buckets.num_buckets"),
    BUCKETS_MIN,
    BUCKETS_MAX,
    32,
    step=2,
    key="t5_buckets",
    **URL,
    help=t("t5.buckets.num_buckets_help", lo=BUCKETS_MIN, hi=BUCKETS_MAX),
)
max_distance = row.slider(
    t("t5.buckets.max_distance"),
    DIST_MIN,
    DIST_MAX,
    128,
    key="t5_max_distance",
    **URL,
    help=t("t5.buckets.max_distance_help", lo=DIST_MIN, hi=DIST_MAX),
)
causal = row.toggle(t("t5.buckets.causal"), key="t5_causal", **URL, help=t("t5.buckets.causal_help"))
mode = "causal" if causal else "bidirectional"  # a catalogue key, not a word: t5.mode.*
lowest = ch.smallest_valid_max_distance(num_buckets, causal)
if max_distance < lowest:
    st.warning(
        t(
            "t5.buckets.too_small",
            max_distance=max_distance,
            exact=lowest - 1,
            n=num_buckets,
            mode=t(f"t5.mode.{mode}"),
            lowest=lowest,
        )
    )
    max_distance = lowest

bm = bucket_map(num_buckets, max_distance, causal)
x_title = t("t5.staircase.x_title", sign=SIGN)  # the staircases' and the bias lines' x axis


@page.section(owns=("t5_staircase_near", "t5_staircase"))
def staircase_section(
    n: int, num_buckets: int, max_distance: int, causal: bool, bm: ch.BucketMap, x_title: str
) -> None:
    """Owns the question's radio and Reveal and the staircases' Numbers panels (the controls above are
    the page's: every later section reads them)."""
    mode = "causal" if causal else "bidirectional"  # a catalogue key, not a word: t5.mode.*
    q = bucket_question(num_buckets, max_distance, causal, lang)
    ask(q)
    page.prose("staircase")
    regions = [t(f"t5.region.{name}") for name in ("exact", "log", "beyond", "future")]  # ch.EXACT … ch.FUTURE
    reach = n - 1
    band = (-reach - 0.5, 0.5 if causal else reach + 0.5)
    close, near_r, near_buckets, near_region = bm.close_up()
    # The staircases show which distances share a bucket, the question's answer: folded until Reveal.
    with folded(q, "staircases"):
        s1, s2 = st.columns(2)
        with s1:
            plot(
                F.staircase(
                    near_r,
                    near_buckets,
                    near_region,
                    t(f"t5.staircase.close_{mode}", close=close, exact=bm.exact),
                    regions=regions,
                    x_title=x_title,
                    y_title=t("t5.staircase.y_title"),
                    band=band if reach <= close else None,
                    band_label=t("t5.staircase.band"),
                ),
                "t5_staircase_near",
            )
        with s2:
            plot(
                F.staircase(
                    bm.distances,
                    bm.buckets,
                    bm.region,
                    t("t5.staircase.full", n=num_buckets, d=max_distance, mode=t(f"t5.mode.{mode}")),
                    regions=regions,
                    x_title=x_title,
                    y_title=t("t5.staircase.y_title"),
                    band=band,
                    band_label=t("t5.staircase.band"),
                ),
                "t5_staircase",
            )


staircase_section(n, num_buckets, max_distance, causal, bm, x_title)

st.header(t("t5.unused.subheader"))
page.prose("unused")
if bm.unused:
    st.markdown(t("t5.unused.some", limit=bm.scan_limit, count=len(bm.unused), n=num_buckets))
    for reason, ids in bm.unused_by_reason().items():
        shown = ", ".join(str(u) for u in ids[: ch.SHOWN_IDS]) + (" …" if len(ids) > ch.SHOWN_IDS else "")
        st.markdown(t("t5.unused.item", ids=shown, reason=t(f"t5.unused.{reason}", per_side=bm.per_side)))
else:
    st.markdown(t("t5.unused.none", limit=bm.scan_limit, n=num_buckets))
with st.expander(t("t5.unused.share")):
    bucket_ids, distances, counts = bm.range_rows(t("t5.unused.beyond"))
    st.dataframe(
        {
            t("t5.unused.col_bucket"): bucket_ids,
            t("t5.unused.col_distances", sign=SIGN): distances,
            t("t5.unused.col_count"): counts,
        },
        hide_index=True,
    )

v = t5_view(tuple(toks), seed(), num_buckets, max_distance, causal)
panel_h = 320 if n <= 24 else 430  # the head grid and the logit pairs


@page.section(owns=("t5_bucket_matrix",))
def matrix_section(toks: list[str], num_buckets: int, causal: bool, v: ch.T5View) -> None:
    """The bucket matrix's Numbers panel: opening it reruns this section only."""
    n = len(toks)
    st.header(t("t5.matrix.subheader"))
    page.prose("matrix")
    plot(
        F.token_heatmap(
            v.buckets,
            toks,
            toks,
            t("t5.matrix.title", sign=SIGN),
            kind="index",
            zmin=0,
            zmax=num_buckets - 1,
            value_label=t("t5.matrix.value"),
        ),
        "t5_bucket_matrix",
    )
    used = v.used_in_sentence
    st.markdown(
        t(
            "t5.matrix.used_causal" if causal else "t5.matrix.used",
            n=n,
            reach=max(n - 1, 0),
            used=len(used),
            total=num_buckets,
        )
    )


matrix_section(toks, num_buckets, causal, v)


@page.section(heading="t5.table.subheader", prose="table", owns=("t5_table", "t5_bias_lines"))
def table_section(n: int, num_buckets: int, bm: ch.BucketMap, v: ch.T5View, x_title: str) -> None:
    """The bias table's and the bias lines' Numbers panels: opening one reruns this section only."""
    H = v.table.shape[1]
    r, by_r = v.bias_by_distance(ch.table_span(bm, n))
    labels = [t("t5.table.never_used", b=b) if b in bm.unused else str(b) for b in range(num_buckets)]
    t1, t2 = st.columns([1, 2])
    with t1:
        plot(
            F.matrix_heatmap(
                v.table,
                t("t5.table.title", n=num_buckets, h=H),
                x_title=t("t5.table.x_title"),
                y_title=t("t5.table.y_title"),
                y=labels,
                value_label="β",
                height=int(min(720, max(380, 120 + 12 * num_buckets))),
            ),
            "t5_table",
        )
    with t2:
        plot(
            t5_figures.step_lines(
                r,
                {t("t5.head", h=h): by_r[h] for h in range(H)},
                t("t5.table.lines_title"),
                x_title=x_title,
                y_title=t("t5.table.lines_y"),
                height=400,
            ),
            "t5_bias_lines",
        )


table_section(n, num_buckets, bm, v, x_title)


@page.section(owns=("t5_bias_heads",))
def heads_section(toks: list[str], v: ch.T5View, panel_h: int) -> None:
    """The head grid's Numbers panel: opening it reruns this section only."""
    H = v.table.shape[1]
    st.header(t("t5.heads.subheader"))
    page.prose("heads")
    plot(
        F.token_heatmap_grid(
            v.position,
            toks,
            t("t5.heads.title"),
            panel_titles=[t("t5.head", h=h) for h in range(H)],
            value_label=t("t5.heads.value"),
            cols=2,
            zmax=v.bias_scale,
            panel_height=panel_h,
        ),
        "t5_bias_heads",
    )


heads_section(toks, v, panel_h)


@page.section(owns=("t5_terms", "t5_attention", "t5_head"))
def logits_section(toks: list[str], causal: bool, v: ch.T5View, panel_h: int) -> None:
    """Owns the head picker (nothing else reads it) and the two pairs' Numbers panels."""
    H = v.table.shape[1]
    st.header(t("t5.logits.subheader"))
    page.prose("logits")
    head = st.columns([1, 3])[0].selectbox(
        t("t5.logits.head"), list(range(H)), key="t5_head", **URL, help=t("t5.logits.head_help", h=H, last=H - 1)
    )
    panels.pair(
        v.terms_pair(head),
        toks,
        t("t5.logits.title", head=head),
        [t("t5.logits.content"), t("t5.logits.position")],
        t("t5.logits.value"),
        "t5_terms",
        panel_height=panel_h,
    )
    panels.pair(
        v.attention_pair(head),
        toks,
        t("t5.logits.weights_title", head=head),
        [t("t5.logits.bias_off"), t("t5.logits.bias_on")],
        t("t5.logits.weight"),
        "t5_attention",
        weights=True,
        zmax=v.attention_top(head),
        panel_height=panel_h,
    )
    if causal:
        st.caption(t("t5.logits.causal_note"))
    pair = v.attention_pair(head)  # (bias off, bias on)
    st.markdown(takeaway_sentence(pair[1], toks, without=pair[0]))


logits_section(toks, causal, v, panel_h)

trained_panel(page.chapter)

st.header(t("t5.shift.subheader"))
page.prose("shift")
panels.shift_metrics(v.shift, "t5.shift.bias", "t5.shift.output")
page.prose("derivation")
proof(t("t5.shift.proof"), "t5-shift-invariance", "t5_proof")
