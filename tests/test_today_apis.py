"""The audit against the services as they are today (issue 20): sampling that cannot be fixed, retired and
deprecated models, gateways without a models route, prices that stick through batches, and the card
that is written when the paper's reference rows cannot be fetched. Every server is a fake on 127.0.0.1
(tests/fake_servers.py, tests/fake_batch_servers.py) driven through the pinned SDKs."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_batch_servers import FakeBatchServer  # noqa: E402
from fake_servers import NO_SAMPLING_FROM, SAMPLING, FakeAnthropic, FakeOpenAI, stored_answers  # noqa: E402

from analysis import cli, paths  # noqa: E402
from analysis.cells import parse_cell  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis.collection.subjects import sampling as S  # noqa: E402
from analysis.collection.subjects.sdk import settings_for  # noqa: E402

CELL = "k12_LH_neutral_absent_zero"  # no examples: short prompts
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here
KEY = "fake-key-SENTINEL-20a1"
CURRENT = "claude-sonnet-5-5"  # a current model of the pinned SDK's list (anthropic.types.Model)
pytestmark = pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")


@pytest.fixture(autouse=True)
def _keys(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def _collect(srv, out, model, provider="anthropic", *extra) -> int:
    return cli.main(["collect", "--cell", CELL, "--provider", provider, "--model", model, "--base-url", srv.url,
                     "--out", str(out), "--no-progress", "--backoff", "0.01", "--backoff-cap", "0.05", *extra])


def _one_line(err: str) -> bool:
    return err.count("\n") == 1


# ---------------------------------------------------------------------------------------------
# The fakes behave like today's APIs
# ---------------------------------------------------------------------------------------------
def _post(url: str, body: dict, headers: dict) -> tuple[int, dict]:
    req = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_the_fake_checks_the_version_header_and_rejects_sampling_with_the_api_error_body():
    body = {"model": CURRENT, "max_tokens": 64, "messages": [{"role": "user", "content": "hi"}]}
    with FakeAnthropic(answer=lambda p: 1) as srv:
        url = srv.url + "/v1/messages"
        status, err = _post(url, body, {})
        assert status == 400 and err["type"] == "error" and err["error"]["type"] == "invalid_request_error"
        assert "anthropic-version" in err["error"]["message"]
        assert _post(url, body, {"anthropic-version": "2099-01-01"})[0] == 400  # later than the server speaks
        for param in SAMPLING:
            status, err = _post(url, {**body, param: 0}, {"anthropic-version": NO_SAMPLING_FROM})
            assert status == 400 and err["error"]["type"] == "invalid_request_error"
            assert err["error"]["message"].startswith(param) and err["request_id"]
        assert _post(url, body, {"anthropic-version": NO_SAMPLING_FROM})[0] == 200
    with FakeAnthropic(answer=lambda p: 1, api_version="2023-06-01") as old:  # the older behaviour
        assert _post(old.url + "/v1/messages", {**body, "temperature": 0}, {"anthropic-version": "2023-06-01"})[0] == 200
        assert _post(old.url + "/v1/messages", body, {"anthropic-version": NO_SAMPLING_FROM})[0] == 400


def test_the_sdk_reads_the_fakes_models_routes_lifecycle_and_retirement():
    import anthropic
    import openai

    assert anthropic._constants.ANTHROPIC_API_VERSION == NO_SAMPLING_FROM  # what the pinned SDK sends
    with FakeAnthropic(models=[CURRENT], retired={"claude-sonnet-4-5": "2026-11-30"},
                       deprecated={"claude-opus-4-5": "2027-01-22"}) as srv:
        client = anthropic.Anthropic(api_key=KEY, base_url=srv.url, max_retries=0)
        listed = {m.id: m.lifecycle for m in client.models.list()}
        assert listed == {CURRENT: "active", "claude-sonnet-4-5": "retired", "claude-opus-4-5": "deprecated"}
        assert client.models.retrieve("claude-opus-4-5").retires_at.year == 2027
        with pytest.raises(anthropic.NotFoundError) as exc:  # a retired model: the API's 404 body
            client.messages.create(model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "x"}])
        assert exc.value.body["error"] == {"type": "not_found_error", "message": "model: claude-sonnet-4-5"}
        with pytest.raises(anthropic.NotFoundError):
            client.models.retrieve("claude-typo-1")
        assert set(srv.versions) == {NO_SAMPLING_FROM}
    with FakeOpenAI(models=["m"], retired={"old-m": "2026-01-01"}) as srv:
        client = openai.OpenAI(api_key=KEY, base_url=srv.url, max_retries=0)
        assert [m.id for m in client.models.list()] == ["m"] and client.models.retrieve("m").id == "m"
        with pytest.raises(openai.NotFoundError) as exc:
            client.chat.completions.create(model="old-m", messages=[{"role": "user", "content": "x"}])
        assert exc.value.code == "model_not_found"


# ---------------------------------------------------------------------------------------------
# Sampling that cannot be fixed
# ---------------------------------------------------------------------------------------------
def test_the_settings_tables_send_no_temperature_where_the_sampling_table_says_none_is_taken():
    for provider, table in (("openai", C.OPENAI_SETTINGS), ("anthropic", C.ANTHROPIC_SETTINGS)):
        for pattern, _ in table:
            model = pattern.rstrip("*") or "any-model"
            sent = settings_for(table, model)
            if not S.temperature_settable(provider, model, NO_SAMPLING_FROM):
                assert not set(sent) & set(S.SAMPLING_PARAMS), (provider, pattern, sent)


def _smoke_audit(srv, out: Path) -> tuple[int, list[dict]]:
    """A smoke audit of 2 pairs (24 requests) of the current Claude model against ``srv``: exit code and bodies."""
    code = cli.main(["audit", "--provider", "anthropic", "--model", CURRENT, "--base-url", srv.url, "--out", str(out),
                     "--battery", "smoke", "--pairs", "2", "--draws", "200", "--no-progress", "--no-reference-models"])
    return code, [r["body"] for r in srv.requests]


def test_a_claude_audit_against_the_current_api_sends_no_sampling_parameter_and_the_card_says_so(tmp_path):
    out = tmp_path / "o"
    with FakeAnthropic(models=[CURRENT]) as srv:
        code, bodies = _smoke_audit(srv, out)
        assert code == 0 and srv.refused == [] and len(bodies) == 24
        assert not any(set(b) & set(SAMPLING) for b in bodies)
        assert "extra_body" not in json.dumps(bodies) and set(srv.versions) == {NO_SAMPLING_FROM}
    card = json.loads((out / "report_card.json").read_text())
    assert card["settings"]["temperature_settable"] is False
    assert card["settings"]["sampling"] == "provider default sampling (temperature not settable)"
    assert "temperature" not in card["subject"]["request_settings"]["settings"]
    assert "provider default sampling (temperature not settable)" in (out / "report_card.html").read_text()


def test_an_older_api_version_takes_the_papers_temperature_zero(tmp_path):
    with FakeAnthropic(api_version="2023-06-01") as srv:
        res = C.collect(PARSED, "anthropic", CURRENT, tmp_path, base_url=srv.url, jobs=C.job_list(PARSED)[:4],
                        concurrency=1, progress=False, settings={"anthropic_version": "2023-06-01"})
        bodies = [r["body"] for r in srv.requests]
        assert res.complete and srv.refused == [] and set(srv.versions) == {"2023-06-01"}
    assert all(b["temperature"] == 0 and "anthropic_version" not in b for b in bodies)
    subject = C.make_subject("anthropic", CURRENT, None, base_url=srv.url, settings={"anthropic_version": "2023-06-01"})
    got = subject.sampling()
    assert (got["temperature_settable"], got["sampling"], got["tool_choice_forced"]) == (True, "temperature 0", False)
    subject.close()


@pytest.mark.parametrize("provider, model", [("anthropic", CURRENT), ("openai", "gpt-5.6-terra")])
def test_a_400_naming_a_sampling_parameter_is_one_line_never_retried_never_stored(tmp_path, capsys, provider, model):
    server = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    with server() as srv:
        code = _collect(srv, tmp_path / "o", model, provider, "--concurrency", "1", "--settings",
                        '{"temperature": 0}')
        n = srv.count
        assert len(srv.refused) == n and srv.refused[0][1] == 400
    err = capsys.readouterr().err
    assert code == 2 and _one_line(err), err
    assert "rejects the sampling parameter 'temperature'" in err and "--settings '{\"temperature\": null}'" in err
    assert n == 1 and stored_answers(tmp_path / "o") == 0  # not retried, nothing stored as an answer


# ---------------------------------------------------------------------------------------------
# Models that reject the forced tool choice (Sonnet 5.5, Opus 5.5, Fable 5.1)
# ---------------------------------------------------------------------------------------------
def test_the_fake_rejects_a_forced_tool_choice_for_the_models_that_refuse_one():
    """Before the fix the audit sent the protocol's forced choice to claude-sonnet-5-5: this 400 on every request."""
    with FakeAnthropic(models=[CURRENT, "claude-sonnet-5"]) as srv:
        hdr = {"anthropic-version": NO_SAMPLING_FROM, "x-api-key": KEY}
        body = {"model": CURRENT, "max_tokens": 64, "messages": [{"role": "user", "content": "x"}],
                "tools": [{"name": "choose", "input_schema": {"type": "object"}}]}
        forced = _post(srv.url + "/v1/messages", {**body, "tool_choice": {"type": "tool", "name": "choose"}}, hdr)
        auto = _post(srv.url + "/v1/messages", {**body, "tool_choice": {"type": "auto"}}, hdr)
        older = _post(srv.url + "/v1/messages", {**body, "model": "claude-sonnet-5",
                                                 "tool_choice": {"type": "tool", "name": "choose"}}, hdr)
    assert forced[0] == 400 and forced[1]["error"]["type"] == "invalid_request_error"
    assert "tool_choice" in forced[1]["error"]["message"]
    assert auto[0] == 200 and older[0] == 200


