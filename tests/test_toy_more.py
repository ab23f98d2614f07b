"""Issue 19's two one-factor experiments (lab/toy_more.py): CoPE with one position table shared by
its heads, and Flip-Flop at a closer-to-paper scale — the encoder option against an independent
loop, the settings plumbing, the stretched tasks and probes, the shipped results as recorded, and
what the page computes from them."""

from __future__ import annotations

import itertools
import json
from dataclasses import asdict, replace

import numpy as np
import pytest
import torch
from scipy import stats

from encoders import REGISTRY, build
from encoders.cope import CoPEConfig
from explain.chapters import toy_tasks_more as more
from explain.chapters.toy_tasks import PAPER_RESULTS, PAPER_ROW, short_label, toy_intervals
from explain.chapters.toy_tasks_seeds import t_interval
from lab import probe as P
from lab import tasks as T
from lab.model import ModelConfig, TinyTransformer, encoder_config
from lab.shipped import ENCODINGS, SEEDS, SHIPPED, TOY_DIR, chosen_lr, shipped_config
from lab.toy_more import COPE_TABLE_DIR, LARGE, LARGE_DIR, LARGE_ENCODINGS, N_LARGE, large_config, large_stem
from lab.train import TrainConfig, load, model_config, predict, task_of
from tests.test_cope import _naive_cope_logits

# --- CoPE: one table shared by every head ---------------------------------------------------------


@pytest.mark.parametrize("heads", [1, 2, 4])
def test_shared_table_has_one_row_and_every_head_reads_it(heads):
    per_head = build("cope", 8 * heads, heads, 1, CoPEConfig(npos_max=6))
    shared = build("cope", 8 * heads, heads, 1, CoPEConfig(npos_max=6, shared_table=True))
    assert tuple(per_head.table.shape) == (heads, 8, 6)
    assert tuple(shared.table.shape) == (1, 8, 6)
    assert tuple(shared.head_tables.shape) == (heads, 8, 6)
    for h in range(heads):
        assert torch.equal(shared.head_tables[h], shared.table[0])
        assert torch.equal(per_head.head_tables[h], per_head.table[h])


@pytest.mark.parametrize("variant", ["paper", "official"])
@pytest.mark.parametrize("heads", [1, 2, 3])
def test_shared_table_logits_equal_the_naive_loop(variant, heads):
    """The broadcast (1, d, P) table gives exactly what a loop over heads reading one table gives."""
    d_head, n, npos = 4, 6, 5
    enc = build("cope", d_head * heads, heads, 7, CoPEConfig(npos_max=npos, variant=variant, shared_table=True))
    enc = enc.double()
    g = torch.Generator().manual_seed(heads)
    q = torch.randn(1, heads, n, d_head, generator=g, dtype=torch.float64) * 1.5
    k = torch.randn(1, heads, n, d_head, generator=g, dtype=torch.float64) * 1.5
    with torch.no_grad():
        total = enc.logit_terms(q, k, torch.arange(n), torch.arange(n), causal=True).total().numpy()
    one = enc.table.detach().numpy()[0]  # (d, P)
    table = np.stack([one] * heads)  # (h, d, P): the same table for every head, built independently
    _, expected = _naive_cope_logits(q.numpy(), k.numpy(), table, npos, variant == "official")
    below = np.tril(np.ones((n, n), dtype=bool))
    assert np.abs(total[..., below] - expected[..., below]).max() < 1e-12


def test_shared_table_gradient_is_the_sum_over_heads():
    """Training a shared table moves it by the sum of what each head's own copy would get."""
    heads, d_head, n = 3, 4, 7
    shared = build("cope", heads * d_head, heads, 2, CoPEConfig(npos_max=6, shared_table=True)).double()
    copies = build("cope", heads * d_head, heads, 2, CoPEConfig(npos_max=6)).double()
    with torch.no_grad():
        copies.table.copy_(shared.table.expand(heads, -1, -1))
    g = torch.Generator().manual_seed(5)
    q = torch.randn(2, heads, n, d_head, generator=g, dtype=torch.float64)
    k = torch.randn(2, heads, n, d_head, generator=g, dtype=torch.float64)
    for enc in (shared, copies):
        r = enc.logit_terms(q, k, torch.arange(n), torch.arange(n), causal=True)
        r.terms["position"].masked_fill(torch.ones(n, n).triu(1).bool(), 0.0).pow(2).sum().backward()
    assert shared.table.grad is not None and copies.table.grad is not None
    assert torch.allclose(shared.table.grad[0], copies.table.grad.sum(0), atol=1e-12)


# --- encoder options through the training settings -----------------------------------------------


