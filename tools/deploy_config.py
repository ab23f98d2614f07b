"""deploy/haproxy.cfg, the compose balancer's configuration, written by the same function as the one
`./run-app --workers N` starts (tools/serve.py's haproxy_config), so the two never drift
(tests/test_deploy.py regenerates it and fails when the committed file differs).

    .venv/bin/python tools/deploy_config.py             # rewrite deploy/haproxy.cfg (after editing serve.py)
    .venv/bin/python tools/deploy_config.py --servers 10.0.0.11:8501 10.0.0.12:8501 > haproxy.cfg
                                                        # several machines: a balancer for those app servers
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script: `tools` importable

from tools.serve import haproxy_config  # noqa: E402

CFG = ROOT / "deploy" / "haproxy.cfg"
# deploy/compose.yaml's app services, in order (w1 = app1, …), and the one port every app container and
# the balancer listen on inside their containers (each container has its own network namespace).
APPS = ("app1", "app2")
PORT = 8501

HEADER = """\
# Written by tools/deploy_config.py with tools/serve.py's haproxy_config: edit those, then run
#   .venv/bin/python tools/deploy_config.py
# App servers named by host name (compose's services) are resolved while HAProxy runs: the file is valid
# before the apps are up, and a container restarted with a new address is found again.
"""


def config(servers: list[tuple[str, int]] | None = None) -> str:
    """The balancer listens on every interface inside its container; compose decides what is published."""
    return HEADER + haproxy_config("0.0.0.0", PORT, servers or [(a, PORT) for a in APPS], dns=True)


def host_port(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not host or not port.isdigit():
        raise argparse.ArgumentTypeError(f"expected HOST:PORT, got {text!r}")
    return host, int(port)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--servers", nargs="+", type=host_port, metavar="HOST:PORT", help="print a config for these app servers"
    )
    args = parser.parse_args(argv)
    if args.servers:
        sys.stdout.write(config(args.servers))
    else:
        CFG.write_text(config(), encoding="utf-8")
        print(f"wrote {CFG.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
