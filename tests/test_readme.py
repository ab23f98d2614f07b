"""The README's chapter list is the app's own: every chapter, in order, with the title and the one-line
idea the app shows under it (explain/text/en/strings/chapters.toml). A summary fixed in the app and
not in the README (or the other way round) fails here."""

from __future__ import annotations

import re
from pathlib import Path

from explain.i18n import t
from ui.chapters import CHAPTERS, part_title

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def chapter_list() -> str:
    """The README's "## Chapters" block as the declarations make it: parts in order, each chapter's
    title and one-line idea (English catalogue)."""
    out, part = ["## Chapters\n"], None
    for c in CHAPTERS:
        if c.part != part:
            part = c.part
            out.append(f"\n**{part_title(part, 'en')}**\n\n")
        out.append(f"- **{t(f'chapters.{c.key}.title', 'en')}** — {t(f'chapters.{c.key}.idea', 'en')}\n")
    return "".join(out) + "\n"


def test_readme_lists_every_chapter_with_its_idea_in_order():
    """The block is derived from the chapters' declarations; on a change, paste chapter_list()."""
    block = README[README.index("## Chapters\n") : README.index("## English and")]
    assert block == chapter_list()
    assert len(re.findall(r"^- \*\*", block, re.M)) == len(CHAPTERS)


def test_readme_starts_with_the_two_commands():
    block = README.split("```", 2)[1]
    assert "./run-app" in block and "./run-tests" in block


def test_the_layer_graph_in_the_readme_is_the_codes():
    """The Architecture section lists, per layer, the layers it imports: the same set the source has
    (every `import` and `from … import` of pages/, ui/, explain/, lab/, models/ and encoders/)."""
    import ast

    root = Path(__file__).resolve().parents[1]
    layers = ("pages", "ui", "explain", "lab", "models", "encoders")
    actual: set[tuple[str, str]] = set()
    for layer in layers:
        for path in root.glob(f"{layer}/**/*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    names = [node.module]
                actual |= {(layer, n.split(".")[0]) for n in names if n.split(".")[0] in layers} - {(layer, layer)}
    block = README[README.index("## Architecture") :]
    block = block[block.index("```") + 3 :]
    block = block[: block.index("```")]
    listed: set[tuple[str, str]] = set()
    for line in block.strip().splitlines():
        source, _, targets = line.partition("→")
        listed |= {(source.split("/")[0].strip(), t) for t in re.findall(r"\b(\w+)/", targets)}
    assert listed == actual, (listed - actual, actual - listed)
