"""Sections, checked against their declarations (ui/section.py): no table here restates a page.

A section is an st.fragment made by `@page.section(owns=(…), heading=…, prose=…)`. A fragment reruns
alone when a widget inside it changes, so it must (1) hold every widget it reacts to, (2) hand
nothing to the code after it, and (3) read from the page only values fixed for the run. The source
checks read each page with ast/symtable: the declaration's `owns` is exactly what the body keys
(every literal widget or chart key in the body is declared, every declared key is in the body and
nowhere else on the page). The AppTest checks move every declared widget of every section (and open
a chart's Numbers panel, answer a question) and require every chart outside the section to stay
byte-identical and every chart to stay on the page. AppTest reruns the whole script, not the
fragment: what it proves is that nothing outside a section depends on the section's widgets.
"""

from __future__ import annotations

import ast
import builtins
import fnmatch
import symtable
from dataclasses import dataclass
from typing import Any

import pytest

from tests.helpers import ROOT, chart_elements, errors, open_page
from ui.chapters import CHAPTERS

PAGES = [c.page for c in CHAPTERS]
# Keys a page also names outside their section, not as widgets: CoPE drops a remembered query/key
# past a new, shorter sentence's end before any section runs.
ALSO_AT_PAGE_LEVEL = {("pages/contextual/cope.py", "cope_query"), ("pages/contextual/cope.py", "cope_key")}
# A section must not stop or rerun the page; a polling section (run_every: the toy lab's live
# training panel) reruns it once, when the job it watches has finished and its results are saved.
NO_SECTION_CALLS = {"sentence_tokens", "st.rerun", "st.stop"}
# Calls whose argument at this position (or keyword) is a widget's or a chart's key.
KEY_ARGS = {"plot": 1, "proof": 2, "head_grid": 3, "Param": 0, "integer": 0, "choice": 0, "flag": 0, "number": 0}
KEY_KEYWORDS = {"key", "key_prefix"}


@dataclass
class Section:
    name: str
    fn: ast.FunctionDef
    outer: str  # the section it is nested in ("" at the page's top level)
    owns: tuple[str, ...]
    calls_ask: bool
    polls: bool


def _is_declaration(dec: ast.expr) -> bool:
    return isinstance(dec, ast.Call) and ast.unparse(dec.func) in ("page.section", "section")


def sections(tree: ast.Module) -> dict[str, Section]:
    out: dict[str, Section] = {}

    def walk(node: ast.AST, outer: str) -> None:
        for child in ast.iter_child_nodes(node):
            decs = [d for d in getattr(child, "decorator_list", []) if _is_declaration(d)]
            if isinstance(child, ast.FunctionDef) and decs:
                kw = {k.arg: k.value for k in decs[0].keywords}
                owns = ast.literal_eval(kw["owns"]) if "owns" in kw else ()
                asks = any(
                    isinstance(n, ast.Call) and ast.unparse(n.func) in ("ask", "ask_first", "ask_alone")
                    for n in ast.walk(child)
                )
                out[child.name] = Section(child.name, child, outer, tuple(owns), asks, "run_every" in kw)
                walk(child, child.name)
            else:
                walk(child, outer)

    walk(tree, "")
    return out


def tree(page: str) -> ast.Module:
    return ast.parse((ROOT / page).read_text(encoding="utf-8"))


def subtree(secs: dict[str, Section], name: str) -> set[str]:
    """A section, the sections nested in it and those it calls (they rerun with it)."""
    found, todo = set(), [name]
    while todo:
        s = todo.pop()
        if s in found:
            continue
        found.add(s)
        body = secs[s].fn
        todo += [o for o, sec in secs.items() if sec.outer == s]
        todo += [n.func.id for n in ast.walk(body) if isinstance(n, ast.Call) and getattr(n.func, "id", None) in secs]
    return found


