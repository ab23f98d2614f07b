"""The byte-level models trained on real text (lab/lm.py), on the learner's sentence, as pieces a page
can show: the every-head grid (the attention lab, the real-text chapter) and a closed panel an
encoding's own chapter puts under its random-layer maps.

The panel is lazy, like the Numbers panels and the code panel: while it is closed nothing is read,
computed or sent, so a chapter's first view costs what it cost before. Opened, it reads the shipped
model of the chapter's encoding (one cached read per sentence for everyone) and draws every head.
"""

from __future__ import annotations

import streamlit as st

from explain.chapter import Chapter
from explain.chapters import real_text as rt
from explain.chapters import trained_attention as ta
from explain.chapters import trained_attention_figures as taf
from ui.cache import cached
from ui.common import plot, sentence
from ui.i18n import current, option_names, t
from ui.section import section

# A read of 1024 bytes keeps 8 maps of 256² float32 (~2 MB) for drawing: a small bound.
read_text = cached(ta.read_text)


def head_grid(read: ta.TrainedRead, label: str, shown: str, key: str, max_cells: int | None = None) -> None:
    """Every head of every layer of one read, coloured up to its 99th percentile (ta.zmax); max_cells:
    bytes per panel axis drawn at most (default: the grid's share of a figure's cells)."""
    lang = current()
    top = read.zmax(shown)
    plot(
        taf.head_grid(
            read.grid(shown),
            read.drawn_labels,
            t("trained_attention.grid_title", model=label, n=read.n, shown=ta.shown_label(shown, lang)),
            panel_titles=read.panel_titles,
            cols=read.n_heads,
            value_label=ta.value_label(shown, lang),
            row_title=t("trained_attention.query"),
            col_title=t("trained_attention.key"),
            mark_at=ta.TRAIN_LEN,
            mark_label=t("trained_attention.mark", train=ta.TRAIN_LEN),
            zmax=top,
            scale_title=ta.scale_label(shown, top, lang),
            max_cells=max_cells,
        ),
        key,
    )


@section()
def trained_panel(chapter: Chapter) -> None:
    """Owns its open state and, given several encodings, which one it reads: a closed expander, "the
    same encoding, trained on real text, on your sentence". The chapter's `encodings` are the
    registry names it is about (RoPE's stretches read the RoPE model stretched); those without a trained
    model are left out, and with none left there is no panel. Reads the shared sentence."""
    chapter_key = chapter.key
    names = tuple(e for e in chapter.encodings if ta.resolve(e))
    if not names:
        return
    lang = current()
    title = " / ".join(rt.enc_label(e, lang) for e in names)
    box = st.expander(
        t("trained_attention.chapter_panel.open", model=title), key=f"{chapter_key}_trained", on_change="rerun"
    )
    if not box.open:
        return
    with box:
        encoding = names[0]
        if len(names) > 1:
            encoding = st.radio(
                t("trained_attention.chapter_panel.pick"),
                names,
                horizontal=True,
                key=f"{chapter_key}_trained_pick",
                format_func=option_names(names, lambda e: rt.enc_label(e, lang)),
            )
        model, stretch = ta.resolve(encoding) or (encoding, "")
        label = rt.enc_label(encoding, lang)
        read = read_text(model, sentence(), stretch, lang)
        st.markdown(t("trained_attention.chapter_panel.intro", model=label, train=ta.TRAIN_LEN))
        st.caption(t("trained_attention.lab.bytes_note", n=read.n_bytes, layers=read.n_layers, heads=read.n_heads))
        for note in read.notes:
            st.info(note)
        if read.n == 0:
            st.info(read.sentences[0])
            return
        head_grid(read, label, "weights", f"{chapter_key}_trained_grid")
        st.markdown("\n".join(f"- {s}" for s in (*read.sentences, *read.head_sentences)))
