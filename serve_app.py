"""Start PE Atlas's Streamlit server with the app's heavy modules already imported.

    python -m serve_app run app.py [streamlit flags]      (the same arguments as `python -m streamlit`)

Streamlit answers /_stcore/health as soon as its server is up and imports what app.py imports only
when the first visitor's script runs, so on a fresh server that visitor waited for torch, pandas,
plotly and the app's own packages (about 3 s on this 2-core machine, issue 18's "first full render
after healthy"). Importing them here, before the server starts, moves that wait to before the server
is healthy: a fresh server's first page is then as fast as a warm one's. ./run-app, the workers of
tools/serve.py, the container (deploy/Dockerfile) and the browser tests all start the app this way.
The modules are the same objects the script then imports (sys.modules), so nothing runs twice.

It also turns Nagle's algorithm off on every connection the server accepts (`no_delay_for_every_tcp_socket`):
see there why that alone took ~40 ms from every rerun.

And it moves what it imported out of the garbage collector's sight (`settle_heap`): see there why a
full collection of those objects stalled every session for up to 0.2 s.

Last, it says that app.py is a st.navigation app (`navigation_app`), so the first visitor of a fresh
server who opens a link to a chapter is not told "Page not found"; and it proves the derivations
before the server is healthy (`prove_all`), so no learner waits for sympy.
"""

from __future__ import annotations

import asyncio.base_events
import gc
import importlib
import pkgutil
import socket
import sys


def _no_delay(sock: socket.socket) -> None:
    if sock.family in (socket.AF_INET, socket.AF_INET6) and sock.type == socket.SOCK_STREAM:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def no_delay_for_every_tcp_socket() -> None:
    """Make asyncio set TCP_NODELAY on every TCP connection, whatever protocol number its socket has.

    asyncio sets TCP_NODELAY on a connection only when its socket says proto == IPPROTO_TCP.
    Streamlit's server binds its listening socket as socket.socket(family=…), proto 0, so the
    connections it accepts have proto 0 too and keep Nagle's algorithm on. A rerun writes several
    small websocket messages in a row: the first leaves at once, the rest wait for its ACK, which the
    browser's TCP stack delays by up to 40 ms (delayed ACK). Measured with a client that timestamps
    every message of a quiz's fragment rerun: the server had written them all 12 ms after the input,
    the client received them at 52 ms; this was the ~48 ms floor of every control in
    tools/bench_controls.py. asyncio looks the function up on its module at each new connection, so
    replacing it there reaches every transport made afterwards."""
    asyncio.base_events._set_nodelay = _no_delay  # type: ignore[attr-defined]


def preload() -> None:
    import pandas  # noqa: F401  (explain.figures.theme imports it first, for a thread-safety reason)
    import plotly.graph_objects  # noqa: F401

    # The language switch's "한국어" is not ASCII, so Streamlit looks for an emoji in it and loads its
    # emoji catalogue (35–57 ms) during the first visitor's run, unless it is loaded here.
    import streamlit.emojis  # noqa: F401
    import torch  # noqa: F401

    import encoders  # noqa: F401
    import explain.figures  # noqa: F401
    import ui.common
    import ui.sidebar  # noqa: F401

    # Every module of the packages that never import streamlit (tests/test_layers.py): the pages
    # import them anyway, and imported here they are frozen with the rest (settle_heap). ui/ is
    # left to the pages: its modules make their st.cache_data caches at import, which must happen
    # once Streamlit's runtime exists.
    for name in STREAMLIT_FREE:
        package = importlib.import_module(name)
        for module in pkgutil.walk_packages(package.__path__, name + "."):
            importlib.import_module(module.name)


STREAMLIT_FREE = ("encoders", "explain", "lab", "models")


def settle_heap() -> None:
    """Collect once, then freeze every object alive (gc.freeze): the collector never scans them again.

    The preloaded modules (torch, plotly, pandas, sympy and the app's own) leave ~260,000 objects
    that live as long as the server. CPython's full (generation-2) collection walks every one of
    them, holding the GIL: measured 150 ms right after preload, and 0.11–0.22 s in a running server,
    during which no session's script and no websocket write makes progress. Reruns make enough
    garbage for a full collection every few dozen interactions, so every learner of a class felt
    them as stalls. Frozen, they are skipped: the full collections of the same session of clicks
    then took 15–26 ms (about 35,000 objects made since). The cost is memory the collector could
    have freed among the frozen objects: they are live modules, so none."""
    gc.collect()
    gc.freeze()


def navigation_app() -> None:
    """Tell Streamlit up front that app.py is a st.navigation app, not a pages/-folder app.

    Streamlit decides that once per process, when its first session starts: a folder named pages/
    beside the entrypoint makes it run that session the old way (a page per pages/*.py file, which
    finds none: ours live in pages/<part>/). The first learner who opens a link to a chapter
    (/rope, /toy-lab?lang=ko) was then told "Page not found … running the app's main page" over
    the right chapter, until app.py's st.navigation call set the flag for every later session. On
    a freshly started server that is the teacher's first shared link. Set here, no session sees it."""
    from streamlit.runtime.pages_manager import PagesManager

    PagesManager.uses_pages_directory = False


def prove_all() -> None:
    """Prove every registered identity (explain.derivations.proven) before the server is healthy, so
    no learner waits for sympy: a fresh server's first visit to the Derivations chapter took 4.7 s
    here, most of it proving all 17 (~3–4 s; far longer under a class's load, stalling that worker's
    other sessions), and a chapter's first opened proof paid its own. Proven on a thread alongside
    Streamlit's start instead, they shared the GIL with it and then with the first visitors (measured
    once: healthy after 7.0 s, first render after it 5.1 s). Here they cost ~3 s before healthy, once
    (healthy after 6.8 s instead of 3.5–4.5 s; first render 3.8 s, measured once), and nothing after;
    what they leave is frozen with the rest (settle_heap)."""
    from explain import derivations as D

    for d in D.ALL_DERIVATIONS:
        D.proven(d.id)


def warm_models() -> None:
    """Start loading SmolLM2 on a background thread (models.smollm2.start_warming): ~14 s of CPU and
    ~1.2 GB once per process, so that its chapter is ready when a learner opens it; the chapter says
    "warming up" until then and no other page waits. Called in the serving process only, after
    settle_heap and after any fork (tools/serve.py's spawner must stay single-threaded). Off with
    PE_ATLAS_WARM_SMOLLM2=0: the chapter's first visit starts it instead."""
    from models import smollm2

    if smollm2.warm_at_start():
        smollm2.start_warming()


def main() -> None:
    no_delay_for_every_tcp_socket()
    preload()
    prove_all()
    settle_heap()
    navigation_app()
    warm_models()
    from streamlit.web.cli import main as streamlit_main

    streamlit_main(prog_name="streamlit")


if __name__ == "__main__":
    sys.exit(main())
