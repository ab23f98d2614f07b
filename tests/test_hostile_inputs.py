"""Hostile input (tests/hostile.py): every input of the corpus once through the shared text path,
and a few representatives of it through every page. No exception, no traceback, no error box.

Before, every page took every corpus input in turn (18 pages × 220 inputs, plus the page's own text
boxes: 4,814 script runs, 580 s of CPU, the largest part of the suite's time; now 1,599, 220 of them
a three-line script, and 180 s). A page does not see the text, though; it sees what the shared text
path makes of it. This file checks that, and checks as much as the cross product did:

1. The shared path, with EVERY corpus input: encoders.text.tokenize (bounded, no control or blank
   token, NFC, case-folded keys, nothing invented), ui.common.sentence_tokens under AppTest (the
   "no text" note and stop, the "draws the first" notice with the right counts), ui.common.
   inline_tokens (typed text only ever inside a code span) and the figures' token labels
   (explain.figures.theme: shortened, HTML-escaped).
2. Who reads the text (test_each_page_reads_the_sentence_only_through_tokenize): a spy string
   stands in for st.session_state["sentence"] (and for a page's own text box) and records every
   function that looks at it. Streamlit's own handling (cache keys, widget bookkeeping) and the
   frame (sidebar, URL mirror, language switch: FRAME) are allowed; anything else is a reader of
   its own. The test fails when the spy sees no tokenize on a page that reads the sentence, and
   when a page listed as a reader of its own is not one, so it cannot pass by seeing nothing.
   Pages with a reader of their own keep the WHOLE corpus (OWN_READERS: MiniLM's WordPiece
   tokenizer, the byte-level models of the real-text lab; OWN_BOX_READERS: the toy lab's string
   box, which its task splits itself), in parts that pytest-xdist spreads; where every page run
   costs a model's forward (READER_SWEPT_APART: MiniLM, SmolLM2) the whole corpus goes through the
   reader itself, and MiniLM's page takes the inputs whose word pieces show every feature that any
   input's pieces show (as every other page takes those whose Tokens do).
3. Every other page takes only the REPRESENTATIVES: its output is a function of the Tokens, and the
   representatives are chosen (greedily, at import) so that together they show every feature that
   any corpus input's Tokens show (token_features: no tokens / one / several / thinned labels / cut
   by tokens / cut by characters, repeated words, a word in two cases, over-long tokens, every
   Unicode category and script the corpus has, emoji and graphemes of several code points,
   right-to-left and wide letters, every character Markdown, HTML, LaTeX or Streamlit's own syntax
   reads). test_representatives_cover_the_corpus proves the cover, so an input added to the corpus
   with a new feature joins the representatives. (A page is never given more than MAX_CHARS: the
   box keeps the first MAX_CHARS of a longer paste, so "cut by characters" reaches pages as a full
   box; tokenize's own cut is test 1.) The old sweep also never checked the "draws the first"
   notice (it compared the kept tokens, at most 256, with the limit); this one does.

Sliders and number boxes still go to both ends, one at a time and then all at once (the corners).
"""

from __future__ import annotations

import functools
import itertools
import sys
import unicodedata
from pathlib import Path

import pytest
import regex
import streamlit as st
from streamlit.delta_generator import DeltaGenerator
from streamlit.runtime.state.session_state_proxy import SessionStateProxy
from streamlit.testing.v1 import AppTest

from encoders.text import MAX_CHARS, MAX_TOKENS, tokenize
from explain.figures.theme import MAX_TICKS, escape, short
from tests.helpers import errors, open_page, skip_questions
from tests.hostile import CORPUS, HAND_PICKED
from tests.test_pages_smoke import CODE_SPAN, CUT, NO_TEXT, reads_sentence
from ui.chapters import CHAPTERS
from ui.common import inline_tokens
from ui.sidebar import DEFAULT_SENTENCE

ROOT = Path(__file__).resolve().parents[1]
LABEL_CHARS = 14  # explain.figures.theme.token_axis: a tick label's length

# ----------------------------------------------------------------------------------------------
# 1. The shared path, every corpus input.


