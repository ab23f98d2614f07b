"""A section, declared once: its fragment, this run's language, its heading and prose, its keys.

    page = open_chapter(ch.CHAPTER)          # the header: title, idea, paper, the code panel

    @page.section(heading="alibi.slopes.subheader", prose="slopes", owns=("alibi_log_slopes", "slopes"))
    def slopes_part(H: int) -> None:
        \"\"\"Owns the log-axis checkbox: it changes only the slopes chart.\"\"\"
        ...

What the decorator does, so no page does it by hand:
- makes the function an st.fragment: moving a widget inside reruns this section, not the page;
- sets this run's language first (a fragment rerun does not pass through app.py, whose language
  lives in a ContextVar of the script thread; without it a Korean learner's section redrew in English);
- draws the heading (a catalogue key; `level` 2 is st.header, 3 st.subheader) and the chapter's prose
  section, in that order, before the body; a chapter's section, all in one box keyed
  section-<function name> (anchor()), which a lesson's step scrolls to;
- `deeper=True` puts the section in the chapter's one "Going deeper" fold (a closed expander, key
  going_deeper, made at the first such section): expert material (layouts, implementation notes,
  side methods) a learner opens on purpose. A page calls its deeper sections last, at its top level
  (tests/test_deeper.py); the fold opens by itself when the current lesson step lands in it;
- keeps the declaration on the function (`fn.declared`): `owns` lists the widget keys, chart keys
  and proof key prefixes the section owns. tests/test_sections.py reads the declarations from the
  page's source and checks them against the body (every literal key there is declared, every declared
  key is there and nowhere else), then moves every declared widget in AppTest and requires every
  chart the section does not own to stay byte-identical.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ParamSpec, TypeVar

import streamlit as st

from explain.chapter import Chapter
from explain.prose import section as prose_section
from ui.common import header
from ui.i18n import activate, t
from ui.lesson_step import current_step

P = ParamSpec("P")
R = TypeVar("R")


@dataclass(frozen=True)
class Declared:
    owns: tuple[str, ...]
    heading: str | None
    level: int
    prose: str | None
    chapter: str | None
    deeper: bool = False


def section(
    *,
    owns: tuple[str, ...] = (),
    heading: str | None = None,
    level: int = 2,
    prose: str | None = None,
    chapter: str | None = None,
    run_every: float | None = None,
    fold: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
) -> Callable[[Callable[P, None]], Callable[P, None]]:
    """The decorator (pages use `page.section`, which fills in `chapter` and, for a deeper section,
    `fold`: the chapter's Going-deeper fold, entered around the section's fragment). `run_every`:
    seconds between reruns of the section by itself (a live panel polling a job), None for never."""
    if prose is not None and chapter is None:
        raise ValueError("a section's prose needs its chapter: declare it with page.section(...)")
    if level not in (2, 3):
        raise ValueError(f"level {level}: a section's heading is an h2 (2) or an h3 (3)")
    declared = Declared(tuple(owns), heading, level, prose, chapter, fold is not None)

    def decorate(fn: Callable[P, None]) -> Callable[P, None]:
        @functools.wraps(fn)  # the fragment's identity is the page function's module and name
        def run(*args: P.args, **kwargs: P.kwargs) -> None:
            activate()
            # A chapter's section: one box around heading, prose and body, findable in the page
            # (class st-key-section-<name>), which a lesson's step lands on (ui/lessons.py). The
            # frame's own sections (a proof, a lone question) are called several times a page: none.
            with st.container(key=anchor(fn)) if chapter is not None else contextlib.nullcontext():
                if heading is not None:
                    (st.header if level == 2 else st.subheader)(t(heading))
                if prose is not None and chapter is not None:
                    st.markdown(prose_section(chapter, prose))
                fn(*args, **kwargs)

        fragment = st.fragment(run, run_every=run_every)
        if fold is None:
            fragment.declared = declared  # type: ignore[attr-defined]
            return fragment

        # The fold is entered outside the fragment: a fragment's rerun redraws in its own place,
        # which is then inside the fold.
        @functools.wraps(fn)
        def folded(*args: P.args, **kwargs: P.kwargs) -> None:
            with fold():
                fragment(*args, **kwargs)

        folded.declared = declared  # type: ignore[attr-defined]
        return folded

    return decorate


class ChapterPage:
    """One chapter's page while it runs: its declaration, its prose, its sections."""

    def __init__(self, chapter: Chapter) -> None:
        self.chapter = chapter
        self.key = chapter.key
        self._fold: Any = None  # the Going-deeper expander, once its first section has run
        self._deeper: list[str] = []  # the names of this page's deeper sections, as declared

    def _into_fold(self) -> contextlib.AbstractContextManager[Any]:
        """The chapter's one Going-deeper fold, made where its first deeper section runs: closed,
        unless the current lesson step lands on one of the page's deeper sections."""
        if self._fold is None:
            self._fold = st.expander(
                t("common.deeper.title"),
                expanded=lands_in(self.key, self._deeper),
                icon=":material/school:",
                key=DEEPER_KEY,
            )
            self._fold.caption(t("common.deeper.caption"))
        return self._fold

    def prose(self, name: str) -> None:
        """One section of the chapter's prose file (explain/text/<lang>/<key>.md), in this run's language."""
        st.markdown(prose_section(self.key, name))

    def section(
        self,
        *,
        owns: tuple[str, ...] = (),
        heading: str | None = None,
        level: int = 2,
        prose: str | None = None,
        run_every: float | None = None,
        deeper: bool = False,
    ) -> Callable[[Callable[P, None]], Callable[P, None]]:
        """`deeper=True`: the section goes into the chapter's Going-deeper fold (see the module's docstring)."""
        decorate = section(
            owns=owns,
            heading=heading,
            level=level,
            prose=prose,
            chapter=self.key,
            run_every=run_every,
            fold=self._into_fold if deeper else None,
        )
        if not deeper:
            return decorate

        def remember(fn: Callable[P, None]) -> Callable[P, None]:
            self._deeper.append(fn.__name__)
            return decorate(fn)

        return remember


def open_chapter(chapter: Chapter) -> ChapterPage:
    """The chapter's header (title, the one-line idea, its paper, the code it runs) and its page."""
    header(chapter)
    return ChapterPage(chapter)


DEEPER_KEY = "going_deeper"  # the fold's key: Streamlit marks its box st-key-going_deeper


def lands_in(chapter_key: str, sections: list[str]) -> bool:
    """Whether the current lesson step is on this chapter and lands on one of `sections`."""
    now = current_step()
    return now is not None and now[2].chapter == chapter_key and now[2].section in sections


def anchor(fn: Callable[..., Any] | str) -> str:
    """The key of a section's box (a section function, or its name): Streamlit marks the box with the
    class st-key-section-<name>."""
    return f"section-{fn if isinstance(fn, str) else fn.__name__}"


def declared(fn: Callable[..., Any]) -> Declared | None:
    """A section's declaration (None for any other function)."""
    value = getattr(fn, "declared", None)
    return value if isinstance(value, Declared) else None
