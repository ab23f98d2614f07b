"""SmolLM2 past its trained context (lab/smollm2_long.py, explain/chapters/smollm2_long.py).

What they pin:
- the shipped text is the one its recipe records (checksum) and holds the windows the run used;
- the shipped result's settings are those the code computes now (schemes, configs, frequencies,
  attention factors, window, text checksum): a change of code without a new run fails here;
- the frequencies written into the model's rotary module are the registry encoders' own, and the
  model's rotary output then equals cos/sin of position × the encoder's θ'_f times its attention factor;
- one shipped value recomputed: the first bin of the first window with plain RoPE and with YaRN, from
  a prefix of BIN + 1 tokens (the model is causal, so the prefix's losses are the window's) with the
  chapter's shared eager-attention model (the run used sdpa on one thread: equal up to float error);
- the section's statements follow their intervals (on made-up curves whose answer is known) and use
  the shipped numbers.
The page itself runs in tests/test_smollm2.py's page test (both languages), which also checks the
chart (by its key, smollm2_long): a line and a band per scheme, the trained context marked.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch

from explain.chapters import smollm2_long as long_ch
from lab import smollm2_long as run
from models import smollm2 as smol

pytestmark = pytest.mark.xdist_group("smollm2")  # one model load per worker, shared with test_smollm2.py

ATOL_BIN = 2e-3  # nats: a bin's mean loss, sdpa on one thread vs eager on the test's threads (measured ~2e-5)


@pytest.fixture(scope="module")
def shipped() -> dict:
    """The shipped result (python -m lab.regenerate smollm2_long writes it)."""
    assert run.RESULT_FILE.exists(), f"{run.RESULT_FILE} is shipped"
    loaded: dict = json.loads(run.RESULT_FILE.read_text(encoding="utf-8"))
    return loaded


@pytest.fixture(scope="module")
def loaded():
    return smol.load()


@pytest.fixture(scope="module")
def ids(loaded) -> list[int]:
    """The shipped text's tokens (the model's own tokenizer)."""
    return run.token_ids(loaded.tokenizer)


def test_the_text_is_the_recorded_one_and_holds_the_windows(ids, shipped):
    text = run.text()  # raises when the checksum differs
    assert len(text.encode("utf-8")) == run.recipe()["bytes"]
    assert len(ids) == shipped["text_tokens"]
    spans = run.windows(len(ids))
    assert [list(s) for s in spans] == shipped["window_spans"]
    assert all(b - a == run.WINDOW for a, b in spans) and all(
        spans[k][1] == spans[k + 1][0] for k in range(len(spans) - 1)
    )
    # The prose says the windows are half as long again as the context.
    assert run.WINDOW / run.TRAINED == 1.5


def test_shipped_settings_are_what_the_code_computes(loaded, shipped):
    assert shipped["settings"] == json.loads(json.dumps(run.settings(loaded.config)))
    s = shipped["settings"]
    assert s["trained"] == s["context_in_config"] == 8192 and s["base"] == 100_000.0
    # Every scheme is configured by its registry class for (8192, window): s = 1.5, L = 8192.
    for name in run.SCHEMES:
        cfg = s["schemes"][name]["config"]
        assert cfg["base"] == 100_000.0
        if "scale" in cfg:
            assert cfg["scale"] == s["window"] / s["trained"] and cfg["original_length"] == s["trained"]


def test_the_model_rotates_by_the_encoders_own_frequencies(loaded):
    m = loaded.model
    base, d = run.model_base(loaded.config), loaded.config.head_dim
    plain, factor = run.scheme_rotary("rope", base, d)
    assert factor == 1.0
    np.testing.assert_allclose(m.model.rotary_emb.inv_freq.double().numpy(), plain.numpy(), rtol=1e-6)
    pos = torch.tensor([[0, 1, 8191, 8192, 12_287]])
    x = torch.zeros(1, 1, d)
    factors = {}
    for name in run.SCHEMES:
        freq, factor = run.scheme_rotary(name, base, d)
        factors[name] = factor
        with run.rotary(m, freq, factor):
            cos, sin = m.model.rotary_emb(x, pos)  # (1, 5, d): half-split, each pair's angle twice
        angle = pos[0, :, None].double() * freq[None, :]  # (5, P)
        want_cos = torch.cat([angle.cos(), angle.cos()], dim=-1) * factor
        want_sin = torch.cat([angle.sin(), angle.sin()], dim=-1) * factor
        # float32 angles up to 12,287 rad: ~1e-3 rad of rounding at the far end
        assert torch.allclose(cos[0].double(), want_cos, atol=2e-3), name
        assert torch.allclose(sin[0].double(), want_sin, atol=2e-3), name
    # Restored afterwards: the chapter's shared model keeps its own frequencies.
    np.testing.assert_allclose(m.model.rotary_emb.inv_freq.double().numpy(), plain.numpy(), rtol=1e-6)
    assert m.model.rotary_emb.attention_scaling == 1.0
    # Only YaRN scales q and k, by 0.1 ln s + 1.
    assert factors["rope-yarn"] == pytest.approx(0.1 * math.log(1.5) + 1)
    assert [n for n, f in factors.items() if f != 1.0] == ["rope-yarn"]


@pytest.mark.parametrize("name", ["rope", "rope-yarn"])
def test_a_shipped_bin_is_recomputed(loaded, ids, shipped, name):
    s = shipped["settings"]
    start = shipped["window_spans"][0][0]
    prefix = torch.tensor(ids[start : start + s["bin"] + 1])
    scheme = s["schemes"][name]
    with run.rotary(loaded.model, torch.tensor(scheme["inv_freq"], dtype=torch.float64), scheme["attention_factor"]):
        losses = run.token_losses(loaded.model, prefix)  # (bin,)
    assert run.bin_means(losses) == pytest.approx([shipped["runs"][f"0/{name}"]["bins"][0]], abs=ATOL_BIN)


def test_the_shipped_curves_are_complete_and_stated_from_the_file(shipped):
    lc = long_ch.load(str(run.RESULT_FILE))
    assert lc is not None and lc.windows == shipped["complete_windows"] >= 2
    assert lc.per_window["rope"].shape == (lc.windows, math.ceil((lc.window - 1) / lc.bin))
    f = long_ch.facts(lc)
    # Recomputed apart from the module: plain RoPE past the context minus its last 2048 positions inside.
    bins = np.array([shipped["runs"][f"{w}/rope"]["bins"] for w in range(lc.windows)])
    counts = np.array([min(lc.bin, lc.window - 1 - s) for s in range(0, lc.window - 1, lc.bin)], dtype=float)
    k0, kr = lc.trained // lc.bin, (lc.trained - long_ch.REF_SPAN) // lc.bin
    past = (bins[:, k0:] * counts[k0:]).sum(1) / counts[k0:].sum()
    before = bins[:, kr:k0].mean(1)
    assert f.rise.mean == pytest.approx(float((past - before).mean()))
    for lang in ("en", "ko"):
        words = " ".join(long_ch.sentences(lc, lang))
        assert f"{f.rise.mean:+.2f}" in words and f"{f.past[f.best].mean:.2f}" in words
        assert f"{lc.trained:,}" in long_ch.setup(lc, lang)


def _made_up(past_plain: float, spread: float, windows: int = 5) -> long_ch.LongContext:
    """Curves with a known answer: flat at 2.0 inside, plain RoPE at `past_plain` past 8192, PI 0.1
    above NTK everywhere, YaRN equal to NTK; `spread` is the window-to-window noise."""
    rng = np.random.default_rng(0)
    starts = np.arange(0, 12_287, 512)
    counts = np.minimum(512, 12_287 - starts)
    past = starts >= 8192
    noise = rng.normal(0, spread, (windows, starts.size))
    flat = 2.0 + noise
    curves = {
        "rope": np.where(past, past_plain, 2.0) + noise,
        "rope-pi": flat + 0.1,
        "rope-ntk": flat,
        "rope-yarn": flat + rng.normal(0, spread, (windows, starts.size)),
    }
    return long_ch.LongContext(
        schemes=run.SCHEMES,
        reference="rope",
        per_window=curves,
        counts=counts,
        starts=starts,
        windows=windows,
        window=12_288,
        trained=8192,
        bin=512,
        scale=1.5,
        factors={n: 1.0 for n in run.SCHEMES},
        cpu_seconds=1.0,
        wall_seconds=1.0,
        max_rss_mb=1.0,
        forwards=20,
        text_sha256="0" * 64,
    )


def test_verdicts_follow_their_intervals():
    rising = long_ch.facts(_made_up(past_plain=5.0, spread=0.01))
    assert rising.rise.above_zero and rising.rise_from == 8192
    assert rising.best in ("rope-ntk", "rope-yarn")
    assert rising.versus_best["rope"].above_zero and rising.versus_best["rope-pi"].above_zero
    other = "rope-yarn" if rising.best == "rope-ntk" else "rope-ntk"
    assert not rising.versus_best[other].above_zero  # the same curve up to noise: no verdict
    assert rising.inside_cost["rope-pi"].above_zero
    words = " ".join(long_ch.sentences(_made_up(past_plain=5.0, spread=0.01), "en"))
    assert "rises" in words and "cannot be told apart" in words and "clearly below" in words
    flat = long_ch.facts(_made_up(past_plain=2.0, spread=0.5))
    assert not flat.rise.above_zero and flat.rise_from is None
    assert "cannot tell a rise" in " ".join(long_ch.sentences(_made_up(past_plain=2.0, spread=0.5), "en"))
