"""Properties of every registered encoder, over generated sizes (Hypothesis), in float64.

Driven by the registry and the encoders' class attributes, never by a list of method names:
    shift_invariant      logits unchanged when every position moves by the same offset (and, for
                         the methods that say False, changed by a long enough shift)
    pair_decay() None    RoPE-family rotations keep the norm of q (up to the attention factor)
    T5 buckets           bounded, monotone in |distance|, exact near 0, saturated at max_distance
    CoPE                 with every gate open the counted positions are the relative ones, i − j + 1
    all                  the named terms sum to the logits, are finite, and are the same for a seed

Each property was checked to fail once by a local perturbation of the code (or of a class attribute),
noted beside it; the file runs in about 15 s of CPU.
"""

from __future__ import annotations

import math

import pytest
import torch
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from encoders import REGISTRY, build
from encoders.attention import toy_layer
from encoders.cope import CoPE, CoPEConfig
from encoders.rope import RoPE
from encoders.t5 import relative_position_bucket

NAMES = tuple(REGISTRY)
ROPE_FAMILY = tuple(name for name, cls in REGISTRY.items() if issubclass(cls, RoPE))
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])

heads = st.sampled_from((1, 2, 3))
head_dims = st.sampled_from((4, 6, 8))  # even (rotary pairs) and ≥ 4 (NTK-aware scaling needs two pairs)
lengths = st.integers(1, 10)
seeds = st.integers(0, 2**31 - 1)


