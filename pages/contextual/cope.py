"""Chapter: CoPE — gates decide what counts; positions are counts of counted tokens."""

import numpy as np
import streamlit as st

from encoders import cope as enc
from explain import figures as F
from explain.chapters import cope as ch
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation

KEY = "cope"
header(
    KEY,
    enc.PAPER,
    sources=(enc.contextual_positions, enc.gate_logits_from_counted, enc.integer_position_logits,
             enc.interpolate_position_logits, enc.CoPE.positions, enc.CoPE.logit_terms),
)
prose(KEY, "intro")

# Bounded caches: an entry holds a few n × n float arrays (n ≤ 256), shared by every session.
count_view = st.cache_data(max_entries=32)(ch.count_view)
interpolation_view = st.cache_data(max_entries=32)(ch.interpolation_view)
attention_view = st.cache_data(max_entries=16)(ch.preferred_count_attention)
model_view = st.cache_data(max_entries=16)(ch.model_view)
word_choices = st.cache_data(max_entries=32)(ch.word_choices)

tokens = sentence_tokens()
text = st.session_state.sentence
n = len(tokens)
# A new, shorter sentence must not leave a remembered slider value past its new maximum.
for _key, _top in (("cope_query", n - 1), ("cope_key", n - 1)):
    if st.session_state.get(_key, 0) > _top:
        st.session_state.pop(_key)
SIGN = "p_ij = Σ_{t=j..i} g_it (count back from query i)"

# ----------------------------------------------------------------------------- what counts
st.subheader("What counts? (gates set by hand)")
prose(KEY, "what-counts")
words = word_choices(text)
c1, c2 = st.columns([3, 2])
unit = c1.radio("What counts", ch.UNITS, index=2, horizontal=True, key="cope_unit", **URL,
                help="Which tokens open their gate. Sentence ends are . ! ? (and 。！？…); a paragraph "
                     "ends before a blank line and at the end of the text.")
word = ""
if unit == "a word you pick":
    if words:
        default = words.index("alice") if "alice" in words else 0
        if st.session_state.get("cope_word") not in words:
            st.session_state.pop("cope_word", None)
        word = c2.selectbox("The word that counts", words, index=default, key="cope_word", **URL,
                            help="Every occurrence of this word (any capitalisation) opens its gate.")
    else:
        c2.info("Your text has no words to pick; type a sentence with words in the sidebar.")
c3, c4, c5 = st.columns(3)
sharpness = c3.slider("Sharpness s (gate logit ±s)", 0.0, ch.MAX_SHARPNESS, ch.MAX_SHARPNESS, 0.5,
                      key="cope_sharpness", **URL,
                      help=f"0 to {ch.MAX_SHARPNESS:g}. Counted tokens get gate σ(+s), the others σ(−s). "
                           "0: every gate is ½ (soft). 10: gates within 0.00005 of 1 and 0 (hard).")
all_open = c4.toggle("Open every gate (g = 1)", value=False, key="cope_all_open", **URL,
                     help="Every gate exactly 1: CoPE becomes ordinary relative positions, p = i − j + 1.")
npos = c5.slider("Positions P (p_max)", 2, ch.MAX_NPOS, ch.MAX_NPOS, key="cope_npos", **URL,
                 help=f"2 to {ch.MAX_NPOS} position embeddings e[0] … e[P − 1]; larger counts are "
                      "clamped to P − 1. The paper uses 64 for a context of 1024 tokens.")
cv = count_view(text, unit, word, sharpness, all_open, npos)
n_counted = int(cv.counted.sum())
what = "every token (all gates open)" if all_open else unit
st.markdown(f"{n_counted} of {n} tokens count as **{what}**.")
if n_counted == 0 and not all_open:
    st.info("No token of your text counts under this choice, so every gate is σ(−s) and the counts "
            "stay near 0. Try another unit, lower the sharpness, or add a full stop.")

