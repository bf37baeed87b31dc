"""The displays' encoding (analysis.encoding; spec C11): codes, quartile edges, bins."""
from __future__ import annotations

import numpy as np

from analysis import encoding, population, prompts
from analysis.cells import parse_cell

CELL = parse_cell("k12_LH_neutral_learned_zero")  # the tests are a boundary: ids parsed here


def test_c11_codes_edges_and_example_bins():
    assert encoding.code_table(4) == (("BT", "TO", "QX", "VR"), ("WE", "LC", "RZ", "NI"),
                                            ("GU", "MW", "SY", "PV"), ("DK", "HJ", "FN", "KA"))
    np.testing.assert_allclose(encoding.quartile_edges(CELL), [
        [-0.698814, 0.007519, 0.676512], [-0.693583, -0.003149, 0.712804],
        [-0.685331, -0.004698, 0.678362], [-0.700235, 0.001755, 0.702151]], atol=5e-7)
    ex = population.examples(CELL)
    assert encoding.bins(ex.X[0, 8:], encoding.quartile_edges(CELL)).tolist() == [[3, 3, 3, 3]]
    assert prompts.value_strings(ex.X[0], CELL, "arbitrary")[0][8:] == ["VR", "NI", "PV", "KA"]
