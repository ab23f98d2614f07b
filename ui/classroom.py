"""The classroom layer every page shares: shareable links, presenter mode, predict-then-reveal
questions and lesson presets.

Shareable links
    A page's main widgets are mirrored in the address with Streamlit's own binding: pass
    ``**URL`` to the widget (``st.slider(..., key="t5_buckets", **URL)``). The widget key is the
    query parameter's name, so keys must be unique across the app and prefixed per page. Streamlit
    validates the parameter against the widget's own bounds / options (a bad or hostile value is
    dropped and the default used), removes it when the value equals the default, and keeps it out
    of the address on other pages. Never bind a key that some code also sets by hand through
    ``st.query_params`` (``s``, ``seed``, ``present``, ``lesson``, ``step``, ``d``): Streamlit
    refuses to set a bound parameter directly and raises.
Presenter mode
    A sidebar toggle (``?present=1``): larger type, taller figures (ui.common.plot), and the
    secondary controls tucked into a collapsed "More settings" expander (``secondary()``).
Predict-then-reveal
    ``predict(key, question, options, answer, explanation)``: a radio with no answer chosen, a
    Reveal button, then right / not quite and the explanation. Pages compute ``answer`` with the
    same code that draws the picture, so it cannot drift from it.
Lessons
    ``LESSONS``: four named walks through the chapters. Each step names a chapter, an optional
    sentence and seed, widget values, and one sentence telling the learner what to look at.

Keyboard: every control is a native Streamlit widget (Tab / arrow keys / Enter / Space); no custom
HTML widget is added here. Nothing a user typed is ever put into HTML here: the one st.html call
sends a fixed style sheet.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from ui.chapters import BY_KEY
from ui.i18n import t

URL = {"bind": "query-params"}  # spread into a main widget: st.slider(..., key="rs_d", **URL)

PRESENTER_KEY = "presenter"  # session_state key of the sidebar toggle
PRESENTER_PARAM = "present"  # ?present=1
FIGURE_SCALE = 1.3  # figures are this much taller in presenter mode …
FONT_SCALE = 1.35  # … and their text this much larger

# A fixed style sheet (no user text): larger type for a projector, full-width content.
PRESENTER_CSS = """<style>
[data-testid="stMainBlockContainer"] { max-width: 100%; padding-left: 2.5rem; padding-right: 2.5rem; }
[data-testid="stMain"] .stMarkdown p, [data-testid="stMain"] .stMarkdown li,
[data-testid="stMain"] [data-testid="stCaptionContainer"] { font-size: 1.35rem; line-height: 1.5; }
[data-testid="stMain"] h1 { font-size: 3.2rem; }
[data-testid="stMain"] h2 { font-size: 2.4rem; }
[data-testid="stMain"] h3 { font-size: 2rem; }
[data-testid="stMain"] .katex { font-size: 1.35em; }
[data-testid="stMain"] [data-testid="stWidgetLabel"] p { font-size: 1.05rem; }
[data-testid="stMain"] [data-testid="stMetricValue"] { font-size: 2.6rem; }
</style>"""


def url_default(key: str, param: str, default: Any, parse: Callable[[str], Any]) -> None:
    """For a widget that cannot be bound (its key clashes with a hand-set parameter, or it is an
    integer st.number_input, whose binding crashes on ?x=inf in Streamlit 1.67): on its first run in
    the session, put a valid, non-default ?param= into session state (parse returns the value or
    raises ValueError; anything else is ignored). Call url_mirror(param, value, default) after the
    widget. If the widget keeps a value= default, Streamlit logs (once per process, server log only)
    that the value was also set through session state; the value shown is the URL's."""
    if key in st.session_state:
        return
    raw = st.query_params.get(param)
    if raw is None:
        return  # the widget's own default applies
    try:
        value = parse(str(raw)[:64])
    except (ValueError, TypeError):
        return
    if value != default:
        st.session_state[key] = value


def int_in(lo: int, hi: int, step: int = 1) -> Callable[[str], int]:
    """A parser for url_default: a plain integer in [lo, hi] on the step grid, else ValueError."""

    def parse(raw: str) -> int:
        if not raw.strip().lstrip("+-").isdigit():  # no floats, no "inf", no "1e9"
            raise ValueError(raw)
        v = int(raw)
        if not (lo <= v <= hi and (v - lo) % step == 0):
            raise ValueError(raw)
        return v

    return parse


def url_mirror(param: str, value: Any, default: Any) -> None:
    """Write a hand-mirrored value to the address (and drop it when it is the default)."""
    if value == default:
        if param in st.query_params:
            del st.query_params[param]
    elif st.query_params.get(param) != str(value):
        st.query_params[param] = str(value)


