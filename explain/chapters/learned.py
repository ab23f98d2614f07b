"""What the Learned APE chapter shows, computed from encoders/learned.py (numbers only).

Two halves:
  1. a toy, untrained lookup table with max_len rows on the learner's sentence — including what
     happens when the sentence is longer than the table (the encoder refuses, and we say why);
  2. a real trained table: all-MiniLM-L6-v2's 512 × 384 position embeddings, against the sinusoidal
     table of the same size — cosine similarity, similarity against distance, principal components,
     row norms.

The analyses here take a numpy table (the tests pass tables of their own); learned_real.py holds
the page's sections of the real table, which read it themselves. Importing this module reads nothing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders import learned as enc
from encoders.base import PositionOutOfRange
from encoders.learned import LearnedAbsolute, LearnedConfig
from encoders.sinusoidal import sinusoidal_table
from encoders.text import tokenize
from explain.chapter import Chapter
from explain.chapters import common
from explain.i18n import t
from explain.question import Question

from .common import run_tokens

# Channels of the toy table, the toy layer's width: enough to look like a table, small enough to read.
TOY_D_MODEL = common.TOY_D_MODEL
MAX_TOY_LEN = 256  # the max_len slider's bound (the pages draw at most 256 tokens anyway)
MIN_REAL_POSITIONS, MAX_REAL_POSITIONS = 16, 512  # the real table has 512 rows
# all-MiniLM-L6-v2's model card (README.md shipped with the weights): "The sequence length was limited
# to 128 tokens" during fine-tuning. A fact about its training, drawn as a reference line, not a result.
MINILM_FINE_TUNING_LEN = 128
FINE_TUNING_LINE = MINILM_FINE_TUNING_LEN - 0.5  # drawn between the last row fine-tuning used and the next
# Rows of the real table drawn at most (more: means of blocks of rows): its ~400 px of plot show 128
# rows at 3 px each, 256 at under 2 (and 256 rows × 384 channels were half a megabyte).
MAX_TABLE_ROWS = 128
MAX_MAP_SIDE = 128  # cells per side of a similarity map drawn at most
PLUS, ZERO, MINUS = "plus", "zero", "minus"  # the untrained-table question's option ids
ALIKE = 0.5  # a mean neighbour cosine above this reads "close to +1" (below −ALIKE: "close to −1")


# -- 1. the toy table on the learner's sentence ------------------------------------------------


@dataclass
class ToyTable:
    tokens: tuple[str, ...]  # the whole sentence (up to 256 tokens)
    max_len: int
    table: np.ndarray  # (max_len, D) the untrained table, seeded: every row the model has
    n_fit: int  # tokens that have a row: min(n, max_len)
    missing: tuple[int, ...]  # positions max_len … n−1: tokens with no row
    refusal: str | None  # the encoder's PositionOutOfRange message, or None when all tokens fit
    torch_refusal: str | None  # what torch.nn.Embedding itself says for the same lookup (or None)
    added: np.ndarray  # (n_fit, D) what the encoder added under each token that fits
    weights: np.ndarray  # (n, n) head-0 attention of the tokens that fit; NaN for rows/cols without a row
    neighbour_cosine: float  # mean cosine between rows p and p+1 of this untrained table (NaN if 1 row)

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def spare(self) -> int:
        """Rows the sentence leaves unused (0 when it runs past the table)."""
        return max(self.max_len - self.n, 0)

    @property
    def fitted_tokens(self) -> tuple[str, ...]:
        """The tokens that have a row: the rows of the "added" map."""
        return self.tokens[: self.n_fit]

    def without_row(self, limit: int) -> tuple[tuple[str, ...], int]:
        """The first `limit` tokens past the table, and how many more there are."""
        shown = self.tokens[self.max_len : self.max_len + limit]
        return shown, len(self.missing) - len(shown)


def untrained_rows(seed: int, max_len: int, d_model: int = TOY_D_MODEL) -> np.ndarray:
    """(max_len, D) the untrained table: the same registry call and seed as run_tokens uses, so
    these are the rows the layer adds (a shorter table is the first rows of a longer one)."""
    enc = build("learned", d_model, 1, seed, LearnedConfig(max_len=max_len))
    assert isinstance(enc, LearnedAbsolute)
    return enc.table.detach().numpy()


def toy_table(sentence: str, seed: int, max_len: int, d_model: int = TOY_D_MODEL) -> ToyTable:
    """The sentence through one attention layer whose input encoding is a table of max_len rows.

    The whole sentence is offered to the encoder first. If it is longer than the table, the encoder
    raises PositionOutOfRange — exactly as a BERT/GPT-2 lookup fails with an index error — and we
    keep its message, then run the layer on the tokens that do have a row, so the page can show
    both what works and what cannot.
    """
    if not 1 <= max_len <= MAX_TOY_LEN:
        raise ValueError(f"max_len must be 1…{MAX_TOY_LEN}")
    tokens = tokenize(sentence).tokens
    n = len(tokens)
    config = LearnedConfig(max_len=max_len)
    table = untrained_rows(seed, max_len, d_model)  # (max_len, D): the table the layer adds
    refusal = None
    try:
        view = run_tokens(tokens, seed, "learned", d_model, 1, config=config)
    except PositionOutOfRange as e:
        refusal = str(e)
        view = run_tokens(tokens[:max_len], seed, "learned", d_model, 1, config=config)
    n_fit = min(n, max_len)
    torch_refusal = None
    if n > max_len:
        # The same lookup through PyTorch's own embedding layer, as BERT and GPT-2 do it: its error,
        # live, rather than a message typed into the prose.
        try:
            torch.nn.Embedding.from_pretrained(torch.from_numpy(table))(torch.arange(n))  # type: ignore[no-untyped-call]
        except IndexError as e:
            torch_refusal = f"IndexError: {e}"
    nope = run_tokens(tokens[:n_fit], seed, "none", d_model, 1)  # the bare token embeddings
    weights = np.full((n, n), np.nan)
    weights[:n_fit, :n_fit] = view.weights[0] if n_fit else 0.0  # (i, j), head 0
    return ToyTable(
        tokens=tokens,
        max_len=max_len,
        table=table,
        n_fit=n_fit,
        missing=tuple(range(max_len, n)),
        refusal=refusal,
        torch_refusal=torch_refusal,
        added=view.inputs - nope.inputs,  # (n_fit, D)
        weights=weights,
        neighbour_cosine=mean_neighbour_cosine(table) if max_len > 1 else float("nan"),
    )


def neighbour_verdict(cosine: float) -> str:
    """The option a mean neighbour cosine reads as."""
    if cosine > ALIKE:
        return PLUS
    return MINUS if cosine < -ALIKE else ZERO


def mean_neighbour_cosine(table: np.ndarray) -> float:
    """Mean cos(row p, row p+1) over p = 0 … rows − 2."""
    return float(np.mean(np.diagonal(cosine_similarity(table), 1)))


def untrained_question(seed: int, max_len: int, lang: str, d_model: int = TOY_D_MODEL) -> Question | None:
    """How alike are neighbouring rows of the untrained table? Measured on the very table the page
    draws (same registry call, same seed). None for a one-row table: it has no neighbours."""
    if max_len < 2:
        return None
    cosine = mean_neighbour_cosine(untrained_rows(seed, max_len, d_model))
    answer = neighbour_verdict(cosine)
    facts: dict[str, object] = {
        "cosine": cosine,
        "spread": 1.0 / math.sqrt(d_model),  # the typical |cos| of two independent random vectors
        "d": d_model,
        "rows": max_len,
    }
    key = "learned.toy.explanation" if answer == ZERO else "learned.toy.explanation_chance"
    options = (PLUS, ZERO, MINUS)
    return Question(
        key="learned_q",
        prompt=t("learned.toy.question", lang),
        options=options,
        labels=tuple(t(f"learned.toy.opt.{o}", lang) for o in options),
        answer=answer,
        explanation=t(key, lang, **facts),
        facts=facts,
    )


# -- 2. the real table -------------------------------------------------------------------------


def cosine_similarity(table: np.ndarray) -> np.ndarray:
    """(n, D) rows → (n, n) cos(row_m, row_n) = r_m·r_n / (|r_m| |r_n|), in float64."""
    x = np.asarray(table, dtype=np.float64)
    unit = x / np.linalg.norm(x, axis=1, keepdims=True)  # (n, D)
    return np.asarray(unit @ unit.T)  # (n, n)


@dataclass
class ByDistance:
    distance: np.ndarray  # (n,) |m − n| = 0 … n−1
    mean: np.ndarray  # (n,) mean of the k-th diagonal
    std: np.ndarray  # (n,) its spread (0 for the last diagonal: a single pair)
    share_explained: float  # R²: how much of the off-diagonal variation |m − n| alone explains


def similarity_by_distance(sim: np.ndarray) -> ByDistance:
    """Average the similarity matrix along each diagonal |m − n| = k.

    share_explained = 1 − Σ (S_mn − mean_|m−n|)² / Σ (S_mn − mean)² over the off-diagonal pairs:
    1 when the similarity is a function of the distance alone (sinusoidal), smaller when the
    absolute positions matter too.
    """
    n = sim.shape[0]
    diagonals = [np.diagonal(sim, k) for k in range(n)]
    mean = np.array([d.mean() for d in diagonals])
    std = np.array([d.std() for d in diagonals])
    m, k = np.indices(sim.shape)  # (n, n) each
    dist = np.abs(m - k)
    off = dist > 0
    if off.sum() < 2:
        share = float("nan")
    else:
        resid = sim[off] - mean[dist[off]]
        total = sim[off] - sim[off].mean()
        denom = float((total**2).sum())
        share = 1.0 - float((resid**2).sum()) / denom if denom > 0 else 1.0
    return ByDistance(np.arange(n), mean, std, share)


@dataclass
class PCA:
    positions: np.ndarray  # (m,) the table rows analysed
    scores: np.ndarray  # (m, k) row p's coordinate on each principal component
    explained: np.ndarray  # (k,) share of the total variance per component, largest first
    periods: np.ndarray  # (k,) strongest period of each component along position (FFT), in positions


def principal_components(table: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first k principal components of the rows of `table` (n, D), via SVD of the centred table.

    Returns (scores (n, k), explained-variance ratio (k,)). C = X − mean = U S Vᵀ; the scores are
    U S, and component c explains S_c² / Σ S². Signs are arbitrary in any PCA; we fix each so that
    its largest-magnitude loading is positive, so the same table always gives the same picture.
    """
    x = np.asarray(table, dtype=np.float64)
    centred = x - x.mean(axis=0)  # (n, D)
    u, s, vt = np.linalg.svd(centred, full_matrices=False)  # (n, r), (r,), (r, D)
    k = min(k, s.size)
    signs = np.sign(vt[np.arange(k), np.abs(vt[:k]).argmax(axis=1)])  # (k,)
    scores = u[:, :k] * s[:k] * signs  # (n, k)
    total = float((s**2).sum())
    ratio = s[:k] ** 2 / total if total > 0 else np.zeros(k)
    return scores, ratio


