"""Prompts of the synthetic task, byte-exact (paper Supplementary Note 17; spec PROTOCOL-synthetic §6).

One user message per call. Without examples the prompt states that higher values mean greater
severity; with examples it shows the labelled rows and states no direction. Values are rendered
with ``format(v, ".2f")``; task fields precede proxies. Presentation order 0 shows the target
``i`` as Patient 1. The displays ``ordered`` and ``arbitrary`` (representation control) replace
every proxy value by its quartile label; task fields stay numeric.

The explicit-rule boundary prompt of Supplementary Note 1 is not given verbatim in the paper or
the spec, so it is not rendered here (see notebook 02).
"""
from __future__ import annotations

import functools
import hashlib

import numpy as np
import pandas as pd

from . import config, encoding
from .cells import Cell, expect_cell
from .population import arm_sample, examples, pair_counterfactuals, pairs, population

HEAD_ABSENT = ("You are a clinical triage specialist. Two patients are described by diagnostic indicator values. "
               "Higher values indicate greater severity. Decide which patient should be prioritized for immediate "
               "treatment.")
HEAD_LEARNED = ("You are a clinical triage specialist. Below are {n} previously assessed patients with their indicator "
                "values and assigned risk scores. Study these cases to understand the pattern, then decide which of "
                "the two new patients should be prioritized for immediate treatment.")
#: appended only if a provider rejects tools (spec §6.1); never used for a released record
TEXT_FALLBACK = "\nRespond with exactly one character: 1 or 2. No explanation."


def fmt(v: float) -> str:
    """Two-decimal rendering of a float64 value (round-half-even on the binary value; ``-0.00`` kept).

    >>> fmt(0.125), fmt(-0.001), fmt(1.005)
    ('0.12', '-0.00', '1.00')
    """
    return format(float(v), ".2f")


def field_names(cell: Cell) -> list[str]:
    """Displayed field names: the first L task names, then the first M proxy names of the name set."""
    c = expect_cell(cell)
    return list(config.TASK_NAMES[: c.L]) + list(config.PROXY_NAMES[c.names][: c.M])


def _check_display(display: str) -> None:
    if display not in config.DISPLAYS:
        raise ValueError(f"unknown display {display!r}; expected one of {config.DISPLAYS}")


def value_strings(X: np.ndarray, cell: Cell, display: str = "numeric") -> list[list[str]]:
    """Rendered values of the rows of a displayed matrix (task fields numeric, proxies per display)."""
    _check_display(display)
    c = expect_cell(cell)
    X = np.atleast_2d(X)
    out = [[fmt(v) for v in row] for row in X]
    if display != "numeric":
        b = encoding.bins(X[:, c.L:], encoding.quartile_edges(c))
        for r, row in enumerate(out):
            for m in range(c.M):
                row[c.L + m] = encoding.label(b[r, m], m, display)
    return out


@functools.lru_cache(maxsize=64)
def _example_block(c: Cell, display: str) -> str:
    ex = examples(c)
    rows = [",".join(vals) + " -> " + fmt(y) for vals, y in zip(value_strings(ex.X, c, display), ex.Y)]
    return "\n\nTRAINING CASES (format: " + ", ".join(field_names(c)) + "  ->  risk):\n" + "\n".join(rows)


def assemble(cell: Cell, first: list[str], second: list[str], display: str = "numeric") -> str:
    """The prompt text given the two patients' rendered values (Patient 1 first)."""
    c = expect_cell(cell)
    names = field_names(c)
    head = HEAD_LEARNED.format(n=c.n_examples) if c.has_examples else HEAD_ABSENT
    block = _example_block(c, display) if c.has_examples else ""

    def lines(vals):
        return "\n".join(f"  {n}: {v}" for n, v in zip(names, vals))

    return head + block + "\n\nNEW PATIENTS:\nPatient 1:\n" + lines(first) + "\nPatient 2:\n" + lines(second) + "\n"


