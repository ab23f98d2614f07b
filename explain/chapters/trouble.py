"""What "The trouble with absolute positions" shows, computed from the live encoders (numbers only).

Three troubles, one function each:
    shift_experiment   put a prefix ("Well,") in front: every position vector moves, and so does the
                       logit between the *same* two words
    length_experiment  positions past the training length: the sinusoidal table has vectors there, but
                       vectors (and angles) it never saw; a learned table has no rows at all
    four_terms, tupe_terms   (in trouble_terms.py) the score split into its four terms, and TUPE's
                       untied form of it

Axis legend: n tokens, i query position, j key position, D model dimension, f frequency pair.
Row-vector convention as in encoders/attention.py: q_i = (x_i + p_i) @ w_q, so the paper's W_q is
w_qᵀ; logits are q·k/√d with d the head dimension (one head here, d = D).

Every function takes primitives and returns numpy arrays or dataclasses of them (with what the page
draws as properties), so the page can cache them and tests can check them without Streamlit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders.base import PositionOutOfRange
from encoders.learned import LearnedAbsolute, LearnedConfig
from encoders.sinusoidal import Sinusoidal, sinusoidal_frequencies, sinusoidal_rows
from encoders.text import MAX_TOKENS, Tokens, tokenize
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import TOY_D_MODEL, run_tokens

D_MODEL = TOY_D_MODEL  # the toy layer's size on every page, here as one head of dimension 64
MAX_PREFIX_CHARS = 60  # the prefix box takes this many characters …
MAX_PREFIX_TOKENS = 16  # … and at most this many of its tokens are used
MAX_TRAIN_LEN = 256  # bounds of the length sliders (the page's help texts say so)
MAX_TEST_LEN = 1024
SHOW_TOKENS = 14  # tokens spelled out in the "before / after" lines; the figures show them all
SMALL = 40  # up to this many tokens a score map is drawn alone, with its numbers in the cells


@dataclass(frozen=True)
class Example:
    """The chapter's example in one language: a three-word sentence, then the same with a two-token
    prefix in front. The prose of that language discusses exactly these tokens; `query` and `key`
    index the pair the page's predict question asks about."""

    sentence: str
    prefix: str
    query: int
    key: int


EXAMPLES = {
    "en": Example("I like CV", "Well,", query=1, key=2),  # "like" → "CV"
    "ko": Example("나는 CV를 좋아해", "음,", query=2, key=1),  # "좋아해" → "CV를"
}


# -- 1. shift sensitivity ------------------------------------------------------------------------


@dataclass
class ShiftResult:
    tokens: tuple[str, ...]  # the original words (n,)
    prefix: tuple[str, ...]  # the prefix tokens (k,)
    shift: int  # k: every original word moves from position p to p + k
    pe_before: np.ndarray  # (n, D) the vector added under each word, positions 0 … n−1
    pe_after: np.ndarray  # (n, D) the same words at positions k … k+n−1
    pe_cosine: np.ndarray  # (n,) cos(PE(p), PE(p+k)) per word
    logits_before: np.ndarray  # (n, n) query i, key j, among the original words
    logits_after: np.ndarray  # (n, n) the same pairs of words after the prefix
    max_abs_change: float
    mean_abs_change: float
    mean_abs_logit: float  # mean |logit| before, to judge the size of the change
    largest_pair: tuple[int, int]  # (i, j) of the largest |change|
    content_max_change: float  # the position-free baseline (NoPE logits): 0 exactly
    prefixed_run_max_diff: float  # whole prefixed sentence vs positions_offset = k: the same logits

    @property
    def logits_diff(self) -> np.ndarray:
        return np.asarray(self.logits_after - self.logits_before)  # (n, n)

    @property
    def pe_change(self) -> np.ndarray:
        """(n, D) p_{i+k} − p_i under each word."""
        return np.asarray(self.pe_after - self.pe_before)

    @property
    def mean_cosine(self) -> float:
        """cos(old vector, new vector), averaged over the words (they are all equal)."""
        return float(np.mean(self.pe_cosine))

    @property
    def cosine_spread(self) -> float:
        """max − min of that cosine across the words: rounding only."""
        return float(np.ptp(self.pe_cosine))

    @property
    def score_limit(self) -> float:
        """One colour limit for the before and after maps."""
        return float(max(np.abs(self.logits_before).max(), np.abs(self.logits_after).max()))

    @property
    def small(self) -> bool:
        """Few enough words to draw each map alone, numbers in the cells."""
        return len(self.tokens) <= SMALL

    @property
    def before_after(self) -> np.ndarray:
        """(2, i, j) the maps without and with the prefix: the long-sentence grid."""
        return np.stack([self.logits_before, self.logits_after])

    @property
    def diff_panel(self) -> np.ndarray:
        """(1, i, j) the difference map as a one-panel grid."""
        return self.logits_diff[None]