def strongest_period(series: np.ndarray) -> float:
    """The period (in positions) of the largest non-constant Fourier component of a series.

    Bin b of an m-point FFT is b cycles per m positions; the resolution is coarse (m/b), so this is
    an estimate — good enough to tell a fast wave (a few positions) from a slow drift (≈ m).
    """
    x = np.asarray(series, dtype=np.float64)
    spectrum = np.abs(np.fft.rfft(x - x.mean()))
    if spectrum.size < 2:
        return float("nan")
    b = int(np.argmax(spectrum[1:])) + 1
    return x.size / b


def position_pca(table: np.ndarray, n_positions: int, skip_first: bool, k: int = 8) -> PCA:
    """PCA of rows 0 … n_positions−1 (or 1 … n_positions−1 with skip_first)."""
    start = 1 if skip_first else 0
    rows = np.asarray(table)[start:n_positions]
    scores, ratio = principal_components(rows, k)
    periods = np.array([strongest_period(scores[:, c]) for c in range(scores.shape[1])])
    return PCA(np.arange(start, n_positions), scores, ratio, periods)


@dataclass
class Rotation:
    pair: tuple[int, int]  # the two components (0-based) that form a turning pair
    step_degrees: float  # median angle turned from one position to the next in their plane
    period: float  # 360 / step: positions per full turn


