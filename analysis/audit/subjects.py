"""The audit's subjects: who answers the battery's prompts.

Any model behind :mod:`analysis.collection` (Anthropic, any OpenAI-compatible endpoint), or an
offline simulated subject of known behaviour: the presets of :mod:`analysis.collection`, the
``tracks-learner`` subject defined here (:class:`LearnerTracker`), and two subjects that do not
read the patients at all, for the responsiveness check (issue 13): ``answers-first`` always
answers Patient 1 (answering by position), ``answers-at-random`` picks either patient with
probability one half (answering at chance).
"""
from __future__ import annotations

import dataclasses
import math
import threading
from typing import Callable

import numpy as np

from .. import collection as C
from .. import config
from ..learners import ReferenceLearner

DRY_RUN_KEY = "no-key-needed-for-a-dry-run-7c1e"
_TRAIN = "TRAINING CASES (format: "
#: subjects that ignore the patients (responsiveness check): position bias 50 on the logit scale
#: makes Patient 1 certain up to 2e-22; a zero score makes every answer a fair coin
UNRESPONSIVE = {
    "answers-first": C.SimulatedParams(task_weight=0.0, proxy_weight=0.0, level_weight=0.0, position_bias=50.0),
    "answers-at-random": C.SimulatedParams(task_weight=0.0, proxy_weight=0.0, level_weight=0.0, position_bias=0.0),
}


def parse_examples(prompt: str) -> tuple[list[str], list[list[str]], np.ndarray] | None:
    """Field names, rendered example rows and risk labels of a prompt's example block (None without one)."""
    start = prompt.find(_TRAIN)
    if start < 0:
        return None
    head_end = prompt.find("):\n", start)
    body_end = prompt.find("\n\nNEW PATIENTS:", head_end)
    if head_end < 0 or body_end < 0:
        return None
    names = [s.strip() for s in prompt[start + len(_TRAIN):head_end].split("->")[0].split(",")]
    rows, ys = [], []
    for line in prompt[head_end + 3:body_end].splitlines():
        vals, sep, y = line.rpartition(" -> ")
        if sep:
            rows.append([v.strip() for v in vals.split(",")])
            ys.append(float(y))
    return names, rows, np.array(ys)


class _Encoder:
    """Features of displayed rows: numeric fields as they are, label fields as indicators of every
    label seen in the examples (all categories: invariant to how the labels are named)."""

    def __init__(self, names: list[str], rows: list[list[str]]):
        self.names = names
        self.columns: list[tuple[str, object]] = []
        for f, name in enumerate(names):
            values = [r[f] for r in rows]
            try:
                [float(v) for v in values]
                self.columns.append((name, None))
            except ValueError:
                self.columns.append((name, sorted(set(values))))

    def __call__(self, fields: dict[str, str]) -> np.ndarray:
        out: list[float] = []
        for name, cats in self.columns:
            v = fields[name]
            if cats is None:
                out.append(float(v))
            else:
                out.extend(float(v == c) for c in cats)
        return np.array(out)


