"""The token estimate calibrated per endpoint from a real server's usage (issue 23: the plan estimated 1,424 input
tokens a call where llama-cpp-python counted 3,167 for SmolLM2-135M)."""
from __future__ import annotations

import json
from pathlib import Path

from numpy.testing import assert_allclose

from analysis import collection as C
from analysis.audit.batteries import battery_conditions, first_pairs, jobs_of

CARD = Path(__file__).resolve().parents[1] / "audit_out" / "example" / "report_card.json"


def _local_factor_of_the_committed_card() -> tuple[float, int]:
    """The server's input tokens over the uncalibrated estimate of the same prompts (regenerated from the battery)."""
    card = json.loads(CARD.read_text())
    assert card["battery"] == "smoke" and card["subject"]["provider"] == "openai"
    assert "127.0.0.1" in card["subject"]["base_url"]
    n_pairs = {r["key"]: r["n_calls"] // 6 for r in card["conditions"]}
    conds = [c for c in first_pairs(battery_conditions("smoke"), max(n_pairs.values())) if c.key in n_pairs]
    jobs = [jb for c in conds for jb in jobs_of(c)]
    assert len(jobs) == card["subject"]["n_records"]
    est = sum(C.raw_input_estimate(jb.prompt, "openai") for jb in jobs)
    return card["subject"]["tokens"]["input"] / est, len(jobs)


def test_local_factor_is_the_one_measured_on_the_committed_card():
    factor, n = _local_factor_of_the_committed_card()
    assert n >= 12
    assert_allclose(C.INPUT_TOKEN_FACTOR["local"], factor, rtol=0.01)


def test_estimate_is_calibrated_for_a_local_endpoint_only():
    job = jobs_of(battery_conditions("smoke")[1])[0]  # an 80-example prompt
    local = C.make_subject("openai", "smollm2-135m", None, base_url="http://127.0.0.1:8080/v1", api_key_env="NONE_SET")
    hosted = C.make_subject("openai", "gpt-x", None, base_url="https://api.example.org/v1", api_key_env="PATH")
    assert C.endpoint_kind(local) == "local" and C.endpoint_kind(hosted) == "openai"
    raw = C.raw_input_estimate(job.prompt, "openai")
    assert C.estimate_tokens(job.prompt, hosted)[0] == C.estimate_tokens(job.prompt, local)[0] == raw  # the budget's
    # the plan's prior is calibrated for the local endpoint only
    assert C.plan([job], hosted, None).input_tokens == raw
    assert_allclose(C.plan([job], local, None).input_tokens, raw * C.INPUT_TOKEN_FACTOR["local"], atol=1)
