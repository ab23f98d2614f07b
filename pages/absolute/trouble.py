"""Chapter: The trouble with absolute positions — shift, length, and no direct distance."""

import numpy as np
import streamlit as st

from encoders.text import MAX_TOKENS, tokenize
from explain import figures as F
from explain.chapters import trouble as ch
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.i18n import lang, t
from ui.question import predict
from ui.url_state import URL

KEY = "trouble"
header(
    KEY,
    sources=(
        ch.shift_experiment,
        ch.length_experiment,
        ch.circular_gap,
        ch.four_terms,
        ch.relative_part,
        ch.toeplitz_deviation,
    ),
)
prose(KEY, "intro")

shift_experiment = st.cache_data(ch.shift_experiment, max_entries=64)
length_experiment = st.cache_data(ch.length_experiment, max_entries=64)
four_terms = st.cache_data(ch.four_terms, max_entries=64)
EXAMPLE = ch.EXAMPLES[lang()]  # "I like CV" / "Well,": each language has its own example sentence
CLASSIC, PREFIX = EXAMPLE.sentence, EXAMPLE.prefix
SHOW_TOKENS = 14  # tokens spelled out in the "before / after" lines; the figures show them all
SMALL = 40  # up to this many tokens a score map is drawn alone, with its numbers in the cells


def token_line(tokens, start: int) -> str:
    """Tokens as safe code spans with the positions they occupy, cut after SHOW_TOKENS."""
    head = inline_tokens(tokens[:SHOW_TOKENS])
    more = t("trouble.more", n=len(tokens) - SHOW_TOKENS) if len(tokens) > SHOW_TOKENS else ""
    return t("trouble.token_line", tokens=head, more=more, span=span_of(len(tokens), start))


def span_of(n: int, start: int) -> str:
    """The positions n tokens occupy from `start` on: a range, or a single position for one token."""
    if n > 1:
        return t("trouble.positions", first=start, last=start + n - 1)
    return t("trouble.position", first=start)


# -- 1. shift ------------------------------------------------------------------------------------
st.header(t("trouble.shift.header"))
prose(KEY, "shift")
# The answer is measured by the same experiment the section draws, on the classic example.
_classic = tokenize(CLASSIC, max_tokens=MAX_TOKENS).tokens
_well = tokenize(PREFIX, max_tokens=ch.MAX_PREFIX_TOKENS).tokens
_probe = shift_experiment(_classic, _well, seed())
_change = float(_probe.logits_diff[EXAMPLE.query, EXAMPLE.key])  # (i, j) of the pair the question names
# Option values are language-neutral ids; their labels are looked up now, in this run's language (a
# format_func that called t() itself would depend on where Streamlit calls it).
answers = {o: t(f"trouble.shift.opt_{o}") for o in ("same", "changes")}
predict(
    "trouble_q",
    t(
        "trouble.shift.question",
        sentence=CLASSIC,
        prefix=PREFIX,
        query=_classic[EXAMPLE.query],
        key=_classic[EXAMPLE.key],
    ),
    list(answers),
    "changes" if abs(_change) > 1e-6 else "same",
    t("trouble.shift.explanation", change=_change, seed=seed(), k=len(_well)),
    format_func=answers.__getitem__,
)
c1, c2 = st.columns([2, 3])
bases = {"classic": t("trouble.shift.base_classic", example=CLASSIC), "sidebar": t("trouble.shift.base_sidebar")}
choice = c1.radio(
    t("trouble.shift.base_label"),
    list(bases),
    key="trouble_base",
    **URL,
    format_func=bases.__getitem__,
    help=t("trouble.shift.base_help"),
)
prefix_text = c2.text_input(
    t("trouble.shift.prefix_label"),
    value=PREFIX,
    max_chars=ch.MAX_PREFIX_CHARS,
    key="trouble_prefix",
    **URL,
    help=t("trouble.shift.prefix_help", max_chars=ch.MAX_PREFIX_CHARS, max_tokens=ch.MAX_PREFIX_TOKENS),
)
use_classic = choice == "classic"
base = tokenize(CLASSIC if use_classic else st.session_state.get("sentence", ""), max_tokens=MAX_TOKENS)
prefix = tokenize(prefix_text[: ch.MAX_PREFIX_CHARS], max_tokens=ch.MAX_PREFIX_TOKENS)
k = len(prefix)