def owner_of_strings(tree: ast.Module, secs: dict[str, Section]) -> dict[str, set[str]]:
    """Each string constant → the innermost sections holding it ("" when outside all)."""
    owners: dict[str, set[str]] = {}
    fns = {id(s.fn): s.name for s in secs.values()}

    def walk(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Constant) and isinstance(child.value, str):
                owners.setdefault(child.value, set()).add(owner)
            if isinstance(child, ast.expr) and child in getattr(node, "decorator_list", []):
                continue  # the declaration itself names the keys
            walk(child, fns.get(id(child), owner))

    walk(tree, "")
    return owners


def literal_keys(fn: ast.FunctionDef, secs: dict[str, Section]) -> set[str]:
    """Widget and chart keys written as literals in `fn`'s own body (not in nested sections)."""
    nested = {id(n) for s in secs.values() if s.fn is not fn for n in ast.walk(s.fn)}
    keys = set()
    for n in ast.walk(fn):
        if id(n) in nested or not isinstance(n, ast.Call):
            continue
        for k in n.keywords:
            if k.arg in KEY_KEYWORDS and isinstance(k.value, ast.Constant) and isinstance(k.value.value, str):
                keys.add(k.value.value)
        name = ast.unparse(n.func).split(".")[-1]
        at = KEY_ARGS.get(name)
        if at is not None and len(n.args) > at and isinstance(n.args[at], ast.Constant):
            keys.add(n.args[at].value)
    return keys


# -- the source ------------------------------------------------------------------------------------


def test_no_fragment_is_made_by_hand():
    """Every fragment is a declared section: no page or ui module writes st.fragment or sets the
    language by hand (ui/section.py is the one place that does both)."""
    files = sorted([*ROOT.glob("pages/**/*.py"), *ROOT.glob("ui/*.py")])
    assert len(files) > 20
    for path in files:
        if path.name == "section.py":
            continue
        text = path.read_text(encoding="utf-8")
        assert "st.fragment" not in text, path
        assert "activate()" not in text or path.name == "i18n.py", path


def test_the_sweep_sees_sections():
    """Not blind: the pages declare sections, and a planted undeclared key is caught."""
    found = sum(len(sections(tree(p))) for p in PAGES)
    assert found >= 60, found
    planted = ast.parse(
        "@page.section(owns=('a',))\ndef f() -> None:\n    '''Owns a.'''\n    st.slider('x', key='a')\n"
        "    plot(fig, 'b')\n"
    )
    secs = sections(planted)
    assert literal_keys(secs["f"].fn, secs) == {"a", "b"}


@pytest.mark.parametrize("page", PAGES)
def test_sections_are_called_once_after_their_definition(page):
    module = tree(page)
    secs = sections(module)
    calls = [n for n in ast.walk(module) if isinstance(n, ast.Call) and getattr(n.func, "id", None) in secs]
    for name, sec in secs.items():
        mine = [c for c in calls if c.func.id == name]  # type: ignore[attr-defined]
        assert len(mine) == 1, f"{page}: {name} is called {len(mine)} times"
        assert mine[0].lineno > sec.fn.end_lineno, f"{page}: {name} is called before it is defined"
        doc = ast.get_docstring(sec.fn)
        assert doc and doc.strip(), f"{page}: {name} has no docstring saying what it owns"
        assert sec.fn.returns is not None and ast.unparse(sec.fn.returns) == "None"
        called = {ast.unparse(n.func) for n in ast.walk(sec.fn) if isinstance(n, ast.Call)}
        forbidden = NO_SECTION_CALLS - ({"st.rerun"} if sec.polls else set())
        assert not called & forbidden, f"{page}: {name} calls {called & forbidden}"
        assert "sidebar" not in ast.unparse(sec.fn), f"{page}: {name} writes to the sidebar (a fragment cannot)"


