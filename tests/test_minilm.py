"""all-MiniLM-L6-v2 read by hand: tokenizer and forward pass against transformers (the oracle),
position-id experiments, position-head measurement, and the page."""

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import numpy as np
import pytest
import torch

from explain.chapters import minilm as ch
from models.minilm import MAX_POSITIONS, WordPiece, load, model_dir
from tests.helpers import chart, errors, fig_array, open_page

PAGE = "pages/labs/minilm.py"
S = "The cat sat on the mat. The dog sat on the log."
SENTENCES = [
    S,
    "Positional encodings let transformers understand word order.",
    "고양이가 매트 위에 앉았다. 강아지가 통나무 위에 앉았다.",  # Korean
    "I ❤️ 서울 and 東京 🇰🇷🇯🇵 — don't you? 👩‍💻 hi👋 🙂🙂",  # emoji, CJK, ZWJ sequences
    "Café naïve résumé ÉCOLE Straße İstanbul ΣΟΦΟΣ Ångström façade",  # accents, final sigma
    "Hello!!! (What?) $5.00 — 50% off; a/b, c\\d ^_^ `code` ~x~ «quotes» “smart” ‘single’ …",
    "supercalifragilisticexpialidocious antidisestablishmentarianism " + "x" * 120,  # > 100 chars → [UNK]
    "tab\tnew\nline\r zero\u200bwidth \u0000nul \ufffd e\u0301 日本語のテキスト ñ \u00adsoft",
    "",
    "   ",
    "a a a a b a a a b b",
]


@pytest.fixture(scope="module")
def oracle():
    from transformers import AutoTokenizer, BertModel

    path = str(model_dir())
    return AutoTokenizer.from_pretrained(path), BertModel.from_pretrained(path, attn_implementation="eager").eval()


# -- tokenizer ------------------------------------------------------------------------------------


def test_token_ids_match_transformers(oracle):
    ref_tok, _ = oracle
    _, tok = load()
    for s in SENTENCES:
        assert list(tok.encode(s).ids) == ref_tok(s)["input_ids"], s


def test_wordpiece_examples():
    _, tok = load()
    assert tok.encode("Positional encodings let transformers understand word order.").tokens == (
        "[CLS]",
        "position",
        "##al",
        "encoding",
        "##s",
        "let",
        "transformers",
        "understand",
        "word",
        "order",
        ".",
        "[SEP]",
    )
    assert tok.word_pieces("x" * 101) == ["[UNK]"]
    assert tok.words("Café, naïve!") == ["cafe", ",", "naive", "!"]
    assert tok.words("東京x") == ["東", "京", "x"]


def test_wordpiece_greedy_longest_match_on_a_tiny_vocabulary():
    """Independent of the real vocabulary: longest prefix first, then '##' pieces; a word with an
    unmatched rest is one [UNK] (the found pieces are dropped)."""
    vocab = {t: i for i, t in enumerate(["[UNK]", "un", "unaff", "##aff", "##able", "##a", "##ble", "x"])}
    tok = WordPiece(vocab)
    assert tok.word_pieces("unaffable") == ["unaff", "##able"]
    assert tok.word_pieces("unable") == ["un", "##able"]
    assert tok.word_pieces("unablez") == ["[UNK]"]


def test_truncation_is_reported():
    _, tok = load()
    text = " ".join(["word"] * 600)
    enc = tok.encode(text)
    assert len(enc) == MAX_POSITIONS and enc.truncated and enc.n_found == 600 and enc.kept == 510
    assert enc.tokens[0] == "[CLS]" and enc.tokens[-1] == "[SEP]"
    p = ch.wordpieces(text)
    assert p.kept == ch.MAX_PIECES and p.truncated and len(p.tokens) == ch.MAX_PIECES + 2
    with pytest.raises(ValueError):
        tok.encode("a", max_length=513)


