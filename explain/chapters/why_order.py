"""What the "Why order matters" chapter shows: attention without positions is permutation-equivariant.

Shuffle the tokens, run the same layer, put the outputs back in the original order: without a
positional encoding they are the very same vectors. With one, they are not. A recurrent network
(Elman 1990) on the same toy word vectors is the contrast: it reads the words one after another,
so its state at a word depends on every word before it, and the same shuffle changes it.

Every function takes primitives and returns numpy (or dataclasses of numpy), so the page can cache
it and the tests can check it without Streamlit.

Axis legend: n tokens, D model dimension, i query, j key.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders.base import derived_seed
from encoders.text import token_embeddings, token_key
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import TOY_D_MODEL, LayerView, run_tokens

D_MODEL = TOY_D_MODEL  # the toy layer's size on every page, here as one head of dimension 64
SHOWN_CHANNELS = 64  # output channels the maps draw
SAME, SLIGHT, DIFFERENT = "same", "slight", "different"  # the question's option ids
SAME_LEVEL = 1e-9  # below this, two float64 outputs are the same vector (rounding is ~1e-16)
SLIGHT_LEVEL = 0.1  # below this, "slightly different"
RECURRENT_GAIN = 0.9  # W_h's scale: below 1, so the state neither explodes nor dies over 256 steps


def shuffle_order(n: int, seed: int, shuffle_count: int) -> tuple[int, ...]:
    """The k-th shuffle of n tokens for this seed (k = 0: the original order).

    A shuffle that happens to leave every token in place is skipped, so a press of the button
    always moves something when n ≥ 2.
    """
    if shuffle_count == 0 or n < 2:
        return tuple(range(n))
    rng = np.random.default_rng([seed, shuffle_count, n])
    while True:
        perm = rng.permutation(n)
        if (perm != np.arange(n)).any():
            return tuple(int(p) for p in perm)


@dataclass
class Repeats:
    word: str
    positions: tuple[int, ...]
    max_abs_diff: float  # largest difference between the outputs at those positions


@dataclass
class PermutationResult:
    original: LayerView
    shuffled: LayerView
    order: tuple[int, ...]  # shuffled[k] = original[order[k]]
    unshuffled_output: np.ndarray  # shuffled outputs put back in the original order (n, D)
    max_abs_diff: float  # |original output − unshuffled output|, max over everything
    repeats: list[Repeats]

    @property
    def shuffled_tokens(self) -> tuple[str, ...]:
        return tuple(self.original.tokens[k] for k in self.order)

    @property
    def outputs_shown(self) -> np.ndarray:
        """(n, ≤ 64) the original run's outputs, the channels the map draws."""
        return self.original.output[:, :SHOWN_CHANNELS]

    @property
    def unshuffled_shown(self) -> np.ndarray:
        """(n, ≤ 64) the shuffled run's outputs, back in the original order."""
        return self.unshuffled_output[:, :SHOWN_CHANNELS]

    @property
    def difference_shown(self) -> np.ndarray:
        """(n, ≤ 64) original − shuffled-and-put-back."""
        return np.asarray(self.outputs_shown - self.unshuffled_shown)

    @property
    def exact(self) -> bool:
        """Are the outputs equal to the last bit (not only up to rounding)?"""
        return self.max_abs_diff == 0.0


def permutation_experiment(
    tokens: tuple[str, ...], seed: int, method: str, order: tuple[int, ...], d_model: int = D_MODEL
) -> PermutationResult:
    """One head, bidirectional (a causal mask alone already breaks the symmetry), float64."""
    shuffled_tokens = tuple(tokens[k] for k in order)
    a = run_tokens(tokens, seed, method, d_model=d_model, n_heads=1, float64=True)
    b = run_tokens(shuffled_tokens, seed, method, d_model=d_model, n_heads=1, float64=True)
    inverse = np.argsort(np.asarray(order))
    back = b.output[inverse]  # (n, D): row i is the output of original token i
    groups: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        groups.setdefault(token_key(tok), []).append(i)
    repeats = [
        Repeats(tokens[ps[0]], tuple(ps), float(np.abs(a.output[ps] - a.output[ps[0]]).max()))
        for ps in groups.values()
        if len(ps) > 1
    ]
    return PermutationResult(a, b, tuple(order), back, float(np.abs(a.output - back).max()), repeats)


def shuffle_view(tokens: tuple[str, ...], seed: int, shuffle_count: int, with_pe: bool) -> PermutationResult:
    """The experiment the page draws: the `shuffle_count`-th shuffle, with or without sinusoidal PE."""
    order = shuffle_order(len(tokens), seed, shuffle_count)
    return permutation_experiment(tokens, seed, "sinusoidal" if with_pe else "none", order)


# ------------------------------------------------------------------------------------ the question


def verdict(max_abs_diff: float) -> str:
    """The option that describes a measured largest difference."""
    if max_abs_diff < SAME_LEVEL:
        return SAME
    return SLIGHT if max_abs_diff < SLIGHT_LEVEL else DIFFERENT


