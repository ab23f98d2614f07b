"""Lab: the CoPE paper's toy tasks (Flip-Flop, Selective Copy, Counting) with any encoding."""

import uuid
from dataclasses import replace

import numpy as np
import pandas as pd
import streamlit as st

from encoders.cope import PAPER
from explain import figures as F
from explain import i18n
from explain.chapters import toy_tasks as ch
from explain.chapters import toy_tasks_figures
from lab import tasks as T
from lab.model import TinyTransformer
from lab.regenerate import ENCODINGS, shipped_config
from lab.service import SEED_RANGE, STEP_RANGE, BadSettings, QueueFull, TrainingService
from lab.train import answer_loss
from ui.common import header, inline_tokens, plot, prose
from ui.i18n import t
from ui.question import predict
from ui.url_state import URL

KEY = "toy-lab"
header(KEY, PAPER, sources=(T.flipflop_sample, TinyTransformer.forward, answer_loss))
prose(KEY, "intro")

results_table = st.cache_data(ch.results_table)
curves = st.cache_data(ch.curves)
distance_errors = st.cache_data(ch.distance_errors)
verdicts = st.cache_data(ch.ordering_verdicts)
load_model = st.cache_resource(ch.load_model)
lang = i18n.language()


@st.cache_resource
def service() -> TrainingService:
    """One trainer per server, shared by every session: one training at a time on this machine."""
    return TrainingService()


def short(enc: str) -> str:
    return ch.short_label(enc, lang)


def split_short(split: str) -> str:
    return ch.split_short(split, lang)


c1, c2 = st.columns([1, 2])
task_name = c1.selectbox(
    t("toy_tasks.task"),
    list(T.TASKS),
    format_func=lambda k: T.TASKS[k].label,
    key="toy_task",
    **URL,
    help=t("toy_tasks.task_help"),
)
encs = c2.multiselect(
    t("toy_tasks.encodings"),
    list(ENCODINGS),
    default=list(ENCODINGS),
    format_func=short,
    key="toy_encodings",
    **URL,
    help=t("toy_tasks.encodings_help", n=len(ENCODINGS)),
)
task = T.get(task_name)
encs = tuple(e for e in ENCODINGS if e in encs)
prose(KEY, task_name)
st.markdown(
    t("toy_tasks.splits")
    + " · ".join(f"*{split_short(s.name)}* — {t(f'toy_tasks.split.{task_name}.{s.name}')}" for s in task.splits)
)
st.markdown(t("toy_tasks.example", example=task.example))

# --- shipped results ---------------------------------------------------------------------------
st.subheader(t("toy_tasks.shipped_header"))
index = ch.shipped_index()
if not encs:
    st.info(t("toy_tasks.pick_one"))
elif f"{task_name}/{encs[0]}" not in index.get("runs", {}):
    st.warning(t("toy_tasks.no_shipped"))
