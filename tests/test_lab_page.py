"""AppTest of the toy-task lab page: shipped results as recorded, inspect, a very short live run."""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest

from explain.chapters import toy_tasks as ch
from lab.shipped import ENCODINGS, TOY_DIR
from tests.helpers import chart, errors, fig_array, open_page

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


def _seed_files(task, enc):
    """Every shipped seed's metrics (read from the JSON files, not through explain/)."""
    index = json.loads((TOY_DIR / "index.json").read_text())
    run = index["runs"].get(f"{task}/{enc}")
    return [json.loads((TOY_DIR / f"{s['file']}.json").read_text()) for s in run["seeds"]] if run else []


def reference_interval(errors_pct, answers, strings=0):
    """The page's interval, by hand with scipy: t over seeds ⊕ the binomial error of the test set;
    every seed at 0: [0, the Clopper–Pearson 95% upper limit for no error in `strings` strings]."""
    from scipy import stats

    v = np.asarray(errors_pct, dtype=float)
    n, mean = len(v), float(v.mean())
    if strings and not v.any():
        return 0.0, 0.0, 100 * float(stats.beta.ppf(0.975, 1, strings)), tuple(v)
    seeds = stats.t.ppf(0.975, n - 1) * v.std(ddof=1) / np.sqrt(n)
    p = mean / 100
    test = stats.norm.ppf(0.975) * 100 * np.sqrt(p * (1 - p) / answers)
    half = float(np.hypot(seeds, test))
    return mean, max(0.0, mean - half), min(100.0, mean + half), tuple(v)


def welch(a, b) -> float:
    """Welch's two-sided p by scipy (no spread on either side: 1 for equal means, else 0)."""
    from scipy import stats

    if np.var(a) + np.var(b) == 0:
        return 1.0 if np.mean(a) == np.mean(b) else 0.0
    return float(stats.ttest_ind(a, b, equal_var=False).pvalue)


def lowest_by_welch(cells) -> bool:
    """Whether the lowest mean is separated from every other cell by Welch's test (p < 0.05)."""
    best = min(cells, key=lambda e: cells[e][0])
    return all(welch(cells[best][3], v[3]) < 0.05 and cells[best][0] < v[0] for e, v in cells.items() if e != best)


def _cell(task, enc, split):
    ms = _seed_files(task, enc)
    res = ms[0]["results"][split]
    return reference_interval([m["results"][split]["error"] for m in ms], res["answers"], res.get("strings", 0))


def _text(iv):
    return f"{iv[0]:.1f} [{iv[1]:.1f}, {iv[2]:.1f}]"


@needs_assets
def test_shipped_table_shows_the_recorded_numbers(lab):
    at = lab
    assert not errors(at)
    df = table(at, "ID error % (this toy run: mean [95% interval])")
    shipped = [e for e in ENCODINGS if _metrics("flipflop", e)]
    assert len(df) == len(ENCODINGS) and shipped
    for enc in shipped:
        row = df[df["encoding"] == ch.short_label(enc)].iloc[0]
        assert len(_seed_files("flipflop", enc)) >= 3
        assert row["ID error % (this toy run: mean [95% interval])"] == _text(_cell("flipflop", enc, "id"))
        assert row["OOD error % (this toy run: mean [95% interval])"] == _text(_cell("flipflop", enc, "ood"))
    # Paper numbers sit beside them, labelled as the paper's, only for the paper's rows.
    cope = df[df["encoding"] == ch.short_label("cope")].iloc[0]
    assert cope["OOD % (paper, full-scale)"] == "4.9"
    assert df[df["encoding"] == "ALiBi"].iloc[0]["OOD % (paper, full-scale)"] == "not in paper"
    # The learning curves are the recorded ones.
    loss = chart(at, "toy_curve_loss")
    assert loss["layout"]["title"]["text"] == "Training loss (answer tokens, seed 0)"
    first = _metrics("flipflop", shipped[0])
    assert fig_array(loss["data"][0]["y"]).tolist() == pytest.approx([p["loss"] for p in first["curve"]])


@needs_assets
@pytest.mark.parametrize("task", ["selective_copy", "counting"])
def test_other_tasks_render(lab, task):
    at = lab
    at.selectbox(key="toy_task").set_value(task).run()
    assert not errors(at)
    assert chart(at, "toy_distance")["layout"]["title"]["text"] == "Error by distance — ID"
    at.selectbox(key="toy_task").set_value("flipflop").run()


