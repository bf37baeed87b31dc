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

from analysis import cli, config, estimators, prompts, records, registry, supplement  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.collection import answers as A  # noqa: E402
from analysis.collection import ledger as L  # noqa: E402
from analysis.supplement.regeneration import interval as regen_interval  # noqa: E402

CELL = "k12_LH_neutral_learned_zero"
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
    jobs = [jb for jb in C.job_list(CELL) if jb.pair_id < 3]
    with FakeLogprobs() as srv:
        res = C.collect(CELL, "openai", "local-model", tmp_path, base_url=srv.url, jobs=jobs, concurrency=2,
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
    sub = C.make_subject("openai", "local-model", CELL, base_url=srv.url, answer_format="logprobs")
    tool = C.make_subject("openai", "local-model", CELL, base_url=srv.url)
    assert C.request_key(sub)[0] != C.request_key(tool)[0]
    assert json.loads(C.request_key(sub)[1])["logprobs_request"]["top_logprobs"] == config.LOGPROBS_TOP


def test_logprobs_only_for_openai_compatible_servers(tmp_path):
    with pytest.raises(C.CollectionError, match="OpenAI-compatible"):
        C.collect(CELL, "anthropic", "claude-x", tmp_path, base_url="http://127.0.0.1:9", dry_run=True,
                  answer_format="logprobs")


# --- Supplementary Note 12 replayed through the runner with --samples 20 ------------------------------------

def replay_collect(tmp_path: Path, level: str, released: pd.DataFrame, samples: int) -> pd.DataFrame:
    """The released records of one SN 12 cell asked through :func:`analysis.collection.collect` (replay subject,
    counterfactual arms) with ``samples`` answers per prompt; returns the written records, normalised."""
    cell = supplement.REGEN_CELLS[level]
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
