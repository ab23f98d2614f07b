"""The classroom layer (ui/url_state.py, ui/presenter.py, ui/question.py, ui/lessons.py and
ui/common.plot): links restore each page's main controls, bad links fall back to defaults,
presenter mode, predict-then-reveal, lessons, and the numbers under every chart."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from encoders.alibi import alibi_slopes
from encoders.t5 import relative_position_bucket
from explain import figures as F
from explain.lessons import LESSONS
from explain.numbers import MAX_TABLE_CELLS, heatmap_tables, trace_table
from tests.helpers import APP, TIMEOUT, chart, chart_elements, errors, fig_array
from ui import presenter
from ui.chapters import BY_KEY, CHAPTERS


def run_with_params(page: str, params: dict[str, str], sentence: str | None = None) -> AppTest:
    """A fresh session opened with ?params (as a shared link would), then on `page`."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    if sentence is not None:
        at.session_state["sentence"] = sentence
    at.run()
    if page != CHAPTERS[0].path:
        at.switch_page(page).run()
    return at


def value(at: AppTest, key: str):
    """The value of the widget with this key, whatever its kind."""
    for kind in (
        "slider",
        "select_slider",
        "selectbox",
        "multiselect",
        "toggle",
        "checkbox",
        "radio",
        "number_input",
        "text_input",
    ):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0].value
    raise AssertionError(f"no widget with key {key!r}")


# Every chapter's declaration holds the link a teacher shares (Chapter.link: non-default values of
# its main controls) and what the controls then show (Chapter.link_shows). The address holds
# language-neutral ids only (a translated option is linked through ui.url_state.Param), so the same
# link restores the same controls in every language.
LINKS = {c.key: (dict(c.link), dict(c.link_shows)) for c in CHAPTERS}
# What the figures must show for some of those links (the picture, not only the widget, follows):
# chart key → the start of its (English) title.
TITLES = {
    "sinusoidal": ("pe_matrix", "PE matrix (100×32)"),
    "t5": ("t5_staircase", "Full range: N = 64, D = 300, causal"),
    "alibi": ("slopes", "Slopes m for H = 6 heads"),
    "rope-scaling": ("rs_wavelength", "Wavelength 2π/θ′_f per pair"),
}


def test_every_chapter_declares_a_link_that_moves_something():
    for c in CHAPTERS:
        assert c.link and c.link_shows, c.key


@pytest.mark.parametrize("key", list(LINKS))
def test_link_restores_controls_and_page_has_a_question(key):
    params, expected = LINKS[key]
    at = run_with_params(BY_KEY[key].path, {"s": "dog bites man and the man bites the dog", "seed": "3", **params})
    assert not errors(at)
    assert at.session_state["sentence"] == "dog bites man and the man bites the dog" and at.session_state["seed"] == 3
    for k, v in expected.items():
        assert value(at, k) == v, k
    if key in TITLES:
        chart_key, title = TITLES[key]
        assert chart(at, chart_key)["layout"]["title"]["text"].startswith(title)
    # One predict-then-reveal question per chapter: pick the first option, reveal, get a verdict.
    choices = [r for r in at.radio if r.key and r.key.endswith("__choice")]
    assert len(choices) == 1, [r.key for r in choices]
    q = choices[0].key.removesuffix("__choice")
    reveal = at.button(key=f"{q}__reveal")
    assert reveal.disabled  # nothing chosen yet
    choices[0].set_value(choices[0].options[0]).run()
    at.button(key=f"{q}__reveal").click().run()
    assert not errors(at)
    verdicts = [s.value for s in at.success] + [w.value for w in at.warning]
    assert any(v.startswith(("Right:", "Not quite:")) for v in verdicts), verdicts


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("key", list(LINKS))
def test_same_link_restores_the_same_controls_in_every_language(key, lang):
    """The same link, opened in English and with lang=ko: every control as the link says (the address
    holds ids, never a shown label, so nothing is lost in the other language), the page in that
    language, the address keeping the values as written, and no error."""
    from explain.i18n import t

    params, expected = LINKS[key]
    link = {"s": "dog bites man and the man bites the dog", "seed": "3", **params, "lang": lang}
    at = run_with_params(BY_KEY[key].path, link)
    assert not errors(at) and at.session_state["lang"] == lang
    for k, v in expected.items():
        assert value(at, k) == v, (lang, k)
    for k, v in params.items():
        assert at.query_params.get(k, v) == v, (lang, k)  # a bound value at its default leaves the address
    assert at.title[0].value == t(f"chapters.{key}.title", lang)
    if lang == "ko":
        assert any("니다" in m.value for m in at.markdown)  # the prose is Korean (합니다체)