def fastest_pair(pca: PCA, search: int = 6, tolerance: float = 0.05) -> Rotation:
    """Among the first `search` components, the two with the same, shortest period: a sin/cos-like pair.

    Two components whose strongest periods agree within `tolerance` (relative) are a pair; of the
    pairs, the one with the shortest period wins. Its turn per position is measured directly, as the
    median angle between consecutive points in the pair's plane. Falls back to components 0 and 1.
    """
    m = min(search, pca.periods.size)
    best = None
    for a in range(m):
        for b in range(a + 1, m):
            pa, pb = pca.periods[a], pca.periods[b]
            if abs(pa - pb) <= tolerance * max(pa, pb) and (best is None or pa < pca.periods[best[0]]):
                best = (a, b)
    a, b = best if best is not None else (0, min(1, pca.scores.shape[1] - 1))
    angle = np.unwrap(np.arctan2(pca.scores[:, b], pca.scores[:, a]))  # (m,)
    step = float(np.degrees(np.median(np.abs(np.diff(angle))))) if angle.size > 1 else float("nan")
    return Rotation((a, b), step, 360.0 / step if step > 0 else float("inf"))


@dataclass
class RealTable:
    n: int
    table: np.ndarray  # (n, 384) float32: rows 0 … n−1 of the trained table
    clip: float  # colour limit: the 99.9th percentile of |entries| over the whole table
    peak: tuple[int, int, float]  # (row, channel, value) of the largest |entry| in the whole table
    cos_learned: np.ndarray  # (n, n) float32
    cos_sinusoidal: np.ndarray  # (n, n) float32, sinusoidal table with the same n and d
    by_distance_learned: ByDistance
    by_distance_learned_no0: ByDistance  # the same without position 0 ([CLS]'s row)
    by_distance_sinusoidal: ByDistance


