"""KaTeX draws every derivation: no parse error, no undefined macro, the highlight in colour.

AppTest cannot see whether KaTeX can parse a formula (it only sees the LaTeX string), so this runs
the Derivations chapter and the sinusoidal chapter's embedded proofs in Debian's Chromium. Uses the
`app_url` and `page` fixtures of tests/e2e/conftest.py.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Page, expect

from explain import derivations as D
from explain.i18n import t

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000
IDLE = '[data-testid="stApp"][data-test-script-state="notRunning"]'
TOTAL_STEPS = sum(len(d.steps) for d in D.ALL_DERIVATIONS)
BADGE = ".stMarkdownBadge"  # st.badge draws a span of this class: icon ligature + label


def _idle(page: Page) -> None:
    page.wait_for_selector(IDLE, state="attached", timeout=TIMEOUT_MS)
    page.wait_for_function("() => !document.querySelector('[data-stale=\"true\"]')", timeout=TIMEOUT_MS)


def _open(page: Page, app_url: str, path: str) -> None:
    # A fresh server's first session opened at a page path gets a spurious "Page not found" modal
    # (its page registry is empty until the first st.navigation call): visit "/" first.
    page.goto(app_url + "/", timeout=TIMEOUT_MS)
    _idle(page)
    page.goto(app_url + path, timeout=TIMEOUT_MS)
    _idle(page)


def _katex_is_clean(page: Page) -> None:
    bad = page.locator(".katex-error")
    assert bad.count() == 0, [bad.nth(k).get_attribute("title") for k in range(bad.count())]
    assert "#cc0000" not in page.content(), "KaTeX drew an undefined macro (red)"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_every_derivation_renders_in_katex(page: Page, app_url: str, lang: str):
    """Every identity, all on one page, in both languages. The Korean words write formulas with
    function names (cos, Re, bucket) as inline KaTeX and the "where" line says \\text{여기서}: all of
    it must parse, and every proof stays green."""
    verified = t("derivations.ui.verified_label", lang)
    page.set_viewport_size({"width": 1280, "height": 1000})
    _open(page, app_url, "/derivations" + ("?lang=ko" if lang == "ko" else ""))
    expect(page.locator(BADGE, has_text=verified)).to_have_count(1, timeout=TIMEOUT_MS)
    page.get_by_text(t("derivations.page.show_all", lang)).click()
    badges = page.locator(BADGE, has_text=verified)
    expect(badges).to_have_count(len(D.ALL_DERIVATIONS), timeout=TIMEOUT_MS)
    _idle(page)
    # Every step and every claim is a KaTeX display block (plus "where" lines, result matrices).
    displays = page.locator(".katex-display")
    assert displays.count() >= TOTAL_STEPS + len(D.ALL_DERIVATIONS), displays.count()
    if lang == "ko":  # inline math inside the Korean rules, claims and notes
        inline = page.locator(
            ".stMarkdown .katex:not(.katex-display .katex), [data-testid='stCaptionContainer'] .katex"
        )
        assert inline.count() >= 10, inline.count()
    _katex_is_clean(page)
    # The changed sub-expression is drawn in the highlight colour, i.e. \\textcolor was understood.
    coloured = page.locator(".katex [style*='color']")
    colours = {coloured.nth(k).evaluate("e => getComputedStyle(e).color") for k in range(min(coloured.count(), 50))}
    assert "rgb(214, 39, 40)" in colours, colours  # D.HIGHLIGHT_COLOR = #d62728
    assert page.locator('[data-testid="stAlertContentError"]').count() == 0


def test_sinusoidal_proofs_render_in_katex(page: Page, app_url: str):
    page.set_viewport_size({"width": 1280, "height": 1000})
    _open(page, app_url, "/sinusoidal")
    for label in ("Proof: PE(m)·PE(n) depends only on m − n", "Proof: PE(p+Δ) = T(Δ)·PE(p)"):
        summary = page.locator("summary").filter(has_text=label)
        summary.scroll_into_view_if_needed()
        summary.click()
    expect(page.locator(BADGE, has_text="Verified by sympy")).to_have_count(2, timeout=TIMEOUT_MS)
    for d in (D.get("sinusoidal-dot-product"), D.get("sinusoidal-shift")):
        expect(page.get_by_text(d.steps[-1].rule, exact=False).first).to_be_visible(timeout=TIMEOUT_MS)
    _katex_is_clean(page)
