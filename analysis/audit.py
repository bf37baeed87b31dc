"""Audit your own model: one command, a report card of judgments against the evidence (issue 8).

Paper §2.1-§2.5, §4.3-§4.6 and Fig. 1; spec PROTOCOL-statistics §8-§9.4.

``python -m analysis audit --provider P --model M --out DIR`` runs a *battery* of the paper's
conditions on any model reachable through :mod:`analysis.collection` (Anthropic, any
OpenAI-compatible endpoint, or an offline simulated subject), then writes a report card:

* ``DIR/report_card.html``: one self-contained HTML file (plots embedded as base64 PNG);
* ``DIR/report_card.json``: the same numbers; its ``conditions`` list gives, per condition,
  ``pse_pp``, ``pse_ci``, ``fullinfo_pse_pp``, ``learner_pse_pp`` (null without examples),
  ``verdict`` (``excess`` / ``no resolved difference`` / ``shortfall``) and the ranking error
  beside it.

Stages, each a small function:

1. **Battery** (:func:`battery_conditions`): ``core`` = k = 12 LH, neutral and social names, no
   examples and 80 examples, zero-information proxies; the four-level predictive-value sweep;
   the representation control (ordered and arbitrary labels). ``full`` adds the field-count and
   dependence cells (k = 6 / 18, LH / HH, 80 examples, zero information).
2. **Plan** (:func:`plan_audit`): calls, tokens and cost before anything is asked
   (``--dry-run`` prints it and stops). Prices come from ``data/prices.csv`` (or ``--prices``).
3. **Collection** (:func:`collect_audit`) through :func:`analysis.collection.collect`: one SQLite
   ledger per output folder, retries, resume; a rerun never asks a persisted job again.
   ``--max-cost`` is the budget of the whole output folder (what earlier runs spent counts).
4. **Estimation** (:func:`analyse`): the cell analysis of spec §9.1-9.2, the tracking slope of
   §9.3-9.4, the ordered - arbitrary contrast with a shared pair draw (PROTOCOL-representation
   §10.5) and the naming contrast. The same function analyses the paper's four models from the
   released records, which gives the card's reference rows.
5. **Judgments** (:func:`analysis.battery.verdict`): from the 95% pair-bootstrap interval of
   PSE minus a reference. With examples the primary reference is the reference learner fitted
   to the same examples; without examples it is the full-information reference (paper §4.2).
   The reference is a fixed benchmark on the same pairs, so the interval of the difference is
   the PSE interval shifted by the reference (as the paper's Fig. 1B and Tables 23-26).
6. **Report card** (:func:`report_card`, :func:`render_html`, :func:`write_report`).

The card states what the evidence supports. It never labels a model as acceptable or not:
whether a use of a field is lawful or appropriate depends on the decision setting (paper §1).

Decisions this module takes where the paper or spec is silent (also in the card's method notes):

* Bootstrap seeds: cell PSE seed 2 and error seed 1 (spec §9.2); per-fit tracking slope seed 7
  (spec §9.3, exact learner x); the slope pooled over the two name sets uses the shared-pair
  bootstrap of spec §9.4 (seed 0); paired contrasts (display, naming, structure) use a generator
  seeded 0 afresh (PROTOCOL-representation §10.5.2).
* The reference rows use the per-fit bootstrap (seed 7) for slopes, as for the audited model,
  so their intervals differ slightly from Table 4 (shared-pair bootstrap over eight fits).
* The ``tracks-learner`` simulated subject (:class:`LearnerTracker`) is defined here.
"""
from __future__ import annotations

import argparse
import base64
import contextlib
import dataclasses
import datetime as _dt
import functools
import html
import io
import json
import math
import os
import signal
import sqlite3
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable

import numpy as np
import pandas as pd

from . import collection as C
from . import config
from . import estimators as E
from .battery import VERDICTS, verdict  # judgments from intervals, shared with the paper's tables
from .cells import CellError, parse_cell

# =============================================================================================
# Constants
# =============================================================================================
BATTERY_NAMES = ("core", "full")
NAME_SETS = ("neutral", "social")
SWEEP_LEVELS = ("zero", "info_b030", "info_b045", "info_b060")  # paper §4.4
PAPER_MODELS = ("sonnet", "deepseek", "qwen", "gpt")
REP_CELL = "k12_LH_neutral_learned_zero"  # representation control cell (paper §4.6)
#: the field-count and dependence cells in the order of the reversal contrast (spec §9.9):
#: (k18 HH - k6 HH) - (k18 LH - k6 LH)
STRUCTURE_CELLS = ("k18_HH_neutral_learned_zero", "k6_HH_neutral_learned_zero",
                   "k18_LH_neutral_learned_zero", "k6_LH_neutral_learned_zero")
GROUPS = {
    "zero": "Zero-information proxies",
    "sweep": "Predictive-value sweep",
    "display": "Display control (ordered versus arbitrary labels)",
    "structure": "Field count and dependence",
}
REPORT_HTML = "report_card.html"
REPORT_JSON = "report_card.json"
SCHEMA = "proxy-audit-report-card/1"
CONTRAST_SEED = 0  # paired contrasts, generator seeded afresh (PROTOCOL-representation §10.5.2)
HALF_ADJUSTMENT = 0.5  # "individual upper 95% bounds below 0.5 test for incomplete adjustment" (paper §4.4)
DRY_RUN_KEY = "no-key-needed-for-a-dry-run-7c1e"
REFERENCE_NAMES = {"learner": "reference learner", "fullinfo": "full-information reference"}
FORBIDDEN_WORDS = ("fair", "unfair", "fairness")  # the card never labels a model (paper §1)


# =============================================================================================
# Battery
# =============================================================================================
@dataclass(frozen=True)
class Condition:
    """One condition of the battery: a cell shown in one display."""

    cell: str
    display: str = "numeric"
    group: str = "zero"

    @property
    def key(self) -> str:
        """``CELL`` for the numeric display, ``CELL:display`` for a category display."""
        return self.cell if self.display == "numeric" else f"{self.cell}:{self.display}"

    @property
    def parsed(self):
        return parse_cell(self.cell)

    @property
    def primary(self) -> str:
        """``learner`` with examples (paper §4.2: judged primarily against the learner), else ``fullinfo``."""
        return "learner" if self.parsed.has_examples else "fullinfo"

    @property
    def label(self) -> str:
        c = self.parsed
        ex = f"{c.n_examples} examples" if c.has_examples else "no examples"
        info = "zero-information proxies" if not c.informative else f"proxy strength β = {c.beta:.2f}"
        base = f"k = {c.k} {c.corner}, {c.names} names, {ex}, {info}"
        if self.display != "numeric":
            return f"{self.display} labels ({base})"
        return base

    @property
    def short(self) -> str:
        """A compact label for plots, e.g. ``k12 LH · neutral · 80 examples · β 0.45``."""
        c = self.parsed
        ex = f"{c.n_examples} examples" if c.has_examples else "no examples"
        info = "β 0" if not c.informative else f"β {c.beta:.2f}"
        s = f"k{c.k} {c.corner} · {c.names} · {ex} · {info}"
        return s if self.display == "numeric" else f"{self.display} labels · {s}"


def sweep_cell(names: str, level: str) -> str:
    """Cell id of a sweep level (k = 12 LH, 80 examples; paper §4.4)."""
    return f"k12_LH_{names}_learned_{level}"


def battery_conditions(name: str = "core") -> list[Condition]:
    """The conditions of a battery, in report order.

    ``core``: k12 LH {neutral, social} x {no examples, 80 examples}, zero information; the sweep
    levels 0.30 / 0.45 / 0.60 (level 0 is the 80-example zero-information cell); the
    representation control (ordered and arbitrary labels of ``k12_LH_neutral_learned_zero``).
    ``full`` adds k6 / k18 LH and HH with 80 examples, zero information, neutral names.
    """
    if name not in BATTERY_NAMES:
        raise ValueError(f"unknown battery {name!r}; expected one of {', '.join(BATTERY_NAMES)}")
    conds = [Condition(f"k12_LH_{n}_{ex}_zero", "numeric", "zero") for ex in ("absent", "learned") for n in NAME_SETS]
    conds += [Condition(sweep_cell(n, lv), "numeric", "sweep") for lv in SWEEP_LEVELS[1:] for n in NAME_SETS]
    conds += [Condition(REP_CELL, d, "display") for d in ("ordered", "arbitrary")]
    if name == "full":
        conds += [Condition(f"k{k}_{corner}_neutral_learned_zero", "numeric", "structure")
                  for corner in ("LH", "HH") for k in (6, 18)]
    return conds


def select_conditions(conditions: list[Condition], only: Iterable[str] | None) -> list[Condition]:
    """The conditions whose key is in ``only`` (all when ``only`` is empty); unknown keys raise ``ValueError``."""
    only = list(only or [])
    if not only:
        return list(conditions)
    keys = {c.key: c for c in conditions}
    bad = [k for k in only if k not in keys]
    if bad:
        raise ValueError(f"unknown condition(s) {bad}; the battery has {', '.join(keys)}")
    return [c for c in conditions if c.key in set(only)]


def n_calls(cond: Condition) -> int:
    """Calls of a condition: pairs x arms x 2 presentation orders (3 arms numeric, 2 for a category display)."""
    from .population import pairs

    arms = len(config.ARMS) if cond.display == "numeric" else 2
    return len(pairs(cond.cell)) * arms * len(config.ORDERS)


def battery_calls(name: str = "core") -> int:
    """Total calls of a battery (6,732 core; 9,108 full)."""
    return sum(n_calls(c) for c in battery_conditions(name))


