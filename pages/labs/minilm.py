"""Lab: a real pretrained model (all-MiniLM-L6-v2) on the learner's sentence.

A page only shows: widgets → cached calls into explain/chapters/minilm.py → figures → st.*. The
model runs, the head labels, the question and every number a sentence states are computed there.
"""

import streamlit as st

from explain import figures as F
from explain import i18n
from explain.chapters import minilm as ch
from explain.chapters import minilm_figures
from ui.cache import cached, resource
from ui.common import inline_tokens, plot, seed, sentence
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# The model is loaded once per server process and only read afterwards (models.minilm.load).
warm = resource(ch.warm)
with st.spinner(t("minilm.loading")):  # the spinner speaks the learner's language
    warm()
# Shared by every learner, bounded where each function is defined (explain/bounds.py).
wordpieces = cached(ch.wordpieces)
run = cached(ch.run)
position_heads = cached(ch.position_heads)
table_shape = cached(ch.position_table_shape)
lang = current()


def _grid_figure(text: str, lang: str):
    """The 72 thumbnails: ~0.1 s of plotly to build, so the figure is cached on the text (like the
    numbers it shows, which come from the two cached calls) and on the language of its words."""
    base, heads = run(text), position_heads(text)
    marks = {(h.layer - 1, h.head - 1): ch.target_mark(h.target, lang) for h in heads.labels}
    thumbs, block = ch.thumbnail_weights(base.weights)
    title = i18n.t("minilm.grid_title", lang) + (i18n.t("minilm.grid_block", lang, block=block) if block > 1 else "")
    return minilm_figures.attention_thumbnails(thumbs, title, marks=marks)


grid_figure = cached(_grid_figure, max_entries=16)

text = sentence()
pieces = wordpieces(text)
if pieces.kept == 0:
    st.info(t("minilm.no_text"))
    st.stop()
if pieces.truncated:
    st.warning(t("minilm.truncated", found=pieces.n_found, kept=pieces.kept, max_positions=ch.MAX_POSITIONS))

# -- tokens ------------------------------------------------------------------------------------
st.header(t("minilm.tokens"))
page.prose("tokens")
n = len(pieces.tokens)
unk = sum(tok == "[UNK]" for tok in pieces.tokens)
jamo = ch.hangul_letters(pieces.tokens)
st.markdown(t("minilm.token_count", n=n, kept=pieces.kept, unk=t("minilm.token_count_unk", unk=unk) if unk else ""))
st.markdown(inline_tokens(pieces.tokens))
if unk or jamo:  # a Korean sentence, emoji, …: say why the model reads it this way
    st.caption(
        " ".join(
            ([t("minilm.unk_note", unk=unk)] if unk else []) + ([t("minilm.jamo_note", jamo=jamo)] if jamo else [])
        )
    )
rows, cols = table_shape()
st.caption(t("minilm.table_caption", rows=rows, cols=cols, last=n - 1))

# -- all heads ---------------------------------------------------------------------------------
st.header(t("minilm.grid"))
page.prose("grid")
base = run(text)
heads = position_heads(text)
plot(grid_figure(text, lang), "minilm_grid")


@page.section(owns=("minilm_big", "minilm_head", "minilm_layer"))
def head_part() -> None:
    """Owns the layer and head pickers: they change only the big map (the grid above stays)."""
    c1, c2 = st.columns(2)
    first = heads.labels[0] if heads.labels else None  # open on a head with a measured role
    layer = c1.selectbox(
        t("minilm.layer"),
        list(range(1, 7)),
        index=(first.layer - 1) if first else 0,
        key="minilm_layer",
        **URL,
        help=t("minilm.layer_help"),
    )
    head = c2.selectbox(
        t("minilm.head"),
        list(range(1, 13)),
        index=(first.head - 1) if first else 0,
        key="minilm_head",
        **URL,
        help=t("minilm.head_help"),
    )
    role = heads.role(layer, head)
    big_title = t("minilm.big_title", layer=layer, head=head) + (
        t("minilm.big_role", target=ch.target_text(role.target)) if role else ""
    )
    plot(
        F.lab_map(
            base.head_weights(layer, head),
            base.tokens,
            big_title,
            kind="weights",
            value_label=t("minilm.weight"),
            height=int(min(680, max(380, 150 + 16 * n))),
        ),
        "minilm_big",
    )
    st.caption(
        t(
            "minilm.head_caption",
            values=" · ".join(
                f"{ch.target_mark(g)} {v:.2f}" for g, v in zip(ch.TARGETS, heads.head_masses(layer, head), strict=True)
            ),
        )
    )


