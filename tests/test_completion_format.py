"""``--answer-format completion`` (issue 23, deliverable 3): a base model without a chat template (Gemma 3 270M)
scored on the tokens 1 and 2 after a completion prompt, the way lm-evaluation-harness scores multiple choice.

Offline: :class:`fake_servers.FakeOpenAI` serves ``POST /v1/completions`` in llama-cpp-python's shape
(``choices[0].logprobs = {tokens, text_offset, token_logprobs, top_logprobs: [{token: logprob}]}``) and refuses
a chat model there with today's OpenAI 404. Tested against fakes only: no real server is run here.
"""
from __future__ import annotations

import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeOpenAI, stored_answers  # noqa: E402

from analysis import cli, config  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.cells import parse_cell  # noqa: E402
from analysis.audit.compare import deviations  # noqa: E402
from analysis.collection.answers import Reply  # noqa: E402
from analysis.collection.subjects.openai import COMPLETION_REQUEST, logprob_reply  # noqa: E402

CELL = "k12_LH_neutral_absent_zero"  # no examples: short prompts
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here
BASE = "gemma-3-270m"  # a base model, as llama-cpp-python's server names it
FAST = C.RetryPolicy(max_attempts=3, base=0.01, cap=0.05)
#: probability mass the fake puts outside the answer tokens 1 and 2
OUTSIDE = 0.25


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "fake-key-completion")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "fake-key-completion")
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def p_first_of(prompt: str) -> float:
    """The fake's P(patient 1) for a prompt: a fixed value in [0.05, 0.95] from the prompt's hash."""
    h = int(hashlib.sha256(prompt.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF
    return 0.05 + 0.9 * h


def _jobs(n_pairs: int = 2) -> list:
    return [jb for jb in C.job_list(PARSED) if jb.pair_id < n_pairs]


def _collect_cli(url: str, out: Path, model: str = BASE, provider: str = "openai", *extra) -> int:
    return cli.main(["collect", "--cell", CELL, "--provider", provider, "--model", model, "--base-url", url,
                     "--out", str(out), "--no-progress", "--backoff", "0.01", "--backoff-cap", "0.05",
                     "--answer-format", "completion", "--pairs", "1", *extra])


def test_the_request_is_a_text_completion_of_one_token_with_its_top_logprobs(tmp_path):
    jobs = _jobs()
    with FakeOpenAI() as srv:
        res = C.collect(PARSED, "openai", BASE, tmp_path, base_url=srv.url, jobs=jobs, concurrency=2, progress=False,
                        policy=FAST, answer_format="completion")
        reqs = list(srv.requests)
    assert res.complete and res.n_persisted == len(jobs)
    assert {r["path"] for r in reqs} == {"/v1/completions"}
    body = reqs[0]["body"]
    assert body["max_tokens"] == config.LOGPROBS_MAX_TOKENS == 1
    assert body["logprobs"] == config.COMPLETION_LOGPROBS == 20  # the completions API's integer top-k
    assert body["temperature"] == 0  # the sampling table: settable for an OpenAI-compatible server
    assert not {"messages", "tools", "tool_choice", "top_logprobs", "max_completion_tokens"} & set(body)
    assert {b["body"]["prompt"] for b in reqs} == {jb.prompt + config.COMPLETION_CUE for jb in jobs}
    assert body["prompt"].endswith("\nAnswer: Patient ")
    # the format is part of the request key: the logprobs and tool runs of the same model are other requests
    keys = {f: C.request_key(C.make_subject("openai", BASE, None, base_url=srv.url, answer_format=f))
            for f in ("completion", "logprobs", "tool")}
    assert len({k for k, _ in keys.values()}) == 3
    settings = json.loads(keys["completion"][1])
    assert settings["answer_format"] == "completion" and settings["endpoint"] == "/v1/completions"
    assert settings["completion_request"] == COMPLETION_REQUEST and settings["suffix"] == config.COMPLETION_CUE


def test_probabilities_are_normalised_over_1_and_2_and_the_mass_outside_is_kept(tmp_path):
    jobs = _jobs(3)
    with FakeOpenAI(p_first=p_first_of, outside=OUTSIDE) as srv:
        res = C.collect(PARSED, "openai", BASE, tmp_path, base_url=srv.url, jobs=jobs, concurrency=2, progress=False,
                        policy=FAST, answer_format="completion")
    rec = pd.read_csv(res.records_path)
    assert list(rec.columns) == C.RECORD_COLUMNS + ["p_first", "p_outside"]
    by_sha = {jb.prompt_sha256: jb for jb in jobs}
    want = np.array([p_first_of(by_sha[s].prompt + config.COMPLETION_CUE) for s in rec["prompt_sha256"]])
    assert_allclose(rec["p_first"], want, rtol=1e-9)  # "1" and " 1" summed, then normalised over 1 and 2
    assert_allclose(rec["p_outside"], OUTSIDE, rtol=1e-9)
    assert (rec["patient"] == np.where(want >= 0.5, 1, 2)).all()  # the sampled (argmax) token


def test_llama_cpp_python_completion_shape_is_read_by_the_one_parser():
    # top_logprobs as llama-cpp-python writes it: one {token: logprob} dict per generated token
    choice = {"text": " 2", "logprobs": {"tokens": [" 2"], "text_offset": [100], "token_logprobs": [math.log(0.5)],
                                         "top_logprobs": [{" 2": math.log(0.5), "1": math.log(0.2),
                                                           " 1": math.log(0.1), "\n": math.log(0.15)}]}}
    reply = logprob_reply(Reply(None), choice, choice["text"])
    assert reply.patient == 2  # the first token, stripped of its space
    assert_allclose([reply.p_first, reply.p_outside], [0.3 / 0.8, 0.2], rtol=1e-12)
    none = logprob_reply(Reply(None), {"text": "The", "logprobs": {"tokens": ["The"], "top_logprobs": [
        {"The": math.log(0.9)}]}}, "The")
    assert (none.patient, none.p_first, none.p_outside) == (None, None, None)


@pytest.mark.parametrize("provider, model", [("anthropic", "claude-sonnet-5-5"), ("simulated", "numeric-reader"),
                                             ("replay", "gpt")])
def test_providers_without_a_completions_route_are_refused_in_one_line(tmp_path, capsys, provider, model):
    code = _collect_cli("http://127.0.0.1:9/v1", tmp_path / "o", model, provider)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "--answer-format completion needs an OpenAI-compatible server" in err and f"--provider {provider}" in err
    assert not (tmp_path / "o").exists()
    audit = cli.main(["audit", "--provider", provider, "--model", model, "--out", str(tmp_path / "a"), "--battery",
                      "smoke", "--answer-format", "completion", "--dry-run"])
    err = capsys.readouterr().err
    assert audit == 2 and err.count("\n") == 1 and "--answer-format completion needs" in err


def test_the_batch_paths_are_refused_in_one_line(tmp_path, capsys):
    for flag in (["--batch"], ["--export-batch", str(tmp_path / "b.jsonl")]):
        code = _collect_cli("http://127.0.0.1:9/v1", tmp_path / "o", BASE, "openai", *flag)
        err = capsys.readouterr().err
        assert code == 2 and err.count("\n") == 1 and "cannot go through --batch" in err, flag
    code = cli.main(["audit", "--provider", "openai", "--model", BASE, "--base-url", "http://127.0.0.1:9/v1",
                     "--out", str(tmp_path / "a"), "--battery", "smoke", "--answer-format", "completion", "--batch"])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "cannot go through --batch" in err
    assert not (tmp_path / "b.jsonl").exists()


def test_a_chat_model_refused_on_v1_completions_is_one_clear_line_never_retried(tmp_path, capsys):
    with FakeOpenAI() as srv:
        code = _collect_cli(srv.url, tmp_path / "o", "gpt-4.1-mini", "openai", "--concurrency", "1")
        refused = list(srv.refused)
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1
    assert "gpt-4.1-mini is a chat model" in err and "refused it on /v1/completions (404)" in err
    assert "use --answer-format logprobs for a chat model" in err
    assert len(refused) == 1 and refused[0][1] == 404  # one request: a 404 is never retried
    assert "This is a chat model" in refused[0][2]["error"]["message"]
    assert stored_answers(tmp_path / "o") == 0


def test_a_smoke_audit_against_the_fake_writes_a_card_with_the_probability_check_and_the_deviation(tmp_path):
    # P(Patient 1) follows the patients (0.9 / 0.6) while the argmax always says Patient 1
    from fake_servers import simulated_answer

    right = simulated_answer()
    out = tmp_path / "o"
    with FakeOpenAI(p_first=lambda prompt: 0.9 if right(prompt) == 1 else 0.6) as srv:
        code = cli.main(["audit", "--provider", "openai", "--model", BASE, "--base-url", srv.url, "--out", str(out),
                         "--battery", "smoke", "--pairs", "2", "--draws", "200", "--no-progress",
                         "--no-reference-models", "--answer-format", "completion", "--price-in", "0",
                         "--price-out", "0"])
        paths = {r["path"] for r in srv.requests}
        n = len(srv.requests)
    assert code == 0 and paths == {"/v1/completions"} and n == 24
    card = json.loads((out / "report_card.json").read_text())
    assert card["settings"]["answer_format"] == "completion"
    assert card["settings"]["sampling"] == "temperature 0"
    assert card["subject"]["request_settings"]["endpoint"] == "/v1/completions"
    prob = card["responsiveness"]["probability"]
    assert prob["n_pairs"] == 4 and "--answer-format completion" in prob["statement"]
    assert "--answer-format logprobs" not in card["responsiveness"]["statement"]
    notice = " ".join(card["sampling_notice"])
    assert "lm-evaluation-harness multiple choice on a completion prompt" in notice
    assert "base models without a chat template" in notice and "Mean probability outside" in notice
    assert "answer format: completion" in deviations(card)
    html = (out / "report_card.html").read_text()
    assert "lm-evaluation-harness multiple choice" in html


def test_cli_help_names_the_format(capsys):
    assert "completion" in C.ANSWER_FORMATS and "completion" in C.PROBABILITY_FORMATS
    for cmd in ("collect", "audit"):
        with pytest.raises(SystemExit):
            cli.build_parser().parse_args([cmd, "--help"])
        assert "lm-evaluation-harness" in capsys.readouterr().out