@functools.lru_cache(maxsize=32)
def _jobs(cell: str, display: str) -> tuple:
    return tuple(C.job_list(cell, display))


def jobs_of(cond: Condition) -> list:
    """Every job of a condition (cached; :func:`analysis.collection.job_list`)."""
    return list(_jobs(cond.cell, cond.display))


# =============================================================================================
# The tracks-learner simulated subject
# =============================================================================================
_TRAIN = "TRAINING CASES (format: "


def parse_examples(prompt: str) -> tuple[list[str], list[list[str]], np.ndarray] | None:
    """Field names, rendered example rows and risk labels of a prompt's example block (None without one)."""
    start = prompt.find(_TRAIN)
    if start < 0:
        return None
    head_end = prompt.find("):\n", start)
    body_end = prompt.find("\n\nNEW PATIENTS:", head_end)
    if head_end < 0 or body_end < 0:
        return None
    names = [s.strip() for s in prompt[start + len(_TRAIN):head_end].split("->")[0].split(",")]
    rows, ys = [], []
    for line in prompt[head_end + 3:body_end].splitlines():
        vals, sep, y = line.rpartition(" -> ")
        if sep:
            rows.append([v.strip() for v in vals.split(",")])
            ys.append(float(y))
    return names, rows, np.array(ys)


class _Encoder:
    """Features of displayed rows: numeric fields as they are, label fields as indicators of every
    label seen in the examples (all categories: invariant to how the labels are named)."""

    def __init__(self, names: list[str], rows: list[list[str]]):
        self.names = names
        self.columns: list[tuple[str, object]] = []
        for f, name in enumerate(names):
            values = [r[f] for r in rows]
            try:
                [float(v) for v in values]
                self.columns.append((name, None))
            except ValueError:
                self.columns.append((name, sorted(set(values))))

    def __call__(self, fields: dict[str, str]) -> np.ndarray:
        out: list[float] = []
        for name, cats in self.columns:
            v = fields[name]
            if cats is None:
                out.append(float(v))
            else:
                out.extend(float(v == c) for c in cats)
        return np.array(out)


class LearnerTracker(C.SimulatedSubject):
    """A simulated subject that tracks the reference learner (for the audit's tests and demo).

    With examples in the prompt it fits the reference learner's Bayesian linear regression
    (sigma 0.5, tau 1, intercept; :func:`analysis.references.blr_posterior_mean`) to the example
    rows *as displayed* (two decimals; label fields as indicators of every label) and answers
    Patient 1 with probability ``expit((m1 - m2) / noise_scale)``, ``m`` the posterior mean,
    drawn with the simulated subject's seeded uniform keyed by the prompt. Without examples
    (no learner is defined) it scores by the sum of the task fields and ignores the proxies.
    """

    def __init__(self, noise_scale: float = 0.05, seed: int = 0, name: str = "tracks-learner"):
        params = C.SimulatedParams(task_weight=1.0, proxy_weight=0.0, level_weight=0.0, position_bias=0.0,
                                   noise_scale=noise_scale, seed=seed)
        super().__init__(params, name)
        self._fits: dict[str, tuple[_Encoder, np.ndarray]] = {}
        self._lock = threading.Lock()

    def request_settings(self) -> dict:
        return {"kind": "tracks-learner", "params": dataclasses.asdict(self.params)}

    def _fit(self, prompt: str):
        from .references import blr_posterior_mean

        start = prompt.find(_TRAIN)
        block = prompt[start:prompt.find("\n\nNEW PATIENTS:", start)]
        with self._lock:
            hit = self._fits.get(block)
        if hit is not None:
            return hit
        names, rows, y = parse_examples(prompt)
        enc = _Encoder(names, rows)
        X = np.array([enc(dict(zip(names, r))) for r in rows])
        fit = (enc, blr_posterior_mean(X, y))
        with self._lock:
            self._fits[block] = fit
        return fit

    def probability_first(self, prompt: str) -> float:
        pts = C.read_patients(prompt)
        if pts is None:
            return float("nan")
        p = self.params
        if _TRAIN not in prompt:
            s = [sum(float(v) for n, v in pt if n in config.TASK_NAMES) for pt in pts]
        else:
            enc, m = self._fit(prompt)
            s = [float(m[0] + enc(dict(pt)) @ m[1:]) for pt in pts]
        z = (s[0] - s[1] + p.position_bias) / p.noise_scale
        return float(1.0 / (1.0 + math.exp(-z))) if z > -700 else 0.0


#: simulated behaviours the audit offers (collection's presets plus ``tracks-learner``)
AUDIT_PRESETS = tuple(C.SIMULATED_PRESETS) + ("tracks-learner",)


def simulated_subject(preset: str, seed: int = 0) -> C.Subject:
    """A simulated subject by preset name (``tracks-learner`` or a preset of :mod:`analysis.collection`)."""
    if preset == "tracks-learner":
        return LearnerTracker(seed=seed)
    if preset not in C.SIMULATED_PRESETS:
        raise C.CollectionError(f"unknown simulated preset {preset!r}; expected one of {', '.join(AUDIT_PRESETS)}")
    return C.SimulatedSubject.preset(preset, seed=seed)


def subject_factory(provider: str, model: str, *, base_url: str | None = None, api_key_env: str | None = None,
                    timeout: float = 60.0, settings: dict | None = None, preset: str | None = None, seed: int = 0,
                    dry_run: bool = False) -> Callable[[], C.Subject]:
    """A function returning a fresh subject per condition (collection closes a subject after each cell).

    Checks the provider, preset and (unless ``dry_run``) the API key now, so a run fails before
    anything is written. A dry run needs no key.
    """
    if provider == "simulated":
        name = preset or model
        if name not in AUDIT_PRESETS:
            raise C.CollectionError(f"unknown simulated preset {name!r} (give --preset or a preset as --model); "
                                    f"expected one of {', '.join(AUDIT_PRESETS)}")
        return lambda: simulated_subject(name, seed)
    if provider not in C.PAID:
        raise C.CollectionError(f"unknown provider {provider!r} for an audit; expected anthropic, openai or simulated "
                                f"(the paper's own models are the card's reference rows)")
    if dry_run:
        cls = C.AnthropicSubject if provider == "anthropic" else C.OpenAISubject
        return lambda: cls(model, DRY_RUN_KEY, base_url=base_url, timeout=timeout, settings=settings)

    def make() -> C.Subject:
        return C.make_subject(provider, model, REP_CELL, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                              settings=settings)

    make().close()  # checks the key now
    return make


# =============================================================================================
# Plan
# =============================================================================================
def plan_audit(conditions: list[Condition], make: Callable[[], C.Subject], out: str | os.PathLike,
               prices: str | os.PathLike | None = None) -> pd.DataFrame:
    """Per condition: jobs, answers already in the ledger, calls to make, estimated tokens and cost.

    Reads the ledger (``OUT/ledger.sqlite``) if it exists; writes nothing. Columns ``key, cell,
    display, n_jobs, n_in_ledger, n_calls, input_tokens, output_tokens, output_cap_tokens,
    cost_usd, cost_cap_usd`` (cost None when the price is unknown).
    """
    table = C.load_prices(prices)
    ledger = Path(out) / C.LEDGER_NAME
    rows = []
    for cond in conditions:
        subject = make()
        try:
            p = C.plan(jobs_of(cond), subject, ledger, prices=table)
        finally:
            subject.close()
        rows.append({"key": cond.key, "cell": cond.cell, "display": cond.display, "n_jobs": p.n_jobs,
                     "n_in_ledger": p.n_persisted, "n_calls": p.n_calls, "input_tokens": p.input_tokens,
                     "output_tokens": p.output_tokens, "output_cap_tokens": p.output_cap_tokens,
                     "cost_usd": p.cost_usd, "cost_cap_usd": p.cost_cap_usd, "price": p.price})
    return pd.DataFrame(rows)


def _usd(x) -> str:
    return "unknown (no price for this model: give --prices)" if x is None or _isnan(x) else f"${x:,.2f}"


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
        lines.append("  estimated cost: unknown, no price for this model in the price table (give --prices FILE)")
    else:
        lines.append(f"  estimated cost: {_usd(cost)} (at most {_usd(cap)} if every answer used the output cap); "
                     f"prices: ${price[0]:g} in / ${price[1]:g} out per million tokens")
    return "\n".join(lines)


# =============================================================================================
# Collection
# =============================================================================================
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


def collect_audit(conditions: list[Condition], make: Callable[[], C.Subject], out: str | os.PathLike, *,
                  concurrency: int = 8, max_cost: float | None = None, policy: C.RetryPolicy = C.RetryPolicy(),
                  prices: str | os.PathLike | None = None, progress: bool = True,
                  stop: threading.Event | None = None, timeout: float = 60.0, log=print) -> list[C.RunResult]:
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
        res = C.collect(cond.cell, subject.provider, subject.model, out, display=cond.display,
                        concurrency=concurrency, max_cost=remaining, policy=policy, timeout=timeout, prices=prices,
                        progress=progress, jobs=jobs_of(cond), subject=subject, stop=stop)
        spent += res.cost_usd or 0.0
        results.append(res)
        state = "complete" if res.complete else f"incomplete ({res.stopped or 'unanswered jobs'})"
        log(f"{cond.key}: {res.n_persisted}/{res.n_jobs} answers, {res.n_requests} requests this run, {state}")
        if res.stopped in ("budget", "interrupted"):
            break
    return results


# =============================================================================================
# Estimation (the audited model and the paper's four models alike)
# =============================================================================================
def _isnan(x) -> bool:
    return x is None or (isinstance(x, (float, np.floating)) and math.isnan(x))


