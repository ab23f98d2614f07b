"""Every derivation proves itself, and a broken one is caught at the step that broke.

explain/derivations/ is pure sympy; these tests need neither streamlit nor torch.
"""

from __future__ import annotations

import ast
import dataclasses
import math
import random
from pathlib import Path

import numpy as np
import pytest
import sympy as sp
from sympy.matrices.expressions import MatAdd, MatMul

from explain import derivations as D
from explain.derivations import DirectSum, MatExp, Named, Rot, Step

IDS = [d.id for d in D.ALL_DERIVATIONS]


def _with_step(derivation, index, new_step):
    steps = list(derivation.steps)
    steps[index] = new_step
    return dataclasses.replace(derivation, steps=tuple(steps))


def _random_values(derivation, seed):
    """Seeded random numbers for every parameter: ints for positions/shifts, floats otherwise."""
    rng = random.Random(seed)
    values = {}
    for p in derivation.parameters:
        if isinstance(p.default, int):
            values[p.name] = rng.randint(0, 12)
        else:
            values[p.name] = round(rng.uniform(-1.5, 1.5), 3)
    return values


def _close(a, b):
    return np.allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-9, atol=1e-9)


# --- the registry ----------------------------------------------------------------------------


def test_registry_has_every_identity_the_chapters_need():
    expected = {
        "sinusoidal-dot-product",
        "sinusoidal-shift",
        "rope-complex-2d",
        "rope-matrix-2d",
        "rope-relative-d4",
        "rope-relative-d6",
        "rope-relative-block",
        "absolute-pe-attention",
        "deberta-three-terms",
        "alibi-shift-invariance",
        "t5-shift-invariance",
        "cope-all-gates-open",
        "rope-from-the-goal",
        "rope-skew-generator",
        "rope-skew-exponential-2d",
        "rope-block-exponential",
        "rope-absorb-basis",
    }
    assert expected <= set(IDS)
    assert len(IDS) == len(set(IDS))
    for d in D.ALL_DERIVATIONS:
        assert D.get(d.id) is d
        assert d.title and d.intro and d.claim and d.source
        assert d.steps[0].kind == "start"
    with pytest.raises(KeyError, match="unknown derivation"):
        D.get("no-such-identity")


def test_engine_imports_neither_streamlit_nor_torch_nor_ui():
    files = sorted(Path(D.__file__).parent.glob("*.py"))
    assert {"__init__.py", "prover.py", "registry.py", "view.py"} <= {f.name for f in files}
    imported_anywhere = set()
    for path in files:
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.module:
                imported.add(node.module.split(".")[0])
        # explain/ sits below ui/: the page's pure core (view.py) must not reach back up.
        assert not imported & {"streamlit", "torch", "plotly", "ui", "pages"}, (path.name, imported)
        imported_anywhere |= imported
    assert "sympy" in imported_anywhere


# --- every derivation verifies ---------------------------------------------------------------


@pytest.mark.parametrize("derivation_id", IDS)
def test_every_derivation_verifies(derivation_id):
    d = D.get(derivation_id)
    report = D.verify(d)
    assert report.ok, report.first_failure
    assert report.failed_index is None and report.failed_rule is None
    assert [c.index for c in report.checks] == list(range(1, len(d.steps)))
    assert all(c.method for c in report.all_checks)
    # Substitution steps are checked by applying the substitution, never skipped.
    for c, s in zip(report.checks, d.steps[1:], strict=False):
        assert c.rule == s.rule
        assert c.method.startswith("substitution") == (s.kind == "substitution")
    if d.claim_expr is not None:
        assert report.claim_check is not None and report.claim_check.ok


def test_verify_is_deterministic():
    # How long proving takes is a benchmark's question (tools/bench.py), not a test's.
    first = [D.verify(d) for d in D.ALL_DERIVATIONS]
    second = [D.verify(d) for d in D.ALL_DERIVATIONS]
    assert first == second


