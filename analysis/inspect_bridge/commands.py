"""``python -m analysis collect --import-inspect LOG…`` and ``python -m analysis audit --from-inspect LOG…``.

Exit codes: 0 every job of the battery imported (``audit``: card written), 3 some jobs have no answer
yet (rerun inspect, then import again), 2 a log refused, or jobs refused (each named on stderr).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

from ..audit.analyse import analyse, collected_loader, reference_models
from ..audit.batteries import battery_conditions, first_pairs, jobs_of
from ..audit.card import provenance, report_card
from ..audit.run import write_report
from ..collection.errors import CollectionError
from ..collection.ledger import LEDGER_NAME, Ledger, check_ledger, ledger_lock
from ..collection.outputs import check_writable, write_outputs
from .logs import Imported, import_logs
from .requests import deviation_report


def _records(imp: Imported, out: Path, ledger: Ledger, logs: list[str]) -> list[dict]:
    """Write records and metadata of every condition for each imported request; one summary per request.
    With ``--epochs R`` every job has R samples (epoch e is sample e - 1): the records hold them all and a
    condition is complete only when every sample of every job is answered."""
    conds = [dataclasses.replace(c, samples=imp.samples) for c in first_pairs(battery_conditions(imp.battery),
                                                                              imp.pairs)]
    summaries = []
    for subject, key, settings_json in imp.groups:
        dev = deviation_report(subject.template, subject.api, subject.model, imp.configs)
        info = {"answer_format": "tool", "price": None, "reuse": False, "reask": 1,
                "this_run": {"imported_from_inspect": [Path(p).name for p in logs], "n_samples": imp.n_samples,
                             "added": imp.added, "kept_existing": imp.kept_existing, "deviations": dev}}
        complete = True
        for c in conds:
            jobs = jobs_of(c)
            _, meta = write_outputs(out, subject, jobs, ledger, key, settings_json, info)
            complete &= bool(json.loads(meta.read_text())["complete"])
        summaries.append({"subject": subject, "key": key, "complete": complete, "deviations": dev,
                          "conditions": conds})
    return summaries


def run_import(logs: list[str], out: str | Path, ledger_path: str | None = None) -> tuple[Imported, list[dict]]:
    """Import the logs into ``OUT/ledger.sqlite`` and write the records (the ledger lock held throughout)."""
    out = Path(out)
    check_writable(out)
    lp = Path(ledger_path) if ledger_path else out / LEDGER_NAME
    check_ledger(lp)
    with ledger_lock(lp):
        ledger = Ledger(lp, durable=True)
        try:
            imp = import_logs(logs, ledger)
            summaries = _records(imp, out, ledger, logs) if imp.battery else []
        finally:
            ledger.close()
    return imp, summaries


def refused_line(refused: list[str]) -> str:
    """One line for the refused jobs (``"JOB: reason"``): the commonest reason with its first jobs named.

    >>> refused_line(["a:1: bad prompt", "a:2: bad prompt", "b:1: other"])
    '3 jobs refused, not imported: bad prompt: a:1, a:2; 1 other: b:1: other'
    """
    by_reason: dict[str, list[str]] = {}
    for r in refused:
        job, _, why = r.partition(": ")
        by_reason.setdefault(why, []).append(job)
    why, jobs = max(by_reason.items(), key=lambda kv: len(kv[1]))
    named = ", ".join(jobs[:3]) + (f" and {len(jobs) - 3} more" if len(jobs) > 3 else "")
    rest = [r for r in refused if r.partition(": ")[2] != why]
    tail = f"; {len(rest)} other: {rest[0]}" + (" …" if len(rest) > 1 else "") if rest else ""
    return f"{len(refused)} job{'s' if len(refused) != 1 else ''} refused, not imported: {why}: {named}{tail}"


def _report(imp: Imported, summaries: list[dict], out: Path) -> int:
    for s in summaries:
        d = s["deviations"]
        print(f"{s['subject'].model}: request {s['key']} ({'complete' if s['complete'] else 'incomplete'}); "
              f"{len(d['fields'])} deviations from the protocol's request -> {out}")
        for f in d["fields"]:
            print(f"  deviation: {f['statement']}")
        for line in d["log_config_not_sent"]:
            print(f"  note: {line}")
    print(f"{imp.n_samples} samples read: {imp.added} answers added, {imp.kept_existing} already in the ledger, "
          f"{len(imp.unanswered)} without an answer, {len(imp.refused)} refused")
    if imp.refused:
        print(f"error: {refused_line(imp.refused)}", file=sys.stderr)
        return 2
    return 0 if summaries and all(s["complete"] for s in summaries) else 3


def collect_import(args: argparse.Namespace) -> int:
    """``collect --import-inspect LOG… --out DIR``."""
    imp, summaries = run_import(args.import_inspect, args.out, getattr(args, "ledger", None))
    return _report(imp, summaries, Path(args.out))


def audit_from_inspect(args: argparse.Namespace) -> int:
    """``audit --from-inspect LOG… --out DIR``: import, then the card (with its deviations section)."""
    imp, summaries = run_import(args.from_inspect, args.out)
    status = _report(imp, summaries, Path(args.out))
    if status != 0:
        if status == 3:
            print("audit incomplete: some jobs of the battery have no answer in the logs; rerun inspect (with "
                  "-T cache=true the answered jobs are not asked again) and import again", file=sys.stderr)
        return status
    if len(summaries) != 1:
        raise CollectionError(f"the logs hold {len(summaries)} different requests; write one card per request "
                              f"(import their logs into separate folders)")
    s = summaries[0]
    subject, conds = s["subject"], s["conditions"]
    result = analyse(collected_loader(args.out, subject), conds, args.draws)
    info = provenance(args.out, subject, conds)
    info["samples_per_prompt"] = imp.samples  # --epochs R: the card's sampling lines (as audit --samples R)
    refs = None if args.no_reference_models else reference_models(conds, args.draws)
    card = report_card(result, conds, battery=imp.battery, subject_info=info, references=refs, draws=args.draws,
                       deviations=s["deviations"])
    jpath, hpath = write_report(card, args.out)
    print(f"report card: {hpath}\n             {jpath}")
    return 0
