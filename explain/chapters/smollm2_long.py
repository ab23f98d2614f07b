"""SmolLM2 past its trained context: the loss curves `python -m lab.regenerate smollm2_long` ships
(assets/smollm2/long_context.json, lab/smollm2_long.py), and every sentence the section states about them.

Axis legend: W windows (only those every scheme finished), B position bins, S schemes.

Statistics, sized to what was run (one model, W windows of one text): every interval is the 95%
Student-t interval over the windows (df = W − 1) of a per-window quantity; a comparison between two
schemes is paired (the same windows, the same tokens), so the interval is that of the per-window
difference. A sentence states a verdict ("rises", "lowest", "clearly") only when its interval excludes
zero; otherwise it says the windows cannot tell.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import plotly.graph_objects as go

from explain import figures as F
from explain import methods
from explain.bounds import bounded
from explain.figures.theme import SYMBOLS, make_figure
from explain.i18n import t
from lab import smollm2_long as run

RESULT_FILE = run.RESULT_FILE
REF_SPAN = 2048  # the in-context reference: plain RoPE's loss over the last REF_SPAN positions before the context ends


@dataclass(frozen=True)
class Interval:
    mean: float
    lo: float  # NaN with one window
    hi: float

    @property
    def above_zero(self) -> bool:
        return self.lo > 0

    @property
    def below_zero(self) -> bool:
        return self.hi < 0


def t_interval(values: np.ndarray) -> Interval:
    """Mean of per-window values and its 95% Student-t interval (df = W − 1)."""
    v = np.asarray(values, dtype=float)
    mean = float(v.mean())
    if v.size < 2:
        return Interval(mean, math.nan, math.nan)
    from scipy import stats

    half = float(stats.t.ppf(0.975, v.size - 1)) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return Interval(mean, mean - half, mean + half)


@dataclass(frozen=True)
class LongContext:
    schemes: tuple[str, ...]  # registry names, in drawing order; the first keeps the trained frequencies
    reference: str  # plain RoPE: the scheme that changes no frequency
    per_window: dict[str, np.ndarray]  # scheme → (W, B) mean loss per bin, nats
    counts: np.ndarray  # (B,) predictions per bin
    starts: np.ndarray  # (B,) first position t of each bin
    windows: int  # W: windows every scheme finished
    window: int  # tokens per window
    trained: int  # the trained context
    bin: int
    scale: float  # s = window / trained, the stretch every scheme was set for
    factors: dict[str, float]  # scheme → attention factor on q and k
    cpu_seconds: float  # the regeneration's forwards, one thread
    wall_seconds: float
    max_rss_mb: float
    forwards: int
    text_sha256: str

    @property
    def centres(self) -> np.ndarray:
        """(B,) the middle position of each bin (the chart's x)."""
        return self.starts + (self.counts - 1) / 2

    def band(self, scheme: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(mean, lo, hi) per bin (B,) over the windows."""
        ivs = [t_interval(col) for col in self.per_window[scheme].T]
        return tuple(np.array([getattr(iv, a) for iv in ivs]) for a in ("mean", "lo", "hi"))  # type: ignore[return-value]

    def span_mean(self, scheme: str, lo: int, hi: int) -> np.ndarray:
        """(W,) each window's mean loss over the predictions at positions lo ≤ t < hi (bins inside)."""
        sel = (self.starts >= lo) & (self.starts < hi)
        w = self.counts[sel].astype(float)
        return np.asarray((self.per_window[scheme][:, sel] * w).sum(axis=1) / w.sum(), dtype=float)


@bounded(1)
def load(path: str = str(RESULT_FILE)) -> LongContext | None:
    """The shipped curves, None when no window is finished (or the file is missing)."""
    p = Path(path)
    if not p.exists():
        return None
    doc: dict[str, Any] = json.loads(p.read_text(encoding="utf-8"))
    s = doc["settings"]
    schemes = tuple(s["schemes"])
    runs = doc["runs"]
    done = [w for w in range(s["windows"]) if all(f"{w}/{n}" in runs for n in schemes)]
    if not done:
        return None
    per_window = {n: np.array([runs[f"{w}/{n}"]["bins"] for w in done], dtype=float) for n in schemes}
    n_pred = s["window"] - 1
    starts = np.arange(0, n_pred, s["bin"])
    counts = np.minimum(s["bin"], n_pred - starts)
    reference = next(n for n in schemes if not run.rotary_class(n).changes_frequencies)
    used = [r for r in runs.values() if r["window"] in done]
    return LongContext(
        schemes=schemes,
        reference=reference,
        per_window=per_window,
        counts=counts,
        starts=starts,
        windows=len(done),
        window=s["window"],
        trained=s["trained"],
        bin=s["bin"],
        scale=s["window"] / s["trained"],
        factors={n: float(s["schemes"][n]["attention_factor"]) for n in schemes},
        cpu_seconds=float(sum(r["cpu_seconds"] for r in used)),
        wall_seconds=float(sum(r["wall_seconds"] for r in used)),
        max_rss_mb=float(max(r["max_rss_mb"] for r in used)),
        forwards=len(used),
        text_sha256=s["text"]["sha256"],
    )


@dataclass(frozen=True)
class Facts:
    rise: Interval  # plain RoPE: past the context minus its last REF_SPAN positions inside, per window
    rise_from: int | None  # the bin start ≥ trained from which every bin's (bin − reference) interval is above zero
    past: dict[str, Interval]  # scheme → mean loss over positions ≥ trained
    best: str  # the scheme with the lowest mean past the context
    versus_best: dict[str, Interval]  # other scheme → its past loss minus best's (paired)
    inside_cost: dict[str, Interval]  # stretch → its loss inside the context minus plain RoPE's (paired)


def facts(lc: LongContext) -> Facts:
    ref = lc.reference
    before = lc.span_mean(ref, lc.trained - REF_SPAN, lc.trained)  # (W,)
    end = int(lc.starts[-1] + lc.counts[-1])
    past = {n: lc.span_mean(n, lc.trained, end) for n in lc.schemes}  # scheme → (W,)
    # From which bin on every bin is clearly above the reference (one bin alone, among many tested,
    # can clear zero by chance); only stated when the rise over the whole stretch is clear too.
    above = [t_interval(lc.per_window[ref][:, k] - before).above_zero for k in range(lc.starts.size)]
    rise_from = None
    for k in np.flatnonzero(lc.starts >= lc.trained)[::-1]:
        if not above[k]:
            break
        rise_from = int(lc.starts[k])
    rise = t_interval(past[ref] - before)
    if not rise.above_zero:
        rise_from = None
    best = min(lc.schemes, key=lambda n: float(past[n].mean()))
    inside = {n: lc.span_mean(n, 0, lc.trained) for n in lc.schemes}
    return Facts(
        rise=rise,
        rise_from=rise_from,
        past={n: t_interval(v) for n, v in past.items()},
        best=best,
        versus_best={n: t_interval(past[n] - past[best]) for n in lc.schemes if n != best},
        inside_cost={n: t_interval(inside[n] - inside[ref]) for n in lc.schemes if n != ref},
    )


def name(scheme: str, lang: str) -> str:
    return methods.scheme(scheme, lang)


def sentences(lc: LongContext, lang: str) -> list[str]:
    """What the section states about the curves, in `lang`: every number from the shipped file, every
    verdict only where its interval supports it."""
    f = facts(lc)
    ref, end = lc.reference, int(lc.starts[-1] + lc.counts[-1])
    out = []
    rise_args = dict(
        trained=lc.trained,
        last=end - 1,
        ref=REF_SPAN,
        rise=f.rise.mean,
        size=abs(f.rise.mean),
        lo=f.rise.lo,
        hi=f.rise.hi,
        windows=lc.windows,
        plain=name(ref, lang),
    )
    if f.rise.above_zero:
        out.append(t("smollm2.long.rise", lang, **rise_args))
        if f.rise_from is not None:
            out.append(t("smollm2.long.rise_from", lang, start=f.rise_from, stop=f.rise_from + lc.bin - 1))
    elif f.rise.below_zero:
        out.append(t("smollm2.long.fall", lang, **rise_args))
    else:
        out.append(t("smollm2.long.no_rise", lang, **rise_args))
    out.append(
        t(
            "smollm2.long.best",
            lang,
            trained=lc.trained,
            best=name(f.best, lang),
            value=f.past[f.best].mean,
            values=", ".join(f"{name(n, lang)} {f.past[n].mean:.2f}" for n in lc.schemes if n != f.best),
        )
    )
    for n, d in f.versus_best.items():
        key = "smollm2.long.clearly_below" if d.above_zero else "smollm2.long.cannot_tell"
        out.append(
            t(
                key,
                lang,
                best=name(f.best, lang),
                other=name(n, lang),
                d=d.mean,
                lo=_nz(d.lo),
                hi=_nz(d.hi),
                windows=lc.windows,
            )
        )
    out.append(t("smollm2.long.inside_lead", lang, plain=name(ref, lang)))
    for n, d in f.inside_cost.items():
        key = (
            "smollm2.long.inside_more"
            if d.above_zero
            else "smollm2.long.inside_less"
            if d.below_zero
            else "smollm2.long.inside_same"
        )
        out.append(
            t(
                key,
                lang,
                name=name(n, lang),
                plain=name(ref, lang),
                trained=lc.trained,
                d=d.mean,
                lo=_nz(d.lo),
                hi=_nz(d.hi),
            )
        )
    return out


def _nz(x: float) -> float:
    """An interval's end as the sentences print it (3 decimals): one that rounds to zero is 0, so a
    lower end of −0.0002 reads "0.000", not "-0.000"."""
    return 0.0 if abs(x) < 5e-4 else x


def setup(lc: LongContext, lang: str) -> str:
    """How the curves were made, in `lang` (the numbers from the file)."""
    stretched = [n for n in lc.schemes if n != lc.reference]
    return t(
        "smollm2.long.setup",
        lang,
        windows=lc.windows,
        window=lc.window,
        trained=lc.trained,
        scale=lc.scale,
        bin=lc.bin,
        stretches=", ".join(name(n, lang) for n in stretched),
        factors=", ".join(f"{name(n, lang)} {lc.factors[n]:.3f}" for n in lc.schemes if lc.factors[n] != 1.0) or "—",
        tokens=lc.windows * lc.window,
    )


def cost(lc: LongContext, lang: str) -> str:
    return t(
        "smollm2.long.cost",
        lang,
        forwards=lc.forwards,
        window=lc.window,
        cpu=lc.cpu_seconds / 60,
        wall=lc.wall_seconds / 60,
        each=lc.cpu_seconds / lc.forwards,
        rss=lc.max_rss_mb / 1024,
        sha=lc.text_sha256[:12],
    )


def figure(lc: LongContext, lang: str) -> go.Figure:
    """Loss per position bin, one line per scheme (the mean over the windows) with its 95% band, and the
    trained context marked."""
    x_title, y_title = t("smollm2.long.x", lang, bin=lc.bin), t("smollm2.long.y", lang)
    traces: list[dict[str, Any]] = []
    xs = lc.centres
    for k, n in enumerate(lc.schemes):
        mean, lo, hi = lc.band(n)
        traces += F.band_line(
            xs, mean, lo, hi, name=name(n, lang), k=k, symbol=SYMBOLS[k % len(SYMBOLS)], marker_size=6,
            x_title=x_title, y_title=y_title, x_format=".0f", y_format=".3f",
        )  # fmt: skip
    fig = make_figure(
        traces,
        t("smollm2.long.title", lang, windows=lc.windows, window=lc.window),
        440,
        xaxis=dict(title=x_title, zeroline=False),
        yaxis=dict(title=y_title, zeroline=False),
        legend=dict(orientation="h", yanchor="top", y=-0.22, xanchor="left", x=0),
    )
    return F.mark_lines(fig, x={t("smollm2.long.context_line", lang, trained=lc.trained): lc.trained})


@dataclass(frozen=True)
class Section:
    figure: go.Figure
    setup: str
    sentences: tuple[str, ...]
    cost: str


@bounded(2)  # one entry per language: a figure of 4 × 24 points and a few sentences
def section(lang: str) -> Section | None:
    """Everything the section shows, in `lang`; None when no curve is shipped."""
    lc = load()
    if lc is None:
        return None
    return Section(figure(lc, lang), setup(lc, lang), tuple(sentences(lc, lang)), cost(lc, lang))
