"""Lessons: guided walks through the chapters, as data (ui/lessons.py shows them).

Each step names a chapter (a key of ui.chapters.CHAPTERS), an optional sentence and seed, and widget
values (widget key → a value valid for that widget). A lesson's title and each step's instruction
are words: they live in the catalogue as classroom.lessons.<key>.title and .step1, .step2, …
(one sentence each: what to do and what to look at).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from explain.i18n import t


@dataclass(frozen=True)
class Step:
    chapter: str  # a key of ui.chapters.CHAPTERS
    sentence: str | None = None  # None: keep the learner's sentence
    seed: int | None = None
    controls: Mapping[str, Any] = field(default_factory=dict)  # widget key → value

    def __post_init__(self) -> None:
        object.__setattr__(self, "controls", dict(self.controls))  # a copy: picklable, unlike a mappingproxy


@dataclass(frozen=True)
class Lesson:
    key: str
    steps: tuple[Step, ...]

    def title(self, lang: str | None = None) -> str:
        return t(f"classroom.lessons.{self.key}.title", lang)

    def instruction(self, k: int, lang: str | None = None) -> str:
        return t(f"classroom.lessons.{self.key}.step{k + 1}", lang)


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "why-relative",
        (
            Step("why-order", sentence="dog bites man", controls={"with_pe": False}),
            Step("why-order", controls={"with_pe": True}),
            Step("trouble", controls={"trouble_prefix": "Well,"}),
            Step("shaw", sentence="The cat sat on the mat. The dog sat on the log.", controls={"shaw_k": 4}),
            Step("t5", controls={"t5_buckets": 32, "t5_max_distance": 128, "t5_causal": False}),
            Step("rope", controls={"rope_shift": 1000, "rope_size": 24}),
        ),
    ),
    Lesson(
        "extrapolation",
        (
            Step("trouble", controls={"trouble_l_train": 32, "trouble_l_test": 128}),
            Step(
                "learned",
                sentence="A longer sentence than the table has rows for, so the last words fall off the end.",
                controls={"max_len": 8},
            ),
            Step("alibi", controls={"alibi_heads": 8, "alibi_train_len": 32, "alibi_test_len": 512}),
            Step("rope-scaling", controls={"rs_d": 128, "rs_L": 4096, "rs_s": 4.0}),
        ),
    ),
    Lesson(
        "rope-from-scratch",
        (
            Step("sinusoidal", controls={"base": 10_000, "p": 5, "delta": 3}),
            Step("rope", controls={"rope_d": 8, "rope_m": 2, "rope_n": 6}),
            Step("rope", controls={"rope_size": 32, "rope_shift": 1_000_000}),
            Step("rope", controls={"rope_decay_d": 128, "rope_decay_dist": 4096}),
            Step("derivations", controls={"derivation": "rope-matrix-2d", "derivations_all": False}),
        ),
    ),
    Lesson(
        "what-cope-counts",
        (
            Step(
                "cope",
                sentence="Alice met Bob. Bob waved at Alice. Then Alice smiled and Alice left.",
                controls={"cope_unit": "sentence ends", "cope_all_open": False, "cope_sharpness": 10.0},
            ),
            Step("cope", controls={"cope_unit": "a word you pick", "cope_word": "alice", "cope_all_open": False}),
            Step("cope", controls={"cope_all_open": True}),
            Step("cope", controls={"cope_all_open": False, "cope_unit": "sentence ends", "cope_sharpness": 0.0}),
        ),
    ),
)
BY_KEY: Mapping[str, Lesson] = MappingProxyType({lesson.key: lesson for lesson in LESSONS})
