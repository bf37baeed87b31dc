"""``collect --batch`` / ``--export-batch FILE`` / ``--import-batch FILE`` / ``--prompt-cache`` (issue 14).

Called by :func:`analysis.collection.commands.collect` when one of these flags is given (the
parser is :func:`analysis.cli._parser_collect`). Exit status: 0 complete, 3 incomplete (rerun the
same command: live batches are polled, never sent again), 2 error (raised), 130/143/129 signal.

* ``--batch``: every pending job of every ``--cell`` goes into the provider's batches
  (:mod:`.batch`); ``--poll-interval`` seconds between polls (default 60); ``--retries`` is the
  number of batch requests a job may fail (errored / expired / canceled) before it is given up;
  ``--batch-max-requests`` caps the requests per batch below the provider's cap.
* ``--export-batch FILE`` / ``--import-batch FILE``: :mod:`.batchfiles` (OpenAI-batch JSONL;
  ``vllm run-batch`` output).
* ``--prompt-cache``: :func:`.batchapi.with_prompt_cache` (Anthropic; a deviation, own request key).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..cells import parse_cell
from .batch import (DEFAULT_POLL_INTERVAL, BatchOptions, batch_factor, batch_price, collect_batch,
                    describe_batch_price)
from .batchapi import with_prompt_cache
from .batchfiles import export_batch, import_batch
from .errors import CollectionError
from .jobs import job_list, with_samples
from .ledger import LEDGER_NAME, Ledger, check_ledger, ledger_lock
from .outputs import check_writable, write_outputs
from .plan import plan
from .pricing import check_price, load_prices
from .retries import RetryPolicy
from .runner import check_samples, collect as collect_cell
from .subjects import check_completion, make_subject, request_key

FLAGS = ("batch", "export_batch", "import_batch", "prompt_cache")


def wanted(args: argparse.Namespace) -> bool:
    """Whether the command line asks for batch, export, import or the prompt cache."""
    return any(getattr(args, f, None) for f in FLAGS)


def options(args: argparse.Namespace) -> BatchOptions:
    poll = getattr(args, "poll_interval", None)
    poll = DEFAULT_POLL_INTERVAL if poll is None else float(poll)
    if poll < 0:
        raise CollectionError(f"--poll-interval must be at least 0 seconds, not {poll}")
    cap = getattr(args, "batch_max_requests", None)
    if cap is not None and cap < 1:
        raise CollectionError(f"--batch-max-requests must be at least 1, not {cap}")
    return BatchOptions(poll_interval=poll, retries=int(args.retries), reask=int(getattr(args, "reask", 1) or 1),
                        max_requests=cap)


def _jobs(args) -> list:
    n_pairs = getattr(args, "pairs", None)
    if n_pairs is not None and n_pairs < 1:
        raise CollectionError(f"--pairs must be at least 1, not {n_pairs}")
    jobs = []
    for c in args.cell:
        cell_jobs = job_list(parse_cell(c), args.display)
        jobs += [jb for jb in cell_jobs if n_pairs is None or jb.pair_id < n_pairs]
    return with_samples(jobs, check_samples(getattr(args, "samples", 1)))  # --samples R: custom_id carries the index


def _subject(args, settings: dict | None, require_key: bool):
    subject = make_subject(args.provider, args.model, parse_cell(args.cell[0]), base_url=args.base_url,
                           api_key_env=args.api_key_env, timeout=args.timeout, settings=settings,
                           sim_seed=getattr(args, "sim_seed", 0), require_key=require_key,
                           answer_format=getattr(args, "answer_format", "tool"))
    return with_prompt_cache(subject) if getattr(args, "prompt_cache", False) else subject


def _print_results(results) -> int:
    status = 0
    for res in results:
        cost = "unknown" if res.cost_usd is None else f"${res.cost_usd:.4f}"
        print(f"{res.cell}: {res.n_persisted}/{res.n_jobs} records -> {res.records_path} "
              f"({res.n_requests} requests this run, cost {cost})")
        if res.n_persisted < res.n_jobs:
            why = {"budget": "stopped at the budget", "failures": f"{res.n_failed} jobs got no answer",
                   "interrupted": "batches still live"}.get(res.stopped, res.stopped or "unanswered jobs")
            print(f"{res.cell}: incomplete ({why}); rerun the same command to resume", file=sys.stderr)
            status = 3
    return status


def collect(args: argparse.Namespace, settings: dict | None, signals) -> int:
    """The batch forms of ``collect``; ``signals`` is :class:`analysis.collection.commands.StopOnSignals`."""
    chosen = [f for f in ("batch", "export_batch", "import_batch") if getattr(args, f, None)]
    if len(chosen) > 1:
        raise CollectionError("give one of --batch, --export-batch, --import-batch")
    check_completion(args.provider, getattr(args, "answer_format", "tool"), batch=True)
    if args.provider not in ("anthropic", "openai"):
        raise CollectionError(f"batch collection needs --provider anthropic or openai, not {args.provider!r}")
    jobs = _jobs(args)
    ledger_path = args.ledger or f"{args.out}/{LEDGER_NAME}"
    if getattr(args, "export_batch", None):
        subject = _subject(args, settings, require_key=False)
        try:
            check_ledger(Path(ledger_path))
            n = export_batch(args.export_batch, jobs, subject, ledger_path)
        finally:
            subject.close()
        print(f"{n} pending requests -> {args.export_batch} (OpenAI-batch JSONL); answer them, e.g. with "
              f"`vllm run-batch -i {args.export_batch} -o results.jsonl --model {args.model}`, then rerun this "
              f"command with --import-batch results.jsonl")
        return 0
    if getattr(args, "import_batch", None):
        subject = _subject(args, settings, require_key=False)
        check_writable(Path(args.out))
        try:
            with ledger_lock(ledger_path):
                ledger = Ledger(ledger_path)
                try:
                    counts = import_batch(args.import_batch, jobs, subject, ledger)
                    key, settings_json = request_key(subject)
                    results = []
                    for cell in dict.fromkeys(jb.cell for jb in jobs):
                        group = [jb for jb in jobs if jb.cell == cell]
                        rec, meta = write_outputs(Path(args.out), subject, group, ledger, key, settings_json,
                                                  {"this_run": {"import_batch": str(args.import_batch), **counts}})
                        results.append((cell, len(group), rec, meta))
                finally:
                    ledger.close()
        finally:
            subject.close()
        print(f"imported {args.import_batch}: {counts['lines']} lines, {counts['answers']} answers added, "
              f"{counts['kept_existing']} already in the ledger, {counts['errors']} error lines, "
              f"{counts['unknown']} of unknown custom_id")
        status = 0
        for cell, n, rec, meta in results:
            done = int(json.loads(meta.read_text())["n_records"])
            print(f"{cell}: {done}/{n} records -> {rec}")
            status = status or (0 if done == n else 3)
        return status
    if not getattr(args, "batch", False):  # --prompt-cache alone: the synchronous run with the cached subject
        policy = RetryPolicy(args.retries, args.backoff, args.backoff_cap)
        status = 0
        with signals() as sig:
            for c in dict.fromkeys(jb.cell for jb in jobs):
                if sig.stop.is_set():
                    break
                res = collect_cell(parse_cell(c), args.provider, args.model, args.out, display=args.display,
                                   concurrency=args.concurrency, max_cost=args.max_cost, dry_run=args.dry_run,
                                   reask=args.reask, policy=policy, prices=args.prices, ledger_path=args.ledger,
                                   progress=not args.no_progress, jobs=[jb for jb in jobs if jb.cell == c],
                                   subject=_subject(args, settings, require_key=not args.dry_run), stop=sig.stop)
                if args.dry_run:
                    print(res.describe())
                else:
                    status = max(status, _print_results([res]))
        return sig.exit_status if sig.signum is not None else status
    subject = _subject(args, settings, require_key=not args.dry_run)
    if args.dry_run:
        table = load_prices(args.prices)
        factor = batch_factor(table, subject.provider, subject.model)
        for c in dict.fromkeys(jb.cell for jb in jobs):
            p = plan([jb for jb in jobs if jb.cell == c], subject, Path(ledger_path), prices=table)
            print(p.describe())
            print(describe_batch_price(p.cost_usd, p.cost_cap_usd, factor))
        subject.close()
        return 0
    list_price = check_price(getattr(args, "price_in", None), getattr(args, "price_out", None))  # issue 20
    if (batch_price(load_prices(args.prices), subject.provider, subject.model, list_price) is None
            and args.max_cost is not None):
        raise CollectionError("--max-cost with --batch needs a batch price (batch_price_factor in the price table)")
    with signals() as sig:
        try:
            results = collect_batch(jobs, subject, args.out, ledger_path=args.ledger, prices=args.prices,
                                    max_cost=args.max_cost, opts=options(args), progress=not args.no_progress,
                                    stop=sig.stop, run_info={"api_key_env": args.api_key_env}, list_price=list_price)
        finally:
            subject.close()
    status = _print_results(results)
    return sig.exit_status if sig.signum is not None else status

