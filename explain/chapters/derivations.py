"""What the Derivations chapter computes besides the proofs: its predict-then-reveal question.

The proofs themselves live in explain/derivations/ (and are drawn by ui/derivation.py); this module
only answers the page's question from numbers: does PE(m)·PE(n) depend on n − m, on m + n, or on
both separately? The answer is measured on the sinusoidal table the sinusoidal chapter draws.
"""

from __future__ import annotations

import numpy as np

from explain import derivations as D
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

from .sinusoidal import pe_matrix

POSITIONS = 32  # positions of the measured table
D_MODEL = 16  # its width
BASE = 10_000.0
# The table is float32, so "constant" means constant up to its rounding: products of 16 entries of
# size ≤ 1 drift by ~1e-6, far below the spread of a real dependence (> 1 here).
CONSTANT = 1e-4
OPTIONS = ("difference", "sum", "separately")  # stable ids: the words are derivations.page.option.<id>


def largest_spreads(table: np.ndarray) -> tuple[float, float]:
    """(spread along n − m, spread along m + n): the largest max − min of PE(m)·PE(n) over every
    diagonal, and over every anti-diagonal, of the (positions, positions) dot-product table."""
    p = np.asarray(table, dtype=np.float64)
    dots = p @ p.T  # (m, n)
    n = dots.shape[0]
    by_diff = max(float(np.ptp(np.diagonal(dots, k))) for k in range(-(n - 1), n))
    by_sum = max(float(np.ptp(np.diagonal(dots[:, ::-1], k))) for k in range(-(n - 1), n))
    return by_diff, by_sum


@bounded(4)
def dot_product_question(lang: str) -> Question:
    """Does PE(m)·PE(n) depend on n − m, on m + n, or on m and n separately? Answered by the spreads
    of the dot products along diagonals and anti-diagonals of the sinusoidal table."""
    by_diff, by_sum = largest_spreads(pe_matrix(POSITIONS, D_MODEL, BASE))
    answer = OPTIONS[0] if by_diff < CONSTANT else OPTIONS[1] if by_sum < CONSTANT else OPTIONS[2]
    facts: dict[str, object] = {
        "positions": POSITIONS,
        "d": D_MODEL,
        "by_diff": by_diff,
        "by_sum": by_sum,
        "title": D.get("sinusoidal-dot-product", lang).title,
        "answer": answer,
    }
    return Question(
        key="derivations_q",
        prompt=t("derivations.page.predict_question", lang),
        options=OPTIONS,
        labels=tuple(t(f"derivations.page.option.{o}", lang) for o in OPTIONS),
        answer=answer,
        explanation=t("derivations.page.predict_explanation", lang, **facts),
        facts=facts,
    )


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="derivations",
    part="Beyond",
    page="pages/beyond/derivations.py",
    icon=":material/functions:",
    order=130,
    sources=(
        "explain.derivations.prover:verify",
        "explain.derivations.prover:_check_step",
        "explain.derivations.prover:_scalar_equal",
    ),
    link={"d": "rope-matrix-2d", "derivations_all": "false"},
    link_shows={"derivation": "rope-matrix-2d"},
)
