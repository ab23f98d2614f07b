"""One derivation on screen: its steps, the proof status of each, and a check with numbers.

`show_derivation(derivation_id, key_prefix, compact=False)` is what a chapter calls to put an
identity next to the plot that shows the same fact numerically; the Derivations chapter calls it
for every identity. The page does not claim the proof, it runs it: `verify` from
explain/derivations.py is called (once per server and derivation id, cached) and its report decides
the badge, green or red.

The module has two layers:
- a pure core (no Streamlit calls): `status`, `lines`, `claim_display`, `where_latex`,
  `input_spec`, `compare`, `matrix_latex`, `value_table` — what the tests check, including for a
  deliberately broken derivation;
- the Streamlit layer: `show_derivation` (by id, cached) and `render` (any Derivation + report).

Words: the proof is cached language-free (`verified`, by id); the words on screen come from
`D.get(id, lang)` (the same sympy objects with the current language's titles, rules and labels) and
from derivations.ui.* in the catalogue, looked up at render time. Pure-core functions speak the
current run's language (English outside the app).
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass

import numpy as np
import streamlit as st
import sympy as sp
from sympy.matrices.expressions import MatAdd

from explain import derivations as D
from explain import i18n
from ui.chapters import BY_KEY
from ui.i18n import activate


def _t(key: str, /, **values) -> str:
    """derivations.<key> in the current run's language."""
    return i18n.t(f"derivations.{key}", i18n.language(), **values)


# Where each identity belongs: the chapter (its key) that shows the same fact in pictures.
CHAPTER_OF = {
    "sinusoidal-dot-product": "sinusoidal",
    "sinusoidal-shift": "sinusoidal",
    "rope-complex-2d": "rope",
    "rope-matrix-2d": "rope",
    "rope-relative-d4": "rope",
    "rope-relative-d6": "rope",
    "rope-relative-block": "rope",
    "absolute-pe-attention": "transformer-xl",
    "deberta-three-terms": "deberta",
    "alibi-shift-invariance": "alibi",
    "t5-shift-invariance": "t5",
    "cope-all-gates-open": "cope",
}


def chapter_title(derivation_id: str, lang: str | None = None) -> str:
    """The title of the chapter an identity belongs to ('—' if none), as the table of contents
    names it, in `lang` (default: the current run's language)."""
    key = CHAPTER_OF.get(derivation_id)
    return i18n.t(f"chapters.{key}.title", lang) if key in BY_KEY else "—"


# The proof methods a StepCheck names, in the order explain/derivations.py tries them
# (_scalar_equal: the first that works is reported); each is explained by derivations.method.<name>.
METHODS = (
    "structural",
    "evaluate",
    "per-term",
    "expand",
    "expand_trig",
    "complex",
    "trigsimp",
    "simplify",
    "substitution",
)

MAX_POSITION = 100_000  # positions and shifts a learner may type (the sinusoidal page uses the same)
MAX_REAL = 100.0  # frequencies, slopes, vector and matrix entries
EQUAL_RTOL = 1e-9  # first and last line count as equal within this relative size (float rounding)

SUBSTITUTION_ARROW = r"\rightsquigarrow"
# KaTeX sizing for a projector. Widths are in "glyphs" as estimated by `visible_width`; at \large
# one glyph is about 13 px, so a line of up to BESIDE glyphs fits next to its rule in a 1280-px
# window, and one of up to LARGE glyphs fits the full width at \large (wider lines drop to
# \normalsize). Long sums are split one term per line (`step_latex`).
STEP_SIZE = r"\large"
SMALL_SIZE = r"\normalsize"
BESIDE = 40
LARGE = 72
LONG_SUM = 150  # characters of LaTeX above which a sum of terms is shown one term per line


# ---------------------------------------------------------------------------------------------
# Pure core
# ---------------------------------------------------------------------------------------------

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|$~])")


def md_escape(text: str) -> str:
    """Text shown literally by st.markdown: rules contain _ ^ * and braces from the math."""
    return _MD_SPECIAL.sub(r"\\\1", text)


# Inline math ($…$) and code spans (`…`) a catalogue text may contain on purpose: the Korean words
# write a formula with function names (cos, Re, bucket) as KaTeX rather than as Latin plain text.
_KEEP = re.compile(r"(?<!\\)\$[^$\n]+?(?<!\\)\$|`[^`\n]+`")


