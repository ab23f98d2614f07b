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
from tests.helpers import errors, fig_array, figure, open_page

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
    assert v.shift_position_change == 0.0 and v.shift_output_change == 0.0
    # the two copies of "the" at positions 0 and 4 get identical rows without the position term …
    np.testing.assert_allclose(v.weights_content_only[:, 0], v.weights_content_only[:, 4], atol=1e-6)
    # … and different rows with it
    assert np.abs(v.weights[:, 0] - v.weights[:, 4]).max() > 1e-3
    assert ch.distance_labels(2) == ["≤ −2", "−1", "0", "+1", "≥ +2"]


# -- the page ---------------------------------------------------------------------------------


def test_page_default_and_k_slider_extremes():
    at = open_page(PAGE, sentence="the cat sat on the mat and the dog sat on the log")
    assert not errors(at)
    n = 13
    for k in (1, 64):
        at.slider(key="shaw_k").set_value(k).run()
        assert not errors(at)
        z = fig_array(figure(at, "clip(j − i, k)")["data"][0]["z"])
        expected = np.clip(np.arange(n)[None, :] - np.arange(n)[:, None], -k, k)
        assert np.array_equal(z, expected)
        veil = fig_array(figure(at, "clip(j − i, k)")["data"][1]["z"])
        assert np.array_equal(
            np.isfinite(veil), np.abs(expected) < np.abs(np.arange(n)[None, :] - np.arange(n)[:, None])
        )
        assert fig_array(figure(at, "wᴷ")["data"][0]["z"]).shape == (2 * k + 1, 16)
        assert fig_array(figure(at, "Attention mass per clipped distance")["data"][0]["z"]).shape == (n, 2 * k + 1)
    at.selectbox(key="shaw_head").set_value(3).run()
    assert not errors(at)
    assert figure(at, "The two terms of the logit, head 3")


def test_page_position_figure_matches_the_chapter_numbers():
    sentence = "a b c d e f g"
    at = open_page(PAGE, sentence=sentence, seed=4)
    z = fig_array(figure(at, "The two terms of the logit, head 0")["data"][1]["z"])
    v = ch.shaw_view(tuple(sentence.split()), 4, 4)
    np.testing.assert_allclose(z, v.position[0], atol=1e-6)


def test_page_with_300_tokens():
    at = open_page(PAGE, sentence=" ".join(f"w{i % 37}" for i in range(300)))
    assert not errors(at)
    assert any("draws the first 256" in w.value for w in at.warning)
    z = fig_array(figure(at, "clip(j − i, k)")["data"][0]["z"])
    assert z.shape == (256, 256)
    at.slider(key="shaw_k").set_value(64).run()
    assert not errors(at)


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="고양이가 매트 위에 앉았다 🐱 그리고 👩‍💻 코드를 썼다 🇰🇷")
    assert not errors(at)
    spec = figure(at, "clip(j − i, k)")
    assert len(fig_array(spec["data"][0]["z"])) == 10
    assert "고양이가" in spec["layout"]["yaxis"]["ticktext"]
