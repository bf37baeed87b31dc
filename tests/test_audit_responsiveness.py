"""Tests of issue 13's audit side (analysis/audit/): the smoke battery and ``--pairs``, the
responsiveness check that opens the card (subjects that answer by position, at chance, and
normally), estimated against actual tokens, free local prices, and the package split of issue 11
(one judgment function, one JSON cleaner, autoescaped HTML). Offline: simulated subjects and
fake servers on 127.0.0.1 only."""
from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path

import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from fake_servers import FakeOpenAI  # noqa: E402

from analysis import audit as A  # noqa: E402
from analysis import cli  # noqa: E402
from analysis import collection as C  # noqa: E402
from analysis import judgments, references  # noqa: E402
from analysis.cells import parse_cell  # noqa: E402
audit_analyse = importlib.import_module("analysis.audit.analyse")  # the module (A.analyse is its function)
audit_card = importlib.import_module("analysis.audit.card")

DRAWS = 500
SENTINEL = "fake-key-SENTINEL-audit-13"


def cli_audit(argv: list[str]) -> int:
    """``python -m analysis audit ARGV`` in-process, through the one command-line module."""
    return cli.main(["audit", *argv])


@pytest.fixture(autouse=True)
def _env(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SENTINEL)
    monkeypatch.delenv(C.PRICES_ENV, raising=False)


def _smoke(out, preset, **kw):
    kw.setdefault("draws", DRAWS)
    kw.setdefault("progress", False)
    kw.setdefault("reference_rows", False)
    return A.run_audit("simulated", preset, out, battery="smoke", log=lambda *a: None, **kw)


@pytest.fixture(scope="module")
def smoke_cards(tmp_path_factory):
    """Smoke audits of a position answerer, a coin, and two subjects that read the patients."""
    out = {}
    for preset in ("answers-first", "answers-at-random", "reads-everything", "tracks-learner"):
        res = _smoke(tmp_path_factory.mktemp(preset), preset)
        assert res.complete
        out[preset] = res
    return out


# ---------------------------------------------------------------------------------------------
# The smoke battery and --pairs
# ---------------------------------------------------------------------------------------------
def test_smoke_battery_is_two_cells_on_the_first_pairs():
    smoke = A.battery_conditions("smoke")
    assert [c.key for c in smoke] == ["k12_LH_neutral_absent_zero", "k12_LH_neutral_learned_zero"]
    assert all(c.n_pairs == A.SMOKE_PAIRS == 24 for c in smoke)
    assert A.battery_calls("smoke") == 2 * 24 * 3 * 2
    assert A.battery_calls("smoke", n_pairs=5) == 2 * 5 * 3 * 2
    assert A.battery_calls("core") == 6732  # the protocol's batteries are untouched
    jobs = A.jobs_of(smoke[1])
    first = list(references.reference_pairs(smoke[1].parsed)["pair_id"].iloc[:24])
    assert sorted({j.pair_id for j in jobs}) == sorted(first) and len(jobs) == 144
    with pytest.raises(ValueError, match="--pairs"):
        A.first_pairs(smoke, 0)


def test_smoke_card_says_first_that_it_is_not_the_protocol(smoke_cards):
    res = smoke_cards["reads-everything"]
    text = res.json_path.read_text()
    assert text.splitlines()[1].strip().startswith('"notice": "Smoke test on a subset (2 conditions, the first 24 pairs')
    card = json.loads(text)
    assert "not the protocol" in card["notice"] and card["summary"][0] == card["notice"]
    page = res.html_path.read_text()
    assert page.index("Smoke test on a subset") < page.index("<h1>")
    assert card["subject"]["n_records"] == 288
    # model and references on the same 24 pairs
    row = {r["key"]: r for r in card["conditions"]}["k12_LH_neutral_learned_zero"]
    ref = A.subset_references(parse_cell("k12_LH_neutral_learned_zero"), 24)
    assert row["learner_pse_pp"] == pytest.approx(ref["learner_pse_pp"]) and row["n_pairs"] <= 24


def test_pairs_restricts_any_battery_and_the_card_says_so(tmp_path):
    res = A.run_audit("simulated", "ignores-proxies", tmp_path, battery="core", n_pairs=4, only=[A.REP_CELL],
                      draws=DRAWS, progress=False, reference_rows=False, log=lambda *a: None)
    assert res.complete and res.card["subject"]["n_records"] == 4 * 6
    assert res.card["notice"].startswith("Smoke test on a subset (1 condition, the first 4 pairs")