def md_text(text: str) -> str:
    """Like md_escape, but inline math and code spans pass through to be rendered."""
    out, last = [], 0
    for m in _KEEP.finditer(text):
        out += [md_escape(text[last : m.start()]), m.group(0)]
        last = m.end()
    return "".join([*out, md_escape(text[last:])])


def method_text(method: str) -> str:
    """The sympy test behind a StepCheck.method ('substitution + expand' → both explained)."""
    if not method:
        return ""
    parts = [m.strip() for m in method.split("+")]
    return _t("ui.then").join(_t(f"method.{m}") if m in METHODS else m for m in parts)


_MATRIX_ENV = re.compile(r"\\begin\{(b?matrix|aligned)\}((?:(?!\\begin\{).)*?)\\end\{\1\}", re.S)


def visible_width(tex: str) -> int:
    """Rough printed width of a LaTeX line, in glyphs: matrices count their widest cell per column
    (innermost first), aligned blocks their widest line; commands count as the glyphs they draw.

    A layout heuristic, not a renderer: it decides whether a line fits beside its rule."""
    s = tex
    while (m := _MATRIX_ENV.search(s)) is not None:
        env, body = m.group(1), m.group(2)
        rows = [r.split("&") for r in body.split(r"\\")]
        if env == "aligned":
            width = max(visible_width("".join(r)) for r in rows)
        else:
            ncols = max(len(r) for r in rows)
            cols = [max(visible_width(r[c]) if c < len(r) else 0 for r in rows) for c in range(ncols)]
            width = sum(cols) + 2 * (ncols - 1) + 2
        s = s[: m.start()] + "@" * width + s[m.end() :]
    s = re.sub(r"\\textcolor\{[^}]*\}", "", s)
    s = re.sub(r"\\(left|right|mathbf|mathrm|operatorname|large|normalsize)(?![A-Za-z])", "", s)
    s = re.sub(r"\\[,;!: ]", "", s)
    s = re.sub(r"\\(sin|cos|exp|sum)(?![A-Za-z])", "xxx", s)
    s = re.sub(r"\\[A-Za-z]+", "x", s)
    return len(re.sub(r"[{} ]", "", s))


def layout(tex: str) -> tuple[bool, str]:
    """(beside, size): whether a line sits next to its rule, and its KaTeX size command."""
    width = visible_width(tex)
    return width <= BESIDE, STEP_SIZE if width <= LARGE else SMALL_SIZE


@dataclass(frozen=True)
class Status:
    """What the badge says about a derivation's VerifyReport."""

    ok: bool
    color: str  # st.badge colour: green (every check passed) or red
    label: str  # the badge text
    detail: str  # one sentence for under the badge (plain text)
    failed_index: int | None  # the line that failed (len(steps) = the claim), or None


def where_failed(derivation: D.Derivation, index: int) -> str:
    """'line 3', or 'the claim' for the claim check (index len(steps))."""
    return _t("ui.the_claim") if index == len(derivation.steps) else _t("ui.line", k=index)


def rule_of(derivation: D.Derivation, index: int) -> str:
    """The rule of line `index` as this derivation words it; the claim check's for len(steps)."""
    return derivation.steps[index].rule if index < len(derivation.steps) else _t("ui.claim_rule")


def status(derivation: D.Derivation, report: D.VerifyReport) -> Status:
    """The badge for a report: green when every step and the claim were proven, else red and the
    first step that failed, with its rule and sympy's message.

    The report may come from the English registry; the rule is read from `derivation`, so a
    derivation in another language names the failing line in its own words."""
    n_steps = len(derivation.steps) - 1
    subs = sum(s.kind == "substitution" for s in derivation.steps)
    if report.ok:
        steps = (
            _t("ui.all_steps", n=n_steps) if n_steps > 2 else _t("ui.both_steps") if n_steps == 2 else _t("ui.the_step")
        )
        kinds = _t("ui.step_kinds", equalities=n_steps - subs, substitutions=subs) if subs else ""
        proved = "ui.proved_claim" if report.claim_check is not None else "ui.proved"
        return Status(True, "green", _t("ui.verified_label"), _t(proved, steps=steps, kinds=kinds), None)
    bad = report.first_failure
    where = where_failed(derivation, bad.index)
    message = D.message_text(bad, i18n.language())
    rule = rule_of(derivation, bad.index)
    detail = (
        _t("ui.not_proven_message", where=where, rule=rule, message=message)
        if message
        else _t("ui.not_proven", where=where, rule=rule)
    )
    return Status(False, "red", _t("ui.failed_label", where=where), _t("ui.detail_end", detail=detail), bad.index)


