"""Jobs: one call of the battery (cell, display, arm, pair, presentation order, sample) with its prompt."""
from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
from dataclasses import dataclass

import pandas as pd

from .. import prompts
from ..cells import Cell, expect_cell


@dataclass(frozen=True)
class Job:
    """One call of the battery: a cell, display, arm, pair and presentation order, with its prompt."""

    cell: str
    display: str
    arm: str
    pair_id: int
    i: int
    j: int
    order: int
    prompt: str
    prompt_sha256: str
    #: index of the independent answer to the same prompt (``--samples R``: 0 .. R-1)
    sample: int = 0

    @property
    def key(self) -> tuple[str, int, int]:
        return (self.arm, self.pair_id, self.order)

    @property
    def ledger_key(self) -> tuple:
        """The job's identity in the ledger: cell, display, arm, pair, order, prompt SHA and sample."""
        return (self.cell, self.display, self.arm, self.pair_id, self.order, self.prompt_sha256, self.sample)

    @property
    def first(self) -> int:
        """Population index shown as Patient 1."""
        return self.i if self.order == 0 else self.j

    @property
    def tag(self) -> str:
        base = f"{self.cell}/{self.display}/{self.arm}/{self.pair_id}/{self.order}"
        return f"{base}/s{self.sample}" if self.sample else base


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def now_utc() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def jobs_from_table(cell: Cell, display: str, table: pd.DataFrame) -> list[Job]:
    """Jobs from a job table (``arm, pair_id, i, j, order, prompt[, prompt_sha256]``)."""
    c = expect_cell(cell)
    shas = table["prompt_sha256"] if "prompt_sha256" in table else table["prompt"].map(sha256_text)
    return [Job(c.id, display, str(r.arm), int(r.pair_id), int(r.i), int(r.j), int(r.order), str(r.prompt), str(s))
            for r, s in zip(table.itertuples(index=False), shas)]


def job_list(cell: Cell, display: str = "numeric") -> list[Job]:
    """Every job of a cell in queue order (``analysis.prompts.job_table``)."""
    c = expect_cell(cell)
    return jobs_from_table(c, display, prompts.job_table(c, display=display))


def with_samples(jobs: list[Job], samples: int) -> list[Job]:
    """Each job ``samples`` times (sample index 0 .. R-1), sample-major: every job's first answer comes first.

    ``samples`` 1 returns the jobs as given; otherwise jobs that differ only in their sample index count once
    (so expanding an expanded list is harmless)."""
    if samples < 1:
        raise ValueError(f"samples must be at least 1, not {samples}")
    if samples == 1:
        return list(jobs)
    base = list(dict.fromkeys(dataclasses.replace(jb, sample=0) for jb in jobs))
    return [dataclasses.replace(jb, sample=s) for s in range(samples) for jb in base]
