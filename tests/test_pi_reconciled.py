"""Position Interpolation, said the same way in both chapters that show it (issue 43, item 6).

"Stretching RoPE" says that PI brings every slow pair back inside the angles seen in training, that
it squeezes neighbouring words closer in angle than any two words were in training, that its paper
therefore fine-tunes for up to 1000 steps, and that read zero-shot it does worse than plain RoPE in
"Trained on real text"; that chapter says the same from its side. Before, "Stretching RoPE" said PI
"brings all of them back exactly" while the real-text chapter drew RoPE + PI as its worst line.
Each of those facts is checked here on the numbers the pages draw.
"""

from __future__ import annotations

import numpy as np
import pytest

from explain.chapters import real_text_study as study
from explain.chapters import rope_scaling as rs
from explain.i18n import LANGS
from explain.prose import section


@pytest.mark.parametrize(("d", "scale", "length"), [(128, 4.0, 4096), (64, 2.0, 512), (32, 8.0, 64)])
def test_pi_puts_every_angle_in_range_and_squeezes_neighbours(d, scale, length):
    fr = rs.frequencies(d, 10_000.0, scale, length)
    pi, rope = "pi", rs.REFERENCE
    assert fr.out_of_distribution[rope].any() and not fr.out_of_distribution[pi].any()
    # A neighbour (distance 1) turns by θ_f/s: less than any distance ≥ 1 turned in training (θ_f).
    assert np.all(fr.theta[pi] < fr.theta[rope]) and np.allclose(fr.ratio[pi], 1 / scale)


def test_pi_read_zero_shot_does_worse_than_plain_rope_on_real_text():
    """The Stretching RoPE chapter says it; the study's seeds must show it: past the training length,
    PI zero-shot minus plain RoPE, paired seed by seed, has a 95% interval above 0."""
    st = study.load()
    assert st is not None and "rope-pi" in st.stretches and len(st.seeds("rope")) >= 2
    for length in st.lengths[1:]:
        d = study.paired(st, "rope-pi", "rope", study.at(length))
        assert d is not None and d.sign > 0, (length, d)


@pytest.mark.parametrize("lang", LANGS)
def test_both_chapters_say_the_fine_tune(lang):
    angles, real = section("rope-scaling", "angles", lang), section("real-text", "lengths", lang)
    for text in (angles, real):
        assert "1000" in text and "2023" in text, text
    assert "exactly" not in angles and "정확히 되돌려" not in angles
