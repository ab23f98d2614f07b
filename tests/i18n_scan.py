"""Find English a Korean page shows: every visible string of a page run under AppTest, with math,
code, links, quoted examples and glosses taken out, and the Latin words that remain.

A Korean page may show Latin script only where Korean writing also does:
- inside math ($…$, $$…$$) and code (`…`, code blocks, st.code), and in links (paper titles);
- as a gloss in parentheses right after the Korean term: 위치 인코딩 (positional encoding);
- inside typographic quotes, for an example sentence that is itself English: “I like CV”;
- acronyms (all capitals, e.g. BLEU, NTK), words with digits or underscores (L1H3, d_model);
- names: the papers' authors, and the model and method names listed in explain/text/ko/latin/*.txt.

Run it by hand while translating a page:  python -m tests.i18n_scan shaw [more chapter keys]
"""

from __future__ import annotations

import re
import sys
from functools import lru_cache
from pathlib import Path

from streamlit.testing.v1 import AppTest

from ui.chart import NAME as CHART_NAME
from ui.chart import sent
from ui.presenter import FRAME_JS

ROOT = Path(__file__).resolve().parents[1]
LATIN_DIR = ROOT / "explain" / "text" / "ko" / "latin"
KOREAN_SENTENCE = "고양이가 매트 위에 앉았다. 강아지가 통나무 위에 앉았다."

# Proto fields that hold words a learner reads (not ids, formats, icons, or what the learner typed).
FIELDS = {"body", "label", "help", "placeholder", "options", "content", "caption"}
SKIP_TYPES = {"code"}  # st.code: source code is code in every language
STYLE_ONLY = re.compile(r"\s*<style>[^<]*</style>\s*")

_STRIP = [
    re.compile(r"```.*?```", re.S),  # code blocks
    re.compile(r"\$\$.*?\$\$", re.S),  # display math
    re.compile(r"(?<!\\)\$.+?(?<!\\)\$", re.S),  # inline math
    re.compile(r"\\\(.*?\\\)|\\\[.*?\\\]", re.S),
    re.compile(r"(`+).+?\1", re.S),  # code spans
    re.compile(r"!?\[[^\]]*\]\([^)]*\)"),  # Markdown links and images: link text is a title
    re.compile(r"https?://\S+"),
    re.compile(r"<extra>.*?</extra>", re.S),  # plotly hover: the trace name box
    re.compile(r"<[^>]{0,200}>"),  # HTML tags (<br>, <b>, <sub>)
    re.compile(r"&[a-z]+;|&#\d+;"),  # HTML entities
    re.compile(r"%\{[^}]*\}"),  # plotly hover placeholders
    re.compile(r":material/[a-z_]+:"),  # icons
    re.compile(r":[a-z]+(-badge|-background)?\["),  # Streamlit colour directives (the text stays)
    re.compile(r"“[^”]*”|‘[^’]*’|「[^」]*」"),  # quoted examples
    re.compile(r"[?&][A-Za-z_]+=[\w.-]*"),  # URL parameters: ?present=1, &lang=ko
    re.compile(r"\w*\d\w*|\w*_\w*"),  # words with digits or underscores: identifiers, L1H3, d_model
]
# A parenthesised gloss after a Korean word: "위치 인코딩 (positional encoding)".
_GLOSS = re.compile(r"(?<=[\uac00-\ud7a3\u3131-\u318e])\s*\([^()\uac00-\ud7a3]*\)")
_WORD = re.compile(r"[A-Za-z][A-Za-z'’\-]*[A-Za-z]")


@lru_cache(maxsize=1)
def allowed_words() -> frozenset[str]:
    """Names that stay in Latin script in Korean: the allow-lists plus every paper's authors."""
    words: set[str] = set()
    for path in sorted(LATIN_DIR.glob("*.txt")):
        for line in path.read_text(encoding="utf-8").splitlines():
            line = line.split("#", 1)[0].strip()
            words.update(line.split())
    import importlib
    import pkgutil

    import encoders
    import models
    from encoders.base import Paper

    for package in (encoders, models):  # every paper and pretrained model, not only those imported so far
        for info in pkgutil.iter_modules(package.__path__):
            importlib.import_module(f"{package.__name__}.{info.name}")
    for module in list(sys.modules.values()):
        if getattr(module, "__name__", "").startswith(("encoders", "models")):
            for value in vars(module).values():
                papers = value.values() if isinstance(value, dict) else [value]
                for p in papers:
                    if isinstance(p, Paper):
                        words.update(_WORD.findall(p.authors))
    del encoders, models
    return frozenset(words)


def english_words(text: str) -> list[str]:
    """The Latin words in `text` that a Korean page should not show."""
    for pattern in _STRIP:
        text = pattern.sub(" ", text)
    text = text.replace("*", "")  # emphasis markers: "**구간**(bucket)" is a gloss too
    text = _GLOSS.sub(" ", text)
    ok = allowed_words()
    out = []
    for w in _WORD.findall(text):
        w = w.strip("'’-")
        if len(w) < 2 or w in ok or w.isupper():
            continue
        out.append(w)
    return out


