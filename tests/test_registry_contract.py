"""Contract tests over every registered encoder: whatever lands in REGISTRY must pass these."""

import ast

import pytest
import torch

from encoders import REGISTRY, build
from encoders.attention import causal_mask, toy_layer
from encoders.base import PositionalEncoding
from tests.helpers import ROOT

NAMES = sorted(REGISTRY)
D, H, N = 32, 4, 9


def _layer(name, seed=0):
    return toy_layer(build(name, D, H, seed), seed)


def _x(seed=0, n=N, b=2):
    return torch.randn(b, n, D, generator=torch.Generator().manual_seed(seed))


def test_registry_keys_are_the_class_names():
    assert {"none", "sinusoidal", "learned"} <= set(REGISTRY)
    for name, cls in REGISTRY.items():
        assert issubclass(cls, PositionalEncoding) and cls.name == name
        assert cls.kind in ("none", "input", "rotary", "bias", "contextual")
        assert cls.label and cls.term_names
        if cls.kind in ("rotary", "bias", "contextual"):
            assert cls.relative_sign is not None, f"{name} must say which relative sign it uses"
    with pytest.raises(KeyError):
        build("no-such-method", D, H)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("causal", [False, True])
def test_shapes_finiteness_and_normalisation(name, causal):
    with torch.no_grad():
        r = _layer(name)(_x(), causal=causal)
    assert set(r.terms) == set(REGISTRY[name].term_names)
    for term in r.terms.values():
        assert term.shape == (2, H, N, N) and torch.isfinite(term).all()
    assert r.weights.shape == (2, H, N, N) and r.output.shape == (2, N, D)
    assert torch.isfinite(r.output).all()
    assert torch.allclose(r.weights.sum(-1), torch.ones(2, H, N), atol=1e-5)
    if causal:
        future = ~causal_mask(N, N)
        assert (r.weights[..., future] == 0).all()


@pytest.mark.parametrize("name", NAMES)
def test_deterministic_for_a_seed(name):
    with torch.no_grad():
        a = _layer(name, seed=5)(_x(), causal=True)
        b = _layer(name, seed=5)(_x(), causal=True)
    assert torch.equal(a.output, b.output) and torch.equal(a.weights, b.weights)


@pytest.mark.parametrize("name", NAMES)
def test_causal_outputs_ignore_the_future(name):
    """Changing the last token must not change any earlier output under the causal mask."""
    x = _x()
    y = x.clone()
    y[:, -1] = torch.randn(2, D, generator=torch.Generator().manual_seed(99))
    layer = _layer(name)
    with torch.no_grad():
        a, b = layer(x, causal=True), layer(y, causal=True)
    assert torch.allclose(a.output[:, :-1], b.output[:, :-1], atol=1e-6)
    assert not torch.allclose(a.output[:, -1], b.output[:, -1], atol=1e-6)


@pytest.mark.parametrize("name", NAMES)
def test_switching_every_term_off_gives_uniform_attention(name):
    layer = _layer(name)
    scales = {t: 0.0 for t in REGISTRY[name].term_names}
    with torch.no_grad():
        r = layer(_x(), causal=False, term_scales=scales)
    assert torch.allclose(r.weights, torch.full_like(r.weights, 1 / N), atol=1e-6)


def test_content_and_position_terms_split_the_terms():
    for name, cls in REGISTRY.items():
        content, position = set(cls.content_terms), set(cls.position_terms())
        assert content and content <= set(cls.term_names), name
        assert content | position == set(cls.term_names) and not content & position, name


@pytest.mark.parametrize("name", NAMES)
def test_config_hooks_give_configs_the_encoder_takes(name):
    """config_covering(n) runs positions 0 … n−1, past every default table (a learned one has 32
    rows); the length and training configs build too."""
    cls, n = REGISTRY[name], 40
    for config in (cls.config_for_lengths(16, n), cls.training_config(n)):
        build(name, D, H, 0, config)
    with torch.no_grad():
        r = toy_layer(build(name, D, H, 0, cls.config_covering(n)), 0)(_x(n=n), causal=True)
    assert torch.isfinite(r.output).all()


# What each chapter's axis titles said while the sign was a catalogue string per chapter; the class now
# holds the symbols and explain.chapters.common.sign_text the words. Nothing a learner reads changed.
FORMER_SIGNS = {
    "alibi": ("i − j (query − key)", "i − j (쿼리 − 키)"),
    "shaw": ("j − i (key − query)", "j − i (키 − 쿼리)"),
    "t5": ("j − i (key − query)", "j − i (키 − 쿼리)"),
    "deberta": ("i − j (query − key)", "i − j (쿼리 − 키)"),
    "transformer-xl": ("i − j (query − key)", "i − j (쿼리 − 키)"),
    "cope": ("p_ij = Σ_{t=j..i} g_it (count back from query i)", "p_ij = Σ_{t=j..i} g_it (쿼리 i에서 거슬러 센 수)"),
}


def test_relative_signs_render_in_both_languages():
    from explain.chapters.common import sign_text

    for name, (en, ko) in FORMER_SIGNS.items():
        assert (sign_text(name, "en"), sign_text(name, "ko")) == (en, ko)
    for name, cls in REGISTRY.items():
        if cls.relative_sign is None:
            with pytest.raises(ValueError):
                sign_text(name, "en")
            continue
        en, ko = sign_text(name, "en"), sign_text(name, "ko")
        assert en.startswith(cls.relative_sign.math) and ko.startswith(cls.relative_sign.math)
        assert "query" in en and "query" not in ko and "쿼리" in ko, name


def test_unknown_term_is_refused():
    with pytest.raises(KeyError):
        _layer("none")(_x(), term_scales={"nonsense": 0.0})


def test_projections_do_not_depend_on_the_encoder():
    """Side-by-side comparisons need the same W_q, W_k, W_v, W_o for every encoding."""
    a, b = _layer("none", seed=3), _layer("learned", seed=3)
    for name in ("w_q", "w_k", "w_v", "w_o"):
        assert torch.equal(getattr(a, name), getattr(b, name))


def test_causal_mask_aligns_queries_to_the_end_of_the_keys():
    m = causal_mask(2, 4)
    assert m.tolist() == [[True, True, True, False], [True, True, True, True]]
    assert causal_mask(3, 3).tolist() == [[True, False, False], [True, True, False], [True, True, True]]


def test_attention_without_positions_is_permutation_equivariant():
    layer = _layer("none")
    x = _x(n=8).double()
    layer = layer.double()
    perm = torch.tensor([3, 0, 7, 1, 6, 2, 5, 4])
    with torch.no_grad():
        out = layer(x).output
        out_p = layer(x[:, perm]).output
    assert torch.allclose(out[:, perm], out_p, atol=1e-12)
    # ... and with an input encoding it is not
    sin = toy_layer(build("sinusoidal", D, H, 0), 0).double()
    with torch.no_grad():
        assert not torch.allclose(sin(x).output[:, perm], sin(x[:, perm]).output, atol=1e-3)


def _imported_packages(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module.split(".")[0]


def test_layers_below_the_pages_never_import_streamlit():
    for folder in ("encoders", "models", "explain", "lab"):
        for path in (ROOT / folder).rglob("*.py"):
            assert "streamlit" not in set(_imported_packages(path)), path


def test_pages_never_import_torch():
    pages = list((ROOT / "pages").rglob("*.py"))
    assert pages and not any(p.parent == ROOT / "pages" for p in pages), "pages live in subfolders"
    for path in pages:
        assert "torch" not in set(_imported_packages(path)), path
