"""Shaw et al. 2018 relative position representations: encoders/shaw.py, its chapter and page."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.attention import SelfAttention, attend, toy_layer
from encoders.shaw import (
    ShawConfig,
    ShawRelative,
    clipped_relative_index,
    relative_position_index,
    value_position_term,
)
from explain.chapters import shaw as ch
from tests.helpers import chart, errors, fig_array, open_page

PAGE = "pages/relative/shaw.py"


@pytest.fixture(autouse=True)
def _no_grad():
    """Numbers only: no autograd graph, so tensors convert to numpy directly."""
    with torch.no_grad():
        yield


def clip(x: int, k: int) -> int:
    return max(-k, min(k, x))


def loop_index(n_queries: int, n_keys: int, k: int) -> list[list[int]]:
    """tensor2tensor's rule in pure Python: query i sits at key position i + (n_keys − n_queries)."""
    shift = n_keys - n_queries
    return [[clip(j - (i + shift), k) + k for j in range(n_keys)] for i in range(n_queries)]


def seeded(shape, seed, dtype=torch.float64):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=dtype)


# -- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [1, 2, 7, 40])
@pytest.mark.parametrize("k", [0, 1, 3, 16])
def test_square_index_is_toeplitz_bounded_and_centred(n, k):
    idx = relative_position_index(n, n, k)
    assert idx.dtype == torch.long and idx.shape == (n, n)
    assert int(idx.min()) >= 0 and int(idx.max()) <= 2 * k
    assert torch.all(idx.diagonal() == k)  # distance 0 is the middle row
    # one value per diagonal: idx[i, j] depends on j − i only
    assert torch.equal(idx[1:, 1:], idx[:-1, :-1])
    # monotone along a row: farther right, never a smaller row number
    assert torch.all(idx[:, 1:] >= idx[:, :-1])


def test_index_is_shift_invariant_for_any_offset():
    pos = torch.arange(9)
    base = clipped_relative_index(pos, pos, 3)
    for offset in (1, 17, 1000, -5):
        assert torch.equal(clipped_relative_index(pos + offset, pos + offset, 3), base)
    # …but not if only the queries move: then the distances change
    assert not torch.equal(clipped_relative_index(pos + 1, pos, 3), base)


def test_more_queries_than_keys_is_rejected():
    with pytest.raises(ValueError):
        relative_position_index(5, 3, 2)
    with pytest.raises(ValueError):
        ShawRelative(8, 2, ShawConfig(max_relative_position=-1))


# -- pinned numbers ---------------------------------------------------------------------------


def test_pinned_index_with_queries_aligned_to_the_end():
    # 3 queries at key positions 2, 3, 4; k = 1
    assert relative_position_index(3, 5, 1).tolist() == [[0, 0, 1, 2, 2], [0, 0, 0, 1, 2], [0, 0, 0, 0, 1]]
    assert relative_position_index(1, 4, 2).tolist() == [[0, 0, 1, 2]]  # the last key is the query itself


# -- independent computations -----------------------------------------------------------------


@pytest.mark.parametrize("nq,nk,k", [(6, 6, 2), (3, 8, 2), (1, 5, 0), (7, 7, 10), (4, 9, 3), (0, 3, 1)])
def test_index_matches_pure_python_loops(nq, nk, k):
    assert relative_position_index(nq, nk, k).tolist() == loop_index(nq, nk, k)


def _encoder(d_model=12, n_heads=3, k=2, seed=0) -> ShawRelative:
    return build("shaw", d_model, n_heads, seed, ShawConfig(max_relative_position=k)).double()