@dataclass(frozen=True)
class Line:
    """One line of a derivation as the page shows it."""

    index: int
    kind: str  # "start", "equal" or "substitution"
    latex: str  # relation sign (=, ↝) and the expression, highlight included
    rule: str  # plain text, as the derivation words it (explain/text/<lang>/strings/derivations.toml)
    check: D.StepCheck | None  # None for the starting line

    @property
    def proven(self) -> bool:
        return self.check is None or self.check.ok


def _relation(kind: str) -> str:
    return {"start": "", "equal": "=", "substitution": SUBSTITUTION_ARROW}[kind]


def step_latex(s: D.Step, highlight: bool = True) -> str:
    """The step's expression; a long sum of terms (Transformer-XL, DeBERTa) one term per line.

    Each term is printed by the same `to_latex` from the same sympy objects; only the line breaks
    are added here. The highlight goes to the first term that contains the changed part, which is
    where `to_latex` puts it on the single line.
    """
    tex = D.to_latex(s, highlight=highlight)
    expr = s.expr
    if not isinstance(expr, MatAdd) or len(tex) <= LONG_SUM:
        return tex
    terms = [D.to_latex(a) for a in expr.args]
    if " + ".join(terms) != D.to_latex(s):
        return tex  # the printer did something other than join the terms: keep its line
    if highlight and s.changed is not None:
        part = D.to_latex(s.changed)
        for k, t in enumerate(terms):
            if part in t:
                terms[k] = t.replace(part, rf"\textcolor{{{D.HIGHLIGHT_COLOR}}}{{{part}}}", 1)
                break
    return r"\begin{aligned}&\hphantom{{}+{}}" + r" \\ &+ ".join(terms) + r"\end{aligned}"


def lines(derivation: D.Derivation, report: D.VerifyReport | None, highlight: bool = True) -> list[Line]:
    checks = {c.index: c for c in report.checks} if report is not None else {}
    out = []
    for k, s in enumerate(derivation.steps):
        body = step_latex(s, highlight)
        rel = _relation(s.kind)
        out.append(Line(k, s.kind, f"{rel} {body}".strip(), s.rule, checks.get(k)))
    return out


def claim_display(derivation: D.Derivation) -> str:
    """The claim as a formula: `lhs = rhs` for an equation; for an exact derivation whose claim is
    one expression, first line = claim; for one that ends in modelling choices, first line ↝ claim
    (the claim is then not equal to the first line, and the sign says so). Too wide for one line,
    the right side goes on a second line."""
    claim = derivation.claim_expr
    if claim is None:
        return ""
    if isinstance(claim, sp.Equality):
        lhs, sign, rhs = D.to_latex(claim.lhs), "=", D.to_latex(claim.rhs)
    else:
        lhs = D.to_latex(derivation.steps[0].expr)
        sign = "=" if derivation.exact else SUBSTITUTION_ARROW
        rhs = D.claim_latex(derivation)
        if isinstance(claim, MatAdd) and len(rhs) > LONG_SUM:
            rhs = (
                r"\begin{aligned}&\hphantom{{}+{}}"
                + r" \\ &+ ".join(D.to_latex(a) for a in claim.args)
                + r"\end{aligned}"
            )
    one_line = f"{lhs} {sign} {rhs}"
    if visible_width(one_line) <= LARGE or "aligned" in rhs:
        return one_line
    return r"\begin{aligned}&" + lhs + r" \\ &" + sign + " " + rhs + r"\end{aligned}"


def claim_check_text(derivation: D.Derivation, check: D.StepCheck) -> str:
    """What the claim check proved, in words (plain text)."""
    if isinstance(derivation.claim_expr, sp.Equality):
        what = _t("ui.claim_equation")
    else:
        what = _t("ui.claim_expression", k=len(derivation.steps) - 1)
    if check.ok:
        return _t("ui.claim_checked", what=what, method=check.method)
    return _t("ui.claim_not_proven", what=what, message=D.message_text(check, i18n.language()))


