"""``python -m analysis.validity``: the whole validity battery on a model, ledgered (beyond the paper's protocol).

``python -m analysis audit --battery validity`` runs the part of the battery the audit engine can
express (the paper's vocabulary in three displays, and the seed replications). This command runs
all of it: every cue of the panel and the association probe, each cue through
:func:`analysis.collection.collect` into its own folder ``OUT/validity/<cue>/`` (its own ledger:
resumable, a persisted answer is never asked again, ``--max-cost`` over the whole folder), then
writes ``OUT/validity_card.json`` and ``OUT/validity_card.html``. The plan and its cost print first;
``--pairs N`` is a cheaper pass on the first N pairs of each cell, marked as such in the card.

Probe with a live model: both variants. The abstention variant sends the ``choose`` tool with
``patient`` in {0, 1, 2} (:func:`analysis.cues.probe_tool_spec`; with ``--answer-format text`` the
prompt's own instruction "answer 0 instead of guessing" and the text form are read instead). The
collection records an answer 0 as invalid with its raw arguments in the ledger (never re-asked:
``reask`` 1), and :func:`probe_answers_from_ledger` reads 0, 1 or 2 back from the raw reply
(:func:`analysis.cues.probe_answer_from_args`, :func:`analysis.cues.probe_answer_from_text`).
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd

from .. import collection as C
from .. import config, cues, records
from ..cells import Cell, parse_cell
from . import card as VC
from . import probe as Q
from . import run as VR
from .subjects import PRESETS, CueSubject

PROG = "python -m analysis.validity"
CARD_JSON, CARD_HTML = "validity_card.json", "validity_card.html"


def slug(cue_id: str, variant: str = "") -> str:
    """A folder name of a cue (and probe variant)."""
    s = re.sub(r"[^A-Za-z0-9_-]", "_", cue_id)
    return f"probe_{variant}_{s}" if variant else s


def probe_jobs(cell: str, table: pd.DataFrame) -> list:
    """Probe prompts as collection jobs: ``i`` the target, so ``picked_i`` = 1 names the A = 1 version."""
    display = cues.parse_cue(table["cue"].iloc[0]).display
    return [C.Job(cell, display, "cf_a1", int(r.pair_id), int(r.i), int(r.j), int(r.order), r.prompt,
                  r.prompt_sha256) for r in table.itertuples(index=False)]


def triage_jobs(cell: str, table: pd.DataFrame) -> list:
    cue = str(table["cue"].iloc[0])
    display = "numeric" if cue == cues.BLIND else cues.parse_cue(cue).display
    return [C.Job(cell, display, str(r.arm), int(r.pair_id), int(r.i), int(r.j), int(r.order), r.prompt,
                  r.prompt_sha256) for r in table.itertuples(index=False)]


def _subject(a: argparse.Namespace):
    if a.provider == "simulated" and (a.preset or a.model) in PRESETS:
        return CueSubject.preset(a.preset or a.model, a.seed)
    return None  # the collection builds it (key from the environment)


def _collect(a, cell: str, jobs: list, folder: Path, remaining: float | None):
    subject = _subject(a)
    return C.collect(parse_cell(cell), a.provider, a.model, folder, display=jobs[0].display, base_url=a.base_url,
                     concurrency=a.concurrency, max_cost=remaining, dry_run=a.dry_run, api_key_env=a.api_key_env,
                     progress=False, jobs=jobs, subject=subject, sim_seed=a.seed)


def _load(res) -> pd.DataFrame:
    return records.normalise(pd.read_csv(res.records_path))


def run_battery(a: argparse.Namespace, log=print) -> dict | None:
    """Plan, collect and analyse; returns the card section (None for a dry run or an incomplete battery)."""
    variants = tuple(a.variants)
    live = not (a.provider == "simulated" and (a.preset or a.model) in PRESETS)
    if live and "abstain" in variants and a.provider not in ("openai", "anthropic"):
        variants = tuple(v for v in variants if v != "abstain")
        log(f"note: the abstention variant needs a tool that accepts 0; not available with {a.provider}: "
            "forced choice only")
    plan = VR.ValidityPlan(cells=tuple(a.cells), n_pairs=a.pairs, variants=variants,
                           cue_ids=tuple(a.cues) if a.cues else None)
    log(VR.describe_plan(plan))
    out = Path(a.out)
    fp = VR.fingerprint(plan, served_model=f"{a.provider}:{a.model}")
    log(f"plan fingerprint: {fp['sha256']}")
    if not a.dry_run:
        write_fingerprint(out, fp, log)
    recs: dict = {"panel": {}, "probe": {}, "replication": {}, "blind": {}}
    spent, complete = 0.0, True
    parts = []
    for cell, c in plan.parsed.items():
        recs["panel"][cell], recs["probe"][cell] = {}, {}
        for cid in plan.cues_of(c):
            parts.append(("panel", cell, cid, "", triage_jobs(cell, VR._first_pairs(cues.job_table(c, cid),
                                                                                     plan.n_pairs))))
            for v in variants:
                t = VR._first_pairs(cues.probe_table(c, cid, v), plan.n_pairs)
                parts.append(("probe", cell, cid, v, (t, probe_jobs(cell, t))))
        if plan.blind:
            parts.append(("blind", cell, cues.BLIND, "", triage_jobs(cell, VR._first_pairs(cues.blind_table(c),
                                                                                         plan.n_pairs))))
        for rep in VC.R.replicate_cells(c, plan.seeds):
            parts.append(("replication", cell, rep.id, "", triage_jobs(rep.id, VR._first_pairs(
                cues.job_table(rep, "numeric"), plan.n_pairs))))
    for kind, cell, cid, v, payload in parts:
        jobs = payload[1] if kind == "probe" else payload
        remaining = None if a.max_cost is None else max(0.0, a.max_cost - spent)
        folder = out / "validity" / (f"replication_{cid}" if kind == "replication" else slug(cid, v))
        if kind == "probe" and v == "abstain" and not live:  # the simulated subjects answer 0 directly
            if a.dry_run:
                continue
            subj = _subject(a)
            t = payload[0]
            recs["probe"][cell][(cid, v)] = Q.records(t, VR.probe_answers(subj, cell, t))
            continue
        if kind == "probe" and v == "abstain":  # a live model: the tool variant that accepts 0
            res, answers = collect_abstain(a, cell, payload[0], folder, remaining)
            if a.dry_run:
                continue
            spent += res.cost_usd or 0.0
            complete &= res.complete
            if answers is None:
                log(f"{folder.name}: {res.n_persisted}/{res.n_jobs} answers ({res.stopped or 'unanswered jobs'})")
                if res.stopped in ("budget", "interrupted"):
                    break
                continue
            recs["probe"][cell][(cid, v)] = Q.records(payload[0], answers)
            continue
        res = _collect(a, jobs[0].cell, jobs, folder, remaining)
        if a.dry_run:
            continue
        spent += res.cost_usd or 0.0
        complete &= res.complete
        if not res.complete:
            log(f"{folder.name}: {res.n_persisted}/{res.n_jobs} answers ({res.stopped or 'unanswered jobs'})")
            if res.stopped in ("budget", "interrupted"):
                break
            continue
        rec = _load(res)
        if kind == "panel":
            rec["cue"] = cid
            recs["panel"][cell][cid] = rec
        elif kind == "blind":
            recs["blind"][cell] = rec
        elif kind == "probe":
            t = payload[0]
            m = t.merge(rec[["pair_id", "order", "patient"]], on=["pair_id", "order"], how="left")
            recs["probe"][cell][(cid, v)] = Q.records(m, m["patient"])
        else:
            recs["replication"].setdefault(cell, {})[cid] = rec
    if a.dry_run:
        return None
    if not complete:
        log("validity battery incomplete; rerun the same command to resume (answers are never requested twice)")
        return None
    result = VR.analyse(recs, plan, a.draws)
    result["fingerprint"] = fp
    section = VC.section(result)
    section["validity_subject"] = {"provider": a.provider, "model": a.model, "seed": a.seed,
                                   "probe_variants": list(variants)}
    out.mkdir(parents=True, exist_ok=True)
    (out / CARD_JSON).write_text(json.dumps(section, indent=1, ensure_ascii=False) + "\n")
    (out / CARD_HTML).write_text("<!doctype html><html><head><meta charset='utf-8'><title>Construct validity"
                                 "</title></head><body>" + VC.html_section(section) + "</body></html>\n")
    log(f"validity card: {out / CARD_HTML}\n               {out / CARD_JSON}")
    return section


def abstain_subject(a: argparse.Namespace, cell: Cell):
    """The live subject of the abstention variant: the ``choose`` tool with ``patient`` in {0, 1, 2}."""
    subj = C.make_subject(a.provider, a.model, cell, base_url=a.base_url, api_key_env=a.api_key_env,
                          require_key=not a.dry_run)
    if getattr(subj, "answer_format", "tool") == "tool":
        subj.tool = cues.probe_tool_spec(a.provider)
    return subj


def probe_answers_from_ledger(folder: Path, subject, cell: str, table: pd.DataFrame, display: str) -> list:
    """0, 1, 2 or None per probe job, read back from the ledger's answers (patient, else the raw reply)."""
    key, _ = C.request_key(subject)
    ledger = C.Ledger(folder / C.LEDGER_NAME)
    try:
        have = ledger.answers(cell, display, key)
    finally:
        ledger.close()
    got = {}
    for r in have.itertuples(index=False):
        p = r.patient if r.patient in (1, 2) else None
        raw = r.raw if isinstance(r.raw, str) else ""
        if p is None and raw:
            p = cues.probe_answer_from_args(raw)
            p = cues.probe_answer_from_text(raw) if p is None else p
        got[(int(r.pair_id), int(r.ord))] = p
    return [got.get((int(pid), int(o))) for pid, o in zip(table["pair_id"], table["order"])]


