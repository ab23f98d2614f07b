"""REGISTRY: the only list of positional-encoding methods in PE Atlas.

Adding a method is one file in encoders/ and one line here. Every page, the attention lab and the
toy trainer read this dict; nothing else enumerates methods.
"""

from __future__ import annotations

import torch

from .base import PositionalEncoding, derived_seed
from .learned import LearnedAbsolute
from .nope import NoPositionalEncoding
from .sinusoidal import Sinusoidal

REGISTRY: dict[str, type[PositionalEncoding]] = {
    cls.name: cls
    for cls in (
        NoPositionalEncoding,
        Sinusoidal,
        LearnedAbsolute,
    )
}


def build(name: str, d_model: int, n_heads: int, seed: int = 0, config=None) -> PositionalEncoding:
    """The encoder registered as `name`, its parameters drawn from `seed` (same seed, same table)."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise KeyError(f"no encoder named {name!r}; registered: {sorted(REGISTRY)}") from None
    return cls(d_model, n_heads, config=config, generator=torch.Generator().manual_seed(derived_seed(seed, name)))

