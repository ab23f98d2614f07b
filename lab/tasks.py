"""The toy tasks of the CoPE paper (Golovneva et al. 2024, §5; METHODS.md "task definitions"),
scaled down so that a tiny Transformer learns them in about a minute on one CPU core.

Every task is a next-token language-modelling problem on a short token string. Only the *answer*
positions are scored (the bit after each read, the copied tokens, the printed value): the other
tokens are random or determined by the sampler, so no model can predict them.

    Flip-Flop       w1 i0 i1 w0 i1 r0 …    the bit after r is the bit of the most recent w
    Selective Copy  C _ _ A _ B _ | C A B  copy the non-blank tokens, in order, after the bar
    Counting        a=0 pass a++ pass print a 1     the printed value of the variable

Each task has named *splits*: "id" is the training distribution; the others are out-of-distribution
(OOD) tests: sparser and longer for Flip-Flop, denser / sparser for Selective Copy, longer programs
for Counting. Samplers are seeded numpy Generators: the same seed gives the same batch, always.

A Batch holds token ids (b, n), a bool mask of answer positions (b, n) and, per answer position, a
*distance* (what makes the answer hard to find: tokens since the last write, from the copied token,
statements since the variable last changed), for the error-against-distance plots.
"""

from __future__ import annotations

import bisect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

PAD = "<pad>"
PLACEHOLDER = "?"  # what a learner types where the model should answer (lab "Inspect")
MAX_TEXT_TOKENS = 160  # the longest string the Inspect panel accepts (longer than every split)


@dataclass(frozen=True)
class Batch:
    tokens: np.ndarray  # (b, n) int64 ids; PAD after the end of a shorter sequence
    answer: np.ndarray  # (b, n) bool: position t is scored (predicted from tokens < t)
    distance: np.ndarray  # (b, n) int64: the task's difficulty distance at answer positions, −1 elsewhere
    group: np.ndarray  # (b,) int64: a per-sequence label (Counting: how many variables), else 0

    def __len__(self) -> int:
        return self.tokens.shape[0]


