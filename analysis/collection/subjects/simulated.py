"""The ``simulated`` subject: an offline reader of the prompt text whose choice probabilities are known exactly."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from dataclasses import dataclass
from typing import Iterable

import pandas as pd

from ... import config
from ..answers import Reply
from ..errors import CollectionError
from ..jobs import Job, sha256_text
from .base import Subject


@dataclass(frozen=True)
class SimulatedParams:
    """Reliance of the simulated subject (scores are on the logit scale).

    Each patient's score is ``task_weight * sum(task values) + proxy_weight * sum(numeric proxy
    values) + level_weight * sum(rank - 2.5 of 'level N' proxy labels)``; two-letter codes carry
    no rank. Patient 1 is chosen with probability ``expit((s1 - s2 + position_bias) / noise_scale)``,
    decided by a uniform draw keyed by ``(seed, prompt SHA-256)``, i.e. seeded logistic noise.
    ``invalid_rate`` makes a keyed share of answers invalid (no tool call).
    """

    task_weight: float = 1.0
    proxy_weight: float = 0.5
    level_weight: float = 0.0
    position_bias: float = 0.2
    noise_scale: float = 1.0
    invalid_rate: float = 0.0
    seed: int = 0


#: named presets; more (e.g. one that tracks the reference learner) can be added by the audit
SIMULATED_PRESETS = {
    "numeric-reader": SimulatedParams(proxy_weight=0.5, level_weight=0.0),
    "ignores-proxies": SimulatedParams(proxy_weight=0.0, level_weight=0.0),
    "over-reads-ordered": SimulatedParams(proxy_weight=0.0, level_weight=0.5),
    "reads-everything": SimulatedParams(proxy_weight=0.5, level_weight=0.5),
}

_LEVEL = re.compile(r"^level\s+(\d+)$")
_PROXY_NAMES = frozenset(n for names in config.PROXY_NAMES.values() for n in names)
_TASK_NAMES = frozenset(config.TASK_NAMES)


def read_patients(prompt: str) -> tuple[list[tuple[str, str]], list[tuple[str, str]]] | None:
    """The displayed ``(name, value)`` lines of Patient 1 and Patient 2, or None if absent."""
    head, sep, tail = prompt.rpartition("NEW PATIENTS:\n")
    if not sep:
        return None
    part1, sep2, part2 = tail.partition("\nPatient 2:\n")
    if not sep2 or not part1.startswith("Patient 1:\n"):
        return None

    def lines(block: str) -> list[tuple[str, str]]:
        out = []
        for line in block.splitlines():
            name, colon, value = line.strip().partition(": ")
            if colon:
                out.append((name, value.strip()))
        return out

    return lines(part1[len("Patient 1:\n"):]), lines(part2)


class SimulatedSubject(Subject):
    """Offline reader of the prompt text with known reliance (see :class:`SimulatedParams`).

    >>> s = SimulatedSubject(SimulatedParams(position_bias=0.0))
    >>> p = "NEW PATIENTS:\\nPatient 1:\\n  hemoglobin_index: 1.00\\nPatient 2:\\n  hemoglobin_index: 0.00\\n"
    >>> round(s.probability_first(p), 4)
    0.7311
    """

    provider = "simulated"

    def __init__(self, params: SimulatedParams = SimulatedParams(), name: str = "custom"):
        super().__init__(name)
        self.params = params

    @classmethod
    def preset(cls, name: str, seed: int = 0, **overrides) -> "SimulatedSubject":
        if name not in SIMULATED_PRESETS:
            raise CollectionError(f"unknown simulated model {name!r}; expected one of {sorted(SIMULATED_PRESETS)}")
        try:
            params = dataclasses.replace(SIMULATED_PRESETS[name], seed=seed, **overrides)
        except TypeError as exc:
            raise CollectionError(f"bad simulated settings {overrides}: {exc}") from None
        subject = cls(params, name)
        subject.overrides = overrides or None
        return subject

    def request_settings(self) -> dict:
        return {"params": dataclasses.asdict(self.params)}

    def tag(self, key: str) -> str:
        """``seed<N>`` for a non-zero seed, ``s<key>`` for overridden parameters (see :meth:`Subject.tag`)."""
        if self.overrides:
            return f"s{key[:8]}"
        return f"seed{self.params.seed}" if self.params.seed else ""

    def score(self, fields: list[tuple[str, str]]) -> float:
        """Score of one patient from its displayed ``(name, value)`` lines."""
        p = self.params
        s = 0.0
        for name, value in fields:
            if name in _TASK_NAMES:
                s += p.task_weight * float(value)
            elif name in _PROXY_NAMES:
                m = _LEVEL.match(value)
                if m:
                    s += p.level_weight * (int(m.group(1)) - 2.5)
                else:
                    try:
                        s += p.proxy_weight * float(value)
                    except ValueError:  # an arbitrary code: no rank to read
                        pass
        return s

    def probability_first(self, prompt: str) -> float:
        """Probability of answering Patient 1 (NaN if the prompt shows no two patients)."""
        pts = read_patients(prompt)
        if pts is None:
            return float("nan")
        z = (self.score(pts[0]) - self.score(pts[1]) + self.params.position_bias) / self.params.noise_scale
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0

    def _uniform(self, tag: str, prompt_sha: str) -> float:
        h = hashlib.sha256(f"{tag}:{self.params.seed}:{prompt_sha}".encode()).digest()
        return int.from_bytes(h[:8], "big") / 2.0**64

    def choose(self, prompt: str, prompt_sha: str | None = None, sample: int = 0) -> int | None:
        """The answer to a prompt: 1, 2, or None (invalid). Sample k of the prompt (``--samples R``) is its own
        draw (sample 0 is the draw of one answer per prompt)."""
        sha = prompt_sha or sha256_text(prompt)
        p1 = self.probability_first(prompt)
        if math.isnan(p1):
            return None
        suffix = f":{sample}" if sample else ""
        if self.params.invalid_rate > 0 and self._uniform("invalid" + suffix, sha) < self.params.invalid_rate:
            return None
        return 1 if self._uniform("choice" + suffix, sha) < p1 else 2

    def ask(self, job: Job) -> Reply:
        patient = self.choose(job.prompt, job.prompt_sha256, job.sample)
        return Reply(patient, self.model, raw="" if patient is None else json.dumps({"patient": patient}),
                     finish="simulated")

    # -- known answers --------------------------------------------------------------------------
    def probabilities(self, jobs: Iterable[Job]) -> pd.DataFrame:
        """Per job: ``arm, pair_id, i, j, order, p_first, p_pick_i`` (exact choice probabilities)."""
        rows = []
        for job in jobs:
            p1 = self.probability_first(job.prompt)
            rows.append({"arm": job.arm, "pair_id": job.pair_id, "i": job.i, "j": job.j, "order": job.order,
                         "p_first": p1, "p_pick_i": p1 if job.order == 0 else 1 - p1})
        return pd.DataFrame(rows)

    def expected_pse(self, jobs: Iterable[Job]) -> float:
        """Expected PSE (pp) over its own noise: ``100 * mean_pairs[mean_o P(i | cf_a1) - mean_o P(i | cf_a0)]``."""
        pr = self.probabilities(jobs)
        m = pr.pivot_table(index=["i", "j"], columns="arm", values="p_pick_i", aggfunc="mean")
        return float(100 * (m["cf_a1"] - m["cf_a0"]).mean())

    def expected_error(self, jobs: Iterable[Job], truth: pd.Series | None = None) -> float:
        """Expected factual ranking error (%) against ``truth`` (1 where the target is truly riskier)."""
        pr = self.probabilities(jobs)
        m = pr[pr["arm"] == "factual"].groupby(["i", "j"])["p_pick_i"].mean()
        t = pd.Series(1.0, index=m.index) if truth is None else truth.reindex(m.index).astype(float)
        return float(100 * (t * (1 - m) + (1 - t) * m).mean())

