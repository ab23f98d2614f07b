"""Chapter: CoPE — gates decide what counts; positions are counts of counted tokens."""

import numpy as np
import streamlit as st

from encoders import cope as enc
from explain import figures as F
from explain import i18n
from explain.chapters import cope as ch
from explain.chapters.common import sign_text
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.derivation import show_derivation
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "cope"
header(
    KEY,
    enc.PAPER,
    sources=(
        enc.contextual_positions,
        enc.gate_logits_from_counted,
        enc.integer_position_logits,
        enc.interpolate_position_logits,
        enc.CoPE.positions,
        enc.CoPE.logit_terms,
    ),
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
weight = t("cope.weight")
# Option names are bound to this run's language: a format_func may be called after the run (AppTest does).
LANG = i18n.language()
count_back = t("cope.count_back")

# ----------------------------------------------------------------------------- what counts
st.subheader(t("cope.counts.subheader"))
prose(KEY, "what-counts")
words = word_choices(text)
c1, c2 = st.columns([3, 2])
# Option values are stable ids (kept in the address and in lessons); only their names are translated.
unit = c1.radio(
    t("cope.counts.unit"),
    ch.UNITS,
    index=2,
    horizontal=True,
    key="cope_unit",
    **URL,
    format_func=lambda u: i18n.t(f"cope.unit.{u}", LANG),
    help=t("cope.counts.unit_help"),
)
word = ""
if unit == ch.UNIT_PICKED:
    if words:
        default = words.index("alice") if "alice" in words else 0
        if st.session_state.get("cope_word") not in words:
            st.session_state.pop("cope_word", None)
        word = c2.selectbox(
            t("cope.counts.word"), words, index=default, key="cope_word", **URL, help=t("cope.counts.word_help")
        )
    else:
        c2.info(t("cope.counts.no_words"))
c3, c4, c5 = st.columns(3)
sharpness = c3.slider(
    t("cope.counts.sharpness"),
    0.0,
    ch.MAX_SHARPNESS,
    ch.MAX_SHARPNESS,
    0.5,
    key="cope_sharpness",
    **URL,
    help=t("cope.counts.sharpness_help", max=ch.MAX_SHARPNESS),
)
all_open = c4.toggle(
    t("cope.counts.all_open"), value=False, key="cope_all_open", **URL, help=t("cope.counts.all_open_help")
)
npos = c5.slider(
    t("cope.counts.npos"),
    2,
    ch.MAX_NPOS,
    ch.MAX_NPOS,
    key="cope_npos",
    **URL,
    help=t("cope.counts.npos_help", max=ch.MAX_NPOS),
)
cv = count_view(text, unit, word, sharpness, all_open, npos)
n_counted = int(cv.counted.sum())
what = t("cope.counts.what_all_open") if all_open else t(f"cope.unit.{unit}")
st.markdown(t("cope.counts.line", counted=n_counted, n=n, what=what))
if n_counted == 0 and not all_open:
    st.info(t("cope.counts.none_counted"))

# ---------------------------------------------------------------------------------- gates
st.subheader(t("cope.gates.subheader"))
prose(KEY, "gates")
plot(
    F.token_heatmap(
        cv.gates,
        cv.tokens,
        cv.tokens,
        t("cope.gates.title", what=what),
        kind="weights",
        value_label=t("cope.gates.value"),
    ),
    "gates",
)

# ------------------------------------------------------------------------------ positions
st.subheader(t("cope.positions.subheader"))
prose(KEY, "positions")
# The answer is computed: CoPE's own positions with every gate open, against each candidate formula.
_open = count_view(text, unit, word, sharpness, True, ch.MAX_NPOS).positions
_i, _j = np.tril_indices(n)
_candidates = {  # option id (see cope.positions.option) → the formula, on every (i, j) with j ≤ i
    "relative": _i - _j + 1.0,
    "offset": _j - _i + 0.0,
    "one": np.ones(_i.size),
    "query": _i + 1.0,
}
_clamped = {k: np.minimum(v, ch.MAX_NPOS - 1) for k, v in _candidates.items()}
_match = [k for k, v in _clamped.items() if np.allclose(_open[_i, _j], v)]
if n > 1 and len(_match) == 1:
    predict(
        "cope_q",
        t("cope.positions.question"),
        list(_candidates),
        _match[0],
        t("cope.positions.answer", cap=ch.MAX_NPOS - 1),
        format_func=lambda k: i18n.t(f"cope.positions.option.{k}", LANG),
    )
with st.expander(t("cope.positions.proof")):
    show_derivation("cope-all-gates-open", key_prefix="cope_proof", compact=True)
plot(
    F.token_heatmap(
        cv.positions,
        cv.tokens,
        cv.tokens,
        t("cope.positions.title", top=npos - 1, what=what),
        kind="index",
        value_label=count_back,
        zmin=0.0,
        zmax=float(npos - 1) if cv.n_clamped else None,
    ),
    "positions",
)
if all_open:
    i_idx, j_idx = np.tril_indices(n)
    rel = (i_idx - j_idx + 1).astype(float)
    diff = np.abs(cv.positions[i_idx, j_idx] - np.minimum(rel, npos - 1)).max()
    st.success(t("cope.positions.all_open", diff=diff))

# ---------------------------------------------------------------------------------- query
st.subheader(t("cope.query.subheader"))
prose(KEY, "query")
query = (
    st.slider(
        t("cope.query.slider"), 0, n - 1, n - 1, key="cope_query", **URL, help=t("cope.query.slider_help", last=n - 1)
    )
    if n > 1
    else 0
)
row = cv.positions[query, : query + 1]
fig = F.bars(
    cv.tokens[: query + 1],
    row,
    t("cope.query.title", query=query),
    x_title=t("cope.query.x_title"),
    y_title=count_back,
    highlight=[j for j in range(query + 1) if cv.counted[j] and not all_open],
)
plot(fig, "query_bars")
st.caption(t("cope.query.caption"))
st.markdown(
    t(
        "cope.query.line",
        token=inline_tokens([cv.tokens[query]]),
        query=query,
        first_token=inline_tokens([cv.tokens[0]]),
        first=row[0],
        own=row[-1],
    )
)

# ---------------------------------------------------------------------------------- p_max
st.subheader(t("cope.pmax.subheader"))
prose(KEY, "pmax")
if cv.n_clamped:
    st.warning(t("cope.pmax.clamped", largest=cv.unclamped_max, npos=npos, cells=cv.n_clamped, top=npos - 1))
else:
    st.info(t("cope.pmax.not_clamped", largest=cv.unclamped_max, top=npos - 1))

# --------------------------------------------------------------------------- interpolation
st.subheader(t("cope.interpolation.subheader"))
prose(KEY, "interpolation")
if st.session_state.get("cope_key", 0) > query:
    st.session_state.pop("cope_key")
key_j = (
    st.slider(
        t("cope.interpolation.key"),
        0,
        query,
        0,
        key="cope_key",
        **URL,
        help=t("cope.interpolation.key_help", query=query),
    )
    if query > 0
    else 0
)
iv = interpolation_view(text, unit, word, sharpness, all_open, npos, query, key_j, seed())
# A window of counts around p: 64 random-looking values would hide the two that matter.
lo_n, hi_n = max(0, iv.lo - 6), min(npos - 1, iv.hi + 6)
fig = F.lines(
    iv.n[lo_n : hi_n + 1],
    {t("cope.interpolation.trace"): iv.z[lo_n : hi_n + 1]},
    t("cope.interpolation.title", query=query, lo=lo_n, hi=hi_n, key=key_j),
    x_title=t("cope.interpolation.x_title"),
    y_title="q_i·e[n]",
    markers=True,
)
F.mark_lines(fig, x={f"p = {iv.p:.3f}": iv.p}, y={t("cope.interpolation.interpolated", value=iv.value): iv.value})
plot(fig, "interpolation")
st.markdown(
    t(
        "cope.interpolation.line",
        p=iv.p,
        lo=iv.lo,
        hi=iv.hi,
        w=iv.w,
        z_hi=iv.z[iv.hi],
        w_lo=1 - iv.w,
        z_lo=iv.z[iv.lo],
        value=iv.value,
    )
)

# ------------------------------------------------------------------------------- attention
st.subheader(t("cope.attention.subheader"))
prose(KEY, "attention")
a1, a2, a3 = st.columns(3)
target = a1.slider(
    t("cope.attention.target"),
    0,
    ch.MAX_TARGET,
    1,
    key="cope_target",
    **URL,
    help=t("cope.attention.target_help", max=ch.MAX_TARGET),
)
strength = a2.slider(
    t("cope.attention.strength"),
    0.0,
    ch.MAX_PREFERENCE,
    8.0,
    0.5,
    key="cope_strength",
    **URL,
    help=t("cope.attention.strength_help", max=ch.MAX_PREFERENCE),
)
content_scale = a3.slider(
    t("cope.attention.content"), 0.0, 2.0, 0.0, 0.1, key="cope_content", **URL, help=t("cope.attention.content_help")
)
av = attention_view(text, unit, word, sharpness, all_open, npos, target, strength, content_scale, seed())
plot(
    F.token_heatmap(
        av.weights,
        av.tokens,
        av.tokens,
        t("cope.attention.title", target=target, what=what),
        kind="weights",
        value_label=weight,
    ),
    "attention",
)

# ----------------------------------------------------------------------------------- alice
st.subheader(t("cope.alice.subheader"))
prose(KEY, "alice")
if words:
    default = words.index("alice") if "alice" in words else 0
    if st.session_state.get("cope_alice_word") not in words:
        st.session_state.pop("cope_alice_word", None)
    asked = st.selectbox(
        t("cope.alice.word"), words, index=default, key="cope_alice_word", **URL, help=t("cope.alice.word_help")
    )
    hard = count_view(text, ch.UNIT_SENTENCE, "", float("inf"), False, ch.MAX_NPOS)
    count, in_last = ch.last_sentence_count(hard, asked)
    hits = [j for j in range(n) if in_last[j] and ch.token_key(cv.tokens[j]) == ch.token_key(asked)]
    plot(
        F.bars(
            hard.tokens,
            in_last.astype(float),
            t("cope.alice.title"),
            x_title=t("cope.alice.x_title"),
            y_title=t("cope.alice.y_title"),
            highlight=hits,
            height=300,
        ),
        "alice",
    )
    st.markdown(
        t(
            "cope.alice.answer",
            word=inline_tokens([asked]),
            count=count,
            total=sum(ch.token_key(tok) == ch.token_key(asked) for tok in tokens.tokens),
        )
    )
else:
    st.info(t("cope.alice.no_words"))

# ---------------------------------------------------------------------- the seed examples
st.subheader(t("cope.seeds.subheader"))
prose(KEY, "seeds")
seed_view = st.cache_data(max_entries=32)(ch.seed_example)
e1, e2, e3, e4 = st.columns([3, 2, 2, 2])
example = e1.radio(
    t("cope.seeds.example"),
    tuple(ch.SEED_EXAMPLES),
    key="cope_example",
    **URL,
    format_func=lambda e: i18n.t(f"cope.seeds.example_name.{e}", LANG),
    help=t("cope.seeds.example_help"),
)
gap = e2.slider(
    t("cope.seeds.gap"),
    1,
    ch.MAX_GAP,
    3 if example.startswith("yyyy") else 1,
    key="cope_gap",
    **URL,
    help=t("cope.seeds.gap_help", max=ch.MAX_GAP),
)
delta = e3.slider(t("cope.seeds.delta"), 0.0, 10.0, 3.0, 0.5, key="cope_delta", **URL, help=t("cope.seeds.delta_help"))
slope = e4.slider(t("cope.seeds.slope"), 0.0, 5.0, 1.0, 0.1, key="cope_slope", **URL, help=t("cope.seeds.slope_help"))
sv = seed_view(example, gap, delta, slope)
sought = ch.SEED_EXAMPLES[example][0]
plot(
    F.token_bars(
        sv.tokens,
        {t(f"cope.seeds.ruler.{r}"): sv.weights[r] for r in ch.RULERS},
        t("cope.seeds.title", tokens=" ".join(sv.tokens)),
        x_title=t("cope.seeds.x_title"),
        y_title=t("cope.seeds.y_title"),
    ),
    "seed_example",
)
last = max(j for j, tok in enumerate(sv.tokens[:-1]) if tok == sought)
st.markdown(
    t(
        "cope.seeds.line",
        sought=sought,
        last=last,
        back=len(sv.tokens) - 1 - last,
        counted=sv.cope_positions[last],
        relative=sv.weights["relative"][last],
        cope=sv.weights["cope"][last],
    )
)

# ----------------------------------------------------------------------------------- model
st.subheader(t("cope.model.subheader"))
prose(KEY, "model")
m1, m2 = st.columns(2)
head = m1.slider(
    t("cope.model.head"), 1, ch.N_HEADS, 1, key="cope_head", **URL, help=t("cope.model.head_help", max=ch.N_HEADS)
)
variant = m2.radio(
    t("cope.model.variant"),
    ("paper", "official"),
    horizontal=True,
    key="cope_variant",
    **URL,
    format_func=lambda v: i18n.t(f"cope.model.variant_name.{v}", LANG),
    help=t("cope.model.variant_help"),
)
mv = model_view(text, seed(), npos, variant)
g1, g2 = st.columns(2)
with g1:
    plot(
        F.token_heatmap(
            mv.gates[head - 1],
            mv.tokens,
            mv.tokens,
            t("cope.model.gates_title", head=head),
            kind="weights",
            value_label=t("cope.gates.value"),
        ),
        "model_gates",
    )
with g2:
    plot(
        F.token_heatmap(
            mv.positions[head - 1],
            mv.tokens,
            mv.tokens,
            t("cope.model.positions_title", head=head),
            kind="index",
            value_label=count_back,
        ),
        "model_positions",
    )
plot(
    F.token_heatmap(
        mv.weights[head - 1],
        mv.tokens,
        mv.tokens,
        t("cope.model.weights_title", head=head, variant=t(f"cope.model.variant_name.{variant}")),
        kind="weights",
        value_label=weight,
    ),
    "model_weights",
)
st.caption(t("cope.model.caption", sign=sign_text(enc.CoPE.name)))
st.page_link("pages/labs/toy_tasks.py", label=t("cope.model.lab_link"), icon=":material/model_training:")
