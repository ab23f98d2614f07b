"""What the attention lab shows: one sentence through several registered encodings at once, with the
same toy token vectors, seed, projections, head count and causal switch (numbers only).

Axis legend: h heads, n tokens, i query, j key, k prefix length, ℓ text length.

    panels_section  every chosen encoding on the sentence: what each panel draws (weights, the
                    position part or the content part of its logits, with named terms switched off
                    and the content term scaled by a dial), one shared colour range
    (the shift test, a phrase put in front of the sentence: attention_lab_shift.py)
    (the length test, past a "training length": attention_lab_length.py)
    trained_section every chosen encoding that has a shipped byte-level model, read on the
                    sentence's bytes (trained_attention.py); the others named

Every function the page calls takes primitives and returns numpy arrays or dataclasses of them, so
the page can cache it; all of them go through explain.chapters.common.run_tokens, the one attention
path (encoders/attention.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from encoders import REGISTRY
from encoders.text import tokenize
from explain import methods
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from lab import lm

from . import trained_attention as trained
from .common import run_tokens

D_MODEL = 64  # the toy layer's size on every page
HEAD_CHOICES = (1, 2, 4, 8)  # head counts the page offers (d = 64, 32, 16, 8 per head)
MAX_METHODS = 4
DEFAULT_METHODS = ("sinusoidal", "t5", "rope", "alibi")
PANEL_CELLS = 86  # a half-page panel draws ≤ 86 cells a side (256 tokens: blocks of 3, ~5 px a cell)
TRAINED_CELLS = 48  # a trained model's grid: ≤ 48 cells a side per head (192 bytes: blocks of 4)
REGISTRY_NAMES = tuple(REGISTRY)  # every encoding the lab offers, in the registry's order
SHOWN = ("weights", "position", "content")  # what every panel can show: ids, words in the catalogue
MAX_PREFIX_CHARS = 60  # the prefix box takes this many characters …
MAX_PREFIX_TOKENS = 16  # … and at most this many of its tokens are used
MAX_TOKENS = 256  # the sentence is cut to this many tokens (the sidebar says so)
# In the lab every encoding can represent BERT's 512 positions (a learned table gets 512 rows), so
# that any sentence the page draws (≤ 256 tokens, plus a prefix of ≤ 16) fits; the length test
# instead configures each encoding for the chosen training length (config_for_lengths).
LAB_POSITIONS = 512
CHANGED = 1e-6  # a |Δ weight| above this (float64 run) counts as "changed"


# -- names, in the learner's language -------------------------------------------------------------


def label(method: str, lang: str | None = None) -> str:
    """The encoding's name with its citation (the methods catalogue, explain/methods.py)."""
    return methods.label(method, lang)


def short(method: str, lang: str | None = None) -> str:
    """The encoding's name without its citation, for titles in narrow columns."""
    return methods.bare(method, lang)


def who_label(head: int | None, lang: str | None = None) -> str:
    """ "head 2" (0-based head 1) or "mean over heads" (None)."""
    return t("attention_lab.mean_heads", lang) if head is None else t("attention_lab.head", lang, k=head + 1)


def term_name(term: str, lang: str | None = None) -> str:
    """A logit term's name: letters and codes (a, c2p) stay; the words "content"/"position" are translated."""
    return t(f"attention_lab.term.{term}", lang) if term in ("content", "position") else term


def term_label(term: str, role: str, lang: str | None = None) -> str:
    """A term switch's label: its name and whether it is a content or a position term ("c2p
    (position)"); a term named after its role (Shaw's "position") is just its name, not "position
    (position)"."""
    if term == role:
        return term_name(term, lang)
    return t(
        "attention_lab.term_label", lang, term=term_name(term, lang), kind=t(f"attention_lab.term_kind.{role}", lang)
    )


def parse_methods(raw: str) -> list[str]:
    """A link's ?lab_methods=sinusoidal,t5 → the registry names, in order; ValueError for anything
    else (an unknown name, a repeat, none, more than MAX_METHODS)."""
    names = [s.strip() for s in raw.split(",")]
    if not 1 <= len(names) <= MAX_METHODS or len(set(names)) != len(names) or any(n not in REGISTRY for n in names):
        raise ValueError(raw)
    return names