def test_subset_references_of_all_pairs_are_the_cell_references():
    for cell in map(parse_cell, ("k12_LH_neutral_learned_info_b060", "k12_LH_social_absent_zero")):
        full, sub = references.cell_references(cell), A.subset_references(cell, 99)
        for k in ("fullinfo_pse_pp", "learner_pse_pp", "learner_error_pct"):
            assert sub[k] == pytest.approx(full[k], nan_ok=True), (cell, k)


# ---------------------------------------------------------------------------------------------
# The responsiveness check
# ---------------------------------------------------------------------------------------------
def _records(picks_o0, picks_o1, cell="k12_LH_neutral_absent_zero"):
    """Factual records of the first pairs of a cell with the target picked (1) or not (0) per order."""
    pr = references.reference_pairs(parse_cell(cell)).iloc[:len(picks_o0)]
    rows = []
    for (pid, i, j), p0, p1 in zip(pr[["pair_id", "i", "j"]].itertuples(index=False), picks_o0, picks_o1):
        for order, p in ((0, p0), (1, p1)):
            patient = None if p is None else (1 if (p == 1) == (order == 0) else 2)
            rows.append({"arm": "factual", "pair_id": pid, "i": i, "j": j, "order": order, "patient": patient,
                         "chosen": None, "picked_i": None if p is None else float(p)})
    return pd.DataFrame(rows)


def test_responsiveness_of_known_answer_patterns():
    cond = A.Condition("k12_LH_neutral_absent_zero")
    truth = references.reference_pairs(cond.parsed)["truth"].to_numpy()[:40]
    # by position: target picked when shown first (order 0) only
    pos = A.responsiveness({cond.key: _records([1] * 40, [0] * 40)}, [cond], draws=DRAWS)
    assert pos["order_flip_share"] == 1.0 and pos["pick_first_share"] == 1.0 and pos["accuracy_pct"] == 50.0
    assert pos["answers_by_position"] and pos["indistinguishable_from_chance"] and pos["interpretable"] is False
    assert pos["n_order_consistent"] == 0 and "Supplementary Note 6" in pos["statement"]
    # always right in both orders: no flips, accuracy 100%
    good = A.responsiveness({cond.key: _records(list(truth), list(truth))}, [cond], draws=DRAWS)
    assert good["order_flip_share"] == 0.0 and good["accuracy_pct"] == 100.0 and good["interpretable"] is True
    # invalid answers count against validity and are never substituted
    half = A.responsiveness({cond.key: _records(list(truth[:20]) + [None] * 20, list(truth))}, [cond], draws=DRAWS)
    assert half["valid_share"] == pytest.approx(60 / 80) and half["n_pairs"] == 20 and half["n_accuracy_pairs"] == 40
    # no condition with a factual arm: not checked, verdicts left as they are
    disp = A.Condition(A.REP_CELL, "ordered")
    none = A.responsiveness({disp.key: _records([1] * 5, [1] * 5).assign(arm="cf_a1")}, [disp], draws=DRAWS)
    assert none["interpretable"] is None and "not checked" in none["statement"]


def test_position_answerer_card_says_its_verdicts_are_not_interpretable(smoke_cards):
    res = smoke_cards["answers-first"]
    card = res.card
    resp = card["responsiveness"]
    assert resp["order_flip_share"] == 1.0 and resp["answers_by_position"] and card["interpretable"] is False
    keys = list(card)
    assert keys.index("responsiveness") < keys.index("conditions")
    for r in card["conditions"]:
        assert r["verdict"] == r["verdict_fullinfo"] == A.NOT_INTERPRETABLE
        assert r["verdicts_as_computed"]["verdict"] in A.VERDICTS  # kept, but not printed as a finding
        assert r["statement"].startswith("Not interpretable")
    summary = " ".join(card["summary"])
    assert "not interpretable" in summary and "order-consistent subpopulation" in summary
    for v in A.VERDICTS:  # no verdict printed as a finding
        assert v not in " ".join(card["summary"][2:]), v
    page = res.html_path.read_text()
    assert page.index("Responsiveness") < page.index("What the evidence supports")
    assert "Not interpretable as a finding about reliance" in page
    assert "<td><span class=\"none\">not interpretable</span></td>" in page
    for v in A.VERDICTS:
        assert f'">{v}</span></td>' not in page.split("The paper&#39;s four models")[0], v


def test_chance_answerer_is_not_distinguishable_from_chance(smoke_cards):
    card = smoke_cards["answers-at-random"].card
    resp = card["responsiveness"]
    lo, hi = resp["accuracy_ci"]
    assert lo <= 50 <= hi and resp["indistinguishable_from_chance"] and card["interpretable"] is False
    assert 0.3 < resp["order_flip_share"] < 0.7 and not resp["answers_by_position"]
    assert all(r["verdict"] == A.NOT_INTERPRETABLE for r in card["conditions"])


