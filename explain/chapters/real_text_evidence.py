"""The real-text lab's evidence beyond the length curves (issue 39), over the study's seeds
(real_text_study.py): numbers and words only.

- Same bytes: per model and seed, the bits per byte of the bytes past the training length inside a
  long window minus the same bytes with their context capped at 128 bytes (a sliding window); over
  seeds, a 95% Student-t interval. The verdict "uses context past its training length" is stated only
  where that interval lies below 0.
- Anchors: byte n-grams (interpolated modified Kneser-Ney on the train split, context cut at the
  same 128-byte window starts as the models' 1× windows) and compressors given the train text, on
  the same predicted bytes; each model against them at 1×, per seed, then over seeds.
- RoPE and Position Interpolation: zero-shot stretches against the short fine-tunes at 1024 bytes,
  each labelled.
- T5's far bucket: the attention mass on the one bucket every distance ≥ its start shares.
- The papers' directions at this scale.

Every sentence that states a number or a verdict is computed here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from explain.bounds import bounded
from explain.i18n import t

from . import real_text_study as S
from .real_text import (
    ALIBI_HEADLINE_PARAMS_B,
    COPE_FIG3,
    COPE_FIG3_LENGTHS,
    COPE_FIG3_TRAIN,
    COPE_TABLE4_PARAMS_M,
    STAND_IN,
    enc_label,
    seeds_text,
    verdict,
)
from .real_text_study import STUDY, Estimate, Study

COMPARED_ORDERS = (4, 5)  # the n-gram orders the page compares every model with, at 1×


def same_verdict(e: Estimate) -> str:
    """'uses' (the context past 128 bytes lowers the bits: interval below 0), 'hurts' (above 0), 'none'."""
    return {-1: "uses", 1: "hurts", 0: "none"}[e.sign]


@dataclass(frozen=True)
class SameBytes:
    table: dict[str, list[str]]
    sentences: list[str]  # one verdict per line, computed
    curve: str  # what the non-overlapping curve measures, with this run's numbers
    caption: str


@bounded(4)
def same_bytes(directory: str = STUDY, lang: str | None = None) -> SameBytes | None:
    st = S.load(directory)
    if st is None:
        return None
    base, top, train = st.train_len, st.top, st.train_len
    long_ls = [n for n in st.lengths if n > train]
    col_enc = t("real_text.same.col_encoding", lang)
    col_capped = t("real_text.same.col_capped", lang, n=train)
    col_base = t("real_text.same.col_windows", lang, n=base)
    col_top = t("real_text.same.col_windows", lang, n=top)
    table: dict[str, list[str]] = {col_enc: [], col_capped: [], col_base: [], col_top: []}
    cols_past = {n: t("real_text.same.col_past", lang, n=n, train=train) for n in long_ls}
    for c in cols_past.values():
        table[c] = []
    sentences: list[str] = []
    names = [*st.encodings, *st.stretches, *st.finetunes]
    for name in names:
        table[col_enc].append(enc_label(name, lang))
        cap = S.over(st, name, S.capped_bpb)
        derived = name in st.stretches or name in st.finetunes
        table[col_capped].append(cap.text() if cap and not derived else "–")
        for col, n in ((col_base, base), (col_top, top)):
            p = S.over(st, name, S.at(n))
            table[col].append(p.text() if p else "–")
        for n, col in cols_past.items():
            d = S.over(st, name, S.past_at(n))
            table[col].append(d.signed_text() if d else "–")
        d = S.over(st, name, S.past_at(top))
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
                seeds=seeds_text(d, lang),
                below=d.below,
            )
        )
    # What the non-overlapping curve measures: the models it shows getting better from base to top,
    # against their same-bytes differences.
    parts = []
    for enc in st.encodings:
        ce, de = S.over(st, enc, S.change_at(top)), S.over(st, enc, S.past_at(top))
        if ce is None or de is None or ce.mean >= 0:
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
    run = next(iter(st.runs[st.encodings[0]].values()))
    n_bytes = len(run.ev["capped"]) * S.BLOCK
    caption = t("real_text.same.caption", lang, bytes=n_bytes, train=train, top=top, n_top=n_bytes // top)
    return SameBytes(table, sentences, curve, caption)


# --- anchors ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Anchors:
    anchors: dict[str, list[str]]  # one row per n-gram order and compressor
    models: dict[str, list[str]]  # one row per trained encoding: 1× and its differences from the n-grams
    sentences: list[str]
    caption: str


@bounded(4)
def anchors(directory: str = STUDY, lang: str | None = None) -> Anchors | None:
    st = S.load(directory)
    if st is None or not st.anchors:
        return None
    a, base = st.anchors, st.train_len
    col_what, col_cut, col_uncut = (
        t("real_text.anchor.col_what", lang),
        t("real_text.anchor.col_cut", lang, n=base),
        t("real_text.anchor.col_uncut", lang),
    )
    table: dict[str, list[str]] = {col_what: [], col_cut: [], col_uncut: []}
    for k in a["ngram"]:
        table[col_what].append(t("real_text.anchor.ngram", lang, k=int(k)))
        table[col_cut].append(f"{S.anchor_bpb(st, int(k)):.3f}")
        table[col_uncut].append(f"{S.anchor_bpb(st, int(k), cut=False):.3f}")
    for name, v in a["compressors"].items():
        table[col_what].append(t(f"real_text.anchor.{name}", lang))
        table[col_cut].append("–")
        table[col_uncut].append(f"{float(v):.3f}")
    col_enc, col_1x = t("real_text.same.col_encoding", lang), t("real_text.anchor.col_model", lang, n=base)
    models: dict[str, list[str]] = {col_enc: [], col_1x: []}
    cols_vs = {k: t("real_text.anchor.col_vs", lang, k=k) for k in COMPARED_ORDERS if str(k) in a["ngram"]}
    for c in cols_vs.values():
        models[c] = []
    points = {n: p for n in st.encodings if (p := S.over(st, n, S.at(base))) is not None}
    for n, p in points.items():
        models[col_enc].append(enc_label(n, lang))
        models[col_1x].append(p.text())
        for k, c in cols_vs.items():
            d = S.over(st, n, S.vs_order(k))
            models[c].append(d.signed_text() if d else "–")
    sentences = []
    if points:
        lo_name = min(points, key=lambda n: points[n].mean)
        hi_name = max(points, key=lambda n: points[n].mean)
        sentences.append(
            t(
                "real_text.anchor.models",
                lang,
                base=base,
                lo=f"{points[lo_name].mean:.3f}",
                hi=f"{points[hi_name].mean:.3f}",
                lo_name=enc_label(lo_name, lang),
                hi_name=enc_label(hi_name, lang),
            )
        )
    for k in cols_vs:
        groups: dict[str, list[str]] = {"better": [], "same": [], "worse": []}
        for n in points:
            d = S.over(st, n, S.vs_order(k))
            if d is None:
                continue
            groups[{1: "worse", -1: "better", 0: "same"}[d.sign]].append(
                t(
                    "real_text.anchor.item",
                    lang,
                    name=enc_label(n, lang),
                    d=d.signed_text(),
                    below=d.below,
                    n=d.n,
                    seeds=seeds_text(d, lang),
                )
            )
        bits = [t(f"real_text.anchor.{key}", lang, names="; ".join(v)) for key, v in groups.items() if v]
        sentences.append(
            t(
                "real_text.anchor.vs_ngram",
                lang,
                k=k,
                value=f"{S.anchor_bpb(st, k):.3f}",
                base=base,
                parts=" ".join(bits),
            )
        )
    xz = a["compressors"].get("xz")
    if xz is not None and points:
        gaps = [p.mean - float(xz) for p in points.values()]
        key = "real_text.anchor.vs_xz_above" if min(gaps) > 0 else "real_text.anchor.vs_xz_mixed"
        sentences.append(t(key, lang, xz=f"{float(xz):.3f}", lo=f"{min(gaps):+.2f}", hi=f"{max(gaps):+.2f}", base=base))
    run = next(iter(st.runs[st.encodings[0]].values()))
    caption = t("real_text.anchor.caption", lang, bytes=len(run.ev["capped"]) * S.BLOCK, base=base)
    return Anchors(table, models, sentences, caption)


# --- RoPE and Position Interpolation: zero-shot against fine-tuned ---------------------------------


@dataclass(frozen=True)
class Stretches:
    table: dict[str, list[str]]
    sentences: list[str]


@bounded(4)
def stretches(directory: str = STUDY, lang: str | None = None) -> Stretches | None:
    """At the top length: plain RoPE, each zero-shot stretch and each fine-tune, against plain RoPE
    (seed-paired), and what the context past 128 bytes does for each on the same bytes."""
    st = S.load(directory)
    if st is None or st.stretched is None or not (st.stretches or st.finetunes):
        return None
    top, train, ref = st.top, st.train_len, st.stretched
    col_what = t("real_text.pi.col_what", lang)
    col_how = t("real_text.pi.col_how", lang, top=top)
    col_top = t("real_text.same.col_windows", lang, n=top)
    col_vs = t("real_text.pi.col_vs", lang, name=enc_label(ref, lang), n=top)
    col_past = t("real_text.same.col_past", lang, n=top, train=train)
    table: dict[str, list[str]] = {col_what: [], col_how: [], col_top: [], col_vs: [], col_past: []}
    sentences = []
    for kind in (ref, *st.stretches, *st.finetunes):
        how = "trained" if kind == ref else "zero_shot" if kind in st.stretches else "finetuned"
        p, d = S.over(st, kind, S.at(top)), S.over(st, kind, S.past_at(top))
        vs = S.paired(st, kind, ref, S.at(top)) if kind != ref else None
        table[col_what].append(enc_label(kind, lang))
        table[col_how].append(t(f"real_text.pi.how.{how}", lang, train=train, top=top))
        table[col_top].append(p.text() if p else "–")
        table[col_vs].append(vs.signed_text() if vs else "–")
        table[col_past].append(d.signed_text() if d else "–")
        if vs is not None:
            sentences.append(
                t(
                    f"real_text.pi.line_{how}",
                    lang,
                    name=enc_label(kind, lang),
                    ref=enc_label(ref, lang),
                    top=top,
                    d=vs.signed_text(),
                    v=verdict(vs, lang),
                    seeds=seeds_text(vs, lang),
                )
            )
    # The PI paper's own question: does stretching before the fine-tune beat fine-tuning alone (its
    # control, direct fine-tuning)? The two fine-tunes of each seed start from the same weights.
    first = {k: next(iter(st.runs[k].values())).meta for k in st.finetunes}
    stretched = [k for k in st.finetunes if first[k].get("stretch")]
    direct = [k for k in st.finetunes if not first[k].get("stretch")]
    ft = S.paired(st, stretched[0], direct[0], S.at(top)) if stretched and direct else None
    if ft is not None:
        cfg = first[stretched[0]]["settings"]
        sentences.append(
            t(
                "real_text.pi.line_ft_vs",
                lang,
                name=enc_label(stretched[0], lang),
                other=enc_label(direct[0], lang),
                top=top,
                d=ft.signed_text(),
                v=verdict(ft, lang),
                seeds=seeds_text(ft, lang),
                steps=cfg["steps"],
                batch=cfg["batch_size"],
                params=first[stretched[0]]["parameters"],
                s=top // train,
            )
        )
    return Stretches(table, sentences)


# --- T5's far bucket ----------------------------------------------------------------------------


@bounded(4)
def t5_far_bucket(directory: str = STUDY, lang: str | None = None) -> str | None:
    """One computed sentence: T5's shared far bucket and the attention mass on it at 1× and 8×."""
    st = S.load(directory)
    if st is None:
        return None
    kind = next((k for k in st.encodings if S.far_bucket(st, k) is not None), None)
    fb = S.far_bucket(st, kind) if kind else None
    if fb is None or kind is None:
        return None
    lo_n, hi_n = min(fb.share), max(fb.share)
    per_layer = [
        t("real_text.t5.layer", lang, layer=i + 1, base=lo_n, top=hi_n, a=a.text(2), b=b.text(2))
        for i, (a, b) in enumerate(zip(fb.share[lo_n], fb.share[hi_n], strict=True))
    ]
    c, d = S.over(st, kind, S.change_at(st.top)), S.over(st, kind, S.past_at(st.top))
    return (
        t(
            "real_text.t5.sentence",
            lang,
            name=enc_label(kind, lang),
            far=fb.far_from,
            base=lo_n,
            top=hi_n,
            layers="; ".join(per_layer),
            change=c.signed_text() if c else "–",
            d=d.signed_text() if d else "–",
            bias=fb.bias.signed_text(2),
            seeds=seeds_text(fb.seeds, lang),
        )
        + " "
        + t(
            "real_text.t5." + ("grows" if fb.grows == fb.seeds else "not_grows"),
            lang,
            base=lo_n,
            top=hi_n,
            far=fb.far_from,
            grows=fb.grows,
            seeds=seeds_text(fb.seeds, lang),
        )
    )


