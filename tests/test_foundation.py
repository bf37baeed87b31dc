"""Foundation: inputs by hash, the population, pairs, examples and prompts (issue 2; spec C1-C4, C11-C14)."""
from __future__ import annotations

import gzip
import hashlib
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from analysis import cells, config, data, paths, population, prompts, records, representation

CELL = "k12_LH_neutral_learned_zero"


# --- checkpoints --------------------------------------------------------------------------------

def test_c1_c2_pairs_checkpoints():
    p12 = population.pairs(CELL)
    assert list(map(tuple, p12.loc[[0, 1, 2, 33, 66], ["i", "j"]].to_numpy())) == [
        (4929, 454), (2554, 3265), (2963, 4244), (2525, 3767), (1050, 696)]
    assert list(map(tuple, population.pairs("k6_LH_neutral_absent_zero").loc[:2, ["i", "j"]].to_numpy())) == [
        (3929, 1806), (706, 504), (1727, 3834)]
    assert list(map(tuple, population.pairs("k18_LH_neutral_absent_zero").loc[:2, ["i", "j"]].to_numpy())) == [
        (3929, 1806), (1335, 4290), (4210, 406)]
    assert tuple(population.pairs("k6_HH_neutral_absent_zero").loc[0, ["i", "j"]]) == (1221, 1677)
    assert tuple(population.pairs("k18_HH_neutral_absent_zero").loc[0, ["i", "j"]]) == (84, 4107)
    assert (p12.groupby("stratum").size() == 33).all() and len(p12) == 99


def test_c3_population_checkpoint():
    s = population.population(CELL)
    np.testing.assert_allclose(s.w, [0.456792, 0.424164, 0.391536, 0.358908, 0.32628, 0.293652, 0.261024,
                                     0.228396], atol=5e-7)
    assert s.A[:10].tolist() == [0, 1, 0, 1, 1, 0, 0, 0, 0, 0]
    np.testing.assert_allclose(s.X[0], [1.143678, 1.908396, -1.048668, 1.53829, -1.058131, 0.086651, -0.295053,
                                        0.793105, -0.865802, -0.078931, -0.152763, -1.1299], atol=5e-7)
    for k, expected in ((6, 0.22627417), (12, 0.12199886), (18, 0.08363334)):
        np.testing.assert_allclose(population.population(f"k{k}_LH_neutral_absent_info").w_P, expected, atol=5e-9)


def test_c4_example_row_and_sweep_labels():
    ex = population.examples(CELL)
    row = prompts.value_strings(ex.X[0], CELL)[0]
    assert ",".join(row) + " -> " + prompts.fmt(ex.Y[0]) == \
        "0.86,-0.52,0.27,0.14,0.78,-2.43,1.78,-0.06,1.93,2.36,1.34,2.41 -> 0.19"
    for tag, y0 in (("b030", 0.911907), ("b045", 1.251092), ("b060", 1.580804)):
        assert population.examples(f"k12_LH_neutral_learned_info_{tag}").Y[0] == pytest.approx(y0, abs=5e-7)
    k6 = population.examples("k6_LH_neutral_learned_zero")
    np.testing.assert_allclose(k6.X[0], [0.759304, -0.515633, 0.151372, 0.3291, 1.91953, 1.788632], atol=5e-7)
    assert k6.Y[0] == pytest.approx(1.457148, abs=5e-7)


def test_c11_codes_edges_and_example_bins():
    assert representation.code_table(4) == (("BT", "TO", "QX", "VR"), ("WE", "LC", "RZ", "NI"),
                                            ("GU", "MW", "SY", "PV"), ("DK", "HJ", "FN", "KA"))
    np.testing.assert_allclose(representation.quartile_edges(CELL), [
        [-0.698814, 0.007519, 0.676512], [-0.693583, -0.003149, 0.712804],
        [-0.685331, -0.004698, 0.678362], [-0.700235, 0.001755, 0.702151]], atol=5e-7)
    ex = population.examples(CELL)
    assert representation.bins(ex.X[0, 8:], representation.quartile_edges(CELL)).tolist() == [[3, 3, 3, 3]]
    assert prompts.value_strings(ex.X[0], CELL, "arbitrary")[0][8:] == ["VR", "NI", "PV", "KA"]


