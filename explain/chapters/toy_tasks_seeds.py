"""The toy-task lab's uncertainty: every shipped seed, its mean and a 95% interval, and the
evaluation-only probes (one factor at a time, length curves) of assets/toy/probes.json.

Two things move a toy error: the training seed (a fresh model and a fresh stream of training
strings) and the test strings (fixed, shared by every seed and encoding, so a fresh test set would
move every seed together). The interval adds both in quadrature around the mean of the n per-seed
errors e_s (in %, over A answers per test set):

    half = √( (t_{0.975, n−1} · s / √n)²  +  (z_{0.975} · 100 · √(p̄ (1 − p̄) / A))² ),   p̄ = mean / 100

s the sample standard deviation over seeds (Student t: with n = 3 seeds t = 4.30, wide on purpose),
the second term the binomial standard error of a proportion measured on A answers. Clipped to
[0, 100]. A cell whose every seed scores 0 has no spread to measure and a binomial error of 0: its
interval is [0, u] with u the Clopper–Pearson 95% upper bound for 0 failures in N test strings
(N strings, not answers: the answers of one string are not independent, and an answer error rate is
at most the share of strings with an error), never [0, 0].

Two encodings are *distinguishable* when Welch's t-test over their seeds (unequal variances) gives
p < ALPHA; the page makes an ordering claim only then, and says so. The test compares the seeds'
errors on the same test strings: it asks whether another seed would order them the same way. Where
neither cell varies over its seeds (e.g. 0, 0, 0 against 0, 0, 0) the statistic is undefined: equal
means are not distinguishable, different ones are (t is infinite). Numbers only, no Streamlit.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lab.shipped import TOY_DIR

# t_{0.975, df}: the two-sided 95% quantile of Student's t (tests/test_toy_seeds.py checks it against
# scipy.stats.t.ppf); the lab ships 3 seeds (df = 2), a live run may add a few.
T975 = {
    1: 12.7062,
    2: 4.3027,
    3: 3.1824,
    4: 2.7764,
    5: 2.5706,
    6: 2.4469,
    7: 2.3646,
    8: 2.3060,
    9: 2.2622,
    10: 2.2281,
}


ALPHA = 0.05  # Welch's test: two cells differ when p < ALPHA


@dataclass(frozen=True)
class Interval:
    values: tuple[float, ...]  # one error % per seed, in seed order
    mean: float
    lo: float  # NaN with a single seed: no interval
    hi: float
    bound: bool = False  # every seed scored 0: hi is the Clopper–Pearson upper bound from the test strings

    def welch_p(self, other: Interval) -> float:
        """Two-sided p of Welch's t-test between the two cells' per-seed errors (NaN: < 2 seeds)."""
        return welch_p(self.values, other.values)

    def differs_from(self, other: Interval) -> bool:
        """True when Welch's t-test over the seeds separates the two cells (p < ALPHA). With one seed
        on a side Welch is undefined: then the two 95% intervals must not overlap (the larger run's
        one seed, whose intervals are over its test strings: toy_tasks_more, which says so)."""
        if len(self.values) < 2 or len(other.values) < 2:
            return self.separated_from(other)
        return self.welch_p(other) < ALPHA

    def separated_from(self, other: Interval) -> bool:
        """True when the two 95% intervals do not overlap (the page's test for an ordering)."""
        if not (np.isfinite(self.lo) and np.isfinite(other.lo)):
            return False
        return self.hi < other.lo or other.hi < self.lo

    def text(self) -> str:
        """“12.3 [9.1, 15.5]”: the mean and the interval at one decimal."""
        if not np.isfinite(self.lo):
            return f"{self.mean:.1f}"
        return f"{self.mean:.1f} [{self.lo:.1f}, {self.hi:.1f}]"


Z975 = 1.959964  # the two-sided 95% quantile of the standard normal


def welch_p(a: tuple[float, ...] | list[float], b: tuple[float, ...] | list[float]) -> float:
    """Two-sided p-value of Welch's t-test (unequal variances) between two sets of per-seed errors.
    NaN with fewer than 2 values on a side; with no spread on either side, 1 for equal means and 0
    for different ones (the statistic is infinite)."""
    from scipy import stats

    x, y = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if len(x) < 2 or len(y) < 2:
        return math.nan
    if x.var(ddof=1) + y.var(ddof=1) == 0:
        return 1.0 if x.mean() == y.mean() else 0.0
    return float(stats.ttest_ind(x, y, equal_var=False).pvalue)


def closest_rival(errors: dict[str, Interval]) -> tuple[str, str, float]:
    """(lowest key, the key whose Welch p against it is largest, that p): the pair that decides
    whether the lowest is distinguishably lowest."""
    best = min(errors, key=lambda k: errors[k].mean)

    def p_or_one(k: str) -> float:
        p = errors[best].welch_p(errors[k])
        return 1.0 if not np.isfinite(p) else p

    rival = max((k for k in errors if k != best), key=p_or_one)
    return best, rival, errors[best].welch_p(errors[rival])


def zero_upper(strings: int) -> float:
    """Error % upper bound when no test string of `strings` had an error: the Clopper–Pearson
    two-sided 95% upper limit for 0 failures in `strings` trials, 1 − 0.025^(1/N)."""
    from scipy import stats

    return 100.0 * float(stats.beta.ppf(0.975, 1, strings))


def t_interval(
    values: list[float] | tuple[float, ...],
    answers: int = 0,
    clip: tuple[float, float] = (0.0, 100.0),
    strings: int = 0,
) -> Interval:
    """Mean of per-seed error % and its 95% interval: the Student-t interval over the seeds, widened
    in quadrature by the binomial error of a test set of `answers` answers (0: seeds only). When every
    seed scored 0 and the test set had `strings` strings, [0, zero_upper(strings)]."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    n = len(v)
    if n == 0:
        return Interval((), math.nan, math.nan, math.nan)
    mean = float(v.mean())
    if strings > 0 and not v.any():
        return Interval(tuple(map(float, v)), 0.0, 0.0, zero_upper(strings), bound=True)
    if n == 1:
        return Interval(tuple(map(float, v)), mean, math.nan, math.nan)
    seeds = T975[n - 1] * float(v.std(ddof=1)) / math.sqrt(n)
    p = min(1.0, max(0.0, mean / 100.0))
    test = Z975 * 100.0 * math.sqrt(p * (1 - p) / answers) if answers > 0 else 0.0
    half = math.hypot(seeds, test)
    return Interval(tuple(map(float, v)), mean, max(clip[0], mean - half), min(clip[1], mean + half))


def _index(directory: str) -> dict[str, Any]:
    p = Path(directory) / "index.json"
    return json.loads(p.read_text()) if p.exists() else {}


def seed_errors(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, list[float]] | None:
    """split → the error % of every shipped seed (index.json), None when nothing is shipped."""
    run = _index(directory).get("runs", {}).get(f"{task}/{encoding}")
    if not run or "seeds" not in run:
        return None
    return {split: [float(s["errors"][split]) for s in run["seeds"]] for split in run["seeds"][0]["errors"]}


def split_answers(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, int]:
    """split → answers in its test set (the same for every seed)."""
    run = _index(directory).get("runs", {}).get(f"{task}/{encoding}") or {}
    seeds = run.get("seeds") or [{}]
    return {k: int(v) for k, v in seeds[0].get("answers", {}).items()}


def run_seconds(task: str, encoding: str, directory: str = str(TOY_DIR)) -> tuple[float, float]:
    """Mean CPU and wall seconds of one shipped training run (over the seeds)."""
    runs = (_index(directory).get("runs", {}).get(f"{task}/{encoding}") or {}).get("seeds", [])
    if not runs:
        return math.nan, math.nan
    return float(np.mean([r["train_cpu_seconds"] for r in runs])), float(np.mean([r["train_seconds"] for r in runs]))


def split_strings(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, int]:
    """split → strings in its test set (the same for every seed)."""
    run = _index(directory).get("runs", {}).get(f"{task}/{encoding}") or {}
    seeds = run.get("seeds") or [{}]
    return {k: int(v) for k, v in seeds[0].get("strings", {}).items()}


def seed_metrics(task: str, encoding: str, directory: str = str(TOY_DIR)) -> list[dict[str, Any]]:
    """The metrics file of every shipped seed of (task, encoding), in seed order ([] when none)."""
    run = _index(directory).get("runs", {}).get(f"{task}/{encoding}")
    if not run or "seeds" not in run:
        return []
    out = []
    for s in run["seeds"]:
        p = Path(directory) / f"{s['file']}.json"
        if p.exists():
            out.append(json.loads(p.read_text()))
    return out


def group_error(metrics: dict[str, Any], group: str) -> float:
    """Counting: error % of the in-distribution programs with `group` variables (NaN: none)."""
    grp = metrics["results"]["id"]["by_group"].get(group)
    return 100.0 * grp["errors"] / grp["n"] if grp and grp["n"] else math.nan


def sweep(task: str, encoding: str, directory: str = str(TOY_DIR)) -> list[tuple[float, float]]:
    """(learning rate, validation error %) of every run of the sweep of (task, encoding)."""
    run = _index(directory).get("runs", {}).get(f"{task}/{encoding}") or {}
    return [(float(x["lr"]), float(x["val_error"])) for x in run.get("sweep", [])]


# --- the probes -----------------------------------------------------------------------------------


def probes(directory: str = str(TOY_DIR)) -> dict[str, Any]:
    """assets/toy/probes.json ({} when it has not been made)."""
    p = Path(directory) / "probes.json"
    return json.loads(p.read_text()) if p.exists() else {}


@dataclass
class FactorTable:
    probes: list[str]  # probe ids, in order
    intervals: dict[str, list[Interval]]  # encoding → one interval (over seeds) per probe
    answers: list[int]  # answers per probe and seed (the same strings for every encoding)


def factor_table(task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR)) -> FactorTable | None:
    """Error % on each one-factor probe of `task`, mean and interval over seeds, per encoding."""
    fac = probes(directory).get("factors", {}).get(task)
    if not fac or not fac["probes"]:
        return None  # Selective Copy: its OOD splits already change one factor each
    names = list(fac["probes"])
    res = fac["results"]
    out: dict[str, list[Interval]] = {}
    answers = [0] * len(names)
    for enc in encodings:
        if enc not in res[names[0]]:
            continue
        row = []
        for k, name in enumerate(names):
            seeds = res[name][enc]
            answers[k] = seeds[0]["answers"]
            vals = [100.0 * s["errors"] / s["answers"] if s["answers"] else math.nan for s in seeds]
            row.append(t_interval(vals, seeds[0]["answers"], strings=int(seeds[0].get("strings", 0))))
        out[enc] = row
    return FactorTable(names, out, answers)


@dataclass
class Binned:
    bins: list[str]  # bin labels, in order
    error: dict[str, np.ndarray]  # encoding → error % per bin, every seed's answers pooled (NaN: none)
    counts: list[int]  # answers per bin and seed


def probe_bins(
    task: str, probe: str, kind: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR)
) -> Binned | None:
    """Error % of one probe against distance (kind "by_distance") or number of distractors
    ("by_distractors"), the seeds pooled (the same strings, so every seed counts each answer once)."""
    fac = probes(directory).get("factors", {}).get(task)
    if not fac or probe not in fac["results"]:
        return None
    res = fac["results"][probe]
    labels: list[str] = []
    table: dict[str, dict[str, tuple[int, int]]] = {}
    order: dict[str, int] = {}
    for enc in encodings:
        if enc not in res:
            continue
        per: dict[str, tuple[int, int]] = {}
        for s in res[enc]:
            for b in s[kind]:
                if kind == "by_distance":
                    lab, key = f"{b['lo']}–{b['hi'] - 1}", b["lo"]
                else:
                    lab, key = (f"{b['k']}+" if b["k"] == 3 else str(b["k"])), b["k"]
                e, n = per.get(lab, (0, 0))
                per[lab] = (e + b["errors"], n + b["n"])
                order[lab] = key
        table[enc] = per
    labels = sorted(order, key=lambda lab: order[lab])
    n_seeds = {enc: len(res[enc]) for enc in table}
    err = {
        enc: np.array([100.0 * per[b][0] / per[b][1] if b in per and per[b][1] else np.nan for b in labels])
        for enc, per in table.items()
    }
    counts = [int(next((per[b][1] // n_seeds[enc] for enc, per in table.items() if b in per), 0)) for b in labels]
    return Binned(labels, err, counts)


@dataclass
class LengthCurve:
    factors: list[float]  # test length ÷ training length
    tokens: list[int]  # the longest test string at each factor
    intervals: dict[str, list[Interval]]  # encoding → one interval per factor (NaN: no position rows)


def length_curve(task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR)) -> LengthCurve | None:
    """Error % as the test strings grow from the training length to 4×, mean and interval over seeds."""
    pr = probes(directory)
    ln = pr.get("lengths", {}).get(task)
    if not ln:
        return None
    out: dict[str, list[Interval]] = {}
    for enc in encodings:
        if enc not in ln["errors"]:
            continue
        errs, answers = ln["errors"][enc], ln["answers"][enc]
        row = []
        for k in range(len(ln["tokens"])):
            vals = [100.0 * e[k] / a[k] for e, a in zip(errs, answers, strict=True) if e[k] is not None and a[k]]
            row.append(t_interval(vals, answers[0][k] or 0, strings=int(pr.get("n", 0)) if vals else 0))
        out[enc] = row
    return LengthCurve(list(pr["length_factors"]), list(ln["tokens"]), out)