HOSTILE = {
    "t5": (
        {"t5_buckets": "9999", "t5_max_distance": "<script>alert(1)</script>", "t5_causal": "maybe", "t5_head": "-1"},
        {"t5_buckets": 32, "t5_max_distance": 128, "t5_causal": False, "t5_head": 0},
    ),
    "sinusoidal": (
        {"n": "1e9", "sin_d": "7", "base": "12345", "p": "inf", "delta": "1" * 400},
        {"n": 64, "d": 64, "base": 10_000, "p": 5, "delta": 3},
    ),
    "rope-scaling": ({"rs_d": "nan", "rs_s": "inf", "rs_L": ""}, {"rs_d": 128, "rs_s": 4.0, "rs_L": 4096}),
    "rope": (
        {"rope_shift": "1e400", "rope_offset": "-inf", "rope_d": "9", "rope_m": "-1", "rope_q_word": "999"},
        {"rope_shift": 1000, "rope_offset": 0, "rope_d": 16, "rope_m": 2, "rope_q_word": 1, "rope_move": "both"},
    ),
    "trouble": (
        {"trouble_prefix": "x" * 5000, "trouble_l_train": "inf", "trouble_base": "nope"},
        {"trouble_l_train": 32, "trouble_base": "classic"},
    ),
    "cope": (
        {"cope_unit": "🙂", "cope_npos": "-3", "cope_query": "99999", "cope_word": "'; DROP TABLE"},
        {"cope_unit": "sentence ends", "cope_npos": 64},
    ),
    "derivations": ({"d": "../../etc/passwd"}, {"derivation": "sinusoidal-dot-product"}),
}


@pytest.mark.parametrize("key", list(HOSTILE))
def test_bad_link_falls_back_to_defaults(key):
    params, defaults = HOSTILE[key]
    bad = {"seed": "1e99", "present": "maybe", "lesson": "nope", "step": "-5", **params}
    at = run_with_params(BY_KEY[key].path, bad)
    assert not errors(at)
    for k, v in defaults.items():
        assert value(at, k) == v, k
    assert at.session_state["seed"] == 0 and at.session_state["presenter"] is False
    assert at.session_state["lesson"] is None


def test_presenter_mode_scales_figures_and_hides_secondary_controls():
    page = BY_KEY["alibi"].path
    normal = run_with_params(page, {})
    present = run_with_params(page, {"present": "1"})
    assert not errors(normal) and not errors(present)
    assert normal.toggle(key="presenter").value is False and present.toggle(key="presenter").value is True
    h0 = chart(normal, "slopes")["layout"]["height"]
    h1 = chart(present, "slopes")["layout"]["height"]
    assert h1 == round(h0 * presenter.FIGURE_SCALE)
    f0 = chart(normal, "slopes")["layout"]["font"]["size"]
    assert chart(present, "slopes")["layout"]["font"]["size"] == pytest.approx(f0 * presenter.FONT_SCALE)
    labels = lambda at: [e.label for e in at.expander]  # noqa: E731
    # The code panel is not drawn; the display options move into collapsed expanders.
    assert "Show the code this page runs" in labels(normal)
    assert "Show the code this page runs" not in labels(present)
    assert "Slope axis" not in labels(normal) and "Slope axis" in labels(present)
    box = next(e for e in present.expander if e.label == "Slope axis")
    assert [c.key for c in box.checkbox] == ["alibi_log_slopes"]
    assert any("font-size" in str(h.proto) for h in present.get("html"))
    assert not any("font-size" in str(h.proto) for h in normal.get("html"))
    # The toggle itself switches back within the session.
    present.toggle(key="presenter").set_value(False).run()
    assert chart(present, "slopes")["layout"]["height"] == h0
    assert "Show the code this page runs" in labels(present)