@pytest.mark.slow
def test_c12_manipulation_checks():
    mc = population.manipulation_checks().set_index(["k", "corner"])
    assert round(mc.loc[(6, "LL"), "a_mc"], 4) == 0.0682 and round(mc.loc[(6, "LH"), "a_mc"], 4) == 0.4245
    assert round(mc.loc[(12, "LH"), "a_mc"], 4) == 0.4264 and round(mc.loc[(18, "LL"), "a_mc"], 4) == 0.0694
    assert [round(mc.loc[(k, "HH"), "structure"], 3) for k in (6, 12, 18)] == [0.294, 0.311, 0.315]
    assert [round(mc.loc[(k, "LH"), "structure"], 3) for k in (6, 12, 18)] == [0.113, 0.154, 0.166]


def test_c13_true_risk_variance_over_sweep():
    got = [np.var(population.population(f"k12_LH_neutral_learned_{t}").r_true)
           for t in ("zero", "info_b030", "info_b045", "info_b060")]
    np.testing.assert_allclose(got, [1.0219, 1.0916, 1.0882, 1.0857], atol=5e-5)


def _mean_proxy_outcome_corr(cell):
    ex = population.examples(cell)
    return np.mean([np.corrcoef(ex.X[:, c], ex.Y)[0, 1] for c in range(ex.L, ex.L + ex.M)])


def test_c14_example_proxy_outcome_correlation():
    got = [_mean_proxy_outcome_corr(f"k12_LH_neutral_learned_{t}") for t in ("zero", "info_b030", "info_b045",
                                                                             "info_b060")]
    np.testing.assert_allclose(got, [0.121, 0.314, 0.403, 0.488], atol=5e-4)
    assert round(_mean_proxy_outcome_corr("k12_LH_neutral_learned_zero_n12"), 3) == -0.334
    assert round(_mean_proxy_outcome_corr("k12_LH_neutral_learned_zero_n20"), 3) == 0.136
    for rho in (0.0, 0.4, 0.7):  # the correlation manipulation sets every proxy's sample correlation
        ex = population.examples(f"k12_LH_neutral_learned_zero_r{round(rho * 100):02d}")
        for c in range(ex.L, ex.L + ex.M):
            assert np.corrcoef(ex.X[:, c], ex.Y)[0, 1] == pytest.approx(rho, abs=1e-12)


def test_counterfactual_changes_only_the_target_and_sweep_keeps_pairs():
    pop = population.population(CELL)
    i = 4929
    cf = population.counterfactual(pop, i, 1 - pop.A[i])
    changed = np.flatnonzero((cf.P != pop.P).any(axis=1))
    assert changed.tolist() == [i]
    assert np.array_equal(cf.r, pop.r) and np.array_equal(cf.Xleg, pop.Xleg)
    frozen = population.counterfactual(pop, i, 1 - pop.A[i], freeze_scaler=True)
    assert np.array_equal(np.delete(frozen.X, i, axis=0), np.delete(pop.X, i, axis=0))
    same = population.counterfactual(pop, i, pop.A[i])
    assert np.array_equal(same.X, pop.X)
    for tag in ("info", "info_b030", "info_b060"):
        assert population.pairs(f"k12_LH_neutral_learned_{tag}").equals(population.pairs(CELL))
    assert np.array_equal(population.population("k12_LH_neutral_learned_info_b060").X, pop.X)


def test_seed_replication_redraws_everything():
    c = cells.parse_cell("k12_LH_neutral_learned_zero_s20001")
    assert (c.population_seed, c.pair_seed, c.example_seed) == (20001, 40001, 60001)
    assert not population.pairs(c).equals(population.pairs(CELL))


# --- released pairs and prompt hashes (100 %) ------------------------------------------------

#: released files whose pair ids number the strata in descending order (jobs were queued
#: stratum-descending); their (i, j) pairs are ours, in blocks of 33 from stratum 2 down
STRATUM_DESCENDING_IDS = {"data/raw_records/claude-sonnet-4-5/coupling/expK_cpl_k12_HH_factual_records.csv"}


