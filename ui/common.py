"""Streamlit-side helpers every chapter page shares: header, the learner's tokens, plots, prose.

Pages stay thin: widgets → a cached call into explain/ → a figure from explain/figures → these.
"""

from __future__ import annotations

import inspect
import re

import streamlit as st
from streamlit.delta_generator_singletons import get_last_dg_added_to_context_stack

from encoders.text import MAX_TOKENS, Tokens, tokenize
from explain.chapter import Chapter, resolve
from explain.figures.margins import ASSUMED_PLOT_WIDTH, HALF_PLOT_WIDTH, fit_margins
from explain.numbers import MAX_TABLE_CELLS, figure_summary, heatmap_tables, trace_table
from explain.prose import section
from ui.chart import chart
from ui.i18n import t
from ui.presenter import presenter, scale_figure

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"scale": 2}}


def header(chapter: Chapter) -> None:
    """Title, the one-line idea, the paper, and the live source of what the page runs (all from the
    chapter's declaration; the words from the catalogue, in this run's language)."""
    st.title(t(f"chapters.{chapter.key}.title"))
    st.markdown(f"*{t(f'chapters.{chapter.key}.idea')}*")
    papers, sources = chapter.papers, chapter.sources
    # A Material icon (Streamlit ships the font), not the U+1F4C4 page emoji: a machine without a
    # colour emoji font (a bare Linux, headless Chromium) drew that as an empty box.
    lines = [f"{p.authors} ({p.year}). [{p.title}]({p.url})" for p in papers]
    if len(lines) <= 2:
        for line in lines:
            st.caption(f":material/article: {line}")
    else:  # a chapter about several papers (Stretching RoPE: five) lists them folded
        with st.expander(t("common.page.papers", n=len(lines)), icon=":material/article:"):
            st.markdown("\n".join(f"- {line}" for line in lines))
    if sources and not presenter():  # a secondary panel: not on the projector
        # Lazy, like the Numbers panels: its content runs and is sent only while it is open. An
        # st.code anywhere on a page makes the browser fetch and parse Streamlit's 1.5 MB syntax
        # highlighter before the page is drawn, for a panel most learners never open.
        box = st.expander(t("common.page.show_code"), key="page_code", on_change="rerun")
        if box.open:
            with box:
                st.caption(t("common.page.show_code_caption"))
                for source in sources:
                    st.code(inspect.getsource(resolve(source)), language="python")


def prose(chapter_key: str, key: str) -> None:
    st.markdown(section(chapter_key, key))


def sentence() -> str:
    """The learner's sentence as typed (the sidebar's box; a link's ?s=). Every page reads it here:
    explain/ functions take it as text (their cache key) and tokenise it themselves."""
    value = st.session_state.get("sentence", "")
    return value if isinstance(value, str) else ""


def sentence_tokens(max_tokens: int = MAX_TOKENS) -> Tokens:
    """The shared sentence, tokenised. Stops the page with a friendly note when there is no text,
    and says how many tokens were kept when the text is longer than the page draws."""
    tokens = tokenize(sentence(), max_tokens=max_tokens)
    if tokens.empty:
        st.info(t("common.page.no_text"))
        st.stop()
    if tokens.truncated:
        st.warning(
            t("common.page.cut", found=tokens.n_found, kept=len(tokens))
            + (t("common.page.chars_cut") if tokens.chars_cut else "")
        )
    return tokens


def inline_tokens(tokens) -> str:
    """Tokens as Markdown code spans, safe for any typed text: inside a code span nothing is
    interpreted (no links, no emphasis, no math). The tokenizer makes a backtick a token of its
    own, and a lone backtick needs a double-backtick fence with spaces."""
    return " · ".join(f"`` {t} ``" if "`" in t else f"`{t}`" for t in tokens)


def seed() -> int:
    return int(st.session_state.get("seed", 0))