# ------------------------------------------------------------------------------------ presenter
def presenter() -> bool:
    """Is presenter mode on (for this learner's session)?"""
    return bool(st.session_state.get(PRESENTER_KEY, False))


def restore_presenter() -> None:
    """First run of a session: presenter mode from ?present=1 (anything else: off)."""
    if PRESENTER_KEY not in st.session_state:
        st.session_state[PRESENTER_KEY] = str(st.query_params.get(PRESENTER_PARAM, "")).lower() in ("1", "true")


def presenter_toggle() -> None:
    st.toggle(t("classroom.presenter"), key=PRESENTER_KEY, help=t("classroom.presenter_help"))


def mirror_presenter() -> None:
    if presenter():
        if st.query_params.get(PRESENTER_PARAM) != "1":
            st.query_params[PRESENTER_PARAM] = "1"
    elif PRESENTER_PARAM in st.query_params:
        del st.query_params[PRESENTER_PARAM]


def presenter_style() -> None:
    """The presenter style sheet, when presenter mode is on (a fixed string, never user text)."""
    if presenter():
        st.html(PRESENTER_CSS)


def scale_figure(fig) -> None:
    """Presenter mode: a taller figure with larger text (in place; pages build figures per run)."""
    if not presenter():
        return
    height = fig.layout.height or 450
    size = (fig.layout.font.size or 13) * FONT_SCALE
    title_size = (fig.layout.title.font.size or 15) * FONT_SCALE
    fig.update_layout(height=round(height * FIGURE_SCALE), font_size=size, title_font_size=title_size)


@contextmanager
def secondary(label: str | None = None) -> Iterator[None]:
    """Secondary controls (fine settings, display options): shown in place normally, tucked into a
    collapsed expander in presenter mode so the projector shows only what the lesson is about.
    The widgets always exist, so their values (and the page) stay the same either way."""
    if presenter():
        with st.expander(label or t("classroom.more_settings"), expanded=False, icon=":material/tune:"):
            yield
    else:
        with st.container():
            yield


# ------------------------------------------------------------------------------ predict / reveal
def predict(
    key: str,
    question: str,
    options: Sequence[Any],
    answer: Any,
    explanation: str,
    *,
    format_func: Callable[[Any], str] = str,
) -> bool:
    """Ask the learner to predict before the picture is shown. Returns True once revealed (pages can
    put the picture the question is about behind it).

    `answer` must be one of `options` and should be computed by the code that draws the picture.
    `question`, the formatted options and `explanation` are Markdown written by the page, never
    user text."""
    options = list(options)
    if answer not in options:
        raise ValueError(f"predict({key!r}): the answer {answer!r} is not among the options {options!r}")
    choice_key, shown_key = f"{key}__choice", f"{key}__revealed"

    def reveal() -> None:
        st.session_state[shown_key] = True

    def again() -> None:
        st.session_state[shown_key] = False
        st.session_state[choice_key] = None
        st.session_state[f"{key}__picked"] = None

    # The radio holds the shown labels themselves (unique), so its state is plain text.
    labels = [format_func(o) for o in options]
    if len(set(labels)) != len(labels):
        raise ValueError(f"predict({key!r}): two options are shown alike: {labels!r}")
    # A language switch renames every option: carry the learner's pick over by its position, as long
    # as the options themselves (not their names) are still the same.
    picked_key, signature = f"{key}__picked", repr(options)
    picked = st.session_state.get(picked_key)
    if st.session_state.get(choice_key) not in labels and picked and picked[0] == signature:
        st.session_state[choice_key] = labels[picked[1]]
    with st.container(border=True, key=f"{key}__predict"):
        st.markdown(f":material/psychology_alt: {t('classroom.predict_first')} {question}")
        label = st.radio(
            t("classroom.your_prediction"),
            labels,
            index=None,
            key=choice_key,
            horizontal=len(options) <= 4,
            label_visibility="collapsed",
        )
        choice = options[labels.index(label)] if label in labels else None
        st.session_state[picked_key] = (signature, labels.index(label)) if label in labels else None
        revealed = bool(st.session_state.get(shown_key, False))
        if not revealed:
            st.button(
                t("classroom.reveal"),
                key=f"{key}__reveal",
                icon=":material/visibility:",
                on_click=reveal,
                disabled=choice is None,
                help=t("classroom.reveal_help"),
            )
            return False
        if choice is None:
            st.info(t("classroom.answer", answer=format_func(answer)))
        elif choice == answer:
            st.success(t("classroom.right", answer=format_func(answer)))
        else:
            st.warning(t("classroom.not_quite", choice=format_func(choice), answer=format_func(answer)))
        st.markdown(explanation)
        st.button(t("classroom.again"), key=f"{key}__again", icon=":material/replay:", on_click=again, type="tertiary")
        return True


