"""The methods catalogue (explain/text/<lang>/strings/methods.toml, read by explain/methods.py): one
entry per registered method, keyed by its registry name, in both languages. This replaces the tests
that kept four per-chapter copies of the names equal (attention_lab.method, real_text.enc,
toy_tasks.enc, rope_scaling.scheme)."""

from __future__ import annotations

import pytest

from encoders import REGISTRY
from encoders.rope import RoPE
from explain import methods
from explain.i18n import LANGS, catalogue

FORMS = ("label", "short", "row", "scheme")


def _entries(lang: str) -> dict[str, dict[str, str]]:
    out: dict[str, dict[str, str]] = {}
    for key, text in catalogue(lang).items():
        if key.startswith("methods."):
            name, form = key.removeprefix("methods.").rsplit(".", 1)
            out.setdefault(name, {})[form] = text
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_every_registered_method_has_its_words_and_nothing_else_does(lang):
    entries = _entries(lang)
    assert set(entries) == set(REGISTRY), lang
    for name, forms in entries.items():
        assert {"label", "short"} <= set(forms) <= set(FORMS), (lang, name)
        assert all(v.strip() == v and v for v in forms.values()), (lang, name)
        assert methods.label(name, lang) == forms["label"] and methods.short(name, lang) == forms["short"]


def test_both_languages_have_the_same_forms():
    en, ko = _entries("en"), _entries("ko")
    assert {n: set(f) for n, f in en.items()} == {n: set(f) for n, f in ko.items()}


def test_english_labels_are_the_encoder_classes_labels():
    """A renamed encoder cannot drift from what the pages call it."""
    for name, cls in REGISTRY.items():
        assert methods.label(name, "en") == cls.label, name


def test_every_rope_scheme_has_a_scheme_name_and_only_they_do():
    for name, cls in REGISTRY.items():
        if issubclass(cls, RoPE):
            assert methods.scheme(name, "en") and methods.scheme(name, "ko"), name
        else:
            with pytest.raises(KeyError):
                methods.scheme(name, "en")


def test_forms_fall_back_and_unknown_names_are_refused():
    assert methods.row_label("learned", "en") == "Learned (Absolute PE)"
    assert methods.row_label("alibi", "en") == methods.short("alibi", "en") == "ALiBi"
    assert methods.bare("none", "en") == "No positional encoding" and methods.bare("none", "ko") == "위치 인코딩 없음"
    with pytest.raises(KeyError):
        methods.label("no-such-method", "en")
