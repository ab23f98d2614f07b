"""Animations survive reruns (issue 43): after every kind of change that redraws the RoPE circles
(a moved control inside the section, a shared control, a new word, a new sentence, a lesson's
Previous), the plot holds the frames of the figure it was sent, and ▶ Play animates them.

Before ui/chart.py installed the frames itself, Plotly.react on a plot already drawn left it with 0
frames (the figure sent held 41) and Play did nothing until a full reload. The RoPE circles are the
atlas's only animated chart (explain/chapters/rope_figures.rotation_circles).
"""

from __future__ import annotations

import pytest

from tests.e2e.test_pages_browser import TIMEOUT_MS, fresh_tab, no_exception, rerun, type_sentence, wait_rendered

pytestmark = pytest.mark.e2e

KEY = "rope_circles"
# The frames the plot holds, the frames of the figure it was last sent, and how often it was drawn.
FRAMES_JS = """key => {
  const gd = document.querySelector('.st-key-' + key + ' .pe-chart');
  const held = (gd._transitionData && gd._transitionData._frames) || [];
  const sent = JSON.parse(gd.__peSpec).figure.frames || [];
  const names = fs => fs.map(f => f.name).join(',');
  const data = fs => JSON.stringify(fs.map(f => f.data));
  return {held: held.length, sent: sent.length, same: names(held) === names(sent) && data(held) === data(sent),
          draws: gd.__peDraws, shown: gd.__peShown === gd.__peSpec};
}"""
# Press ▶ Play and count the frames plotly animates through (resolves at the third, or after 5 s).
PLAY_JS = """key => new Promise(resolve => {
  const gd = document.querySelector('.st-key-' + key + ' .pe-chart');
  let n = 0;
  const done = () => { gd.removeListener('plotly_animatingframe', seen); resolve(n); };
  const seen = () => { n += 1; if (n === 3) done(); };
  gd.on('plotly_animatingframe', seen);
  const play = Array.from(gd.querySelectorAll('.updatemenu-button')).find(b => b.textContent.includes('▶'));
  play.dispatchEvent(new MouseEvent('click', {bubbles: true}));
  setTimeout(done, 5000);
})"""


def _plays(page, what: str) -> dict:
    page.wait_for_function(
        "key => { const gd = document.querySelector('.st-key-' + key + ' .pe-chart');"
        " return gd && gd.__peShown === gd.__peSpec; }",
        arg=KEY,
        timeout=TIMEOUT_MS,
    )
    no_exception(page)
    state = page.evaluate(FRAMES_JS, KEY)
    assert state["sent"] == 41 and state["held"] == state["sent"] and state["same"], (what, state)
    played = page.evaluate(PLAY_JS, KEY)
    assert played >= 3, (what, played, state)
    return state


def _arrow(page, key: str) -> None:
    thumb = page.locator(f".st-key-{key} input[type='range']")
    thumb.focus()
    rerun(page, lambda: thumb.press("ArrowRight"))


def test_play_animates_after_every_kind_of_change(browser, served):
    with fresh_tab(browser, served) as tab:
        page = tab.page
        # A lesson's step on the RoPE page: its Previous is one of the changes.
        page.goto(f"{served}/rope?lesson=rope-from-scratch&step=3", timeout=TIMEOUT_MS)
        wait_rendered(page)
        draws = [_plays(page, "opened")["draws"]]
        # The section's own controls: what moves (the switch the prose asks for), a position.
        rerun(page, lambda: page.locator(".st-key-rope_move").get_by_role("radio").last.check(force=True))
        draws.append(_plays(page, "the query only")["draws"])
        _arrow(page, "rope_m")
        draws.append(_plays(page, "m")["draws"])
        # The controls the section shares with the page's others: head size, base.
        _arrow(page, "rope_d")
        draws.append(_plays(page, "d")["draws"])
        _arrow(page, "rope_base")
        draws.append(_plays(page, "base")["draws"])
        # A new key word, then a new sentence.
        box = page.locator(".st-key-rope_k_word input")
        box.click()
        rerun(page, lambda: page.get_by_role("option").first.click())
        draws.append(_plays(page, "key word")["draws"])
        type_sentence(page, "a fresh sentence for the rotating words")
        draws.append(_plays(page, "sentence")["draws"])
        # A lesson's Previous: the step before sets head size and positions again.
        rerun(page, lambda: page.locator(".st-key-lesson_prev button").click())
        wait_rendered(page)
        _plays(page, "lesson previous")
        # Every change drew the chart again, each once (none was skipped, none drawn twice).
        assert draws == list(range(draws[0], draws[0] + len(draws))), draws
        assert tab.page_errors == []
