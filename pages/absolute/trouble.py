"""Chapter: The trouble with absolute positions — shift, length, and no direct distance."""

import numpy as np
import streamlit as st

from encoders.text import MAX_TOKENS, tokenize
from explain import figures as F
from explain.chapters import trouble as ch
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens

KEY = "trouble"
header(KEY, sources=(ch.shift_experiment, ch.length_experiment, ch.circular_gap, ch.four_terms,
                     ch.relative_part, ch.toeplitz_deviation))
prose(KEY, "intro")

shift_experiment = st.cache_data(ch.shift_experiment, max_entries=64)
length_experiment = st.cache_data(ch.length_experiment, max_entries=64)
four_terms = st.cache_data(ch.four_terms, max_entries=64)
CLASSIC = "I like CV"
SHOW_TOKENS = 14  # tokens spelled out in the "before / after" lines; the figures show them all
SMALL = 40  # up to this many tokens a score map is drawn alone, with its numbers in the cells


def token_line(tokens, start: int) -> str:
    """Tokens as safe code spans with the positions they occupy, cut after SHOW_TOKENS."""
    head = inline_tokens(tokens[:SHOW_TOKENS])
    more = f" … and {len(tokens) - SHOW_TOKENS} more" if len(tokens) > SHOW_TOKENS else ""
    span = f"positions {start}–{start + len(tokens) - 1}" if len(tokens) > 1 else f"position {start}"
    return f"{head}{more} ({span})"


# -- 1. shift ------------------------------------------------------------------------------------
st.header("1 · Shift: one word in front moves everything")
prose(KEY, "shift")
# The answer is measured by the same experiment the section draws, on the classic example.
_classic = tokenize(CLASSIC, max_tokens=MAX_TOKENS).tokens
_well = tokenize("Well,", max_tokens=ch.MAX_PREFIX_TOKENS).tokens
_probe = shift_experiment(_classic, _well, seed())
_change = float(_probe.logits_diff[1, 2])  # query "like" (i = 1), key "CV" (j = 2)
_options = ("it stays the same: the two words are still one apart", "it changes")
predict(
    "trouble_q", "Put “Well,” in front of “I like CV” with sinusoidal positions. The score of the query "
    "“like” on the key “CV”…", _options, _options[1] if abs(_change) > 1e-6 else _options[0],
    f"Measured: the score moves by **{_change:+.3f}** (the toy layer, seed {seed()}). Both words moved by {len(_well)} "
    "positions, so their vectors changed, and the score mixes the words with their absolute positions — "
    "the distance alone does not fix it.",
)
c1, c2 = st.columns([2, 3])
choice = c1.radio(
    "Sentence to shift", [f"“{CLASSIC}” (the classic example)", "Your sentence from the sidebar"],
    key="trouble_base", **URL, help="The words whose scores are compared with and without the prefix.",
)
prefix_text = c2.text_input(
    "Prefix put in front", value="Well,", max_chars=ch.MAX_PREFIX_CHARS, key="trouble_prefix", **URL,
    help=f"Up to {ch.MAX_PREFIX_CHARS} characters; the first {ch.MAX_PREFIX_TOKENS} tokens are used. "
    "Press Enter to apply. Empty: no shift.",
)
use_classic = choice.startswith("“")
base = tokenize(CLASSIC if use_classic else st.session_state.get("sentence", ""), max_tokens=MAX_TOKENS)
prefix = tokenize(prefix_text[: ch.MAX_PREFIX_CHARS], max_tokens=ch.MAX_PREFIX_TOKENS)
k = len(prefix)

if base.empty:
    st.info("Your sidebar sentence is empty. Type one there, or pick the classic example above.")
