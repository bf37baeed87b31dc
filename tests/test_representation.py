"""Representation control: bins, codes, learner, released prompts, estimates and claims (issue 5;
spec PROTOCOL-representation §10, checkpoint C11)."""
from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

from analysis import claims, config, data, encoding, learners, population, prompts, records, references
from analysis.cells import parse_cell
from analysis import representation as R

CELL = R.CELL
PARSED = parse_cell(CELL)  # the tests are a boundary: the id parsed once, here


# --- the category-indicator learner ------------------------------------------------------------

def test_indicator_features_code_the_rendered_labels_identically():
    """The learner's 20 columns are recoverable from either rendering of the 80 example rows."""
    ex = population.examples(PARSED)
    feats = learners.IndicatorLearner(8, encoding.quartile_edges(PARSED)).features(ex.X)
    assert feats.shape == (80, 20)
    np.testing.assert_array_equal(feats[:, :8], ex.X[:, :8])  # task values at full precision
    for display in ("ordered", "arbitrary"):
        shown = prompts.value_strings(ex.X, PARSED, display)
        inverse = [{encoding.label(b, m, display): b for b in range(4)} for m in range(4)]
        b = np.array([[inverse[m][row[8 + m]] for m in range(4)] for row in shown])
        ind = np.concatenate([(b[:, [m]] == np.arange(1, 4)).astype(float) for m in range(4)], axis=1)
        np.testing.assert_array_equal(feats[:, 8:], ind)


def test_category_learner_gives_minus_5_05_with_every_target_changing():
    picks = R.learner_picks(PARSED)
    assert len(picks) == 99 and (picks["pick_a1"] - picks["pick_a0"]).sum() == -5
    # one indicator learner: the per-pair picks give exactly references.indicator_learner_pse
    assert 100 * (picks["pick_a1"] - picks["pick_a0"]).mean() == references.indicator_learner_pse(PARSED)
    tb = R.target_bins(PARSED)
    assert tb["proxy_changed"].sum() == 99
    assert R.full_information_pse(PARSED) == 0.0


def test_worked_example_changes_only_the_proxies():
    w = R.worked_example(0)
    task, proxy = w[w["role"] == "task"], w[w["role"] == "proxy"]
    assert len(task) == 8 and len(proxy) == 4
    for a in ("1", "0"):
        assert (task[f"numeric A={a}"] == task[f"ordered A={a}"]).all()
        assert (task[f"numeric A={a}"] == task[f"arbitrary A={a}"]).all()
        assert proxy[f"ordered A={a}"].str.fullmatch(r"level [1-4]").all()
        assert proxy[f"arbitrary A={a}"].str.fullmatch(r"[A-Z]{2}").all()
    assert proxy["ordered A=1"].tolist() == ["level 4"] * 4
    assert proxy["arbitrary A=1"].tolist() == ["VR", "NI", "PV", "KA"]
    assert (proxy["ordered A=1"] != proxy["ordered A=0"]).any()


# --- released prompts ------------------------------------------------------------------------------

RELEASED_FILES = [  # (rendering, example condition, answer rule) -> job_table display
    ("ordered", "learned", "released", "ordered"), ("arbitrary", "learned", "released", "arbitrary"),
    ("numeric", "learned", "released", "numeric"), ("ordered", "absent", "released", "ordered"),
    ("arbitrary", "absent", "released", "arbitrary"), ("ordered", "absent", "posthoc", "ordered"),
    ("arbitrary", "absent", "posthoc", "arbitrary"),
]


def test_every_released_encoding_control_prompt_hash_is_reproduced():
    total = 0
    for rendering, examples, source, display in RELEASED_FILES:
        cell = CELL if examples == "learned" else R.CELL_NO_EXAMPLES
        rel = data.read_csv(R.release_name(rendering, examples, source))
        jobs = prompts.job_table(cell, display, arms=("cf_a1", "cf_a0"))
        m = rel.merge(jobs, on=["arm", "pair_id", "i", "j", "order"], suffixes=("", "_ours"), validate="1:1")
        assert len(m) == len(rel) == 396
        assert (m["prompt_sha256"] == m["prompt_sha256_ours"]).all(), (rendering, examples, source)
        assert rel["prompt_sha256"].nunique() == 396
        if display == "numeric":
            assert (rel["proxy_changed"] == 1).all()
        else:
            assert (m["proxy_changed"] == m["proxy_changed_ours"]).all()
        total += len(m)
    assert total == 7 * 396


# --- estimators on known inputs ------------------------------------------------------------------

def _records(pick: dict[tuple[int, int], tuple[list[float], list[float]]]) -> pd.DataFrame:
    """Synthetic records: per pair (i, j) the picks of orders 0 and 1 in cf_a1 and in cf_a0."""
    rows = []
    for pid, ((i, j), (a1, a0)) in enumerate(sorted(pick.items())):
        for arm, vals in (("cf_a1", a1), ("cf_a0", a0)):
            for order, v in enumerate(vals):
                rows.append({"arm": arm, "pair_id": pid, "i": i, "j": j, "order": order, "patient": 1.0,
                             "chosen": float(i), "picked_i": v})
    return records.normalise(pd.DataFrame(rows))


