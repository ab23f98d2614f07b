"""The real trained table of the Learned APE chapter, section by section, as the page draws it.

Each section takes primitives and reads all-MiniLM-L6-v2's position table itself (one 512 × 384
matrix out of the model's safetensors file, about a millisecond), so the page caches it on
primitives; the analyses are in learned.py. Importing this module reads nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from explain.bounds import bounded
from models.minilm import minilm_position_table

from .learned import (
    MAX_MAP_SIDE,
    MAX_TABLE_ROWS,
    PCA,
    Blocks,
    RealTable,
    Rotation,
    RowStats,
    fastest_pair,
    position_pca,
    real_table,
    row_statistics,
    screen_blocks,
)


def minilm_table() -> np.ndarray:
    """all-MiniLM-L6-v2's position table (512, 384) float32, read-only (a page's cached result may
    share it; nothing may write to it)."""
    table = np.asarray(minilm_position_table())
    table.flags.writeable = False
    return table


# Cache bounds (pages/absolute/learned.py): A toy table is at most 256 × 64 and a sentence of 256 tokens; a
# real section holds two n × n float32 maps (2 MB at n = 512) and the range slider moves in steps of 16 (32
# values at most), hence 32 entries.
@bounded(1)
def real_available() -> str | None:
    """None when the real table can be read; otherwise the error's name (the model package is an
    optional dependency)."""
    try:
        minilm_position_table()
    except (ImportError, OSError) as e:
        return type(e).__name__
    return None


@dataclass
class RealSection:
    view: RealTable
    table: Blocks  # the table as drawn: at most MAX_TABLE_ROWS rows
    cos_learned: Blocks  # the similarity maps as drawn: at most MAX_MAP_SIDE cells a side
    cos_sinusoidal: Blocks

    @property
    def learned_plus(self) -> np.ndarray:
        """(n,) mean + 1 std of the learned similarity at each distance."""
        b = self.view.by_distance_learned
        return np.asarray(b.mean + b.std)

    @property
    def learned_minus(self) -> np.ndarray:
        b = self.view.by_distance_learned
        return np.asarray(b.mean - b.std)


@bounded(32)
def real_section(n_positions: int) -> RealSection:
    """Rows 0 … n_positions−1 of the real table beside the sinusoidal one, thinned to what a screen
    shows (the page's payload stays under ~1 MB at any n)."""
    v = real_table(minilm_table(), n_positions)
    return RealSection(
        v,
        screen_blocks(v.table, MAX_TABLE_ROWS),
        screen_blocks(v.cos_learned, MAX_MAP_SIDE, MAX_MAP_SIDE),
        screen_blocks(v.cos_sinusoidal, MAX_MAP_SIDE, MAX_MAP_SIDE),
    )


@dataclass
class PCASection:
    pca: PCA
    rotation: Rotation
    last: int  # the last row analysed

    @property
    def drawn(self) -> int:
        """Components drawn against position: the first four (fewer if there are fewer)."""
        return min(4, int(self.pca.scores.shape[1]))

    def scores(self, component: int) -> np.ndarray:
        """(m,) each analysed row's coordinate on one component (0-based)."""
        return self.pca.scores[:, component]

    def drifts(self, component: int) -> bool:
        """At most one turn over the range: a slow drift rather than a period."""
        return bool(self.pca.periods[component] >= self.pca.positions.size * 0.99)

    @property
    def names(self) -> list[str]:
        """ "PC1", "PC2", …: the explained-variance bars."""
        return [f"PC{c + 1}" for c in range(self.pca.explained.size)]


def pca_section(n_positions: int, skip_first: bool) -> PCASection:
    pca = position_pca(minilm_table(), n_positions, skip_first)
    return PCASection(pca, fastest_pair(pca), n_positions - 1)


@bounded(1)
def norms_section() -> RowStats:
    """Row lengths and neighbour cosines over all 512 rows."""
    return row_statistics(minilm_table())