@pytest.mark.parametrize("max_tokens", [1, 8, MAX_TOKENS])
def test_tokenize_every_hostile_input(max_tokens):
    bad = []
    for name, text in CORPUS.items():
        tk = tokenize(text, max_tokens=max_tokens)
        problems = []
        if len(tk) > max_tokens or tk.n_found < len(tk):
            problems.append(f"{len(tk)} of {tk.n_found} tokens kept, limit {max_tokens}")
        if tk.truncated != (tk.chars_cut or tk.n_found > len(tk)) or tk.chars_cut != (len(text) > MAX_CHARS):
            problems.append("truncated/chars_cut disagree with the counts")
        if tk.empty != (len(tk) == 0) or (tk.n_found > 0 and tk.empty):
            problems.append("empty disagrees with the tokens")
        for tok in tk.tokens:
            if not tok or tok.isspace() or all(unicodedata.category(c) in ("Cf", "Zs", "Zl", "Zp") for c in tok):
                problems.append(f"blank token {tok!r}")
            if any(unicodedata.category(c) == "Cc" for c in tok):
                problems.append(f"control character in token {tok!r}")
            if unicodedata.normalize("NFC", tok) != tok:
                problems.append(f"token not NFC {tok!r}")
        if tk.keys != tuple(tok.casefold() for tok in tk.tokens):
            problems.append("keys are not the case-folded tokens")
        # The tokens appear in the (cleaned) text in order: nothing is invented.
        clean = unicodedata.normalize("NFC", regex.sub(r"[\p{Cc}--[\t\n\r]]", " ", text[:MAX_CHARS], flags=regex.V1))
        at = 0
        for tok in tk.tokens:
            at = clean.find(tok, at)
            if at < 0:
                problems.append(f"token {tok!r} is not in the text")
                break
            at += len(tok)
        bad += [f"{name}: {p}" for p in problems]
    assert not bad, "\n".join(bad[:40])


def test_tokens_are_shown_only_as_text():
    """inline_tokens (Markdown) and the figures' token labels (plotly's HTML-ish text), for the
    tokens of every corpus input: outside code spans only the separators remain, and a label is
    short and has no markup left."""
    bad = []
    for name, text in CORPUS.items():
        tokens = tokenize(text).tokens
        md = inline_tokens(tokens)
        outside = CODE_SPAN.sub("", md)
        if outside.replace(" · ", "").strip():
            bad.append(f"{name}: outside code spans {outside[:80]!r}")
        spans = [m.group(2).strip() if m.group(1) != "`" else m.group(2) for m in CODE_SPAN.finditer(md)]
        if spans != list(tokens):
            bad.append(f"{name}: code spans are not the tokens")
        for tok in tokens:
            label = escape(short(tok, LABEL_CHARS))
            if len(short(tok, LABEL_CHARS)) > LABEL_CHARS or "<" in label or ">" in label:
                bad.append(f"{name}: label {label!r}")
            if regex.search(r"&(?!amp;|lt;|gt;)", label):
                bad.append(f"{name}: unescaped & in {label!r}")
    assert not bad, "\n".join(bad[:40])


def _sentence_tokens_page():
    import streamlit as st

    from ui.common import inline_tokens, sentence_tokens

    st.markdown(inline_tokens(sentence_tokens().tokens))


def test_sentence_tokens_notes_every_hostile_input():
    """ui.common.sentence_tokens, what every page calls: the friendly note and a stop for a text
    without tokens, the "draws the first" notice for one past the limit, the tokens otherwise."""
    at = AppTest.from_function(_sentence_tokens_page, default_timeout=60)
    bad = []
    for name, text in CORPUS.items():
        at.session_state["sentence"] = text
        at.run()
        tk = tokenize(text)
        info, warning = [i.value for i in at.info], [w.value for w in at.warning]
        shown = [m.value for m in at.markdown]
        if errors(at):
            bad.append(f"{name}: {errors(at)[0][:200]}")
        elif tk.empty:
            if not any(NO_TEXT in i for i in info) or shown:
                bad.append(f"{name}: no tokens, but no 'no text' note and stop")
        else:
            cut = [m for w in warning if (m := CUT.search(w))]
            if tk.n_found > MAX_TOKENS and not (
                cut and int(cut[0].group(1).replace(",", "")) == tk.n_found and int(cut[0].group(2)) == MAX_TOKENS
            ):
                bad.append(f"{name}: {tk.n_found} tokens but no 'draws the first {MAX_TOKENS}' notice")
            if not tk.truncated and warning:
                bad.append(f"{name}: a notice for a text that was not cut: {warning}")
            if shown != [inline_tokens(tk.tokens)]:
                bad.append(f"{name}: the tokens are not what the page received")
    assert not bad, "\n".join(bad[:40])


