"""The Derivations chapter, ui/derivation.py and its pure core explain/derivations/view.py: every
identity rendered from the engine's own objects, a badge decided by running `verify`, a red badge
naming the failing line for a broken derivation, and a numbers panel that agrees with an independent
computation at the inputs' extremes.
"""

from __future__ import annotations

import ast
import dataclasses

import numpy as np
import pytest
import sympy as sp
from streamlit.testing.v1 import AppTest
from sympy.matrices.expressions import MatMul

from explain import derivations as D
from explain.derivations import Rot, Step
from explain.derivations import view as DV
from tests.helpers import ROOT, TIMEOUT, errors, open_page
from ui.chapters import BY_KEY, CHAPTER_OF, CHAPTERS, chapter_title_of, title

PAGE = "pages/beyond/derivations.py"
IDS = [d.id for d in D.ALL_DERIVATIONS]
GREEN = ":green-badge[:material/verified: Verified by sympy]"


@pytest.fixture(scope="module")
def chapter():
    at = open_page(PAGE)
    assert not errors(at)
    return at


def _latex_bodies(at) -> list[str]:
    return [el.value for el in at.latex]


def _markdown(at) -> str:
    return "\n".join(m.value for m in at.markdown)


def _metric(at, label_start: str) -> str:
    for m in at.metric:
        if m.label.startswith(label_start):
            return m.value
    raise AssertionError(f"no metric {label_start!r}; have {[m.label for m in at.metric]}")


def _num(text: str) -> float:
    return float(text.replace("−", "-"))


def _broken_rope():
    """rope-matrix-2d with the classic error: R((m − n)θ) where the paper has R((n − m)θ)."""
    d = D.get("rope-matrix-2d")
    q, k = d.steps[3].expr.args[0], d.steps[3].expr.args[-1]
    m, n, theta = sp.symbols("m n theta", real=True)
    steps = list(d.steps)
    steps[3] = Step(MatMul(q, Rot((m - n) * theta), k), d.steps[3].rule)
    return dataclasses.replace(d, steps=tuple(steps))


# --- the chapter ------------------------------------------------------------------------------


def test_catalogue_shows_a_verified_badge_for_every_identity(chapter):
    text = _markdown(chapter)
    catalogue = next(m.value for m in chapter.markdown if m.value.startswith("| status |"))
    rows = catalogue.splitlines()[2:]
    assert len(rows) == len(IDS)
    for d, row in zip(D.ALL_DERIVATIONS, rows, strict=False):
        assert ":green-badge[:material/verified: verified]" in row
        assert DV.md_escape(d.title) in row
        # The chapter is named by its title from the table of contents, as the sidebar names it.
        assert f"| {DV.md_escape(BY_KEY[CHAPTER_OF[d.id]].title)} |" in row
    assert "red-badge" not in catalogue
    for heading in ("How to read a derivation", "What “verified” means"):
        assert heading in [h.value for h in chapter.header]
    # The prose says which sympy test each method name stands for.
    for method in ("structural", "per-term", "expand_trig", "complex"):
        assert f"`{method}`" in text


def test_every_derivation_is_rendered_from_the_engines_objects_with_its_badge(chapter):
    at = chapter
    for d in D.ALL_DERIVATIONS:
        at.selectbox(key="derivation").set_value(d.id).run()
        assert not errors(at), d.id
        bodies = _latex_bodies(at)
        # One st.latex per step, plus the claim (and a "where" line when there is one).
        assert len(bodies) >= len(d.steps) + 1, d.id
        for s in d.steps:
            expected = DV.step_latex(s)
            assert any(expected in b for b in bodies), (d.id, s.rule)
        if any(s.changed is not None for s in d.steps):
            assert any("\\textcolor{" + D.HIGHLIGHT_COLOR in b for b in bodies), d.id
        assert any(DV.claim_display(d) in b for b in bodies), d.id
        md = _markdown(at)
        assert GREEN in md, d.id
        for s in d.steps:
            assert DV.md_escape(s.rule) in md, (d.id, s.rule)
        # A proof method under every step's rule after the start (in small type, in the rule's own
        # markdown, whose help explains the method), and the claim check.
        proven = [m for m in at.markdown if "  \n:small[:green[✓ proven]" in m.value]
        assert len(proven) == len(d.steps) - 1, d.id
        report = D.verify(d)
        for c, m in zip(report.checks, proven, strict=True):
            assert m.value.endswith(f" · sympy: `{c.method}`]")
            assert m.proto.help == DV.method_text(c.method)
        assert at.query_params["d"] == d.id