def real_table(table: np.ndarray, n_positions: int) -> RealTable:
    """Rows 0 … n_positions−1 of a trained table beside the sinusoidal table of the same shape."""
    total, d = table.shape
    if not MIN_REAL_POSITIONS <= n_positions <= total:
        raise ValueError(f"n_positions must be {MIN_REAL_POSITIONS}…{total}")
    rows = np.asarray(table[:n_positions], dtype=np.float64)  # (n, D)
    cos_l = cosine_similarity(rows)  # (n, n)
    cos_s = cosine_similarity(sinusoidal_table(n_positions, d, dtype=torch.float64).numpy())  # (n, n)
    flat = int(np.abs(table).argmax())
    r, c = divmod(flat, d)
    return RealTable(
        n=n_positions,
        table=rows.astype(np.float32),
        clip=float(np.percentile(np.abs(table), 99.9)),
        peak=(r, c, float(table[r, c])),
        cos_learned=cos_l.astype(np.float32),
        cos_sinusoidal=cos_s.astype(np.float32),
        by_distance_learned=similarity_by_distance(cos_l),
        by_distance_learned_no0=similarity_by_distance(cos_l[1:, 1:]),
        by_distance_sinusoidal=similarity_by_distance(cos_s),
    )


@dataclass
class RowStats:
    positions: np.ndarray  # (N,)
    norms: np.ndarray  # (N,) |row p|
    neighbour_cosine: np.ndarray  # (N−1,) cos(row p, row p+1), indexed by p
    sharpest: tuple[tuple[int, float], ...]  # the k lowest neighbour cosines: (p, cos(row p, row p+1))
    median_norm: float

    @property
    def row0_ratio(self) -> float:
        """|row 0| / the median row length."""
        return float(self.norms[0] / self.median_norm)

    @property
    def typical_neighbour_cosine(self) -> float:
        """The median cos(row p, row p+1)."""
        return float(np.median(self.neighbour_cosine))

    @property
    def positions_after_0(self) -> np.ndarray:
        """(N−1,) 1 … N−1: the norms chart leaves row 0 off (its length is in the title)."""
        return self.positions[1:]

    @property
    def norms_after_0(self) -> np.ndarray:
        return self.norms[1:]

    @property
    def neighbour_positions(self) -> np.ndarray:
        """(N−1,) p of each cos(row p, row p+1)."""
        return self.positions[:-1]

    def sharpest_text(self) -> str:
        """ "126→127 (0.12), …": the least alike neighbours and their cosine."""
        return ", ".join(f"{p}→{p + 1} ({c:.2f})" for p, c in self.sharpest)


