"""One derivation on screen: its steps, the proof status of each, and a check with numbers.

`proof(label, derivation_id, key_prefix)` is what a chapter calls to put an identity next to the
plot that shows the same fact numerically: a collapsed expander that runs `show_derivation(…,
compact=True)` only while open. The Derivations chapter calls `show_derivation` for every
identity. The page does not claim the proof, it runs it: `verify` from explain/derivations/ is
called (once per server and derivation id, D.proven) and its report decides the badge, green or red.

Only the Streamlit layer lives here: `show_derivation` (by id, cached), `render` (any Derivation +
report), the badge, and the numbers panel (a fragment) with its inputs. What they draw — status,
lines, claim, inputs' bounds, comparisons, tables — comes from the pure core in
explain/derivations/view.py, which the tests check without an app.

Words: the proof is cached language-free (`verified`, by id); the words on screen come from
`D.get(id, lang)` (the same sympy objects with the current language's titles, rules and labels) and
from derivations.ui.* in the catalogue, looked up at render time.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import cast

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from explain import derivations as D
from explain import i18n
from explain.derivations.view import (
    InputSpec,
    Line,
    Status,
    claim_check_text,
    claim_display,
    compare,
    fmt,
    input_spec,
    layout,
    lines,
    matrix_latex,
    md_escape,
    md_text,
    method_text,
    random_values,
    status,
    value_table,
    where_latex,
)
from ui.cache import cached
from ui.chapters import chapter_title_of
from ui.section import section


def _t(key: str, /, **values: object) -> str:
    """derivations.<key> in the current run's language."""
    return i18n.t(f"derivations.{key}", i18n.language(), **values)


# ---------------------------------------------------------------------------------------------
# Cached computations (keyed on the derivation id: verification must not slow reruns)
# ---------------------------------------------------------------------------------------------

# Only registered ids reach these caches (D.get raises for any other, and a raise is not cached),
# so bounds of one entry per identity (per language) keep every proof and never grow past that.
_IDS = len(D.ALL_DERIVATIONS)
_LANGS = len(i18n.LANGS)


def _proof(derivation_id: str) -> tuple[D.VerifyReport, float]:
    """verify() for a registered derivation, and how long it took (s); language-free. Proven once
    per process (D.proven), usually before anyone asks: serve_app proves them all as it starts."""
    return D.proven(derivation_id)


def _prove_with_spinner(derivation_id: str, lang: str) -> tuple[D.VerifyReport, float]:
    """The proof, under a spinner in `lang`.

    Cached itself, so this body — and the spinner with it — runs only the first time an id is
    shown in a language; later reruns add no element to the page. The proof inside is cached by id
    alone, so a second language finds it proven (its spinner never appears: it waits 0.5 s)."""
    with st.spinner(i18n.t("derivations.ui.proving", lang)):
        return _proof(derivation_id)


_announced_proof = cached(_prove_with_spinner, max_entries=_IDS * _LANGS)


def verified(derivation_id: str) -> tuple[D.VerifyReport, float]:
    """verify() for a registered derivation, once per server; and how long it took (s).

    The report is language-free (proven once per id); the spinner shown while it is proven speaks
    the current language."""
    return _announced_proof(derivation_id, i18n.language())


def _lines_of(derivation_id: str, lang: str) -> tuple[list[Line], str, list[str]]:
    """The lines with their rules in `lang` (the language is part of the cache key)."""
    d = D.get(derivation_id, lang)
    report, _ = _proof(derivation_id)
    return lines(d, report), claim_display(d), where_latex(d)


_lines_for = cached(_lines_of, max_entries=_IDS * _LANGS)


def _step_numbers(derivation_id: str, values: tuple[tuple[str, float], ...]) -> list[D.Value]:
    return D.step_values(D.get(derivation_id), dict(values))


_numbers_for = cached(_step_numbers, max_entries=2_000)


def _numbers(derivation: D.Derivation, values: dict[str, float]) -> list[D.Value]:
    """Every line's value; cached only for a registered derivation (a test may pass another)."""
    if derivation.id in _ids() and D.registered(derivation):
        return _numbers_for(derivation.id, tuple(sorted(values.items())))
    return D.step_values(derivation, values)


