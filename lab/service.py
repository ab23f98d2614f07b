"""Live training for the lab page: one worker thread, a FIFO queue, a bounded cache of results.

The page holds one TrainingService per server (st.cache_resource), shared by every session, so a
2-core machine never trains two models at once. A session submits a job, polls `status`, and may
stop its own job. Pure Python and torch: no Streamlit here, so the tests drive it directly.

Failure modes it guards against:
- a training that raises: the job is marked failed with its message, the worker carries on;
- a session that goes away: each poll refreshes the job's `seen` time; a queued job nobody has
  polled for `abandon_after` seconds is dropped when it reaches the front, and a running one is
  stopped; every job also has a wall-clock limit and bounded steps;
- a full queue: `submit` refuses with a clear message instead of growing without bound.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from lab.train import Progress, TrainConfig, train

STEP_RANGE = (20, 1000)  # live training: steps a learner may ask for
SEED_RANGE = (0, 999)


class QueueFull(RuntimeError):
    """Too many trainings wait. `.waiting` is how many (pages word the message themselves)."""

    def __init__(self, waiting: int):
        super().__init__(f"{waiting} trainings are already waiting; try again in a minute.")
        self.waiting = waiting


class BadSettings(ValueError):
    """Settings out of bounds. `.code` ("steps" or "seed") and `.lo`, `.hi` let a page word it."""

    def __init__(self, code: str, lo: int, hi: int):
        super().__init__(f"{code} must be between {lo} and {hi}")
        self.code, self.lo, self.hi = code, lo, hi


@dataclass
class Job:
    id: int
    config: TrainConfig
    owner: str  # the submitting session's id: only it may stop the job
    state: str = "queued"  # queued → running → done | stopped | failed | timeout | abandoned
    progress: Progress | None = None
    metrics: dict | None = None
    error: str = ""
    submitted: float = field(default_factory=time.monotonic)
    seen: float = field(default_factory=time.monotonic)
    stop: threading.Event = field(default_factory=threading.Event)
    cached: bool = False  # served from the cache, no training ran

    @property
    def finished(self) -> bool:
        return self.state not in ("queued", "running")


def cache_key(cfg: TrainConfig) -> tuple:
    return (cfg.task, cfg.encoding, cfg.steps, cfg.seed)


class TrainingService:
    def __init__(
        self,
        train_fn: Callable = train,
        max_queue: int = 6,
        max_cache: int = 24,
        time_limit: float = 300.0,
        abandon_after: float = 60.0,
    ):
        self._train = train_fn
        self.max_queue, self.max_cache = max_queue, max_cache
        self.time_limit, self.abandon_after = time_limit, abandon_after
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._queue: deque[Job] = deque()
        self._jobs: dict[int, Job] = {}
        self._cache: OrderedDict[tuple, dict] = OrderedDict()
        self._running: Job | None = None
        self._ids = itertools.count(1)
        self._worker = threading.Thread(target=self._loop, name="lab-trainer", daemon=True)
        self._worker.start()

    # -- what sessions call -------------------------------------------------------------------
    def submit(self, cfg: TrainConfig, owner: str) -> Job:
        """Queue a training (or answer at once from the cache). Raises ValueError on settings out
        of bounds (BadSettings) and QueueFull when too many jobs wait."""
        lo, hi = STEP_RANGE
        if not lo <= cfg.steps <= hi:
            raise BadSettings("steps", lo, hi)
        if not SEED_RANGE[0] <= cfg.seed <= SEED_RANGE[1]:
            raise BadSettings("seed", *SEED_RANGE)
        with self._lock:
            job = Job(next(self._ids), cfg, owner)
            self._jobs[job.id] = job
            hit = self._cache.get(cache_key(cfg))
            if hit is not None:
                self._cache.move_to_end(cache_key(cfg))
                job.state, job.metrics, job.cached = "done", hit, True
                return job
            if len(self._queue) >= self.max_queue:
                del self._jobs[job.id]
                raise QueueFull(len(self._queue))
            self._queue.append(job)
            self._wake.notify()
            return job

    def status(self, job_id: int) -> tuple[Job | None, int]:
        """(the job, how many jobs are ahead of it: 0 when it runs or has finished). Polling a job
        marks it as still wanted."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None:
                return None, 0
            job.seen = time.monotonic()
            if job.state != "queued":
                return job, 0
            ahead = (1 if self._running is not None else 0) + next(
                (k for k, j in enumerate(self._queue) if j.id == job_id), 0
            )
            return job, ahead

    def stop(self, job_id: int, owner: str) -> bool:
        """Stop (or un-queue) a job; only its owner may. True if something was stopped."""
        with self._lock:
            job = self._jobs.get(job_id)
            if job is None or job.owner != owner or job.finished:
                return False
            if job.state == "queued":
                self._queue.remove(job)
                job.state = "stopped"
            job.stop.set()
            return True

    def busy(self) -> bool:
        with self._lock:
            return self._running is not None or bool(self._queue)

    def cached(self, cfg: TrainConfig) -> dict | None:
        with self._lock:
            return self._cache.get(cache_key(cfg))

    # -- the worker ---------------------------------------------------------------------------
    def _next(self) -> Job:
        with self._lock:
            while True:
                while not self._queue:
                    self._wake.wait()
                job = self._queue.popleft()
                if time.monotonic() - job.seen > self.abandon_after:
                    job.state = "abandoned"  # its session stopped polling while it waited
                    continue
                hit = self._cache.get(cache_key(job.config))
                if hit is not None:  # an identical job ahead of it has just filled the cache
                    job.state, job.metrics, job.cached = "done", hit, True
                    continue
                job.state, self._running = "running", job
                return job

    def _loop(self) -> None:
        torch.set_num_threads(1)  # one core for training; the other serves pages
        while True:
            job = self._next()
            start = time.monotonic()
            reason: dict[str, str] = {}

            def callback(p: Progress, job: Job = job, start: float = start, reason: dict[str, str] = reason) -> bool:
                job.progress = p
                now = time.monotonic()
                if job.stop.is_set():
                    reason["state"] = "stopped"
                elif now - start > self.time_limit:
                    reason["state"] = "timeout"
                elif now - job.seen > self.abandon_after:
                    reason["state"] = "abandoned"
                return bool(reason)

            try:
                result = self._train(job.config, callback)
                metrics = result.metrics
                with self._lock:
                    job.metrics = metrics
                    job.state = reason.get("state", "done")
                    if job.state == "done":
                        self._cache[cache_key(job.config)] = metrics
                        while len(self._cache) > self.max_cache:
                            self._cache.popitem(last=False)
            except Exception as exc:
                with self._lock:
                    job.state, job.error = "failed", f"{type(exc).__name__}: {exc}"
            finally:
                with self._lock:
                    self._running = None
                    self._forget_old()

    def _forget_old(self, keep: int = 200) -> None:
        """Bound the job table: drop the oldest finished jobs beyond `keep`."""
        done = [j for j in self._jobs.values() if j.finished]
        for j in sorted(done, key=lambda j: j.submitted)[: max(0, len(done) - keep)]:
            del self._jobs[j.id]
