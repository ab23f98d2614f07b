"""What a trained byte-level model does with the learner's own text (issue 20): every head's
attention, the next-byte readout after the last byte, the surprise per byte, and computed sentences
about them. Numbers and words only, no Streamlit; shared by the attention lab's "trained on real
text" switch and the real-text chapter.

    read_text(encoding, text, stretch, lang) → TrainedRead   (the one cached call; primitives in)
    resolve(method) → (model, stretch) | None                 (which shipped model reads `method`)

The models are lab/lm.py's (one per encoding in lab.lm.ENCODINGS, trained on windows of
lab.lm.TRAIN_LEN bytes); RoPE's context-extension schemes (lab.lm.STRETCHES) are the RoPE model
with its frequencies stretched at inference to the text's length (s = run length / TRAIN_LEN, at
least 1), never retrained.

Axis legend: L layers, H heads, n bytes read, m bytes kept for drawing (≤ n), i query, j key.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from explain.bounds import bounded
from explain.i18n import t
from lab import lm

TRAIN_LEN = lm.TRAIN_LEN
MODELS = lm.ENCODINGS  # the trained models, registry names, in the order pages list them
STRETCHES = lm.STRETCHES  # schemes applied to the STRETCHED model at inference
STRETCHED = lm.STRETCHED
TOP_K = 5  # next bytes in the readout
# Kept for drawing: the first DRAWN bytes' attention (2× the training length, so the line at
# TRAIN_LEN and what lies past it both show). Causal attention makes these rows exact whatever
# follows; every number the sentences state is computed over all n bytes before the cut.
DRAWN = 2 * TRAIN_LEN
# A head is called a "previous-byte head" when at least this share of its weight (mean over the
# queries that have a previous byte) lies on the byte just before the query.
PREVIOUS = 0.5
ZMAX_PERCENTILE = 99.0  # the grid's colours stop at this percentile of its visible cells (zmax)
CONTEXT_CHARS = 12  # how much of the text the "after «…»" sentence quotes (characters, from the end)


def resolve(method: str) -> tuple[str, str] | None:
    """The shipped model that reads registry name `method`, and the stretch applied to it:
    (method, "") for a trained encoding, (STRETCHED, method) for one of RoPE's stretches, None for
    an encoding without a trained model."""
    if method in MODELS:
        return method, ""
    if method in STRETCHES:
        return STRETCHED, method
    return None


def readable() -> tuple[str, ...]:
    """Every registry name resolve() answers (trained encodings, then RoPE's stretches)."""
    return (*MODELS, *STRETCHES)


def next_byte_label(b: int) -> str:
    """What a predicted next byte shows as: its character when one byte is a whole character (ASCII,
    made visible like the text's labels), else "\\xNN" (a byte ≥ 0x80 never is one on its own)."""
    return lm.visible(chr(b)) if b < 0x80 else f"\\x{b:02x}"


_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]<>#|$~])")


def md(text: str) -> str:
    """A piece of the learner's text shown literally inside a Markdown sentence (no emphasis, no
    math, no links, no HTML): every character Markdown would read is escaped."""
    return _MD_SPECIAL.sub(r"\\\1", text)


@dataclass(frozen=True)
class HeadStat:
    layer: int  # 0-based
    head: int  # 0-based
    distance: float  # mean over queries of Σ_j w_ij (i − j): how far back the head reads, in bytes
    previous: float  # mean over queries i ≥ 1 of w_{i,i−1}: its share on the byte just before
    is_previous: bool  # previous ≥ PREVIOUS


