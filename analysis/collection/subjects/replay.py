"""The ``replay`` subject: serves the released answers of a (model, cell)."""
from __future__ import annotations

import math

from ... import config, records
from ...cells import Cell, expect_cell
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
    """Serves the released answer of each job, looked up by ``(arm, i, j, order)`` (and the job's sample
    index where the records hold several samples per prompt, ``sample_id``)."""

    provider = "replay"

    def __init__(self, model: str, cell: Cell, run: str | None = None, released=None):
        if released is None:
            self.release_model = replay_model(model)
            super().__init__(self.release_model if run is None else f"{self.release_model}_run_{run}")
        else:
            self.release_model = model
            super().__init__(model)
        self.cell = expect_cell(cell)
        self.run = run
        try:
            df = records.load_records(self.release_model, self.cell, run) if released is None else released
        except records.NotReleased as exc:
            raise CollectionError(str(exc)) from None
        self.released = df
        self.sampled = "sample_id" in df
        cols = ["arm", "i", "j", "order"] + (["sample_id"] if self.sampled else [])
        self._answers = {(str(r[0]), *(int(x) for x in r[1:-1])): r[-1]
                         for r in df[cols + ["patient"]].itertuples(index=False, name=None)}

    @classmethod
    def from_records(cls, model: str, cell: Cell, released) -> "ReplaySubject":
        """Serve a records frame (released schema, optionally ``sample_id``: sample k answers the job's
        sample k), e.g. the DeepSeek-V4.1-Flash temperature-1 resampling of Supplementary Note 12."""
        return cls(model, cell, released=released)

    def request_settings(self) -> dict:
        return {"source": "released records", "run": self.run} | ({"samples": "sample_id"} if self.sampled else {})

    def ask(self, job: Job) -> Reply:
        key = (job.arm, job.i, job.j, job.order) + ((job.sample,) if self.sampled else ())
        if key not in self._answers:
            return Reply(None, self.model, raw="job not in the released records", finish="absent")
        p = self._answers[key]
        patient = None if p is None or (isinstance(p, float) and math.isnan(p)) else int(p)
        return Reply(patient, self.model, raw="" if patient is None else str(patient), finish="released")
