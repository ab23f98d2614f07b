"""serve_app.py: every connection the app's server accepts has Nagle's algorithm off.

Streamlit binds its listening socket with proto 0, and asyncio sets TCP_NODELAY only on sockets that
say IPPROTO_TCP: without serve_app's fix a rerun's small websocket messages waited for the browser's
delayed ACK (~40 ms per rerun). These tests accept a real connection the way Streamlit does.

And serve_app freezes what it preloaded before Streamlit starts, so the garbage collector's full
collections stop walking ~260,000 objects that live as long as the server."""

from __future__ import annotations

import asyncio
import asyncio.base_events
import gc
import socket
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import serve_app

ROOT = Path(__file__).resolve().parents[1]


async def _accepted_nodelay() -> int:
    """Listen like Streamlit (socket.socket(family=…), proto 0), accept one loopback connection
    through asyncio and return TCP_NODELAY as set on the server's side of it."""
    listener = socket.socket(family=socket.AF_INET)
    assert listener.proto == 0
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    loop = asyncio.get_running_loop()
    seen: asyncio.Future[int] = loop.create_future()

    class Server(asyncio.Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            sock = transport.get_extra_info("socket")
            seen.set_result(sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))

    server = await loop.create_server(Server, sock=listener)
    try:
        _reader, writer = await asyncio.open_connection(*listener.getsockname())
        value = await asyncio.wait_for(seen, 10)
        writer.close()
        await writer.wait_closed()
    finally:
        server.close()
        await server.wait_closed()
    return value


def accepted_nodelay() -> int:
    # On a thread of its own: another test in this worker may have left an event loop running here.
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(_accepted_nodelay())).result()


def test_without_the_fix_a_streamlit_style_socket_keeps_nagle(monkeypatch):
    # The reason for the fix: if a Python release sets it by itself, this fails and the fix can go.
    monkeypatch.setattr(asyncio.base_events, "_set_nodelay", asyncio.base_events._set_nodelay)
    assert accepted_nodelay() == 0


def test_with_the_fix_every_accepted_connection_has_nodelay(monkeypatch):
    monkeypatch.setattr(asyncio.base_events, "_set_nodelay", asyncio.base_events._set_nodelay)
    serve_app.no_delay_for_every_tcp_socket()
    assert accepted_nodelay() != 0


@pytest.mark.parametrize(
    "family,kind",
    [(socket.AF_INET, socket.SOCK_DGRAM), (socket.AF_UNIX, socket.SOCK_STREAM), (socket.AF_INET6, socket.SOCK_STREAM)],
)
def test_the_fix_touches_only_tcp_sockets(family, kind):
    try:
        s = socket.socket(family, kind)
    except OSError:  # no IPv6 on this machine
        pytest.skip(f"cannot make a {family!r} socket here")
    with s:
        serve_app._no_delay(s)  # no error on a UDP or Unix socket: nothing is set there
        if family != socket.AF_UNIX and kind == socket.SOCK_STREAM:
            assert s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0


def test_main_applies_it_before_streamlit_starts(monkeypatch):
    monkeypatch.setattr(asyncio.base_events, "_set_nodelay", asyncio.base_events._set_nodelay)
    monkeypatch.setattr(serve_app, "preload", lambda: None)
    monkeypatch.setattr(serve_app, "prove_all", lambda: None)
    seen = []
    import streamlit.web.cli

    monkeypatch.setattr(streamlit.web.cli, "main", lambda prog_name: seen.append(asyncio.base_events._set_nodelay))
    monkeypatch.setattr(sys, "argv", ["serve_app", "run", "app.py"])
    serve_app.main()
    assert seen == [serve_app._no_delay]


def test_main_freezes_the_preloaded_heap_before_streamlit_starts(monkeypatch):
    """A full collection must not walk the preloaded modules' objects (see settle_heap)."""
    monkeypatch.setattr(serve_app, "preload", lambda: None)
    monkeypatch.setattr(serve_app, "prove_all", lambda: None)
    frozen_at_start = []
    import streamlit.web.cli

    monkeypatch.setattr(streamlit.web.cli, "main", lambda prog_name: frozen_at_start.append(gc.get_freeze_count()))
    monkeypatch.setattr(sys, "argv", ["serve_app", "run", "app.py"])
    try:
        gc.unfreeze()
        serve_app.main()
    finally:
        gc.unfreeze()  # this test process goes on collecting as before
    assert frozen_at_start and frozen_at_start[0] > 1000