else:
    prose(KEY, "shipped")
    cfg = shipped_config(task_name, encs[0])
    tab = results_table(task_name, encs, lang=lang)
    q = ch.lowest_error(tab, task.split_names[1], lang)  # the first OOD split, from the numbers the table shows
    if q is not None:
        predict(
            "toy_q",
            t("toy_tasks.q_lowest", task=task.label, n=len(q.errors), split=split_short(q.split)),
            [*list(q.errors), ch.TIED],
            q.answer,
            t(
                "toy_tasks.q_lowest_why",
                answer=q.answer if q.answer != ch.TIED else t("toy_tasks.a_tie_answer"),
                errors=", ".join(f"{k} {v:.1f}%" for k, v in sorted(q.errors.items(), key=lambda kv: kv[1])),
            ),
            format_func=lambda o: i18n.t("toy_tasks.a_tie", lang) if o == ch.TIED else o,
        )
    # Text cells: a missing number reads "—" (no shipped run) or "not in paper", never "None".
    blank = {"toy": "—", "paper": t("toy_tasks.not_in_paper"), "seconds": "—"}
    df = pd.DataFrame(
        [
            [
                v if k == "label" else (blank[k] if np.isnan(v) else f"{v:.1f}")
                for v, k in zip(row, tab.kinds, strict=False)
            ]
            for row in tab.rows
        ],
        columns=tab.columns,
    )
    st.dataframe(df, hide_index=True, key="toy_table")
    st.caption(
        t(
            "toy_tasks.run_caption",
            steps=cfg.steps,
            batch=cfg.batch_size,
            seed=cfg.seed,
            layers=cfg.n_layers,
            d=cfg.d_model,
            heads=cfg.n_heads,
            n_test=cfg.n_test,
            test_seed=cfg.test_seed,
            torch=index.get("torch", "?"),
            source=t("toy_tasks.paper_source"),
            not_in_paper=t("toy_tasks.not_in_paper"),
        )
    )
    prose(KEY, "stand-ins")

    st.markdown(t("toy_tasks.ordering_header"))
    for v in verdicts(task_name, lang=lang):
        order = lambda d: " < ".join(f"{k} {d[k]:.1f}" for k in sorted(d, key=d.get))  # noqa: E731
        column = ch.paper_column(v.column, lang)
        if v.agree + v.disagree + v.ties == 0:
            st.markdown(t("toy_tasks.verdict_single", column=column))
            continue
        if v.disagree:
            word = t("toy_tasks.verdict_different", n=v.disagree)
        elif v.agree:
            word = t("toy_tasks.verdict_same")
        else:
            word = t("toy_tasks.verdict_all_ties")
        ties = t("toy_tasks.verdict_ties", n=v.ties, tie=ch.TIE) if v.ties and v.agree + v.disagree else ""
        st.markdown(t("toy_tasks.verdict", column=column, word=word, ties=ties, paper=order(v.paper), toy=order(v.toy)))
    prose(KEY, "honest")

    cv = curves(task_name, encs, lang=lang)
    left, right = st.columns(2)
    with left:
        plot(
            F.lines(
                cv.steps,
                cv.loss,
                t("toy_tasks.fig.loss"),
                x_title=t("toy_tasks.fig.step"),
                y_title=t("toy_tasks.fig.ce"),
                log_y=True,
            ),
            "toy_curve_loss",
        )
    with right:
        plot(
            F.lines(
                cv.steps,
                cv.val_error,
                t("toy_tasks.fig.val"),
                x_title=t("toy_tasks.fig.step"),
                y_title=t("toy_tasks.fig.val_y", n=64),
            ),
            "toy_curve_val",
        )

    st.markdown(t("toy_tasks.distance_header"))
    prose(KEY, f"distance-{task_name}")
    split = st.radio(
        t("toy_tasks.split_label"),
        list(task.split_names),
        format_func=split_short,
        horizontal=True,
        key="toy_dist_split",
        **URL,
        help=t("toy_tasks.split_help"),
    )
    de = distance_errors(task_name, encs, split, lang=lang)
    plot(
        toy_tasks_figures.grouped_bars(
            de.bins,
            de.error,
            t("toy_tasks.fig.distance", split=split_short(split)),
            x_title=t(f"toy_tasks.distance.{task_name}"),
            y_title=t("toy_tasks.fig.error"),
            counts=de.counts,
        ),
        "toy_distance",
    )
    st.caption(t("toy_tasks.distance_caption"))

