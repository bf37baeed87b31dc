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


# --- notebooks: parameters, output folders, reproducible outputs (issue 17) -----------------------

import ast  # noqa: E402
import re  # noqa: E402
import tomllib  # noqa: E402
from importlib import resources  # noqa: E402
from pathlib import Path  # noqa: E402

from analysis import notebook, paths  # noqa: E402

SOURCES = [s for s in build.notebook_sources() if s.name[:2] != "09"]  # 09 (validity) writes no products


def _kernel_notebook(path, parameters_source, body):
    nb = nbformat.v4.new_notebook()
    p = nbformat.v4.new_code_cell(parameters_source)
    p.metadata["tags"] = ["parameters"]
    nb.cells = [p] + [nbformat.v4.new_code_cell(b) for b in body]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(nb, path)
    return path


def test_every_notebook_has_output_dir_defaulting_to_the_scratch_folder():
    assert len(SOURCES) == 9  # 01-08 and 10 (calibration)
    for s in SOURCES:
        params = build.notebook_parameters(s)
        assert params.get("output_dir") == notebook.SCRATCH, s.name
        for old in ("out_dir", "figures_dir", "fig_dir", "figure_name", "draws", "subject"):
            assert old not in params, f"{s.name}: {old} was renamed"
    assert (paths.NOTEBOOKS / notebook.SCRATCH).resolve() == paths.ROOT / "out" / "notebooks"
    assert notebook.output_folders(notebook.TRACKED).figures == paths.FIGURES


def test_notebooks_write_only_through_their_output_folders():
    for s in SOURCES:
        text = s.read_text(encoding="utf-8")
        assert "figures.save(" not in text and "paths.FIGURES" not in text and "paths.DERIVED" not in text, s.name
        assert '"../data/derived"' not in text and '"../figures"' not in text, s.name


def test_parameter_names_are_shared_across_notebooks():
    names = {s.stem: set(build.notebook_parameters(s)) for s in SOURCES}
    # one vocabulary: the same meaning has the same name wherever it occurs
    for nb in ("05_representation_control", "07_supplement_tables", "08_audit_your_model"):
        assert "bootstrap_draws" in names[nb], nb
    for nb in ("05_representation_control", "06_uci_real_records"):
        assert "records_source" in names[nb], nb


def test_build_refuses_a_parameter_the_notebook_does_not_have(capsys):
    assert build.main(["--only", "05", "-p", "draws", "1000"]) == 2
    err = capsys.readouterr().err
    assert "05_representation_control has no parameter draws" in err and "bootstrap_draws" in err
    assert build.main(["--only", "04", "-p", "bootstrap_draws", "1000"]) == 2
    assert build.main(["--only", "05", "-p", "output_dir", "/tmp/x"]) == 2
    assert build.main(["--only", "99"]) == 2


def test_build_parser_values_and_notebook_parameters():
    assert build.parse_value("1000") == 1000 and build.parse_value("sonnet") == "sonnet"
    params = build.notebook_parameters(paths.NOTEBOOKS / "06_uci_real_records.py")
    assert params["n_primary"] == 1200 and params["records_source"] == "released"


def _readme_commands():
    """(notebook number, [parameter names]) of every papermill / analysis.build command in README.md."""
    text = (paths.ROOT / "README.md").read_text(encoding="utf-8")
    found = []
    for line in re.findall(r"[^\n`]*(?:papermill|analysis\.build)[^\n`]*", text):
        names = re.findall(r"-p\s+(\w+)", line)
        nb = re.search(r"notebooks/(\d\d)_\w+\.ipynb", line)
        only = re.search(r"--only\s+((?:\d\d\s*)+)", line)
        numbers = [nb.group(1)] if nb else (only.group(1).split() if only else [s.name[:2] for s in SOURCES])
        found.append((line.strip(), numbers, names))
    return found


def test_readme_notebook_commands_name_existing_parameters():
    commands = _readme_commands()
    assert any(names for _, _, names in commands), "the README shows at least one parameterised run"
    by_number = {s.name[:2]: set(build.notebook_parameters(s)) for s in SOURCES}
    for line, numbers, names in commands:
        for n in numbers:
            assert n in by_number, line
            unknown = set(names) - by_number[n]
            assert not unknown, f"README: {line!r} passes {unknown} which notebook {n} does not have"


