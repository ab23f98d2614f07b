"""Lab: tiny byte-level language models trained on real text, one per encoding and seed — how good
they are against n-grams, bits per byte against evaluation length, the same-bytes test, RoPE
stretched and fine-tuned, the papers beside it, the training curves, and the models on your text.

A page only shows: widgets → cached calls into explain/chapters/real_text*.py → figures → st.*. The
question, every verdict and every sentence that states a number are computed there from the study's
files (assets/lm/study/); the models on the learner's text are the first shipped set (assets/lm/).
"""

import streamlit as st

from explain.chapters import real_text as ch
from explain.chapters import real_text_evidence as rte
from explain.chapters import real_text_figures
from explain.chapters import real_text_study as study
from explain.chapters import trained_attention as ta
from explain.chapters import trained_attention_figures as taf
from explain.question import Question
from ui.cache import cached
from ui.common import plot, sentence
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask, folded
from ui.section import open_chapter
from ui.trained import head_grid
from ui.trained import read_text as read_text_cached
from ui.url_state import URL, Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
setup = cached(ch.setup)
length_curves = cached(ch.length_curves)
training_curves = cached(ch.training_curves)
rise_question = cached(ch.rise_question)
same_bytes = cached(rte.same_bytes)
anchors = cached(rte.anchors)
stretches = cached(rte.stretches)
t5_far_bucket = cached(rte.t5_far_bucket)
papers = cached(rte.papers)
lang = current()
STUDY = study.STUDY  # where the study's runs live (a string: it is part of every cache key)
DEFAULT_MODEL = "alibi"  # opens on ALiBi: its heads' decaying windows are the easiest to read

# ------------------------------------------------------------------------------ what was trained
st.header(t("real_text.setup_header"))
su = setup(STUDY, lang)
if su is None:
    st.warning(t("real_text.no_models"))
    st.stop()
page.prose("setup")
# The facts are sentences: a list wraps them where a table's cells would cut them off.
what, value = su.facts.values()
st.markdown("\n".join(f"- **{w}**: {v}" for w, v in zip(what, value, strict=True)))
st.dataframe(su.models, hide_index=True, key="real_text_models")
tc = training_curves(STUDY, lang)
st.caption(
    t(
        "real_text.models_caption",
        windows=tc.heldout_windows if tc else 0,
        length=ch.TRAIN_LEN,
        runs=su.runs,
        hours=su.cpu_hours,
    )
)
if su.missing:
    st.info(t("real_text.missing_runs", names=", ".join(su.missing)))

# ----------------------------------------------------------------------- how good: the anchors
st.header(t("real_text.anchor.header"))
page.prose("anchors")
an = anchors(STUDY, lang)
if an is not None:
    st.dataframe(an.models, hide_index=True, key="real_text_scores")
    st.dataframe(an.anchors, hide_index=True, key="real_text_anchors")
    st.caption(an.caption)
    st.markdown("\n".join(f"- {s}" for s in an.sentences))


# ------------------------------------------------------------------------- train short, read long
@page.section(heading="real_text.lengths_header", prose="lengths", owns=("real_text_lengths", "real_text_stretches"))
def lengths_section(q: Question | None) -> None:
    """Owns the stretches toggle: it changes only this section's chart and sentences. The chart and
    the changes answer the question: they wait for Reveal (the chart folded), and so do the sections
    below that state the changes: Reveal reruns the whole page."""
    if q is not None:
        ask(q, whole_page=True)
    with_stretches = st.toggle(
        t("real_text.with_stretches"),
        value=True,
        key="real_text_stretches",
        **URL,
        help=t("real_text.with_stretches_help"),
    )
    lc = length_curves(STUDY, lang, with_stretches)
    if lc is None:
        return
    base, top = lc.lengths[0], lc.lengths[-1]
    with folded(q, "lengths"):
        plot(
            real_text_figures.length_lines(
                lc.lengths,
                lc.lines,
                t("real_text.fig_lengths", train=ch.TRAIN_LEN),
                x_title=t("real_text.length_x"),
                y_title=t("real_text.bpb_y"),
                train_length=ch.TRAIN_LEN,
                train_mark=t("real_text.train_mark"),
                note=t("real_text.missing_note", names=", ".join(lc.missing), train=ch.TRAIN_LEN) if lc.missing else "",
            ),
            "real_text_lengths",
        )
    one = lc.seeds() < 2
    st.caption(t("real_text.lengths_caption" + ("_one" if one else ""), bytes=lc.eval_bytes, seeds=lc.seeds()))
    if answer_shown(q, "changes"):
        page.prose("lengths-read")
        st.markdown(t("real_text.changes_header", base=base, top=top))
        st.markdown("\n".join(f"- {s}" for s in lc.sentences))


rise_q = rise_question(STUDY, lang)
lengths_section(rise_q)

# ------------------------------------------------------------------------ the same bytes
st.header(t("real_text.same.header"))
page.prose("same-bytes")
sb = same_bytes(STUDY, lang)
if sb is not None and answer_shown(rise_q, "same_bytes"):  # the curves' changes answer the question
    st.markdown(sb.curve)
    st.dataframe(sb.table, hide_index=True, key="real_text_same_bytes")
    st.caption(sb.caption)
    st.markdown("\n".join(f"- {s}" for s in sb.sentences))
    t5_sentence = t5_far_bucket(STUDY, lang)
    if t5_sentence:
        st.markdown(t5_sentence)