@needs_assets
def test_distance_split_and_encodings(lab):
    at = lab
    at.multiselect(key="toy_encodings").set_value(["rope", "cope"]).run()
    at.radio(key="toy_dist_split").set_value("ood").run()
    assert not errors(at)
    fig = chart(at, "toy_distance")
    assert fig["layout"]["title"]["text"] == "Error by distance — OOD"
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
    w = fig_array(chart(at, "toy_attn")["data"][0]["z"])
    assert w.shape == (12, 12) and np.allclose(np.nansum(w, axis=1), 1, atol=1e-3)
    assert np.isnan(w[0, 1]) and not np.isnan(w[1, 0])  # causal: the future is blank
    if enc == "cope":
        g = fig_array(chart(at, "toy_gates")["data"][0]["z"])
        p = fig_array(chart(at, "toy_positions")["data"][0]["z"])
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
    deadline = time.monotonic() + 90  # a guard against a hung job, not a speed test
    while not any(s.value.startswith(("Finished", "Stopped")) for s in at.success):
        assert time.monotonic() < deadline, "never finished: " + str(
            [i.value for i in at.info] + [e.value for e in at.error]
        )
        time.sleep(0.5)
        at.run()
    assert not errors(at)
    live = table(at, "wrong answers")
    assert live["split"].tolist() == ["ID", "OOD"] and live["error %"].between(0, 100).all()
    assert live["shipped seeds: mean [95% interval]"].str.match(r"^\d+\.\d \[").all()  # beside the spread
    assert chart(at, "toy_live_curve")["layout"]["title"]["text"] == "Live training loss (answer tokens)"


def write_fake(tmp_path, enc, id_errs, ood_errs, answers=10**9):
    """Fake shipped seeds of Flip-Flop for `enc`: per-seed errors %, an index.json entry for them.
    A huge answer count makes the test-set term vanish, so the intervals are the seeds' alone."""
    p = tmp_path / "index.json"
    index = json.loads(p.read_text()) if p.exists() else {"runs": {}, "seeds": list(range(len(id_errs)))}
    seeds = []
    for k, (a, b) in enumerate(zip(id_errs, ood_errs, strict=True)):
        res = {
            s: {"error": e, "answers": answers, "by_distance": [], "by_group": {}} for s, e in (("id", a), ("ood", b))
        }
        stem = f"flipflop-{enc}" + (f"-seed{k}" if k else "")
        (tmp_path / f"{stem}.json").write_text(json.dumps({"results": res, "curve": [], "train_seconds": 1}))
        seeds.append(
            {
                "seed": k,
                "file": stem,
                "errors": {"id": a, "ood": b},
                "answers": {"id": answers, "ood": answers},
                "train_seconds": 1.0,
                "train_cpu_seconds": 1.0,
            }
        )
    index["runs"][f"flipflop/{enc}"] = {"task": "flipflop", "encoding": enc, "lr": 0.003, "seeds": seeds}
    p.write_text(json.dumps(index))


def drop_fake(tmp_path, enc):
    p = tmp_path / "index.json"
    index = json.loads(p.read_text())
    del index["runs"][f"flipflop/{enc}"]
    p.write_text(json.dumps(index))


