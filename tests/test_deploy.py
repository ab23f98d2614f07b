"""The container deployment (deploy/): what can be checked without a Docker daemon.

No image is built here (this machine has no Docker daemon): these tests check that the files agree with
each other and with ./run-app's balancer — deploy/haproxy.cfg is what tools/serve.py's haproxy_config
writes and HAProxy accepts it; compose's app services are the balancer's servers and only the balancer
publishes a port; the Dockerfile runs the workers' own Streamlit command as a non-root user, installs the
pinned CPU torch, checks its health and carries no cookie secret; every file it copies exists.
"""

from __future__ import annotations

import fnmatch
import itertools
import json
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from tools import deploy_config, serve
from tools.serve import KEEPS_DYING, MAX_RESTART_DELAY, haproxy_config, restart_delay, streamlit_args

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
COMPOSE = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
SERVICES = COMPOSE["services"]
APP_SERVICES = [name for name, s in SERVICES.items() if "build" in s]
CFG = (DEPLOY / "haproxy.cfg").read_text(encoding="utf-8")
SECRET_VAR = "STREAMLIT_SERVER_COOKIE_SECRET"

# What ./run-app --workers 2 gives HAProxy (the layout before haproxy_config took (host, port) servers,
# plus http-no-delay, compression, and issue 42's redispatch and faster health checks): the loopback
# layout must stay byte for byte what tests/e2e/test_workers.py drives in real browsers.
RUN_APP_CFG = """global
    maxconn 4096

defaults
    mode http
    option http-server-close
    option http-no-delay    # no MSG_MORE hold on a rerun's small websocket messages
    compression algo gzip   # Streamlit serves its ~10 MB of JavaScript uncompressed: a class's Wi-Fi pays
    compression type text/html text/css text/javascript application/javascript application/json image/svg+xml
    timeout connect 5s
    timeout client 1h
    timeout server 1h
    timeout tunnel 1h       # a learner's websocket stays open while the tab is open
    timeout check 3s        # a worker busy with a class still answers its health check in time
    retries 1
    option redispatch       # a request pinned to a dead worker goes to a live one on its last retry

frontend atlas
    bind 127.0.0.1:8501
    default_backend workers

backend workers
    balance leastconn
    cookie PEATLAS insert indirect nocache httponly
    option httpchk GET /_stcore/health
    http-check expect status 200
    default-server inter 1s fall 2 rise 2   # a dead worker is out within ~2 s, a restarted one back ~2 s after healthy
    server w1 127.0.0.1:40001 check cookie w1
    server w2 127.0.0.1:40002 check cookie w2
"""


