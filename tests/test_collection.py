"""Tests of the collection stage (analysis/collection/): offline, against fake servers on 127.0.0.1
driven through the real ``anthropic`` and ``openai`` SDKs, the simulated subject and the replay."""
from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeAnthropic, FakeOpenAI  # noqa: E402

from analysis import collection as C  # noqa: E402
from analysis.cells import parse_cell
from analysis import cli, config, estimators, paths, records  # noqa: E402

CELL = "k12_LH_neutral_learned_zero"
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here
SENTINEL = "fake-key-SENTINEL-7f3a9c1e5b"  # not key-shaped, so secret scanners stay quiet
FAST = C.RetryPolicy(max_attempts=6, base=0.01, cap=0.05)
# the anthropic SDK flags the paper's model id as deprecated on every call
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def jobs() -> list[C.Job]:
    return C.job_list(PARSED)


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def cli_collect(argv: list[str]) -> int:
    return cli.main(["collect", *argv])


def cli_estimate(argv: list[str]) -> int:
    return cli.main(["estimate", *argv])


def _read_records(path) -> pd.DataFrame:
    return pd.read_csv(path, keep_default_na=True)


def _tree(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*")) if folder.exists() else []


# ---------------------------------------------------------------------------------------------
# Parsing and the simulated subject
# ---------------------------------------------------------------------------------------------
def test_parsing_follows_the_spec_rule():
    assert C.patient_from_args({"patient": 1}) == 1
    assert C.patient_from_args('{"patient": 2}') == 2
    assert C.patient_from_args({"patient": 3}) is None
    assert C.patient_from_args('{"patient": 1') is None
    assert C.patient_from_text("Patient 2 should be prioritized") == 2
    assert C.patient_from_text("I cannot decide.") is None
    assert C.patient_from_text("values 1.25 and 12") is None


def test_retry_after_headers():
    import email.utils

    assert C._retry_after({"retry-after": "3"}) == 3.0
    assert C._retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    when = email.utils.formatdate(time.time() + 20, usegmt=True)
    assert 15 <= C._retry_after({"retry-after": when}) <= 21
    assert C._retry_after({}) is None and C._retry_after({"retry-after": "soon"}) is None
    rng = __import__("random").Random(0)
    assert C.RetryPolicy(base=1, cap=30).delay(1, rng, retry_after=5.0) >= 5.0
    assert all(C.RetryPolicy(base=1, cap=30).delay(n, rng) <= 30 for n in range(1, 10))


def test_simulated_subject_reads_the_displayed_values(jobs):
    s = C.SimulatedSubject(C.SimulatedParams(position_bias=0.0))
    job = jobs[0]
    p = s.probability_first(job.prompt)
    swapped = next(j for j in jobs if j.key == (job.arm, job.pair_id, 1))
    assert s.probability_first(swapped.prompt) == pytest.approx(1 - p, abs=1e-12)
    # task values only: a hand computation from the displayed lines
    p1, p2 = C.read_patients(job.prompt)
    assert len(p1) == len(p2) == 12
    score = sum(float(v) for n, v in p1[:8]) + 0.5 * sum(float(v) for n, v in p1[8:])
    assert s.score(p1) == pytest.approx(score)
    # the choice is a keyed draw: same seed and prompt -> same answer; answers vary across seeds
    assert s.choose(job.prompt) == s.choose(job.prompt)
    answers = {C.SimulatedSubject.preset("numeric-reader", seed=k).choose(jobs[7].prompt) for k in range(40)}
    assert answers == {1, 2}


def test_simulated_presets_react_to_the_display():
    ordered = C.job_list(PARSED, display="ordered")
    codes = C.job_list(PARSED, display="arbitrary")
    numeric_reader = C.SimulatedSubject.preset("numeric-reader")
    over_reader = C.SimulatedSubject.preset("over-reads-ordered")
    ignorer = C.SimulatedSubject.preset("ignores-proxies")
    # level labels: only the ordered over-reader reacts; arbitrary codes carry no rank -> exactly zero
    assert numeric_reader.expected_pse(ordered) == pytest.approx(0.0, abs=1e-12)
    assert over_reader.expected_pse(ordered) > 10
    assert over_reader.expected_pse(codes) == pytest.approx(0.0, abs=1e-12)
    assert ignorer.expected_pse(ordered) == pytest.approx(0.0, abs=1e-12)


def test_simulated_expected_pse_is_the_mean_over_seeds(jobs):
    expected = C.SimulatedSubject.preset("numeric-reader").expected_pse(jobs)
    ignorer = C.SimulatedSubject.preset("ignores-proxies").expected_pse(jobs)
    assert expected > 10 and abs(ignorer) < 2  # numeric proxies read; task values nearly unchanged across arms
    est = []
    for seed in range(60):
        recs = C.simulate_records(C.SimulatedSubject.preset("numeric-reader", seed=seed), jobs)
        recs["picked_i"] = recs["picked_i"].astype(float)
        est.append(100 * estimators.pair_pse(recs).mean())
    # the standard error of a mean of 60 estimates is about 0.4 pp here
    assert np.mean(est) == pytest.approx(expected, abs=1.5)


def test_simulated_interval_coverage(jobs):
    cov = C.simulated_coverage(PARSED, "numeric-reader", seeds=range(100), jobs=jobs, draws=2000)
    rate = cov["covered"].mean()
    print(f"coverage of the 95% pair-bootstrap interval over 100 seeds: {rate:.2f}")
    # a 95 % interval covering fewer than 88 of 100 seeds would be a defect (binomial p < 0.005)
    assert rate >= 0.88


# ---------------------------------------------------------------------------------------------
# Request bodies through the real SDKs
# ---------------------------------------------------------------------------------------------
def test_anthropic_request_body(tmp_path, jobs):
    with FakeAnthropic(served_model="claude-sonnet-4-5-20250929") as srv:
        res = C.collect(PARSED, "anthropic", "claude-sonnet-4-5", tmp_path, base_url=srv.url, jobs=jobs[:6],
                        concurrency=1, progress=False, policy=FAST)
        bodies = [r["body"] for r in srv.requests]
        headers = srv.requests[0]["headers"]
    assert res.complete and len(bodies) == 6
    body = bodies[0]
    assert not {"temperature", "top_p", "top_k"} & set(body)  # API 2026-10-21 takes no sampling parameter (issue 20)
    assert body["max_tokens"] == 64
    assert body["model"] == "claude-sonnet-4-5"
    assert "system" not in body and "thinking" not in body
    assert body["messages"] == [{"role": "user", "content": jobs[0].prompt}]
    assert body["tools"] == [{"name": "choose", "description": "Select which patient to prioritize.",
                              "input_schema": {"type": "object",
                                               "properties": {"patient": {"type": "integer", "enum": [1, 2]}},
                                               "required": ["patient"]}}]
    assert body["tool_choice"] == {"type": "tool", "name": "choose"}
    assert set(body) == {"model", "max_tokens", "messages", "tools", "tool_choice"}
    assert headers["x-stainless-retry-count"] == "0"  # the SDK's own retries are off: ours apply
    meta = json.loads(res.metadata_path.read_text())
    assert meta["model_requested"] == "claude-sonnet-4-5"
    assert meta["models_served"] == {"claude-sonnet-4-5-20250929": 6}
    assert meta["sdk_versions"]["anthropic"] == "2.14.0"
    assert meta["tokens"]["input"] > 0 and meta["cost_usd"] > 0


@pytest.mark.parametrize("model, expect, absent", [
    ("DeepSeek-V4-Flash-0731", {"temperature": 0, "max_tokens": 64}, {"max_completion_tokens"}),
    ("gpt-5.6-terra", {"max_completion_tokens": 2048}, {"temperature", "max_tokens", "reasoning_effort"}),
    ("qwen3.7-max", {"temperature": 0, "max_tokens": 64, "enable_thinking": False}, {"max_completion_tokens"}),
])
def test_openai_request_body(tmp_path, jobs, model, expect, absent):
    with FakeOpenAI() as srv:
        res = C.collect(PARSED, "openai", model, tmp_path, base_url=srv.url, jobs=jobs[:4], concurrency=1,
                        progress=False, policy=FAST)
        body = srv.requests[0]["body"]
    assert res.complete
    for k, v in expect.items():
        assert body[k] == v
    assert not (absent & set(body))
    assert body["messages"] == [{"role": "user", "content": jobs[0].prompt}]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "choose"}}
    assert body["tools"][0]["function"]["name"] == "choose"
    assert body["tools"][0]["function"]["parameters"]["properties"]["patient"] == {"type": "integer", "enum": [1, 2]}


