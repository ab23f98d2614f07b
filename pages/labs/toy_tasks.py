"""Lab: the CoPE paper's toy tasks (Flip-Flop, Selective Copy, Counting) with any encoding.

A page only shows: widgets → cached calls into explain/chapters/toy_tasks.py (shipped results) and
toy_tasks_models.py (shipped models, live training) → figures → st.*. The question, the ordering
verdicts and every sentence that states a number are computed there.

Longer than 500 lines: one page whose parts (shipped results with their seeds, probes, length curves
and the two one-factor experiments; live training; inspect; regenerate) all read the task and
encodings chosen at its top, and each part is already one call per section into explain/.
"""

import uuid

import streamlit as st

from explain import figures as F
from explain.chapters import toy_tasks as ch
from explain.chapters import toy_tasks_evidence as evidence
from explain.chapters import toy_tasks_figures
from explain.chapters import toy_tasks_models as models
from explain.chapters import toy_tasks_more as more
from explain.chapters import toy_tasks_probes as probes
from lab import tasks as T
from lab.regenerate import ENCODINGS, TOY_DIR, shipped_config
from lab.service import SEED_RANGE, STEP_RANGE, BadSettings, QueueFull
from ui.cache import cached, resource
from ui.common import inline_tokens, plot
from ui.i18n import current, option_names, t
from ui.question import answer_shown, ask_alone, folded
from ui.section import open_chapter
from ui.url_state import Param

page = open_chapter(ch.CHAPTER)
page.prose("intro")

# Shared by every learner, bounded where each function is defined (explain/bounds.py).
shipped_index = cached(ch.shipped_index)
results_table = cached(ch.results_table)
lowest_question = cached(ch.lowest_question)
verdict_lines = cached(ch.verdict_lines)
curves = cached(ch.curves)
distance_errors = cached(ch.distance_errors)
encoder_tables = cached(models.encoder_tables)
seed_series = cached(probes.seed_series)
factor_series = cached(probes.factor_series)
probe_bins = cached(probes.probe_bins)
length_series = cached(probes.length_series)
scale_section = cached(more.scale_section)
cope_table_section = cached(more.cope_table_section)
# Read-only objects the same for everyone: the 18 shipped models (~100,000 weights each) and the one
# trainer of this server.
load_model = resource(models.load_model)
service = resource(models.training_service)
probe_label = cached(probes.probe_label)
probe_strings = cached(probes.probe_strings)
shipped_seeds = cached(probes.shipped_seeds)
lr_text = cached(probes.lr_text)
test_set_text = cached(evidence.test_set_text)
bucket_lines = cached(evidence.bucket_lines)
bucket_findings = cached(evidence.bucket_findings)
zero_bound = cached(evidence.zero_bound)


def _inspection(task: str, encoding: str, text: str, directory: str, lang: str) -> models.Inspection:
    """A shipped model on a typed string (a function of the five; the model comes from load_model).
    Called only for a model the page found shipped."""
    model = load_model(task, encoding, directory)
    if model is None:
        raise LookupError(task, encoding)  # not shipped
    return models.inspect_string(model, task, text, lang)


inspection = cached(_inspection, max_entries=64)
lang = current()
DIR = str(TOY_DIR)  # where the shipped results live (a string: it is part of every cache key)


def short(enc: str) -> str:
    return ch.short_label(enc, lang)


def split_short(split: str) -> str:
    return ch.split_short(split, lang)


def strips(categories, series, title: str, x_title: str, key: str, styles=None) -> None:
    """Every seed's dot and the mean with its 95% interval, per series and category (error %)."""
    plot(
        toy_tasks_figures.seed_strips(
            categories,
            series,
            title,
            x_title=x_title,
            y_title=t("toy_tasks.fig2.error"),
            seed_label=t("toy_tasks.fig2.seed"),
            mean_label=t("toy_tasks.fig2.mean"),
            styles=styles,
        ),
        key,
    )


# Task, encodings, split and model live in the address as ids (?toy_task=counting&toy_encodings=rope,cope),
# never as the names shown, so a link made in Korean opens the same view in English.
TASKS = tuple(T.TASKS)
c1, c2 = st.columns([1, 2])
TASK = Param.choice("toy_task", TASKS, default=TASKS[0])
task_name = TASK.widget(
    c1.selectbox,
    t("toy_tasks.task"),
    TASKS,
    format_func=option_names(TASKS, ch.task_label),
    help=t("toy_tasks.task_help"),
)
ENCS = Param("toy_encodings", "toy_encodings", list(ENCODINGS), ch.parse_encodings, ch.dump_encodings)
ENCS.restore()
st.session_state.setdefault(ENCS.key, list(ENCODINGS))
chosen = ENCS.widget(
    c2.multiselect,
    t("toy_tasks.encodings"),
    list(ENCODINGS),
    format_func=option_names(ENCODINGS, short),
    help=t("toy_tasks.encodings_help", n=len(ENCODINGS)),
)
task = T.get(task_name)
encs = tuple(e for e in ENCODINGS if e in chosen)
page.prose(task_name)
st.markdown(
    t("toy_tasks.splits")
    + " · ".join(f"*{split_short(s.name)}* — {t(f'toy_tasks.split.{task_name}.{s.name}')}" for s in task.splits)
)
st.markdown(t("toy_tasks.example", example=task.example))


