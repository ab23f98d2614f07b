"""Figure snapshots: what every page draws, recorded, so a refactor can prove it changed no picture.

    python tools/figure_snapshots.py record [rope alibi …]   # after a change that alters a picture on purpose
    python tools/figure_snapshots.py check [rope alibi …]    # what tests/test_figure_snapshots.py runs

(tools/figure_snapshots.py is the command; the recording and the comparison live here, where the
tests read them.)

`record` opens each chapter (every chapter, or the ones named) under AppTest, in English and in Korean,
at its default controls and the language's default sentence, and stores every chart's figure JSON by
its key in tests/snapshots/figures/<chapter>.json ({"en": {key: figure}, "ko": {…}}): text, one file
per chapter, so a commit that changes a picture shows which page and which chart in its diff. Keys
are sorted, every dict opens on its own lines, a list of plain values and an array's fingerprint
stay on one line. Arrays are stored as fingerprints (shape, dtype, NaN count, min,
max, sum, sum of squares and 16 evenly strided samples) and compared with a small tolerance, so a last-
bit difference between two CPUs does not fail a run while any change a learner could see does;
strings are compared exactly except for the numbers inside them (hover texts, titles), which may
differ in their last printed digit.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import numpy as np

from explain.figures.spec import _untyped  # a typed array read back, as the app reads one

ROOT = Path(__file__).resolve().parents[2]

SNAPSHOTS = ROOT / "tests" / "snapshots" / "figures"
LANGS = ("en", "ko")
SAMPLES = 16
LONG_LIST = 64  # plain lists of numbers longer than this are fingerprinted like arrays
RTOL, ATOL = 1e-4, 1e-6
NUMBER = re.compile(r"[-−]?\d+(?:[.,]\d+)*(?:\.\d+)?(?:e[-+]?\d+)?")


def _fingerprint(a: np.ndarray) -> dict[str, Any]:
    x = np.asarray(a, dtype=np.float64).ravel()
    finite = x[np.isfinite(x)]
    idx = np.linspace(0, x.size - 1, min(SAMPLES, x.size)).round().astype(int) if x.size else np.array([], int)
    return {
        "__array__": True,
        "shape": list(np.shape(a)),
        "nan": int(np.isnan(x).sum()),
        "min": float(finite.min()) if finite.size else None,
        "max": float(finite.max()) if finite.size else None,
        "sum": float(finite.sum()),
        "sumsq": float((finite**2).sum()),
        "samples": [None if not math.isfinite(v) else float(v) for v in x[idx]],
    }


def _is_numbers(v: list[Any]) -> bool:
    return bool(v) and all((isinstance(x, (int, float)) and not isinstance(x, bool)) or x is None for x in v)


def fingerprint(obj: Any) -> Any:
    """A figure's JSON with every array replaced by its fingerprint."""
    if isinstance(obj, dict):
        if "bdata" in obj and "dtype" in obj:
            return _fingerprint(_untyped(obj))
        return {k: fingerprint(v) for k, v in obj.items()}
    if isinstance(obj, list):
        if len(obj) > LONG_LIST and _is_numbers(obj):
            return _fingerprint(np.array([np.nan if v is None else v for v in obj], dtype=np.float64))
        return [fingerprint(v) for v in obj]
    return obj


def _close(a: Any, b: Any) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=RTOL, abs_tol=ATOL)


def _text_close(a: str, b: str) -> bool:
    """Equal text, numbers inside it equal up to their last printed digit."""
    if NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True):
        if x == y:
            continue
        fx, fy = (float(s.replace("−", "-").replace(",", "")) for s in (x, y))
        digits = len(x.split(".")[1]) if "." in x else 0
        if not math.isclose(fx, fy, rel_tol=1e-3, abs_tol=1.01 * 10**-digits):
            return False
    return True


def differences(old: Any, new: Any, path: str = "") -> list[str]:
    if isinstance(old, dict) and old.get("__array__"):
        if not (isinstance(new, dict) and new.get("__array__")):
            return [f"{path}: was an array, now {type(new).__name__}"]
        if old["shape"] != new["shape"] or old["nan"] != new["nan"]:
            return [f"{path}: shape/NaN {old['shape']}/{old['nan']} → {new['shape']}/{new['nan']}"]
        for k in ("min", "max", "sum", "sumsq"):
            if not _close(old[k], new[k]):
                return [f"{path}: {k} {old[k]} → {new[k]}"]
        if not all(_close(x, y) for x, y in zip(old["samples"], new["samples"], strict=True)):
            return [f"{path}: values differ"]
        return []
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for k in sorted(set(old) | set(new)):
            if k not in old or k not in new:
                out.append(f"{path}.{k}: {'added' if k in new else 'removed'}")
            else:
                out += differences(old[k], new[k], f"{path}.{k}")
        return out
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return [f"{path}: {len(old)} items → {len(new)}"]
        return [d for k, (x, y) in enumerate(zip(old, new, strict=True)) for d in differences(x, y, f"{path}[{k}]")]
    if isinstance(old, str) and isinstance(new, str):
        return [] if _text_close(old, new) else [f"{path}: {old[:90]!r} → {new[:90]!r}"]
    if isinstance(old, (int, float)) and isinstance(new, (int, float)) and not isinstance(old, bool):
        return [] if _close(old, new) else [f"{path}: {old} → {new}"]
    return [] if old == new else [f"{path}: {old!r} → {new!r}"]


