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

from analysis import cli, config, prompts  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.collection import answers as A  # noqa: E402
from analysis.collection import ledger as L  # noqa: E402

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