if base.empty:
    st.info(t("trouble.shift.empty_sentence"))
else:
    if base.truncated:
        st.caption(t("trouble.shift.sentence_cut", found=base.n_found, kept=len(base)))
    if prefix.truncated:
        st.caption(t("trouble.shift.prefix_cut", found=prefix.n_found, kept=ch.MAX_PREFIX_TOKENS))
    toks = list(base.tokens)
    st.markdown(t("trouble.shift.without", line=token_line(toks, 0)))
    if k:
        st.markdown(t("trouble.shift.with", prefix=inline_tokens(prefix.tokens), span=span_of(len(toks), k), k=k))
    else:
        st.info(t("trouble.shift.empty_prefix", prefix=PREFIX))
    r = shift_experiment(base.tokens, prefix.tokens, seed())

    st.subheader(t("trouble.shift.vectors_subheader"))
    prose(KEY, "shift-vectors")
    m1, m2 = st.columns(2)
    m1.metric(t("trouble.shift.metric_k"), k)
    m2.metric(
        t("trouble.shift.metric_cos"),
        f"{float(np.mean(r.pe_cosine)):.4f}",
        help=t("trouble.shift.metric_cos_help", spread=float(np.ptp(r.pe_cosine))),
    )
    plot(
        F.token_heatmap(
            r.pe_after - r.pe_before,
            toks,
            None,
            t("trouble.shift.pe_title", k=k),
            row_title=t("trouble.shift.pe_rows"),
            col_title=t("trouble.shift.pe_cols"),
            value_label=t("trouble.shift.change"),
            zmax=2.0,
            show_values=False,
        ),
        "shift_pe",
    )

    st.subheader(t("trouble.shift.scores_subheader"))
    prose(KEY, "shift-logits")
    lim = float(max(np.abs(r.logits_before).max(), np.abs(r.logits_after).max()))
    if len(toks) <= SMALL:
        s1, s2, s3 = st.columns(3)
        with s1:
            plot(
                F.token_heatmap(
                    r.logits_before,
                    toks,
                    toks,
                    t("trouble.shift.before_title"),
                    value_label=t("trouble.shift.score"),
                    zmax=lim,
                ),
                "shift_before",
            )
        with s2:
            plot(
                F.token_heatmap(
                    r.logits_after,
                    toks,
                    toks,
                    t("trouble.shift.after_title", k=k),
                    value_label=t("trouble.shift.score"),
                    zmax=lim,
                ),
                "shift_after",
            )
        with s3:
            plot(
                F.token_heatmap(
                    r.logits_diff, toks, toks, t("trouble.shift.diff_title"), value_label=t("trouble.shift.change")
                ),
                "shift_diff",
            )
        numbers = st.container()
    else:  # long sentences: small multiples name rows and columns once, not once per cell
        plot(
            F.token_heatmap_grid(
                np.stack([r.logits_before, r.logits_after]),
                toks,
                t("trouble.shift.both_title", k=k),
                value_label=t("trouble.shift.score"),
                panel_titles=[t("trouble.shift.panel_before"), t("trouble.shift.panel_after")],
                cols=2,
                panel_height=520,
            ),
            "shift_before_after",
        )
        diff_col, numbers = st.columns(2)
        with diff_col:
            plot(
                F.token_heatmap_grid(
                    r.logits_diff[None],
                    toks,
                    t("trouble.shift.diff_title"),
                    value_label=t("trouble.shift.change"),
                    panel_titles=[t("trouble.shift.panel_diff")],
                    cols=1,
                    panel_height=440,
                ),
                "shift_diff",
            )
    with numbers:
        d1, d2, d3 = st.columns(3)
        d1.metric(t("trouble.shift.metric_max"), f"{r.max_abs_change:.3f}")
        d2.metric(t("trouble.shift.metric_mean"), f"{r.mean_abs_change:.3f}")
        d3.metric(t("trouble.shift.metric_scale"), f"{r.mean_abs_logit:.3f}", help=t("trouble.shift.metric_scale_help"))
        if k and r.max_abs_change > 0:
            i, j = r.largest_pair
            st.markdown(
                t(
                    "trouble.shift.largest",
                    query=inline_tokens([toks[i]]),
                    i=i,
                    i_after=i + k,
                    key=inline_tokens([toks[j]]),
                    j=j,
                    j_after=j + k,
                    before=float(r.logits_before[i, j]),
                    after=float(r.logits_after[i, j]),
                    distance=j - i,
                )
            )
        st.caption(t("trouble.shift.check", diff=r.prefixed_run_max_diff))
    prose(KEY, "shift-relative")
    st.markdown(t("trouble.shift.content_part", change=r.content_max_change))

