"""The audit from plan to card: plan, collect (resumable), estimate, judge, write (:func:`run_audit`).

Collection goes through :func:`analysis.collection.collect`: one SQLite ledger per output folder,
retries, resume; a rerun never asks a persisted job again. ``--max-cost`` is the budget of the
whole output folder (what earlier runs spent counts).
"""
from __future__ import annotations

import dataclasses
import json
import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import pandas as pd

from .. import collection as C
from .. import config, data
from ..collection import batch as collection_batch, batchapi  # audit --batch / --prompt-cache (issue 14)
from .analyse import analyse, collected_loader, reference_models
from .batteries import Condition, battery_conditions, first_pairs, jobs_of, select_conditions
from .card import REPORT_HTML, REPORT_JSON, provenance, report_card
from .html import render_html
from .plan import _sum_or_none, describe_plan, plan_audit, spent_in_ledger, tokens_line
from .subjects import subject_factory


def collect_audit(conditions: list[Condition], make: Callable[[], C.Subject], out: str | os.PathLike, *,
                  concurrency: int = 8, max_cost: float | None = None, policy: C.RetryPolicy = C.RetryPolicy(),
                  prices: str | os.PathLike | None = None, progress: bool = True,
                  stop: threading.Event | None = None, timeout: float = 60.0, price: tuple[float, float] | None = None,
                  answer_format: str = "tool", log=print, preflight: bool = True) -> list[C.RunResult]:
    """Collect every condition through :func:`analysis.collection.collect` (ledger, retries, resume).

    ``max_cost`` is the budget of the folder: what earlier runs spent under the same request
    counts against it. Stops after a condition that stopped at the budget or was interrupted.
    """
    stop = stop or threading.Event()
    first = make()
    try:
        spent_before = spent_in_ledger(out, first)
    finally:
        first.close()
    spent = 0.0
    results: list[C.RunResult] = []
    for cond in conditions:
        if stop.is_set():
            break
        remaining = None if max_cost is None else max(0.0, max_cost - spent_before - spent)
        subject = make()
        res = C.collect(cond.parsed, subject.provider, subject.model, out, display=cond.display,
                        concurrency=concurrency, max_cost=remaining, policy=policy, timeout=timeout, prices=prices,
                        progress=progress, jobs=jobs_of(cond), subject=subject, stop=stop, price=price,
                        answer_format=answer_format, preflight=preflight)
        spent += res.cost_usd or 0.0
        results.append(res)
        state = "complete" if res.complete else f"incomplete ({res.stopped or 'unanswered jobs'})"
        log(f"{cond.key}: {res.n_persisted}/{res.n_jobs} answers, {res.n_requests} requests this run, {state}")
        if res.stopped in ("budget", "interrupted"):
            break
    return results



def reference_rows_or_reason(conditions: list[Condition], draws: int, log=print) -> tuple[dict | None, str | None]:
    """The paper's four reference rows, or ``(None, why)`` when their released records cannot be fetched
    (offline, no mirror): the card about the user's model is written without them (issue 20)."""
    try:
        return reference_models(conditions, draws), None
    except data.InputError as exc:
        why = (f"The paper's four reference rows are left out: their released records could not be fetched "
               f"({str(exc)[:200]}); run `python -m analysis data` online (or set PROXY_AUDIT_MIRROR) and rerun "
               f"the same command to add them.")
        log(f"note: {why}")
        return None, why


