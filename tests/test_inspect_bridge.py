"""The audit inside inspect_ai (issue 24): the battery as an inspect task, its logs into the ledger, the card's
deviations. Offline: inspect's ``mockllm`` provider and this project's fake servers on 127.0.0.1, reached
through inspect's ``openai-api`` and ``anthropic`` providers. The smoke battery on its first pair (12 jobs)."""
from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

inspect_ai = pytest.importorskip("inspect_ai", reason="inspect_ai is not installed (the optional [inspect] extra)")

from inspect_ai import Task, eval as inspect_eval  # noqa: E402
from inspect_ai.dataset import Sample  # noqa: E402
from inspect_ai.log import read_eval_log, write_eval_log  # noqa: E402
from inspect_ai.model import ModelOutput, ModelUsage  # noqa: E402

from analysis import cli  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.audit.batteries import battery_calls, battery_conditions, first_pairs, jobs_of  # noqa: E402
from analysis.inspect_bridge import commands, requests as R  # noqa: E402
from analysis.proxy_audit import battery_samples, proxy_audit  # noqa: E402
from fake_servers import FakeAnthropic, FakeOpenAI  # noqa: E402

PAIRS = 1
CONDS = first_pairs(battery_conditions("smoke"), PAIRS)
JOBS = [jb for c in CONDS for jb in jobs_of(c)]
TAGS = {R.sample_id(jb) for jb in JOBS}


def _run(model: str, tmp: Path, **kw):
    logs = inspect_eval(proxy_audit(battery="smoke", pairs=PAIRS, **kw.pop("task", {})), model=model,
                        log_dir=str(tmp), display="none", log_format="eval", **kw)
    assert len(logs) == 1
    return read_eval_log(logs[0].location, resolve_attachments=True)  # as the import reads it


def _answers(out: Path) -> list[tuple]:
    con = sqlite3.connect(out / C.LEDGER_NAME)
    try:
        return con.execute("SELECT cell, display, arm, pair_id, ord, request_key, prompt_sha256, patient "
                           "FROM answers").fetchall()
    finally:
        con.close()


def _by_job(rows) -> dict[str, int | None]:
    return {f"{r[0]}:{r[1]}:{r[2]}:{r[3]}:{r[4]}": r[7] for r in rows}


@pytest.fixture(scope="module")
def openai_run(tmp_path_factory):
    """The smoke battery through inspect's openai-api provider and through ``collect``, on one fake server."""
    tmp = tmp_path_factory.mktemp("inspect_openai")
    mp = pytest.MonkeyPatch()
    mp.setenv("FAKE_API_KEY", "test-not-a-key")
    mp.setenv("INSPECT_CACHE_DIR", str(tmp / "cache"))
    with FakeOpenAI() as srv:
        log = _run("openai-api/fake/m", tmp / "logs", model_base_url=srv.url)
        inspect_bodies = [r["body"] for r in srv.requests]
        for c in CONDS:
            res = C.collect(c.parsed, "openai", "m", tmp / "collect", display=c.display, base_url=srv.url,
                            jobs=jobs_of(c), progress=False, concurrency=2)
            assert res.complete
        collect_bodies = [r["body"] for r in srv.requests[len(inspect_bodies):]]
        answer = srv.answer
    mp.undo()
    return {"tmp": tmp, "log": log, "inspect_bodies": inspect_bodies, "collect_bodies": collect_bodies,
            "answer": answer}


