"""The byte-level language models of issue 20 (lab/corpus.py, lab/lm.py) against independent
computations: the corpus recipe and its checksums, the evaluation windows, bits per byte from a
naive per-window loop, RoPE's stretches at s = 1, the learner's-text readout, and the shipped index."""

from __future__ import annotations

import json
import math
import platform

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from encoders.base import PositionOutOfRange
from lab import corpus as C
from lab import lm

pytestmark = pytest.mark.skipif(not (lm.LM_DIR / "index.json").exists(), reason="assets/lm not generated")


@pytest.fixture(scope="module")
def corpus() -> C.Corpus:
    return C.load()


@pytest.fixture(scope="module")
def index() -> dict:
    return lm.index()


# --- the corpus ----------------------------------------------------------------------------------


def test_corpus_checksums_and_recipe(corpus: C.Corpus) -> None:
    r = corpus.recipe
    for split in C.SPLITS:
        data = getattr(corpus, split)
        assert len(data) == r[split]["bytes"] > 0
        data.decode("utf-8")  # whole characters only
    assert r["train"]["files"] > 5 * r["heldout"]["files"] > 0
    assert len(corpus.train) > 1_000_000  # enough text for 1500 steps of 16 × 128 bytes to be ~2 epochs


def test_a_changed_corpus_file_is_refused(tmp_path, corpus: C.Corpus) -> None:
    C.save(corpus, tmp_path)
    recipe = json.loads((tmp_path / "corpus.json").read_text())
    recipe["heldout"]["sha256"] = "0" * 64
    (tmp_path / "corpus.json").write_text(json.dumps(recipe))
    with pytest.raises(ValueError, match="checksum"):
        C.load(tmp_path)


@pytest.mark.skipif(
    platform.python_version() != json.loads((lm.LM_DIR / "corpus.json").read_text())["python"]
    if (lm.LM_DIR / "corpus.json").exists()
    else True,
    reason="the corpus is rebuilt only from the Python that recorded it",
)
def test_the_recipe_rebuilds_the_shipped_corpus(corpus: C.Corpus) -> None:
    rebuilt = C.build()
    assert rebuilt.recipe == corpus.recipe
    assert rebuilt.train == corpus.train and rebuilt.heldout == corpus.heldout


def test_docstrings_in_source_order_and_short_ones_dropped() -> None:
    long_a, long_b = "A" * C.MIN_CHARS, "B" * (C.MIN_CHARS + 5)
    src = (
        f'"""{long_b}"""\n\ndef f():\n    """short"""\n\n'
        f'class K:\n    """{long_a}"""\n    def g(self):\n        """{long_b}"""\n'
    )
    assert C.docstrings(src) == [long_b, long_a, long_b]


