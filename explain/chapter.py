"""A chapter, declared once: everything the app, the README and the tests know about one chapter.

Each chapter's explain module (explain/chapters/<name>.py) ends its preamble with one `CHAPTER =
Chapter(...)`. ui/chapters.py collects them (navigation, header, trained panel, the derivations'
chapter map), tests/test_readme.py checks the README's list against them, and
tests/test_classroom.py opens every chapter's `link`. Nothing else lists chapters.

Words are not here: a chapter's title and its one-line idea live in the catalogue
(explain/text/<lang>/strings/chapters.toml, `chapters.<key>.title` / `.idea`) and follow the
learner's language.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib import import_module
from types import MappingProxyType
from typing import Any

from encoders.base import Paper
from explain.i18n import t

# The parts of the atlas, in the navigation's order; their names are in the catalogue
# (chapters.parts.<part>). "Bias" holds every method that adds a function of the distance to the
# logits (T5, ALiBi, Kerple, FIRE): where a learner looks for "a bias on distance". "Start" holds the
# first page: the learner's path through the atlas and the map of the field.
PARTS = ("Start", "Absolute", "Relative", "Bias", "Rotary", "Contextual", "Beyond", "Labs")


def _frozen(values: Mapping[str, Any] | None = None) -> Mapping[str, Any]:
    return MappingProxyType(dict(values or {}))


@dataclass(frozen=True)
class Chapter:
    key: str  # the one spelling: URL path (/<key>), catalogue key (chapters.<key>), prose file (<key>.md)
    part: str  # one of PARTS
    page: str  # the page script, relative to the app's root (pages/<part>/<name>.py)
    icon: str  # a Material icon (":material/…:"), drawn from Streamlit's own font
    order: int  # its place within its part (smaller first)
    papers: tuple[Paper, ...] = ()  # the header's citation lines (more than two: a folded list)
    # What the "show the code" panel prints (inspect.getsource), as "module:qualified.name": named,
    # not imported, so a declaration imports nothing it shows (no import circle through a chapter's
    # own modules); tests/test_page_code.py resolves every one.
    sources: tuple[str, ...] = ()
    encodings: tuple[str, ...] = ()  # registry names the chapter is about: its trained panel reads these
    derivations: tuple[str, ...] = ()  # the proven identities this chapter shows (explain/derivations ids)
    # The link a teacher shares: query parameters (non-default values of the page's controls) and
    # what the controls show when it is opened, in every language (tests/test_classroom.py).
    link: Mapping[str, str] = field(default_factory=_frozen)
    link_shows: Mapping[str, Any] = field(default_factory=_frozen)

    def __post_init__(self) -> None:
        if self.part not in PARTS:
            raise ValueError(f"chapter {self.key!r}: part {self.part!r} is not one of {PARTS}")
        object.__setattr__(self, "link", _frozen(self.link))
        object.__setattr__(self, "link_shows", _frozen(self.link_shows))

    @property
    def path(self) -> str:  # Streamlit's name for the page script
        return self.page

    @property
    def title(self) -> str:  # in the current run's language
        return t(f"chapters.{self.key}.title")


def resolve(source: str) -> Callable[..., Any]:
    """A declared source ("encoders.rope:RoPE.logit_terms") as the object it names."""
    module, _, name = source.partition(":")
    obj: Any = import_module(module)
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj  # type: ignore[no-any-return]
