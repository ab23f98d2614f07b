"""The real-text lab's evidence beyond the length curves (issue 39), read from assets/lm/evidence.json
(written by `python -m lab.regenerate lm_eval`, lab/lm_eval.py): numbers and words only.

- Same bytes: per model, the bits per byte of the bytes past the training length inside a long
  window minus the same bytes with their context capped at 128 bytes (a sliding window). Its 95%
  interval is a bootstrap over the long windows (real_text_stats.bootstrap); the verdict "uses
  context past its training length" is stated only where that interval lies below 0.
- Anchors: byte n-grams (interpolated modified Kneser-Ney on the train split, context cut at the
  same 128-byte window starts as the models' 1× windows) and compressors given the train text, on
  the same predicted bytes; the models against them at 1×, paired per 128-byte window.
- T5's far bucket: the attention mass on the one bucket every distance ≥ 113 shares.

Every sentence that states a number or a verdict is computed here. One seed per encoding: the
intervals are the evaluation's sampling noise over windows, not seed-to-seed variation.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from explain.bounds import bounded
from explain.i18n import t

from .real_text import (
    ALIBI_HEADLINE_PARAMS_B,
    COPE_FIG3,
    COPE_FIG3_LENGTHS,
    COPE_FIG3_TRAIN,
    COPE_TABLE4_PARAMS_M,
    DIR,
    STAND_IN,
    enc_label,
    lengths,
    load_index,
    stretches,
    trained,
    verdict,
)
from .real_text_stats import Estimate, bootstrap, lowest_at, paired_change, point, windows

EVIDENCE = "evidence.json"
COMPARED_ORDERS = (4, 5)  # the n-gram orders the page compares every model with, at 1×


def load_evidence(directory: str = DIR) -> dict[str, Any]:
    """assets/lm/evidence.json ({} when lab.lm_eval has not run)."""
    p = Path(directory) / EVIDENCE
    return json.loads(p.read_text()) if p.exists() else {}


def past_difference(ev: dict[str, Any], name: str, length: int) -> Estimate | None:
    """Bits per byte of the bytes at in-window positions ≥ 128 of `length`-byte windows, read in
    the long window minus capped at 128 bytes; bootstrap over the long windows."""
    entry = ev.get("models", {}).get(name, {}).get("lengths", {}).get(str(length))
    if not entry or not entry.get("past"):
        return None
    return bootstrap(entry["past"])


def same_verdict(e: Estimate) -> str:
    """'uses' (the context past 128 bytes lowers the bits: interval below 0), 'hurts' (above 0), 'none'."""
    return {-1: "uses", 1: "hurts", 0: "none"}[e.sign]


def _names(idx: dict[str, Any], ev: dict[str, Any]) -> tuple[str, ...]:
    return trained(idx) + tuple(s for s in stretches(idx))


@dataclass(frozen=True)
class SameBytes:
    table: dict[str, list[str]]
    sentences: list[str]  # one verdict per line, computed
    curve: str  # what the non-overlapping curve measures, with this run's numbers
    caption: str
    missing: list[str]  # lines evidence.json does not hold yet


@bounded(4)
def same_bytes(directory: str = DIR, lang: str | None = None) -> SameBytes | None:
    idx, ev = load_index(directory), load_evidence(directory)
    if not idx or not ev.get("models"):
        return None
    ls = lengths(idx)
    base, top = ls[0], ls[-1]
    train = int(ev.get("train_length", base))
    names = [n for n in _names(idx, ev) if n in ev["models"]]
    missing = [enc_label(n, lang) for n in _names(idx, ev) if n not in ev["models"]]
    col_enc = t("real_text.same.col_encoding", lang)
    col_base = t("real_text.same.col_windows", lang, n=base)
    col_capped = t("real_text.same.col_capped", lang, n=train)
    col_top = t("real_text.same.col_windows", lang, n=top)
    long_ls = [n for n in ls if n > train]
    table: dict[str, list[str]] = {col_enc: [], col_base: [], col_top: [], col_capped: []}
    for n in long_ls:
        table[t("real_text.same.col_past", lang, n=n, train=train)] = []
    sentences: list[str] = []
    for name in names:
        m = ev["models"][name]
        table[col_enc].append(enc_label(name, lang))
        pb, pt = point(idx, name, base), point(idx, name, top)
        table[col_base].append(f"{pb.mean:.3f}" if pb else "–")
        table[col_top].append(f"{pt.mean:.3f}" if pt else "–")
        table[col_capped].append(f"{float(m['capped_bpb']):.3f}" if name not in stretches(idx) else "–")
        for n in long_ls:
            d = past_difference(ev, name, n)
            table[t("real_text.same.col_past", lang, n=n, train=train)].append(d.signed_text() if d else "–")
        d = past_difference(ev, name, top)
        if d is None:
            sentences.append(t("real_text.same.no_long", lang, name=enc_label(name, lang), train=train, top=top))
            continue
        sentences.append(
            t(
                f"real_text.same.{same_verdict(d)}",
                lang,
                name=enc_label(name, lang),
                train=train,
                top=top,
                d=d.signed_text(),
                n=d.n,
            )
        )
    # What the non-overlapping curve measures: the models it shows getting better from base to top,
    # against their same-bytes differences.
    parts = []
    for enc in trained(idx):
        ce, de = paired_change(idx, enc, top, base), past_difference(ev, enc, top)
        if ce is None or de is None or ce.sign >= 0:
            continue
        parts.append(
            t(
                "real_text.same.curve_part",
                lang,
                name=enc_label(enc, lang),
                c=ce.signed_text(),
                d=de.signed_text(),
                v=t(f"real_text.same.short.{same_verdict(de)}", lang),
            )
        )
    curve = t("real_text.same.curve", lang, base=base, top=top, k=top // base, train=train)
    if parts:
        curve += " " + t("real_text.same.curve_falls", lang, base=base, top=top, train=train, parts="; ".join(parts))
    stride = int(ev.get("capped_stride", 1))
    caption = t(
        "real_text.same.caption",
        lang,
        bytes=int(ev.get("eval_bytes", 0)),
        train=train,
        lo=train - stride + 1,
        top=top,
        n_top=int(ev.get("eval_bytes", 1) - 1) // top,
    )
    return SameBytes(table, sentences, curve, caption, missing)


# --- anchors ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchors:
    table: dict[str, list[str]]
    sentences: list[str]
    caption: str


def _blocks_vs(idx: dict[str, Any], name: str, blocks: list[float], base: int) -> Estimate | None:
    """A model's non-overlapping base-length windows minus an anchor's blocks of the same bytes."""
    w = windows(idx, name, base)
    if w is None or len(w) != len(blocks):
        return None
    return bootstrap(w - np.asarray(blocks, dtype=float))


@bounded(4)
def anchors(directory: str = DIR, lang: str | None = None) -> Anchors | None:
    idx, ev = load_index(directory), load_evidence(directory)
    a = ev.get("anchors")
    if not idx or not a:
        return None
    base = lengths(idx)[0]
    col_what, col_cut, col_uncut = (
        t("real_text.anchor.col_what", lang),
        t("real_text.anchor.col_cut", lang, n=base),
        t("real_text.anchor.col_uncut", lang),
    )
    table: dict[str, list[str]] = {col_what: [], col_cut: [], col_uncut: []}
    for k, v in a["ngram"].items():
        table[col_what].append(t("real_text.anchor.ngram", lang, k=int(k)))
        table[col_cut].append(f"{float(v['bpb']):.3f}")
        table[col_uncut].append(f"{float(a['ngram_uncut'][k]):.3f}")
    for name, v in a["compressors"].items():
        table[col_what].append(t(f"real_text.anchor.{name}", lang))
        table[col_cut].append("–")
        table[col_uncut].append(f"{float(v):.3f}")
    names = trained(idx)
    models = {n: p.mean for n in names if (p := point(idx, n, base)) is not None}
    lo, hi = min(models.values()), max(models.values())
    sentences = [
        t(
            "real_text.anchor.models",
            lang,
            base=base,
            lo=f"{lo:.3f}",
            hi=f"{hi:.3f}",
            lo_name=enc_label(min(models, key=models.__getitem__), lang),
            hi_name=enc_label(max(models, key=models.__getitem__), lang),
        )
    ]
    for k in COMPARED_ORDERS:
        ng = a["ngram"].get(str(k))
        if ng is None:
            continue
        groups: dict[str, list[str]] = {"worse": [], "better": [], "same": []}
        for n in names:
            d = _blocks_vs(idx, n, ng["blocks"], base)
            if d is None:
                continue
            key = {1: "worse", -1: "better", 0: "same"}[d.sign]
            groups[key].append(f"{enc_label(n, lang)} {d.signed_text()}")
        bits = [t(f"real_text.anchor.{key}", lang, names="; ".join(v)) for key, v in groups.items() if v]
        sentences.append(
            t("real_text.anchor.vs_ngram", lang, k=k, value=f"{float(ng['bpb']):.3f}", base=base, parts=" ".join(bits))
        )
    xz = a["compressors"].get("xz")
    if xz is not None:
        gaps = [v - float(xz) for v in models.values()]
        key = "real_text.anchor.vs_xz_above" if min(gaps) > 0 else "real_text.anchor.vs_xz_mixed"
        sentences.append(t(key, lang, xz=f"{float(xz):.3f}", lo=f"{min(gaps):+.2f}", hi=f"{max(gaps):+.2f}", base=base))
    caption = t("real_text.anchor.caption", lang, bytes=int(ev.get("eval_bytes", 0)), base=base)
    return Anchors(table, sentences, caption)


# --- T5's far bucket ----------------------------------------------------------------------------


@bounded(4)
def t5_far_bucket(directory: str = DIR, lang: str | None = None) -> str | None:
    """One computed sentence: T5's shared far bucket and the attention mass on it at 1× and 8×."""
    idx, ev = load_index(directory), load_evidence(directory)
    fb = ev.get("models", {}).get("t5", {}).get("t5_far_bucket")
    if not idx or not fb:
        return None
    base, top = lengths(idx)[0], lengths(idx)[-1]
    s_base, s_top = fb["share"][str(base)], fb["share"][str(top)]
    per_layer = [
        t(
            "real_text.t5.layer",
            lang,
            layer=i + 1,
            base=base,
            top=top,
            a=f"{float(np.mean(a)):.2f}",
            b=f"{float(np.mean(b)):.2f}",
            hb=f"{max(b):.2f}",
        )
        for i, (a, b) in enumerate(zip(s_base, s_top, strict=True))
    ]
    c = paired_change(idx, "t5", top, base)
    d = past_difference(ev, "t5", top)
    grows = all(float(np.mean(b)) > float(np.mean(a)) for a, b in zip(s_base, s_top, strict=True))
    return (
        t(
            "real_text.t5.sentence",
            lang,
            far=fb["far_from"],
            buckets=fb["num_buckets"],
            base=base,
            top=top,
            layers="; ".join(per_layer),
            change=c.signed_text() if c else "–",
            d=d.signed_text() if d else "–",
            bias=", ".join(f"{float(v):+.2f}" for v in fb["far_bias"]),
        )
        + " "
        + t("real_text.t5." + ("grows" if grows else "not_grows"), lang, base=base, top=top, far=fb["far_from"])
    )


