"""A projector (issue 43): presenter mode at 1280×720 scales everything a class reads or a lecturer
clicks, a chart fits the screen with its controls, nothing the prose names is tucked away, and the
sidebar gives a link for students without presenter mode.

Before: the options of a question were 14 px, Reveal and alerts 16 px; the RoPE circles were 988 px
tall, so the circles, their Play button and the controls above them never shared a screen; "Play
moves" was in a collapsed expander; a link copied from the projector opened presenter mode for
every student. Screenshots: /tmp/pe-presenter-<lang>.png.
"""

from __future__ import annotations

import urllib.parse

import pytest

from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, wait_rendered

pytestmark = pytest.mark.e2e

# Font sizes (px) of what a class reads and a lecturer clicks, and where things are in the view.
MEASURE_JS = """() => {
  const size = sel => { const e = document.querySelector(sel);
                        return e ? parseFloat(getComputedStyle(e).fontSize) : null; };
  const box = sel => { const e = document.querySelector(sel);
                       if (!e) return null; const r = e.getBoundingClientRect();
                       return {top: r.top, bottom: r.bottom, visible: !!e.offsetParent}; };
  const play = Array.from(document.querySelectorAll('.st-key-rope_circles .updatemenu-button'))
    .find(b => b.textContent.includes('▶'));
  const p = play && play.getBoundingClientRect();
  return {
    option: size('.st-key-rope_move [data-testid="stRadioOption"] p'),
    vote: size('.st-key-rope_q__choice [data-testid="stRadioOption"] p'),
    reveal: size('.st-key-rope_q__reveal button p'),
    alert: size('[data-testid="stMain"] [data-testid="stAlertContainer"] p'),
    value: size('.st-key-rope_m [data-testid="stSliderThumbValue"]'),
    select: size('.st-key-rope_q_word input'),
    move: box('.st-key-rope_move'),
    slider: box('.st-key-rope_m'),
    chart: box('.st-key-rope_circles .pe-chart'),
    play: p && {top: p.top, bottom: p.bottom},
    link: (document.getElementById('pe-students-link') || {}).value || null,
  };
}"""


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_presenter_mode_fits_a_projector(browser, served, lang):
    with fresh_tab(browser, served, width=1280, height=720) as tab:
        page = tab.page
        # The lecture's RoPE step: its page lands on the circles.
        page.goto(f"{served}/rope?present=1&lesson=lecture&step=6&lang={lang}", timeout=TIMEOUT_MS)
        wait_rendered(page)
        page.wait_for_function(
            "() => { const b = document.querySelector('.st-key-section-circles_part');"
            " const top = b && b.getBoundingClientRect().top;"
            " return b && b.dataset.peLanded && top > 50 && top < 150; }",
            timeout=TIMEOUT_MS,
        )
        page.wait_for_function(
            "() => { const gd = document.querySelector('.st-key-rope_circles .pe-chart');"
            " return gd && gd.__peShown && gd.__peShown === gd.__peSpec; }",
            timeout=TIMEOUT_MS,
        )
        page.wait_for_timeout(1500)
        no_exception(page)
        m = page.evaluate(MEASURE_JS)
        page.screenshot(path=f"/tmp/pe-presenter-{lang}.png")
        # The chart, its Play button, its positions' slider and what moves, all on one 720-px screen.
        assert m["move"]["visible"] and m["slider"]["top"] >= 0, m
        assert m["chart"]["bottom"] - m["chart"]["top"] <= 480 and m["play"]["bottom"] <= 720, m
        assert m["slider"]["top"] < m["chart"]["top"] and m["move"]["top"] >= 0, m
        # At projector size (16 px is Streamlit's own; 1.3rem is 20.8 px).
        for what in ("option", "value", "select", "alert"):
            assert m[what] and m[what] >= 19, (what, m)
        # The class's vote: the question's options and Reveal.
        page.locator(".st-key-rope_q__choice").scroll_into_view_if_needed()
        m2 = page.evaluate(MEASURE_JS)
        assert m2["vote"] >= 20 and m2["reveal"] >= 20, m2
        page.screenshot(path=f"/tmp/pe-presenter-vote-{lang}.png")
        # The link for students: this page, this lesson step, without presenter mode.
        q = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(m["link"]).query))
        assert "present" not in q and q.get("lesson") == "lecture" and q.get("step") == "6", m["link"]
        assert urllib.parse.urlsplit(m["link"]).path.endswith("/rope"), m["link"]
        assert tab.page_errors == []
