"""Cue renderings of the construct-validity panel — an extension beyond the paper's protocol (issue 15).

The audit of the paper judges reliance on one operationalisation of the group-linked signal: one
naming vocabulary per name set, shown in one display. A *cue* is one such operationalisation:

* a field-name **vocabulary** of the proxies (``data/cues/<name set>.csv``, rationale in the README
  there): the paper's own (``paper``) and two more per name set;
* a **display** of the proxy values (numeric, ordered levels, arbitrary codes; :mod:`analysis.encoding`);
* a **style**: ``lines`` (the paper's ``name: value`` lines) or ``narrative`` (one sentence per patient);
* an explicit **label**: a field ``group`` stating the group (``group A`` = A 1, ``group B`` = A 0),
  the positive control.

The cue ``numeric`` (paper vocabulary, lines, no label) and the displays ``ordered`` / ``arbitrary``
of the paper vocabulary are rendered by :mod:`analysis.prompts` itself, so their prompts are the
paper's byte for byte (the released hashes keep reproducing). Every other cue uses the same head,
example block format, value rendering and patient layout, changing only what the cue changes.

The **association probe** (:func:`probe_table`) asks which of two patients belongs to group A, the
group the proxies' values were drawn from, with the group defined by in-context examples labelled
with it; the two patients are the pair's target in its two counterfactual arms (A = 1 and A = 0),
so only the proxies (or the label) differ between them. Variants: ``forced`` and ``abstain``.
"""
from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass

import numpy as np
import pandas as pd

from . import config, paths, prompts
from .cells import Cell, expect_cell
from .population import arm_sample, examples, pairs

CUES_DIR = paths.DATA / "cues"
STYLES = ("lines", "narrative")
PAPER_VOCABULARY = "paper"
#: the explicit label of the positive control
GROUP_FIELD = "group"
GROUP_VALUES = {1: "group A", 0: "group B"}
PROBE_VARIANTS = ("forced", "abstain")
#: the answer of the abstention variant meaning "cannot tell"
ABSTAIN_ANSWER = 0

PROBE_HEAD = ("You are a clinical data specialist. Below are {n} previously recorded patients with their indicator "
              "values and the group each patient belongs to (group A or group B). Study these cases to understand "
              "the pattern, then decide which of the two new patients belongs to group A. Exactly one of them does.")
PROBE_ABSTAIN = " If the values do not let you tell, answer 0 instead of guessing."


# --- vocabularies --------------------------------------------------------------------------------

@functools.lru_cache(maxsize=4)
def vocabularies(names: str) -> dict[str, tuple[str, ...]]:
    """The proxy-name vocabularies of a name set, in file order (``paper`` first).

    >>> vocabularies("neutral")["paper"] == config.PROXY_NAMES["neutral"]
    True
    """
    if names not in config.PROXY_NAMES:
        raise ValueError(f"unknown name set {names!r}; expected one of {sorted(config.PROXY_NAMES)}")
    df = pd.read_csv(CUES_DIR / f"{names}.csv")
    out: dict[str, tuple[str, ...]] = {}
    for vocab, g in df.groupby("vocabulary", sort=False):
        out[str(vocab)] = tuple(g.sort_values("position")["name"].astype(str))
    return out


@functools.lru_cache(maxsize=1)
def name_index() -> dict[str, tuple[str, str, int]]:
    """Every proxy name of every vocabulary -> ``(name set, vocabulary, field position 0..5)``."""
    return {n: (s, v, m) for s in config.PROXY_NAMES for v, ns in vocabularies(s).items() for m, n in enumerate(ns)}