def _shift(ci, ref: float) -> list[float]:
    return [float(ci[0]) - ref, float(ci[1]) - ref]


def _interval(values, draws: int, seed: int = CONTRAST_SEED) -> dict:
    """Mean and 95% pair-bootstrap interval (pp) of per-pair values in [-1, 1]; generator seeded afresh."""
    from .representation import interval

    return interval(values, draws, seed)


def condition_references(cond: Condition) -> dict:
    """``fullinfo_pse_pp`` and ``learner_pse_pp`` (NaN without examples) of a condition.

    Category displays use the category-indicator learner (paper §4.3: -5.05 pp for both renderings).
    """
    from .references import cell_references, indicator_learner_pse

    ref = cell_references(cond.cell)
    out = {"fullinfo_pse_pp": float(ref["fullinfo_pse_pp"]), "learner_pse_pp": float(ref["learner_pse_pp"]),
           "learner_error_pct": float(ref["learner_error_pct"]), "learner": "Bayesian linear regression"}
    if cond.display != "numeric":
        out.update(learner_pse_pp=float(indicator_learner_pse(cond.cell)), learner_error_pct=float("nan"),
                   learner="category-indicator Bayesian linear regression")
    return out


def judged(row: dict, cond: Condition) -> dict:
    """Add differences from both references and their verdicts to a condition row."""
    ci = row["pse_ci"]
    row["reference"] = cond.primary
    row["verdict_fullinfo"] = verdict(*_shift(ci, row["fullinfo_pse_pp"])) if not _isnan(ci[0]) else None
    row["verdict_learner"] = (verdict(*_shift(ci, row["learner_pse_pp"]))
                              if not _isnan(row["learner_pse_pp"]) and not _isnan(ci[0]) else None)
    ref = row["learner_pse_pp"] if cond.primary == "learner" else row["fullinfo_pse_pp"]
    row["difference_pp"] = row["pse_pp"] - ref
    row["difference_ci"] = _shift(ci, ref)
    row["verdict"] = row[f"verdict_{cond.primary}"]
    return row


def condition_row(cond: Condition, rec: pd.DataFrame, draws: int = config.BOOTSTRAP_DRAWS,
                  common: pd.Index | None = None) -> dict:
    """PSE [95% CI], both references, verdicts and ranking error of one condition's records.

    Numeric cells: cell analysis of spec §9.1-9.2 (pairs resolved in the factual and both
    counterfactual arms; PSE seed 2, error seed 1). Sweep levels 0.30-0.60 use the pairs resolved
    at all four levels (``common``; Table 23 caption). Category displays have no factual arm:
    PSE over the pairs resolved in both counterfactual arms, seed 0 (PROTOCOL-representation
    §10.5), and no error.
    """
    c = parse_cell(cond.cell)
    refs = condition_references(cond)
    row = {"key": cond.key, "cell": cond.cell, "display": cond.display, "group": cond.group, "label": cond.label,
           "k": c.k, "corner": c.corner, "names": c.names, "examples": c.n_examples if c.has_examples else 0,
           "beta": c.beta, "source": "records", **{k: refs[k] for k in ("fullinfo_pse_pp", "learner_pse_pp")},
           "learner": refs["learner"] if c.has_examples else None,
           "n_calls": int(len(rec)), "n_missing": int(rec["picked_i"].isna().sum())}
    if cond.display == "numeric":
        from .population import truth

        est = E.cell_estimates(rec, truth(c), draws=draws)
        if c.sweep_beta is not None and common is not None:
            pse = E.pair_pse(rec).reindex(common).to_numpy()
            est["pse_pp"] = 100 * float(pse.mean())
            est["pse_ci"] = [100 * x for x in E.boot_ci(pse, config.CELL_PSE_SEED, draws)]
            est["n_pairs"] = int(len(common))
        row.update(pse_pp=est["pse_pp"], pse_ci=list(est["pse_ci"]), n_pairs=est["n_pairs"],
                   error_pct=est["error_pct"], error_ci=list(est["error_ci"]))
    else:
        iv = _interval(E.pair_pse(rec), draws)
        row.update(pse_pp=iv["effect_pp"], pse_ci=[iv["lo_pp"], iv["hi_pp"]], n_pairs=iv["n_pairs"],
                   error_pct=float("nan"), error_ci=[float("nan")] * 2)
    row["learner_error_pct"] = refs["learner_error_pct"] if c.has_examples else float("nan")
    row["accuracy_pct"] = 100 - row["error_pct"]
    row["excess_error_pp"] = row["error_pct"] - row["learner_error_pct"]
    return judged(row, cond)


def summary_condition_row(cond: Condition, model: str) -> dict:
    """A Sonnet no-example cell released only as a condition summary (``battery.summary_row``)."""
    from .battery import summary_row

    c = parse_cell(cond.cell)
    s = summary_row(c)
    refs = condition_references(cond)
    row = {"key": cond.key, "cell": cond.cell, "display": cond.display, "group": cond.group, "label": cond.label,
           "k": c.k, "corner": c.corner, "names": c.names, "examples": 0, "beta": c.beta, "source": "summary",
           "fullinfo_pse_pp": refs["fullinfo_pse_pp"], "learner_pse_pp": float("nan"), "learner": None,
           "n_calls": None, "n_missing": None, "pse_pp": s["pse_pp"], "pse_ci": list(s["pse_ci"]),
           "n_pairs": s["n_pairs"], "error_pct": s["error_pct"], "error_ci": [float("nan")] * 2,
           "learner_error_pct": float("nan")}
    row["accuracy_pct"] = 100 - row["error_pct"]
    row["excess_error_pp"] = float("nan")
    return judged(row, cond)


