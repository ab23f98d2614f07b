"""What "A real model: MiniLM" shows: all-MiniLM-L6-v2's own tokens and attention on the learner's
sentence, the heads that attend by position, and what happens when the position ids move.

Axis legend: L layers (6), H heads (12), n word pieces incl. [CLS] and [SEP], i query, j key.

Every function takes primitives and returns numpy arrays or dataclasses of them (pages cache them
with st.cache_data); the model itself is loaded once per process by models.minilm.load.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question
from models import minilm as enc
from models.minilm import MAX_POSITIONS as MAX_POSITIONS  # the pages read the table's size here
from models.minilm import load

MAX_PIECES = 256  # word pieces the page runs (plus [CLS] and [SEP]); the help text says so
# The five places a position head can look, in the order of HeadMasses.mass's last axis.
TARGETS = ("previous", "next", "[CLS]", "[SEP]", "self")
# Each target's name in the string catalogue (explain/text/<lang>/strings/minilm.toml).
_TARGET_KEY = {"previous": "previous", "next": "next", "[CLS]": "cls", "[SEP]": "sep", "self": "self"}
THRESHOLD = 0.5  # a head is labelled when one target gets at least this share of its attention
MODES = ("shift", "shuffle", "reverse")
SOURCES = ("reference", "sentence")  # which text the head masses are shown for (ids; words in the catalogue)
QUESTION_SHIFT = 10  # the question shifts every position id by this much
QUESTION_HEADS = 4  # … and asks about at most this many labelled heads, one per role
# A fixed paragraph for the head labels, so that they do not change with whatever the learner types
# (a head that looks at the previous token should do so on any ordinary text).
REFERENCE = (
    "The museum opened its doors early on Saturday, and a long line had already formed outside. "
    "Children pressed their faces against the glass while their parents read the posters about the "
    "new exhibition. Inside, the guides were still arranging the last few paintings, checking the "
    "lights and the labels one more time before the first visitors walked in."
)


def target_text(target: str, lang: str | None = None) -> str:
    """How a learner reads a target in a sentence: "attends to the previous token"."""
    return t(f"minilm.target.{_TARGET_KEY[target]}", lang)


def target_mark(target: str, lang: str | None = None) -> str:
    """A target's short name, e.g. written above a head in the grid: "previous"."""
    return t(f"minilm.mark.{_TARGET_KEY[target]}", lang)


def warm() -> bool:
    """Loads the model and tokenizer (models.minilm.load keeps them for the process); the page calls
    this once per server, behind a spinner in the learner's language."""
    load()
    return True


def max_shift(n: int) -> int:
    """The largest shift k of n position ids that keeps the last one in the table (≤ MAX_POSITIONS − 1)."""
    return max(0, MAX_POSITIONS - n)


def hangul_letters(tokens: tuple[str, ...]) -> int:
    """How many word pieces are loose Hangul letters (conjoining jamo, U+1100–U+11FF): the
    tokenizer's accent stripping (NFD) takes every Hangul syllable apart into such letters."""
    return sum(any("\u1100" <= c <= "\u11ff" for c in tok) for tok in tokens)


@dataclass
class Pieces:
    tokens: tuple[str, ...]  # word pieces, [CLS] … [SEP]
    ids: np.ndarray  # (n,) vocabulary ids
    n_found: int  # word pieces in the whole text
    kept: int  # word pieces kept (≤ max_pieces)

    @property
    def truncated(self) -> bool:
        return self.kept < self.n_found


# Cache bounds (pages/labs/minilm.py): A run holds 6 × 12 attention maps of up to 258 × 258 float32 (~19 MB),
# hence the small bounds.
@bounded(32)
def wordpieces(text: str, max_pieces: int = MAX_PIECES) -> Pieces:
    """The text as the model's own WordPiece tokens."""
    if not 1 <= max_pieces <= MAX_POSITIONS - 2:
        raise ValueError(f"max_pieces must be 1…{MAX_POSITIONS - 2}")
    _, tok = load()
    enc = tok.encode(text, max_length=max_pieces + 2)
    return Pieces(enc.tokens, np.asarray(enc.ids, dtype=np.int64), enc.n_found, enc.kept)


def position_table() -> np.ndarray:
    """The trained position table (512, 384): row p is added to the word piece at position p."""
    model, _ = load()
    return model.position.weight.detach().numpy().copy()


