"""What the toy-task lab shows of its shipped results (assets/toy/): the results table beside the
paper's numbers, the lowest-error question, the pairwise ordering verdicts, the curves, and what the
shipped models are made of. Numbers and words only, no Streamlit. (Training live and looking inside
a shipped model: toy_tasks_models.py.)

The paper's numbers live in PAPER_RESULTS, with their source and table, and are always labelled
"paper (full-scale)"; every other number on the page is read from the shipped run's metrics. A
toy split is set beside a paper number only where the paper measured the same thing
(PAPER_COLUMN_OF_SPLIT): the paper has no number for longer Counting programs.

Words (encoding names, split names, column titles) come from the catalogue
explain/text/<lang>/strings/toy_tasks.toml. The functions the page caches take `lang`, so that
their cache key sees the language; without it they speak the current run's language (tests: English).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from encoders.cope import PAPER
from explain import methods
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question
from lab import tasks as T
from lab.shipped import ENCODINGS, TOY_DIR

from . import toy_tasks_seeds as S
from .toy_tasks_seeds import Interval, t_interval

# The source of PAPER_RESULTS, as the page cites it: toy_tasks.paper_source in the catalogue
# (Golovneva, Wang, Weston, Sukhbaatar 2024, arXiv 2405.18719v2, Tables 2 and 3).

# The registered encoding that stands in for each of the paper's rows. T5's bias is our stand-in for
# the paper's "Relative PE" (the paper's counting runs use the RAM code's learned relative
# embeddings, not T5 buckets).
STAND_IN = {"Absolute PE": "learned", "RoPE": "rope", "Relative PE": "t5", "CoPE": "cope"}
PAPER_ROW = {enc: row for row, enc in STAND_IN.items()}  # registry name → the paper's row label

# task → (paper column names, {paper row: values}); values in %, copied from METHODS.md.
PAPER_RESULTS: dict[str, tuple[tuple[str, ...], dict[str, tuple[float, ...]]]] = {
    "flipflop": (
        ("in-dist", "OOD"),
        {"Absolute PE": (6.8, 21.7), "RoPE": (1.8, 20.3), "CoPE": (0.0, 4.9)},
    ),
    "selective_copy": (
        ("in-dist", "OOD dense", "OOD sparse"),
        {"Absolute PE": (16.9, 25.6, 85.2), "RoPE": (40.1, 100.0, 100.0), "CoPE": (0.0, 0.0, 0.0)},
    ),
    "counting": (
        ("1 var", "3 var", "5 var"),
        {"Absolute PE": (5.3, 67.6, 71.5), "Relative PE": (1.1, 17.8, 22.4), "CoPE": (0.0, 1.2, 7.4)},
    ),
}

# Where each task's numbers are in the paper (arXiv 2405.18719v2).
PAPER_TABLE = {"flipflop": 2, "selective_copy": 2, "counting": 3}
# The paper column that measures what a toy split measures. Counting has none for its OOD split: the
# paper's Table 3 gives 1, 3 and 5 variables in distribution only, nothing for longer programs (and
# its in-distribution columns are per number of variables, compared in ordering_verdicts).
PAPER_COLUMN_OF_SPLIT: dict[str, dict[str, str]] = {
    "flipflop": {"id": "in-dist", "ood": "OOD"},
    "selective_copy": {"id": "in-dist", "ood_dense": "OOD dense", "ood_sparse": "OOD sparse"},
    "counting": {},
}

# A paper column's catalogue key (toy_tasks.paper_col.<key>): the column names above are the
# paper's, and stay the ids the code compares.
PAPER_COL_KEY = {
    "in-dist": "in_dist",
    "OOD": "ood",
    "OOD dense": "ood_dense",
    "OOD sparse": "ood_sparse",
    "1 var": "var1",
    "3 var": "var3",
    "5 var": "var5",
}


def parse_encodings(raw: str) -> list[str]:
    """A link's ?toy_encodings=rope,cope → the shipped encodings named, in order; ValueError for
    anything else (an unknown name, a repeat, none)."""
    names = [x.strip() for x in raw.split(",")]
    if not names or len(set(names)) != len(names) or any(x not in ENCODINGS for x in names):
        raise ValueError(raw)
    return names


def dump_encodings(encodings: list[str]) -> str:
    return ",".join(encodings)


def task_label(task: str) -> str:
    """A task's name (Flip-Flop, Selective Copy, Counting: names, the same in every language)."""
    return T.get(task).label


