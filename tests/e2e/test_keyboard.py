"""Without a mouse, and without motion: one chapter end to end with the keyboard alone, and the RoPE
animation under prefers-reduced-motion.

Keyboard: on Shaw's chapter a learner only presses keys (Tab, Shift+Tab, arrows, Enter, Space, and
typing): types a new sentence in the sidebar, moves the window slider, picks another head, answers
the question and reveals the answer. Every step is checked on the page (the URL, the widget's value,
the revealed verdict). No element is clicked; focus moves only by Tab.

Motion: the rotation circles have Play/Pause and a frame slider; under reduced_motion="reduce" the
page opens on the first frame with no animation running (nothing plays until the learner asks).
Plotly's Play button and frame slider are SVG that no key reaches; the page's own Frame slider steps
the animation with the arrow keys.
"""

from __future__ import annotations

import urllib.parse

import pytest
from playwright.sync_api import Page, expect
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.support.axe import chapter_url
from tests.support.browser import RENDERED_JS, TRACK_RUNS_JS

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000  # generous for a busy 2-core CI machine; a passing run never waits this long
MAX_TABS = 250  # more focus stops than any page has: a widget not reached by then is not reachable
NEW = "Seven quick zebras jump over lazy dogs"

# Is the focused element inside the element container of the widget with this key (Streamlit gives
# it the class st-key-<key>), and is it this kind of element (a tag: "input", "textarea", "button";
# a widget's "?" help button comes before its input)?
FOCUSED_JS = """([key, tag]) => {
  const el = document.activeElement;
  if (!el || !el.closest('.st-key-' + key)) return false;
  return !tag || el.tagName.toLowerCase() === tag;
}"""


def wait_rendered(page: Page, done: int = 1) -> None:
    page.wait_for_function(RENDERED_JS, arg=done, polling=50, timeout=TIMEOUT_MS)


def keys_rerun(page: Page, key: str) -> None:
    """Press a key that makes Streamlit rerun; wait for the rerun to be drawn."""
    done = page.evaluate("() => window.__peDone")
    page.keyboard.press(key)
    wait_rendered(page, done + 1)


def tab_to(page: Page, key: str, tag: str | None = None, back: bool = False) -> None:
    """Press Tab (Shift+Tab with back) until the widget `key` (its `tag` element) has the focus."""
    for _ in range(MAX_TABS):
        if page.evaluate(FOCUSED_JS, [key, tag]):
            return
        page.keyboard.press("Shift+Tab" if back else "Tab")
    raise AssertionError(f"the keyboard never reached {key!r} ({tag or 'any element'})")


def query(page: Page) -> dict[str, str]:
    return {k: v[-1] for k, v in urllib.parse.parse_qs(urllib.parse.urlsplit(page.url).query).items()}


@pytest.fixture
def tab(browser, served):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.add_init_script(TRACK_RUNS_JS)
    yield page
    context.close()


def test_tab_to_fails_on_an_unreachable_widget(tab, served):
    """The helper can fail: a key no widget has is never reached."""
    tab.goto(chapter_url(served, "shaw", "en"))
    wait_rendered(tab)
    with pytest.raises(AssertionError, match="never reached"):
        tab_to(tab, "no_such_widget")


