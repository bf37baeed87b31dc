"""Cell ids (analysis.cells): malformed ids are refused with the grammar in the message."""
from __future__ import annotations

import pytest

from analysis import cells


@pytest.mark.parametrize("bad", ["k12_LH_neutral", "k10_LH_neutral_learned_zero", "k12_XX_neutral_learned_zero",
                                 "k12_LH_neutral_absent_info_b030", "k12_LH_neutral_learned_zero_s"])
def test_malformed_cell_ids(bad):
    with pytest.raises(cells.CellError, match=r"expected k\{6,12,18\}"):
        cells.parse_cell(bad)
