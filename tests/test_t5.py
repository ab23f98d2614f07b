"""T5 relative position bias: encoders/t5.py, its chapter and page."""

from __future__ import annotations

import functools
import math

import numpy as np
import pytest
import torch

from encoders import REGISTRY, build
from encoders.attention import toy_layer
from encoders.base import Difference
from encoders.t5 import T5Bias, T5Config, check_bucket_config, relative_position_bucket
from explain.chapters import t5 as ch
from tests.helpers import chart, errors, fig_array, open_page

PAGE = "pages/bias/t5.py"
WIDE = torch.arange(-5000, 5001)
# (num_buckets, max_distance) for the oracle sweep: T5's own, tiny, odd, huge, and D just above E
SETTINGS = [
    (32, 128),
    (4, 2),
    (4, 3),
    (6, 5),
    (8, 20),
    (10, 7),
    (16, 17),
    (32, 33),
    (64, 40),
    (64, 1000),
    (128, 65),
    (128, 129),
    (128, 4096),
    (30, 100),
    (18, 128),
    (108, 128),
]


@pytest.fixture(autouse=True)
def _no_grad():
    with torch.no_grad():
        yield


def valid(bidirectional, n, d) -> bool:
    try:
        check_bucket_config(bidirectional, n, d)
        return True
    except ValueError:
        return False


def python_bucket(r: int, bidirectional: bool, num_buckets: int, max_distance: int) -> int:
    """The rule of METHODS.md §5 in plain Python, float64 math.log, int() truncation."""
    n, out = num_buckets, 0
    if bidirectional:
        n //= 2
        out += n if r > 0 else 0
        a = abs(r)
    else:
        a = max(-r, 0)
    exact = n // 2
    if a < exact:
        return out + a
    return out + min(exact + int(math.log(a / exact) / math.log(max_distance / exact) * (n - exact)), n - 1)


# -- the HF oracle ----------------------------------------------------------------------------


def test_buckets_equal_hf_transformers_over_a_wide_range():
    from transformers.models.t5.modeling_t5 import T5Attention

    checked = 0
    for bidirectional in (True, False):
        for n, d in SETTINGS:
            if not valid(bidirectional, n, d):
                continue
            ours = relative_position_bucket(WIDE, bidirectional, n, d)
            hf = T5Attention._relative_position_bucket(WIDE, bidirectional=bidirectional, num_buckets=n, max_distance=d)
            assert torch.equal(ours, hf), (bidirectional, n, d)
            checked += 1
    assert checked >= 24  # the sweep really ran in both modes
    # and on a 2-D (i, j) matrix, as compute_bias calls it
    rel = torch.arange(40)[None, :] - torch.arange(30)[:, None]  # (i, j) key − query
    assert torch.equal(relative_position_bucket(rel), T5Attention._relative_position_bucket(rel))


# -- independent computation ------------------------------------------------------------------


@pytest.mark.parametrize("bidirectional", [True, False])
def test_buckets_equal_a_pure_python_float64_port(bidirectional):
    r = list(range(-700, 701))
    for n, d in [(32, 128), (8, 20), (64, 1000), (128, 129), (30, 100)]:
        if not valid(bidirectional, n, d):
            continue
        ours = relative_position_bucket(torch.tensor(r), bidirectional, n, d).tolist()
        assert ours == [python_bucket(x, bidirectional, n, d) for x in r], (n, d)


def test_float32_arithmetic_is_kept_where_float64_would_round_the_other_way():
    """At an exact boundary (N = 18, D = 128: ln 2 / ln 32 · 5 = 1 exactly) HF's float32 log lands on
    1.0 and truncates to 1, while float64 lands on 0.9999… and truncates to 0. We follow HF."""
    from transformers.models.t5.modeling_t5 import T5Attention

    for r, bidirectional, n, d, hf_bucket in [
        (-8, True, 18, 128, 5),
        (-16, True, 18, 128, 6),
        (-72, False, 108, 128, 72),
    ]:
        ours = int(relative_position_bucket(torch.tensor([r]), bidirectional, n, d))
        assert (
            ours
            == hf_bucket
            == int(
                T5Attention._relative_position_bucket(
                    torch.tensor([r]), bidirectional=bidirectional, num_buckets=n, max_distance=d
                )
            )
        )
        assert python_bucket(r, bidirectional, n, d) == hf_bucket - 1  # the float64 port differs here


# -- properties -------------------------------------------------------------------------------