# ------------------------------------------------------------- RoPE: stretched, or fine-tuned
pi = stretches(STUDY, lang)
if pi is not None:
    st.header(t("real_text.pi.header"))
    page.prose("stretches")
    if answer_shown(rise_q, "stretches"):
        st.dataframe(pi.table, hide_index=True, key="real_text_pi")
        st.markdown("\n".join(f"- {s}" for s in pi.sentences))

# ------------------------------------------------------------------------------- beside the papers
st.header(t("real_text.papers_header"))
page.prose("papers")
pp = papers(STUDY, lang)
if pp is not None:
    st.markdown(t("real_text.alibi_quote"))
    st.dataframe(pp.cope_table, hide_index=True, key="real_text_cope_fig3")
    st.caption(t("real_text.cope_caption", train=ch.COPE_FIG3_TRAIN))
    if answer_shown(rise_q, "papers"):  # each model's change from 128 to 1024 bytes: the answer
        st.markdown(t("real_text.reproduces_header"))
        st.markdown("\n".join(f"- {s}" for s in pp.sentences))
    st.markdown(pp.scale)

# -------------------------------------------------------------------------------- training curves
st.header(t("real_text.curves_header"))
page.prose("curves")
if tc is not None:
    left, right = st.columns(2)
    with left:
        plot(
            real_text_figures.curve_lines(
                tc.steps,
                tc.train,
                t("real_text.fig_train", every=tc.every),
                x_title=t("real_text.step"),
                y_title=t("real_text.bpb_y"),
            ),
            "real_text_curve_train",
        )
    with right:
        plot(
            real_text_figures.curve_lines(
                tc.steps,
                tc.heldout,
                t("real_text.fig_heldout", windows=tc.heldout_windows, length=ch.TRAIN_LEN),
                x_title=t("real_text.step"),
                y_title=t("real_text.bpb_y"),
            ),
            "real_text_curve_heldout",
        )
    st.markdown("\n".join(f"- {s}" for s in tc.sentences))


# ---------------------------------------------------------------------------------- on your text
@page.section(
    heading="real_text.text_header",
    prose="your-text",
    owns=(
        "real_text_heads",
        "real_text_next",
        "real_text_surprise",
        "real_text_model",
        "real_text_shown",
        "real_text_stretch",
    ),
)
def text_section() -> None:
    """Owns the model, stretch and map pickers: they change only this section."""
    st.caption(t("real_text.first_set", steps=ch.first_set_steps()))
    text = sentence()
    c1, c2 = st.columns(2)
    MODEL = Param.choice("real_text_model", ta.MODELS, default=DEFAULT_MODEL)
    MODEL.restore()
    st.session_state.setdefault(MODEL.key, DEFAULT_MODEL)
    model = MODEL.widget(
        c1.selectbox,
        t("real_text.model"),
        ta.MODELS,
        format_func=option_names(ta.MODELS, lambda n: ch.enc_label(n, lang)),
        help=t("real_text.model_help", n=len(ta.MODELS)),
    )
    stretch = ""
    if model == ta.STRETCHED:  # the model the registry's stretches apply to (lab.lm.STRETCHED)
        options = ("", *ta.STRETCHES)
        STRETCH = Param.choice("real_text_stretch", options, default="")
        stretch = STRETCH.widget(
            c2.radio,
            t("real_text.stretch"),
            options,
            format_func=option_names(options, lambda s: ch.enc_label(s, lang) if s else t("real_text.no_stretch")),
            horizontal=True,
            help=t("real_text.stretch_help"),
        )
    read = read_text_cached(model, text, stretch, lang)  # ui/trained.py's one bounded cache of reads
    st.caption(t("real_text.limits", limit=ch.MAX_TEXT_BYTES, x=ch.MAX_TEXT_BYTES // ch.TRAIN_LEN, train=ch.TRAIN_LEN))
    st.caption(
        t(
            "trained_attention.lab.bytes_note",
            n=read.n_bytes,
            layers=read.attention.shape[0],
            heads=read.attention.shape[1],
        )
    )
    for note in read.notes:
        st.info(note)
    if read.n == 0:
        st.info(read.sentences[0])
        return
    maps = read.maps
    shown = "weights"
    if len(maps) > 1:
        SHOWN = Param.choice("real_text_shown", maps, default=maps[0])
        SHOWN.settle(maps)  # another model has other maps
        shown = SHOWN.widget(
            st.radio,
            t("trained_attention.lab.show"),
            maps,
            format_func=option_names(maps, lambda m: ta.shown_label(m, lang)),
            horizontal=True,
            help=t("trained_attention.lab.show_help"),
        )
    label = ch.enc_label(stretch or model, lang)
    mark = t("trained_attention.mark", train=ch.TRAIN_LEN)
    head_grid(read, label, shown, "real_text_heads", max_cells=taf.READING_CELLS)
    with st.expander(t("trained_attention.lab.heads_expander")):
        st.markdown("\n".join(f"- {s}" for s in read.head_sentences))
    left, right = st.columns(2)
    with left:
        plot(
            taf.next_bytes(
                read.top_labels,
                read.top_probs,
                t("trained_attention.readout_title", model=label),
                x_title=t("trained_attention.readout_x"),
            ),
            "real_text_next",
        )
    with right:
        plot(
            taf.surprise_bars(
                read.labels,
                read.surprise,
                t("trained_attention.surprise_title", model=label),
                x_title=t("trained_attention.surprise_x"),
                y_title=t("trained_attention.surprise_y"),
                mark_at=ch.TRAIN_LEN,
                mark_label=mark,
            ),
            "real_text_surprise",
        )
    st.markdown("\n".join(f"- {s}" for s in read.sentences))


text_section()

st.header(t("real_text.regenerate_header"))
page.prose("regenerate")