# --- windows and bits per byte -----------------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(st.binary(min_size=0, max_size=300), st.integers(1, 40))
def test_windows_cover_the_text_without_overlap(data: bytes, length: int) -> None:
    w = lm.windows(data, length)
    assert w.shape == ((len(data) - 1) // length if data else 0, length + 1)
    ids = np.frombuffer(data, np.uint8)
    for i, row in enumerate(w):
        assert (row == ids[i * length : i * length + length + 1]).all()  # targets i·L+1 … i·L+L


def test_longer_windows_predict_the_same_bytes_as_consecutive_short_ones(corpus: C.Corpus) -> None:
    data = corpus.heldout[: lm.EVAL_BYTES]
    short, long_ = lm.windows(data, 128), lm.windows(data, 512)
    assert len(short) == 4 * len(long_)
    targets_short = short[:, 1:].reshape(len(long_), -1)
    assert (targets_short == long_[:, 1:]).all()


def naive_bits(model: torch.nn.Module, data: bytes, length: int) -> np.ndarray:
    """One window at a time, log-softmax in float64, a loop over positions."""
    ids = list(data)
    out = []
    for s in range(0, (len(ids) - 1) // length * length, length):
        x = torch.tensor(ids[s : s + length])[None, :]
        with torch.no_grad():
            logp = torch.log_softmax(model(x)[0].double(), dim=-1)
        total = sum(-float(logp[t, ids[s + t + 1]]) for t in range(length))
        out.append(total / length / math.log(2))
    return np.array(out)


@pytest.mark.parametrize("encoding", lm.ENCODINGS)
def test_bits_per_byte_agrees_with_a_naive_loop(encoding: str, corpus: C.Corpus) -> None:
    model = lm.shipped(encoding)
    data = corpus.heldout[:1025]
    np.testing.assert_allclose(lm.window_bits(model, data, 128), naive_bits(model, data, 128), atol=1e-4)


def test_a_learned_table_has_no_rows_past_the_training_length(corpus: C.Corpus) -> None:
    with pytest.raises(PositionOutOfRange):
        lm.window_bits(lm.shipped("learned"), corpus.heldout[:1025], 2 * lm.TRAIN_LEN)


# --- stretching RoPE -----------------------------------------------------------------------------


@pytest.mark.parametrize("scheme", lm.STRETCHES)
def test_a_stretch_within_the_training_length_changes_nothing(scheme: str) -> None:
    base = lm.shipped(lm.STRETCHED)
    x = torch.randint(0, 256, (2, 100), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        same = lm.stretched(base, scheme, lm.TRAIN_LEN)(x)
        longer = lm.stretched(base, scheme, 8 * lm.TRAIN_LEN)(x)
        plain = base(x)
    torch.testing.assert_close(same, plain, rtol=1e-5, atol=1e-5)
    assert (longer - plain).abs().max() > 1e-3  # s = 8 does change the model


def test_only_a_parameter_free_encoder_is_stretched() -> None:
    with pytest.raises(ValueError, match="parameter-free"):
        lm.stretched(lm.shipped("t5"), "rope-pi", 512)


# --- the learner's text ------------------------------------------------------------------------


def unlabel(labels: tuple[str, ...], data: bytes) -> str:
    """The text back from the labels of its character-starting bytes (a typed "·" is a character too,
    so continuation bytes are found from the bytes, and their label must be "·")."""
    shown = {"␣": " ", "↵": "\n", "⇥": "\t"}
    out = []
    for lab, b in zip(labels, data, strict=True):
        if b & 0xC0 == 0x80:
            assert lab == "·"
            continue
        if len(lab) == 2 and lab[0] == "^":
            out.append(chr(ord(lab[1]) ^ 0x40))
        else:
            out.append(shown.get(lab, lab))
    return "".join(out)


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=60))
def test_byte_labels_round_trip_and_never_split_a_character(text: str) -> None:
    data = text.encode("utf-8", errors="replace")
    labels = lm.byte_labels(data)
    assert len(labels) == len(data)
    assert unlabel(labels, data) == data.decode("utf-8")


@settings(max_examples=40, deadline=None)
@given(st.text(max_size=80), st.integers(0, 60))
def test_cut_text_cuts_at_a_character_boundary(text: str, limit: int) -> None:
    data, n_bytes, cut_at = lm.cut_text(text, limit)
    assert n_bytes == len(text.encode("utf-8", errors="replace"))
    assert len(data) <= limit
    assert (cut_at is None) == (n_bytes <= limit)
    data.decode("utf-8")  # never a half character


@pytest.mark.parametrize("encoding", lm.ENCODINGS)
@pytest.mark.parametrize(
    "text",
    ["The cat sat on the mat.", "한국어 문장 🇰🇷 emoji 👩‍💻", "<script>alert(1)</script>\x00\x1b\t\n", "ab" * 300],
)
def test_readout_agrees_with_the_model(encoding: str, text: str) -> None:
    model = lm.shipped(encoding)
    r = lm.read_text(model, text)
    n = len(r.data)
    assert r.attention.shape == (model.cfg.n_layers, model.cfg.n_heads, n, n)
    np.testing.assert_allclose(r.attention.sum(-1), 1.0, atol=1e-5)
    assert np.abs(np.triu(r.attention, k=1)).max() == 0.0  # causal: no weight on a later byte
    ids = torch.tensor(list(r.data))[None, :]
    with torch.no_grad():
        logp = torch.log_softmax(model(ids)[0].double(), dim=-1).numpy()
    expected = np.array([-logp[t, r.data[t + 1]] / math.log(2) for t in range(n - 1)])
    np.testing.assert_allclose(r.surprise, expected, atol=1e-5)
    assert (np.diff(r.top_probs, axis=1) <= 1e-12).all()
    np.testing.assert_allclose(r.top_probs, np.exp(np.take_along_axis(logp, r.top_bytes, 1)), atol=1e-6)
    if r.table_end is not None:  # a learned table: read only as far as its rows go
        assert n <= r.table_end == lm.TRAIN_LEN and r.cut_at is not None
    r.data.decode("utf-8")


def test_training_bytes_are_the_byte_values_of_the_training_text(corpus: C.Corpus) -> None:
    assert lm.training_bytes() == frozenset(corpus.train)
    assert not set("고양이".encode()) <= lm.training_bytes()  # what the page's "never seen" note rests on


def test_readout_of_empty_and_very_long_text() -> None:
    model = lm.shipped("rope")
    empty = lm.read_text(model, "")
    assert empty.attention.shape[-1] == 0 and len(empty.surprise) == 0 and math.isnan(empty.bits_per_byte)
    long_ = lm.read_text(model, "가" * 10_000)
    assert len(long_.data) <= lm.MAX_TEXT_BYTES and long_.cut_at == len(long_.data) and long_.n_bytes == 30_000


# --- the shipped index ---------------------------------------------------------------------------


def test_index_covers_every_model_and_length(index: dict, corpus: C.Corpus) -> None:
    assert set(index["models"]) == set(lm.ENCODINGS)
    assert index["eval_lengths"] == list(lm.EVAL_LENGTHS)
    assert index["corpus"] == corpus.recipe
    n_eval = min(lm.EVAL_BYTES, len(corpus.heldout))
    for enc, m in index["models"].items():
        for n in lm.EVAL_LENGTHS:
            entry = m["bpb"][str(n)]
            if entry is None:  # no representation past the table: only a learned table
                assert n > lm.TRAIN_LEN and enc == "learned"
                continue
            assert len(entry["windows"]) == (n_eval - 1) // n
            assert entry["bpb"] == pytest.approx(np.mean(entry["windows"]), abs=1e-3)
        assert m["curve"][-1]["step"] == index["settings"]["steps"]
    assert index["models"]["learned"]["bpb"]["256"] is None
    assert set(index["stretches"]) == {"of", *lm.STRETCHES}


def test_index_reproduces_from_the_shipped_weights(index: dict, corpus: C.Corpus) -> None:
    got = lm.window_bits(lm.shipped("alibi"), corpus.heldout[: lm.EVAL_BYTES], 512)
    np.testing.assert_allclose(got, index["models"]["alibi"]["bpb"]["512"]["windows"], atol=2e-4)


def test_shipped_models_are_identical_but_for_the_encoding(index: dict) -> None:
    settings_ = {enc: json.loads((lm.LM_DIR / f"{enc}.json").read_text())["settings"] for enc in lm.ENCODINGS}
    for s in settings_.values():
        s.pop("encoding")
    assert all(s == settings_["none"] for s in settings_.values())


def test_assets_fit_the_budget() -> None:
    total = sum(p.stat().st_size for p in lm.LM_DIR.iterdir())
    assert total <= 25 * 2**20