def _ids() -> set[str]:
    return {d.id for d in D.ALL_DERIVATIONS}


# ---------------------------------------------------------------------------------------------
# Streamlit
# ---------------------------------------------------------------------------------------------


def show_derivation(derivation_id: str, key_prefix: str, compact: bool = False, fold_numbers: bool = False) -> None:
    """Render a registered derivation (verified on this server, cached by id).

    key_prefix keeps the widget keys apart when one page shows several derivations; compact drops
    the title, intro and the per-line value table, for a proof inside another chapter's expander;
    fold_numbers puts the numbers panel in a collapsed expander (see _folded_numbers).
    """
    lang = i18n.language()
    d = D.get(derivation_id, lang)
    report, seconds = verified(derivation_id)
    shown, claim, where = _lines_for(derivation_id, lang)
    render(
        d,
        report,
        key_prefix,
        compact=compact,
        seconds=seconds,
        prepared=(shown, claim, where),
        fold_numbers=fold_numbers,
    )


@section()
def proof(label: str, derivation_id: str, key_prefix: str) -> None:
    """A chapter's proof, compact, in a collapsed expander whose content runs only while it is open.

    A closed expander's content still runs and is still sent and drawn (KaTeX, a numbers panel of
    number inputs) on every rerun of its section; measured on Sinusoidal, its two closed proofs were
    ~8 % of every rerun of the page.
    A fragment of its own: opening it reruns the proof alone, not the chapter around it. Closing it
    drops its number inputs, so they open again on their default values."""
    box = st.expander(label, key=f"{key_prefix}__proof", on_change="rerun", icon=":material/functions:")
    if box.open:
        with box:
            show_derivation(derivation_id, key_prefix=key_prefix, compact=True)


def badge(st_status: Status, seconds: float | None = None) -> None:
    icon = ":material/verified:" if st_status.ok else ":material/error:"
    st.badge(st_status.label, icon=icon, color=st_status.color)
    if st_status.ok:
        took = _t("ui.took", seconds=seconds) if seconds is not None else ""
        st.caption(st_status.detail + took)
    else:
        st.error(st_status.detail, icon=":material/error:")


def render(
    d: D.Derivation,
    report: D.VerifyReport,
    key_prefix: str,
    compact: bool = False,
    seconds: float | None = None,
    prepared: tuple[list[Line], str, list[str]] | None = None,
    fold_numbers: bool = False,
) -> None:
    """Render any derivation with a report (the core of show_derivation; a test can pass a broken one)."""
    shown, claim, where = prepared if prepared is not None else (lines(d, report), claim_display(d), where_latex(d))
    st_status = status(d, report)
    if not compact:
        st.subheader(d.title, anchor=d.id)
    badge(st_status, seconds)
    if not compact:
        st.markdown(md_text(d.intro))
    st.markdown(_t("ui.claim_label") + " " + md_text(d.claim))
    if claim:
        st.latex(layout(claim)[1] + " " + claim)
    st.caption(_t("ui.source", source=d.source) + ("" if compact else _t("ui.chapter", chapter=chapter_title_of(d.id))))

    for line in shown:
        _line(line)
    if report.claim_check is not None:
        c = report.claim_check
        st.caption(md_escape(claim_check_text(d, c)), help=method_text(c.method) or None)
    if where:
        st.latex(r"\text{{{} }}\; ".format(_t("ui.where")) + r",\qquad ".join(where))
    for note in d.notes:
        st.caption(md_text(note))
    if fold_numbers:
        _folded_numbers(d, key_prefix, compact)
    else:
        _numbers_panel(d, key_prefix, compact)
    if compact:
        st.page_link("pages/beyond/derivations.py", label=_t("ui.all_link"), icon=":material/functions:")


# The rule's column beside a formula: a fixed width, so that the rules of a derivation's lines, each
# in its own box of the same width, start at the same x and read as one column (about 40 % of the
# page's main column on a laptop, as the [3, 2] columns this replaced).
RULE_WIDTH = 380


