"""Chapter: Kerple and FIRE — a penalty of the distance that is learned, not fixed.

The numbers the chapter draws, computed from the registry's own encoders (encoders/kerple.py,
encoders/fire.py) at their initial, seeded parameters, and the facts its sentences state:
- `kernel_view`: each head's Kerple bias against the distance, both variants, beside ALiBi's fixed
  slopes, and the distance at which each head's penalty reaches −1 (a key's weight divided by e);
- `fire_view`: FIRE's normalised distance ψ(i − j)/ψ(max(L, i)) over a grid of positions, how far
  it is from depending on i − j alone below and past the threshold L, and the bias it makes;
- `sentence_view`: both on the learner's sentence through the one attention path;
- `interpolation_question`: what happens to the number FIRE's network reads for a key a fixed
  distance back as the query moves past L.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders import fire as fire_enc
from encoders import kerple as kerple_enc
from encoders.alibi import alibi_slopes
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import TOY_D_MODEL, run_tokens

HEADS = (1, 2, 4, 8)  # heads a learner can pick: divisors of the toy layer's 64 dimensions, ≤ 8 curves a chart
MAX_HEADS = HEADS[-1]
MAX_DISTANCE = 4096  # the kernels' x axis goes this far (the chart is drawn on a log axis)
MAX_POSITIONS = 512  # FIRE's map: positions 0 … n − 1, n at most this
MIN_THRESHOLD, MAX_THRESHOLD = 4, 256  # FIRE's L, the learner's choice (its paper uses L₀ = 512 at 2k tokens)
QUESTION_DISTANCE = 8  # the question's key stays this many tokens behind its query
GRID = 32  # the sentence maps draw at most this many tokens per axis


def _heads(H: int) -> int:
    """The largest offered head count not above H (a link's ?kf_heads=3 reads as 2)."""
    return max([h for h in HEADS if h <= int(H)] or [HEADS[0]])


@dataclass(frozen=True)
class KernelView:
    distances: np.ndarray  # (r,) 0 … max_distance
    log: np.ndarray  # (h, r) Kerple, logarithmic variant: −r₁·log(1 + r₂·r)
    power: np.ndarray  # (h, r) Kerple, power variant: −r₁·r^r₂
    alibi: np.ndarray  # (h, r) ALiBi's fixed −m·r, its paper's slopes for h heads
    log_params: np.ndarray  # (h, 2) r₁, r₂ as the log bias uses them
    power_params: np.ndarray  # (h, 2)
    slopes: np.ndarray  # (h,) ALiBi's m
    reach_log: np.ndarray  # (h,) the first distance whose penalty is ≤ −1 (nan: none up to max_distance)
    reach_power: np.ndarray  # (h,)
    reach_alibi: np.ndarray  # (h,)

    # What the charts draw: the factor e^bias by which each bias multiplies a key's unnormalised
    # weight (in [0, 1]). On the bias itself ALiBi's line and the power variant run to −10⁴ while the
    # logarithmic kernel stays near −10, and every curve but one looked flat; the factor puts them on
    # one readable scale and shows the difference in kind: ALiBi's weights fall exponentially with the
    # distance, the logarithmic kernel's as a power law, (1 + r₂·r)^(−r₁).
    @property
    def log_factor(self) -> np.ndarray:
        return np.asarray(np.exp(self.log))

    @property
    def power_factor(self) -> np.ndarray:
        return np.asarray(np.exp(self.power))

    @property
    def alibi_factor(self) -> np.ndarray:
        return np.asarray(np.exp(self.alibi))


def _reach(bias: np.ndarray, distances: np.ndarray) -> np.ndarray:
    """Per head, the first distance at which the penalty reaches −1: from there a key's weight is
    at most 1/e of what the same content would get on the diagonal."""
    out = np.full(bias.shape[0], np.nan)
    for h, row in enumerate(bias):
        hit = np.flatnonzero(row <= -1.0)
        if hit.size:
            out[h] = distances[hit[0]]
    return out


def _distance_bias(method: str, H: int, seed: int, config: object, max_distance: int) -> tuple[np.ndarray, np.ndarray]:
    """(h, r) bias of a query at position max_distance for keys at 0 … max_distance back, and the
    (h, 2) parameters (r₁, r₂) it used."""
    enc = build(method, TOY_D_MODEL, H, seed, config)
    assert isinstance(enc, kerple_enc.Kerple)
    q = torch.tensor([max_distance])  # (1,)
    k = max_distance - torch.arange(max_distance + 1)  # (r,) keys 0 … max_distance back
    with torch.no_grad():
        bias = enc.bias(q, k)[:, 0, :].numpy()  # (h, r)
        r1, r2 = enc.parameters_in_range()
    return bias, np.stack([r1.numpy(), r2.numpy()], axis=1)


@bounded(32)
def kernel_view(H: int, max_distance: int, seed: int) -> KernelView:
    H = _heads(H)
    max_distance = max(1, min(int(max_distance), MAX_DISTANCE))
    distances = np.arange(max_distance + 1, dtype=float)
    log, log_params = _distance_bias("kerple", H, seed, kerple_enc.KerpleConfig("log"), max_distance)
    power, power_params = _distance_bias("kerple", H, seed, kerple_enc.KerpleConfig("power"), max_distance)
    slopes = alibi_slopes(H).numpy().astype(float)  # (h,)
    alibi = -slopes[:, None] * distances[None]  # (h, r)
    return KernelView(
        distances,
        log,
        power,
        alibi,
        log_params,
        power_params,
        slopes,
        _reach(log, distances),
        _reach(power, distances),
        _reach(alibi, distances),
    )


@dataclass(frozen=True)
class FireView:
    n: int
    threshold: float  # L as the encoder uses it
    normalised: np.ndarray  # (n, n) ψ(i − j)/ψ(max(L, i)) for j ≤ i, nan above the diagonal
    bias: np.ndarray  # (h, n, n) the MLP's output on it (nan above the diagonal)
    rows: dict[int, np.ndarray]  # query position i → its keys' normalised distance, by distance 0 … i
    below_spread: float  # largest spread, over rows i < L, of the value at one distance (0: Toeplitz)
    past_spread: float  # the same over rows i ≥ L (> 0: past L, i itself matters)


def _spread(normalised: np.ndarray, rows: range) -> float:
    """Largest difference, over the given query rows, between two rows' values at the same distance."""
    worst = 0.0
    by_distance: dict[int, list[float]] = {}
    for i in rows:
        for d in range(i + 1):
            by_distance.setdefault(d, []).append(float(normalised[i, i - d]))
    for values in by_distance.values():
        worst = max(worst, max(values) - min(values))
    return worst


@bounded(16)
def fire_view(n: int, threshold: int, seed: int, H: int) -> FireView:
    n = max(2, min(int(n), MAX_POSITIONS))
    H = _heads(H)
    L = float(max(MIN_THRESHOLD, min(int(threshold), MAX_THRESHOLD)))
    enc = build("fire", TOY_D_MODEL, H, seed, fire_enc.FireConfig(threshold=L))
    assert isinstance(enc, fire_enc.Fire)
    pos = torch.arange(n)
    with torch.no_grad():
        normalised = enc.normalised(pos, pos).numpy().copy()  # (n, n)
        bias = enc.bias(pos, pos).numpy().copy()  # (h, n, n)
    above = np.triu(np.ones((n, n), dtype=bool), k=1)
    normalised[above] = np.nan
    bias[:, above] = np.nan
    L_used = float(enc.threshold().detach())
    picks = sorted({int(p) for p in (L_used / 2, L_used, 2 * L_used, 4 * L_used) if 1 <= p < n})
    rows = {i: np.array([normalised[i, i - d] for d in range(i + 1)]) for i in picks}
    cut = min(n, int(np.ceil(L_used)))
    return FireView(
        n,
        L_used,
        normalised,
        bias,
        rows,
        _spread(normalised, range(cut)),
        _spread(normalised, range(cut, n)) if cut < n else 0.0,
    )


@dataclass(frozen=True)
class SentenceView:
    tokens: tuple[str, ...]
    kerple: np.ndarray  # (h, n, n) attention weights, Kerple (log)
    fire: np.ndarray  # (h, n, n) attention weights, FIRE
    cut: bool  # True when the maps show only the first GRID tokens
    reach_kerple: float  # mean over heads and queries of Σ_j w_ij·|i − j|: how far back a head looks
    reach_fire: float


@bounded(16)
def sentence_view(tokens: tuple[str, ...], seed: int, H: int, causal: bool) -> SentenceView:
    H = _heads(H)
    kerple = run_tokens(tokens, seed, "kerple", TOY_D_MODEL, H, causal).weights  # (h, n, n)
    fire = run_tokens(tokens, seed, "fire", TOY_D_MODEL, H, causal).weights  # (h, n, n)
    shown = min(len(tokens), GRID)
    return SentenceView(
        tuple(tokens[:shown]),
        kerple[:, :shown, :shown],
        fire[:, :shown, :shown],
        len(tokens) > shown,
        mean_reach(kerple),
        mean_reach(fire),
    )


def mean_reach(weights: np.ndarray) -> float:
    """Σ_j w_ij·|i − j|, averaged over heads and queries: how many tokens back attention looks on
    average (0 for a head that only attends to itself)."""
    n = weights.shape[-1]
    idx = np.arange(n)
    dist = np.abs(idx[:, None] - idx[None, :])  # (i, j)
    return float(np.nansum(weights * dist[None], axis=-1).mean())


def interpolation_question(threshold: int, seed: int, lang: str | None = None) -> Question:
    """Past FIRE's threshold, a key QUESTION_DISTANCE tokens behind the query: the number the MLP
    reads for it as the query moves from L to 4L. Computed from the encoder's own normalisation."""
    L = max(MIN_THRESHOLD, min(int(threshold), MAX_THRESHOLD))
    enc = build("fire", TOY_D_MODEL, 1, seed, fire_enc.FireConfig(threshold=float(L)))
    assert isinstance(enc, fire_enc.Fire)
    d = QUESTION_DISTANCE
    i = torch.tensor([L, 4 * L])
    with torch.no_grad():
        at = [float(enc.normalised(i[k : k + 1], i[k : k + 1] - d)[0, 0]) for k in range(2)]
    change = at[1] - at[0]
    answer = "same" if abs(change) < 1e-9 else ("smaller" if change < 0 else "larger")
    options = ("larger", "same", "smaller")
    facts = {"L": L, "far": 4 * L, "d": d, "near_value": at[0], "far_value": at[1]}
    return Question(
        key="kerple_fire_q",
        prompt=t("kerple_fire.question.prompt", lang, L=L, far=4 * L, d=d),
        options=options,
        labels=tuple(t(f"kerple_fire.question.{o}", lang) for o in options),
        answer=answer,
        explanation=t(f"kerple_fire.question.explain_{answer}", lang, **facts),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="kerple-fire",
    part="Bias",
    page="pages/bias/kerple_fire.py",
    icon=":material/tune:",
    order=110,
    papers=(kerple_enc.PAPER, fire_enc.PAPER),
    sources=(
        "encoders.kerple:kerple_log_bias",
        "encoders.kerple:kerple_power_bias",
        "encoders.kerple:Kerple.logit_terms",
        "encoders.fire:psi",
        "encoders.fire:normalised_distance",
        "encoders.fire:Fire.bias",
    ),
    encodings=("kerple", "fire"),
    link={"kf_heads": "4", "kf_distance": "256", "kf_threshold": "16", "kf_causal": "false"},
    link_shows={"kf_heads": 4, "kf_distance": 256, "kf_threshold": 16, "kf_causal": False},
)
