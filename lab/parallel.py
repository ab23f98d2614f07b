"""Independent runs of a regeneration on every core: one worker process per core, one torch thread each.

Every shipped run is deterministic on one torch thread (its model, its training strings and its test
sets are drawn from its own seeds), so which process trains it does not change a single weight: the
results are the same as one after another, only sooner (tests/test_regenerate_parallel.py checks that
on real runs). Worker processes rather than torch threads, because the lab's models are small: two
threads on one run barely beat one, two runs on two cores take half the time.

`Workers(jobs)` is a context manager (it stops its processes on exit); `workers.run_all(fn, items)`
maps a module-level function over items and returns the results in the order of the items. The
regenerators find it as `args.workers` (`of(args)`); without one they run everything here, in order.
No state lives in this module: the app imports lab/, and a pool belongs to one regeneration.
"""

from __future__ import annotations

import multiprocessing
import os
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

_T = TypeVar("_T")
_R = TypeVar("_R")

# glibc's allocator, for the workers: by default it returns every block over 128 KB to the kernel when
# freed and maps it afresh next time, so a training step's activations cost page faults every step
# (a shipped regeneration spent 893 s of its 5544 s of CPU in the kernel, 249 M minor faults). Keeping
# blocks up to 256 MB in the heap and up to 512 MB of free heap: one CoPE run of 150 steps took 15.8 s
# instead of 20.5 s, with the same weights to the bit (only where memory comes from changes). Read by
# glibc when a process starts, so it reaches the workers through the environment they inherit.
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": str(256 << 20), "MALLOC_TRIM_THRESHOLD_": str(512 << 20)}


def default_jobs() -> int:
    """One job per core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def _init_worker() -> None:
    import torch

    torch.set_num_threads(1)  # what every shipped run is measured and reproduced with


class Workers:
    """`jobs` worker processes, started at the first run_all that needs them (1: run in this process)."""

    def __init__(self, jobs: int) -> None:
        if jobs < 1:
            raise ValueError(f"jobs must be at least 1, not {jobs}")
        self.jobs = jobs
        self._pool: ProcessPoolExecutor | None = None
        self._lock = threading.Lock()  # several regenerators' threads may ask for the pool at once

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _executor(self) -> ProcessPoolExecutor:
        with self._lock:
            if self._pool is None:
                # Workers start on demand (at a later submit too), so the allocator's setting stays in
                # this process's environment, which glibc here read long ago; a value the user set wins.
                for k, v in MALLOC_ENV.items():
                    os.environ.setdefault(k, v)
                # spawn, not fork: a forked child would inherit the parent's torch thread pool state.
                ctx = multiprocessing.get_context("spawn")
                self._pool = ProcessPoolExecutor(self.jobs, mp_context=ctx, initializer=_init_worker)
            return self._pool

    def run_all(self, fn: Callable[[_T], _R], items: Iterable[_T]) -> list[_R]:
        """[fn(x) for x in items], on the worker processes when there are several (fn must be
        picklable: a module-level function). Threads may call it at once; their items share the pool."""
        items = list(items)
        if self.jobs == 1 or not items:
            return [fn(x) for x in items]
        futures = [self._executor().submit(fn, x) for x in items]
        return [f.result() for f in futures]

    def close(self) -> None:
        with self._lock:
            if self._pool is not None:
                self._pool.shutdown()
                self._pool = None


def of(args: Any) -> Workers:
    """The workers a regeneration was given (args.workers), or this process alone."""
    return getattr(args, "workers", None) or Workers(1)