def test_the_pair_step_is_proven_for_a_symbolic_pair_index():
    report = D.verify(D.get("sinusoidal-dot-product"))
    # "per-term" means the summands were compared with f symbolic: the general-d statement.
    assert report.checks[1].method == "per-term"


# --- broken steps are caught at the step that broke ------------------------------------------


def test_sign_flip_in_rope_matrix_form_fails_at_that_step():
    d = D.get("rope-matrix-2d")
    q, k = d.steps[3].expr.args[0], d.steps[3].expr.args[-1]
    m, n, theta = sp.symbols("m n theta", real=True)
    wrong = Step(MatMul(q, Rot((m - n) * theta), k), d.steps[3].rule)  # should be n − m
    report = D.verify(_with_step(d, 3, wrong))
    assert not report.ok
    assert report.failed_index == 3
    assert report.failed_rule == d.steps[3].rule
    assert all(c.ok for c in report.checks[:2])


def test_sign_flip_in_the_last_rope_line_fails_there():
    d = D.get("rope-matrix-2d")
    last = len(d.steps) - 1
    m, n, theta, q1, q2, k1, k2 = sp.symbols("m n theta q1 q2 k1 k2", real=True)
    wrong = (q1 * k1 + q2 * k2) * sp.cos((n - m) * theta) - (q2 * k1 - q1 * k2) * sp.sin((n - m) * theta)
    report = D.verify(_with_step(d, last, Step(wrong, "multiply out")))
    assert report.failed_index == last
    assert report.checks[last - 1].message


def test_dropped_and_flipped_terms_in_the_sinusoidal_dot_product_are_caught():
    d = D.get("sinusoidal-dot-product")
    m, n = sp.symbols("m n", real=True)
    f = sp.Symbol("f", integer=True, nonnegative=True)
    w = sp.IndexedBase("omega", real=True)
    dropped = Step(sp.Sum(sp.sin(m * w[f]) * sp.sin(n * w[f]), (f, 0, 2)), d.steps[1].rule)
    report = D.verify(_with_step(d, 1, dropped))
    assert report.failed_index == 1

    flipped = Step(sp.Sum(sp.cos((m + n) * w[f]), (f, 0, 2)), d.steps[2].rule)
    report = D.verify(_with_step(d, 2, flipped))
    assert report.failed_index == 2
    assert all(c.ok for c in report.checks[:1])


def test_a_wrong_block_in_the_d6_rope_matrix_is_caught():
    d = D.get("rope-relative-d6")
    m, n, t1, t2, t3 = sp.symbols("m n theta_1 theta_2 theta_3", real=True)
    blocks = [MatMul(Rot(-m * t1), Rot(n * t1)), MatMul(Rot(m * t2), Rot(n * t2)), MatMul(Rot(-m * t3), Rot(n * t3))]
    wrong = Step(sp.BlockDiagMatrix(*blocks), d.steps[3].rule)  # middle block forgot the transpose
    report = D.verify(_with_step(d, 3, wrong))
    assert report.failed_index == 3
    assert "entry" in report.first_failure.message


def test_a_broken_substitution_is_caught():
    d = D.get("absolute-pe-attention")
    last = len(d.steps) - 1
    a, b, c_term, d_term = d.steps[last].expr.args
    u = c_term.args[0].arg
    v = d_term.args[0].arg
    # u and v swapped: the content-key term gets v, the position-key term gets u.
    swapped = MatAdd(a, b, MatMul(sp.Transpose(v), *c_term.args[1:]), MatMul(sp.Transpose(u), *d_term.args[1:]))
    broken = dataclasses.replace(d.steps[last], expr=swapped)
    report = D.verify(_with_step(d, last, broken))
    assert report.failed_index == last
    assert "substitution applied" in report.first_failure.message


def test_a_substitution_whose_pattern_is_absent_is_caught():
    d = D.get("absolute-pe-attention")
    index = 3  # p_n → R_(m−n)
    stray = Named(r"\mathbf{z}", [sp.Symbol("z1"), sp.Symbol("z2")])
    old, new = d.steps[index].substitution[0]
    broken = dataclasses.replace(d.steps[index], substitution=((MatMul(old.args[0], stray), new),))
    report = D.verify(_with_step(d, index, broken))
    assert report.failed_index == index
    assert "not found" in report.first_failure.message


