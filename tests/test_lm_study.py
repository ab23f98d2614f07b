"""The real-text models' next set (lab/lm_study.py): windows with a beginning-of-text byte, the capped
and long scores against a direct computation, the n-gram anchor's cut, and a tiny resumable run."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st

from lab import corpus as C
from lab import lm, lm_study, ngram
from lab.model import ModelConfig, TinyTransformer

pytestmark = pytest.mark.xdist_group("lm_study")
torch.set_num_threads(1)  # as the study runs; tiny models gain nothing from a second thread


@given(n=st.integers(0, 700), length=st.integers(1, 130))
@settings(max_examples=60, deadline=None)
def test_bos_windows_predict_every_byte_once(n: int, length: int) -> None:
    data = bytes(np.random.default_rng(n).integers(10, 250, n).astype(np.uint8))
    w = lm.bos_windows(data, length, lm_study.BOS)
    assert w.shape == (n // length, length + 1)
    assert (w[:, 0] == lm_study.BOS).all()
    # Targets (every row's entries after the byte) are the text's bytes, in order, each once.
    assert w[:, 1:].reshape(-1).tolist() == list(data[: (n // length) * length])


def tiny(encoding: str) -> TinyTransformer:
    return TinyTransformer(ModelConfig(encoding, 256, 64, d_model=16, n_heads=2, n_layers=2), seed=3).eval()


def direct_bits(model: TinyTransformer, data: bytes, g: int, start: int) -> float:
    """−log2 p(data[g]) given the BOS byte and data[start:g], one forward of its own."""
    x = torch.tensor([[lm_study.BOS, *data[start:g]]])
    with torch.no_grad():
        logits = model(x)[0, -1]
    return float(F.cross_entropy(logits[None], torch.tensor([data[g]])) / lm.LN2)


@pytest.mark.parametrize(("encoding", "stride"), [("rope", 1), ("rope", 5), ("alibi", 3), ("sinusoidal", 8)])
def test_capped_scores_each_byte_with_its_stated_context(encoding: str, stride: int) -> None:
    cap = 12
    data = bytes(np.random.default_rng(stride).integers(32, 127, 50).astype(np.uint8))
    model = tiny(encoding)
    capped = lm_study.capped_bits(model, data, cap=cap, stride=stride, batch=5)
    assert capped.shape == (len(data),)
    for g in range(len(data)):
        if g < cap:
            start = 0  # the first window: every byte before it
        else:  # the window ending at the first end ≥ g, ends at cap − 1 + k · stride
            end = cap - 1 + stride * -(-(g - cap + 1) // stride)
            start = end - cap + 1
            assert cap - stride <= g - start <= cap - 1  # the context the docstring promises
        assert capped[g] == pytest.approx(direct_bits(model, data, g, start), abs=2e-5), g


@pytest.mark.parametrize("length", [1, 7, 30])
def test_long_scores_each_byte_inside_its_window(length: int) -> None:
    data = bytes(np.random.default_rng(length).integers(32, 127, 47).astype(np.uint8))
    model = tiny("rope")
    long = lm_study.long_bits(model, data, length)
    assert long.shape == ((len(data) // length) * length,)
    for g in range(len(long)):
        assert long[g] == pytest.approx(direct_bits(model, data, g, g - g % length), abs=2e-5)


def test_ngram_from_start_cuts_context_at_window_starts() -> None:
    train = b"the cat sat on the mat. the dog sat on the log. " * 20
    text = b"the cat sat on the log. the dog"
    m = ngram.KneserNey(train, 4)
    window = 8
    bits = m.bits(text, window, from_start=True)
    assert bits.shape == (len(text),)
    for g in range(len(text)):
        context = text[g - g % window : g]
        expected = -np.log2(m.distribution(context)[text[g]])
        assert bits[g] == pytest.approx(expected, rel=1e-9, abs=1e-9), g


def test_compressor_from_start_predicts_every_byte() -> None:
    train, held = b"abcabcabd" * 50, b"abcabd" * 10
    got = ngram.compressor_bpb(train, held, from_start=True)
    for name, compress in ngram.COMPRESSORS.items():
        assert got[name] == ngram.conditional_bits(compress, train, held) / len(held)


def test_a_tiny_study_trains_evaluates_and_resumes(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(lm_study, "STEPS", 3)
    monkeypatch.setattr(lm_study, "FT_STEPS", 2)
    monkeypatch.setattr(lm_study, "EVAL_BYTES", 1024)
    monkeypatch.setattr(lm_study, "FT_LENGTH", 256)
    base_config, ft_config = lm_study.base_config, lm_study.ft_config

    def small(cfg: lm.LMConfig) -> lm.LMConfig:
        return replace(cfg, d_model=16, n_heads=2, batch_size=2, val_windows=2)

    monkeypatch.setattr(lm_study, "base_config", lambda e, s: small(base_config(e, s)))
    monkeypatch.setattr(lm_study, "ft_config", lambda s: small(ft_config(s)))
    assert lm_study.BOS not in set(C.load().train)
    for item in [("rope", 0), ("learned", 0), ("rope+pi-ft", 0)]:
        assert lm_study.do_run(item, tmp_path) == lm_study.run_name(*item)
    rope = json.loads((tmp_path / "rope-s0.eval.json").read_text())
    assert len(rope["capped"]) == 1024 // lm_study.BLOCK
    assert set(rope["stretches"]) == set(lm.STRETCHES)
    learned = json.loads((tmp_path / "learned-s0.eval.json").read_text())
    assert learned["long"]["128"] is not None and learned["long"]["256"] is None  # no table row past 128
    meta = json.loads((tmp_path / "learned-s0.json").read_text())
    assert meta["settings"]["bos"] == lm_study.BOS and meta["settings"]["autocast"] is True
    ft = json.loads((tmp_path / "rope+pi-ft-s0.json").read_text())
    assert ft["stretch"] == "rope-pi" and ft["base"] == "rope-s0" and ft["settings"]["length"] == 256
    # The fine-tuned model loads with its stretch and its own (changed) weights.
    model = lm_study.load("rope+pi-ft-s0", tmp_path)
    base = lm_study.load("rope-s0", tmp_path)
    kinds = {type(m.blocks[0].attn.encoder).__name__ for m in (model, base)}  # type: ignore[union-attr]
    assert len(kinds) == 2  # PI's encoder in the fine-tuned model, plain RoPE's in its base
    assert not torch.equal(model.embed, base.embed)
    # A rerun finds every file and redoes nothing.
    stamps = {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()}
    lm_study.do_run(("rope", 0), tmp_path)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.rglob("*") if p.is_file()} == stamps
    # A run with other settings than the set's is refused, never mixed in.
    monkeypatch.setattr(lm_study, "STEPS", 4)
    with pytest.raises(ValueError, match="other settings"):
        lm_study.do_run(("rope", 0), tmp_path)
