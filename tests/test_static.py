"""The static checks run with the tests (one command runs everything): ruff's lint, ruff's format
check, and mypy (its configuration, strict for encoders/, models/ and explain/, lives in
pyproject.toml). Each reports what it found, so a red run says what to fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent


def run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=900, check=False)


def test_ruff_lint():
    r = run(str(BIN / "ruff"), "check", "--output-format", "concise", ".")
    assert r.returncode == 0, r.stdout + r.stderr


def test_ruff_format():
    r = run(str(BIN / "ruff"), "format", "--check", ".")
    assert r.returncode == 0, "run `ruff format .`:\n" + r.stdout + r.stderr


def test_mypy():
    # --cache-dir in a fresh temporary place would cost ~1 min more; the project's .mypy_cache is
    # ignored by git and only speeds up a second run.
    r = run(str(BIN / "mypy"), "--no-error-summary")
    assert r.returncode == 0, r.stdout + r.stderr