@page.section(owns=("toy_dist_split", "toy_distance"))
def distance_section(task_name: str, encs: tuple[str, ...]) -> None:
    """Owns the test-split radio and its error-by-distance chart: choosing a split reruns this only."""
    lang = current()
    task = T.get(task_name)
    SPLIT = Param.choice("toy_dist_split", task.split_names, default=task.split_names[0])
    SPLIT.settle(task.split_names)  # a split of the task chosen before is gone
    split = SPLIT.widget(
        st.radio,
        t("toy_tasks.split_label"),
        task.split_names,
        format_func=option_names(task.split_names, split_short),
        horizontal=True,
        help=t("toy_tasks.split_help"),
    )
    de = distance_errors(task_name, encs, split, DIR, lang)
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


@page.section(owns=("toy_probe", "toy_probe_distance", "toy_probe_distractors"))
def probe_section(task_name: str, encs: tuple[str, ...], ids: tuple[str, ...]) -> None:
    """Owns the probe radio and its two bar charts: choosing a probe reruns this section only."""
    lang = current()
    PROBE = Param.choice("toy_probe", ids, default=ids[0])
    PROBE.settle(ids)  # a probe of the task chosen before is gone
    probe = PROBE.widget(
        st.radio,
        t("toy_tasks.probe_label"),
        list(ids),
        format_func=option_names(ids, lambda p: probes.probe_short(task_name, p, lang)),
        horizontal=True,
        help=t("toy_tasks.probe_help"),
    )
    name = probes.probe_short(task_name, probe, lang)
    left, right = st.columns(2)
    for col, kind, fig_key, title, axis in (
        (left, "by_distance", "toy_probe_distance", "toy_tasks.fig2.distance", f"toy_tasks.distance.{task_name}"),
        (
            right,
            "by_distractors",
            "toy_probe_distractors",
            "toy_tasks.fig2.distractors",
            f"toy_tasks.distractors.{task_name}",
        ),
    ):
        pb = probe_bins(task_name, probe, kind, encs, DIR, lang)
        if pb is not None:
            with col:
                plot(
                    toy_tasks_figures.grouped_bars(
                        pb.bins,
                        pb.error,
                        t(title, probe=name),
                        x_title=t(axis),
                        y_title=t("toy_tasks.fig2.error"),
                        counts=pb.counts,
                    ),
                    fig_key,
                )
    st.caption(t("toy_tasks.distance_caption"))


# --- shipped results ---------------------------------------------------------------------------
st.header(t("toy_tasks.shipped_header"))
index = shipped_index(DIR)
if not encs:
    st.info(t("toy_tasks.pick_one"))
elif f"{task_name}/{encs[0]}" not in index.get("runs", {}):
    st.warning(t("toy_tasks.no_shipped"))