@bounded(1)
def position_table_shape() -> tuple[int, int]:
    """(rows, numbers per row) of the trained position table."""
    rows, cols = position_table().shape
    return int(rows), int(cols)


def position_ids(n: int, mode: str = "plain", shift: int = 0, seed: int = 0) -> np.ndarray:
    """Position ids (n,) for an experiment; the tokens stay where they are, only their ids change.

    plain    0 … n−1, as in training
    shift    k … k+n−1: the whole text moved k places right (bounded so the last id ≤ 511)
    shuffle  [CLS] keeps 0 and [SEP] keeps n−1; the word pieces between get a seeded permutation
             of 1 … n−2 — the model sees the same words with their order scrambled
    reverse  [CLS] and [SEP] as in plain; the word pieces get n−2 … 1 — the order read backwards
    """
    base = np.arange(n)
    if mode == "plain":
        return base
    if mode == "shift":
        if not 0 <= shift <= MAX_POSITIONS - n:
            raise ValueError(f"a shift of {shift} moves the last of {n} ids past {MAX_POSITIONS - 1}")
        return base + shift
    inner = np.arange(1, n - 1)
    if mode == "shuffle":
        inner = np.random.default_rng(seed).permutation(inner)
    elif mode == "reverse":
        inner = inner[::-1]
    else:
        raise ValueError(f"mode must be one of plain, {', '.join(MODES)}")
    return np.concatenate([[0], inner, [n - 1]]) if n >= 2 else base


@dataclass
class ModelRun:
    tokens: tuple[str, ...]
    position_ids: np.ndarray  # (n,)
    weights: np.ndarray  # (L, H, i, j) float32, rows sum to 1
    hidden: np.ndarray  # (n, D) the last layer's output

    def head_weights(self, layer: int, head: int) -> np.ndarray:
        """(i, j) one head's attention, 1-based layer and head."""
        one: np.ndarray = self.weights[layer - 1, head - 1]
        return one


@bounded(16)
def run(text: str, mode: str = "plain", shift: int = 0, seed: int = 0, max_pieces: int = MAX_PIECES) -> ModelRun:
    """The model's forward pass on the text, with the chosen position ids."""
    pieces = wordpieces(text, max_pieces)
    n = len(pieces.tokens)
    pos = position_ids(n, mode, shift, seed)
    model, _ = load()
    with torch.inference_mode():
        out = model(torch.from_numpy(pieces.ids), torch.from_numpy(pos))
    weights = torch.stack([a[0] for a in out.attentions]).numpy()  # (L, H, i, j)
    return ModelRun(pieces.tokens, pos, weights, out.hidden[0].numpy())


def target_masses(weights: np.ndarray) -> np.ndarray:
    """Mean attention each head gives to the previous token, the next token, the first token
    ([CLS]), the last token ([SEP]) and itself: (L, H, 5) in the order of TARGETS.

    Averaged over the word-piece queries i = 1 … n−2 (not [CLS] and [SEP] themselves, whose rows
    would otherwise count as "self"); the previous token of the first word is [CLS] and the next
    token of the last word is [SEP], exactly as the model sees them.
    """
    L, H, n, _ = weights.shape
    if n < 3:
        return np.full((L, H, len(TARGETS)), np.nan)
    i = np.arange(1, n - 1)
    rows = weights[:, :, i, :]  # (L, H, q, j)
    q = np.arange(i.size)
    prev = rows[:, :, q, i - 1].mean(-1)  # (L, H)
    nxt = rows[:, :, q, i + 1].mean(-1)
    first = rows[:, :, :, 0].mean(-1)
    sep = rows[:, :, :, n - 1].mean(-1)
    self_ = rows[:, :, q, i].mean(-1)
    return np.stack([prev, nxt, first, sep, self_], axis=-1).astype(np.float64)  # (L, H, 5)


@dataclass
class HeadLabel:
    layer: int  # 1-based, as a learner counts
    head: int  # 1-based
    target: str  # one of TARGETS
    mass: float  # on the reference paragraph
    mass_sentence: float  # on the learner's sentence


