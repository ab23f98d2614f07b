"""The registered identities, in the order the Derivations chapter lists them.

`_build_all` is the only list: adding an identity is one builder in its paper's file and one line
here (see the package docstring).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from functools import lru_cache
from types import MappingProxyType

from explain import i18n
from explain.derivations.alibi import alibi_shift_invariance
from explain.derivations.cope import cope_all_gates_open
from explain.derivations.deberta import deberta_three_terms
from explain.derivations.prover import verify
from explain.derivations.rope import (
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
from explain.derivations.types import Derivation, VerifyReport


def _build_all(lang: str) -> tuple[Derivation, ...]:
    return (
        sinusoidal_dot_product(lang=lang),
        sinusoidal_shift(lang=lang),
        rope_complex_2d(lang),
        rope_matrix_2d(lang),
        rope_block_diagonal(4, lang),
        rope_block_diagonal(6, lang),
        rope_relative_block(lang),
        rope_from_the_goal(lang),
        rope_skew_generator(lang),
        rope_skew_exponential_2d(lang),
        rope_block_exponential(lang),
        rope_absorb_basis(lang),
        absolute_pe_attention(lang),
        deberta_three_terms(lang),
        alibi_shift_invariance(lang),
        t5_shift_invariance(lang),
        cope_all_gates_open(lang),
    )


# Builders are cheap (expression construction only; no simplification, ~20 ms for all), so the
# registry is built once at import as an immutable tuple: in English, the language of the proofs and
# tests. Another language's registry holds the same sympy objects with other words; it is built the
# first time it is asked for and kept (`_built`).
ALL_DERIVATIONS: tuple[Derivation, ...] = _build_all(i18n.DEFAULT)

_BY_ID = {d.id: d for d in ALL_DERIVATIONS}
assert len(_BY_ID) == len(ALL_DERIVATIONS), "derivation ids must be unique"


@lru_cache(maxsize=len(i18n.LANGS))  # one registry per language (callers pass valid()); a race builds one twice
def _built(lang: str) -> Mapping[str, Derivation]:
    if lang == i18n.DEFAULT:
        return _BY_ID
    return MappingProxyType({d.id: d for d in _build_all(lang)})


def _registry(lang: str) -> Mapping[str, Derivation]:
    return _built(i18n.valid(lang))


def all_derivations(lang: str = i18n.DEFAULT) -> tuple[Derivation, ...]:
    """Every registered derivation, in the order of ALL_DERIVATIONS, with its words in `lang`."""
    return tuple(_registry(lang).values())


def get(derivation_id: str, lang: str = i18n.DEFAULT) -> Derivation:
    """The registered derivation with this id, its words in `lang` (KeyError lists the known ids)."""
    try:
        return _registry(lang)[derivation_id]
    except KeyError:
        raise KeyError(f"unknown derivation {derivation_id!r}; known: {sorted(_BY_ID)}") from None


def registered(derivation: Derivation) -> bool:
    """True if `derivation` is a registered one (in any language), not a test's modified copy."""
    return any(_built(lang).get(derivation.id) is derivation for lang in i18n.LANGS)


# One proof per registered id (get raises for any other, and a raise is not cached); language-free.
@lru_cache(maxsize=len(ALL_DERIVATIONS))
def proven(derivation_id: str) -> tuple[VerifyReport, float]:
    """verify() of the registered derivation with this id, once per process, and how long that proof
    took (s). The proof is language-free: every language's copy has the same sympy objects. Kept
    here rather than in a Streamlit cache so that the server can prove every identity as it starts
    (serve_app.prove_all), before any learner asks: a fresh server's first visit to the Derivations
    chapter proved all 17 while the learner waited (~3–4 s of its 4.7 s on this 2-core machine, far
    longer under a class's load, stalling every session of that worker meanwhile). A race proves one
    twice, which is harmless."""
    t0 = time.perf_counter()
    report = verify(get(derivation_id))
    return report, time.perf_counter() - t0