def test_a_claude_55_audit_offers_the_tool_with_auto_choice_and_the_card_says_so(tmp_path):
    out = tmp_path / "o"
    with FakeAnthropic(models=[CURRENT]) as srv:
        code, bodies = _smoke_audit(srv, out)
    assert code == 0 and srv.refused == [] and len(bodies) == 24
    assert all(b["tool_choice"] == {"type": "auto"} and b["tools"][0]["name"] == "choose" for b in bodies)
    card = json.loads((out / "report_card.json").read_text())
    assert card["settings"]["tool_choice_forced"] is False
    assert card["settings"]["tool_choice"] == S.TOOL_CHOICE_AUTO
    assert any(line.startswith("Deviation from the protocol: this model rejects a forced tool choice")
               for line in card["sampling_notice"])


def test_a_model_that_takes_a_forced_choice_still_gets_the_protocols(tmp_path):
    with FakeAnthropic(models=["claude-sonnet-5"]) as srv:
        res = C.collect(PARSED, "anthropic", "claude-sonnet-5", tmp_path, base_url=srv.url,
                        jobs=C.job_list(PARSED)[:2], concurrency=1, progress=False)
        bodies = [r["body"] for r in srv.requests]
    assert res.complete and all(b["tool_choice"] == {"type": "tool", "name": "choose"} for b in bodies)
    subject = C.make_subject("anthropic", "claude-sonnet-5", None, base_url=srv.url)
    assert subject.sampling()["tool_choice_forced"] is True
    subject.close()


