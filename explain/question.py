"""A predict-then-reveal question as data: what the widget shows, computed, never typed in.

A chapter builds its question in explain/chapters/<chapter>.py from the same numbers its figure
draws, for the current control values, in the learner's language:

    Question(key="alibi_q", prompt=..., options=(1, 2, 3), labels=("head 1", ...), answer=3,
             explanation=t("alibi.slopes.answer", lang, **facts), facts=facts)

- `options` are language-neutral ids (numbers, short strings); `labels` are what each one reads.
- `answer` is computed, and must be one of `options` (checked on construction).
- `explanation` is a catalogue template filled from `facts` only: every number or name it states is
  in `facts`, so a test can recompute each fact independently (tests/test_questions.py sweeps every
  question over its whole control space and does exactly that).

ui/question.py shows a Question; nothing in the page decides what is right.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Question:
    key: str  # widget-key prefix, unique in the app (e.g. "alibi_q")
    prompt: str  # Markdown, the learner's language
    options: tuple[Hashable, ...]  # language-neutral ids, in the order shown
    labels: tuple[str, ...]  # what each option reads (same order, all different)
    answer: Hashable  # one of options, computed
    explanation: str  # Markdown, a template filled from `facts`
    facts: Mapping[str, Any] = field(default_factory=dict)  # the computed values the explanation states

    def __post_init__(self) -> None:
        options, labels = _checked(self.key, self.options, self.labels)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "labels", labels)
        # A plain dict (a copy): results are cached with st.cache_data, which pickles them, and a
        # read-only mappingproxy cannot be pickled.
        object.__setattr__(self, "facts", dict(self.facts))
        if self.answer not in options:
            raise ValueError(f"{self.key}: the answer {self.answer!r} is not among the options {options!r}")

    def label(self, option: Hashable) -> str:
        """What `option` reads."""
        return self.labels[self.options.index(option)]

    @property
    def answer_label(self) -> str:
        return self.label(self.answer)


@dataclass(frozen=True)
class Prompt:
    """A question before its answer: all the widget shows until Reveal. For a question whose answer
    costs a measurement worth running only once the learner asks for it (SmolLM2's shift test runs
    the model a second time): ui.question.ask_first draws the prompt, and measures on Reveal."""

    key: str
    prompt: str
    options: tuple[Hashable, ...]
    labels: tuple[str, ...]

    def __post_init__(self) -> None:
        options, labels = _checked(self.key, self.options, self.labels)
        object.__setattr__(self, "options", options)
        object.__setattr__(self, "labels", labels)

    def answered(self, answer: Hashable, explanation: str, facts: Mapping[str, Any]) -> Question:
        """The whole question, this prompt with its computed answer."""
        return Question(self.key, self.prompt, self.options, self.labels, answer, explanation, facts)


def _checked(
    key: str, options: tuple[Hashable, ...], labels: tuple[str, ...]
) -> tuple[tuple[Hashable, ...], tuple[str, ...]]:
    options, labels = tuple(options), tuple(labels)
    if len(options) < 2:
        raise ValueError(f"{key}: a question needs at least two options, got {options!r}")
    if len(labels) != len(options):
        raise ValueError(f"{key}: {len(labels)} labels for {len(options)} options")
    if len(set(options)) != len(options):
        raise ValueError(f"{key}: repeated option in {options!r}")
    if len(set(labels)) != len(labels):
        raise ValueError(f"{key}: two options read alike: {labels!r}")
    return options, labels