def write_report(card: dict, out: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``report_card.json`` and ``report_card.html`` into ``out`` (atomically)."""
    out = Path(out)
    jpath, hpath = out / REPORT_JSON, out / REPORT_HTML
    C.atomic_write(jpath, (json.dumps(card, indent=1, ensure_ascii=False) + "\n").encode())
    C.atomic_write(hpath, render_html(card).encode())
    return jpath, hpath


# =============================================================================================
# Top level
# =============================================================================================
@dataclass
class AuditResult:
    """What :func:`run_audit` did."""

    plan: pd.DataFrame
    runs: list
    complete: bool
    stopped: str = ""
    card: dict | None = None
    json_path: Path | None = None
    html_path: Path | None = None


def run_audit(provider: str, model: str, out: str | os.PathLike, *, battery: str = "core",
              base_url: str | None = None, max_cost: float | None = None, dry_run: bool = False,
              concurrency: int | None = None, preset: str | None = None, seed: int = 0,
              draws: int = config.BOOTSTRAP_DRAWS, prices: str | os.PathLike | None = None,
              api_key_env: str | None = None, timeout: float = 60.0, settings: dict | None = None,
              samples: int = config.SAMPLES_DEFAULT,
              policy: C.RetryPolicy = C.RetryPolicy(), reference_rows: bool = True, only: Iterable[str] | None = None,
              progress: bool = True, stop: threading.Event | None = None, n_pairs: int | None = None,
              price_in: float | None = None, price_out: float | None = None, answer_format: str = "tool",
              batch: "collection_batch.BatchOptions | None" = None, prompt_cache: bool = False,
              log=print, preflight: bool = True) -> AuditResult:
    """Plan, collect (resumable), estimate, judge and write the report card.

    Returns an :class:`AuditResult`; ``complete`` is False (and no card is written) while any
    job of the battery has no persisted answer (stopped at the budget, interrupted, or transport
    failures): rerun the same call to resume. Raises :class:`analysis.collection.CollectionError`
    on a problem the user must fix (nothing is written then). ``n_pairs`` restricts every
    condition to its first ``n_pairs`` pairs (``--pairs``; the smoke battery takes 24 by default).
    ``price_in``/``price_out`` (USD per million tokens; 0 and 0 for a local model) override the
    price table; ``answer_format`` is ``tool`` (the protocol), ``json``, ``text`` or ``logprobs``. ``samples``
    (``--samples R``) asks every prompt R times; the card's numbers are then on per-prompt choice probabilities.
    """
    price = C.pricing.check_price(price_in, price_out)
    C.check_completion(provider, answer_format, batch=batch is not None or prompt_cache)
    conditions = first_pairs(select_conditions(battery_conditions(battery), only), n_pairs)
    conditions = [dataclasses.replace(c, samples=C.runner.check_samples(samples)) for c in conditions]
    if max_cost is not None and max_cost < 0:
        raise C.CollectionError("--max-cost must be at least 0")
    if draws < 100:
        raise C.CollectionError("--draws must be at least 100")
    make = subject_factory(provider, model, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                           settings=settings, preset=preset, seed=seed, dry_run=dry_run, answer_format=answer_format)
    if prompt_cache:  # a deviation with its own request key (issue 14)
        make = batchapi.prompt_cache_factory(make)
    probe = make()
    try:
        paid, sprov, smodel = probe.paid, probe.provider, probe.model
    finally:
        probe.close()
    if not dry_run:
        C.check_writable(Path(out))
    plan = plan_audit(conditions, make, out, prices, price)
    log(describe_plan(plan, sprov, smodel, battery))
    if paid:  # both prices (issue 14)
        log(collection_batch.describe_batch_price(_sum_or_none(plan["cost_usd"]), _sum_or_none(plan["cost_cap_usd"]),
                                                  collection_batch.batch_factor(C.load_prices(prices), sprov, smodel)))
    if max_cost is not None and paid and plan["price"].iloc[0] is None:
        raise C.CollectionError(f"--max-cost needs a price for {sprov}/{smodel}: give --prices FILE "
                                f"(or set {C.PRICES_ENV}), or --price-in/--price-out (0 0 for a local model)")
    if dry_run:
        return AuditResult(plan, [], complete=bool((plan["n_calls"] == 0).all()), stopped="dry run")
    est = _sum_or_none(plan["cost_usd"])
    if max_cost is not None and est is not None:
        probe = make()
        try:
            spent = spent_in_ledger(out, probe)
        finally:
            probe.close()
        if spent + est > max_cost:
            log(f"note: the estimate (${est:,.2f}) plus what this folder already spent (${spent:,.2f}) exceeds "
                f"--max-cost ${max_cost:,.2f}; the audit will stop at the budget and can be resumed with a larger one")
    if concurrency is None:
        concurrency = 8 if paid else 1
    if batch is not None:  # every pending job into the provider's batches (issue 14)
        runs = collection_batch.collect_conditions([jobs_of(c) for c in conditions], make, out, max_cost=max_cost,
                                                   prices=prices, opts=batch, progress=progress, stop=stop, log=log,
                                                   list_price=price)
    else:
        runs = collect_audit(conditions, make, out, concurrency=concurrency, max_cost=max_cost, policy=policy,
                             prices=prices, progress=progress, stop=stop, timeout=timeout, price=price,
                             answer_format=answer_format, log=log, preflight=preflight)
    after = plan_audit(conditions, make, out, prices, price)  # the actual usage against the estimate
    if tokens_line(after):
        log(tokens_line(after))
    done = {r.cell + ":" + r.display for r in runs if r.complete}
    complete = all(f"{c.cell}:{c.display}" in done for c in conditions)
    stopped = next((r.stopped for r in runs if r.stopped), "") or ("" if complete else "interrupted")
    if not complete:
        return AuditResult(plan, runs, complete=False, stopped=stopped)
    subject = make()
    try:
        analysis = analyse(collected_loader(out, subject), conditions, draws)
        info = provenance(out, subject, conditions)
        info["samples_per_prompt"] = samples  # --samples R (issue 20): the card's sampling lines
        if sprov == "simulated":
            info["simulated"] = {"preset": smodel, "seed": seed}
    finally:
        subject.close()
    refs, refs_note = reference_rows_or_reason(conditions, draws, log) if reference_rows else (None, None)
    card = report_card(analysis, conditions, battery=battery, subject_info=info, references=refs, draws=draws,
                       plan=plan, after=after, answer_format=answer_format, references_note=refs_note)
    jpath, hpath = write_report(card, out)
    log(f"report card: {hpath}\n             {jpath}")
    return AuditResult(plan, runs, complete=True, card=card, json_path=jpath, html_path=hpath)