def test_a_substitution_step_that_shows_the_unsubstituted_line_is_caught():
    d = D.get("deberta-three-terms")
    index = next(k for k, s in enumerate(d.steps) if s.kind == "substitution")
    lazy = dataclasses.replace(d.steps[index], expr=d.steps[index - 1].expr)  # claims to drop p2p, doesn't
    report = D.verify(_with_step(d, index, lazy))
    assert report.failed_index == index


def test_a_wrong_claim_is_caught():
    d = D.get("cope-all-gates-open")
    i, j = sp.symbols("i j", integer=True)
    report = D.verify(dataclasses.replace(d, claim_expr=i - j))  # forgot the +1
    assert report.failed_index == len(d.steps)
    assert report.failed_rule == "claim"


def test_step_kinds_are_validated():
    x = sp.Symbol("x")
    with pytest.raises(ValueError):
        Step(x, "no pairs", kind="substitution")
    with pytest.raises(ValueError):
        Step(x, "stray pairs", kind="equal", substitution=((x, 1),))
    with pytest.raises(ValueError):
        D.Derivation("bad", "t", "i", (D.step(x, "not a start"),), "c")


# --- LaTeX -----------------------------------------------------------------------------------


@pytest.mark.parametrize("derivation_id", IDS)
def test_every_step_renders_to_latex(derivation_id):
    d = D.get(derivation_id)
    for s in d.steps:
        for tex in (D.to_latex(s), D.to_latex(s, highlight=True), sp.latex(s.expr)):
            assert tex.strip()
            for bad in ("zoo", "nan", "\\tilde{\\infty}"):
                assert bad not in tex
        if s.changed is not None:
            # The highlight must actually land on the printed line, or the page shows nothing.
            assert "\\textcolor" in D.to_latex(s, highlight=True), s.rule
    if d.claim_expr is not None:
        assert D.claim_latex(d).strip()


def test_latex_reads_like_the_paper():
    rope = D.get("rope-matrix-2d")
    assert "R\\left(\\left(n - m\\right) \\theta\\right)" in D.claim_latex(rope)
    assert "{\\mathbf{q}}^{\\top}" in D.to_latex(rope.steps[1])
    alibi = D.get("alibi-shift-invariance")
    assert "\\left(i + c\\right) - \\left(j + c\\right)" in D.to_latex(alibi.steps[1])


# --- numbers ---------------------------------------------------------------------------------


@pytest.mark.parametrize("derivation_id", IDS)
def test_parameters_cover_exactly_the_free_symbols(derivation_id):
    d = D.get(derivation_id)
    assert set(D.free_symbols(d)) == {p.name for p in d.parameters}
    for p in d.parameters:
        assert p.label and isinstance(p.default, (int, float)) and math.isfinite(p.default)


@pytest.mark.parametrize("derivation_id", IDS)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_numeric_check_first_equals_last_for_random_numbers(derivation_id, seed):
    d = D.get(derivation_id)
    values = _random_values(d, seed)
    first, last = D.numeric_check(d, values)
    assert _close(first, last), (first, last)
    # Every equality step agrees with the one before it, not just the two ends.
    per_step = D.step_values(d, values)
    for k in range(1, len(d.steps)):
        if d.steps[k].kind == "equal":
            assert _close(per_step[k - 1], per_step[k]), (k, d.steps[k].rule)


def test_numeric_check_uses_defaults_and_rejects_unknown_names():
    d = D.get("rope-matrix-2d")
    assert _close(*D.numeric_check(d))
    with pytest.raises(ValueError, match="unknown parameters"):
        D.numeric_check(d, {"theta": 0.3, "tehta": 1.0})


