"""Figure snapshots: what every page draws, recorded, so a refactor can prove it changed no picture.

    python tools/figure_snapshots.py record [chapter …]   # after a change that alters a picture on purpose
    python tools/figure_snapshots.py check [chapter …]    # what tests/test_figure_snapshots.py runs

One text file per chapter, tests/snapshots/figures/<chapter>.json; name chapters (their keys: rope,
alibi, …) to record or check only those.

The recording and the comparison live in tests/support/figure_snapshots.py (the tests read them).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# A snapshot is the page as drawn: the SmolLM2 chapter waits for its model (as under the tests,
# tests/conftest.py) instead of drawing its "warming up" note and stopping (which would record 0 figures).
os.environ.setdefault("PE_ATLAS_SMOLLM2_WAIT", "1")

from tests.support import figure_snapshots as S

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=("record", "check"))
    parser.add_argument("chapters", nargs="*", help="chapter keys (default: every chapter)")
    args = parser.parse_args()
    if args.command == "record":
        S.record(args.chapters or None)
    else:
        sys.exit(S.check(args.chapters or None))
