"""Cue renderings of the construct-validity panel (issue 15; beyond the paper's protocol)."""
from __future__ import annotations

import pandas as pd
import pytest

from analysis import config, cues, prompts
from analysis.cells import parse_cell
from analysis.population import arm_sample, pairs
from analysis.validity.subjects import read_cue_patients

CELL = parse_cell("k12_LH_neutral_learned_zero")  # the tests are a boundary: ids parsed here
SOCIAL = parse_cell("k12_LH_social_learned_zero")


# --- vocabularies -----------------------------------------------------------------------------------

@pytest.mark.parametrize("names", ["neutral", "social"])
def test_vocabularies_hold_the_paper_set_and_two_more(names):
    v = cues.vocabularies(names)
    assert list(v)[0] == "paper" and v["paper"] == config.PROXY_NAMES[names]
    assert len(v) >= 3 and all(len(ns) == 6 for ns in v.values())


def test_vocabulary_names_are_unique_and_never_task_names():
    every = [n for s in config.PROXY_NAMES for ns in cues.vocabularies(s).values() for n in ns]
    assert len(every) == len(set(every)) and not set(every) & set(config.TASK_NAMES)
    assert cues.name_index()["cytokine_panel_score"] == ("neutral", "assay", 0)
    assert (cues.CUES_DIR / "README.md").read_text().count("rationale") >= 1


def test_parse_cue_round_trips_every_panel_cue():
    for names in ("neutral", "social"):
        for q in cues.panel_cues(names):
            assert cues.parse_cue(q.id) == q
    assert [q.id for q in cues.panel_cues("neutral")] == [
        "numeric", "numeric:assay", "numeric:opaque", "ordered", "arbitrary", "narrative", "label"]
    assert cues.parse_cue("narrative:ordered:assay") == cues.Cue("assay", "ordered", "narrative")
    for bad in ("sideways", "numeric:assay:extra"):
        with pytest.raises(ValueError, match="unknown cue"):
            cues.parse_cue(bad)
    with pytest.raises(ValueError, match="unknown vocabulary"):
        cues.job_table(CELL, "numeric:area")  # a social vocabulary in a neutral cell


# --- the paper's renderings are unchanged -----------------------------------------------------------

@pytest.mark.parametrize("display", config.DISPLAYS)
def test_paper_cues_are_the_papers_prompts(display):
    mine, paper = cues.job_table(CELL, display), prompts.job_table(CELL, display=display)
    assert list(mine["prompt_sha256"]) == list(paper["prompt_sha256"])
    assert (mine["cue"] == display).all()


def test_released_prompt_hashes_still_reproduce():
    t = cues.job_table(CELL, "numeric").set_index(["arm", "pair_id", "order"])
    assert t.loc[("cf_a1", 0, 0), "prompt_sha256"].startswith("8029e10f")
    a = cues.job_table(CELL, "arbitrary").set_index(["arm", "pair_id", "order"])
    assert a.loc[("cf_a1", 0, 0), "prompt_sha256"].startswith("f29436ec")


def test_own_assembly_reproduces_the_paper_prompt_with_the_paper_vocabulary():
    """The non-paper code path, given the paper's vocabulary, writes the paper's prompt byte for byte."""
    q = cues.Cue()
    p = pairs(CELL).iloc[3]
    s = arm_sample(CELL, int(p.i), "cf_a0")
    vi, vj = cues.row_values(s.X[[p.i, p.j]], s.A[[p.i, p.j]], CELL, q)
    own = (prompts.HEAD_LEARNED.format(n=80) + cues.example_block(CELL, q)
           + cues.patients_block(cues.field_names(CELL, q), vi, vj))
    assert own == prompts.render(CELL, 3, "cf_a0", 0)


@pytest.mark.parametrize("cell,cue", [(CELL, "numeric:assay"), (CELL, "numeric:opaque"), (SOCIAL, "numeric:status")])
def test_a_vocabulary_changes_only_the_proxy_names(cell, cue):
    q, c = cues.parse_cue(cue), cell
    mine, paper = cues.job_table(cell, q), prompts.job_table(cell)
    text = mine["prompt"].iloc[7]
    for new, old in zip(cues.vocabularies(c.names)[q.vocabulary][: c.M], config.PROXY_NAMES[c.names][: c.M]):
        assert new in text
        text = text.replace(new, old)
    assert text == paper["prompt"].iloc[7]


# --- narrative and explicit label -------------------------------------------------------------------

def test_narrative_is_one_sentence_per_patient_with_the_same_values():
    nar, lines = cues.job_table(CELL, "narrative"), cues.job_table(CELL, "numeric")
    for k in (0, 100, 593):
        tail = nar["prompt"].iloc[k].rpartition("NEW PATIENTS:\n")[2]
        assert tail.count("\n") == 2 and tail.startswith("Patient 1 has ") and "\nPatient 2 has " in tail
        assert read_cue_patients(nar["prompt"].iloc[k]) == read_cue_patients(lines["prompt"].iloc[k])
    assert nar["prompt"].iloc[0].split("NEW PATIENTS")[0] == lines["prompt"].iloc[0].split("NEW PATIENTS")[0]


