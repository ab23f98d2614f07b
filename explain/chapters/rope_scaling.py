"""What the "Stretching RoPE" chapter shows, computed from encoders/rope_scaling.py.

Every function takes primitives and returns numpy arrays (or dataclasses of them), so the page can
cache it (ui.cache.cached) and tests can check it without Streamlit. The schemes are the registered
encoders themselves: every RoPE class in encoders.REGISTRY, in registry order, named by its short
`scheme` id (plain RoPE, PI, NTK, dynamic NTK, YaRN, xPos). The frequencies, curves and attention
maps come from those encoders, the code the attention lab and the toy trainer run.
`frequency_section` also returns the words the section states about its numbers (legends, the
out-of-distribution table, the question), in `lang`.

Axis legend: P frequency pairs (d/2), K distance windows, S schemes, n tokens, i query, j key.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from encoders import REGISTRY
from encoders.rope import RoPE, RopeConfig, rope_frequencies
from encoders.rope_scaling import PAPERS, YaRNRoPE, dynamic_ntk_scale, yarn_ramp
from explain import methods
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import run_tokens

# The page's controls: every option of each select-slider.
HEAD_SIZES = (8, 16, 32, 64, 128, 256)
BASES = (1_000, 10_000, 100_000, 500_000)
LENGTHS = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)
STRETCH_FACTORS = (1.0, 1.5, 2.0, 3.0, 4.0, 8.0, 16.0, 32.0)
BETA_FAST = (4.0, 8.0, 16.0, 32.0, 64.0, 128.0)
BETA_SLOW = (0.25, 0.5, 1.0, 2.0)
GAMMAS = (16.0, 32.0, 64.0, 128.0, 256.0, 512.0, 1024.0, 2048.0)
MAX_SENTENCE_LENGTH = 128  # the sentence experiment's trained length
NOBODY = "-"  # the question's "none of them": not a scheme id, nor a registry name ("none" is NoPE's)

# scheme id → its encoder class: every RoPE subclass in the registry, in registry order.
SCHEMES: dict[str, type[RoPE]] = {c.scheme: c for c in REGISTRY.values() if issubclass(c, RoPE)}
ALL_SCHEMES = tuple(SCHEMES)
REFERENCE = RoPE.scheme  # plain RoPE: what every other scheme is compared with
STRETCHES = tuple(s for s, c in SCHEMES.items() if c.changes_frequencies)  # the schemes that move θ_f
FREQUENCY_SCHEMES = (REFERENCE, *STRETCHES)  # xPos keeps RoPE's frequencies
# Every scheme as a registry name: the chapter's trained-model panel (ui/trained.py) keeps those that
# read a shipped model (RoPE itself, and the stretches applied to it at inference).
TRAINED_SCHEMES = tuple(c.name for c in SCHEMES.values())
YARN = YaRNRoPE.scheme  # the scheme whose attention factor the frequency caption states


def scheme_config(
    scheme: str,
    base: float,
    scale: float,
    original_length: int,
    scale_base: float,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> RopeConfig:
    """The frozen config the registered encoder for `scheme` takes."""
    return SCHEMES[scheme].stretched_config(base, scale, original_length, scale_base, beta_fast, beta_slow)


def scheme_encoder(
    scheme: str,
    d: int,
    base: float,
    scale: float,
    original_length: int,
    scale_base: float = 512.0,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> RoPE:
    """The scheme's encoder with one head of size d (no parameters: RoPE's are all in the config)."""
    config = scheme_config(scheme, base, scale, original_length, scale_base, beta_fast, beta_slow)
    return SCHEMES[scheme](d, 1, config)


@dataclass
class Frequencies:
    pairs: np.ndarray  # (P,) f
    theta: dict[str, np.ndarray]  # scheme → θ'_f (P,)
    ratio: dict[str, np.ndarray]  # scheme → θ'_f / θ_f
    wavelength: dict[str, np.ndarray]  # scheme → 2π/θ'_f
    attention_factor: dict[str, float]  # scheme → factor on q and k
    ramp: np.ndarray  # (P,) YaRN's ramp: 0 keep, 1 divide by s
    dynamic_alpha: float  # dynamic NTK's effective factor at the new length
    max_angle_trained: np.ndarray  # (P,) L·θ_f: the angle pair f turns through across the trained context
    max_angle_new: dict[str, np.ndarray]  # scheme → s·L·θ'_f, the same across the new context
    out_of_distribution: dict[str, np.ndarray]  # scheme → bool (P,): a new angle training never saw


def frequencies(
    d: int, base: float, scale: float, original_length: int, beta_fast: float = 32.0, beta_slow: float = 1.0
) -> Frequencies:
    """Every frequency scheme at the new length s·L, and which pairs reach unseen angles.

    The angle a pair turns through across a context of length ℓ is ℓ·θ_f (positions 0 … ℓ−1 and one
    step more: counting the span, not the last index, makes PI land exactly on the trained angle
    rather than a fraction of a step past it). A pair whose trained span covered a full turn
    (L·θ_f ≥ 2π) has seen every direction; a pair that never completed a turn is out of
    distribution as soon as its span at the new length exceeds its trained span.
    """
    new_length = round(scale * original_length)
    theta0 = rope_frequencies(d, base).numpy()
    thetas, ratios, waves, factors, peak, ood = {}, {}, {}, {}, {}, {}
    trained = original_length * theta0
    covered = trained >= 2 * np.pi
    for s in FREQUENCY_SCHEMES:
        enc = scheme_encoder(s, d, base, scale, original_length, beta_fast=beta_fast, beta_slow=beta_slow)
        th = enc.frequencies(new_length).numpy()
        thetas[s], ratios[s], waves[s], factors[s] = th, th / theta0, 2 * np.pi / th, enc.attention_factor(new_length)
        peak[s] = new_length * th
        ood[s] = ~covered & (peak[s] > trained * (1 + 1e-9))
    return Frequencies(
        np.arange(d // 2),
        thetas,
        ratios,
        waves,
        factors,
        yarn_ramp(d, base, original_length, beta_fast, beta_slow).numpy(),
        dynamic_ntk_scale(scale, original_length, new_length),
        trained,
        peak,
        ood,
    )


@dataclass
class DistanceCurves:
    distances: np.ndarray  # (K,) a representative distance per window (geometric middle)
    starts: np.ndarray  # (K,) first distance of each window
    stops: np.ndarray  # (K,) one past the last distance of each window
    curves: dict[str, np.ndarray]  # scheme → mean over the window of logit(Δ) / plain RoPE's logit at 0


def _log_ratio(enc: RoPE, new_length: int) -> np.ndarray:
    """log r_f with r_f^Δ = (pair f's factor at distance Δ): ι·θ'_f, plus ln(ζ_f)/γ where the encoder
    also decays pair f's score by ζ_f^(Δ/γ) (xPos) (P,)."""
    log_r: np.ndarray = 1j * enc.frequencies(new_length).numpy()
    decay = enc.pair_decay()
    if decay is not None:
        zeta, gamma = decay
        log_r = log_r + np.log(zeta.numpy()) / gamma
    return log_r


def logit_exact(
    scheme: str,
    distances: npt.ArrayLike,
    d: int,
    base: float,
    scale: float,
    original_length: int,
    scale_base: float,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
) -> np.ndarray:
    """logit(Δ) / plain RoPE's logit at 0 for a query and key that agree in every pair
    (q = k = (1, …, 1)), the key Δ positions in the past:

        a² · (1/(d/2)) Σ_f cos(Δ·θ'_f) · D_f(Δ),    D_f = ζ_f^(Δ/γ) for xPos, else 1

    (pair f of q = k = 1 contributes 2cos(Δθ'_f); plain RoPE at Δ = 0 scores d/√d)."""
    new_length = round(scale * original_length)
    enc = scheme_encoder(scheme, d, base, scale, original_length, scale_base, beta_fast, beta_slow)
    dist = np.asarray(distances, dtype=np.float64)
    terms = np.exp(np.outer(dist, _log_ratio(enc, new_length))).real  # (K, P)
    exact: np.ndarray = enc.attention_factor(new_length) ** 2 * terms.mean(axis=1)
    return exact


def logit_vs_distance(
    d: int,
    base: float,
    scale: float,
    original_length: int,
    scale_base: float,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    n_windows: int = 300,
) -> DistanceCurves:
    """logit_exact averaged over log-spaced windows of distances 1 … s·L − 1, under each scheme.

    Near 0 a window is a single distance (the exact value); far away it spans many, and the mean
    smooths the fast pairs' ripples that no plot could show one by one. Each window's sum is a
    geometric series, Σ_(Δ=a)^(b−1) r^Δ = (r^a − r^b)/(1 − r) with r_f = e^(ιθ'_f)·ζ_f^(1/γ), so the
    means are exact at any length without visiting every distance.

    Not run through the encoders: their separate query and key factors ζ^(±pos/γ) overflow at the
    lengths this plot reaches, while the decay itself is tame. tests/test_rope_scaling.py checks
    the encoders against logit_exact where both can run.
    """
    new_length = round(scale * original_length)
    edges = np.unique(np.round(np.geomspace(1, max(new_length, 2), n_windows + 1)).astype(np.int64))
    starts, stops = edges[:-1], edges[1:]  # window k = [starts[k], stops[k])
    curves = {}
    for s in ALL_SCHEMES:
        enc = scheme_encoder(s, d, base, scale, original_length, scale_base, beta_fast, beta_slow)
        log_r = _log_ratio(enc, new_length)  # (P,)
        window_sum = (np.exp(np.outer(starts, log_r)) - np.exp(np.outer(stops, log_r))) / -np.expm1(log_r)  # (K, P)
        mean = window_sum.real / (stops - starts)[:, None]  # (K, P)
        curves[s] = enc.attention_factor(new_length) ** 2 * mean.mean(axis=1)
    middle = np.sqrt(starts * (stops - 1.0))
    return DistanceCurves(middle, starts, stops, curves)


@dataclass
class SentenceRun:
    schemes: tuple[str, ...]
    scale: float  # s = max(1, n / L): just enough to cover the sentence
    weights: np.ndarray  # (S, n, n) head 0, one map per scheme
    by_distance: dict[str, np.ndarray]  # scheme → mean weight at offset i − j (causal) or j − i
    offsets: np.ndarray  # the offsets of by_distance
    mean_distance: dict[str, float]  # scheme → Σ_j w_ij |i − j| averaged over queries i
    beyond: dict[str, float]  # scheme → share of attention on keys more than L − 1 away
    original_length: int  # L, the "trained" length

    @property
    def trained_mark(self) -> int | None:
        """L − 1, the farthest trained distance, where the by-distance plot marks it (None when the
        sentence is too short to reach it)."""
        last = self.original_length - 1
        return last if last <= int(self.offsets.max()) else None


# Cache bounds (pages/rotary/rope_scaling.py): a frequency section or a distance curve is a few (d/2,) or
# (300,) arrays; a sentence run holds 6 maps of up to 256 × 256 float32 (~1.6 MB), hence 32.
@bounded(32)
def sentence_attention(
    tokens: tuple[str, ...],
    seed: int,
    original_length: int,
    causal: bool,
    base: float = 10000.0,
    scale_base: float = 512.0,
    d_model: int = 64,
    n_heads: int = 1,
) -> SentenceRun:
    """The sentence through the toy layer under every scheme, with a "trained" length L and the
    scale s = n / L that stretches L to the sentence's length n (at least 1)."""
    n = len(tokens)
    scale = max(1.0, n / original_length)
    weights, by_dist, mean_d, beyond = [], {}, {}, {}
    i = np.arange(n)[:, None]
    j = np.arange(n)[None, :]
    offsets = np.arange(n) if causal else np.arange(-(n - 1), n)
    sign_dist = (i - j) if causal else (j - i)  # causal: how far back; else key − query
    for s in ALL_SCHEMES:
        cfg = scheme_config(s, base, scale, original_length, scale_base)
        view = run_tokens(tokens, seed, SCHEMES[s].name, d_model, n_heads, causal, 0, cfg)
        w = view.weights[0]  # (i, j)
        weights.append(w)
        by_dist[s] = np.array([w[sign_dist == o].mean() if (sign_dist == o).any() else np.nan for o in offsets])
        mean_d[s] = float((w * np.abs(i - j)).sum(axis=1).mean())
        beyond[s] = float((w * (np.abs(i - j) > original_length - 1)).sum(axis=1).mean())
    return SentenceRun(ALL_SCHEMES, scale, np.stack(weights), by_dist, offsets, mean_d, beyond, original_length)


def label(scheme: str, lang: str | None = None) -> str:
    """The scheme's name as a learner reads it (the methods catalogue, keyed by the scheme's registry
    name: explain/methods.py; default: the current run's language). Unknown schemes raise KeyError."""
    return methods.scheme(SCHEMES[scheme].name, lang)


# ------------------------------------------------------------------------ sections, with their words


def pair_runs(pairs: npt.ArrayLike) -> str:
    """Sorted pair indices as runs: [3, 4, 5, 9] → "3–5, 9"."""
    idx = [int(v) for v in np.asarray(pairs).reshape(-1)]
    runs: list[list[int]] = []
    for f in idx:
        if runs and f == runs[-1][-1] + 1:
            runs[-1].append(f)
        else:
            runs.append([f])
    return ", ".join(f"{r[0]}–{r[-1]}" if len(r) > 1 else str(r[0]) for r in runs)


def frequency_question(fr: Frequencies, scale: float, lang: str) -> Question:
    """Which scheme changes even the fastest pair, pair 0? Read off the ratios θ′₀/θ₀ the plots draw."""
    moved = [k for k in STRETCHES if abs(float(fr.ratio[k][0]) - 1.0) > 1e-9]
    ratios = {k: float(fr.ratio[k][0]) for k in STRETCHES}
    facts: dict[str, object] = {
        "s": scale,
        "moved": tuple(moved),
        "ramp0": float(fr.ramp[0]),
        **{f"ratio_{k}": v for k, v in ratios.items()},
    }
    if len(moved) > 1:  # more than one answer: the options could not hold it (never at these controls)
        raise ValueError(f"several schemes move pair 0: {moved}")
    answer = moved[0] if moved else NOBODY
    if moved:
        facts["name"] = label(answer, lang)
        text = t("rope_scaling.frequencies.answer_moved", lang, name=facts["name"], ratio=ratios[answer])
        text += t("rope_scaling.frequencies.explanation", lang, **{k: v for k, v in facts.items() if k != "moved"})
    else:
        text = t("rope_scaling.frequencies.answer_none", lang)
    options = (*STRETCHES, NOBODY)
    return Question(
        key="rs_q",
        prompt=t("rope_scaling.frequencies.question", lang, s=scale),
        options=options,
        labels=tuple(label(k, lang) if k != NOBODY else t("rope_scaling.frequencies.none", lang) for k in options),
        answer=answer,
        explanation=text,
        facts=facts,
    )


@dataclass(frozen=True)
class FrequencySection:
    view: Frequencies
    question: Question
    ratios: dict[str, np.ndarray]  # legend → θ′_f/θ_f per pair, and YaRN's ramp last
    ramp_name: str  # the ramp's legend (dashed)
    wavelengths: dict[str, np.ndarray]  # legend → 2π/θ′_f
    angles: dict[str, np.ndarray]  # legend → s·L·θ′_f per scheme, then the trained L·θ_f
    trained_name: str  # the trained curve's legend (dashed)
    rows: tuple[dict[str, str], ...]  # the out-of-distribution table, one row per frequency scheme
    caption: str  # dynamic NTK's α and YaRN's factor


def frequency_section(
    d: int, base: float, scale: float, original_length: int, beta_fast: float, beta_slow: float, lang: str
) -> FrequencySection:
    fr = frequencies(d, base, scale, original_length, beta_fast, beta_slow)
    names = {k: label(k, lang) for k in ALL_SCHEMES}
    ramp = t("rope_scaling.frequencies.ramp", lang)
    ratios = {names[k]: fr.ratio[k] for k in FREQUENCY_SCHEMES} | {ramp: fr.ramp}
    # Schemes first, in the order of every other plot, so each keeps its colour; the reference last.
    trained = t("rope_scaling.angles.trained_curve", lang)
    angles = {
        t("rope_scaling.angles.scheme_curve", lang, name=names[k]): fr.max_angle_new[k] for k in FREQUENCY_SCHEMES
    }
    angles[trained] = fr.max_angle_trained
    rows = []
    for k in FREQUENCY_SCHEMES:
        bad = np.flatnonzero(fr.out_of_distribution[k])
        worst = float((fr.max_angle_new[k] / fr.max_angle_trained)[bad].max()) if bad.size else float("nan")
        rows.append(
            {
                t("rope_scaling.angles.col_scheme", lang): names[k],
                t("rope_scaling.angles.col_count", lang): t(
                    "rope_scaling.angles.count", lang, bad=bad.size, pairs=d // 2
                ),
                t("rope_scaling.angles.col_which", lang): pair_runs(bad)
                if bad.size
                else t("rope_scaling.angles.which_none", lang),
                t("rope_scaling.angles.col_overshoot", lang): t("rope_scaling.angles.overshoot", lang, worst=worst)
                if bad.size
                else "—",
            }
        )
    factor = fr.attention_factor[YARN]
    caption = t(
        "rope_scaling.frequencies.caption",
        lang,
        new_len=round(scale * original_length),
        alpha=fr.dynamic_alpha,
        s=scale,
        factor=factor,
        factor_sq=factor**2,
    )
    return FrequencySection(
        fr,
        frequency_question(fr, scale, lang),
        ratios,
        ramp,
        {names[k]: fr.wavelength[k] for k in FREQUENCY_SCHEMES},
        angles,
        trained,
        tuple(rows),
        caption,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="rope-scaling",
    part="Rotary",
    page="pages/rotary/rope_scaling.py",
    icon=":material/expand:",
    order=90,
    papers=tuple(PAPERS.values()),
    sources=(
        "encoders.rope_scaling:pi_frequencies",
        "encoders.rope_scaling:ntk_base",
        "encoders.rope_scaling:dynamic_ntk_scale",
        "encoders.rope_scaling:yarn_ramp",
        "encoders.rope_scaling:yarn_frequencies",
        "encoders.rope_scaling:yarn_attention_factor",
        "encoders.rope_scaling:xpos_scales",
    ),
    encodings=TRAINED_SCHEMES,
    link={"rs_d": "64", "rs_s": "8.0", "rs_L": "1024"},
    link_shows={"rs_d": 64, "rs_s": 8.0, "rs_L": 1024},
)
