"""What the Shaw et al. chapter shows, computed from encoders/shaw.py.

Every function takes primitives and returns numpy arrays (or dataclasses of them, or words in the
learner's language), so the page can cache it and the tests can check it without Streamlit.

Axis legend: h heads, i query, j key, r row of the aᴷ / aⱽ tables (clipped distance + k), d d_z.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from encoders import build
from encoders import shaw as enc
from encoders.attention import toy_layer
from encoders.shaw import ShawConfig, ShawRelative, clipped_relative_index, relative_vectors
from encoders.text import token_embeddings, token_key
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.chapters.common import TOY_D_MODEL, TOY_HEADS, ShiftProbe, shift_probe
from explain.i18n import t
from explain.question import Question

D_MODEL, N_HEADS = TOY_D_MODEL, TOY_HEADS  # the toy layer every chapter draws
K_MAX = 64  # the page's clipping slider: 1 … K_MAX


@dataclass
class ShawView:
    tokens: tuple[str, ...]
    k: int
    distance: np.ndarray  # (i, j) j − i (key − query), unclipped
    clipped: np.ndarray  # (i, j) clip(j − i, −k, k)
    index: np.ndarray  # (i, j) clip(j − i, −k, k) + k: the table row each pair reads
    is_clipped: np.ndarray  # (i, j) bool: |j − i| > k, the pair shares the row of ±k
    a_k: np.ndarray  # (2k+1, d) rows for distances −k … k
    a_v: np.ndarray  # (2k+1, d)
    content: np.ndarray  # (h, i, j) x_i W^Q (x_j W^K)ᵀ / √d
    position: np.ndarray  # (h, i, j) x_i W^Q aᴷ_ijᵀ / √d
    weights: np.ndarray  # (h, i, j) softmax of content + position
    weights_content_only: np.ndarray  # (h, i, j) the same layer with the position term switched off
    mass_per_distance: np.ndarray  # (h, i, 2k+1) attention mass on each clipped distance
    value_content: np.ndarray  # (h, i, d) Σ_j α_ij v_j
    value_position: np.ndarray  # (h, i, d) Σ_j α_ij aⱽ_ij
    shift: ShiftProbe  # the same sentence at positions SHIFT … : how much moved
    # The paper's own form (§3.3, tensor2tensor): the (i, j, d) tensor of aᴷ_ij vectors, one per pair,
    # shared by every head; against the encoder's gather of q·wᴷ_r (a later, equivalent optimisation).
    per_pair_numbers: int  # n·n·d_z: entries of that tensor
    gathered_numbers: int  # h·n·(2k+1): the q_i·wᴷ_r the encoder computes before picking
    paper_form_difference: float  # max |position term, per-pair tensor − gather| on this sentence

    @property
    def n(self) -> int:
        return len(self.tokens)

    @property
    def positions(self) -> np.ndarray:
        """(i,) 0 … n − 1: the query positions a line plot runs over."""
        return np.arange(self.n)

    def terms_pair(self, head: int) -> np.ndarray:
        """(2, i, j): the content and position terms of one head, on one colour scale."""
        return np.stack([self.content[head], self.position[head]])

    def attention_pair(self, head: int) -> np.ndarray:
        """(2, i, j): one head's attention with the position term off, then on."""
        return np.stack([self.weights_content_only[head], self.weights[head]])

    def attention_top(self, head: int) -> float:
        """The largest weight of either map: the top of their shared colour scale."""
        return float(self.attention_pair(head).max())

    def value_norms(self, head: int) -> tuple[np.ndarray, np.ndarray]:
        """(i,), (i,): the length of Σ_j α_ij v_j and of Σ_j α_ij aⱽ_ij for every query."""
        return (
            np.linalg.norm(self.value_content[head], axis=-1),
            np.linalg.norm(self.value_position[head], axis=-1),
        )