def test_readme_papermill_runs_keep_tracked_outputs_safe():
    for line, _, names in _readme_commands():
        assert "output_dir" not in names or "-p output_dir .." not in line, line


MACHINE_PATH = re.compile(r"(?<![\w.])(/work/|/tmp/|/home/|/root/|/Users/|/private/var/|[A-Z]:\\\\Users)")


def test_committed_notebook_outputs_hold_no_machine_path():
    for nb_path in sorted(paths.NOTEBOOKS.glob("[0-9][0-9]_*.ipynb")):
        nb = nbformat.read(nb_path, as_version=4)
        for i, cell in enumerate(nb.cells):
            for out in cell.get("outputs", []):
                text = str(out.get("text", "")) + str(out.get("data", {}).get("text/plain", ""))
                hit = MACHINE_PATH.search(text)
                assert hit is None, f"{nb_path.name} cell {i}: {text[max(0, hit.start() - 40):hit.end() + 40]!r}"


def test_notebook_08_audits_into_a_fresh_folder_by_default():
    params = build.notebook_parameters(paths.NOTEBOOKS / "08_audit_your_model.py")
    assert params["out"] is None
    assert "tempfile.mkdtemp" in (paths.NOTEBOOKS / "08_audit_your_model.py").read_text(encoding="utf-8")


def test_strip_metadata_drops_the_injected_output_dir_and_collapses_long_checks(tmp_path):
    nb = nbformat.v4.new_notebook()
    inj = nbformat.v4.new_code_cell('# Parameters\noutput_dir = ".."\n')
    inj.metadata["tags"] = ["injected-parameters"]
    check = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(table)")
    check.outputs = [nbformat.v4.new_output("stream", name="stdout", text="row\n" * 30)]
    shown = nbformat.v4.new_code_cell("notebook.claims_table(view)")
    shown.outputs = [nbformat.v4.new_output("execute_result", data={"text/html": "<table/>", "text/plain": "t"},
                                            execution_count=3)]
    short = nbformat.v4.new_code_cell("# NBVAL_CHECK_OUTPUT\nprint(1)")
    short.outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nb.cells = [inj, check, shown, short]
    path = tmp_path / "x.ipynb"
    nbformat.write(nb, path)
    build.strip_metadata(path)
    got = nbformat.read(path, as_version=4)
    assert len(got.cells) == 3 and "output_dir" not in got.cells[0].source
    assert got.cells[0].metadata.get("jupyter", {}).get("outputs_hidden") is True
    assert "jupyter" not in got.cells[2].metadata


def test_a_bad_parameter_value_stops_the_notebook_with_one_clear_error(tmp_path):
    path = _kernel_notebook(tmp_path / "98_params.ipynb", "bootstrap_draws = 10\nmodel = 'sonnet'", [
        "from analysis import notebook\n"
        "notebook.check_parameters(choices={'model': (model, ('sonnet', 'gpt'))}, counts={'bootstrap_draws': bootstrap_draws})",
        "print('ran')"])
    with pytest.raises(build.BuildError, match=r"ParameterError: model='claude' is not one of 'sonnet', 'gpt'; "
                                                r"bootstrap_draws=0 must be a positive integer"):
        build.execute(path, {"model": "claude", "bootstrap_draws": 0})
    assert build.execute(path, {"model": "gpt"}) > 0


def test_claims_table_renders_status_and_keeps_a_short_text_form():
    view = pd.DataFrame({"row": ["a", "b"], "column": ["x", "y"], "paper": ["+1.0", "+2.0"], "ours": ["+1.0", "+2.5"],
                         "status": ["match", "mismatch"], "note": ["", "why"]})
    r = notebook.claims_table(view, "Table 9")
    assert repr(r) == "Table 9: 2 claims: 1 match, 1 mismatch"
    assert "#fadbd8" in r._repr_html_() and "why" in r._repr_html_() and "0x" not in r._repr_html_()
    assert notebook.claims_table(view, "Table 9")._repr_html_() == r._repr_html_()  # no random ids
    long = pd.concat([view] * 40, ignore_index=True)
    html = notebook.claims_table(long, "Table 23")._repr_html_()
    assert "<details>" in html and "all 80 rows" in html


def test_figure_is_shown_inline_as_png():
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots()
    ax.plot([0, 1], [0, 1])
    shown = notebook.figure(fig, "Fig. 2")
    png = shown._repr_png_()
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and png == shown._repr_png_()
    assert repr(shown) == "[figure: Fig. 2]"
    plt.close(fig)


