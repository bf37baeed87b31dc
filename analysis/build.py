"""Build the compendium: sync the jupytext pairs and execute the notebooks with papermill.

``python -m analysis.build [--jobs N] [--only 04 05 ...] [--claims] [--report] [--force] [-p NAME VALUE ...]``

Notebooks are started longest first, by the seconds each took in its last run (git-ignored
``.cache/build/seconds.json``; those never timed first, in numeric order), so that the workers finish
together. Each reads only the verified inputs and computes what it
shows from them (no notebook reads another's products), so with ``--jobs 2`` two run side by
side. Each number is made once (issue 21): a notebook whose key (:mod:`analysis.stamps`: its
source, the package code it imports, the tracked inputs, its parameters, the BLAS kernel) equals
the key of its last run, and whose outputs are unchanged, is not rerun; ``--force`` reruns it.
A notebook that computes claims writes them as a product (:mod:`analysis.products`), and
``--claims`` then writes ``data/derived/claims_check.csv`` from those products (recomputing only a
study whose product is stale); ``--report`` renders the claims report. Both are skipped when
current, too; the inputs are fetched and verified only when a notebook runs.

Every notebook has one ``output_dir`` parameter: the build passes ``output_dir=".."`` (the
repository, so the tracked ``figures/`` and ``data/derived/`` are written), and removes that one
injected line again, so that the committed notebook, rerun by hand or by nbval, writes to its
scratch default ``out/notebooks/``. ``-p NAME VALUE`` must name a parameter of every selected
notebook (one line of error otherwise). Papermill's timing metadata is stripped so that a rerun
does not churn diffs. A failure stops the build with the notebook name and the cell. While steps
run, a line every ``--heartbeat`` seconds says which are still running and for how long.
"""
from __future__ import annotations

import argparse
import ast
import contextlib
import io
import json
import math
import os
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from pathlib import Path

from . import paths, products, stamps
from .notebook import TRACKED
from .stamps import OUTPUT_DIR, notebook_parameters  # noqa: F401 (the build's names for them)

#: kernel options: no "running over TCP without encryption" warning per notebook, no shutdown noise
KERNEL_ARGUMENTS = ["--IPKernelApp.log_level=CRITICAL"]
#: the folders a notebook run by the build writes (its outputs are the files there it changed)
OUTPUT_FOLDERS = (paths.FIGURES, paths.DERIVED, products.folder(TRACKED))


class BuildError(RuntimeError):
    """A notebook failed, or the build was asked for something the notebooks do not have."""


def notebook_sources() -> list[Path]:
    """The jupytext sources ``notebooks/NN_name.py``, in order."""
    return sorted(p for p in paths.NOTEBOOKS.glob("[0-9][0-9]_*.py"))


def parse_value(text: str) -> object:
    """A ``-p`` value as papermill's command line reads it: ints, floats, True/False/None, else the string.

    >>> [parse_value(v) for v in ("1000", "0.5", "None", "True", "sonnet", "['a', 'b']")]
    [1000, 0.5, None, True, 'sonnet', ['a', 'b']]
    """
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text
    return value if isinstance(value, (int, float, bool, list, tuple, dict, type(None))) else text


def check_names(sources: list[Path], params: dict) -> None:
    """Refuse a ``-p`` name that a selected notebook does not have (papermill would only warn)."""
    for s in sources:
        known = notebook_parameters(s)
        unknown = sorted(set(params) - set(known))
        if unknown:
            raise BuildError(f"notebook {s.stem} has no parameter {', '.join(unknown)} "
                             f"(its parameters: {', '.join(known)})")


def sync(source: Path) -> Path:
    """Create or update the ``.ipynb`` of a py:percent source (outputs of an existing notebook are kept).

    Runs jupytext's command line in this process (the same code as ``python -m jupytext``, without
    a new interpreter and its imports for every notebook), its messages kept off the build's output.
    """
    from jupytext.cli import jupytext  # heavy, optional

    nb = source.with_suffix(".ipynb")
    args = ["--to", "ipynb", str(source)]
    if nb.exists():
        args.insert(0, "--update")
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = jupytext(args)
    if code:
        raise subprocess.CalledProcessError(code, ["jupytext", *args])
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


def drop_injected(cell_source: str, names: tuple[str, ...] = (OUTPUT_DIR,)) -> str | None:
    """The injected-parameters cell without the lines setting ``names``; ``None`` when nothing else is left.

    >>> drop_injected('# Parameters\\noutput_dir = ".."\\n') is None
    True
    >>> drop_injected('# Parameters\\noutput_dir = ".."\\nn_primary = 600\\n')
    '# Parameters\\nn_primary = 600\\n'
    """
    kept = [line for line in cell_source.splitlines(keepends=True)
            if not any(line.startswith(f"{n} =") for n in names)]
    return "".join(kept) if any(line.strip() and not line.startswith("#") for line in kept) else None