def split_short(split: str, lang: str | None = None) -> str:
    """A split's short name ("ID", "OOD dense") in `lang`."""
    return t(f"toy_tasks.split_short.{split}", lang)


def short_label(name: str, lang: str | None = None) -> str:
    """An encoding's name as the lab's tables and legends show it (the paper's row name beside ours,
    where it differs: the methods catalogue, explain/methods.py)."""
    return methods.row_label(name, lang)


def paper_column(col: str, lang: str | None = None) -> str:
    return t(f"toy_tasks.paper_col.{PAPER_COL_KEY[col]}", lang)


def toy_column(split: str, lang: str | None = None) -> str:
    """The results table's title of the toy run's error column for `split`."""
    return t("toy_tasks.col.toy", lang, split=split_short(split, lang))


# --- shipped results ---------------------------------------------------------------------------


# Cache bounds (pages/labs/toy_tasks.py): the shipped results are a few kilobytes of JSON each.
@bounded(1)
def shipped_index(directory: str = str(TOY_DIR)) -> dict[str, Any]:
    """assets/toy/index.json ({} when nothing has been shipped yet)."""
    p = Path(directory) / "index.json"
    return json.loads(p.read_text()) if p.exists() else {}


def shipped_metrics(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, Any] | None:
    p = Path(directory) / f"{task}-{encoding}.json"
    return json.loads(p.read_text()) if p.exists() else None


@dataclass
class ResultTable:
    columns: list[str]
    rows: list[list[Any]]  # one per encoding: label, then Intervals (toy) and numbers (NaN: none)
    kinds: list[str]  # per column: "label", "toy", "paper", "seconds"


MISSING = t_interval([])  # a toy cell with no shipped run


def toy_intervals(task: str, encoding: str, directory: str = str(TOY_DIR)) -> dict[str, Interval] | None:
    """Column id → mean and 95% interval over the shipped seeds: every split of the task, and for
    Counting the in-distribution error per number of variables ("var1", "var3"). None: not shipped."""
    errs = S.seed_errors(task, encoding, directory)
    if errs is None:
        return None
    answers = S.split_answers(task, encoding, directory)
    strings = S.split_strings(task, encoding, directory)
    out = {split: t_interval(v, answers.get(split, 0), strings=strings.get(split, 0)) for split, v in errs.items()}
    if task == "counting":
        ms = S.seed_metrics(task, encoding, directory)
        for g in ("1", "3"):
            grp = ms[0]["results"]["id"]["by_group"].get(g, {}) if ms else {}
            n = int(grp.get("n", 0))  # one answer per program: answers are strings
            out[f"var{g}"] = t_interval([S.group_error(m, g) for m in ms], n, strings=n)
    return out


