"""Paths of the compendium, derived from this file's location (STYLE 12)."""
from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
DERIVED = DATA / "derived"
FIGURES = ROOT / "figures"
NOTEBOOKS = ROOT / "notebooks"
CLAIMS_REGISTRY = DATA / "claims.csv"
CLAIMS_CHECK = DERIVED / "claims_check.csv"
INPUT_REGISTRY = DATA / "registry.csv"


def cache_dir() -> Path:
    """Folder for downloaded inputs (git-ignored); ``PROXY_AUDIT_CACHE`` overrides it."""
    return Path(os.environ.get("PROXY_AUDIT_CACHE", ROOT / ".cache" / "inputs"))


def mirror_dir() -> Path | None:
    """Local mirror standing in for the network.

    ``PROXY_AUDIT_MIRROR`` names it; an empty value disables the mirror. Otherwise
    ``../shared`` beside the repository is used when it exists (so CI runs offline).
    """
    env = os.environ.get("PROXY_AUDIT_MIRROR")
    if env is not None:
        return Path(env) if env else None
    default = ROOT.parent / "shared"
    return default if default.is_dir() else None