# -- the forward pass -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "sentence,positions",
    [
        (S, None),
        (SENTENCES[2], None),
        (SENTENCES[1], "shift"),
        (SENTENCES[1], "shuffle"),
    ],
)
def test_attentions_and_hidden_state_match_transformers(oracle, sentence, positions):
    _ref_tok, ref = oracle
    model, tok = load()
    ids = torch.tensor(tok.encode(sentence).ids)[None]  # (1, n)
    n = ids.shape[1]
    pos = None if positions is None else torch.from_numpy(ch.position_ids(n, positions, 37, 5))[None]
    with torch.no_grad():
        want = ref(input_ids=ids, position_ids=pos, output_attentions=True)
        got = model(ids, pos)
    assert len(got.attentions) == 6
    att = max(float((a - b).abs().max()) for a, b in zip(want.attentions, got.attentions, strict=False))
    hid = float((want.last_hidden_state - got.hidden).abs().max())
    assert att < 1e-5 and hid < 1e-4, (att, hid)


def test_shapes_and_rows_sum_to_one():
    model, _ = load()
    assert ch.position_table().shape == (512, 384)
    assert model.word.weight.shape == (30522, 384)
    r = ch.run(S)
    n = len(r.tokens)
    assert n == 16 and r.weights.shape == (6, 12, n, n) and r.hidden.shape == (n, 384)
    np.testing.assert_allclose(r.weights.sum(-1), 1.0, atol=1e-5)
    assert (r.weights >= 0).all()


def test_position_table_is_the_learned_chapters_table():
    from models.minilm import minilm_position_table

    np.testing.assert_array_equal(ch.position_table(), minilm_position_table())


def test_out_of_range_position_ids_are_refused():
    model, tok = load()
    ids = torch.tensor(tok.encode("a b").ids)
    with pytest.raises(ValueError):
        model(ids, torch.tensor([0, 1, 2, 512]))


# -- position-id experiments ----------------------------------------------------------------------


def test_position_ids():
    assert list(ch.position_ids(5, "shift", 3)) == [3, 4, 5, 6, 7]
    with pytest.raises(ValueError):
        ch.position_ids(10, "shift", 503)
    assert list(ch.position_ids(6, "reverse")) == [0, 4, 3, 2, 1, 5]
    sh = ch.position_ids(20, "shuffle", seed=3)
    assert sh[0] == 0 and sh[-1] == 19 and sorted(sh) == list(range(20)) and list(sh) != list(range(20))
    assert list(ch.position_ids(20, "shuffle", seed=3)) == list(sh)  # seeded


def test_position_change_zero_shift_is_zero_and_shuffle_moves_the_previous_token_head():
    same = ch.position_change(S, "shift", 0)
    assert np.abs(same.change).max() == 0 and same.hidden_change == 0
    sh = ch.position_change(ch.REFERENCE, "shuffle", seed=0)
    assert sh.change.shape == (6, 12) and (sh.change >= 0).all() and (sh.change <= 1).all()
    assert sh.change[0, 2] > 0.8  # layer 1, head 3: the previous-token head follows the ids
    shift = ch.position_change(ch.REFERENCE, "shift", 10)
    assert shift.change[0, 2] < 0.1  # … and barely notices a shift (pinned, measured 0.01)
    # Independent: ½ Σ_j |Δw| by hand for one head and query.
    q = 5
    assert sh.change[1, 4] == pytest.approx(
        np.mean(
            [
                0.5
                * sum(
                    abs(float(sh.after[1, 4, i, j]) - float(sh.before[1, 4, i, j])) for j in range(sh.before.shape[-1])
                )
                for i in range(sh.before.shape[-2])
            ]
        ),
        abs=1e-6,
    )
    assert q  # the loop above covers every query


# -- position heads -------------------------------------------------------------------------------