# --- train it yourself -------------------------------------------------------------------------
st.subheader(t("toy_tasks.train_header"))
prose(KEY, "train")
svc = service()
owner = st.session_state.setdefault("toy_owner", uuid.uuid4().hex)
with st.form("toy_train_form"):
    st.markdown(t("toy_tasks.train_task", task=task.label))
    f1, f2, f3 = st.columns(3)
    t_enc = f1.selectbox(
        t("toy_tasks.train_enc"),
        list(ENCODINGS),
        format_func=short,
        key="toy_train_enc",
        index=len(ENCODINGS) - 1,
        help=t("toy_tasks.train_enc_help"),
    )
    t_steps = f2.slider(
        t("toy_tasks.steps"),
        STEP_RANGE[0],
        STEP_RANGE[1],
        200,
        step=10,
        key="toy_train_steps",
        help=t("toy_tasks.steps_help", lo=STEP_RANGE[0], hi=STEP_RANGE[1]),
    )
    t_seed = f3.number_input(
        t("toy_tasks.seed"),
        SEED_RANGE[0],
        SEED_RANGE[1],
        0,
        key="toy_train_seed",
        help=t("toy_tasks.seed_help", lo=SEED_RANGE[0], hi=SEED_RANGE[1]),
    )
    go = st.form_submit_button(t("toy_tasks.train_go"), type="primary", key="toy_train_go")