def seeds(idx: dict[str, Any]) -> int:
    """How many seeds stand behind each encoding's numbers (the shipped models: one each)."""
    s = idx.get("settings", {}).get("seeds")
    return len(s) if isinstance(s, list) else 1


def params_gap(idx: dict[str, Any], a: str, b: str) -> float:
    """How many % more parameters model a has than model b (NaN when either is missing)."""
    m = idx.get("models", {})
    if a not in m or b not in m:
        return math.nan
    return 100.0 * (int(m[a]["parameters"]) / int(m[b]["parameters"]) - 1.0)


# -- the papers' claims, stated at this scale (moved from real_text.py: they read the evidence) --------
@dataclass(frozen=True)
class Papers:
    cope_table: dict[str, list[str]]  # CoPE Fig. 3 (approximate): one row per paper method
    sentences: list[str]  # the papers' directions at this scale, computed
    scale: str  # the plain sentence on scale, with our figures from index.json


@bounded(4)
def papers(directory: str = DIR, lang: str | None = None) -> Papers | None:
    idx = load_index(directory)
    if not idx:
        return None
    ls = lengths(idx)
    base, top = ls[0], ls[-1]
    table: dict[str, list[str]] = {t("real_text.paper.col_method", lang): []}
    for n in COPE_FIG3_LENGTHS:
        table[t("real_text.paper.col_length", lang, n=n, x=n / COPE_FIG3_TRAIN)] = []
    for row, values in COPE_FIG3.items():
        table[t("real_text.paper.col_method", lang)].append(t(f"real_text.paper.row.{row}", lang))
        for n, v in zip(COPE_FIG3_LENGTHS, values, strict=True):
            table[t("real_text.paper.col_length", lang, n=n, x=n / COPE_FIG3_TRAIN)].append(f"{v:g}")

    ev = load_evidence(directory)
    n_seeds = seeds(idx)
    out: list[str] = []
    names = trained(idx)
    alibi, sinusoidal, cope = STAND_IN["ALiBi"], STAND_IN["Sinusoidal"], STAND_IN["CoPE"]
    # ALiBi's claim (abstract; Fig. 1 reads non-overlapping windows): train short, test long without
    # losing perplexity, where sinusoidal loses it. Stated at this scale, with its seeds.
    if alibi in names and sinusoidal in names:
        ca, cs = paired_change(idx, alibi, top, base), paired_change(idx, sinusoidal, top, base)
        if ca is not None and cs is not None:
            holds = ca.sign <= 0 and cs.sign > 0
            out.append(
                t(
                    "real_text.paper.alibi_" + ("same" if holds else "differs"),
                    lang,
                    base=base,
                    top=top,
                    seeds=n_seeds,
                    alibi=enc_label(alibi, lang),
                    sinusoidal=enc_label(sinusoidal, lang),
                    a=ca.signed_text(),
                    s=cs.signed_text(),
                    va=verdict(ca, lang),
                    vs=verdict(cs, lang),
                )
            )
    # CoPE's Fig. 3: its perplexity falls past the training length. Whether a model uses context past
    # its training length is decided on the same bytes (lab/lm_eval.py), not by the curve.
    if cope in names:
        cc, dc = paired_change(idx, cope, top, base), past_difference(ev, cope, top)
        if cc is not None and dc is not None:
            out.append(
                t(
                    "real_text.paper.cope_" + ("falls" if dc.sign < 0 else "not_falls"),
                    lang,
                    base=base,
                    top=top,
                    seeds=n_seeds,
                    cope=enc_label(cope, lang),
                    c=cc.signed_text(),
                    d=dc.signed_text(),
                    v=t(f"real_text.same.short.{same_verdict(dc)}", lang),
                )
            )
        low = lowest_at(idx, top, names)
        if low is not None:
            best, ties = low
            if best == cope and not ties:
                key, other = "real_text.paper.cope_lowest", ""
            elif best == cope or cope in ties:
                key, other = (
                    "real_text.paper.cope_tied",
                    ", ".join(enc_label(x, lang) for x in [best, *ties] if x != cope),
                )
            else:
                key, other = "real_text.paper.cope_not_lowest", enc_label(best, lang)
            low_base = lowest_at(idx, base, names)
            leads = low_base is not None and low_base[0] == cope and not low_base[1]
            smallest = min(names, key=lambda n: int(idx["models"][n]["parameters"]))
            out.append(
                t(key, lang, top=top, seeds=n_seeds, cope=enc_label(cope, lang), other=other)
                + " "
                + t(
                    "real_text.paper.cope_caveat_" + ("leads" if leads else "not_leads"),
                    lang,
                    cope=enc_label(cope, lang),
                    pct=params_gap(idx, cope, smallest),
                    smallest=int(idx["models"][smallest]["parameters"]),
                    base=base,
                )
            )
    s, m = idx["settings"], idx["models"]
    params = sorted(int(v["parameters"]) for v in m.values())
    scale = t(
        "real_text.paper.scale",
        lang,
        layers=s["n_layers"],
        d=s["d_model"],
        heads=s["n_heads"],
        steps=s["steps"],
        batch=s["batch_size"],
        length=s["length"],
        tokens=int(s["steps"]) * int(s["batch_size"]) * int(s["length"]),
        lo=params[0],
        hi=params[-1],
        corpus=idx["corpus"]["train"]["bytes"],
        cope_lo=COPE_TABLE4_PARAMS_M[0],
        cope_hi=COPE_TABLE4_PARAMS_M[1],
        alibi=ALIBI_HEADLINE_PARAMS_B,
    )
    return Papers(table, out, scale)


# --- 4. training curves -------------------------------------------------------------------------
