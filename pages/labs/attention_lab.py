"""Lab: the learner's sentence through 2–4 registered encodings side by side."""

import numpy as np
import streamlit as st

from encoders import REGISTRY
from explain import figures as F
from explain.chapters import attention_lab as lab
from explain.chapters import common
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens

KEY = "attention-lab"


def short(method: str) -> str:
    """The encoding's name without its citation, for titles in narrow columns."""
    return REGISTRY[method].label.split(" (")[0]


header(KEY, None, sources=(lab.panel, lab.term_scales, common.run_tokens, lab.shift_test))
prose(KEY, "intro")

panel = st.cache_data(lab.panel, max_entries=64)
shift_test = st.cache_data(lab.shift_test, max_entries=16)
length_test = st.cache_data(lab.length_test, max_entries=8)



def who_label(head):
    return "mean over heads" if head is None else f"head {head + 1}"


# Figures are cached too (on the same primitives as the numbers): building a plotly heatmap costs
# ~50–70 ms, far more than the attention itself, and most reruns change only one section.
@st.cache_data(max_entries=64)
def panel_figure(text, seed_, method, n_heads, causal, dial, off, head, shown, zmax, height):
    p = panel(text, seed_, method, n_heads, causal, dial, off)
    if shown == "attention weights":
        z, kind, value_label = lab.pick_head(p.weights, head), "weights", "weight"
    else:
        part = p.position if shown.startswith("position") else p.content
        z, kind, value_label = lab.pick_head(part, head), "signed", "logit part"
    who = who_label(head)
    title = f"{short(method)}: {shown.replace(' alone', '')}, {who}"
    # Two panels per row: at most 20 token labels per axis, so rotated labels do not run together.
    return F.lab_map(z, p.tokens, title, kind=kind, value_label=value_label, zmax=zmax, height=height,
                     max_ticks=20)


@st.cache_data(max_entries=16)
def shift_figure(text, seed_, methods, prefix, n_heads, causal, head):
    sh = shift_test(text, seed_, methods, prefix, n_heads, causal, head)
    who = who_label(head)
    return F.labelled_bars([short(m) for m in sh.methods], sh.max_change,
                           f"Largest change of a weight among the original words after a {len(sh.prefix)}-token "
                           f"prefix ({who})", y_title="max |Δ weight| (log scale)", log_y=True, floor=1e-17,
                           highlight=[k for k, c in enumerate(sh.changed) if c])


@st.cache_data(max_entries=16)
def length_figures(text, seed_, methods, train_len, length, n_heads, causal, head, pick):
    lt = length_test(text, seed_, methods, train_len, length, n_heads, causal, head)
    ok = [r for r in lt.runs if not r.error]
    if not ok:
        return None
    x = np.arange(len(lt.tokens))
    mark = {f"L = {train_len}": train_len - 0.5}
    dist = F.lines(x, {**{short(r.method): r.distance for r in ok}, "uniform (no preference)": lt.uniform_distance},
                   "How far each word looks: Σⱼ wᵢⱼ·|i − j|", x_title="query position i",
                   y_title="mean distance attended", dashed=("uniform (no preference)",))
    ent = F.lines(x, {**{short(r.method): r.entropy for r in ok}, "uniform (no preference)": lt.uniform_entropy},
                  "How spread out: attention entropy", x_title="query position i",
                  y_title="entropy (nats)", dashed=("uniform (no preference)",))
    run = next((r for r in ok if r.method == pick), ok[0])
    who = who_label(head)
    # Colour range up to the 99.5th percentile: at hundreds of tokens most weights are ≈ 1/n.
    top = min(1.0, max(0.01, float(np.quantile(run.weights, 0.995))))
    big = F.lab_map(run.weights, lt.tokens, f"{short(run.method)} on {len(lt.tokens)} tokens (trained on "
                    f"{train_len}), {who}; colour scale 0–{top:.2g}", kind="weights", value_label="weight",
                    zmax=top, height=620)
    return F.mark_lines(dist, x=mark), F.mark_lines(ent, x=mark), big


tokens = sentence_tokens()
text = st.session_state.sentence
n = len(tokens)

