"""What the "Trained on real text" lab shows of the shipped language models (assets/lm/index.json):
what was trained, bits per byte against evaluation length with intervals, the papers beside it,
the training curves and the predict-then-reveal question. Numbers and words only, no Streamlit.

Every sentence that states a number or a verdict is computed here from index.json (the statistics
are in real_text_stats.py), so it stays true when the models are regenerated. A verdict ("gets
better", "gets worse") is stated only where a paired 95% interval excludes 0; otherwise "not
distinguishable". The intervals measure the evaluation's sampling noise over held-out windows, not
seed-to-seed variation: there is one trained model (one seed) per encoding, and the page says so.

Words (encoding names, column titles, sentences) come from explain/text/<lang>/strings/real_text.toml.
Functions the page caches take `directory` (a string: part of the cache key) and `lang`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from explain import methods
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question
from lab.lm import EVAL_LENGTHS, LM_DIR
from lab.lm import MAX_TEXT_BYTES as MAX_TEXT_BYTES  # re-exported: the page's notes
from lab.lm import TRAIN_LEN as TRAIN_LEN  # re-exported: the page's marks and titles

from .real_text_stats import Estimate, lowest_at, paired_change, paired_change_gap, point

DIR = str(LM_DIR)

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


def load_index(directory: str = DIR) -> dict[str, Any]:
    """assets/lm/index.json ({} when the models have not been evaluated)."""
    p = Path(directory) / "index.json"
    return json.loads(p.read_text()) if p.exists() else {}


def enc_label(name: str, lang: str | None = None) -> str:
    """An encoding's (or a RoPE stretch's) short name, as the lab's tables and legends show it."""
    return methods.short(name, lang)


def trained(index: dict[str, Any]) -> tuple[str, ...]:
    """The trained encodings, in the order index.json lists them (lab.lm.ENCODINGS)."""
    return tuple(index.get("models", {}))


def stretches(index: dict[str, Any]) -> tuple[str, ...]:
    """RoPE's context-extension schemes applied at inference (lab.lm.STRETCHES), as evaluated."""
    return tuple(k for k in index.get("stretches", {}) if k != "of")


def lengths(index: dict[str, Any]) -> tuple[int, ...]:
    return tuple(int(n) for n in index.get("eval_lengths", EVAL_LENGTHS))


def verdict(e: Estimate, lang: str | None = None) -> str:
    """A change's verdict: only where its interval excludes 0."""
    return t(f"real_text.verdict.{ {1: 'worse', -1: 'better', 0: 'same'}[e.sign] }", lang)


# --- 1. what was trained ------------------------------------------------------------------------


@dataclass(frozen=True)
class Setup:
    facts: dict[str, list[str]]  # a two-column table: what, value
    models: dict[str, list[str]]  # one row per trained model
    total_cpu_minutes: float


# Cache bounds (pages/labs/real_text.py): each result is a few kilobytes read off index.json.
@bounded(4)
def setup(directory: str = DIR, lang: str | None = None) -> Setup | None:
    idx = load_index(directory)
    if not idx:
        return None
    s, corpus = idx["settings"], idx["corpus"]
    tokens = int(s["steps"]) * int(s["batch_size"]) * int(s["length"])
    rows: list[tuple[str, str]] = [
        ("corpus", t("real_text.setup.corpus_value", lang, python=corpus.get("python", "?"))),
        (
            "train",
            t(
                "real_text.setup.split_value",
                lang,
                files=corpus["train"]["files"],
                docs=corpus["train"]["docstrings"],
                bytes=corpus["train"]["bytes"],
            ),
        ),
        (
            "heldout",
            t(
                "real_text.setup.split_value",
                lang,
                files=corpus["heldout"]["files"],
                docs=corpus["heldout"]["docstrings"],
                bytes=corpus["heldout"]["bytes"],
            ),
        ),
        ("sha_train", corpus["train"]["sha256"][:16] + "…"),
        ("sha_heldout", corpus["heldout"]["sha256"][:16] + "…"),
        (
            "model",
            t(
                "real_text.setup.model_value",
                lang,
                layers=s["n_layers"],
                d=s["d_model"],
                heads=s["n_heads"],
                vocab=256,
            ),
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
                seed=s["seed"],
            ),
        ),
        ("tokens", t("real_text.setup.tokens_value", lang, tokens=tokens)),
        (
            "evaluation",
            t("real_text.setup.eval_value", lang, bytes=idx.get("eval_bytes", 0), torch=idx.get("torch", "?")),
        ),
    ]
    facts = {
        t("real_text.setup.col_what", lang): [t(f"real_text.setup.row.{k}", lang) for k, _ in rows],
        t("real_text.setup.col_value", lang): [v for _, v in rows],
    }
    names = trained(idx)
    m = idx["models"]
    models = {
        t("real_text.setup.col_encoding", lang): [enc_label(n, lang) for n in names],
        t("real_text.setup.col_parameters", lang): [f"{int(m[n]['parameters']):,}" for n in names],
        t("real_text.setup.col_cpu", lang): [f"{float(m[n]['train_cpu_seconds']):.0f}" for n in names],
        t("real_text.setup.col_final", lang): [
            f"{m[n]['curve'][-1]['heldout_bpb']:.3f}" if m[n]["curve"] else "–" for n in names
        ],
    }
    total = sum(float(m[n]["train_cpu_seconds"]) for n in names) / 60.0
    return Setup(facts, models, total)


# --- 2. bits per byte against evaluation length -----------------------------------------------