# ---------------------------------------------------------------------------------- gates
st.subheader("The gates g_ij")
prose(KEY, "gates")
plot(F.token_heatmap(cv.gates, cv.tokens, cv.tokens, f"Gates g_ij = σ(gate logit) — counting {what}",
                     kind="weights", value_label="gate g_ij"), "gates")

# ------------------------------------------------------------------------------ positions
st.subheader("The positions p_ij: counts, not distances")
prose(KEY, "positions")
# The answer is computed: CoPE's own positions with every gate open, against each candidate formula.
_open = count_view(text, unit, word, sharpness, True, ch.MAX_NPOS).positions
_i, _j = np.tril_indices(n)
_candidates = {
    "i − j + 1: the ordinary relative distance (plus one)": _i - _j + 1.0,
    "j − i: the key's offset, negative into the past": _j - _i + 0.0,
    "1 for every pair": np.ones(_i.size),
    "i + 1: the query's own position, counting from 1": _i + 1.0,
}
_clamped = {k: np.minimum(v, ch.MAX_NPOS - 1) for k, v in _candidates.items()}
_match = [k for k, v in _clamped.items() if np.allclose(_open[_i, _j], v)]
if n > 1 and len(_match) == 1:
    predict(
        "cope_q", "Open **every** gate (g = 1 for all tokens). Then the position p_ij of key j seen from query "
        "i is…", list(_candidates), _match[0],
        "Every token between j and i now counts, so p_ij = Σ_{t=j..i} 1 = i − j + 1: CoPE with all gates "
        "open is ordinary relative position (measured on your text, capped at P − 1 = "
        f"{ch.MAX_NPOS - 1}). The proof below shows it symbolically; switch *Open every gate* on to see it.",
    )
with st.expander("Proof: with every gate open, p_ij = i − j + 1 (checked by sympy)"):
    show_derivation("cope-all-gates-open", key_prefix="cope_proof", compact=True)
plot(F.token_heatmap(cv.positions, cv.tokens, cv.tokens,
                     f"Positions p_ij (clamped at P − 1 = {npos - 1}) — counting {what}",
                     kind="index", value_label="p_ij (count back)", zmin=0.0, zmax=float(npos - 1)
                     if cv.n_clamped else None),
     "positions")
if all_open:
    i_idx, j_idx = np.tril_indices(n)
    rel = (i_idx - j_idx + 1).astype(float)
    diff = np.abs(cv.positions[i_idx, j_idx] - np.minimum(rel, npos - 1)).max()
    st.success(f"Every gate is open: on and below the diagonal p_ij equals min(i − j + 1, P − 1) in every "
               f"cell (largest difference {diff:.1e}).")

# ---------------------------------------------------------------------------------- query
st.subheader("How far back, in your unit?")
prose(KEY, "query")
query = st.slider("Query token i", 0, n - 1, n - 1, key="cope_query", **URL,
                  help=f"Which row to read, 0 to {n - 1} (the last token by default).") if n > 1 else 0
row = cv.positions[query, : query + 1]
fig = F.bars(cv.tokens[: query + 1], row,
             f"Row i = {query}: how many counted tokens lie between each key and the query",
             x_title="key j (j ≤ i)", y_title="p_ij (count back)",
             highlight=[j for j in range(query + 1) if cv.counted[j] and not all_open])
plot(fig, "query_bars")
st.caption("Orange bars: keys that count. Blue bars: keys that do not.")
first = row[0]
st.markdown(
    f"Query {inline_tokens([cv.tokens[query]])} (position {query}) puts the first token "
    f"{inline_tokens([cv.tokens[0]])} at p = {first:.2f} and itself at p = {row[-1]:.2f}."
)

# ---------------------------------------------------------------------------------- p_max
st.subheader("P: few positions are enough")
prose(KEY, "pmax")
if cv.n_clamped:
    st.warning(f"The largest count on your text is {cv.unclamped_max:.2f}; with P = {npos}, "
               f"{cv.n_clamped:,} cells were clamped to {npos - 1}.")
