"""Derivations that prove themselves.

Every relative-position identity the app shows is built here as a list of sympy steps, and
`verify` proves each step from the one before it with a computer algebra system. The page that
displays an identity renders these same objects (`to_latex`), so a formula on screen cannot
disagree with the proof the tests run.

Conventions (../shared/METHODS.md): positions are 0-based; i is the query and j the key; in RoPE
m is the query position and n the key position. Each method keeps its paper's relative sign, so
RoPE's matrix form ends in n − m (key − query) while its complex form ends in m − n; both are the
same number because cos is even and the sin term flips sign with it.

The package
-----------
- types.py      `Step`, `Parameter`, `Derivation`, `StepCheck`, `VerifyReport`, and the step
                constructors `start`, `step`, `substitute`: frozen data.
- atoms.py      the matrix atoms `Named`, `Rot`, `RopeMatrix` (print as a symbol, prove as explicit
                entries), the LaTeX printer: `to_latex`, `claim_latex`, `HIGHLIGHT_COLOR`.
- prover.py     `verify(derivation) -> VerifyReport` (checks every consecutive pair of steps),
                `apply_substitution`, `free_symbols`, `step_values`, `numeric_check` (the learner's
                numbers at every step / at both ends), `message_text(check, lang)`.
- common.py     what the identities share: catalogue words, symbols (m, n, i, j, c, θ, ω), named
                vectors and matrices with their parameters, position defaults.
- one file per paper, each with its builders: sinusoidal.py, rope.py (also the matrix atoms
                `MatExp`, `DirectSum`, `DerivativeAt` its design derivations use), transformer_xl.py
                (absolute-pe-attention), deberta.py, alibi.py, t5.py, cope.py.
- registry.py   `ALL_DERIVATIONS` (the order of the chapter), `get(id, lang)`,
                `all_derivations(lang)`, `registered(derivation)`.
- view.py       the pure core of the page (no Streamlit): badge status, lines, claim display,
                number inputs' bounds, comparisons, the catalogue table, and each identity's
                chapter title (from the chapters' declarations). ui/derivation.py only draws what it returns.

`from explain import derivations as D` gives the public names of all but view.py (D.verify, D.get,
D.Derivation, D.to_latex, …); view.py is imported as `explain.derivations.view`.

Adding an identity
------------------
1. In the paper's file (a new `<paper>.py` for a new paper, like encoders/), write one builder
   `def <name>(lang: str = i18n.DEFAULT) -> Derivation` from `start`, `step` and `substitute`, its
   symbols and parameters from common.py, its docstring citing the paper's section and equation.
2. Add its words to explain/text/en/strings/derivations.toml and explain/text/ko/strings/
   derivations.toml (a table named by its id: title, intro, claim, source, step0…, note1…).
3. Add one line to `_build_all` in registry.py, and its id to the `derivations` of the chapter that
   shows it (that chapter's CHAPTER declaration). tests/test_derivations.py then proves it, checks its
   LaTeX and its numbers.

Words: every title, intro, claim, rule, note and parameter label comes from the catalogue
(explain/text/<lang>/strings/derivations.toml). A builder takes `lang` and returns the same sympy
objects in any language, so `get(id, "ko")` differs from `get(id)` only in its words; proofs run on
the English registry and their reports are language-free apart from the English `message`, which
`message_text` renders in any language from the check's `reason`.

Pure sympy: no streamlit, no torch.
"""

from __future__ import annotations

from explain.derivations.alibi import alibi_shift_invariance
from explain.derivations.atoms import HIGHLIGHT_COLOR, Named, RopeMatrix, Rot, claim_latex, to_latex
from explain.derivations.common import SHIFT_PARAMETERS, is_frequency
from explain.derivations.cope import cope_all_gates_open
from explain.derivations.deberta import deberta_three_terms
from explain.derivations.prover import (
    Value,
    apply_substitution,
    free_symbols,
    message_text,
    numeric_check,
    step_values,
    verify,
)
from explain.derivations.registry import ALL_DERIVATIONS, all_derivations, get, proven, registered
from explain.derivations.rope import (
    DerivativeAt,
    DirectSum,
    MatExp,
    rope_absorb_basis,
    rope_block_diagonal,
    rope_block_exponential,
    rope_complex_2d,
    rope_from_the_goal,
    rope_matrix_2d,
    rope_relative_block,
    rope_skew_exponential_2d,
    rope_skew_generator,
)
from explain.derivations.sinusoidal import sinusoidal_dot_product, sinusoidal_shift
from explain.derivations.t5 import t5_shift_invariance
from explain.derivations.transformer_xl import absolute_pe_attention
from explain.derivations.types import (
    STEP_KINDS,
    Derivation,
    Parameter,
    Step,
    StepCheck,
    VerifyReport,
    start,
    step,
    substitute,
)

__all__ = [
    "ALL_DERIVATIONS",
    "HIGHLIGHT_COLOR",
    "SHIFT_PARAMETERS",
    "STEP_KINDS",
    "Derivation",
    "DerivativeAt",
    "DirectSum",
    "MatExp",
    "Named",
    "Parameter",
    "RopeMatrix",
    "Rot",
    "Step",
    "StepCheck",
    "Value",
    "VerifyReport",
    "absolute_pe_attention",
    "alibi_shift_invariance",
    "all_derivations",
    "apply_substitution",
    "claim_latex",
    "cope_all_gates_open",
    "deberta_three_terms",
    "free_symbols",
    "get",
    "is_frequency",
    "message_text",
    "numeric_check",
    "proven",
    "registered",
    "rope_absorb_basis",
    "rope_block_diagonal",
    "rope_block_exponential",
    "rope_complex_2d",
    "rope_from_the_goal",
    "rope_matrix_2d",
    "rope_relative_block",
    "rope_skew_exponential_2d",
    "rope_skew_generator",
    "sinusoidal_dot_product",
    "sinusoidal_shift",
    "start",
    "step",
    "step_values",
    "substitute",
    "t5_shift_invariance",
    "to_latex",
    "verify",
]
