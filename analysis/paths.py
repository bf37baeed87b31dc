"""Paths of the compendium, derived from this file's location (STYLE 12)."""
from __future__ import annotations

import configparser
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: the checkout's data/; a package installed without the checkout (pip install .) uses the copies of
#: the registries and the price table it ships in analysis/resources/ (links to data/ in the checkout)
DATA = ROOT / "data" if (ROOT / "data" / "registry.csv").is_file() else Path(__file__).resolve().parent / "resources"
DERIVED = DATA / "derived"
FIGURES = ROOT / "figures"
NOTEBOOKS = ROOT / "notebooks"
CLAIMS_REGISTRY = DATA / "claims.csv"
CLAIMS_CHECK = DERIVED / "claims_check.csv"
INPUT_REGISTRY = DATA / "registry.csv"


def cache_dir() -> Path:
    """Folder for downloaded inputs (git-ignored); ``PROXY_AUDIT_CACHE`` overrides it."""
    default = ROOT / ".cache" / "inputs" if DATA == ROOT / "data" else Path.home() / ".cache" / "proxy-audit" / "inputs"
    return Path(os.environ.get("PROXY_AUDIT_CACHE", default))


def mirror_dir() -> Path | None:
    """Local mirror standing in for the network.

    ``PROXY_AUDIT_MIRROR`` names it; an empty value disables the mirror. Otherwise
    ``../shared`` beside the repository is used when it exists (so CI runs offline), or, for a
    clone of a local repository, ``shared`` beside the repository it was cloned from.
    """
    env = os.environ.get("PROXY_AUDIT_MIRROR")
    if env is not None:
        return Path(env) if env else None
    for candidate in (ROOT.parent / "shared", _origin_dir().parent / "shared" if _origin_dir() else None):
        if candidate is not None and candidate.is_dir():
            return candidate
    return None


def _origin_dir() -> Path | None:
    """The local folder this repository was cloned from, if any (read from ``.git/config``)."""
    cfg = ROOT / ".git" / "config"
    if not cfg.is_file():
        return None
    parser = configparser.ConfigParser(strict=False)
    try:
        parser.read(cfg)
        url = parser.get('remote "origin"', "url", fallback="")
    except configparser.Error:
        return None
    path = Path(url[len("file://"):] if url.startswith("file://") else url)
    return path.resolve() if url and path.is_absolute() and path.is_dir() else None