def _pack(seqs: list[list[int]], answers: list[list[int]], dists: list[list[int]], groups, pad: int) -> Batch:
    """Variable-length sequences → padded arrays. Padding goes at the end: under a causal mask it
    can never influence an earlier position."""
    b, n = len(seqs), max(len(s) for s in seqs)
    tokens = np.full((b, n), pad, dtype=np.int64)
    answer = np.zeros((b, n), dtype=bool)
    distance = np.full((b, n), -1, dtype=np.int64)
    for r, (s, a, d) in enumerate(zip(seqs, answers, dists, strict=False)):
        tokens[r, : len(s)] = s
        answer[r, a] = True
        distance[r, a] = d
    return Batch(tokens, answer, distance, np.asarray(groups, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Flip-Flop (Liu et al. 2023): instructions w (write), r (read), i (ignore), each followed by a bit.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FlipFlopConfig:
    # Instructions per string (each is 2 tokens). The FFLM paper uses 256; 32 keeps a step cheap.
    n_instructions: int = 32
    # FFL(p): ignore with probability p, write and read with (1 − p)/2 each. FFLM trains on 0.8.
    p_ignore: float = 0.8


def flipflop_sample(cfg: FlipFlopConfig, rng: np.random.Generator, batch: int) -> Batch:
    """FFL(p_ignore) strings. As in the FFLM reference data, the first instruction is always w (so
    every read has a write to recall) and the last is always r (so every string has a question).
    The bit after w and i is random; the bit after r is the bit of the latest w."""
    m = cfg.n_instructions
    p_rw = (1 - cfg.p_ignore) / 2
    ops = rng.choice(3, size=(batch, m), p=[p_rw, p_rw, cfg.p_ignore])  # 0 w, 1 r, 2 i
    ops[:, 0], ops[:, -1] = 0, 1
    bits = rng.integers(0, 2, size=(batch, m))
    # Latest write index at each instruction, carried forward (index 0 is always a write).
    idx = np.where(ops == 0, np.arange(m)[None, :], 0)  # (b, m)
    last_w = np.maximum.accumulate(idx, axis=1)  # (b, m)
    bits = np.where(ops == 1, np.take_along_axis(bits, last_w, axis=1), bits)
    tokens = np.empty((batch, 2 * m), dtype=np.int64)  # (b, n) with n = 2m
    tokens[:, 0::2] = ops  # ids 0 w, 1 r, 2 i
    tokens[:, 1::2] = 3 + bits  # ids 3 "0", 4 "1"
    answer = np.zeros_like(tokens, dtype=bool)
    answer[:, 1::2] = ops == 1  # the bit after each r
    distance = np.full_like(tokens, -1)
    # Tokens between the bit of the latest write and the bit of this read.
    distance[:, 1::2] = np.where(ops == 1, 2 * (np.arange(m)[None, :] - last_w), -1)
    return Batch(tokens, answer, distance, np.zeros(batch, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Selective Copy (Gu & Dao 2023, as used by CoPE §5.2): copy the non-blank tokens, skip the blanks.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SelectiveCopyConfig:
    n_copy: int = 8  # tokens to copy (drawn with replacement from the alphabet)
    n_blanks: int = 24  # blanks scattered among them
    n_symbols: int = 8  # alphabet size: A, B, C, …


SC_SYMBOLS = tuple("ABCDEFGHIJKLMNOP")


def selective_copy_sample(cfg: SelectiveCopyConfig, rng: np.random.Generator, batch: int) -> Batch:
    """[n_copy symbols and n_blanks blanks in random order] | [the symbols again, in order].
    Ids: 0 '_' blank, 1 '|' separator, 2… symbols."""
    k, nb = cfg.n_copy, cfg.n_blanks
    L = k + nb
    keys = rng.random((batch, L))
    where = np.sort(np.argsort(keys, axis=1)[:, :k], axis=1)  # (b, k) positions of the symbols
    syms = 2 + rng.integers(0, cfg.n_symbols, size=(batch, k))  # (b, k)
    tokens = np.zeros((batch, L + 1 + k), dtype=np.int64)
    np.put_along_axis(tokens, where, syms, axis=1)
    tokens[:, L] = 1
    tokens[:, L + 1 :] = syms
    answer = np.zeros_like(tokens, dtype=bool)
    answer[:, L + 1 :] = True
    distance = np.full_like(tokens, -1)
    distance[:, L + 1 :] = (L + 1 + np.arange(k))[None, :] - where  # from the source token to its copy
    return Batch(tokens, answer, distance, np.zeros(batch, dtype=np.int64))


# ---------------------------------------------------------------------------------------------
# Counting (CoPE §5.3; facebookresearch/RAM count_data_gen.py): set, increment, pass, print.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CountingConfig:
    min_vars: int = 1  # each program uses a number of variables drawn from min_vars … max_vars
    max_vars: int = 3
    min_steps: int = 3  # statements before the question, drawn from min_steps … max_steps
    max_steps: int = 48  # the paper draws up to 512
    max_value: int = 10  # an increment past this is resampled (the paper's cap)
    # Statement weights from count_data_gen.py: set 1, pass 50, increment 7. With 50 the toy
    # programs are mostly "pass"; we keep the paper's ratio.
    w_set: float = 1.0
    w_pass: float = 50.0
    w_inc: float = 7.0


COUNT_VARS = tuple("abcde")


def counting_vocab() -> tuple[str, ...]:
    stmts = [f"{v}=0" for v in COUNT_VARS] + [f"{v}++" for v in COUNT_VARS]
    return ("pass", "print", *COUNT_VARS, *stmts, *(str(x) for x in range(11)))


def counting_sample(cfg: CountingConfig, rng: np.random.Generator, batch: int) -> Batch:
    """One program per row: statements, then `print x` and the value of x (the answer).

    As in count_data_gen.py, an increment applies only to a variable already set and never past
    max_value (otherwise the statement is resampled); the question asks about a variable that has
    been set. The first statement sets a variable so that every program has one to ask about.
    """
    vocab = {t: i for i, t in enumerate(("<pad>", *counting_vocab()))}
    w = np.array([cfg.w_set, cfg.w_pass, cfg.w_inc], dtype=float)
    w /= w.sum()
    if (w < 0).any():
        raise ValueError("statement weights must not be negative")
    # rng.choice(3, p=w) draws one rng.random() and finds it in the cumulative weights (numpy 2's
    # Generator.choice); the same here, the same numbers, without the 10 µs of checks per call that
    # made Counting's shipped training streams take ~25 s to draw (the disjoint test sets draw them).
    cdf = w.cumsum()
    cdf /= cdf[-1]
    cum = cdf.tolist()
    seqs, answers, dists, groups = [], [], [], []
    for _ in range(batch):
        nv = int(rng.integers(cfg.min_vars, cfg.max_vars + 1))
        names = COUNT_VARS[:nv]
        steps = int(rng.integers(cfg.min_steps, cfg.max_steps + 1))
        value: dict[str, int] = {}
        changed: dict[str, int] = {}
        out: list[int] = []
        first = names[int(rng.integers(nv))]
        value[first], changed[first] = 0, 0
        out.append(vocab[f"{first}=0"])
        for s in range(1, steps):
            while True:
                kind = bisect.bisect_right(cum, rng.random())  # = int(rng.choice(3, p=w))
                var = names[int(rng.integers(nv))]
                if kind == 0:
                    value[var], changed[var] = 0, s
                    out.append(vocab[f"{var}=0"])
                elif kind == 1:
                    out.append(vocab["pass"])
                elif var in value and value[var] < cfg.max_value:
                    value[var] += 1
                    changed[var] = s
                    out.append(vocab[f"{var}++"])
                else:
                    continue  # resample, as the reference generator does
                break
        q = sorted(value)[int(rng.integers(len(value)))]
        out += [vocab["print"], vocab[q], vocab[str(value[q])]]
        seqs.append(out)
        answers.append([len(out) - 1])
        dists.append([steps - changed[q]])  # statements since the variable last changed
        groups.append(nv)
    return _pack(seqs, answers, dists, groups, pad=0)


# ---------------------------------------------------------------------------------------------
# The registry of tasks
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Split:
    name: str  # "id", "ood", …
    label: str  # what a learner reads
    config: Any  # the task's config dataclass


@dataclass(frozen=True)
class Task:
    name: str
    label: str
    vocab: tuple[str, ...]  # id → token; vocab[0] is PAD only where the task pads
    sample_fn: Callable[[Any, np.random.Generator, int], Batch]  # (the split's config, rng, count)
    splits: tuple[Split, ...]
    distance_label: str  # axis title of the error-against-distance plot
    char_tokens: bool  # True: every character is a token (typed strings need no spaces)
    example: str  # an Inspect string for the page

    @property
    def split_names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.splits)

    def split(self, name: str) -> Split:
        for s in self.splits:
            if s.name == name:
                return s
        raise KeyError(f"task {self.name!r} has no split {name!r}; splits: {self.split_names}")

    def sample(self, split: str, rng: np.random.Generator, batch: int) -> Batch:
        return self.sample_fn(self.split(split).config, rng, batch)

    def split_length(self, name: str) -> int:
        """The longest sequence split `name` can produce."""
        return _max_len(self.name, self.split(name).config)

    def max_length(self) -> int:
        """The longest sequence any split can produce (sizes a learned position table)."""
        return max(_max_len(self.name, s.config) for s in self.splits)


def _max_len(task: str, cfg) -> int:
    if task == "flipflop":
        return 2 * cfg.n_instructions
    if task == "selective_copy":
        return cfg.n_copy + cfg.n_blanks + 1 + cfg.n_copy
    return cfg.max_steps + 3


TASKS: dict[str, Task] = {
    "flipflop": Task(
        "flipflop",
        "Flip-Flop",
        ("w", "r", "i", "0", "1"),
        flipflop_sample,
        (
            Split("id", "in-distribution: FFL(0.8), 64 tokens", FlipFlopConfig(32, 0.8)),
            Split("ood", "OOD: FFL(0.98), 128 tokens (sparser and 2× longer)", FlipFlopConfig(64, 0.98)),
        ),
        "tokens from the last write's bit to the read's bit",
        char_tokens=True,
        example="w1 i0 i1 w0 i1 i1 r? i0 w1 i0 r?",
    ),
    "selective_copy": Task(
        "selective_copy",
        "Selective Copy",
        ("_", "|", *SC_SYMBOLS[:8]),
        selective_copy_sample,
        (
            Split("id", "in-distribution: 8 symbols among 24 blanks", SelectiveCopyConfig(8, 24)),
            Split("ood_dense", "OOD dense: 8 symbols among 8 blanks", SelectiveCopyConfig(8, 8)),
            Split("ood_sparse", "OOD sparse: 8 symbols among 56 blanks", SelectiveCopyConfig(8, 56)),
        ),
        "tokens from the source symbol to its copy",
        char_tokens=True,
        example="C__A_B___D|????",
    ),
    "counting": Task(
        "counting",
        "Counting",
        ("<pad>", *counting_vocab()),
        counting_sample,
        (
            Split("id", "in-distribution: 1–3 variables, 3–48 statements", CountingConfig()),
            Split(
                "ood",
                "OOD: 1–3 variables, 49–96 statements (longer programs)",
                CountingConfig(min_steps=49, max_steps=96),
            ),
        ),
        "statements since the variable last changed",
        char_tokens=False,
        example="a=0 pass a++ pass b=0 a++ pass b++ print a ?",
    ),
}


def get(name: str) -> Task:
    try:
        return TASKS[name]
    except KeyError:
        raise KeyError(f"no task {name!r}; tasks: {sorted(TASKS)}") from None


def stretch(task: str, config: Any, factor: float) -> Any:
    """A split's config `factor` times as long, nothing else changed: Flip-Flop, more instructions
    at the same sparsity; Selective Copy, more symbols and blanks at the same density; Counting,
    statement counts scaled (the probes then keep answers as in training)."""
    if task == "flipflop":
        return replace(config, n_instructions=round(config.n_instructions * factor))
    if task == "selective_copy":
        return replace(config, n_copy=round(config.n_copy * factor), n_blanks=round(config.n_blanks * factor))
    return replace(config, min_steps=round(config.min_steps * factor), max_steps=round(config.max_steps * factor))


def scaled(task: Task, factor: int) -> Task:
    """The task with every split `factor` times as long (the closer-to-paper configuration of the
    toy lab: Flip-Flop × 4 trains on 256 tokens). Same name, so the same test-set seeds; factor 1 is
    the task itself."""
    if factor == 1:
        return task
    splits = tuple(
        replace(s, label=f"{s.label} (× {factor} in length)", config=stretch(task.name, s.config, factor))
        for s in task.splits
    )
    return replace(task, splits=splits)


# ---------------------------------------------------------------------------------------------
# Text ↔ tokens (the page's "Inspect" box, and tests)
# ---------------------------------------------------------------------------------------------


def to_text(task: Task, ids) -> str:
    """Token ids → the string a learner would type (padding dropped)."""
    toks = [task.vocab[int(t)] for t in ids if task.vocab[int(t)] != PAD]
    if task.name == "flipflop":
        return " ".join(a + b for a, b in zip(toks[0::2], toks[1::2], strict=False))  # "w1 i0 r1"
    return ("" if task.char_tokens else " ").join(toks)


class ParseError(ValueError):
    """A typed string the task cannot read; the message lists the valid tokens. The message never
    quotes what was typed (pages render it as Markdown); the offending token is in `.token`.

    The message is English (tests, tools). A page shows the learner's language instead: `.code`
    names the problem and `.values` fills its placeholders; the page looks the words up as
    "toy_tasks.parse.<code>" (lab/ knows no languages)."""

    def __init__(self, message: str, token: str | None = None, *, code: str = "", **values):
        super().__init__(message)
        self.token = token
        self.code = code
        self.values = values


def split_text(task: Task, text: str) -> list[str]:
    """A typed string → tokens (strings, '?' kept). Character tasks ignore whitespace."""
    if task.char_tokens:
        return [c for c in text if not c.isspace()]
    return text.split()


def parse(task: Task, text: str, max_tokens: int = MAX_TEXT_TOKENS) -> list[str]:
    """Check a typed string: known tokens only, '?' only where an answer goes, bounded length.

    Returns the tokens (strings, '?' where the model should answer). Raises ParseError with a
    message a learner can act on.
    """
    toks = split_text(task, text)
    if not toks:
        raise ParseError("The string is empty. Example: " + task.example, code="empty", example=task.example)
    if len(toks) > max_tokens:
        raise ParseError(
            f"The string has {len(toks)} tokens; at most {max_tokens} are accepted.",
            code="too_long",
            n=len(toks),
            max=max_tokens,
        )
    valid = [t for t in task.vocab if t != PAD]
    for k, t in enumerate(toks):
        if t != PLACEHOLDER and t not in valid:
            raise ParseError(
                f"Token {k + 1} is not part of {task.label}. Valid tokens: "
                + " ".join(valid)
                + f", and {PLACEHOLDER} where the model should answer.",
                token=t[:40],
                code="bad_token",
                k=k + 1,
                task=task.label,
                valid=" ".join(valid),
                placeholder=PLACEHOLDER,
            )
    slots = answer_slots(task, toks)
    for k, t in enumerate(toks):
        if t == PLACEHOLDER and k not in slots:
            raise ParseError(
                f"'?' at token {k + 1} is not an answer position. {_slot_rule(task)}",
                code="not_slot",
                k=k + 1,
                rule=task.name,
            )
    if task.name == "flipflop" and (
        len(toks) % 2 or any(t not in "wri" for t in toks[0::2]) or any(t not in "01?" for t in toks[1::2])
    ):
        raise ParseError(
            "Flip-Flop alternates an instruction (w, r, i) and a bit (0, 1, or ? after r).", code="alternate"
        )
    if task.name == "selective_copy" and toks.count("|") != 1:
        raise ParseError("Selective Copy needs exactly one '|' between the input and the copy.", code="one_bar")
    if not slots:
        raise ParseError(f"There is nothing to answer. {_slot_rule(task)}", code="nothing", rule=task.name)
    return toks


def _slot_rule(task: Task) -> str:
    return {
        "flipflop": "A '?' goes after r (the bit to recall).",
        "selective_copy": "A '?' goes after the '|', one per symbol to copy.",
        "counting": "A '?' goes after 'print x'.",
    }[task.name]


def answer_slots(task: Task, toks: list[str]) -> list[int]:
    """Indices of the answer positions in a token list (the scored positions of a Batch)."""
    if task.name == "flipflop":
        return [k for k in range(1, len(toks)) if k % 2 == 1 and toks[k - 1] == "r"]
    if task.name == "selective_copy":
        if "|" not in toks:
            return []
        bar = toks.index("|")
        return list(range(bar + 1, len(toks)))
    return [k for k in range(2, len(toks)) if toks[k - 2] == "print" and toks[k - 1] in COUNT_VARS]


def encode(task: Task, toks: list[str]) -> np.ndarray:
    """Token strings (no '?') → ids (n,)."""
    index = {t: i for i, t in enumerate(task.vocab)}
    return np.array([index[t] for t in toks], dtype=np.int64)


def reference_answers(task: Task, toks: list[str]) -> dict[int, str | None]:
    """The correct answer at each answer slot of a typed string, by the task's rule, reading
    left to right (None where the string leaves the answer undefined, e.g. a read before any write).
    Answers the learner typed themselves are used as given for what follows; '?' slots are filled
    with the correct answer before reading on."""
    out: dict[int, str | None] = {}
    toks = list(toks)
    if task.name == "flipflop":
        last = None
        for k in range(0, len(toks) - 1, 2):
            op, bit = toks[k], toks[k + 1]
            if op == "w":
                last = bit
            elif op == "r":
                out[k + 1] = last
        return out
    if task.name == "selective_copy":
        bar = toks.index("|")
        symbols = [t for t in toks[:bar] if t not in ("_", "|")]
        for n, k in enumerate(range(bar + 1, len(toks))):
            out[k] = symbols[n] if n < len(symbols) else None
        return out
    value: dict[str, int] = {}
    for k, t in enumerate(toks):
        if t.endswith("=0"):
            value[t[0]] = 0
        elif t.endswith("++") and t[0] in value:
            value[t[0]] = min(value[t[0]] + 1, 10)  # the generator never increments past 10
        if k >= 2 and toks[k - 2] == "print" and toks[k - 1] in COUNT_VARS:
            v = value.get(toks[k - 1])
            out[k] = None if v is None else str(v)
    return out