def test_logit_terms_match_explicit_float64_loops():
    enc = _encoder(d_model=12, n_heads=3, k=2)
    b, h, n, d = 2, 3, 6, 4
    q, k = seeded((b, h, n, d), 1), seeded((b, h, n, d), 2)
    pos = torch.arange(n)
    terms = enc.logit_terms(q, k, pos, pos, causal=False).terms
    assert set(terms) == set(ShawRelative.term_names)
    a_k = enc.a_k.detach()
    content = np.zeros((b, h, n, n))
    position = np.zeros((b, h, n, n))
    for bb in range(b):
        for hh in range(h):
            for i in range(n):
                for j in range(n):
                    row = clip(j - i, 2) + 2
                    content[bb, hh, i, j] = sum(float(q[bb, hh, i, c] * k[bb, hh, j, c]) for c in range(d)) / math.sqrt(
                        d
                    )
                    position[bb, hh, i, j] = sum(float(q[bb, hh, i, c] * a_k[row, c]) for c in range(d)) / math.sqrt(d)
    np.testing.assert_allclose(terms["content"].numpy(), content, rtol=0, atol=1e-12)
    np.testing.assert_allclose(terms["position"].numpy(), position, rtol=0, atol=1e-12)
    # the position term is not zero and not the content term: the loop really checks something
    assert np.abs(position).max() > 0.1 and np.abs(position - content).max() > 0.1


@pytest.mark.parametrize("causal", [False, True])
def test_value_term_is_the_sum_over_keys_of_weight_times_av(causal):
    enc = _encoder(d_model=8, n_heads=2, k=1)
    n, d = 7, 4
    q, k, v = seeded((1, 2, n, d), 3), seeded((1, 2, n, d), 4), seeded((1, 2, n, d), 5)
    pos = torch.arange(n) + 3
    _, _, weights, heads = attend(enc, q, k, v, pos, pos, causal)
    extra = enc.value_terms(weights, pos, pos)
    a_v = enc.a_v.detach()
    expected = np.zeros((1, 2, n, d))
    for hh in range(2):
        for i in range(n):
            for j in range(n):
                row = clip(int(pos[j] - pos[i]), 1) + 1
                expected[0, hh, i] += float(weights[0, hh, i, j]) * a_v[row].numpy()
    np.testing.assert_allclose(extra.numpy(), expected, rtol=0, atol=1e-12)
    # attend() adds it on top of Σ α v
    np.testing.assert_allclose(heads.numpy(), (weights @ v).numpy() + expected, rtol=0, atol=1e-12)


def test_whole_layer_matches_a_from_scratch_float64_implementation():
    """The paper's equations written out per head with loops, against SelfAttention + ShawRelative."""
    torch.manual_seed(0)
    D, H, n, kk = 8, 2, 6, 2
    enc = _encoder(d_model=D, n_heads=H, k=kk, seed=7)
    layer = SelfAttention(enc, torch.Generator().manual_seed(11)).double()
    x = seeded((1, n, D), 12)
    out = layer(x).output[0].numpy()
    Wq, Wk, Wv, Wo = (w.detach().numpy() for w in (layer.w_q, layer.w_k, layer.w_v, layer.w_o))
    ak, av = enc.a_k.detach().numpy(), enc.a_v.detach().numpy()
    d = D // H
    X = x[0].numpy()
    z = np.zeros((n, D))
    for h in range(H):
        sl = slice(h * d, (h + 1) * d)
        for i in range(n):
            e = np.array(
                [(X[i] @ Wq[:, sl]) @ (X[j] @ Wk[:, sl] + ak[clip(j - i, kk) + kk]) / math.sqrt(d) for j in range(n)]
            )
            alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
            z[i, sl] = sum(alpha[j] * (X[j] @ Wv[:, sl] + av[clip(j - i, kk) + kk]) for j in range(n))
    np.testing.assert_allclose(out, z @ Wo, rtol=0, atol=1e-10)


def test_relative_invariance_position_terms_unchanged_by_an_offset():
    layer = toy_layer(build("shaw", 16, 2, 3, ShawConfig(max_relative_position=3)), 3).double()
    x = seeded((1, 9, 16), 6)
    base = layer(x, positions=torch.arange(9))
    for offset in (1, 250, 10_000):
        moved = layer(x, positions=torch.arange(9) + offset)
        assert torch.equal(moved.terms["position"], base.terms["position"])
        assert torch.equal(moved.output, base.output)
    # a non-uniform change of positions does change the position term (the test can fail)
    gapped = layer(x, positions=torch.tensor([0, 1, 2, 3, 9, 10, 11, 12, 13]))
    assert not torch.allclose(gapped.terms["position"], base.terms["position"])