if go:
    cfg = shipped_config(task_name, t_enc)
    try:
        # About 40 points on the live curve, whatever the number of steps.
        job = svc.submit(
            replace(cfg, steps=int(t_steps), seed=int(t_seed), curve_every=max(5, int(t_steps) // 40)), owner
        )
        st.session_state["toy_job"] = job.id
    except QueueFull as exc:
        st.warning(t("toy_tasks.queue_full", n=exc.waiting))
    except BadSettings as exc:
        st.error(t(f"toy_tasks.bad_{exc.code}", lo=exc.lo, hi=exc.hi))


def live_table(metrics: dict) -> pd.DataFrame:
    res = metrics["results"]
    return pd.DataFrame(
        [[split_short(s), res[s]["error"], res[s]["errors"], res[s]["answers"]] for s in res],
        columns=[
            t("toy_tasks.live.split"),
            t("toy_tasks.live.error"),
            t("toy_tasks.live.wrong"),
            t("toy_tasks.live.answers"),
        ],
    )


job_id = st.session_state.get("toy_job")
job0 = svc.status(job_id)[0] if job_id else None
# A plain bool, fixed at this full run (the Job object itself changes under the fragment's feet).
polling = job0 is not None and not job0.finished


@st.fragment(run_every=1.0 if polling else None)
def live_panel() -> None:
    job, ahead = svc.status(st.session_state.get("toy_job", 0))
    if job is None:
        st.caption(
            t("toy_tasks.live.none") + " " + t("toy_tasks.live.other_busy" if svc.busy() else "toy_tasks.live.idle")
        )
        return
    c = job.config
    what = t("toy_tasks.live.what", task=T.get(c.task).label, enc=short(c.encoding), steps=c.steps, seed=c.seed)
    if job.state == "queued":
        st.info(t("toy_tasks.live.queued", what=what, ahead=ahead))
    elif job.state == "running" and job.progress is None:
        st.info(t("toy_tasks.live.starting", what=what))
    if job.state in ("queued", "running") and st.button(t("toy_tasks.live.stop"), key="toy_stop"):
        svc.stop(job.id, owner)
    p = job.progress
    if p is not None:
        st.progress(
            min(1.0, p.step / p.steps),
            text=t("toy_tasks.live.progress", what=what, step=p.step, steps=p.steps, loss=p.loss, s=p.elapsed),
        )
        if p.curve:
            xs = np.array([s for s, _, _ in p.curve])
            plot(
                F.lines(
                    xs,
                    {t("toy_tasks.fig.train_loss"): np.array([lo for _, lo, _ in p.curve])},
                    t("toy_tasks.fig.live_loss"),
                    x_title=t("toy_tasks.fig.step"),
                    y_title=t("toy_tasks.fig.ce"),
                    log_y=True,
                    markers=True,
                ),
                "toy_live_curve",
            )
    if job.finished:
        if job.state == "failed":
            st.error(t("toy_tasks.live.failed", error=job.error))
        elif job.metrics is not None:
            state = "cached" if job.state == "done" and job.cached else job.state
            note = (
                t(f"toy_tasks.state.{state}")
                if state in ("done", "cached", "stopped", "timeout", "abandoned")
                else state
            )
            st.success(t("toy_tasks.live.finished", note=note, what=what))
            st.dataframe(live_table(job.metrics), hide_index=True, key="toy_live_table")
        elif job.state == "stopped":
            st.info(t("toy_tasks.live.unqueued"))
        if polling:
            st.rerun()  # stop polling: a full rerun draws the fragment without run_every


live_panel()

# --- inspect -----------------------------------------------------------------------------------
st.subheader(t("toy_tasks.inspect_header"))
prose(KEY, "inspect")
i1, i2 = st.columns([1, 3])
i_enc = i1.selectbox(
    t("toy_tasks.inspect.model"),
    list(ENCODINGS),
    format_func=short,
    key="toy_inspect_enc",
    **URL,
    index=len(ENCODINGS) - 1,
    help=t("toy_tasks.inspect.model_help"),
)
text = i2.text_input(
    t("toy_tasks.inspect.string"),
    task.example,
    key=f"toy_inspect_text_{task_name}",
    max_chars=400,
    help=t(
        "toy_tasks.inspect.string_help",
        task=task.label,
        max=task.max_length(),
        tokens=t("toy_tasks.inspect.chars" if task.char_tokens else "toy_tasks.inspect.words"),
    ),
)
model = load_model(task_name, i_enc)
if model is None:
    st.warning(t("toy_tasks.inspect.not_shipped"))
else:
    try:
        ins = ch.inspect_string(model, task_name, text, lang)
    except T.ParseError as exc:
        values = dict(exc.values)
        if "rule" in values:
            values["rule"] = t(f"toy_tasks.slot_rule.{values['rule']}")
        st.warning(t(f"toy_tasks.parse.{exc.code}", **values) if exc.code else str(exc))
        if exc.token is not None:
            st.markdown(t("toy_tasks.inspect.bad_token") + " " + inline_tokens([exc.token]))
        ins = None
    if ins is not None:
        rows = []
        for k in ins.slots:
            right = ins.correct[k]
            verdict = "—" if right is None else ("✓" if ins.predicted[k] == right else "✗")
            rows.append(
                [
                    k,
                    ins.typed[k],
                    ins.predicted[k],
                    ins.confidence[k],
                    t("toy_tasks.inspect.undefined") if right is None else right,
                    verdict,
                ]
            )
        columns = [
            t(f"toy_tasks.inspect.col.{c}") for c in ("position", "typed", "says", "probability", "rule", "match")
        ]
        st.dataframe(
            pd.DataFrame(rows, columns=columns),
            hide_index=True,
            key="toy_inspect_table",
            column_config={columns[3]: st.column_config.NumberColumn(format="%.3f")},
        )
        st.markdown(t("toy_tasks.inspect.as_read") + " " + inline_tokens(ins.tokens))
        n = len(ins.tokens)
        cols = model.cfg.n_heads
        axes = dict(
            row_title=t("toy_tasks.fig.query"),
            col_title=t("toy_tasks.fig.key"),
            cols=cols,
            panel_titles=ins.panel_titles,
            panel_height=300 if n <= 40 else 360,
        )
        plot(
            F.token_heatmap_grid(
                ins.weights,
                ins.tokens,
                t("toy_tasks.fig.attention"),
                kind="weights",
                value_label=t("toy_tasks.fig.weight"),
                **axes,
            ),
            "toy_attn",
        )
        if ins.gates is not None:
            prose(KEY, "cope-inspect")
            plot(
                F.token_heatmap_grid(
                    ins.gates,
                    ins.tokens,
                    t("toy_tasks.fig.gates"),
                    kind="weights",
                    value_label=t("toy_tasks.fig.gate"),
                    **axes,
                ),
                "toy_gates",
            )
            plot(
                F.token_heatmap_grid(
                    ins.positions, ins.tokens, t("toy_tasks.fig.positions"), kind="index", value_label="p_ij", **axes
                ),
                "toy_positions",
            )

st.subheader(t("toy_tasks.regenerate_header"))
prose(KEY, "regenerate")
