"""AppTest of the toy-task lab page: shipped results as recorded, inspect, a very short live run."""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from explain.chapters import toy_tasks as ch
from lab.regenerate import ENCODINGS, TOY_DIR
from tests.helpers import errors, fig_array, figure, figure_titles, open_page

PAGE = "pages/labs/toy_tasks.py"


def needs_assets(test):
    """The shipped results are part of the repository: without them these tests fail, not skip."""
    assert (TOY_DIR / "index.json").exists(), "assets/toy/index.json is missing (python -m lab.regenerate toy)"
    return test


@pytest.fixture(scope="module")
def lab():
    return open_page(PAGE)


def table(at, column: str):
    """The first dataframe on the page with this column (AppTest does not index tables by key)."""
    for df in at.dataframe:
        if column in df.value.columns:
            return df.value
    raise AssertionError(f"no table with column {column!r}")


def _metrics(task, enc):
    p = TOY_DIR / f"{task}-{enc}.json"
    return json.loads(p.read_text()) if p.exists() else None


@needs_assets
def test_shipped_table_shows_the_recorded_numbers(lab):
    at = lab
    assert not errors(at)
    df = table(at, "ID error % (this toy run)")
    shipped = [e for e in ENCODINGS if _metrics("flipflop", e)]
    assert len(df) == len(ENCODINGS) and shipped
    for enc in shipped:
        row = df[df["encoding"] == ch.short_label(enc)].iloc[0]
        m = _metrics("flipflop", enc)
        assert row["ID error % (this toy run)"] == f"{m['results']['id']['error']:.1f}"
        assert row["OOD error % (this toy run)"] == f"{m['results']['ood']['error']:.1f}"
    # Paper numbers sit beside them, labelled as the paper's, only for the paper's rows.
    cope = df[df["encoding"] == ch.short_label("cope")].iloc[0]
    assert cope["OOD % (paper, full-scale)"] == "4.9"
    assert df[df["encoding"] == "ALiBi"].iloc[0]["OOD % (paper, full-scale)"] == "not in paper"
    # The learning curves are the recorded ones.
    loss = figure(at, "Training loss")
    first = _metrics("flipflop", shipped[0])
    assert fig_array(loss["data"][0]["y"]).tolist() == pytest.approx([p["loss"] for p in first["curve"]])


@needs_assets
@pytest.mark.parametrize("task", ["selective_copy", "counting"])
def test_other_tasks_render(lab, task):
    at = lab
    at.selectbox(key="toy_task").set_value(task).run()
    assert not errors(at)
    assert "Error by distance — ID" in figure_titles(at) or not _metrics(task, ENCODINGS[0])
    at.selectbox(key="toy_task").set_value("flipflop").run()


@needs_assets
def test_distance_split_and_encodings(lab):
    at = lab
    at.multiselect(key="toy_encodings").set_value(["rope", "cope"]).run()
    at.radio(key="toy_dist_split").set_value("ood").run()
    assert not errors(at)
    fig = figure(at, "Error by distance — OOD")
    assert [t["name"] for t in fig["data"]] == [ch.short_label(e) for e in ("rope", "cope") if _metrics("flipflop", e)]
    at.multiselect(key="toy_encodings").set_value([]).run()
    assert any("at least one encoding" in i.value for i in at.info)
    at.multiselect(key="toy_encodings").set_value(list(ENCODINGS)).run()


@needs_assets
def test_inspect_bad_and_good_strings(lab):
    at = lab
    enc = next(e for e in ("cope", *ENCODINGS) if _metrics("flipflop", e))
    at.selectbox(key="toy_inspect_enc").set_value(enc).run()
    at.text_input(key="toy_inspect_text_flipflop").input("w1 x0 r?").run()
    assert any("Valid tokens: w r i 0 1" in w.value for w in at.warning)
    at.text_input(key="toy_inspect_text_flipflop").input("w1 한국어 r? 🙂 <b>x</b>").run()
    assert not errors(at) and any("Valid tokens" in w.value for w in at.warning)
    assert any("`한`" in m.value for m in at.markdown)  # the bad token, shown inside a code span
    at.text_input(key="toy_inspect_text_flipflop").input("w1" + "i0" * 70 + "r?").run()
    assert any("at most 128" in w.value for w in at.warning)
    at.text_input(key="toy_inspect_text_flipflop").input("w1 i0 i0 w0 i1 r?").run()
    assert not errors(at)
    answers = table(at, "rule says")
    assert answers["rule says"].tolist() == ["0"] and answers["position"].tolist() == [11]
    w = fig_array(figure(at, "Attention weights")["data"][0]["z"])
    assert w.shape == (12, 12) and np.allclose(np.nansum(w, axis=1), 1, atol=1e-3)
    assert np.isnan(w[0, 1]) and not np.isnan(w[1, 0])  # causal: the future is blank
    if enc == "cope":
        g = fig_array(figure(at, "CoPE gates")["data"][0]["z"])
        p = fig_array(figure(at, "CoPE positions")["data"][0]["z"])
        assert np.nanmin(g) >= 0 and np.nanmax(g) <= 1
        # p_ij = Σ_{t=j..i} g_it, checked on the drawn numbers
        i = 11
        assert p[i, 3] == pytest.approx(np.nansum(g[i, 3 : i + 1]), abs=2e-3)


