"""Lab: a real pretrained model (all-MiniLM-L6-v2) on the learner's sentence."""

import numpy as np
import streamlit as st

from encoders import minilm as enc
from explain import figures as F
from explain.chapters import minilm as ch
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose, seed

KEY = "minilm"
header(KEY, enc.PAPER, sources=(enc.MiniLM.embed, enc.EncoderLayer.forward, enc.WordPiece.word_pieces,
                               ch.target_masses))
prose(KEY, "intro")


@st.cache_resource(show_spinner="Loading MiniLM (90 MB, once per server)…")
def _warm() -> bool:
    """Loads the model and tokenizer once per server process (encoders.minilm.load keeps them);
    read-only afterwards."""
    enc.load()
    return True


_warm()
wordpieces = st.cache_data(ch.wordpieces, max_entries=32)
run = st.cache_data(ch.run, max_entries=32)
position_heads = st.cache_data(ch.position_heads, max_entries=16)
position_table = st.cache_data(ch.position_table)



@st.cache_data(max_entries=16)
def grid_figure(text: str):
    """72 small heatmaps cost ~0.3 s to build: cached on the text like the numbers they show."""
    base, heads = run(text), position_heads(text)
    marks = {(h.layer - 1, h.head - 1): h.target.split(" ")[0] for h in heads.labels}
    thumbs, block = ch.thumbnail_weights(base.weights)
    title = "Attention of all 6 layers × 12 heads" + (f" (each cell = {block}×{block} word pieces)" if block > 1 else "")
    return F.attention_thumbnails(thumbs, title, marks=marks)


text = st.session_state.get("sentence", "")
pieces = wordpieces(text)
if pieces.kept == 0:
    st.info("There is no text to work on yet. Type a sentence in the sidebar (or pick an example) and "
            "this page will run the model on it.")
    st.stop()
if pieces.truncated:
    st.warning(f"Your text has {pieces.n_found:,} word pieces; this page runs the model on the first "
               f"{pieces.kept} (plus [CLS] and [SEP]). The model itself stops at {enc.MAX_POSITIONS} positions.")

# -- tokens ------------------------------------------------------------------------------------
st.subheader("Its own tokens")
prose(KEY, "tokens")
n = len(pieces.tokens)
unk = sum(t == "[UNK]" for t in pieces.tokens)
st.markdown(f"**{n} tokens** ({pieces.kept} word pieces + [CLS] + [SEP]"
            + (f"; {unk} [UNK]" if unk else "") + "):")
st.markdown(inline_tokens(pieces.tokens))
table = position_table()
st.caption(f"Position table: {table.shape[0]} rows × {table.shape[1]} numbers; your sentence uses rows 0–{n - 1}.")

# -- all heads ---------------------------------------------------------------------------------
st.subheader("Every head, every layer")
prose(KEY, "grid")
base = run(text)
heads = position_heads(text)
plot(grid_figure(text), "minilm_grid")

c1, c2 = st.columns(2)
first = heads.labels[0] if heads.labels else None  # open on a head with a measured role
layer = c1.selectbox("Layer", list(range(1, 7)), index=(first.layer - 1) if first else 0, key="minilm_layer", **URL,
                     help="1–6, bottom to top.")
head = c2.selectbox("Head", list(range(1, 13)), index=(first.head - 1) if first else 0, key="minilm_head", **URL,
                    help="1–12.")
role = next((h for h in heads.labels if (h.layer, h.head) == (layer, head)), None)
big_title = f"Layer {layer}, head {head}" + (f" — attends to {ch.TARGET_TEXT[role.target]}" if role else "")
plot(F.lab_map(base.weights[layer - 1, head - 1], base.tokens, big_title, kind="weights", value_label="weight",
               height=int(min(680, max(380, 150 + 16 * n)))), "minilm_big")
m = heads.sentence[layer - 1, head - 1]
st.caption("This head on your sentence: " + " · ".join(f"{t} {v:.2f}" for t, v in zip(ch.TARGETS, m)))

# -- position heads ----------------------------------------------------------------------------
st.subheader("Heads that attend by position")
prose(KEY, "heads")
src = st.radio("Measured on", ("the reference paragraph", "your sentence"), horizontal=True, key="minilm_src", **URL,
               help="The labels always come from the fixed reference paragraph, so they do not change with "
                    "what you type; the numbers can be shown for either text.")
