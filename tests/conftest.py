"""Settings for the whole suite."""

import functools
import hashlib
import os
import pickle

import pytest
from streamlit import config as streamlit_config
from streamlit.components.v2 import manifest_scanner
from streamlit.runtime.scriptrunner.script_cache import ScriptCache
from streamlit.source_util import open_python_file
from streamlit.testing.v1 import local_script_runner

from explain.figures import spec as figure_spec

# Every figure a page sends can be checked against plotly's own validated build of the same figure
# (explain.figures.spec.AtlasFigure.to_dict with PE_ATLAS_CHECK_FIGURES=1): it proves that sending the
# builders' specs without building plotly's objects changes nothing. It runs where figures are what
# is tested, in the modules marked `check_figures` (the fixture below): every page with the default,
# empty, cut, Korean, emoji and markup sentences and at extreme seeds (test_pages_smoke.py), every
# control of every page at each option and extreme (test_controls.py), the largest payloads
# (test_payload.py), and the check's own tests. The other page runs (hostile text through every page,
# the sections' and questions' sweeps, …) send figures of the same builders with other words and
# numbers in them; the check cost a tenth of their time (hostile inputs and sections: 127 → 114 s).
# The browser tests' own server runs without it too (tests/e2e/conftest.py: app_url says why).
os.environ["PE_ATLAS_CHECK_FIGURES"] = "0"


@pytest.fixture(autouse=True, scope="module")
def _figure_check(request):
    """PE_ATLAS_CHECK_FIGURES=1 for a module marked `pytestmark = pytest.mark.check_figures`, module
    fixtures included (module scope, and autouse: set up before the module's other fixtures)."""
    if not any(m.name == "check_figures" for m in request.node.iter_markers()):
        yield
        return
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PE_ATLAS_CHECK_FIGURES", "1")
        yield


# The SmolLM2 chapter waits for its model instead of polling with a "warming up" note (AppTest runs a
# page to its end): the first run of that page in a test process loads the model (~8 s of CPU, once).
os.environ["PE_ATLAS_SMOLLM2_WAIT"] = "1"

# ... but each distinct figure once per test process. The check builds the figure with plotly's
# validation, which cost a third of every page run, and many page runs send figures already checked:
# the charts a moved control does not touch, a page reopened by the next test. A figure is the same
# when its spec (traces, layout, frames, validated or not) and what is sent are the same, byte for
# byte: plotly's build of the same spec is then the same, and so is the outcome. Anything else is
# checked. (tests/test_figure_check.py)
_check = figure_spec._check_against_plotly  # fails at import, loudly, if the check is renamed
CHECKED: set[bytes] = set()