def test_raising_k_keeps_the_rows_of_nearer_distances():
    small = build("shaw", 16, 2, 5, ShawConfig(max_relative_position=2))
    large = build("shaw", 16, 2, 5, ShawConfig(max_relative_position=6))
    assert small.a_k.shape == (5, 8) and large.a_k.shape == (13, 8)  # 2k+1 rows of size d_head
    torch.testing.assert_close(large.a_k[4:9], small.a_k, rtol=0, atol=0)  # rows −2…+2
    torch.testing.assert_close(large.a_v[4:9], small.a_v, rtol=0, atol=0)
    assert not torch.equal(large.a_k[3], small.a_k[0])  # row −3 is new, not the old clip row


def test_registry_and_determinism():
    assert REGISTRY["shaw"] is ShawRelative
    a, b = build("shaw", 16, 4, 9), build("shaw", 16, 4, 9)
    assert torch.equal(a.a_k, b.a_k) and torch.equal(a.a_v, b.a_v)
    assert not torch.equal(build("shaw", 16, 4, 10).a_k, a.a_k)
    assert a.config.max_relative_position == 4


def test_value_term_helper_handles_clipped_keys_in_one_row():
    # all weight on keys far to the right: everything lands in the +k row
    k = 2
    idx = clipped_relative_index(torch.tensor([0]), torch.arange(6), k)  # distances 0 … 5 → rows 2,3,4,4,4,4
    w = torch.tensor([[[[0.0, 0.0, 0.0, 0.5, 0.25, 0.25]]]])
    table = torch.eye(2 * k + 1)
    out = value_position_term(w, table, idx)
    assert out[0, 0, 0].tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


# -- the chapter's numbers --------------------------------------------------------------------


