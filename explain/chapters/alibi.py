"""What the "ALiBi and NoPE" chapter shows, computed from encoders/alibi.py and encoders/nope.py.

Every function takes primitives and returns numpy (or dataclasses of numpy), so the page can cache it
with st.cache_data and the tests can check it without Streamlit.

Axis legend: h heads, i query position, j key position, n length, L length of an extended text.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import alibi as enc
from encoders import build
from encoders.alibi import AlibiConfig, alibi_slopes
from encoders.attention import attend, causal_mask, split_heads, toy_layer
from encoders.nope import equal_logit_weights
from encoders.text import token_embeddings, token_key, tokenize
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .common import run_tokens
from .why_order import shuffle_order

D_HEAD = 16  # every head has 16 dimensions, so content logits keep one scale whatever H is
MAX_HEADS = 16  # the page's head slider; 16 × (256 × 256) maps is what a rerun can afford
MAX_TEST_LEN = 2048  # the longest extended text; only the last query is computed, so this is cheap
MAX_COUNT_LEN = 256  # the NoPE counting experiments
GRID = 64  # the every-head small multiples draw at most this many tokens
QUESTION_OPTIONS = 8  # up to this many heads, the slope question offers every head
BOS = "[BOS]"  # the distinct first token of the counting experiment (not "<s>": a plotly title
#               would read it as HTML strikethrough; not "⟨s⟩": common fonts lack the brackets)
FILLER = "a"  # the repeated word after it


def d_model_for(n_heads: int) -> int:
    return D_HEAD * n_heads


def slope_label(m: float) -> str:
    """1/2, 1/256 for integer powers of two; 2^-1.5 otherwise (H = 16, the 9–15-head extras)."""
    e = -np.log2(m)
    if abs(e - round(e)) < 1e-9:
        return f"1/{2 ** round(e)}"
    return f"2^-{e:.4g}"


# ---------------------------------------------------------------------------------------- slopes


@dataclass
class SlopesView:
    slopes: np.ndarray  # (h,) m_h in head order (not sorted)
    exponents: np.ndarray  # (h,) −log2 m_h
    labels: tuple[str, ...]  # "1/4", …
    windows: np.ndarray  # (h,) 1/m_h: the distance at which the penalty reaches −1


def slopes_view(n_heads: int) -> SlopesView:
    m = alibi_slopes(n_heads).numpy()
    return SlopesView(m, -np.log2(m), tuple(slope_label(float(v)) for v in m), 1.0 / m)


# ---------------------------------------------------------------------------------- on the sentence


@dataclass
class HeadsView:
    tokens: tuple[str, ...]
    slopes: np.ndarray  # (h,)
    bias: np.ndarray  # (h, i, j) the ALiBi term, NaN where the causal mask hides the key
    weights: np.ndarray  # (h, i, j) attention with content + bias
    weights_content_only: np.ndarray  # (h, i, j) the same layer with the bias switched off (= NoPE)

    def grid(self, a: np.ndarray) -> np.ndarray:
        """(h, i, j) → the first GRID tokens of every head: what the small multiples draw."""
        return a[:, :GRID, :GRID]

    @property
    def cut(self) -> bool:
        """Are the small multiples cut (more than GRID tokens)?"""
        return len(self.tokens) > GRID

    def pair(self, head: int) -> np.ndarray:
        """(2, i, j): head `head` (1-based) with the bias, and the same head without it."""
        return np.stack([self.weights[head - 1], self.weights_content_only[head - 1]])


# Cache bounds (pages/bias/alibi.py): one entry of heads_view holds up to 16 × 256 × 256 × 3 float32 (~13 MB),
# hence 16 entries.
@bounded(16)
def heads_view(sentence: str, seed: int, n_heads: int, causal: bool) -> HeadsView:
    """One toy layer with ALiBi on the sentence, and the same layer with the position term off."""
    tokens = tokenize(sentence).tokens
    D = d_model_for(n_heads)
    with_bias = run_tokens(tokens, seed, "alibi", D, n_heads, causal)
    without = run_tokens(tokens, seed, "alibi", D, n_heads, causal, term_scales=(("position", 0.0),))
    bias = with_bias.terms["position"].astype(np.float32, copy=True)  # (h, i, j)
    if causal:
        n = len(tokens)
        bias[:, ~causal_mask(n, n).numpy()] = np.nan
    # float32 (what the layer computed in): half the cache and the pickling of float64.
    return HeadsView(
        tokens,
        alibi_slopes(n_heads).numpy(),
        bias,
        with_bias.weights.astype(np.float32),
        without.weights.astype(np.float32),
    )


# ------------------------------------------------------------------------- the code's +m·j form


@dataclass
class CodeFormView:
    tokens: tuple[str, ...]
    head: int  # 0-based
    slope: float
    bias_paper: np.ndarray  # (i, j) −m·(i − j), NaN above the diagonal (masked)
    bias_code: np.ndarray  # (i, j) +m·j, every row the same
    weights_symmetric_bidirectional: np.ndarray  # (i, j)
    weights_code_bidirectional: np.ndarray  # (i, j)
    diff_causal: float  # max |paper − code| over the causal weights (rounding only)
    diff_bidirectional: float  # max |symmetric − code| without a mask (a real difference)
    last_key_mass_code: float  # mean weight the code form, unmasked, puts on the last key
    last_key_mass_symmetric: float  # the same for the symmetric form

    @property
    def bias_pair(self) -> np.ndarray:
        """(2, i, j): the paper's causal bias and the code's +m·j."""
        return np.stack([self.bias_paper, self.bias_code])

    @property
    def weights_pair_bidirectional(self) -> np.ndarray:
        """(2, i, j): without a mask, the symmetric form's attention and the code form's."""
        return np.stack([self.weights_symmetric_bidirectional, self.weights_code_bidirectional])


@bounded(16)
def code_form_view(sentence: str, seed: int, n_heads: int, head: int) -> CodeFormView:
    """The reference code's +m·j against the paper's −m·(i − j), with and without the mask (float64)."""
    tokens = tokenize(sentence).tokens
    D, n = d_model_for(n_heads), len(tokens)
    code = AlibiConfig(form="code")
    paper_c = run_tokens(tokens, seed, "alibi", D, n_heads, True, float64=True)
    code_c = run_tokens(tokens, seed, "alibi", D, n_heads, True, config=code, float64=True)
    sym_b = run_tokens(tokens, seed, "alibi", D, n_heads, False, float64=True)
    code_b = run_tokens(tokens, seed, "alibi", D, n_heads, False, config=code, float64=True)
    bias_paper = paper_c.terms["position"][head].copy()
    bias_paper[~causal_mask(n, n).numpy()] = np.nan
    h = slice(head, head + 1)
    return CodeFormView(
        tokens,
        head,
        float(alibi_slopes(n_heads)[head]),
        bias_paper,
        code_c.terms["position"][head].copy(),
        sym_b.weights[head],
        code_b.weights[head],
        float(np.abs(paper_c.weights[h] - code_c.weights[h]).max()),
        float(np.abs(sym_b.weights[h] - code_b.weights[h]).max()),
        float(code_b.weights[head][:, -1].mean()),
        float(sym_b.weights[head][:, -1].mean()),
    )


# --------------------------------------------------------------------- past the training length


def extended_tokens(sentence: str, length: int) -> tuple[str, ...]:
    """The sentence's tokens repeated until there are `length` of them (a longer text to test on)."""
    tokens = tokenize(sentence).tokens
    if not tokens:
        return ()
    reps = -(-length // len(tokens))
    return (tokens * reps)[:length]


def last_query_weights(
    tokens: tuple[str, ...], seed: int, n_heads: int, term_scales: tuple[tuple[str, float], ...] = ()
) -> np.ndarray:
    """(h, L) attention weights of the *last* token over all L keys, float64, through the one
    attention path. Only one query row is computed (queries align to the end of the keys, as with
    a cache), so a 2048-token text costs ~2048 logits per head instead of 2048²."""
    H, D = n_heads, d_model_for(n_heads)
    x = token_embeddings(tuple(token_key(t) for t in tokens), D, seed)[None].double()  # (1, L, D)
    layer = toy_layer(build("alibi", D, H, seed), seed).double()
    positions = torch.arange(len(tokens))  # (L,)
    with torch.inference_mode():
        inputs = layer.encoder.encode_input(x, positions)  # (1, L, D): ALiBi adds nothing
        q = split_heads(inputs[:, -1:] @ layer.w_q, H)  # (1, h, 1, d)
        k = split_heads(inputs @ layer.w_k, H)  # (1, h, L, d)
        v = split_heads(inputs @ layer.w_v, H)  # (1, h, L, d)
        _, _, weights, _ = attend(layer.encoder, q, k, v, positions[-1:], positions, True, dict(term_scales))
    return weights[0, :, 0].numpy()  # (h, L)


def sample_distances(length: int, log: bool, points: int = 300) -> np.ndarray:
    """At most ~`points` distances out of 0 … length − 1 for drawing a curve: evenly spaced, or
    geometrically spaced from 1 for a log axis. Always includes the last distance."""
    if log:
        d = np.geomspace(1, max(length - 1, 1), points) if length > 1 else np.array([0.0])
    else:
        d = np.linspace(0, length - 1, points)
    return np.unique(np.append(np.round(d).astype(int), length - 1))


def mass_within(weights_last: np.ndarray) -> np.ndarray:
    """(h, L) → (h, L): entry w is the attention mass on keys at distance ≤ w (i − j, query − key)."""
    return np.cumsum(weights_last[:, ::-1], axis=1)  # reversed: column 0 is the query itself


def first_distance_reaching(cumulative: np.ndarray, level: float) -> np.ndarray:
    """(h, L) cumulative mass → (h,) the smallest distance holding at least `level` of the mass."""
    return np.asarray(np.argmax(cumulative >= level - 1e-12, axis=1))


@dataclass
class Extrapolation:
    tokens: tuple[str, ...]  # the extended text (L,)
    train_len: int
    slopes: np.ndarray  # (h,)
    distances: np.ndarray  # (L,) 0 … L−1, i − j from the last query
    penalty: np.ndarray  # (h, L) −m·distance: keeps growing, never undefined
    within: np.ndarray  # (h, L) this layer's attention mass within each distance
    within_bias_only: np.ndarray  # (h, L) the same with the content term off: the bias alone
    half_distance: np.ndarray  # (h,) distance holding half of this layer's attention
    half_distance_bias_only: np.ndarray  # (h,)
    beyond_train: np.ndarray  # (h,) mass on keys at distances ≥ train_len (never seen in training)

    def curves(self, log_x: bool, scaled: bool) -> ExtrapolationCurves:
        """What the two plots draw: a few hundred sampled distances, not all L of them."""
        L = self.distances.size
        d_lin = sample_distances(L, log=False)
        d = sample_distances(L, log=log_x)
        # In units of 1/m (m·distance) every head's bias-alone curve is the same one.
        x = self.slopes[:, None] * d[None, :] if scaled else d  # (h, points) or (points,)
        return ExtrapolationCurves(
            d_lin, self.penalty[:, d_lin], x, self.within[:, d], self.within_bias_only[:, d], scaled
        )


@dataclass
class ExtrapolationCurves:
    penalty_x: np.ndarray  # (points,) evenly spaced distances
    penalty: np.ndarray  # (h, points) −m·distance there
    x: np.ndarray  # (points,) distances, or (h, points) m·distance per head when scaled
    within: np.ndarray  # (h, points) attention mass within each distance
    within_bias_only: np.ndarray  # (h, points)
    scaled: bool


@bounded(16)
def extrapolation(sentence: str, seed: int, n_heads: int, train_len: int, test_len: int) -> Extrapolation:
    """The sentence repeated to `test_len` tokens, seen from its last token, against a model
    "trained" on `train_len` tokens (the toy layer is not trained: train_len only marks which
    distances such a model would have met, 0 … train_len − 1)."""
    test_len = max(test_len, train_len)
    long = extended_tokens(sentence, test_len)
    m = alibi_slopes(n_heads).numpy()
    w = last_query_weights(long, seed, n_heads)
    w0 = last_query_weights(long, seed, n_heads, (("content", 0.0),))
    within, within0 = mass_within(w), mass_within(w0)
    distances = np.arange(test_len)
    beyond = 1.0 - within[:, train_len - 1] if train_len < test_len else np.zeros(n_heads)
    return Extrapolation(
        long,
        train_len,
        m,
        distances,
        -m[:, None] * distances[None, :],
        within,
        within0,
        first_distance_reaching(within, 0.5),
        first_distance_reaching(within0, 0.5),
        np.clip(beyond, 0.0, 1.0),
    )


# --------------------------------------------------------------------------------------- NoPE


@dataclass
class NopeSymmetry:
    tokens: tuple[str, ...]
    order: tuple[int, ...]  # shuffled[k] = tokens[order[k]]
    diff_bidirectional: float  # max |output − unshuffled output of the shuffled run|
    diff_causal: float
    per_token_bidirectional: np.ndarray  # (n,) max |Δ output| per token, original order
    per_token_causal: np.ndarray  # (n,)

    def shuffled(self, limit: int) -> tuple[tuple[str, ...], bool]:
        """The first `limit` tokens in shuffled order, and whether there are more."""
        return tuple(self.tokens[k] for k in self.order[:limit]), len(self.order) > limit


@bounded(16)
def nope_symmetry(sentence: str, seed: int, shuffle_count: int) -> NopeSymmetry:
    """Shuffle the sentence, run NoPE with and without the causal mask, put outputs back (float64)."""
    tokens = tokenize(sentence).tokens
    order = shuffle_order(len(tokens), seed, shuffle_count)
    inverse = np.argsort(np.asarray(order))
    shuffled = tuple(tokens[k] for k in order)
    per_token = {}
    for causal in (False, True):
        a = run_tokens(tokens, seed, "none", 64, 4, causal, float64=True).output
        b = run_tokens(shuffled, seed, "none", 64, 4, causal, float64=True).output[inverse]  # (n, D)
        per_token[causal] = np.abs(a - b).max(axis=1)
    return NopeSymmetry(
        tokens,
        tuple(order),
        float(per_token[False].max(initial=0.0)),
        float(per_token[True].max(initial=0.0)),
        per_token[False],
        per_token[True],
    )


@dataclass
class Counting:
    positions: np.ndarray  # (n,) i
    formula: np.ndarray  # (n,) 1/(i + 1)
    uniform_causal: np.ndarray  # (n,) weight on key 0 when all logits are equal, causal mask
    same_word_causal: np.ndarray  # (n,) the toy NoPE layer on "a a a …": weight on the first "a"
    same_word_bidirectional: np.ndarray  # (n,)
    share_uniform_causal: np.ndarray  # (n,) share of v([BOS]) in the output of "[BOS] a a …", all logits equal
    share_uniform_bidirectional: np.ndarray  # (n,)
    share_head_causal: np.ndarray  # (n,) the same for the toy head (content logits on)
    weight_head_causal: np.ndarray  # (n,) that head's attention weight on [BOS]
    recovered_positions: np.ndarray  # (n,) 1/share − 1 from the uniform causal outputs
    max_recovery_error: float  # max |recovered − i|


def _share(outputs: np.ndarray, u_first: np.ndarray, u_rest: np.ndarray) -> np.ndarray:
    """Coefficient c_i in output_i = u_rest + c_i·(u_first − u_rest), by projection."""
    direction = u_first - u_rest
    return np.asarray((outputs - u_rest) @ direction / (direction @ direction))


@bounded(16)
def counting(n: int, seed: int) -> Counting:
    """How a causal NoPE layer can count: uniform attention gives 1/(i + 1), and the output
    carries that number. One head, d = 64, float64."""
    D = 64
    uniform_causal = equal_logit_weights(n, True).numpy()[:, 0]
    same = {c: run_tokens((FILLER,) * n, seed, "none", D, 1, c, float64=True).weights[0][:, 0] for c in (False, True)}
    seq = (BOS,) + (FILLER,) * (n - 1)
    # A one-token text attends only to itself, so its output is that token's value after W_o.
    u_bos = run_tokens((BOS,), seed, "none", D, 1, False, float64=True).output[0]
    u_fill = run_tokens((FILLER,), seed, "none", D, 1, False, float64=True).output[0]
    off = (("content", 0.0),)
    share_u = {
        c: _share(run_tokens(seq, seed, "none", D, 1, c, term_scales=off, float64=True).output, u_bos, u_fill)
        for c in (False, True)
    }
    head = run_tokens(seq, seed, "none", D, 1, True, float64=True)
    i = np.arange(n)
    recovered = 1.0 / share_u[True] - 1.0
    return Counting(
        i,
        1.0 / (i + 1.0),
        uniform_causal,
        same[True],
        same[False],
        share_u[True],
        share_u[False],
        _share(head.output, u_bos, u_fill),
        head.weights[0][:, 0],
        recovered,
        float(np.abs(recovered - i).max()),
    )


# ------------------------------------------------------------------------ the slopes, for a learner


@dataclass(frozen=True)
class SlopesSection:
    view: SlopesView
    head_names: tuple[str, ...]  # "head 3 · m = 1/8", in head order
    hover: tuple[str, ...]  # per head: −log2 m and 1/m
    question: Question | None  # None for a single head: nothing to compare
    note: str  # the rule for a head count that is not a power of two ("" for a power of two)


def power_of_two_below(n_heads: int) -> int:
    """c = 2^⌊log2 H⌋, the head count whose slopes the reference code starts from."""
    return 1 << (n_heads.bit_length() - 1)


def slopes_question(n_heads: int, lang: str) -> Question | None:
    """Which head is steepest? Every head is an option up to QUESTION_OPTIONS heads; beyond, a few
    spread over the range, always including the steepest. The answer and every fact the
    explanation states come from the slopes the figure draws."""
    if n_heads < 2:
        return None
    sv = slopes_view(n_heads)
    steepest = int(np.argmax(sv.slopes)) + 1  # heads are numbered from 1 on the page
    if n_heads <= QUESTION_OPTIONS:
        options: list[int] = list(range(1, n_heads + 1))
    else:
        options = sorted({1, 2, n_heads // 2, n_heads - 1, n_heads, steepest})
    c = power_of_two_below(n_heads)
    power = c == n_heads
    facts: dict[str, object] = {
        "H": n_heads,
        "head": steepest,
        "m": sv.labels[steepest - 1],
        "power_of_two": power,
        "c": c,
        "c2": 2 * c,
        "first_extra": c + 1,
        "m_first": sv.labels[0],
        "m_first_extra": "" if power else sv.labels[c],
    }
    key = "alibi.slopes.answer_power" if power else "alibi.slopes.answer_extra"
    return Question(
        key="alibi_q",
        prompt=t("alibi.slopes.question", lang, H=n_heads),
        options=tuple(options),
        labels=tuple(t("alibi.slopes.option", lang, h=h) for h in options),
        answer=steepest,
        explanation=t(key, lang, **facts),
        facts=facts,
    )


def slopes_section(n_heads: int, lang: str) -> SlopesSection:
    sv = slopes_view(n_heads)
    c = power_of_two_below(n_heads)
    note = (
        ""
        if c == n_heads
        else t(
            "alibi.slopes.not_power", lang, H=n_heads, c=c, rest=n_heads - c, c2=2 * c, extra=", ".join(sv.labels[c:])
        )
    )
    return SlopesSection(
        sv,
        tuple(t("alibi.head_name", lang, h=h + 1, m=sv.labels[h]) for h in range(n_heads)),
        tuple(t("alibi.slopes.hover", lang, e=e, w=w) for e, w in zip(sv.exponents, sv.windows, strict=True)),
        slopes_question(n_heads, lang),
        note,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="alibi",
    part="Bias",
    page="pages/bias/alibi.py",
    icon=":material/trending_down:",
    order=100,
    papers=(enc.PAPER,),
    sources=(
        "encoders.alibi:alibi_slopes",
        "encoders.alibi:alibi_bias",
        "encoders.alibi:alibi_bias_symmetric",
        "encoders.alibi:alibi_bias_code",
        "encoders.alibi:Alibi.logit_terms",
        "encoders.nope:equal_logit_weights",
    ),
    encodings=("alibi",),
    derivations=("alibi-shift-invariance",),
    link={"alibi_heads": "6", "alibi_causal": "false", "alibi_train_len": "64"},
    link_shows={"alibi_heads": 6, "alibi_causal": False, "alibi_train_len": 64},
)
