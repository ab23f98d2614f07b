"""The Korean glossary (explain/text/ko/glossary.toml) holds: no rejected rendering of a term appears in
the Korean catalogue or prose, and a term that asks for an English gloss has it once per chapter, at
its first use. Only translated terms are glossed: a loanword (헤드, 쿼리) never is, and no gloss sits
inside another parenthesis.

A term with `aligned` is rejected only where the English counterpart (the same catalogue key, the
same prose section) says the English term: 구간 is right for an interval, wrong for a T5 bucket.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

from explain.i18n import TEXT_DIR, catalogue
from explain.prose import _SECTION
from ui.chapters import CHAPTERS

GLOSSARY = TEXT_DIR / "ko" / "glossary.toml"
# Math, code and links are not Korean prose: a term there is a symbol, a file name or a paper title.
# A word in “quotes” is an example or a chapter's name (“절대 위치의 문제점” 장), not the term's use.
_NOT_PROSE = re.compile(
    r"\$\$.*?\$\$|(?<!\\)\$.+?(?<!\\)\$|`[^`]*`|\[[^\]]*\]\([^)]*\)|https?://\S+|“[^”]*”|^# .*$", re.S | re.M
)


@dataclass(frozen=True)
class Term:
    en: str
    ko: str
    rejected: tuple[re.Pattern[str], ...]
    aligned: re.Pattern[str] | None
    gloss: str | None
    loanword: bool = False


def load_glossary(path: Path = GLOSSARY) -> list[Term]:
    with path.open("rb") as f:
        data = tomllib.load(f)
    return [
        Term(
            en=entry["en"],
            ko=entry["ko"],
            rejected=tuple(re.compile(r) for r in entry.get("rejected", [])),
            aligned=re.compile(entry["aligned"]) if "aligned" in entry else None,
            gloss=entry.get("gloss"),
            loanword=entry.get("loanword", False),
        )
        for entry in data["term"]
    ]


def _sections(path: Path) -> dict[str, str]:
    parts = _SECTION.split(path.read_text(encoding="utf-8"))
    return {k: v for k, v in zip(parts[1::2], parts[2::2], strict=False)}


def korean_texts() -> list[tuple[str, str, str]]:
    """(where, Korean text, its English counterpart) for every catalogue value and prose section."""
    en, ko = catalogue("en"), catalogue("ko")
    out = [(key, value, en.get(key, "")) for key, value in ko.items()]
    for path in sorted((TEXT_DIR / "ko").glob("*.md")):
        en_sections = _sections(TEXT_DIR / "en" / path.name)
        out += [(f"{path.name}#{key}", text, en_sections.get(key, "")) for key, text in _sections(path).items()]
    return out


def rejected_variants(terms: list[Term], texts: list[tuple[str, str, str]]) -> list[str]:
    found = []
    for where, text, english in texts:
        for term in terms:
            if term.aligned is not None and not term.aligned.search(english):
                continue
            for pattern in term.rejected:
                for m in pattern.finditer(text):
                    found.append(f"{where}: “{m.group()}” — write {term.ko} ({term.en})")
    return found


def gloss_problems(terms: list[Term], page: str, text: str) -> list[str]:
    """A chapter's prose: each glossed term it uses carries its gloss at its first use, and only there."""
    text = _NOT_PROSE.sub(" ", text)
    bad = []
    for term in terms:
        if term.gloss is None:
            continue
        found = re.search(rf"(?<![가-힣]){re.escape(term.ko)}", text)  # the word, not the end of another (각주파수)
        if found is None:
            continue
        first = found.start()
        gloss = r"\s+".join(map(re.escape, term.gloss.split()))  # a gloss may break across lines
        glossed = re.compile(rf"{re.escape(term.ko)}\**\s*\([^()]*\b{gloss}", re.I)
        if not glossed.match(text, first):
            bad.append(f"{page}: first “{term.ko}” lacks “({term.gloss})”: …{text[first : first + 40]!r}")
        count = len(re.findall(rf"\([^()]*\b{gloss}", text, re.I))
        if count > 1:
            bad.append(f"{page}: “({term.gloss})” glossed {count} times; once, at first use")
    return bad


def test_glossary_is_well_formed():
    terms = load_glossary()
    assert len(terms) >= 20
    assert len({t.en for t in terms}) == len(terms), "a term listed twice"
    for term in terms:
        assert term.rejected, term.en
        for pattern in term.rejected:  # the preferred rendering is never one of its own rejected variants
            assert not pattern.search(term.ko), (term.en, pattern.pattern)
        assert not (term.loanword and term.gloss), f"{term.en}: a loanword is not glossed"