@pytest.mark.parametrize("enc", ENCODINGS)
def test_no_options_build_the_model_as_before(enc):
    """() changes nothing: the same parameters, drawn the same way, as a config without the field."""
    cfg = TrainConfig("flipflop", enc)
    a = TinyTransformer(model_config(cfg), seed=3)
    b = TinyTransformer(ModelConfig(enc, 5, T.get("flipflop").max_length()), seed=3)
    sa, sb = a.state_dict(), b.state_dict()
    assert sa.keys() == sb.keys() and all(torch.equal(sa[key], sb[key]) for key in sa)
    assert encoder_config(enc, 64) == REGISTRY[enc].training_config(64)


def test_options_change_the_named_field_and_survive_a_checkpoint(tmp_path):
    from lab.train import save, train

    cfg = TrainConfig("flipflop", "cope", steps=2, n_test=4, n_val=4, encoder_options=(("shared_table", True),))
    assert encoder_config("cope", 64, cfg.encoder_options) == replace(
        REGISTRY["cope"].training_config(64), shared_table=True
    )
    save(train(cfg), tmp_path, "x")
    model, back = load(tmp_path / "x.safetensors")
    assert back == cfg and back.encoder_options == (("shared_table", True),)
    assert model.blocks[0].attn.encoder.table.shape[0] == 1
    # A registry default of None is filled in before the field is set; an unknown field is an error.
    assert encoder_config("rope", 64, (("base", 500.0),)).base == 500.0
    with pytest.raises(TypeError):
        encoder_config("rope", 64, (("no_such_field", 1),))


# --- stretched tasks and probes --------------------------------------------------------------------


@pytest.mark.parametrize("task", list(T.TASKS))
@pytest.mark.parametrize("factor", P.LENGTH_FACTORS)
def test_length_config_is_the_stretched_training_split(task, factor):
    base = T.get(task).split("id").config
    cfg = P.length_config(task, factor)
    if task == "flipflop":
        assert cfg == replace(base, n_instructions=round(base.n_instructions * factor))
    elif task == "selective_copy":
        assert cfg == replace(base, n_copy=round(base.n_copy * factor), n_blanks=round(base.n_blanks * factor))
    else:
        assert cfg == replace(base, min_steps=round(base.min_steps * factor), max_steps=round(base.max_steps * factor))


@pytest.mark.parametrize("task", list(T.TASKS))
@pytest.mark.parametrize("scale", [1, 2, 3, 4])
def test_scaled_task_stretches_every_split_and_keeps_its_name(task, scale):
    small, big = T.get(task), T.scaled(T.get(task), scale)
    assert big.name == small.name and big.split_names == small.split_names
    if scale == 1:
        assert big is small
    for s in small.splits:
        assert big.split(s.name).config == T.stretch(task, s.config, scale)
    if task == "flipflop":
        for s in small.splits:
            assert big.split_length(s.name) == scale * small.split_length(s.name)


@pytest.mark.parametrize("scale", [1, 2, 4])
def test_flipflop_probes_at_a_scale_are_the_probes_stretched(scale):
    for small, big in zip(P.probes("flipflop", 0), P.probes("flipflop", 0, scale), strict=True):
        assert (big.name, big.answers) == (small.name, small.answers)
        assert big.config.n_instructions == scale * small.config.n_instructions
        assert big.config.p_ignore == small.config.p_ignore
    for task in ("selective_copy", "counting"):
        with pytest.raises(ValueError):
            P.probes(task, 3, 2)


def test_large_config_is_the_lab_grown_on_purpose():
    """Only length, depth, steps, batch and test-set size differ from the lab's settings (its learning
    rate, 3e-3 for every encoding, is the settings' own; the lab's sweep picks a rate per encoding)."""
    small, big = asdict(SHIPPED["flipflop"]), asdict(LARGE)
    changed = {k for k in small if small[k] != big[k]}
    assert changed == {"length_scale", "n_layers", "steps", "batch_size", "n_test"}
    assert (LARGE.length_scale, LARGE.n_layers, LARGE.n_test) == (4, 4, N_LARGE)
    assert task_of(LARGE).split_length("id") == 256
    assert model_config(large_config("learned")).max_len == 512  # a learned row for every probe position


# --- what is shipped ------------------------------------------------------------------------------

LARGE_INDEX = json.loads((LARGE_DIR / "index.json").read_text())
TABLE_INDEX = json.loads((COPE_TABLE_DIR / "index.json").read_text())