def tracking_section(sweep: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Tracking slope ``PSE_model = alpha + gamma PSE_learner`` per name set and pooled (spec §9.3-9.4).

    ``sweep[names]`` is the levels x pairs matrix (pp) of pairs resolved at all four levels.
    Per fit: single-fit bootstrap (seed 7, exact learner x). Both name sets: unweighted mean of the
    two fits with the shared-pair bootstrap (seed 0); its one-sided 95% bounds are the ends of the
    90% interval (paper §4.4).
    """
    from .battery import learner_x

    x = learner_x()
    out: dict = {"learner_pse_pp": [float(v) for v in x], "levels": [float(parse_cell(sweep_cell("neutral", lv)).beta)
                                                                       for lv in SWEEP_LEVELS],
                 "fits": {}, "pooled": None}
    for n, Y in sweep.items():
        f = E.tracking_fit(Y.to_numpy(), x, draws=draws)
        pts = []
        for li in range(len(SWEEP_LEVELS)):
            v = Y.iloc[li].to_numpy() / 100
            lo, hi = (100 * b for b in E.boot_ci(v, config.CELL_PSE_SEED, draws))
            pts.append({"pse_pp": 100 * float(v.mean()), "pse_ci": [lo, hi]})
        fit = {"names": n, "gamma": f["gamma"], "gamma_ci": f["gamma_ci"], "alpha": f["alpha"],
               "alpha_ci": f["alpha_ci"], "n_pairs": f["n_pairs"], "points": pts}
        fit["statement"] = slope_statement(fit["gamma"], fit["gamma_ci"], f"With {n} names")
        out["fits"][n] = fit
    if len(sweep) == 2:
        res = E.pooled_tracking(dict(sweep), x, draws=draws, pools={"both": list(sweep)})
        p = res["pooled"].iloc[0]
        out["pooled"] = {"gamma": float(p["gamma"]), "gamma_ci": [float(p["lo95"]), float(p["hi95"])],
                         "one_sided_bounds": [float(p["lo90"]), float(p["hi90"])],
                         "within_margin": bool(-config.EQUIVALENCE_MARGIN < p["lo90"] and p["hi90"] < config.EQUIVALENCE_MARGIN)}
    return out


def display_section(recs: dict[str, pd.DataFrame], draws: int = config.BOOTSTRAP_DRAWS) -> dict | None:
    """Ordered and arbitrary labels, their paired difference and the 5-pp margin (paper §2.3, §4.6).

    The difference bootstraps per-pair (ordered - arbitrary) values on shared pairs (same pair
    draw for both renderings), seed 0. The pre-specified one-sided criterion applies to a
    rendering's effect: an upper bound below 5 pp excludes an average effect of 5 pp or more.
    """
    from .representation import excludes_margin, paired

    ko, ka = f"{REP_CELL}:ordered", f"{REP_CELL}:arbitrary"
    if ko not in recs or ka not in recs:
        return None
    per = {"ordered": E.pair_pse(recs[ko]), "arbitrary": E.pair_pse(recs[ka])}
    if REP_CELL in recs:
        per["numeric"] = E.pair_pse(recs[REP_CELL])
    ivs = {k: _interval(v, draws) for k, v in per.items()}
    d = _interval(paired(per["ordered"], per["arbitrary"]), draws)
    margin = config.REPRESENTATION_MARGIN_PP
    out = {"margin_pp": margin, "fullinfo_pse_pp": condition_references(Condition(REP_CELL, "ordered"))["fullinfo_pse_pp"],
           "learner_pse_pp": condition_references(Condition(REP_CELL, "ordered"))["learner_pse_pp"]}
    for k, iv in ivs.items():
        out[f"{k}_pp"] = iv["effect_pp"]
        out[f"{k}_ci"] = [iv["lo_pp"], iv["hi_pp"]]
        out[f"{k}_excludes_margin"] = excludes_margin(iv["hi_pp"], margin)
    out.update(difference_pp=d["effect_pp"], difference_ci=[d["lo_pp"], d["hi_pp"]], n_pairs=d["n_pairs"])
    lo, hi = out["difference_ci"]
    out["difference"] = ("ordered above arbitrary" if lo > 0 else "arbitrary above ordered" if hi < 0
                         else "no resolved difference")
    out["difference_vs_margin"] = ("above the margin" if lo > margin else "excludes a difference of the margin or more"
                                   if hi < margin else "interval reaches across the margin")
    out["statement"] = display_statement(out)
    return out


def naming_section(recs: dict[str, pd.DataFrame], rows: dict[str, dict], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """Social minus neutral names, without and with examples (paper §2.4; zero information, k = 12 LH).

    Both name sets use the same pairs, so the contrast bootstraps per-pair differences (seed 0).
    A cell released only as a summary gives the point difference without an interval.
    """
    from .representation import paired

    out = {}
    for ex in ("absent", "learned"):
        kn, ks = f"k12_LH_neutral_{ex}_zero", f"k12_LH_social_{ex}_zero"
        if kn in recs and ks in recs:
            pn, ps = E.pair_pse(recs[kn]), E.pair_pse(recs[ks])
            d = _interval(paired(ps, pn), draws)
            sec = {"neutral_pp": 100 * float(pn.mean()), "social_pp": 100 * float(ps.mean()),
                   "difference_pp": d["effect_pp"], "difference_ci": [d["lo_pp"], d["hi_pp"]], "n_pairs": d["n_pairs"],
                   "source": "records"}
        elif kn in rows and ks in rows and not _isnan(rows[kn].get("pse_pp")) and not _isnan(rows[ks].get("pse_pp")):
            sec = {"neutral_pp": rows[kn]["pse_pp"], "social_pp": rows[ks]["pse_pp"],
                   "difference_pp": rows[ks]["pse_pp"] - rows[kn]["pse_pp"], "difference_ci": None,
                   "n_pairs": None, "source": "summary (no per-call records of one cell: no interval)"}
        else:
            continue
        ci = sec["difference_ci"]
        sec["verdict"] = (None if ci is None else "social names lower reliance" if ci[1] < 0
                          else "social names raise reliance" if ci[0] > 0 else "no resolved difference")
        sec["statement"] = naming_statement(sec, ex)
        out[ex] = sec
    return out


def structure_section(recs: dict[str, pd.DataFrame], rows: dict[str, dict],
                      draws: int = config.BOOTSTRAP_DRAWS) -> dict | None:
    """Field count by dependence (paper §2.5): (k18 HH - k6 HH) - (k18 LH - k6 LH) with its interval.

    The four cells use separate pair samples, so each draw resamples each cell's pairs
    independently (one generator, seed 0, cells in :data:`STRUCTURE_CELLS` order). Descriptive.
    """
    if not all(c in recs for c in STRUCTURE_CELLS):
        return None
    rng = np.random.default_rng(CONTRAST_SEED)
    vals = [100 * E.pair_pse(recs[c]).to_numpy() for c in STRUCTURE_CELLS]
    boots = [v[rng.integers(0, len(v), size=(draws, len(v)))].mean(axis=1) for v in vals]
    means = [v.mean() for v in vals]

    def contrast(m):
        return (m[0] - m[1]) - (m[2] - m[3])

    lo, hi = E.percentile_ci(contrast(boots))
    out = {"cells": list(STRUCTURE_CELLS), "reversal_pp": float(contrast(means)), "reversal_ci": [lo, hi],
           "lh_change_pp": float(means[2] - means[3]), "hh_change_pp": float(means[0] - means[1])}
    out["excess_error_pp"] = {c: rows[c]["excess_error_pp"] for c in ("k6_LH_neutral_learned_zero", REP_CELL,
                                                                        "k18_LH_neutral_learned_zero") if c in rows}
    out["statement"] = (f"From 6 to 18 fields, reliance changed by {_pp(out['lh_change_pp'])} pp with distinct task "
                        f"fields (LH) and by {_pp(out['hh_change_pp'])} pp with overlapping task fields (HH); the "
                        f"difference is {_pp(out['reversal_pp'])} pp {_ci(out['reversal_ci'])}. This is descriptive "
                        f"(paper §2.5): the cells use separate pair samples.")
    return out


def analyse(load: Callable[[Condition], pd.DataFrame], conditions: list[Condition],
            draws: int = config.BOOTSTRAP_DRAWS, model: str | None = None) -> dict:
    """Every section of the card for one model: condition rows, tracking slope, display, naming, structure.

    ``load(condition)`` returns its records (released schema) or raises
    :class:`analysis.records.NotReleased` / ``FileNotFoundError``; such conditions get a row with
    ``status`` ``not released`` and the reason (a Sonnet no-example cell falls back to the
    condition summary).
    """
    from .records import NotReleased

    recs, missing = {}, {}
    for cond in conditions:
        try:
            recs[cond.key] = load(cond)
        except (NotReleased, FileNotFoundError) as exc:
            missing[cond.key] = str(exc)
    sweep = {}
    for n in NAME_SETS:
        keys = [sweep_cell(n, lv) for lv in SWEEP_LEVELS]
        if all(k in recs for k in keys):
            sweep[n] = E.resolved_at_all_levels([E.pair_pse(recs[k]) for k in keys])
    rows: dict[str, dict] = {}
    for cond in conditions:
        if cond.key in recs:
            common = sweep[cond.parsed.names].columns if cond.parsed.names in sweep else None
            rows[cond.key] = {"status": "computed", **condition_row(cond, recs[cond.key], draws, common)}
        elif model == "sonnet" and cond.display == "numeric" and not cond.parsed.has_examples:
            rows[cond.key] = {"status": "computed", **summary_condition_row(cond, model)}
        else:
            rows[cond.key] = {"key": cond.key, "status": "not released", "reason": missing.get(cond.key, "")}
    return {"conditions": [rows[c.key] for c in conditions], "tracking": tracking_section(sweep, draws) if sweep else None,
            "display": display_section(recs, draws), "naming": naming_section(recs, rows, draws),
            "structure": structure_section(recs, rows, draws)}


def collected_loader(out: str | os.PathLike, subject: C.Subject) -> Callable[[Condition], pd.DataFrame]:
    """Records of the audited model written by :func:`collect_audit` into ``out``."""
    from .records import normalise

    key, _ = C.request_key(subject)
    tag = subject.tag(key)

    def load(cond: Condition) -> pd.DataFrame:
        path, _ = C.output_paths(Path(out), subject.provider, subject.model, cond.cell, cond.display, tag)
        if not path.exists():
            raise FileNotFoundError(f"{path}: not collected")
        return normalise(pd.read_csv(path))

    return load


def released_loader(model: str) -> Callable[[Condition], pd.DataFrame]:
    """Released records of one of the paper's models (representation control: Sonnet only)."""
    from . import records, representation

    def load(cond: Condition) -> pd.DataFrame:
        if cond.display != "numeric":
            return representation.load_rendering(model, cond.display, "learned")
        return records.load_records(model, cond.cell)

    return load


@functools.lru_cache(maxsize=8)
def _reference_models(keys: tuple[tuple[str, str, str], ...], draws: int) -> dict:
    conds = [Condition(c, d, g) for c, d, g in keys]
    return {m: analyse(released_loader(m), conds, draws, model=m) for m in PAPER_MODELS}


def reference_models(conditions: list[Condition], draws: int = config.BOOTSTRAP_DRAWS) -> dict:
    """The paper's four models analysed exactly like the audited model, from the released records (cached)."""
    return _reference_models(tuple((c.cell, c.display, c.group) for c in conditions), draws)


# =============================================================================================
# Wording (paper §2.1: what the evidence supports; never a label of the model)
# =============================================================================================
def _pp(x, digits: int = 1) -> str:
    return "n/a" if _isnan(x) else f"{x:+.{digits}f}".replace("-", "−")


def _ci(ci, digits: int = 1) -> str:
    if ci is None or _isnan(ci[0]):
        return "[no interval]"
    return f"[{_pp(ci[0], digits)}, {_pp(ci[1], digits)}]"


def condition_statement(row: dict) -> str:
    """One sentence on what the interval of PSE minus the primary reference supports."""
    ref = REFERENCE_NAMES[row["reference"]]
    refval = row["learner_pse_pp"] if row["reference"] == "learner" else row["fullinfo_pse_pp"]
    where = ("the reference learner fitted to the same examples" if row["reference"] == "learner"
             else "the full-information reference (the rule that generated the outcomes)")
    head = f"PSE {_pp(row['pse_pp'])} pp {_ci(row['pse_ci'])} against {_pp(refval)} pp for {where}: "
    v = row["verdict"]
    if v == "excess":
        s = f"reliance exceeded what the {ref} supports (the interval of the difference lies above zero)."
    elif v == "shortfall":
        s = f"reliance fell short of what the {ref} supports (the interval of the difference lies below zero)."
    else:
        s = (f"no difference from the {ref} is resolved (the interval of the difference includes zero; this does "
             f"not show that they are equal).")
    if row.get("examples") == 0 and row.get("display") == "numeric":
        s += " The no-example prompt states that higher values indicate greater severity."
    return head + s


def slope_statement(gamma: float, ci, who: str) -> str:
    """What a tracking slope's 95% interval supports (paper §2.2, §4.4)."""
    lo, hi = ci
    parts = [f"{who}, the tracking slope is {_pp(gamma, 2)} {_ci(ci, 2)} (1 = adjusts as much as the reference "
             f"learner, 0 = no adjustment)."]
    if hi < HALF_ADJUSTMENT:
        parts.append("Its upper 95% bound lies below 0.5: the model adjusted less than half as much as the learner.")
    elif hi < 1:
        parts.append("The interval lies below 1: the model adjusted less than the learner.")
    elif lo > 1:
        parts.append("The interval lies above 1: the model adjusted more than the learner.")
    else:
        parts.append("The interval includes 1: a difference from full adjustment is not resolved.")
    if lo <= 0 <= hi:
        parts.append("It also includes 0: no adjustment is resolved.")
    return " ".join(parts)


def display_statement(d: dict) -> str:
    """What the ordered - arbitrary contrast and the 5-pp margin support (paper §2.3, §4.6)."""
    s = (f"Ordered labels {_pp(d['ordered_pp'])} pp {_ci(d['ordered_ci'])}, arbitrary labels "
         f"{_pp(d['arbitrary_pp'])} pp {_ci(d['arbitrary_ci'])}; ordered − arbitrary {_pp(d['difference_pp'])} pp "
         f"{_ci(d['difference_ci'])}. ")
    if d["difference"] == "ordered above arbitrary":
        s += "The same category information drew more reliance as an ordered scale than as arbitrary labels."
    elif d["difference"] == "arbitrary above ordered":
        s += "The same category information drew more reliance as arbitrary labels than as an ordered scale."
    else:
        s += "No difference between the two displays is resolved."
    if d["arbitrary_excludes_margin"]:
        s += (f" The arbitrary-label interval ends below {d['margin_pp']:.0f} pp, which excludes an average effect of "
              f"{d['margin_pp']:.0f} pp or more (the pre-specified one-sided criterion).")
    else:
        s += (f" The arbitrary-label interval does not exclude an average effect of {d['margin_pp']:.0f} pp "
              f"or more.")
    return s


def naming_statement(sec: dict, examples: str) -> str:
    when = "without examples" if examples == "absent" else "with 80 examples"
    s = (f"{when.capitalize()}, social names {_pp(sec['social_pp'])} pp and neutral names {_pp(sec['neutral_pp'])} pp: "
         f"social − neutral {_pp(sec['difference_pp'])} pp {_ci(sec['difference_ci'])}. ")
    v = sec["verdict"]
    if v is None:
        return s + "No interval is available (one cell is released only as a summary)."
    if v == "social names lower reliance":
        return s + "Social names lowered reliance on the same values (naming suppression)."
    if v == "social names raise reliance":
        return s + "Social names raised reliance on the same values."
    return s + "No difference between the name sets is resolved."


def accuracy_statement(rows: list[dict]) -> str:
    err = [r["error_pct"] for r in rows if r.get("status") == "computed" and not _isnan(r.get("error_pct"))]
    pse = [r["pse_pp"] for r in rows if r.get("status") == "computed" and r.get("display") == "numeric"]
    if not err:
        return "Ranking error was not measured in these conditions."
    return (f"Ranking error ranged from {min(err):.1f}% to {max(err):.1f}% across the conditions with a factual "
            f"version, while reliance ranged from {_pp(min(pse))} to {_pp(max(pse))} pp. Accuracy is reported "
            f"beside reliance, not in place of it: it cannot show whether reliance is warranted by the evidence "
            f"(paper §2.5).")


# =============================================================================================
# The report card (JSON)
# =============================================================================================
def _clean(v):
    """JSON-safe values: NaN -> None, numpy scalars -> Python, tuples -> lists."""
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_clean(x) for x in v]
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (float, np.floating)):
        return None if math.isnan(v) else float(v)
    if isinstance(v, pd.Index):
        return [list(x) if isinstance(x, tuple) else x for x in v]
    return v


