"""Helpers shared by the tests: run a chapter under AppTest, decode plotly figures."""

from __future__ import annotations

import base64
from pathlib import Path

import numpy as np
import torch
from streamlit.testing.v1 import AppTest
from streamlit.util import calc_hash

from ui.chart import NAME as CHART_NAME
from ui.chart import sent

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
TIMEOUT = 120  # the first import of torch on a busy 2-core CI machine takes seconds, not 3 s


def fig_array(v) -> np.ndarray:
    """A plotly array from figure JSON: a plain list, or {'dtype', 'bdata' (base64), 'shape'}."""
    if isinstance(v, dict) and "bdata" in v:
        a = np.frombuffer(base64.b64decode(v["bdata"]), dtype=v["dtype"])
        return a.reshape([int(s) for s in str(v["shape"]).split(",")]) if "shape" in v else a
    return np.asarray(v, dtype=float)


def _page_hash(page_path: str) -> str:
    """The name Streamlit gives a chapter's page: app.py registers each with st.Page(url_path=its
    key), and st.navigation names a page by calc_hash(url_path) (what a browser's link to /<key>
    asks for)."""
    from ui.chapters import CHAPTERS

    target = (ROOT / page_path).resolve()
    keys = [c.key for c in CHAPTERS if (ROOT / c.page).resolve() == target]
    if not keys:
        raise ValueError(f"{page_path} is no chapter's page (ui.chapters.CHAPTERS)")
    return calc_hash(keys[0])


def open_page(page_path: str | None = None, sentence: str | None = None, seed: int | None = None) -> AppTest:
    """The app run once through its frame on `page_path` (relative to app.py; the first chapter when
    None), as a browser opens a chapter's link: the shared sidebar runs on every page.

    The first run goes straight to the page (AppTest's switch_page can name a page only after a run
    has registered the navigation: every page opened used to run Start here first, ~120 ms a time).
    tests/test_pages_smoke.py (check_ran, every chapter) fails if it lands anywhere else."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if sentence is not None:
        at.session_state["sentence"] = sentence
    if seed is not None:
        at.session_state["seed"] = seed
    if page_path is not None:
        land_on(at, page_path)
    at.run()
    return at


def land_on(at: AppTest, page_path: str) -> AppTest:
    """Make the next run of a fresh AppTest open the chapter `page_path` (what switch_page sets, which
    it can do only after a run has registered the navigation)."""
    at._page_hash = _page_hash(page_path)
    return at


def skip_questions(at: AppTest) -> AppTest:
    """Press every question's 'Skip the prediction' (ui/question.py): what waits for Reveal (a
    measured sentence, a metric, a folded chart) is then drawn, as for a learner who answered."""
    for button in [b for b in at.button if str(b.key or "").endswith("__skip")]:
        button.click().run()
    return at


def chart_elements(at: AppTest) -> list:
    """The page's charts (ui.chart's element), in page order: each has the page's `key`, and its
    payload (what the browser receives) in `proto.bytes`."""
    return [el for el in at.get("bidi_component") if el.proto.component_name == CHART_NAME]


def figure_of(el) -> dict:
    """A chart element's figure, as sent (its JSON spec, without the chart's config)."""
    return sent(el.proto.bytes)[0]


def figures(at: AppTest) -> list[dict]:
    """Every plotly figure on the page as its JSON spec, in page order."""
    return [figure_of(el) for el in chart_elements(at)]


def figure_titles(at: AppTest) -> list[str]:
    return [f.get("layout", {}).get("title", {}).get("text", "") for f in figures(at)]


def errors(at: AppTest) -> list[str]:
    """Exceptions and error boxes on the page (both are failures for a learner)."""
    return [e.message for e in at.exception] + [e.value for e in at.error]


def rand(*shape, seed: int = 0, dtype=torch.float64) -> torch.Tensor:
    """A seeded standard-normal tensor (float64 by default): test inputs that are the same every run."""
    return torch.randn(*shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def chart(at: AppTest, key: str) -> dict:
    """The figure JSON of the chart with this key (the `key` the page passed to ui.common.plot): a
    stable name, unlike a title, which follows the language and the controls."""
    for el in chart_elements(at):
        if el.key == key:
            return figure_of(el)
    raise AssertionError(f"no chart with key {key!r}; have {[el.key for el in chart_elements(at)]}")


def assert_bias_added_to_scaled_logits_and_causal(enc, d_model: int, n: int = 10) -> None:
    """A learned distance bias (Kerple, FIRE) in the one attention path: the layer's position term is
    the encoder's own bias(i, j), a causal mask zeroes every weight above the diagonal, and changing
    the last token changes no earlier output."""
    from encoders.attention import causal_mask, toy_layer

    layer = toy_layer(enc, 0)
    x = torch.randn(2, n, d_model, generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        r = layer(x, causal=True)
        want = enc.bias(torch.arange(n), torch.arange(n)).float()
    assert torch.allclose(r.terms["position"][0], want, atol=1e-6)
    assert (r.weights[..., ~causal_mask(n, n)] == 0).all()
    y = x.clone()
    y[:, -1] = 0.0
    with torch.no_grad():
        assert torch.allclose(layer(y, causal=True).output[:, :-1], r.output[:, :-1], atol=1e-6)
