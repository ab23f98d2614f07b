"""The toy lab's two one-factor experiments as the page shows them (lab/toy_more.py): Flip-Flop at a
closer-to-paper scale beside the lab's own, and CoPE with one position table shared by its heads
beside the lab's one table per head. Numbers and words only, no Streamlit.

The larger run has one seed per encoding, so its interval is over test strings only: the Wilson 95%
interval of a proportion (errors out of answers). The lab's own numbers keep their interval over seeds
and strings (toy_tasks_seeds.t_interval). Intervals of different kinds are still both 95% intervals;
the page says which is which.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from explain.bounds import bounded
from explain.i18n import t
from lab.shipped import SHIPPED, TOY_DIR
from lab.toy_more import COPE_TABLE_DIR, LARGE_DIR
from lab.train import TrainConfig, task_of

from .toy_tasks import (
    PAPER_RESULTS,
    PAPER_ROW,
    Verdict,
    compare_orderings,
    shipped_index,
    short_label,
    split_short,
    toy_intervals,
    verdict_line,
)
from .toy_tasks_probes import probe_short
from .toy_tasks_seeds import Z975, Interval, factor_table, t_interval

# The probes the comparison shows, in order (ids of lab/probe.py; "id" is the test split).
SCALE_PROBES = ("id", "sparser", "longer", "both", "both_hard")
# The paper's Table 2 columns and the probe of the larger run that measures each: "OOD" is "both"
# (sparser and twice as long), the split the lab's own OOD column is.
LARGE_PAPER_COLUMNS = {"in-dist": "id", "OOD": "both"}


def wilson(errors: int, answers: int) -> Interval:
    """Error % with the Wilson score 95% interval of errors/answers (one seed: strings only)."""
    if answers <= 0:
        return t_interval([])
    p, n, z2 = errors / answers, answers, Z975**2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z975 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval((100.0 * p,), 100.0 * p, 100.0 * max(0.0, centre - half), 100.0 * min(1.0, centre + half))


def _read(directory: str) -> dict[str, Any]:
    p = Path(directory) / "index.json"
    return json.loads(p.read_text()) if p.exists() else {}


def large_index(directory: str = str(LARGE_DIR)) -> dict[str, Any]:
    """assets/toy_large/index.json ({} when the larger run has not been made)."""
    return _read(directory)


def cope_table_index(directory: str = str(COPE_TABLE_DIR)) -> dict[str, Any]:
    """assets/toy_cope_table/index.json ({} when it has not been made)."""
    return _read(directory)


# --- the larger run ------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleView:
    probes: tuple[str, ...]  # probe ids, SCALE_PROBES order
    categories: tuple[str, ...]  # their shown names
    small: dict[str, tuple[Interval, ...]]  # encoding → per probe, over the lab's seeds
    large: dict[str, tuple[Interval, ...]]  # encoding → per probe, the larger run's one seed
    small_seeds: int
    answers: tuple[int, ...]  # the larger run's answers per probe


def large_intervals(encoding: str, directory: str = str(LARGE_DIR)) -> dict[str, Interval] | None:
    run = large_index(directory).get("runs", {}).get(encoding)
    if run is None:
        return None
    return {p: wilson(v["errors"], v["answers"]) for p, v in run["probes"].items()}


def small_intervals(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, Interval] | None:
    """The lab's own numbers on the same probes: the test split for "id", the probes otherwise."""
    iv = toy_intervals(task, encoding, directory)
    ft = factor_table(task, (encoding,), directory)
    if iv is None or ft is None or encoding not in ft.intervals:
        return None
    return {"id": iv["id"], **dict(zip(ft.probes, ft.intervals[encoding], strict=True))}


def scale_view(
    task: str,
    encodings: tuple[str, ...],
    lang: str | None = None,
    toy_dir: str = str(TOY_DIR),
    large_dir: str = str(LARGE_DIR),
) -> ScaleView | None:
    """The chosen encodings that have both a larger run and the lab's probes, probe by probe; None
    when the task has no larger run or none of the chosen encodings has one."""
    index = large_index(large_dir)
    if index.get("settings", {}).get("task") != task:
        return None
    small, large = {}, {}
    for enc in encodings:
        s, big = small_intervals(task, enc, toy_dir), large_intervals(enc, large_dir)
        if s is None or big is None:
            continue
        small[enc] = tuple(s[p] for p in SCALE_PROBES)
        large[enc] = tuple(big[p] for p in SCALE_PROBES)
    if not large:
        return None
    any_run = next(iter(index["runs"].values()))
    return ScaleView(
        SCALE_PROBES,
        tuple(split_short(p, lang) if p == "id" else probe_short(task, p, lang) for p in SCALE_PROBES),
        small,
        large,
        len(next(iter(small.values()))[0].values),
        tuple(int(any_run["probes"][p]["answers"]) for p in SCALE_PROBES),
    )


