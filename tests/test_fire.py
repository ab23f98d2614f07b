"""FIRE: encoders/fire.py against the paper's b(i, j) = f_θ(ψ(i − j)/ψ(max(L, i))) written as a plain
Python loop, progressive interpolation over sizes (Hypothesis), its learned c and L, causality and a
training step."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from encoders import REGISTRY, build
from encoders.attention import causal_mask, toy_layer
from encoders.base import Difference
from encoders.fire import Fire, FireConfig, psi
from tests.helpers import assert_bias_added_to_scaled_logits_and_causal

D, H = 32, 4


def _encoder(heads: int = H, seed: int = 0, config: FireConfig | None = None) -> Fire:
    enc = build("fire", heads * 8, heads, seed, config)
    assert isinstance(enc, Fire)
    return enc


def naive_bias(enc: Fire, qpos: list[int], kpos: list[int]) -> list:
    """§3.2 one float at a time: x = log(|c·(i − j)| + 1) / (log(|c·max(L, i)| + 1) + eps), then
    f_h(x) = Σ_u W₂[h, u]·max(0, W₁[u]·x + β₁[u]) + β₂[h]."""
    c = float(enc.c.detach())
    L = abs(float(enc.threshold_scale.detach()) * enc.config.threshold)
    w1, b1, w2, b2 = (p.tolist() for p in (enc.w1, enc.b1, enc.w2, enc.b2))
    out = []
    for h in range(enc.n_heads):
        rows = []
        for i in qpos:
            row = []
            for j in kpos:
                x = math.log(abs(c * (i - j)) + 1) / (math.log(abs(c * max(L, i)) + 1) + enc.config.eps)
                row.append(sum(w2[h][u] * max(0.0, w1[u] * x + b1[u]) for u in range(len(w1))) + b2[h])
            rows.append(row)
        out.append(rows)
    return out


def test_registered_as_a_bias_method():
    cls = REGISTRY["fire"]
    assert cls is Fire and cls.kind == "bias" and not cls.shift_invariant
    assert cls.relative_sign == Difference("query", "key")
    assert cls.term_names == ("content", "position")
    assert cls.paper is not None and "2310.04418" in cls.paper.url
    c = FireConfig()
    assert (c.width, c.c_init, c.threshold, c.eps) == (32, 0.1, 512.0, 1e-6)


@pytest.mark.parametrize(
    "config", [None, FireConfig(threshold=4.0), FireConfig(threshold=0.0, c_init=2.0, width=5)], ids=str
)
def test_bias_equals_the_naive_loop(config):
    worst = 0.0
    for seed in range(3):
        enc = _encoder(seed=seed, config=config)
        for qpos, kpos in (([*range(10)], [*range(10)]), ([*range(600, 605)], [*range(590, 606)])):
            with torch.no_grad():
                got = enc.bias(torch.tensor(qpos), torch.tensor(kpos))
            want = torch.tensor(naive_bias(enc, qpos, kpos), dtype=torch.float64)
            worst = max(worst, float((got - want).abs().max()))
    assert worst < 1e-12, worst


def test_psi_is_the_papers_log():
    c = torch.tensor(0.1, dtype=torch.float64)
    x = torch.tensor([0.0, 1.0, 10.0, 1000.0], dtype=torch.float64)
    assert psi(x, c).tolist() == pytest.approx([0.0, math.log(1.1), math.log(2.0), math.log(101.0)], abs=1e-15)
    steps = psi(torch.arange(0.0, 50.0, dtype=torch.float64), c).diff()
    assert torch.all(steps > 0) and torch.all(steps.diff() < 0)  # increasing, ever more slowly


@settings(max_examples=60, deadline=None)
@given(
    heads=st.sampled_from((1, 2, 4)),
    n=st.integers(2, 20),
    threshold=st.integers(0, 40),
    seed=st.integers(0, 2**16),
)
def test_progressive_interpolation(heads, n, threshold, seed):
    """The MLP reads ψ(i − j)/ψ(max(L, i)): in [0, 1] on the causal side, 0 on the diagonal, 1 for the
    first key of a query past L; rows with i < L form a Toeplitz matrix (only i − j matters), and
    past L the same distance reads smaller the later the query (the grid gets finer)."""
    enc = _encoder(heads, seed, FireConfig(threshold=float(threshold)))
    pos = torch.arange(n)
    with torch.no_grad():
        x = enc.normalised(pos, pos)  # (i, j)
        b = enc.bias(pos, pos)  # (h, i, j)
    causal = causal_mask(n, n)
    assert torch.all(x[causal] >= 0) and torch.all(x[causal] <= 1 + 1e-12)
    assert torch.all(torch.diagonal(x) == 0)
    for i in range(max(threshold, 1), n):  # past L, key 0 is as far as the query reaches
        assert x[i, 0].item() == pytest.approx(1.0, rel=1e-4)  # ψ(i)/(ψ(i) + 1e-6)
    below = min(threshold, n)  # queries 0 … L−1 share the normaliser ψ(L)
    if below >= 2:
        sub = b[:, :below, :below]
        assert torch.allclose(sub[:, 1:, 1:], sub[:, :-1, :-1], atol=1e-12, rtol=0)
    for i in range(max(threshold, 1), n - 1):  # same distance 1, later query → smaller input
        assert x[i + 1, i].item() < x[i, i - 1].item()


@settings(max_examples=40, deadline=None)
@given(scale=st.integers(2, 6), i=st.integers(2, 30), seed=st.integers(0, 2**16))
def test_scaling_query_and_key_together_nearly_keeps_the_input(scale, i, seed):
    """Past the threshold (L = 0): key j of query i and key s·j of query s·i sit at the same fraction
    of the way back. ψ(x) = log(c·x + 1) tends to log c + log x as c grows, so their inputs
    ψ(s·(i − j))/ψ(s·i) and ψ(i − j)/ψ(i) agree more closely the larger c: ψ is not a power law, and
    FIRE's input is exactly scale-free only in that limit."""
    j = i // 2
    q, k = torch.tensor([i, scale * i]), torch.tensor([j, scale * j])
    gaps = []
    for c in (1e2, 1e8):
        with torch.no_grad():
            x = _encoder(1, seed, FireConfig(threshold=0.0, c_init=c)).normalised(q, k)
        gaps.append(abs(x[0, 0].item() - x[1, 1].item()))
    assert gaps[1] < gaps[0] and gaps[1] < 0.05, gaps


