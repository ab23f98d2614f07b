"""AppTest for the Spline-based Transformers page: both parts, widgets at their extremes, figure data."""

import itertools

import numpy as np
import pytest

from tests.helpers import chart, errors, fig_array, open_page

PAGE = "pages/beyond/spline.py"


@pytest.fixture(scope="module")
def at():
    return open_page(PAGE, sentence="the cat sat on the mat")


def test_defaults_render_both_parts(at):
    assert not errors(at)
    heads = [h.value for h in at.header]
    assert any(h.startswith("Part 1") for h in heads) and any(h.startswith("Part 2") for h in heads)
    fig = chart(at, "spline_basis")
    assert fig["layout"]["title"]["text"] == "The 10 basis functions of degree 3, clamped knots"
    sums = fig_array(fig["data"][-1]["y"])  # Σ N_i, dashed
    t = fig_array(fig["data"][-1]["x"])
    assert np.allclose(sums[(t >= 0) & (t <= 1)], 1.0, atol=1e-6)  # clamped: domain [0, 1]
    assert len(fig["data"]) == 10 + 1 + 1  # ten basis functions, their names at the peaks, the sum
    names = next(d for d in fig["data"] if d.get("mode") == "text")
    assert names["text"] == [f"N{i}" for i in range(10)]
    md = " ".join(m.value for m in at.markdown)
    assert "What we chose" in md and "What is unknown" in md and "What is known" in md


def test_lr_sweep_section_shows_the_shipped_numbers(at):
    import json

    from lab.spline_train import ASSETS

    sweep = json.loads((ASSETS / "lr_sweep.json").read_text())
    fig = chart(at, "spline_sweep_spline")
    runs = [r for r in sweep["runs"] if r["kind"] == "spline"]
    assert len(fig["data"]) == len(runs)
    for trace, run in zip(fig["data"], runs, strict=False):
        y = fig_array(trace["y"])
        assert np.allclose(y[: len(run["curve"]["test_mse"])], run["curve"]["test_mse"])
        assert ("(unstable)" in trace["name"]) == run["unstable"]
    table = next(d.value for d in at.dataframe if "spline: final test MSE" in d.value.columns)
    assert list(table["peak lr"]) == sweep["lrs"]
    assert np.allclose(table["spline: final test MSE"], [r["test_mse"] for r in runs], equal_nan=True)


def test_local_control_figure_highlights_only_the_support(at):
    at.slider(key="spline_point").set_value(0).run()
    at.slider(key="spline_dx").set_value(1.0).run()
    at.slider(key="spline_dy").set_value(-1.0).run()
    assert not errors(at)
    bs = chart(at, "spline_local")
    assert bs["layout"]["title"]["text"] == "B-spline (degree 3, clamped): moving P0"
    changed = fig_array(bs["data"][-1]["x"])  # NaN where the curve did not move
    assert 0.1 < np.isfinite(changed).mean() < 0.2  # P0 of 10 cubic points acts on the first of 7 spans only
    bz = chart(at, "spline_bezier")
    assert np.isfinite(fig_array(bz["data"][-1]["x"])).mean() > 0.85  # all but the far end moves by > 1e-9


def test_part1_extremes_and_uniform_knots(at):
    at.slider(key="spline_degree").set_value(5).run()
    at.slider(key="spline_k").set_value(12).run()
    at.radio(key="spline_knots").set_value("uniform").run()
    at.slider(key="spline_point").set_value(11).run()
    assert not errors(at)
    fig = chart(at, "spline_basis")
    assert fig["layout"]["title"]["text"] == "The 12 basis functions of degree 5, uniform knots"
    sums, t = fig_array(fig["data"][-1]["y"]), fig_array(fig["data"][-1]["x"])
    inside = (t >= 0) & (t <= 1)
    assert np.allclose(sums[inside], 1.0, atol=1e-6) and sums[~inside].min() < 0.5  # < 1 outside the domain
    at.slider(key="spline_k").set_value(6).run()  # the remembered point 11 no longer exists
    assert not errors(at) and at.slider(key="spline_point").value <= 5
    # K = 6, p = 5, uniform: the domain is one knot span, so there is no question, and the page says why
    assert not [r for r in at.radio if r.key == "spline_q__choice"]
    assert any("single knot span" in i.value for i in at.info)
    at.slider(key="spline_degree").set_value(1).run()
    assert not errors(at)