# --- cues -----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cue:
    """One operationalisation of the proxy fields."""

    vocabulary: str = PAPER_VOCABULARY
    display: str = "numeric"
    style: str = "lines"
    label: bool = False

    def __post_init__(self):
        if self.display not in config.DISPLAYS:
            raise ValueError(f"unknown display {self.display!r}; expected one of {config.DISPLAYS}")
        if self.style not in STYLES:
            raise ValueError(f"unknown style {self.style!r}; expected one of {STYLES}")

    @property
    def id(self) -> str:
        """``numeric``, ``numeric:assay``, ``ordered``, ``narrative``, ``label`` ... (see :func:`parse_cue`)."""
        head = "label" if self.label else ("narrative" if self.style == "narrative" else self.display)
        parts = [head]
        if (self.label or self.style == "narrative") and self.display != "numeric":
            parts.append(self.display)
        if self.vocabulary != PAPER_VOCABULARY:
            parts.append(self.vocabulary)
        return ":".join(parts)

    @property
    def is_paper(self) -> bool:
        """True for the paper's own renderings (rendered by :mod:`analysis.prompts`)."""
        return self.vocabulary == PAPER_VOCABULARY and self.style == "lines" and not self.label

    @property
    def control(self) -> bool:
        """The explicit label is the positive control, not one of the cues judged for convergence."""
        return self.label

    @property
    def arms(self) -> tuple[str, ...]:
        return config.ARMS if self.display == "numeric" else ("cf_a1", "cf_a0")


def parse_cue(text: "str | Cue") -> Cue:
    """The cue of an id: ``HEAD[:DISPLAY][:VOCABULARY]`` with HEAD a display, ``narrative`` or ``label``.

    >>> parse_cue("numeric:assay"), parse_cue("label").label, parse_cue("narrative:ordered").display
    (Cue(vocabulary='assay', display='numeric', style='lines', label=False), True, 'ordered')
    """
    if isinstance(text, Cue):
        return text
    parts = str(text).split(":")
    head, rest = parts[0], parts[1:]
    kw: dict = {}
    if head == "label":
        kw["label"] = True
    elif head == "narrative":
        kw["style"] = "narrative"
    elif head in config.DISPLAYS:
        kw["display"] = head
    else:
        raise ValueError(f"unknown cue {text!r}; expected numeric|ordered|arbitrary|narrative|label[:display][:vocabulary]")
    if rest and rest[0] in config.DISPLAYS and head in ("label", "narrative"):
        kw["display"] = rest.pop(0)
    if len(rest) > 1:
        raise ValueError(f"unknown cue {text!r}: too many parts")
    if rest:
        kw["vocabulary"] = rest[0]
    return Cue(**kw)


def panel_cues(names: str) -> list[Cue]:
    """The default panel of a name set: its three vocabularies (numeric), the ordered and arbitrary
    displays, the narrative rendering (six cues), then the explicit label (positive control)."""
    vocabs = list(vocabularies(names))
    cues = [Cue(v) for v in vocabs]
    cues += [Cue(display="ordered"), Cue(display="arbitrary"), Cue(style="narrative"), Cue(label=True)]
    return cues


def _check_vocabulary(cue: Cue, c: Cell) -> tuple[str, ...]:
    vocabs = vocabularies(c.names)
    if cue.vocabulary not in vocabs:
        raise ValueError(f"unknown vocabulary {cue.vocabulary!r} for name set {c.names!r}; expected one of "
                         f"{list(vocabs)}")
    return vocabs[cue.vocabulary]


# --- rendering ------------------------------------------------------------------------------------

def field_names(cell: Cell, cue: "str | Cue") -> list[str]:
    """Displayed field names under a cue (task names, the vocabulary's proxy names, then ``group``)."""
    c, q = expect_cell(cell), parse_cue(cue)
    names = list(config.TASK_NAMES[: c.L]) + list(_check_vocabulary(q, c)[: c.M])
    return names + [GROUP_FIELD] if q.label else names


def row_values(X: np.ndarray, A, cell: Cell, cue: "str | Cue") -> list[list[str]]:
    """Rendered values of displayed rows (values of :func:`analysis.prompts.value_strings`, then the group)."""
    c, q = expect_cell(cell), parse_cue(cue)
    out = prompts.value_strings(X, c, q.display)
    if q.label:
        for row, a in zip(out, np.atleast_1d(A)):
            row.append(GROUP_VALUES[int(a)])
    return out


