"""The classroom layer in a real browser: a link restores a page's controls in a fresh browser,
moving a control (by keyboard) writes it back to the address, switching pages keeps only the
parameters the new page uses, presenter mode, and the CSV under a chart."""

from __future__ import annotations

import urllib.parse
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.support.browser import RENDERED_JS, TRACK_RUNS_JS, nav_link
from ui.chapters import part_title

pytestmark = pytest.mark.e2e

TIMEOUT_MS = 90_000
# A chart by its key (Streamlit marks a keyed element's container with the class st-key-<key>), not
# by its title, which follows the language and the controls.
PLOT_JS = """key => {
  const el = document.querySelector('.st-key-' + key + ' .js-plotly-plot');
  return el && el._fullLayout ? {height: el._fullLayout.height, title: el._fullLayout.title.text} : null;
}"""


@pytest.fixture
def fresh(browser, served):
    """A new browser context (no cookies, no storage: a colleague opening a shared link)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1200}, accept_downloads=True)
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.add_init_script(TRACK_RUNS_JS)
    yield page, served
    context.close()


def wait_rendered(page: Page, done: int = 1) -> None:
    page.wait_for_function(RENDERED_JS, arg=done, polling=50, timeout=TIMEOUT_MS)


def rerun(page: Page, action) -> None:
    done = page.evaluate("() => window.__peDone")
    action()
    wait_rendered(page, done + 1)


def query(page: Page) -> dict[str, str]:
    return dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(page.url).query))


def slider(page: Page, key: str):
    return page.locator(f".st-key-{key} input[type='range']")


def test_link_restores_controls_and_keyboard_writes_them_back(fresh):
    page, base = fresh
    page.goto(f"{base}/t5?s=one%20two%20three&seed=7&t5_buckets=64&t5_causal=true&present=1")
    wait_rendered(page)
    expect(page.locator("h1").first).to_contain_text("T5 bias")
    expect(slider(page, "t5_buckets")).to_have_value("64")
    assert page.locator(".st-key-t5_causal input[type='checkbox']").is_checked()
    assert "Full range: N = 64, D = 128, causal" in page.evaluate(PLOT_JS, "t5_staircase")["title"]
    expect(page.locator('[data-testid="stSidebar"]').get_by_role("textbox", name="Sentence")).to_have_value(
        "one two three"
    )
    q = query(page)
    assert (q["t5_buckets"], q["t5_causal"], q["s"], q["seed"], q["present"]) == (
        "64",
        "true",
        "one two three",
        "7",
        "1",
    )
    # Keyboard: focus the slider's thumb and press →; the page redraws and the address follows.
    thumb = slider(page, "t5_buckets")
    thumb.focus()
    rerun(page, lambda: thumb.press("ArrowRight"))
    expect(thumb).to_have_value("66")
    assert "Full range: N = 66, D = 128, causal" in page.evaluate(PLOT_JS, "t5_staircase")["title"]
    page.wait_for_function("() => location.search.includes('t5_buckets=66')", timeout=10_000)
    # Another page: the T5 parameters leave the address, the shared ones stay.
    link = nav_link(page, part_title("Bias", "en"), "alibi")
    rerun(page, link.click)
    expect(page.locator("h1").first).to_contain_text("ALiBi")
    q = query(page)
    assert not any(k.startswith("t5_") for k in q), q
    assert (q.get("s"), q.get("seed"), q.get("present")) == ("one two three", "7", "1")


def test_presenter_toggle_enlarges_and_tucks_away(fresh):
    page, base = fresh
    page.goto(f"{base}/alibi")
    wait_rendered(page)
    sizes = lambda: page.evaluate(  # noqa: E731  (the title, and the first paragraph of prose)
        "() => ['h1', '[data-testid=\"stMain\"] .stMarkdown p']"
        ".map(s => parseFloat(getComputedStyle(document.querySelector(s)).fontSize))"
    )
    before, height = sizes(), page.evaluate(PLOT_JS, "slopes")["height"]
    assert page.locator(".st-key-alibi_log_slopes").is_visible()
    expect(page.get_by_text("Show the code this page runs")).to_be_visible()
    toggle = page.locator('[data-testid="stSidebar"] .st-key-presenter')
    rerun(page, lambda: toggle.get_by_text("Presenter mode").click())
    page.wait_for_function("() => location.search.includes('present=1')", timeout=10_000)
    after = sizes()
    assert after[0] > before[0] * 1.1 and after[1] >= before[1] * 1.3, (before, after)
    assert page.evaluate(PLOT_JS, "slopes")["height"] > height * 1.2
    assert not page.locator(".st-key-alibi_log_slopes").is_visible()  # inside a collapsed expander
    expect(page.get_by_text("Show the code this page runs")).to_have_count(0)
    rerun(page, lambda: toggle.get_by_text("Presenter mode").click())
    assert "present" not in query(page)
    assert page.evaluate(PLOT_JS, "slopes")["height"] == height


def test_numbers_under_a_chart_download_as_csv(fresh):
    page, base = fresh
    page.goto(f"{base}/sinusoidal?n=6&sin_d=4")
    wait_rendered(page)
    numbers = page.locator(".st-key-pe_matrix__numbers")
    expect(numbers).to_be_visible()
    # Opening the panel reruns the page; wait for what it draws, not for a counted run: a busy CI
    # machine once opened it while the tab's 10 ms run-state poller missed the short rerun.
    numbers.get_by_text("Numbers").click()
    button = page.locator(".st-key-pe_matrix__csv button")
    expect(button).to_be_visible()
    wait_rendered(page)
    expect(numbers.locator('[data-testid="stDataFrame"]')).to_be_visible()
    with page.expect_download() as info:
        button.click()
    download = info.value
    assert download.suggested_filename == "pe-atlas-pe_matrix.csv"
    rows = Path(download.path()).read_text(encoding="utf-8").strip().splitlines()
    assert rows[0] == ",0,1,2,3" and len(rows) == 7  # header + 6 positions
    first = [float(v) for v in rows[1].split(",")[1:]]
    assert first == pytest.approx([0.0, 1.0, 0.0, 1.0])  # PE(0) = sin 0, cos 0 in every pair


def test_lesson_walks_through_pages(fresh):
    page, base = fresh
    page.goto(f"{base}/")
    wait_rendered(page)
    side = page.locator('[data-testid="stSidebar"]')
    box = side.locator(".st-key-lesson input")  # a combobox: typing opens its list
    box.click()
    box.press_sequentially("Why rel")
    rerun(page, lambda: page.get_by_role("option", name="Why relative?").click())
    expect(page.locator("h1").first).to_contain_text("Why order matters")
    banner = page.locator('[data-testid="stMain"] [data-testid="stAlertContentInfo"]').first
    expect(banner).to_contain_text("Why relative? · step 1 of 6")
    assert query(page).get("lesson") == "why-relative" and query(page).get("step") == "1"
    rerun(page, lambda: side.get_by_role("button", name="Next").click())  # same page, with_pe on
    assert page.locator(".st-key-with_pe input[type='checkbox']").is_checked()
    assert query(page).get("with_pe") == "true"
    # Step 3 is another page: the bound parameter of the page left behind must not block the switch.
    rerun(page, lambda: side.get_by_role("button", name="Next").click())
    expect(page.locator("h1").first).to_contain_text("The trouble with absolute positions")
    expect(banner).to_contain_text("Why relative? · step 3 of 6")
    q = query(page)
    assert q.get("step") == "3" and "with_pe" not in q and q.get("s") == "dog bites man"
    assert page.locator('[data-testid="stException"]').count() == 0


def test_the_derivations_picker_keeps_the_address_in_step(fresh):
    """The identity picker and "show all" live in a fragment (identities_part): its reruns skip the
    frame, yet the address must still name what is shown, so a link opens the same view."""
    from explain import derivations as D

    page, base = fresh
    ids = [d.id for d in D.ALL_DERIVATIONS]
    page.goto(f"{base}/derivations")
    wait_rendered(page)
    assert query(page).get("d") == ids[0]
    title = D.get(ids[2]).title
    box = page.locator(".st-key-derivation input")  # a combobox: typing opens its list
    box.click()
    box.press_sequentially(title[:12])
    rerun(page, lambda: page.get_by_role("option").filter(has_text=title).first.click())
    assert query(page).get("d") == ids[2]
    expect(page.locator(f'[id="{ids[2]}"]')).to_have_count(1)  # its subheader's anchor
    expect(page.locator(f'[id="{ids[0]}"]')).to_have_count(0)
    rerun(page, lambda: page.locator(".st-key-derivations_all label").click())
    assert query(page).get("derivations_all") == "true"
    for i in ids:
        expect(page.locator(f'[id="{i}"]')).to_have_count(1)
    link = page.url
    other = page.context.new_page()
    other.add_init_script(TRACK_RUNS_JS)
    other.goto(link)
    wait_rendered(other)
    assert query(other) == query(page)
    for i in ids:
        expect(other.locator(f'[id="{i}"]')).to_have_count(1)
    other.close()