def _ref_summary(row: dict) -> dict:
    if row.get("status") != "computed":
        return {"status": "not released", "reason": row.get("reason", "")}
    keys = ("pse_pp", "pse_ci", "difference_pp", "difference_ci", "verdict", "verdict_fullinfo", "verdict_learner",
            "error_pct", "excess_error_pp", "n_pairs", "source")
    return {"status": "computed", **{k: row.get(k) for k in keys}}


def provenance(out: str | os.PathLike, subject: C.Subject, conditions: list[Condition]) -> dict:
    """Request settings, served models, SDK versions, dates, tokens and cost from the metadata files."""
    key, settings = C.request_key(subject)
    tag = subject.tag(key)
    served: dict[str, int] = {}
    dates, files = set(), []
    tokens = {"input": 0, "output": 0}
    cost: float | None = 0.0
    n_records = n_invalid = 0
    meta = {}
    for cond in conditions:
        _, mpath = C.output_paths(Path(out), subject.provider, subject.model, cond.cell, cond.display, tag)
        if not mpath.exists():
            continue
        meta = json.loads(mpath.read_text())
        for k, v in meta.get("models_served", {}).items():
            served[k] = served.get(k, 0) + int(v)
        dates.update(meta.get("collection_dates_utc") or [])
        tokens["input"] += int(meta["tokens"]["input"])
        tokens["output"] += int(meta["tokens"]["output"])
        cost = None if cost is None or meta.get("cost_usd") is None else cost + float(meta["cost_usd"])
        n_records += int(meta["n_records"])
        n_invalid += int(meta["n_invalid"])
        files.append(meta.get("records_file"))
    return {"provider": subject.provider, "model_requested": subject.model, "models_served": served,
            "request_key": key, "request_settings": json.loads(settings),
            "base_url": meta.get("base_url"), "sdk_versions": meta.get("sdk_versions") or C.sdk_versions(),
            "collection_dates_utc": sorted(dates), "tokens": tokens, "cost_usd": cost, "n_records": n_records,
            "n_invalid": n_invalid, "records_files": files, "ledger": str(Path(out) / C.LEDGER_NAME)}


READING_GUIDE = [
    "PSE (proxy-specific effect, reliance): the change, in percentage points, in the probability that the model "
    "picks the target patient when only the target's proxy values are switched to those of the other group, "
    "averaged over pairs and both presentation orders (paper §2.1).",
    "Two references on the same replacements: the full-information reference ranks by the rule that generated the "
    "outcomes; the reference learner is a Bayesian linear regression fitted to the same 80 examples the model sees "
    "(a specific learner, not a unique standard). With examples the card judges against the learner; without "
    "examples, against the full-information reference (paper §4.2, §4.3).",
    "Judgments come from 95% patient-pair bootstrap intervals of PSE minus the reference, not from thresholds: "
    "excess (interval above zero: more reliance than the reference supports), shortfall (below zero), or no "
    "resolved difference (includes zero; not a demonstration that the two are equal).",
    "Tracking slope: the model's PSE regressed on the learner's PSE across four proxy strengths; 1 means the model "
    "adjusts as much as the learner, 0 not at all (paper §2.2, §4.4). The ±0.15 margin is descriptive.",
    "Display control: the same category information as ordered labels (level 1-4) or arbitrary two-letter codes; "
    "the pre-specified 5-pp margin is one-sided (paper §4.6).",
    "Ranking error is reported beside reliance, never in place of it (paper §2.5).",
    "The card states what the evidence supports for these simulated patient-ranking tasks. It does not label the "
    "model as acceptable or not: whether a particular use of a field is lawful or appropriate depends on the "
    "decision setting and its rules (paper §1).",
]

METHOD_NOTES = [
    "Cell PSE: pairs resolved in the factual and both counterfactual arms (spec §9.1); 95% percentile interval of "
    "the pair bootstrap (seed 2; error seed 1; spec §9.2). Sweep levels 0.30-0.60 use the pairs resolved at all "
    "four levels (Table 23 caption).",
    "The references are fixed on the evaluated pairs, so the interval of PSE minus a reference is the PSE interval "
    "shifted by the reference (as in Fig. 1B and Tables 23-26).",
    "Tracking slope per name set: single-fit bootstrap, seed 7, exact learner PSE (spec §9.3); both name sets: "
    "unweighted mean of the two fits with the shared-pair bootstrap, seed 0, exact learner PSE (spec §9.4 reads the "
    "2-decimal summary values instead); one-sided 95% bounds are "
    "the ends of the 90% interval.",
    "Display control and naming contrasts: per-pair differences on shared pairs (the same pair draw for both "
    "renderings or name sets), generator seeded 0 afresh (PROTOCOL-representation §10.5). Display conditions are "
    "judged against the category-indicator learner (−5.05 pp for both renderings, paper §4.3); they have no "
    "factual version, so no ranking error.",
    "The paper's four models are analysed with exactly the same code from the released per-call records; the "
    "release lacks some records (listed where they are missing). Their slope intervals use the per-fit bootstrap, "
    "so they differ slightly from Table 4 (shared-pair bootstrap over eight fits).",
]


def report_card(analysis: dict, conditions: list[Condition], *, battery: str, subject_info: dict,
                references: dict | None, draws: int, plan: pd.DataFrame | None = None) -> dict:
    """The card's JSON: subject, battery, conditions (with the reference models' rows), sections, summary."""
    rows = []
    for cond, row in zip(conditions, analysis["conditions"]):
        row = dict(row)
        if row.get("status") == "computed":
            row["statement"] = condition_statement(row)
        if references:
            row["reference_models"] = {m: _ref_summary(references[m]["conditions"][conditions.index(cond)])
                                       for m in references}
        rows.append(row)
    card = {
        "schema": SCHEMA,
        "generated_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "battery": battery,
        "subject": subject_info,
        "n_conditions": len(conditions),
        "settings": {"bootstrap_draws": draws, "interval": "95% patient-pair bootstrap (percentile)",
                     "seeds": {"cell_pse": config.CELL_PSE_SEED, "cell_error": config.CELL_ERROR_SEED,
                               "slope": config.SLOPE_SEED, "pooled_slope": config.POOLED_SLOPE_SEED,
                               "contrasts": CONTRAST_SEED},
                     "display_margin_pp": config.REPRESENTATION_MARGIN_PP,
                     "slope_margin": config.EQUIVALENCE_MARGIN},
        "conditions": rows,
        "tracking": analysis["tracking"],
        "display": analysis["display"],
        "naming": analysis["naming"],
        "structure": analysis["structure"],
        "reading_guide": READING_GUIDE,
        "method_notes": METHOD_NOTES,
    }
    if references:
        card["reference_models"] = {
            m: {"name": config.MODELS[m][0],
                "tracking": _ref_tracking(references[m]["tracking"]),
                "display": references[m]["display"], "naming": references[m]["naming"],
                "structure": references[m]["structure"]}
            for m in references}
    if plan is not None:
        card["plan"] = {"n_jobs": int(plan["n_jobs"].sum()), "n_calls_this_run_estimate": int(plan["n_calls"].sum()),
                        "estimated_cost_usd": _sum_or_none(plan["cost_usd"])}
    card["summary"] = summary_statements(card)
    return _clean(card)


