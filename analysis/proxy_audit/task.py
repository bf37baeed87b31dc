"""The audit's battery as an inspect_ai task (issue 24): ``inspect eval analysis/proxy_audit -T battery=core``.

* one :class:`~inspect_ai.dataset.Sample` per job: ``input`` is the job's exact prompt (one user
  message, no system message), ``id`` the job's ledger identity ``cell:display:arm:pair:order``,
  ``metadata`` the job (cell, display, arm, pair, order, i, j, prompt_sha256) and the battery;
* :func:`choose_forced`: offers the ``choose`` tool, forces it (a named tool choice) and never
  executes it (``tool_calls="none"``): one request per sample, as in the protocol;
* :func:`choose_answer`: reads the answer with the project's own parser
  (:func:`analysis.collection.answers.patient_from_tool_calls`, the text rule as fallback).

Settings default to the protocol's (``max_tokens`` 64, temperature 0, no prompt caching); inspect's own
options override them (``--temperature``, ``--max-tokens``, ``--cache-prompt``, ``--logprobs --top-logprobs N``), and
``--epochs R`` asks every job R times (the ledger's samples). ``-T cache=true`` (or a duration such
as ``-T cache=30D``) caches every answer in inspect's cache with ``CachePolicy(expiry=None)`` (or
that expiry), so a rerun after an interruption asks only the jobs without an answer. What inspect
sends differs from the protocol's request in its tool schema and sampling fields:
``python -m analysis audit --from-inspect LOG`` lists each difference on the card.
"""
from __future__ import annotations

from inspect_ai import Task, task
from inspect_ai.dataset import MemoryDataset, Sample
from inspect_ai.model import CachePolicy, GenerateConfig
from inspect_ai.scorer import Score, Target, mean, scorer
from inspect_ai.solver import Generate, TaskState, solver
from inspect_ai.tool import ToolDef, ToolFunction, ToolParams

# absolute imports: `inspect eval analysis/proxy_audit` loads this file on its own, outside the package
from analysis import config
from analysis.audit.batteries import BATTERY_NAMES, battery_conditions, first_pairs, jobs_of
from analysis.collection.answers import TOOL_NAME
from analysis.collection.jobs import Job
from analysis.inspect_bridge.logs import patient_of_output
from analysis.inspect_bridge.requests import (PARAM_DESCRIPTION, SAMPLE_METADATA, TASK_NAME, cache_policy_args,
                                       protocol_config, sample_id)

#: the protocol's settings (max_tokens 64, temperature 0; spec §6.2; no prompt caching); inspect's options
#: override them
PROTOCOL_CONFIG = protocol_config()


def job_sample(job: Job, battery: str, n_pairs: int | None) -> Sample:
    """The inspect sample of one job: its exact prompt, its ledger identity, the job as metadata."""
    meta = {"cell": job.cell, "display": job.display, "arm": job.arm, "pair": job.pair_id, "order": job.order,
            "i": job.i, "j": job.j, "prompt_sha256": job.prompt_sha256, "battery": battery, "pairs": n_pairs}
    assert set(meta) == set(SAMPLE_METADATA)
    return Sample(input=job.prompt, id=sample_id(job), metadata=meta)


def battery_samples(battery: str = "core", pairs: int | None = None) -> list[Sample]:
    """Every job of a battery (the first ``pairs`` pairs of each condition where given) as samples, in queue order."""
    if battery not in BATTERY_NAMES or battery == "validity":
        raise ValueError(f"unknown battery {battery!r} for inspect; expected one of "
                         f"{', '.join(b for b in BATTERY_NAMES if b != 'validity')}")
    conds = first_pairs(battery_conditions(battery), pairs)
    return [job_sample(jb, battery, pairs) for c in conds for jb in jobs_of(c)]


def _never(patient: int) -> str:
    """The ``choose`` tool is offered and forced, never executed (the solver generates with ``tool_calls="none"``)."""
    raise RuntimeError("the choose tool is never executed")


def choose_tool() -> ToolDef:
    """The protocol's ``choose`` tool (one integer ``patient`` in {1, 2}); inspect requires a parameter description."""
    params = ToolParams(properties={"patient": {"type": "integer", "enum": [1, 2], "description": PARAM_DESCRIPTION}},
                        required=["patient"])
    return ToolDef(_never, name=TOOL_NAME, description=config.TOOL_DESCRIPTION, parameters=params)


@solver
def choose_forced(cache: bool | str = False):
    """Offer and force ``choose``; one request, the tool never executed. ``cache``: inspect's cache
    (``True``: ``CachePolicy(expiry=None)``; a duration such as ``"30D"``: that expiry)."""
    args = cache_policy_args(cache)

    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.tools = [choose_tool()]
        state.tool_choice = ToolFunction(TOOL_NAME)
        # the job in the cache key: jobs sharing a prompt (a factual and a counterfactual arm without
        # examples) are asked separately, as the protocol does; the cache serves resumes only
        policy = False if args is None else CachePolicy(**args, scopes={"job": str(state.sample_id)})
        return await generate(state, tool_calls="none", cache=policy)

    return solve


@scorer(metrics=[mean()])
def choose_answer():
    """1 for a valid answer (patient 1 or 2), 0 for an invalid one; ``answer`` is the patient named."""
    async def score(state: TaskState, target: Target) -> Score:
        patient, raw = patient_of_output(state.output)
        first = state.metadata["i"] if state.metadata["order"] == 0 else state.metadata["j"]
        second = state.metadata["j"] if state.metadata["order"] == 0 else state.metadata["i"]
        chosen = {1: first, 2: second}.get(patient)
        return Score(value=0.0 if patient is None else 1.0, answer="" if patient is None else str(patient),
                     explanation=raw[:200],
                     metadata={"patient": patient,
                               "picked_i": None if chosen is None else int(chosen == state.metadata["i"])})

    return score


@task(name=TASK_NAME)
def proxy_audit(battery: str = "core", pairs: int | None = None, cache: bool | str = False) -> Task:
    """The audit's battery (``core``, ``full`` or ``smoke``), one sample per job; ``pairs``: the first N pairs
    of each condition (a subset, not the protocol); ``cache``: inspect's cache for resumes."""
    n = None if pairs in (None, "", "none") else int(pairs)
    return Task(dataset=MemoryDataset(battery_samples(battery, n), name=f"proxy_audit_{battery}"),
                solver=choose_forced(cache), scorer=choose_answer(), config=GenerateConfig(**PROTOCOL_CONFIG),
                metadata={"proxy_audit": {"battery": battery, "pairs": n}})