def dump_methods(methods: list[str]) -> str:
    return ",".join(methods)


# -- what each encoding's terms are ----------------------------------------------------------------


def content_terms(method: str) -> tuple[str, ...]:
    """The terms of `method`'s logits that hold no position (the ones the content dial scales):
    "content" for most methods (for an input encoding it already has the positions mixed in),
    Transformer-XL's a and c, DeBERTa's c2c — each encoder class says which (content_terms)."""
    return REGISTRY[method].content_terms


def position_terms(method: str) -> tuple[str, ...]:
    return REGISTRY[method].position_terms()


def term_roles(method: str) -> tuple[tuple[str, str], ...]:
    """(term, "content" | "position") for every named term of `method`, in the encoder's order."""
    content = set(content_terms(method))
    return tuple((x, "content" if x in content else "position") for x in REGISTRY[method].term_names)


def switchable(methods: tuple[str, ...]) -> tuple[str, ...]:
    """The chosen encodings with more than one named term (the ones the term switches list)."""
    return tuple(m for m in methods if len(REGISTRY[m].term_names) > 1)


def mixed_in_input(method: str) -> bool:
    """True for input encodings (sinusoidal, learned): the position vector is added to the token
    vector before W_q and W_k, so every logit mixes content and position; no term is position-only."""
    return REGISTRY[method].kind == "input"


def lab_config(method: str) -> object:
    """The config under which `method` covers positions 0 … LAB_POSITIONS − 1 (None: its default)."""
    return REGISTRY[method].config_covering(LAB_POSITIONS)


def term_scales(method: str, content_scale: float, off: tuple[str, ...]) -> tuple[tuple[str, float], ...]:
    """(name, scale) for run_tokens: content terms × the dial, switched-off terms × 0."""
    scales = {x: float(content_scale) for x in content_terms(method)}
    for x in off:
        if x not in REGISTRY[method].term_names:
            raise KeyError(f"{method} has no term {x!r}; it has {REGISTRY[method].term_names}")
        scales[x] = 0.0
    return tuple(sorted(scales.items()))


def pick_head(a: np.ndarray, head: int | None) -> np.ndarray:
    """(h, …) → (…): one head (0-based) or, for None, the mean over heads."""
    one: np.ndarray = a.mean(axis=0) if head is None else a[head]
    return one


# -- one panel ---------------------------------------------------------------------------------------


@dataclass
class Panel:
    method: str
    label: str
    kind: str
    tokens: tuple[str, ...]
    weights: np.ndarray  # (h, i, j)
    content: np.ndarray  # (h, i, j) the position-free part of the logits as it enters the softmax
    position: np.ndarray | None  # (h, i, j) the position part as it enters; None for NoPE
    logits: np.ndarray  # (h, i, j) their sum, NaN where masked
    terms: tuple[str, ...]  # the encoder's named terms
    off: tuple[str, ...]  # the ones switched off
    mixed: bool  # input encoding: "content" already holds positions; `position` is a difference


def panel(
    text: str,
    seed: int,
    method: str,
    n_heads: int = 4,
    causal: bool = False,
    content_scale: float = 1.0,
    off: tuple[str, ...] = (),
    max_tokens: int = MAX_TOKENS,
) -> Panel:
    """One encoding on the learner's sentence, with the content dial and term switches applied.

    content / position are the logit parts *as they enter the softmax* (dial and switches applied),
    so content + position = logits (up to the mask). For an input encoding there is no separate
    position term; `content` is then the same layer without any positions (NoPE: same tokens, same
    projections) and `position` what adding the position vectors changed in the logits.
    """
    tokens = tokenize(text, max_tokens=max_tokens).tokens
    scales = term_scales(method, content_scale, off)
    view = run_tokens(tokens, seed, method, D_MODEL, n_heads, causal, 0, lab_config(method), scales)
    mask = np.isnan(view.logits)  # (h, i, j)
    s = dict(scales)
    if mixed_in_input(method):
        # The dial and switch act on the one term there is ("content" = q·k with the positions inside).
        f = s.get("content", 1.0)
        bare = run_tokens(tokens, seed, "none", D_MODEL, n_heads, causal).terms["content"]  # (h, i, j)
        content = f * bare
        position: np.ndarray | None = f * view.terms["content"] - content
    else:
        content = _scaled_sum(view.terms, content_terms(method), s)
        pos = position_terms(method)
        position = _scaled_sum(view.terms, pos, s) if pos else None
    content = np.where(mask, np.nan, content)
    if position is not None:
        position = np.where(mask, np.nan, position)
    cls = REGISTRY[method]
    return Panel(
        method,
        cls.label,
        cls.kind,
        tokens,
        view.weights,
        content,
        position,
        view.logits,
        cls.term_names,
        tuple(off),
        mixed_in_input(method),
    )