masses = heads.reference if src.startswith("the reference") else heads.sentence
plot(F.layer_head_maps(np.moveaxis(masses, -1, 0),
                       f"Mean attention share per head on {src}",
                       panel_titles=[f"on {ch.TARGET_TEXT[t]}" for t in ch.TARGETS],
                       value_label="share", cols=2, panel_height=250), "minilm_masses")
if heads.labels:
    st.markdown(f"**Labelled heads** (share ≥ {heads.threshold:.0%} on one target in the reference paragraph):")
    st.markdown("\n".join(
        f"- layer {h.layer}, head {h.head}: attends to **{ch.TARGET_TEXT[h.target]}** — {h.mass:.2f} on the reference, "
        f"{h.mass_sentence:.2f} on your sentence"
        for h in heads.labels))
else:
    st.markdown(f"No head puts {heads.threshold:.0%} or more on one target.")

# -- position id experiment ---------------------------------------------------------------------
st.subheader("Move the position ids")
prose(KEY, "experiment")
# One labelled head per role (at most four), asked about before the experiment below answers it.
asked, seen_roles = [], set()
for h in heads.labels:
    if h.target not in seen_roles and len(asked) < 4:
        asked.append(h)
        seen_roles.add(h.target)
if len(asked) >= 2:
    moved10 = ch.compare(base, run(text, "shift", min(10, max(0, enc.MAX_POSITIONS - n)), 0)).change
    calm = min(asked, key=lambda h: moved10[h.layer - 1, h.head - 1])
    predict(
        "minilm_q", "Every position id is shifted by 10 (the same words, ten places further along). Which of "
        "these heads will change its attention the **least**?",
        [(h.layer, h.head) for h in asked], (calm.layer, calm.head),
        f"Layer {calm.layer}, head {calm.head} (it attends to {ch.TARGET_TEXT[calm.target]}) moved least: "
        + ", ".join(f"layer {h.layer} head {h.head} moved {moved10[h.layer - 1, h.head - 1]:.2f}" for h in asked)
        + " (half the summed change of a row; 0 = unchanged, 1 = completely elsewhere). Set *shift by k* to 10 "
        "below to see every head.",
        format_func=lambda lh: next(f"layer {h.layer}, head {h.head} (attends to {ch.TARGET_TEXT[h.target]})"
                                    for h in asked if (h.layer, h.head) == lh),
    )
e1, e2 = st.columns(2)
mode = e1.radio("Position ids", ch.MODES, horizontal=True, key="minilm_mode", **URL,
                format_func={"shift": "shift by k", "shuffle": "shuffle the words", "reverse": "reverse the words"}.get,
                help="Shift: every id + k. Shuffle / reverse: the word pieces keep their places, their ids are "
                     "permuted; [CLS] and [SEP] keep theirs.")
max_shift = max(0, enc.MAX_POSITIONS - n)
shift = e2.slider("k (shift)", 0, max_shift, min(10, max_shift), key="minilm_shift", **URL, disabled=mode != "shift",
                  help=f"0–{max_shift}: the last id must stay ≤ {enc.MAX_POSITIONS - 1}, the table's last row.")
shift = min(int(shift), max_shift)  # a value kept from a shorter sentence (or a URL) may exceed the new bound
pc = ch.compare(base, run(text, mode, shift, seed()))
ids_text = ", ".join(str(int(v)) for v in pc.position_ids[:24]) + (" …" if n > 24 else "")
st.caption(f"Position ids used: {ids_text}")
plot(F.layer_head_maps(pc.change[None], "How much each head's attention moved (½ Σⱼ |Δw|, mean over queries)",
                       panel_titles=[{"shift": f"ids shifted by {shift}", "shuffle": "ids shuffled (sidebar seed)",
                                      "reverse": "ids reversed"}[mode]],
                       value_label="moved", cols=1, panel_height=300), "minilm_change")
most = np.unravel_index(int(np.argmax(pc.change)), pc.change.shape)
least = np.unravel_index(int(np.argmin(pc.change)), pc.change.shape)
st.markdown(
    f"Most moved: layer {most[0] + 1}, head {most[1] + 1} ({pc.change[most]:.2f}); least: layer {least[0] + 1}, "
    f"head {least[1] + 1} ({pc.change[least]:.2f}). The last layer's output vectors changed by "
    f"**{pc.hidden_change:.0%}** (‖Δh‖ / ‖h‖)."
)
prose(KEY, "experiment-read")