def test_live_training_runs_and_reports():
    at = open_page(PAGE)
    at.selectbox(key="toy_task").set_value("flipflop").run()
    # Form widgets: set them all, then submit (a rerun in between would reset them).
    at.selectbox(key="toy_train_enc").set_value("alibi")
    at.slider(key="toy_train_steps").set_value(20)
    at.number_input(key="toy_train_seed").set_value(7)
    at.button(key="toy_train_go").click().run()
    t0 = time.monotonic()
    while not any(s.value.startswith(("Finished", "Stopped")) for s in at.success):
        assert time.monotonic() - t0 < 90, [i.value for i in at.info] + [e.value for e in at.error]
        time.sleep(0.5)
        at.run()
    assert not errors(at)
    live = table(at, "wrong answers")
    assert live["split"].tolist() == ["ID", "OOD"] and live["error %"].between(0, 100).all()
    assert "Live training loss" in " ".join(figure_titles(at))


def test_ordering_verdict_is_computed_pairwise(tmp_path):
    """Fake metrics: the verdict follows the numbers, including a reversal and a tie."""

    def write(enc, id_err, ood_err):
        res = {s: {"error": e, "by_distance": [], "by_group": {}} for s, e in (("id", id_err), ("ood", ood_err))}
        (tmp_path / f"flipflop-{enc}.json").write_text(json.dumps({"results": res, "curve": [], "train_seconds": 1}))

    # The paper orders CoPE < RoPE < Absolute PE on both Flip-Flop columns.
    write("learned", 5.0, 30.0)
    write("rope", 1.0, 10.0)  # below learned on both: as in the paper
    write("cope", 1.2, 40.0)  # in-dist: within 0.5 of RoPE (a tie); OOD: above both (two reversals)
    v = {x.column: x for x in ch.ordering_verdicts("flipflop", str(tmp_path))}
    assert (v["in-dist"].agree, v["in-dist"].disagree, v["in-dist"].ties) == (2, 0, 1)
    assert (v["OOD"].agree, v["OOD"].disagree, v["OOD"].ties) == (1, 2, 0) and not v["OOD"].same


# --- classroom layer: shareable links, the predict question, the link from the CoPE chapter ------


def open_link(params: dict, page: str = PAGE):
    """A fresh session opened with ?params (as a shared link would), then switched to `page`."""
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, TIMEOUT

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    at.switch_page(page).run()
    return at


@needs_assets
def test_link_restores_task_encodings_split_and_model():
    # Selectboxes / radios / multiselects with a format_func are written to the address by their labels.
    at = open_link(
        {"toy_task": "Counting", "toy_encodings": ["RoPE", "CoPE"], "toy_dist_split": "OOD", "toy_inspect_enc": "ALiBi"}
    )
    assert not errors(at)
    assert at.selectbox(key="toy_task").value == "counting"
    assert at.multiselect(key="toy_encodings").value == ["rope", "cope"]
    assert at.radio(key="toy_dist_split").value == "ood"
    assert at.selectbox(key="toy_inspect_enc").value == "alibi"
    assert table(at, "OOD error % (this toy run)")["encoding"].tolist() == ["RoPE", "CoPE"]
    assert [t["name"] for t in figure(at, "Error by distance — OOD")["data"]] == ["RoPE", "CoPE"]
    # Unknown labels are dropped: the defaults apply.
    bad = open_link({"toy_task": "<script>", "toy_dist_split": "sideways", "toy_inspect_enc": "GPT-5"})
    assert not errors(bad)
    assert (
        bad.selectbox(key="toy_task").value,
        bad.radio(key="toy_dist_split").value,
        bad.selectbox(key="toy_inspect_enc").value,
    ) == ("flipflop", "id", ENCODINGS[-1])


