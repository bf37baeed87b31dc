"""Batch collection (issue 14): both providers' batch APIs against fakes on 127.0.0.1, kill -9 and resume,
retries of errored / expired requests, the budget's worst case, export / import for open-weight engines."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_batch_servers import FakeBatchServer, write_vllm_output  # noqa: E402

from analysis import collection as C  # noqa: E402
from analysis.cells import parse_cell
from analysis.collection import batch as B  # noqa: E402
from analysis.collection import batchapi as P  # noqa: E402
from analysis.collection import batchfiles as F  # noqa: E402
from analysis.collection.outputs import answer_row  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CELL = "k12_LH_neutral_learned_zero"
MODELS = {"anthropic": "claude-sonnet-4-5", "openai": "gpt-5.6-terra"}
FAST = B.BatchOptions(poll_interval=0.02, retries=3, max_polls=500)


def _jobs(n=24, cell=CELL):
    return C.job_list(parse_cell(cell))[:n]


def _subject(provider, srv, **kw):
    url = srv.url if provider == "anthropic" else srv.url + "/v1"
    return C.make_subject(provider, MODELS[provider], None, base_url=url, **kw)


def _expected(jobs):
    """The simulated subject's answers (the fakes answer with it)."""
    sim = C.SimulatedSubject.preset("numeric-reader")
    return {(jb.arm, jb.pair_id, jb.order): sim.choose(jb.prompt, jb.prompt_sha256) for jb in jobs}


def _records(res):
    df = pd.read_csv(res.records_path)
    return {(r.arm, int(r.pair_id), int(r.order)): int(r.patient) for r in df.itertuples(index=False)}


def test_custom_id_is_the_ledger_key_and_fits_anthropic_rules():
    jobs = _jobs(4)
    ids = [B.custom_id(jb, "k" * 20) for jb in jobs]
    assert len(set(ids)) == 4
    assert all(len(i) <= 64 and i.replace("_", "").replace("-", "").isalnum() for i in ids)
    assert ids == [B.custom_id(jb, "k" * 20) for jb in jobs]  # stable
    assert B.custom_id(jobs[0], "other-key") != ids[0]  # the request key is part of it


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_errored_and_expired_are_retried_in_a_new_batch(provider, tmp_path):
    jobs = _jobs(12)
    bad = {B.custom_id(jb, C.request_key(C.make_subject(provider, MODELS[provider], None, base_url="http://127.0.0.1:9",
                                                        require_key=False))[0]): kind
           for jb, kind in zip(jobs[:6], ["errored", "expired"] * 3)}
    with FakeBatchServer(outcome=lambda cid, n: bad.get(cid, "succeeded") if n == 1 else "succeeded") as srv:
        res = B.collect_batch(jobs, _subject(provider, srv), tmp_path, opts=FAST, progress=False)
        assert srv.live_resubmissions == []
        assert {cid: srv.submitted[cid] for cid in bad} == {cid: 2 for cid in bad}  # failed once, sent again
        assert sum(srv.submitted.values()) == len(jobs) + len(bad)
    r = res[0]
    assert r.complete and r.stopped == "" and r.n_requests == len(jobs) + len(bad)
    assert _records(r) == _expected(jobs)
    con = sqlite3.connect(tmp_path / C.LEDGER_NAME)
    outcomes = dict(con.execute("SELECT outcome, COUNT(*) FROM batch_requests GROUP BY outcome").fetchall())
    assert outcomes == {"succeeded": 12, "errored": 3, "expired": 3}
    assert con.execute("SELECT COUNT(*) FROM batches WHERE state = 'collected'").fetchone()[0] == 2


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_request_that_keeps_failing_is_given_up_after_retries(provider, tmp_path):
    jobs = _jobs(6)
    with FakeBatchServer(outcome=lambda cid, n: "errored" if cid == first else "succeeded") as srv:
        subject = _subject(provider, srv)
        first = B.custom_id(jobs[0], C.request_key(subject)[0])
        res = B.collect_batch(jobs, subject, tmp_path, opts=B.BatchOptions(poll_interval=0.01, retries=3),
                              progress=False)
        assert srv.submitted[first] == 3 and max(v for k, v in srv.submitted.items() if k != first) == 1
    r = res[0]
    assert not r.complete and r.stopped == "failures" and r.n_failed == 1 and r.n_persisted == 5


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_caps_and_the_budget_are_counted_before_a_batch_is_sent(provider, tmp_path):
    jobs = _jobs(30)
    with FakeBatchServer() as srv:
        subject = _subject(provider, srv)
        price = B.batch_price(C.load_prices(), provider, MODELS[provider])
        run = B.BatchRun(jobs, subject, C.Ledger(tmp_path / "l.sqlite"), FAST, price, None, False, None)
        worst = sum(run.worst_cost(jb) for jb in jobs)
        opts = B.BatchOptions(poll_interval=0.01, max_requests=7)
        res = B.collect_batch(jobs, subject, tmp_path, opts=opts, max_cost=worst / 2, progress=False)
        n_sent = sum(srv.submitted.values())
        assert 0 < n_sent <= len(jobs) / 2 + 1  # half the worst case: about half the requests
        assert all(len(b["requests"]) <= 7 for b in srv.batches.values())
    r = res[0]
    assert r.stopped == "budget" and r.n_persisted == n_sent and r.cost_usd <= worst / 2
    # the batch price is half the list price
    table = C.load_prices()
    assert B.batch_price(table, provider, MODELS[provider]) == tuple(0.5 * p for p in C.price_for(
        table, provider, MODELS[provider]))