def test_large_index_records_its_settings_and_every_probe():
    assert LARGE_INDEX["settings"] == {
        k: v for k, v in json.loads(json.dumps(asdict(LARGE))).items() if k != "encoding"
    }
    assert LARGE_INDEX["encodings"] == list(LARGE_ENCODINGS) == list(LARGE_INDEX["runs"])
    names = ["id", *(p.name for p in P.probes("flipflop", 0, 4))]
    assert LARGE_INDEX["probes"] == names
    for enc, run in LARGE_INDEX["runs"].items():
        assert run["file"] == large_stem(enc) and set(run["probes"]) == set(names)
        for name, r in run["probes"].items():
            assert 0 <= r["errors"] <= r["answers"] > 0, (enc, name)
            assert sum(b["n"] for b in r["by_distance"]) == r["answers"]
            assert sum(b["errors"] for b in r["by_distractors"]) == r["errors"]
        # A hard subset scores some of its base probe's answers, on the same strings.
        for name in names:
            if name.endswith("_hard"):
                assert run["probes"][name]["answers"] <= run["probes"][name.removesuffix("_hard")]["answers"]


@pytest.mark.parametrize("enc", LARGE_ENCODINGS)
def test_large_checkpoint_reproduces_its_recorded_in_distribution_error(enc):
    model, cfg = load(LARGE_DIR / f"{large_stem(enc)}.safetensors")
    assert cfg == large_config(enc)
    id_config = task_of(cfg).split("id").config
    b = P.sample("flipflop", id_config, "all", 0, "x4/id", N_LARGE)
    wrong = (predict(model, b) != b.tokens) & b.answer
    rec = LARGE_INDEX["runs"][enc]["probes"]["id"]
    assert (int(wrong.sum()), int(b.answer.sum())) == (rec["errors"], rec["answers"])


def test_cope_table_index_changes_only_the_table():
    assert TABLE_INDEX["encoder_options"] == [["shared_table", True]]
    assert list(TABLE_INDEX["runs"]) == list(SHIPPED)
    enc = TABLE_INDEX["encoding"]
    for task, cell in TABLE_INDEX["runs"].items():
        assert cell["lr"] == chosen_lr(task, enc) == shipped_config(task, enc).lr
        assert [s["seed"] for s in cell["seeds"]] == list(SEEDS)
        for s in cell["seeds"]:
            assert set(s["errors"]) == set(T.get(task).split_names)
            for split, e in s["errors"].items():
                assert e == pytest.approx(100 * s["wrong"][split] / s["answers"][split], abs=1e-3)


# --- what the page computes -----------------------------------------------------------------------


@pytest.mark.parametrize("errors,answers", [(0, 1), (0, 200), (3, 200), (57, 1150), (200, 200), (1, 2)])
def test_wilson_interval_is_scipys(errors, answers):
    iv = more.wilson(errors, answers)
    ci = stats.binomtest(errors, answers).proportion_ci(0.95, method="wilson")
    assert iv.mean == pytest.approx(100 * errors / answers)
    assert iv.lo == pytest.approx(100 * ci.low, abs=1e-4) and iv.hi == pytest.approx(100 * ci.high, abs=1e-4)


SUBSETS = [c for r in range(len(ENCODINGS) + 1) for c in itertools.combinations(ENCODINGS, r)]


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_scale_section_for_every_task_and_choice_of_encodings(lang):
    for task in T.TASKS:
        for encs in SUBSETS:
            sc = more.scale_section(task, encs, lang)
            shown = [e for e in encs if e in LARGE_ENCODINGS]
            if task != LARGE.task or not shown:
                assert sc.note and sc.series is None, (task, encs)
                continue
            assert not sc.note and sc.series is not None
            assert len(sc.series) == 2 * len(shown) and len(sc.lines) == len(shown)
            for enc, line in zip(shown, sc.lines, strict=True):
                assert short_label(enc, lang) in line
                # Every probe is named once: lower, higher or not distinguishable.
                assert sum(line.count(c) for c in sc.categories) >= len(sc.categories)
            assert sc.settings and sc.caption


def test_scale_lines_follow_the_intervals_computed_independently():
    view = more.scale_view("flipflop", LARGE_ENCODINGS, "en")
    assert view is not None and view.probes == more.SCALE_PROBES
    probes = json.loads((TOY_DIR / "probes.json").read_text())["factors"]["flipflop"]["results"]
    for enc in LARGE_ENCODINGS:
        for k, p in enumerate(view.probes):
            big = LARGE_INDEX["runs"][enc]["probes"][p]
            ci = stats.binomtest(big["errors"], big["answers"]).proportion_ci(0.95, method="wilson")
            assert view.large[enc][k].lo == pytest.approx(100 * ci.low, abs=1e-4)
            if p == "id":
                small = toy_intervals("flipflop", enc)["id"]
            else:
                seeds = probes[p][enc]
                vals = [100 * s["errors"] / s["answers"] for s in seeds]
                small = t_interval(vals, seeds[0]["answers"], strings=seeds[0]["strings"])
            assert view.small[enc][k] == small
    for enc, line in zip(view.large, more.scale_lines(view, "en"), strict=True):
        lower, rest = line.split("lower at the larger scale: ")[1].split("; higher: ")
        higher, same = rest.split("; not distinguishable: ")
        for k, name in enumerate(view.categories):
            a, b = view.small[enc][k], view.large[enc][k]
            where = same if not a.separated_from(b) else lower if b.mean < a.mean else higher
            assert name in where.split(", "), (enc, name)