def test_ordering_verdict_is_computed_pairwise(tmp_path):
    """Fake seeds: a pair counts only when Welch's test over the seeds separates it (p < 0.05); a
    reversal and a pair it does not separate."""
    # The paper orders CoPE < RoPE < Absolute PE on both Flip-Flop columns.
    write_fake(tmp_path, "learned", [5.0, 5.1, 4.9], [30.0, 30.5, 29.5])
    write_fake(tmp_path, "rope", [1.0, 1.1, 0.9], [10.0, 10.2, 9.8])  # below learned on both: as in the paper
    # in-dist: CoPE's seeds straddle RoPE's (Welch: not distinguishable); OOD: above both (two reversals)
    write_fake(tmp_path, "cope", [0.2, 1.0, 2.0], [40.0, 40.1, 39.9])
    v = {x.column: x for x in ch.ordering_verdicts("flipflop", str(tmp_path))}
    assert (v["in-dist"].agree, v["in-dist"].disagree, v["in-dist"].ties) == (2, 0, 1)
    assert v["in-dist"].outcome == "partly"
    assert (v["OOD"].agree, v["OOD"].disagree, v["OOD"].ties) == (1, 2, 0) and not v["OOD"].same
    # RoPE with more spread: Welch no longer separates it from either, so nothing is claimed for it.
    write_fake(tmp_path, "rope", [0.0, 4.0, 8.0], [1.0, 25.0, 40.0])
    v = {x.column: x for x in ch.ordering_verdicts("flipflop", str(tmp_path))}
    assert v["OOD"].disagree == 1 and v["OOD"].ties == 2  # learned < CoPE still separates, reversed


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
    # The address holds ids, never the names shown: the same link in English and in Korean.
    for lang in ("en", "ko"):
        at = open_link(
            {
                "toy_task": "counting",
                "toy_encodings": "rope,cope",
                "toy_dist_split": "ood",
                "toy_inspect_enc": "alibi",
                "lang": lang,
            }
        )
        assert not errors(at)
        assert at.selectbox(key="toy_task").value == "counting"
        assert at.multiselect(key="toy_encodings").value == ["rope", "cope"]
        assert at.radio(key="toy_dist_split").value == "ood"
        assert at.selectbox(key="toy_inspect_enc").value == "alibi"
        assert [t["name"] for t in chart(at, "toy_distance")["data"]] == [
            ch.short_label(e, lang) for e in ("rope", "cope")
        ]
    assert table(at, "OOD 오차율 % (이 토이 실행: 평균 [95% 구간])")["인코딩"].tolist() == ["RoPE", "CoPE"]
    # Unknown values are dropped: the defaults apply.
    bad = open_link(
        {"toy_task": "<script>", "toy_encodings": "rope,gpt", "toy_dist_split": "sideways", "toy_inspect_enc": "GPT-5"}
    )
    assert not errors(bad)
    assert (
        bad.selectbox(key="toy_task").value,
        bad.multiselect(key="toy_encodings").value,
        bad.radio(key="toy_dist_split").value,
        bad.selectbox(key="toy_inspect_enc").value,
    ) == ("flipflop", list(ENCODINGS), "id", ENCODINGS[-1])
    assert ch.parse_encodings("cope,rope") == ["cope", "rope"]
    for raw in ("", "rope,rope", "rope,gpt", "Learned (Absolute PE)"):
        with pytest.raises(ValueError):
            ch.parse_encodings(raw)


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

    params = {"toy_task": task}
    if encs:
        params["toy_encodings"] = ",".join(encs)
    at = open_link(params)
    split = T.get(task).split_names[1]  # the first OOD split
    cells = {e: _cell(task, e, split) for e in (encs or ENCODINGS)}  # read independently
    best = min(cells, key=lambda e: cells[e][0])
    want = ch.short_label(best) if lowest_by_welch(cells) else "none can be told apart"
    q = at.radio(key="toy_q__choice")
    assert q.options == [ch.short_label(e) for e in (encs or ENCODINGS)] + ["none can be told apart"]
    assert any(f"**{want}**" in v for v in _reveal(at)), want


def test_lowest_error_needs_an_interval_below_every_other():
    from explain.chapters.toy_tasks_seeds import t_interval

    a, b, c = t_interval([3.0, 3.1, 2.9]), t_interval([2.0, 4.0, 3.0]), t_interval([7.0, 7.1, 6.9])
    tab = ch.ResultTable(["encoding", ch.toy_column("ood")], [["A", a], ["B", b], ["C", c]], ["label", "toy"])
    assert ch.lowest_error(tab, "ood").answer == ch.TIED  # Welch does not separate A's and B's seeds
    tab.rows[1][1] = t_interval([0.9, 1.0, 1.1])
    assert ch.lowest_error(tab, "ood").answer == "B"
    tab.rows[:] = [["A", a], ["B", ch.MISSING]]
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
    df = table(at, "OOD 희소 오차율 % (이 토이 실행: 평균 [95% 구간])")
    assert df["인코딩"].tolist() == ["RoPE", "CoPE"]
    assert chart(at, "toy_distance")["layout"]["title"]["text"] == "거리별 오차율 — OOD 희소"
    assert any("답할 자리가 아닙니다. `?`는 `|` 뒤에" in w.value for w in at.warning)  # a parse error, in Korean
    assert at.radio(key="toy_q__choice").options[-1] == "구별할 수 없음"
    at.session_state["lang"] = "en"  # the sidebar switch
    at.run()
    assert not errors(at)
    assert at.selectbox(key="toy_task").value == "selective_copy"
    assert at.multiselect(key="toy_encodings").value == ["rope", "cope"]
    assert at.radio(key="toy_dist_split").value == "ood_sparse"
    assert at.text_input(key="toy_inspect_text_selective_copy").value == "AB??"
    assert table(at, "OOD sparse error % (this toy run: mean [95% interval])")["encoding"].tolist() == ["RoPE", "CoPE"]
    assert any("is not an answer position. A '?' goes after the '|'" in w.value for w in at.warning)


