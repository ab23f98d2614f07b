"""Chapter: RoPE — rotary position embedding (Su et al. 2021)."""

import numpy as np
import streamlit as st

from encoders import rope as enc
from explain import figures as F
from explain.chapters import common, rope_figures
from explain.chapters import rope as ch
from ui.common import header, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation
from ui.i18n import t
from ui.presenter import secondary
from ui.question import predict
from ui.url_state import URL, Param

KEY = "rope"
header(KEY, enc.PAPER, sources=(enc.rope_frequencies, enc.apply_rotary, enc.RoPE.logit_terms))
prose(KEY, "intro")

circles = st.cache_data(ch.circles, max_entries=64)
relative_identity = st.cache_data(ch.relative_identity, max_entries=64)
decay_curves = st.cache_data(ch.decay_curves, max_entries=32)
layouts = st.cache_data(ch.layouts, max_entries=32)
run_tokens = st.cache_data(common.run_tokens, max_entries=32)

BASES = [10, 100, 1_000, 10_000, 100_000, 1_000_000]
MAX_POS = 200  # positions the sliders reach; the animation adds up to FRAMES − 1 more
FRAMES = 41

tokens = sentence_tokens()
toks = tokens.tokens
n_tok = len(toks)


def word_label(i: int) -> str:
    return f"{i} · {toks[i]}"


# -- 1. rotation circles -----------------------------------------------------------------------
st.subheader(t("rope.circles.subheader"))
prose(KEY, "circles")
w1, w2, w3, w4 = st.columns([3, 3, 2, 2])
qi = w1.selectbox(
    t("rope.circles.query_word"),
    range(n_tok),
    index=min(1, n_tok - 1),
    format_func=word_label,
    key="rope_q_word",
    **URL,
    help=t("rope.circles.query_word_help"),
)
ki = w2.selectbox(
    t("rope.circles.key_word"),
    range(n_tok),
    index=min(5, n_tok - 1),
    format_func=word_label,
    key="rope_k_word",
    **URL,
    help=t("rope.circles.key_word_help"),
)
d = w3.select_slider(
    t("rope.circles.head_size"),
    list(range(2, 33, 2)),
    value=16,
    key="rope_d",
    **URL,
    help=t("rope.circles.head_size_help"),
)
base = w4.select_slider(
    t("rope.circles.base"), BASES, value=10_000, key="rope_base", **URL, help=t("rope.circles.base_help")
)
p1, p2, p3 = st.columns([2, 2, 3])
m = p1.slider(
    t("rope.circles.query_pos"),
    0,
    MAX_POS,
    2,
    key="rope_m",
    **URL,
    help=t("rope.circles.query_pos_help", max_pos=MAX_POS),
)
n = p2.slider(
    t("rope.circles.key_pos"), 0, MAX_POS, 6, key="rope_n", **URL, help=t("rope.circles.key_pos_help", max_pos=MAX_POS)
)
with p3, secondary(t("rope.circles.animation")):
    # Values are stable ids (kept in the URL and across a language switch); the words are looked up
    # now, in this run's language (a format_func may also be called outside the run, e.g. by AppTest).
    moves = {v: t(f"rope.circles.move_{v}") for v in ("both", "query")}
    move = st.radio(
        t("rope.circles.move"),
        list(moves),
        horizontal=True,
        key="rope_move",
        **URL,
        format_func=moves.get,
        help=t("rope.circles.move_help", frames=FRAMES),
    )

