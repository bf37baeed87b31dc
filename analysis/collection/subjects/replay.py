"""The ``replay`` subject: serves the released answers of a (model, cell)."""
from __future__ import annotations

import math

from ... import config, records
from ...cells import Cell, parse_cell
from ..answers import Reply
from ..errors import CollectionError
from ..jobs import Job
from .base import Subject


def replay_model(model: str) -> str:
    """The release model name of a model or release folder name."""
    if model in config.MODELS:
        return model
    by_folder = {v[1]: k for k, v in config.MODELS.items()}
    if model in by_folder:
        return by_folder[model]
    raise CollectionError(f"unknown replay model {model!r}; expected one of {sorted(config.MODELS)} "
                          f"(or a release folder: {sorted(by_folder)})")


class ReplaySubject(Subject):
    """Serves the released answer of each job, looked up by ``(arm, i, j, order)``."""

    provider = "replay"

    def __init__(self, model: str, cell: "str | Cell", run: str | None = None):
        self.release_model = replay_model(model)
        super().__init__(self.release_model if run is None else f"{self.release_model}_run_{run}")
        self.cell = parse_cell(cell)
        self.run = run
        try:
            df = records.load_records(self.release_model, self.cell, run)
        except records.NotReleased as exc:
            raise CollectionError(str(exc)) from None
        self.released = df
        self._answers = {(str(r.arm), int(r.i), int(r.j), int(r.order)): r.patient
                         for r in df[["arm", "i", "j", "order", "patient"]].itertuples(index=False)}

    def request_settings(self) -> dict:
        return {"source": "released records", "run": self.run}

    def ask(self, job: Job) -> Reply:
        key = (job.arm, job.i, job.j, job.order)
        if key not in self._answers:
            return Reply(None, self.model, raw="job not in the released records", finish="absent")
        p = self._answers[key]
        patient = None if p is None or (isinstance(p, float) and math.isnan(p)) else int(p)
        return Reply(patient, self.model, raw="" if patient is None else str(patient), finish="released")
