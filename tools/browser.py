"""The browser harness moved to tests/support/browser.py (the tests use it, and tests never import
tools/). This name stays for tools/classroom_load.py, which imports start_server and stop_server from
here; import tests.support.browser in anything new."""

from tests.support.browser import start_server, stop_server

__all__ = ["start_server", "stop_server"]