def test_chapter_view_is_consistent():
    toks = tuple(["the", "cat", "sat", "on", "the", "mat", "and", "the", "dog", "sat", "on", "the", "log"])
    v = ch.shaw_view(toks, seed=1, k=3)
    n = len(toks)
    assert v.is_clipped.mean() == pytest.approx(ch.clipped_share(n, 3))
    assert np.array_equal(v.index, v.clipped + 3)
    assert v.a_k.shape == (7, ch.D_MODEL // ch.N_HEADS)
    np.testing.assert_allclose(v.mass_per_distance.sum(-1), 1.0, atol=1e-5)
    np.testing.assert_allclose(v.value_position, v.mass_per_distance @ v.a_v, atol=1e-5)
    assert v.shift.position_change == 0.0 and v.shift.output_change == 0.0 and v.shift.shift == 1000
    # the two copies of "the" at positions 0 and 4 get identical rows without the position term …
    np.testing.assert_allclose(v.weights_content_only[:, 0], v.weights_content_only[:, 4], atol=1e-6)
    # … and different rows with it
    assert np.abs(v.weights[:, 0] - v.weights[:, 4]).max() > 1e-3
    assert ch.distance_labels(2) == ["≤ −2", "−1", "0", "+1", "≥ +2"]


def pairs_farther_than(n: int, k: int) -> int:
    """Clipped pairs of an n-token sentence, counted by a loop over the distances: distance d > 0
    occurs n − d times on each side of the diagonal."""
    return sum(2 * (n - d) for d in range(k + 1, n))


QUESTION_NS = [*range(1, 71), 100, 256]  # every length up to past K_MAX + 1, and two long sentences


@pytest.mark.parametrize("k", range(1, ch.K_MAX + 1))
def test_rows_read_over_every_k_and_many_lengths(k):
    """A sentence of n tokens reads 2·min(n − 1, k) + 1 of the table's 2k + 1 rows (the fix of the
    old caption's "2k − 1 remaining rows"): counted on the encoder's index, checked against the
    formula for every length and against a set of clipped distances built by hand for short ones."""
    for n in QUESTION_NS:
        assert ch.rows_read(n, k) == 2 * min(n - 1, k) + 1, (n, k)
        if n <= 20:
            by_hand = {clip(j - i, k) + k for i in range(n) for j in range(n)}
            assert ch.rows_read(n, k) == len(by_hand)
    assert ch.rows_read(k + 1, k) == 2 * k + 1 and ch.rows_read(k, k) == 2 * k - 1  # the edge, both sides


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("k", range(1, ch.K_MAX + 1))
def test_index_question_and_caption_over_the_control_space(k, lang):
    """The rows question and the caption under the index map, at every k of the slider and every
    sentence length up to 70 (plus 100 and 256), in both languages: the answer is an option, and
    every fact stated is recomputed here from the distances alone."""
    for n in QUESTION_NS:
        distances = range(-(n - 1), n)  # every j − i an n-token sentence has
        rows = len({clip(d, k) for d in distances})
        q = ch.index_question(n, k, lang)
        if n == 1:
            assert q is None
        else:
            assert q.answer == rows and rows in q.options and len(q.options) >= 2
            f = q.facts
            assert (f["rows"], f["last"], f["values"], f["k"], f["possible"]) == (rows, n - 1, 2 * n - 1, k, 2 * k + 1)
            assert rows == min(f["values"], f["possible"])  # "whichever is fewer"
            for name in ("rows", "last", "values", "k", "possible"):
                assert str(f[name]) in q.explanation, (name, q.explanation)
        sec = ch.index_section(n, k, lang)
        f = sec.facts
        clipped = pairs_farther_than(n, k)
        assert f["clipped"] == clipped and f["rest"] == n * n - clipped and f["pairs"] == n * n
        assert f["share"] == pytest.approx(ch.clipped_share(n, k)) == pytest.approx(clipped / (n * n))
        assert f["used"] == rows and f["table"] == 2 * k + 1 and f["unread"] == 2 * k + 1 - rows
        assert f["reach"] == min(n - 1, k)
        assert f"{f['used']}" in sec.share and f"{f['reach']}" in sec.share
        if clipped:
            assert f["used"] == 2 * k + 1 and f"{clipped:,}" in sec.share  # every row is read
        elif f["unread"]:
            assert f"{f['unread']}" in sec.share and f"{f['table']}" in sec.share
        else:
            assert n - 1 == k


def test_the_query_has_no_position_vector():
    """aᴷ is added to the key only: the layer owns no table for queries, and the position term of a
    query depends on its word and the distance, never on where the query stands."""
    enc = build("shaw", 64, 4, 1)
    assert {name for name, _ in enc.named_parameters()} == {"a_k", "a_v"}
    toks = ("the", "cat", "sat", "on", "the", "mat", "and", "a", "dog")
    v = ch.shaw_view(toks, seed=2, k=3)
    for d in range(-4, 5):  # "the" at 0 and 4: the same word asks the same of every distance
        if 0 <= d < len(toks) and 0 <= 4 + d < len(toks):
            assert np.array_equal(v.position[:, 0, d], v.position[:, 4, 4 + d]), d
    assert np.abs(v.position[:, 1, 2] - v.position[:, 0, 1]).max() > 1e-3  # another word: another number


@pytest.mark.parametrize("k", [1, 3, 8, 64])
def test_per_pair_tensor_and_gather_give_the_same_position_term(k):
    """The paper's n×n×d_z tensor of aᴷ_ij (tensor2tensor) and the encoder's gather of q·wᴷ_r agree
    to float32 rounding, and the sizes the cost section states are n²·d_z and h·n·(2k + 1)."""
    sentence = ("the", "cat", "sat", "on", "the", "mat", "and", "the", "dog", "sat", "on", "the", "log")
    for toks in [("a",), sentence, tuple("x" * 40)]:
        v = ch.shaw_view(toks, seed=3, k=k)
        n, d = len(toks), ch.D_MODEL // ch.N_HEADS
        assert v.paper_form_difference < 1e-5
        assert v.per_pair_numbers == n * n * d and v.gathered_numbers == ch.N_HEADS * n * (2 * k + 1)


def test_paper_results_are_quoted_with_their_table():
    """Shaw et al. 2018, Table 1 (WMT 2014 newstest): base and big, EN-DE and EN-FR, both languages."""
    from explain.prose import section

    for lang, table in (("en", "Table 1"), ("ko", "표 1")):
        intro = section("shaw", "intro", lang)
        assert table in intro
        for number in ("26.5", "26.8", "38.2", "38.7", "27.9", "29.2", "41.2", "41.5"):
            assert number in intro, (lang, number)


# -- the page ---------------------------------------------------------------------------------


def test_page_default_and_k_slider_extremes():
    at = open_page(PAGE, sentence="the cat sat on the mat and the dog sat on the log")
    assert not errors(at)
    n = 13
    for k in (1, 64):
        at.slider(key="shaw_k").set_value(k).run()
        assert not errors(at)
        z = fig_array(chart(at, "shaw_index")["data"][0]["z"])
        expected = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -k, k)
        assert np.array_equal(z, expected)
        veil = fig_array(chart(at, "shaw_index")["data"][1]["z"])
        assert np.array_equal(
            np.isfinite(veil), np.abs(expected) < np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
        )
        assert fig_array(chart(at, "shaw_ak")["data"][0]["z"]).shape == (2 * k + 1, 16)
        assert fig_array(chart(at, "shaw_mass")["data"][0]["z"]).shape == (n, 2 * k + 1)
    at.selectbox(key="shaw_head").set_value(3).run()
    assert not errors(at)
    assert chart(at, "shaw_terms")["layout"]["title"]["text"].startswith("The two terms of the logit, head 3")