else:
    st.info(f"The largest count on your text is {cv.unclamped_max:.2f}, below P − 1 = {npos - 1}: "
            "nothing is clamped. Lower P or open every gate to see the clamp.")

# --------------------------------------------------------------------------- interpolation
st.subheader("Fractional positions: interpolating e[p]")
prose(KEY, "interpolation")
if st.session_state.get("cope_key", 0) > query:
    st.session_state.pop("cope_key")
key_j = st.slider("Key token j", 0, query, 0, key="cope_key", **URL,
                  help=f"Which key of query {query}'s row, 0 to {query}.") if query > 0 else 0
iv = interpolation_view(text, unit, word, sharpness, all_open, npos, query, key_j, seed())
# A window of counts around p: 64 random-looking values would hide the two that matter.
lo_n, hi_n = max(0, iv.lo - 6), min(npos - 1, iv.hi + 6)
fig = F.lines(iv.n[lo_n:hi_n + 1], {"z_i[n] = q_i·e[n] (head 1, untrained)": iv.z[lo_n:hi_n + 1]},
              f"Position logits of query {query} at integer counts {lo_n}–{hi_n}, and p_ij for key {key_j}",
              x_title="count n", y_title="q_i·e[n]", markers=True)
F.mark_lines(fig, x={f"p = {iv.p:.3f}": iv.p}, y={f"interpolated {iv.value:.3f}": iv.value})
plot(fig, "interpolation")
st.markdown(
    f"p = {iv.p:.3f} lies between ⌊p⌋ = {iv.lo} and ⌈p⌉ = {iv.hi}; the weight on e[{iv.hi}] is "
    f"w = p − ⌊p⌋ = {iv.w:.4f}, so q·e[p] = {iv.w:.4f} × ({iv.z[iv.hi]:.3f}) + {1 - iv.w:.4f} × "
    f"({iv.z[iv.lo]:.3f}) = {iv.value:.3f}."
)

# ------------------------------------------------------------------------------- attention
st.subheader("Attention to “the last sentence”")
prose(KEY, "attention")
a1, a2, a3 = st.columns(3)
target = a1.slider("Preferred count", 0, ch.MAX_TARGET, 1, key="cope_target", **URL,
                   help=f"0 to {ch.MAX_TARGET}: q_i·e[n] is high only for this count n.")
strength = a2.slider("Strength", 0.0, ch.MAX_PREFERENCE, 8.0, 0.5, key="cope_strength", **URL,
                     help=f"0 to {ch.MAX_PREFERENCE:g}: the position logit for the preferred count.")
content_scale = a3.slider("Content logits (toy model)", 0.0, 2.0, 0.0, 0.1, key="cope_content", **URL,
                          help="0 to 2: how much of the untrained model's q·k/√d to add.")
av = attention_view(text, unit, word, sharpness, all_open, npos, target, strength, content_scale, seed())
plot(F.token_heatmap(av.weights, av.tokens, av.tokens,
                     f"Attention weights when the head prefers count {target} — counting {what}",
                     kind="weights", value_label="weight"), "attention")

# ----------------------------------------------------------------------------------- alice
st.subheader("How many times does a word appear in the last sentence?")
prose(KEY, "alice")
if words:
    default = words.index("alice") if "alice" in words else 0
    if st.session_state.get("cope_alice_word") not in words:
        st.session_state.pop("cope_alice_word", None)
    asked = st.selectbox("The word to count", words, index=default, key="cope_alice_word", **URL,
                         help="Any word of your text (capitalisation ignored).")
    hard = count_view(text, "sentence ends", "", float("inf"), False, ch.MAX_NPOS)
    count, in_last = ch.last_sentence_count(hard, asked)
    hits = [j for j in range(n) if in_last[j] and ch.token_key(cv.tokens[j]) == ch.token_key(asked)]
    plot(F.bars(hard.tokens, in_last.astype(float),
                "Keys with the last token's sentence count (1 = in the last sentence)",
                x_title="key j", y_title="in the last sentence", highlight=hits, height=300),
         "alice")
    st.markdown(f"Answer: {inline_tokens([asked])} appears **{count}** time(s) in the last sentence "
                f"(orange bars), and {sum(ch.token_key(t) == ch.token_key(asked) for t in tokens.tokens)} "
                "time(s) in the whole text.")
