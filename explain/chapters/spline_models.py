"""What the Spline-based Transformers chapter shows, part 2: the shipped autoencoders from
assets/spline/ (lab/spline_model.py) run on one curve, their metrics and the learning-rate sweep.

Every public function takes primitives and returns numpy arrays, dataclasses of them, or words (when
it takes `lang`), so the page can cache it. Nothing here is a result of the paper: the paper's numbers
are unknown (METHODS §12), every number is measured on this toy.

Axis legend: n points of a curve, K control points, D latent dimension.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import numpy as np
import torch

from encoders import spline as S
from explain.bounds import bounded
from explain.i18n import t
from lab import spline_data
from lab.spline_model import SplineAutoencoder
from lab.spline_train import ASSETS, load

MODELS = ("spline", "pe-cat", "alibi-cat")  # the shipped autoencoders in assets/spline/
SWEEP_MODELS = ("spline", "pe-cat")  # the lr sweep trains these two
KINDS = spline_data.KINDS  # the shape families (ids kept in the address), named t("spline.shape.<id>")
LETTER_NAMES = spline_data.LETTER_NAMES


@lru_cache(maxsize=1)  # read-only weights, loaded once per process; every call below is no_grad
def _models() -> dict[str, tuple[SplineAutoencoder, dict[str, Any]]]:
    torch.set_num_threads(1)
    return {name: load(name) for name in MODELS}


def shipped_metrics() -> dict[str, Any]:
    """The metrics JSON of the shipped models and the lr sweep (without the weights)."""
    out: dict[str, Any] = {name: m for name, (_, m) in _models().items()}
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


def _mse(y: np.ndarray, target: np.ndarray) -> float:
    return float(((y - target) ** 2).mean())


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
    test_mse: tuple[float, float, float]  # each model's error on the shipped test set (spline, PE, ALiBi)

    def table(self, lang: str) -> list[dict[str, object]]:
        """The error table beside the picture: this curve and the test set, per model."""
        cols = [t("spline.col_model", lang), t("spline.col_this_curve", lang), t("spline.col_test_set", lang)]
        names = (t("spline.row_spline", lang), t("spline.model_pe", lang), t("spline.model_alibi", lang))
        mine = (self.spline_mse, self.pe_cat_mse, self.alibi_cat_mse)
        return [
            dict(zip(cols, (name, round(a, 5), round(b, 5)), strict=True))
            for name, a, b in zip(names, mine, self.test_mse, strict=True)
        ]


def _input(kind: str, n: int, a: float, b: float, c: float, letter: str) -> torch.Tensor:
    return torch.from_numpy(spline_data.curve(kind, n, a=a, b=b, c=c, letter=letter).astype(np.float32))[None]


@torch.no_grad()
def reconstruct(kind: str, a: float, b: float, c: float, letter: str, n: int = 32) -> Reconstruction:
    """The three shipped models on one curve; the spline model's latent trajectory in 2-D."""
    models = _models()
    spline, _ = models["spline"]
    pe_cat, _ = models["pe-cat"]
    alibi_cat, _ = models["alibi-cat"]
    x = _input(kind, n, a, b, c, letter)  # (1, n, 2)
    P = spline.encode(x)  # (1, K, D)
    traj = spline.trajectory(P, n)[0].numpy()  # (n, D)
    ctrl = P[0].numpy()  # (K, D)
    mean, comps, _, explained = _pca(np.concatenate([traj, ctrl]))
    ys, yp, ya = spline.decode(P, n)[0].numpy(), pe_cat(x)[0].numpy(), alibi_cat(x)[0].numpy()
    pts = x[0].numpy()
    t_ = S.sample_positions(n, spline.spline.knots, spline.config.degree).numpy()
    test = tuple(float(models[m][1]["test_mse"]) for m in MODELS)
    return Reconstruction(
        pts,
        ys,
        yp,
        ya,
        _mse(ys, pts),
        _mse(yp, pts),
        _mse(ya, pts),
        (traj - mean) @ comps.T,
        (ctrl - mean) @ comps.T,
        explained,
        t_,
        (test[0], test[1], test[2]),
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
    pe_share_same_positions: float  # share of the baseline's change on those same positions (NaN: no change)
    explained: float

    @property
    def labels(self) -> list[str]:
        """The bar charts' positions, "0" … "n − 1"."""
        return [str(j) for j in range(len(self.change))]

    @property
    def support_indices(self) -> tuple[int, ...]:
        return tuple(int(j) for j in np.flatnonzero(self.in_support))

    @property
    def support_share(self) -> float:
        """The share of positions whose sample lies in the support (the "chance" level)."""
        return float(self.in_support.mean())

    @property
    def pe_moved(self) -> bool:
        return bool(np.isfinite(self.pe_share_same_positions))


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
    t_ = S.sample_positions(n, knots, spline.config.degree).numpy()
    inside = (t_ > lo) & (t_ < hi)
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

    def mix(m: SplineAutoencoder) -> torch.Tensor:
        return (1 - alpha) * m.encode(xa) + alpha * m.encode(xb)  # (1, K, D)

    return Blend(
        xa[0].numpy(),
        xb[0].numpy(),
        spline.decode(mix(spline), n)[0].numpy(),
        pe_cat.decode(mix(pe_cat), n)[0].numpy(),
        ((1 - alpha) * xa + alpha * xb)[0].numpy(),
    )


# --- the shipped metrics, for a learner ---------------------------------------------------------------


@dataclass(frozen=True)
class SweepView:
    steps: int  # training steps of every sweep run
    lrs: tuple[float, ...]
    curves: dict[str, tuple[np.ndarray, dict[str, np.ndarray]]]  # model → (steps, lr name → test MSE)
    mean_mse: dict[str, float]  # model → MSE of always predicting the mean point
    table: list[dict[str, object]]  # per peak lr: each model's final test MSE and status
    best_line: str
    verdict: str  # which runs were unstable, and the rule


@dataclass(frozen=True)
class ShippedView:
    recon_caption: str
    baseline_table: list[dict[str, object]]
    curve_steps: np.ndarray  # (evals,) the learning curves' steps
    curves: dict[str, np.ndarray]  # name → (evals,) test MSE of each shipped model
    train_caption: str
    sweep: SweepView | None  # None until the sweep has been generated


def sweep_curves(kind: str, lang: str | None = None) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The lr sweep's test-error curves of one model on the full step grid; a run that diverged
    stops early and is padded with NaN (drawn as a gap) after its last evaluation. The series are
    named in `lang` ("lr 0.01 (unstable)")."""
    sweep = shipped_metrics()["lr_sweep"]
    steps = np.array(sorted({s for r in sweep["runs"] for s in r["curve"]["step"]}))
    out: dict[str, np.ndarray] = {}
    for r in sweep["runs"]:
        if r["kind"] != kind:
            continue
        y = np.full(steps.size, np.nan)
        got = dict(zip(r["curve"]["step"], r["curve"]["test_mse"], strict=False))
        for k, s in enumerate(steps):
            y[k] = got.get(int(s), np.nan)
        out[t("spline.sweep_lr", lang, lr=r["lr"]) + (t("spline.sweep_unstable", lang) if r["unstable"] else "")] = y
    return steps, out


def run_status(run: dict[str, Any], lang: str) -> str:
    """A sweep run in words: unstable by lab.spline_train's rule (non-finite loss, or final test MSE
    ≥ the mean point's), barely learned (error above half the mean point's), or learned."""
    if run["unstable"]:
        diverged = run["diverged_at_step"]
        return t("spline.status_unstable", lang) + (
            t("spline.status_diverged", lang, step=diverged) if diverged is not None else ""
        )
    # Not unstable by the rule, but a learner should not read "ok" next to an error near the mean's.
    barely = run["test_mse"] > 0.5 * run["mean_prediction_mse"]
    return t("spline.status_barely" if barely else "spline.status_learned", lang)


def _sweep_view(sweep: dict[str, Any], lang: str) -> SweepView:
    names = {"spline": t("spline.model_spline_col", lang), "pe-cat": t("spline.model_pe", lang)}
    by = {(r["kind"], r["lr"]): r for r in sweep["runs"]}
    table: list[dict[str, object]] = []
    for lr in sweep["lrs"]:
        row: dict[str, object] = {t("spline.col_peak_lr", lang): lr}
        for kind in SWEEP_MODELS:
            run = by[(kind, lr)]
            row[t("spline.col_final", lang, model=names[kind])] = run["test_mse"]
            row[names[kind]] = run_status(run, lang)
        table.append(row)
    runs = {k: [r for r in sweep["runs"] if r["kind"] == k] for k in SWEEP_MODELS}
    best = {k: min(runs[k], key=lambda r: r["test_mse"]) for k in SWEEP_MODELS}
    best_line = t(
        "spline.best",
        lang,
        steps=sweep["steps"],
        lr_s=best["spline"]["lr"],
        mse_s=best["spline"]["test_mse"],
        lr_p=best["pe-cat"]["lr"],
        mse_p=best["pe-cat"]["test_mse"],
    )
    unstable = [
        t("spline.unstable_run", lang, model=names[r["kind"]], lr=r["lr"]) for r in sweep["runs"] if r["unstable"]
    ]
    verdict = (
        t("spline.verdict_unstable", lang, runs="; ".join(unstable))
        if unstable
        else t("spline.verdict_stable", lang, lr=max(sweep["lrs"]))
    )
    # The rule is written out in the catalogue (the sweep file states it in English only); both say
    # what lab.spline_train computes: non-finite loss, or final test MSE ≥ the mean point's.
    return SweepView(
        int(sweep["steps"]),
        tuple(sweep["lrs"]),
        {k: sweep_curves(k, lang) for k in SWEEP_MODELS},
        {k: float(runs[k][0]["mean_prediction_mse"]) for k in SWEEP_MODELS},
        table,
        best_line,
        verdict + t("spline.rule", lang),
    )


# Cache bounds (pages/beyond/spline.py): Part 1's results are a few hundred points; part 2's run the shipped
# models on one 32-point curve (small results, but each costs a forward pass).
@bounded(4)
def shipped_view(lang: str) -> ShippedView:
    """Everything part 2 says about the shipped models and the sweep, in `lang`."""
    metrics = shipped_metrics()
    sm, pm, am = metrics["spline"], metrics["pe-cat"], metrics["alibi-cat"]
    shape = {k: t(f"spline.shape.{k}", lang) for k in KINDS}
    rows: list[dict[str, object]] = []
    for name, m in (("model_spline", sm), ("row_pe", pm), ("row_alibi", am)):
        row: dict[str, object] = {
            t("spline.col_model", lang): t(f"spline.{name}", lang),
            t("spline.col_test_mse", lang): round(m["test_mse"], 5),
        }
        row.update({shape[k]: round(v, 5) for k, v in m["test_mse_by_family"].items()})
        row.update(
            {
                t("spline.col_parameters", lang): m["n_params"],
                t("spline.col_steps", lang): m["train"]["steps"],
                t("spline.col_peak_lr", lang): m["train"]["lr"],
                t("spline.col_cpu", lang): m["cpu_seconds"],
            }
        )
        rows.append(row)
    short = t("spline.model_spline_short", lang)
    curves = {
        t("spline.curve_test_mse", lang, model=short): np.asarray(sm["curve"]["test_mse"]),
        t("spline.curve_test_mse", lang, model=t("spline.model_pe", lang)): np.asarray(pm["curve"]["test_mse"]),
        t("spline.curve_test_mse", lang, model=t("spline.model_alibi", lang)): np.asarray(am["curve"]["test_mse"]),
    }
    # The schedule is rebuilt from the recipe's numbers (the metrics file's "schedule" text is English only).
    train_caption = t(
        "spline.train_caption",
        lang,
        schedule=t("spline.schedule", lang, warmup=sm["train"]["warmup"], clip=sm["train"]["clip"]),
        batch=sm["train"]["batch"],
        n_train=sm["train"]["n_train"],
        seed=sm["train"]["data_seed"],
        torch=sm["torch"],
        threads=sm["threads"],
    )
    recon_caption = t(
        "spline.recon_caption",
        lang,
        size=sm["test_set"]["size"],
        seed=sm["test_set"]["seed"],
        mean=sm["mean_prediction_mse"],
    )
    sweep = metrics["lr_sweep"]
    return ShippedView(
        recon_caption,
        rows,
        np.asarray(sm["curve"]["step"]),
        curves,
        train_caption,
        None if sweep is None else _sweep_view(sweep, lang),
    )