methods = st.multiselect(
    "Encodings", list(REGISTRY), default=list(lab.DEFAULT_METHODS), key="lab_methods", **URL,
    max_selections=lab.MAX_METHODS, format_func=lambda m: REGISTRY[m].label,
    help="2 to 4 of the registered encodings; every panel gets the same tokens, seed, projections, "
         "head count and causal switch.",
)
if len(methods) < 2:
    st.info("Pick at least two encodings to compare.")
    st.stop()
methods = tuple(methods)

c1, c2, c3, c4 = st.columns([1, 1, 1.3, 1.6])
n_heads = c1.selectbox("Heads", lab.HEAD_CHOICES, index=2, key="lab_heads", **URL,
                       help="1, 2, 4 or 8 heads over the same 64 dimensions (head size 64, 32, 16, 8).")
head_options = ["mean"] + list(range(n_heads))
head_pick = c2.selectbox("Show head", head_options, index=1, key="lab_head",
                         format_func=lambda h: "mean over heads" if h == "mean" else f"head {h + 1}",
                         help="One head, or the average over all heads.")
head = None if head_pick == "mean" else int(head_pick)
causal = c3.toggle("Causal mask", value=False, key="lab_causal", **URL,
                   help="Each word may only look at itself and the words before it (a decoder).")
dial = c4.slider("Content dial", 0.0, 3.0, 1.0, step=0.25, key="lab_dial", **URL,
                 help="Multiplies the content term(s) of every encoding: 0 = position only, 1 = as "
                      "built, 3 = content three times stronger (0–3).")

shown = st.radio("Every panel shows", ("attention weights", "position term alone", "content term alone"),
                 horizontal=True, key="lab_show", **URL,
                 help="The weights after the softmax, or one part of the logits before it.")

multi = [m for m in methods if len(REGISTRY[m].term_names) > 1]
off: dict[str, tuple[str, ...]] = {m: () for m in methods}
with st.expander("Term switches: turn named logit terms off", expanded=False):
    prose(KEY, "switches")
    if not multi:
        st.caption("None of the chosen encodings has more than one term.")
    cols = st.columns(max(1, len(multi)))
    for col, m in zip(cols, multi):
        col.markdown(f"**{REGISTRY[m].label}**")
        kept = [t for t in REGISTRY[m].term_names
                if col.checkbox(f"{t} ({'content' if t in lab.content_terms(m) else 'position'})",
                                value=True, key=f"lab_term_{m}_{t}")]
        off[m] = tuple(t for t in REGISTRY[m].term_names if t not in kept)

mixed = [short(m) for m in methods if lab.mixed_in_input(m)]
if mixed:
    st.caption(
        f"**{' and '.join(mixed)}** {'adds' if len(mixed) == 1 else 'add'} the position to the word vector "
        "*before* the projections, so every logit mixes content and position; there is no position-only "
        "term. In such a panel “content term alone” is the same layer without any positions, “position "
        "term alone” is what adding the positions changed, and the dial scales their sum (a temperature)."
    )

panels = [panel(text, seed(), m, n_heads, causal, dial, off[m]) for m in methods]
height = int(min(560, max(340, 150 + 14 * n)))
if shown == "attention weights":
    # One colour range for all panels, up to the strongest weight shown: a 0…1 scale would leave
    # a long sentence's maps (weights ≈ 1/n) white. Shared, so "darker" means the same everywhere.
    zmax = max(float(np.nanmax(lab.pick_head(p.weights, head))) for p in panels)
    zmax = min(1.0, max(0.05, float(np.ceil(zmax * 20) / 20)))
else:
    parts = [(p.position if shown.startswith("position") else p.content) for p in panels]
    finite = [np.abs(lab.pick_head(a, head)) for a in parts if a is not None]
    zmax = max((float(np.nanmax(a)) for a in finite if np.isfinite(a).any()), default=1.0) or 1.0