def dockerfile() -> list[tuple[str, str]]:
    """deploy/Dockerfile as (INSTRUCTION, arguments): comments dropped, continued lines joined."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in (DEPLOY / "Dockerfile").read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = pending + line
        pending = ""
        word, _, rest = full.partition(" ")
        out.append((word.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return out


def instructions(name: str) -> list[str]:
    return [args for word, args in dockerfile() if word == name]


def haproxy_servers(cfg: str) -> list[tuple[str, str, int]]:
    """(name, host, port) of every `server` line."""
    return [(n, h, int(p)) for n, h, p in re.findall(r"^\s+server (\S+) (\S+):(\d+) ", cfg, re.M)]


def haproxy_binary() -> str:
    # /usr/sbin is not on a Debian user's PATH; Debian's package puts haproxy there.
    path = shutil.which("haproxy") or ("/usr/sbin/haproxy" if Path("/usr/sbin/haproxy").exists() else None)
    if path is None:
        pytest.fail("HAProxy is not installed (apt-get install haproxy; .ci/run installs it)", pytrace=False)
    return path


def haproxy_check(cfg: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    f = tmp_path / "haproxy.cfg"
    f.write_text(cfg, encoding="utf-8")
    return subprocess.run(
        [haproxy_binary(), "-c", "-f", str(f)], capture_output=True, text=True, timeout=60, check=False
    )


# --- the balancer: one function writes ./run-app's and compose's ----------------------------------------


def test_run_app_balancer_config_is_byte_identical_on_loopback():
    servers = [("127.0.0.1", 40001), ("127.0.0.1", 40002)]
    assert haproxy_config("127.0.0.1", 8501, servers) == RUN_APP_CFG
    # --lan changes only the bind address.
    lan = haproxy_config("0.0.0.0", 8501, servers)
    assert lan == RUN_APP_CFG.replace("bind 127.0.0.1:8501", "bind 0.0.0.0:8501")


@pytest.mark.parametrize("n", range(1, 17))
def test_every_worker_count_gets_one_sticky_server_per_worker(n):
    ports = [30000 + k for k in range(n)]
    cfg = haproxy_config("127.0.0.1", 8501, [("127.0.0.1", p) for p in ports])
    assert haproxy_servers(cfg) == [(f"w{k}", "127.0.0.1", p) for k, p in enumerate(ports, start=1)]
    assert all(f"check cookie w{k}\n" in cfg for k in range(1, n + 1))
    assert "resolvers" not in cfg and "init-addr" not in cfg  # loopback ports need no name resolution


def test_committed_haproxy_cfg_is_what_the_generator_writes():
    assert deploy_config.config() == CFG, "deploy/haproxy.cfg drifted: run .venv/bin/python tools/deploy_config.py"


def test_haproxy_accepts_the_compose_config_before_the_apps_exist(tmp_path):
    # app1, app2 do not resolve on this machine (no compose network): init-addr libc,none starts those
    # servers without an address, and the resolvers section fills it in once Docker's DNS answers.
    r = haproxy_check(CFG, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "Configuration file is valid" in r.stdout


def test_without_runtime_dns_an_unresolvable_app_fails_the_start(tmp_path):
    # Why deploy/haproxy.cfg has dns=True: the same servers resolved once at start would fail it.
    # (.invalid never resolves, RFC 6761.)
    servers = [("app1.invalid", 8501), ("app2.invalid", 8501)]
    assert haproxy_check(haproxy_config("0.0.0.0", 8501, servers), tmp_path).returncode != 0
    assert haproxy_check(haproxy_config("0.0.0.0", 8501, servers, dns=True), tmp_path).returncode == 0


def test_haproxy_accepts_the_run_app_config(tmp_path):
    r = haproxy_check(RUN_APP_CFG, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_generator_prints_a_balancer_for_app_servers_on_other_machines(capsys):
    assert deploy_config.main(["--servers", "10.0.0.11:8501", "atlas-2.lan:9000"]) == 0
    printed = capsys.readouterr().out
    assert haproxy_servers(printed) == [("w1", "10.0.0.11", 8501), ("w2", "atlas-2.lan", 9000)]
    assert "resolvers dns" in printed
    with pytest.raises(SystemExit):
        deploy_config.main(["--servers", "10.0.0.11"])  # no port


# --- a worker's death (issue 42): the balancer moves its learners, the supervisor or Docker restarts it --


@pytest.mark.parametrize("cfg", [RUN_APP_CFG, CFG], ids=["run-app", "compose"])
def test_balancer_moves_learners_off_a_dead_worker_and_takes_it_back(cfg):
    words = [line.split("#")[0].split() for line in cfg.splitlines()]
    # A request pinned by its cookie to a dead worker is retried once, then sent to a live worker
    # (Streamlit's reconnect lands there within a second); without redispatch it got 503 until the
    # worker was marked down.
    assert ["option", "redispatch"] in words
    assert ["retries", "1"] in words
    # Checked every second: out after two misses, back after two answers (a restarted worker rejoins
    # ~2 s after it is healthy). No `option persist`, which would keep sending learners to a dead one.
    assert ["default-server", "inter", "1s", "fall", "2", "rise", "2"] in words
    assert not any(w[:2] == ["option", "persist"] for w in words)
    assert all(" check " in line for line in cfg.splitlines() if line.strip().startswith("server "))


def test_a_worker_killed_once_comes_back_at_once_one_that_keeps_dying_is_backed_off():
    assert restart_delay(0) == restart_delay(1) == 0
    delays = [restart_delay(k) for k in range(2, 12)]
    assert delays == sorted(delays) and delays[0] >= 2  # never a tight loop
    assert max(delays) == MAX_RESTART_DELAY <= 60
    assert restart_delay(KEEPS_DYING) > 0  # the death that is reported is also backed off


def test_supervisor_restarts_a_dead_worker_on_its_port_then_backs_off_and_reports_it(tmp_path, monkeypatch):
    # A worker that cannot start (it exits at once, as one with broken code would), supervised for real
    # by tools/serve.Class's thread, with the back-off shortened fourfold to keep the test short.
    starts: list[tuple[float, int, str, bool]] = []

    def dying_worker(port: int, secret: str, log: Path, append: bool = False) -> subprocess.Popen[bytes]:
        starts.append((time.monotonic(), port, secret, append))
        with open(log, "ab") as fh:
            fh.write(b"Traceback (most recent call last): boom\n")
        return subprocess.Popen([sys.executable, "-c", "import sys; sys.exit(3)"])

    monkeypatch.setattr(serve, "start_worker", dying_worker)
    monkeypatch.setattr(serve, "restart_delay", lambda quick: restart_delay(quick) / 4)
    c = serve.Class(1, 0, log_dir=tmp_path)
    c.worker_ports, c._secret, c._t0 = [41234], "s3cret", time.monotonic()
    c.procs = [dying_worker(41234, "s3cret", tmp_path / "worker1.log")]
    c._supervisor = threading.Thread(target=c._supervise, daemon=True)
    c._supervisor.start()
    try:
        deadline = time.monotonic() + 30
        while len(starts) < 4 and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        c.stop()
    assert len(starts) >= 4, starts
    assert all(port == 41234 and secret == "s3cret" for _, port, secret, _ in starts)  # same port, same secret
    assert [append for *_, append in starts[1:]] == [True] * (len(starts) - 1)  # the log of each death is kept
    gaps = [b[0] - a[0] for a, b in itertools.pairwise(starts)]
    # Each wait at least the (shortened) back-off: 0 after the first death, then 0.5, 1 s, … never a tight loop.
    assert gaps[1] >= restart_delay(2) / 4 and gaps[2] >= restart_delay(3) / 4, gaps
    assert [k for k, _, code in c.restarts] == [1] * len(c.restarts) and {code for *_, code in c.restarts} == {3}
    said = (tmp_path / "supervisor.log").read_text()
    assert "worker w1 keeps dying" in said and "boom" in said  # reported, with the end of its log


def test_compose_restarts_every_container_with_dockers_own_policy():
    for name, service in SERVICES.items():
        assert service.get("restart") in ("unless-stopped", "always", "on-failure"), name
    # The Dockerfile's health check reports a hung worker (Docker does not restart it for that; HAProxy's
    # own check, above, keeps learners away from it).
    assert instructions("HEALTHCHECK")


# --- compose: its services are the balancer's servers ----------------------------------------------------


def test_compose_app_services_are_the_balancer_servers_in_order():
    assert tuple(APP_SERVICES) == deploy_config.APPS
    assert haproxy_servers(CFG) == [(f"w{k}", a, deploy_config.PORT) for k, a in enumerate(APP_SERVICES, start=1)]
    assert set(SERVICES) == {*APP_SERVICES, "balancer"}


def test_compose_apps_build_this_repository_with_the_dockerfile():
    for name in APP_SERVICES:
        build = SERVICES[name]["build"]
        assert (DEPLOY / build["context"]).resolve() == ROOT, name
        assert (ROOT / build["dockerfile"]).resolve() == DEPLOY / "Dockerfile", name
        assert SERVICES[name]["pull_policy"] == "build", name


def test_only_the_balancer_publishes_a_port_and_it_is_the_configured_one():
    for name, service in SERVICES.items():
        assert "network_mode" not in service, name
        if name != "balancer":
            assert "ports" not in service, f"{name} publishes a port: only the balancer may"
    (published,) = SERVICES["balancer"]["ports"]
    assert published["host_ip"] == "${ATLAS_ADDRESS:-127.0.0.1}"  # loopback unless asked, as ./run-app
    assert published["published"] == "${ATLAS_PORT:-8501}"
    (bind,) = re.findall(r"^\s+bind (\S+):(\d+)$", CFG, re.M)
    assert bind[0] == "0.0.0.0"  # inside the balancer's container; compose decides what the host exposes
    assert published["target"] == int(bind[1]) == deploy_config.PORT


def test_balancer_mounts_the_committed_config_and_waits_for_every_app():
    balancer = SERVICES["balancer"]
    assert balancer["image"].startswith("haproxy:")
    mounts = [str(v).split(":") for v in balancer["volumes"]]
    assert ["./haproxy.cfg", "/usr/local/etc/haproxy/haproxy.cfg", "ro"] in mounts
    assert (DEPLOY / "haproxy.cfg").is_file()
    assert sorted(balancer["depends_on"]) == sorted(APP_SERVICES)


def test_every_app_gets_the_same_required_cookie_secret_from_the_environment():
    values = {name: SERVICES[name]["environment"][SECRET_VAR] for name in APP_SERVICES}
    assert len(set(values.values())) == 1, values
    (value,) = set(values.values())
    # ${VAR:?message}: compose refuses to start without it; no default, so no secret in the file.
    assert re.fullmatch(r"\$\{COOKIE_SECRET:\?[^$}]+\}", value), value
    # XSRF protection is on in every app container (the image's command; no override here).
    assert all("command" not in SERVICES[name] and "entrypoint" not in SERVICES[name] for name in APP_SERVICES)
    assert "--server.enableXsrfProtection" in json.loads(instructions("CMD")[-1])


# --- the Dockerfile ---------------------------------------------------------------------------------------


def test_dockerfile_base_is_debian_python_311():
    assert instructions("FROM") == ["python:3.11-slim-bookworm"]


def test_dockerfile_installs_the_pinned_cpu_torch_of_requirements_txt():
    (pin,) = re.findall(r"^torch==(\S+)$", (ROOT / "requirements.txt").read_text(encoding="utf-8"), re.M)
    (install,) = [r for r in instructions("RUN") if "pip install" in r]
    assert "-r requirements.txt" in install and "--extra-index-url https://download.pytorch.org/whl/cpu" in install
    # The build fails unless pip took exactly that torch, as the CPU wheel (not the CUDA one).
    assert f"version('torch') == '{pin}+cpu'" in install
    assert any(c.split() == ["requirements.txt", "./"] for c in instructions("COPY"))


def test_dockerfile_runs_the_workers_streamlit_command_as_a_non_root_user():
    users = instructions("USER")
    assert users and users[-1] not in ("root", "0"), users
    words = [w for w, _ in dockerfile()]
    assert words.index("USER") < words.index("CMD")
    assert json.loads(instructions("CMD")[-1]) == ["python", *streamlit_args("0.0.0.0", deploy_config.PORT)]
    assert instructions("EXPOSE") == [str(deploy_config.PORT)]


def test_dockerfile_health_check_asks_streamlit_on_its_port():
    (check,) = instructions("HEALTHCHECK")
    assert f"http://127.0.0.1:{deploy_config.PORT}/_stcore/health" in check


def test_no_cookie_secret_in_the_image():
    # No instruction names a secret (comments aside): no ENV, ARG or file carries one into a layer.
    for word, args in dockerfile():
        assert "SECRET" not in args.upper(), (word, args)
    # Nor in any file it copies (.streamlit/config.toml would be the place): Streamlit would use it.
    for src in copied_sources():
        files = [src] if src.is_file() else [p for p in src.rglob("*") if p.suffix in (".toml", ".env", ".py")]
        for f in files:
            assert "cookieSecret" not in f.read_text(encoding="utf-8", errors="replace"), f


def copied_sources() -> list[Path]:
    out = []
    for args in instructions("COPY"):
        *sources, _dest = args.split()
        out += [ROOT / s for s in sources if not s.startswith("--")]
    return out


def dockerignore() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines()
    return [x.strip().rstrip("/") for x in lines if x.strip() and not x.startswith("#")]


def ignored(path: str) -> bool:
    parts = Path(path).parts
    prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))]
    return any(fnmatch.fnmatch(p, pat) for pat in dockerignore() for p in prefixes)


def test_every_file_the_dockerfile_copies_exists_and_is_in_the_build_context():
    sources = copied_sources()
    assert len(sources) > 5
    for src in sources:
        assert src.exists(), f"COPY {src.relative_to(ROOT)}: no such file"
        assert not ignored(str(src.relative_to(ROOT))), f"{src.relative_to(ROOT)} is excluded by .dockerignore"
    # Every package app.py runs is copied (a new top-level package must be added to the Dockerfile).
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "tools"}
    assert packages <= {s.name for s in sources}, packages - {s.name for s in sources}


def test_build_context_leaves_out_the_heavy_and_the_secret():
    for path in (".venv", ".git", "tests", "bench_results", "deploy/.env", ".streamlit/secrets.toml"):
        assert ignored(path), path
    assert ignored("encoders/__pycache__")
    assert "deploy/.env" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()
