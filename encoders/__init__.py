"""REGISTRY: the only list of positional-encoding methods in PE Atlas.

Adding a method is one file in encoders/ and one line here. Every page, the attention lab and the
toy trainer read this dict; nothing else enumerates methods.
"""

from __future__ import annotations

import torch

from .alibi import Alibi
from .base import PositionalEncoding, derived_seed
from .cope import CoPE
from .deberta import DeBERTa
from .fire import Fire
from .kerple import Kerple
from .learned import LearnedAbsolute
from .nope import NoPositionalEncoding
from .rope import RoPE
from .rope_scaling import DynamicNTKRoPE, NTKAwareRoPE, PositionInterpolationRoPE, XPos, YaRNRoPE
from .shaw import ShawRelative
from .sinusoidal import Sinusoidal
from .t5 import T5Bias
from .transformer_xl import TransformerXL

REGISTRY: dict[str, type[PositionalEncoding]] = {
    cls.name: cls
    for cls in (
        NoPositionalEncoding,
        Sinusoidal,
        LearnedAbsolute,
        ShawRelative,
        T5Bias,
        TransformerXL,
        DeBERTa,
        Alibi,
        Kerple,
        Fire,
        RoPE,
        PositionInterpolationRoPE,
        NTKAwareRoPE,
        DynamicNTKRoPE,
        YaRNRoPE,
        XPos,
        CoPE,
    )
}


def build(name: str, d_model: int, n_heads: int, seed: int = 0, config: object = None) -> PositionalEncoding:
    """The encoder registered as `name`, its parameters drawn from `seed` (same seed, same table)."""
    try:
        cls = REGISTRY[name]
    except KeyError:
        raise KeyError(f"no encoder named {name!r}; registered: {sorted(REGISTRY)}") from None
    return cls(d_model, n_heads, config=config, generator=torch.Generator().manual_seed(derived_seed(seed, name)))
