"""Section-level reruns (issue 18): which sections of eight chapters are st.fragment, and that each
owns what it claims — why-order, sinusoidal, trouble, Shaw, Transformer-XL, T5, DeBERTa and
Derivations.

A fragment reruns alone when a widget inside it changes, so it must (1) hold every widget it reacts
to, (2) hand nothing to the code after it, and (3) read from the page only values fixed for the run.
The source checks read each page with ast/symtable; the AppTest checks move each fragment's own
widgets (or open a chart's Numbers panel, a rerun-triggering widget too) and require every chart
outside the fragment to stay byte-identical, every chart to stay on the page, and no exception.
AppTest reruns the whole script, not the fragment: what it proves is that nothing outside a
fragment depends on the fragment's widgets.
"""

from __future__ import annotations

import ast
import builtins
import symtable
from dataclasses import dataclass

import pytest

from tests.helpers import ROOT, chart_elements, errors, open_page


@dataclass(frozen=True)
class Frag:
    charts: tuple[str, ...] = ()  # chart keys drawn inside (literal keys in the body)
    keys: tuple[str, ...] = ()  # literal widget keys created inside and nowhere else on the page


# page → fragment → what it owns. A fragment asking a question owns its radio and Reveal (keys made
# from the question's key at run time, so not listed).
FRAGMENTS: dict[str, dict[str, Frag]] = {
    "pages/absolute/why_order.py": {
        "maps_section": Frag(charts=("out_original", "out_back", "out_diff", "att_original", "att_shuffled")),
        "rnn_section": Frag(charts=("rnn_change",)),
    },
    "pages/absolute/sinusoidal.py": {
        "matrix_section": Frag(charts=("pe_matrix",)),
        "waves_section": Frag(charts=("waves",), keys=("chans",)),
        "wavelengths_section": Frag(charts=("wavelengths",)),
        "binary_section": Frag(charts=("binary", "binary_pe")),
        "dot_section": Frag(charts=("similarity", "dot_vs_distance")),
        "shift_section": Frag(charts=("shift_vectors", "T"), keys=("p", "delta")),
        "layouts_section": Frag(charts=("interleaved", "concatenated", "t2t_frequencies")),
        "sentence_section": Frag(charts=("sentence_pe", "att_nope", "att_sin")),
        # n, d and the base are read from the PE matrix to the layouts: one fragment around them.
        "settings_part": Frag(keys=("n", "base")),
    },
    "pages/absolute/trouble.py": {
        "shift_views_section": Frag(
            charts=("shift_pe", "shift_before", "shift_after", "shift_diff", "shift_before_after")
        ),
        "length_section": Frag(
            charts=("length_sin", "length_learned", "length_angles", "length_gap", "length_nearest"),
            keys=("trouble_l_train", "trouble_l_test"),
        ),
        # and the three Toeplitz maps, keyed by the chapter (T.map_charts)
        "terms_section": Frag(charts=("four_terms", "tupe_terms", "toeplitz_spread")),
    },
    "pages/relative/shaw.py": {
        "index_map_section": Frag(charts=("shaw_index",)),
        "tables_section": Frag(charts=("shaw_ak", "shaw_av")),
        "logits_section": Frag(charts=("shaw_terms",)),
        "attention_section": Frag(charts=("shaw_attention",)),
        "value_section": Frag(charts=("shaw_mass", "shaw_value_norms", "shaw_value_term")),
    },
    "pages/relative/transformer_xl.py": {
        # the terms and the distance curve: the curve marks the causal side, so both are one fragment
        "terms_section": Frag(charts=("xl_terms", "xl_sum", "xl_weights", "xl_d_curve"), keys=("xl_head", "xl_causal")),
        "relshift_section": Frag(charts=("xl_step_grid", "xl_gather"), keys=("xl_qlen", "xl_mlen", "xl_step")),
    },
    "pages/relative/t5.py": {
        "staircase_section": Frag(charts=("t5_staircase_near", "t5_staircase")),
        "matrix_section": Frag(charts=("t5_bucket_matrix",)),
        "table_section": Frag(charts=("t5_table", "t5_bias_lines")),
        "heads_section": Frag(charts=("t5_bias_heads",)),
        "logits_section": Frag(charts=("t5_terms", "t5_attention"), keys=("t5_head",)),
    },
    "pages/relative/deberta.py": {
        "bucket_map_section": Frag(charts=("deb_bucket_map",)),
        "sentence_section": Frag(charts=("deb_buckets",)),
        "terms_section": Frag(charts=("deb_terms", "deb_sum", "deb_weights"), keys=("deb_head",)),
    },
    "pages/beyond/derivations.py": {
        # the picker, "show all" and the derivations they draw (no chart: the page has none)
        "identities_part": Frag(keys=("derivations_all", "derivation")),
    },
}

