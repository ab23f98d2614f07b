"""Lab: the learner's sentence through 2–4 registered encodings side by side.

A page only shows: widgets → one cached call into explain/chapters/attention_lab.py (or
attention_lab_shift.py) per section → figures → st.*. The numbers, the shift question and every
sentence that states a fact about them are computed there.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import attention_lab as lab
from explain.chapters import attention_lab_figures
from explain.chapters import attention_lab_length as length_lab
from explain.chapters import attention_lab_shift as shift
from explain.chapters import trained_attention as trained
from explain.chapters.smollm2 import CHAPTER as SMOLLM2
from ui.cache import cached
from ui.common import control_row, inline_tokens, plot, seed, sentence, sentence_tokens
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.trained import head_grid
from ui.url_state import URL, Param

page = open_chapter(lab.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
panels_section = cached(lab.panels_section)
shift_section = cached(shift.shift_section)
kv_cache = cached(shift.kv_cache)
length_test = cached(length_lab.length_test)
trained_section = cached(lab.trained_section)

lang = current()
tokens = sentence_tokens()
text = sentence()


def label(method: str) -> str:
    return lab.label(method, lang)


def short(method: str) -> str:
    return lab.short(method, lang)


def who(head: int | None) -> str:
    return lab.who_label(head, lang)


# The chosen encodings live in the address as registry names (?lab_methods=sinusoidal,t5,rope,alibi),
# never as the names shown, so a link made in Korean opens the same encodings in English.
METHODS = Param("lab_methods", "lab_methods", list(lab.DEFAULT_METHODS), lab.parse_methods, lab.dump_methods)
METHODS.restore()
st.session_state.setdefault(METHODS.key, list(lab.DEFAULT_METHODS))
names = lab.REGISTRY_NAMES
chosen = METHODS.widget(
    st.multiselect,
    t("attention_lab.methods"),
    list(names),
    max_selections=lab.MAX_METHODS,
    format_func=option_names(names, label),
    help=t("attention_lab.methods_help"),
)
if len(chosen) < 2:
    st.info(t("attention_lab.pick_two"))
    st.stop()
methods = tuple(chosen)

row = control_row()
n_heads = row.selectbox(
    t("attention_lab.heads"), lab.HEAD_CHOICES, index=2, key="lab_heads", **URL, help=t("attention_lab.heads_help")
)
head_options = ["mean", *range(n_heads)]
head_pick = row.selectbox(
    t("attention_lab.show_head"),
    head_options,
    index=1,
    key="lab_head",
    format_func=option_names(head_options, lambda h: who(None if h == "mean" else h)),
    help=t("attention_lab.show_head_help"),
)
head = None if head_pick == "mean" else int(head_pick)
causal = row.toggle(
    t("attention_lab.causal"), value=False, key="lab_causal", **URL, help=t("attention_lab.causal_help")
)
dial = row.slider(
    t("attention_lab.dial"), 0.0, 3.0, 1.0, step=0.25, key="lab_dial", **URL, help=t("attention_lab.dial_help")
)


@page.section(owns=("lab_show", "lab_panel_*", "lab_term_*"))
def panels_part() -> None:
    """Owns what is shown and the term switches, read only by the panels (the dial is in the shared row)."""
    SHOWN = Param.choice("lab_show", lab.SHOWN, default="weights")
    shown = SHOWN.widget(
        st.radio,
        t("attention_lab.shown"),
        lab.SHOWN,
        horizontal=True,
        format_func=option_names(lab.SHOWN, lambda s: t(f"attention_lab.show.{s}")),
        help=t("attention_lab.shown_help"),
    )

    multi = lab.switchable(methods)
    off: dict[str, tuple[str, ...]] = {}
    with st.expander(t("attention_lab.switches"), expanded=False):
        page.prose("switches")
        if not multi:
            st.caption(t("attention_lab.no_multi"))
        cols = st.columns(max(1, len(multi)))
        for col, m in zip(cols, multi, strict=False):
            col.markdown(f"**{label(m)}**")
            off[m] = tuple(
                x
                for x, role in lab.term_roles(m)
                if not col.checkbox(
                    lab.term_label(x, role, current()),
                    value=True,
                    key=f"lab_term_{m}_{x}",
                )
            )

    mixed = [short(m) for m in methods if lab.mixed_in_input(m)]
    if mixed:
        st.caption(
            t(
                "attention_lab.mixed_one" if len(mixed) == 1 else "attention_lab.mixed_many",
                names=t("attention_lab.and").join(mixed),
            )
        )

    # -- the panels ---------------------------------------------------------------------------------
    ps = panels_section(text, seed(), methods, n_heads, causal, dial, tuple(off.items()), head, shown)
    shown_title = t(f"attention_lab.title_show.{shown}")
    value_label = t("attention_lab.value_weight" if shown == "weights" else "attention_lab.value_logit")
    for row in range(0, len(ps.views), 2):
        pair = st.columns(2)
        for col, v in zip(pair, ps.views[row : row + 2], strict=False):
            with col:
                if v.z is None:
                    st.markdown(f"**{label(v.method)}**")
                    st.info(t("attention_lab.no_position_term"))
                    continue
                title = t("attention_lab.panel_title", method=short(v.method), shown=shown_title, who=who(head))
                # Two panels per row: at most 20 token labels per axis, so rotated labels do not run together.
                plot(
                    F.lab_map(
                        v.z,
                        v.tokens,
                        title,
                        kind=v.kind,
                        value_label=value_label,
                        zmax=ps.zmax,
                        height=ps.height,
                        max_ticks=20,
                        max_cells=lab.PANEL_CELLS,
                    ),
                    f"lab_panel_{v.method}",
                )
                notes = [
                    t(
                        "attention_lab.note_last",
                        j=v.top_key,
                        token=inline_tokens([v.tokens[v.top_key]]),
                        w=v.top_weight,
                    ),
                    t("attention_lab.note_share", share=v.share),
                ]
                if v.off:
                    notes.append(t("attention_lab.note_off", terms=", ".join(lab.term_name(x) for x in v.off)))
                st.caption(" · ".join(notes))

    page.prose("dial")


panels_part()


# -- trained on real text -------------------------------------------------------------------------
@page.section(heading="trained_attention.lab.header", owns=("lab_source", "lab_trained_*"))
def trained_part() -> None:
    """Owns the switch between the random layer and the trained models; reads the shared encodings."""
    SOURCE = Param.choice("lab_source", lab.SOURCES, default="random")
    source = SOURCE.widget(
        st.radio,
        t("trained_attention.lab.source"),
        lab.SOURCES,
        horizontal=True,
        format_func=option_names(lab.SOURCES, lambda s: t(f"trained_attention.lab.{s}")),
        help=t("trained_attention.lab.source_help"),
    )
    if source != "trained":
        return
    page.prose("trained")
    # A real RoPE model past its trained context, with the stretches these models are run with.
    st.page_link(SMOLLM2.page, label=t("smollm2.long.link"), icon=SMOLLM2.icon)
    sec = trained_section(text, methods, lang)
    st.caption(sec.bytes_note)
    if sec.missing_note:
        st.info(sec.missing_note)
    for v in sec.views:
        r = v.read
        shown = "weights"
        if len(r.maps) > 1:
            shown = st.radio(
                t("trained_attention.lab.show", model=short(v.method)),
                r.maps,
                horizontal=True,
                key=f"lab_trained_show_{v.method}",
                format_func=option_names(r.maps, lambda s: trained.shown_label(s, lang)),
                help=t("trained_attention.lab.show_help"),
            )
        head_grid(r, short(v.method), shown, f"lab_trained_{v.method}", max_cells=lab.TRAINED_CELLS)
        for line in (*r.notes, *r.sentences):
            st.markdown(line)
        with st.expander(t("trained_attention.lab.heads_expander")):
            st.markdown("\n".join(f"- {line}" for line in r.head_sentences))


trained_part()


# -- shift test ---------------------------------------------------------------------------------
@page.section(heading="attention_lab.shift_header", owns=("lab_prefix", "lab_shift"))
def shift_part() -> None:
    """Owns the prefix and the question: they change only the shift test. Its bars and sentence
    answer the question: they wait for Reveal (the bars folded)."""
    prefix = st.text_input(
        t("attention_lab.prefix"),
        t("attention_lab.prefix_default"),
        max_chars=lab.MAX_PREFIX_CHARS,
        key="lab_prefix",
        **URL,
        help=t("attention_lab.prefix_help", chars=lab.MAX_PREFIX_CHARS, tokens=lab.MAX_PREFIX_TOKENS),
    )
    sec = shift_section(text, seed(), methods, prefix, n_heads, causal, head, lang)
    if sec is None:
        st.info(t("attention_lab.no_prefix"))
        page.prose("shift")  # no question to wait for
    else:
        ask(sec.question)
        sh = sec.test
        # The bars and the sentence under them answer the question: they wait for Reveal (folded).
        with folded(sec.question, "bars"):
            plot(
                attention_lab_figures.labelled_bars(
                    [short(m) for m in sh.methods],
                    sh.max_change,
                    t("attention_lab.shift_title", k=len(sh.prefix), who=who(head)),
                    y_title=t("attention_lab.shift_y"),
                    log_y=True,
                    floor=1e-17,
                    highlight=[k for k, c in enumerate(sh.changed) if c],
                ),
                "lab_shift",
            )
        moved = [short(m) for m, c in zip(sh.methods, sh.changed, strict=True) if c]
        still = [short(m) for m, c in zip(sh.methods, sh.changed, strict=True) if not c]
        if answer_shown(sec.question, "changed"):
            page.prose("shift")  # what the bars measure, and which encodings move: the answer
            st.markdown(
                (t("attention_lab.changed", names=", ".join(moved)) if moved else t("attention_lab.changed_none"))
                + (t("attention_lab.unchanged", threshold=f"{lab.CHANGED:g}", names=", ".join(still)) if still else "")
            )


shift_part()


# -- dynamic NTK and a KV cache -------------------------------------------------------------------
# Going deeper: how a cache meets dynamic NTK is an implementation note, drawn after the length test.
@page.section(heading="attention_lab.kv.header", prose="kv-cache", owns=("lab_kv_cache",), deeper=True)
def kv_section() -> None:
    """Owns only its chart's Numbers panel: reads the shared encodings, heads and head above."""
    kv = kv_cache(text, seed(), n_heads, head)
    recomputed, cached_key, plain = (t(f"attention_lab.kv.{s}") for s in ("recomputed", "cached", "plain"))
    plot(
        F.mark_lines(
            F.lines(
                kv.lengths,
                {recomputed: kv.recomputed, cached_key: kv.cached, plain: kv.plain},
                t("attention_lab.kv.title", key=kv.n - 1, who=who(head)),
                x_title=t("attention_lab.kv.x"),
                y_title=t("attention_lab.kv.y"),
                dashed=(plain,),
            ),
            x={f"L = {kv.same_up_to}": kv.same_up_to},
        ),
        "lab_kv_cache",
    )
    st.markdown(t(f"attention_lab.kv.caption_{kv.situation}", **kv.facts))