def test_large_verdicts_against_the_papers_table():
    verdicts = more.large_verdicts("flipflop", "en")
    cols, paper = PAPER_RESULTS["flipflop"]
    assert [v.column for v in verdicts] == list(more.LARGE_PAPER_COLUMNS)
    for v in verdicts:
        ci = cols.index(v.column)
        probe = more.LARGE_PAPER_COLUMNS[v.column]
        want = {short_label(e, "en"): paper[PAPER_ROW[e]][ci] for e in LARGE_ENCODINGS}
        assert v.paper == want
        pairs = list(itertools.combinations(LARGE_ENCODINGS, 2))
        agree = disagree = ties = 0
        for a, b in pairs:
            pa, pb = paper[PAPER_ROW[a]][ci], paper[PAPER_ROW[b]][ci]
            if pa == pb:
                continue
            ra, rb = (LARGE_INDEX["runs"][e]["probes"][probe] for e in (a, b))
            ia, ib = more.wilson(ra["errors"], ra["answers"]), more.wilson(rb["errors"], rb["answers"])
            if ia.hi >= ib.lo and ib.hi >= ia.lo:
                ties += 1
            elif (ia.mean < ib.mean) == (pa < pb):
                agree += 1
            else:
                disagree += 1
        assert (v.agree, v.disagree, v.ties) == (agree, disagree, ties)
    assert more.large_verdicts("counting", "en") == []


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_cope_table_lines_for_every_task_and_choice(lang):
    enc = TABLE_INDEX["encoding"]
    for task in T.TASKS:
        for encs in SUBSETS:
            lines = more.cope_table_section(task, encs, lang)
            if enc not in encs:
                assert lines == ()
                continue
            tc = more.cope_table_comparison(task, encs)
            splits = tc.splits  # the splits measured on the current test strings
            assert set(splits) | set(tc.stale) == set(T.get(task).split_names)
            assert len(lines) == 1 + len(splits) + bool(tc.stale)
            seeds = TABLE_INDEX["runs"][task]["seeds"]
            per_head = toy_intervals(task, enc)
            for split, line in zip(splits, lines[1 : 1 + len(splits)], strict=True):
                shared = t_interval([s["errors"][split] for s in seeds], seeds[0]["answers"][split])
                assert shared.text() in line and per_head[split].text() in line
                p = stats.ttest_ind(shared.values, per_head[split].values, equal_var=False).pvalue
                if not np.isfinite(p):  # no spread on either side: equal means are the same
                    p = 1.0 if shared.mean == per_head[split].mean else 0.0
                word = (
                    "same" if p >= 0.05 else "shared_lower" if shared.mean < per_head[split].mean else "per_head_lower"
                )
                from explain.i18n import t

                assert line.endswith(t(f"toy_tasks.cope_table.{word}", lang, p=p)), line


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_page_shows_both_experiments(lang):
    from explain.i18n import t
    from tests.helpers import chart, chart_elements, errors, open_page, skip_questions
    from tests.i18n_scan import open_korean

    page = "pages/labs/toy_tasks.py"
    at = open_korean(page) if lang == "ko" else open_page(page)
    assert not errors(at)
    skip_questions(at)  # CoPE's variant sentence waits for the page's question (ui/question.py)
    fig = chart(at, "toy_scale")
    names = [tr["name"] for tr in fig["data"] if tr.get("showlegend") is not False]
    assert names == list(more.scale_series(more.scale_view("flipflop", ENCODINGS, lang), lang))
    assert len(names) == 2 * len(LARGE_ENCODINGS)
    text = "\n".join(m.value for m in at.markdown)
    for line in (
        *more.cope_table_section("flipflop", ENCODINGS, lang),
        *more.scale_section("flipflop", ENCODINGS, lang).lines,
    ):
        assert line in text
    at.selectbox(key="toy_task").set_value("counting").run()
    assert not errors(at)
    assert "toy_scale" not in {str(el.key) for el in chart_elements(at)}
    assert t("toy_tasks.large.missing", lang) in [c.value for c in at.caption]
    assert "\n".join(more.cope_table_section("counting", ENCODINGS, lang)) in "\n".join(m.value for m in at.markdown)
    at.multiselect(key="toy_encodings").set_value(["rope"]).run()
    assert not errors(at)
    assert t("toy_tasks.cope_table.header", lang) not in [m.value for m in at.markdown]
