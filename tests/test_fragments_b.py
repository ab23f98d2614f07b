"""Section-level reruns (issue 18) on RoPE, Stretching RoPE, ALiBi, CoPE, Splines, the attention lab,
MiniLM and the toy-task lab: which sections are st.fragments, which widgets and charts each one owns, which shared
controls stay at page level, and that moving a fragment's own widget leaves the page whole.

A fragment reruns alone when a widget inside it changes, so a widget whose value another section
reads must not sit inside it, and a fragment rerun skips app.py, so each one sets the run's language
itself (activate()). The ownership below is read from the page's source with ast: a key string or a
chart key belongs to the innermost fragment whose body holds it. AppTest reruns the whole script
(it has no fragment-only rerun), so the behaviour test checks the page, not the timing.
"""

from __future__ import annotations

import ast
from typing import Any

import pytest

from tests.helpers import ROOT, chart_elements, errors, open_page

# page → {fragment: keys it owns (widget keys, chart keys, a proof's key_prefix)}; "" lists keys that
# must stay outside every fragment (controls shared by several sections).
PAGES: dict[str, dict[str, set[str]]] = {
    "pages/rotary/rope.py": {
        "circles_part": {"rope_m", "rope_n", "rope_move", "rope_frame", "rope_circles"},
        "identity_part": {"rope_size", "rope_shift", "rope_identity", "rope_identity_rows"},
        "decay_section": {"rope_decay_d", "rope_decay_dist", "rope_decay"},
        "matrix_section": {
            "rope_matrix_d",
            "rope_matrix_m",
            "rope_why_block",
            "rope_R_interleaved",
            "rope_R_half",
            "rope_skew_generator",
            "rope_skew_blocks",
        },
        "sentence_section": {"rope_causal", "rope_offset", "rope_terms", "rope_attention", "rope_terms_grid"},
        # The words, head size and base are read by sections 1, 2 and 4 only: one fragment around them.
        "rotation_part": {
            "rope_q_word",
            "rope_k_word",
            "rope_d",
            "rope_base",
            "rope_proof2d",
            "rope_proofd",
            "rope_proofc",
        },
        "": {"rope_goal"},
    },
    "pages/rotary/rope_scaling.py": {
        "frequencies_part": {"rs_ratio", "rs_wavelength"},
        "angles_section": {"rs_angles"},
        "distance_section": {"rs_distance"},
        "sentence_part": {"rs_L_sentence", "rs_causal", "rs_attention", "rs_by_distance"},
        "": {"rs_d", "rs_base", "rs_L", "rs_s", "rs_beta_fast", "rs_beta_slow", "rs_gamma"},
    },
    "pages/rotary/alibi.py": {
        "slopes_part": {"alibi_log_slopes", "slopes"},
        "bias_part": {"bias_grid"},
        "attention_section": {"alibi_head", "att_pair", "att_grid", "code_bias", "code_weights"},
        "extrapolation_section": {
            "alibi_train_len",
            "alibi_test_len",
            "alibi_log_x",
            "alibi_scaled",
            "penalty",
            "within",
            "alibi_windows",
        },
        "shuffle_section": {"nope_shuffle", "nope_shuffles", "nope_shuffle_bars"},
        "counting_section": {"nope_count_n", "count_weights", "count_share"},
        # The heads and the mask are read from the slopes to the extrapolation: one fragment around them.
        "heads_part": {"alibi_heads", "alibi_causal", "alibi_proof"},
    },
    "pages/contextual/cope.py": {
        "gates_section": {"gates"},
        "positions_section": {"cope_proof", "positions"},
        "query_section": {"cope_query", "cope_key", "query_bars", "interpolation"},
        "attention_section": {"cope_target", "cope_strength", "cope_content", "attention"},
        "alice_section": {"cope_alice_word", "alice"},
        "seeds_section": {"cope_example", "cope_gap", "cope_delta", "cope_slope", "seed_example"},
        "model_section": {"cope_head", "cope_variant", "model_gates", "model_positions", "model_weights"},
        # The counting settings are read from the gates to the model's maps: one fragment around them.
        "counts_part": {"cope_unit", "cope_word", "cope_sharpness", "cope_all_open", "cope_npos"},
        "": {"cope_figure3"},
    },
    "pages/beyond/spline.py": {
        "part1_section": {"spline_degree", "spline_k", "spline_knots", "spline_basis", "spline_continuity"},
        "local_part": {"spline_point", "spline_dx", "spline_dy", "spline_local", "spline_bezier"},
        "model_part": {"spline_shape", "spline_letter", "spline_recon", "spline_mse_table"},
        "edit_part": {
            "spline_ctrl",
            "spline_pc1",
            "spline_pc2",
            "spline_latent",
            "spline_decoded_edit",
            "spline_change",
            "spline_pe_change",
        },
        "blend_section": {
            "spline_blend_a",
            "spline_blend_la",
            "spline_blend_b",
            "spline_blend_lb",
            "spline_alpha",
            "spline_blend",
        },
        "baseline_section": {"spline_table", "spline_curves"},
        "": {"spline_sweep_table"},
    },
    "pages/labs/attention_lab.py": {
        "panels_part": {"lab_show"},
        "shift_part": {"lab_prefix", "lab_shift"},
        "kv_section": {"lab_kv_cache"},
        "trained_part": {"lab_source"},
        "length_section": {
            "lab_train_len",
            "lab_length",
            "lab_len_pick",
            "lab_len_distance",
            "lab_len_entropy",
            "lab_len_map",
        },
        "": {"lab_methods", "lab_heads", "lab_head", "lab_causal", "lab_dial"},
    },
    "pages/labs/minilm.py": {
        "head_part": {"minilm_layer", "minilm_head", "minilm_big"},
        "heads_section": {"minilm_src", "minilm_masses"},
        "experiment_section": {"minilm_mode", "minilm_shift", "minilm_change"},
        "": {"minilm_grid"},
    },
}
PAGES["pages/labs/toy_tasks.py"] = {
    "distance_section": {"toy_dist_split", "toy_distance"},
    "probe_section": {"toy_probe", "toy_probe_distance", "toy_probe_distractors"},
    "inspect_section": {
        "toy_inspect_enc",
        "toy_inspect_table",
        "toy_attn",
        "toy_gates",
        "toy_positions",
    },
    # The task and the encodings change every section; training's settings sit in a form (no rerun).
    "": {"toy_task", "toy_encodings", "toy_train_form", "toy_train_enc", "toy_train_steps", "toy_train_seed"},
}
NESTED = {
    ("pages/beyond/spline.py", "local_part"): "part1_section",
    ("pages/beyond/spline.py", "edit_part"): "model_part",
}
# Keys the page also names outside their fragment, not as widgets: CoPE drops a remembered query/key
# past a new, shorter sentence's end before any section runs.
ALSO_AT_PAGE_LEVEL = {("pages/contextual/cope.py", "cope_query"), ("pages/contextual/cope.py", "cope_key")}
NO_FRAGMENT_CALLS = {"sentence_tokens", "rerun", "stop"}  # a fragment must not stop or rerun the page


