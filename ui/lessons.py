"""Lessons in the sidebar: pick a walk, step through it, and each step opens its page with its
sentence and controls set (the lessons themselves are data: explain/lessons.py).

Kept in the address as ?lesson=<key>&step=<k> (1-based), so a link opens the same step.

A step lands on the section it talks about: its page opens scrolled to that section's box (ui/section.py
marks it st-key-section-<name>; a section in the chapter's Going-deeper fold opens the fold first),
which is outlined for a few seconds (LAND_JS, a fixed script whose
only datum is the section's name, a Python identifier from explain/lessons.py, never user text).
"""

from __future__ import annotations

import json

import streamlit as st

from explain.lessons import BY_KEY as LESSON_BY_KEY
from explain.lessons import LESSONS
from ui.chapters import BY_KEY
from ui.i18n import lang as learner_lang
from ui.i18n import option_names, t
from ui.lesson_step import LESSON_KEY, STEP_KEY, current_step
from ui.presenter import PRESENTER, presenter
from ui.section import anchor
from ui.url_state import Param

LESSON = Param.choice(LESSON_KEY, (None, *LESSON_BY_KEY), default=None, param="lesson")
STEP_PARAM = "step"  # ?step=2 (1-based)
_GO = "_lesson_go"  # set by a callback: switch to the current step's page on this run
_LAND = "_lesson_land"  # set with a step: its page scrolls to the step's section once, on its next run

# Lands on a section: scrolls its box to the top of the view (below Streamlit's header) and outlines
# it for a few seconds. The page is still being drawn when this runs, and charts above the section
# change the layout as they draw (a chart box holds a 450 px placeholder until it is first laid out),
# so it keeps the box in place until the run has ended and the box has not moved for a while; it
# gives way at once to a learner who scrolls, clicks or presses a key.
LAND_JS = """<script>
(() => {
  const target = __TARGET__;
  const landing = __N__;  // each landing's script differs: the same one again would not run again
  const app = document.querySelector('[data-testid="stApp"]');
  const t0 = performance.now();
  let stop = false, still = 0, idleSince = 0, marked = null;
  const quit = () => { stop = true; };
  for (const type of ['wheel', 'touchstart', 'mousedown', 'keydown'])
    window.addEventListener(type, quit, {capture: true, once: true, passive: true});
  const tick = () => {
    if (stop || performance.now() - t0 > 20000) return;
    const box = document.querySelector('.st-key-' + target);
    const idle = app && app.getAttribute('data-test-script-state') === 'notRunning';
    idleSince = idle ? (idleSince || performance.now()) : 0;
    if (box) {
      // A section in the chapter's Going-deeper fold (ui/section.py): open the fold first, as a
      // learner's click on its title would (the page sets it open when it is first drawn, but an
      // expander already on the page keeps the state it had). No other fold is ever opened.
      const fold = box.closest('.st-key-going_deeper');
      const details = fold && fold.querySelector('details');
      if (details && !details.open) { const title = details.querySelector('summary'); if (title) title.click(); }
      box.style.scrollMarginTop = '4.5rem';
      const before = box.getBoundingClientRect().top;
      box.scrollIntoView({block: 'start'});
      const after = box.getBoundingClientRect().top;
      still = Math.abs(after - before) < 2 ? still + 1 : 0;
      if (marked !== box) {
        marked = box;
        // outlined once (the animation fades it out), again when the same section lands again, and
        // again if a rerun replaced the box while the page settled
        delete box.dataset.peLanded;
        void box.offsetWidth;
        box.dataset.peLanded = target;
      }
      if (idleSince && performance.now() - idleSince > 2500 && still >= 4) return;
    }
    setTimeout(tick, 120);
  };
  tick();
})();
</script>
<style>
@keyframes pe-landed { from { box-shadow: 0 0 0 4px #1a5fb4; } to { box-shadow: 0 0 0 4px transparent; } }
[data-pe-landed] { border-radius: 0.5rem; animation: pe-landed 5s ease-in forwards; }
</style>"""


def apply_step(lesson_key: str, k: int) -> None:
    """Put the learner on step k of a lesson: sentence, seed and widget values into session state.
    Called from widget callbacks (before the script runs), the only time widget-backed keys may be
    set; the page switch follows on this run (follow_lesson)."""
    lesson = LESSON_BY_KEY[lesson_key]
    k = min(max(k, 0), len(lesson.steps) - 1)
    step = lesson.steps[k]
    st.session_state[LESSON_KEY] = lesson_key
    st.session_state[STEP_KEY] = k
    lang = learner_lang()  # from session state: a callback runs before this run sets the language
    sentence = step.sentence_in(lang)
    if sentence is not None:
        st.session_state["sentence"] = sentence
    if step.seed is not None:
        st.session_state["seed"] = step.seed
    for key, value in step.controls_in(lang).items():
        st.session_state[key] = value
    st.session_state[_GO] = True
    st.session_state[_LAND] = True