class LearnerTracker(C.SimulatedSubject):
    """A simulated subject that tracks the reference learner (for the audit's tests and demo).

    With examples in the prompt it fits the reference learner's Bayesian linear regression
    (sigma 0.5, tau 1, intercept; :class:`analysis.learners.ReferenceLearner`) to the example
    rows *as displayed* (two decimals; label fields as indicators of every label) and answers
    Patient 1 with probability ``expit((m1 - m2) / noise_scale)``, ``m`` the posterior mean,
    drawn with the simulated subject's seeded uniform keyed by the prompt. Without examples
    (no learner is defined) it scores by the sum of the task fields and ignores the proxies.
    """

    def __init__(self, noise_scale: float = 0.05, seed: int = 0, name: str = "tracks-learner"):
        params = C.SimulatedParams(task_weight=1.0, proxy_weight=0.0, level_weight=0.0, position_bias=0.0,
                                   noise_scale=noise_scale, seed=seed)
        super().__init__(params, name)
        self._fits: dict[str, tuple[_Encoder, np.ndarray]] = {}
        self._lock = threading.Lock()

    def request_settings(self) -> dict:
        return {"kind": "tracks-learner", "params": dataclasses.asdict(self.params)}

    def _fit(self, prompt: str):
        start = prompt.find(_TRAIN)
        block = prompt[start:prompt.find("\n\nNEW PATIENTS:", start)]
        with self._lock:
            hit = self._fits.get(block)
        if hit is not None:
            return hit
        names, rows, y = parse_examples(prompt)
        enc = _Encoder(names, rows)
        X = np.array([enc(dict(zip(names, r))) for r in rows])
        fit = (enc, ReferenceLearner().fit(X, y).posterior_mean_)
        with self._lock:
            self._fits[block] = fit
        return fit

    def probability_first(self, prompt: str) -> float:
        pts = C.read_patients(prompt)
        if pts is None:
            return float("nan")
        p = self.params
        if _TRAIN not in prompt:
            s = [sum(float(v) for n, v in pt if n in config.TASK_NAMES) for pt in pts]
        else:
            enc, m = self._fit(prompt)
            s = [float(m[0] + enc(dict(pt)) @ m[1:]) for pt in pts]
        z = (s[0] - s[1] + p.position_bias) / p.noise_scale
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0


#: simulated behaviours the audit offers (collection's presets plus ``tracks-learner``)
AUDIT_PRESETS = tuple(C.SIMULATED_PRESETS) + ("tracks-learner",) + tuple(UNRESPONSIVE)


def simulated_subject(preset: str, seed: int = 0) -> C.Subject:
    """A simulated subject by preset name (``tracks-learner`` or a preset of :mod:`analysis.collection`)."""
    if preset == "tracks-learner":
        return LearnerTracker(seed=seed)
    if preset in UNRESPONSIVE:
        return C.SimulatedSubject(dataclasses.replace(UNRESPONSIVE[preset], seed=seed), preset)
    if preset not in C.SIMULATED_PRESETS:
        raise C.CollectionError(f"unknown simulated preset {preset!r}; expected one of {', '.join(AUDIT_PRESETS)}")
    return C.SimulatedSubject.preset(preset, seed=seed)


def subject_factory(provider: str, model: str, *, base_url: str | None = None, api_key_env: str | None = None,
                    timeout: float = 60.0, settings: dict | None = None, preset: str | None = None, seed: int = 0,
                    dry_run: bool = False, answer_format: str = "tool") -> Callable[[], C.Subject]:
    """A function returning a fresh subject per condition (collection closes a subject after each cell).

    Checks the provider, preset and (unless ``dry_run``) the API key now, so a run fails before
    anything is written. A dry run needs no key. ``answer_format`` (``tool``, the protocol; ``json``
    or ``text`` for servers that refuse a forced ``tool_choice``) is part of the request key.
    """
    if answer_format not in C.ANSWER_FORMATS:
        raise C.CollectionError(f"unknown answer format {answer_format!r}; expected one of "
                                f"{', '.join(C.ANSWER_FORMATS)}")
    C.check_completion(provider, answer_format)  # before any dry run or preset: POST /v1/completions only
    if provider == "simulated":
        name = preset or model
        if name not in AUDIT_PRESETS:
            raise C.CollectionError(f"unknown simulated preset {name!r} (give --preset or a preset as --model); "
                                    f"expected one of {', '.join(AUDIT_PRESETS)}")
        return lambda: simulated_subject(name, seed)
    if provider not in C.PAID:
        raise C.CollectionError(f"unknown provider {provider!r} for an audit; expected anthropic, openai or simulated "
                                f"(the paper's own models are the card's reference rows)")
    if dry_run:
        cls = C.AnthropicSubject if provider == "anthropic" else C.OpenAISubject
        return lambda: cls(model, DRY_RUN_KEY, base_url=base_url, timeout=timeout, settings=settings,
                           answer_format=answer_format)

    def make() -> C.Subject:
        return C.make_subject(provider, model, None, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                              settings=settings, answer_format=answer_format)

    make().close()  # checks the key now
    return make