def _is_fragment(fn: ast.FunctionDef) -> bool:
    return any(ast.unparse(d) in ("st.fragment", "st.fragment()") for d in fn.decorator_list)


def _fragments(tree: ast.Module) -> dict[str, tuple[ast.FunctionDef, str]]:
    """Every fragment function by name, with the fragment it is nested in ("" at top level)."""
    out: dict[str, tuple[ast.FunctionDef, str]] = {}

    def walk(node: ast.AST, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef) and _is_fragment(child):
                out[child.name] = (child, outer)
                walk(child, child.name)
            else:
                walk(child, outer)

    walk(tree, "")
    return out


def _owner_of_strings(tree: ast.Module) -> dict[str, set[str]]:
    """Each string constant → the innermost fragments holding it ("" when outside all)."""
    owners: dict[str, set[str]] = {}

    def walk(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                owners.setdefault(child.value, set()).add(owner)
            inner = child.name if isinstance(child, ast.FunctionDef) and _is_fragment(child) else owner
            walk(child, inner)

    walk(tree, "")
    return owners


def _tree(page: str) -> ast.Module:
    return ast.parse((ROOT / page).read_text(encoding="utf-8"))


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_sections_are_fragments_called_once(page):
    tree = _tree(page)
    frags = _fragments(tree)
    expected = {name for name in PAGES[page] if name}
    assert set(frags) == expected
    calls = [n.func.id for n in ast.walk(tree) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    for name, (fn, outer) in frags.items():
        assert calls.count(name) == 1, f"{name} is called {calls.count(name)} times"
        assert outer == NESTED.get((page, name), ""), f"{name} sits in {outer or 'the page'}"
        doc = ast.get_docstring(fn)
        assert doc and doc.startswith("Owns "), f"{name}: a docstring saying which widgets it owns"
        first = fn.body[1]  # after the docstring
        assert isinstance(first, ast.Expr) and ast.unparse(first.value) == "activate()", (
            f"{name} must set its run's language first: a fragment rerun does not pass through app.py"
        )
        called = {
            n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
            for n in ast.walk(fn)
            if isinstance(n, ast.Call)
        }
        assert not called & NO_FRAGMENT_CALLS, f"{name} calls {called & NO_FRAGMENT_CALLS}"
        assert "sidebar" not in ast.unparse(fn), f"{name} writes to the sidebar (a fragment cannot)"


@pytest.mark.parametrize("page", sorted(PAGES))
def test_each_key_sits_in_its_own_fragment(page):
    owners = _owner_of_strings(_tree(page))
    for fragment, keys in PAGES[page].items():
        for key in keys:
            where = owners.get(key, set()) - ({""} if (page, key) in ALSO_AT_PAGE_LEVEL else set())
            assert where == {fragment}, f"{key}: in {owners.get(key)}, expected {fragment or 'the page'}"


def another(options: list[Any], value: Any) -> Any:
    """A choice other than the current one."""
    return options[0] if value != options[0] else options[-1]


# (page, widget kind, key, a value or another(), a chart of the same fragment that must change)
MOVES: list[tuple[str, str, str, Any, str | None]] = [
    ("pages/rotary/rope.py", "selectbox", "rope_q_word", another, "rope_circles"),
    ("pages/rotary/rope.py", "slider", "rope_frame", 5, "rope_circles"),
    ("pages/rotary/rope.py", "slider", "rope_size", 8, "rope_identity"),
    ("pages/rotary/rope.py", "slider", "rope_decay_dist", 1024, "rope_decay"),
    ("pages/rotary/rope.py", "slider", "rope_matrix_m", 7, "rope_R_interleaved"),
    ("pages/rotary/rope.py", "toggle", "rope_causal", True, "rope_attention"),
    ("pages/rotary/rope_scaling.py", "toggle", "rs_causal", False, "rs_attention"),
    ("pages/rotary/alibi.py", "slider", "alibi_heads", 4, "slopes"),
    ("pages/rotary/alibi.py", "toggle", "alibi_causal", False, "bias_grid"),
    ("pages/rotary/alibi.py", "checkbox", "alibi_log_slopes", False, "slopes"),
    ("pages/rotary/alibi.py", "selectbox", "alibi_head", another, "att_pair"),
    ("pages/rotary/alibi.py", "slider", "alibi_train_len", 64, "penalty"),
    ("pages/rotary/alibi.py", "button", "nope_shuffle", None, "nope_shuffle_bars"),
    ("pages/rotary/alibi.py", "slider", "nope_count_n", 16, "count_weights"),
    ("pages/contextual/cope.py", "radio", "cope_unit", another, "gates"),
    ("pages/contextual/cope.py", "slider", "cope_npos", 4, "positions"),
    ("pages/contextual/cope.py", "slider", "cope_query", 1, "query_bars"),
    ("pages/contextual/cope.py", "slider", "cope_target", 2, "attention"),
    ("pages/contextual/cope.py", "selectbox", "cope_alice_word", another, "alice"),
    ("pages/contextual/cope.py", "slider", "cope_gap", 2, "seed_example"),
    ("pages/contextual/cope.py", "slider", "cope_head", 2, "model_gates"),
    ("pages/beyond/spline.py", "slider", "spline_degree", 2, "spline_basis"),
    ("pages/beyond/spline.py", "slider", "spline_point", 2, "spline_local"),
    ("pages/beyond/spline.py", "selectbox", "spline_letter", another, "spline_recon"),
    ("pages/beyond/spline.py", "slider", "spline_ctrl", 1, "spline_latent"),
    ("pages/beyond/spline.py", "slider", "spline_alpha", 0.25, "spline_blend"),
    ("pages/labs/attention_lab.py", "radio", "lab_show", another, "lab_panel_rope"),
    ("pages/labs/attention_lab.py", "text_input", "lab_prefix", "so", "lab_shift"),
    ("pages/labs/attention_lab.py", "slider", "lab_train_len", 16, "lab_len_distance"),
    ("pages/labs/minilm.py", "selectbox", "minilm_head", another, "minilm_big"),
    ("pages/labs/minilm.py", "radio", "minilm_src", another, "minilm_masses"),
    ("pages/labs/minilm.py", "radio", "minilm_mode", another, "minilm_change"),
    ("pages/labs/toy_tasks.py", "radio", "toy_dist_split", another, "toy_distance"),
    ("pages/labs/toy_tasks.py", "radio", "toy_probe", another, "toy_probe_distance"),
]


def _raw_options(at, widget) -> list[Any]:
    """A choice widget's options as values (AppTest lists them as their shown names)."""
    state = at.session_state._state._state  # SafeSessionState → SessionState
    meta = state._new_widget_state.widget_metadata[widget.id]
    return list(meta.deserializer.__self__.options)


def _charts(at) -> dict[str, str]:
    return {el.key: el.proto.bytes for el in chart_elements(at)}


@pytest.mark.parametrize("page", sorted({m[0] for m in MOVES}))
def test_moving_a_fragments_own_widget_keeps_the_page_whole(page):
    at = open_page(page)
    assert not errors(at)
    before = _charts(at)
    assert before
    for _, kind, key, value, changes in (m for m in MOVES if m[0] == page):
        widget = getattr(at, kind)(key=key)
        owner = next(f for f, keys in PAGES[page].items() if key in keys)
        assert owner, f"{key} is a fragment's own widget"
        if kind == "button":
            widget.click()
        else:
            widget.set_value(value(_raw_options(at, widget), widget.value) if callable(value) else value)
        at.run()
        assert not errors(at), (key, errors(at))
        after = _charts(at)
        assert set(after) == set(before), (
            f"{key}: charts gone {set(before) - set(after)}, new {set(after) - set(before)}"
        )
        if changes is not None:
            assert after[changes] != before[changes], f"moving {key} did not change {changes}"
        before = after