def test_preload_imports_every_streamlit_free_module_and_no_cache():
    """preload imports every module of encoders/, explain/, lab/ and models/ (so they are frozen too),
    and none of them makes a Streamlit cache before the runtime exists."""
    code = (
        "import importlib, pkgutil, sys\n"
        "import serve_app\n"
        "serve_app.preload()\n"
        "print([m.name for n in serve_app.STREAMLIT_FREE\n"
        "       for m in pkgutil.walk_packages(importlib.import_module(n).__path__, n + '.')\n"
        "       if m.name not in sys.modules])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "[]"
    # Streamlit warns on stderr when a cache is made before its runtime exists (as importing ui/ does).
    assert "No runtime found" not in out.stderr, out.stderr[-2000:]


def test_main_says_the_app_uses_st_navigation_before_streamlit_starts(monkeypatch):
    """Streamlit decides on its first session whether app.py is a pages/-folder app; serve_app decides
    it first (navigation_app), so that session is not run the old way."""
    from streamlit.runtime.pages_manager import PagesManager

    monkeypatch.setattr(serve_app, "preload", lambda: None)
    monkeypatch.setattr(serve_app, "prove_all", lambda: None)
    monkeypatch.setattr(serve_app, "settle_heap", lambda: None)
    monkeypatch.setattr(PagesManager, "uses_pages_directory", None)
    seen = []
    import streamlit.web.cli

    monkeypatch.setattr(streamlit.web.cli, "main", lambda prog_name: seen.append(PagesManager.uses_pages_directory))
    monkeypatch.setattr(sys, "argv", ["serve_app", "run", "app.py"])
    serve_app.main()
    assert seen == [False]


async def _first_visit(url: str, page_name: str) -> tuple[list[str], dict[str, str], str]:
    """Open `page_name` as a browser does on a link (a rerun that names the page by its URL path and
    no page hash); return the message kinds, the pages (URL path → hash) and the page it ran."""
    import websockets
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg
    from websockets.typing import Subprotocol

    msg = BackMsg()
    msg.rerun_script.page_name = page_name
    msg.rerun_script.query_string = "lang=ko"
    kinds: list[str] = []
    pages: dict[str, str] = {}
    ran = ""
    ws_url = url.replace("http://", "ws://") + "/_stcore/stream"
    async with websockets.connect(ws_url, subprotocols=[Subprotocol("streamlit")], max_size=2**28) as ws:
        await ws.send(msg.SerializeToString())
        while "script_finished" not in kinds:
            fm = ForwardMsg()
            fm.ParseFromString(await asyncio.wait_for(ws.recv(), timeout=120))
            kinds.append(str(fm.WhichOneof("type")))
            if kinds[-1] == "navigation":
                pages = {p.url_pathname: p.page_script_hash for p in fm.navigation.app_pages}
                ran = fm.navigation.page_script_hash
    return kinds, pages, ran


def test_the_first_visitor_of_a_fresh_server_can_open_a_chapter_by_its_link(tmp_path, monkeypatch):
    """The first session of a freshly started server opens /rope: no "Page not found", and it runs
    RoPE (before navigation_app, that session got the dialog and a navigation with the main page only)."""
    from models.smollm2 import WARM_AT_START_ENV
    from tests.support.browser import start_server, stop_server

    monkeypatch.setenv(WARM_AT_START_ENV, "0")  # RoPE only: no SmolLM2 load (~14 s of CPU) beside the suite
    proc, url, _ = start_server(tmp_path / "server.log")
    try:
        with ThreadPoolExecutor(1) as pool:
            kinds, pages, ran = pool.submit(lambda: asyncio.run(_first_visit(url, "rope"))).result()
    finally:
        stop_server(proc)
    assert "page_not_found" not in kinds
    assert "rope" in pages and ran == pages["rope"]


def test_main_proves_the_derivations_before_streamlit_starts_and_before_the_freeze(monkeypatch):
    order = []
    monkeypatch.setattr(serve_app, "preload", lambda: order.append("preload"))
    monkeypatch.setattr(serve_app, "settle_heap", lambda: order.append("freeze"))
    monkeypatch.setattr(serve_app, "prove_all", lambda: order.append("prove"))
    import streamlit.web.cli

    monkeypatch.setattr(streamlit.web.cli, "main", lambda prog_name: order.append("streamlit"))
    monkeypatch.setattr(sys, "argv", ["serve_app", "run", "app.py"])
    serve_app.main()
    assert order == ["preload", "prove", "freeze", "streamlit"]


def test_prove_all_proves_every_derivation_once():
    """What it leaves behind is what the pages read (ui.derivation's proofs come from D.proven):
    every registered identity proven, green, with the time its proof took."""
    from explain import derivations as D
    from explain.derivations.view import status

    D.proven.cache_clear()
    serve_app.prove_all()
    assert D.proven.cache_info().currsize == len(D.ALL_DERIVATIONS)
    for d in D.ALL_DERIVATIONS:
        report, seconds = D.proven(d.id)
        assert status(d, report).ok, d.id
        assert seconds > 0
    assert D.proven.cache_info().misses == len(D.ALL_DERIVATIONS)  # the pages' calls were all hits