#: a checked text output longer than this, followed by its rendered table, is collapsed
COLLAPSE_LINES = 20


def collapse_text_checks(cells: list) -> None:
    """Collapse (``jupyter.outputs_hidden``) the long text output of a cell checked by nbval
    (``# NBVAL_CHECK_OUTPUT``) when the next code cell renders the same content as a table: the
    reader sees the rendered table, the text stays one click away and nbval still checks it."""
    code = [c for c in cells if c.cell_type == "code"]
    for cell, nxt in zip(code, code[1:]):
        lines = sum(o.get("text", "").count("\n") for o in cell.outputs if o.get("output_type") == "stream")
        rendered = any("text/html" in o.get("data", {}) for o in nxt.outputs)
        if "NBVAL_CHECK_OUTPUT" in cell.source and lines > COLLAPSE_LINES and rendered:
            cell.metadata.setdefault("jupyter", {})["outputs_hidden"] = True


def strip_metadata(nb_path: Path) -> None:
    """Remove papermill's and the kernel's timing metadata from an executed notebook, the build's
    injected ``output_dir``, and merge split stream outputs, so that a rerun does not churn diffs;
    collapse long checked text outputs that a rendered table repeats (:func:`collapse_text_checks`)."""
    import nbformat  # heavy, optional

    nb = nbformat.read(nb_path, as_version=4)
    nb.metadata.pop("papermill", None)
    cells = []
    for cell in nb.cells:
        cell.metadata.pop("papermill", None)
        cell.metadata.pop("execution", None)
        if "injected-parameters" in cell.metadata.get("tags", []):
            source = drop_injected(cell.source)
            if source is None:
                continue
            cell.source = source
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)
        cells.append(cell)
    collapse_text_checks(cells)
    nb.cells = cells
    nbformat.write(nb, nb_path)


def execute(nb_path: Path, parameters: dict | None = None) -> float:
    """Execute one notebook in place with papermill; returns seconds. Raises ``BuildError`` naming the cell."""
    import papermill as pm  # heavy, optional

    t0 = time.time()
    try:
        pm.execute_notebook(str(nb_path), str(nb_path), parameters=parameters or {}, cwd=str(paths.NOTEBOOKS),
                            progress_bar=False, kernel_name="python3", extra_arguments=KERNEL_ARGUMENTS)
    except pm.PapermillExecutionError as exc:
        raise BuildError(f"notebook {nb_path.name} failed at cell {exc.exec_count} "
                         f"(index {exc.cell_index}): {exc.ename}: {exc.evalue}") from None
    strip_metadata(nb_path)
    return time.time() - t0


def seconds_path() -> Path:
    """The git-ignored record of each notebook's seconds in its last run (``.cache/build/seconds.json``)."""
    return stamps.STAMPS / "seconds.json"


def read_seconds() -> dict[str, float]:
    """``{notebook stem: seconds}`` of the last runs (``{}`` when none or unreadable)."""
    try:
        table = json.loads(seconds_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {k: float(v) for k, v in table.items() if isinstance(v, (int, float))} if isinstance(table, dict) else {}


def record_seconds(stem: str, seconds: float) -> None:
    """Add one notebook's measured seconds to :func:`seconds_path` (written atomically)."""
    table = {**read_seconds(), stem: round(float(seconds), 1)}
    path = seconds_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".part")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def longest_first(sources: list[Path], seconds: dict[str, float]) -> list[Path]:
    """``sources`` ordered by their last run's seconds, longest first, so that parallel workers finish
    together; a notebook never timed goes first (it may be long), ties keep the numeric order.

    >>> [p.name for p in longest_first([Path("01_a.py"), Path("02_b.py"), Path("03_c.py")], {"01_a": 3.0, "03_c": 9.0})]
    ['02_b.py', '03_c.py', '01_a.py']
    """
    return sorted(sources, key=lambda s: -seconds.get(s.stem, math.inf))


def _run(source: Path, parameters: dict, key: str) -> tuple[str, float, int]:
    """Run one notebook (in a worker); returns its name, seconds and start (ns, the clock of file times)."""
    start = time.time_ns()
    os.environ[products.KEY_VARIABLE] = key  # the kernel stamps the claims product it writes with it
    tracked = {OUTPUT_DIR: TRACKED} if OUTPUT_DIR in notebook_parameters(source) else {}
    return source.stem, execute(sync(source), {**tracked, **parameters}), start


