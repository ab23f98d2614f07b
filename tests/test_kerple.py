"""KERPLE: encoders/kerple.py against the paper's two kernels written as plain Python loops, its
properties over sizes (Hypothesis), its parameter constraints, causality and a training step."""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from encoders import REGISTRY, build
from encoders.attention import toy_layer
from encoders.base import Difference
from encoders.kerple import POWER_MAX, Kerple, KerpleConfig, kerple_log_bias, kerple_power_bias
from tests.helpers import assert_bias_added_to_scaled_logits_and_causal

D, H = 32, 4
VARIANTS = ("log", "power")


def naive_bias(variant: str, r1: list[float], r2: list[float], qpos: list[int], kpos: list[int]) -> list:
    """The paper's §4 kernels, one Python float at a time: −r₁·log(1 + r₂·|i − j|), −r₁·|i − j|^r₂."""
    out = []
    for h in range(len(r1)):
        rows = []
        for i in qpos:
            row = []
            for j in kpos:
                r = abs(i - j)
                row.append(-r1[h] * math.log(1 + r2[h] * r) if variant == "log" else -r1[h] * r ** r2[h])
            rows.append(row)
        out.append(rows)
    return out


def _encoder(variant: str, heads: int = H, seed: int = 0) -> Kerple:
    enc = build("kerple", D if D % heads == 0 else heads * 8, heads, seed, KerpleConfig(variant=variant))
    assert isinstance(enc, Kerple)
    return enc


def test_registered_as_a_bias_method():
    cls = REGISTRY["kerple"]
    assert cls is Kerple and cls.kind == "bias" and cls.shift_invariant
    assert cls.relative_sign == Difference("query", "key")
    assert cls.term_names == ("content", "position") and cls.position_terms() == ("position",)
    assert cls.paper is not None and cls.paper.year == 2022 and "2205.09921" in cls.paper.url


@pytest.mark.parametrize("variant", VARIANTS)
def test_bias_equals_the_naive_loop(variant):
    """Every head, positions past the diagonal and shifted ones: the float64 bias is the loop's."""
    worst = 0.0
    for seed in range(5):
        enc = _encoder(variant, seed=seed)
        r1, r2 = (p.tolist() for p in enc.parameters_in_range())
        for qpos, kpos in (([*range(12)], [*range(12)]), ([*range(100, 107)], [*range(95, 110)])):
            with torch.no_grad():
                got = enc.bias(torch.tensor(qpos), torch.tensor(kpos))
            want = torch.tensor(naive_bias(variant, r1, r2, qpos, kpos), dtype=torch.float64)
            worst = max(worst, float((got - want).abs().max()))
    assert worst < 1e-12, worst


def test_pinned_numbers():
    """Two heads set by hand: log(1 + 0.5·3) = log 2.5 and 3^1.5."""
    r1, r2 = torch.tensor([2.0, 1.0], dtype=torch.float64), torch.tensor([0.5, 1.5], dtype=torch.float64)
    dist = torch.tensor([[0.0, 3.0]], dtype=torch.float64)
    log = kerple_log_bias(r1, r2, dist)
    power = kerple_power_bias(r1, r2, dist)
    assert [math.copysign(1, v) for v in (*log[:, 0, 0].tolist(), *power[:, 0, 0].tolist())] == [1.0] * 4  # +0.0
    assert log[0, 0, 1].item() == pytest.approx(-2 * math.log(2.5), abs=1e-15)
    assert power[1, 0, 1].item() == pytest.approx(-(3**1.5), abs=1e-12)
    # r₂ = 1 in the power kernel is ALiBi's linear penalty −r₁·|i − j|
    line = kerple_power_bias(torch.tensor([0.25], dtype=torch.float64), torch.ones(1, dtype=torch.float64), dist)
    assert line[0, 0, 1].item() == -0.75


@settings(max_examples=60, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    heads=st.sampled_from((1, 2, 4, 8)),
    n=st.integers(1, 24),
    start=st.integers(0, 5000),
    seed=st.integers(0, 2**16),
)
def test_bias_depends_only_on_the_distance(variant, heads, n, start, seed):
    """Toeplitz and symmetric: b(i, j) is a function of |i − j| only; 0 on the diagonal, ≤ 0 and
    non-increasing in the distance; the same wherever the sentence starts."""
    enc = _encoder(variant, heads, seed)
    pos = torch.arange(n)
    with torch.no_grad():
        b = enc.bias(pos, pos)  # (h, i, j)
        shifted = enc.bias(pos + start, pos + start)
    assert b.shape == (heads, n, n)
    assert torch.allclose(b, shifted, atol=1e-12, rtol=0)
    assert torch.allclose(b, b.transpose(1, 2), atol=1e-12, rtol=0)
    assert torch.allclose(b[:, 1:, 1:], b[:, :-1, :-1], atol=1e-12, rtol=0)
    assert torch.all(torch.diagonal(b, dim1=1, dim2=2) == 0) and torch.all(b <= 0)
    first_column = b[:, :, 0]  # (h, i): distances 0 … n−1
    assert torch.all(first_column[:, 1:] <= first_column[:, :-1])


