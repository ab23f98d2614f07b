"""The regeneration's worker processes (lab/parallel.py) change when a run finishes, never what it
produces: a run trained on a worker has the same weights, bit for bit, as the run trained here, and a
shipped checkpoint probed on a worker scores what probes.json records."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator

import pytest
import torch

from lab import parallel
from lab import probe as P
from lab import regenerate as R
from lab.train import TrainConfig, train


# One pool for the module (tests/conftest.py keeps this file's tests on one xdist worker): each pool
# spawns two processes that import torch and the lab (~3 s of CPU each, beside the browser tests), and
# the later tests then also run on workers that have already run something (nothing may leak).
@pytest.fixture(scope="module")
def two_workers() -> Iterator[parallel.Workers]:
    with pytest.MonkeyPatch.context() as mp:
        for k in parallel.MALLOC_ENV:  # the pool sets these for its workers: restored after the module
            mp.delenv(k, raising=False)
        with parallel.Workers(2) as workers:  # stops its processes after the module
            yield workers


@pytest.mark.parametrize("jobs", [0, -1])
def test_jobs_must_be_positive(jobs):
    with pytest.raises(ValueError, match="at least 1"):
        parallel.Workers(jobs)


def test_one_job_runs_here_in_order():
    here = parallel.of(None)  # a regeneration given no workers: this process alone
    assert here.jobs == 1
    assert here.run_all(abs, [-3, 2, -1]) == [3, 2, 1]
    assert here.run_all(abs, []) == []
    assert here._pool is None  # nothing was spawned


def test_workers_run_with_the_allocator_settings(two_workers):
    assert two_workers.run_all(os.getenv, list(parallel.MALLOC_ENV)) == list(parallel.MALLOC_ENV.values())


def test_a_run_on_a_worker_has_the_weights_of_the_run_here(two_workers):
    # Short runs of encodings with and without their own parameters; two of them on one worker in turn,
    # so a worker's earlier run must not leak into its next one either. The workers run with
    # parallel.MALLOC_ENV and this process without it: the allocator must not change a bit either.
    configs = [TrainConfig("flipflop", enc, steps=10, seed=s) for enc, s in (("cope", 1), ("rope", 0), ("t5", 2))]
    there = two_workers.run_all(train, configs)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)  # as every regeneration runs (its workers too): two threads sum differently
    try:
        here_runs = [train(cfg) for cfg in configs]
    finally:
        torch.set_num_threads(threads)
    for cfg, r, here in zip(configs, there, here_runs, strict=True):
        a, b = here.model.state_dict(), r.model.state_dict()
        assert a.keys() == b.keys()
        assert all(torch.equal(a[k], b[k]) for k in a), cfg.encoding
        assert here.metrics["results"] == r.metrics["results"]
        assert here.metrics["curve"] == r.metrics["curve"]


def test_probes_on_a_worker_are_the_shipped_probes(tmp_path, two_workers):
    # One shipped checkpoint (the cheapest task's seed 0) through write_probes on a worker; the shipped
    # probes.json was written by a regeneration, so its numbers for that checkpoint must come back.
    task, enc = "selective_copy", "alibi"
    cell = json.loads((R.TOY_DIR / "index.json").read_text())["runs"][f"{task}/{enc}"]
    first = cell["seeds"][0]
    for ext in ("safetensors", "json"):
        shutil.copy(R.TOY_DIR / f"{first['file']}.{ext}", tmp_path)
    index = {"runs": {f"{task}/{enc}": {**cell, "seeds": [first]}}}
    out = P.write_probes(tmp_path, index, (task,), two_workers)
    shipped = json.loads((R.TOY_DIR / "probes.json").read_text())
    for name, per_enc in out["factors"][task]["results"].items():
        assert per_enc[enc] == [shipped["factors"][task]["results"][name][enc][0]], name
    lengths = shipped["lengths"][task]
    assert out["lengths"][task]["tokens"] == lengths["tokens"]
    assert out["lengths"][task]["errors"][enc] == [lengths["errors"][enc][0]]
    assert out["lengths"][task]["answers"][enc] == [lengths["answers"][enc][0]]


def test_a_failing_regenerator_beside_the_others_fails_the_command(monkeypatch):
    ran: list[str] = []

    def fails(args):
        raise RuntimeError("toy_large broke")

    monkeypatch.setattr(
        R, "REGENERATORS", [("toy", lambda a: ran.append(f"toy, {a.workers.jobs} job")), ("toy_large", fails)]
    )
    with pytest.raises(RuntimeError, match="toy_large broke"):
        R.main(["--jobs", "1"])
    assert ran == ["toy, 1 job"]  # the others still ran to the end, given the command's workers
    assert "toy_large" in R.CONCURRENT
