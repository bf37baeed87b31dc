"""Benchmark (not a test): whole-process times of notebook 03 and of ``make paper`` (issues 11, 21).

Targets (warm input cache, 2 cores): notebook 03 <= 25 s, a full ``make paper`` <= 60 s
(``FORCE=1``: every notebook, the claims check and the report rerun) and a no-change ``make paper``
<= 10 s (right after a full one: every step is current and skipped), each the median of
``--repeat`` whole-process runs (default 3).

* notebook 03 runs with papermill exactly as the build runs it (same kernel and cwd), but into a
  temporary copy with ``output_dir`` in a temporary folder, so no tracked file changes;
* ``make paper`` is timed as one child process (it rewrites the tracked notebooks, figures and
  derived files, as it always does), first forced (full), then unchanged (no-change). Skip it with
  ``--no-paper``. The line of each also gives the load average, since a shared machine slows it.

Each time is the wall clock of a fresh child process (imports included). Usage:
``python benchmarks/bench_paper.py [--no-paper] [--only-paper]``; prints one line per measurement.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK_03 = ROOT / "notebooks" / "03_collection.ipynb"
TARGETS = {"notebook 03": 25.0, "make paper (full)": 60.0, "make paper (no change)": 10.0}


def _env() -> dict:
    """The environment the build gives its kernels (one BLAS thread each unless the caller set a count)."""
    from analysis.build import kernel_environment

    return {**os.environ, **kernel_environment(os.environ)}


def time_notebook_03() -> float:
    """Seconds for papermill to execute notebook 03 in a child process (outputs to a temporary folder)."""
    with tempfile.TemporaryDirectory(prefix="bench_paper_") as tmp:
        out_nb = Path(tmp) / "03_collection.ipynb"
        code = ("import papermill as pm, sys; pm.execute_notebook(sys.argv[1], sys.argv[2], cwd=sys.argv[3], "
                "parameters={'output_dir': sys.argv[4]}, progress_bar=False, kernel_name='python3', "
                "extra_arguments=['--IPKernelApp.log_level=CRITICAL'])")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code, str(NOTEBOOK_03), str(out_nb), str(NOTEBOOK_03.parent),
                        str(Path(tmp) / "out")], cwd=ROOT, env=_env(), check=True)
        return time.perf_counter() - t0


def time_make_paper(force: bool = False) -> float:
    """Seconds of ``make paper`` (``FORCE=1`` when ``force``) as one child process."""
    t0 = time.perf_counter()
    subprocess.run(["make", "paper", *(["FORCE=1"] if force else [])], cwd=ROOT, env=_env(), check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - t0


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages (``os.getloadavg``), or ``n/a``."""
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-paper", action="store_true", help="time notebook 03 only")
    ap.add_argument("--only-paper", action="store_true", help="time make paper only")
    ap.add_argument("--repeat", type=int, default=3, help="runs per measurement; the median is reported (default 3)")
    a = ap.parse_args(argv)
    runs = []
    if not a.only_paper:
        runs.append(("notebook 03", time_notebook_03))
    if not a.no_paper:
        runs.append(("make paper (full)", lambda: time_make_paper(force=True)))
        runs.append(("make paper (no change)", time_make_paper))
    for name, fn in runs:
        times = [fn() for _ in range(max(1, a.repeat))]
        seconds = statistics.median(times)
        verdict = "within" if seconds <= TARGETS[name] else "over"
        runs_text = ", ".join(f"{t:.1f}" for t in times)
        print(f"{name}: median {seconds:.1f} s of {runs_text} (target {TARGETS[name]:.0f} s: "
              f"{verdict}; load average {load_average()})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
