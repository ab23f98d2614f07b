"""Chapter: CoPE — gates decide what counts; positions are counts of counted tokens.

A page only shows: widgets → one cached call into explain/chapters/cope.py (or cope_results.py) per
section → figures → st.*. The numbers, the question and every sentence that states a fact about
them are computed there.

Longer than 500 lines: twelve sections, seven of them declared fragments (issue 18) whose declaration,
docstring and call add about 70 lines; the page only shows (its numbers are in explain/chapters/cope*.py), and
splitting it would scatter one chapter's widgets over several files.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import cope as ch
from explain.chapters import cope_results, cope_seeds
from explain.chapters.common import sign_text
from explain.takeaway import takeaway_sentence
from ui.cache import cached
from ui.common import control_row, inline_tokens, plot, seed, sentence, sentence_tokens
from ui.derivation import proof
from ui.i18n import current, option_names, t
from ui.question import ask, revealed
from ui.section import open_chapter
from ui.trained import trained_panel
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
count_view = cached(ch.count_view)
positions_question = cached(ch.positions_question)
interpolation_view = cached(ch.interpolation_view)
attention_view = cached(ch.preferred_count_attention)
alice_view = cached(ch.alice_view)
seed_view = cached(cope_seeds.seed_example)
model_view = cached(ch.model_view)
word_choices = cached(ch.word_choices)
paper_results = cached(cope_results.paper_results)

tokens = sentence_tokens()
text = sentence()
n = len(tokens)
lang = current()
# A new, shorter sentence must not leave a remembered slider value past its new maximum.
for _key, _top in (("cope_query", n - 1), ("cope_key", n - 1)):
    if st.session_state.get(_key, 0) > _top:
        st.session_state.pop(_key)
weight = t("cope.weight")
count_back = t("cope.count_back")

# ----------------------------------------------------------------------------- what counts
st.header(t("cope.counts.subheader"))
page.prose("what-counts")
words = word_choices(text)


# ---------------------------------------------------------------------------------- gates
@page.section(heading="cope.gates.subheader", prose="gates", owns=("gates",))
def gates_section(cv: ch.CountView, what: str) -> None:
    """Owns only its chart's Numbers panel: reads the counting settings above."""
    plot(
        F.token_heatmap(
            cv.gates,
            cv.tokens,
            cv.tokens,
            t("cope.gates.title", what=what),
            kind="weights",
            value_label=t("cope.gates.value"),
        ),
        "gates",
    )


# ------------------------------------------------------------------------------ positions
@page.section(heading="cope.positions.subheader", prose="positions", owns=("cope_proof", "positions"))
def positions_section(cv: ch.CountView, what: str, npos: int, all_open: bool) -> None:
    """Owns the question, the proof's numbers and its chart's Numbers panel."""
    question = positions_question(n, lang)
    if question is not None:
        ask(question)
    # The proof's title states the answer (p_ij = i − j + 1): before Reveal it only names the claim.
    title = "cope.positions.proof" if revealed(question) else "cope.positions.proof_waiting"
    proof(t(title), "cope-all-gates-open", "cope_proof")
    plot(
        F.token_heatmap(
            cv.positions,
            cv.tokens,
            cv.tokens,
            t("cope.positions.title", top=npos - 1, what=what),
            kind="index",
            value_label=count_back,
            zmin=0.0,
            zmax=float(npos - 1) if cv.n_clamped else None,
        ),
        "positions",
    )
    if all_open:
        st.success(t("cope.positions.all_open", diff=cv.relative_gap))