# Cache bounds (pages/relative/shaw.py): One shaw_view holds ~a dozen (4, n, n) float32 maps of a ≤ 256-token
# sentence (~3 MB at most), hence 16 entries; index_section is a few words and numbers.
@bounded(16)
def shaw_view(tokens: tuple[str, ...], seed: int, k: int, d_model: int = D_MODEL, n_heads: int = N_HEADS) -> ShawView:
    """One Shaw layer on the tokens, with everything the chapter draws."""
    n = len(tokens)
    encoder = build("shaw", d_model, n_heads, seed, ShawConfig(max_relative_position=int(k)))
    assert isinstance(encoder, ShawRelative)
    layer = toy_layer(encoder, seed)
    x = token_embeddings(tuple(token_key(t) for t in tokens), d_model, seed)[None]  # (1, n, D)
    positions = torch.arange(n)  # (n,)
    with torch.inference_mode():
        r = layer(x, positions=positions)
        off = layer(x, positions=positions, term_scales={"position": 0.0})
        value_position = encoder.value_terms(r.weights, positions, positions)[0]  # (h, i, d)
        value_content = (r.weights @ r.v)[0]  # (h, i, d)
        index = clipped_relative_index(positions, positions, k)  # (i, j)
        mass = torch.zeros(n_heads, n, 2 * k + 1)  # (h, i, 2k+1)
        mass.scatter_add_(-1, index.expand(n_heads, n, n), r.weights[0])
        # §3.1 written out: every pair gets its vector aᴷ_ij, one (i, j, d) tensor for all heads.
        a_ij = relative_vectors(encoder.a_k, index)  # (i, j, d)
        q = r.q[0]  # (h, i, d)
        per_pair = torch.einsum("hid,ijd->hij", q, a_ij) / encoder.d_head**0.5  # (h, i, j)
    distance = (positions[None, :] - positions[:, None]).numpy()  # (i, j) key − query
    d_z = encoder.d_head
    return ShawView(
        tokens=tuple(tokens),
        k=int(k),
        distance=distance,
        clipped=np.clip(distance, -k, k),
        index=index.numpy(),
        is_clipped=np.abs(distance) > k,
        a_k=encoder.a_k.detach().numpy().copy(),
        a_v=encoder.a_v.detach().numpy().copy(),
        content=r.terms["content"][0].numpy(),
        position=r.terms["position"][0].numpy(),
        weights=r.weights[0].numpy(),
        weights_content_only=off.weights[0].numpy(),
        mass_per_distance=mass.numpy(),
        value_content=value_content.numpy(),
        value_position=value_position.numpy(),
        shift=shift_probe(layer, x, r),
        per_pair_numbers=n * n * d_z,
        gathered_numbers=n_heads * n * (2 * int(k) + 1),
        paper_form_difference=float((per_pair - r.terms["position"][0]).abs().max()) if n else 0.0,
    )


def distance_labels(k: int) -> list[str]:
    """Row labels of the aᴷ / aⱽ tables: "−k" … "+k", with "≤ −k" and "≥ +k" at the clipped ends."""
    labels = [f"{r:+d}" if r else "0" for r in range(-k, k + 1)]
    if k > 0:
        labels[0], labels[-1] = f"≤ −{k}", f"≥ +{k}"
    return [s.replace("-", "−") for s in labels]


def clipped_share(n: int, k: int) -> float:
    """Fraction of the n² (query, key) pairs of an n-token sentence that are clipped (|j − i| > k)."""
    if n == 0:
        return 0.0
    d = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
    return float((d > k).mean())


# ------------------------------------------------------------------ which rows a sentence reads


@dataclass(frozen=True)
class IndexSection:
    question: Question | None  # None for a one-token sentence: a single pair, nothing to count
    share: str  # the caption under the index map: clipped pairs and the rows the sentence reads
    facts: dict[str, int | float]  # every number the caption states


def rows_read(n: int, k: int) -> int:
    """How many different rows of the (2k+1)-row table the pairs of an n-token sentence read:
    counted on the very index the encoder looks up (not a formula)."""
    positions = torch.arange(n)  # (n,)
    return int(torch.unique(clipped_relative_index(positions, positions, k)).numel())


def index_question(n: int, k: int, lang: str, rows: int | None = None) -> Question | None:
    """How many different rows of aᴷ do all pairs read? The answer is counted on the index
    (`rows`: that count, when the caller has it already)."""
    if n < 2:
        return None
    rows = rows_read(n, k) if rows is None else rows
    facts: dict[str, int] = {"rows": rows, "last": n - 1, "values": 2 * n - 1, "k": k, "possible": 2 * k + 1}
    options = sorted({rows, n, 2 * k + 1, 2 * n - 1, n * n})
    return Question(
        key="shaw_q",
        prompt=t("shaw.index.question", lang, n=n, k=k),
        options=tuple(options),
        labels=tuple(f"{r:,}" for r in options),
        answer=rows,
        explanation=t("shaw.index.explanation", lang, **facts),
        facts=facts,
    )


def index_section(n: int, k: int, lang: str) -> IndexSection:
    """The question and the caption of the index map, for an n-token sentence and clipping k."""
    d = np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])  # (i, j) |j − i|
    clipped = int((d > k).sum())
    reach = min(n - 1, k)  # the farthest distance a pair reads its own row for
    used = rows_read(n, k)
    facts: dict[str, int | float] = {
        "n": n,
        "pairs": n * n,
        "clipped": clipped,
        "share": clipped / (n * n) if n else 0.0,
        "rest": n * n - clipped,
        "k": k,
        "reach": reach,
        "used": used,
        "table": 2 * k + 1,
        "unread": 2 * k + 1 - used,
    }
    if clipped:
        key = "shaw.index.share_clipped"
    elif used < 2 * k + 1:
        key = "shaw.index.share_unread"
    else:
        key = "shaw.index.share_all"
    return IndexSection(index_question(n, k, lang, used), t(key, lang, **facts), facts)


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="shaw",
    part="Relative",
    page="pages/relative/shaw.py",
    icon=":material/straighten:",
    order=40,
    papers=(enc.PAPER,),
    sources=(
        "encoders.shaw:clipped_relative_index",
        "encoders.shaw:relative_position_index",
        "encoders.shaw:position_logits",
        "encoders.shaw:value_position_term",
        "encoders.shaw:ShawRelative.logit_terms",
    ),
    encodings=("shaw",),  # the trained panel shows none: no model of it was trained
    link={"shaw_k": "9", "shaw_head": "2"},
    link_shows={"shaw_k": 9, "shaw_head": 2},
)
