"""The attention lab: panels, term switches, the content dial, heads, the shift and length tests."""

import itertools
import math

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.alibi import alibi_slopes
from encoders.rope import RoPE
from encoders.text import tokenize
from explain.chapters import attention_lab as lab
from explain.chapters import attention_lab_length as length_lab
from explain.chapters import attention_lab_shift as shift
from explain.chapters.common import run_tokens
from explain.figures.theme import screen_blocks, screen_factor
from tests.helpers import chart, errors, fig_array, open_page

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


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_each_term_switch_names_its_term_and_its_role_once(lang):
    """A switch's label says which term it is and whether content or position, once: Shaw's
    "position" term is "position", not "position (position)"; DeBERTa's c2p is "c2p (position)"."""
    from explain.i18n import t  # local, as below: the module's loops name a term t

    for method in lab.switchable(tuple(REGISTRY)):
        labels = [lab.term_label(x, role, lang) for x, role in lab.term_roles(method)]
        assert len(set(labels)) == len(labels), (method, labels)
        for (x, role), label in zip(lab.term_roles(method), labels, strict=True):
            kind = t(f"attention_lab.term_kind.{role}", lang)
            assert label.count(kind) == 1 and lab.term_name(x, lang) in label, (method, x, label)
    assert lab.term_label("c2p", "position", "en") == "c2p (position)"


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
    st = shift.shift_test(S, 0, ("sinusoidal", "learned", *RELATIVE), "Well, you know,", 4, False, None)
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
    st = shift.shift_test(S, 1, ("sinusoidal",), "Oh well ,", 4, True, 1)
    before = run_tokens(TOKENS, 1, "sinusoidal", 64, 4, True, 0, float64=True).logits
    after = run_tokens(TOKENS, 1, "sinusoidal", 64, 4, True, k, float64=True).logits
    np.testing.assert_allclose(st.delta[0], (softmax(after) - softmax(before))[1], atol=1e-12)


def test_shift_test_subset_is_the_rows_of_the_whole_test():
    whole = shift.shift_test(S, 2, lab.REGISTRY_NAMES, "Hmm,", 2, True, None)
    part = shift.shift_test(S, 2, ("rope-dynamic", "learned", "t5"), "Hmm,", 2, True, None)
    sub = whole.subset(("rope-dynamic", "learned", "t5"))
    assert sub.methods == part.methods and sub.labels == part.labels and sub.largest == part.largest
    np.testing.assert_array_equal(sub.max_change, part.max_change)
    np.testing.assert_array_equal(sub.delta, part.delta)


# The shift test's control space: sentence length n and prefix length k around dynamic NTK's trained
# length (32 tokens under the lab's config), every head count, both masks, every head choice.
SHIFT_CASES = {
    "one token": ("Hi", "Well, you know,"),  # n = 1: nothing can change
    "n + k = 32": (" ".join(f"w{k % 11}" for k in range(27)), "Well, you know,"),  # still RoPE's θ
    "n + k = 33": (" ".join(f"w{k % 11}" for k in range(17)), " ".join("abcdefghijklmnop")),  # just past
    "n > L": (" ".join(f"w{k % 11}" for k in range(40)), "Oh"),  # past before and after
}
DYNAMIC_L, DYNAMIC_S = 32, 4.0  # ScaledRopeConfig's defaults, which lab_config keeps for dynamic NTK