# ---------------------------------------------------------------------------------- query
@page.section(
    heading="cope.query.subheader", prose="query", owns=("cope_key", "cope_query", "interpolation", "query_bars")
)
def query_section(cv: ch.CountView, unit: str, word: str, sharpness: float, all_open: bool, npos: int) -> None:
    """Owns the query (read by p_max's and the interpolation's sections too, so they are in here) and the key."""
    query = (
        st.slider(
            t("cope.query.slider"),
            0,
            n - 1,
            n - 1,
            key="cope_query",
            **URL,
            help=t("cope.query.slider_help", last=n - 1),
        )
        if n > 1
        else 0
    )
    row = cv.row(query)
    plot(
        F.bars(
            row.tokens,
            row.counts,
            t("cope.query.title", query=query),
            x_title=t("cope.query.x_title"),
            y_title=count_back,
            highlight=row.highlight,
        ),
        "query_bars",
    )
    st.caption(t("cope.query.caption"))
    st.markdown(
        t(
            "cope.query.line",
            token=inline_tokens([cv.tokens[query]]),
            query=query,
            first_token=inline_tokens([cv.tokens[0]]),
            first=row.first,
            own=row.own,
        )
    )

    # ---------------------------------------------------------------------------------- p_max
    st.header(t("cope.pmax.subheader"))
    page.prose("pmax")
    if cv.n_clamped:
        st.warning(t("cope.pmax.clamped", largest=cv.unclamped_max, npos=npos, cells=cv.n_clamped, top=npos - 1))
    else:
        st.info(t("cope.pmax.not_clamped", largest=cv.unclamped_max, top=npos - 1))

    # --------------------------------------------------------------------------- interpolation
    st.header(t("cope.interpolation.subheader"))
    page.prose("interpolation")
    if st.session_state.get("cope_key", 0) > query:
        st.session_state.pop("cope_key")
    key_j = (
        st.slider(
            t("cope.interpolation.key"),
            0,
            query,
            0,
            key="cope_key",
            **URL,
            help=t("cope.interpolation.key_help", query=query),
        )
        if query > 0
        else 0
    )
    iv = interpolation_view(text, unit, word, sharpness, all_open, npos, query, key_j, seed())
    fig = F.lines(
        iv.n_window,
        {t("cope.interpolation.trace"): iv.z_window},
        t("cope.interpolation.title", query=query, lo=iv.first, hi=iv.last, key=key_j),
        x_title=t("cope.interpolation.x_title"),
        y_title="q_i·e[n]",
        markers=True,
    )
    F.mark_lines(fig, x={f"p = {iv.p:.3f}": iv.p}, y={t("cope.interpolation.interpolated", value=iv.value): iv.value})
    plot(fig, "interpolation")
    st.markdown(
        t(
            "cope.interpolation.line",
            p=iv.p,
            lo=iv.lo,
            hi=iv.hi,
            w=iv.w,
            z_hi=iv.z_hi,
            w_lo=1 - iv.w,
            z_lo=iv.z_lo,
            value=iv.value,
        )
    )


# ------------------------------------------------------------------------------- attention
@page.section(
    heading="cope.attention.subheader",
    prose="attention",
    owns=("attention", "cope_content", "cope_strength", "cope_target"),
)
def attention_section(what: str, unit: str, word: str, sharpness: float, all_open: bool, npos: int) -> None:
    """Owns the target, strength and content scale: they change only this map."""
    a1, a2, a3 = st.columns(3)
    target = a1.slider(
        t("cope.attention.target"),
        0,
        ch.MAX_TARGET,
        1,
        key="cope_target",
        **URL,
        help=t("cope.attention.target_help", max=ch.MAX_TARGET),
    )
    strength = a2.slider(
        t("cope.attention.strength"),
        0.0,
        ch.MAX_PREFERENCE,
        8.0,
        0.5,
        key="cope_strength",
        **URL,
        help=t("cope.attention.strength_help", max=ch.MAX_PREFERENCE),
    )
    content_scale = a3.slider(
        t("cope.attention.content"),
        0.0,
        2.0,
        0.0,
        0.1,
        key="cope_content",
        **URL,
        help=t("cope.attention.content_help"),
    )
    av = attention_view(text, unit, word, sharpness, all_open, npos, target, strength, content_scale, seed())
    plot(
        F.token_heatmap(
            av.weights,
            av.tokens,
            av.tokens,
            t("cope.attention.title", target=target, what=what),
            kind="weights",
            value_label=weight,
        ),
        "attention",
    )
    st.markdown(takeaway_sentence(av.weights, av.tokens))


# ----------------------------------------------------------------------------------- alice
@page.section(heading="cope.alice.subheader", prose="alice", owns=("alice", "cope_alice_word"))
def alice_section() -> None:
    """Owns the asked word: it changes only the Alice count."""
    if words:
        if st.session_state.get("cope_alice_word") not in words:
            st.session_state.pop("cope_alice_word", None)
        asked = st.selectbox(
            t("cope.alice.word"),
            words,
            index=ch.default_word(words),
            key="cope_alice_word",
            **URL,
            help=t("cope.alice.word_help"),
        )
        alice = alice_view(text, asked)
        plot(
            F.bars(
                alice.tokens,
                alice.in_last,
                t("cope.alice.title"),
                x_title=t("cope.alice.x_title"),
                y_title=t("cope.alice.y_title"),
                highlight=alice.hits,
                height=300,
            ),
            "alice",
        )
        st.markdown(t("cope.alice.answer", word=inline_tokens([asked]), count=alice.count, total=alice.total))
    else:
        st.info(t("cope.alice.no_words"))