@dataclass
class PositionHeads:
    tokens: tuple[str, ...]
    sentence: np.ndarray  # (L, H, 5) on the learner's sentence
    reference: np.ndarray  # (L, H, 5) on REFERENCE
    labels: list[HeadLabel]  # heads with one target ≥ THRESHOLD on the reference paragraph
    threshold: float

    def panels(self, source: str) -> np.ndarray:
        """(5, L, H): one (layers × heads) table per target, on the reference paragraph or the sentence."""
        masses = {"reference": self.reference, "sentence": self.sentence}[source]
        return np.moveaxis(masses, -1, 0)

    def head_masses(self, layer: int, head: int) -> tuple[float, ...]:
        """One head's share on each target (in TARGETS order) on the learner's sentence; 1-based."""
        return tuple(float(v) for v in self.sentence[layer - 1, head - 1])

    def role(self, layer: int, head: int) -> HeadLabel | None:
        """The head's label (1-based layer and head), if it has one."""
        return next((h for h in self.labels if (h.layer, h.head) == (layer, head)), None)

    @property
    def asked(self) -> tuple[HeadLabel, ...]:
        """The heads the question asks about: the first labelled head of each role, at most
        QUESTION_HEADS of them."""
        out: list[HeadLabel] = []
        for h in self.labels:
            if h.target not in {a.target for a in out} and len(out) < QUESTION_HEADS:
                out.append(h)
        return tuple(out)


@bounded(16)
def position_heads(text: str, threshold: float = THRESHOLD, max_pieces: int = MAX_PIECES) -> PositionHeads:
    """Measure, label, and keep the numbers: a head is labelled with a target when its mean mass
    there is at least `threshold` on the reference paragraph (the strongest target if several)."""
    mine = run(text, max_pieces=max_pieces)
    ref = target_masses(run(REFERENCE).weights)
    sent = target_masses(mine.weights)
    labels = []
    L, H, _ = ref.shape
    for layer in range(L):
        for head in range(H):
            t = int(np.argmax(ref[layer, head]))
            if ref[layer, head, t] >= threshold:
                labels.append(
                    HeadLabel(layer + 1, head + 1, TARGETS[t], float(ref[layer, head, t]), float(sent[layer, head, t]))
                )
    return PositionHeads(mine.tokens, sent, ref, labels, threshold)


@dataclass
class PositionChange:
    tokens: tuple[str, ...]
    position_ids: np.ndarray  # (n,) the experiment's ids
    before: np.ndarray  # (L, H, i, j) with ids 0 … n−1
    after: np.ndarray  # (L, H, i, j) with the experiment's ids; same tokens in the same places
    change: np.ndarray  # (L, H) mean over queries of ½ Σ_j |after − before| (0 = same, 1 = disjoint)
    hidden_change: float  # relative change of the last layer's output, ‖Δh‖ / ‖h‖

    @property
    def panels(self) -> np.ndarray:
        """(1, L, H): the change as the one panel of a layers × heads figure."""
        return self.change[None]

    def moved(self, layer: int, head: int) -> float:
        """How much one head's attention moved (1-based layer and head)."""
        return float(self.change[layer - 1, head - 1])

    @property
    def most(self) -> tuple[int, int, float]:
        """(layer, head, moved) of the head that moved most, 1-based."""
        layer, head = np.unravel_index(int(np.argmax(self.change)), self.change.shape)
        return int(layer) + 1, int(head) + 1, float(self.change[layer, head])

    @property
    def least(self) -> tuple[int, int, float]:
        """(layer, head, moved) of the head that moved least, 1-based."""
        layer, head = np.unravel_index(int(np.argmin(self.change)), self.change.shape)
        return int(layer) + 1, int(head) + 1, float(self.change[layer, head])

    def ids_preview(self, limit: int = 24) -> tuple[tuple[int, ...], bool]:
        """The first `limit` position ids, and whether there are more."""
        return tuple(int(v) for v in self.position_ids[:limit]), self.position_ids.size > limit


