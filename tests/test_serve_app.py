"""serve_app.py: every connection the app's server accepts has Nagle's algorithm off.

Streamlit binds its listening socket with proto 0, and asyncio sets TCP_NODELAY only on sockets that
say IPPROTO_TCP: without serve_app's fix a rerun's small websocket messages waited for the browser's
delayed ACK (~40 ms per rerun). These tests accept a real connection the way Streamlit does."""

from __future__ import annotations

import asyncio
import asyncio.base_events
import socket
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

import serve_app


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
    seen = []
    import streamlit.web.cli

    monkeypatch.setattr(streamlit.web.cli, "main", lambda prog_name: seen.append(asyncio.base_events._set_nodelay))
    monkeypatch.setattr(sys, "argv", ["serve_app", "run", "app.py"])
    serve_app.main()
    assert seen == [serve_app._no_delay]