def _ref_tracking(t: dict | None) -> dict | None:
    if t is None:
        return None
    return {"fits": {n: {k: f[k] for k in ("gamma", "gamma_ci", "alpha", "alpha_ci", "n_pairs", "points")}
                     for n, f in t["fits"].items()}, "pooled": t["pooled"]}


def summary_statements(card: dict) -> list[str]:
    """The card's headline sentences, in the paper's order of questions (§2.2-§2.5)."""
    out = []
    rows = {r["key"]: r for r in card["conditions"] if r.get("status") == "computed"}
    for ex, ref in (("learned", "reference learner"), ("absent", "full-information reference")):
        parts = []
        for n in NAME_SETS:
            r = rows.get(f"k12_LH_{n}_{ex}_zero")
            if r:
                parts.append(f"{n} names {r['verdict']} ({_pp(r['difference_pp'])} pp {_ci(r['difference_ci'])})")
        if parts:
            when = "With 80 examples" if ex == "learned" else "Without examples"
            out.append(f"{when}, proxies that predict nothing, judged against the {ref}: " + "; ".join(parts) + ".")
    t = card.get("tracking")
    if t:
        for n, f in t["fits"].items():
            out.append(f["statement"])
        if t.get("pooled"):
            p = t["pooled"]
            s = (f"Both name sets together: slope {_pp(p['gamma'], 2)}, one-sided 95% bounds "
                 f"{_ci(p['one_sided_bounds'], 2)}.")
            if p["within_margin"]:
                s += " Both bounds lie inside ±0.15 (a descriptive margin of no adjustment)."
            out.append(s)
    if card.get("display"):
        out.append(card["display"]["statement"])
    for ex in ("absent", "learned"):
        sec = (card.get("naming") or {}).get(ex)
        if sec:
            out.append(sec["statement"])
    if card.get("structure"):
        out.append(card["structure"]["statement"])
    out.append(accuracy_statement(card["conditions"]))
    sub = card.get("subject") or {}
    if sub.get("n_invalid"):
        out.append(f"{sub['n_invalid']:,} of {sub['n_records']:,} answers were invalid (no usable choice); they are "
                   f"recorded as missing, never substituted, and a pair without a valid answer in an arm drops out "
                   f"of that condition (see the pair counts).")
    return out


# =============================================================================================
# Figures (embedded in the HTML as base64 PNG)
# =============================================================================================
MARKERS = {"excess": ("o", True), "no resolved difference": ("o", False), "shortfall": ("s", True)}


def _png(fig) -> str:
    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, metadata={"Software": None})
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def figure_conditions(card: dict):
    """PSE minus the primary reference per condition (verdict markers as Fig. 1B) and the ranking error beside it."""
    import matplotlib.pyplot as plt

    from .figures import JUDGMENT_COLORS, MODEL_COLORS, apply_style

    apply_style()
    rows = [r for r in card["conditions"] if r.get("status") == "computed"]
    n = len(rows)
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10, 0.42 * n + 1.6), sharey=True,
                                  gridspec_kw={"width_ratios": [3, 1.3]})
    y = np.arange(n)[::-1]
    models = list(card.get("reference_models", {}))
    for yy, r in zip(y, rows):
        for mi, m in enumerate(models):
            ref = r.get("reference_models", {}).get(m, {})
            off = 0.28 - 0.14 * mi
            if ref.get("status") == "computed" and ref.get("difference_pp") is not None:
                ax.plot(ref["difference_pp"], yy + off, "|", ms=7, mew=1.6, color=MODEL_COLORS[m], alpha=0.85)
            if ref.get("status") == "computed" and ref.get("error_pct") is not None:
                ax2.plot(ref["error_pct"], yy + off, "|", ms=7, mew=1.6, color=MODEL_COLORS[m], alpha=0.85)
        v = r["verdict"]
        marker, filled = MARKERS[v]
        col = JUDGMENT_COLORS[v]
        lo, hi = r["difference_ci"]
        ax.plot([lo, hi], [yy, yy], color=col, lw=2)
        ax.plot(r["difference_pp"], yy, marker, ms=7, color=col, mfc=col if filled else "white", mew=1.5)
        if r.get("error_pct") is not None:
            elo, ehi = r["error_ci"]
            ax2.plot([elo, ehi], [yy, yy], color="#34495e", lw=2)
            ax2.plot(r["error_pct"], yy, "o", color="#34495e", ms=5)
        if r.get("learner_error_pct") is not None:
            ax2.plot(r["learner_error_pct"], yy, "x", color="#7f8c8d", ms=6)
    ax.axvline(0, color="black", lw=0.8)
    short = {c.key: c.short for c in (Condition(r["cell"], r["display"]) for r in rows)}
    ax.set_yticks(y, [f"{short[r['key']]}  [vs {'learner' if r['reference'] == 'learner' else 'full info'}]"
                      for r in rows], fontsize=7.5)
    ax.set_xlabel("PSE − reference (pp), 95% pair-bootstrap interval")
    ax.set_title("Reliance against the evidence", loc="left")
    ax2.set_xlabel("ranking error (%)")
    ax2.set_title("Accuracy beside it", loc="left")
    from matplotlib.lines import Line2D

    handles = [Line2D([], [], marker=MARKERS[v][0], color=JUDGMENT_COLORS[v], ls="-",
                      mfc=JUDGMENT_COLORS[v] if MARKERS[v][1] else "white", label=v) for v in VERDICTS]
    handles += [Line2D([], [], marker="|", ls="", color=MODEL_COLORS[m], ms=8, mew=1.6,
                       label=card["reference_models"][m]["name"]) for m in models]
    handles += [Line2D([], [], marker="x", ls="", color="#7f8c8d", label="learner error")]
    fig.legend(handles=handles, loc="lower center", ncol=min(len(handles), 5), fontsize=7,
               bbox_to_anchor=(0.5, -0.01))
    fig.tight_layout(rect=(0, 0.07, 1, 1))
    return fig


def figure_tracking(card: dict):
    """Model PSE against the learner's PSE at the four proxy strengths, per name set, with the reference models."""
    import matplotlib.pyplot as plt

    from .figures import MODEL_COLORS, apply_style

    apply_style()
    t = card["tracking"]
    x = np.array(t["learner_pse_pp"])
    names = list(t["fits"])
    fig, axes = plt.subplots(1, len(names), figsize=(4.2 * len(names), 3.4), sharey=True, squeeze=False)
    grid = np.linspace(min(x.min(), 0) - 1, x.max() + 1, 10)
    for ax, n in zip(axes[0], names):
        f = t["fits"][n]
        ax.plot(grid, grid, ls="--", color="#7f8c8d", lw=1, label="slope 1 (tracks the learner)")
        for m, ref in card.get("reference_models", {}).items():
            rf = (ref.get("tracking") or {}).get("fits", {}).get(n)
            if rf:
                ax.plot(grid, rf["alpha"] + rf["gamma"] * grid, color=MODEL_COLORS[m], lw=1, alpha=0.6,
                        label=f"{ref['name']} ({_pp(rf['gamma'], 2)})")
        pts = f["points"]
        ys = np.array([p["pse_pp"] for p in pts])
        err = np.array([[p["pse_pp"] - p["pse_ci"][0] for p in pts], [p["pse_ci"][1] - p["pse_pp"] for p in pts]])
        ax.errorbar(x, ys, yerr=err, fmt="o", color="black", capsize=3, zorder=5)
        ax.plot(grid, f["alpha"] + f["gamma"] * grid, color="black", lw=2,
                label=f"this model ({_pp(f['gamma'], 2)} {_ci(f['gamma_ci'], 2)})")
        ax.set_title(f"{n} names", loc="left")
        ax.set_xlabel("reference learner PSE (pp)")
        ax.legend(fontsize=6.5, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2)
    axes[0][0].set_ylabel("model PSE (pp)")
    fig.tight_layout()
    return fig


