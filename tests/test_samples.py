"""``--samples R`` and ``--answer-format logprobs`` (issue 20, deliverables 3 and 4).

Offline: a fake OpenAI-compatible server on 127.0.0.1 that returns log-probabilities in the real
chat-completions shape (``choices[0].logprobs.content[0].top_logprobs``), the simulated subject, and
the released DeepSeek-V4.1-Flash temperature-1 records replayed through the runner.
"""
from __future__ import annotations

import hashlib
import json
import math
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeOpenAI  # noqa: E402

from analysis import audit as AU  # noqa: E402
from analysis.cells import parse_cell  # noqa: E402
from analysis.population import truth  # noqa: E402
from analysis import cli, config, estimators, prompts, records, registry, supplement  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.collection import answers as A  # noqa: E402
from analysis.collection import batch as B  # noqa: E402
from analysis.collection import batchfiles as F  # noqa: E402
from analysis.collection import ledger as L  # noqa: E402
from analysis.collection.outputs import answer_row  # noqa: E402
from analysis.supplement.regeneration import interval as regen_interval  # noqa: E402

CELL = "k12_LH_neutral_learned_zero"
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here
FAST = C.RetryPolicy(max_attempts=3, base=0.01, cap=0.05)
#: probability mass the fake puts outside the answer tokens 1 and 2
OUTSIDE = 0.1


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key-samples")
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def p_first_of(prompt: str) -> float:
    """The fake's P(patient 1) for a prompt: a fixed value in [0.05, 0.95] from the prompt's hash."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return 0.05 + 0.9 * h


class FakeLogprobs(FakeOpenAI):
    """An OpenAI-compatible server that answers ``logprobs: true`` requests with one token and its top
    log-probabilities, split as a real tokenizer would (``"1"`` and ``" 1"``) plus tokens outside 1 and 2."""

    def reply(self, n, body, prompt, patient, fault):
        out = super().reply(n, body, prompt, patient, fault)
        if not body.get("logprobs"):
            return out
        p1 = p_first_of(prompt)
        inside = 1 - OUTSIDE
        token = "1" if p1 >= 0.5 else "2"
        top = [{"token": "1", "logprob": math.log(inside * p1 * 0.8), "bytes": [49]},
               {"token": " 1", "logprob": math.log(inside * p1 * 0.2), "bytes": [32, 49]},
               {"token": "2", "logprob": math.log(inside * (1 - p1)), "bytes": [50]},
               {"token": "The", "logprob": math.log(OUTSIDE * 0.6), "bytes": [84, 104, 101]}]
        top.sort(key=lambda e: -e["logprob"])
        chosen = next(e for e in top if e["token"] == token)
        out["choices"][0]["message"] = {"role": "assistant", "content": token}
        out["choices"][0]["logprobs"] = {"content": [{"token": token, "logprob": chosen["logprob"],
                                                      "bytes": chosen["bytes"], "top_logprobs": top[: body.get(
                                                          "top_logprobs", 0)]}], "refusal": None}
        out["choices"][0]["finish_reason"] = "length"
        out["usage"]["completion_tokens"] = 1
        return out


def test_answer_token_probabilities_sum_spellings_and_report_outside():
    top = [{"token": "1", "logprob": math.log(0.5)}, {"token": " 1", "logprob": math.log(0.1)},
           {"token": "2", "logprob": math.log(0.2)}, {"token": "I", "logprob": math.log(0.15)}]
    p, out = A.answer_token_probabilities(top)
    assert_allclose([p, out], [0.6 / 0.8, 0.2], rtol=1e-12)
    assert A.answer_token_probabilities([{"token": "I", "logprob": -0.1}]) == (None, None)
    assert A.answer_token_probabilities(None) == (None, None)


def test_logprobs_against_a_fake_openai_server(tmp_path):
    jobs = [jb for jb in C.job_list(PARSED) if jb.pair_id < 3]
    with FakeLogprobs() as srv:
        res = C.collect(PARSED, "openai", "local-model", tmp_path, base_url=srv.url, jobs=jobs, concurrency=2,
                        progress=False, policy=FAST, answer_format="logprobs")
        bodies = [r["body"] for r in srv.requests]
    assert res.complete and res.n_persisted == len(jobs)
    body = bodies[0]
    assert body["logprobs"] is True and body["top_logprobs"] == config.LOGPROBS_TOP
    assert body["max_tokens"] == config.LOGPROBS_MAX_TOKENS == 1
    assert "tools" not in body and "tool_choice" not in body
    assert {b["messages"][0]["content"] for b in bodies} == {jb.prompt + prompts.TEXT_FALLBACK for jb in jobs}
    rec = pd.read_csv(res.records_path)
    assert list(rec.columns) == C.RECORD_COLUMNS + ["p_first", "p_outside"]
    by_sha = {jb.prompt_sha256: jb for jb in jobs}
    want = np.array([p_first_of(by_sha[s].prompt + prompts.TEXT_FALLBACK) for s in rec["prompt_sha256"]])
    assert_allclose(rec["p_first"], want, rtol=1e-9)
    assert_allclose(rec["p_outside"], OUTSIDE, rtol=1e-9)
    assert (rec["patient"] == np.where(want >= 0.5, 1, 2)).all()  # the sampled token
    # the format is part of the request key: the tool-format run of the same model is another request
    sub = C.make_subject("openai", "local-model", None, base_url=srv.url, answer_format="logprobs")
    tool = C.make_subject("openai", "local-model", None, base_url=srv.url)
    assert C.request_key(sub)[0] != C.request_key(tool)[0]
    assert json.loads(C.request_key(sub)[1])["logprobs_request"]["top_logprobs"] == config.LOGPROBS_TOP


def test_logprobs_only_for_openai_compatible_servers(tmp_path):
    with pytest.raises(C.CollectionError, match="OpenAI-compatible"):
        C.collect(PARSED, "anthropic", "claude-x", tmp_path, base_url="http://127.0.0.1:9", dry_run=True,
                  answer_format="logprobs")


# --- Supplementary Note 12 replayed through the runner with --samples 20 ------------------------------------

def replay_collect(tmp_path: Path, level: str, released: pd.DataFrame, samples: int) -> pd.DataFrame:
    """The released records of one SN 12 cell asked through :func:`analysis.collection.collect` (replay subject,
    counterfactual arms) with ``samples`` answers per prompt; returns the written records, normalised."""
    cell = parse_cell(supplement.REGEN_CELLS[level])
    jobs = [jb for jb in C.job_list(cell) if jb.arm in ("cf_a1", "cf_a0")]
    subject = C.ReplaySubject.from_records(f"deepseek-v4.1-{level}-r{samples}", cell, released)
    res = C.collect(cell, "replay", subject.model, tmp_path, jobs=jobs, subject=subject, samples=samples,
                    concurrency=1, progress=False)
    assert res.complete and res.n_jobs == len(jobs) * samples
    return records.normalise(pd.read_csv(res.records_path), cell)


@pytest.fixture(scope="module")
def sn12(tmp_path_factory) -> dict:
    out = {}
    for level in supplement.REGEN_CELLS:
        tmp = tmp_path_factory.mktemp(f"sn12_{level}")
        t1 = supplement.t1_records(level)
        frozen, _ = supplement.regeneration_records("deepseek-v4.1", level)
        out[level] = {"t1": t1, "prob": replay_collect(tmp, level, t1, 20),
                      "single": replay_collect(tmp, level, frozen, 1)}
    return out


def test_sn12_replay_with_20_samples_keeps_every_answer(sn12):
    for level, d in sn12.items():
        got, t1 = d["prob"], d["t1"]
        assert len(got) == len(t1) == 7920 and got["picked_i"].isna().sum() == t1["picked_i"].isna().sum() == 2
        key = ["arm", "pair_id", "order", "sample_id"]
        m = got.merge(t1, on=key, suffixes=("", "_released"))
        assert len(m) == 7920
        assert m["picked_i"].fillna(-1).equals(m["picked_i_released"].fillna(-1))


def test_sn12_numbers_through_the_runner_are_exact(sn12):
    """16.7 [14.0, 19.5] (zero information), 16.3 (beta = 0.60) and the difference 6.0 [1.4, 10.7]: the
    runner's records give the numbers of the note by the one rule (estimators.pair_pse) and spec R3's bootstrap."""
    reg = registry.registry().set_index("claim_id")
    ours = {}
    for level, d in sn12.items():
        prob = estimators.pair_pse(d["prob"], by="pair_id")
        single = estimators.pair_pse(d["single"], by="pair_id")
        common = prob.index.intersection(single.index).sort_values()
        p, s = prob[common].to_numpy(), single[common].to_numpy()
        pse, lo, hi = regen_interval(p, supplement.REGEN_SEED, supplement.REGEN_BOOT_DRAWS)
        diff, dlo, dhi = regen_interval(s - p, supplement.REGEN_SEED, supplement.REGEN_BOOT_DRAWS)
        ours.update({f"SN12.prob.{level}": pse, f"SN12.prob.{level}.lo": lo, f"SN12.prob.{level}.hi": hi,
                     f"SN12.diff.{level}": diff, f"SN12.diff.{level}.lo": dlo, f"SN12.diff.{level}.hi": dhi})
        # and the note's own computation from the released file agrees to the last bit
        ref = supplement.temperature_check(level)
        assert_allclose([pse, lo, hi, diff, dlo, dhi],
                        [ref[k] for k in ("prob_pp", "prob_lo", "prob_hi", "diff_pp", "diff_lo", "diff_hi")],
                        rtol=0, atol=1e-12)
    for cid in ("SN12.prob.zero", "SN12.prob.zero.lo", "SN12.prob.zero.hi", "SN12.prob.b060",
                "SN12.diff.zero", "SN12.diff.zero.lo", "SN12.diff.zero.hi"):
        printed = reg.at[cid, "paper_value"]
        assert registry.printed_like(ours[cid], printed) == printed, (cid, ours[cid], printed)


# --- the ledger: the sample index, the migration of a schema-1 ledger ---------------------------------------

V1_SCHEMA = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE requests (request_key TEXT PRIMARY KEY, provider TEXT NOT NULL, model TEXT NOT NULL,
    settings_json TEXT NOT NULL);
CREATE TABLE answers (
    cell TEXT NOT NULL, display TEXT NOT NULL, arm TEXT NOT NULL, pair_id INTEGER NOT NULL, ord INTEGER NOT NULL,
    request_key TEXT NOT NULL, prompt_sha256 TEXT NOT NULL,
    i INTEGER NOT NULL, j INTEGER NOT NULL, patient INTEGER, status TEXT NOT NULL,
    served_model TEXT, response_id TEXT, input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0, cost_usd REAL, n_requests INTEGER NOT NULL DEFAULT 1,
    reused_from TEXT, raw TEXT, created_utc TEXT NOT NULL,
    PRIMARY KEY (cell, display, arm, pair_id, ord, request_key, prompt_sha256));
CREATE INDEX answers_by_prompt ON answers (request_key, prompt_sha256);
CREATE TABLE attempts (
    id INTEGER PRIMARY KEY AUTOINCREMENT, cell TEXT, display TEXT, arm TEXT, pair_id INTEGER, ord INTEGER,
    request_key TEXT, prompt_sha256 TEXT, attempt INTEGER, kind TEXT, outcome TEXT, http_status INTEGER,
    detail TEXT, latency_s REAL, input_tokens INTEGER, output_tokens INTEGER, cost_usd REAL, created_utc TEXT);
INSERT INTO meta VALUES ('schema', '1');
"""