# ----------------------------------------------------------------------------------------------
# 3. Representatives: the fewest corpus inputs that show every feature the corpus shows.

SCRIPTS = (
    "Latin",
    "Hangul",
    "Han",
    "Hiragana",
    "Katakana",
    "Arabic",
    "Hebrew",
    "Thai",
    "Devanagari",
    "Greek",
    "Cyrillic",
)
# Characters with a meaning in Markdown, HTML, LaTeX, Streamlit's own syntax or a format string.
SYNTAX = set("<>&\"'`$\\{}*_~[]()#|:%!=-+.,;/?@^")
_SCRIPT_RE = {s: regex.compile(rf"\p{{Script={s}}}") for s in SCRIPTS}
_PICTO = regex.compile(r"\p{Extended_Pictographic}")


def token_features(text: str) -> frozenset[str]:
    """What a page can tell about a text: its Tokens (count, cuts, repeats, lengths) and the kinds
    of character in the tokens it keeps. Whatever tokenize removes (control characters, blanks,
    NFD forms) a page cannot see (test 2), so it is no feature."""
    tk = tokenize(text)
    n, f = len(tk), set()
    f.add(
        "no tokens"
        if n == 0
        else "one token"
        if n == 1
        else f"2–{MAX_TICKS} tokens"
        if n <= MAX_TICKS
        else "thinned labels"
    )
    if tk.n_found > MAX_TOKENS:
        f.add("cut by tokens")
    if tk.chars_cut:
        f.add("cut by characters")
    if n >= 2 and len(set(tk.keys)) == 1:
        f.add("one word repeated")
    elif len(set(tk.keys)) < n:
        f.add("a repeated word")
    if len(set(tk.keys)) < len(set(tk.tokens)):
        f.add("a word in two cases")
    f |= token_kinds(tk.tokens)
    return frozenset(f)


def token_kinds(tokens) -> set[str]:
    """The kinds of token and character a page can show of `tokens` (token_features' own part, and
    piece_features' for MiniLM's word pieces)."""
    f = set()
    for tok in tokens:
        if len(tok) > LABEL_CHARS:
            f.add("a token longer than its label")
        if len(tok) > 1000:
            f.add("a token of over 1000 characters")
        if any(len(g) > 1 for g in regex.findall(r"\X", tok)) and not regex.fullmatch(r"[\p{L}\p{N}_]+", tok):
            f.add("a grapheme of several code points")
        for ch in set(tok):
            f.add(f"category {unicodedata.category(ch)}")
            if ch in SYNTAX:
                f.add(f"syntax {ch}")
            if ord(ch) > 0xFFFF:
                f.add("outside the BMP")
            if unicodedata.bidirectional(ch) in ("R", "AL"):
                f.add("right-to-left")
            if unicodedata.east_asian_width(ch) in ("F", "W"):
                f.add("wide")
            if _PICTO.match(ch):
                f.add("emoji")
            for s, rx in _SCRIPT_RE.items():
                if rx.match(ch):
                    f.add(f"script {s}")
    return f


def _cover(features=token_features) -> dict[str, str]:
    """Greedy set cover: hand-picked inputs first (a failure then names a readable input), the
    seeded mixtures only for a feature no hand-picked input shows."""
    feats = {name: features(text) for name, text in CORPUS.items()}
    need = frozenset().union(*feats.values())
    chosen: dict[str, str] = {}
    have: set[str] = set()
    while need - have:
        pool = [k for k in HAND_PICKED if feats[k] - have] or [k for k in CORPUS if feats[k] - have]
        best = max(pool, key=lambda k: len(feats[k] - have))  # ties: corpus order
        chosen[best] = CORPUS[best]
        have |= feats[best]
    return chosen