def test_show_all_renders_every_step_of_every_derivation():
    at = open_page(PAGE)
    at.toggle(key="derivations_all").set_value(True).run()
    assert not errors(at)
    total = sum(len(d.steps) for d in D.ALL_DERIVATIONS)
    assert len(at.latex) >= total + len(IDS)
    assert _markdown(at).count(GREEN) == len(IDS)
    assert len(at.subheader) >= len(IDS)
    # One numbers panel per derivation, folded: no input is made until its panel is opened …
    assert not [w.key for w in at.number_input if w.key.startswith("all:")]
    # … and opening a panel shows that derivation's inputs, under their own keys, and no other's.
    for d in D.ALL_DERIVATIONS:
        at.session_state[f"all:{d.id}:#numbers"] = True  # open the expander, as a click would
        at.run()
        assert not errors(at)
        keys = {w.key for w in at.number_input if w.key.startswith(f"all:{d.id}:")}
        assert keys == {f"all:{d.id}:{p.name}" for p in d.parameters}, d.id
        at.session_state[f"all:{d.id}:#numbers"] = False
    at.run()
    assert not [w.key for w in at.number_input if w.key.startswith("all:")]


def test_verification_is_cached_and_not_rerun(chapter, monkeypatch):
    """The page runs verify once per derivation id; a rerun must not prove again."""
    at = chapter
    at.selectbox(key="derivation").set_value("sinusoidal-shift").run()

    def refuse(_):
        raise AssertionError("verify called on a rerun")

    monkeypatch.setattr(D, "verify", refuse)
    at.run()
    assert not errors(at)
    assert GREEN in _markdown(at)


def test_the_proving_spinner_is_set_up_only_the_first_time(monkeypatch):
    """The spinner speaks the page's language, so it cannot be the cache's own; it is shown by the
    first run of a cached call per (id, language), so a rerun adds no element to the page."""
    import streamlit as st

    from ui import derivation as UD

    shown = []
    real = st.spinner

    def spy(text, **kwargs):
        shown.append(text)
        return real(text, **kwargs)

    def script():
        import streamlit as st

        from explain import i18n
        from ui import derivation as UD

        i18n.set_language(st.session_state.get("test_lang", "en"))
        UD.verified("sinusoidal-shift")
        UD.verified("rope-matrix-2d")

    monkeypatch.setattr(st, "spinner", spy)
    UD._announced_proof.clear()  # as on a fresh server (the proofs themselves stay cached)
    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert shown == ["Proving the steps with sympy…"] * 2
    at.run()
    at.run()
    assert len(shown) == 2  # reruns: no spinner
    at.session_state["test_lang"] = "ko"
    at.run()
    assert not at.exception
    assert shown[2:] == ["sympy로 각 단계를 증명하는 중…"] * 2  # in the language of the page
    at.run()
    assert len(shown) == 4


# --- the numbers panel ------------------------------------------------------------------------


