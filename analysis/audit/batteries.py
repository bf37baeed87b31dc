"""The audit's batteries: which conditions (cell x display) an audit asks, and how many calls.

Paper §2.1-§2.5, §4.4, §4.6. ``core`` = k = 12 LH, neutral and social names, no examples and 80
examples, zero-information proxies; the four-level predictive-value sweep; the representation
control (ordered and arbitrary labels). ``full`` adds the field-count and dependence cells
(k = 6 / 18, LH / HH, 80 examples, zero information). ``smoke`` is one no-example and one
80-example cell on the first ``--pairs`` pairs: a check that the pipeline runs against a model,
not the protocol.
"""
from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from typing import Callable, Iterable

from .. import collection as C
from .. import config
from ..battery import DIMENSION_CELLS
from ..cells import Cell, parse_cell
from ..population import pairs
from ..validity import card as validity_card

NAME_SETS = ("neutral", "social")
SWEEP_LEVELS = ("zero", "info_b030", "info_b045", "info_b060")  # paper §4.4
PAPER_MODELS = ("sonnet", "deepseek", "qwen", "gpt")
REP_CELL = "k12_LH_neutral_learned_zero"  # representation control cell (paper §4.6)
#: the field-count and dependence cells in the order of the reversal contrast (spec §9.9):
#: (k18 HH - k6 HH) - (k18 LH - k6 LH); the same cells as the paper's dimension table
STRUCTURE_CELLS = DIMENSION_CELLS
#: the smoke battery: one no-example and one 80-example zero-information cell (issue 13)
SMOKE_CELLS = ("k12_LH_neutral_absent_zero", "k12_LH_neutral_learned_zero")
SMOKE_PAIRS = 24  # default --pairs of the smoke battery: the first 24 pairs of each cell
GROUPS = {
    "zero": "Zero-information proxies",
    "sweep": "Predictive-value sweep",
    "display": "Display control (ordered versus arbitrary labels)",
    "structure": "Field count and dependence",
    "validity": "Construct validity (beyond the paper's protocol)",
}


@dataclass(frozen=True)
class Condition:
    """One condition of the battery: a cell shown in one display."""

    cell: str
    display: str = "numeric"
    group: str = "zero"
    #: the first ``n_pairs`` pairs of the cell only (None: all; the smoke battery's ``--pairs``)
    n_pairs: int | None = None
    #: the :class:`~analysis.cells.Cell` of ``cell``, parsed once when the condition is made (the audit's
    #: boundary, STYLE 3): everything below the audit takes it. A copy (``dataclasses.replace``) with the
    #: same ``cell`` carries it over unparsed
    parsed: Cell = dataclasses.field(default=None, repr=False, compare=False, kw_only=True)

    def __post_init__(self):
        if self.parsed is None or self.parsed.id != self.cell:
            object.__setattr__(self, "parsed", parse_cell(self.cell))

    @property
    def key(self) -> str:
        """``CELL`` for the numeric display, ``CELL:display`` for a category display."""
        return self.cell if self.display == "numeric" else f"{self.cell}:{self.display}"

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

    #: answers per prompt (``--samples R``, issue 20; 1: the protocol): :func:`jobs_of` asks every job R times
    samples: int = 1


def sweep_cell(names: str, level: str) -> str:
    """Cell id of a sweep level (k = 12 LH, 80 examples; paper §4.4)."""
    return f"k12_LH_{names}_learned_{level}"


def _core() -> list[Condition]:
    """k12 LH {neutral, social} x {no examples, 80 examples}, zero information; the sweep levels
    0.30 / 0.45 / 0.60 (level 0 is the 80-example zero-information cell); the representation
    control (ordered and arbitrary labels of ``k12_LH_neutral_learned_zero``)."""
    conds = [Condition(f"k12_LH_{n}_{ex}_zero", "numeric", "zero") for ex in ("absent", "learned") for n in NAME_SETS]
    conds += [Condition(sweep_cell(n, lv), "numeric", "sweep") for lv in SWEEP_LEVELS[1:] for n in NAME_SETS]
    rep = next(c.parsed for c in conds if c.cell == REP_CELL)  # parsed once for its three displays
    conds += [Condition(REP_CELL, d, "display", parsed=rep) for d in ("ordered", "arbitrary")]
    return conds