def simulated_v1_ledger(path: Path, jobs: list, subject) -> str:
    """A ledger as the collector before ``--samples`` wrote it (schema 1), holding answers to ``jobs``."""
    key, settings_json = C.request_key(subject)
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    con.execute("INSERT INTO requests VALUES (?, ?, ?, ?)", (key, subject.provider, subject.model, settings_json))
    rows = [{k: v for k, v in answer_row(jb, key, subject.ask(jb), None, None).items()
             if k in L.V1_ANSWER_COLUMNS} for jb in jobs]
    con.executemany(f"INSERT INTO answers ({', '.join(L.V1_ANSWER_COLUMNS)}) VALUES "
                    f"({', '.join(':' + c for c in L.V1_ANSWER_COLUMNS)})", rows)
    con.execute("INSERT INTO attempts (cell, kind) VALUES ('x', 'answer')")
    con.commit()
    con.close()
    return key


def test_a_schema_1_ledger_is_migrated_and_its_answers_become_sample_0(tmp_path):
    sim = C.SimulatedSubject.preset("numeric-reader")
    jobs = [jb for jb in C.job_list(PARSED) if jb.pair_id < 2]
    path = tmp_path / C.LEDGER_NAME
    key = simulated_v1_ledger(path, jobs, sim)
    C.check_ledger(path)  # read-only check accepts schema 1
    # the dry run reads a schema-1 ledger as it is: its answers are sample 0, sample 1 is still to ask
    p = C.collect(PARSED, "simulated", "numeric-reader", tmp_path, jobs=jobs, dry_run=True, samples=2)
    assert (p.n_jobs, p.n_persisted, p.n_calls, p.samples) == (2 * len(jobs), len(jobs), len(jobs), 2)
    led = C.Ledger(path)
    try:
        assert led.migrated
        assert led.con.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()[0] == str(C.LEDGER_SCHEMA)
        have = led.answers(CELL, "numeric", key)
        assert len(have) == len(jobs) and (have["sample"] == 0).all() and have["p_first"].isna().all()
        assert "sample" in {r[1] for r in led.con.execute("PRAGMA table_info(attempts)")}
        # sample 1 of the same job is another row (the key includes the sample)
        again = C.with_samples(jobs[:1], 2)[1]
        assert again.sample == 1
        assert led.put([answer_row(again, key, sim.ask(again), None, None)], []) == 1
        assert len(led.answers(CELL, "numeric", key)) == len(jobs) + 1
    finally:
        led.close()
    assert not C.Ledger(path).migrated  # once only