def test_rope_2d_matches_an_independent_numpy_rotation():
    d = D.get("rope-matrix-2d")
    m, n, theta = 3, 7, 0.3
    q, k = np.array([0.8, -0.5]), np.array([0.3, 1.1])

    def rot(a):
        return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])

    expected = (rot(m * theta) @ q) @ (rot(n * theta) @ k)
    first, last = D.numeric_check(d, {"m": m, "n": n, "theta": theta, "q1": q[0], "q2": q[1], "k1": k[0], "k2": k[1]})
    assert first == pytest.approx(expected, abs=1e-12)
    assert last == pytest.approx(expected, abs=1e-12)
    # And the relative form: only n − m = 4 matters.
    assert last == pytest.approx(q @ rot((n - m) * theta) @ k, abs=1e-12)
    # The complex form gives the same number.
    cplx = D.get("rope-complex-2d")
    assert D.numeric_check(cplx, {"m": m, "n": n, "theta": theta, "q1": 0.8, "q2": -0.5, "k1": 0.3, "k2": 1.1})[
        1
    ] == pytest.approx(expected, abs=1e-12)


def test_sinusoidal_dot_product_matches_numpy_with_paper_frequencies():
    d = D.get("sinusoidal-dot-product")
    dim = 6
    w = 10000.0 ** (-2 * np.arange(dim // 2) / dim)

    def pe(pos):
        out = np.empty(dim)
        out[0::2], out[1::2] = np.sin(pos * w), np.cos(pos * w)
        return out

    first, last = D.numeric_check(d, {"m": 9, "n": 4})  # defaults are the paper frequencies
    assert first == pytest.approx(pe(9) @ pe(4), abs=1e-9)
    assert last == pytest.approx(np.cos(5 * w).sum(), abs=1e-9)


def test_rope_d6_matrix_matches_numpy():
    d = D.get("rope-relative-d6")
    values = {"m": 2, "n": 5, "theta_1": 1.0, "theta_2": 0.1, "theta_3": 0.01}
    first, last = D.numeric_check(d, values)

    def block_diag(pos):
        out = np.zeros((6, 6))
        for f, t in enumerate([1.0, 0.1, 0.01]):
            a = pos * t
            out[2 * f : 2 * f + 2, 2 * f : 2 * f + 2] = [[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]]
        return out

    assert np.allclose(first, block_diag(2).T @ block_diag(5))
    assert np.allclose(last, block_diag(3))


# --- RoPE designed from its goal, and why block-diagonal ------------------------------------


def _rot(a):
    return np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])


def _swap_all(derivation, old, new):
    """The derivation with `old` replaced by `new` in every step (and its claim)."""
    steps = tuple(dataclasses.replace(s, expr=s.expr.xreplace({old: new})) for s in derivation.steps)
    claim = derivation.claim_expr.xreplace({old: new}) if derivation.claim_expr is not None else None
    return dataclasses.replace(derivation, steps=steps, claim_expr=claim)


def test_rope_from_the_goal_catches_a_wrong_angle_difference():
    d = D.get("rope-from-the-goal")
    q, k = d.steps[3].expr.args[0], d.steps[3].expr.args[-1]
    m, n = sp.symbols("m n", real=True)
    phi = sp.Function("phi", real=True)
    wrong = Step(MatMul(q, Rot(phi(m) - phi(n)), k), d.steps[3].rule)  # should be φ(n) − φ(m)
    report = D.verify(_with_step(d, 3, wrong))
    assert report.failed_index == 3
    # the goal's substitution must replace exactly the angle difference of the line above
    assert D.verify(d).checks[3].method.startswith("substitution")
    # numbers: RoPE's score at the end, whatever the angle law of lines 0–3
    values = {"m": 3, "n": 7, "theta": 0.3, "q1": 0.8, "q2": -0.5, "k1": 0.3, "k2": 1.1}
    per_line = D.step_values(d, values)
    qv, kv = np.array([0.8, -0.5]), np.array([0.3, 1.1])
    phi_num = lambda p: 0.3 * p + 0.02 * p**2  # noqa: E731  (the stand-in, written out)
    assert per_line[0] == pytest.approx((_rot(phi_num(3)) @ qv) @ (_rot(phi_num(7)) @ kv), abs=1e-12)
    assert per_line[5] == pytest.approx((_rot(3 * 0.3) @ qv) @ (_rot(7 * 0.3) @ kv), abs=1e-12)
    assert per_line[4] == pytest.approx(per_line[5], abs=1e-12) and per_line[3] != pytest.approx(per_line[4])