def test_t5_question_is_answered_by_the_bucket_function():
    at = run_with_params(BY_KEY["t5"].path, {"t5_buckets": "32", "t5_max_distance": "128"})
    # Which pair of neighbouring keys shares a bucket: +1/+2 or +40/+41? The bucket function says.
    near, far = (
        [int(relative_position_bucket(torch.tensor([r]), True, 32, 128)[0]) for r in p] for p in ((1, 2), (40, 41))
    )
    assert near[0] != near[1] and far[0] == far[1]  # exact up close, a shared log bucket far away
    truth, wrong = "only the far pair (40 and 41 tokens away)", "only the near pair (1 and 2 tokens away)"
    radio = at.radio(key="t5_q__choice")
    assert truth in radio.options and wrong in radio.options and len(radio.options) >= 3
    radio.set_value(wrong).run()
    at.button(key="t5_q__reveal").click().run()
    assert any(w.value.startswith("Not quite") and f"**{truth}**" in w.value for w in at.warning)
    at.button(key="t5_q__again").click().run()
    at.radio(key="t5_q__choice").set_value(truth).run()
    at.button(key="t5_q__reveal").click().run()
    assert any(s.value == f"Right: **{truth}**." for s in at.success)
    assert not errors(at)


def test_alibi_question_is_answered_by_the_slopes():
    at = run_with_params(BY_KEY["alibi"].path, {"alibi_heads": "6"})
    steepest = int(torch.argmax(alibi_slopes(6))) + 1
    at.radio(key="alibi_q__choice").set_value(f"head {steepest}").run()
    at.button(key="alibi_q__reveal").click().run()
    assert any(s.value == f"Right: **head {steepest}**." for s in at.success)


def test_a_question_refuses_an_answer_that_is_not_an_option():
    from explain.question import Question

    with pytest.raises(ValueError, match="not among the options"):
        Question("x", "?", (1, 2), ("one", "two"), 3, "")
    with pytest.raises(ValueError, match="read alike"):
        Question("x", "?", (1, 2), ("same", "same"), 1, "")
    with pytest.raises(ValueError, match="at least two options"):
        Question("x", "?", (1,), ("one",), 1, "")


def test_a_prompt_is_checked_as_a_question_and_answered_whole():
    """ui.question.ask_first's prompt: the same checks as a Question's, and its answered question is
    the same prompt with the computed answer."""
    from explain.question import Prompt, Question

    with pytest.raises(ValueError, match="read alike"):
        Prompt("x", "?", (1, 2), ("same", "same"))
    with pytest.raises(ValueError, match="at least two options"):
        Prompt("x", "?", (1,), ("one",))
    p = Prompt("x", "?", [1, 2], ["one", "two"])
    q = p.answered(2, "Because {n}.", {"n": 2})
    assert q == Question("x", "?", (1, 2), ("one", "two"), 2, "Because {n}.", {"n": 2})
    with pytest.raises(ValueError, match="not among the options"):
        p.answered(3, "", {})


def test_pages_ask_only_questions_built_in_explain():
    """No page computes a question: pages call ui.question.ask with a Question from explain/, and the
    loose-argument predict() of the old classroom layer is gone."""
    import ast
    from pathlib import Path

    import ui.question

    assert not hasattr(ui.question, "predict")
    root = Path(__file__).resolve().parents[1]
    for path in (root / "pages").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            called = getattr(node.func, "id", getattr(node.func, "attr", "")) if isinstance(node, ast.Call) else ""
            if called in ("Question", "Prompt", "answered"):
                raise AssertionError(f"{path}: builds a question in the page")


@pytest.mark.parametrize("lesson", LESSONS, ids=lambda lesson: lesson.key)
def test_every_lesson_step_opens_its_page_with_its_controls(lesson):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.selectbox(key="lesson").set_value(lesson.key).run()
    for k, step in enumerate(lesson.steps):
        if k:
            at.button(key="lesson_next").click().run()
        assert not errors(at), (lesson.key, k)
        assert at.title[0].value == BY_KEY[step.chapter].title, (lesson.key, k)
        banner = [i.value for i in at.info if "step" in i.value]
        assert banner and banner[0].startswith(f"**{lesson.title()}** · step {k + 1} of {len(lesson.steps)}")
        for key, v in step.controls_in("en").items():
            assert at.session_state[key] == v and value(at, key) == v, (lesson.key, k, key)
        if step.sentence_in("en") is not None:
            assert at.sidebar.text_area(key="sentence").value == step.sentence_in("en")
    assert at.button(key="lesson_next").disabled
    at.button(key="lesson_prev").click().run()
    assert at.title[0].value == BY_KEY[lesson.steps[-2].chapter].title and not errors(at)
    at.button(key="lesson_leave").click().run()
    assert at.session_state["lesson"] is None and not errors(at)