def test_every_released_synthetic_records_file_uses_our_pairs():
    cat = records.catalogue()
    assert len(cat) >= 250
    for row in cat.itertuples():
        raw = data.read_csv(row.name, usecols=["pair_id", "i", "j"])
        rel = raw.assign(pair_id=records._pair_ids(raw, row.cell)).drop_duplicates()
        ours = population.pairs(row.cell)
        m = rel.merge(ours, on=["i", "j"], how="left", suffixes=("", "_ours"), validate="1:1")
        assert m["pair_id_ours"].notna().all(), f"{row.name}: pairs not in our pair set"
        expected = m["pair_id_ours"].astype(int)
        if row.name in STRATUM_DESCENDING_IDS:
            expected = 33 * (2 - m["stratum"]) + expected % 33
        assert (m["pair_id"] == expected).all(), row.name
        assert rel["pair_id"].nunique() == len(rel), row.name


def test_every_released_prompt_hash_is_reproduced():
    cat = records.catalogue()
    files = cat[cat["model"] == "sonnet-20250929"]
    assert len(files) == 7
    display = {"ordinal": "ordered", "nominal": "arbitrary", "numeric_remeasure": "numeric"}
    total = 0
    for row in files.itertuples():
        tag = next(t for t in display if f"_zero_{t}_records" in row.name)
        rel = data.read_csv(row.name)
        jobs = prompts.job_table(row.cell, display[tag], arms=("cf_a1", "cf_a0"))
        m = rel.merge(jobs, on=["arm", "pair_id", "i", "j", "order"], suffixes=("", "_ours"), validate="1:1")
        assert len(m) == len(rel) == 396
        assert (m["prompt_sha256"] == m["prompt_sha256_ours"]).all(), row.name
        if "proxy_changed_ours" in m:
            assert (m["proxy_changed"] == m["proxy_changed_ours"]).all()
        total += len(m)
    assert total == 7 * 396


def test_c5_c6_prompt_checkpoints():
    text = prompts.render(CELL, 0, "cf_a1", 0)
    assert len(text) == 7168 and prompts.sha256(text).startswith("8029e10f") and text.endswith("\n")
    assert "\nPatient 1:\n  hemoglobin_index: 1.41\n  creatinine_marker: -1.25\n" in text
    assert "\nPatient 2:\n  hemoglobin_index: 0.77\n" in text
    assert prompts.sha256(prompts.render(CELL, 0, "cf_a1", 0, "arbitrary")).startswith("f29436ec")
    absent = prompts.render("k12_LH_social_absent_zero", 0, "factual", 1)
    assert absent.startswith(prompts.HEAD_ABSENT + "\n\nNEW PATIENTS:\nPatient 1:\n")
    assert "community_health_index" in absent and "TRAINING" not in absent
    assert prompts.render(CELL, 0, "factual", 0, "ordered").count("level ") == 80 * 4 + 8


def test_tool_spec():
    t = prompts.tool_spec("openai")["function"]
    assert t["name"] == "choose" and t["parameters"]["properties"]["patient"] == {"type": "integer", "enum": [1, 2]}
    assert prompts.tool_spec("anthropic")["input_schema"]["required"] == ["patient"]


# --- bad inputs ----------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", ["k12_LH_neutral", "k10_LH_neutral_learned_zero", "k12_XX_neutral_learned_zero",
                                 "k12_LH_neutral_absent_info_b030", "k12_LH_neutral_learned_zero_s"])
def test_malformed_cell_ids(bad):
    with pytest.raises(cells.CellError, match=r"expected k\{6,12,18\}"):
        cells.parse_cell(bad)


def _cli(*args):
    return subprocess.run([sys.executable, "-m", "analysis", *args], capture_output=True, text=True, cwd=paths.ROOT)


def test_cli_pairs_and_prompt():
    out = _cli("pairs", "--k", "12", "--corner", "LH")
    assert out.returncode == 0 and out.stdout.splitlines()[:2] == ["pair_id,i,j,stratum", "0,4929,454,0"]
    assert len(out.stdout.splitlines()) == 100
    out = _cli("prompt", "--cell", CELL, "--pair", "0", "--arm", "cf_a1", "--order", "0")
    assert hashlib.sha256(out.stdout.encode()).hexdigest().startswith("8029e10f")