def control_row():
    """A row of a section's controls that wraps: each toggle and button keeps its whole label and
    the sliders and pickers share the rest; on a narrow main column (a 900 px window, a projector's
    1024 px) what does not fit goes to the next line. Fixed-ratio st.columns cut a toggle's label
    to a few letters there ("Causal (decoder)" showed 15 of its 98 px)."""
    return st.container(horizontal=True, vertical_alignment="bottom", gap="medium")


def plot(fig, key: str) -> None:
    """A figure from explain.figures, with plotly's PNG button (file named after `key`, 2× scale),
    and under it a "Numbers" expander: a computed summary of what the chart shows (its extremes and
    where they are), the figure's data as a table and as CSV, for a screen reader,
    a spreadsheet or a learner who wants the exact values. The expander is lazy (its content runs
    only while it is open), so a closed one costs nothing. Presenter mode: taller, larger text."""
    scale_figure(fig)
    fit_margins(fig, _plot_width())  # after scaling: the margins follow the text's size
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-") or "figure"
    config = {**PLOT_CONFIG, "toImageButtonOptions": {"scale": 2, "filename": f"pe-atlas-{name}"}}
    # No Streamlit chart theme (ui/chart.py draws the figure as it is): Streamlit's draws tick labels
    # and axis titles in #808495, 3.8:1 on white (WCAG AA asks 4.5:1); the atlas's own template
    # (plotly_white's layout) draws them at 10.6:1.
    chart(fig, key, config)
    box = st.expander(
        t("common.numbers.expander"), key=f"{key}__numbers", on_change="rerun", icon=":material/table:", type="compact"
    )
    if box.open:
        with box:
            numbers_table(fig, key, name)


def _plot_width() -> float:
    """The width a chart's plot will be drawn at, for its margins: a chart inside st.columns is
    taken to be in one of two (the pages' usual split), anything else spans the page. Its x axis's
    auto ticks and a legend's rows depend on it; a wrong guess costs plotly's second draw, never a
    clipped label (explain/figures/margins.py). Streamlit keeps no public record of the current
    container, so this reads the `with` stack its own `st.foo` calls use."""
    dg = get_last_dg_added_to_context_stack()
    while dg is not None:
        if getattr(dg, "_block_type", None) == "column":
            return HALF_PLOT_WIDTH
        dg = getattr(dg, "_parent", None)
    return ASSUMED_PLOT_WIDTH


def numbers_table(fig, key: str, name: str) -> None:
    """The figure's numbers: a table (bounded: big maps are CSV only) and a CSV download."""
    tables = heatmap_tables(fig)
    lines = trace_table(fig)
    if lines is not None:
        tables.append((t("common.numbers.lines_and_bars"), lines))
    if not tables:
        st.caption(t("common.numbers.no_table"))
        return
    # What the chart shows, in computed sentences a screen reader reads before the table. st.text:
    # axis labels can be typed tokens, and plain text interprets nothing.
    summary = figure_summary(fig)
    if summary:
        st.text("\n".join(summary), width="stretch")
    k = 0
    if len(tables) > 1:
        k = st.selectbox(
            t("common.numbers.panel"),
            range(len(tables)),
            format_func=lambda i: tables[i][0] or t("common.numbers.panel_name", k=i + 1),
            key=f"{key}__panel",
            help=t("common.numbers.panel_help"),
        )
    label, df = tables[k]
    cells = df.shape[0] * df.shape[1]
    if cells <= MAX_TABLE_CELLS:
        st.dataframe(df, key=f"{key}__table", height=min(420, 38 + 35 * df.shape[0]))
    else:
        st.caption(t("common.numbers.too_many", rows=df.shape[0], cols=df.shape[1], cells=cells))
    slug = re.sub(r"[^A-Za-z0-9_-]+", "-", label).strip("-")
    is_heat = k < len(tables) - (lines is not None)
    st.download_button(
        t("common.numbers.download"),
        data=lambda: df.to_csv(index=is_heat).encode("utf-8"),
        file_name=f"pe-atlas-{name}{'-' + slug if slug and len(tables) > 1 else ''}.csv",
        mime="text/csv",
        key=f"{key}__csv",
        icon=":material/download:",
        on_click="ignore",
    )
