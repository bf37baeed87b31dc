"""The build (make paper), the claims check and the reviewers' report."""
from __future__ import annotations

import nbformat
import pandas as pd
import pytest

from analysis import build, claims, report


def test_status_of_uses_half_a_printed_unit():
    assert claims.status_of("+21.2", "0.05", 21.2499)[0] == "match"
    assert claims.status_of("+21.2", "0.05", 21.2501)[0] == "mismatch"
    assert claims.status_of("-1.5", "0.05", -1.45)[0] == "match"
    # P values: the tolerance is relative to the printed mantissa, no absolute slack
    assert claims.status_of("1.3×10^-11", str(claims.half_unit("1.3×10^-11")), 1.247e-11)[0] == "mismatch"
    assert claims.status_of("1.3×10^-11", str(claims.half_unit("1.3×10^-11")), 1.26e-11)[0] == "match"
    assert claims.status_of("+1.0", "0.05", claims.NotReleased("x"))[0] == "not_released"
    assert claims.status_of("+1.0", "0.05", None)[0] == "not_computed"
    assert claims.status_of("+1.0", "0.05", float("nan"))[0] == "mismatch"


def test_registry_is_well_formed():
    reg = claims.registry()
    assert len(reg) > 1500
    assert reg["table"].str.fullmatch(r"Table ([1-9]|1\d|2[0-8])|Main|SN ([1-9]|1[0-8])").all()
    assert set(f"Table {n}" for n in range(1, 29)) <= set(reg["table"])
    for printed, tol in zip(reg["paper_value"], reg["tolerance"]):
        claims.parse_printed(printed)
        assert float(tol) >= claims.half_unit(printed) * (1 - 1e-9), printed
    wide = reg[[float(t) > claims.half_unit(p) * (1 + 1e-9) for p, t in zip(reg["paper_value"], reg["tolerance"])]]
    assert (wide["note"].str.len() > 0).all(), "a widened tolerance needs its reason in note"


def test_check_refuses_values_missing_from_the_registry():
    with pytest.raises(ValueError, match="missing from the registry"):
        claims.check({"No.such.claim": 1.0}, write=False)


def test_committed_claims_check_has_no_uncomputed_rows():
    from analysis import paths

    check = pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
    assert set(check["status"]) <= {"match", "mismatch", "not_released"}
    assert len(check) == len(claims.registry())
    released_gap = check[check["status"] == "not_released"]
    assert (released_gap["note"].str.contains("not released|not in the release|NOT_INCLUDED|missing",
                                              case=False)).all()


def test_report_lists_mismatches_and_unreleased_first():
    check = pd.DataFrame([
        {"claim_id": "a", "table": "Table 6", "row": "r", "column": "c", "quantity": "q", "paper_value": "+1.0",
         "tolerance": "0.05", "note": "", "reproduced_value": "1.0", "status": "match", "notebook": "05"},
        {"claim_id": "b", "table": "Table 21", "row": "r2", "column": "c", "quantity": "q", "paper_value": "+2.0",
         "tolerance": "0.05", "note": "why", "reproduced_value": "2.5", "status": "mismatch", "notebook": "06"},
    ])
    html = report.render(check)
    assert html.index("Not matched") < html.index("All claims")
    assert html.index("r2") < html.index("All claims")
    assert "Computed and shown in notebook" in html
    assert "<script" not in html


def test_update_readme_rewrites_only_the_index(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"head\n{report.INDEX_START}\nold\n{report.INDEX_END}\ntail\n", encoding="utf-8")
    check = pd.read_csv(claims.paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
    report.update_readme(check, readme)
    text = readme.read_text(encoding="utf-8")
    assert text.startswith("head\n") and text.endswith("tail\n") and "old" not in text
    assert "| Table 28 |" in text and "| SN 18 |" in text


def test_merge_streams_and_strip_metadata(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("print(1)")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="a\n"),
                    nbformat.v4.new_output("stream", name="stdout", text="b\n"),
                    nbformat.v4.new_output("stream", name="stderr", text="w\n")]
    cell.metadata["papermill"] = {"duration": 1.0}
    cell.metadata["execution"] = {"iopub.status.busy": "2026"}
    nb.cells.append(cell)
    nb.metadata["papermill"] = {"start_time": "2026"}
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    build.strip_metadata(path)
    got = nbformat.read(path, as_version=4)
    assert "papermill" not in got.metadata
    assert got.cells[0].metadata == {}
    assert [(o.name, o.text) for o in got.cells[0].outputs] == [("stdout", "a\nb\n"), ("stderr", "w\n")]


def test_a_failing_notebook_stops_with_its_name_and_cell(tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("x = 1"), nbformat.v4.new_code_cell("raise ValueError('boom')")]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path = tmp_path / "99_broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(RuntimeError, match=r"99_broken\.ipynb failed at cell .*ValueError: boom"):
        build.execute(path)