# -- 2. length -----------------------------------------------------------------------------------
st.header(t("trouble.length.header"))
prose(KEY, "length")
l1, l2 = st.columns(2)
l_train = l1.slider(
    t("trouble.length.train_label"),
    2,
    ch.MAX_TRAIN_LEN,
    32,
    key="trouble_l_train",
    **URL,
    help=t("trouble.length.train_help", max=ch.MAX_TRAIN_LEN),
)
l_test = l2.slider(
    t("trouble.length.test_label"),
    2,
    ch.MAX_TEST_LEN,
    128,
    key="trouble_l_test",
    **URL,
    help=t("trouble.length.test_help", max=ch.MAX_TEST_LEN),
)
L = length_experiment(l_train, l_test, seed())
beyond = l_test > l_train
if not beyond:
    st.info(t("trouble.length.fits", test=l_test, train=l_train))
prose(KEY, "length-matrix")
end = {t("trouble.length.end_mark", train=l_train): l_train - 0.5} if beyond else {}
g1, g2 = st.columns(2)
with g1:
    fig = F.matrix_heatmap(
        L.pe,
        t("trouble.length.sin_title", n=l_test),
        x_title=t("trouble.length.channel"),
        y_title=t("trouble.length.position_axis"),
        value_label="PE",
        height=460,
    )
    plot(F.mark_lines(fig, y=end), "length_sin")
with g2:
    fig = F.matrix_heatmap(
        L.learned_table,
        t("trouble.length.learned_title", n=l_train),
        x_title=t("trouble.length.channel"),
        y_title=t("trouble.length.position_axis"),
        value_label=t("trouble.length.value"),
        height=460,
    )
    plot(F.mark_lines(fig, y=end), "length_learned")
if L.learned_error:
    st.warning(t("trouble.length.refused", error=L.learned_error, first=l_train, last=l_test - 1))
else:
    st.success(t("trouble.length.all_rows", n=l_test))
prose(KEY, "length-learned")

st.subheader(t("trouble.length.angles_subheader"))
prose(KEY, "length-angles")
pairs = np.arange(L.omega.size)
a1, a2 = st.columns(2)
with a1:
    full_turn = t("trouble.length.full_turn")
    plot(
        F.lines(
            pairs,
            {
                t("trouble.length.train_angle"): L.train_max_angle,
                t("trouble.length.test_angle"): L.test_max_angle,
                full_turn: np.full(pairs.size, 2 * np.pi),
            },
            t("trouble.length.angles_title"),
            x_title=t("trouble.length.pair_axis"),
            y_title=t("trouble.length.angle_axis"),
            log_y=True,
            dashed=(full_turn,),
            markers=True,
        ),
        "length_angles",
    )
with a2:
    farthest = t("trouble.length.farthest")
    plot(
        F.lines(
            pairs,
            {t("trouble.length.gap"): L.angle_gap, farthest: np.full(pairs.size, np.pi)},
            t("trouble.length.gap_title"),
            x_title=t("trouble.length.pair_axis"),
            y_title=t("trouble.length.gap_axis"),
            dashed=(farthest,),
            markers=True,
        ),
        "length_gap",
    )