head_part()


# -- position heads ----------------------------------------------------------------------------
@page.section(heading="minilm.heads", prose="heads", owns=("minilm_masses", "minilm_src"))
def heads_section() -> None:
    """Owns the source of the masses: it changes only this chart."""
    SRC = Param.choice("minilm_src", ch.SOURCES, default="reference")
    src = SRC.widget(
        st.radio,
        t("minilm.src"),
        ch.SOURCES,
        horizontal=True,
        format_func=option_names(ch.SOURCES, lambda v: t(f"minilm.src_opt.{v}")),
        help=t("minilm.src_help"),
    )
    plot(
        minilm_figures.layer_head_maps(
            heads.panels(src),
            t("minilm.masses_title", src=t(f"minilm.src_opt.{src}")),
            panel_titles=[t("minilm.panel_on", target=ch.target_text(g)) for g in ch.TARGETS],
            value_label=t("minilm.share"),
            cols=2,
            panel_height=250,
        ),
        "minilm_masses",
    )
    if heads.labels:
        st.markdown(t("minilm.labelled", threshold=heads.threshold))
        st.markdown(
            "\n".join(
                t(
                    "minilm.labelled_item",
                    layer=h.layer,
                    head=h.head,
                    target=ch.target_text(h.target),
                    mass=h.mass,
                    mass_sentence=h.mass_sentence,
                )
                for h in heads.labels
            )
        )
    else:
        st.markdown(t("minilm.no_labels", threshold=heads.threshold))


heads_section()


# -- position id experiment ---------------------------------------------------------------------
@page.section(heading="minilm.experiment", prose="experiment", owns=("minilm_change", "minilm_mode", "minilm_shift"))
def experiment_section() -> None:
    """Owns the question, the mode and the shift: they change only the experiment."""
    question = ch.shift_question(heads, ch.compare(base, run(text, "shift", ch.question_shift(n), 0)), lang)
    if question is not None:
        ask(question)
    e1, e2 = st.columns(2)
    MODE = Param.choice("minilm_mode", ch.MODES, default="shift")
    mode = MODE.widget(
        e1.radio,
        t("minilm.mode"),
        ch.MODES,
        horizontal=True,
        format_func=option_names(ch.MODES, lambda v: t(f"minilm.mode_opt.{v}")),
        help=t("minilm.mode_help"),
    )
    max_shift = ch.max_shift(n)
    shift = e2.slider(
        t("minilm.shift"),
        0,
        max_shift,
        min(ch.QUESTION_SHIFT, max_shift),
        key="minilm_shift",
        **URL,
        disabled=mode != "shift",
        help=t("minilm.shift_help", max_shift=max_shift, last=ch.MAX_POSITIONS - 1),
    )
    shift = min(int(shift), max_shift)  # a value kept from a shorter sentence (or a URL) may exceed the new bound
    pc = ch.compare(base, run(text, mode, shift, seed()))
    ids, more = pc.ids_preview()
    st.caption(t("minilm.ids_caption", ids=", ".join(str(v) for v in ids) + (" …" if more else "")))
    panel = t("minilm.panel.shift", shift=shift) if mode == "shift" else t(f"minilm.panel.{mode}")
    # How much each head moved is the question's answer: the map, the most/least line and the
    # labelled heads' moves wait for Reveal (the map folded).
    with folded(question, "change"):
        plot(
            minilm_figures.layer_head_maps(
                pc.panels,
                t("minilm.change_title"),
                panel_titles=[panel],
                value_label=t("minilm.moved"),
                cols=1,
                panel_height=300,
            ),
            "minilm_change",
        )
    if answer_shown(question, "moves"):
        (l1, h1, v1), (l2, h2, v2) = pc.most, pc.least
        st.markdown(t("minilm.most_least", l1=l1, h1=h1, v1=v1, l2=l2, h2=h2, v2=v2, hidden=pc.hidden_change))
        if heads.labels:
            st.markdown(
                t("minilm.labelled_moves", panel=panel)
                + "\n"
                + "\n".join(
                    t(
                        "minilm.labelled_move",
                        layer=h.layer,
                        head=h.head,
                        target=ch.target_text(h.target),
                        moved=pc.moved(h.layer, h.head),
                    )
                    for h in heads.labels
                )
            )
        page.prose("experiment-read")  # it reads the answer off the list


experiment_section()
