"""What the Spline-based Transformers chapter shows, part 1: B-splines and local control, computed
from encoders/spline.py. Part 2 (the shipped autoencoders) lives in spline_models.py.

Every public function takes primitives and returns numpy arrays or dataclasses of them (or words,
when it takes `lang`), so the page can cache it and the tests can check it without Streamlit.

A B-spline *approximates* its control points: the curve is a weighted average of them. It passes
through the first and last point only with clamped knots, and, from degree 2 on, through no interior
point in general; degree 1 is the control polygon itself. control_point_contact() measures this on
the picture's own polygon, and the page says what it found.

Axis legend: t curve parameter (n_t values), K control points, p degree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch

from encoders import spline as S
from explain.bounds import bounded
from explain.chapter import Chapter
from explain.i18n import t
from explain.question import Question

MAX_CTRL = 12  # control points a learner can ask for in part 1
MIN_CTRL = 6
MAX_DEGREE = 5
KNOT_KINDS = ("clamped", "uniform")  # the radio's ids (kept in the address), named t("spline.knot.<id>")
CHANGE_TOL = 1e-9  # part 1: a curve point "moved" if it moved more than this (exact zero off the support)
ON_CURVE = 1e-6  # a control point closer than this to the curve counts as "on" it
CONTACT_GRID = 2001  # parameters sampled before refining the nearest point of the curve
GOLDEN = (math.sqrt(5) - 1) / 2


def knot_vector(kind: str, n_ctrl: int, degree: int) -> torch.Tensor:
    if kind not in KNOT_KINDS:
        raise ValueError(f"knots must be 'clamped' or 'uniform', got {kind!r}")
    return (S.clamped_knots if kind == "clamped" else S.uniform_knots)(n_ctrl, degree)


# --- the basis ---------------------------------------------------------------------------------------


@dataclass
class Basis:
    t: np.ndarray  # (n_t,) parameters across the whole knot range
    N: np.ndarray  # (n_t, K) every basis function
    knots: np.ndarray  # (K + p + 1,)
    domain: tuple[float, float]  # where the functions sum to 1
    total: np.ndarray  # (n_t,) Σ_i N_i(t)
    spans: np.ndarray  # (K,) number of non-empty knot spans each function lives on

    @property
    def max_deviation(self) -> float:
        """max |Σ_i N_i(t) − 1| inside the domain (rounding only)."""
        inside = (self.t >= self.domain[0]) & (self.t <= self.domain[1])
        return float(np.abs(self.total[inside] - 1).max())

    @property
    def knots_text(self) -> str:
        return ", ".join(f"{k:.3g}" for k in self.knots)

    @property
    def spans_text(self) -> str:
        return ", ".join(str(int(s)) for s in self.spans)


def basis(degree: int, n_ctrl: int, kind: str, n_t: int = 401) -> Basis:
    """The K basis functions over the whole knot range (outside the domain the sum drops below 1 for
    uniform knots — which is why the domain stops there)."""
    knots = knot_vector(kind, n_ctrl, degree)
    lo, hi = S.domain(knots, degree)
    t_ = torch.linspace(float(knots[0]), float(knots[-1]), n_t, dtype=torch.float64)
    t_ = torch.unique(torch.cat([t_, torch.tensor([lo, hi], dtype=torch.float64)]))
    N = S.bspline_basis(t_, knots, degree).numpy()
    k = knots.numpy()
    spans = np.array([int(np.sum(np.diff(k[i : i + degree + 2]) > 0)) for i in range(n_ctrl)])
    return Basis(t_.numpy(), N, k, (lo, hi), N.sum(axis=1), spans)


# Cache bounds (pages/beyond/spline.py): Part 1's results are a few hundred points; part 2's run the shipped
# models on one 32-point curve (small results, but each costs a forward pass).
@bounded(4)
def continuity_table(max_degree: int = MAX_DEGREE, lang: str | None = None) -> list[dict[str, object]]:
    """Per degree: the smoothness at a simple interior knot and how many spans a function covers.
    Column names and words in `lang` (default: the current run's language)."""

    def w(key: str, **values: object) -> str:
        return t(f"spline.table.{key}", lang, **values)

    rows: list[dict[str, object]] = []
    for p in range(max_degree + 1):
        order = S.continuity_order(p)
        rows.append(
            {
                w("degree"): p,
                w("name"): w(f"names.{p}"),
                w("support"): w("span_many" if p else "span_one", n=p + 1),
                w("smoothness"): "C" + str(order).translate(_SUPERSCRIPT) + (w("jumps") if p == 0 else ""),
                w("continuous"): w("curve") if p == 1 else w("derivative", k=order) if p > 1 else w("nothing"),
            }
        )
    return rows


_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


# --- local control -----------------------------------------------------------------------------------


def default_polygon(n_ctrl: int) -> np.ndarray:
    """A zig-zag control polygon (K, 2) that fills the picture: x evenly spread, y alternating."""
    x = np.linspace(-1.0, 1.0, n_ctrl)
    y = 0.6 * np.where(np.arange(n_ctrl) % 2 == 0, -1.0, 1.0) * (0.6 + 0.4 * np.cos(np.linspace(0, np.pi, n_ctrl)))
    return np.stack([x, y], axis=1)


@dataclass
class LocalEdit:
    t: np.ndarray  # (n_t,)
    ctrl_before: np.ndarray  # (K, 2)
    ctrl_after: np.ndarray  # (K, 2)
    bspline_before: np.ndarray  # (n_t, 2)
    bspline_after: np.ndarray  # (n_t, 2)
    bspline_changed: np.ndarray  # (n_t,) bool
    bezier_before: np.ndarray  # (n_t, 2)
    bezier_after: np.ndarray  # (n_t, 2)
    bezier_changed: np.ndarray  # (n_t,) bool
    support: tuple[float, float]  # parameter interval the moved point influences
    bspline_changed_fraction: float
    bezier_changed_fraction: float


def local_edit(n_ctrl: int, degree: int, kind: str, index: int, dx: float, dy: float, n_t: int = 401) -> LocalEdit:
    """Move control point `index` by (dx, dy): which stretch of the B-spline changes, and of the
    Bézier curve of the same control points."""
    P = torch.from_numpy(default_polygon(n_ctrl))  # (K, 2)
    Q = P.clone()
    Q[index] += torch.tensor([dx, dy], dtype=torch.float64)
    knots = knot_vector(kind, n_ctrl, degree)
    t_ = S.sample_positions(n_t, knots, degree)  # (n_t,)
    before, after = S.bspline_curve(P, t_, knots, degree), S.bspline_curve(Q, t_, knots, degree)
    u = torch.linspace(0, 1, n_t, dtype=torch.float64)
    zb, za = S.bezier_curve(P, u), S.bezier_curve(Q, u)
    moved = ((after - before).norm(dim=1) > CHANGE_TOL).numpy()
    moved_z = ((za - zb).norm(dim=1) > CHANGE_TOL).numpy()
    return LocalEdit(
        t_.numpy(),
        P.numpy(),
        Q.numpy(),
        before.numpy(),
        after.numpy(),
        moved,
        zb.numpy(),
        za.numpy(),
        moved_z,
        S.support(knots, degree, index),
        float(moved.mean()),
        float(moved_z.mean()),
    )


def spans_moved(n_ctrl: int, degree: int, kind: str, index: int) -> tuple[int, int]:
    """(how many knot spans of the domain P_index acts on, how many non-empty spans the domain has):
    the spans [t_k, t_k+1) of the same knot vector the picture uses that lie inside
    S.support(knots, p, index) — the interval the local-edit caption reports. At most p + 1;
    fewer near the ends of a clamped or uniform knot vector, where part of [t_i, t_i+p+1] lies
    outside the domain or has zero length."""
    knots = knot_vector(kind, n_ctrl, degree)
    k = knots.numpy()
    lo, hi = S.domain(knots, degree)
    a, b = S.support(knots, degree, index)
    spans = [(k[m], k[m + 1]) for m in range(len(k) - 1) if k[m + 1] > k[m] and lo <= k[m] and k[m + 1] <= hi]
    return sum(1 for s, e in spans if a <= s and e <= b), len(spans)


@dataclass(frozen=True)
class LocalSection:
    question: Question | None  # None when the domain is one knot span: nothing to tell apart
    note: str  # what the page says instead of a question ("" when there is a question)


def spans_option_label(n: int, n_spans: int, lang: str) -> str:
    return t("spline.span_one" if n == 1 else "spline.span_many", lang, n=n) + (
        t("spline.all_of_them", lang) if n == n_spans else ""
    )


def local_section(n_ctrl: int, degree: int, kind: str, index: int, lang: str) -> LocalSection:
    """The predict question of the local-control section: on how many knot spans can moving P_index
    change the curve? Options: 1 … min(p + 1, spans), and all the spans; the answer and every fact
    of the explanation come from the knot vector the picture uses."""
    moved, n_spans = spans_moved(n_ctrl, degree, kind, index)
    kind_word = t(f"spline.knot.{kind}", lang)
    if n_spans < 2:
        return LocalSection(None, t("spline.single_span", lang, n=n_ctrl, degree=degree, kind=kind_word))
    lo, hi = S.support(knot_vector(kind, n_ctrl, degree), degree, index)
    inside = moved == degree + 1
    facts: dict[str, object] = {
        "moved": moved,
        "n_spans": n_spans,
        "point": index,
        "degree": degree,
        "end": index + degree + 1,
        "p1": degree + 1,
        "inside": inside,
        "lo": lo,
        "hi": hi,
    }
    options = tuple(sorted(set(range(1, min(degree + 1, n_spans) + 1)) | {n_spans}))
    explanation = (
        t("spline.predict_a", lang, **facts)
        + t("spline.predict_inside" if inside else "spline.predict_ends", lang)
        + t("spline.predict_rest", lang, lo=lo, hi=hi)
    )
    question = Question(
        key="spline_q",
        prompt=t("spline.predict_q", lang, point=index, kind=kind_word, degree=degree, n=n_ctrl, n_spans=n_spans),
        options=options,
        labels=tuple(spans_option_label(o, n_spans, lang) for o in options),
        answer=moved,
        explanation=explanation,
        facts=facts,
    )
    return LocalSection(question, "")


# --- the curve approximates its control points ------------------------------------------------------


@dataclass(frozen=True)
class Contact:
    """Which control points of the picture's polygon the B-spline passes through (before any edit)."""

    through: tuple[int, ...]  # control points within ON_CURVE of the curve
    distances: tuple[float, ...]  # (K,) each control point's distance to the curve
    nearest_miss: float  # the smallest distance among the points it does not pass through (inf if none)


def _distances_to_curve(points: np.ndarray, knots: torch.Tensor, degree: int) -> np.ndarray:
    """(K,) the distance from each control point to the B-spline of `points` over its domain: the
    nearest of CONTACT_GRID samples, then a golden-section search on the two grid steps around it,
    for every point at once."""
    ctrl = torch.from_numpy(points)  # (K, 2)
    lo, hi = S.domain(knots, degree)
    grid = torch.linspace(lo, hi, CONTACT_GRID, dtype=torch.float64)  # (n_t,)
    d = torch.cdist(ctrl, S.bspline_curve(ctrl, grid, knots, degree))  # (K, n_t)
    k = torch.argmin(d, dim=1)  # (K,)
    a = grid[(k - 1).clamp(min=0)]  # (K,)
    b = grid[(k + 1).clamp(max=CONTACT_GRID - 1)]  # (K,)
    n = len(points)
    for _ in range(40):  # the bracket (two grid steps, 1e-3) shrinks by 0.618 a step: ~4e-12 after 40
        c, e = b - GOLDEN * (b - a), a + GOLDEN * (b - a)
        both = S.bspline_curve(ctrl, torch.cat([c, e]), knots, degree)  # (2K, 2)
        dc, de = (both[:n] - ctrl).norm(dim=1), (both[n:] - ctrl).norm(dim=1)  # (K,), (K,)
        left = dc < de
        a, b = torch.where(left, a, c), torch.where(left, e, b)
    best = (S.bspline_curve(ctrl, (a + b) / 2, knots, degree) - ctrl).norm(dim=1)  # (K,)
    return np.asarray(torch.minimum(best, d.min(dim=1).values).numpy())


def control_point_contact(n_ctrl: int, degree: int, kind: str) -> Contact:
    """How close the B-spline of the picture's polygon comes to each of its control points."""
    distances = tuple(
        float(x) for x in _distances_to_curve(default_polygon(n_ctrl), knot_vector(kind, n_ctrl, degree), degree)
    )
    through = tuple(i for i, d in enumerate(distances) if d < ON_CURVE)
    misses = [d for i, d in enumerate(distances) if i not in through]
    return Contact(through, distances, min(misses) if misses else math.inf)


def contact_line(n_ctrl: int, degree: int, kind: str, lang: str) -> str:
    """What the picture shows about the curve and its control points, in words."""
    c = control_point_contact(n_ctrl, degree, kind)
    last = n_ctrl - 1
    if len(c.through) == n_ctrl:
        return t("spline.contact_all", lang, k=n_ctrl)
    if c.through == (0, last):
        return t("spline.contact_ends", lang, last=last, inner=last - 1, gap=c.nearest_miss)
    if not c.through:
        kind_word = t(f"spline.knot.{kind}", lang)
        return t("spline.contact_none", lang, k=n_ctrl, last=last, gap=c.nearest_miss, kind=kind_word)
    names = ", ".join(f"P{i}" for i in c.through)
    return t("spline.contact_some", lang, points=names, gap=c.nearest_miss)


# -- the chapter, declared once (ui/chapters.py collects it) ----------------------------------------
CHAPTER = Chapter(
    key="spline",
    part="Beyond",
    page="pages/beyond/spline.py",
    icon=":material/gesture:",
    order=120,
    papers=(S.PAPER,),
    sources=(
        "encoders.spline:bspline_basis",
        "encoders.spline:clamped_knots",
        "encoders.spline:uniform_knots",
        "encoders.spline:bspline_curve",
        "encoders.spline:SplineBottleneck.forward",
    ),
    link={
        "spline_degree": "2",
        "spline_k": "8",
        "spline_knots": "uniform",
        "spline_shape": "arc",
        "spline_blend_b": "spiral",
    },
    link_shows={
        "spline_degree": 2,
        "spline_k": 8,
        "spline_knots": "uniform",
        "spline_shape": "arc",
        "spline_blend_b": "spiral",
    },
)
