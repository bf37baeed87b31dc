"""The ``collect`` and ``estimate`` commands (their parsers are in :mod:`analysis.cli`), the signal
handling of a run, and the validated reading of a records file.

Signals: the first SIGINT, SIGTERM or SIGHUP stops asking; the requests in flight finish (their
answers are saved) and the records file is written for what is complete; the exit status is
130 / 143 / 129. A second signal aborts at once, keeping what was saved.

One writer per ledger: a second ``collect`` or ``audit`` on the same ledger is refused with one line
naming the pid of the run that holds it (exit 2); it never asks for anything.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import math
import signal
import sys
import threading
from pathlib import Path

import numpy as np
import pandas as pd

from .. import config, estimators, population, records as rec_mod
from ..cells import Cell, parse_cell
from ..jsonable import jsonable
from . import batch_command  # --batch / --export-batch / --import-batch / --prompt-cache (issue 14)
from .errors import Abort, CollectionError
from .jobs import job_list, with_samples
from .plan import Plan
from .pricing import check_price
from .redaction import REDACT
from .retries import RetryPolicy
from .runner import check_samples, collect as collect_cell
from .subjects import PROVIDERS

SIGNAL_EXIT = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}
_SIGNAL_NAMES = {signal.SIGINT: "Ctrl-C", signal.SIGTERM: "SIGTERM", signal.SIGHUP: "SIGHUP"}


class StopOnSignals:
    """Context manager: the first SIGINT/SIGTERM/SIGHUP sets :attr:`stop` (a graceful stop), a second one
    raises :class:`Abort`. Installs nothing outside the main thread. :attr:`signum` is the first signal."""

    def __init__(self, stop: threading.Event | None = None, quiet: bool = False):
        self.stop = stop or threading.Event()
        self.signum: int | None = None
        self.quiet = quiet
        self._old: dict = {}

    def _handle(self, signum, frame):
        if self.signum is not None:
            raise Abort(signum)
        self.signum = signum
        self.stop.set()
        if not self.quiet:
            print(f"{_SIGNAL_NAMES.get(signum, signum)}: stopping; the requests in flight finish and are saved "
                  f"(again to abort at once)", file=sys.stderr, flush=True)

    def __enter__(self) -> "StopOnSignals":
        if threading.current_thread() is threading.main_thread():
            for sig in SIGNAL_EXIT:
                self._old[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc) -> None:
        for sig, old in self._old.items():
            with contextlib.suppress(ValueError, OSError):
                signal.signal(sig, old)

    @property
    def exit_status(self) -> int:
        return SIGNAL_EXIT.get(self.signum, 128 + (self.signum or 0))


def _settings(text: str | None) -> dict | None:
    if not text:
        return None
    try:
        obj = json.loads(text)
    except ValueError as exc:
        raise CollectionError(f"--settings is not valid JSON: {exc}") from None
    if not isinstance(obj, dict):
        raise CollectionError("--settings must be a JSON object")
    return obj


def collect(args: argparse.Namespace) -> int:
    """``python -m analysis collect``: exit 0 complete, 3 incomplete (resumable), 2 error, 130/143/129 signal.

    Raises :class:`CollectionError` (and its subclasses) for :data:`analysis.cli.ERROR_EXIT`."""
    if args.provider not in PROVIDERS:
        raise CollectionError(f"unknown provider {args.provider!r}; expected one of {', '.join(PROVIDERS)}")
    cells = [parse_cell(c) for c in args.cell]
    settings = _settings(args.settings)
    if batch_command.wanted(args):  # issue 14: the providers' batch APIs, batch files, prompt cache
        return batch_command.collect(args, settings, StopOnSignals)
    price = check_price(getattr(args, "price_in", None), getattr(args, "price_out", None))
    cap = getattr(args, "retry_after_cap", RetryPolicy.retry_after_cap)
    if not (isinstance(cap, (int, float)) and math.isfinite(cap) and cap >= 0):
        raise CollectionError(f"--retry-after-cap must be a finite number of seconds >= 0, not {cap}")
    policy = RetryPolicy(args.retries, args.backoff, args.backoff_cap, cap)
    status = 0
    with StopOnSignals() as sig:
        try:
            for c in cells:
                if sig.stop.is_set():
                    break
                jobs = None
                n_pairs = getattr(args, "pairs", None)
                if n_pairs is not None:
                    if n_pairs < 1:
                        raise CollectionError(f"--pairs must be at least 1, not {n_pairs}")
                    jobs = [jb for jb in job_list(c, args.display) if jb.pair_id < n_pairs]
                samples = check_samples(getattr(args, "samples", 1))
                if samples > 1:  # --samples R: every job R times (sample 0 .. R-1)
                    jobs = with_samples(jobs if jobs is not None else job_list(c, args.display), samples)
                res = collect_cell(c, args.provider, args.model, args.out, display=args.display,
                                   base_url=args.base_url, concurrency=args.concurrency, max_cost=args.max_cost,
                                   dry_run=args.dry_run, reuse_identical_prompts=args.reuse_identical_prompts,
                                   reask=args.reask, policy=policy, timeout=args.timeout, settings=settings,
                                   prices=args.prices, api_key_env=args.api_key_env, ledger_path=args.ledger,
                                   sim_seed=args.sim_seed, run=args.run, progress=not args.no_progress,
                                   stop=sig.stop, price=price, jobs=jobs,
                                   answer_format=getattr(args, "answer_format", "tool"),
                                   preflight=not getattr(args, "no_preflight", False))
                if isinstance(res, Plan):
                    print(res.describe())
                    continue
                cost = "unknown" if res.cost_usd is None else f"${res.cost_usd:.4f}"
                print(f"{res.cell}: {res.n_persisted}/{res.n_jobs} records -> {res.records_path} "
                      f"({res.n_requests} requests this run, cost {cost})")
                if res.stopped:
                    why = {"budget": "stopped at the budget", "failures": f"{res.n_failed} jobs got no answer",
                           "interrupted": "interrupted"}.get(res.stopped, res.stopped)
                    print(f"{res.cell}: incomplete ({why}); rerun the same command to resume", file=sys.stderr)
                    status = 3
                    if res.stopped in ("budget", "interrupted"):
                        break
        except Abort as exc:
            print(f"error: aborted by a second {_SIGNAL_NAMES.get(exc.signum, exc.signum)}; the answers saved "
                  f"so far are in the ledger, rerun to resume", file=sys.stderr)
            return SIGNAL_EXIT.get(exc.signum, 130)
    if sig.signum is not None:
        print(f"error: stopped by {_SIGNAL_NAMES.get(sig.signum, sig.signum)}; the answers received are in the "
              f"ledger and the records file; rerun to resume", file=sys.stderr)
        return sig.exit_status
    return status


# =============================================================================================
# estimate
# =============================================================================================
def validate_records(raw: pd.DataFrame, cell: Cell, path: Path) -> None:
    """Refuse a records file that cannot be this cell's: no rows, ``picked_i`` outside {0, 1, empty},
    a job twice, or pairs that are not the cell's pairs (a file of another cell)."""
    if raw.empty:
        raise CollectionError(f"records file {path} has no rows")
    p = pd.to_numeric(raw["picked_i"], errors="coerce")
    bad = raw["picked_i"].notna() & ~p.isin([0, 1])
    if bad.any():
        vals = sorted({str(v) for v in raw.loc[bad, "picked_i"]})[:5]
        raise CollectionError(f"records file {path}: picked_i must be 0, 1 or empty; found {', '.join(vals)} "
                              f"in {int(bad.sum())} rows")