# A question asked outside every section goes through ui.question.ask_alone, a fragment of its own
# shared by these pages (it owns only the question's radio and Reveal, no chart).
ALONE = "ask_alone"
ASKED_ALONE = {
    "pages/absolute/why_order.py",
    "pages/absolute/trouble.py",
    "pages/beyond/derivations.py",
    "pages/labs/toy_tasks.py",
}

# Moves per page, applied in order on one session: (fragment, widget kind, key, value). "numbers"
# opens that chart's Numbers panel; "question" picks the first option and reveals the answer.
MOVES: dict[str, list[tuple[str, str, str, object]]] = {
    "pages/absolute/why_order.py": [
        (ALONE, "question", "", None),
        ("maps_section", "numbers", "out_diff", True),
        ("rnn_section", "numbers", "rnn_change", True),
    ],
    "pages/absolute/sinusoidal.py": [
        ("waves_section", "multiselect", "chans", [0, 1, 63]),
        ("wavelengths_section", "question", "", None),
        ("shift_section", "number_input", "p", 7),
        ("shift_section", "number_input", "delta", -2),
        ("matrix_section", "numbers", "pe_matrix", True),
        ("binary_section", "numbers", "binary", True),
        ("dot_section", "numbers", "similarity", True),
        ("layouts_section", "numbers", "t2t_frequencies", True),
        ("sentence_section", "numbers", "att_sin", True),
    ],
    "pages/absolute/trouble.py": [
        (ALONE, "question", "", None),
        ("length_section", "slider", "trouble_l_train", 16),
        ("length_section", "slider", "trouble_l_test", 64),
        ("shift_views_section", "numbers", "shift_pe", True),
        ("terms_section", "numbers", "four_terms", True),
    ],
    "pages/relative/shaw.py": [
        ("index_map_section", "question", "", None),
        ("tables_section", "numbers", "shaw_ak", True),
        ("logits_section", "numbers", "shaw_terms", True),
        ("attention_section", "numbers", "shaw_attention", True),
        ("value_section", "numbers", "shaw_mass", True),
    ],
    "pages/relative/transformer_xl.py": [
        ("terms_section", "toggle", "xl_causal", False),
        ("terms_section", "selectbox", "xl_head", 2),
        ("terms_section", "toggle", "xl_on_d", False),
        ("terms_section", "question", "", None),
        ("relshift_section", "slider", "xl_qlen", 5),
        ("relshift_section", "slider", "xl_mlen", 2),
        ("relshift_section", "select_slider", "xl_step", "result"),
    ],
    "pages/relative/t5.py": [
        ("staircase_section", "question", "", None),
        ("logits_section", "selectbox", "t5_head", 3),
        ("matrix_section", "numbers", "t5_bucket_matrix", True),
        ("table_section", "numbers", "t5_bias_lines", True),
        ("heads_section", "numbers", "t5_bias_heads", True),
    ],
    "pages/relative/deberta.py": [
        ("bucket_map_section", "question", "", None),
        ("terms_section", "selectbox", "deb_head", 3),
        ("terms_section", "toggle", "deb_on_c2p", False),
        ("sentence_section", "numbers", "deb_buckets", True),
        ("terms_section", "numbers", "deb_weights", True),
    ],
}


def tree(page: str) -> ast.Module:
    return ast.parse((ROOT / page).read_text(encoding="utf-8"))


def fragments(module: ast.Module) -> dict[str, ast.FunctionDef]:
    """Top-level functions decorated with @st.fragment."""
    return {
        node.name: node
        for node in module.body
        if isinstance(node, ast.FunctionDef)
        and any(ast.unparse(d) in ("st.fragment", "st.fragment()") for d in node.decorator_list)
    }