# -- length test --------------------------------------------------------------------------------
@page.section(
    heading="attention_lab.length_header",
    prose="length",
    owns=("lab_len_distance", "lab_len_entropy", "lab_len_map", "lab_len_pick", "lab_length", "lab_train_len"),
)
def length_section() -> None:
    """Owns the training length, the length and the map's encoding: they change only this section."""
    l1, l2 = st.columns(2)
    train_len = l1.slider(
        t("attention_lab.train_len"), 4, 256, 32, key="lab_train_len", **URL, help=t("attention_lab.train_len_help")
    )
    length = l2.slider(
        t("attention_lab.length"),
        8,
        length_lab.MAX_LENGTH,
        128,
        step=8,
        key="lab_length",
        **URL,
        help=t("attention_lab.length_help", max=length_lab.MAX_LENGTH),
    )
    lt = length_test(text, seed(), methods, train_len, length, n_heads, causal, head)
    last = len(lt.tokens) - 1
    for r in lt.failed:
        missing = (
            t("attention_lab.missing_one", position=r.first_missing)
            if r.first_missing == last
            else t("attention_lab.missing_many", first=r.first_missing, last=last)
        )
        st.warning(t("attention_lab.no_rows", method=label(r.method), top=train_len - 1, missing=missing))
    if lt.ok:
        curves = st.container()  # filled below, so that the curves come before the map's selector
        ok_methods = [r.method for r in lt.ok]
        pick = st.selectbox(
            t("attention_lab.pick_long"), ok_methods, key="lab_len_pick", format_func=option_names(ok_methods, label)
        )
        mark = {f"L = {train_len}": train_len - 0.5}
        uniform = t("attention_lab.uniform")
        with curves:
            left, right = st.columns(2)
            with left:
                dist = F.lines(
                    lt.queries,
                    {**{short(r.method): r.distance for r in lt.ok}, uniform: lt.uniform_distance},
                    t("attention_lab.dist_title"),
                    x_title=t("attention_lab.x_query"),
                    y_title=t("attention_lab.dist_y"),
                    dashed=(uniform,),
                )
                plot(F.mark_lines(dist, x=mark), "lab_len_distance")
            with right:
                ent = F.lines(
                    lt.queries,
                    {**{short(r.method): r.entropy for r in lt.ok}, uniform: lt.uniform_entropy},
                    t("attention_lab.ent_title"),
                    x_title=t("attention_lab.x_query"),
                    y_title=t("attention_lab.ent_y"),
                    dashed=(uniform,),
                )
                plot(F.mark_lines(ent, x=mark), "lab_len_entropy")
        run, top = lt.big_map(pick)
        big_title = t(
            "attention_lab.big_title",
            method=short(run.method),
            n=len(lt.tokens),
            train_len=train_len,
            who=who(head),
            top=top,
        )
        plot(
            F.lab_map(
                run.weights,
                lt.tokens,
                big_title,
                kind="weights",
                value_label=t("attention_lab.value_weight"),
                zmax=top,
                height=620,
            ),
            "lab_len_map",
        )
    page.prose("length-read")


length_section()
kv_section()
