"""What the toy lab says about how its numbers were made (issue 39): test strings kept apart from
training, the learning-rate sweep on a seed that is not reported, and why T5 fails Flip-Flop
(lab/bucket_probe.py). Every sentence is computed from assets/toy/index.json and bucket_probe.json.
Numbers and words only, no Streamlit.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explain.bounds import bounded
from explain.i18n import t
from lab.shipped import TOY_DIR

from .toy_tasks import shipped_index, short_label


@bounded(8)
def test_set_text(task: str, directory: str = str(TOY_DIR), lang: str | None = None) -> str:
    """How the task's test strings were kept apart from training and validation, and how much of
    the in-distribution strings one training stream covers ("" before it has been recorded)."""
    rec = shipped_index(directory).get("test_sets", {}).get(task)
    if not rec:
        return ""
    text = t("toy_tasks.evidence.disjoint", lang, streams=rec["streams"], validation=rec["validation_strings"])
    if rec["in_any_seen"] > 0:
        return (
            text
            + " "
            + t(
                "toy_tasks.evidence.coverage",
                lang,
                stream=rec["stream_strings"],
                distinct=rec["stream_distinct"],
                one=100 * rec["in_one_stream"],
                every=100 * rec["in_any_seen"],
            )
        )
    return text + " " + t("toy_tasks.evidence.no_coverage", lang, draws=rec["draws"])


@bounded(64)
def lr_text(task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None) -> str:
    """The learning rates: the sweep's rates and seed, the rate each shown encoding got, and
    (computed) which cells were still chosen on a reported seed or await retraining."""
    index = shipped_index(directory)
    runs = index.get("runs", {})
    reported = set(index.get("seeds", []))
    shown = [(e, runs[f"{task}/{e}"]) for e in encodings if f"{task}/{e}" in runs]
    if not shown:
        return ""
    rates = ", ".join(f"{r:g}" for r in index.get("learning_rates", []))
    fair = [(e, r) for e, r in shown if r.get("sweep_seed") not in reported and "sweep_seed" in r]
    text = ""
    if fair:
        text = t(
            "toy_tasks.evidence.lr",
            lang,
            rates=rates,
            seed=fair[0][1]["sweep_seed"],
            chosen=", ".join(f"{short_label(e, lang)} {float(r['lr']):g}" for e, r in fair),
        )
    old = [(e, r) for e, r in shown if (e, r) not in fair]
    if old:
        text += (" " if text else "") + t(
            "toy_tasks.evidence.lr_reported",
            lang,
            rates=rates,
            seed=old[0][1].get("sweep_seed", 0),
            chosen=", ".join(f"{short_label(e, lang)} {float(r['lr']):g}" for e, r in old),
        )
    pending = [(e, r) for e, r in shown if "lr_pending" in r]
    if pending:
        text += " " + t(
            "toy_tasks.evidence.lr_pending",
            lang,
            cells=", ".join(
                f"{short_label(e, lang)} {float(r['lr']):g} → {float(r['lr_pending']):g}" for e, r in pending
            ),
        )
    return text


def zero_bound(strings: int) -> float:
    """The upper end (error %) of a cell whose every seed scored 0 on `strings` test strings."""
    from .toy_tasks_seeds import zero_upper

    return zero_upper(strings)


# --- why a bucketed bias fails Flip-Flop ------------------------------------------------------------


def bucket_probe(directory: str = str(TOY_DIR)) -> dict[str, Any]:
    p = Path(directory) / "bucket_probe.json"
    return json.loads(p.read_text()) if p.exists() else {}


@dataclass(frozen=True)
class BucketFindings:
    encoding: str  # the bucketing encoding measured
    seeds: int
    reads: int  # reads with two or more earlier writes, per seed
    merged: int  # of them, the latest two writes in one bucket
    exact: int  # distances 0 … exact − 1 have a bucket each
    median: float  # median distance (tokens) from the query to the latest write's bit
    err_two: float  # error % on reads with ≥ 2 writes (seeds pooled)
    err_separate: float  # … whose two writes are in separate buckets
    err_agree: float  # … whose two latest writes wrote the same bit
    err_merged: float  # … whose two writes share a bucket (NaN: none)
    err_one: float  # error % on reads with one earlier write
    att_latest: float  # largest (layer, head) mean attention on the latest write's bit, mean over seeds
    att_previous: float  # the same on the previous write's bit
    bias_range: float  # largest per-head range of the learned bias over the strings' distances (logits)
    solved: dict[str, float]  # encodings with < 1% error on two-write reads → their att_latest
    failed: dict[str, float]  # the other encodings (not the measured one) → their att_latest


def _pct(e: int, n: int) -> float:
    return 100.0 * e / n if n else float("nan")


def _att(seeds: list[dict[str, Any]], key: str) -> float:
    return float(np.mean([np.max(s[key]) for s in seeds]))


@bounded(2)
def bucket_findings(directory: str = str(TOY_DIR)) -> BucketFindings | None:
    """The measured bucketing encoding (the first whose probe has bucket cells) and the reference
    encodings, from bucket_probe.json; None before it has been made."""
    encs = bucket_probe(directory).get("encodings", {})
    measured = next((e for e, v in encs.items() if "cells" in v["seeds"][0]), None)
    if measured is None:
        return None
    v = encs[measured]
    seeds = v["seeds"]

    def cell(pred: Callable[[str], bool]) -> tuple[int, int]:
        e = n = 0
        for s in seeds:
            for k, c in s["cells"].items():
                if pred(k):
                    e, n = e + c["errors"], n + c["reads"]
        return e, n

    merged_n = sum(c["reads"] for k, c in seeds[0]["cells"].items() if k.startswith("merged"))
    exact = next(b["bucket"] for b in v["buckets"] if b["hi"] > b["lo"])
    others = {e: w for e, w in encs.items() if e != measured}
    two = {
        e: _pct(sum(s["errors_two_writes"] for s in w["seeds"]), sum(s["reads_two_writes"] for s in w["seeds"]))
        for e, w in others.items()
    }
    return BucketFindings(
        encoding=measured,
        seeds=len(seeds),
        reads=seeds[0]["reads_two_writes"],
        merged=merged_n,
        exact=exact,
        median=float(np.median([s["distance_latest_median"] for s in seeds])),
        err_two=_pct(sum(s["errors_two_writes"] for s in seeds), sum(s["reads_two_writes"] for s in seeds)),
        err_separate=_pct(*cell(lambda k: k.startswith("separate"))),
        err_agree=_pct(*cell(lambda k: k.endswith("/agree"))),
        err_merged=_pct(*cell(lambda k: k.startswith("merged"))),
        err_one=_pct(sum(s["errors_one_write"] for s in seeds), sum(s["reads_one_write"] for s in seeds)),
        att_latest=_att(seeds, "attention_latest"),
        att_previous=_att(seeds, "attention_previous"),
        bias_range=float(np.mean([max(s["bias_range"]) for s in seeds])),
        solved={e: _att(w["seeds"], "attention_latest") for e, w in others.items() if two[e] < 1.0},
        failed={e: _att(w["seeds"], "attention_latest") for e, w in others.items() if two[e] >= 1.0},
    )


@bounded(4)
def bucket_lines(directory: str = str(TOY_DIR), lang: str | None = None) -> tuple[str, ...]:
    """The page's paragraph on the bucketed encoding's Flip-Flop failure, every number from the probe;
    its conclusion follows from them: the buckets explain it only if merged reads are common and err
    more than separate ones."""
    f = bucket_findings(directory)
    if f is None:
        return ()
    name = short_label(f.encoding, lang)
    merged_share = 100.0 * f.merged / f.reads if f.reads else 0.0
    lines = [
        t(
            "toy_tasks.bucket.measured",
            lang,
            enc=name,
            seeds=f.seeds,
            reads=f.reads,
            merged=f.merged,
            share=merged_share,
            median=f.median,
            exact_last=f.exact - 1,
        ),
        t(
            "toy_tasks.bucket.errors",
            lang,
            enc=name,
            two=f.err_two,
            separate=f.err_separate,
            agree=f.err_agree,
            one=f.err_one,
        ),
        t(
            "toy_tasks.bucket.attention",
            lang,
            enc=name,
            latest=f.att_latest,
            previous=f.att_previous,
            range=f.bias_range,
            solved=", ".join(f"{short_label(e, lang)} {a:.2f}" for e, a in f.solved.items()) or "—",
            failed=", ".join(f"{short_label(e, lang)} {a:.2f}" for e, a in f.failed.items()) or "—",
        ),
    ]
    if merged_share >= 10.0 and f.err_merged > f.err_separate:
        verdict = "buckets"  # the merged reads are common and err more: the buckets explain it
    elif f.err_separate >= 0.5 * f.err_two and f.att_latest < 2 * f.att_previous:
        verdict = "flat"  # it errs where the buckets separate the writes, and attends to neither more
    else:
        verdict = "open"
    lines.append(t(f"toy_tasks.bucket.verdict_{verdict}", lang, enc=name))
    return tuple(lines)
