"""The claims check: every published number beside ours (the registry itself is :mod:`analysis.registry`).

Reproduced values come from *providers*: the study modules in :data:`PROVIDERS`, each with a
function ``claim_values() -> dict[claim_id, float | NotReleased]`` that computes them from the
released records and our own population. Nothing here types a value in. Each number is made once
(issue 21): the notebook that shows a study's claims writes them as a product
(:mod:`analysis.products`), and the check reads that product when its key is the key of the
notebook at its default parameters (:func:`analysis.stamps.run_key`); only a study whose product
is missing or stale is recomputed here (:func:`study_values`; :data:`SOURCE_OF` says which).

:func:`check` writes ``data/derived/claims_check.csv`` with the registry columns plus
``reproduced_value, status, notebook``; ``status`` is ``match``, ``mismatch``, ``not_released`` (the
inputs are not public; ``note`` names what is missing) or ``not_computed`` (a registry row no
provider computes, which the tests treat as a defect).
"""
from __future__ import annotations

import pandas as pd

from . import battery, paths, population, products, representation, stamps, supplement, uci
from .records import NotReleased
from . import registry as _registry
from .registry import REGISTRY_COLUMNS, half_unit, paper_vs_ours, parse_printed, registry, status_of  # noqa: F401
from .tables import write_derived

#: the studies that compute claims, in the order of the paper's stages (each has ``claim_values``)
PROVIDERS = (population, battery, representation, uci, supplement)

CHECK_COLUMNS = REGISTRY_COLUMNS + ["reproduced_value", "status", "notebook"]
STATUSES = ("match", "mismatch", "not_released", "not_computed")

#: the notebook that computes and shows each provider's claims
NOTEBOOK_OF = {
    "analysis.population": "01_population",
    "analysis.battery": "04_references",
    "analysis.representation": "05_representation_control",
    "analysis.uci": "06_uci_real_records",
    "analysis.supplement": "07_supplement_tables",
}
#: claim_id -> provider module name, filled by :func:`compute_all`
PROVIDER_OF: dict[str, str] = {}
#: study -> ``"product"`` (read from its notebook's product) or ``"recomputed"``, filled by :func:`study_values`
SOURCE_OF: dict[str, str] = {}


def study_of(module_name: str) -> str | None:
    """The study (product name) of a provider module: ``analysis.uci`` -> ``uci``; ``None`` for others."""
    study = module_name.rsplit(".", 1)[-1]
    return study if module_name.startswith("analysis.") and study in products.NOTEBOOK_OF else None


def expected_key(study: str) -> str:
    """The key a current product of ``study`` has: its notebook's, run with its default parameters."""
    return stamps.run_key(paths.NOTEBOOKS / f"{products.NOTEBOOK_OF[study]}.py")


def study_values(mod) -> dict[str, object]:
    """The claims of one provider: its notebook's product when current, else ``mod.claim_values()``."""
    study = study_of(mod.__name__)
    if study is None:
        return mod.claim_values()
    got = products.read(study)
    if got is not None and got[0] == expected_key(study):
        SOURCE_OF[study] = "product"
        return got[1]
    SOURCE_OF[study] = "recomputed"
    return mod.claim_values()


def compute_all(providers=PROVIDERS) -> dict[str, object]:
    """Every provider's claims (:func:`study_values`), merged."""
    values: dict[str, object] = {}
    for mod in providers:
        got = study_values(mod)
        PROVIDER_OF.update({cid: mod.__name__ for cid in got})
        clash = set(got) & set(values)
        if clash:
            raise ValueError(f"{mod.__name__} computes claims already computed elsewhere: {sorted(clash)[:5]}")
        values.update(got)
    return values


#: SHA-256 of what the claims check was computed from (:func:`inputs_fingerprint`), written beside it
CHECK_FINGERPRINT = stamps.CLAIMS_FINGERPRINT