c = circles(toks, seed(), d, float(base), qi, ki, m, n, FRAMES, move)
note = t("rope.circles.note")  # one template for every circle and frame
notes = np.array(
    [
        [note.format(angle=a, share=s).replace("-", "−") for a, s in zip(ang, con, strict=False)]
        for ang, con in zip(c.angle, c.contribution, strict=False)
    ]
)
panel_titles = [
    t("rope.circles.panel_fine" if lam < 100 else "rope.circles.panel_coarse", f=f, wavelength=lam)
    for f, lam in enumerate(c.wavelength)
]
frame = t("rope.circles.frame")
frame_titles = [
    frame.format(m=a, n=b, offset=b - a, score=s).replace("-", "−") for a, b, s in zip(c.m, c.n, c.score, strict=False)
]
plot(
    rope_figures.rotation_circles(
        c.q_xy,
        c.k_xy,
        t("rope.circles.title"),
        panel_titles=panel_titles,
        notes=notes,
        frame_titles=frame_titles,
        frame_labels=[str(f) for f in range(FRAMES)],
        slider_prefix=t("rope.circles.steps_played"),
        q_name=t("rope.circles.query_name", word=toks[qi]),
        k_name=t("rope.circles.key_name", word=toks[ki]),
        cols=4,
    ),
    "rope_circles",
)
st.caption(t("rope.circles.caption"))
gap = float(np.abs((c.angle - c.predicted_angle + 180) % 360 - 180).max())
st.markdown(t("rope.circles.gap", pairs=d // 2, frames=FRAMES, gap=gap))

# -- 2. the relative identity, in numbers -------------------------------------------------------
st.subheader(t("rope.identity.subheader"))
prose(KEY, "identity")
with st.expander(t("rope.identity.proof_2d")):
    show_derivation("rope-matrix-2d", key_prefix="rope_proof2d", compact=True)
with st.expander(t("rope.identity.proof_d")):
    show_derivation("rope-relative-block", key_prefix="rope_proofd", compact=True)
with st.expander(t("rope.identity.proof_complex")):
    show_derivation("rope-complex-2d", key_prefix="rope_proofc", compact=True)
r1, r2 = st.columns(2)
size = r1.slider(t("rope.identity.size"), 4, 64, 24, key="rope_size", **URL, help=t("rope.identity.size_help"))
# Integer number inputs are linked by hand: Streamlit's own binding crashes on ?rope_shift=inf.
shift = Param.integer("rope_shift", -1_000_000, 1_000_000, default=1000).widget(
    r2.number_input, t("rope.identity.shift"), -1_000_000, 1_000_000, 1000, step=100, help=t("rope.identity.shift_help")
)
ri = relative_identity(toks, seed(), d, float(base), qi, ki, size, int(shift))
answers = {v: t(f"rope.identity.answer_{v}") for v in ("no", "little", "lot")}  # stable ids → words
predict(
    "rope_q",
    t("rope.identity.question", shift=int(shift)),
    list(answers),
    "no" if ri.max_change < 1e-6 else "little" if ri.max_change < 0.1 else "lot",
    t("rope.identity.explanation", change=ri.max_change),
    format_func=answers.get,
)
h1, h2 = st.columns(2)
with h1:
    plot(
        F.matrix_heatmap(
            ri.logits,
            t("rope.identity.map_title", query=toks[qi], key=toks[ki]),
            x_title=t("rope.identity.key_position"),
            y_title=t("rope.identity.query_position"),
            value_label="q′·k′/√d",
            height=440,
        ),
        "rope_identity",
    )
with h2:
    rows = {t("rope.identity.row", m=r): v for r, v in ri.by_offset.items()}
    middle = [name for name in rows][1:-1]  # dashed, so the rows it overlaps show through
    plot(
        F.lines(
            ri.offsets,
            rows,
            t("rope.identity.rows_title"),
            x_title=t("rope.identity.offset_axis"),
            y_title=t("rope.identity.logit_axis"),
            markers=True,
            dashed=middle,
            height=400,
        ),
        "rope_identity_rows",
    )
st.markdown(t("rope.identity.summary", spread=ri.diagonal_spread, shift=int(shift), change=ri.max_change))

# -- 3. long-term decay ---------------------------------------------------------------------------
st.subheader(t("rope.decay.subheader"))
prose(KEY, "decay")
e1, e2 = st.columns(2)
d_decay = e1.select_slider(
    t("rope.decay.head_size"),
    [16, 32, 64, 128, 256],
    value=128,
    key="rope_decay_d",
    **URL,
    help=t("rope.decay.head_size_help"),
)
max_dist = e2.slider(
    t("rope.decay.distance"), 16, 4096, 512, key="rope_decay_dist", **URL, help=t("rope.decay.distance_help")
)
dec = decay_curves(d_decay, (1_000.0, 10_000.0, 500_000.0), max_dist)
plot(
    F.lines(
        dec.distances,
        {t("rope.decay.base_name", base=b): v for b, v in dec.curves.items()},
        t("rope.decay.title", d=d_decay),
        x_title=t("rope.decay.x_axis"),
        y_title=t("rope.decay.y_axis"),
        height=400,
    ),
    "rope_decay",
)

# -- 4. the rotation matrix, and its two layouts ---------------------------------------------------
st.subheader(t("rope.matrix.subheader"))
prose(KEY, "matrix")
x1, x2 = st.columns(2)
d_small = x1.select_slider(
    t("rope.matrix.head_size"),
    list(range(2, 17, 2)),
    value=8,
    key="rope_matrix_d",
    **URL,
    help=t("rope.matrix.head_size_help"),
)
m_mat = x2.slider(
    t("rope.matrix.position"),
    0,
    MAX_POS,
    3,
    key="rope_matrix_m",
    **URL,
    help=t("rope.matrix.position_help", max_pos=MAX_POS),
)
lay = layouts(toks, seed(), d_small, float(base), qi, ki, 16, m_mat)
y1, y2 = st.columns(2)
with y1:
    plot(
        F.matrix_heatmap(
            lay.R_interleaved,
            t("rope.matrix.title_interleaved", m=m_mat),
            x_title=t("rope.matrix.input_channel"),
            y_title=t("rope.matrix.output_channel"),
            value_label="R",
            zmax=1.0,
            height=420,
        ),
        "rope_R_interleaved",
    )
with y2:
    plot(
        F.matrix_heatmap(
            lay.R_half,
            t("rope.matrix.title_half", m=m_mat),
            x_title=t("rope.matrix.input_channel"),
            y_title=t("rope.matrix.output_channel"),
            value_label="R",
            zmax=1.0,
            height=420,
        ),
        "rope_R_half",
    )

st.subheader(t("rope.layouts.subheader"))
prose(KEY, "layouts")
perm = ", ".join(str(int(v)) for v in lay.permutation)
st.markdown(
    t(
        "rope.layouts.summary",
        perm=perm,
        layout_gap=lay.layout_gap,
        logit_gap=lay.logit_gap,
        same_weights_gap=lay.same_weights_gap,
    )
)

# -- 6. on your sentence ---------------------------------------------------------------------------
st.subheader(t("rope.sentence.subheader"))
prose(KEY, "sentence")
s1, s2 = st.columns(2)
causal = s1.toggle(
    t("rope.sentence.causal"), value=False, key="rope_causal", **URL, help=t("rope.sentence.causal_help")
)
offset = Param.integer("rope_offset", 0, 100_000, default=0).widget(
    s2.number_input, t("rope.sentence.offset"), 0, 100_000, 0, step=10, help=t("rope.sentence.offset_help")
)
plain = run_tokens(toks, seed(), "none", 64, 1, causal)
rope = run_tokens(toks, seed(), "rope", 64, 1, causal)
moved = run_tokens(toks, seed(), "rope", 64, 1, causal, int(offset)) if offset else rope
panels = np.stack([plain.weights[0], moved.weights[0]])
plot(
    F.token_heatmap_grid(
        panels,
        toks,
        t("rope.sentence.title"),
        panel_titles=[t("rope.sentence.without"), t("rope.sentence.with_rope", offset=int(offset))],
        kind="weights",
        value_label=t("rope.sentence.weight"),
        cols=2,
        panel_height=460,
    ),
    "rope_attention",
)
if offset:
    change = float(np.nanmax(np.abs(moved.weights - rope.weights)))
    st.markdown(t("rope.sentence.change", offset=int(offset), change=change))
else:
    st.caption(t("rope.sentence.hint"))

prose(KEY, "terms")
if st.toggle(t("rope.sentence.terms_toggle"), value=True, key="rope_terms", **URL):
    veil = np.where(np.isnan(rope.logits[0]), np.nan, 1.0)  # blank the masked cells in every panel
    terms = np.stack([rope.terms["content"][0] * veil, rope.terms["position"][0] * veil, rope.logits[0]])
    plot(
        F.token_heatmap_grid(
            terms,
            toks,
            t("rope.sentence.terms_title"),
            panel_titles=[t("rope.sentence.content"), t("rope.sentence.position"), t("rope.sentence.sum")],
            kind="signed",
            value_label=t("rope.sentence.logit"),
            cols=3,
            panel_height=380,
        ),
        "rope_terms_grid",
    )