def test_live_answers_equal_the_simulated_subject(tmp_path, jobs):
    """The fake server answers with the simulated subject: the live path must record exactly its answers."""
    sub = jobs[:60]
    with FakeOpenAI() as srv:
        res = C.collect(PARSED, "openai", "DeepSeek-V4-Flash-0731", tmp_path, base_url=srv.url, jobs=sub,
                        concurrency=8, progress=False, policy=FAST)
    got = _read_records(res.records_path)
    want = C.simulate_records(C.SimulatedSubject.preset("numeric-reader"), sub)
    assert got["patient"].tolist() == want["patient"].astype(int).tolist()
    assert got["chosen"].tolist() == want["chosen"].astype(int).tolist()
    assert list(got.columns) == C.RECORD_COLUMNS


# ---------------------------------------------------------------------------------------------
# Faults, retries, re-asking
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("server", [FakeAnthropic, FakeOpenAI])
def test_faults_are_retried_and_invalid_answers_recorded_missing(tmp_path, jobs, server):
    sub = jobs[:24]
    plan = {0: "429", 3: "500", 5: "529", 7: "slow", 9: "drop", 11: "no_tool", 13: "bad_patient", 15: "bad_json"}
    provider = "anthropic" if server is FakeAnthropic else "openai"
    with server(faults=plan, retry_after=0.3, slow_seconds=2.0) as srv:
        res = C.collect(PARSED, provider, "m-1", tmp_path, base_url=srv.url, jobs=sub, concurrency=1,
                        progress=False, policy=FAST, timeout=1.0, prices=_price_file(tmp_path))
        reqs = list(srv.requests)
    assert res.complete and res.n_persisted == 24 and res.stopped == ""
    # 5 transport faults retried -> 24 + 5 requests; the 3 malformed answers are answers (not retried)
    assert len(reqs) == 29
    # retry-after honoured: the request after the 429 came at least 0.3 s later
    assert reqs[1]["t"] - reqs[0]["t"] >= 0.3
    recs = _read_records(res.records_path)
    assert recs["picked_i"].isna().sum() == 3
    led = C.Ledger(tmp_path / C.LEDGER_NAME)
    att = led.attempts(CELL)
    led.close()
    assert Counter(att["outcome"]) == Counter({"valid": 21, "invalid": 3, "rate_limit": 1, "server": 2,
                                              "timeout": 1, "connection": 1})
    assert set(att.loc[att["outcome"] == "server", "http_status"]) == {500, 529}


