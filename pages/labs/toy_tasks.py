"""Lab: the CoPE paper's toy tasks (Flip-Flop, Selective Copy, Counting) with any encoding."""

import uuid

import numpy as np
import pandas as pd
import streamlit as st

from encoders.cope import PAPER
from explain import figures as F
from explain.chapters import toy_tasks as ch
from lab import tasks as T
from lab.model import TinyTransformer
from lab.regenerate import ENCODINGS, shipped_config
from lab.service import SEED_RANGE, STEP_RANGE, QueueFull, TrainingService
from lab.train import answer_loss
from ui.classroom import URL, predict
from ui.common import header, inline_tokens, plot, prose

KEY = "toy-lab"
header(KEY, PAPER, sources=(T.flipflop_sample, TinyTransformer.forward, answer_loss))
prose(KEY, "intro")

results_table = st.cache_data(ch.results_table)
curves = st.cache_data(ch.curves)
distance_errors = st.cache_data(ch.distance_errors)
verdicts = st.cache_data(ch.ordering_verdicts)
load_model = st.cache_resource(ch.load_model)


@st.cache_resource
def service() -> TrainingService:
    """One trainer per server, shared by every session: one training at a time on this machine."""
    return TrainingService()


c1, c2 = st.columns([1, 2])
task_name = c1.selectbox(
    "Task", list(T.TASKS), format_func=lambda k: T.TASKS[k].label, key="toy_task", **URL,
    help="The three toy tasks of the CoPE paper, scaled down to train in about a minute on one CPU core.",
)
encs = c2.multiselect(
    "Encodings", list(ENCODINGS), default=list(ENCODINGS), format_func=ch.short_label, key="toy_encodings", **URL,
    help="The six shipped encodings (up to 6). Every one was trained with the same settings and seed.",
)
task = T.get(task_name)
encs = tuple(e for e in ENCODINGS if e in encs)
prose(KEY, task_name)
st.markdown("**Splits:** " + " · ".join(f"*{ch.SPLIT_SHORT[s.name]}* — {s.label}" for s in task.splits))
st.markdown(f"**Example string** (`?` marks where the model answers): `{task.example}`")

# --- shipped results ---------------------------------------------------------------------------
st.subheader("Shipped results")
index = ch.shipped_index()
if not encs:
    st.info("Pick at least one encoding above.")
elif f"{task_name}/{encs[0]}" not in index.get("runs", {}):
    st.warning("No shipped results for this task yet. Run `python -m lab.regenerate toy` to make them.")
else:
    prose(KEY, "shipped")
    cfg = shipped_config(task_name, encs[0])
    tab = results_table(task_name, encs)
    q = ch.lowest_error(tab, task.split_names[1])  # the first OOD split, from the numbers the table shows
    if q is not None:
        predict(
            "toy_q", f"{task.label}, shipped run: which of the {len(q.errors)} encodings shown has the lowest "
            f"error on the **{ch.SPLIT_SHORT[q.split]}** test set? (If two or more share the lowest error as shown, "
            "to one decimal, the answer is “a tie”.)",
            list(q.errors) + [ch.TIED], q.answer,
            f"**{q.answer if q.answer != ch.TIED else 'A tie'}** — read it in the table below: "
            + ", ".join(f"{k} {v:.1f}%" for k, v in sorted(q.errors.items(), key=lambda kv: kv[1]))
            + ". The paper's full-scale models put CoPE first here; whether this small run agrees is checked "
            "pair by pair under the table.",
        )
    # Text cells: a missing number reads "—" (no shipped run) or "not in paper", never "None".
    blank = {"toy": "—", "paper": "not in paper", "seconds": "—"}
    df = pd.DataFrame(
        [[v if k == "label" else (blank[k] if np.isnan(v) else f"{v:.1f}") for v, k in zip(row, tab.kinds)]
         for row in tab.rows],
        columns=tab.columns,
    )
    st.dataframe(df, hide_index=True, key="toy_table")
    st.caption(
        f"This toy run: {cfg.steps} steps of batch {cfg.batch_size}, seed {cfg.seed}, a {cfg.n_layers}-layer "
        f"model with d = {cfg.d_model} and {cfg.n_heads} heads; errors on {cfg.n_test} test strings per split "
        f"(seed {cfg.test_seed}), counted on answer tokens only. Training time measured on this machine's CPU "
        f"with one thread (torch {index.get('torch', '?')}): CPU time is what one idle core needs; wall time "
        f"includes waiting while other work ran. "
        f"Paper: {ch.PAPER_SOURCE}. \"not in paper\": the paper's table has no row for that encoding."
    )
    prose(KEY, "stand-ins")

    st.markdown("**Does the toy scale reproduce the paper's ordering?**")
    for v in verdicts(task_name):
        order = lambda d: " < ".join(f"{k} {d[k]:.1f}" for k in sorted(d, key=d.get))  # noqa: E731
        if v.agree + v.disagree + v.ties == 0:
            st.markdown(f"- *{v.column}* — only one of the paper's encodings has a shipped run: nothing to compare.")
            continue
        if v.disagree:
            word = f"**A different ordering from the paper** ({v.disagree} pair(s) reversed)."
        elif v.agree:
            word = "The same ordering as the paper."
        else:
            word = "No ordering to compare: the toy run ties where the paper separates."
        ties = f" {v.ties} pair(s) the paper separates are within {ch.TIE} points here." if v.ties and v.agree + v.disagree else ""
        st.markdown(f"- *{v.column}* — {word}{ties}  \n  paper: {order(v.paper)}  \n  this run: {order(v.toy)}")
    prose(KEY, "honest")

    cv = curves(task_name, encs)
    left, right = st.columns(2)
    with left:
        plot(F.lines(cv.steps, cv.loss, "Training loss (answer tokens)", x_title="training step",
                     y_title="cross-entropy (nats)", log_y=True), "toy_curve_loss")
    with right:
        plot(F.lines(cv.steps, cv.val_error, "In-distribution validation error", x_title="training step",
                     y_title="error % (64 validation strings)"), "toy_curve_val")

    st.markdown("**Error against distance**")
    prose(KEY, f"distance-{task_name}")
    split = st.radio("Test split", list(task.split_names), format_func=lambda s: ch.SPLIT_SHORT[s],
                     horizontal=True, key="toy_dist_split", **URL, help="Which test set the bars count.")
    de = distance_errors(task_name, encs, split)
    plot(F.grouped_bars(de.bins, de.error, f"Error by distance — {ch.SPLIT_SHORT[split]}",
                        x_title=task.distance_label, y_title="error %", counts=de.counts), "toy_distance")
    st.caption("No bar: no errors at that distance. n = answers in that range (the same test strings for "
               "every encoding).")

