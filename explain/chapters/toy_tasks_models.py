"""The toy-task lab's models: the shipped checkpoints (what they are made of, and a look inside one
on a string the learner types) and the live trainer (its settings, progress and results, as the page
shows them). Numbers and words only, no Streamlit.

Axis legend: n tokens of the typed string, i query, j key; heads are listed layer by layer.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import torch

from explain.bounds import bounded
from explain.i18n import t
from lab import tasks as T
from lab.model import TinyTransformer
from lab.service import TrainingService
from lab.shipped import ENCODINGS, TOY_DIR, shipped_config
from lab.train import Progress, TrainConfig, load

from .toy_tasks import split_short, toy_intervals

LIVE_POINTS = 40  # about this many points on the live curve, whatever the number of steps


# --- live training -------------------------------------------------------------------------------


@bounded(1)  # one trainer per server: the queue every learner shares
def training_service() -> TrainingService:
    """One trainer per server, shared by every session: one training at a time on this machine."""
    return TrainingService()


def training_config(task: str, encoding: str, steps: int, seed: int) -> TrainConfig:
    """The shipped run's settings with the learner's steps and seed (the service checks their range)."""
    return replace(
        shipped_config(task, encoding), steps=int(steps), seed=int(seed), curve_every=max(5, int(steps) // LIVE_POINTS)
    )


def live_curve(progress: Progress) -> tuple[np.ndarray, np.ndarray]:
    """(steps, mean training loss) of a live run so far."""
    return np.array([s for s, _, _ in progress.curve]), np.array([loss for _, loss, _ in progress.curve])


def live_table(metrics: dict[str, Any], lang: str | None = None, directory: str = str(TOY_DIR)) -> dict[str, list[Any]]:
    """A finished live run's errors per split, beside the shipped seeds' mean and 95% interval for
    the same task and encoding (one more seed is one more dot against that spread)."""
    res = metrics["results"]
    settings = metrics.get("settings", {})
    shipped = toy_intervals(settings.get("task", ""), settings.get("encoding", ""), directory) if settings else None
    return {
        t("toy_tasks.live.split", lang): [split_short(s, lang) for s in res],
        t("toy_tasks.live.error", lang): [res[s]["error"] for s in res],
        t("toy_tasks.live.wrong", lang): [res[s]["errors"] for s in res],
        t("toy_tasks.live.answers", lang): [res[s]["answers"] for s in res],
        t("toy_tasks.live2.shipped", lang): [shipped[s].text() if shipped and s in shipped else "—" for s in res],
    }


# --- the shipped models -------------------------------------------------------------------------


@bounded(len(T.TASKS) * len(ENCODINGS))  # every shipped checkpoint once, read-only (eval mode)
def load_model(task: str, encoding: str, directory: str = str(TOY_DIR)) -> TinyTransformer | None:
    """The shipped model (eval mode, gradients off) or None when it has not been shipped.
    The page keeps one per (task, encoding) with st.cache_resource: read-only, shared."""
    p = Path(directory) / f"{task}-{encoding}.safetensors"
    if not p.exists():
        return None
    model, _ = load(p)
    for q in model.parameters():
        q.requires_grad_(False)
    return model


@dataclass
class Inspection:
    tokens: list[str]  # the string as the model saw it ('?' replaced by the model's own answers)
    typed: list[str]  # as typed
    slots: list[int]  # answer positions
    predicted: dict[int, str]  # slot → the model's most likely token
    confidence: dict[int, float]  # slot → its probability
    correct: dict[int, str | None]  # slot → the task's rule (None: undefined, e.g. read before write)
    weights: np.ndarray  # (layers · heads, n, n) attention weights, NaN where masked
    panel_titles: list[str]
    gates: np.ndarray | None  # CoPE: (layers · heads, n, n) gates σ(q·k/√d), NaN where masked
    positions: np.ndarray | None  # CoPE: counted positions p_ij, NaN where masked


def inspect_string(model: TinyTransformer, task: str, text: str, lang: str | None = None) -> Inspection:
    """Run a trained model (load_model) on a typed string. '?' slots are filled left to right with the
    model's own greedy answer (so a later question sees it); answers the learner typed are kept.
    Raises tasks.ParseError with a learner-readable message on a bad string."""
    tk = T.get(task)
    typed = T.parse(tk, text, max_tokens=tk.max_length())
    slots = T.answer_slots(tk, typed)
    toks = list(typed)
    predicted, confidence = {}, {}
    correct = {}
    with torch.no_grad():
        for k in slots:
            ids = torch.from_numpy(T.encode(tk, [x if x != T.PLACEHOLDER else tk.vocab[0] for x in toks[:k]]))[None]
            probs = torch.softmax(model(ids)[0, -1], -1)  # (V,)
            best = int(probs.argmax())
            predicted[k], confidence[k] = tk.vocab[best], float(probs[best])
            # The rule's answer, given everything before this slot as the model sees it.
            correct[k] = T.reference_answers(tk, [*toks[:k], "?"]).get(k)
            if toks[k] == T.PLACEHOLDER:
                toks[k] = tk.vocab[best]
        ids = torch.from_numpy(T.encode(tk, toks))[None]
        _, results = model(ids, return_attention=True)
    n = len(toks)
    mask = np.triu(np.ones((n, n), dtype=bool), 1)  # (i, j): future keys, blank in the maps

    def stack(key: str | None) -> np.ndarray:
        arrs = []
        for r in results:
            a = (r.weights if key is None else r.extras[key])[0].double().numpy()  # (h, i, j)
            arrs.append(np.where(mask[None], np.nan, a))
        return np.concatenate(arrs, axis=0)  # (layers · heads, i, j)

    h = model.cfg.n_heads
    titles = [
        t("toy_tasks.inspect.panel", lang, layer=layer + 1, head=k + 1)
        for layer in range(len(results))
        for k in range(h)
    ]
    is_cope = "gates" in results[0].extras
    return Inspection(
        toks,
        typed,
        slots,
        predicted,
        confidence,
        correct,
        stack(None),
        titles,
        stack("gates") if is_cope else None,
        stack("positions") if is_cope else None,
    )


INSPECT_COLUMNS = ("position", "typed", "says", "probability", "rule", "match")


def inspection_table(ins: Inspection, lang: str | None = None) -> dict[str, list[Any]]:
    """One row per answer slot: what was typed, what the model says and how sure it is, what the
    task's rule says, and whether they match (— where the rule has no answer)."""
    rows = []
    for k in ins.slots:
        right = ins.correct[k]
        verdict = "—" if right is None else ("✓" if ins.predicted[k] == right else "✗")
        rule = t("toy_tasks.inspect.undefined", lang) if right is None else right
        rows.append([k, ins.typed[k], ins.predicted[k], ins.confidence[k], rule, verdict])
    columns = [t(f"toy_tasks.inspect.col.{c}", lang) for c in INSPECT_COLUMNS]
    return {c: [row[i] for row in rows] for i, c in enumerate(columns)}