def _price_file(tmp_path: Path) -> Path:
    p = tmp_path / "prices.json"
    p.write_text(json.dumps({"anthropic/*": [3.0, 15.0], "openai/*": [1.0, 2.0]}))
    return p


def test_reask_rule_logs_every_attempt(tmp_path, jobs):
    sub = jobs[:3]
    # job 0: two malformed answers, then valid; with reask=5 it resolves on the third answer
    with FakeAnthropic(faults={0: "no_tool", 1: "bad_patient"}) as srv:
        res = C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=1,
                        progress=False, policy=FAST, reask=5)
    assert res.complete and len(srv.requests) == 5
    led = C.Ledger(tmp_path / C.LEDGER_NAME)
    att = led.attempts(CELL)
    ans = led.answers(CELL, "numeric", C.request_key(C.make_subject("anthropic", "m", None,
                                                                    base_url=srv.url))[0])
    led.close()
    first = att[(att["arm"] == sub[0].arm) & (att["pair_id"] == 0) & (att["ord"] == 0)]
    assert first["outcome"].tolist() == ["invalid", "invalid", "valid"]
    assert first["attempt"].tolist() == [1, 2, 3]
    assert ans["patient"].notna().all() and ans["n_requests"].max() == 3
    # without re-asking the same faults leave the job missing
    with FakeAnthropic(faults={0: "no_tool"}) as srv:
        res = C.collect(PARSED, "anthropic", "m", tmp_path / "b", base_url=srv.url, jobs=sub, concurrency=1,
                        progress=False, policy=FAST)
    assert _read_records(res.records_path)["patient"].isna().sum() == 1