def where_latex(derivation: D.Derivation) -> list[str]:
    """The definitions a derivation unfolds, as `old = new` (b(i, j) = −m_h(i − j), g_it = 1)."""
    out = []
    for old, new in derivation.where:
        if isinstance(new, sp.Lambda):
            args = new.variables
            lhs = old[args] if isinstance(old, sp.IndexedBase) else old(*args)
            out.append(f"{D.to_latex(lhs)} = {D.to_latex(new.expr)}")
        else:
            out.append(f"{D.to_latex(old)} = {D.to_latex(new)}")
    return out


@dataclass(frozen=True)
class InputSpec:
    """Bounds, step and help text of the number input for one Parameter."""

    integer: bool
    min_value: float
    max_value: float
    step: float
    format: str
    help: str
    group: str  # "" for a scalar, else the vector or matrix an entry belongs to ("W_q")
    short_label: str  # the label inside its group ("[1,2]"), or the full label


_ENTRY = re.compile(r"^(.*) \[(\d+(?:,\d+)?)\]$")


def input_spec(p: D.Parameter) -> InputSpec:
    entry = _ENTRY.match(p.label)
    group, short = (entry.group(1), f"[{entry.group(2)}]") if entry else ("", p.label)
    if isinstance(p.default, (int, np.integer)) and not isinstance(p.default, bool):
        signed = p.name in D.SHIFT_PARAMETERS  # by name, not by label: labels are words
        lo = -MAX_POSITION if signed else 0
        high = f"{MAX_POSITION:,}"
        text = (
            _t("ui.help_shift", label=p.label, low=f"−{high}", high=high)
            if signed
            else _t("ui.help_position", label=p.label, high=high)
        )
        return InputSpec(True, lo, MAX_POSITION, 1, "%d", text, group, short)
    return InputSpec(
        False,
        -MAX_REAL,
        MAX_REAL,
        0.1,
        "%.6g",
        _t("ui.help_real", label=p.label, low=f"−{MAX_REAL:g}", high=f"{MAX_REAL:g}"),
        group,
        short,
    )


def random_values(derivation: D.Derivation, seed: int) -> dict:
    """Seeded 'any numbers' for the Random button: small positions and shifts, moderate reals."""
    rng = random.Random(seed)
    out = {}
    for p in derivation.parameters:
        spec = input_spec(p)
        if spec.integer:
            out[p.name] = rng.randint(-40, 40) if spec.min_value < 0 else rng.randint(0, 60)
        elif D.is_frequency(p.name):
            out[p.name] = round(rng.uniform(0.001, 1.5), 4)
        else:
            out[p.name] = round(rng.uniform(-2.0, 2.0), 2)
    return out


@dataclass(frozen=True)
class Comparison:
    """First and last line under the learner's numbers."""

    matrix: bool
    difference: float  # |first − last|, the largest entry for a matrix
    scale: float  # the size the difference is judged against
    equal: bool


def compare(first, last) -> Comparison:
    a, b = np.asarray(first, dtype=float), np.asarray(last, dtype=float)
    if a.shape != b.shape:
        return Comparison(a.ndim > 0, float("inf"), 1.0, False)
    diff = float(np.max(np.abs(a - b))) if a.size else 0.0
    scale = max(1.0, float(np.max(np.abs(a))) if a.size else 0.0)
    return Comparison(a.ndim > 0, diff, scale, diff <= EQUAL_RTOL * scale)


def fmt(x: float) -> str:
    """A number for the panel: 6 significant digits, a true minus sign."""
    s = f"{x:.6g}"
    return "0" if s in ("0", "-0") else s.replace("-", "−")