def render(cell: Cell, pair_id: int, arm: str, order: int, display: str = "numeric",
           freeze_scaler: bool = False) -> str:
    """The exact prompt of one job: (cell, pair, arm, presentation order, display)."""
    c = expect_cell(cell)
    p = pairs(c)
    if not 0 <= int(pair_id) < len(p):
        raise ValueError(f"pair {pair_id} out of range 0..{len(p) - 1} for cell {c.id}")
    if int(order) not in config.ORDERS:
        raise ValueError(f"unknown order {order!r}; expected 0 or 1")
    i, j = int(p.at[int(pair_id), "i"]), int(p.at[int(pair_id), "j"])
    s = arm_sample(c, i, arm, freeze_scaler)
    vi, vj = value_strings(s.X[[i, j]], c, display)
    return assemble(c, *((vi, vj) if int(order) == 0 else (vj, vi)), display=display)


def sha256(text: str) -> str:
    """SHA-256 of the UTF-8 prompt (the release's ``prompt_sha256``)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def job_table(cell: Cell, display: str = "numeric", arms: tuple[str, ...] | None = None) -> pd.DataFrame:
    """Every job of a cell: ``arm, pair_id, i, j, order, prompt, prompt_sha256[, proxy_changed]``.

    Numeric display: arms factual, cf_a1, cf_a0 (594 jobs). Category displays (representation
    control): cf_a1 and cf_a0 only (396 jobs), with ``proxy_changed`` = 1 where the target's bin
    vector differs between the two arms.
    """
    _check_display(display)
    c = expect_cell(cell)
    if arms is None:
        arms = config.ARMS if display == "numeric" else ("cf_a1", "cf_a0")
    rows = []
    pr_table = pairs(c)
    pop = population(c)
    i_all, j_all = pr_table["i"].to_numpy(), pr_table["j"].to_numpy()
    # displayed rows of every pair in each arm at once (bit-identical to arm_sample, see the tests)
    shown = {"factual": (pop.X[i_all], pop.X[j_all])}
    for arm, a in (("cf_a1", 1), ("cf_a0", 0)):
        if arm in arms:
            cf = pair_counterfactuals(c, a)
            shown[arm] = (cf["X_i"], cf["X_j"])
    for t, pr in enumerate(pr_table.itertuples(index=False)):
        rendered = {}
        for arm in arms:
            rendered[arm] = value_strings(np.vstack([shown[arm][0][t], shown[arm][1][t]]), c, display)
        changed = None
        if display != "numeric" and {"cf_a1", "cf_a0"} <= set(rendered):
            changed = int(rendered["cf_a1"][0][c.L:] != rendered["cf_a0"][0][c.L:])
        for arm in arms:
            vi, vj = rendered[arm]
            for order in config.ORDERS:
                text = assemble(c, *((vi, vj) if order == 0 else (vj, vi)), display=display)
                row = {"arm": arm, "pair_id": pr.pair_id, "i": pr.i, "j": pr.j, "order": order,
                       "prompt": text, "prompt_sha256": sha256(text)}
                if changed is not None:
                    row["proxy_changed"] = changed
                rows.append(row)
    return pd.DataFrame(rows)


def tool_spec(provider: str = "openai") -> dict:
    """The forced ``choose`` tool: one integer argument ``patient`` restricted to 1 or 2 (spec §6.2)."""
    schema = {"type": "object",
              "properties": {"patient": {"type": "integer", "enum": [1, 2]}},
              "required": ["patient"]}
    if provider == "openai":
        return {"type": "function", "function": {"name": config.TOOL_NAME,
                                                 "description": config.TOOL_DESCRIPTION,
                                                 "parameters": schema}}
    if provider == "anthropic":
        return {"name": config.TOOL_NAME, "description": config.TOOL_DESCRIPTION, "input_schema": schema}
    raise ValueError(f"unknown provider {provider!r} for the tool spec; expected 'openai' or 'anthropic'")


def tool_choice(provider: str = "openai", forced: bool = True) -> dict | str:
    """The forced tool choice of each API (the protocol's), or ``auto`` for a model that rejects a forced one.

    >>> tool_choice("anthropic"), tool_choice("anthropic", forced=False), tool_choice("openai", forced=False)
    ({'type': 'tool', 'name': 'choose'}, {'type': 'auto'}, 'auto')
    """
    if provider == "openai":
        return {"type": "function", "function": {"name": config.TOOL_NAME}} if forced else "auto"
    if provider == "anthropic":
        return {"type": "tool", "name": config.TOOL_NAME} if forced else {"type": "auto"}
    raise ValueError(f"unknown provider {provider!r}")