def test_samples_resume_asks_only_the_missing_samples_and_pays_none_twice(tmp_path):
    jobs = [jb for jb in C.job_list(PARSED) if jb.pair_id < 2]
    with FakeOpenAI() as srv:
        kw = dict(base_url=srv.url, jobs=jobs, concurrency=4, progress=False, policy=FAST)
        r2 = C.collect(PARSED, "openai", "local-model", tmp_path, samples=2, **kw)
        assert (r2.n_jobs, r2.n_requested_jobs, srv.count) == (2 * len(jobs), 2 * len(jobs), 2 * len(jobs))
        again = C.collect(PARSED, "openai", "local-model", tmp_path, samples=2, **kw)
        assert again.n_requested_jobs == 0 and srv.count == 2 * len(jobs)  # nothing asked twice
        r3 = C.collect(PARSED, "openai", "local-model", tmp_path, samples=3, **kw)
        assert r3.n_requested_jobs == len(jobs) and srv.count == 3 * len(jobs)  # only sample 2 of each job
        per_prompt = pd.Series([jb.prompt_sha256 for jb in jobs]).value_counts()  # some jobs share a prompt
        assert srv.ok_by_sha() == {sha: 3 * int(n) for sha, n in per_prompt.items()}
    rec = pd.read_csv(r3.records_path)
    assert len(rec) == 3 * len(jobs) and sorted(rec["sample_id"].unique()) == [0, 1, 2]
    assert list(rec.columns) == C.RECORD_COLUMNS + ["sample_id"]
    meta = json.loads(r3.metadata_path.read_text())
    assert meta["samples_per_job"] == 3 and meta["complete"]