def total_variation(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """½ Σ_j |a_ij − b_ij|, averaged over queries i: how much attention moved, 0 … 1."""
    moved: np.ndarray = 0.5 * np.abs(a.astype(np.float64) - b).sum(-1).mean(-1)
    return moved


def compare(before: ModelRun, after: ModelRun) -> PositionChange:
    """Per head, how much the attention moved between two runs on the same word pieces."""
    if before.tokens != after.tokens:
        raise ValueError("compare runs on the same word pieces")
    dh = float(np.linalg.norm(after.hidden - before.hidden) / max(float(np.linalg.norm(before.hidden)), 1e-12))
    return PositionChange(
        before.tokens,
        after.position_ids,
        before.weights,
        after.weights,
        total_variation(after.weights, before.weights),
        dh,
    )


def position_change(
    text: str, mode: str, shift: int = 0, seed: int = 0, max_pieces: int = MAX_PIECES
) -> PositionChange:
    """The same word pieces run twice, once with the usual ids and once with shifted / shuffled /
    reversed ones; per head, how much the attention moved. (The page calls compare on its two
    cached runs instead, so that the plain run is computed once.)"""
    return compare(run(text, max_pieces=max_pieces), run(text, mode, shift, seed, max_pieces))


THUMB_SIDE = 32  # the most cells a side of a grid thumbnail has (see thumbnail_weights)


def thumbnail_weights(weights: np.ndarray, max_side: int = THUMB_SIDE) -> tuple[np.ndarray, int]:
    """(L, H, n, n) → (L, H, m, m) with m ≤ max_side, and the block size k (1 = unchanged).

    Blocks of k × k cells: queries are averaged and keys summed within a block, so every row still
    sums to 1 and a diagonal (previous-token) head is still a diagonal. Thumbnails of 72 heads at
    256 word pieces would otherwise send 4.7 million numbers to the browser. THUMB_SIDE is 32: the
    grid is drawn as one heatmap with empty rows and columns between the heads (minilm_figures),
    about 1.5 times the thumbnails' cells; at 48 a side that was 1.2 MB, at 32 it is about 0.6 MB,
    and a thumbnail about 60 px wide still gives each block two pixels."""
    L, H, n, _ = weights.shape
    k = max(1, int(np.ceil(n / max_side)))
    if k == 1:
        return weights, 1
    m = int(np.ceil(n / k))
    padded = np.zeros((L, H, m * k, m * k), dtype=np.float64)
    padded[:, :, :n, :n] = weights
    counts = np.bincount(np.arange(n) // k, minlength=m).astype(np.float64)  # real queries per block
    blocks = padded.reshape(L, H, m, k, m, k).sum(axis=(3, 5))  # (L, H, m, m)
    return blocks / counts[None, None, :, None], k


# -- the question -----------------------------------------------------------------------------------


def question_shift(n: int) -> int:
    """The shift the question asks about: QUESTION_SHIFT, or less if n ids leave no room for it."""
    return min(QUESTION_SHIFT, max_shift(n))


def shift_question(heads: PositionHeads, change: PositionChange, lang: str) -> Question | None:
    """Every position id shifted by question_shift(n): which of the asked heads (one per role,
    labelled on the reference paragraph) changes its attention least on the learner's sentence?
    `change` must be that shift's comparison (compare(run(text), run(text, "shift", k)));
    None when fewer than two roles are labelled."""
    asked = heads.asked
    if len(asked) < 2:
        return None
    shift = int(change.position_ids[0])
    if shift != question_shift(change.position_ids.size) or change.tokens != heads.tokens:
        raise ValueError("the comparison is not the question's shift of the same text")
    moved = {(h.layer, h.head): change.moved(h.layer, h.head) for h in asked}
    calm = min(asked, key=lambda h: moved[(h.layer, h.head)])
    facts: dict[str, object] = {
        "shift": shift,
        "moved": moved,
        "layer": calm.layer,
        "head": calm.head,
        "target": calm.target,
    }
    options = tuple((h.layer, h.head) for h in asked)
    return Question(
        key="minilm_q",
        prompt=t("minilm.predict_q", lang, shift=shift),
        options=options,
        labels=tuple(
            t("minilm.predict_option", lang, layer=h.layer, head=h.head, target=target_text(h.target, lang))
            for h in asked
        ),
        answer=(calm.layer, calm.head),
        explanation=t(
            "minilm.predict_a",
            lang,
            layer=calm.layer,
            head=calm.head,
            shift=shift,
            target=target_text(calm.target, lang),
            moves=", ".join(
                t("minilm.predict_move", lang, layer=h.layer, head=h.head, moved=moved[(h.layer, h.head)])
                for h in asked
            ),
        ),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="minilm",
    part="Labs",
    page="pages/labs/minilm.py",
    icon=":material/psychology:",
    order=150,
    papers=(enc.PAPER,),
    sources=(
        "models.minilm:MiniLM.embed",
        "models.minilm:EncoderLayer.forward",
        "models.minilm:WordPiece.word_pieces",
        "explain.chapters.minilm:target_masses",
    ),
    link={"minilm_layer": "2", "minilm_head": "9", "minilm_src": "sentence", "minilm_mode": "reverse"},
    link_shows={"minilm_layer": 2, "minilm_head": 9, "minilm_src": "sentence", "minilm_mode": "reverse"},
)
