"""lab/tasks.py: generated answers checked by independent solvers that read the *text* back,
seeds, and that the OOD splits really are sparser / denser / longer."""

from __future__ import annotations

import re

import numpy as np
import pytest

from lab import tasks as T

# --- independent solvers: they parse the string a learner would read, not the generator's arrays ---


def solve_flipflop(text: str) -> list[tuple[int, str]]:
    """(token index of the bit after each r, the bit of the latest w before it), via regex on text."""
    pairs = text.split(" ")
    out = []
    for k, pair in enumerate(pairs):
        if pair[0] == "r":
            before = " ".join(pairs[:k])
            writes = re.findall(r"w([01])", before)
            out.append((2 * k + 1, writes[-1]))
    return out


def solve_selective_copy(text: str) -> list[tuple[int, str]]:
    source, copy = text.split("|")
    letters = source.replace("_", "")
    start = len(source) + 1
    return [(start + k, letters[k]) for k in range(len(copy))]


def solve_counting(text: str) -> list[tuple[int, str]]:
    """Translate the program to Python and run it."""
    toks = text.split(" ")
    assert toks[-3] == "print"
    lines = []
    for t in toks[:-3]:
        lines.append(t.replace("++", " += 1") if t.endswith("++") else t)
    env: dict = {}
    exec("\n".join(lines), {}, env)
    return [(len(toks) - 1, str(env[toks[-2]]))]


SOLVERS = {"flipflop": solve_flipflop, "selective_copy": solve_selective_copy, "counting": solve_counting}
CASES = [(t, s) for t in T.TASKS for s in T.get(t).split_names]


@pytest.mark.parametrize("task_name,split", CASES)
def test_answers_match_independent_solver(task_name, split):
    task = T.get(task_name)
    batch = task.sample(split, np.random.default_rng(7), 60)
    checked = 0
    for row in range(len(batch)):
        text = T.to_text(task, batch.tokens[row])
        expected = SOLVERS[task_name](text)
        slots = list(np.flatnonzero(batch.answer[row]))
        assert slots == [k for k, _ in expected], text
        for k, ans in expected:
            assert task.vocab[batch.tokens[row, k]] == ans, (text, k)
            checked += 1
        # The library's own rule reader (used by the page) agrees with the solver too.
        toks = T.split_text(task, text)
        assert T.reference_answers(task, toks) == dict(expected)
    assert checked >= 60


def test_flipflop_distance_is_gap_to_last_write():
    task = T.get("flipflop")
    b = task.sample("id", np.random.default_rng(3), 20)
    for row in range(20):
        toks = [task.vocab[t] for t in b.tokens[row]]
        for k in np.flatnonzero(b.answer[row]):
            last_w = max(j for j in range(0, k, 2) if toks[j] == "w")
            assert b.distance[row, k] == k - (last_w + 1)


def test_counting_respects_the_generator_rules():
    task = T.get("counting")
    b = task.sample("id", np.random.default_rng(11), 200)
    for row in range(len(b)):
        toks = T.to_text(task, b.tokens[row]).split(" ")
        seen, val = set(), {}
        for t in toks[:-3]:
            if t.endswith("=0"):
                seen.add(t[0])
                val[t[0]] = 0
            elif t.endswith("++"):
                assert t[0] in seen, "increment of a variable never set"
                val[t[0]] += 1
                assert val[t[0]] <= 10
        assert toks[-2] in seen  # the question asks about a set variable
        assert len({t[0] for t in toks[:-3] if t != "pass"}) <= b.group[row] <= 3


@pytest.mark.parametrize("task_name,split", CASES)
def test_seeds_reproducible(task_name, split):
    task = T.get(task_name)
    a = task.sample(split, np.random.default_rng(5), 16)
    b = task.sample(split, np.random.default_rng(5), 16)
    c = task.sample(split, np.random.default_rng(6), 16)
    assert np.array_equal(a.tokens, b.tokens) and np.array_equal(a.answer, b.answer)
    assert not np.array_equal(a.tokens, c.tokens)


def test_flipflop_ood_sparser_and_longer():
    task = T.get("flipflop")
    rng = np.random.default_rng(0)
    ida, ood = task.sample("id", rng, 400), task.sample("ood", rng, 400)
    frac = lambda b: float(np.isin(b.tokens[:, 2:-2:2], [0, 1]).mean())  # noqa: E731 w/r among free instructions
    assert ood.tokens.shape[1] >= 2 * ida.tokens.shape[1]
    assert abs(frac(ida) - 0.2) < 0.02 and abs(frac(ood) - 0.02) < 0.006
    assert ood.distance[ood.answer].max() > ida.distance[ida.answer].max()