def test_target_masses_on_synthetic_maps():
    n = 8
    prev = np.zeros((1, 3, n, n))
    prev[0, 0, np.arange(1, n), np.arange(n - 1)] = 1.0
    prev[0, 0, 0, 0] = 1.0
    prev[0, 1, :, 0] = 1.0  # everything on [CLS]
    prev[0, 2] = np.eye(n)  # self
    m = ch.target_masses(prev)
    np.testing.assert_allclose(m[0, 0], [1, 0, 1 / 6, 0, 0])  # word 1's previous token is [CLS]
    np.testing.assert_allclose(m[0, 1], [1 / 6, 0, 1, 0, 0])
    np.testing.assert_allclose(m[0, 2], [0, 0, 0, 0, 1])


def test_position_heads_found_by_measuring():
    ph = ch.position_heads(S)
    found = {(h.layer, h.head): h.target for h in ph.labels}
    assert found.get((1, 3)) == "previous"  # pinned: measured 1.00 on the reference paragraph
    assert found.get((2, 9)) == "next"  # measured 0.66
    assert all(h.mass >= ch.THRESHOLD for h in ph.labels)
    assert ph.reference.shape == ph.sentence.shape == (6, 12, 5)
    assert (ph.reference.sum(-1) <= 1 + 1 / 3 + 1e-5).all()  # targets overlap only at the ends


def test_thumbnails_keep_rows_summing_to_one():
    r = ch.run(" ".join(["word"] * 150))
    t, k = ch.thumbnail_weights(r.weights, 48)
    assert k == 4 and t.shape[-1] == 38
    np.testing.assert_allclose(t.sum(-1), 1.0, atol=1e-5)
    same, one = ch.thumbnail_weights(ch.run(S).weights)
    assert one == 1 and same.shape[-1] == 16
    small, k = ch.thumbnail_weights(r.weights)  # 152 pieces in blocks of 5: 31 a side
    assert k == 5 and small.shape[-1] == 31 <= ch.THUMB_SIDE
    np.testing.assert_allclose(small.sum(-1), 1.0, atol=1e-5)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 16, 38, 48])
def test_the_grid_is_one_heatmap_whose_tiles_are_the_heads(n):
    """The 72 thumbnails go as one heatmap: every head's map sits unchanged in its tile, nothing but
    NaN between tiles, hover names layer, query, head and key, and the Numbers panel's tables are
    the heads' maps again."""
    from explain.chapters import minilm_figures
    from explain.numbers import heatmap_tables

    w = np.random.default_rng(n).dirichlet(np.ones(n), size=(6, 12, n)).astype(np.float32)
    fig = minilm_figures.attention_thumbnails(w, "t", marks={(0, 2): "previous", (4, 11): "[CLS]"})
    (heat,) = fig.data
    z = fig_array(heat.z)
    tiles = fig.layout.meta["tiles"]
    assert len(tiles) == 72 and len(heat.x) == z.shape[1] and len(heat.y) == z.shape[0]
    assert len(set(heat.x)) == len(heat.x) and len(set(heat.y)) == len(heat.y)  # categories unique
    filled = np.zeros(z.shape, dtype=bool)
    for k, tile in enumerate(tiles):
        layer, head = divmod(k, 12)
        (r0, r1), (c0, c1) = tile["rows"], tile["cols"]
        np.testing.assert_array_equal(z[r0:r1, c0:c1], w[layer, head])
        assert tile["name"] == f"layer {layer + 1}, head {head + 1}"
        assert heat.y[r0 + n - 1] == f"layer {layer + 1} · query i = {n - 1}"
        assert heat.x[c1 - 1] == f"head {head + 1} · key j = {n - 1}"
        filled[r0:r1, c0:c1] = True
    assert np.isnan(z[~filled]).all() and (~filled).any()  # the gaps, and only they, are empty
    assert heat.hoverongaps is False and "%{y}<br>%{x}" in heat.hovertemplate
    tables = heatmap_tables(fig)
    assert [name for name, _ in tables] == [tile["name"] for tile in tiles]
    np.testing.assert_array_equal(tables[-1][1].to_numpy(), w[5, 11])
    marks = {a.text: (a.x, a.y) for a in fig.layout.annotations if a.xref == "x" and a.yref == "y"}
    sx = tiles[1]["cols"][0]  # a mark is centred above its head's tile
    assert marks["previous"] == ((n - 1) / 2 + 2 * sx, -0.5)
    assert marks["[CLS]"] == ((n - 1) / 2 + 11 * sx, tiles[48]["rows"][0] - 0.5)


