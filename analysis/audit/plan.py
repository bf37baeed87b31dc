"""The audit's plan: calls, tokens and cost before anything is asked (``--dry-run`` prints it and stops).

Prices come from ``data/prices.csv`` (or ``--prices``). The plan reads the folder's ledger, so a
rerun counts only the calls still to make; :func:`spent_in_ledger` is what the folder already spent.
"""
from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Callable

import pandas as pd

from .. import collection as C
from ..calibration.power import MDE_POWER, mde_pp
from ..population import pairs as cell_pairs
from .batteries import Condition, jobs_of
from .wording import _isnan


def plan_audit(conditions: list[Condition], make: Callable[[], C.Subject], out: str | os.PathLike,
               prices: str | os.PathLike | None = None, price: tuple[float, float] | None = None) -> pd.DataFrame:
    """Per condition: jobs, answers already in the ledger, calls to make, estimated tokens and cost.

    Reads the ledger (``OUT/ledger.sqlite``) if it exists; writes nothing. Columns ``key, cell,
    display, n_jobs, n_in_ledger, n_calls, input_tokens, output_tokens, output_cap_tokens,
    cost_usd, cost_cap_usd`` (cost None when the price is unknown), ``price``, and where the ledger
    holds answers with the server's usage ``n_actual``, ``actual_per_call`` and ``estimated_per_call``
    (input, output tokens per call; the remaining calls are then re-estimated from the usage).
    ``n_pairs`` and ``mde_pp``: the condition's pairs and its minimum detectable excess at them
    (:func:`analysis.calibration.power.mde_pp`, 80% power, an upper bound stated before any call).
    ``price`` (``--price-in/--price-out``) overrides the price table.
    """
    table = C.load_prices(prices)
    ledger = Path(out) / C.LEDGER_NAME
    rows = []
    for cond in conditions:
        subject = make()
        try:
            p = C.plan(jobs_of(cond), subject, ledger, prices=table, price=price)
        finally:
            subject.close()
        rows.append({"key": cond.key, "cell": cond.cell, "display": cond.display, "n_jobs": p.n_jobs,
                     "n_in_ledger": p.n_persisted, "n_calls": p.n_calls, "input_tokens": p.input_tokens,
                     "output_tokens": p.output_tokens, "output_cap_tokens": p.output_cap_tokens,
                     "cost_usd": p.cost_usd, "cost_cap_usd": p.cost_cap_usd, "price": p.price,
                     "n_actual": p.n_actual, "actual_per_call": p.actual_per_call,
                     "estimated_per_call": p.estimated_per_call, "reestimated": p.reestimated})
        n = len(cell_pairs(cond.parsed)) if cond.n_pairs is None else min(len(cell_pairs(cond.parsed)), cond.n_pairs)
        rows[-1].update(n_pairs=n, mde_pp=mde_pp(cond.parsed, cond.display, n))
    return pd.DataFrame(rows)


def mde_line(plan: pd.DataFrame) -> str:
    """The minimum detectable excess of the plan's conditions, in one line ("" without the column)."""
    if "mde_pp" not in plan or plan.empty:
        return ""
    lo, hi = float(plan["mde_pp"].min()), float(plan["mde_pp"].max())
    n = sorted(set(int(x) for x in plan["n_pairs"]))
    pairs = f"{n[0]} pairs" if len(n) == 1 else f"{n[0]}-{n[-1]} pairs"
    rng = f"{lo:.1f} pp" if abs(hi - lo) < 0.05 else f"{lo:.1f}-{hi:.1f} pp"
    return (f"minimum detectable excess at {pairs} per condition: {rng} (PSE - reference, {MDE_POWER:.0%} power, "
            f"95% interval; an upper bound for any model, the reference learner's own variability included); "
            f"smaller true effects will mostly read inconclusive")


def _usd(x) -> str:
    return "unknown (no price for this model: give --prices or --price-in/--price-out)" if x is None or _isnan(x) else f"${x:,.2f}"