for row in range(0, len(panels), 2):
    cols = st.columns(2)
    for col, p in zip(cols, panels[row:row + 2]):
        with col:
            if shown.startswith("position") and p.position is None:
                st.markdown(f"**{p.label}**")
                st.info("No position term: this encoding gives attention no positional signal at all.")
                continue
            plot(panel_figure(text, seed(), p.method, n_heads, causal, dial, off[p.method], head, shown, zmax, height),
                 f"lab_panel_{p.method}")
            j, w = lab.top_key(lab.pick_head(p.weights, head), n - 1)
            notes = [f"Last word → strongest key: {j} {inline_tokens([p.tokens[j]])} (weight {w:.2f})",
                     f"position share of the logits: {lab.position_share(p, head):.0%}"]
            if p.off:
                notes.append("switched off: " + ", ".join(p.off))
            st.caption(" · ".join(notes))

prose(KEY, "dial")

# -- shift test ---------------------------------------------------------------------------------
st.subheader("Shift test: put words in front")
prose(KEY, "shift")
prefix = st.text_input("Prefix", "Well, you know,", max_chars=lab.MAX_PREFIX_CHARS, key="lab_prefix", **URL,
                       help=f"Up to {lab.MAX_PREFIX_CHARS} characters; the first {lab.MAX_PREFIX_TOKENS} "
                            "tokens are used.")
if not lab.prefix_tokens(prefix):
    st.info("Type a prefix (a word or two) to shift the sentence.")
else:
    sh = shift_test(text, seed(), methods, prefix, n_heads, causal, head)
    labels = [short(m) for m in sh.methods]
    most = sh.methods[int(np.argmax(sh.max_change))] if sh.changed.any() else "none"
    predict(
        "lab_shift_q", "Words are put in front of your sentence. Among the chosen encodings, whose attention "
        "**between the original words** changes the most?",
        list(methods) + ["none"], most,
        "Only an absolute encoding can change here: the prefix moves every original word from position $i$ to "
        "$i + k$, and only an absolute encoding hands attention the positions themselves rather than the "
        "distance $j - i$, which the prefix leaves as it was."
        + ("" if most != "none" else " None of the chosen encodings is absolute, so none of them changes."),
        format_func=lambda m: "none of them" if m == "none" else short(m),
    )
    plot(shift_figure(text, seed(), methods, prefix, n_heads, causal, head), "lab_shift")
    moved = [lab_ for lab_, c in zip(labels, sh.changed) if c]
    still = [lab_ for lab_, c in zip(labels, sh.changed) if not c]
    st.markdown(
        (f"**Changed:** {', '.join(moved)}. " if moved else "**Changed:** none. ")
        + (f"**Unchanged** (below {lab.CHANGED:g}, float64 rounding): {', '.join(still)}." if still else "")
    )

# -- length test --------------------------------------------------------------------------------
st.subheader("Length test: past the training length")
prose(KEY, "length")
l1, l2 = st.columns(2)
train_len = l1.slider("Training length L", 4, 256, 32, key="lab_train_len", **URL,
                      help="The length the encodings pretend to have been trained on (4–256): a learned "
                           "table gets exactly L rows; the RoPE scalings stretch L to the test length.")
length = l2.slider("Test length", 8, lab.MAX_LENGTH, 128, step=8, key="lab_length", **URL,
                   help=f"The sentence repeated to this many tokens (8–{lab.MAX_LENGTH}).")
lt = length_test(text, seed(), methods, train_len, length, n_heads, causal, head)
ok = [r for r in lt.runs if not r.error]
for r in lt.runs:
    if r.error:
        st.warning(f"**{r.label}**: {r.error} A learned table has no vector for a position it never "
                   "trained; the model cannot even be run on this text.")
if ok:
    curves = st.container()  # filled below, so that the curves come before the map's selector
    pick = st.selectbox("Look at one long map", [r.method for r in ok], key="lab_len_pick",
                        format_func=lambda m: REGISTRY[m].label)
    dist, ent, big = length_figures(text, seed(), methods, train_len, length, n_heads, causal, head, pick)
    with curves:
        a, b = st.columns(2)
        with a:
            plot(dist, "lab_len_distance")
        with b:
            plot(ent, "lab_len_entropy")
    plot(big, "lab_len_map")
prose(KEY, "length-read")
