"""Lab: the learner's sentence through 2–4 registered encodings side by side."""

import numpy as np
import streamlit as st

from encoders import REGISTRY
from explain import figures as F
from explain import i18n
from explain.chapters import attention_lab as lab
from explain.chapters import attention_lab_figures, common
from ui.common import header, inline_tokens, plot, prose, seed, sentence_tokens
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "attention-lab"
SHOWN = ("weights", "position", "content")  # what every panel shows: stable ids, words in the catalogue


def tr(key: str, lang: str, /, **values) -> str:
    """A string of this page in `lang` (for the cached figure builders, whose cache key must see it)."""
    return i18n.t(f"attention_lab.{key}", lang, **values)


def label(method: str, lang: str | None = None) -> str:
    """The encoding's name with its citation, in the learner's language (keyed by registry name:
    some registry labels are words, e.g. "No positional encoding")."""
    return i18n.t(f"attention_lab.method.{method}", lang)


def short(method: str, lang: str | None = None) -> str:
    """The encoding's name without its citation, for titles in narrow columns."""
    return label(method, lang).split(" (")[0]


def who_label(head, lang: str | None = None) -> str:
    return i18n.t("attention_lab.mean_heads", lang) if head is None else i18n.t("attention_lab.head", lang, k=head + 1)


def term_name(term: str, lang: str | None = None) -> str:
    """A logit term's name: letters and codes (a, c2p) stay; the words "content"/"position" are translated."""
    return i18n.t(f"attention_lab.term.{term}", lang) if term in ("content", "position") else term


header(KEY, None, sources=(lab.panel, lab.term_scales, common.run_tokens, lab.shift_test))
prose(KEY, "intro")

panel = st.cache_data(lab.panel, max_entries=64)
shift_test = st.cache_data(lab.shift_test, max_entries=16)
length_test = st.cache_data(lab.length_test, max_entries=8)


# Figures are cached too (on the same primitives as the numbers): building a plotly heatmap costs
# ~50–70 ms, far more than the attention itself, and most reruns change only one section. Their
# words depend on the language, so `lang` is part of every cache key.
@st.cache_data(max_entries=64)
def panel_figure(text, seed_, method, n_heads, causal, dial, off, head, shown, zmax, height, lang):
    p = panel(text, seed_, method, n_heads, causal, dial, off)
    if shown == "weights":
        z, kind, value_label = lab.pick_head(p.weights, head), "weights", tr("value_weight", lang)
    else:
        part = p.position if shown == "position" else p.content
        z, kind, value_label = lab.pick_head(part, head), "signed", tr("value_logit", lang)
    title = tr(
        "panel_title",
        lang,
        method=short(method, lang),
        shown=tr(f"title_show.{shown}", lang),
        who=who_label(head, lang),
    )
    # Two panels per row: at most 20 token labels per axis, so rotated labels do not run together.
    return F.lab_map(z, p.tokens, title, kind=kind, value_label=value_label, zmax=zmax, height=height, max_ticks=20)


@st.cache_data(max_entries=16)
def shift_figure(text, seed_, methods, prefix, n_heads, causal, head, lang):
    sh = shift_test(text, seed_, methods, prefix, n_heads, causal, head)
    return attention_lab_figures.labelled_bars(
        [short(m, lang) for m in sh.methods],
        sh.max_change,
        tr("shift_title", lang, k=len(sh.prefix), who=who_label(head, lang)),
        y_title=tr("shift_y", lang),
        log_y=True,
        floor=1e-17,
        highlight=[k for k, c in enumerate(sh.changed) if c],
    )


@st.cache_data(max_entries=16)
def length_figures(text, seed_, methods, train_len, length, n_heads, causal, head, pick, lang):
    lt = length_test(text, seed_, methods, train_len, length, n_heads, causal, head)
    ok = [r for r in lt.runs if not r.error]
    if not ok:
        return None
    x = np.arange(len(lt.tokens))
    mark = {f"L = {train_len}": train_len - 0.5}
    uniform = tr("uniform", lang)
    dist = F.lines(
        x,
        {**{short(r.method, lang): r.distance for r in ok}, uniform: lt.uniform_distance},
        tr("dist_title", lang),
        x_title=tr("x_query", lang),
        y_title=tr("dist_y", lang),
        dashed=(uniform,),
    )
    ent = F.lines(
        x,
        {**{short(r.method, lang): r.entropy for r in ok}, uniform: lt.uniform_entropy},
        tr("ent_title", lang),
        x_title=tr("x_query", lang),
        y_title=tr("ent_y", lang),
        dashed=(uniform,),
    )
    run = next((r for r in ok if r.method == pick), ok[0])
    # Colour range up to the 99.5th percentile: at hundreds of tokens most weights are ≈ 1/n.
    top = min(1.0, max(0.01, float(np.quantile(run.weights, 0.995))))
    big = F.lab_map(
        run.weights,
        lt.tokens,
        tr(
            "big_title",
            lang,
            method=short(run.method, lang),
            n=len(lt.tokens),
            train_len=train_len,
            who=who_label(head, lang),
            top=top,
        ),
        kind="weights",
        value_label=tr("value_weight", lang),
        zmax=top,
        height=620,
    )
    return F.mark_lines(dist, x=mark), F.mark_lines(ent, x=mark), big


