"""The real text the language models learn from: the docstrings of Python's standard library.

Why this text: it is on every machine that runs the app (no download), it is English prose about
code, written by many authors, and the Python Software Foundation License lets it be redistributed
in derived form. The recipe is this file:

- every .py file under the running interpreter's stdlib directory, sorted by relative path,
  skipping test suites (test/, tests/, idle_test/), site-packages and __pycache__;
- in each file, the docstring of the module and of every class and function (ast.get_docstring
  with clean=True: indentation removed as inspect.cleandoc does), in source order, keeping those of
  at least MIN_CHARS characters (one-liners like "Return self." teach little);
- a file's docstrings are joined by a blank line, files by two; the text is UTF-8 bytes;
- files are split by their position in the sorted list: every HELD_OUT_EVERY-th file goes to the
  held-out split, so no file's sentences are in both.

Building needs the stdlib of the Python that recorded it (3.11 here): another Python version has
other docstrings, so the corpus is shipped (xz-compressed, assets/lm/) with its size, checksum and
the interpreter that made it, and regeneration reuses it unless told to rebuild.
"""

from __future__ import annotations

import ast
import hashlib
import json
import lzma
import platform
import sysconfig
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LM_DIR = ROOT / "assets" / "lm"
MIN_CHARS = 80
HELD_OUT_EVERY = 10
SKIP_PARTS = frozenset({"test", "tests", "idle_test", "site-packages", "__pycache__"})
SPLITS = ("train", "heldout")


@dataclass(frozen=True)
class Corpus:
    train: bytes
    heldout: bytes
    recipe: dict  # what corpus.json records: source, counts, sizes, checksums


def source_files(stdlib: Path) -> list[Path]:
    return sorted(
        (f for f in stdlib.rglob("*.py") if not SKIP_PARTS.intersection(f.relative_to(stdlib).parts)),
        key=lambda f: f.relative_to(stdlib).as_posix(),
    )


def docstrings(source: str) -> list[str]:
    """The module's, classes' and functions' docstrings of one file, in source order."""
    tree = ast.parse(source)
    nodes = [
        n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
    ]
    nodes.sort(key=lambda n: getattr(n, "lineno", 0))  # ast.walk is breadth-first; source order reads better
    out = []
    for node in nodes:
        doc = ast.get_docstring(node, clean=True)
        if doc and len(doc) >= MIN_CHARS:
            out.append(doc.strip())
    return out


def build(stdlib: Path | None = None) -> Corpus:
    """The corpus from this interpreter's standard library (the recipe in the module docstring)."""
    stdlib = Path(stdlib or sysconfig.get_paths()["stdlib"])
    parts: dict[str, list[str]] = {s: [] for s in SPLITS}
    files = {s: 0 for s in SPLITS}
    docs = {s: 0 for s in SPLITS}
    for i, path in enumerate(source_files(stdlib)):
        try:
            found = docstrings(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue  # a few stdlib files are deliberately broken (lib2to3 test data); not prose
        if not found:
            continue
        split = "heldout" if i % HELD_OUT_EVERY == 0 else "train"
        parts[split].append("\n\n".join(found))
        files[split] += 1
        docs[split] += len(found)
    data = {s: ("\n\n\n".join(parts[s]) + "\n").encode("utf-8") for s in SPLITS}
    recipe = {
        "source": "docstrings of the Python standard library (lab/corpus.py)",
        "python": platform.python_version(),
        "min_chars": MIN_CHARS,
        "held_out_every": HELD_OUT_EVERY,
        "license": "Python Software Foundation License (redistribution in derived form permitted)",
        **{
            s: {"files": files[s], "docstrings": docs[s], "bytes": len(data[s]), "sha256": sha256(data[s])}
            for s in SPLITS
        },
    }
    return Corpus(data["train"], data["heldout"], recipe)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def save(corpus: Corpus, directory: Path = LM_DIR) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for s in SPLITS:
        path = directory / f"corpus-{s}.txt.xz"
        path.write_bytes(lzma.compress(getattr(corpus, s), preset=9))
        path.chmod(0o644)
    (directory / "corpus.json").write_text(json.dumps(corpus.recipe, indent=1) + "\n")


def load(directory: Path = LM_DIR) -> Corpus:
    """The shipped corpus, its checksums verified (a changed file is an error, not a new result)."""
    recipe = json.loads((directory / "corpus.json").read_text())
    data = {s: lzma.decompress((directory / f"corpus-{s}.txt.xz").read_bytes()) for s in SPLITS}
    for s in SPLITS:
        if sha256(data[s]) != recipe[s]["sha256"]:
            raise ValueError(f"assets/lm/corpus-{s}.txt.xz does not match the checksum in corpus.json")
    return Corpus(data["train"], data["heldout"], recipe)
