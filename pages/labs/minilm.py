"""Lab: a real pretrained model (all-MiniLM-L6-v2) on the learner's sentence."""

import numpy as np
import streamlit as st

from explain import figures as F
from explain import i18n
from explain.chapters import minilm as ch
from explain.chapters import minilm_figures
from explain.i18n import language
from models import minilm as enc
from ui.common import header, inline_tokens, plot, prose, seed
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "minilm"
header(
    KEY, enc.PAPER, sources=(enc.MiniLM.embed, enc.EncoderLayer.forward, enc.WordPiece.word_pieces, ch.target_masses)
)
prose(KEY, "intro")


@st.cache_resource(show_spinner=False)  # the spinner below speaks the learner's language
def _warm() -> bool:
    """Loads the model and tokenizer once per server process (models.minilm.load keeps them);
    read-only afterwards."""
    enc.load()
    return True


with st.spinner(t("minilm.loading")):
    _warm()
wordpieces = st.cache_data(ch.wordpieces, max_entries=32)
run = st.cache_data(ch.run, max_entries=32)
position_heads = st.cache_data(ch.position_heads, max_entries=16)
position_table = st.cache_data(ch.position_table)


@st.cache_data(max_entries=16)
def grid_figure(text: str, lang: str):
    """72 small heatmaps cost ~0.3 s to build: cached on the text like the numbers they show, and on
    the language of the words written on them."""
    base, heads = run(text), position_heads(text)
    marks = {(h.layer - 1, h.head - 1): ch.target_mark(h.target, lang) for h in heads.labels}
    thumbs, block = ch.thumbnail_weights(base.weights)
    title = i18n.t("minilm.grid_title", lang) + (i18n.t("minilm.grid_block", lang, block=block) if block > 1 else "")
    return minilm_figures.attention_thumbnails(thumbs, title, marks=marks)


text = st.session_state.get("sentence", "")
pieces = wordpieces(text)
if pieces.kept == 0:
    st.info(t("minilm.no_text"))
    st.stop()
if pieces.truncated:
    st.warning(t("minilm.truncated", found=pieces.n_found, kept=pieces.kept, max_positions=enc.MAX_POSITIONS))

# -- tokens ------------------------------------------------------------------------------------
st.subheader(t("minilm.tokens"))
prose(KEY, "tokens")
n = len(pieces.tokens)
unk = sum(tok == "[UNK]" for tok in pieces.tokens)
jamo = ch.hangul_letters(pieces.tokens)
st.markdown(t("minilm.token_count", n=n, kept=pieces.kept, unk=t("minilm.token_count_unk", unk=unk) if unk else ""))
st.markdown(inline_tokens(pieces.tokens))
if unk or jamo:  # a Korean sentence, emoji, …: say why the model reads it this way
    st.caption(
        " ".join(
            ([t("minilm.unk_note", unk=unk)] if unk else []) + ([t("minilm.jamo_note", jamo=jamo)] if jamo else [])
        )
    )
table = position_table()
st.caption(t("minilm.table_caption", rows=table.shape[0], cols=table.shape[1], last=n - 1))

# -- all heads ---------------------------------------------------------------------------------
st.subheader(t("minilm.grid"))
prose(KEY, "grid")
base = run(text)
heads = position_heads(text)
plot(grid_figure(text, language()), "minilm_grid")

c1, c2 = st.columns(2)
first = heads.labels[0] if heads.labels else None  # open on a head with a measured role
layer = c1.selectbox(
    t("minilm.layer"),
    list(range(1, 7)),
    index=(first.layer - 1) if first else 0,
    key="minilm_layer",
    **URL,
    help=t("minilm.layer_help"),
)
head = c2.selectbox(
    t("minilm.head"),
    list(range(1, 13)),
    index=(first.head - 1) if first else 0,
    key="minilm_head",
    **URL,
    help=t("minilm.head_help"),
)
role = next((h for h in heads.labels if (h.layer, h.head) == (layer, head)), None)
big_title = t("minilm.big_title", layer=layer, head=head) + (
    t("minilm.big_role", target=ch.target_text(role.target)) if role else ""
)
plot(
    F.lab_map(
        base.weights[layer - 1, head - 1],
        base.tokens,
        big_title,
        kind="weights",
        value_label=t("minilm.weight"),
        height=int(min(680, max(380, 150 + 16 * n))),
    ),
    "minilm_big",
)
m = heads.sentence[layer - 1, head - 1]
st.caption(
    t(
        "minilm.head_caption",
        values=" · ".join(f"{ch.target_mark(g)} {v:.2f}" for g, v in zip(ch.TARGETS, m, strict=False)),
    )
)

