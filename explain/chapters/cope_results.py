"""What the CoPE paper measured (Golovneva, Wang, Weston, Sukhbaatar 2024, arXiv 2405.18719v2), as
data: the language-modelling and code perplexities of its Table 4, and the length-generalisation
curves of its Figure 3 (read off the plot, so approximate). Nothing here is computed by this app;
the chapter's toy layer is untrained and cannot reproduce any of it. The tables and the sentences
that compare them are built here from these numbers, so the words never disagree with the table.

Source of every number: /work/shared/METHODS.md, "Headline results", CoPE paper.
"""

from __future__ import annotations

from dataclasses import dataclass

from explain.bounds import bounded
from explain.i18n import t

# Table 4, Wikitext-103: (method id, parameters in millions, validation PPL, test PPL).
WIKITEXT = (
    ("absolute", 124.4, 23.96, 24.87),
    ("relative", 123.7, 22.90, 23.81),
    ("cope", 123.7, 22.55, 23.46),
    ("cope_relative", 123.7, 22.31, 23.23),
)
# Table 4, code: (method id, parameters in millions, test PPL).
CODE = (
    ("absolute", 20.8, 4.7),
    ("rope", 19.8, 4.1),
    ("cope", 20.8, 3.9),
    ("cope_rope", 20.8, 4.0),
)
# Figure 3, Wikitext-103, trained on T = 1024 tokens: validation PPL at evaluation length T′.
# Read off the plot: approximate (the second length too, "~1536" in METHODS).
FIGURE3_TRAIN = 1024
FIGURE3_LENGTHS = ((1024, False), (1536, True), (2048, False), (2560, False))  # (T′, T′ itself approximate)
FIGURE3 = (
    ("relative", (22.9, 22.6, 23.2, 24.15)),
    ("relative_capped", (22.9, 22.3, 22.1, 21.95)),
    ("cope", (22.55, 21.95, 21.7, 21.55)),
)


@dataclass(frozen=True)
class PaperResults:
    wikitext: list[dict[str, object]]  # Table 4 rows, column names in the learner's language
    code: list[dict[str, object]]
    figure3: list[dict[str, object]]  # approximate values as text ("≈22.9")
    lm_line: str  # what Table 4 shows, filled from the numbers above
    length_line: str  # what Figure 3 shows, filled from the numbers above
    facts: dict[str, object]  # every number the two lines state


def _name_of(method: str, lang: str) -> str:
    return t(f"cope.results.method.{method}", lang)


def _approx(value: float) -> str:
    return f"≈{value:g}"


# Cache bounds (pages/contextual/cope.py): An entry holds a few n × n float64 arrays (n ≤ 256, about 0.5 MB
# each); model_view holds 3 × 4 heads of them (~6 MB), hence its smaller bound.
@bounded(4)
def paper_results(lang: str) -> PaperResults:
    def col(key: str, **values: object) -> str:
        return t(f"cope.results.col.{key}", lang, **values)

    wikitext: list[dict[str, object]] = [
        {col("method"): _name_of(m, lang), col("params"): p, col("val_ppl"): v, col("test_ppl"): te}
        for m, p, v, te in WIKITEXT
    ]
    code: list[dict[str, object]] = [
        {col("method"): _name_of(m, lang), col("params"): p, col("test_ppl"): te} for m, p, te in CODE
    ]
    figure3: list[dict[str, object]] = []
    for m, values in FIGURE3:
        row: dict[str, object] = {col("method"): _name_of(m, lang)}
        for (length, approx_length), v in zip(FIGURE3_LENGTHS, values, strict=True):
            row[col("at_approx" if approx_length else "at", length=length)] = _approx(v)
        figure3.append(row)

    test = {m: te for m, _, _, te in WIKITEXT}
    code_ppl = {m: te for m, _, te in CODE}
    best_wikitext = min(WIKITEXT, key=lambda r: r[3])[0]
    best_code = min(CODE, key=lambda r: r[2])[0]
    last = {m: values[-1] for m, values in FIGURE3}
    first = {m: values[0] for m, values in FIGURE3}
    facts: dict[str, object] = {
        "cope_ppl": test["cope"],
        "relative": test["relative"],
        "absolute": test["absolute"],
        "gain": test["relative"] - test["cope"],
        "pct": 100 * (test["relative"] - test["cope"]) / test["relative"],
        "best": _name_of(best_wikitext, lang),
        "best_ppl": test[best_wikitext],
        "cope_code": code_ppl["cope"],
        "rope_code": code_ppl["rope"],  # the paper's RoPE row
        "best_code": _name_of(best_code, lang),
        "train": FIGURE3_TRAIN,
        "longest": FIGURE3_LENGTHS[-1][0],
        "ratio": FIGURE3_LENGTHS[-1][0] / FIGURE3_TRAIN,
        "rel_first": first["relative"],
        "rel_last": last["relative"],
        "capped_last": last["relative_capped"],
        "cope_last": last["cope"],
    }
    return PaperResults(
        wikitext,
        code,
        figure3,
        t("cope.results.lm_line", lang, **facts),
        t("cope.results.length_line", lang, **facts),
        facts,
    )