def page_figures(chapter_path: str, lang: str) -> dict[str, Any]:
    """Every chart of one page at its defaults: key → fingerprinted figure JSON."""
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, TIMEOUT, chart_elements, figure_of

    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    at.run()
    at.switch_page(chapter_path).run()
    if at.exception:
        raise RuntimeError(f"{chapter_path} ({lang}): {at.exception[0].message}")
    return {str(el.key): fingerprint(figure_of(el)) for el in chart_elements(at)}


def _is_plain(v: Any) -> bool:
    return not isinstance(v, (dict, list))


def dumps(obj: Any, level: int = 0) -> str:
    """Stable, reviewable JSON: sorted keys, one entry of a dict per line (indented one space per
    level), lists of plain values and array fingerprints on one line; json.loads reads it back
    exactly (floats as repr, NaN as NaN, words unescaped)."""
    one_line = {"ensure_ascii": False, "sort_keys": True, "separators": (", ", ": ")}
    if isinstance(obj, dict):
        if not obj or obj.get("__array__"):
            return json.dumps(obj, **one_line)  # type: ignore[arg-type]
        pad = " " * (level + 1)
        items = [f"{pad}{json.dumps(k, ensure_ascii=False)}: {dumps(obj[k], level + 1)}" for k in sorted(obj)]
        return "{\n" + ",\n".join(items) + "\n" + " " * level + "}"
    if isinstance(obj, list):
        if all(_is_plain(v) for v in obj):
            return json.dumps(obj, **one_line)  # type: ignore[arg-type]
        pad = " " * (level + 1)
        return "[\n" + ",\n".join(pad + dumps(v, level + 1) for v in obj) + "\n" + " " * level + "]"
    return json.dumps(obj, ensure_ascii=False)


def path_of(key: str) -> Path:
    return SNAPSHOTS / f"{key}.json"


def load_chapter(key: str) -> dict[str, dict[str, Any]]:
    """One chapter's recorded figures: language → chart key → fingerprinted figure."""
    return json.loads(path_of(key).read_text(encoding="utf-8"))


def load() -> dict[str, dict[str, Any]]:
    """Every recorded page: "<lang>/<chapter>" → chart key → fingerprinted figure."""
    out = {}
    for path in sorted(SNAPSHOTS.glob("*.json")):
        for lang, figs in load_chapter(path.stem).items():
            out[f"{lang}/{path.stem}"] = figs
    return out


def _chapters(keys: list[str] | None) -> list:
    from ui.chapters import CHAPTERS

    unknown = set(keys or ()) - {c.key for c in CHAPTERS}
    if unknown:
        raise SystemExit(f"no such chapter: {', '.join(sorted(unknown))} (one of {', '.join(c.key for c in CHAPTERS)})")
    return [c for c in CHAPTERS if not keys or c.key in keys]


def record(keys: list[str] | None = None) -> None:
    """Record the named chapters (all when none): one file each. Recording all also removes the file
    of a chapter that no longer exists."""
    chapters = _chapters(keys)
    SNAPSHOTS.mkdir(parents=True, exist_ok=True)
    n = 0
    for c in chapters:
        snap = {lang: page_figures(c.path, lang) for lang in LANGS}
        path_of(c.key).write_text(dumps(snap) + "\n", encoding="utf-8")
        n += sum(len(v) for v in snap.values())
        print(
            f"recorded {sum(len(v) for v in snap.values())} figures in {path_of(c.key).relative_to(ROOT)}", flush=True
        )
    if not keys:
        for stale in set(SNAPSHOTS.glob("*.json")) - {path_of(c.key) for c in chapters}:
            stale.unlink()
            print(f"removed {stale.relative_to(ROOT)} (no such chapter)")
    print(f"recorded {n} figures of {len(chapters)} chapters × {len(LANGS)} languages")


def check(keys: list[str] | None = None) -> int:
    bad = 0
    for c in _chapters(keys):
        stored = load_chapter(c.key) if path_of(c.key).exists() else {}
        for lang in LANGS:
            old, new = stored.get(lang, {}), page_figures(c.path, lang)
            diffs = [f"{k}: {'new chart' if k not in old else 'chart gone'}" for k in set(old) ^ set(new)]
            diffs += [f"{k}{d}" for k in sorted(set(old) & set(new)) for d in differences(old[k], new[k])]
            if diffs:
                bad += 1
                print(f"{lang}/{c.key}:", *diffs[:8], sep="\n   ")
    print("all figures as recorded" if not bad else f"{bad} pages differ")
    return 1 if bad else 0