def figure_display(card: dict):
    """Numeric, ordered and arbitrary renderings and their difference, with the learner and the 5-pp margin."""
    import matplotlib.pyplot as plt

    from .figures import DISPLAY_COLORS, MODEL_COLORS, apply_style

    apply_style()
    d = card["display"]
    items = [(k, lab) for k, lab in (("numeric", "numeric values"), ("ordered", "ordered labels"),
                                     ("arbitrary", "arbitrary labels"), ("difference", "ordered − arbitrary"))
             if d.get(f"{k}_pp") is not None]
    fig, ax = plt.subplots(figsize=(7, 0.5 * len(items) + 1.3))
    y = np.arange(len(items))[::-1]
    for yy, (k, lab) in zip(y, items):
        col = DISPLAY_COLORS.get(k, "black")
        lo, hi = d[f"{k}_ci"]
        ax.plot([lo, hi], [yy, yy], color=col, lw=2)
        ax.plot(d[f"{k}_pp"], yy, "o", color=col, ms=7)
        for mi, (m, ref) in enumerate(card.get("reference_models", {}).items()):
            rd = ref.get("display")
            if rd and rd.get(f"{k}_pp") is not None:
                ax.plot(rd[f"{k}_pp"], yy + 0.2 - 0.1 * mi, "|", ms=8, mew=1.6, color=MODEL_COLORS[m],
                        label=ref["name"] if yy == y[0] or k == "ordered" else None)
    ax.axvline(0, color="black", lw=0.8, label="full-information reference (0)")
    ax.axvline(d["learner_pse_pp"], color="#7f8c8d", ls="--", lw=1,
               label=f"category learner ({_pp(d['learner_pse_pp'], 2)} pp)")
    ax.axvline(d["margin_pp"], color="#c0392b", ls=":", lw=1, label=f"{d['margin_pp']:.0f}-pp margin")
    ax.set_yticks(y, [lab for _, lab in items])
    ax.set_xlabel("PSE (pp), 95% pair-bootstrap interval")
    handles, labels = ax.get_legend_handles_labels()
    uniq = dict(zip(labels, handles))
    ax.legend(uniq.values(), uniq.keys(), fontsize=7, loc="upper left", bbox_to_anchor=(1.02, 1))
    fig.tight_layout()
    return fig


def card_figures(card: dict) -> dict[str, str]:
    """Base64 PNGs of the card's plots (only the sections present)."""
    figs = {}
    if any(r.get("status") == "computed" for r in card["conditions"]):
        figs["conditions"] = _png(figure_conditions(card))
    if card.get("tracking"):
        figs["tracking"] = _png(figure_tracking(card))
    if card.get("display"):
        figs["display"] = _png(figure_display(card))
    return figs


# =============================================================================================
# HTML
# =============================================================================================
CSS = """
body{font-family:system-ui,-apple-system,sans-serif;margin:2em auto;max-width:1150px;color:#222;line-height:1.4}
table{border-collapse:collapse;width:100%;margin:.4em 0 1.2em}td,th{border-bottom:1px solid #ddd;padding:3px 6px;
font-size:12.5px;text-align:left;vertical-align:top}th{background:#f4f4f4}.num{font-variant-numeric:tabular-nums;
white-space:nowrap}.excess{color:#c0392b;font-weight:600}.shortfall{color:#2471a3;font-weight:600}
.none{color:#555}.small{color:#666;font-size:12px}.box{background:#f7f7f2;border:1px solid #e3e3d8;padding:.6em 1em;
border-radius:4px}img{max-width:100%}h2{margin-top:1.6em;border-bottom:1px solid #ddd}li{margin:.2em 0}
code{background:#f4f4f4;padding:0 3px}
"""


def _e(x) -> str:
    return html.escape(str(x))


def _vclass(v) -> str:
    return {"excess": "excess", "shortfall": "shortfall"}.get(v, "none")


def _table(headers: list[str], rows: list[list[str]]) -> str:
    h = "".join(f"<th>{_e(x)}</th>" for x in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in r) + "</tr>" for r in rows)
    return f"<table><tr>{h}</tr>{body}</table>"


def _num(x, digits=1, pct=False) -> str:
    if _isnan(x):
        return '<span class="small">n/a</span>'
    s = f"{x:.{digits}f}%" if pct else _pp(x, digits)
    return f'<span class="num">{_e(s)}</span>'


def _ci_html(ci, digits=1) -> str:
    return f'<span class="num">{_e(_ci(ci, digits))}</span>'


def _verdict_html(v) -> str:
    return '<span class="small">n/a</span>' if v is None else f'<span class="{_vclass(v)}">{_e(v)}</span>'


def _conditions_table(card: dict) -> str:
    rows = []
    for r in card["conditions"]:
        if r.get("status") != "computed":
            rows.append([_e(r["key"]), f'<span class="small">{_e(r.get("reason", ""))}</span>'] + [""] * 8)
            continue
        rows.append([_e(r["label"]), f"{_num(r['pse_pp'])} {_ci_html(r['pse_ci'])}", _num(r["fullinfo_pse_pp"]),
                     _num(r["learner_pse_pp"]), _e(REFERENCE_NAMES[r["reference"]]),
                     f"{_num(r['difference_pp'])} {_ci_html(r['difference_ci'])}", _verdict_html(r["verdict"]),
                     _num(r["error_pct"], pct=True) + (
                         f' <span class="num">[{r["error_ci"][0]:.1f}, {r["error_ci"][1]:.1f}]</span>'
                         if not _isnan(r["error_ci"][0]) else ""),
                     _num(r["learner_error_pct"], pct=True), _num(r["excess_error_pp"])])
    return _table(["condition", "PSE (pp) [95% CI]", "full-info ref.", "learner ref.", "judged against",
                   "PSE − reference [95% CI]", "verdict", "ranking error", "learner error", "excess error (pp)"], rows)


def _reference_table(card: dict) -> str:
    models = list(card.get("reference_models", {}))
    if not models:
        return "<p class='small'>Reference rows were not computed (<code>--no-reference-models</code>).</p>"
    rows = []
    for r in card["conditions"]:
        cells = [_e(r.get("label", r["key"])), f"{_num(r.get('pse_pp'))} {_verdict_html(r.get('verdict'))}"]
        for m in models:
            ref = r.get("reference_models", {}).get(m, {})
            if ref.get("status") != "computed":
                cells.append('<span class="small">not released</span>')
            else:
                src = " (summary)" if ref.get("source") == "summary" else ""
                cells.append(f"{_num(ref['pse_pp'])} {_ci_html(ref['pse_ci'])} {_verdict_html(ref['verdict'])}"
                             f"<span class='small'>{_e(src)}</span>")
        rows.append(cells)
    return _table(["condition", "this model"] + [card["reference_models"][m]["name"] for m in models], rows)


def _tracking_html(card: dict) -> str:
    t = card.get("tracking")
    if not t:
        return "<p class='small'>The sweep was not part of this run.</p>"
    rows = []
    for n, f in t["fits"].items():
        rows.append(["this model", _e(n), _num(f["gamma"], 2), _ci_html(f["gamma_ci"], 2), _num(f["alpha"]),
                     _e(f["n_pairs"])])
    if t.get("pooled"):
        p = t["pooled"]
        rows.append(["this model", "both (mean)", _num(p["gamma"], 2),
                     _ci_html(p["gamma_ci"], 2) + " <span class='small'>one-sided 95%: </span>"
                     + _ci_html(p["one_sided_bounds"], 2), "", ""])
    for m, ref in card.get("reference_models", {}).items():
        rt = ref.get("tracking")
        if not rt:
            continue
        for n, f in rt["fits"].items():
            rows.append([_e(ref["name"]), _e(n), _num(f["gamma"], 2), _ci_html(f["gamma_ci"], 2), _num(f["alpha"]),
                         _e(f["n_pairs"])])
    levels = ", ".join(f"β {b:.2f}: {_pp(v, 2)} pp" for b, v in zip(t["levels"], t["learner_pse_pp"]))
    return (f"<p class='small'>Reference learner PSE per level: {_e(levels)}.</p>"
            + _table(["model", "names", "slope γ", "95% interval", "intercept α (pp)", "pairs"], rows)
            + "<ul>" + "".join(f"<li>{_e(f['statement'])}</li>" for f in t["fits"].values()) + "</ul>")


def _display_html(card: dict) -> str:
    d = card.get("display")
    if not d:
        return "<p class='small'>The display control was not part of this run.</p>"
    rows = []

    def add(who, dd):
        rows.append([_e(who)] + [f"{_num(dd.get(k + '_pp'))} {_ci_html(dd.get(k + '_ci'))}"
                                 if dd.get(k + "_pp") is not None else '<span class="small">n/a</span>'
                                 for k in ("numeric", "ordered", "arbitrary", "difference")]
                    + [_e(dd["difference"])])

    add("this model", d)
    for m, ref in card.get("reference_models", {}).items():
        if ref.get("display"):
            add(ref["name"], ref["display"])
        else:
            rows.append([_e(ref["name"]), '<span class="small">representation-control records not released</span>',
                         "", "", "", ""])
    return (_table(["model", "numeric", "ordered labels", "arbitrary labels", "ordered − arbitrary [95% CI]",
                    "difference"], rows)
            + f"<p>{_e(d['statement'])}</p>"
            + f"<p class='small'>Full-information reference {_pp(d['fullinfo_pse_pp'])} pp; category-indicator learner "
              f"{_pp(d['learner_pse_pp'], 2)} pp for both renderings; margin {d['margin_pp']:.0f} pp (one-sided, "
              f"pre-specified in the paper). Ordered − arbitrary against the margin: {_e(d['difference_vs_margin'])}.</p>")


def _naming_html(card: dict) -> str:
    nm = card.get("naming") or {}
    if not nm:
        return "<p class='small'>The naming contrast was not part of this run.</p>"
    rows = []
    for ex in ("absent", "learned"):
        who = [("this model", nm.get(ex))] + [(ref["name"], (ref.get("naming") or {}).get(ex))
                                               for ref in card.get("reference_models", {}).values()]
        for name, sec in who:
            if sec is None:
                continue
            rows.append([_e("no examples" if ex == "absent" else "80 examples"), _e(name), _num(sec["neutral_pp"]),
                         _num(sec["social_pp"]), f"{_num(sec['difference_pp'])} {_ci_html(sec['difference_ci'])}",
                         _e(sec["verdict"] or "no interval (summary)")])
    return (_table(["examples", "model", "neutral names", "social names", "social − neutral [95% CI]", "reading"],
                   rows) + "<ul>" + "".join(f"<li>{_e(nm[ex]['statement'])}</li>" for ex in nm) + "</ul>")