def shift_experiment(
    tokens: tuple[str, ...], prefix: tuple[str, ...], seed: int, d_model: int = D_MODEL
) -> ShiftResult:
    """The same words without and with a prefix, through the seeded one-head sinusoidal layer.

    A logit involves only the query word, the key word and their two positions, so the prefix words
    themselves never enter the logits among the original words — only how many there are (k). We run
    the original words at positions k … k+n−1 (positions_offset = k) and check against running the
    whole prefixed sentence and keeping the original words' rows and columns.
    """
    n, k = len(tokens), len(prefix)
    if n == 0:
        raise ValueError("the sentence to shift has no tokens")
    before = run_tokens(tokens, seed, "sinusoidal", d_model, 1, float64=True)
    after = run_tokens(tokens, seed, "sinusoidal", d_model, 1, positions_offset=k, float64=True)
    whole = run_tokens(tuple(prefix) + tuple(tokens), seed, "sinusoidal", d_model, 1, float64=True)
    nope_before = run_tokens(tokens, seed, "none", d_model, 1, float64=True)
    nope_after = run_tokens(tokens, seed, "none", d_model, 1, positions_offset=k, float64=True)

    # What the encoder added under each word: the layer's input minus the bare token embedding.
    pe_before = before.inputs - nope_before.inputs  # (n, D)
    pe_after = after.inputs - nope_after.inputs  # (n, D)
    norms = np.linalg.norm(pe_before, axis=1) * np.linalg.norm(pe_after, axis=1)
    cosine = (pe_before * pe_after).sum(axis=1) / norms  # (n,)

    lb, la = before.logits[0], after.logits[0]  # (i, j)
    diff = np.abs(la - lb)
    i, j = np.unravel_index(int(np.argmax(diff)), diff.shape)
    return ShiftResult(
        tokens=tuple(tokens),
        prefix=tuple(prefix),
        shift=k,
        pe_before=pe_before,
        pe_after=pe_after,
        pe_cosine=cosine,
        logits_before=lb,
        logits_after=la,
        max_abs_change=float(diff.max()),
        mean_abs_change=float(diff.mean()),
        mean_abs_logit=float(np.abs(lb).mean()),
        largest_pair=(int(i), int(j)),
        content_max_change=float(np.abs(nope_after.logits[0] - nope_before.logits[0]).max()),
        prefixed_run_max_diff=float(np.abs(whole.logits[0, k:, k:] - la).max()),  # (i, j) of the words
    )


def shift_question(seed: int, lang: str) -> Question:
    """Put the prefix in front of the classic example: does the score of the example's pair of words
    change? Measured by the very experiment the section draws, on this language's example."""
    ex = EXAMPLES[lang]
    tokens = tokenize(ex.sentence, max_tokens=MAX_TOKENS).tokens
    prefix = tokenize(ex.prefix, max_tokens=MAX_PREFIX_TOKENS).tokens
    r = shift_experiment(tokens, prefix, seed)
    change = float(r.logits_diff[ex.query, ex.key])
    answer = "changes" if abs(change) > 1e-6 else "same"
    facts: dict[str, object] = {
        "change": change,
        "seed": seed,
        "k": len(prefix),
        "cosine": r.mean_cosine,
        "query": tokens[ex.query],
        "key": tokens[ex.key],
    }
    options = ("same", "changes")
    return Question(
        key="trouble_q",
        prompt=t(
            "trouble.shift.question",
            lang,
            sentence=ex.sentence,
            prefix=ex.prefix,
            query=tokens[ex.query],
            key=tokens[ex.key],
        ),
        options=options,
        labels=tuple(t(f"trouble.shift.opt_{o}", lang) for o in options),
        answer=answer,
        explanation=t(f"trouble.shift.explanation_{answer}", lang, **facts),
        facts=facts,
    )