@dataclass(frozen=True)
class LengthLine:
    name: str  # registry name (an encoding or a RoPE stretch)
    label: str
    mean: list[float]  # one per evaluation length; NaN: no value
    lo: list[float]
    hi: list[float]
    n: list[int]  # windows behind each point
    family: int  # colour index: a stretch shares the colour of the model it stretches
    stretched: bool  # applied at inference to another model's weights (drawn dashed)


@dataclass(frozen=True)
class LengthCurves:
    lengths: list[int]
    lines: list[LengthLine]
    missing: list[str]  # labels of the lines with no value past some length (learned)
    eval_bytes: int  # held-out bytes every length reads
    sentences: list[str] = field(default_factory=list)

    def windows_at(self, length: int) -> int:
        """How many windows stand behind a point at `length` (the most any line has)."""
        k = self.lengths.index(length)
        return max(ln.n[k] for ln in self.lines)


def _line(idx: dict[str, Any], name: str, label: str, family: int, stretched: bool) -> LengthLine:
    ests = [point(idx, name, n) for n in lengths(idx)]
    nan = math.nan
    return LengthLine(
        name,
        label,
        [e.mean if e else nan for e in ests],
        [e.lo if e else nan for e in ests],
        [e.hi if e else nan for e in ests],
        [e.n if e else 0 for e in ests],
        family,
        stretched,
    )


@bounded(8)
def length_curves(directory: str = DIR, lang: str | None = None, with_stretches: bool = True) -> LengthCurves | None:
    idx = load_index(directory)
    if not idx:
        return None
    names = trained(idx)
    of = idx.get("stretches", {}).get("of")
    lines = [_line(idx, n, enc_label(n, lang), k, False) for k, n in enumerate(names)]
    if with_stretches:
        family = names.index(of) if of in names else len(names)
        lines += [_line(idx, s, enc_label(s, lang), family, True) for s in stretches(idx)]
    missing = [ln.label for ln in lines if any(not math.isfinite(v) for v in ln.mean)]
    return LengthCurves(
        list(lengths(idx)),
        lines,
        missing,
        int(idx.get("eval_bytes", 0)),
        change_sentences(directory, lang, with_stretches),
    )


def change_sentences(directory: str = DIR, lang: str | None = None, with_stretches: bool = True) -> list[str]:
    """Per line: the paired change from 1× to 8× with its verdict; then which line is lowest at 8×."""
    idx = load_index(directory)
    if not idx:
        return []
    ls = lengths(idx)
    base, top = ls[0], ls[-1]
    names = trained(idx) + (stretches(idx) if with_stretches else ())
    out = []
    for n in names:
        c = paired_change(idx, n, top, base)
        if c is None:
            out.append(t("real_text.change.none", lang, name=enc_label(n, lang), base=base, top=top))
            continue
        a, b = point(idx, n, base), point(idx, n, top)
        assert a is not None and b is not None
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
                n=c.n,
                verdict=verdict(c, lang),
            )
        )
    low = lowest_at(idx, top, names)
    if low is not None:
        best, ties = low
        p = point(idx, best, top)
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


# --- 3. beside the papers -----------------------------------------------------------------------


@dataclass(frozen=True)
class TrainingCurves:
    steps: list[int]
    train: dict[str, list[float]]  # label → bits per byte at each step (mean over the last curve_every steps)
    heldout: dict[str, list[float]]  # label → held-out bits per byte at each step
    heldout_windows: int
    every: int  # training steps behind each point of the training curve


@bounded(4)
def training_curves(directory: str = DIR, lang: str | None = None) -> TrainingCurves | None:
    idx = load_index(directory)
    if not idx:
        return None
    names = trained(idx)
    m = idx["models"]
    steps = [int(p["step"]) for p in m[names[0]]["curve"]]
    nan = math.nan
    train, held = {}, {}
    for n in names:
        by_step = {int(p["step"]): p for p in m[n]["curve"]}
        train[enc_label(n, lang)] = [float(by_step[s]["train_bpb"]) if s in by_step else nan for s in steps]
        held[enc_label(n, lang)] = [float(by_step[s]["heldout_bpb"]) if s in by_step else nan for s in steps]
    s = idx["settings"]
    return TrainingCurves(steps, train, held, int(s.get("val_windows", 0)), int(s.get("curve_every", 0)))


# --- 6. the question ----------------------------------------------------------------------------


@bounded(4)
def rise_question(directory: str = DIR, lang: str | None = None) -> Question | None:
    """Whose bits per byte goes up most (or down least) from the training length to 8×? Options:
    every trained encoding with a value at both lengths; the answer and every fact the explanation
    states come from the paired changes the page's sentences report."""
    idx = load_index(directory)
    if not idx:
        return None
    ls = lengths(idx)
    base, top = ls[0], ls[-1]
    changes = {n: c for n in trained(idx) if (c := paired_change(idx, n, top, base)) is not None}
    if len(changes) < 2:
        return None
    order = sorted(changes, key=lambda n: -changes[n].mean)
    first, second = order[0], order[1]
    gap = paired_change_gap(idx, first, second, top, base)
    facts: dict[str, object] = {
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
    sources=("lab.corpus:build", "lab.lm:train_lm", "lab.lm:window_bits", "lab.lm:read_text"),
    link={"real_text_stretches": "false", "real_text_model": "rope", "real_text_stretch": "rope-yarn"},
    link_shows={"real_text_stretches": False, "real_text_model": "rope", "real_text_stretch": "rope-yarn"},
)
