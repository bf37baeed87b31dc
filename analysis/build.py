"""Build the compendium: sync the jupytext pairs and execute the notebooks with papermill.

``python -m analysis.build [--jobs N] [--only 04 05 ...] [--claims] [-p NAME VALUE ...]``

Notebooks are started in numeric order. Each reads only the verified inputs and computes what it
shows from them (no notebook reads another's products), so with ``--jobs 2`` two run side by
side; ``--claims`` also recomputes ``data/derived/claims_check.csv`` in the same pool.
Papermill's timing metadata is stripped so that a rerun does not churn diffs. A failure stops the
build with the notebook name and the cell.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from . import paths

def notebook_sources() -> list[Path]:
    """The jupytext sources ``notebooks/NN_name.py``, in order."""
    return sorted(p for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def sync(source: Path) -> Path:
    """Create or update the ``.ipynb`` of a py:percent source (outputs of an existing notebook are kept)."""
    nb = source.with_suffix(".ipynb")
    cmd = [sys.executable, "-m", "jupytext", "--to", "ipynb", str(source)]
    if nb.exists():
        cmd.insert(3, "--update")
    subprocess.run(cmd, check=True, capture_output=True)
    return nb


def merge_streams(outputs: list) -> list:
    """Join consecutive stream outputs of the same name (how the kernel splits them depends on timing)."""
    merged: list = []
    for out in outputs:
        if (merged and out.get("output_type") == "stream" and merged[-1].get("output_type") == "stream"
                and merged[-1].get("name") == out.get("name")):
            merged[-1]["text"] = merged[-1]["text"] + out["text"]
        else:
            merged.append(out)
    return merged


def strip_metadata(nb_path: Path) -> None:
    """Remove papermill's and the kernel's timing metadata from an executed notebook, and merge
    split stream outputs, so that a rerun does not churn diffs."""
    import nbformat

    nb = nbformat.read(nb_path, as_version=4)
    nb.metadata.pop("papermill", None)
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
    nbformat.write(nb, nb_path)


def execute(nb_path: Path, parameters: dict | None = None) -> float:
    """Execute one notebook in place with papermill; returns seconds. Raises ``RuntimeError`` naming the cell."""
    import papermill as pm

    t0 = time.time()
    try:
        pm.execute_notebook(str(nb_path), str(nb_path), parameters=parameters or {}, cwd=str(paths.NOTEBOOKS),
                            progress_bar=False, kernel_name="python3")
    except pm.PapermillExecutionError as exc:
        raise RuntimeError(f"notebook {nb_path.name} failed at cell {exc.exec_count} "
                           f"(index {exc.cell_index}): {exc.ename}: {exc.evalue}") from None
    strip_metadata(nb_path)
    return time.time() - t0


def _run(source: Path, parameters: dict) -> tuple[str, float]:
    return source.stem, execute(sync(source), parameters)


def _claims() -> tuple[str, float]:
    from . import claims

    t0 = time.time()
    counts = claims.summary(claims.check())
    return "claims (" + " ".join(f"{k}={v}" for k, v in counts.items()) + ")", time.time() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m analysis.build", description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="notebook numbers to run (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="how many notebooks run side by side")
    ap.add_argument("--claims", action="store_true", help="also recompute the claims check")
    ap.add_argument("--sync-only", action="store_true", help="only sync the jupytext pairs")
    ap.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="papermill parameter passed to every notebook")
    a = ap.parse_args(argv)
    sources = [s for s in notebook_sources() if not a.only or s.name[:2] in a.only]
    if a.sync_only:
        for s in sources:
            sync(s)
        print(f"synced {len(sources)} notebooks")
        return 0
    params = {k: v for k, v in a.p}
    t0 = time.time()
    try:
        with ProcessPoolExecutor(max(1, a.jobs)) as pool:
            futures = [pool.submit(_run, s, params) for s in sources]
            if a.claims:
                futures.append(pool.submit(_claims))
            for fut in futures:  # reported in submission order; the first failure stops the build
                name, secs = fut.result()
                print(f"  {name}: {secs:.1f} s", flush=True)
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"built in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