def claims_key() -> str:
    """The claims step's key: the claims code, the registries, and each study's product as it is now
    (with the key its notebook would have at its defaults, so a stale product changes it too)."""
    expected = {study: stamps.run_key(paths.NOTEBOOKS / f"{nb}.py") for study, nb in products.NOTEBOOK_OF.items()}
    made = [p for p in (products.path_of(s) for s in products.NOTEBOOK_OF) if p.is_file()]
    return stamps.module_key({"analysis.claims"}, made, {"expected": expected})


def _claims() -> str:
    """Write the claims check from the notebooks' products (recomputing only the stale studies)."""
    from . import claims  # heavy, optional: loads every study; only needed when the check is stale

    counts = claims.summary(claims.check())
    read = sorted(s for s, how in claims.SOURCE_OF.items() if how == "product")
    redone = sorted(s for s, how in claims.SOURCE_OF.items() if how != "product")
    return ("claims (" + " ".join(f"{k}={v}" for k, v in counts.items()) + "; read: " + (" ".join(read) or "none")
            + "; recomputed: " + (" ".join(redone) or "none") + ")")


def refresh_fingerprint() -> None:
    """After a current claims check (written now, or current by its key), record the present package
    fingerprint beside it: a change outside everything the claims are made from leaves the check current."""
    text = stamps.package_fingerprint() + "\n"
    target = stamps.CLAIMS_FINGERPRINT
    if not target.is_file() or target.read_text() != text:
        target.write_text(text)


def report_key() -> str:
    """The report's key: its code, the registries and the claims check it renders."""
    return stamps.module_key({"analysis.report"}, [paths.CLAIMS_CHECK])


def _report_step() -> str:
    from . import report  # heavy, optional: jinja2 and the claims module, only when the report is stale

    report.write()
    return "report"


def run_step(name: str, key: str, action, outputs: list[Path], force: bool) -> None:
    """Run a step of the main process unless it is current (:func:`analysis.stamps.is_current`); record it."""
    if not force and stamps.is_current(name, key):
        print(f"  {name}: current, not rerun", flush=True)
        return
    stamps.forget(name)
    t0 = time.time()
    label = action()
    stamps.record(name, key, outputs)
    print(f"  {label}: {time.time() - t0:.1f} s", flush=True)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m analysis.build", description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", metavar="NN", help="notebook numbers to run, e.g. 04 06 (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="how many notebooks run side by side (default 1)")
    ap.add_argument("--claims", action="store_true", help="then write the claims check from the notebooks' products")
    ap.add_argument("--report", action="store_true", help="then render the claims report (and the README's index)")
    ap.add_argument("--force", action="store_true", help="rerun every selected step, current or not")
    ap.add_argument("--sync-only", action="store_true", help="only sync the jupytext pairs")
    ap.add_argument("--heartbeat", type=float, default=15.0, metavar="S",
                    help="seconds between the lines naming the running steps (0: none; default 15)")
    ap.add_argument("-p", nargs=2, action="append", default=[], metavar=("NAME", "VALUE"),
                    help="papermill parameter passed to every selected notebook (it must have it)")
    return ap


#: the kernels' environment, the same whether the build runs from make or by hand (figures are drawn
#: off-screen and shown once, where a cell displays them; hash order is fixed)
KERNEL_ENV = {"MPLBACKEND": "Agg", "PYTHONHASHSEED": "0"}
#: one BLAS thread per kernel: with two notebooks side by side, two kernels of two OpenBLAS threads on 2 cores
#: wait on each other's descheduled threads (a full build took 70-73 s wall and 135 s CPU; with one thread 52 s
#: and 96 s, 2026-12-05, Intel Xeon with AVX-512). Set for every build, so that `make paper` and a build run by
#: hand share their keys; the outputs are the same bytes under either thread count (`make check-portable`)
KERNEL_BLAS_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def kernel_environment(environ) -> dict:
    """What the build adds to the kernels' environment: :data:`KERNEL_ENV`, and one BLAS thread per kernel
    where the user set no thread count (:data:`KERNEL_BLAS_ENV`)."""
    return {**KERNEL_ENV, **{k: v for k, v in KERNEL_BLAS_ENV.items() if k not in environ}}


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    os.environ.update(kernel_environment(os.environ))  # inherited by the worker processes and their kernels
    sources = [s for s in notebook_sources() if not a.only or s.name[:2] in a.only]
    if a.only and len(sources) != len(set(a.only)):
        known = " ".join(s.name[:2] for s in notebook_sources())
        print(f"error: --only {' '.join(a.only)}: the notebooks are {known}", file=sys.stderr)
        return 2
    params = {k: parse_value(v) for k, v in a.p}
    try:
        if OUTPUT_DIR in params:
            raise BuildError(f"the build always writes the tracked folders; run papermill to set {OUTPUT_DIR}")
        check_names(sources, params)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if a.sync_only:
        for s in sources:
            sync(s)
        print(f"synced {len(sources)} notebooks")
        return 0
    t0 = time.time()
    keys, stale = plan(sources, params, a.force)
    if len(stale) < len(sources):
        print(f"  current, not rerun: {' '.join(s.stem[:2] for s in sources if s not in stale)}", flush=True)
    try:
        if stale:
            from . import data  # heavy, optional: pandas and pooch, only when a notebook runs

            data.fetch_all(progress=False)
            with ProcessPoolExecutor(max(1, a.jobs)) as pool:
                for s in stale:
                    stamps.forget(s.stem)
                names = {pool.submit(_run, s, params, keys[s]): s.stem for s in longest_first(stale, read_seconds())}
                done, restamp = _record_notebook(keys)
                _report(names, a.heartbeat, max(1, a.jobs), t0, on_done=done)
                restamp()
        if a.claims:
            run_step("claims", claims_key(), _claims, [paths.CLAIMS_CHECK], a.force)
            refresh_fingerprint()
        if a.report:
            outputs = [paths.DERIVED / "claims_report.html", paths.ROOT / "README.md"]
            run_step("report", report_key(), _report_step, outputs, a.force)
    except BuildError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(f"built in {time.time() - t0:.0f} s")
    return 0