def test_exhausted_retries_leave_the_job_unanswered_and_resumable(tmp_path, jobs):
    sub = jobs[:10]
    bad = sub[4].prompt

    def faults(n, body):
        return "500" if body["messages"][0]["content"] == bad else None

    with FakeOpenAI(faults=faults) as srv:
        res = C.collect(PARSED, "openai", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=3, progress=False,
                        policy=C.RetryPolicy(3, 0.01, 0.02))
        assert res.stopped == "failures" and res.n_persisted == 9 and res.n_failed == 1
        assert len(_read_records(res.records_path)) == 9
        n_before = srv.count
        srv.faults = lambda n, body: None
        res2 = C.collect(PARSED, "openai", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=3,
                         progress=False, policy=FAST)
        assert srv.count - n_before == 1  # only the unanswered job is requested again
    assert res2.complete and res2.stopped == ""


def test_rejected_request_stops_with_one_redacted_line(tmp_path, jobs, capsys):
    with FakeOpenAI(faults=lambda n, body: "401") as srv:
        code = cli_collect(["--cell", CELL, "--provider", "openai", "--model", "m", "--base-url", srv.url,
                              "--out", str(tmp_path / "o"), "--no-progress", "--concurrency", "2"])
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1 and "AuthenticationError" in err
    assert SENTINEL not in err and "[redacted]" in err


# ---------------------------------------------------------------------------------------------
# The ledger: resume, reuse, kill -9, budget
# ---------------------------------------------------------------------------------------------
def test_rerun_never_requests_a_persisted_answer(tmp_path, jobs):
    sub = jobs[:30]
    with FakeAnthropic() as srv:
        C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub[:20], concurrency=4, progress=False)
        assert srv.count == 20
        res = C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=4,
                        progress=False)
        assert srv.count == 30
        C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=4, progress=False)
        assert srv.count == 30
        # a different request setting is a different request: asked again
        C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub[:2], concurrency=1,
                  progress=False, settings={"max_tokens": 32})  # (API 2026-10-21 takes no temperature)
        assert srv.count == 32
    assert res.complete and len(_read_records(res.records_path)) == 30


def test_interrupt_inside_a_commit_loses_no_paid_answer(tmp_path, jobs, monkeypatch):
    """A Ctrl-C that lands while a batch is being committed must not lose (and later repay) its answers."""
    sub = jobs[:24]
    real_put = C.Ledger.put
    state = {"calls": 0}

    def flaky_put(self, answers, attempts):
        state["calls"] += 1
        if state["calls"] == 2 and answers:  # the second commit of the run is interrupted mid-way
            raise KeyboardInterrupt
        return real_put(self, answers, attempts)

    with FakeAnthropic() as srv:
        monkeypatch.setattr(C.Ledger, "put", flaky_put)
        with pytest.raises(KeyboardInterrupt):
            C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=4, progress=False)
        asked_first = srv.count
        monkeypatch.setattr(C.Ledger, "put", real_put)
        res = C.collect(PARSED, "anthropic", "m", tmp_path, base_url=srv.url, jobs=sub, concurrency=4, progress=False)
        assert res.complete
        # every answer received before the interrupt was kept: the resume asks only for the rest
        assert srv.count == len(sub), (asked_first, srv.count)