def _line(line: Line) -> None:
    """One line in its own box: the formula left-aligned (so the = and ↝ signs form a column) with
    its rule beside it, or, when the formula is too wide for that, the rule above it.

    Three elements per line: a horizontal bordered box, the formula and one markdown for the rule and
    its proof. The Derivations page's "show all" draws about 140 lines; laid out as a box, two
    columns, the formula, the rule and a caption (seven elements), they were most of its ~870
    elements, and Streamlit's cost is per element."""
    beside, size = layout(line.latex)
    text, help_text = _rule(line)
    if beside:
        # "distribute": the formula at the box's left edge, the rule's fixed-width column at its right.
        with st.container(
            border=True, horizontal=True, horizontal_alignment="distribute", vertical_alignment="center", gap="medium"
        ):
            st.latex(size + " " + line.latex, width="content")
            st.markdown(text, width=RULE_WIDTH, help=help_text)
    else:
        with st.container(border=True):
            st.markdown(text, help=help_text)
            st.latex(size + " " + line.latex, width="content")


def _rule(line: Line) -> tuple[str, str | None]:
    """The rule in words and, on a line of its own in small type, whether sympy proved the step and
    how; and the help that explains that proof method (None when there is none)."""
    tag = f" :orange-badge[{_t('ui.modelling_choice')}]" if line.kind == "substitution" else ""
    text = f"**{line.index}.**{tag} {md_text(line.rule)}"
    if line.check is None:
        return text, None
    if line.check.ok:
        proof = f":green[{_t('ui.proven')}] · sympy: `{line.check.method}`"
        return text + f"  \n:small[{proof}]", method_text(line.check.method) or None
    message = D.message_text(line.check, i18n.language())
    return text + f"  \n:small[:red[{_t('ui.not_proven_line')}] — {md_escape(message)}]", None


def _key(key_prefix: str, d: D.Derivation, name: str) -> str:
    return f"{key_prefix}:{d.id}:{name}"


def _set_values(keys: dict[str, str], values: Mapping[str, float]) -> None:
    for name, key in keys.items():
        st.session_state[key] = values[name]


def _draw_random(d: D.Derivation, keys: dict[str, str], counter_key: str) -> None:
    st.session_state[counter_key] = st.session_state.get(counter_key, 0) + 1
    seed = int(st.session_state.get("seed", 0)) * 1_000 + st.session_state[counter_key]
    _set_values(keys, random_values(d, seed))


@section()
def _folded_numbers(d: D.Derivation, key_prefix: str, compact: bool) -> None:
    """The numbers panel in a collapsed expander whose content runs only while it is open: for the
    Derivations chapter's "show all", where an open panel per derivation (127 number inputs over 17
    derivations) made turning it on take ~0.2 s of server time, most of it creating those inputs,
    and put a wall of inputs between the proofs. A fragment: opening one panel reruns that panel alone."""
    box = st.expander(
        _t("ui.numbers.heading"), key=_key(key_prefix, d, "#numbers"), on_change="rerun", icon=":material/calculate:"
    )
    if box.open:
        with box:
            _numbers_panel(d, key_prefix, compact)


