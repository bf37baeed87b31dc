"""Prompts byte for byte (analysis.prompts; spec C5, C6): every released prompt hash is reproduced."""
from __future__ import annotations

import pytest

from analysis import data, prompts, records
from analysis.cells import parse_cell

CELL = parse_cell("k12_LH_neutral_learned_zero")  # the tests are a boundary: ids parsed here


def test_every_released_prompt_hash_is_reproduced():
    cat = records.catalogue()
    files = cat[cat["model"] == "sonnet-20250929"]
    assert len(files) == 7
    display = {"ordinal": "ordered", "nominal": "arbitrary", "numeric_remeasure": "numeric"}
    total = 0
    for row in files.itertuples():
        tag = next(t for t in display if f"_zero_{t}_records" in row.name)
        rel = data.read_csv(row.name)
        jobs = prompts.job_table(parse_cell(row.cell), display[tag], arms=("cf_a1", "cf_a0"))  # an id of the catalogue
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
    absent = prompts.render(parse_cell("k12_LH_social_absent_zero"), 0, "factual", 1)
    assert absent.startswith(prompts.HEAD_ABSENT + "\n\nNEW PATIENTS:\nPatient 1:\n")
    assert "community_health_index" in absent and "TRAINING" not in absent
    assert prompts.render(CELL, 0, "factual", 0, "ordered").count("level ") == 80 * 4 + 8


def test_tool_spec():
    t = prompts.tool_spec("openai")["function"]
    assert t["name"] == "choose" and t["parameters"]["properties"]["patient"] == {"type": "integer", "enum": [1, 2]}
    assert prompts.tool_spec("anthropic")["input_schema"]["required"] == ["patient"]


@pytest.mark.parametrize("cell,display", [("k12_LH_neutral_learned_zero", "numeric"),
                                          ("k18_HH_social_absent_zero", "numeric"),
                                          ("k6_LH_neutral_learned_info_b060_s20001", "numeric"),
                                          ("k12_LH_neutral_learned_zero", "ordered"),
                                          ("k12_LH_neutral_absent_zero", "arbitrary")])
def test_job_table_renders_each_arm_exactly_as_its_counterfactual_sample(cell, display):
    """job_table computes the arms of all pairs at once; each prompt equals the pair's own arm sample."""
    cell = parse_cell(cell)
    table = prompts.job_table(cell, display)
    for row in table.iloc[::13].itertuples(index=False):
        assert row.prompt == prompts.render(cell, row.pair_id, row.arm, row.order, display=display)