def test_interval_is_seed_0_afresh_with_integer_draws():
    v = np.array([1.0, 0.0, -0.5, 0.5, 1.0, 0.0, 0.0, -1.0, 0.5])
    got = R.interval(v, draws=300)
    rng = np.random.default_rng(0)
    means = [v[rng.integers(0, len(v), len(v))].mean() for _ in range(300)]
    lo, hi = np.percentile(means, [2.5, 97.5])
    assert got == pytest.approx({"effect_pp": 100 * v.mean(), "lo_pp": 100 * lo, "hi_pp": 100 * hi, "n_pairs": 9})
    assert R.interval(v, draws=300) == got  # a fresh generator for every quantity


def test_paired_difference_intersects_and_shares_the_draw():
    idx = pd.MultiIndex.from_tuples([(1, 2), (3, 4), (5, 6), (7, 8)], names=["i", "j"])
    a = pd.Series([1.0, 0.5, 0.0, 1.0], index=idx)
    b = pd.Series([0.0, 0.5, -0.5], index=idx[[3, 0, 1]])  # unsorted, one pair missing
    d = R.paired(a, b)
    assert d.index.tolist() == [(1, 2), (3, 4), (7, 8)]
    assert d.tolist() == [0.5, 1.0, 1.0]
    # the paired interval is the bootstrap of the per-pair differences (one draw for both renderings)
    assert R.interval(d, 500) == R.interval(d.to_numpy(), 500)
    assert R.interval(d, 500)["lo_pp"] != pytest.approx(
        R.interval(a.loc[d.index], 500)["lo_pp"] - R.interval(b.loc[d.index], 500)["hi_pp"])


def test_pooled_runs_missing_calls_and_complete_pairs(tmp_path):
    """GPT's two-run pooling and the pairs-with-missing-calls variant on records with known answers."""
    pairs = [(10, 11), (12, 13), (14, 15)]
    run1 = {"ordered": {pairs[0]: ([1, 1], [0, 0]), pairs[1]: ([1, np.nan], [0, 1]), pairs[2]: ([1, 1], [1, 1])},
            "arbitrary": {pairs[0]: ([1, 0], [1, 0]), pairs[1]: ([0, 0], [0, 0]), pairs[2]: ([0, 1], [1, 1])}}
    run2 = {"ordered": {pairs[0]: ([1, 0], [0, 0]), pairs[1]: ([1, 1], [0, 0]), pairs[2]: ([1, 1], [0, 1])},
            "arbitrary": {pairs[0]: ([1, 1], [1, 1]), pairs[1]: ([1, 0], [0, 0]), pairs[2]: ([1, 1], [1, 1])}}
    folders = []
    for k, run in enumerate((run1, run2)):
        folder = tmp_path / f"run{k}"
        folder.mkdir()
        for rendering, picks in run.items():
            _records(picks).to_csv(folder / R.collected_name(rendering), index=False)
        folders.append(str(folder))
    s = R.control_summary("new-model", tuple(folders), draws=200)
    # per-pair PSE, run 1 ordered: 1, 1 - 0.5 = 0.5, 0; run 2 ordered: 0.5, 1, 0.5
    assert s["run1.ordered"] == pytest.approx(100 * 1.5 / 3)
    assert s["run2.ordered"] == pytest.approx(100 * 2 / 3)
    assert s["ordered.pse"] == pytest.approx(100 * np.mean([0.75, 0.75, 0.25]))
    # arbitrary run 1: 0, 0, -0.5; run 2: 0, 0.5, 0 -> pooled 0, 0.25, -0.25
    assert s["arbitrary.pse"] == pytest.approx(0.0)
    assert s["diff.pse"] == pytest.approx(100 * np.mean([0.75, 0.5, 0.5]))
    assert s["missing.ordered"] == 1 and s["missing.arbitrary"] == 0
    assert s["complete.n"] == 2 and s["complete.pse"] == pytest.approx(100 * np.mean([0.75, 0.5]))
    assert s["corr.ordered"] == pytest.approx(np.corrcoef([1, 0.5, 0], [0.5, 1, 0.5])[0, 1])


def test_agreement_and_refusal_counts_on_known_records():
    first = _records({(1, 2): ([1, 1], [0, np.nan]), (3, 4): ([0, 1], [1, 1])})
    second = _records({(1, 2): ([1, 0], [0, 1]), (3, 4): ([0, 1], [np.nan, 1])})
    assert R.call_agreement(first, second) == {"agree": 5, "comparable": 6, "agree_pct": pytest.approx(500 / 6)}
    assert R.missing_calls(first, second) == {"total": 1, "cf_a1": 0, "cf_a0": 1}


def test_margin_is_one_sided():
    assert R.excludes_margin(4.99) and not R.excludes_margin(5.0) and not R.excludes_margin(5.05)
    t6 = R.table6()
    assert t6.set_index("quantity").loc["arbitrary", "excludes_margin"] is True
    assert t6.set_index("quantity").loc["ordered", "excludes_margin"] is False