def test_skew_generator_needs_r0_to_be_the_identity():
    d = D.get("rope-skew-generator")
    assert D.verify(d).ok
    without = dataclasses.replace(d, where=())  # forget R(0) = I
    report = D.verify(without)
    assert not report.ok and report.failed_index == 2
    # the concrete family used for numbers: d/dm (RᵀR) at 0 = R′(0)ᵀ + R′(0), by finite differences
    first, last = D.numeric_check(d)

    def family(p):
        return np.array(
            [[np.cos(0.7 * p) + p**2 / 5, -np.sin(0.7 * p) + p / 3], [np.sin(0.7 * p) + p**2, np.cos(0.7 * p) - p / 2]]
        )

    h = 1e-6
    numeric = ((family(h).T @ family(h)) - (family(-h).T @ family(-h))) / (2 * h)
    assert np.allclose(first, numeric, atol=1e-8) and np.allclose(last, numeric, atol=1e-8)


def test_skew_exponential_2d_is_a_rotation_by_half_the_difference():
    d = D.get("rope-skew-exponential-2d")
    from scipy.linalg import expm

    for m, a12, a21 in ((3, 0.4, -1.1), (0, 2.0, 2.0), (17, -0.3, 0.9)):
        first, last = D.numeric_check(d, {"m": m, "A12": a12, "A21": a21})
        a = np.array([[5.0, a12], [a21, -7.0]])  # the diagonal cancels in A − Aᵀ
        assert np.allclose(first, expm(m * (a - a.T) / 2), atol=1e-12)
        assert np.allclose(last, _rot(m * (a21 - a12) / 2), atol=1e-12)
    wrong_sign = sp.Mul(sp.Rational(1, 2), sp.Symbol("A12", real=True) - sp.Symbol("A21", real=True))
    s1 = d.steps[1]
    broken = Step(MatExp(MatMul(sp.Symbol("m", real=True) * wrong_sign, s1.expr.args[0].args[-1])), s1.rule)
    assert D.verify(_with_step(d, 1, broken)).failed_index == 1


def test_block_exponential_matches_scipy_and_catches_swapped_blocks():
    from scipy.linalg import expm

    d = D.get("rope-block-exponential")
    H = np.eye(4) - np.ones((4, 4)) / 2
    J = np.array([[0.0, -1.0], [1.0, 0.0]])
    for m, t1, t2 in ((3, 1.0, 0.01), (11, 0.7, 0.3), (0, 1.3, 0.2)):
        first, last = D.numeric_check(d, {"m": m, "theta_1": t1, "theta_2": t2})
        A = H @ np.block([[t1 * J, np.zeros((2, 2))], [np.zeros((2, 2)), t2 * J]]) @ H.T
        assert np.allclose(first, expm(m * A), atol=1e-12)
        R = np.zeros((4, 4))
        R[:2, :2], R[2:, 2:] = _rot(m * t1), _rot(m * t2)
        assert np.allclose(last, H @ R @ H.T, atol=1e-12)
    s3 = d.steps[3]
    q, blocks = s3.expr.args[0], s3.expr.args[1]
    swapped = Step(MatMul(q, DirectSum(*reversed(blocks.args)), s3.expr.args[2]), s3.rule)
    assert D.verify(_with_step(d, 3, swapped)).failed_index == 3


