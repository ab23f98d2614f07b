"""PE Atlas — the frame: page config, the shared sidebar, and navigation over every chapter.

Only the frame lives here. The shared widgets (language, sentence, seed, examples) are created in this
entrypoint on every run, which is what keeps their values when the learner changes pages; they are
mirrored in the URL so that a link restores them.
"""

from pathlib import Path

import streamlit as st
import torch

from ui.chapters import CHAPTERS, PARTS, part_title
from ui.i18n import activate, language_switch, t
from ui.lessons import follow_lesson, lesson_banner
from ui.path import nav_title, next_links
from ui.presenter import frame_scripts, presenter_style
from ui.sidebar import shared_sidebar

# One thread per torch op: the app's tensors are small (≤ 256 tokens, d ≤ 512) and every learner's
# session runs in its own thread, so intra-op threads only fight each other. Measured on 2 cores:
# one layer on 256 tokens, sinusoidal + RoPE, median 22 ms with 1 thread against 284 ms with 2.
torch.set_num_threads(1)

# The favicon is a file of ours: a ":material/…:" page icon makes the browser fetch an SVG from
# fonts.gstatic.com, a request that leaves the machine (and fails offline).
st.set_page_config(
    page_title=t("common.app_title"), page_icon=str(Path(__file__).parent / "assets" / "icon.png"), layout="wide"
)

# The language comes first: page titles, part names and every word below follow it.
activate()
language_switch()

pages = {
    part_title(part): [
        st.Page(c.path, title=nav_title(c), icon=c.icon, url_path=c.key, default=(k == 0))
        for k, c in enumerate(CHAPTERS)
        if c.part == part
    ]
    for part in PARTS
}
# In the top bar, one menu per part: in the sidebar its ~20 links stood above the learner's own tools,
# and at 1366×768 the sentence box and the lesson picker were below the first screen
# (tests/e2e/test_first_screen_browser.py). A window too narrow for the bar (a phone) gets Streamlit's
# sidebar navigation instead.
navigation = st.navigation({part: ps for part, ps in pages.items() if ps}, position="top")
shared_sidebar()
follow_lesson()  # after Previous / Next: open the step's page (stops this run)
presenter_style()
frame_scripts()
lesson_banner(navigation.url_path or CHAPTERS[0].key)
navigation.run()
next_links(navigation.url_path or CHAPTERS[0].key)  # after the page: where to go next
