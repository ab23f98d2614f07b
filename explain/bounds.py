"""Cache bounds, written beside the functions they bound.

A page caches what it calls (ui/cache.py: `cached(ch.heads_view)`), shared by every learner of the
server, so each cache must be bounded: a class types hundreds of sentences. How many entries are
safe depends on how large one result is, which only the function knows, so the bound is declared on
the function:

    @bounded(16)  # one entry: up to 16 heads × 256 × 256 × 3 float32 (~13 MB)
    def heads_view(text: str, seed: int, H: int, causal: bool) -> HeadsView: ...

ui.cache.cached reads it (`bound_of`); a function without one gets DEFAULT_ENTRIES, which suits
small results (a few arrays of a sentence's size). No Streamlit here: explain/ never imports it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

F = TypeVar("F", bound=Callable[..., Any])
K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

DEFAULT_ENTRIES = 64  # small results: a few (h, n, n) float32 arrays of a ≤ 256-token sentence
_ATTRIBUTE = "cache_max_entries"


def bounded(max_entries: int) -> Callable[[F], F]:
    """Mark `fn`'s result as worth at most `max_entries` cached entries."""
    if max_entries < 1:
        raise ValueError(f"a cache holds at least one entry, not {max_entries}")

    def mark(fn: F) -> F:
        setattr(fn, _ATTRIBUTE, max_entries)
        return fn

    return mark


def bound_of(fn: Callable[..., Any], default: int = DEFAULT_ENTRIES) -> int:
    """The bound declared on `fn` (`default` when none is)."""
    return int(getattr(fn, _ATTRIBUTE, default))


class SizeBounded(Generic[K, V]):
    """A process cache bounded by the bytes of what it keeps, not by a count, for results whose size
    varies a hundredfold with the text (a model's forward pass: ~2 MB for a short sentence, ~90 MB at
    256 tokens). Least recently used first out; the newest entry is kept even when it alone is over
    the bound (its caller reads it right after). Thread-safe: a server runs its learners' scripts in
    threads; a value is made outside the lock, so two learners' computations run side by side."""

    def __init__(self, max_bytes: int, size: Callable[[V], int]) -> None:
        self.max_bytes = max_bytes
        self._size = size
        self._kept: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K, make: Callable[[], V]) -> V:
        """The kept value for `key`, or `make()` kept from now on."""
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = make()
        with self._lock:
            self._kept[key] = value
            self._kept.move_to_end(key)
            total = sum(self._size(v) for v in self._kept.values())
            while total > self.max_bytes and len(self._kept) > 1:
                _, dropped = self._kept.popitem(last=False)
                total -= self._size(dropped)
        return value

    def keys(self) -> list[K]:
        """The kept keys, least recently used first."""
        with self._lock:
            return list(self._kept)

    def nbytes(self) -> int:
        """The bytes kept now (by `size`)."""
        with self._lock:
            return sum(self._size(v) for v in self._kept.values())

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
