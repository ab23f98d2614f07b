"""CoPE (encoders/cope.py, explain/chapters/cope.py, pages/contextual/cope.py)."""

import math

import numpy as np
import pytest
import torch

from encoders import build
from encoders.cope import (
    CoPE,
    CoPEConfig,
    contextual_positions,
    contextual_positions_bidirectional,
    gate_logits_from_counted,
    integer_position_logits,
    interpolate_position_logits,
)


def _causal_logits(n, seed=0, scale=2.0):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(2, 3, n, n, generator=g, dtype=torch.float64) * scale  # (b, h, i, j)
    future = torch.arange(n)[None, :] > torch.arange(n)[:, None]
    return x.masked_fill(future, float("-inf"))


# --- properties -----------------------------------------------------------------------------------


def test_future_positions_are_zero_and_diagonal_is_own_gate():
    a = _causal_logits(7)
    p = contextual_positions(a)
    future = torch.arange(7)[None, :] > torch.arange(7)[:, None]
    assert (p[..., future] == 0).all()
    # p_ii = g_ii = σ(a_ii) ∈ (0, 1): the diagonal gate is included, not zeroed
    diag = torch.diagonal(p, dim1=-2, dim2=-1)
    assert torch.allclose(diag, torch.sigmoid(torch.diagonal(a, dim1=-2, dim2=-1)), atol=1e-15)
    assert (diag > 0).all() and (diag < 1).all()


def test_future_gates_are_zero_in_the_encoder():
    enc = build("cope", 32, 4, seed=1)
    q = torch.randn(1, 4, 6, 8, generator=torch.Generator().manual_seed(3))
    k = torch.randn(1, 4, 6, 8, generator=torch.Generator().manual_seed(4))
    r = enc.logit_terms(q, k, torch.arange(6), torch.arange(6), causal=True)
    future = torch.arange(6)[None, :] > torch.arange(6)[:, None]
    assert (r.extras["gates"][..., future] == 0).all()
    assert (r.extras["gates"][..., ~future] > 0).all()


def test_all_gates_open_give_relative_positions():
    n = 9
    logits = gate_logits_from_counted(torch.ones(n, dtype=torch.bool), math.inf)
    p = contextual_positions(logits)
    i, j = torch.arange(n)[:, None], torch.arange(n)[None, :]
    below = j <= i
    assert torch.equal(p[below], (i - j + 1).expand(n, n)[below].double())
    assert (p[~below] == 0).all()


def test_positions_non_increasing_in_j():
    p = contextual_positions(_causal_logits(12, seed=5))
    assert (p[..., :-1] - p[..., 1:] >= -1e-12).all()
    assert (p[..., :-1] - p[..., 1:] > 0.05).any()  # and really decreasing somewhere


def test_hand_set_gates_count_sentence_ends():
    # "a b . c d . e" with gates on "." only, hard: query e (6) sees c,d at count 1, a,b at 2
    counted = torch.tensor([0, 0, 1, 0, 0, 1, 0], dtype=torch.bool)
    p = contextual_positions(gate_logits_from_counted(counted, math.inf))
    assert p[6].tolist() == [2, 2, 2, 1, 1, 1, 0]
    # soft gates: σ(±s)
    s = 1.5
    p = contextual_positions(gate_logits_from_counted(counted, s))
    hi, lo = 1 / (1 + math.exp(-s)), 1 / (1 + math.exp(s))
    assert p[6, 6].item() == pytest.approx(lo, abs=1e-12)
    assert p[6, 0].item() == pytest.approx(2 * hi + 5 * lo, abs=1e-12)


def test_bidirectional_counts_both_ways_and_matches_causal_below_diagonal():
    g = torch.Generator().manual_seed(2)
    a = torch.randn(5, 5, generator=g, dtype=torch.float64)
    p = contextual_positions_bidirectional(a)
    gates = torch.sigmoid(a)
    for i in range(5):
        for j in range(5):
            lo, hi = min(i, j), max(i, j)
            assert p[i, j].item() == pytest.approx(gates[i, lo : hi + 1].sum().item(), abs=1e-12)
    future = torch.arange(5)[None, :] > torch.arange(5)[:, None]
    causal = contextual_positions(a.masked_fill(future, float("-inf")))
    assert torch.allclose(p[~future], causal[~future], atol=1e-14)