def module_bindings(module: ast.Module) -> dict[str, int]:
    """How many times each name is bound at module level (outside every function and class)."""
    counts: dict[str, int] = {}

    def bind(name: str) -> None:
        counts[name] = counts.get(name, 0) + 1

    def visit(node: ast.AST) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bind(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                bind((alias.asname or alias.name).split(".")[0])
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bind(node.id)
        if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            return  # their names are their own
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in module.body:
        visit(stmt)
    return counts


@pytest.mark.parametrize("page", FRAGMENTS)
def test_the_fragments_are_these_called_once_each(page):
    module = tree(page)
    found = fragments(module)
    assert set(found) == set(FRAGMENTS[page]), page
    calls = [
        node.func.id
        for node in ast.walk(module)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in found
    ]
    for name, fn in found.items():
        assert calls.count(name) == 1, f"{page}: {name} is called {calls.count(name)} times"
        inside = {id(n) for n in ast.walk(fn)}
        call = next(n for n in ast.walk(module) if isinstance(n, ast.Call) and ast.unparse(n.func) == name)
        assert id(call) not in inside
        assert call.lineno > fn.end_lineno, f"{page}: {name} is called before it is defined"
        # Every fragment says what it owns, then sets the run's language: a fragment rerun does not
        # pass through app.py, and the language lives in a ContextVar of the script thread.
        doc = ast.get_docstring(fn)
        assert doc and doc.strip(), f"{page}: {name} has no docstring"
        first = fn.body[1]
        assert ast.unparse(first) == "activate()", f"{page}: {name} does not call activate() first"
        assert fn.returns is not None and ast.unparse(fn.returns) == "None"


@pytest.mark.parametrize("page", FRAGMENTS)
def test_fragments_read_only_values_bound_once(page):
    """A name a fragment reads from the page must be bound once at module level: a fragment rerun
    sees the page's globals as the last full run left them, so a name rebound after the fragment's
    call (a later section's `fig`, `toks`) would hand the fragment another section's value."""
    source = (ROOT / page).read_text(encoding="utf-8")
    module = ast.parse(source)
    bound = module_bindings(module)
    table = symtable.symtable(source, page, "exec")
    functions = {child.get_name(): child for child in table.get_children()}
    for name in fragments(module):
        fn = functions[name]
        assert isinstance(fn, symtable.Function)
        for g in fn.get_globals():
            if g in bound:
                assert bound[g] == 1, f"{page}: {name} reads {g!r}, bound {bound[g]} times on the page"
            else:
                assert hasattr(builtins, g), f"{page}: {name} reads {g!r}, which the page never binds"
        assert not fn.get_nonlocals()


@pytest.mark.parametrize("page", FRAGMENTS)
def test_fragments_own_their_widgets_and_charts(page):
    """Each listed widget key and chart key is written inside its fragment and nowhere else on the page
    (no code outside reads the value of a fragment's widget, so it can change alone)."""
    module = tree(page)
    found = fragments(module)
    strings_in: dict[str, list[str]] = {
        name: [n.value for n in ast.walk(fn) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
        for name, fn in found.items()
    }
    outside_ids = {id(n) for fn in found.values() for n in ast.walk(fn)}
    outside = [
        n.value
        for n in ast.walk(module)
        if id(n) not in outside_ids and isinstance(n, ast.Constant) and isinstance(n.value, str)
    ]
    for name, frag in FRAGMENTS[page].items():
        for key in frag.charts + frag.keys:
            assert key in strings_in[name], f"{page}: {key!r} is not in {name}"
            assert key not in outside, f"{page}: {key!r} is used outside {name}"
            for other, strings in strings_in.items():
                assert other == name or key not in strings


def charts(at) -> dict[str, str]:
    return {el.key: el.proto.bytes for el in chart_elements(at)}


def move(at, kind: str, key: str, value: object) -> None:
    if kind == "numbers":
        at.session_state[f"{key}__numbers"] = value  # open the expander, as a click would
    elif kind == "question":
        radio = next(r for r in at.radio if str(r.key).endswith("__choice") and r.value is None)
        radio.set_value(radio.options[0]).run()
        assert not errors(at)
        next(b for b in at.button if str(b.key).endswith("__reveal")).click()
    else:
        getattr(at, kind)(key=key).set_value(value)
    at.run()


@pytest.mark.parametrize("page", MOVES)
def test_a_fragments_widgets_change_nothing_outside_it(page):
    at = open_page(page)
    assert not errors(at)
    frags = FRAGMENTS[page]
    for name, kind, key, value in MOVES[page]:
        before = charts(at)
        move(at, kind, key, value)
        assert not errors(at), (page, name, key, errors(at))
        after = charts(at)
        assert set(after) == set(before), (page, name, key)
        mine = set(frags[name].charts) if name != ALONE else set()
        for chart_key in set(before) - mine:
            assert after[chart_key] == before[chart_key], f"{page}: moving {key or kind} in {name} changed {chart_key}"
        if kind == "numbers":
            assert any(str(b.key) == f"{key}__csv" for b in at.get("download_button")), (page, key)
        elif kind == "question":
            assert any(str(b.key).endswith("__again") for b in at.button), (page, name)
        else:  # a real control: something inside moved
            assert any(after[c] != before[c] for c in mine), f"{page}: {key} = {value!r} changed no chart of {name}"


@pytest.mark.parametrize("page", sorted(ASKED_ALONE))
def test_a_question_outside_the_sections_is_asked_alone(page):
    """Its answer and Reveal rerun only the question's box: the page asks it through ask_alone,
    never with a bare ask() that would rerun the whole page."""
    calls = [ast.unparse(n.func) for n in ast.walk(tree(page)) if isinstance(n, ast.Call)]
    assert calls.count("ask_alone") == 1, page
    assert "ask" not in calls, page


def test_ask_alone_is_a_fragment_that_sets_its_language_first():
    module = ast.parse((ROOT / "ui" / "question.py").read_text(encoding="utf-8"))
    fn = next(n for n in module.body if isinstance(n, ast.FunctionDef) and n.name == ALONE)
    assert [ast.unparse(d) for d in fn.decorator_list] == ["st.fragment"]
    assert ast.unparse(fn.body[1]) == "activate()"  # after the docstring