else:
    if base.truncated:
        st.caption(f"Your sentence has {base.n_found:,} tokens; the first {len(base)} are shifted.")
    if prefix.truncated:
        st.caption(f"The prefix has {prefix.n_found} tokens; the first {ch.MAX_PREFIX_TOKENS} are used.")
    toks = list(base.tokens)
    st.markdown("**Without prefix:** " + token_line(toks, 0))
    if k:
        st.markdown(
            "**With prefix:** " + inline_tokens(prefix.tokens) + " + the same words, now at "
            + (f"positions {k}–{k + len(toks) - 1}" if len(toks) > 1 else f"position {k}")
            + f" — every word moved by **k = {k}**."
        )
    else:
        st.info("The prefix is empty, so nothing moves and every difference below is exactly 0. "
                "Type a word or two, such as “Well,”.")
    r = shift_experiment(base.tokens, prefix.tokens, seed())

    st.subheader("The vector under each word")
    prose(KEY, "shift-vectors")
    m1, m2 = st.columns(2)
    m1.metric("Shift k", k)
    m2.metric("cos(old vector, new vector) — every word", f"{float(np.mean(r.pe_cosine)):.4f}",
              help=f"Spread across words: {float(np.ptp(r.pe_cosine)):.1e} (rounding only).")
    plot(F.token_heatmap(r.pe_after - r.pe_before, toks, None,
                         f"Change of the position vector under each word, p(i+{k}) − p(i)",
                         row_title="word (original position i)", col_title="channel (2f = sin, 2f+1 = cos)",
                         value_label="change", zmax=2.0, show_values=False), "shift_pe")

    st.subheader("The scores between the same words")
    prose(KEY, "shift-logits")
    lim = float(max(np.abs(r.logits_before).max(), np.abs(r.logits_after).max()))
    if len(toks) <= SMALL:
        s1, s2, s3 = st.columns(3)
        with s1:
            plot(F.token_heatmap(r.logits_before, toks, toks, "Scores without prefix", value_label="score",
                                 zmax=lim), "shift_before")
        with s2:
            plot(F.token_heatmap(r.logits_after, toks, toks, f"Scores with the prefix (shift {k})",
                                 value_label="score", zmax=lim), "shift_after")
        with s3:
            plot(F.token_heatmap(r.logits_diff, toks, toks, "Difference: with − without",
                                 value_label="change"), "shift_diff")
        numbers = st.container()
    else:  # long sentences: small multiples name rows and columns once, not once per cell
        plot(F.token_heatmap_grid(np.stack([r.logits_before, r.logits_after]), toks,
                                  f"Scores without and with the prefix (shift {k})", value_label="score",
                                  panel_titles=["without prefix", "with the prefix"], cols=2, panel_height=520),
             "shift_before_after")
        diff_col, numbers = st.columns(2)
        with diff_col:
            plot(F.token_heatmap_grid(r.logits_diff[None], toks, "Difference: with − without",
                                      value_label="change", panel_titles=["with − without"], cols=1,
                                      panel_height=440), "shift_diff")
    with numbers:
        d1, d2, d3 = st.columns(3)
        d1.metric("Largest |change|", f"{r.max_abs_change:.3f}")
        d2.metric("Mean |change|", f"{r.mean_abs_change:.3f}")
        d3.metric("Mean |score| before", f"{r.mean_abs_logit:.3f}",
                  help="For scale: the typical size of a score before the shift.")
        if k and r.max_abs_change > 0:
            i, j = r.largest_pair
            st.markdown(
                f"The largest change: query {inline_tokens([toks[i]])} (position {i} → {i + k}) scoring key "
                f"{inline_tokens([toks[j]])} (position {j} → {j + k}) goes from **{r.logits_before[i, j]:.3f}** "
                f"to **{r.logits_after[i, j]:.3f}**. Same two words, same distance {j - i:+d} (j − i), "
                "different score."
            )
        st.caption(
            f"Check: running the whole prefixed sentence and keeping the original words gives the same scores "
            f"(largest difference {r.prefixed_run_max_diff:.1e}, rounding)."
        )
    prose(KEY, "shift-relative")
    st.markdown(
        f"Position-free part (the same layer with no positional encoding): largest change "
        f"**{r.content_max_change:.1f}** — exactly zero."
    )

# -- 2. length -----------------------------------------------------------------------------------
st.header("2 · Length: positions the model never saw")
prose(KEY, "length")
l1, l2 = st.columns(2)
l_train = l1.slider("Training length L_train", 2, ch.MAX_TRAIN_LEN, 32, key="trouble_l_train", **URL,
                    help=f"The longest text seen in training: positions 0 … L_train − 1 (2–{ch.MAX_TRAIN_LEN}).")
l_test = l2.slider("Test length", 2, ch.MAX_TEST_LEN, 128, key="trouble_l_test", **URL,
                   help=f"The text given to the trained model (2–{ch.MAX_TEST_LEN} positions).")
L = length_experiment(l_train, l_test, seed())
beyond = l_test > l_train
if not beyond:
    st.info(f"The test text ({l_test} positions) fits inside training ({l_train}): every position was seen. "
            "Make the test longer than L_train to see the problem.")
prose(KEY, "length-matrix")
end = {f"end of training (L_train = {l_train})": l_train - 0.5} if beyond else {}
g1, g2 = st.columns(2)
with g1:
    fig = F.matrix_heatmap(L.pe, f"Sinusoidal: rows for all {l_test} positions", x_title="channel",
                           y_title="position p", value_label="PE", height=460)
    plot(F.mark_lines(fig, y=end), "length_sin")
with g2:
    fig = F.matrix_heatmap(L.learned_table, f"Learned: {l_train} rows, nothing after", x_title="channel",
                           y_title="position p", value_label="value", height=460)
    plot(F.mark_lines(fig, y=end), "length_learned")
if L.learned_error:
    st.warning(
        f"**The learned encoder refuses:** {L.learned_error} Positions {l_train}–{l_test - 1} have no vector, "
        "so the model cannot even run on this text. (In BERT or GPT-2 this is an index error.)"
    )
else:
    st.success(f"The learned table has a row for each of the {l_test} test positions.")