# --- released records: every claim ---------------------------------------------------------------

@pytest.fixture(scope="module")
def values():
    return R.claim_values()


def test_every_representation_claim_with_released_inputs_matches(values):
    reg = claims.registry()
    mine = reg[reg["claim_id"].isin(values)]
    assert set(values) <= set(reg["claim_id"]), "computed values without a registry row"
    owned = reg[reg["table"].isin(["Table 1", "Table 6", "SN 4"]) | reg["claim_id"].str.startswith("Main.repr.")]
    assert set(owned["claim_id"]) <= set(values), "Table 1 / Table 6 / SN 4 rows this module does not compute"
    assert len(mine[mine["table"] == "Table 6"]) == 27 and len(mine[mine["table"] == "Table 1"]) == 20
    chk = claims.check(values=values, write=False)
    chk = chk[chk["claim_id"].isin(values)]
    assert (chk["status"] != "not_computed").all()
    bad = chk[chk["status"] == "mismatch"]
    assert bad.empty, bad[["claim_id", "paper_value", "reproduced_value"]].to_string()
    computed = chk[chk["status"] == "match"]
    assert len(computed) >= 68
    for prefix in ("T6.", "T1.sonnet.", "SN4.noex.ordered", "SN4.noex.refmiss.", "SN4.agree."):
        assert (chk[chk["claim_id"].str.startswith(prefix)]["status"] == "match").all(), prefix


def test_unreleased_models_are_not_released_with_the_reason(values):
    for model in ("gpt", "qwen", "deepseek"):
        ids = [k for k in values if k.startswith((f"T1.{model}.", f"SN4.{model}.", f"Main.repr.{model}."))
               and not k.startswith("SN4.gpt.numeric")]
        assert len(ids) >= 6
        for k in ids:
            assert isinstance(values[k], records.NotReleased), k
            assert config.MODELS[model][0] in values[k].missing and "not in the" in values[k].missing
        with pytest.raises(records.NotReleased, match=config.MODELS[model][0]):
            R.load_rendering(model, "ordered")
    assert not isinstance(values["SN4.gpt.numeric.pse"], records.NotReleased)  # GPT's battery cell is released
    assert not isinstance(values["SN15.regen.remeasure.agree"], records.NotReleased)  # released later


def _regen_output_agreements() -> dict[str, tuple[int, int]]:
    """The authors' printed agreements (analyze_regen_output.txt): ``label -> (agree, calls)``."""
    text = data.fetch("data/concurrent_checks/analysis/analyze_regen_output.txt").read_text()
    found = re.findall(r"^(\w+): frozen choices agree with the (battery|second numeric measurement) on (\d+)/(\d+)",
                       text, flags=re.M)
    return {f"{cell}.{other.split()[0]}": (int(a), int(n)) for cell, other, a, n in found}


def test_concurrent_frozen_choices_agree_as_the_authors_printed(values):
    """Supplementary Note 15: the concurrent frozen choices against the battery and the second measurement."""
    printed = _regen_output_agreements()
    assert printed["zero.battery"] == (values["SN15.frozen_battery.agree"], values["SN15.frozen_battery.comparable"])
    assert printed["b060.battery"] == (values["SN15.b060_battery.agree"], values["SN15.b060_battery.calls"])
    assert printed["zero.second"] == (values["SN15.regen.remeasure.agree"], values["SN15.regen.remeasure.calls"])


def test_released_numbers_spot_check(values):
    assert values["SN4.agree.calls"] == 317 and values["SN4.agree.comparable"] == 394
    assert (values["SN4.noex.refusal.total"], values["SN4.noex.refusal.a1"], values["SN4.noex.refusal.a0"]) == (
        124, 50, 74)
    assert values["SN4.noex.refmiss.n"] == 69
    assert values["T6.ordered_minus_arbitrary.pse"] == pytest.approx(1000 / 99)


# --- auditor use: the control through the collection stage ------------------------------------

def test_simulated_over_reader_shows_a_positive_ordered_minus_arbitrary_difference(tmp_path):
    from analysis import collection

    got = {}
    for preset in ("over-reads-ordered", "ignores-proxies"):
        expected = {}
        for display in ("ordered", "arbitrary"):
            res = collection.collect(PARSED, "simulated", preset, tmp_path, display=display, progress=False,
                                     concurrency=1)
            assert res.complete and res.records_path.name == R.collected_name(display)
            subject = collection.SimulatedSubject.preset(preset)
            expected[display] = subject.expected_pse(collection.job_list(PARSED, display))
        row = R.table1_row(preset, str(tmp_path / "simulated" / preset), draws=2000)
        got[preset] = (row, expected)
    row, expected = got["over-reads-ordered"]
    assert expected["arbitrary"] == 0.0 and expected["ordered"] > 10  # codes carry no rank to over-read
    assert row["n_pairs"] == 99 and row["difference_pp"] > 0 and row["lo_pp"] > 0
    row, expected = got["ignores-proxies"]
    assert expected["ordered"] == expected["arbitrary"] == 0.0
    assert row["lo_pp"] < 0 < row["hi_pp"]  # no reliance, no resolved difference
