"""Start PE Atlas's Streamlit server with the app's heavy modules already imported.

    python -m serve_app run app.py [streamlit flags]      (the same arguments as `python -m streamlit`)

Streamlit answers /_stcore/health as soon as its server is up and imports what app.py imports only
when the first visitor's script runs, so on a fresh server that visitor waited for torch, pandas,
plotly and the app's own packages (about 3 s on this 2-core machine, issue 18's "first full render
after healthy"). Importing them here, before the server starts, moves that wait to before the server
is healthy: a fresh server's first page is then as fast as a warm one's. ./run-app, the workers of
tools/serve.py, the container (deploy/Dockerfile) and the browser tests all start the app this way.
The modules are the same objects the script then imports (sys.modules), so nothing runs twice.
"""

from __future__ import annotations

import sys


def preload() -> None:
    import pandas  # noqa: F401  (explain.figures.theme imports it first, for a thread-safety reason)
    import plotly.graph_objects  # noqa: F401
    import torch  # noqa: F401

    import encoders  # noqa: F401
    import explain.figures  # noqa: F401
    import ui.common
    import ui.sidebar  # noqa: F401


def main() -> None:
    preload()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