def ntk_theta(d: int, length: int) -> np.ndarray:
    """Dynamic NTK's θ_f written out (METHODS §9): α = s·max(ℓ, L)/L − (s − 1), base' = 10000·α^(d/(d−2))."""
    alpha = DYNAMIC_S * max(length, DYNAMIC_L) / DYNAMIC_L - (DYNAMIC_S - 1)
    base = 10000.0 * alpha ** (d / (d - 2))
    return np.array([base ** (-2 * f / d) for f in range(d // 2)])


def expected_reason(method: str, n: int, k: int) -> str:
    """The reason the question must give, by name here (tests may branch on names)."""
    if n == 1:
        return "one_word"
    if method in ("sinusoidal", "learned"):
        return "absolute"
    if method == "rope-dynamic":
        return "length" if max(n + k, DYNAMIC_L) != max(n, DYNAMIC_L) else "length_same"
    return "no_position" if method == "none" else "relative"


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n_heads", lab.HEAD_CHOICES)
def test_shift_verdicts_over_the_control_space(n_heads, causal):
    """Every encoding, every head choice, both masks, sentence and prefix lengths on both sides of
    dynamic NTK's trained length: the verdict is the measurement, the measurement agrees with an
    offset run (positions k … k+n−1 without the prefix's words), and the reason the question gives
    agrees with a rule written out here, with every number it states."""
    d = lab.D_MODEL // n_heads
    for name, (text, prefix) in SHIFT_CASES.items():
        tokens, pre = tokenize(text).tokens, shift.prefix_tokens(prefix)
        n, k = len(tokens), len(pre)
        deltas = shift.shift_deltas(text, 0, lab.REGISTRY_NAMES, prefix, n_heads, causal)
        # Independent: softmax of an offset run against a plain run, every head, for the encodings
        # that move (the others must not move at all).
        moving = {m for m in lab.REGISTRY_NAMES if expected_reason(m, n, k) in ("absolute", "length")}
        for m in moving:
            cfg = lab.lab_config(m)
            before = run_tokens(tokens, 0, m, 64, n_heads, causal, 0, cfg, float64=True).logits
            after = run_tokens(tokens, 0, m, 64, n_heads, causal, k, cfg, float64=True).logits
            np.testing.assert_allclose(deltas[lab.REGISTRY_NAMES.index(m)], softmax(after) - softmax(before), atol=1e-9)
        for head in (None, *range(n_heads)):
            sh = shift.shift_test_from(deltas, tokens, pre, lab.REGISTRY_NAMES, n_heads, head)
            for m, change, changed in zip(sh.methods, sh.max_change, sh.changed, strict=True):
                reason, facts = shift.shift_reason(sh, m)
                assert reason == expected_reason(m, n, k), (name, m, head)
                assert changed == (m in moving) and changed == shift.EXPECT[reason], (name, m, head, change)
                if not changed:
                    assert change < 1e-12, (name, m, head, change)
                if reason == "absolute":
                    assert facts == {"first": k, "last": k + n - 1, "last0": n - 1}
                if reason in ("length", "length_same"):
                    before, after = ntk_theta(d, n), ntk_theta(d, n + k)
                    assert facts["L"] == DYNAMIC_L and (facts["n"], facts["n_after"]) == (n, n + k)
                    assert facts["pairs"] == d // 2
                    # every pair but the fastest (θ_0 = 1 for any base) turns at a new rate
                    assert facts["pairs_changed"] == (d // 2 - 1 if reason == "length" else 0)
                    assert facts["before"] == pytest.approx(2 * math.pi / before[-1], rel=1e-12)
                    assert facts["after"] == pytest.approx(2 * math.pi / after[-1], rel=1e-12)
            q = shift.shift_question(sh, "en")
            want = sh.methods[int(np.argmax(sh.max_change))] if sh.changed.any() else shift.NOBODY
            assert q.answer == want, (name, head)
            for m in sh.methods:
                assert f"{q.facts['changes'][m]:.1e}" in q.explanation


def test_shift_question_over_every_selection():
    """Every selection the multiselect allows (2 to 4 of the registry), both languages: the answer is
    an option, the measured largest change among the chosen (or "none of them"), and the explanation
    names each chosen encoding with its own measured change and reason."""
    for text, prefix in (SHIFT_CASES["n + k = 33"], SHIFT_CASES["n + k = 32"]):
        whole = shift.shift_test(text, 0, lab.REGISTRY_NAMES, prefix, 4, False, 0)
        change = dict(zip(whole.methods, whole.max_change, strict=True))
        for size in range(2, lab.MAX_METHODS + 1):
            for chosen in itertools.combinations(lab.REGISTRY_NAMES, size):
                sub = whole.subset(chosen)
                moved = [m for m in chosen if change[m] > lab.CHANGED]
                want = max(moved, key=change.get) if moved else shift.NOBODY
                for lang in ("en", "ko"):
                    q = shift.shift_question(sub, lang)
                    assert q.options == (*chosen, shift.NOBODY) and q.answer == want
                    assert set(q.facts["changes"]) == set(chosen)
                    for m in chosen:
                        assert f"**{lab.short(m, lang)}**" in q.explanation


def test_shift_question_on_the_page_default_is_measured():
    """The page's default sentence and prefix (19 tokens in all): dynamic NTK stays RoPE's, so only
    the absolute encodings move; with a 28-token sentence the same prefix moves dynamic NTK too."""
    q = shift.shift_section(S, 0, ("rope-dynamic", "rope", "alibi"), "Well, you know,", 4, False, 0, "en")
    assert q is not None and q.question.answer == shift.NOBODY
    assert q.question.facts["reasons"]["rope-dynamic"] == "length_same"
    long = " ".join(f"w{k % 11}" for k in range(28))
    q = shift.shift_section(long, 0, ("rope-dynamic", "rope", "alibi"), "Well, you know,", 4, False, 0, "en")
    assert q is not None and q.question.answer == "rope-dynamic"
    assert shift.shift_section(S, 0, ("rope", "alibi"), "  ", 4, False, 0, "en") is None  # no prefix


@pytest.mark.parametrize("n_heads", lab.HEAD_CHOICES)
def test_which_frequencies_follow_the_length(n_heads):
    """Only dynamic NTK's θ follows the text's length: RoPE's own up to its trained length (32), a new
    value at every length past it; every other rotary encoding keeps one θ; the rest do not rotate."""
    d = lab.D_MODEL // n_heads
    for m in lab.REGISTRY_NAMES:
        up_to = shift.same_frequencies_up_to(m, n_heads)
        if m == "rope-dynamic":
            assert up_to == DYNAMIC_L and shift.follows_length(m, n_heads)
            for length in (1, 31, 32, 33, 100, 512):
                np.testing.assert_allclose(shift.frequencies_at(m, n_heads, length), ntk_theta(d, length), rtol=1e-12)
        elif issubclass(REGISTRY[m], RoPE):
            assert up_to == shift.LONGEST and not shift.follows_length(m, n_heads)
        else:
            assert up_to is None and shift.frequencies_at(m, n_heads, 10) is None


# -- dynamic NTK and a KV cache -----------------------------------------------------------------------


def pair_logit(q: np.ndarray, k: np.ndarray, angle_q: np.ndarray, angle_k: np.ndarray) -> float:
    """(R(angle_q) q)·(R(angle_k) k)/√d for interleaved pairs, written out pair by pair."""
    total = 0.0
    for f in range(q.size // 2):
        qa, qb, ka, kb = q[2 * f], q[2 * f + 1], k[2 * f], k[2 * f + 1]
        phi = angle_k[f] - angle_q[f]
        total += math.cos(phi) * (qa * ka + qb * kb) + math.sin(phi) * (qb * ka - qa * kb)
    return total / math.sqrt(q.size)


@pytest.mark.parametrize("method", ["rope", "rope-dynamic", "rope-yarn", "xpos"])
def test_kv_cache_batches_only_lengths_that_share_theta(method):
    """kv_cache's one call per run of lengths is exact only while θ(ℓ) and the attention factor stay
    put and nothing reads a centre: runs are cut exactly there, and xPos gets a run per length."""
    enc = shift._rotary(method, 4)
    assert enc is not None
    lengths = np.arange(13, 129)
    runs = shift._same_theta_runs(enc, lengths)
    assert [v for run in runs for v in run] == lengths.tolist()
    for run in runs:
        for length in run[1:]:
            assert torch.equal(enc.frequencies(length), enc.frequencies(run[0]))
            assert enc.attention_factor(length) == enc.attention_factor(run[0])
    for before, after in itertools.pairwise(runs):  # a cut where θ moves (or a centre is read)
        moved = not torch.equal(enc.frequencies(before[-1]), enc.frequencies(after[0]))
        assert moved or enc.pair_decay() is not None
    if method == "xpos":
        assert all(len(run) == 1 for run in runs)
    elif method == "rope-dynamic":
        assert runs[0] == list(range(13, DYNAMIC_L + 1)) and all(len(run) == 1 for run in runs[1:])
    else:
        assert len(runs) == 1


@pytest.mark.parametrize("n", [1, 2, 14, 32, 33, 100, 256])
def test_kv_cache_against_rotations_written_out(n):
    """The pair's three logits at every length drawn, every head count, against explicit 2×2
    rotations: plain RoPE by (ℓ − n)·θ, no cache by (ℓ − n)·θ(ℓ), the cache by (ℓ − 1)·θ(ℓ) against
    (n − 1)·θ(n); and every fact the caption states."""
    from encoders.attention import toy_layer
    from encoders.text import token_embeddings, token_key

    text = " ".join(f"w{k % 13}" for k in range(n))
    for n_heads in lab.HEAD_CHOICES:
        d = lab.D_MODEL // n_heads
        heads = [shift.kv_cache(text, 3, n_heads, h) for h in range(n_heads)]
        mean = shift.kv_cache(text, 3, n_heads, None)
        kv = heads[0]
        assert kv.n == n and kv.same_up_to == DYNAMIC_L
        assert kv.lengths[0] == n + 1 and kv.lengths[-1] == min(512, max(4 * DYNAMIC_L, 2 * n, n + 1))
        layer = toy_layer(build("rope-dynamic", 64, n_heads, 3), 3).double()
        x = token_embeddings((token_key(kv.tokens[-1]),), 64, 3).double()[0].detach()
        q_all, k_all = (x @ layer.w_q).detach().numpy(), (x @ layer.w_k).detach().numpy()
        plain_theta = ntk_theta(d, 1)
        for h, view in enumerate(heads):
            q, k = q_all[h * d : (h + 1) * d], k_all[h * d : (h + 1) * d]
            for idx in range(0, kv.lengths.size, 7):  # every 7th length, and the last below
                for i in (idx, kv.lengths.size - 1):
                    ell = int(kv.lengths[i])
                    now = ntk_theta(d, ell)
                    assert view.plain[i] == pytest.approx(
                        pair_logit(q, k, (ell - 1) * plain_theta, (n - 1) * plain_theta), abs=1e-9
                    )
                    assert view.recomputed[i] == pytest.approx(
                        pair_logit(q, k, (ell - 1) * now, (n - 1) * now), abs=1e-9
                    )
                    cached = pair_logit(q, k, (ell - 1) * now, (n - 1) * ntk_theta(d, n))
                    assert view.cached[i] == pytest.approx(cached, abs=1e-9)
        np.testing.assert_allclose(mean.cached, np.mean([v.cached for v in heads], axis=0), atol=1e-12)
        for view in (*heads, mean):
            f = view.facts
            if n == 1:
                assert view.situation == "one" and view.first_apart is None and view.gap.max() < 1e-12
                continue
            assert view.situation == ("within" if n <= DYNAMIC_L else "past")
            within = view.lengths <= DYNAMIC_L
            np.testing.assert_allclose(view.cached[within], view.recomputed[within], atol=1e-12)
            np.testing.assert_allclose(view.plain[within], view.recomputed[within], atol=1e-12)
            # "From ℓ = first on, the cache is wrong": every length from there differs.
            assert f["first"] == max(n, DYNAMIC_L) + 1 and (view.gap[view.lengths >= f["first"]] > lab.CHANGED).all()
            assert f["last"] == view.lengths[-1] and f["gap"] == view.gap.max()
            assert (f["recomputed"], f["cached"], f["plain"]) == (view.recomputed[-1], view.cached[-1], view.plain[-1])
            for lang in ("en", "ko"):
                from explain.i18n import t

                caption = t(f"attention_lab.kv.caption_{view.situation}", lang, **f)
                assert f"{f['cached']:.3f}" in caption and f"{f['first']}" in caption and f"{f['L']}" in caption


# -- length test ----------------------------------------------------------------------------------


def test_length_test():
    lt = length_lab.length_test(S, 0, ("learned", "sinusoidal", "alibi", "rope-pi"), 16, 100, 4, True, None)
    assert len(lt.tokens) == 100 and lt.tokens[:14] == TOKENS and lt.tokens[14:28] == TOKENS and len(TOKENS) == 14
    learned = lt.runs[0]
    assert learned.error and learned.first_missing == 16 and np.isnan(learned.entropy).all()
    for r in lt.runs[1:]:
        assert not r.error and r.entropy.shape == (100,) and np.isfinite(r.entropy).all()
        assert r.entropy[0] == pytest.approx(0.0, abs=1e-6)  # causal: the first word sees only itself
        assert (r.entropy <= np.log(np.arange(1, 101)) + 1e-5).all()  # never above uniform
    fits = length_lab.length_test(S, 0, ("learned",), 100, 100, 4, True, None)
    assert not fits.runs[0].error
    assert length_lab.length_config("rope-pi", 16, 100).scale == pytest.approx(100 / 16)
    assert length_lab.length_config("learned", 16, 100).max_len == 16


def test_length_test_big_map_and_runs():
    lt = length_lab.length_test(S, 0, ("learned", "alibi", "rope"), 8, 64, 2, False, 1)
    assert [r.method for r in lt.failed] == ["learned"] and [r.method for r in lt.ok] == ["alibi", "rope"]
    np.testing.assert_array_equal(lt.queries, np.arange(64))
    for pick, want in (("rope", "rope"), ("learned", "alibi")):  # a run that failed falls back to the first
        run, top = lt.big_map(pick)
        assert run.method == want
        assert top == pytest.approx(min(1.0, max(0.01, float(np.quantile(run.weights, 0.995)))))
    with pytest.raises(ValueError):
        length_lab.length_test(S, 0, ("learned",), 8, 64).big_map("learned")


def test_repeated_tokens():
    assert length_lab.repeated_tokens(("a", "b", "c"), 7) == ("a", "b", "c", "a", "b", "c", "a")
    assert length_lab.repeated_tokens((), 5) == ()


# -- the page -------------------------------------------------------------------------------------


def _z(at, key):
    return fig_array(chart(at, key)["data"][0]["z"]).astype(np.float64)


def _title(at, key):
    return chart(at, key)["layout"]["title"]["text"]


def test_page_default_and_controls():
    at = open_page(PAGE, sentence=S)
    assert not errors(at)
    panels = [f"lab_panel_{m}" for m in lab.DEFAULT_METHODS]
    assert all(_title(at, key).endswith("attention weights, head 1") for key in panels)
    sin = lab.panel(S, 0, "sinusoidal", 4, False, 1.0, ())
    np.testing.assert_allclose(_z(at, "lab_panel_sinusoidal"), sin.weights[0], atol=1e-6)
    at.selectbox(key="lab_head").set_value("mean").run()
    assert all(_title(at, key).endswith("attention weights, mean over heads") for key in panels)
    np.testing.assert_allclose(_z(at, "lab_panel_sinusoidal"), sin.weights.mean(0), atol=1e-6)

    # Several encodings incl. the multi-term ones; every term switched off in turn.
    at.multiselect(key="lab_methods").set_value(["transformer-xl", "deberta", "cope"]).run()
    assert not errors(at)
    for m in ("transformer-xl", "deberta", "cope"):
        for t in REGISTRY[m].term_names:
            at.checkbox(key=f"lab_term_{m}_{t}").uncheck().run()
            assert not errors(at)
            want = lab.panel(S, 0, m, 4, False, 1.0, (t,)).weights.mean(0)
            np.testing.assert_allclose(_z(at, f"lab_panel_{m}"), want, atol=1e-5)
            at.checkbox(key=f"lab_term_{m}_{t}").check().run()

    # One head, the position term, the dial at both ends, causal.
    at.selectbox(key="lab_head").set_value(1).run()
    np.testing.assert_allclose(
        _z(at, "lab_panel_deberta"), lab.panel(S, 0, "deberta", 4, False, 1.0, ()).weights[1], atol=1e-5
    )
    at.radio(key="lab_show").set_value("position").run()
    assert not errors(at)
    pos = lab.panel(S, 0, "cope", 4, False, 1.0, ()).position[1]
    np.testing.assert_allclose(_z(at, "lab_panel_cope"), pos, atol=1e-4)
    for v in (0.0, 3.0):
        at.slider(key="lab_dial").set_value(v).run()
        assert not errors(at)
    at.toggle(key="lab_causal").set_value(True).run()
    at.radio(key="lab_show").set_value("content").run()
    z = _z(at, "lab_panel_transformer-xl")
    assert np.isnan(z[0, 1:]).all()  # masked cells blank
    at.selectbox(key="lab_heads").set_value(8).run()
    assert not errors(at)


def test_page_panels_share_one_colour_range():
    ps = lab.panels_section(S, 0, ("rope", "alibi", "none"), 4, False, 1.0, (), None, "weights")
    top = max(float(np.nanmax(v.z)) for v in ps.views)
    assert ps.zmax == min(1.0, max(0.05, math.ceil(top * 20) / 20)) and ps.zmax >= top
    pos = lab.panels_section(S, 0, ("rope", "alibi", "none"), 4, False, 1.0, (), 2, "position")
    assert pos.views[2].z is None  # NoPE has no position part
    assert pos.zmax == max(float(np.nanmax(np.abs(v.z))) for v in pos.views[:2])
    for v, m in zip(ps.views, ("rope", "alibi", "none"), strict=True):
        w = lab.panel(S, 0, m, 4, False, 1.0, ()).weights.mean(0)
        assert (v.top_key, v.top_weight) == (int(np.argmax(w[-1])), pytest.approx(float(w[-1].max())))


def test_page_shift_kv_and_length_tests():
    at = open_page(PAGE, sentence=S)
    at.multiselect(key="lab_methods").set_value(["learned", "sinusoidal", "rope", "alibi"]).run()
    at.text_input(key="lab_prefix").input("Hmm, well").run()
    shown = fig_array(chart(at, "lab_shift")["data"][0]["customdata"])
    assert shown[0] > 1e-3 and shown[1] > 1e-3 and shown[2] < 1e-12 and shown[3] < 1e-12
    # The KV-cache chart draws the pair the explain function computes, with the trained length marked.
    kv = shift.kv_cache(S, 0, 4, 0)
    fig = chart(at, "lab_kv_cache")
    np.testing.assert_allclose(fig_array(fig["data"][1]["y"]), kv.cached, atol=1e-12)
    assert fig["layout"]["shapes"][0]["x0"] == 32
    assert any("From ℓ = 33 on, the cache is wrong" in m.value for m in at.markdown)
    # Length: the learned table runs out; the others continue (extremes of both sliders).
    at.slider(key="lab_train_len").set_value(4).run()
    at.slider(key="lab_length").set_value(512).run()
    assert not at.exception
    assert any("has rows for positions 0…3 only" in w.value for w in at.warning)
    dist = chart(at, "lab_len_distance")
    # one line per encoding, each with its own marker symbol (the dashed line is uniform attention)
    assert [d["name"] for d in dist["data"] if d.get("mode", "").startswith("lines")][:3] == [
        "Sinusoidal",
        "RoPE",
        "ALiBi",
    ]
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
    z = _z(at, "lab_panel_rope")
    w = lab.panel(sentence, 0, "rope", 4, False, 1.0, ()).weights[0]  # head 0, as the page shows
    assert w.shape == (n, n)
    np.testing.assert_allclose(w.sum(-1), 1.0, atol=1e-5)
    # A half-page panel draws at most PANEL_CELLS a side: past that, each f × f block's largest weight.
    f = screen_factor(n, lab.PANEL_CELLS) if n > 64 else 1
    assert (f > 1) == (n == 256)
    np.testing.assert_allclose(z, screen_blocks(w, f, f, "max"), atol=1e-6)


def test_page_predict_then_reveal_uses_the_shift_test():
    at = open_page(PAGE, sentence=S)
    at.multiselect(key="lab_methods").set_value(["rope", "learned", "alibi"]).run()
    sh = shift.shift_test(S, 0, ("rope", "learned", "alibi"), "Well, you know,", 4, False, 0)
    assert sh.methods[int(np.argmax(sh.max_change))] == "learned"
    at.radio(key="lab_shift_q__choice").set_value("RoPE").run()
    at.button(key="lab_shift_q__reveal").click().run()
    assert any("the answer is **Learned absolute**" in w.value for w in at.warning)
    assert any("**Learned absolute** changed most" in m.value for m in at.markdown)
    # All relative: the answer is "none of them".
    at.multiselect(key="lab_methods").set_value(["rope", "alibi"]).run()
    at.button(key="lab_shift_q__again").click().run()
    at.radio(key="lab_shift_q__choice").set_value("none of them").run()
    at.button(key="lab_shift_q__reveal").click().run()
    assert any(s.value.startswith("Right: **none of them**") for s in at.success)
    # Dynamic NTK on a sentence long enough: the prefix moves it, and the question says so.
    at.button(key="lab_shift_q__again").click().run()
    at.session_state["sentence"] = " ".join(f"w{k % 11}" for k in range(28))
    at.multiselect(key="lab_methods").set_value(["rope", "rope-dynamic", "alibi"]).run()
    at.radio(key="lab_shift_q__choice").set_value("RoPE + dynamic NTK").run()
    at.button(key="lab_shift_q__reveal").click().run()
    assert not errors(at)
    assert any(s.value.startswith("Right: **RoPE + dynamic NTK**") for s in at.success)
    assert any("its frequencies follow the length of the whole text" in m.value for m in at.markdown)


def test_page_link_restores_the_encodings_by_their_ids():
    from streamlit.testing.v1 import AppTest

    from tests.helpers import APP, TIMEOUT

    for lang in ("en", "ko"):
        at = AppTest.from_file(APP, default_timeout=TIMEOUT)
        at.query_params.update({"lab_methods": "rope-dynamic,learned", "lab_show": "content", "lang": lang})
        at.run()
        at.switch_page(PAGE).run()
        assert not errors(at)
        assert at.multiselect(key="lab_methods").value == ["rope-dynamic", "learned"]
        assert at.radio(key="lab_show").value == "content"
    bad = AppTest.from_file(APP, default_timeout=TIMEOUT)
    bad.query_params.update({"lab_methods": "rope,rope,gpt", "lab_show": "<b>"})
    bad.run()
    bad.switch_page(PAGE).run()
    assert not errors(bad)
    assert bad.multiselect(key="lab_methods").value == list(lab.DEFAULT_METHODS)
    assert bad.radio(key="lab_show").value == "weights"
    assert lab.parse_methods("t5,rope") == ["t5", "rope"]
    for raw in ("", "t5", "t5,t5", "t5,gpt", "a,b,c,d,e", "t5,rope,alibi,cope,none"):
        if raw == "t5":
            assert lab.parse_methods(raw) == ["t5"]  # one is a valid link: the page asks for a second
            continue
        with pytest.raises(ValueError):
            lab.parse_methods(raw)


# -- languages ------------------------------------------------------------------------------------


def test_page_in_korean_and_switching_language_keeps_every_control():
    from tests.i18n_scan import open_korean

    at = open_korean(PAGE)
    assert not errors(at)
    assert at.multiselect(key="lab_methods").options[0] == "위치 인코딩 없음 (NoPE)"
    assert all(_title(at, f"lab_panel_{m}").endswith("어텐션 가중치, 헤드 1") for m in lab.DEFAULT_METHODS)
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
    assert _title(at, "lab_panel_rope") == "RoPE: position term, mean over heads"
    assert not any("헤드" in _title(at, f"lab_panel_{m}") for m in ("learned", "rope"))
    assert any("has rows for positions 0…3 only" in w.value for w in at.warning)