def collect_abstain(a: argparse.Namespace, cell: str, table: pd.DataFrame, folder: Path, remaining: float | None):
    """Collect the abstention variant with a live model; ``(result, answers or None)``."""
    jobs, c = probe_jobs(cell, table), parse_cell(cell)
    subj = abstain_subject(a, c)
    res = C.collect(c, a.provider, a.model, folder, display=jobs[0].display, base_url=a.base_url,
                    concurrency=a.concurrency, max_cost=remaining, dry_run=a.dry_run, api_key_env=a.api_key_env,
                    progress=False, jobs=jobs, subject=subj, reask=1)
    if a.dry_run or not res.complete:
        return res, None
    return res, probe_answers_from_ledger(folder, subj, cell, table, jobs[0].display)


PLAN_JSON = "validity_plan.json"


def write_fingerprint(out: Path, fp: dict, log=print) -> None:
    """Write the plan's fingerprint before the first call; a resumed run with another plan is told so."""
    path = out / PLAN_JSON
    out.mkdir(parents=True, exist_ok=True)
    if path.exists():
        old = json.loads(path.read_text())
        if old.get("sha256") != fp["sha256"]:
            log(f"note: the plan differs from the one fingerprinted first ({old.get('sha256', '?')[:12]}); "
                f"the card shows the plan of this run")
            path.with_name(f"validity_plan_{fp['sha256'][:12]}.json").write_text(json.dumps(fp, indent=1) + "\n")
        return
    path.write_text(json.dumps(fp, indent=1) + "\n")


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("--provider", required=True, help="anthropic | openai | simulated")
    ap.add_argument("--model", required=True, help="serving model id; with simulated, a validity subject: "
                    + ", ".join(PRESETS))
    ap.add_argument("--out", required=True)
    ap.add_argument("--pairs", type=int, metavar="N", help="cheaper pass on the first N pairs (marked as such)")
    ap.add_argument("--cells", nargs="+", default=list(VR.CELLS), metavar="CELL", help="cells of the battery")
    ap.add_argument("--cues", nargs="+", metavar="CUE", help="only these cues (default: each cell's panel)")
    ap.add_argument("--variants", nargs="+", default=list(cues.PROBE_VARIANTS), choices=cues.PROBE_VARIANTS)
    ap.add_argument("--max-cost", type=float, help="budget in USD for this run")
    ap.add_argument("--dry-run", action="store_true", help="print the plan; call nothing, write nothing")
    ap.add_argument("--base-url")
    ap.add_argument("--api-key-env")
    ap.add_argument("--concurrency", type=int, default=1)
    ap.add_argument("--preset", help="simulated validity subject (default: --model)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--draws", type=int, default=config.BOOTSTRAP_DRAWS)
    return ap


def main(argv: list[str] | None = None) -> int:
    a = parser().parse_args(argv)
    if a.pairs is not None and a.pairs < 1:
        print("error: --pairs must be at least 1", file=sys.stderr)
        return 2
    try:
        run_battery(a)
    except (C.CollectionError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("error: interrupted; rerun the same command to resume", file=sys.stderr)
        return 130
    return 0