def test_identical_prompts_requested_once_only_with_reuse(tmp_path, jobs):
    distinct = len({j.prompt_sha256 for j in jobs})
    assert distinct < len(jobs)  # one counterfactual arm repeats the factual prompt in every pair
    with FakeOpenAI(keep_bodies=False) as srv:
        res = C.collect(PARSED, "openai", "m", tmp_path / "a", base_url=srv.url, jobs=jobs, concurrency=16,
                        progress=False, reuse_identical_prompts=True)
        assert srv.count == distinct
        C.collect(PARSED, "openai", "m", tmp_path / "b", base_url=srv.url, jobs=jobs, concurrency=16, progress=False)
        assert srv.count == distinct + len(jobs)
    recs = _read_records(res.records_path)
    assert len(recs) == len(jobs) and recs.groupby("prompt_sha256")["patient"].nunique().max() == 1
    meta = json.loads(res.metadata_path.read_text())
    assert meta["n_reused"] == len(jobs) - distinct and meta["reuse_identical_prompts"] is True


def test_budget_stops_cleanly_and_resumes(tmp_path, jobs, capsys):
    sub = jobs[:40]
    prices = _price_file(tmp_path)
    per_call = C.cost_of((1.0, 2.0), *C.estimate_tokens(sub[0].prompt,
                                                        C.make_subject("openai", "m", None, base_url="http://127.0.0.1:1"))[:2])
    budget = 10.5 * per_call
    with FakeOpenAI() as srv:
        code = cli_collect(["--cell", CELL, "--provider", "openai", "--model", "m", "--base-url", srv.url,
                              "--out", str(tmp_path / "o"), "--no-progress", "--concurrency", "4",
                              "--max-cost", str(budget), "--prices", str(prices)])
        err = capsys.readouterr().err
        assert code == 3 and "stopped at the budget" in err
        n_first = srv.count
        assert 5 <= n_first <= 11
        meta = json.loads(next((tmp_path / "o").rglob("*_metadata.json")).read_text())
        assert meta["this_run"]["cost_usd"] <= budget * 1.2 and meta["complete"] is False
        # resume without a budget on the same jobs: nothing already persisted is asked again
        res = C.collect(PARSED, "openai", "m", tmp_path / "o", base_url=srv.url, jobs=sub, concurrency=4,
                        progress=False, prices=prices)
        assert srv.count == n_first + (40 - meta["n_records"])
    assert res.complete


def _count_ok(server) -> Counter:
    return Counter(server.ok_by_sha())