else:
    page.prose("shipped")
    cfg = shipped_config(task_name, encs[0])
    question = lowest_question(task_name, encs, DIR, lang)
    if question is not None:
        # The table, the verdicts and CoPE's variant below answer it: Reveal reruns the whole page,
        # so they can wait for it (the table folded).
        ask_alone(question, whole_page=True)
    with folded(question, "table"):
        st.dataframe(
            ch.table_columns(results_table(task_name, encs, DIR, lang), lang), hide_index=True, key="toy_table"
        )
    st.caption(
        t(
            "toy_tasks.run_caption",
            steps=cfg.steps,
            batch=cfg.batch_size,
            seeds=", ".join(str(x) for x in shipped_seeds(DIR)),
            layers=cfg.n_layers,
            d=cfg.d_model,
            heads=cfg.n_heads,
            n_test=cfg.n_test,
            test_seed=cfg.test_seed,
            zero_bound=zero_bound(cfg.n_test),
            torch=index.get("torch", "?"),
            source=t("toy_tasks.paper_source"),
            not_in_paper=t("toy_tasks.not_in_paper"),
        )
    )
    st.caption(test_set_text(task_name, DIR, lang))
    st.caption(lr_text(task_name, encs, DIR, lang))
    page.prose("stand-ins")
    tables = encoder_tables(task_name, "t5", DIR)
    if tables is not None and tables.tables:
        _, shape = tables.tables[0]
        kind = (
            "toy_tasks.t5_tables_per_layer"
            if tables.per_layer
            else "toy_tasks.t5_tables_shared"
            if len(tables.tables) == 1 and tables.layers > 1
            else "toy_tasks.t5_tables_other"
        )
        st.caption(t(kind, tables=len(tables.tables), layers=tables.layers, buckets=shape[0], heads=shape[-1]))
    found = bucket_findings(DIR) if task_name == "flipflop" else None
    if found is not None and found.encoding in encs:
        st.markdown(t("toy_tasks.bucket.header", enc=short(found.encoding)))
        st.markdown(" ".join(bucket_lines(DIR, lang)))

    st.markdown(t("toy_tasks.ordering_header"))
    if answer_shown(question, "verdicts"):
        for line in verdict_lines(task_name, DIR, lang):
            st.markdown(line)
    st.caption(
        t(
            "toy_tasks.scale_note",
            layers=cfg.n_layers,
            d=cfg.d_model,
            steps=cfg.steps,
            tokens=task.split_length("id"),
            task=task.label,
        )
    )
    if task_name == "counting":
        st.caption(t("toy_tasks.counting_mix_note"))
    table_lines = cope_table_section(task_name, encs, lang, DIR)
    if table_lines and answer_shown(question, "cope"):
        st.caption(t("toy_tasks.cope_note"))
        st.markdown(t("toy_tasks.cope_table.header"))
        st.markdown("\n".join(table_lines))
    page.prose("honest")

    st.markdown(t("toy_tasks.seeds_header"))
    page.prose("seeds")
    ss = seed_series(task_name, encs, DIR, lang)
    strips(
        ss.categories,
        ss.series,
        t("toy_tasks.fig2.seeds", split=" · ".join(ss.categories)),
        t("toy_tasks.split_label"),
        "toy_seeds",
    )
    st.caption(t("toy_tasks.seeds_caption"))

    cv = curves(task_name, encs, DIR, lang)
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
                y_title=t("toy_tasks.fig.val_y", n=cfg.n_val),
            ),
            "toy_curve_val",
        )

    st.markdown(t("toy_tasks.distance_header"))
    page.prose(f"distance-{task_name}")
    distance_section(task_name, encs)

    # --- one factor at a time (evaluation-only probes of the shipped checkpoints) ----------------
    st.markdown(t("toy_tasks.factors_header"))
    page.prose(f"factors-{task_name}")
    fs = factor_series(task_name, encs, DIR, lang)
    if fs is not None and fs.series:
        strips(fs.categories, fs.series, t("toy_tasks.fig2.factors"), t("toy_tasks.probe_label"), "toy_factors")
        st.caption(t("toy_tasks.factors_caption", n=probe_strings(DIR)))
        st.markdown(
            " · ".join(f"*{fs.categories[k]}* — {probe_label(task_name, p, DIR, lang)}" for k, p in enumerate(fs.ids))
        )
        probe_section(task_name, encs, tuple(fs.ids))

    # --- train short, test long --------------------------------------------------------------------
    st.markdown(t("toy_tasks.lengths_header"))
    page.prose("lengths")
    ls = length_series(task_name, encs, DIR, lang)
    if ls is not None and ls.series:
        plot(
            toy_tasks_figures.band_lines(
                ls.factors,
                ls.series,
                t("toy_tasks.fig2.lengths"),
                x_title=t("toy_tasks.fig2.length_x"),
                y_title=t("toy_tasks.fig2.error"),
            ),
            "toy_lengths",
        )
        st.caption(t("toy_tasks.lengths_caption", rows=ls.rows))

    # --- a closer-to-paper scale (lab/toy_more.py) ---------------------------------------------------
    st.markdown(t("toy_tasks.large.header"))
    page.prose("large")
    sc = scale_section(task_name, encs, lang, DIR)
    if sc.note:
        st.caption(sc.note)
    else:
        st.markdown(sc.settings)
        assert sc.series is not None
        strips(
            sc.categories, sc.series, t("toy_tasks.large.figure"), t("toy_tasks.probe_label"), "toy_scale", sc.styles
        )
        st.caption(sc.caption)
        st.markdown("\n".join(sc.lines))
        if sc.verdicts:
            st.markdown(t("toy_tasks.large.ordering"))
            st.markdown("\n".join(sc.verdicts))