def test_label_states_the_group_of_each_arm():
    t = cues.job_table(CELL, "label")
    pop_A = arm_sample(CELL, 0, "factual").A
    for r in t.sample(40, random_state=0).itertuples():
        p1, p2 = read_cue_patients(r.prompt)
        target, other = (p1, p2) if r.order == 0 else (p2, p1)
        assert target[-1][0] == cues.GROUP_FIELD and other[-1][0] == cues.GROUP_FIELD
        want = {"cf_a1": "group A", "cf_a0": "group B"}.get(r.arm, cues.GROUP_VALUES[int(pop_A[r.i])])
        assert target[-1][1] == want
        assert other[-1][1] == cues.GROUP_VALUES[int(pop_A[r.j])]
    assert "group  ->  risk" in t["prompt"].iloc[0].replace(", group", " group")


# --- probe ------------------------------------------------------------------------------------------

@pytest.mark.parametrize("variant", cues.PROBE_VARIANTS)
def test_probe_shows_the_target_in_both_arms(variant):
    t = cues.probe_table(CELL, "numeric", variant)
    assert len(t) == 2 * len(pairs(CELL)) and set(t["group_a_patient"]) == {1, 2}
    assert (t["group_a_patient"] == t["order"] + 1).all()
    assert t["prompt"].str.contains(cues.PROBE_ABSTAIN, regex=False).all() == (variant == "abstain")
    assert t["prompt"].str.contains("-> group A").all() and t["prompt"].str.contains("-> group B").all()
    p1, p2 = read_cue_patients(t["prompt"].iloc[0])
    assert p1[:8] == p2[:8] and p1[8:] != p2[8:]  # same task values, different proxies
    order1 = read_cue_patients(t["prompt"].iloc[1])
    assert order1 == (p2, p1)


def test_probe_of_the_label_cue_keeps_the_label_off_the_examples():
    t = cues.probe_table(CELL, "label", "forced")
    block = t["prompt"].iloc[0].split("REFERENCE CASES (format: ")[1].split("\n")[0]
    assert cues.GROUP_FIELD + "  ->" not in block and block.endswith("->  group):")
    p1, p2 = read_cue_patients(t["prompt"].iloc[0])
    assert p1[-1] == ("group", "group A") and p2[-1] == ("group", "group B")
    with pytest.raises(ValueError, match="variant"):
        cues.probe_table(CELL, "numeric", "maybe")


def test_category_cues_ask_only_the_counterfactual_arms():
    t = cues.job_table(CELL, "ordered")
    assert set(t["arm"]) == {"cf_a1", "cf_a0"} and isinstance(t, pd.DataFrame)


def test_abstention_tool_variant_and_text_form_leave_the_paper_tool_alone():
    for provider in ("openai", "anthropic"):
        spec = cues.probe_tool_spec(provider)
        body = spec["function"] if provider == "openai" else spec
        schema = body["parameters"] if provider == "openai" else body["input_schema"]
        assert schema["properties"]["patient"]["enum"] == [0, 1, 2] and "0" in body["description"]
        paper = prompts.tool_spec(provider)
        paper_schema = paper["function"]["parameters"] if provider == "openai" else paper["input_schema"]
        assert paper_schema["properties"]["patient"]["enum"] == [1, 2]  # the paper's tool is unchanged
    assert [cues.probe_answer_from_text(t) for t in ("0", "I choose 1.", "answer: 2", "12", "none")] == [0, 1, 2, None, None]
    assert [cues.probe_answer_from_args(a) for a in ({"patient": 0}, {"patient": True}, "{bad")] == [0, None, None]


@pytest.mark.parametrize("cue", ["numeric", "numeric:assay", "narrative"])
def test_cached_cue_tables_equal_a_fresh_rendering_and_hand_out_copies(cue):
    """The per-process caches of job, probe and blind tables (issue 21 speed) return exactly what an
    uncached rendering gives, and a caller editing its table does not edit the next caller's."""
    c, q = parse_cell("k12_LH_neutral_learned_zero"), cues.parse_cue(cue)
    pd.testing.assert_frame_equal(cues.job_table(c, cue), cues._job_table.__wrapped__(c, q), check_exact=True)
    pd.testing.assert_frame_equal(cues.probe_table(c, cue, "abstain"),
                                  cues._probe_table.__wrapped__(c, q, "abstain"), check_exact=True)
    pd.testing.assert_frame_equal(cues.blind_table(c), cues._blind_table.__wrapped__(c), check_exact=True)
    t = cues.job_table(c, cue)
    t.loc[0, "prompt"] = "edited"
    t["extra"] = 1
    again = cues.job_table(c, cue)
    assert again.loc[0, "prompt"] != "edited" and "extra" not in again