def scale_series(view: ScaleView, lang: str | None = None) -> dict[str, list[Interval]]:
    """Legend name → intervals per probe, each encoding's lab scale next to its larger run."""
    out: dict[str, list[Interval]] = {}
    for enc in view.large:
        out[t("toy_tasks.large.series_small", lang, enc=short_label(enc, lang), n=view.small_seeds)] = list(
            view.small[enc]
        )
        out[t("toy_tasks.large.series_large", lang, enc=short_label(enc, lang))] = list(view.large[enc])
    return out


def scale_lines(view: ScaleView, lang: str | None = None) -> tuple[str, ...]:
    """Per encoding: on which probes the larger run's error is lower, higher, or not distinguishable
    from the lab's (the two 95% intervals overlap)."""
    lines = []
    none = t("toy_tasks.large.none", lang)
    for enc in view.large:
        lower: list[str] = []
        higher: list[str] = []
        same: list[str] = []
        for k, name in enumerate(view.categories):
            a, b = view.small[enc][k], view.large[enc][k]
            (same if not a.separated_from(b) else lower if b.mean < a.mean else higher).append(name)
        lines.append(
            t(
                "toy_tasks.large.line",
                lang,
                enc=short_label(enc, lang),
                lower=", ".join(lower) or none,
                higher=", ".join(higher) or none,
                same=", ".join(same) or none,
            )
        )
    return tuple(lines)


def large_verdicts(task: str, lang: str | None = None, large_dir: str = str(LARGE_DIR)) -> list[Verdict]:
    """The paper's Table 2 ordering against the larger run (one seed; intervals over strings)."""
    if large_index(large_dir).get("settings", {}).get("task") != task:
        return []
    cols, paper = PAPER_RESULTS[task]
    out = []
    for col, probe in LARGE_PAPER_COLUMNS.items():
        ci = cols.index(col)
        p: dict[str, float] = {}
        run: dict[str, Interval] = {}
        for enc, row in PAPER_ROW.items():
            iv = large_intervals(enc, large_dir)
            if row in paper and iv is not None:
                p[short_label(enc, lang)], run[short_label(enc, lang)] = paper[row][ci], iv[probe]
        if p:
            out.append(compare_orderings(col, p, run))
    return out


def config_text(settings: dict[str, Any], tokens: int, lang: str | None = None) -> str:
    return t(
        "toy_tasks.large.config",
        lang,
        layers=settings["n_layers"],
        d=settings["d_model"],
        heads=settings["n_heads"],
        steps=settings["steps"],
        batch=settings["batch_size"],
        tokens=tokens,
    )


def settings_text(task: str, lang: str | None = None, large_dir: str = str(LARGE_DIR)) -> str:
    """The lab's configuration and the larger run's, from the settings each was trained with."""
    index = large_index(large_dir)
    small = asdict(SHIPPED[task])
    big = index["settings"]
    big_cfg = TrainConfig(**{**big, "encoding": "", "task": task})
    return t(
        "toy_tasks.large.settings",
        lang,
        small=config_text(small, task_of(SHIPPED[task]).split_length("id"), lang),
        large=config_text(big, task_of(big_cfg).split_length("id"), lang),
        lr=f"{big['lr']:g}",
        n=index["n"],
        cpu=round(float(index.get("cpu_seconds", 0)) / 60, 1),
    )


# --- CoPE's table shared by the heads ------------------------------------------------------------


@dataclass(frozen=True)
class TableComparison:
    encoding: str
    splits: tuple[str, ...]
    per_head: tuple[Interval, ...]  # the lab's shipped runs (one table per head)
    shared: tuple[Interval, ...]  # the same settings and seeds with one shared table
    lr: float
    seeds: tuple[int, ...]
    stale: tuple[str, ...] = ()  # splits whose shared-table numbers were measured on older test strings


