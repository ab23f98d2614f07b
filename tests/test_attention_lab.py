"""The attention lab: panels, term switches, the content dial, heads, the shift and length tests."""

import math

import numpy as np
import pytest

from encoders import REGISTRY
from encoders.alibi import alibi_slopes
from encoders.text import tokenize
from explain.chapters import attention_lab as lab
from explain.chapters.common import run_tokens
from tests.helpers import errors, fig_array, figure, figure_titles, open_page

PAGE = "pages/labs/attention_lab.py"
S = "The cat sat on the mat. The dog sat on the log."
TOKENS = tokenize(S).tokens
RELATIVE = ("shaw", "t5", "transformer-xl", "deberta", "alibi", "rope", "cope", "none")


def softmax(z):
    z = np.where(np.isnan(z), -np.inf, np.asarray(z, dtype=np.float64))
    e = np.exp(z - z.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


# -- term roles ---------------------------------------------------------------------------------


@pytest.mark.parametrize("method", list(REGISTRY))
def test_content_and_position_terms_partition_every_encoders_terms(method):
    c, p = lab.content_terms(method), lab.position_terms(method)
    assert set(c) | set(p) == set(REGISTRY[method].term_names)
    assert not set(c) & set(p)
    assert c, "the content dial must act on some term of every encoding"


def test_named_term_roles():
    assert lab.content_terms("transformer-xl") == ("a", "c")
    assert lab.position_terms("transformer-xl") == ("b", "d")
    assert lab.content_terms("deberta") == ("c2c",)
    assert lab.position_terms("deberta") == ("c2p", "p2c")
    assert lab.position_terms("cope") == ("position",)
    assert lab.mixed_in_input("sinusoidal") and lab.mixed_in_input("learned") and not lab.mixed_in_input("rope")


# -- panels ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", list(REGISTRY))
@pytest.mark.parametrize("causal", [False, True])
def test_panel_parts_add_up_to_the_logits_and_rows_sum_to_one(method, causal):
    p = lab.panel(S, 3, method, 4, causal, 1.0, ())
    total = p.content + (0 if p.position is None else p.position)
    visible = ~np.isnan(p.logits)
    np.testing.assert_allclose(total[visible], p.logits[visible], atol=2e-5)
    assert np.isnan(total[~visible]).all()
    np.testing.assert_allclose(p.weights.sum(-1), 1.0, atol=1e-5)
    if causal:
        assert np.all(p.weights[:, np.triu_indices(len(TOKENS), 1)[0], np.triu_indices(len(TOKENS), 1)[1]] == 0)


@pytest.mark.parametrize("method", ["transformer-xl", "deberta", "cope", "t5", "rope", "alibi", "shaw"])
def test_each_term_switched_off_equals_softmax_of_the_other_terms(method):
    """Independent: the encoder's raw terms from run_tokens, summed without the switched-off one."""
    raw = run_tokens(TOKENS, 0, method, 64, 4, False, 0, lab.lab_config(method)).terms
    for t in REGISTRY[method].term_names:
        p = lab.panel(S, 0, method, 4, False, 1.0, (t,))
        want = softmax(sum(v.astype(np.float64) for k, v in raw.items() if k != t))
        np.testing.assert_allclose(p.weights, want, atol=2e-5)
        full = lab.panel(S, 0, method, 4, False, 1.0, ())
        assert np.abs(p.weights - full.weights).max() > 1e-3, f"switching {t} off changed nothing"


def test_unknown_term_is_refused():
    with pytest.raises(KeyError):
        lab.term_scales("rope", 1.0, ("b",))


def test_dial_zero_leaves_alibis_positional_prior_by_explicit_loops():
    """ALiBi at dial 0: w_ij = softmax_j(−m_h |i − j|), the symmetric (non-causal) paper form."""
    p = lab.panel(S, 0, "alibi", 4, False, 0.0, ())
    slopes = alibi_slopes(4)
    n = len(TOKENS)
    for h in range(4):
        for i in range(n):
            row = [math.exp(-float(slopes[h]) * abs(i - j)) for j in range(n)]
            z = sum(row)
            for j in range(n):
                assert abs(p.weights[h, i, j] - row[j] / z) < 1e-6
    assert np.abs(p.content).max() == 0


def test_dial_scales_the_content_term_only():
    one, three = lab.panel(S, 0, "t5", 4, False, 1.0, ()), lab.panel(S, 0, "t5", 4, False, 3.0, ())
    np.testing.assert_allclose(three.content, 3 * one.content, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(three.position, one.position, atol=1e-6)
    # A stronger content term makes the weights peakier (lower mean entropy).
    ent = lambda w: -(w * np.log(w + 1e-30)).sum(-1).mean()  # noqa: E731
    assert ent(three.weights) < ent(one.weights) - 0.05


def test_input_encoding_parts_are_nope_content_and_the_difference():
    sin = lab.panel(S, 0, "sinusoidal", 4, False, 1.0, ())
    nope = lab.panel(S, 0, "none", 4, False, 1.0, ())
    np.testing.assert_allclose(sin.content, nope.logits, atol=1e-5)
    assert np.abs(sin.position).max() > 0.1
    half = lab.panel(S, 0, "sinusoidal", 4, False, 0.5, ())
    np.testing.assert_allclose(half.logits, 0.5 * sin.logits, atol=1e-5)  # a temperature


def test_head_mean_and_single_head():
    p = lab.panel(S, 0, "alibi", 4, False, 1.0, ())
    np.testing.assert_allclose(lab.pick_head(p.weights, None), p.weights.mean(0))
    np.testing.assert_array_equal(lab.pick_head(p.weights, 2), p.weights[2])
    assert np.abs(p.weights[0] - p.weights[3]).max() > 0.05  # ALiBi's heads differ by slope


def test_seed_example_top_key_at_dial_zero():
    """ "a a a a b a a a b b", causal, dial 0 (position only): ALiBi's last word attends most to
    itself (distance 0), with the head-mean weight Σ_h [1 / Σ_{d=0..9} e^(−m_h d)] / 4."""
    w = lab.pick_head(lab.panel("a a a a b a a a b b", 0, "alibi", 4, True, 0.0, ()).weights, None)
    j, top = lab.top_key(w, 9)
    want = sum(1 / sum(math.exp(-float(m) * d) for d in range(10)) for m in alibi_slopes(4)) / 4
    assert j == 9 and top == pytest.approx(want, abs=1e-6)


# -- shift test -----------------------------------------------------------------------------------


def test_shift_test_relative_unchanged_absolute_changed():
    st = lab.shift_test(S, 0, ("sinusoidal", "learned", *RELATIVE), "Well, you know,", 4, False, None)
    got = dict(zip(st.methods, st.max_change, strict=False))
    for m in RELATIVE:
        assert got[m] < 1e-12, m
    assert got["sinusoidal"] > 1e-2 and got["learned"] > 1e-2
    assert st.prefix == ("Well", ",", "you", "know", ",")
    assert list(st.changed) == [True, True] + [False] * len(RELATIVE)


def test_shift_test_matches_an_offset_run():
    """Independent: one layer's scores between original words do not depend on the prefix's words,
    only on the new positions, so the block equals a run with positions_offset = k."""
    k = 3
    st = lab.shift_test(S, 1, ("sinusoidal",), "Oh well ,", 4, True, 1)
    before = run_tokens(TOKENS, 1, "sinusoidal", 64, 4, True, 0, float64=True).logits
    after = run_tokens(TOKENS, 1, "sinusoidal", 64, 4, True, k, float64=True).logits
    np.testing.assert_allclose(st.delta[0], (softmax(after) - softmax(before))[1], atol=1e-12)


# -- length test ----------------------------------------------------------------------------------


def test_length_test():
    lt = lab.length_test(S, 0, ("learned", "sinusoidal", "alibi", "rope-pi"), 16, 100, 4, True, None)
    assert len(lt.tokens) == 100 and lt.tokens[:14] == TOKENS and lt.tokens[14:28] == TOKENS and len(TOKENS) == 14
    learned = lt.runs[0]
    assert learned.error and learned.first_missing == 16 and np.isnan(learned.entropy).all()
    for r in lt.runs[1:]:
        assert not r.error and r.entropy.shape == (100,) and np.isfinite(r.entropy).all()
        assert r.entropy[0] == pytest.approx(0.0, abs=1e-6)  # causal: the first word sees only itself
        assert (r.entropy <= np.log(np.arange(1, 101)) + 1e-5).all()  # never above uniform
    fits = lab.length_test(S, 0, ("learned",), 100, 100, 4, True, None)
    assert not fits.runs[0].error
    assert lab.length_config("rope-pi", 16, 100).scale == pytest.approx(100 / 16)
    assert lab.length_config("learned", 16, 100).max_len == 16


def test_repeated_tokens():
    assert lab.repeated_tokens(("a", "b", "c"), 7) == ("a", "b", "c", "a", "b", "c", "a")
    assert lab.repeated_tokens((), 5) == ()


# -- the page -------------------------------------------------------------------------------------


def _title(method):
    """A lab panel's title starts with the encoding's name without its citation."""
    return REGISTRY[method].label.split(" (")[0] + ":"


def _z(at, start):
    return fig_array(figure(at, start)["data"][0]["z"]).astype(np.float64)


def test_page_default_and_controls():
    at = open_page(PAGE, sentence=S)
    assert not errors(at)
    titles = figure_titles(at)
    assert sum(t.endswith("attention weights, head 1") for t in titles) == 4
    sin = lab.panel(S, 0, "sinusoidal", 4, False, 1.0, ())
    np.testing.assert_allclose(_z(at, "Sinusoidal:"), sin.weights[0], atol=1e-6)
    at.selectbox(key="lab_head").set_value("mean").run()
    assert sum(t.endswith("attention weights, mean over heads") for t in figure_titles(at)) == 4
    np.testing.assert_allclose(_z(at, "Sinusoidal:"), sin.weights.mean(0), atol=1e-6)

    # Several encodings incl. the multi-term ones; every term switched off in turn.
    at.multiselect(key="lab_methods").set_value(["transformer-xl", "deberta", "cope"]).run()
    assert not errors(at)
    for m in ("transformer-xl", "deberta", "cope"):
        for t in REGISTRY[m].term_names:
            at.checkbox(key=f"lab_term_{m}_{t}").uncheck().run()
            assert not errors(at)
            want = lab.panel(S, 0, m, 4, False, 1.0, (t,)).weights.mean(0)
            np.testing.assert_allclose(_z(at, _title(m)), want, atol=1e-5)
            at.checkbox(key=f"lab_term_{m}_{t}").check().run()

    # One head, the position term, the dial at both ends, causal.
    at.selectbox(key="lab_head").set_value(1).run()
    np.testing.assert_allclose(
        _z(at, _title("deberta")), lab.panel(S, 0, "deberta", 4, False, 1.0, ()).weights[1], atol=1e-5
    )
    at.radio(key="lab_show").set_value("position").run()
    assert not errors(at)
    pos = lab.panel(S, 0, "cope", 4, False, 1.0, ()).position[1]
    np.testing.assert_allclose(_z(at, _title("cope")), pos, atol=1e-4)
    for v in (0.0, 3.0):
        at.slider(key="lab_dial").set_value(v).run()
        assert not errors(at)
    at.toggle(key="lab_causal").set_value(True).run()
    at.radio(key="lab_show").set_value("content").run()
    z = _z(at, _title("transformer-xl"))
    assert np.isnan(z[0, 1:]).all()  # masked cells blank
    at.selectbox(key="lab_heads").set_value(8).run()
    assert not errors(at)


def test_page_shift_and_length_tests():
    at = open_page(PAGE, sentence=S)
    at.multiselect(key="lab_methods").set_value(["learned", "sinusoidal", "rope", "alibi"]).run()
    at.text_input(key="lab_prefix").input("Hmm, well").run()
    bars = figure(at, "Largest change")
    shown = fig_array(bars["data"][0]["customdata"])
    assert shown[0] > 1e-3 and shown[1] > 1e-3 and shown[2] < 1e-12 and shown[3] < 1e-12
    # Length: the learned table runs out; the others continue (extremes of both sliders).
    at.slider(key="lab_train_len").set_value(4).run()
    at.slider(key="lab_length").set_value(512).run()
    assert not at.exception
    assert any("has rows for positions 0…3 only" in w.value for w in at.warning)
    dist = figure(at, "How far each word looks")
    assert [d["name"] for d in dist["data"] if d.get("mode") == "lines"][:3] == ["Sinusoidal", "RoPE", "ALiBi"]
    assert fig_array(dist["data"][0]["y"]).shape == (512,)
    at.slider(key="lab_train_len").set_value(256).run()
    assert not errors(at)


@pytest.mark.parametrize(
    "sentence", [" ".join(f"w{k % 37}" for k in range(300)), "I ❤️ 서울 and 東京 🇰🇷🇯🇵 — don't you? 👩‍💻"]
)
def test_page_long_and_mixed_scripts(sentence):
    at = open_page(PAGE, sentence=sentence)
    assert not errors(at)
    n = min(256, len(tokenize(sentence).tokens))
    z = _z(at, "RoPE:")
    assert z.shape == (n, n)
    np.testing.assert_allclose(z.sum(-1), 1.0, atol=1e-5)


def test_page_predict_then_reveal_uses_the_shift_test():
    at = open_page(PAGE, sentence=S)
    at.multiselect(key="lab_methods").set_value(["rope", "learned", "alibi"]).run()
    sh = lab.shift_test(S, 0, ("rope", "learned", "alibi"), "Well, you know,", 4, False, 0)
    assert sh.methods[int(np.argmax(sh.max_change))] == "learned"
    at.radio(key="lab_shift_q__choice").set_value("RoPE").run()
    at.button(key="lab_shift_q__reveal").click().run()
    assert any("the answer is **Learned absolute**" in w.value for w in at.warning)
    # All relative: the answer is "none of them".
    at.multiselect(key="lab_methods").set_value(["rope", "alibi"]).run()
    at.button(key="lab_shift_q__again").click().run()
    at.radio(key="lab_shift_q__choice").set_value("none of them").run()
    at.button(key="lab_shift_q__reveal").click().run()
    assert any(s.value.startswith("Right: **none of them**") for s in at.success)


# -- languages ------------------------------------------------------------------------------------


def test_english_encoding_names_are_the_registrys_labels():
    """The page names encodings from the catalogue (Korean needs words translated); in English
    those names must be the registry's own labels, so that a renamed encoder cannot drift."""
    from explain.i18n import catalogue

    for lang in ("en", "ko"):
        names = {k.rsplit(".", 1)[1] for k in catalogue(lang) if k.startswith("attention_lab.method.")}
        assert names == set(REGISTRY), lang
    for name, cls in REGISTRY.items():
        assert catalogue("en")[f"attention_lab.method.{name}"] == cls.label


def test_page_in_korean_and_switching_language_keeps_every_control():
    from tests.i18n_scan import open_korean

    at = open_korean(PAGE)
    assert not errors(at)
    assert at.multiselect(key="lab_methods").options[0] == "위치 인코딩 없음 (NoPE)"
    assert sum(t.endswith("어텐션 가중치, 헤드 1") for t in figure_titles(at)) == 4
    # NoPE among the shift question's options next to "none of them": two distinct labels.
    at.multiselect(key="lab_methods").set_value(["none", "learned", "rope"]).run()
    at.selectbox(key="lab_head").set_value("mean").run()
    at.radio(key="lab_show").set_value("position").run()
    at.slider(key="lab_dial").set_value(2.5).run()
    at.text_input(key="lab_prefix").input("Hmm,").run()
    at.slider(key="lab_train_len").set_value(4).run()
    assert not errors(at)
    assert "하나도 없음" in at.radio(key="lab_shift_q__choice").options
    assert any("위치 0…3의 행만 있고" in w.value for w in at.warning)
    at.session_state["lang"] = "en"  # the sidebar switch
    at.run()
    assert not errors(at)
    assert at.multiselect(key="lab_methods").value == ["none", "learned", "rope"]
    assert (at.selectbox(key="lab_head").value, at.radio(key="lab_show").value) == ("mean", "position")
    assert (at.slider(key="lab_dial").value, at.text_input(key="lab_prefix").value) == (2.5, "Hmm,")
    assert at.slider(key="lab_train_len").value == 4
    # The figures were built again in English (their cache key holds the language).
    titles = figure_titles(at)
    assert "RoPE: position term, mean over heads" in titles and not any("헤드" in t for t in titles)
    assert any("has rows for positions 0…3 only" in w.value for w in at.warning)