def plan(sources: list[Path], params: dict, force: bool = False) -> tuple[dict[Path, str], list[Path]]:
    """Each notebook's key (run with ``params``), and the notebooks that must run: all with
    ``force``, else those that are not current (:func:`analysis.stamps.is_current`)."""
    keys = {s: stamps.run_key(s, params) for s in sources}
    return keys, [s for s in sources if force or not stamps.is_current(s.stem, keys[s])]


def _record_notebook(keys: dict):
    """The callback that stamps a finished notebook (its key, its .ipynb and the files it wrote) and
    records its seconds for the next build's longest-first order; and the one that stamps every
    finished notebook again once all have finished (a neighbour still writing one of the files a
    stamp lists, e.g. a figure, was hashed mid-write; its final bytes are hashed then)."""
    by_stem = {s.stem: (s, k) for s, k in keys.items()}
    made: dict[str, list[Path]] = {}

    def done(stem: str, start_ns: int, seconds: float) -> None:
        source, key = by_stem[stem]
        made[stem] = [source.with_suffix(".ipynb"), *stamps.written_since(list(OUTPUT_FOLDERS), start_ns)]
        stamps.record(stem, key, made[stem])
        record_seconds(stem, seconds)

    def restamp() -> None:
        for stem, files in made.items():
            stamps.record(stem, by_stem[stem][1], files)
    return done, restamp


def _report(names: dict, heartbeat: float, jobs: int, t0: float, on_done=None) -> None:
    """Print each step as it finishes, and every ``heartbeat`` seconds the steps still running.

    Steps start in submission order, ``jobs`` at a time, so the running ones are the first ``jobs``
    unfinished. The first failure stops the build.
    """
    pending = list(names)
    started: dict = {}
    while pending:
        for fut in pending[:jobs]:
            started.setdefault(fut, time.time())
        done, _ = wait(pending, timeout=heartbeat or None, return_when=FIRST_COMPLETED)
        for fut in [f for f in pending if f in done]:
            name, secs, start_ns = fut.result()
            if on_done is not None:
                on_done(name, start_ns, secs)
            print(f"  {name}: {secs:.1f} s", flush=True)
            pending.remove(fut)
        if not done and heartbeat:
            now = time.time()
            running = ", ".join(f"{names[f]} {now - started[f]:.0f} s{cell_progress(names[f])}" for f in pending[:jobs])
            print(f"  … {now - t0:.0f} s: running {running}", flush=True)


def cell_progress(stem: str) -> str:
    """``" (cell 12/30)"`` for a notebook papermill is executing (it saves the notebook as it goes,
    every 30 s), ``""`` when that cannot be read (not a notebook, not started, mid-write)."""
    try:
        nb = json.loads((paths.NOTEBOOKS / f"{stem}.ipynb").read_text(encoding="utf-8"))
        status = [c.get("metadata", {}).get("papermill", {}).get("status") for c in nb["cells"]
                  if c["cell_type"] == "code"]
    except (OSError, ValueError, KeyError, TypeError):
        return ""
    if not any(status):
        return ""
    return f" (cell {sum(s == 'completed' for s in status)}/{len(status)})"


if __name__ == "__main__":
    sys.exit(main())