@dataclass
class ShiftSection:
    base: Tokens  # the words shifted (the example, or the learner's sentence)
    prefix: Tokens  # the prefix, cut to MAX_PREFIX_TOKENS
    result: ShiftResult | None  # None when there are no words to shift

    @property
    def k(self) -> int:
        return len(self.prefix)

    @property
    def shown_tokens(self) -> tuple[str, ...]:
        """The words spelled out in the before / after lines (the first SHOW_TOKENS)."""
        return self.base.tokens[:SHOW_TOKENS]

    @property
    def more_tokens(self) -> int:
        """Words not spelled out."""
        return max(len(self.base) - SHOW_TOKENS, 0)


def shift_section(sentence: str, prefix_text: str, seed: int, use_example: bool, lang: str) -> ShiftSection:
    """Section 1 on the classic example of `lang` (use_example) or on `sentence`, with the prefix."""
    base = tokenize(EXAMPLES[lang].sentence if use_example else sentence, max_tokens=MAX_TOKENS)
    prefix = tokenize(prefix_text[:MAX_PREFIX_CHARS], max_tokens=MAX_PREFIX_TOKENS)
    result = None if base.empty else shift_experiment(base.tokens, prefix.tokens, seed)
    return ShiftSection(base, prefix, result)


# -- 2. length -----------------------------------------------------------------------------------


@dataclass
class LengthResult:
    l_train: int
    l_test: int
    pe: np.ndarray  # (l_test, D) float32: the sinusoidal table for positions 0 … l_test−1
    omega: np.ndarray  # (D/2,) ω_f
    train_max_angle: np.ndarray  # (D/2,) (l_train − 1)·ω_f, the largest angle pair f reached in training
    test_max_angle: np.ndarray  # (D/2,) (l_test − 1)·ω_f
    wrapped_in_training: np.ndarray  # (D/2,) bool: the pair turned a full circle within training
    angle_gap: np.ndarray  # (D/2,) radians: farthest a test angle (mod 2π) lies from every training angle
    nearest_distance: np.ndarray  # (l_test,) |PE(p) − PE(p')|, p' the nearest training position's vector
    learned_table: np.ndarray  # (l_test, D): the learned table's rows, NaN where no row exists
    learned_error: str | None  # the PositionOutOfRange message, or None when every position has a row
    learned_bad_position: int | None  # the position the encoder reported

    @property
    def beyond(self) -> bool:
        """Is the test longer than training?"""
        return self.l_test > self.l_train

    @property
    def pairs(self) -> np.ndarray:
        """(D/2,) f = 0 … D/2 − 1: the x axis of the angle plots."""
        return np.arange(self.omega.size)

    @property
    def full_turn(self) -> np.ndarray:
        """(D/2,) 2π at every pair: the dashed "one full turn" line."""
        return np.full(self.omega.size, 2 * np.pi)

    @property
    def farthest(self) -> np.ndarray:
        """(D/2,) π at every pair: the farthest a point can lie on a circle."""
        return np.full(self.omega.size, np.pi)

    @property
    def wrapped(self) -> int:
        """Pairs that turned a full circle during training."""
        return int(self.wrapped_in_training.sum())

    @property
    def worst_pair(self) -> int:
        """The pair with the most new territory."""
        return int(np.argmax(self.angle_gap))

    @property
    def end_line(self) -> float:
        """Where the "end of training" line is drawn: between the last trained position and the next."""
        return self.l_train - 0.5

    @property
    def positions(self) -> np.ndarray:
        """(l_test,) 0 … l_test − 1."""
        return np.arange(self.l_test)

    @property
    def step(self) -> float:
        """|p(1) − p(0)|: the distance between two neighbouring position vectors (the same for any
        two neighbours)."""
        return float(np.linalg.norm(self.pe[1] - self.pe[0])) if self.l_test > 1 else 0.0

    @property
    def step_line(self) -> np.ndarray:
        return np.full(self.l_test, self.step)