REPRESENTATIVES = _cover()


def test_representatives_cover_the_corpus():
    every = frozenset().union(*(token_features(t) for t in CORPUS.values()))
    covered = frozenset().union(*(token_features(t) for t in REPRESENTATIVES.values()))
    assert covered == every, sorted(every - covered)
    # The paths a page takes: the stop, both cuts, one token, thinned labels, a long token.
    for must in (
        "no tokens",
        "one token",
        "cut by tokens",
        "cut by characters",
        "thinned labels",
        "a token longer than its label",
        "a grapheme of several code points",
        "syntax <",
        "syntax `",
    ):
        assert must in covered, must
    assert len(REPRESENTATIVES) <= len(CORPUS) // 5, f"{len(REPRESENTATIVES)} representatives: the cover grew"


# ----------------------------------------------------------------------------------------------
# 2. Who reads the sentence: a spy string.

_READS: list[tuple[str, str]] = []
_RUNS = itertools.count()
_ROOT = str(ROOT) + "/"
# Streamlit's own handling of a value: cache keys (hashing an argument of a cached call: the call
# itself then gets the spy and its reads are recorded) and widget bookkeeping.
_STREAMLIT_OWN = ("streamlit/runtime/caching/", "streamlit/runtime/state/")
# The frame's own handling of the shared sentence: the sidebar, its URL mirror, the language switch
# and lessons (tested by test_pages_smoke and test_url_state; it runs on every page run here too).
FRAME = ("app.py", "ui/sidebar.py", "ui/url_state.py", "ui/i18n.py", "ui/lessons.py")
TOKENIZE = ("encoders/text.py", "tokenize")


def _record() -> None:
    frame = sys._getframe(2)  # the caller of the str method
    name = frame.f_code.co_filename
    if not name.startswith(_ROOT) or "/.venv/" in name:
        if any(part in name for part in _STREAMLIT_OWN):
            return
        while frame is not None and (
            not frame.f_code.co_filename.startswith(_ROOT) or "/.venv/" in frame.f_code.co_filename
        ):
            frame = frame.f_back  # a library reading it for the app (st.markdown(text)): the app's caller
        if frame is None:
            return
    _READS.append((frame.f_code.co_filename[len(_ROOT) :], frame.f_code.co_name))


def _spy(name: str):
    method = getattr(str, name)

    def spied(self, *args, **kwargs):
        if name == "__getitem__" and args and isinstance(args[0], slice):  # a cut keeps watching
            return Spy(method(self, *args, **kwargs))
        _record()
        return method(self, *args, **kwargs)

    spied.__name__ = name
    return spied


_NOT_SPIED = {
    "__new__",
    "__init__",
    "__getattribute__",
    "__init_subclass__",
    "__subclasshook__",
    "__reduce__",
    "__reduce_ex__",
    "__getnewargs__",
    "__setattr__",
    "__delattr__",
    "__dir__",
    "__sizeof__",
    "__class__",
}


class Spy(str):
    """A str that records who looks at it (str's every method, and `"…" + spy`). What a C function
    reads straight from the buffer (re.findall(p, spy)) it cannot see: pages/ hand the sentence to
    functions, and this records which."""

    def __radd__(self, other):
        _record()
        return other + str.__str__(self)


for _name in dir(str):
    if _name not in _NOT_SPIED and callable(getattr(str, _name)):
        setattr(Spy, _name, _spy(_name))