# --- train it yourself -------------------------------------------------------------------------
st.header(t("toy_tasks.train_header"))
page.prose("train")
svc = service()
owner = st.session_state.setdefault("toy_owner", uuid.uuid4().hex)
with st.form("toy_train_form"):
    st.markdown(t("toy_tasks.train_task", task=task.label))
    f1, f2, f3 = st.columns(3)
    t_enc = f1.selectbox(
        t("toy_tasks.train_enc"),
        list(ENCODINGS),
        format_func=option_names(ENCODINGS, short),
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
    try:
        job = svc.submit(models.training_config(task_name, t_enc, int(t_steps), int(t_seed)), owner)
        st.session_state["toy_job"] = job.id
    except QueueFull as exc:
        st.warning(t("toy_tasks.queue_full", n=exc.waiting))
    except BadSettings as exc:
        st.error(t(f"toy_tasks.bad_{exc.code}", lo=exc.lo, hi=exc.hi))


job_id = st.session_state.get("toy_job")
job0 = svc.status(job_id)[0] if job_id else None
# A plain bool, fixed at this full run (the Job object itself changes under the fragment's feet).
polling = job0 is not None and not job0.finished


@page.section(run_every=1.0 if polling else None, owns=("toy_stop", "toy_live_curve", "toy_live_table"))
def live_panel() -> None:
    """Owns the Stop button and the running job's progress, curve and results (polled every second
    while this session's job runs)."""
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
            steps, losses = models.live_curve(p)
            plot(
                F.lines(
                    steps,
                    {t("toy_tasks.fig.train_loss"): losses},
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
            st.dataframe(models.live_table(job.metrics, lang), hide_index=True, key="toy_live_table")
        elif job.state == "stopped":
            st.info(t("toy_tasks.live.unqueued"))
        if polling:
            st.rerun()  # stop polling: a full rerun draws the fragment without run_every


live_panel()

# --- inspect -----------------------------------------------------------------------------------
st.header(t("toy_tasks.inspect_header"))
page.prose("inspect")


def inspection_grid(ins, values, title: str, kind: str, value_label: str, fig_key: str, heads: int) -> None:
    """One of the inspected model's maps (query × key), one panel per layer and head."""
    plot(
        F.token_heatmap_grid(
            values,
            ins.tokens,
            t(title),
            kind=kind,
            value_label=value_label,
            row_title=t("toy_tasks.fig.query"),
            col_title=t("toy_tasks.fig.key"),
            cols=heads,
            panel_titles=ins.panel_titles,
            panel_height=300 if len(ins.tokens) <= 40 else 360,
        ),
        fig_key,
    )


@page.section(
    owns=("toy_attn", "toy_gates", "toy_inspect_enc", "toy_inspect_table", "toy_positions", "toy_inspect_text_*")
)
def inspect_section(task_name: str) -> None:
    """Owns the model, the typed string and what the model makes of it: typing reruns this section only."""
    lang = current()
    task = T.get(task_name)
    i1, i2 = st.columns([1, 3])
    MODEL = Param.choice("toy_inspect_enc", ENCODINGS, default=ENCODINGS[-1])
    MODEL.restore()
    st.session_state.setdefault(MODEL.key, MODEL.default)
    i_enc = MODEL.widget(
        i1.selectbox,
        t("toy_tasks.inspect.model"),
        list(ENCODINGS),
        format_func=option_names(ENCODINGS, short),
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
    model = load_model(task_name, i_enc, DIR)
    if model is None:
        st.warning(t("toy_tasks.inspect.not_shipped"))
    else:
        ins: models.Inspection | None = None
        try:
            ins = inspection(task_name, i_enc, text, DIR, lang)
        except T.ParseError as exc:
            st.warning(models.parse_error_text(exc, lang))
            if exc.token is not None:
                st.markdown(t("toy_tasks.inspect.bad_token") + " " + inline_tokens([exc.token]))
        if ins is not None:
            rows = models.inspection_table(ins, lang)
            probability = t("toy_tasks.inspect.col.probability")
            st.dataframe(
                rows,
                hide_index=True,
                key="toy_inspect_table",
                column_config={probability: st.column_config.NumberColumn(format="%.3f")},
            )
            st.markdown(t("toy_tasks.inspect.as_read") + " " + inline_tokens(ins.tokens))
            heads = model.cfg.n_heads
            inspection_grid(
                ins, ins.weights, "toy_tasks.fig.attention", "weights", t("toy_tasks.fig.weight"), "toy_attn", heads
            )
            if ins.gates is not None and ins.positions is not None:
                page.prose("cope-inspect")
                inspection_grid(
                    ins, ins.gates, "toy_tasks.fig.gates", "weights", t("toy_tasks.fig.gate"), "toy_gates", heads
                )
                inspection_grid(ins, ins.positions, "toy_tasks.fig.positions", "index", "p_ij", "toy_positions", heads)


inspect_section(task_name)

st.header(t("toy_tasks.regenerate_header"))
page.prose("regenerate")
