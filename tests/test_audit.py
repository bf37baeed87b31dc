"""Tests of the audit (analysis/audit/): battery sizes, plan, the simulated subjects of known
behaviour and their verdicts, the report card, runs against the fake Anthropic and OpenAI-compatible
servers through the real SDKs, interruption and resume without a repeated call, the folder budget.
Offline: servers on 127.0.0.1, released records through the verified cache."""
from __future__ import annotations

import html
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeAnthropic, FakeOpenAI  # noqa: E402

from analysis import audit as A  # noqa: E402
from analysis import cli  # noqa: E402
from analysis import battery, collection as C, config, encoding, paths, representation  # noqa: E402

DRAWS = 1000  # fewer bootstrap draws than the paper's 5,000 keep the tests fast
SENTINEL = "fake-key-SENTINEL-audit-42"  # not key-shaped, so secret scanners stay quiet
REQUIRED = ("pse_pp", "pse_ci", "fullinfo_pse_pp", "learner_pse_pp", "verdict", "error_pct")
ZERO_CELLS = [f"k12_LH_{n}_{ex}_zero" for ex in ("absent", "learned") for n in ("neutral", "social")]
SWEEP_NEUTRAL = [A.sweep_cell("neutral", lv) for lv in A.SWEEP_LEVELS]


def cli_audit(argv: list[str]) -> int:
    """``python -m analysis audit ARGV`` in-process, through the one command-line module."""
    return cli.main(["audit", *argv])


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", SENTINEL)
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def _audit(out, preset, **kw):
    kw.setdefault("draws", DRAWS)
    kw.setdefault("progress", False)
    return A.run_audit("simulated", preset, out, log=lambda *a: None, **kw)


@pytest.fixture(scope="module")
def cards(tmp_path_factory):
    """Core audits of the three simulated behaviours (in-process subject), reference rows included."""
    out = {}
    for preset in ("over-reads-ordered", "ignores-proxies", "tracks-learner"):
        res = _audit(tmp_path_factory.mktemp(preset), preset)
        assert res.complete
        out[preset] = res
    return out


def _rows(card) -> dict:
    return {r["key"]: r for r in card["conditions"]}


# ---------------------------------------------------------------------------------------------
# Battery and plan
# ---------------------------------------------------------------------------------------------
def test_battery_conditions_and_call_counts():
    core, full = A.battery_conditions("core"), A.battery_conditions("full")
    assert len(core) == 12 and len(full) == 16
    assert [c.key for c in core if c.display != "numeric"] == [f"{A.REP_CELL}:ordered", f"{A.REP_CELL}:arbitrary"]
    assert {c.cell for c in full} - {c.cell for c in core} == set(A.STRUCTURE_CELLS)
    # 99 pairs x 3 arms x 2 orders per numeric cell, x 2 arms x 2 orders per category display
    assert [A.n_calls(c) for c in core] == [594] * 10 + [396] * 2
    assert A.battery_calls("core") == 6732 and A.battery_calls("full") == 9108
    assert sum(len(A.jobs_of(c)) for c in core) == 6732
    with pytest.raises(ValueError, match="unknown battery"):
        A.battery_conditions("huge")
    with pytest.raises(ValueError, match="unknown condition"):
        A.select_conditions(core, ["k12_LH_neutral_absent_info"])