wrapped = int(L.wrapped_in_training.sum())
worst = int(np.argmax(L.angle_gap))
st.markdown(
    t(
        "trouble.length.wrapped",
        train=l_train,
        wrapped=wrapped,
        pairs=pairs.size,
        range=t("trouble.length.wrapped_range", last=wrapped - 1) if wrapped > 1 else "",
        end=t("trouble.length.newest", worst=worst, gap=float(L.angle_gap[worst]))
        if beyond
        else t("trouble.length.end"),
    )
)
st.subheader(t("trouble.length.vectors_subheader"))
prose(KEY, "length-vectors")
step = float(np.linalg.norm(L.pe[1] - L.pe[0]))
step_name = t("trouble.length.step")
fig = F.lines(
    np.arange(l_test),
    {t("trouble.length.nearest"): L.nearest_distance, step_name: np.full(l_test, step)},
    t("trouble.length.nearest_title"),
    x_title=t("trouble.length.position_axis"),
    y_title=t("trouble.length.distance_axis"),
    dashed=(step_name,),
)
plot(F.mark_lines(fig, x={f"L_train = {l_train}": l_train - 0.5} if beyond else {}), "length_nearest")

# -- 3. the four terms ---------------------------------------------------------------------------
st.header(t("trouble.terms.header"))
prose(KEY, "terms")
tokens = sentence_tokens()
toks = list(tokens.tokens)
shift = max(k, 1)
T = four_terms(tokens.tokens, seed(), shift=shift)
names = list(T.terms)
ids = {**ch.TERM_IDS, **ch.MAP_IDS}  # English name (the dicts' keys) → catalogue id
label = {name: t(f"trouble.term.{ids[name]}") for name in ids}
plot(
    F.token_heatmap_grid(
        np.stack([T.terms[name] for name in names]),
        toks,
        t("trouble.terms.grid_title"),
        panel_titles=[label[name] for name in names],
        value_label=t("trouble.terms.score_part"),
        cols=2,
        panel_height=max(300, min(560, 120 + 16 * len(toks))),
    ),
    "four_terms",
)
yes, no, yes_absolute = t("trouble.terms.yes"), t("trouble.terms.no"), t("trouble.terms.yes_absolute")
rows = []
for name in names:
    on_words = no if ids[name] == "pp" else yes  # only position–position ignores the words
    on_positions = no if ids[name] == "cc" else yes_absolute  # only content–content ignores the positions
    rows.append(f"| {label[name]} | {on_words} | {on_positions} | {float(np.abs(T.terms[name]).mean()):.3f} |")
st.markdown(t("trouble.terms.table_head") + "\n|---|---|---|---|\n" + "\n".join(rows))
st.caption(t("trouble.terms.check", diff=T.sum_max_diff))
prose(KEY, "terms-which")

st.subheader(t("trouble.terms.toeplitz_subheader"))
prose(KEY, "toeplitz")
n = len(toks)
if n < 2:
    st.info(t("trouble.terms.single_token"))
else:
    mats = T.position_maps
    t_cols = st.columns(3)
    for col, (name, mat) in zip(t_cols, mats.items(), strict=False):
        with col:
            plot(
                F.matrix_heatmap(
                    mat,
                    t("trouble.terms.map_title", name=label[name]),
                    x_title=t("trouble.terms.key_position"),
                    y_title=t("trouble.terms.query_position"),
                    value_label=t("trouble.terms.score_part"),
                    height=400,
                ),
                f"toeplitz_{list(mats).index(name)}",
            )
            st.metric(
                t("trouble.terms.spread_metric"),
                f"{T.toeplitz[name]:.1e}",
                help=t("trouble.terms.spread_help", relative=T.toeplitz_relative[name]),
            )
    plot(
        F.lines(
            T.offsets,
            {label[name]: s for name, s in T.spread.items()},
            t("trouble.terms.spread_title"),
            x_title=t("trouble.terms.offset_axis"),
            y_title=t("trouble.terms.spread_axis"),
            markers=n <= 40,
        ),
        "toeplitz_spread",
    )
    st.caption(t("trouble.terms.spread_caption"))
    prose(KEY, "relative-part")
    moved = t("trouble.terms.moved", change=r.max_abs_change) if k and not base.empty else ""
    st.markdown(
        t(
            "trouble.terms.relative_shift_prefix" if k else "trouble.terms.relative_shift",
            shift=shift,
            change=T.relative_shift_change,
        )
        + moved
    )