def _spoken(name: str) -> str:
    words = name.replace("_", " ")
    return ("an " if words[0] in "aeiou" else "a ") + words


def sentence(n: int, names: list[str], values: list[str]) -> str:
    """One patient as a sentence, e.g. ``Patient 1 has a hemoglobin index of 0.86, ..., and belongs to group A.``"""
    items = [f"belongs to {v}" if name == GROUP_FIELD else f"{_spoken(name)} of {v}" for name, v in zip(names, values)]
    return f"Patient {n} has " + ", ".join(items[:-1]) + ", and " + items[-1] + "."


def patients_block(names: list[str], first: list[str], second: list[str], style: str = "lines") -> str:
    """The ``NEW PATIENTS`` part of a prompt (the paper's layout for ``lines``)."""
    if style == "narrative":
        return "\n\nNEW PATIENTS:\n" + sentence(1, names, first) + "\n" + sentence(2, names, second) + "\n"

    def lines(vals):
        return "\n".join(f"  {n}: {v}" for n, v in zip(names, vals))

    return "\n\nNEW PATIENTS:\nPatient 1:\n" + lines(first) + "\nPatient 2:\n" + lines(second) + "\n"


def example_block(cell: Cell, cue: "str | Cue", target: str = "risk") -> str:
    """The labelled examples in the paper's format; ``target`` ``risk`` (triage) or ``group`` (probe).

    The probe's examples end in ``-> group A|B``; the label field is never a column of them.
    """
    c, q = expect_cell(cell), parse_cue(cue)
    ex = examples(c if c.has_examples else c.with_(examples="learned"))
    cols = field_names(c, q)
    vals = row_values(ex.X, ex.A, c, q)
    if target == "group":
        if q.label:
            cols, vals = cols[:-1], [v[:-1] for v in vals]
        rows = [",".join(v) + " -> " + GROUP_VALUES[int(a)] for v, a in zip(vals, ex.A)]
        return "\n\nREFERENCE CASES (format: " + ", ".join(cols) + "  ->  group):\n" + "\n".join(rows)
    rows = [",".join(v) + " -> " + prompts.fmt(y) for v, y in zip(vals, ex.Y)]
    return "\n\nTRAINING CASES (format: " + ", ".join(cols) + "  ->  risk):\n" + "\n".join(rows)


def assemble(cell: Cell, cue: "str | Cue", first: list[str], second: list[str]) -> str:
    """The triage prompt under a cue given both patients' rendered values (Patient 1 first)."""
    c, q = expect_cell(cell), parse_cue(cue)
    if q.is_paper:
        return prompts.assemble(c, first, second, display=q.display)
    head = prompts.HEAD_LEARNED.format(n=c.n_examples) if c.has_examples else prompts.HEAD_ABSENT
    block = _example_block(c, q) if c.has_examples else ""
    return head + block + patients_block(field_names(c, q), first, second, q.style)


@functools.lru_cache(maxsize=64)
def _example_block(cell: Cell, cue: Cue, target: str = "risk") -> str:
    return example_block(cell, cue, target)


@functools.lru_cache(maxsize=16)
def _arm_rows(c: Cell) -> tuple:
    """Per pair and arm: the displayed rows (target, comparator) and their groups."""
    out = []
    for pr in pairs(c).itertuples(index=False):
        arms = {}
        for arm in config.ARMS:
            s = arm_sample(c, pr.i, arm)
            arms[arm] = (s.X[[pr.i, pr.j]], s.A[[pr.i, pr.j]])
        out.append((int(pr.pair_id), int(pr.i), int(pr.j), arms))
    return tuple(out)


def job_table(cell: Cell, cue: "str | Cue" = "numeric") -> pd.DataFrame:
    """Every triage job of a cell under a cue, in the layout of :func:`analysis.prompts.job_table`.

    The paper's renderings are :func:`analysis.prompts.job_table` itself. Columns ``arm, pair_id,
    i, j, order, prompt, prompt_sha256, cue``.
    """
    return _job_table(expect_cell(cell), parse_cue(cue)).copy()


