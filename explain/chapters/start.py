"""What the "Start here" chapter shows: the questions a learner comes with, each mapped to a path
through the atlas with time estimates (issue 43), and a map of the field (issue 41): where position
enters a Transformer, one table of each method's properties, and which well-known models use which
encoding, each with its source.

Nothing about a method is typed here. Where position enters, whether the logits see only an offset
(and which one) and the parameter count come from the encoder classes in encoders/ (REGISTRY: `kind`,
`relative_sign`, `shift_invariant`, `shared_across_layers`, and the module built by encoders.build at
one stated size); the length test comes from the byte-level models' study
(assets/lm/study/, read as the "Trained on real text" lab reads it: means over seeds). A method's chapter is the one
that declares it among its `encodings`, else the chapter whose key is the method's registry name.

The path is declared once, here: PATH is the core path in reading order, QUESTIONS maps each question
to the steps that answer it. Each step's minutes are computed from the prose it names (English words
at READING_WPM, plus TRY_MINUTES for each section whose controls the learner should move). The core
path's order also gives every chapter its "next" (`next_chapters`), which ui/path.py draws at the end
of each page, and marks the core path in the navigation.

Functions take `lang` so that a cached caller keys on it.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import get_args

import plotly.graph_objects as go
import torch

from encoders import REGISTRY, build
from encoders.base import Kind
from explain import methods
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.prose import sections as prose_sections
from explain.question import Question

from . import real_text_study as study
from .common import sign_text
from .real_text import TRAIN_LEN
from .real_text_study import STUDY as LM_DIR
from .real_text_study import Estimate
from .start_figures import taxonomy
from .start_models import MODELS

# Where position enters, in the order a layer computes: added to the input, turning q and k, added to
# the logits, counted from q·k, nowhere (tests/test_start.py: exactly the kinds encoders/base.py has).
KIND_ORDER: tuple[Kind, ...] = ("input", "rotary", "bias", "contextual", "none")
KINDS: frozenset[str] = frozenset(get_args(Kind))
NOWHERE: Kind = "none"  # the Kind of a method that puts position nowhere (a Kind, not a registry name)

# The size at which the table counts parameters: one layer of a BERT-base-sized model (width 768,
# 12 heads) configured for a trained length of 512 tokens (each class's own config_for_lengths).
PARAM_D_MODEL = 768
PARAM_HEADS = 12
PARAM_TRAINED = 512

READING_WPM = 200  # English words a minute: an unhurried reader of technical prose
TRY_MINUTES = 2  # per section whose controls the learner is asked to move
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")


# ------------------------------------------------------------------------------------ the path


@dataclass(frozen=True)
class Step:
    """One chapter of a path: the sections to read there (their headings, as catalogue keys) and the
    prose sections those headings hold (keys of explain/text/<lang>/<chapter>.md)."""

    chapter: str
    headings: tuple[str, ...]
    prose: tuple[str, ...]

    def words(self) -> int:
        """English words in the step's prose sections (math and code count as what they are)."""
        text = prose_sections(self.chapter, "en")
        return sum(len(_WORD.findall(text[key])) for key in self.prose)

    def minutes(self) -> int:
        """Reading at READING_WPM plus TRY_MINUTES for each section, rounded up."""
        return math.ceil(self.words() / READING_WPM + TRY_MINUTES * len(self.headings))


# The core path, in reading order: why a Transformer needs positions, the first answer (sinusoids),
# what is wrong with absolute positions, RoPE, why long contexts break and how they are stretched,
# the bias that extrapolates, and the atlas's own measurement of all that on real text.
PATH: tuple[Step, ...] = (
    Step("why-order", ("why_order.shuffle_heading",), ("intro", "shuffle", "with-pe")),
    Step("sinusoidal", ("sinusoidal.heading.matrix", "sinusoidal.heading.dot"), ("intro", "matrix", "dot")),
    Step("trouble", ("trouble.shift.header", "trouble.length.header"), ("intro", "shift", "length")),
    Step(
        "rope",
        ("rope.circles.subheader", "rope.identity.subheader", "rope.decay.subheader"),
        ("intro", "circles", "identity", "decay"),
    ),
    Step(
        "rope-scaling",
        ("rope_scaling.angles.subheader", "rope_scaling.distance.subheader"),
        ("intro", "angles", "distance"),
    ),
    Step("alibi", ("alibi.extrapolation.subheader", "alibi.nope.header"), ("intro", "extrapolation", "nope")),
    Step("real-text", ("real_text.lengths_header",), ("intro", "lengths")),
)
CORE: tuple[str, ...] = tuple(step.chapter for step in PATH)
_STEP = {step.chapter: step for step in PATH}