@dataclass(frozen=True)
class TrainedRead:
    """One shipped model read over the learner's text (the bytes after cutting: n of them)."""

    encoding: str  # the trained model (lab.lm.ENCODINGS)
    stretch: str  # "" or the stretch applied to it (lab.lm.STRETCHES)
    scale: float  # the stretch factor s (1.0 without a stretch)
    data: bytes  # the n bytes read (the text's UTF-8, cut)
    labels: tuple[str, ...]  # (n,) a label per byte (lab.lm.byte_labels)
    attention: np.ndarray  # (L, H, m, m) float32 weights of the first m = min(n, DRAWN) bytes
    extras: dict[str, np.ndarray]  # per-layer encoder extras cut like attention where they are (L, H, n, n)
    top_bytes: tuple[int, ...]  # (k,) the most likely next bytes after the last byte, most likely first
    top_labels: tuple[str, ...]  # (k,) their printable labels
    top_probs: tuple[float, ...]  # (k,)
    surprise: np.ndarray  # (n − 1,) bits paid for each actual next byte (−log2 p), byte 1 … n − 1
    bits_per_byte: float  # mean surprise (NaN with fewer than 2 bytes)
    heads: tuple[HeadStat, ...]  # every (layer, head), layer-major
    n_bytes: int  # bytes of the text before cutting
    cut_at: int | None  # where the text was cut (None: not cut)
    table_end: int | None  # the first position the encoding has no representation for
    sentences: tuple[str, ...]  # computed sentences about the readout and the surprise (Markdown)
    head_sentences: tuple[str, ...]  # one per head (Markdown)
    notes: tuple[str, ...]  # cut, table end, stretch, past-the-training-length notes (Markdown)
    panel_titles: tuple[str, ...] = field(default=())  # "layer ℓ, head h" per head, layer-major

    @property
    def n(self) -> int:
        return len(self.labels)

    @property
    def n_layers(self) -> int:
        return int(self.attention.shape[0])

    @property
    def n_heads(self) -> int:
        return int(self.attention.shape[1])

    @property
    def drawn(self) -> int:
        """m: the bytes whose attention is kept for drawing."""
        return int(self.attention.shape[-1])

    @property
    def drawn_labels(self) -> tuple[str, ...]:
        return self.labels[: self.drawn]

    @property
    def maps(self) -> tuple[str, ...]:
        """What the every-head grid can show: "weights", then every extra of the encoder that has
        the attention's shape and lies in [0, 1] like a weight (CoPE's gates), read from the extras."""
        out = ["weights"]
        for name, a in self.extras.items():
            if a.shape == self.attention.shape and a.size and float(a.min()) >= 0.0 and float(a.max()) <= 1.0:
                out.append(name)
        return tuple(out)

    def grid(self, shown: str = "weights") -> np.ndarray:
        """(L·H, m, m) float32: what the every-head grid draws, layer-major; the keys a causal query
        cannot see (j > i) are NaN, so they stay blank rather than read as a weight of 0."""
        if shown not in self.maps:
            raise ValueError(f"shown must be one of {self.maps}")
        a = self.attention if shown == "weights" else self.extras[shown]
        m = self.drawn
        future = np.triu(np.ones((m, m), dtype=bool), 1)  # (i, j)
        flat = a.reshape(a.shape[0] * a.shape[1], m, m)  # (L·H, m, m)
        out: np.ndarray = np.where(future[None], np.nan, flat).astype(np.float32)
        return out

    def zmax(self, shown: str = "weights") -> float:
        """The top of the grid's colour scale: the 99th percentile of the visible cells of queries
        i ≥ 1 (query 0 can only read itself: weight 1), rounded up to 0.05. A trained head spreads
        most rows thinly, so a 0…1 scale would leave nearly every cell white; the few cells above
        this share the darkest colour (their hover still gives the exact value)."""
        g = self.grid(shown)[:, 1:, :]  # (L·H, m − 1, m)
        cells = g[np.isfinite(g)]
        if not cells.size:
            return 1.0
        top = float(np.percentile(cells, ZMAX_PERCENTILE))
        return float(min(1.0, max(0.05, np.ceil(top * 20 - 1e-9) / 20)))


def shown_label(name: str, lang: str | None = None) -> str:
    """What a map of the grid is called ("weights", or an encoder extra such as CoPE's gates); an
    extra the catalogue does not name yet is called by its own name."""
    try:
        return t(f"trained_attention.shown.{name}", lang)
    except KeyError:
        return t("trained_attention.shown.other", lang, name=name)


