"""The table of contents: every chapter page, its part, title and one-line idea.

app.py builds the navigation from it, the tests run every page in it, and the benchmark times them.
Page files live one folder below pages/ (pages/<part>/<chapter>.py) so that Streamlit never treats
them as legacy auto-discovered pages.
"""

from __future__ import annotations

from dataclasses import dataclass

PARTS = ("Absolute", "Relative", "Rotary", "Contextual", "Beyond", "Labs")


@dataclass(frozen=True)
class Chapter:
    key: str  # also the URL path: /<key>
    part: str
    path: str  # relative to the app's root
    title: str
    icon: str
    idea: str  # the one line under the title


CHAPTERS: tuple[Chapter, ...] = (
    Chapter(
        "why-order", "Absolute", "pages/absolute/why_order.py", "Why order matters", ":material/shuffle:",
        "Attention without positions cannot tell “dog bites man” from “man bites dog”: "
        "shuffle the words and the outputs are merely shuffled.",
    ),
    Chapter(
        "sinusoidal", "Absolute", "pages/absolute/sinusoidal.py", "Sinusoidal APE", ":material/waves:",
        "Each position gets a fixed vector of sines and cosines at geometrically spaced frequencies, "
        "added to the word's embedding.",
    ),
    Chapter(
        "learned", "Absolute", "pages/absolute/learned.py", "Learned APE", ":material/table_rows:",
        "Each position gets a trained row of a lookup table — and a position past the last row "
        "gets nothing at all.",
    ),
    Chapter(
        "trouble", "Absolute", "pages/absolute/trouble.py", "The trouble with absolute positions",
        ":material/warning:",
        "Absolute vectors move when the sentence is shifted, run out when it is long, and only "
        "indirectly say how far apart two words are.",
    ),
)

BY_KEY = {c.key: c for c in CHAPTERS}