# The questions a learner comes with → the steps of the path that answer them, in order. Their words
# are start.question.<key> in the catalogue.
QUESTIONS: dict[str, tuple[str, ...]] = {
    "why": ("why-order", "sinusoidal", "trouble"),
    "rotary": ("sinusoidal", "rope"),
    "long": ("trouble", "rope-scaling", "alibi", "real-text"),
}


def step(chapter: str) -> Step:
    return _STEP[chapter]


def question_minutes(key: str) -> int:
    return sum(step(c).minutes() for c in QUESTIONS[key])


def path_minutes() -> int:
    return sum(s.minutes() for s in PATH)


def next_chapters(key: str, order: Sequence[str]) -> tuple[str | None, str | None]:
    """(the next chapter on the core path, the next chapter in the navigation) after `key`, either
    None at an end; `order` is every chapter's key in the navigation's order. The start page leads
    to the first core chapter; a chapter off the core path has no core next."""
    rest = [k for k in order if k != CHAPTER.key]
    if key == CHAPTER.key:
        return CORE[0], None
    core_next = CORE[CORE.index(key) + 1] if key in CORE and key != CORE[-1] else None
    at = rest.index(key) if key in rest else len(rest)
    nav_next = rest[at + 1] if at + 1 < len(rest) else None
    return core_next, nav_next


# ------------------------------------------------------------------------ the map of the field


def by_kind() -> dict[str, tuple[str, ...]]:
    """Every registered method under the place where its position enters (KIND_ORDER), in the
    registry's order."""
    return {kind: tuple(n for n, cls in REGISTRY.items() if cls.kind == kind) for kind in KIND_ORDER}


# The declared chapters as the page passes them (cacheable primitives): (key, encodings) of each, in
# the navigation's order (ui.chapters.CHAPTERS; explain/ does not import ui/).
Chapters = tuple[tuple[str, tuple[str, ...]], ...]


def declared(chapters: Sequence[Chapter]) -> Chapters:
    return tuple((c.key, tuple(c.encodings)) for c in chapters)


def chapter_of(name: str, chapters: Chapters) -> str | None:
    """The chapter about a method: the first one declaring it among its encodings, else the one
    whose key is its registry name, else None."""
    for key, encodings in chapters:
        if name in encodings:
            return key
    return next((key for key, _ in chapters if key == name), None)


def relative(name: str) -> str:
    """Answers "yes" when the logits depend on the positions only through one offset (shift-invariant with
    a relative sign), "partly" when a relative sign exists but shifting every position can still
    change them, "no" for an absolute encoding, "none" for no encoding at all."""
    cls = REGISTRY[name]
    if cls.kind == NOWHERE:
        return "none"
    if cls.relative_sign is None:
        return "no"
    return "yes" if cls.shift_invariant else "partly"


def parameters(name: str) -> int:
    """Trainable numbers one layer of `name` adds, at PARAM_D_MODEL × PARAM_HEADS, configured for a
    trained length of PARAM_TRAINED (fixed buffers, such as ALiBi's slopes, are not parameters)."""
    cls = REGISTRY[name]
    config = cls.config_for_lengths(PARAM_TRAINED, PARAM_TRAINED)
    with torch.no_grad():
        encoder = build(name, PARAM_D_MODEL, PARAM_HEADS, config=config)
    return sum(p.numel() for p in encoder.parameters() if p.requires_grad)


# A fact of the registry, the same for every learner and every run: built once per process (the
# table, the question and the sentence below it all ask; DeBERTa's table alone is 1.5 M numbers).
_parameters = functools.cache(parameters)


@dataclass(frozen=True)
class Measured:
    """The atlas's own length test of one encoding (the study, over seeds): bits per byte at the
    trained length, and the paired change at `long` bytes (None: no value there, e.g. a learned table
    has no rows past its trained length)."""

    base: Estimate
    change: Estimate | None
    trained: int
    long: int
    zero_shot: bool = False  # a context-extension scheme applied at inference to a trained model, no fine-tuning