def parse_error_text(exc: T.ParseError, lang: str | None = None) -> str:
    """A ParseError in the learner's language (lab/ knows no languages: it gives a code and values)."""
    if not exc.code:
        return str(exc)
    values = dict(exc.values)
    if "rule" in values:
        values["rule"] = t(f"toy_tasks.slot_rule.{values['rule']}", lang)
    return t(f"toy_tasks.parse.{exc.code}", lang, **values)


@dataclass(frozen=True)
class EncoderTables:
    """The learned position tables inside a shipped model's layers."""

    layers: int  # the model's layers
    tables: tuple[tuple[int, tuple[int, ...]], ...]  # (layer, shape) of each position table

    @property
    def per_layer(self) -> bool:
        """One table in every layer (nothing shared between layers)."""
        return sorted(layer for layer, _ in self.tables) == list(range(self.layers))


# Cache bounds (pages/labs/toy_tasks.py): the shipped results are a few kilobytes of JSON each.
@bounded(4)
def encoder_tables(task: str, encoding: str, directory: str = str(TOY_DIR)) -> EncoderTables | None:
    """Counted in the shipped checkpoint: every parameter of a layer's positional encoder
    (blocks.<layer>.attn.encoder.*). None when the model has not been shipped."""
    model = load_model(task, encoding, directory)
    if model is None:
        return None
    tables = []
    for name, p in model.named_parameters():
        parts = name.split(".")
        if parts[0] == "blocks" and parts[2:4] == ["attn", "encoder"]:
            tables.append((int(parts[1]), tuple(p.shape)))
    return EncoderTables(model.cfg.n_layers, tuple(sorted(tables)))