def cope_table_comparison(
    task: str, encodings: tuple[str, ...], toy_dir: str = str(TOY_DIR), table_dir: str = str(COPE_TABLE_DIR)
) -> TableComparison | None:
    """Per split, mean and 95% interval over seeds of both variants; None when the variant was not
    trained for `task` or its encoding is not among the chosen ones."""
    index = cope_table_index(table_dir)
    enc = str(index.get("encoding", ""))
    cell = index.get("runs", {}).get(task)
    per_head = toy_intervals(task, enc, toy_dir) if enc in encodings else None
    if cell is None or per_head is None:
        return None
    seeds = cell["seeds"]
    # Runs made before the test strings were kept apart from training (lab/disjoint.py; they record
    # no "strings") were tested on the earlier in-distribution strings wherever those recurred in
    # training: not the strings of the shipped runs now, so not compared.
    recurred = shipped_index(toy_dir).get("test_sets", {}).get(task, {}).get("in_any_seen", 0) > 0
    stale = ("id",) if recurred and "strings" not in seeds[0] and "id" in seeds[0]["errors"] else ()
    splits = tuple(sp for sp in seeds[0]["errors"] if sp not in stale)
    shared = tuple(t_interval([s["errors"][sp] for s in seeds], seeds[0]["answers"][sp]) for sp in splits)
    return TableComparison(
        enc,
        splits,
        tuple(per_head[sp] for sp in splits),
        shared,
        float(cell["lr"]),
        tuple(int(s["seed"]) for s in seeds),
        stale,
    )


def cope_table_lines(tc: TableComparison, lang: str | None = None) -> tuple[str, ...]:
    lines = [
        t(
            "toy_tasks.cope_table.intro",
            lang,
            enc=short_label(tc.encoding, lang),
            seeds=", ".join(map(str, tc.seeds)),
            lr=f"{tc.lr:g}",
        )
    ]
    for sp, a, b in zip(tc.splits, tc.per_head, tc.shared, strict=True):
        # Welch's t-test over the two variants' seeds decides (p < ALPHA), as every verdict of the lab.
        word = "same" if not a.differs_from(b) else "shared_lower" if b.mean < a.mean else "per_head_lower"
        lines.append(
            t(
                "toy_tasks.cope_table.line",
                lang,
                split=split_short(sp, lang),
                per_head=a.text(),
                shared=b.text(),
                word=t(f"toy_tasks.cope_table.{word}", lang, p=a.welch_p(b)),
            )
        )
    if tc.stale:
        lines.append(t("toy_tasks.cope_table.stale", lang, splits=", ".join(split_short(sp, lang) for sp in tc.stale)))
    return tuple(lines)


# --- what the page shows -------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaleSection:
    note: str  # "" when there is a comparison; else why there is none
    settings: str = ""
    categories: tuple[str, ...] = ()
    series: dict[str, list[Interval]] | None = None
    styles: tuple[
        tuple[int, bool], ...
    ] = ()  # per series: the encoding's colour index in the chosen list, hollow = this lab
    lines: tuple[str, ...] = ()
    verdicts: tuple[str, ...] = ()
    caption: str = ""


# Cache bounds (pages/labs/toy_tasks.py): the shipped results are a few kilobytes of JSON each.
@bounded(64)
def scale_section(
    task: str,
    encodings: tuple[str, ...],
    lang: str | None = None,
    toy_dir: str = str(TOY_DIR),
    large_dir: str = str(LARGE_DIR),
) -> ScaleSection:
    """Everything the page's "At a larger scale" part shows, or the sentence saying why it is empty."""
    if not large_index(large_dir):
        return ScaleSection(t("toy_tasks.large.not_made", lang))
    view = scale_view(task, encodings, lang, toy_dir, large_dir)
    if view is None:
        return ScaleSection(t("toy_tasks.large.missing", lang))
    return ScaleSection(
        "",
        settings_text(task, lang, large_dir),
        view.categories,
        scale_series(view, lang),
        tuple((encodings.index(enc), hollow) for enc in view.large for hollow in (True, False)),
        scale_lines(view, lang),
        tuple(verdict_line(v, lang) for v in large_verdicts(task, lang, large_dir)),
        t("toy_tasks.large.caption", lang, id=view.categories[0]),
    )


@bounded(64)
def cope_table_section(
    task: str,
    encodings: tuple[str, ...],
    lang: str | None = None,
    toy_dir: str = str(TOY_DIR),
    table_dir: str = str(COPE_TABLE_DIR),
) -> tuple[str, ...]:
    """The lines of "One table per head, or one shared?" (empty: nothing to compare)."""
    tc = cope_table_comparison(task, encodings, toy_dir, table_dir)
    return () if tc is None else cope_table_lines(tc, lang)