def measured(name: str, directory: str = LM_DIR) -> Measured | None:
    """None for an encoding the atlas did not train and read longer. Means and intervals over the
    study's seeds (explain/chapters/real_text_study.py)."""
    st = study.load(directory)
    if st is None or name not in (*st.encodings, *st.stretches):
        return None
    base = study.over(st, name, study.at(st.train_len))
    if base is None:
        return None
    change = study.over(st, name, study.change_at(st.top))
    return Measured(base, change, st.train_len, st.top, zero_shot=name in st.stretches)


@dataclass(frozen=True)
class Row:
    name: str
    kind: str
    relative: str  # yes | partly | no | none
    parameters: int
    shared: bool  # one table for every layer (T5)
    chapter: str | None
    measured: Measured | None


def rows(chapters: Chapters, directory: str = LM_DIR) -> tuple[Row, ...]:
    """One row per registered method, grouped by KIND_ORDER."""
    out = []
    for kind, names in by_kind().items():
        for name in names:
            out.append(
                Row(
                    name,
                    kind,
                    relative(name),
                    _parameters(name),
                    bool(REGISTRY[name].shared_across_layers),
                    chapter_of(name, chapters),
                    measured(name, directory),
                )
            )
    return tuple(out)


def _link(label: str, chapter: str | None, lang: str) -> str:
    """A Markdown link to a chapter, relative to the app's address (so it works under any base
    path), keeping the language; the bare label when there is no chapter."""
    return f"[{label}](./{chapter}?lang={lang})" if chapter else label


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def relative_text(name: str, lang: str) -> str:
    answer = relative(name)
    if answer in ("yes", "partly"):
        return t(f"start.relative.{answer}", lang, sign=sign_text(name, lang))
    return t(f"start.relative.{answer}", lang)


def measured_text(m: Measured | None, lang: str) -> str:
    if m is None:
        return t("start.measured.none", lang)
    if m.change is None:
        return t("start.measured.no_rows", lang, trained=m.trained, long=m.long)
    verdict = t(f"real_text.verdict.{ {1: 'worse', -1: 'better', 0: 'same'}[m.change.sign] }", lang)
    text = t("start.measured.change", lang, base=m.base.mean, change=m.change.mean, verdict=verdict)
    return text + (t("start.measured.zero_shot", lang) if m.zero_shot else "")


@bounded(4)  # one entry per language (and index file): a small Markdown string
def property_table(chapters: Chapters, lang: str, directory: str = LM_DIR) -> str:
    """The property table as Markdown (method names link to their chapters)."""
    cols = ("method", "enters", "relative", "parameters", "measured", "cost")
    head = (
        "| "
        + " | ".join(measured_header(lang, directory) if c == "measured" else t(f"start.table.{c}", lang) for c in cols)
        + " |"
    )
    lines = [head, "|" + "---|" * len(cols)]
    for r in rows(chapters, directory):
        params = f"{r.parameters:,}" + (t("start.table.shared", lang) if r.shared else "")
        cells = (
            _link(methods.short(r.name, lang), r.chapter, lang),
            t(f"start.kind.{r.kind}.short", lang),
            relative_text(r.name, lang),
            params,
            measured_text(r.measured, lang),
            t(f"start.cost.{r.kind}", lang),
        )
        lines.append("| " + " | ".join(_cell(c) if k else c for k, c in enumerate(cells)) + " |")
    return "\n".join(lines)


