"""Stretching RoPE past its training length: Position Interpolation, NTK-aware scaling (static and
dynamic), YaRN, and xPos.

Axis legend: n / i / j positions (i query, j key), d head dimension, f frequency pair (0 … d/2−1).
Symbols: s = scale factor (new length / trained length), L = original (trained) length,
θ_f = base^(−2f/d) the plain RoPE frequencies (encoders/rope.py).

A model trained with RoPE on texts of length L has seen, for pair f, rotation angles m·θ_f up to
(L − 1)·θ_f. At a longer length the slow pairs reach angles they never saw. Each scheme answers
"what should θ_f become?" — all of them leave the rotation itself (apply_rotary) untouched:

    PI        θ_f / s                                  every pair slowed by s (positions ÷ s)
    NTK       base' = base · s^(d/(d−2))                fast pairs ~unchanged, slowest ÷ s
    dynamic   NTK with s replaced by s·ℓ/L − (s − 1)    grows with the current length ℓ > L
    YaRN      ramp between "keep" (fast) and "÷ s" (slow) pairs, and logits × (0.1 ln s + 1)²
    xPos      keeps θ_f; multiplies the score of pair f by ζ_f^((i − j)/γ), an exponential decay

Oracle: HF transformers `modeling_rope_utils.ROPE_INIT_FUNCTIONS` ('linear', 'dynamic', 'yarn');
xPos follows microsoft/torchscale `xpos_relative_position.py` (METHODS.md §9, §10).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import Tensor

from .base import Paper
from .rope import Numbers, RoPE, RopeConfig, _check_dim, as_float64, rope_frequencies

PAPERS = {
    "pi": Paper(
        "Chen, Wong, Chen, Tian",
        2023,
        "Extending Context Window of Large Language Models via Positional Interpolation",
        "https://arxiv.org/abs/2306.15595",
    ),
    "ntk": Paper(
        "bloc97 (Reddit r/LocalLLaMA)",
        2023,
        "NTK-Aware Scaled RoPE allows LLaMA models to have extended (8k+) context size without any "
        "fine-tuning and minimal perplexity degradation",
        "https://www.reddit.com/r/LocalLLaMA/comments/14lz7j5/",
    ),
    "dynamic": Paper(
        "emozilla (Reddit r/LocalLLaMA)",
        2023,
        "Dynamically Scaled RoPE further increases performance of long context LLaMA with zero fine-tuning",
        "https://www.reddit.com/r/LocalLLaMA/comments/14mrgpr/",
    ),
    "yarn": Paper(
        "Peng, Quesnelle, Fan, Shippole",
        2023,
        "YaRN: Efficient Context Window Extension of Large Language Models",
        "https://arxiv.org/abs/2309.00071",
    ),
    "xpos": Paper(
        "Sun, Dong, Patra, Ma, Huang, Benhaim, Chaudhary, Song, Wei",
        2022,
        "A Length-Extrapolatable Transformer",
        "https://arxiv.org/abs/2212.10554",
    ),
}


def _check_scale(scale: float) -> None:
    if not scale > 0:
        raise ValueError(f"scale must be positive (got {scale})")


# ---------------------------------------------------------------------------------------------
# Position Interpolation
# ---------------------------------------------------------------------------------------------


def pi_frequencies(d: int, base: float = 10000.0, scale: float = 1.0) -> Tensor:
    """θ'_f = θ_f / s, (d/2,) float64 (Chen et al. 2023, §2.2: f'(x, m) = f(x, m·L/L')).

    Rotating position m by θ_f/s is rotating position m/s by θ_f: the new length s·L is squeezed
    into the angles seen in training. HF 'linear' divides the frequencies, as here.
    """
    _check_scale(scale)
    return rope_frequencies(d, base) / float(scale)


# ---------------------------------------------------------------------------------------------
# NTK-aware scaling (static and dynamic)
# ---------------------------------------------------------------------------------------------


def ntk_base(d: int, base: float = 10000.0, scale: float = 1.0) -> float:
    """base' = base · s^(d/(d−2)) (bloc97 2023).

    The exponent d/(d−2) is chosen so that the slowest pair, θ_(d/2−1) = base^(−(d−2)/d), is divided
    by exactly s (like PI), while the fastest, θ_0 = 1, is not touched at all.
    """
    _check_dim(d)
    _check_scale(scale)
    if d == 2:
        raise ValueError("NTK-aware scaling needs d ≥ 4: with one pair the exponent d/(d−2) is undefined")
    stretch: float = float(scale) ** (d / (d - 2))  # s^(d/(d−2))
    return float(base) * stretch


def ntk_frequencies(d: int, base: float = 10000.0, scale: float = 1.0) -> Tensor:
    """θ'_f = base'^(−2f/d) with base' = ntk_base(d, base, s), (d/2,) float64."""
    return rope_frequencies(d, ntk_base(d, base, scale))


def dynamic_ntk_scale(scale: float, original_length: int, seq_len: int) -> float:
    """The effective NTK factor at the current length ℓ (HF `_compute_dynamic_ntk_parameters`):

        α(ℓ) = s · max(ℓ, L) / L − (s − 1)

    α = 1 (plain RoPE) up to the trained length L, then grows linearly with ℓ.
    """
    _check_scale(scale)
    if original_length < 1:
        raise ValueError("original_length must be at least 1")
    length = max(int(seq_len), int(original_length))
    return float(scale) * length / original_length - (float(scale) - 1.0)


def dynamic_ntk_frequencies(
    d: int, base: float = 10000.0, scale: float = 1.0, original_length: int = 2048, seq_len: int = 2048
) -> Tensor:
    """θ'_f for dynamic NTK at the current length ℓ: NTK with α(ℓ) in place of s, (d/2,) float64."""
    return ntk_frequencies(d, base, dynamic_ntk_scale(scale, original_length, seq_len))


# ---------------------------------------------------------------------------------------------
# YaRN
# ---------------------------------------------------------------------------------------------


def yarn_correction_dim(beta: float, d: int, base: float, original_length: int) -> float:
    """The (fractional) pair index whose pair turns β full times over L positions
    (YaRN §3.2; HF `find_correction_dim`):   f(β) = d · ln(L / (2πβ)) / (2 ln base).

    From L·θ_f = 2πβ with θ_f = base^(−2f/d): pairs below f(β) turn more than β times in training.
    """
    return d * math.log(original_length / (2 * math.pi * beta)) / (2 * math.log(base))


def yarn_ramp(
    d: int,
    base: float = 10000.0,
    original_length: int = 2048,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> Tensor:
    """ramp_f ∈ [0, 1] per pair, (d/2,) float64: 0 = keep θ_f (fast pairs, many turns in training),
    1 = divide by s (slow pairs, less than β_slow turns), linear in between (YaRN §3.2, "NTK-by-parts").

        low = f(β_fast), high = f(β_slow)  (floored / ceiled when truncate), clipped to [0, d − 1]
        ramp_f = clamp((f − low) / (high − low), 0, 1)

    The paper writes the ramp as a function of the number of turns r = L/λ_f; the reference code
    (jquesnelle/yarn) and HF ramp linearly in the pair index f instead, i.e. linearly in ln r. We
    follow the code, which is the oracle (the paper form is not confirmed against the paper text).
    The clamp bound d − 1 is in channel units while f runs over d/2 pairs; HF does the same and
    it is harmless (METHODS.md §9).
    """
    _check_dim(d)
    if not beta_fast > beta_slow > 0:
        raise ValueError(f"need beta_fast > beta_slow > 0 (got {beta_fast}, {beta_slow})")
    low = yarn_correction_dim(beta_fast, d, base, original_length)
    high = yarn_correction_dim(beta_slow, d, base, original_length)
    if truncate:
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, d - 1)
    if low == high:
        high += 0.001  # as HF: avoids dividing by zero; the ramp becomes a step
    f = torch.arange(d // 2, dtype=torch.float64)  # (d/2,)
    return ((f - low) / (high - low)).clamp(0.0, 1.0)


def yarn_frequencies(
    d: int,
    base: float = 10000.0,
    scale: float = 1.0,
    original_length: int = 2048,
    beta_fast: float = 32.0,
    beta_slow: float = 1.0,
    truncate: bool = True,
) -> Tensor:
    """θ'_f = (θ_f / s)·ramp_f + θ_f·(1 − ramp_f), (d/2,) float64 (YaRN §3.2, Eq. 18–19)."""
    _check_scale(scale)
    theta = rope_frequencies(d, base)  # (d/2,)
    ramp = yarn_ramp(d, base, original_length, beta_fast, beta_slow, truncate)  # (d/2,)
    return theta / float(scale) * ramp + theta * (1.0 - ramp)


def yarn_attention_factor(scale: float, mscale: float = 1.0) -> float:
    """√(1/t) = 0.1·μ·ln s + 1 for s > 1, else 1 (YaRN §3.4, Eq. 22; μ = 1 in the paper).

    Both q and k are multiplied by it (HF pre-multiplies cos and sin), so the logits are multiplied
    by its square, 1/t: a slightly sharper softmax to offset the flatter scores of a long context.
    """
    _check_scale(scale)
    return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0


# ---------------------------------------------------------------------------------------------
# Llama 3.1 ("llama3" in HF's rope_type)
# ---------------------------------------------------------------------------------------------


def llama3_frequencies(
    d: int,
    base: float = 500000.0,
    factor: float = 8.0,
    low_freq_factor: float = 1.0,
    high_freq_factor: float = 4.0,
    original_length: int = 8192,
) -> Tensor:
    """θ'_f of Llama 3.1's scaling, (d/2,) float64 (Meta's reference `apply_scaling`; HF
    `_compute_llama3_parameters`). With λ_f = 2π/θ_f and L the original length:

        λ_f < L / high_freq_factor   →  θ_f                      (fast pairs: kept)
        λ_f > L / low_freq_factor    →  θ_f / factor             (slow pairs: as PI)
        otherwise                    →  (1 − σ)·θ_f/factor + σ·θ_f,   σ = (L/λ_f − low) / (high − low)

    σ is linear in the pair's number of turns over L, L/λ_f (YaRN's paper ramp, not its code's).
    Not a registry member: the labs and the Stretching RoPE chapter keep their schemes; the RoPE
    chapter's "RoPE in practice" draws this beside them.
    """
    _check_scale(factor)
    if not high_freq_factor > low_freq_factor > 0:
        raise ValueError(f"need high_freq_factor > low_freq_factor > 0 (got {high_freq_factor}, {low_freq_factor})")
    if original_length < 1:
        raise ValueError("original_length must be at least 1")
    theta = rope_frequencies(d, base)  # (d/2,)
    wavelength = 2 * math.pi / theta  # (d/2,)
    turns = original_length / wavelength  # L/λ_f
    smooth = (turns - low_freq_factor) / (high_freq_factor - low_freq_factor)  # (d/2,)
    between = (1 - smooth) * theta / float(factor) + smooth * theta
    slow = torch.where(wavelength > original_length / low_freq_factor, theta / float(factor), between)
    return torch.where(wavelength < original_length / high_freq_factor, theta, slow)


# ---------------------------------------------------------------------------------------------
# xPos
# ---------------------------------------------------------------------------------------------


def xpos_zeta(d: int) -> Tensor:
    """ζ_f = (2f + 0.4·d) / (1.4·d), (d/2,) float64 (Sun et al. 2022, §3.2; torchscale `XPOS.scale`).

    Every ζ_f < 1, from 0.4/1.4 ≈ 0.29 for the fastest pair up to ≈ 1 for the slowest: fast pairs,
    whose rotation is least reliable at long range, decay the most.
    """
    _check_dim(d)
    f = torch.arange(d // 2, dtype=torch.float64)  # (d/2,)
    return (2 * f + 0.4 * d) / (1.4 * d)


def xpos_scales(
    positions: Numbers, d: int, scale_base: float = 512.0, centre: float = 0.0, downscale: bool = False
) -> Tensor:
    """ζ_f^((n − c)/γ) per position n and pair f, (n, d/2) float64; downscale=True gives ζ_f^(−(n − c)/γ).

    Queries are multiplied by the first, keys by the second (torchscale `downscale=True`), so the
    score of query i and key j carries ζ_f^((i − j)/γ): < 1 when the key is in the past (i > j),
    and > 1 for a key in the future — xPos is meant for causal attention.
    The centre c (torchscale: about half the length) keeps both factors near 1 and cancels in q·k.
    Without it ζ^(−n/γ) overflows: float32 ends near e^88, i.e. n/γ ≈ 70 for the fastest pair.
    """
    if scale_base <= 0:
        raise ValueError("scale_base must be positive")
    pos = as_float64(positions)  # (n,)
    exponent = (pos - centre) / scale_base  # (n,)
    if downscale:
        exponent = -exponent
    return xpos_zeta(d)[None, :] ** exponent[:, None]  # (n, d/2)


# ---------------------------------------------------------------------------------------------
# Encoders on the shared interface (kind "rotary"): RoPE with other frequencies or a decay
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScaledRopeConfig(RopeConfig):
    scale: float = 4.0  # s: the context is stretched from L to s·L
    original_length: int = 32  # L: the toy's nominal "trained" length (Llama 2 would be 4096)


@dataclass(frozen=True)
class YarnConfig(ScaledRopeConfig):
    beta_fast: float = 32.0  # pairs turning more than this many times in L are kept as they are
    beta_slow: float = 1.0  # pairs turning fewer times than this are fully interpolated (÷ s)
    truncate: bool = True  # floor/ceil the ramp's ends, as the reference code and HF's default


@dataclass(frozen=True)
class XposConfig(RopeConfig):
    scale_base: float = 512.0  # γ: torchscale's default; the decay over Δ positions is ζ^(Δ/γ)


class _Scaled(RoPE):
    """RoPE with frequencies stretched s times past a trained length L (PI, NTK, dynamic, YaRN)."""

    changes_frequencies = True
    config: ScaledRopeConfig

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: ScaledRopeConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        config = config or self.default_config()
        _check_scale(config.scale)
        if config.original_length < 1:
            raise ValueError("original_length must be at least 1")
        super().__init__(d_model, n_heads, config, generator)

    @staticmethod
    def default_config() -> ScaledRopeConfig:
        return ScaledRopeConfig()

    @classmethod
    def stretched_config(
        cls,
        base: float,
        scale: float,
        original_length: int,
        scale_base: float = 512.0,
        beta_fast: float = 32.0,
        beta_slow: float = 1.0,
    ) -> ScaledRopeConfig:
        return ScaledRopeConfig(base=base, scale=scale, original_length=original_length)


class PositionInterpolationRoPE(_Scaled):
    """RoPE with θ_f / s (Chen et al. 2023)."""

    name = "rope-pi"
    label = "RoPE + Position Interpolation (Chen et al. 2023)"
    paper = PAPERS["pi"]
    scheme = "pi"

    def frequencies(self, seq_len: int) -> Tensor:
        return pi_frequencies(self.rotary_dim, self.config.base, self.config.scale)


class NTKAwareRoPE(_Scaled):
    """RoPE with the base raised to base·s^(d/(d−2)) (bloc97 2023)."""

    name = "rope-ntk"
    label = "RoPE + NTK-aware scaling (bloc97 2023)"
    paper = PAPERS["ntk"]
    scheme = "ntk"

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: ScaledRopeConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(d_model, n_heads, config, generator)
        ntk_base(self.rotary_dim, self.config.base, self.config.scale)  # refuses d = 2 at construction

    def frequencies(self, seq_len: int) -> Tensor:
        return ntk_frequencies(self.rotary_dim, self.config.base, self.config.scale)


class DynamicNTKRoPE(_Scaled):
    """NTK-aware scaling recomputed from the current length (emozilla 2023; HF 'dynamic')."""

    name = "rope-dynamic"
    label = "RoPE + dynamic NTK (emozilla 2023)"
    paper = PAPERS["dynamic"]
    scheme = "dynamic"
    # θ_f follows the largest position in play: shifting every position past L changes the logits.
    shift_invariant = False

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: ScaledRopeConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        super().__init__(d_model, n_heads, config, generator)
        ntk_base(self.rotary_dim, self.config.base, self.config.scale)

    def frequencies(self, seq_len: int) -> Tensor:
        c = self.config
        return dynamic_ntk_frequencies(self.rotary_dim, c.base, c.scale, c.original_length, seq_len)


class YaRNRoPE(_Scaled):
    """NTK-by-parts frequencies and the attention factor (Peng et al. 2023; HF 'yarn'): the logits are
    multiplied by (0.1 ln s + 1)², an inverse temperature (1/t), applied as 0.1 ln s + 1 on q and on k."""

    name = "rope-yarn"
    label = "RoPE + YaRN (Peng et al. 2023)"
    paper = PAPERS["yarn"]
    scheme = "yarn"
    config: YarnConfig

    def __init__(
        self,
        d_model: int,
        n_heads: int,
        config: ScaledRopeConfig | None = None,
        generator: torch.Generator | None = None,
    ) -> None:
        if config is not None and not isinstance(config, YarnConfig):
            # A plain ScaledRopeConfig (what PI and NTK take) gets YaRN's default β's and truncation.
            config = YarnConfig(**config.__dict__)
        super().__init__(d_model, n_heads, config, generator)
        c = self.config
        yarn_ramp(self.rotary_dim, c.base, c.original_length, c.beta_fast, c.beta_slow, c.truncate)  # checks the β's

    @staticmethod
    def default_config() -> YarnConfig:
        return YarnConfig()

    @classmethod
    def stretched_config(
        cls,
        base: float,
        scale: float,
        original_length: int,
        scale_base: float = 512.0,
        beta_fast: float = 32.0,
        beta_slow: float = 1.0,
    ) -> YarnConfig:
        return YarnConfig(
            base=base, scale=scale, original_length=original_length, beta_fast=beta_fast, beta_slow=beta_slow
        )

    def frequencies(self, seq_len: int) -> Tensor:
        c = self.config
        return yarn_frequencies(
            self.rotary_dim, c.base, c.scale, c.original_length, c.beta_fast, c.beta_slow, c.truncate
        )

    def attention_factor(self, seq_len: int) -> float:
        return yarn_attention_factor(self.config.scale)


class XPos(RoPE):
    """RoPE whose pair f is scaled by ζ_f^(n/γ) on queries and ζ_f^(−n/γ) on keys (Sun et al. 2022).

    The logit depends on j − i like RoPE's (relative_sign); the paper writes the decay ζ^((i − j)/γ)
    with i − j (query − key).
    """

    name = "xpos"
    label = "xPos (Sun et al. 2022)"
    paper = PAPERS["xpos"]
    scheme = "xpos"
    config: XposConfig

    def __init__(
        self, d_model: int, n_heads: int, config: XposConfig | None = None, generator: torch.Generator | None = None
    ) -> None:
        config = config or XposConfig()
        if config.scale_base <= 0:
            raise ValueError("scale_base must be positive")
        super().__init__(d_model, n_heads, config, generator)

    @classmethod
    def stretched_config(
        cls,
        base: float,
        scale: float,
        original_length: int,
        scale_base: float = 512.0,
        beta_fast: float = 32.0,
        beta_slow: float = 1.0,
    ) -> XposConfig:
        """xPos stretches nothing: it keeps RoPE's θ_f and adds its decay, whose length is γ."""
        return XposConfig(base=base, scale_base=scale_base)

    def pair_scales(self, positions: Tensor, role: str, centre: float) -> Tensor | None:
        return xpos_scales(positions, self.rotary_dim, self.config.scale_base, centre, downscale=(role == "key"))

    def pair_decay(self) -> tuple[Tensor, float] | None:
        return xpos_zeta(self.rotary_dim), self.config.scale_base
