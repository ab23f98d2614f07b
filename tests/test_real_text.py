"""The "Trained on real text" lab over the study (assets/lm/study/): every number, verdict and the
question agree with an independent computation from the run files (plain loops here, not the
chapter's numpy), on the shipped study and on made-up studies whose verdicts are known; the page runs
in both languages, with every model and stretch, on hostile texts."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from encoders import REGISTRY
from explain.chapters import real_text as ch
from explain.chapters import real_text_evidence as rte
from explain.chapters import real_text_study as S
from explain.i18n import t
from lab.lm import ENCODINGS, STRETCHED, STRETCHES
from tests.helpers import chart, chart_elements, errors, fig_array, open_page

PAGE = "pages/labs/real_text.py"
SHIPPED = S.load()
LENGTHS = (128, 256, 512, 1024)
VERDICT = {1: "worse", -1: "better", 0: "same"}


# --- an independent computation ------------------------------------------------------------------


def naive(values: list[float]) -> tuple[float, float, float]:
    """Mean and its 95% Student-t interval over seeds, by hand (scipy's t quantile)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, math.nan, math.nan
    half = stats.t.ppf(0.975, n - 1) * statistics.stdev(values) / math.sqrt(n)
    return mean, mean - half, mean + half


def sign(e: tuple[float, float, float]) -> int:
    return 0 if not math.isfinite(e[1]) else 1 if e[1] > 0 else -1 if e[2] < 0 else 0


def _sign3(x: float) -> str:
    # The page's convention: a value that rounds to zero is "0.000", never "-0.000" or "+0.000".
    return "0.000" if round(x, 3) == 0 else f"{x:+.3f}"


def signed(e: tuple[float, float, float]) -> str:
    if not math.isfinite(e[1]):
        return _sign3(e[0])
    return f"{_sign3(e[0])} [{_sign3(e[1])}, {_sign3(e[2])}]"


def test_a_change_that_rounds_to_zero_has_no_sign():
    assert [S.signed(x) for x in (-0.0004, 0.0, 0.0004, -0.0006, 0.0006)] == [
        "0.000",
        "0.000",
        "0.000",
        "-0.001",
        "+0.001",
    ]


def files(d: str) -> dict[str, dict[int, tuple[dict, dict]]]:
    """kind → seed → (meta, eval), read with plain json."""
    out: dict = {}
    for p in sorted(Path(d).glob("*.eval.json")):
        name = p.name[: -len(".eval.json")]
        kind, seed = name.rsplit("-s", 1)
        meta = Path(d) / f"{name}.json"
        if meta.exists():
            out.setdefault(kind, {})[int(seed)] = (json.loads(meta.read_text()), json.loads(p.read_text()))
    return out


def trained(f: dict) -> list[str]:
    """The trained encodings of a study, in the registry's order (fine-tunes name a base run)."""
    return [k for k in REGISTRY if k in f and not any(m.get("base") for m, _ in f[k].values())]


def mean(v: list[float] | None) -> float:
    assert v is not None
    return sum(v) / len(v)


def long_of(f: dict, kind: str, seed: int, n: int) -> list[float] | None:
    if kind in STRETCHES:
        return f[STRETCHED][seed][1].get("stretches", {}).get(kind, {}).get(str(n))
    return f[kind][seed][1]["long"][str(n)]


def base_of(f: dict, kind: str) -> str:
    derived = kind in STRETCHES or any(m.get("base") for m, _ in f.get(kind, {}).values())
    return STRETCHED if derived else kind


def seeds_of(f: dict, kind: str) -> list[int]:
    return sorted(f[STRETCHED] if kind in STRETCHES else f[kind])


def naive_past(f: dict, kind: str, seed: int, n: int) -> float | None:
    """Blocks at window positions ≥ 128 of n-byte windows: long − capped of the base run, by loop."""
    long = long_of(f, kind, seed, n)
    if long is None:
        return None
    capped = f[base_of(f, kind)][seed][1]["capped"]
    per = n // 128
    d = [long[b] - capped[b] for b in range(min(len(long), len(capped))) if b % per != 0]
    return mean(d)


def over(f: dict, kind: str, value) -> tuple[float, float, float] | None:
    v = [x for s in seeds_of(f, kind) if (x := value(s)) is not None]
    return naive(v) if v else None


# --- made-up studies with known answers -----------------------------------------------------------


def fake_study(tmp: Path, seed: int, n_seeds: int = 3, blocks: int = 32) -> str:
    """A study of the shipped shape: per-block values with a random level, a random trend past 128
    bytes and seed noise on a coarse grid, so clear risers, clear fallers and ties all occur."""
    rng = np.random.default_rng(seed)
    settings = {
        "encoding": "x",
        "steps": 10,
        "seed": 0,
        "batch_size": 2,
        "length": 128,
        "lr": 0.003,
        "warmup": 2,
        "weight_decay": 0.01,
        "grad_clip": 1.0,
        "d_model": 16,
        "n_heads": 2,
        "n_layers": 2,
        "curve_every": 5,
        "val_windows": 4,
        "bos": 2,
        "autocast": True,
    }
    kinds = ("none", "sinusoidal", "learned", "t5", "alibi", "rope", "cope")
    # A coarse grid plus a small offset per kind: no two kinds tie exactly (an exact tie would make
    # "the largest change" a matter of float rounding).
    trend = {
        k: float(rng.choice([-0.3, -0.05, 0.0, 0.1, 0.5])) + 0.003 * i
        for i, k in enumerate((*kinds, *STRETCHES, "rope+pi-ft", "rope+ft"))
    }
    noise = float(rng.choice([0.001, 0.05, 0.4]))

    def reading(level: float, k: str, s_noise: float) -> tuple[list[float], dict]:
        capped = level + 0.2 * rng.standard_normal(blocks)
        long: dict = {}
        for n in LENGTHS:
            if k == "learned" and n > 128:
                long[str(n)] = None
                continue
            per = n // 128
            b = np.arange(blocks)
            # Blocks at position 0 of a window: a bit worse than capped (less context); later: the trend.
            # (block noise too: a mean that lands exactly on a rounding boundary would make the
            # printed digits a matter of summation order)
            v = capped + np.where(b % per == 0, 0.1, trend[k] if n > 128 else 0.0) + s_noise
            v = v + 0.01 * rng.standard_normal(blocks)
            long[str(n)] = [float(x) for x in v]
        return [float(x) for x in capped], long

    for s in range(n_seeds):
        for i, k in enumerate((*kinds, "rope+pi-ft", "rope+ft")):
            s_noise = noise * float(rng.standard_normal())
            capped, long = reading(2.3 + 0.05 * i, k, s_noise)
            ev: dict = {"capped": capped, "long": long, "cpu_seconds": 1.0}
            if k == "rope":
                ev["stretches"] = {x: {str(n): reading(2.4, x, s_noise)[1][str(n)] for n in LENGTHS} for x in STRETCHES}
            if k == "t5":
                share = lambda a: [[a + 0.01 * h for h in range(2)] for _ in range(2)]  # noqa: E731
                ev["t5_far_bucket"] = {
                    "far_from": 113,
                    "far_bias": [-3.0, -4.0],
                    "share": {"128": share(0.01), "1024": share(0.3)},
                }
            meta: dict = {
                "settings": {**settings, "encoding": k if k in kinds else "rope", "seed": s},
                "parameters": 1000 + i,
                "train_cpu_seconds": 60.0,
                "curve": [
                    {"step": st, "train_bpb": 3.0 - st / 1000, "heldout_bpb": 3.1 - st / 1000 - s * 0.01}
                    for st in range(100, 1100 + 100 * (k == "none"), 100)
                ],
            }
            if k in ("rope+pi-ft", "rope+ft"):
                meta.update(base=f"rope-s{s}", stretch="rope-pi" if k == "rope+pi-ft" else None)
            (tmp / f"{k}-s{s}.json").write_text(json.dumps(meta))
            (tmp / f"{k}-s{s}.eval.json").write_text(json.dumps(ev))
    anchors = {
        "ngram": {
            str(o): [round(3.0 - 0.15 * o + 0.1 * float(x), 5) for x in rng.standard_normal(blocks)]
            for o in (1, 2, 3, 4, 5)
        },
        "ngram_uncut": {str(o): [2.0] * blocks for o in (1, 2, 3, 4, 5)},
        "compressors": {"xz": 1.9, "bz2": 2.1},
    }
    (tmp / "anchors.json").write_text(json.dumps(anchors))
    return str(tmp)


def studies(tmp_path: Path, seed: int | None) -> str:
    return S.STUDY if seed is None else fake_study(tmp_path, seed)


CASES = [None, *range(10)]
IDS = lambda s: "shipped" if s is None else f"made-up{s}"  # noqa: E731


# --- the statistics --------------------------------------------------------------------------------


def test_t_table_is_students_t():
    for df, v in enumerate(S.T975, start=1):
        assert v == pytest.approx(stats.t.ppf(0.975, df), abs=1e-8)


@pytest.mark.parametrize("n", range(12))
def test_over_seeds_is_the_hand_interval(n):
    v = list(np.random.default_rng(n).normal(0.1, 0.2, n))
    e = S.over_seeds(v)
    assert e.n == n and e.below == sum(x < 0 for x in v) and e.above == sum(x > 0 for x in v)
    if n == 0:
        return
    want = naive(v)
    if n > len(S.T975) + 1:  # past the table: its last (larger, so conservative) quantile
        assert e.lo <= want[1] + 1e-12 and e.hi >= want[2] - 1e-12
    else:
        assert (e.mean, e.lo, e.hi) == pytest.approx(want, nan_ok=True)
    if n < 2:
        assert e.sign == 0  # one seed never gets a verdict


@pytest.mark.parametrize("length", [256, 512, 1024])
def test_past_blocks_are_the_bytes_whose_context_differs(length):
    idx = S.past_blocks(length, 128, 64)
    for b in range(64):
        first_position = (b * 128) % length  # the window position of the block's first byte
        assert (b in idx) == (first_position >= 128)


# --- every number against the files ----------------------------------------------------------------


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_length_lines_are_seed_means_of_the_blocks(seed, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    lc = ch.length_curves(d, "en", True)
    assert lc is not None
    for ln in lc.lines:
        for k, n in enumerate(lc.lengths):
            want = over(
                f, ln.name, lambda s, n=n, name=ln.name: None if (v := long_of(f, name, s, n)) is None else mean(v)
            )
            if want is None:
                assert not math.isfinite(ln.mean[k]), (ln.name, n)
                continue
            got = (ln.mean[k], ln.lo[k], ln.hi[k])
            assert got == pytest.approx(want, nan_ok=True), (ln.name, n)


@pytest.mark.parametrize("seed", CASES, ids=IDS)
@pytest.mark.parametrize("lang", ["en", "ko"])
def test_sentences_and_the_question_agree_with_a_hand_computation(seed, lang, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    st = S.load(d)
    assert st is not None
    top = 1024

    def change(kind):
        return over(
            f,
            kind,
            lambda s: None if (a := long_of(f, kind, s, top)) is None else mean(a) - mean(long_of(f, kind, s, 128)),
        )

    # The change sentences: one per line, each verdict from the interval over seeds.
    sentences = ch.change_sentences(st, lang, True)
    kinds = [*st.encodings, *st.stretches, *st.finetunes]
    assert len(sentences) == len(kinds) + 1
    for kind, sentence in zip(kinds, sentences, strict=False):
        c = change(kind)
        if c is None:
            assert sentence == t("real_text.change.none", lang, name=ch.enc_label(kind, lang), base=128, top=top)
            continue
        assert signed(c) in sentence, (kind, sentence)
        assert sentence.endswith(t(f"real_text.verdict.{VERDICT[sign(c)]}", lang) + ".")
    # The same-bytes verdicts.
    sb = rte.same_bytes(d, lang)
    assert sb is not None
    for kind, sentence in zip(kinds, sb.sentences, strict=True):
        p = over(f, kind, lambda s, kind=kind: naive_past(f, kind, s, top))
        if p is None:
            assert kind == "learned"
            continue
        key = {-1: "uses", 1: "hurts", 0: "none"}[sign(p)]
        below = sum((naive_past(f, kind, s, top) or 0.0) < 0 for s in seeds_of(f, kind))
        assert sentence == t(
            f"real_text.same.{key}",
            lang,
            name=ch.enc_label(kind, lang),
            train=128,
            top=top,
            d=signed(p),
            seeds=ch.seeds_text(len(seeds_of(f, kind)), lang),
            below=below,
        )
    # The question: the largest mean change among the trained encodings.
    q = ch.rise_question(d, lang)
    changes = {k: c for k in st.encodings if (c := change(k)) is not None}
    assert q is not None and q.options == tuple(changes)
    order = sorted(changes, key=lambda k: -changes[k][0])
    assert q.answer == order[0] and q.answer in q.options
    assert q.facts["change"] == signed(changes[order[0]]) and q.facts["least"] == ch.enc_label(order[-1], lang)
    gap = naive(
        [
            (mean(long_of(f, order[0], s, top)) - mean(long_of(f, order[0], s, 128)))
            - (mean(long_of(f, order[1], s, top)) - mean(long_of(f, order[1], s, 128)))
            for s in sorted(set(seeds_of(f, order[0])) & set(seeds_of(f, order[1])))
        ]
    )
    assert q.facts["gap"] == signed(gap) and q.facts["separated"] == (sign(gap) > 0)


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_anchors_are_seed_paired_differences_on_the_same_bytes(seed, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    a = json.loads((Path(d) / "anchors.json").read_text())
    an = rte.anchors(d, "en")
    assert an is not None
    col_enc = t("real_text.same.col_encoding", "en")
    for order in rte.COMPARED_ORDERS:
        col = t("real_text.anchor.col_vs", "en", k=order)
        for row, kind in enumerate(trained(f)):
            assert an.models[col_enc][row] == ch.enc_label(kind, "en")
            ng = a["ngram"][str(order)]
            want = naive(
                [mean([x - y for x, y in zip(f[kind][s][1]["long"]["128"], ng, strict=True)]) for s in sorted(f[kind])]
            )
            assert an.models[col][row] == signed(want), (kind, order)
    xz = a["compressors"]["xz"]
    gaps = [mean([mean(f[k][s][1]["long"]["128"]) for s in f[k]]) - xz for k in trained(f)]
    assert f"{min(gaps):+.2f}" in an.sentences[-1] and f"{max(gaps):+.2f}" in an.sentences[-1]


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_rope_stretched_and_fine_tuned_against_plain_rope(seed, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    pi = rte.stretches(d, "en")
    if STRETCHED not in f:
        assert pi is None
        return
    assert pi is not None
    st = S.load(d)
    assert st is not None
    col_vs = t("real_text.pi.col_vs", "en", name=ch.enc_label(STRETCHED, "en"), n=1024)
    rows = [STRETCHED, *st.stretches, *st.finetunes]
    assert pi.table[t("real_text.pi.col_what", "en")] == [ch.enc_label(k, "en") for k in rows]
    for row, kind in enumerate(rows[1:], start=1):
        both = sorted(set(seeds_of(f, kind)) & set(f[STRETCHED]))
        want = naive([mean(long_of(f, kind, s, 1024)) - mean(long_of(f, STRETCHED, s, 1024)) for s in both])
        assert pi.table[col_vs][row] == signed(want)
        assert signed(want) in pi.sentences[row - 1]
    # The two fine-tunes against each other, seed-paired (the PI paper's control), with its verdict.
    fts = {m.get("stretch"): k for k in f for m, _ in f[k].values() if m.get("base")}
    assert len(pi.sentences) == len(rows) - 1 + (len(fts) == 2)
    if len(fts) == 2:
        a, b = fts["rope-pi"], fts[None]
        both = sorted(set(seeds_of(f, a)) & set(seeds_of(f, b)))
        want = naive([mean(long_of(f, a, s, 1024)) - mean(long_of(f, b, s, 1024)) for s in both])
        last = pi.sentences[-1]
        assert signed(want) in last and ch.enc_label(a, "en") in last and ch.enc_label(b, "en") in last
        assert last.count(t(f"real_text.verdict.{VERDICT[sign(want)]}", "en")) == 1


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_the_t5_sentence_states_the_far_bucket_shares(seed, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    sentence = rte.t5_far_bucket(d, "en")
    fbs = [ev["t5_far_bucket"] for _, ev in f.get("t5", {}).values() if "t5_far_bucket" in ev]
    if not fbs:
        assert sentence is None
        return
    assert sentence is not None and f"≥ {fbs[0]['far_from']}" in sentence
    for layer in range(len(fbs[0]["share"]["128"])):
        a = naive([mean(fb["share"]["128"][layer]) for fb in fbs])
        b = naive([mean(fb["share"]["1024"][layer]) for fb in fbs])
        text = lambda e: f"{e[0]:.2f}" if not math.isfinite(e[1]) else f"{e[0]:.2f} [{e[1]:.2f}, {e[2]:.2f}]"  # noqa: E731
        assert f"layer {layer + 1}: {text(a)} at 128 → {text(b)} at 1024" in sentence


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_training_curves_say_who_was_still_learning(seed, tmp_path):
    d = studies(tmp_path, seed)
    f = files(d)
    tc = ch.training_curves(d, "en")
    assert tc is not None
    falling: list[str] = []
    flat: list[str] = []
    for kind in trained(f):
        runs = [f[kind][s][0]["curve"] for s in sorted(f[kind])]
        steps = [p["step"] for p in runs[0]]
        if steps[-1] - ch.TAIL_STEPS not in steps:
            continue
        k = steps.index(steps[-1] - ch.TAIL_STEPS)
        e = naive([c[-1]["heldout_bpb"] - c[k]["heldout_bpb"] for c in runs])
        (falling if sign(e) < 0 else flat).append(f"{ch.enc_label(kind, 'en')} {signed(e)}")
    text = " ".join(tc.sentences)
    for item in falling + flat:
        assert item in text
    if falling:
        assert tc.sentences[0].startswith("Still learning") and all(x in tc.sentences[0] for x in falling)


def test_setup_states_the_study_figures():
    su = ch.setup(S.STUDY, "en")
    assert su is not None
    f = files(S.STUDY)
    col = t("real_text.setup.col_seeds", "en")
    kinds = trained(f) + [k for k in sorted(f) if k not in trained(f)]
    assert su.models[col] == [", ".join(str(s) for s in sorted(f[k])) for k in kinds]
    cpu = sum(m["train_cpu_seconds"] + ev["cpu_seconds"] for runs in f.values() for m, ev in runs.values())
    assert su.cpu_hours == pytest.approx(cpu / 3600)
    assert su.runs == sum(len(r) for r in f.values())


def test_a_study_with_no_finished_run_says_so(tmp_path):
    assert ch.setup(str(tmp_path)) is None and ch.rise_question(str(tmp_path)) is None
    assert rte.same_bytes(str(tmp_path)) is None and rte.anchors(str(tmp_path)) is None


def test_a_single_seed_gets_no_verdict(tmp_path):
    d = fake_study(tmp_path, 0, n_seeds=1)
    st, sb = S.load(d), rte.same_bytes(d, "en")
    assert st is not None and sb is not None
    for s in ch.change_sentences(st, "en", True)[:-1]:
        assert "not distinguishable" in s or "no value" in s
    assert all("not distinguishable" in s or "no value" in s for s in sb.sentences)


# --- the page --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_page_draws_every_line_and_learned_only_at_128(lang):
    assert SHIPPED is not None
    at = open_page(PAGE)
    if lang == "ko":
        at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    fig = chart(at, "real_text_lengths")
    traces = fig["data"]
    kinds = [*SHIPPED.encodings, *SHIPPED.stretches, *SHIPPED.finetunes]
    assert [tr["name"] for tr in traces] == [ch.enc_label(n, lang) for n in kinds]
    if "learned" in SHIPPED.encodings:
        y = fig_array(traces[SHIPPED.encodings.index("learned")]["y"])
        assert np.isfinite(y[0]) and not np.isfinite(y[1:]).any()
    for key in (
        "real_text_curve_train",
        "real_text_curve_heldout",
        "real_text_heads",
        "real_text_next",
        "real_text_surprise",
    ):
        assert chart(at, key)["data"], key
    # Without the stretches and fine-tunes: the trained models only.
    at.toggle(key="real_text_stretches").set_value(False).run()
    assert not errors(at)
    assert len(chart(at, "real_text_lengths")["data"]) == len(SHIPPED.encodings)


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
    # Every hostile input (tests/hostile.py: the hand-picked families and their mixtures) goes through
    # this page, with no error and its title drawn, in tests/test_hostile_inputs.py's whole-corpus
    # sweep of the pages that read the text themselves; the hand-picked ones went through it here too,
    # a second time (18 s of the suite). That it stays there:
    from tests.test_hostile_inputs import WHOLE_CORPUS_PAGES

    assert PAGE in [c.path for c in WHOLE_CORPUS_PAGES]
    at = open_page(PAGE)
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


@pytest.mark.parametrize("seed", CASES, ids=IDS)
def test_the_papers_sentences_follow_the_seed_intervals(seed, tmp_path):
    """ALiBi's sentence says "same direction" only when, over seeds, ALiBi's change is not above 0
    and sinusoidal's is; CoPE's says "same direction" only when the same-bytes interval lies below 0,
    "not the direction" only when it lies above, and "not settled" otherwise (one seed included)."""
    d = studies(tmp_path, seed)
    f = files(d)
    pp = rte.papers(d, "en")
    assert pp is not None

    def change(kind):
        return over(f, kind, lambda s: mean(long_of(f, kind, s, 1024)) - mean(long_of(f, kind, s, 128)))

    a, s = change("alibi"), change("sinusoidal")
    alibi = pp.sentences[0]
    same = sign(a) <= 0 and sign(s) > 0
    assert alibi.startswith("**ALiBi against sinusoidal — " + ("same direction" if same else "not the paper's"))
    p = over(f, "cope", lambda sd: naive_past(f, "cope", sd, 1024))
    assert p is not None
    head = {-1: "same direction as Figure 3", 1: "not the direction of Figure 3", 0: "not settled"}[sign(p)]
    assert pp.sentences[1].startswith(f"**CoPE past its training length — {head}")
    assert signed(p) in pp.sentences[1]