def test_a_400_refusing_the_forced_tool_choice_is_one_line_never_retried_never_stored(tmp_path, capsys):
    """A model the table does not know yet (here claude-sonnet-5 on a server that refuses it)."""
    with FakeAnthropic(models=["claude-sonnet-5"], rejects_forced_tool=("claude-sonnet-5",)) as srv:
        code = _collect(srv, tmp_path / "o", "claude-sonnet-5", "anthropic", "--concurrency", "1")
        n = srv.count
    err = capsys.readouterr().err
    assert code == 2 and _one_line(err), err
    assert "rejects a forced tool choice for model 'claude-sonnet-5'" in err and "--answer-format text" in err
    assert n == 1 and stored_answers(tmp_path / "o") == 0


# ---------------------------------------------------------------------------------------------
# Retired, deprecated and misspelled models; gateways without a models route
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("preflight", [True, False])
@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_retired_model_is_one_line(tmp_path, capsys, provider, preflight):
    server = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    model = "claude-sonnet-4-5" if provider == "anthropic" else "gpt-old"
    with server(retired={model: "2026-11-30"}, models=None if provider == "anthropic" else ["gpt-new"]) as srv:
        extra = ["--concurrency", "1"] + ([] if preflight else ["--no-preflight"])
        code = _collect(srv, tmp_path / "o", model, provider, *extra)
        n, gets = srv.count, len(srv.gets)
    err = capsys.readouterr().err
    assert code == 2 and _one_line(err), err
    assert f"model {model} is not served (retired or misspelled)" in err
    assert (n, gets) == ((0, 1) if preflight else (1, 0)) and stored_answers(tmp_path / "o") == 0


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_preflight_404_that_is_not_a_model_error_warns_and_continues(tmp_path, capsys, provider):
    server = FakeAnthropic if provider == "anthropic" else FakeOpenAI
    model = CURRENT if provider == "anthropic" else "m"
    with server(no_models_route=True) as srv:
        code = _collect(srv, tmp_path / "a", model, provider, "--pairs", "2")
        assert len(srv.gets) == 1 and srv.count == 12
        err = capsys.readouterr().err
        assert code == 0 and "warning:" in err and "continuing without checking the model" in err
        code = _collect(srv, tmp_path / "b", model, provider, "--pairs", "1", "--no-preflight")
        assert code == 0 and len(srv.gets) == 1  # --no-preflight asks nothing before the first request