def readers(at: AppTest, monkeypatch, box_keys=()) -> dict[str, set[tuple[str, str]]]:
    """Rerun the page with a spy for the shared sentence and for each own text box (by key): the
    functions that read each, beyond Streamlit and the frame, as (file, function)."""
    found: dict[str, set[tuple[str, str]]] = {}
    run = next(_RUNS)
    get_item, get_attr = SessionStateProxy.__getitem__, SessionStateProxy.__getattr__
    watched: set[str] = set()  # one text at a time, so each read is the read of that text

    def wrap(key, value):
        return Spy(value) if key in watched and type(value) is str else value

    monkeypatch.setattr(SessionStateProxy, "__getitem__", lambda self, key: wrap(key, get_item(self, key)))
    monkeypatch.setattr(SessionStateProxy, "__getattr__", lambda self, key: wrap(key, get_attr(self, key)))
    for kind in ("text_input", "text_area"):  # a box's value as the widget returns it
        original = getattr(DeltaGenerator, kind)

        def returned(self, *args, _original=original, **kwargs):
            return wrap(kwargs.get("key"), _original(self, *args, **kwargs))

        monkeypatch.setattr(DeltaGenerator, kind, returned)
        module_level = getattr(st, kind)  # st.text_input: a method bound when streamlit was imported

        def returned_st(*args, _original=module_level, **kwargs):
            return wrap(kwargs.get("key"), _original(*args, **kwargs))

        monkeypatch.setattr(st, kind, returned_st)
    for key in ("sentence", *box_keys):
        watched.clear()
        watched.add(key)
        current = at.session_state["sentence"] if key == "sentence" else None
        _READS.clear()
        at.session_state[key] = f"spy {run} {key} one two"  # new text: no cached call hits
        at.run()
        assert not errors(at), errors(at)
        found[key] = {r for r in _READS if r[0] not in FRAME}
        if current is not None:
            at.session_state[key] = current
    monkeypatch.undo()
    at.run()
    return found


# Pages that read the shared sentence with a reader of their own, and why: they keep the whole
# corpus (test_every_hostile_sentence_where_pages_read_it_themselves).
OWN_READERS = {
    "minilm": "MiniLM's own WordPiece tokenizer (models/minilm.py)",
    "real-text": "the byte-level models read its UTF-8 bytes (lab/lm.py)",
    "smollm2": "SmolLM2's own byte-level BPE tokenizer (models/smollm2.py)",
}


def own_text_boxes(at):
    return [w for w in list(at.text_input) + list(at.text_area) if w.key != "sentence"]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_each_page_reads_the_sentence_only_through_tokenize(chapter, monkeypatch):
    # Its questions answered: what a page measures only on Reveal (SmolLM2's shift test, which hands
    # the text to MiniLM) reads the sentence too.
    at = skip_questions(open_page(chapter.path))
    found = readers(at, monkeypatch)["sentence"]
    if reads_sentence(chapter):  # the spy sees the page's reads (it does not only see nothing)
        assert TOKENIZE in found, f"the spy saw no tokenize on {chapter.path}: {sorted(found)}"
    own = found - {TOKENIZE}
    if chapter.key in OWN_READERS:  # and it sees a reader of a page's own
        assert own, f"{chapter.path} reads the sentence only through tokenize now: drop it from OWN_READERS"
        return
    assert not own, (
        f"{chapter.path} reads the shared sentence in {sorted(own)}, not only through tokenize: "
        "read it through tokenize (ui.common.sentence_tokens), or add the page to OWN_READERS"
    )


def problems_after_run(at, chapter, text: str, reads: bool) -> list[str]:
    out = [f"error: {e[:300]}" for e in errors(at)]
    if chapter.title not in [t.value for t in at.title]:
        out.append("the page did not render its title")
    if reads and not out:
        tk = tokenize(text)
        if tk.empty and not any(NO_TEXT in i.value for i in at.info):
            out.append("no 'no text' note for an input without tokens")
        if tk.n_found > MAX_TOKENS and not any(CUT.search(w.value) for w in at.warning):
            out.append(f"{tk.n_found} tokens but no 'draws the first' notice")
    return out


def sweep_sentence(chapter, inputs: dict[str, str]) -> list[str]:
    at = open_page(chapter.path)
    reads = reads_sentence(chapter)
    failures = []
    for name, text in inputs.items():
        if len(text) <= MAX_CHARS:
            at.text_area(key="sentence").input(text)
        else:  # the box refuses it whole under AppTest; a browser's paste keeps the first MAX_CHARS
            at.session_state["sentence"] = text
        at.run()
        got = at.text_area(key="sentence").value  # what the page was given
        failures += [f"{name}: {f}" for f in problems_after_run(at, chapter, got, reads)]
    return failures


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_representative_sentences(chapter):
    failures = sweep_sentence(chapter, REPRESENTATIVES)
    assert not failures, "\n".join(failures[:40])