def test_a_lesson_link_restores_the_step():
    at = run_with_params(BY_KEY["cope"].path, {"lesson": "what-cope-counts", "step": "3"})
    assert at.session_state["lesson"] == "what-cope-counts" and at.session_state["lesson_step"] == 2
    assert any(i.value.startswith("**What CoPE counts** · step 3 of 4") for i in at.info)


# --------------------------------------------------------------------------- the numbers table
def test_numbers_table_matches_the_figure():
    at = run_with_params(BY_KEY["sinusoidal"].path, {"n": "20", "sin_d": "8"})
    assert len(at.dataframe) == 0 and not at.get("download_button")  # closed: nothing is built
    at.session_state["pe_matrix__numbers"] = True  # open the expander, as a click would
    at.run()
    assert not errors(at) and len(at.dataframe) == 1
    table = at.dataframe[0].value
    z = fig_array(chart(at, "pe_matrix")["data"][0]["z"])
    assert table.shape == z.shape == (20, 8)
    np.testing.assert_array_equal(table.to_numpy(), z)
    assert list(table.index) == [str(i) for i in range(20)]
    assert [b.proto.label for b in at.get("download_button")] == ["Download CSV"]


def test_token_tables_name_repeated_tokens_uniquely():
    toks = ["the", "cat", "sat", "on", "the", "mat"]
    z = np.arange(36, dtype=float).reshape(6, 6)
    z[0, 5] = np.nan
    for fig in (
        F.token_heatmap(z, toks, toks, "t"),
        F.token_map(z, toks, "t"),
        F.token_heatmap_grid(np.stack([z, -z]), toks, "t", panel_titles=["a", "b"]),
    ):
        tables = heatmap_tables(fig)
        _name, df = tables[0]
        assert len(set(df.index)) == 6 and len(set(df.columns)) == 6
        assert df.index[4].endswith("the") and df.index[4] != df.index[0]
        np.testing.assert_array_equal(df.to_numpy(), z)
    grid = F.token_heatmap_grid(np.stack([z, -z]), toks, "t", panel_titles=["a", "b"])
    assert [n for n, _ in heatmap_tables(grid)] == ["a", "b"]  # panels named by their titles
    # Hostile tokens come back as plain text (the figures escape them for plotly's HTML).
    df = heatmap_tables(F.token_heatmap(z[:2, :2], ["<b>x", "&y"], ["<b>x", "&y"], "t"))[0][1]
    assert list(df.columns) == ["0 · <b>x", "1 · &y"]


def test_line_tables_have_one_column_per_curve():
    x = np.arange(5)
    fig = F.lines(x, {"a": x**2, "b": -x}, "t", x_title="distance", y_title="y")
    df = trace_table(fig)
    assert list(df.columns) == ["distance", "a", "b"]
    np.testing.assert_array_equal(df["a"].to_numpy(), x**2)


@pytest.mark.parametrize("key", ["t5", "alibi", "shaw", "transformer-xl", "why-order"])
def test_every_numbers_panel_opens_without_errors(key):
    """Open every chart's Numbers expander on a page at once (the worst case for a rerun): each
    chart gets its CSV button, and a table unless it is larger than MAX_TABLE_CELLS."""
    at = run_with_params(BY_KEY[key].path, {})
    charts = len(chart_elements(at))
    boxes = [k for k in at.session_state if str(k).endswith("__numbers")]
    assert charts and len(boxes) == charts
    assert not at.get("download_button")  # closed expanders build nothing
    before = len(at.dataframe)  # the page's own tables
    for k in boxes:
        at.session_state[k] = True
    at.run()
    assert not errors(at)
    assert len(at.get("download_button")) == charts
    tables = at.dataframe[before:] if before else at.dataframe
    assert 0 < len(tables) <= charts
    assert all(0 < d.value.size <= MAX_TABLE_CELLS for d in tables)
