"""Lab: a real RoPE language model (SmolLM2-135M-Instruct, 4-bit weights run in float32) on the learner's sentence.

A page only shows: widgets → cached calls into explain/chapters/smollm2.py → figures → st.*. The model
runs, the shift test, the frequency table, the sinks and every number a sentence states are computed
there. Until the model is loaded (in the background, once per server) the page says so and waits; no
other chapter waits for it.
"""

import streamlit as st

from explain import figures as F
from explain.chapters import minilm_figures
from explain.chapters import smollm2 as ch
from explain.chapters import smollm2_long as long_ch
from ui.cache import cached
from ui.common import inline_tokens, plot, sentence
from ui.i18n import current, t
from ui.question import ask_first
from ui.section import open_chapter
from ui.url_state import URL

page = open_chapter(ch.CHAPTER)
page.prose("intro")


@page.section(run_every=1.0)
def warming_note() -> None:
    """Polls the background load each second; the whole page runs again once the model is there."""
    status = ch.warm_status()
    if status.ready:
        st.rerun(scope="app")
    if status.stage == "failed":
        st.error(t("smollm2.failed", error=status.error or ""))
        return
    st.info(t("smollm2.warming", stage=t(f"smollm2.stage.{status.stage}"), seconds=status.seconds))


if not ch.warm_status().ready:
    ch.start_warming()  # a server started without warm-up: the first visit starts it
    if ch.waits_for_load():  # tests: the page waits for the load instead of polling
        ch.wait_for_load()
    else:
        warming_note()
        st.stop()

pieces = cached(ch.pieces)
overview = cached(ch.overview)
layer_heads = cached(ch.layer_heads)
shift_test = cached(ch.shift_test)
pair_usage = cached(ch.pair_usage)
facts = cached(ch.facts)
frequencies = cached(ch.frequencies)
lang = current()

f = facts()
st.caption(t("smollm2.quantised", quant=ch.QUANTISATION, parameters=f.parameters / 1e6))
text = sentence()
p = pieces(text)
if p.kept == 0:
    st.info(t("smollm2.no_text"))
    st.stop()
if p.truncated:
    st.warning(t("smollm2.truncated", found=p.n_found, kept=p.kept))
ov = overview(text)

# -- tokens and the next-token readout ------------------------------------------------------------------
st.header(t("smollm2.tokens"))
page.prose("tokens")
st.markdown(t("smollm2.token_count", n=p.kept, last=p.kept - 1))
st.markdown(inline_tokens(p.tokens))
if p.partial:
    st.caption(t("smollm2.bytes_note", partial=p.partial))
st.markdown(
    t("smollm2.readout", last=p.tokens[-1])
    + "\n"
    + "\n".join(
        t("smollm2.readout_item", token=tok, prob=float(pr))
        for tok, pr in zip(ov.readout.tokens, ov.readout.probs, strict=True)
    )
)
if any("⟨" in tok for tok in ov.readout.tokens):
    st.caption(t("smollm2.readout_bytes"))


# -- every head of a layer ----------------------------------------------------------------------------
@page.section(heading="smollm2.heads", prose="heads", owns=("smollm2_layer", "smollm2_heads"))
def heads_section() -> None:
    """Owns the layer picker: it changes only the nine maps."""
    layer = st.selectbox(
        t("smollm2.layer"),
        list(range(1, f.layers + 1)),
        key="smollm2_layer",
        **URL,
        help=t("smollm2.layer_help", layers=f.layers),
    )
    lh = layer_heads(text, int(layer))
    plot(
        F.token_heatmap_grid(
            lh.weights,
            lh.tokens,
            t("smollm2.heads_title", layer=layer, heads=f.heads),
            panel_titles=[t("smollm2.head_panel", head=h + 1, kv=kv) for h, kv in enumerate(lh.kv)],
            kind="weights",
            value_label=t("smollm2.weight"),
            zmin=0.0,
            zmax=1.0,
            cols=f.group,
            panel_height=230,
        ),
        "smollm2_heads",
    )
    st.caption(t("smollm2.heads_caption", group=f.group, kv_heads=f.kv_heads, heads=f.heads))


heads_section()


