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

from collections.abc import Callable
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

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