def _scaled_sum(terms: dict[str, np.ndarray], names: tuple[str, ...], scales: dict[str, float]) -> np.ndarray:
    """Σ scale·term over `names` (h, i, j), starting from zeros as Python's sum starts from 0."""
    total = np.zeros_like(terms[names[0]]) if names else np.zeros(())
    for x in names:
        total = total + scales.get(x, 1.0) * terms[x]
    return total


def top_key(weights: np.ndarray, query: int) -> tuple[int, float]:
    """(j, weight) of the key the query attends to most, for an (i, j) map."""
    row = weights[query]
    j = int(np.nanargmax(row))
    return j, float(row[j])


def position_share(p: Panel, head: int | None) -> float:
    """mean |position part| / (mean |content part| + mean |position part|) over visible cells."""
    if p.position is None:
        return 0.0
    c = np.nanmean(np.abs(pick_head(p.content, head)))
    q = np.nanmean(np.abs(pick_head(p.position, head)))
    return float(q / (c + q)) if c + q > 0 else 0.0


# -- the panels, as the page draws them -----------------------------------------------------------


@dataclass
class PanelView:
    method: str
    tokens: tuple[str, ...]
    z: np.ndarray | None  # (i, j) what the panel draws; None: the position part of an encoding without one
    kind: str  # the map's colour scale: "weights" or "signed"
    top_key: int  # the key the last word attends to most (chosen head or head mean) …
    top_weight: float  # … and its weight
    share: float  # position_share
    off: tuple[str, ...]  # terms switched off


@dataclass
class PanelsSection:
    views: tuple[PanelView, ...]
    zmax: float  # one colour range for every panel, so "darker" means the same in every encoding
    height: int  # px, from the sentence's length


# Cache bounds (pages/labs/attention_lab.py): A panels result holds up to 4 maps of 256 × 256 float64 (~2 MB),
# a shift result 4 such maps, a length result up to 4 maps of 512 × 512 (~8 MB): hence the small bounds.
@bounded(32)
def panels_section(
    text: str,
    seed: int,
    methods: tuple[str, ...],
    n_heads: int,
    causal: bool,
    dial: float,
    off: tuple[tuple[str, tuple[str, ...]], ...],
    head: int | None,
    shown: str,
) -> PanelsSection:
    """Every chosen encoding's panel. `off` pairs an encoding with the terms switched off in it;
    `shown` is one of SHOWN."""
    if shown not in SHOWN:
        raise ValueError(f"shown must be one of {SHOWN}")
    switched = dict(off)
    panels = [panel(text, seed, m, n_heads, causal, dial, switched.get(m, ())) for m in methods]
    views = []
    for p in panels:
        if shown == "weights":
            z: np.ndarray | None = pick_head(p.weights, head)
        else:
            part = p.position if shown == "position" else p.content
            z = None if part is None else pick_head(part, head)
        j, w = top_key(pick_head(p.weights, head), len(p.tokens) - 1)
        views.append(
            PanelView(
                p.method,
                p.tokens,
                z,
                "weights" if shown == "weights" else "signed",
                j,
                w,
                position_share(p, head),
                p.off,
            )
        )
    if shown == "weights":
        # Up to the strongest weight shown, in steps of 0.05: a 0…1 scale would leave a long
        # sentence's maps (weights ≈ 1/n) white.
        top = max(float(np.nanmax(v.z)) for v in views if v.z is not None)
        zmax = min(1.0, max(0.05, float(np.ceil(top * 20) / 20)))
    else:
        finite = [np.abs(v.z) for v in views if v.z is not None]
        zmax = max((float(np.nanmax(a)) for a in finite if np.isfinite(a).any()), default=1.0) or 1.0
    n = len(panels[0].tokens) if panels else 0
    return PanelsSection(tuple(views), zmax, int(min(560, max(340, 150 + 14 * n))))


