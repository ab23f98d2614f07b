"""The learner's tools on the first screen (issue 43, item 1): at 1366×768 the sentence box and the
lesson picker are inside the first view, without scrolling, on the default page and on a chapter's
page, in English and Korean; in presenter mode on a 1280×720 projector too.

Before, the sidebar held the navigation's ~20 links above them: the sentence box's top sat at 1,174 px
and the lesson picker's at 1,627 px (1,784 px in presenter mode). The navigation now sits in the top
bar (app.py: st.navigation(position="top"), one menu per part), and the lesson picker comes before the
presenter switch and its link for students (ui/sidebar.py).
"""

from __future__ import annotations

import pytest

from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, wait_rendered
from tests.support.browser import nav_link
from ui.chapters import BY_KEY, part_title

pytestmark = pytest.mark.e2e

# Each box's top and bottom in the view, and how far the sidebar is scrolled.
WHERE_JS = """() => {
  const r = sel => { const e = document.querySelector(sel); if (!e) return null;
    const b = e.getBoundingClientRect(); return {top: b.top, bottom: b.bottom, height: b.height}; };
  const side = document.querySelector('[data-testid="stSidebarContent"]');
  return {sentence: r('[data-testid="stSidebar"] textarea'), lesson: r('.st-key-lesson'),
          nav: r('[data-testid="stTopNav"]'), sidebarScrolled: side ? side.scrollTop : null};
}"""


@pytest.mark.parametrize(
    ("width", "height", "present"), [(1366, 768, False), (1280, 720, True)], ids=["1366x768", "presenter-1280x720"]
)
def test_sentence_and_lessons_are_on_the_first_screen(browser, served, width, height, present):
    with fresh_tab(browser, served, width=width, height=height) as tab:
        page = tab.page
        for lang in ("en", "ko"):
            # The default page, and a chapter's: the sidebar is the frame's, the same on every
            # chapter, so the lightest chapter to draw (RoPE's took a third longer to draw).
            for path in ("", "why-order"):
                query = f"lang={lang}" + ("&present=1" if present else "")
                page.goto(f"{served}/{path}?{query}", timeout=TIMEOUT_MS)
                wait_rendered(page)
                page.wait_for_selector('[data-testid="stTopNav"]', timeout=TIMEOUT_MS)
                where = page.evaluate(WHERE_JS)
                for box in ("sentence", "lesson"):
                    b = where[box]
                    assert b is not None and b["height"] > 20, (lang, path, box, where)
                    assert b["top"] >= 0 and b["bottom"] <= height, (lang, path, box, where)
                assert where["sidebarScrolled"] == 0, where
                assert where["nav"]["bottom"] <= 80, where  # the navigation is the top bar
                no_exception(page)
        # The navigation still reaches every chapter: the core path's RoPE, through its part's menu.
        link = nav_link(page, part_title(BY_KEY["rope-scaling"].part, "ko"), "rope-scaling")
        assert "★" in link.inner_text()
        link.click()
        page.wait_for_url("**/rope-scaling**", timeout=TIMEOUT_MS)
        wait_rendered(page)
        assert tab.page_errors == []
