"""The documentation's generated parts stay true to the library (issue 7,
item 3). The pages themselves are built with warnings as errors, and their
examples run as doctests, by .ci/run (sphinx -b html / -b doctest)."""
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent
FIGURE_SCRIPT = ROOT / "docs" / "figures" / "block_scaled.py"


def _figure_module():
    spec = importlib.util.spec_from_file_location("_block_scaled_figure", FIGURE_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_block_scaled_figure_is_drawn_from_the_registered_formats():
    """docs/figures/block-scaled.svg is exactly what the script draws from
    DType.MXFP4 and DType.NVFP4 (regenerate it with the script otherwise)."""
    figure = _figure_module()
    committed = figure.OUT.read_text(encoding="utf-8")
    assert committed == figure.draw([figure.DType.MXFP4, figure.DType.NVFP4])


def test_block_scaled_figure_states_the_registered_costs():
    """The cost line of each panel is the format's own bits_per_element."""
    figure = _figure_module()
    from stride_weave.dtypes import DType

    assert figure.cost_formula(DType.MXFP4) == ("4 + 8/32", "4.25")
    assert figure.cost_formula(DType.NVFP4) == ("4 + 8/16 + 32/n", "4.5 + 32/n")
    svg = figure.OUT.read_text(encoding="utf-8")
    assert "bits per element: 4 + 8/32 = 4.25" in svg
    assert "bits per element: 4 + 8/16 + 32/n = 4.5 + 32/n" in svg
