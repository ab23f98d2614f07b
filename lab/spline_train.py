"""Train the spline autoencoder and its PE baseline; regenerate everything in assets/spline/.

    python -m lab.spline_train                      # all of assets/spline/ (≈ 6 min of CPU, one thread)
    python -m lab.spline_train --only main          # just one part: main | baseline | alibi | sweep
    python -m lab.spline_train --out /tmp/spline    # somewhere else

Files written (all small):
    spline.safetensors, spline.json          the spline model (no PE) and its metrics
    pe-cat.safetensors, pe-cat.json          the sinusoidal-PE baseline with the same bottleneck
    alibi-cat.safetensors, alibi-cat.json    the ALiBi baseline with the same bottleneck
    lr_sweep.json                            short runs of both models at several peak learning rates

Measured (torch 2.13 CPU, one thread): ≈ 70 s of CPU for the spline model, ≈ 80 s for the baseline,
≈ 190 s for the sweep (12 runs of 300 steps). Wall time is longer on a shared machine.

Every metrics file carries the exact settings, seeds, torch version, wall time, the learning curve and
the recorded reconstruction error (MSE) on a fixed seeded test set, so a test can check that the
shipped weights reproduce it.
"""

from __future__ import annotations

import argparse
import json
import math
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from lab.spline_data import KINDS, dataset
from lab.spline_model import SplineAEConfig, SplineAutoencoder

ROOT = Path(__file__).resolve().parents[1]
ASSETS = ROOT / "assets" / "spline"
TEST_SEED, TEST_SIZE = 12345, 256  # the fixed test set every recorded error is measured on


@dataclass(frozen=True)
class TrainConfig:
    lr: float = 2e-3  # peak learning rate (Adam)
    steps: int = 1500
    batch: int = 64
    warmup: int = 50  # linear warm-up steps, then cosine decay to 10 % of the peak
    clip: float = 1.0  # gradient-norm clip; 0 turns it off
    n: int = 32  # points per curve
    n_train: int = 4096
    data_seed: int = 0  # training curves
    batch_seed: int = 1  # which curves go into which batch
    eval_every: int = 50


def lr_at(step: int, tc: TrainConfig) -> float:
    if step < tc.warmup:
        return tc.lr * (step + 1) / tc.warmup
    progress = (step - tc.warmup) / max(1, tc.steps - tc.warmup)
    return tc.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * progress)))


def held_out_set(n: int = 32) -> tuple[torch.Tensor, np.ndarray]:
    x, kinds = dataset(TEST_SIZE, n, TEST_SEED)
    return torch.from_numpy(x), kinds


@torch.no_grad()
def reconstruction_error(model: SplineAutoencoder, x: torch.Tensor) -> float:
    """Mean squared error over every point and coordinate, float32, eval mode."""
    model.eval()
    return float(((model(x) - x) ** 2).mean())


def train(mc: SplineAEConfig, tc: TrainConfig) -> tuple[SplineAutoencoder, dict]:
    """Train one model; returns it (eval mode) and its metrics. Loss: MSE of the reconstruction."""
    t0, c0 = time.perf_counter(), time.process_time()
    X = torch.from_numpy(dataset(tc.n_train, tc.n, tc.data_seed)[0])  # (N, n, 2)
    X_test, kinds = held_out_set(tc.n)
    mean_mse = float(((X_test - X.mean(dim=(0, 1))) ** 2).mean())  # predicting the mean point
    model = SplineAutoencoder(mc)
    opt = torch.optim.Adam(model.parameters(), lr=tc.lr)
    g = torch.Generator().manual_seed(tc.batch_seed)
    curve: dict[str, list[float]] = {"step": [], "train_loss": [], "test_mse": []}
    window: list[float] = []
    diverged_at: int | None = None
    for step in range(tc.steps):
        model.train()
        for group in opt.param_groups:
            group["lr"] = lr_at(step, tc)
        x = X[torch.randint(0, X.shape[0], (tc.batch,), generator=g)]  # (batch, n, 2)
        loss = ((model(x) - x) ** 2).mean()
        if not torch.isfinite(loss):
            diverged_at = step
            break
        opt.zero_grad()
        loss.backward()
        if tc.clip > 0:
            torch.nn.utils.clip_grad_norm_(model.parameters(), tc.clip)
        opt.step()
        window.append(loss.item())
        if (step + 1) % tc.eval_every == 0 or step + 1 == tc.steps:
            curve["step"].append(step + 1)
            curve["train_loss"].append(float(np.mean(window)))
            curve["test_mse"].append(reconstruction_error(model, X_test))
            window = []
    model.eval()
    finite = diverged_at is None
    test_mse = reconstruction_error(model, X_test) if finite else float("nan")
    with torch.no_grad():
        per_point = ((model(X_test) - X_test) ** 2).mean(dim=(1, 2)).numpy() if finite else None
    metrics = {
        "model": asdict(mc),
        "train": asdict(tc),
        "schedule": f"Adam, linear warm-up {tc.warmup} steps, cosine decay to 10 % of peak, clip {tc.clip}",
        "test_set": {"seed": TEST_SEED, "size": TEST_SIZE, "n": tc.n},
        "test_mse": test_mse,
        "test_mse_by_family": (
            {k: float(per_point[kinds == i].mean()) for i, k in enumerate(KINDS)} if per_point is not None else None
        ),
        "mean_prediction_mse": mean_mse,
        "diverged_at_step": diverged_at,
        "curve": curve,
        "n_params": sum(p.numel() for p in model.parameters()),
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "wall_seconds": round(time.perf_counter() - t0, 1),
        "cpu_seconds": round(time.process_time() - c0, 1),  # wall time grows on a shared machine; CPU time less
    }
    return model, metrics


