"""The "Trained on real text" lab: every sentence, verdict and the question agree with an independent
computation from index.json (plain loops here, not the chapter's numpy); learned has no point past its
training length; the page runs in both languages, with every model and stretch, on hostile texts."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from explain.chapters import real_text as ch
from explain.chapters import real_text_evidence as rte
from explain.chapters import real_text_stats as rs
from explain.i18n import t
from lab.lm import ENCODINGS, STRETCHED, STRETCHES
from tests.helpers import chart, chart_elements, errors, fig_array, open_page

PAGE = "pages/labs/real_text.py"
Z = 1.959964
INDEX = ch.load_index()


# --- an independent computation ------------------------------------------------------------------


def naive(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% interval, by hand: mean ± z·√(Σ(v − mean)² / (n − 1)) / √n."""
    n = len(values)
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return mean, mean - Z * sd / math.sqrt(n), mean + Z * sd / math.sqrt(n)


def entry(index: dict, name: str, length: int) -> list[float] | None:
    src = index["models"].get(name) or index["stretches"][name]
    e = src["bpb"][str(length)]
    return None if e is None else list(e["windows"])


def naive_change(index: dict, name: str, top: int, base: int = 128) -> tuple[float, float, float] | None:
    """Window j at `top` against the mean of the windows j·k … j·k + k − 1 at `base`."""
    long, short = entry(index, name, top), entry(index, name, base)
    if long is None or short is None:
        return None
    k = top // base
    diffs = [w - sum(short[j * k : j * k + k]) / k for j, w in enumerate(long)]
    return naive(diffs)


def signed(e: tuple[float, float, float]) -> str:
    return f"{e[0]:+.3f} [{e[1]:+.3f}, {e[2]:+.3f}]"


def sign(e: tuple[float, float, float]) -> int:
    return 1 if e[1] > 0 else -1 if e[2] < 0 else 0


VERDICT = {1: "worse", -1: "better", 0: "same"}