def validate_jobs(df: pd.DataFrame, cell: Cell, path: Path) -> None:
    # one row per job, or per job and sample where the file holds several (--samples R: sample_id)
    dup = df.duplicated(["arm", "pair_id", "order"] + (["sample_id"] if "sample_id" in df else []), keep=False)
    if dup.any():
        first = df.loc[dup].iloc[0]
        raise CollectionError(f"records file {path}: {int(dup.sum())} rows repeat a job (one row per arm, pair "
                              f"and order; e.g. {first['arm']} pair {int(first['pair_id'])} order {int(first['order'])})")
    pairs = population.pairs(cell)
    want = set(zip(pairs["pair_id"].astype(int), pairs["i"].astype(int), pairs["j"].astype(int)))
    got = set(zip(df["pair_id"].astype(int), df["i"].astype(int), df["j"].astype(int)))
    foreign = got - want
    if foreign:
        raise CollectionError(f"records file {path}: {len(foreign)} of its {len(got)} pairs are not pairs of "
                              f"{cell.id} (a file of another cell?)")
    arms = set(df["arm"].astype(str)) - set(config.ARMS)
    if arms:
        raise CollectionError(f"records file {path}: unknown arms {sorted(arms)}; expected {list(config.ARMS)}")


def estimate_records(path, cell: "str | Cell", display: str = "numeric") -> dict:
    """Cell summary of a records CSV (released schema): ``pse_pp, pse_ci, error_pct, n_pairs, missing_rate, ...``.

    The file is validated first (:func:`validate_records`, :func:`validate_jobs`): one line on failure."""
    cell = parse_cell(cell)
    path = Path(path)
    if not path.is_file():
        raise CollectionError(f"records file {path} not found")
    try:
        raw = pd.read_csv(path)
    except pd.errors.EmptyDataError:
        raise CollectionError(f"records file {path} is empty") from None
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise CollectionError(f"records file {path} unreadable: {exc}") from None
    missing = [c for c in ("arm", "pair_id", "i", "j", "order", "picked_i") if c not in raw]
    if missing:
        raise CollectionError(f"records file {path} lacks columns {missing}")
    validate_records(raw, cell, path)
    try:
        df = rec_mod.normalise(raw, cell)
    except (ValueError, KeyError, TypeError) as exc:
        raise CollectionError(f"records file {path} unreadable: {exc}") from None
    validate_jobs(df, cell, path)
    return {"cell": cell.id, "display": display, "records": str(path),
            **dict(estimators.cell_summary(df, cell, display=display))}


def _round(v):
    if isinstance(v, (float, np.floating)) and math.isfinite(v):
        return round(float(v), 6)
    return v


def estimate(args: argparse.Namespace) -> int:
    """``python -m analysis estimate --cell CELL --records FILE``: print one JSON object."""
    out = estimate_records(args.records, args.cell, args.display)
    print(json.dumps(jsonable({k: [_round(x) for x in v] if isinstance(v, (list, tuple)) else _round(v)
                               for k, v in out.items()})))
    return 0


__all__ = ["SIGNAL_EXIT", "StopOnSignals", "collect", "estimate", "estimate_records", "REDACT"]