# --- train it yourself -------------------------------------------------------------------------
st.subheader("Train it yourself")
prose(KEY, "train")
svc = service()
owner = st.session_state.setdefault("toy_owner", uuid.uuid4().hex)
with st.form("toy_train_form"):
    st.markdown(f"Task: **{task.label}** (chosen at the top of the page)")
    f1, f2, f3 = st.columns(3)
    t_enc = f1.selectbox("Encoding", list(ENCODINGS), format_func=ch.short_label, key="toy_train_enc",
                         index=len(ENCODINGS) - 1, help="The encoding to train from scratch.")
    t_steps = f2.slider("Steps", STEP_RANGE[0], STEP_RANGE[1], 200, step=10, key="toy_train_steps",
                        help=f"Training steps of batch 32 ({STEP_RANGE[0]}–{STEP_RANGE[1]}). "
                             "About 0.03–0.1 s each on an idle core; longer while the machine is busy.")
    t_seed = f3.number_input("Seed", SEED_RANGE[0], SEED_RANGE[1], 0, key="toy_train_seed",
                             help=f"Model and training-data seed ({SEED_RANGE[0]}–{SEED_RANGE[1]}); "
                                  "the test sets are fixed.")
    go = st.form_submit_button("Train", type="primary", key="toy_train_go")