else:
    st.info("Your text has no words to count.")

# ---------------------------------------------------------------------- the seed examples
st.subheader("Token distance vs counted distance: two small puzzles")
prose(KEY, "seeds")
seed_view = st.cache_data(max_entries=32)(ch.seed_example)
e1, e2, e3, e4 = st.columns([3, 2, 2, 2])
example = e1.radio("Sequence", tuple(ch.SEED_EXAMPLES), key="cope_example", **URL,
                   help="The two sequences of the seed review; the query is the last token.")
gap = e2.slider("Query's distance to the last x / b", 1, ch.MAX_GAP,
                3 if example.startswith("yyyy") else 1, key="cope_gap", **URL,
                help=f"1 to {ch.MAX_GAP} tokens: how far the last x (or b) lies behind the query.")
delta = e3.slider("Content bonus Δ", 0.0, 10.0, 3.0, 0.5, key="cope_delta", **URL,
                  help="0 to 10: how much more the query's content matches the sought token.")
slope = e4.slider("Recency slope", 0.0, 5.0, 1.0, 0.1, key="cope_slope", **URL,
                  help="0 to 5: the position penalty per step of distance (tokens, or counts for CoPE).")
sv = seed_view(example, gap, delta, slope)
sought = ch.SEED_EXAMPLES[example][0]
plot(F.token_bars(sv.tokens, sv.weights,
                  f"Attention of the last token (query) — {' '.join(sv.tokens)}",
                  x_title="key j (query is the last token)", y_title="attention weight"), "seed_example")
last = max(j for j, t in enumerate(sv.tokens[:-1]) if t == sought)
rel = sv.weights["relative: −slope·(i − j)"][last]
cp = sv.weights["CoPE: −slope·p_ij"][last]
st.markdown(
    f"Weight on the last `{sought}` (position {last}, {len(sv.tokens) - 1 - last} tokens back, "
    f"{sv.cope_positions[last]:.0f} counted `{sought}` back): relative **{rel:.3f}**, CoPE **{cp:.3f}**."
)

# ----------------------------------------------------------------------------------- model
st.subheader("Gates an untrained model computes from q·k")
prose(KEY, "model")
m1, m2 = st.columns(2)
head = m1.slider("Head", 1, ch.N_HEADS, 1, key="cope_head", **URL, help=f"1 to {ch.N_HEADS}: each head counts its own way.")
variant = m2.radio("Variant", ("paper", "official"), horizontal=True, key="cope_variant", **URL,
                   help="paper: the appendix listing (position logits added after 1/√d). official: "
                        "facebookresearch/RAM's default (position logits divided by √d as well).")
mv = model_view(text, seed(), npos, variant)
g1, g2 = st.columns(2)
with g1:
    plot(F.token_heatmap(mv.gates[head - 1], mv.tokens, mv.tokens, f"Head {head}: gates σ(q·k/√d)",
                         kind="weights", value_label="gate g_ij"), "model_gates")
with g2:
    plot(F.token_heatmap(mv.positions[head - 1], mv.tokens, mv.tokens, f"Head {head}: positions p_ij",
                         kind="index", value_label="p_ij (count back)"), "model_positions")
plot(F.token_heatmap(mv.weights[head - 1], mv.tokens, mv.tokens,
                     f"Head {head}: attention weights, CoPE ({variant})", kind="weights", value_label="weight"),
     "model_weights")
st.caption(f"Relative quantity on every map: {SIGN}.")
st.page_link("pages/labs/toy_tasks.py", label="Try it: train CoPE on Flip-Flop in the toy-task lab",
             icon=":material/model_training:")
