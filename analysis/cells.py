"""Cell identifiers, named exactly like the release's file tags.

A *cell* is one condition: field count, configuration (corner), name set, example set and
proxy predictive value (Supplement preamble). The grammar is::

    k{6,12,18}_{LL,LH,HL,HH}_{neutral,social}_{absent,learned}_{zero,info}[_b030|_b045|_b060][_s<seed>]

``info`` without a ``_bNNN`` level is the fixed informative level beta = 0.40; ``_b030`` etc. are
the variance-normalised sweep levels (they need ``learned`` and ``info``). ``_s<seed>`` is a
seed replication (population S, pairs S + 20000, examples S + 40000; Supplementary Note 2).

Three suffixes, not used in the release's file names, name the Sonnet manipulations of
Supplementary Notes 8 and 18 (they need ``learned``):
``_n12`` / ``_n20`` (example count), ``_r00`` / ``_r40`` / ``_r70`` (example correlation) and
``_xLL`` / ``_xHL`` / ``_xHH`` / ``_xLH`` (examples drawn from another configuration).
"""
from __future__ import annotations

import re
import reprlib
import sys
from dataclasses import dataclass, replace

from . import config

GRAMMAR = ("k{6,12,18}_{LL,LH,HL,HH}_{neutral,social}_{absent,learned}_{zero,info}"
           "[_b030|_b045|_b060][_s<seed>]  (extensions: [_n12|_n20] [_r00|_r40|_r70] [_xLL|_xLH|_xHL|_xHH])")

_PATTERN = re.compile(
    r"^k(?P<k>6|12|18)_(?P<corner>LL|LH|HL|HH)_(?P<names>neutral|social)_"
    r"(?P<examples>absent|learned)_(?P<proxies>zero|info)"
    r"(?:_b(?P<beta>030|045|060))?"
    r"(?:_n(?P<n_examples>12|20))?"
    r"(?:_r(?P<corr>00|40|70))?"
    r"(?:_x(?P<example_corner>LL|LH|HL|HH))?"
    r"(?:_s(?P<seed>\d+))?$"
)


class CellError(ValueError):
    """A malformed or unknown cell identifier."""


@dataclass(frozen=True)
class Cell:
    """One synthetic condition."""

    k: int
    corner: str
    names: str  # "neutral" | "social"
    examples: str  # "absent" | "learned"
    proxies: str  # "zero" | "info"
    sweep_beta: float | None = None  # 0.30 / 0.45 / 0.60, variance-normalised sweep
    seed: int | None = None  # seed replication S
    n_examples: int = config.N_EXAMPLES
    example_corr: float | None = None  # example-correlation manipulation
    example_corner: str | None = None  # examples from another configuration

    # -- derived -------------------------------------------------------------------------
    @property
    def id(self) -> str:
        s = f"k{self.k}_{self.corner}_{self.names}_{self.examples}_{self.proxies}"
        if self.sweep_beta is not None:
            s += f"_b{round(self.sweep_beta * 100):03d}"
        if self.n_examples != config.N_EXAMPLES:
            s += f"_n{self.n_examples}"
        if self.example_corr is not None:
            s += f"_r{round(self.example_corr * 100):02d}"
        if self.example_corner is not None:
            s += f"_x{self.example_corner}"
        if self.seed is not None:
            s += f"_s{self.seed}"
        return s

    def __str__(self) -> str:  # pragma: no cover - convenience
        return self.id

    @property
    def L(self) -> int:
        return config.FIELD_COUNTS[self.k][0]

    @property
    def M(self) -> int:
        return config.FIELD_COUNTS[self.k][1]

    @property
    def informative(self) -> bool:
        return self.proxies == "info"

    @property
    def beta(self) -> float:
        """Proxy predictive value: 0, the sweep level, or the fixed 0.40."""
        if not self.informative:
            return 0.0
        return self.sweep_beta if self.sweep_beta is not None else config.BETA_INFO

    @property
    def has_examples(self) -> bool:
        return self.examples == "learned"

    @property
    def population_seed(self) -> int:
        return config.POPULATION_SEED if self.seed is None else self.seed

    @property
    def pair_seed(self) -> int:
        return config.PAIR_SEED if self.seed is None else self.seed + config.REPLICATION_PAIR_OFFSET

    @property
    def example_seed(self) -> int:
        return config.EXAMPLE_SEED if self.seed is None else self.seed + config.REPLICATION_EXAMPLE_OFFSET

    @property
    def examples_corner(self) -> str:
        return self.example_corner or self.corner

    def with_(self, **changes) -> "Cell":
        """A copy with some fields changed, validated field by field (no id is parsed).

        >>> parse_cell("k12_LH_neutral_learned_zero").with_(proxies="info", sweep_beta=0.45).id
        'k12_LH_neutral_learned_info_b045'
        """
        return validate(replace(self, **changes))