# --- the question, the paper's numbers, the stand-ins ---------------------------------------------

# The paper's numbers for the split each question asks about (METHODS.md, CoPE paper Table 2), written
# out here; Counting's OOD split has none (Table 3: 1, 3 and 5 variables, in distribution only).
PAPER_FOR_QUESTION = {
    "flipflop": ("OOD", {"learned": 21.7, "rope": 20.3, "cope": 4.9}),
    "selective_copy": ("OOD dense", {"learned": 25.6, "rope": 100.0, "cope": 0.0}),
    "counting": None,
}


@needs_assets
def test_lowest_question_over_every_task_and_selection():
    """Every task, every selection of two or more shipped encodings, both languages: the answer is
    the lowest error at one decimal read from the JSON files here (or "a tie"), every error is stated,
    and a paper number is stated only where the paper has one — never for Counting's OOD split."""
    import itertools

    from lab import tasks as T

    for task in T.TASKS:
        split = T.get(task).split_names[1]
        cells = {e: _cell(task, e, split) for e in ENCODINGS if _metrics(task, e)}
        for size in range(2, len(ENCODINGS) + 1):
            for chosen in itertools.combinations(ENCODINGS, size):
                mine = {e: cells[e] for e in chosen if e in cells}
                best = min(mine, key=lambda e: mine[e][0])
                separated = lowest_by_welch(mine)
                for lang in ("en", "ko"):
                    q = ch.lowest_question(task, chosen, lang=lang)
                    assert q.options == (*mine, ch.TIED)
                    assert q.answer == (best if separated else ch.TIED)
                    assert q.facts["errors"] == pytest.approx({e: v[0] for e, v in mine.items()}, abs=1e-3)
                    assert q.facts["split"] == split
                    for e, v in mine.items():
                        assert f"{ch.short_label(e, lang)} {_text(v)}%" in q.explanation
                    paper = PAPER_FOR_QUESTION[task]
                    if paper is None:
                        assert q.facts["paper_column"] is None and "paper_value" not in q.facts
                        assert ("Table 3" if lang == "en" else "표 3") in q.explanation  # the table named
                        stated = {float(x) for x in re.findall(r"\b(\d+\.\d) \[", q.explanation)}
                        assert stated == {round(v[0], 1) for v in mine.values()}  # this run's errors, nothing else
                        assert not re.search(r"(?<![\d.])\d+\.\d%", q.explanation.replace("]%", ""))
                    else:
                        column, values = paper
                        lowest = min(values.values())
                        assert q.facts["paper_column"] == column and q.facts["paper_value"] == lowest
                        assert q.facts["paper_best"] == tuple(e for e, v in values.items() if v == lowest)
                        assert f"{lowest:.1f}%" in q.explanation
                        assert ("Table 2" if lang == "en" else "표 2") in q.explanation


def test_no_paper_number_stands_beside_counting_ood():
    """The results table sets a paper column beside Counting only per number of variables (in
    distribution); no paper column is an OOD one, and the question's split has no paper column."""
    from explain.i18n import t
    from lab import tasks as T

    assert ch.PAPER_COLUMN_OF_SPLIT["counting"] == {}
    assert ch.PAPER_RESULTS["counting"][0] == ("1 var", "3 var", "5 var")
    tab = ch.results_table("counting", ENCODINGS)
    paper_cols = [c for c, k in zip(tab.columns, tab.kinds, strict=True) if k == "paper"]
    assert paper_cols == [f"{v} % (paper, full-scale)" for v in ("1 var", "3 var", "5 var")]
    for task, splits in ch.PAPER_COLUMN_OF_SPLIT.items():
        cols = ch.PAPER_RESULTS[task][0]
        assert set(splits.values()) <= set(cols) and set(splits) <= set(T.get(task).split_names)

    for lang in ("en", "ko"):
        assert "3" in t("toy_tasks.paper_source", lang) and "OOD" not in t("toy_tasks.paper_scope.counting", lang)