lang = i18n.language()
tokens = sentence_tokens()
text = st.session_state.sentence
n = len(tokens)

methods = st.multiselect(
    t("attention_lab.methods"),
    list(REGISTRY),
    default=list(lab.DEFAULT_METHODS),
    key="lab_methods",
    **URL,
    max_selections=lab.MAX_METHODS,
    format_func=lambda m: label(m, lang),
    help=t("attention_lab.methods_help"),
)
if len(methods) < 2:
    st.info(t("attention_lab.pick_two"))
    st.stop()
methods = tuple(methods)

c1, c2, c3, c4 = st.columns([1, 1, 1.3, 1.6])
n_heads = c1.selectbox(
    t("attention_lab.heads"), lab.HEAD_CHOICES, index=2, key="lab_heads", **URL, help=t("attention_lab.heads_help")
)
head_options = ["mean", *list(range(n_heads))]
head_pick = c2.selectbox(
    t("attention_lab.show_head"),
    head_options,
    index=1,
    key="lab_head",
    format_func=lambda h: who_label(None if h == "mean" else h, lang),
    help=t("attention_lab.show_head_help"),
)
head = None if head_pick == "mean" else int(head_pick)
causal = c3.toggle(t("attention_lab.causal"), value=False, key="lab_causal", **URL, help=t("attention_lab.causal_help"))
dial = c4.slider(
    t("attention_lab.dial"), 0.0, 3.0, 1.0, step=0.25, key="lab_dial", **URL, help=t("attention_lab.dial_help")
)

shown = st.radio(
    t("attention_lab.shown"),
    SHOWN,
    horizontal=True,
    key="lab_show",
    **URL,
    format_func=lambda s: tr(f"show.{s}", lang),
    help=t("attention_lab.shown_help"),
)

multi = [m for m in methods if len(REGISTRY[m].term_names) > 1]
off: dict[str, tuple[str, ...]] = {m: () for m in methods}
with st.expander(t("attention_lab.switches"), expanded=False):
    prose(KEY, "switches")
    if not multi:
        st.caption(t("attention_lab.no_multi"))
    cols = st.columns(max(1, len(multi)))
    for col, m in zip(cols, multi, strict=False):
        col.markdown(f"**{label(m)}**")
        role = {x: "content" for x in lab.content_terms(m)}
        kept = [
            x
            for x in REGISTRY[m].term_names
            if col.checkbox(
                t(
                    "attention_lab.term_label",
                    term=term_name(x),
                    kind=t(f"attention_lab.term_kind.{role.get(x, 'position')}"),
                ),
                value=True,
                key=f"lab_term_{m}_{x}",
            )
        ]
        off[m] = tuple(x for x in REGISTRY[m].term_names if x not in kept)

mixed = [short(m) for m in methods if lab.mixed_in_input(m)]
if mixed:
    st.caption(
        t(
            "attention_lab.mixed_one" if len(mixed) == 1 else "attention_lab.mixed_many",
            names=t("attention_lab.and").join(mixed),
        )
    )

panels = [panel(text, seed(), m, n_heads, causal, dial, off[m]) for m in methods]
height = int(min(560, max(340, 150 + 14 * n)))
if shown == "weights":
    # One colour range for all panels, up to the strongest weight shown: a 0…1 scale would leave
    # a long sentence's maps (weights ≈ 1/n) white. Shared, so "darker" means the same everywhere.
    zmax = max(float(np.nanmax(lab.pick_head(p.weights, head))) for p in panels)
    zmax = min(1.0, max(0.05, float(np.ceil(zmax * 20) / 20)))
else:
    parts = [(p.position if shown == "position" else p.content) for p in panels]
    finite = [np.abs(lab.pick_head(a, head)) for a in parts if a is not None]
    zmax = max((float(np.nanmax(a)) for a in finite if np.isfinite(a).any()), default=1.0) or 1.0

