"""Lessons land (issue 43): a lesson's step opens its page on the section it talks about, outlined,
at a projector's 1280×720, from a lesson's link and after Next; the sidebar's Previous / Next / Leave
read in full in both languages; the last step says what to do next. Every step of the 50-minute
lecture lands, two steps in a row on one section included.

Before, every step opened its page at the top while its section was 2,300–6,600 px down (ALiBi's
"Past the training length": 6,214 px at 1280×1000), and the three buttons read "P…", "N…", "L…".
tests/test_lesson_sections.py checks that every step's section is on its page.
"""

from __future__ import annotations

import pytest

from explain.lessons import BY_KEY
from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, rerun, wait_rendered

pytestmark = pytest.mark.e2e

# Where a section's box is in the view, and whether it is outlined as the step's.
WHERE_JS = """name => {
  const box = document.querySelector('.st-key-section-' + name);
  return box && {top: box.getBoundingClientRect().top, landed: box.dataset.peLanded || null};
}"""
# Each lesson button's label: the width it needs and the width it has.
BUTTONS_JS = """() => ['lesson_prev', 'lesson_next', 'lesson_leave'].map(key => {
  const p = document.querySelector('.st-key-' + key + ' button p');
  return {key, text: p.textContent, needs: p.scrollWidth, has: p.clientWidth};
})"""


# The section's box sits where a landing puts it (below Streamlit's header), outlined as the step's,
# and has not moved for `arg[1]` ms: the charts drawn around it after the run did not push it away.
# (A fixed sleep of 0.5–1.5 s after the landing did the same, 9 s of a suite.)
STAYS_JS = """([name, ms]) => {
  const b = document.querySelector('.st-key-section-' + name);
  const top = b && b.getBoundingClientRect().top;
  if (!(b && b.dataset.peLanded && top > 50 && top < 150)) { window.__peStay = null; return false; }
  const now = performance.now(), s = window.__peStay;
  if (!s || s.name !== name || Math.abs(s.top - top) > 0.5) { window.__peStay = {name, top, t: now}; return false; }
  return now - s.t >= ms;
}"""


def _lands(page, section: str, settle: int = 800) -> dict:
    """Wait until the section's box sits at the top of the view and stays there for `settle` ms."""
    page.evaluate("() => { window.__peStay = null; }")
    page.wait_for_function(STAYS_JS, arg=[section, settle], polling=50, timeout=TIMEOUT_MS)
    where = page.evaluate(WHERE_JS, section)
    assert 50 < where["top"] < 150, (section, where)
    no_exception(page)
    return where


def _buttons_read_in_full(page) -> None:
    for b in page.evaluate(BUTTONS_JS):
        assert b["needs"] <= b["has"] + 1 and "…" not in b["text"], b


# In Korean (the lecture's walk below is in English): the buttons' words differ, the landings not.
@pytest.mark.parametrize("lang", ["ko"])
def test_a_step_lands_on_its_section(browser, served, lang):
    with fresh_tab(browser, served, width=1280, height=720) as tab:
        page = tab.page
        # A lesson's link: the step's page opens on its section.
        page.goto(f"{served}/learned?lesson=extrapolation&step=2&lang={lang}", timeout=TIMEOUT_MS)
        wait_rendered(page)
        _lands(page, BY_KEY["extrapolation"].steps[1].section)
        _buttons_read_in_full(page)
        # Next: ALiBi's "Past the training length", thousands of pixels down its page.
        rerun(page, lambda: page.locator(".st-key-lesson_next button").click())
        wait_rendered(page)
        assert BY_KEY["extrapolation"].steps[2].section == "extrapolation_section"
        _lands(page, "extrapolation_section")
        scrolled = page.evaluate("() => document.querySelector('[data-testid=\"stMain\"]').scrollTop")
        assert scrolled > 2000, scrolled
        page.screenshot(path=f"/tmp/pe-lesson-landing-{lang}.png")
        # The last step: what next.
        rerun(page, lambda: page.locator(".st-key-lesson_next button").click())
        wait_rendered(page)
        _lands(page, BY_KEY["extrapolation"].steps[3].section)
        banner = page.locator('[data-testid="stAlert"]').first.inner_text()
        assert BY_KEY["extrapolation"].what_next(lang).split()[-1].strip(".") in banner, banner
        _buttons_read_in_full(page)
        assert tab.page_errors == []


def test_every_step_of_the_lecture_lands_on_its_section(browser, served):
    lecture = BY_KEY["lecture"]
    with fresh_tab(browser, served, width=1280, height=720) as tab:
        page = tab.page
        page.goto(f"{served}/{lecture.steps[0].chapter}?lesson=lecture&step=1", timeout=TIMEOUT_MS)
        wait_rendered(page)
        _lands(page, lecture.steps[0].section, settle=400)
        _buttons_read_in_full(page)
        for k, step in enumerate(lecture.steps[1:], start=2):
            # Forget the last landing (two steps in a row can name one section).
            page.evaluate("() => document.querySelectorAll('[data-pe-landed]').forEach(b => delete b.dataset.peLanded)")
            rerun(page, lambda: page.locator(".st-key-lesson_next button").click())
            wait_rendered(page)
            assert f"lesson=lecture&step={k}" in page.url, (k, page.url)
            _lands(page, step.section, settle=400)
        assert (
            lecture.what_next("en").split()[-1].strip(".") in page.locator('[data-testid="stAlert"]').first.inner_text()
        )
        assert tab.page_errors == []