def test_only_a_long_query_leaves_the_toeplitz_form():
    """L = 512 (the default): every sentence the chapters draw is Toeplitz, a shifted copy past L is not."""
    enc = _encoder()
    pos = torch.arange(12)
    with torch.no_grad():
        near, far = enc.bias(pos, pos), enc.bias(pos + 1000, pos + 1000)
    assert torch.allclose(near[:, 1:, 1:], near[:, :-1, :-1], atol=1e-12)
    assert not torch.allclose(near, far, atol=1e-4)


def test_c_and_threshold_are_learned_and_kept_positive():
    enc = _encoder(config=FireConfig(threshold=4.0))
    with torch.no_grad():
        enc.threshold_scale.fill_(-2.0)
        enc.c.fill_(-0.1)
    assert float(enc.threshold().detach()) == 8.0  # L = |λ·L₀|
    x = enc.normalised(torch.arange(6), torch.arange(6))
    assert torch.all(x[causal_mask(6, 6)] >= 0)
    enc.bias(torch.arange(12), torch.arange(12)).sum().backward()
    for p in (enc.c, enc.threshold_scale, enc.w1, enc.b1, enc.w2, enc.b2):
        assert p.grad is not None and torch.isfinite(p.grad).all()
    assert float(enc.c.grad) != 0 and float(enc.threshold_scale.grad) != 0


def test_bad_configs_are_refused():
    for bad in (FireConfig(width=0), FireConfig(c_init=0.0), FireConfig(threshold=-1.0), FireConfig(eps=0.0)):
        with pytest.raises(ValueError):
            Fire(D, H, bad)


def test_length_configs_put_the_threshold_at_a_quarter_of_the_training_length():
    assert Fire.config_for_lengths(64, 256).threshold == 16.0
    assert Fire.training_config(2048).threshold == 512.0  # the paper's L₀ for its 2048-token models


def test_the_layer_adds_the_bias_to_the_scaled_logits_and_is_causal():
    enc = _encoder()
    assert_bias_added_to_scaled_logits_and_causal(enc, D)


def test_one_training_step_moves_the_mlp_and_c():
    enc = _encoder(config=FireConfig(threshold=2.0))
    layer = toy_layer(enc, 0)
    x = torch.randn(2, 8, D, generator=torch.Generator().manual_seed(2))
    before = {n: p.detach().clone() for n, p in enc.named_parameters()}
    opt = torch.optim.SGD(enc.parameters(), lr=0.1)
    layer(x, causal=True).output.pow(2).mean().backward()
    opt.step()
    moved = {n for n, p in enc.named_parameters() if not torch.equal(before[n], p.detach())}
    assert {"w1", "w2", "c"} <= moved
    # β₂ adds the same number to every logit of a head's row, which softmax ignores: no gradient.
    assert enc.b2.grad is not None and float(enc.b2.grad.abs().max()) < 1e-7


# -- the labs can train it --------------------------------------------------------------------------

TEXT = bytes(range(32, 127)) * 8  # a small stand-in corpus: the labs' loops, not their data, are tested


def test_a_tiny_toy_task_run_trains():
    """lab/train.py over lab/tasks.py (the toy lab's path), a few steps, with FIRE's training
    config: the threshold at a quarter of the longest string."""
    from lab.train import TrainConfig, model_config, train

    cfg = TrainConfig("flipflop", "fire", steps=3, batch_size=4, warmup=1, curve_every=1, n_val=4, n_test=4)
    result = train(cfg, test=False)
    assert [p["step"] for p in result.metrics["curve"]] == [1, 2, 3]
    assert all(math.isfinite(p["loss"]) for p in result.metrics["curve"])
    encoder = result.model.blocks[0].attn.encoder
    assert isinstance(encoder, Fire) and encoder.config.threshold == model_config(cfg).max_len / 4


def test_a_tiny_byte_model_trains():
    """lab/lm.py's trainer (the real-text models), two steps on a stand-in corpus."""
    from lab import corpus as C
    from lab.lm import LMConfig, train_lm

    cfg = LMConfig("fire", steps=2, batch_size=2, length=16, warmup=1, d_model=32, curve_every=1, val_windows=2)
    model, metrics = train_lm(cfg, C.Corpus(TEXT, TEXT, {}))
    assert len(metrics["curve"]) == 2 and all(math.isfinite(p["train_bpb"]) for p in metrics["curve"])
    assert isinstance(model.blocks[0].attn.encoder, Fire)