#: the values each field of a :class:`Cell` may take (what :data:`GRAMMAR` allows)
FIELD_VALUES = {
    "k": (6, 12, 18), "corner": ("LL", "LH", "HL", "HH"), "names": ("neutral", "social"),
    "examples": ("absent", "learned"), "proxies": ("zero", "info"), "sweep_beta": (None, 0.30, 0.45, 0.60),
    "n_examples": (config.N_EXAMPLES, 12, 20), "example_corr": (None, 0.0, 0.40, 0.70),
    "example_corner": (None, "LL", "LH", "HL", "HH"),
}


def validate(cell: Cell) -> Cell:
    """``cell`` itself when each field takes a value of :data:`FIELD_VALUES` and the combination is
    allowed; :class:`CellError` (one line, with the grammar) otherwise."""
    bad = [f"{name}={getattr(cell, name)!r}" for name, allowed in FIELD_VALUES.items()
           if getattr(cell, name) not in allowed]
    if cell.seed is not None and (isinstance(cell.seed, bool) or not isinstance(cell.seed, int) or cell.seed < 0):
        bad.append(f"seed={cell.seed!r}")
    if bad:
        raise CellError(f"unknown cell {', '.join(bad)}; expected {GRAMMAR}")
    return _check_combination(cell, cell.id)


def _check_combination(cell: Cell, cell_id: str) -> Cell:
    """``cell`` when its fields go together (sweep levels and example manipulations need examples)."""
    if cell.sweep_beta is not None and not (cell.informative and cell.has_examples):
        raise CellError(f"unknown cell id {cell_id!r}: sweep levels _bNNN need 'learned' and 'info'; "
                        f"expected {GRAMMAR}")
    extras = cell.n_examples != config.N_EXAMPLES or cell.example_corr is not None or cell.example_corner
    if extras and not cell.has_examples:
        raise CellError(f"unknown cell id {cell_id!r}: example manipulations need 'learned'; expected {GRAMMAR}")
    return cell


_SHOWN = reprlib.Repr()
_SHOWN.maxstring = _SHOWN.maxother = 80  # a whole cell id; a long value shortened


def expect_cell(value) -> Cell:
    """``value`` itself when it is a :class:`Cell`; a one-line :class:`TypeError` otherwise.

    The guard of a function below the boundary: it takes the ``Cell`` parsed at the boundary and
    never parses an id string itself.

    >>> c = parse_cell("k12_LH_neutral_learned_zero")
    >>> expect_cell(c) is c
    True
    >>> expect_cell("k12_LH_neutral_learned_zero")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    TypeError: <module>() takes an analysis.cells.Cell, not str 'k12_LH_neutral_learned_zero'; parse the cell id at ...
    """
    if isinstance(value, Cell):
        return value
    caller = sys._getframe(1).f_code.co_qualname  # only on the error path
    shown = " ".join(_SHOWN.repr(value).split())  # one line, whatever was given
    raise TypeError(f"{caller}() takes an analysis.cells.Cell, not {type(value).__name__} {shown}; "
                    "parse the cell id at the boundary with cells.parse_cell")


def parse_cell(cell_id: "str | Cell") -> Cell:
    """Parse a cell identifier; raise :class:`CellError` (one line, with the grammar) if malformed.

    Only the boundary calls it on a value it was given (the command line, the notebooks, the
    audit's ``Condition``, the validity battery's ``ValidityPlan``; tests/test_imports.py lists
    where): everything below takes the :class:`Cell` made there and refuses an id string
    (:func:`expect_cell`). A ``Cell`` given back is returned as it is.
    """
    if isinstance(cell_id, Cell):
        return cell_id
    m = _PATTERN.match(str(cell_id).strip())
    if not m:
        raise CellError(f"unknown cell id {cell_id!r}; expected {GRAMMAR}")
    g = m.groupdict()
    cell = Cell(
        k=int(g["k"]), corner=g["corner"], names=g["names"], examples=g["examples"],
        proxies=g["proxies"],
        sweep_beta=int(g["beta"]) / 100 if g["beta"] else None,
        seed=int(g["seed"]) if g["seed"] else None,
        n_examples=int(g["n_examples"]) if g["n_examples"] else config.N_EXAMPLES,
        example_corr=int(g["corr"]) / 100 if g["corr"] else None,
        example_corner=g["example_corner"],
    )
    return _check_combination(cell, cell_id)