def matrix_latex(values, digits: int = 4) -> str:
    """A list of rows (a matrix or a column vector) as a KaTeX bmatrix."""
    rows = np.asarray(values, dtype=float)
    if rows.ndim == 1:
        rows = rows[:, None]

    def cell(v):
        v = 0.0 if abs(v) < 0.5 * 10**-digits else v
        return f"{v:.{digits}f}"

    body = r" \\ ".join(" & ".join(cell(v) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def value_table(derivation: D.Derivation, values_per_line: list) -> str:
    """Markdown table: every line's number (or, for matrices, its distance from line 0)."""
    first = np.asarray(values_per_line[0], dtype=float)
    scalar = first.ndim == 0
    line = _t("ui.table.line")
    head = (
        f"| {line} | | {_t('ui.table.value')} | {_t('ui.table.differs')} |"
        if scalar
        else f"| {line} | | {_t('ui.table.largest')} |"
    )
    rows = [head, "|---:|:---|---:|---:|" if scalar else "|---:|:---|---:|"]
    tags = {"start": _t("ui.table.start"), "equal": "=", "substitution": _t("ui.table.substitution")}
    for k, (s, v) in enumerate(zip(derivation.steps, values_per_line, strict=False)):
        v = np.asarray(v, dtype=float)
        tag = tags[s.kind]
        diff = float(np.max(np.abs(v - first))) if v.shape == first.shape else float("nan")
        dtext = "0" if diff == 0 else (f"{diff:.1e}" if diff < 1e-3 else fmt(diff))
        rows.append(f"| {k} | {tag} | {fmt(float(v))} | {dtext} |" if scalar else f"| {k} | {tag} | {dtext} |")
    return "\n".join(rows)


def catalogue(reports: dict) -> str:
    """Markdown table of every registered derivation with its badge, chapter, size and proof methods,
    in the current language.

    reports: derivation id → VerifyReport (the page passes the cached ones)."""
    head = [_t(f"ui.catalogue.{k}") for k in ("status", "identity", "chapter", "lines", "methods")]
    rows = ["| " + " | ".join(head) + " |", "|:--|:--|:--|--:|:--|"]
    for d in D.all_derivations(i18n.language()):
        s = status(d, reports[d.id])
        text = (
            _t("ui.catalogue.verified") if s.ok else _t("ui.catalogue.fails_at", where=where_failed(d, s.failed_index))
        )
        icon = ":material/verified:" if s.ok else ":material/error:"
        methods = sorted({c.method for c in reports[d.id].all_checks if c.ok and c.method}, key=_method_order)
        rows.append(
            f"| :{s.color}-badge[{icon} {text}] | {md_escape(d.title)} | {md_escape(chapter_title(d.id))} "
            f"| {len(d.steps)} | {', '.join(f'`{m}`' for m in methods)} |"
        )
    return "\n".join(rows)


def _method_order(method: str) -> int:
    names = list(METHODS)
    head = method.split("+")[-1].strip()
    return names.index(head) + (100 if method.startswith("substitution") else 0) if head in names else 999


# ---------------------------------------------------------------------------------------------
# Cached computations (keyed on the derivation id: verification must not slow reruns)
# ---------------------------------------------------------------------------------------------


@st.cache_data(show_spinner=False)
def _verified(derivation_id: str) -> tuple[D.VerifyReport, float]:
    t0 = time.perf_counter()
    report = D.verify(D.get(derivation_id))
    return report, time.perf_counter() - t0


_proven: set[str] = set()  # ids whose proof this process has run (no spinner needed for them)


def verified(derivation_id: str) -> tuple[D.VerifyReport, float]:
    """verify() for a registered derivation, once per server; and how long it took (s).

    The report is language-free (cached by id alone). The spinner speaks the current language,
    which is why it is not the cache's own; it is only set up the first time an id is proven, so
    later reruns add no element to the page."""
    if derivation_id in _proven:
        return _verified(derivation_id)
    with st.spinner(_t("ui.proving")):
        result = _verified(derivation_id)
    _proven.add(derivation_id)
    return result


@st.cache_data(show_spinner=False)
def _lines_for(derivation_id: str, lang: str) -> tuple[list[Line], str, list[str]]:
    """The lines with their rules in `lang` (the language is part of the cache key)."""
    d = D.get(derivation_id, lang)
    report, _ = _verified(derivation_id)
    return lines(d, report), claim_display(d), where_latex(d)


@st.cache_data(show_spinner=False, max_entries=2_000)
def _numbers_for(derivation_id: str, values: tuple) -> list:
    return D.step_values(D.get(derivation_id), dict(values))


def _numbers(derivation: D.Derivation, values: dict) -> list:
    """Every line's value; cached only for a registered derivation (a test may pass another)."""
    if derivation.id in _ids() and D.registered(derivation):
        return _numbers_for(derivation.id, tuple(sorted(values.items())))
    return D.step_values(derivation, values)


def _ids() -> set[str]:
    return {d.id for d in D.ALL_DERIVATIONS}


# ---------------------------------------------------------------------------------------------
# Streamlit
# ---------------------------------------------------------------------------------------------


def show_derivation(derivation_id: str, key_prefix: str, compact: bool = False) -> None:
    """Render a registered derivation (verified on this server, cached by id).

    key_prefix keeps the widget keys apart when one page shows several derivations; compact drops
    the title, intro and the per-line value table, for a proof inside another chapter's expander.
    """
    lang = i18n.language()
    d = D.get(derivation_id, lang)
    report, seconds = verified(derivation_id)
    shown, claim, where = _lines_for(derivation_id, lang)
    render(d, report, key_prefix, compact=compact, seconds=seconds, prepared=(shown, claim, where))


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
    prepared: tuple | None = None,
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
    st.caption(_t("ui.source", source=d.source) + ("" if compact else _t("ui.chapter", chapter=chapter_title(d.id))))

    for line in shown:
        _line(line)
    if report.claim_check is not None:
        c = report.claim_check
        st.caption(md_escape(claim_check_text(d, c)), help=method_text(c.method) or None)
    if where:
        st.latex(r"\text{{{} }}\; ".format(_t("ui.where")) + r",\qquad ".join(where))
    for note in d.notes:
        st.caption(md_text(note))
    _numbers_panel(d, key_prefix, compact)
    if compact:
        st.page_link("pages/beyond/derivations.py", label=_t("ui.all_link"), icon=":material/functions:")


def _line(line: Line) -> None:
    """One line in its own box: the formula left-aligned (so the = and ↝ signs form a column) with
    its rule beside it, or, when the formula is too wide for that, the rule above it."""
    beside, size = layout(line.latex)
    with st.container(border=True):
        if beside:
            left, right = st.columns([3, 2], vertical_alignment="center", gap="medium")
            with left:
                st.latex(size + " " + line.latex, width="content")
            with right:
                _rule(line)
        else:
            _rule(line)
            st.latex(size + " " + line.latex, width="content")


def _rule(line: Line) -> None:
    tag = f" :orange-badge[{_t('ui.modelling_choice')}]" if line.kind == "substitution" else ""
    st.markdown(f"**{line.index}.**{tag} {md_text(line.rule)}")
    if line.check is not None:
        if line.check.ok:
            st.caption(f":green[{_t('ui.proven')}] · sympy: `{line.check.method}`", help=method_text(line.check.method))
        else:
            message = D.message_text(line.check, i18n.language())
            st.caption(f":red[{_t('ui.not_proven_line')}] — {md_escape(message)}")


def _key(key_prefix: str, d: D.Derivation, name: str) -> str:
    return f"{key_prefix}:{d.id}:{name}"


def _set_values(keys: dict, values: dict) -> None:
    for name, key in keys.items():
        st.session_state[key] = values[name]


def _draw_random(d: D.Derivation, keys: dict, counter_key: str) -> None:
    st.session_state[counter_key] = st.session_state.get(counter_key, 0) + 1
    seed = int(st.session_state.get("seed", 0)) * 1_000 + st.session_state[counter_key]
    _set_values(keys, random_values(d, seed))


@st.fragment
def _numbers_panel(d: D.Derivation, key_prefix: str, compact: bool) -> None:
    """Number inputs for every parameter; the first and last line evaluated; their difference.

    A fragment: moving a number reruns only this panel, never the proofs or the rest of the page.
    A fragment rerun does not pass through app.py, so it sets this run's language itself.
    """
    activate()
    keys = {p.name: _key(key_prefix, d, p.name) for p in d.parameters}
    specs = {p.name: input_spec(p) for p in d.parameters}
    for p in d.parameters:
        st.session_state.setdefault(keys[p.name], p.default)
    with st.container(border=True):
        st.markdown("#### " + _t("ui.numbers.heading"))
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
                            for r in range(0, len(entries), width):
                                row = st.columns(width)
                                for c, p in zip(row, entries[r : r + width], strict=False):
                                    _input(c, p, specs[p.name], keys[p.name], label=specs[p.name].short_label)

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
        if not cmp.matrix:
            c1, c2, c3 = st.columns(3)
            c1.metric(first_label, fmt(float(first)))
            c2.metric(last_label, fmt(float(last)))
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


def _input(container, p: D.Parameter, spec: InputSpec, key: str, label: str) -> None:
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
