"""``python -m analysis audit``: the command, its parser and its signal handling.

:func:`audit` takes the parsed :class:`argparse.Namespace` (the one CLI module builds it);
:func:`cli_audit` parses ``argv`` with :func:`parser` and calls it. Exit codes: 0 report written
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
from .. import config
from ..cells import CellError
from ..collection import batch_command  # audit --batch (issue 14)
from .batteries import BATTERY_NAMES, SMOKE_PAIRS
from .run import run_audit
from .subjects import AUDIT_PRESETS
from ..validity import commands as validity_commands  # --battery validity (issue 15)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401
        raise C.CollectionError(f"{self.prog}: {message}")


DESCRIPTION = ("Audit a model against the evidence: plan, collect (resumable, never pays twice), estimate and write "
               "a report card (report_card.html + report_card.json in --out).")


def parser() -> argparse.ArgumentParser:
    """The audit's own parser (errors raise :class:`analysis.collection.CollectionError`)."""
    return add_arguments(_Parser(prog="python -m analysis audit", description=DESCRIPTION))


def add_arguments(ap: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the audit's arguments to ``ap`` (also used by :mod:`analysis.cli`)."""
    ap.add_argument("--provider", required=True, help="anthropic | openai (any OpenAI-compatible endpoint) | simulated")
    ap.add_argument("--model", required=True, help="the serving model id; with simulated, a preset ("
                    + ", ".join(AUDIT_PRESETS) + ") or any label with --preset")
    ap.add_argument("--base-url", help="endpoint (OpenRouter, vLLM, Ollama, a proxy); default: the provider's")
    ap.add_argument("--battery", default="core", choices=BATTERY_NAMES,
                    help="core (6,732 calls), full (adds field count and dependence; 9,108 calls) or smoke (one "
                         f"no-example and one 80-example cell on the first {SMOKE_PAIRS} pairs: a check, not the "
                         "protocol)")
    ap.add_argument("--pairs", type=int, metavar="N",
                    help=f"only the first N pairs of every condition (smoke default {SMOKE_PAIRS}); the card says so")
    ap.add_argument("--price-in", type=float, metavar="USD",
                    help="input price per million tokens, overriding the price table (0 for a local model)")
    ap.add_argument("--price-out", type=float, metavar="USD",
                    help="output price per million tokens (give both; 0 0 for a local model)")
    ap.add_argument("--answer-format", default="tool", choices=C.ANSWER_FORMATS,
                    help="tool: a forced tool call (the protocol); json or text: the answer in the message content, "
                         "for servers that refuse a forced tool_choice (part of the request key and the card)")
    ap.add_argument("--max-cost", type=float,
                    help="budget in USD for this output folder, including what earlier runs into it spent; the "
                         "audit stops cleanly at the budget and resumes when rerun with a larger one")
    ap.add_argument("--dry-run", action="store_true", help="print calls, tokens and cost; call nothing, write nothing")
    ap.add_argument("--concurrency", type=int, help="parallel requests (default 8; 1 for the simulated subject)")
    ap.add_argument("--out", required=True, help="output folder: ledger, records, report card")
    ap.add_argument("--preset", help="simulated behaviour: " + ", ".join(AUDIT_PRESETS))
    ap.add_argument("--seed", type=int, default=0, help="seed of the simulated subject's noise")
    ap.add_argument("--draws", type=int, default=config.BOOTSTRAP_DRAWS, help="bootstrap draws (paper: 5,000)")
    ap.add_argument("--prices", help="price table override (CSV or JSON; default data/prices.csv)")
    ap.add_argument("--api-key-env", help="environment variable holding the API key")
    ap.add_argument("--settings", help="JSON merged into the request settings (null removes a setting)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per request")
    ap.add_argument("--retries", type=int, default=C.RetryPolicy.max_attempts, help="transport attempts per answer")
    ap.add_argument("--only", nargs="+", metavar="CONDITION", help="run only these conditions of the battery")
    ap.add_argument("--no-reference-models", action="store_true", help="leave out the paper's four models")
    ap.add_argument("--no-progress", action="store_true")
    return ap


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
    """Run the audit from parsed arguments (see :func:`add_arguments`); returns the exit code."""
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
                            answer_format=a.answer_format,
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


def cli_audit(argv: list[str]) -> int:
    """``python -m analysis audit``: exit 0 report written (or dry run), 3 incomplete (rerun to resume),
    2 error (one line on stderr), 130 interrupted."""
    try:
        a = parser().parse_args(argv)
    except C.CollectionError as exc:
        print(f"error: {C.REDACT(str(exc))}", file=sys.stderr)
        return 2
    return audit(a)