if go:
    cfg = shipped_config(task_name, t_enc)
    from dataclasses import replace

    try:
        # About 40 points on the live curve, whatever the number of steps.
        job = svc.submit(replace(cfg, steps=int(t_steps), seed=int(t_seed), curve_every=max(5, int(t_steps) // 40)),
                         owner)
        st.session_state["toy_job"] = job.id
    except QueueFull as exc:
        st.warning(str(exc))
    except ValueError as exc:
        st.error(str(exc))


def live_table(metrics: dict) -> pd.DataFrame:
    res = metrics["results"]
    return pd.DataFrame(
        [[ch.SPLIT_SHORT[s], res[s]["error"], res[s]["errors"], res[s]["answers"]] for s in res],
        columns=["split", "error %", "wrong answers", "answers"],
    )


job_id = st.session_state.get("toy_job")
job0 = svc.status(job_id)[0] if job_id else None
# A plain bool, fixed at this full run (the Job object itself changes under the fragment's feet).
polling = job0 is not None and not job0.finished


@st.fragment(run_every=1.0 if polling else None)
def live_panel() -> None:
    job, ahead = svc.status(st.session_state.get("toy_job", 0))
    if job is None:
        st.caption("No training yet in this session. " + (
            "Another learner's training is running on this server; yours would queue behind it."
            if svc.busy() else "The trainer is idle."))
        return
    c = job.config
    what = f"{T.get(c.task).label} × {ch.short_label(c.encoding)}, {c.steps} steps, seed {c.seed}"
    if job.state == "queued":
        st.info(f"Busy — your run ({what}) is queued behind {ahead} other training(s). "
                "It starts by itself; keep this page open.")
    elif job.state == "running" and job.progress is None:
        st.info(f"Starting: {what} …")
    if job.state in ("queued", "running") and st.button("Stop my training", key="toy_stop"):
        svc.stop(job.id, owner)
    p = job.progress
    if p is not None:
        st.progress(min(1.0, p.step / p.steps), text=f"{what}: step {p.step} / {p.steps}, "
                    f"loss {p.loss:.4f}, {p.elapsed:.0f} s")
        if p.curve:
            xs = np.array([s for s, _, _ in p.curve])
            plot(F.lines(xs, {"training loss": np.array([lo for _, lo, _ in p.curve])},
                         "Live training loss (answer tokens)", x_title="training step",
                         y_title="cross-entropy (nats)", log_y=True, markers=True), "toy_live_curve")
    if job.finished:
        if job.state == "failed":
            st.error(f"The training failed: {job.error}")
        elif job.metrics is not None:
            note = {"done": "Finished" + (" (from the cache: these settings were trained before)" if job.cached else ""),
                    "stopped": "Stopped early", "timeout": "Stopped at the time limit",
                    "abandoned": "Stopped: nobody was watching"}.get(job.state, job.state)
            st.success(f"{note}: {what}. Errors measured on the same test sets as the shipped run.")
            st.dataframe(live_table(job.metrics), hide_index=True, key="toy_live_table")
        elif job.state == "stopped":
            st.info("Your queued training was removed from the queue.")
        if polling:
            st.rerun()  # stop polling: a full rerun draws the fragment without run_every


live_panel()

# --- inspect -----------------------------------------------------------------------------------
st.subheader("Inspect a trained model")
prose(KEY, "inspect")
i1, i2 = st.columns([1, 3])
i_enc = i1.selectbox("Shipped model", list(ENCODINGS), format_func=ch.short_label, key="toy_inspect_enc", **URL,
                     index=len(ENCODINGS) - 1, help="One of the shipped models for the task chosen above.")
text = i2.text_input(
    "Task string", task.example, key=f"toy_inspect_text_{task_name}", max_chars=400,
    help=f"Tokens of {task.label} ({'one character each, spaces ignored' if task.char_tokens else 'separated by spaces'}); "
         f"'?' where the model should answer. At most {task.max_length()} tokens (the longest test string).",
)
model = load_model(task_name, i_enc)
if model is None:
    st.warning("This model has not been shipped yet. Run `python -m lab.regenerate toy`.")
else:
    try:
        ins = ch.inspect_string(model, task_name, text)
    except T.ParseError as exc:
        st.warning(str(exc))
        if exc.token is not None:
            st.markdown("The token it could not read: " + inline_tokens([exc.token]))
        ins = None
    if ins is not None:
        rows = []
        for k in ins.slots:
            right = ins.correct[k]
            verdict = "—" if right is None else ("✓" if ins.predicted[k] == right else "✗")
            rows.append([k, ins.typed[k], ins.predicted[k], ins.confidence[k], "undefined" if right is None else right,
                         verdict])
        st.dataframe(pd.DataFrame(rows, columns=["position", "typed", "model says", "probability", "rule says", "match"]),
                     hide_index=True, key="toy_inspect_table",
                     column_config={"probability": st.column_config.NumberColumn(format="%.3f")})
        st.markdown("**As the model read it** ('?' filled in with its own answers): " + inline_tokens(ins.tokens))
        n = len(ins.tokens)
        cols = model.cfg.n_heads
        plot(F.token_heatmap_grid(ins.weights, ins.tokens, "Attention weights per layer and head",
                                  panel_titles=ins.panel_titles, kind="weights", value_label="weight", cols=cols,
                                  panel_height=300 if n <= 40 else 360), "toy_attn")
        if ins.gates is not None:
            prose(KEY, "cope-inspect")
            plot(F.token_heatmap_grid(ins.gates, ins.tokens, "CoPE gates g_ij = σ(q_i·k_j/√d)",
                                      panel_titles=ins.panel_titles, kind="weights", value_label="gate", cols=cols,
                                      panel_height=300 if n <= 40 else 360), "toy_gates")
            plot(F.token_heatmap_grid(ins.positions, ins.tokens, "CoPE positions p_ij = Σ_{t=j..i} g_it",
                                      panel_titles=ins.panel_titles, kind="index", value_label="p_ij", cols=cols,
                                      panel_height=300 if n <= 40 else 360), "toy_positions")

st.subheader("Regenerate everything")
prose(KEY, "regenerate")