def _start(argv):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "ANTHROPIC_API_KEY": "sk-test", "OPENAI_API_KEY": "sk-test"}
    return subprocess.Popen([sys.executable, "-m", "analysis", *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_kill_9_while_polling_then_the_same_audit_command_resumes_without_resending(provider, tmp_path):
    """``audit --batch``: kill -9 while the batches are live, then the same command completes the card."""
    n_pairs, cap = 5, 25  # smoke battery on 5 pairs: 2 cells x 5 pairs x 3 arms x 2 orders = 60 requests
    n = 60
    with FakeBatchServer(polls_to_end=10**9) as srv:  # batches stay live until the test lets them end
        url = srv.url if provider == "anthropic" else srv.url + "/v1"
        argv = ["audit", "--provider", provider, "--model", MODELS[provider], "--base-url", url, "--out",
                str(tmp_path), "--battery", "smoke", "--pairs", str(n_pairs), "--batch", "--poll-interval", "0.05",
                "--batch-max-requests", str(cap), "--draws", "200", "--no-reference-models", "--no-progress"]
        proc = _start(argv)
        deadline = time.time() + 90
        while time.time() < deadline and not (len(srv.batches) == 3 and
                                              min(b["polls"] for b in srv.batches.values()) >= 2):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(10)
        assert len(srv.batches) == 3 and sum(srv.submitted.values()) == n
        con = sqlite3.connect(tmp_path / C.LEDGER_NAME)
        states = [s for (s,) in con.execute("SELECT state FROM batches")]
        con.close()
        assert states == ["submitted"] * 3  # every batch id was persisted before polling began
        srv.polls_to_end = 3
        proc = _start(argv)
        out, err = proc.communicate(timeout=180)
        assert proc.returncode == 0, err
        assert (tmp_path / "report_card.json").exists()
        counts = sorted(set(srv.submitted.values()))
        assert counts == [1] and len(srv.submitted) == n and srv.live_resubmissions == []
        assert len(srv.batches) == 3
    card = json.loads((tmp_path / "report_card.json").read_text())
    assert card["subject"]["n_records"] == n
    print(f"{provider}: {n} requests, submissions per custom_id {counts}, batches {len(srv.batches)}")


def test_collect_cli_batch_dry_run_and_export_import(tmp_path, capsys):
    from analysis import cli

    base = ["collect", "--cell", CELL, "--provider", "openai", "--model", "Qwen/Qwen3-8B", "--out", str(tmp_path),
            "--base-url", "http://127.0.0.1:9/v1", "--pairs", "2", "--no-progress"]
    req, res = tmp_path / "req.jsonl", tmp_path / "res.jsonl"
    assert cli.main([*base, "--export-batch", str(req)]) == 0
    assert len(req.read_text().splitlines()) == 12 and "vllm run-batch" in capsys.readouterr().out
    write_vllm_output(req, res)
    assert cli.main([*base, "--import-batch", str(res)]) == 0
    assert "12 answers added" in capsys.readouterr().out
    assert cli.main([*base, "--export-batch", str(req)]) == 0 and req.read_text() == ""  # nothing pending
    assert cli.main(["collect", "--cell", CELL, "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--out",
                     str(tmp_path / "d"), "--batch", "--dry-run", "--pairs", "2"]) == 0
    out = capsys.readouterr().out
    assert "estimated cost" in out and "at the batch price (x0.5)" in out
    assert cli.main([*base, "--batch", "--export-batch", str(req)]) == 2  # one at a time


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_batch_created_but_not_recorded_is_adopted_not_resent(provider, tmp_path):
    """A kill between the create call and the commit of its id leaves the batch 'preparing' in the ledger."""
    jobs = _jobs(8)
    with FakeBatchServer() as srv:
        subject = _subject(provider, srv)
        ledger = C.Ledger(tmp_path / C.LEDGER_NAME)
        run = B.BatchRun(jobs, subject, ledger, FAST, None, None, False, None)
        items = [(B.custom_id(jb, run.key), jb) for jb in jobs]
        B._persist_batch(ledger, "local-orphan", subject, run.key, items, 0, None)
        run.client.create("local-orphan", [run.client.line(cid, jb) for cid, jb in items])  # id never committed
        ledger.close()
        res = B.collect_batch(jobs, subject, tmp_path, opts=FAST, progress=False)
        assert res[0].complete and set(srv.submitted.values()) == {1} and len(srv.batches) == 1


def test_prompt_cache_marks_the_shared_block_and_changes_the_request_key(tmp_path):
    jb = _jobs(1)[0]
    blocks = P.cache_blocks(jb.prompt)
    assert "".join(b["text"] for b in blocks) == jb.prompt
    assert blocks[0]["cache_control"] == {"type": "ephemeral"} and "cache_control" not in blocks[1]
    assert "TRAINING CASES" in blocks[0]["text"] and blocks[1]["text"].startswith("\n\nNEW PATIENTS:")
    no_examples = C.job_list(parse_cell("k12_LH_neutral_absent_zero"))[0].prompt
    assert P.cache_blocks(no_examples) == no_examples
    with FakeBatchServer() as srv:
        plain = _subject("anthropic", srv)
        cached = P.with_prompt_cache(_subject("anthropic", srv))
        assert C.request_key(plain)[0] != C.request_key(cached)[0]
        assert "prompt_cache" in json.loads(C.request_key(cached)[1]) and cached.tag("abcdefghij") == "sabcdefgh"
        res = B.collect_batch([jb], cached, tmp_path, opts=B.BatchOptions(poll_interval=0.01), progress=False)
        (b,) = srv.batches.values()
        content = b["requests"][0][1]["messages"][0]["content"]
        assert content[0]["cache_control"] == {"type": "ephemeral"}
        meta = json.loads(res[0].metadata_path.read_text())
        assert meta["this_run"]["prompt_cache"] is True and "prompt_cache" in meta["request_settings"]
    with pytest.raises(C.CollectionError):
        P.with_prompt_cache(C.make_subject("openai", "m", None, base_url="http://127.0.0.1:9/v1"))


def test_export_then_vllm_run_batch_output_then_import_round_trip(tmp_path):
    jobs = _jobs(20)
    subject = C.make_subject("openai", "Qwen/Qwen3-8B", None, base_url="http://127.0.0.1:8000/v1")
    ledger_path = tmp_path / C.LEDGER_NAME
    # five answers already in the ledger (a synchronous run): they are not exported again
    led = C.Ledger(ledger_path)
    key, settings_json = C.request_key(subject)
    led.register_request(key, subject, settings_json)
    sim = C.SimulatedSubject.preset("numeric-reader")
    led.put([answer_row(jb, key, sim.ask(jb), None, None) for jb in jobs[:5]], [])
    led.close()
    req = tmp_path / "requests.jsonl"
    assert F.export_batch(req, jobs, subject, ledger_path) == 15
    lines = [json.loads(x) for x in req.read_text().splitlines()]
    assert [ln["custom_id"] for ln in lines] == [B.custom_id(jb, key) for jb in jobs[5:]]
    assert all(ln["method"] == "POST" and ln["url"] == "/v1/chat/completions" for ln in lines)
    assert lines[0]["body"]["tools"][0]["function"]["name"] == "choose"
    assert lines[0]["body"]["messages"] == [{"role": "user", "content": jobs[5].prompt}]
    out = tmp_path / "results.jsonl"
    write_vllm_output(req, out)  # what `vllm run-batch -i requests.jsonl -o results.jsonl` writes
    with out.open("a") as fh:  # a line for a request we never made, and one error line
        fh.write(json.dumps({"custom_id": "pa_unknown", "response": None, "error": {"message": "x"}}) + "\n")
        fh.write(json.dumps({"custom_id": lines[0]["custom_id"], "response": {"status_code": 500, "body": {
            "error": {"message": "boom"}}}, "error": None}) + "\n")
    led = C.Ledger(ledger_path)
    counts = F.import_batch(out, jobs, subject, led)
    assert counts == {"lines": 17, "answers": 15, "kept_existing": 0, "errors": 1, "unknown": 1}
    again = F.import_batch(out, jobs, subject, led)  # importing twice adds nothing
    assert again["answers"] == 0 and again["kept_existing"] == 15
    rec, _ = C.write_outputs(tmp_path, subject, jobs, led, key, settings_json, {})
    led.close()
    df = pd.read_csv(rec)
    got = {(r.arm, int(r.pair_id), int(r.order)): int(r.patient) for r in df.itertuples(index=False)}
    assert got == _expected(jobs)
    assert F.export_batch(tmp_path / "rest.jsonl", jobs, subject, ledger_path) == 0


def test_openai_batch_output_and_error_lines_parse():
    ok = {"id": "batch_req_1", "custom_id": "a", "response": {"status_code": 200, "request_id": "r", "body": {
        "model": "m", "choices": [{"message": {"tool_calls": [{"function": {"name": "choose", "arguments": '{"patient": 2}'}}]},
                                   "finish_reason": "tool_calls"}], "usage": {"prompt_tokens": 5, "completion_tokens": 2}}},
          "error": None}
    r = P.openai_result(ok)
    assert r.kind == "succeeded" and r.reply.patient == 2 and r.reply.input_tokens == 5
    exp = P.openai_result({"custom_id": "b", "response": None, "error": {"code": "batch_expired", "message": "late"}})
    assert exp.kind == "expired"
    err = P.openai_result({"custom_id": "c", "response": {"status_code": 400, "body": {"error": {"message": "bad"}}}})
    assert err.kind == "errored" and "bad" in err.detail