# -- the question and the experiment's claims -------------------------------------------------------


def _tv_by_oracle(ref, ids: torch.Tensor, shift: int) -> np.ndarray:
    """(L, H) ½ Σ_j |Δw| averaged over queries, by transformers' BertModel (the oracle), ids 0…n−1
    against ids shift…shift+n−1, written out here."""
    n = ids.shape[1]
    with torch.no_grad():
        a = ref(input_ids=ids, output_attentions=True).attentions
        b = ref(input_ids=ids, position_ids=torch.arange(shift, shift + n)[None], output_attentions=True).attentions
    return np.array(
        [[0.5 * float((y[0, h] - x[0, h]).abs().sum(-1).mean()) for h in range(12)] for x, y in zip(a, b, strict=True)]
    )


def test_shift_question_over_sentences(oracle):
    """The question's whole control space is the sentence: over every test sentence with a word in
    it, in both languages, the answer is the asked head that moved least under the question's shift
    (measured by the oracle), and every number the explanation states is that measurement."""
    _, ref = oracle
    _, tok = load()
    for sentence in [x for x in SENTENCES if x.strip()] + [ch.REFERENCE, " ".join(["word"] * 300)]:
        heads = ch.position_heads(sentence)
        n = len(heads.tokens)
        k = ch.question_shift(n)
        change = ch.compare(ch.run(sentence), ch.run(sentence, "shift", k))
        asked = heads.asked
        assert [h.target for h in asked] == ["previous", "next", "[CLS]"]  # one per role, in label order
        ids = torch.tensor(tok.encode(sentence, max_length=ch.MAX_PIECES + 2).ids)[None]
        tv = _tv_by_oracle(ref, ids, k)
        moved = {(h.layer, h.head): tv[h.layer - 1, h.head - 1] for h in asked}
        want = min(moved, key=moved.get)
        for lang in ("en", "ko"):
            q = ch.shift_question(heads, change, lang)
            assert q is not None and k == ch.QUESTION_SHIFT == q.facts["shift"]
            assert q.answer == want and q.options == tuple(moved), sentence
            for lh, v in moved.items():
                assert q.facts["moved"][lh] == pytest.approx(v, abs=2e-5)
                assert f"{q.facts['moved'][lh]:.2f}" in q.explanation
            assert q.facts["target"] == next(h.target for h in asked if (h.layer, h.head) == want)
    heads = ch.position_heads(S)
    with pytest.raises(ValueError):  # a comparison of another experiment is refused
        ch.shift_question(heads, ch.compare(ch.run(S), ch.run(S, "shift", 3)), "en")


def test_experiment_read_claims_on_the_reference_paragraph():
    """What the experiment-read prose says about the reference paragraph, measured: under a shift by
    10 the layer-1 previous-token head moves least of all labelled heads (and under 0.1), every
    [CLS] head more; under reverse and every shuffle seed, the previous- and next-token heads move
    more than any [CLS] head."""
    heads = ch.position_heads(ch.REFERENCE)
    prev = [h for h in heads.labels if h.target == "previous"]
    nxt = [h for h in heads.labels if h.target == "next"]
    cls = [h for h in heads.labels if h.target == "[CLS]"]
    assert [(h.layer, h.head) for h in prev] == [(1, 3)] and nxt and cls
    moved = ch.position_change(ch.REFERENCE, "shift", 10)
    assert moved.moved(1, 3) < 0.1 and all(moved.moved(1, 3) < moved.moved(h.layer, h.head) for h in cls)
    for mode, seed in [("reverse", 0)] + [("shuffle", s) for s in range(10)]:
        c = ch.position_change(ch.REFERENCE, mode, seed=seed)
        top_cls = max(c.moved(h.layer, h.head) for h in cls)
        assert all(c.moved(h.layer, h.head) > top_cls for h in prev + nxt), (mode, seed)


