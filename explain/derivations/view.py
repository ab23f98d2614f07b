"""The Derivations page's pure core: what a proof looks like on screen, without Streamlit.

ui/derivation.py draws what these functions return; the tests check them directly, including for a
deliberately broken derivation:
- `status`: the badge (green when every step and the claim were proven, else red and the line);
- `lines`, `step_latex`, `claim_display`, `claim_check_text`, `where_latex`, `layout`: the lines as
  LaTeX with their relation signs, rules and proof methods, and how wide they print;
- `input_spec`, `random_values`, `compare`, `fmt`, `matrix_latex`, `value_table`: the numbers panel;
- `catalogue`: the table of every identity with its badge and chapter;
- `chapter_title`: the chapter each identity belongs to, from the map the chapters' declarations make.

Words come from derivations.ui.* in the catalogue, in the current run's language (English outside
the app).
"""

from __future__ import annotations

import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt
import sympy as sp
from sympy.matrices.expressions import MatAdd

from explain import i18n
from explain.derivations.atoms import HIGHLIGHT_COLOR, claim_latex, to_latex
from explain.derivations.common import SHIFT_PARAMETERS, is_frequency
from explain.derivations.prover import Value, message_text
from explain.derivations.registry import all_derivations
from explain.derivations.types import Derivation, Parameter, Step, StepCheck, VerifyReport


def _t(key: str, /, **values: object) -> str:
    """derivations.<key> in the current run's language."""
    return i18n.t(f"derivations.{key}", i18n.language(), **values)


def chapter_title(derivation_id: str, chapter_of: Mapping[str, str], lang: str | None = None) -> str:
    """The title of the chapter showing an identity ('—' if none shows it), in `lang` (default: the
    current run's language). `chapter_of` maps identity ids to chapter keys: the chapters' own
    declarations (explain/chapter.py: Chapter.derivations), collected by ui/chapters.py."""
    key = chapter_of.get(derivation_id)
    return i18n.t(f"chapters.{key}.title", lang) if key is not None else "—"


# The proof methods a StepCheck names, in the order prover.py tries them
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
    color: Literal["green", "red"]  # st.badge colour: green (every check passed) or red
    label: str  # the badge text
    detail: str  # one sentence for under the badge (plain text)
    failed_index: int | None  # the line that failed (len(steps) = the claim), or None


def where_failed(derivation: Derivation, index: int) -> str:
    """'line 3', or 'the claim' for the claim check (index len(steps))."""
    return _t("ui.the_claim") if index == len(derivation.steps) else _t("ui.line", k=index)


def rule_of(derivation: Derivation, index: int) -> str:
    """The rule of line `index` as this derivation words it; the claim check's for len(steps)."""
    return derivation.steps[index].rule if index < len(derivation.steps) else _t("ui.claim_rule")


def status(derivation: Derivation, report: VerifyReport) -> Status:
    """The badge for a report: green when every step and the claim were proven, else red and the
    first step that failed, with its rule and sympy's message.

    The report may come from the English registry; the rule is read from `derivation`, so a
    derivation in another language names the failing line in its own words."""
    n_steps = len(derivation.steps) - 1
    subs = sum(s.kind == "substitution" for s in derivation.steps)
    bad = report.first_failure
    if bad is None:  # every check passed
        steps = (
            _t("ui.all_steps", n=n_steps) if n_steps > 2 else _t("ui.both_steps") if n_steps == 2 else _t("ui.the_step")
        )
        kinds = _t("ui.step_kinds", equalities=n_steps - subs, substitutions=subs) if subs else ""
        proved = "ui.proved_claim" if report.claim_check is not None else "ui.proved"
        return Status(True, "green", _t("ui.verified_label"), _t(proved, steps=steps, kinds=kinds), None)
    where = where_failed(derivation, bad.index)
    message = message_text(bad, i18n.language())
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
    check: StepCheck | None  # None for the starting line

    @property
    def proven(self) -> bool:
        return self.check is None or self.check.ok


def _relation(kind: str) -> str:
    return {"start": "", "equal": "=", "substitution": SUBSTITUTION_ARROW}[kind]


