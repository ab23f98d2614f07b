"""What the Spline-based Transformers chapter shows (numbers only).

Part 1 computes B-spline pictures from encoders/spline.py; part 2 runs the shipped autoencoders from
assets/spline/ (lab/spline_model.py) on one curve. Every public function takes primitives and returns
numpy arrays or dataclasses of them, so pages can cache it with st.cache_data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import torch

from encoders import spline as S
from explain.i18n import t
from lab import spline_data
from lab.spline_train import ASSETS, load

MODELS = ("spline", "pe-cat", "alibi-cat")  # the shipped autoencoders in assets/spline/
MAX_CTRL = 12  # control points a learner can ask for in part 1
CHANGE_TOL = 1e-9  # part 1: a curve point "moved" if it moved more than this (exact zero off the support)


def knot_vector(kind: str, n_ctrl: int, degree: int) -> torch.Tensor:
    if kind not in ("clamped", "uniform"):
        raise ValueError(f"knots must be 'clamped' or 'uniform', got {kind!r}")
    return (S.clamped_knots if kind == "clamped" else S.uniform_knots)(n_ctrl, degree)


# --- part 1: the basis -------------------------------------------------------------------------------


@dataclass
class Basis:
    t: np.ndarray  # (n_t,) parameters across the whole knot range
    N: np.ndarray  # (n_t, K) every basis function
    knots: np.ndarray  # (K + p + 1,)
    domain: tuple[float, float]  # where the functions sum to 1
    total: np.ndarray  # (n_t,) Σ_i N_i(t)
    spans: np.ndarray  # (K,) number of non-empty knot spans each function lives on


def basis(degree: int, n_ctrl: int, kind: str, n_t: int = 401) -> Basis:
    """The K basis functions over the whole knot range (outside the domain the sum drops below 1 for
    uniform knots — which is why the domain stops there)."""
    knots = knot_vector(kind, n_ctrl, degree)
    lo, hi = S.domain(knots, degree)
    t = torch.linspace(float(knots[0]), float(knots[-1]), n_t, dtype=torch.float64)
    t = torch.unique(torch.cat([t, torch.tensor([lo, hi], dtype=torch.float64)]))
    N = S.bspline_basis(t, knots, degree).numpy()
    k = knots.numpy()
    spans = np.array([int(np.sum(np.diff(k[i : i + degree + 2]) > 0)) for i in range(n_ctrl)])
    return Basis(t.numpy(), N, k, (lo, hi), N.sum(axis=1), spans)


def continuity_table(max_degree: int = 5, lang: str | None = None) -> list[dict]:
    """Per degree: the smoothness at a simple interior knot and how many spans a function covers.
    Column names and words in `lang` (default: the current run's language)."""
    w = lambda key, **v: t(f"spline.table.{key}", lang, **v)  # noqa: E731
    rows = []
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


# --- part 1: local control ---------------------------------------------------------------------------


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
    Bézier curve through the same points."""
    P = torch.from_numpy(default_polygon(n_ctrl))  # (K, 2)
    Q = P.clone()
    Q[index] += torch.tensor([dx, dy], dtype=torch.float64)
    knots = knot_vector(kind, n_ctrl, degree)
    t = S.sample_positions(n_t, knots, degree)  # (n_t,)
    before, after = S.bspline_curve(P, t, knots, degree), S.bspline_curve(Q, t, knots, degree)
    u = torch.linspace(0, 1, n_t, dtype=torch.float64)
    zb, za = S.bezier_curve(P, u), S.bezier_curve(Q, u)
    ch = ((after - before).norm(dim=1) > CHANGE_TOL).numpy()
    chz = ((za - zb).norm(dim=1) > CHANGE_TOL).numpy()
    return LocalEdit(
        t.numpy(),
        P.numpy(),
        Q.numpy(),
        before.numpy(),
        after.numpy(),
        ch,
        zb.numpy(),
        za.numpy(),
        chz,
        S.support(knots, degree, index),
        float(ch.mean()),
        float(chz.mean()),
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


# --- part 2: the trained autoencoders ----------------------------------------------------------------


@lru_cache(maxsize=1)  # read-only weights, loaded once per process; every call below is no_grad
def _models():
    torch.set_num_threads(1)
    return {name: load(name) for name in MODELS}


def shipped_metrics() -> dict:
    """The metrics JSON of both shipped models and the lr sweep (without the weights)."""
    out = {name: m for name, (_, m) in _models().items()}
    sweep = ASSETS / "lr_sweep.json"
    out["lr_sweep"] = json.loads(sweep.read_text()) if sweep.exists() else None  # None: not regenerated yet
    return out


def _pca(points: np.ndarray, k: int = 2) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Mean (D,), the top-k principal directions (k, D), their std (k,), and the variance share they
    explain — numpy SVD of the centred rows."""
    mean = points.mean(axis=0)
    _, s, vt = np.linalg.svd(points - mean, full_matrices=False)
    var = s**2 / max(1, points.shape[0] - 1)
    return mean, vt[:k], np.sqrt(var[:k]), float(var[:k].sum() / var.sum())


@dataclass
class Reconstruction:
    points: np.ndarray  # (n, 2) the input curve
    spline: np.ndarray  # (n, 2) the spline model's reconstruction
    pe_cat: np.ndarray  # (n, 2) the sinusoidal baseline's reconstruction
    alibi_cat: np.ndarray  # (n, 2) the ALiBi baseline's reconstruction
    spline_mse: float
    pe_cat_mse: float
    alibi_cat_mse: float
    traj_2d: np.ndarray  # (n, 2) latent trajectory samples, PCA-projected
    ctrl_2d: np.ndarray  # (K, 2) control points, same projection
    explained: float  # variance share of the two components shown
    t: np.ndarray  # (n,) the spline parameter of each sample


def _input(kind: str, n: int, a: float, b: float, c: float, letter: str) -> torch.Tensor:
    return torch.from_numpy(spline_data.curve(kind, n, a=a, b=b, c=c, letter=letter).astype(np.float32))[None]


@torch.no_grad()
def reconstruct(kind: str, a: float, b: float, c: float, letter: str, n: int = 32) -> Reconstruction:
    """The three shipped models on one curve; the spline model's latent trajectory in 2-D."""
    models = _models()
    spline, _ = models["spline"]
    pe_cat, _ = models["pe-cat"]
    x = _input(kind, n, a, b, c, letter)  # (1, n, 2)
    P = spline.encode(x)  # (1, K, D)
    traj = spline.trajectory(P, n)[0].numpy()  # (n, D)
    ctrl = P[0].numpy()  # (K, D)
    mean, comps, _, explained = _pca(np.concatenate([traj, ctrl]))
    ys, yp, ya = spline.decode(P, n)[0].numpy(), pe_cat(x)[0].numpy(), models["alibi-cat"][0](x)[0].numpy()
    pts = x[0].numpy()
    t = S.sample_positions(n, spline.spline.knots, spline.config.degree).numpy()
    mse = lambda y: float(((y - pts) ** 2).mean())  # noqa: E731
    return Reconstruction(
        pts, ys, yp, ya, mse(ys), mse(yp), mse(ya), (traj - mean) @ comps.T, (ctrl - mean) @ comps.T, explained, t
    )


@dataclass
class LatentEdit:
    traj_2d: np.ndarray  # (n, 2) before
    ctrl_2d: np.ndarray  # (K, 2) before
    traj_2d_after: np.ndarray  # (n, 2)
    ctrl_2d_after: np.ndarray  # (K, 2)
    decoded: np.ndarray  # (n, 2) before the edit
    decoded_after: np.ndarray  # (n, 2)
    change: np.ndarray  # (n,) |decoded_after − decoded| per position
    in_support: np.ndarray  # (n,) bool: sample j's parameter lies in the moved point's support
    share_in_support: float  # Σ change inside the support / Σ change
    pe_change: np.ndarray  # (n,) the same kind of edit on the PE baseline's latent vector
    pe_share_same_positions: float  # share of the baseline's change on those same positions
    explained: float


@torch.no_grad()
def edit_latent(
    kind: str, a: float, b: float, c: float, letter: str, index: int, along1: float, along2: float, n: int = 32
) -> LatentEdit:
    """Move control point `index` of the spline model by (along1, along2) standard deviations along
    the two principal directions of this curve's latent trajectory, and decode. The same move (along
    the baseline's own principal directions of its K latent vectors) is applied to the PE baseline."""
    models = _models()
    spline, _ = models["spline"]
    pe_cat, _ = models["pe-cat"]
    x = _input(kind, n, a, b, c, letter)
    P = spline.encode(x)  # (1, K, D)
    traj = spline.trajectory(P, n)[0].numpy()
    mean, comps, std, explained = _pca(np.concatenate([traj, P[0].numpy()]))
    delta = along1 * std[0] * comps[0] + along2 * std[1] * comps[1]  # (D,)
    Q = P.clone()
    Q[0, index] += torch.from_numpy(delta.astype(np.float32))
    traj_q = spline.trajectory(Q, n)[0].numpy()
    y0, y1 = spline.decode(P, n)[0].numpy(), spline.decode(Q, n)[0].numpy()
    change = np.linalg.norm(y1 - y0, axis=1)
    knots = spline.spline.knots
    lo, hi = S.support(knots, spline.config.degree, index)
    t = S.sample_positions(n, knots, spline.config.degree).numpy()
    inside = (t > lo) & (t < hi)
    share = float(change[inside].sum() / change.sum()) if change.sum() > 0 else 1.0
    # The baseline: its K latent vectors have no place along the sequence; move vector `index` alike.
    L = pe_cat.encode(x)  # (1, K, D)
    _, pcomps, pstd, _ = _pca(L[0].numpy())
    L2 = L.clone()
    L2[0, index] += torch.from_numpy((along1 * pstd[0] * pcomps[0] + along2 * pstd[1] * pcomps[1]).astype(np.float32))
    pe_change = np.linalg.norm(pe_cat.decode(L2, n)[0].numpy() - pe_cat.decode(L, n)[0].numpy(), axis=1)
    pe_share = float(pe_change[inside].sum() / pe_change.sum()) if pe_change.sum() > 0 else float("nan")
    return LatentEdit(
        (traj - mean) @ comps.T,
        (P[0].numpy() - mean) @ comps.T,
        (traj_q - mean) @ comps.T,
        (Q[0].numpy() - mean) @ comps.T,
        y0,
        y1,
        change,
        inside,
        share,
        pe_change,
        pe_share,
        explained,
    )


@dataclass
class Blend:
    a: np.ndarray  # (n, 2) input A
    b: np.ndarray  # (n, 2) input B
    spline: np.ndarray  # (n, 2) decoded from (1 − α)·P_A + α·P_B
    pe_cat: np.ndarray  # (n, 2) the baseline, blending its latent vectors the same way
    straight: np.ndarray  # (n, 2) (1 − α)·A + α·B point by point, for reference


@torch.no_grad()
def blend(kind_a: str, letter_a: str, kind_b: str, letter_b: str, alpha: float, n: int = 32) -> Blend:
    """Interpolate two curves by blending their control points (shape parameters at their middle)."""
    models = _models()
    spline, _ = models["spline"]
    pe_cat, _ = models["pe-cat"]
    xa = _input(kind_a, n, 0.5, 0.5, 0.5, letter_a)  # every shape parameter at the middle of its range
    xb = _input(kind_b, n, 0.5, 0.5, 0.5, letter_b)
    mix = lambda m: (1 - alpha) * m.encode(xa) + alpha * m.encode(xb)  # noqa: E731  (1, K, D)
    return Blend(
        xa[0].numpy(),
        xb[0].numpy(),
        spline.decode(mix(spline), n)[0].numpy(),
        pe_cat.decode(mix(pe_cat), n)[0].numpy(),
        ((1 - alpha) * xa + alpha * xb)[0].numpy(),
    )


def sweep_curves(kind: str, lang: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The lr sweep's test-error curves of one model on the full step grid; a run that diverged
    stops early and is padded with NaN (drawn as a gap) after its last evaluation. The series are
    named in `lang` ("lr 0.01 (unstable)"); a cached caller must pass it."""
    sweep = shipped_metrics()["lr_sweep"]
    steps = np.array(sorted({s for r in sweep["runs"] for s in r["curve"]["step"]}))
    out = {}
    for r in sweep["runs"]:
        if r["kind"] != kind:
            continue
        y = np.full(steps.size, np.nan)
        got = dict(zip(r["curve"]["step"], r["curve"]["test_mse"], strict=False))
        for k, s in enumerate(steps):
            y[k] = got.get(int(s), np.nan)
        out[t("spline.sweep_lr", lang, lr=r["lr"]) + (t("spline.sweep_unstable", lang) if r["unstable"] else "")] = y
    return steps, out