# --- packaging (issue 17) -------------------------------------------------------------------------

def _pins():
    text = (paths.ROOT / "environment.yml").read_text(encoding="utf-8")
    return {m.group(1).lower(): m.group(2) for m in re.finditer(r"^\s+- ([A-Za-z0-9_.-]+)==(\S+)", text, re.M)}


def test_project_dependencies_are_ranges_around_the_pins():
    from packaging.requirements import Requirement

    project = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    pins = _pins()
    reqs = [Requirement(r) for r in project["dependencies"]]
    reqs += [Requirement(r) for extra in project["optional-dependencies"].values() for r in extra]
    for req in reqs:
        assert req.name.lower() in pins, f"{req.name} is not pinned in environment.yml"
        assert req.specifier.contains(pins[req.name.lower()]), f"{req} excludes the pin {pins[req.name.lower()]}"
    imported = {"numpy", "pandas", "scipy", "statsmodels", "scikit-learn", "matplotlib", "pooch", "tqdm",
                "anthropic", "openai", "httpx", "httpx2", "jinja2"}  # httpx2: collection/subjects/sdk.py (issue 20)
    assert imported <= {r.name.lower() for r in reqs[:len(project["dependencies"])]}
    assert {"jupyterlab", "nbconvert"} <= set(pins)


def _constraints():
    text = (paths.ROOT / "constraints.txt").read_text(encoding="utf-8")
    return {m.group(1).lower().replace("_", "-"): m.group(2)
            for m in re.finditer(r"^([A-Za-z0-9_.-]+)==(\S+)$", text, re.M)}


def test_constraints_pin_what_the_pins_pull_in():
    """A fresh clone's .venv must not take a newer transitive release: fonttools 4.69.1 (served from 2026-12-06)
    subsets fonts with more name records, and every figure PDF of a fresh `make paper` differed."""
    pins, cons = _pins(), _constraints()
    assert cons.get("fonttools") == "4.68.0" and {"pillow", "kiwisolver", "contourpy", "pyparsing"} <= set(cons)
    for name, version in pins.items():
        assert cons.get(name.replace("_", "-")) == version, f"{name}: environment.yml {version}, constraints.txt {cons.get(name)}"
    makefile = (paths.ROOT / "Makefile").read_text(encoding="utf-8")
    assert "-r $(VENV)/requirements.txt -c constraints.txt" in makefile
    assert re.search(r"^\$\(STAMP\):.*constraints\.txt", makefile, re.M)


def test_the_running_environment_is_the_constrained_one():
    """Every pinned distribution that is installed here has its pinned version (run the tests from `make venv`'s .venv)."""
    from importlib import metadata

    off = {}
    for name, version in _constraints().items():
        try:
            have = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
        if have != version:
            off[name] = (have, version)
    assert not off, f"installed (have, pinned) differ from constraints.txt: {off}"