# ------------------------------------------------------------------------------------ lessons
@dataclass(frozen=True)
class Step:
    chapter: str  # a key of ui.chapters.CHAPTERS
    sentence: str | None = None  # None: keep the learner's sentence
    seed: int | None = None
    controls: dict = field(default_factory=dict)  # widget key → value (valid for that widget)


@dataclass(frozen=True)
class Lesson:
    """A guided walk. Its title and each step's instruction (one sentence: what to do and what to
    look at; Markdown, no user text) are words, so they live in the catalogue:
    classroom.lessons.<key>.title and .step1, .step2, …"""

    key: str
    steps: tuple[Step, ...]

    @property
    def title(self) -> str:
        return t(f"classroom.lessons.{self.key}.title")

    def instruction(self, k: int) -> str:
        return t(f"classroom.lessons.{self.key}.step{k + 1}")


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "why-relative",
        (
            Step("why-order", sentence="dog bites man", controls={"with_pe": False}),
            Step("why-order", controls={"with_pe": True}),
            Step("trouble", controls={"trouble_prefix": "Well,"}),
            Step("shaw", sentence="The cat sat on the mat. The dog sat on the log.", controls={"shaw_k": 4}),
            Step("t5", controls={"t5_buckets": 32, "t5_max_distance": 128, "t5_causal": False}),
            Step("rope", controls={"rope_shift": 1000, "rope_size": 24}),
        ),
    ),
    Lesson(
        "extrapolation",
        (
            Step("trouble", controls={"trouble_l_train": 32, "trouble_l_test": 128}),
            Step(
                "learned",
                sentence="A longer sentence than the table has rows for, so the last words fall off the end.",
                controls={"max_len": 8},
            ),
            Step("alibi", controls={"alibi_heads": 8, "alibi_train_len": 32, "alibi_test_len": 512}),
            Step("rope-scaling", controls={"rs_d": 128, "rs_L": 4096, "rs_s": 4.0}),
        ),
    ),
    Lesson(
        "rope-from-scratch",
        (
            Step("sinusoidal", controls={"base": 10_000, "p": 5, "delta": 3}),
            Step("rope", controls={"rope_d": 8, "rope_m": 2, "rope_n": 6}),
            Step("rope", controls={"rope_size": 32, "rope_shift": 1_000_000}),
            Step("rope", controls={"rope_decay_d": 128, "rope_decay_dist": 4096}),
            Step("derivations", controls={"derivation": "rope-matrix-2d", "derivations_all": False}),
        ),
    ),
    Lesson(
        "what-cope-counts",
        (
            Step(
                "cope",
                sentence="Alice met Bob. Bob waved at Alice. Then Alice smiled and Alice left.",
                controls={"cope_unit": "sentence ends", "cope_all_open": False, "cope_sharpness": 10.0},
            ),
            Step("cope", controls={"cope_unit": "a word you pick", "cope_word": "alice", "cope_all_open": False}),
            Step("cope", controls={"cope_all_open": True}),
            Step("cope", controls={"cope_all_open": False, "cope_unit": "sentence ends", "cope_sharpness": 0.0}),
        ),
    ),
)
LESSON_BY_KEY = {lesson.key: lesson for lesson in LESSONS}
LESSON_KEY, STEP_KEY = "lesson", "lesson_step"  # session_state keys
LESSON_PARAM, STEP_PARAM = "lesson", "step"  # ?lesson=rope-from-scratch&step=2 (1-based)
_GO = "_lesson_go"  # set by a callback: switch to the current step's page on this run


def current_step() -> tuple[Lesson, int, Step] | None:
    lesson = LESSON_BY_KEY.get(st.session_state.get(LESSON_KEY))
    if lesson is None:
        return None
    k = min(max(int(st.session_state.get(STEP_KEY, 0)), 0), len(lesson.steps) - 1)
    return lesson, k, lesson.steps[k]


def apply_step(lesson_key: str, k: int) -> None:
    """Put the learner on step k of a lesson: sentence, seed and widget values into session state.
    Called from widget callbacks (before the script runs), the only time widget-backed keys may be
    set; the page switch follows on this run (follow_lesson)."""
    lesson = LESSON_BY_KEY[lesson_key]
    k = min(max(k, 0), len(lesson.steps) - 1)
    step = lesson.steps[k]
    st.session_state[LESSON_KEY] = lesson_key
    st.session_state[STEP_KEY] = k
    if step.sentence is not None:
        st.session_state["sentence"] = step.sentence
    if step.seed is not None:
        st.session_state["seed"] = step.seed
    for key, value in step.controls.items():
        st.session_state[key] = value
    st.session_state[_GO] = True


