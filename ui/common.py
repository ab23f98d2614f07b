"""Streamlit-side helpers every chapter page shares: header, the learner's tokens, plots, prose.

Pages stay thin: widgets → a cached call into explain/ → a figure from explain/figures → these.
"""

from __future__ import annotations

import html
import inspect
import re

import numpy as np
import pandas as pd
import streamlit as st

from encoders.base import Paper
from encoders.text import MAX_TOKENS, Tokens, tokenize
from explain.prose import section
from ui import classroom
from ui.chapters import BY_KEY
from ui.i18n import t

PLOT_CONFIG = {"displaylogo": False, "toImageButtonOptions": {"scale": 2}}
MAX_TABLE_CELLS = 65_536  # a numbers table larger than this (a 256 × 256 map) is offered as CSV only


def header(chapter_key: str, paper: Paper | None = None, sources: tuple = ()) -> None:
    """Title, the one-line idea, the paper, and the live source of what the page runs."""
    chapter = BY_KEY[chapter_key]
    st.title(chapter.title)
    st.markdown(f"*{chapter.idea}*")
    if paper is not None:
        st.caption(f"📄 {paper.authors} ({paper.year}). [{paper.title}]({paper.url})")
    if sources and not classroom.presenter():  # a secondary panel: not on the projector
        with st.expander(t("common.page.show_code")):
            st.caption(t("common.page.show_code_caption"))
            for obj in sources:
                st.code(inspect.getsource(obj), language="python")


def prose(chapter_key: str, key: str) -> None:
    st.markdown(section(chapter_key, key))


def sentence_tokens(max_tokens: int = MAX_TOKENS) -> Tokens:
    """The shared sentence, tokenised. Stops the page with a friendly note when there is no text,
    and says how many tokens were kept when the text is longer than the page draws."""
    tokens = tokenize(st.session_state.get("sentence", ""), max_tokens=max_tokens)
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


def plot(fig, key: str) -> None:
    """A figure from explain.figures, with plotly's PNG button (file named after `key`, 2× scale),
    and under it a "Numbers" expander: the figure's data as a table and as CSV, for a screen reader,
    a spreadsheet or a learner who wants the exact values. The expander is lazy (its content runs
    only while it is open), so a closed one costs nothing. Presenter mode: taller, larger text."""
    classroom.scale_figure(fig)
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", key).strip("-") or "figure"
    config = {**PLOT_CONFIG, "toImageButtonOptions": {"scale": 2, "filename": f"pe-atlas-{name}"}}
    st.plotly_chart(fig, key=key, width="stretch", config=config)
    box = st.expander(
        t("common.numbers.expander"), key=f"{key}__numbers", on_change="rerun", icon=":material/table:", type="compact"
    )
    if box.open:
        with box:
            numbers_table(fig, key, name)


# ------------------------------------------------------------------------- figure data as tables
def _label(v) -> str:
    """A tick label or token name as plain text: the figures escape HTML for plotly."""
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        v = int(v)
    return html.unescape(str(v))


def _unique(labels: list[str]) -> list[str]:
    """Column / row headers must be unique: repeated tokens become "3·the"."""
    if len(set(labels)) == len(labels):
        return labels
    return [f"{k}·{t}" for k, t in enumerate(labels)]


def _axis_labels(values, axis, n: int) -> list[str]:
    """Headers for one heatmap axis: its values, or the axis's tick text where every value has one."""
    values = list(values) if values is not None else list(range(n))
    ticks = getattr(axis, "tickvals", None) if axis is not None else None
    text = getattr(axis, "ticktext", None) if axis is not None else None
    if ticks is not None and text is not None and len(ticks) == len(text):
        lookup = {_label(t): _label(x) for t, x in zip(ticks, text, strict=False)}
        if all(_label(v) in lookup for v in values):
            return [lookup[_label(v)] for v in values]
    return [_label(v) for v in values]


def _axis(fig, ref: str | None, letter: str):
    name = f"{letter}axis" + ("" if not ref or ref == letter else ref[1:])
    return getattr(fig.layout, name, None)


def heatmap_tables(fig) -> list[tuple[str, pd.DataFrame]]:
    """One table per heatmap trace: rows and columns named as on the figure's axes (unique)."""
    heat = [tr for tr in fig.data if tr.type == "heatmap" and tr.z is not None]
    notes = [html.unescape(a.text or "") for a in (fig.layout.annotations or ())]
    out = []
    for k, tr in enumerate(heat):
        z = np.asarray(tr.z, dtype=float)
        if z.ndim != 2:
            continue
        custom = np.asarray(tr.customdata, dtype=object) if tr.customdata is not None else None
        if custom is not None and custom.shape[:2] == z.shape and custom.ndim == 3:
            rows, cols = [_label(v) for v in custom[:, 0, 0]], [_label(v) for v in custom[0, :, 1]]
        else:
            rows = _axis_labels(tr.y, _axis(fig, tr.yaxis, "y"), z.shape[0])
            cols = _axis_labels(tr.x, _axis(fig, tr.xaxis, "x"), z.shape[1])
        if len(rows) != z.shape[0] or len(cols) != z.shape[1]:
            rows, cols = [str(i) for i in range(z.shape[0])], [str(j) for j in range(z.shape[1])]
        name = tr.name or (
            notes[k] if len(notes) == len(heat) and notes[k] else t("common.numbers.panel_name", k=k + 1)
        )
        out.append((name, pd.DataFrame(z, index=_unique(rows), columns=_unique(cols))))
    return out


def trace_table(fig) -> pd.DataFrame | None:
    """Line, marker and bar traces as one table: a column per trace over a shared x when they share
    it, else one row per point (trace, x, y)."""
    traces = [tr for tr in fig.data if tr.type in ("scatter", "scattergl", "bar") and tr.y is not None]
    if not traces:
        return None
    series = []
    for k, tr in enumerate(traces):
        y = np.asarray(tr.y)
        x = np.asarray(tr.x) if tr.x is not None else np.arange(y.size)
        custom = np.asarray(tr.customdata, dtype=object) if tr.customdata is not None else None
        if custom is not None and custom.ndim == 1 and custom.size == y.size:
            x = np.asarray([_label(v) for v in custom], dtype=object)  # bars: "position · token"
        series.append((html.unescape(tr.name) if tr.name else t("common.numbers.trace_name", k=k + 1), x, y))
    x0 = series[0][1]
    shared = all(x.shape == x0.shape and (x == x0).all() for _, x, _ in series)
    x_title = getattr(fig.layout.xaxis.title, "text", None) or "x"
    if shared:
        data = {html.unescape(x_title): x0}
        for name, _, y in series:
            while name in data:
                name += " ′"
            data[name] = y
        return pd.DataFrame(data)
    return pd.DataFrame(
        {
            "trace": [n for n, x, _ in series for _ in range(x.size)],
            html.unescape(x_title): np.concatenate([np.asarray(x, dtype=object) for _, x, _ in series]),
            "y": np.concatenate([np.asarray(y, dtype=object) for _, _, y in series]),
        }
    )


def numbers_table(fig, key: str, name: str) -> None:
    """The figure's numbers: a table (bounded: big maps are CSV only) and a CSV download."""
    tables = heatmap_tables(fig)
    lines = trace_table(fig)
    if lines is not None:
        tables.append((t("common.numbers.lines_and_bars"), lines))
    if not tables:
        st.caption(t("common.numbers.no_table"))
        return
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