def _start_lesson() -> None:
    chosen = st.session_state.get(LESSON_KEY)
    if isinstance(chosen, str) and chosen in LESSON_BY_KEY:
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
    controls themselves come from the address (each page's own parameters), not from the lesson."""
    if LESSON_KEY in st.session_state:
        return
    key = LESSON.from_url()
    st.session_state[LESSON_KEY] = key
    if key is not None:
        n = len(LESSON_BY_KEY[key].steps)
        step = Param.integer(STEP_KEY, 1, n, default=1, param=STEP_PARAM).from_url() or 1
        st.session_state[STEP_KEY] = step - 1
        st.session_state[_LAND] = True  # a lesson's link opens on its step's section too


def lesson_sidebar() -> None:
    """The sidebar's lesson picker and its Previous / Next buttons."""
    st.selectbox(
        t("classroom.lesson"),
        [lesson.key for lesson in LESSONS],
        index=None,
        key=LESSON_KEY,
        format_func=option_names(LESSON_BY_KEY, lambda key: LESSON_BY_KEY[key].title()),
        placeholder=t("classroom.lesson_placeholder"),
        on_change=_start_lesson,
        help=t("classroom.lesson_help"),
    )
    now = current_step()
    if now is None:
        return
    lesson, k, step = now
    where = t("classroom.step_of", k=k + 1, n=len(lesson.steps), chapter=BY_KEY[step.chapter].title)
    if lesson.minutes is not None:
        where += " · " + t("classroom.timed", minutes=lesson.minutes)
    st.caption(where)
    # Previous and Next side by side, Leave under them: three in a row were cut to "P…", "N…", "L…"
    # (Korean "이.", "다..") in the sidebar's width.
    b1, b2 = st.columns(2)
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
    st.button(t("classroom.leave"), key="lesson_leave", icon=":material/close:", on_click=_leave, width="stretch")


def mirror_lesson() -> None:
    now = current_step()
    LESSON.mirror(now[0].key if now else None)
    Param.integer(STEP_KEY, 1, 99, default=0, param=STEP_PARAM).mirror(now[1] + 1 if now else 0)


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
                LESSON.param: now[0].key,
                STEP_PARAM: str(now[1] + 1),
            }
            if presenter():
                keep[PRESENTER.param] = "1"
            if learner_lang() != "en":  # the valid language (the switch's state can be None in a test)
                keep["lang"] = learner_lang()
            st.switch_page(BY_KEY[now[2].chapter].path, query_params=keep)


def lesson_banner(chapter_key: str) -> None:
    """The current step's instruction at the top of its page."""
    now = current_step()
    if now is None:
        return
    lesson, k, step = now
    if step.chapter == chapter_key:
        words = dict(lesson=lesson.title(), k=k + 1, n=len(lesson.steps), instruction=lesson.instruction(k))
        if step.minutes is not None:
            text = t("classroom.banner_timed", minutes=step.minutes, **words)
        else:
            text = t("classroom.banner", **words)
        if k == len(lesson.steps) - 1:
            text += "\n\n" + t("classroom.what_next", next=lesson.what_next())
        st.info(text, icon=":material/school:")
        if st.session_state.pop(_LAND, False) and step.section:
            land(step.section)
    else:
        st.caption(t("classroom.elsewhere", lesson=lesson.title(), k=k + 1, chapter=BY_KEY[step.chapter].title))


def land(section: str) -> None:
    """Scroll this page to a section's box and outline it (LAND_JS), from the sidebar's foot, where
    the script's empty element takes no room from the chapter."""
    if not section.isidentifier():  # a function's name: nothing else ever reaches the script
        raise ValueError(f"not a section's name: {section!r}")
    n = st.session_state["_lesson_landings"] = int(st.session_state.get("_lesson_landings", 0)) + 1
    script = LAND_JS.replace("__TARGET__", json.dumps(anchor(section))).replace("__N__", str(n))
    # In a box keyed by the landing's count: a new element each time, so its script runs again even
    # where Streamlit would keep the same element (a second landing on the same page, with the
    # navigation in the top bar, left the old script in place and did not land).
    st.sidebar.container(key=f"lesson_land_{n}").html(script, unsafe_allow_javascript=True)