def test_absorbing_the_basis_needs_an_orthogonal_q():
    d = D.get("rope-absorb-basis")
    H = np.eye(4) - np.ones((4, 4)) / 2
    values = {"m": 2, "n": 9, "theta_1": 1.0, "theta_2": 0.01}
    values |= {f"q{r}": v for r, v in enumerate([0.3, -1.2, 0.8, 0.5], 1)}
    values |= {f"k{r}": v for r, v in enumerate([1.1, 0.4, -0.6, 0.9], 1)}
    first, last = D.numeric_check(d, values)

    def R(p):
        out = np.zeros((4, 4))
        out[:2, :2], out[2:, 2:] = _rot(p * 1.0), _rot(p * 0.01)
        return out

    q = np.array([0.3, -1.2, 0.8, 0.5])
    k = np.array([1.1, 0.4, -0.6, 0.9])
    assert first == pytest.approx((H @ R(2) @ H.T @ q) @ (H @ R(9) @ H.T @ k), abs=1e-12)
    assert last == pytest.approx((H.T @ q) @ R(7) @ (H.T @ k), abs=1e-12)
    basis = next(a for a in d.steps[0].expr.atoms(D.Named) if a.name == "Q")
    stretched = D.Named("Q", 2 * sp.ImmutableMatrix(H.tolist()).applyfunc(sp.nsimplify))
    report = D.verify(_swap_all(d, basis, stretched))  # 2Q is not orthogonal: QᵀQ = 4I
    assert report.failed_index == 2


def test_sinusoidal_shift_matrix_is_independent_of_position():
    d = D.get("sinusoidal-shift")
    values = {"Delta": 3}
    a = D.step_values(d, {**values, "p": 1})
    b = D.step_values(d, {**values, "p": 11})
    # The last line is T(Δ)·PE(p); T itself (the named atom's entries) must not involve p.
    t_delta = d.steps[-1].expr.args[0]
    assert sp.Symbol("p", real=True) not in t_delta.as_explicit().free_symbols
    assert not _close(a[-1], b[-1])  # PE(p) itself does move


def test_cope_counts_the_diagonal():
    d = D.get("cope-all-gates-open")
    assert D.numeric_check(d, {"i": 6, "j": 6}) == (1.0, 1.0)  # p_ii = g_ii = 1, not 0
    assert D.numeric_check(d, {"i": 6, "j": 2}) == (5.0, 5.0)


def test_alibi_number_is_taken_at_the_shifted_positions():
    d = D.get("alibi-shift-invariance")
    assert "c" in D.free_symbols(d)
    first, last = D.numeric_check(d, {"m_h": 0.5, "i": 7, "j": 3, "c": 100})
    assert first == last == pytest.approx(-2.0)


def _t5_bucket_reference(r, num_buckets=32, max_distance=128):
    """METHODS.md §5, bidirectional, written independently of the sympy stand-in."""
    half = num_buckets // 2
    offset = half if r > 0 else 0
    a = abs(r)
    exact = half // 2
    if a < exact:
        return offset + a
    return offset + min(exact + int(math.log(a / exact) / math.log(max_distance / exact) * (half - exact)), half - 1)


def test_t5_numbers_use_t5s_real_bucket_rule():
    d = D.get("t5-shift-invariance")
    bucket_stand_in = dict(d.stand_ins)[sp.Function("bucket")]
    for r in [-300, -128, -40, -9, -8, -7, -1, 0, 1, 7, 8, 9, 16, 40, 127, 128, 500]:
        assert int(bucket_stand_in(r)) == _t5_bucket_reference(r), r
    first, last = D.numeric_check(d, {"i": 3, "j": 40, "c": 9})
    assert first == last == pytest.approx(-_t5_bucket_reference(37) / 10)


def test_equality_span_stops_before_the_first_modelling_choice():
    xl = D.get("absolute-pe-attention")
    assert not xl.exact
    assert xl.equality_span == (0, 2)  # definition, transpose, four-term expansion
    assert D.get("rope-matrix-2d").exact
    assert D.get("rope-matrix-2d").equality_span == (0, len(D.get("rope-matrix-2d").steps) - 1)
