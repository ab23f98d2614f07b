"""The table of contents: every chapter page, its part, file and icon.

app.py builds the navigation from it, the tests run every page in it, and the benchmark times them.
Page files live one folder below pages/ (pages/<part>/<chapter>.py) so that Streamlit never treats
them as legacy auto-discovered pages. Titles and the one line under each title are words, so they
live in the catalogue (explain/text/<lang>/strings/chapters.toml) and follow the current language.
"""

from __future__ import annotations

from dataclasses import dataclass

from explain.i18n import t

PARTS = ("Absolute", "Relative", "Rotary", "Contextual", "Beyond", "Labs")


def part_title(part: str, lang: str | None = None) -> str:
    return t(f"chapters.parts.{part}", lang)


@dataclass(frozen=True)
class Chapter:
    key: str  # also the URL path: /<key>
    part: str  # one of PARTS
    path: str  # relative to the app's root
    icon: str

    @property
    def title(self) -> str:  # in the current run's language
        return t(f"chapters.{self.key}.title")

    @property
    def idea(self) -> str:  # the one line under the title
        return t(f"chapters.{self.key}.idea")


CHAPTERS: tuple[Chapter, ...] = (
    Chapter("why-order", "Absolute", "pages/absolute/why_order.py", ":material/shuffle:"),
    Chapter("sinusoidal", "Absolute", "pages/absolute/sinusoidal.py", ":material/waves:"),
    Chapter("learned", "Absolute", "pages/absolute/learned.py", ":material/table_rows:"),
    Chapter("trouble", "Absolute", "pages/absolute/trouble.py", ":material/warning:"),
    Chapter("shaw", "Relative", "pages/relative/shaw.py", ":material/straighten:"),
    Chapter("transformer-xl", "Relative", "pages/relative/transformer_xl.py", ":material/memory:"),
    Chapter("t5", "Relative", "pages/relative/t5.py", ":material/stairs:"),
    Chapter("deberta", "Relative", "pages/relative/deberta.py", ":material/call_split:"),
    Chapter("rope", "Rotary", "pages/rotary/rope.py", ":material/rotate_right:"),
    Chapter("rope-scaling", "Rotary", "pages/rotary/rope_scaling.py", ":material/expand:"),
    Chapter("alibi", "Rotary", "pages/rotary/alibi.py", ":material/trending_down:"),
    Chapter("cope", "Contextual", "pages/contextual/cope.py", ":material/format_list_numbered:"),
    Chapter("spline", "Beyond", "pages/beyond/spline.py", ":material/gesture:"),
    Chapter("derivations", "Beyond", "pages/beyond/derivations.py", ":material/functions:"),
    Chapter("attention-lab", "Labs", "pages/labs/attention_lab.py", ":material/science:"),
    Chapter("minilm", "Labs", "pages/labs/minilm.py", ":material/psychology:"),
    Chapter("toy-lab", "Labs", "pages/labs/toy_tasks.py", ":material/model_training:"),
    Chapter("real-text", "Labs", "pages/labs/real_text.py", ":material/menu_book:"),
)

BY_KEY = {c.key: c for c in CHAPTERS}