def params_gap(st: Study, a: str, b: str) -> float:
    """How many % more parameters model a has than model b (NaN when either is missing)."""
    if a not in st.runs or b not in st.runs:
        return math.nan
    pa = int(next(iter(st.runs[a].values())).meta["parameters"])
    pb = int(next(iter(st.runs[b].values())).meta["parameters"])
    return 100.0 * (pa / pb - 1.0)


# -- the papers' claims, stated at this scale -------------------------------------------------------
@dataclass(frozen=True)
class Papers:
    cope_table: dict[str, list[str]]  # CoPE Fig. 3 (approximate): one row per paper method
    sentences: list[str]  # the papers' directions at this scale, computed
    scale: str  # the plain sentence on scale, with this study's figures


@bounded(4)
def papers(directory: str = STUDY, lang: str | None = None) -> Papers | None:
    st = S.load(directory)
    if st is None:
        return None
    base, top = st.train_len, st.top
    table: dict[str, list[str]] = {t("real_text.paper.col_method", lang): []}
    for n in COPE_FIG3_LENGTHS:
        table[t("real_text.paper.col_length", lang, n=n, x=n / COPE_FIG3_TRAIN)] = []
    for row, values in COPE_FIG3.items():
        table[t("real_text.paper.col_method", lang)].append(t(f"real_text.paper.row.{row}", lang))
        for n, v in zip(COPE_FIG3_LENGTHS, values, strict=True):
            table[t("real_text.paper.col_length", lang, n=n, x=n / COPE_FIG3_TRAIN)].append(f"{v:g}")
    out: list[str] = []
    names = list(st.encodings)
    alibi, sinusoidal, cope = STAND_IN["ALiBi"], STAND_IN["Sinusoidal"], STAND_IN["CoPE"]
    # ALiBi's claim (abstract; Fig. 1 reads non-overlapping windows): train short, test long without
    # losing perplexity, where sinusoidal loses it. Stated at this scale, with its seeds.
    if alibi in names and sinusoidal in names:
        ca, cs = S.over(st, alibi, S.change_at(top)), S.over(st, sinusoidal, S.change_at(top))
        if ca is not None and cs is not None:
            holds = ca.sign <= 0 and cs.sign > 0
            out.append(
                t(
                    "real_text.paper.alibi_" + ("same" if holds else "differs"),
                    lang,
                    base=base,
                    top=top,
                    seeds=seeds_text(ca, lang),
                    alibi=enc_label(alibi, lang),
                    sinusoidal=enc_label(sinusoidal, lang),
                    a=ca.signed_text(),
                    s=cs.signed_text(),
                    va=verdict(ca, lang),
                    vs=verdict(cs, lang),
                )
            )
    # CoPE's Fig. 3: its perplexity falls past the training length. Whether a model uses context past
    # its training length is decided on the same bytes, not by the curve.
    if cope in names:
        cc, dc = S.over(st, cope, S.change_at(top)), S.over(st, cope, S.past_at(top))
        if cc is not None and dc is not None:
            out.append(
                t(
                    "real_text.paper.cope_" + {-1: "falls", 1: "not_falls", 0: "unsettled"}[dc.sign],
                    lang,
                    base=base,
                    top=top,
                    seeds=seeds_text(dc, lang),
                    cope=enc_label(cope, lang),
                    c=cc.signed_text(),
                    d=dc.signed_text(),
                    v=t(f"real_text.same.short.{same_verdict(dc)}", lang),
                )
            )
        low = S.lowest(st, names, S.at(top))
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
            low_base = S.lowest(st, names, S.at(base))
            leads = low_base is not None and low_base[0] == cope and not low_base[1]
            smallest = min(names, key=lambda n: int(next(iter(st.runs[n].values())).meta["parameters"]))
            n_cope = S.over(st, cope, S.at(top))
            out.append(
                t(
                    key,
                    lang,
                    top=top,
                    seeds=seeds_text(n_cope, lang) if n_cope else "",
                    cope=enc_label(cope, lang),
                    other=other,
                )
                + " "
                + t(
                    "real_text.paper.cope_caveat_" + ("leads" if leads else "not_leads"),
                    lang,
                    cope=enc_label(cope, lang),
                    pct=params_gap(st, cope, smallest),
                    smallest=int(next(iter(st.runs[smallest].values())).meta["parameters"]),
                    base=base,
                )
            )
    s = st.settings()
    params = sorted(int(next(iter(st.runs[n].values())).meta["parameters"]) for n in names)
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
        corpus=int(st.corpus.get("train", {}).get("bytes", 0)),
        seeds=seeds_text(len(st.all_seeds()), lang),
        cope_lo=COPE_TABLE4_PARAMS_M[0],
        cope_hi=COPE_TABLE4_PARAMS_M[1],
        alibi=ALIBI_HEADLINE_PARAMS_B,
    )
    return Papers(table, out, scale)
