"""``python -m analysis audit``: the command and its signal handling (its parser is in :mod:`analysis.cli`).

:func:`audit` takes the :class:`argparse.Namespace` parsed by :mod:`analysis.cli`, the one module
of parsers. Exit codes: 0 report written
(or dry run), 3 incomplete (rerun to resume), 2 error (one line on stderr), 130 interrupted.
"""
from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import signal
import sys
import threading

from .. import collection as C
from ..cells import CellError
from ..collection import batch_command  # audit --batch (issue 14)
from .run import run_audit
from ..validity import commands as validity_commands  # --battery validity (issue 15)


@contextlib.contextmanager
def graceful_interrupt(stop: threading.Event):
    """Ctrl-C sets ``stop`` (the requests in flight finish and are saved); a second Ctrl-C aborts.

    Collection then returns ``stopped = "interrupted"`` with every received answer in the
    ledger, so a rerun repeats no call. Only in the main thread (signal handlers live there).
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum, frame):
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()
        print("interrupt: finishing the requests in flight and saving their answers (Ctrl-C again to abort)",
              file=sys.stderr, flush=True)

    old = signal.signal(signal.SIGINT, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def validity_argv(a: argparse.Namespace) -> list[str]:
    """The audit's options as arguments of ``python -m analysis.validity`` (beyond the paper's protocol)."""
    argv = ["--provider", a.provider, "--model", a.model, "--out", str(a.out), "--seed", str(a.seed),
            "--draws", str(a.draws)]
    for flag, value in (("--pairs", a.pairs), ("--max-cost", a.max_cost), ("--base-url", a.base_url),
                        ("--api-key-env", a.api_key_env), ("--concurrency", a.concurrency), ("--preset", a.preset)):
        if value is not None:
            argv += [flag, str(value)]
    return argv + (["--dry-run"] if a.dry_run else [])


def audit(a: argparse.Namespace) -> int:
    """Run the audit from arguments parsed by :mod:`analysis.cli` (its ``audit`` parser); returns the exit code."""
    if a.battery == "validity":  # the whole validity battery: every cue and the association probe
        return validity_commands.main(validity_argv(a))
    try:
        if a.concurrency is not None and a.concurrency < 1:
            raise C.CollectionError("--concurrency must be at least 1")
        if a.retries < 1:
            raise C.CollectionError("--retries must be at least 1")
        if a.pairs is not None and a.pairs < 1:
            raise C.CollectionError("--pairs must be at least 1")
        try:
            settings = json.loads(a.settings) if a.settings else None
        except ValueError as exc:
            raise C.CollectionError(f"--settings is not valid JSON: {exc}") from None
        stop = threading.Event()
        with graceful_interrupt(stop):
            res = run_audit(a.provider, a.model, a.out, battery=a.battery, base_url=a.base_url, max_cost=a.max_cost,
                            dry_run=a.dry_run, concurrency=a.concurrency, preset=a.preset, seed=a.seed,
                            draws=a.draws, prices=a.prices, api_key_env=a.api_key_env, timeout=a.timeout,
                            settings=settings, policy=dataclasses.replace(C.RetryPolicy(), max_attempts=a.retries),
                            reference_rows=not a.no_reference_models, only=a.only, progress=not a.no_progress,
                            stop=stop, n_pairs=a.pairs, price_in=a.price_in, price_out=a.price_out,
                            answer_format=a.answer_format, samples=getattr(a, "samples", 1),
                            batch=batch_command.options(a) if getattr(a, "batch", False) else None,
                            prompt_cache=getattr(a, "prompt_cache", False))
        if a.dry_run:
            return 0
        if not res.complete and stop.is_set():
            raise KeyboardInterrupt
        if not res.complete:
            why = {"budget": "stopped at the budget", "failures": "some jobs got no answer",
                   "interrupted": "interrupted"}.get(res.stopped, res.stopped)
            print(f"audit incomplete ({why}); rerun the same command to resume (answers are never requested twice)",
                  file=sys.stderr)
            return 3
        return 0
    except KeyboardInterrupt:
        print("error: interrupted; answers received so far are in the ledger, rerun the same command to resume",
              file=sys.stderr)
        return 130
    except C.Unreachable as exc:  # resumable: the answers received are in the ledger
        print(f"error: {C.REDACT(str(exc))}", file=sys.stderr)
        return 3
    except (C.CollectionError, CellError, ValueError) as exc:
        print(f"error: {C.REDACT(str(exc))}", file=sys.stderr)
        return 2


