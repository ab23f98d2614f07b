"""The figure only the "Start here" chapter draws: the taxonomy of where position enters a layer."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import plotly.graph_objects as go

from explain.figures.theme import LINES, escape, make_figure

COLUMN_HALF = 0.46  # half a column's width, in column units
ROW = 0.62  # vertical step between two methods
FIRST = -1.25  # the first method's y (the header and the formula sit above)


def taxonomy(
    kinds: Sequence[str],
    members: Mapping[str, Sequence[str]],
    *,
    headers: Mapping[str, str],
    formulas: Mapping[str, str],
    hover: Mapping[str, str],
    title: str,
    flow: str,
) -> go.Figure:
    """One column per place where position enters (`kinds`, in the order a layer computes), headed by
    its name and its formula, listing the methods there (`members`: kind → method names as shown).
    `hover`: method name → its tooltip (plain text; escaped here). A header may break its line with
    "<br>"; everything else in it is escaped. `flow` labels the arrow above the
    columns. Colours follow the column, in the house's line colours. Everything is a note or a shape,
    not a trace: the diagram holds no numbers (its "Numbers" panel says so; the property table under
    it lists the same methods with their facts)."""
    tallest = max((len(members[k]) for k in kinds), default=0)
    bottom = FIRST - ROW * max(tallest - 1, 0) - 0.55
    shapes: list[dict[str, object]] = []
    notes: list[dict[str, object]] = []
    for col, kind in enumerate(kinds):
        color = LINES[col % len(LINES)]
        names = list(members[kind])
        shapes.append(
            dict(
                type="rect",
                x0=col - COLUMN_HALF,
                x1=col + COLUMN_HALF,
                y0=bottom,
                y1=0.55,
                fillcolor=color,
                opacity=0.08,
                line=dict(width=0),
                layer="below",
            )
        )
        header = "<br>".join(escape(line) for line in headers[kind].split("<br>"))  # the catalogue's breaks only
        notes.append(dict(x=col, y=0.25, text=f"<b>{header}</b>", showarrow=False, yanchor="middle"))
        notes.append(
            dict(x=col, y=-0.5, text=escape(formulas[kind]), showarrow=False, yanchor="middle", font=dict(size=12))
        )
        for k, name in enumerate(names):  # a note, not a trace: the figure is a diagram, not data
            notes.append(
                dict(
                    x=col - COLUMN_HALF + 0.08,
                    y=FIRST - ROW * k,
                    xanchor="left",
                    text=f"<span style='color:{color}'>●</span> {escape(name)}",
                    hovertext=escape(hover[name]),
                    showarrow=False,
                )
            )
    notes.append(
        dict(
            x=len(kinds) - 1 + COLUMN_HALF,
            y=0.85,
            ax=-COLUMN_HALF,
            ay=0.85,
            axref="x",
            ayref="y",
            xref="x",
            yref="y",
            text="",
            showarrow=True,
            arrowhead=2,
            arrowwidth=1.5,
            arrowcolor="#5f6368",
        )
    )
    notes.append(
        dict(x=(len(kinds) - 1) / 2, y=0.85, text=escape(flow), showarrow=False, yanchor="bottom", bgcolor="#ffffff")
    )
    return make_figure(
        [],
        title,
        int(170 + 44 * max(tallest, 1)),
        showlegend=False,
        xaxis=dict(visible=False, range=[-0.5, len(kinds) - 0.5], fixedrange=True),
        yaxis=dict(visible=False, range=[bottom - 0.05, 1.15], fixedrange=True),
        shapes=shapes,
        annotations=notes,
        margin=dict(l=10, r=10, t=50, b=10),
    )
