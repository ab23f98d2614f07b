"""No dead code: vulture (min confidence 60) over the app, its layers, its tools and the test
support finds no unused function, class, method, property, attribute, variable or import.

The pages and the tests are read too, as users: a helper a page script or a test calls is alive
(page scripts run top to bottom under Streamlit, so their own top-level names are used by being run;
tests' names are pytest's, and are not reported). Names only a library calls (torch's forward,
sympy's printer hooks, …) are listed, each with its reason, in tests/dead_code_whitelist.py. A name a
chapter shows in its code panel ("module:qualified.name", explain/chapter.py) is used by the panel.
"""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SCANNED = ("app.py", "serve_app.py", "ui", "explain", "lab", "encoders", "models", "tools", "tests/support")
USERS = ("pages", "tests")  # read for what they use; their own unused names are not reported here
WHITELIST = "tests/dead_code_whitelist.py"
FINDING = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<what>.+)$")
SOURCE = re.compile(r"^(?P<module>[a-z_][\w.]*):(?P<name>[A-Za-z_][\w.]*)$")  # a code panel's "module:name"


def shown_in_code_panels() -> set[str]:
    """Every attribute name in a chapter's declared sources: the code panel resolves them by name."""
    names = set()
    for path in (ROOT / "explain").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and (m := SOURCE.match(node.value)):
                names.update(m["name"].split("."))
    return names


def vulture(*paths: str) -> list[str]:
    out = subprocess.run(
        [sys.executable, "-m", "vulture", *paths, "--min-confidence", "60"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode in (0, 3), out.stderr  # 3: dead code found (reported below)
    return [line for line in out.stdout.splitlines() if FINDING.match(line)]


def reported(line: str) -> bool:
    path = FINDING.match(line)["path"]  # type: ignore[index]
    return any(path == p or path.startswith(p.rstrip("/") + "/") for p in SCANNED)


def test_no_dead_code(tmp_path):
    shown = tmp_path / "shown_in_code_panels.py"
    shown.write_text("".join(f"_.{name}\n" for name in sorted(shown_in_code_panels())))
    found = [f for f in vulture(*SCANNED[:-1], *USERS, WHITELIST, str(shown)) if reported(f)]
    assert not found, "unused (delete it, or whitelist it with its reason):\n" + "\n".join(found)


def test_the_check_sees_dead_code(tmp_path):
    """Not blind: a function nothing calls is found, the same function called is not."""
    (tmp_path / "m.py").write_text("def used():\n    return 1\n\n\ndef dead():\n    return 2\n\n\nprint(used())\n")
    found = vulture(str(tmp_path / "m.py"))
    assert len(found) == 1 and "unused function 'dead'" in found[0]