def test_page_caption_is_the_chapters():
    sentence = "a b c d e f g"
    at = open_page(PAGE, sentence=sentence)
    for k in (3, 6, 9):
        at.slider(key="shaw_k").set_value(k).run()
        assert ch.index_section(7, k, "en").share in [m.value for m in at.markdown]
    assert "only **7 of the 19** rows" in ch.index_section(4, 9, "en").share


def test_page_position_figure_matches_the_chapter_numbers():
    sentence = "a b c d e f g"
    at = open_page(PAGE, sentence=sentence, seed=4)
    z = fig_array(chart(at, "shaw_terms")["data"][1]["z"])
    v = ch.shaw_view(tuple(sentence.split()), 4, 4)
    np.testing.assert_allclose(z, v.position[0], atol=1e-6)


def test_page_with_300_tokens():
    at = open_page(PAGE, sentence=" ".join(f"w{i % 37}" for i in range(300)))
    assert not errors(at)
    assert any("draws the first 256" in w.value for w in at.warning)
    fig = chart(at, "shaw_index")
    z = fig_array(fig["data"][0]["z"])
    # 256 × 256 drawn in 2 × 2 blocks (a screen shows 128 a side), each cell the exact block mean of
    # the clipped index, the veil on the blocks mostly clipped; the value label says so.
    k = int(np.asarray(at.slider(key="shaw_k").value))
    full = np.clip(np.arange(256)[None, :] - np.arange(256)[:, None], -k, k)
    np.testing.assert_allclose(z, full.reshape(128, 2, 128, 2).mean(axis=(1, 3)))
    veil = fig_array(fig["data"][1]["z"])
    clipped = np.abs(np.arange(256)[None, :] - np.arange(256)[:, None]) > k
    assert np.array_equal(np.isfinite(veil), clipped.reshape(128, 2, 128, 2).mean(axis=(1, 3)) >= 0.5)
    assert "mean of 2 × 2 cells" in fig["data"][0]["hovertemplate"]
    at.slider(key="shaw_k").set_value(64).run()
    assert not errors(at)


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="고양이가 매트 위에 앉았다 🐱 그리고 👩‍💻 코드를 썼다 🇰🇷")
    assert not errors(at)
    spec = chart(at, "shaw_index")
    assert len(fig_array(spec["data"][0]["z"])) == 10
    assert "고양이가" in spec["layout"]["yaxis"]["ticktext"]