def test_model_part_widgets_and_numbers(at):
    for family in ("sine", "arc", "spiral", "letter"):
        at.selectbox(key="spline_shape").set_value(family).run()
        assert not errors(at)
    at.selectbox(key="spline_letter").set_value("W").run()
    for k, v in (("spline_a", 1.0), ("spline_b", 0.0), ("spline_c", 1.0)):
        at.slider(key=k).set_value(v).run()
    assert not errors(at)
    rec = chart(at, "spline_recon")
    inp, spl, pe, ali = (np.stack([fig_array(d["x"]), fig_array(d["y"])], 1) for d in rec["data"][:4])
    table = next(d.value for d in at.dataframe if "this curve" in d.value.columns)
    for row, out in zip(range(3), (spl, pe, ali), strict=False):  # the table's errors are those of the drawn curves
        assert table["this curve"][row] == pytest.approx(((out - inp) ** 2).mean(), abs=1e-5)
    assert inp.shape == (32, 2)


def test_latent_edit_extremes(at):
    at.slider(key="spline_ctrl").set_value(9).run()
    at.slider(key="spline_pc1").set_value(-3.0).run()
    at.slider(key="spline_pc2").set_value(3.0).run()
    assert not errors(at)
    lat = chart(at, "spline_latent")
    ctrl = np.stack([fig_array(lat["data"][0]["x"]), fig_array(lat["data"][0]["y"])], 1)  # (K, 2)
    traj = np.stack([fig_array(lat["data"][2]["x"]), fig_array(lat["data"][2]["y"])], 1)  # (n, 2) drawn on top
    # Clamped knots: the trajectory starts on P0 and ends on P9 (also after projection, which is linear).
    assert np.allclose(traj[0], ctrl[0], atol=1e-4) and np.allclose(traj[-1], ctrl[-1], atol=1e-4)
    after = np.stack([fig_array(lat["data"][1]["x"]), fig_array(lat["data"][1]["y"])], 1)  # drawn under it
    moved = np.linalg.norm(after - traj, axis=1) > 1e-5
    assert moved[-1] and not moved[: 32 * 6 // 7].any()  # P9 acts only on the last of 7 spans
    bars = chart(at, "spline_change")
    assert bars["layout"]["title"]["text"] == "Spline model: |Δ output| after moving P9"
    assert fig_array(bars["data"][0]["y"]).shape == (32,) and fig_array(bars["data"][0]["y"]).max() > 0
    at.slider(key="spline_ctrl").set_value(0).run()
    at.slider(key="spline_pc1").set_value(3.0).run()
    assert not errors(at)


def test_blend_end_points(at):
    at.selectbox(key="spline_blend_a").set_value("letter").run()
    at.selectbox(key="spline_blend_b").set_value("spiral").run()
    at.slider(key="spline_alpha").set_value(0.0).run()
    assert not errors(at)
    fig = chart(at, "spline_blend")
    assert fig["layout"]["title"]["text"] == "Blending control points, α = 0.00"
    a = np.stack([fig_array(fig["data"][0]["x"]), fig_array(fig["data"][0]["y"])], 1)
    mix = np.stack([fig_array(fig["data"][2]["x"]), fig_array(fig["data"][2]["y"])], 1)
    assert np.allclose(a, mix, atol=1e-6)  # α = 0: the point-by-point mix is curve A itself
    at.slider(key="spline_alpha").set_value(1.0).run()
    assert not errors(at)


def test_hostile_sentences_do_not_matter():
    """The page does not use the sidebar sentence; long and non-Latin text must not break it."""
    for sentence in (" ".join(["word"] * 300), "안녕하세요 세계 🌍🚀 done"):
        assert not errors(open_page(PAGE, sentence=sentence))


# --- classroom layer: shareable links and the predict question ----------------------------------

LINK = {
    "spline_degree": "5",
    "spline_k": "12",
    "spline_knots": "uniform",
    "spline_point": "11",
    "spline_dx": "-0.5",
    "spline_dy": "0.25",
    "spline_shape": "letter",
    "spline_letter": "W",
    "spline_a": "0.9",
    "spline_ctrl": "2",
    "spline_pc1": "-2.0",
    "spline_blend_a": "spiral",
    "spline_alpha": "0.25",
}


def open_link(params: dict[str, str]):
    """A fresh session opened with ?params (as a shared link would), then switched to this page."""
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, TIMEOUT

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(PAGE).run()
    return at


def _value(at, key):
    for kind in ("slider", "selectbox", "radio"):
        found = [w for w in getattr(at, kind) if w.key == key]
        if found:
            return found[0].value
    raise AssertionError(key)


def test_link_restores_the_bound_controls_and_the_pictures():
    at = open_link(LINK)
    assert not errors(at)
    expected = {
        "spline_degree": 5,
        "spline_k": 12,
        "spline_knots": "uniform",
        "spline_point": 11,
        "spline_dx": -0.5,
        "spline_dy": 0.25,
        "spline_shape": "letter",
        "spline_letter": "W",
        "spline_a": 0.9,
        "spline_ctrl": 2,
        "spline_pc1": -2.0,
        "spline_blend_a": "spiral",
        "spline_alpha": 0.25,
    }
    for k, v in expected.items():
        assert _value(at, k) == v, k
    # the pictures follow the link
    assert chart(at, "spline_basis")["layout"]["title"]["text"] == "The 12 basis functions of degree 5, uniform knots"
    assert chart(at, "spline_local")["layout"]["title"]["text"] == "B-spline (degree 5, uniform): moving P11"
    assert chart(at, "spline_blend")["layout"]["title"]["text"] == "Blending control points, α = 0.25"
    # A link beyond a widget's bounds falls back to its default.
    bad = open_link({"spline_degree": "9", "spline_k": "inf", "spline_knots": "<b>x</b>", "spline_alpha": "nan"})
    assert not errors(bad)
    assert (
        _value(bad, "spline_degree"),
        _value(bad, "spline_k"),
        _value(bad, "spline_knots"),
        _value(bad, "spline_alpha"),
    ) == (3, 10, "clamped", 0.5)


def _cox_de_boor(i: int, p: int, knots: list[float], t: float) -> float:
    """N_{i,p}(t) by the textbook recursion, plain float64, 0/0 read as 0 (independent of encoders/)."""
    if p == 0:
        return 1.0 if knots[i] <= t < knots[i + 1] else 0.0
    left = right = 0.0
    if knots[i + p] > knots[i]:
        left = (t - knots[i]) / (knots[i + p] - knots[i]) * _cox_de_boor(i, p - 1, knots, t)
    if knots[i + p + 1] > knots[i + 1]:
        right = (knots[i + p + 1] - t) / (knots[i + p + 1] - knots[i + 1]) * _cox_de_boor(i + 1, p - 1, knots, t)
    return left + right


def _independent_spans(n_ctrl: int, p: int, kind: str, i: int) -> tuple[int, int]:
    """Knot vectors written out by hand; a domain span counts if N_{i,p} is non-zero at its midpoint."""
    if kind == "clamped":
        inner = n_ctrl - p - 1
        knots = [0.0] * (p + 1) + [k / (inner + 1) for k in range(1, inner + 1)] + [1.0] * (p + 1)
    else:
        knots = [(k - p) / (n_ctrl - p) for k in range(n_ctrl + p + 1)]
    lo, hi = knots[p], knots[n_ctrl]
    spans = [(a, b) for a, b in itertools.pairwise(knots) if b > a and lo <= a and b <= hi]
    return sum(_cox_de_boor(i, p, knots, (a + b) / 2) > 0 for a, b in spans), len(spans)


def _knots_by_hand(n_ctrl: int, p: int, kind: str) -> list[float]:
    if kind == "clamped":
        inner = n_ctrl - p - 1
        return [0.0] * (p + 1) + [k / (inner + 1) for k in range(1, inner + 1)] + [1.0] * (p + 1)
    return [(k - p) / (n_ctrl - p) for k in range(n_ctrl + p + 1)]


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("kind", ["clamped", "uniform"])
def test_spans_question_over_the_whole_control_space(kind, lang):
    """Every degree, every K, every control point the page offers, both knot kinds and languages: the
    answer is an option and agrees with the independent Cox–de Boor count; every fact the explanation
    states agrees with the knot vector written out by hand; with a one-span domain there is no
    question, and the page says why."""
    from explain.chapters import spline as ch
    from explain.i18n import t

    for p in range(1, ch.MAX_DEGREE + 1):
        for n_ctrl in range(ch.MIN_CTRL, ch.MAX_CTRL + 1):
            knots = _knots_by_hand(n_ctrl, p, kind)
            lo_dom, hi_dom = knots[p], knots[n_ctrl]
            for i in range(n_ctrl):
                moved, total = _independent_spans(n_ctrl, p, kind, i)
                sec = ch.local_section(n_ctrl, p, kind, i, lang)
                if total < 2:
                    assert sec.question is None and f"K = {n_ctrl}" in sec.note
                    continue
                q = sec.question
                assert q is not None and not sec.note
                assert q.answer == moved and moved in q.options
                assert q.options == tuple(sorted(set(range(1, min(p + 1, total) + 1)) | {total}))
                f = q.facts
                lo, hi = max(knots[i], lo_dom), min(knots[i + p + 1], hi_dom)
                assert f["lo"] == pytest.approx(lo, abs=1e-12) and f["hi"] == pytest.approx(hi, abs=1e-12)
                assert (f["moved"], f["n_spans"], f["end"], f["p1"]) == (moved, total, i + p + 1, p + 1)
                # "all inside" exactly when none of the p + 1 spans [t_k, t_k+1] of [t_i, t_i+p+1] is empty
                # or outside the domain; otherwise the explanation says part of it is
                lost = any(b <= a or a < lo_dom or b > hi_dom for a, b in itertools.pairwise(knots[i : i + p + 2]))
                assert f["inside"] is (not lost) and f["inside"] is (moved == p + 1)
                ends = t("spline.predict_ends", lang)
                assert (ends in q.explanation) is lost
                for text in (f"**{moved}", str(total), f"P{i}", f"{lo:.3g}", f"{hi:.3g}", f"{p + 1}"):
                    assert text in q.explanation, (text, q.explanation)


def test_span_count_matches_an_independent_cox_de_boor():
    from explain.chapters import spline as ch

    for kind in ("clamped", "uniform"):
        for p in range(1, 6):
            for n_ctrl in (6, 9, 12):
                for i in range(n_ctrl):
                    assert ch.spans_moved(n_ctrl, p, kind, i) == _independent_spans(n_ctrl, p, kind, i), (
                        kind,
                        p,
                        n_ctrl,
                        i,
                    )
    assert ch.spans_moved(10, 3, "clamped", 0) == (1, 7) and ch.spans_moved(10, 3, "clamped", 5) == (4, 7)


@pytest.mark.parametrize(
    "params",
    [
        {},
        {"spline_degree": "2", "spline_k": "7", "spline_point": "1"},
        {"spline_degree": "5", "spline_k": "12", "spline_knots": "uniform", "spline_point": "6"},
    ],
)
def test_predict_question_is_answered_by_the_knot_spans(params):
    at = open_link(params)
    p, k = _value(at, "spline_degree"), _value(at, "spline_k")
    kind, i = _value(at, "spline_knots"), _value(at, "spline_point")
    moved, total = _independent_spans(k, p, kind, i)
    q = at.radio(key="spline_q__choice")
    assert f"{total} spans (all of them)" in q.options
    q.set_value(q.options[0]).run()
    at.button(key="spline_q__reveal").click().run()
    assert not errors(at)
    shown = [s.value for s in at.success] + [w.value for w in at.warning]
    want = f"**{moved} span{'s' if moved != 1 else ''}" + (" (all of them)" if moved == total else "") + "**"
    assert any(want in v for v in shown), (want, shown)
    # The picture agrees: the moved stretch of the B-spline covers about moved/total of the domain
    # (the curve is sampled evenly in t; spans are equally long inside the domain for both knot kinds).
    bs = chart(at, "spline_local")
    assert bs["layout"]["title"]["text"] == f"B-spline (degree {p}, {kind}): moving P{i}"
    share = np.isfinite(fig_array(bs["data"][-1]["x"])).mean()
    assert abs(share - moved / total) < 0.02, (share, moved, total)