def value_label(name: str, lang: str | None = None) -> str:
    """The hover and colour-bar word for a map's values."""
    try:
        return t(f"trained_attention.value.{name}", lang)
    except KeyError:
        return t("trained_attention.value.other", lang)


def scale_label(name: str, top: float, lang: str | None = None) -> str:
    """The colour bar's title: the value's word, and where the colours stop when below 1."""
    word = value_label(name, lang)
    return word if top >= 1.0 else t("trained_attention.capped", lang, value=word, top=top)


def run_length(text: str) -> int:
    """The length a stretch is configured for: the text's byte count after cutting, at least
    TRAIN_LEN (so a short text is read by the plain model, s = 1)."""
    data, _, _ = lm.cut_text(text)
    return max(TRAIN_LEN, len(data))


def model_for(encoding: str, stretch: str, text: str) -> lm.TinyTransformer:
    """The shipped model for `encoding`, stretched by `stretch` to the text's run length."""
    if encoding not in MODELS:
        raise ValueError(f"no trained model for {encoding!r}; trained: {MODELS}")
    if not stretch:
        return lm.shipped(encoding)
    if stretch not in STRETCHES or encoding != STRETCHED:
        raise ValueError(f"stretch {stretch!r} applies to {STRETCHED!r} only, one of {STRETCHES}")
    return lm.stretched(lm.shipped(encoding), stretch, run_length(text))


def head_stats(attention: np.ndarray) -> tuple[HeadStat, ...]:
    """Per head: the mean distance back and the share on the previous byte (HeadStat), from the
    full (L, H, n, n) weights. Queries i ≥ 1 only for the share (query 0 has no previous byte); every
    query for the distance (query 0 reads itself: distance 0)."""
    n_layers, n_heads, n, _ = attention.shape
    i = np.arange(n)
    back = (i[:, None] - i[None, :]).clip(min=0).astype(np.float64)  # (i, j) = i − j where j ≤ i
    out = []
    for layer in range(n_layers):
        for h in range(n_heads):
            w = attention[layer, h].astype(np.float64)  # (i, j)
            distance = float((w * back).sum(axis=1).mean()) if n else 0.0
            previous = float(w[i[1:], i[1:] - 1].mean()) if n > 1 else 0.0
            out.append(HeadStat(layer, h, distance, previous, previous >= PREVIOUS))
    return tuple(out)


def character_at(data: bytes, k: int) -> str:
    """The character byte k belongs to, made visible like the labels: the byte's own label when it
    starts a character, else the whole character it continues ("\\xNN" for a byte of no valid one)."""
    start = k
    while start > 0 and (data[start] & 0xC0) == 0x80 and k - start < 3:  # step back over continuation bytes
        start -= 1
    labels = lm.byte_labels(data[start : k + 1 + 3])  # the sequence from its lead byte
    if labels and k - start < len(labels) and all(x == "·" for x in labels[1 : k - start + 1]):
        return labels[0]
    return lm.byte_labels(data[k : k + 1])[0]


def quote(data: bytes, chars: int = CONTEXT_CHARS) -> str:
    """The last `chars` characters of the text, made visible like the byte labels ("␣", "↵"…),
    "…" in front when there was more."""
    text = data.decode("utf-8", errors="replace")
    tail = "".join(lm.visible(c) for c in text[-chars:])
    return ("…" if len(text) > chars else "") + tail