def _full() -> list[Condition]:
    """``core`` plus k6 / k18 LH and HH with 80 examples, zero information, neutral names."""
    return _core() + [Condition(f"k{k}_{corner}_neutral_learned_zero", "numeric", "structure")
                      for corner in ("LH", "HH") for k in (6, 18)]


def _smoke() -> list[Condition]:
    """The two cells of :data:`SMOKE_CELLS`, on the first :data:`SMOKE_PAIRS` pairs (see :func:`first_pairs`)."""
    return [Condition(c, "numeric", "zero", SMOKE_PAIRS) for c in SMOKE_CELLS]


def _validity() -> list[Condition]:
    """The audit engine's part of the validity battery (construct validity, beyond the paper's protocol;
    :mod:`analysis.validity`): the paper's cues in three displays of both name sets, and seed replications."""
    conds, parsed = [], {}
    for cell, display in validity_card.engine_conditions():
        conds.append(Condition(cell, display, "validity", parsed=parsed.get(cell)))
        parsed[cell] = conds[-1].parsed  # each cell id parsed once for all its displays
    return conds


#: every battery by name (a study adds its own with one line here)
BATTERIES: dict[str, Callable[[], list[Condition]]] = {"core": _core, "full": _full, "smoke": _smoke,
                                                       "validity": _validity}
BATTERY_NAMES = tuple(BATTERIES)
#: batteries that are not the protocol: their card says so in its first line
SMOKE_BATTERIES = ("smoke",)


def battery_conditions(name: str = "core") -> list[Condition]:
    """The conditions of a battery, in report order (see :data:`BATTERIES`)."""
    if name not in BATTERIES:
        raise ValueError(f"unknown battery {name!r}; expected one of {', '.join(BATTERY_NAMES)}")
    return BATTERIES[name]()


def first_pairs(conditions: list[Condition], n_pairs: int | None) -> list[Condition]:
    """The conditions restricted to the first ``n_pairs`` pairs of each cell (None: as the battery has them).

    >>> [c.key for c in first_pairs(battery_conditions("smoke"), 10)]
    ['k12_LH_neutral_absent_zero', 'k12_LH_neutral_learned_zero']
    >>> first_pairs(battery_conditions("smoke"), 10)[0].n_pairs, battery_conditions("smoke")[0].n_pairs
    (10, 24)
    """
    if n_pairs is None:
        return list(conditions)
    if n_pairs < 1:
        raise ValueError("--pairs must be at least 1")
    return [dataclasses.replace(c, n_pairs=n_pairs) for c in conditions]



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
    arms = len(config.ARMS) if cond.display == "numeric" else 2
    n = len(pairs(cond.parsed))
    return (n if cond.n_pairs is None else min(n, cond.n_pairs)) * arms * len(config.ORDERS)


def battery_calls(name: str = "core", n_pairs: int | None = None) -> int:
    """Total calls of a battery (6,732 core; 9,108 full; 288 smoke with its default 24 pairs)."""
    return sum(n_calls(c) for c in first_pairs(battery_conditions(name), n_pairs))


@functools.lru_cache(maxsize=32)
def _jobs(cell: Cell, display: str, n_pairs: int | None) -> tuple:
    jobs = C.job_list(cell, display)
    if n_pairs is None:
        return tuple(jobs)
    keep = set(pairs(cell)["pair_id"].iloc[:n_pairs])
    return tuple(j for j in jobs if j.pair_id in keep)


def jobs_of(cond: Condition) -> list:
    """Every job of a condition (cached; :func:`analysis.collection.job_list`), first ``n_pairs`` pairs only if set,
    each ``cond.samples`` times (:func:`analysis.collection.with_samples`)."""
    return C.with_samples(list(_jobs(cond.parsed, cond.display, cond.n_pairs)), cond.samples)