@pytest.mark.parametrize("page", PAGES)
def test_sections_read_only_values_bound_once(page):
    """A name a section reads from the page must be bound once at module level: a fragment rerun
    sees the page's globals as the last full run left them, so a name rebound after the section's
    call (a later section's `fig`, `toks`) would hand the section another section's value."""
    source = (ROOT / page).read_text(encoding="utf-8")
    module = ast.parse(source)
    bound: dict[str, int] = {}

    def bind(name: str) -> None:
        bound[name] = bound.get(name, 0) + 1

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
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    for stmt in module.body:
        visit(stmt)
    table = symtable.symtable(source, page, "exec")
    top = {child.get_name(): child for child in table.get_children()}
    for name, sec in sections(module).items():
        if sec.outer or name not in top:
            continue  # a nested section reads its outer section's locals, fixed for that run
        fn = top[name]
        assert isinstance(fn, symtable.Function)
        for g in fn.get_globals():
            if g in bound:
                assert bound[g] == 1, f"{page}: {name} reads {g!r}, bound {bound[g]} times on the page"
            else:
                assert hasattr(builtins, g), f"{page}: {name} reads {g!r}, which the page never binds"


@pytest.mark.parametrize("page", PAGES)
def test_each_section_owns_what_it_declares(page):
    """Every declared key is written in its section (innermost) and nowhere else on the page; every
    widget or chart key written as a literal in a section's body is declared by that section."""
    module = tree(page)
    secs = sections(module)
    owners = owner_of_strings(module, secs)
    problems = []
    for name, sec in secs.items():
        for key in (k for k in sec.owns if "*" not in k and "[" not in k):  # a pattern: keys made at run time
            where = owners.get(key, set()) - ({""} if (page, key) in ALSO_AT_PAGE_LEVEL else set())
            if where != {name}:
                problems.append(f"{key!r} declared by {name}, written in {sorted(owners.get(key, ()))}")
        undeclared = literal_keys(sec.fn, secs) - set(sec.owns)
        if undeclared:
            problems.append(f"{name} keys {sorted(undeclared)} without declaring them")
    assert not problems, f"{page}: " + "; ".join(problems)


# -- the behaviour ---------------------------------------------------------------------------------

KINDS = (
    "slider",
    "select_slider",
    "selectbox",
    "radio",
    "multiselect",
    "toggle",
    "checkbox",
    "number_input",
    "text_input",
    "button",
)


def widget(at, key: str):
    for kind in KINDS:
        for w in getattr(at, kind):
            if w.key == key:
                return kind, w
    return None, None


def raw_options(at, w) -> list[Any]:
    """A choice widget's options as values (AppTest lists them as their shown names)."""
    state = at.session_state._state._state  # SafeSessionState → SessionState
    meta = state._new_widget_state.widget_metadata[w.id]
    return list(meta.deserializer.__self__.options)


def another(at, kind: str, w) -> Any:
    """A value other than the widget's current one, next to it where it has a range."""
    v = w.value
    if kind in ("toggle", "checkbox"):
        return not v
    if kind in ("slider", "number_input"):
        lo, hi, step = w.min, w.max, w.step or 1
        if isinstance(v, (tuple, list)):
            return v
        up = v + step
        return up if hi is None or up <= hi else v - step if lo is None or v - step >= lo else v
    if kind == "text_input":
        return "so" if v != "so" else "ok"
    options = raw_options(at, w)
    if kind == "multiselect":
        return list(v)[:-1] if len(v) > 1 else [o for o in options if o not in v][:1] + list(v)
    if kind == "select_slider":
        i = options.index(v)
        return options[i + 1] if i + 1 < len(options) else options[i - 1]
    return options[0] if v != options[0] else options[-1]


def charts(at) -> dict[str, bytes]:
    return {el.key: el.proto.bytes for el in chart_elements(at)}


def words(at) -> list[str]:
    return [m.value for m in at.markdown] + [str(m.value) for m in at.metric] + [str(d.value) for d in at.dataframe]


def far(at, kind: str, w) -> Any:
    """The far end of a range widget's range from its current value (None for other widgets): a
    saturated control (CoPE's sharpness at its top) can move a step and change nothing drawn."""
    if kind not in ("slider", "number_input") or isinstance(w.value, (tuple, list)) or w.min is None:
        return None
    return w.min if w.value != w.min else w.max