def test_a_deprecated_model_warns_with_its_retirement_date(tmp_path, capsys):
    with FakeAnthropic(deprecated={"claude-opus-4-5": "2027-01-22"}) as srv:
        code = _collect(srv, tmp_path / "o", "claude-opus-4-5", "anthropic", "--pairs", "1")
    err = capsys.readouterr().err
    assert code == 0 and "model claude-opus-4-5 is deprecated and retires on 2027-01-22" in err


def test_the_default_price_table_names_a_current_model_and_refuses_a_budget_without_its_price(tmp_path, capsys):
    import anthropic

    models = set(anthropic.types.Model.__args__[0].__args__)
    table = C.load_prices()
    claude = table[table["provider"] == "anthropic"]
    current = [m for m in claude["model"] if m.rstrip("*") in models and m.rstrip("*") not in anthropic._data.DEPRECATED_MODELS]
    assert current == [CURRENT + "*"]
    assert C.price_for(table, "anthropic", CURRENT) is None  # no published price known: unknown, not made up
    code = cli.main(["audit", "--provider", "anthropic", "--model", CURRENT, "--out", str(tmp_path / "o"),
                     "--battery", "smoke", "--max-cost", "5", "--base-url", "http://127.0.0.1:9"])
    err = capsys.readouterr().err
    assert code == 2 and _one_line(err) and "--max-cost needs a price" in err


# ---------------------------------------------------------------------------------------------
# Prices that stick
# ---------------------------------------------------------------------------------------------
def _override(tmp_path, kind: str) -> Path:
    if kind == "csv":
        p = tmp_path / "prices.csv"
        p.write_text("provider,model,input_usd_per_mtok,output_usd_per_mtok,batch_price_factor\n"
                     "anthropic,fake-sonnet,3.0,15.0,0.5\n")
    else:  # JSON without a factor: the provider's applies
        p = tmp_path / "prices.json"
        p.write_text(json.dumps({"anthropic/fake-sonnet": [3.0, 15.0]}))
    return p


@pytest.mark.parametrize("kind", ["csv", "json"])
def test_a_price_override_keeps_the_batch_factor(tmp_path, kind):
    from analysis.collection import batch as B

    table = C.load_prices(_override(tmp_path, kind))
    assert B.batch_factor(table, "anthropic", "fake-sonnet") == 0.5
    assert_allclose(B.batch_price(table, "anthropic", "fake-sonnet"), (1.5, 7.5), rtol=0, atol=1e-12)
    explicit = tmp_path / "p3.json"
    explicit.write_text(json.dumps({"openai/x": [1.0, 2.0, 0.25], "anthropic/y": {"input_usd_per_mtok": 1,
                                                                                 "output_usd_per_mtok": 4}}))
    t = C.load_prices(explicit)
    assert B.batch_factor(t, "openai", "x") == 0.25 and B.batch_factor(t, "anthropic", "y") == 0.5


@pytest.mark.parametrize("kind", ["csv", "json", "flags"])
def test_batch_with_a_price_override_prices_every_answer_and_max_cost_works(tmp_path, capsys, kind):
    out = tmp_path / "o"
    given = (["--price-in", "3", "--price-out", "15"] if kind == "flags"
             else ["--prices", str(_override(tmp_path, kind))])
    with FakeBatchServer() as srv:
        code = cli.main(["collect", "--cell", CELL, "--provider", "anthropic", "--model", "fake-sonnet", "--base-url",
                         srv.url, "--out", str(out), "--batch", "--poll-interval", "0.02", "--pairs", "4",
                         *given, "--max-cost", "5", "--no-progress"])
        assert srv.sampling_errors == [] and set(srv.versions) == {NO_SAMPLING_FROM}
    text = capsys.readouterr()
    assert code == 0, text.err
    con = sqlite3.connect(out / C.LEDGER_NAME)
    costs = np.array([r[0] if r[0] is not None else np.nan for r in con.execute("SELECT cost_usd FROM answers")])
    con.close()
    assert len(costs) == 24 and not np.isnan(costs).any()
    # the fake reports 900 input and 30 output tokens per answer; batch price = list price x 0.5
    assert_allclose(costs, (900 * 1.5 + 30 * 7.5) / 1e6, rtol=1e-12)
    meta = json.loads(next(out.rglob("*_metadata.json")).read_text())
    assert_allclose(meta["cost_usd"], 24 * (900 * 1.5 + 30 * 7.5) / 1e6, rtol=1e-9)