def test_openai_api_round_trip_agrees_with_collect(openai_run):
    """Every job once, the same user-message bytes as collect, the same answers, one stable request key."""
    r = openai_run
    assert r["log"].status == "success"
    imp, summaries = commands.run_import([r["log"].location], r["tmp"] / "imported")
    assert not imp.refused and not imp.unanswered and imp.added == len(JOBS)
    rows = _answers(r["tmp"] / "imported")
    assert len(rows) == len(JOBS) and {k for k in _by_job(rows)} == TAGS  # every job, once
    inspect_answers = _by_job(rows)
    collect_answers = _by_job(_answers(r["tmp"] / "collect"))
    assert inspect_answers == collect_answers
    assert all(inspect_answers[R.sample_id(jb)] == r["answer"](jb.prompt) for jb in JOBS)
    # the user-message bytes sent: identical to collect's, prompt by prompt
    sent = sorted(R.user_text(b) for b in r["inspect_bodies"])
    assert sent == sorted(R.user_text(b) for b in r["collect_bodies"]) == sorted(jb.prompt for jb in JOBS)
    # one request key, never a protocol run's, stable on a second import
    keys = {row[5] for row in rows}
    assert len(keys) == 1 and keys.isdisjoint({row[5] for row in _answers(r["tmp"] / "collect")})
    again, _ = commands.run_import([r["log"].location], r["tmp"] / "imported_again")
    assert {row[5] for row in _answers(r["tmp"] / "imported_again")} == keys
    assert summaries[0]["complete"] and again.added == len(JOBS)


def test_logged_request_is_the_wire_body_and_deviations_name_every_difference(openai_run):
    """The body the fake received equals the logged request (less headers) for every sample; the deviations
    are exactly the fields where it differs from collect's body."""
    r = openai_run
    received = {R.user_text(b): b for b in r["inspect_bodies"]}
    for s in r["log"].samples:
        ev = [e for e in s.events if e.event == "model"][-1]
        req = ev.call.request
        assert R.wire_body({k: v for k, v in req.items() if k != "extra_headers"}, "openai-api") == \
            received[R.user_text(req)]
    template = R.request_template([e for e in r["log"].samples[0].events if e.event == "model"][-1].call.request)
    dev = R.deviation_report(template, "openai-api", "openai-api/fake/m")
    collect_body = R.request_template(r["collect_bodies"][0])
    direct = R.deviations(R.wire_body(template, "openai-api"), collect_body)
    assert [d["field"] for d in dev["fields"]] == [d["field"] for d in direct]
    assert {d["field"] for d in dev["fields"]} == {"tools[0].function.parameters.additionalProperties",
                                                   "tools[0].function.parameters.properties.patient.description",
                                                   "tools[0].function.strict"}
    assert all(d["category"] == "tool schema" for d in dev["fields"]) and not dev["protocol"]


def test_anthropic_round_trip_and_its_deviations(tmp_path, monkeypatch):
    """Through inspect's anthropic provider: every job once with the fake's answer; the wire adds
    ``stream: false`` (not in the logged request) and sends no temperature; the card names both."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-not-a-key")
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic() as srv:
        log = _run("anthropic/claude-sonnet-4-5", tmp_path / "logs", model_base_url=srv.url)
        bodies = {R.user_text(r["body"]): r["body"] for r in srv.requests}
        n_requests, answer = len(srv.requests), srv.answer
    assert log.status == "success" and n_requests == len(JOBS) and set(bodies) == {jb.prompt for jb in JOBS}
    for s in log.samples:
        req = [e for e in s.events if e.event == "model"][-1].call.request
        body = bodies[R.user_text(req)]
        assert body.get("stream") is False and "stream" not in req and "temperature" not in body
        assert R.wire_body({k: v for k, v in req.items() if k != "extra_headers"}, "anthropic") == body
    out = tmp_path / "card"
    code = cli.main(["audit", "--from-inspect", log.location, "--out", str(out), "--draws", "200",
                     "--no-reference-models"])
    assert code == 0
    assert _by_job(_answers(out)) == {R.sample_id(jb): answer(jb.prompt) for jb in JOBS}
    card = json.loads((out / "report_card.json").read_text())
    fields = {d["field"]: d for d in card["deviations"]["fields"]}
    assert fields["stream"]["kind"] == "added" and fields["stream"]["category"] == "streaming"
    if "temperature" in R.protocol_body("anthropic", "claude-sonnet-4-5"):  # the protocol's Anthropic request
        assert fields["temperature"]["kind"] == "removed" and fields["temperature"]["category"] == "sampling parameters"
    else:
        assert "temperature" not in fields
    assert not [f for f in fields if "cache_control" in f]  # the task turns inspect's prompt caching off
    assert "tools[0].input_schema.additionalProperties" in fields
    assert any("temperature" in line for line in card["deviations"]["log_config_not_sent"])
    assert card["subject"]["provider"] == "inspect" and card["summary"][1] == card["deviations"]["statement"]
    assert "Deviations from the protocol" in (out / "report_card.html").read_text()
    assert cli.main(["compare", str(out), "--out", str(tmp_path / "compare"), "--no-reference-models"]) == 0


def test_a_claude_55_run_through_inspect_names_the_tool_choice_and_thinking_it_changed(tmp_path, monkeypatch):
    """inspect 0.3.285 sends Sonnet 5.5 no forced tool choice (the model rejects one; our fake does too) and turns
    adaptive thinking on: the card names both among the deviations from the protocol's request."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-not-a-key")
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    with FakeAnthropic(models=["claude-sonnet-5-5"]) as srv:
        log = _run("anthropic/claude-sonnet-5-5", tmp_path / "logs", model_base_url=srv.url)
        refused, n_requests = list(srv.refused), len(srv.requests)
    assert log.status == "success" and refused == [] and n_requests == len(JOBS)
    out = tmp_path / "card"
    assert cli.main(["audit", "--from-inspect", log.location, "--out", str(out), "--draws", "200",
                     "--no-reference-models"]) == 0
    fields = {d["field"]: d for d in json.loads((out / "report_card.json").read_text())["deviations"]["fields"]}
    assert fields["tool_choice.type"]["kind"] == "changed" and fields["tool_choice.type"]["sent"] == "auto"
    assert fields["thinking.type"]["kind"] == "added"