def test_rope_numbers_at_the_extremes_match_an_independent_rotation(chapter):
    at = chapter
    at.selectbox(key="derivation").set_value("rope-matrix-2d").run()
    before = _metric(at, "Line 0")
    values = {"m": 100_000, "n": 0, "theta": -100.0, "q1": 100.0, "q2": -100.0, "k1": 0.3, "k2": 1.1}
    for name, v in values.items():
        at.number_input(key=f"one:rope-matrix-2d:{name}").set_value(v)
    at.run()
    assert not errors(at)
    first, last = _num(_metric(at, "Line 0")), _num(_metric(at, "Line 4"))
    assert _metric(at, "Line 0") != before

    def rot(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    q, k = np.array([100.0, -100.0]), np.array([0.3, 1.1])
    expected = (rot(100_000 * -100.0) @ q) @ (rot(0 * -100.0) @ k)
    assert first == pytest.approx(expected, rel=1e-5)
    assert last == pytest.approx(first, rel=1e-5)
    assert _num(_metric(at, "Difference")) <= 1e-9 * max(1.0, abs(first))
    assert ":green[**equal**]" in _markdown(at)


@pytest.mark.parametrize("extreme", ["max", "min"])
def test_every_panel_agrees_with_numeric_check_at_the_bounds(chapter, extreme):
    """Every input at its upper (or lower) bound: the panel shows numeric_check's numbers, equal."""
    at = chapter
    for d in D.ALL_DERIVATIONS:
        at.selectbox(key="derivation").set_value(d.id).run()
        values = {}
        for p in d.parameters:
            spec = DV.input_spec(p)
            v = spec.max_value if extreme == "max" else spec.min_value
            values[p.name] = int(v) if spec.integer else float(v)
            at.number_input(key=f"one:{d.id}:{p.name}").set_value(values[p.name])
        at.run()
        assert not errors(at), d.id
        first, last = D.numeric_check(d, values)
        cmp = DV.compare(first, last)
        assert cmp.equal, (d.id, cmp)
        if not cmp.matrix:
            shown = _num(_metric(at, "Line 0"))
            assert shown == pytest.approx(first, rel=1e-5, abs=1e-6), d.id
            assert _num(_metric(at, f"Line {d.equality_span[1]}")) == pytest.approx(last, rel=1e-5, abs=1e-6)
        else:
            assert _num(_metric(at, "Largest entry difference")) == pytest.approx(cmp.difference, abs=1e-12)
        assert ":green[**equal**]" in _markdown(at), d.id


def test_substitution_lines_differ_in_the_value_table(chapter):
    at = chapter
    at.selectbox(key="derivation").set_value("absolute-pe-attention").run()
    table = next(m.value for m in at.markdown if m.value.startswith("| line |"))
    rows = [r.split("|")[1:-1] for r in table.splitlines()[2:]]
    assert [r[1].strip() for r in rows] == ["start", "=", "=", "↝ substitution", "↝ substitution", "↝ substitution"]
    assert all(r[3].strip() == "0" or float(r[3]) < 1e-9 for r in rows[:3])
    assert any(r[3].strip() != "0" and _num(r[3]) > 1e-3 for r in rows[3:])
    # The comparison stops at the last equality, line 2.
    assert [m.label for m in at.metric][:2] == ["Line 0 (first)", "Line 2 (last equality)"]


def test_random_and_default_buttons(chapter):
    at = chapter
    at.selectbox(key="derivation").set_value("alibi-shift-invariance").run()
    at.button(key="one:alibi-shift-invariance:#reset").click().run()
    defaults = {
        p.name: at.number_input(key=f"one:alibi-shift-invariance:{p.name}").value
        for p in D.get("alibi-shift-invariance").parameters
    }
    assert defaults == D.get("alibi-shift-invariance").defaults
    at.button(key="one:alibi-shift-invariance:#random").click().run()
    drawn = {n: at.number_input(key=f"one:alibi-shift-invariance:{n}").value for n in defaults}
    assert drawn != defaults
    assert not errors(at)
    first = _num(_metric(at, "Line 0"))
    assert first == pytest.approx(-drawn["m_h"] * (drawn["i"] - drawn["j"]), abs=1e-5)
    assert _metric(at, "Difference") == "0"
    at.button(key="one:alibi-shift-invariance:#reset").click().run()
    assert {n: at.number_input(key=f"one:alibi-shift-invariance:{n}").value for n in defaults} == defaults


# --- the pure core: badge, lines, inputs ------------------------------------------------------


def test_every_identity_is_shown_by_exactly_one_chapter():
    """The chapters' declarations (Chapter.derivations) name every registered identity once and no
    identity that does not exist; the title the catalogue shows is that chapter's title."""
    named = [d for c in CHAPTERS for d in c.derivations]
    assert sorted(named) == sorted(IDS), (set(IDS) - set(named), set(named) - set(IDS))
    for derivation_id in IDS:
        assert DV.chapter_title(derivation_id, CHAPTER_OF) == BY_KEY[CHAPTER_OF[derivation_id]].title
        assert chapter_title_of(derivation_id, "ko") == title(CHAPTER_OF[derivation_id], "ko")
    assert DV.chapter_title("no-such-identity", CHAPTER_OF) == "—"


def test_a_chapter_embeds_only_its_own_identities():
    """A page that calls show_derivation("<id>") or proof(label, "<id>", …) is the chapter whose
    declaration names that id, so the catalogue's chapter column points where the proof is actually shown."""
    embedded = {}
    for chapter in CHAPTERS:
        tree = ast.parse((ROOT / chapter.path).read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            name = getattr(node, "func", None) and getattr(node.func, "id", getattr(node.func, "attr", None))
            at = {"show_derivation": 0, "proof": 1}.get(str(name))
            if (
                isinstance(node, ast.Call)
                and at is not None
                and len(node.args) > at
                and isinstance(node.args[at], ast.Constant)
            ):
                embedded[node.args[at].value] = chapter.key
    assert len(embedded) >= 10  # the chapters embed most identities; the test must see them
    for derivation_id, chapter_key in embedded.items():
        assert CHAPTER_OF[derivation_id] == chapter_key, derivation_id


def test_status_is_green_only_when_verify_proved_everything():
    for d in D.ALL_DERIVATIONS:
        s = DV.status(d, D.verify(d))
        assert s.ok and s.color == "green" and s.label == "Verified by sympy" and s.failed_index is None
        n = len(d.steps) - 1
        assert (f"all {n} steps" if n > 2 else "both steps") in s.detail


def test_a_broken_derivation_gets_a_red_badge_naming_the_failing_line():
    d = _broken_rope()
    report = D.verify(d)
    s = DV.status(d, report)
    assert not s.ok and s.color == "red"
    assert s.failed_index == 3
    assert s.label == "Verification failed at line 3"
    assert d.steps[3].rule in s.detail and "Not proven" in s.detail
    shown = DV.lines(d, report)
    assert [ln.proven for ln in shown] == [True, True, True, False, False]  # line 4 no longer follows either
    assert shown[3].check.message


def test_a_wrong_claim_is_named_as_the_claim():
    d = D.get("cope-all-gates-open")
    i, j = sp.symbols("i j", integer=True)
    broken = dataclasses.replace(d, claim_expr=i - j)
    s = DV.status(broken, D.verify(broken))
    assert s.label == "Verification failed at the claim" and s.failed_index == len(d.steps)


def test_the_broken_derivation_renders_red_in_streamlit():
    def script():
        import dataclasses

        import sympy as sp
        from sympy.matrices.expressions import MatMul

        from explain import derivations as D
        from explain.derivations import Rot, Step
        from ui import derivation as UD

        d = D.get("rope-matrix-2d")
        q, k = d.steps[3].expr.args[0], d.steps[3].expr.args[-1]
        m, n, theta = sp.symbols("m n theta", real=True)
        steps = list(d.steps)
        steps[3] = Step(MatMul(q, Rot((m - n) * theta), k), d.steps[3].rule)
        broken = dataclasses.replace(d, steps=tuple(steps))
        UD.render(broken, D.verify(broken), key_prefix="broken")

    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    assert not at.exception
    md = "\n".join(m.value for m in at.markdown)
    assert ":red-badge[:material/error: Verification failed at line 3]" in md
    assert "Verified by sympy" not in md
    assert len(at.error) == 1 and "line 3" in at.error[0].value
    fails = [m.value for m in at.markdown if "  \n:small[:red[✗ not proven]" in m.value]
    assert len(fails) == 2  # line 3 and line 4, which no longer follows from it


def test_a_line_is_three_elements_and_its_rules_form_a_column():
    """A line beside its rule: one bordered horizontal box holding the formula (its width) and the
    rule (a fixed width, pushed to the box's right edge), so every line's rule starts at the same x.
    A formula too wide for that: the rule above it, in a plain bordered box. Three elements either
    way: "show all" draws about 140 lines, and Streamlit's cost is per element."""

    def script():  # (AppTest keeps no element's width: the rule's fixed width is seen in screenshots)
        from explain import derivations as D
        from explain.derivations import view as DV
        from ui import derivation as UD

        d = D.get("sinusoidal-shift")
        shown = DV.lines(d, D.verify(d))
        UD._line(shown[1])  # beside its rule
        UD._line(shown[3])  # the 6 × 6 block matrix: too wide

    at = AppTest.from_function(script, default_timeout=TIMEOUT).run()
    assert not at.exception
    beside, above = at.main.children.values()
    box = beside.proto.flex_container
    assert box.border and box.direction == box.HORIZONTAL and box.wrap and box.justify == box.SPACE_BETWEEN
    formula, rule = beside.children.values()
    assert formula.type == "latex" and rule.type == "markdown"
    box = above.proto.flex_container
    assert box.border and box.direction == box.VERTICAL
    assert [c.type for c in above.children.values()] == ["markdown", "latex"]


def test_catalogue_marks_a_failing_report_red():
    reports = {d.id: D.verify(d) for d in D.ALL_DERIVATIONS}
    broken = _broken_rope()
    reports["rope-matrix-2d"] = D.verify(broken)
    rows = DV.catalogue(reports, CHAPTER_OF).splitlines()[2:]
    bad = rows[IDS.index("rope-matrix-2d")]
    assert ":red-badge[:material/error: fails at line 3]" in bad
    assert sum("green-badge" in r for r in rows) == len(IDS) - 1


def test_lines_use_the_right_relation_signs():
    d = D.get("absolute-pe-attention")
    shown = DV.lines(d, D.verify(d))
    assert [ln.latex.split(" ", 1)[0] for ln in shown[1:]] == [
        "=",
        "=",
        DV.SUBSTITUTION_ARROW,
        DV.SUBSTITUTION_ARROW,
        DV.SUBSTITUTION_ARROW,
    ]
    assert not shown[0].latex.startswith(("=", DV.SUBSTITUTION_ARROW))
    # A claim reached through modelling choices is not written as an equality with line 0.
    assert DV.SUBSTITUTION_ARROW in DV.claim_display(d)
    assert DV.claim_display(D.get("cope-all-gates-open")).endswith("= i - j + 1")


def test_long_sums_are_split_into_the_same_terms():
    d = D.get("deberta-three-terms")
    s = d.steps[2]
    tex = DV.step_latex(s)
    assert tex.startswith("\\begin{aligned}")
    for term in s.expr.args:
        assert D.to_latex(term) in tex
    # Short lines are left exactly as the engine prints them.
    short = D.get("alibi-shift-invariance").steps[2]
    assert DV.step_latex(short) == D.to_latex(short, highlight=True)


def test_wide_lines_leave_the_side_column():
    shift = D.get("sinusoidal-shift")
    block = DV.lines(shift, None)[3].latex  # the 6×6 block matrix
    assert DV.visible_width(block) > DV.LARGE
    assert DV.layout(block) == (False, DV.SMALL_SIZE)
    assert DV.layout(DV.lines(shift, None)[4].latex) == (True, DV.STEP_SIZE)  # = T(Δ)PE(p)


def test_inputs_are_bounded_with_the_bounds_in_the_help():
    for d in D.ALL_DERIVATIONS:
        for p in d.parameters:
            spec = DV.input_spec(p)
            assert spec.min_value < spec.max_value
            assert spec.min_value <= p.default <= spec.max_value
            assert spec.integer == isinstance(p.default, int)
            bound = f"{DV.MAX_POSITION:,}" if spec.integer else f"{DV.MAX_REAL:g}"
            assert bound in spec.help, spec.help
    shift = DV.input_spec(D.Parameter("c", "c (shift of both positions)", 4))
    assert shift.min_value == -DV.MAX_POSITION and "−100,000" in shift.help
    pos = DV.input_spec(D.Parameter("i", "i (query position)", 6))
    assert pos.min_value == 0 and "0 to 100,000" in pos.help
    entry = DV.input_spec(D.Parameter("W_q12", "W_q [1,2]", 0.5))
    assert (entry.group, entry.short_label, entry.integer) == ("W_q", "[1,2]", False)


def test_random_values_are_seeded_and_in_bounds():
    d = D.get("absolute-pe-attention")
    a, b, c = DV.random_values(d, 7), DV.random_values(d, 7), DV.random_values(d, 8)
    assert a == b and a != c
    for p in d.parameters:
        spec = DV.input_spec(p)
        assert spec.min_value <= a[p.name] <= spec.max_value
        assert isinstance(a[p.name], int) == spec.integer


def test_compare_and_markdown_escaping():
    assert DV.compare(1.0, 1.0 + 1e-12).equal
    assert not DV.compare(1.0, 1.001).equal
    assert DV.compare([[1.0, 0.0]], [[1.0, 0.0]]).matrix
    assert not DV.compare([1.0, 2.0], [1.0]).equal
    # Rules contain underscores and brackets that Markdown would otherwise eat.
    assert DV.md_escape("p_n → R_(m−n) [a] *b*") == "p\\_n → R\\_(m−n) \\[a\\] \\*b\\*"
    assert DV.fmt(-0.5) == "−0.5" and DV.fmt(-0.0) == "0"


# --- embedded in the sinusoidal chapter -------------------------------------------------------


def test_sinusoidal_chapter_embeds_both_proofs():
    at = open_page("pages/absolute/sinusoidal.py")
    assert not errors(at)
    labels = [e.label for e in at.expander]
    assert "Proof: PE(m)·PE(n) depends only on m − n" in labels
    assert any(lbl.startswith("Proof: PE(p+Δ) = T(Δ)·PE(p)") for lbl in labels)
    # Closed, a proof runs nothing (ui.derivation.proof): no badge, no steps, no inputs.
    assert GREEN not in _markdown(at)
    assert not {w.key for w in at.number_input} & {
        "sin-dot:sinusoidal-dot-product:m",
        "sin-shift:sinusoidal-shift:Delta",
    }
    for prefix in ("sin-dot", "sin-shift"):
        at.session_state[f"{prefix}__proof"] = True  # open the expander, as a click would
    at.run()
    assert not errors(at)
    bodies = _latex_bodies(at)
    for derivation_id in ("sinusoidal-dot-product", "sinusoidal-shift"):
        d = D.get(derivation_id)
        for s in d.steps:
            assert any(DV.step_latex(s) in b for b in bodies), (derivation_id, s.rule)
    assert _markdown(at).count(GREEN) == 2
    keys = {w.key for w in at.number_input}
    assert {"sin-dot:sinusoidal-dot-product:m", "sin-shift:sinusoidal-shift:Delta"} <= keys
    at.number_input(key="sin-shift:sinusoidal-shift:Delta").set_value(-100_000).run()
    assert not errors(at)
    assert _num(_metric(at, "Largest entry difference")) < 1e-9


# --- the prediction ---------------------------------------------------------------------------


def test_the_prediction_answer_is_the_measured_one():
    """The sinusoidal table is float32: its dot products along a diagonal agree to ~1e-6, which
    must still count as "only on n − m" (a 1e-9 threshold once marked the right answer wrong)."""
    at = open_page(PAGE)
    radio = next(r for r in at.radio if r.key == "derivations_q__choice")
    radio.set_value("only on the distance n − m").run()
    at.button(key="derivations_q__reveal").click().run()
    assert not errors(at)
    assert len(at.success) == 1 and not at.warning
    assert "varies by at most" in _markdown(at)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_dot_product_question_facts_against_an_independent_table(lang):
    """The question has no controls: its one setting (32 positions, d = 16), in both languages. The
    spreads it states agree with a table written from the paper's formula here (float64), and the
    answer is the one the float32 table the page measures gives."""
    from explain.chapters import derivations as ch

    q = ch.dot_product_question(lang)
    assert q.answer in q.options and q.answer == "difference"
    w = 10000.0 ** (-2 * np.arange(8) / 16)
    pos = np.arange(32)[:, None] * w[None, :]
    pe = np.empty((32, 16))
    pe[:, 0::2], pe[:, 1::2] = np.sin(pos), np.cos(pos)
    dots = pe @ pe.T
    by_diff = max(np.ptp(np.diagonal(dots, k)) for k in range(-31, 32))
    by_sum = max(np.ptp(np.diagonal(dots[:, ::-1], k)) for k in range(-31, 32))
    f = q.facts
    assert by_diff < 1e-12 and f["by_diff"] < ch.CONSTANT  # float32 rounding only
    assert f["by_sum"] == pytest.approx(by_sum, abs=1e-5) and by_sum > 1
    assert (f["positions"], f["d"]) == (32, 16) and f["title"] == D.get("sinusoidal-dot-product", lang).title
    for text in (f"{f['by_diff']:.1e}", f"{f['by_sum']:.2f}", f["title"], "32", "16"):
        assert text in q.explanation
    # the spreads tell the two apart: one-channel rows r^m have dot products r^(m+n), a function of m + n
    diff, total = ch.largest_spreads(0.9 ** np.arange(8)[:, None])
    assert total < 1e-12 < 0.1 < diff


# --- in Korean --------------------------------------------------------------------------------

KO_GREEN = ":green-badge[:material/verified: sympy 검증 완료]"


def _korean():
    """Run the rest of a test in Korean (the app sets this per script run; a test sets it by hand)."""
    from explain import i18n

    i18n.set_language("ko")
    return i18n


def test_korean_derivations_are_the_same_sympy_objects_with_korean_words():
    from tests.i18n_scan import english_words

    for en in D.ALL_DERIVATIONS:
        ko = D.get(en.id, "ko")
        assert ko is D.get(en.id, "ko")  # built once per language
        assert [(s.expr, s.changed, s.kind, s.substitution) for s in ko.steps] == [
            (s.expr, s.changed, s.kind, s.substitution) for s in en.steps
        ]
        assert (ko.claim_expr, ko.where, ko.stand_ins) == (en.claim_expr, en.where, en.stand_ins)
        assert [(p.name, p.default) for p in ko.parameters] == [(p.name, p.default) for p in en.parameters]
        assert [DV.step_latex(s) for s in ko.steps] == [DV.step_latex(s) for s in en.steps]
        # Every word is Korean: no English outside math, code, names and glosses (as the scan reads it).
        assert ko.title != en.title and ko.intro != en.intro and ko.claim != en.claim, en.id
        texts = [
            ko.title,
            ko.intro,
            ko.claim,
            ko.source,
            *ko.notes,
            *(s.rule for s in ko.steps),
            *(p.label for p in ko.parameters),
        ]
        assert not [(t, english_words(t)) for t in texts if english_words(t)], en.id
        assert len(ko.notes) == len(en.notes)
        assert D.registered(ko) and D.registered(en)
        # Input specs follow the parameter names, not the words: same bounds in both languages.
        for pk, pe in zip(ko.parameters, en.parameters, strict=False):
            a, b = DV.input_spec(pk), DV.input_spec(pe)
            assert (a.integer, a.min_value, a.max_value, a.group != "") == (
                b.integer,
                b.min_value,
                b.max_value,
                b.group != "",
            )
    assert not D.registered(_broken_rope())


def test_a_broken_derivation_fails_in_korean_words():
    d_ko = D.get("rope-matrix-2d", "ko")
    report = D.verify(_broken_rope())  # the proof runs on English objects; its report is language-free
    i18n = _korean()
    try:
        s = DV.status(d_ko, report)
        assert s.label == "3번 줄에서 검증 실패"
        assert d_ko.steps[3].rule in s.detail and "증명하지 못했습니다" in s.detail
        failed = report.checks[2]
        assert not failed.ok and D.message_text(failed, "ko") == "차이가 0으로 정리되지 않습니다"
        assert D.message_text(failed, "en") == failed.message == "the difference does not simplify to 0"
        row = DV.catalogue({**{d.id: D.verify(d) for d in D.ALL_DERIVATIONS}, "rope-matrix-2d": report}, CHAPTER_OF)
        assert ":red-badge[:material/error: 3번 줄에서 실패]" in row
    finally:
        i18n.set_language("en")


def test_substitution_failures_are_explained_in_both_languages():
    d = D.get("absolute-pe-attention")
    s = d.steps[4]
    wrong = dataclasses.replace(s, expr=d.steps[3].expr)  # claims a replacement but changes nothing
    broken = dataclasses.replace(d, steps=(*d.steps[:4], wrong, *d.steps[5:]))
    check = D.verify(broken).checks[3]
    assert not check.ok
    assert check.message.startswith("the previous step with the substitution applied is not this step: ")
    assert D.message_text(check, "ko").startswith("앞 단계에 치환을 적용한 결과가 이 단계와 다릅니다: ")
    assert D.message_text(check, "en") == check.message


def test_the_chapter_in_korean_shows_every_derivation_in_korean():
    from tests.i18n_scan import open_korean

    at = open_korean(PAGE)
    assert not errors(at)
    at.toggle(key="derivations_all").set_value(True).run()
    assert not errors(at)
    md = _markdown(at)
    assert md.count(KO_GREEN) == len(IDS)
    catalogue = next(m.value for m in at.markdown if m.value.startswith("| 상태 |"))
    for d in D.all_derivations("ko"):
        assert DV.md_escape(d.title) in catalogue
        for s in d.steps:
            assert DV.md_text(s.rule) in md, (d.id, s.rule)
    bodies = "\n".join(_latex_bodies(at))
    for d in D.ALL_DERIVATIONS:
        for s in d.steps:
            assert DV.step_latex(s) in bodies, (d.id, s.rule)
    # The numbers panels are folded on this view: open two, as a click would.
    for d_id in ("sinusoidal-dot-product", "alibi-shift-invariance"):
        at.session_state[f"all:{d_id}:#numbers"] = True
    at.run()
    assert not errors(at)
    labels = {w.label for w in at.number_input}
    assert "m (쿼리 위치)" in labels and "c (두 위치를 함께 옮기는 이동)" in labels
    assert "0번 줄 (처음)" in [m.label for m in at.metric]
    # The selectbox names each chapter as the Korean table of contents does.
    options = at.selectbox(key="derivation").options
    assert "사인파 PE: 내적은 m − n에만 의존합니다  ·  사인파 APE" in options
    assert "| 사인파 APE |" in catalogue
    # Switching back to English keeps the page's controls and shows English words again.
    at.session_state["lang"] = "en"
    at.run()
    assert not errors(at)
    assert _markdown(at).count(GREEN) == len(IDS)
    assert at.toggle(key="derivations_all").value is True
