"""Lessons: guided walks through the chapters, as data (ui/lessons.py shows them).

Each step names a chapter (a key of ui.chapters.CHAPTERS) and the section of its page the step talks
about (the name of the page's section function: ui/section.py marks its box, and the step's page
scrolls to it and highlights it), an optional sentence and seed, widget values (widget key → a
value valid for that widget) and, in a timed lesson, its minutes. A lesson's title, each step's
instruction and what to do after its last step are words: they live in the catalogue as
classroom.lessons.<key>.title, .step1, .step2, … (one sentence each: what to do and what to look
at) and .next. In an instruction, “quotes” hold a word the
page shows and *italics* name a control or button by its label; tests/test_lessons_ko.py renders each
step in Korean and finds every one of them on the page.

A value that is words (a sentence, a typed prefix, a word to count) differs by language: it is a
ByLang, and a step sets the learner's language's own, so that the Korean instruction can name
“음,” and “나는 CV를 좋아해” while the English one names “Well,” and “I like CV”.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from explain.chapters.trouble import EXAMPLES as TROUBLE_EXAMPLES
from explain.i18n import LANGS, t, valid


@dataclass(frozen=True)
class ByLang:
    """One value per language we ship."""

    values: Mapping[str, Any]

    def __post_init__(self) -> None:
        if set(self.values) != set(LANGS):
            raise ValueError(f"a ByLang needs a value for each of {LANGS}, got {sorted(self.values)}")
        object.__setattr__(self, "values", dict(self.values))  # a copy: picklable

    def get(self, lang: str) -> Any:
        return self.values[valid(lang)]


def _in(value: Any, lang: str) -> Any:
    return value.get(lang) if isinstance(value, ByLang) else value


def _default_sentence() -> ByLang:
    return ByLang({lang: t("common.sidebar.default_sentence", lang) for lang in LANGS})


@dataclass(frozen=True)
class Step:
    chapter: str  # a key of ui.chapters.CHAPTERS
    sentence: str | ByLang | None = None  # None: keep the learner's sentence
    seed: int | None = None
    controls: Mapping[str, Any] = field(default_factory=dict)  # widget key → value (or a ByLang of values)
    # The section the step talks about: a `page.section` function's name on the chapter's page
    # (tests/test_lesson_sections.py finds it there).
    section: str = ""
    minutes: int | None = None  # a timed lesson's minutes for this step

    def __post_init__(self) -> None:
        object.__setattr__(self, "controls", dict(self.controls))  # a copy: picklable, unlike a mappingproxy

    def sentence_in(self, lang: str) -> str | None:
        """The sentence this step loads for a learner reading `lang` (None: keep theirs)."""
        value: str | None = _in(self.sentence, lang)
        return value

    def controls_in(self, lang: str) -> dict[str, Any]:
        """The widget values this step sets for a learner reading `lang`."""
        return {key: _in(value, lang) for key, value in self.controls.items()}


@dataclass(frozen=True)
class Lesson:
    key: str
    steps: tuple[Step, ...]

    def title(self, lang: str | None = None) -> str:
        return t(f"classroom.lessons.{self.key}.title", lang)

    def instruction(self, k: int, lang: str | None = None) -> str:
        return t(f"classroom.lessons.{self.key}.step{k + 1}", lang)

    def what_next(self, lang: str | None = None) -> str:
        """What to do after the last step."""
        return t(f"classroom.lessons.{self.key}.next", lang)

    @property
    def minutes(self) -> int | None:
        """A timed lesson's length (None for an untimed one)."""
        timed = [step.minutes for step in self.steps if step.minutes is not None]
        return sum(timed) if timed else None