def shuffle_question(tokens: tuple[str, ...], seed: int, shuffle_count: int, lang: str) -> Question | None:
    """Shuffled, without positions, put back: the same vectors? Measured on the learner's sentence,
    on the shuffle shown (the first one while the page shows the original order). None for fewer
    than two tokens: nothing to reorder."""
    n = len(tokens)
    if n < 2:
        return None
    r = shuffle_view(tokens, seed, max(1, shuffle_count), with_pe=False)
    answer = verdict(r.max_abs_diff)
    facts: dict[str, object] = {"diff": r.max_abs_diff, "n": n}
    key = "why_order.explanation" if answer == SAME else "why_order.broken"
    options = (SAME, SLIGHT, DIFFERENT)
    return Question(
        key="why_order_q",
        prompt=t("why_order.question", lang),
        options=options,
        labels=tuple(t(f"why_order.opt.{o}", lang) for o in options),
        answer=answer,
        explanation=t(key, lang, **facts),
        facts=facts,
    )


# ------------------------------------------------------------------------- a recurrent network


def recurrent_weights(seed: int, d_model: int = D_MODEL) -> tuple[torch.Tensor, torch.Tensor]:
    """(W_x, W_h), each (D, D) float64, drawn from the seed (a stream of their own, so they share
    no draws with the attention layer's W_q … W_o). Entries N(0, 1/D); W_h is scaled by 0.9 so the
    state stays of order one over hundreds of steps."""
    g = torch.Generator().manual_seed(derived_seed(seed, "why-order recurrence"))
    std = 1.0 / math.sqrt(d_model)
    w_x = torch.randn(d_model, d_model, generator=g, dtype=torch.float64) * std
    w_h = torch.randn(d_model, d_model, generator=g, dtype=torch.float64) * std * RECURRENT_GAIN
    return w_x, w_h


def elman_states(x: torch.Tensor, w_x: torch.Tensor, w_h: torch.Tensor) -> torch.Tensor:
    """A simple recurrent network (Elman 1990, "Finding Structure in Time": the hidden layer fed
    back as context; the standard form, not confirmed against the paper text; row convention, no
    bias):

        h_t = tanh(x_t W_x + h_{t−1} W_h),   h_{−1} = 0

    x (n, D) → states (n, D). Step t sees word t and, through h_{t−1}, every word before it: the
    order is in the computation itself, with no positional encoding at all."""
    h = torch.zeros(x.shape[1], dtype=x.dtype)  # (D,)
    states = []
    for x_t in x:  # one word after another: the loop *is* the order
        h = torch.tanh(x_t @ w_x + h @ w_h)  # (D,)
        states.append(h)
    return torch.stack(states) if states else torch.zeros(0, x.shape[1], dtype=x.dtype)  # (n, D)


@dataclass
class RecurrenceView:
    tokens: tuple[str, ...]
    order: tuple[int, ...]  # shuffled[k] = tokens[order[k]]
    attention_change: np.ndarray  # (n,) per word: max |Δ output| of the NoPE layer after un-shuffling
    recurrent_change: np.ndarray  # (n,) per word: max |Δ state| of the recurrent network
    repeat_state_diff: tuple[float, ...]  # per repeated word (as in the repeats table): its copies' states

    @property
    def attention_max(self) -> float:
        return float(self.attention_change.max(initial=0.0))

    @property
    def recurrent_max(self) -> float:
        return float(self.recurrent_change.max(initial=0.0))

    @property
    def unchanged_words(self) -> int:
        """Words whose recurrent state is the same (to rounding) in both orders."""
        return int((self.recurrent_change < SAME_LEVEL).sum())


def recurrence_view(tokens: tuple[str, ...], seed: int, shuffle_count: int, d_model: int = D_MODEL) -> RecurrenceView:
    """The shuffle of the first experiment through the recurrent network and through the NoPE
    attention layer, on the same toy word vectors (float64), outputs put back in the original order."""
    n = len(tokens)
    order = shuffle_order(n, seed, shuffle_count)
    inverse = np.argsort(np.asarray(order, dtype=int))
    x = token_embeddings(tuple(token_key(tok) for tok in tokens), d_model, seed).double()  # (n, D)
    w_x, w_h = recurrent_weights(seed, d_model)
    with torch.inference_mode():
        states = elman_states(x, w_x, w_h).numpy()  # (n, D)
        shuffled_states = elman_states(x[list(order)], w_x, w_h).numpy()[inverse]  # (n, D), original order
    attention = permutation_experiment(tokens, seed, "none", order, d_model)
    groups: dict[str, list[int]] = {}
    for i, tok in enumerate(tokens):
        groups.setdefault(token_key(tok), []).append(i)
    repeats = tuple(float(np.abs(states[ps] - states[ps[0]]).max()) for ps in groups.values() if len(ps) > 1)
    return RecurrenceView(
        tuple(tokens),
        order,
        np.abs(attention.original.output - attention.unshuffled_output).max(axis=1, initial=0.0),  # (n,)
        np.abs(states - shuffled_states).max(axis=1, initial=0.0),  # (n,)
        repeats,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="why-order",
    part="Absolute",
    page="pages/absolute/why_order.py",
    icon=":material/shuffle:",
    order=0,
    sources=(
        "encoders.attention:attend",
        "encoders.attention:SelfAttention.forward",
        "explain.chapters.why_order:elman_states",
    ),
    encodings=("none",),
    link={"with_pe": "true"},
    link_shows={"with_pe": True},
)