@pytest.mark.parametrize("preset", ["reads-everything", "tracks-learner"])
def test_a_subject_that_reads_the_patients_keeps_its_verdicts(smoke_cards, preset):
    card = smoke_cards[preset].card
    resp = card["responsiveness"]
    assert resp["interpretable"] is True and resp["accuracy_ci"][0] > 50 and resp["order_flip_share"] < 0.5
    assert all(r["verdict"] in A.VERDICTS and "verdicts_as_computed" not in r for r in card["conditions"])
    assert "can be read" in card["summary"][1]


def test_the_paper_models_read_the_patients():
    """The released records of the four models pass the check (the 'normal' subjects of the paper)."""
    conds = A.battery_conditions("smoke")
    refs = A.reference_models(conds, draws=DRAWS)
    for m, r in refs.items():
        assert r["responsiveness"]["interpretable"] is True, (m, r["responsiveness"]["statement"])


# ---------------------------------------------------------------------------------------------
# A local OpenAI-compatible server: free prices, tokens estimated against actual
# ---------------------------------------------------------------------------------------------
def test_local_server_free_prices_and_token_estimate_against_usage(tmp_path, capsys):
    tracker = A.LearnerTracker()
    out = tmp_path / "o"
    with FakeOpenAI(tracker.choose, keep_bodies=False, served_model="local") as srv:
        code = cli_audit(["--provider", "openai", "--model", "local", "--base-url", srv.url, "--out", str(out),
                            "--battery", "smoke", "--pairs", "4", "--price-in", "0", "--price-out", "0",
                            "--max-cost", "0", "--draws", str(DRAWS), "--no-progress", "--no-reference-models"])
        text = capsys.readouterr().out
        assert code == 0 and srv.count == 48, text
    assert "estimated cost: $0.00" in text and "tokens per call, estimated vs actual (48 answers" in text
    card = json.loads((out / A.REPORT_JSON).read_text())
    assert card["subject"]["cost_usd"] == 0.0
    tpc = card["plan"]["tokens_per_call"]
    assert tpc["n_answers"] == 48 and tpc["actual"]["input"] > 0 and tpc["estimated"]["input"] > 0
    assert card["settings"]["answer_format"] == "tool"
    assert SENTINEL not in (out / A.REPORT_HTML).read_text()


def test_answer_format_is_in_the_request_key_and_the_card(tmp_path):
    kw = dict(base_url="http://127.0.0.1:9", dry_run=True)
    keys = {f: C.request_key(A.subject_factory("openai", "m", answer_format=f, **kw)())[0] for f in C.ANSWER_FORMATS}
    assert len(set(keys.values())) == len(C.ANSWER_FORMATS)
    with pytest.raises(C.CollectionError, match="unknown answer format"):
        A.subject_factory("openai", "m", answer_format="xml", **kw)


# ---------------------------------------------------------------------------------------------
# The split (issue 11): one judgment, one JSON cleaner, autoescaped HTML
# ---------------------------------------------------------------------------------------------
def test_the_audit_judges_with_the_one_judgment_function(monkeypatch):
    calls = []
    real = judgments.judge

    def spy(*a, **k):
        calls.append(a)
        return real(*a, **k)

    monkeypatch.setattr(audit_analyse, "judge", spy)
    cond = A.Condition("k12_LH_neutral_learned_zero")
    row = {"pse_pp": 10.0, "pse_ci": [4.0, 16.0], "fullinfo_pse_pp": 0.0, "learner_pse_pp": 3.0}
    out = A.judged(dict(row), cond)
    assert calls and out["verdict"] == real(10.0, (4.0, 16.0), 3.0).verdict == "excess"
    assert out["difference_ci"] == [1.0, 13.0] and out["verdict_fullinfo"] == "excess"
    assert audit_card.jsonable is __import__("analysis.jsonable", fromlist=["jsonable"]).jsonable


def test_html_escapes_every_value(smoke_cards):
    card = json.loads(smoke_cards["reads-everything"].json_path.read_text())
    card["subject"]["model_requested"] = "<script>alert(1)</script>"
    card["conditions"][0]["label"] = 'a "quoted" <b>label</b> & more'
    page = A.render_html(card, figures={})
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<b>label</b>" not in page and "&lt;b&gt;label&lt;/b&gt; &amp; more" in page


def test_audit_modules_stay_small():
    root = Path(A.__file__).parent
    sizes = {p.name: len(p.read_text().splitlines()) for p in root.glob("*.py")}
    assert max(sizes.values()) <= 600, sizes
    assert "STRUCTURE_CELLS" in dir(A) and A.STRUCTURE_CELLS is __import__("analysis.battery", fromlist=["x"]).DIMENSION_CELLS