prose(KEY, "length-learned")

st.subheader("Which pairs see something new?")
prose(KEY, "length-angles")
pairs = np.arange(L.omega.size)
a1, a2 = st.columns(2)
with a1:
    plot(F.lines(pairs, {f"largest angle in training, (L_train − 1)·ω_f": L.train_max_angle,
                         f"largest angle at test, (test length − 1)·ω_f": L.test_max_angle,
                         "one full turn, 2π": np.full(pairs.size, 2 * np.pi)},
                 "Largest angle each pair reaches (log scale)", x_title="pair f (fast → slow)",
                 y_title="angle p·ω_f (radians)", log_y=True, dashed=("one full turn, 2π",), markers=True),
         "length_angles")
with a2:
    plot(F.lines(pairs, {"farthest new angle from every training angle": L.angle_gap,
                         "π, the farthest possible": np.full(pairs.size, np.pi)},
                 "New territory on each pair's circle", x_title="pair f (fast → slow)",
                 y_title="distance on the circle (radians)", dashed=("π, the farthest possible",), markers=True),
         "length_gap")
wrapped = int(L.wrapped_in_training.sum())
worst = int(np.argmax(L.angle_gap))
st.markdown(
    f"With L_train = {l_train}: **{wrapped}** of {pairs.size} pairs turned a full circle during training"
    + (f" (pairs 0–{wrapped - 1})" if wrapped > 1 else "")
    + (f"; the most new territory is on pair **{worst}**, up to **{L.angle_gap[worst]:.2f}** radians away "
       "from anything it saw." if beyond else ".")
)
st.subheader("The whole vector is new")
prose(KEY, "length-vectors")
step = float(np.linalg.norm(L.pe[1] - L.pe[0]))
fig = F.lines(np.arange(l_test), {"distance to the nearest training vector": L.nearest_distance,
                                  "step between neighbours, |p(i+1) − p(i)|": np.full(l_test, step)},
              "How far each position's vector is from everything seen in training", x_title="position p",
              y_title="Euclidean distance", dashed=("step between neighbours, |p(i+1) − p(i)|",))
plot(F.mark_lines(fig, x={f"L_train = {l_train}": l_train - 0.5} if beyond else {}), "length_nearest")

# -- 3. the four terms ---------------------------------------------------------------------------
st.header("3 · No direct distance: the four terms of a score")
prose(KEY, "terms")
tokens = sentence_tokens()
toks = list(tokens.tokens)
shift = max(k, 1)
T = four_terms(tokens.tokens, seed(), shift=shift)
names = list(T.terms)
plot(F.token_heatmap_grid(np.stack([T.terms[name] for name in names]), toks,
                          "The four terms of each score (one colour scale)", panel_titles=names,
                          value_label="score part", cols=2, panel_height=max(300, min(560, 120 + 16 * len(toks)))),
     "four_terms")
st.markdown(
    "| term | depends on the words | depends on the positions | mean size |\n|---|---|---|---|\n"
    + "\n".join(
        f"| {name} | {'no' if name == 'position–position' else 'yes'} "
        f"| {'no' if name == 'content–content' else 'yes (absolute)'} | {float(np.abs(T.terms[name]).mean()):.3f} |"
        for name in names
    )
)
st.caption(f"Check: the four terms add up to the layer's own scores (largest difference {T.sum_max_diff:.1e}).")
prose(KEY, "terms-which")

st.subheader("Does the position–position term depend on distance only?")
prose(KEY, "toeplitz")
n = len(toks)
if n < 2:
    st.info("A single token has no pair to compare: type at least two tokens in the sidebar.")
else:
    mats = T.position_maps
    t_cols = st.columns(3)
    for col, (name, mat) in zip(t_cols, mats.items()):
        with col:
            plot(F.matrix_heatmap(mat, f"Positions only: {name}", x_title="key position j",
                                  y_title="query position i", value_label="score part", height=400),
                 f"toeplitz_{list(mats).index(name)}")
            st.metric("Spread along the diagonals", f"{T.toeplitz[name]:.1e}",
                      help=f"Mean standard deviation along a diagonal; {T.toeplitz_relative[name]:.1e} "
                      "of the matrix's own standard deviation. 0 = depends on j − i only.")
    plot(F.lines(T.offsets, T.spread, "Spread of the values along each diagonal", x_title="offset j − i (key − query)",
                 y_title="standard deviation along the diagonal", markers=n <= 40), "toeplitz_spread")
    st.caption("The curves of p·p and of the relative part both lie at zero, one on top of the other.")
    prose(KEY, "relative-part")
    moved = (f" The layer's full scores moved by up to {r.max_abs_change:.2f} under your prefix in section 1."
             if k and not base.empty else "")
    st.markdown(
        f"Shifting every position by {shift}{' (your prefix length)' if k else ''} changes this relative part "
        f"by **{T.relative_shift_change:.1e}**: rounding only.{moved}"
    )