def _start_lesson() -> None:
    chosen = st.session_state.get(LESSON_KEY)
    if chosen in LESSON_BY_KEY:
        apply_step(chosen, 0)
    else:
        st.session_state.pop(STEP_KEY, None)


def _move(delta: int) -> None:
    now = current_step()
    if now is not None:
        apply_step(now[0].key, now[1] + delta)


def _leave() -> None:
    st.session_state[LESSON_KEY] = None
    st.session_state.pop(STEP_KEY, None)


def restore_lesson() -> None:
    """First run of a session: the lesson and step from ?lesson=…&step=… (1-based), if valid. The
    controls themselves come from the address (each page's bound widgets), not from the lesson."""
    if LESSON_KEY in st.session_state:
        return
    lesson = LESSON_BY_KEY.get(str(st.query_params.get(LESSON_PARAM, "")))
    st.session_state[LESSON_KEY] = lesson.key if lesson else None
    if lesson is not None:
        try:
            k = int(str(st.query_params.get(STEP_PARAM, "1"))[:4]) - 1
        except ValueError:
            k = 0
        st.session_state[STEP_KEY] = min(max(k, 0), len(lesson.steps) - 1)


def lesson_sidebar() -> None:
    """The sidebar's lesson picker and its Previous / Next buttons."""
    st.selectbox(
        t("classroom.lesson"),
        [lesson.key for lesson in LESSONS],
        index=None,
        key=LESSON_KEY,
        format_func={lesson.key: lesson.title for lesson in LESSONS}.get,
        placeholder=t("classroom.lesson_placeholder"),
        on_change=_start_lesson,
        help=t("classroom.lesson_help"),
    )
    now = current_step()
    if now is None:
        return
    lesson, k, step = now
    st.caption(t("classroom.step_of", k=k + 1, n=len(lesson.steps), chapter=BY_KEY[step.chapter].title))
    b1, b2, b3 = st.columns(3)
    b1.button(
        t("classroom.previous"),
        key="lesson_prev",
        icon=":material/arrow_back:",
        on_click=_move,
        args=(-1,),
        disabled=k == 0,
        width="stretch",
    )
    b2.button(
        t("classroom.next"),
        key="lesson_next",
        icon=":material/arrow_forward:",
        on_click=_move,
        args=(1,),
        disabled=k == len(lesson.steps) - 1,
        width="stretch",
    )
    b3.button(t("classroom.leave"), key="lesson_leave", icon=":material/close:", on_click=_leave, width="stretch")


def mirror_lesson() -> None:
    now = current_step()
    wanted = {LESSON_PARAM: now[0].key, STEP_PARAM: str(now[1] + 1)} if now else {}
    for param in (LESSON_PARAM, STEP_PARAM):
        if param in wanted:
            if st.query_params.get(param) != wanted[param]:
                st.query_params[param] = wanted[param]
        elif param in st.query_params:
            del st.query_params[param]


def follow_lesson() -> None:
    """After a lesson button: open the step's page (this stops the run and starts the page)."""
    if st.session_state.pop(_GO, False):
        now = current_step()
        if now is not None:
            # Explicit parameters, not None: with None Streamlit clears the address and refuses when
            # it holds a parameter bound to a widget of the page being left. The new page's bound
            # widgets write their own parameters; these are the hand-mirrored ones.
            keep = {
                "s": str(st.session_state.get("sentence", "")),
                "seed": str(st.session_state.get("seed", 0)),
                LESSON_PARAM: now[0].key,
                STEP_PARAM: str(now[1] + 1),
            }
            if presenter():
                keep[PRESENTER_PARAM] = "1"
            if st.session_state.get("lang", "en") != "en":
                keep["lang"] = str(st.session_state["lang"])
            st.switch_page(BY_KEY[now[2].chapter].path, query_params=keep)


def lesson_banner(chapter_key: str) -> None:
    """The current step's instruction at the top of its page."""
    now = current_step()
    if now is None:
        return
    lesson, k, step = now
    if step.chapter == chapter_key:
        st.info(
            t("classroom.banner", lesson=lesson.title, k=k + 1, n=len(lesson.steps), instruction=lesson.instruction(k)),
            icon=":material/school:",
        )
    else:
        st.caption(t("classroom.elsewhere", lesson=lesson.title, k=k + 1, chapter=BY_KEY[step.chapter].title))