# -- position heads ----------------------------------------------------------------------------
st.subheader(t("minilm.heads"))
prose(KEY, "heads")
# Option values are ids (kept in the URL across a language switch); only their labels are translated.
# format_func binds this run's language: AppTest calls it again outside the script run.
src = st.radio(
    t("minilm.src"),
    ("reference", "sentence"),
    horizontal=True,
    key="minilm_src",
    **URL,
    format_func=lambda v, lang=language(): i18n.t(f"minilm.src_opt.{v}", lang),
    help=t("minilm.src_help"),
)
masses = heads.reference if src == "reference" else heads.sentence
plot(
    minilm_figures.layer_head_maps(
        np.moveaxis(masses, -1, 0),
        t("minilm.masses_title", src=t(f"minilm.src_opt.{src}")),
        panel_titles=[t("minilm.panel_on", target=ch.target_text(g)) for g in ch.TARGETS],
        value_label=t("minilm.share"),
        cols=2,
        panel_height=250,
    ),
    "minilm_masses",
)
if heads.labels:
    st.markdown(t("minilm.labelled", threshold=heads.threshold))
    st.markdown(
        "\n".join(
            t(
                "minilm.labelled_item",
                layer=h.layer,
                head=h.head,
                target=ch.target_text(h.target),
                mass=h.mass,
                mass_sentence=h.mass_sentence,
            )
            for h in heads.labels
        )
    )
else:
    st.markdown(t("minilm.no_labels", threshold=heads.threshold))

# -- position id experiment ---------------------------------------------------------------------
st.subheader(t("minilm.experiment"))
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
        "minilm_q",
        t("minilm.predict_q"),
        [(h.layer, h.head) for h in asked],
        (calm.layer, calm.head),
        t(
            "minilm.predict_a",
            layer=calm.layer,
            head=calm.head,
            target=ch.target_text(calm.target),
            moves=", ".join(
                t("minilm.predict_move", layer=h.layer, head=h.head, moved=moved10[h.layer - 1, h.head - 1])
                for h in asked
            ),
        ),
        format_func=lambda lh: next(
            t("minilm.predict_option", layer=h.layer, head=h.head, target=ch.target_text(h.target))
            for h in asked
            if (h.layer, h.head) == lh
        ),
    )
e1, e2 = st.columns(2)
mode = e1.radio(
    t("minilm.mode"),
    ch.MODES,
    horizontal=True,
    key="minilm_mode",
    **URL,
    format_func=lambda v, lang=language(): i18n.t(f"minilm.mode_opt.{v}", lang),
    help=t("minilm.mode_help"),
)
max_shift = max(0, enc.MAX_POSITIONS - n)
shift = e2.slider(
    t("minilm.shift"),
    0,
    max_shift,
    min(10, max_shift),
    key="minilm_shift",
    **URL,
    disabled=mode != "shift",
    help=t("minilm.shift_help", max_shift=max_shift, last=enc.MAX_POSITIONS - 1),
)
shift = min(int(shift), max_shift)  # a value kept from a shorter sentence (or a URL) may exceed the new bound
pc = ch.compare(base, run(text, mode, shift, seed()))
ids_text = ", ".join(str(int(v)) for v in pc.position_ids[:24]) + (" …" if n > 24 else "")
st.caption(t("minilm.ids_caption", ids=ids_text))
panel = t("minilm.panel.shift", shift=shift) if mode == "shift" else t(f"minilm.panel.{mode}")
plot(
    minilm_figures.layer_head_maps(
        pc.change[None],
        t("minilm.change_title"),
        panel_titles=[panel],
        value_label=t("minilm.moved"),
        cols=1,
        panel_height=300,
    ),
    "minilm_change",
)
most = np.unravel_index(int(np.argmax(pc.change)), pc.change.shape)
least = np.unravel_index(int(np.argmin(pc.change)), pc.change.shape)
st.markdown(
    t(
        "minilm.most_least",
        l1=most[0] + 1,
        h1=most[1] + 1,
        v1=pc.change[most],
        l2=least[0] + 1,
        h2=least[1] + 1,
        v2=pc.change[least],
        hidden=pc.hidden_change,
    )
)
prose(KEY, "experiment-read")