def test_the_dry_run_prices_every_sample(tmp_path):
    jobs = [jb for jb in C.job_list(PARSED) if jb.pair_id < 3]
    kw = dict(jobs=jobs, dry_run=True, price=(1.0, 4.0), base_url="http://127.0.0.1:9/v1")
    one = C.collect(PARSED, "openai", "local-model", tmp_path, **kw)
    five = C.collect(PARSED, "openai", "local-model", tmp_path, samples=5, **kw)
    assert (five.n_jobs, five.n_calls) == (5 * one.n_jobs, 5 * one.n_calls)
    assert_allclose([five.cost_usd, five.cost_cap_usd, five.input_tokens],
                    [5 * one.cost_usd, 5 * one.cost_cap_usd, 5 * one.input_tokens], rtol=1e-12)
    assert "5 samples per prompt" in five.describe()


@pytest.mark.parametrize("bad", [0, -1, 1.5, True])
def test_samples_must_be_a_whole_number_of_at_least_one(tmp_path, bad):
    with pytest.raises(C.CollectionError, match="--samples"):
        C.collect(PARSED, "simulated", "numeric-reader", tmp_path, dry_run=True, samples=bad)


def test_cli_collect_samples(tmp_path, capsys):
    rc = cli.main(["collect", "--cell", CELL, "--provider", "simulated", "--model", "numeric-reader", "--out",
                   str(tmp_path), "--pairs", "2", "--samples", "3", "--no-progress"])
    assert rc == 0
    rec = pd.read_csv(next(tmp_path.rglob("*_records.csv")))
    assert len(rec) == 3 * 2 * 6 and rec.groupby(["arm", "pair_id", "order"]).size().eq(3).all()
    assert cli.main(["collect", "--cell", CELL, "--provider", "simulated", "--model", "numeric-reader", "--out",
                     str(tmp_path), "--samples", "0"]) == 2
    assert "--samples" in capsys.readouterr().err