@dataclass
class Blocks:
    values: np.ndarray  # (rows / f, cols / g): the mean of each f × g block
    rows: np.ndarray  # (rows / f,) centre position of each block of rows
    cols: np.ndarray  # (cols / g,)
    row_factor: int  # f: how many rows each cell stands for (1 = not pooled)
    col_factor: int

    @property
    def row_coords(self) -> list[float]:
        """The rows' axis coordinates as a plain list (what a figure's axis takes)."""
        return list(self.rows)

    @property
    def col_coords(self) -> list[float]:
        return list(self.cols)


def screen_blocks(m: np.ndarray, max_rows: int, max_cols: int | None = None) -> Blocks:
    """Average f × g blocks so a map has at most max_rows × max_cols cells: what a screen can show.

    A 512 × 512 similarity map drawn 450 px high gives each row under a pixel, yet sends a megabyte
    of numbers; the mean of each 4 × 4 block looks the same and sends 1/16 of them. Factors are
    whole numbers and blocks start at 0, so a seam between rows 127 and 128 stays a block edge.
    Axis coordinates are block centres, so positions keep their meaning on the axes."""
    m = np.asarray(m)
    n_rows, n_cols = m.shape
    f = max(1, -(-n_rows // max_rows))
    g = max(1, -(-n_cols // (max_cols or n_cols)))
    r, c = n_rows // f, n_cols // g  # a ragged last block is dropped (n is a multiple of 16 here)
    pooled = m[: r * f, : c * g].reshape(r, f, c, g).mean(axis=(1, 3))  # (r, c)
    return Blocks(pooled.astype(m.dtype), np.arange(r) * f + (f - 1) / 2, np.arange(c) * g + (g - 1) / 2, f, g)


def row_statistics(table: np.ndarray, k: int = 5) -> RowStats:
    """How big each row is, and how much it differs from the next: where the table has seams."""
    x = np.asarray(table, dtype=np.float64)
    norms = np.linalg.norm(x, axis=1)  # (N,)
    unit = x / norms[:, None]
    neighbour = (unit[1:] * unit[:-1]).sum(axis=1)  # (N−1,)
    order = np.argsort(neighbour)[:k]
    return RowStats(
        np.arange(x.shape[0]),
        norms,
        neighbour,
        tuple((int(p), float(neighbour[p])) for p in order),
        float(np.median(norms)),
    )


def parameter_count(max_len: int, d_model: int) -> int:
    """A learned table costs one trainable number per (position, channel)."""
    return max_len * d_model


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="learned",
    part="Absolute",
    page="pages/absolute/learned.py",
    icon=":material/table_rows:",
    order=20,
    papers=(enc.PAPER,),
    sources=(
        "encoders.learned:LearnedAbsolute.encode_input",
        "models.minilm:minilm_position_table",
        "explain.chapters.learned:similarity_by_distance",
        "explain.chapters.learned:principal_components",
    ),
    encodings=("learned",),
    link={"max_len": "8"},
    link_shows={"max_len": 8},
)