@settings(max_examples=40, deadline=None)
@given(
    variant=st.sampled_from(VARIANTS),
    raw1=st.floats(-5, 5),
    raw2=st.floats(-5, 5),
)
def test_parameters_are_kept_in_range(variant, raw1, raw2):
    """r₁, r₂ ≥ eps whatever the raw parameters hold, r₂ ≤ 2 for the power kernel, and the gradient
    still reaches a raw value outside the range (the reference's in-place projection lets it back)."""
    enc = _encoder(variant, heads=1)
    with torch.no_grad():
        enc.r1.fill_(raw1)
        enc.r2.fill_(raw2)
    r1, r2 = (r.detach() for r in enc.parameters_in_range())
    eps = enc.config.eps
    assert float(r1) >= eps and float(r2) >= eps
    assert float(r1) == pytest.approx(max(raw1, eps)) and float(r2) == pytest.approx(
        min(max(raw2, eps), POWER_MAX) if variant == "power" else max(raw2, eps)
    )
    b = enc.bias(torch.arange(6), torch.arange(6))
    assert torch.isfinite(b).all() and torch.all(b <= 0)
    b.sum().backward()
    assert enc.r1.grad is not None and enc.r2.grad is not None
    assert float(enc.r1.grad) != 0 and torch.isfinite(enc.r2.grad).all()


@pytest.mark.parametrize("variant", VARIANTS)
def test_initial_parameters_follow_the_reference_draws(variant):
    """r ~ U(0, scale), clamped to ≥ eps: log r₁ ≤ 2, r₂ ≤ 1; power r₁ ≤ 1, r₂ ≤ 2; seeded."""
    encs = [_encoder(variant, heads=64, seed=s) for s in range(3)]
    hi1, hi2 = (2.0, 1.0) if variant == "log" else (1.0, 2.0)
    for e in encs:
        assert float(e.r1.detach().min()) >= e.config.eps and float(e.r1.detach().max()) <= hi1
        assert float(e.r2.detach().min()) >= e.config.eps and float(e.r2.detach().max()) <= hi2
    assert torch.equal(encs[0].r1, _encoder(variant, heads=64, seed=0).r1)
    assert not torch.equal(encs[0].r1, encs[1].r1)


def test_bad_configs_are_refused():
    with pytest.raises(ValueError):
        Kerple(D, H, KerpleConfig(variant="cubic"))  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        Kerple(D, H, KerpleConfig(eps=0.0))


@pytest.mark.parametrize("variant", VARIANTS)
def test_the_layer_adds_the_bias_to_the_scaled_logits_and_is_causal(variant):
    enc = _encoder(variant)
    assert_bias_added_to_scaled_logits_and_causal(enc, D)


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_training_step_moves_r1_and_r2(variant):
    enc = _encoder(variant)
    layer = toy_layer(enc, 0)
    x = torch.randn(2, 8, D, generator=torch.Generator().manual_seed(2))
    before = enc.r1.detach().clone(), enc.r2.detach().clone()
    opt = torch.optim.SGD(enc.parameters(), lr=0.1)
    layer(x, causal=True).output.pow(2).mean().backward()
    opt.step()
    assert not torch.equal(before[0], enc.r1.detach()) and not torch.equal(before[1], enc.r2.detach())


# -- the labs can train it --------------------------------------------------------------------------

TEXT = bytes(range(32, 127)) * 8  # a small stand-in corpus: the labs' loops, not their data, are tested


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_tiny_toy_task_run_trains(variant):
    """lab/train.py over lab/tasks.py (the toy lab's path), a few steps: finite losses, r moved."""
    from lab.train import TrainConfig, train

    options = () if variant == "log" else (("variant", "power"),)
    cfg = TrainConfig("flipflop", "kerple", steps=3, batch_size=4, warmup=1, curve_every=1, n_val=4, n_test=4)
    cfg = TrainConfig(**{**cfg.__dict__, "encoder_options": options})
    result = train(cfg, test=False)
    assert [p["step"] for p in result.metrics["curve"]] == [1, 2, 3]
    assert all(math.isfinite(p["loss"]) for p in result.metrics["curve"])
    encoder = result.model.blocks[0].attn.encoder
    assert isinstance(encoder, Kerple) and encoder.config.variant == variant
    assert not torch.equal(encoder.r1.detach(), _encoder(variant, seed=0).r1.detach())


def test_a_tiny_byte_model_trains():
    """lab/lm.py's trainer (the real-text models), two steps on a stand-in corpus."""
    from lab import corpus as C
    from lab.lm import LMConfig, train_lm

    cfg = LMConfig("kerple", steps=2, batch_size=2, length=16, warmup=1, d_model=32, curve_every=1, val_windows=2)
    model, metrics = train_lm(cfg, C.Corpus(TEXT, TEXT, {}))
    assert len(metrics["curve"]) == 2 and all(math.isfinite(p["train_bpb"]) for p in metrics["curve"])
    assert isinstance(model.blocks[0].attn.encoder, Kerple)
