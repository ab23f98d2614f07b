"""The Sinusoidal APE page under AppTest: its widgets move the pictures."""

from tests.helpers import errors, fig_array, figure, open_page

PAGE = "pages/absolute/sinusoidal.py"


def test_sliders_reshape_the_pe_matrix_and_checks_stay_exact():
    at = open_page(PAGE)
    assert not errors(at)
    z = fig_array(figure(at, "PE matrix")["data"][0]["z"])
    assert z.shape == (64, 64)
    at.slider(key="n").set_value(512).run()
    at.slider(key="d").set_value(512).run()
    assert not errors(at)
    z = fig_array(figure(at, "PE matrix")["data"][0]["z"])
    assert z.shape == (512, 512)
    at.slider(key="n").set_value(2).run()
    at.slider(key="d").set_value(2).run()
    assert not errors(at)
    assert fig_array(figure(at, "PE matrix")["data"][0]["z"]).shape == (2, 2)
    at.select_slider(key="base").set_value(10).run()
    assert not errors(at)
    texts = " ".join(m.value for m in at.markdown)
    assert "Largest difference over all 2 channels: **" in texts


def test_shift_check_with_extreme_inputs():
    at = open_page(PAGE)
    at.number_input(key="p").set_value(100_000).run()
    at.number_input(key="delta").set_value(-100_000).run()
    assert not errors(at)
    line = next(m.value for m in at.markdown if m.value.startswith("Largest difference over all"))
    value = float(line.split("**")[1])
    assert value < 1e-9


def test_sentence_panel_follows_the_sentence():
    at = open_page(PAGE, sentence="a b c")
    z = fig_array(figure(at, "Attention with sinusoidal PE")["data"][0]["z"])
    assert z.shape == (3, 3)
    at.sidebar.text_area(key="sentence").input("one two three four five").run()
    assert not errors(at)
    assert fig_array(figure(at, "Attention with sinusoidal PE")["data"][0]["z"]).shape == (5, 5)