def _proto_strings(msg, name: str = "") -> list[str]:
    out: list[str] = []
    for field, value in msg.ListFields():
        values = value if field.is_repeated else [value]
        if field.type == field.TYPE_MESSAGE:
            for v in values:
                out += _proto_strings(v, field.name)
        elif field.type == field.TYPE_STRING and (field.name in FIELDS):
            out += [v for v in values if v]
    return out


def _figure_strings(fig: dict) -> list[str]:
    """Words inside a plotly figure (its JSON spec): titles, axis and colour-bar titles, tick text,
    annotations, trace names, hover templates and trace text."""
    out: list[str] = []

    def title(obj) -> None:
        if isinstance(obj, dict):
            t = obj.get("title")
            if isinstance(t, dict):
                out.append(str(t.get("text") or ""))
            elif isinstance(t, str):
                out.append(t)

    layout = fig.get("layout", {})
    title(layout)
    title(layout.get("legend"))
    for name, axis in layout.items():
        if re.fullmatch(r"[xy]axis\d*|coloraxis\d*|scene\d*", name) and isinstance(axis, dict):
            title(axis)
            title(axis.get("colorbar"))
            out += [str(t) for t in axis.get("ticktext", []) or []]
    for a in layout.get("annotations", []) or []:
        out.append(str(a.get("text") or ""))
    for s in layout.get("sliders", []) or []:
        out += [str(step.get("label") or "") for step in s.get("steps", [])]
        out.append(str((s.get("currentvalue") or {}).get("prefix") or ""))
    for m in layout.get("updatemenus", []) or []:
        out += [str(b.get("label") or "") for b in m.get("buttons", [])]
    for frame in fig.get("frames", []) or []:
        out.append(str(((frame.get("layout") or {}).get("title") or {}).get("text") or ""))
    for trace in fig.get("data", []):
        out.append(str(trace.get("name") or ""))
        out.append(str(trace.get("hovertemplate") or ""))
        title(trace.get("colorbar"))
        for key in ("text", "hovertext"):
            v = trace.get(key)
            if isinstance(v, str):
                out.append(v)
            elif isinstance(v, list):
                flat = v
                while flat and isinstance(flat[0], list):
                    flat = [x for row in flat for x in row]
                out += [x for x in flat if isinstance(x, str)]
    return [s for s in out if s]


def visible_strings(at: AppTest) -> list[tuple[str, str]]:
    """(element type, text) for every string the page shows, sidebar included."""
    out: list[tuple[str, str]] = []

    def walk(node) -> None:
        kind = getattr(node, "type", "")
        proto = getattr(node, "proto", None)
        if kind not in SKIP_TYPES and proto is not None and hasattr(proto, "ListFields"):
            body = str(getattr(proto, "body", ""))
            if kind == "html" and (STYLE_ONLY.fullmatch(body) or body == FRAME_JS):
                pass  # a style sheet or the frame's fixed scripts (ui.presenter): never shown as words
            elif kind == "bidi_component" and proto.component_name == CHART_NAME:
                out.extend((kind, s) for s in _figure_strings(sent(proto.bytes)[0]))
            else:
                out.extend((kind, s) for s in _proto_strings(proto))
        children = getattr(node, "children", None)
        if isinstance(children, dict):
            for child in children.values():
                walk(child)

    walk(at._tree)
    return out


def leaks(at: AppTest) -> list[tuple[str, str, list[str]]]:
    """(element type, text, English words) for every string with English in it."""
    found = []
    for kind, text in visible_strings(at):
        words = english_words(text)
        if words:
            found.append((kind, text, words))
    return found


def open_korean(page_path: str, sentence: str = KOREAN_SENTENCE) -> AppTest:
    from tests.helpers import APP, TIMEOUT, land_on

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = "ko"
    at.session_state["sentence"] = sentence
    land_on(at, page_path).run()  # straight to the page, as a Korean learner's link opens it
    return at


def main(keys: list[str]) -> int:
    from ui.chapters import BY_KEY, CHAPTERS

    chapters = [BY_KEY[k] for k in keys] if keys else list(CHAPTERS)
    total = 0
    for chapter in chapters:
        at = open_korean(chapter.path)
        errs = [e.message for e in at.exception]
        found = leaks(at)
        total += len(found) + len(errs)
        print(f"== {chapter.key}: {len(found)} strings with English, {len(errs)} exceptions")
        for e in errs:
            print("  EXCEPTION", e[:300])
        for kind, text, words in found:
            print(f"  [{kind}] {sorted(set(words))}  ← {text[:160]!r}")
    return 1 if total else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
