"""The toy-task lab's seeds, one-factor probes and length curves as the page draws them: shown names
(encodings, splits, probes) around the numbers of toy_tasks_seeds.py. Numbers and words only, no
Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

from explain.bounds import bounded
from explain.i18n import t
from lab import tasks as T
from lab.shipped import TOY_DIR

from . import toy_tasks_seeds as seeds_mod
from .toy_tasks import DistanceErrors, shipped_index, short_label, split_short, toy_intervals
from .toy_tasks_seeds import Interval


@dataclass
class SeedSeries:
    categories: list[str]  # shown names (splits, probes)
    ids: list[str]  # their ids
    series: dict[str, list[Interval]]  # shown encoding label → one interval per category


# Cache bounds (pages/labs/toy_tasks.py): the shipped results are a few kilobytes of JSON each.
@bounded(64)
def seed_series(
    task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> SeedSeries:
    """Every shipped seed's error per split, with mean and 95% interval, per encoding."""
    splits = list(T.get(task).split_names)
    series = {}
    for enc in encodings:
        iv = toy_intervals(task, enc, directory)
        if iv is not None:
            series[short_label(enc, lang)] = [iv[s] for s in splits]
    return SeedSeries([split_short(s, lang) for s in splits], splits, series)


def probe_k(directory: str = str(TOY_DIR)) -> int:
    """Counting's K (the answer threshold of its probes), 0 when no probes are shipped."""
    return int(seeds_mod.probes(directory).get("K", {}).get("counting", 0))


@bounded(1)
def probe_strings(directory: str = str(TOY_DIR)) -> int:
    """Test strings per probe (probes.json), 0 when no probes are shipped."""
    return int(seeds_mod.probes(directory).get("n", 0))


@bounded(64)
def probe_label(task: str, probe: str, directory: str = str(TOY_DIR), lang: str | None = None) -> str:
    return t(f"toy_tasks.probe.{task}.{probe}", lang, k=probe_k(directory))


def probe_short(task: str, probe: str, lang: str | None = None) -> str:
    return t(f"toy_tasks.probe_short.{task}.{probe}", lang)


@bounded(64)
def factor_series(
    task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> SeedSeries | None:
    """Every seed's error on each one-factor probe of `task` (None: the task has none shipped)."""
    ft = seeds_mod.factor_table(task, encodings, directory)
    if ft is None:
        return None
    return SeedSeries(
        [probe_short(task, p, lang) for p in ft.probes],
        ft.probes,
        {short_label(enc, lang): ivs for enc, ivs in ft.intervals.items()},
    )


@bounded(64)
def probe_bins(
    task: str, probe: str, kind: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> DistanceErrors | None:
    """One probe's error % against distance ("by_distance") or distractors ("by_distractors"),
    every seed's answers pooled; series keyed by the shown encoding label."""
    b = seeds_mod.probe_bins(task, probe, kind, encodings, directory)
    if b is None:
        return None
    return DistanceErrors(b.bins, {short_label(e, lang): v for e, v in b.error.items()}, b.counts)


@dataclass
class LengthSeries:
    factors: list[float]
    tokens: list[int]
    series: dict[str, list[Interval]]  # shown encoding label → one interval per length
    rows: int  # the longest string a learned table has a row for (results-table splits)


@bounded(64)
def length_series(
    task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> LengthSeries | None:
    lc = seeds_mod.length_curve(task, encodings, directory)
    if lc is None:
        return None
    return LengthSeries(
        lc.factors,
        lc.tokens,
        {short_label(e, lang): v for e, v in lc.intervals.items()},
        T.get(task).max_length(),
    )


@bounded(64)
def lr_text(task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None) -> str:
    """The learning-rate caption: the sweep's rates and seed, the rate each shown encoding got
    (toy_tasks_evidence.lr_text)."""
    from .toy_tasks_evidence import lr_text as text

    return text(task, encodings, directory, lang)


@bounded(1)
def shipped_seeds(directory: str = str(TOY_DIR)) -> list[int]:
    return list(shipped_index(directory).get("seeds", []))