def _sum_or_none(s: pd.Series):
    return None if s.isna().any() else float(s.sum())


def describe_plan(plan: pd.DataFrame, provider: str, model: str, battery: str) -> str:
    """The plan as text: one line per condition and the totals."""
    price = plan["price"].iloc[0] if len(plan) else None
    lines = [f"audit plan: battery {battery!r}, {provider}/{model}, {len(plan)} conditions",
             f"  {'condition':<44} {'jobs':>5} {'ledger':>6} {'to call':>7} {'input tok':>11} {'output tok':>10}"]
    for r in plan.itertuples(index=False):
        lines.append(f"  {r.key:<44} {r.n_jobs:>5} {r.n_in_ledger:>6} {r.n_calls:>7} {r.input_tokens:>11,} "
                     f"{r.output_tokens:>10,}")
    cost, cap = _sum_or_none(plan["cost_usd"]), _sum_or_none(plan["cost_cap_usd"])
    lines.append(f"  total: {int(plan['n_jobs'].sum()):,} calls in the battery, {int(plan['n_in_ledger'].sum()):,} "
                 f"already answered, {int(plan['n_calls'].sum()):,} to make")
    lines.append(f"  estimated tokens: input {int(plan['input_tokens'].sum()):,}, output "
                 f"{int(plan['output_tokens'].sum()):,} (at most {int(plan['output_cap_tokens'].sum()):,} at the cap)")
    if cost is None:
        lines.append("  estimated cost: unknown, no price for this model in the price table (give --prices FILE, or "
                     "--price-in 0 --price-out 0 for a local model)")
    else:
        lines.append(f"  estimated cost: {_usd(cost)} (at most {_usd(cap)} if every answer used the output cap); "
                     f"prices: ${price[0]:g} in / ${price[1]:g} out per million tokens")
    line = tokens_line(plan)
    if line:
        lines.append("  " + line)
    if mde_line(plan):
        lines.append("  " + mde_line(plan))
    return "\n".join(lines)


def tokens_per_call(plan: pd.DataFrame) -> dict | None:
    """Estimated against actual (the server's usage) tokens per call, over the ledger's answers that carry usage.

    None when no answer carries usage (simulated subjects, a fresh folder)."""
    if "n_actual" not in plan or not plan["n_actual"].sum():
        return None
    has = plan[plan["n_actual"] > 0]
    w = has["n_actual"].to_numpy()

    def mean(col: str, i: int) -> float:
        return float(sum(v[i] * n for v, n in zip(has[col], w)) / w.sum())

    return {"n_answers": int(w.sum()), "reestimated": bool(has["reestimated"].any()),
            "estimated": {"input": mean("estimated_per_call", 0), "output": mean("estimated_per_call", 1)},
            "actual": {"input": mean("actual_per_call", 0), "output": mean("actual_per_call", 1)}}


def tokens_line(plan: pd.DataFrame) -> str:
    """:func:`tokens_per_call` as one line ("" without usage)."""
    t = tokens_per_call(plan)
    if t is None:
        return ""
    e, a = t["estimated"], t["actual"]
    return (f"tokens per call, estimated vs actual ({t['n_answers']:,} answers with usage): input {e['input']:,.0f} "
            f"vs {a['input']:,.0f}, output {e['output']:,.0f} vs {a['output']:,.0f}"
            + ("; the calls still to make are estimated from the actual usage" if t["reestimated"] else ""))


def spent_in_ledger(out: str | os.PathLike, subject: C.Subject) -> float:
    """USD already spent in this folder's ledger under the subject's request key (0 without a ledger)."""
    path = Path(out) / C.LEDGER_NAME
    if not path.exists():
        return 0.0
    C.check_ledger(path)
    key, _ = C.request_key(subject)
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        (v,) = con.execute("SELECT COALESCE(SUM(cost_usd), 0) FROM answers WHERE request_key = ?", (key,)).fetchone()
    finally:
        con.close()
    return float(v or 0.0)

