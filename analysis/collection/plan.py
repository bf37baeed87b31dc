"""The dry run's plan: calls to make, estimated tokens and cost, and the actual tokens the ledger holds."""
from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .jobs import Job
from .ledger import INVALID_TRANSPORT, VALID, check_ledger
from .pricing import REESTIMATE_AFTER, TokenModel, calibrated_input, cost_of, load_prices, price_for
from .subjects import Subject, request_key


@dataclass
class Plan:
    """What a run would do (the dry run): counts, tokens and cost; the actual tokens where answers exist."""

    cell: str
    display: str
    provider: str
    model: str
    n_jobs: int
    n_persisted: int
    n_reusable: int
    n_calls: int
    input_tokens: int
    output_tokens: int
    output_cap_tokens: int
    price: tuple[float, float] | None
    cost_usd: float | None
    cost_cap_usd: float | None
    #: answers already in the ledger with the server's usage, and their mean tokens per call (actual vs estimated)
    n_actual: int = 0
    actual_per_call: tuple[float, float] | None = None
    estimated_per_call: tuple[float, float] | None = None
    reestimated: bool = False
    #: answers per prompt (``--samples R``): jobs, calls, tokens and cost count every sample
    samples: int = 1

    def describe(self) -> str:
        def usd(x):
            return "unknown (no price for this model; give --prices or --price-in/--price-out)" if x is None \
                else f"${x:,.2f}"

        price = "no price" if self.price is None else f"${self.price[0]:g} / ${self.price[1]:g} per million tokens"
        lines = [
            f"dry run: {self.cell} ({self.display}) with {self.provider}/{self.model}",
            f"  jobs {self.n_jobs}" + (f" ({self.samples} samples per prompt)" if self.samples > 1 else "")
            + f", already in the ledger {self.n_persisted}, reusable identical prompts "
            f"{self.n_reusable}, calls to make {self.n_calls}",
            f"  estimated tokens: input {self.input_tokens:,}, output {self.output_tokens:,} "
            f"(at most {self.output_cap_tokens:,} at the output cap)"
            + (" (re-estimated from the answers' usage)" if self.reestimated else ""),
            f"  estimated cost: {usd(self.cost_usd)} (at most {usd(self.cost_cap_usd)} at the output cap); "
            f"prices: {price}",
        ]
        if self.actual_per_call is not None and self.estimated_per_call is not None:
            (ai, ao), (ei, eo) = self.actual_per_call, self.estimated_per_call
            lines.append(f"  tokens per call, estimated vs actual ({self.n_actual} answers): input {ei:,.0f} vs "
                         f"{ai:,.0f}, output {eo:,.0f} vs {ao:,.0f}")
        return "\n".join(lines)


def plan(jobs: list[Job], subject: Subject, ledger_path: Path | None, *, reuse: bool = False,
         prices: pd.DataFrame | None = None, price: tuple[float, float] | None = None) -> Plan:
    """The dry run: how many calls a run would make, their tokens and cost (reads the ledger, writes nothing).

    Where the ledger already holds answers with the server's usage, the per-call tokens are shown
    against the estimate, and after :data:`REESTIMATE_AFTER` answers the remaining calls are
    estimated from the actual usage."""
    key, _ = request_key(subject)
    rows: list = []
    if ledger_path is not None and Path(ledger_path).exists():
        check_ledger(Path(ledger_path))
        con = sqlite3.connect(f"file:{ledger_path}?mode=ro", uri=True)
        try:
            cols = {r[1] for r in con.execute("PRAGMA table_info(answers)")}
            sample = "sample" if "sample" in cols else "0"  # a schema-1 ledger: every answer is sample 0
            rows = con.execute(f"SELECT cell, display, arm, pair_id, ord, prompt_sha256, {sample}, status, "
                               "input_tokens, output_tokens, n_requests, reused_from FROM answers "
                               "WHERE request_key = ?", (key,)).fetchall()
        finally:
            con.close()
    done = {r[:7] for r in rows if r[7] != INVALID_TRANSPORT}
    shas_done = {(r[5], r[6]) for r in rows if r[7] == VALID}
    todo = [jb for jb in jobs if jb.ledger_key not in done]
    reusable = 0
    calls = todo
    if reuse:  # sample s of a prompt is reused only as sample s
        seen: dict[tuple[str, int], Job] = {}
        for jb in todo:
            k = (jb.prompt_sha256, jb.sample)
            if k in shas_done or k in seen:
                reusable += 1
            else:
                seen[k] = jb
        calls = list(seen.values())
    if price is None:
        prices = load_prices() if prices is None else prices
        price = price_for(prices, subject.provider, subject.model)
    tokens = TokenModel(subject)
    prompt_of = {jb.ledger_key: jb.prompt for jb in jobs}
    n_actual, sums = 0, [0, 0, 0, 0]
    for r in rows:
        p = prompt_of.get(r[:7])
        if p is None or r[11] is not None or not (r[8] or r[9]):
            continue
        n = max(int(r[10] or 1), 1)
        ei, eo, _ = tokens.estimate(p)
        ei = ei if tokens.reestimated else calibrated_input(ei, subject)  # issue 23: per-endpoint prior
        tokens.observe(p, r[8] / n, r[9] / n)
        n_actual += 1
        sums = [sums[0] + r[8] / n, sums[1] + r[9] / n, sums[2] + ei, sums[3] + eo]
    tin = tout = tcap = 0
    for jb in calls:
        a, b, c = tokens.estimate(jb.prompt)
        a = a if tokens.reestimated else calibrated_input(a, subject)
        tin, tout, tcap = tin + a, tout + b, tcap + c
    out = Plan(jobs[0].cell, jobs[0].display, subject.provider, subject.model, len(jobs), len(jobs) - len(todo),
               reusable, len(calls), tin, tout, tcap, price, cost_of(price, tin, tout), cost_of(price, tin, tcap),
               samples=1 + max(jb.sample for jb in jobs))
    if n_actual:
        out.n_actual = n_actual
        out.actual_per_call = (sums[0] / n_actual, sums[1] / n_actual)
        out.estimated_per_call = (sums[2] / n_actual, sums[3] / n_actual)
        out.reestimated = n_actual >= REESTIMATE_AFTER
    return out
