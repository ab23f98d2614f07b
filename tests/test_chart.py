"""ui/chart.py, the atlas's chart element: the plotly.js build it loads can draw every chart the
atlas makes, it is the version plotly.py writes figures for, and the words a chart shows besides its
figure's (the mode bar's) follow the page's language."""

from __future__ import annotations

import json
import re
from pathlib import Path

import plotly.offline
import pytest

from explain import i18n
from tests.support import figure_snapshots
from ui import chart

ROOT = Path(__file__).resolve().parents[1]
BUILD = (ROOT / "static" / chart.PLOTLY_BUILD).read_text(encoding="utf-8")


def test_the_build_is_the_cartesian_plotly_js_that_plotly_py_writes_for():
    version = plotly.offline.get_plotlyjs_version()
    assert BUILD.startswith("/**\n* plotly.js (cartesian - minified) v" + version + "\n")
    assert f"plotly-cartesian-{version}.min.js" == chart.PLOTLY_BUILD
    assert "MIT" in (ROOT / "static" / "plotly-LICENSE.txt").read_text(encoding="utf-8")


def test_every_trace_of_every_page_is_in_the_build():
    """The recorded figures of every chapter in both languages (tests/support/figure_snapshots.py) use
    only TRACE_TYPES, and the build registers each of them."""
    snapshots = figure_snapshots.load()
    used = {
        trace.get("type", "scatter")
        for page in snapshots.values()
        for fig in page.values()
        for trace in fig.get("data", [])
    }
    frames = {
        trace.get("type", "scatter")
        for page in snapshots.values()
        for fig in page.values()
        for frame in fig.get("frames", [])
        for trace in frame.get("data", [])
    }
    assert len(snapshots) >= 34 and used  # 17+ chapters × 2 languages
    assert used | frames <= chart.TRACE_TYPES, (used | frames) - chart.TRACE_TYPES
    registered = set(re.findall(r'moduleType:"trace",name:"(\w+)"', BUILD))
    assert registered >= chart.TRACE_TYPES, chart.TRACE_TYPES - registered


def test_the_words_plotly_shows_are_translated_and_english_is_plotlys_own():
    """Each word of PLOTLY_WORDS is one the build shows (so the locale translates something), in
    English the atlas's text is plotly's exactly, and in Korean every word is translated."""
    for word in chart.PLOTLY_WORDS:
        assert f'"{word}"' in BUILD, word
    token = i18n._current.set("en")
    try:
        en = chart.chart_words()
    finally:
        i18n._current.reset(token)
    token = i18n._current.set("ko")
    try:
        ko = chart.chart_words()
    finally:
        i18n._current.reset(token)
    assert en["locale"] == "en" and en["plotly"] == {w: w for w in chart.PLOTLY_WORDS}
    assert ko["locale"] == "ko" and set(ko["plotly"]) == set(chart.PLOTLY_WORDS)
    for word, text in ko["plotly"].items():
        assert text != word and re.search("[가-힣]", text), (word, text)
    assert en["fullscreen"] == "Full screen" and ko["fullscreen"] == "전체 화면"


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_payload_holds_the_figure_the_config_and_the_words(lang):
    from explain import figures as F

    fig = F.token_heatmap([[1.0, 0.0], [0.0, 1.0]], ["a", "<b>"], ["a", "<b>"], "t")
    token = i18n._current.set(lang)
    try:
        words = chart.chart_words()
    finally:
        i18n._current.reset(token)
    data = chart.payload(fig, {"displaylogo": False}, words)
    figure, config = chart.sent(data)
    assert figure["data"][0]["type"] == "heatmap" and config == {"displaylogo": False}
    assert json.loads(data)["words"] == words


def test_the_js_sent_has_no_comments_and_names_the_build():
    assert "//" not in chart._JS_SENT.replace("https://", "")
    assert f"app/static/{chart.PLOTLY_BUILD}" in chart._JS_SENT
    assert len(chart._JS_SENT) < 0.8 * len(chart._JS)