def test_position_change_most_least_and_preview():
    c = ch.position_change(S, "reverse")
    layer, head, v = c.most
    assert v == c.change.max() == c.moved(layer, head)
    layer, head, v = c.least
    assert v == c.change.min() == c.moved(layer, head)
    assert c.panels.shape == (1, 6, 12)
    ids, more = c.ids_preview(5)
    assert ids == (0, 14, 13, 12, 11) and more
    assert c.ids_preview(100) == (tuple(range(16)[:1]) + tuple(range(14, 0, -1)) + (15,), False)
    assert ch.max_shift(16) == 496 and ch.max_shift(600) == 0 and ch.question_shift(505) == 7


# -- the page -------------------------------------------------------------------------------------


def test_page_runs_and_draws_real_attention():
    at = open_page(PAGE, sentence=S)
    assert not errors(at)
    r = ch.run(S)
    assert chart(at, "minilm_big")["layout"]["title"]["text"] == "Layer 1, head 3 — attends to the previous token"
    big = fig_array(chart(at, "minilm_big")["data"][0]["z"]).astype(float)
    np.testing.assert_allclose(big, r.weights[0, 2], atol=1e-6)
    np.testing.assert_allclose(big.sum(-1), 1.0, atol=1e-5)
    at.selectbox(key="minilm_layer").set_value(6).run()
    at.selectbox(key="minilm_head").set_value(12).run()
    assert chart(at, "minilm_big")["layout"]["title"]["text"] == "Layer 6, head 12"
    np.testing.assert_allclose(fig_array(chart(at, "minilm_big")["data"][0]["z"]), r.weights[5, 11], atol=1e-6)
    at.radio(key="minilm_src").set_value("sentence").run()
    assert not errors(at)
    for mode in ch.MODES:
        at.radio(key="minilm_mode").set_value(mode).run()
        assert not errors(at)
    at.radio(key="minilm_mode").set_value("shift").run()
    at.slider(key="minilm_shift").set_value(512 - 16).run()  # the largest shift the table allows
    moved = fig_array(chart(at, "minilm_change")["data"][0]["z"])
    np.testing.assert_allclose(moved, ch.position_change(S, "shift", 496).change, atol=1e-6)


@pytest.mark.parametrize(
    "sentence", [" ".join(f"w{k % 37}" for k in range(300)), "고양이가 매트 위에 앉았다. I ❤️ 서울 🇰🇷 👩‍💻"]
)
def test_page_long_and_mixed_scripts(sentence):
    at = open_page(PAGE, sentence=sentence)
    assert not errors(at)
    if sentence.startswith("w0"):
        assert any("runs the model on the first 256" in w.value for w in at.warning)


def test_page_predict_then_reveal_and_a_shift_kept_from_a_shorter_sentence():
    at = open_page(PAGE, sentence=ch.REFERENCE)
    at.radio(key="minilm_q__choice").set_value("layer 1, head 3 (attends to the previous token)").run()
    at.button(key="minilm_q__reveal").click().run()
    assert any(s.value.startswith("Right: **layer 1, head 3") for s in at.success)  # moved 0.01 under a shift of 10
    at.slider(key="minilm_shift").set_value(400).run()
    at.session_state["sentence"] = " ".join(["word"] * 300)  # 258 tokens: the largest shift is now 254
    at.run()
    assert not errors(at)
    assert chart(at, "minilm_change")["data"][0]  # drawn with the shift clamped to 254