def test_kill_minus_nine_then_resume(tmp_path, jobs):
    """kill -9 mid-run (with faults): the resumed run completes with 100 % of rows and never requests
    an answer that was persisted before the kill."""
    out = tmp_path / "o"
    rng = np.random.default_rng(5)
    fault_draw = {n: f for n, f in enumerate(rng.choice(["500", "429", "drop", "529", None], size=5000,
                                                          p=[0.03, 0.02, 0.02, 0.02, 0.91]))}
    with FakeAnthropic(faults=lambda n, body: fault_draw.get(n), retry_after=0.05, latency=0.02) as srv:
        env = {**os.environ, "ANTHROPIC_API_KEY": SENTINEL, "PYTHONUNBUFFERED": "1"}
        cmd = [sys.executable, "-m", "analysis", "collect", "--cell", CELL, "--provider", "anthropic",
               "--model", "claude-sonnet-4-5", "--base-url", srv.url, "--out", str(out), "--concurrency", "4",
               "--backoff", "0.01", "--backoff-cap", "0.05", "--no-progress"]
        proc = subprocess.Popen(cmd, env=env, cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 60
        while len(srv.ok) < 200 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        assert proc.returncode == -signal.SIGKILL
        ledger = out / C.LEDGER_NAME
        C.check_ledger(ledger)  # healthy after the kill
        con = sqlite3.connect(ledger)
        persisted = con.execute("SELECT prompt_sha256 FROM answers").fetchall()
        con.close()
        assert 100 <= len(persisted) < len(jobs)
        ok_before = _count_ok(srv)
        assert not (out / "anthropic").exists()  # records are written at the end of a run
        res = C.collect(PARSED, "anthropic", "claude-sonnet-4-5", out, base_url=srv.url, jobs=jobs, concurrency=4,
                        progress=False, policy=FAST)
        ok_after = _count_ok(srv) - ok_before
    assert res.complete and res.stopped == ""
    recs = _read_records(res.records_path)
    assert len(recs) == len(jobs) and not recs.duplicated(["arm", "pair_id", "order"]).any()
    assert recs["picked_i"].notna().all()
    # no persisted answer requested twice: per prompt, answers served after the kill = jobs not yet persisted
    per_sha_jobs = Counter(j.prompt_sha256 for j in jobs)
    per_sha_persisted = Counter(s for (s,) in persisted)
    need = per_sha_jobs - per_sha_persisted
    assert ok_after == need
    # every answer in the final ledger is unique per job and came from a distinct response
    con = sqlite3.connect(out / C.LEDGER_NAME)
    ids = [r[0] for r in con.execute("SELECT response_id FROM answers")]
    con.close()
    assert len(ids) == len(set(ids)) == len(jobs)


# ---------------------------------------------------------------------------------------------
# The key never leaks; errors are one line and write nothing
# ---------------------------------------------------------------------------------------------
def test_api_key_never_reaches_any_output(tmp_path, jobs, capsys):
    out = tmp_path / "o"
    plan = {1: "500", 2: "429", 4: "no_tool"}
    with FakeAnthropic(faults=plan, retry_after=0.01) as srv:
        code = cli_collect(["--cell", CELL, "--provider", "anthropic", "--model", "m", "--base-url",
                              srv.url + "/", "--out", str(out), "--concurrency", "4", "--backoff", "0.01"])
        assert srv.requests[0]["headers"].get("x-api-key", srv.requests[0]["headers"].get("authorization", "")
                                              ).endswith(SENTINEL)  # the key did reach the server
    captured = capsys.readouterr()
    assert code == 0
    blobs = [captured.out, captured.err] + [p.read_bytes().decode("latin-1") for p in out.rglob("*") if p.is_file()]
    assert len(blobs) >= 5  # records, metadata, ledger (+ WAL) and both streams
    assert not any(SENTINEL in b or SENTINEL[8:] in b for b in blobs)


@pytest.mark.parametrize("args, message", [
    (["--provider", "bogus", "--model", "m"], "unknown provider 'bogus'"),
    (["--provider", "simulated", "--model", "m", "--cell", "k13_LH_neutral_learned_zero"], "unknown cell id"),
    (["--provider", "simulated", "--model", "nobody"], "unknown simulated model"),
    (["--provider", "replay", "--model", "gpt", "--cell", "k6_LL_neutral_absent_zero"], "not in the release"),
])
def test_bad_arguments_one_line_exit_2_nothing_written(tmp_path, capsys, args, message):
    out = tmp_path / "o"
    argv = ["--cell", CELL, "--out", str(out), "--no-progress"] + args
    code = cli_collect(argv)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and message in err
    assert not out.exists()


def test_unwritable_output_folder(tmp_path, capsys):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    before = _tree(tmp_path)
    for out in (blocker, blocker / "sub"):
        code = cli_collect(["--cell", CELL, "--provider", "simulated", "--model", "numeric-reader",
                              "--out", str(out), "--no-progress"])
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "output folder" in err
    if os.geteuid() != 0:  # root writes anywhere; a read-only folder only stops other users
        ro = tmp_path / "ro"
        ro.mkdir(mode=0o555)
        before = _tree(tmp_path)
        assert cli_collect(["--cell", CELL, "--provider", "simulated", "--model", "numeric-reader",
                              "--out", str(ro / "x"), "--no-progress"]) == 2
        capsys.readouterr()
    assert _tree(tmp_path) == before


def test_corrupted_ledger(tmp_path, capsys):
    out = tmp_path / "o"
    out.mkdir()
    (out / C.LEDGER_NAME).write_bytes(b"this is not a database" * 100)
    before = _tree(out)
    code = cli_collect(["--cell", CELL, "--provider", "simulated", "--model", "numeric-reader",
                          "--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "corrupted" in err
    assert _tree(out) == before
    # a truncated real ledger is refused too
    good = tmp_path / "good"
    C.collect(PARSED, "simulated", "numeric-reader", good, concurrency=1, progress=False)
    data = (good / C.LEDGER_NAME).read_bytes()
    (out / C.LEDGER_NAME).write_bytes(data[: len(data) // 3])
    assert cli_collect(["--cell", CELL, "--provider", "simulated", "--model", "numeric-reader",
                          "--out", str(out), "--no-progress"]) == 2
    assert "corrupted" in capsys.readouterr().err


def test_dry_run_prints_calls_tokens_cost_and_writes_nothing(tmp_path, capsys, monkeypatch):
    out = tmp_path / "o"
    monkeypatch.delenv("ANTHROPIC_API_KEY")  # a dry run needs no key; a real run does
    assert cli_collect(["--cell", CELL, "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                          "--out", str(out)]) == 2
    assert "no API key: set the environment variable ANTHROPIC_API_KEY" in capsys.readouterr().err
    code = cli_collect(["--cell", CELL, "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                          "--out", str(out), "--dry-run"])
    text = capsys.readouterr().out
    assert code == 0 and not out.exists()
    assert "calls to make 594" in text and "estimated cost: $" in text and "input" in text
    # a price override (env var, JSON) changes the cost; reuse counts the repeated prompts
    p = tmp_path / "p.json"
    p.write_text(json.dumps({"anthropic/claude-sonnet-4-5": [0.0, 0.0]}))
    monkeypatch.setenv(C.PRICES_ENV, str(p))
    assert cli_collect(["--cell", CELL, "--provider", "anthropic", "--model", "claude-sonnet-4-5",
                          "--out", str(out), "--dry-run", "--reuse-identical-prompts"]) == 0
    text = capsys.readouterr().out
    assert "estimated cost: $0.00" in text and "calls to make 396" in text
    # an unknown model has no price: said plainly, and a budget is refused
    monkeypatch.delenv(C.PRICES_ENV)
    assert cli_collect(["--cell", CELL, "--provider", "openai", "--model", "my-local-model", "--base-url",
                          "http://127.0.0.1:9/v1", "--out", str(out), "--dry-run"]) == 0
    assert "unknown (no price" in capsys.readouterr().out
    assert cli_collect(["--cell", CELL, "--provider", "openai", "--model", "my-local-model", "--base-url",
                          "http://127.0.0.1:9/v1", "--out", str(out), "--max-cost", "1"]) == 2
    assert "--max-cost needs a price" in capsys.readouterr().err
    assert not out.exists()


def test_dry_run_counts_what_the_ledger_holds(tmp_path, jobs):
    with FakeOpenAI() as srv:
        C.collect(PARSED, "openai", "m", tmp_path, base_url=srv.url, jobs=jobs[:50], concurrency=4, progress=False)
    plan = C.collect(PARSED, "openai", "m", tmp_path, base_url=srv.url, dry_run=True)
    assert isinstance(plan, C.Plan) and plan.n_persisted == 50 and plan.n_calls == len(jobs) - 50


# ---------------------------------------------------------------------------------------------
# Replay and estimate
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("model, cell", [
    ("sonnet", "k12_LH_neutral_learned_zero"),  # 4 missing answers in the release
    ("qwen", "k12_LH_social_learned_info_b045_s20001"),
    ("gpt", "k6_HH_neutral_learned_zero"),
])
def test_replay_reproduces_the_released_records(tmp_path, model, cell):
    cell = parse_cell(cell)
    res = C.collect(cell, "replay", model, tmp_path, concurrency=1, progress=False)
    cmp = C.compare_with_release(res.records_path, model, cell)
    assert cmp["equal"] and cmp["pair_id_equal"], cmp
    ours = records.normalise(pd.read_csv(res.records_path)).sort_values(["arm", "i", "j", "order"])
    rel = records.load_records(model, cell).sort_values(["arm", "i", "j", "order"])
    cols = records.RECORD_COLUMNS
    pd.testing.assert_frame_equal(ours[cols].reset_index(drop=True), rel[cols].reset_index(drop=True))


def test_replay_reports_released_chosen_defects(tmp_path):
    """Two released Sonnet files store the shown number / a letter in ``chosen`` of the factual arm."""
    cell = parse_cell("k12_LH_neutral_learned_info_b060")
    res = C.collect(cell, "replay", "sonnet", tmp_path, concurrency=1, progress=False)
    cmp = C.compare_with_release(res.records_path, "sonnet", cell)
    assert cmp["patient_equal"] and cmp["picked_i_equal"] and not cmp["chosen_equal"]
    assert cmp["chosen_differs"] == 198  # the 198 factual rows


def test_cli_estimate_prints_the_cell_summary(tmp_path, capsys):
    res = C.collect(PARSED, "replay", "sonnet", tmp_path, concurrency=1, progress=False)
    assert cli_estimate(["--cell", CELL, "--records", str(res.records_path)]) == 0
    out = json.loads(capsys.readouterr().out)
    for k in ("pse_pp", "pse_ci", "error_pct", "n_pairs", "missing_rate"):
        assert k in out
    want = estimators.cell_estimates(records.load_records("sonnet", PARSED))
    assert out["pse_pp"] == pytest.approx(want["pse_pp"], abs=1e-6)
    assert out["pse_ci"] == pytest.approx(want["pse_ci"], abs=1e-6)
    assert out["n_pairs"] == want["n_pairs"] and len(out["pse_ci"]) == 2
    assert round(out["pse_pp"], 1) == 21.2  # Table 6: continuous numeric, battery +21.21
    assert cli_estimate(["--cell", "nope", "--records", str(res.records_path)]) == 2
    assert cli_estimate(["--cell", CELL, "--records", str(tmp_path / "missing.csv")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and "unknown cell id" in err and "not found" in err


def test_atomic_write_gives_the_permissions_of_a_plain_open(tmp_path):
    """Records, metadata and report cards are shared files: not the temporary file's private 0o600."""
    import os

    umask = os.umask(0o022)
    try:
        C.atomic_write(tmp_path / "records.csv", b"x\n")
        assert (tmp_path / "records.csv").stat().st_mode & 0o777 == 0o644
    finally:
        os.umask(umask)


def test_sdk_versions_are_read_once_and_equal_a_fresh_reading():
    """issue 21 speed: the versions are cached per process; a copy equal to a fresh look-up."""
    from analysis.collection import outputs

    fresh = outputs._sdk_versions.__wrapped__()
    got = outputs.sdk_versions()
    got["numpy"] = "edited"
    assert outputs.sdk_versions() == fresh and fresh["python"] and "pandas" in fresh