@bounded(64)
def results_table(
    task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> ResultTable:
    """Error % per split of the shipped seeds (mean [95% interval]), beside the paper's numbers."""
    splits = list(T.get(task).split_names)
    paper_cols, paper = PAPER_RESULTS[task]
    cols = [t("toy_tasks.col.encoding", lang)] + [toy_column(s, lang) for s in splits]
    kinds = ["label"] + ["toy"] * len(splits)
    toy_keys = list(splits)
    if task == "counting":
        cols += [t("toy_tasks.col.group", lang, k=g) for g in (1, 3)]
        kinds += ["toy", "toy"]
        toy_keys += ["var1", "var3"]
    cols += [t("toy_tasks.col.paper", lang, column=paper_column(c, lang)) for c in paper_cols]
    cols += [t("toy_tasks.col.cpu", lang), t("toy_tasks.col.wall", lang)]
    kinds += ["paper"] * len(paper_cols) + ["seconds", "seconds"]
    rows = []
    for enc in encodings:
        iv = toy_intervals(task, enc, directory)
        row: list[Any] = [short_label(enc, lang)]
        row += [MISSING if iv is None else iv.get(k, MISSING) for k in toy_keys]
        prow = paper.get(PAPER_ROW.get(enc, ""))
        row += list(prow) if prow else [np.nan] * len(paper_cols)
        row += list(S.run_seconds(task, enc, directory))
        rows.append(row)
    return ResultTable(cols, rows, kinds)


TIED = "a tie"  # lowest_error's answer when no encoding is distinguishably lowest


@dataclass
class Lowest:
    split: str
    errors: dict[str, Interval]  # shown label → error % over seeds (encodings with a shipped run only)
    answer: str  # the label whose interval lies below every other's, or TIED


def lowest_of(errors: dict[str, Interval]) -> str:
    """The key with the lowest mean when Welch's t-test over the seeds separates it from every other
    (p < ALPHA against each); TIED when it does not."""
    best = min(errors, key=lambda k: errors[k].mean)
    others = [v for k, v in errors.items() if k != best]
    return best if all(errors[best].differs_from(v) and errors[best].mean < v.mean for v in others) else TIED


def lowest_error(table: ResultTable, split: str, lang: str | None = None) -> Lowest | None:
    """Which encoding of `table` (results_table's, the one the page shows) has the lowest error on
    `split` — only when its interval separates from every other's, else TIED. None when fewer than
    two encodings have a shipped run. `lang`: the language the table was made in."""
    col = table.columns.index(toy_column(split, lang))
    errors = {row[0]: row[col] for row in table.rows if np.isfinite(row[col].mean)}
    if len(errors) < 2:
        return None
    return Lowest(split, errors, lowest_of(errors))


@dataclass
class Curves:
    steps: np.ndarray
    loss: dict[str, np.ndarray]  # label → mean training loss per curve interval
    val_error: dict[str, np.ndarray]  # label → in-distribution validation error %


@bounded(64)
def curves(task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None) -> Curves:
    steps, loss, err = None, {}, {}
    for enc in encodings:
        m = shipped_metrics(task, enc, directory)
        if m is None:
            continue
        c = m["curve"]
        steps = np.array([p["step"] for p in c])
        loss[short_label(enc, lang)] = np.array([p["loss"] for p in c])
        err[short_label(enc, lang)] = np.array([p["val_error"] for p in c])
    return Curves(steps if steps is not None else np.zeros(0), loss, err)


@dataclass
class DistanceErrors:
    bins: list[str]  # "lo–hi" labels, in order
    error: dict[str, np.ndarray]  # label → error % per bin (NaN: no answers at that distance)
    counts: list[int]  # answers per bin (the same test set for every encoding)


@bounded(64)
def distance_errors(
    task: str, encodings: tuple[str, ...], split: str, directory: str = str(TOY_DIR), lang: str | None = None
) -> DistanceErrors:
    """Error % per distance bin of `split`, every shipped seed's answers pooled (the same strings)."""
    labels: list[str] = []
    table: dict[str, dict[str, tuple[int, int]]] = {}
    seeds: dict[str, int] = {}
    for enc in encodings:
        ms = S.seed_metrics(task, enc, directory)
        if not ms:
            continue
        per: dict[str, tuple[int, int]] = {}
        for m in ms:
            for b in m["results"][split]["by_distance"]:
                lab = f"{b['lo']}–{b['hi'] - 1}"
                e, n = per.get(lab, (0, 0))
                per[lab] = (e + b["errors"], n + b["n"])
                if lab not in labels:
                    labels.append(lab)
        table[short_label(enc, lang)] = per
        seeds[short_label(enc, lang)] = len(ms)
    labels.sort(key=lambda s: int(s.split("–")[0]))
    err = {
        name: np.array([100.0 * per[b][0] / per[b][1] if b in per and per[b][1] else np.nan for b in labels])
        for name, per in table.items()
    }
    counts = [int(next((per[b][1] // seeds[n] for n, per in table.items() if b in per), 0)) for b in labels]
    return DistanceErrors(labels, err, counts)


@dataclass
class Verdict:
    column: str  # the paper's column, e.g. "OOD" (an id: paper_column() words it)
    paper: dict[str, float]  # our encoding label → the paper's number for its row
    toy: dict[str, Interval]  # the same encodings → this toy run's seeds (mean, 95% interval)
    agree: int  # pairs ordered as in the paper, Welch's test separating them (p < ALPHA)
    disagree: int  # pairs ordered the other way, Welch's test separating them
    ties: int  # pairs the paper separates that Welch's test does not separate here

    @property
    def same(self) -> bool:
        return self.disagree == 0

    @property
    def outcome(self) -> str:
        """ "different", "same" (every pair agrees), "partly" (agrees where distinguishable) or
        "indistinct" (no pair the paper separates is distinguishable here)."""
        if self.disagree:
            return "different"
        if self.agree and not self.ties:
            return "same"
        return "partly" if self.agree else "indistinct"


def _toy_column(task: str, col: str, iv: dict[str, Interval]) -> Interval:
    if task == "counting":
        return iv.get(f"var{col.split()[0]}", MISSING)
    split = {"in-dist": "id", "OOD": "ood", "OOD dense": "ood_dense", "OOD sparse": "ood_sparse"}[col]
    return iv.get(split, MISSING)


def ordering_verdicts(task: str, directory: str = str(TOY_DIR), lang: str | None = None) -> list[Verdict]:
    """For each paper column that this toy run also measures: does the run order the encodings
    the paper reports (learned, RoPE or the T5 stand-in, CoPE) as the paper does? Pairwise, and a
    pair counts only when Welch's t-test over the seeds separates it (p < ALPHA)."""
    cols, paper = PAPER_RESULTS[task]
    out = []
    for ci, col in enumerate(cols):
        if task == "counting" and col == "5 var":
            continue  # the toy run trains on 1–3 variables
        p: dict[str, float] = {}
        toy: dict[str, Interval] = {}
        for enc, row in PAPER_ROW.items():
            iv = toy_intervals(task, enc, directory)
            if row in paper and iv is not None:
                v = _toy_column(task, col, iv)
                if np.isfinite(v.mean):
                    p[short_label(enc, lang)], toy[short_label(enc, lang)] = paper[row][ci], v
        if p:
            out.append(compare_orderings(col, p, toy))
    return out


def compare_orderings(column: str, paper: dict[str, float], toy: dict[str, Interval]) -> Verdict:
    """The paper's numbers against the seeds measured here, pair by pair (same keys in both): a
    pair counts as agreeing or disagreeing only when Welch's t-test over the seeds gives p < ALPHA."""
    names = list(paper)
    agree = disagree = ties = 0
    for a in range(len(names)):
        for b in range(a + 1, len(names)):
            x, y = names[a], names[b]
            if paper[x] == paper[y]:
                continue
            lo, hi = (x, y) if paper[x] < paper[y] else (y, x)
            if not toy[lo].differs_from(toy[hi]):
                ties += 1
            elif toy[lo].mean < toy[hi].mean:
                agree += 1
            else:
                disagree += 1
    return Verdict(column, paper, toy, agree, disagree, ties)


# --- what the page shows of them -----------------------------------------------------------------


def table_columns(tab: ResultTable, lang: str | None = None) -> dict[str, list[str]]:
    """The results table as the page shows it: column title → its cells as text. A toy cell reads
    "mean [low, high]" (95% interval over seeds); a missing number reads "—" (no shipped run) or
    "not in paper", never "None"; numbers have one decimal."""
    blank = {"toy": "—", "paper": t("toy_tasks.not_in_paper", lang), "seconds": "—"}
    out: dict[str, list[str]] = {c: [] for c in tab.columns}
    for row in tab.rows:
        for value, kind, column in zip(row, tab.kinds, tab.columns, strict=True):
            if kind == "label":
                out[column].append(value)
            elif kind == "toy":
                out[column].append(blank[kind] if not np.isfinite(value.mean) else value.text())
            else:
                out[column].append(blank[kind] if np.isnan(value) else f"{value:.1f}")
    return out


@bounded(128)
def lowest_question(
    task: str, encodings: tuple[str, ...], directory: str = str(TOY_DIR), lang: str | None = None
) -> Question | None:
    """Which of the chosen encodings has the lowest error on the task's first OOD split in the shipped
    run, compared at the table's one-decimal precision (TIED when several share it)? None when fewer
    than two of them have a shipped run. The explanation states every error it compares, and the
    paper's number for the same split only where the paper has one (PAPER_COLUMN_OF_SPLIT)."""
    split = T.get(task).split_names[1]
    errors: dict[str, Interval] = {}
    for enc in encodings:
        iv = toy_intervals(task, enc, directory)
        if iv is not None:
            errors[enc] = iv[split]
    if len(errors) < 2:
        return None
    answer = lowest_of(errors)
    cols, paper = PAPER_RESULTS[task]
    column = PAPER_COLUMN_OF_SPLIT[task].get(split)
    facts: dict[str, Any] = {
        "task": task,
        "split": split,
        "errors": {k: v.mean for k, v in errors.items()},
        "intervals": {k: (v.lo, v.hi) for k, v in errors.items()},
        "answer": answer,
        "paper_table": PAPER_TABLE[task],
        "paper_column": column,
    }
    answer_words = t("toy_tasks.a_tie_answer", lang) if answer == TIED else short_label(answer, lang)
    ordered = sorted(errors.items(), key=lambda kv: kv[1].mean)
    best, rival, p = S.closest_rival(errors)
    facts["welch"] = {"best": best, "rival": rival, "p": p}
    text = t(
        "toy_tasks.q_lowest_why_tie" if answer == TIED else "toy_tasks.q_lowest_why",
        lang,
        answer=answer_words,
        errors=", ".join(f"{short_label(k, lang)} {v.text()}%" for k, v in ordered),
        seeds=len(ordered[0][1].values),
        best=short_label(best, lang),
        rival=short_label(rival, lang),
        p=p,
    )
    if column is None:
        scope = t(f"toy_tasks.paper_scope.{task}", lang)
        text += " " + t(
            "toy_tasks.q_lowest_no_paper", lang, table=PAPER_TABLE[task], task=task_label(task), scope=scope
        )
    else:
        values = {row: vals[cols.index(column)] for row, vals in paper.items()}
        low = min(values.values())
        best_rows = [row for row, v in values.items() if v == low]
        facts["paper_best"] = tuple(STAND_IN[row] for row in best_rows)
        facts["paper_value"] = low
        text += " " + t(
            "toy_tasks.q_lowest_paper",
            lang,
            table=PAPER_TABLE[task],
            column=paper_column(column, lang),
            best=t("toy_tasks.and", lang).join(short_label(STAND_IN[row], lang) for row in best_rows),
            value=low,
        )
    options = (*errors, TIED)
    return Question(
        key="toy_q",
        prompt=t("toy_tasks.q_lowest", lang, task=task_label(task), n=len(errors), split=split_short(split, lang)),
        options=options,
        labels=tuple(t("toy_tasks.a_tie", lang) if o == TIED else short_label(o, lang) for o in options),
        answer=answer,
        explanation=text,
        facts=facts,
    )


@bounded(8)
def verdict_lines(task: str, directory: str = str(TOY_DIR), lang: str | None = None) -> tuple[str, ...]:
    """One Markdown line per paper column this toy run also measures, computed from the intervals:
    the same ordering as the paper, a different one (how many pairs reversed), the same where the
    intervals separate, or not distinguishable at this scale; with both orderings written out."""
    return tuple(verdict_line(v, lang) for v in ordering_verdicts(task, directory, lang))


def verdict_line(v: Verdict, lang: str | None = None) -> str:
    """A Verdict as the page's Markdown line (paper column, outcome, both orderings)."""

    def order(d: dict[str, float]) -> str:
        return " < ".join(f"{k} {d[k]:.1f}" for k in sorted(d, key=lambda x: d[x]))

    def toy_order(d: dict[str, Interval]) -> str:
        return " < ".join(f"{k} {d[k].text()}" for k in sorted(d, key=lambda x: d[x].mean))

    column = paper_column(v.column, lang)
    if v.agree + v.disagree + v.ties == 0:
        return t("toy_tasks.verdict_single", lang, column=column)
    outcome = v.outcome
    word = t(f"toy_tasks.verdict_{outcome}", lang, n=v.disagree)
    ties = t("toy_tasks.verdict_ties", lang, n=v.ties) if v.ties and outcome in ("different", "partly") else ""
    return t("toy_tasks.verdict", lang, column=column, word=word, ties=ties, paper=order(v.paper), toy=toy_order(v.toy))


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="toy-lab",
    part="Labs",
    page="pages/labs/toy_tasks.py",
    icon=":material/model_training:",
    order=160,
    papers=(PAPER,),
    sources=("lab.tasks:flipflop_sample", "lab.model:TinyTransformer.forward", "lab.train:answer_loss"),
    link={
        "toy_task": "counting",
        "toy_encodings": "learned,rope,cope",
        "toy_dist_split": "ood",
        "toy_inspect_enc": "alibi",
    },
    link_shows={
        "toy_task": "counting",
        "toy_encodings": ["learned", "rope", "cope"],
        "toy_dist_split": "ood",
        "toy_inspect_enc": "alibi",
    },
)