def owned(key: str, patterns: set[str]) -> bool:
    """A chart key is owned when it is declared, or matches a declared pattern ("lab_panel_*": keys
    made at run time, one per chosen encoding)."""
    return any(fnmatch.fnmatchcase(key, p) for p in patterns)


def drew(at, mine: set[str], before: dict[str, bytes], after: dict[str, bytes], before_words: list[str]) -> bool:
    """Something the section draws changed: one of its charts, or the page's words and numbers."""
    inside = {c for c in set(before) | set(after) if owned(c, mine)}
    return any(before.get(c) != after.get(c) for c in inside) or words(at) != before_words


@pytest.mark.parametrize("page", PAGES)
def test_moving_a_sections_widgets_changes_nothing_outside_it(page):
    module = tree(page)
    secs = sections(module)
    at = open_page(page)
    assert not errors(at)
    before = charts(at)
    moved = 0

    def check(name: str, key: str, mine: set[str], before: dict[str, bytes]) -> dict[str, bytes]:
        assert not errors(at), (page, name, key, errors(at))
        after = charts(at)
        outside = {c for c in before if not owned(c, mine)}
        assert outside == {c for c in after if not owned(c, mine)}, f"{page}: {key}: charts outside {name} came or went"
        for chart_key in outside:
            assert after[chart_key] == before[chart_key], f"{page}: moving {key} in {name} changed {chart_key}"
        return after

    for name, sec in secs.items():
        mine = {k for s in subtree(secs, name) for k in secs[s].owns}
        present = {w.key for kind in KINDS for w in getattr(at, kind) if w.key}
        for key in [k for p in sec.owns for k in (sorted(fnmatch.filter(present, p)) if "*" in p or "[" in p else [p])]:
            kind, w = widget(at, key)
            if w is None or getattr(w, "disabled", False):
                continue  # a chart, a proof, a table, or a widget this sentence does not draw
            before_words, was = words(at), w.value
            if kind == "button":
                w.click()
            else:
                new = another(at, kind, w)
                if new == w.value:
                    continue
                w.set_value(new)
            at.run()
            moved += 1
            after = check(name, key, mine, before)

            value = None if drew(at, mine, before, after, before_words) else far(at, kind, widget(at, key)[1])
            if value is not None:
                widget(at, key)[1].set_value(value)
                at.run()
                after = check(name, key, mine, before)
            assert drew(at, mine, before, after, before_words), f"{page}: {key} ({kind}) changed nothing in {name}"
            before = after
            if kind not in ("slider", "number_input", "button", "text_input"):
                # A switch back to where it was: a mode (CoPE's "every gate open", the lab's shown
                # term) would leave the section's other controls inert for the moves after it.
                widget(at, key)[1].set_value(was)
                at.run()
                before = check(name, key, mine, before)
        # Its first chart's Numbers panel: opening it reruns nothing else.
        first = next((k for k in sec.owns if k in before), None)
        if first is not None:
            at.session_state[f"{first}__numbers"] = True
            at.run()
            moved += 1
            before = check(name, f"{first}__numbers", mine, before)
            assert any(str(b.key) == f"{first}__csv" for b in at.get("download_button")), (page, first)
    # The page's question: answering it changes no chart outside the section that asks it.
    radio = next((r for r in at.radio if str(r.key).endswith("__choice") and r.value is None), None)
    if radio is not None:
        asking = {k for name, s in secs.items() if s.calls_ask for f in subtree(secs, name) for k in secs[f].owns}
        radio.set_value(radio.options[0]).run()
        next(b for b in at.button if str(b.key).endswith("__reveal")).click().run()
        check("the question's section", "the question", asking, before)
        assert any(str(b.key).endswith("__again") for b in at.button)
    assert moved or not any(s.owns for s in secs.values()), page