def synthetic_index(seed: int, n128: int = 64) -> dict:
    """A made-up index.json of the shipped shape: per-window values with a random trend per line,
    learned with no value past 128 (as lab.lm writes it)."""
    rng = np.random.default_rng(seed)
    lengths = (128, 256, 512, 1024)

    def bpb(level: float, slope: float, table: bool) -> dict:
        base = level + 0.3 * rng.standard_normal(n128)
        out: dict = {}
        for n in lengths:
            k = n // 128
            if table and n > 128:
                out[str(n)] = None
                continue
            w = base.reshape(-1, k).mean(1) + slope * math.log2(k) + 0.05 * rng.standard_normal(n128 // k)
            out[str(n)] = {"bpb": float(w.mean()), "windows": [float(v) for v in w]}
        return out

    # Slopes on a coarse grid, so ties, flat lines and clear risers all occur across seeds.
    models = {
        e: {
            "label": e,
            "parameters": 1000 + i,
            "train_cpu_seconds": 60.0 + i,
            "curve": [{"step": 50, "train_bpb": 4.0, "heldout_bpb": 4.1}],
            "bpb": bpb(
                2.5 + 0.1 * rng.standard_normal(), float(rng.choice([-0.2, -0.05, 0.0, 0.02, 0.1, 0.3])), e == "learned"
            ),
        }
        for i, e in enumerate(ENCODINGS)
    }
    stretches = {s: {"label": s, "bpb": bpb(2.7, float(rng.choice([-0.1, 0.0, 0.2])), False)} for s in STRETCHES}
    return {
        "eval_lengths": list(lengths),
        "settings": {
            "steps": 10,
            "batch_size": 2,
            "length": 128,
            "n_layers": 2,
            "d_model": 128,
            "n_heads": 4,
            "lr": 0.003,
            "seed": 0,
        },
        "corpus": {
            "python": "3",
            "train": {"files": 1, "docstrings": 1, "bytes": 1, "sha256": "0" * 64},
            "heldout": {"files": 1, "docstrings": 1, "bytes": 1, "sha256": "1" * 64},
        },
        "models": models,
        "stretches": {"of": STRETCHED, **stretches},
        "eval_bytes": n128 * 128 + 1,
    }


def write(index: dict, tmp: Path) -> str:
    (tmp / "index.json").write_text(json.dumps(index))
    return str(tmp)


# --- the shipped numbers -------------------------------------------------------------------------


def test_shipped_index_has_every_model_and_stretch():
    assert tuple(INDEX["models"]) == ENCODINGS
    assert ch.stretches(INDEX) == STRETCHES and INDEX["stretches"]["of"] == STRETCHED


def test_points_agree_with_a_hand_computation():
    for name in (*ENCODINGS, *STRETCHES):
        for n in ch.lengths(INDEX):
            w = entry(INDEX, name, n)
            p = rs.point(INDEX, name, n)
            if w is None:
                assert p is None
                continue
            assert p is not None and p.n == len(w)
            assert (p.mean, p.lo, p.hi) == pytest.approx(naive(w), abs=1e-9)


def test_learned_has_no_point_past_its_training_length():
    assert entry(INDEX, "learned", 128) is not None
    assert all(entry(INDEX, "learned", n) is None for n in ch.lengths(INDEX) if n > 128)
    lc = ch.length_curves(ch.DIR, "en")
    assert lc is not None
    line = next(ln for ln in lc.lines if ln.name == "learned")
    assert math.isfinite(line.mean[0]) and not any(math.isfinite(v) for v in line.mean[1:])
    assert lc.missing == [ch.enc_label("learned", "en")]


@pytest.mark.parametrize("seed", [None, *range(12)], ids=lambda s: "shipped" if s is None else f"synthetic{s}")
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_sentences_and_the_question_agree_with_a_hand_computation(seed, lang, tmp_path):
    """Every line's change sentence, the lowest-at-8× sentence, the papers' reproduction sentences and
    the question (answer and every fact), over the shipped index and synthetic ones (the question's
    control space is the index itself: it has no widget of its own)."""
    index = INDEX if seed is None else synthetic_index(seed)
    d = ch.DIR if seed is None else write(index, tmp_path)
    base, top = 128, 1024
    lines = ch.change_sentences(d, lang)
    names = (*ENCODINGS, *STRETCHES)
    assert len(lines) == len(names) + 1
    changes = {}
    for name, line in zip(names, lines, strict=False):
        c = naive_change(index, name, top, base)
        assert f"**{ch.enc_label(name, lang)}**" in line
        if c is None:
            assert line == t("real_text.change.none", lang, name=ch.enc_label(name, lang), base=base, top=top)
            continue
        changes[name] = c
        assert signed(c) in line
        assert line.endswith(t(f"real_text.verdict.{VERDICT[sign(c)]}", lang) + ".")
    # The lowest at 8×: by hand, the lowest mean and every line whose paired difference to it is not above 0.
    means = {n: sum(w) / len(w) for n in names if (w := entry(index, n, top)) is not None}
    best = min(means, key=means.get)
    ties = [
        n
        for n in sorted(means, key=means.get)
        if n != best
        and sign(naive([a - b for a, b in zip(entry(index, n, top), entry(index, best, top), strict=True)])) <= 0
    ]
    assert f"**{ch.enc_label(best, lang)}**" in lines[-1]
    for n in ties:
        assert ch.enc_label(n, lang) in lines[-1]
    assert (
        lines[-1].find(t("real_text.lowest.tied", lang, top=top, name="@", value="@", others="@").split("@")[0]) == 0
    ) == bool(ties)

    # The papers: ALiBi keeps the paper's direction when ALiBi does not get worse and sinusoidal does.
    pp = rte.papers(d, lang)
    assert pp is not None
    alibi_same = sign(changes["alibi"]) <= 0 and sign(changes["sinusoidal"]) > 0
    assert pp.sentences[0].startswith(
        t(
            "real_text.paper.alibi_same" if alibi_same else "real_text.paper.alibi_differs",
            lang,
            base="@",
            top="@",
            seeds="@",
            alibi="@",
            sinusoidal="@",
            a="@",
            s="@",
            va="@",
            vs="@",
        ).split("@")[0]
    )
    # CoPE past its training length: decided on the same bytes (evidence.json), only where measured.
    from explain.chapters.real_text_stats import bootstrap

    ev = rte.load_evidence(d)
    cope_past = ev.get("models", {}).get("cope", {}).get("lengths", {}).get(str(top))
    if cope_past:
        e = bootstrap(cope_past["past"])
        assert signed(changes["cope"]) in pp.sentences[1] and e.signed_text() in pp.sentences[1]
        assert pp.sentences[1].startswith(
            t(
                "real_text.paper.cope_falls" if e.sign < 0 else "real_text.paper.cope_not_falls",
                lang,
                base="@",
                top="@",
                seeds="@",
                cope="@",
                c="@",
                d="@",
                v="@",
            ).split("@")[0]
        )
    assert len(pp.sentences) == (3 if cope_past else 2)
    assert not any("reproduces" in x for x in pp.sentences)
    trained = [n for n in ENCODINGS if n in means]
    tbest = min(trained, key=means.get)
    tties = [
        n
        for n in trained
        if n != tbest
        and sign(naive([a - b for a, b in zip(entry(index, n, top), entry(index, tbest, top), strict=True)])) <= 0
    ]
    key = (
        "cope_lowest"
        if tbest == "cope" and not tties
        else "cope_tied"
        if "cope" in (tbest, *tties)
        else "cope_not_lowest"
    )
    assert pp.sentences[-1].startswith(
        t(f"real_text.paper.{key}", lang, top=top, seeds="@", cope="@", other="@").split("@")[0]
    )

    # The question: whose change is largest; options are the trained models with a value at 8×.
    q = ch.rise_question(d, lang)
    assert q is not None
    trained_changes = {n: changes[n] for n in ENCODINGS if n in changes}
    assert q.options == tuple(trained_changes)
    order = sorted(trained_changes, key=lambda n: -trained_changes[n][0])
    assert q.answer == order[0] and q.answer in q.options
    first, second = order[0], order[1]
    k = top // base
    gap = []
    for j in range(len(entry(index, first, top))):
        da = entry(index, first, top)[j] - sum(entry(index, first, base)[j * k : j * k + k]) / k
        db = entry(index, second, top)[j] - sum(entry(index, second, base)[j * k : j * k + k]) / k
        gap.append(da - db)
    g = naive(gap)
    assert q.facts == {
        "base": base,
        "top": top,
        "name": ch.enc_label(first, lang),
        "change": signed(trained_changes[first]),
        "second": ch.enc_label(second, lang),
        "second_change": signed(trained_changes[second]),
        "gap": signed(g),
        "separated": sign(g) > 0,
        "least": ch.enc_label(order[-1], lang),
        "least_change": signed(trained_changes[order[-1]]),
    }
    assert q.explanation == t("real_text.question.answer_" + ("clear" if sign(g) > 0 else "close"), lang, **q.facts)


@pytest.mark.parametrize("seed", [None, 0, 1, 2, 3], ids=lambda s: "shipped" if s is None else f"synthetic{s}")
def test_without_the_stretches_the_sentences_cover_the_trained_models_only(seed, tmp_path):
    """The page's other toggle position: the same per-model sentences, and the lowest at 8× among the
    trained models alone (by hand)."""
    index = INDEX if seed is None else synthetic_index(seed)
    d = ch.DIR if seed is None else write(index, tmp_path)
    full, short = ch.change_sentences(d, "en", True), ch.change_sentences(d, "en", False)
    assert short[:-1] == full[: len(ENCODINGS)]
    means = {n: sum(w) / len(w) for n in ENCODINGS if (w := entry(index, n, 1024)) is not None}
    best = min(means, key=means.get)
    assert short[-1].startswith("At 1024 bytes the lowest") and f"**{ch.enc_label(best, 'en')}**" in short[-1]
    lc = ch.length_curves(d, "en", False)
    assert lc is not None and [ln.name for ln in lc.lines] == list(ENCODINGS)


def test_setup_states_the_index_figures():
    su = ch.setup(ch.DIR, "en")
    assert su is not None
    values = su.facts[t("real_text.setup.col_value", "en")]
    s = INDEX["settings"]
    assert f"{s['steps'] * s['batch_size'] * s['length']:,} bytes" in values
    assert INDEX["corpus"]["train"]["sha256"][:16] + "…" in values
    cpu = su.models[t("real_text.setup.col_cpu", "en")]
    assert cpu == [f"{INDEX['models'][e]['train_cpu_seconds']:.0f}" for e in ENCODINGS]
    assert su.total_cpu_minutes == pytest.approx(sum(INDEX["models"][e]["train_cpu_seconds"] for e in ENCODINGS) / 60)


def test_missing_index_says_so(tmp_path):
    assert ch.setup(str(tmp_path)) is None and ch.rise_question(str(tmp_path)) is None


# --- the page --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_page_draws_every_line_and_learned_only_at_128(lang):
    at = open_page(PAGE)
    if lang == "ko":
        at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    fig = chart(at, "real_text_lengths")
    traces = fig["data"]
    assert [tr["name"] for tr in traces] == [ch.enc_label(n, lang) for n in (*ENCODINGS, *STRETCHES)]
    learned = traces[ENCODINGS.index("learned")]
    y = fig_array(learned["y"])
    assert np.isfinite(y[0]) and not np.isfinite(y[1:]).any()
    assert any(
        "learned" in a["text"].lower() or ch.enc_label("learned", lang) in a["text"]
        for a in fig["layout"]["annotations"]
    )
    for key in (
        "real_text_curve_train",
        "real_text_curve_heldout",
        "real_text_heads",
        "real_text_next",
        "real_text_surprise",
    ):
        assert chart(at, key)["data"], key
    # Without the stretches: the trained models only.
    at.toggle(key="real_text_stretches").set_value(False).run()
    assert not errors(at)
    assert len(chart(at, "real_text_lengths")["data"]) == len(ENCODINGS)


def test_every_model_and_stretch_reads_the_text_and_learned_stops_at_its_table():
    long = "The quick brown fox jumps over the lazy dog. " * 8  # 360 bytes: past 128 and 256
    at = open_page(PAGE, sentence=long)
    for model in ENCODINGS:
        at.selectbox(key="real_text_model").set_value(model).run()
        assert not errors(at), model
        grid = chart(at, "real_text_heads")
        assert len([tr for tr in grid["data"] if tr["type"] == "heatmap"]) == 8
        notes = " ".join(i.value for i in at.info)
        if model == "learned":
            assert t("trained_attention.table_end", "en", end_minus=127, kept=128) in notes
        if model == STRETCHED:
            for s in STRETCHES:
                at.radio(key="real_text_stretch").set_value(s).run()
                assert not errors(at), s
                assert ch.enc_label(s, "en") in chart(at, "real_text_heads")["layout"]["title"]["text"]


def test_hostile_texts_never_raise():
    from tests.hostile import HAND_PICKED

    picked = [k for k in HAND_PICKED if not k.startswith("numbers:")]  # every family but the tame one
    at = open_page(PAGE)
    for k in picked:
        at.session_state["sentence"] = HAND_PICKED[k]
        at.run()
        assert not errors(at), k
    at.session_state["sentence"] = "가" * 10_000  # 30,000 bytes: cut to 1024
    at.run()
    assert not errors(at)
    assert any("1024" in i.value for i in at.info)


def test_every_numbers_panel_opens():
    """Each chart's Numbers panel (its data as a table and CSV) builds for this page's own figures:
    the error bars and the NaN points of the length chart, the grid, the readout and the surprise."""
    at = open_page(PAGE, sentence="Attention is all you need. " * 6)
    boxes = [k for k in at.session_state if str(k).endswith("__numbers")]
    assert len(boxes) == len(chart_elements(at)) == 6
    for k in boxes:
        at.session_state[k] = True
    at.run()
    assert not errors(at)
    assert len(at.get("download_button")) == 6