# -- trained on real text -----------------------------------------------------------------------

SOURCES = ("random", "trained")  # what the trained-attention section draws: ids, words in the catalogue
# Bytes of the sentence whose attention the lab draws per trained model: past the training length
# (so its line and what follows show) but small, since a lab shows up to MAX_METHODS grids of
# L·H maps each (8 maps of 192² float32 are ~1.2 MB for the browser).
LAB_DRAWN = trained.TRAIN_LEN + 64


@dataclass(frozen=True)
class TrainedView:
    method: str  # the lab's chosen encoding (registry name)
    read: trained.TrainedRead  # the shipped model that reads it (a stretch for RoPE's schemes)


@dataclass(frozen=True)
class TrainedSection:
    views: tuple[TrainedView, ...]  # the chosen encodings with a trained model, in the lab's order
    missing: tuple[str, ...]  # the chosen encodings without one
    bytes_note: str  # how many bytes the models read, and what "·" means (Markdown)
    missing_note: str  # which encodings have a model, computed from lab.lm's lists ("" if none missing)


# Cache bounds (pages/labs/attention_lab.py): A trained section holds up to 4 models' attention on ≤ 192 bytes
# (8 maps of 192² float32, ~1.2 MB each) and their extras: hence the small bound.
@bounded(8)
def trained_section(text: str, methods: tuple[str, ...], lang: str) -> TrainedSection:
    """Every chosen encoding that a shipped byte-level model reads (trained.resolve), run on the
    learner's sentence; the others named, with the encodings that do have a model."""
    views = []
    missing = []
    for m in methods:
        which = trained.resolve(m)
        if which is None:
            missing.append(m)
            continue
        model, stretch = which
        views.append(TrainedView(m, trained.read_text(model, text, stretch, lang, LAB_DRAWN)))
    n_bytes = len(lm.cut_text(text)[0])
    first = trained.model_for(trained.MODELS[0], "", "").cfg
    bytes_note = t("trained_attention.lab.bytes_note", lang, n=n_bytes, layers=first.n_layers, heads=first.n_heads)
    missing_note = ""
    if missing:
        missing_note = t(
            "trained_attention.lab.no_model",
            lang,
            names=t("attention_lab.and", lang).join(short(m, lang) for m in missing),
            trained=", ".join(short(m, lang) for m in trained.MODELS),
            stretches=", ".join(short(m, lang) for m in trained.STRETCHES),
        )
    return TrainedSection(tuple(views), tuple(missing), bytes_note, missing_note)


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="attention-lab",
    part="Labs",
    page="pages/labs/attention_lab.py",
    icon=":material/science:",
    order=140,
    sources=(
        "explain.chapters.attention_lab:panel",
        "explain.chapters.attention_lab:term_scales",
        "explain.chapters.common:run_tokens",
        "explain.chapters.attention_lab_shift:shift_deltas",
        "explain.chapters.attention_lab_shift:kv_cache",
    ),
    link={
        "lab_methods": "rope-dynamic,learned,alibi",
        "lab_heads": "2",
        "lab_causal": "true",
        "lab_dial": "0.5",
        "lab_show": "content",
        "lab_train_len": "16",
        "lab_length": "64",
    },
    link_shows={
        "lab_methods": ["rope-dynamic", "learned", "alibi"],
        "lab_heads": 2,
        "lab_causal": True,
        "lab_dial": 0.5,
        "lab_show": "content",
        "lab_train_len": 16,
        "lab_length": 64,
    },
)