def test_no_rejected_variant_in_korean():
    found = rejected_variants(load_glossary(), korean_texts())
    assert not found, f"{len(found)} rejected renderings:\n" + "\n".join(found[:40])


# A Korean word glossed in English, inside another parenthesis: “(정규 행렬(normal matrix)의 …)”.
_NESTED_GLOSS = re.compile(r"\(([^()]*?[가-힣]\**\([A-Za-z][^()]*\)[^()]*)\)")


def gloss_style_problems(terms: list[Term], texts: list[tuple[str, str, str]]) -> list[str]:
    """A loanword followed by its own English word in parentheses (헤드(head)), and nested glosses."""
    bad = []
    for where, text, _english in texts:
        prose = _NOT_PROSE.sub(" ", text)
        for term in terms:
            if not term.loanword:
                continue
            word = re.split(r"[\s(]", term.en)[0]
            for m in re.finditer(rf"(?<![가-힣]){re.escape(term.ko)}\**\s*\({re.escape(word)}\)", prose, re.I):
                bad.append(f"{where}: “{m.group()}” — a loanword needs no gloss")
        bad += [f"{where}: nested gloss “{m.group()[:60]}”" for m in _NESTED_GLOSS.finditer(prose)]
    return bad


def test_loanwords_are_not_glossed_and_glosses_are_not_nested():
    bad = gloss_style_problems(load_glossary(), korean_texts())
    assert not bad, f"{len(bad)} problems:\n" + "\n".join(bad[:40])


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_first_use_gloss_per_chapter(chapter):
    # A page opens with its title and one-line idea (the catalogue), then its prose: read in that order.
    # Titles (the catalogue's and the prose's "# …") name the chapter; the gloss comes at the first use after them.
    ko = catalogue("ko")
    page = "\n\n".join(
        [
            ko[f"chapters.{chapter.key}.idea"],
            (TEXT_DIR / "ko" / f"{chapter.key}.md").read_text(encoding="utf-8"),
        ]
    )
    bad = gloss_problems(load_glossary(), chapter.key, page)
    assert not bad, "\n".join(bad)


def test_the_checks_catch_what_they_should():
    """The checks themselves: a rejected variant, a variant the alignment excuses, a missing gloss,
    a second gloss."""
    terms = load_glossary()
    texts = [
        ("t5.a", "거리를 구간으로 묶습니다.", "distances go into buckets"),
        ("spline.b", "곡선의 한 구간입니다.", "one segment of the curve"),
        ("x.c", "장난감 층", "toy layer"),
    ]
    found = rejected_variants(terms, texts)
    assert [f.split(":")[0] for f in found] == ["t5.a", "x.c"]
    assert gloss_problems(terms, "p", "먼 거리로 외삽합니다.")  # no gloss
    assert gloss_problems(terms, "p", "외삽(extrapolation)입니다. 다시 외삽(extrapolation)입니다.")  # glossed twice
    assert not gloss_problems(terms, "p", "외삽(extrapolation)입니다. 다시 외삽입니다.")
    assert not gloss_problems(terms, "p", "거리는 버킷으로 묶입니다.")  # a loanword needs no gloss …
    style = gloss_style_problems(
        terms,
        [
            ("a", "헤드(head)마다 쿼리(query)를", ""),  # … and gets none
            ("b", "이전 바이트 헤드(previous-byte head)", ""),  # a glossed phrase is not the loanword's gloss
            ("c", "(정규 행렬(normal matrix)의 정리)", ""),  # nested
            ("d", "정규 행렬(normal matrix)에 대한 정리", ""),
        ],
    )
    assert [f.split(":")[0] for f in style] == ["a", "a", "c"], style
    # The new terms: one rendering each.
    found = rejected_variants(
        terms,
        [
            ("e", "내 문장에서 본 값", "your sentence"),
            ("f", "Shaw 등 2018", "Shaw et al. 2018"),
            ("g", "색 눈금 하나", "one colour scale"),
            ("h", "W를 함께 치환", "permuted together"),
            ("i", "치환으로 들어갑니다", "enters as a substitution"),
            ("j", "트랜스포머스 라이브러리", "the transformers library"),
            ("k", "학습 손실 곡선", "training curves"),
        ],
    )
    assert [f.split(":")[0] for f in found] == ["e", "f", "g", "h", "j", "k"], found