def test_interpolation_weight_is_fractional_part():
    # z[n] = n² so the interpolated value tells which weight was used
    z = torch.tensor([[0.0, 1.0, 4.0, 9.0]], dtype=torch.float64)[None, None]  # (1, 1, i=1, P=4)
    p = torch.tensor([[[[0.0, 0.25, 1.5, 2.9, 3.0]]]], dtype=torch.float64)  # (1, 1, 1, j=5)
    out = interpolate_position_logits(z, p)[0, 0, 0]
    expected = []
    for v in p.flatten().tolist():
        lo, w = math.floor(v), v - math.floor(v)
        hi = math.ceil(v)
        expected.append((1 - w) * lo**2 + w * hi**2)
    assert out.tolist() == pytest.approx(expected, abs=1e-12)
    assert out[2].item() == pytest.approx(0.5 * 1 + 0.5 * 4)


def test_clamping_at_npos_max_minus_one():
    enc = CoPE(16, 2, CoPEConfig(npos_max=4), torch.Generator().manual_seed(0)).double()
    n = 10
    logits = torch.full((1, 2, n, n), 20.0, dtype=torch.float64)  # gates ≈ 1: counts up to ~10
    p = enc.positions(logits, causal=True)
    assert p.max().item() == 3.0
    assert p[0, 0, 9, 0].item() == 3.0 and p[0, 0, 9, 8].item() == pytest.approx(2.0, abs=1e-6)
    unclamped = contextual_positions(logits.masked_fill(torch.ones(n, n).triu(1).bool(), float("-inf")))
    assert unclamped.max().item() > 9.9


def _naive_cope_logits(q, k, table, npos, official=False):
    """O(n²·d) float64 loop: gates, counts, clamp, build e[p_ij] explicitly, dot with q."""
    b, h, n, d = q.shape
    out = np.zeros((b, h, n, n))
    content = np.zeros((b, h, n, n))
    for bb in range(b):
        for hh in range(h):
            for i in range(n):
                for j in range(n):
                    if j > i:
                        continue
                    c = sum(q[bb, hh, i, x] * k[bb, hh, j, x] for x in range(d)) / math.sqrt(d)
                    p = 0.0
                    for s in range(j, i + 1):
                        a = sum(q[bb, hh, i, x] * k[bb, hh, s, x] for x in range(d)) / math.sqrt(d)
                        p += 1.0 / (1.0 + math.exp(-a))
                    p = min(p, npos - 1)
                    lo, hi = math.floor(p), math.ceil(p)
                    w = p - lo
                    e = [(1 - w) * table[hh, x, lo] + w * table[hh, x, hi] for x in range(d)]
                    pos = sum(q[bb, hh, i, x] * e[x] for x in range(d))
                    if official:
                        pos /= math.sqrt(d)
                    content[bb, hh, i, j] = c
                    out[bb, hh, i, j] = c + pos
    return content, out


