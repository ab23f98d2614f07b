"""The sentence → tokens step and the toy embeddings."""

import subprocess
import sys

import numpy as np
import pytest
import torch

from encoders.text import MAX_CHARS, display_label, token_embeddings, token_vector, tokenize
from tests.helpers import ROOT


def test_words_and_punctuation_are_separate_tokens():
    assert tokenize("The cat sat on the mat.").tokens == ("The", "cat", "sat", "on", "the", "mat", ".")
    assert tokenize("Well, I like CV!").tokens == ("Well", ",", "I", "like", "CV", "!")
    assert tokenize("don't stop").tokens == ("don't", "stop")


def test_korean_cjk_and_accents_stay_words():
    assert tokenize("고양이가 매트 위에 앉았다.").tokens == ("고양이가", "매트", "위에", "앉았다", ".")
    assert tokenize("naïve café").tokens == ("naïve", "café")
    # decomposed é (e + combining acute) is normalised to the same token as the composed one
    assert tokenize("cafe\u0301").tokens == ("café",)


def test_emoji_sequences_are_one_token_each():
    toks = tokenize("I 👩‍💻 love 🇰🇷 ❤️").tokens
    assert toks == ("I", "👩\u200d💻", "love", "🇰🇷", "❤️")


def test_empty_blank_and_control_text():
    for text in ["", "   ", "\n\t", "\x00\x01", "\u200d\u200e", None]:
        t = tokenize(text)
        assert t.empty and len(t) == 0 and not t.truncated


def test_html_is_just_tokens():
    assert tokenize("<b>x</b>").tokens == ("<", "b", ">", "x", "<", "/", "b", ">")


def test_long_text_is_cut_and_says_so():
    t = tokenize("word " * 300, max_tokens=256)
    assert len(t) == 256 and t.n_found == 300 and t.truncated
    t = tokenize("a" * (MAX_CHARS + 50))
    assert t.chars_cut and t.truncated and len(t.tokens[0]) == MAX_CHARS
    with pytest.raises(ValueError):
        tokenize("a", max_tokens=0)


def test_repeated_words_share_a_key_case_folded():
    t = tokenize("The cat and the dog")
    assert t.keys[0] == t.keys[3] == "the"
    e = token_embeddings(t.keys, 16, seed=3)
    assert torch.equal(e[0], e[3]) and not torch.equal(e[0], e[1])


def test_embeddings_are_deterministic_and_seeded():
    a = token_embeddings(["cat", "dog"], 32, seed=0)
    b = token_embeddings(["cat", "dog"], 32, seed=0)
    c = token_embeddings(["cat", "dog"], 32, seed=1)
    assert a.shape == (2, 32) and a.dtype == torch.float32
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert token_embeddings([], 8, 0).shape == (0, 8)
    # unit-variance entries: the scale every other part of the app assumes
    big = token_vector("anything", 20_000, 0)
    assert abs(big.std() - 1) < 0.03 and abs(big.mean()) < 0.03


def test_embeddings_are_the_same_in_a_fresh_process():
    """A stable hash (SHA-256), not Python's per-process randomised hash()."""
    code = "from encoders.text import token_vector; print(repr(token_vector('cat', 4, 7).tolist()))"
    out = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "123", "PATH": ""},
        cwd=ROOT,
    ).stdout
    assert np.allclose(eval(out), token_vector("cat", 4, 7))


def test_display_label_shortens_only_long_tokens():
    assert display_label("cat") == "cat"
    assert display_label("a" * 40, 10) == "a" * 9 + "…"