def step_latex(s: Step, highlight: bool = True) -> str:
    """The step's expression; a long sum of terms (Transformer-XL, DeBERTa) one term per line.

    Each term is printed by the same `to_latex` from the same sympy objects; only the line breaks
    are added here. The highlight goes to the first term that contains the changed part, which is
    where `to_latex` puts it on the single line.
    """
    tex = to_latex(s, highlight=highlight)
    expr = s.expr
    if not isinstance(expr, MatAdd) or len(tex) <= LONG_SUM:
        return tex
    terms = [to_latex(a) for a in expr.args]
    if " + ".join(terms) != to_latex(s):
        return tex  # the printer did something other than join the terms: keep its line
    if highlight and s.changed is not None:
        part = to_latex(s.changed)
        for k, t in enumerate(terms):
            if part in t:
                terms[k] = t.replace(part, rf"\textcolor{{{HIGHLIGHT_COLOR}}}{{{part}}}", 1)
                break
    return r"\begin{aligned}&\hphantom{{}+{}}" + r" \\ &+ ".join(terms) + r"\end{aligned}"


def lines(derivation: Derivation, report: VerifyReport | None, highlight: bool = True) -> list[Line]:
    checks = {c.index: c for c in report.checks} if report is not None else {}
    out = []
    for k, s in enumerate(derivation.steps):
        body = step_latex(s, highlight)
        rel = _relation(s.kind)
        out.append(Line(k, s.kind, f"{rel} {body}".strip(), s.rule, checks.get(k)))
    return out


def claim_display(derivation: Derivation) -> str:
    """The claim as a formula: `lhs = rhs` for an equation; for an exact derivation whose claim is
    one expression, first line = claim; for one that ends in modelling choices, first line ↝ claim
    (the claim is then not equal to the first line, and the sign says so). Too wide for one line,
    the right side goes on a second line."""
    claim = derivation.claim_expr
    if claim is None:
        return ""
    if isinstance(claim, sp.Equality):
        lhs, sign, rhs = to_latex(claim.lhs), "=", to_latex(claim.rhs)
    else:
        lhs = to_latex(derivation.steps[0].expr)
        sign = "=" if derivation.exact else SUBSTITUTION_ARROW
        rhs = claim_latex(derivation)
        if isinstance(claim, MatAdd) and len(rhs) > LONG_SUM:
            rhs = (
                r"\begin{aligned}&\hphantom{{}+{}}"
                + r" \\ &+ ".join(to_latex(a) for a in claim.args)
                + r"\end{aligned}"
            )
    one_line = f"{lhs} {sign} {rhs}"
    if visible_width(one_line) <= LARGE or "aligned" in rhs:
        return one_line
    return r"\begin{aligned}&" + lhs + r" \\ &" + sign + " " + rhs + r"\end{aligned}"


def claim_check_text(derivation: Derivation, check: StepCheck) -> str:
    """What the claim check proved, in words (plain text)."""
    if isinstance(derivation.claim_expr, sp.Equality):
        what = _t("ui.claim_equation")
    else:
        what = _t("ui.claim_expression", k=len(derivation.steps) - 1)
    if check.ok:
        return _t("ui.claim_checked", what=what, method=check.method)
    return _t("ui.claim_not_proven", what=what, message=message_text(check, i18n.language()))


def where_latex(derivation: Derivation) -> list[str]:
    """The definitions a derivation unfolds, as `old = new` (b(i, j) = −m_h(i − j), g_it = 1)."""
    out = []
    for old, new in derivation.where:
        if isinstance(new, sp.Lambda):
            args = new.variables
            lhs = old[args] if isinstance(old, sp.IndexedBase) else old(*args)
            out.append(f"{to_latex(lhs)} = {to_latex(new.expr)}")
        else:
            out.append(f"{to_latex(old)} = {to_latex(new)}")
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


def input_spec(p: Parameter) -> InputSpec:
    entry = _ENTRY.match(p.label)
    group, short = (entry.group(1), f"[{entry.group(2)}]") if entry else ("", p.label)
    if isinstance(p.default, (int, np.integer)) and not isinstance(p.default, bool):
        signed = p.name in SHIFT_PARAMETERS  # by name, not by label: labels are words
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