# --- the batch path -----------------------------------------------------------------------------------------

def test_batch_custom_id_carries_the_sample_and_export_import_round_trips(tmp_path):
    from fake_batch_servers import write_vllm_output
    jobs = C.with_samples([jb for jb in C.job_list(PARSED) if jb.pair_id < 2], 2)
    subject = C.make_subject("openai", "Qwen/Qwen3-8B", None, base_url="http://127.0.0.1:8000/v1")
    key, _ = C.request_key(subject)
    ids = [B.custom_id(jb, key) for jb in jobs]
    n = len(jobs) // 2
    assert len(set(ids)) == len(jobs) and all(len(i) <= 64 for i in ids)
    assert ids[:n] == [B.custom_id(jb, key) for jb in C.job_list(PARSED)[:n]]  # sample 0 keeps its old id
    assert all(i.endswith("_s1") for i in ids[n:])
    req, out = tmp_path / "requests.jsonl", tmp_path / "results.jsonl"
    assert F.export_batch(req, jobs, subject, tmp_path / C.LEDGER_NAME) == len(jobs)
    write_vllm_output(req, out)
    led = C.Ledger(tmp_path / C.LEDGER_NAME)
    try:
        assert F.import_batch(out, jobs, subject, led)["answers"] == len(jobs)
        have = led.answers(CELL, "numeric", key)
    finally:
        led.close()
    assert sorted(have["sample"].value_counts().items()) == [(0, n), (1, n)]
    assert F.export_batch(tmp_path / "rest.jsonl", jobs, subject, tmp_path / C.LEDGER_NAME) == 0


# --- the audit: --samples R on the card, the temperature that cannot be fixed -------------------------------

def smoke_audit(out: Path, **kw):
    kw.setdefault("draws", 200)
    return AU.run_audit("simulated", "over-reads-ordered", out, battery="smoke", n_pairs=6, progress=False,
                       reference_rows=False, log=lambda *a: None, **kw)


def test_simulated_samples_are_independent_draws_that_approach_the_choice_probability():
    sim = C.SimulatedSubject.preset("numeric-reader")
    jobs = [jb for jb in C.job_list(PARSED) if jb.pair_id < 4]
    many = C.with_samples(jobs, 400)
    rec = pd.DataFrame(
        [{"arm": jb.arm, "pair_id": jb.pair_id, "i": jb.i, "j": jb.j, "order": jb.order,
          "picked_i": float((sim.ask(jb).patient == 1) == (jb.order == 0))} for jb in many])
    assert [sim.ask(jb).patient for jb in jobs] == [sim.choose(jb.prompt, jb.prompt_sha256) for jb in jobs]
    got = estimators.prompt_probabilities(rec)
    want = sim.probabilities(jobs).set_index(["i", "j", "arm", "order"])["p_pick_i"]
    assert_allclose(got.reindex(want.index).to_numpy(), want.to_numpy(), atol=0.08)  # 400 draws: sd <= 0.025


def test_audit_with_samples_reports_probabilities_and_agreement_first(tmp_path):
    one = smoke_audit(tmp_path / "r1", dry_run=True)
    three = smoke_audit(tmp_path / "r3", dry_run=True, samples=3)
    assert (three.plan["n_calls"] == 3 * one.plan["n_calls"]).all()
    res = smoke_audit(tmp_path / "run", samples=3)
    assert res.complete
    card = res.card
    assert card["settings"]["samples_per_prompt"] == 3
    first = card["summary"][:3]
    assert any(s.startswith("Choice probabilities: every prompt was asked 3 times") for s in first)
    agree = card["settings"]["within_prompt_agreement"]
    assert agree["samples"] == 3 and 0 < agree["pairwise"] < 1 and 0 < agree["unanimous"] < 1
    # the card's PSE is the mean per-pair contrast of per-prompt probabilities of the written records
    row = next(r for r in card["conditions"] if r["display"] == "numeric" and r["status"] == "computed")
    rec = records.normalise(pd.read_csv(next((tmp_path / "run").rglob(f"{row['cell']}*_records.csv"))))
    assert rec.groupby(["arm", "pair_id", "order"]).size().eq(3).all()
    eff = estimators.pair_effects(rec, truth(parse_cell(row["cell"]))).dropna()
    # the card is written at config.DERIVED_SIGNIFICANT_DIGITS (8) significant digits (portable outputs)
    assert_allclose(row["pse_pp"], 100 * eff["pse"].mean(), rtol=10.0 ** (1 - config.DERIVED_SIGNIFICANT_DIGITS))
    assert row["within_prompt_agreement"]["prompts"] == len(rec) // 3
    assert "Choice probabilities" in (tmp_path / "run" / AU.REPORT_HTML).read_text()