@bounded(8)
def read_text(encoding: str, text: str, stretch: str = "", lang: str = "en", drawn: int = DRAWN) -> TrainedRead:
    """The shipped model `encoding` (stretched by `stretch`, "" for none) over the learner's text
    (lab.lm.read_text: cut to MAX_TEXT_BYTES, and where a learned table ends), with computed
    sentences in `lang`. The attention of the first `drawn` bytes is kept for drawing (a grid of
    L·H maps of m × m floats is what the browser receives: 8 maps of 256² are ~2 MB)."""
    model = model_for(encoding, stretch, text)
    scale = max(1.0, run_length(text) / TRAIN_LEN) if stretch else 1.0
    r = lm.read_text(model, text, k=TOP_K)
    n = len(r.labels)
    m = min(n, max(1, drawn))
    attention = np.ascontiguousarray(r.attention[:, :, :m, :m], dtype=np.float32)  # (L, H, m, m)
    extras = {
        name: (np.ascontiguousarray(a[:, :, :m, :m]) if a.shape == r.attention.shape else a)
        for name, a in r.extras.items()
    }
    if n:
        top_bytes = tuple(int(b) for b in r.top_bytes[-1])
        top_probs = tuple(float(p) for p in r.top_probs[-1])
    else:
        top_bytes, top_probs = (), ()
    top_labels = tuple(next_byte_label(b) for b in top_bytes)
    heads = head_stats(r.attention)
    surprise = np.asarray(r.surprise, dtype=np.float64)
    bpb = float(surprise.mean()) if len(surprise) else float("nan")

    sentences: list[str] = []
    if not n:
        sentences.append(t("trained_attention.empty", lang))
    else:
        sentences.append(
            t(
                "trained_attention.expects",
                lang,
                context=md(quote(r.data)),
                byte=md(top_labels[0]),
                p=top_probs[0],
            )
        )
        if len(surprise):
            worst = int(np.argmax(surprise)) + 1  # surprise[k] is byte k + 1's
            whole = character_at(r.data, worst)
            part = whole != r.labels[worst]  # a byte inside a multi-byte character
            sentences.append(
                t(
                    "trained_attention.surprise_part" if part else "trained_attention.surprise",
                    lang,
                    bpb=bpb,
                    n=len(surprise),
                    byte=md(r.labels[worst]),
                    char=md(whole),
                    position=worst,
                    bits=float(surprise[worst - 1]),
                )
            )
        else:
            sentences.append(t("trained_attention.one_byte", lang))

    head_sentences = []
    for s in heads:
        key = "trained_attention.head_previous" if s.is_previous else "trained_attention.head"
        head_sentences.append(
            t(key, lang, layer=s.layer + 1, head=s.head + 1, distance=s.distance, share=s.previous, p=PREVIOUS)
        )

    notes: list[str] = []
    if r.table_end is not None:
        notes.append(t("trained_attention.table_end", lang, end_minus=r.table_end - 1, kept=n))
    elif r.cut_at is not None:
        notes.append(t("trained_attention.cut", lang, n_bytes=r.n_bytes, kept=n, limit=lm.MAX_TEXT_BYTES))
    if stretch:
        key = "trained_attention.stretch" if scale > 1.0 else "trained_attention.stretch_none"
        notes.append(t(key, lang, s=scale, run=run_length(text), train=TRAIN_LEN))
    seen = lm.training_bytes()
    unseen = [k for k in range(1, n) if r.data[k] not in seen]  # predicted bytes the corpus never has
    if unseen:
        notes.append(
            t(
                "trained_attention.unseen",
                lang,
                unseen=len(unseen),
                n=n - 1,
                bits=float(surprise[[k - 1 for k in unseen]].mean()),
                rest=float(np.delete(surprise, [k - 1 for k in unseen]).mean()) if len(unseen) < n - 1 else bpb,
            )
        )
    if n > TRAIN_LEN:
        within, past = surprise[: TRAIN_LEN - 1], surprise[TRAIN_LEN - 1 :]  # bytes 1…127 | 128…n−1
        notes.append(
            t(
                "trained_attention.past",
                lang,
                train=TRAIN_LEN,
                train_minus=TRAIN_LEN - 1,
                extra=n - TRAIN_LEN,
                within=float(within.mean()),
                past=float(past.mean()),
            )
        )
    if n > m:
        notes.append(t("trained_attention.drawn", lang, drawn=m, n=n))

    titles = tuple(t("trained_attention.panel", lang, layer=s.layer + 1, head=s.head + 1) for s in heads)
    return TrainedRead(
        encoding,
        stretch,
        scale,
        r.data,
        r.labels,
        attention,
        extras,
        top_bytes,
        top_labels,
        top_probs,
        surprise,
        bpb,
        heads,
        r.n_bytes,
        r.cut_at,
        r.table_end,
        tuple(sentences),
        tuple(head_sentences),
        tuple(notes),
        titles,
    )
