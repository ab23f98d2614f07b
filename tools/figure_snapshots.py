"""Record every figure the pages build, then check that explain/figures.py still builds the same.

    python tools/figure_snapshots.py record /tmp/figsnap     # before a refactor of figures.py
    python tools/figure_snapshots.py check  /tmp/figsnap     # after it: every figure identical?

`record` runs every chapter under AppTest, in English and in Korean, with every public builder of
explain.figures wrapped: each call's arguments (pickled) and its figure (to_dict, as JSON) are saved.
`check` calls each builder again with the saved arguments and compares the JSON exactly, so a speed
refactor of the plotting module can prove it changed nothing a learner sees.
"""

from __future__ import annotations

import functools
import inspect
import json
import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import plotly.graph_objects as go  # noqa: E402
import plotly.io as pio  # noqa: E402
import streamlit  # noqa: E402,F401  (first, as in the app: it sets plotly's default template on import)

from explain import figures as F  # noqa: E402
from explain import i18n  # noqa: E402


def _spec(fig: go.Figure) -> str:
    # plotly's own JSON (every array in full, as the browser gets it), keys sorted
    return json.dumps(json.loads(pio.to_json(fig, validate=False)), sort_keys=True)


def _builders() -> dict:
    return {
        name: fn
        for name, fn in vars(F).items()
        if inspect.isfunction(fn) and fn.__module__ == F.__name__ and not name.startswith("_")
    }


def record(out: Path) -> None:
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, TIMEOUT
    from ui.chapters import CHAPTERS

    out.mkdir(parents=True, exist_ok=True)
    calls: list[tuple[str, str, bytes, str]] = []

    def wrap(name, fn):
        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            try:  # before the call: a builder may add to a figure it is given (mark_lines)
                blob = pickle.dumps((args, kwargs))
            except Exception as e:  # an argument that cannot be pickled: say so, keep going
                blob = None
                print(f"  not recorded: {name}: {e}")
            fig = fn(*args, **kwargs)
            if isinstance(fig, go.Figure) and blob is not None:
                calls.append((name, i18n.language(), blob, _spec(fig)))
            return fig

        return recorded

    for name, fn in _builders().items():
        setattr(F, name, wrap(name, fn))
    for lang in ("en", "ko"):
        for chapter in CHAPTERS:
            at = AppTest.from_file(APP, default_timeout=TIMEOUT)
            at.query_params["lang"] = lang
            at.run()
            at.switch_page(chapter.path).run()
            print(f"{lang} {chapter.key}: {len(calls)} figures so far")
    with (out / "calls.pkl").open("wb") as f:
        pickle.dump(calls, f)
    print(f"recorded {len(calls)} figures from {len({c[0] for c in calls})} builders in {out}")


def check(out: Path) -> int:
    calls = pickle.loads((out / "calls.pkl").read_bytes())
    builders = _builders()
    bad = 0
    for k, (name, lang, args, spec) in enumerate(calls):
        i18n.set_language(lang)
        a, kw = pickle.loads(args)
        got = _spec(builders[name](*a, **kw))
        if got != spec:
            bad += 1
            first = next(
                (i for i, (x, y) in enumerate(zip(got, spec, strict=False)) if x != y), min(len(got), len(spec))
            )
            print(
                f"DIFFERS #{k} {name} ({lang}) at char {first}:\n  was {spec[max(0, first - 80) : first + 80]}\n"
                f"  now {got[max(0, first - 80) : first + 80]}"
            )
    print(f"{len(calls) - bad} of {len(calls)} figures identical")
    return 1 if bad else 0


if __name__ == "__main__":
    mode, where = sys.argv[1], Path(sys.argv[2])
    if mode == "record":
        record(where)
    else:
        raise SystemExit(check(where))
