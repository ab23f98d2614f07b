"""Issue 39, toy lab: no test string was trained or validated on; the sweep's seed is not reported;
an all-zero cell has an upper bound; verdicts follow Welch's test; T5's Flip-Flop probe as shipped.

The disjointness check rebuilds every training stream with lab.train.training_batches (what train()
consumes) and compares whole strings here, not through lab/disjoint.py's own keys."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import stats

from lab import tasks as T
from lab.shipped import SEEDS, SHIPPED, SWEEP_SEED, TOY_DIR, shipped_config
from lab.train import TrainConfig, fixed_test_set, task_of, training_batches, validation_sets
from lab.train import test_sets as make_test_sets  # (not a test: pytest would collect the name)


def strings(batch: T.Batch) -> set[tuple[int, ...]]:
    """Each row as a tuple of tokens, trailing padding (id 0 where the task pads) dropped."""
    out = set()
    for row in batch.tokens.tolist():
        while row and row[-1] == 0 and len(set(row)) > 1:
            row = row[:-1]
        out.add(tuple(row))
    return out


def stream(cfg: TrainConfig) -> set[tuple[int, ...]]:
    seen: set[tuple[int, ...]] = set()
    for b in training_batches(cfg):
        seen |= strings(b)
    return seen


@pytest.mark.parametrize("task", list(SHIPPED))
def test_no_test_string_is_a_training_or_validation_string_of_any_seed(task):
    """Every task, every reported seed and the sweep's: the test sets share no string with its
    training stream or with the validation sets, and keep their size."""
    cfg = shipped_config(task, "none", SEEDS[0])
    tests = make_test_sets(cfg)
    tested = set().union(*(strings(b) for b in tests.values()))
    for b in validation_sets(cfg):
        assert not tested & strings(b)
    for seed in (*SEEDS, SWEEP_SEED):
        assert not tested & stream(shipped_config(task, "none", seed)), (task, seed)
    for name, b in tests.items():
        assert len(b) == cfg.n_test, name
    # The same strings for every encoding and seed (they are compared across both).
    other = make_test_sets(shipped_config(task, "cope", SEEDS[-1], 1e-2))
    for name, b in tests.items():
        assert np.array_equal(other[name].tokens, b.tokens)


def test_the_filter_is_needed_for_counting_and_tiny_runs_are_kept_apart_too():
    """Without the filter Counting's draws do overlap a training stream (so the test above can fail);
    a tiny run of another seed is kept apart from its own stream as well."""
    cfg = shipped_config("counting", "none", SEEDS[0])
    raw = fixed_test_set(task_of(cfg), "id", cfg.n_test, cfg.test_seed)
    assert strings(raw) & stream(cfg)
    tiny = TrainConfig("counting", "none", steps=40, seed=12345, n_test=60)
    got = make_test_sets(tiny)["id"]
    assert len(got) == 60 and not strings(got) & stream(tiny)


def test_shipped_metrics_were_measured_on_these_test_sets():
    """Each shipped run's recorded answers and strings per split are those of the current test sets."""
    index = json.loads((TOY_DIR / "index.json").read_text())
    for task in SHIPPED:
        tests = make_test_sets(shipped_config(task, "none", SEEDS[0]))
        for run in (r for r in index["runs"].values() if r["task"] == task):
            for s in run["seeds"]:
                for split, b in tests.items():
                    assert s["answers"][split] == int(b.answer.sum()), (task, run["encoding"], split)
                    assert s["strings"][split] == int(b.answer.any(1).sum())


def test_the_sweep_seed_is_not_reported_and_each_cell_says_which_seed_chose_its_rate():
    from explain.chapters.toy_tasks_evidence import lr_text

    assert SWEEP_SEED not in SEEDS
    index = json.loads((TOY_DIR / "index.json").read_text())
    for key, run in index["runs"].items():
        task, enc = key.split("/")
        sweep_seed = run["sweep_seed"] if "sweep_seed" in run else SEEDS[0]
        text = lr_text(task, (enc,), lang="en")
        if sweep_seed == SWEEP_SEED:
            assert [x["seed"] for x in run["sweep"]] == [SWEEP_SEED] * len(run["sweep"])
            best = min(run["sweep"], key=lambda x: (x["val_error"], x["val_loss"]))["lr"]
            assert run.get("lr_pending", run["lr"]) == best
            assert f"seed {SWEEP_SEED}, which is not a reported seed" in text
        else:
            assert "a reported seed (their sweep on an unreported seed has not finished)" in text
        if "lr_pending" in run:
            assert "have not been retrained" in text


def test_an_all_zero_cell_gets_the_clopper_pearson_bound_of_its_test_strings():
    from explain.chapters.toy_tasks_seeds import t_interval

    iv = t_interval([0.0, 0.0, 0.0], 1424, strings=500)
    assert (iv.lo, iv.mean) == (0.0, 0.0) and iv.bound
    assert iv.hi == pytest.approx(100 * (1 - 0.025 ** (1 / 500)), rel=1e-9)
    assert iv.hi == pytest.approx(100 * stats.beta.ppf(0.975, 1, 500))
    assert t_interval([0.0, 0.2, 0.0], 500, strings=500).hi != iv.hi  # only when every seed is 0


def test_welch_decides_what_is_distinguishable():
    """The issue's cases: intervals that overlap while Welch's test separates the seeds."""
    from explain.chapters.toy_tasks_seeds import t_interval, welch_p

    cope, none = [29.6, 24.4, 26.8], [39.8, 37.0, 39.4]
    want = stats.ttest_ind(cope, none, equal_var=False).pvalue
    assert welch_p(cope, none) == pytest.approx(want) and want < 0.05
    a, b = t_interval(cope, 500), t_interval(none, 500)
    assert a.differs_from(b) and not a.separated_from(b)
    assert math.isnan(welch_p([1.0], [2.0, 3.0]))
    assert welch_p([0.0] * 3, [0.0] * 3) == 1.0 and welch_p([0.0] * 3, [1.0] * 3) == 0.0


def test_t5_flipflop_probe_is_shipped_and_the_page_states_its_numbers():
    from explain.chapters.toy_tasks_evidence import bucket_findings, bucket_lines
    from lab import bucket_probe as B

    probe = json.loads((TOY_DIR / "bucket_probe.json").read_text())
    t5 = probe["encodings"]["t5"]
    assert [s["seed"] for s in t5["seeds"]] == list(SEEDS)
    f = bucket_findings()
    assert f is not None and f.encoding == "t5"
    s0 = t5["seeds"][0]
    assert f.reads == s0["reads_two_writes"] == sum(c["reads"] for c in s0["cells"].values())
    errs = sum(s["errors_two_writes"] for s in t5["seeds"])
    assert f.err_two == pytest.approx(100 * errs / (len(SEEDS) * f.reads))
    for lang in ("en", "ko"):
        text = " ".join(bucket_lines(lang=lang))
        assert f"{f.merged}" in text and f"{f.err_two:.1f}%" in text and f"{f.att_latest:.2f}" in text
    # The probe's read finder on a hand-made string: w1 i0 w0 r? → latest write bit at 5, previous at 1.
    ids = {"w": 0, "r": 1, "i": 2, "0": 3, "1": 4}
    toks = np.array([[ids[c] for c in "w1i0w0r0"]])
    ans = np.zeros_like(toks, dtype=bool)
    ans[0, 7] = True
    assert B.reads(toks, ans) == [(0, 6, 5, 1, True)]
