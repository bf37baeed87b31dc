"""inspect_ai logs into the ledger (issue 24): ``python -m analysis collect --import-inspect LOG.eval … --out DIR``.

Logs are read with inspect's own reader (:func:`inspect_ai.log.read_eval_log`, attachments resolved).
A log of another task, or one whose samples lack the job metadata, is refused with one line. Each
sample is checked against the protocol's job of its metadata: its id, its prompt and, above all, the
prompt actually sent (the user message of ``ModelEvent.call.request``) must have the job's
``prompt_sha256``; a job that fails is refused by name and not imported. Each answer is read with the
project's parser and written through the same ledger, records and metadata code as ``collect``
(:func:`analysis.collection.outputs.answer_row`, :func:`~analysis.collection.outputs.write_outputs`),
under provider ``inspect`` and the request key of :class:`InspectSubject`: a fingerprint of the request
sent (:func:`analysis.inspect_bridge.requests.request_template`), never of the generation config.

A sample answered from inspect's cache (``ModelEvent.cache == "read"``) has no logged request; its
request is the one logged by a sent sample of the same model, tools, tool choice and generate config
(what inspect's cache key covers) in any of the logs given, else the job is refused (give the log of
the run that sent it too). ``--epochs R``: epoch e of a job is the ledger's sample e - 1 (the
``sample`` of :class:`~analysis.collection.jobs.Job`, as ``collect --samples R`` writes it), and the records
and the card then hold R answers per prompt.
"""
from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path

from ..audit.batteries import battery_conditions, first_pairs, jobs_of
from ..collection.answers import Reply, patient_from_content, patient_from_tool_calls
from ..collection.errors import CollectionError
from ..collection.jobs import Job, now_utc, sha256_text
from ..collection.ledger import Ledger
from ..collection.outputs import answer_row, attempt_rows
from ..collection.redaction import REDACT
from ..collection.retries import Outcome
from ..collection.subjects.base import Subject, request_key
from .requests import (SAMPLE_METADATA, TASK_NAME, api_of, fingerprint, request_template, sample_id, user_text)


class LogRefused(CollectionError):
    """A log that is not this task's, or lacks the job metadata: refused whole (one line, exit 2)."""


class InspectSubject(Subject):
    """The subject of an imported inspect run: provider ``inspect``, the inspect model name, and the request
    template as its settings (so :func:`analysis.collection.request_key` fingerprints the request sent)."""

    provider = "inspect"
    paid = False

    def __init__(self, model: str, template: dict, base_url: str | None = None):
        super().__init__(model)
        self.template, self.api, self.base_url = template, api_of(model), base_url

    def request_settings(self) -> dict:
        return {"api": self.api, "request": self.template}

    def tag(self, key: str) -> str:
        """Always tagged with the key: two inspect requests of one model never share a records file."""
        return f"s{key[:8]}"


def patient_of_output(output) -> tuple[int | None, str]:
    """``(patient, raw)`` of an inspect ``ModelOutput``, read with the project's parser: a ``choose`` call,
    else the first standalone 1 or 2 of the text (spec §6.2)."""
    choices = getattr(output, "choices", None) or []
    msg = choices[0].message if choices else None
    calls = [(c.function, c.arguments) for c in (getattr(msg, "tool_calls", None) or [])]
    patient, raw = patient_from_tool_calls(calls)
    if patient is None:
        text = getattr(output, "completion", "") or ""
        patient = patient_from_content(text, "tool")
        raw = raw or text
    return patient, raw


@dataclass(frozen=True)
class Answer:
    """One answered sample of a log, checked against its job."""

    job: Job
    epoch: int
    patient: int | None
    raw: str
    served_model: str
    response_id: str
    input_tokens: int
    output_tokens: int
    model: str
    cached: bool
    template: dict | None  # None: answered from the cache, resolved by identity
    identity: str
    log: str


@dataclass
class Imported:
    """What :func:`import_logs` found and wrote."""

    n_samples: int = 0
    answers: list[Answer] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # "JOB: reason"
    unanswered: list[str] = field(default_factory=list)
    battery: str = ""
    pairs: int | None = None
    samples: int = 1  # answers per job: the most epochs any log was run with (--epochs R)
    configs: list[dict] = field(default_factory=list)  # the generate config of each log
    added: int = 0
    kept_existing: int = 0
    groups: list[tuple] = field(default_factory=list)  # (subject, key, settings_json)