def save(model: SplineAutoencoder, metrics: dict, out_dir: Path, name: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(out_dir / f"{name}.safetensors"))
    (out_dir / f"{name}.json").write_text(json.dumps(metrics, indent=1) + "\n")


def load(name: str, out_dir: Path = ASSETS) -> tuple[SplineAutoencoder, dict]:
    """A shipped model (eval mode) and its metrics."""
    metrics = json.loads((out_dir / f"{name}.json").read_text())
    model = SplineAutoencoder(SplineAEConfig(**metrics["model"]))
    model.load_state_dict(load_file(str(out_dir / f"{name}.safetensors")))
    return model.eval(), metrics


SWEEP_LRS = (1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1)
SWEEP_STEPS = 300
SWEEP_RECIPE = TrainConfig(steps=SWEEP_STEPS, eval_every=25)  # everything but the peak lr


def lr_sweep(out_dir: Path) -> dict:
    """Short runs at several peak learning rates, both models, same recipe otherwise.
    A run counts as unstable if its loss became non-finite or its final test error is no better
    than predicting the mean point."""
    runs = []
    t0 = time.perf_counter()
    for kind in ("spline", "pe-cat"):
        for lr in SWEEP_LRS:
            _, m = train(SplineAEConfig(kind=kind), replace(SWEEP_RECIPE, lr=lr))
            unstable = m["diverged_at_step"] is not None or not (m["test_mse"] < m["mean_prediction_mse"])
            runs.append(
                {
                    "kind": kind,
                    "lr": lr,
                    "test_mse": m["test_mse"],
                    "unstable": unstable,
                    "diverged_at_step": m["diverged_at_step"],
                    "mean_prediction_mse": m["mean_prediction_mse"],
                    "curve": m["curve"],
                    "wall_seconds": m["wall_seconds"],
                    "cpu_seconds": m.get("cpu_seconds"),
                }
            )
            print(f"sweep {kind:7s} lr={lr:g}: test MSE {m['test_mse']:.5f} ({m['wall_seconds']} s)", flush=True)
    result = {
        "lrs": list(SWEEP_LRS),
        "steps": SWEEP_STEPS,
        "recipe": asdict(SWEEP_RECIPE),
        "unstable_rule": "loss became non-finite, or final test MSE ≥ MSE of predicting the mean point",
        "runs": runs,
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "wall_seconds": round(time.perf_counter() - t0, 1),
    }
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "lr_sweep.json").write_text(json.dumps(result, indent=1) + "\n")
    return result


def regenerate(out_dir: Path | str = ASSETS, only: str | None = None) -> None:
    """Rebuild assets/spline/: the spline model, the PE baseline, and the learning-rate sweep."""
    torch.set_num_threads(1)
    out_dir = Path(out_dir)
    for name, part in (("spline", "main"), ("pe-cat", "baseline"), ("alibi-cat", "alibi")):
        if only in (None, part):
            model, m = train(SplineAEConfig(kind=name), TrainConfig())
            save(model, m, out_dir, name)
            print(f"{name}: test MSE {m['test_mse']:.5f} in {m['wall_seconds']} s", flush=True)
    if only in (None, "sweep"):
        lr_sweep(out_dir)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=str(ASSETS))
    ap.add_argument("--only", choices=("main", "baseline", "alibi", "sweep"))
    args = ap.parse_args()
    regenerate(args.out, args.only)


if __name__ == "__main__":
    main()