LESSONS: tuple[Lesson, ...] = (
    Lesson(
        "why-relative",
        (
            Step(
                "why-order",
                sentence=ByLang({"en": "dog bites man", "ko": "집 앞 가게"}),
                controls={"with_pe": False},
                section="maps_section",
            ),
            Step("why-order", controls={"with_pe": True}, section="maps_section"),
            Step(
                "trouble",
                controls={
                    "trouble_base": "classic",  # the chapter's own example, which the instruction quotes
                    "trouble_prefix": ByLang({lang: TROUBLE_EXAMPLES[lang].prefix for lang in LANGS}),
                },
                section="shift_views_section",
            ),
            Step("shaw", sentence=_default_sentence(), controls={"shaw_k": 4}, section="index_map_section"),
            Step(
                "t5",
                controls={"t5_buckets": 32, "t5_max_distance": 128, "t5_causal": False},
                section="staircase_section",
            ),
            Step("rope", controls={"rope_shift": 1000, "rope_size": 24}, section="identity_part"),
        ),
    ),
    Lesson(
        "extrapolation",
        (
            Step("trouble", controls={"trouble_l_train": 32, "trouble_l_test": 128}, section="length_section"),
            Step(
                "learned",
                sentence=ByLang(
                    {
                        "en": "A longer sentence than the table has rows for, so the last words fall off the end.",
                        "ko": (
                            "이 문장은 표의 행 수보다 길어서 마지막 몇 단어는 표 끝을 넘어 아무 위치도 받지 못합니다."
                        ),
                    }
                ),
                controls={"max_len": 8},
                section="toy_section",
            ),
            Step(
                "alibi",
                controls={"alibi_heads": 8, "alibi_train_len": 32, "alibi_test_len": 512},
                section="extrapolation_section",
            ),
            Step("rope-scaling", controls={"rs_d": 128, "rs_L": 4096, "rs_s": 4.0}, section="angles_section"),
        ),
    ),
    Lesson(
        "rope-from-scratch",
        (
            Step("sinusoidal", controls={"base": 10_000, "p": 5, "delta": 3}, section="shift_section"),
            Step("rope", controls={"rope_d": 8, "rope_m": 2, "rope_n": 6}, section="circles_part"),
            Step("rope", controls={"rope_size": 32, "rope_shift": 1_000_000}, section="identity_part"),
            Step("rope", controls={"rope_decay_d": 128, "rope_decay_dist": 4096}, section="decay_section"),
            Step(
                "derivations",
                controls={"derivation": "rope-matrix-2d", "derivations_all": False},
                section="identities_part",
            ),
        ),
    ),
    Lesson(
        "what-cope-counts",
        (
            Step(
                "cope",
                sentence=ByLang(
                    {
                        "en": "Alice met Bob. Bob waved at Alice. Then Alice smiled and Alice left.",
                        "ko": (
                            "민수가 지수를 만났다. 지수가 민수에게 손을 흔들었다. 그리고 민수가 웃었고 민수가 떠났다."
                        ),
                    }
                ),
                controls={"cope_unit": "sentence ends", "cope_all_open": False, "cope_sharpness": 10.0},
                section="positions_section",
            ),
            Step(
                "cope",
                controls={
                    "cope_unit": "a word you pick",
                    "cope_word": ByLang({"en": "alice", "ko": "민수가"}),
                    "cope_all_open": False,
                },
                section="gates_section",
            ),
            Step("cope", controls={"cope_all_open": True}, section="positions_section"),
            Step(
                "cope",
                controls={"cope_all_open": False, "cope_unit": "sentence ends", "cope_sharpness": 0.0},
                section="gates_section",
            ),
        ),
    ),
    # The core path in one class of 50 minutes, ending on the strongest evidence: trained models
    # reading real text at 8× their training length.
    Lesson(
        "lecture",
        (
            Step(
                "why-order",
                sentence=ByLang({"en": "dog bites man", "ko": "집 앞 가게"}),
                controls={"with_pe": False},
                section="maps_section",
                minutes=4,
            ),
            Step("why-order", controls={"with_pe": True}, section="maps_section", minutes=3),
            Step(
                "sinusoidal",
                sentence=_default_sentence(),
                controls={"base": 10_000, "p": 5, "delta": 3},
                section="shift_section",
                minutes=5,
            ),
            Step(
                "trouble",
                controls={
                    "trouble_base": "classic",
                    "trouble_prefix": ByLang({lang: TROUBLE_EXAMPLES[lang].prefix for lang in LANGS}),
                },
                section="shift_views_section",
                minutes=5,
            ),
            Step(
                "t5",
                controls={"t5_buckets": 32, "t5_max_distance": 128, "t5_causal": False},
                section="staircase_section",
                minutes=4,
            ),
            Step(
                "rope",
                controls={"rope_d": 16, "rope_m": 2, "rope_n": 6, "rope_move": "both"},
                section="circles_part",
                minutes=6,
            ),
            Step("rope", controls={"rope_size": 24, "rope_shift": 1000}, section="identity_part", minutes=4),
            Step(
                "alibi",
                controls={"alibi_heads": 8, "alibi_train_len": 32, "alibi_test_len": 512},
                section="extrapolation_section",
                minutes=5,
            ),
            Step(
                "rope-scaling", controls={"rs_d": 128, "rs_L": 4096, "rs_s": 4.0}, section="angles_section", minutes=4
            ),
            Step("real-text", controls={"real_text_stretches": True}, section="lengths_section", minutes=10),
        ),
    ),
)
BY_KEY: Mapping[str, Lesson] = MappingProxyType({lesson.key: lesson for lesson in LESSONS})
