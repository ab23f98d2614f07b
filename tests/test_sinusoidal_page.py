"""The Sinusoidal APE page under AppTest: its widgets move the pictures (charts found by key)."""

import numpy as np

from explain.chapters import sinusoidal as ch
from tests.helpers import chart, errors, fig_array, open_page

PAGE = "pages/absolute/sinusoidal.py"


def test_sliders_reshape_the_pe_matrix_and_checks_stay_exact():
    at = open_page(PAGE)
    assert not errors(at)
    z = fig_array(chart(at, "pe_matrix")["data"][0]["z"])
    assert z.shape == (64, 64)
    at.slider(key="n").set_value(512).run()
    at.slider(key="d").set_value(512).run()
    assert not errors(at)
    fig = chart(at, "pe_matrix")
    z = fig_array(fig["data"][0]["z"])
    # 512 × 512 is drawn in 4 × 4 block means (what the screen shows), at the blocks' centres
    assert z.shape == (128, 128) and fig["data"][0]["y"][:2] == [1.5, 5.5]
    assert "mean of 4 × 4 cells" in fig["data"][0]["hovertemplate"]
    at.slider(key="n").set_value(2).run()
    at.slider(key="d").set_value(2).run()
    assert not errors(at)
    assert fig_array(chart(at, "pe_matrix")["data"][0]["z"]).shape == (2, 2)
    assert not [r for r in at.radio if r.key == "sin_q__choice"]  # one pair: no question to ask
    at.select_slider(key="base").set_value(10).run()
    assert not errors(at)
    texts = " ".join(m.value for m in at.markdown)
    assert "Largest difference over all 2 channels: **" in texts
    assert "here, and only here, tensor2tensor's table is the paper's" in texts


def test_shift_check_with_extreme_inputs():
    at = open_page(PAGE)
    at.number_input(key="p").set_value(100_000).run()
    at.number_input(key="delta").set_value(-100_000).run()
    assert not errors(at)
    line = next(m.value for m in at.markdown if m.value.startswith("Largest difference over all"))
    value = float(line.split("**")[1])
    assert value < 1e-9


def test_t2t_frequencies_follow_the_controls():
    at = open_page(PAGE)
    fig = chart(at, "t2t_frequencies")
    c = ch.t2t_comparison(64, 64, 10000.0)
    np.testing.assert_allclose(fig_array(fig["data"][0]["y"]), c.omega_paper)
    np.testing.assert_allclose(fig_array(fig["data"][1]["y"]), c.omega_t2t)
    line = next(m.value for m in at.markdown if m.value.startswith("Pair 0 agrees"))
    assert f"**{c.max_ratio:.3f}×**" in line and f"**{c.table_diff:.3f}**" in line
    at.slider(key="d").set_value(8).run()
    assert fig_array(chart(at, "t2t_frequencies")["data"][1]["y"]).shape == (4,)


def test_sentence_panel_follows_the_sentence():
    at = open_page(PAGE, sentence="a b c")
    z = fig_array(chart(at, "att_sin")["data"][0]["z"])
    assert z.shape == (3, 3)
    at.sidebar.text_area(key="sentence").input("one two three four five").run()
    assert not errors(at)
    assert fig_array(chart(at, "att_sin")["data"][0]["z"]).shape == (5, 5)