def inputs_fingerprint() -> str:
    """SHA-256 over the package's sources and the registries: equal means a written check is current.

    The released inputs themselves are pinned by SHA-256 in ``data/registry.csv``, which is hashed.
    """
    return stamps.package_fingerprint()


def check_is_current() -> bool:
    """True when ``claims_check.csv`` was written by a full check of the present sources and registries."""
    return (paths.CLAIMS_CHECK.is_file() and CHECK_FINGERPRINT.is_file()
            and CHECK_FINGERPRINT.read_text().strip() == inputs_fingerprint())


def check_tables(tables: list[str]) -> tuple[pd.DataFrame, bool]:
    """The check rows of ``tables`` (``Table 6``, ``SN 4``, ``Main``) and whether they were recomputed.

    Reads ``claims_check.csv`` when it is current; otherwise recomputes only the studies that
    compute those tables (found from the last written check; all of them when there is none), and
    writes nothing. An unknown table is refused with one line (``LookupError``).
    """
    known = list(dict.fromkeys(registry()["table"]))
    unknown = [t for t in tables if t not in known]
    if unknown:
        raise LookupError(f"unknown table {', '.join(map(repr, unknown))}; known: {', '.join(known)}")
    if check_is_current():
        df = pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
        return df[df["table"].isin(tables)].reset_index(drop=True), False
    providers = PROVIDERS
    if paths.CLAIMS_CHECK.is_file():
        last = pd.read_csv(paths.CLAIMS_CHECK, dtype=str, keep_default_na=False)
        notebooks = set(last.loc[last["table"].isin(tables), "notebook"])
        wanted = [m for m in PROVIDERS if NOTEBOOK_OF[m.__name__] in notebooks]
        providers = tuple(wanted) if wanted and "" not in notebooks else PROVIDERS
    df = check(compute_all(providers), write=False)
    return df[df["table"].isin(tables)].reset_index(drop=True), True


def check(values: dict[str, object] | None = None, write: bool = True) -> pd.DataFrame:
    """Compare every registry row with its reproduced value; write ``claims_check.csv``."""
    reg = registry()
    complete = values is None  # only a check of every provider is a current claims_check.csv
    values = compute_all() if values is None else values
    unknown = sorted(set(values) - set(reg["claim_id"]))
    if unknown:
        raise ValueError(f"providers computed claims missing from the registry: {unknown[:10]}")
    rows = []
    for rec in reg.to_dict("records"):
        value = values.get(rec["claim_id"])
        status, text = status_of(rec["paper_value"], rec["tolerance"], value)
        note = rec["note"]
        if isinstance(value, NotReleased) and value.missing not in note:
            note = (note + "; " if note else "") + f"not released: {value.missing}"
        notebook = NOTEBOOK_OF.get(PROVIDER_OF.get(rec["claim_id"], ""), "")
        rows.append({**rec, "note": note, "reproduced_value": text, "status": status, "notebook": notebook})
    out = pd.DataFrame(rows, columns=CHECK_COLUMNS)
    if write:
        paths.DERIVED.mkdir(parents=True, exist_ok=True)
        write_derived(out, paths.CLAIMS_CHECK)
        if complete:
            CHECK_FINGERPRINT.write_text(inputs_fingerprint() + "\n")
    return out


def summary(check_df: pd.DataFrame) -> pd.Series:
    """Counts per status."""
    return check_df["status"].value_counts().reindex(list(STATUSES), fill_value=0)


def table_view(check_df: pd.DataFrame, table: str) -> pd.DataFrame:
    """The rows of one table (``Table 6``, ``Main``, ``SN 14``) for display in a notebook."""
    sub = check_df[check_df["table"] == table]
    return sub[["row", "column", "paper_value", "reproduced_value", "status", "note"]].reset_index(drop=True)


#: :func:`analysis.registry.compare` (in the registry, so that notebook 01 need not import every study)
compare = _registry.compare