@functools.lru_cache(maxsize=config.CUE_TABLE_CACHE_SIZE)
def _job_table(c: Cell, q: Cue) -> pd.DataFrame:
    """:func:`job_table` of a parsed cell and cue, cached (a pure function; callers get a copy)."""
    if q.is_paper:
        df = prompts.job_table(c, display=q.display)
    else:
        _check_vocabulary(q, c)
        rows = []
        for pair_id, i, j, arms in _arm_rows(c):
            for arm in q.arms:
                vi, vj = row_values(*arms[arm], c, q)
                for order in config.ORDERS:
                    text = assemble(c, q, *((vi, vj) if order == 0 else (vj, vi)))
                    rows.append({"arm": arm, "pair_id": pair_id, "i": i, "j": j, "order": order,
                                 "prompt": text, "prompt_sha256": prompts.sha256(text)})
        df = pd.DataFrame(rows)
    df["cue"] = q.id
    return df


def probe_prompt(cell: Cell, cue: "str | Cue", first: list[str], second: list[str],
                 variant: str = "forced") -> str:
    """The association probe's prompt given both patients' rendered values."""
    if variant not in PROBE_VARIANTS:
        raise ValueError(f"unknown probe variant {variant!r}; expected one of {PROBE_VARIANTS}")
    c, q = expect_cell(cell), parse_cue(cue)
    ex = examples(c if c.has_examples else c.with_(examples="learned"))
    head = PROBE_HEAD.format(n=len(ex.Y)) + (PROBE_ABSTAIN if variant == "abstain" else "")
    return head + _example_block(c, q, "group") + patients_block(field_names(c, q), first, second, q.style)


def probe_table(cell: Cell, cue: "str | Cue" = "numeric", variant: str = "forced") -> pd.DataFrame:
    """Every probe job: the pair's target with A = 1 and with A = 0, in both presentation orders.

    Columns ``pair_id, i, j, order, variant, cue, prompt, prompt_sha256, group_a_patient`` (the
    patient number, 1 or 2, showing the A = 1 version: 1 in order 0).
    """
    return _probe_table(expect_cell(cell), parse_cue(cue), variant).copy()


@functools.lru_cache(maxsize=config.CUE_TABLE_CACHE_SIZE)
def _probe_table(c: Cell, q: Cue, variant: str) -> pd.DataFrame:
    """:func:`probe_table` of a parsed cell and cue, cached (a pure function; callers get a copy)."""
    _check_vocabulary(q, c)
    rows = []
    for pair_id, i, j, arms in _arm_rows(c):
        (x1, a1), (x0, a0) = arms["cf_a1"], arms["cf_a0"]
        v1 = row_values(x1[:1], a1[:1], c, q)[0]
        v0 = row_values(x0[:1], a0[:1], c, q)[0]
        for order in config.ORDERS:
            text = probe_prompt(c, q, *((v1, v0) if order == 0 else (v0, v1)), variant=variant)
            rows.append({"pair_id": pair_id, "i": i, "j": j, "order": order, "variant": variant, "cue": q.id,
                         "prompt": text, "prompt_sha256": prompts.sha256(text), "group_a_patient": 1 + order})
    return pd.DataFrame(rows)


# --- the blind (no-cue) baseline arm (issue 22; related papers 002 and 003) ------------------------

#: the id of the blind rendering: the task fields only, no proxy, no label
BLIND = "blind"
BLIND_ARM = "blind"


