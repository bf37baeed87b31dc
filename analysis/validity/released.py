"""The cue panel on released records: Sonnet's numeric, ordered and arbitrary displays (beyond the paper).

The release holds one model's records under more than one cue: Sonnet 4.5 in the representation
control (``k12_LH_neutral_learned_zero``; numeric battery cell, ordered levels, arbitrary codes, and a
second numeric measurement collected with the category displays). :func:`released_panel` judges
each display against its reference (:mod:`analysis.validity.panel`), the convergence across them,
and the two numeric measurements as a replication (stable or collection-dependent; Supplementary
Note 9's caution). The other vocabularies, the narrative, the explicit label and the association
probe were never collected by the authors: they are :class:`analysis.records.NotReleased`.
"""
from __future__ import annotations

from .. import config, representation
from ..records import NotReleased
from . import panel as P
from . import replication as R

CELL = representation.CELL
#: released renderings -> cue ids of the panel
RELEASED_CUES = {"battery": "numeric", "ordered": "ordered", "arbitrary": "arbitrary"}
NOT_RELEASED = ("the other vocabularies, the narrative rendering, the explicit label and the association probe "
                "were not part of the authors' protocol: no released records exist for them")


def released_panel(model: str = "sonnet", draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Panel rows, convergence and the numeric replication of a model's released display records.

    Raises :class:`analysis.records.NotReleased` for a model whose display records are not released.
    """
    recs = {cue: representation.load_rendering(model, rendering) for rendering, cue in RELEASED_CUES.items()}
    pan = P.panel(CELL, recs, draws)
    reps = {"battery (numeric, August 2026)": [pan["rows"][0]]}
    try:
        second = representation.load_rendering(model, "numeric")
        reps["second measurement (numeric, October 2026)"] = [P.cue_row(CELL, "numeric", second, draws)]
    except (NotReleased, FileNotFoundError):
        pass
    return {**pan, "replication": R.replication_rows(reps), "not_released": NOT_RELEASED}