@pytest.mark.parametrize("n,d", [(32, 128), (8, 20), (64, 40), (128, 4096), (6, 5)])
def test_bidirectional_buckets_are_bounded_monotone_and_split_by_side(n, d):
    b = relative_position_bucket(WIDE, True, n, d)
    left, right = b[WIDE <= 0], b[WIDE > 0]
    assert int(b.min()) == 0 and int(b.max()) <= n - 1
    assert int(left.max()) < n // 2 <= int(right.min())  # each side keeps its own half
    assert torch.all(left.flip(0)[1:] >= left.flip(0)[:-1])  # farther left: never a smaller bucket
    assert torch.all(right[1:] >= right[:-1])
    assert int(right.min()) == n // 2 + 1  # bucket N/2 is skipped
    # exact region: one bucket per distance
    exact = (n // 2) // 2
    assert relative_position_bucket(torch.arange(-exact + 1, 1), True, n, d).tolist() == list(range(exact - 1, -1, -1))
    # saturation: everything at or past max_distance shares the last bucket of its side
    assert set(relative_position_bucket(torch.tensor([-d, -d - 1, -10 * d]), True, n, d).tolist()) == {n // 2 - 1}


@pytest.mark.parametrize("n,d", [(32, 128), (8, 20), (128, 4096)])
def test_causal_buckets_fold_the_future_into_zero(n, d):
    b = relative_position_bucket(WIDE, False, n, d)
    assert torch.all(b[WIDE >= 0] == 0)
    past = b[WIDE <= 0].flip(0)  # r = 0, −1, −2, …
    assert torch.all(past[1:] >= past[:-1]) and int(past.max()) == n - 1
    assert past[: n // 2].tolist() == list(range(n // 2))  # exact region: E = N/2 in causal mode


def test_invalid_settings_raise():
    for bidirectional, n, d in [(True, 2, 10), (False, 1, 10), (True, 32, 8), (False, 32, 16), (True, 32, 3)]:
        with pytest.raises(ValueError):
            relative_position_bucket(torch.arange(3), bidirectional, n, d)
    with pytest.raises(ValueError):
        T5Bias(16, 2, T5Config(num_buckets=32, max_distance=8))


# -- pinned numbers ---------------------------------------------------------------------------


def test_pinned_buckets():
    assert relative_position_bucket(torch.arange(-3, 4)).tolist() == [3, 2, 1, 0, 17, 18, 19]
    r = torch.tensor([-1000, -128, -127, -64, -32, -16, -8, -7, 0, 1, 8, 16, 64, 127, 128])
    assert relative_position_bucket(r).tolist() == [15, 15, 15, 14, 12, 10, 8, 7, 0, 17, 24, 26, 30, 31, 31]
    assert relative_position_bucket(r, bidirectional=False).tolist() == [
        31,
        31,
        31,
        26,
        21,
        16,
        8,
        7,
        0,
        0,
        0,
        0,
        0,
        0,
        0,
    ]


# -- unused bucket ids ------------------------------------------------------------------------


def brute_unused(n, d, bidirectional):
    seen = {python_bucket(r, bidirectional, n, d) for r in range(-3 * d - 5, 3 * d + 6)}
    return tuple(sorted(set(range(n)) - seen))


@pytest.mark.parametrize(
    "n,d,causal", [(32, 128, False), (32, 128, True), (128, 40, False), (64, 40, False), (128, 80, True), (8, 3, False)]
)
def test_unused_ids_match_brute_force(n, d, causal):
    m = ch.bucket_map(n, d, causal)
    assert m.unused == brute_unused(n, d, not causal)
    if not causal:
        assert n // 2 in m.unused and m.unused_reasons[n // 2] == ch.RIGHT_OFFSET
    assert all(why == ch.LOG_SKIP for u, why in m.unused_reasons.items() if causal or u != n // 2)
    assert sum(c for *_, c in m.ranges) == 2 * m.scan_limit + 1  # every scanned distance is in one bucket


def test_t5_defaults_leave_only_bucket_16_unused_and_log_gaps_appear_when_D_is_small():
    assert ch.bucket_map(32, 128, False).unused == (16,)
    assert ch.bucket_map(32, 128, True).unused == ()
    gaps = ch.bucket_map(128, 40, False).unused
    assert 64 in gaps and {33, 34, 35} <= set(gaps)  # the log step jumps over 33–35 just past E = 32


# -- the encoder ------------------------------------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
def test_logit_terms_match_explicit_loops(causal):
    n_heads, n, d = 3, 9, 4
    enc = build("t5", 12, n_heads, 0, T5Config(num_buckets=8, max_distance=6)).double()
    q = torch.randn((1, n_heads, n, d), generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    k = torch.randn((1, n_heads, n, d), generator=torch.Generator().manual_seed(2), dtype=torch.float64)
    pos = torch.arange(n) + 5
    terms = enc.logit_terms(q, k, pos, pos, causal).terms
    table = enc.table.detach().numpy()
    content = np.zeros((n_heads, n, n))
    position = np.zeros((n_heads, n, n))
    for h in range(n_heads):
        for i in range(n):
            for j in range(n):
                content[h, i, j] = sum(float(q[0, h, i, c] * k[0, h, j, c]) for c in range(d))  # no 1/√d
                position[h, i, j] = table[python_bucket(j - i, not causal, 8, 6), h]
    np.testing.assert_allclose(terms["content"][0].numpy(), content, rtol=0, atol=1e-12)
    np.testing.assert_allclose(terms["position"][0].numpy(), position, rtol=0, atol=0)
    # unscaled means really unscaled: the scaled version would differ by a factor 2 here
    assert np.abs(content).max() > 0.5
    if causal:
        assert np.all(position[:, np.triu_indices(n, 1)[0], np.triu_indices(n, 1)[1]] == table[0][:, None])


def test_relative_invariance_position_terms_unchanged_by_an_offset():
    layer = toy_layer(build("t5", 16, 2, 3), 3).double()
    x = torch.randn((1, 12, 16), generator=torch.Generator().manual_seed(4), dtype=torch.float64)
    for causal in (False, True):
        base = layer(x, positions=torch.arange(12), causal=causal)
        for offset in (1, 300, 100_000):
            moved = layer(x, positions=torch.arange(12) + offset, causal=causal)
            assert torch.equal(moved.terms["position"], base.terms["position"])
            assert torch.equal(moved.output, base.output)
        gapped = layer(x, positions=torch.tensor([0, 1, 2, 3, 4, 5, 40, 41, 42, 43, 44, 45]), causal=causal)
        assert not torch.equal(gapped.terms["position"], base.terms["position"])


def test_registry_table_shape_and_determinism():
    assert REGISTRY["t5"] is T5Bias
    enc = build("t5", 64, 4, 7)
    assert enc.table.shape == (32, 4)
    assert torch.equal(enc.table, build("t5", 64, 4, 7).table)
    assert not torch.equal(enc.table, build("t5", 64, 4, 8).table)
    assert enc.kind == "bias" and enc.relative_sign == Difference("key", "query")


# -- the chapter's numbers --------------------------------------------------------------------


def test_chapter_view():
    toks = tuple(["the", "cat", "sat", "on", "the", "mat"])
    v = ch.t5_view(toks, 2, 32, 128, causal=True)
    rel = np.arange(6)[None, :] - np.arange(6)[:, None]
    assert np.array_equal(v.buckets, relative_position_bucket(torch.from_numpy(rel), False).numpy())
    np.testing.assert_allclose(v.position, np.transpose(v.table[v.buckets], (2, 0, 1)))
    assert np.isnan(v.logits[0, 0, 1]) and not np.isnan(v.logits[0, 1, 0])  # masked future
    assert v.used_in_sentence == (0, 1, 2, 3, 4, 5)
    assert v.shift.position_change == 0.0 and v.shift.output_change == 0.0 and v.shift.shift == 1000
    # the bidirectional sentence uses both halves
    assert set(ch.t5_view(toks, 2, 32, 128, causal=False).used_in_sentence) == {0, 1, 2, 3, 4, 5, 17, 18, 19, 20, 21}


# Every num_buckets of the slider; max_distance densely (every value up to 200, then every 7th) up to
# the slider's 1024, from the smallest valid value (the page falls back to it below).
QUESTION_N = range(4, 129, 2)
QUESTION_D = sorted({*range(2, 201), *range(201, 1025, 7), 1024})


def hf_bucket(r: int, causal: bool, n: int, d: int) -> int:
    from transformers.models.t5.modeling_t5 import T5Attention

    out = T5Attention._relative_position_bucket(
        torch.tensor([r]), bidirectional=not causal, num_buckets=n, max_distance=d
    )
    return int(out[0])


@functools.cache  # the same for both languages
def hf_buckets(rs: tuple[int, ...], causal: bool, n: int, d: int) -> tuple[int, ...]:
    """hf_bucket of each relative position in one call (the function is elementwise): the control
    sweep below asked for four buckets a max_distance, one call each, 30 s of the suite."""
    from transformers.models.t5.modeling_t5 import T5Attention

    out = T5Attention._relative_position_bucket(
        torch.tensor(rs), bidirectional=not causal, num_buckets=n, max_distance=d
    )
    return tuple(int(b) for b in out)


@pytest.mark.parametrize("lang", ["en", "ko"])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n", QUESTION_N)
def test_bucket_question_over_the_control_space(n, causal, lang):
    """The bucket question (which pair of neighbouring keys shares a bucket: 1 and 2 tokens away, or
    PROBE and PROBE + 1?) at every num_buckets, both rules and a dense sweep of max_distance, in both
    languages: the answer recomputed from HF transformers' T5 bucket function, every bucket the
    explanation names, and the rule it gives for the far pair's region."""
    per_side = n if causal else n // 2
    exact = per_side // 2
    sign = -1 if causal else 1
    for d in QUESTION_D:
        if d <= exact:
            continue  # the page never asks with an invalid max_distance: it falls back to exact + 1
        q = ch.bucket_question(n, d, causal, lang)
        f = q.facts
        near_far = hf_buckets(tuple(sign * a for a in (1, 2, ch.PROBE, ch.PROBE + 1)), causal, n, d)
        near, far = list(near_far[:2]), list(near_far[2:])
        truth = {(False, True): "far", (True, False): "near", (True, True): "both", (False, False): "neither"}[
            (near[0] == near[1], far[0] == far[1])
        ]
        assert q.answer == truth and q.options == ("near", "far", "both", "neither")
        assert [f["b_near"], f["b_near2"], f["b_far"], f["b_far2"]] == near + far
        assert (f["exact"], f["per_side"], f["d"], f["n"]) == (exact, per_side, d, n)
        for b in {*near, *far}:
            assert f"**{b}**" in q.explanation, (b, q.explanation)
        for a in (1, 2, ch.PROBE, ch.PROBE + 1):
            assert f"{sign * a:+d}" in q.explanation
        if exact > ch.PROBE + 1:
            assert f["region"] == "exact" and far[0] != far[1]  # buckets of their own
        elif d > ch.PROBE:
            assert f["region"] == "log"
        else:
            assert f["region"] == "beyond" and far[0] == far[1] == (0 if causal else per_side) + per_side - 1
        assert str(d) in q.prompt and str(n) in q.prompt  # the learner's own N and D


def test_bucket_question_answers_vary():
    """Over the control space the answer is not always the same word: far only (T5's defaults),
    both (few buckets, a small D), neither (many exact buckets). "Only the near pair" is the
    distractor of a reversed staircase: buckets never widen toward the query, so it is never right."""
    answers = {
        ch.bucket_question(n, d, causal, "en").answer
        for n, d, causal in [(32, 128, False), (4, 2, False), (128, 1024, True), (128, 65, False), (8, 3, False)]
    }
    assert answers == {"far", "both", "neither"}, answers
    assert all(
        ch.bucket_question(n, d, causal, "en").answer != "near"
        for n in QUESTION_N
        for causal in (False, True)
        for d in QUESTION_D[::5]
        if d > (n if causal else n // 2) // 2
    )


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("n,d", [(4, 2), (4, 128), (32, 2), (32, 10), (128, 1024), (128, 65)])
def test_the_question_distance_is_always_on_the_staircase(n, d, causal):
    """ "Find r on the staircase below": the staircase spans ±PROBE even for a small max_distance."""
    d = max(d, ch.smallest_valid_max_distance(n, causal))
    bm = ch.bucket_map(n, d, causal)
    r = -ch.PROBE if causal else ch.PROBE
    assert r in bm.distances


def test_the_reference_and_the_toy_lab_share_one_bias_table():
    """What the chapter says about layers: in HF's T5 only the first block has a table, and its bias
    is reused by every layer; the toy-task lab's two-layer T5 does the same (one tied table)."""
    from transformers import T5Config as HFConfig
    from transformers import T5EncoderModel

    from lab.model import ModelConfig, TinyTransformer

    hf = T5EncoderModel(HFConfig(vocab_size=11, d_model=16, d_kv=4, d_ff=16, num_layers=3, num_heads=4))
    flags = [block.layer[0].SelfAttention.has_relative_attention_bias for block in hf.encoder.block]
    assert flags == [True, False, False]
    tables = [n for n, _ in hf.named_parameters() if "relative_attention_bias" in n]
    assert len(tables) == 1 and tables[0].startswith("encoder.block.0.")
    lab = TinyTransformer(ModelConfig("t5", vocab_size=8, max_len=16), seed=0)
    ours = [block.attn.encoder.table for block in lab.blocks]
    assert len(ours) == lab.cfg.n_layers == 2 and ours[0] is ours[1]
    assert [n for n, _ in lab.named_parameters() if n.endswith(".table")] == ["blocks.0.attn.encoder.table"]


# -- the page ---------------------------------------------------------------------------------


def test_page_default_and_slider_extremes_both_modes():
    at = open_page(PAGE, sentence="the cat sat on the mat")
    assert not errors(at)
    for causal in (False, True):
        at.toggle(key="t5_causal").set_value(causal).run()
        for n_buckets, max_d in [(4, 2), (128, 1024), (128, 2), (4, 1024)]:
            at.slider(key="t5_buckets").set_value(n_buckets)
            at.slider(key="t5_max_distance").set_value(max_d)
            at.run()
            assert not errors(at), (causal, n_buckets, max_d)
            lowest = ch.smallest_valid_max_distance(n_buckets, causal)
            assert any("smallest valid value" in w.value for w in at.warning) == (max_d < lowest)
            used_d = max(max_d, lowest)
            spec = chart(at, "t5_staircase")
            x = np.concatenate([fig_array(t["x"]) for t in spec["data"][1:]])
            y = np.concatenate([fig_array(t["y"]) for t in spec["data"][1:]])
            expected = relative_position_bucket(torch.from_numpy(x.astype(np.int64)), not causal, n_buckets, used_d)
            assert np.array_equal(y, expected.numpy())
            assert fig_array(chart(at, "t5_table")["data"][0]["z"]).shape == (n_buckets, 4)
            m = fig_array(chart(at, "t5_bucket_matrix")["data"][0]["z"])
            rel = np.arange(6)[None, :] - np.arange(6)[:, None]
            assert np.array_equal(
                m, relative_position_bucket(torch.from_numpy(rel), not causal, n_buckets, used_d).numpy()
            )
    at.selectbox(key="t5_head").set_value(2).run()
    assert not errors(at)
    assert chart(at, "t5_terms")["layout"]["title"]["text"].startswith("The two terms of the logit, head 2")


def test_page_lists_bucket_16_as_never_used():
    at = open_page(PAGE, sentence="a b c")
    md = " ".join(m.value for m in at.markdown)
    assert "**16** — would be" in md and "**1 of 32**" in md
    at.toggle(key="t5_causal").set_value(True).run()
    md = " ".join(m.value for m in at.markdown)
    assert "every one of the 32" in md


def test_page_with_300_tokens():
    at = open_page(PAGE, sentence=" ".join(f"w{i % 41}" for i in range(300)))
    assert not errors(at)
    assert any("draws the first 256" in w.value for w in at.warning)
    assert fig_array(chart(at, "t5_bucket_matrix")["data"][0]["z"]).shape == (128, 128)  # 2 × 2 means
    at.toggle(key="t5_causal").set_value(True).run()
    assert not errors(at)


def test_page_with_korean_and_emoji():
    at = open_page(PAGE, sentence="강아지가 🐶 통나무 위에 앉았다 ❤️ 👩‍💻")
    assert not errors(at)
    spec = chart(at, "t5_bucket_matrix")
    assert fig_array(spec["data"][0]["z"]).shape == (7, 7)
    assert "강아지가" in spec["layout"]["yaxis"]["ticktext"]


def test_page_bias_panels_match_the_chapter_numbers():
    sentence = "one two three four five six seven"
    at = open_page(PAGE, sentence=sentence, seed=5)
    spec = chart(at, "t5_bias_heads")
    v = ch.t5_view(tuple(sentence.split()), 5, 32, 128, False)
    for h in range(4):
        np.testing.assert_allclose(fig_array(spec["data"][h]["z"]), v.position[h], atol=1e-5)
    # each panel is the head's table column read through the bucket matrix
    rel = np.arange(7)[None, :] - np.arange(7)[:, None]
    b = relative_position_bucket(torch.from_numpy(rel)).numpy()
    np.testing.assert_allclose(fig_array(spec["data"][2]["z"]), v.table[b, 2], atol=1e-5)