def test_cli_bad_cell_is_one_line_exit_2():
    out = _cli("prompt", "--cell", "k12_LH_nope", "--pair", "0", "--arm", "cf_a1", "--order", "0")
    assert out.returncode == 2 and out.stdout == ""
    assert len(out.stderr.strip().splitlines()) == 1 and "expected k{6,12,18}" in out.stderr


# --- inputs by name and hash -----------------------------------------------------------------------

@pytest.fixture
def fake_inputs(tmp_path, monkeypatch):
    """A registry of two files in a temporary mirror (one gzip), and an empty cache."""
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    good = b"a,b\n1,2\n"
    (mirror / "good.csv").write_bytes(good)
    with gzip.open(mirror / "packed.csv.gz", "wb") as fh:
        fh.write(good)
    (mirror / "bad.csv").write_bytes(b"tampered\n")
    sha = hashlib.sha256(good).hexdigest()
    reg = pd.DataFrame([
        {"name": "x/good.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "good.csv",
         "compression": "none", "source": "test"},
        {"name": "x/packed.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "packed.csv.gz",
         "compression": "gzip", "source": "test"},
        {"name": "x/bad.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "bad.csv",
         "compression": "none", "source": "test"},
        {"name": "x/absent.csv", "sha256": sha, "url": "http://127.0.0.1:9/none", "mirror": "absent.csv",
         "compression": "none", "source": "test"},
    ])
    reg_path = tmp_path / "registry.csv"
    reg.to_csv(reg_path, index=False)
    monkeypatch.setattr(paths, "INPUT_REGISTRY", reg_path)
    monkeypatch.setenv("PROXY_AUDIT_MIRROR", str(mirror))
    monkeypatch.setenv("PROXY_AUDIT_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("PROXY_AUDIT_OFFLINE", "1")
    data.registry.cache_clear()
    data._verified.clear()
    yield tmp_path / "cache", sha
    data.registry.cache_clear()
    data._verified.clear()


def test_fetch_from_mirror_and_gzip(fake_inputs):
    cache, sha = fake_inputs
    for name in ("x/good.csv", "x/packed.csv"):
        p = data.fetch(name)
        assert p.read_bytes() == b"a,b\n1,2\n" and data.sha256_of(p) == sha


def test_hash_mismatch_is_one_line_and_leaves_nothing(fake_inputs):
    cache, sha = fake_inputs
    with pytest.raises(data.InputError) as exc:
        data.fetch("x/bad.csv")
    msg = str(exc.value)
    assert "\n" not in msg and "x/bad.csv" in msg and sha in msg
    assert hashlib.sha256(b"tampered\n").hexdigest() in msg
    assert not list(cache.rglob("*bad*"))


def test_missing_file_is_one_line(fake_inputs):
    with pytest.raises(data.InputError) as exc:
        data.fetch("x/absent.csv")
    msg = str(exc.value)
    assert "\n" not in msg and "x/absent.csv" in msg and "missing" in msg and fake_inputs[1] in msg


def test_corrupted_cache_is_replaced(fake_inputs):
    cache, sha = fake_inputs
    p = data.fetch("x/good.csv")
    p.write_bytes(b"corrupted")
    data._verified.clear()
    assert data.sha256_of(data.fetch("x/good.csv")) == sha


def test_registry_lists_every_released_file_with_url():
    reg = data.registry()
    assert reg.loc["uci/diabetes130/uci_diabetes_130hosp.csv", "sha256"].startswith("f792c388")
    assert reg.loc["uci/diabetes130/IDs_mapping.csv", "sha256"].startswith("f1bb82b4")
    rel = reg[reg["source"].str.startswith("wuzengqing001225")]
    assert len(rel) >= 390
    assert all(u.startswith("https://raw.githubusercontent.com/wuzengqing001225/llm_proxy_reliance/") for u in rel["url"])
    assert reg["sha256"].str.fullmatch(r"[0-9a-f]{64}").all()