# ---------------------------------------------------------------------------------------------
# The card about your model is always written
# ---------------------------------------------------------------------------------------------
def test_offline_without_a_mirror_the_audit_writes_its_card_without_the_reference_rows(tmp_path):
    out, cache = tmp_path / "o", tmp_path / "empty-cache"
    cache.mkdir()
    env = {**os.environ, "PROXY_AUDIT_MIRROR": "", "PROXY_AUDIT_CACHE": str(cache), "PROXY_AUDIT_OFFLINE": "1",
           "PYTHONPATH": str(paths.ROOT)}
    proc = subprocess.run([sys.executable, "-m", "analysis", "audit", "--provider", "simulated", "--model",
                           "reads-everything", "--battery", "smoke", "--pairs", "2", "--draws", "200", "--out",
                           str(out), "--no-progress"], env=env, cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    card = json.loads((out / "report_card.json").read_text())
    assert "reference_models" not in card and not [p for p in cache.rglob("*") if p.is_file()]
    note = card["reference_models_note"]
    assert note.startswith("The paper's four reference rows are left out") and "could not be fetched" in note
    assert card["summary"][-1] == note and (out / "report_card.html").is_file()
    assert sum("reference rows are left out" in line for line in proc.stdout.splitlines()) == 1
    assert card["settings"]["temperature_settable"] is True  # an offline subject: nothing to warn about
    assert pd.notna(card["conditions"][0]["pse_pp"])


def test_a_batch_request_refused_for_a_sampling_parameter_is_one_line_and_never_resent(tmp_path, capsys):
    out = tmp_path / "o"
    with FakeBatchServer() as srv:
        code = cli.main(["collect", "--cell", CELL, "--provider", "anthropic", "--model", CURRENT, "--base-url",
                         srv.url, "--out", str(out), "--batch", "--poll-interval", "0.02", "--pairs", "1",
                         "--settings", '{"temperature": 0}', "--no-progress"])
        assert len(srv.sampling_errors) == 6 and set(srv.submitted.values()) == {1}  # not sent again
    err = capsys.readouterr().err
    assert code == 2 and _one_line(err) and "rejects the sampling parameter 'temperature'" in err
    assert stored_answers(out) == 0


def test_a_pinned_older_api_version_goes_on_the_batch_and_takes_temperature_zero(tmp_path):
    from analysis.collection import batch as B

    jobs = C.job_list(PARSED)[:6]
    with FakeBatchServer() as srv:
        subject = C.make_subject("anthropic", CURRENT, None, base_url=srv.url,
                                 settings={"anthropic_version": "2023-06-01"})
        res = B.collect_batch(jobs, subject, tmp_path, opts=B.BatchOptions(poll_interval=0.02), progress=False)
        subject.close()
        params = [p for b in srv.batches.values() for _, p in b["requests"]]
        assert res[0].complete and srv.sampling_errors == [] and "2023-06-01" in srv.versions
    assert len(params) == 6 and all(p["temperature"] == 0 and "extra_headers" not in p for p in params)


@pytest.mark.parametrize("body, is_model", [
    ({"type": "error", "error": {"type": "not_found_error", "message": "model: claude-x"}}, True),  # Anthropic
    ({"message": "The model `x` does not exist or you do not have access to it.", "code": "model_not_found"}, True),
    ({"object": "error", "message": "The model `x` does not exist.", "type": "NotFoundError", "code": 404}, True),
    ({"error": "model 'x' not found"}, False),  # not an object: nothing to read
    ({"error": {"message": "model 'x' not found, try pulling it first"}}, True),  # Ollama
    ({"type": "error", "error": {"type": "not_found_error", "message": "Not Found"}}, False),  # a missing route
    ({"detail": "Not Found"}, False), ("<html>404</html>", False), (None, False)])
def test_a_404_is_a_model_error_only_when_its_body_says_so(body, is_model):
    from analysis.collection.subjects.sdk import model_error

    class Exc(Exception):
        pass

    exc = Exc()
    exc.body = body
    assert model_error(exc, "x") is is_model