def test_dry_run_needs_no_key_prints_the_plan_and_writes_nothing(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    out = tmp_path / "o"
    code = cli_audit(["--provider", "anthropic", "--model", "claude-sonnet-4-5", "--dry-run", "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and not out.exists()
    assert "6,732 calls in the battery" in text and "6,732 to make" in text
    m = re.search(r"estimated cost: \$([\d,.]+)", text)
    plan = A.plan_audit(A.battery_conditions("core"),
                        A.subject_factory("anthropic", "claude-sonnet-4-5", dry_run=True), out)
    price = C.price_for(C.load_prices(), "anthropic", "claude-sonnet-4-5")
    expect = (plan["input_tokens"].sum() * price[0] + plan["output_tokens"].sum() * price[1]) / 1e6
    assert float(m.group(1).replace(",", "")) == pytest.approx(expect, abs=0.006)
    code = cli_audit(["--provider", "openai", "--model", "no-such-model", "--battery", "full", "--dry-run",
                        "--out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and "9,108 calls" in text and "no price for this model" in text


@pytest.mark.parametrize("args, message", [
    (["--provider", "simulated", "--model", "nobody"], "unknown simulated preset"),
    (["--provider", "replay", "--model", "sonnet"], "unknown provider 'replay'"),
    (["--provider", "simulated", "--model", "ignores-proxies", "--battery", "huge"], "invalid choice"),
    (["--provider", "simulated", "--model", "ignores-proxies", "--only", "k6_LH_neutral_learned_zero"],
     "unknown condition"),
    (["--provider", "openai", "--model", "m"], "no API key"),
    (["--provider", "openai", "--model", "m", "--base-url", "http://127.0.0.1:9", "--max-cost", "5"],
     "--max-cost needs a price"),
])
def test_bad_arguments_one_line_exit_2_nothing_written(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.delenv("OPENAI_API_KEY")
    out = tmp_path / "o"
    code = cli_audit(args + ["--out", str(out), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and message in err and err.count("\n") == 1
    assert not (out / C.LEDGER_NAME).exists() and not (out / A.REPORT_JSON).exists()


# ---------------------------------------------------------------------------------------------
# The tracks-learner subject
# ---------------------------------------------------------------------------------------------
def test_tracks_learner_subject_reproduces_the_learner():
    from analysis.references import cell_references

    s = A.LearnerTracker()
    x = [cell_references(A.Condition(c).parsed)["learner_pse_pp"] for c in SWEEP_NEUTRAL]
    e = [s.expected_pse(A.jobs_of(A.Condition(c))) for c in SWEEP_NEUTRAL]
    # expected PSE (exact choice probabilities) within 2 pp of the learner at every level
    assert max(abs(a - b) for a, b in zip(e, x)) < 2.0
    # without examples it ignores the proxies; the two category renderings carry the same information
    assert s.expected_pse(A.jobs_of(A.Condition("k12_LH_neutral_absent_zero"))) == pytest.approx(0.0, abs=1e-9)
    o = s.expected_pse(A.jobs_of(A.Condition(A.REP_CELL, "ordered")))
    a = s.expected_pse(A.jobs_of(A.Condition(A.REP_CELL, "arbitrary")))
    assert o == pytest.approx(a, abs=1e-9)
    names, rows, y = A.parse_examples(A.jobs_of(A.Condition(A.REP_CELL, "arbitrary"))[0].prompt)
    assert len(names) == 12 and len(rows) == 80 and len(y) == 80 and rows[0][8] in encoding.code_table()[0]


# ---------------------------------------------------------------------------------------------
# Verdicts for subjects of known behaviour
# ---------------------------------------------------------------------------------------------
def test_over_reader_of_ordered_labels(cards):
    card = cards["over-reads-ordered"].card
    d = card["display"]
    assert d["difference"] == "ordered above arbitrary" and d["difference_ci"][0] > 0
    assert d["arbitrary_excludes_margin"] is True  # codes carry no rank: the subject ignores them
    rows = _rows(card)
    assert rows[f"{A.REP_CELL}:ordered"]["verdict"] == "excess"
    # numeric proxies are ignored: no resolved difference from the full-information reference at zero information
    for k in ZERO_CELLS:
        assert rows[k]["verdict_fullinfo"] == "no resolved difference", k


def test_proxy_ignorer(cards):
    card = cards["ignores-proxies"].card
    rows = _rows(card)
    for k in ZERO_CELLS:
        assert rows[k]["fullinfo_pse_pp"] == 0.0
        assert rows[k]["verdict_fullinfo"] == "no resolved difference", k
    for ex in ("absent", "learned"):
        assert card["naming"][ex]["verdict"] == "no resolved difference"
    assert card["display"]["difference"] == "no resolved difference"
    # the learner's reliance rises with proxy strength, the ignorer's does not (true slope 0)
    for f in card["tracking"]["fits"].values():
        lo, hi = f["gamma_ci"]
        assert lo <= 0 <= hi and hi < 1
        assert "adjusted less" in f["statement"] and "no adjustment is resolved" in f["statement"]
    # at the strongest level the learner relies on the proxies (+23 pp); ignoring them is a shortfall
    assert rows[A.sweep_cell("neutral", "info_b060")]["verdict"] == "shortfall"


def test_learner_tracker(cards):
    card = cards["tracks-learner"].card
    for n, f in card["tracking"]["fits"].items():
        lo, hi = f["gamma_ci"]
        assert lo <= 1 <= hi and abs(f["gamma"] - 1) < 0.3, (n, f["gamma"], f["gamma_ci"])
        assert "includes 1" in f["statement"]
    for r in card["conditions"]:
        if r["display"] == "numeric" and r["examples"] == 80:
            assert r["verdict"] == "no resolved difference" and r["reference"] == "learner", r["key"]


# ---------------------------------------------------------------------------------------------
# The report card
# ---------------------------------------------------------------------------------------------
def test_report_card_json_and_html(cards):
    res = cards["over-reads-ordered"]
    card = json.loads(res.json_path.read_text())
    assert card["schema"] == A.SCHEMA and card["battery"] == "core" and len(card["conditions"]) == 12
    for r in card["conditions"]:
        assert all(k in r for k in REQUIRED)
        assert r["verdict"] in A.VERDICTS and len(r["pse_ci"]) == 2 and r["pse_ci"][0] <= r["pse_pp"] <= r["pse_ci"][1]
        assert (r["learner_pse_pp"] is None) == (r["examples"] == 0)
        assert r["accuracy_pct"] is None or r["accuracy_pct"] == pytest.approx(100 - r["error_pct"])
        assert set(r["reference_models"]) == set(A.PAPER_MODELS)
    assert set(card["tracking"]["fits"]) == {"neutral", "social"} and card["tracking"]["pooled"] is not None
    assert card["display"]["margin_pp"] == config.REPRESENTATION_MARGIN_PP
    assert card["display"]["learner_pse_pp"] == pytest.approx(-5.0505, abs=1e-4)
    page = res.html_path.read_text()
    # one self-contained file: plots as data URIs, no external resource
    assert page.count('src="data:image/png;base64,') == 3
    assert not re.search(r'(?:src|href)\s*=\s*["\']?(?:https?:|//)', page)
    for text in (page, res.json_path.read_text()):
        low = text.lower()
        for word in A.FORBIDDEN_WORDS:
            assert not re.search(rf"\b{word}\b", low), word
    for section in ("What the evidence supports", "Tracking slope", "Ordered versus arbitrary", "Naming",
                    "The paper's four models", "Provenance", "ranking error"):
        assert section in page
    # the card's own judgment (issue 22) has its column beside the paper's verdict, row by row
    assert "verdict (paper&#39;s rule)" in page and "judgment (joint bootstrap, ±5 pp margin)" in page
    table = page.split("judgment (joint bootstrap", 1)[1].split("</table>", 1)[0]
    for r in card["conditions"]:
        if r.get("judgment"):
            row = table.split(f"<td>{html.escape(r['label'])}</td>", 1)[1].split("</tr>", 1)[0]
            assert html.escape(r["judgment"]) in row, r["key"]


def test_reference_rows_are_the_released_records(cards):
    card = cards["ignores-proxies"].card
    rows = _rows(card)
    for model in A.PAPER_MODELS:
        for key in ("k12_LH_neutral_learned_zero", A.sweep_cell("social", "info_b060"), "k12_LH_neutral_absent_zero"):
            ref = rows[key]["reference_models"][model]
            # the card is written at config.DERIVED_SIGNIFICANT_DIGITS (8): equal to that precision
            want = battery.cell_result(model, A.Condition(key).parsed)["pse_pp"]
            assert ref["pse_pp"] == pytest.approx(want, rel=1e-7, abs=1e-9)
    # Sonnet's social no-example cell is released as a summary only; the other models' display control not at all
    assert rows["k12_LH_social_absent_zero"]["reference_models"]["sonnet"]["source"] == "summary"
    for model in ("gpt", "qwen", "deepseek"):
        assert rows[f"{A.REP_CELL}:ordered"]["reference_models"][model]["status"] == "not released"
    sonnet = card["reference_models"]["sonnet"]
    t1 = representation.table1_row("sonnet", draws=DRAWS)
    assert sonnet["display"]["difference_pp"] == pytest.approx(t1["difference_pp"])
    assert sonnet["display"]["difference_ci"] == pytest.approx([t1["lo_pp"], t1["hi_pp"]])
    fit = battery.single_fit("deepseek", "neutral")
    assert card["reference_models"]["deepseek"]["tracking"]["fits"]["neutral"]["gamma"] == pytest.approx(fit["gamma"])
    assert sonnet["naming"]["absent"]["difference_ci"] is None  # one cell only as a summary


def test_rerun_of_a_complete_audit_asks_nothing(cards, tmp_path):
    res = cards["ignores-proxies"]
    out = res.json_path.parent
    again = _audit(out, "ignores-proxies", reference_rows=False)
    assert again.complete and sum(r.n_requests for r in again.runs) == 0
    assert int(again.plan["n_calls"].sum()) == 0


# ---------------------------------------------------------------------------------------------
# Fake servers through the real SDKs; interruption and resume
# ---------------------------------------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
def test_core_audit_over_fake_anthropic_interrupted_and_resumed(tmp_path, cards):
    """SIGINT mid-run (exit 130), then resume: the report equals the in-process subject's and no job
    was requested twice (server hits counted per prompt)."""
    subject = C.SimulatedSubject.preset("over-reads-ordered")
    out = tmp_path / "o"
    args = ["audit", "--provider", "anthropic", "--model", "claude-sonnet-4-5", "--out", str(out), "--draws",
            str(DRAWS), "--no-progress", "--concurrency", "8"]
    with FakeAnthropic(subject.choose, keep_bodies=False) as srv:
        env = {**os.environ, "ANTHROPIC_API_KEY": SENTINEL, "PYTHONUNBUFFERED": "1"}
        proc = subprocess.Popen([sys.executable, "-m", "analysis", *args, "--base-url", srv.url], env=env,
                                cwd=paths.ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 90
        while len(srv.ok) < 1500 and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:]
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()[-2000:]
        assert "rerun the same command to resume" in err.decode()
        assert not (out / A.REPORT_JSON).exists()
        n_before = srv.count
        assert 1500 <= n_before < 6732
        code = cli_audit(args[1:] + ["--base-url", srv.url])
        assert code == 0
        # every job of the battery was requested exactly once across both runs
        jobs = [jb for c in A.battery_conditions("core") for jb in A.jobs_of(c)]
        assert srv.count == len(jobs) == 6732
        assert Counter(srv.ok_by_sha()) == Counter(jb.prompt_sha256 for jb in jobs)
    card = json.loads((out / A.REPORT_JSON).read_text())
    assert card["subject"]["provider"] == "anthropic" and card["subject"]["models_served"] == {"claude-sonnet-4-5": 6732}
    assert card["subject"]["tokens"]["input"] > 0 and card["subject"]["cost_usd"] > 0
    assert SENTINEL not in (out / A.REPORT_HTML).read_text() and SENTINEL not in json.dumps(card)
    # the same answers as the in-process simulated subject -> the same numbers and verdicts
    sim = _rows(cards["over-reads-ordered"].card)
    for r in card["conditions"]:
        assert r["pse_pp"] == pytest.approx(sim[r["key"]]["pse_pp"]) and r["verdict"] == sim[r["key"]]["verdict"]
    assert card["display"]["difference"] == "ordered above arbitrary"


def test_sweep_over_fake_openai_tracks_the_learner(tmp_path):
    tracker = A.LearnerTracker()
    out = tmp_path / "o"
    with FakeOpenAI(tracker.choose, keep_bodies=False, served_model="local-tracker") as srv:
        code = cli_audit(["--provider", "openai", "--model", "local-tracker", "--base-url", srv.url, "--out",
                            str(out), "--only", *SWEEP_NEUTRAL, "--draws", str(DRAWS), "--no-progress",
                            "--concurrency", "8", "--no-reference-models"])
        assert code == 0 and srv.count == 4 * 594
    card = json.loads((out / A.REPORT_JSON).read_text())
    assert [r["key"] for r in card["conditions"]] == SWEEP_NEUTRAL
    f = card["tracking"]["fits"]["neutral"]
    assert set(card["tracking"]["fits"]) == {"neutral"} and f["gamma_ci"][0] <= 1 <= f["gamma_ci"][1]
    assert all(r["verdict"] == "no resolved difference" for r in card["conditions"])
    assert card["display"] is None and card["naming"] == {}
    assert "reference_models" not in card
    assert (out / A.REPORT_HTML).read_text().count("data:image/png;base64,") == 2


def test_budget_of_the_folder_stops_and_resumes(tmp_path, capsys):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"openai/m": [1.0, 2.0]}))
    cell = "k12_LH_neutral_absent_zero"
    base = ["--provider", "openai", "--model", "m", "--out", str(tmp_path / "o"), "--only", cell, "--prices",
            str(prices), "--draws", str(DRAWS), "--no-progress", "--concurrency", "4", "--no-reference-models"]
    job = A.jobs_of(A.Condition(cell))[0]
    per_call = C.cost_of((1.0, 2.0), *C.estimate_tokens(job.prompt, C.make_subject(
        "openai", "m", None, base_url="http://127.0.0.1:1"))[:2])
    budget = 40.5 * per_call
    with FakeOpenAI(keep_bodies=False) as srv:
        code = cli_audit(base + ["--base-url", srv.url, "--max-cost", str(budget)])
        err = capsys.readouterr().err
        assert code == 3 and "stopped at the budget" in err
        first = srv.count
        assert 20 <= first <= 80  # the estimate per call is above the fake server's token counts
        # the same budget again counts what the folder spent: at most what is left of it is used
        code = cli_audit(base + ["--base-url", srv.url, "--max-cost", str(budget)])
        assert code == 3 and srv.count - first <= 3
        spent = A.spent_in_ledger(tmp_path / "o", C.make_subject("openai", "m", None, base_url=srv.url))
        assert 0 < spent <= budget
        code = cli_audit(base + ["--base-url", srv.url, "--max-cost", str(1000 * budget)])
        assert code == 0 and srv.count == 594
    assert (tmp_path / "o" / A.REPORT_JSON).exists()


def test_stop_event_interrupts_in_process_and_resume_completes(tmp_path):
    """The same guarantee in-process: a stop requested mid-run, then a rerun asks only what is missing."""
    stop = threading.Event()
    subject = C.SimulatedSubject.preset("numeric-reader")
    hits = Counter()

    def answer(prompt):
        hits["n"] += 1
        if hits["n"] == 700:
            stop.set()
        return subject.choose(prompt)

    keys = ["k12_LH_neutral_learned_zero", f"{A.REP_CELL}:ordered"]
    with FakeOpenAI(answer, keep_bodies=False) as srv:
        kw = dict(base_url=srv.url, only=keys, draws=DRAWS, progress=False, reference_rows=False, concurrency=4,
                  log=lambda *a: None)
        res = A.run_audit("openai", "m", tmp_path, stop=stop, **kw)
        assert not res.complete and res.stopped == "interrupted" and res.card is None
        n1 = srv.count
        res = A.run_audit("openai", "m", tmp_path, **kw)
        assert res.complete and srv.count == 594 + 396 and n1 < srv.count