@pytest.mark.parametrize("variant", ["paper", "official"])
def test_whole_logit_equals_naive_loop(variant):
    d_model, h, n = 16, 2, 7
    enc = build("cope", d_model, h, seed=3, config=CoPEConfig(npos_max=5, variant=variant)).double()
    g = torch.Generator().manual_seed(11)
    q = torch.randn(1, h, n, d_model // h, generator=g, dtype=torch.float64) * 1.5
    k = torch.randn(1, h, n, d_model // h, generator=g, dtype=torch.float64) * 1.5
    with torch.no_grad():
        r = enc.logit_terms(q, k, torch.arange(n), torch.arange(n), causal=True)
    total = r.total().numpy()
    content, expected = _naive_cope_logits(q.numpy(), k.numpy(), enc.table.detach().numpy(), 5, variant == "official")
    below = np.tril(np.ones((n, n), dtype=bool))
    assert np.abs(total[..., below] - expected[..., below]).max() < 1e-12
    assert np.abs(r.terms["content"].numpy()[..., below] - content[..., below]).max() < 1e-12
    assert r.extras["positions"].max().item() == 4.0  # the clamp was exercised


def test_official_variant_divides_the_position_term_by_sqrt_d():
    d_model, h, n = 32, 4, 6
    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, h, n, 8, generator=g, dtype=torch.float64)
    k = torch.randn(1, h, n, 8, generator=g, dtype=torch.float64)
    paper = build("cope", d_model, h, seed=2, config=CoPEConfig(variant="paper")).double()
    official = build("cope", d_model, h, seed=2, config=CoPEConfig(variant="official")).double()
    a = paper.logit_terms(q, k, torch.arange(n), torch.arange(n), True)
    b = official.logit_terms(q, k, torch.arange(n), torch.arange(n), True)
    assert torch.equal(a.terms["content"], b.terms["content"])
    assert torch.equal(a.extras["gates"], b.extras["gates"])  # same gates in both
    assert torch.allclose(b.terms["position"] * math.sqrt(8), a.terms["position"], atol=1e-12)
    assert not torch.allclose(b.terms["position"], a.terms["position"], atol=1e-3)


def test_integer_logits_are_q_dot_table():
    enc = build("cope", 16, 2, seed=0).double()
    q = torch.randn(1, 2, 3, 8, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    with torch.no_grad():
        z = integer_position_logits(q, enc.table)
    assert z.shape == (1, 2, 3, 64)
    assert z[0, 1, 2, 5].item() == pytest.approx(float(q[0, 1, 2] @ enc.table.detach()[1, :, 5]), abs=1e-12)


def test_zero_init_gives_zero_position_term_and_bad_config_refused():
    enc = build("cope", 16, 2, seed=0, config=CoPEConfig(init_std=0.0))
    q = torch.randn(1, 2, 4, 8)
    r = enc.logit_terms(q, q, torch.arange(4), torch.arange(4), True)
    assert (r.terms["position"] == 0).all()
    with pytest.raises(ValueError):
        build("cope", 16, 2, config=CoPEConfig(variant="nope"))
    with pytest.raises(ValueError):
        build("cope", 16, 2, config=CoPEConfig(npos_max=1))


# --- the chapter's pure functions -----------------------------------------------------------------

from explain.chapters import cope as ch  # noqa: E402
from explain.chapters import cope_seeds as seeds  # noqa: E402

TEXT = "Alice met Bob. Alice smiled!\n\nThen Alice left? Bob stayed with Alice."
# tokens: Alice met Bob . Alice smiled ! Then Alice left ? Bob stayed with Alice .   (0 … 15)
COUNTED = {
    "every token": set(range(16)),
    "word starts": set(range(16)) - {3, 6, 10, 15},
    "sentence ends": {3, 6, 10, 15},
    "paragraph ends": {6, 15},
    "a word you pick": {0, 4, 8, 14},
}


@pytest.mark.parametrize("unit", ch.UNITS)
def test_counted_mask_per_unit(unit):
    mask = ch.counted_mask(TEXT, unit, "ALICE")
    assert set(np.flatnonzero(mask)) == COUNTED[unit]


def test_paragraph_ends_need_a_blank_line():
    tokens = ("a", "b", ".", "c", ".")
    assert ch.paragraph_ends("a b.\nc.", tokens).tolist() == [False] * 4 + [True]
    assert ch.paragraph_ends("a b.\n  \n c.", tokens).tolist() == [False, False, True, False, True]


def test_count_view_matches_an_explicit_count():
    cv = ch.count_view(TEXT, "sentence ends", "", math.inf, False, 64)
    for i in range(16):
        for j in range(i + 1):
            assert cv.positions[i, j] == sum(1 for t in range(j, i + 1) if t in COUNTED["sentence ends"])
    assert np.isnan(cv.positions[0, 1]) and np.isnan(cv.gates[3, 7])


def test_last_sentence_count():
    cv = ch.count_view(
        "Alice saw Alice. Then Bob and Alice met Alice and Alice.", "sentence ends", "", math.inf, False, 64
    )
    count, in_last = ch.last_sentence_count(cv, "alice")
    assert count == 3 and in_last.sum() == 9 and not in_last[:4].any()


def test_preferred_count_attends_to_the_previous_sentence():
    av = ch.preferred_count_attention(TEXT, "sentence ends", "", 10.0, False, 64, 1, 10.0, 0.0, 0)
    row = av.weights[13]  # "with", in the last sentence: previous sentence is tokens 7 … 10
    assert row[7:11].sum() > 0.99
    assert np.allclose(row[7:11], row[7], atol=1e-3)


# --- the page -------------------------------------------------------------------------------------

from tests.helpers import chart, errors, fig_array, open_page  # noqa: E402

PAGE = "pages/contextual/cope.py"


def _z(at, key):
    return fig_array(chart(at, key)["data"][0]["z"])


def test_page_each_unit_counts_on_the_text():
    at = open_page(PAGE, sentence=TEXT)
    assert not errors(at)
    for unit in ch.UNITS:
        at.radio(key="cope_unit").set_value(unit).run()
        if unit == "a word you pick":
            at.selectbox(key="cope_word").set_value("alice").run()
        assert not errors(at)
        p = _z(at, "positions")
        expected = [sum(1 for t in range(j, 16) if t in COUNTED[unit]) for j in range(16)]
        assert np.abs(p[15] - expected).max() < 0.01, unit


def test_page_all_gates_open_and_clamp():
    at = open_page(PAGE, sentence=TEXT)
    at.toggle(key="cope_all_open").set_value(True).run()
    p = _z(at, "positions")
    assert p[15].tolist() == [16 - j for j in range(16)]
    assert any("min(i − j + 1, P − 1)" in s.value for s in at.success)
    at.slider(key="cope_npos").set_value(2).run()
    assert not errors(at)
    p = _z(at, "positions")
    assert np.nanmax(p) == 1.0 and any("clamped" in w.value for w in at.warning)


def test_page_sliders_at_extremes():
    at = open_page(PAGE, sentence=TEXT)
    at.slider(key="cope_sharpness").set_value(0.0).run()
    g = _z(at, "gates")
    assert np.allclose(g[np.tril_indices(16)], 0.5)
    for key, value in [
        ("cope_query", 0),
        ("cope_query", 15),
        ("cope_key", 15),
        ("cope_target", ch.MAX_TARGET),
        ("cope_strength", ch.MAX_PREFERENCE),
        ("cope_content", 2.0),
        ("cope_head", ch.N_HEADS),
        ("cope_npos", 2),
        ("cope_sharpness", ch.MAX_SHARPNESS),
    ]:
        at.slider(key=key).set_value(value).run()
        assert not errors(at), (key, value)
    at.radio(key="cope_variant").set_value("official").run()
    assert not errors(at)
    assert chart(at, "model_weights")["layout"]["title"]["text"] == "Head 4: attention weights, CoPE (official)"


def test_page_alice_answer():
    at = open_page(PAGE, sentence="Alice saw Alice. Then Bob and Alice met Alice and Alice.")
    assert any("appears **3** time(s) in the last sentence" in m.value and "5 time(s)" in m.value for m in at.markdown)


def test_page_korean_emoji_and_long_text():
    at = open_page(PAGE, sentence="앨리스는 밥을 만났다. 그리고 웃었다! 👩‍💻 🇰🇷 끝.")
    assert not errors(at)
    assert "3 of 11 tokens count" in " ".join(m.value for m in at.markdown)
    at = open_page(PAGE, sentence=" ".join(f"w{k}" + (" ." if k % 10 == 9 else "") for k in range(300)))
    assert not errors(at)
    assert _z(at, "positions").shape == (128, 128)  # 2 × 2 block means: what the screen shows
    assert any("draws the first 256" in w.value for w in at.warning)


@pytest.mark.parametrize("gap", [1, 3, 12])
def test_seed_example_yyyyx_ratios(gap):
    v = seeds.seed_example("yyyyxyyy", gap, 3.0, 1.0)
    x, last_y = 4, len(v.tokens) - 1
    assert v.tokens[x] == "x" and len(v.tokens) == 5 + gap
    rel, cope = v.weights["relative"], v.weights["cope"]
    # relative: x pays slope per token back; CoPE: x pays one count, whatever the gap
    assert rel[x] / rel[last_y] == pytest.approx(math.exp(3.0 - 1.0 * gap), rel=1e-9)
    assert cope[x] / cope[last_y] == pytest.approx(math.exp(3.0 - 1.0), rel=1e-9)


def test_seed_example_nearer_b_wins():
    v = seeds.seed_example("aaaabaaabb", 1, 3.0, 1.0)
    assert "".join(v.tokens) == "aaaabaaabb"
    assert v.weights["none"][4] == pytest.approx(v.weights["none"][8])
    for name in ("relative", "cope"):
        assert v.weights[name][8] > 2 * v.weights[name][4]


def test_page_seed_examples():
    at = open_page(PAGE, sentence=TEXT)
    for example in seeds.SEED_EXAMPLES:
        at.radio(key="cope_example").set_value(example).run()
        for gap in (1, seeds.MAX_GAP):
            at.slider(key="cope_gap").set_value(gap).run()
            assert not errors(at), (example, gap)
            bars = chart(at, "seed_example")["data"]
            assert len(bars) == 3 and fig_array(bars[0]["y"]).sum() == pytest.approx(1.0, abs=1e-6)


def test_page_survives_a_shorter_sentence():
    at = open_page(PAGE, sentence=" ".join(["w"] * 50))
    at.slider(key="cope_query").set_value(40).run()
    at.slider(key="cope_key").set_value(30).run()
    at.session_state["sentence"] = "Bob ran. Bob sat."
    at.run()
    assert not errors(at)
    assert at.slider(key="cope_query").value == 5 and at.slider(key="cope_key").value == 0


# --- English and Korean ---------------------------------------------------------------------------

from explain.i18n import LANGS, t  # noqa: E402


def test_every_option_id_has_a_name_in_both_languages():
    """Option values are stable ids (URL, lessons); each is named through the catalogue."""
    for lang in LANGS:
        names = [t(f"cope.unit.{u}", lang) for u in ch.UNITS]
        names += [t(f"cope.seeds.example_name.{e}", lang) for e in seeds.SEED_EXAMPLES]
        names += [t(f"cope.seeds.ruler.{r}", lang) for r in seeds.RULERS]
        names += [t(f"cope.model.variant_name.{v}", lang) for v in ("paper", "official")]
        assert all(names) and len(set(names)) == len(names), lang
    assert [t(f"cope.unit.{u}", "en") for u in ch.UNITS] == list(ch.UNITS)  # English shows the id itself
    assert set(seeds.seed_example("yyyyxyyy", 1, 3.0, 1.0).weights) == set(seeds.RULERS)


def test_lesson_presets_use_unit_ids_the_page_knows():
    from explain.lessons import LESSONS

    units = [
        s.controls_in(lang)["cope_unit"]
        for lesson in LESSONS
        for s in lesson.steps
        for lang in LANGS
        if "cope_unit" in s.controls
    ]
    assert units and set(units) <= set(ch.UNITS)


def test_page_switches_to_korean_and_keeps_every_control():
    at = open_page(PAGE, sentence=TEXT)
    at.radio(key="cope_unit").set_value(ch.UNIT_PICKED).run()
    at.selectbox(key="cope_word").set_value("bob").run()
    at.slider(key="cope_sharpness").set_value(4.0).run()
    at.radio(key="cope_example").set_value("aaaabaaabb").run()
    at.radio(key="cope_variant").set_value("official").run()
    p_en = _z(at, "positions")
    at.button_group(key="lang").set_value("ko").run()
    assert not errors(at)
    assert at.radio(key="cope_unit").value == ch.UNIT_PICKED and at.selectbox(key="cope_word").value == "bob"
    assert at.slider(key="cope_sharpness").value == 4.0
    assert at.radio(key="cope_example").value == "aaaabaaabb" and at.radio(key="cope_variant").value == "official"
    assert "직접 고른 단어" in at.radio(key="cope_unit").options
    # the same numbers under Korean titles and legend names
    assert np.array_equal(_z(at, "positions"), p_en, equal_nan=True)
    bars = chart(at, "seed_example")["data"]
    assert [b["name"] for b in bars] == [t(f"cope.seeds.ruler.{r}", "ko") for r in seeds.RULERS]
    assert chart(at, "model_weights")["layout"]["title"]["text"] == "헤드 1: 어텐션 가중치, CoPE (공식 코드)"
    assert any("토큰 16개 중 2개를 셉니다" in m.value for m in at.markdown)


# --- the positions question, over every text length ----------------------------------------------

from encoders.text import MAX_TOKENS, tokenize  # noqa: E402


def _clamped_pairs(n: int, cap: int) -> int:
    """Pairs j ≤ i with i − j + 1 > cap, counted by distance: n − d + 1 pairs have i − j + 1 = d."""
    return sum(n - d + 1 for d in range(cap + 1, n + 1))


@pytest.mark.parametrize("lang", LANGS)
def test_positions_question_over_every_text_length(lang):
    """Every text length the page can see (1 … MAX_TOKENS tokens), both languages: the answer is an
    option, it is i − j + 1, and every fact the explanation states agrees with a closed form."""
    cap = ch.MAX_NPOS - 1
    assert ch.positions_question(1, lang) is None  # one pair (0, 0) tells no formula apart
    for n in range(2, MAX_TOKENS + 1):
        q = ch.positions_question(n, lang)
        assert q is not None and q.options == ch.POSITION_OPTIONS and q.answer in q.options
        assert q.answer == "relative"
        # Each wrong formula fails on a pair every text of two or more tokens has:
        # j − i at (0, 0) is 0, "1" at (1, 0) is 1, i + 1 at (1, 1) is 2; CoPE's counts there are 1, 2, 1.
        f = q.facts
        assert f["n"] == n and f["pairs"] == n * (n + 1) // 2 and f["cap"] == cap
        assert f["clamped"] == _clamped_pairs(n, cap) and f["diff"] == 0.0
        assert (f["clamped"] > 0) == (n > cap)
        shown = [str(f["n"]), str(f["pairs"]), f"{f['diff']:.1e}"]
        if f["clamped"]:
            shown += [f"{f['clamped']:,}", str(cap)]
        assert all(s in q.explanation for s in shown), (n, shown, q.explanation)
        assert len(set(q.labels)) == len(q.labels)


def test_positions_question_against_explicit_loops_on_short_texts():
    """For short texts, the candidates checked pair by pair in plain Python, with CoPE's counts summed
    gate by gate (all gates 1)."""
    for n in range(2, 13):
        counts = {(i, j): sum(1.0 for _ in range(j, i + 1)) for i in range(n) for j in range(i + 1)}
        formulas = {"relative": lambda i, j: i - j + 1, "offset": lambda i, j: j - i, "one": lambda i, j: 1,
                    "query": lambda i, j: i + 1}  # fmt: skip
        right = [k for k, f in formulas.items() if all(f(i, j) == c for (i, j), c in counts.items())]
        assert right == [ch.positions_question(n, "en").answer]


# --- the chapter's views: what the page used to compute itself -------------------------------------


def test_query_row_and_the_gap_to_relative_positions():
    cv = ch.count_view(TEXT, "sentence ends", "", math.inf, False, 64)
    r = cv.row(6)
    assert r.tokens == cv.tokens[:7] and r.highlight == (3, 6)
    assert r.counts.tolist() == [2, 2, 2, 2, 1, 1, 1] and (r.first, r.own) == (2.0, 1.0)
    assert cv.n_counted == 4 and cv.relative_gap > 10  # sentence counts are not token distances
    opened = ch.count_view(TEXT, "sentence ends", "", 2.0, True, 5)
    assert opened.relative_gap == 0.0 and opened.row(15).highlight == ()  # every key counts: none marked
    assert opened.row(15).counts.tolist() == [min(16 - j, 4) for j in range(16)]


def test_interpolation_window_holds_both_neighbours_of_p():
    for key in range(16):
        iv = ch.interpolation_view(TEXT, "sentence ends", "", 1.0, False, 64, 15, key, 0)
        assert iv.first == max(0, iv.lo - ch.WINDOW) and iv.last == min(63, iv.hi + ch.WINDOW)
        assert iv.lo in iv.n_window and iv.hi in iv.n_window
        assert np.array_equal(iv.z_window, iv.z[iv.first : iv.last + 1])
        assert iv.value == pytest.approx(iv.w * iv.z_hi + (1 - iv.w) * iv.z_lo, abs=1e-12)


def test_alice_view_counts_the_last_sentence():
    v = ch.alice_view("Alice saw Alice. Then Bob and Alice met Alice and Alice.", "ALICE")
    # tokens: Alice saw Alice . Then Bob and Alice met Alice and Alice .   (0 … 12)
    assert (v.count, v.total, v.hits) == (3, 5, (7, 9, 11))
    assert v.in_last.tolist() == [0.0] * 4 + [1.0] * 9


def test_model_view_head_is_numbered_from_one():
    mv = ch.model_view(TEXT, 0, 64, "paper")
    for h in range(1, ch.N_HEADS + 1):
        gates, positions, weights = mv.head(h)
        assert np.array_equal(gates, mv.gates[h - 1], equal_nan=True)
        assert np.array_equal(positions, mv.positions[h - 1], equal_nan=True)
        assert np.array_equal(weights, mv.weights[h - 1], equal_nan=True)


def test_toy_gates_are_the_listings_scaled_sigmoid_not_the_equations():
    """The paper's equations write g = σ(q·k); its appendix listing (and encoders/cope.py) use
    σ(q·k/√d). The toy model's gates match the listing, and the chapter's first equation, the
    paper's, carries no √d in either language."""
    from explain.prose import section

    tokens = tokenize(TEXT).tokens
    _, r = ch._toy(tokens, 0, 64)
    q, k = r.q[0].numpy(), r.k[0].numpy()  # (h, n, d)
    d = q.shape[-1]
    expected = 1 / (1 + np.exp(-np.einsum("hid,hjd->hij", q, k) / math.sqrt(d)))
    below = np.tril(np.ones((len(tokens),) * 2, dtype=bool))
    assert np.allclose(r.extras["gates"][0].numpy()[:, below], expected[:, below], atol=1e-12)
    unscaled = 1 / (1 + np.exp(-np.einsum("hid,hjd->hij", q, k)))
    assert not np.allclose(unscaled[:, below], expected[:, below], atol=1e-3)
    for lang in LANGS:
        intro = section("cope", "intro", lang)
        first_equation = intro.split("$$")[1]
        assert "\\sigma" in first_equation and "sqrt" not in first_equation
        assert "sqrt{d}" in intro.split("$$")[2]  # the listing's scaling is named right after it


@pytest.mark.parametrize("gap", range(1, seeds.MAX_GAP + 1))
def test_nearer_b_wins_for_every_positive_slope_and_ties_at_zero(gap):
    """The prose: without positions the two b's tie; relative positions and CoPE both favour the
    nearer b for any slope above 0. Over the page's slope grid and a spread of content bonuses."""
    for slope in np.round(np.arange(0.0, 5.0001, 0.1), 10):
        for delta in (0.0, 3.0, 10.0):
            v = seeds.seed_example("aaaabaaabb", gap, delta, slope)
            near, far = v.last, 4
            assert v.tokens[far] == v.tokens[near] == v.sought == "b" and near == 8 and v.back == gap
            assert v.weights["none"][near] == pytest.approx(v.weights["none"][far], rel=1e-12)
            # Independently: relative pays slope per token (the far b is 4 tokens further back); CoPE
            # pays slope per counted b (the far b counts 3 b's up to the query, the near one 2).
            rel, cope = v.weights["relative"], v.weights["cope"]
            assert rel[near] / rel[far] == pytest.approx(math.exp(4 * slope), rel=1e-9)
            assert cope[near] / cope[far] == pytest.approx(math.exp(slope), rel=1e-9)
            assert v.counted_back == 2.0 and v.cope_positions[far] == 3.0
            if slope > 0:
                assert rel[near] > rel[far] and cope[near] > cope[far]


def test_seed_example_line_facts():
    v = seeds.seed_example("yyyyxyyy", 3, 3.0, 1.0)
    assert (v.sought, v.last, v.back, v.counted_back) == ("x", 4, 3, 1.0)
    assert v.weight("relative") == v.weights["relative"][4] and v.weight("cope") == v.weights["cope"][4]
    for example, gap in seeds.SEED_DEFAULT_GAP.items():
        assert "".join(seeds.seed_example_tokens(example, gap)) == example  # the review's own sequences


# --- the paper's numbers --------------------------------------------------------------------------

from explain.chapters import cope_results  # noqa: E402

# Typed from METHODS.md, "Headline results", CoPE paper: Table 4 and Figure 3 (train 1024).
TABLE4_WIKITEXT = {
    "absolute": (124.4, 23.96, 24.87),
    "relative": (123.7, 22.90, 23.81),
    "cope": (123.7, 22.55, 23.46),
    "cope_relative": (123.7, 22.31, 23.23),
}
TABLE4_CODE = {"absolute": (20.8, 4.7), "rope": (19.8, 4.1), "cope": (20.8, 3.9), "cope_rope": (20.8, 4.0)}
FIGURE3_1024 = {
    "relative": (22.9, 22.6, 23.2, 24.15),
    "relative_capped": (22.9, 22.3, 22.1, 21.95),
    "cope": (22.55, 21.95, 21.7, 21.55),
}


@pytest.mark.parametrize("lang", LANGS)
def test_paper_results_are_the_papers_numbers(lang):
    pr = cope_results.paper_results(lang)
    name = lambda m: t(f"cope.results.method.{m}", lang)  # noqa: E731
    assert [list(r.values()) for r in pr.wikitext] == [[name(m), *v] for m, v in TABLE4_WIKITEXT.items()]
    assert [list(r.values()) for r in pr.code] == [[name(m), *v] for m, v in TABLE4_CODE.items()]
    assert [list(r.values()) for r in pr.figure3] == [
        [name(m), *(f"≈{x:g}" for x in v)] for m, v in FIGURE3_1024.items()
    ]
    # values read off a plot say so: every Figure 3 cell is marked approximate, and so is the one length
    header = list(pr.figure3[0])[1:]
    assert [h.count("≈") for h in header] == [0, 1, 0, 0] and "1024" in header[0] and "2560" in header[-1]


@pytest.mark.parametrize("lang", LANGS)
def test_paper_result_lines_state_the_tables(lang):
    pr = cope_results.paper_results(lang)
    f = pr.facts
    test = {m: v[2] for m, v in TABLE4_WIKITEXT.items()}
    best = min(test, key=test.get)
    code_best = min(TABLE4_CODE, key=lambda m: TABLE4_CODE[m][1])
    assert (best, code_best) == ("cope_relative", "cope")
    assert f["best"] == t(f"cope.results.method.{best}", lang) and f["best_code"] == t("cope.results.method.cope", lang)
    assert f["gain"] == pytest.approx(23.81 - 23.46) and f["pct"] == pytest.approx(100 * 0.35 / 23.81)
    for text in (
        f"{23.46:.2f}",
        f"{23.81:.2f}",
        f"{0.35:.2f}",
        f"{100 * 0.35 / 23.81:.1f}",
        f"{23.23:.2f}",
        "3.9",
        "4.1",
    ):
        assert text in pr.lm_line, text
    # Figure 3: "relative goes up, capped relative and CoPE come down" is what the readings say
    for m, v in FIGURE3_1024.items():
        assert (v[-1] > v[0]) == (m == "relative")
    assert f["ratio"] == 2.5 and f["longest"] == 2560 and f["train"] == 1024
    for text in ("≈22.9", "≈24.15", "≈21.95", "≈21.55", "2560", "1024", "2.5"):
        assert text in pr.length_line, text


# --- the sidebar example -------------------------------------------------------------------------


def test_the_nearer_b_example_is_not_called_a_counting_example():
    """ "a a a a b a a a b b" is the seed review's "attend to the nearer b" example."""
    from ui.sidebar import EXAMPLES

    assert EXAMPLES["cope_nearer_b"] == "a a a a b a a a b b" and "cope_counting" not in EXAMPLES
    assert "nearer b" in t("common.examples.cope_nearer_b", "en")
    assert "count" not in t("common.examples.cope_nearer_b", "en").lower()
    assert "더 가까운 b" in t("common.examples.cope_nearer_b", "ko") and "세기" not in t(
        "common.examples.cope_nearer_b", "ko"
    )
