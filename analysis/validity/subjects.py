"""Simulated subjects whose association and reliance are set independently (beyond the paper's protocol).

Each subject is the collection's :class:`analysis.collection.SimulatedSubject` (seeded logistic
choice keyed by the prompt's SHA-256) with two extensions: it reads every cue of
:mod:`analysis.cues` (any vocabulary, the narrative sentences, the explicit ``group`` field), and it
answers the association probe. Presets (issue 15, "known truth first"):

* ``associates-not-acts`` — reads the group from the proxies (probe) but gives them no weight in
  the triage decision;
* ``acts-not-associates`` — treats ordered labels as severity (the paper's display finding) but
  does not know the group (probe at chance, abstains often when allowed);
* ``cue-specific`` — relies on numeric proxies under one vocabulary only (the paper's own, in
  lines or narrative), not under the synonyms; associates moderately under every cue.

Probe model: group score ``g = association * (sum of numeric proxies + sum of level ranks - 2.5)
+ label_association * (+1 for group A, -1 for group B)``; Patient 1 is named group A with
probability ``expit((g1 - g2) / noise_scale)``; in the abstention variant the subject abstains with
probability ``abstain * exp(-|g1 - g2|)`` first. Probabilities are exact, so the known truth of
every quantity is computed, not simulated (:mod:`analysis.validity.truth`).
"""
from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass

from .. import collection as C
from .. import config, cues

_LEVEL = re.compile(r"^level\s+(\d+)$")
_TASK = frozenset(config.TASK_NAMES)


@dataclass(frozen=True)
class CueParams(C.SimulatedParams):
    """:class:`analysis.collection.SimulatedParams` plus cue-aware reliance and the probe's association.

    ``vocabulary_weights`` overrides ``proxy_weight`` for numeric proxies named in the listed
    vocabularies (``(("assay", 0.5),)``); ``label_weight`` is the decision weight of the explicit
    label (+0.5 group A, -0.5 group B).
    """

    vocabulary_weights: tuple[tuple[str, float], ...] = ()
    label_weight: float = 0.0
    association: float = 0.0
    label_association: float = 0.0
    abstain: float = 0.0


PRESETS = {
    "associates-not-acts": CueParams(proxy_weight=0.0, level_weight=0.0, association=0.5, label_association=1.0,
                                     abstain=0.6),
    "acts-not-associates": CueParams(proxy_weight=0.0, level_weight=0.5, association=0.0, abstain=0.6),
    "cue-specific": CueParams(proxy_weight=0.0, vocabulary_weights=((cues.PAPER_VOCABULARY, 0.5),),
                              association=0.5, label_association=1.0, abstain=0.3),
}
SUBJECTS = tuple(PRESETS)


def _sentence_fields(line: str) -> list[tuple[str, str]]:
    body = line.split(" has ", 1)[1].rstrip(".")
    out = []
    for item in body.split(", "):
        item = item[4:] if item.startswith("and ") else item
        if item.startswith("belongs to "):
            out.append((cues.GROUP_FIELD, item[len("belongs to "):]))
            continue
        item = item.split(" ", 1)[1] if item.startswith(("a ", "an ")) else item
        name, _, value = item.rpartition(" of ")
        out.append((name.replace(" ", "_"), value))
    return out


def read_cue_patients(prompt: str):
    """The ``(name, value)`` fields of Patient 1 and Patient 2 in either style, or None."""
    head, sep, tail = prompt.rpartition("NEW PATIENTS:\n")
    if not sep:
        return None
    if tail.startswith("Patient 1 has "):
        lines = tail.strip("\n").split("\n")
        if len(lines) != 2 or not lines[1].startswith("Patient 2 has "):
            return None
        return _sentence_fields(lines[0]), _sentence_fields(lines[1])
    return C.read_patients(prompt)