def test_selective_copy_dense_and_sparse():
    task = T.get("selective_copy")
    rng = np.random.default_rng(0)
    blanks = {s: float((task.sample(s, rng, 50).tokens == 0).sum(1).mean()) for s in task.split_names}
    assert blanks["ood_dense"] < blanks["id"] < blanks["ood_sparse"]


def test_counting_ood_longer():
    task = T.get("counting")
    rng = np.random.default_rng(0)
    lens = {s: (task.sample(s, rng, 50).tokens != 0).sum(1) for s in task.split_names}
    assert lens["ood"].min() > lens["id"].max()


# --- parsing typed strings (the page's Inspect box) ---------------------------------------------------


def test_parse_valid_and_slots():
    ff = T.get("flipflop")
    toks = T.parse(ff, "w1 i0 i1 r?")
    assert toks == list("w1i0i1r?") and T.answer_slots(ff, toks) == [7]
    assert T.reference_answers(ff, toks) == {7: "1"}
    cnt = T.get("counting")
    toks = T.parse(cnt, "a=0 a++ pass a++ print a ?")
    assert T.reference_answers(cnt, toks) == {6: "2"}
    sc = T.get("selective_copy")
    toks = T.parse(sc, "A__B|??")
    assert T.reference_answers(sc, toks) == {5: "A", 6: "B"}


@pytest.mark.parametrize(
    "task_name,text,fragment",
    [
        ("flipflop", "w1 x0 r?", "Valid tokens: w r i 0 1"),
        ("flipflop", "w? r1", "not an answer position"),
        ("flipflop", "", "empty"),
        ("flipflop", "w1 " * 200 + "r?", "at most"),
        ("selective_copy", "AB??", "'|'"),
        ("counting", "a=0 print a", "nothing to answer"),
        ("counting", "a=0 b+ print a ?", "Valid tokens"),
    ],
)
def test_parse_errors_are_clear(task_name, text, fragment):
    with pytest.raises(T.ParseError, match=re.escape(fragment)):
        T.parse(T.get(task_name), text)


@pytest.mark.parametrize(
    "task_name,text,code",
    [
        ("flipflop", "w1 x0 r?", "bad_token"),
        ("flipflop", "w? r1", "not_slot"),
        ("flipflop", "", "empty"),
        ("flipflop", "w1 " * 200 + "r?", "too_long"),
        ("flipflop", "w1 i0", "nothing"),
        ("flipflop", "w1 r", "alternate"),
        ("selective_copy", "A|B|??", "one_bar"),
        ("counting", "a=0 print a", "nothing"),
    ],
)
def test_parse_errors_carry_a_code_the_catalogue_words_alike(task_name, text, code):
    """The page shows a parse error from its code (in the learner's language); in English the
    catalogue's wording must be the message itself, so the two cannot drift apart."""
    from explain.i18n import t

    with pytest.raises(T.ParseError) as exc:
        T.parse(T.get(task_name), text)
    e = exc.value
    assert e.code == code
    values = dict(e.values)
    if "rule" in values:
        values["rule"] = t(f"toy_tasks.slot_rule.{values['rule']}", "en")
    assert t(f"toy_tasks.parse.{code}", "en", **values) == str(e)
    for lang in ("en", "ko"):
        assert "{" not in t(f"toy_tasks.parse.{code}", lang, **values)


def test_task_words_in_the_catalogue_match_lab_tasks():
    """Split labels and distance axis titles are worded on the page from the catalogue; in English
    they are lab/tasks.py's own (which the shipped metrics record)."""
    from explain.i18n import t

    for name, task in T.TASKS.items():
        assert t(f"toy_tasks.distance.{name}", "en") == task.distance_label
        for s in task.splits:
            assert t(f"toy_tasks.split.{name}.{s.name}", "en") == s.label
            assert t(f"toy_tasks.split.{name}.{s.name}", "ko") != s.label


def test_counting_draws_its_statements_as_rng_choice_would():
    """counting_sample picks each statement's kind from one rng.random() in the cumulative weights,
    which is what numpy's Generator.choice(3, p=w) does (and ~17x faster): the same kinds from the same
    stream, so the shipped training streams and test sets stay the strings they were."""
    import bisect

    cfg = T.CountingConfig()
    w = np.array([cfg.w_set, cfg.w_pass, cfg.w_inc], dtype=float)
    w /= w.sum()
    cum = (w.cumsum() / w.cumsum()[-1]).tolist()
    a, b = np.random.default_rng(5), np.random.default_rng(5)
    for i in range(20_000):
        assert bisect.bisect_right(cum, a.random()) == int(b.choice(3, p=w)), i
        if i % 3 == 0:  # other draws in between, as in a program
            assert a.integers(3) == b.integers(3)
    assert a.random() == b.random()  # the streams are still in step