def read_log(path: str | Path):
    """One log through inspect's own reader (attachments resolved); :class:`LogRefused` if it is not this task's."""
    try:
        from inspect_ai.log import read_eval_log  # heavy, optional (the [inspect] extra)
    except ImportError:
        raise CollectionError("reading inspect logs needs inspect_ai: pip install '.[inspect]' "
                              "(inspect-ai==0.3.285)") from None
    p = Path(path)
    if not p.is_file():
        raise LogRefused(f"inspect log {p} not found")
    try:
        log = read_eval_log(str(p), resolve_attachments=True)
    except Exception as exc:  # noqa: BLE001 - any reader failure is one line
        raise LogRefused(f"{p}: not a readable inspect log ({type(exc).__name__}: {str(exc)[:160]})") from None
    task = str(log.eval.task or "")
    if task.rsplit("/", 1)[-1] != TASK_NAME:
        raise LogRefused(f"{p}: a log of task {task!r}, not {TASK_NAME!r} (inspect eval analysis/proxy_audit)")
    for s in log.samples or []:
        missing = [k for k in SAMPLE_METADATA if k not in (s.metadata or {})]
        if missing:
            raise LogRefused(f"{p}: sample {s.id!r} lacks the job metadata {missing}; not a log of this task's samples")
    return log


def _identity(ev) -> str:
    """What inspect's cache key covers (model, tools, tool choice, generate config): a cached answer's request
    is the one logged by a sent sample of the same identity."""
    tools = [t.model_dump(exclude_none=True) for t in ev.tools]
    choice = ev.tool_choice.model_dump() if hasattr(ev.tool_choice, "model_dump") else ev.tool_choice
    cfg = ev.config.model_dump(exclude_none=True, exclude={"cache"})
    return sha256_text(json.dumps([ev.model, tools, choice, cfg], sort_keys=True, default=str))


def _job_index(battery: str, pairs: int | None) -> dict[tuple, Job]:
    conds = first_pairs(battery_conditions(battery), pairs)
    return {(jb.cell, jb.display, jb.arm, jb.pair_id, jb.order): jb for c in conds for jb in jobs_of(c)}


def _sample_text(sample) -> str:
    inp = sample.input
    if isinstance(inp, str):
        return inp
    return "".join(m.text for m in inp if getattr(m, "role", "") == "user")


def check_sample(sample, job: Job | None, ev, name: str) -> str | None:
    """Why a sample is refused for its job (None: it is the job's, byte for byte)."""
    if job is None:
        return "not a job of the battery its metadata names"
    if str(sample.id) != sample_id(job):
        return f"sample id {sample.id!r} is not the job's {sample_id(job)!r}"
    if sample.metadata["prompt_sha256"] != job.prompt_sha256:
        return "its prompt_sha256 metadata is not the protocol's prompt hash"
    if sha256_text(_sample_text(sample)) != job.prompt_sha256:
        return "its input differs from the protocol's prompt"
    sent = user_text(ev.call.request) if ev.call is not None else \
        "".join(m.text for m in ev.input if getattr(m, "role", "") == "user")
    if sha256_text(sent) != job.prompt_sha256:
        return (f"the prompt sent (SHA-256 {sha256_text(sent)[:12]}…) differs from the protocol's "
                f"({job.prompt_sha256[:12]}…)")
    return None


def answers_of_log(path: str | Path, out: Imported) -> None:
    """Read one log's samples into ``out`` (answers, refused jobs, unanswered samples)."""
    log = read_log(path)
    name = Path(path).name
    out.configs.append(log.plan.config.model_dump(exclude_none=True) if log.plan else {})
    out.samples = max(out.samples, int(log.eval.config.epochs or 1))
    index_cache: dict[tuple, dict] = {}
    for s in log.samples or []:
        md = s.metadata
        battery, pairs = str(md["battery"]), (None if md["pairs"] is None else int(md["pairs"]))
        if out.battery and (out.battery, out.pairs) != (battery, pairs):
            raise LogRefused(f"{path}: battery {battery} with pairs {pairs}, but the logs before it ran "
                             f"{out.battery} with pairs {out.pairs}; import one battery at a time")
        out.battery, out.pairs = battery, pairs
        index = index_cache.setdefault((battery, pairs), _job_index(battery, pairs))
        out.n_samples += 1
        tag = job_name(f"{md['cell']}:{md['display']}:{md['arm']}:{md['pair']}:{md['order']}", int(s.epoch))
        events = [e for e in (s.events or []) if getattr(e, "event", "") == "model" and e.error is None]
        if s.error is not None or not events:
            out.unanswered.append(f"{name}: {tag}: no answer in the log")
            continue
        ev = events[-1]
        out.samples = max(out.samples, int(s.epoch))
        job = index.get((md["cell"], md["display"], md["arm"], int(md["pair"]), int(md["order"])))
        why = check_sample(s, job, ev, name)
        if why is not None:
            out.refused.append(f"{tag}: {why} ({name})")
            continue
        patient, raw = patient_of_output(ev.output)
        usage = ev.output.usage
        resp = ev.call.response if ev.call is not None and isinstance(ev.call.response, dict) else {}
        out.answers.append(Answer(with_epoch(job, int(s.epoch)), int(s.epoch), patient, REDACT(raw)[:200],
                                  str(ev.output.model or ""), str(resp.get("id") or ""),
                                  int(getattr(usage, "input_tokens", 0) or 0),
                                  int(getattr(usage, "output_tokens", 0) or 0), str(ev.model), ev.cache == "read",
                                  None if ev.call is None else request_template(ev.call.request), _identity(ev),
                                  name))