CHUNKS = 4  # the whole corpus on one page, in parts that pytest-xdist spreads over workers
_ALL = list(CORPUS.items())
# Own readers whose whole-corpus sweep runs on the reader itself, not the page, and why; their page
# takes the representatives (test_representative_sentences) like every other page.
READER_SWEPT_APART = {
    "smollm2": "every input costs a 30-layer forward on the page (~2–6 s): the whole corpus goes through "
    "its reader, explain.chapters.smollm2.pieces (tests/test_smollm2.py)",
    "minilm": "every input costs a 6-layer forward and a 72-map figure on the page (the whole corpus: ~65 s "
    "of the suite): the whole corpus goes through its reader, explain.chapters.minilm.wordpieces, and the "
    "page also takes every input whose word pieces show a feature no other input's do (MINILM_PIECES)",
}
WHOLE_CORPUS_PAGES = [c for c in CHAPTERS if c.key in OWN_READERS and c.key not in READER_SWEPT_APART]


def test_readers_swept_apart_are_own_readers():
    assert set(READER_SWEPT_APART) <= set(OWN_READERS)


# MiniLM's page reads the sentence only through explain.chapters.minilm.wordpieces (run,
# position_heads and the position experiments all call it): what it draws is a function of the word
# pieces (and ids) that reader returns, as every other page's is of the Tokens. So the whole corpus
# goes through the reader, and the page takes the inputs whose pieces, together, show every feature
# any input's pieces show (piece_features: the counts the page branches on, [UNK], loose Hangul
# letters, repeats, and every kind of character token_kinds names).


def piece_features(text: str) -> frozenset[str]:
    from explain.chapters import minilm as ch

    p = ch.wordpieces(text)
    pieces = p.tokens[1:-1]  # without [CLS] and [SEP]
    n = len(p.tokens)  # what the page draws: [CLS] … [SEP]
    f = {
        "no pieces"
        if p.kept == 0
        else "one piece"
        if p.kept == 1
        else f"up to {MAX_TICKS} labels"
        if n <= MAX_TICKS
        else "thinned labels"
    }
    if n > ch.THUMB_SIDE:
        f.add("thumbnails in blocks")
    if p.truncated:
        f.add("cut")
    if "[UNK]" in pieces:
        f.add("[UNK]")
    if ch.hangul_letters(pieces):
        f.add("loose Hangul letters")
    if len(set(pieces)) < len(pieces):
        f.add("a repeated piece")
    if any(tok.startswith("##") for tok in pieces):
        f.add("a word in several pieces")
    return frozenset(f | token_kinds(pieces))


@functools.cache
def minilm_pieces_cover() -> dict[str, str]:
    return _cover(piece_features)


def test_every_hostile_text_through_minilms_reader():
    """The whole corpus through MiniLM's reader: never raises, keeps at most MAX_PIECES word pieces
    between [CLS] and [SEP], says when it cut, one vocabulary id a piece."""
    from explain.chapters import minilm as ch

    bad = []
    for name, text in CORPUS.items():
        p = ch.wordpieces(text)
        if not (
            p.kept == min(p.n_found, ch.MAX_PIECES)
            and p.truncated == (p.n_found > ch.MAX_PIECES)
            and len(p.tokens) == p.kept + 2
            and (p.tokens[0], p.tokens[-1]) == ("[CLS]", "[SEP]")
            and p.ids.shape == (len(p.tokens),)
            and all(isinstance(tok, str) and tok for tok in p.tokens)
        ):
            bad.append(f"{name}: {p.n_found} found, {p.kept} kept, {len(p.tokens)} pieces")
    assert not bad, "\n".join(bad[:40])


def test_minilm_page_takes_every_kind_of_word_piece():
    cover = minilm_pieces_cover()
    every = frozenset().union(*(piece_features(t) for t in CORPUS.values()))
    covered = frozenset().union(*(piece_features(t) for t in cover.values()))
    assert covered == every, sorted(every - covered)
    for must in ("no pieces", "one piece", "cut", "thinned labels", "thumbnails in blocks", "[UNK]", "syntax `"):
        assert must in covered, must  # the paths the page takes
    chapter = next(c for c in CHAPTERS if c.key == "minilm")
    failures = sweep_sentence(chapter, cover)
    assert not failures, "\n".join(failures[:40])