def _mock_outputs(fail_after: int | None, calls: list):
    """mockllm answers: patient 1 when the first patient's first value is larger, else 2; an error after
    ``fail_after`` calls (an interrupted run)."""
    def outputs(input, tools, tool_choice, config):
        if fail_after is not None and len(calls) >= fail_after:
            raise RuntimeError("connection lost (simulated interruption)")
        calls.append(input[-1].text)
        patient = 1 if C.sha256_text(input[-1].text)[0] < "8" else 2
        out = ModelOutput.for_tool_call("mockllm/model", "choose", {"patient": patient})
        out.usage = ModelUsage(input_tokens=len(input[-1].text) // 3, output_tokens=5, total_tokens=0)  # no tiktoken
        return out
    return outputs


def test_interrupted_run_resumed_from_cache_imports_each_job_once(tmp_path, monkeypatch):
    """A run that stops after 5 answers, rerun with the same cache: the answered jobs are not asked again
    (5 + 7 calls for 12 jobs: the cache key names the job, so two jobs sharing a prompt are asked apart) and the
    two logs import with every job once."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    first: list = []
    log1 = _run("mockllm/model", tmp_path / "logs", model_args={"custom_outputs": _mock_outputs(5, first)},
                task={"cache": True}, max_connections=1)
    assert log1.status == "error" and len(first) == 5
    second: list = []
    log2 = _run("mockllm/model", tmp_path / "logs", model_args={"custom_outputs": _mock_outputs(None, second)},
                task={"cache": True}, max_connections=1)
    assert log2.status == "success"
    assert len(first) + len(second) == len(JOBS)  # no job asked twice
    answered1 = {s.id for s in log1.samples if s.error is None}
    cached = {s.id for s in log2.samples if [e for e in s.events if e.event == "model"][-1].cache == "read"}
    assert len(answered1) == 5 and cached == answered1
    imp, summaries = commands.run_import([log1.location, log2.location], tmp_path / "out")
    assert not imp.refused and summaries[0]["complete"]
    rows = _answers(tmp_path / "out")
    assert len(rows) == len(JOBS) and set(_by_job(rows)) == TAGS
    # the cached answers alone (log 2 only) resolve to the same request as the sent ones
    imp2, _ = commands.run_import([log2.location], tmp_path / "out2")
    assert not imp2.refused and {r[5] for r in _answers(tmp_path / "out2")} == {r[5] for r in rows}


def test_altered_prompt_is_refused_for_its_job(openai_run, tmp_path, capsys):
    """A log whose sent prompt was altered in one sample: that job is refused by name, the others import."""
    log = read_eval_log(openai_run["log"].location, resolve_attachments=True)
    victim = log.samples[3]
    ev = [e for e in victim.events if e.event == "model"][-1]
    msg = ev.call.request["messages"][0]
    msg["content"] = msg["content"].replace("Patient 1", "Patient A", 1)
    path = tmp_path / "altered.eval"
    write_eval_log(log, str(path))
    code = cli.main(["collect", "--import-inspect", str(path), "--out", str(tmp_path / "out")])
    err = capsys.readouterr().err
    assert code == 2 and str(victim.id) in err and "prompt sent" in err and len(err.strip().splitlines()) == 1
    tags = set(_by_job(_answers(tmp_path / "out")))
    assert tags == TAGS - {str(victim.id)}


def test_a_log_of_another_task_or_without_metadata_is_refused(openai_run, tmp_path, capsys):
    other = inspect_eval(Task(dataset=[Sample(input="hello", id="x")], name="other_task"), model="mockllm/model",
                         log_dir=str(tmp_path / "logs"), display="none")[0]
    code = cli.main(["collect", "--import-inspect", other.location, "--out", str(tmp_path / "a")])
    err = capsys.readouterr().err
    assert code == 2 and "other_task" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "a" / C.LEDGER_NAME).exists() or not _answers(tmp_path / "a")
    log = read_eval_log(openai_run["log"].location)
    del log.samples[0].metadata["prompt_sha256"]
    path = tmp_path / "nometa.eval"
    write_eval_log(log, str(path))
    code = cli.main(["audit", "--from-inspect", str(path), "--out", str(tmp_path / "b")])
    err = capsys.readouterr().err
    assert code == 2 and "prompt_sha256" in err and len(err.strip().splitlines()) == 1


def test_samples_are_the_jobs():
    """One sample per job: the exact prompt, the job's id, its metadata; cache option as a CachePolicy."""
    samples = battery_samples("smoke", PAIRS)
    assert [s.input for s in samples] == [jb.prompt for jb in JOBS]
    assert [s.id for s in samples] == [R.sample_id(jb) for jb in JOBS]
    assert all(s.metadata["prompt_sha256"] == C.sha256_text(s.input) for s in samples)
    assert set(samples[0].metadata) == set(R.SAMPLE_METADATA)
    assert len(samples) == battery_calls("smoke", PAIRS) == 12
    with pytest.raises(ValueError, match="unknown battery"):
        battery_samples("nope")


def test_request_template_keeps_the_request_and_drops_what_varies_per_job():
    """The fingerprint ignores the prompt text, inspect's request id header and message ids; anything else
    (a sampling setting, a tool field) changes it."""
    req = {"model": "m", "messages": [{"role": "user", "content": "Patient 1 ...", "id": "abc"}],
           "extra_headers": {"x-irid": "r1", "x-other": "kept"}, "temperature": 0.0, "tools": [{"strict": True}]}
    other = {**req, "messages": [{"role": "user", "content": "another prompt", "id": "xyz"}],
             "extra_headers": {"x-irid": "r2", "x-other": "kept"}}
    t = R.request_template(req)
    assert R.fingerprint(t) == R.fingerprint(R.request_template(other))
    assert t["extra_headers"] == {"x-other": "kept"} and t["messages"] == [{"role": "user", "content": R.PROMPT}]
    for change in ({"temperature": 1.0}, {"tools": [{"strict": False}]}, {"stream": True}):
        assert R.fingerprint(R.request_template({**req, **change})) != R.fingerprint(t)
    assert R.wire_body(t, "anthropic")["stream"] is False and "extra_headers" not in R.wire_body(t, "openai-api")
    # the OpenAI Responses API (inspect's openai provider): the prompt is in `input`
    resp = {"model": "m", "input": [{"role": "user", "content": [{"type": "input_text", "text": "Patient 1 ..."}]}]}
    assert R.user_text(resp) == "Patient 1 ..." and R.user_text(R.request_template(resp)) == R.PROMPT


def _answers_by_sample(out: Path) -> dict[tuple[str, int], int | None]:
    con = sqlite3.connect(out / C.LEDGER_NAME)
    try:
        rows = con.execute("SELECT cell, display, arm, pair_id, ord, sample, patient FROM answers").fetchall()
    finally:
        con.close()
    return {(f"{r[0]}:{r[1]}:{r[2]}:{r[3]}:{r[4]}", r[5]): r[6] for r in rows}


def test_epochs_are_the_ledgers_samples(tmp_path, monkeypatch):
    """``--epochs 2``: epoch e of a job is the ledger's sample e - 1 (as ``collect --samples 2`` writes it): each
    job twice, each sample holding its own epoch's answer; the records carry ``sample_id`` and the card
    2 samples per prompt; a log missing the second epoch leaves the battery incomplete (exit 3)."""
    monkeypatch.setenv("INSPECT_CACHE_DIR", str(tmp_path / "cache"))
    calls: list = []
    rng = np.random.default_rng(0)

    def drawn(input, tools, tool_choice, config):  # a seeded draw per call, so a job's two epochs can differ
        calls.append(input[-1].text)
        out = ModelOutput.for_tool_call("mockllm/model", "choose", {"patient": int(rng.integers(1, 3))})
        out.usage = ModelUsage(input_tokens=len(input[-1].text) // 3, output_tokens=5, total_tokens=0)  # no tiktoken
        return out

    log = _run("mockllm/model", tmp_path / "logs", model_args={"custom_outputs": drawn}, epochs=2,
               max_connections=1)
    assert len(log.samples) == 2 * len(JOBS) and len(calls) == 2 * len(JOBS)
    # what the log says each epoch answered (the tool call's own argument, not the project's parser)
    logged = {(str(s.id), s.epoch - 1): s.output.choices[0].message.tool_calls[0].arguments["patient"]
              for s in log.samples}
    assert len(set(logged.values())) == 2 and any(logged[(t, 0)] != logged[(t, 1)] for t in TAGS)
    imp, summaries = commands.run_import([log.location], tmp_path / "out")
    assert not imp.refused and not imp.unanswered and imp.samples == 2 and imp.added == 2 * len(JOBS)
    assert _answers_by_sample(tmp_path / "out") == logged  # every (job, sample) once, with its epoch's answer
    assert summaries[0]["complete"]
    n_records = 0
    for c in CONDS:
        rec, meta = C.output_paths(tmp_path / "out", "inspect", summaries[0]["subject"].model, c.cell, c.display,
                                   summaries[0]["subject"].tag(summaries[0]["key"]))
        df = pd.read_csv(rec)
        assert sorted(df["sample_id"].unique()) == [0, 1] and len(df) == 2 * len(jobs_of(c))
        for r in df.itertuples(index=False):
            assert r.patient == logged[(f"{c.cell}:{c.display}:{r.arm}:{r.pair_id}:{r.order}", r.sample_id)]
        m = json.loads(meta.read_text())
        assert m["samples_per_job"] == 2 and m["complete"]
        n_records += len(df)
    assert n_records == 2 * len(JOBS)
    code = cli.main(["audit", "--from-inspect", log.location, "--out", str(tmp_path / "card"), "--draws", "200",
                     "--no-reference-models"])
    assert code == 0
    assert json.loads((tmp_path / "card" / "report_card.json").read_text())["settings"]["samples_per_prompt"] == 2
    # the second epoch missing (a run stopped after epoch 1): imported as sample 0 only, the battery incomplete
    first = read_eval_log(log.location)
    first.samples = [s for s in first.samples if s.epoch == 1]
    write_eval_log(first, str(tmp_path / "epoch1.eval"))
    assert cli.main(["collect", "--import-inspect", str(tmp_path / "epoch1.eval"), "--out",
                     str(tmp_path / "half")]) == 3
    assert _answers_by_sample(tmp_path / "half") == {k: v for k, v in logged.items() if k[1] == 0}