# ---------------------------------------------------------------------- the seed examples
@page.section(
    heading="cope.seeds.subheader",
    prose="seeds",
    owns=("cope_delta", "cope_example", "cope_gap", "cope_slope", "seed_example"),
)
def seeds_section() -> None:
    """Owns the example, gap, delta and slope: they change only the seed example."""
    e1, e2, e3, e4 = st.columns([3, 2, 2, 2])
    EXAMPLE = Param.choice("cope_example", tuple(cope_seeds.SEED_EXAMPLES), default="yyyyxyyy")
    example = EXAMPLE.widget(
        e1.radio,
        t("cope.seeds.example"),
        EXAMPLE.options,
        format_func=option_names(EXAMPLE.options, lambda e: t(f"cope.seeds.example_name.{e}")),
        help=t("cope.seeds.example_help"),
    )
    gap = e2.slider(
        t("cope.seeds.gap"),
        1,
        cope_seeds.MAX_GAP,
        cope_seeds.SEED_DEFAULT_GAP[example],
        key="cope_gap",
        **URL,
        help=t("cope.seeds.gap_help", max=cope_seeds.MAX_GAP),
    )
    delta = e3.slider(
        t("cope.seeds.delta"), 0.0, 10.0, 3.0, 0.5, key="cope_delta", **URL, help=t("cope.seeds.delta_help")
    )
    slope = e4.slider(
        t("cope.seeds.slope"), 0.0, 5.0, 1.0, 0.1, key="cope_slope", **URL, help=t("cope.seeds.slope_help")
    )
    sv = seed_view(example, gap, delta, slope)
    plot(
        F.token_bars(
            sv.tokens,
            {t(f"cope.seeds.ruler.{r}"): sv.weights[r] for r in cope_seeds.RULERS},
            t("cope.seeds.title", tokens=" ".join(sv.tokens)),
            x_title=t("cope.seeds.x_title"),
            y_title=t("cope.seeds.y_title"),
        ),
        "seed_example",
    )
    st.markdown(
        t(
            "cope.seeds.line",
            sought=sv.sought,
            last=sv.last,
            back=sv.back,
            counted=sv.counted_back,
            relative=sv.weight("relative"),
            cope=sv.weight("cope"),
        )
    )


# ----------------------------------------------------------------------------------- model
@page.section(
    heading="cope.model.subheader",
    prose="model",
    owns=("cope_head", "cope_variant", "model_gates", "model_positions", "model_weights"),
)
def model_section(npos: int) -> None:
    """Owns the head and the variant: they change only the model's three maps."""
    m1, m2 = st.columns(2)
    head = m1.slider(
        t("cope.model.head"), 1, ch.N_HEADS, 1, key="cope_head", **URL, help=t("cope.model.head_help", max=ch.N_HEADS)
    )
    VARIANT = Param.choice("cope_variant", ch.VARIANTS, default="paper")
    variant = VARIANT.widget(
        m2.radio,
        t("cope.model.variant"),
        VARIANT.options,
        horizontal=True,
        format_func=option_names(VARIANT.options, lambda v: t(f"cope.model.variant_name.{v}")),
        help=t("cope.model.variant_help"),
    )
    mv = model_view(text, seed(), npos, variant)
    head_gates, head_positions, head_weights = mv.head(head)
    g1, g2 = st.columns(2)
    with g1:
        plot(
            F.token_heatmap(
                head_gates,
                mv.tokens,
                mv.tokens,
                t("cope.model.gates_title", head=head),
                kind="weights",
                value_label=t("cope.gates.value"),
            ),
            "model_gates",
        )
    with g2:
        plot(
            F.token_heatmap(
                head_positions,
                mv.tokens,
                mv.tokens,
                t("cope.model.positions_title", head=head),
                kind="index",
                value_label=count_back,
            ),
            "model_positions",
        )
    plot(
        F.token_heatmap(
            head_weights,
            mv.tokens,
            mv.tokens,
            t("cope.model.weights_title", head=head, variant=t(f"cope.model.variant_name.{variant}")),
            kind="weights",
            value_label=weight,
        ),
        "model_weights",
    )
    st.caption(t("cope.model.caption", sign=sign_text(ch.CHAPTER.encodings[0])))
    st.page_link("pages/labs/toy_tasks.py", label=t("cope.model.lab_link"), icon=":material/model_training:")


