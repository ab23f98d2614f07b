"""English and Korean: the catalogues agree, every page speaks Korean when asked, and switching the
language keeps what the learner set.

- Both catalogues (explain/text/<lang>/strings/*.toml) have the same keys, no empty value, the same
  {placeholders}; a Korean value that should be words contains Hangul.
- Both prose trees have the same chapters and sections, and every display equation of the English
  prose appears in the Korean one (math is not translated).
- No page holds a hard-coded English phrase (two English words in a string literal).
- Every page rendered in Korean under AppTest shows no English outside math, code, links, quoted
  examples and glosses (tests/i18n_scan.py), also after its predict question is revealed.
- Switching language keeps the sentence, the seed and a page's controls, and the URL carries it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from explain.i18n import LANGS, TEXT_DIR, catalogue, choose, placeholders, sentence_for, t
from explain.prose import _SECTION
from tests.helpers import APP, TIMEOUT, errors
from tests.i18n_scan import KOREAN_SENTENCE, english_words, leaks, open_korean
from ui.chapters import BY_KEY, CHAPTERS

ROOT = Path(__file__).resolve().parents[1]
HANGUL = re.compile(r"[\uac00-\ud7a3]")
TWO_WORDS = re.compile(r"[A-Za-z]{2,}[ ,;:]+[A-Za-z]{2,}")
DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
TEXT_LABEL = re.compile(r"\\text\{([^{}]*)\}")
# \text{…} labels that are names of functions or symbols, the same in every language (like \operatorname).
SYMBOL_LABELS = {"softmax", "Attn", "logit", "train", "slow", "fast", "c2c", "c2p", "p2c", "a", "[BOS]"}


# ------------------------------------------------------------------------------ the catalogues
def test_both_languages_have_the_same_keys():
    en, ko = catalogue("en"), catalogue("ko")
    assert len(en) > 500, "the English catalogue looks unfinished"
    assert sorted(set(en) - set(ko)) == [], "keys missing in Korean"
    assert sorted(set(ko) - set(en)) == [], "keys only in Korean"


@pytest.mark.parametrize("lang", LANGS)
def test_no_value_is_empty_or_not_a_string(lang):
    bad = {k: v for k, v in catalogue(lang).items() if not isinstance(v, str) or not v.strip()}
    assert not bad


def test_placeholders_match():
    en, ko = catalogue("en"), catalogue("ko")
    bad = {
        k: (placeholders(en[k]), placeholders(ko[k]))
        for k in en
        if k in ko and placeholders(en[k]) != placeholders(ko[k])
    }
    assert not bad


def test_korean_values_are_korean():
    """A value that is English words in English is Hangul in Korean (names and symbols may stay)."""
    en, ko = catalogue("en"), catalogue("ko")
    untranslated = {
        k: ko[k] for k in en if TWO_WORDS.search(en[k]) and english_words(en[k]) and not HANGUL.search(ko.get(k, ""))
    }
    assert not untranslated


def test_korean_values_leave_no_english():
    """The catalogue itself, scanned as the page scan would: English only in math, code, glosses."""
    found = {k: english_words(re.sub(r"\{[^{}]*\}", " ", v)) for k, v in catalogue("ko").items()}
    assert not {k: w for k, w in found.items() if w}


# Markdown emphasis next to Hangul: CommonMark closes `**` only if the run is "right-flanking", so
# "**30%**의" (punctuation before the closing run, a letter right after it) shows its asterisks, and
# opens one only if it is "left-flanking", so "값**(value)**" does too. Korean particles attach
# straight to words, so the trap is everywhere. Runs are paired in order, as a writer means them.
def _emphasis_traps(text: str) -> list[str]:
    text = re.sub(r"\$\$.*?\$\$|\$[^$\n]+\$|`[^`]*`", " ", text, flags=re.S)  # no emphasis in math, code
    bad = []
    for line in text.split("\n\n"):  # emphasis never spans paragraphs
        for size in (2, 1):
            runs = [m for m in re.finditer(r"(?<!\*)\*+(?!\*)", line) if len(m.group()) == size]
            for k, m in enumerate(runs):
                before = line[m.start() - 1] if m.start() else " "
                after = line[m.end()] if m.end() < len(line) else " "
                punct_before = not (before.isalnum() or before.isspace())
                if before == "}":  # a {placeholder}: its value ends in punctuation only if formatted as %
                    punct_before = line[: m.start()].rsplit("{", 1)[-1].endswith("%}")
                punct_after = not (after.isalnum() or after.isspace())
                if k % 2 == 1 and punct_before and after.isalnum():  # a closing run that stays open
                    bad.append(line[max(0, m.start() - 12) : m.end() + 12])
                if k % 2 == 0 and before.isalnum() and punct_after:  # an opening run that never opens
                    bad.append(line[max(0, m.start() - 12) : m.end() + 12])
    return bad


def test_korean_emphasis_renders():
    found = {k: _emphasis_traps(v) for k, v in catalogue("ko").items()}
    for path in sorted((TEXT_DIR / "ko").glob("*.md")):
        found[path.name] = _emphasis_traps(path.read_text(encoding="utf-8"))
    assert not {k: v for k, v in found.items() if v}


def test_lookup_fills_placeholders_and_keeps_latex_braces():
    assert (
        t("common.page.cut", "en", found=1234, kept=256) == "Your text has 1,234 tokens; this page draws the first 256."
    )
    assert "1,234" in t("common.page.cut", "ko", found=1234, kept=256)
    with pytest.raises(KeyError, match=r"strings/common\.toml"):
        t("common.no_such_key", "en")


# ------------------------------------------------------------------------------ the prose
def _sections(path: Path) -> dict[str, str]:
    parts = _SECTION.split(path.read_text(encoding="utf-8"))
    return {k: v.strip() for k, v in zip(parts[1::2], parts[2::2], strict=False)}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_prose_has_the_same_sections_and_math(chapter):
    en_path = TEXT_DIR / "en" / f"{chapter.key}.md"
    ko_path = TEXT_DIR / "ko" / f"{chapter.key}.md"
    assert ko_path.exists(), f"no Korean prose for {chapter.key}"
    en, ko = _sections(en_path), _sections(ko_path)
    assert list(en) == list(ko)
    for key in en:
        assert HANGUL.search(ko[key]), f"{chapter.key}/{key} is not Korean"
        # Labels inside \text{…} are words and are translated (KaTeX renders Hangul); the math around them is not.
        norm = lambda m: re.sub(r"\s+", "", TEXT_LABEL.sub(r"\\text{}", m))  # noqa: E731
        missing = [
            m for m in DISPLAY_MATH.findall(en[key]) if norm(m) not in {norm(x) for x in DISPLAY_MATH.findall(ko[key])}
        ]
        assert not missing, f"{chapter.key}/{key}: display math changed or missing in Korean: {missing[:2]}"
        assert not english_words(ko[key]), (chapter.key, key, sorted(set(english_words(ko[key]))))
        untranslated = [
            label for label in TEXT_LABEL.findall(ko[key]) if english_words(label) and label not in SYMBOL_LABELS
        ]
        assert not untranslated, f"{chapter.key}/{key}: \\text{{…}} labels still in English: {untranslated}"


# ------------------------------------------------------------------------------ no hard-coded words
def _string_literals(tree: ast.AST):
    docstrings = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.ClassDef, ast.AsyncFunctionDef)):
            body = getattr(node, "body", [])
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                docstrings.add(id(body[0].value))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            yield node


@pytest.mark.parametrize("path", [*sorted((ROOT / "pages").glob("*/*.py")), ROOT / "app.py"], ids=lambda p: p.stem)
def test_pages_hold_no_english_phrases(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = [
        (n.lineno, n.value)
        for n in _string_literals(tree)
        if TWO_WORDS.search(n.value) and not n.value.startswith((":material/",))
    ]
    assert not found, f"{path.name}: words belong in the catalogue: {found[:5]}"


# ------------------------------------------------------------------------------ pages in Korean
def _reveal_predictions(at: AppTest) -> AppTest:
    """Answer every predict question with its first option and reveal it, so the answer texts are
    scanned too."""
    for radio in [r for r in at.radio if str(r.key or "").endswith("__choice")]:
        radio.set_value(radio.options[0]).run()
    for button in [b for b in at.button if str(b.key or "").endswith("__reveal")]:
        button.click().run()
    return at


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_page_in_korean_shows_no_english(chapter):
    at = open_korean(chapter.path)
    assert not errors(at), errors(at)
    title = t(f"chapters.{chapter.key}.title", "ko")
    assert at.title[0].value == title
    assert HANGUL.search(title) or chapter.key in ("transformer-xl", "deberta")
    found = leaks(at)
    _reveal_predictions(at)
    assert not errors(at), errors(at)
    found += leaks(at)
    assert not found, "\n".join(f"[{k}] {sorted(set(w))} ← {s[:120]!r}" for k, s, w in found[:12])


def test_page_in_korean_with_english_and_empty_sentences():
    """The Korean frame around an English sentence, and with no sentence: Korean messages."""
    at = open_korean(BY_KEY["shaw"].path, sentence="The cat sat on the mat.")
    assert not errors(at)
    at.text_area(key="sentence").input("").run()
    assert [i.value for i in at.info] and all(HANGUL.search(i.value) for i in at.info)


# ------------------------------------------------------------------------------ switching
def test_switching_language_keeps_sentence_seed_and_controls():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(BY_KEY["shaw"].path).run()
    at.text_area(key="sentence").input("one two three four five six").run()
    at.number_input(key="seed").set_value(42).run()
    at.slider(key="shaw_k").set_value(7).run()
    assert at.title[0].value == "Shaw relative positions"
    guess = at.radio(key="shaw_q__choice")
    picked = guess.options.index(guess.options[1])
    guess.set_value(guess.options[1]).run()
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.title[0].value == t("chapters.shaw.title", "ko") == "Shaw 상대 위치 표현"
    assert at.text_area(key="sentence").value == "one two three four five six"
    assert at.number_input(key="seed").value == 42
    assert at.slider(key="shaw_k").value == 7
    assert HANGUL.search(at.slider(key="shaw_k").label)
    guess = at.radio(key="shaw_q__choice")
    assert guess.value == guess.options[picked] and guess.value != at.radio(key="shaw_q__choice").options[0]
    at.button_group(key="lang").set_value("en").run()
    assert at.title[0].value == "Shaw relative positions" and at.slider(key="shaw_k").value == 7


def test_korean_link_opens_in_korean_with_a_korean_sentence():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = "ko"
    at.run()
    assert not errors(at)
    assert at.session_state["lang"] == "ko"
    assert at.session_state["sentence"] == KOREAN_SENTENCE
    assert HANGUL.search(at.title[0].value)


@pytest.mark.parametrize("value", ["xx", "", "EN", "ko\x00", "<script>"])
def test_unknown_language_in_the_url_falls_back_to_english(value):
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = value
    at.run()
    assert not errors(at)
    assert at.title[0].value == t(f"chapters.{CHAPTERS[0].key}.title", "en")


# ------------------------------------------------------------------------------ the browser's language
@pytest.mark.parametrize(
    ("url", "locale", "expected"),
    [
        (None, None, "en"),
        (None, "ko-KR", "ko"),
        (None, "ko", "ko"),
        (None, "ko_KR", "ko"),
        (None, "KO-kr", "ko"),
        (None, "en-US", "en"),
        (None, "fr-FR", "en"),  # a language we do not ship: the default
        (None, "", "en"),
        (None, 42, "en"),
        ("en", "ko-KR", "en"),  # the address wins over the browser
        ("ko", "en-US", "ko"),
        ("ko", None, "ko"),
        ("xx", "ko-KR", "ko"),  # an invalid address counts as none
        ("", "ko-KR", "ko"),
    ],
)
def test_language_choice_address_then_browser_then_default(url, locale, expected):
    assert choose(url, locale) == expected


@pytest.mark.parametrize("lang", LANGS)
def test_only_an_untouched_default_sentence_follows_the_language(lang):
    defaults = {other: t("common.sidebar.default_sentence", other) for other in LANGS}
    for other in LANGS:
        assert sentence_for(defaults[other], lang) == defaults[lang]
    for mine in ("one two three", defaults[lang] + " ", "", "I like CV"):
        assert sentence_for(mine, lang) == mine


def test_korean_browser_opens_in_korean_and_the_switch_overrides_it():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.context["locale"] = "ko-KR"
    at.run()
    assert not errors(at)
    assert at.title[0].value == t(f"chapters.{CHAPTERS[0].key}.title", "ko")
    assert at.session_state["sentence"] == KOREAN_SENTENCE
    at.button_group(key="lang").set_value("en").run()
    assert at.title[0].value == t(f"chapters.{CHAPTERS[0].key}.title", "en")
    assert at.query_params["lang"] == "en"  # a link from a Korean browser keeps English
    assert at.session_state["sentence"] == t("common.sidebar.default_sentence", "en")  # the untouched default follows
    english = AppTest.from_file(APP, default_timeout=TIMEOUT)
    english.context["locale"] = "ko-KR"
    english.query_params["lang"] = "en"
    english.run()
    assert english.title[0].value == t(f"chapters.{CHAPTERS[0].key}.title", "en")


def test_switching_offers_the_new_languages_default_sentence():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    assert at.text_area(key="sentence").value == t("common.sidebar.default_sentence", "en")
    at.button_group(key="lang").set_value("ko").run()
    assert at.text_area(key="sentence").value == KOREAN_SENTENCE
    at.text_area(key="sentence").input("나는 CV를 좋아해").run()
    at.button_group(key="lang").set_value("en").run()
    assert at.text_area(key="sentence").value == "나는 CV를 좋아해"  # the learner's own stays


def test_switching_swaps_the_trouble_prefix_only_if_untouched():
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.run()
    at.switch_page(BY_KEY["trouble"].path).run()
    assert at.text_input(key="trouble_prefix").value == "Well,"
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.text_input(key="trouble_prefix").value == "음,"  # the Korean example's own prefix
    at.text_input(key="trouble_prefix").input("그러니까,").run()
    at.button_group(key="lang").set_value("en").run()
    assert at.text_input(key="trouble_prefix").value == "그러니까,"  # what the learner typed stays


# Pictographs (U+1F000 and up: a page, crossed arrows …) are drawn only by a colour emoji font,
# which a bare Linux or a headless Chromium lacks: there the paper line "(U+1F4C4) He, Liu, Gao,
# Chen (2021)" began with an empty box. The atlas's own words use Streamlit's Material icons (its
# font ships with Streamlit) instead. Text the learner types or picks as an example sentence
# (ui/sidebar.py) may hold emoji: that is its point.
PICTOGRAPH = re.compile("[\U0001f000-\U0001faff]")  # the emoji and pictograph blocks, not CJK beyond


@pytest.mark.parametrize("lang", LANGS)
def test_the_atlas_own_words_hold_no_pictographs(lang):
    words = [f"{lang}:{key}" for key, value in catalogue(lang).items() if PICTOGRAPH.search(value)]
    prose = [str(p) for p in (TEXT_DIR / lang).glob("*.md") if PICTOGRAPH.search(p.read_text(encoding="utf-8"))]
    code = [
        str(p)
        for folder in ("pages", "ui", "explain")
        for p in (ROOT / folder).rglob("*.py")
        if p.name != "sidebar.py" and PICTOGRAPH.search(p.read_text(encoding="utf-8"))
    ]
    assert words == [] and prose == [] and code == [], (words, prose, code)