def random_values(derivation: Derivation, seed: int) -> dict[str, float]:
    """Seeded 'any numbers' for the Random button: small positions and shifts, moderate reals."""
    rng = random.Random(seed)
    out: dict[str, float] = {}
    for p in derivation.parameters:
        spec = input_spec(p)
        if spec.integer:
            out[p.name] = rng.randint(-40, 40) if spec.min_value < 0 else rng.randint(0, 60)
        elif is_frequency(p.name):
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


def compare(first: npt.ArrayLike, last: npt.ArrayLike) -> Comparison:
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


def matrix_latex(values: npt.ArrayLike, digits: int = 4) -> str:
    """A list of rows (a matrix or a column vector) as a KaTeX bmatrix."""
    rows = np.asarray(values, dtype=float)
    if rows.ndim == 1:
        rows = rows[:, None]

    def cell(v: float) -> str:
        v = 0.0 if abs(v) < 0.5 * 10**-digits else v
        return f"{v:.{digits}f}"

    body = r" \\ ".join(" & ".join(cell(v) for v in row) for row in rows)
    return r"\begin{bmatrix}" + body + r"\end{bmatrix}"


def value_table(derivation: Derivation, values_per_line: Sequence[Value]) -> str:
    """Markdown table: every line's number (or, for matrices, its distance from line 0)."""
    first = np.asarray(values_per_line[0], dtype=float)
    scalar = first.ndim == 0
    line, step = _t("ui.table.line"), _t("ui.table.step")  # no empty header cell: a screen reader names every column
    head = (
        f"| {line} | {step} | {_t('ui.table.value')} | {_t('ui.table.differs')} |"
        if scalar
        else f"| {line} | {step} | {_t('ui.table.largest')} |"
    )
    rows = [head, "|---:|:---|---:|---:|" if scalar else "|---:|:---|---:|"]
    tags = {"start": _t("ui.table.start"), "equal": "=", "substitution": _t("ui.table.substitution")}
    for k, (s, value) in enumerate(zip(derivation.steps, values_per_line, strict=False)):
        v = np.asarray(value, dtype=float)
        tag = tags[s.kind]
        diff = float(np.max(np.abs(v - first))) if v.shape == first.shape else float("nan")
        dtext = "0" if diff == 0 else (f"{diff:.1e}" if diff < 1e-3 else fmt(diff))
        rows.append(f"| {k} | {tag} | {fmt(float(v))} | {dtext} |" if scalar else f"| {k} | {tag} | {dtext} |")
    return "\n".join(rows)


def catalogue(reports: Mapping[str, VerifyReport], chapter_of: Mapping[str, str]) -> str:
    """Markdown table of every registered derivation with its badge, chapter, size and proof methods,
    in the current language.

    reports: derivation id → VerifyReport (the page passes the cached ones); chapter_of: identity id →
    the key of the chapter that shows it."""
    head = [_t(f"ui.catalogue.{k}") for k in ("status", "identity", "chapter", "lines", "methods")]
    rows = ["| " + " | ".join(head) + " |", "|:--|:--|:--|--:|:--|"]
    for d in all_derivations(i18n.language()):
        s = status(d, reports[d.id])
        text = (
            _t("ui.catalogue.verified")
            if s.failed_index is None
            else _t("ui.catalogue.fails_at", where=where_failed(d, s.failed_index))
        )
        icon = ":material/verified:" if s.ok else ":material/error:"
        methods = sorted({c.method for c in reports[d.id].all_checks if c.ok and c.method}, key=_method_order)
        rows.append(
            f"| :{s.color}-badge[{icon} {text}] | {md_escape(d.title)} | {md_escape(chapter_title(d.id, chapter_of))} "
            f"| {len(d.steps)} | {', '.join(f'`{m}`' for m in methods)} |"
        )
    return "\n".join(rows)


def _method_order(method: str) -> int:
    names = list(METHODS)
    head = method.split("+")[-1].strip()
    return names.index(head) + (100 if method.startswith("substitution") else 0) if head in names else 999
