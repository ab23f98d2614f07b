"""A page driven to its maximum sizes, and what its charts send: used by tests/test_payload.py and by
tools/bench.py and tools/payload.py (the benchmark's "max" columns)."""

from __future__ import annotations

from tests.helpers import chart_elements


def long_sentence(tag: str, n: int = 256) -> str:
    return " ".join(f"{tag}{k}" for k in range(n))


def set_sliders_to_max(at) -> list[str]:
    """Every slider and select-slider of the page at its maximum; returns what was set."""
    moved = []
    for s in at.slider:
        if s.key is None or s.key in ("seed",):
            continue
        value = (s.min, s.max) if isinstance(s.value, (tuple, list)) else s.max
        s.set_value(value)
        moved.append(f"{s.key}={value:g}" if isinstance(value, (int, float)) else f"{s.key}={value}")
    for s in at.select_slider:
        if s.key is None:
            continue
        # AppTest knows only the options' labels; set_value wants the option itself.
        last, first = _option(s, s.options[-1]), _option(s, s.options[0])
        if last is None:
            continue
        value = (first, last) if isinstance(s.value, (tuple, list)) else last
        s.set_value(value)
        moved.append(f"{s.key}={value}")
    return moved


def _option(s, label: str):
    for convert in (int, float, str):
        try:
            v = convert(label.replace(",", "")) if convert is not str else label
        except ValueError:
            continue
        try:
            if str(s.format_func(v)) == label:
                return v
        except Exception:
            continue
    return None


def figure_bytes(at) -> int:
    """Bytes of every chart's data as sent: its figure, config and words (ui/chart.py). Each element
    also carries the component's JS, about 2.2 KB, not counted here."""
    return sum(len(el.proto.bytes) for el in chart_elements(at))


def to_max(at) -> None:
    """tools/bench.py's "max" procedure (bench_chapter), untimed: sliders at their maximum, a
    256-token sentence, then the sliders again (some appear only at the new settings)."""
    moved = set_sliders_to_max(at)
    at.text_area(key="sentence").input(long_sentence("m0x"))
    at.run()
    if set_sliders_to_max(at) != moved:
        at.run()
