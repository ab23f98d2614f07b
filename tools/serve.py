"""Serve PE Atlas to a class: several Streamlit worker processes behind HAProxy, one command.

    ./run-app --workers 4            # http://127.0.0.1:8501, four workers (one per core is a good start)
    ./run-app --workers 4 --lan      # the same, reachable from the local network (the class's laptops)

Why: one Streamlit process runs every session's script under one Python interpreter (the GIL), so
thirty learners wait for each other's reruns. N processes use N cores; the balancer spreads new
sessions over them.

Longer than 500 lines: the balancer's configuration, the workers, the spawner they fork from and the
supervisor that restarts them are one command's parts, each needing the others' state (ports, the
cookie secret, the log paths); split, they would pass it back and forth through module globals.

How:
- N `streamlit run app.py` workers, each on its own free port on 127.0.0.1 only (never reachable from
  outside), all with the same cookie secret, so Streamlit's XSRF protection (on) accepts a token
  whichever worker signed it.
- HAProxy (Debian's package) in front, on 127.0.0.1:PORT or, with --lan, on every interface. New
  sessions go to the least busy worker; a cookie (PEATLAS) pins a browser to its worker for the page,
  its websocket and every rerun, so a session's state never moves (sessions never see each other:
  each lives in one worker's memory). HAProxy checks each worker's /_stcore/health every second and
  stops sending new learners to one that does not answer (two misses), and takes it back once it
  answers again (two answers); a request pinned to a dead worker goes to a live one (option
  redispatch), so a learner whose worker died reconnects at once (and ui/presenter.py's frame script
  redraws their page from the address and their controls).
- Workers forked from one spawner process that imported the app once (see Spawner below; in `ps` they
  show the spawner's command line), so a worker starts in about a second.
- Supervised workers: a worker that exits (crash, out of memory, kill) is started again on its same
  port with the same cookie secret, and the restart is logged (stderr and supervisor.log in the log
  directory). One that keeps dying within a minute of its start is restarted after 2, 4, 8, … up to
  60 s and reported with the end of its log, never in a tight loop. The container recipe does the same
  with Docker's own restart policy (deploy/compose.yaml). HAProxy reports every worker it marks down or
  up (haproxy.log).
- The same layout scales out: one worker per container, workers on several machines, behind the same
  balancer configuration (deploy/: Dockerfile, compose.yaml, and haproxy.cfg written by
  tools/deploy_config.py with haproxy_config below; README, "Serving a class").

Stop with Ctrl+C (or SIGTERM): the balancer and every worker are stopped by their PIDs.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import queue
import re
import secrets
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_WORKERS = 16
HEALTH_TIMEOUT = 90.0  # s: a cold worker imports torch and plotly before it answers
STABLE_AFTER = 60.0  # s: a worker that dies sooner than this after its start died "quickly"
MAX_RESTART_DELAY = 60.0  # s: the longest wait before restarting a worker that keeps dying
KEEPS_DYING = 3  # quick deaths in a row after which a worker is reported as one that keeps dying


def restart_delay(quick_deaths: int) -> float:
    """Seconds to wait before starting a worker again, after `quick_deaths` deaths in a row each within
    STABLE_AFTER of its start: none for the first (a worker killed once comes back at once), then 2, 4,
    8, … capped at MAX_RESTART_DELAY (a worker that cannot start is not restarted in a tight loop)."""
    if quick_deaths <= 1:
        return 0.0
    return min(MAX_RESTART_DELAY, 2.0 ** (quick_deaths - 1))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def haproxy_config(bind: str, port: int, servers: Sequence[tuple[str, int]], dns: bool = False) -> str:
    """The balancer's configuration: HTTP and websockets to the workers, sticky by cookie.

    servers: each worker's (host, port), named w1, w2, … in order (the PEATLAS cookie holds that name).
    dns: workers are named by host name, resolved while HAProxy runs by the nameservers of
    /etc/resolv.conf (in a compose network that is Docker's embedded DNS, 127.0.0.11). A name that does
    not resolve yet then starts its server without an address instead of failing the start
    (init-addr libc,none), and a container restarted with a new address is found again; without it,
    names are resolved once, at start. ./run-app's workers are 127.0.0.1 ports: no dns.
    """
    lines = [f"    server w{k} {host}:{p} check cookie w{k}" for k, (host, p) in enumerate(servers, start=1)]
    resolvers = ""
    if dns:
        resolvers = "\nresolvers dns\n    parse-resolv-conf\n    hold valid 10s\n"
        lines.insert(0, "    default-server init-addr libc,none resolvers dns")
    backends = "\n".join(lines)
    return f"""global
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
{resolvers}
frontend atlas
    bind {bind}:{port}
    default_backend workers

backend workers
    balance leastconn
    cookie PEATLAS insert indirect nocache httponly
    option httpchk GET /_stcore/health
    http-check expect status 200
    default-server inter 1s fall 2 rise 2   # a dead worker is out within ~2 s, a restarted one back ~2 s after healthy
{backends}
"""


def streamlit_args(address: str, port: int) -> list[str]:
    """How every worker runs the app: ./run-app's workers on 127.0.0.1, deploy/Dockerfile's on 0.0.0.0
    inside its container (tests/test_deploy.py checks the Dockerfile runs exactly these)."""
    return [
        "-m", "serve_app", "run", "app.py",  # streamlit, its heavy imports done first (serve_app.py)
        "--server.headless", "true",
        "--server.address", address,
        "--server.port", str(port),
        "--server.enableXsrfProtection", "true",
        "--browser.gatherUsageStats", "false",
        "--server.fileWatcherType", "none",
    ]  # fmt: skip


def start_worker(port: int, cookie_secret: str, log: Path, append: bool = False) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, *streamlit_args("127.0.0.1", port)]
    # Streamlit refuses the secret as a flag (it would show in `ps`); the environment is allowed.
    env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": cookie_secret}
    with open(log, "ab" if append else "wb") as fh:  # a restart keeps the log of the death before it
        return subprocess.Popen(cmd, cwd=ROOT, stdout=fh, stderr=subprocess.STDOUT, env=env)


# --- the spawner: the app imported once, a worker forked from it in about a second -------------------------
#
# A worker's cold start imports torch, plotly and the app and proves the derivations (serve_app.py) before
# it answers: ~7 s on a quiet 2-core machine, 22 s on one busy with a class or other jobs, and a dead
# worker's learners have moved on while the class runs short. So Class starts one spawner process that does
# all of that once, then forks every worker from it: a forked worker is healthy ~1.3 s after it is asked
# for (measured on that busy machine), and the workers share the spawner's imported pages (copy-on-write;
# serve_app.settle_heap freezes them). The spawner is single-threaded (forking a process with threads is
# unsafe); a forked worker starts its own threads, and torch its own pools, after the fork.
# Protocol, one line each: the supervisor writes "PORT<TAB>LOG<TAB>APPEND"; the spawner writes "ready",
# "started PORT PID" and "exited PID CODE" (it reaps its children). If the spawner dies, Class falls back to
# cold starts (start_worker).


def spawner_loop() -> None:
    """The spawner's main (run as `python -c "from tools.serve import spawner_loop; spawner_loop()"`)."""
    # Ctrl+C in ./run-app's terminal reaches every process of it: the supervisor stops the spawner (by
    # closing its stdin) after the workers, so that their exits are still reported.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve_app = importlib.import_module("serve_app")  # the workers' own start-up (type-checked on its own)
    serve_app.no_delay_for_every_tcp_socket()
    serve_app.preload()
    serve_app.prove_all()
    serve_app.settle_heap()
    serve_app.navigation_app()
    say = sys.stdout

    def report(line: str) -> None:
        say.write(line + "\n")
        say.flush()  # nothing left in the buffer for a fork to inherit

    report("ready")
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.2)
        if readable:
            chunk = os.read(0, 4096)
            if not chunk:
                return  # the supervisor is gone; it stops the workers by their PIDs
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                port, log, append = line.decode().split("\t")
                report(f"started {port} {_fork_worker(int(port), Path(log), append == '1')}")
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            report(f"exited {pid} {os.waitstatus_to_exitcode(status)}")