def _fingerprint(fig, sent) -> bytes | None:
    spec = fig.__dict__.get("_atlas_spec")
    if spec is None:  # a figure built as plotly's: always checked
        return None
    data, layout, frames, validate = spec
    traces = [t if isinstance(t, dict) else t.to_plotly_json() for t in data]
    # Pickled, not JSON-encoded: the same bytes mean the same values of the same types (arrays with
    # their dtype and shape), so plotly's build is the same; pickle tells apart what JSON merges
    # (a tuple and a list, 1 and 1.0), which can only check more. JSON-encoding the spec and what is
    # sent cost twice the check itself (py-spy, RoPE's control sweep: 17% of all samples).
    try:
        blob = pickle.dumps((traces, layout, list(frames), bool(validate), sent), protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # something that does not pickle: checked every time
        return None
    return hashlib.sha256(blob).digest()


def check_once(fig, sent) -> None:
    key = _fingerprint(fig, sent)
    if key is not None and key in CHECKED:
        return
    _check(fig, sent)
    if key is not None:
        CHECKED.add(key)


figure_spec._check_against_plotly = check_once


# Every AppTest compiles its scripts afresh (its own ScriptCache: app.py and the page, each through
# Streamlit's "magic" AST rewrite), so every open_page paid for both: ~10% of a control sweep's
# samples. A server compiles each script once for all its sessions; the suite now does too, once
# per test process, keyed on the file's path and text (an edited file is compiled again).
_BYTECODE: dict[tuple[str, str, bool], object] = {}
_get_bytecode = ScriptCache.get_bytecode


def _shared_bytecode(self: ScriptCache, script_path: str):
    path = os.path.abspath(script_path)
    with open_python_file(path) as f:
        key = (path, f.read(), bool(streamlit_config.get_option("runner.magicEnabled")))
    code = _BYTECODE.get(key)
    if code is None:
        code = _BYTECODE[key] = _get_bytecode(ScriptCache(), path)  # not self's: it may hold an older text
    return code


ScriptCache.get_bytecode = _shared_bytecode  # type: ignore[method-assign]


# AppTest waits for a run by polling every millisecond whether the list of the run's events (one per
# element sent) holds its end yet: the test's thread then wakes a thousand times a second, takes the
# GIL from the script it waits for and rescans a growing list (40 reruns of RoPE: 3.46 s of CPU
# with the polling, 3.17 s without).
# Waiting for the script's thread to end is the same wait (the end is sent before the thread
# returns, and AppTest joins the thread right after), with the same timeout and the same error.
_require_widgets_deltas = local_script_runner.require_widgets_deltas


def _wait_for_the_run(runner: local_script_runner.LocalScriptRunner, timeout: float = 3) -> None:
    thread = runner._script_thread
    if thread is None:  # not started: AppTest's own wait
        _require_widgets_deltas(runner, timeout)
        return
    thread.join(timeout)
    if not runner.script_stopped():
        runner.request_stop()
        runner.join()
        raise RuntimeError(f"AppTest script run timed out after {timeout}(s)")


local_script_runner.require_widgets_deltas = _wait_for_the_run

# Each new AppTest scans every installed distribution's metadata for Streamlit components (2% of a
# sweep); what is installed does not change during a test process, so it is scanned once.
manifest_scanner.scan_component_manifests = functools.cache(manifest_scanner.scan_component_manifests)

# pytest-xdist's --dist loadgroup sends the tests of one xdist_group (tests/e2e/conftest.py marks every
# browser test "e2e") to one worker by adding "@e2e" to their ids on the worker. Under pytest 9 that
# no longer happens (xdist 3.8 writes Item._nodeid, which pytest 9 no longer reads: the id is
# Item._id), so every browser test went to either worker: two Streamlit servers and two Chromiums on
# 2 cores, each file's module fixtures built once per worker (the margins walk over every page took
# 110 s and 105 s in one run), and test_pages_browser's walk from chapter to chapter broken into
# page loads. The scheduler below groups them by path instead, as loadgroup meant to: every test
# under tests/e2e/ in one work unit; any other test on its own (or by its @group, should xdist's
# suffix work again).
# (Two units of whole files, a server and a Chromium on each worker, were measured on 2026-12-05: the
# suite took 963 s instead of 788 s, and the browser tests summed 995 s instead of 756 s. On 2 cores a
# server and a Chromium beside the other worker's page runs already fill the machine; two of them
# only wait for each other.)
E2E_DIR = "tests/e2e/"
# ... except the class-of-workers test: it starts its own servers (HAProxy and two workers) and shares
# only the browser, so it needs nothing the browser unit sets up; in a unit of its own, on the other
# worker, its ~23 s leave the browser unit, which sets the suite's wall time.
E2E_OWN_SERVERS = "tests/e2e/test_workers.py"
# And every test that names SmolLM2 (tests/test_smollm2.py, which asks for its xdist_group, and every
# chapter sweep's SmolLM2 item) in one work unit too: each test process that opens its chapter loads
# the model (~8 s of CPU, 1.2 GB), so on one worker it is loaded once, not once per worker. (xdist
# hands out the largest units first: the browser tests, then this one.)
SMOLLM2 = "smollm2"
# Files whose tests share a module fixture worth building once (a pool of worker processes): one unit.
WHOLE_FILES = ("tests/test_regenerate_parallel.py",)


@pytest.hookimpl(optionalhook=True)  # a hook of pytest-xdist's: ignored when it is not loaded
def pytest_xdist_make_scheduler(config, log):
    if config.getvalue("dist") != "loadgroup":
        return None
    from xdist.scheduler import LoadGroupScheduling

    class BrowserTestsOnOneWorker(LoadGroupScheduling):
        def _split_scope(self, nodeid: str) -> str:
            if nodeid.startswith(E2E_OWN_SERVERS):
                return "e2e-own-servers"
            if nodeid.startswith(E2E_DIR):
                return "e2e"
            if SMOLLM2 in nodeid:
                return SMOLLM2
            if nodeid.startswith(WHOLE_FILES):
                return nodeid.split("::", 1)[0]
            return super()._split_scope(nodeid)

    return BrowserTestsOnOneWorker(config, log)