def test_default_price_table_ships_with_the_package():
    shipped = resources.files("analysis") / "resources" / "prices.csv"
    assert shipped.is_file()
    assert shipped.read_bytes() == (paths.DATA / "prices.csv").read_bytes()
    package_data = tomllib.loads((paths.ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    assert "resources/*.csv" in package_data["package-data"]["*"]


def test_ignored_build_outputs():
    ignored = (paths.ROOT / ".gitignore").read_text(encoding="utf-8").split()
    assert {"/build/", "/_site/", "/out/"} <= set(ignored)


def test_citation_file_is_well_formed():
    text = (paths.ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert text.startswith("cff-version: 1.2.0") and "preferred-citation:" in text and "license: MIT" in text
    assert (paths.ROOT / "LICENSE").read_text(encoding="utf-8").startswith("MIT License")


def test_make_help_expands_jobs():
    import subprocess

    out = subprocess.run(["make", "-s", "help", "JOBS=3"], cwd=paths.ROOT, capture_output=True, text=True, check=True)
    assert "3 at a time" in out.stdout and "$(JOBS)" not in out.stdout
    assert re.search(r"^site\s", out.stdout, re.M) and re.search(r"^lab\s", out.stdout, re.M)


# --- the site (issue 17) --------------------------------------------------------------------------

def test_site_renders_a_notebook_and_checks_its_links(tmp_path):
    pytest.importorskip("nbconvert")
    from analysis import site

    src = tmp_path / "src"
    src.mkdir()
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 04 · References\n\n## Tracking slopes (Table 4, Fig. 2)\ntext"),
                nbformat.v4.new_code_cell("x")]
    nb.cells[1].outputs = [nbformat.v4.new_output("display_data", data={"image/png": "iVBORw0KGgo=", "text/plain": "f"})]
    nbformat.write(nb, src / "04_references.ipynb")
    out = tmp_path / "site"
    pages = site.build(out, source=src)
    assert out / "index.html" in pages and out / "notebooks" / "04_references.html" in pages
    index = (out / "index.html").read_text(encoding="utf-8")
    assert 'href="notebooks/04_references.html#Tracking-slopes-(Table-4,-Fig.-2)"' in index
    assert "SN 18" in index and "Table 28" in index
    assert 'href="claims_report.html#table-4"' in index and 'href="claims_report.html#sn-18"' in index  # rows, counted
    assert site.check_links(out) == []
    (out / "broken.html").write_text('<a href="notebooks/04_references.html#nowhere">x</a><img src="gone.png">')
    problems = site.check_links(out)
    assert len(problems) == 2 and "no anchor #nowhere" in problems[0] and "no such file" in problems[1]


def test_build_reports_the_running_steps_while_they_run(capsys):
    import time as _time
    from concurrent.futures import ThreadPoolExecutor

    def slow(name, secs):
        _time.sleep(secs)
        return name, secs, 0

    with ThreadPoolExecutor(2) as pool:
        names = {pool.submit(slow, "03_collection", 0.5): "03_collection", pool.submit(slow, "claims", 0.05): "claims"}
        build._report(names, heartbeat=0.15, jobs=2, t0=_time.time())
    out = capsys.readouterr().out
    assert "running 03_collection" in out and "claims: " in out
    assert out.index("claims:") < out.index("03_collection: 0.5 s")


def test_notebooks_start_longest_first_by_their_last_seconds(stamp_dir):
    """The build submits the slowest notebook of the last run first (two workers finish together);
    never-timed notebooks go first in numeric order; the seconds survive between builds."""
    sources = build.notebook_sources()
    assert build.read_seconds() == {}
    assert build.longest_first(sources, {}) == sources  # nothing timed yet: numeric order
    build.record_seconds("02_prompts", 3.84)
    build.record_seconds("09_construct_validity", 40.1)
    build.record_seconds("03_collection", 33.3)
    assert build.read_seconds() == {"02_prompts": 3.8, "09_construct_validity": 40.1, "03_collection": 33.3}
    order = [s.name[:2] for s in build.longest_first(sources, build.read_seconds())]
    assert order == ["01", "04", "05", "06", "07", "08", "10", "09", "03", "02"]
    build.seconds_path().write_text("not json")
    assert build.read_seconds() == {}  # an unreadable record: numeric order again


def test_cell_progress_reads_papermills_cell_status(tmp_path, monkeypatch):
    monkeypatch.setattr(build.paths, "NOTEBOOKS", tmp_path)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("1"), nbformat.v4.new_code_cell("2"), nbformat.v4.new_markdown_cell("m")]
    nb.cells[0].metadata["papermill"] = {"status": "completed"}
    nb.cells[1].metadata["papermill"] = {"status": "running"}
    nbformat.write(nb, tmp_path / "03_collection.ipynb")
    assert build.cell_progress("03_collection") == " (cell 1/2)"
    assert build.cell_progress("claims") == ""
    (tmp_path / "04_x.ipynb").write_text('{"cells": [', encoding="utf-8")  # mid-write
    assert build.cell_progress("04_x") == ""


def test_the_build_gives_its_kernels_the_environment_make_does(monkeypatch):
    """A build run by hand (`python -m analysis.build --only 06`) must equal `make paper`'s output:
    without MPLBACKEND=Agg an inline backend shows every open figure a second time."""
    import os

    from analysis import build

    makefile = (build.paths.ROOT / "Makefile").read_text()
    for name, value in build.KERNEL_ENV.items():
        assert f"export {name} := {value}" in makefile
    monkeypatch.delenv("MPLBACKEND", raising=False)
    monkeypatch.setattr(build, "notebook_sources", lambda: [])
    build.main(["--only"])
    assert os.environ["MPLBACKEND"] == "Agg" and os.environ["PYTHONHASHSEED"] == "0"


def test_kernels_get_one_blas_thread_each_unless_the_user_chose():
    """Two kernels of two OpenBLAS threads on two cores oversubscribe them: the build gives each kernel one
    thread (make and a build by hand alike, so they share their keys) and keeps a count the user set."""
    from analysis import build

    assert build.kernel_environment({})["OPENBLAS_NUM_THREADS"] == "1"
    assert build.kernel_environment({})["OMP_NUM_THREADS"] == "1"
    assert "OPENBLAS_NUM_THREADS" not in build.kernel_environment({"OPENBLAS_NUM_THREADS": "4"})
    assert build.kernel_environment({})["MPLBACKEND"] == "Agg"


# --- each number made once (issue 21): keys, stamps, and what reruns -----------------------------

@pytest.fixture
def stamp_dir(tmp_path, monkeypatch):
    import os

    from analysis import stamps

    for name, value in build.kernel_environment(os.environ).items():  # the keys as the build computes them
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(stamps, "STAMPS", tmp_path / "build")
    cached = stamps.file_digest
    cached.cache_clear()
    yield tmp_path
    cached.cache_clear()


def test_a_step_is_current_only_with_its_key_and_unchanged_outputs(stamp_dir):
    from analysis import stamps

    out = stamp_dir / "made.csv"
    out.write_text("a,b\n1,2\n")
    stamps.record("step", "k1", [out])
    assert stamps.is_current("step", "k1")
    assert not stamps.is_current("step", "k2")  # another key: the inputs or the code changed
    out.write_text("a,b\n1,3\n")
    assert not stamps.is_current("step", "k1")  # an output edited by hand is remade
    out.unlink()
    assert not stamps.is_current("step", "k1")  # and a deleted one too
    stamps.forget("step")
    assert stamps.read_stamp("step") == {}


def test_a_notebook_key_follows_its_source_parameters_code_and_blas_kernel(stamp_dir, monkeypatch):
    from analysis import stamps

    src = build.paths.NOTEBOOKS / "07_supplement_tables.py"
    base = stamps.run_key(src)
    assert stamps.run_key(src) == base
    assert stamps.run_key(src, {"bootstrap_draws": 10}) != base
    assert stamps.run_key(src, {"output_dir": "elsewhere"}) == base  # where it writes is not what it computes
    import os

    current = os.environ.get("OPENBLAS_CORETYPE")  # the suite may itself run under Prescott (make test's check)
    monkeypatch.setenv("OPENBLAS_CORETYPE", "Haswell" if current == "Prescott" else "Prescott")
    assert stamps.run_key(src) != base  # another BLAS kernel is never skipped
    if current is None:
        monkeypatch.delenv("OPENBLAS_CORETYPE")
    else:
        monkeypatch.setenv("OPENBLAS_CORETYPE", current)
    assert stamps.run_key(src) == base
    real = stamps.file_digest.__wrapped__
    changed = build.paths.ROOT / "analysis" / "supplement" / "logistic.py"
    monkeypatch.setattr(stamps, "file_digest", lambda p: "edited" if Path(p) == changed else real(p))
    assert stamps.run_key(src) != base


def test_a_notebook_imports_what_its_key_hashes():
    from analysis import stamps

    files = {p.relative_to(build.paths.ROOT).as_posix() for p in
             stamps.code_files(stamps.imported_modules((build.paths.NOTEBOOKS / "06_uci_real_records.py").read_text()))}
    assert {"analysis/__init__.py", "analysis/uci/__init__.py", "analysis/uci/claims.py", "analysis/products.py",
            "analysis/data.py"} <= files
    assert not any(f.startswith(("analysis/supplement/", "analysis/battery/")) for f in files)


def _all_current(stamp_dir):
    """Stamp every notebook as run with its present key (its outputs: one scratch file)."""
    from analysis import stamps

    out = stamp_dir / "out.txt"
    out.write_text("x")
    sources = build.notebook_sources()
    keys, _ = build.plan(sources, {})
    for s, k in keys.items():
        stamps.record(s.stem, k, [out])
    return sources


def test_nothing_reruns_on_an_unchanged_tree_and_a_study_change_reruns_only_its_notebooks(stamp_dir, monkeypatch):
    from analysis import stamps

    sources = _all_current(stamp_dir)
    assert build.plan(sources, {})[1] == []
    assert build.plan(sources, {}, force=True)[1] == sources
    real, cached = stamps.file_digest.__wrapped__, stamps.file_digest
    studies = {"01", "04", "05", "06", "07"}  # the notebooks that make claims products
    for changed, study in (("analysis/uci/claims.py", "06"), ("notebooks/07_supplement_tables.py", "07"),
                           ("analysis/battery/claims.py", "04")):
        path = build.paths.ROOT / changed
        cached.cache_clear()
        monkeypatch.setattr(stamps, "file_digest", lambda p, path=path: "edited" if Path(p) == path else real(p))
        stale = {s.name[:2] for s in build.plan(sources, {})[1]}
        assert study in stale and not (stale & studies) - {study}, (changed, sorted(stale))
        assert len(stale) < len(sources), changed
    cached.cache_clear()
    path = build.paths.ROOT / "notebooks" / "07_supplement_tables.py"
    monkeypatch.setattr(stamps, "file_digest", lambda p: "edited" if Path(p) == path else real(p))
    assert [s.name[:2] for s in build.plan(sources, {})[1]] == ["07"]  # a notebook's own source: only it


def test_no_change_build_runs_nothing(stamp_dir, monkeypatch, capsys):
    """``make paper`` on an unchanged tree: every notebook, the claims check and the report are current."""
    from analysis import stamps

    _all_current(stamp_dir)
    out = stamp_dir / "out.txt"
    stamps.record("claims", build.claims_key(), [out])
    stamps.record("report", build.report_key(), [out])
    monkeypatch.setattr(build, "_claims", lambda: pytest.fail("the claims check ran"))
    monkeypatch.setattr(build, "_report_step", lambda: pytest.fail("the report ran"))
    assert build.main(["--jobs", "2", "--claims", "--report", "--heartbeat", "0"]) == 0
    text = capsys.readouterr().out
    assert "current, not rerun: 01 02 03 04 05 06 07 08 09" in text
    assert "claims: current" in text and "report: current" in text


def test_make_paper_builds_incrementally_and_fetches_only_when_a_notebook_runs():
    makefile = (build.paths.ROOT / "Makefile").read_text()
    rule = makefile.split("\npaper:", 1)[1].split("\n\n", 1)[0]
    assert "--claims --report" in rule and "--force" in rule
    assert "analysis report" not in rule  # the report is a step of the build (skipped when current)


def test_sync_in_process_writes_what_the_jupytext_command_writes(tmp_path):
    """issue 21 speed: the build syncs with jupytext's command line in its own process; the .ipynb is
    byte for byte the one ``python -m jupytext --update --to ipynb`` writes (outputs kept)."""
    import shutil
    import subprocess
    import sys

    src = build.paths.NOTEBOOKS / "02_prompts.py"
    for name in ("cli", "api"):
        (tmp_path / name).mkdir()
        shutil.copy(src.with_suffix(".ipynb"), tmp_path / name / src.with_suffix(".ipynb").name)
        text = src.read_text().replace("# %% [markdown]\n", "# %% [markdown]\n# An edited line.\n", 1)
        (tmp_path / name / src.name).write_text(text)
    subprocess.run([sys.executable, "-m", "jupytext", "--update", "--to", "ipynb", str(tmp_path / "cli" / src.name)],
                   check=True, capture_output=True)
    build.sync(tmp_path / "api" / src.name)
    cli, api = ((tmp_path / n / src.with_suffix(".ipynb").name).read_bytes() for n in ("cli", "api"))
    assert cli == api and b"An edited line." in api


def test_a_file_a_neighbour_finishes_after_a_stamp_is_stamped_again_at_the_end(stamp_dir, monkeypatch):
    """Two notebooks side by side: one finishes while the other is still writing a file the first's stamp
    lists (written since it started); the stamps are taken again when all have finished, so an
    unchanged tree is current (the no-change build ran notebook 05 again before)."""
    from analysis import stamps

    out = stamp_dir / "neighbour.png"
    out.write_bytes(b"half")
    source = build.paths.NOTEBOOKS / "05_representation_control.py"
    monkeypatch.setattr(stamps, "written_since", lambda folders, since: [out])
    monkeypatch.setattr(build, "record_seconds", lambda stem, seconds: None)
    done, restamp = build._record_notebook({source: "k5"})
    done(source.stem, 0, 1.0)
    out.write_bytes(b"half and the rest")  # the neighbour finishes writing
    assert not stamps.is_current(source.stem, "k5")
    restamp()
    assert stamps.is_current(source.stem, "k5")