def _run(name: str, n_heads: int, d_head: int, seed: int, positions: torch.Tensor, causal: bool):
    """One float64 attention layer on seeded inputs at `positions`; configured to cover them."""
    cls = REGISTRY[name]
    n = positions.numel()
    top = int(positions.max()) + 1
    encoder = build(name, n_heads * d_head, n_heads, seed, cls.config_covering(top))
    layer = toy_layer(encoder, seed).double()
    x = torch.randn(1, n, n_heads * d_head, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    with torch.no_grad():
        return layer(x, positions=positions, causal=causal)


def _terms_close(a: dict[str, torch.Tensor], b: dict[str, torch.Tensor]) -> bool:
    return a.keys() == b.keys() and all(torch.allclose(a[t], b[t], rtol=1e-9, atol=1e-9) for t in a)


# -- shift invariance ---------------------------------------------------------------------------------
# Failed as it should when ShawRelative.shift_invariant was set to False (a shift changed nothing) and
# when Sinusoidal.shift_invariant was set to True (its terms moved with the shift).


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(n_heads=heads, d_head=head_dims, n=lengths, offset=st.integers(1, 300), causal=st.booleans(), seed=seeds)
def test_shift_invariance_is_what_the_class_says(name, n_heads, d_head, n, offset, causal, seed):
    base = torch.arange(n)
    before = _run(name, n_heads, d_head, seed, base, causal)
    if REGISTRY[name].shift_invariant:
        after = _run(name, n_heads, d_head, seed, base + offset, causal)
        assert _terms_close(before.terms, after.terms)
        assert torch.allclose(before.weights, after.weights, rtol=1e-9, atol=1e-12)
    else:
        # A method whose positions are absolute, or whose frequencies follow the total length, must
        # notice a shift far past any trained length (dynamic NTK's L is 32 by default, FIRE's
        # threshold L 512: below it FIRE's bias depends on i − j alone) — given two tokens at least:
        # a lone token's rotated score is its unrotated one at any frequency.
        assume(n >= 2)
        after = _run(name, n_heads, d_head, seed, base + offset + 1024, causal)
        assert not _terms_close(before.terms, after.terms)


# -- RoPE family: a rotation keeps the norm --------------------------------------------------------------
# Failed as it should when XPos.pair_decay returned None (its ζ^(±pos/γ) factors change the norm), and
# when apply_rotary's second channel used `a * sin - b * cos`.


@pytest.mark.parametrize("name", ROPE_FAMILY)
@SETTINGS
@given(
    d_head=head_dims,
    positions=st.lists(st.integers(-500, 5000), min_size=2, max_size=8, unique=True),
    trained=st.integers(1, 256),
    run=st.integers(1, 4096),
    seed=seeds,
)
def test_rotation_keeps_the_norm_unless_the_method_decays(name, d_head, positions, trained, run, seed):
    cls = REGISTRY[name]
    encoder = build(name, d_head, 1, seed, cls.config_for_lengths(trained, run))
    assert isinstance(encoder, RoPE)
    x = torch.randn(1, 1, len(positions), d_head, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    pos = torch.tensor(positions)
    seq_len = max(positions) + 1
    centre = (min(positions) + max(positions)) / 2
    rotated = encoder.rotate(x, pos, "query", seq_len, centre)  # (1, 1, n, d)
    ratio = rotated.norm(dim=-1) / x.norm(dim=-1) / encoder.attention_factor(seq_len)  # (1, 1, n)
    if encoder.pair_decay() is None:
        assert torch.allclose(ratio, torch.ones_like(ratio), rtol=1e-12, atol=0)
    else:
        # every position differs from the centre (two or more distinct positions), so each row's
        # norm is scaled by its pairs' ζ^((pos − c)/γ) ≠ 1
        assert not torch.allclose(ratio, torch.ones_like(ratio), rtol=1e-12, atol=0)


# -- T5 buckets ---------------------------------------------------------------------------------------------
# Failed as it should when relative_position_bucket's log branch dropped its clamp to N' − 1 (bounds) and
# when the causal side used a = r.clamp(min=0) instead of (−r).clamp(min=0) (exact region).


@st.composite
def bucket_settings(draw):
    bidirectional = draw(st.booleans())
    num_buckets = draw(st.integers(4 if bidirectional else 2, 64))
    per_side = num_buckets // 2 if bidirectional else num_buckets
    exact = per_side // 2
    max_distance = draw(st.integers(exact + 1, 600))
    return bidirectional, num_buckets, per_side, exact, max_distance


@SETTINGS
@given(config=bucket_settings(), distances=st.lists(st.integers(-2000, 2000), min_size=1, max_size=60))
def test_t5_buckets_are_bounded_monotone_and_exact_near_zero(config, distances):
    bidirectional, num_buckets, per_side, exact, max_distance = config
    r = torch.tensor(sorted(set(distances)))
    bucket = relative_position_bucket(r, bidirectional, num_buckets, max_distance)
    assert ((bucket >= 0) & (bucket < num_buckets)).all()
    # T5's paper definition, written out: a = |r| per side (bidirectional), a = max(−r, 0) (causal)
    a = r.abs() if bidirectional else (-r).clamp(min=0)
    side = (r > 0).long() * per_side if bidirectional else torch.zeros_like(r)
    within = bucket - side  # the bucket inside its side, 0 … N' − 1
    assert ((within >= 0) & (within < per_side)).all()
    near, far = a < exact, a >= max_distance
    assert torch.equal(within[near], a[near])
    assert (within[far] == per_side - 1).all()
    for s in side.unique():
        on_side = side == s
        order = torch.argsort(a[on_side], stable=True)
        assert (torch.diff(within[on_side][order]) >= 0).all()  # farther never gets a smaller bucket


# -- CoPE: all gates open ------------------------------------------------------------------------------------
# Failed as it should when contextual_positions left out the key's own gate (Σ over t = j+1 … i, one
# short of i − j + 1) and when the bidirectional count ran from the key to the end of the sequence
# instead of back to the query.


@SETTINGS
@given(
    n_heads=heads,
    d_head=head_dims,
    n=lengths,
    npos_max=st.integers(2, 16),
    scale=st.floats(20.0, 100.0),
    causal=st.booleans(),
)
def test_cope_with_every_gate_open_counts_relative_positions(n_heads, d_head, n, npos_max, scale, causal):
    encoder = CoPE(n_heads * d_head, n_heads, CoPEConfig(npos_max=npos_max)).double()
    # q = k = scale·1: every q·k/√d = scale²·√d ≥ 800, so σ(q·k/√d) is exactly 1.0 in float64
    q = torch.full((1, n_heads, n, d_head), scale, dtype=torch.float64)
    pos = torch.arange(n)
    extras = encoder.logit_terms(q, q, pos, pos, causal).extras
    i, j = pos[:, None], pos[None, :]
    counted = (i - j).abs() + 1  # i − j + 1 back from the query (and j − i + 1 ahead, without a mask)
    seen = j <= i if causal else torch.ones(n, n, dtype=torch.bool)
    want = torch.where(seen, counted.clamp(max=npos_max - 1), 0).to(torch.float64)  # (i, j)
    assert torch.equal(extras["gates"], seen.to(torch.float64).expand_as(extras["gates"]))
    assert torch.equal(extras["positions"], want.expand_as(extras["positions"]))


# -- every encoder: terms sum to the logits, finite, deterministic ------------------------------------------
# Failed as it should when AttentionTerms.total skipped the last term, and when build() drew from an
# unseeded generator (two builds at one seed then differ).


@pytest.mark.parametrize("name", NAMES)
@SETTINGS
@given(n_heads=heads, d_head=head_dims, n=lengths, causal=st.booleans(), seed=seeds)
def test_terms_sum_to_the_logits_finite_and_seeded(name, n_heads, d_head, n, causal, seed):
    positions = torch.arange(n)
    r = _run(name, n_heads, d_head, seed, positions, causal)
    again = _run(name, n_heads, d_head, seed, positions, causal)
    total = sum(r.terms.values())
    visible = torch.isfinite(r.logits)  # masked (future) entries are −inf in the logits
    if not causal:
        assert visible.all()
    assert torch.allclose(r.logits[visible], total.expand_as(r.logits)[visible], rtol=1e-12, atol=1e-12)
    assert all(torch.isfinite(t).all() for t in r.terms.values())
    assert torch.isfinite(r.output).all() and torch.isfinite(r.weights).all()
    assert _terms_close(r.terms, again.terms) and torch.equal(r.output, again.output)
    assert math.isclose(float(r.weights.sum()), n_heads * n, rel_tol=1e-12)