def test_a_temperature_that_cannot_be_set_is_said_in_the_first_lines(tmp_path, monkeypatch):
    real = AU.run.provenance

    def no_temperature(*args, **kw):  # what the settings table says for a provider that takes no temperature
        info = real(*args, **kw)
        info["sampling"] = {"temperature_settable": False,  # the block the sampling table fills (issue 20)
                            "sampling": "provider default sampling (temperature not settable)"}
        return info

    monkeypatch.setattr(AU.run, "provenance", no_temperature)
    card = smoke_audit(tmp_path / "r1").card
    head = card["summary"][:2]
    assert any(s.startswith("Sampling: the temperature cannot be set for this model (provider default sampling "
                            "(temperature not settable))") and "--samples" in s for s in head)
    card3 = smoke_audit(tmp_path / "r3", samples=2).card  # with R > 1 the card reports probabilities instead
    assert not any(s.startswith("Sampling:") for s in card3["summary"])
    assert any(s.startswith("Choice probabilities") for s in card3["summary"][:2])


def test_sampling_notice_reads_missing_keys_as_settable():
    assert AU.card.sampling_notice({"request_settings": {"settings": {"temperature": 0}}}, 1, "tool", []) == []
    lines = AU.card.sampling_notice({"request_settings": {"temperature_settable": False}}, 1, "tool", [])
    assert len(lines) == 1 and "provider default sampling" in lines[0]
    # the shape of the run settings' sampling block (card provenance): the string inside it is named
    info = {"sampling": {"temperature_settable": False, "sampling": "provider default sampling (temperature not "
                                                                    "settable)"}, "request_settings": {}}
    lines = AU.card.sampling_notice(info, 1, "tool", [])
    assert len(lines) == 1 and "(provider default sampling (temperature not settable))" in lines[0]
    assert AU.card.sampling_notice(info, 20, "tool", [])[0].startswith("Choice probabilities")
    logp = AU.card.sampling_notice({}, 1, "logprobs", [{"logprobs": {"mean_p_outside": 0.1}}])
    assert len(logp) == 1 and logp[0].startswith("Deviation from the protocol") and "10.0%" in logp[0]


def test_log_probabilities_give_the_choice_probability_of_one_call():
    # P(target) = p_first when the target is shown first (order 0), else 1 - p_first; picked_i (the sampled
    # token) is not used where a probability exists, and is used where a reply carried none
    rec = pd.DataFrame({"i": 1, "j": 2, "pair_id": 0, "arm": ["cf_a1", "cf_a1", "cf_a0", "cf_a0"],
                        "order": [0, 1, 0, 1], "picked_i": [1.0, 0.0, 1.0, 0.0],
                        "p_first": [0.8, 0.3, 0.4, None]})
    # cf_a1: (0.8 + 0.7) / 2; cf_a0: (0.4 + 0.0) / 2 (order 1 without log-probabilities: its sampled answer)
    assert_allclose(estimators.pair_pse(rec).iloc[0], 0.75 - 0.2, rtol=1e-12)
    assert_allclose(estimators.pair_pse(rec.drop(columns="p_first")).iloc[0], 0.5 - 0.5, atol=1e-15)


def test_estimate_reads_a_records_file_with_samples(tmp_path, capsys):
    assert cli.main(["collect", "--cell", CELL, "--provider", "simulated", "--model", "numeric-reader", "--out",
                     str(tmp_path), "--samples", "4", "--no-progress"]) == 0
    path = next(tmp_path.rglob("*_records.csv"))
    capsys.readouterr()
    assert cli.main(["estimate", "--cell", CELL, "--records", str(path)]) == 0
    got = json.loads(capsys.readouterr().out)
    rec = records.normalise(pd.read_csv(path), CELL)
    eff = estimators.pair_effects(rec, truth(PARSED)).dropna()
    assert_allclose(got["pse_pp"], 100 * eff["pse"].mean(), atol=1e-6)  # the CLI rounds to 6 decimals
    assert got["n_calls"] == 4 * 594