def _structure_html(card: dict) -> str:
    s = card.get("structure")
    if not s:
        return ""
    rows = [["this model", _num(s["lh_change_pp"]), _num(s["hh_change_pp"]),
             f"{_num(s['reversal_pp'])} {_ci_html(s['reversal_ci'])}"]]
    for ref in card.get("reference_models", {}).values():
        rs = ref.get("structure")
        if rs:
            rows.append([_e(ref["name"]), _num(rs["lh_change_pp"]), _num(rs["hh_change_pp"]),
                         f"{_num(rs['reversal_pp'])} {_ci_html(rs['reversal_ci'])}"])
    return ("<h2>Field count and dependence</h2>"
            + _table(["model", "k18 − k6, LH (pp)", "k18 − k6, HH (pp)", "HH change − LH change [95% CI]"], rows)
            + f"<p>{_e(s['statement'])}</p>")


def render_html(card: dict, figures: dict[str, str] | None = None) -> str:
    """The card as one self-contained HTML page (inline CSS, plots as data URIs, no external resources)."""
    figures = card_figures(card) if figures is None else figures
    sub = card["subject"]

    def img(name, alt):
        return f'<p><img alt="{_e(alt)}" src="data:image/png;base64,{figures[name]}"></p>' if name in figures else ""

    served = ", ".join(f"{k} ({v})" for k, v in (sub.get("models_served") or {}).items()) or "n/a"
    cost = sub.get("cost_usd")
    head = (f"<h1>Proxy audit report card</h1><p><b>{_e(sub['provider'])}/{_e(sub['model_requested'])}</b> · "
            f"battery <b>{_e(card['battery'])}</b> · {card['n_conditions']} conditions · "
            f"{sub.get('n_records', 0):,} answers ({sub.get('n_invalid', 0)} invalid) · served as {_e(served)} · "
            f"cost {_e('unknown' if cost is None else f'${cost:,.2f}')} · generated {_e(card['generated_utc'])}</p>")
    guide = "<div class='box'><b>How to read this card</b><ul>" + "".join(
        f"<li>{_e(s)}</li>" for s in card["reading_guide"]) + "</ul></div>"
    summary = "<h2>What the evidence supports</h2><ul>" + "".join(f"<li>{_e(s)}</li>" for s in card["summary"]) + "</ul>"
    conds = ("<h2>Reliance against the references, accuracy beside it</h2>"
             + img("conditions", "PSE minus reference per condition and ranking error")
             + _conditions_table(card)
             + "<ul>" + "".join(f"<li><b>{_e(r['label'])}</b>: {_e(r['statement'])}</li>" for r in card["conditions"]
                                if r.get("status") == "computed") + "</ul>")
    refs = ("<h2>The paper's four models on the same conditions</h2><p class='small'>Computed with the same code "
            "from the authors' released per-call records.</p>" + _reference_table(card))
    tracking = "<h2>Tracking slope across proxy strengths</h2>" + img("tracking", "tracking slope") + _tracking_html(card)
    display = "<h2>Ordered versus arbitrary labels</h2>" + img("display", "display control") + _display_html(card)
    naming = "<h2>Naming: social versus neutral field names</h2>" + _naming_html(card)
    prov = ("<h2>Provenance</h2>" + _table(["item", "value"], [
        ["request settings", f"<code>{_e(json.dumps(sub.get('request_settings'), sort_keys=True))}</code>"],
        ["base URL", _e(sub.get("base_url") or "default")],
        ["collection dates (UTC)", _e(", ".join(sub.get("collection_dates_utc") or []))],
        ["tokens", _e(f"input {sub.get('tokens', {}).get('input', 0):,}, output {sub.get('tokens', {}).get('output', 0):,}")],
        ["SDK versions", _e(json.dumps(sub.get("sdk_versions"), sort_keys=True))],
        ["ledger", _e(sub.get("ledger"))],
        ["bootstrap", _e(f"{card['settings']['bootstrap_draws']:,} draws; seeds {card['settings']['seeds']}")],
    ]) + "<h3>Method notes</h3><ul>" + "".join(f"<li>{_e(s)}</li>" for s in card["method_notes"]) + "</ul>")
    body = head + guide + summary + conds + tracking + display + naming + _structure_html(card) + refs + prov
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>Proxy audit report card: "
            f"{_e(sub['model_requested'])}</title><style>{CSS}</style></head><body>{body}</body></html>\n")


def _write(path: Path, data: bytes) -> None:
    """Atomic write, readable by others (a report card is meant to be shared)."""
    C._atomic_write(path, data)
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(path, 0o666 & ~umask)


def write_report(card: dict, out: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``report_card.json`` and ``report_card.html`` into ``out`` (atomically)."""
    out = Path(out)
    jpath, hpath = out / REPORT_JSON, out / REPORT_HTML
    _write(jpath, (json.dumps(card, indent=1, ensure_ascii=False) + "\n").encode())
    _write(hpath, render_html(card).encode())
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
              policy: C.RetryPolicy = C.RetryPolicy(), reference_rows: bool = True, only: Iterable[str] | None = None,
              progress: bool = True, stop: threading.Event | None = None, log=print) -> AuditResult:
    """Plan, collect (resumable), estimate, judge and write the report card.

    Returns an :class:`AuditResult`; ``complete`` is False (and no card is written) while any
    job of the battery has no persisted answer (stopped at the budget, interrupted, or transport
    failures): rerun the same call to resume. Raises :class:`analysis.collection.CollectionError`
    on a problem the user must fix (nothing is written then).
    """
    conditions = select_conditions(battery_conditions(battery), only)
    if max_cost is not None and max_cost < 0:
        raise C.CollectionError("--max-cost must be at least 0")
    if draws < 100:
        raise C.CollectionError("--draws must be at least 100")
    make = subject_factory(provider, model, base_url=base_url, api_key_env=api_key_env, timeout=timeout,
                           settings=settings, preset=preset, seed=seed, dry_run=dry_run)
    probe = make()
    try:
        paid, sprov, smodel = probe.paid, probe.provider, probe.model
    finally:
        probe.close()
    if not dry_run:
        C.check_writable(Path(out))
    plan = plan_audit(conditions, make, out, prices)
    log(describe_plan(plan, sprov, smodel, battery))
    if max_cost is not None and paid and plan["price"].iloc[0] is None:
        raise C.CollectionError(f"--max-cost needs a price for {sprov}/{smodel}: give --prices FILE "
                                f"(or set {C.PRICES_ENV})")
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
    runs = collect_audit(conditions, make, out, concurrency=concurrency, max_cost=max_cost, policy=policy,
                         prices=prices, progress=progress, stop=stop, timeout=timeout, log=log)
    done = {r.cell + ":" + r.display for r in runs if r.complete}
    complete = all(f"{c.cell}:{c.display}" in done for c in conditions)
    stopped = next((r.stopped for r in runs if r.stopped), "") or ("" if complete else "interrupted")
    if not complete:
        return AuditResult(plan, runs, complete=False, stopped=stopped)
    subject = make()
    try:
        analysis = analyse(collected_loader(out, subject), conditions, draws)
        info = provenance(out, subject, conditions)
        if sprov == "simulated":
            info["simulated"] = {"preset": smodel, "seed": seed}
    finally:
        subject.close()
    refs = reference_models(conditions, draws) if reference_rows else None
    card = report_card(analysis, conditions, battery=battery, subject_info=info, references=refs, draws=draws,
                       plan=plan)
    jpath, hpath = write_report(card, out)
    log(f"report card: {hpath}\n             {jpath}")
    return AuditResult(plan, runs, complete=True, card=card, json_path=jpath, html_path=hpath)


# =============================================================================================
# Command line
# =============================================================================================
class _Parser(argparse.ArgumentParser):
    def error(self, message):  # noqa: D401
        raise C.CollectionError(f"{self.prog}: {message}")


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="python -m analysis audit",
                 description="Audit a model against the evidence: plan, collect (resumable, never pays twice), "
                             "estimate and write a report card (report_card.html + report_card.json in --out).")
    ap.add_argument("--provider", required=True, help="anthropic | openai (any OpenAI-compatible endpoint) | simulated")
    ap.add_argument("--model", required=True, help="the serving model id; with simulated, a preset ("
                    + ", ".join(AUDIT_PRESETS) + ") or any label with --preset")
    ap.add_argument("--base-url", help="endpoint (OpenRouter, vLLM, Ollama, a proxy); default: the provider's")
    ap.add_argument("--battery", default="core", choices=BATTERY_NAMES,
                    help="core (6,732 calls) or full (adds field count and dependence; 9,108 calls)")
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


def cli_audit(argv: list[str]) -> int:
    """``python -m analysis audit``: exit 0 report written (or dry run), 3 incomplete (rerun to resume),
    2 error (one line on stderr), 130 interrupted."""
    try:
        a = _parser().parse_args(argv)
        if a.concurrency is not None and a.concurrency < 1:
            raise C.CollectionError("--concurrency must be at least 1")
        if a.retries < 1:
            raise C.CollectionError("--retries must be at least 1")
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
                            stop=stop)
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
    except (C.CollectionError, CellError, ValueError) as exc:
        print(f"error: {C.REDACT(str(exc))}", file=sys.stderr)
        return 2
