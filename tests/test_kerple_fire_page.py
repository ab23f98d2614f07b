"""The Kerple and FIRE chapter (explain/chapters/kerple_fire.py): every number it draws against an
independent computation (the papers' formulas in plain Python loops), its facts against closed
forms, its question swept over every threshold, and the page in both languages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from explain.chapters import kerple_fire as ch
from tests.helpers import errors, open_page


@pytest.mark.parametrize("H", ch.HEADS)
def test_kernels_are_the_papers_formulas(H):
    kv = ch.kernel_view(H, 256, 3)
    assert kv.log.shape == kv.power.shape == kv.alibi.shape == (H, 257)
    for h in range(H):
        (a1, a2), (p1, p2) = kv.log_params[h], kv.power_params[h]
        assert a1 >= 0.01 and a2 >= 0.01 and p1 >= 0.01 and 0.01 <= p2 <= 2.0
        for r in (0, 1, 2, 7, 100, 256):
            assert kv.log[h, r] == pytest.approx(-a1 * math.log(1 + a2 * r), abs=1e-12)
            assert kv.power[h, r] == pytest.approx(-p1 * r**p2, rel=1e-12, abs=1e-12)
    # ALiBi's slopes: the geometric sequence 2^(−8h/H) for a power of two.
    if H & (H - 1) == 0:
        np.testing.assert_allclose(kv.slopes, [2 ** (-8 * (h + 1) / H) for h in range(H)])
    # The factor the charts draw is e^bias, in [0, 1], 1 at distance 0.
    assert np.all((kv.log_factor >= 0) & (kv.log_factor <= 1)) and np.all(kv.log_factor[:, 0] == 1)


@pytest.mark.parametrize("seed", range(4))
def test_reach_is_the_closed_form(seed):
    """The first distance whose penalty reaches −1: ⌈(e^(1/r₁) − 1)/r₂⌉ for log, ⌈r₁^(−1/r₂)⌉ for
    power, ⌈1/m⌉ for ALiBi (nan when past the chart)."""
    top = ch.MAX_DISTANCE
    kv = ch.kernel_view(8, top, seed)

    def expect(d: float) -> float:
        d = max(0.0, d)
        first = math.ceil(d - 1e-9)
        return float(first) if first <= top else math.nan

    for h in range(8):
        (a1, a2), (p1, p2), m = kv.log_params[h], kv.power_params[h], kv.slopes[h]
        for got, want in (
            (kv.reach_log[h], expect((math.exp(1 / a1) - 1) / a2)),
            (kv.reach_power[h], expect(p1 ** (-1 / p2))),
            (kv.reach_alibi[h], expect(1 / m)),
        ):
            assert (math.isnan(got) and math.isnan(want)) or got == pytest.approx(want, abs=1), (h, got, want)


def naive_normalised(n: int, c: float, L: float, eps: float) -> np.ndarray:
    out = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1):
            out[i, j] = math.log1p(c * (i - j)) / (math.log1p(c * max(L, i)) + eps)
    return out


@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 96), L=st.integers(ch.MIN_THRESHOLD, ch.MAX_THRESHOLD), seed=st.integers(0, 5))
def test_fire_map_is_the_formula_and_relative_below_the_threshold(n, L, seed):
    fv = ch.fire_view(n, L, seed, 2)
    from encoders.fire import FireConfig

    cfg = FireConfig(threshold=float(L))
    np.testing.assert_allclose(
        fv.normalised, naive_normalised(n, cfg.c_init, float(L), cfg.eps), atol=1e-6, equal_nan=True
    )
    below = fv.normalised[np.tril_indices(n)]
    assert np.nanmin(below) >= 0 and np.nanmax(below) <= 1
    assert fv.below_spread == 0.0  # every row before L divides by the same ψ(L): a Toeplitz map
    if n > L + 2:
        assert fv.past_spread > 0  # past L the query's own position matters
    for i, row in fv.rows.items():
        assert len(row) == i + 1 and np.all(np.diff(row) > 0)  # further back, larger (ψ increases)
    assert np.isnan(fv.bias[:, 0, 1]).all()  # above the diagonal: masked


def test_the_question_is_computed_for_every_threshold():
    for L in range(ch.MIN_THRESHOLD, ch.MAX_THRESHOLD + 1):
        q = ch.interpolation_question(L, 0, "en")
        near, far = q.facts["near_value"], q.facts["far_value"]
        d = ch.QUESTION_DISTANCE
        c = 0.1  # FIRE's initial c
        assert near == pytest.approx(math.log1p(c * d) / (math.log1p(c * L) + 1e-6), rel=1e-5)
        assert far == pytest.approx(math.log1p(c * d) / (math.log1p(c * 4 * L) + 1e-6), rel=1e-5)
        assert q.answer == "smaller" and far < near
    assert ch.interpolation_question(16, 0, "ko").prompt != ch.interpolation_question(16, 0, "en").prompt


def test_mean_reach_is_the_weighted_distance():
    w = np.zeros((1, 3, 3))
    w[0, 0, 0] = 1
    w[0, 1, 0] = 1  # one step back
    w[0, 2, 0] = 0.5
    w[0, 2, 2] = 0.5  # half at two steps back
    assert ch.mean_reach(w) == pytest.approx((0 + 1 + 1) / 3)


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_the_page_in_both_languages(lang):
    at = open_page(ch.CHAPTER.page)
    if lang == "ko":
        at.session_state["lang"] = "ko"
        at.run()
    assert not errors(at)
    keys = {el.key for el in at.get("bidi_component")}
    assert {"kf_log", "kf_power", "kf_normalised", "kf_kerple_map", "kf_fire_map"} <= keys
    assert "kf_rows" not in keys  # the rows answer the question: drawn after Reveal
    radio = next(r for r in at.radio if str(r.key).endswith("__choice"))
    radio.set_value(radio.options[0]).run()
    next(b for b in at.button if str(b.key).endswith("__reveal")).click().run()
    assert not errors(at)
    assert "kf_rows" in {el.key for el in at.get("bidi_component")}