def _reveal(at) -> list[str]:
    q = at.radio(key="toy_q__choice")
    q.set_value(q.options[0]).run()
    at.button(key="toy_q__reveal").click().run()
    assert not errors(at)
    return [s.value for s in at.success] + [w.value for w in at.warning]


@needs_assets
@pytest.mark.parametrize(
    "task,encs", [("flipflop", None), ("selective_copy", None), ("counting", ["learned", "rope", "t5"])]
)
def test_predict_lowest_ood_error_matches_the_shipped_files(task, encs):
    from lab import tasks as T

    params = {"toy_task": T.TASKS[task].label}
    if encs:
        params["toy_encodings"] = [ch.short_label(e) for e in encs]
    at = open_link(params)
    split = T.get(task).split_names[1]  # the first OOD split
    errs = {e: _metrics(task, e)["results"][split]["error"] for e in (encs or ENCODINGS)}  # read independently
    low = min(round(v, 1) for v in errs.values())
    best = [e for e, v in errs.items() if round(v, 1) == low]
    want = ch.short_label(best[0]) if len(best) == 1 else ch.TIED
    q = at.radio(key="toy_q__choice")
    assert q.options == [ch.short_label(e) for e in (encs or ENCODINGS)] + [ch.TIED]
    assert any(f"**{want}**" in v for v in _reveal(at)), want


def test_lowest_error_reports_a_tie_at_the_shown_precision():
    tab = ch.ResultTable(
        ["encoding", "OOD error % (this toy run)"], [["A", 3.04], ["B", 2.96], ["C", 7.0]], ["label", "toy"]
    )
    assert ch.lowest_error(tab, "ood").answer == ch.TIED  # both read "3.0" in the table
    tab.rows[0][1] = 3.06
    assert ch.lowest_error(tab, "ood").answer == "B"
    tab.rows[:] = [["A", 1.0], ["B", np.nan]]
    assert ch.lowest_error(tab, "ood") is None  # one shipped run: nothing to compare


def test_cope_chapter_links_to_the_toy_lab():
    at = open_link({}, page="pages/contextual/cope.py")
    assert not errors(at)
    links = [el.proto for el in at.get("page_link")]
    lab = [ln for ln in links if ln.page == "toy-lab"]  # the chapter key: the lab's URL path
    assert len(lab) == 1, [(ln.page, ln.label) for ln in links]
    assert "Flip-Flop" in lab[0].label and "CoPE" in lab[0].label and lab[0].icon == ":material/model_training:"


# --- languages -------------------------------------------------------------------------------------


@needs_assets
def test_page_in_korean_and_switching_language_keeps_every_control():
    from tests.i18n_scan import open_korean

    at = open_korean(PAGE)
    assert not errors(at)
    at.selectbox(key="toy_task").set_value("selective_copy").run()
    at.multiselect(key="toy_encodings").set_value(["rope", "cope"]).run()
    at.radio(key="toy_dist_split").set_value("ood_sparse").run()
    at.text_input(key="toy_inspect_text_selective_copy").input("AB??").run()
    assert not errors(at)
    df = table(at, "OOD 희소 오차율 % (이 토이 실행)")
    assert df["인코딩"].tolist() == ["RoPE", "CoPE"]
    assert "거리별 오차율 — OOD 희소" in figure_titles(at)
    assert any("답할 자리가 아닙니다. '?'는 '|' 뒤에" in w.value for w in at.warning)  # a parse error, in Korean
    assert at.radio(key="toy_q__choice").options[-1] == "동률"
    at.session_state["lang"] = "en"  # the sidebar switch
    at.run()
    assert not errors(at)
    assert at.selectbox(key="toy_task").value == "selective_copy"
    assert at.multiselect(key="toy_encodings").value == ["rope", "cope"]
    assert at.radio(key="toy_dist_split").value == "ood_sparse"
    assert at.text_input(key="toy_inspect_text_selective_copy").value == "AB??"
    assert table(at, "OOD sparse error % (this toy run)")["encoding"].tolist() == ["RoPE", "CoPE"]
    assert any("is not an answer position. A '?' goes after the '|'" in w.value for w in at.warning)