def job_name(sample_tag: str, epoch: int) -> str:
    """A job as named in a refusal: the sample id, with the epoch past the first (the ledger's sample e - 1).

    >>> job_name("k:numeric:factual:0:1", 1), job_name("k:numeric:factual:0:1", 3)
    ('k:numeric:factual:0:1', 'k:numeric:factual:0:1 epoch 3')
    """
    return sample_tag if epoch == 1 else f"{sample_tag} epoch {epoch}"


def with_epoch(job: Job, epoch: int) -> Job:
    """The job as the ledger's sample of inspect's ``epoch`` (1-based): sample ``epoch - 1``."""
    if epoch < 1:
        raise LogRefused(f"{sample_id(job)}: epoch {epoch}; inspect numbers epochs from 1")
    return dataclasses.replace(job, sample=epoch - 1)


def resolve(out: Imported) -> list[tuple[Answer, dict]]:
    """Each answer with its request template; answers from the cache take the template of their identity."""
    by_identity: dict[str, dict] = {}
    for a in out.answers:
        if a.template is not None:
            known = by_identity.setdefault(a.identity, a.template)
            if fingerprint(known) != fingerprint(a.template):  # same cache identity, another request: provider drift
                out.refused.append(f"{job_name(sample_id(a.job), a.epoch)}: its request differs from another "
                                   f"sample's of the same model and config ({a.log}); import those logs separately")
    done = []
    for a in out.answers:
        t = a.template or by_identity.get(a.identity)
        if t is None:
            out.refused.append(f"{job_name(sample_id(a.job), a.epoch)}: answered from inspect's cache and no log "
                               f"given carries the request it was cached from ({a.log}); give the log of the run "
                               f"that sent it too")
            continue
        done.append((a, t))
    return done


def write_answers(out: Imported, ledger: Ledger, base_url: str | None = None) -> None:
    """Write the resolved answers into the ledger (one answer per job and request: a valid answer is kept)."""
    rows_by_key: dict[str, tuple] = {}
    for a, template in resolve(out):
        job = a.job  # already the ledger's sample of its epoch
        subject = InspectSubject(a.model, template, base_url)
        key, settings_json = request_key(subject)
        group = rows_by_key.setdefault(key, (subject, settings_json, [], []))
        reply = Reply(a.patient, a.served_model, a.response_id, a.input_tokens, a.output_tokens, a.raw,
                      "cache" if a.cached else "inspect")
        group[2].append(answer_row(job, key, reply, Outcome(reply, [], a.input_tokens, a.output_tokens, None,
                                                            0 if a.cached else 1), None))
        outcome = "valid" if a.patient is not None else "invalid"
        group[3].extend(attempt_rows(job, key, [{
            "attempt": 1, "kind": "import", "outcome": outcome, "http_status": None,
            "detail": f"inspect {a.log}" + (" (cache)" if a.cached else ""), "latency_s": None,
            "input_tokens": a.input_tokens, "output_tokens": a.output_tokens, "cost_usd": None,
            "created_utc": now_utc()}]))
    for key, (subject, settings_json, rows, logs) in rows_by_key.items():
        ledger.register_request(key, subject, settings_json)
        added = ledger.put(rows, logs)
        out.added += added
        out.kept_existing += len(rows) - added
        out.groups.append((subject, key, settings_json))


def import_logs(paths: list[str | Path], ledger: Ledger, base_url: str | None = None) -> Imported:
    """Read every log, check each sample against its job, write the answers through ``ledger``."""
    out = Imported()
    for p in paths:
        answers_of_log(p, out)
    write_answers(out, ledger, base_url)
    return out