# ------------------------------------------------------------------ the counting settings
@page.section(owns=("cope_all_open", "cope_npos", "cope_sharpness", "cope_unit", "cope_word"))
def counts_part() -> None:
    """Owns the counting settings (unit, word, sharpness, every gate open, positions), which the
    gates, positions, query, attention and model sections read: moving one reruns the sections from
    here to the model's maps, not the page's top, the paper's tables below (three dataframes, ~17 ms
    of every full rerun) nor the frame. Each section inside is a fragment of its own for its own
    controls; the trained panel, Alice and the seeds sit here only to keep the page's order."""
    c1, c2 = st.columns([3, 2])
    # Option values are stable ids (kept in the address and in lessons); only their names are translated,
    # so the address holds the id, never the shown name.
    UNIT = Param.choice("cope_unit", ch.UNITS, default=ch.UNIT_SENTENCE)
    UNIT.restore()
    st.session_state.setdefault(UNIT.key, UNIT.default)  # the default is not the first option
    unit = UNIT.widget(
        c1.radio,
        t("cope.counts.unit"),
        ch.UNITS,
        horizontal=True,
        format_func=option_names(ch.UNITS, lambda u: t(f"cope.unit.{u}")),
        help=t("cope.counts.unit_help"),
    )
    word = ""
    if unit == ch.UNIT_PICKED:
        if words:
            if st.session_state.get("cope_word") not in words:
                st.session_state.pop("cope_word", None)
            word = c2.selectbox(
                t("cope.counts.word"),
                words,
                index=ch.default_word(words),
                key="cope_word",
                **URL,
                help=t("cope.counts.word_help"),
            )
        else:
            c2.info(t("cope.counts.no_words"))
    row = control_row()
    sharpness = row.slider(
        t("cope.counts.sharpness"),
        0.0,
        ch.MAX_SHARPNESS,
        ch.MAX_SHARPNESS,
        0.5,
        key="cope_sharpness",
        **URL,
        help=t("cope.counts.sharpness_help", max=ch.MAX_SHARPNESS),
    )
    all_open = row.toggle(
        t("cope.counts.all_open"), value=False, key="cope_all_open", **URL, help=t("cope.counts.all_open_help")
    )
    npos = row.slider(
        t("cope.counts.npos"),
        2,
        ch.MAX_NPOS,
        ch.MAX_NPOS,
        key="cope_npos",
        **URL,
        help=t("cope.counts.npos_help", max=ch.MAX_NPOS),
    )
    cv = count_view(text, unit, word, sharpness, all_open, npos)
    what = t("cope.counts.what_all_open") if all_open else t(f"cope.unit.{unit}")
    st.markdown(t("cope.counts.line", counted=cv.n_counted, n=n, what=what))
    if cv.n_counted == 0 and not all_open:
        st.info(t("cope.counts.none_counted"))
    gates_section(cv, what)
    positions_section(cv, what, npos, all_open)
    query_section(cv, unit, word, sharpness, all_open, npos)
    attention_section(what, unit, word, sharpness, all_open, npos)
    trained_panel(page.chapter)
    alice_section()
    seeds_section()
    model_section(npos)


counts_part()

# ------------------------------------------------------------------------ what the paper measured
st.header(t("cope.results.subheader"))
page.prose("results")
pr = paper_results(lang)
r1, r2 = st.columns([3, 2])
with r1:
    st.dataframe(pr.wikitext, hide_index=True, key="cope_table4_wikitext")
    st.caption(t("cope.results.wikitext_caption"))
with r2:
    st.dataframe(pr.code, hide_index=True, key="cope_table4_code")
    st.caption(t("cope.results.code_caption"))
st.markdown(pr.lm_line)
page.prose("length")
st.dataframe(pr.figure3, hide_index=True, key="cope_figure3")
st.caption(t("cope.results.figure3_caption", train=cope_results.FIGURE3_TRAIN))
st.markdown(pr.length_line)
page.prose("heads")
st.header(t("cope.results.limits_subheader"))
page.prose("limitations")
