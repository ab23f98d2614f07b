"""What every page sends at default and at maximum sizes: a script, not a test.

    python tools/payload.py [--only key1,key2] [--top 3]

For every chapter in ui.chapters.CHAPTERS, under AppTest and with the benchmark's own helpers
(tests/support/sizes.py): the bytes of every chart (figure_bytes: each chart element as sent, its
figure's JSON spec with its config and the element's JS, ui/chart.py) at default controls, then
after bench's "max" procedure (to_max: every slider and select-slider at its maximum, a
256-token sentence, sliders again for those that appear only then). Per page: KB at default, KB at
max, the biggest charts at max by key, and any other big element (dataframe, image, …) over 20 KB.

Then the pieces a learner opens: each chapter's closed "Trained on real text" panel (ui/trained.py)
opened at max sizes, and the attention lab's "trained on real text" source with four encodings.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.chdir(ROOT)

from tests.helpers import chart_elements, errors, open_page  # noqa: E402
from tests.support.sizes import figure_bytes, to_max  # noqa: E402
from ui.chapters import BY_KEY, CHAPTERS  # noqa: E402
from ui.chart import NAME as CHART_NAME  # noqa: E402

BIG_OTHER = 20 * 1024  # a non-chart element this big is worth naming


def charts(at) -> list[tuple[str, int]]:
    """(key, bytes) of every plotly chart, biggest first."""
    return sorted(((el.key or "?", len(el.proto.bytes)) for el in chart_elements(at)), key=lambda kv: -kv[1])


def other_big(at) -> list[tuple[str, int]]:
    """Non-chart elements over BIG_OTHER bytes (dataframes, images, long markdown …), by type."""
    found = []

    def walk(node) -> None:
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)
            return
        proto = getattr(node, "proto", None)
        kind = getattr(node, "type", type(node).__name__)
        if proto is None or (kind == "bidi_component" and proto.component_name == CHART_NAME):
            return
        size = proto.ByteSize()
        if size > BIG_OTHER:
            found.append((f"{kind}:{getattr(node, 'key', None) or '?'}", size))

    walk(at._tree)
    return sorted(found, key=lambda kv: -kv[1])


def fmt(top: list[tuple[str, int]], n: int) -> str:
    return ", ".join(f"{k} {b / 1024:.0f}" for k, b in top[:n])


def row(name: str, kb_default: float | str, at, n: int, problems: list[str]) -> int:
    total = figure_bytes(at)
    d = f"{kb_default:>8.0f}" if isinstance(kb_default, float) else f"{kb_default:>8}"
    other = other_big(at)
    print(
        f"{name:<26}{d}{total / 1024:>8.0f}  {fmt(charts(at), n)}"
        + (f"  | other: {fmt(other, n)}" if other else "")
        + (f"  | PROBLEMS: {'; '.join(sorted(set(problems)))}" if problems else ""),
        flush=True,
    )
    return total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="", help="comma-separated chapter keys (default: all)")
    ap.add_argument("--top", type=int, default=3)
    ap.add_argument("--no-extras", action="store_true", help="pages only: no trained panels, no lab trained mode")
    args = ap.parse_args()
    chapters = [c for c in CHAPTERS if not args.only or c.key in args.only.split(",")]
    print(f"{'page':<26}{'KB def':>8}{'KB max':>8}  biggest charts at max (key KB)")
    worst = 0
    panels = []
    for chapter in chapters:
        at = open_page(chapter.path)
        problems = [f"default: {e}" for e in errors(at)]
        kb_default = figure_bytes(at) / 1024
        to_max(at)
        problems += [f"max: {e}" for e in errors(at)]
        worst = max(worst, row(chapter.key, kb_default, at, args.top, problems))
        if f"{chapter.key}_trained" in at.session_state:
            panels.append(chapter)
    if not args.no_extras:
        for chapter in panels:
            at = open_page(chapter.path)
            to_max(at)
            at.session_state[f"{chapter.key}_trained"] = True  # open it, as a click would
            at.run()
            worst = max(worst, row(f"{chapter.key} +trained panel", "-", at, args.top, errors(at)))
        if not args.only or "attention-lab" in args.only.split(","):
            lab = BY_KEY["attention-lab"]
            at = open_page(lab.path)
            at.radio(key="lab_source").set_value("trained").run()
            kb_default = figure_bytes(at) / 1024
            to_max(at)
            names = at.multiselect(key="lab_methods").value
            worst = max(worst, row(f"lab trained ({len(names)} enc)", kb_default, at, args.top, errors(at)))
    print(f"\nbiggest page: {worst / 1024:.0f} KB ({worst / 1e6:.2f} MB)")


if __name__ == "__main__":
    main()