def test_verdict_lines_follow_the_verdicts(tmp_path):
    write_fake(tmp_path, "learned", [5.0, 5.1, 4.9], [30.0, 30.5, 29.5])
    write_fake(tmp_path, "rope", [1.0, 1.1, 0.9], [10.0, 10.2, 9.8])
    write_fake(tmp_path, "cope", [0.2, 1.0, 2.0], [40.0, 40.1, 39.9])
    lines = ch.verdict_lines("flipflop", str(tmp_path), "en")
    assert lines[0].startswith(
        "- *in-dist* — The same ordering as the paper wherever Welch's t-test over the seeds separates a pair"
        " (p < 0.05). 1 pair(s) the paper separates"
    )
    assert "paper: CoPE 0.0 < RoPE 1.8 < Learned (Absolute PE) 6.8" in lines[0]
    assert lines[1].startswith("- *OOD* — **A different ordering from the paper** (2 pair(s) reversed")
    assert "this run: RoPE 10.0 [" in lines[1] and "< Learned (Absolute PE) 30.0 [" in lines[1]
    write_fake(tmp_path, "learned", [1.0, 1.1, 0.9], [10.0, 10.2, 9.8])  # exactly RoPE's: not distinguishable
    drop_fake(tmp_path, "cope")
    assert ch.verdict_lines("flipflop", str(tmp_path), "en")[0].startswith(
        "- *in-dist* — Not distinguishable at this scale"
    )
    write_fake(tmp_path, "learned", [5.0, 5.1, 4.9], [30.0, 30.5, 29.5])
    assert ch.verdict_lines("flipflop", str(tmp_path), "en")[0].startswith(
        "- *in-dist* — The same ordering as the paper: every pair"
    )


@needs_assets
def test_t5_stand_in_shares_one_table_as_t5_does():
    """Counted in the shipped checkpoints: the T5 stand-in learns one (buckets × heads) table for its
    2 layers, owned by layer 0, as HF transformers' T5 (the reference) has one table, in block 0, for
    the whole stack; CoPE keeps one table per layer."""
    from transformers import T5Config
    from transformers.models.t5.modeling_t5 import T5Stack

    from explain.chapters import toy_tasks_models as models

    for task in ("flipflop", "selective_copy", "counting"):
        tables = models.encoder_tables(task, "t5")
        assert tables is not None and tables.layers == 2 and not tables.per_layer
        assert tables.tables == ((0, (32, 4)),)
        cope = models.encoder_tables(task, "cope")
        assert cope is not None and cope.per_layer and len(cope.tables) == 2
    cfg = T5Config(num_layers=3, d_model=16, d_kv=4, num_heads=4, d_ff=32, vocab_size=10, is_decoder=False)
    hf = [n for n, _ in T5Stack(cfg).named_parameters() if "relative_attention_bias" in n]
    assert hf == ["block.0.layer.0.SelfAttention.relative_attention_bias.weight"]


@needs_assets
@pytest.mark.parametrize("task", ["flipflop", "selective_copy", "counting"])
def test_learned_rows_past_the_training_length_keep_their_initial_values(task):
    """The stand-ins prose: rows past the longest training string are never trained; weight decay
    alone shrinks them by 1–4% (the shipped table against the same seed's initial table)."""
    import torch

    from explain.chapters import toy_tasks_models as models
    from lab import tasks as T
    from lab.model import TinyTransformer
    from lab.train import load, model_config

    model, cfg = load(TOY_DIR / f"{task}-learned.safetensors")
    fresh = TinyTransformer(model_config(cfg), cfg.seed)
    w = model.input_encoding.table.detach().float()
    w0 = fresh.input_encoding.table.detach().float()
    trained = T._max_len(task, T.get(task).split("id").config)  # the longest training string
    ratio = w.norm(dim=1) / w0.norm(dim=1)
    cos = torch.nn.functional.cosine_similarity(w, w0, dim=1)
    assert w.shape[0] > trained
    assert ((ratio[trained:] > 0.96) & (ratio[trained:] < 0.995)).all() and (cos[trained:] > 0.99999).all()
    assert (cos[:trained] < 0.9999).any()  # the rows in use did train
    assert models.load_model(task, "learned") is not None