def _fork_worker(port: int, log: Path, append: bool) -> int:
    pid = os.fork()
    if pid:
        return pid
    code = 1
    try:  # the worker: the log for its output, nothing to read, then Streamlit as serve_app.main runs it
        signal.signal(signal.SIGINT, signal.default_int_handler)
        out = os.open(log, os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else os.O_TRUNC), 0o644)
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(out, 1)
        os.dup2(out, 2)
        sys.argv = ["streamlit", *streamlit_args("127.0.0.1", port)[2:]]  # run app.py --server.port … (no -m)
        importlib.import_module("serve_app").warm_models()  # a thread: only after the fork
        from streamlit.web.cli import main as streamlit_main

        streamlit_main(prog_name="streamlit")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 0
    except BaseException:
        import traceback

        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


class Spawner:
    """The spawner process, seen from the supervisor: forks workers on request, reports their exits."""

    def __init__(self, cookie_secret: str, log: Path):
        env = {**os.environ, "STREAMLIT_SERVER_COOKIE_SECRET": cookie_secret}  # every worker inherits it
        main = spawner_loop.__name__
        cmd = [sys.executable, "-c", f"from tools.serve import {main}; {main}()"]
        with open(log, "wb") as fh:
            self.proc = subprocess.Popen(
                cmd, cwd=ROOT, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=fh
            )
        self.ready = threading.Event()
        self.exits: dict[int, int] = {}  # worker PID → exit code, as the spawner reaps them
        self._started: queue.Queue[int] = queue.Queue()
        threading.Thread(target=self._read, name="pe-atlas-spawner-reader", daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            words = raw.decode(errors="replace").split()
            if words == ["ready"]:
                self.ready.set()
            elif len(words) == 3 and words[0] == "started" and words[2].isdigit():
                self._started.put(int(words[2]))
            elif len(words) == 3 and words[0] == "exited" and words[1].isdigit():
                self.exits[int(words[1])] = int(words[2])

    def alive(self) -> bool:
        return self.proc.poll() is None

    def fork(self, port: int, log: Path, append: bool = False) -> ForkedWorker:
        if not self.ready.wait(HEALTH_TIMEOUT) or not self.alive():
            raise RuntimeError("the spawner never became ready (spawner.log says why)")
        assert self.proc.stdin is not None
        self.proc.stdin.write(f"{port}\t{log}\t{int(append)}\n".encode())
        self.proc.stdin.flush()
        return ForkedWorker(self, self._started.get(timeout=30))

    def stop(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()  # its loop ends
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class ForkedWorker:
    """A worker forked by the spawner, with the part of subprocess.Popen's interface Class uses."""

    def __init__(self, spawner: Spawner, pid: int):
        self.spawner, self.pid = spawner, pid
        self.args = f"worker forked by the spawner (pid {pid})"

    @property
    def returncode(self) -> int | None:
        code = self.spawner.exits.get(self.pid)
        if code is None and not self.spawner.alive():  # nobody reports it any more: ask the kernel
            try:
                os.kill(self.pid, 0)
            except ProcessLookupError:
                return -1
        return code

    def poll(self) -> int | None:
        return self.returncode

    def _signal(self, sig: int) -> None:
        if self.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, sig)

    def terminate(self) -> None:
        self._signal(signal.SIGTERM)

    def kill(self) -> None:
        self._signal(signal.SIGKILL)

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (code := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
            time.sleep(0.05)
        return code


Worker = subprocess.Popen[bytes] | ForkedWorker


def wait_healthy(url: str, procs: Sequence[Worker], timeout: float = HEALTH_TIMEOUT) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            if urllib.request.urlopen(url + "/_stcore/health", timeout=2).read() == b"ok":
                return
        except OSError:
            pass
        if any(p.poll() is not None for p in procs) or time.monotonic() > deadline:
            raise RuntimeError(f"{url} never became healthy")
        time.sleep(0.2)


class Class:
    """A running balancer and its supervised workers (a context manager: stops everything it started).

    Worker k (1…n) is HAProxy's server wk on port worker_ports[k - 1]; a supervisor thread starts it
    again there when it exits (restart_delay), with the same cookie secret; `restarts` records
    (k, seconds since the class started, the exit code) for every restart."""

    def __init__(self, workers: int, port: int, lan: bool = False, log_dir: Path | None = None):
        if not 1 <= workers <= MAX_WORKERS:
            raise ValueError(f"--workers must be 1…{MAX_WORKERS}")
        if shutil.which("haproxy") is None:
            raise RuntimeError("HAProxy is not installed: sudo apt-get install -y haproxy")
        self.n, self.port, self.lan = workers, port, lan
        self.dir = Path(log_dir or tempfile.mkdtemp(prefix="pe-atlas-serve-"))
        self.procs: list[Worker] = []  # the workers, in order, then the balancer
        self.worker_ports: list[int] = []
        self.url = f"http://127.0.0.1:{port}"
        self.restarts: list[tuple[int, float, int | None]] = []
        self._secret = ""
        self._t0 = time.monotonic()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._supervisor: threading.Thread | None = None
        self._spawner: Spawner | None = None

    def __enter__(self) -> Class:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def start(self) -> None:
        self._secret = secrets.token_hex(32)
        self._t0 = time.monotonic()
        self.worker_ports = [free_port() for _ in range(self.n)]
        self._spawner = Spawner(self._secret, self.dir / "spawner.log")
        for k in range(1, self.n + 1):
            self.procs.append(self._start_worker(k))
        for p in self.worker_ports:
            wait_healthy(f"http://127.0.0.1:{p}", self.procs)
        cfg = self.dir / "haproxy.cfg"
        servers = [("127.0.0.1", p) for p in self.worker_ports]
        cfg.write_text(haproxy_config("0.0.0.0" if self.lan else "127.0.0.1", self.port, servers))
        with open(self.dir / "haproxy.log", "wb") as fh:
            balancer = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=fh, stderr=subprocess.STDOUT)
        self.procs.append(balancer)
        wait_healthy(self.url, self.procs, timeout=15)
        self._supervisor = threading.Thread(target=self._supervise, name="pe-atlas-supervisor", daemon=True)
        self._supervisor.start()

    def _start_worker(self, k: int, append: bool = False) -> Worker:
        """Worker k on its port: forked by the spawner, or started cold if the spawner is gone."""
        port, log = self.worker_ports[k - 1], self.dir / f"worker{k}.log"
        if self._spawner is not None and self._spawner.alive():
            try:
                return self._spawner.fork(port, log, append)
            except (RuntimeError, OSError, queue.Empty) as e:
                self._say(f"the spawner failed ({e}); starting worker w{k} cold")
        return start_worker(port, self._secret, log, append=append)

    def _say(self, message: str) -> None:
        line = f"{time.strftime('%H:%M:%S')} {message}"
        print(line, file=sys.stderr, flush=True)
        with open(self.dir / "supervisor.log", "a", encoding="utf-8") as fh:
            fh.write(line + "\n")

    def _supervise(self) -> None:
        """Every half second: start again each worker that has exited, after restart_delay."""
        started = [self._t0] * self.n  # when each worker's current process was started
        quick = [0] * self.n  # each worker's deaths in a row, each within STABLE_AFTER of its start
        due: list[float | None] = [None] * self.n  # when a dead worker is to be started again
        while not self._stopping.wait(0.5):
            with self._lock:
                if self._stopping.is_set():
                    return
                now = time.monotonic()
                for i in range(self.n):
                    proc, k = self.procs[i], i + 1
                    if due[i] is None and proc.poll() is not None:
                        quick[i] = quick[i] + 1 if now - started[i] < STABLE_AFTER else 1
                        delay = restart_delay(quick[i])
                        due[i] = now + delay
                        self._say(
                            f"worker w{k} (pid {proc.pid}, port {self.worker_ports[i]}) exited with code "
                            f"{proc.returncode} after {now - started[i]:.0f} s; "
                            + (f"restarting in {delay:.0f} s" if delay else "restarting it now")
                        )
                        if quick[i] >= KEEPS_DYING:
                            log = self.dir / f"worker{k}.log"
                            tail = log.read_text(errors="replace").splitlines()[-15:] if log.exists() else []
                            self._say(
                                f"worker w{k} keeps dying ({quick[i]} times in a row, each within "
                                f"{STABLE_AFTER:.0f} s of its start); the class runs on the others. "
                                f"End of {log}:\n    " + "\n    ".join(tail)
                            )
                    due_at = due[i]
                    if due_at is not None and now >= due_at:
                        new = self._start_worker(k, append=True)
                        self.restarts.append((k, round(now - self._t0, 1), proc.returncode))
                        self.procs[i], started[i], due[i] = new, now, None
                        self._say(f"worker w{k} started again (pid {new.pid}, port {self.worker_ports[i]})")

    def stopping(self) -> None:
        """No more restarts: the class is being stopped."""
        self._stopping.set()

    def stop(self) -> None:
        self._stopping.set()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(timeout=5)
        with self._lock:
            for p in reversed(self.procs):  # the balancer first, then the workers
                if p.poll() is None:
                    p.terminate()
            for p in self.procs:
                try:
                    p.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    p.kill()
            self.procs = []
            if self._spawner is not None:  # last: it reports its workers' exits until they are gone
                self._spawner.stop()
                self._spawner = None

    def worker_pids(self) -> list[int]:
        """The workers' current process ids, w1 first (a restarted worker has a new one)."""
        with self._lock:
            return [p.pid for p in self.procs[: self.n]]

    def balancer_alive(self) -> bool:
        with self._lock:
            return len(self.procs) > self.n and self.procs[self.n].poll() is None

    def marked_down(self) -> list[int]:
        """The workers (1…n) HAProxy has marked down and not up again (its log: haproxy.log)."""
        log = (self.dir / "haproxy.log").read_text(errors="replace") if (self.dir / "haproxy.log").exists() else ""
        last = {int(k): state for k, state in re.findall(r"workers/w(\d+) is (UP|DOWN)", log)}
        return sorted(k for k, state in last.items() if state == "DOWN")

    def full_strength(self) -> bool:
        """Every worker running, answering its health check, and in the balancer's rotation. (A worker
        forked again within a second or two may never be marked down at all.)"""
        return self.healthy_workers() == list(range(1, self.n + 1)) and not self.marked_down()

    def healthy_workers(self) -> list[int]:
        """The workers (1…n) that are running and answer their health check now."""
        with self._lock:
            alive = [k for k, p in enumerate(self.procs[: self.n], start=1) if p.poll() is None]
        out = []
        for k in alive:
            try:
                url = f"http://127.0.0.1:{self.worker_ports[k - 1]}/_stcore/health"
                if urllib.request.urlopen(url, timeout=2).read() == b"ok":
                    out.append(k)
            except OSError:
                pass
        return out


def lan_addresses() -> list[str]:
    """This machine's addresses a class could reach (best effort, for the start-up message)."""
    try:
        out = subprocess.run(["hostname", "-I"], capture_output=True, text=True, timeout=5, check=False).stdout
    except OSError:
        return []
    return [a for a in out.split() if ":" not in a]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Serve PE Atlas with several workers behind HAProxy.")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2, help=f"1–{MAX_WORKERS}")
    parser.add_argument("--port", type=int, default=8501)
    parser.add_argument("--lan", action="store_true", help="listen on every interface (a class on the local network)")
    args = parser.parse_args(argv)
    with Class(args.workers, args.port, args.lan) as c:
        where = [c.url] + ([f"http://{a}:{args.port}" for a in lan_addresses()] if args.lan else [])
        print(f"PE Atlas: {args.workers} workers behind HAProxy at " + ", ".join(where), flush=True)
        print(f"logs in {c.dir}; Ctrl+C stops everything", flush=True)
        stop = {"now": False}

        def handle(signum: int, frame: object) -> None:
            stop["now"] = True
            c.stopping()  # Ctrl+C reaches the workers too: their exits now are no reason to restart them

        signal.signal(signal.SIGTERM, handle)
        signal.signal(signal.SIGINT, handle)
        while not stop["now"] and c.balancer_alive():  # the supervisor restarts workers that exit
            time.sleep(0.5)
        if not stop["now"]:
            print("the balancer (haproxy) ended; stopping every worker (haproxy.log says why)", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