# -- the relative property ------------------------------------------------------------------------------
@page.section(heading="smollm2.shift", prose="shift", owns=("smollm2_shift", "smollm2_shift_layers"))
def shift_section() -> None:
    """Owns the shift: it changes only the test."""
    k = st.slider(
        t("smollm2.shift_k"),
        1,
        ch.MAX_SHIFT,
        ch.DEFAULT_SHIFT,
        key="smollm2_shift",
        **URL,
        help=t("smollm2.shift_help", max_shift=ch.MAX_SHIFT),
    )
    n = ch.shift_length(p)
    if n < p.kept:
        st.caption(t("smollm2.shift_first", n=n, of=p.kept))
    # The test runs SmolLM2 a second time: only once the learner has predicted (a new sentence
    # costs one run of the model, not two).
    if ask_first(ch.shift_prompt(int(k), lang), lambda: ch.shift_question(shift_test(text, int(k)), lang)) is None:
        return
    test = shift_test(text, int(k))  # cached: the run that answered
    fig = F.lines(
        list(range(1, f.layers + 1)),
        {t("smollm2.series_smol"): test.drawn},
        t("smollm2.shift_title", shift=test.shift),
        x_title=t("smollm2.layer"),
        y_title=t("smollm2.largest_change", floor=ch.DRAWN_FROM),
        log_y=True,
        markers=True,
        height=320,
    )
    minilm_line = {t("smollm2.minilm_line", minilm_shift=test.minilm_shift): max(test.minilm_largest, 1e-12)}
    plot(F.mark_lines(fig, y=minilm_line), "smollm2_shift_layers")
    st.markdown(
        t(
            "smollm2.shift_numbers",
            shift=test.shift,
            n=test.n,
            largest=test.largest,
            logits=test.logits,
            scale=test.logit_scale,
            minilm_shift=test.minilm_shift,
            minilm_n=test.minilm_n,
            minilm=test.minilm_largest,
            moved=test.minilm_moved,
            hidden=test.minilm_hidden,
        )
    )
    if test.minilm_shift < test.shift:
        st.caption(t("smollm2.minilm_capped", minilm_shift=test.minilm_shift, minilm_n=test.minilm_n))


shift_section()


# -- frequencies ---------------------------------------------------------------------------------------
@page.section(heading="smollm2.freq", prose="freq", owns=("smollm2_wavelength", "smollm2_usage"))
def frequency_section() -> None:
    """Owns its two charts; no control (the frequencies are the model's, the sizes the sentence's)."""
    fr = frequencies()
    pairs = list(range(fr.wavelength.size))
    wave = F.lines(
        pairs,
        {t("smollm2.wavelength"): fr.wavelength},
        t("smollm2.wavelength_title", base=fr.base, head_dim=fr.head_dim),
        x_title=t("smollm2.pair"),
        y_title=t("smollm2.wavelength_axis"),
        log_y=True,
        markers=True,
        height=320,
    )
    plot(F.mark_lines(wave, y={t("smollm2.context_line", context=fr.context): fr.context}), "smollm2_wavelength")
    st.markdown(t("smollm2.freq_facts", never=fr.never_turn, pairs=fr.wavelength.size, first=fr.first_slow))
    mine, ref = pair_usage(text), pair_usage(ch.REFERENCE)
    plot(
        F.lines(
            pairs,
            {
                t("smollm2.usage_q_mine"): mine.q_mean,
                t("smollm2.usage_k_mine"): mine.k_mean,
                t("smollm2.usage_q_ref"): ref.q_mean,
                t("smollm2.usage_k_ref"): ref.k_mean,
            },
            t("smollm2.usage_title", layers=f.layers),
            x_title=t("smollm2.pair"),
            y_title=t("smollm2.usage_axis"),
            markers=True,
            height=360,
        ),
        "smollm2_usage",
    )
    u = ch.usage_facts(mine, fr)
    st.markdown(
        t(
            "smollm2.usage_facts",
            q_top=u.q_top,
            k_top=u.k_top,
            slow_q=u.slow_q,
            fast_q=u.fast_q,
            slow_k=u.slow_k,
            fast_k=u.fast_k,
            first=fr.first_slow,
        )
    )


frequency_section()


# -- attention sinks ---------------------------------------------------------------------------------------
@page.section(heading="smollm2.sinks", prose="sinks", owns=("smollm2_sinks",))
def sinks_section() -> None:
    """Owns the sinks table; no control."""
    plot(
        minilm_figures.layer_head_maps(
            ov.sink_panels,
            t("smollm2.sinks_title"),
            panel_titles=[t("smollm2.sinks_panel", first=p.tokens[0])],
            value_label=t("smollm2.share"),
            cols=1,
            panel_height=min(720, 22 * f.layers + 60),
        ),
        "smollm2_sinks",
    )
    (hi, hv), (lo, lv) = ov.strongest, ov.weakest
    st.markdown(
        t(
            "smollm2.sinks_facts",
            hi=hi,
            hv=hv,
            lo=lo,
            lv=lv,
            above=ov.above(0.5),
            heads=f.heads,
            layers=f.layers,
            uniform=ov.uniform,
            n=p.kept,
        )
    )


sinks_section()


# -- past the trained context (precomputed: lab/smollm2_long.py) -----------------------------------------
long_view = cached(long_ch.section)


@page.section(heading="smollm2.long.heading", prose="long", owns=("smollm2_long",))
def long_context_section() -> None:
    """Owns the loss curves; no control (computed ahead by `python -m lab.regenerate smollm2_long`)."""
    view = long_view(lang)
    if view is None:
        st.info(t("smollm2.long.missing"))
        return
    st.markdown(view.setup)
    plot(view.figure, "smollm2_long")
    st.markdown("\n\n".join(view.sentences))
    st.caption(view.cost)


long_context_section()
