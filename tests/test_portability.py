"""Portable outputs (issue 21): the tracked derived files are byte-identical under another OpenBLAS
kernel and another thread count.

OpenBLAS picks its kernel per CPU at run time; ``OPENBLAS_CORETYPE=Prescott`` forces an old x86
kernel on any x86 machine, so one computer can test what another CPU would write. Two subprocesses
recompute the stages whose outputs moved between kernels before the fix, writing through the same
writer as the notebooks (:func:`analysis.tables.write_derived`):

* every product of notebook 04 (the battery: cell tables, references, tracking, Tables 27-28), and
  the battery's rows of the claims check;
* notebook 07's Tables 9, 13 and 18 (LPM differences, slopes of equal means, the summary-level
  decomposition);
* SN 8's permutation p values as notebook 04 prints them (ties decided by float noise before).

One runs under ``OPENBLAS_CORETYPE=Prescott``, the other under ``OMP_NUM_THREADS=1
OPENBLAS_NUM_THREADS=1``; each file must equal the committed one byte for byte. The whole pipeline
under both settings (every notebook, figure and the claims check against ``git status``) is
``make check-portable`` (``scripts/check_portable.sh``).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pandas as pd
import pytest

from analysis import paths, tables

SETTINGS = {
    "prescott": {"OPENBLAS_CORETYPE": "Prescott"},
    "one_thread": {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"},
}
#: the derived files the script writes, as notebook 04 and 07 name them
PRODUCTS = ("references.csv", "battery_cells.csv", "tracking_slopes.csv", "sweep_points.csv",
            "seed_replication_fits.csv", "gpt_repeated_measurement.csv", "frozen_policy.csv",
            "dimension_by_dependence.csv", "example_structure.csv", "example_count.csv",
            "example_correlation.csv", "excess_judgments.csv", "supplement_table9.csv",
            "supplement_table13.csv", "supplement_table18.csv")

SCRIPT = r"""
import json, sys
from pathlib import Path

import threadpoolctl
from analysis import battery, cells, claims, references, supplement, tables

out = Path(sys.argv[1])
rep = battery.repeated_measurement()
products = {
    "references.csv": references.reference_table([cells.parse_cell(c) for c in battery.reference_cells()]),
    "battery_cells.csv": battery.all_cell_results(),
    "tracking_slopes.csv": battery.tracking_table(),
    "sweep_points.csv": battery.sweep_points(),
    "seed_replication_fits.csv": battery.seed_replication_fits(),
    "gpt_repeated_measurement.csv": rep["table"],
    "frozen_policy.csv": battery.frozen_policy_table(),
    "dimension_by_dependence.csv": battery.dimension_table(),
    "example_structure.csv": battery.example_structure_table(),
    "example_count.csv": battery.example_count_table(),
    "example_correlation.csv": battery.example_correlation_table(),
    "excess_judgments.csv": battery.excess_judgments(),
    "supplement_table9.csv": supplement.table9().reset_index(),
    "supplement_table13.csv": supplement.table13(),
    "supplement_table18.csv": supplement.audit_decomposition(),
}
for name, df in products.items():
    tables.write_derived(df, out / name)
check = claims.check(claims.compute_all((battery,)), write=False)
tables.write_derived(check[check["status"] != "not_computed"], out / "claims_check.battery.csv")
pl = battery.pair_level_covariation()
(out / "sn8_pair_level.txt").write_text(pl.round(4).to_string(index=False)
                                        + f"\nStouffer p = {battery.stouffer_p(pl['p_perm']):.1e}\n")
kernels = [(i["internal_api"], i.get("architecture"), i["num_threads"]) for i in threadpoolctl.threadpool_info()]
(out / "kernels.json").write_text(json.dumps(kernels))
"""


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict:
    """Run the script under each setting (side by side: two cores); setting -> its output folder."""
    procs, folders = {}, {}
    for name, extra in SETTINGS.items():
        folders[name] = tmp_path_factory.mktemp(name)
        env = {**os.environ, "PYTHONPATH": str(paths.ROOT), "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg", **extra}
        for var in ("OPENBLAS_CORETYPE", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
            if var not in extra:
                env.pop(var, None)
        procs[name] = subprocess.Popen([sys.executable, "-c", SCRIPT, str(folders[name])], env=env, cwd=paths.ROOT,
                                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    t0 = time.time()
    for name, p in procs.items():
        out, _ = p.communicate(timeout=1800)
        assert p.returncode == 0, f"{name}: {out[-3000:]}"
    print(f"portability runs: {time.time() - t0:.0f} s")
    return folders


def _kernels(folder) -> list:
    return json.loads((folder / "kernels.json").read_text())


def test_the_settings_change_the_kernel_or_the_threads(runs):
    """Each run really used another kernel or one thread (threadpoolctl names them)."""
    prescott = {arch for api, arch, _ in _kernels(runs["prescott"]) if api == "openblas"}
    if prescott - {"Prescott", "Katmai"}:  # not x86: OPENBLAS_CORETYPE does not apply
        pytest.skip(f"OPENBLAS_CORETYPE=Prescott left the kernel at {sorted(prescott)} (not an x86 OpenBLAS)")
    assert prescott  # OpenBLAS reports Prescott's kernel as Prescott or Katmai, by version
    assert all(n == 1 for api, _, n in _kernels(runs["one_thread"]) if api in ("openblas", "openmp"))


@pytest.mark.parametrize("setting", list(SETTINGS))
@pytest.mark.parametrize("name", PRODUCTS)
def test_derived_files_are_byte_identical_to_the_committed_ones(runs, setting, name):
    ours = (runs[setting] / name).read_bytes()
    assert ours == (paths.DERIVED / name).read_bytes(), f"{name} differs under {setting} ({SETTINGS[setting]})"


@pytest.mark.parametrize("setting", list(SETTINGS))
def test_the_claims_check_rows_are_identical(runs, setting):
    """The battery's rows of the claims check (reproduced value as written, status) equal the committed ones."""
    ours = pd.read_csv(runs[setting] / "claims_check.battery.csv", dtype=str, keep_default_na=False)
    committed = pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False).set_index("claim_id")
    committed = committed.loc[ours["claim_id"]].reset_index()[list(ours.columns)]
    assert len(ours) > 900
    pd.testing.assert_frame_equal(ours, committed)


def test_printed_permutation_p_values_agree_between_the_settings(runs):
    """SN 8's permutation p (printed in notebook 04): ties are ties on every kernel."""
    texts = {s: (runs[s] / "sn8_pair_level.txt").read_text() for s in SETTINGS}
    assert texts["prescott"] == texts["one_thread"]
    assert "Stouffer p" in texts["prescott"]


def test_the_portable_writer_returns_nothing_for_a_notebook_to_echo(tmp_path):
    # A notebook cell ending in the writer once echoed PosixPath('/work/...') into a committed output (CI, stop 25).
    assert tables.write_derived(pd.DataFrame({"x": [0.1]}), tmp_path / "x.csv") is None
    assert (tmp_path / "x.csv").read_text() == "x\n0.1\n"