def longer_factor(directory: str = LM_DIR) -> int:
    """How many times its trained length the length test reads (1 when nothing was evaluated)."""
    st = study.load(directory)
    return (st.top // st.train_len) if st else 1


def measured_header(lang: str, directory: str = LM_DIR) -> str:
    """The length test's column title: the trained length and how many times longer it was read."""
    return t("start.table.measured", lang, trained=TRAIN_LEN, factor=longer_factor(directory))


@bounded(4)  # one short sentence per language (and index file)
def size_note(lang: str, directory: str = LM_DIR) -> str:
    """The table's size caption. Cached by the page: it reads the study's run files (~30 ms), and the
    start page is the one every new session runs first."""
    return t("start.table.size", lang, d=PARAM_D_MODEL, h=PARAM_HEADS, n=PARAM_TRAINED, factor=longer_factor(directory))


def taxonomy_figure(lang: str) -> go.Figure:
    """The taxonomy: one column per KIND_ORDER entry, every registered method in its column."""
    groups = by_kind()
    return taxonomy(
        KIND_ORDER,
        {kind: [methods.short(n, lang) for n in names] for kind, names in groups.items()},
        headers={kind: t(f"start.kind.{kind}.header", lang) for kind in KIND_ORDER},
        formulas={kind: t(f"start.kind.{kind}.formula", lang) for kind in KIND_ORDER},
        hover={methods.short(n, lang): f"{methods.label(n, lang)}: {relative_text(n, lang)}" for n in REGISTRY},
        title=t("start.taxonomy.title", lang),
        flow=t("start.taxonomy.flow", lang),
    )


# ------------------------------------------------------------------------------ who uses what
# The models and their sources are data: start_models.py.


@bounded(4)  # one entry per language: a small Markdown string
def models_table(chapters: Chapters, lang: str) -> str:
    """Who uses what, as Markdown: model, the encoding (linked to its chapter), what the sources
    say of it, the sources."""
    cols = ("model", "encoding", "detail", "source")
    lines = ["| " + " | ".join(t(f"start.models_table.{c}", lang) for c in cols) + " |", "|" + "---|" * len(cols)]
    for m in MODELS:
        facts = {k: f"{v:,}" if isinstance(v, int) else v for k, v in m.facts.items()}
        sources = " · ".join(f"[{_cell(s.label)}]({s.url})" for s in m.sources)
        encoding = " + ".join(_link(methods.short(n, lang), chapter_of(n, chapters), lang) for n in m.method)
        lines.append(f"| {m.name} | {encoding} | {_cell(t(f'start.models.{m.key}', lang, **facts))} | {sources} |")
    return "\n".join(lines)


# ------------------------------------------------------------------------------ the question

# Four encodings a learner meets first; which of them sees only the distance and adds no parameter?
QUIZ: tuple[str, ...] = ("learned", "t5", "rope", "deberta")


@bounded(4)
def quiz(lang: str) -> Question:
    """Predict, then reveal, from the table's own facts: the one option relative ("yes") with no
    parameters at the table's size (ValueError if not exactly one is)."""
    free = [name for name in QUIZ if relative(name) == "yes" and _parameters(name) == 0]
    if len(free) != 1:
        raise ValueError(f"the question needs exactly one relative, parameter-free option, found {free}")
    answer = free[0]
    others = "; ".join(
        t(
            "start.quiz.other",
            lang,
            name=methods.short(n, lang),
            params=f"{_parameters(n):,}",
            relative=relative_text(n, lang),
        )
        for n in QUIZ
        if n != answer
    )
    facts: dict[str, object] = {
        "answer": methods.short(answer, lang),
        "sign": sign_text(answer, lang),
        "params": _parameters(answer),
        "others": others,
        "d": PARAM_D_MODEL,
        "h": PARAM_HEADS,
    }
    return Question(
        key="start_q_quiz",
        prompt=t("start.quiz.prompt", lang),
        options=QUIZ,
        labels=tuple(methods.short(n, lang) for n in QUIZ),
        answer=answer,
        explanation=t("start.quiz.explanation", lang, **facts),
        facts=facts,
    )


# ----------------------------------------------------------------------------- why RoPE won


@bounded(4)
def rope_numbers(lang: str, directory: str = LM_DIR) -> str | None:
    """The atlas's own numbers behind "RoPE does not extrapolate by itself": RoPE's and ALiBi's
    paired change at the longest length read, and RoPE's parameter count (None when the models were
    not evaluated)."""
    rope, alibi = measured("rope", directory), measured("alibi", directory)
    if rope is None or alibi is None or rope.change is None or alibi.change is None:
        return None
    return t(
        "start.why_rope.measured",
        lang,
        rope=rope.change.mean,
        alibi=alibi.change.mean,
        trained=rope.trained,
        long=rope.long,
        params=_parameters("rope"),
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="start",
    part="Start",
    page="pages/start/start.py",
    icon=":material/explore:",
    order=0,
    sources=("explain.chapters.start:relative", "explain.chapters.start:parameters"),
    link={"start_q": "long"},
    link_shows={"start_q": "long"},
)