def circular_gap(train_angles: np.ndarray, test_angles: np.ndarray) -> float:
    """Largest distance (radians, along the circle) from a test angle to its nearest training angle."""
    if test_angles.size == 0:
        return 0.0
    seen = np.sort(np.mod(train_angles, 2 * np.pi))
    new = np.mod(test_angles, 2 * np.pi)
    idx = np.searchsorted(seen, new)  # seen[idx−1] ≤ new < seen[idx], wrapping at both ends
    above = seen[idx % seen.size] + np.where(idx == seen.size, 2 * np.pi, 0.0)
    below = seen[idx - 1] - np.where(idx == 0, 2 * np.pi, 0.0)
    return float(np.minimum(above - new, new - below).max())


def length_experiment(l_train: int, l_test: int, seed: int, d_model: int = D_MODEL) -> LengthResult:
    """A model trained on l_train positions meets l_test positions.

    Sinusoidal: every position has a vector, but pair f has only ever shown the model the angles
    t·ω_f for t < l_train. Pairs with (l_train − 1)·ω_f ≥ 2π went round the circle during training;
    slower pairs had seen only an arc, and positions past l_train take them off it.
    Learned: the table (drawn through the registry with max_len = l_train) has no row past l_train − 1,
    and the encoder raises PositionOutOfRange.
    """
    if not (1 <= l_train <= MAX_TRAIN_LEN and 1 <= l_test <= MAX_TEST_LEN):
        raise ValueError(f"lengths must be 1…{MAX_TRAIN_LEN} (training) and 1…{MAX_TEST_LEN} (test)")
    if d_model % 2:
        raise ValueError("d_model must be even: every sin channel needs its cos partner here")
    sin_enc = build("sinusoidal", d_model, 1, seed)
    assert isinstance(sin_enc, Sinusoidal)
    base = sin_enc.config.base
    positions = torch.arange(l_test)  # (l_test,)
    pe = sinusoidal_rows(positions, d_model, base)  # (l_test, D) float64
    omega = sinusoidal_frequencies(d_model, base).numpy()  # (D/2,)

    train_max = (l_train - 1) * omega
    test_max = (l_test - 1) * omega
    t_train = np.arange(l_train)
    t_new = np.arange(l_train, l_test)  # empty when the test fits in training
    gap = np.array([circular_gap(t_train * w, t_new * w) for w in omega])

    # Distance of each position's whole vector to the nearest vector seen in training.
    seen = sinusoidal_rows(torch.arange(l_train), d_model, base)  # (l_train, D)
    # Direct differences, not the |a|² + |b|² − 2a·b shortcut, so a seen position is at distance 0 exactly.
    dist = torch.cdist(pe[None], seen[None], compute_mode="donot_use_mm_for_euclid_dist")[0]  # (l_test, l_train)
    nearest = dist.min(dim=1).values.numpy()  # (l_test,)

    learned = build("learned", d_model, 1, seed, LearnedConfig(max_len=l_train))
    assert isinstance(learned, LearnedAbsolute)
    table = learned.table.detach().double().numpy()  # (l_train, D)
    padded = np.full((l_test, d_model), np.nan)
    rows = min(l_train, l_test)
    padded[:rows] = table[:rows]
    error, bad = None, None
    try:
        learned.encode_input(torch.zeros(1, l_test, d_model), positions)  # (1, l_test, D)
    except PositionOutOfRange as e:
        error, bad = str(e), e.position
    return LengthResult(
        l_train,
        l_test,
        pe.float().numpy(),
        omega,
        train_max,
        test_max,
        train_max >= 2 * np.pi,
        gap,
        nearest,
        padded,
        error,
        bad,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="trouble",
    part="Absolute",
    page="pages/absolute/trouble.py",
    icon=":material/warning:",
    order=30,
    sources=(
        "explain.chapters.trouble:shift_experiment",
        "explain.chapters.trouble:length_experiment",
        "explain.chapters.trouble:circular_gap",
        "explain.chapters.trouble_terms:four_terms",
        "explain.chapters.trouble_terms:relative_part",
        "explain.chapters.trouble_terms:toeplitz_deviation",
        "explain.chapters.trouble_terms:tupe_score",
    ),
    link={"trouble_base": "sidebar", "trouble_prefix": "Oh well,", "trouble_l_train": "16", "trouble_l_test": "64"},
    link_shows={"trouble_base": "sidebar", "trouble_prefix": "Oh well,", "trouble_l_train": 16, "trouble_l_test": 64},
)