@pytest.mark.parametrize("part", range(CHUNKS))
@pytest.mark.parametrize("chapter", WHOLE_CORPUS_PAGES, ids=lambda c: c.key)
def test_every_hostile_sentence_where_pages_read_it_themselves(chapter, part):
    failures = sweep_sentence(chapter, dict(_ALL[part::CHUNKS]))
    assert not failures, "\n".join(failures[:40])


# ----------------------------------------------------------------------------------------------
# A page's own text boxes and its bounded controls.

# Pages with a text box of their own that something other than tokenize reads, and why: every box
# of theirs takes the whole corpus (test_every_hostile_input_in_the_boxes_of).
OWN_BOX_READERS = {
    "toy-lab": "the toy task splits the string itself, characters or words (lab/tasks.py)",
}


def sweep_boxes(at, chapter, keys, inputs: dict[str, str]) -> list[str]:
    failures = []
    for key in keys:
        for name, text in inputs.items():
            boxes = [w for w in own_text_boxes(at) if w.key == key]
            if not boxes:
                break
            boxes[0].input(text)
            at.run()
            failures += [f"text box {key!r} ← {name}: {f}" for f in problems_after_run(at, chapter, text, False)]
    return failures


@pytest.mark.parametrize("part", range(CHUNKS))
@pytest.mark.parametrize("chapter", [c for c in CHAPTERS if c.key in OWN_BOX_READERS], ids=lambda c: c.key)
def test_every_hostile_input_in_the_boxes_of(chapter, part):
    at = open_page(chapter.path, sentence=DEFAULT_SENTENCE)
    keys = [w.key for w in own_text_boxes(at)]
    assert keys, f"{chapter.path} has no text box of its own"
    failures = sweep_boxes(at, chapter, keys, dict(_ALL[part::CHUNKS]))
    assert not failures, "\n".join(failures[:40])


def test_own_readers_are_chapters():
    assert set(OWN_READERS) | set(OWN_BOX_READERS) <= {c.key for c in CHAPTERS}


@pytest.mark.parametrize("chapter", CHAPTERS, ids=[c.key for c in CHAPTERS])
def test_own_text_boxes_and_extreme_controls(chapter, monkeypatch):
    """Every text box of the page's own that only tokenize reads takes the representatives (as the
    shared sentence does); then sliders and number boxes go to both ends, one at a time, then all
    at once (the corner)."""
    at = open_page(chapter.path, sentence=DEFAULT_SENTENCE)
    keys = [w.key for w in own_text_boxes(at)]
    found = readers(at, monkeypatch, box_keys=keys) if keys else {}
    # Seen read by tokenize and nothing else; a box whose reads the spy did not see at all (its
    # value read some other way) is not proven either.
    own = sorted(k for k in keys if found[k] != {TOKENIZE})
    if chapter.key in OWN_BOX_READERS:
        assert own, f"only tokenize reads the boxes of {chapter.path} now: drop it from OWN_BOX_READERS"
    else:
        assert not own, f"{chapter.path}: {[(k, sorted(found[k])) for k in own]}: add the page to OWN_BOX_READERS"
    failures = [] if own else sweep_boxes(at, chapter, keys, REPRESENTATIVES)
    for end in ("min", "max"):
        for kind in ("slider", "number_input"):
            for k in range(len(getattr(at, kind))):
                widgets = getattr(at, kind)
                if k >= len(widgets) or widgets[k].key in ("seed",):
                    continue
                w = widgets[k]
                target = getattr(w, end)
                if isinstance(w.value, (tuple, list)):  # a range slider: both handles to the end
                    target = (target, target)
                w.set_value(target)
                at.run()
                failures += [f"{kind} {w.key!r} = {end}: {f}" for f in problems_after_run(at, chapter, "", False)]
    assert not failures, "\n".join(failures[:40])