for row in range(0, len(panels), 2):
    cols = st.columns(2)
    for col, p in zip(cols, panels[row : row + 2], strict=False):
        with col:
            if shown == "position" and p.position is None:
                st.markdown(f"**{label(p.method)}**")
                st.info(t("attention_lab.no_position_term"))
                continue
            plot(
                panel_figure(
                    text, seed(), p.method, n_heads, causal, dial, off[p.method], head, shown, zmax, height, lang
                ),
                f"lab_panel_{p.method}",
            )
            j, w = lab.top_key(lab.pick_head(p.weights, head), n - 1)
            notes = [
                t("attention_lab.note_last", j=j, token=inline_tokens([p.tokens[j]]), w=w),
                t("attention_lab.note_share", share=lab.position_share(p, head)),
            ]
            if p.off:
                notes.append(t("attention_lab.note_off", terms=", ".join(term_name(x) for x in p.off)))
            st.caption(" · ".join(notes))

prose(KEY, "dial")

# -- shift test ---------------------------------------------------------------------------------
st.subheader(t("attention_lab.shift_header"))
prose(KEY, "shift")
prefix = st.text_input(
    t("attention_lab.prefix"),
    t("attention_lab.prefix_default"),
    max_chars=lab.MAX_PREFIX_CHARS,
    key="lab_prefix",
    **URL,
    help=t("attention_lab.prefix_help", chars=lab.MAX_PREFIX_CHARS, tokens=lab.MAX_PREFIX_TOKENS),
)
if not lab.prefix_tokens(prefix):
    st.info(t("attention_lab.no_prefix"))
else:
    sh = shift_test(text, seed(), methods, prefix, n_heads, causal, head)
    labels = [short(m) for m in sh.methods]
    # The "none of them" option: not a registry name ("none" is NoPE's, which may be among the options).
    nobody = "-"
    most = sh.methods[int(np.argmax(sh.max_change))] if sh.changed.any() else nobody
    predict(
        "lab_shift_q",
        t("attention_lab.q_shift"),
        [*list(methods), nobody],
        most,
        t("attention_lab.q_shift_why") + ("" if most != nobody else t("attention_lab.q_shift_none")),
        format_func=lambda m: tr("none_of_them", lang) if m == nobody else short(m, lang),
    )
    plot(shift_figure(text, seed(), methods, prefix, n_heads, causal, head, lang), "lab_shift")
    moved = [lab_ for lab_, c in zip(labels, sh.changed, strict=False) if c]
    still = [lab_ for lab_, c in zip(labels, sh.changed, strict=False) if not c]
    st.markdown(
        (t("attention_lab.changed", names=", ".join(moved)) if moved else t("attention_lab.changed_none"))
        + (t("attention_lab.unchanged", threshold=f"{lab.CHANGED:g}", names=", ".join(still)) if still else "")
    )

# -- length test --------------------------------------------------------------------------------
st.subheader(t("attention_lab.length_header"))
prose(KEY, "length")
l1, l2 = st.columns(2)
train_len = l1.slider(
    t("attention_lab.train_len"), 4, 256, 32, key="lab_train_len", **URL, help=t("attention_lab.train_len_help")
)
length = l2.slider(
    t("attention_lab.length"),
    8,
    lab.MAX_LENGTH,
    128,
    step=8,
    key="lab_length",
    **URL,
    help=t("attention_lab.length_help", max=lab.MAX_LENGTH),
)
lt = length_test(text, seed(), methods, train_len, length, n_heads, causal, head)
ok = [r for r in lt.runs if not r.error]
for r in lt.runs:
    if r.error:
        last = len(lt.tokens) - 1
        missing = (
            t("attention_lab.missing_one", position=r.first_missing)
            if r.first_missing == last
            else t("attention_lab.missing_many", first=r.first_missing, last=last)
        )
        st.warning(t("attention_lab.no_rows", method=label(r.method), top=train_len - 1, missing=missing))
if ok:
    curves = st.container()  # filled below, so that the curves come before the map's selector
    pick = st.selectbox(
        t("attention_lab.pick_long"), [r.method for r in ok], key="lab_len_pick", format_func=lambda m: label(m, lang)
    )
    dist, ent, big = length_figures(text, seed(), methods, train_len, length, n_heads, causal, head, pick, lang)
    with curves:
        a, b = st.columns(2)
        with a:
            plot(dist, "lab_len_distance")
        with b:
            plot(ent, "lab_len_entropy")
    plot(big, "lab_len_map")
prose(KEY, "length-read")