@section()
def _numbers_panel(d: D.Derivation, key_prefix: str, compact: bool) -> None:
    """Number inputs for every parameter; the first and last line evaluated; their difference.

    A fragment: moving a number reruns only this panel, never the proofs or the rest of the page.
    """
    keys = {p.name: _key(key_prefix, d, p.name) for p in d.parameters}
    specs = {p.name: input_spec(p) for p in d.parameters}
    for p in d.parameters:
        st.session_state.setdefault(keys[p.name], p.default)
    with st.container(border=True):
        # A heading only under the proof's own title (h3 → h4). A compact proof sits in an expander
        # anywhere on a chapter page, where any heading level could break the page's outline: bold.
        title = _t("ui.numbers.heading")
        st.markdown(f"**{title}**" if compact else f"#### {title}")
        lo, hi = d.equality_span
        st.caption(_t("ui.numbers.exact", hi=hi) if d.exact else _t("ui.numbers.inexact", hi=hi))
        b1, b2, _ = st.columns([1, 1, 3])
        counter = _key(key_prefix, d, "#draws")
        b1.button(
            _t("ui.numbers.random"),
            key=_key(key_prefix, d, "#random"),
            icon=":material/casino:",
            on_click=_draw_random,
            args=(d, keys, counter),
            help=_t("ui.numbers.random_help"),
        )
        b2.button(
            _t("ui.numbers.defaults"),
            key=_key(key_prefix, d, "#reset"),
            icon=":material/restart_alt:",
            on_click=_set_values,
            args=(keys, d.defaults),
            help=_t("ui.numbers.defaults_help"),
        )

        scalars = [p for p in d.parameters if not specs[p.name].group]
        for start in range(0, len(scalars), 4):
            cols = st.columns(4)
            for col, p in zip(cols, scalars[start : start + 4], strict=False):
                _input(col, p, specs[p.name], keys[p.name], label=p.label)
        groups: dict[str, list] = {}
        for p in d.parameters:
            if specs[p.name].group:
                groups.setdefault(specs[p.name].group, []).append(p)
        if groups:
            n_entries = sum(len(v) for v in groups.values())
            with st.expander(_t("ui.numbers.vectors", groups=len(groups), entries=n_entries)):
                names = list(groups)
                for start in range(0, len(names), 4):
                    cols = st.columns(4, gap="medium")
                    for col, name in zip(cols, names[start : start + 4], strict=False):
                        with col:
                            st.markdown(f"**{md_escape(name)}**")
                            entries = groups[name]
                            width = (
                                max(int(specs[p.name].short_label.strip("[]").split(",")[-1]) for p in entries)
                                if "," in specs[entries[0].name].short_label
                                else 1
                            )
                            # One set of columns per matrix, each holding its column's entries top
                            # to bottom: the same grid as a row of columns per matrix row, with a
                            # fraction of the layout blocks (each block is a message of every rerun
                            # of this panel; a vector needs none). The inputs are of equal height, so
                            # rows line up; Tab walks a matrix column by column.
                            places = st.columns(width) if width > 1 else [col]
                            for k, p in enumerate(entries):
                                _input(
                                    places[k % width], p, specs[p.name], keys[p.name], label=specs[p.name].short_label
                                )

        values = {p.name: st.session_state[keys[p.name]] for p in d.parameters}
        try:
            per_line = _numbers(d, values)
        except (ValueError, TypeError, ArithmeticError) as exc:  # e.g. a value sympy cannot make real
            st.warning(_t("ui.numbers.cannot", error=exc))
            return
        first, last = per_line[lo], per_line[hi]
        cmp = compare(first, last)
        verdict = _t("ui.numbers.equal") if cmp.equal else _t("ui.numbers.different")
        first_label = _t("ui.numbers.first", k=lo)
        last_label = _t("ui.numbers.last" if d.exact else "ui.numbers.last_equality", k=hi)
        if not cmp.matrix:  # both ends are numbers: prover evaluates a scalar line to a float
            c1, c2, c3 = st.columns(3)
            c1.metric(first_label, fmt(cast(float, first)))
            c2.metric(last_label, fmt(cast(float, last)))
            c3.metric(_t("ui.numbers.difference"), "0" if cmp.difference == 0 else f"{cmp.difference:.1e}")
        else:
            c1, c2 = st.columns(2)
            with c1:
                st.markdown(first_label)
                st.latex(matrix_latex(first))
            with c2:
                st.markdown(last_label)
                st.latex(matrix_latex(last))
            st.metric(_t("ui.numbers.largest"), "0" if cmp.difference == 0 else f"{cmp.difference:.1e}")
        st.markdown(_t("ui.numbers.verdict", lo=lo, hi=hi, verdict=verdict))
        if not compact:
            st.markdown(value_table(d, per_line))


def _input(container: DeltaGenerator, p: D.Parameter, spec: InputSpec, key: str, label: str) -> None:
    if spec.integer:
        container.number_input(
            label, min_value=int(spec.min_value), max_value=int(spec.max_value), step=1, key=key, help=spec.help
        )
    else:
        container.number_input(
            label,
            min_value=float(spec.min_value),
            max_value=float(spec.max_value),
            step=float(spec.step),
            format=spec.format,
            key=key,
            help=spec.help,
        )
