"""What the "Trained on real text" lab shows of the language-model study (assets/lm/study/, written by
`python -m lab.regenerate lm_study`): what was trained, bits per byte against evaluation length with
intervals over seeds, the training curves and the predict-then-reveal question. Numbers and words
only, no Streamlit. The same-bytes test, the anchors, T5's far bucket, PI's fine-tune and the papers
are in real_text_evidence.py; the statistics in real_text_study.py.

Every sentence that states a number or a verdict is computed here from the study's files, so it stays
true when the models are regenerated. A verdict ("gets better", "gets worse") is stated only where the
95% interval over seeds excludes 0; otherwise "not distinguishable".

The models a learner's own text runs through (the last section) are the first shipped set
(assets/lm/*.safetensors: one seed, no beginning-of-text byte); the page says so.

Words (encoding names, column titles, sentences) come from explain/text/<lang>/strings/real_text.toml.
Functions the page caches take `directory` (a string: part of the cache key) and `lang`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question
from lab.lm import LM_DIR
from lab.lm import MAX_TEXT_BYTES as MAX_TEXT_BYTES  # re-exported: the page's notes
from lab.lm import TRAIN_LEN as TRAIN_LEN  # re-exported: the page's marks and titles

from . import real_text_study as S
from .real_text_study import STUDY, Estimate, Study

DIR = str(LM_DIR)  # the first shipped set (the models on a learner's text)

# The CoPE paper's Figure 3 (Wikitext-103, validation perplexity against evaluation context T′,
# trained at T = 1024), approximate values read from the plot, copied from METHODS.md. Rows are
# keyed by the paper's method names; their words are in the catalogue (real_text.paper.row.<name>).
COPE_FIG3_LENGTHS = (1024, 1536, 2048, 2560)  # T′; 1536 is "~1536" in METHODS (read off the axis)
COPE_FIG3 = {
    "Relative": (22.9, 22.6, 23.2, 24.15),
    "Relative-capped": (22.9, 22.3, 22.1, 21.95),
    "CoPE": (22.55, 21.95, 21.7, 21.55),
}
# The trained model that stands in for each method a paper sentence is about, keyed by the papers'
# names (ALiBi's abstract compares ALiBi with sinusoidal; CoPE's Fig. 3 is about CoPE).
STAND_IN = {"ALiBi": "alibi", "Sinusoidal": "sinusoidal", "CoPE": "cope"}
COPE_FIG3_TRAIN = 1024
# Parameters of the CoPE paper's Wikitext-103 models (Table 4, millions) and of ALiBi's headline model
# (abstract, billions): the scale sentence quotes them.
COPE_TABLE4_PARAMS_M = (123.7, 124.4)
ALIBI_HEADLINE_PARAMS_B = 1.3
TAIL_STEPS = 1000  # the training curves' last stretch: is a model still learning when training stops?


def first_set_steps(directory: str = DIR) -> int:
    """Training steps of the first shipped set (the models a learner's text runs through; 0 if absent)."""
    p = Path(directory) / "index.json"
    return int(json.loads(p.read_text())["settings"]["steps"]) if p.exists() else 0


def enc_label(name: str, lang: str | None = None) -> str:
    """An encoding's (or a RoPE stretch's, or a fine-tune's) short name, as tables and legends show it."""
    return S.label(name, lang)


def verdict(e: Estimate, lang: str | None = None) -> str:
    """A change's verdict: only where its interval excludes 0."""
    return t(f"real_text.verdict.{ {1: 'worse', -1: 'better', 0: 'same'}[e.sign] }", lang)


def seeds_text(e: Estimate | int, lang: str | None = None) -> str:
    """“3 seeds” / “1 seed” — how many runs stand behind a number (an estimate's, or a count)."""
    n = e if isinstance(e, int) else e.n
    return t("real_text.seeds_one" if n == 1 else "real_text.seeds_many", lang, n=n)


# --- 1. what was trained ------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    facts: dict[str, list[str]]  # a two-column table: what, value
    models: dict[str, list[str]]  # one row per trained kind
    cpu_hours: float
    runs: int
    missing: list[str]  # planned runs not finished (the command resumes them), as the page names them


@bounded(4)
def setup(directory: str = STUDY, lang: str | None = None) -> Setup | None:
    st = S.load(directory)
    if st is None:
        return None
    s, corpus = st.settings(), st.corpus
    tokens = int(s["steps"]) * int(s["batch_size"]) * int(s["length"])
    rows: list[tuple[str, str]] = []
    if corpus:
        rows.append(("corpus", t("real_text.setup.corpus_value", lang, python=corpus.get("python", "?"))))
        for split in ("train", "heldout"):
            c = corpus[split]
            rows.append(
                (
                    split,
                    t("real_text.setup.split_value", lang, files=c["files"], docs=c["docstrings"], bytes=c["bytes"]),
                )
            )
        rows += [
            ("sha_train", corpus["train"]["sha256"][:16] + "…"),
            ("sha_heldout", corpus["heldout"]["sha256"][:16] + "…"),
        ]
    rows += [
        (
            "model",
            t("real_text.setup.model_value", lang, layers=s["n_layers"], d=s["d_model"], heads=s["n_heads"], vocab=256),
        ),
        (
            "training",
            t(
                "real_text.setup.training_value",
                lang,
                steps=s["steps"],
                batch=s["batch_size"],
                length=s["length"],
                lr=s["lr"],
                warmup=s["warmup"],
                seeds=", ".join(str(x) for x in st.all_seeds()),
            ),
        ),
        ("bos", t("real_text.setup.bos_value", lang, byte=f"0x{int(s['bos']):02X}")),
        ("tokens", t("real_text.setup.tokens_value", lang, tokens=tokens)),
        ("evaluation", t("real_text.setup.eval_value", lang, bytes=_eval_bytes(st), block=S.BLOCK)),
    ]
    if st.finetunes:
        f = st.settings(st.finetunes[0])
        rows.append(
            (
                "finetune",
                t(
                    "real_text.setup.finetune_value",
                    lang,
                    steps=f["steps"],
                    batch=f["batch_size"],
                    length=f["length"],
                    lr=f["lr"],
                ),
            )
        )
    facts = {
        t("real_text.setup.col_what", lang): [t(f"real_text.setup.row.{k}", lang) for k, _ in rows],
        t("real_text.setup.col_value", lang): [v for _, v in rows],
    }
    kinds = [*st.encodings, *st.finetunes]
    final = {k: S.curve(st, k) for k in kinds}
    models = {
        t("real_text.setup.col_encoding", lang): [enc_label(k, lang) for k in kinds],
        t("real_text.setup.col_parameters", lang): [f"{_parameters(st, k):,}" for k in kinds],
        t("real_text.setup.col_seeds", lang): [", ".join(str(x) for x in st.seeds(k)) for k in kinds],
        t("real_text.setup.col_cpu", lang): [f"{_cpu_minutes(st, k):.1f}" for k in kinds],
        t("real_text.setup.col_final", lang): [
            f"{c.heldout[-1]:.3f}" if c and c.heldout else "–" for c in final.values()
        ],
    }
    tot = S.totals(st)
    missing = [t("real_text.missing_run", lang, name=enc_label(k, lang), seed=seed) for k, seed in tot.missing]
    return Setup(facts, models, tot.cpu_hours, tot.runs, missing)


def _eval_bytes(st: Study) -> int:
    run = next(iter(st.runs[st.encodings[0]].values()))
    return len(run.ev["capped"]) * S.BLOCK


def _parameters(st: Study, kind: str) -> int:
    return int(next(iter(st.runs[kind].values())).meta["parameters"])


def _cpu_minutes(st: Study, kind: str) -> float:
    """Training CPU minutes of one run, mean over its seeds (one thread of this machine)."""
    runs = st.runs[kind].values()
    return sum(float(r.meta["train_cpu_seconds"]) for r in runs) / len(runs) / 60.0


# --- 2. bits per byte against evaluation length -----------------------------------------------


@dataclass(frozen=True)
class LengthLine:
    name: str  # a run kind: an encoding, a RoPE stretch or a fine-tune
    label: str
    mean: list[float]  # one per evaluation length, mean over seeds; NaN: no value
    lo: list[float]  # 95% interval over seeds (NaN with one seed)
    hi: list[float]
    n: list[int]  # seeds behind each point
    family: int  # colour index: a stretch or a fine-tune shares the colour of the model it starts from
    stretched: bool  # derived from another run's weights (a stretch or a fine-tune: drawn dashed)


@dataclass(frozen=True)
class LengthCurves:
    lengths: list[int]
    lines: list[LengthLine]
    missing: list[str]  # labels of the lines with no value past some length (learned)
    eval_bytes: int  # held-out bytes every length reads
    sentences: list[str]

    def seeds(self) -> int:
        return max((max(ln.n) for ln in self.lines), default=0)


def _line(st: Study, kind: str, label: str, family: int, stretched: bool) -> LengthLine:
    ests = [S.over(st, kind, S.at(n)) for n in st.lengths]
    nan = math.nan
    return LengthLine(
        kind,
        label,
        [e.mean if e else nan for e in ests],
        [e.lo if e else nan for e in ests],
        [e.hi if e else nan for e in ests],
        [e.n if e else 0 for e in ests],
        family,
        stretched,
    )


def kinds(st: Study, with_stretches: bool) -> list[str]:
    """What the length chart draws: every trained encoding, then (if asked) RoPE's stretches and
    fine-tunes."""
    return [*st.encodings, *((*st.stretches, *st.finetunes) if with_stretches else ())]


@bounded(8)
def length_curves(directory: str = STUDY, lang: str | None = None, with_stretches: bool = True) -> LengthCurves | None:
    st = S.load(directory)
    if st is None:
        return None
    lines = [_line(st, n, enc_label(n, lang), k, False) for k, n in enumerate(st.encodings)]
    if with_stretches:
        of = st.stretched
        family = st.encodings.index(of) if of in st.encodings else len(st.encodings)
        lines += [_line(st, s, enc_label(s, lang), family, True) for s in (*st.stretches, *st.finetunes)]
    missing = [ln.label for ln in lines if any(not math.isfinite(v) for v in ln.mean)]
    return LengthCurves(list(st.lengths), lines, missing, _eval_bytes(st), change_sentences(st, lang, with_stretches))


def change_sentences(st: Study, lang: str | None = None, with_stretches: bool = True) -> list[str]:
    """Per line: the change from 1× to the top length over seeds, with its verdict; then which line is
    lowest at the top length."""
    base, top = st.train_len, st.top
    names = kinds(st, with_stretches)
    out = []
    for n in names:
        c = S.over(st, n, S.change_at(top))
        a, b = S.over(st, n, S.at(base)), S.over(st, n, S.at(top))
        if c is None or a is None or b is None:
            out.append(t("real_text.change.none", lang, name=enc_label(n, lang), base=base, top=top))
            continue
        out.append(
            t(
                "real_text.change.line",
                lang,
                name=enc_label(n, lang),
                base=base,
                top=top,
                a=f"{a.mean:.3f}",
                b=f"{b.mean:.3f}",
                change=c.signed_text(),
                seeds=seeds_text(c, lang),
                verdict=verdict(c, lang),
            )
        )
    low = S.lowest(st, names, S.at(top))
    if low is not None:
        best, ties = low
        p = S.over(st, best, S.at(top))
        assert p is not None
        if ties:
            out.append(
                t(
                    "real_text.lowest.tied",
                    lang,
                    top=top,
                    name=enc_label(best, lang),
                    value=p.text(),
                    others=", ".join(enc_label(x, lang) for x in ties),
                )
            )
        else:
            out.append(t("real_text.lowest.clear", lang, top=top, name=enc_label(best, lang), value=p.text()))
    return out


# --- 3. training curves -------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingCurves:
    steps: list[int]
    train: dict[str, list[float]]  # label → mean over seeds of the training bits per byte at each step
    heldout: dict[str, list[float]]  # label → held-out bits per byte at each step, mean over seeds
    heldout_windows: int
    every: int  # training steps behind each point of the training curve
    sentences: list[str]  # which models were still learning at the end, computed


@bounded(4)
def training_curves(directory: str = STUDY, lang: str | None = None) -> TrainingCurves | None:
    st = S.load(directory)
    if st is None:
        return None
    curves = {k: c for k in st.encodings if (c := S.curve(st, k, TAIL_STEPS)) is not None}
    if not curves:
        return None
    steps = next(iter(curves.values())).steps
    train = {enc_label(k, lang): c.train for k, c in curves.items() if c.steps == steps}
    held = {enc_label(k, lang): c.heldout for k, c in curves.items() if c.steps == steps}
    falling = [k for k, c in curves.items() if c.tail_change is not None and c.tail_change.sign < 0]
    flat = [k for k, c in curves.items() if c.tail_change is not None and c.tail_change.sign >= 0]
    parts = []
    if falling:
        parts.append(
            t(
                "real_text.curves.falling",
                lang,
                tail=TAIL_STEPS,
                names="; ".join(f"{enc_label(k, lang)} {curves[k].tail_change.signed_text()}" for k in falling),  # type: ignore[union-attr]
            )
        )
    if flat:
        parts.append(
            t(
                "real_text.curves.flat",
                lang,
                tail=TAIL_STEPS,
                names="; ".join(f"{enc_label(k, lang)} {curves[k].tail_change.signed_text()}" for k in flat),  # type: ignore[union-attr]
            )
        )
    s = st.settings()
    return TrainingCurves(steps, train, held, int(s.get("val_windows", 0)), int(s.get("curve_every", 0)), parts)


# --- 4. the question ----------------------------------------------------------------------------


@bounded(4)
def rise_question(directory: str = STUDY, lang: str | None = None) -> Question | None:
    """Whose bits per byte goes up most (or down least) from the training length to 8×, in
    non-overlapping windows? Options: every trained encoding with a value at both lengths; the answer
    and every fact the explanation states come from the changes the page's sentences report."""
    st = S.load(directory)
    if st is None:
        return None
    base, top = st.train_len, st.top
    f = S.change_at(top)
    changes = {n: c for n in st.encodings if (c := S.over(st, n, f)) is not None}
    if len(changes) < 2:
        return None
    order = sorted(changes, key=lambda n: -changes[n].mean)
    first, second = order[0], order[1]
    gap = S.paired(st, first, second, f)
    facts: dict[str, Any] = {
        "base": base,
        "top": top,
        "name": enc_label(first, lang),
        "change": changes[first].signed_text(),
        "second": enc_label(second, lang),
        "second_change": changes[second].signed_text(),
        "gap": gap.signed_text() if gap is not None else "–",
        "separated": bool(gap is not None and gap.sign > 0),
        "least": enc_label(order[-1], lang),
        "least_change": changes[order[-1]].signed_text(),
        "seeds": seeds_text(changes[first], lang),
    }
    key = "real_text.question.answer_" + ("clear" if facts["separated"] else "close")
    options = tuple(changes)
    return Question(
        key="real_text_q",
        prompt=t("real_text.question.prompt", lang, base=base, top=top),
        options=options,
        labels=tuple(enc_label(n, lang) for n in options),
        answer=first,
        explanation=t(key, lang, **facts),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="real-text",
    part="Labs",
    page="pages/labs/real_text.py",
    icon=":material/menu_book:",
    order=170,
    sources=("lab.lm:train_lm", "lab.lm_study:long_bits", "lab.lm_study:capped_bits", "lab.lm:read_text"),
    link={"real_text_stretches": "false", "real_text_model": "rope", "real_text_stretch": "rope-yarn"},
    link_shows={"real_text_stretches": False, "real_text_model": "rope", "real_text_stretch": "rope-yarn"},
)