class CueSubject(C.SimulatedSubject):
    """A simulated subject that reads every cue and answers the association probe."""

    provider = "simulated"

    def __init__(self, params: CueParams = CueParams(), name: str = "custom"):
        super().__init__(params, name)
        self._vocab_w = dict(params.vocabulary_weights)

    @classmethod
    def preset(cls, name: str, seed: int = 0, **overrides) -> "CueSubject":
        if name not in PRESETS:
            raise C.CollectionError(f"unknown validity subject {name!r}; expected one of {sorted(PRESETS)}")
        subject = cls(dataclasses.replace(PRESETS[name], seed=seed, **overrides), name)
        subject.overrides = overrides or None
        return subject

    # --- triage decision -----------------------------------------------------------------
    def score(self, fields: list[tuple[str, str]]) -> float:
        """Decision score of one patient from its displayed fields (any cue)."""
        p, index = self.params, cues.name_index()
        s = 0.0
        for name, value in fields:
            if name in _TASK:
                s += p.task_weight * float(value)
            elif name == cues.GROUP_FIELD:
                s += p.label_weight * (0.5 if value == cues.GROUP_VALUES[1] else -0.5)
            elif name in index:
                m = _LEVEL.match(value)
                if m:
                    s += p.level_weight * (int(m.group(1)) - 2.5)
                    continue
                try:
                    v = float(value)
                except ValueError:  # an arbitrary code: no rank to read
                    continue
                s += self._vocab_w.get(index[name][1], p.proxy_weight) * v
        return s

    def probability_first(self, prompt: str) -> float:
        """Probability of answering Patient 1 to a triage prompt of any cue (NaN if no two patients)."""
        pts = read_cue_patients(prompt)
        if pts is None:
            return float("nan")
        z = (self.score(pts[0]) - self.score(pts[1]) + self.params.position_bias) / self.params.noise_scale
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0

    # --- association probe ---------------------------------------------------------------
    def group_score(self, fields: list[tuple[str, str]]) -> float:
        """How much a patient looks like group A to this subject."""
        p, index = self.params, cues.name_index()
        g = 0.0
        for name, value in fields:
            if name == cues.GROUP_FIELD:
                g += p.label_association * (1.0 if value == cues.GROUP_VALUES[1] else -1.0)
            elif name in index:
                m = _LEVEL.match(value)
                if m:
                    g += p.association * (int(m.group(1)) - 2.5)
                    continue
                try:
                    g += p.association * float(value)
                except ValueError:
                    pass
        return g

    def probe_probabilities(self, prompt: str) -> tuple[float, float]:
        """``(P(answer 1), P(abstain))`` for a probe prompt; abstention only in the abstention variant."""
        pts = read_cue_patients(prompt)
        if pts is None:
            return float("nan"), float("nan")
        d = (self.group_score(pts[0]) - self.group_score(pts[1])) / self.params.noise_scale
        p_abstain = self.params.abstain * math.exp(-abs(d)) if cues.PROBE_ABSTAIN in prompt else 0.0
        p1 = 1.0 / (1.0 + math.exp(-d)) if d > -700 else 0.0
        return (1.0 - p_abstain) * p1, p_abstain

    def ask(self, job: C.Job) -> C.Reply:
        """A triage job, or a probe job (its prompt starts with the probe's head) through the collection.

        Through the collection an abstention cannot be recorded: it comes back as no answer.
        """
        if not job.prompt.startswith(cues.PROBE_HEAD[:40]):
            return super().ask(job)
        a = self.probe_answer(job.prompt, job.prompt_sha256)
        patient = a if a in (1, 2) else None
        return C.Reply(patient, self.model, raw="" if patient is None else json.dumps({"patient": patient}),
                       finish="simulated")

    def probe_answer(self, prompt: str, prompt_sha: str | None = None) -> int | None:
        """1, 2, or :data:`analysis.cues.ABSTAIN_ANSWER`, keyed by ``(seed, prompt SHA-256)``."""
        sha = prompt_sha or C.sha256_text(prompt)
        p1, pa = self.probe_probabilities(prompt)
        if math.isnan(p1):
            return None
        u = self._uniform("probe", sha)
        if u < pa:
            return cues.ABSTAIN_ANSWER
        return 1 if u < pa + p1 else 2


def subject(name: str, seed: int = 0) -> CueSubject:
    """A preset of :data:`PRESETS` with its seed."""
    return CueSubject.preset(name, seed)