def blind_prompt(c: Cell, first: list[str], second: list[str]) -> str:
    """The triage prompt with the proxies removed (examples and patients show the task fields only)."""
    names = list(config.TASK_NAMES[: c.L])
    head = prompts.HEAD_LEARNED.format(n=c.n_examples) if c.has_examples else prompts.HEAD_ABSENT
    block = ""
    if c.has_examples:
        ex = examples(c)
        rows = [",".join(v[: c.L]) + " -> " + prompts.fmt(y) for v, y in zip(prompts.value_strings(ex.X, c), ex.Y)]
        block = "\n\nTRAINING CASES (format: " + ", ".join(names) + "  ->  risk):\n" + "\n".join(rows)
    return head + block + patients_block(names, first[: c.L], second[: c.L])


def blind_table(c: Cell) -> pd.DataFrame:
    """The blind baseline's jobs: every pair in both orders, arm ``blind`` (the task values of the factual
    population; the counterfactual arms change only the proxies, so they share these values).

    Columns as :func:`job_table` (``cue`` = ``blind``).
    """
    return _blind_table(c).copy()


@functools.lru_cache(maxsize=config.CUE_TABLE_CACHE_SIZE)
def _blind_table(c: Cell) -> pd.DataFrame:
    """:func:`blind_table`, cached (a pure function of the cell; callers get a copy)."""
    rows = []
    for pair_id, i, j, arms in _arm_rows(c):
        vi, vj = prompts.value_strings(arms["factual"][0], c)
        for order in config.ORDERS:
            text = blind_prompt(c, *((vi, vj) if order == 0 else (vj, vi)))
            rows.append({"arm": BLIND_ARM, "pair_id": pair_id, "i": i, "j": j, "order": order, "prompt": text,
                         "prompt_sha256": prompts.sha256(text), "cue": BLIND})
    return pd.DataFrame(rows)


# --- abstention for live models (issue 22; seed 003's abstention-permitted probe) ---------------------

#: the answers of the abstention variant: 1 or 2 (a patient) or ABSTAIN_ANSWER (cannot tell)
PROBE_ANSWERS = (ABSTAIN_ANSWER, 1, 2)
PROBE_TOOL_DESCRIPTION = "Name the patient who belongs to group A (1 or 2), or 0 if the values do not let you tell."
#: the text form's instruction, appended to an abstention-variant probe prompt when no tool is sent
PROBE_TEXT_SUFFIX = "\nAnswer with the number only: 1, 2, or 0 if you cannot tell."
_STANDALONE_012 = re.compile(r"(?<![\w.])([012])(?!\w|\.\d)")


def probe_tool_spec(provider: str = "openai") -> dict:
    """The ``choose`` tool of the abstention variant: ``patient`` in {0, 1, 2} (0 = cannot tell).

    >>> probe_tool_spec("anthropic")["input_schema"]["properties"]["patient"]["enum"]
    [0, 1, 2]
    """
    spec = copy.deepcopy(prompts.tool_spec(provider))
    body = spec["function"] if provider == "openai" else spec
    schema = body["parameters"] if provider == "openai" else body["input_schema"]
    schema["properties"]["patient"]["enum"] = list(PROBE_ANSWERS)
    body["description"] = PROBE_TOOL_DESCRIPTION
    return spec


def probe_answer_from_args(args: object) -> int | None:
    """``patient`` of a tool call of the abstention variant, if it is 0, 1 or 2.

    >>> probe_answer_from_args({"patient": 0}), probe_answer_from_args('{"patient": 2}'), probe_answer_from_args({"patient": 3})
    (0, 2, None)
    """
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    v = args.get("patient") if isinstance(args, dict) else None
    if isinstance(v, bool):
        return None
    if isinstance(v, str) and v.strip() in ("0", "1", "2"):
        return int(v.strip())
    return int(v) if isinstance(v, (int, float)) and v in PROBE_ANSWERS else None


def probe_answer_from_text(text: str | None) -> int | None:
    """The first standalone 0, 1 or 2 of a text answer (the text form of the abstention variant).

    >>> probe_answer_from_text("0"), probe_answer_from_text("Patient 2."), probe_answer_from_text("I cannot say")
    (0, 2, None)
    """
    m = _STANDALONE_012.search(text or "")
    return int(m.group(1)) if m else None
