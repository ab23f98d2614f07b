"""Lab: tiny byte-level language models trained on real text, one per encoding — bits per byte
against evaluation length, the papers beside it, the training curves, and the models on your text.

A page only shows: widgets → cached calls into explain/chapters/real_text.py → figures → st.*. The
question, every verdict and every sentence that states a number are computed there from the
shipped assets/lm/index.json.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import real_text as ch
from explain.chapters import real_text_figures
from lab.corpus import build
from lab.lm import read_text, train_lm, window_bits
from ui.cache import cached
from ui.common import header, plot, prose
from ui.i18n import activate, current, t
from ui.question import ask
from ui.url_state import URL

KEY = "real-text"
header(KEY, sources=(build, train_lm, window_bits, read_text))
prose(KEY, "intro")

# Bounded caches shared by every session; each result is a few kilobytes read off index.json.
setup = cached(ch.setup, max_entries=4)
length_curves = cached(ch.length_curves, max_entries=8)
papers = cached(ch.papers, max_entries=4)
training_curves = cached(ch.training_curves, max_entries=4)
rise_question = cached(ch.rise_question, max_entries=4)
lang = current()
DIR = ch.DIR  # where the shipped models live (a string: it is part of every cache key)

# ------------------------------------------------------------------------------ what was trained
st.header(t("real_text.setup_header"))
su = setup(DIR, lang)
if su is None:
    st.warning(t("real_text.no_models"))
    st.stop()
prose(KEY, "setup")
st.dataframe(su.facts, hide_index=True, key="real_text_facts")
st.dataframe(su.models, hide_index=True, key="real_text_models")
tc = training_curves(DIR, lang)
st.caption(
    t(
        "real_text.models_caption",
        total=su.total_cpu_minutes,
        windows=tc.heldout_windows if tc else 0,
        length=ch.TRAIN_LEN,
    )
)


# ------------------------------------------------------------------------- train short, read long
@st.fragment
def lengths_section() -> None:
    """Owns the stretches toggle: it changes only this section's chart and sentences."""
    activate()  # a fragment rerun skips app.py, which sets the language of a full run
    st.header(t("real_text.lengths_header"))
    prose(KEY, "lengths")
    q = rise_question(DIR, lang)
    if q is not None:
        ask(q)
    with_stretches = st.toggle(
        t("real_text.with_stretches"),
        value=True,
        key="real_text_stretches",
        **URL,
        help=t("real_text.with_stretches_help"),
    )
    lc = length_curves(DIR, lang, with_stretches)
    if lc is None:
        return
    base, top = lc.lengths[0], lc.lengths[-1]
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
    st.caption(
        t(
            "real_text.lengths_caption",
            bytes=lc.eval_bytes,
            n_lo=lc.windows_at(top),
            n_hi=lc.windows_at(base),
            top=top,
            base=base,
        )
    )
    prose(KEY, "lengths-read")
    st.markdown(t("real_text.changes_header", base=base, top=top))
    st.markdown("\n".join(f"- {s}" for s in lc.sentences))


lengths_section()

# ------------------------------------------------------------------------------- beside the papers
st.header(t("real_text.papers_header"))
prose(KEY, "papers")
pp = papers(DIR, lang)
if pp is not None:
    st.markdown(t("real_text.alibi_quote"))
    st.dataframe(pp.cope_table, hide_index=True, key="real_text_cope_fig3")
    st.caption(t("real_text.cope_caption", train=ch.COPE_FIG3_TRAIN))
    st.markdown(t("real_text.reproduces_header"))
    st.markdown("\n".join(f"- {s}" for s in pp.sentences))
    st.markdown(pp.scale)

# -------------------------------------------------------------------------------- training curves
st.header(t("real_text.curves_header"))
prose(KEY, "curves")
if tc is not None:
    left, right = st.columns(2)
    with left:
        plot(
            F.lines(
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
            F.lines(
                tc.steps,
                tc.heldout,
                t("real_text.fig_heldout", windows=tc.heldout_windows, length=ch.TRAIN_LEN),
                x_title=t("real_text.step"),
                y_title=t("real_text.bpb_y"),
            ),
            "real_text_curve_heldout",
        )

# ---------------------------------------------------------------------------------- on your text
st.header(t("real_text.text_header"))
prose(KEY, "your-text")

st.header(t("real_text.regenerate_header"))
prose(KEY, "regenerate")