def test_one_chapter_with_the_keyboard_alone(tab, served):
    page = tab
    page.goto(chapter_url(served, "shaw", "en"))
    wait_rendered(page)
    expect(page.locator("h1").first).to_contain_text("Shaw")

    # 1. The sentence: Tab into the sidebar's text area, select all, type, commit with Ctrl+Enter.
    tab_to(page, "sentence", "textarea")
    page.keyboard.press("Control+A")
    page.keyboard.type(NEW)
    keys_rerun(page, "Control+Enter")
    assert query(page).get("s") == NEW

    # 2. The window slider: focus its thumb, one step right.
    tab_to(page, "shaw_k", "input")
    value = """() => { const e = document.querySelector('.st-key-shaw_k input');
                       return e.getAttribute('aria-valuenow') || e.value; }"""
    before = int(page.evaluate(value))
    keys_rerun(page, "ArrowRight")
    assert int(page.evaluate(value)) == before + 1
    assert query(page).get("shaw_k") == str(before + 1)

    # 3. The head: open the select box with the keyboard, move down one, choose with Enter.
    # On a loaded machine a key can be swallowed: a menu still opening takes the Enter (which then
    # re-picks the current head, and nothing reruns), or the box is drawn again just after the
    # focus reached it and the ArrowDown that should open it is lost (the menu never opens). A
    # bounded retry, each attempt with the keyboard only.
    for attempt in range(3):
        tab_to(page, "shaw_head", "input")
        done = page.evaluate("() => window.__peDone")
        page.keyboard.press("ArrowDown")
        try:
            page.locator('[role="listbox"], [role="option"]').first.wait_for(timeout=TIMEOUT_MS // 6)
            page.keyboard.press("ArrowDown")
            page.keyboard.press("Enter")
            page.wait_for_function(RENDERED_JS, arg=done + 1, polling=50, timeout=TIMEOUT_MS // 3)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
            page.keyboard.press("Escape")
    assert query(page).get("shaw_head") not in (None, "0")

    # 4. The question: Tab into the radio group, pick with Space (arrows move between options),
    # Tab to Reveal, press Enter.
    radios = page.locator('[class*="__choice"] input[type="radio"]')
    key = page.evaluate(
        """() => { const b = document.querySelector('[class*="__choice"]');
                   return b.className.match(/st-key-(\\S+__choice)/)[1]; }"""
    )
    tab_to(page, key, "input")
    keys_rerun(page, "Space")
    assert radios.evaluate_all("rs => rs.filter(r => r.checked).length") == 1
    reveal = key.replace("__choice", "__reveal")
    tab_to(page, reveal, "button")
    keys_rerun(page, "Enter")
    verdict = page.locator('[class*="__predict"] [data-testid="stAlert"]')
    expect(verdict.first).to_be_visible()
    again = key.replace("__choice", "__again")
    expect(page.locator(f".st-key-{again}")).to_be_visible()
    # And back: Shift+Tab reaches the sentence box again from below.
    tab_to(page, "sentence", "textarea", back=True)


# The RoPE circles figure: its slider's active step, and whether plotly is animating (frames queued
# or a transition running).
ANIMATION_JS = """() => {
  const el = document.querySelector('.st-key-rope_circles .js-plotly-plot');
  if (!el || !el._fullLayout) return null;
  const td = el._transitionData || {};
  return {active: (el._fullLayout.sliders[0] || {}).active,
          queued: (td._frameQueue || []).length, running: !!td._animationRaf,
          frames: (el._transitionData && el._transitionData._frames || []).length};
}"""


def animation(page: Page) -> dict:
    state = page.evaluate(ANIMATION_JS)
    assert state is not None, "no rope_circles chart on the page"
    return state


@pytest.fixture
def reduced(browser, served):
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, reduced_motion="reduce")
    page = context.new_page()
    page.add_init_script(TRACK_RUNS_JS)
    page.goto(chapter_url(served, "rope", "en"))
    wait_rendered(page)
    yield page
    context.close()


def test_rope_animation_does_not_play_by_itself(reduced):
    page = reduced
    assert page.evaluate("() => matchMedia('(prefers-reduced-motion: reduce)').matches")
    state = animation(page)
    assert state["frames"] > 1, state  # an animation that could play
    assert state == {**state, "active": 0, "queued": 0, "running": False}
    # Still on the first frame once the page has settled for a while: 1 s, about six frames of a
    # playing animation (160 ms a frame).
    page.wait_for_timeout(1000)
    assert animation(page) == state


def test_the_animation_check_sees_a_playing_figure(reduced):
    """The check can fail: start the animation as an auto-play would, and it sees it."""
    page = reduced
    page.locator(".st-key-rope_circles .updatemenu-button").first.click()  # Play, as an auto-play would
    page.wait_for_function(
        "() => { const s = (" + ANIMATION_JS + ")(); return s && (s.running || s.queued > 0 || s.active > 0); }",
        timeout=TIMEOUT_MS,
    )


def test_rope_animation_steps_with_the_keyboard(reduced):
    """Plotly's Play button and frame slider take no key; the page's Frame slider does: Tab to it,
    two ArrowRight, and the circles show frame 2, still paused."""
    page = reduced
    tab_to(page, "rope_frame", "input")
    keys_rerun(page, "ArrowRight")
    tab_to(page, "rope_frame", "input")  # a rerun may move the focus; find the thumb again
    keys_rerun(page, "ArrowRight")
    page.wait_for_function(
        "() => { const s = (" + ANIMATION_JS + ")(); return s && s.active === 2; }", timeout=TIMEOUT_MS
    )
    state = animation(page)
    assert state["active"] == 2 and not state["running"] and state["queued"] == 0, state


def test_rope_animation_plays_and_pauses_with_the_keyboard(reduced):
    """Plotly's Play and Pause buttons are SVG: the frame's script (ui.presenter.KEYBOARD_JS) makes
    them focusable buttons. Tab to Play, Enter: the circles turn. Tab on to Pause, Space: they stop
    and stay on one frame."""
    page = reduced
    play, pause = page.locator(".st-key-rope_circles .updatemenu-button").all()[:2]
    assert play.get_attribute("role") == "button" and play.get_attribute("aria-label"), play.inner_html()
    tab_to(page, "rope_circles", "g")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == play.get_attribute("aria-label")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => { const s = (" + ANIMATION_JS + ")(); return s && s.active >= 2; }", timeout=TIMEOUT_MS
    )
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.getAttribute('aria-label')") == pause.get_attribute("aria-label")
    page.keyboard.press(" ")
    page.wait_for_function(
        "() => { const s = (" + ANIMATION_JS + ")(); return s && !s.running && s.queued === 0; }",
        timeout=TIMEOUT_MS,
    )
    stopped = animation(page)["active"]
    page.wait_for_timeout(1000)  # 160 ms a frame: a running animation would move about six
    assert animation(page)["active"] == stopped
    assert 0 < stopped < animation(page)["frames"] - 1, stopped  # paused midway (40 frames take 6.4 s)
